// meshloom-launch advise, run as a user runs it: the table, the JSON records, the choice of cost model, the
// constraints, and bad input (exit 2, a message naming the value).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch_support.hpp"

namespace {

using meshloom::test::launch;
using meshloom::test::Launched;
using meshloom::test::lines_of;
using nlohmann::json;

const meshloom::test::ScratchDir scratch("meshloom_advise_cli_");

// Four ranks on 2 hosts of 2, (dp 2, tp 2): an activation all-reduced on tp 8 times a step, a weight all-gathered
// on dp 4 times.
std::string tensors_design(const std::string& extra = "") {
  return R"J({
  "format": "meshloom-design",
  "version": 2,
  "name": "cli-2x2",
  "world": 4,
  "devices_per_host": 2,
  "mesh": {"shape": [2, 2], "names": ["dp", "tp"], "flattened": []},
  "tensors": [
    {"name": "act", "shape": [512, 512], "dtype": "float32", "src": "RP(sum)", "dst": "RR"},
    {"name": "weight", "shape": [512, 512], "dtype": "float32", "src": "S(0)R", "dst": "RR"}
  ],
  "workload": {"tensors": [{"tensor": "act", "count": 8}, {"tensor": "weight", "count": 4}]})J" +
         extra + "\n}\n";
}

// Llama 3 8B on (pp 2, tp 4), 2 hosts of 4.
std::string llama_design() {
  return R"J({
  "format": "meshloom-design",
  "version": 2,
  "name": "cli-llama",
  "world": 8,
  "devices_per_host": 4,
  "mesh": {"shape": [2, 4], "names": ["pp", "tp"], "flattened": []},
  "tensors": [],
  "workload": {
    "tensors": [],
    "model": {"layers": 32, "hidden": 4096, "ffn": 14336, "heads": 32, "kv_heads": 8, "vocab": 128256,
              "seq_len": 8192, "micro_batch": 1, "micro_batches": 4, "dtype": "bfloat16", "experts": 0, "top_k": 0,
              "sequence_parallel": true,
              "axes": {"fsdp": [], "replicate": [], "tp": "tp", "cp": "", "ep": "", "pp": "pp"}}
  }
}
)J";
}

// Curves by group shape for 4 ranks on 2 hosts of 2: every collective on 2 ranks within a host and across the two.
std::string calibration(bool across = true) {
  std::string groups;
  for (const char* c : {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"}) {
    groups += std::string(groups.empty() ? "" : ",\n") + R"J({"collective": ")J" + c +
              R"J(", "n": 2, "hosts": 1, "ranks_per_host": 2, "model": "piecewise", "points": [[1024, 10], [1048576, 60]]})J";
    if (across) {
      groups += std::string(",\n") + R"J({"collective": ")J" + c +
                R"J(", "n": 2, "hosts": 2, "ranks_per_host": 1, "model": "piecewise", "points": [[1024, 30], [1048576, 500]]})J";
    }
  }
  return R"J({"format": "meshloom-calibration", "version": 1, "backend": "mpi", "timing": "single_shot", "world": 4,
  "mesh": {"shape": [2, 2], "names": ["dp", "tp"]}, "axes": {}, "rank_hosts": [0, 0, 1, 1],
  "groups": [)J" + groups + "]}\n";
}

std::string path_of(const std::string& name, const std::string& content) { return scratch.write(name, content).string(); }

