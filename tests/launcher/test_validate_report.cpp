// validate without communication: the verdict on a request (the fastest plan, ties within the run's noise), the
// models' scores (right picks, time lost, step and plan errors, Spearman's rho, misses priced alike), the suites
// (bundled and from a file), the rounds' pooled timings and the drift check's summary.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "meshloom/error.hpp"
#include "run_exec.hpp"
#include "validate_drift.hpp"
#include "validate_report.hpp"
#include "validate_suite.hpp"

namespace meshloom::launcher {
namespace {

// A candidate of one communicating step measured `iterations` times around `t` (spread `spread`), predicted
// `fixed` / `calibrated` by two models.
CandidateMeasurement candidate(double t, double spread, double fixed, double calibrated) {
  CandidateMeasurement c;
  c.predicted_steps = {{fixed}, {calibrated}};
  c.predicted_total = {fixed, calibrated};
  c.measured_steps_us = {t};
  c.step_iterations_us = {{t - spread, t, t + spread, t - spread / 2, t + spread / 2}};
  c.verified = true;
  return c;
}

TEST(ValidateReport, MedianStandardErrorFromTheMedianAbsoluteDeviation) {
  // |x - 10| = 1, 0, 1, 0.5, 0.5 -> MAD 0.5; se = 1.2533 * 1.4826 * 0.5 / sqrt(5).
  EXPECT_NEAR(median_se({9, 10, 11, 9.5, 10.5}), 1.2533 * 1.4826 * 0.5 / std::sqrt(5.0), 1e-12);
  // One descheduled iteration counts as any iteration above the median: its size does not matter.
  EXPECT_NEAR(median_se({9, 10, 11, 9.5, 1000}), median_se({9, 10, 11, 9.5, 11}), 1e-12);
  EXPECT_EQ(median_se({5}), 0.0);
}

TEST(ValidateReport, TheFastestPlanAndTiesWithinTheNoise) {
  RequestMeasurement r;
  r.candidates = {candidate(100, 0, 1, 90), candidate(102, 0, 2, 110), candidate(150, 0, 2, 80)};
  r.pick = {0, 2};
  RequestVerdict v = judge(r);
  EXPECT_EQ(v.fastest, 0U);
  EXPECT_EQ(v.right, (std::vector<bool>{true, false}));
  EXPECT_EQ(v.exact, (std::vector<bool>{true, false}));
  // 102 is within 3% of 100: a pick of plan 1 is right, not exact.
  r.pick = {1, 1};
  v = judge(r);
  EXPECT_EQ(v.right, (std::vector<bool>{true, true}));
  EXPECT_EQ(v.exact, (std::vector<bool>{false, false}));
  // With noise: 120 against 100 ties when two standard errors of the difference exceed 20.
  const CandidateMeasurement quiet = candidate(100, 1, 0, 0);
  const CandidateMeasurement noisy = candidate(120, 40, 0, 0);
  EXPECT_FALSE(measured_tie(quiet, candidate(120, 1, 0, 0)));
  EXPECT_TRUE(measured_tie(quiet, noisy));
  // A candidate that failed verification is neither the fastest nor a right pick, however fast it ran.
  r.candidates = {candidate(100, 0, 1, 90), candidate(60, 0, 2, 110), candidate(150, 0, 2, 80)};
  r.candidates[1].verified = false;
  r.pick = {1, 0};
  v = judge(r);
  EXPECT_EQ(v.fastest, 0U);
  EXPECT_EQ(v.right, (std::vector<bool>{false, true}));
  EXPECT_EQ(v.exact, (std::vector<bool>{false, true}));
  // ... nor gains time by it: 60 against the fastest verified 100 loses 0, not -40%.
  EXPECT_EQ(time_lost(r, v, 0), 0.0);
  const std::vector<ModelScore> scores = score_models({"fixed", "calibrated"}, {false, true}, {r});
  EXPECT_EQ(scores[0].time_lost_mean, 0.0);
  EXPECT_EQ(scores[0].time_lost_max, 0.0);
  r.pick = {7, 0};
  EXPECT_THROW((void)judge(r), Error);
  EXPECT_THROW((void)judge(RequestMeasurement{}), Error);
}

TEST(ValidateReport, SpearmanWithAverageRanks) {
  EXPECT_DOUBLE_EQ(*spearman({1, 2, 3}, {10, 20, 30}), 1.0);
  EXPECT_DOUBLE_EQ(*spearman({1, 2, 3}, {30, 20, 10}), -1.0);
  // Ranks (1, 2.5, 2.5) against (1, 2, 3): rho = 0.5 / sqrt(0.5 * 2) ... computed by hand: sum d_a d_b = 1.5,
  // sum d_a^2 = 1.5, sum d_b^2 = 2 -> 1.5 / sqrt(3) = 0.8660.
  EXPECT_NEAR(*spearman({1, 5, 5}, {1, 2, 3}), 1.5 / std::sqrt(3.0), 1e-12);
  EXPECT_FALSE(spearman({1, 1, 1}, {1, 2, 3}));
  EXPECT_FALSE(spearman({1}, {1}));
}

TEST(ValidateReport, ScoresPerModel) {
  // Two requests. Request 0: fixed picks plan 1 (wrong), calibrated plan 0 (right). Request 1: both right.
  RequestMeasurement a;
  a.candidates = {candidate(100, 0, 2, 110), candidate(200, 0, 1, 150), candidate(300, 0, 3, 330)};
  a.pick = {1, 0};
  RequestMeasurement b;
  b.candidates = {candidate(50, 0, 1, 40), candidate(80, 0, 2, 100)};
  b.pick = {0, 0};
  const auto scores = score_models({"fixed", "calibrated"}, {false, true}, {a, b});
  ASSERT_EQ(scores.size(), 2U);
  EXPECT_EQ(scores[0].right, 1);
  EXPECT_EQ(scores[1].right, 2);
  EXPECT_EQ(scores[1].exact, 2);
  EXPECT_FALSE(scores[0].step_error);  // unitless
  // Calibrated errors: 0.1, 0.25, 0.1, 0.2, 0.25 -> median 0.2, p90 (5th of 5) 0.25.
  ASSERT_TRUE(scores[1].step_error);
  EXPECT_DOUBLE_EQ(scores[1].step_error->median, 0.2);
  EXPECT_DOUBLE_EQ(scores[1].step_error->p90, 0.25);
  EXPECT_EQ(scores[1].step_error->points, 5);
  // Time lost: fixed's pick ran 200 us where 100 was fastest (+100%) and 50 of 50 (0): mean 50%, max 100%.
  EXPECT_DOUBLE_EQ(scores[0].time_lost_mean, 0.5);
  EXPECT_DOUBLE_EQ(scores[0].time_lost_max, 1.0);
  EXPECT_DOUBLE_EQ(scores[1].time_lost_mean, 0.0);
  EXPECT_DOUBLE_EQ(scores[1].time_lost_max, 0.0);
  // Rank correlation over requests of 3 or more candidates: only request 0; fixed ranks (2,1,3) against (1,2,3).
  EXPECT_EQ(scores[0].correlated_requests, 1);
  EXPECT_DOUBLE_EQ(*scores[0].rank_correlation, 0.5);
  EXPECT_DOUBLE_EQ(*scores[1].rank_correlation, 1.0);
}

TEST(ValidateReport, TimeLostCountsATiesExcessAndNeverExceedsItsMax) {
  // A pick 2% slower than the fastest ties (right) and still loses its 2%.
  RequestMeasurement tie;
  tie.candidates = {candidate(100, 0, 1, 1), candidate(102, 0, 2, 2)};
  tie.pick = {1, 0};
  const auto scores = score_models({"fixed", "calibrated"}, {false, true}, {tie});
  EXPECT_EQ(scores[0].right, 1);
  EXPECT_EQ(scores[0].exact, 0);
  EXPECT_NEAR(scores[0].time_lost_mean, 0.02, 1e-12);
  EXPECT_NEAR(scores[0].time_lost_max, 0.02, 1e-12);
  // Three requests that each lose 10%: the sum 0.1 + 0.1 + 0.1 rounds above 0.3, yet the mean is not above the max.
  RequestMeasurement lose;
  lose.candidates = {candidate(10, 0, 1, 1), candidate(11, 0, 2, 2)};
  lose.pick = {1, 1};
  const auto three = score_models({"fixed", "calibrated"}, {false, true}, {lose, lose, lose});
  EXPECT_LE(three[0].time_lost_mean, three[0].time_lost_max);
  EXPECT_NEAR(three[0].time_lost_mean, 0.1, 1e-12);
  // A fastest plan that measured 0 (local steps only) gives no ratio: the request counts 0.
  RequestMeasurement local;
  local.candidates = {candidate(0, 0, 0, 0), candidate(5, 0, 1, 1)};
  local.pick = {1, 0};
  const auto none = score_models({"fixed", "calibrated"}, {false, true}, {local});
  EXPECT_EQ(none[0].time_lost_max, 0.0);
}

TEST(ValidateReport, MissesBetweenPlansPricedAlikeAreCounted) {
  // Request 0: both models price the two mirrors alike (fixed 2 and 2; calibrated 100.05 and 100, within 0.1%) and
  // pick the slower: two misses priced alike. Request 1: calibrated priced its wrong pick 10% under the fastest (a
  // price it got wrong, not counted); fixed right. Request 2: a tie is not a miss.
  RequestMeasurement mirrors;
  mirrors.candidates = {candidate(100, 0, 2, 100.05), candidate(130, 0, 2, 100)};
  mirrors.pick = {1, 1};
  RequestMeasurement wrong;
  wrong.candidates = {candidate(100, 0, 1, 110), candidate(150, 0, 2, 99)};
  wrong.pick = {0, 1};
  RequestMeasurement tie;
  tie.candidates = {candidate(100, 0, 1, 50), candidate(101, 0, 1, 50)};
  tie.pick = {1, 1};
  const auto scores = score_models({"fixed", "calibrated"}, {false, true}, {mirrors, wrong, tie});
  EXPECT_EQ(scores[0].requests - scores[0].right, 1);
  EXPECT_EQ(scores[0].misses_priced_alike, 1);
  EXPECT_EQ(scores[1].requests - scores[1].right, 2);
  EXPECT_EQ(scores[1].misses_priced_alike, 1);
  // Just outside the band (0.2% apart): a price, not a tie of prices.
  mirrors.candidates[0] = candidate(100, 0, 2, 100.2);
  EXPECT_EQ(score_models({"fixed", "calibrated"}, {false, true}, {mirrors})[1].misses_priced_alike, 0);
  // A price that is not finite (a shape the calibration never measured) is alike to nothing, itself included.
  for (const double bad : {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    mirrors.candidates[0] = candidate(100, 0, 2, bad);
    mirrors.candidates[1] = candidate(130, 0, 2, bad);
    EXPECT_EQ(score_models({"fixed", "calibrated"}, {false, true}, {mirrors})[1].misses_priced_alike, 0) << bad;
  }
}

// A step run in three rounds is one measurement of all their iterations: medians over every iteration, the
// collective's statistics over every iteration in round order, and the rank slowest in the most iterations.
TEST(ValidateRounds, PooledTimingsAreOneMeasurementOfEveryIteration) {
  const std::vector<std::string> hosts = {"host0", "host1"};
  // A round as execute_plan gives it: the rank slowest in each iteration, and the round's own straggler.
  const auto round = [&hosts](std::vector<double> step_s, std::vector<double> collective_us,
                              std::vector<std::int64_t> slowest) {
    StepTiming t;
    t.iteration_s = std::move(step_s);
    t.collective_stats = summarize(collective_us);
    t.collective_stats.per_iteration_us = collective_us;
    for (const double us : collective_us) t.collective_iteration_s.push_back(1e-6 * us);
    t.collective_stats.slowest_by_iteration = std::move(slowest);
    name_straggler(t.collective_stats, hosts);
    return t;
  };
  const StepTiming pooled = pool_rounds(
      {round({3e-6, 1e-6}, {10, 30}, {1, 1}), round({2e-6, 9e-6}, {20, 90}, {0, -1}), round({4e-6}, {40}, {0})}, hosts);
  EXPECT_EQ(pooled.collective_stats.per_iteration_us, (std::vector<double>{10, 30, 20, 90, 40}));
  EXPECT_EQ(pooled.collective_stats.iterations, 5);
  EXPECT_DOUBLE_EQ(pooled.collective_stats.p50_us, 30);
  EXPECT_DOUBLE_EQ(pooled.collective_median_s, 30e-6);
  EXPECT_DOUBLE_EQ(pooled.collective_stats.max_us, 90);
  EXPECT_EQ(pooled.collective_iteration_s.size(), 5U);
  EXPECT_DOUBLE_EQ(pooled.collective_iteration_s[3], 90e-6);
  EXPECT_DOUBLE_EQ(pooled.median_s, 3e-6);  // 1, 2, 3, 4, 9 us
  // Rank 1 was slowest in 2 iterations, rank 0 in 1 + 1 (nobody in the one that took no time): a tie goes to the
  // lower rank.
  EXPECT_EQ(pooled.collective_stats.slowest_by_iteration, (std::vector<std::int64_t>{1, 1, 0, -1, 0}));
  EXPECT_EQ(pooled.collective_stats.slowest_rank, 0);
  EXPECT_EQ(pooled.collective_stats.slowest_count, 2);
  EXPECT_EQ(pooled.collective_stats.slowest_host, "host0");
  // The straggler of all the iterations, not of the rounds' stragglers: rank 0 is its rounds' straggler in two of
  // three (2 + 2 iterations), rank 1 the slowest in 5 of the 9.
  const std::vector<double> us = {1, 2, 3};
  const StepTiming three = pool_rounds(
      {round(us, us, {0, 0, 1}), round(us, us, {0, 1, 0}), round(us, us, {1, 1, 1})}, hosts);
  EXPECT_EQ(three.collective_stats.slowest_rank, 1);
  EXPECT_EQ(three.collective_stats.slowest_count, 5);
  EXPECT_EQ(three.collective_stats.slowest_host, "host1");
  // One round is itself.
  const StepTiming one = pool_rounds({round({5e-6, 7e-6, 6e-6}, {1, 3, 2}, {1, 1, 0})}, hosts);
  EXPECT_DOUBLE_EQ(one.collective_stats.p50_us, 2);
  EXPECT_DOUBLE_EQ(one.median_s, 6e-6);
  EXPECT_EQ(one.collective_stats.slowest_rank, 1);
  EXPECT_EQ(one.collective_stats.slowest_count, 2);
  EXPECT_THROW((void)pool_rounds({}, hosts), Error);
}

// The drift check's anchors: three of the calibration's distinct sizes (at a quarter, half and three quarters of
// them), and the summary's median, range and verdict at the warning's edges.
TEST(ValidateDrift, AnchorSizesAndTheSummary) {
  Calibration c;
  GroupCurve g;
  g.collective = "all_gather";
  g.shape = {2, 1, 2};
  for (double b = 1024; b <= 64.0 * 1024 * 1024; b *= 2) g.points.push_back({b, b / 1000});  // 17 sizes
  c.groups.push_back(g);
  EXPECT_EQ(drift_sizes(c), (std::vector<std::int64_t>{16384, 262144, 4194304}));
  g.collective = "all_reduce";
  g.points = {{512, 1}, {1024, 2}};  // sizes of another curve join the distinct sizes: 512, 1K .. 64M (18)
  c.groups.push_back(g);
  EXPECT_EQ(drift_sizes(c), (std::vector<std::int64_t>{8192, 262144, 4194304}));
  EXPECT_TRUE(drift_sizes(Calibration{}).empty());

  const auto anchor = [](double calibrated, double measured) {
    DriftAnchor a;
    a.collective = "all_gather";
    a.shape = {2, 1, 2};
    a.bytes = 16384;
    a.calibrated_us = calibrated;
    a.measured_us = measured;
    return a;
  };
  const DriftCheck slow = summarize_drift("before", {anchor(10, 17), anchor(10, 21), anchor(10, 9.3)});
  EXPECT_DOUBLE_EQ(slow.median_ratio, 1.7);
  EXPECT_DOUBLE_EQ(slow.min_ratio, 0.93);
  EXPECT_DOUBLE_EQ(slow.max_ratio, 2.1);
  EXPECT_TRUE(slow.drifted());
  EXPECT_EQ(drift_line(slow), "drift before the requests: the calibration's points re-timed measure 1.70x (3 anchors, "
                              "0.93x to 2.10x): the machine is slower than when it was calibrated");
  const DriftCheck same = summarize_drift("after", {anchor(10, 11.4), anchor(10, 10 / 1.14)});
  EXPECT_FALSE(same.drifted());
  EXPECT_EQ(drift_line(same), "drift after the requests: the calibration's points re-timed measure 1.01x (2 anchors, "
                              "0.88x to 1.14x)");
  EXPECT_TRUE(summarize_drift("after", {anchor(10, 8.6)}).drifted());  // 1 / 0.86 > 1.15: faster
  EXPECT_NE(drift_line(summarize_drift("after", {anchor(10, 8.6)})).find("faster"), std::string::npos);
  EXPECT_FALSE(summarize_drift("before", {}).drifted());
  const nlohmann::ordered_json j = drift_json(slow);
  EXPECT_EQ(j["type"], "drift");
  EXPECT_EQ(j["anchors"].size(), 3U);
  EXPECT_DOUBLE_EQ(j["anchors"][0]["ratio"].get<double>(), 1.7);
  EXPECT_EQ(j["anchors"][0]["ranks_per_host"], 2);
  EXPECT_TRUE(j["drifted"].get<bool>());
}

TEST(ValidateSuite, TheBundledSuiteForEachWorld) {
  const auto two = default_suite(2);
  ASSERT_EQ(two.size(), 20U);  // 4 transitions x 5 tensors on (2)
  EXPECT_EQ(two.front().label, "(2) 16x32 S(0) -> S(1)");
  EXPECT_EQ(two.front().setup.request.itemsize, 8);
  EXPECT_EQ(two.back().label, "(2) 2048x4096 P(sum) -> S(0)");
  const auto four = default_suite(4);
  ASSERT_EQ(four.size(), 30U);  // 4 transitions and 2 on the flattened group x 5 tensors on (2,2)
  EXPECT_EQ(four.front().setup.request.mesh_shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_TRUE(four.front().setup.request.flattened.empty());
  EXPECT_EQ(four.back().label, "(2,2) 2048x4096 P(sum)P(sum) -> RR, axes 0 and 1 flattened");
  EXPECT_EQ(four.back().setup.request.flattened, (std::vector<std::vector<std::size_t>>{{0, 1}}));
  EXPECT_EQ(default_suite(8).size(), 50U);  // (2,4) with its flattened group, and (2,2,2)
  EXPECT_EQ(default_suite(16).size(), 30U);
  EXPECT_EQ(default_suite(6).front().setup.request.mesh_shape, (std::vector<std::int64_t>{6}));
  // 4 KiB to 64 MiB of float64.
  EXPECT_EQ(16 * 32 * 8, 4096);
  EXPECT_EQ(2048 * 4096 * 8, 64 << 20);
  try {
    (void)default_suite(1);
    ADD_FAILURE() << "a world of one rank has no suite";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "ValueError: validate needs a world of at least 2 ranks (it has 1): a redistribution moves data between ranks");
  }
}

TEST(ValidateSuite, FilesInPlanBatchFormNamingTheLine) {
  const auto suite = parse_suite("# a comment\n\n{\"mesh\": [2, 2], \"tensor_shape\": [8, 8], \"src\": \"S(0)R\", "
                                 "\"dst\": \"RS(0)\", \"names\": [\"dp\", \"tp\"]}\n",
                                 "s.jsonl", 4);
  ASSERT_EQ(suite.size(), 1U);
  EXPECT_EQ(suite[0].label, "(2,2) 8x8 S(0)R -> RS(0)");
  EXPECT_EQ(suite[0].setup.names, (std::vector<std::string>{"dp", "tp"}));
  EXPECT_EQ(suite[0].setup.request.itemsize, 8);
  const auto error_of = [](const std::string& text, std::int64_t world = 4) {
    try {
      (void)parse_suite(text, "s.jsonl", world);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of("{\"mesh\": [4, 2], \"tensor_shape\": [8], \"src\": \"RR\", \"dst\": \"RR\"}\n"),
            "ValueError: \"s.jsonl\" line 1: mesh (4,2) needs 8 ranks but the MPI world has 4");
  EXPECT_EQ(error_of("{\"mesh\": [2], \"tensor_shape\": [8], \"src\": \"R\", \"dst\": \"R\", \"cost_model\": \"fixed\"}\n"),
            "ValueError: \"s.jsonl\" line 1: field \"cost_model\": validate prices every request with every model; a "
            "suite names requests only");
  EXPECT_TRUE(error_of("\n{\"mesh\": [2], \"tensor_shape\": [8], \"src\": \"X\", \"dst\": \"R\"}\n")
                  .starts_with("ValueError: \"s.jsonl\" line 2: src = \"X\": cannot parse state"));
  EXPECT_EQ(error_of("# nothing\n"), "ValueError: \"s.jsonl\": no request (one JSON object per line)");
  EXPECT_EQ(error_of("{\"mesh\": [2], \"tensor_shape\": [8], \"src\": \"R\", \"dst\": \"R\", \"itemsize\": 4}\n"),
            "ValueError: \"s.jsonl\" line 1: itemsize = 4: validate moves float64 (itemsize 8), and the models must "
            "price what moves");
  EXPECT_EQ(error_of("{\"mesh\": [2], \"tensor_shape\": [8], \"src\": \"S(0)\", \"dst\": \"R\", \"planner\": \"greedy\"}\n"),
            "ValueError: \"s.jsonl\" line 1: planner = \"greedy\": validate runs the graph planner's k cheapest plans "
            "of every model");
  EXPECT_EQ(parse_suite("{\"mesh\": [2], \"tensor_shape\": [8], \"src\": \"S(0)\", \"dst\": \"R\", \"planner\": \"graph\"}\n",
                        "s.jsonl", 2)
                .size(),
            1U);
}

}  // namespace
}  // namespace meshloom::launcher
