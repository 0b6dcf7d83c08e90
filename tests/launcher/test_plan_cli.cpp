// meshloom-launch plan, run as a user runs it: the human table, --compare, --batch over a file of lines, exit
// statuses, and what a calibration that cannot price the mesh says.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch_support.hpp"

namespace {

using meshloom::test::launch;
using meshloom::test::Launched;
using meshloom::test::lines_of;

// The temporary files, removed when the test program ends.
const meshloom::test::ScratchDir scratch("meshloom_plan_cli_");

TEST(PlanCli, HumanTableFixedModel) {
  const Launched r = launch("plan --mesh 2,2,2 --names pp,dp,tp --tensor 8,8,8 --src 'S(0)[0]S(0)[1]R' --dst 'RS(0)R' "
                            "--cost fixed 2>&1");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out,
            "plan S(0)[0]S(0)[1]R -> RS(0)R\n"
            "  mesh (pp=2, dp=2, tp=2), tensor [8, 8, 8], itemsize 4, shapes at coordinate [0, 0, 0]\n"
            "  planner graph, variant newest, cost model fixed (all_reduce 4, all_to_all 1, all_gather 2, "
            "reduce_scatter 2, chunk 0)\n"
            "\n"
            "step  axis  collective  from -> to    logical shape  bytes  cost\n"
            "   0  dp    all_to_all  S(0) -> S(1)  [4, 8, 8]        512     1\n"
            "   1  pp    all_gather  S(0) -> R     [8, 4, 8]        512     2\n"
            "   2  dp    all_to_all  S(1) -> S(0)  [8, 8, 8]       1024     1\n"
            "\n"
            "trace: S(0)[0]S(0)[1]R->S(0)S(1)R->RS(1)R->RS(0)R\n"
            "cost: 4\n"
            "states explored: 93\n");
}

TEST(PlanCli, VerifyRunsThePlanOnSimulatedRanks) {
  const Launched ok = launch("plan --mesh 2,2,2 --tensor 7,5,3 --src 'S(0)[1]S(0)[0]S(0)[2]' --dst 'P(sum)S(1)R' "
                             "--cost fixed --verify 2>&1");
  EXPECT_EQ(ok.status, 0);
  EXPECT_NE(ok.out.find("\nverified: 3 steps on 8 simulated ranks, 420 elements equal to the target\n"),
            std::string::npos) << ok.out;
  const Launched both = launch("plan --mesh 2 --tensor 4 --src 'S(0)' --dst R --compare --verify 2>&1");
  EXPECT_EQ(both.status, 2);
  EXPECT_NE(both.out.find("--verify checks one plan"), std::string::npos) << both.out;
}

TEST(PlanCli, HumanTableMergedStepDtypeAndCommModel) {
  const Launched r = launch("plan --mesh 2,2 --names dp,tp --tensor 8,8 --src PP --dst RR --flatten dp,tp "
                            "--dtype bfloat16 2>&1");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out,
            "plan P(sum)P(sum) -> RR\n"
            "  mesh (dp=2, tp=2), tensor [8, 8], bfloat16, shapes at coordinate [0, 0]\n"
            "  planner graph, variant newest, cost model comm (8 devices per host)\n"
            "\n"
            "step  axis   collective           from -> to   logical shape  bytes        cost\n"
            "   0  dp,tp  all_reduce (merged)  P(sum) -> R  [8, 8]           128  15.6027 us\n"
            "\n"
            "trace: P(sum)P(sum)-->RR\n"
            "cost: 15.6027 us\n"
            "states explored: 18\n");
}