TEST(AdviseCli, TableRanksTheOrdersAndSaysWhy) {
  const std::string design = path_of("table.meshloom.json", tensors_design());
  const Launched r = launch("advise --design '" + design + "' 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  const auto lines = lines_of(r.out);
  ASSERT_GE(lines.size(), 9U) << r.out;
  EXPECT_EQ(lines[0], "advise \"cli-2x2\": 4 ranks, hosts of 2, search orders, model comm (2 devices per host)");
  EXPECT_EQ(lines[1], "2 candidates, 0 rejected by the constraints, 2 priced (4 plans computed, 0 reused)");
  EXPECT_EQ(lines[3], "rank  layout         cost/step          dp          tp  hosts crossed");
  // tp all-reduces 8 times a step: the order that keeps tp inside a host wins.
  EXPECT_EQ(lines[4].rfind("   1  (dp 2, tp 2)", 0), 0U) << lines[4];
  EXPECT_NE(lines[4].find(" us "), std::string::npos);
  EXPECT_EQ(lines[4].substr(lines[4].size() - 4), "dp 2");
  EXPECT_EQ(lines[5].rfind("   2  (tp 2, dp 2)", 0), 0U) << lines[5];
  EXPECT_EQ(lines[5].substr(lines[5].size() - 4), "tp 2");
  EXPECT_EQ(lines[7].rfind("reason: tp stays inside a host, where its all-reduces cost the most; (tp 2, dp 2) costs ",
                           0),
            0U)
      << lines[7];
  EXPECT_NE(lines[7].find(": its tp all-reduces cross 2 hosts"), std::string::npos) << lines[7];
  EXPECT_EQ(lines[8], "ties: none, the best layout is the only one at its cost");
}

TEST(AdviseCli, SaysWhereTheCommModelPricesAnAxisInsideAHostItsGroupsCross) {
  // 12 ranks on hosts of 4 as (dp 4, tp 3): tp's groups {0,1,2} {3,4,5} ... the second spans hosts 0 and 1, but
  // PyTorch's rule (3 ranks from tp inward <= 4 per host) prices tp inside a host. (tp 3, dp 4) has no such axis.
  std::string text = tensors_design();
  const auto replace_all = [&text](const std::string& from, const std::string& to) {
    ASSERT_NE(text.find(from), std::string::npos) << from;
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  };
  replace_all(R"("world": 4)", R"("world": 12)");
  replace_all(R"("devices_per_host": 2)", R"("devices_per_host": 4)");
  replace_all(R"("shape": [2, 2])", R"("shape": [4, 3])");
  replace_all(R"("shape": [512, 512])", R"("shape": [96, 96])");  // the tensors: dp 4 divides 96
  const std::string design = path_of("straddle.meshloom.json", text);
  Launched r = launch("advise --design '" + design + "' 2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(lines_of(r.out)[1],
            "note: the comm model prices tp in (dp 4, tp 3) as inside a host (PyTorch's rule: it and the axes after it "
            "hold 3 ranks, at most 4 per host) though its groups cross 2 hosts; a calibrated model prices groups where "
            "they fall")
      << r.out;
  r = launch("advise --design '" + design + "' --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(json::parse(lines_of(r.out).back())["host_rule_note"].get<std::string>().starts_with(
      "the comm model prices tp in (dp 4, tp 3) as inside a host"))
      << r.out;
  // Hosts of 3 line up with tp's groups: no note.
  replace_all(R"("devices_per_host": 4)", R"("devices_per_host": 3)");
  r = launch("advise --design '" + path_of("aligned.meshloom.json", text) + "' 2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("note:"), std::string::npos) << r.out;
}

TEST(AdviseCli, JsonRecordsOnePerCandidateThenASummary) {
  const std::string design = path_of("json.meshloom.json", tensors_design());
  const Launched r = launch("advise --design '" + design + "' --search both --top 0 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto lines = lines_of(r.out);
  // 4 = 2 * 2 and 2 orders: (1,4) (2,2) (4,1) in 2 orders each, but (tp 4, dp 1) is (dp 1, tp 4) and (tp 1, dp 4)
  // is (dp 4, tp 1) (an axis of size 1 changes no group): 4 layouts.
  ASSERT_EQ(lines.size(), 5U) << r.out;
  double previous = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const json c = json::parse(lines[i]);
    EXPECT_EQ(c["type"], "advise_candidate");
    EXPECT_EQ(c["rank"], i + 1);
    EXPECT_EQ(c["unit"], "us");
    ASSERT_TRUE(c["cost"].is_number()) << lines[i];
    EXPECT_GE(c["cost"].get<double>(), previous);
    previous = c["cost"].get<double>();
    ASSERT_EQ(c["mesh"]["shape"].size(), 2U);
    ASSERT_EQ(c["axes"].size(), 2U);
    double axes = 0;
    for (std::size_t a = 0; a < 2; ++a) {
      const json& axis = c["axes"][a];
      EXPECT_EQ(axis["name"], c["mesh"]["names"][a]);
      EXPECT_EQ(axis["size"], c["mesh"]["shape"][a]);
      EXPECT_TRUE(axis["hosts"].is_number_integer());
      axes += axis["cost"].get<double>();
      EXPECT_TRUE(axis["by_collective"].is_object());
      EXPECT_TRUE(axis["counts"].is_object());
    }
    EXPECT_NEAR(axes, c["cost"].get<double>(), 1e-9 * c["cost"].get<double>());
    EXPECT_EQ(c["by_category"].size(), 1U);  // design tensors are all "tensor"
    EXPECT_EQ(c["layout"].get<std::string>().front(), '(');
  }
  const json first = json::parse(lines[0]);
  EXPECT_EQ(first["mesh"]["names"], json::parse(R"J(["dp", "tp"])J"));
  EXPECT_EQ(first["axes"][1]["counts"]["all_reduce"], 8);  // on a group of one rank: PyTorch's model charges it
  EXPECT_EQ(first["axes"][0]["counts"]["all_gather"], 4);
  EXPECT_EQ(first["axes"][0]["hosts"], 2);
  const json s = json::parse(lines[4]);
  EXPECT_EQ(s["type"], "advise_summary");
  EXPECT_EQ(s["design"], "cli-2x2");
  EXPECT_EQ(s["candidates"], 4);
  EXPECT_EQ(s["rejected"], 0);
  EXPECT_EQ(s["priced"], 4);
  EXPECT_EQ(s["shown"], 4);
  // (tp 1, dp 4) is not a candidate of its own: it has the groups of (dp 4, tp 1).
  EXPECT_EQ(s["tied_with_best"], 1);
  EXPECT_EQ(json::parse(lines[0])["layout"], "(dp 4, tp 1)");
  EXPECT_EQ(json::parse(lines[1])["layout"], "(dp 2, tp 2)");
  EXPECT_EQ(s["model"], "comm");
  EXPECT_EQ(s["unit"], "us");
  EXPECT_EQ(s["search"], "both");
  EXPECT_EQ(s["reason"].get<std::string>().rfind("dp's all-gathers cross 2 hosts; (dp 2, tp 2) costs ", 0),
            0U)
      << s["reason"];
}

TEST(AdviseCli, ConstraintsRejectCandidates) {
  const std::string design = path_of("llama.meshloom.json", llama_design());
  // Factorizations of 8 into (pp, tp): (1,8) (2,4) (4,2) (8,1). tp within a host of 4 drops (1,8); pp dividing the
  // 32 layers drops none; tp fixed at 2 leaves (4,2).
  Launched r = launch("advise --design '" + design + "' --search factorizations --within-host tp --json");
  ASSERT_EQ(r.status, 0) << r.out;
  json s = json::parse(lines_of(r.out).back());
  EXPECT_EQ(s["candidates"], 4);
  EXPECT_EQ(s["rejected"], 1);
  r = launch("advise --design '" + design + "' --search factorizations --fix tp=2 --pp-divides-layers --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 2U) << r.out;
  EXPECT_EQ(json::parse(lines[0])["layout"], "(pp 4, tp 2)");
  // Pipeline sends are priced on pp.
  const json pp = json::parse(lines[0])["axes"][0];
  EXPECT_EQ(pp["name"], "pp");
  EXPECT_GT(pp["by_collective"]["send"].get<double>(), 0);
  EXPECT_GT(pp["counts"]["send"].get<int>(), 0);
  // Nothing left: exit 2, the constraints named.
  r = launch("advise --design '" + design + "' --fix tp=3 2>&1");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "error: ValueError: no candidate layout satisfies the constraints (tp = 3): all 2 of search "
                   "\"orders\" were rejected\n");
}

TEST(AdviseCli, TopLimitsTheCandidatesShown) {
  const std::string design = path_of("top.meshloom.json", tensors_design());
  const Launched r = launch("advise --design '" + design + "' --search both --top 2");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("(2 more; --top 0 shows every candidate)\n"), std::string::npos) << r.out;
  const Launched j = launch("advise --design '" + design + "' --search both --top 2 --json");
  const auto lines = lines_of(j.out);
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_EQ(json::parse(lines[2])["shown"], 2);
  EXPECT_EQ(json::parse(lines[2])["priced"], 4);
}

