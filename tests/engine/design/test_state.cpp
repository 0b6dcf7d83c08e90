// Redistribution states: text form round trips, parse errors, shard orders, validation, hashing.
#include "meshloom/plan/state.hpp"

#include <gtest/gtest.h>

#include <string>
#include <unordered_set>
#include <vector>

#include "meshloom/error.hpp"

namespace meshloom {
namespace {

using Axes = std::vector<std::size_t>;

// The message of the ValueError that parse_state throws for text, or "" when it parses.
std::string parse_error(const std::string& text) {
  try {
    (void)parse_state(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ValueError) << e.what();
    return e.what();
  }
  return "";
}

void expect_parse_error(const std::string& text, std::size_t position, const std::string& token, const std::string& why) {
  const std::string message = parse_error(text);
  SCOPED_TRACE("input: " + text + "\nmessage: " + message);
  ASSERT_FALSE(message.empty()) << "expected a parse error";
  EXPECT_NE(message.find("position " + std::to_string(position) + ", token \"" + token + "\": "), std::string::npos);
  EXPECT_NE(message.find(why), std::string::npos);
  std::string reason;
  EXPECT_FALSE(try_parse_state(text, &reason).has_value());
  EXPECT_NE(message.find(reason), std::string::npos);
}

TEST(StateText, EveryExampleOfTheReferenceRoundTrips) {
  for (const char* text : {"S(0)[0]S(0)[1]S(0)[2]", "S(0)[1]S(0)[0]S(0)[2]", "RS(1)S(0)", "P(sum)RS(0)", "RRR",
                           "S(0)[0]S(0)[1]R", "S(0)RR", "RS(0)R", "R", "S(3)", "P(avg)P(max)P(min)P(product)",
                           "S(1)[1]S(0)S(1)[0]", "S(0)[2]S(0)[0]S(0)[1]S(1)"}) {
    SCOPED_TRACE(text);
    const State state = parse_state(text);
    EXPECT_EQ(to_string(state), text);
    EXPECT_EQ(parse_state(to_string(state)), state);
  }
}

TEST(StateText, PlacementsAndShardOrderOfTheExamples) {
  const State first = parse_state("S(0)[0]S(0)[1]S(0)[2]");
  ASSERT_EQ(first.ndim(), 3U);
  for (const Placement& p : first.placements()) EXPECT_EQ(p, Placement::shard(0));
  EXPECT_EQ(first.shard_axes(0), (Axes{0, 1, 2}));
  EXPECT_TRUE(first.has_default_shard_order());

  const State second = parse_state("S(0)[1]S(0)[0]S(0)[2]");
  EXPECT_EQ(second.placements(), first.placements());
  EXPECT_EQ(second.shard_axes(0), (Axes{1, 0, 2}));
  EXPECT_FALSE(second.has_default_shard_order());
  EXPECT_NE(first, second);

  const State third = parse_state("RS(1)S(0)");
  EXPECT_EQ(third.placements(), (std::vector<Placement>{Placement::replicate(), Placement::shard(1), Placement::shard(0)}));
  ASSERT_EQ(third.shard_order().size(), 2U);
  EXPECT_EQ(third.shard_order()[0], (ShardOrderEntry{0, {2}}));
  EXPECT_EQ(third.shard_order()[1], (ShardOrderEntry{1, {1}}));
  EXPECT_TRUE(third.shard_axes(2).empty());

  const State fourth = parse_state("P(sum)RS(0)");
  EXPECT_TRUE(fourth.placement(0).is_partial());
  EXPECT_EQ(fourth.placement(0).op(), ReduceOp::Sum);
  EXPECT_TRUE(fourth.placement(1).is_replicate());
  EXPECT_EQ(fourth.placement(2).dim(), 0);

  EXPECT_TRUE(parse_state("RRR").shard_order().empty());
}

TEST(StateText, LenientInputPrintsCanonically) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"P", "P(sum)"},
      {"PRS(0)", "P(sum)RS(0)"},
      {"S(0)[0]R", "S(0)R"},
      {"S(0)S(0)R", "S(0)[0]S(0)[1]R"},
      {"Shard(0), Replicate(), Partial(avg)", "S(0)RP(avg)"},
      {"Shard(dim=1) | R", "S(1)R"},
      {"  S(0) S(0)[0]  ", ""},  // mixed brackets: an error, checked below
      {"Shard(0)[1] Shard(0)[0]", "S(0)[1]S(0)[0]"},
      {"R,R|R", "RRR"},
      {"R , R\t|\nR", "RRR"},
      {"Partial(product)P(max)", "P(product)P(max)"},
  };
  for (const auto& [input, expected] : cases) {
    SCOPED_TRACE(input);
    if (expected.empty()) {
      EXPECT_FALSE(try_parse_state(input).has_value());
      continue;
    }
    EXPECT_EQ(to_string(parse_state(input)), expected);
  }
}

