// The timing protocol of bench, calibrate and run, in one place. Two modes:
//
//   pipelined    nccl-tests' protocol: `warmup` launches and one completion wait, a barrier of the control world
//                (so every group starts together), then `iters` launches back to back with one completion wait at
//                the end. The group runs in Completion::Queued mode, so NCCL enqueues every launch on its stream
//                without waiting (MPI completes each call before the next: a blocking loop, as a user would write).
//                A stopwatch mark before the first launch and after each launch (CUDA events on NCCL, the steady
//                clock on MPI) gives one time per iteration: on NCCL the interval between consecutive completions
//                on the GPU, free of launch gaps; the sum over the iterations is nccl-tests' total.
//   single_shot  the way a framework's step meets a collective: for each of `iters` iterations, a barrier of the
//                control world, then comm::time_single_shot (a mark, one launch, a mark, a completion wait; the same
//                function times run's steps). Launch and synchronisation latency are paid every time; each interval
//                is one iteration's time.
//
// Nothing sleeps inside a timed region (the backends' waits spin; communicator.hpp). Timed regions allocate
// nothing: the stopwatch and every buffer exist before the first mark. A wait on k queued launches is bounded by k
// times the group's per-operation timeout.
//
// Statistics over ranks and iterations (iteration_stats, collective over the control world): an iteration's time is
// the mean of the participating ranks' times for it (nccl-tests averages over ranks); min, p50, p95, p99, mean, max
// and the coefficient of variation (population standard deviation / mean) are taken over the iterations'
// times, percentiles by linear interpolation between the closest ranks (numpy's default). The slowest rank of an
// iteration is the rank whose own time for it was the longest (the lowest such rank on a tie; nobody when it took
// no time); the straggler reported is the rank that was slowest in the most iterations, with its host.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "meshloom/comm/communicator.hpp"

