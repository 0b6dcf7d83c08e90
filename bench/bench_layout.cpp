// Layout algebra micro-benchmarks: the operations DeviceMesh runs on every slice, flatten and lookup.
#include <benchmark/benchmark.h>

#include "meshloom/layout/layout.hpp"

namespace {

using meshloom::Layout;
using meshloom::parse_layout;

// A 6-axis mesh layout of 131,072 ranks, (8,8,16,4,4,8) row-major, and its dp*tp-like non-contiguous slice.
const Layout kMesh = parse_layout("(8,8,16,4,4,8):(16384,2048,128,32,8,1)");
const Layout kSlice = parse_layout("(8,16,8):(2048,32,1)");

void BM_Coalesce(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(meshloom::coalesce(kMesh));
}
BENCHMARK(BM_Coalesce);

void BM_Complement(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(meshloom::complement(kSlice, 131072));
}
BENCHMARK(BM_Complement);

void BM_Composition(benchmark::State& state) {
  const Layout b = parse_layout("(4,2,16):(32,16,1)");
  for (auto _ : state) benchmark::DoNotOptimize(meshloom::composition(kMesh, b));
}
BENCHMARK(BM_Composition);

void BM_RightInverse(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(meshloom::right_inverse(kMesh));
}
BENCHMARK(BM_RightInverse);

void BM_IsOrthogonal(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(meshloom::is_orthogonal(kSlice));
}
BENCHMARK(BM_IsOrthogonal);

void BM_Crd2Idx(benchmark::State& state) {
  std::int64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(kMesh(i));
    i = (i + 7919) % 131072;
  }
}
BENCHMARK(BM_Crd2Idx);

void BM_Codomain(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(meshloom::codomain(kMesh));
  state.SetItemsProcessed(state.iterations() * 131072);
}
BENCHMARK(BM_Codomain)->Unit(benchmark::kMicrosecond);

void BM_ParsePrint(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(meshloom::to_string(parse_layout("((2,2),4,(8,16)):((512,1),128,(16,1))")));
}
BENCHMARK(BM_ParsePrint);

}  // namespace