TEST(StateText, PlacementAndReduceOpStrings) {
  EXPECT_EQ(to_string(Placement::replicate()), "R");
  EXPECT_EQ(to_string(Placement::shard(12)), "S(12)");
  for (const auto& [op, name] : std::vector<std::pair<ReduceOp, std::string>>{
           {ReduceOp::Sum, "sum"}, {ReduceOp::Avg, "avg"}, {ReduceOp::Max, "max"}, {ReduceOp::Min, "min"}, {ReduceOp::Product, "product"}}) {
    EXPECT_EQ(to_string(op), name);
    EXPECT_EQ(reduce_op_from_string(name), op);
    EXPECT_EQ(to_string(Placement::partial(op)), "P(" + name + ")");
  }
  EXPECT_FALSE(reduce_op_from_string("Sum").has_value());
  EXPECT_FALSE(reduce_op_from_string("mean").has_value());
}

TEST(StateParseErrors, EmptyInput) {
  expect_parse_error("", 0, "", "empty state");
  expect_parse_error("  \t", 3, "", "empty state");
}

TEST(StateParseErrors, UnknownTokens) {
  expect_parse_error("X", 0, "X", "expected a placement");
  expect_parse_error("RQ", 1, "Q", "expected a placement");
  expect_parse_error("R(0)", 1, "(0)", "expected a placement");
  expect_parse_error(",R", 0, ",", "expected a placement");
  expect_parse_error("S(0)r", 4, "r", "expected a placement");
}

TEST(StateParseErrors, Separators) {
  expect_parse_error("R,,R", 2, ",", "two separators in a row");
  expect_parse_error("R|,R", 2, ",", "two separators in a row");
  expect_parse_error("R, ", 1, ",", "separator at the end");
}

TEST(StateParseErrors, ShardDims) {
  expect_parse_error("S0", 0, "S0", "a shard needs a tensor dim");
  expect_parse_error("Shard", 0, "Shard", "a shard needs a tensor dim");
  expect_parse_error("S()", 0, "S()", "expected a non-negative integer dim after '('");
  expect_parse_error("Shard(dim=)", 0, "Shard(dim=)", "expected a non-negative integer dim after '='");
  expect_parse_error("S(x)", 0, "S(x)", "expected a non-negative integer dim");
  expect_parse_error("RS(-1)", 1, "S(-1)", "dim must not be negative");
  expect_parse_error("S(1", 0, "S(1", "missing ')' after the dim");
  expect_parse_error("S(99999999999)", 0, "S(99999999999)", "dim is too large");
}

TEST(StateParseErrors, ReduceOps) {
  expect_parse_error("P(mean)", 0, "P(mean)", "unknown reduce op \"mean\": expected one of sum, avg, max, min, product");
  expect_parse_error("RP()", 1, "P()", "unknown reduce op \"\"");
  expect_parse_error("P(sum", 0, "P(sum", "missing ')' after the reduce op");
  expect_parse_error("P(sum2)", 0, "P(sum2)", "missing ')' after the reduce op");
  expect_parse_error("Partial", 0, "Partial", "expected Partial(op)");
  expect_parse_error("Partial(SUM)", 0, "Partial(SUM)", "unknown reduce op \"SUM\"");
  expect_parse_error("Replicate", 0, "Replicate", "expected Replicate()");
}

