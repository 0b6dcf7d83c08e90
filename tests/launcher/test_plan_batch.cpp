// meshloom-launch plan --batch: answer_plan_line on the contract's example, every field's default, every error
// path, merging on flattened axes, the planners and variants, and costs equal to the engine's to the last bit.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/state.hpp"
#include "plan_batch.hpp"

namespace {

using meshloom::launcher::answer_plan_line;
using meshloom::launcher::PlanBatchLimits;
using json = nlohmann::ordered_json;

// The answer, checked to be one line of JSON.
std::string ask(const std::string& line, const PlanBatchLimits& limits = {}) {
  std::string answer = answer_plan_line(line, limits);
  EXPECT_EQ(answer.find('\n'), std::string::npos) << answer;
  EXPECT_TRUE(json::accept(answer)) << answer;
  return answer;
}

json ask_json(const std::string& line, const PlanBatchLimits& limits = {}) { return json::parse(ask(line, limits)); }

json ok(const std::string& line) {
  json j = ask_json(line);
  EXPECT_EQ(j.at("ok"), true) << line << "\n" << j.dump();
  return j;
}

std::string error_of(const std::string& line, const PlanBatchLimits& limits = {}) {
  const json j = ask_json(line, limits);
  EXPECT_EQ(j.at("ok"), false) << j.dump();
  EXPECT_EQ(j.size(), 2U) << j.dump();
  return j.value("error", "");
}

// The contract's example request with extra fields ("k": value, ...) spliced in.
std::string example(const std::string& extra = "") {
  return R"J({"mesh": [2, 2, 2], "tensor_shape": [8, 8, 8], "src": "S(0)[0]S(0)[1]R", "dst": "RS(0)R")J" +
         (extra.empty() ? std::string() : ", " + extra) + "}";
}

// A calibration for the mesh (2, 2, 2) named pp, dp, tp: every collective fitted on every axis.
std::string calibration_json() {
  std::string axes;
  const char* names[] = {"pp", "dp", "tp"};
  for (int a = 0; a < 3; ++a) {
    if (a > 0) axes += ", ";
    axes += std::string("\"") + names[a] + "\": {";
    const char* collectives[] = {"all_gather", "all_reduce", "all_to_all", "reduce_scatter"};
    for (int c = 0; c < 4; ++c) {
      if (c > 0) axes += ", ";
      axes += std::string("\"") + collectives[c] + "\": {\"alpha_us\": " + std::to_string(10 + a * 5 + c) +
              ".5, \"busbw_gbps\": " + std::to_string(2 + a) + ".25, \"r2\": 0.99, \"samples\": 12}";
    }
    axes += "}";
  }
  return R"J({"format": "meshloom-calibration", "version": 1, "backend": "mpi", "world": 8, "mesh": {"shape": [2, 2, 2], "names": ["pp", "dp", "tp"]}, "axes": {)J" +
         axes + "}}";
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// ---- The contract's example ------------------------------------------------------------------------------------

// The contract's example request with the fixed model. The contract's sample output shows the path through two
// all_gathers with cost 6.0; under the fixed weights (all_to_all 1, all_gather 2) the engine finds a cheaper path
// through all_to_all: 1 + 2 + 1 = 4.
TEST(PlanBatch, ContractExampleFixedModel) {
  EXPECT_EQ(ask(example(R"J("cost_model": "fixed")J")),
            R"J({"ok":true,"cost":4.0,"path":["S(0)[0]S(0)[1]R","S(0)S(1)R","RS(1)R","RS(0)R"],)J"
            R"J("trace":"S(0)[0]S(0)[1]R->S(0)S(1)R->RS(1)R->RS(0)R",)J"
            R"J("steps":[{"axes":[1],"collective":"all_to_all","from":"S(0)","to":"S(1)","cost":1.0,"logical_shape":[4,8,8],"bytes":512,"merged":false},)J"
            R"J({"axes":[0],"collective":"all_gather","from":"S(0)","to":"R","cost":2.0,"logical_shape":[8,4,8],"bytes":512,"merged":false},)J"
            R"J({"axes":[1],"collective":"all_to_all","from":"S(1)","to":"S(0)","cost":1.0,"logical_shape":[8,8,8],"bytes":1024,"merged":false}],)J"
            R"J("comm_counts":{"all_gather":1,"all_to_all":2},"states_explored":93})J");
}

// With the default (comm) model the plan is the contract's path, its first step the contract's step, and the
// local chunk step is not counted in comm_counts.
TEST(PlanBatch, ContractExampleDefaultModelGivesTheContractPath) {
  const json j = ok(example());
  std::vector<std::string> keys;
  for (const auto& item : j.items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"ok", "cost", "path", "trace", "steps", "comm_counts", "states_explored"}));
  EXPECT_EQ(j["path"], json::parse(R"J(["S(0)[0]S(0)[1]R", "S(0)RR", "RRR", "RS(0)R"])J"));
  EXPECT_EQ(j["trace"], "S(0)[0]S(0)[1]R->S(0)RR->RRR->RS(0)R");
  ASSERT_EQ(j["steps"].size(), 3U);
  json first = j["steps"][0];
  std::vector<std::string> step_keys;
  for (const auto& item : first.items()) step_keys.push_back(item.key());
  EXPECT_EQ(step_keys, (std::vector<std::string>{"axes", "collective", "from", "to", "cost", "logical_shape", "bytes",
                                                 "merged"}));
  first.erase("cost");
  EXPECT_EQ(first, json::parse(R"J({"axes": [1], "collective": "all_gather", "from": "S(0)", "to": "R",
                                   "logical_shape": [4, 8, 8], "bytes": 512, "merged": false})J"));
  EXPECT_EQ(j["steps"][2]["collective"], "chunk");
  EXPECT_EQ(j["comm_counts"], json::parse(R"({"all_gather": 2})"));
  EXPECT_TRUE(j["cost"].is_number_float());
  EXPECT_TRUE(j["states_explored"].is_number_integer());
}

