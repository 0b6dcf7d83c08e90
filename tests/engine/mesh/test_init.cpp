// DeviceMesh construction: init (PyTorch's init_device_mesh) and from_ranks (DeviceMesh(device_type, mesh=tensor)),
// their validations and messages, the world checks, and explicit rank tensors (permutations and subsets of a
// world). Ported from PyTorch's test/distributed/test_device_mesh.py (InitDeviceMeshTest, DeviceMeshTest), for
// world sizes 4 and 8; PyTorch runs each test once per rank, here every rank of the world is checked in a loop.
//
// Not ported (no meaning without process groups or devices):
//   DeviceMeshTestGlooBackend.test_device_mesh_reuse_default_group, DeviceMeshSetDeviceTest.* (device
//   selection), test_init_process_group, test_2d_mesh_{non_,}eager_init_subgroup (bound device ids),
//   test_fake_pg_device_mesh*, test_raises_invalid_device_type (no device type), test_from_group_* (process
//   groups; the equality part is in test_equality.cpp), test_backend_override_* (backends),
//   the process-group half of test_device_mesh_init_backend ("process groups not initialized!").
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

class InitWorld : public ::testing::TestWithParam<std::int64_t> {};
INSTANTIATE_TEST_SUITE_P(World, InitWorld, ::testing::Values(4, 8));

// test_init_device_mesh: init_device_mesh equals DeviceMesh(arange(W).view(shape), names).
TEST_P(InitWorld, InitEqualsExplicitArange) {
  const std::int64_t w = GetParam();
  const Ranks shape{2, w / 2};
  const Names names{"DP", "TP"};
  const auto ref = DeviceMesh::from_ranks(shape, iota(w), names);
  const auto mesh = DeviceMesh::init(shape, names);
  EXPECT_EQ(mesh, ref);
  EXPECT_EQ(mesh.hash(), ref.hash());
  ASSERT_TRUE(mesh.names().has_value());
  EXPECT_EQ(*mesh.names(), names);
  EXPECT_EQ(mesh.shape(), shape);
  EXPECT_EQ(mesh.ndim(), 2u);
  EXPECT_EQ(mesh.size(), w);
  EXPECT_EQ(mesh.size(std::int64_t{1}), w / 2);
  EXPECT_EQ(mesh.size(std::string("DP")), 2);
  EXPECT_EQ(mesh.world(), w);
  EXPECT_TRUE(mesh.rank_map().is_identity());
  EXPECT_TRUE(ref.rank_map().is_identity());  // an explicit 0..N-1 is the identity map
  EXPECT_EQ(mesh.instances(), tensor({1, 2, w / 2}, iota(w)));
  EXPECT_EQ(mesh.root(), mesh);
  EXPECT_TRUE(mesh.flattened_names().empty());
}

TEST_P(InitWorld, LayoutIsRowMajor) {
  const std::int64_t w = GetParam();
  EXPECT_EQ(meshloom::to_string(DeviceMesh::init({2, w / 2}).layout()), "(2," + std::to_string(w / 2) + "):(" +
                                                                            std::to_string(w / 2) + ",1)");
  EXPECT_EQ(meshloom::to_string(DeviceMesh::init({w}).layout()), "(" + std::to_string(w) + ",):(1,)");
}

// test_raises_duplicate_mesh_dim_names
TEST(Init, RaisesDuplicateMeshDimNames) {
  EXPECT_MESH_ERROR(DeviceMesh::init({2, 4}, Names{"dp", "dp"}), ErrorKind::RuntimeError,
                    "Each mesh_dim_name must be unique.", "Found repeated mesh_dim_name in mesh_dim_names",
                    "('dp', 'dp')");
  // Checked before the length, as PyTorch does.
  EXPECT_MESH_ERROR(DeviceMesh::init({8}, Names{"tp", "tp"}), ErrorKind::RuntimeError,
                    "Each mesh_dim_name must be unique.", "('tp', 'tp')");
}

// test_raises_mesh_shape_mesh_dim_names_mismatch
TEST(Init, RaisesMeshShapeMeshDimNamesMismatch) {
  EXPECT_MESH_ERROR(DeviceMesh::init({8}, Names{"dp", "tp"}), ErrorKind::RuntimeError,
                    "mesh_shape and mesh_dim_names should have same length!",
                    "Found len(mesh_dim_names): 2 and len(mesh_shape):1.");
  EXPECT_MESH_ERROR(DeviceMesh::init({2, 2, 2}, Names{"dp"}), ErrorKind::RuntimeError,
                    "mesh_shape and mesh_dim_names should have same length!", "len(mesh_dim_names): 1",
                    "len(mesh_shape):3");
}

