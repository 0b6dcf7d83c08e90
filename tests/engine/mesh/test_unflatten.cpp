// Unflattening, mesh._unflatten(dim, sizes, names): the split of one axis into several, in place, its errors
// and messages, and the groups the new axes share with the old ones. Ported from PyTorch's
// test/distributed/test_device_mesh.py (TestDeviceMeshGetItem.test_unflatten_mesh_2d/3d) for worlds 4 and 8,
// every rank checked.
//
// Not ported: the backend_override half of test_unflatten_mesh_3d and test_fake_backend_pg_names_w_torchcomms
// (backends, NCCL timeouts, process-group names), get_group identity (ported as equality of rank lists).
// Deliberate deviations of the engine, tested as such: a negative dim counts from the end (PyTorch does not
// reject it but then splices an empty range and builds a broken layout); repeated names after the split are a
// RuntimeError (PyTorch's constructor does not check names).
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

// test_unflatten_mesh_2d
TEST(Unflatten, UnflattenMesh2d) {
  const auto mesh_2d = DeviceMesh::init({4, 2}, Names{"dp", "tp"});
  const auto unflatten_mesh = mesh_2d.unflatten(std::int64_t{0}, {2, 2}, {"dp_shard", "dp_replicate"});
  EXPECT_EQ(*unflatten_mesh.names(), (Names{"dp_shard", "dp_replicate", "tp"}));
  EXPECT_EQ(unflatten_mesh.shape(), (Ranks{2, 2, 2}));
  EXPECT_EQ(meshloom::to_string(unflatten_mesh.layout()), "(2,2,2):(4,2,1)");
  EXPECT_EQ(unflatten_mesh.root(), mesh_2d);
  EXPECT_EQ(unflatten_mesh.slice({"tp"}), mesh_2d.slice({"tp"}));
  EXPECT_EQ(unflatten_mesh.groups("tp"), mesh_2d.groups("tp"));
  for (std::int64_t r = 0; r < 8; ++r) {
    EXPECT_EQ(mesh_2d.slice({"tp"}).instance_of(r), unflatten_mesh.slice({"tp"}).instance_of(r));
    EXPECT_EQ(unflatten_mesh.coordinate(r), (Ranks{r / 4, (r / 2) % 2, r % 2}));
  }
  // Unflattened names are not registered anywhere: the root cannot slice them.
  EXPECT_MESH_ERROR(mesh_2d.slice({"dp_shard"}), ErrorKind::KeyError, "Invalid mesh_dim_names ('dp_shard',) specified.",
                    "Valid mesh_dim_names are ['dp', 'tp'].");
  EXPECT_TRUE(mesh_2d.flattened_names().empty());
}

