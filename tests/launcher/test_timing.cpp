// The timing protocol (launcher/src/timing.hpp) on a scripted communicator: the exact order of barriers, launches,
// marks and completion waits of each mode, the completion mode every launch ran in, the times it returns, and the
// statistics over iterations.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "meshloom/error.hpp"
#include "support/expect_error.hpp"
#include "timing.hpp"

namespace meshloom::launcher {
namespace {

using meshloom::testing::expect_error;

// One rank, every operation logged. A launch takes the next scripted duration on a fake clock; the stopwatch reads
// that clock, so the times the protocol returns are known exactly.
class ScriptedComm final : public comm::Communicator {
public:
  std::vector<std::string> log;
  std::vector<double> durations;  // per launch, in order
  double clock_us = 0;
  std::size_t launches = 0;

  void launch() {
    log.push_back(completion() == comm::Completion::Queued ? "launch(queued)" : "launch(blocking)");
    clock_us += launches < durations.size() ? durations[launches] : 1.0;
    ++launches;
  }

  int rank() const noexcept override { return 0; }
  int size() const noexcept override { return 1; }
  const std::string& name() const noexcept override { return name_; }
  std::string_view backend() const noexcept override { return "scripted"; }
  void all_reduce(comm::ConstBuffer in, comm::Buffer out, ReduceOp) override {
    std::memcpy(out.data, in.data, in.count * static_cast<std::size_t>(itemsize(in.dtype)));
  }
  void all_gather(comm::ConstBuffer in, comm::Buffer out) override {
    std::memcpy(out.data, in.data, in.count * static_cast<std::size_t>(itemsize(in.dtype)));
  }
  void reduce_scatter(comm::ConstBuffer, comm::Buffer, ReduceOp) override {}
  void all_to_all(comm::ConstBuffer, comm::Buffer) override {}
  void broadcast(comm::Buffer, int) override {}
  void barrier() override { log.emplace_back("barrier"); }
  void synchronize() override {
    log.emplace_back("sync");
    sync_timeouts.push_back(timeout().count());
  }
  std::vector<long long> sync_timeouts;  // the timeout each synchronize() ran under, in ms
  std::unique_ptr<comm::Communicator> split(int, int, std::string) override { return nullptr; }
  void abort(int) noexcept override {}

  std::unique_ptr<comm::Stopwatch> stopwatch(std::size_t marks) override {
    log.push_back("stopwatch(" + std::to_string(marks) + ")");
    return std::make_unique<Watch>(*this, marks);
  }

private:
  class Watch final : public comm::Stopwatch {
  public:
    Watch(ScriptedComm& c, std::size_t marks) : c_(c), capacity_(marks) {}
    void mark() override {
      if (marks_.size() == capacity_) raise(ErrorKind::ValueError, "past capacity");
      c_.log.emplace_back("mark");
      marks_.push_back(c_.clock_us);
    }
    std::vector<double> intervals_us() override {
      std::vector<double> out;
      for (std::size_t i = 1; i < marks_.size(); ++i) out.push_back(marks_[i] - marks_[i - 1]);
      return out;
    }
    void reset() noexcept override { marks_.clear(); }