TEST(Init, EmptyNames) {
  // init_device_mesh checks an empty tuple like any other (`mesh_dim_names is not None`): wrong length.
  EXPECT_MESH_ERROR(DeviceMesh::init({4}, Names{}), ErrorKind::RuntimeError,
                    "mesh_shape and mesh_dim_names should have same length!",
                    "Found len(mesh_dim_names): 0 and len(mesh_shape):1.");
  // Without names: unnamed, and slicing needs names.
  const auto mesh = DeviceMesh::init({4});
  EXPECT_FALSE(mesh.names().has_value());
  EXPECT_EQ(mesh, DeviceMesh::init({4}));
  EXPECT_EQ(mesh.repr(), "DeviceMesh((4,), stride=(1,))");
}

TEST(Init, RejectsAnEmptyShape) {
  EXPECT_MESH_ERROR(DeviceMesh::init({}), ErrorKind::ValueError, "mesh_shape () is empty: a mesh needs at least one axis");
  EXPECT_MESH_ERROR(DeviceMesh::from_ranks({}, {0}), ErrorKind::ValueError, "mesh_shape () is empty");
}

TEST(Init, RejectsNonPositiveSizes) {
  EXPECT_MESH_ERROR(DeviceMesh::init({2, 0}), ErrorKind::ValueError, "(2, 0)", "size 0", "axis 1", ">= 1");
  EXPECT_MESH_ERROR(DeviceMesh::init({-3}), ErrorKind::ValueError, "(-3,)", "size -3", "axis 0");
  EXPECT_MESH_ERROR(DeviceMesh::from_ranks({0}, {}), ErrorKind::ValueError, "size 0");
}

TEST_P(InitWorld, MeshBiggerThanWorldIsRejected) {
  const std::int64_t w = GetParam();
  EXPECT_MESH_ERROR(DeviceMesh::init({2, w}, Names{"dp", "tp"}, w), ErrorKind::RuntimeError,
                    "Mesh should not be bigger than default world size " + std::to_string(w) + ", but found " +
                        std::to_string(2 * w) + " ranks!");
  EXPECT_MESH_ERROR(DeviceMesh::from_ranks({w + 1}, iota(w + 1), std::nullopt, w), ErrorKind::RuntimeError,
                    "Mesh should not be bigger than default world size " + std::to_string(w) + ", but found " +
                        std::to_string(w + 1) + " ranks!");
  // Exactly the world is fine.
  EXPECT_EQ(DeviceMesh::init({2, w / 2}, std::nullopt, w).world(), w);
}

TEST(Init, WorldOutOfRange) {
  EXPECT_MESH_ERROR(DeviceMesh::init({2}, std::nullopt, 0), ErrorKind::ValueError, "world size 0");
  EXPECT_MESH_ERROR(DeviceMesh::init({2}, std::nullopt, -4), ErrorKind::ValueError, "world size -4");
}

// A mesh smaller than the world: the extra ranks are non-members (PyTorch allows numel < world size).
TEST_P(InitWorld, SmallerMeshThanWorld) {
  const std::int64_t w = GetParam();
  const auto mesh = DeviceMesh::init({2}, Names{"dp"}, w);
  EXPECT_EQ(mesh.world(), w);
  EXPECT_EQ(mesh.size(), 2);
  for (std::int64_t r = 0; r < w; ++r) {
    SCOPED_TRACE(r);
    EXPECT_EQ(mesh.contains(r), r < 2);
    if (r < 2) {
      EXPECT_EQ(mesh.coordinate(r), Ranks{r});
      EXPECT_EQ(mesh.local_rank(r), r);
    } else {
      EXPECT_EQ(mesh.coordinate(r), std::nullopt);
      // PyTorch's `mesh` on a non-member: the single instance.
      EXPECT_EQ(mesh.instance_of(r), tensor({1, 2}, {0, 1}));
      EXPECT_MESH_ERROR(mesh.group_of(r, std::int64_t{0}), ErrorKind::RuntimeError,
                        "rank " + std::to_string(r) + " is not part of", "DeviceMesh((dp=2), stride=(1,))");
      EXPECT_MESH_ERROR(mesh.local_rank(r), ErrorKind::RuntimeError, "rank " + std::to_string(r) + " is not part of");
    }
  }
  EXPECT_MESH_ERROR(mesh.coordinate(w), ErrorKind::ValueError,
                    "rank " + std::to_string(w) + " is out of range for world size " + std::to_string(w));
  EXPECT_MESH_ERROR(mesh.coordinate(-1), ErrorKind::ValueError, "rank -1 is out of range");
}

