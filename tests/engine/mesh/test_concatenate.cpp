// Concatenation, DeviceMesh._concatenate([meshes]): the axes of every mesh, in order, over one root rank map;
// no ordering check (a transposed mesh is fine); overlapping meshes and different rank maps are errors. Ported
// from PyTorch's test/distributed/test_device_mesh.py (TestDeviceMeshGetItem.test_concatenate_2d/3d) for
// worlds 4 and 8, every rank checked.
//
// Not ported: the process-group identity of get_group on the result (ported as equality of the rank lists).
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

class ConcatWorld : public ::testing::TestWithParam<std::int64_t> {};
INSTANTIATE_TEST_SUITE_P(World, ConcatWorld, ::testing::Values(4, 8));

// test_concatenate_2d
TEST_P(ConcatWorld, Concatenate2d) {
  const std::int64_t w = GetParam();
  const auto mesh_2d = DeviceMesh::init({2, w / 2}, Names{"dp", "tp"});
  const auto concatenated_mesh = DeviceMesh::concatenate({mesh_2d.slice({"dp"}), mesh_2d.slice({"tp"})});
  EXPECT_EQ(concatenated_mesh.instances(), mesh_2d.instances());
  EXPECT_EQ(concatenated_mesh.groups("dp"), mesh_2d.groups("dp"));
  EXPECT_EQ(concatenated_mesh.groups("tp"), mesh_2d.groups("tp"));
  EXPECT_EQ(concatenated_mesh, mesh_2d);
  EXPECT_EQ(concatenated_mesh.hash(), mesh_2d.hash());
  EXPECT_EQ(concatenated_mesh.root(), mesh_2d);
  for (std::int64_t r = 0; r < w; ++r) {
    EXPECT_EQ(concatenated_mesh.instance_of(r), mesh_2d.instance_of(r));
    EXPECT_EQ(concatenated_mesh.group_of(r, std::string("dp")), mesh_2d.group_of(r, std::string("dp")));
    EXPECT_EQ(concatenated_mesh.coordinate(r), mesh_2d.coordinate(r));
  }
}

// test_concatenate_3d
TEST(Concatenate, Concatenate3d) {
  const auto mesh_3d = DeviceMesh::init({2, 2, 2}, Names{"pp", "dp", "tp"});
  const auto concatenated_mesh = DeviceMesh::concatenate({mesh_3d.slice({"dp"}), mesh_3d.slice({"tp"})});
  const auto dp_tp_mesh = mesh_3d.slice({"dp", "tp"});
  EXPECT_EQ(concatenated_mesh.instances(), dp_tp_mesh.instances());
  EXPECT_EQ(concatenated_mesh.groups("dp"), dp_tp_mesh.groups("dp"));
  EXPECT_EQ(concatenated_mesh.groups("tp"), dp_tp_mesh.groups("tp"));
  EXPECT_EQ(concatenated_mesh, dp_tp_mesh);
  for (std::int64_t r = 0; r < 8; ++r) { EXPECT_EQ(concatenated_mesh.instance_of(r), dp_tp_mesh.instance_of(r)); }
  EXPECT_EQ(mesh_3d, DeviceMesh::concatenate({mesh_3d.slice({"pp", "dp"}), mesh_3d.slice({"tp"})}));
  // Non-adjacent pieces.
  EXPECT_EQ(DeviceMesh::concatenate({mesh_3d.slice({"pp"}), mesh_3d.slice({"tp"})}), mesh_3d.slice({"pp", "tp"}));
}

// No ordering check: [tp, dp] builds the transposed mesh.
TEST_P(ConcatWorld, Transposed) {
  const std::int64_t w = GetParam();
  const std::int64_t h = w / 2;
  const auto mesh = DeviceMesh::init({2, h}, Names{"dp", "tp"});
  const auto t = DeviceMesh::concatenate({mesh.slice({"tp"}), mesh.slice({"dp"})});
  EXPECT_EQ(*t.names(), (Names{"tp", "dp"}));
  EXPECT_EQ(t.shape(), (Ranks{h, 2}));
  Ranks expected;
  for (std::int64_t j = 0; j < h; ++j) {
    expected.push_back(j);
    expected.push_back(j + h);
  }
  EXPECT_EQ(t.instances(), tensor({1, h, 2}, expected));
  EXPECT_EQ(t.groups("tp"), mesh.groups("tp"));
  EXPECT_EQ(t.groups("dp"), mesh.groups("dp"));
  EXPECT_NE(t, mesh);
  // Its flattening enumerates the transposed order.
  EXPECT_EQ(t.flatten("t_flat").groups(std::int64_t{0}), tensor({1, w}, expected));
}