TEST(PlanCli, CompareSaysWhichIsCheaper) {
  const Launched r = launch("plan --mesh 2,2 --tensor 8,8 --src 'S(0)S(1)' --dst 'RS(0)' --cost fixed --compare 2>&1");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out,
            "compare planners: S(0)S(1) -> RS(0) on mesh (2, 2), tensor [8, 8]\n"
            "  variant newest, cost model fixed (all_reduce 4, all_to_all 1, all_gather 2, reduce_scatter 2, chunk 0)\n"
            "\n"
            "planner          cost  steps  states  trace\n"
            "graph               3      2       6  S(0)S(1)->RS(1)->RS(0)\n"
            "greedy              4      3       4  S(0)S(1)->S(0)R->RR->RS(0)\n"
            "auto (= greedy)     4      3       4  S(0)S(1)->S(0)R->RR->RS(0)\n"
            "\n"
            "graph is cheaper: 3 against 4 for greedy\n");
  const Launched same = launch("plan --mesh 2 --tensor 8 --src 'S(0)' --dst R --compare 2>&1");
  EXPECT_EQ(same.status, 0);
  EXPECT_NE(same.out.find("\ngraph and greedy cost the same: "), std::string::npos) << same.out;
}

// A calibration with curves for all_gather on 2 ranks and on the flattened group of 4: the graph planner picks
// S(0)S(0) -> RR as it runs (one merged all_gather of 4). The human plan says both prices, the path's before
// merging (plan --batch's `cost`) and the price as it runs; --compare prices every planner as it runs (it compared
// the graph plan as it runs, 17.98 us, with the same plan from greedy at its path cost, 30.02 us, and said graph
// was cheaper).
TEST(PlanCli, APlanChosenAsItRunsIsPricedLikeWithLike) {
  const auto calibration = scratch.write("as_run.calibration.json", R"J({"format": "meshloom-calibration",
      "version": 1, "backend": "mpi", "world": 4, "mesh": {"shape": [2, 2], "names": ["dp", "tp"]}, "axes": {},
      "rank_hosts": [0, 0, 0, 0],
      "groups": [{"collective": "all_gather", "n": 2, "hosts": 1, "ranks_per_host": 2, "model": "piecewise",
                  "points": [[16, 10.0], [1024, 20.0]]},
                 {"collective": "all_gather", "n": 4, "hosts": 1, "ranks_per_host": 4, "model": "piecewise",
                  "points": [[16, 12.0], [1024, 22.0]]}]})J");
  const std::string request = "plan --mesh 2,2 --names dp,tp --tensor 8,8 --src 'S(0)S(0)' --dst RR --flatten dp,tp "
                              "--cost calibrated --calibration '" + calibration.string() + "'";
  const Launched plan = launch(request + " 2>&1");
  EXPECT_EQ(plan.status, 0) << plan.out;
  EXPECT_NE(plan.out.find("\ncost: 30.0161 us\ncost as it runs: 17.9753 us\n"), std::string::npos) << plan.out;
  const Launched compare = launch(request + " --compare 2>&1");
  EXPECT_EQ(compare.status, 0) << compare.out;
  EXPECT_NE(compare.out.find("  priced as they run: "), std::string::npos) << compare.out;
  EXPECT_NE(compare.out.find("\ngraph and greedy cost the same: 17.9753 us\n"), std::string::npos) << compare.out;
  // Without the 4-rank curve greedy's merged all_gather cannot be priced as it runs: --compare lists its plan as
  // unpriced and says which step (it said greedy failed and "only graph finds a plan"), and greedy alone refuses it,
  // naming the curve the calibration lacks.
  const auto no_four = scratch.write("as_run_no_four.calibration.json", R"J({"format": "meshloom-calibration",
      "version": 1, "backend": "mpi", "world": 4, "mesh": {"shape": [2, 2], "names": ["dp", "tp"]}, "axes": {},
      "rank_hosts": [0, 0, 0, 0],
      "groups": [{"collective": "all_gather", "n": 2, "hosts": 1, "ranks_per_host": 2, "model": "piecewise",
                  "points": [[16, 10.0], [1024, 20.0]]},
                 {"collective": "all_to_all", "n": 2, "hosts": 1, "ranks_per_host": 2, "model": "piecewise",
                  "points": [[16, 10.0], [1024, 20.0]]}]})J");
  const std::string unpriced = "plan --mesh 2,2 --names dp,tp --tensor 8,8 --src 'S(0)S(0)' --dst RR --flatten dp,tp "
                               "--cost calibrated --calibration '" + no_four.string() + "'";
  const Launched partly = launch(unpriced + " --compare 2>&1");
  EXPECT_EQ(partly.status, 0) << partly.out;
  EXPECT_NE(partly.out.find("\ngreedy             unpriced      1       3  S(0)[0]S(0)[1]-->RR\n"), std::string::npos)
      << partly.out;
  EXPECT_NE(partly.out.find("\nonly graph's plan can be priced (42.6154 us): the cost model cannot price greedy's step 0, "
                            "all_gather on axes 0,1; the calibration cannot price: all_gather on axes 0,1: 4 ranks on 1 "
                            "host (4 per host) never measured (calibrate those shapes, or --extrapolate to guess them)\n"),
            std::string::npos)
      << partly.out;
  // Past a state budget too small for the searches of plans compared as they run, the graph planner's plan is the
  // one search's, priced by its edges; as it runs, it merges the same all_gather: named as a step, with its curve.
  const Launched budget = launch(unpriced + " --compare --state-budget 100 2>&1");
  EXPECT_EQ(budget.status, 0) << budget.out;
  EXPECT_NE(budget.out.find("\nno plan can be priced: the cost model cannot price graph's step 0, all_gather on axes 0,1; "
                            "greedy's step 0, all_gather on axes 0,1; the calibration cannot price: all_gather on axes "
                            "0,1: 4 ranks on 1 host (4 per host) never measured (calibrate those shapes"),
            std::string::npos)
      << budget.out;
  // Where every plan merges the gathers (a 1-D tensor: no chunk between them), the graph planner finds none it can
  // price as it runs, and says which curves of the flattened group are missing (it listed the axes' gaps).
  const Launched none = launch("plan --mesh 2,2 --names dp,tp --tensor 8 --src 'S(0)S(0)' --dst RR --flatten dp,tp "
                               "--cost calibrated --calibration '" + no_four.string() + "' 2>&1");
  EXPECT_EQ(none.status, 2) << none.out;
  EXPECT_NE(none.out.find("ValueError: no plan from S(0)[0]S(0)[1] to RR can be priced as it runs: "), std::string::npos)
      << none.out;
  EXPECT_NE(none.out.find("; the calibration cannot price: all_reduce on axes 0,1: 4 ranks on 1 host (4 per host) never "
                          "measured; all_gather on axes 0,1: 4 ranks on 1 host (4 per host) never measured; "
                          "reduce_scatter on axes 0,1: 4 ranks on 1 host (4 per host) never measured (calibrate"),
            std::string::npos)
      << none.out;
  const Launched refused = launch(unpriced + " --planner greedy 2>&1");
  EXPECT_EQ(refused.status, 2) << refused.out;
  EXPECT_NE(refused.out.find("ValueError: greedy's plan S(0)[0]S(0)[1]->S(0)R->RR takes steps its cost model cannot "
                             "price (step 0, all_gather on axes 0,1); the calibration cannot price: all_gather on axes "
                             "0,1: 4 ranks on 1 host (4 per host) never measured (calibrate those shapes"),
            std::string::npos)
      << refused.out;
  // Without the flattened group nothing is priced as it runs: one cost line.
  const Launched plain = launch("plan --mesh 2,2 --tensor 8,8 --src 'S(0)S(0)' --dst RR --cost calibrated "
                                "--calibration '" + calibration.string() + "' 2>&1");
  EXPECT_EQ(plain.status, 0) << plain.out;
  EXPECT_NE(plain.out.find("\ncost: 30.0161 us\nstates explored"), std::string::npos) << plain.out;
}