// test_device_mesh_init_backend: DeviceMesh(arange(10), _init_backend=False, _rank=5) has coordinate (5,)
// although the test's world is 4: without process groups there is no world check.
TEST(FromRanks, NoWorldCheckWithoutAWorld) {
  const auto mesh = DeviceMesh::from_ranks({10}, iota(10));
  EXPECT_EQ(mesh.world(), 10);
  EXPECT_EQ(mesh.coordinate(5), Ranks{5});
  // With the world of that test it is too big.
  EXPECT_MESH_ERROR(DeviceMesh::from_ranks({10}, iota(10), std::nullopt, 4), ErrorKind::RuntimeError,
                    "Mesh should not be bigger than default world size 4, but found 10 ranks!");
}

TEST(FromRanks, Validations) {
  EXPECT_MESH_ERROR(DeviceMesh::from_ranks({2, 2}, {0, 1, 2}), ErrorKind::ValueError, "(2, 2)", "needs 4 ranks",
                    "3 were given");
  EXPECT_MESH_ERROR(DeviceMesh::from_ranks({4}, {0, 3, 1, 3}), ErrorKind::ValueError,
                    "rank 3 appears more than once", "positions 1 and 3");
  EXPECT_MESH_ERROR(DeviceMesh::from_ranks({2}, {0, -1}), ErrorKind::ValueError, "rank -1", "position 1");
  // A rank the world does not hold.
  EXPECT_MESH_ERROR(DeviceMesh::from_ranks({2}, {0, 5}, std::nullopt, 4), ErrorKind::RuntimeError, "rank 5",
                    "world of 4 ranks");
  // The engine checks names on every root (PyTorch's constructor stores them unchecked; see the file header of
  // test_equality.cpp): duplicates and a wrong count are the init_device_mesh errors.
  EXPECT_MESH_ERROR(DeviceMesh::from_ranks({2, 2}, iota(4), Names{"a", "a"}), ErrorKind::RuntimeError,
                    "Each mesh_dim_name must be unique.", "('a', 'a')");
  EXPECT_MESH_ERROR(DeviceMesh::from_ranks({2, 2}, iota(4), Names{"a"}), ErrorKind::RuntimeError,
                    "mesh_shape and mesh_dim_names should have same length!");
}

TEST(FromRanks, RankMapValidations) {
  EXPECT_MESH_ERROR(meshloom::RankMap::from_ranks({4, 2, 4}), ErrorKind::ValueError, "rank 4 appears more than once",
                    "positions 0 and 2");
  EXPECT_MESH_ERROR(meshloom::RankMap::from_ranks({}), ErrorKind::ValueError, "got 0");
  EXPECT_MESH_ERROR(meshloom::RankMap::identity(0), ErrorKind::ValueError, "got 0");
  const auto m = meshloom::RankMap::from_ranks({5, 0, 3});
  EXPECT_FALSE(m.is_identity());
  EXPECT_EQ(m.size(), 3);
  EXPECT_EQ(m.min_world(), 6);
  EXPECT_EQ(m[0], 5);
  EXPECT_EQ(m.position_of(3), 2);
  EXPECT_EQ(m.position_of(1), std::nullopt);
  EXPECT_EQ(m.position_of(6), std::nullopt);
  EXPECT_EQ(m.position_of(-1), std::nullopt);
  EXPECT_TRUE(meshloom::RankMap::from_ranks({0, 1, 2}) == meshloom::RankMap::identity(3));
  EXPECT_EQ(meshloom::RankMap::from_ranks({0, 1, 2}).hash(), meshloom::RankMap::identity(3).hash());
  EXPECT_FALSE(m == meshloom::RankMap::from_ranks({5, 3, 0}));
}

// A permutation of the world: every view follows the rank tensor, not the rank numbers.
TEST_P(InitWorld, PermutedRankTensor) {
  const std::int64_t w = GetParam();
  const std::int64_t h = w / 2;
  Ranks ranks = iota(w);
  std::reverse(ranks.begin(), ranks.end());  // [[w-1 .. h], [h-1 .. 0]]
  const auto mesh = DeviceMesh::from_ranks({2, h}, ranks, Names{"dp", "tp"});
  EXPECT_EQ(mesh.world(), w);
  EXPECT_FALSE(mesh.rank_map().is_identity());
  EXPECT_EQ(mesh.instances(), tensor({1, 2, h}, ranks));
  Rows tp, dp;
  for (std::int64_t i = 0; i < 2; ++i) tp.push_back(Ranks(ranks.begin() + i * h, ranks.begin() + (i + 1) * h));
  for (std::int64_t j = 0; j < h; ++j) dp.push_back({ranks[static_cast<std::size_t>(j)], ranks[static_cast<std::size_t>(h + j)]});
  EXPECT_EQ(rows(mesh.groups("tp")), tp);
  EXPECT_EQ(rows(mesh.groups("dp")), dp);
  for (std::int64_t r = 0; r < w; ++r) {
    SCOPED_TRACE(r);
    const std::int64_t pos = w - 1 - r;
    const Ranks coord{pos / h, pos % h};
    EXPECT_EQ(mesh.coordinate(r), coord);
    EXPECT_EQ(mesh.local_rank(r, std::string("dp")), coord[0]);
    EXPECT_EQ(mesh.local_rank(r, std::string("tp")), coord[1]);
    EXPECT_EQ(mesh.group_of(r, std::string("tp")), tp[static_cast<std::size_t>(coord[0])]);
    EXPECT_EQ(mesh.group_of(r, std::string("dp")), dp[static_cast<std::size_t>(coord[1])]);
  }
  EXPECT_NE(mesh, DeviceMesh::init({2, h}, Names{"dp", "tp"}));
}

