// The graph planner's transitions and its tie-breaking.
//
// The graph (planner.hpp): one step changes one mesh axis, through one of six cases generated in this order,
//   1 S(a) -> S(b) all_to_all   2 S(a) -> R all_gather   3 P -> R all_reduce   4 R -> S(b) chunk
//   5 P -> S(b) reduce_scatter  6 R -> P (seed: P(sum) only; newest: the ops of source and target, no mixing
//   beyond {sum, avg}), then the newest planner's target-directed S(a) -> P(sum).
// Dijkstra pops (cost, push counter): among equal costs the state pushed first wins. The cases below are built so
// that several cheapest paths exist; each expectation is derived by hand from the FIFO order (the derivation is in
// the comment) and would change if the generation order did.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/state.hpp"

#include "planner_test_support.hpp"

namespace {

using namespace meshloom;
using namespace meshloom::testing;
using Counts = std::map<std::string, int>;

Plan plan_fixed(const PlanRequest& r) { return plan_redistribution(r, FixedCostModel()); }
Plan plan_comm(const PlanRequest& r, std::int64_t devices_per_host = 8) {
  return plan_redistribution(r, CommCostModel(r.mesh_shape, devices_per_host));
}

// ---- Each case: the shard-order rule -----------------------------------------------------------------------------

TEST(Transitions, Case1MovesTheLastAxisToTheEndOfTheTargetOrder) {
  // Axis 0 is the only axis of dim 0: S(0) -> S(1) appends it after axis 1.
  const Plan p = plan_fixed(request({2, 2}, {4, 4}, "S(0)S(1)", "S(1)[1]S(1)[0]"));
  EXPECT_EQ(trace(p), "S(0)S(1)->S(1)[1]S(1)[0]");
  EXPECT_EQ(p.cost, 1.0);
  EXPECT_EQ(comms(p), (Counts{{"all_to_all", 1}}));
  // The default order S(1)[0]S(1)[1] needs axis 0 first in dim 1's order: axis 1 must leave dim 1 and come back.
  const Plan q = plan_fixed(request({2, 2}, {4, 4}, "S(0)S(1)", "S(1)[0]S(1)[1]"));
  EXPECT_EQ(trace(q), "S(0)S(1)->S(0)R->S(1)R->S(1)[0]S(1)[1]");
  EXPECT_EQ(q.cost, 3.0);
}

TEST(Transitions, Case2GathersOnlyTheLastAxisOfAnOrder) {
  // A 1-dim tensor has no all_to_all (no other dim), so the gathers are forced.
  EXPECT_EQ(trace(plan_fixed(request({2, 2}, {4}, "S(0)[0]S(0)[1]", "RR"))), "S(0)[0]S(0)[1]->S(0)R->RR");
  EXPECT_EQ(trace(plan_fixed(request({2, 2}, {4}, "S(0)[1]S(0)[0]", "RR"))), "S(0)[1]S(0)[0]->RS(0)->RR");
}

TEST(Transitions, Case4AppendsTheAxisToTheEndOfTheOrder) {
  // R -> S(0) on axis 0 after axis 1 already shards dim 0: a non-default order, chunks cost 0.
  const Plan p = plan_fixed(request({2, 2}, {4}, "RS(0)", "S(0)[1]S(0)[0]"));
  EXPECT_EQ(trace(p), "RS(0)->S(0)[1]S(0)[0]");
  EXPECT_EQ(comm_counts(p), (Counts{{"chunk", 1}}));
}

TEST(Transitions, Case5AppendsTheAxisToTheEndOfTheOrder) {
  const Plan p = plan_fixed(request({2, 2}, {4}, "P(sum)S(0)", "S(0)[1]S(0)[0]"));
  EXPECT_EQ(trace(p), "P(sum)S(0)->S(0)[1]S(0)[0]");
  EXPECT_EQ(comms(p), (Counts{{"reduce_scatter", 1}}));
}

TEST(Transitions, Case3AllReducesAnyPartialAxis) {
  const Plan p = plan_comm(request({2, 2}, {8, 8}, "RP(sum)", "RR"));
  EXPECT_EQ(trace(p), "RP(sum)->RR");
  EXPECT_EQ(comms(p), (Counts{{"all_reduce", 1}}));
}

// ---- Ties: the generation order decides -------------------------------------------------------------------------

TEST(Transitions, Case1TieGoesToTheFirstPushedPath) {
  // S(0)S(1) -> RS(2), fixed weights: a2a(axis 1, S1->S2) + ag(axis 0) and ag(axis 0) + a2a(axis 1) both cost 3.
  // The source pushes its case-1 neighbours (cost 1) before its case-2 ones (cost 2); S(0)S(2), popped at cost 1,
  // pushes RS(2) at 3 before RS(1), popped at 2, can.
  const Plan p = plan_fixed(request({2, 2}, {4, 4, 4}, "S(0)S(1)", "RS(2)"));
  EXPECT_EQ(trace(p), "S(0)S(1)->S(0)S(2)->RS(2)");
  EXPECT_EQ(p.cost, 3.0);
}

TEST(Transitions, Case2TieGoesToTheLowerDim) {
  // S(0)S(1) -> RR, fixed weights: two all_gathers in either order (cost 4). Case 2 walks the sharded dims
  // ascending, so RS(1) (dim 0's axis gathered) is pushed before S(0)R and reaches RR first.
  const Plan p = plan_fixed(request({2, 2}, {4, 4}, "S(0)S(1)", "RR"));
  EXPECT_EQ(trace(p), "S(0)S(1)->RS(1)->RR");
  EXPECT_EQ(p.cost, 4.0);
}

TEST(Transitions, Case3TieDependsOnTheInterHostRule) {
  // The digest's tie-break example. With 8 devices per host both all_reduces cost 7.8217 and axis 0's successor
  // RRP(sum) is pushed first; with 2 devices per host axis 0 crosses hosts, so axis 2's all_reduce is cheaper.
  const PlanRequest r = request({2, 2, 2}, {8, 8, 8}, "P(sum)RP(sum)", "RRR");
  const Plan p8 = plan_comm(r, 8);
  EXPECT_EQ(trace(p8), "P(sum)RP(sum)->RRP(sum)->RRR");
  EXPECT_EQ(p8.cost, 7.821748559097063 + 7.821748559097063);
  const Plan p2 = plan_comm(r, 2);
  EXPECT_EQ(trace(p2), "P(sum)RP(sum)->P(sum)RR->RRR");
  EXPECT_EQ(p2.cost, 19.9206056459019);
}

TEST(Transitions, Case4TieGoesToTheLowerAxis) {
  // RR -> S(0)S(1): two chunks in either order, cost 0. Case 4 walks axes ascending, then dims ascending, so
  // S(0)R is the first neighbour and its child S(0)S(1) is pushed before RS(1)'s.
  const Plan p = plan_fixed(request({2, 2}, {4, 4}, "RR", "S(0)S(1)"));
  EXPECT_EQ(trace(p), "RR->S(0)R->S(0)S(1)");
  EXPECT_EQ(p.cost, 0.0);
}

TEST(Transitions, Case5TieGoesToTheLowerAxis) {
  // P(sum)P(sum) -> S(0)S(1), fixed weights: two reduce_scatters (cost 4) in either order.
  const Plan p = plan_fixed(request({2, 2}, {4, 4}, "P(sum)P(sum)", "S(0)S(1)"));
  EXPECT_EQ(trace(p), "P(sum)P(sum)->S(0)P(sum)->S(0)S(1)");
  EXPECT_EQ(p.cost, 4.0);
  // The same with the comm model: the reduce_scatter on axis 0 comes first.
  const Plan q = plan_comm(request({2, 2, 2}, {8, 8, 8}, "P(sum)P(sum)R", "S(0)[0]S(0)[1]R"));
  EXPECT_EQ(trace(q), "P(sum)P(sum)R->S(0)P(sum)R->S(0)[0]S(0)[1]R");
}

// ---- Case 6: R -> P, seed and newest ----------------------------------------------------------------------------

TEST(Transitions, NewestHasAnEdgePerReduceOpOfSourceAndTarget) {
  // P(max)R -> RP(max) needs R -> P(max) on axis 1. The newest graph has it: P(max)P(max) (cost 0) is popped
  // before RR and pushes RP(max) first.
  const Plan p = plan_comm(request({2, 2}, {8, 8, 8}, "P(max)R", "RP(max)"));
  EXPECT_EQ(trace(p), "P(max)R->P(max)P(max)->RP(max)");
  EXPECT_EQ(p.cost, 7.821748559097063);
  EXPECT_EQ(comm_counts(p), (Counts{{"all_reduce", 1}, {"replicate_to_partial", 1}}));
}

TEST(Transitions, SeedOnlyHasReplicateToPartialSum) {
  PlanRequest r = request({2, 2}, {8, 8, 8}, "P(max)R", "RP(max)");
  r.variant = PartialVariant::Seed;
  expect_error([&] { (void)plan_comm(r); }, ErrorKind::ValueError,
               {"no redistribution path from P(max)R to RP(max)", "seed transitions",
                "Partial changes its reduce op only through Replicate"});
  // P(sum) targets are reachable in both.
  PlanRequest s = request({2, 2}, {8, 8}, "P(sum)R", "RP(sum)");
  s.variant = PartialVariant::Seed;
  EXPECT_EQ(trace(plan_comm(s)), "P(sum)R->P(sum)P(sum)->RP(sum)");
}

TEST(Transitions, NoStateMixesPartialOpsBeyondSumAndAvg) {
  // P(sum)R -> RP(max): the state P(sum)P(max) is not in the newest graph, so the path goes through RR (an
  // all_reduce on axis 0 then a local R -> P(max)) instead of P(sum)P(max), which would have been pushed first.
  const Plan p = plan_comm(request({2, 2}, {8, 8, 8}, "P(sum)R", "RP(max)"));
  EXPECT_EQ(trace(p), "P(sum)R->RR->RP(max)");
  EXPECT_EQ(p.cost, 7.821748559097063);
  // Sum and avg may mix: P(sum)P(avg) is a state, reached at cost 0 and expanded before RR.
  const Plan q = plan_comm(request({2, 2}, {8, 8, 8}, "P(sum)R", "RP(avg)"));
  EXPECT_EQ(trace(q), "P(sum)R->P(sum)P(avg)->RP(avg)");
  EXPECT_EQ(q.cost, 7.821748559097063);
}

TEST(Transitions, PartialToAnotherPartialOnOneAxisIsRejected) {
  expect_error([] { (void)plan_comm(request({2, 2}, {8, 8}, "P(sum)R", "P(max)R")); }, ErrorKind::ValueError,
               {"Redistribution from one partial type (sum) to another (max) on mesh axis 0 is unsupported"});
  expect_error([] { (void)plan_comm(request({2, 2}, {8, 8}, "RP(sum)", "RP(avg)")); }, ErrorKind::ValueError,
               {"one partial type (sum)", "to another (avg)", "mesh axis 1", "unsupported"});
  // Also for the greedy planner, which would otherwise try the step.
  expect_error([] { (void)plan_comm(request({4}, {8}, "P(sum)", "P(product)", PlannerKind::Greedy)); },
               ErrorKind::ValueError, {"one partial type (sum) to another (product)"});
}

// ---- The newest S -> P(sum) edge -----------------------------------------------------------------------------------

TEST(Transitions, ShardToPartialSumIsATargetDirectedLocalStep) {
  const Plan p = plan_comm(request({2, 2}, {8, 8}, "S(0)R", "P(sum)R"));
  EXPECT_EQ(trace(p), "S(0)R->P(sum)R");
  EXPECT_EQ(p.cost, 0.0);
  EXPECT_EQ(comm_counts(p), (Counts{{"shard_to_partial", 1}}));
  // PyTorch's test_redistribute_to_partial: S0,S1 -> R,P is allowed (S -> P(sum) on axis 1).
  const Plan q = plan_comm(request({2, 2}, {8, 8}, "S(0)S(1)", "RP(sum)"));
  EXPECT_EQ(comm_counts(q).count("shard_to_partial"), 1U);
  EXPECT_EQ(q.steps.back().collective, Collective::ShardToPartial);
}

TEST(Transitions, ShardToPartialSumOnlyWhereTheTargetHasIt) {
  // S(0)R -> RP(sum): axis 0's target is R, so its shard is gathered, never turned partial. Axis 1's target is
  // P(sum): chunking axis 1 first makes axis 0's gather cheaper (from 4 shards instead of 2), and axis 1 then takes
  // the free S -> P(sum) edge.
  const Plan p = plan_comm(request({2, 2}, {8, 8, 8}, "S(0)R", "RP(sum)"));
  EXPECT_EQ(trace(p), "S(0)R->S(0)S(1)->RS(1)->RP(sum)");
  EXPECT_EQ(p.cost, 7.205437139774265);
  ASSERT_EQ(p.steps.size(), 3U);
  EXPECT_EQ(p.steps[2].collective, Collective::ShardToPartial);
  EXPECT_EQ(p.steps[2].axes, (std::vector<std::size_t>{1}));
  // Not for other ops: S -> P(max) goes through R.
  const Plan q = plan_comm(request({2, 2}, {8, 8}, "S(0)R", "P(max)R"));
  EXPECT_EQ(trace(q), "S(0)R->RR->P(max)R");
  EXPECT_EQ(comm_counts(q).count("shard_to_partial"), 0U);
}

TEST(Transitions, ShardToPartialSumMixesNoOpBeyondSumAndAvg) {
  // S(0)RP(min) -> S(0)[0]P(sum)S(0)[1]: S -> P(sum) on axis 1 while axis 2 holds P(min) would pass through
  // S(0)P(sum)P(min), a state no edge may reach (PyTorch refuses max/min mixed with sum: they do not commute).
  PlanRequest r = request({2, 2, 2}, {4}, "S(0)RP(min)", "S(0)[0]P(sum)S(0)[1]");
  r.itemsize = 2;
  const Plan p = meshloom::plan_redistribution(r, meshloom::CommCostModel({2, 2, 2}, 3));
  for (const State& s : p.path) {
    std::set<ReduceOp> ops;
    for (std::size_t a = 0; a < 3; ++a) {
      if (s.placement(a).is_partial()) ops.insert(s.placement(a).op());
    }
    EXPECT_TRUE(ops.size() <= 1 || ops == (std::set<ReduceOp>{ReduceOp::Sum, ReduceOp::Avg})) << trace(p);
  }
  EXPECT_EQ(p.path.back(), r.dst);
}

TEST(Transitions, SeedHasNoShardToPartialEdge) {
  PlanRequest r = request({2, 2}, {8, 8}, "S(0)R", "P(sum)R");
  r.variant = PartialVariant::Seed;
  const Plan p = plan_comm(r);
  EXPECT_EQ(trace(p), "S(0)R->RR->P(sum)R");
  EXPECT_EQ(comm_counts(p), (Counts{{"all_gather", 1}, {"replicate_to_partial", 1}}));
}

// ---- Limits ---------------------------------------------------------------------------------------------------------

TEST(Transitions, StateBudgetStopsALargeSearch) {
  PlanRequest r = request({2, 2, 2, 2}, {8, 8, 8, 8}, "S(0)[0]S(0)[1]S(0)[2]S(0)[3]", "S(3)[3]S(3)[2]S(3)[1]S(3)[0]");
  r.state_budget = 10;
  expect_error([&] { (void)plan_comm(r); }, ErrorKind::RuntimeError,
               {"planning exceeded its state budget of 10 states", "raise the budget"});
  r.state_budget = kDefaultStateBudget;
  const Plan p = plan_comm(r);
  EXPECT_GT(p.states_explored, 10U);
  EXPECT_EQ(trace(p).substr(0, 28), "S(0)[0]S(0)[1]S(0)[2]S(0)[3]");
  // A budget of what the search settled is enough.
  r.state_budget = p.states_explored;
  EXPECT_EQ(plan_comm(r), p);
}

TEST(Transitions, SourceEqualsTargetIsAPlanWithoutSteps) {
  const Plan p = plan_comm(request({2, 2}, {8, 8}, "S(0)[1]S(0)[0]", "S(0)[1]S(0)[0]"));
  EXPECT_TRUE(p.steps.empty());
  EXPECT_EQ(trace(p), "S(0)[1]S(0)[0]");
  EXPECT_EQ(p.cost, 0.0);
  EXPECT_EQ(p.states_explored, 1U);
}

}  // namespace
