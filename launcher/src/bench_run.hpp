// `meshloom-launch bench` on live ranks: the driver. Every group of each mesh axis runs one collective at the same
// time (the groups are the communicators of build_mesh_groups; each rank runs its own group's collective, as
// nccl-tests' NCCL_TESTS_SPLIT does). What a collective is lives in its own file (collectives/collective.hpp); how it
// is timed, and the per-iteration statistics over ranks, in timing.hpp. Rank 0 prints the tables and writes the JSON
// Lines stream; `calibrate` runs the same sweep.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "bench_format.hpp"
#include "bench_io.hpp"
#include "calibrate_io.hpp"
#include "live_backend.hpp"
#include "meshloom/comm/communicator.hpp"
#include "meshloom/comm/mesh_groups.hpp"
#include "meshloom/mesh/device_mesh.hpp"
#include "test_fault.hpp"

namespace meshloom::launcher {

struct BenchSettings {
  std::vector<std::string> axes;  // the axes to run, in order; empty = every axis, then every flattened axis
  // Axes run only for their group shape: skipped when an axis run before them has groups of the same shape (size,
  // hosts spanned, ranks per host), as calibrate's flattened axes are (they exist to show the planner shapes).
  std::vector<std::string> shape_only_axes;
  std::vector<BenchCollective> collectives;
  std::vector<std::int64_t> sizes;
  std::int64_t warmup_iters = 5;
  std::int64_t iters = 20;
  // The sweep runs `rounds` times, each row iters / rounds of its iterations each time (timing.hpp:
  // round_iterations); every row is reported in the last round, over all of its iterations. 1: nccl-tests' sweep.
  std::int64_t rounds = 1;
  TimingMode timing = TimingMode::Pipelined;
  DType dtype = DType::Float32;
  ReduceOp op = ReduceOp::Sum;
  bool check = false;
  double timeout_s = 60;  // per operation; 0 = none
  std::optional<std::filesystem::path> jsonl;
  bool print_tables = true;
  // The summary record is left to the caller (BenchOutcome::summary): calibrate writes it once the calibration is
  // written, so that a stream whose summary says ok never ends with that write's error.
  bool defer_summary = false;
  bool progress = true;  // the progress bar on a terminal's standard error (rank 0)
  std::optional<TestFault> fault;  // MESHLOOM_TEST_FAULT: unit = result row (0-based, in sweep order)
};

// The axes of `mesh` the sweep runs (settings.axes, or every own axis then every flattened axis), split into those
// run and those skipped: by default an axis of size 1 is skipped (its groups move nothing), except on a mesh of
// one rank, where every axis has size 1 and is measured; an axis named in `requested` is always run. KeyError
// naming the valid axes for an unknown one.
struct AxisSelection {
  std::vector<std::string> run;
  std::vector<std::string> skipped;
};
[[nodiscard]] AxisSelection select_axes(const DeviceMesh& mesh, const std::vector<std::string>& requested);

// The axis names of `mesh` ("0", "1", ... when unnamed).
[[nodiscard]] std::vector<std::string> axis_names(const DeviceMesh& mesh);

// Checks what every rank can check alone, before any collective: the backend ("mpi" or "nccl") can reduce the dtype
// when a reducing collective is asked for (mpi: not float16, bfloat16 or float8) and --check can predict its
// result, every buffer fits in MPI's int counts (mpi). ValueError naming the value otherwise.
void validate_bench_settings(const BenchSettings& settings, const DeviceMesh& mesh, const AxisSelection& axes,
                             const std::string& backend = "mpi");

// Refuses, before any collective, a sweep whose largest size the ranks of a host could not hold: every collective's
// input and output at -e (nccl-tests' sizes: size_counts) on the axes run, on `ranks_on_host` ranks each, against
// `memory_bytes` (this host's physical memory by default; at most the mesh's size of the host's ranks fill buffers).
// ValueError naming -e, the collective, the axis and the sizes: `-e: the sweep's largest size, 4294967296 bytes:
// all_gather on axis 'dp' holds 6 GiB per rank (input and output), 4 ranks on this host (24 GiB); this host has
// 23.5 GiB of memory`.
void check_bench_fits_in_memory(const BenchSettings& settings, const DeviceMesh& mesh, const AxisSelection& axes,
                                int ranks_on_host, std::int64_t memory_bytes = 0);

struct BenchOutcome {
  int exit_code = 0;    // 0, or 1 when a check found wrong elements
  BenchSweep sweep;     // rank 0: the results, for calibrate
  std::string summary;  // rank 0: the summary record (written unless settings.defer_summary)
};

// Runs the sweep on every rank of `world` (the control communicator: host buffers; collective over it) with the
// groups `backend` made of `mesh` (LiveBackend::groups with Buffers::Native); the collectives' buffers come from
// backend.allocate when it is not host memory (inputs uploaded before the timed region, outputs downloaded after
// it for --check). `info` carries the configuration record's fields that are not in `settings` (versions, host,
// world, mesh) and every rank's host (info.hosts, job_hosts: one per rank of the world, ValueError otherwise).
// Rank 0 writes the tables to `out`, the records to `sink` (open on rank 0 only) and the progress bar to stderr
// when it is a terminal. Throws on a failure (the caller reports it and aborts the job).
[[nodiscard]] BenchOutcome run_bench(comm::Communicator& world, const comm::MeshGroups& groups, const DeviceMesh& mesh,
                                     const BenchSettings& settings, BenchRunInfo info, std::ostream& out,
                                     JsonlSink& sink, LiveBackend* backend = nullptr);

}  // namespace meshloom::launcher
