// IntTuple: construction, rank, product, flatten, congruent, suffix_product, inner_product, ==, hash, text.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <unordered_set>

#include "meshloom/error.hpp"
#include "meshloom/layout/int_tuple.hpp"
#include "random_layouts.hpp"

namespace meshloom {
namespace {

using V = std::vector<std::int64_t>;

TEST(IntTuple, IntAndTupleConstruction) {
  const IntTuple four = 4;
  EXPECT_TRUE(four.is_int());
  EXPECT_FALSE(four.is_tuple());
  EXPECT_EQ(four.value(), 4);
  EXPECT_EQ(four.rank(), 1U);
  EXPECT_EQ(four[0], four);  // an int's only mode is itself

  const IntTuple one = tup(4);
  EXPECT_TRUE(one.is_tuple());
  EXPECT_EQ(one.rank(), 1U);
  EXPECT_EQ(one[0], IntTuple(4));

  const IntTuple empty = tup();
  EXPECT_TRUE(empty.is_tuple());
  EXPECT_EQ(empty.rank(), 0U);
  EXPECT_TRUE(empty.elements().empty());

  const IntTuple nested = tup(tup(2, 2), 4);
  EXPECT_EQ(nested.rank(), 2U);
  EXPECT_EQ(nested[0], tup(2, 2));
  EXPECT_EQ(nested[1], IntTuple(4));

  EXPECT_EQ(IntTuple::from_ints({3, 2, 4}), tup(3, 2, 4));
  EXPECT_EQ(IntTuple::from_ints({}), tup());
  EXPECT_EQ(IntTuple::tuple({IntTuple(2), tup(3)}), tup(2, tup(3)));
  EXPECT_EQ(IntTuple(std::int64_t{1} << 40).value(), std::int64_t{1} << 40);
  EXPECT_EQ(IntTuple().value(), 0);
}

TEST(IntTuple, AccessorsOnTheWrongKindThrow) {
  try {
    (void)tup(2, 4).value();
    FAIL() << "value() of a tuple must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::TypeError);
    EXPECT_NE(e.message().find("(2,4)"), std::string::npos) << e.message();
  }
  EXPECT_THROW((void)IntTuple(3).elements(), Error);
  try {
    (void)tup(2, 4)[2];
    FAIL() << "mode 2 of a rank-2 tuple must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::IndexError);
  }
  EXPECT_THROW((void)IntTuple(3)[1], Error);
  EXPECT_THROW((void)tup()[0], Error);
}

TEST(IntTuple, FourAndOneTupleOfFourDiffer) {
  EXPECT_NE(IntTuple(4), tup(4));
  EXPECT_NE(tup(4), tup(tup(4)));
  EXPECT_NE(tup(), IntTuple(0));
  EXPECT_NE(tup(2, 4), tup(4, 2));
  EXPECT_NE(tup(tup(2, 2), 4), tup(2, tup(2, 4)));
  EXPECT_NE(tup(tup(2, 2), 4), tup(2, 2, 4));
  EXPECT_EQ(tup(tup(2, 2), 4), tup(tup(2, 2), 4));
  EXPECT_EQ(IntTuple(4), IntTuple(std::int64_t{4}));
}

TEST(IntTuple, Product) {
  EXPECT_EQ(product(IntTuple(5)), 5);
  EXPECT_EQ(product(tup()), 1);
  EXPECT_EQ(product(tup(4)), 4);
  EXPECT_EQ(product(tup(2, 4)), 8);
  EXPECT_EQ(product(tup(tup(2, 2), 4)), 16);
  EXPECT_EQ(product(tup(tup(2, tup(3, tup())), 4)), 24);
}

TEST(IntTuple, Flatten) {
  EXPECT_EQ(flatten(IntTuple(5)), V{5});
  EXPECT_EQ(flatten(tup()), V{});
  EXPECT_EQ(flatten(tup(4)), V{4});
  EXPECT_EQ(flatten(tup(tup(2, 3), 4)), (V{2, 3, 4}));
  EXPECT_EQ(flatten(tup(1, tup(2, tup(3, 4)), tup(), 5)), (V{1, 2, 3, 4, 5}));
}

TEST(IntTuple, Congruent) {
  EXPECT_TRUE(congruent(IntTuple(2), IntTuple(7)));
  EXPECT_TRUE(congruent(tup(), tup()));
  EXPECT_TRUE(congruent(tup(2, 4), tup(4, 1)));
  EXPECT_TRUE(congruent(tup(tup(2, 2), 4), tup(tup(8, 1), 2)));
  EXPECT_FALSE(congruent(IntTuple(4), tup(4)));
  EXPECT_FALSE(congruent(tup(2, 4), tup(1)));
  EXPECT_FALSE(congruent(tup(tup(2, 2), 4), tup(2, 2, 4)));
  EXPECT_FALSE(congruent(tup(tup(2, 2), 4), tup(4, tup(2, 2))));
  EXPECT_FALSE(congruent(tup(), IntTuple(1)));
}

TEST(IntTuple, SuffixProductReferenceExamples) {
  EXPECT_EQ(suffix_product(tup(3, 2, 4)), tup(8, 4, 1));
  EXPECT_EQ(suffix_product(tup(tup(2, 3), 4)), tup(tup(12, 4), 1));
  EXPECT_EQ(suffix_product(IntTuple(2)), IntTuple(1));
  EXPECT_EQ(suffix_product(tup(2, 4)), tup(4, 1));
  EXPECT_EQ(suffix_product(tup(2, 2, 2)), tup(4, 2, 1));
  EXPECT_EQ(suffix_product(tup(4)), tup(1));
  EXPECT_EQ(suffix_product(tup()), tup());
  EXPECT_EQ(suffix_product(tup(2, tup(3, 5)), 7), tup(105, tup(35, 7)));
}

// Defining property: congruent to the shape, and each leaf's stride is the product of all leaves to its right.
TEST(IntTuple, SuffixProductRandom) {
  testing::LayoutGen gen(101);
  for (int n = 0; n < testing::kRandomCases; ++n) {
    const IntTuple shape = gen.arbitrary().shape();
    const std::int64_t init = gen.uniform(1, 3);
    const IntTuple strides = suffix_product(shape, init);
    ASSERT_TRUE(congruent(shape, strides)) << shape;
    const auto s = flatten(shape);
    const auto d = flatten(strides);
    std::int64_t expected = init;
    for (std::size_t i = s.size(); i-- > 0;) {
      ASSERT_EQ(d[i], expected) << shape << " leaf " << i;
      expected *= s[i];
    }
  }
}

TEST(IntTuple, InnerProduct) {
  EXPECT_EQ(inner_product(IntTuple(3), IntTuple(4)), 12);
  EXPECT_EQ(inner_product(tup(1, 1), tup(4, 1)), 5);
  EXPECT_EQ(inner_product(tup(tup(1, 1), 3), tup(tup(8, 1), 2)), 15);
  EXPECT_EQ(inner_product(tup(), tup()), 0);
  try {
    (void)inner_product(tup(1, 2), tup(1));
    FAIL() << "incongruent inner_product must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ValueError);
  }
  EXPECT_THROW((void)inner_product(IntTuple(1), tup(1)), Error);
}

TEST(IntTuple, InnerProductRandomMatchesFlatSum) {
  testing::LayoutGen gen(102);
  for (int n = 0; n < testing::kRandomCases; ++n) {
    const Layout l = gen.arbitrary();
    const auto a = flatten(l.shape());
    const auto b = flatten(l.stride());
    std::int64_t expected = 0;
    for (std::size_t i = 0; i < a.size(); ++i) expected += a[i] * b[i];
    ASSERT_EQ(inner_product(l.shape(), l.stride()), expected) << l;
  }
}

TEST(IntTuple, Hash) {
  const std::hash<IntTuple> h;
  EXPECT_EQ(h(tup(tup(2, 2), 4)), h(tup(tup(2, 2), 4)));
  EXPECT_EQ(hash_value(tup(2, 4)), h(tup(2, 4)));
  // Distinct values that differ only in their nesting hash differently.
  EXPECT_NE(h(IntTuple(4)), h(tup(4)));
  EXPECT_NE(h(tup(2, tup(3))), h(tup(tup(2), 3)));
  EXPECT_NE(h(tup()), h(tup(tup())));
  EXPECT_NE(h(tup(2, 4)), h(tup(4, 2)));

  // Usable as an unordered key; equal values collapse, distinct random values (almost always) do not collide.
  testing::LayoutGen gen(103);
  std::unordered_set<IntTuple> set;
  std::vector<IntTuple> distinct;
  for (int n = 0; n < testing::kRandomCases; ++n) {
    const IntTuple t = gen.arbitrary().shape();
    ASSERT_EQ(h(t), h(parse_int_tuple(to_string(t))));
    if (set.insert(t).second) distinct.push_back(t);
    ASSERT_FALSE(set.insert(t).second);
  }
  std::unordered_set<std::size_t> hashes;
  for (const auto& t : distinct) hashes.insert(h(t));
  EXPECT_EQ(hashes.size(), distinct.size());
}

TEST(IntTuple, Print) {
  EXPECT_EQ(to_string(IntTuple(4)), "4");
  EXPECT_EQ(to_string(tup(4)), "(4,)");
  EXPECT_EQ(to_string(tup(2, 4)), "(2,4)");
  EXPECT_EQ(to_string(tup(tup(2, 2), 4)), "((2,2),4)");
  EXPECT_EQ(to_string(tup()), "()");
  EXPECT_EQ(to_string(tup(tup())), "((),)");
  EXPECT_EQ(to_string(tup(tup(4), 2)), "((4,),2)");
  std::ostringstream os;
  os << tup(tup(2, 2), 4);
  EXPECT_EQ(os.str(), "((2,2),4)");
}

TEST(IntTuple, Parse) {
  EXPECT_EQ(parse_int_tuple("4"), IntTuple(4));
  EXPECT_EQ(parse_int_tuple("(4,)"), tup(4));
  EXPECT_EQ(parse_int_tuple("(4)"), tup(4));  // the trailing comma is optional when parsing
  EXPECT_EQ(parse_int_tuple("()"), tup());
  EXPECT_EQ(parse_int_tuple("( )"), tup());
  EXPECT_EQ(parse_int_tuple("(2,4)"), tup(2, 4));
  EXPECT_EQ(parse_int_tuple(" ( ( 2 , 2 ) , 4 , ) "), tup(tup(2, 2), 4));
  EXPECT_EQ(parse_int_tuple("((),)"), tup(tup()));
  EXPECT_EQ(parse_int_tuple("9223372036854775807").value(), INT64_MAX);
}

TEST(IntTuple, PrintParseRoundTripRandom) {
  testing::LayoutGen gen(104);
  for (int n = 0; n < testing::kRandomCases; ++n) {
    const Layout l = gen.arbitrary();
    for (const IntTuple& t : {l.shape(), l.stride()}) {
      const std::string text = to_string(t);
      ASSERT_EQ(text.find(' '), std::string::npos);
      ASSERT_EQ(parse_int_tuple(text), t) << text;
    }
  }
}

// The message names the text and the 0-based position of the bad token.
void expect_parse_error(const std::string& text, std::size_t position) {
  SCOPED_TRACE("'" + text + "'");
  try {
    (void)parse_int_tuple(text);
    FAIL() << "parsing must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ValueError);
    EXPECT_NE(e.message().find("'" + text + "'"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("at position " + std::to_string(position) + ":"), std::string::npos) << e.message();
    EXPECT_EQ(std::string(e.what()).rfind("ValueError: ", 0), 0U) << e.what();
  }
}

TEST(IntTuple, MalformedTextNamesThePosition) {
  expect_parse_error("", 0);
  expect_parse_error("   ", 3);
  expect_parse_error("x", 0);
  expect_parse_error("(2,,3)", 3);
  expect_parse_error("(2 3)", 3);
  expect_parse_error("(2,3", 4);
  expect_parse_error("2)", 1);
  expect_parse_error("(,)", 1);
  expect_parse_error("(2,4)x", 5);
  expect_parse_error("((2,2),a)", 7);
  expect_parse_error("-", 0);
  expect_parse_error("(1,99999999999999999999)", 3);
}

}  // namespace
}  // namespace meshloom
