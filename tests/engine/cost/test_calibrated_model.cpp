// CalibratedCostModel: alpha + bus_factor(n) * bytes / (busbw * 1e3) per (axis, collective), from a calibration.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "cost_test_support.hpp"
#include "support/calibration_curves.hpp"

namespace meshloom {
namespace {

using cost_test::error_of;
using cost_test::request;
using cost_test::step_input;

constexpr double kInf = std::numeric_limits<double>::infinity();

CollectiveFit fit(double alpha, double busbw) { return CollectiveFit{alpha, busbw, 0.99, 10}; }

// A (2,4) mesh "dp" x "tp" with every collective fitted on both axes.
Calibration full_calibration() {
  Calibration c;
  c.backend = "mpi";
  c.world = 8;
  c.mesh_shape = {2, 4};
  c.mesh_names = {"dp", "tp"};
  for (const char* axis : {"dp", "tp"}) {
    const bool dp = std::string(axis) == "dp";
    c.axes[axis]["all_reduce"] = fit(dp ? 20.0 : 10.0, dp ? 2.0 : 50.0);
    c.axes[axis]["all_gather"] = fit(dp ? 15.0 : 8.0, dp ? 2.5 : 40.0);
    c.axes[axis]["reduce_scatter"] = fit(dp ? 15.5 : 8.5, dp ? 2.5 : 40.0);
    c.axes[axis]["all_to_all"] = fit(dp ? 30.0 : 12.0, dp ? 1.0 : 20.0);
    c.axes[axis]["broadcast"] = fit(5.0, 10.0);
  }
  return c;
}

// ---- bus_factor -------------------------------------------------------------------------------------------

TEST(BusFactor, NcclTestsFactors) {
  EXPECT_EQ(bus_factor("all_reduce", 2), 1.0);
  EXPECT_EQ(bus_factor("all_reduce", 4), 1.5);
  EXPECT_EQ(bus_factor("all_reduce", 8), 1.75);
  EXPECT_EQ(bus_factor("all_reduce", 3), 2.0 * 2.0 / 3.0);
  for (const char* c : {"all_gather", "reduce_scatter", "all_to_all"}) {
    SCOPED_TRACE(c);
    EXPECT_EQ(bus_factor(c, 2), 0.5);
    EXPECT_EQ(bus_factor(c, 4), 0.75);
    EXPECT_EQ(bus_factor(c, 8), 0.875);
    EXPECT_EQ(bus_factor(c, 1), 0.0);
  }
  EXPECT_EQ(bus_factor("all_reduce", 1), 0.0);
  EXPECT_EQ(bus_factor("broadcast", 1), 1.0);
  EXPECT_EQ(bus_factor("broadcast", 16), 1.0);
}

TEST(BusFactor, UnknownCollective) {
  EXPECT_EQ(error_of([] { (void)bus_factor("chunk", 4); }, ErrorKind::ValueError),
            "ValueError: unknown collective 'chunk' (expected all_reduce, all_gather, reduce_scatter, all_to_all or "
            "broadcast)");
  (void)error_of([] { (void)bus_factor("AllReduce", 4); }, ErrorKind::ValueError);
}

// ---- step_cost ----------------------------------------------------------------------------------------------

TEST(CalibratedModel, StepCostFormula) {
  const Calibration c = full_calibration();
  const CalibratedCostModel model(c, c.mesh_names);
  EXPECT_EQ(model.name(), "calibrated");
  EXPECT_EQ(model.calibration(), c);
  const std::vector<std::int64_t> mesh{2, 4};
  const std::int64_t local = 4096;
  auto cost = [&](Collective col, std::size_t axis) {
    // global_numel and source_shards are not used by this model: only local bytes are.
    return model.step_cost(step_input(col, axis, mesh, 999, 7, local));
  };
  // tp (n = 4): all_reduce 10 + 1.5 * 4096 / (50 * 1e3)
  EXPECT_EQ(cost(Collective::AllReduce, 1), 10.0 + 1.5 * 4096.0 / (50.0 * 1e3));
  EXPECT_DOUBLE_EQ(cost(Collective::AllReduce, 1), 10.12288);
  // all_gather counts the gathered output: 4 local shards.
  EXPECT_EQ(cost(Collective::AllGather, 1), 8.0 + 0.75 * (4096.0 * 4) / (40.0 * 1e3));
  EXPECT_DOUBLE_EQ(cost(Collective::AllGather, 1), 8.3072);
  EXPECT_EQ(cost(Collective::ReduceScatter, 1), 8.5 + 0.75 * 4096.0 / (40.0 * 1e3));
  EXPECT_EQ(cost(Collective::AllToAll, 1), 12.0 + 0.75 * 4096.0 / (20.0 * 1e3));
  // dp (n = 2).
  EXPECT_EQ(cost(Collective::AllReduce, 0), 20.0 + 1.0 * 4096.0 / (2.0 * 1e3));
  EXPECT_DOUBLE_EQ(cost(Collective::AllReduce, 0), 22.048);
  EXPECT_EQ(cost(Collective::AllGather, 0), 15.0 + 0.5 * (4096.0 * 2) / (2.5 * 1e3));
  EXPECT_EQ(cost(Collective::ReduceScatter, 0), 15.5 + 0.5 * 4096.0 / (2.5 * 1e3));
  EXPECT_EQ(cost(Collective::AllToAll, 0), 30.0 + 0.5 * 4096.0 / (1.0 * 1e3));
  EXPECT_DOUBLE_EQ(cost(Collective::AllToAll, 0), 32.048);
}

TEST(CalibratedModel, LocalStepsCostNothing) {
  const Calibration c = full_calibration();
  const Calibration none = [&] {
    Calibration n = c;
    n.axes.clear();
    return n;
  }();
  const std::vector<std::int64_t> mesh{2, 4};
  for (const Calibration* cal : {&c, &none}) {
    const CalibratedCostModel model(*cal, cal->mesh_names);
    for (const Collective col : {Collective::Chunk, Collective::ReplicateToPartial, Collective::ShardToPartial}) {
      EXPECT_EQ(model.step_cost(step_input(col, 0, mesh, 512, 2, 1 << 20)), 0.0);
      EXPECT_EQ(model.step_cost(step_input(col, 1, mesh, 512, 2, 1 << 20)), 0.0);
    }
  }
}

TEST(CalibratedModel, GroupsOfOneRankCostNothing) {
  // Axis "pp" of size 1 has no fit at all: it still costs 0, a group of one rank moves nothing.
  Calibration c = full_calibration();
  c.mesh_shape = {1, 2, 4};
  c.mesh_names = {"pp", "dp", "tp"};
  const CalibratedCostModel model(c, c.mesh_names);
  const std::vector<std::int64_t> mesh{1, 2, 4};
  for (const Collective col : {Collective::AllGather, Collective::AllReduce, Collective::ReduceScatter, Collective::AllToAll}) {
    EXPECT_EQ(model.step_cost(step_input(col, 0, mesh, 512, 1, 2048)), 0.0);
  }
}

TEST(CalibratedModel, MissingFitsCostInfinity) {
  Calibration c = full_calibration();
  c.axes["dp"].erase("all_reduce");
  c.axes.erase("tp");
  const CalibratedCostModel model(c, c.mesh_names);
  const std::vector<std::int64_t> mesh{2, 4};
  EXPECT_EQ(model.step_cost(step_input(Collective::AllReduce, 0, mesh, 512, 1, 2048)), kInf);   // no collective
  EXPECT_EQ(model.step_cost(step_input(Collective::AllGather, 1, mesh, 512, 1, 2048)), kInf);   // no axis
  EXPECT_EQ(model.step_cost(step_input(Collective::AllGather, 0, mesh, 512, 1, 2048)),
            15.0 + 0.5 * (2048.0 * 2) / (2.5 * 1e3));
  // Names index the mesh axes: an axis beyond them, or a name not in the calibration, has no fit.
  const std::vector<std::int64_t> mesh3{2, 4, 2};
  EXPECT_EQ(model.step_cost(step_input(Collective::AllGather, 2, mesh3, 512, 1, 2048)), kInf);
  const CalibratedCostModel renamed(c, {"data", "tensor"});
  EXPECT_EQ(renamed.step_cost(step_input(Collective::AllGather, 0, mesh, 512, 1, 2048)), kInf);
  // gap_list names each gap's axis, by name in the text for fits keyed by name (the advisor ranks a gap on an axis a
  // tensor moves first by it: matching " on axis 1:" in the text missed these).
  const std::vector<CalibratedCostModel::Gap> gaps = model.gap_list(mesh);
  ASSERT_EQ(gaps.size(), 5U);
  EXPECT_EQ(gaps[0].axes, std::vector<std::size_t>{0});
  EXPECT_EQ(gaps[0].collective, "all_reduce");
  EXPECT_EQ(gaps[0].text, "all_reduce on axis 'dp': no fit");
  for (std::size_t i = 1; i < gaps.size(); ++i) EXPECT_EQ(gaps[i].axes, std::vector<std::size_t>{1}) << gaps[i].text;
  EXPECT_EQ(gaps[1].text, "all_reduce on axis 'tp': no fit");
  // A fit without positive bandwidth (possible only when built in code) cannot be used either.
  Calibration zero = full_calibration();
  zero.axes["dp"]["all_gather"].busbw_gbps = 0;
  EXPECT_EQ(CalibratedCostModel(zero, zero.mesh_names).step_cost(step_input(Collective::AllGather, 0, mesh, 512, 1, 2048)),
            kInf);
}

TEST(CalibratedModel, AFitPricesItsAxisOnlyAtTheSizeItWasMeasuredOn) {
  // dp was measured on groups of 2 (the calibrated mesh is (2, 4)): on a mesh where dp has 4 ranks its fit is a
  // guess, priced only when extrapolating (the bus factor of 4 ranks), refused (+infinity, a gap) otherwise.
  const Calibration c = full_calibration();
  const std::vector<std::int64_t> wider{4, 4};
  const StepCostInput gather = step_input(Collective::AllGather, 0, wider, 512, 1, 2048);
  const CalibratedCostModel model(c, c.mesh_names);
  EXPECT_EQ(model.step_cost(gather), kInf);
  const std::vector<std::int64_t> calibrated{2, 4};
  EXPECT_EQ(model.step_cost(step_input(Collective::AllGather, 1, wider, 512, 1, 2048)),
            model.step_cost(step_input(Collective::AllGather, 1, calibrated, 512, 1, 2048)));  // tp: 4 ranks, as fitted
  const std::vector<CalibratedCostModel::Gap> gaps = model.gap_list(wider);
  ASSERT_EQ(gaps.size(), 4U);
  EXPECT_EQ(gaps[0].text, "all_reduce on axis 'dp': fitted on 2 ranks, not 4");
  const CalibratedCostModel guessing(c, c.mesh_names, {.extrapolate = true});
  EXPECT_EQ(guessing.step_cost(gather), 15.0 + 0.75 * (2048.0 * 4) / (2.5 * 1e3));
  EXPECT_TRUE(guessing.gap_list(wider).empty());
}

// ---- through the planner ----------------------------------------------------------------------------------

TEST(CalibratedModel, PlannerStepCostsUseLocalBytes) {
  // (2,4) mesh, (16,16) float32 = 1024 bytes. S(0)S(1) -> RR gathers both axes, in either order:
  //   dp first: dp (local 8x4 = 128 bytes, n 2) 15 + 0.5 * 256 / 2500 = 15.0512, then tp (local 16x4 = 256
  //             bytes, n 4) 8 + 0.75 * 1024 / 40000 = 8.0192: 23.0704
  //   tp first: tp (128 bytes) 8.0096, then dp (512 bytes) 15.2048: 23.2144
  // so the planner gathers on the slow axis while the shard is small.
  const Calibration c = full_calibration();
  const CalibratedCostModel model(c, c.mesh_names);
  const Plan plan = plan_redistribution(request({2, 4}, {16, 16}, "S(0)S(1)", "RR"), model);
  ASSERT_EQ(plan.steps.size(), 2U) << trace(plan);
  EXPECT_EQ(trace(plan), "S(0)S(1)->RS(1)->RR");
  EXPECT_EQ(plan.steps[0].bytes, 128);
  EXPECT_EQ(plan.steps[0].cost, 15.0 + 0.5 * (128.0 * 2) / (2.5 * 1e3));
  EXPECT_EQ(plan.steps[1].bytes, 256);
  EXPECT_EQ(plan.steps[1].cost, 8.0 + 0.75 * (256.0 * 4) / (40.0 * 1e3));
  EXPECT_EQ(plan.cost, plan.steps[0].cost + plan.steps[1].cost);
  const double tp_first = (8.0 + 0.75 * (128.0 * 4) / (40.0 * 1e3)) + (15.0 + 0.5 * (512.0 * 2) / (2.5 * 1e3));
  EXPECT_LT(plan.cost, tp_first);
}

TEST(CalibratedModel, PlannerAvoidsAMissingCollective) {
  // dp has no all_reduce fit: P(sum) on dp is reduce-scattered and gathered instead.
  Calibration c = full_calibration();
  c.axes["dp"].erase("all_reduce");
  const Plan plan = plan_redistribution(request({2, 4}, {16, 16}, "P(sum)R", "RR"), CalibratedCostModel(c, c.mesh_names));
  EXPECT_EQ(trace(plan), "P(sum)R->S(0)R->RR");
  ASSERT_EQ(plan.steps.size(), 2U);
  EXPECT_EQ(plan.steps[0].collective, Collective::ReduceScatter);
  EXPECT_EQ(plan.steps[1].collective, Collective::AllGather);
  EXPECT_TRUE(std::isfinite(plan.cost));
  // With the fit, the direct all_reduce (20 + 1 * 1024 / 2000) beats reduce_scatter + all_gather (> 30).
  EXPECT_EQ(trace(plan_redistribution(request({2, 4}, {16, 16}, "P(sum)R", "RR"),
                                      CalibratedCostModel(full_calibration(), c.mesh_names))),
            "P(sum)R->RR");
}

TEST(CalibratedModel, PlannerFailsWhenEveryPathNeedsAMissingFit) {
  // Nothing but a dp collective turns S(0) on dp into R, and dp has none.
  Calibration c = full_calibration();
  c.axes.erase("dp");
  const std::string what = error_of(
      [&] { (void)plan_redistribution(request({2, 4}, {16, 16}, "S(0)R", "RR"), CalibratedCostModel(c, c.mesh_names)); },
      ErrorKind::ValueError);
  EXPECT_TRUE(what.starts_with("ValueError: no redistribution path from S(0)R to RR")) << what;
  // Steps that only use tp still plan.
  EXPECT_EQ(trace(plan_redistribution(request({2, 4}, {16, 16}, "RS(0)", "RR"), CalibratedCostModel(c, c.mesh_names))),
            "RS(0)->RR");
}

TEST(CalibratedModel, TerribleBandwidthChangesThePlan) {
  // (2,4) mesh, (128,128) float32 = 64 KiB, S(0)R -> S(1)R: dp must turn S(0) into S(1).
  // The fixed model prices that as one all_to_all on dp (weight 1) against anything with an all_gather (>= 2),
  // so it takes the all_to_all. A calibration whose dp all_to_all is fast (1 us, 100 GB/s) agrees.
  // Measured at 1 MB/s (busbw 0.001 GB/s), dp's all_to_all of the 32 KiB local shard would cost
  // 1 + 0.5 * 32768 / 1 = 16385 us, so the calibrated planner routes around it, through tp:
  //   chunk dim 1 on tp (free), gather dp on the now quarter-size shard (8 KiB: 15 + 0.5 * 16384 / 2500
  //   = 18.2768 us), gather tp (16 KiB local, 64 KiB gathered: 8 + 0.75 * 65536 / 40000 = 9.2288 us), chunk dim
  //   1 on dp (free): 27.5056 us, cheaper even than gathering dp directly and re-chunking (28.1072 us).
  // The two traces differ: same endpoints, different collectives and axes.
  Calibration fast = full_calibration();
  fast.axes["dp"]["all_to_all"] = fit(1.0, 100.0);
  Calibration slow = fast;
  slow.axes["dp"]["all_to_all"].busbw_gbps = 0.001;
  const auto req = request({2, 4}, {128, 128}, "S(0)R", "S(1)R");
  const Plan fixed = plan_redistribution(req, FixedCostModel());
  const Plan quick = plan_redistribution(req, CalibratedCostModel(fast, fast.mesh_names));
  const Plan calibrated = plan_redistribution(req, CalibratedCostModel(slow, slow.mesh_names));
  EXPECT_EQ(trace(fixed), "S(0)R->S(1)R");
  EXPECT_EQ(trace(quick), "S(0)R->S(1)R");
  EXPECT_EQ(quick.cost, 1.0 + 0.5 * 32768.0 / (100.0 * 1e3));
  EXPECT_EQ(trace(calibrated), "S(0)R->S(0)S(1)->RS(1)->RR->S(1)R");
  EXPECT_NE(trace(fixed), trace(calibrated));
  EXPECT_EQ(calibrated.cost, (15.0 + 0.5 * (8192.0 * 2) / (2.5 * 1e3)) + (8.0 + 0.75 * (16384.0 * 4) / (40.0 * 1e3)));
  EXPECT_LT(calibrated.cost, 15.0 + 0.5 * (32768.0 * 2) / (2.5 * 1e3));  // gather dp directly, then chunk
  for (const PlanStep& s : calibrated.steps) EXPECT_NE(s.collective, Collective::AllToAll) << trace(calibrated);
  // The avoided step, priced on its own.
  const std::vector<std::int64_t> mesh{2, 4};
  EXPECT_EQ(CalibratedCostModel(slow, slow.mesh_names).step_cost(step_input(Collective::AllToAll, 0, mesh, 16384, 2, 32768)),
            1.0 + 0.5 * 32768.0 / (0.001 * 1e3));
}

}  // namespace
}  // namespace meshloom