  private:
    ScriptedComm& c_;
    std::size_t capacity_;
    std::vector<double> marks_;
  };
  std::string name_ = "scripted";
};

std::vector<std::string> expected_log(std::initializer_list<std::vector<std::string>> parts) {
  std::vector<std::string> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(Timing, PipelinedLaunchesBackToBackQueuedWithOneWait) {
  ScriptedComm control, group;
  group.durations = {100, 100, 3, 5, 7};  // two warm-ups, then three timed
  const auto times = time_iterations(control, &group, {.mode = TimingMode::Pipelined, .warmup = 2, .iters = 3},
                                     [&] { group.launch(); });
  EXPECT_EQ(times, (std::vector<double>{3, 5, 7}));
  EXPECT_EQ(group.log, expected_log({{"stopwatch(4)", "launch(queued)", "launch(queued)", "sync", "mark"},
                                     {"launch(queued)", "mark", "launch(queued)", "mark", "launch(queued)", "mark"},
                                     {"sync"}}));
  EXPECT_EQ(control.log, (std::vector<std::string>{"barrier", "barrier"}));
  EXPECT_EQ(group.completion(), comm::Completion::Blocking);
}

TEST(Timing, SingleShotTimesEachLaunchAloneAfterABarrier) {
  ScriptedComm control, group;
  group.durations = {50, 4, 6};
  const auto times = time_iterations(control, &group, {.mode = TimingMode::SingleShot, .warmup = 1, .iters = 2},
                                     [&] { group.launch(); });
  EXPECT_EQ(times, (std::vector<double>{4, 6}));
  EXPECT_EQ(group.log, expected_log({{"stopwatch(2)", "launch(queued)", "sync"},
                                     {"mark", "launch(queued)", "mark", "sync"},
                                     {"mark", "launch(queued)", "mark", "sync"}}));
  EXPECT_EQ(control.log, (std::vector<std::string>{"barrier", "barrier", "barrier"}));
  EXPECT_EQ(group.completion(), comm::Completion::Blocking);
}

TEST(Timing, SingleShotRefillsBeforeEachIterationsBarrierUntimed) {
  ScriptedComm control, group;
  group.durations = {50, 4, 6};
  const auto times = time_iterations(
      control, &group, {.mode = TimingMode::SingleShot, .warmup = 1, .iters = 2}, [&] { group.launch(); },
      [&] { control.log.emplace_back("refill"); });
  EXPECT_EQ(times, (std::vector<double>{4, 6}));
  EXPECT_EQ(control.log, (std::vector<std::string>{"barrier", "refill", "barrier", "refill", "barrier"}));
  // A rank outside the mesh (no group) refills nothing.
  ScriptedComm outside;
  (void)time_iterations(outside, nullptr, {.mode = TimingMode::SingleShot, .warmup = 1, .iters = 2}, [] {},
                        [&] { outside.log.emplace_back("refill"); });
  EXPECT_EQ(outside.log, (std::vector<std::string>{"barrier", "barrier", "barrier"}));
}

TEST(Timing, AWaitOnQueuedLaunchesIsBoundedByTheirNumberTimesTheTimeout) {
  ScriptedComm control, group;
  group.set_timeout(std::chrono::milliseconds(1000));
  (void)time_iterations(control, &group, {.mode = TimingMode::Pipelined, .warmup = 3, .iters = 50},
                        [&] { group.launch(); });
  EXPECT_EQ(group.sync_timeouts, (std::vector<long long>{3000, 50000}));
  EXPECT_EQ(group.timeout().count(), 1000);  // restored
  group.sync_timeouts.clear();
  (void)time_iterations(control, &group, {.mode = TimingMode::SingleShot, .warmup = 1, .iters = 2},
                        [&] { group.launch(); });
  EXPECT_EQ(group.sync_timeouts, (std::vector<long long>{1000, 1000, 1000}));  // one launch per wait
  group.set_timeout(std::chrono::milliseconds(0));  // none stays none
  group.sync_timeouts.clear();
  (void)time_iterations(control, &group, {.mode = TimingMode::Pipelined, .warmup = 2, .iters = 2},
                        [&] { group.launch(); });
  EXPECT_EQ(group.sync_timeouts, (std::vector<long long>{0, 0}));
}

TEST(Timing, ARankOutsideTheGroupsOnlyJoinsTheBarriers) {
  ScriptedComm control;
  EXPECT_TRUE(time_iterations(control, nullptr, {.mode = TimingMode::Pipelined, .warmup = 3, .iters = 4}, [] {
                FAIL() << "no launch outside a group";
              }).empty());
  EXPECT_EQ(control.log.size(), 2U);
  control.log.clear();
  EXPECT_TRUE(time_iterations(control, nullptr, {.mode = TimingMode::SingleShot, .warmup = 3, .iters = 4}, [] {
                FAIL() << "no launch outside a group";
              }).empty());
  EXPECT_EQ(control.log.size(), 5U);  // one before the warm-up, one per iteration
}

TEST(Timing, CompletionIsBlockingAgainWhenALaunchThrows) {
  ScriptedComm control, group;
  EXPECT_THROW((void)time_iterations(control, &group, {.mode = TimingMode::Pipelined, .warmup = 0, .iters = 2},
                                     [] { raise(ErrorKind::RuntimeError, "boom"); }),
               Error);
  EXPECT_EQ(group.completion(), comm::Completion::Blocking);
}

TEST(Timing, ZeroIterationsIsRefused) {
  ScriptedComm control;
  EXPECT_THROW((void)time_iterations(control, nullptr, {.mode = TimingMode::Pipelined, .warmup = 0, .iters = 0}, [] {}),
               Error);
}

TEST(Timing, ModesHaveOneSpelling) {
  EXPECT_EQ(to_string(TimingMode::Pipelined), "pipelined");
  EXPECT_EQ(to_string(TimingMode::SingleShot), "single_shot");
  EXPECT_EQ(timing_mode_from_string("single_shot"), TimingMode::SingleShot);
  EXPECT_EQ(timing_mode_from_string("pipelined"), TimingMode::Pipelined);
  EXPECT_FALSE(timing_mode_from_string("single-shot").has_value());
}

TEST(Timing, PercentilesInterpolateLikeNumpy) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);  // unsorted on purpose
  const IterationStats s = summarize(v);
  EXPECT_EQ(s.iterations, 100);
  EXPECT_DOUBLE_EQ(s.min_us, 1);
  EXPECT_DOUBLE_EQ(s.max_us, 100);
  EXPECT_DOUBLE_EQ(s.p50_us, 50.5);   // numpy.percentile(range(1, 101), 50)
  EXPECT_DOUBLE_EQ(s.p95_us, 95.05);  // ... 95
  EXPECT_DOUBLE_EQ(s.p99_us, 99.01);  // ... 99
  EXPECT_DOUBLE_EQ(s.mean_us, 50.5);
  EXPECT_NEAR(s.cv, 28.8660700477 / 50.5, 1e-9);  // population standard deviation of 1..100 over the mean
}

TEST(Timing, OneValueHasNoSpread) {
  const IterationStats s = summarize({7.5});
  EXPECT_DOUBLE_EQ(s.p50_us, 7.5);
  EXPECT_DOUBLE_EQ(s.p99_us, 7.5);
  EXPECT_DOUBLE_EQ(s.cv, 0);
  EXPECT_EQ(summarize({}).iterations, 0);
}

// What a measurement reports: pipelined, the iterations' total over their number (nccl-tests' figure: the slow
// iteration counts); single_shot, the p50 (one descheduled call does not move it).
TEST(Timing, PipelinedReportsTheTotalOverIterationsSingleShotTheMedian) {
  const IterationStats s = summarize({1, 1, 1, 5});
  EXPECT_DOUBLE_EQ(time_of(TimingMode::Pipelined, s), 2);
  EXPECT_DOUBLE_EQ(time_of(TimingMode::SingleShot, s), 1);
  const IterationStats one = summarize({7.5});
  EXPECT_DOUBLE_EQ(time_of(TimingMode::Pipelined, one), time_of(TimingMode::SingleShot, one));
}

// Rounds split the iterations as evenly as they go, the first rounds taking the remainder; together they are all of
// them, for every total and every number of rounds up to it.
TEST(Timing, RoundsShareTheIterations) {
  EXPECT_EQ(round_iterations(20, 4, 0), 5);
  EXPECT_EQ(round_iterations(9, 3, 2), 3);
  EXPECT_EQ(round_iterations(10, 4, 0), 3);
  EXPECT_EQ(round_iterations(10, 4, 1), 3);
  EXPECT_EQ(round_iterations(10, 4, 2), 2);
  EXPECT_EQ(round_iterations(10, 4, 3), 2);
  EXPECT_EQ(round_iterations(7, 0, 0), 7);  // no rounds: one pass
  for (std::int64_t total = 1; total <= 40; ++total) {
    for (std::int64_t rounds = 1; rounds <= total; ++rounds) {
      std::int64_t sum = 0;
      for (std::int64_t r = 0; r < rounds; ++r) {
        const std::int64_t k = round_iterations(total, rounds, r);
        EXPECT_GE(k, 1) << total << " in " << rounds;
        EXPECT_LE(k, total / rounds + 1) << total << " in " << rounds;
        sum += k;
      }
      EXPECT_EQ(sum, total) << total << " in " << rounds;
    }
  }
}

TEST(Timing, StatsOverRanksNameTheStragglerAndItsHost) {
  ScriptedComm control;  // one rank: the mean over ranks is its own time, and it is the slowest every time
  const IterationStats s = iteration_stats(control, {4, 2, 9}, 3, {"node-a"});
  EXPECT_EQ(s.per_iteration_us, (std::vector<double>{4, 2, 9}));
  EXPECT_DOUBLE_EQ(s.p50_us, 4);
  EXPECT_EQ(s.slowest_rank, 0);
  EXPECT_EQ(s.slowest_count, 3);
  EXPECT_EQ(s.slowest_host, "node-a");
  EXPECT_EQ(s.slowest_by_iteration, (std::vector<std::int64_t>{0, 0, 0}));
  EXPECT_EQ(iteration_stats(control, {}, 3, {"node-a"}).slowest_rank, -1);  // nobody ran
  const IterationStats idle = iteration_stats(control, {0, 0, 0}, 3, {"node-a"});  // nothing took time
  EXPECT_EQ(idle.slowest_rank, -1);
  EXPECT_EQ(idle.slowest_by_iteration, (std::vector<std::int64_t>{-1, -1, -1}));
  EXPECT_THROW((void)iteration_stats(control, {1, 2}, 3, {"node-a"}), Error);
}

TEST(Timing, HostsAreGatheredByRank) {
  ScriptedComm control;
  EXPECT_EQ(gather_hosts(control, "gpu-node-17", 0), (std::vector<std::string>{"gpu-node-17"}));
  EXPECT_EQ(gather_hosts(control, std::string(400, 'h'), 0).front().size(), 255U);
  expect_error([&] { (void)gather_hosts(control, "gpu-node-17", 3); }, ErrorKind::ValueError, {"rank 0 names node 3"});
}

// The node (MPI's shared-memory split) decides which ranks are one host; the names only name them.
TEST(Timing, HostsAreTheJobsNodesNamedByTheirLowestRank) {
  using Names = std::vector<std::string>;
  // Two containers that both answer "localhost": two hosts.
  EXPECT_EQ(host_labels({"localhost", "localhost", "localhost", "localhost"}, {0, 0, 2, 2}),
            (Names{"localhost#0", "localhost#0", "localhost#2", "localhost#2"}));
  // One node whose ranks report different names: one host, named by its lowest rank.
  EXPECT_EQ(host_labels({"a", "b"}, {0, 0}), (Names{"a", "a"}));
  // Distinct nodes with distinct names keep them; only the names two nodes share get their node.
  EXPECT_EQ(host_labels({"a", "b"}, {0, 1}), (Names{"a", "b"}));
  EXPECT_EQ(host_labels({"n1", "n1", "n2", "n1"}, {0, 0, 2, 3}), (Names{"n1#0", "n1#0", "n2", "n1#3"}));
  // Interleaved placement (mpirun --map-by node): ranks 0 and 2 on one node, 1 and 3 on the other.
  EXPECT_EQ(host_labels({"x", "y", "x", "y"}, {0, 1, 0, 1}), (Names{"x", "y", "x", "y"}));
  EXPECT_EQ(host_labels({}, {}), Names{});
  // A name that holds a '#' cannot pass for another node's label.
  EXPECT_EQ(host_labels({"a", "a", "a#1"}, {0, 1, 2}), (Names{"a#0", "a#1", "a#1#2"}));
  // The equations the nodes must satisfy, each named when violated.
  expect_error([] { (void)host_labels({"a", "a"}, {0}); }, ErrorKind::ValueError, {"2 host names for 1 nodes"});
  expect_error([] { (void)host_labels({"a", "a"}, {1, 1}); }, ErrorKind::ValueError,
               {"rank 0 names node 1: a node is named by its lowest rank, so 0 <= node <= rank"});
  expect_error([] { (void)host_labels({"a", "a", "a"}, {0, 0, 1}); }, ErrorKind::ValueError,
               {"rank 2 names node 1 but rank 1 names node 0"});
  expect_error([] { (void)host_labels({"a"}, {-1}); }, ErrorKind::ValueError, {"rank 0 names node -1"});
}

}  // namespace
}  // namespace meshloom::launcher
