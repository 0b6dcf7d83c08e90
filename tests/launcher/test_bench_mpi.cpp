// bench and calibrate end to end, run as users run them: `mpirun -np 2|4 meshloom-launch bench ...` (label mpi).
// The table and the JSON Lines stream must agree, the check must find no wrong element, busbw = algbw * factor,
// calibrate must write a calibration the engine accepts, and a mesh larger than the world must fail before any
// collective. With --jsonl -, standard output carries records alone (the table goes to stderr), error records of
// ranks other than the writer included.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch_support.hpp"
#include "meshloom/plan/cost_model.hpp"
#ifndef MESHLOOM_MPIEXEC
#error "MESHLOOM_MPIEXEC must name mpirun"
#endif

namespace {

using nlohmann::json;

using meshloom::test::Launched;
using meshloom::test::lines_of;
using meshloom::test::slurp;

const meshloom::test::ScratchDir scratch("meshloom_bench_mpi_");

std::filesystem::path temp_dir() { return scratch.path(); }

// Runs `command` through the shell with its stderr captured (through a file in the scratch directory).
Launched run_capturing_stderr(const std::string& command) {
  std::filesystem::create_directories(temp_dir());
  const auto err_path = temp_dir() / "stderr.txt";
  Launched r = meshloom::test::run_shell(command + " 2>" + meshloom::test::quoted(err_path.string()));
  r.err = slurp(err_path);
  return r;
}

// mpirun -np <np> meshloom-launch <args>, under a time limit; `env` prefixes the command (VAR=value ...).
Launched mpirun(int np, const std::string& args, const std::string& env = "") {
  return meshloom::test::mpirun_launch(scratch, np, args, env);
}

Launched launch(const std::string& args) { return run_capturing_stderr(meshloom::test::launch_command(args)); }

std::vector<json> records(const std::filesystem::path& path) {
  std::vector<json> out;
  std::istringstream in(slurp(path));
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

struct TableRow {
  std::string axis, collective;
  std::vector<std::string> cells;
};

// The data rows of the tables, each with the axis and collective of the `#` lines before it.
std::vector<TableRow> table_rows(const std::string& out) {
  std::vector<TableRow> rows;
  std::string axis, collective;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# axis ", 0) == 0) {
      axis = line.substr(7, line.find(':') - 7);
    } else if (line.rfind("# ", 0) == 0 && line.find(' ', 2) == std::string::npos) {
      collective = line.substr(2);
    } else if (!line.empty() && line[0] != '#') {
      TableRow row{axis, collective, {}};
      std::istringstream cells(line);
      for (std::string cell; cells >> cell;) row.cells.push_back(cell);
      rows.push_back(row);
    }
  }
  return rows;
}

double factor(const std::string& collective, double n) {
  if (collective == "all_reduce") return 2 * (n - 1) / n;
  if (collective == "broadcast") return 1;
  return (n - 1) / n;
}

void expect_table_matches_jsonl(const Launched& r, const std::filesystem::path& jsonl, int world) {
  const auto recs = records(jsonl);
  ASSERT_GE(recs.size(), 2U);
  EXPECT_EQ(recs.front()["type"], "config");
  EXPECT_EQ(recs.front()["world"], world);
  EXPECT_EQ(recs.back()["type"], "summary");
  EXPECT_EQ(recs.back()["ok"], true);
  std::vector<json> results;
  for (const auto& j : recs) {
    if (j["type"] == "result") results.push_back(j);
  }
  const auto rows = table_rows(r.out);
  ASSERT_EQ(rows.size(), results.size()) << r.out;
  ASSERT_FALSE(rows.empty());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const auto& j = results[i];
    ASSERT_EQ(row.cells.size(), 12U) << i;
    EXPECT_EQ(row.axis, j["axis"].get<std::string>());
    EXPECT_EQ(row.collective, j["collective"].get<std::string>());
    EXPECT_EQ(std::stoll(row.cells[0]), j["bytes"].get<std::int64_t>());
    EXPECT_EQ(std::stoll(row.cells[1]), j["count"].get<std::int64_t>());
    EXPECT_EQ(row.cells[2], j["dtype"].get<std::string>());
    const double time = j["time_us"].get<double>();
    EXPECT_NEAR(std::stod(row.cells[5]), time, time >= 100 ? 0.51 : 0.0051);
    const double algbw = j["algbw_gbps"].get<double>();
    const double busbw = j["busbw_gbps"].get<double>();
    EXPECT_NEAR(std::stod(row.cells[6]), algbw, 0.0051);
    EXPECT_NEAR(std::stod(row.cells[7]), busbw, 0.0051);
    EXPECT_EQ(row.cells[8], "0");
    EXPECT_EQ(j["wrong"], 0);
    const double n = j["group_size"].get<double>();
    EXPECT_NEAR(algbw, j["bytes"].get<double>() / (time * 1e3), 1e-12 * std::max(1.0, algbw));
    EXPECT_NEAR(busbw, algbw * factor(j["collective"].get<std::string>(), n), 1e-12 * std::max(1.0, busbw));
    // The timing protocol's statistics: the table's time is the mean (pipelined: total / iterations, nccl-tests'
    // figure) or the p50 (single_shot), then p95, the spread and the straggler's rank.
    const json& st = j["stats"];
    EXPECT_EQ(j["timing"], recs.front()["timing"]);
    EXPECT_EQ(st["iterations"], recs.front()["iters"]);
    EXPECT_DOUBLE_EQ(st[j["timing"] == "pipelined" ? "mean_us" : "p50_us"].get<double>(), time);
    EXPECT_LE(st["min_us"].get<double>(), st["p50_us"].get<double>());
    EXPECT_LE(st["p50_us"].get<double>(), st["p95_us"].get<double>());
    EXPECT_LE(st["p95_us"].get<double>(), st["p99_us"].get<double>());
    EXPECT_LE(st["p99_us"].get<double>(), st["max_us"].get<double>());
    EXPECT_GE(st["cv"].get<double>(), 0.0);
    const double p95 = st["p95_us"].get<double>();
    EXPECT_NEAR(std::stod(row.cells[9]), p95, p95 >= 100 ? 0.51 : 0.0051);
    EXPECT_NEAR(std::stod(row.cells[10]), 100 * st["cv"].get<double>(), 0.051);
    ASSERT_TRUE(st.contains("slowest")) << st.dump();
    const int slowest = st["slowest"]["rank"].get<int>();
    EXPECT_EQ(row.cells[11], std::to_string(slowest));
    EXPECT_GE(slowest, 0);
    EXPECT_LT(slowest, world);
    EXPECT_EQ(st["slowest"]["host"], recs.front()["hosts"][static_cast<std::size_t>(slowest)]);
    EXPECT_GE(st["slowest"]["iterations"].get<int>(), 1);
  }
  EXPECT_EQ(recs.front()["hosts"].size(), static_cast<std::size_t>(world));
  // One machine: every group on one host, all its ranks there.
  for (const auto& j : results) {
    EXPECT_EQ(j["span"], json({{"hosts", 1}, {"ranks_per_host", j["group_size"]}, {"uniform", true}})) << j.dump();
  }
  EXPECT_NE(r.out.find("# Out of bounds values : 0 OK"), std::string::npos);
  EXPECT_NE(r.out.find("# Avg bus bandwidth    : "), std::string::npos);
}

