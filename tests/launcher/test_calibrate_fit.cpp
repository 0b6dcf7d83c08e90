// calibrate without communication: the weighted alpha-beta fit on synthetic timings, reading bench JSON Lines,
// and the calibration it gives (accepted by parse_calibration and priced by CalibratedCostModel).
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench_format.hpp"
#include "bench_io.hpp"
#include "calibrate_fit.hpp"
#include "calibrate_io.hpp"
#include "meshloom/error.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "support/expect_error.hpp"

namespace meshloom::launcher {
namespace {

std::vector<FitSample> synthetic(double alpha, double busbw, double factor, double noise, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  std::vector<FitSample> samples;
  for (double bytes = 8; bytes <= 64.0 * 1024 * 1024; bytes *= 2) {
    const double t = alpha + factor * bytes / (busbw * 1e3);
    samples.push_back({bytes, t * (1.0 + noise * z(rng))});
  }
  return samples;
}

double rel(double a, double b) { return std::abs(a - b) / std::abs(b); }

TEST(CalibrateFit, RecoversAlphaAndBandwidthExactlyOnNoiseFreeData) {
  for (const double factor : {1.0, 0.5, 1.5, 0.875}) {
    for (const auto& [alpha, busbw] : std::vector<std::pair<double, double>>{{12.0, 3.1}, {0.6, 370.0}, {150.0, 0.05}}) {
      const auto fit = fit_alpha_beta(synthetic(alpha, busbw, factor, 0.0, 1), factor);
      ASSERT_TRUE(fit.ok) << fit.why;
      EXPECT_EQ(fit.kind, AlphaBetaFit::Kind::Full);
      EXPECT_LT(rel(fit.alpha_us, alpha), 1e-9) << alpha << " " << busbw;
      EXPECT_LT(rel(fit.busbw_gbps, busbw), 1e-9) << alpha << " " << busbw;
      EXPECT_GT(fit.r2, 1 - 1e-12);
      EXPECT_EQ(fit.samples, 24);
    }
  }
}

TEST(CalibrateFit, IsSensibleOnNoisyData) {
  // 5 % multiplicative noise: both parameters within a few percent, r2 high.
  const auto fit = fit_alpha_beta(synthetic(20.0, 5.0, 1.5, 0.05, 7), 1.5);
  ASSERT_TRUE(fit.ok);
  EXPECT_LT(rel(fit.alpha_us, 20.0), 0.05);
  EXPECT_LT(rel(fit.busbw_gbps, 5.0), 0.05);
  EXPECT_GT(fit.r2, 0.95);
  EXPECT_LE(fit.r2, 1.0);
}

TEST(CalibrateFit, ClampsANegativeAlpha) {
  // Times that extrapolate below zero at size 0: alpha is clamped to 0 and the bandwidth refitted.
  std::vector<FitSample> s{{1000, 1.0}, {2000, 3.0}, {4000, 7.0}};
  const auto fit = fit_alpha_beta(s, 1.0);
  ASSERT_TRUE(fit.ok);
  EXPECT_EQ(fit.kind, AlphaBetaFit::Kind::AlphaClamped);
  EXPECT_EQ(fit.alpha_us, 0.0);
  EXPECT_GT(fit.busbw_gbps, 0.0);
  EXPECT_LE(fit.r2, 1.0);
}

TEST(CalibrateFit, DegenerateCases) {
  // One size: the bandwidth alone, through the origin.
  const auto one = fit_alpha_beta({{1e6, 100.0}, {1e6, 100.0}}, 1.0);
  ASSERT_TRUE(one.ok);
  EXPECT_EQ(one.kind, AlphaBetaFit::Kind::BandwidthOnly);
  EXPECT_EQ(one.alpha_us, 0.0);
  EXPECT_NEAR(one.busbw_gbps, 10.0, 1e-12);  // 1e6 bytes in 100 us = 10 GB/s
  // Time that falls with size: no bandwidth.
  const auto flat = fit_alpha_beta({{8, 30.0}, {16, 20.0}, {32, 10.0}}, 1.0);
  EXPECT_FALSE(flat.ok);
  EXPECT_NE(flat.why.find("does not grow"), std::string::npos);
  // Nothing usable.
  EXPECT_FALSE(fit_alpha_beta({}, 1.0).ok);
  EXPECT_FALSE(fit_alpha_beta({{8, 0.0}, {16, -1.0}}, 1.0).ok);
  // A group of one rank.
  EXPECT_FALSE(fit_alpha_beta({{8, 1.0}, {16, 2.0}}, 0.0).ok);
}

std::string bench_jsonl(double alpha, double busbw) {
  BenchRunInfo info;
  info.world = 4;
  info.mesh_shape = {2, 2};
  info.mesh_names = {"dp", "tp"};
  std::string text = config_record(info) + "\n";
  for (const auto c : {BenchCollective::AllReduce, BenchCollective::AllGather}) {
    for (std::int64_t size = 8; size <= 4096; size *= 2) {
      BenchResult r;
      r.axis = "tp";
      r.group_size = 2;
      r.groups = 2;
      r.collective = c;
      const auto counts = size_counts(c, size, 4, 2);
      r.bytes = counts.bytes;
      r.count = counts.count;
      r.time_us = alpha + bus_factor(to_string(c), 2) * static_cast<double>(r.bytes) / (busbw * 1e3);
      r.algbw_gbps = algbw_gbps(r.bytes, r.time_us);
      r.busbw_gbps = busbw_gbps(c, r.algbw_gbps, 2);
      r.checked = true;
      text += result_record(r) + "\n";
    }
  }
  return text + summary_record(true, 20, 0, 0.1, 1.0) + "\n";
}

TEST(CalibrateIo, FitsABenchRunIntoAValidCalibration) {
  const BenchSweep sweep = parse_bench_jsonl(bench_jsonl(25.0, 2.5), "run.jsonl");
  EXPECT_EQ(sweep.results.size(), 20U);
  const CalibrationReport report = calibrate_sweep(sweep);
  ASSERT_EQ(report.rows.size(), 2U);
  const auto& fit = report.calibration.axes.at("tp").at("all_reduce");
  EXPECT_LT(rel(fit.alpha_us, 25.0), 1e-9);
  EXPECT_LT(rel(fit.busbw_gbps, 2.5), 1e-9);
  EXPECT_EQ(fit.samples, 10);

  // The file round-trips through the engine's strict parser, and the calibrated model prices a step with it.
  const std::string text = to_json_text(report.calibration);
  const Calibration parsed = parse_calibration(text);
  EXPECT_EQ(parsed, report.calibration);
  const CalibratedCostModel model(parsed, {"dp", "tp"});
  const std::vector<std::int64_t> shape{2, 2};
  StepCostInput step;
  step.collective = Collective::AllReduce;
  step.axis = 1;
  step.mesh_shape = &shape;
  step.local_bytes = 4096;
  EXPECT_NEAR(model.step_cost(step), 25.0 + 1.0 * 4096 / 2.5e3, 1e-6);
  step.axis = 0;  // dp was not calibrated
  EXPECT_TRUE(std::isinf(model.step_cost(step)));

  // Noise-free data: the fit of every other size predicts the rest exactly.
  ASSERT_TRUE(report.rows[0].holdout);
  EXPECT_LT(report.rows[0].holdout->p90, 1e-9);
  EXPECT_EQ(report.rows[0].holdout->points, 4);  // of 10 sizes, 1, 3, 5 and 7 held out
  const std::string table = fit_table(report);
  EXPECT_NE(table.find("all_reduce"), std::string::npos);
  EXPECT_NE(table.find("alpha+beta"), std::string::npos);
  EXPECT_NE(table.find("held out med/p90"), std::string::npos) << table;
  EXPECT_NE(table.find("0.0% / 0.0%  alpha+beta"), std::string::npos) << table;
}

// A per-axis fit's held-out error: its samples as one point per size (the median), alpha-beta fitted on every other
// size and the largest, asked for the rest. t = 5 + bytes / 1000 (factor 1, 1 GB/s) at 1, 4 and 8 KB; at 2 KB the
// line says 7 us and the samples' median is 14 us: |7 - 14| / 14 = 50%.
TEST(CalibrateFit, HeldOutErrorOfAPerAxisFit) {
  const std::vector<FitSample> samples{{1000, 6}, {2000, 14}, {2000, 14}, {2000, 100}, {4000, 9}, {8000, 13}};
  const auto held = alpha_beta_holdout(samples, 1.0);
  ASSERT_TRUE(held);
  EXPECT_NEAR(held->median, 0.5, 1e-9);
  EXPECT_NEAR(held->p90, 0.5, 1e-9);
  EXPECT_EQ(held->points, 1);
  // Below 3 sizes nothing is left to ask.
  EXPECT_FALSE(alpha_beta_holdout({{1000, 6}, {2000, 7}, {2000, 7}}, 1.0));
}

TEST(CalibrateIo, RejectsBadFilesNamingTheLine) {
  auto error_of = [](const std::string& text) {
    try {
      (void)parse_bench_jsonl(text, "x.jsonl");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error_of(""), "ValueError: \"x.jsonl\": no config record (is it the --jsonl file of meshloom-launch bench?)");
  EXPECT_EQ(error_of("not json\n"), "ValueError: \"x.jsonl\" line 1: not a JSON object");
  std::string text = bench_jsonl(1, 1);
  const auto pos = text.find("\"time_us\":");
  text.replace(pos, 10, "\"time_us\":\"x\",\"old\":");
  EXPECT_EQ(error_of(text).rfind("ValueError: \"x.jsonl\" line 2: field \"time_us\" = \"x\": expected a number", 0), 0U);
  // The config's hosts: a list of strings, every rank's.
  for (const std::string bad : {"\"hosts\":5", "\"hosts\":[\"a\",7]"}) {
    std::string hosts = bench_jsonl(1, 1);
    const auto at = hosts.find("\"hosts\":[");
    ASSERT_NE(at, std::string::npos) << hosts;
    hosts.replace(at, hosts.find(']', at) + 1 - at, bad);
    EXPECT_NE(error_of(hosts).find("line 1: field \"hosts\" = "), std::string::npos) << error_of(hosts);
    EXPECT_NE(error_of(hosts).find(": expected a list of hosts (strings)"), std::string::npos) << error_of(hosts);
  }
  // Records no bench run could write: refused before anything is fitted, naming the line and the value.
  const auto edited = [](const std::string& from, const std::string& to) {
    std::string t = bench_jsonl(1, 1);
    const auto at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? t : t.replace(at, from.size(), to);
  };
  EXPECT_EQ(error_of(edited("\"axis\":\"tp\"", "\"axis\":\"zz\"")),
            "ValueError: \"x.jsonl\" line 2: field \"axis\" = \"zz\": not an axis or flattened axis of the config's mesh");
  EXPECT_EQ(error_of(edited("\"group_size\":2", "\"group_size\":64")),
            "ValueError: \"x.jsonl\" line 2: field \"group_size\" = 64: must be in 1..world = 4");
  // A group size or span other than the config's mesh and hosts give the axis (the shape its curve is keyed by).
  EXPECT_EQ(error_of(edited("\"group_size\":2", "\"group_size\":4")),
            "ValueError: \"x.jsonl\" line 2: field \"group_size\" = 4: axis \"tp\" of the config's mesh has 2 ranks");
  EXPECT_EQ(error_of(edited("\"backend\":\"mpi\"", "\"backend\":\"gloo\"")),
            "ValueError: \"x.jsonl\" line 1: field \"backend\" = \"gloo\": expected \"mpi\" or \"nccl\"");
  EXPECT_EQ(error_of(edited("\"command\":\"bench\"", "\"command\":\"validate\"")),
            "ValueError: \"x.jsonl\" line 1: field \"command\" = \"validate\": these are validate's records, and "
            "calibrate --from reads the records of meshloom-launch bench or calibrate --jsonl");
  EXPECT_EQ(error_of(edited("\"world\":4", "\"world\":0")),
            "ValueError: \"x.jsonl\" line 1: field \"world\" = 0: must be >= 1");
  std::string negative = bench_jsonl(1, 1);
  const auto t = negative.find("\"time_us\":");
  negative.replace(t, 10, "\"time_us\":-12.0,\"old\":");
  EXPECT_EQ(error_of(negative), "ValueError: \"x.jsonl\" line 2: field \"time_us\" = -12.0: expected a finite time >= 0");
  EXPECT_THROW((void)calibrate_sweep(parse_bench_jsonl(bench_jsonl(1, 1).substr(0, bench_jsonl(1, 1).find('\n') + 1),
                                                       "c.jsonl")),
               Error);
}

// The engine's JSON policy (json_read.hpp) on every line: an integer beyond int64 is refused, never wrapped to a
// negative count, and so is a duplicate key (never "the last one wins"); each error names the key or value and the
// line.
TEST(CalibrateIo, RefusesOutOfRangeIntegersAndDuplicateKeysNamingTheLine) {
  auto error_of = [](const std::string& text) {
    try {
      (void)parse_bench_jsonl(text, "x.jsonl");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string good = bench_jsonl(1, 1);
  const auto replaced = [&](const std::string& from, const std::string& to, std::size_t nth = 0) {
    std::string text = good;
    std::size_t pos = text.find(from);
    for (std::size_t i = 0; i < nth; ++i) pos = text.find(from, pos + 1);
    EXPECT_NE(pos, std::string::npos) << from;
    return text.replace(pos, from.size(), to);
  };
  ASSERT_NE(good.find("\"bytes\":8,"), std::string::npos) << good;
  EXPECT_EQ(error_of(replaced("\"bytes\":8,", "\"bytes\":18446744073709551615,")),
            "ValueError: \"x.jsonl\" line 2: field \"bytes\" = 18446744073709551615: out of range for a 64-bit "
            "integer");
  EXPECT_EQ(error_of(replaced("\"wrong\":0", "\"wrong\":9223372036854775808", 1)),
            "ValueError: \"x.jsonl\" line 3: field \"wrong\" = 9223372036854775808: out of range for a 64-bit "
            "integer");
  EXPECT_EQ(error_of(replaced("\"world\":4", "\"world\":-9223372036854775809")),
            "ValueError: \"x.jsonl\" line 1: field \"world\" = -9.223372036854776e+18: out of range for a 64-bit "
            "integer");
  EXPECT_EQ(error_of(replaced("\"shape\":[2,2]", "\"shape\":[2,18446744073709551616]")),
            "ValueError: \"x.jsonl\" line 1: field \"mesh.shape[1]\" = 1.8446744073709552e+19: out of range for a "
            "64-bit integer");
  // The largest int64 is still an integer.
  EXPECT_EQ(error_of(replaced("\"wrong\":0", "\"wrong\":9223372036854775807")), "no error");
  EXPECT_EQ(error_of(replaced("\"time_us\":", "\"time_us\":1,\"time_us\":", 2)),
            "ValueError: \"x.jsonl\" line 4: time_us: duplicate key \"time_us\"");
  EXPECT_EQ(error_of(replaced("\"shape\":[2,2]", "\"shape\":[2,2],\"shape\":[4]")),
            "ValueError: \"x.jsonl\" line 1: mesh.shape: duplicate key \"shape\"");
}

TEST(CalibrateIo, LeavesOutRowsWithWrongElementsAndNotesErrors) {
  std::string text = bench_jsonl(10, 1);
  const auto pos = text.find("\"wrong\":0");
  text.replace(pos, 9, "\"wrong\":3");
  text += "{\"type\":\"error\",\"rank\":2,\"message\":\"TimeoutError: x\"}\n";
  const CalibrationReport report = calibrate_sweep(parse_bench_jsonl(text, "x.jsonl"));
  EXPECT_EQ(report.calibration.axes.at("tp").at("all_reduce").samples, 9);
  ASSERT_EQ(report.notes.size(), 3U);
  EXPECT_NE(report.notes[0].find("rank 2: TimeoutError: x"), std::string::npos);
  EXPECT_NE(report.notes[1].find("1 result(s) with wrong elements"), std::string::npos);
  EXPECT_NE(report.notes[2].find("does not record its ranks' hosts"), std::string::npos);
}

// ---- curves by group shape ------------------------------------------------------------------------------------

TEST(CurveFit, ErrorSummaryIsTheMedianAndTheNearestRankP90) {
  const auto e = error_summary({1.0, 0.1, 0.9, 0.2, 0.8, 0.3, 0.7, 0.4, 0.6, 0.5});
  ASSERT_TRUE(e);
  EXPECT_DOUBLE_EQ(e->median, 0.55);
  EXPECT_DOUBLE_EQ(e->p90, 0.9);  // the ceil(0.9 * 10) = 9th smallest
  EXPECT_EQ(e->points, 10);
  EXPECT_DOUBLE_EQ(error_summary({0.25})->p90, 0.25);
  EXPECT_FALSE(error_summary({}));
}

TEST(CurveFit, AlphaBetaWhereItFitsWithAHeldOutErrorOfZero) {
  const CurveFitReport r = fit_group_curve("all_reduce", {4, 1, 4}, synthetic(20.0, 4.0, 1.5, 0.0, 1));
  EXPECT_EQ(r.curve.model, CurveModel::AlphaBeta);
  ASSERT_TRUE(r.curve.fit);
  EXPECT_LT(rel(r.curve.fit->alpha_us, 20.0), 1e-9);
  EXPECT_LT(r.alpha_beta_max_residual, 1e-9);
  ASSERT_TRUE(r.curve.holdout);
  EXPECT_LT(r.curve.holdout->p90, 1e-9);
  // 24 sizes 8 B .. 64 MiB: 12 fitted (the even ones, and the largest), 11 held out.
  EXPECT_EQ(r.curve.points.size(), 24U);
  EXPECT_EQ(r.curve.holdout->points, 11);
  EXPECT_EQ(r.curve.holdout, r.alpha_beta_holdout);
}

TEST(CurveFit, PiecewiseWhereTheResidualsSayAlphaBetaDoesNot) {
  // A latency ramp: flat to 4 KiB, then a protocol switch doubling the time, then bandwidth-bound.
  std::vector<FitSample> samples;
  for (double bytes = 256; bytes <= 16.0 * 1024 * 1024; bytes *= 2) {
    const double t = bytes <= 4096 ? 10.0 : bytes <= 65536 ? 20.0 + bytes / 8e3 : 20.0 + bytes / 2e3;
    samples.push_back({bytes, t});
  }
  const CurveFitReport r = fit_group_curve("all_gather", {2, 1, 2}, samples);
  ASSERT_TRUE(r.alpha_beta.ok);
  EXPECT_GT(r.alpha_beta_max_residual, kAlphaBetaTolerance);
  EXPECT_EQ(r.curve.model, CurveModel::Piecewise);
  ASSERT_TRUE(r.piecewise_holdout && r.alpha_beta_holdout);
  EXPECT_LT(r.piecewise_holdout->median, r.alpha_beta_holdout->median);
  EXPECT_EQ(r.curve.holdout, r.piecewise_holdout);
  // Every point is on the curve.
  for (const auto& p : r.curve.points) EXPECT_DOUBLE_EQ(curve_time_us(r.curve, p.bytes), p.time_us);
}

TEST(CurveFit, SamplesOfOneSizeAreMergedByTheirMedian) {
  const CurveFitReport r = fit_group_curve("all_reduce", {2, 1, 2}, {{1024, 10}, {1024, 30}, {1024, 11}, {4096, 20}, {0, 5}});
  ASSERT_EQ(r.curve.points.size(), 2U);  // 0 bytes is no point
  EXPECT_EQ(r.curve.points[0], (CurvePoint{1024, 11}));
  EXPECT_FALSE(r.curve.holdout);  // fewer than 3 sizes
  EXPECT_THROW((void)fit_group_curve("all_reduce", {2, 1, 2}, {{1024, 0}}), Error);
  // One size: no latency to fit, so the curve keeps its floor (piecewise), not a line through the origin.
  const CurveFitReport one = fit_group_curve("all_reduce", {2, 1, 2}, {{1024, 10}});
  EXPECT_EQ(one.curve.model, CurveModel::Piecewise);
  EXPECT_EQ(curve_time_us(one.curve, 8), 10.0);
}

// A bench run on two hosts of two ranks: tp's groups stay on one host, dp's cross both.
std::string two_host_jsonl(bool uniform = true) {
  BenchRunInfo info;
  info.world = 4;
  info.mesh_shape = {2, 2};
  info.mesh_names = {"dp", "tp"};
  // Uniform: dp's groups {0, 2} and {1, 3} each cross hosts a and b, tp's sit on one. Not: on hosts a, b, a, c dp's
  // group {0, 2} sits on a and {1, 3} crosses b and c, while both of tp's cross two hosts.
  info.hosts = uniform ? std::vector<std::string>{"a", "a", "b", "b"} : std::vector<std::string>{"a", "b", "a", "c"};
  std::string text = config_record(info) + "\n";
  for (const char* axis : {"dp", "tp"}) {
    const bool dp = std::string(axis) == "dp";
    for (std::int64_t size = 1024; size <= 1 << 20; size *= 4) {
      BenchResult r;
      r.axis = axis;
      r.group_size = 2;
      r.groups = 2;
      r.span = uniform ? (dp ? GroupSpan{2, 1, true} : GroupSpan{1, 2, true})
                       : (dp ? GroupSpan{2, 2, false} : GroupSpan{2, 1, true});
      r.collective = BenchCollective::AllReduce;
      r.bytes = size;
      r.count = size / 4;
      r.time_us = (dp ? 50.0 : 5.0) + static_cast<double>(size) / (dp ? 1e3 : 1e4);
      text += result_record(r) + "\n";
    }
  }
  return text + summary_record(true, 12, 0, 0.1, 1.0) + "\n";
}

TEST(CalibrateIo, CurvesByGroupShapeFromTheRunsHosts) {
  const CalibrationReport report = calibrate_sweep(parse_bench_jsonl(two_host_jsonl(), "run.jsonl"));
  const Calibration& c = report.calibration;
  EXPECT_EQ(c.rank_hosts, (std::vector<std::int64_t>{0, 0, 1, 1}));
  ASSERT_EQ(c.groups.size(), 2U);
  EXPECT_EQ(c.groups[0].shape, (GroupShape{2, 1, 2}));  // sorted by (collective, shape)
  EXPECT_EQ(c.groups[1].shape, (GroupShape{2, 2, 1}));
  EXPECT_EQ(parse_calibration(to_json_text(c)), c);
  // Priced by shape: (2,2)'s dp crosses hosts (50 us + ...), a (2) mesh on ranks 0, 1 does not (5 us + ...).
  const CalibratedCostModel model(c, {});
  const std::vector<std::int64_t> square{2, 2}, line{2};
  StepCostInput step;
  step.collective = Collective::AllReduce;
  step.local_bytes = 4096;
  step.mesh_shape = &square;
  step.axis = 0;
  EXPECT_NEAR(model.step_cost(step), 50.0 + 4096 / 1e3, 1e-6);
  step.mesh_shape = &line;
  EXPECT_NEAR(model.step_cost(step), 5.0 + 4096 / 1e4, 1e-6);
  const std::string table = fit_table(report);
  EXPECT_NE(table.find("# Curves by group shape"), std::string::npos) << table;
}

TEST(CalibrateIo, ASpanOtherThanTheConfigsHostsGiveIsRefusedNamingTheLine) {
  // The span a curve is keyed by is the one the job's hosts give the axis: a record that says otherwise is refused.
  std::string span = two_host_jsonl();
  const auto first_span = span.find("\"span\":{\"hosts\":2,");
  ASSERT_NE(first_span, std::string::npos) << span;
  span.replace(first_span, 18, "\"span\":{\"hosts\":1,");
  const std::string error = meshloom::testing::error_of([&] { (void)parse_bench_jsonl(span, "x.jsonl"); });
  EXPECT_EQ(error.rfind("ValueError: \"x.jsonl\" line 2: field \"span\" = {\"hosts\":1,\"ranks_per_host\":1,", 0), 0U)
      << error;
  EXPECT_NE(error.find(": the config's hosts place axis \"dp\"'s groups on 2 hosts with at most 1 per host"),
            std::string::npos)
      << error;
}

TEST(CalibrateIo, FlattenedAxesAreRebuiltInTheConfigsOrder) {
  // bench --flatten b,c:z --flatten a,z:y: y is made of z, so z is flattened first (the names' order is not that).
  BenchRunInfo info;
  info.world = 8;
  info.mesh_shape = {2, 2, 2};
  info.mesh_names = {"a", "b", "c"};
  info.flattened = {{.name = "z", .axes = {"b", "c"}}, {.name = "y", .axes = {"a", "z"}}};
  BenchResult r;
  r.axis = "y";
  r.group_size = 8;
  r.groups = 1;
  r.collective = BenchCollective::AllReduce;
  r.bytes = 1024;
  r.count = 256;
  r.time_us = 10.0;
  const std::string text = config_record(info) + "\n" + result_record(r) + "\n";
  const BenchSweep sweep = parse_bench_jsonl(text, "y.jsonl");
  ASSERT_EQ(sweep.results.size(), 1U);
  EXPECT_EQ(sweep.results[0].group_size, 8);
}

TEST(CalibrateIo, AxesWhoseGroupsDifferInShapeAreLeftOutOfTheCurves) {
  const CalibrationReport report = calibrate_sweep(parse_bench_jsonl(two_host_jsonl(false), "run.jsonl"));
  ASSERT_EQ(report.calibration.groups.size(), 1U);
  EXPECT_EQ(report.calibration.groups[0].shape, (GroupShape{2, 2, 1}));  // tp's
  EXPECT_NE(std::find(report.notes.begin(), report.notes.end(),
                      "axis dp: its groups differ in shape (span not uniform); left out of the curves"),
            report.notes.end());
  // A run that does not record its hosts gives per-axis fits only.
  const CalibrationReport old = calibrate_sweep(parse_bench_jsonl(bench_jsonl(25.0, 2.5), "old.jsonl"));
  EXPECT_TRUE(old.calibration.groups.empty());
  EXPECT_FALSE(old.calibration.axes.empty());
}

// A bench run of (2,2) on one host, bound or not: dp's and tp's groups share one shape ({2, 1, 2}), dp ran every
// all_gather at 8 us + size / 1e3 and tp at 12 us + size / 1e3 (5% more at 32 KiB: the shared curve is then not
// exactly linear, and its alpha-beta price misses its points a little) over 4 iterations; dp_tp (the flattened
// group) alone has {4, 1, 4}.
double one_host_time(const std::string& axis, std::int64_t size) {
  const double t = (axis == "dp" ? 8.0 : axis == "tp" ? 12.0 : 20.0) + static_cast<double>(size) / 1e3;
  return axis == "tp" && size == 32768 ? 1.05 * t : t;
}

std::string one_host_jsonl(std::vector<std::string> cpus, bool bound) {
  BenchRunInfo info;
  info.world = 4;
  info.mesh_shape = {2, 2};
  info.mesh_names = {"dp", "tp"};
  info.flattened = {{.name = "dp_tp", .axes = {"dp", "tp"}}};
  info.hosts = {"a", "a", "a", "a"};
  info.cpus = std::move(cpus);
  info.bound = bound;
  std::string text = config_record(info) + "\n";
  for (const char* axis : {"dp", "tp", "dp_tp"}) {
    const std::string name = axis;
    const std::int64_t n = name == "dp_tp" ? 4 : 2;
    for (std::int64_t size = 1024; size <= 1 << 20; size *= 32) {
      BenchResult r;
      r.axis = axis;
      r.group_size = n;
      r.groups = 4 / n;
      r.span = GroupSpan{1, n, true};
      r.collective = BenchCollective::AllGather;
      r.bytes = size;
      r.count = size / 8;
      r.time_us = one_host_time(name, size);
      r.stats.iterations = 4;
      text += result_record(r) + "\n";
    }
  }
  return text + summary_record(true, 6, 0, 0.1, 1.0) + "\n";
}

TEST(CalibrateIo, TheRunsTransportSettingsReachTheCalibration) {
  // bench records the job's settings ({} when none is set); calibrate keeps them; older records say nothing.
  const std::string text = one_host_jsonl({"0", "1", "0", "1"}, true);
  ASSERT_NE(text.find(R"("transport":{})"), std::string::npos) << text;
  EXPECT_EQ(calibrate_sweep(parse_bench_jsonl(text, "run.jsonl")).calibration.transport, comm::TransportSettings{});
  std::string set = text;
  set.replace(set.find(R"("transport":{})"), 14, R"("transport":{"OMPI_MCA_btl_vader_single_copy_mechanism":"none"})");
  const BenchSweep sweep = parse_bench_jsonl(set, "run.jsonl");
  const comm::TransportSettings expected{{"OMPI_MCA_btl_vader_single_copy_mechanism", "none"}};
  EXPECT_EQ(sweep.transport, expected);
  EXPECT_EQ(calibrate_sweep(sweep).calibration.transport, expected);
  std::string older = text;
  older.erase(older.find(R"(,"transport":{})"), 15);
  EXPECT_FALSE(calibrate_sweep(parse_bench_jsonl(older, "run.jsonl")).calibration.transport.has_value());
}

TEST(CalibrateIo, BoundRanksGiveEachAxisItsCorrectionAgainstTheSharedCurve) {
  const BenchSweep sweep = parse_bench_jsonl(one_host_jsonl({"0", "1", "0", "1"}, true), "run.jsonl");
  EXPECT_EQ(sweep.cpus, (std::vector<std::string>{"0", "1", "0", "1"}));
  EXPECT_TRUE(sweep.bound);
  EXPECT_EQ(sweep.flattened.at("dp_tp"), (std::vector<std::string>{"dp", "tp"}));
  EXPECT_EQ(sweep.results.front().stats.iterations, 4);
  const CalibrationReport report = calibrate_sweep(sweep);
  const Calibration& c = report.calibration;
  EXPECT_EQ(c.rank_cpus, sweep.cpus);
  // The shared curve's points are the medians over dp and tp (the means of two); each axis' factor is its time over
  // the curve's price there. The flattened group is alone in its shape: no correction.
  ASSERT_EQ(c.axis_corrections.size(), 2U);
  const GroupCurve* curve = find_curve(c, "all_gather", {2, 1, 2});
  ASSERT_NE(curve, nullptr);
  EXPECT_EQ(curve->model, CurveModel::AlphaBeta);
  ASSERT_EQ(curve->points.size(), 3U);
  EXPECT_DOUBLE_EQ(curve->points[1].time_us, (one_host_time("dp", 32768) + one_host_time("tp", 32768)) / 2);
  EXPECT_NE(benchmark_time_us(*curve, 32768), curve->points[1].time_us);  // the fit misses its point
  const CalibratedCostModel model(c, {});
  const std::vector<std::int64_t> square{2, 2}, line{2};
  StepCostInput step;
  step.collective = Collective::AllGather;
  char row[128];
  std::string table = fit_table(report);
  for (const AxisCorrection& a : c.axis_corrections) {
    ASSERT_EQ(a.axes.size(), 1U);
    const std::string axis = a.axes.front() == 0 ? "dp" : "tp";
    SCOPED_TRACE(axis);
    EXPECT_EQ(a.collective, "all_gather");
    ASSERT_EQ(a.factors.size(), curve->points.size());
    std::vector<double> factors;
    for (std::size_t i = 0; i < a.factors.size(); ++i) {
      const double bytes = curve->points[i].bytes;
      const double own = one_host_time(axis, static_cast<std::int64_t>(bytes));
      EXPECT_EQ(a.factors[i].bytes, bytes);
      EXPECT_DOUBLE_EQ(a.factors[i].factor, own / benchmark_time_us(*curve, bytes));
      EXPECT_EQ(a.factors[i].steps, 4);
      factors.push_back(a.factors[i].factor);
      // The defining property: on (2,2) a step is priced at what its own axis measured, at every measured size.
      step.mesh_shape = &square;
      step.axis = a.axes.front();
      step.local_bytes = static_cast<std::int64_t>(bytes) / 2;  // gathered over 2 ranks: `bytes`
      EXPECT_NEAR(model.step_cost(step), own, 1e-9 * own);
      // A (2) mesh (ranks 0, 1: another set of groups) by the shared curve alone.
      step.mesh_shape = &line;
      step.axis = 0;
      EXPECT_NEAR(model.step_cost(step), benchmark_time_us(*curve, bytes), 1e-9 * own);
    }
    std::snprintf(row, sizeof row, "%12s  %14s  %5d  %7.3f  %7.3f  %7.3f", axis.c_str(), "all_gather", 3,
                  *std::min_element(factors.begin(), factors.end()), factors[1],
                  *std::max_element(factors.begin(), factors.end()));
    EXPECT_NE(table.find(row), std::string::npos) << row << "\n" << table;
  }
  EXPECT_EQ(c.axis_corrections[0].axes, (std::vector<std::size_t>{0}));
  EXPECT_EQ(parse_calibration(to_json_text(c)), c);
  EXPECT_NE(table.find("# Axis corrections (ranks bound)"), std::string::npos) << table;
}

TEST(CalibrateIo, UnboundRanksGiveNoAxisCorrectionsAndSayWhy) {
  for (const bool recorded : {true, false}) {
    SCOPED_TRACE(recorded);
    const std::vector<std::string> cpus = recorded ? std::vector<std::string>{"0-1", "0-1", "0-1", "0-1"}
                                                   : std::vector<std::string>{};
    const CalibrationReport report = calibrate_sweep(parse_bench_jsonl(one_host_jsonl(cpus, false), "run.jsonl"));
    EXPECT_TRUE(report.calibration.axis_corrections.empty());
    EXPECT_TRUE(report.calibration.rank_cpus.empty());
    EXPECT_FALSE(report.calibration.groups.empty());
    const std::string why = recorded ? "its ranks were not bound to CPUs" : "the run does not record its ranks' CPUs";
    EXPECT_NE(std::find(report.notes.begin(), report.notes.end(),
                        "no axis corrections: " + why +
                            ", so which of two axes of one group shape is faster can change from job to job (bind "
                            "them, e.g. mpirun --bind-to core, to measure the axes apart)"),
              report.notes.end());
  }
}

TEST(CpuList, AsLinuxWritesIt) {
  EXPECT_EQ(cpu_list({0, 1, 2, 4, 6, 7}), "0-2,4,6-7");
  EXPECT_EQ(cpu_list({3}), "3");
  EXPECT_EQ(cpu_list({}), "");
  EXPECT_EQ(cpu_list({0, 2, 4}), "0,2,4");
  // This process's own binding reads back as the list it is.
  const std::string mine = cpu_binding();
  const std::optional<std::vector<int>> cpus = parse_cpu_list(mine);
  ASSERT_TRUE(cpus) << mine;
  EXPECT_EQ(cpu_list(*cpus), mine);
}

TEST(CpuList, RanksAreBoundWhenEachHasFewerCpusThanItsHostsRanksTogether) {
  // mpirun --bind-to core --map-by core, 4 ranks on 2 cores.
  EXPECT_TRUE(ranks_bound({"0", "1", "0", "1"}, {"a", "a", "a", "a"}));
  // Two hosts, each binding its own two ranks.
  EXPECT_TRUE(ranks_bound({"0", "1", "0", "1"}, {"a", "a", "b", "b"}));
  // Unbound: every rank on every CPU of its host, or of a container's cpuset (0-3 of a larger machine).
  EXPECT_FALSE(ranks_bound({"0-1", "0-1"}, {"a", "a"}));
  EXPECT_FALSE(ranks_bound({"0-3", "0-3", "0-3", "0-3"}, {"a", "a", "a", "a"}));
  // One rank alone on its host, or two on the same one CPU: nothing tells them apart.
  EXPECT_FALSE(ranks_bound({"0", "1", "0"}, {"a", "a", "b"}));
  EXPECT_FALSE(ranks_bound({"0", "0"}, {"a", "a"}));
  // Not lists, or not one per rank.
  EXPECT_FALSE(ranks_bound({"?", "1"}, {"a", "a"}));
  EXPECT_FALSE(ranks_bound({"0", "1"}, {"a"}));
  EXPECT_FALSE(ranks_bound({}, {}));
}

TEST(CpuList, HostsWithMoreRanksThanTheirRanksCpusAreCrowded) {
  // Unbound on two CPUs, or bound two to a core: four ranks on two CPUs.
  const std::vector<CrowdedHost> four_on_two{{"a", 4, 2}};
  EXPECT_EQ(crowded_hosts({"0-1", "0-1", "0-1", "0-1"}, {"a", "a", "a", "a"}), four_on_two);
  EXPECT_EQ(crowded_hosts({"0", "1", "0", "1"}, {"a", "a", "a", "a"}), four_on_two);
  // As many ranks as CPUs, bound or not; a rank alone on its host.
  EXPECT_TRUE(crowded_hosts({"0", "1"}, {"a", "a"}).empty());
  EXPECT_TRUE(crowded_hosts({"0-3", "0-3"}, {"a", "a"}).empty());
  EXPECT_TRUE(crowded_hosts({"0"}, {"a"}).empty());
  // Per host, in the order of their first rank: b's ranks share CPU 0, a's have two.
  const std::vector<CrowdedHost> b_and_c{{"b", 2, 1}, {"c", 3, 2}};
  EXPECT_EQ(crowded_hosts({"0", "1", "0", "0", "0-1", "0-1", "0-1"}, {"b", "a", "b", "a", "c", "c", "c"}), b_and_c);
  // A host with a rank whose CPUs are unknown is left out; lists and hosts of different lengths give none.
  EXPECT_EQ(crowded_hosts({"?", "0", "0", "0"}, {"a", "a", "b", "b"}), (std::vector<CrowdedHost>{{"b", 2, 1}}));
  EXPECT_TRUE(crowded_hosts({"0", "0"}, {"a"}).empty());
}

TEST(CpuList, CrowdedRanksUnderAFairSharePolicyAreToldHowToTimeSteadier) {
  const std::vector<CrowdedHost> one{{"vm", 4, 2}};
  const std::string tail = ", so a collective's time there depends on what ran before it (docs/05-launcher.md, "
                           "\"More ranks than cores\"); for steadier times start every command alike as chrt -r 1 "
                           "mpirun --mca mpi_yield_when_idle 1 ...";
  EXPECT_EQ(crowding_note(one, {}), "4 ranks share 2 CPUs on host vm under Linux's default scheduler" + tail);
  EXPECT_EQ(crowding_note(one, {{"scheduler", "SCHED_BATCH"}, {"NCCL_PROTO", "Simple"}}),
            "4 ranks share 2 CPUs on host vm under SCHED_BATCH" + tail);
  EXPECT_EQ(crowding_note({{"vm", 2, 1}}, {{"scheduler", "SCHED_IDLE"}}),
            "2 ranks share 1 CPU on host vm under SCHED_IDLE" + tail);
  // Several hosts: the first three named.
  EXPECT_EQ(crowding_note({{"a", 4, 2}, {"b", 2, 1}, {"c", 3, 2}, {"d", 9, 8}, {"e", 2, 1}}, {}),
            "ranks outnumber their CPUs on 5 hosts (a: 4 ranks on 2 CPUs, b: 2 ranks on 1 CPU, c: 3 ranks on 2 "
            "CPUs, and 2 more) under Linux's default scheduler" + tail);
  // Nothing to say: no crowded host, or a real-time or unknown policy (round-robin is what the note asks for).
  EXPECT_EQ(crowding_note({}, {}), "");
  for (const std::string policy : {"SCHED_RR priority 1", "SCHED_FIFO priority 99", "SCHED_DEADLINE", "?"}) {
    EXPECT_EQ(crowding_note(one, {{"scheduler", policy}}), "") << policy;
  }
}

TEST(JobTransport, TheSchedulingPolicyAsARecordHoldsIt) {
  EXPECT_EQ(scheduler_setting(SCHED_OTHER, 0), "");
  EXPECT_EQ(scheduler_setting(SCHED_OTHER | SCHED_RESET_ON_FORK, 0), "");
  EXPECT_EQ(scheduler_setting(SCHED_RR, 1), "SCHED_RR priority 1");
  EXPECT_EQ(scheduler_setting(SCHED_FIFO | SCHED_RESET_ON_FORK, 99), "SCHED_FIFO priority 99");
  EXPECT_EQ(scheduler_setting(SCHED_BATCH, 0), "SCHED_BATCH");
  EXPECT_EQ(scheduler_setting(SCHED_IDLE, 0), "SCHED_IDLE");
  EXPECT_EQ(scheduler_setting(6, 0), "SCHED_DEADLINE");
  EXPECT_EQ(scheduler_setting(7, 0), "policy 7");
}

TEST(JobTransport, ThisProcesssSchedulingPolicyIsRecordedWhereItIsNotTheDefault) {
  const int before = ::sched_getscheduler(0);
  sched_param param{};
  ASSERT_EQ(::sched_getparam(0, &param), 0);
  if (before != SCHED_OTHER) GTEST_SKIP() << "the tests run under policy " << before << ", not SCHED_OTHER";
  EXPECT_EQ(job_transport().count(std::string(comm::kSchedulerSetting)), 0U);
  // SCHED_BATCH needs no privilege, and SCHED_OTHER is restored after it.
  ASSERT_EQ(::sched_setscheduler(0, SCHED_BATCH, &param), 0) << std::strerror(errno);
  const comm::TransportSettings batch = job_transport();
  ASSERT_EQ(::sched_setscheduler(0, SCHED_OTHER, &param), 0) << std::strerror(errno);
  ASSERT_EQ(batch.count(std::string(comm::kSchedulerSetting)), 1U);
  EXPECT_EQ(batch.at(std::string(comm::kSchedulerSetting)), "SCHED_BATCH");
}

}  // namespace
}  // namespace meshloom::launcher
