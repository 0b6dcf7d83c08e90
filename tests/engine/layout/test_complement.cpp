// complement(L, W): the layout that tiles [0, W) around L.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "meshloom/error.hpp"
#include "meshloom/layout/layout.hpp"
#include "random_layouts.hpp"

namespace meshloom {
namespace {

Layout L(const char* text) { return parse_layout(text); }

TEST(Complement, ReferenceExamples) {
  EXPECT_EQ(complement(L("4:2"), 8), L("2:1"));
  EXPECT_EQ(complement(L("4:2"), 16), L("(2,2):(8,1)"));
  EXPECT_EQ(complement(L("(2,2):(4,1)"), 16), L("(2,2):(8,2)"));
  EXPECT_EQ(complement(L("(2,2):(2,4)"), 16), L("(2,2):(8,1)"));  // the order of L's modes is irrelevant
  EXPECT_EQ(complement(L("(2,2):(4,2)"), 16), L("(2,2):(8,1)"));
}

TEST(Complement, MoreExamples) {
  EXPECT_EQ(complement(L("8:1"), 8), L("1:0"));  // nothing left to tile
  EXPECT_EQ(complement(L("4:1"), 8), L("2:4"));
  EXPECT_EQ(complement(L("(2,4):(4,1)"), 24), L("3:8"));
  EXPECT_EQ(complement(L("4:2"), 1), L("2:1"));  // only the holes below L's span
  EXPECT_EQ(complement(L("4:1"), 6), L("2:4"));  // the last mode rounds up: ceil(6 / 4)
  EXPECT_EQ(complement(L("(3,2):(0,1)"), 4), L("2:2"));  // stride-0 leaves are ignored
  EXPECT_EQ(complement(L("1:0"), 5), L("5:1"));
  EXPECT_EQ(complement(L("((2,),2):((1,),8)"), 32), L("(2,4):(16,2)"));
}

void expect_no_complement(const Layout& l) {
  SCOPED_TRACE(to_string(l));
  try {
    (void)complement(l, 64);
    FAIL() << "complement must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ValueError);
    EXPECT_NE(e.message().find(to_string(l)), std::string::npos) << e.message();
  }
}

TEST(Complement, ThrowsWhenNoComplementExists) {
  expect_no_complement(L("(2,2):(1,1)"));  // overlaps
  expect_no_complement(L("(2,2):(1,3)"));  // 3 is not a multiple of 2
  expect_no_complement(L("(3,2):(2,3)"));  // injective but not orthogonal
  expect_no_complement(L("(2,2):(2,2)"));
  EXPECT_THROW((void)complement(L("4:1"), 0), Error);
}

// Checks the complement C of an injective-or-not L in [0, W); returns C.
Layout check_complement(const Layout& l, std::int64_t w) {
  const Layout c = complement(l, w);
  const auto offsets_l = testing::reference_offsets(l);
  const auto offsets_c = codomain(c);
  // Strictly increasing offsets, starting at 0.
  EXPECT_EQ(offsets_c.front(), 0) << l << " in " << w << " -> " << c;
  for (std::size_t k = 0; k + 1 < offsets_c.size(); ++k) {
    EXPECT_LT(offsets_c[k], offsets_c[k + 1]) << l << " in " << w << " -> " << c << " at " << k;
  }
  // Only offset 0 is shared.
  const std::set<std::int64_t> set_l(offsets_l.begin(), offsets_l.end());
  for (auto o : offsets_c) {
    if (o != 0) {
      EXPECT_EQ(set_l.count(o), 0U) << l << " in " << w << " -> " << c << " shares " << o;
    }
  }
  // Coalesced form.
  EXPECT_EQ(coalesce(c), c) << l << " in " << w;
  return c;
}

// Random sub-layouts (injective, orthogonal, with gaps): the complement exists, and (C, L) together cover
// [0, W) exactly once when L's span divides W, and a little beyond [0, W) (the last mode rounds up) otherwise.
TEST(Complement, TilesTheIndexSpaceRandom) {
  testing::LayoutGen gen(401);
  for (int n = 0; n < testing::kRandomCases; ++n) {
    const Layout l = n % 3 == 0 ? gen.permuted_compact() : gen.sub_layout();
    std::int64_t span = 1;
    for (const auto& leaf : leaves(l)) span = std::max(span, leaf.size * leaf.stride);
    const bool divides = n % 2 == 0;
    const std::int64_t w = divides ? span * gen.uniform(1, 3) : gen.uniform(1, 2 * span + 3);
    const Layout c = check_complement(l, w);
    if (HasFatalFailure() || HasNonfatalFailure()) return;

    const Layout combined = make_layout({c, l});
    auto all = codomain(combined);
    std::sort(all.begin(), all.end());
    ASSERT_TRUE(std::adjacent_find(all.begin(), all.end()) == all.end()) << l << " in " << w << " -> " << c;
    ASSERT_EQ(all.front(), 0);
    // Contiguous: 0 .. size(combined) - 1.
    ASSERT_EQ(all.back(), static_cast<std::int64_t>(all.size()) - 1) << l << " in " << w << " -> " << c;
    ASSERT_GE(size(combined), w) << l << " in " << w << " -> " << c;
    const std::int64_t rounded = (w + span - 1) / span * span;
    ASSERT_EQ(size(combined), std::max(rounded, span)) << l << " in " << w << " -> " << c;
    if (divides) {
      ASSERT_EQ(size(combined), w) << l << " in " << w << " -> " << c;
    }
  }
}

// Any layout: the complement exists exactly when L without its trivial leaves is orthogonal, and then it has
// the complement properties.
TEST(Complement, ExistsExactlyForOrthogonalLayoutsRandom) {
  testing::LayoutGen gen(402);
  int built = 0;
  for (int n = 0; n < 2 * testing::kRandomCases; ++n) {
    const Layout l = gen.arbitrary();
    const std::int64_t w = gen.uniform(1, 64);
    const bool orthogonal = is_orthogonal(filter(l));
    if (!orthogonal) {
      ASSERT_THROW((void)complement(l, w), Error) << l;
      continue;
    }
    ++built;
    (void)check_complement(l, w);
    if (HasFatalFailure() || HasNonfatalFailure()) return;
  }
  EXPECT_GT(built, testing::kRandomCases / 4);
}

}  // namespace
}  // namespace meshloom