TEST(BenchMpi, FourRanksTableAndJsonlAgreeAndCheckPasses) {
  const auto jsonl = temp_dir() / "np4.jsonl";
  const Launched r = mpirun(4, "bench --shape 2,2 --names dp,tp --check -b 8 -e 4K -w 1 -n 3 --jsonl '" + jsonl.string() + "'");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("\033"), std::string::npos);  // no progress bar outside a terminal
  expect_table_matches_jsonl(r, jsonl, 4);
  // 2 axes x 5 collectives x 10 sizes.
  EXPECT_EQ(table_rows(r.out).size(), 100U);
  EXPECT_EQ(records(jsonl).front()["mesh"]["names"], json({"dp", "tp"}));
}

// A world of one rank (one GPU, say) measures its axes of size 1, in both timing modes.
TEST(BenchMpi, AWorldOfOneRankMeasuresItsAxes) {
  for (const std::string mode : {"pipelined", "single_shot"}) {
    const auto jsonl = temp_dir() / ("np1_" + mode + ".jsonl");
    const Launched r = mpirun(1, "bench --shape 1 --names dp --check -b 8 -e 4K -f 8 -w 1 -n 4 --timing " + mode +
                                     " --jsonl '" + jsonl.string() + "'");
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("# timing " + mode), std::string::npos) << r.out;
    const auto recs = records(jsonl);
    EXPECT_EQ(recs.front()["timing"], mode);
    EXPECT_EQ(recs.front()["axes"], json({"dp"}));
    EXPECT_EQ(recs.front()["skipped_axes"], json::array());
    EXPECT_EQ(table_rows(r.out).size(), 5U * 4U) << r.out;  // 5 collectives x 4 sizes (8 B .. 4 KiB)
    for (const auto& j : recs) {
      if (j["type"] != "result") continue;
      EXPECT_EQ(j["group_size"], 1);
      EXPECT_EQ(j["wrong"], 0);
      EXPECT_GT(j["time_us"].get<double>(), 0.0) << j.dump();
      EXPECT_EQ(j["stats"]["iterations"], 4);
    }
  }
}

TEST(BenchMpi, SingleShotModeOnFourRanksAgreesWithItsTable) {
  const auto jsonl = temp_dir() / "single.jsonl";
  const Launched r = mpirun(4, "bench --shape 2,2 --names dp,tp --check -b 64 -e 4K -f 8 -w 1 -n 5 --timing single_shot "
                               "--collectives all_reduce,reduce_scatter --axes dp,tp --jsonl '" + jsonl.string() + "'");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto recs = records(jsonl);
  EXPECT_EQ(recs.front()["timing"], "single_shot");
  const auto rows = table_rows(r.out);
  EXPECT_EQ(rows.size(), 2U * 2U * 3U);
  EXPECT_NE(r.out.find("# timing single_shot"), std::string::npos) << r.out;
}

// --rounds: the sweep repeated, every row reported once, in the last round, over all of its iterations; the header
// and the config record say so; more rounds than iterations is a usage error naming the value. calibrate takes 4
// rounds unless told otherwise (fewer when -n is smaller).
TEST(BenchMpi, RoundsRepeatTheSweepAndReportEveryRowOverAllItsIterations) {
  const auto jsonl = temp_dir() / "rounds.jsonl";
  const Launched r = mpirun(2, "bench --shape 2 --names dp --check -b 1K -e 4K -f 2 -w 1 -n 7 --rounds 3 --timing "
                               "single_shot --collectives all_gather,all_reduce --jsonl '" + jsonl.string() + "'");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("iterations 7 in 3 rounds (the sweep repeated, warm-up each round)"), std::string::npos) << r.out;
  EXPECT_EQ(table_rows(r.out).size(), 2U * 3U);
  const auto recs = records(jsonl);
  EXPECT_EQ(recs.front()["rounds"], 3);
  int results = 0;
  for (const auto& rec : recs) {
    if (rec["type"] != "result") continue;
    ++results;
    EXPECT_EQ(rec["stats"]["iterations"], 7) << rec.dump();
    EXPECT_EQ(rec["wrong"], 0) << rec.dump();
  }
  EXPECT_EQ(results, 6);

  const Launched bad = mpirun(2, "bench --shape 2 --names dp -b 8 -e 8 -n 2 --rounds 3");
  EXPECT_EQ(bad.status, 2) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("--rounds 3: must be in [1, 2] (at most one round per iteration, -n)"), std::string::npos)
      << bad.err;

  const auto cal_records = temp_dir() / "rounds-cal.jsonl";
  const Launched c = mpirun(2, "calibrate --shape 2 --names dp --collectives all_gather -b 1K -e 4K -w 0 -n 3 --out '" +
                                   (temp_dir() / "rounds.calibration.json").string() + "' --jsonl '" +
                                   cal_records.string() + "'");
  ASSERT_EQ(c.status, 0) << c.out << c.err;
  EXPECT_EQ(records(cal_records).front()["rounds"], 3);  // 4, but no more than -n
}

