// Enumerations and per-rank views of a DeviceMesh: groups(axis) (PyTorch's get_group / get_all_groups rank lists),
// instances() (remap_to_tensor), instance_of(rank) (the `mesh` property on that rank), group_of(rank, axis),
// coordinate(rank) (get_coordinate), local_rank(rank, axis) (get_local_rank) and contains(rank), for every
// rank of worlds 4 and 8. Ported from PyTorch's test/distributed/test_device_mesh.py (DeviceMeshTest,
// DeviceMeshTestNDim, TestMeshEnv) and checked against a naive model (row-major index arithmetic on the root
// rank tensor). PyTorch runs each test once per rank; here each test loops over every rank.
//
// Not ported: DeviceMeshCollectiveTest.* (collectives need process groups and devices), the ProcessGroup
// identity checks of test_get_group_and_get_all_groups (ported as equality of the rank lists),
// test_device_mesh_init_backend's "process groups not initialized!" (no process groups),
// test_mesh_slice_fake_tensor_mode (FakeTensorMode), TestMeshEnv._get_root_mesh_dim / _get_mesh_dim_by_name
// (private helpers with no engine counterpart; the name lookup is exercised through groups(name)),
// CuTeLayoutTest / ProcessGroupOpaqueTypeTest (layout algebra and torch.compile; tests/engine/layout covers
// the algebra).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "meshloom/error.hpp"
#include "meshloom/mesh/device_mesh.hpp"

#include "mesh_test_support.hpp"

