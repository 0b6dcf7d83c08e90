// The layout advisor: candidates, with_layout, constraints, the ranking against totals computed here from the
// planner, the plan cache, ties, the reason and the errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <initializer_list>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "meshloom/advisor/advisor.hpp"
#include "meshloom/design/design.hpp"
#include "meshloom/dtype.hpp"
#include "meshloom/error.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/state.hpp"
#include "meshloom/workload/workload.hpp"
#include "support/expect_error.hpp"

namespace meshloom {
namespace {

using meshloom::testing::expect_error;

constexpr double kInf = std::numeric_limits<double>::infinity();

Design design_of(std::vector<std::int64_t> shape, std::vector<std::string> names, std::int64_t per_host) {
  Design d;
  d.name = "advisor-test";
  d.world = 1;
  for (const std::int64_t s : shape) d.world *= s;
  d.devices_per_host = per_host;
  d.mesh.shape = std::move(shape);
  d.mesh.names = std::move(names);
  return d;
}

// (dp 2, tp 4) on hosts of 4 with two design tensors: an activation all-reduced on tp and a gradient
// reduce-scattered on dp.
Design tensors_design() {
  Design d = design_of({2, 4}, {"dp", "tp"}, 4);
  d.tensors.push_back({"act", {8, 4096, 1024}, DType::BFloat16, parse_state("RP(sum)"), parse_state("RR")});
  d.tensors.push_back({"grad", {1024, 1024}, DType::Float32, parse_state("P(sum)S(0)"), parse_state("S(1)S(0)")});
  d.workload = Workload{{{"act", 4}, {"grad", 1}}, std::nullopt};
  return d;
}

// The header's example: (dp 2, tp 4) on hosts of 4, Llama 3 8B with fsdp on dp and tp on tp.
Design llama_design() {
  Design d = design_of({2, 4}, {"dp", "tp"}, 4);
  d.name = "llama3-8b";
  ModelSpec model = llama3_model("llama3_8b");
  model.axes = default_model_axes(d.mesh);
  d.workload = Workload{{}, model};
  return d;
}

CostModelFactory comm_models() {
  return [](const std::vector<std::int64_t>& shape, std::int64_t per_host) -> std::shared_ptr<const CostModel> {
    return std::make_shared<const CommCostModel>(shape, per_host);
  };
}

CostModelFactory fixed_models() {
  auto fixed = std::make_shared<const FixedCostModel>();
  return [fixed](const std::vector<std::int64_t>&, std::int64_t) -> std::shared_ptr<const CostModel> { return fixed; };
}

std::vector<std::vector<std::int64_t>> shapes_of(const std::vector<MeshSpec>& meshes) {
  std::vector<std::vector<std::int64_t>> out;
  for (const MeshSpec& m : meshes) out.push_back(m.shape);
  return out;
}

// ---- Candidates ----------------------------------------------------------------------------------------------------

TEST(AdvisorCandidates, OrdersAreEveryPermutationTheDesignFirst) {
  const Design d = design_of({2, 3, 4}, {"pp", "dp", "tp"}, 4);
  const std::vector<MeshSpec> c = advisor_candidates(d, AdvisorSearch::Orders);
  ASSERT_EQ(c.size(), 6U);
  EXPECT_EQ(c[0], d.mesh);
  std::set<std::vector<std::string>> orders;
  for (const MeshSpec& m : c) {
    orders.insert(m.names);
    // Each axis keeps its size: the sizes move with the names.
    for (std::size_t a = 0; a < 3; ++a) {
      const auto it = std::find(d.mesh.names.begin(), d.mesh.names.end(), m.names[a]);
      EXPECT_EQ(m.shape[a], d.mesh.shape[static_cast<std::size_t>(it - d.mesh.names.begin())]);
    }
  }
  EXPECT_EQ(orders.size(), 6U);
  EXPECT_EQ(c[1].names, (std::vector<std::string>{"pp", "tp", "dp"}));
  EXPECT_EQ(advisor_candidates(design_of({2, 2, 2, 2}, {"a", "b", "c", "d"}, 8), AdvisorSearch::Orders).size(), 24U);
  EXPECT_EQ(advisor_candidates(design_of({8}, {"dp"}, 8), AdvisorSearch::Orders).size(), 1U);
}

TEST(AdvisorCandidates, FactorizationsAreEveryOrderedFactorization) {
  // 16 into 2 axes: (1,16) (2,8) (4,4) (8,2) (16,1), the design's own first.
  const Design d = design_of({4, 4}, {"dp", "tp"}, 8);
  const std::vector<MeshSpec> c = advisor_candidates(d, AdvisorSearch::Factorizations);
  EXPECT_EQ(shapes_of(c), (std::vector<std::vector<std::int64_t>>{{4, 4}, {1, 16}, {2, 8}, {8, 2}, {16, 1}}));
  for (const MeshSpec& m : c) EXPECT_EQ(m.names, d.mesh.names);
  // 12 = 2^2 * 3 into 3 axes: C(4,2) * C(3,2) = 18; 16384 = 2^14 into 4 axes: C(17,3) = 680.
  EXPECT_EQ(advisor_candidates(design_of({2, 3, 2}, {"a", "b", "c"}, 4), AdvisorSearch::Factorizations).size(), 18U);
  EXPECT_EQ(advisor_candidates(design_of({128, 16, 1, 8}, {"dp", "pp", "cp", "tp"}, 8), AdvisorSearch::Factorizations)
                .size(),
            680U);
  // A prime world: each axis takes it once.
  EXPECT_EQ(advisor_candidates(design_of({7, 1, 1}, {"a", "b", "c"}, 7), AdvisorSearch::Factorizations).size(), 3U);
}

TEST(AdvisorCandidates, BothIsEveryFactorizationInEveryOrder) {
  // 5 factorizations x 2 orders = 10, but (tp 16, dp 1) is (dp 1, tp 16) and (tp 1, dp 16) is (dp 16, tp 1): the
  // same groups on every axis, one layout each.
  const Design d = design_of({4, 4}, {"dp", "tp"}, 8);
  const std::vector<MeshSpec> c = advisor_candidates(d, AdvisorSearch::Both);
  ASSERT_EQ(c.size(), 8U);
  EXPECT_EQ(c[0], d.mesh);
  EXPECT_EQ(c[1].names, (std::vector<std::string>{"tp", "dp"}));
  std::set<std::vector<std::pair<std::string, std::int64_t>>> layouts;  // the axes of size > 1, in order
  for (const MeshSpec& m : c) {
    std::vector<std::pair<std::string, std::int64_t>> key;
    for (std::size_t a = 0; a < m.shape.size(); ++a) {
      if (m.shape[a] > 1) key.emplace_back(m.names[a], m.shape[a]);
    }
    layouts.insert(key);
  }
  EXPECT_EQ(layouts.size(), 8U);
  // 16384 = 2^14 into (dp, pp, cp, tp): the sum over the 680 factorizations of k! for its k axes of size > 1.
  EXPECT_EQ(advisor_candidates(design_of({128, 16, 1, 8}, {"dp", "pp", "cp", "tp"}, 8), AdvisorSearch::Both).size(),
            8896U);
}

TEST(AdvisorCandidates, OrdersThatOnlyMoveASizeOneAxisAreOneLayout) {
  // Llama 3 405B: 24 orders of (dp 128, pp 16, cp 1, tp 8), 6 layouts; the design's own first, cp kept where the
  // first order enumerated puts it.
  const Design d = design_of({128, 16, 1, 8}, {"dp", "pp", "cp", "tp"}, 8);
  const std::vector<MeshSpec> c = advisor_candidates(d, AdvisorSearch::Orders);
  ASSERT_EQ(c.size(), 6U);
  EXPECT_EQ(c[0], d.mesh);
  std::set<std::vector<std::string>> big;  // the order of dp, pp and tp
  for (const MeshSpec& m : c) {
    std::vector<std::string> names;
    for (std::size_t a = 0; a < m.shape.size(); ++a) {
      if (m.shape[a] > 1) names.push_back(m.names[a]);
    }
    big.insert(names);
  }
  EXPECT_EQ(big.size(), 6U);
}

TEST(AdvisorCandidates, FlattenedAxesListTheirMembersInTheCandidatesOrder) {
  Design d = design_of({2, 2, 2}, {"dp_replicate", "dp_shard", "tp"}, 8);
  d.mesh.flattened.push_back({"dp", {"dp_replicate", "dp_shard"}});
  for (const MeshSpec& m : advisor_candidates(d, AdvisorSearch::Orders)) {
    ASSERT_EQ(m.flattened.size(), 1U);
    EXPECT_EQ(m.flattened[0].name, "dp");
    const auto pos = [&m](const std::string& n) { return std::find(m.names.begin(), m.names.end(), n) - m.names.begin(); };
    const bool replicate_first = pos("dp_replicate") < pos("dp_shard");
    EXPECT_EQ(m.flattened[0].axes, replicate_first ? (std::vector<std::string>{"dp_replicate", "dp_shard"})
                                                   : (std::vector<std::string>{"dp_shard", "dp_replicate"}));
  }
}

TEST(AdvisorCandidates, TooManyCandidatesAreRefusedBeforeEnumerating) {
  const Design d = design_of({128, 16, 1, 8}, {"dp", "pp", "cp", "tp"}, 8);
  expect_error([&] { (void)advisor_candidates(d, AdvisorSearch::Both, 1000); }, ErrorKind::ValueError,
               {"search \"both\" on (dp 128, pp 16, cp 1, tp 8) enumerates more than max_candidates = 1000 candidates "
                "(16320)"});
  // 12 axes: 12! orders, far beyond.
  std::vector<std::int64_t> shape(12, 1);
  std::vector<std::string> names;
  for (int i = 0; i < 12; ++i) names.push_back("a" + std::to_string(i));
  expect_error([&] { (void)advisor_candidates(design_of(shape, names, 1), AdvisorSearch::Orders); },
               ErrorKind::ValueError, {"enumerates more than max_candidates = 200000 candidates"});
  EXPECT_EQ(advisor_search_from_string("factorizations"), AdvisorSearch::Factorizations);
  EXPECT_EQ(to_string(AdvisorSearch::Both), "both");
  expect_error([] { (void)advisor_search_from_string("all"); }, ErrorKind::ValueError,
               {"search \"all\": unknown search (expected orders, factorizations or both)"});
}

// ---- with_layout ---------------------------------------------------------------------------------------------------

TEST(WithLayout, StatesFollowTheirAxesShardOrderIncluded) {
  Design d = design_of({2, 3, 4}, {"a", "b", "c"}, 4);
  // Dim 0 split by b first, then a; c holds a partial sum.
  d.tensors.push_back({"t", {24, 8}, DType::Float32, parse_state("S(0)[1]S(0)[0]P(sum)"), parse_state("RS(1)R")});
  const MeshSpec moved{{4, 2, 3}, {"c", "a", "b"}, {}};
  const Design out = with_layout(d, moved);
  EXPECT_EQ(out.mesh.shape, (std::vector<std::int64_t>{4, 2, 3}));
  EXPECT_EQ(out.mesh.names, (std::vector<std::string>{"c", "a", "b"}));
  // a -> axis 1, b -> axis 2, c -> axis 0; dim 0's order stays b, then a: axes 2, then 1.
  EXPECT_EQ(to_string(out.tensors[0].src), "P(sum)S(0)[1]S(0)[0]");
  EXPECT_EQ(out.tensors[0].src.shard_axes(0), (std::vector<std::size_t>{2, 1}));
  EXPECT_EQ(to_string(out.tensors[0].dst), "RRS(1)");
  // Back to the design's order: the design again.
  EXPECT_EQ(with_layout(out, d.mesh), d);
  // Other sizes too (a factorization); the world stays.
  const Design resized = with_layout(d, MeshSpec{{6, 2, 2}, {"b", "c", "a"}, {}});
  EXPECT_EQ(to_string(resized.tensors[0].src), "S(0)[0]P(sum)S(0)[1]");
  EXPECT_EQ(resized.world, d.world);
}

TEST(WithLayout, FlattenedAxesAndTheWorkloadFollowByName) {
  Design d = llama_design();
  d.mesh.flattened.push_back({"dp_tp", {"dp", "tp"}});
  const Design out = with_layout(d, MeshSpec{{4, 2}, {"tp", "dp"}, {}});
  ASSERT_EQ(out.mesh.flattened.size(), 1U);
  EXPECT_EQ(out.mesh.flattened[0].axes, (std::vector<std::string>{"tp", "dp"}));
  ASSERT_TRUE(out.workload);
  EXPECT_EQ(out.workload, d.workload);  // roles are names: they follow their axes
  EXPECT_NO_THROW(validate_workload(*out.workload, out));
}

TEST(WithLayout, ErrorsNameTheLayout) {
  const Design d = tensors_design();
  expect_error([&] { (void)with_layout(d, MeshSpec{{2, 4}, {"dp", "mp"}, {}}); }, ErrorKind::ValueError,
               {"layout (dp 2, mp 4): its axes are not the design's axes (dp, tp) in some order"});
  expect_error([&] { (void)with_layout(d, MeshSpec{{2, 4}, {"dp", "dp"}, {}}); }, ErrorKind::ValueError,
               {"not the design's axes"});
  expect_error([&] { (void)with_layout(d, MeshSpec{{4, 4}, {"dp", "tp"}, {}}); }, ErrorKind::ValueError,
               {"layout (dp 4, tp 4) holds more ranks than the design's world of 8"});
  expect_error([&] { (void)with_layout(d, MeshSpec{{0, 4}, {"dp", "tp"}, {}}); }, ErrorKind::ValueError,
               {"layout (dp 0, tp 4): dp = 0 (sizes must be >= 1)"});
}

// ---- Ranking -------------------------------------------------------------------------------------------------------

// The cost of a layout computed here, item by item, from the planner and the model's send price.
double total_of(const Design& design, const MeshSpec& mesh, const CostModel& model) {
  const Design d = with_layout(design, mesh);
  std::vector<std::vector<std::size_t>> flattened;
  for (const FlattenSpec& f : mesh.flattened) {
    std::vector<std::size_t> group;
    for (const std::string& n : f.axes) {
      group.push_back(static_cast<std::size_t>(std::find(mesh.names.begin(), mesh.names.end(), n) - mesh.names.begin()));
    }
    flattened.push_back(group);
  }
  double total = 0;
  for (const WorkItem& item : expand_workload(d)) {
    if (item.kind == WorkItemKind::Send) {
      std::int64_t numel = 1;
      for (const std::int64_t s : item.shape) numel *= s;
      total += model.send_cost(mesh.shape, item.axis, numel * itemsize(item.dtype)) * static_cast<double>(item.count);
      continue;
    }
    PlanRequest r;
    r.mesh_shape = mesh.shape;
    r.tensor_shape = item.shape;
    r.src = item.src;
    r.dst = item.dst;
    r.itemsize = itemsize(item.dtype);
    r.flattened = flattened;
    total += plan_redistribution(r, model).cost * static_cast<double>(item.count);
  }
  return total;
}

void expect_ranked_by_independent_totals(const Design& design, AdvisorSearch search) {
  AdvisorOptions options;
  options.search = search;
  const AdvisorResult r = advise(design, comm_models(), options);
  const std::vector<MeshSpec> all = advisor_candidates(design, search);
  ASSERT_EQ(r.ranked.size(), all.size());
  EXPECT_EQ(r.candidates, all.size());
  EXPECT_EQ(r.rejected, 0U);
  std::vector<std::pair<double, std::size_t>> expected;
  for (std::size_t i = 0; i < all.size(); ++i) {
    expected.emplace_back(total_of(design, all[i], CommCostModel(all[i].shape, design.devices_per_host)), i);
  }
  std::stable_sort(expected.begin(), expected.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t k = 0; k < all.size(); ++k) {
    SCOPED_TRACE("rank " + std::to_string(k + 1) + ": " + layout_text(r.ranked[k].mesh));
    EXPECT_EQ(r.ranked[k].mesh, all[expected[k].second]);
    EXPECT_EQ(r.ranked[k].cost, expected[k].first);
    EXPECT_TRUE(r.ranked[k].unpriced.empty());
    // The breakdowns add up to the cost.
    double by_axis = 0;
    for (const AxisCost& a : r.ranked[k].axes) {
      by_axis += a.cost;
      double by_collective = 0;
      for (const auto& [name, cost] : a.by_collective) by_collective += cost;
      EXPECT_NEAR(by_collective, a.cost, 1e-9 * std::max(1.0, a.cost));
    }
    double by_category = 0;
    for (const auto& [name, cost] : r.ranked[k].by_category) by_category += cost;
    EXPECT_NEAR(by_axis, r.ranked[k].cost, 1e-9 * r.ranked[k].cost);
    EXPECT_NEAR(by_category, r.ranked[k].cost, 1e-9 * r.ranked[k].cost);
  }
}

TEST(Advise, RanksByTheSumOfPlanCostsTimesCounts) {
  expect_ranked_by_independent_totals(tensors_design(), AdvisorSearch::Orders);
  expect_ranked_by_independent_totals(tensors_design(), AdvisorSearch::Both);
  Design llama = llama_design();
  llama.world = 16;
  llama.mesh = MeshSpec{{2, 2, 4}, {"pp", "dp", "tp"}, {}};
  llama.workload->model->axes = default_model_axes(llama.mesh);
  llama.workload->model->micro_batches = 4;
  expect_ranked_by_independent_totals(llama, AdvisorSearch::Orders);
  expect_ranked_by_independent_totals(llama, AdvisorSearch::Factorizations);
}

TEST(Advise, TheHeaderExample) {
  // advisor.hpp's example, verbatim.
  const AdvisorResult r = advise(llama_design(), comm_models());
  ASSERT_EQ(r.ranked.size(), 2U);
  EXPECT_EQ(layout_text(r.ranked[0].mesh), "(dp 2, tp 4)");
  EXPECT_EQ(layout_text(r.ranked[1].mesh), "(tp 4, dp 2)");
  EXPECT_EQ(r.reason, "tp stays inside a host; dp's all-gathers cross 2 hosts; (tp 4, dp 2) costs 1.4x: its tp "
                      "all-gathers cross 2 hosts");
  EXPECT_EQ(r.tied_with_best, 1U);
  EXPECT_EQ(std::round(r.ranked[0].cost), 532387.0);
  EXPECT_EQ(std::round(r.ranked[1].cost), 723577.0);
  EXPECT_EQ(r.ranked[0].axes[0].hosts, 2);
  EXPECT_EQ(r.ranked[0].axes[1].hosts, 1);
  EXPECT_EQ(r.ranked[1].axes[0].hosts, 2);  // tp {0, 2, 4, 6}
  EXPECT_EQ(r.ranked[1].axes[1].hosts, 1);  // dp {0, 1}
}

TEST(Advise, HostsSpannedAgreeWithTheGroupsOnHostsOfConsecutiveRanks) {
  for (const std::int64_t per_host : {1, 3, 4, 8, 48, 96}) {
    SCOPED_TRACE("hosts of " + std::to_string(per_host));
    Design d = design_of({4, 6, 4}, {"dp", "cp", "tp"}, per_host);
    d.tensors.push_back({"x", {96, 96}, DType::Float32, parse_state("S(0)RR"), parse_state("RRR")});
    d.workload = Workload{{{"x", 1}}, std::nullopt};
    AdvisorOptions options;
    options.search = AdvisorSearch::Both;
    std::vector<std::int64_t> rank_hosts(96);
    for (std::int64_t r = 0; r < 96; ++r) rank_hosts[static_cast<std::size_t>(r)] = r / per_host;
    for (const CandidateCost& c : advise(d, fixed_models(), options).ranked) {
      for (std::size_t a = 0; a < c.axes.size(); ++a) {
        std::int64_t most = 0;
        for (const GroupShape& g : axis_group_shapes(c.mesh.shape, a, rank_hosts)) most = std::max(most, g.hosts);
        EXPECT_EQ(c.axes[a].hosts, most) << layout_text(c.mesh) << " axis " << c.axes[a].name;
      }
    }
  }
}

void expect_same(const AdvisorResult& a, const AdvisorResult& b) {
  ASSERT_EQ(a.ranked.size(), b.ranked.size());
  for (std::size_t k = 0; k < a.ranked.size(); ++k) {
    const CandidateCost& x = a.ranked[k];
    const CandidateCost& y = b.ranked[k];
    EXPECT_EQ(x.mesh, y.mesh);
    EXPECT_EQ(x.cost, y.cost);
    EXPECT_EQ(x.by_category, y.by_category);
    EXPECT_EQ(x.unpriced, y.unpriced);
    ASSERT_EQ(x.axes.size(), y.axes.size());
    for (std::size_t i = 0; i < x.axes.size(); ++i) {
      EXPECT_EQ(x.axes[i].name, y.axes[i].name);
      EXPECT_EQ(x.axes[i].size, y.axes[i].size);
      EXPECT_EQ(x.axes[i].hosts, y.axes[i].hosts);
      EXPECT_EQ(x.axes[i].cost, y.axes[i].cost);
      EXPECT_EQ(x.axes[i].by_collective, y.axes[i].by_collective);
      EXPECT_EQ(x.axes[i].counts, y.axes[i].counts);
    }
  }
  EXPECT_EQ(a.candidates, b.candidates);
  EXPECT_EQ(a.rejected, b.rejected);
  EXPECT_EQ(a.tied_with_best, b.tied_with_best);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.plans_computed + a.plans_reused, b.plans_computed + b.plans_reused);
}

TEST(Advise, TheCacheAndTheThreadsChangeNothing) {
  Design d = llama_design();
  d.world = 16;
  d.mesh = MeshSpec{{2, 2, 4}, {"pp", "dp", "tp"}, {{"dp_tp", {"dp", "tp"}}}};
  d.workload->model->axes = default_model_axes(d.mesh);
  for (const AdvisorSearch search : {AdvisorSearch::Orders, AdvisorSearch::Both}) {
    AdvisorOptions cached;
    cached.search = search;
    cached.threads = 1;
    AdvisorOptions uncached = cached;
    uncached.reuse_plans = false;
    AdvisorOptions threaded = cached;
    threaded.threads = 3;
    const AdvisorResult a = advise(d, comm_models(), cached);
    const AdvisorResult b = advise(d, comm_models(), uncached);
    const AdvisorResult c = advise(d, comm_models(), threaded);
    expect_same(a, b);
    expect_same(a, c);
    EXPECT_EQ(b.plans_reused, 0U);
    EXPECT_EQ(a.plans_computed, c.plans_computed);
    EXPECT_EQ(a.plans_reused, c.plans_reused);
  }
  // Identical requests within a candidate are planned once: the two tensors here are the same request.
  Design twice = tensors_design();
  twice.tensors.push_back(twice.tensors[0]);
  twice.tensors.back().name = "act2";
  twice.workload->tensors.push_back({"act2", 2});
  const AdvisorResult r = advise(twice, comm_models());
  EXPECT_EQ(r.plans_computed, 2U * 2U);  // act and grad on each of the 2 orders
  EXPECT_EQ(r.plans_reused, 2U);
}

TEST(Advise, MergedStepsSplitOverTheirAxesByLogSize) {
  // P(sum)P(sum) -> RR on (dp 2, tp 4) with dp and tp flattened: one all_reduce on the flattened group of 8,
  // whose cost goes 1/3 to dp (log 2) and 2/3 to tp (log 4).
  Design d = design_of({2, 4}, {"dp", "tp"}, 8);
  d.mesh.flattened.push_back({"dp_tp", {"dp", "tp"}});
  d.tensors.push_back({"g", {64, 64}, DType::Float32, parse_state("P(sum)P(sum)"), parse_state("RR")});
  d.workload = Workload{{{"g", 3}}, std::nullopt};
  AdvisorOptions options;
  options.threads = 1;
  const AdvisorResult r = advise(d, comm_models(), options);
  const CandidateCost& own = r.ranked[0].mesh == d.mesh ? r.ranked[0] : r.ranked[1];
  PlanRequest req;
  req.mesh_shape = {2, 4};
  req.tensor_shape = {64, 64};
  req.src = parse_state("P(sum)P(sum)");
  req.dst = parse_state("RR");
  req.flattened = {{0, 1}};
  const Plan plan = plan_redistribution(req, CommCostModel({2, 4}, 8));
  ASSERT_EQ(plan.steps.size(), 1U);
  ASSERT_TRUE(plan.steps[0].merged);
  EXPECT_EQ(own.cost, plan.cost * 3);
  EXPECT_DOUBLE_EQ(own.axes[0].by_collective.at("all_reduce"), plan.steps[0].cost * 3 / 3);
  EXPECT_DOUBLE_EQ(own.axes[1].by_collective.at("all_reduce"), plan.steps[0].cost * 3 * 2 / 3);
  // One merged all_reduce per use, counted on each of its axes.
  EXPECT_EQ(own.axes[0].counts.at("all_reduce"), 3);
  EXPECT_EQ(own.axes[1].counts.at("all_reduce"), 3);
  EXPECT_EQ(own.by_category.at("tensor"), plan.cost * 3);
}

TEST(Advise, SendsArePricedByTheModelsPointToPointPrice) {
  Design d = llama_design();
  d.world = 16;
  d.mesh = MeshSpec{{4, 4}, {"pp", "tp"}, {}};
  d.workload->model->axes = default_model_axes(d.mesh);
  d.workload->model->micro_batches = 8;
  AdvisorOptions options;
  options.threads = 1;
  const AdvisorResult r = advise(d, comm_models(), options);
  for (const CandidateCost& c : r.ranked) {
    const Design laid = with_layout(d, c.mesh);
    const CommCostModel model(c.mesh.shape, d.devices_per_host);
    double sends = 0;
    std::int64_t count = 0;
    std::size_t pp = 0;
    for (const WorkItem& item : expand_workload(laid)) {
      if (item.kind != WorkItemKind::Send) continue;
      std::int64_t numel = 1;
      for (const std::int64_t s : item.shape) numel *= s;
      sends += model.send_cost(c.mesh.shape, item.axis, numel * itemsize(item.dtype)) * static_cast<double>(item.count);
      count += item.count;
      pp = item.axis;
    }
    ASSERT_GT(count, 0) << layout_text(c.mesh);
    EXPECT_EQ(c.axes[pp].name, "pp");
    EXPECT_DOUBLE_EQ(c.axes[pp].by_collective.at("send"), sends);
    EXPECT_EQ(c.axes[pp].counts.at("send"), count);
    EXPECT_DOUBLE_EQ(c.by_category.at("pp_send"), sends);
  }
}

TEST(Advise, TiesKeepTheEnumerationOrder) {
  // The fixed model charges by collective, not by axis or size: every order of the axes costs the same.
  const Design d = design_of({2, 2, 2}, {"pp", "dp", "tp"}, 8);
  Design w = d;
  w.tensors.push_back({"x", {8, 8}, DType::Float32, parse_state("S(0)P(sum)R"), parse_state("RRR")});
  w.workload = Workload{{{"x", 2}}, std::nullopt};
  const AdvisorResult r = advise(w, fixed_models());
  ASSERT_EQ(r.ranked.size(), 6U);
  EXPECT_EQ(r.tied_with_best, 6U);
  const std::vector<MeshSpec> order = advisor_candidates(w, AdvisorSearch::Orders);
  for (std::size_t k = 0; k < 6; ++k) EXPECT_EQ(r.ranked[k].mesh, order[k]);
  EXPECT_EQ(r.ranked[0].mesh, w.mesh);  // the design's own layout first
  EXPECT_EQ(r.reason, "every axis stays inside a host; dp's all-reduces cost the most; 5 other layouts cost the same");
  // top keeps the best K, after the ties were counted.
  AdvisorOptions top;
  top.top = 2;
  const AdvisorResult two = advise(w, fixed_models(), top);
  EXPECT_EQ(two.ranked.size(), 2U);
  EXPECT_EQ(two.tied_with_best, 6U);
  EXPECT_EQ(two.candidates, 6U);
}

TEST(Advise, Constraints) {
  Design d = llama_design();
  d.world = 24;
  d.mesh = MeshSpec{{3, 2, 4}, {"pp", "dp", "tp"}, {}};
  d.workload->model->axes = default_model_axes(d.mesh);
  AdvisorOptions options;
  options.search = AdvisorSearch::Factorizations;
  const std::size_t all = advisor_candidates(d, AdvisorSearch::Factorizations).size();  // 24 = 2^3 * 3: 10 * 3
  ASSERT_EQ(all, 30U);
  // Fixed sizes.
  options.constraints.fixed = {{"tp", 4}};
  AdvisorResult r = advise(d, comm_models(), options);
  EXPECT_EQ(r.candidates, all);
  EXPECT_EQ(r.rejected + r.ranked.size(), all);
  EXPECT_EQ(r.ranked.size(), 4U);  // pp * dp = 6: (1,6) (2,3) (3,2) (6,1)
  for (const CandidateCost& c : r.ranked) EXPECT_EQ(c.mesh.shape[2], 4);
  // tp inside a host of 4 ranks: tp is innermost, so every tp of 1, 2 or 4 (tp 3 puts ranks 3, 4, 5 on 2 hosts).
  options.constraints.fixed.clear();
  options.constraints.within_host = {"tp"};
  r = advise(d, comm_models(), options);
  for (const CandidateCost& c : r.ranked) EXPECT_EQ(c.axes[2].hosts, 1) << layout_text(c.mesh);
  std::size_t inside = 0;
  for (const MeshSpec& m : advisor_candidates(d, AdvisorSearch::Factorizations)) inside += 4 % m.shape[2] == 0 ? 1U : 0U;
  EXPECT_EQ(r.ranked.size(), inside);
  // pp divides Llama 3 8B's 32 layers: pp of 3, 6, 12 or 24 is rejected.
  options.constraints.within_host.clear();
  options.constraints.pp_divides_layers = true;
  r = advise(d, comm_models(), options);
  std::size_t dividing = 0;
  for (const MeshSpec& m : advisor_candidates(d, AdvisorSearch::Factorizations)) dividing += 32 % m.shape[0] == 0 ? 1U : 0U;
  EXPECT_EQ(r.ranked.size(), dividing);
  EXPECT_EQ(r.rejected, all - dividing);
  for (const CandidateCost& c : r.ranked) EXPECT_EQ(32 % c.mesh.shape[0], 0) << layout_text(c.mesh);
}

TEST(Advise, FixedSizesOnLlama3_405B) {
  // advisor.hpp's example of advise(): tp fixed at 8 among the 680 factorizations of 16,384.
  Design d = design_of({128, 16, 1, 8}, {"dp", "pp", "cp", "tp"}, 8);
  d.name = "llama3-405b";
  ModelSpec model = llama3_model("llama3_405b");
  model.micro_batches = 16;
  model.axes = default_model_axes(d.mesh);
  d.workload = Workload{{}, model};
  AdvisorOptions options;
  options.search = AdvisorSearch::Factorizations;
  options.constraints.fixed = {{"tp", 8}};
  options.top = 5;
  const AdvisorResult r = advise(d, fixed_models(), options);
  EXPECT_EQ(r.candidates, 680U);
  EXPECT_EQ(r.rejected, 602U);
  EXPECT_EQ(r.ranked.size(), 5U);
  for (const CandidateCost& c : r.ranked) EXPECT_EQ(c.mesh.shape[3], 8);
}

// Every pipeline stage holds a layer: a factorization with more pp stages than the model has layers is listed as
// unpriced, saying why, and ranks last (it was priced with empty stages, and won: Llama 3 405B's pp 512 of 126 layers).
TEST(Advise, MoreStagesThanLayersCannotBePriced) {
  Design d = design_of({2, 4}, {"pp", "dp"}, 8);
  ModelSpec model = llama3_model("llama3_8b");
  model.layers = 3;
  model.axes = default_model_axes(d.mesh);
  d.workload = Workload{{}, model};
  AdvisorOptions options;
  options.search = AdvisorSearch::Factorizations;  // pp 1, 2, 4, 8
  const AdvisorResult r = advise(d, comm_models(), options);
  ASSERT_EQ(r.ranked.size(), 4U);
  EXPECT_EQ(r.unpriced, 2U);
  for (std::size_t i = 0; i < 4; ++i) {
    const CandidateCost& c = r.ranked[i];
    EXPECT_EQ(std::isfinite(c.cost), c.mesh.shape[0] <= 3) << layout_text(c.mesh);
    if (c.mesh.shape[0] > 3) {
      EXPECT_EQ(c.unpriced, "the workload does not expand on this layout: workload.model: the pp axis \"pp\" has " +
                                std::to_string(c.mesh.shape[0]) + " stages but the model 3 layers: a stage would hold "
                                "none (pp <= layers)");
    }
  }
}

// A calibration of 8 ranks measured as (dp 2, tp 4) on 2 hosts of 4 holding all_reduce curves of `shapes` only; the
// factory prices every candidate with it.
std::shared_ptr<const CalibratedCostModel> all_reduce_curves(std::initializer_list<GroupShape> shapes) {
  Calibration c;
  c.backend = "mpi";
  c.world = 8;
  c.mesh_shape = {2, 4};
  c.mesh_names = {"dp", "tp"};
  c.rank_hosts = {0, 0, 0, 0, 1, 1, 1, 1};
  for (const GroupShape& shape : shapes) {
    c.groups.push_back({.collective = "all_reduce", .shape = shape, .model = CurveModel::Piecewise, .fit = {},
                        .points = {{1024, 10}, {1 << 30, 5000}}, .holdout = {}, .as_run = {}});
  }
  return std::make_shared<const CalibratedCostModel>(c, std::vector<std::string>{});
}
CostModelFactory every_candidate(std::shared_ptr<const CalibratedCostModel> model) {
  return [model](const std::vector<std::int64_t>&, std::int64_t) -> std::shared_ptr<const CostModel> { return model; };
}

TEST(Advise, UnpricedCandidatesRankLastAndSayWhy) {
  // A calibration measured only within a host: tp's all_reduce across hosts has no curve.
  const CostModelFactory calibrated = every_candidate(all_reduce_curves({{4, 1, 4}}));
  Design d = design_of({2, 4}, {"dp", "tp"}, 4);
  d.tensors.push_back({"act", {8, 1024}, DType::Float32, parse_state("RP(sum)"), parse_state("RR")});
  d.workload = Workload{{{"act", 1}}, std::nullopt};
  const AdvisorResult r = advise(d, calibrated);
  ASSERT_EQ(r.ranked.size(), 2U);
  EXPECT_EQ(r.ranked[0].mesh, d.mesh);
  EXPECT_TRUE(std::isfinite(r.ranked[0].cost));
  EXPECT_EQ(r.ranked[1].cost, kInf);
  EXPECT_EQ(r.ranked[1].unpriced,
            "act: no plan: no redistribution path from P(sum)R to RR (newest transitions; Partial changes its reduce op "
            "only through Replicate); the calibration cannot price: all_reduce on axis 0: 4 ranks on 2 hosts (2 per host) "
            "never measured (and 7 more)");
  EXPECT_TRUE(r.ranked[1].by_category.empty());
  EXPECT_NE(r.reason.find("; (tp 4, dp 2) cannot be priced (act: no plan: no redistribution path from P(sum)R"),
            std::string::npos)
      << r.reason;
}

TEST(Advise, AnUnpricedItemNamesTheGapOnTheAxisItMovesFirst) {
  // Curves for all_reduce on tp inside a host and on dp across the 2 hosts: (dp 2, tp 4) prices act's all_reduce on
  // dp. In (tp 4, dp 2) act moves on axis 1 (dp, now 2 ranks inside a host): its gap is named, not axis 0's
  // (tp's groups now cross hosts, which act never touches), though the calibration lacks both.
  const auto model = all_reduce_curves({{4, 1, 4}, {2, 2, 1}});
  const CostModelFactory calibrated = every_candidate(model);
  Design d = design_of({2, 4}, {"dp", "tp"}, 4);
  d.tensors.push_back({"act", {8, 1024}, DType::Float32, parse_state("P(sum)R"), parse_state("RR")});
  d.workload = Workload{{{"act", 1}}, std::nullopt};
  const AdvisorResult r = advise(d, calibrated);
  ASSERT_EQ(r.ranked.size(), 2U);
  EXPECT_TRUE(std::isfinite(r.ranked[0].cost));
  EXPECT_EQ(r.ranked[1].mesh.names, (std::vector<std::string>{"tp", "dp"}));
  EXPECT_EQ(model->gaps(r.ranked[1].mesh.shape).front(),
            "all_reduce on axis 0: 4 ranks on 2 hosts (2 per host) never measured");
  EXPECT_TRUE(r.ranked[1].unpriced.ends_with(
      "; the calibration cannot price: all_reduce on axis 1: 2 ranks on 1 host (2 per host) never measured (and 7 more)"))
      << r.ranked[1].unpriced;
}

TEST(Advise, NotesWhereTheCommModelPricesAStraddlingAxisAsInsideAHost) {
  // 12 ranks on hosts of 4 as (dp 4, tp 3): tp's group {3, 4, 5} spans hosts 0 and 1, yet PyTorch's rule (3 ranks
  // from tp inward <= 4 per host) prices tp inside a host. (tp 3, dp 4): dp's 4 ranks fill a host, tp crosses, and
  // comm says so too. Hosts of 3, or a model other than comm: no note.
  Design d = design_of({4, 3}, {"dp", "tp"}, 4);
  d.tensors.push_back({"act", {96, 96}, DType::Float32, parse_state("RP(sum)"), parse_state("RR")});
  d.workload = Workload{{{"act", 1}}, std::nullopt};
  const CostModelFactory comm = [](const std::vector<std::int64_t>& shape,
                                   std::int64_t per_host) -> std::shared_ptr<const CostModel> {
    return std::make_shared<const CommCostModel>(shape, per_host);
  };
  const AdvisorResult r = advise(d, comm);
  ASSERT_EQ(r.ranked.size(), 2U);
  EXPECT_EQ(r.host_rule_note,
            "the comm model prices tp in (dp 4, tp 3) as inside a host (PyTorch's rule: it and the axes after it hold 3 "
            "ranks, at most 4 per host) though its groups cross 2 hosts; a calibrated model prices groups where they "
            "fall");
  const CostModelFactory fixed = [](const std::vector<std::int64_t>&,
                                    std::int64_t) -> std::shared_ptr<const CostModel> {
    return std::make_shared<const FixedCostModel>();
  };
  EXPECT_EQ(advise(d, fixed).host_rule_note, "");
  d.devices_per_host = 3;
  EXPECT_EQ(advise(d, comm).host_rule_note, "");
}

TEST(Advise, Errors) {
  Design none = tensors_design();
  none.workload.reset();
  expect_error([&] { (void)advise(none, comm_models()); }, ErrorKind::ValueError,
               {"design \"advisor-test\" has no workload"});
  Design bad = tensors_design();
  bad.workload->tensors[0].tensor = "missing";
  EXPECT_THROW((void)advise(bad, comm_models()), Error);  // validate_workload's message
  AdvisorOptions options;
  options.constraints.fixed = {{"mp", 2}};
  expect_error([&] { (void)advise(tensors_design(), comm_models(), options); }, ErrorKind::ValueError,
               {"constraints.fixed: no mesh axis is named \"mp\" (axes: dp, tp)"});
  options.constraints.fixed = {{"tp", 0}};
  expect_error([&] { (void)advise(tensors_design(), comm_models(), options); }, ErrorKind::ValueError,
               {"constraints.fixed.tp = 0: sizes must be >= 1"});
  options.constraints.fixed = {{"tp", 3}};
  expect_error([&] { (void)advise(tensors_design(), comm_models(), options); }, ErrorKind::ValueError,
               {"no candidate layout satisfies the constraints (tp = 3): all 2 of search \"orders\" were rejected"});
  options.constraints.fixed.clear();
  options.constraints.within_host = {"ep"};
  expect_error([&] { (void)advise(tensors_design(), comm_models(), options); }, ErrorKind::ValueError,
               {"constraints.within_host: no mesh axis is named \"ep\""});
  options.constraints.within_host.clear();
  options.constraints.pp_divides_layers = true;
  expect_error([&] { (void)advise(tensors_design(), comm_models(), options); }, ErrorKind::ValueError,
               {"constraints.pp_divides_layers: the workload has no model"});
  expect_error([&] { (void)advise(tensors_design(), CostModelFactory{}); }, ErrorKind::ValueError,
               {"no cost model factory"});
}

TEST(Advise, ACancelledSearchStopsWithARuntimeError) {
  // Set before it starts: no candidate is priced, and the caller learns why there is no result.
  std::atomic<bool> cancel{true};
  AdvisorOptions options;
  options.search = AdvisorSearch::Both;
  options.cancel = &cancel;
  expect_error([&] { (void)advise(tensors_design(), comm_models(), options); }, ErrorKind::RuntimeError,
               {"advise: cancelled"});
  // Not set: the same search ranks as without a flag.
  cancel = false;
  const AdvisorResult with = advise(tensors_design(), comm_models(), options);
  options.cancel = nullptr;
  const AdvisorResult without = advise(tensors_design(), comm_models(), options);
  ASSERT_EQ(with.ranked.size(), without.ranked.size());
  for (std::size_t i = 0; i < with.ranked.size(); ++i) EXPECT_EQ(with.ranked[i].cost, without.ranked[i].cost);
}

}  // namespace
}  // namespace meshloom
