// coalesce and filter: the same function on as few leaves as possible.
#include <gtest/gtest.h>

#include "meshloom/layout/layout.hpp"
#include "random_layouts.hpp"

namespace meshloom {
namespace {

Layout L(const char* text) { return parse_layout(text); }

TEST(Coalesce, ReferenceExamples) {
  EXPECT_EQ(coalesce(L("(2,4):(4,1)")), L("8:1"));  // int-shaped, not (8,):(1,)
  EXPECT_EQ(coalesce(L("(2,1,4):(4,7,1)")), L("8:1"));
  EXPECT_EQ(coalesce(L("(2,4):(1,2)")), L("(2,4):(1,2)"));
  EXPECT_EQ(coalesce(L("(1,1):(3,5)")), L("1:0"));  // all size 1
  EXPECT_EQ(coalesce(L("():()")), L("1:0"));
  EXPECT_EQ(coalesce(L("((2,2),4):((8,4),1)")), L("16:1"));  // nesting is lost
  EXPECT_EQ(coalesce(L("((2,2),4):((8,1),2)")), L("(2,2,4):(8,1,2)"));
  EXPECT_EQ(coalesce(L("(2,2,2):(4,2,1)")), L("8:1"));
  EXPECT_EQ(coalesce(L("(4,):(1,)")), L("4:1"));
  EXPECT_EQ(coalesce(L("(2,3):(0,0)")), L("6:0"));
  EXPECT_EQ(coalesce(L("(3,2,2):(2,3,1)")), L("(3,2,2):(2,3,1)"));
}

TEST(Filter, ReferenceExamples) {
  EXPECT_EQ(filter(L("(2,3):(0,1)")), L("3:1"));
  EXPECT_EQ(filter(L("(2,1,4):(4,7,1)")), L("8:1"));
  EXPECT_EQ(filter(L("(2,3):(0,0)")), L("1:0"));
  EXPECT_EQ(filter(L("(1,1):(3,5)")), L("1:0"));
  EXPECT_EQ(filter(L("(2,3,4):(12,0,1)")), L("(2,4):(12,1)"));
  EXPECT_EQ(filter(L("(2,3,4):(4,0,1)")), L("8:1"));  // dropping the broadcast mode lets the others merge
}

// Could leaves a (left) and b (right, faster) be merged into one leaf?
bool mergeable(const Leaf& a, const Leaf& b) { return a.size == 1 || b.size == 1 || a.stride == b.size * b.stride; }

void expect_coalesced_form(const Layout& c, const Layout& original) {
  const auto ls = leaves(c);
  // Flat: an int when one leaf remains, otherwise a flat tuple.
  if (ls.size() == 1) {
    ASSERT_TRUE(c.shape().is_int()) << original << " -> " << c;
  } else {
    ASSERT_EQ(c.shape(), IntTuple::from_ints(flatten(c.shape()))) << original << " -> " << c;
  }
  if (ls.size() == 1 && ls[0].size == 1) {
    ASSERT_EQ(c, Layout()) << original;
    return;
  }
  for (std::size_t k = 0; k + 1 < ls.size(); ++k) {
    ASSERT_FALSE(mergeable(ls[k], ls[k + 1])) << original << " -> " << c << ": leaves " << k << " and " << k + 1;
  }
}

TEST(Coalesce, SameFunctionFewestLeavesRandom) {
  testing::LayoutGen gen(301);
  for (int n = 0; n < 2 * testing::kRandomCases; ++n) {
    const Layout l = n % 2 == 0 ? gen.arbitrary() : gen.permuted_compact();
    const Layout c = coalesce(l);
    ASSERT_EQ(size(c), size(l)) << l << " -> " << c;
    for (std::int64_t i = 0; i < size(l); ++i) ASSERT_EQ(c(i), l(i)) << l << " -> " << c << " at " << i;
    expect_coalesced_form(c, l);
    ASSERT_EQ(coalesce(c), c) << l;  // idempotent
    ASSERT_LE(leaves(c).size(), leaves(l).size());
  }
}

TEST(Coalesce, CompactLayoutsBecomeOneLeafRandom) {
  testing::LayoutGen gen(302);
  for (int n = 0; n < testing::kRandomCases; ++n) {
    const Layout l = gen.compact();
    const Layout expected = size(l) == 1 ? Layout() : Layout(IntTuple(size(l)), IntTuple(1));
    ASSERT_EQ(coalesce(l), expected) << l;
  }
}

// filter(L): no size-1 or stride-0 leaves, coalesced, and it enumerates L's offsets with the broadcast (stride-0)
// modes removed: the distinct values of L in the same order of first appearance.
TEST(Filter, DropsTrivialLeavesRandom) {
  testing::LayoutGen gen(303);
  for (int n = 0; n < testing::kRandomCases; ++n) {
    const Layout l = gen.arbitrary();
    const Layout f = filter(l);
    std::vector<Leaf> kept;
    for (const auto& leaf : leaves(l)) {
      if (leaf.size > 1 && leaf.stride > 0) kept.push_back(leaf);
    }
    const auto expected = testing::reference_offsets(kept);
    ASSERT_EQ(size(f), static_cast<std::int64_t>(expected.size())) << l << " -> " << f;
    for (std::int64_t i = 0; i < size(f); ++i) {
      ASSERT_EQ(f(i), expected[static_cast<std::size_t>(i)]) << l << " -> " << f << " at " << i;
    }
    expect_coalesced_form(f, l);
    if (f != Layout()) {
      for (const auto& leaf : leaves(f)) {
        ASSERT_GT(leaf.size, 1) << l << " -> " << f;
        ASSERT_GT(leaf.stride, 0) << l << " -> " << f;
      }
    }
    ASSERT_EQ(filter(f), f);
  }
}

}  // namespace
}  // namespace meshloom