TEST(PlanCli, BatchAnswersOneLinePerInputLine) {
  const std::string input =
      R"J({"mesh": [2, 2, 2], "tensor_shape": [8, 8, 8], "src": "S(0)[0]S(0)[1]R", "dst": "RS(0)R", "cost_model": "fixed"})J"
      "\n"
      "not json at all\n"
      "\n"
      "\xff\xfe garbage \x01\n"
      R"J({"mesh": [2], "tensor_shape": [4], "src": "R", "dst": "R", "bogus": 1})J"
      "\n"
      R"J({"mesh": [2], "tensor_shape": [4], "src": "S(0)", "dst": "R", "cost_model": "fixed"})J";  // no final newline
  const auto path = scratch.write("batch.jsonl", input);
  const Launched r = launch("plan --batch < '" + path.string() + "' 2>/dev/null");
  EXPECT_EQ(r.status, 0);
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 6U) << r.out;
  const auto first = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(first["ok"], true);
  EXPECT_EQ(first["trace"], "S(0)[0]S(0)[1]R->S(0)S(1)R->RS(1)R->RS(0)R");
  EXPECT_NE(lines[0].find("\"cost\":4.0,"), std::string::npos) << lines[0];
  for (std::size_t i : {1U, 2U, 3U, 4U}) {
    const auto j = nlohmann::json::parse(lines[i]);
    EXPECT_EQ(j["ok"], false) << lines[i];
    EXPECT_EQ(j["error"].get<std::string>().rfind("ValueError: ", 0), 0U) << lines[i];
  }
  EXPECT_EQ(lines[5],
            R"J({"ok":true,"cost":2.0,"path":["S(0)","R"],"trace":"S(0)->R","steps":[{"axes":[0],"collective":"all_gather",)J"
            R"J("from":"S(0)","to":"R","cost":2.0,"logical_shape":[4],"bytes":8,"merged":false}],"comm_counts":{"all_gather":1},)J"
            R"J("states_explored":2})J");
  EXPECT_EQ(r.out.back(), '\n');
}

