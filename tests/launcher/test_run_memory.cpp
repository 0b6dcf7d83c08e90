// The memory guards of the live commands, before any collective: check_fits_in_memory (run_exec.hpp), a tensor the
// ranks of a host could not hold kRunCopies times over each, naming the tensor, its size and the memory; and
// check_bench_fits_in_memory (bench_run.hpp), a sweep whose largest size's buffers they could not hold, naming -e.
// What fits passes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "meshloom/error.hpp"
#include "meshloom/plan/state.hpp"
#include "bench_run.hpp"
#include "meshloom/mesh/device_mesh.hpp"
#include "run_exec.hpp"
#include "support/expect_error.hpp"

namespace meshloom::launcher {
namespace {

PlanRequest request(std::vector<std::int64_t> tensor, std::vector<std::int64_t> mesh = {4}) {
  PlanRequest r;
  r.mesh_shape = std::move(mesh);
  r.tensor_shape = std::move(tensor);
  r.src = parse_state("S(0)");
  r.dst = parse_state("R");
  return r;
}

std::string error_of(const PlanRequest& r, std::int64_t memory, int ranks_on_host = 1) {
  return testing::error_of([&] { check_fits_in_memory(r, "run", ranks_on_host, memory); });
}

TEST(RunMemory, ATensorTheRanksOfAHostCannotHoldIsRefusedNamingIt) {
  constexpr std::int64_t kGiB = std::int64_t{1} << 30;
  // 1024 x 1024 int64 values: 8 MiB, 80 MiB ten times over.
  EXPECT_EQ(error_of(request({1024, 1024}), 80 << 20), "no error");
  EXPECT_EQ(error_of(request({1024, 1024}), (80 << 20) - 1),
            "ValueError: run: tensor 1024x1024 is 8 MiB as int64 values, and a rank may hold it whole 10 times over "
            "in a step (80 MiB); this host has 80 MiB of memory");
  // Four ranks on the host hold four times that.
  EXPECT_EQ(error_of(request({1024, 1024}), 320 << 20, 4), "no error");
  EXPECT_EQ(error_of(request({1024, 1024}), 319 << 20, 4),
            "ValueError: run: tensor 1024x1024 is 8 MiB as int64 values, and a rank may hold it whole 10 times over "
            "in a step (80 MiB), 4 ranks on this host (320 MiB); this host has 319 MiB of memory");
  // Only the mesh's ranks hold the tensor: a mesh of 2 on a host of 4 ranks needs 160 MiB.
  EXPECT_EQ(error_of(request({1024, 1024}, {2}), 160 << 20, 4), "no error");
  EXPECT_EQ(error_of(request({1048576, 1048576}), 64 * kGiB),
            "ValueError: run: tensor 1048576x1048576 is 8 TiB as int64 values, and a rank may hold it whole 10 times "
            "over in a step (80 TiB); this host has 64 GiB of memory");
  EXPECT_NE(error_of(request({std::int64_t{1} << 40, std::int64_t{1} << 40}), 64 * kGiB).find("more than 8 EiB"),
            std::string::npos);
  // This host's own memory: a small tensor always fits.
  EXPECT_NO_THROW(check_fits_in_memory(request({16, 32}), "run"));
}

TEST(BenchMemory, ASweepWhoseLargestBuffersTheRanksOfAHostCannotHoldIsRefusedNamingIt) {
  BenchSettings s;
  s.dtype = DType::Float32;
  s.sizes = {1024, 1 << 20};
  s.collectives = {BenchCollective::AllGather, BenchCollective::Broadcast};
  const DeviceMesh mesh = DeviceMesh::init({2}, std::vector<std::string>{"dp"});
  const AxisSelection axes = select_axes(mesh, {});
  const auto error_of = [&](std::int64_t memory, int ranks) {
    return testing::error_of([&] { check_bench_fits_in_memory(s, mesh, axes, ranks, memory); });
  };
  // all_gather of 1 MiB on 2 ranks: 512 KiB in, 1 MiB out per rank; broadcast's one buffer is less.
  EXPECT_EQ(error_of(3 << 20, 2), "no error");
  EXPECT_EQ(error_of((3 << 20) - 1, 2),
            "ValueError: -e: the sweep's largest size, 1048576 bytes: all_gather on axis 'dp' holds 1.5 MiB per rank "
            "(input and output), 2 ranks on this host (3 MiB); this host has 3 MiB of memory");
  // Ranks of the host outside the mesh (8 on the host, a mesh of 2) fill no buffers.
  EXPECT_EQ(error_of(3 << 20, 8), "no error");
  EXPECT_EQ(error_of((3 << 19) - 1, 1),
            "ValueError: -e: the sweep's largest size, 1048576 bytes: all_gather on axis 'dp' holds 1.5 MiB per rank "
            "(input and output); this host has 1.5 MiB of memory");
  s.collectives = {BenchCollective::Broadcast};
  EXPECT_EQ(error_of(1 << 20, 1), "no error");  // in place: 1 MiB
  // This host's own memory: a small sweep always fits.
  s.sizes = {8};
  EXPECT_NO_THROW(check_bench_fits_in_memory(s, mesh, axes, 1));
}

}  // namespace
}  // namespace meshloom::launcher