namespace meshloom::launcher {

enum class TimingMode { Pipelined, SingleShot };

// "pipelined", "single_shot".
[[nodiscard]] std::string_view to_string(TimingMode mode) noexcept;
[[nodiscard]] std::optional<TimingMode> timing_mode_from_string(std::string_view text) noexcept;

struct TimingPlan {
  TimingMode mode = TimingMode::Pipelined;
  std::int64_t warmup = 5;
  std::int64_t iters = 20;
};

// Times `launch` (one collective on `group`) under `plan` and returns this rank's `plan.iters` times in
// microseconds. `group` is nullptr on a rank that runs nothing (outside the mesh): it joins the control world's
// barriers and returns nothing. Collective over `control`. The group's completion mode is Blocking again on return.
// `before_each` (single_shot only) runs on the group's ranks before each iteration's barrier, untimed: bench rewrites
// the collective's buffers there, as a training step hands a collective buffers it has just written and run's
// executor packs fresh ones.
[[nodiscard]] std::vector<double> time_iterations(comm::Communicator& control, comm::Communicator* group,
                                                  const TimingPlan& plan, const std::function<void()>& launch,
                                                  const std::function<void()>& before_each = {});

struct IterationStats {
  std::int64_t iterations = 0;
  double min_us = 0, p50_us = 0, p95_us = 0, p99_us = 0, mean_us = 0, max_us = 0;
  double cv = 0;  // standard deviation / mean
  std::vector<double> per_iteration_us;  // iteration_stats: each iteration's time (mean over the ranks), in order
  int slowest_rank = -1;          // the straggler (world rank), -1 when no rank ran
  std::int64_t slowest_count = 0;  // in how many iterations it was the slowest
  std::string slowest_host;
  // iteration_stats: the rank slowest in each iteration, in order (-1 where nobody was: nothing took time), so that
  // iterations measured apart (validate's rounds) pool into one straggler (name_straggler).
  std::vector<std::int64_t> slowest_by_iteration;
};

// Sets `s`'s straggler from its slowest_by_iteration: the rank slowest in the most iterations (the lowest rank on a
// tie), that count, and its host (hosts[rank]; "" past the end). None (-1, 0, "") when no iteration names a rank.
void name_straggler(IterationStats& s, const std::vector<std::string>& hosts);

// Collective over `control`: every rank passes its times (empty when it ran nothing; otherwise `iters` of them)
// and every rank's host indexed by world rank (gather_hosts; empty: no host named). Every rank returns the same
// statistics.
[[nodiscard]] IterationStats iteration_stats(comm::Communicator& control, const std::vector<double>& mine,
                                             std::int64_t iters, const std::vector<std::string>& hosts);

// The time per iteration a measurement reports (bench's `time`, a record's time_us, what algbw divides): pipelined,
// the mean (the iterations' total / their number, nccl-tests' figure: a pipeline's fill and its stragglers count,
// as they do in a run of launches back to back); single_shot, the p50 (each iteration a call of its own, as a step
// meets it: the median keeps one descheduled call from moving it). Example: times 1, 1, 1, 5 give 2 pipelined and 1
// single_shot.
[[nodiscard]] double time_of(TimingMode mode, const IterationStats& stats) noexcept;

// The statistics of `values` alone (no ranks): for tests and for one rank's own times.
[[nodiscard]] IterationStats summarize(std::vector<double> values);

// The q-quantile (0..1) of ascending `sorted` by linear interpolation; 0 for none.
[[nodiscard]] double quantile(const std::vector<double>& sorted, double q);
// The median of `values` (the mean of the middle two for an even count); 0 for none.
[[nodiscard]] double median(std::vector<double> values);
// Rounds: `total` iterations split over `rounds` runs of a measurement spread in time (calibrate's sweep repeated,
// validate's candidates taken in turn), the iterations of round `round` (0-based): total / rounds, one more for the
// first total % rounds rounds. Their pooled times are one measurement of `total` iterations.
[[nodiscard]] std::int64_t round_iterations(std::int64_t total, std::int64_t rounds, std::int64_t round) noexcept;
// Seconds as microseconds, element by element (the records' *_us lists).
[[nodiscard]] std::vector<double> to_micros(const std::vector<double>& seconds);

// The hosts of a job, indexed by world rank, from every rank's host name and node: the lowest world rank of the
// ranks it shares memory with (MpiCommunicator::node_place().first, MPI_Comm_split_type with MPI_COMM_TYPE_SHARED).
// The node decides which ranks are one host, whatever the names say: a node is named by its lowest rank's host
// name, and nodes that share a name (containers often all answer "localhost") are told apart as "name#k", k the
// node's lowest rank (as is a name that holds a '#' itself, so that labels stay distinct). Examples: names
// {a, a, a, a} on nodes {0, 0, 2, 2} -> {a#0, a#0, a#2, a#2}; names {a, b} on nodes {0, 0} -> {a, a}; names {a, b}
// on nodes {0, 1} -> {a, b}. ValueError when the lists differ in length, a node is not a rank at or below the rank
// that names it, or a node's lowest rank names another node.
[[nodiscard]] std::vector<std::string> host_labels(const std::vector<std::string>& names,
                                                   const std::vector<int>& nodes);

// Every rank's `mine`, indexed by world rank (each cut at width - 1 bytes). Collective over `control`.
[[nodiscard]] std::vector<std::string> gather_strings(comm::Communicator& control, const std::string& mine,
                                                      std::size_t width);
// Every rank's `mine`, indexed by world rank. Collective over `control`.
[[nodiscard]] std::vector<std::int64_t> gather_ints(comm::Communicator& control, std::int64_t mine);

// host_labels of the whole job: every rank gives its host name (cut at 255 bytes) and its node. Collective over
// `control` (the world).
[[nodiscard]] std::vector<std::string> gather_hosts(comm::Communicator& control, const std::string& mine, int node);

}  // namespace meshloom::launcher