// test_unflatten_mesh_3d: unflatten from a world mesh, as Expert Parallelism does.
TEST(Unflatten, UnflattenMesh3d) {
  const auto global_mesh = DeviceMesh::init({8}, Names{"world"});
  const auto non_ep_mesh = global_mesh.unflatten(std::int64_t{0}, {2, 2, 2}, {"dp", "cp", "tp"});
  const auto ep_mesh = global_mesh.unflatten(std::int64_t{0}, {2, 2, 2}, {"dp", "ep", "ep_tp"});
  EXPECT_EQ(non_ep_mesh.slice({"cp"}).instances(), ep_mesh.slice({"ep"}).instances());
  EXPECT_EQ(non_ep_mesh.slice({"tp"}).instances(), ep_mesh.slice({"ep_tp"}).instances());
  for (std::int64_t r = 0; r < 8; ++r) {
    EXPECT_EQ(non_ep_mesh.slice({"cp"}).instance_of(r), ep_mesh.slice({"ep"}).instance_of(r));
    EXPECT_EQ(non_ep_mesh.slice({"tp"}).instance_of(r), ep_mesh.slice({"ep_tp"}).instance_of(r));
  }
  const auto mesh_3d = global_mesh.unflatten(std::int64_t{0}, {4, 2, 1}, {"dp", "cp", "tp"});
  EXPECT_EQ(mesh_3d.shape(), (Ranks{4, 2, 1}));
  EXPECT_EQ(rows(mesh_3d.groups("dp")), (Rows{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  EXPECT_EQ(rows(mesh_3d.groups("cp")), (Rows{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  const auto unflatten_mesh = mesh_3d.unflatten(std::int64_t{0}, {2, 2}, {"dp_shard", "dp_replicate"});
  EXPECT_EQ(*unflatten_mesh.names(), (Names{"dp_shard", "dp_replicate", "cp", "tp"}));
  EXPECT_EQ(unflatten_mesh.slice({"tp"}).instances(), mesh_3d.slice({"tp"}).instances());
  EXPECT_EQ(unflatten_mesh.groups("tp"), mesh_3d.groups("tp"));
  EXPECT_EQ(unflatten_mesh.slice({"cp"}).instances(), mesh_3d.slice({"cp"}).instances());
  EXPECT_EQ(unflatten_mesh.groups("cp"), mesh_3d.groups("cp"));
  EXPECT_EQ(rows(unflatten_mesh.groups("dp_shard")), (Rows{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(rows(unflatten_mesh.groups("dp_replicate")), (Rows{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(unflatten_mesh.root(), global_mesh);
}

class UnflattenWorld : public ::testing::TestWithParam<std::int64_t> {};
INSTANTIATE_TEST_SUITE_P(World, UnflattenWorld, ::testing::Values(4, 8));

// The new axes of a row-major split are the digits of the old one, for every rank.
TEST_P(UnflattenWorld, SplitOfTheWorld) {
  const std::int64_t w = GetParam();
  const auto world = DeviceMesh::init({w}, Names{"world"});
  const auto m = world.unflatten(std::string("world"), {2, w / 2}, {"dp", "tp"});
  EXPECT_EQ(m, DeviceMesh::init({2, w / 2}, Names{"dp", "tp"}));  // same rank map, layout and names
  for (std::int64_t r = 0; r < w; ++r) {
    EXPECT_EQ(m.coordinate(r), (Ranks{r / (w / 2), r % (w / 2)}));
    EXPECT_EQ(m.local_rank(r, std::string("tp")), r % (w / 2));
    EXPECT_EQ(m.group_of(r, std::string("dp")), (Ranks{r % (w / 2), r % (w / 2) + w / 2}));
  }
  // Unflatten then flatten gives back the original groups.
  EXPECT_EQ(m.flatten("again").groups(std::int64_t{0}), world.groups(std::int64_t{0}));
}

// The split of a non-contiguous flattened axis: its digits are the original axes.
TEST(Unflatten, NonContiguousFlattenedAxis) {
  const auto mesh = DeviceMesh::init({2, 2, 2}, Names{"dp", "cp", "tp"});
  const auto dp_tp = mesh.slice({"dp", "tp"}).flatten();
  const auto split = dp_tp.unflatten(std::int64_t{0}, {2, 2}, {"x", "y"});
  EXPECT_EQ(split.groups("x"), mesh.groups("dp"));
  EXPECT_EQ(split.groups("y"), mesh.groups("tp"));
  EXPECT_EQ(split.instances(), mesh.slice({"dp", "tp"}).instances());
  for (std::int64_t r = 0; r < 8; ++r) {
    EXPECT_EQ(split.instance_of(r), mesh.slice({"dp", "tp"}).instance_of(r));
    EXPECT_EQ(split.coordinate(r), mesh.slice({"dp", "tp"}).coordinate(r));
  }
  // Size-1 parts anywhere.
  const auto ones = dp_tp.unflatten(std::int64_t{0}, {1, 4, 1}, {"p", "q", "s"});
  EXPECT_EQ(ones.shape(), (Ranks{1, 4, 1}));
  EXPECT_EQ(ones.groups("q"), dp_tp.groups(std::int64_t{0}));
  EXPECT_EQ(rows(ones.groups("p")), (Rows{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}));
}

TEST(Unflatten, OfASubMeshAndByName) {
  const auto mesh = DeviceMesh::from_ranks({2, 4}, {7, 6, 5, 4, 3, 2, 1, 0}, Names{"dp", "tp"});
  const auto tp = mesh.slice({"tp"});
  const auto a = tp.unflatten(std::string("tp"), {2, 2}, {"a", "b"});
  const auto b = tp.unflatten(std::int64_t{0}, {2, 2}, {"a", "b"});
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.root(), mesh);
  EXPECT_EQ(rows(a.instances()), (Rows{{7, 6, 5, 4}, {3, 2, 1, 0}}));
  EXPECT_EQ(rows(a.groups("b")), (Rows{{7, 6}, {5, 4}, {3, 2}, {1, 0}}));
  EXPECT_EQ(rows(a.groups("a")), (Rows{{7, 5}, {6, 4}, {3, 1}, {2, 0}}));
  EXPECT_EQ(a.local_rank(4, std::string("a")), 1);
}

TEST(Unflatten, Errors) {
  const auto mesh = DeviceMesh::init({4, 2}, Names{"dp", "tp"});
  EXPECT_MESH_ERROR(mesh.unflatten(std::int64_t{2}, {2, 2}, {"a", "b"}), ErrorKind::ValueError,
                    "dim 2 specified in `_unflatten` is out of range 2");
  EXPECT_MESH_ERROR(mesh.unflatten(std::string("pp"), {2, 2}, {"a", "b"}), ErrorKind::ValueError,
                    "dim pp specified in `_unflatten` is not in ('dp', 'tp')");
  EXPECT_MESH_ERROR(mesh.unflatten(std::int64_t{0}, {2, 2}, {"a"}), ErrorKind::RuntimeError,
                    "mesh_dim_names must have same length as mesh_sizes in _unflatten!");
  EXPECT_MESH_ERROR(mesh.unflatten(std::int64_t{0}, {2, 3}, {"a", "b"}), ErrorKind::ValueError,
                    "The product of mesh_sizes=(2, 3) is 6, but the original dimension at dim=0 has size 4.",
                    "These must be equal for unflatten to work correctly.");
  EXPECT_MESH_ERROR(mesh.unflatten(std::string("tp"), {4}, {"a"}), ErrorKind::ValueError,
                    "The product of mesh_sizes=(4,) is 4, but the original dimension at dim=1 has size 2.");
  EXPECT_MESH_ERROR(DeviceMesh::init({4}).unflatten(std::int64_t{0}, {2, 2}, {"a", "b"}), ErrorKind::RuntimeError,
                    "Cannot unflatten a DeviceMesh without mesh_dim_names!");
  // Engine deviation: the names after the split must stay unique.
  EXPECT_MESH_ERROR(mesh.unflatten(std::int64_t{0}, {2, 2}, {"tp", "x"}), ErrorKind::RuntimeError,
                    "Each mesh_dim_name must be unique.", "('tp', 'x', 'tp')");
  // A split the axis's digits cannot express: (3,2):(8,1) (dp*tp of (3,4,2)) into (2,3).
  const auto odd = DeviceMesh::init({3, 4, 2}, Names{"dp", "cp", "tp"}).slice({"dp", "tp"}).flatten();
  try {
    (void)odd.unflatten(std::int64_t{0}, {2, 3}, {"a", "b"});
    ADD_FAILURE() << "a split across digits must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ValueError) << e.what();
  }
  // ... but a split along them works.
  const auto ok = odd.unflatten(std::int64_t{0}, {3, 2}, {"a", "b"});
  EXPECT_EQ(ok.groups("a"), DeviceMesh::init({3, 4, 2}, Names{"dp", "cp", "tp"}).groups("dp"));
}

// Engine deviation: a negative dim counts from the end.
TEST(Unflatten, NegativeDim) {
  const auto mesh = DeviceMesh::init({2, 4}, Names{"dp", "tp"});
  EXPECT_EQ(mesh.unflatten(std::int64_t{-1}, {2, 2}, {"a", "b"}), mesh.unflatten(std::int64_t{1}, {2, 2}, {"a", "b"}));
  EXPECT_EQ(mesh.unflatten(std::int64_t{-2}, {1, 2}, {"a", "b"}), mesh.unflatten(std::int64_t{0}, {1, 2}, {"a", "b"}));
  EXPECT_MESH_ERROR(mesh.unflatten(std::int64_t{-3}, {2, 2}, {"a", "b"}), ErrorKind::ValueError, "dim -3", "out of range 2");
}

TEST(Unflatten, NewNamesMustNotShadowAFlattenedName) {
  // Otherwise groups("x") (the flattened axis, as PyTorch's get_group resolves it) and the mesh's own axis "x"
  // would disagree.
  const auto mesh = DeviceMesh::init({4, 2}, Names{"a", "b"});
  (void)mesh.flatten("x");
  EXPECT_MESH_ERROR(mesh.unflatten(std::string("b"), {2}, {"x"}), ErrorKind::ValueError,
                    "x already exists as a flattened mesh_dim_name of the root");
  EXPECT_EQ(mesh.unflatten(std::string("b"), {2}, {"y"}).names(), (Names{"a", "y"}));
}

TEST(Unflatten, EmptySizesAreRejected) {
  const auto mesh = DeviceMesh::init({1, 2}, Names{"a", "b"});
  EXPECT_MESH_ERROR(mesh.unflatten(std::string("a"), {}, {}), ErrorKind::ValueError,
                    "mesh_sizes () is empty: a mesh needs at least one axis");
}

}  // namespace