// Costs are JSON numbers with full double precision, and integral costs keep their ".0".
TEST(PlanBatch, CostsAreFullPrecisionDoubles) {
  const std::string answer = ask(example(R"J("cost_model": "fixed", "weights": {"all_to_all": 10})J"));
  EXPECT_NE(answer.find(R"("cost":4.0,)"), std::string::npos) << answer;
  EXPECT_NE(answer.find(R"("cost":0.0,)"), std::string::npos) << answer;
  const std::string comm = ask(example());
  EXPECT_NE(comm.find(R"("cost":14.416311419322795,)"), std::string::npos) << comm;
  // Weights that are not integers: 0.1 + 0.2 is not 0.3 in doubles, and the answer says so.
  const std::string third = ask(R"J({"mesh": [2, 2], "tensor_shape": [8, 8], "src": "PP", "dst": "RR", "cost_model": "fixed",
                                     "weights": {"all_reduce": 0.1}, "planner": "greedy"})J");
  EXPECT_NE(third.find(R"J("cost":0.2,)J"), std::string::npos) << third;
  const std::string fourth = ask(R"J({"mesh": [2, 2, 2], "tensor_shape": [8, 8], "src": "PPP", "dst": "RRR", "cost_model": "fixed",
                                      "weights": {"all_reduce": 0.1}, "planner": "greedy"})J");
  EXPECT_NE(fourth.find(R"J("cost":0.30000000000000004,)J"), std::string::npos) << fourth;
}

// ---- Defaults ------------------------------------------------------------------------------------------------------