TEST_P(ConcatWorld, WithFlattenedAxes) {
  const std::int64_t w = GetParam();
  const auto mesh = DeviceMesh::init({2, 2, w / 4}, Names{"dp", "cp", "tp"});
  const auto dp_cp = mesh.slice({"dp", "cp"}).flatten();
  const auto c = DeviceMesh::concatenate({dp_cp, mesh.slice({"tp"})});
  EXPECT_EQ(c, mesh.slice({"dp_cp", "tp"}));
  EXPECT_EQ(c.instances(), tensor({1, 4, w / 4}, [&] {
              Ranks r(static_cast<std::size_t>(w));
              for (std::int64_t i = 0; i < w; ++i) r[static_cast<std::size_t>(i)] = i;
              return r;
            }()));
  EXPECT_EQ(c.groups("dp_cp"), mesh.groups("dp_cp"));
  for (std::int64_t r = 0; r < w; ++r) { EXPECT_EQ(c.local_rank(r, std::string("dp_cp")), r / (w / 4)); }
}

// The root is the first mesh's root; a concatenation equal to the root slices flattened names like it.
TEST(Concatenate, EqualToRootSlicesFlattenedNames) {
  const auto mesh = DeviceMesh::init({2, 2, 2}, Names{"a", "b", "c"});
  (void)mesh.slice({"a", "c"}).flatten();
  const auto again = DeviceMesh::concatenate({mesh.slice({"a"}), mesh.slice({"b", "c"})});
  EXPECT_EQ(again, mesh);
  EXPECT_EQ(again.root(), mesh);
  EXPECT_EQ(rows(again.slice({"a_c"}).instances()), (Rows{{0, 1, 4, 5}, {2, 3, 6, 7}}));
}

TEST(Concatenate, Errors) {
  const auto mesh = DeviceMesh::init({2, 4}, Names{"dp", "tp"});
  EXPECT_MESH_ERROR(DeviceMesh::concatenate({mesh.slice({"dp"}), mesh.slice({"dp"})}), ErrorKind::RuntimeError,
                    "Cannot concatenate overlapping meshes: [DeviceMesh((dp=2), stride=(4,)), "
                    "DeviceMesh((dp=2), stride=(4,))]");
  EXPECT_MESH_ERROR(DeviceMesh::concatenate({mesh, mesh.slice({"tp"})}), ErrorKind::RuntimeError,
                    "Cannot concatenate overlapping meshes");
  // A flattened axis overlapping an own axis.
  EXPECT_MESH_ERROR(DeviceMesh::concatenate({mesh.flatten(), mesh.slice({"tp"})}), ErrorKind::RuntimeError,
                    "Cannot concatenate overlapping meshes", "dp_tp=8");
  // Different root rank maps.
  const auto other = DeviceMesh::from_ranks({2, 4}, {1, 0, 2, 3, 4, 5, 6, 7}, Names{"dp", "tp"});
  EXPECT_MESH_ERROR(DeviceMesh::concatenate({mesh.slice({"dp"}), other.slice({"tp"})}), ErrorKind::RuntimeError,
                    "Cannot concatenate DeviceMeshes derived from different device meshes");
  const auto bigger = DeviceMesh::init({4, 4}, Names{"dp", "tp"});
  EXPECT_MESH_ERROR(DeviceMesh::concatenate({mesh.slice({"dp"}), bigger.slice({"tp"})}), ErrorKind::RuntimeError,
                    "derived from different device meshes");
  EXPECT_MESH_ERROR(DeviceMesh::concatenate({}), ErrorKind::ValueError, "empty list");
  const auto unnamed = DeviceMesh::init({2, 4});
  EXPECT_MESH_ERROR(DeviceMesh::concatenate({unnamed}), ErrorKind::RuntimeError, "no mesh_dim_names");
}

// PyTorch compares the root rank maps, not the roots: equal rank maps of two roots concatenate.
TEST(Concatenate, IndependentRootsWithEqualRankMaps) {
  const auto a = DeviceMesh::init({2, 4}, Names{"dp", "tp"});
  const auto b = DeviceMesh::init({2, 4}, Names{"x", "y"});
  const auto c = DeviceMesh::concatenate({a.slice({"dp"}), b.slice({"y"})});
  EXPECT_EQ(c.instances(), a.instances());
  EXPECT_EQ(c.root(), a);
  EXPECT_EQ(*c.names(), (Names{"dp", "y"}));
}

// Explicit rank maps follow the rank tensor.
TEST(Concatenate, PermutedRoot) {
  const auto mesh = DeviceMesh::from_ranks({2, 2}, {3, 1, 2, 0}, Names{"a", "b"});
  const auto t = DeviceMesh::concatenate({mesh.slice({"b"}), mesh.slice({"a"})});
  EXPECT_EQ(t.instances(), tensor({1, 2, 2}, {3, 2, 1, 0}));
  EXPECT_EQ(t.coordinate(2), (Ranks{0, 1}));
  EXPECT_EQ(t.local_rank(2, std::string("a")), 1);
}

}  // namespace
