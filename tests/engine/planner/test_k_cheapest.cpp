// The k cheapest plans (plan_k_cheapest): Yen's k-shortest loopless paths over the graph planner's state graph.
//
// The checks use an oracle written here from the transition table of planner.hpp (one step changes one axis,
// cases 1-6 and the newest planner's S(a) -> P(sum)), not the planner's own edge generator: every plan's path
// must be a loopless walk of that graph from src to dst, and on tiny graphs the k costs must be the k smallest
// costs of a brute-force enumeration of every loopless path. Every plan is also rebuilt step by step from its
// path and run on real data by the simulator.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/simulator.hpp"
#include "meshloom/plan/state.hpp"

#include "planner_test_support.hpp"
#include "support/random_state.hpp"

namespace {

using namespace meshloom;
using namespace meshloom::testing;

// ---- The oracle: the graph of planner.hpp, written from its table ------------------------------------------------

// The state after `axis` changes to `to`: a sharding axis leaves its dim's order, a new one goes to the end.
State moved(const State& s, std::size_t axis, const Placement& to) {
  std::vector<Placement> placements = s.placements();
  std::vector<ShardOrderEntry> order = s.shard_order();
  if (placements[axis].is_shard()) {
    for (auto& e : order) std::erase(e.axes, axis);
    std::erase_if(order, [](const ShardOrderEntry& e) { return e.axes.empty(); });
  }
  placements[axis] = to;
  if (to.is_shard()) {
    auto it = std::find_if(order.begin(), order.end(), [&](const ShardOrderEntry& e) { return e.dim == to.dim(); });
    if (it == order.end()) {
      order.push_back({to.dim(), {axis}});
    } else {
      it->axes.push_back(axis);
    }
  }
  return {std::move(placements), std::move(order)};
}

struct Move {
  State next;
  Collective collective;
};

// Every neighbour of `s` in the request's graph.
std::vector<Move> neighbours(const State& s, const PlanRequest& r) {
  const auto dims = static_cast<std::int64_t>(r.tensor_shape.size());
  const bool newest = r.variant == PartialVariant::Newest;
  std::vector<ReduceOp> ops;  // case 6
  if (newest) {
    for (const State* st : {&r.src, &r.dst}) {
      for (const auto& p : st->placements()) {
        if (p.is_partial() && std::find(ops.begin(), ops.end(), p.op()) == ops.end()) ops.push_back(p.op());
      }
    }
  } else {
    ops = {ReduceOp::Sum};
  }
  std::set<ReduceOp> present;
  for (const auto& p : s.placements()) {
    if (p.is_partial()) present.insert(p.op());
  }
  std::vector<Move> out;
  for (std::int64_t a = 0; a < dims; ++a) {
    const auto axes = s.shard_axes(a);
    if (axes.empty()) continue;
    const std::size_t last = axes.back();
    for (std::int64_t b = 0; b < dims; ++b) {
      if (b != a) out.push_back({moved(s, last, Placement::shard(b)), Collective::AllToAll});
    }
    out.push_back({moved(s, last, Placement::replicate()), Collective::AllGather});
    if (newest && r.dst.placement(last) == Placement::partial(ReduceOp::Sum)) {
      out.push_back({moved(s, last, Placement::partial(ReduceOp::Sum)), Collective::ShardToPartial});
    }
  }
  for (std::size_t axis = 0; axis < s.ndim(); ++axis) {
    const Placement& p = s.placement(axis);
    if (p.is_partial()) {
      out.push_back({moved(s, axis, Placement::replicate()), Collective::AllReduce});
      for (std::int64_t b = 0; b < dims; ++b) out.push_back({moved(s, axis, Placement::shard(b)), Collective::ReduceScatter});
    } else if (p.is_replicate()) {
      for (std::int64_t b = 0; b < dims; ++b) out.push_back({moved(s, axis, Placement::shard(b)), Collective::Chunk});
      for (const ReduceOp op : ops) {
        std::set<ReduceOp> mix = present;
        mix.insert(op);
        const bool sum_avg = std::all_of(mix.begin(), mix.end(), [](ReduceOp o) { return o == ReduceOp::Sum || o == ReduceOp::Avg; });
        if (newest && mix.size() > 1 && !sum_avg) continue;
        out.push_back({moved(s, axis, Placement::partial(op)), Collective::ReplicateToPartial});
      }
    }
  }
  return out;
}

std::optional<Collective> edge(const State& from, const State& to, const PlanRequest& r) {
  for (const auto& m : neighbours(from, r)) {
    if (m.next == to) return m.collective;
  }
  return std::nullopt;
}

// A cost model by collective (what the fixed model does, with any weight, +infinity included).
class TableModel final : public CostModel {
public:
  explicit TableModel(std::map<Collective, double> weights) : weights_(std::move(weights)) {}
  [[nodiscard]] double step_cost(const StepCostInput& step) const override {
    const auto it = weights_.find(step.collective);
    return it == weights_.end() ? 0.0 : it->second;
  }
  [[nodiscard]] std::string_view name() const noexcept override { return "table"; }
  [[nodiscard]] double weight(Collective c) const {
    StepCostInput in;
    in.collective = c;
    return step_cost(in);
  }

private:
  std::map<Collective, double> weights_;
};

// The fixed model's default weights as a table.
TableModel fixed_table() {
  return TableModel({{Collective::AllReduce, 4},
                     {Collective::AllToAll, 1},
                     {Collective::AllGather, 2},
                     {Collective::ReduceScatter, 2},
                     {Collective::Chunk, 0},
                     {Collective::ReplicateToPartial, 0},
                     {Collective::ShardToPartial, 0}});
}

// Every loopless path from src to dst (edges of infinite weight left out), as (trace, cost summed left to right).
std::vector<std::pair<std::string, double>> all_paths(const PlanRequest& r, const TableModel& model) {
  std::vector<std::pair<std::string, double>> out;
  std::vector<State> path{r.src};
  std::function<void(double)> walk = [&](double cost) {
    if (path.back() == r.dst) {
      std::string text;
      for (std::size_t i = 0; i < path.size(); ++i) text += (i > 0 ? "->" : "") + to_string(path[i]);
      out.emplace_back(text, cost);
      return;
    }
    for (const auto& m : neighbours(path.back(), r)) {
      const double w = model.weight(m.collective);
      if (std::isinf(w) || std::find(path.begin(), path.end(), m.next) != path.end()) continue;
      path.push_back(m.next);
      walk(cost + w);
      path.pop_back();
    }
  };
  walk(0.0);
  return out;
}

// The path of a plan as text, without the merge marks of trace().
std::string path_text(const Plan& plan) {
  std::string text;
  for (std::size_t i = 0; i < plan.path.size(); ++i) text += (i > 0 ? "->" : "") + to_string(plan.path[i]);
  return text;
}

std::int64_t product(const std::vector<std::int64_t>& v) {
  std::int64_t p = 1;
  for (auto x : v) p *= x;
  return p;
}

// Every property a list of k cheapest plans must have: at most k, each a loopless walk of the oracle's graph from
// src to dst, pairwise distinct, costs nondecreasing; without flattened groups each plan's steps are its path's
// edges exactly as plan_redistribution builds them; every plan moves real data correctly.
void check_plans(const PlanRequest& r, const CostModel& model, const std::vector<Plan>& plans, std::size_t k) {
  ASSERT_FALSE(plans.empty());
  EXPECT_LE(plans.size(), k);
  const std::vector<std::int64_t> coordinate =
      r.coordinate.empty() ? std::vector<std::int64_t>(r.mesh_shape.size(), 0) : r.coordinate;
  std::set<std::vector<State>> seen;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const Plan& plan = plans[i];
    SCOPED_TRACE("plan " + std::to_string(i) + ": " + trace(plan));
    ASSERT_FALSE(plan.path.empty());
    EXPECT_EQ(plan.path.front(), r.src);
    EXPECT_EQ(plan.path.back(), r.dst);
    EXPECT_TRUE(seen.insert(plan.path).second) << "a repeated plan";
    EXPECT_EQ(std::set<State>(plan.path.begin(), plan.path.end()).size(), plan.path.size()) << "a repeated state";
    if (i > 0) {
      EXPECT_LE(plans[i - 1].cost, plan.cost);
      EXPECT_LE(plans[i - 1].states_explored, plan.states_explored);
    }
    double cost = 0.0;
    std::vector<Collective> collectives;
    for (std::size_t s = 0; s + 1 < plan.path.size(); ++s) {
      const auto c = edge(plan.path[s], plan.path[s + 1], r);
      ASSERT_TRUE(c.has_value()) << to_string(plan.path[s]) << " -> " << to_string(plan.path[s + 1]) << " is no edge";
      collectives.push_back(*c);
    }
    if (r.flattened.empty()) {
      ASSERT_EQ(plan.steps.size(), collectives.size());
      for (std::size_t s = 0; s < plan.steps.size(); ++s) {
        const PlanStep& step = plan.steps[s];
        const State& before = plan.path[s];
        std::size_t axis = 0;
        for (std::size_t a = 0; a < before.ndim(); ++a) {
          if (before.placement(a) != plan.path[s + 1].placement(a)) axis = a;
        }
        EXPECT_EQ(step.axes, std::vector<std::size_t>{axis});
        EXPECT_EQ(step.collective, collectives[s]);
        EXPECT_EQ(step.before, before);
        EXPECT_EQ(step.after, plan.path[s + 1]);
        EXPECT_EQ(step.from, before.placement(axis));
        EXPECT_EQ(step.to, plan.path[s + 1].placement(axis));
        EXPECT_FALSE(step.merged);
        EXPECT_EQ(step.logical_shape, local_shape(before, r.tensor_shape, r.mesh_shape, coordinate, {axis}));
        EXPECT_EQ(step.bytes, product(local_shape(before, r.tensor_shape, r.mesh_shape, coordinate)) * r.itemsize);
        StepCostInput in;
        in.collective = collectives[s];
        in.axis = axis;
        in.mesh_shape = &r.mesh_shape;
        in.itemsize = r.itemsize;
        in.global_numel = product(r.tensor_shape);
        for (std::size_t a = 0; a < before.ndim(); ++a) {
          if (before.placement(a).is_shard()) in.source_shards *= r.mesh_shape[a];
        }
        in.local_bytes = step.bytes;
        EXPECT_EQ(step.cost, model.step_cost(in));
        cost += step.cost;
      }
      EXPECT_EQ(plan.cost, cost);
    }
    const SimulationResult sim = simulate(r, plan);
    EXPECT_TRUE(sim.ok) << sim.error;
  }
}