TEST(PlanBatch, EveryDefaultEqualsItsExplicitValue) {
  const std::string base = ask(example());
  EXPECT_EQ(ask(example(R"J("planner": "graph")J")), base);
  EXPECT_EQ(ask(example(R"J("variant": "newest")J")), base);
  EXPECT_EQ(ask(example(R"J("cost_model": "comm")J")), base);
  EXPECT_EQ(ask(example(R"J("itemsize": 4)J")), base);
  EXPECT_EQ(ask(example(R"J("devices_per_host": 8)J")), base);
  EXPECT_EQ(ask(example(R"J("coordinate": [0, 0, 0])J")), base);
  EXPECT_EQ(ask(example(R"J("flattened": [])J")), base);
  EXPECT_EQ(ask(example(R"J("state_budget": 4000000)J")), base);
  EXPECT_EQ(ask(example(R"J("names": ["pp", "dp", "tp"])J")), base);
  // null means "not given".
  EXPECT_EQ(ask(example(R"J("planner": null, "variant": null, "cost_model": null, "weights": null, "itemsize": null,
                            "devices_per_host": null, "calibration": null, "coordinate": null, "flattened": null,
                            "names": null, "state_budget": null)J")),
            base);
  const std::string fixed = ask(example(R"J("cost_model": "fixed")J"));
  EXPECT_EQ(ask(example(R"J("cost_model": "fixed", "weights": {"all_reduce": 4, "all_to_all": 1, "all_gather": 2,
                            "reduce_scatter": 2, "chunk": 0})J")),
            fixed);
  EXPECT_EQ(ask(example(R"J("cost_model": "fixed", "weights": {})J")), fixed);
}

TEST(PlanBatch, DefaultsChangeTheAnswerWhenChanged) {
  // Partial weights: a dear all_to_all sends the plan through the all_gathers.
  const json w = ok(example(R"J("cost_model": "fixed", "weights": {"all_to_all": 10})J"));
  EXPECT_EQ(w["trace"], "S(0)[0]S(0)[1]R->S(0)RR->RRR->RS(0)R");
  EXPECT_EQ(w["cost"].get<double>(), 4.0);
  // itemsize scales the bytes.
  const json i = ok(example(R"J("itemsize": 2)J"));
  EXPECT_EQ(i["steps"][0]["bytes"], 256);
  // Fewer devices per host: axes cross hosts and cost more.
  const json d = ok(example(R"J("devices_per_host": 2)J"));
  EXPECT_GT(d["cost"].get<double>(), ok(example())["cost"].get<double>());
  // The coordinate picks the rank whose (uneven) shapes are shown.
  const std::string uneven = R"J({"mesh": [3], "tensor_shape": [7, 2], "src": "S(0)", "dst": "R")J";
  EXPECT_EQ(ok(uneven + "}")["steps"][0]["bytes"], 24);  // chunk 0: 3 x 2 floats
  EXPECT_EQ(ok(uneven + R"J(, "coordinate": [2]})J")["steps"][0]["bytes"], 8);  // chunk 2: 1 x 2 floats
  // A small state budget is enforced.
  EXPECT_TRUE(starts_with(error_of(example(R"J("state_budget": 3)J")),
                          "RuntimeError: planning exceeded its state budget of 3 states"));
  // At the most a line may ask for (its default), raising it is no advice.
  PlanBatchLimits three;
  three.max_state_budget = 3;
  for (const std::string& line : {example(), example(R"J("state_budget": 3)J")}) {
    EXPECT_EQ(error_of(line, three), "RuntimeError: planning exceeded its state budget of 3 states, the most a line "
                                     "may ask for (state_budget); simplify the request")
        << line;
  }
  EXPECT_NE(error_of(example(R"J("state_budget": 2)J"), three).find("raise the budget"), std::string::npos);
}

TEST(PlanBatch, NoStepsWhenSourceIsTarget) {
  EXPECT_EQ(ask(R"J({"mesh": [2], "tensor_shape": [4], "src": "S(0)", "dst": "Shard(0)"})J"),
            R"J({"ok":true,"cost":0.0,"path":["S(0)"],"trace":"S(0)","steps":[],"comm_counts":{},"states_explored":1})J");
}

// ---- Planners, variants, merging ---------------------------------------------------------------------------------

TEST(PlanBatch, GreedyCostsMoreThanGraphHere) {
  const std::string line = R"J({"mesh": [2, 2], "tensor_shape": [8, 8], "src": "S(0)S(1)", "dst": "RS(0)", "cost_model": "fixed")J";
  const json graph = ok(line + "}");
  const json greedy = ok(line + R"J(, "planner": "greedy"})J");
  EXPECT_EQ(graph["cost"].get<double>(), 3.0);
  EXPECT_EQ(graph["trace"], "S(0)S(1)->RS(1)->RS(0)");
  EXPECT_EQ(greedy["cost"].get<double>(), 4.0);
  EXPECT_EQ(greedy["trace"], "S(0)S(1)->S(0)R->RR->RS(0)");
  // auto: greedy for default shard orders, graph otherwise.
  EXPECT_EQ(ask(line + R"J(, "planner": "auto"})J"), ask(line + R"J(, "planner": "greedy"})J"));
  const std::string nested = R"J({"mesh": [2, 2], "tensor_shape": [8, 8], "src": "S(0)[1]S(0)[0]", "dst": "RR", "cost_model": "fixed")J";
  EXPECT_EQ(ask(nested + R"J(, "planner": "auto"})J"), ask(nested + "}"));
}

TEST(PlanBatch, SeedVariantHasOnlySumPartials) {
  const std::string line = R"J({"mesh": [2, 2], "tensor_shape": [8, 8], "src": "RR", "dst": "P(max)R")J";
  EXPECT_TRUE(starts_with(error_of(line + R"J(, "variant": "seed"})J"), "ValueError: no redistribution path from RR to P(max)R"));
  const json newest = ok(line + "}");
  EXPECT_EQ(newest["trace"], "RR->P(max)R");
  EXPECT_EQ(newest["steps"][0]["collective"], "replicate_to_partial");
  EXPECT_EQ(newest["comm_counts"], json::object());  // a local step communicates nothing
}

TEST(PlanBatch, FlattenedAxesMergeSteps) {
  const json j = ok(R"J({"mesh": [2, 2], "tensor_shape": [8, 8], "src": "S(0)S(0)", "dst": "RR", "flattened": [[0, 1]]})J");
  EXPECT_EQ(j["trace"], "S(0)[0]S(0)[1]-->RR");
  EXPECT_EQ(j["path"], json::parse(R"J(["S(0)[0]S(0)[1]", "S(0)R", "RR"])J"));
  ASSERT_EQ(j["steps"].size(), 1U);
  EXPECT_EQ(j["steps"][0]["axes"], json::parse("[0, 1]"));
  EXPECT_EQ(j["steps"][0]["collective"], "all_gather");
  EXPECT_EQ(j["steps"][0]["merged"], true);
  EXPECT_EQ(j["comm_counts"], json::parse(R"({"all_gather": 1})"));
  EXPECT_EQ(j["steps"][0]["cost"].get<double>(), j["cost"].get<double>());
  // Unmerged without the flattened group: two steps, same path.
  const json plain = ok(R"J({"mesh": [2, 2], "tensor_shape": [8, 8], "src": "S(0)S(0)", "dst": "RR"})J");
  EXPECT_EQ(plain["trace"], "S(0)[0]S(0)[1]->S(0)R->RR");
  EXPECT_EQ(plain["steps"].size(), 2U);
  // Three axes, all merged, the group given by axis names.
  const json three = ok(R"J({"mesh": [2, 2, 2], "tensor_shape": [8, 8], "src": "PPP", "dst": "RRR",
                             "names": ["a", "b", "c"], "flattened": [["a", "b"], ["a", "b", "c"]]})J");
  EXPECT_EQ(three["trace"], "P(sum)P(sum)P(sum)-->RRR");
  ASSERT_EQ(three["steps"].size(), 1U);
  EXPECT_EQ(three["steps"][0]["axes"], json::parse("[0, 1, 2]"));
  EXPECT_EQ(three["steps"][0]["collective"], "all_reduce");
  EXPECT_EQ(three["steps"][0]["merged"], true);
  // Indices, names, or both: the same answer.
  EXPECT_EQ(ask(R"J({"mesh": [2, 2, 2], "tensor_shape": [8, 8], "src": "PPP", "dst": "RRR", "flattened": [[0, 1], [0, 1, 2]]})J"),
            ask(R"J({"mesh": [2, 2, 2], "tensor_shape": [8, 8], "src": "PPP", "dst": "RRR", "names": ["a", "b", "c"],
                     "flattened": [["a", 1], [0, "b", "c"]]})J"));
}