namespace {

using namespace meshloom::testing;

// Every per-rank and whole view of `mesh` (a root or an ascending slice of it, `keep` = the root axes it holds)
// against the naive projection of the root rank tensor (`shape`, `values`).
void check_views(const DeviceMesh& mesh, const Ranks& shape, const Ranks& values, const std::vector<std::size_t>& keep) {
  const RankTensor expected_instances = project(shape, values, keep);
  EXPECT_EQ(mesh.instances(), expected_instances);
  const auto n_axes = keep.size();
  std::vector<RankTensor> expected_groups;
  for (std::size_t k = 0; k < n_axes; ++k) {
    expected_groups.push_back(project(shape, values, {keep[k]}));
    EXPECT_EQ(mesh.groups(static_cast<std::int64_t>(k)), expected_groups.back()) << "axis " << k;
    EXPECT_EQ(mesh.groups(static_cast<std::int64_t>(k) - static_cast<std::int64_t>(n_axes)), expected_groups.back());
    if (mesh.names()) { EXPECT_EQ(mesh.groups((*mesh.names())[k]), expected_groups.back()); }
  }
  const std::set<std::int64_t> members(values.begin(), values.end());
  for (std::int64_t r = 0; r < mesh.world(); ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const bool member = members.count(r) > 0;
    EXPECT_EQ(mesh.contains(r), member);
    if (!member) {
      EXPECT_EQ(mesh.coordinate(r), std::nullopt);
      if (expected_instances.shape[0] == 1) {
        EXPECT_EQ(mesh.instance_of(r), expected_instances);
      } else {
        EXPECT_MESH_ERROR(mesh.instance_of(r), ErrorKind::RuntimeError,
                          "In order to get the mesh Tensor of a DeviceMesh it needs to either have all its original "
                          "dimensions (e.g., no slicing) or it needs to contain the local rank",
                          "rank " + std::to_string(r) + " is not part of");
      }
      for (std::size_t k = 0; k < n_axes; ++k) {
        EXPECT_MESH_ERROR(mesh.group_of(r, static_cast<std::int64_t>(k)), ErrorKind::RuntimeError, "is not part of");
        EXPECT_MESH_ERROR(mesh.local_rank(r, AxisRef(static_cast<std::int64_t>(k))), ErrorKind::RuntimeError,
                          "is not part of");
      }
      continue;
    }
    const auto inst = row_holding(expected_instances, r);
    ASSERT_TRUE(inst.has_value());
    EXPECT_EQ(mesh.instance_of(r), *inst);
    const auto coord = mesh.coordinate(r);
    ASSERT_TRUE(coord.has_value());
    ASSERT_EQ(coord->size(), n_axes);
    Ranks sizes(expected_instances.shape.begin() + 1, expected_instances.shape.end());
    std::int64_t flat = 0;
    for (std::size_t k = 0; k < n_axes; ++k) flat = flat * sizes[k] + (*coord)[k];
    EXPECT_EQ(inst->values[static_cast<std::size_t>(flat)], r);  // the coordinate indexes the rank
    for (std::size_t k = 0; k < n_axes; ++k) {
      const auto g = row_holding(expected_groups[k], r);
      ASSERT_TRUE(g.has_value());
      const auto group = mesh.group_of(r, static_cast<std::int64_t>(k));
      EXPECT_EQ(group, g->values);
      const auto pos = std::find(group.begin(), group.end(), r) - group.begin();
      EXPECT_EQ(mesh.local_rank(r, AxisRef(static_cast<std::int64_t>(k))), pos);
      EXPECT_EQ(pos, (*coord)[k]);  // for own axes the local rank is the coordinate
      if (mesh.names()) {
        EXPECT_EQ(mesh.group_of(r, (*mesh.names())[k]), group);
        EXPECT_EQ(mesh.local_rank(r, AxisRef((*mesh.names())[k])), pos);
      }
    }
    if (n_axes == 1) { EXPECT_EQ(mesh.local_rank(r), (*coord)[0]); }
  }
}

struct Case {
  Ranks shape;
  bool permuted;
};

class GroupsWorld : public ::testing::TestWithParam<std::int64_t> {};
INSTANTIATE_TEST_SUITE_P(World, GroupsWorld, ::testing::Values(4, 8));

std::vector<Ranks> shapes_for(std::int64_t w) {
  if (w == 4) return {{4}, {2, 2}, {4, 1}, {1, 2, 2}, {1, 4}};
  return {{8}, {2, 4}, {4, 2}, {2, 2, 2}, {2, 4, 1}, {1, 8}, {2, 1, 2, 2}};
}

// Every root shape of the world, identity or a fixed permutation, and every ascending slice of it.
TEST_P(GroupsWorld, EveryAscendingSliceMatchesTheNaiveModel) {
  const std::int64_t w = GetParam();
  for (const bool permuted : {false, true}) {
    for (const auto& shape : shapes_for(w)) {
      Ranks values = iota(w);
      if (permuted) {
        for (std::size_t i = 0; i < values.size(); ++i) values[i] = (static_cast<std::int64_t>(i) * 3 + 1) % w;
        if (w == 4) values = {2, 0, 3, 1};
      }
      Names names;
      for (std::size_t i = 0; i < shape.size(); ++i) names.push_back("d" + std::to_string(i));
      const auto root = DeviceMesh::from_ranks(shape, values, names);
      SCOPED_TRACE(root.repr() + (permuted ? " permuted" : ""));
      const auto nd = shape.size();
      for (std::uint32_t mask = 1; mask < (1u << nd); ++mask) {
        std::vector<std::size_t> keep;
        Names sub;
        for (std::size_t d = 0; d < nd; ++d) {
          if (mask & (1u << d)) {
            keep.push_back(d);
            sub.push_back(names[d]);
          }
        }
        SCOPED_TRACE(::testing::PrintToString(sub));
        check_views(root.slice(sub), shape, values, keep);
      }
    }
  }
}

// A mesh smaller than the world, and a subset of the world: non-members everywhere.
TEST_P(GroupsWorld, NonMembers) {
  const std::int64_t w = GetParam();
  const auto small = DeviceMesh::init({2, w / 4}, Names{"a", "b"}, w);
  check_views(small, {2, w / 4}, iota(w / 2), {0, 1});
  check_views(small.slice({"b"}), {2, w / 4}, iota(w / 2), {1});
  Ranks evens;
  for (std::int64_t r = 0; r < w; r += 2) evens.push_back(r);
  const auto sub = DeviceMesh::from_ranks({2, w / 4}, evens, Names{"a", "b"}, w);
  check_views(sub, {2, w / 4}, evens, {0, 1});
  check_views(sub.slice({"a"}), {2, w / 4}, evens, {0});
}

// test_device_mesh_2d: DeviceMesh(arange(4).reshape(2, 2)), unnamed.
TEST(Groups, DeviceMesh2d) {
  const auto mesh = DeviceMesh::from_ranks({2, 2}, iota(4));
  const std::vector<Rows> expected_ranks_by_dim{{{0, 2}, {1, 3}}, {{0, 1}, {2, 3}}};
  for (std::int64_t dim = 0; dim < 2; ++dim) {
    const auto& dim_ranks = expected_ranks_by_dim[static_cast<std::size_t>(dim)];
    EXPECT_EQ(rows(mesh.groups(dim)), dim_ranks);
    EXPECT_EQ(mesh.size(dim), 2);
    for (std::int64_t r = 0; r < 4; ++r) {
      const auto& expected = std::find(dim_ranks[0].begin(), dim_ranks[0].end(), r) != dim_ranks[0].end()
                                 ? dim_ranks[0]
                                 : dim_ranks[1];
      EXPECT_EQ(mesh.group_of(r, dim), expected) << "rank " << r << " dim " << dim;
    }
  }
}

// test_device_mesh_nd: groups of dim d are the rows of mesh.swapdims(-1, d).reshape(-1, 2) (as a set; the
// enumeration order of the newest PyTorch is the complement order, checked exactly above).
TEST(Groups, DeviceMeshNd) {
  const auto mesh = DeviceMesh::from_ranks({2, 2, 2}, iota(8));
  for (std::size_t dim = 0; dim < 3; ++dim) {
    Rows swapped;  // rows of arange(8).reshape(2,2,2).swapdims(-1, dim)
    for (std::int64_t a = 0; a < 2; ++a) {
      for (std::int64_t b = 0; b < 2; ++b) {
        Ranks row;
        for (std::int64_t c = 0; c < 2; ++c) {
          Ranks idx{a, b, c};
          std::swap(idx[2], idx[dim]);
          row.push_back(idx[0] * 4 + idx[1] * 2 + idx[2]);
        }
        swapped.push_back(row);
      }
    }
    const auto groups = rows(mesh.groups(static_cast<std::int64_t>(dim)));
    EXPECT_EQ(std::set<Ranks>(groups.begin(), groups.end()), std::set<Ranks>(swapped.begin(), swapped.end()));
    for (std::int64_t r = 0; r < 8; ++r) {
      for (const auto& row : swapped) {
        if (std::find(row.begin(), row.end(), r) != row.end()) {
          EXPECT_EQ(mesh.group_of(r, static_cast<std::int64_t>(dim)), row) << "rank " << r << " dim " << dim;
        }
      }
    }
  }
}

// test_get_local_rank_3d
TEST(Groups, GetLocalRank3d) {
  const auto mesh_3d = DeviceMesh::init({2, 2, 2}, Names{"dp", "pp", "tp"});
  EXPECT_EQ(rows(mesh_3d.groups("tp")), (Rows{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(rows(mesh_3d.groups("pp")), (Rows{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(rows(mesh_3d.groups("dp")), (Rows{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  for (std::int64_t rank = 0; rank < 8; ++rank) {
    SCOPED_TRACE(rank);
    EXPECT_EQ(mesh_3d.local_rank(rank, std::string("tp")), rank % 2);          // tp_rank_0: [0, 2, 4, 6]
    EXPECT_EQ(mesh_3d.local_rank(rank, std::string("pp")), rank % 4 <= 1 ? 0 : 1);  // pp_rank_0: [0, 1, 4, 5]
    EXPECT_EQ(mesh_3d.local_rank(rank, std::string("dp")), rank / 4);          // dp_rank_0: [0, 1, 2, 3]
  }
}

class LocalRankWorld : public ::testing::TestWithParam<std::int64_t> {};
INSTANTIATE_TEST_SUITE_P(World, LocalRankWorld, ::testing::Values(4, 8));

// test_get_local_rank
TEST_P(LocalRankWorld, GetLocalRank) {
  const std::int64_t w = GetParam();
  const auto mesh_2d = DeviceMesh::init({2, w / 2}, Names{"dp", "tp"});
  const auto dp_mesh = mesh_2d.slice({"dp"});
  const auto tp_mesh = mesh_2d.slice({"tp"});
  const auto flattened_mesh = mesh_2d.slice({"dp", "tp"}).flatten();
  for (std::int64_t rank = 0; rank < w; ++rank) {
    SCOPED_TRACE(rank);
    EXPECT_EQ(mesh_2d.local_rank(rank, std::string("dp")), mesh_2d.local_rank(rank, std::int64_t{0}));
    EXPECT_EQ(mesh_2d.local_rank(rank, std::string("tp")), mesh_2d.local_rank(rank, std::int64_t{1}));
    EXPECT_EQ(dp_mesh.local_rank(rank), mesh_2d.local_rank(rank, std::string("dp")));
    EXPECT_EQ(tp_mesh.local_rank(rank), mesh_2d.local_rank(rank, std::string("tp")));
    EXPECT_EQ(mesh_2d.local_rank(rank, std::string("dp")), rank / (w / 2));
    EXPECT_EQ(mesh_2d.local_rank(rank, std::string("tp")), rank % (w / 2));
    // Verify flattened mesh local rank correctness.
    EXPECT_EQ(flattened_mesh.local_rank(rank), rank);
    EXPECT_EQ(mesh_2d.local_rank(rank, std::string("dp_tp")), rank);  // a flattened name from any mesh of the root
  }
}

// test_get_local_rank_raises_exception
TEST_P(LocalRankWorld, GetLocalRankRaisesException) {
  const std::int64_t w = GetParam();
  const auto mesh_2d = DeviceMesh::init({2, w / 2}, Names{"dp", "tp"});
  for (std::int64_t rank = 0; rank < w; ++rank) {
    EXPECT_MESH_ERROR(mesh_2d.local_rank(rank), ErrorKind::RuntimeError, "Found the DeviceMesh have 2 dimensions",
                      "Optional kwarg `mesh_dim` needs to be specified when device_mesh.ndim > 1.");
  }
}

// test_get_group_and_get_all_groups: the rank lists of get_group by index, by name and of the 1-D slices agree.
TEST_P(LocalRankWorld, GetGroupAndGetAllGroups) {
  const std::int64_t w = GetParam();
  const auto mesh_2d = DeviceMesh::init({2, w / 2}, Names{"dp", "tp"});
  const auto tp_mesh = mesh_2d.slice({"tp"});
  const auto dp_mesh = mesh_2d.slice({"dp"});
  EXPECT_EQ(mesh_2d.groups(std::int64_t{0}), mesh_2d.groups("dp"));
  EXPECT_EQ(mesh_2d.groups(std::int64_t{1}), mesh_2d.groups("tp"));
  EXPECT_EQ(mesh_2d.groups("dp"), dp_mesh.groups(std::int64_t{0}));
  EXPECT_EQ(mesh_2d.groups("tp"), tp_mesh.groups(std::int64_t{0}));
  EXPECT_EQ(mesh_2d.groups("tp"), tp_mesh.instances());  // a 1-D slice's instances are its groups
  for (std::int64_t rank = 0; rank < w; ++rank) {
    EXPECT_EQ(tp_mesh.group_of(rank, std::int64_t{0}), mesh_2d.group_of(rank, std::string("tp")));
    EXPECT_EQ(dp_mesh.group_of(rank, std::int64_t{0}), mesh_2d.group_of(rank, std::string("dp")));
    EXPECT_EQ(tp_mesh.instance_of(rank).values, mesh_2d.group_of(rank, std::string("tp")));
  }
}

// test_get_all_submeshes: one 1-D root per group of the axis.
TEST(Groups, GetAllSubmeshes) {
  const auto mesh_2d = DeviceMesh::init({2, 4}, Names{"replicate", "shard"});
  const auto all = rows(mesh_2d.groups("replicate"));
  ASSERT_EQ(all.size(), 4u);
  for (const auto& g : all) {
    const auto submesh = DeviceMesh::from_ranks({2}, g, Names{"replicate"});
    EXPECT_EQ(submesh.size(), 2);
    EXPECT_EQ(submesh.instances().values, g);
  }
  EXPECT_EQ(all, (Rows{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
}

TEST(Groups, AxisLookupErrors) {
  const auto mesh = DeviceMesh::init({2, 4}, Names{"dp", "tp"});
  EXPECT_MESH_ERROR(mesh.groups("pp"), ErrorKind::KeyError, "Mesh dimension 'pp' does not exist.",
                    "Available mesh dimensions are: mesh_dim_names=('dp', 'tp')");
  EXPECT_MESH_ERROR(mesh.local_rank(0, AxisRef(std::string("pp"))), ErrorKind::KeyError, "'pp' does not exist");
  EXPECT_MESH_ERROR(mesh.groups(std::int64_t{2}), ErrorKind::IndexError, "Dim 2 is out of range",
                    "Expected dim to be in range [-2, 1].");
  EXPECT_MESH_ERROR(mesh.groups(std::int64_t{-3}), ErrorKind::IndexError, "Dim -3 is out of range");
  EXPECT_MESH_ERROR(mesh.size(std::int64_t{5}), ErrorKind::IndexError, "Dim 5");
  const auto unnamed = DeviceMesh::init({2, 4});
  EXPECT_MESH_ERROR(unnamed.groups("dp"), ErrorKind::KeyError, "No `mesh_dim_names` found.");
  EXPECT_EQ(rows(unnamed.groups(std::int64_t{-1})), (Rows{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_MESH_ERROR(mesh.coordinate(8), ErrorKind::ValueError, "rank 8 is out of range for world size 8");
  EXPECT_MESH_ERROR(mesh.instance_of(9), ErrorKind::ValueError, "rank 9 is out of range");
  EXPECT_MESH_ERROR(mesh.group_of(-1, std::int64_t{0}), ErrorKind::ValueError, "rank -1 is out of range");
}

// A transposed mesh (concatenate has no ordering check): coordinates follow its own axis order.
TEST(Groups, TransposedMesh) {
  const auto mesh = DeviceMesh::init({2, 4}, Names{"dp", "tp"});
  const auto t = DeviceMesh::concatenate({mesh.slice({"tp"}), mesh.slice({"dp"})});
  EXPECT_EQ(t.shape(), (Ranks{4, 2}));
  EXPECT_EQ(t.instances(), tensor({1, 4, 2}, {0, 4, 1, 5, 2, 6, 3, 7}));
  for (std::int64_t r = 0; r < 8; ++r) {
    EXPECT_EQ(t.coordinate(r), (Ranks{r % 4, r / 4}));
    EXPECT_EQ(t.local_rank(r, std::string("tp")), r % 4);
    EXPECT_EQ(t.group_of(r, std::string("dp")), mesh.group_of(r, std::string("dp")));
  }
  EXPECT_EQ(t.groups("tp"), mesh.groups("tp"));
}

// The size-1 axes: every rank is its own group.
TEST(Groups, SizeOneAxis) {
  const auto mesh = DeviceMesh::init({2, 1, 2}, Names{"a", "b", "c"});
  EXPECT_EQ(rows(mesh.groups("b")), (Rows{{0}, {1}, {2}, {3}}));
  for (std::int64_t r = 0; r < 4; ++r) {
    EXPECT_EQ(mesh.local_rank(r, std::string("b")), 0);
    EXPECT_EQ(mesh.group_of(r, std::string("b")), Ranks{r});
    EXPECT_EQ(mesh.coordinate(r), (Ranks{r / 2, 0, r % 2}));
  }
  EXPECT_EQ(mesh.slice({"b"}).instances(), tensor({4, 1}, {0, 1, 2, 3}));
}

}  // namespace
