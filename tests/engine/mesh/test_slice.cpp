// Slicing, mesh[names]: own names, flattened names of the root, the ascending-order and overlap errors, and the
// root of every slice. Ported from PyTorch's test/distributed/test_device_mesh.py (TestDeviceMeshGetItem,
// TestMeshEnv.test_get_root_mesh, DeviceMeshTest.test_get_root_mesh_multiple_independent_meshes) for worlds 4
// and 8; PyTorch checks `mesh` on its own rank, here instance_of(rank) is checked for every rank.
//
// Not ported: test_cache_and_reuse_submesh_slice_result (process-group counts), test_mesh_slice_fake_tensor_mode
// (FakeTensorMode), the deprecation warnings, mesh[[...]] vs mesh[...] (one C++ call), the `is self` identity of
// mesh[own names] (ported as equality). The flattened-name slicing tests are in test_flatten.cpp.
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

// test_raises_no_mesh_dim_found
TEST(Slice, RaisesNoMeshDimFound) {
  const auto mesh = DeviceMesh::init({2, 4});
  EXPECT_MESH_ERROR(mesh.slice({"DP"}), ErrorKind::RuntimeError, "Cannot slice a DeviceMesh without mesh_dim_names!");
}

// test_raises_invalid_mesh_dim_name
TEST(Slice, RaisesInvalidMeshDimName) {
  const auto mesh = DeviceMesh::init({2, 4}, Names{"DP", "TP"});
  EXPECT_MESH_ERROR(mesh.slice({"PP"}), ErrorKind::KeyError, "Invalid mesh_dim_names ('PP',) specified.",
                    "Valid mesh_dim_names are ['DP', 'TP'].");
  EXPECT_MESH_ERROR(mesh.slice({"DP", "PP"}), ErrorKind::KeyError, "Invalid mesh_dim_names ('DP', 'PP') specified.");
}

class SliceWorld : public ::testing::TestWithParam<std::int64_t> {};
INSTANTIATE_TEST_SUITE_P(World, SliceWorld, ::testing::Values(4, 8));

// test_get_item_2d: mesh_2d[name].mesh on each rank is the row of mesh.swapdims(-1, dim) holding it.
TEST_P(SliceWorld, GetItem2d) {
  const std::int64_t w = GetParam();
  const Ranks shape{2, w / 2};
  const auto mesh_2d = DeviceMesh::init(shape, Names{"DP", "TP"});
  const auto tp_mesh = mesh_2d.slice({"TP"});
  const auto dp_mesh = mesh_2d.slice({"DP"});
  for (std::int64_t rank = 0; rank < w; ++rank) {
    SCOPED_TRACE(rank);
    const std::int64_t tp_group_idx = rank / (w / 2);
    EXPECT_EQ(tp_mesh.instance_of(rank).values, iota(w / 2, tp_group_idx * (w / 2)));
    const std::int64_t dp_group_idx = rank % (w / 2);
    EXPECT_EQ(dp_mesh.instance_of(rank).values, (Ranks{dp_group_idx, dp_group_idx + w / 2}));
  }
  EXPECT_EQ(tp_mesh.instances(), project(shape, iota(w), {1}));
  EXPECT_EQ(dp_mesh.instances(), project(shape, iota(w), {0}));
}

// test_get_item_1d: slicing a 1-D mesh by its own name gives the mesh itself.
TEST_P(SliceWorld, GetItem1d) {
  const std::int64_t w = GetParam();
  const auto mesh = DeviceMesh::init({w}, Names{"dp"});
  const auto dp_mesh = mesh.slice({"dp"});
  EXPECT_EQ(dp_mesh, mesh);
  EXPECT_EQ(dp_mesh.instances(), mesh.instances());
  EXPECT_MESH_ERROR(mesh.slice({"dim0"}), ErrorKind::KeyError, "Invalid mesh_dim_names ('dim0',) specified.",
                    "['dp']");
}