TEST(PlanBatch, APlanChosenAsItRunsKeepsItsPathCostAndSaysItsPriceAsItRuns) {
  // Curves for all_gather on 2 ranks and on the flattened group of 4: S(0)S(0) -> RR merged on (0, 1) runs as one
  // all_gather of 4 ranks, and the calibrated model picks it as it runs (page 4). `cost` stays the contract's: the
  // path's two edges before merging, as without the flattened group; `cost_as_run` is the merged step's price.
  const std::string calibration =
      R"J("calibration": {"format": "meshloom-calibration", "version": 1, "backend": "mpi", "world": 4,
          "mesh": {"shape": [2, 2], "names": ["dp", "tp"]}, "axes": {}, "rank_hosts": [0, 0, 0, 0],
          "groups": [{"collective": "all_gather", "n": 2, "hosts": 1, "ranks_per_host": 2, "model": "piecewise",
                      "points": [[16, 10.0], [1024, 20.0]]},
                     {"collective": "all_gather", "n": 4, "hosts": 1, "ranks_per_host": 4, "model": "piecewise",
                      "points": [[16, 12.0], [1024, 22.0]]}]})J";
  const std::string request = R"J({"mesh": [2, 2], "tensor_shape": [8, 8], "src": "S(0)S(0)", "dst": "RR", )J";
  const json merged = ok(request + calibration + R"J(, "flattened": [[0, 1]]})J");
  const json plain = ok(request + calibration + "}");
  ASSERT_EQ(merged["steps"].size(), 1U) << merged.dump();
  EXPECT_EQ(merged["steps"][0]["merged"], true);
  EXPECT_EQ(merged["path"], plain["path"]);
  EXPECT_EQ(merged["cost"].get<double>(), plain["cost"].get<double>());
  EXPECT_EQ(merged["cost_as_run"].get<double>(), merged["steps"][0]["cost"].get<double>());
  EXPECT_LT(merged["cost_as_run"].get<double>(), merged["cost"].get<double>());
  EXPECT_FALSE(plain.contains("cost_as_run"));
  // Greedy's plan is the same, and priced as it runs too: its step says the merged all_gather's price, not its edges'.
  const json greedy = ok(request + calibration + R"J(, "flattened": [[0, 1]], "planner": "greedy"})J");
  EXPECT_EQ(greedy["path"], merged["path"]);
  ASSERT_EQ(greedy["steps"].size(), 1U) << greedy.dump();
  EXPECT_EQ(greedy["steps"][0]["cost"].get<double>(), greedy["cost_as_run"].get<double>());
  EXPECT_EQ(greedy["cost_as_run"].get<double>(), merged["cost_as_run"].get<double>());
  EXPECT_EQ(greedy["cost"].get<double>(), plain["cost"].get<double>());
  double edges = 0;
  for (const json& step : plain["steps"]) edges += step["cost"].get<double>();
  EXPECT_EQ(plain["cost"].get<double>(), edges);
}

// ---- Costs equal the engine's -----------------------------------------------------------------------------------

void expect_costs_equal(const json& answer, const meshloom::Plan& plan) {
  ASSERT_EQ(answer["steps"].size(), plan.steps.size());
  EXPECT_EQ(answer["cost"].get<double>(), plan.path_cost);  // bit-exact after the round trip
  EXPECT_FALSE(answer.contains("cost_as_run"));  // no flattened group: no model compares these plans as they run
  for (std::size_t i = 0; i < plan.steps.size(); ++i) EXPECT_EQ(answer["steps"][i]["cost"].get<double>(), plan.steps[i].cost);
  EXPECT_EQ(answer["states_explored"].get<std::size_t>(), plan.states_explored);
  EXPECT_EQ(answer["trace"], meshloom::trace(plan));
}