TEST(BenchMpi, AnUnknownTimingModeIsAUsageError) {
  const Launched r = mpirun(2, "bench --shape 2 --names dp -b 8 -e 8 --timing single-shot");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--timing \"single-shot\": expected pipelined or single_shot"), std::string::npos) << r.err;
}

TEST(BenchMpi, ACollectiveGivenTwiceIsAUsageError) {
  // As --axes refuses an axis given twice: the sweep would measure it twice, two results of one key.
  const Launched r = mpirun(2, "bench --shape 2 --names dp -b 8 -e 8 --collectives all_reduce,all_gather,all_reduce");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--collectives: collective 'all_reduce' is given twice"), std::string::npos) << r.err;
}

TEST(BenchMpi, TwoRanksSkipsAxesOfSizeOneAndRunsFlattenedAxes) {
  const auto jsonl = temp_dir() / "np2.jsonl";
  const Launched r = mpirun(2, "bench --shape 2,1 --names dp,tp --flatten dp,tp --check -b 8 -e 64 -w 1 -n 2 "
                               "--collectives all_reduce,all_to_all --jsonl '" + jsonl.string() + "'");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("skipped (size 1): tp"), std::string::npos) << r.out;
  expect_table_matches_jsonl(r, jsonl, 2);
  const auto recs = records(jsonl);
  EXPECT_EQ(recs.front()["skipped_axes"], json({"tp"}));
  EXPECT_EQ(recs.front()["axes"], json({"dp", "dp_tp"}));
}

// Ranks that take turns on one CPU are told, in a comment line of the header, how to time steadier.
TEST(BenchMpi, RanksThatShareACpuAreNotedInTheHeader) {
  if (::sched_getscheduler(0) != SCHED_OTHER) GTEST_SKIP() << "the tests run under another scheduling policy";
  const std::string one_cpu = meshloom::test::one_cpu_prefix();
  ASSERT_NE(one_cpu, "");
  const Launched r = mpirun(2, "bench --shape 2 --names dp -b 8 -e 8 -w 1 -n 2 --collectives all_reduce", one_cpu);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const std::vector<std::string> lines = meshloom::test::lines_of(r.out);
  const auto starting = [&](const std::string& prefix) {
    return std::find_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.starts_with(prefix); });
  };
  const auto note = starting("# note: ");
  ASSERT_NE(note, lines.end()) << r.out;
  EXPECT_TRUE(note->starts_with("# note: 2 ranks share 1 CPU on host " + meshloom::test::this_host() + " under "))
      << *note;
  // It stands in the header, before the first axis' table.
  EXPECT_LT(note - lines.begin(), starting("# axis ") - lines.begin()) << r.out;
}

// --jsonl -: standard output carries the records alone, as the desktop app reads them; the table goes to stderr.
TEST(BenchMpi, JsonlDashPutsRecordsOnStdoutAndTheTableOnStderr) {
  const Launched r = mpirun(2, "bench --shape 2 --names dp -b 1K -e 4K -w 1 -n 2 --collectives all_reduce,all_gather "
                               "--jsonl -");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 1U + 2U * 3U + 1U) << r.out;  // config, 2 collectives x 3 sizes, summary
  std::vector<json> recs;
  for (const auto& line : lines) recs.push_back(json::parse(line));  // every line a record
  EXPECT_EQ(recs.front()["type"], "config");
  EXPECT_EQ(recs.back()["type"], "summary");
  EXPECT_EQ(recs.back()["ok"], true);
  for (std::size_t i = 1; i + 1 < recs.size(); ++i) EXPECT_EQ(recs[i]["type"], "result") << lines[i];
  EXPECT_EQ(table_rows(r.err).size(), 6U) << r.err;  // the table, for people, on stderr
  EXPECT_NE(r.err.find("# Avg bus bandwidth    : "), std::string::npos) << r.err;
}

// --jsonl - when the writer (rank 0) hangs: the ranks whose collective times out write their own error record to
// their own standard output (mpirun forwards it), so standard output stays records alone, every line whole, and the
// first rank to time out always gets its record out before it aborts the job.
TEST(BenchMpi, JsonlDashCarriesTheErrorRecordsOfRanksOtherThanTheWriter) {
  const Launched r = mpirun(4, "bench --shape 2,2 --names dp,tp --collectives all_reduce -b 8 -e 64 -w 1 -n 2 "
                               "--timeout 2 --jsonl -",
                            "MESHLOOM_TEST_FAULT=hang:0:2");
  EXPECT_NE(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.status, 124) << "the job hung until the outer timeout";
  std::vector<json> recs;
  for (const auto& line : lines_of(r.out)) {
    ASSERT_NO_THROW(recs.push_back(json::parse(line))) << "not a record: " << line;
  }
  ASSERT_GE(recs.size(), 4U) << r.out << r.err;
  EXPECT_EQ(recs[0]["type"], "config");
  EXPECT_EQ(recs[1]["type"], "result");
  EXPECT_EQ(recs[2]["type"], "result");  // rows 0 and 1; rank 0 hangs before row 2
  std::size_t errors = 0;
  for (std::size_t i = 3; i < recs.size(); ++i) {
    ASSERT_EQ(recs[i]["type"], "error") << recs[i].dump();
    EXPECT_NE(recs[i]["rank"], 0) << recs[i].dump();  // rank 0 is the one that hangs
    // The kind once, then the message: "TimeoutError: world rank 1 (rank ...".
    EXPECT_EQ(recs[i]["message"].get<std::string>().rfind("TimeoutError: world rank ", 0), 0U) << recs[i].dump();
    ++errors;
  }
  EXPECT_GE(errors, 1U) << r.out;
}