TEST(PlanCli, BatchEdgeCasesAndExitStatuses) {
  Launched r = launch("plan --batch < /dev/null");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "");
  r = launch("plan --batch < / 2>/dev/null");  // reading a directory fails
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  r = launch("plan --batch --mesh 2 < /dev/null 2>&1");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "error: ValueError: --batch reads everything from standard input; --mesh cannot be combined with it\n");
}

// The request of the two tests below.
const std::string kOneRequest = R"J({"mesh": [2], "tensor_shape": [4], "src": "S(0)", "dst": "R", "cost_model": "fixed"})J";

TEST(PlanCli, BatchAnswersEachLineBeforeTheNextArrives) {
  // Each answer comes back while standard input is still open (flushed per line, as the contract says), a bad
  // line's included; the output ends, exit 0, once the input closes.
  const std::vector<std::string> heard = meshloom::test::batch_conversation("plan", kOneRequest);
  ASSERT_EQ(heard.size(), 3U);
  EXPECT_EQ(heard[0], R"J({"ok":true,"cost":2.0,"path":["S(0)","R"],"trace":"S(0)->R","steps":[{"axes":[0],)J"
                    R"J("collective":"all_gather","from":"S(0)","to":"R","cost":2.0,"logical_shape":[4],"bytes":8,)J"
                    R"J("merged":false}],"comm_counts":{"all_gather":1},"states_explored":2})J");
  EXPECT_TRUE(heard[1].starts_with(R"J({"ok":false,"error":"ValueError: )J")) << heard[1];
  EXPECT_EQ(heard[2], "exit 0");
}

TEST(PlanCli, BatchExitsOneWhenStandardOutputFails) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  const auto path = scratch.write("plan-full.jsonl", kOneRequest + "\n");
  EXPECT_EQ(launch("plan --batch < '" + path.string() + "' > /dev/full 2>/dev/null").status, 1);
}

// Output that never arrived is a failure: status 1 and a line on standard error, for every command (--batch says
// it by the status alone).
TEST(PlanCli, AnyCommandExitsOneWhenStandardOutputFails) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  for (const std::string args : {"plan --mesh 2 --tensor 4 --src 'S(0)' --dst R", "layout show 2:1", "info",
                                 "--version", "plan --help"}) {
    const auto r = launch(args + " 2>&1 >/dev/full");
    EXPECT_EQ(r.status, 1) << args;
    EXPECT_EQ(r.out, "meshloom-launch: error: RuntimeError: cannot write standard output\n") << args;
  }
  // An error the command found itself keeps its status.
  EXPECT_EQ(launch("plan --mesh 2 --tensor 4 --src 'S(9)' --dst R 2>/dev/null >/dev/full").status, 2);
}