TEST(AdviseCli, TheModelFollowsTheCalibration) {
  const std::string cal = path_of("curves.json", calibration());
  const std::string design = path_of("calibrated.meshloom.json", tensors_design(",\n  \"calibration\": \"curves.json\""));
  // The design's calibration (relative to the design file) makes the calibrated model the default.
  Launched r = launch("advise --design '" + design + "' --json");
  ASSERT_EQ(r.status, 0) << r.out;
  json s = json::parse(lines_of(r.out).back());
  EXPECT_EQ(s["model"], "calibrated");
  EXPECT_EQ(s["unit"], "us");
  r = launch("advise --design '" + design + "'");
  EXPECT_NE(r.out.find("model calibrated (\"" + cal + "\", 10 curves)"), std::string::npos) << r.out;
  // --model overrides it; fixed has no unit.
  r = launch("advise --design '" + design + "' --model fixed --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(json::parse(lines_of(r.out).front())["unit"], "fixed");
  EXPECT_EQ(json::parse(lines_of(r.out).back())["model"], "fixed");
  // --calibration on a design without one.
  const std::string plain = path_of("plain.meshloom.json", tensors_design());
  r = launch("advise --design '" + plain + "' --calibration '" + cal + "' --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(json::parse(lines_of(r.out).back())["model"], "calibrated");
}

TEST(AdviseCli, ACalibrationThatPricesNoLayoutIsAnErrorUnlessExtrapolating) {
  // Curves within a host only: every order puts an axis across hosts, whose curves were never measured. With no
  // layout priced there is no ranking to give (nor ties to claim): exit 2, naming the first layout and the gap.
  const std::string cal = path_of("within.json", calibration(false));
  const std::string design = path_of("within.meshloom.json", tensors_design());
  Launched r = launch("advise --design '" + design + "' --calibration '" + cal + "' 2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(r.out.starts_with("error: ValueError: no layout can be priced: (dp 2, tp 2): ")) << r.out;
  EXPECT_NE(r.out.find("; the calibration cannot price: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("; calibrate those group shapes, or --extrapolate to price them from the nearest measured ones\n"),
            std::string::npos)
      << r.out;
  r = launch("advise --design '" + design + "' --calibration '" + cal + "' --json 2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
  // Extrapolating from the shapes measured, they are priced.
  r = launch("advise --design '" + design + "' --calibration '" + cal + "' --extrapolate --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(json::parse(lines_of(r.out)[0])["cost"].is_number());
  EXPECT_TRUE(json::parse(lines_of(r.out)[1])["cost"].is_number());
}

TEST(AdviseCli, AnUnpricedLayoutRanksLastWithNoCosts) {
  // Across the hosts only all_gather was measured: (dp 2, tp 2) all-gathers on dp there and all-reduces on tp inside
  // a host; (tp 2, dp 2) would all-reduce across, never measured. It ranks last, its cost and its axes' null (the
  // table prints "-"), and the summary counts it apart from the priced.
  std::string text = calibration(false);
  const std::string groups = R"("groups": [)";
  text.insert(text.find(groups) + groups.size(),
              R"J({"collective": "all_gather", "n": 2, "hosts": 2, "ranks_per_host": 1, "model": "piecewise", "points": [[1024, 30], [1048576, 500]]},
)J");
  const std::string cal = path_of("gather-across.json", text);
  const std::string design = path_of("gather-across.meshloom.json", tensors_design());
  Launched r = launch("advise --design '" + design + "' --calibration '" + cal + "' --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3U) << r.out;
  const json priced = json::parse(lines[0]);
  const json unpriced = json::parse(lines[1]);
  EXPECT_EQ(priced["layout"], "(dp 2, tp 2)");
  EXPECT_TRUE(priced["cost"].is_number());
  EXPECT_FALSE(priced.contains("unpriced"));
  EXPECT_EQ(unpriced["layout"], "(tp 2, dp 2)");
  EXPECT_TRUE(unpriced["cost"].is_null());
  for (const json& axis : unpriced["axes"]) EXPECT_TRUE(axis["cost"].is_null()) << lines[1];
  EXPECT_TRUE(unpriced["unpriced"].get<std::string>().starts_with("act: no plan: ")) << lines[1];
  EXPECT_NE(unpriced["unpriced"].get<std::string>().find(
                "; the calibration cannot price: all_reduce on axis 0: 2 ranks on 2 hosts (1 per host) never measured"),
            std::string::npos)
      << lines[1];
  const json summary = json::parse(lines[2]);
  EXPECT_EQ(summary["priced"], 1);
  EXPECT_EQ(summary["unpriced"], 1);
  r = launch("advise --design '" + design + "' --calibration '" + cal + "'");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("   2  (tp 2, dp 2)  cannot price           -       -  tp 2\n"), std::string::npos) << r.out;
}

struct BadInput {
  std::string args;
  std::string message;
};

TEST(AdviseCli, BadInputExitsTwoNamingTheValue) {
  const std::string design = path_of("bad.meshloom.json", tensors_design());
  const std::string flat = path_of("flat.json", R"J({"format": "meshloom-calibration", "version": 1, "backend": "mpi",
  "world": 4, "mesh": {"shape": [2, 2], "names": ["dp", "tp"]},
  "axes": {"tp": {"all_reduce": {"alpha_us": 10, "busbw_gbps": 20, "r2": 0.99, "samples": 8}}}})J");
  const std::string v1 = path_of("v1.meshloom.json", R"J({"format": "meshloom-design", "version": 1, "name": "no-work",
  "world": 4, "devices_per_host": 2, "mesh": {"shape": [2, 2], "names": ["dp", "tp"], "flattened": []}, "tensors": []})J");
  const std::string d = " --design '" + design + "'";
  const std::vector<BadInput> cases{
      {"", "--design is required (e.g. advise --design hsdp.meshloom.json)"},
      {" --design '" + v1 + "'", "the design has no workload"},
      {d + " --search all", "--search \"all\": unknown search (expected orders, factorizations or both)"},
      {d + " --top -1", "--top \"-1\": must be >= 0 (0: every candidate)"},
      {d + " --top many", "--top \"many\": not an integer"},
      {d + " --fix tp8", "--fix \"tp8\": expected AXIS=SIZE (e.g. tp=8)"},
      {d + " --fix mp=2", "--fix \"mp=2\": no mesh axis is named \"mp\" (axes: dp, tp)"},
      {d + " --fix tp=two", "--fix \"tp=two\": \"two\" is not an integer"},
      {d + " --fix tp=0", "--fix \"tp=0\": the size must be >= 1"},
      {d + " --fix tp=2 --fix tp=4", "--fix \"tp=4\": tp is fixed twice"},
      {d + " --within-host ep", "--within-host \"ep\": no mesh axis is named \"ep\" (axes: dp, tp)"},
      {d + " --pp-divides-layers", "--pp-divides-layers: the design's workload has no model"},
      {d + " --model magic", "--model \"magic\": unknown cost model"},
      {d + " --model calibrated", "--model calibrated needs a calibration"},
      {d + " --model comm --calibration x.json", "--calibration goes with the calibrated model, not the comm model"},
      {d + " --extrapolate", "--extrapolate goes with the calibrated model, not the comm model"},
      {d + " --calibration '" + flat + "'", "has per-axis fits only (no curves by group shape)"},
      {d + " --calibration /nonexistent/cal.json", "/nonexistent/cal.json"},
      {" --design /nonexistent/x.meshloom.json", "/nonexistent/x.meshloom.json"},
  };
  for (const BadInput& c : cases) {
    SCOPED_TRACE(c.args);
    const Launched r = launch("advise" + c.args + " 2>&1");
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_EQ(r.out.rfind("error: ", 0), 0U) << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;  // one line, nothing on stdout before it
  }
}

}  // namespace