TEST(BenchMpi, CalibrateWritesACalibrationTheEngineUses) {
  const auto jsonl = temp_dir() / "cal.jsonl";
  const auto out = temp_dir() / "calibration.json";
  const Launched r = mpirun(4, "calibrate --shape 2,2 --names dp,tp --check -b 1K -e 256K -f 4 -w 1 -n 3 --jsonl '" +
                                   jsonl.string() + "' --out '" + out.string() + "'");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("# Fits: "), std::string::npos);
  const meshloom::Calibration c = meshloom::load_calibration(out);
  EXPECT_EQ(c.backend, "mpi");
  EXPECT_EQ(c.timing, "single_shot");  // calibrate's default: the planner's steps meet collectives one at a time
  EXPECT_EQ(c.world, 4);
  EXPECT_EQ(c.mesh_shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(c.mesh_names, (std::vector<std::string>{"dp", "tp"}));
  ASSERT_TRUE(c.axes.contains("dp"));
  ASSERT_TRUE(c.axes.contains("tp"));
  const meshloom::CalibratedCostModel model(c, c.mesh_names);
  const std::vector<std::int64_t> shape{2, 2};
  for (std::size_t axis = 0; axis < 2; ++axis) {
    meshloom::StepCostInput step;
    step.collective = meshloom::Collective::AllGather;
    step.axis = axis;
    step.mesh_shape = &shape;
    step.local_bytes = 1 << 16;
    if (c.axes.at(c.mesh_names[axis]).contains("all_gather")) {
      const double cost = model.step_cost(step);
      EXPECT_TRUE(std::isfinite(cost));
      EXPECT_GT(cost, 0);
    }
  }
  // --from the same JSON Lines, without MPI: the same calibration.
  const auto again = temp_dir() / "again.json";
  const Launched f = launch("calibrate --from '" + jsonl.string() + "' --out '" + again.string() + "'");
  ASSERT_EQ(f.status, 0) << f.out << f.err;
  EXPECT_EQ(slurp(again), slurp(out));
}

// The loop closed: a calibration measured on (2,2) prices layouts never run there, by their groups' shape, within
// generous bounds (30x of the fastest iteration) of what those layouts measure: a 1-D mesh of 4 ranks (run for real) and the flattened (4,) group
// (benched alone).
TEST(BenchMpi, ACalibrationFromTwoByTwoPricesOtherLayouts) {
  const auto out = temp_dir() / "loop.calibration.json";
  const Launched c = mpirun(4, "calibrate --shape 2,2 --names dp,tp --collectives all_reduce -b 256K -e 4M -f 4 -w 2 "
                               "-n 7 --out '" + out.string() + "'");
  ASSERT_EQ(c.status, 0) << c.out << c.err;
  const meshloom::Calibration cal = meshloom::load_calibration(out);
  EXPECT_EQ(cal.rank_hosts.size(), 4U);
  std::vector<meshloom::GroupShape> shapes;
  for (const auto& g : cal.groups) shapes.push_back(g.shape);
  // dp and tp have one shape on one host (2 ranks), the flattened dp_tp another (4 ranks).
  const meshloom::GroupShape two{2, 1, 2}, four{4, 1, 4};
  ASSERT_EQ(shapes, (std::vector<meshloom::GroupShape>{two, four})) << slurp(out);
  EXPECT_NE(c.out.find("# Curves by group shape"), std::string::npos) << c.out;
  const meshloom::CalibratedCostModel model(cal, {});
  // Generous: within 30x of the fastest iteration. CI runs other tests beside these 4 ranks on few cores, where the
  // calibration's median can stretch 10x (10.7x once, 2026-11-26, beside the app tests); what this must catch is a
  // wrong curve, size or unit (1e3, 1e6), not the machine's load.
  const auto within = [](double predicted, double measured) {
    return measured > 0 && predicted > 0 && predicted / measured < 30 && measured / predicted < 30;
  };
  const auto fastest = [](const json& iterations) {
    double least = 0;
    for (const auto& t : iterations) least = least == 0 ? t.get<double>() : std::min(least, t.get<double>());
    return least;
  };

  // A 1-D mesh of 4 ranks (never calibrated: the calibration's mesh is (2,2)), 2 MiB of float64, P(sum) -> R.
  const auto records_path = temp_dir() / "loop.run.jsonl";
  const Launched r = mpirun(4, "run --mesh 4 --tensor 512,512 --src 'P(sum)' --dst R --iterations 5 --calibration '" +
                                   out.string() + "' --jsonl '" + records_path.string() + "'");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  std::size_t steps = 0;
  for (const json& rec : records(records_path)) {
    if (rec["type"] != "step") continue;
    ++steps;
    EXPECT_EQ(rec["collective"], "all_reduce");
    const double predicted = rec["predicted"]["calibrated"].get<double>();
    const double measured = fastest(rec["iterations_us"]);
    EXPECT_DOUBLE_EQ(predicted, *model.predict_us("all_reduce", four, 512.0 * 512 * 8));
    EXPECT_TRUE(within(predicted, measured)) << "predicted " << predicted << " us, measured " << measured << " us";
  }
  EXPECT_EQ(steps, 1U) << r.out;

  // The flattened group of (2,2), benched alone, single-shot as calibrate times.
  const auto bench_path = temp_dir() / "loop.bench.jsonl";
  const Launched b = mpirun(4, "bench --shape 2,2 --names dp,tp --flatten dp,tp --axes dp_tp --collectives all_reduce "
                               "-b 1M -e 1M -w 2 -n 7 --timing single_shot --jsonl '" + bench_path.string() + "'");
  ASSERT_EQ(b.status, 0) << b.out << b.err;
  std::size_t results = 0;
  for (const json& rec : records(bench_path)) {
    if (rec["type"] != "result") continue;
    ++results;
    EXPECT_EQ(rec["span"]["ranks_per_host"], 4);
    const double measured = rec["stats"]["min_us"].get<double>();
    const double predicted = *model.predict_us("all_reduce", four, rec["bytes"].get<double>());
    EXPECT_TRUE(within(predicted, measured)) << "predicted " << predicted << " us, measured " << measured << " us";
  }
  EXPECT_EQ(results, 1U) << b.out;
}

