// send_cost: the point-to-point price of every cost model (one send between neighbouring coordinates of an axis,
// as a pipeline stage sends its activations to the next).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cost_test_support.hpp"
#include "support/calibration_curves.hpp"

namespace meshloom {
namespace {

using cost_test::error_of;
using cost_test::step_input;

constexpr double kInf = std::numeric_limits<double>::infinity();

// A model that prices collectives only: the interface's default send price.
class CollectivesOnly final : public CostModel {
public:
  [[nodiscard]] double step_cost(const StepCostInput& /*step*/) const override { return 1.0; }
  [[nodiscard]] std::string_view name() const noexcept override { return "collectives_only"; }
};

TEST(SendCost, DefaultCannotPriceASend) {
  const CollectivesOnly model;
  const std::vector<std::int64_t> mesh{2, 4};
  EXPECT_EQ(model.send_cost(mesh, 0, 1024), kInf);
  // An axis of size 1 has no neighbour: nothing leaves the rank.
  EXPECT_EQ(model.send_cost({1, 4}, 0, 1024), 0.0);
  EXPECT_EQ(error_of([&] { (void)model.send_cost(mesh, 2, 1024); }, ErrorKind::ValueError),
            "ValueError: send on axis 2: out of range for a mesh of 2 axes");
  EXPECT_EQ(error_of([&] { (void)model.send_cost(mesh, 0, -1); }, ErrorKind::ValueError),
            "ValueError: send of -1 bytes: must be >= 0");
}

TEST(SendCost, FixedPricesEverySendAtItsWeight) {
  const FixedCostModel model;
  EXPECT_EQ(model.weights().send, 1.0);
  EXPECT_EQ(model.send_cost({4, 2}, 0, 1), 1.0);
  EXPECT_EQ(model.send_cost({4, 2}, 1, std::int64_t{1} << 40), 1.0);
  EXPECT_EQ(model.send_cost({1, 2}, 0, 1024), 0.0);
  EXPECT_EQ(FixedCostModel(FixedWeights{.send = 2.5}).send_cost({4, 2}, 1, 8), 2.5);
  EXPECT_EQ(error_of([] { (void)FixedCostModel(FixedWeights{.send = -1}); }, ErrorKind::ValueError),
            "ValueError: cost weight -1.000000 must be finite and >= 0");
  (void)error_of([] { (void)FixedCostModel(FixedWeights{.send = std::nan("")}); }, ErrorKind::ValueError);
}

TEST(SendCost, CommIsOneHopOfTheAxis) {
  // (2,4) on hosts of 4: axis 0 crosses hosts (2.7 us per hop, 87.7 x 0.22 GB/s), axis 1 does not (0.6 us, 87.7).
  const std::vector<std::int64_t> mesh{2, 4};
  const CommCostModel model(mesh, 4);
  const double gib = 1.0 / 1024;  // 1 MiB
  EXPECT_EQ(model.send_cost(mesh, 0, 1 << 20), 6.6 + 2.7 + gib / (87.7 * 0.22) * 1e6);
  EXPECT_NEAR(model.send_cost(mesh, 0, 1 << 20), 59.9149, 1e-4);  // the header's example
  EXPECT_EQ(model.send_cost(mesh, 1, 1 << 20), 6.6 + 0.6 + gib / 87.7 * 1e6);
  // Nothing to send: the latency alone.
  EXPECT_EQ(model.send_cost(mesh, 1, 0), 6.6 + 0.6);
  EXPECT_EQ(model.send_cost({1, 4}, 0, 1 << 20), 0.0);
  EXPECT_EQ(error_of([&] { (void)model.send_cost({2, 4, 2}, 2, 8); }, ErrorKind::ValueError),
            "ValueError: send on axis 2: the comm model was built for a mesh of 2 axes");
  // On 2 ranks an all_gather of a 1 MiB shard is one hop of 1 MiB: the send's price. On 4 ranks it is 3 hops.
  const double pair_gather = model.step_cost(step_input(Collective::AllGather, 0, mesh, 1 << 19, 2, 1 << 20));
  EXPECT_DOUBLE_EQ(model.send_cost(mesh, 0, 1 << 20), pair_gather);
  const double ring_gather = model.step_cost(step_input(Collective::AllGather, 1, mesh, 1 << 20, 4, 1 << 20));
  EXPECT_LT(model.send_cost(mesh, 1, 1 << 20), ring_gather);
}

GroupCurve broadcast_curve(GroupShape shape, std::vector<CurvePoint> points) {
  return testing::piecewise("broadcast", shape, std::move(points));
}

// Two hosts of four ranks; 2-rank broadcast curves within a host and across the two.
Calibration two_hosts() {
  Calibration c;
  c.backend = "nccl";
  c.timing = "single_shot";
  c.world = 8;
  c.mesh_shape = {2, 4};
  c.mesh_names = {"pp", "tp"};
  c.rank_hosts = {0, 0, 0, 0, 1, 1, 1, 1};
  c.groups.push_back(broadcast_curve({2, 1, 2}, {{1024, 5}, {1048576, 50}}));
  c.groups.push_back(broadcast_curve({2, 2, 1}, {{1024, 20}, {1048576, 400}}));
  return c;
}

TEST(SendCost, CalibratedPricesNeighbourPairsByTheirShape) {
  const CalibratedCostModel model(two_hosts(), {});
  // (2,4): pp neighbours {r, r+4} sit on two hosts; tp neighbours {r, r+1} on one.
  EXPECT_EQ(model.send_cost({2, 4}, 0, 1048576), 400.0);
  EXPECT_EQ(model.send_cost({2, 4}, 1, 1048576), 50.0);
  EXPECT_EQ(model.send_cost({2, 4}, 1, 1024), 5.0);
  // (4,2): pp neighbours {0,2} on one host, {2,4} across: the slowest pair sets the cost.
  EXPECT_EQ(model.send_cost({4, 2}, 0, 1024), 20.0);
  // (8): neighbours {3,4} cross; (4) of the first four ranks: every pair on host 0.
  EXPECT_EQ(model.send_cost({8}, 0, 1024), 20.0);
  EXPECT_EQ(model.send_cost({4}, 0, 1024), 5.0);
  EXPECT_EQ(model.send_cost({1, 8}, 0, 1024), 0.0);
  // More ranks than the calibrated job: +infinity, unless extrapolating (the placement repeated).
  EXPECT_EQ(model.send_cost({16}, 0, 1024), kInf);
  const CalibratedCostModel guess(two_hosts(), {}, {.extrapolate = true});
  EXPECT_EQ(guess.send_cost({16}, 0, 1024), 20.0);
  EXPECT_EQ(guess.send_cost({4, 4}, 1, 1024), 5.0);
}

// On the calibrated mesh an axis of 2 ranks is its own pair: its sends take its broadcast correction (its own as-run
// points too), as its steps take theirs; a longer axis' correction, measured on its 4-rank groups, prices no pair.
TEST(SendCost, CalibratedAxisOfTwoRanksTakesItsBroadcastCorrection) {
  Calibration c = two_hosts();
  c.axis_corrections = {
      {.axes = {0}, .collective = "broadcast", .factors = {{1024, 0.5, 10}, {1048576, 0.5, 10}}, .as_run = {}},
      {.axes = {1}, .collective = "broadcast", .factors = {{1024, 2.0, 10}, {1048576, 2.0, 10}}, .as_run = {}}};
  const CalibratedCostModel model(c, {});
  EXPECT_EQ(model.send_cost({2, 4}, 0, 1048576), 400.0 * 0.5);
  EXPECT_EQ(model.send_cost({2, 4}, 1, 1048576), 50.0);
  EXPECT_EQ(model.send_cost({4, 2}, 0, 1024), 20.0);  // another mesh: the curves alone
  c.axis_corrections[0].as_run = {{1024, 3.0, 5}};
  EXPECT_EQ(CalibratedCostModel(c, {}).send_cost({2, 4}, 0, 1048576), 400.0 * 0.5 * 3.0);
}

TEST(SendCost, CalibratedShapesNeverMeasuredAreRefusedUnlessExtrapolating) {
  Calibration c = two_hosts();
  c.groups.pop_back();  // no curve across hosts
  const CalibratedCostModel model(c, {});
  EXPECT_EQ(model.send_cost({2, 4}, 0, 1024), kInf);
  EXPECT_EQ(model.send_cost({2, 4}, 1, 1024), 5.0);
  // Extrapolating: the nearest measured 2-rank shape (bus factor 1 on both sides: no scaling).
  const CalibratedCostModel guess(c, {}, {.extrapolate = true});
  EXPECT_EQ(guess.send_cost({2, 4}, 0, 1024), 5.0);
  // No broadcast curve at all: nothing to start from.
  Calibration none = two_hosts();
  none.groups.clear();
  none.groups.push_back(testing::piecewise("all_reduce", {2, 1, 2}, {{1024, 5}}));
  EXPECT_EQ(CalibratedCostModel(none, {}, {.extrapolate = true}).send_cost({2, 4}, 1, 1024), kInf);
}

TEST(SendCost, CalibratedWithoutCurvesUsesTheAxisBroadcastFit) {
  Calibration c;
  c.backend = "mpi";
  c.world = 8;
  c.mesh_shape = {2, 4};
  c.mesh_names = {"pp", "tp"};
  c.axes["pp"]["broadcast"] = CollectiveFit{.alpha_us = 30, .busbw_gbps = 10, .r2 = 0.99, .samples = 8};
  c.axes["tp"]["all_reduce"] = CollectiveFit{.alpha_us = 10, .busbw_gbps = 50, .r2 = 0.99, .samples = 8};
  const CalibratedCostModel model(c, c.mesh_names);
  // alpha + bytes / (busbw * 1e3): 30 + 1e6 / 1e4.
  EXPECT_EQ(model.send_cost({2, 4}, 0, 1000000), 30.0 + 1000000.0 / 1e4);
  EXPECT_EQ(model.send_cost({2, 4}, 1, 1000000), kInf);  // tp has no broadcast fit
  // Names follow the model's mesh names, not the calibrated mesh's: tp first, then pp.
  const CalibratedCostModel swapped(c, {"tp", "pp"});
  EXPECT_EQ(swapped.send_cost({4, 2}, 1, 1000000), 130.0);
  EXPECT_EQ(swapped.send_cost({4, 2}, 0, 1000000), kInf);
  EXPECT_EQ(CalibratedCostModel(c, {}).send_cost({2, 4}, 0, 8), kInf);  // no names: no fit to look up
  // A fit prices its axis at the size it was measured on (pp: 2), as the steps' fits do; elsewhere only when
  // extrapolating.
  EXPECT_EQ(model.send_cost({4, 4}, 0, 1000000), kInf);
  EXPECT_EQ(CalibratedCostModel(c, c.mesh_names, {.extrapolate = true}).send_cost({4, 4}, 0, 1000000), 130.0);
}

}  // namespace
}  // namespace meshloom
