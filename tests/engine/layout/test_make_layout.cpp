// make_layout, nest, splice and mode: building layouts out of modes.
#include <gtest/gtest.h>

#include "meshloom/error.hpp"
#include "meshloom/layout/layout.hpp"
#include "random_layouts.hpp"

namespace meshloom {
namespace {

Layout L(const char* text) { return parse_layout(text); }

TEST(MakeLayout, ReferenceExamples) {
  EXPECT_EQ(make_layout({L("2:1"), L("4:2")}), L("(2,4):(1,2)"));
  EXPECT_EQ(make_layout({L("(2,2):(4,1)")}), L("((2,2),):((4,1),)"));
  EXPECT_EQ(make_layout({L("(2,2):(4,1)"), L("3:8")}), L("((2,2),3):((4,1),8)"));
  EXPECT_EQ(make_layout({}), L("():()"));
  EXPECT_EQ(size(make_layout({})), 1);
}

TEST(Nest, ReferenceExamples) {
  const Layout n = nest(L("(2,2):(4,1)"));
  EXPECT_EQ(n, L("((2,2),):((4,1),)"));
  EXPECT_EQ(rank(n), 1U);
  EXPECT_EQ(top_level_sizes(n), std::vector<std::int64_t>{4});
  EXPECT_EQ(nest(L("8:1")), L("(8,):(1,)"));
}

TEST(Splice, ReferenceExamples) {
  EXPECT_EQ(splice(L("(2,3,4):(12,4,1)"), 1, 2, L("(3,1):(1,3)")), L("(2,3,1,4):(12,1,3,1)"));
  EXPECT_EQ(splice(L("(2,3,4):(12,4,1)"), 1, 2, L("3:4")), L("(2,3,4):(12,4,1)"));  // an int side is one mode
  EXPECT_EQ(splice(L("(2,3,4):(12,4,1)"), 0, 3, L("24:1")), L("(24,):(1,)"));
  EXPECT_EQ(splice(L("(2,3,4):(12,4,1)"), 1, 1, L("5:0")), L("(2,5,3,4):(12,0,4,1)"));  // pure insertion
  EXPECT_EQ(splice(L("(2,3,4):(12,4,1)"), 0, 2, L("():()")), L("(4,):(1,)"));  // pure removal
  EXPECT_EQ(splice(L("8:1"), 0, 1, L("(2,4):(4,1)")), L("(2,4):(4,1)"));
  try {
    (void)splice(L("(2,3):(3,1)"), 1, 3, L("2:1"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::IndexError);
  }
  EXPECT_THROW((void)splice(L("(2,3):(3,1)"), 2, 1, L("2:1")), Error);
}

TEST(Mode, ReferenceExamples) {
  const Layout l = L("((2,2),4):((8,1),2)");
  EXPECT_EQ(mode(l, 0), L("(2,2):(8,1)"));
  EXPECT_EQ(mode(l, 1), L("4:2"));
  EXPECT_EQ(mode(l, -1), L("4:2"));
  EXPECT_EQ(mode(l, -2), L("(2,2):(8,1)"));
  // An int-shaped layout has one mode: itself.
  EXPECT_EQ(mode(L("8:1"), 0), L("8:1"));
  EXPECT_EQ(mode(L("8:1"), -1), L("8:1"));
  EXPECT_EQ(mode(L("(8,):(1,)"), 0), L("8:1"));
}

void expect_index_error(const Layout& l, std::int64_t i, const std::string& message) {
  try {
    (void)mode(l, i);
    FAIL() << "mode(" << l << ", " << i << ") must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::IndexError);
    EXPECT_EQ(e.message(), message);
    EXPECT_EQ(std::string(e.what()), "IndexError: " + message);
  }
}

TEST(Mode, OutOfRangeIsAnIndexError) {
  expect_index_error(L("(2,4):(4,1)"), 2,
                     "Dim 2 is out of range for layout with 2 dimensions. Expected dim to be in range [-2, 1].");
  expect_index_error(L("(2,4):(4,1)"), -3,
                     "Dim -3 is out of range for layout with 2 dimensions. Expected dim to be in range [-2, 1].");
  expect_index_error(L("8:1"), 1,
                     "Dim 1 is out of range for layout with 1 dimensions. Expected dim to be in range [-1, 0].");
  expect_index_error(L("():()"), 0,
                     "Dim 0 is out of range for layout with 0 dimensions. Expected dim to be in range [0, -1].");
}

// make_layout: mode i is the i-th argument, and L(c_0, c_1, ...) == sum M_i(c_i) at every coordinate.
TEST(MakeLayout, ModesAndOffsetsRandom) {
  testing::LayoutGen gen(701);
  for (int n = 0; n < testing::kRandomCases; ++n) {
    std::vector<Layout> modes(static_cast<std::size_t>(gen.uniform(1, 3)));
    for (auto& m : modes) m = gen.arbitrary();
    const Layout l = make_layout(modes);
    if (size(l) > 4096) continue;  // keep the exhaustive checks fast
    ASSERT_EQ(rank(l), modes.size());
    std::int64_t expected_size = 1;
    for (std::size_t i = 0; i < modes.size(); ++i) {
      ASSERT_EQ(mode(l, static_cast<std::int64_t>(i)), modes[i]);
      ASSERT_EQ(mode(l, static_cast<std::int64_t>(i) - static_cast<std::int64_t>(modes.size())), modes[i]);
      expected_size *= size(modes[i]);
    }
    ASSERT_EQ(size(l), expected_size);
    for (const auto& c : testing::all_coordinates(l.shape())) {
      std::int64_t sum = 0;
      for (std::size_t i = 0; i < modes.size(); ++i) sum += modes[i](c[i]);
      ASSERT_EQ(l(c), sum) << l << " at " << c;
    }
    // Mode by mode, the index splits from the right: the last mode takes i mod its size.
    const auto& last = modes.back();
    const Layout head = modes.size() == 1 ? Layout() : make_layout({modes.begin(), modes.end() - 1});
    for (std::int64_t i = 0; i < size(l); ++i) {
      const std::int64_t expected = modes.size() == 1 ? last(i) : head(i / size(last)) + last(i % size(last));
      ASSERT_EQ(l(i), expected) << l << " at " << i;
    }
  }
}

// nest keeps the function (and the leaves) and makes one mode of it.
TEST(Nest, SameFunctionOneModeRandom) {
  testing::LayoutGen gen(702);
  for (int n = 0; n < testing::kRandomCases; ++n) {
    const Layout l = gen.arbitrary();
    const Layout nl = nest(l);
    ASSERT_EQ(rank(nl), 1U);
    ASSERT_EQ(mode(nl, 0), l);
    ASSERT_EQ(leaves(nl), leaves(l));
    for (std::int64_t i = 0; i < 2 * size(l); ++i) ASSERT_EQ(nl(i), l(i)) << l << " at " << i;
  }
}

// splice(l, b, e, x): modes [0, b) of l, then x's modes, then modes [e, n) of l. Splicing a run of modes back in
// gives l itself, and splicing a mode's own sub-modes in its place keeps the function.
TEST(Splice, ReplacesModesRandom) {
  testing::LayoutGen gen(703);
  for (int n = 0; n < testing::kRandomCases; ++n) {
    std::vector<Layout> modes(static_cast<std::size_t>(gen.uniform(1, 4)));
    for (auto& m : modes) m = gen.arbitrary();
    const Layout l = make_layout(modes);
    if (size(l) > 4096) continue;
    const auto k = static_cast<std::size_t>(gen.uniform(0, static_cast<std::int64_t>(modes.size())));
    const auto begin = static_cast<std::size_t>(gen.uniform(0, static_cast<std::int64_t>(k)));
    const Layout x = gen.arbitrary();
    const Layout s = splice(l, begin, k, x);
    ASSERT_EQ(rank(s), modes.size() - (k - begin) + rank(x));
    std::size_t j = 0;
    for (std::size_t i = 0; i < begin; ++i) ASSERT_EQ(mode(s, static_cast<std::int64_t>(j++)), modes[i]);
    for (std::size_t i = 0; i < rank(x); ++i) {
      ASSERT_EQ(mode(s, static_cast<std::int64_t>(j++)), mode(x, static_cast<std::int64_t>(i)));
    }
    for (std::size_t i = k; i < modes.size(); ++i) ASSERT_EQ(mode(s, static_cast<std::int64_t>(j++)), modes[i]);

    if (k > begin) {
      const Layout run = make_layout({modes.begin() + static_cast<std::ptrdiff_t>(begin),
                                      modes.begin() + static_cast<std::ptrdiff_t>(k)});
      ASSERT_EQ(splice(l, begin, k, run), l);
      const Layout flattened = splice(l, begin, begin + 1, modes[begin]);
      ASSERT_EQ(size(flattened), size(l));
      for (std::int64_t i = 0; i < size(l); ++i) {
        ASSERT_EQ(flattened(i), l(i)) << l << " -> " << flattened << " at " << i;
      }
    }
  }
}

}  // namespace
}  // namespace meshloom