// calibrate --shapes: the job's own group shapes, from a mesh of the world's prime factors ((2,2) on 4 ranks) and its
// flattening; f1's groups have f0's shape on one host, so it is not run twice.
TEST(BenchMpi, CalibrateShapesMeasuresEveryGroupSizeOfTheWorld) {
  const auto out = temp_dir() / "shapes.calibration.json";
  const Launched c = mpirun(4, "calibrate --shapes --collectives all_reduce -b 1K -e 64K -f 8 -w 1 -n 3 --out '" +
                                   out.string() + "'");
  ASSERT_EQ(c.status, 0) << c.out << c.err;
  EXPECT_NE(c.out.find("# mesh (f0=2, f1=2)"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("# not run (their groups have the shape of an axis run before them): f1"), std::string::npos)
      << c.out;
  const meshloom::Calibration cal = meshloom::load_calibration(out);
  std::vector<meshloom::GroupShape> shapes;
  for (const auto& g : cal.groups) shapes.push_back(g.shape);
  EXPECT_EQ(shapes, (std::vector<meshloom::GroupShape>{{2, 1, 2}, {4, 1, 4}})) << slurp(out);
  const Launched bad = mpirun(4, "calibrate --shapes --shape 2,2 --out '" + out.string() + "'");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--shapes measures the job's own group shapes; --shape cannot be combined with it"),
            std::string::npos) << bad.err;
}