// test_get_item_3d
TEST(Slice, GetItem3d) {
  const auto mesh_3d = DeviceMesh::init({2, 2, 2}, Names{"Replicate", "Shard", "TP"});
  const Rows tp_group{{0, 1}, {2, 3}, {4, 5}, {6, 7}};
  const Rows shard_group{{0, 2}, {1, 3}, {4, 6}, {5, 7}};
  const Rows replicate_group{{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  const std::vector<Rows> hsdp_group{{{0, 2}, {4, 6}}, {{1, 3}, {5, 7}}};
  const auto hsdp_mesh = mesh_3d.slice({"Replicate", "Shard"});
  const auto shard_mesh = hsdp_mesh.slice({"Shard"});          // 1-D from a sub-2D mesh
  const auto replicate_mesh = hsdp_mesh.slice({"Replicate"});
  for (std::int64_t rank = 0; rank < 8; ++rank) {
    SCOPED_TRACE(rank);
    const auto tp_group_idx = static_cast<std::size_t>(rank / 2);
    EXPECT_EQ(mesh_3d.slice({"TP"}).instance_of(rank).values, tp_group[tp_group_idx]);
    const auto shard_group_idx = static_cast<std::size_t>(rank % 2 + rank / 4 * 2);
    EXPECT_EQ(mesh_3d.slice({"Shard"}).instance_of(rank).values, shard_group[shard_group_idx]);
    const auto replicate_group_idx = static_cast<std::size_t>(rank % 4);
    EXPECT_EQ(mesh_3d.slice({"Replicate"}).instance_of(rank).values, replicate_group[replicate_group_idx]);
    const auto& hsdp = hsdp_group[static_cast<std::size_t>(rank % 2)];
    EXPECT_EQ(hsdp_mesh.instance_of(rank), tensor({1, 2, 2}, {hsdp[0][0], hsdp[0][1], hsdp[1][0], hsdp[1][1]}));
    EXPECT_EQ(shard_mesh.instance_of(rank).values, shard_group[shard_group_idx]);
    EXPECT_EQ(replicate_mesh.instance_of(rank).values, replicate_group[replicate_group_idx]);
  }
  EXPECT_EQ(hsdp_mesh, mesh_3d.slice({"Replicate", "Shard"}));
  EXPECT_EQ(shard_mesh, mesh_3d.slice({"Shard"}));  // same root rank map, layout and names
  EXPECT_EQ(shard_mesh.root(), mesh_3d);
}

// test_get_item_3d_noncontiguous_slicing
TEST(Slice, GetItem3dNoncontiguousSlicing) {
  const auto mesh_3d = DeviceMesh::init({2, 2, 2}, Names{"dp", "pp", "cp"});
  const auto dp_cp_mesh = mesh_3d.slice({"dp", "cp"});
  const auto cp_mesh = mesh_3d.slice({"cp"});
  EXPECT_EQ(dp_cp_mesh.instances(), tensor({2, 2, 2}, {0, 1, 4, 5, 2, 3, 6, 7}));
  for (std::int64_t rank = 0; rank < 8; ++rank) {
    SCOPED_TRACE(rank);
    const bool first = rank == 0 || rank == 1 || rank == 4 || rank == 5;
    const RankTensor expected = first ? tensor({1, 2, 2}, {0, 1, 4, 5}) : tensor({1, 2, 2}, {2, 3, 6, 7});
    EXPECT_EQ(dp_cp_mesh.instance_of(rank), expected);
    // On the current dp local rank, the row of the dp_cp mesh is the cp mesh.
    const auto dp_local_rank = dp_cp_mesh.local_rank(rank, std::string("dp"));
    const auto row = rows(RankTensor{{2, 2}, expected.values})[static_cast<std::size_t>(dp_local_rank)];
    EXPECT_EQ(row, cp_mesh.instance_of(rank).values);
  }
  EXPECT_MESH_ERROR(mesh_3d.slice({"cp", "dp"}), ErrorKind::KeyError, "Invalid mesh_dim_names ('cp', 'dp') specified.",
                    "Mesh dim indices should be in ascending order.");
}

TEST_P(SliceWorld, OutOfOrderIsRejected) {
  const std::int64_t w = GetParam();
  const auto mesh = DeviceMesh::init({2, w / 2}, Names{"dp", "tp"});
  EXPECT_MESH_ERROR(mesh.slice({"tp", "dp"}), ErrorKind::KeyError, "('tp', 'dp')",
                    "Mesh dim indices should be in ascending order.");
  // A sub-mesh slices by its own names only, in its own order.
  const auto sub = DeviceMesh::init({2, w / 4, 2}, Names{"a", "b", "c"}).slice({"a", "c"});
  EXPECT_MESH_ERROR(sub.slice({"c", "a"}), ErrorKind::KeyError, "('c', 'a')", "ascending order");
  EXPECT_MESH_ERROR(sub.slice({"b"}), ErrorKind::KeyError, "Invalid mesh_dim_names ('b',) specified.",
                    "Valid mesh_dim_names are ['a', 'c'].");
}

// Overlapping names: RuntimeError in the newest PyTorch (the seed raised the ascending KeyError).
TEST(Slice, EmptyNamesAreRejected) {
  const auto mesh = DeviceMesh::init({2, 2}, Names{"dp", "tp"});
  EXPECT_MESH_ERROR(mesh.slice({}), ErrorKind::ValueError, "Cannot slice a DeviceMesh by an empty tuple of mesh_dim_names");
}

TEST(Slice, OverlapIsRejected) {
  const auto mesh = DeviceMesh::init({2, 4}, Names{"dp", "tp"});
  EXPECT_MESH_ERROR(mesh.slice({"dp", "dp"}), ErrorKind::RuntimeError,
                    "Slicing overlapping dim_names ('dp', 'dp') is not allowed.");
  EXPECT_MESH_ERROR(mesh.slice({"tp", "tp"}), ErrorKind::RuntimeError, "('tp', 'tp')", "overlapping");
}

// A size-1 axis has no stride: it fits anywhere in the order (only the layout-based versions accept this).
TEST(Slice, SizeOneAxisOutOfOrder) {
  const auto mesh = DeviceMesh::init({2, 4, 1}, Names{"dp", "cp", "tp"});
  const auto tp_cp = mesh.slice({"tp", "cp"});
  EXPECT_EQ(tp_cp.shape(), (Ranks{1, 4}));
  EXPECT_EQ(tp_cp.instances(), tensor({2, 1, 4}, iota(8)));
  const auto tp_dp = mesh.slice({"tp", "dp"});
  EXPECT_EQ(tp_dp.instances(), tensor({4, 1, 2}, {0, 4, 1, 5, 2, 6, 3, 7}));
}

// Non-adjacent axes (skipping one) are fine: reference example (2,2,2) dp,pp,cp -> ["dp","cp"].
TEST(Slice, NonAdjacent) {
  const auto mesh = DeviceMesh::init({2, 2, 2}, Names{"dp", "pp", "cp"});
  EXPECT_EQ(rows(mesh.slice({"dp", "cp"}).instances()), (Rows{{0, 1, 4, 5}, {2, 3, 6, 7}}));
  EXPECT_EQ(meshloom::to_string(mesh.slice({"dp", "cp"}).layout()), "(2,2):(4,1)");
}

// Own names in own order return the mesh itself, even for a transposed mesh that no other order can slice.
TEST(Slice, OwnNamesReturnSelf) {
  const auto mesh = DeviceMesh::init({2, 4}, Names{"dp", "tp"});
  EXPECT_EQ(mesh.slice({"dp", "tp"}), mesh);
  const auto t = DeviceMesh::concatenate({mesh.slice({"tp"}), mesh.slice({"dp"})});
  EXPECT_EQ(t.slice({"tp", "dp"}), t);
  EXPECT_EQ(t.slice({"tp"}), mesh.slice({"tp"}));
  EXPECT_EQ(t.slice({"dp"}), mesh.slice({"dp"}));
}

// An explicit permuted root: slices follow the rank tensor.
TEST_P(SliceWorld, PermutedRoot) {
  const std::int64_t w = GetParam();
  Ranks values(static_cast<std::size_t>(w));
  for (std::int64_t i = 0; i < w; ++i) values[static_cast<std::size_t>(i)] = (i * 5 + 3) % w;
  const Ranks shape{2, 2, w / 4};
  const auto root = DeviceMesh::from_ranks(shape, values, Names{"a", "b", "c"});
  EXPECT_EQ(root.slice({"a", "c"}).instances(), project(shape, values, {0, 2}));
  EXPECT_EQ(root.slice({"b"}).instances(), project(shape, values, {1}));
  EXPECT_EQ(root.slice({"a", "b"}).instances(), project(shape, values, {0, 1}));
  for (std::int64_t r = 0; r < w; ++r) {
    EXPECT_EQ(root.slice({"a", "c"}).instance_of(r), *row_holding(project(shape, values, {0, 2}), r));
  }
}

// test_get_root_mesh (TestMeshEnv)
TEST(Slice, GetRootMesh) {
  const auto mesh_3d = DeviceMesh::init({2, 2, 2}, Names{"dp", "cp", "tp"});
  for (const Names& n : {Names{"dp", "cp"}, Names{"dp", "tp"}, Names{"cp", "tp"}, Names{"dp"}, Names{"cp"},
                         Names{"tp"}}) {
    EXPECT_EQ(mesh_3d.slice(n).root(), mesh_3d) << ::testing::PrintToString(n);
    EXPECT_EQ(mesh_3d.slice(n).root().names(), mesh_3d.names());
  }
  // A slice of a slice still points to the root, never to the intermediate.
  EXPECT_EQ(mesh_3d.slice({"dp", "tp"}).slice({"tp"}).root(), mesh_3d);
}

// test_get_root_mesh_multiple_independent_meshes
TEST(Slice, GetRootMeshMultipleIndependentMeshes) {
  const auto mesh1 = DeviceMesh::init({2, 2}, Names{"dp", "tp"});
  const auto mesh2 = DeviceMesh::init({2, 2}, Names{"dim1", "dim2"});
  EXPECT_EQ(mesh1.slice({"dp"}).root(), mesh1);
  EXPECT_EQ(mesh1.slice({"tp"}).root(), mesh1);
  EXPECT_EQ(mesh2.slice({"dim1"}).root(), mesh2);
  EXPECT_EQ(mesh2.slice({"dim2"}).root(), mesh2);
  EXPECT_NE(mesh1.slice({"dp"}).root(), mesh2);
  EXPECT_NE(mesh1.slice({"tp"}).root(), mesh2);
}

}  // namespace
