// Megatron-LM RankGenerator: order strings, the mesh they equal, rank groups and validation messages.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "meshloom/error.hpp"
#include "meshloom/presets/presets.hpp"

#include "presets_test_support.hpp"

namespace meshloom {
namespace {

using Groups = std::vector<std::vector<std::int64_t>>;

using meshloom::testing::expect_error;

// Groups of a row-major mesh along the axes `group_axes` (in mesh order): groups enumerated over the other
// axes in row-major order (last fastest), ranks inside a group over `group_axes` in row-major order.
Groups mesh_groups(const std::vector<std::int64_t>& shape, const std::vector<std::size_t>& group_axes) {
  const std::size_t n = shape.size();
  std::vector<std::int64_t> stride(n, 1);
  for (std::size_t i = n - 1; i-- > 0;) stride[i] = stride[i + 1] * shape[i + 1];
  std::vector<std::size_t> other;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::find(group_axes.begin(), group_axes.end(), i) == group_axes.end()) other.push_back(i);
  }
  // Enumerate a sub-coordinate over `axes` in row-major order; returns the offsets.
  const auto offsets = [&](const std::vector<std::size_t>& axes) {
    std::vector<std::int64_t> out{0};
    for (const std::size_t a : axes) {
      std::vector<std::int64_t> next;
      for (const std::int64_t base : out) {
        for (std::int64_t c = 0; c < shape[a]; ++c) next.push_back(base + c * stride[a]);
      }
      out = std::move(next);
    }
    return out;
  };
  Groups groups;
  for (const std::int64_t base : offsets(other)) {
    std::vector<std::int64_t> g;
    for (const std::int64_t off : offsets(group_axes)) g.push_back(base + off);
    groups.push_back(std::move(g));
  }
  return groups;
}

std::string join_dash(const std::vector<std::string>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i > 0 ? "-" : "") + v[i];
  return s;
}

struct Sizes {
  std::int64_t tp, cp, ep, dp, pp;
  [[nodiscard]] std::int64_t of(const std::string& name) const {
    if (name == "tp") return tp;
    if (name == "cp") return cp;
    if (name == "ep") return ep;
    if (name == "dp") return dp;
    return pp;
  }
};

void check_all_permutations(const Sizes& s) {
  std::vector<std::string> perm{"cp", "dp", "ep", "pp", "tp"};  // sorted for next_permutation
  int count = 0;
  do {
    ++count;
    const std::string order = join_dash(perm);
    const MegatronConfig c{s.tp, s.cp, s.ep, s.dp, s.pp, s.tp * s.cp * s.ep * s.dp * s.pp, order, 0};
    // The mesh is the order reversed.
    std::vector<std::int64_t> shape;
    std::vector<std::string> names(perm.rbegin(), perm.rend());
    for (const auto& name : names) shape.push_back(s.of(name));
    const MeshSpec m = megatron_mesh(c);
    ASSERT_EQ(m.shape, shape) << order;
    ASSERT_EQ(m.names, names) << order;
    EXPECT_EQ(megatron_order(c), perm);
    // Every single-name query equals the mesh axis' groups.
    for (std::size_t a = 0; a < names.size(); ++a) {
      EXPECT_EQ(megatron_rank_groups(c, names[a]), mesh_groups(shape, {a})) << order << " query " << names[a];
    }
    // Every two-name query equals the groups of its axes flattened in mesh order.
    for (std::size_t a = 0; a < names.size(); ++a) {
      for (std::size_t b = 0; b < names.size(); ++b) {
        if (a == b) continue;
        const std::string query = names[a] + "-" + names[b];
        const FlattenSpec f = megatron_flatten(c, query);
        EXPECT_EQ(f.axes, (std::vector<std::string>{names[std::min(a, b)], names[std::max(a, b)]}));
        EXPECT_EQ(megatron_rank_groups(c, query), mesh_groups(shape, {std::min(a, b), std::max(a, b)}))
            << order << " query " << query;
      }
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
  EXPECT_EQ(count, 120);
}

TEST(Megatron, AllPermutationsWithCp) { check_all_permutations(Sizes{2, 3, 1, 4, 5}); }
TEST(Megatron, AllPermutationsWithEp) { check_all_permutations(Sizes{2, 1, 3, 4, 5}); }

TEST(Megatron, DefaultOrderMesh) {
  const MegatronConfig c{.tp = 8, .dp = 4, .pp = 2, .world_size = 64};
  EXPECT_EQ(megatron_mesh(c), (MeshSpec{{2, 4, 1, 1, 8}, {"pp", "dp", "ep", "cp", "tp"}, {}}));
}

TEST(Megatron, InitializeModelParallelDocstring) {
  // 16 GPUs, tp=2, pp=4 (dp=2): tp groups [g0,g1],...; pp groups [g0,g4,g8,g12],...; dp groups [g0,g2],[g1,g3],
  // [g4,g6],...
  const MegatronConfig c{.tp = 2, .pp = 4, .world_size = 16};
  EXPECT_EQ(megatron_rank_groups(c, "tp"),
            (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}}));
  EXPECT_EQ(megatron_rank_groups(c, "pp"), (Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}}));
  EXPECT_EQ(megatron_rank_groups(c, "dp"),
            (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}}));
}

