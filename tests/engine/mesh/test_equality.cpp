// Equality, hash and repr of DeviceMesh as the newest PyTorch defines them: equal iff the same root rank map,
// the same normalized axes and the same names (identity of the root does not matter); repr
// "DeviceMesh((dp=2, tp=4), stride=(4, 1))" without the device type. Ported from PyTorch's
// test/distributed/test_device_mesh.py (DeviceMeshTestNDim.test_device_mesh_hash,
// test_device_mesh_parent_child_hash, test_from_group_with_mesh_shape_2d/3d, DeviceMeshTest.
// test_from_group_with_global_pg, InitDeviceMeshTest.test_init_device_mesh) for worlds 4 and 8.
//
// Not ported: device_type and _thread_id (no devices, no threaded backend), _dim_group_names / _pg_registry and
// from_group's process groups (the from_group tests are ported through the explicit mesh tensors they pass),
// test_from_group_with_invalid_mesh (from_group is not part of the engine), __getstate__/pickling,
// _stable_hash (AOT autograd cache), the TORCH_DISTRIBUTED_DEBUG=DETAIL suffix of repr.
// Known deviation: PyTorch's DeviceMesh constructor stores mesh_dim_names unchecked; the engine checks them on
// every root (see test_init.cpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "meshloom/error.hpp"
#include "meshloom/mesh/device_mesh.hpp"

#include "mesh_test_support.hpp"

