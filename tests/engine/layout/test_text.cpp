// to_string / parse_layout / operator<< / hash for layouts: "shape:stride".
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <unordered_set>

#include "meshloom/error.hpp"
#include "meshloom/layout/layout.hpp"
#include "random_layouts.hpp"

namespace meshloom {
namespace {

TEST(LayoutText, Print) {
  EXPECT_EQ(to_string(Layout(tup(2, 4), tup(4, 1))), "(2,4):(4,1)");
  EXPECT_EQ(to_string(Layout(IntTuple(8), IntTuple(1))), "8:1");
  EXPECT_EQ(to_string(Layout(tup(tup(2, 2), 4), tup(tup(8, 1), 2))), "((2,2),4):((8,1),2)");
  EXPECT_EQ(to_string(Layout(tup(4), tup(1))), "(4,):(1,)");
  EXPECT_EQ(to_string(Layout(tup(), tup())), "():()");
  EXPECT_EQ(to_string(Layout()), "1:0");
  std::ostringstream os;
  os << Layout(tup(2, 4));
  EXPECT_EQ(os.str(), "(2,4):(4,1)");
}

TEST(LayoutText, Parse) {
  EXPECT_EQ(parse_layout("(2,4):(4,1)"), Layout(tup(2, 4), tup(4, 1)));
  EXPECT_EQ(parse_layout(" ( 2 , 4 ) : ( 1 , 2 ) "), Layout(tup(2, 4), tup(1, 2)));
  EXPECT_EQ(parse_layout("8:1"), Layout(IntTuple(8), IntTuple(1)));
  EXPECT_EQ(parse_layout("(4,):(1,)"), Layout(tup(4), tup(1)));
  EXPECT_NE(parse_layout("(4,):(1,)"), parse_layout("4:1"));
  EXPECT_EQ(parse_layout("((2,2),4):((8,1),2)"), Layout(tup(tup(2, 2), 4), tup(tup(8, 1), 2)));
  EXPECT_EQ(parse_layout("():()"), Layout(tup(), tup()));
  // A bare shape takes the lexicographic default strides.
  EXPECT_EQ(parse_layout("(2,4)"), Layout(tup(2, 4), tup(4, 1)));
  EXPECT_EQ(parse_layout("((2,3),4)"), Layout(tup(tup(2, 3), 4), tup(tup(12, 4), 1)));
  EXPECT_EQ(parse_layout("6"), Layout(IntTuple(6), IntTuple(1)));
}

void expect_parse_error(const std::string& text, const std::string& phrase) {
  SCOPED_TRACE("'" + text + "'");
  try {
    (void)parse_layout(text);
    FAIL() << "parsing must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ValueError);
    EXPECT_NE(e.message().find(phrase), std::string::npos) << e.message();
  }
}

TEST(LayoutText, MalformedText) {
  expect_parse_error("(2,4):(4,1):(1,1)", "more than one ':'");
  expect_parse_error("(2,4):(1,)", "sizes (2,4) and strides (1,) don't match");
  expect_parse_error("4:(1,)", "sizes 4 and strides (1,) don't match");
  expect_parse_error("(2,4):(4,1", "at position 4");
  expect_parse_error("(2,x):(4,1)", "at position 3");
  expect_parse_error(":1", "at position 0");
  expect_parse_error("(2,0):(1,1)", "size 0");
  expect_parse_error("(2,2):(1,-1)", "stride -1");
  expect_parse_error("", "at position 0");
}

TEST(LayoutText, RoundTripRandom) {
  testing::LayoutGen gen(1001);
  std::unordered_set<Layout> set;
  for (int n = 0; n < testing::kRandomCases; ++n) {
    const Layout l = gen.arbitrary();
    const std::string text = to_string(l);
    ASSERT_EQ(text.find(' '), std::string::npos) << text;
    ASSERT_EQ(std::count(text.begin(), text.end(), ':'), 1) << text;
    const Layout back = parse_layout(text);
    ASSERT_EQ(back, l) << text;
    ASSERT_EQ(to_string(back), text);
    ASSERT_EQ(std::hash<Layout>{}(back), hash_value(l)) << text;
    set.insert(l);
    ASSERT_EQ(set.count(back), 1U);
    // The shape alone parses to the compact layout of that shape.
    ASSERT_EQ(parse_layout(to_string(l.shape())), Layout(l.shape()));
  }
}

TEST(LayoutText, HashSeparatesShapeFromStride) {
  const std::hash<Layout> h;
  EXPECT_NE(h(parse_layout("(2,4):(4,1)")), h(parse_layout("(4,1):(2,4)")));
  EXPECT_NE(h(parse_layout("(2,4):(4,1)")), h(parse_layout("(2,4):(1,2)")));
  EXPECT_NE(h(parse_layout("4:1")), h(parse_layout("(4,):(1,)")));
  EXPECT_EQ(h(parse_layout("(2,4):(4,1)")), h(Layout(tup(2, 4))));
}

}  // namespace
}  // namespace meshloom

namespace meshloom {
namespace {

TEST(LayoutText, NestingDeeperThanTheLimitIsRejected) {
  const auto nested = [](std::size_t depth) { return std::string(depth, '(') + "1" + std::string(depth, ')'); };
  EXPECT_EQ(rank(parse_layout(nested(kMaxIntTupleDepth))), 1U);
  try {
    (void)parse_layout(nested(30000));  // would overflow the stack if the parser recursed unbounded
    ADD_FAILURE() << "accepted 30000 levels";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ValueError);
    EXPECT_NE(std::string(e.what()).find("nested deeper than 32 levels"), std::string::npos) << e.what();
  }
}

TEST(LayoutText, HugeValuesAreRejectedNotWrapped) {
  // Every case would overflow 64-bit arithmetic somewhere in the algebra without the bounds.
  for (const char* text : {"(2,4611686018427387904):(4611686018427387904,1)", "(4294967296,4294967296):(1,0)",
                           "3:3074457345618258603", "(9223372036854775807,2):(1,1)"}) {
    try {
      (void)parse_layout(text);
      ADD_FAILURE() << text << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::ValueError) << e.what();
    }
  }
  try {
    (void)complement(parse_layout("4:2"), std::int64_t{9223372036854775807});
    ADD_FAILURE() << "complement bound 2^63-1 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("complement bound 9223372036854775807 is out of range"), std::string::npos)
        << e.what();
  }
  // The largest layout allowed still works end to end.
  const Layout big(tup(2, std::int64_t{1} << 30), tup(std::int64_t{1} << 30, 1));
  EXPECT_EQ(coalesce(big), Layout(IntTuple(std::int64_t{1} << 31), IntTuple(1)));
  EXPECT_EQ(cosize(big), std::int64_t{1} << 31);
}

}  // namespace
}  // namespace meshloom
