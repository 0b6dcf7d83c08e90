// FixedCostModel: PyTorch's seed weights per collective, configurable.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "cost_test_support.hpp"

namespace meshloom {
namespace {

using cost_test::error_of;
using cost_test::request222;
using cost_test::step_input;

const std::vector<std::int64_t> kMesh{2, 2, 2};

double cost(const CostModel& model, Collective c) { return model.step_cost(step_input(c, 1, kMesh, 512, 2, 1024)); }

TEST(FixedModel, SeedWeightsPerCollective) {
  const FixedCostModel model;
  EXPECT_EQ(model.name(), "fixed");
  EXPECT_EQ(model.weights(), FixedWeights{});
  EXPECT_EQ(cost(model, Collective::AllReduce), 4.0);
  EXPECT_EQ(cost(model, Collective::AllToAll), 1.0);
  EXPECT_EQ(cost(model, Collective::AllGather), 2.0);
  EXPECT_EQ(cost(model, Collective::ReduceScatter), 2.0);
  EXPECT_EQ(cost(model, Collective::Chunk), 0.0);
  EXPECT_EQ(cost(model, Collective::ReplicateToPartial), 0.0);
  EXPECT_EQ(cost(model, Collective::ShardToPartial), 0.0);
}

TEST(FixedModel, WeightsIgnoreSizeAndAxis) {
  const FixedCostModel model;
  const std::vector<std::int64_t> big{64, 64};
  EXPECT_EQ(model.step_cost(step_input(Collective::AllGather, 0, big, std::int64_t{1} << 40, 1, std::int64_t{1} << 42)), 2.0);
  EXPECT_EQ(model.step_cost(step_input(Collective::AllGather, 1, kMesh, 1, 8, 4)), 2.0);
}

TEST(FixedModel, CustomWeights) {
  const FixedWeights w{.all_reduce = 10, .all_to_all = 0.5, .all_gather = 3.25, .reduce_scatter = 7, .chunk = 0.125};
  const FixedCostModel model(w);
  EXPECT_EQ(model.weights(), w);
  EXPECT_EQ(cost(model, Collective::AllReduce), 10.0);
  EXPECT_EQ(cost(model, Collective::AllToAll), 0.5);
  EXPECT_EQ(cost(model, Collective::AllGather), 3.25);
  EXPECT_EQ(cost(model, Collective::ReduceScatter), 7.0);
  // chunk prices both local R -> S and R -> P; S -> P(sum) (the target edge) is always free.
  EXPECT_EQ(cost(model, Collective::Chunk), 0.125);
  EXPECT_EQ(cost(model, Collective::ReplicateToPartial), 0.125);
  EXPECT_EQ(cost(model, Collective::ShardToPartial), 0.0);
}

TEST(FixedModel, ZeroWeightsAreAllowed) {
  const FixedCostModel model(FixedWeights{0, 0, 0, 0, 0});
  EXPECT_EQ(cost(model, Collective::AllReduce), 0.0);
}

TEST(FixedModel, InvalidWeightsAreRejected) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const FixedWeights& w : {FixedWeights{.all_reduce = -1}, FixedWeights{.all_to_all = -0.5},
                                FixedWeights{.all_gather = inf}, FixedWeights{.reduce_scatter = nan},
                                FixedWeights{.chunk = -inf}}) {
    const std::string what = error_of([&] { (void)FixedCostModel(w); }, ErrorKind::ValueError);
    EXPECT_TRUE(what.starts_with("ValueError: cost weight ")) << what;
    EXPECT_TRUE(what.ends_with(" must be finite and >= 0")) << what;
  }
  EXPECT_EQ(error_of([] { (void)FixedCostModel(FixedWeights{.all_reduce = -1}); }, ErrorKind::ValueError),
            "ValueError: cost weight -1.000000 must be finite and >= 0");
}

TEST(FixedModel, PlannerSumsTheWeights) {
  // Two routes cost 4: all_gather, all_gather, chunk (2 + 2 + 0) and all_to_all, all_gather, all_to_all
  // (1 + 2 + 1). The all_to_all edge S(0) -> S(1) is generated first (case 1 before case 2), so its path reaches
  // RS(0)R with the earlier push counter and wins the tie, as in PyTorch's find_min_cost_path.
  const Plan plan = plan_redistribution(request222("S(0)[0]S(0)[1]R", "RS(0)R"), FixedCostModel());
  EXPECT_EQ(trace(plan), "S(0)[0]S(0)[1]R->S(0)S(1)R->RS(1)R->RS(0)R");
  EXPECT_EQ(plan.cost, 4.0);
  ASSERT_EQ(plan.steps.size(), 3U);
  EXPECT_EQ(plan.steps[0].collective, Collective::AllToAll);
  EXPECT_EQ(plan.steps[0].cost, 1.0);
  EXPECT_EQ(plan.steps[1].collective, Collective::AllGather);
  EXPECT_EQ(plan.steps[1].cost, 2.0);
  EXPECT_EQ(plan.steps[2].collective, Collective::AllToAll);
  EXPECT_EQ(plan.steps[2].cost, 1.0);
  // With all_to_all dearer than 2, the gathers alone are cheapest: 2 + 2 + 0.
  const Plan gathers = plan_redistribution(request222("S(0)[0]S(0)[1]R", "RS(0)R"), FixedCostModel(FixedWeights{.all_to_all = 3}));
  EXPECT_EQ(trace(gathers), "S(0)[0]S(0)[1]R->S(0)RR->RRR->RS(0)R");
  EXPECT_EQ(gathers.cost, 4.0);
  // Spec §8 O4 (fixed weights, graph): cost 3.
  const Plan o4 = plan_redistribution(request222("S(0)[0]S(0)[1]R", "RS(1)S(0)"), FixedCostModel());
  EXPECT_EQ(trace(o4), "S(0)[0]S(0)[1]R->S(0)S(1)R->RS(1)R->RS(1)S(0)");
  EXPECT_EQ(o4.cost, 3.0);
}

TEST(FixedModel, CustomWeightsChangeThePlan) {
  // Seed weights: S(0) -> S(1) on one axis is one all_to_all (1 < all_gather 2 + chunk 0).
  const auto req = request222("S(0)RR", "S(1)RR");
  EXPECT_EQ(trace(plan_redistribution(req, FixedCostModel())), "S(0)RR->S(1)RR");
  // An all_to_all dearer than all_gather + chunk: the planner gathers and chunks instead.
  const Plan plan = plan_redistribution(req, FixedCostModel(FixedWeights{.all_to_all = 5}));
  EXPECT_EQ(trace(plan), "S(0)RR->RRR->S(1)RR");
  EXPECT_EQ(plan.cost, 2.0);
}

}  // namespace
}  // namespace meshloom
