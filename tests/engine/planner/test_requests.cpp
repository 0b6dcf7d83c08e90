// Request validation (every error names the offending value) and the size of the graph the search explores.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/state.hpp"

#include "planner_test_support.hpp"

namespace {

using namespace meshloom;
using namespace meshloom::testing;

void expect_invalid(const PlanRequest& r, std::initializer_list<std::string> phrases) {
  expect_error([&] { (void)plan_redistribution(r, FixedCostModel()); }, ErrorKind::ValueError, phrases);
}

PlanRequest ok() { return request({2, 2}, {8, 8}, "S(0)R", "RS(1)"); }

TEST(Requests, MeshAxes) {
  PlanRequest r = ok();
  r.mesh_shape = {};
  expect_invalid(r, {"mesh []", "1 to 12 mesh axes"});
  r = request(Shape(13, 1), {8}, "RRRRRRRRRRRRR", "RRRRRRRRRRRRR");
  expect_invalid(r, {"mesh [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]", "1 to 12 mesh axes"});
  r = ok();
  r.mesh_shape = {2, 0};
  expect_invalid(r, {"mesh [2, 0]", "axis 1 has size 0"});
  r.mesh_shape = {-3, 2};
  expect_invalid(r, {"axis 0 has size -3"});
  r.mesh_shape = {2, (std::int64_t{1} << 31) + 1};
  expect_invalid(r, {"axis 1 has size 2147483649", "1 to 2^31"});
}

TEST(Requests, TensorDims) {
  PlanRequest r = ok();
  r.tensor_shape = Shape(17, 1);
  r.src = parse_state("RR");
  r.dst = parse_state("RR");
  expect_invalid(r, {"has 17 dims", "at most 16"});
  r = ok();
  r.tensor_shape = {8, 0};
  expect_invalid(r, {"tensor_shape [8, 0]", "dim 1 has size 0", ">= 1"});
  r.tensor_shape = {-1, 8};
  expect_invalid(r, {"dim 0 has size -1"});
}

TEST(Requests, OverflowingSizes) {
  PlanRequest r = ok();
  r.tensor_shape = {std::int64_t{1} << 40, std::int64_t{1} << 30};
  expect_invalid(r, {"tensor_shape", "1099511627776 * 1073741824", "overflows"});
  r.tensor_shape = {std::int64_t{1} << 30, std::int64_t{1} << 30};
  r.itemsize = 64;
  expect_invalid(r, {"tensor bytes", "1152921504606846976 * 64", "overflows"});
}

TEST(Requests, Itemsize) {
  PlanRequest r = ok();
  r.itemsize = 0;
  expect_invalid(r, {"itemsize 0", "[1, 64]"});
  r.itemsize = 65;
  expect_invalid(r, {"itemsize 65"});
}

TEST(Requests, StatesThatDoNotFit) {
  PlanRequest r = ok();
  r.src = parse_state("S(2)R");
  expect_invalid(r, {"state \"S(2)R\" does not fit", "S(2) on axis 0 shards dim 2", "the tensor has 2 dims (0..1)"});
  r = ok();
  r.dst = parse_state("RRR");
  expect_invalid(r, {"state \"RRR\" does not fit"});
  r = ok();
  r.dst = State();
  expect_invalid(r, {"does not fit"});
}

TEST(Requests, Coordinate) {
  PlanRequest r = ok();
  r.coordinate = {0};
  expect_invalid(r, {"coordinate [0]", "1 entries for a mesh of 2 axes"});
  r.coordinate = {0, 2};
  expect_invalid(r, {"coordinate [0, 2]", "entry 1", "outside axis 1 of size 2"});
  r.coordinate = {-1, 0};
  expect_invalid(r, {"coordinate [-1, 0]", "entry 0"});
  r.coordinate = {1, 1};
  EXPECT_NO_THROW((void)plan_redistribution(r, FixedCostModel()));
}

TEST(Requests, FlattenedGroups) {
  PlanRequest r = ok();
  r.flattened = {{0}};
  expect_invalid(r, {"at least 2 axes, got 1"});
  r.flattened = {{1, 0}};
  expect_invalid(r, {"ascending", "got axis 0"});
  r.flattened = {{0, 2}};
  expect_invalid(r, {"< 2", "got axis 2"});
  r.flattened = {{0, 0}};
  expect_invalid(r, {"ascending", "got axis 0"});
}

TEST(Requests, PartialToAnotherPartial) {
  PlanRequest r = ok();
  r.src = parse_state("P(min)R");
  r.dst = parse_state("P(max)R");
  expect_invalid(r, {"one partial type (min) to another (max) on mesh axis 0"});
}

TEST(Requests, MixedPartialOpsAreRefusedAsPyTorchRefusesThem) {
  // P(max)P(sum) has no one meaning: to RR it reduced max first, to RS(0) sum first (the values differ).
  PlanRequest r = ok();
  r.src = parse_state("P(max)P(sum)");
  r.dst = parse_state("RR");
  expect_invalid(r, {"src: state \"P(max)P(sum)\"", "Mixed Partial reduce types are not supported",
                     "Found reduce ops: {'max', 'sum'}"});
  r.src = parse_state("RR");
  r.dst = parse_state("P(min)P(avg)");
  expect_invalid(r, {"dst: state \"P(min)P(avg)\"", "{'avg', 'min'}"});
  // Sum and avg commute: they may mix.
  r.src = parse_state("P(sum)P(avg)");
  r.dst = parse_state("RR");
  EXPECT_NO_THROW((void)meshloom::plan_redistribution(r, meshloom::FixedCostModel()));
}

// ---- How big the graph is -----------------------------------------------------------------------------------------

// Makes every partial axis cost 1000 and everything else nothing: a state's distance from RR..R is 1000 times its
// partial axes, so the all-partial target is the one state settled last and states_explored counts every state
// reachable from RR..R (one partial kind: sum).
class PartialAxesCost final : public CostModel {
public:
  [[nodiscard]] double step_cost(const StepCostInput& step) const override {
    return step.collective == Collective::ReplicateToPartial || step.collective == Collective::ShardToPartial ? 1000.0
                                                                                                                : 0.0;
  }
  [[nodiscard]] std::string_view name() const noexcept override { return "partial-axes"; }
};

TEST(GraphSize, ReachableStatesForFourDims) {
  // The reference: N = 4 tensor dims, M = 2..6 axes, one partial kind: 40, 296, 2,424, 21,872, 216,352 states.
  const std::size_t expected[] = {40, 296, 2424, 21872, 216352};
  for (std::size_t m = 2; m <= 6; ++m) {
    SCOPED_TRACE(m);
    const PlanRequest r = request(Shape(m, 2), {8, 8, 8, 8}, std::string(m, 'R'), [m] {
      std::string s;
      for (std::size_t i = 0; i < m; ++i) s += "P(sum)";
      return s;
    }());
    const Plan p = plan_redistribution(r, PartialAxesCost());
    EXPECT_EQ(p.states_explored, expected[m - 2]);
    EXPECT_EQ(p.cost, 1000.0 * static_cast<double>(m));
  }
}

TEST(GraphSize, SeedGraphIsTheSameSizeWithSumPartials) {
  // The seed always has R -> P(sum), the newest graph has it when a state holds P(sum): same graph here. The S ->
  // P(sum) edges add no state.
  PlanRequest r = request(Shape(3, 2), {8, 8, 8, 8}, "RRR", "P(sum)P(sum)P(sum)");
  r.variant = PartialVariant::Seed;
  EXPECT_EQ(plan_redistribution(r, PartialAxesCost()).states_explored, 296U);
}

TEST(GraphSize, NoPartialKindMeansNoPartialStates) {
  // Without a partial in source or target the newest graph has no R -> P edge: placements R, S(0..3) per axis.
  // On 2 axes: 5*5 placements plus one extra order for each of the 4 dims both axes can shard = 29 states, an
  // upper bound on what any search settles.
  PlanRequest r = request({2, 2}, {8, 8, 8, 8}, "RR", "S(3)[1]S(3)[0]");
  const Plan p = plan_redistribution(r, FixedCostModel());
  EXPECT_LE(p.states_explored, 29U);
}

}  // namespace
