// crd2idx, idx2crd and Layout::operator(): lexicographic coordinates, the last leaf fastest, indices past the
// size overflowing into the leftmost mode.
#include <gtest/gtest.h>

#include "meshloom/error.hpp"
#include "meshloom/layout/layout.hpp"
#include "random_layouts.hpp"

namespace meshloom {
namespace {

TEST(Crd2Idx, ReferenceExamples) {
  const Layout row_major(tup(2, 4), tup(4, 1));
  EXPECT_EQ(row_major(5), 5);
  const Layout col_major(tup(2, 4), tup(1, 2));
  EXPECT_EQ(col_major(5), 1 * 1 + 1 * 2);
  EXPECT_EQ(col_major(tup(1, 3)), 1 + 6);
  EXPECT_EQ(crd2idx(tup(1, 3), tup(2, 4), tup(1, 2)), 7);
  EXPECT_EQ(crd2idx(IntTuple(6), tup(2, 4), tup(1, 2)), 1 * 1 + 2 * 2);

  // Nested: ((2,2),4):((8,1),2); the int coordinate 13 is (3, 1) at the top level, then (1, 1) inside mode 0.
  const Layout nested(tup(tup(2, 2), 4), tup(tup(8, 1), 2));
  EXPECT_EQ(nested(13), 1 * 8 + 1 * 1 + 1 * 2);
  EXPECT_EQ(nested(tup(3, 1)), 8 + 1 + 2);
  EXPECT_EQ(nested(tup(tup(1, 0), 3)), 8 + 6);

  // The default strides are the suffix product: (2,4) is (2,4):(4,1), (2,2,2) is (2,2,2):(4,2,1).
  EXPECT_EQ(Layout(tup(2, 4)), row_major);
  EXPECT_EQ(Layout(tup(2, 2, 2)), Layout(tup(2, 2, 2), tup(4, 2, 1)));
  EXPECT_EQ(Layout(tup(tup(2, 3), 4)), Layout(tup(tup(2, 3), 4), tup(tup(12, 4), 1)));
  EXPECT_EQ(Layout(IntTuple(2)), Layout(IntTuple(2), IntTuple(1)));
}

TEST(Crd2Idx, IdxToCrdReferenceExamples) {
  EXPECT_EQ(idx2crd(5, tup(2, 4)), tup(1, 1));
  EXPECT_EQ(idx2crd(5, tup(tup(2, 2), 2)), tup(tup(1, 0), 1));
  EXPECT_EQ(idx2crd(3, IntTuple(4)), IntTuple(3));
  EXPECT_EQ(idx2crd(3, tup(4)), tup(3));
  EXPECT_EQ(idx2crd(23, tup(3, 2, 4)), tup(2, 1, 3));
  EXPECT_EQ(idx2crd(0, tup()), tup());
}

TEST(Crd2Idx, IndexOverflowsIntoTheLeftmostMode) {
  // (2,4):(4,1): 9 = (2, 1) with the leftmost coordinate 2 beyond its size.
  EXPECT_EQ(Layout(tup(2, 4), tup(4, 1))(9), 2 * 4 + 1);
  EXPECT_EQ(Layout(tup(2, 4), tup(1, 2))(9), 2 * 1 + 1 * 2);
  // Nested: the overflow lands in the leftmost leaf of the leftmost mode.
  const Layout nested(tup(tup(2, 2), 4), tup(tup(8, 1), 2));
  EXPECT_EQ(nested(16), 2 * 8);
  EXPECT_EQ(nested(tup(5, 0)), 2 * 8 + 1);
  EXPECT_EQ(crd2idx(IntTuple(7), IntTuple(4), IntTuple(3)), 21);
  // An int-shaped layout is linear everywhere.
  EXPECT_EQ(Layout(IntTuple(4), IntTuple(2))(10), 20);
}

TEST(Crd2Idx, MismatchedCoordinateThrows) {
  EXPECT_THROW((void)crd2idx(tup(1, 2, 3), tup(2, 4), tup(4, 1)), Error);
  EXPECT_THROW((void)crd2idx(tup(1, 2), IntTuple(8), IntTuple(1)), Error);
  try {
    (void)Layout(tup(2, 4))(tup(1));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ValueError);
    EXPECT_NE(e.message().find("(1,)"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("(2,4)"), std::string::npos) << e.message();
  }
}

// L(i) at every index equals the definition sum c_k * stride_k over the lexicographic coordinate of i, and
// L(c) at every coordinate (tuple or int at any level) agrees with it.
TEST(Crd2Idx, EveryIndexAndCoordinateRandom) {
  testing::LayoutGen gen(201);
  for (int n = 0; n < testing::kRandomCases; ++n) {
    const Layout l = gen.arbitrary();
    const auto expected = testing::reference_offsets(l);
    const auto coords = testing::all_coordinates(l.shape());
    ASSERT_EQ(static_cast<std::int64_t>(expected.size()), size(l));
    ASSERT_EQ(coords.size(), expected.size());
    for (std::int64_t i = 0; i < size(l); ++i) {
      const auto k = static_cast<std::size_t>(i);
      ASSERT_EQ(l(i), expected[k]) << l << " at " << i;
      ASSERT_EQ(l(coords[k]), expected[k]) << l << " at " << coords[k];
      ASSERT_EQ(idx2crd(i, l.shape()), coords[k]) << l.shape() << " at " << i;
      ASSERT_EQ(crd2idx(IntTuple(i), l.shape(), l.stride()), expected[k]);
      // A top-level coordinate of ints (one per mode) is split inside each mode the same way.
      std::vector<IntTuple> top;
      if (l.shape().is_tuple()) {
        for (const auto& m : coords[k].elements()) {
          const std::size_t j = top.size();
          top.emplace_back(crd2idx(m, l.shape()[j], suffix_product(l.shape()[j])));
        }
        ASSERT_EQ(l(IntTuple::tuple(top)), expected[k]) << l << " at " << IntTuple::tuple(top);
      }
    }
  }
}

// idx2crd and crd2idx with the default strides are inverse bijections between [0, size) and the coordinates.
TEST(Crd2Idx, IdxToCrdInvertsCrdToIdxRandom) {
  testing::LayoutGen gen(202);
  for (int n = 0; n < testing::kRandomCases; ++n) {
    const IntTuple shape = gen.arbitrary().shape();
    const IntTuple strides = suffix_product(shape);
    for (std::int64_t i = 0; i < product(shape); ++i) {
      const IntTuple c = idx2crd(i, shape);
      ASSERT_TRUE(congruent(c, shape)) << shape << " at " << i;
      ASSERT_EQ(crd2idx(c, shape, strides), i) << shape << " at " << i;
    }
    for (const auto& c : testing::all_coordinates(shape)) {
      ASSERT_EQ(idx2crd(crd2idx(c, shape, strides), shape), c) << shape;
    }
  }
}

// For i >= size the quotient i / size lands, unreduced, in the leftmost leaf.
TEST(Crd2Idx, OverflowRuleRandom) {
  testing::LayoutGen gen(203);
  for (int n = 0; n < testing::kRandomCases; ++n) {
    const Layout l = gen.arbitrary();
    const auto ls = leaves(l);
    const std::int64_t step = ls.front().size * ls.front().stride;
    for (std::int64_t i = 0; i < 3 * size(l); ++i) {
      ASSERT_EQ(l(i), l(i % size(l)) + (i / size(l)) * step) << l << " at " << i;
    }
  }
}

TEST(Crd2Idx, SizeCosizeRank) {
  const Layout nested(tup(tup(2, 2), 4), tup(tup(8, 1), 2));
  EXPECT_EQ(size(nested), 16);
  EXPECT_EQ(rank(nested), 2U);
  EXPECT_EQ(cosize(Layout(tup(2, 2), tup(8, 1))), 10);
  EXPECT_EQ(top_level_sizes(nested), (std::vector<std::int64_t>{4, 4}));
  EXPECT_EQ(leaves(nested), (std::vector<Leaf>{{2, 8}, {2, 1}, {4, 2}}));
  EXPECT_EQ(rank(Layout(IntTuple(8), IntTuple(1))), 1U);
  EXPECT_EQ(Layout(), Layout(IntTuple(1), IntTuple(0)));

  testing::LayoutGen gen(204);
  for (int n = 0; n < testing::kRandomCases; ++n) {
    const Layout l = gen.arbitrary();
    const auto offsets = testing::reference_offsets(l);
    ASSERT_EQ(cosize(l), *std::max_element(offsets.begin(), offsets.end()) + 1) << l;
    std::int64_t p = 1;
    for (auto s : top_level_sizes(l)) p *= s;
    ASSERT_EQ(p, size(l));
    ASSERT_EQ(top_level_sizes(l).size(), rank(l));
    ASSERT_EQ(from_leaves(leaves(l)).shape(), IntTuple::from_ints(flatten(l.shape())));
  }
}

TEST(Crd2Idx, ConstructorRejectsBadShapes) {
  try {
    (void)Layout(tup(2, 4), tup(1));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ValueError);
    EXPECT_EQ(e.message(), "sizes (2,4) and strides (1,) don't match");
  }
  EXPECT_THROW((void)Layout(tup(tup(2, 2), 4), tup(2, 2, 1)), Error);
  EXPECT_THROW((void)Layout(tup(2, 0), tup(1, 1)), Error);
  EXPECT_THROW((void)Layout(tup(2, 2), tup(1, -1)), Error);
  EXPECT_THROW((void)Layout(tup(2, -3)), Error);
}

}  // namespace
}  // namespace meshloom