TEST(StateParseErrors, MisplacedShardOrderIndex) {
  expect_parse_error("R[0]", 1, "[0]", "may only follow S(d), not R");
  expect_parse_error("P(sum)[0]", 6, "[0]", "may only follow S(d), not P(sum)");
  expect_parse_error("[0]", 0, "[0]", "may only follow S(d)");
  expect_parse_error("S(0)[0][1]", 7, "[1]", "a second shard-order index after S(0)[0]");
  expect_parse_error("S(0)[", 0, "S(0)[", "expected a non-negative integer shard-order index after '['");
  expect_parse_error("S(0)[1", 0, "S(0)[1", "missing ']' after the shard-order index");
  expect_parse_error("S(0)[-1]", 0, "S(0)[-1]", "shard-order index must not be negative");
}

TEST(StateParseErrors, MixedBrackets) {
  expect_parse_error("S(0)[1]S(0)", 7, "S(0)",
                     "every S(0) must carry a shard-order index [k] or none may; S(0)[1] at position 0 does, this one does not");
  expect_parse_error("S(0)S(0)[0]", 4, "S(0)[0]",
                     "every S(0) must carry a shard-order index [k] or none may; S(0) at position 0 does not, this one does");
  // Brackets on one dim and not on another are fine.
  EXPECT_EQ(to_string(parse_state("S(0)[1]S(0)[0]S(1)S(1)")), "S(0)[1]S(0)[0]S(1)[0]S(1)[1]");
}

TEST(StateParseErrors, IndicesThatAreNotAPermutation) {
  expect_parse_error("S(0)[0]S(0)[0]", 7, "S(0)[0]", "shard-order index 0 of dim 0 is used twice (also S(0)[0] at position 0)");
  expect_parse_error("S(0)[2]S(0)[0]", 0, "S(0)[2]", "index 2 is out of range: dim 0 is sharded by 2 axes, so k must be in 0..1");
  expect_parse_error("S(0)[1]R", 0, "S(0)[1]", "dim 0 is sharded by 1 axis, so k must be 0");
}

TEST(StateParseErrors, FullMessageAndEscaping) {
  EXPECT_EQ(parse_error("S(0)[1]S(0)"),
            "ValueError: cannot parse state \"S(0)[1]S(0)\": position 7, token \"S(0)\": every S(0) must carry a "
            "shard-order index [k] or none may; S(0)[1] at position 0 does, this one does not");
  EXPECT_EQ(parse_error(std::string("R\x01")),
            "ValueError: cannot parse state \"R\\x01\": position 1, token \"\\x01\": expected a placement: R, S(d), "
            "S(d)[k], P, P(op), Replicate(), Shard(d) or Partial(op)");
  const std::string long_text = std::string(200, 'R') + "X";
  const std::string message = parse_error(long_text);
  EXPECT_NE(message.find("...: position 200, token \"X\""), std::string::npos) << message;
  EXPECT_LT(message.size(), 300U);
}

TEST(StateConstruction, DefaultOrderAndExplicitOrder) {
  const std::vector<Placement> p = {Placement::shard(0), Placement::replicate(), Placement::shard(0)};
  EXPECT_EQ(State(p).shard_axes(0), (Axes{0, 2}));
  const State reversed(p, {ShardOrderEntry{0, {2, 0}}});
  EXPECT_EQ(to_string(reversed), "S(0)[1]RS(0)[0]");
  EXPECT_EQ(reversed, parse_state("S(0)[1]RS(0)[0]"));
  // Entries are sorted by dim.
  const State two({Placement::shard(1), Placement::shard(0)}, {ShardOrderEntry{1, {0}}, ShardOrderEntry{0, {1}}});
  EXPECT_EQ(two.shard_order()[0].dim, 0);
  EXPECT_EQ(two, parse_state("S(1)S(0)"));
}

