// DeviceMesh at scale: a 6-axis mesh of 131,072 ranks, (pp=8, dp_replicate=8, dp_shard=16, cp=4, ep=4, tp=8).
// Goal on a 2-core machine: all groups of every axis in under 50 ms in total, memory linear in the answer.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "meshloom/mesh/device_mesh.hpp"

namespace {

using meshloom::AxisRef;
using meshloom::DeviceMesh;

const std::vector<std::int64_t> kShape{8, 8, 16, 4, 4, 8};
const DeviceMesh::Names kNames{"pp", "dp_replicate", "dp_shard", "cp", "ep", "tp"};
constexpr std::int64_t kWorld = 131072;

const DeviceMesh& mesh() {
  static const DeviceMesh m = DeviceMesh::init(kShape, kNames);
  return m;
}

void BM_Construct(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(DeviceMesh::init(kShape, kNames));
}
BENCHMARK(BM_Construct);

void BM_ConstructExplicit(benchmark::State& state) {
  std::vector<std::int64_t> ranks(kWorld);
  for (std::int64_t i = 0; i < kWorld; ++i) ranks[static_cast<std::size_t>(i)] = kWorld - 1 - i;
  for (auto _ : state) benchmark::DoNotOptimize(DeviceMesh::from_ranks(kShape, ranks, kNames));
  state.SetItemsProcessed(state.iterations() * kWorld);
}
BENCHMARK(BM_ConstructExplicit)->Unit(benchmark::kMicrosecond);

void BM_SliceEveryAxis(benchmark::State& state) {
  for (auto _ : state) {
    for (const auto& name : kNames) benchmark::DoNotOptimize(mesh().slice({name}));
  }
}
BENCHMARK(BM_SliceEveryAxis)->Unit(benchmark::kMicrosecond);

void BM_FlattenAdjacentPairs(benchmark::State& state) {
  for (auto _ : state) {
    const DeviceMesh m = DeviceMesh::init(kShape, kNames);  // a fresh root: flatten registers on it
    for (std::size_t i = 0; i + 1 < kNames.size(); ++i) {
      benchmark::DoNotOptimize(m.slice({kNames[i], kNames[i + 1]}).flatten());
    }
  }
}
BENCHMARK(BM_FlattenAdjacentPairs)->Unit(benchmark::kMicrosecond);

// The headline figure: every group of every axis, 6 x 131,072 ranks written.
void BM_AllGroupsEveryAxis(benchmark::State& state) {
  for (auto _ : state) {
    for (const auto& name : kNames) benchmark::DoNotOptimize(mesh().groups(AxisRef{name}));
  }
  state.SetItemsProcessed(state.iterations() * kWorld * static_cast<std::int64_t>(kNames.size()));
}
BENCHMARK(BM_AllGroupsEveryAxis)->Unit(benchmark::kMillisecond);

void BM_AllGroupsFlattened(benchmark::State& state) {
  const DeviceMesh m = DeviceMesh::init(kShape, kNames);
  (void)m.slice({"dp_replicate", "dp_shard", "cp"}).flatten("dp_cp");
  for (auto _ : state) benchmark::DoNotOptimize(m.groups(AxisRef{std::string("dp_cp")}));
  state.SetItemsProcessed(state.iterations() * kWorld);
}
BENCHMARK(BM_AllGroupsFlattened)->Unit(benchmark::kMillisecond);

void BM_Instances(benchmark::State& state) {
  const DeviceMesh sub = mesh().slice({"dp_shard", "tp"});
  for (auto _ : state) benchmark::DoNotOptimize(sub.instances());
  state.SetItemsProcessed(state.iterations() * kWorld);
}
BENCHMARK(BM_Instances)->Unit(benchmark::kMillisecond);

void BM_Coordinate(benchmark::State& state) {
  std::int64_t r = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(mesh().coordinate(r));
    r = (r + 7919) % kWorld;
  }
}
BENCHMARK(BM_Coordinate);

void BM_LocalRank(benchmark::State& state) {
  std::int64_t r = 0;
  const AxisRef axis{std::string("dp_shard")};
  for (auto _ : state) {
    benchmark::DoNotOptimize(mesh().local_rank(r, axis));
    r = (r + 7919) % kWorld;
  }
}
BENCHMARK(BM_LocalRank);

void BM_GroupOf(benchmark::State& state) {
  std::int64_t r = 0;
  const AxisRef axis{std::string("dp_shard")};
  for (auto _ : state) {
    benchmark::DoNotOptimize(mesh().group_of(r, axis));
    r = (r + 7919) % kWorld;
  }
}
BENCHMARK(BM_GroupOf);

}  // namespace
