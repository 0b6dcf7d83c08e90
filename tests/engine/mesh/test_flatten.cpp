// Flattening, mesh._flatten(name): default names, the root's registry of flattened axes, re-flattening,
// slicing flattened names back out of the root (contiguous and not), and the name conflicts. Ported from
// PyTorch's test/distributed/test_device_mesh.py (TestDeviceMeshGetItem.test_flatten_mesh_1d/3d/4d,
// test_reconstruct_mesh_with_flatten_dim, DeviceMeshTest.test_get_local_rank's flattened part) for worlds 4
// and 8, every rank checked.
//
// Not ported: the process-group parts (group_desc "mesh_dp_cp", _world.group_count unchanged on re-flatten,
// backend_override of _flatten, get_group identity: ported as equality of the group rank lists), and
// _flatten_mapping[...]._layout.collapse().global_ranks(8) (ported as groups of the flattened axis).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "meshloom/error.hpp"
#include "meshloom/mesh/device_mesh.hpp"

#include "mesh_test_support.hpp"

namespace {

using namespace meshloom::testing;

RankTensor flattened_instances(const DeviceMesh& m) {
  RankTensor t = m.instances();
  return tensor({t.shape[0], m.size()}, t.values);
}

// test_flatten_mesh_1d: flattening a 1-D mesh into its own name returns it.
TEST(Flatten, FlattenMesh1d) {
  const auto mesh_1d = DeviceMesh::init({4}, Names{"default"});
  const auto flat = mesh_1d.flatten();
  EXPECT_EQ(flat, mesh_1d);
  EXPECT_TRUE(mesh_1d.flattened_names().empty());  // nothing registered
  EXPECT_EQ(mesh_1d.flatten("default"), mesh_1d);
}

// test_flatten_mesh_3d
TEST(Flatten, FlattenMesh3d) {
  const auto mesh_3d = DeviceMesh::init({2, 2, 2}, Names{"dp", "cp", "tp"});
  const std::string root_repr = "DeviceMesh((dp=2, cp=2, tp=2), stride=(4, 2, 1))";
  EXPECT_MESH_ERROR(mesh_3d.flatten("dp"), ErrorKind::ValueError,
                    "dp already exists for submesh of the " + root_repr,
                    "The mesh_dim_names of submesh and flattened mesh are ('dp', 'cp', 'tp').",
                    "Please specify another valid mesh_dim_name.");

  // Contiguous dims.
  const auto dp_cp_mesh = mesh_3d.slice({"dp", "cp"});
  const auto flattened_dp_cp_mesh = dp_cp_mesh.flatten();
  EXPECT_EQ(flattened_instances(dp_cp_mesh), flattened_dp_cp_mesh.instances());
  ASSERT_TRUE(flattened_dp_cp_mesh.names().has_value());
  EXPECT_EQ(*flattened_dp_cp_mesh.names(), Names{"dp_cp"});
  EXPECT_EQ(dp_cp_mesh.root(), mesh_3d);
  EXPECT_EQ(flattened_dp_cp_mesh.root(), mesh_3d);
  ASSERT_TRUE(mesh_3d.flattened("dp_cp").has_value());
  EXPECT_EQ(mesh_3d.flattened("dp_cp")->axes(), flattened_dp_cp_mesh.axes());
  EXPECT_EQ(*mesh_3d.flattened("dp_cp"), flattened_dp_cp_mesh);
  EXPECT_EQ(rows(flattened_dp_cp_mesh.groups(std::int64_t{0})), (Rows{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  EXPECT_EQ(meshloom::to_string(flattened_dp_cp_mesh.axes()[0]), "(4,):(2,)");
  // Well separated: no error.
  EXPECT_EQ(rows(mesh_3d.slice({"dp_cp", "tp"}).instances()), (Rows{{0, 1, 2, 3, 4, 5, 6, 7}}));

  // Flattening again gives the registered mesh and registers nothing new.
  const auto flattened_dp_cp_mesh_2 = dp_cp_mesh.flatten();
  EXPECT_EQ(flattened_dp_cp_mesh, flattened_dp_cp_mesh_2);
  EXPECT_EQ(mesh_3d.flattened_names(), Names{"dp_cp"});

  // Non-contiguous dims.
  const auto dp_tp_mesh = mesh_3d.slice({"dp", "tp"});
  const auto flattened_dp_tp_mesh = dp_tp_mesh.flatten();
  EXPECT_EQ(flattened_instances(dp_tp_mesh), flattened_dp_tp_mesh.instances());
  EXPECT_EQ(*flattened_dp_tp_mesh.names(), Names{"dp_tp"});
  EXPECT_EQ(dp_tp_mesh.root(), mesh_3d);
  EXPECT_EQ(mesh_3d.flattened("dp_tp")->axes(), flattened_dp_tp_mesh.axes());
  EXPECT_EQ(rows(flattened_dp_tp_mesh.groups(std::int64_t{0})), (Rows{{0, 1, 4, 5}, {2, 3, 6, 7}}));
  EXPECT_EQ(meshloom::to_string(flattened_dp_tp_mesh.layout()), "((2,2),):((4,1),)");
  // dp_tp is partly "above" and partly "below" cp.
  EXPECT_MESH_ERROR(mesh_3d.slice({"dp_tp", "cp"}), ErrorKind::KeyError,
                    "Invalid mesh_dim_names ('dp_tp', 'cp') specified.", "Mesh dim indices should be in ascending order.");
  // The newest PyTorch slices a non-contiguous flattened dim alone.
  EXPECT_EQ(mesh_3d.slice({"dp_tp"}), flattened_dp_tp_mesh);

  // Flatten with a given name.
  const auto cp_tp_mesh = mesh_3d.slice({"cp", "tp"});
  (void)cp_tp_mesh.flatten("dummy");
  EXPECT_EQ(*mesh_3d.slice({"dummy"}).names(), Names{"dummy"});
  EXPECT_EQ(rows(mesh_3d.slice({"dummy"}).instances()), (Rows{{0, 1, 2, 3}, {4, 5, 6, 7}}));

  EXPECT_MESH_ERROR(mesh_3d.flatten("dp"), ErrorKind::ValueError, "dp already exists for submesh of the DeviceMesh");
  EXPECT_MESH_ERROR(mesh_3d.slice({"cp", "tp"}).flatten("dp_tp"), ErrorKind::ValueError,
                    "Flatten mesh with mesh_dim_name dp_tp has been created before",
                    "Please specify another valid mesh_dim_name.");
  EXPECT_EQ(mesh_3d.flattened_names(), (Names{"dp_cp", "dp_tp", "dummy"}));
}

// test_flatten_mesh_4d
TEST(Flatten, FlattenMesh4d) {
  const Names names{"dp_replicate", "dp_shard", "cp", "tp"};
  const auto mesh_4d = DeviceMesh::init({2, 2, 2, 1}, names);
  // flatten HSDP and CP into one mesh
  const auto dp_cp_mesh = mesh_4d.slice({names[0], names[1], names[2]}).flatten("dp_cp");
  EXPECT_EQ(flattened_instances(mesh_4d.slice({"dp_cp"})), dp_cp_mesh.instances());
  EXPECT_EQ(dp_cp_mesh.instances(), tensor({1, 8}, iota(8)));
  EXPECT_EQ(*dp_cp_mesh.names(), Names{"dp_cp"});
  EXPECT_EQ(dp_cp_mesh.root(), mesh_4d);
  (void)mesh_4d.slice({names[1], names[2]}).flatten("dp_shard_cp");
  (void)mesh_4d.slice({"dp_replicate", "dp_shard_cp"}).flatten("dp");
  EXPECT_EQ(mesh_4d.slice({"dp", "tp"}).shape(), (Ranks{8, 1}));
  for (std::int64_t r = 0; r < 8; ++r) {
    EXPECT_EQ(mesh_4d.slice({"dp", "tp"}).instance_of(r), tensor({1, 8, 1}, iota(8)));
  }

  // Corner case: slicing and flattening a mesh smaller than the world.
  const auto tiny = DeviceMesh::init({1, 1, 1, 1}, names, 8);
  (void)tiny.slice({"dp_shard", "cp"}).flatten("dp_cp");
  const auto s = tiny.slice({"dp_replicate", "dp_cp", "tp"});
  EXPECT_EQ(s.shape(), (Ranks{1, 1, 1}));
  for (std::int64_t r = 0; r < 8; ++r) { EXPECT_EQ(s.instance_of(r), tensor({1, 1, 1, 1}, {0})); }
}

// test_reconstruct_mesh_with_flatten_dim
TEST(Flatten, ReconstructMeshWithFlattenDim) {
  {
    const auto mesh_3d = DeviceMesh::init({2, 2, 2}, Names{"replicate", "shard", "cp"});
    const auto shard_cp_mesh = mesh_3d.slice({"shard", "cp"}).flatten();
    const auto hsdp_mesh = mesh_3d.slice({"replicate", "shard_cp"});
    for (std::int64_t r = 0; r < 8; ++r) { EXPECT_EQ(hsdp_mesh.instance_of(r), tensor({1, 2, 4}, iota(8))); }
    EXPECT_EQ(shard_cp_mesh.groups(std::int64_t{0}), mesh_3d.slice({"shard_cp"}).groups(std::int64_t{0}));
    EXPECT_EQ(shard_cp_mesh.groups(std::int64_t{0}), mesh_3d.groups("shard_cp"));
    for (std::int64_t r = 0; r < 8; ++r) {
      EXPECT_EQ(shard_cp_mesh.group_of(r, std::int64_t{0}), mesh_3d.group_of(r, std::string("shard_cp")));
    }
  }
  {
    const auto mesh_3d = DeviceMesh::init({2, 2, 2}, Names{"dp", "cp", "tp"});
    const auto dp_cp_mesh = mesh_3d.slice({"dp", "cp"}).flatten();
    const auto spmd_mesh = mesh_3d.slice({"dp_cp", "tp"});
    for (std::int64_t r = 0; r < 8; ++r) { EXPECT_EQ(spmd_mesh.instance_of(r), tensor({1, 4, 2}, iota(8))); }
    EXPECT_EQ(dp_cp_mesh.groups(std::int64_t{0}), mesh_3d.slice({"dp_cp"}).groups(std::int64_t{0}));
    EXPECT_EQ(dp_cp_mesh.groups(std::int64_t{0}), mesh_3d.groups("dp_cp"));
  }
}

class FlattenWorld : public ::testing::TestWithParam<std::int64_t> {};
INSTANTIATE_TEST_SUITE_P(World, FlattenWorld, ::testing::Values(4, 8));

// The whole (2, W/2) mesh flattened: one group of every rank, local rank == global rank.
TEST_P(FlattenWorld, WholeMesh) {
  const std::int64_t w = GetParam();
  const auto mesh = DeviceMesh::init({2, w / 2}, Names{"dp", "tp"});
  const auto flat = mesh.flatten();
  EXPECT_EQ(*flat.names(), Names{"dp_tp"});
  EXPECT_EQ(flat.groups(std::int64_t{0}), tensor({1, w}, iota(w)));
  for (std::int64_t r = 0; r < w; ++r) {
    EXPECT_EQ(flat.local_rank(r), r);
    EXPECT_EQ(flat.coordinate(r), Ranks{r});
  }
  // The registry belongs to the root: every mesh of that root sees the flattened name.
  EXPECT_EQ(mesh.slice({"tp"}).groups("dp_tp"), flat.groups(std::int64_t{0}));
  EXPECT_EQ(mesh.slice({"tp"}).flattened_names(), Names{"dp_tp"});
  EXPECT_EQ(mesh.slice({"tp"}).local_rank(w - 1, AxisRef(std::string("dp_tp"))), w - 1);
}

// Flattened names slice only from the root (a mesh equal to it): a sub-mesh gets a KeyError.
TEST_P(FlattenWorld, FlattenedNamesSliceFromTheRootOnly) {
  const std::int64_t w = GetParam();
  const auto mesh = DeviceMesh::init({2, 2, w / 4}, Names{"a", "b", "c"});
  (void)mesh.slice({"a", "b"}).flatten();
  EXPECT_MESH_ERROR(mesh.slice({"a", "c"}).slice({"a_b"}), ErrorKind::KeyError,
                    "Invalid mesh_dim_names ('a_b',) specified.", "Valid mesh_dim_names are ['a', 'c'].");
  // The root lists its flattened names among the valid ones.
  EXPECT_MESH_ERROR(mesh.slice({"x"}), ErrorKind::KeyError, "Valid mesh_dim_names are ['a', 'b', 'c', 'a_b'].");
  // Overlap with an own axis.
  EXPECT_MESH_ERROR(mesh.slice({"a_b", "b"}), ErrorKind::RuntimeError,
                    "Slicing overlapping dim_names ('a_b', 'b') is not allowed.");
}

// Unnamed meshes cannot flatten; roots keep separate registries.
TEST(Flatten, UnnamedAndIndependentRoots) {
  EXPECT_MESH_ERROR(DeviceMesh::init({2, 4}).flatten(), ErrorKind::RuntimeError,
                    "Cannot flatten a DeviceMesh without mesh_dim_names!");
  const auto a = DeviceMesh::init({2, 4}, Names{"dp", "tp"});
  const auto b = DeviceMesh::init({2, 4}, Names{"dp", "tp"});
  (void)a.flatten("all");
  EXPECT_EQ(a.flattened_names(), Names{"all"});
  EXPECT_TRUE(b.flattened_names().empty());
  EXPECT_FALSE(b.flattened("all").has_value());
  EXPECT_MESH_ERROR(b.slice({"all"}), ErrorKind::KeyError, "Invalid mesh_dim_names ('all',)");
  // Same layout under an existing name: the registered mesh; an empty name means the default name.
  EXPECT_EQ(a.flatten("all"), *a.flattened("all"));
  EXPECT_EQ(*a.flatten("").names(), Names{"dp_tp"});
}

// Flattening follows an explicit rank map.
TEST(Flatten, PermutedRoot) {
  const Ranks ranks{5, 2, 7, 0, 3, 6, 1, 4};
  const auto mesh = DeviceMesh::from_ranks({2, 2, 2}, ranks, Names{"a", "b", "c"});
  const auto ac = mesh.slice({"a", "c"}).flatten();
  EXPECT_EQ(rows(ac.groups(std::int64_t{0})), (Rows{{5, 2, 3, 6}, {7, 0, 1, 4}}));
  EXPECT_EQ(ac.local_rank(6), 3);
  EXPECT_EQ(ac.instance_of(1), tensor({1, 4}, {7, 0, 1, 4}));
  EXPECT_EQ(mesh.flatten().instances(), tensor({1, 8}, ranks));
}

}  // namespace