PlanRequest graph_of(PlanRequest r) {
  r.planner = PlannerKind::Graph;
  return r;
}

// ---- The worked example of planner.hpp ---------------------------------------------------------------------------

TEST(KCheapest, HeaderExample) {
  const PlanRequest r = request({2}, {8, 8}, "S(0)", "S(1)");
  const auto plans = plan_k_cheapest(r, FixedCostModel(), 5);
  ASSERT_EQ(plans.size(), 2U);
  EXPECT_EQ(trace(plans[0]), "S(0)->S(1)");
  EXPECT_EQ(plans[0].cost, 1.0);
  EXPECT_EQ(comm_counts(plans[0]), (std::map<std::string, int>{{"all_to_all", 1}}));
  EXPECT_EQ(trace(plans[1]), "S(0)->R->S(1)");
  EXPECT_EQ(plans[1].cost, 2.0);
  EXPECT_EQ(comm_counts(plans[1]), (std::map<std::string, int>{{"all_gather", 1}, {"chunk", 1}}));
  check_plans(r, FixedCostModel(), plans, 5);
}

TEST(KCheapest, DocExampleWithAPartialSource) {
  // planner.hpp and docs/04-planner.md, "k cheapest plans". Plans 2 and 3 tie at 4, both found after plan 1:
  // P(sum)->R->S(1) by the spur from its source, then P(sum)->S(0)->R->S(1) by the spur from its state S(0).
  const PlanRequest r = request({2}, {8, 8}, "P", "S(1)");
  const auto plans = plan_k_cheapest(r, FixedCostModel(), kMaxCheapestPlans);
  std::vector<std::string> traces;
  std::vector<double> costs;
  for (const auto& p : plans) {
    traces.push_back(trace(p));
    costs.push_back(p.cost);
  }
  EXPECT_EQ(traces, (std::vector<std::string>{"P(sum)->S(1)", "P(sum)->S(0)->S(1)", "P(sum)->R->S(1)",
                                              "P(sum)->S(0)->R->S(1)", "P(sum)->R->S(0)->S(1)"}));
  EXPECT_EQ(costs, (std::vector<double>{2, 3, 4, 4, 5}));
  check_plans(r, FixedCostModel(), plans, kMaxCheapestPlans);
}

