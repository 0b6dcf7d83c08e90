// What one memcpy costs as a function of where its source and destination sit relative to each other modulo the
// page size, and where two heap buffers allocated one after the other land: the hazard behind "bench and the
// executor allocate alike" (engine/src/plan/executor.cpp, struct Wire; launcher/src/collectives/collective.hpp).
//
//   meshloom_bench_host_copy                               # every case
//   meshloom_bench_host_copy --benchmark_filter=Offset     # the offsets alone
//
// BM_CopyAtOffset/bytes:B/offset:D  memcpy of B bytes from a page-aligned source to a destination D bytes past a page
//                                   boundary (dst - src = D mod 4096).
// BM_CopyBetweenHeapBuffers/bytes:B two std::vector<std::byte> of B bytes allocated one after the other (source first)
//                                   with the heap set as the live commands set it (no mmap, no trim), the source
//                                   copied into the destination, as bench and the executor allocate a collective's
//                                   input and output. Counter "offset" = (dst - src) mod 4096 as the heap placed them.
//
// docs/benchmarks.md ("What did not help", page-aligned buffers) reports the figures. Nothing is asserted: read them.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

namespace {

constexpr std::size_t kPage = 4096;

// The heap as the live commands set it (launcher/src/live_command.cpp).
[[maybe_unused]] const bool kHeapOnly = [] {
  (void)mallopt(M_MMAP_MAX, 0);
  (void)mallopt(M_TRIM_THRESHOLD, -1);
  return true;
}();

struct FreeDeleter {
  void operator()(std::byte* p) const noexcept { std::free(p); }
};
using PageBuffer = std::unique_ptr<std::byte[], FreeDeleter>;

PageBuffer page_buffer(std::size_t bytes, std::byte value) {
  const std::size_t rounded = (bytes + kPage - 1) / kPage * kPage;
  PageBuffer p(static_cast<std::byte*>(std::aligned_alloc(kPage, rounded)));
  if (!p) throw std::bad_alloc();
  std::memset(p.get(), static_cast<int>(value), rounded);
  return p;
}

void BM_CopyAtOffset(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const auto offset = static_cast<std::size_t>(state.range(1));
  const PageBuffer src = page_buffer(bytes, std::byte{1});
  const PageBuffer dst = page_buffer(bytes + kPage, std::byte{2});
  for (auto _ : state) {
    std::memcpy(dst.get() + offset, src.get(), bytes);
    benchmark::DoNotOptimize(dst.get());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_CopyAtOffset)
    ->ArgsProduct({{256 << 10, 4 << 20}, {0, 8, 16, 24, 32, 64, 2048}})
    ->ArgNames({"bytes", "offset"});

void BM_CopyBetweenHeapBuffers(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  std::vector<std::byte> src(bytes, std::byte{1});
  std::vector<std::byte> dst(bytes, std::byte{2});
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
  const auto delta = reinterpret_cast<std::uintptr_t>(dst.data()) - reinterpret_cast<std::uintptr_t>(src.data());
  state.counters["offset"] = static_cast<double>(delta % kPage);
}
BENCHMARK(BM_CopyBetweenHeapBuffers)->Arg(256 << 10)->Arg(4 << 20)->ArgName("bytes");

}  // namespace
