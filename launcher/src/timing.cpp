#include "timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>

#include "meshloom/error.hpp"

namespace meshloom::launcher {

namespace {

// Restores Blocking completion however the timed region ends.
class QueuedScope {
public:
  explicit QueuedScope(comm::Communicator* group) : group_(group) {
    if (group_ != nullptr) group_->set_completion(comm::Completion::Queued);
  }
  ~QueuedScope() {
    if (group_ != nullptr) group_->set_completion(comm::Completion::Blocking);
  }
  QueuedScope(const QueuedScope&) = delete;
  QueuedScope& operator=(const QueuedScope&) = delete;

private:
  comm::Communicator* group_;
};

// While it lives, the group's timeout bounds a wait on `launches` queued collectives: the per-operation timeout
// times their number (a pipelined run of 200 collectives of 1 GiB is not one slow operation).
class QueuedTimeout {
public:
  QueuedTimeout(comm::Communicator* group, std::int64_t launches) : group_(group) {
    if (group_ == nullptr) return;
    saved_ = group_->timeout();
    if (saved_.count() > 0 && launches > 1) {
      const auto most = std::chrono::milliseconds::max().count() / launches;
      group_->set_timeout(std::chrono::milliseconds(saved_.count() > most ? std::chrono::milliseconds::max().count()
                                                                           : saved_.count() * launches));
    }
  }
  ~QueuedTimeout() {
    if (group_ != nullptr) group_->set_timeout(saved_);
  }
  QueuedTimeout(const QueuedTimeout&) = delete;
  QueuedTimeout& operator=(const QueuedTimeout&) = delete;

private:
  comm::Communicator* group_;
  std::chrono::milliseconds saved_{0};
};

}  // namespace

std::string_view to_string(TimingMode mode) noexcept {
  return mode == TimingMode::Pipelined ? "pipelined" : "single_shot";
}

std::optional<TimingMode> timing_mode_from_string(std::string_view text) noexcept {
  if (text == "pipelined") return TimingMode::Pipelined;
  if (text == "single_shot") return TimingMode::SingleShot;
  return std::nullopt;
}

std::vector<double> time_iterations(comm::Communicator& control, comm::Communicator* group, const TimingPlan& plan,
                                    const std::function<void()>& launch, const std::function<void()>& before_each) {
  if (plan.iters < 1) raise(ErrorKind::ValueError, "timing: " + std::to_string(plan.iters) + " iterations");
  const auto iters = static_cast<std::size_t>(plan.iters);
  std::unique_ptr<comm::Stopwatch> watch;
  if (group != nullptr) watch = group->stopwatch(plan.mode == TimingMode::Pipelined ? iters + 1 : 2);
  const QueuedScope queued(group);

  control.barrier();
  if (group != nullptr) {
    const QueuedTimeout bound(group, plan.warmup);
    for (std::int64_t i = 0; i < plan.warmup; ++i) launch();
    group->synchronize();
  }
  std::vector<double> times;
  if (plan.mode == TimingMode::Pipelined) {
    control.barrier();
    if (group == nullptr) return times;
    const QueuedTimeout bound(group, plan.iters);
    watch->mark();
    for (std::size_t i = 0; i < iters; ++i) {
      launch();
      watch->mark();
    }
    group->synchronize();
    times = watch->intervals_us();
  } else {
    if (group != nullptr) times.reserve(iters);
    for (std::size_t i = 0; i < iters; ++i) {
      if (group != nullptr && before_each) before_each();
      control.barrier();
      if (group != nullptr) times.push_back(comm::time_single_shot(*group, *watch, launch));
    }
  }
  if (group != nullptr && times.size() != iters) {
    raise(ErrorKind::RuntimeError, "timing: the stopwatch gave " + std::to_string(times.size()) + " times for " +
                                       std::to_string(iters) + " iterations");
  }
  return times;
}

double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double at = std::clamp(q, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - static_cast<double>(lo));
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return quantile(values, 0.5);
}