// ---- plans[0] is the graph planner's plan -------------------------------------------------------------------------

TEST(KCheapest, FirstPlanIsTheGraphPlannersOnRandomRequests) {
  Random rng(20240611);
  const std::vector<std::vector<std::int64_t>> meshes = {{2}, {3}, {2, 2}, {2, 3}, {1, 2}, {2, 2, 2}, {3, 1, 2}};
  const FixedCostModel fixed;
  int planned = 0;
  for (int i = 0; i < 160; ++i) {
    PlanRequest r;
    r.mesh_shape = rng.pick(meshes);
    const std::int64_t rank = rng.between(1, 3);
    for (std::int64_t d = 0; d < rank; ++d) r.tensor_shape.push_back(rng.between(1, 7));
    const ReduceOp other = rng.chance(50) ? ReduceOp::Max : ReduceOp::Avg;
    r.src = random_state(rng, r.mesh_shape.size(), rank, other);
    r.dst = random_state(rng, r.mesh_shape.size(), rank, other);
    r.planner = static_cast<PlannerKind>(rng.between(0, 2));  // ignored: the k search uses the graph
    r.variant = rng.chance(25) ? PartialVariant::Seed : PartialVariant::Newest;
    if (r.mesh_shape.size() >= 2 && rng.chance(30)) r.flattened = {{0, 1}};
    if (rng.chance(30)) {
      for (auto size : r.mesh_shape) r.coordinate.push_back(rng.between(0, size - 1));
    }
    const std::size_t k = static_cast<std::size_t>(rng.between(1, 6));
    const CommCostModel comm(r.mesh_shape, 2);
    for (const CostModel* model : {static_cast<const CostModel*>(&fixed), static_cast<const CostModel*>(&comm)}) {
      SCOPED_TRACE("request " + std::to_string(i) + ": " + to_string(r.src) + " -> " + to_string(r.dst) + ", " +
                   std::string(model->name()) + ", k " + std::to_string(k));
      std::optional<Plan> expected;
      std::optional<Error> refused;
      try {
        expected = plan_redistribution(graph_of(r), *model);
      } catch (const Error& e) {
        refused = e;
      }
      if (refused) {
        expect_error([&] { (void)plan_k_cheapest(r, *model, k); }, refused->kind(), {refused->message()});
        continue;
      }
      const auto plans = plan_k_cheapest(r, *model, k);
      ASSERT_FALSE(plans.empty());
      EXPECT_EQ(plans[0], *expected);
      check_plans(r, *model, plans, k);
      EXPECT_EQ(plan_k_cheapest(r, *model, k), plans) << "not deterministic";
      ++planned;
    }
  }
  EXPECT_GT(planned, 250);  // of 320: the rest change one Partial op into another, or have no path
}