TEST(PlanBatch, CommCostsEqualTheEngines) {
  struct Case {
    std::vector<std::int64_t> mesh;
    std::vector<std::int64_t> tensor;
    const char* src;
    const char* dst;
    std::int64_t devices_per_host;
    std::int64_t itemsize;
  };
  const std::vector<Case> cases = {
      {{2, 2, 2}, {8, 8, 8}, "S(0)[0]S(0)[1]R", "RS(0)R", 8, 4},
      {{4, 8}, {1024, 4096}, "S(0)P", "RS(1)", 8, 2},
      {{2, 4, 4}, {333, 77, 5}, "P(sum)S(1)S(0)", "S(0)RS(1)", 4, 4},
      {{3, 5}, {7, 11}, "S(1)S(0)", "S(0)S(1)", 1, 8},
  };
  for (const auto& c : cases) {
    meshloom::PlanRequest r;
    r.mesh_shape = c.mesh;
    r.tensor_shape = c.tensor;
    r.src = meshloom::parse_state(c.src);
    r.dst = meshloom::parse_state(c.dst);
    r.itemsize = c.itemsize;
    const auto plan = meshloom::plan_redistribution(r, meshloom::CommCostModel(c.mesh, c.devices_per_host));
    json line = {{"mesh", c.mesh}, {"tensor_shape", c.tensor}, {"src", c.src}, {"dst", c.dst},
                 {"devices_per_host", c.devices_per_host}, {"itemsize", c.itemsize}};
    expect_costs_equal(ok(line.dump()), plan);
  }
}