std::vector<double> to_micros(const std::vector<double>& seconds) {
  std::vector<double> out;
  out.reserve(seconds.size());
  for (const double s : seconds) out.push_back(s * 1e6);
  return out;
}

std::int64_t round_iterations(std::int64_t total, std::int64_t rounds, std::int64_t round) noexcept {
  if (rounds <= 0) return total;
  return total / rounds + (round < total % rounds ? 1 : 0);
}

double time_of(TimingMode mode, const IterationStats& stats) noexcept {
  return mode == TimingMode::Pipelined ? stats.mean_us : stats.p50_us;
}

IterationStats summarize(std::vector<double> values) {
  IterationStats s;
  s.iterations = static_cast<std::int64_t>(values.size());
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.min_us = values.front();
  s.max_us = values.back();
  s.p50_us = quantile(values, 0.50);
  s.p95_us = quantile(values, 0.95);
  s.p99_us = quantile(values, 0.99);
  double sum = 0;
  for (const double v : values) sum += v;
  s.mean_us = sum / static_cast<double>(values.size());
  double squares = 0;
  for (const double v : values) squares += (v - s.mean_us) * (v - s.mean_us);
  const double sd = std::sqrt(squares / static_cast<double>(values.size()));
  s.cv = s.mean_us > 0 ? sd / s.mean_us : 0;
  return s;
}

IterationStats iteration_stats(comm::Communicator& control, const std::vector<double>& mine, std::int64_t iters,
                               const std::vector<std::string>& hosts) {
  const auto n = static_cast<std::size_t>(iters);
  const bool ran = !mine.empty();
  if (ran && mine.size() != n) {
    raise(ErrorKind::ValueError, "iteration_stats: " + std::to_string(mine.size()) + " times for " +
                                     std::to_string(iters) + " iterations");
  }
  // One reduction each: the sum and the maximum of every iteration's time, then the lowest rank that took it.
  std::vector<double> sums(n + 1, 0.0), peaks(n, 0.0);
  for (std::size_t i = 0; i < n && ran; ++i) sums[i] = mine[i];
  sums[n] = ran ? 1.0 : 0.0;
  const std::vector<double> my_sums = sums;
  control.all_reduce({my_sums.data(), my_sums.size(), DType::Float64}, {sums.data(), sums.size(), DType::Float64},
                     ReduceOp::Sum);
  const std::vector<double> my_peaks = ran ? mine : std::vector<double>(n, -1.0);
  control.all_reduce({my_peaks.data(), n, DType::Float64}, {peaks.data(), n, DType::Float64}, ReduceOp::Max);
  std::vector<std::int64_t> who(n, std::numeric_limits<std::int64_t>::max()), mine_who(n);
  for (std::size_t i = 0; i < n; ++i) {
    // Nobody is slowest in an iteration that took no time (a step with nothing to communicate).
    mine_who[i] = ran && peaks[i] > 0 && mine[i] == peaks[i] ? control.rank() : std::numeric_limits<std::int64_t>::max();
  }
  control.all_reduce({mine_who.data(), n, DType::Int64}, {who.data(), n, DType::Int64}, ReduceOp::Min);

  const double ranks = sums[n];
  if (!(ranks > 0)) return IterationStats{};
  std::vector<double> per_iteration(n);
  for (std::size_t i = 0; i < n; ++i) per_iteration[i] = sums[i] / ranks;
  IterationStats s = summarize(per_iteration);
  s.per_iteration_us = std::move(per_iteration);
  s.slowest_by_iteration.reserve(n);
  for (const std::int64_t r : who) s.slowest_by_iteration.push_back(r == std::numeric_limits<std::int64_t>::max() ? -1 : r);
  name_straggler(s, hosts);
  return s;
}