TEST(KCheapest, FirstPlanIsTheGraphPlannersOnTheHeaderExamples) {
  // planner.hpp's example, both models, and the same request under the greedy and auto planner fields.
  const PlanRequest r = request({2, 2, 2}, {8, 8, 8}, "S(0)[0]S(0)[1]R", "RS(0)R");
  const FixedCostModel fixed;
  const CommCostModel comm({2, 2, 2}, 8);
  for (const CostModel* model : {static_cast<const CostModel*>(&fixed), static_cast<const CostModel*>(&comm)}) {
    const CostModel& m = *model;
    for (const PlannerKind kind : {PlannerKind::Graph, PlannerKind::Greedy, PlannerKind::Auto}) {
      PlanRequest q = r;
      q.planner = kind;
      const auto plans = plan_k_cheapest(q, m, 8);
      ASSERT_EQ(plans.size(), 8U);
      EXPECT_EQ(plans[0], plan_redistribution(r, m));
      check_plans(q, m, plans, 8);
    }
  }
  const auto plans = plan_k_cheapest(r, FixedCostModel(), 3);
  EXPECT_EQ(trace(plans[0]), "S(0)[0]S(0)[1]R->S(0)S(1)R->RS(1)R->RS(0)R");
  EXPECT_EQ(plans[0].cost, 4.0);
}

