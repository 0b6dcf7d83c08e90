// refine (launcher/src/refine.hpp): step records read, priced by the benchmark curves of their groups' shapes, and
// turned into as-run corrections; the defining property: records whose collectives measured the curves times known
// factors give exactly those factors, and the corrected calibration prices every such collective as measured.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "launch_support.hpp"
#include "meshloom/error.hpp"
#include "refine.hpp"
#include "support/calibration_curves.hpp"
#include "validate_drift.hpp"
#include "support/expect_error.hpp"

namespace meshloom::launcher {
namespace {

using testing::error_of;

// Four ranks on one host: curves for groups of 2 and the flattened group of 4.
Calibration base() {
  Calibration c = testing::four_ranks_on_one_host();
  c.groups.push_back(testing::piecewise("all_gather", {2, 1, 2}, {{1024, 10}, {1048576, 400}, {67108864, 30000}}));
  c.groups.push_back(
      testing::piecewise("all_reduce", {2, 1, 2}, {{1024, 12}, {4096, 20}, {65536, 80}, {1048576, 500}, {67108864, 50000}}));
  c.groups.push_back(testing::piecewise("all_reduce", {4, 1, 4}, {{1024, 20}, {1048576, 900}, {67108864, 80000}}));
  return c;
}

// A step record of validate's (request 0, a (2,2) mesh) or, without a request, of run's.
std::string step(const std::string& collective, const std::string& axes, std::int64_t bytes, double measured,
                 bool validate = true, const std::string& timing = "single_shot") {
  return std::string(R"({"type":"step",)") + (validate ? R"("request":0,)" : "") + R"("plan":0,"step":0,"axes":)" +
         axes + R"(,"collective":")" + collective + R"(","merged":false,"bytes":)" + std::to_string(bytes) +
         R"(,"measured_us":)" + std::to_string(measured) + R"(,"timing":")" + timing + "\"}\n";
}

const std::string kValidateHead =
    R"({"type":"config","command":"validate","backend":"mpi","world":4,"hosts":["vm","vm","vm","vm"]})" "\n"
    R"({"type":"request","request":0,"mesh":{"shape":[2,2],"names":["0","1"]},"tensor_shape":[16,32]})" "\n";

// Measured = the benchmark curve times `factor(size)` for all_reduce on axis 1 (groups of 2) at 4 KiB and 1 MiB,
// three steps each, and the merged all_reduce of the group of 4 at 1 MiB.
std::string records(double small, double large, double merged) {
  const Calibration c = base();
  std::string text = kValidateHead;
  for (int i = 0; i < 3; ++i) {
    text += step("all_reduce", "[1]", 4096, benchmark_time_us(c.groups[1], 4096) * small);
    text += step("all_reduce", "[0]", 1048576, benchmark_time_us(c.groups[1], 1048576) * large);
    text += step("all_reduce", "[0,1]", 1048576, benchmark_time_us(c.groups[2], 1048576) * merged);
  }
  return text;
}

TEST(Refine, RecordsOfKnownFactorsGiveThoseFactors) {
  const StepRecords a = parse_step_records(records(1.5, 0.75, 2.0), "a.jsonl");
  const StepRecords b = parse_step_records(records(1.5, 0.75, 2.0), "b.jsonl");
  ASSERT_EQ(a.samples.size(), 9U);
  EXPECT_EQ(a.samples[2].shape, (GroupShape{4, 1, 4}));  // the merged step: its flattened group's shape
  const RefineReport r = refine_calibration(base(), {a, b});
  EXPECT_EQ(r.steps_used, 18);
  EXPECT_EQ(r.files, 2);
  ASSERT_EQ(r.curves.size(), 2U);
  const GroupCurve& pairs = r.calibration.groups[1];
  ASSERT_EQ(pairs.as_run.size(), 2U);
  EXPECT_EQ(pairs.as_run[0].bytes, 4096.0);
  EXPECT_NEAR(pairs.as_run[0].factor, 1.5, 1e-6);
  EXPECT_EQ(pairs.as_run[0].steps, 6);
  EXPECT_NEAR(pairs.as_run[1].factor, 0.75, 1e-6);
  ASSERT_EQ(r.calibration.groups[2].as_run.size(), 1U);
  EXPECT_NEAR(r.calibration.groups[2].as_run[0].factor, 2.0, 1e-6);
  EXPECT_TRUE(r.calibration.groups[0].as_run.empty());  // all_gather: nothing measured
  // The corrected calibration prices each measured collective as measured; its benchmark curves are untouched.
  const Calibration b0 = base();
  for (std::size_t g = 0; g < b0.groups.size(); ++g) EXPECT_EQ(r.calibration.groups[g].points, b0.groups[g].points);
  const CalibratedCostModel model(r.calibration, {});
  EXPECT_NEAR(*model.predict_us("all_reduce", {2, 1, 2}, 4096), benchmark_time_us(b0.groups[1], 4096) * 1.5, 1e-3);
  EXPECT_NEAR(*model.predict_us("all_reduce", {4, 1, 4}, 1048576), 900 * 2.0, 1e-3);
  // Error figures: the benchmark curves miss by |1/f - 1| (1/3, 1/3, 1/2: median 1/3); the correction fitted from the
  // other file predicts each file exactly.
  ASSERT_TRUE(r.benchmark_error && r.held_out_error);
  EXPECT_NEAR(r.benchmark_error->median, 1.0 / 3.0, 1e-6);
  EXPECT_NEAR(r.benchmark_error->p90, 0.5, 1e-6);
  EXPECT_NEAR(r.held_out_error->median, 0.0, 1e-6);
  EXPECT_EQ(r.held_out_error->points, 18);
}

// With axis corrections (bound ranks), a step on the calibrated mesh is compared with its own axis' time: axis 0
// ran all_reduce at 0.8x the shared curve and axis 1 at 1.2x; plans measured each axis at 1.5x its own time, so the
// as-run factor is 1.5 on both, and the corrected model prices each axis at its own time x 1.5.
TEST(Refine, OnTheCalibratedMeshStepsAreComparedWithTheirOwnAxisTime) {
  Calibration c = base();
  c.rank_cpus = {"0", "1", "0", "1"};
  c.axis_corrections = {{.axes = {0}, .collective = "all_reduce", .factors = {{4096, 0.8, 15}}, .as_run = {}},
                        {.axes = {1}, .collective = "all_reduce", .factors = {{4096, 1.2, 15}}, .as_run = {}}};
  const double bench = benchmark_time_us(c.groups[1], 4096);
  // The records of a job whose ranks sat on the calibrated job's CPUs (validate's config says where).
  std::string text = kValidateHead;
  const std::string hosts = R"("hosts":["vm","vm","vm","vm"])";
  text.replace(text.find(hosts), hosts.size(), hosts + R"(,"cpus":["0","1","0","1"])");
  for (int i = 0; i < 3; ++i) {
    text += step("all_reduce", "[0]", 4096, bench * 0.8 * 1.5);
    text += step("all_reduce", "[1]", 4096, bench * 1.2 * 1.5);
  }
  const StepRecords a = parse_step_records(text, "a.jsonl");
  ASSERT_EQ(a.samples.size(), 6U);
  EXPECT_EQ(a.samples[1].mesh, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(a.samples[1].axes, (std::vector<std::size_t>{1}));
  const RefineReport r = refine_calibration(c, {a, parse_step_records(text, "b.jsonl")});
  const GroupCurve& pairs = r.calibration.groups[1];
  ASSERT_EQ(pairs.as_run.size(), 1U);
  EXPECT_NEAR(pairs.as_run[0].factor, 1.5, 1e-6);
  // calibrate's factors kept; each axis given its own as-run points (1.5 on both here: six steps each).
  ASSERT_EQ(r.calibration.axis_corrections.size(), 2U);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(r.calibration.axis_corrections[k].factors, c.axis_corrections[k].factors);
    ASSERT_EQ(r.calibration.axis_corrections[k].as_run.size(), 1U);
    EXPECT_NEAR(r.calibration.axis_corrections[k].as_run[0].factor, 1.5, 1e-6);
    EXPECT_EQ(r.calibration.axis_corrections[k].as_run[0].steps, 6);
  }
  EXPECT_EQ(r.calibration.rank_cpus, c.rank_cpus);
  const CalibratedCostModel model(r.calibration, {});
  const std::vector<std::int64_t> square{2, 2};
  StepCostInput in;
  in.collective = Collective::AllReduce;
  in.mesh_shape = &square;
  in.local_bytes = 4096;
  for (const std::size_t axis : {0U, 1U}) {
    in.axis = axis;
    EXPECT_NEAR(model.step_cost(in), bench * (axis == 0 ? 0.8 : 1.2) * 1.5, 1e-6);
  }
  // The benchmark's error is taken against the axis' own time too: |1/1.5 - 1| on both axes, not 1/1.2 and 1/1.8.
  ASSERT_TRUE(r.benchmark_error);
  EXPECT_NEAR(r.benchmark_error->median, 1.0 / 3.0, 1e-6);
  EXPECT_NEAR(r.benchmark_error->p90, 1.0 / 3.0, 1e-6);
  EXPECT_EQ(refine_table(r).find("did not sit on the calibrated job's CPUs"), std::string::npos);

  // Records of ranks bound otherwise (or not saying) are compared with the shared curve (1.2x and 1.8x it), and the
  // table says why.
  std::string elsewhere = text;
  const std::string cpus = R"("cpus":["0","1","0","1"])";
  elsewhere.replace(elsewhere.find(cpus), cpus.size(), R"("cpus":["0-1","0-1","0-1","0-1"])");
  const RefineReport other = refine_calibration(c, {parse_step_records(elsewhere, "a.jsonl"), parse_step_records(elsewhere, "b.jsonl")});
  EXPECT_FALSE(other.levels[0].by_axis);
  ASSERT_TRUE(other.benchmark_error);
  // |1 - 1.2| / 1.2 = 1/6 on axis 0 and |1 - 1.8| / 1.8 = 4/9 on axis 1: the median of twelve, the mean of the two.
  EXPECT_NEAR(other.benchmark_error->median, (1.0 / 6 + 4.0 / 9) / 2, 1e-6);
  EXPECT_NEAR(other.benchmark_error->p90, 4.0 / 9, 1e-6);
  EXPECT_NE(refine_table(other).find("a.jsonl: no drift anchors (run's records): used as measured; its ranks did not "
                                     "sit on the calibrated job's CPUs"),
            std::string::npos)
      << refine_table(other);
  // Nor do they give an axis its own points.
  for (const AxisCorrection& correction : other.calibration.axis_corrections) EXPECT_TRUE(correction.as_run.empty());
  EXPECT_TRUE(other.axes.empty());
}

// The defining property of the axes' own points: when the plans ran axis 0's all_reduce at 1.2x its own time and
// axis 1's at 0.8x, one factor per curve (their median, 1.0) prices neither; each axis' own points price each exactly,
// held out too, while the curve's pooled points still price every other layout (a 1-D mesh of 2).
TEST(Refine, EachAxisOfTheCalibratedMeshGetsItsOwnPointsFromBoundRecords) {
  Calibration c = base();
  c.rank_cpus = {"0", "1", "0", "1"};
  c.axis_corrections = {{.axes = {0}, .collective = "all_reduce", .factors = {{4096, 0.8, 15}, {1048576, 0.9, 15}}, .as_run = {}},
                        {.axes = {1}, .collective = "all_reduce", .factors = {{4096, 1.2, 15}, {1048576, 1.1, 15}}, .as_run = {}}};
  std::string text = kValidateHead;
  const std::string hosts = R"("hosts":["vm","vm","vm","vm"])";
  text.replace(text.find(hosts), hosts.size(), hosts + R"(,"cpus":["0","1","0","1"])");
  for (const std::int64_t bytes : {std::int64_t{4096}, std::int64_t{1048576}}) {
    const double bench = benchmark_time_us(c.groups[1], static_cast<double>(bytes));
    const double own0 = bench * axis_correction_factor(c, {2, 2}, {0}, "all_reduce", static_cast<double>(bytes));
    const double own1 = bench * axis_correction_factor(c, {2, 2}, {1}, "all_reduce", static_cast<double>(bytes));
    for (int i = 0; i < 3; ++i) {
      text += step("all_reduce", "[0]", bytes, own0 * 1.2);
      text += step("all_reduce", "[1]", bytes, own1 * 0.8);
    }
  }
  const RefineReport r = refine_calibration(c, {parse_step_records(text, "a.jsonl"), parse_step_records(text, "b.jsonl")});
  ASSERT_EQ(r.axes.size(), 2U);
  EXPECT_EQ(r.axes[0].axes, (std::vector<std::size_t>{0}));
  EXPECT_EQ(r.axes[0].steps, 12);
  for (const AsRunPoint& p : r.calibration.axis_corrections[0].as_run) EXPECT_NEAR(p.factor, 1.2, 1e-9);
  for (const AsRunPoint& p : r.calibration.axis_corrections[1].as_run) EXPECT_NEAR(p.factor, 0.8, 1e-9);
  ASSERT_EQ(r.calibration.axis_corrections[0].as_run.size(), 2U);
  ASSERT_EQ(r.calibration.groups[1].as_run.size(), 2U);
  EXPECT_NEAR(r.calibration.groups[1].as_run[0].factor, 1.0, 1e-9);  // the median of 1.2 and 0.8 per file
  const CalibratedCostModel model(r.calibration, {});
  const std::vector<std::int64_t> square{2, 2}, pair{2};
  StepCostInput in;
  in.collective = Collective::AllReduce;
  for (const std::int64_t bytes : {std::int64_t{4096}, std::int64_t{1048576}}) {
    SCOPED_TRACE(bytes);
    in.local_bytes = bytes;
    in.mesh_shape = &square;
    const double bench = benchmark_time_us(c.groups[1], static_cast<double>(bytes));
    for (const std::size_t axis : {0U, 1U}) {
      in.axis = axis;
      EXPECT_NEAR(model.step_cost(in),
                  bench * axis_correction_factor(c, square, {axis}, "all_reduce", static_cast<double>(bytes)) *
                      (axis == 0 ? 1.2 : 0.8),
                  1e-6);
    }
    in.mesh_shape = &pair;
    in.axis = 0;
    EXPECT_NEAR(model.step_cost(in), bench * 1.0, 1e-6);
  }
  // Held out, each file priced by the other's points: exactly.
  ASSERT_TRUE(r.held_out_error);
  EXPECT_NEAR(r.held_out_error->p90, 0.0, 1e-9);
  const std::string table = refine_table(r);
  EXPECT_NE(table.find("# by axis of the calibrated mesh"), std::string::npos) << table;
  EXPECT_NE(table.find("  all_reduce      dp              2     12   1.20x   1.20x"), std::string::npos) << table;
  EXPECT_NE(table.find("  all_reduce      tp              2     12   0.80x   0.80x"), std::string::npos) << table;
}

TEST(Refine, ARunDuringASpellIsLeftOutAndWhenKeptMovesTheFactorNoMoreThanAnyRun) {
  // Two usual runs whose steps measured 1.5x the curve (3 steps each) and one during a spell when the benchmark itself
  // re-timed 2x its calibration (its drift anchors), whose 10 steps measured 3x.
  const Calibration c = base();
  const double anchor = benchmark_time_us(c.groups[1], 65536) * 2.0;
  const std::string drift = R"({"type":"drift","when":"before","median_ratio":2.0,"anchors":[{"collective":"all_reduce",)"
                            R"("n":2,"hosts":1,"ranks_per_host":2,"bytes":65536,"calibrated_us":1,"measured_us":)" +
                            std::to_string(anchor) + R"(,"ratio":2.0}]})" "\n";
  std::string text = kValidateHead + drift;
  for (int i = 0; i < 10; ++i) text += step("all_reduce", "[1]", 4096, benchmark_time_us(c.groups[1], 4096) * 3.0);
  const StepRecords spell = parse_step_records(text, "spell.jsonl");
  ASSERT_EQ(spell.anchors.size(), 1U);
  EXPECT_EQ(spell.anchors[0].shape, (GroupShape{2, 1, 2}));
  const StepRecords a = parse_step_records(records(1.5, 1.5, 1.5), "a.jsonl");
  const StepRecords b = parse_step_records(records(1.5, 1.5, 1.5), "b.jsonl");
  // By default the spell's anchors, 2x the curves, lie outside [1/1.15, 1.15]: the file is left out, and says so.
  const RefineReport r = refine_calibration(c, {a, spell, b});
  ASSERT_EQ(r.levels.size(), 3U);
  ASSERT_TRUE(r.levels[1].level);
  EXPECT_NEAR(*r.levels[1].level, 2.0, 1e-6);
  EXPECT_FALSE(r.levels[1].used);
  EXPECT_FALSE(r.levels[0].level);  // validate's records without drift records: used as they are
  EXPECT_TRUE(r.levels[0].used);
  EXPECT_EQ(r.files, 2);
  ASSERT_EQ(r.calibration.groups[1].as_run.size(), 2U);
  EXPECT_NEAR(r.calibration.groups[1].as_run[0].factor, 1.5, 1e-6);
  EXPECT_EQ(r.calibration.groups[1].as_run[0].steps, 6);
  const std::string t = refine_table(r);
  EXPECT_NE(t.find("# spell.jsonl: its 1 drift anchors re-timed 2.00x the calibration's points; left out: the "
                   "machine stood elsewhere than when calibrated (--any-level keeps it)\n"),
            std::string::npos) << t;
  EXPECT_NE(t.find("# a.jsonl: no drift anchors (run's records): used as measured\n"), std::string::npos) << t;
  // Kept (any_level), its 10 steps of 16 would make the pooled median 3; per file it weighs as one run of three: the
  // factor is the mean of 1.5, 3 and 1.5.
  const RefineReport kept = refine_calibration(c, {a, spell, b}, kDefaultMinSteps, true);
  EXPECT_TRUE(kept.levels[1].used);
  EXPECT_EQ(kept.files, 3);
  EXPECT_NEAR(kept.calibration.groups[1].as_run[0].factor, 2.0, 1e-6);
  EXPECT_EQ(kept.calibration.groups[1].as_run[0].steps, 16);
  // The band: anchors at 1.1x or 1/1.1x keep a file, at 0.8x (under 1/1.15) leave it out.
  for (const auto& [level, used] : std::vector<std::pair<double, bool>>{{1.1, true}, {1 / 1.1, true}, {0.8, false}}) {
    std::string at = text;
    at.replace(at.find(std::to_string(anchor)), std::to_string(anchor).size(),
               std::to_string(benchmark_time_us(c.groups[1], 65536) * level));
    EXPECT_EQ(refine_calibration(c, {parse_step_records(at, "at.jsonl")}, 1, false).levels[0].used, used) << level;
  }
  // Anchors of a collective the calibration has no curve for say nothing of the level: the file is used as measured.
  std::string unpriced = text;
  unpriced.replace(unpriced.find(R"("collective":"all_reduce",)"), 26, R"("collective":"all_to_all",)");
  const RefineReport u = refine_calibration(c, {parse_step_records(unpriced, "unpriced.jsonl")});
  EXPECT_FALSE(u.levels[0].level);
  EXPECT_EQ(u.levels[0].unpriced_anchors, 1);
  EXPECT_NE(refine_table(u).find("# unpriced.jsonl: no drift anchor of a curve of the calibration: used as measured\n"),
            std::string::npos) << refine_table(u);
}

// A file's level is judged drift check by drift check, as validate's drift lines judge it: a run whose "before"
// anchors re-timed 1.25x and whose "after" ones 1.00x drifted (validate said so), though all 24 pooled sit at 1.12x.
TEST(Refine, EachDriftCheckMustBeLevelAsValidateJudgedIt) {
  const Calibration c = base();
  const double point = benchmark_time_us(c.groups[1], 65536);
  const auto drift = [&](const char* when, double ratio) {
    std::string anchors;
    for (int i = 0; i < 12; ++i) {
      anchors += std::string(i == 0 ? "" : ",") +
                 R"({"collective":"all_reduce","n":2,"hosts":1,"ranks_per_host":2,"bytes":65536,"calibrated_us":1,)"
                 R"("measured_us":)" + std::to_string(point * ratio) + R"(,"ratio":1})";
    }
    return std::string(R"({"type":"drift","when":")") + when + R"(","anchors":[)" + anchors + "]}\n";
  };
  std::string text = kValidateHead + drift("before", 1.25);
  for (int i = 0; i < 3; ++i) text += step("all_reduce", "[1]", 4096, benchmark_time_us(c.groups[1], 4096) * 3.0);
  text += drift("after", 1.0);
  const RefineReport r = refine_calibration(c, {parse_step_records(text, "v2.jsonl")}, 1, false);
  ASSERT_EQ(r.levels[0].checks.size(), 2U);
  EXPECT_NEAR(r.levels[0].checks[0], 1.25, 1e-6);
  EXPECT_NEAR(r.levels[0].checks[1], 1.0, 1e-6);
  EXPECT_NEAR(*r.levels[0].level, 1.25, 1e-6);
  EXPECT_FALSE(r.levels[0].used);
  EXPECT_NE(refine_table(r).find("# v2.jsonl: its 24 drift anchors re-timed 1.25x and 1.00x the calibration's points, "
                                 "check by check; left out"),
            std::string::npos) << refine_table(r);
  // Both checks level: used.
  std::string level = kValidateHead + drift("before", 1.1);
  for (int i = 0; i < 3; ++i) level += step("all_reduce", "[1]", 4096, benchmark_time_us(c.groups[1], 4096) * 3.0);
  level += drift("after", 0.95);
  EXPECT_TRUE(refine_calibration(c, {parse_step_records(level, "level.jsonl")}, 1, false).levels[0].used);
}

// A file's level is its anchors over the calibration's own times for them, as validate's drift line has it: the
// measured point where the curve has one at the anchor's size, not the curve's alpha-beta fit there. Anchors that
// re-timed the point exactly are level even where the fit sits 1.3x below the point (the band is 1.15x).
TEST(Refine, TheLevelIsTheAnchorsOverTheCalibrationsPointsAsValidateHasIt) {
  Calibration c = base();
  GroupCurve& ar = c.groups[1];  // all_reduce on groups of 2
  ar.model = CurveModel::AlphaBeta;
  ar.fit = CollectiveFit{.alpha_us = 10, .busbw_gbps = 1};
  for (CurvePoint& p : ar.points) p.time_us = benchmark_time_us(ar, p.bytes) * (p.bytes == 65536 ? 1.3 : 1.0);
  const double point = ar.points[2].time_us;
  ASSERT_EQ(ar.points[2].bytes, 65536);
  EXPECT_NEAR(point / benchmark_time_us(ar, 65536), 1.3, 1e-9);
  EXPECT_DOUBLE_EQ(anchor_reference_us(c, "all_reduce", {2, 1, 2}, 65536, {}, {}), point);
  const std::string drift = R"({"type":"drift","when":"before","median_ratio":1.0,"anchors":[{"collective":"all_reduce",)"
                            R"("n":2,"hosts":1,"ranks_per_host":2,"bytes":65536,"calibrated_us":1,"measured_us":)" +
                            std::to_string(point) + R"(,"ratio":1.0}]})" "\n";
  std::string text = kValidateHead + drift;
  for (int i = 0; i < 3; ++i) text += step("all_reduce", "[1]", 4096, benchmark_time_us(ar, 4096) * 1.5);
  const RefineReport r = refine_calibration(c, {parse_step_records(text, "level.jsonl")});
  ASSERT_TRUE(r.levels[0].level);
  EXPECT_NEAR(*r.levels[0].level, 1.0, 1e-6);
  EXPECT_TRUE(r.levels[0].used);
  EXPECT_NEAR(r.calibration.groups[1].as_run.at(0).factor, 1.5, 1e-6);
}

// A run under --no-axis-corrections (its config says 0 applied) had validate divide its anchors by the points, not by
// each axis' own time, though its ranks sat as the calibrated job's: refine judges its level the same way.
TEST(Refine, ARunWithoutAxisCorrectionsIsLevelAsValidateJudgedIt) {
  Calibration c = base();
  c.rank_cpus = {"0", "1", "0", "1"};
  c.axis_corrections = {{.axes = {0}, .collective = "all_reduce", .factors = {{65536, 0.8, 15}}, .as_run = {}},
                        {.axes = {1}, .collective = "all_reduce", .factors = {{65536, 1.2, 15}}, .as_run = {}}};
  const double point = c.groups[1].points[2].time_us;
  ASSERT_EQ(c.groups[1].points[2].bytes, 65536);
  const std::string drift = R"({"type":"drift","when":"before","mesh":[2,2],"anchors":[{"collective":"all_reduce",)"
                            R"("n":2,"hosts":1,"ranks_per_host":2,"bytes":65536,"axes":[0],"calibrated_us":1,)"
                            R"("measured_us":)" + std::to_string(point) + R"(,"ratio":1.0}]})" "\n";
  const auto records = [&](const std::string& extra) {
    std::string text = kValidateHead;
    const std::string hosts = R"("hosts":["vm","vm","vm","vm"])";
    text.replace(text.find(hosts), hosts.size(), hosts + R"(,"cpus":["0","1","0","1"])" + extra);
    return parse_step_records(text + drift + step("all_reduce", "[0]", 4096, 30.0), "v.jsonl");
  };
  // With the corrections applied, validate divided by axis 0's own time (0.8 of the point): 1.25x, drifted.
  const RefineReport with = refine_calibration(c, {records("")});
  ASSERT_TRUE(with.levels[0].level);
  EXPECT_NEAR(*with.levels[0].level, 1.25, 1e-6);
  // Without them, by the point: level.
  const RefineReport without = refine_calibration(c, {records(R"(,"axis_corrections":0)")});
  ASSERT_TRUE(without.levels[0].level);
  EXPECT_NEAR(*without.levels[0].level, 1.0, 1e-6);
  EXPECT_TRUE(without.levels[0].used);
}

// The defining property of the factor over files: each file's median ratio, then their mean. A job whose collectives
// of a size ran slow (here one of three, at 2x) raises the price by its share of the jobs, where a median over the
// files would price only the usual job (1x) and a pooled figure would weigh each file by its number of steps.
TEST(Refine, TheFactorIsTheMeanOverTheFilesOfEachFilesMedian) {
  const Calibration c = base();
  const double bench = benchmark_time_us(c.groups[1], 4096);
  const auto file = [&](const std::vector<double>& factors, const std::string& name) {
    std::string text = kValidateHead;
    for (const double f : factors) text += step("all_reduce", "[1]", 4096, bench * f);
    return parse_step_records(text, name);
  };
  // a: median 1.0 (its stray 9x does not count); b: 1.0; c: 2.0, over six steps.
  const RefineReport r = refine_calibration(
      c, {file({1.0, 9.0, 1.0}, "a.jsonl"), file({1.0, 1.0, 1.0}, "b.jsonl"), file({2, 2, 2, 2, 2, 2}, "c.jsonl")});
  ASSERT_EQ(r.calibration.groups[1].as_run.size(), 1U);
  EXPECT_NEAR(r.calibration.groups[1].as_run[0].factor, 4.0 / 3.0, 1e-9);
  EXPECT_EQ(r.calibration.groups[1].as_run[0].steps, 12);
  EXPECT_NEAR(*CalibratedCostModel(r.calibration, {}).predict_us("all_reduce", {2, 1, 2}, 4096), bench * 4.0 / 3.0,
              1e-6);
}

TEST(Refine, HeldOutFiguresPriceEachFileByTheOthersAndCountOnlyFilesThatGaveSteps) {
  // a measured 1.5x the curves, b 2x: each file priced by the other's factor misses by |2 - 1.5| / 1.5 = 1/3 or
  // |1.5 - 2| / 2 = 1/4.
  const StepRecords a = parse_step_records(records(1.5, 1.5, 1.5), "a.jsonl");
  const StepRecords b = parse_step_records(records(2.0, 2.0, 2.0), "b.jsonl");
  const RefineReport r = refine_calibration(base(), {a, b});
  ASSERT_TRUE(r.held_out_error);
  EXPECT_EQ(r.held_out_error->points, 18);
  EXPECT_NEAR(r.held_out_error->median, (1.0 / 3.0 + 0.25) / 2, 1e-6);
  EXPECT_NEAR(r.held_out_error->p90, 1.0 / 3.0, 1e-6);
  // A third file whose collectives have no curve gives no step: still two files, the same figures.
  std::string other = kValidateHead;
  for (int i = 0; i < 3; ++i) other += step("all_to_all", "[0]", 4096, 30.0);
  const RefineReport with = refine_calibration(base(), {a, parse_step_records(other, "c.jsonl"), b});
  EXPECT_EQ(with.files, 2);
  EXPECT_EQ(with.held_out_error, r.held_out_error);
  // With one file that gives steps there is nothing to hold out.
  EXPECT_FALSE(refine_calibration(base(), {a, parse_step_records(other, "c.jsonl")}).held_out_error);
}

TEST(Refine, StepsCountAtTheCurvesNearestSize) {
  // 3000 and 5000 bytes both count at the curve's 4096 (nearest in log size), each against the benchmark at its
  // own size.
  const Calibration c = base();
  std::string text = kValidateHead;
  text += step("all_reduce", "[1]", 3000, benchmark_time_us(c.groups[1], 3000) * 1.2);
  text += step("all_reduce", "[1]", 5000, benchmark_time_us(c.groups[1], 5000) * 1.4);
  text += step("all_reduce", "[1]", 5000, benchmark_time_us(c.groups[1], 5000) * 1.3);
  const RefineReport r = refine_calibration(c, {parse_step_records(text, "v.jsonl")});
  ASSERT_EQ(r.calibration.groups[1].as_run.size(), 1U);
  EXPECT_EQ(r.calibration.groups[1].as_run[0].bytes, 4096.0);
  EXPECT_NEAR(r.calibration.groups[1].as_run[0].factor, 1.3, 1e-6);
  EXPECT_EQ(r.calibration.groups[1].as_run[0].steps, 3);
}

TEST(Refine, WithinAFileTheFactorIsTheMedianAndSizesOfTooFewStepsAreLeftOut) {
  const Calibration c = base();
  std::string text = kValidateHead;
  const double bench = benchmark_time_us(c.groups[1], 65536);
  for (const double f : {1.0, 1.2, 5.0}) text += step("all_reduce", "[1]", 65536, bench * f);  // median 1.2
  text += step("all_reduce", "[1]", 4096, 99.0);                                                 // one step only
  const RefineReport r = refine_calibration(c, {parse_step_records(text, "r.jsonl")});
  ASSERT_EQ(r.calibration.groups[1].as_run.size(), 1U);
  EXPECT_NEAR(r.calibration.groups[1].as_run[0].factor, 1.2, 1e-6);
  EXPECT_EQ(r.curves[0].sizes_dropped, 1);
  EXPECT_FALSE(r.held_out_error);  // one file: no held-out figure
  EXPECT_NE(refine_table(r).find("all_reduce on 2 ranks on 1 host (2 per host): 1 size of too few steps left out"),
            std::string::npos)
      << refine_table(r);
  // With --min-steps 1 the single step counts.
  EXPECT_EQ(refine_calibration(c, {parse_step_records(text, "r.jsonl")}, 1).calibration.groups[1].as_run.size(), 2U);
  // A second refine replaces the first's correction, and drops (and names) one no collective of its records measured.
  Calibration corrected = r.calibration;
  corrected.groups[0].as_run = {{1024, 3.0, 5}};
  const RefineReport again = refine_calibration(corrected, {parse_step_records(records(2, 2, 2), "s.jsonl")});
  EXPECT_NEAR(again.calibration.groups[1].as_run[0].factor, 2.0, 1e-6);
  EXPECT_EQ(again.calibration.groups[1].as_run[0].bytes, 4096.0);
  EXPECT_TRUE(again.calibration.groups[0].as_run.empty());
  EXPECT_EQ(again.dropped, (std::vector<DroppedCorrection>{{"all_gather on 2 ranks on 1 host (2 per host)", false}}));
  EXPECT_NE(refine_table(again).find("# all_gather on 2 ranks on 1 host (2 per host): its earlier correction dropped "
                                     "(no collective of the records used measured it)"),
            std::string::npos);
  // A curve measured, but at no size by --min-steps collectives, loses its earlier correction too, and says why.
  Calibration twice = r.calibration;
  twice.groups[1].as_run = {{65536, 1.5, 4}};
  std::string few = kValidateHead;
  few += step("all_reduce", "[1]", 65536, bench * 1.1);
  const RefineReport thin = refine_calibration(twice, {parse_step_records(few, "t.jsonl")});
  EXPECT_TRUE(thin.calibration.groups[1].as_run.empty());
  EXPECT_EQ(thin.dropped, (std::vector<DroppedCorrection>{{"all_reduce on 2 ranks on 1 host (2 per host)", true}}));
  EXPECT_NE(refine_table(thin).find("# all_reduce on 2 ranks on 1 host (2 per host): its earlier correction dropped "
                                    "(none of its sizes had --min-steps measured collectives)"),
            std::string::npos)
      << refine_table(thin);
}

TEST(Refine, RunRecordsAllGatherSizesAndWhatIsNotUsed) {
  // run's records: the mesh in the config, no request. all_gather's size is the gathered output (2 x 512 bytes).
  std::string text =
      R"({"type":"config","command":"run","backend":"mpi","world":4,"mesh":{"shape":[2,2],"names":["dp","tp"]},"hosts":["a","a","a","b"]})"
      "\n";
  text += step("all_gather", "[1]", 512, 20.0, false);  // groups {0,1} on a, {2,3} on a and b: two shapes
  text += step("all_gather", "[0]", 512, 20.0, false);  // groups {0,2} on a, {1,3} on a and b: two shapes as well
  text += step("chunk", "[0]", 512, 0.0, false);        // local: skipped
  text += step("all_reduce", "[0,1]", 512, 0.0, false); // nothing measured: skipped
  const StepRecords mixed = parse_step_records(text, "run.jsonl");
  EXPECT_EQ(mixed.samples.size(), 0U);
  EXPECT_EQ(mixed.mixed_shapes, 2);

  std::string one_host = text;
  one_host.replace(one_host.find(R"("a","a","a","b")"), 15, R"("a","a","a","a")");
  const StepRecords r = parse_step_records(one_host, "run.jsonl");
  ASSERT_EQ(r.samples.size(), 2U);
  EXPECT_EQ(r.samples[0].bytes, 1024.0);
  EXPECT_EQ(r.samples[0].shape, (GroupShape{2, 1, 2}));
  EXPECT_EQ(r.backend, "mpi");
  EXPECT_EQ(r.timing, "single_shot");

  // A collective with no curve (all_to_all) is counted, not used.
  std::string other = kValidateHead;
  for (int i = 0; i < 3; ++i) other += step("all_to_all", "[0]", 4096, 30.0);
  const RefineReport none = refine_calibration(base(), {parse_step_records(other, "v.jsonl")});
  EXPECT_EQ(none.steps_unpriced, 3);
  EXPECT_TRUE(none.curves.empty());
  EXPECT_NE(refine_table(none).find("3 measured collectives of a collective or group shape the calibration has no "
                                    "curve for"),
            std::string::npos);
}

TEST(Refine, BadRecordsAndMismatchesAreClearErrors) {
  const auto parse = [](const std::string& text) {
    return error_of([&] { (void)parse_step_records(text, "v.jsonl"); });
  };
  EXPECT_EQ(parse(R"({"type":"config","backend":"mpi"})"),
            "ValueError: \"v.jsonl\" line 1: no field \"hosts\": the records do not say where the ranks sat (written "
            "before they did), so no step has a group shape");
  EXPECT_EQ(parse(R"({"type":"config","command":"bench","backend":"mpi","hosts":["a"]})"),
            "ValueError: \"v.jsonl\" line 1: field \"command\" = \"bench\": these are bench's records, and refine reads "
            "the step records of meshloom-launch run or validate --jsonl");
  EXPECT_EQ(parse(step("all_reduce", "[0]", 4096, 10)), "ValueError: \"v.jsonl\" line 1: a step record before the config record");
  EXPECT_EQ(parse(kValidateHead + R"({"type":"step","request":7,"axes":[0],"collective":"all_reduce","bytes":8,"measured_us":1,"timing":"single_shot"})"),
            "ValueError: \"v.jsonl\" line 3: field \"request\" = 7: no such request record before it");
  EXPECT_EQ(parse(kValidateHead + step("all_reduce", "[1,0]", 4096, 10)),
            "ValueError: \"v.jsonl\" line 3: field \"axes\" = [1,0]: expected ascending axes of a mesh of 2");
  EXPECT_EQ(parse(kValidateHead + step("all_reduce", "[0]", 4096, 10) + step("all_reduce", "[0]", 4096, 10, true, "pipelined")),
            "ValueError: \"v.jsonl\" line 4: field \"timing\" = \"pipelined\": earlier steps were timed \"single_shot\"");
  EXPECT_EQ(parse(kValidateHead + step("all_smash", "[0]", 4096, 10)),
            "ValueError: \"v.jsonl\" line 3: field \"collective\" = \"all_smash\": unknown collective");
  EXPECT_EQ(parse("{\"type\":\"config\",\"backend\":\"mpi\",\"hosts\":[\"a\"]}\n" + step("all_reduce", "[0]", 4096, 10)),
            "ValueError: \"v.jsonl\" line 2: field \"request\" = 0: no such request record before it");
  EXPECT_EQ(parse(R"({"type":"config","backend":"mpi","hosts":["a","a"],"mesh":{"shape":[2,2]}})" "\n" +
                  step("all_reduce", "[0]", 4096, 10, false)),
            "ValueError: \"v.jsonl\" line 2: the step's mesh holds 4 ranks and the config's \"hosts\" place 2");
  EXPECT_EQ(parse("not json\n"), "ValueError: \"v.jsonl\" line 1: not a JSON object");
  EXPECT_EQ(parse("{\"type\":\"config\",\"x\":1e400}\n"),
            "ValueError: \"v.jsonl\" line 1: not valid JSON: number overflow parsing '1e400'");
  EXPECT_EQ(parse(R"({"type":"config","backend":"mpi","hosts":["a","a"]})" "\n" + step("all_reduce", "[0]", 4096, 10, false)),
            "ValueError: \"v.jsonl\" line 2: a step without a mesh (no \"request\", and the config names none)");
  EXPECT_EQ(parse(R"({"type":"config","backend":"mpi","hosts":["a"],"mesh":{"shape":[4294967296,4294967296]}})" "\n" +
                  step("all_reduce", "[0,1]", 4096, 10, false)),
            "ValueError: \"v.jsonl\" line 2: the step's mesh holds more than 2^63 ranks and the config's \"hosts\" place 1");
  EXPECT_EQ(parse(""), "ValueError: \"v.jsonl\": no config record (is it the --jsonl file of meshloom-launch run or validate?)");

  const StepRecords ok = parse_step_records(records(1, 1, 1), "v.jsonl");
  const auto refine = [&](const Calibration& c, const StepRecords& r, std::int64_t min_steps = kDefaultMinSteps) {
    return error_of([&] { (void)refine_calibration(c, {r}, min_steps); });
  };
  Calibration nccl = base();
  nccl.backend = "nccl";
  EXPECT_EQ(refine(nccl, ok), "ValueError: refine: \"v.jsonl\" ran on backend \"mpi\" and the calibration measured \"nccl\"");
  Calibration piped = base();
  piped.timing = "pipelined";
  EXPECT_EQ(refine(piped, ok), "ValueError: refine: \"v.jsonl\" timed its steps \"single_shot\" and the calibration's "
                               "curves are \"pipelined\": calibrate with --timing single_shot");
  Calibration fits_only = base();
  fits_only.groups.clear();
  EXPECT_EQ(refine(fits_only, ok), "ValueError: refine: the calibration holds per-axis fits only (no curves by group "
                                   "shape) and they have nothing to correct; calibrate again with this version");
  EXPECT_EQ(refine(base(), ok, 0), "ValueError: refine: --min-steps 0: must be >= 1");

}

TEST(Refine, RecordsOfAnotherTransportThanTheCalibrationOrEachOtherAreRefused) {
  const auto with_transport = [](const std::string& transport) {
    std::string head = kValidateHead;
    head.replace(head.find(R"("hosts")"), 7, R"("transport":)" + transport + R"(,"hosts")");
    return head + records(1, 1, 1).substr(kValidateHead.size());
  };
  const auto refine = [](const Calibration& c, const std::vector<StepRecords>& r, bool any_transport = false) {
    return error_of([&] { (void)refine_calibration(c, r, kDefaultMinSteps, false, any_transport); });
  };
  const StepRecords older = parse_step_records(records(1, 1, 1), "old.jsonl");
  const StepRecords with_cma = parse_step_records(with_transport("{}"), "cma.jsonl");
  const StepRecords no_cma_records =
      parse_step_records(with_transport(R"({"OMPI_MCA_btl_vader_single_copy_mechanism":"none"})"), "none.jsonl");
  EXPECT_FALSE(older.transport.has_value());
  ASSERT_TRUE(with_cma.transport.has_value());
  EXPECT_TRUE(with_cma.transport->empty());
  const comm::TransportSettings none{{"OMPI_MCA_btl_vader_single_copy_mechanism", "none"}};
  EXPECT_EQ(no_cma_records.transport, none);
  Calibration no_cma = base();
  no_cma.transport = none;
  // Against the calibration: refused, naming the setting and both values; equal, or not recorded: used.
  EXPECT_EQ(refine(no_cma, {with_cma}),
            "ValueError: refine: \"cma.jsonl\" was measured under other transport settings than the calibration "
            "(OMPI_MCA_btl_vader_single_copy_mechanism is \"none\" in the calibration and unset in \"cma.jsonl\"): its "
            "steps cost what the calibration never measured; refine by records made under one transport, the "
            "calibration's, or --any-transport");
  EXPECT_EQ(refine_calibration(no_cma, {older, no_cma_records}).files, 2);
  EXPECT_EQ(refine_calibration(no_cma, {older, no_cma_records}).calibration.transport, none);
  // --any-transport uses them, and the result keeps the calibration's own.
  const RefineReport any = refine_calibration(no_cma, {with_cma}, kDefaultMinSteps, false, true);
  EXPECT_EQ(any.files, 1);
  EXPECT_EQ(any.calibration.transport, none);
  // A calibration that does not say: the records must agree with each other, and the result says theirs.
  EXPECT_EQ(refine(base(), {older, no_cma_records, with_cma}),
            "ValueError: refine: \"cma.jsonl\" was measured under other transport settings than \"none.jsonl\" "
            "(OMPI_MCA_btl_vader_single_copy_mechanism is \"none\" in \"none.jsonl\" and unset in \"cma.jsonl\"): "
            "its steps cost what the others did not; refine by records made under one transport, the calibration's, "
            "or --any-transport");
  EXPECT_EQ(refine_calibration(base(), {older, no_cma_records}).calibration.transport, none);
  EXPECT_FALSE(refine_calibration(base(), {older}).calibration.transport.has_value());
  EXPECT_FALSE(refine_calibration(base(), {no_cma_records, with_cma}, kDefaultMinSteps, false, true)
                   .calibration.transport.has_value());
  // Only the settings of the calibration's backend's collectives count: NCCL's do not move an mpi calibration.
  const StepRecords nccl_set = parse_step_records(with_transport(R"({"NCCL_PROTO":"LL"})"), "nccl.jsonl");
  EXPECT_EQ(refine_calibration(base(), {with_cma, nccl_set}).files, 2);

  // What the records hold is what a calibration file can hold.
  const auto parse = [](const std::string& text) {
    return error_of([&] { (void)parse_step_records(text, "v.jsonl"); });
  };
  EXPECT_EQ(parse(with_transport(R"({"NCCL_ALGO":1})")),
            "ValueError: \"v.jsonl\" line 1: field \"transport\" has \"NCCL_ALGO\" = 1: expected a string of at most "
            "1024 bytes on one line");
  EXPECT_EQ(parse(with_transport(R"({"NCCL_ALGO":"a\nb"})")),
            "ValueError: \"v.jsonl\" line 1: field \"transport\" has \"NCCL_ALGO\" = \"a\\nb\": expected a string of "
            "at most 1024 bytes on one line");
  EXPECT_EQ(parse(with_transport(R"({"HOME":"/root"})")),
            "ValueError: \"v.jsonl\" line 1: field \"transport\" has \"HOME\": not a setting that shapes a "
            "collective's cost (meshloom/comm/transport.hpp lists them)");
  EXPECT_EQ(parse(with_transport("[]")),
            "ValueError: \"v.jsonl\" line 1: field \"transport\" = []: expected an object of strings");
}

TEST(Refine, TheTableNamesEveryCorrectedCurveAndBothErrors) {
  const RefineReport r = refine_calibration(
      base(), {parse_step_records(records(1.5, 0.75, 2.0), "a.jsonl"), parse_step_records(records(1.5, 0.75, 2.0), "b.jsonl")});
  const std::string t = refine_table(r);
  EXPECT_NE(t.find("# as-run corrections from 2 records files, 18 measured collectives"), std::string::npos) << t;
  EXPECT_NE(t.find("  all_reduce         2      1         2      2     12   0.75x   1.50x\n"), std::string::npos) << t;
  EXPECT_NE(t.find("  all_reduce         4      1         4      1      6   2.00x   2.00x\n"), std::string::npos) << t;
  EXPECT_NE(t.find("#   benchmark curves:             33.3% / 50.0%\n"), std::string::npos) << t;
  EXPECT_NE(t.find("#   as run, own file left out:    0.0% / 0.0%\n"), std::string::npos) << t;
}

// The command refuses a --min-steps it cannot use before it reads any file (here none exists), naming the value:
// one past int64's range included, which the option parser alone would have saturated silently.
TEST(RefineCli, AMinStepsOutOfRangeIsRefusedNamingTheValue) {
  const std::string files = "--calibration /nonexistent/c.json --records /nonexistent/v.jsonl --out /nonexistent/o.json";
  const auto r = meshloom::test::launch("refine " + files + " --min-steps 99999999999999999999 2>&1");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "error: ValueError: --min-steps \"99999999999999999999\": out of range for a 64-bit integer\n");
  const auto zero = meshloom::test::launch("refine " + files + " --min-steps 0 2>&1");
  EXPECT_EQ(zero.status, 2);
  EXPECT_EQ(zero.out, "error: ValueError: --min-steps 0: must be >= 1\n");
}

// A records file that cannot be read is named with the reason, whether missing or a directory.
TEST(RefineCli, ARecordsFileThatCannotBeReadIsNamedWithTheReason) {
  const meshloom::test::ScratchDir scratch("meshloom_refine_cli_");
  const std::string out = "'" + (scratch.write("keep", "").parent_path() / "o.json").string() + "'";
  const std::string calibration = std::string(MESHLOOM_SOURCE_DIR) + "/resources/calibration/vm-2.calibration.json";
  const auto missing =
      meshloom::test::launch("refine --calibration '" + calibration + "' --records /nonexistent/v.jsonl --out " + out + " 2>&1");
  EXPECT_EQ(missing.status, 2);
  EXPECT_EQ(missing.out, "error: RuntimeError: cannot read records \"/nonexistent/v.jsonl\": No such file or directory\n");
  const auto directory = meshloom::test::launch("refine --calibration '" + calibration + "' --records / --out " + out + " 2>&1");
  EXPECT_EQ(directory.status, 2);
  EXPECT_EQ(directory.out, "error: RuntimeError: cannot read records \"/\": Is a directory\n");
}

// An output path that names no file (an unset shell variable) or standard output is refused before anything is read,
// as rescore's --jsonl "" is (it was taken for "not given").
TEST(RefineCli, AnOutputThatNamesNoFileIsRefusedBeforeAnythingIsRead) {
  const std::string calibration = std::string(MESHLOOM_SOURCE_DIR) + "/resources/calibration/vm-2.calibration.json";
  const auto empty = meshloom::test::launch("refine --calibration '" + calibration +
                                            "' --records /nonexistent/v.jsonl --out '' 2>&1");
  EXPECT_EQ(empty.status, 2);
  EXPECT_EQ(empty.out, "error: ValueError: --out \"\": the path names no file\n");
  const auto dash = meshloom::test::launch("refine --calibration '" + calibration +
                                           "' --records /nonexistent/v.jsonl --out - 2>&1");
  EXPECT_EQ(dash.status, 2);
  EXPECT_EQ(dash.out, "error: ValueError: --out \"-\": this output is a file written whole (to a new file renamed "
                      "over it), not standard output; give a path\n");
  const auto rescore = meshloom::test::launch("rescore --records /nonexistent/v.jsonl --calibration '" + calibration +
                                              "' --jsonl '' 2>&1");
  EXPECT_EQ(rescore.status, 2);
  EXPECT_EQ(rescore.out, "error: ValueError: --jsonl \"\": the path names no file\n");
}

}  // namespace
}  // namespace meshloom::launcher