TEST(PlanCli, ErrorsExitTwoNamingTheValue) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"plan --mesh 2,x --tensor 8 --src R --dst R", "error: ValueError: --mesh \"2,x\": \"x\" is not an integer\n"},
      {"plan --mesh 2 --tensor 8 --src R", "error: ValueError: --dst is required (e.g. plan --mesh 2,2 --tensor 8,8 "
                                           "--src S(0)R --dst RS(0), or --batch)\n"},
      {"plan --mesh 2 --tensor 8 --src 'S(0)X' --dst R",
       "error: ValueError: --src \"S(0)X\": cannot parse state: position 4, token \"X\": expected a placement: R, S(d), "
       "S(d)[k], P, P(op), Replicate(), Shard(d) or Partial(op)\n"},
      {"plan --mesh 2 --tensor 8 --src R --dst R --planner fast",
       "error: ValueError: --planner \"fast\": unknown planner (expected graph, greedy, auto)\n"},
      {"plan --mesh 2 --tensor 8 --src R --dst R --cost fixed --weights frob=1",
       "error: ValueError: --weights \"frob=1\": unknown weight \"frob\" (expected all_reduce, all_to_all, all_gather, "
       "reduce_scatter, chunk)\n"},
      {"plan --mesh 2 --tensor 8 --src R --dst R --weights chunk=x",
       "error: ValueError: --weights \"chunk=x\": \"x\" is not a number\n"},
      {"plan --mesh 2 --tensor 8 --src R --dst R --weights all_reduce=inf",
       "error: ValueError: --weights \"all_reduce=inf\": all_reduce = inf must be finite, >= 0 and <= 1e300\n"},
      {"plan --mesh 2 --tensor 8 --src R --dst R --dtype float7",
       "error: ValueError: --dtype \"float7\": unknown dtype (expected one of float32, float, float64, double, float16, "
       "half, bfloat16, float8_e4m3fn, float8_e4m3, float8_e5m2, int64, long, int32, int, int16, short, int8, uint8, "
       "bool, complex64, complex128)\n"},
      {"plan --mesh 2 --tensor 8 --src R --dst R --dtype float32 --itemsize 4",
       "error: ValueError: give either --itemsize or --dtype, not both\n"},
      {"plan --mesh 2,2 --names dp,tp --tensor 8 --src RR --dst RR --flatten dp,cp",
       "error: KeyError: --flatten \"dp,cp\" = \"cp\": no mesh axis has that name (axes: \"dp\", \"tp\")\n"},
      {"plan --mesh 2 --tensor 8 --src 'P(sum)' --dst 'P(max)'",
       "error: ValueError: Redistribution from one partial type (sum) to another (max) on mesh axis 0 is unsupported\n"},
      {"plan --mesh 2 --tensor 8 --src R --dst R --compare --planner graph",
       "error: ValueError: --compare plans with every planner; --planner cannot be combined with it\n"},
      {"plan --mesh 2 --tensor 8 --src R --dst R --cost calibrated",
       "error: ValueError: the calibrated cost model needs a calibration (a calibration file from `meshloom-launch "
       "calibrate`)\n"},
  };
  for (const auto& [args, expected] : cases) {
    const Launched r = launch(args + " 2>&1");
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(r.out, expected) << args;
  }
}

TEST(PlanCli, CalibrationFile) {
  const auto path = scratch.write(
      "cal.json",
      R"J({"format": "meshloom-calibration", "version": 1, "backend": "mpi", "world": 4, "mesh": {"shape": [2, 2], "names": ["dp", "tp"]},
           "axes": {"dp": {"all_gather": {"alpha_us": 20.0, "busbw_gbps": 10.0, "r2": 0.99, "samples": 8}},
                    "tp": {"all_gather": {"alpha_us": 5.0, "busbw_gbps": 100.0, "r2": 0.99, "samples": 8}}}})J");
  const Launched r = launch("plan --mesh 2,2 --tensor 1024,1024 --src 'S(0)S(1)' --dst RR --calibration '" +
                            path.string() + "' 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  // A file without "timing" (older than the field) is said to be one: its curves may be pipelined.
  EXPECT_NE(r.out.find("cost model calibrated (mpi calibration, axes dp, tp, timing not recorded)\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\ntrace: S(0)S(1)->RS(1)->RR\n"), std::string::npos) << r.out;
}

