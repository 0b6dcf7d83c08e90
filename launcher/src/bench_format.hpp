// What `meshloom-launch bench` measures and how it writes it, without any communication: the collectives and
// nccl-tests' counts, byte sizes and bandwidths, the nccl-tests-style table, and the JSON Lines records of the
// launcher's contract (config, result, summary, error). Pure functions, tested directly.
//
// Counts and bytes follow nccl-tests exactly. For a sweep size S (bytes) and itemsize s on a group of n ranks:
//   all_reduce, broadcast                 count = S / s            bytes = count * s
//   all_gather, reduce_scatter, all_to_all count = (S / s) / n      bytes = count * s * n   (the whole array)
// `count` is the per-rank parameter count that nccl-tests prints in its count column (the elements each rank sends
// for all_gather, receives for reduce_scatter, sends to each peer for all_to_all). A size whose count is 0 is not
// run. algbw = bytes / 1e9 / seconds (GB = 1e9 bytes), busbw = algbw * bus_factor(collective, n): all_reduce
// 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n; broadcast 1.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "meshloom/comm/transport.hpp"
#include "meshloom/dtype.hpp"
#include "meshloom/plan/state.hpp"
#include "group_span.hpp"
#include "slurm_job.hpp"
#include "timing.hpp"

namespace meshloom::launcher {

enum class BenchCollective : std::uint8_t { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast };

// "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast".
[[nodiscard]] std::string_view to_string(BenchCollective c) noexcept;
[[nodiscard]] std::optional<BenchCollective> bench_collective_from_string(std::string_view text) noexcept;
// Every collective, in the default order of --collectives.
[[nodiscard]] std::vector<BenchCollective> all_bench_collectives();
// all_reduce and reduce_scatter reduce (they take --op); broadcast has a root (0).
[[nodiscard]] bool reduces(BenchCollective c) noexcept;
[[nodiscard]] bool rooted(BenchCollective c) noexcept;

// The buffers of one run of a collective at one sweep size.
struct SizeCounts {
  std::int64_t count = 0;      // nccl-tests' count column (see above)
  std::int64_t bytes = 0;      // nccl-tests' size column, the bytes algbw divides
  std::int64_t in_count = 0;   // elements of the input buffer of each rank
  std::int64_t out_count = 0;  // elements of the output buffer of each rank (broadcast: in place, = in_count)
};
[[nodiscard]] SizeCounts size_counts(BenchCollective c, std::int64_t size_bytes, std::int64_t itemsize, std::int64_t n);

// GB/s with GB = 1e9 bytes: bytes / (time_us * 1e3). 0 for a time that is not > 0.
[[nodiscard]] double algbw_gbps(std::int64_t bytes, double time_us) noexcept;
// algbw * bus_factor(collective, n).
[[nodiscard]] double busbw_gbps(BenchCollective c, double algbw, std::int64_t n);

// One measured row: an axis, a collective and a size.
struct BenchResult {
  std::string axis;
  std::int64_t group_size = 0;
  std::int64_t groups = 0;
  GroupSpan span;  // the hosts one group spans and its ranks per host (group_span.hpp)
  BenchCollective collective = BenchCollective::AllReduce;
  DType dtype = DType::Float32;
  ReduceOp op = ReduceOp::Sum;
  std::int64_t bytes = 0;
  std::int64_t count = 0;
  TimingMode timing = TimingMode::Pipelined;
  IterationStats stats;  // over the iterations (timing.hpp)
  double time_us = 0;    // time_of(timing, stats): the mean pipelined, the p50 single_shot; what algbw divides
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  std::int64_t wrong = 0;   // wrong elements over every rank (0 when not checked)
  bool checked = false;
};

// ---- The table ---------------------------------------------------------------------------------------------

// The two `#` header rows (names, units).
[[nodiscard]] std::string table_header();
// One data row: size, count, type, redop ("none" unless the collective reduces), root (-1 unless rooted), time,
// algbw, busbw and #wrong ("N/A" when not checked). nccl-tests' widths and precisions.
[[nodiscard]] std::string table_row(const BenchResult& r);
// An axis' table ends with "# Out of bounds values : N OK|FAILED" (N/A without --check), each collective's rows with
// "# Avg bus bandwidth    : X", the mean busbw of that collective's rows, as nccl-tests ends the table of its one
// collective (averaging all_reduce with all_to_all would mean nothing).
[[nodiscard]] std::string table_footer(std::int64_t wrong, bool checked);
[[nodiscard]] std::string avg_busbw_line(double avg_busbw);
// nccl-tests' time column: 2 decimals below 100 us, 1 below 10000, none above.
[[nodiscard]] std::string format_time_us(double time_us);

// ---- The JSON Lines records --------------------------------------------------------------------------------

struct BenchRunInfo {
  std::string command = "bench";  // "bench" or "calibrate"
  std::string backend = "mpi";
  std::string backend_library;  // the nccl backend's "NCCL 2.28.9, CUDA runtime ..."; empty for mpi
  std::int64_t world = 0;
  std::vector<std::int64_t> mesh_shape;
  std::vector<std::string> mesh_names;
  struct Flattened {
    std::string name;
    std::vector<std::string> axes;
  };
  std::vector<Flattened> flattened;
  std::vector<std::string> axes;       // the axes run, in order
  std::vector<std::string> skipped_axes;  // requested axes of size 1
  std::vector<std::string> collectives;
  std::vector<std::int64_t> sizes;
  DType dtype = DType::Float32;
  ReduceOp op = ReduceOp::Sum;
  std::int64_t warmup_iters = 5;
  std::int64_t iters = 20;
  std::int64_t rounds = 1;
  bool check = false;
  double timeout_s = 60;
  TimingMode timing = TimingMode::Pipelined;
  std::vector<std::string> hosts;  // every rank's host, by world rank
  std::vector<std::string> cpus;   // every rank's CPU binding, by world rank (job_cpus); empty: not known
  bool bound = false;              // every rank was bound (ranks_bound: fewer CPUs than its host's ranks together)
  comm::TransportSettings transport;  // the job's transport settings (job_transport)
  std::string meshloom_version;
  std::string mpi_library;
  std::string host;
  std::optional<SlurmJob> slurm;  // the Slurm job it runs in (slurm_job.hpp), written as "slurm" when there is one
};

// The timing protocol's statistics as records carry them: {"iterations", "min_us", "p50_us", "p95_us", "p99_us",
// "mean_us", "max_us", "cv", "slowest": {"rank", "host", "iterations"}} ("slowest" only when a rank ran).
[[nodiscard]] nlohmann::ordered_json stats_json(const IterationStats& stats);

// Each without a trailing newline.
[[nodiscard]] std::string config_record(const BenchRunInfo& info);
[[nodiscard]] std::string result_record(const BenchResult& r);
[[nodiscard]] std::string summary_record(bool ok, std::int64_t results, std::int64_t wrong, double avg_busbw,
                                         double elapsed_s);
[[nodiscard]] std::string error_record(int rank, const std::string& message);

}  // namespace meshloom::launcher
