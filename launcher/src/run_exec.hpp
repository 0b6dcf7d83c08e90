// `meshloom-launch run` on live ranks: executes a planned redistribution for real through the communicators of
// build_mesh_groups (engine executor), times every step, and verifies every element of every rank.
//
// Each rank builds only its own buffers (rank_buffers: initial_local of the request's source at its mesh
// coordinate, expected_local of the target), before any collective. Step by step, every rank runs the step
// `iterations` times on fresh copies of its buffer, each run started together (a world barrier) and timed on every
// rank twice: the whole step (packing, padding, the int64/float64 conversion, the collective, unpacking; per
// iteration the slowest rank's time, the step's time the median over the iterations) and the collective alone, which
// starts on a second world barrier so that every group runs it at the same time and is timed by the launcher's
// single_shot protocol (timing.hpp: comm::time_single_shot, the mean over the ranks per iteration, p50 over the
// iterations, the slowest rank named); the cost models predict the collective, so that is what they are compared with. The
// last copy goes on to the next step. At the end every rank checks that its buffer has the target's shape (one
// world reduction, so that no rank enters a reduction its peers skip), the target's Partial axes are reduced, and
// every rank compares its buffer with expected_local of the target; rank 0 learns the first mismatch (lowest rank).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "meshloom/comm/communicator.hpp"
#include "meshloom/comm/mesh_groups.hpp"
#include "meshloom/dtype.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/simulator.hpp"
#include "test_fault.hpp"
#include "timing.hpp"

namespace meshloom::launcher {

struct RunSettings {
  std::int64_t iterations = 5;
  DType dtype = DType::Float64;  // float64 or int64
  std::optional<TestFault> fault;  // MESHLOOM_TEST_FAULT: unit = step index
  std::vector<std::string> hosts;  // every rank's host (job_hosts), naming the slowest rank's; empty: none named
};

struct StepTiming {
  std::vector<double> iteration_s;             // per iteration, the slowest rank's seconds for the whole step
  std::vector<double> collective_iteration_s;  // per iteration, the mean over the ranks of the collective's seconds
  double median_s = 0;                         // the median of iteration_s
  double collective_median_s = 0;              // collective_stats.p50_us, in seconds
  IterationStats collective_stats;             // the timing protocol's statistics of the collective (timing.hpp)
};

struct RunOutcome {
  std::vector<StepTiming> steps;
  double total_s = 0;             // sum of the steps' medians
  double collective_total_s = 0;  // sum of the steps' collective medians
  bool verified = false;
  std::string mismatch;  // rank 0: the first mismatch ("rank 3 (1,1): element [0,1] ...") when not verified
  std::int64_t elements_checked = 0;
};

// Called on every rank as each step's timing is known (every rank holds the same timing).
using StepObserver = std::function<void(std::size_t step, const StepTiming& timing)>;

// This rank's buffers of a run: the source (initial_local of request.src) and what it must hold at the end
// (expected_local of request.dst) at its mesh coordinate; empty for a rank outside the mesh. Built before any
// collective, so that an error (a source that cannot be built, say) is a usage error every rank agrees on.
struct RankBuffers {
  bool in_mesh = false;
  std::vector<std::int64_t> coordinate;
  LocalTensor initial;
  LocalTensor expected;
};

// A rank may come to hold the whole tensor (a replicated state), and at a step's peak it holds it kRunCopies times
// over, as the int64 values the executor carries: its source and the expected target, the buffer and the
// iteration's copy, the first iteration's result, the collective's input (int64 and float64 on the wire), its output
// and the unpacked result (measured: 8 to 9 copies of a 128 MiB tensor at the peak). ValueError before any
// collective when `ranks_on_host` ranks doing so cannot fit in `memory_bytes` (this host's physical memory by
// default), naming `what`, the tensor and the sizes:
//   `run: tensor 1048576x1048576 is 8 TiB as int64 values, and a rank may hold it whole 10 times over in a step
//   (80 TiB), 4 ranks on this host (320 TiB); this host has 62.8 GiB of memory`
inline constexpr std::int64_t kRunCopies = 10;
void check_fits_in_memory(const PlanRequest& request, const std::string& what, int ranks_on_host = 1,
                          std::int64_t memory_bytes = 0);

// The buffers of world rank `rank` for `request`. ValueError as initial_local and expected_local. It does not check
// the memory: callers run check_fits_in_memory in their prepare step, before any collective.
[[nodiscard]] RankBuffers rank_buffers(const PlanRequest& request, int rank);

// The communicator of a step on `axes` (ascending): the own axis for one, the flattened group named by joining the
// axis names with "_" for several. nullptr when this rank is outside the mesh; KeyError when no such group exists.
[[nodiscard]] comm::Communicator* step_group(const comm::MeshGroups& groups, const std::vector<std::size_t>& axes,
                                             const std::vector<std::string>& names);

// Runs `plan` (collective over `world`; every rank passes the same request and plan). `names` names the mesh axes
// as build_mesh_groups did. Ranks of world outside the mesh (world rank >= mesh size) only join the world's
// barriers and reductions. Throws on a failure of a collective (the caller aborts the job).
[[nodiscard]] RunOutcome execute_plan(comm::Communicator& world, const comm::MeshGroups& groups,
                                      const std::vector<std::string>& names, const PlanRequest& request,
                                      const Plan& plan, const RunSettings& settings);
// The same with this rank's buffers built beforehand (rank_buffers of the same request and world rank), and
// `observer` told of every step as it is measured (the launcher streams its records).
[[nodiscard]] RunOutcome execute_plan(comm::Communicator& world, const comm::MeshGroups& groups,
                                      const std::vector<std::string>& names, const PlanRequest& request,
                                      const Plan& plan, const RunSettings& settings, const RankBuffers& buffers,
                                      const StepObserver& observer = {});

// One step's timings from several runs of its plan (validate's rounds, each an execute_plan of a few iterations) as
// one timing of all their iterations, in round order: the whole step's and the collective's medians over every
// iteration, the collective's statistics over every iteration (timing.hpp's summarize), and as straggler the rank
// slowest in the most of all the iterations (timing.hpp's name_straggler over the rounds' slowest_by_iteration; its
// host from `hosts`, indexed by world rank). ValueError for no rounds.
[[nodiscard]] StepTiming pool_rounds(const std::vector<StepTiming>& rounds, const std::vector<std::string>& hosts);



}  // namespace meshloom::launcher
