// The plans the planner compares as they run (as_run_pool): plan_k_cheapest's and the cheapest path of the search
// with merged edges. The defining property, at every request of a (2,2) mesh with its axes flattened under a
// calibration where merging pays (every group of 4 costs less than the same collective of 2 at the same size): no
// plan of the 64 cheapest by their edges runs cheaper than the planner's pick, and every plan of the pool moves the
// data right.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "meshloom/plan/simulator.hpp"
#include "planner_test_support.hpp"
#include "support/calibration_curves.hpp"

namespace meshloom {
namespace {

using testing::request;

// A latency floor, then bandwidth, on groups of n ranks of one host, times `scale`.
GroupCurve curve(const char* collective, std::int64_t n, double scale) {
  return testing::piecewise(collective, {n, 1, n},
                            {{16, 10 * scale}, {128, 20 * scale}, {1024, 80 * scale}, {65536, 3000 * scale}});
}

// The 2-rank all_reduce is the slow one (3x the others), as on this VM's (2,2) at 8-64 MiB, and every collective
// of the 4-rank group costs 0.6x the same collective of 2 ranks at the same size.
Calibration merging_pays() {
  Calibration c = testing::four_ranks_on_one_host();
  for (const char* name : {"all_reduce", "reduce_scatter", "all_gather", "all_to_all"}) {
    const double two = std::string(name) == "all_reduce" ? 3.0 : 1.0;
    c.groups.push_back(curve(name, 2, two));
    c.groups.push_back(curve(name, 4, 0.6 * two));
  }
  return c;
}

double as_run(const PlanRequest& r, const Plan& plan, const CostModel& model) {
  double total = 0;
  for (const double c : price_plan_steps(r, plan, model)) total += c;
  return total;
}

TEST(AsRunPool, NoneOfTheSixtyFourCheapestRunsCheaperThanThePick) {
  const CalibratedCostModel model(merging_pays(), {});
  const std::vector<std::string> states = {"RR",        "P(sum)P(sum)", "P(sum)R",        "RP(sum)",
                                           "S(0)R",     "RS(1)",        "S(0)S(1)",       "S(1)S(0)",
                                           "S(0)P(sum)", "P(sum)S(1)",  "S(0)[0]S(0)[1]", "S(0)[1]S(0)[0]",
                                           "S(1)[0]S(1)[1]"};
  std::size_t compared = 0, merged_picks = 0, beyond_the_pool = 0;
  for (const std::vector<std::int64_t>& tensor : {std::vector<std::int64_t>{8, 16}, {6, 4}, {3, 8}}) {
    for (const auto& src : states) {
      for (const auto& dst : states) {
        if (src == dst) continue;
        PlanRequest r = request({2, 2}, tensor, src, dst);
        r.flattened = {{0, 1}};
        if (!plans_as_run(r, model)) {
          // Planned by the one search: no step of its plan merges otherwise than its edges did, so its cost is
          // what it runs at.
          const Plan plan = plan_redistribution(r, model);
          EXPECT_DOUBLE_EQ(plan.cost, as_run(r, plan, model)) << src << " -> " << dst << ": " << trace(plan);
          continue;
        }
        ++compared;
        const std::string what = src + " -> " + dst + " on " + std::to_string(tensor[0]) + "x" + std::to_string(tensor[1]);
        const Plan pick = plan_redistribution(r, model);
        EXPECT_DOUBLE_EQ(pick.cost, as_run(r, pick, model)) << what;
        const std::vector<Plan> cheapest = plan_k_cheapest(r, model, kMaxCheapestPlans);
        double best = pick.cost;
        for (const Plan& p : cheapest) best = std::min(best, as_run(r, p, model));
        EXPECT_LE(pick.cost, best * (1 + 1e-12)) << what << ": " << trace(pick);
        const std::vector<Plan> pool = as_run_pool(r, model);
        double best_of_k = as_run(r, pool.front(), model);
        for (std::size_t i = 0; i < std::min(kAsRunPool, pool.size()); ++i) {
          best_of_k = std::min(best_of_k, as_run(r, pool[i], model));
        }
        if (pick.cost < best_of_k * (1 - 1e-12)) ++beyond_the_pool;
        merged_picks += std::any_of(pick.steps.begin(), pick.steps.end(), [](const PlanStep& s) { return s.merged; });
        for (const Plan& p : pool) {
          const SimulationResult sim = simulate(r, p);
          EXPECT_TRUE(sim.ok) << what << ": " << trace(p) << ": " << sim.error;
        }
      }
    }
  }
  // The property was checked where it can fail: many requests, picks that merge, and picks the 16 cheapest by their
  // edges alone would have missed.
  EXPECT_GT(compared, 100U);
  EXPECT_GT(merged_picks, 20U);
  EXPECT_GT(beyond_the_pool, 0U);
}

// Both axes of the group move when only the shard order of their dim changes: the plans are compared as they run.
TEST(AsRunPool, AShardOrderChangeMovesBothAxesOfTheGroup) {
  const CalibratedCostModel model(merging_pays(), {});
  PlanRequest r = request({2, 2}, {64, 64}, "S(0)[0]S(0)[1]", "S(0)[1]S(0)[0]");
  r.flattened = {{0, 1}};
  ASSERT_TRUE(plans_as_run(r, model));
  const Plan pick = plan_redistribution(r, model);
  EXPECT_DOUBLE_EQ(pick.cost, as_run(r, pick, model)) << trace(pick);
  for (const Plan& p : plan_k_cheapest(r, model, kMaxCheapestPlans)) {
    EXPECT_LE(pick.cost, as_run(r, p, model) * (1 + 1e-12)) << trace(p);
  }
  // Unflattened, one axis moving alone, or none: the one search.
  r.flattened.clear();
  EXPECT_FALSE(plans_as_run(r, model));
  PlanRequest one = request({2, 2}, {64, 64}, "S(0)R", "S(1)R");
  one.flattened = {{0, 1}};
  EXPECT_FALSE(plans_as_run(one, model));
  PlanRequest inner = request({2, 2}, {64, 64}, "S(0)[0]S(0)[1]", "S(0)R");  // only axis 1 gathers
  inner.flattened = {{0, 1}};
  EXPECT_FALSE(plans_as_run(inner, model));
}

// Where even the cheapest plan runs a merged step the calibration has no curve for, no plan can be priced as it
// runs: a clear ValueError, never a plan that costs +inf. Where a plan avoids it, that plan.
TEST(AsRunPool, NoPlanPricedAsItRunsIsAValueError) {
  Calibration two_only = testing::four_ranks_on_one_host();
  for (const char* name : {"all_reduce", "reduce_scatter", "all_gather", "all_to_all"}) {
    two_only.groups.push_back(curve(name, 2, 1.0));
  }
  const CalibratedCostModel model(two_only, {});
  PlanRequest r = request({2, 2}, {8}, "S(0)S(0)", "RR");
  r.flattened = {{0, 1}};
  ASSERT_TRUE(plans_as_run(r, model));
  try {
    (void)plan_redistribution(r, model);
    ADD_FAILURE() << "expected a ValueError";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ValueError);
    EXPECT_EQ(e.message(), "no plan from S(0)[0]S(0)[1] to RR can be priced as it runs: the cheapest runs all_gather on "
                           "axes 0,1 as one collective, which the cost model cannot price (no curve of its group's "
                           "shape)");
  }
  PlanRequest reduce = request({2, 2}, {8}, "P(sum)P(sum)", "RR");
  reduce.flattened = {{0, 1}};
  const Plan plan = plan_redistribution(reduce, model);
  EXPECT_TRUE(std::isfinite(plan.cost)) << trace(plan);
  EXPECT_DOUBLE_EQ(plan.cost, as_run(reduce, plan, model)) << trace(plan);
}

// Greedy chooses by placements alone, but on a request compared as it runs its plan is priced so too, like the
// graph planner's: its steps' costs add up to its price as it runs, and path_cost keeps its edges' sum. A merged
// step the model cannot price so costs +inf, and so does the plan (the launcher then names the missing curve).
TEST(AsRunPool, GreedysPlanIsPricedAsItRunsToo) {
  const CalibratedCostModel model(merging_pays(), {});
  std::size_t merged = 0;
  for (const auto& [src, dst] : std::vector<std::pair<const char*, const char*>>{
           {"S(0)S(0)", "RR"}, {"P(sum)P(sum)", "RR"}, {"S(0)S(1)", "RR"}, {"RR", "S(0)S(1)"}, {"P(sum)P(sum)", "S(0)S(1)"}}) {
    PlanRequest r = request({2, 2}, {8, 16}, src, dst);
    r.flattened = {{0, 1}};
    r.planner = PlannerKind::Greedy;
    ASSERT_TRUE(plans_as_run(r, model)) << src << " -> " << dst;
    const Plan plan = plan_redistribution(r, model);
    double steps = 0;
    for (const PlanStep& step : plan.steps) {
      steps += step.cost;
      merged += step.merged ? 1 : 0;
    }
    EXPECT_DOUBLE_EQ(plan.cost, steps) << trace(plan);
    EXPECT_DOUBLE_EQ(plan.cost, as_run(r, plan, model)) << trace(plan);
    PlanRequest unflattened = r;
    unflattened.flattened.clear();
    EXPECT_DOUBLE_EQ(plan.path_cost, plan_redistribution(unflattened, model).cost) << trace(plan);
  }
  EXPECT_GT(merged, 0U);  // some plan merged, priced as its group's collective
  Calibration two_only = testing::four_ranks_on_one_host();
  for (const char* name : {"all_reduce", "reduce_scatter", "all_gather", "all_to_all"}) {
    two_only.groups.push_back(curve(name, 2, 1.0));
  }
  PlanRequest r = request({2, 2}, {8}, "S(0)S(0)", "RR");
  r.flattened = {{0, 1}};
  r.planner = PlannerKind::Greedy;
  const Plan unpriced = plan_redistribution(r, CalibratedCostModel(two_only, {}));
  ASSERT_EQ(unpriced.steps.size(), 1U);
  EXPECT_TRUE(unpriced.steps[0].merged);
  EXPECT_TRUE(std::isinf(unpriced.steps[0].cost));
  EXPECT_TRUE(std::isinf(unpriced.cost));
  EXPECT_TRUE(std::isfinite(unpriced.path_cost));
}

}  // namespace
}  // namespace meshloom
