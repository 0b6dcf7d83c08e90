// Planner throughput: cold graph searches over the whole state graph, a far target under the comm model, and a
// cached plan (PlanCache hit). Figures are reported in docs/04-planner.md.
//
//   BM_PlanWholeGraph/M   4 tensor dims, M axes of size 2, RR..R -> P(sum)..P(sum) under a model that charges only
//                         partial axes: the target is the last state settled, so every reachable state is explored
//                         (M = 2..6: 40, 296, 2,424, 21,872, 216,352 states).
//   BM_PlanFarComm/M      the comm model, S(0) on every axis in order -> S(3) on every axis in reverse order.
//   BM_PlanCached         a PlanCache hit for PyTorch's row N1.
// Counter "states": states settled per plan, and as a rate (states/s).
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/state.hpp"

namespace {

using meshloom::CommCostModel;
using meshloom::Plan;
using meshloom::PlanRequest;

class PartialAxesCost final : public meshloom::CostModel {
public:
  [[nodiscard]] double step_cost(const meshloom::StepCostInput& step) const override {
    return step.collective == meshloom::Collective::ReplicateToPartial ||
                   step.collective == meshloom::Collective::ShardToPartial
               ? 1000.0
               : 0.0;
  }
  [[nodiscard]] std::string_view name() const noexcept override { return "partial-axes"; }
};

std::string repeat(std::string_view token, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += token;
  return s;
}

// S(d)[0]S(d)[1]... (forward) or S(d)[n-1]...S(d)[0] (reverse).
std::string ordered(int dim, std::size_t n, bool reverse) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    s += "S(" + std::to_string(dim) + ")[" + std::to_string(reverse ? n - 1 - i : i) + "]";
  }
  return s;
}

PlanRequest base(std::size_t axes) {
  PlanRequest r;
  r.mesh_shape.assign(axes, 2);
  r.tensor_shape = {8, 8, 8, 8};
  return r;
}

void report(benchmark::State& state, std::size_t states) {
  state.counters["states"] = benchmark::Counter(static_cast<double>(states));
  state.counters["states_per_s"] =
      benchmark::Counter(static_cast<double>(states), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_PlanWholeGraph(benchmark::State& state) {
  const auto axes = static_cast<std::size_t>(state.range(0));
  PlanRequest r = base(axes);
  r.src = meshloom::parse_state(repeat("R", axes));
  r.dst = meshloom::parse_state(repeat("P(sum)", axes));
  const PartialAxesCost model;
  std::size_t states = 0;
  for (auto _ : state) {
    const Plan p = meshloom::plan_redistribution(r, model);
    states = p.states_explored;
    benchmark::DoNotOptimize(p.cost);
  }
  report(state, states);
}
BENCHMARK(BM_PlanWholeGraph)->DenseRange(2, 6)->Unit(benchmark::kMicrosecond);

void BM_PlanFarComm(benchmark::State& state) {
  const auto axes = static_cast<std::size_t>(state.range(0));
  PlanRequest r = base(axes);
  r.src = meshloom::parse_state(ordered(0, axes, false));
  r.dst = meshloom::parse_state(ordered(3, axes, true));
  const CommCostModel model(r.mesh_shape, 8);
  std::size_t states = 0;
  for (auto _ : state) {
    const Plan p = meshloom::plan_redistribution(r, model);
    states = p.states_explored;
    benchmark::DoNotOptimize(p.cost);
  }
  report(state, states);
}
BENCHMARK(BM_PlanFarComm)->DenseRange(2, 6)->Unit(benchmark::kMicrosecond);

void BM_PlanCached(benchmark::State& state) {
  PlanRequest r = base(3);
  r.tensor_shape = {8, 8, 8};
  r.src = meshloom::parse_state("S(0)[0]S(0)[1]S(0)[2]");
  r.dst = meshloom::parse_state("RS(0)[0]S(0)[1]");
  const CommCostModel model(r.mesh_shape, 8);
  meshloom::PlanCache cache(model);
  (void)cache.plan(r);  // the one miss
  for (auto _ : state) {
    auto p = cache.plan(r);
    benchmark::DoNotOptimize(p);
  }
}
BENCHMARK(BM_PlanCached)->Unit(benchmark::kNanosecond);

}  // namespace