TEST(KCheapest, MergedStepsOnFlattenedGroups) {
  // Two gathers on the flattened group (0, 1) merge into one; every plan is built with the merge pass.
  PlanRequest r = request({2, 2}, {8, 8}, "S(0)[0]S(0)[1]", "RR");
  r.flattened = {{0, 1}};
  auto plans = plan_k_cheapest(r, FixedCostModel(), 12);
  EXPECT_EQ(plans[0], plan_redistribution(r, FixedCostModel()));
  EXPECT_EQ(trace(plans[0]), "S(0)[0]S(0)[1]-->RR");
  EXPECT_EQ(plans[0].cost, 4.0);  // the path's cost, before merging
  EXPECT_EQ(trace(plans[1]), "S(0)[0]S(0)[1]->S(0)S(1)->RS(1)->RR");
  check_plans(r, FixedCostModel(), plans, 12);
  // Two all_reduces merge in either order: the two cheapest plans are distinct paths with one trace.
  r = request({2, 2}, {8, 8}, "PP", "RR");
  r.flattened = {{0, 1}};
  plans = plan_k_cheapest(r, FixedCostModel(), 12);
  ASSERT_EQ(plans.size(), 12U);
  EXPECT_EQ(plans[0], plan_redistribution(r, FixedCostModel()));
  EXPECT_EQ(path_text(plans[0]), "P(sum)P(sum)->RP(sum)->RR");
  EXPECT_EQ(path_text(plans[1]), "P(sum)P(sum)->P(sum)R->RR");
  for (const Plan* p : {&plans[0], &plans[1]}) {
    EXPECT_EQ(trace(*p), "P(sum)P(sum)-->RR");
    ASSERT_EQ(p->steps.size(), 1U);
    EXPECT_TRUE(p->steps[0].merged);
    EXPECT_EQ(p->cost, 8.0);
  }
  check_plans(r, FixedCostModel(), plans, 12);
}

// ---- Against brute force ------------------------------------------------------------------------------------------

void expect_brute_force(const PlanRequest& r, const TableModel& model) {
  SCOPED_TRACE(to_string(r.src) + " -> " + to_string(r.dst) + " on a mesh of " + std::to_string(r.mesh_shape.size()) +
               " axes");
  auto paths = all_paths(r, model);
  ASSERT_FALSE(paths.empty());
  std::vector<double> want;
  for (const auto& p : paths) want.push_back(p.second);
  std::sort(want.begin(), want.end());
  const auto plans = plan_k_cheapest(r, model, kMaxCheapestPlans);
  std::vector<double> got;
  for (const auto& p : plans) got.push_back(p.cost);
  want.resize(std::min(want.size(), kMaxCheapestPlans));
  EXPECT_EQ(got, want);
  check_plans(r, model, plans, kMaxCheapestPlans);
  // Each plan is one of the brute-force paths, at its cost; when they all fit, they are all there.
  std::map<std::string, double> by_text(paths.begin(), paths.end());
  for (const auto& p : plans) {
    const auto it = by_text.find(path_text(p));
    ASSERT_NE(it, by_text.end()) << path_text(p) << " is not a loopless path";
    EXPECT_EQ(it->second, p.cost);
  }
  if (paths.size() <= kMaxCheapestPlans) {
    EXPECT_EQ(plans.size(), paths.size());
  }
  // Smaller k: a prefix of the same list.
  for (const std::size_t k : {std::size_t{1}, std::size_t{2}, std::size_t{5}}) {
    const auto some = plan_k_cheapest(r, model, k);
    ASSERT_EQ(some.size(), std::min(k, plans.size()));
    for (std::size_t i = 0; i < some.size(); ++i) {
      EXPECT_EQ(path_text(some[i]), path_text(plans[i]));
      EXPECT_EQ(some[i].cost, plans[i].cost);
    }
  }
}

TEST(KCheapest, MatchesBruteForceOnOneAxis) {
  const TableModel fixed = fixed_table();
  for (const auto& [src, dst] : std::vector<std::pair<const char*, const char*>>{
           {"S(0)", "S(1)"}, {"R", "S(0)"}, {"P", "S(1)"}, {"S(1)", "P"}, {"P(max)", "R"}, {"R", "P(avg)"}}) {
    expect_brute_force(request({2}, {4, 6}, src, dst), fixed);
  }
}

TEST(KCheapest, MatchesBruteForceOnTwoAxes) {
  // Weights that tie a lot (the fixed model's) and weights that rarely tie.
  const TableModel fixed = fixed_table();
  const TableModel spread({{Collective::AllReduce, 7},
                           {Collective::AllToAll, 1.5},
                           {Collective::AllGather, 2.25},
                           {Collective::ReduceScatter, 3.125},
                           {Collective::Chunk, 0.0625},
                           {Collective::ReplicateToPartial, 0.5},
                           {Collective::ShardToPartial, 0}});
  for (const TableModel* model : {&fixed, &spread}) {
    for (const auto& [src, dst] : std::vector<std::pair<const char*, const char*>>{{"S(0)S(1)", "S(1)S(0)"},
                                                                                  {"S(0)[1]S(0)[0]", "RS(1)"},
                                                                                  {"RR", "S(1)[0]S(1)[1]"},
                                                                                  {"PR", "S(0)S(1)"},
                                                                                  {"S(0)R", "RP"}}) {
      expect_brute_force(request({2, 2}, {4, 4}, src, dst), *model);
    }
  }
}

