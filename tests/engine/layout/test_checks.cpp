// is_injective, is_orthogonal, is_sorted: the overlap checks a mesh layout must pass.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "meshloom/layout/layout.hpp"
#include "random_layouts.hpp"

namespace meshloom {
namespace {

Layout L(const char* text) { return parse_layout(text); }

TEST(IsInjective, ReferenceExamples) {
  EXPECT_TRUE(is_injective(L("(3,2):(2,3)")));
  EXPECT_FALSE(is_injective(L("(2,2):(1,1)")));
  EXPECT_TRUE(is_injective(L("(2,4):(4,1)")));
  EXPECT_TRUE(is_injective(L("4:2")));
  EXPECT_FALSE(is_injective(L("(2,3):(0,1)")));
  EXPECT_TRUE(is_injective(L("(1,3):(0,1)")));  // a size-1 leaf never repeats an offset
  EXPECT_TRUE(is_injective(L("1:0")));
}

TEST(IsOrthogonal, ReferenceExamples) {
  EXPECT_FALSE(is_orthogonal(L("(3,2):(2,3)")));  // injective, but not orthogonal
  EXPECT_TRUE(is_orthogonal(L("(2,4):(4,1)")));
  EXPECT_TRUE(is_orthogonal(L("(2,4):(1,2)")));
  EXPECT_TRUE(is_orthogonal(L("(2,2):(8,1)")));  // gaps are fine
  EXPECT_FALSE(is_orthogonal(L("(2,2):(1,1)")));
  EXPECT_FALSE(is_orthogonal(L("(2,2):(3,2)")));
  EXPECT_TRUE(is_orthogonal(L("4:0")));  // a single leaf always passes, even a stride-0 one
  EXPECT_TRUE(is_orthogonal(L("(1,4):(5,0)")));
  EXPECT_FALSE(is_orthogonal(L("(2,4):(0,1)")));
}

TEST(IsSorted, ReferenceExamples) {
  EXPECT_TRUE(is_sorted(L("(2,4):(4,1)")));
  EXPECT_FALSE(is_sorted(L("(2,4):(1,2)")));
  EXPECT_TRUE(is_sorted(L("(2,2):(8,1)")));
  EXPECT_TRUE(is_sorted(L("(2,1,2):(8,1,1)")));  // the size-1 leaf does not count
  EXPECT_TRUE(is_sorted(L("(2,2):(2,2)")));      // non-increasing, not strictly decreasing
  EXPECT_TRUE(is_sorted(L("8:1")));
  EXPECT_TRUE(is_sorted(L("(2,(2,2)):(4,(2,1))")));
  EXPECT_FALSE(is_sorted(L("((2,2),2):((1,4),2)")));
}

// is_injective agrees with the definition: all L(i) distinct.
TEST(IsInjective, MatchesDefinitionRandom) {
  testing::LayoutGen gen(901);
  int injective = 0;
  for (int n = 0; n < 2 * testing::kRandomCases; ++n) {
    const Layout l = gen.arbitrary();
    const auto offsets = testing::reference_offsets(l);
    const std::set<std::int64_t> distinct(offsets.begin(), offsets.end());
    const bool expected = distinct.size() == offsets.size();
    ASSERT_EQ(is_injective(l), expected) << l;
    injective += expected ? 1 : 0;
  }
  EXPECT_GT(injective, testing::kRandomCases / 4);
  for (int n = 0; n < testing::kRandomCases; ++n) {
    ASSERT_TRUE(is_injective(gen.permuted_compact()));
    ASSERT_TRUE(is_injective(gen.sub_layout()));
  }
}

// Orthogonal: the coalesced leaves, sorted by stride, nest like the digits of a mixed radix (with gaps). That
// implies injective; permutations of compact layouts and their sub-layouts are orthogonal.
TEST(IsOrthogonal, MatchesDefinitionRandom) {
  testing::LayoutGen gen(902);
  int orthogonal = 0;
  int not_orthogonal = 0;
  for (int n = 0; n < 2 * testing::kRandomCases; ++n) {
    // Arbitrary layouts, and sub-layouts (orthogonal) with one stride nudged by -1..+1 (mostly not).
    Layout l = gen.arbitrary();
    if (n % 2 == 1) {
      auto nudged = leaves(gen.sub_layout());
      auto& leaf = nudged[static_cast<std::size_t>(gen.uniform(0, static_cast<std::int64_t>(nudged.size()) - 1))];
      leaf.stride = std::max<std::int64_t>(0, leaf.stride + gen.uniform(-1, 1));
      l = gen.nested(nudged);
    }
    auto ls = leaves(coalesce(l));
    std::erase_if(ls, [](const Leaf& leaf) { return leaf.size == 1; });
    std::sort(ls.begin(), ls.end(), [](const Leaf& a, const Leaf& b) { return a.stride < b.stride; });
    bool expected = true;
    // Every leaf starts at or past the end of the one below, at a multiple of that end.
    for (std::size_t k = 1; k < ls.size(); ++k) {
      const std::int64_t end = ls[k - 1].size * ls[k - 1].stride;
      if (end == 0 || ls[k].stride < end || ls[k].stride % end != 0) expected = false;
    }
    ASSERT_EQ(is_orthogonal(l), expected) << l;
    if (expected && ls.size() > 1) {
      ++orthogonal;
      ASSERT_TRUE(is_injective(l)) << l;
    }
    not_orthogonal += expected ? 0 : 1;
  }
  EXPECT_GT(orthogonal, testing::kRandomCases / 4);
  EXPECT_GT(not_orthogonal, testing::kRandomCases / 4);
  for (int n = 0; n < testing::kRandomCases; ++n) {
    const Layout p = gen.permuted_compact();
    ASSERT_TRUE(is_orthogonal(p)) << p;
    const Layout s = gen.sub_layout();
    ASSERT_TRUE(is_orthogonal(s)) << s;
  }
}

// Sorted: the coalesced strides never increase left to right; the compact layouts are sorted, and a permuted
// compact layout is sorted exactly when it coalesces to a single leaf.
TEST(IsSorted, MatchesDefinitionRandom) {
  testing::LayoutGen gen(903);
  for (int n = 0; n < testing::kRandomCases; ++n) {
    const Layout l = gen.arbitrary();
    auto ls = leaves(coalesce(l));
    std::erase_if(ls, [](const Leaf& leaf) { return leaf.size == 1; });
    bool expected = true;
    for (std::size_t k = 1; k < ls.size(); ++k) expected = expected && ls[k - 1].stride >= ls[k].stride;
    ASSERT_EQ(is_sorted(l), expected) << l;

    ASSERT_TRUE(is_sorted(gen.compact()));
    const Layout p = gen.permuted_compact();
    ASSERT_EQ(is_sorted(p), leaves(coalesce(p)).size() == 1) << p;
  }
}

}  // namespace
}  // namespace meshloom
