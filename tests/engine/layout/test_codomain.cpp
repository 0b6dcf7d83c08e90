// codomain, for_each_offset, global_ranks and remap: the offsets (ranks) a layout produces.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "meshloom/error.hpp"
#include "meshloom/layout/layout.hpp"
#include "random_layouts.hpp"

namespace meshloom {
namespace {

using V = std::vector<std::int64_t>;
using VV = std::vector<std::vector<std::int64_t>>;

Layout L(const char* text) { return parse_layout(text); }

V iota(std::int64_t n) {
  V v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), std::int64_t{0});
  return v;
}

TEST(Codomain, ReferenceExamples) {
  EXPECT_EQ(codomain(L("(2,3):(3,1)")), iota(6));
  EXPECT_EQ(codomain(L("(2,3):(1,2)")), (V{0, 2, 4, 1, 3, 5}));
  EXPECT_EQ(codomain(L("((2,2),4):((8,1),2)")), (V{0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15}));
  EXPECT_EQ(codomain(L("1:0")), V{0});
  EXPECT_EQ(codomain(L("():()")), V{0});
  EXPECT_EQ(codomain(L("(2,2):(0,1)")), (V{0, 1, 0, 1}));
}

TEST(ForEachOffset, VisitsInLexicographicOrder) {
  V seen;
  for_each_offset({{2, 10}, {3, 1}}, [&seen](std::int64_t o) { seen.push_back(o); });
  EXPECT_EQ(seen, (V{0, 1, 2, 10, 11, 12}));
  seen.clear();
  for_each_offset({}, [&seen](std::int64_t o) { seen.push_back(o); });
  EXPECT_EQ(seen, V{0});
  seen.clear();
  for_each_offset({{1, 5}, {1, 7}}, [&seen](std::int64_t o) { seen.push_back(o); });
  EXPECT_EQ(seen, V{0});
}

// codomain(L)[i] == L(i) at every index, and for_each_offset visits the leaves' offsets in the same order.
TEST(Codomain, EveryIndexRandom) {
  testing::LayoutGen gen(801);
  for (int n = 0; n < testing::kRandomCases; ++n) {
    const Layout l = gen.arbitrary();
    const auto c = codomain(l);
    ASSERT_EQ(static_cast<std::int64_t>(c.size()), size(l)) << l;
    for (std::int64_t i = 0; i < size(l); ++i) ASSERT_EQ(c[static_cast<std::size_t>(i)], l(i)) << l << " at " << i;
    V seen;
    for_each_offset(leaves(l), [&seen](std::int64_t o) { seen.push_back(o); });
    ASSERT_EQ(seen, testing::reference_offsets(l)) << l;
  }
}