namespace meshloom {
namespace {

// ---- keyed curves: group shapes, piecewise curves, pricing any layout ------------------------------------------

namespace curves {

using testing::piecewise;

// Four ranks on one host, measured on a (2,2) mesh: groups of 2 and the flattened group of 4.
Calibration keyed_calibration() {
  Calibration c = testing::four_ranks_on_one_host();
  c.groups.push_back(piecewise("all_reduce", {2, 1, 2}, {{1024, 10}, {4096, 20}, {65536, 200}}));
  c.groups.push_back(piecewise("all_reduce", {4, 1, 4}, {{1024, 15}, {4096, 30}, {65536, 300}}));
  c.groups.push_back(piecewise("all_gather", {2, 1, 2}, {{1024, 8}, {65536, 100}}));
  return c;
}

}  // namespace curves

TEST(GroupShapes, HostsSpannedAndRanksPerHostOfEveryAxis) {
  // (2,4) on two hosts of four: dp groups {0,4},{1,5},.. cross both hosts; tp groups stay on one.
  const std::vector<std::int64_t> hosts{0, 0, 0, 0, 1, 1, 1, 1};
  EXPECT_EQ(axis_group_shapes({2, 4}, 0, hosts), (std::vector<GroupShape>{{2, 2, 1}}));
  EXPECT_EQ(axis_group_shapes({2, 4}, 1, hosts), (std::vector<GroupShape>{{4, 1, 4}}));
  // (4,2): axis 0 groups {0,2,4,6}: 2 hosts, 2 per host; axis 1 {0,1}: one host.
  EXPECT_EQ(axis_group_shapes({4, 2}, 0, hosts), (std::vector<GroupShape>{{4, 2, 2}}));
  EXPECT_EQ(axis_group_shapes({4, 2}, 1, hosts), (std::vector<GroupShape>{{2, 1, 2}}));
  // Three ranks per host: the groups of one axis differ, every shape is listed once, ascending.
  const std::vector<std::int64_t> threes{0, 0, 0, 1, 1, 1};
  EXPECT_EQ(axis_group_shapes({3, 2}, 1, threes), (std::vector<GroupShape>{{2, 1, 2}, {2, 2, 1}}));
  // A mesh of fewer ranks than the world uses the first ones.
  EXPECT_EQ(axis_group_shapes({4}, 0, hosts), (std::vector<GroupShape>{{4, 1, 4}}));
  EXPECT_EQ(to_string(GroupShape{4, 2, 2}), "4 ranks on 2 hosts (2 per host)");
  EXPECT_EQ(to_string(GroupShape{1, 1, 1}), "1 rank on 1 host (1 per host)");
}

TEST(GroupShapes, MeshesLargerThanTheCalibratedJob) {
  const std::vector<std::int64_t> hosts{0, 0};
  EXPECT_EQ(error_of([&] { (void)axis_group_shapes({4}, 0, hosts); }, ErrorKind::ValueError),
            "ValueError: the mesh holds 4 ranks but the calibrated job placed 2 (rank_hosts)");
  // Repeating the placement: ranks 2, 3 on a host of their own.
  EXPECT_EQ(axis_group_shapes({4}, 0, hosts, true), (std::vector<GroupShape>{{4, 2, 2}}));
  EXPECT_EQ(axis_group_shapes({2, 2}, 0, hosts, true), (std::vector<GroupShape>{{2, 2, 1}}));
  (void)error_of([&] { (void)axis_group_shapes({2}, 1, hosts); }, ErrorKind::ValueError);
}

// The shapes of the groups over `axes`, by brute force: rank r's group is every rank whose coordinate equals r's
// off `axes`.
std::vector<GroupShape> brute_group_shapes(const std::vector<std::int64_t>& mesh, const std::vector<std::size_t>& axes,
                                           const std::vector<std::int64_t>& hosts) {
  std::int64_t ranks = 1;
  for (const auto s : mesh) ranks *= s;
  const auto coord = [&](std::int64_t r) {
    std::vector<std::int64_t> c(mesh.size());
    for (std::size_t a = mesh.size(); a-- > 0;) {
      c[a] = r % mesh[a];
      r /= mesh[a];
    }
    return c;
  };
  std::vector<GroupShape> shapes;
  for (std::int64_t r = 0; r < ranks; ++r) {
    std::map<std::int64_t, std::int64_t> per_host;
    std::int64_t n = 0;
    for (std::int64_t q = 0; q < ranks; ++q) {
      bool same = true;
      for (std::size_t a = 0; a < mesh.size(); ++a) {
        if (std::find(axes.begin(), axes.end(), a) == axes.end() && coord(q)[a] != coord(r)[a]) same = false;
      }
      if (!same) continue;
      ++n;
      ++per_host[hosts[static_cast<std::size_t>(q)]];
    }
    GroupShape shape{.n = n, .hosts = static_cast<std::int64_t>(per_host.size()), .ranks_per_host = 0};
    for (const auto& [host, count] : per_host) shape.ranks_per_host = std::max(shape.ranks_per_host, count);
    if (std::find(shapes.begin(), shapes.end(), shape) == shapes.end()) shapes.push_back(shape);
  }
  std::sort(shapes.begin(), shapes.end());
  return shapes;
}

TEST(GroupShapes, FlattenedAxesGiveTheShapesOfTheirRankSetsOnEveryMesh) {
  // (2,2,2) on two hosts of four: {0,2} gives {0,1,4,5}, {2,3,6,7} (2 hosts, 2 per host); {1,2} stays on one host.
  const std::vector<std::int64_t> fours{0, 0, 0, 0, 1, 1, 1, 1};
  EXPECT_EQ(group_shapes({2, 2, 2}, {0, 2}, fours), (std::vector<GroupShape>{{4, 2, 2}}));
  EXPECT_EQ(group_shapes({2, 2, 2}, {1, 2}, fours), (std::vector<GroupShape>{{4, 1, 4}}));
  EXPECT_EQ(group_shapes({2, 2, 2}, {0, 1, 2}, fours), (std::vector<GroupShape>{{8, 2, 4}}));
  // Every ascending set of axes of every mesh of up to 3 axes of sizes 1 to 3, hosts of 1 to 4 consecutive ranks.
  for (const std::vector<std::int64_t>& mesh : std::vector<std::vector<std::int64_t>>{
           {3}, {2, 3}, {3, 1}, {3, 2}, {2, 2, 2}, {1, 3, 2}, {3, 2, 3}, {2, 1, 3}}) {
    std::int64_t ranks = 1;
    for (const auto s : mesh) ranks *= s;
    for (std::int64_t per_host = 1; per_host <= 4; ++per_host) {
      std::vector<std::int64_t> hosts;
      for (std::int64_t r = 0; r < ranks; ++r) hosts.push_back(r / per_host);
      for (unsigned set = 1; set < (1U << mesh.size()); ++set) {
        std::vector<std::size_t> axes;
        for (std::size_t a = 0; a < mesh.size(); ++a) {
          if ((set >> a) & 1U) axes.push_back(a);
        }
        EXPECT_EQ(group_shapes(mesh, axes, hosts), brute_group_shapes(mesh, axes, hosts))
            << "mesh of " << mesh.size() << " axes, set " << set << ", " << per_host << " per host";
        if (axes.size() == 1) {
          EXPECT_EQ(group_shapes(mesh, axes, hosts), axis_group_shapes(mesh, axes[0], hosts));
        }
      }
    }
  }
  EXPECT_EQ(error_of([&] { (void)group_shapes({2, 2}, {}, fours); }, ErrorKind::ValueError),
            "ValueError: a group needs at least one mesh axis");
  EXPECT_EQ(error_of([&] { (void)group_shapes({2, 2}, {1, 0}, fours); }, ErrorKind::ValueError),
            "ValueError: the axes of a group must ascend (axis 0 after 1)");
  EXPECT_EQ(error_of([&] { (void)group_shapes({2, 2}, {0, 2}, fours); }, ErrorKind::ValueError),
            "ValueError: axis 2 is out of range for a mesh of 2 axes");
}

TEST(PiecewiseCurve, ThroughEveryPointAPowerLawBetweenAndDocumentedBeyond) {
  const std::vector<CurvePoint> points{{1024, 10}, {4096, 20}, {65536, 200}};
  for (const auto& p : points) EXPECT_DOUBLE_EQ(piecewise_time_us(points, p.bytes), p.time_us);
  // Between 1024 and 4096 (a factor 4 in size, 2 in time): t = 10 * (b / 1024)^0.5.
  EXPECT_NEAR(piecewise_time_us(points, 2048), 10 * std::sqrt(2.0), 1e-9);
  // Below the smallest size: its latency floor.
  EXPECT_EQ(piecewise_time_us(points, 8), 10.0);
  // Above the largest: the extra bytes at the largest point's algbw (200 us per 65536 bytes), which is slower here
  // than the last segment's bandwidth ((200 - 20) us per 61440 bytes would give 392 us).
  EXPECT_NEAR(piecewise_time_us(points, 131072), 400.0, 1e-9);
  // ... or at the last segment's bandwidth where that is slower: (100 - 10) us per 3072 bytes against 100 per 4096.
  EXPECT_NEAR(piecewise_time_us({{1024, 10}, {4096, 100}}, 8192), 100 + 4096 * 90.0 / 3072.0, 1e-9);
  // A last segment that does not rise: the largest point's algbw.
  EXPECT_NEAR(piecewise_time_us({{1024, 10}, {4096, 9}}, 8192), 18.0, 1e-12);
  // One that rises by noise alone prices as a flat one, not at the bandwidth its 0.001 us implies (100.06 us).
  const double flat = piecewise_time_us({{1048576, 100}, {2097152, 100}}, 67108864);
  EXPECT_NEAR(flat, 3200.0, 1e-9);
  EXPECT_NEAR(piecewise_time_us({{1048576, 100}, {2097152, 100.001}}, 67108864), 3200.032, 1e-6);
  // One point: its time up to its size, its algbw beyond.
  EXPECT_EQ(piecewise_time_us({{1024, 10}}, 512), 10.0);
  EXPECT_NEAR(piecewise_time_us({{1024, 10}}, 4096), 40.0, 1e-12);
  EXPECT_EQ(piecewise_time_us({}, 100), 0.0);
}

// Beyond the largest size a collective never runs faster than the largest size ran (its algbw), whatever the point
// before it, and a slower largest point prices it higher ("the last segment's bandwidth when it rises" broke both).
TEST(PiecewiseCurve, BeyondTheLargestSizeNoFasterThanItRan) {
  for (const double before : {10.0, 50.0, 99.0, 99.999, 100.0, 120.0}) {
    for (const double bytes : {4096.0, 5000.0, 8192.0, 1e6, 1e9}) {
      const double t = piecewise_time_us({{1024, before}, {4096, 100}}, bytes);
      EXPECT_GE(t, 100 * bytes / 4096 * (1 - 1e-12)) << before << " " << bytes;
      // Raising the largest point's time never lowers the price beyond it.
      EXPECT_GE(piecewise_time_us({{1024, before}, {4096, 101}}, bytes), t) << before << " " << bytes;
    }
  }
}

TEST(AsRunFactor, ItsFactorAtEveryPointGeometricBetweenFlatBeyond) {
  const std::vector<AsRunPoint> points{{1024, 1.2, 5}, {65536, 1.5, 4}, {1048576, 0.75, 3}};
  for (const auto& p : points) EXPECT_DOUBLE_EQ(as_run_factor(points, p.bytes), p.factor);
  // Halfway in log size (8192 between 1024 and 65536): the geometric mean of the two factors.
  EXPECT_NEAR(as_run_factor(points, 8192), std::sqrt(1.2 * 1.5), 1e-12);
  // A quarter of the way in log size from 65536 to 1048576 (131072): 1.5 * (0.75 / 1.5)^(1/4).
  EXPECT_NEAR(as_run_factor(points, 131072), 1.5 * std::pow(0.5, 0.25), 1e-12);
  // Beyond the ends: the nearest end's factor; no points: 1.
  EXPECT_EQ(as_run_factor(points, 8), 1.2);
  EXPECT_EQ(as_run_factor(points, 1e12), 0.75);
  EXPECT_EQ(as_run_factor(points, std::nan("")), 1.2);
  EXPECT_EQ(as_run_factor({}, 4096), 1.0);
  // The docs' example.
  EXPECT_NEAR(as_run_factor({{1024, 1.2, 5}, {1048576, 1.5, 4}}, 32768), std::sqrt(1.2 * 1.5), 1e-12);
}

TEST(AsRunFactor, EveryPriceOfTheCurveIsItsBenchmarkTimeTimesTheFactor) {
  Calibration c = testing::four_ranks_on_one_host();
  c.groups.push_back(testing::piecewise("all_reduce", {2, 1, 2}, {{1024, 10}, {65536, 100}, {67108864, 50000}}));
  c.groups.push_back(testing::piecewise("all_reduce", {4, 1, 4}, {{1024, 20}, {65536, 200}, {67108864, 90000}}));
  const CalibratedCostModel bench(c, {});
  Calibration refined = c;
  refined.groups[0].as_run = {{1024, 1.25, 3}, {67108864, 0.8, 3}};
  refined.groups[1].as_run = {{65536, 2.0, 3}};
  const CalibratedCostModel model(refined, {});
  const std::vector<std::int64_t> square{2, 2};
  for (const double bytes : {512.0, 1024.0, 4096.0, 65536.0, 1048576.0, 67108864.0, 134217728.0}) {
    SCOPED_TRACE(bytes);
    const double f2 = as_run_factor(refined.groups[0].as_run, bytes);
    EXPECT_DOUBLE_EQ(benchmark_time_us(refined.groups[0], bytes), curve_time_us(c.groups[0], bytes));
    EXPECT_DOUBLE_EQ(curve_time_us(refined.groups[0], bytes), curve_time_us(c.groups[0], bytes) * f2);
    EXPECT_DOUBLE_EQ(*model.predict_us("all_reduce", {2, 1, 2}, bytes), *bench.predict_us("all_reduce", {2, 1, 2}, bytes) * f2);
    EXPECT_DOUBLE_EQ(*model.benchmark_us("all_reduce", {2, 1, 2}, bytes), *bench.predict_us("all_reduce", {2, 1, 2}, bytes));
    const auto local = static_cast<std::int64_t>(bytes);
    EXPECT_DOUBLE_EQ(model.step_cost(step_input(Collective::AllReduce, 1, square, 0, 1, local)),
                     bench.step_cost(step_input(Collective::AllReduce, 1, square, 0, 1, local)) * f2);
    // The merged step on the flattened group is priced by the group of 4's curve and its own factor (2 everywhere).
    StepCostInput merged = step_input(Collective::AllReduce, 0, square, 0, 1, local);
    EXPECT_DOUBLE_EQ(*model.flattened_step_cost(merged, {0, 1}), *bench.flattened_step_cost(merged, {0, 1}) * 2.0);
  }
}

// The defining property: on the calibrated mesh a step costs its curve's price times its own axis' correction at
// the step's size, at every size; on any other mesh, and for axes without one, the curve's price alone.
TEST(AxisCorrection, TheCalibratedMeshIsPricedByItsOwnAxesAndNoOtherMeshIs) {
  Calibration c = testing::four_ranks_on_one_host();
  c.groups.push_back(testing::piecewise("all_gather", {2, 1, 2}, {{1024, 10}, {65536, 100}, {67108864, 50000}}));
  c.groups.push_back(testing::piecewise("all_reduce", {2, 1, 2}, {{1024, 12}, {67108864, 60000}}));
  c.groups.push_back(testing::piecewise("all_reduce", {4, 1, 4}, {{1024, 20}, {65536, 200}, {67108864, 90000}}));
  const CalibratedCostModel plain(c, {});
  c.rank_cpus = {"0", "1", "0", "1"};
  c.axis_corrections = {{.axes = {0}, .collective = "all_gather", .factors = {{1024, 0.8, 15}, {67108864, 0.9, 15}}, .as_run = {}},
                        {.axes = {1}, .collective = "all_gather", .factors = {{1024, 1.2, 15}, {67108864, 1.1, 15}}, .as_run = {}},
                        {.axes = {0, 1}, .collective = "all_reduce", .factors = {{65536, 1.5, 15}}, .as_run = {}}};
  const CalibratedCostModel model(c, {});
  const std::vector<std::int64_t> square{2, 2}, line{4}, pair{2}, tall{2, 2, 1};
  for (std::int64_t local = 256; local <= (std::int64_t{1} << 26); local *= 4) {
    SCOPED_TRACE(local);
    const double gathered = 2.0 * static_cast<double>(local);
    for (const std::size_t axis : {0U, 1U}) {
      const double f = as_run_factor(c.axis_corrections[axis].factors, gathered);
      EXPECT_EQ(axis_correction_factor(c, square, {axis}, "all_gather", gathered), f);
      EXPECT_DOUBLE_EQ(model.step_cost(step_input(Collective::AllGather, axis, square, 0, 1, local)),
                       plain.step_cost(step_input(Collective::AllGather, axis, square, 0, 1, local)) * f);
      // No correction for all_reduce on one axis: the curve alone.
      EXPECT_EQ(model.step_cost(step_input(Collective::AllReduce, axis, square, 0, 1, local)),
                plain.step_cost(step_input(Collective::AllReduce, axis, square, 0, 1, local)));
    }
    // The flattened group of (2,2) by its own correction; the same group as the axis of (4) by the curve alone.
    const StepCostInput merged = step_input(Collective::AllReduce, 0, square, 0, 1, local);
    EXPECT_DOUBLE_EQ(*model.flattened_step_cost(merged, {0, 1}),
                     *plain.flattened_step_cost(merged, {0, 1}) *
                         as_run_factor(c.axis_corrections[2].factors, static_cast<double>(local)));
    EXPECT_EQ(model.step_cost(step_input(Collective::AllReduce, 0, line, 0, 1, local)),
              plain.step_cost(step_input(Collective::AllReduce, 0, line, 0, 1, local)));
    // Another mesh whose groups have the same shape: (2) is not the calibrated mesh.
    EXPECT_EQ(model.step_cost(step_input(Collective::AllGather, 0, pair, 0, 1, local)),
              plain.step_cost(step_input(Collective::AllGather, 0, pair, 0, 1, local)));
    // (2, 2, 1) and (1, 2, 2) are, an axis of size 1 aside: the same groups on the same ranks take the same
    // corrections, and their merged groups too (the advisor enumerates such layouts as one).
    const std::vector<std::int64_t> wide{1, 2, 2};
    const double f1 = as_run_factor(c.axis_corrections[1].factors, gathered);
    EXPECT_EQ(axis_correction_factor(c, tall, {1}, "all_gather", gathered), f1);
    EXPECT_EQ(axis_correction_factor(c, wide, {2}, "all_gather", gathered), f1);
    EXPECT_DOUBLE_EQ(model.step_cost(step_input(Collective::AllGather, 1, tall, 0, 1, local)),
                     plain.step_cost(step_input(Collective::AllGather, 1, tall, 0, 1, local)) * f1);
    EXPECT_DOUBLE_EQ(model.step_cost(step_input(Collective::AllGather, 2, wide, 0, 1, local)),
                     plain.step_cost(step_input(Collective::AllGather, 2, wide, 0, 1, local)) * f1);
    const StepCostInput wide_merged = step_input(Collective::AllReduce, 1, wide, 0, 1, local);
    EXPECT_DOUBLE_EQ(*model.flattened_step_cost(wide_merged, {0, 1, 2}),
                     *plain.flattened_step_cost(wide_merged, {0, 1, 2}) *
                         as_run_factor(c.axis_corrections[2].factors, static_cast<double>(local)));
  }
  EXPECT_TRUE(same_layout({2, 1, 2}, {1, 2, 2}));
  EXPECT_TRUE(same_layout({1, 1}, {}));
  EXPECT_FALSE(same_layout({2, 2}, {4}));
  EXPECT_FALSE(same_layout({2, 2}, {2, 2, 2}));
  EXPECT_EQ(correction_on_mesh(c, {2, 2}, {5}, "all_gather"), nullptr);  // an axis past the mesh: none
  // The worked example: at 1 KiB gathered axis 0 costs 10 x 0.8, axis 1 10 x 1.2.
  EXPECT_DOUBLE_EQ(model.step_cost(step_input(Collective::AllGather, 0, square, 0, 1, 512)), 8.0);
  EXPECT_DOUBLE_EQ(model.step_cost(step_input(Collective::AllGather, 1, square, 0, 1, 512)), 12.0);
}

// An axis' own as-run points (refine's, AxisCorrection::as_run) replace its curve's on the calibrated mesh: a step on
// it costs benchmark x its correction x its own as-run factor at every size; an axis without them takes the curve's
// as_run as before; other meshes the curve's alone.
TEST(AxisCorrection, AnAxisWithItsOwnAsRunPointsTakesThemInsteadOfTheCurves) {
  Calibration c = testing::four_ranks_on_one_host();
  c.groups.push_back(testing::piecewise("all_gather", {2, 1, 2}, {{1024, 10}, {65536, 100}, {67108864, 50000}}));
  c.groups.push_back(testing::piecewise("all_gather", {4, 1, 4}, {{1024, 14}, {65536, 150}, {67108864, 80000}}));
  c.groups[0].as_run = {{1024, 1.5, 3}, {67108864, 0.6, 3}};
  c.groups[1].as_run = {{65536, 1.3, 3}};
  c.rank_cpus = {"0", "1", "0", "1"};
  c.axis_corrections = {
      {.axes = {0}, .collective = "all_gather", .factors = {{1024, 0.8, 15}}, .as_run = {{1024, 1.1, 4}, {4194304, 0.5, 4}}},
      {.axes = {1}, .collective = "all_gather", .factors = {{1024, 1.2, 15}}, .as_run = {}},
      {.axes = {0, 1}, .collective = "all_gather", .factors = {{1024, 0.9, 15}}, .as_run = {{65536, 2.0, 3}}}};
  const CalibratedCostModel model(c, {});
  const std::vector<std::int64_t> square{2, 2}, pair{2};
  for (std::int64_t local = 256; local <= (std::int64_t{1} << 26); local *= 4) {
    SCOPED_TRACE(local);
    const double gathered = 2.0 * static_cast<double>(local);
    const GroupCurve& curve = c.groups[0];
    EXPECT_DOUBLE_EQ(model.step_cost(step_input(Collective::AllGather, 0, square, 0, 1, local)),
                     benchmark_time_us(curve, gathered) * 0.8 * as_run_factor(c.axis_corrections[0].as_run, gathered));
    EXPECT_DOUBLE_EQ(model.step_cost(step_input(Collective::AllGather, 1, square, 0, 1, local)),
                     curve_time_us(curve, gathered) * 1.2);
    EXPECT_DOUBLE_EQ(model.step_cost(step_input(Collective::AllGather, 0, pair, 0, 1, local)), curve_time_us(curve, gathered));
    const double four = 4.0 * static_cast<double>(local);
    const StepCostInput merged = step_input(Collective::AllGather, 0, square, 0, 1, local);
    EXPECT_DOUBLE_EQ(*model.flattened_step_cost(merged, {0, 1}), benchmark_time_us(c.groups[1], four) * 0.9 * 2.0);
  }
}

// Mirrors: S(0)S(1) -> RR gathers on both axes, and either order moves the same sizes on groups of one shape, so
// the shared curve prices both orders alike. With the corrections the planner gathers the larger (second) step on
// the faster axis.
TEST(AxisCorrection, ThePlannerTakesTheMirrorOnTheFasterAxis) {
  Calibration c = testing::four_ranks_on_one_host();
  for (const char* collective : {"all_gather", "all_reduce", "reduce_scatter", "all_to_all"}) {
    c.groups.push_back(testing::piecewise(collective, {2, 1, 2}, {{1024, 10}, {67108864, 50000}}));
  }
  const PlanRequest r = request({2, 2}, {64, 64}, "S(0)S(1)", "RR");
  const Plan alike = plan_redistribution(r, CalibratedCostModel(c, {}));
  ASSERT_EQ(alike.steps.size(), 2U);
  for (const std::size_t slow : {0U, 1U}) {
    SCOPED_TRACE(slow);
    Calibration corrected = c;
    corrected.rank_cpus = {"0", "1", "0", "1"};
    for (const std::size_t axis : {0U, 1U}) {
      for (const char* collective : {"all_gather", "all_reduce", "reduce_scatter", "all_to_all"}) {
        corrected.axis_corrections.push_back(
            {.axes = {axis}, .collective = collective, .factors = {{1024, axis == slow ? 1.3 : 0.7, 15}}, .as_run = {}});
      }
    }
    const CalibratedCostModel model(corrected, {});
    const Plan plan = plan_redistribution(r, model);
    ASSERT_EQ(plan.steps.size(), 2U);
    EXPECT_EQ(plan.steps[0].collective, Collective::AllGather);
    EXPECT_EQ(plan.steps[0].axes, (std::vector<std::size_t>{slow}));
    EXPECT_EQ(plan.steps[1].axes, (std::vector<std::size_t>{1 - slow}));
    // The shared curve's pick costs more under the corrections when it gathered the larger step on the slow axis.
    const std::vector<double> steps = price_plan_steps(r, alike, model);
    const double mirror = steps[0] + steps[1];
    if (alike.steps[1].axes.front() == slow) {
      EXPECT_LT(plan.cost, mirror);
    } else {
      EXPECT_DOUBLE_EQ(plan.cost, mirror);
    }
  }
}

TEST(CalibratedModel, CurvesPriceLayoutsNeverRunByTheirGroupShape) {
  const Calibration c = curves::keyed_calibration();
  const CalibratedCostModel model(c, {});
  // A 1-D mesh of 4 ranks (never run: the calibration is from (2,2)) is priced by the flattened group's curve.
  const std::vector<std::int64_t> line{4};
  EXPECT_DOUBLE_EQ(model.step_cost(step_input(Collective::AllReduce, 0, line, 0, 1, 4096)), 30.0);
  // (2,2) axes: groups of 2 ranks on one host, whatever their names.
  const std::vector<std::int64_t> square{2, 2};
  EXPECT_DOUBLE_EQ(model.step_cost(step_input(Collective::AllReduce, 1, square, 0, 1, 65536)), 200.0);
  // all_gather counts the gathered output: 2 ranks x 512 bytes = the 1024-byte point.
  EXPECT_DOUBLE_EQ(model.step_cost(step_input(Collective::AllGather, 0, square, 0, 1, 512)), 8.0);
  // Local steps and size-1 axes move nothing.
  EXPECT_EQ(model.step_cost(step_input(Collective::Chunk, 0, line, 0, 1, 4096)), 0.0);
  EXPECT_EQ(model.step_cost(step_input(Collective::AllReduce, 0, std::vector<std::int64_t>{1, 4}, 0, 1, 4096)), 0.0);
  EXPECT_DOUBLE_EQ(*model.predict_us("all_reduce", {4, 1, 4}, 4096), 30.0);
}

TEST(CalibratedModel, AShapeNeverMeasuredIsRefusedUnlessExtrapolating) {
  const Calibration c = curves::keyed_calibration();
  const CalibratedCostModel model(c, {});
  const std::vector<std::int64_t> line{4};
  // No all_gather was measured on 4 ranks, no all_to_all at all, and a mesh of 8 ranks has no placement.
  EXPECT_EQ(model.step_cost(step_input(Collective::AllGather, 0, line, 0, 1, 256)), kInf);
  EXPECT_EQ(model.step_cost(step_input(Collective::AllToAll, 0, line, 0, 1, 256)), kInf);
  EXPECT_EQ(model.step_cost(step_input(Collective::AllReduce, 0, std::vector<std::int64_t>{8}, 0, 1, 256)), kInf);
  EXPECT_FALSE(model.predict_us("all_gather", {4, 1, 4}, 1024));
  const std::vector<std::string> gaps = model.gaps(line);
  EXPECT_EQ(gaps, (std::vector<std::string>{"all_gather on axis 0: 4 ranks on 1 host (4 per host) never measured",
                                            "reduce_scatter on axis 0: 4 ranks on 1 host (4 per host) never measured",
                                            "all_to_all on axis 0: 4 ranks on 1 host (4 per host) never measured"}));
  EXPECT_EQ(model.gaps({8}), (std::vector<std::string>{"the mesh holds 8 ranks but the calibrated job placed 4"}));
  EXPECT_TRUE(model.gap_list({8}).front().axes.empty());  // the whole mesh's
  EXPECT_EQ(model.gap_list(line).back().axes, std::vector<std::size_t>{0});
  // A flattened group's merged collectives on (2, 2): its 4 ranks are the shape the line's axis lacks.
  std::vector<std::string> merged;
  for (const auto& gap : model.gap_list({2, 2}, {{0, 1}})) {
    if (gap.axes.size() > 1) merged.push_back(gap.text);
  }
  // (all_to_all never merges: no gap of a group for it.)
  EXPECT_EQ(merged, (std::vector<std::string>{"all_gather on axes 0,1: 4 ranks on 1 host (4 per host) never measured",
                                              "reduce_scatter on axes 0,1: 4 ranks on 1 host (4 per host) never measured"}));
  // A group's gap names all its axes, as a merged step does, a size-1 axis among them; a group of one axis of size > 1
  // merges nothing.
  std::vector<std::vector<std::size_t>> axes;
  for (const auto& gap : model.gap_list({2, 1, 2}, {{0, 1, 2}, {1, 2}})) {
    if (gap.axes.size() > 1) axes.push_back(gap.axes);
  }
  EXPECT_EQ(axes, (std::vector<std::vector<std::size_t>>{{0, 1, 2}, {0, 1, 2}}));
  // Extrapolating: all_gather on 4 ranks from the 2-rank curve, scaled by (3/4) / (1/2).
  const CalibratedCostModel guess(c, {}, {.extrapolate = true});
  EXPECT_DOUBLE_EQ(*guess.predict_us("all_gather", {4, 1, 4}, 1024), 8.0 * 1.5);
  EXPECT_DOUBLE_EQ(guess.step_cost(step_input(Collective::AllGather, 0, line, 0, 1, 256)), 8.0 * 1.5);
  EXPECT_EQ(guess.step_cost(step_input(Collective::AllToAll, 0, line, 0, 1, 256)), kInf);  // nothing to start from
  EXPECT_TRUE(std::isfinite(guess.step_cost(step_input(Collective::AllReduce, 0, std::vector<std::int64_t>{8}, 0, 1, 256))));
}

TEST(CalibratedModel, MeshesTooLargeToPlaceAreRefusedAtOnce) {
  // Extrapolating repeats the calibrated placement, but no further than kMaxEnumeratedRanks ranks.
  const CalibratedCostModel guess(curves::keyed_calibration(), {}, {.extrapolate = true});
  const std::vector<std::int64_t> huge{1024, 1024, 1024};
  EXPECT_EQ(guess.step_cost(step_input(Collective::AllReduce, 2, huge, 0, 1, 4096)), kInf);
  EXPECT_EQ(guess.gaps(huge), (std::vector<std::string>{"the mesh holds 1073741824 ranks, more than the 16777216 whose "
                                                        "groups the calibrated model places"}));
  // The shapes of an axis are found once and reused: the same answer on every call.
  const std::vector<std::int64_t> line{4};
  const double first = guess.step_cost(step_input(Collective::AllReduce, 0, line, 0, 1, 4096));
  EXPECT_EQ(guess.step_cost(step_input(Collective::AllReduce, 0, line, 0, 1, 4096)), first);
  EXPECT_EQ(piecewise_time_us({{1024, 10}, {4096, 20}}, std::nan("")), 10.0);
}

TEST(CalibratedModel, AlphaBetaCurvesUseTheirFit) {
  Calibration c = curves::keyed_calibration();
  c.groups[0].model = CurveModel::AlphaBeta;
  c.groups[0].fit = CollectiveFit{5.0, 2.0, 0.99, 3};
  const CalibratedCostModel model(c, {});
  // 5 + factor(2) = 1 * 4096 / (2 * 1e3)
  EXPECT_DOUBLE_EQ(*model.predict_us("all_reduce", {2, 1, 2}, 4096), 5.0 + 4096.0 / 2e3);
}

TEST(CalibratedModel, PlansAnotherLayoutThanTheCalibratedOne) {
  // The planner on mesh (4) with the (2,2) calibration: P(sum) -> R by all_reduce (its only priced path).
  const CalibratedCostModel model(curves::keyed_calibration(), {});
  const Plan plan = plan_redistribution(request({4}, {64, 64}, "P(sum)", "R"), model);
  ASSERT_EQ(plan.steps.size(), 1U);
  EXPECT_EQ(plan.steps[0].collective, Collective::AllReduce);
  EXPECT_DOUBLE_EQ(plan.cost, *model.predict_us("all_reduce", {4, 1, 4}, 64 * 64 * 4));
}

TEST(CalibratedModel, AMergedStepIsPricedByItsFlattenedGroupsCurve) {
  // (2,2) with its flattened group: P(sum)P(sum) -> RR is one all_reduce of 4 ranks on the flattened group. The
  // search prices the path edge by edge (two all_reduces of 2 ranks: 2 x 200 us at 64 KiB); the plan's step, as it
  // runs, is priced by the 4-rank curve (300 us at 64 KiB), and the planner, choosing it as it runs, says so.
  const CalibratedCostModel model(curves::keyed_calibration(), {});
  PlanRequest r = request({2, 2}, {128, 128}, "P(sum)P(sum)", "RR");
  r.flattened = {{0, 1}};
  const Plan searched = plan_k_cheapest(r, model, 1).front();
  ASSERT_EQ(searched.steps.size(), 1U);
  EXPECT_DOUBLE_EQ(searched.cost, 2 * 200.0);
  EXPECT_EQ(price_plan_steps(r, searched, model), (std::vector<double>{300.0}));
  const Plan plan = plan_redistribution(r, model);
  ASSERT_EQ(plan.steps.size(), 1U);
  ASSERT_TRUE(plan.steps[0].merged);
  EXPECT_EQ(plan.path, searched.path);
  EXPECT_DOUBLE_EQ(plan.cost, 300.0);
  EXPECT_EQ(price_plan_steps(r, plan, model), (std::vector<double>{300.0}));
  const std::vector<std::int64_t> square{2, 2};
  EXPECT_EQ(model.flattened_step_cost(step_input(Collective::AllReduce, 0, square, 0, 1, 65536), {0, 1}), 300.0);
  // all_gather counts the gathered output (4 x 256 bytes: the 1024-byte point), and no 4-rank all_gather was
  // measured: +infinity, or the 2-rank curve scaled when extrapolating.
  EXPECT_EQ(model.flattened_step_cost(step_input(Collective::AllGather, 0, square, 0, 1, 256), {0, 1}), kInf);
  const CalibratedCostModel guess(curves::keyed_calibration(), {}, {.extrapolate = true});
  EXPECT_DOUBLE_EQ(*guess.flattened_step_cost(step_input(Collective::AllGather, 0, square, 0, 1, 256), {0, 1}),
                   8.0 * 1.5);
  // Other models price a merged step as the sum of its edges (the planner's and PyTorch's cost).
  const CommCostModel comm(square, 8);
  EXPECT_FALSE(comm.flattened_step_cost(step_input(Collective::AllReduce, 0, square, 0, 1, 65536), {0, 1}));
  const std::vector<double> by_edges = price_plan_steps(r, plan_redistribution(r, comm), comm);
  ASSERT_EQ(by_edges.size(), 1U);
  EXPECT_DOUBLE_EQ(by_edges[0], plan_redistribution(r, comm).cost);
  // A calibration without curves (per-axis fits only) has no flattened group to price: the sum of the edges.
  Calibration fits = curves::keyed_calibration();
  fits.groups.clear();
  EXPECT_FALSE(CalibratedCostModel(fits, {"dp", "tp"})
                   .flattened_step_cost(step_input(Collective::AllReduce, 0, square, 0, 1, 65536), {0, 1}));
}

// Where merged steps are priced as they run, the planner returns the cheapest of its cheapest paths as they run.
// (2,2) of one host, 128x128 of 4 bytes (64 KiB), axes flattened, P(sum)P(sum) -> RR: the search's four cheapest
// paths reduce-scatter on one axis, all-reduce half the tensor on the other and gather back (150 + 110 + 120 =
// 380 us); the two all_reduces of 2 ranks (2 x 200 = 400 us by the edges) merge into one all_reduce of the 4-rank
// group, 150 us as it runs: that is the plan, and its cost. Other models keep the search's cheapest.
TEST(CalibratedModel, ThePlannerComparesItsCheapestPathsAsTheyRunWhereStepsMerge) {
  Calibration c = curves::keyed_calibration();
  c.groups = {curves::piecewise("all_reduce", {2, 1, 2}, {{1024, 10}, {32768, 110}, {65536, 200}}),
              curves::piecewise("all_reduce", {4, 1, 4}, {{1024, 15}, {65536, 150}}),
              curves::piecewise("reduce_scatter", {2, 1, 2}, {{1024, 5}, {32768, 90}, {65536, 150}}),
              curves::piecewise("all_gather", {2, 1, 2}, {{1024, 5}, {32768, 80}, {65536, 120}})};
  const CalibratedCostModel model(c, {});
  EXPECT_TRUE(model.prices_flattened_groups());
  PlanRequest r = request({2, 2}, {128, 128}, "P(sum)P(sum)", "RR");
  r.flattened = {{0, 1}};
  EXPECT_TRUE(plans_as_run(r, model));
  // A merge needs steps on two axes of the group, each of size > 1: moving data on one axis alone, or on a group
  // whose other axis has size 1, is planned by the one search.
  PlanRequest one_axis = request({2, 2}, {128, 128}, "S(0)R", "RR");
  one_axis.flattened = {{0, 1}};
  EXPECT_FALSE(plans_as_run(one_axis, model));
  PlanRequest unit = request({4, 1}, {128, 128}, "P(sum)P(sum)", "RR");
  unit.flattened = {{0, 1}};
  EXPECT_FALSE(plans_as_run(unit, model));
  const std::vector<Plan> cheapest = plan_k_cheapest(r, model, kAsRunPool);
  ASSERT_GE(cheapest.size(), 5U);
  EXPECT_DOUBLE_EQ(cheapest[0].cost, 380.0);
  EXPECT_EQ(cheapest[0].steps.size(), 3U);
  const std::size_t as_run = cheapest_as_run(r, cheapest, model);
  EXPECT_DOUBLE_EQ(cheapest[as_run].cost, 400.0);

  const Plan plan = plan_redistribution(r, model);
  ASSERT_EQ(plan.steps.size(), 1U);
  EXPECT_TRUE(plan.steps[0].merged);
  EXPECT_EQ(plan.steps[0].collective, Collective::AllReduce);
  EXPECT_EQ(plan.steps[0].axes, (std::vector<std::size_t>{0, 1}));
  // Chosen as it runs, it costs what it runs at (the search's sum of its edges was 400).
  EXPECT_DOUBLE_EQ(plan.cost, 150.0);
  EXPECT_DOUBLE_EQ(plan.steps[0].cost, 150.0);
  EXPECT_EQ(price_plan_steps(r, plan, model), (std::vector<double>{150.0}));
  EXPECT_EQ(plan.path, cheapest[as_run].path);

  // Without the flattened group nothing merges: the search's cheapest.
  PlanRequest plain = r;
  plain.flattened.clear();
  EXPECT_DOUBLE_EQ(plan_redistribution(plain, model).cost, 380.0);
  // Per-axis fits only price no merged step: the search's cheapest, as PyTorch plans.
  Calibration fits = c;
  fits.groups.clear();
  fits.axes["dp"]["all_reduce"] = CollectiveFit{.alpha_us = 1, .busbw_gbps = 1};
  fits.axes["tp"]["all_reduce"] = CollectiveFit{.alpha_us = 1, .busbw_gbps = 1};
  EXPECT_FALSE(CalibratedCostModel(fits, {"dp", "tp"}).prices_flattened_groups());
  const CommCostModel comm({2, 2}, 8);
  EXPECT_FALSE(comm.prices_flattened_groups());
  EXPECT_FALSE(plans_as_run(r, comm));
  const std::vector<Plan> comm_cheapest = plan_k_cheapest(r, comm, 1);
  EXPECT_EQ(plan_redistribution(r, comm).path, comm_cheapest[0].path);
  EXPECT_THROW((void)cheapest_as_run(r, {}, model), Error);
}

// The k cheapest paths by their edges can all be cheaper by their edges than the path that merges, and then the
// pool alone misses it: as_run_pool adds the cheapest path of a search that also takes each flattened group's
// merged collective as one edge. (2,2) of one host, 128x128 of 4 bytes (64 KiB), axes flattened,
// P(sum)P(sum) -> RR, where an all_reduce of 2 ranks is slow (1000 us at 64 KiB: the two cost 2000 us by their
// edges) and reduce_scatter, all_gather and all_to_all are quick (30-60 us): every one of the 16 cheapest paths
// avoids the full-size all_reduces, yet one all_reduce of the 4-rank group costs 100 us as it runs.
TEST(CalibratedModel, AsRunPoolFindsAMergedPathBeyondTheCheapestByEdges) {
  Calibration c = curves::keyed_calibration();
  c.groups = {curves::piecewise("all_reduce", {2, 1, 2}, {{1024, 20}, {65536, 1000}}),
              curves::piecewise("all_reduce", {4, 1, 4}, {{1024, 15}, {65536, 100}}),
              curves::piecewise("reduce_scatter", {2, 1, 2}, {{1024, 5}, {65536, 60}}),
              curves::piecewise("all_gather", {2, 1, 2}, {{1024, 5}, {65536, 60}}),
              curves::piecewise("all_to_all", {2, 1, 2}, {{1024, 5}, {65536, 60}})};
  const CalibratedCostModel model(c, {});
  PlanRequest r = request({2, 2}, {128, 128}, "P(sum)P(sum)", "RR");
  r.flattened = {{0, 1}};
  ASSERT_TRUE(plans_as_run(r, model));
  const std::vector<Plan> cheapest = plan_k_cheapest(r, model, kAsRunPool);
  ASSERT_EQ(cheapest.size(), kAsRunPool);
  for (const Plan& p : cheapest) {
    EXPECT_LT(p.cost, 2000.0) << trace(p);
    for (const PlanStep& step : p.steps) EXPECT_NE(step.collective, Collective::AllReduce) << trace(p);
  }
  double best_of_cheapest = 0;
  for (const double cost : price_plan_steps(r, cheapest[cheapest_as_run(r, cheapest, model)], model)) {
    best_of_cheapest += cost;
  }
  EXPECT_GT(best_of_cheapest, 100.0);

  const std::vector<Plan> pool = as_run_pool(r, model);
  ASSERT_EQ(pool.size(), kAsRunPool + 1);
  for (std::size_t i = 0; i < kAsRunPool; ++i) EXPECT_EQ(pool[i].path, cheapest[i].path);
  const Plan& merged = pool.back();
  // Its path lists the state between (the merged edge passes RP(sum)), so its steps are built as every plan's are.
  ASSERT_EQ(merged.path.size(), 3U) << trace(merged);
  EXPECT_EQ(to_string(merged.path[1]), "RP(sum)");
  ASSERT_EQ(merged.steps.size(), 1U);
  EXPECT_TRUE(merged.steps[0].merged);
  EXPECT_EQ(merged.steps[0].collective, Collective::AllReduce);
  EXPECT_EQ(merged.steps[0].axes, (std::vector<std::size_t>{0, 1}));
  EXPECT_DOUBLE_EQ(merged.cost, 2000.0);  // its edges' sum, as plan_k_cheapest's plans carry
  EXPECT_EQ(price_plan_steps(r, merged, model), (std::vector<double>{100.0}));
  EXPECT_GE(merged.states_explored, cheapest.back().states_explored);
  EXPECT_EQ(cheapest_as_run(r, pool, model), kAsRunPool);

  const Plan plan = plan_redistribution(r, model);
  EXPECT_EQ(plan.path, merged.path);
  EXPECT_DOUBLE_EQ(plan.cost, 100.0);
  // A request where no merge forms: the search adds nothing new (its plan is the cheapest by edges, already first).
  PlanRequest apart = r;
  apart.flattened.clear();
  const std::vector<Plan> plain = as_run_pool(apart, model, 4);
  EXPECT_EQ(plain.size(), 4U);
}

// A reduce_scatter or all_gather of the group merges only where the dim divides by the group's size on every rank
// (merge_steps), and the search with merged edges offers one only there. (2,2) flattened, 6x4 of 4 bytes, where
// collectives of 2 ranks are slow (an all_reduce 5000 us, the others 500 us) and those of 4 ranks quick (all_reduce
// 20 us, reduce_scatter and all_gather 10 us). To S(1)[0]S(1)[1] (4 divides by 4): one reduce_scatter of the group,
// 10 us. To S(0)[0]S(0)[1] (6 does not): the two reduce_scatters stay two (1000 us); the cheapest as it runs is one
// all_reduce of the group and two chunks, 20 us, which only the merged search finds (by their edges the two
// all_reduces cost 10000 us, beyond the 16 cheapest). Were a merged reduce_scatter offered there at 10 us, the
// search would end in the two that do not merge, and the pick would cost 1000 us.
TEST(CalibratedModel, AMergedScatterOrGatherNeedsTheDimToDivideByTheGroup) {
  Calibration c = curves::keyed_calibration();
  c.groups = {curves::piecewise("all_reduce", {2, 1, 2}, {{16, 5000}, {65536, 5000}}),
              curves::piecewise("all_reduce", {4, 1, 4}, {{16, 20}, {65536, 20}}),
              curves::piecewise("reduce_scatter", {2, 1, 2}, {{16, 500}, {65536, 500}}),
              curves::piecewise("reduce_scatter", {4, 1, 4}, {{16, 10}, {65536, 10}}),
              curves::piecewise("all_gather", {2, 1, 2}, {{16, 500}, {65536, 500}}),
              curves::piecewise("all_gather", {4, 1, 4}, {{16, 10}, {65536, 10}}),
              curves::piecewise("all_to_all", {2, 1, 2}, {{16, 500}, {65536, 500}})};
  const CalibratedCostModel model(c, {});
  const auto request_of = [](const char* src, const char* dst) {
    PlanRequest r = request({2, 2}, {6, 4}, src, dst);
    r.flattened = {{0, 1}};
    return r;
  };
  const Plan scatter = plan_redistribution(request_of("P(sum)P(sum)", "S(1)[0]S(1)[1]"), model);
  ASSERT_EQ(scatter.steps.size(), 1U) << trace(scatter);
  EXPECT_TRUE(scatter.steps[0].merged);
  EXPECT_EQ(scatter.steps[0].collective, Collective::ReduceScatter);
  EXPECT_DOUBLE_EQ(scatter.cost, 10.0);

  // And back: one all_gather of the group from S(1)[0]S(1)[1], the axes gathered from the last.
  const Plan gather = plan_redistribution(request_of("S(1)[0]S(1)[1]", "RR"), model);
  ASSERT_EQ(gather.steps.size(), 1U) << trace(gather);
  EXPECT_TRUE(gather.steps[0].merged);
  EXPECT_EQ(gather.steps[0].collective, Collective::AllGather);
  EXPECT_DOUBLE_EQ(gather.cost, 10.0);
  // From S(0)[0]S(0)[1] the gathers of dim 0 do not merge, in any plan of the pool. (Every path out of it gathers
  // twice, so the two gathers are the cheapest by their edges and in the pool anyway: here the search's own check,
  // which the reduce_scatter below shows, changes no plan.)
  for (const Plan& p : as_run_pool(request_of("S(0)[0]S(0)[1]", "RR"), model)) {
    for (const PlanStep& step : p.steps) EXPECT_FALSE(step.merged) << trace(p);
  }

  const PlanRequest uneven = request_of("P(sum)P(sum)", "S(0)[0]S(0)[1]");
  for (const Plan& p : plan_k_cheapest(uneven, model, kAsRunPool)) {
    for (const PlanStep& step : p.steps) EXPECT_NE(step.collective, Collective::AllReduce) << trace(p);
  }
  const Plan plan = plan_redistribution(uneven, model);
  EXPECT_EQ(trace(plan), "P(sum)P(sum)-->RR->S(0)R->S(0)[0]S(0)[1]");
  EXPECT_DOUBLE_EQ(plan.cost, 20.0);
  for (const Plan& p : as_run_pool(uneven, model)) {
    for (const PlanStep& step : p.steps) {
      EXPECT_FALSE(step.merged && step.collective == Collective::ReduceScatter) << trace(p);
    }
  }
}

// No merged edge passes through a state the path has passed, though R -> P costs nothing: where an all_reduce of the
// group costs less than one of 2 ranks at the same size (10 us against 100 us here), the merged search could step
// from RP(sum) back to P(sum)P(sum) and merge through RP(sum) again. (The pool's loop-free RP(sum) -> P(sum)P(sum)
// -> P(sum)R -> RR merges as it runs into that same all_reduce of the group, and the model, which prices it at 10
// us, picks it.) (2,2) flattened, 8x8 of 4 bytes.
TEST(CalibratedModel, TheMergedSearchNeverStepsBackToMerge) {
  Calibration c = curves::keyed_calibration();
  c.groups = {curves::piecewise("all_reduce", {2, 1, 2}, {{16, 100}, {65536, 100}}),
              curves::piecewise("all_reduce", {4, 1, 4}, {{16, 10}, {65536, 10}})};
  const CalibratedCostModel model(c, {});
  PlanRequest r = request({2, 2}, {8, 8}, "RP(sum)", "RR");
  r.flattened = {{0, 1}};
  const std::vector<Plan> pool = as_run_pool(r, model);
  for (const Plan& p : pool) {
    for (std::size_t i = 0; i < p.path.size(); ++i) {
      for (std::size_t j = i + 1; j < p.path.size(); ++j) EXPECT_NE(p.path[i], p.path[j]) << trace(p);
    }
  }
  EXPECT_EQ(trace(pool[cheapest_as_run(r, pool, model)]), "RP(sum)->P(sum)P(sum)-->RR");
  EXPECT_DOUBLE_EQ(price_plan_steps(r, pool[cheapest_as_run(r, pool, model)], model).back(), 10.0);
}

TEST(CalibrationMismatch, FitsPriceTheirMeshCurvesAnyMeshTheJobCanPlace) {
  // Curves from a job of 4 ranks: any mesh of up to 4 ranks, whatever its shape; more only when extrapolating.
  const Calibration curves_of_four = curves::keyed_calibration();
  EXPECT_FALSE(calibration_mismatch(curves_of_four, {2, 2}));
  EXPECT_FALSE(calibration_mismatch(curves_of_four, {4}));
  EXPECT_FALSE(calibration_mismatch(curves_of_four, {2}));
  EXPECT_EQ(calibration_mismatch(curves_of_four, {2, 4}),
            "the calibration's job placed 4 ranks and this mesh holds 8: calibrate on at least 8 ranks, or extrapolate");
  EXPECT_FALSE(calibration_mismatch(curves_of_four, {2, 4}, true));
  // Per-axis fits only: their own mesh alone (a file that names none is not checked).
  Calibration fits = curves::keyed_calibration();
  fits.groups.clear();
  EXPECT_FALSE(calibration_mismatch(fits, {2, 2}));
  EXPECT_EQ(calibration_mismatch(fits, {4}), "the calibration was measured on a (2, 2) mesh and holds per-axis fits "
                                             "only, which price that mesh alone, not (4)");
  fits.mesh_shape.clear();
  EXPECT_FALSE(calibration_mismatch(fits, {4}));
}

}  // namespace
}  // namespace meshloom
