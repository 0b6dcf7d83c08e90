// right_inverse (L(R(i)) == i for i < size(R)) and left_inverse (R(L(i)) == i for i < size(L)).
#include <gtest/gtest.h>

#include <algorithm>

#include "meshloom/error.hpp"
#include "meshloom/layout/layout.hpp"
#include "random_layouts.hpp"

namespace meshloom {
namespace {

Layout L(const char* text) { return parse_layout(text); }

void expect_right_inverse(const Layout& l, const Layout& expected) {
  const Layout r = right_inverse(l);
  EXPECT_EQ(r, expected) << l;
  for (std::int64_t i = 0; i < size(r); ++i) EXPECT_EQ(l(r(i)), i) << l << " with R = " << r << " at " << i;
}

void expect_left_inverse(const Layout& l, const Layout& expected) {
  const Layout r = left_inverse(l);
  EXPECT_EQ(r, expected) << l;
  for (std::int64_t i = 0; i < size(l); ++i) EXPECT_EQ(r(l(i)), i) << l << " with R = " << r << " at " << i;
}

TEST(RightInverse, ReferenceExamples) {
  expect_right_inverse(L("(2,4):(4,1)"), L("8:1"));
  expect_right_inverse(L("(2,3):(1,2)"), L("(3,2):(1,3)"));
  expect_right_inverse(L("(2,3):(0,1)"), L("1:0"));  // a stride-0 leaf stops the scan
  expect_right_inverse(L("4:0"), L("1:0"));
}

TEST(RightInverse, MoreExamples) {
  expect_right_inverse(L("4:2"), L("1:0"));  // offset 1 is never reached
  expect_right_inverse(L("(2,4):(1,4)"), L("2:4"));  // 0, 1 reached; 2 is not
  expect_right_inverse(L("((2,2),3):((1,6),2)"), L("(6,2):(1,6)"));
  expect_right_inverse(L("(1,4):(7,1)"), L("4:1"));
  expect_right_inverse(L("1:0"), L("1:0"));
  expect_right_inverse(L("(2,2):(1,1)"), L("2:1"));
}

TEST(LeftInverse, ReferenceExamples) {
  expect_left_inverse(L("4:2"), L("(4,2):(1,4)"));  // 0,2,4,6 -> 0,1,2,3
  expect_left_inverse(L("(2,4):(4,1)"), L("8:1"));
  expect_left_inverse(L("(2,3):(1,2)"), L("(3,2):(1,3)"));
}

TEST(LeftInverse, MoreExamples) {
  expect_left_inverse(L("(2,2):(8,2)"), L("(2,2,2,2):(2,8,1,4)"));
  expect_left_inverse(L("(2,2):(4,1)"), L("(2,2,2):(2,4,1)"));
  EXPECT_THROW((void)left_inverse(L("(3,2):(2,3)")), Error);  // injective, but no complement
}

// Any layout: R is a right inverse on all of [0, size(R)).
TEST(RightInverse, EveryIndexRandom) {
  testing::LayoutGen gen(601);
  for (int n = 0; n < 2 * testing::kRandomCases; ++n) {
    const Layout l = n % 2 == 0 ? gen.arbitrary() : gen.sub_layout();
    const Layout r = right_inverse(l);
    for (std::int64_t i = 0; i < size(r); ++i) ASSERT_EQ(l(r(i)), i) << l << " with R = " << r << " at " << i;
    ASSERT_EQ(coalesce(r), r) << l;
  }
}

// A bijection onto [0, size) has a right inverse of full size that is also its left inverse.
TEST(RightInverse, OfABijectionIsItsInverseRandom) {
  testing::LayoutGen gen(602);
  for (int n = 0; n < testing::kRandomCases; ++n) {
    const Layout l = gen.permuted_compact();
    const Layout r = right_inverse(l);
    ASSERT_EQ(size(r), size(l)) << l << " with R = " << r;
    for (std::int64_t i = 0; i < size(l); ++i) {
      ASSERT_EQ(l(r(i)), i) << l << " with R = " << r << " at " << i;
      ASSERT_EQ(r(l(i)), i) << l << " with R = " << r << " at " << i;
    }
  }
}

// As large as possible: the size of R is the length of the run 0, 1, 2, ... of offsets that L reaches.
TEST(RightInverse, IsAsLargeAsPossibleRandom) {
  testing::LayoutGen gen(603);
  for (int n = 0; n < testing::kRandomCases; ++n) {
    const Layout l = n % 2 == 0 ? gen.sub_layout() : gen.permuted_compact();
    const Layout r = right_inverse(l);
    const auto offsets = testing::reference_offsets(l);
    std::int64_t reached = 0;
    while (std::find(offsets.begin(), offsets.end(), reached) != offsets.end()) ++reached;
    ASSERT_EQ(size(r), reached) << l << " with R = " << r;
  }
}

// Injective layouts with a complement (sub-layouts of permuted compact layouts): R(L(i)) == i everywhere.
TEST(LeftInverse, EveryIndexRandom) {
  testing::LayoutGen gen(604);
  for (int n = 0; n < testing::kRandomCases; ++n) {
    const Layout l = n % 3 == 0 ? gen.permuted_compact() : gen.sub_layout();
    const Layout r = left_inverse(l);
    for (std::int64_t i = 0; i < size(l); ++i) ASSERT_EQ(r(l(i)), i) << l << " with R = " << r << " at " << i;
    // Defined on all of L's span (the largest size * stride), holes included.
    std::int64_t span = 1;
    for (const auto& leaf : leaves(l)) span = std::max(span, leaf.size * leaf.stride);
    ASSERT_EQ(size(r), span) << l << " with R = " << r;
  }
}

}  // namespace
}  // namespace meshloom