// A calibration of 2 ranks cannot price a (2,2) mesh: the graph planner finds no path, greedy's path has steps it
// cannot price, and each says what was never measured, on the command line and in --batch alike.
TEST(PlanCli, ACalibrationThatCannotPriceTheMeshSaysWhatItLacks) {
  const std::string calibration = std::string(MESHLOOM_SOURCE_DIR) + "/resources/calibration/vm-2.calibration.json";
  const std::string request = "plan --mesh 2,2 --tensor 64,64 --src 'S(0)S(1)' --dst 'RS(0)' --calibration '" +
                              calibration + "'";
  const std::string lacks = "; the calibration cannot price: the mesh holds 4 ranks but the calibrated job placed 2 "
                            "(calibrate those shapes, or --extrapolate to guess them)";
  const Launched graph = launch(request + " 2>&1");
  EXPECT_EQ(graph.status, 2) << graph.out;
  EXPECT_NE(graph.out.find("error: ValueError: no redistribution path from S(0)S(1) to RS(0) (newest transitions; "
                           "Partial changes its reduce op only through Replicate)" + lacks),
            std::string::npos)
      << graph.out;
  const std::string greedy_error = "ValueError: greedy's plan S(0)S(1)->S(0)R->RR->RS(0) takes steps its cost model "
                                   "cannot price (step 0, all_gather on axis 1; step 1, all_gather on axis 0)" + lacks;
  const Launched greedy = launch(request + " --planner greedy 2>&1");
  EXPECT_EQ(greedy.status, 2) << greedy.out;
  EXPECT_EQ(greedy.out, "error: " + greedy_error + "\n");
  const Launched compare = launch(request + " --compare");
  EXPECT_EQ(compare.status, 0) << compare.out;
  // --compare: greedy's plan found but not priced (it said greedy failed, and "no planner finds a plan").
  EXPECT_NE(compare.out.find("\ngreedy           unpriced      3       4  S(0)S(1)->S(0)R->RR->RS(0)\n"),
            std::string::npos)
      << compare.out;
  EXPECT_NE(compare.out.find("\nno plan can be priced: the cost model cannot price greedy's step 0, all_gather on axis 1; "
                             "step 1, all_gather on axis 0" + lacks + "\n"),
            std::string::npos)
      << compare.out;
  // --batch: an answer with "ok": false, never a plan whose costs are not numbers.
  const auto batch = scratch.write("unpriced.jsonl", R"J({"mesh": [2, 2], "tensor_shape": [64, 64], "src": "S(0)S(1)", "dst": "RS(0)", "planner": "greedy", "calibration": ")J" + calibration + "\"}\n");
  const Launched answer = launch("plan --batch < '" + batch.string() + "'");
  EXPECT_EQ(answer.status, 0) << answer.out;
  EXPECT_EQ(nlohmann::json::parse(answer.out), (nlohmann::json{{"ok", false}, {"error", greedy_error}}));
  // A request refused for itself says so alone: nothing about pricing.
  const Launched refused = launch("plan --mesh 2,2 --tensor 64,64 --src 'P(sum)R' --dst 'P(max)R' --calibration '" +
                                  calibration + "' 2>&1");
  EXPECT_EQ(refused.status, 2) << refused.out;
  EXPECT_EQ(refused.out.find("cannot price"), std::string::npos) << refused.out;
  // --extrapolate prices them from the nearest measured shape.
  const Launched guessed = launch(request + " --planner greedy --extrapolate");
  EXPECT_EQ(guessed.status, 0) << guessed.out;
  EXPECT_NE(guessed.out.find("\ntrace: S(0)S(1)->S(0)R->RR->RS(0)\n"), std::string::npos) << guessed.out;
}

}  // namespace