namespace {

using namespace meshloom::testing;

// test_device_mesh_hash
TEST(Equality, DeviceMeshHash) {
  const auto mesh = DeviceMesh::from_ranks({4, 2}, iota(8));
  const auto mesh2 = DeviceMesh::from_ranks({4, 2}, iota(8));
  EXPECT_EQ(mesh.hash(), mesh2.hash());
  EXPECT_EQ(mesh, mesh2);
  const auto mesh3 = DeviceMesh::from_ranks({2, 2, 2}, iota(8));
  EXPECT_NE(mesh.hash(), mesh3.hash());
  EXPECT_NE(mesh2.hash(), mesh3.hash());
  EXPECT_NE(mesh, mesh3);
  EXPECT_EQ(std::hash<DeviceMesh>{}(mesh), mesh.hash());
}

class EqualityWorld : public ::testing::TestWithParam<std::int64_t> {};
INSTANTIATE_TEST_SUITE_P(World, EqualityWorld, ::testing::Values(4, 8));

// test_device_mesh_parent_child_hash
TEST_P(EqualityWorld, ParentChildHash) {
  const std::int64_t w = GetParam();
  const auto mesh_2d = DeviceMesh::init({2, w / 2}, Names{"DP", "TP"});
  const auto ep_mesh_1 = DeviceMesh::from_ranks({w / 2}, iota(w / 2));
  const auto ep_mesh_2 = DeviceMesh::from_ranks({w / 2}, iota(w / 2, w / 2));
  const auto another_mesh_1 = DeviceMesh::from_ranks({w / 2}, iota(w / 2));
  const auto another_mesh_2 = DeviceMesh::from_ranks({w / 2}, iota(w / 2, w / 2));
  const auto tp = mesh_2d.slice({"TP"});
  for (std::int64_t rank = 0; rank < w; ++rank) {
    SCOPED_TRACE(rank);
    const auto& ep_mesh = rank < w / 2 ? ep_mesh_1 : ep_mesh_2;
    const auto& another_mesh = rank < w / 2 ? another_mesh_1 : another_mesh_2;
    // ep_mesh is considered different from mesh_2d["TP"]...
    EXPECT_EQ(tp.instance_of(rank).values, ep_mesh.instance_of(rank).values);
    EXPECT_EQ(tp.axes(), ep_mesh.axes());
    EXPECT_EQ(tp.shape(), ep_mesh.shape());
    EXPECT_NE(tp.names(), ep_mesh.names());
    EXPECT_NE(tp.hash(), ep_mesh.hash());
    EXPECT_NE(tp, ep_mesh);
    // ... and another_mesh the same as ep_mesh.
    EXPECT_TRUE(another_mesh.rank_map() == ep_mesh.rank_map());
    EXPECT_EQ(another_mesh.axes(), ep_mesh.axes());
    EXPECT_EQ(another_mesh.names(), ep_mesh.names());
    EXPECT_EQ(another_mesh.hash(), ep_mesh.hash());
    EXPECT_EQ(another_mesh, ep_mesh);
  }
  // Names alone do not make them equal: the root rank maps differ.
  EXPECT_NE(tp, DeviceMesh::from_ranks({w / 2}, iota(w / 2), Names{"TP"}));
}

// test_init_device_mesh and test_from_group_with_global_pg: an explicit arange mesh equals init's.
TEST_P(EqualityWorld, FromGroupWithGlobalPg) {
  const std::int64_t w = GetParam();
  const auto ref_global_mesh = DeviceMesh::init({w});
  const auto global_mesh = DeviceMesh::from_ranks({w}, ref_global_mesh.instances().values);
  EXPECT_EQ(ref_global_mesh, global_mesh);
  EXPECT_EQ(ref_global_mesh.hash(), global_mesh.hash());
  for (std::int64_t r = 0; r < w; ++r) { EXPECT_EQ(ref_global_mesh.coordinate(r), global_mesh.coordinate(r)); }
}

// test_from_group_with_mesh_shape_2d: a mesh rebuilt from ref_mesh.mesh equals ref_mesh, and so do its slices.
TEST_P(EqualityWorld, FromGroupWithMeshShape2d) {
  const std::int64_t w = GetParam();
  const Names names{"dp_replicate", "dp_shard"};
  const auto ref_mesh = DeviceMesh::init({2, w / 2}, names);
  const auto dp_mesh = DeviceMesh::from_ranks({2, w / 2}, ref_mesh.instances().values, names);
  for (std::int64_t dim = 0; dim < 2; ++dim) { EXPECT_EQ(dp_mesh.groups(dim), ref_mesh.groups(dim)); }
  EXPECT_EQ(dp_mesh, ref_mesh);
  EXPECT_EQ(dp_mesh.slice({"dp_replicate"}), ref_mesh.slice({"dp_replicate"}));
  EXPECT_EQ(dp_mesh.slice({"dp_shard"}), ref_mesh.slice({"dp_shard"}));
  EXPECT_EQ(dp_mesh.slice({"dp_shard"}).hash(), ref_mesh.slice({"dp_shard"}).hash());
}

// test_from_group_with_mesh_shape_3d: a 2-D mesh rebuilt from ref_mesh.mesh[:, :, tp_local_rank] has the slices
// of ref_mesh on every rank it holds, but is not equal to them (different root rank maps).
TEST(Equality, FromGroupWithMeshShape3d) {
  const Names names{"dp_replicate", "dp_shard", "tp"};
  const auto ref_mesh = DeviceMesh::init({2, 2, 2}, names);
  for (std::int64_t rank = 0; rank < 8; ++rank) {
    SCOPED_TRACE(rank);
    const std::int64_t tp = ref_mesh.local_rank(rank, std::string("tp"));
    Ranks sub;  // ref_mesh.mesh[:, :, tp]
    for (std::int64_t i = 0; i < 4; ++i) sub.push_back(i * 2 + tp);
    const auto dp_mesh = DeviceMesh::from_ranks({2, 2}, sub, Names{"dp_replicate", "dp_shard"});
    EXPECT_EQ(dp_mesh.slice({"dp_replicate"}).instance_of(rank), ref_mesh.slice({"dp_replicate"}).instance_of(rank));
    EXPECT_EQ(dp_mesh.slice({"dp_shard"}).instance_of(rank), ref_mesh.slice({"dp_shard"}).instance_of(rank));
    EXPECT_EQ(dp_mesh.group_of(rank, std::string("dp_shard")), ref_mesh.group_of(rank, std::string("dp_shard")));
    EXPECT_NE(dp_mesh.slice({"dp_shard"}), ref_mesh.slice({"dp_shard"}));
  }
}

// Canonical (normalized) layouts: equal functions compare equal whatever the route that built them.
TEST(Equality, CanonicalLayouts) {
  // A size-1 axis leaves no trace in the other axes.
  EXPECT_EQ(DeviceMesh::init({2, 1, 4}, Names{"a", "b", "c"}).slice({"a", "c"}),
            DeviceMesh::init({2, 4}, Names{"a", "c"}));
  // A contiguous flattening equals the plain axis of the same extent.
  const auto flat = DeviceMesh::init({2, 2, 2}, Names{"p", "b", "c"}).slice({"b", "c"}).flatten("x");
  const auto plain = DeviceMesh::init({2, 4}, Names{"p", "x"}).slice({"x"});
  EXPECT_EQ(flat, plain);
  EXPECT_EQ(flat.hash(), plain.hash());
  // Independent roots with the same rank map: their slices are equal.
  const auto r1 = DeviceMesh::init({2, 4}, Names{"dp", "tp"});
  const auto r2 = DeviceMesh::init({2, 4}, Names{"dp", "tp"});
  EXPECT_EQ(r1.slice({"tp"}), r2.slice({"tp"}));
  EXPECT_EQ(r1.slice({"tp"}).hash(), r2.slice({"tp"}).hash());
  // Same axes, other names or no names: unequal.
  EXPECT_NE(r1, DeviceMesh::init({2, 4}, Names{"dp", "cp"}));
  EXPECT_NE(r1, DeviceMesh::init({2, 4}));
  EXPECT_EQ(DeviceMesh::init({2, 4}), DeviceMesh::init({2, 4}));
  // Unflatten then concatenate back: the original.
  const auto u = r1.unflatten(std::string("tp"), {2, 2}, {"t0", "t1"});
  EXPECT_NE(u, r1);
  EXPECT_EQ(u.slice({"dp"}), r1.slice({"dp"}));
  // The same view reached twice hashes alike and dedups in a hash set.
  std::unordered_set<DeviceMesh> set{r1.slice({"dp"}), r2.slice({"dp"}), u.slice({"dp"}), r1.slice({"tp"}), r1};
  EXPECT_EQ(set.size(), 3u);
}

TEST(Equality, Repr) {
  EXPECT_EQ(DeviceMesh::init({2, 4}, Names{"dp", "tp"}).repr(), "DeviceMesh((dp=2, tp=4), stride=(4, 1))");
  EXPECT_EQ(DeviceMesh::init({2, 4}).repr(), "DeviceMesh((2, 4), stride=(4, 1))");
  EXPECT_EQ(DeviceMesh::init({8}).repr(), "DeviceMesh((8,), stride=(1,))");  // a Python tuple
  // Named: "(" + ", ".join(...) + ")", no trailing comma for one axis.
  EXPECT_EQ(DeviceMesh::init({8}, Names{"world"}).repr(), "DeviceMesh((world=8), stride=(1,))");
  const auto mesh = DeviceMesh::init({2, 2, 2}, Names{"dp", "cp", "tp"});
  EXPECT_EQ(mesh.slice({"dp", "tp"}).repr(), "DeviceMesh((dp=2, tp=2), stride=(4, 1))");
  EXPECT_EQ(mesh.slice({"dp", "cp"}).flatten().repr(), "DeviceMesh((dp_cp=4), stride=(2,))");
  EXPECT_EQ(mesh.slice({"dp", "tp"}).flatten().repr(), "DeviceMesh((dp_tp=4), stride=((4, 1),))");
  EXPECT_EQ(mesh.flatten().repr(), "DeviceMesh((dp_cp_tp=8), stride=(1,))");
  EXPECT_EQ(DeviceMesh::init({2, 1}, Names{"dp", "tp"}).repr(), "DeviceMesh((dp=2, tp=1), stride=(1, ()))");
  const auto t = DeviceMesh::concatenate({mesh.slice({"tp"}), mesh.slice({"dp"})});
  EXPECT_EQ(t.repr(), "DeviceMesh((tp=2, dp=2), stride=(1, 4))");
  EXPECT_EQ(DeviceMesh::from_ranks({2, 2}, {3, 2, 1, 0}, Names{"a", "b"}).repr(), "DeviceMesh((a=2, b=2), stride=(2, 1))");
}

}  // namespace