TEST(PlanBatch, CalibratedCostsEqualTheEngines) {
  const meshloom::Calibration calibration = meshloom::parse_calibration(calibration_json());
  meshloom::PlanRequest r;
  r.mesh_shape = {2, 2, 2};
  r.tensor_shape = {8, 8, 8};
  r.src = meshloom::parse_state("S(0)[0]S(0)[1]R");
  r.dst = meshloom::parse_state("RS(0)R");
  const auto plan =
      meshloom::plan_redistribution(r, meshloom::CalibratedCostModel(calibration, {"pp", "dp", "tp"}));
  // Given a calibration, the model defaults to calibrated and the axis names to the calibration's.
  const json inline_answer = ok(example("\"calibration\": " + calibration_json()));
  expect_costs_equal(inline_answer, plan);
  EXPECT_EQ(ask(example("\"calibration\": " + calibration_json() +
                        ", \"cost_model\": \"calibrated\", \"names\": [\"pp\", \"dp\", \"tp\"]")),
            inline_answer.dump());
  // A calibration file, by path.
  const auto path = std::filesystem::temp_directory_path() / ("meshloom_plan_batch_" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << calibration_json();
  EXPECT_EQ(ask(example("\"calibration\": " + json(path.string()).dump())), ask(example("\"calibration\": " + calibration_json())));
  std::filesystem::remove(path);
  // Another model named explicitly wins over the calibration.
  EXPECT_EQ(ask(example("\"calibration\": " + calibration_json() + ", \"cost_model\": \"comm\"")), ask(example()));
  // Names map the fits onto another mesh: the calibration's tp fits priced on this mesh's axis 0.
  const json renamed = ok(R"J({"mesh": [2], "tensor_shape": [8], "src": "S(0)", "dst": "R", "names": ["tp"], "calibration": )J" +
                          calibration_json() + "}");
  meshloom::PlanRequest one;
  one.mesh_shape = {2};
  one.tensor_shape = {8};
  one.src = meshloom::parse_state("S(0)");
  one.dst = meshloom::parse_state("R");
  expect_costs_equal(renamed, meshloom::plan_redistribution(one, meshloom::CalibratedCostModel(calibration, {"tp"})));
}

TEST(PlanBatch, ACalibrationWithCurvesPricesAnyMeshAndExtrapolatesOnlyWhenAsked) {
  // Measured on (2,2) (4 ranks on one host): all_reduce on groups of 2 only.
  const std::string calibration =
      R"J({"format": "meshloom-calibration", "version": 1, "backend": "mpi", "world": 4, )J"
      R"J("mesh": {"shape": [2, 2], "names": ["dp", "tp"]}, "axes": {}, "rank_hosts": [0, 0, 0, 0], )J"
      R"J("groups": [{"collective": "all_reduce", "n": 2, "hosts": 1, "ranks_per_host": 2, "model": "piecewise", )J"
      R"J("points": [[16, 10.0], [1024, 20.0]]}]})J";
  // Another mesh, no names needed: (2) on ranks 0, 1 is a group of 2 on one host.
  // 4 float32 elements: the 16-byte point.
  const json two = ok(R"J({"mesh": [2], "tensor_shape": [4], "src": "P(sum)", "dst": "R", "calibration": )J" + calibration + "}");
  EXPECT_EQ(two["cost"].get<double>(), 10.0);
  // (4) was never measured: refused, unless extrapolating (the 2-rank curve times factor(4) / factor(2) = 1.5).
  const std::string four = R"J({"mesh": [4], "tensor_shape": [4], "src": "P(sum)", "dst": "R", "calibration": )J" + calibration;
  EXPECT_EQ(ask_json(four + "}")["ok"], false);
  const json guessed = ok(four + R"J(, "extrapolate": true})J");
  EXPECT_DOUBLE_EQ(guessed["cost"].get<double>(), 15.0);
}

// ---- Errors --------------------------------------------------------------------------------------------------------

TEST(PlanBatch, LineErrors) {
  EXPECT_EQ(error_of(""), "ValueError: empty line: expected a JSON object");
  EXPECT_EQ(error_of("  \t"), "ValueError: empty line: expected a JSON object");
  EXPECT_TRUE(starts_with(error_of("not json"), "ValueError: the line is not valid JSON: ")) << error_of("not json");
  // A NUL byte would end nlohmann's reading and pass what follows unread.
  EXPECT_EQ(error_of(std::string(R"J({"mesh": [2], "tensor_shape": [4], "src": "S(0)", "dst": "R"})J") + '\0' + "{{{"),
            "ValueError: the line is not valid JSON: a NUL byte at line 1, column 62 (JSON text holds none)");
  EXPECT_EQ(error_of("[1, 2]"), "ValueError: the line must be a JSON object, got an array: [1,2]");
  EXPECT_EQ(error_of(std::string(100, '[')),
            "ValueError: the line nests JSON arrays and objects more than 64 levels deep");
  // The engine's JSON policy (json_read.hpp): duplicate keys and integers beyond int64 are refused, naming them.
  EXPECT_EQ(error_of(example(R"("src": "RRR")")), R"(ValueError: src: duplicate key "src")");
  EXPECT_EQ(error_of(example(R"("weights": {"chunk": 0, "chunk": 1})")),
            R"(ValueError: weights.chunk: duplicate key "chunk")");
  EXPECT_EQ(error_of(example(R"("itemsize": 18446744073709551615)")),
            "ValueError: itemsize = 18446744073709551615: out of range for a 64-bit integer");
  EXPECT_EQ(error_of(example(R"("itemsize": 100000000000000000000)")),
            "ValueError: itemsize = 1e+20: out of range for a 64-bit integer");
  PlanBatchLimits small;
  small.max_line_bytes = 10;
  EXPECT_EQ(error_of(example(), small),
            "ValueError: the line holds " + std::to_string(example().size()) + " bytes, over the limit of 10");
}

TEST(PlanBatch, FieldErrorsNameTheValue) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "R", "dst": "R", "frob": 1})J",
       "ValueError: unknown field \"frob\" in the line (expected mesh, tensor_shape, src, dst, planner, variant, "
       "cost_model, weights, itemsize, devices_per_host, calibration, coordinate, flattened, names, state_budget, "
       "extrapolate)"},
      {R"J({"tensor_shape": [4], "src": "R", "dst": "R"})J", "ValueError: missing field \"mesh\" in the line"},
      {R"J({"mesh": [2], "src": "R", "dst": "R"})J", "ValueError: missing field \"tensor_shape\" in the line"},
      {R"J({"mesh": [2], "tensor_shape": [4], "dst": "R"})J", "ValueError: missing field \"src\" in the line"},
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "R"})J", "ValueError: missing field \"dst\" in the line"},
      {R"J({"mesh": 2, "tensor_shape": [4], "src": "R", "dst": "R"})J",
       "ValueError: mesh = 2: expected a list of integers, got an integer"},
      {R"J({"mesh": [2, "x"], "tensor_shape": [4], "src": "RR", "dst": "RR"})J",
       "ValueError: mesh[1] = \"x\": expected an integer, got a string"},
      {R"J({"mesh": [2], "tensor_shape": [4.5], "src": "R", "dst": "R"})J",
       "ValueError: tensor_shape[0] = 4.5: expected an integer, got a non-integer number"},
      {R"J({"mesh": [2], "tensor_shape": [4], "src": 1, "dst": "R"})J",
       "ValueError: src = 1: expected a string, got an integer"},
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "R", "dst": "S(0)X"})J",
       "ValueError: dst = \"S(0)X\": cannot parse state: position 4, token \"X\": expected a placement: R, S(d), S(d)[k], "
       "P, P(op), Replicate(), Shard(d) or Partial(op)"},
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "R", "dst": "R", "planner": "fast"})J",
       "ValueError: planner = \"fast\": unknown planner (expected graph, greedy, auto)"},
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "R", "dst": "R", "variant": "old"})J",
       "ValueError: variant = \"old\": unknown variant (expected seed, newest)"},
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "R", "dst": "R", "cost_model": "Fixed"})J",
       "ValueError: cost_model = \"Fixed\": unknown cost model (expected fixed, comm, calibrated)"},
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "R", "dst": "R", "cost_model": 1})J",
       "ValueError: cost_model = 1: expected a string, got an integer"},
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "R", "dst": "R", "weights": [4]})J",
       "ValueError: weights = [4]: expected an object such as {\"all_reduce\": 4, \"chunk\": 0}, got an array"},
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "R", "dst": "R", "weights": {"broadcast": 1}})J",
       "ValueError: weights: unknown field \"broadcast\" (expected all_reduce, all_to_all, all_gather, reduce_scatter, "
       "chunk)"},
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "R", "dst": "R", "weights": {"chunk": -1}})J",
       "ValueError: weights: chunk = -1.0 must be finite, >= 0 and <= 1e300"},
      // Past 1e300 a plan's cost could sum to infinity, which would read as "no redistribution path".
      {R"J({"mesh": [2, 2], "tensor_shape": [4, 4], "src": "S(0)S(1)", "dst": "RR",)J"
       R"J( "weights": {"all_gather": 1.7e308}})J",
       "ValueError: weights: all_gather = 1.7e+308 must be finite, >= 0 and <= 1e300"},
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "R", "dst": "R", "weights": {"chunk": 1e999}})J",
       "ValueError: the line is not valid JSON: number overflow parsing '1e999'"},
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "R", "dst": "R", "weights": {"chunk": "0"}})J",
       "ValueError: weights.chunk = \"0\": expected a number, got a string"},
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "R", "dst": "R", "devices_per_host": 0})J",
       "ValueError: devices_per_host 0 is out of range [1, 2147483648]"},
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "R", "dst": "R", "calibration": 3})J",
       "ValueError: calibration = 3: expected a calibration object or the path of a calibration file, got an integer"},
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "R", "dst": "R", "cost_model": "calibrated"})J",
       "ValueError: the calibrated cost model needs a calibration (a calibration file from `meshloom-launch calibrate`)"},
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "R", "dst": "R", "names": ["a", "b"]})J",
       "ValueError: names [\"a\",\"b\"]: 2 names for a mesh of 1 axes"},
      {R"J({"mesh": [2, 2], "tensor_shape": [4], "src": "RR", "dst": "RR", "names": ["a", "a"]})J",
       "ValueError: names [\"a\",\"a\"]: the name \"a\" is given to axes 0 and 1"},
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "R", "dst": "R", "names": [""]})J",
       "ValueError: names [\"\"]: axis 0 has an empty name"},
      {R"J({"mesh": [2, 2], "tensor_shape": [4], "src": "RR", "dst": "RR", "flattened": [0, 1]})J",
       "ValueError: flattened[0] = 0: expected a list of axes, got an integer"},
      {R"J({"mesh": [2, 2], "tensor_shape": [4], "src": "RR", "dst": "RR", "flattened": [[0, -1]]})J",
       "ValueError: flattened[0][1] = -1: an axis index must be >= 0"},
      {R"J({"mesh": [2, 2], "tensor_shape": [4], "src": "RR", "dst": "RR", "flattened": [[0, true]]})J",
       "ValueError: flattened[0][1] = true: expected an axis index or name, got a boolean"},
      {R"J({"mesh": [2, 2], "tensor_shape": [4], "src": "RR", "dst": "RR", "flattened": [["dp", "tp"]]})J",
       "KeyError: flattened[0][0] = \"dp\": no mesh axis has that name (axes: unnamed)"},
      {R"J({"mesh": [2, 2], "tensor_shape": [4], "src": "RR", "dst": "RR", "names": ["dp", "tp"], "flattened": [["dp", "cp"]]})J",
       "KeyError: flattened[0][1] = \"cp\": no mesh axis has that name (axes: \"dp\", \"tp\")"},
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "R", "dst": "R", "extrapolate": 1})J",
       "ValueError: extrapolate = 1: expected true or false"},
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "R", "dst": "R", "state_budget": 0})J",
       "ValueError: state_budget = 0: out of range [1, 4000000]"},
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "R", "dst": "R", "state_budget": 4000001})J",
       "ValueError: state_budget = 4000001: out of range [1, 4000000]"},
  };
  for (const auto& [line, expected] : cases) EXPECT_EQ(error_of(line), expected) << line;
  // The engine's checks of the request: checked by their kind and the value they name, so that it may reword them.
  const std::vector<std::pair<std::string, std::string>> engine_cases = {
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "R", "dst": "R", "itemsize": 0})J", "ValueError: itemsize 0"},
      {R"J({"mesh": [2, 2], "tensor_shape": [4], "src": "RR", "dst": "RR", "flattened": [[1, 0]]})J",
       "ValueError: flattened[0] = [1, 0]"},
      {R"J({"mesh": [2, 2], "tensor_shape": [4], "src": "RR", "dst": "RR", "flattened": [[0, 1], [1]]})J",
       "ValueError: flattened[1] = [1]"},
      // Written by names, the group comes back as written.
      {R"J({"mesh": [2, 2], "tensor_shape": [4], "src": "RR", "dst": "RR", "names": ["dp", "tp"], "flattened": [["tp", "dp"]]})J",
       "ValueError: flattened[0] = [\"tp\",\"dp\"]: axes must be ascending and < 2, got axis 0 (\"dp\")"},
      {R"J({"mesh": [2, 2, 2], "tensor_shape": [4], "src": "RRR", "dst": "RRR", "names": ["dp", "cp", "tp"], "flattened": [["dp", 2, "cp"]]})J",
       "ValueError: flattened[0] = [\"dp\",2,\"cp\"]: axes must be ascending and < 3, got axis 1 (\"cp\")"},
      {R"J({"mesh": [2, 2], "tensor_shape": [4], "src": "RR", "dst": "RR", "coordinate": [0, 2]})J",
       "ValueError: coordinate [0, 2]"},
      {R"J({"mesh": [0], "tensor_shape": [4], "src": "R", "dst": "R"})J", "ValueError: mesh [0]: axis 0 has size 0"},
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "S(1)", "dst": "R"})J", "ValueError: "},
      {R"J({"mesh": [2], "tensor_shape": [4], "src": "P(sum)", "dst": "P(max)"})J",
       "ValueError: Redistribution from one partial type (sum) to another (max)"},
  };
  for (const auto& [line, prefix] : engine_cases) {
    const std::string error = error_of(line);
    EXPECT_TRUE(starts_with(error, prefix)) << line << "\n" << error;
  }
}

