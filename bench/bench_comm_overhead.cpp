// What the launcher's abstraction costs: all_reduce through `meshloom-launch bench` (run_bench over the Open MPI
// backend's communicator: non-blocking MPI_Iallreduce completed by the polling loop that honours timeouts) against
// a raw loop of blocking MPI_Allreduce, in one MPI job, interleaved so that both see the same machine.
//
//   mpirun -np 4 meshloom_bench_comm_overhead                 # 1 MiB .. 64 MiB, 7 rounds
//   mpirun -np 4 meshloom_bench_comm_overhead -b 1K -e 4K --rounds 1 -n 2
//
// Protocol, the same on both sides and the same as bench's (bench_run.cpp): per size, a world barrier, the warm-up
// iterations, a barrier, then `iters` back-to-back all_reduces of float32 sum with separate send and receive
// buffers, timed on every rank; the time of one side in one round is the mean per iteration averaged over the ranks
// (what bench reports). Each round runs both sides one after the other, alternating which goes first; a size's
// figure is the median over the rounds. Output: a table (ratio = launcher / raw; 1.00 means no cost) and one JSON
// line per size with --jsonl. The goal in docs/05-launcher.md: within 5% (ratio <= 1.05) from 1 MiB to 64 MiB on 4
// ranks. Nothing is asserted: a loaded machine moves both sides; read the medians.
#include <mpi.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_io.hpp"
#include "bench_run.hpp"
#include "meshloom/backends/mpi_communicator.hpp"
#include "meshloom/backends/mpi_runtime.hpp"
#include "meshloom/comm/mesh_groups.hpp"
#include "meshloom/mesh/device_mesh.hpp"
#include "run_exec.hpp"
#include "sizes.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace ml = meshloom;
namespace launcher = meshloom::launcher;

