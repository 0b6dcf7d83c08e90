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