TEST(Megatron, GenerateMaskedOrthogonalRankGroupsDocstring) {
  // parallel_size [tp, dp, pp] = [2, 3, 4], mask dp: dp_group[0] = [0, 2, 4], [1] = [1, 3, 5], [7] = [19, 21, 23].
  const MegatronConfig c{.tp = 2, .dp = 3, .pp = 4, .world_size = 24, .order = "tp-dp-pp"};
  const Groups g = megatron_rank_groups(c, "dp");
  ASSERT_EQ(g.size(), 8U);
  EXPECT_EQ(g[0], (std::vector<std::int64_t>{0, 2, 4}));
  EXPECT_EQ(g[1], (std::vector<std::int64_t>{1, 3, 5}));
  EXPECT_EQ(g[7], (std::vector<std::int64_t>{19, 21, 23}));
  // "tp-pp-dp", 2-2-2: dp groups [[0, 4], [1, 5], [2, 6], [3, 7]].
  const MegatronConfig d{.tp = 2, .dp = 2, .pp = 2, .world_size = 8, .order = "tp-pp-dp"};
  EXPECT_EQ(megatron_rank_groups(d, "dp"), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
}

TEST(Megatron, RankOffsetAndQueryOrder) {
  const MegatronConfig c{.tp = 2, .dp = 2, .world_size = 4, .rank_offset = 8};
  EXPECT_EQ(megatron_rank_groups(c, "dp"), (Groups{{8, 10}, {9, 11}}));
  // A query's names are taken in order-string order, whatever order they are written in.
  const MegatronConfig d{.tp = 2, .dp = 2, .pp = 2, .world_size = 8};
  EXPECT_EQ(megatron_rank_groups(d, "dp-tp"), megatron_rank_groups(d, "tp-dp"));
  EXPECT_EQ(megatron_flatten(d, "dp-tp"), (FlattenSpec{"dp_tp", {"dp", "tp"}}));
}

TEST(Megatron, OrderCompletionAndCase) {
  const MegatronConfig c{.tp = 2, .dp = 4, .world_size = 8, .order = "TP-DP"};
  EXPECT_EQ(megatron_order(c), (std::vector<std::string>{"tp", "dp", "pp", "ep", "cp"}));
  EXPECT_EQ(megatron_mesh(c).names, (std::vector<std::string>{"cp", "ep", "pp", "dp", "tp"}));
}

TEST(Megatron, ValidationMessages) {
  expect_error([] { (void)megatron_mesh(MegatronConfig{.tp = 2, .cp = 2, .ep = 2, .world_size = 8}); },
               ErrorKind::ValueError,
               "Both EP and CP > 1 in not allow in one rank generator. CP is only included in default "
               "RankGenerator, and EP only in expert RankGenerator.");
  expect_error([] { (void)megatron_mesh(MegatronConfig{.tp = 4, .pp = 2, .world_size = 12}); },
               ErrorKind::RuntimeError, "world_size (12) is not divisible by 8");
  expect_error([] { (void)megatron_mesh(MegatronConfig{.tp = 2, .ep = 4, .world_size = 12}); },
               ErrorKind::RuntimeError,
               "world_size (12) is not divisible by expert_tensor_model_pipeline_parallel size (8)");
  expect_error([] { (void)megatron_mesh(MegatronConfig{.tp = 2, .dp = 4, .world_size = 16}); },
               ErrorKind::ValueError, "world_size (16) does not equal tp (2) * cp (1) * ep (1) * dp (4) * pp (1) = 8");
  expect_error([] { (void)megatron_mesh(MegatronConfig{.tp = 2, .dp = 4, .world_size = 8, .order = "tp-pp"}); },
               ErrorKind::RuntimeError, "The size of (dp) is (4), but you haven't specified the order (tp-pp).");
  expect_error([] { (void)megatron_mesh(MegatronConfig{.tp = 2, .dp = 4, .world_size = 8, .order = "tp-sp-dp"}); },
               ErrorKind::KeyError, "Unknown parallelism 'sp' in order 'tp-sp-dp'; expected names from tp, cp, ep, dp, pp");
  expect_error([] { (void)megatron_mesh(MegatronConfig{.tp = 2, .dp = 4, .world_size = 8, .order = "tp-tp-dp"}); },
               ErrorKind::ValueError, "Parallelism 'tp' appears twice in order 'tp-tp-dp'");
  expect_error([] { (void)megatron_mesh(MegatronConfig{.tp = 0, .world_size = 8}); }, ErrorKind::ValueError,
               "Parallelism sizes must be >= 1, got tp=0");
  // Products past 64 bits (they wrapped to 0, then divided the world by it).
  expect_error([] { (void)megatron_mesh(MegatronConfig{.tp = 4294967296, .pp = 4294967296, .world_size = 8}); },
               ErrorKind::ValueError,
               "tp(4294967296) * pp(4294967296) * cp(1) * ep(1) overflows a 64-bit integer; WORLD_SIZE is 8");
  expect_error([] { (void)megatron_mesh(MegatronConfig{.tp = 2, .dp = 4611686018427387904, .world_size = 8}); },
               ErrorKind::ValueError,
               "world_size (8) does not equal tp (2) * cp (1) * ep (1) * dp (4611686018427387904) * pp (1) = more than a "
               "64-bit integer holds");
  expect_error([] { (void)megatron_rank_groups(MegatronConfig{.tp = 2, .world_size = 8}, "tp-sp"); },
               ErrorKind::ValueError, "'sp' is not in list");
}

}  // namespace
}  // namespace meshloom