// validate end to end on 2 ranks: a calibration with curves, a suite of two requests, every record the docs name, every
// plan verified; the bundled suite whole; an old per-axis calibration for another mesh, and one of another backend or
// timed pipelined, are usage errors naming what does not fit.
TEST(BenchMpi, ValidateRunsEveryModelsCheapestPlansAndScoresThem) {
  const auto cal = temp_dir() / "validate.calibration.json";
  const Launched c = mpirun(2, "calibrate --shape 2 --names dp --collectives all_reduce,all_gather,reduce_scatter,"
                               "all_to_all --dtype float64 -b 1K -e 64K -f 4 -w 1 -n 3 --out '" + cal.string() + "'");
  ASSERT_EQ(c.status, 0) << c.out << c.err;
  const auto suite = scratch.write("suite.jsonl",
                                   "# two requests\n"
                                   "{\"mesh\": [2], \"tensor_shape\": [16, 32], \"src\": \"S(0)\", \"dst\": \"S(1)\"}\n"
                                   "{\"mesh\": [2], \"tensor_shape\": [16, 32], \"src\": \"P(sum)\", \"dst\": \"R\"}\n");
  const auto records_path = temp_dir() / "validate.jsonl";
  const Launched v = mpirun(2, "validate --calibration '" + cal.string() + "' --suite '" + suite.string() +
                                   "' --k 2 --iterations 3 --jsonl '" + records_path.string() + "'");
  ASSERT_EQ(v.status, 0) << v.out << v.err;
  EXPECT_NE(v.out.find("models over 2 requests"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("time lost mean / max"), std::string::npos) << v.out;
  std::map<std::string, int> counts;
  std::vector<std::string> reported;
  std::vector<std::string> drift;
  // Each model's time lost, recomputed from the records: per request, its pick's measured total over the fastest's,
  // minus 1.
  std::map<std::pair<int, int>, double> measured;  // (request, plan) -> measured_us
  std::map<int, json> picks;                       // request -> picks
  std::map<std::string, std::vector<double>> lost;  // model -> per request
  std::map<std::string, json> time_lost;            // model -> the report's
  // Each model's wrong picks between plans it priced alike (within 0.1%), recomputed from the plan records.
  std::map<std::pair<int, int>, json> predicted;  // (request, plan) -> per model
  std::map<std::string, int> alike;               // model -> recomputed
  std::map<std::string, int> alike_reported;
  for (const json& rec : records(records_path)) {
    ++counts[rec["type"].get<std::string>()];
    if (rec["type"] == "request") picks[rec["request"].get<int>()] = rec["picks"];
    if (rec["type"] == "plan") predicted[{rec["request"].get<int>(), rec["plan"].get<int>()}] = rec["predicted"];
    if (rec["type"] == "summary") {
      EXPECT_TRUE(rec["verified"].get<bool>()) << rec.dump();
      measured[{rec["request"].get<int>(), rec["plan"].get<int>()}] = rec["measured_us"].get<double>();
    }
    if (rec["type"] == "verdict") {
      EXPECT_LT(rec["fastest"].get<int>(), 8);
      const int q = rec["request"].get<int>();
      const double fastest = measured.at({q, rec["fastest"].get<int>()});
      for (const auto& [model, pick] : picks.at(q).items()) {
        lost[model].push_back(measured.at({q, pick.get<int>()}) / fastest - 1);
        if (rec["right"][model].get<bool>()) continue;
        const json& mine = predicted.at({q, pick.get<int>()})[model];
        const json& best = predicted.at({q, rec["fastest"].get<int>()})[model];
        if (mine.is_number() && best.is_number() &&
            std::abs(mine.get<double>() - best.get<double>()) <=
                0.001 * std::max(std::abs(mine.get<double>()), std::abs(best.get<double>()))) {
          ++alike[model];
        }
      }
    }
    if (rec["type"] == "report") {
      reported.push_back(rec["model"].get<std::string>());
      EXPECT_EQ(rec["requests"], 2);
      time_lost[rec["model"].get<std::string>()] = rec.at("time_lost");
      alike_reported[rec["model"].get<std::string>()] = rec.at("misses_priced_alike").get<int>();
    }
    if (rec["type"] == "step") {
      EXPECT_TRUE(rec.contains("request") && rec["predicted"].contains("calibrated"));
      EXPECT_EQ(rec["stats"]["iterations"], 3) << rec.dump();  // 3 rounds of one
    }
    if (rec["type"] == "config") {
      EXPECT_EQ(rec["rounds"], 3);
    }
    if (rec["type"] == "drift") {
      drift.push_back(rec["when"].get<std::string>());
      // The calibration's 16K sizes (1K, 4K, 16K, 64K): anchors at 4K, 16K and 64K, every collective on dp.
      EXPECT_EQ(rec["anchors"].size(), 4U * 3U) << rec.dump();
      for (const auto& a : rec["anchors"]) {
        EXPECT_GT(a["measured_us"].get<double>(), 0) << a.dump();
        EXPECT_GT(a["calibrated_us"].get<double>(), 0) << a.dump();
        EXPECT_EQ(a["n"], 2);
      }
    }
  }
  for (const auto& [model, reported_lost] : time_lost) {
    const std::vector<double>& l = lost[model];
    ASSERT_EQ(l.size(), 2U) << model;
    EXPECT_NEAR(reported_lost["mean"].get<double>(), (l[0] + l[1]) / 2, 1e-9) << model;
    EXPECT_NEAR(reported_lost["max"].get<double>(), std::max(l[0], l[1]), 1e-9) << model;
    EXPECT_GE(l[0], 0.0);
    EXPECT_GE(l[1], 0.0);
  }
  EXPECT_EQ(time_lost.size(), 3U);
  EXPECT_EQ(drift, (std::vector<std::string>{"before", "after"}));
  EXPECT_NE(v.out.find("drift before the requests: the calibration's points re-timed measure "), std::string::npos)
      << v.out;
  EXPECT_EQ(counts["config"], 1);
  EXPECT_EQ(counts["request"], 2);
  EXPECT_EQ(counts["verdict"], 2);
  EXPECT_GE(counts["plan"], 4);  // two models' two cheapest, at least two distinct per request
  EXPECT_EQ(counts["plan"], counts["summary"]);
  EXPECT_EQ(counts["end"], 1);
  EXPECT_EQ(reported, (std::vector<std::string>{"fixed", "comm", "calibrated"}));
  int alike_total = 0;
  for (const auto& model : reported) {
    EXPECT_EQ(alike_reported.at(model), alike[model]) << model;
    alike_total += alike[model];
  }
  // The human report says so where there are any, on the request's line and under the table, and not otherwise.
  const bool said = v.out.find("wrong picks between plans the model priced alike") != std::string::npos;
  EXPECT_EQ(said, alike_total > 0) << v.out;
  EXPECT_EQ(v.out.find(", WRONG, priced alike)") != std::string::npos, alike_total > 0) << v.out;

  // The bundled suite with the default k = 3, as a user first runs it (its iterations cut to 3 in one round): every
  // request offers a choice (two or more distinct plans), every plan verifies, and every model is reported over all
  // 20 requests, 4 KiB to 64 MiB (the curves, measured to 64 KiB, extend at their largest point's algbw, or their
  // last segment's bandwidth where slower).
  const auto bundled_path = temp_dir() / "validate.bundled.jsonl";
  const Launched bundled = mpirun(2, "validate --calibration '" + cal.string() +
                                         "' --iterations 3 --rounds 1 --jsonl '" + bundled_path.string() + "'");
  ASSERT_EQ(bundled.status, 0) << bundled.out << bundled.err;
  EXPECT_NE(bundled.out.find("models over 20 requests"), std::string::npos) << bundled.out;
  std::map<int, int> plans_of;  // request -> its distinct plans
  int summaries = 0, verified = 0, reports = 0;
  for (const json& rec : records(bundled_path)) {
    if (rec["type"] == "plan") ++plans_of[rec["request"].get<int>()];
    if (rec["type"] == "summary") {
      ++summaries;
      verified += rec["verified"].get<bool>() ? 1 : 0;
    }
    if (rec["type"] == "report") {
      ++reports;
      EXPECT_EQ(rec["requests"], 20) << rec.dump();
    }
  }
  EXPECT_EQ(plans_of.size(), 20U);
  for (const auto& [request, plans] : plans_of) EXPECT_GE(plans, 2) << "request " << request;
  EXPECT_EQ(verified, summaries);
  EXPECT_GE(summaries, 40);
  EXPECT_EQ(reports, 3);

  // refine: the two runs' step records correct the calibration's curves (as-run factors at the sizes they measured,
  // the benchmark points kept), and validate prices its plans by the corrected calibration.
  const auto refined = temp_dir() / "validate.refined.calibration.json";
  // --any-level: this shared machine's speed may move past the level band between the runs.
  const Launched rf = launch("refine --any-level --calibration '" + cal.string() + "' --records '" +
                             records_path.string() + "' --records '" + bundled_path.string() + "' --out '" +
                             refined.string() + "'");
  ASSERT_EQ(rf.status, 0) << rf.out << rf.err;
  const auto held = rf.out.find("#   as run, own file left out:    ");
  ASSERT_NE(held, std::string::npos) << rf.out;
  EXPECT_NE(rf.out.substr(held, rf.out.find('\n', held) - held).find("% / "), std::string::npos) << rf.out;
  const meshloom::Calibration plain = meshloom::load_calibration(cal);
  const meshloom::Calibration corrected = meshloom::load_calibration(refined);
  ASSERT_EQ(corrected.groups.size(), plain.groups.size());
  int corrected_curves = 0;
  for (std::size_t g = 0; g < plain.groups.size(); ++g) {
    EXPECT_EQ(corrected.groups[g].points, plain.groups[g].points);
    if (!corrected.groups[g].as_run.empty()) ++corrected_curves;
    for (const auto& p : corrected.groups[g].as_run) EXPECT_GE(p.steps, 3) << corrected.groups[g].collective;
  }
  EXPECT_GE(corrected_curves, 2);  // the suites run every collective at sizes of 3 steps or more (all 4 here so far)
  const Launched rv = mpirun(2, "validate --calibration '" + refined.string() + "' --suite '" + suite.string() +
                                    "' --k 2 --iterations 3");
  ASSERT_EQ(rv.status, 0) << rv.out << rv.err;
  EXPECT_NE(rv.out.find("models over 2 requests"), std::string::npos) << rv.out;
  // Records of a run that does not say where its ranks sat cannot be keyed by group shape: refused, nothing written.
  const auto hostless = scratch.write("hostless.jsonl", "{\"type\": \"config\", \"backend\": \"mpi\"}\n");
  const auto nowhere = temp_dir() / "validate.nowhere.calibration.json";
  const Launched bad = launch("refine --calibration '" + cal.string() + "' --records '" + hostless.string() +
                              "' --out '" + nowhere.string() + "'");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("line 1: no field \"hosts\""), std::string::npos) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(nowhere));

  const Launched old = mpirun(2, "validate --calibration '" + std::string(MESHLOOM_SOURCE_DIR) +
                                     "/resources/calibration/local-2x2.calibration.json' --suite '" + suite.string() + "'");
  EXPECT_EQ(old.status, 2);
  EXPECT_NE(old.err.find("request 0 ((2) 16x32 S(0) -> S(1)): the calibration is for mesh [2,2]"), std::string::npos)
      << old.err;

  // A calibration of another backend's collectives, or of pipelined ones, does not price what validate times.
  json doc = json::parse(slurp(cal));
  doc["backend"] = "nccl";
  const auto nccl = scratch.write("nccl.calibration.json", doc.dump());
  const Launched other = mpirun(2, "validate --calibration '" + nccl.string() + "' --suite '" + suite.string() + "'");
  EXPECT_EQ(other.status, 2);
  EXPECT_NE(other.err.find("\"" + nccl.string() + "\": measured on the nccl backend, but this run's collectives run "
                           "on mpi"), std::string::npos) << other.err;
  doc["backend"] = "mpi";
  doc["timing"] = "pipelined";
  const auto piped = scratch.write("pipelined.calibration.json", doc.dump());
  const Launched pipelined =
      mpirun(2, "validate --calibration '" + piped.string() + "' --suite '" + suite.string() + "'");
  EXPECT_EQ(pipelined.status, 2);
  EXPECT_NE(pipelined.err.find("timing = pipelined (collectives back to back, one wait)"), std::string::npos)
      << pipelined.err;
  EXPECT_EQ(pipelined.out.find("models over"), std::string::npos) << pipelined.out;
}