TEST(GlobalRanks, ReferenceExamples) {
  EXPECT_EQ(global_ranks(L("4:2"), 8), (VV{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  EXPECT_EQ(global_ranks(L("4:2"), 16), (VV{{0, 2, 4, 6}, {1, 3, 5, 7}, {8, 10, 12, 14}, {9, 11, 13, 15}}));
  // Mesh (2,4): the groups of dim 0 (stride 4) and of dim 1 (stride 1).
  EXPECT_EQ(global_ranks(L("2:4"), 8), (VV{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(global_ranks(L("4:1"), 8), (VV{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(global_ranks(L("(2,4):(4,1)"), 8), (VV{iota(8)}));
}

// Every instance is L shifted by an offset of the complement; together they partition [0, W).
TEST(GlobalRanks, PartitionTheWorldRandom) {
  testing::LayoutGen gen(802);
  for (int n = 0; n < testing::kRandomCases; ++n) {
    const Layout l = n % 2 == 0 ? gen.sub_layout() : gen.permuted_compact();
    std::int64_t span = 1;
    for (const auto& leaf : leaves(l)) span = std::max(span, leaf.size * leaf.stride);
    const std::int64_t w = span * gen.uniform(1, 3);
    const auto groups = global_ranks(l, w);
    const auto offsets = codomain(complement(l, w));
    ASSERT_EQ(groups.size(), offsets.size()) << l;
    V all;
    for (std::size_t k = 0; k < groups.size(); ++k) {
      ASSERT_EQ(static_cast<std::int64_t>(groups[k].size()), size(l)) << l;
      for (std::int64_t i = 0; i < size(l); ++i) {
        ASSERT_EQ(groups[k][static_cast<std::size_t>(i)], offsets[k] + l(i)) << l << " in " << w;
      }
      all.insert(all.end(), groups[k].begin(), groups[k].end());
    }
    std::sort(all.begin(), all.end());
    ASSERT_EQ(all, iota(w)) << l << " in " << w;
    // Instances are listed by their smallest rank.
    for (std::size_t k = 0; k + 1 < groups.size(); ++k) ASSERT_LT(groups[k][0], groups[k + 1][0]) << l;
  }
}

TEST(Remap, ReferenceExamples) {
  EXPECT_EQ(remap(L("(2,2):(2,1)"), {10, 20, 30, 40}), (RankTensor{{1, 2, 2}, {10, 20, 30, 40}}));
  EXPECT_EQ(remap(L("(2,2):(1,2)"), {0, 2, 1, 4}), (RankTensor{{1, 2, 2}, {0, 1, 2, 4}}));
  EXPECT_EQ(remap(L("2:4"), iota(8)), (RankTensor{{4, 2}, {0, 4, 1, 5, 2, 6, 3, 7}}));
  // Nested modes keep their top-level sizes: ((2,2),2) gives instances of shape (4, 2).
  EXPECT_EQ(remap(L("((2,2),2):((4,1),2)"), {7, 6, 5, 4, 3, 2, 1, 0}),
            (RankTensor{{1, 4, 2}, {7, 5, 6, 4, 3, 1, 2, 0}}));
}

void expect_remap_error(const Layout& l, const V& rank_map, const std::string& phrase) {
  try {
    (void)remap(l, rank_map);
    FAIL() << "remap(" << l << ") over " << rank_map.size() << " ranks must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ValueError);
    EXPECT_NE(e.message().find(phrase), std::string::npos) << e.message();
    EXPECT_NE(e.message().find(to_string(l)), std::string::npos) << e.message();
  }
}

TEST(Remap, Errors) {
  expect_remap_error(L("(2,4):(4,1)"), iota(7), "cosize 8");
  expect_remap_error(L("4:2"), iota(6), "cosize 7");
  // cosize 7 fits, but complement(4:2, 9) == (2,2):(8,1) has instances at 8 and 9, the last reading position 15.
  expect_remap_error(L("(2,2):(4,2)"), iota(9), "would read position 15");
}

// Every entry of every instance equals rank_map[offset_k + L(c)], over a random rank map.
TEST(Remap, EveryEntryRandom) {
  testing::LayoutGen gen(803);
  for (int n = 0; n < testing::kRandomCases; ++n) {
    const Layout l = n % 2 == 0 ? gen.sub_layout() : gen.permuted_compact();
    std::int64_t span = 1;
    for (const auto& leaf : leaves(l)) span = std::max(span, leaf.size * leaf.stride);
    const std::int64_t w = span * gen.uniform(1, 3);
    V rank_map = iota(w);
    for (auto& r : rank_map) r = r * 3 + 100;
    std::shuffle(rank_map.begin(), rank_map.end(), gen.engine());
    const RankTensor t = remap(l, rank_map);
    const auto offsets = codomain(complement(l, w));
    V expected_shape{static_cast<std::int64_t>(offsets.size())};
    for (auto s : top_level_sizes(l)) expected_shape.push_back(s);
    ASSERT_EQ(t.shape, expected_shape) << l;
    ASSERT_EQ(static_cast<std::int64_t>(t.values.size()), static_cast<std::int64_t>(offsets.size()) * size(l));
    // Row-major over (instance, top-level coordinate...): entry k * size(l) + i is instance k, L index i.
    for (std::size_t k = 0; k < offsets.size(); ++k) {
      for (std::int64_t i = 0; i < size(l); ++i) {
        const auto at = k * static_cast<std::size_t>(size(l)) + static_cast<std::size_t>(i);
        ASSERT_EQ(t.values[at], rank_map[static_cast<std::size_t>(offsets[k] + l(i))]) << l << " at " << k << ", " << i;
      }
    }
    // Each rank appears exactly once.
    V sorted = t.values;
    std::sort(sorted.begin(), sorted.end());
    V all = rank_map;
    std::sort(all.begin(), all.end());
    ASSERT_EQ(sorted, all) << l;
  }
}

// Any rank map size: remap throws exactly when an instance of complement(L, size of the map) would read past it.
TEST(Remap, ThrowsOrReadsInsideTheMapRandom) {
  testing::LayoutGen gen(804);
  int built = 0;
  int thrown = 0;
  for (int n = 0; n < testing::kRandomCases; ++n) {
    const Layout l = gen.sub_layout();
    std::int64_t span = 1;
    for (const auto& leaf : leaves(l)) span = std::max(span, leaf.size * leaf.stride);
    const std::int64_t w = n % 2 == 0 ? span * gen.uniform(1, 3) + gen.uniform(0, 1) : gen.uniform(1, 3 * span);
    const V rank_map = iota(w);
    const auto offsets = codomain(complement(l, w));
    const bool fits = cosize(l) <= w && offsets.back() + cosize(l) - 1 < w;
    if (!fits) {
      ASSERT_THROW((void)remap(l, rank_map), Error) << l << " over " << w;
      ++thrown;
      continue;
    }
    const RankTensor t = remap(l, rank_map);
    ++built;
    for (std::size_t k = 0; k < offsets.size(); ++k) {
      for (std::int64_t i = 0; i < size(l); ++i) {
        ASSERT_EQ(t.values[k * static_cast<std::size_t>(size(l)) + static_cast<std::size_t>(i)], offsets[k] + l(i));
      }
    }
  }
  EXPECT_GT(built, testing::kRandomCases / 5);
  EXPECT_GT(thrown, testing::kRandomCases / 5);
}

}  // namespace
}  // namespace meshloom