// The raw side: nothing but MPI, the way a user would time it.
double raw_all_reduce_us(std::int64_t bytes, std::int64_t warmup, std::int64_t iters) {
  const auto count = static_cast<std::size_t>(bytes) / sizeof(float);
  std::vector<float> in(count, 1.0F);
  std::vector<float> out(count, 0.0F);
  const int n = static_cast<int>(count);
  const auto check = [](int rc) {
    if (rc != MPI_SUCCESS) throw std::runtime_error("MPI_Allreduce failed with code " + std::to_string(rc));
  };
  MPI_Barrier(MPI_COMM_WORLD);
  for (std::int64_t i = 0; i < warmup; ++i) check(MPI_Allreduce(in.data(), out.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = Clock::now();
  for (std::int64_t i = 0; i < iters; ++i) check(MPI_Allreduce(in.data(), out.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
  const double mine = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / static_cast<double>(iters);
  double sum = 0;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return sum / size;
}

// The launcher's side: bench's own sweep of one size on the mesh's only axis.
double launcher_all_reduce_us(ml::comm::Communicator& world, const ml::comm::MeshGroups& groups,
                              const ml::DeviceMesh& mesh, std::int64_t bytes, std::int64_t warmup, std::int64_t iters) {
  launcher::BenchSettings s;
  s.collectives = {launcher::BenchCollective::AllReduce};
  s.sizes = {bytes};
  s.warmup_iters = warmup;
  s.iters = iters;
  s.print_tables = false;
  launcher::BenchRunInfo info;
  info.world = world.size();
  launcher::JsonlSink none;
  std::ostream nowhere(nullptr);
  const launcher::BenchOutcome o = launcher::run_bench(world, groups, mesh, s, info, nowhere, none);
  double us = world.rank() == 0 && !o.sweep.results.empty() ? o.sweep.results.front().time_us : 0.0;
  double shared = 0;
  world.all_reduce(ml::comm::ConstBuffer{&us, 1, ml::DType::Float64}, ml::comm::Buffer{&shared, 1, ml::DType::Float64},
                   ml::ReduceOp::Max);
  return shared;
}

int run(int argc, char** argv) {
  CLI::App app{"all_reduce through the launcher against a raw MPI_Allreduce loop, in one MPI job"};
  std::string min_bytes = "1M";
  std::string max_bytes = "64M";
  std::int64_t rounds = 7;
  std::int64_t warmup = 2;
  std::int64_t iters = 5;
  std::string jsonl;
  app.add_option("-b,--minbytes", min_bytes, "Smallest size (default 1M)");
  app.add_option("-e,--maxbytes", max_bytes, "Largest size (default 64M)");
  app.add_option("--rounds", rounds, "Rounds per size, each running both sides (default 7; median)")->check(CLI::Range(1, 1000));
  app.add_option("-w,--warmup-iters", warmup, "Warm-up iterations (default 2)")->check(CLI::Range(0, 1000));
  app.add_option("-n,--iters", iters, "Timed iterations (default 5)")->check(CLI::Range(1, 100000));
  app.add_option("--jsonl", jsonl, "Also write one JSON line per size to FILE (rank 0)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  const std::vector<std::int64_t> sizes =
      launcher::size_sweep(launcher::parse_size(min_bytes, "-b"), launcher::parse_size(max_bytes, "-e"), 2);

  const ml::mpi::MpiSession session(&argc, &argv);
  {
    auto world = ml::mpi::MpiCommunicator::world();
    const bool lead = world->rank() == 0;
    world->set_timeout(std::chrono::minutes(10));
    const ml::DeviceMesh mesh = ml::DeviceMesh::init({world->size()}, std::vector<std::string>{"world"}, world->size());
    const ml::comm::MeshGroups groups = ml::comm::build_mesh_groups(*world, mesh);
    std::ofstream lines;
    if (lead && !jsonl.empty()) lines.open(jsonl);
    if (lead) {
      std::printf("# all_reduce float32 sum on %d ranks (%s): launcher (meshloom-launch bench) against raw "
                  "MPI_Allreduce\n# %lld rounds per size, warm-up %lld, iterations %lld; time = mean per iteration "
                  "over the ranks, median over the rounds\n#\n# %12s %14s %14s %8s\n",
                  world->size(), ml::mpi::runtime_info().library.c_str(), static_cast<long long>(rounds),
                  static_cast<long long>(warmup), static_cast<long long>(iters), "size", "launcher us", "raw us",
                  "ratio");
    }
    std::vector<double> ratios;
    for (const auto bytes : sizes) {
      std::vector<double> ours;
      std::vector<double> raw;
      for (std::int64_t r = 0; r < rounds; ++r) {
        if (r % 2 == 0) {
          ours.push_back(launcher_all_reduce_us(*world, groups, mesh, bytes, warmup, iters));
          raw.push_back(raw_all_reduce_us(bytes, warmup, iters));
        } else {
          raw.push_back(raw_all_reduce_us(bytes, warmup, iters));
          ours.push_back(launcher_all_reduce_us(*world, groups, mesh, bytes, warmup, iters));
        }
      }
      const double a = launcher::median(ours);
      const double b = launcher::median(raw);
      const double ratio = b > 0 ? a / b : 0.0;
      ratios.push_back(ratio);
      if (lead) {
        std::printf("  %12lld %14.1f %14.1f %8.3f\n", static_cast<long long>(bytes), a, b, ratio);
        std::fflush(stdout);
        if (lines.is_open()) {
          lines << nlohmann::json{{"bytes", bytes}, {"launcher_us", a}, {"raw_us", b}, {"ratio", ratio},
                                  {"ranks", world->size()}}
                       .dump()
                << "\n"
                << std::flush;
        }
      }
    }
    if (lead) {
      std::printf("#\n# worst ratio %.3f, median ratio %.3f (goal: <= 1.05)\n",
                  *std::max_element(ratios.begin(), ratios.end()), launcher::median(ratios));
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "meshloom_bench_comm_overhead: error: %s\n", e.what());
    return 2;
  }
}