TEST(FromRanks, ExplicitPermutation2x2) {
  const auto mesh = DeviceMesh::from_ranks({2, 2}, {3, 1, 2, 0}, Names{"a", "b"});
  EXPECT_EQ(rows(mesh.groups("a")), (Rows{{3, 2}, {1, 0}}));
  EXPECT_EQ(rows(mesh.groups("b")), (Rows{{3, 1}, {2, 0}}));
  EXPECT_EQ(mesh.coordinate(3), (Ranks{0, 0}));
  EXPECT_EQ(mesh.coordinate(0), (Ranks{1, 1}));
  EXPECT_EQ(mesh.local_rank(0, std::string("a")), 1);
  EXPECT_EQ(mesh.local_rank(1, std::string("a")), 0);
  EXPECT_EQ(mesh.slice({"b"}).instance_of(2), tensor({1, 2}, {2, 0}));
  EXPECT_EQ(mesh.slice({"a"}).instance_of(1), tensor({1, 2}, {1, 0}));
}

// A subset of a world: world defaults to max(N, largest rank + 1); the missing ranks are non-members.
TEST_P(InitWorld, SubsetOfAWorld) {
  const std::int64_t w = GetParam();
  Ranks ranks;
  for (std::int64_t r = 1; r < w; r += 2) ranks.push_back(r);  // the odd ranks
  const auto n = static_cast<std::int64_t>(ranks.size());
  const auto mesh = DeviceMesh::from_ranks({2, n / 2}, ranks, Names{"x", "y"});
  EXPECT_EQ(mesh.world(), w);
  EXPECT_EQ(DeviceMesh::from_ranks({2, n / 2}, ranks, Names{"x", "y"}, 2 * w).world(), 2 * w);
  const auto y = mesh.slice({"y"});
  for (std::int64_t r = 0; r < w; ++r) {
    SCOPED_TRACE(r);
    EXPECT_EQ(mesh.contains(r), r % 2 == 1);
    EXPECT_EQ(y.contains(r), r % 2 == 1);
    if (r % 2 == 1) {
      const std::int64_t pos = r / 2;
      EXPECT_EQ(mesh.coordinate(r), (Ranks{pos / (n / 2), pos % (n / 2)}));
      EXPECT_EQ(mesh.instance_of(r), tensor({1, 2, n / 2}, ranks));
      EXPECT_EQ(y.coordinate(r), Ranks{pos % (n / 2)});
      const auto row = pos / (n / 2);
      EXPECT_EQ(y.instance_of(r).values,
                Ranks(ranks.begin() + row * (n / 2), ranks.begin() + (row + 1) * (n / 2)));
    } else {
      EXPECT_EQ(mesh.coordinate(r), std::nullopt);
      EXPECT_EQ(y.coordinate(r), std::nullopt);
      // One instance: every rank sees it (PyTorch's `mesh`); a slice with two instances has none for it.
      EXPECT_EQ(mesh.instance_of(r), tensor({1, 2, n / 2}, ranks));
      EXPECT_MESH_ERROR(y.instance_of(r), ErrorKind::RuntimeError, "rank " + std::to_string(r) + " is not part of");
      EXPECT_MESH_ERROR(mesh.group_of(r, std::string("x")), ErrorKind::RuntimeError, "is not part of");
    }
  }
}

TEST(FromRanks, SparseRanks) {
  const auto mesh = DeviceMesh::from_ranks({2}, {1000000, 7}, Names{"dp"});
  EXPECT_EQ(mesh.world(), 1000001);
  EXPECT_EQ(mesh.coordinate(7), Ranks{1});
  EXPECT_EQ(mesh.coordinate(8), std::nullopt);
  EXPECT_EQ(mesh.group_of(1000000, std::int64_t{0}), (Ranks{1000000, 7}));
}

}  // namespace
