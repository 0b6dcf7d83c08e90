// `meshloom-launch run` as users run it: mpirun -np 4 (label mpi). A run prints the table with measured times and
// the verification line and writes its JSON Lines; --compare says which plan was fastest; a mesh larger than the
// world, a source that cannot be built, a tensor the host's ranks cannot hold, a calibration of other collectives
// (pipelined) or a bad --timeout fails on every rank before any collective (exit 2); ranks that share a CPU are told
// how to time steadier; a rank that dies or hangs mid-run (MESHLOOM_TEST_FAULT, test_fault.hpp) ends the job
// non-zero within the timeout and leaves a valid JSON Lines stream.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#ifndef MESHLOOM_MPIEXEC
#error "MESHLOOM_MPIEXEC must name mpirun"
#endif

#include "launch_support.hpp"

namespace {

using meshloom::test::Launched;
using meshloom::test::slurp;

const meshloom::test::ScratchDir scratch("meshloom_run_cli_");

std::filesystem::path temp_dir() { return scratch.path(); }

// The first record of a JSON Lines file: run's config.
nlohmann::json config_record(const std::filesystem::path& jsonl) {
  const std::string text = slurp(jsonl);
  return nlohmann::json::parse(text.substr(0, text.find('\n')));
}

// `mpirun -np <np> meshloom-launch run <args>`.
Launched mpirun(int np, const std::string& args, const std::string& env = "") {
  return meshloom::test::mpirun_launch(scratch, np, "run " + args, env);
}

TEST(RunCli, VerifiesAndReportsMeasuredBesidePredicted) {
  const auto jsonl = temp_dir() / "run.jsonl";
  const Launched r = mpirun(4, "--mesh 2,2 --tensor 7,5,3 --src 'P(sum)S(0)' --dst 'S(1)R' --iterations 3 --jsonl '" +
                                   jsonl.string() + "'");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("verified: every element of every rank equals the target"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("predicted comm"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("predicted fixed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("measured"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("whole step"), std::string::npos) << r.out;
  // The stream: config, plan, its steps in order, summary.
  std::ifstream in(jsonl);
  std::vector<nlohmann::json> recs;
  for (std::string line; std::getline(in, line);) recs.push_back(nlohmann::json::parse(line));
  ASSERT_GE(recs.size(), 4U);
  EXPECT_EQ(recs.front().at("type"), "config");
  EXPECT_EQ(recs.front().at("world"), 4);
  EXPECT_EQ(recs.front().at("src"), "P(sum)S(0)");
  EXPECT_EQ(recs.front().at("plans"), 1);
  // Every rank's host, by world rank: under this mpirun one machine, so one host named alike on all four.
  ASSERT_EQ(recs.front().at("hosts").size(), 4U);
  for (const auto& h : recs.front().at("hosts")) EXPECT_EQ(h, recs.front().at("hosts").front());
  EXPECT_EQ(recs[1].at("type"), "plan");
  const auto steps = recs[1].at("steps").get<std::size_t>();
  ASSERT_EQ(recs.size(), steps + 3);
  for (std::size_t i = 0; i < steps; ++i) {
    const auto& j = recs[2 + i];
    EXPECT_EQ(j.at("type"), "step");
    EXPECT_EQ(j.at("step"), i);
    EXPECT_EQ(j.at("iterations_us").size(), 3U);
    EXPECT_EQ(j.at("step_iterations_us").size(), 3U);
    // The collective is part of the whole step, iteration by iteration (both are the slowest rank's).
    EXPECT_GE(j.at("measured_us").get<double>(), 0.0);
    EXPECT_GE(j.at("step_us").get<double>(), j.at("measured_us").get<double>());
    EXPECT_TRUE(j.at("predicted").contains("comm"));
  }
  const auto& summary = recs.back();
  EXPECT_EQ(summary.at("type"), "summary");
  EXPECT_TRUE(summary.at("ok").get<bool>());
  EXPECT_TRUE(summary.at("verified").get<bool>());
  EXPECT_EQ(summary.at("trace"), recs[1].at("trace"));
}

TEST(RunCli, CompareRunsEveryDistinctPlanAndNamesTheFastest) {
  const Launched r = mpirun(4, "--mesh 2,2 --tensor 8,8 --src 'S(0)S(1)' --dst 'S(1)S(0)' --compare --iterations 1");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("fastest measured: plan "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("models that predicted the fastest plan: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("verification FAILED"), std::string::npos) << r.out;
}

TEST(RunCli, AMeshLargerThanTheWorldFailsOnEveryRankBeforeAnyCollective) {
  const Launched r = mpirun(4, "--mesh 2,2,2 --tensor 8,8 --src 'S(0)RR' --dst RRR");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("needs 8 ranks but the MPI world has 4"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  const Launched bad = mpirun(4, "--mesh 2,2 --tensor 8,8 --src 'S(0)R' --dst RR --iterations 0");
  EXPECT_EQ(bad.status, 2) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("--iterations"), std::string::npos) << bad.err;
}

TEST(RunCli, ASourceThatCannotBeBuiltIsAUsageErrorOnEveryRank) {
  // initial_local refuses the source on every rank: agreed before the run (exit 2), not an abort mid-run (exit 3).
  const Launched r = mpirun(4, "--mesh 2,2 --tensor 4 --src 'P(product)P(sum)' --dst RR --iterations 1");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("ValueError"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(RunCli, ATensorTheRanksOfAHostCannotHoldIsRefusedCountingEveryRankOnIt) {
  // A tensor one rank could hold ten times over in half of this host's memory (run_exec.hpp, kRunCopies): four
  // ranks on the host could not. The job counts its ranks per host itself (MPI's shared-memory split), so the
  // refusal, before any collective, names all four.
  const std::int64_t memory = std::int64_t{sysconf(_SC_PHYS_PAGES)} * std::int64_t{sysconf(_SC_PAGESIZE)};
  ASSERT_GT(memory, 0);
  const std::int64_t elements = memory / (10 * 8 * 2);
  const Launched r =
      mpirun(4, "--mesh 2,2 --tensor " + std::to_string(elements) + " --src 'S(0)R' --dst RR --iterations 1");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("run: tensor " + std::to_string(elements) + " is "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(", 4 ranks on this host ("), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(RunCli, JsonlDashPutsRecordsAloneOnStdoutAndTheReportOnStderr) {
  // As bench's: a pipeline reads the records from standard output; the table and the verdict are for people.
  const Launched r = mpirun(2, "--mesh 2 --names dp --tensor 16,16 --src 'S(0)' --dst R --iterations 2 --jsonl -");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const std::vector<std::string> lines = meshloom::test::lines_of(r.out);
  ASSERT_GE(lines.size(), 3U) << r.out;
  for (const std::string& line : lines) EXPECT_TRUE(nlohmann::json::accept(line)) << line;
  EXPECT_EQ(nlohmann::json::parse(lines.front())["type"], "config");
  EXPECT_NE(r.err.find("verified: every element of every rank equals the target"), std::string::npos) << r.err;
}

TEST(RunCli, ACalibrationOfOtherCollectivesIsAUsageError) {
  // The bundled calibration records the mpi backend and no timing (written before it was recorded): it passes.
  const std::string fixture = std::string(MESHLOOM_SOURCE_DIR) + "/resources/calibration/local-2x2.calibration.json";
  const Launched ok = mpirun(4, "--mesh 2,2 --names dp,tp --tensor 8,8 --src 'S(0)R' --dst RR --iterations 1 "
                                "--calibration '" + fixture + "'");
  EXPECT_EQ(ok.status, 0) << ok.out << ok.err;
  nlohmann::json doc = nlohmann::json::parse(slurp(fixture));
  doc["timing"] = "pipelined";
  const auto path = scratch.write("pipelined.calibration.json", doc.dump());
  const Launched r = mpirun(4, "--mesh 2,2 --names dp,tp --tensor 8,8 --src 'S(0)R' --dst RR --iterations 1 "
                               "--calibration '" + path.string() + "'");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--calibration \"" + path.string() + "\": timing = pipelined"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("calibrate with --timing single_shot"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(RunCli, AJsonlStreamOntoTheCalibrationIsRefusedBeforeTheFileIsTouched) {
  const std::string fixture = slurp(std::string(MESHLOOM_SOURCE_DIR) + "/resources/calibration/local-2x2.calibration.json");
  const auto path = scratch.write("both.calibration.json", fixture);
  const Launched r = mpirun(4, "--mesh 2,2 --names dp,tp --tensor 8,8 --src 'S(0)R' --dst RR --iterations 1 "
                               "--calibration '" + path.string() + "' --jsonl '" + path.string() + "'");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--jsonl \"" + path.string() + "\" is the same file as --calibration \"" + path.string() +
                       "\": it would overwrite what the command reads"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(slurp(path), fixture);
}

TEST(RunCli, AxisCorrectionsNeedRanksBoundAsTheCalibratedJobsWereOrTheOptOut) {
  // The bundled 2-rank calibration, as if calibrate had measured it with its ranks bound to CPUs no rank here has.
  const std::string fixture = std::string(MESHLOOM_SOURCE_DIR) + "/resources/calibration/vm-2.calibration.json";
  nlohmann::json doc = nlohmann::json::parse(slurp(fixture));
  doc["rank_cpus"] = {"4095", "4095"};
  doc["axis_corrections"] = {{{"axes", {0}}, {"collective", "all_gather"}, {"factors", {{1024, 0.9, 15}}}}};
  const auto path = scratch.write("bound.calibration.json", doc.dump());
  const std::string args = "--mesh 2 --tensor 8,8 --src 'S(0)' --dst R --iterations 1 --calibration '" + path.string() + "'";
  const Launched r = mpirun(2, args);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--calibration \"" + path.string() + "\": its axis corrections were measured with rank 0 on "
                       "CPUs 4095, and here it may run on CPUs "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("or price without them (--no-axis-corrections)"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  // Opting out prices by the curves alone, and the config record says none apply.
  const auto jsonl = temp_dir() / "unbound.jsonl";
  const Launched out = mpirun(2, args + " --no-axis-corrections --jsonl '" + jsonl.string() + "'");
  EXPECT_EQ(out.status, 0) << out.out << out.err;
  const nlohmann::json config = config_record(jsonl);
  EXPECT_EQ(config.at("axis_corrections"), 0);
  // (1, 2) forms the calibrated mesh's groups (an axis of size 1 changes none): its steps take the corrections, so
  // the binding is asked for there too.
  const Launched same = mpirun(2, "--mesh 1,2 --tensor 8,8 --src 'RS(0)' --dst RR --iterations 1 --calibration '" +
                                      path.string() + "'");
  EXPECT_EQ(same.status, 2) << same.out << same.err;
  EXPECT_NE(same.err.find("its axis corrections were measured with rank 0 on CPUs 4095"), std::string::npos)
      << same.err;
  // Another layout than the calibrated one never uses them: no binding asked for.
  const Launched other = mpirun(2, "--mesh 1 --tensor 8,8 --src R --dst R --iterations 1 --calibration '" +
                                       path.string() + "'");
  EXPECT_EQ(other.status, 0) << other.out << other.err;
}

TEST(RunCli, TheJobsTransportSettingsAreRecordedAndACalibrationOfOthersIsRefused) {
  if (::sched_getscheduler(0) != SCHED_OTHER) GTEST_SKIP() << "the tests run under another scheduling policy";
  // The bundled 2-rank calibration, as if calibrate had run with Open MPI's single-copy path off.
  const std::string fixture = std::string(MESHLOOM_SOURCE_DIR) + "/resources/calibration/vm-2.calibration.json";
  nlohmann::json doc = nlohmann::json::parse(slurp(fixture));
  doc["transport"] = {{"OMPI_MCA_btl_vader_single_copy_mechanism", "none"}};
  const auto path = scratch.write("no-cma.calibration.json", doc.dump());
  const std::string args = "--mesh 2 --tensor 8,8 --src 'S(0)' --dst R --iterations 1 --calibration '" + path.string() + "'";
  const Launched r = mpirun(2, args);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--calibration \"" + path.string() + "\": measured under other transport settings than this "
                       "job (OMPI_MCA_btl_vader_single_copy_mechanism is \"none\" in the calibration and unset in this "
                       "job): its prices are of another transport; calibrate under this job's settings"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
  // Under the same settings (mpirun passes OMPI_MCA_ variables to every rank) it runs, and the config says them;
  // NCCL's do not concern the mpi backend's collectives.
  const auto jsonl = temp_dir() / "no-cma.jsonl";
  const Launched same = mpirun(2, args + " --jsonl '" + jsonl.string() + "'",
                               "OMPI_MCA_btl_vader_single_copy_mechanism=none NCCL_PROTO=Simple");
  ASSERT_EQ(same.status, 0) << same.out << same.err;
  const nlohmann::json config = config_record(jsonl);
  EXPECT_EQ(config.at("transport"),
            (nlohmann::json{{"NCCL_PROTO", "Simple"}, {"OMPI_MCA_btl_vader_single_copy_mechanism", "none"}}));
}

TEST(RunCli, TheRanksSchedulingPolicyIsRecordedAndACalibrationOfAnotherIsRefused) {
  if (::sched_getscheduler(0) != SCHED_OTHER) GTEST_SKIP() << "the tests run under another scheduling policy";
  // mpirun started under SCHED_BATCH (`chrt -b 0`, no privilege needed; its ranks inherit it) against the bundled
  // calibration, measured under the default policy: refused, the policy named.
  const std::string fixture = std::string(MESHLOOM_SOURCE_DIR) + "/resources/calibration/vm-2.calibration.json";
  nlohmann::json doc = nlohmann::json::parse(slurp(fixture));
  doc["transport"] = nlohmann::json::object();
  const auto plain = scratch.write("default-policy.calibration.json", doc.dump());
  const std::string args = "--mesh 2 --tensor 8,8 --src 'S(0)' --dst R --iterations 1 --calibration ";
  const Launched r = mpirun(2, args + "'" + plain.string() + "'", "chrt -b 0");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--calibration \"" + plain.string() + "\": measured under other transport settings than this "
                       "job (scheduler is unset in the calibration and \"SCHED_BATCH\" in this job)"),
            std::string::npos)
      << r.err;
  // A calibration measured under SCHED_BATCH runs under it, and the config says so.
  doc["transport"] = {{"scheduler", "SCHED_BATCH"}};
  const auto batch = scratch.write("batch.calibration.json", doc.dump());
  const auto jsonl = temp_dir() / "batch.jsonl";
  const Launched same = mpirun(2, args + "'" + batch.string() + "' --jsonl '" + jsonl.string() + "'", "chrt -b 0");
  ASSERT_EQ(same.status, 0) << same.out << same.err;
  const nlohmann::json config = config_record(jsonl);
  EXPECT_EQ(config.at("transport").at("scheduler"), "SCHED_BATCH");
  // And a job under the default policy refuses it.
  const Launched other = mpirun(2, args + "'" + batch.string() + "'");
  EXPECT_EQ(other.status, 2) << other.out << other.err;
  EXPECT_NE(other.err.find("scheduler is \"SCHED_BATCH\" in the calibration and unset in this job"), std::string::npos)
      << other.err;
}

TEST(RunCli, RanksThatShareACpuUnderAFairSharePolicyAreToldHowToTimeSteadier) {
  if (::sched_getscheduler(0) != SCHED_OTHER) GTEST_SKIP() << "the tests run under another scheduling policy";
  // Two unbound ranks on one CPU.
  const std::string one_cpu = meshloom::test::one_cpu_prefix();
  ASSERT_NE(one_cpu, "");
  const std::string args = "--mesh 2 --tensor 8,8 --src 'S(0)' --dst R --iterations 1";
  const std::string shared = "  note: 2 ranks share 1 CPU on host " + meshloom::test::this_host() + " under ";
  const std::string tail = ", so a collective's time there depends on what ran before it";
  const Launched crowded = mpirun(2, args, one_cpu);
  ASSERT_EQ(crowded.status, 0) << crowded.out << crowded.err;
  EXPECT_NE(crowded.out.find(shared + "Linux's default scheduler" + tail), std::string::npos) << crowded.out;
  // Under SCHED_BATCH the ranks take turns alike.
  const Launched batch = mpirun(2, args, one_cpu + " chrt -b 0");
  ASSERT_EQ(batch.status, 0) << batch.out << batch.err;
  EXPECT_NE(batch.out.find(shared + "SCHED_BATCH" + tail), std::string::npos) << batch.out;
  // The same job with a CPU per rank where the machine has two: no note.
  if (cpu_set_t mine; ::sched_getaffinity(0, sizeof mine, &mine) == 0 && CPU_COUNT(&mine) >= 2) {
    const Launched apart = mpirun(2, args);
    ASSERT_EQ(apart.status, 0) << apart.out << apart.err;
    EXPECT_EQ(apart.out.find("note:"), std::string::npos) << apart.out;
  }
}

TEST(RunCli, ABadTimeoutIsAUsageErrorNamingTheValue) {
  for (const std::string value : {"nan", "1e300", "-1", "inf"}) {
    const Launched r = mpirun(4, "--mesh 2,2 --tensor 8,8 --src 'S(0)R' --dst RR --iterations 1 --timeout " + value);
    EXPECT_EQ(r.status, 2) << value << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("--timeout \"" + value + "\""), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << value;
  }
}

TEST(RunCli, ARankThatDiesMidRunEndsTheJobNonZeroAndKeepsTheStreamValid) {
  const auto jsonl = temp_dir() / "killed.jsonl";
  const auto start = std::chrono::steady_clock::now();
  const Launched r = mpirun(4,
                            "--mesh 2,2 --tensor 8,8 --src 'S(0)S(1)' --dst RR --timeout 5 --iterations 1 --jsonl '" +
                                jsonl.string() + "'",
                            "MESHLOOM_TEST_FAULT=exit:1:1");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.status, 124) << "the job hung until the outer timeout";
  EXPECT_LT(seconds, 40.0);
  // What was written before the failure is whole: every line parses, config first, step 0 measured.
  std::ifstream in(jsonl);
  std::vector<nlohmann::json> recs;
  for (std::string line; std::getline(in, line);) {
    ASSERT_NO_THROW(recs.push_back(nlohmann::json::parse(line))) << line;
  }
  ASSERT_GE(recs.size(), 3U);
  EXPECT_EQ(recs[0].at("type"), "config");
  EXPECT_EQ(recs[1].at("type"), "plan");
  EXPECT_EQ(recs[2].at("type"), "step");
  EXPECT_EQ(recs[2].at("step"), 0);
  for (const auto& j : recs) EXPECT_NE(j.at("type"), "summary");
}

TEST(RunCli, ARankThatHangsIsReportedByTheTimeoutAndTheJobAborts) {
  // Rank 2 stops before step 1: its peers' next collective times out, names itself, and the job aborts (exit 3)
  // long before the outer limit, with an error record in the stream.
  const auto jsonl = temp_dir() / "hung.jsonl";
  const auto start = std::chrono::steady_clock::now();
  const Launched r = mpirun(4,
                            "--mesh 2,2 --tensor 8,8 --src 'S(0)S(1)' --dst RR --timeout 2 --iterations 1 --jsonl '" +
                                jsonl.string() + "'",
                            "MESHLOOM_TEST_FAULT=hang:2:1");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.status, 124) << "the job hung until the outer timeout";
  EXPECT_LT(seconds, 40.0);
  EXPECT_NE(r.err.find("error: TimeoutError: world rank "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("TimeoutError: TimeoutError"), std::string::npos) << r.err;  // the kind once
  EXPECT_NE(r.err.find("did not complete within the timeout of 2000 ms"), std::string::npos) << r.err;
  std::ifstream in(jsonl);
  std::vector<nlohmann::json> recs;
  for (std::string line; std::getline(in, line);) {
    ASSERT_NO_THROW(recs.push_back(nlohmann::json::parse(line))) << line;
  }
  ASSERT_FALSE(recs.empty());
  EXPECT_EQ(recs.front().at("type"), "config");
  bool error = false;
  for (const auto& j : recs) {
    if (j.at("type") != "error") continue;
    error = true;
    EXPECT_EQ(j.at("message").get<std::string>().rfind("TimeoutError: world rank ", 0), 0U) << j.dump();
  }
  EXPECT_TRUE(error) << slurp(jsonl);
}

// A rank that fails before the run while rank 0 is slow to create the --jsonl file (MESHLOOM_TEST_FAULT=setup:1:MS):
// rank 1's own error record is in the file, appended after rank 0's truncation (never before, where the truncation
// would erase it), beside rank 0's; an earlier run's records are gone.
TEST(RunCli, AnotherRanksEarlyErrorRecordSurvivesRankZerosTruncation) {
  const auto jsonl = temp_dir() / "early.jsonl";
  std::ofstream(jsonl) << "{\"type\":\"stale\"}\n";
  const Launched r = mpirun(4, "--mesh 2,2 --tensor 8,8 --src 'S(0)R' --dst RR --iterations 1 --jsonl '" +
                                   jsonl.string() + "'",
                            "MESHLOOM_TEST_FAULT=setup:1:1500");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  std::ifstream in(jsonl);
  std::vector<nlohmann::json> recs;
  for (std::string line; std::getline(in, line);) {
    ASSERT_NO_THROW(recs.push_back(nlohmann::json::parse(line))) << line;
  }
  ASSERT_EQ(recs.size(), 2U) << slurp(jsonl);
  std::vector<std::string> messages(2);
  for (const auto& j : recs) {
    ASSERT_EQ(j.at("type"), "error") << j.dump();
    const int rank = j.at("rank").get<int>();
    ASSERT_TRUE(rank == 0 || rank == 1) << j.dump();
    messages[static_cast<std::size_t>(rank)] = j.at("message").get<std::string>();
  }
  EXPECT_EQ(messages[1], "RuntimeError: MESHLOOM_TEST_FAULT: world rank 1 failed before the run (injected)");
  EXPECT_EQ(messages[0], "RuntimeError: another rank failed before the run (see its message)");
}

TEST(RunCli, AMalformedFaultHookIsAUsageError) {
  const Launched r = mpirun(4, "--mesh 2,2 --tensor 8,8 --src 'S(0)R' --dst RR --iterations 1",
                            "MESHLOOM_TEST_FAULT=crash:1");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("MESHLOOM_TEST_FAULT=\"crash:1\""), std::string::npos) << r.err;
}

}  // namespace
