// PyTorch's greedy planner (generate_greedy_transform_infos) and auto's choice between greedy and graph.
//
// Greedy ignores the shard order. On a 1-axis mesh it emits one step when the placements differ and none when
// they are equal (the newest PyTorch; the seed always emitted one). Otherwise, when the source has more than one
// shard, it walks the axes from last to first and replicates an axis first when its target S(d) sits on a dim
// that the axes before it shard differently in the current and the target placements (nested or misaligned
// sharding); then it walks first to last to the real target. Auto picks greedy when both states have the default
// shard order and the graph otherwise, as PyTorch's _gen_transform_infos does.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/state.hpp"

#include "planner_test_support.hpp"
#include "support/expect_error.hpp"

namespace {

using namespace meshloom;
using namespace meshloom::testing;
using Counts = std::map<std::string, int>;

Plan greedy(Shape mesh, Shape tensor, std::string_view src, std::string_view dst) {
  const PlanRequest r = request(std::move(mesh), std::move(tensor), src, dst, PlannerKind::Greedy);
  return plan_redistribution(r, FixedCostModel());
}

TEST(Greedy, NestedShardingIsReplicatedFirst) {
  // Axis 1's target S(0) would sit under axis 0's S(0) now but under nothing in the target: gather it, gather
  // axis 0, then chunk axis 1 again.
  const Plan p = greedy({2, 2}, {8, 8}, "S(0)S(0)", "RS(0)");
  EXPECT_EQ(trace(p), "S(0)[0]S(0)[1]->S(0)R->RR->RS(0)");
  EXPECT_EQ(p.cost, 4.0);
  EXPECT_EQ(comm_counts(p), (Counts{{"all_gather", 2}, {"chunk", 1}}));
  EXPECT_EQ(p.states_explored, 4U);  // greedy "visits" the states of its path
}

TEST(Greedy, MisalignedShardingIsReplicatedFirst) {
  // S(0)S(1) -> S(1)S(0): axis 1's target S(0) is under axis 0's S(0) now, under S(1) in the target.
  EXPECT_EQ(trace(greedy({2, 2}, {8, 8}, "S(0)S(1)", "S(1)S(0)")), "S(0)S(1)->S(0)R->S(1)R->S(1)S(0)");
  // The same dims in the same order need no detour: S(0)S(1) -> S(0)[0]S(0)[1] is one all_to_all on axis 1.
  EXPECT_EQ(trace(greedy({2, 2}, {8, 8}, "S(0)S(1)", "S(0)S(0)")), "S(0)S(1)->S(0)[0]S(0)[1]");
}

TEST(Greedy, ThreeAxesN6) {
  EXPECT_EQ(trace(greedy({2, 2, 2}, {8, 8, 8}, "S(0)S(0)S(0)", "S(1)S(1)S(1)")),
            "S(0)[0]S(0)[1]S(0)[2]->S(0)[0]S(0)[1]R->S(0)RR->S(1)RR->S(1)[0]S(1)[1]R->S(1)[0]S(1)[1]S(1)[2]");
}

TEST(Greedy, UnshardedSourceWalksFirstToLast) {
  // No shard in the source: only the forward walk.
  EXPECT_EQ(trace(greedy({2, 2}, {8, 8}, "P(sum)P(sum)", "S(0)S(0)")), "P(sum)P(sum)->S(0)P(sum)->S(0)[0]S(0)[1]");
  EXPECT_EQ(trace(greedy({2, 2}, {8, 8}, "RR", "S(1)S(0)")), "RR->S(1)R->S(1)S(0)");
}

TEST(Greedy, ShardToPartialSumIsOneStep) {
  const Plan p = greedy({2, 2}, {8, 8}, "S(0)R", "P(sum)R");
  EXPECT_EQ(trace(p), "S(0)R->P(sum)R");
  EXPECT_EQ(comm_counts(p), (Counts{{"shard_to_partial", 1}}));
  EXPECT_EQ(p.cost, 0.0);
  // The seed has no such step: PyTorch's greedy plan holds it and its executor refuses it ("redistribute from
  // S(0) to P(sum) not supported yet"); refused up front, as the graph planner under the seed goes through R.
  PlanRequest seed = request({2, 2}, {8, 8}, "S(0)R", "P(sum)R", PlannerKind::Greedy);
  seed.variant = PartialVariant::Seed;
  expect_error([&] { (void)plan_redistribution(seed, FixedCostModel()); }, ErrorKind::ValueError,
               {"redistribute from S(0) to P(sum) on mesh axis 0 is not supported (in S(0)R -> P(sum)R) "
                "under the seed variant; the newest variant runs it as shard_to_partial"});
  seed.planner = PlannerKind::Graph;
  EXPECT_EQ(trace(plan_redistribution(seed, FixedCostModel())), "S(0)R->RR->P(sum)R");
}

TEST(Greedy, OneDimensionalMesh) {
  for (const char* s : {"R", "S(0)", "S(1)", "P(sum)", "P(max)"}) {
    SCOPED_TRACE(s);
    const Plan same = greedy({4}, {8, 8}, s, s);
    EXPECT_TRUE(same.steps.empty());  // newest PyTorch: no step when the placements are equal
    EXPECT_EQ(trace(same), s);
    EXPECT_EQ(same.cost, 0.0);
  }
  const struct {
    const char* src;
    const char* dst;
    Collective collective;
  } rows[] = {
      {"S(0)", "R", Collective::AllGather},       {"S(1)", "S(0)", Collective::AllToAll},
      {"P(sum)", "R", Collective::AllReduce},     {"P(avg)", "S(1)", Collective::ReduceScatter},
      {"R", "S(1)", Collective::Chunk},           {"R", "P(max)", Collective::ReplicateToPartial},
      {"S(0)", "P(sum)", Collective::ShardToPartial},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(std::string(row.src) + " -> " + row.dst);
    const Plan p = greedy({4}, {8, 8}, row.src, row.dst);
    ASSERT_EQ(p.steps.size(), 1U);
    EXPECT_EQ(p.steps[0].collective, row.collective);
    EXPECT_EQ(trace(p), std::string(row.src) + "->" + row.dst);
  }
}

TEST(Greedy, CostsAreTheModelsStepCosts) {
  const PlanRequest r = request({2, 2, 2}, {8, 8, 8}, "S(0)RR", "RRR", PlannerKind::Greedy);
  const Plan p = plan_redistribution(r, CommCostModel(r.mesh_shape, 8));
  EXPECT_EQ(p.cost, 7.210874279548531);
}

TEST(Auto, DefaultOrdersPlanGreedily) {
  PlanRequest r = request({2, 2, 2}, {8, 8, 8}, "S(0)S(0)S(0)", "S(1)S(1)S(1)", PlannerKind::Auto);
  EXPECT_EQ(resolve_planner(r), PlannerKind::Greedy);
  const CommCostModel model(r.mesh_shape, 8);
  const Plan a = plan_redistribution(r, model);
  r.planner = PlannerKind::Greedy;
  EXPECT_EQ(a, plan_redistribution(r, model));
  // The graph plans it differently (N5 vs N6).
  r.planner = PlannerKind::Graph;
  EXPECT_NE(trace(a), trace(plan_redistribution(r, model)));
}

TEST(Auto, AnyNonDefaultOrderPlansWithTheGraph) {
  const CommCostModel model({2, 2, 2}, 8);
  for (const auto& [src, dst] : {std::pair{"S(0)[1]S(0)[0]S(0)[2]", "RS(0)[0]S(0)[1]"},  // source
                                 std::pair{"S(0)[0]S(0)[1]S(0)[2]", "S(0)[1]S(0)[0]R"},  // target
                                 std::pair{"S(0)[2]S(0)[1]S(0)[0]", "S(1)[1]S(1)[0]R"}}) {
    SCOPED_TRACE(std::string(src) + " -> " + dst);
    PlanRequest r = request({2, 2, 2}, {8, 8, 8}, src, dst, PlannerKind::Auto);
    EXPECT_EQ(resolve_planner(r), PlannerKind::Graph);
    const Plan a = plan_redistribution(r, model);
    r.planner = PlannerKind::Graph;
    EXPECT_EQ(a, plan_redistribution(r, model));
  }
}

TEST(Auto, ExplicitChoicesStand) {
  PlanRequest r = request({2, 2}, {8, 8}, "S(0)[1]S(0)[0]", "RR", PlannerKind::Greedy);
  EXPECT_EQ(resolve_planner(r), PlannerKind::Greedy);
  r = request({2, 2}, {8, 8}, "S(0)S(0)", "RR", PlannerKind::Graph);
  EXPECT_EQ(resolve_planner(r), PlannerKind::Graph);
  // Partial and replicated states have the default order (there is none to differ).
  r = request({2, 2}, {8, 8}, "P(sum)R", "RR", PlannerKind::Auto);
  EXPECT_EQ(resolve_planner(r), PlannerKind::Greedy);
}

}  // namespace