TEST(PlanBatch, CalibrationErrors) {
  // An inline calibration's errors say where they come from.
  const std::string bad = R"J({"mesh": [2], "tensor_shape": [4], "src": "S(0)", "dst": "R", "calibration": {"format": "x"}})J";
  EXPECT_TRUE(starts_with(error_of(bad), "ValueError: calibration: format")) << error_of(bad);
  const std::string missing = R"J({"mesh": [2], "tensor_shape": [4], "src": "S(0)", "dst": "R", "calibration": "/nonexistent/cal.json"})J";
  EXPECT_TRUE(starts_with(error_of(missing), "RuntimeError: calibration: cannot read calibration \"/nonexistent/cal.json\""))
      << error_of(missing);
  // Without names, the calibration's names only fit a mesh of its own shape.
  EXPECT_EQ(error_of(R"J({"mesh": [4], "tensor_shape": [4], "src": "S(0)", "dst": "R", "calibration": )J" + calibration_json() + "}"),
            "ValueError: the calibration is for mesh [2,2,2] (pp, dp, tp), not mesh [4]: give the mesh's axis names to "
            "look its fits up by name");
  // An axis without fits cannot communicate: the planner finds no path.
  EXPECT_TRUE(starts_with(error_of(R"J({"mesh": [2], "tensor_shape": [4], "src": "S(0)", "dst": "R", "names": ["ep"], "calibration": )J" +
                                   calibration_json() + "}"),
                          "ValueError: no redistribution path from S(0) to R"));
}