TEST(KCheapest, InfiniteEdgesAreNoPaths) {
  // A model that cannot all_to_all: no plan uses one, and the rest match brute force without those edges.
  const TableModel no_all_to_all({{Collective::AllReduce, 4},
                                  {Collective::AllToAll, std::numeric_limits<double>::infinity()},
                                  {Collective::AllGather, 2},
                                  {Collective::ReduceScatter, 2}});
  const PlanRequest r = request({2, 2}, {4, 4}, "S(0)S(1)", "S(1)S(0)");
  for (const auto& p : plan_k_cheapest(r, no_all_to_all, kMaxCheapestPlans)) {
    EXPECT_TRUE(std::isfinite(p.cost)) << trace(p);
    EXPECT_EQ(comm_counts(p).count("all_to_all"), 0U) << trace(p);
  }
  expect_brute_force(r, no_all_to_all);
  // One axis, S(0) -> S(1): only the gather-and-chunk path is left.
  const auto plans = plan_k_cheapest(request({2}, {8, 8}, "S(0)", "S(1)"), no_all_to_all, 5);
  ASSERT_EQ(plans.size(), 1U);
  EXPECT_EQ(trace(plans[0]), "S(0)->R->S(1)");
}

// ---- Edges of the request ---------------------------------------------------------------------------------------

TEST(KCheapest, SourceEqualsTarget) {
  const PlanRequest r = request({2, 2}, {4, 4}, "S(0)R", "S(0)R");
  const auto plans = plan_k_cheapest(r, FixedCostModel(), 4);
  ASSERT_EQ(plans.size(), 1U);  // the empty plan is the only loopless path
  EXPECT_EQ(plans[0], plan_redistribution(r, FixedCostModel()));
  EXPECT_TRUE(plans[0].steps.empty());
}

TEST(KCheapest, KOutOfRange) {
  const PlanRequest r = request({2}, {8, 8}, "S(0)", "S(1)");
  expect_error([&] { (void)plan_k_cheapest(r, FixedCostModel(), 0); }, ErrorKind::ValueError, {"k 0", "[1, 64]"});
  expect_error([&] { (void)plan_k_cheapest(r, FixedCostModel(), 65); }, ErrorKind::ValueError, {"k 65", "[1, 64]"});
  EXPECT_EQ(plan_k_cheapest(r, FixedCostModel(), 64).size(), 2U);
}

TEST(KCheapest, ValidatesLikeThePlanner) {
  expect_error([] { (void)plan_k_cheapest(request({2}, {8, 8}, "P", "P(max)"), FixedCostModel(), 3); },
               ErrorKind::ValueError, {"from one partial type (sum) to another (max)"});
  expect_error([] { (void)plan_k_cheapest(request({0}, {8, 8}, "R", "R"), FixedCostModel(), 3); },
               ErrorKind::ValueError, {"axis 0 has size 0"});
  // The seed variant has no R -> P(max) edge.
  PlanRequest r = request({2}, {8, 8}, "R", "P(max)");
  r.variant = PartialVariant::Seed;
  expect_error([&] { (void)plan_k_cheapest(r, FixedCostModel(), 3); }, ErrorKind::ValueError,
               {"no redistribution path from R to P(max)"});
}

TEST(KCheapest, StateBudgetCoversTheWholeSearch) {
  PlanRequest r = request({2, 2, 2}, {8, 8, 8}, "S(0)[0]S(0)[1]R", "RS(0)R");
  const auto plans = plan_k_cheapest(r, FixedCostModel(), 6);
  ASSERT_EQ(plans.size(), 6U);
  const std::size_t first = plans[0].states_explored;
  const std::size_t total = plans.back().states_explored;  // no search runs after the last plan is chosen
  ASSERT_GT(total, first);
  // Enough for the first search alone (plan_redistribution plans), not for the k search.
  r.state_budget = first;
  EXPECT_EQ(plan_redistribution(r, FixedCostModel()), plans[0]);
  expect_error([&] { (void)plan_k_cheapest(r, FixedCostModel(), 6); }, ErrorKind::RuntimeError,
               {"state budget of " + std::to_string(first) + " states"});
  r.state_budget = total - 1;
  expect_error([&] { (void)plan_k_cheapest(r, FixedCostModel(), 6); }, ErrorKind::RuntimeError, {"state budget"});
  r.state_budget = total;
  EXPECT_EQ(plan_k_cheapest(r, FixedCostModel(), 6), plans);
}

}  // namespace