TEST(StateConstruction, InconsistentShardOrdersAreRejected) {
  const std::vector<Placement> p = {Placement::shard(0), Placement::replicate(), Placement::shard(0)};
  auto message = [&](std::vector<ShardOrderEntry> order) {
    try {
      State s(p, std::move(order));
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::ValueError);
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message({}).find("axis 0 is S(0) but the shard order of dim 0 does not list it"), std::string::npos);
  EXPECT_NE(message({{0, {0}}}).find("axis 2 is S(0)"), std::string::npos);
  EXPECT_NE(message({{0, {0, 1, 2}}}).find("lists axis 1 whose placement is R"), std::string::npos);
  EXPECT_NE(message({{0, {0, 0, 2}}}).find("lists axis 0 twice"), std::string::npos);
  EXPECT_NE(message({{0, {0, 5}}}).find("names axis 5 but the state has 3 axes"), std::string::npos);
  EXPECT_NE(message({{0, {0, 2}}, {0, {0}}}).find("lists dim 0 twice"), std::string::npos);
  EXPECT_NE(message({{0, {0, 2}}, {1, {}}}).find("shard order of dim 1 lists no axis"), std::string::npos);
  EXPECT_THROW((void)Placement::shard(-1), Error);
  EXPECT_THROW((void)parse_state("RR").placement(2), Error);
}

TEST(StateFit, PlacementCountAndDims) {
  EXPECT_NO_THROW(check_state(parse_state("S(1)R"), 2, 2));
  EXPECT_FALSE(state_misfit(parse_state("RP"), 2, 0).has_value());
  EXPECT_EQ(state_misfit(parse_state("RRR"), 2, 2), "3 placements for a mesh of 2 axes");
  EXPECT_EQ(state_misfit(parse_state("R"), 2, 2), "1 placement for a mesh of 2 axes");
  EXPECT_EQ(state_misfit(parse_state("RR"), 1, 2), "2 placements for a mesh of 1 axis");
  EXPECT_EQ(state_misfit(parse_state("RS(2)"), 2, 2), "S(2) on axis 1 shards dim 2 but the tensor has 2 dims (0..1)");
  EXPECT_EQ(state_misfit(parse_state("S(0)"), 1, 0), "S(0) on axis 0 shards dim 0 but the tensor has 0 dims (none)");
  EXPECT_EQ(state_misfit(parse_state("S(1)"), 1, 1), "S(1) on axis 0 shards dim 1 but the tensor has 1 dim (0..0)");
  try {
    check_state(parse_state("S(2)R"), 2, 2);
    FAIL() << "expected a ValueError";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "ValueError: state \"S(2)R\" does not fit: S(2) on axis 0 shards dim 2 but the tensor has 2 dims (0..1)");
  }
}

TEST(StateValue, HashingAndOrdering) {
  std::unordered_set<State> states;
  const std::vector<std::string> texts = {"RRR", "S(0)RR", "RS(0)R", "S(0)[0]S(0)[1]R", "S(0)[1]S(0)[0]R", "P(sum)RR",
                                          "P(avg)RR", "S(1)RR", "RRS(0)"};
  for (const auto& text : texts) states.insert(parse_state(text));
  for (const auto& text : texts) states.insert(parse_state(text));  // duplicates
  EXPECT_EQ(states.size(), texts.size());
  EXPECT_EQ(std::hash<State>{}(parse_state("S(0)S(0)")), std::hash<State>{}(parse_state("S(0)[0]S(0)[1]")));
  EXPECT_TRUE(states.contains(parse_state("Shard(0)[1], Shard(0)[0], Replicate()")));
  EXPECT_LT(Placement::replicate(), Placement::shard(0));
  EXPECT_LT(Placement::shard(0), Placement::shard(1));
  EXPECT_LT(Placement::shard(7), Placement::partial(ReduceOp::Sum));
  EXPECT_NE(parse_state("S(0)[0]S(0)[1]"), parse_state("S(0)[1]S(0)[0]"));
  EXPECT_EQ(State().ndim(), 0U);
  EXPECT_EQ(to_string(State()), "");
}

}  // namespace
}  // namespace meshloom