TEST(BenchMpi, ABadTimeoutIsAUsageErrorNamingTheValue) {
  for (const std::string value : {"nan", "1e300", "-1", "inf"}) {
    const Launched r = mpirun(2, "bench --shape 2 --names dp -b 8 -e 8 --timeout " + value);
    EXPECT_EQ(r.status, 2) << value << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("ValueError: --timeout \"" + value + "\""), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("# axis"), std::string::npos) << r.out;
  }
}

TEST(BenchMpi, MeshLargerThanTheWorldFailsBeforeAnyCollective) {
  const auto jsonl = temp_dir() / "bad.jsonl";
  const Launched r = mpirun(2, "bench --shape 2,2 --names dp,tp --check -b 8 -e 4K --jsonl '" + jsonl.string() + "'");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("ValueError: the mesh (dp=2, tp=2) needs 4 ranks but the MPI world has 2"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("# axis"), std::string::npos);
  const auto recs = records(jsonl);
  ASSERT_EQ(recs.size(), 1U);
  EXPECT_EQ(recs[0]["type"], "error");
  EXPECT_EQ(recs[0]["rank"], 0);
  // --world that is not the MPI world.
  const Launched w = mpirun(2, "bench --shape 2 --names dp --world 4 -b 8 -e 8");
  EXPECT_NE(w.status, 0);
  EXPECT_NE(w.err.find("--world 4 but the MPI world has 2 ranks"), std::string::npos) << w.err;
}

// A rank that fails before the run while rank 0 is slow to create the --jsonl file (MESHLOOM_TEST_FAULT=setup:1:MS:
// rank 0 waits MS ms first): rank 1's own error record must be in the file, written after rank 0's truncation, never
// before it (where the truncation would erase it); rank 0 says that another rank failed. An earlier run's records
// are gone.
void expect_early_error_survives(const std::string& command) {
  const auto jsonl = temp_dir() / (command + "_early.jsonl");
  std::ofstream(jsonl) << "{\"type\":\"stale\"}\n";
  const std::string out = command == "calibrate" ? " --out '" + (temp_dir() / "early.json").string() + "'" : "";
  const Launched r = mpirun(2,
                            command + " --shape 2 --names dp -b 8 -e 8 -w 1 -n 1 --jsonl '" + jsonl.string() + "'" + out,
                            "MESHLOOM_TEST_FAULT=setup:1:1500");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  const std::string injected = "RuntimeError: MESHLOOM_TEST_FAULT: world rank 1 failed before the run (injected)";
  EXPECT_NE(r.err.find("rank 1: error: " + injected), std::string::npos) << r.err;
  std::vector<json> recs;
  ASSERT_NO_THROW(recs = records(jsonl)) << slurp(jsonl);
  ASSERT_EQ(recs.size(), 2U) << slurp(jsonl);
  std::map<int, std::string> messages;
  for (const auto& j : recs) {
    ASSERT_EQ(j["type"], "error") << j.dump();
    messages[j["rank"].get<int>()] = j["message"].get<std::string>();
  }
  EXPECT_EQ(messages[1], injected) << slurp(jsonl);
  EXPECT_EQ(messages[0], "RuntimeError: another rank failed before the run (see its message)") << slurp(jsonl);
}

TEST(BenchMpi, AnotherRanksEarlyErrorRecordSurvivesRankZerosTruncation) { expect_early_error_survives("bench"); }

TEST(BenchMpi, CalibrateKeepsAnotherRanksEarlyErrorRecord) { expect_early_error_survives("calibrate"); }

