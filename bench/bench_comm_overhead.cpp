// What the launcher's abstraction costs, per backend: all_reduce through `meshloom-launch bench` (run_bench,
// pipelined, over the backend's communicator) against a raw loop of the same library calls, in one MPI job,
// interleaved so that every side sees the same machine.
//
//   mpirun -np 4 meshloom_bench_comm_overhead                          # mpi, 8 B .. 64 MiB, 7 rounds
//   mpirun -np 1 meshloom_bench_comm_overhead --backend nccl -e 1G     # nccl (one GPU per rank)
//
//   mpi   raw = MPI_Iallreduce + MPI_Wait, the calls the MPI backend makes (it completes the request by polling
//         MPI_Test so that it can time out; the wait is all it adds); a third column times blocking MPI_Allreduce,
//         which Open MPI serves with another algorithm (coll/tuned against coll/libnbc): the library's difference,
//         not ours.
//   nccl  raw = ncclAllReduce back to back on a stream of its own, timed with CUDA events (bench_raw_nccl.cpp).
//
// Protocol, the same on every side and the same as bench's pipelined mode (timing.hpp): per size, a world barrier,
// the warm-up iterations, a barrier, then `iters` back-to-back all_reduces of float32 sum with separate send and
// receive buffers, each iteration timed on every rank; a side's figure in one round is the p50 over the iterations
// of the mean over the ranks (what bench reports). Each round runs the sides one after the other, rotating which
// goes first; a size's figure is the median over the rounds. Output: a table (ratio = launcher / raw; 1.00 means no
// cost) and one JSON line per size with --jsonl. The goal in docs/05-launcher.md: within 5% (ratio <= 1.05) from
// 8 B to 64 MiB. Nothing is asserted: a loaded machine moves every side; read the medians.
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
#include "bench_raw_nccl.hpp"
#include "live_backend.hpp"
#include "live_command.hpp"
#include "run_exec.hpp"
#include "sizes.hpp"
#include "timing.hpp"

namespace ml = meshloom;
namespace launcher = meshloom::launcher;