// ---- The line loop ---------------------------------------------------------------------------------------------------

TEST(PlanBatch, RunAnswersEveryLineInOrder) {
  std::istringstream in(example(R"J("cost_model": "fixed")J") + "\n" + "garbage\r\n" + "\n" +
                        R"J({"mesh": [2], "tensor_shape": [4], "src": "S(0)", "dst": "R", "cost_model": "fixed"})J");
  std::ostringstream out;
  EXPECT_EQ(meshloom::launcher::run_plan_batch(in, out), 0);
  std::istringstream lines(out.str());
  std::vector<std::string> answers;
  for (std::string l; std::getline(lines, l);) answers.push_back(l);
  ASSERT_EQ(answers.size(), 4U) << out.str();
  EXPECT_EQ(answers[0], ask(example(R"J("cost_model": "fixed")J")));
  EXPECT_TRUE(starts_with(answers[1], R"J({"ok":false,"error":"ValueError: the line is not valid JSON)J")) << answers[1];
  EXPECT_EQ(answers[2], R"J({"ok":false,"error":"ValueError: empty line: expected a JSON object"})J");
  EXPECT_EQ(answers[3],
            R"J({"ok":true,"cost":2.0,"path":["S(0)","R"],"trace":"S(0)->R","steps":[{"axes":[0],"collective":"all_gather",)J"
            R"J("from":"S(0)","to":"R","cost":2.0,"logical_shape":[4],"bytes":8,"merged":false}],"comm_counts":{"all_gather":1},)J"
            R"J("states_explored":2})J");
}

TEST(PlanBatch, OverlongLinesAreSkippedWithAnError) {
  PlanBatchLimits limits;
  limits.max_line_bytes = 100;
  std::istringstream in(std::string(500, ' ') + "\n" + R"J({"mesh": [2], "tensor_shape": [4], "src": "S(0)", "dst": "R"})J" + "\n");
  std::ostringstream out;
  EXPECT_EQ(meshloom::launcher::run_plan_batch(in, out, limits), 0);
  std::istringstream lines(out.str());
  std::string first, second;
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_EQ(first, R"J({"ok":false,"error":"ValueError: the line holds 500 bytes, over the limit of 100"})J");
  EXPECT_TRUE(starts_with(second, R"J({"ok":true,)J")) << second;
}

}  // namespace