// A rank that stops making progress (MESHLOOM_TEST_FAULT=hang, before the third result row) or dies (exit): the
// others' collective times out or fails, the job ends non-zero well within the outer limit, and the stream holds
// the config and the rows measured before, every line whole.
void expect_fault_ends_the_job(const std::string& fault, bool names_timeout) {
  const auto jsonl = temp_dir() / "fault.jsonl";
  std::filesystem::remove(jsonl);
  const auto start = std::chrono::steady_clock::now();
  const Launched r = mpirun(4,
                            "bench --shape 2,2 --names dp,tp --collectives all_reduce -b 8 -e 64 -w 1 -n 2 "
                            "--timeout 2 --jsonl '" + jsonl.string() + "'",
                            "MESHLOOM_TEST_FAULT=" + fault);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.status, 124) << "the job hung until the outer timeout";
  EXPECT_LT(seconds, 40.0);
  if (names_timeout) {
    EXPECT_NE(r.err.find("error: TimeoutError: world rank "), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("TimeoutError: TimeoutError"), std::string::npos) << r.err;  // the kind once
    EXPECT_NE(r.err.find("did not complete within the timeout of 2000 ms"), std::string::npos) << r.err;
  }
  std::vector<json> recs;
  ASSERT_NO_THROW(recs = records(jsonl)) << slurp(jsonl);
  ASSERT_GE(recs.size(), 3U) << slurp(jsonl);
  EXPECT_EQ(recs[0]["type"], "config");
  EXPECT_EQ(recs[1]["type"], "result");
  EXPECT_EQ(recs[2]["type"], "result");
  for (const auto& j : recs) {
    EXPECT_NE(j["type"], "summary");
    if (names_timeout && j["type"] == "error" && j["message"].get<std::string>().find("Timeout") != std::string::npos) {
      EXPECT_EQ(j["message"].get<std::string>().rfind("TimeoutError: world rank ", 0), 0U) << j.dump();
    }
  }
}

TEST(BenchMpi, ARankThatHangsIsReportedByTheTimeoutAndTheJobAborts) { expect_fault_ends_the_job("hang:3:2", true); }

TEST(BenchMpi, ARankThatDiesEndsTheJobNonZeroAndKeepsTheStreamValid) { expect_fault_ends_the_job("exit:1:2", false); }

}  // namespace

// Issue 15's proof: on 4 local ranks, the advisor's ranking of the (2,2) layouts in both orders and the 1-D layouts,
// under a calibration from this machine (calibrate --shapes), against the ranking measured by running every
// candidate's workload for real (advise --measure: every plan verified). Generous bounds: CI runs these 4 ranks on
// 2 shared cores beside other tests, where a median can stretch 2x. Seen on such a machine (3 runs): the predicted
// best, (dp 4, tp 1), measured fastest every time; Spearman 0.32, 0.63, 0.95 (the two orders of (2,2) are priced
// alike and measure within noise of each other, which bounds it).
TEST(BenchMpi, AdviseMeasureAgreesWithTheMeasuredRanking) {
  const auto cal = temp_dir() / "advise.calibration.json";
  const Launched c = mpirun(4, "calibrate --shapes --collectives all_reduce,all_gather,reduce_scatter,all_to_all "
                               "--dtype float64 -b 1K -e 4M -f 4 -w 1 -n 5 --out '" + cal.string() + "'");
  ASSERT_EQ(c.status, 0) << c.out << c.err;
  const std::string design = std::string(MESHLOOM_SOURCE_DIR) + "/resources/examples/advisor-2x2.meshloom.json";
  const auto records_path = temp_dir() / "advise.jsonl";
  const Launched a = mpirun(4, "advise --design '" + design + "' --calibration '" + cal.string() +
                                   "' --search both --top 0 --measure --iterations 5 --jsonl '" +
                                   records_path.string() + "'");
  ASSERT_EQ(a.status, 0) << a.out << a.err;
  EXPECT_NE(a.out.find("measured/step"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("rank correlation (Spearman)"), std::string::npos) << a.out;
  std::map<std::string, double> measured, predicted;
  std::string first;
  json verdict;
  for (const json& rec : records(records_path)) {
    if (rec["type"] == "advise_verdict") verdict = rec;
    if (rec["type"] != "advise_measured") continue;
    const std::string layout = rec["layout"].get<std::string>();
    if (rec["rank"] == 1) first = layout;
    EXPECT_EQ(rec["verified"], true) << rec.dump();
    ASSERT_FALSE(rec["items"].empty()) << rec.dump();
    double sum = 0;
    for (const json& item : rec["items"]) {
      EXPECT_EQ(item["verified"], true) << item.dump();
      EXPECT_GT(item["elements_checked"].get<std::int64_t>(), 0) << item.dump();
      sum += item["measured_us"].get<double>();
    }
    EXPECT_NEAR(sum, rec["measured_us"].get<double>(), 1e-6 * sum);
    measured[layout] = rec["measured_us"].get<double>();
    predicted[layout] = rec["predicted"].get<double>();
    EXPECT_GT(measured[layout], 0.0);
  }
  const std::vector<std::string> layouts{"(dp 1, tp 4)", "(dp 2, tp 2)", "(dp 4, tp 1)", "(tp 2, dp 2)"};
  std::vector<std::string> seen;
  for (const auto& [layout, t] : measured) seen.push_back(layout);
  ASSERT_EQ(seen, layouts) << a.out;
  ASSERT_EQ(verdict["type"], "advise_verdict") << a.out;
  EXPECT_EQ(verdict["best_predicted"], first);
  double best = measured.begin()->second;
  for (const auto& [layout, t] : measured) best = std::min(best, t);
  EXPECT_EQ(verdict["best_measured"].get<std::string>() == first, measured[first] == best);
  // The predicted best measures within 2x of the measured best, and the rankings do not run against each other.
  EXPECT_LE(measured[first], 2 * best) << a.out;
  ASSERT_TRUE(verdict["spearman"].is_number()) << verdict.dump();
  EXPECT_GE(verdict["spearman"].get<double>(), 0.0) << a.out;

  // The world must be the design's, agreed before any collective: exit 2 on every rank.
  const Launched wrong = mpirun(2, "advise --design '" + design + "' --calibration '" + cal.string() + "' --measure");
  EXPECT_EQ(wrong.status, 2) << wrong.out << wrong.err;
  EXPECT_NE(wrong.err.find("is for a world of 4 ranks, but mpirun started 2"), std::string::npos) << wrong.err;
}