namespace {

using Clock = std::chrono::steady_clock;

// The raw MPI sides, timed the way the launcher's pipelined protocol times (timing.hpp): a barrier, the warm-up, a
// barrier, then `iters` calls back to back with a clock reading after each; an iteration's time is the mean over the
// ranks, the figure the p50 over the iterations.
enum class Raw { SameCalls, Blocking };

double raw_all_reduce_us(Raw kind, std::int64_t bytes, std::int64_t warmup, std::int64_t iters) {
  const auto count = static_cast<std::size_t>(bytes) / sizeof(float);
  std::vector<float> in(count, 1.0F);
  std::vector<float> out(count, 0.0F);
  const int n = static_cast<int>(count);
  const auto call = [&] {
    int rc = MPI_SUCCESS;
    if (kind == Raw::Blocking) {
      rc = MPI_Allreduce(in.data(), out.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    } else {
      MPI_Request request = MPI_REQUEST_NULL;
      rc = MPI_Iallreduce(in.data(), out.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request);
      if (rc == MPI_SUCCESS) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
    if (rc != MPI_SUCCESS) throw std::runtime_error("MPI all_reduce failed with code " + std::to_string(rc));
  };
  const auto iterations = static_cast<std::size_t>(iters);
  std::vector<Clock::time_point> marks(iterations + 1);
  MPI_Barrier(MPI_COMM_WORLD);
  for (std::int64_t i = 0; i < warmup; ++i) call();
  MPI_Barrier(MPI_COMM_WORLD);
  marks[0] = Clock::now();
  for (std::size_t i = 0; i < iterations; ++i) {
    call();
    marks[i + 1] = Clock::now();
  }
  std::vector<double> mine(iterations), sums(iterations);
  for (std::size_t i = 0; i < iterations; ++i) {
    mine[i] = std::chrono::duration<double, std::micro>(marks[i + 1] - marks[i]).count();
  }
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(mine.data(), sums.data(), static_cast<int>(iterations), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (double& v : sums) v /= size;
  return launcher::summarize(sums).p50_us;
}

// The launcher's side: bench's own sweep of one size on the mesh's only axis.
double launcher_all_reduce_us(ml::comm::Communicator& world, const ml::comm::MeshGroups& groups,
                              const ml::DeviceMesh& mesh, std::int64_t bytes, std::int64_t warmup, std::int64_t iters,
                              launcher::LiveBackend& backend, const std::vector<std::string>& hosts) {
  launcher::BenchSettings s;
  s.collectives = {launcher::BenchCollective::AllReduce};
  s.sizes = {bytes};
  s.warmup_iters = warmup;
  s.iters = iters;
  s.timing = launcher::TimingMode::Pipelined;
  s.print_tables = false;
  launcher::BenchRunInfo info;
  info.world = world.size();
  info.hosts = hosts;
  launcher::JsonlSink none;
  std::ostream nowhere(nullptr);
  const launcher::BenchOutcome o = launcher::run_bench(world, groups, mesh, s, info, nowhere, none, &backend);
  double us = world.rank() == 0 && !o.sweep.results.empty() ? o.sweep.results.front().time_us : 0.0;
  double shared = 0;
  world.all_reduce(ml::comm::ConstBuffer{&us, 1, ml::DType::Float64}, ml::comm::Buffer{&shared, 1, ml::DType::Float64},
                   ml::ReduceOp::Max);
  return shared;
}

int run(int argc, char** argv) {
  CLI::App app{"all_reduce through the launcher against a raw loop of the backend's own calls, in one MPI job"};
  std::string backend_name = "mpi";
  std::string min_bytes = "8";
  std::string max_bytes = "64M";
  std::int64_t rounds = 7;
  std::int64_t warmup = 2;
  std::int64_t iters = 20;
  std::string jsonl;
  app.add_option("-b,--minbytes", min_bytes, "Smallest size (default 8)");
  app.add_option("-e,--maxbytes", max_bytes, "Largest size (default 64M)");
  app.add_option("--rounds", rounds, "Rounds per size, each running both sides (default 7; median)")->check(CLI::Range(1, 1000));
  app.add_option("-w,--warmup-iters", warmup, "Warm-up iterations (default 2)")->check(CLI::Range(0, 1000));
  app.add_option("-n,--iters", iters, "Timed iterations (default 20)")->check(CLI::Range(1, 100000));
  app.add_option("--jsonl", jsonl, "Also write one JSON line per size to FILE (rank 0)");
  app.add_option("--backend", backend_name, "mpi (default) or nccl (one GPU per rank)");
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
    launcher::check_backend_name(backend_name);
    const bool nccl = backend_name == "nccl";
    const std::unique_ptr<launcher::LiveBackend> backend =
        launcher::open_backend(backend_name, *world, std::chrono::minutes(10));
    const ml::DeviceMesh mesh = ml::DeviceMesh::init({world->size()}, std::vector<std::string>{"world"}, world->size());
    const ml::comm::MeshGroups groups = backend->groups(mesh, launcher::LiveBackend::Buffers::Native);
    const std::vector<std::string> hosts = launcher::job_hosts(*world);
    std::unique_ptr<ml::bench::RawNccl> raw_nccl = nccl ? ml::bench::open_raw_nccl(*world, sizes.back()) : nullptr;
    std::ofstream lines;
    if (lead && !jsonl.empty()) lines.open(jsonl);
    if (lead) {
      const std::string raw = nccl ? "ncclAllReduce back to back, CUDA events"
                                   : "the same MPI calls (MPI_Iallreduce + MPI_Wait), and blocking MPI_Allreduce";
      const std::string library = nccl ? backend->describe() : ml::mpi::runtime_info().library;
      std::printf("# all_reduce float32 sum on %d ranks, backend %s (%s): launcher (meshloom-launch bench, pipelined) "
                  "against a raw loop of %s\n"
                  "# %lld rounds per size, warm-up %lld, iterations %lld; time = p50 over the iterations of the mean "
                  "over the ranks, median over the rounds; ratio = launcher / raw\n#\n# %12s %14s %14s %8s %14s\n",
                  world->size(), backend_name.c_str(), library.c_str(), raw.c_str(), static_cast<long long>(rounds),
                  static_cast<long long>(warmup), static_cast<long long>(iters), "size", "launcher us", "raw us",
                  "ratio", nccl ? "" : "blocking us");
    }
    std::vector<double> ratios;
    for (const auto bytes : sizes) {
      std::vector<double> ours, same, blocking;
      const std::int64_t sides = nccl ? 2 : 3;
      for (std::int64_t r = 0; r < rounds; ++r) {
        // Each round runs every side, rotating which goes first.
        for (std::int64_t k = 0; k < sides; ++k) {
          switch ((r + k) % sides) {
            case 0:
              ours.push_back(launcher_all_reduce_us(*world, groups, mesh, bytes, warmup, iters, *backend, hosts));
              break;
            case 1:
              same.push_back(nccl ? raw_nccl->all_reduce_us(*world, bytes, warmup, iters)
                                  : raw_all_reduce_us(Raw::SameCalls, bytes, warmup, iters));
              break;
            default: blocking.push_back(raw_all_reduce_us(Raw::Blocking, bytes, warmup, iters)); break;
          }
        }
      }
      const double a = launcher::median(ours);
      const double b = launcher::median(same);
      const double ratio = b > 0 ? a / b : 0.0;
      ratios.push_back(ratio);
      if (lead) {
        nlohmann::json line{{"bytes", bytes}, {"launcher_us", a}, {"raw_us", b}, {"ratio", ratio},
                            {"ranks", world->size()}, {"backend", backend_name}};
        if (nccl) {
          std::printf("  %12lld %14.2f %14.2f %8.3f\n", static_cast<long long>(bytes), a, b, ratio);
        } else {
          const double c = launcher::median(blocking);
          line["blocking_us"] = c;
          std::printf("  %12lld %14.2f %14.2f %8.3f %14.2f\n", static_cast<long long>(bytes), a, b, ratio, c);
        }
        std::fflush(stdout);
        if (lines.is_open()) lines << line.dump() << "\n" << std::flush;
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
