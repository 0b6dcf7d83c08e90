// The layout advisor on Llama 3 405B's pre-training layout (resources/examples/llama3-405b.meshloom.json, built here:
// 16,384 ranks on hosts of 8, mesh (dp 128, pp 16, cp 1, tp 8), 16 micro-batches, FSDP on dp). Figures are reported
// in docs/benchmarks.md; the goals of issue 15 are every order under 1 s and the factorization search under 5 s.
//
//   BM_AdviseOrders/M          search orders: the 24 orders of the 4 axes.
//   BM_AdviseFactorizations/M  search factorizations: the 680 ways of writing 16,384 as dp * pp * cp * tp.
//   M = 0: the comm model (one per candidate mesh); M = 1: a calibrated model built here (curves by group shape
//   measured on 2 hosts of 8, extrapolated to 16,384 ranks: one model shared by every candidate).
//   /threads:1 prices the candidates on one thread; the others on std::thread::hardware_concurrency() threads.
// Counters: candidates, plans computed and reused (the plan cache), per search.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "meshloom/advisor/advisor.hpp"
#include "meshloom/design/design.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "meshloom/workload/workload.hpp"

namespace {

using namespace meshloom;

Design llama3_405b() {
  Design d;
  d.name = "llama3-405b";
  d.world = 16384;
  d.devices_per_host = 8;
  d.mesh = MeshSpec{{128, 16, 1, 8}, {"dp", "pp", "cp", "tp"}, {{"dp_cp", {"dp", "cp"}}}};
  ModelSpec model = llama3_model("llama3_405b");
  model.micro_batches = 16;
  model.axes.fsdp = {"dp"};
  model.axes.tp = "tp";
  model.axes.cp = "cp";
  model.axes.pp = "pp";
  d.workload = Workload{{}, model};
  return d;
}

// A cluster of hosts of 8 measured on 2 of them: every collective on groups of 2, 4, 8 ranks within a host and
// 2, 4, 8, 16 ranks across the two, as alpha-beta curves (25 us and 150 GB/s bus bandwidth within a host, 40 us and
// 25 GB/s across), 8 points from 4 KiB to 1 GiB.
Calibration two_hosts_of_8() {
  Calibration c;
  c.backend = "nccl";
  c.timing = "single_shot";
  c.world = 16;
  c.mesh_shape = {2, 8};
  c.mesh_names = {"dp", "tp"};
  for (std::int64_t r = 0; r < 16; ++r) c.rank_hosts.push_back(r / 8);
  const std::vector<GroupShape> shapes{{2, 1, 2}, {4, 1, 4}, {8, 1, 8}, {2, 2, 1}, {4, 2, 2}, {8, 2, 4}, {16, 2, 8}};
  for (const char* collective : {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"}) {
    for (const GroupShape& shape : shapes) {
      if (std::string(collective) == "broadcast" && shape.n != 2) continue;
      GroupCurve curve;
      curve.collective = collective;
      curve.shape = shape;
      curve.model = CurveModel::Piecewise;
      const double alpha = shape.hosts == 1 ? 25.0 : 40.0;
      const double busbw = shape.hosts == 1 ? 150.0 : 25.0;
      for (double bytes = 4096; bytes <= 1073741824.0; bytes *= 16) {
        curve.points.push_back({bytes, alpha + bus_factor(collective, shape.n) * bytes / (busbw * 1e3)});
      }
      c.groups.push_back(std::move(curve));
    }
  }
  return c;
}

CostModelFactory factory(std::int64_t model) {
  if (model == 0) {
    return [](const std::vector<std::int64_t>& shape, std::int64_t per_host) -> std::shared_ptr<const CostModel> {
      return std::make_shared<const CommCostModel>(shape, per_host);
    };
  }
  auto calibrated = std::make_shared<const CalibratedCostModel>(two_hosts_of_8(), std::vector<std::string>{},
                                                                CalibratedOptions{.extrapolate = true});
  return [calibrated](const std::vector<std::int64_t>&, std::int64_t) -> std::shared_ptr<const CostModel> {
    return calibrated;
  };
}

void run(benchmark::State& state, AdvisorSearch search, std::size_t threads) {
  const Design design = llama3_405b();
  AdvisorOptions options;
  options.search = search;
  options.threads = threads;
  AdvisorResult result;
  for (auto _ : state) {
    // A fresh factory per run: the calibrated model caches the group shapes of every mesh it prices.
    const CostModelFactory models = factory(state.range(0));
    result = advise(design, models, options);
    benchmark::DoNotOptimize(result.ranked.data());
  }
  state.counters["candidates"] = static_cast<double>(result.candidates);
  state.counters["plans"] = static_cast<double>(result.plans_computed);
  state.counters["reused"] = static_cast<double>(result.plans_reused);
  state.SetLabel(state.range(0) == 0 ? "comm" : "calibrated");
  if (!std::isfinite(result.ranked.front().cost)) state.SkipWithError(result.reason.c_str());
}

void BM_AdviseOrders(benchmark::State& state) { run(state, AdvisorSearch::Orders, 0); }
void BM_AdviseFactorizations(benchmark::State& state) { run(state, AdvisorSearch::Factorizations, 0); }
void BM_AdviseFactorizationsOneThread(benchmark::State& state) { run(state, AdvisorSearch::Factorizations, 1); }

}  // namespace

BENCHMARK(BM_AdviseOrders)->DenseRange(0, 1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AdviseFactorizations)->DenseRange(0, 1)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK(BM_AdviseFactorizationsOneThread)->DenseRange(0, 1)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2);