void name_straggler(IterationStats& s, const std::vector<std::string>& hosts) {
  std::map<std::int64_t, std::int64_t> counts;  // rank -> iterations it was the slowest in
  for (const std::int64_t r : s.slowest_by_iteration) {
    if (r >= 0) ++counts[r];
  }
  s.slowest_rank = -1;
  s.slowest_count = 0;
  s.slowest_host.clear();
  for (const auto& [rank, count] : counts) {  // ascending ranks: the lowest of the most iterations wins a tie
    if (count > s.slowest_count) {
      s.slowest_rank = static_cast<int>(rank);
      s.slowest_count = count;
    }
  }
  if (s.slowest_rank >= 0) {
    const auto r = static_cast<std::size_t>(s.slowest_rank);
    s.slowest_host = r < hosts.size() ? hosts[r] : std::string();
  }
}

std::vector<std::string> host_labels(const std::vector<std::string>& names, const std::vector<int>& nodes) {
  if (names.size() != nodes.size()) {
    raise(ErrorKind::ValueError, "host_labels: " + std::to_string(names.size()) + " host names for " +
                                     std::to_string(nodes.size()) + " nodes");
  }
  for (std::size_t r = 0; r < nodes.size(); ++r) {
    const std::string who = "host_labels: rank " + std::to_string(r) + " names node " + std::to_string(nodes[r]);
    if (nodes[r] < 0 || static_cast<std::size_t>(nodes[r]) > r) {
      raise(ErrorKind::ValueError, who + ": a node is named by its lowest rank, so 0 <= node <= rank");
    }
    const int own = nodes[static_cast<std::size_t>(nodes[r])];
    if (own != nodes[r]) {
      raise(ErrorKind::ValueError, who + " but rank " + std::to_string(nodes[r]) + " names node " +
                                       std::to_string(own) + ": a node's lowest rank names the node itself");
    }
  }
  // How many nodes go by each name (a node's name is its lowest rank's).
  std::map<std::string, int> nodes_named;
  for (std::size_t r = 0; r < nodes.size(); ++r) {
    if (static_cast<std::size_t>(nodes[r]) == r) ++nodes_named[names[r]];
  }
  std::vector<std::string> labels;
  labels.reserve(names.size());
  for (const int node : nodes) {
    const std::string& name = names[static_cast<std::size_t>(node)];
    // A name with '#' in it (not a valid host name, but gethostname returns what it was given) gets its node too, so
    // that no label can equal another node's "name#k": every label with a '#' ends in its own node's lowest rank.
    const bool tell_apart = nodes_named[name] > 1 || name.find('#') != std::string::npos;
    labels.push_back(tell_apart ? name + "#" + std::to_string(node) : name);
  }
  return labels;
}

std::vector<std::string> gather_strings(comm::Communicator& control, const std::string& mine, std::size_t width) {
  std::vector<char> own(width, '\0');
  std::memcpy(own.data(), mine.data(), std::min(mine.size(), width - 1));
  const auto world = static_cast<std::size_t>(control.size());
  std::vector<char> all(width * world, '\0');
  control.all_gather({own.data(), width, DType::UInt8}, {all.data(), all.size(), DType::UInt8});
  std::vector<std::string> out;
  out.reserve(world);
  for (std::size_t r = 0; r < world; ++r) out.emplace_back(all.data() + r * width);
  return out;
}

std::vector<std::int64_t> gather_ints(comm::Communicator& control, std::int64_t mine) {
  const auto world = static_cast<std::size_t>(control.size());
  std::vector<std::int64_t> all(world, -1);
  control.all_gather({&mine, 1, DType::Int64}, {all.data(), world, DType::Int64});
  return all;
}

std::vector<std::string> gather_hosts(comm::Communicator& control, const std::string& mine, int node) {
  const std::vector<std::string> names = gather_strings(control, mine, 256);
  const std::vector<std::int64_t> all_nodes = gather_ints(control, node);
  std::vector<int> nodes;
  nodes.reserve(names.size());
  for (std::size_t r = 0; r < names.size(); ++r) {
    const std::int64_t n = all_nodes[r];
    nodes.push_back(n < 0 || n > std::numeric_limits<int>::max() ? -1 : static_cast<int>(n));  // host_labels checks
  }
  return host_labels(names, nodes);
}

}  // namespace meshloom::launcher
