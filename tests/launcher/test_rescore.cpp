// rescore (launcher/src/rescore.hpp): a validate run's measured plans priced again by other calibrations and judged
// by validate's rules. The defining properties: the calibration the run was validated with gives back the run's own
// verdict; a calibration whose prices are what the steps measured picks the measured fastest in every request with
// no step error, whether or not its planner's own pick ran; the run's own step times do the same where every step
// of a kind measured alike.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "meshloom/error.hpp"
#include "meshloom/plan/planner.hpp"
#include "plan_batch.hpp"
#include "rescore.hpp"
#include "support/calibration_curves.hpp"
#include "validate_suite.hpp"
#include "support/expect_error.hpp"

namespace meshloom::launcher {
namespace {

using nlohmann::json;

using testing::error_of;

// Four ranks on one host, curves for groups of 2 and 4. `merged_factor` scales the 4-rank all_reduce.
Calibration calibration(double merged_factor = 1.0) {
  Calibration c = testing::four_ranks_on_one_host();
  c.groups.push_back(testing::piecewise("all_gather", {2, 1, 2}, {{1024, 10}, {1048576, 400}, {67108864, 30000}}));
  c.groups.push_back(testing::piecewise("all_gather", {4, 1, 4}, {{1024, 14}, {1048576, 700}, {67108864, 50000}}));
  c.groups.push_back(testing::piecewise("all_reduce", {2, 1, 2}, {{1024, 12}, {1048576, 500}, {67108864, 50000}}));
  c.groups.push_back(testing::piecewise(
      "all_reduce", {4, 1, 4},
      {{1024, 20 * merged_factor}, {1048576, 600 * merged_factor}, {67108864, 60000 * merged_factor}}));
  c.groups.push_back(testing::piecewise("reduce_scatter", {2, 1, 2}, {{1024, 9}, {1048576, 300}, {67108864, 28000}}));
  c.groups.push_back(testing::piecewise("reduce_scatter", {4, 1, 4}, {{1024, 12}, {1048576, 450}, {67108864, 40000}}));
  c.groups.push_back(testing::piecewise("all_to_all", {2, 1, 2}, {{1024, 11}, {1048576, 450}, {67108864, 40000}}));
  c.groups.push_back(testing::piecewise("all_to_all", {4, 1, 4}, {{1024, 15}, {1048576, 800}, {67108864, 70000}}));
  return c;
}

PlanSetup setup_of(const std::string& src, const std::string& dst, std::vector<std::int64_t> tensor, bool flattened,
                   const Calibration& cal) {
  PlanSetup s;
  s.request.mesh_shape = {2, 2};
  s.request.tensor_shape = std::move(tensor);
  s.request.src = parse_state_text(src, "src");
  s.request.dst = parse_state_text(dst, "dst");
  s.request.itemsize = 8;
  if (flattened) s.request.flattened = {{0, 1}};
  s.names = {"dp", "tp"};
  s.cost_model = CostModelKind::Calibrated;
  s.calibration = cal;
  return s;
}

struct Request {
  std::string src, dst;
  std::vector<std::int64_t> tensor;
  bool flattened = false;
};

const std::vector<Request> kRequests{{"P(sum)P(sum)", "RR", {256, 512}, true},
                                     {"S(0)S(1)", "S(1)S(0)", {64, 128}, false},
                                     {"S(0)R", "RS(0)", {1024, 2048}, false},
                                     {"P(sum)S(0)", "RR", {256, 512}, false}};

// A validate file: every request's candidates are the k cheapest plans of the calibration `validated` (its
// predictions and picks recorded), each step measured as `measured` prices it (every iteration alike). `drop_pick`
// leaves the validated calibration's pick out of the candidates.
std::string records(const Calibration& validated, const Calibration& measured, bool drop_pick = false,
                    const std::string& cpus = R"(["0","1","0","1"])") {
  std::string text = R"({"type":"config","command":"validate","backend":"mpi","world":4,"hosts":["vm","vm","vm","vm"],)"
                     R"("calibration":"v.json","cpus":)" + cpus + "}\n";
  for (std::size_t i = 0; i < kRequests.size(); ++i) {
    const Request& q = kRequests[i];
    const PlanSetup v = setup_of(q.src, q.dst, q.tensor, q.flattened, validated);
    const PlanSetup m = setup_of(q.src, q.dst, q.tensor, q.flattened, measured);
    const auto vmodel = make_cost_model(v);
    const auto mmodel = make_cost_model(m);
    // As validate takes them: the 3 cheapest and the pick, those that run alike once (the same trace and steps).
    const ModelPlans plans = model_plans(v.request, *vmodel, 3);
    const auto key_of = [](const Plan& plan) {
      std::string key = trace(plan);
      for (const PlanStep& step : plan.steps) {
        key += ";" + std::string(to_string(step.collective)) + "@" + std::to_string(step.axes.front()) + "+" +
               std::to_string(step.axes.size());
      }
      return key;
    };
    const std::string pick_key = key_of(plans.plans[plans.pick]);
    std::vector<Plan> candidates;
    std::vector<std::string> keys;
    for (std::size_t k = 0; k < plans.plans.size(); ++k) {
      const std::string key = key_of(plans.plans[k]);
      if ((k >= 3 && k != plans.pick) || (drop_pick && key == pick_key)) continue;
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
      keys.push_back(key);
      candidates.push_back(plans.plans[k]);
    }
    const auto found = std::find(keys.begin(), keys.end(), pick_key);
    const std::size_t pick = found == keys.end() ? 0 : static_cast<std::size_t>(found - keys.begin());
    text += json{{"type", "request"}, {"request", i}, {"label", q.src + " -> " + q.dst},
                 {"mesh", {{"shape", {2, 2}}, {"names", {"dp", "tp"}}}}, {"tensor_shape", q.tensor},
                 {"flattened", v.request.flattened}, {"src", q.src}, {"dst", q.dst}, {"itemsize", 8},
                 {"plans", candidates.size()}, {"picks", {{"calibrated", pick}}}}.dump() + "\n";
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      text += json{{"type", "plan"}, {"request", i}, {"plan", c}, {"trace", trace(candidates[c])},
                   {"steps", candidates[c].steps.size()}}.dump() + "\n";
      const std::vector<double> predicted = price_plan_steps(v.request, candidates[c], *vmodel);
      const std::vector<double> actual = price_plan_steps(m.request, candidates[c], *mmodel);
      for (std::size_t s = 0; s < candidates[c].steps.size(); ++s) {
        const PlanStep& step = candidates[c].steps[s];
        text += json{{"type", "step"}, {"request", i}, {"plan", c}, {"step", s}, {"axes", step.axes},
                     {"collective", std::string(to_string(step.collective))}, {"merged", step.merged}, {"bytes", step.bytes},
                     {"predicted", {{"calibrated", predicted[s]}}}, {"measured_us", actual[s]},
                     {"iterations_us", std::vector<double>(9, actual[s])}}.dump() + "\n";
      }
      text += json{{"type", "summary"}, {"request", i}, {"plan", c}, {"verified", true}}.dump() + "\n";
    }
  }
  return text;
}

TEST(Rescore, TheValidatedCalibrationGivesBackTheRunsVerdict) {
  const Calibration a = calibration();
  const ValidateRecords r = parse_validate_records(records(a, calibration(3.0)), "v.jsonl");
  ASSERT_EQ(r.requests.size(), kRequests.size());
  EXPECT_EQ(r.calibration, "v.json");
  const RescoreReport report = rescore_records(r, {{.name = "a.json", .calibration = a}});
  ASSERT_EQ(report.scores.size(), 3U);
  EXPECT_EQ(report.scores[0].model, "validated");
  EXPECT_EQ(report.scores[1].model, "a.json");
  EXPECT_EQ(report.scores[2].model, "step times");
  EXPECT_EQ(report.scores[1].right, report.scores[0].right);
  EXPECT_EQ(report.scores[1].exact, report.scores[0].exact);
  ASSERT_TRUE(report.scores[1].step_error && report.scores[0].step_error);
  EXPECT_NEAR(report.scores[1].step_error->median, report.scores[0].step_error->median, 1e-12);
  EXPECT_EQ(report.unmeasured_picks[1], 0);
  for (const RequestMeasurement& q : report.requests) {
    EXPECT_EQ(q.pick[1], q.pick[0]);
    for (const CandidateMeasurement& c : q.candidates) {
      for (std::size_t s = 0; s < c.predicted_steps[0].size(); ++s) {
        EXPECT_NEAR(c.predicted_steps[1][s], c.predicted_steps[0][s], 1e-9 * c.predicted_steps[0][s]);
      }
    }
  }
}

TEST(Rescore, ACalibrationThatPricesAsMeasuredPicksTheFastestEverywhere) {
  // Validated with a calibration whose 4-rank all_reduce is 3x too cheap: it picks the merged all_reduce of the
  // flattened group, measured slower than splitting it on the axes.
  const Calibration wrong = calibration();
  const Calibration right = calibration(3.0);
  const RescoreReport report =
      rescore_records(parse_validate_records(records(wrong, right), "v.jsonl"), {{.name = "right.json", .calibration = right}});
  const auto n = static_cast<std::int64_t>(kRequests.size());
  EXPECT_LT(report.scores[0].right, n);  // the validated picks missed the P(sum)P(sum) -> RR
  EXPECT_EQ(report.scores[1].right, n);
  ASSERT_TRUE(report.scores[1].step_error);
  EXPECT_NEAR(report.scores[1].step_error->median, 0.0, 1e-12);
  EXPECT_NEAR(report.scores[1].step_error->p90, 0.0, 1e-12);
  EXPECT_DOUBLE_EQ(report.scores[1].time_lost_max, 0.0);
  // Every step of a kind measured alike: the run's own step times price every step as measured too.
  EXPECT_EQ(report.scores[2].right, n);
  EXPECT_NEAR(report.scores[2].step_error->p90, 0.0, 1e-12);
}

TEST(Rescore, APickThatDidNotRunIsCountedAndJudgedByTheCheapestMeasuredPlan) {
  const Calibration a = calibration();
  const RescoreReport report =
      rescore_records(parse_validate_records(records(a, a, /*drop_pick=*/true), "v.jsonl"), {{.name = "a.json", .calibration = a}});
  EXPECT_EQ(report.unmeasured_picks[1], static_cast<std::int64_t>(kRequests.size()));
  const auto n = static_cast<std::int64_t>(kRequests.size());
  EXPECT_EQ(report.scores[1].right, n);  // prices are the measurements: the cheapest measured is the fastest
  for (const RequestMeasurement& q : report.requests) {
    for (const CandidateMeasurement& c : q.candidates) {
      EXPECT_GE(c.predicted_total[1], q.candidates[q.pick[1]].predicted_total[1]);
    }
  }
}

// With axis corrections and an axis' own as-run points, every measured step is priced as validate's calibrated model
// prices it (price_plan_steps); they hold for records whose ranks of the calibrated mesh sat on its CPUs only.
TEST(Rescore, AxisCorrectionsHoldOnlyForRanksOnTheCalibratedCpus) {
  Calibration a = calibration();
  a.rank_cpus = {"0", "1", "0", "1"};
  a.axis_corrections.push_back({.axes = {0}, .collective = "all_reduce", .factors = {{.bytes = 1024, .factor = 0.8, .steps = 15}},
                                .as_run = {{.bytes = 1024, .factor = 1.3, .steps = 4}, {.bytes = 1048576, .factor = 0.7, .steps = 4}}});
  a.axis_corrections.push_back({.axes = {1}, .collective = "all_reduce", .factors = {{.bytes = 1024, .factor = 1.2, .steps = 15}}, .as_run = {}});
  a.axis_corrections.push_back({.axes = {1}, .collective = "all_gather", .factors = {{.bytes = 1024, .factor = 0.9, .steps = 15}},
                                .as_run = {{.bytes = 65536, .factor = 1.1, .steps = 3}}});
  const Calibration plain = calibration();
  // Validated with `a` itself: the recorded predictions are price_plan_steps' under a.
  const ValidateRecords same = parse_validate_records(records(a, plain), "v.jsonl");
  const RescoreReport report = rescore_records(same, {{.name = "a.json", .calibration = a},
                                                      {.name = "plain.json", .calibration = plain}});
  bool corrected = false;
  for (const RequestMeasurement& q : report.requests) {
    EXPECT_EQ(q.pick[1], q.pick[0]);
    for (const CandidateMeasurement& c : q.candidates) {
      for (std::size_t s = 0; s < c.predicted_steps[0].size(); ++s) {
        EXPECT_NEAR(c.predicted_steps[1][s], c.predicted_steps[0][s], 1e-9 * c.predicted_steps[0][s]);
        corrected = corrected || std::abs(c.predicted_steps[2][s] - c.predicted_steps[1][s]) > 1e-6;
      }
    }
  }
  EXPECT_TRUE(corrected);  // the corrections did price some step otherwise than the curves alone
  // A job of more ranks whose first four sat as the calibrated job's: its corrections hold.
  EXPECT_NO_THROW((void)rescore_records(
      parse_validate_records(records(plain, plain, false, R"(["0","1","0","1","2","3","2","3"])"), "eight.jsonl"),
      {{.name = "a.json", .calibration = a}}));
  const ValidateRecords other = parse_validate_records(records(plain, plain, false, R"(["0-1","0-1","0-1","0-1"])"), "w.jsonl");
  const std::string e = error_of([&] { (void)rescore_records(other, {{.name = "a.json", .calibration = a}}); });
  EXPECT_NE(e.find("--calibration \"a.json\" corrects the axes of its mesh (2, 2) for ranks on CPUs [0 | 1 | 0 | 1]"),
            std::string::npos) << e;
  EXPECT_NE(e.find("\"w.jsonl\" sat on [0-1 | 0-1 | 0-1 | 0-1]"), std::string::npos) << e;
  const ValidateRecords older = parse_validate_records(records(plain, plain, false, "[]"), "old.jsonl");
  EXPECT_NE(error_of([&] { (void)rescore_records(older, {{.name = "a.json", .calibration = a}}); })
                .find("\"old.jsonl\" does not say where its ranks sat"),
            std::string::npos);
  // --no-axis-corrections: priced by the curves alone, as the calibration without corrections prices.
  const RescoreReport unbound =
      rescore_records(other, {{.name = "a.json", .calibration = a}},
                      {.extrapolate = false, .no_axis_corrections = true, .any_transport = false});
  const RescoreReport plain_report = rescore_records(other, {{.name = "plain.json", .calibration = plain}});
  EXPECT_EQ(unbound.scores[1].right, plain_report.scores[1].right);
  EXPECT_DOUBLE_EQ(unbound.scores[1].step_error->median, plain_report.scores[1].step_error->median);
}

TEST(Rescore, RefusesWhatItCannotJudge) {
  const Calibration a = calibration();
  const ValidateRecords r = parse_validate_records(records(a, a), "v.jsonl");
  const auto judge = [&](const Calibration& c, const RescoreOptions& o = {}) {
    return error_of([&] { (void)rescore_records(r, {{.name = "c.json", .calibration = c}}, o); });
  };
  // What validate refuses: another backend, the pipelined protocol; and per-axis fits, which price no merged step.
  Calibration nccl = a;
  nccl.backend = "nccl";
  EXPECT_NE(judge(nccl).find("rescore: --calibration \"c.json\": measured on the nccl backend, but this run's "
                             "collectives run on mpi"),
            std::string::npos);
  Calibration pipelined = a;
  pipelined.timing = "pipelined";
  EXPECT_NE(judge(pipelined).find("rescore: --calibration \"c.json\": timing = pipelined"), std::string::npos);
  Calibration per_axis = a;
  per_axis.groups.clear();
  EXPECT_NE(judge(per_axis).find("holds per-axis fits only"), std::string::npos);
  // Records made under other transport settings (both recorded): their steps cost what the calibration never measured.
  Calibration no_cma = a;
  no_cma.transport = comm::TransportSettings{{"OMPI_MCA_btl_vader_single_copy_mechanism", "none"}};
  EXPECT_EQ(judge(no_cma), "no error");  // the records do not say theirs
  ValidateRecords with_cma = r;
  with_cma.transport = comm::TransportSettings{};
  EXPECT_EQ(error_of([&] { (void)rescore_records(with_cma, {{.name = "c.json", .calibration = no_cma}}); }),
            "ValueError: rescore: --calibration \"c.json\": measured under other transport settings than \"v.jsonl\" "
            "(OMPI_MCA_btl_vader_single_copy_mechanism is \"none\" in the calibration and unset in \"v.jsonl\"): its "
            "prices are of another transport; judge it on records made under its settings, or --any-transport");
  EXPECT_EQ(error_of([&] {
              (void)rescore_records(with_cma, {{.name = "c.json", .calibration = no_cma}},
                                    {.extrapolate = false, .no_axis_corrections = false, .any_transport = true});
            }),
            "no error");
  with_cma.transport = no_cma.transport;
  EXPECT_EQ(error_of([&] { (void)rescore_records(with_cma, {{.name = "c.json", .calibration = no_cma}}); }), "no error");
  // A collective never measured costs +infinity, as validate prices it: the planner goes around it, and the measured
  // plans that ran it are priced so.
  Calibration gap = a;
  std::erase_if(gap.groups, [](const GroupCurve& g) { return g.collective == "all_to_all" && g.shape.n == 2; });
  const RescoreReport around = rescore_records(r, {{.name = "g.json", .calibration = gap}});
  bool priced_out = false;
  for (const RequestMeasurement& q : around.requests) {
    for (const CandidateMeasurement& c : q.candidates) priced_out = priced_out || std::isinf(c.predicted_total[1]);
    EXPECT_TRUE(std::isfinite(q.candidates[q.pick[1]].predicted_total[1]));
  }
  EXPECT_TRUE(priced_out);
  // Where that leaves no plan, the planner's error and what the calibration cannot price; --extrapolate guesses.
  Calibration fours = a;
  std::erase_if(fours.groups, [](const GroupCurve& g) { return g.shape.n == 2; });
  const std::string e = judge(fours);
  EXPECT_NE(e.find("--calibration \"c.json\", request 0 (P(sum)P(sum) -> RR): no redistribution path"), std::string::npos)
      << e;
  EXPECT_NE(e.find("; the calibration cannot price: all_reduce on axis 0: 2 ranks on 1 host (2 per host) never measured"),
            std::string::npos)
      << e;
  EXPECT_EQ(judge(fours, {.extrapolate = true, .no_axis_corrections = false, .any_transport = false}), "no error");
}

TEST(Rescore, ReadsTheTransportSettingsOfTheRecords) {
  const Calibration a = calibration();
  std::string text = records(a, a);
  const ValidateRecords older = parse_validate_records(text, "v.jsonl");
  EXPECT_FALSE(older.transport.has_value());
  text.replace(text.find(R"("hosts")"), 7, R"("transport":{"NCCL_PROTO":"Simple"},"hosts")");
  const ValidateRecords recorded = parse_validate_records(text, "v.jsonl");
  ASSERT_TRUE(recorded.transport.has_value());
  EXPECT_EQ(*recorded.transport, (comm::TransportSettings{{"NCCL_PROTO", "Simple"}}));
}

TEST(Rescore, ReadsOnlyValidateRecordsAndNamesWhatIsWrong) {
  EXPECT_NE(error_of([] { (void)parse_validate_records(R"({"type":"config","command":"run","backend":"mpi"})" "\n", "r.jsonl"); })
                .find("\"r.jsonl\" line 1: field \"command\" = \"run\": these are run's records, and rescore reads the "
                      "records of meshloom-launch validate --jsonl"),
            std::string::npos);
  EXPECT_NE(error_of([] { (void)parse_validate_records(R"({"type":"plan","request":0,"plan":0,"trace":"R"})" "\n", "x.jsonl"); })
                .find("a \"plan\" record before the config record"),
            std::string::npos);
  const std::string head = R"({"type":"config","command":"validate","backend":"mpi"})" "\n";
  EXPECT_NE(error_of([&] { (void)parse_validate_records(head + R"({"type":"plan","request":3,"plan":0,"trace":"R"})" "\n", "x.jsonl"); })
                .find("line 2: field \"request\" = 3: no such request record before it"),
            std::string::npos);
  EXPECT_NE(error_of([&] { (void)parse_validate_records(head, "x.jsonl"); })
                .find("\"x.jsonl\": no request whose plans all ran"),
            std::string::npos);
  // A run cut short: its last request without every plan's summary is left out, the others judged.
  const Calibration a = calibration();
  std::string text = records(a, a);
  const std::size_t last = text.rfind(R"("type":"summary")");
  ASSERT_NE(last, std::string::npos);
  text.erase(text.rfind('\n', last) + 1);
  const ValidateRecords r = parse_validate_records(text, "cut.jsonl");
  EXPECT_EQ(r.requests.size(), kRequests.size() - 1);
  // Cut off in the middle of a record (no newline after it): the same; a broken line elsewhere is still an error.
  const std::string torn = text + R"({"type":"summary","requ)";
  EXPECT_EQ(parse_validate_records(torn, "torn.jsonl").requests.size(), kRequests.size() - 1);
  EXPECT_NE(error_of([&] { (void)parse_validate_records(torn + "\n", "broken.jsonl"); }).find("broken.jsonl"),
            std::string::npos);
  const auto replaced = [&](const std::string& from, const std::string& to, const std::string& source) {
    std::string edited = records(a, a);
    const std::size_t at = edited.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) edited.replace(at, from.size(), to);
    return error_of([&] { (void)parse_validate_records(edited, source); });
  };
  EXPECT_NE(replaced(R"("picks":{"calibrated":)", R"("picks":{"calibrated":9,"x":)", "p.jsonl")
                .find("field \"picks.calibrated\" = 9: not one of the request's"),
            std::string::npos);
  EXPECT_NE(replaced(R"("predicted":{"calibrated":)", R"("predicted":{"comm":)", "q.jsonl")
                .find("no field \"predicted.calibrated\""),
            std::string::npos);
  // A plan summarized before all its steps: the step before the first summary taken out.
  std::string short_plan = records(a, a);
  const std::size_t summary = short_plan.find(R"("type":"summary")");
  const std::size_t line = short_plan.rfind('\n', short_plan.rfind('\n', summary) - 1) + 1;
  short_plan.erase(line, short_plan.find('\n', line) + 1 - line);
  EXPECT_NE(error_of([&] { (void)parse_validate_records(short_plan, "s.jsonl"); }).find("the summary of plan 0 after "),
            std::string::npos);
  // A plan its request does not have (the request says 1): refused, not taken for a run cut short.
  std::string extra = records(a, a);
  const std::size_t request = extra.find(R"("type":"request")");
  ASSERT_NE(request, std::string::npos);
  const std::size_t end = extra.find('\n', request);
  std::string first = extra.substr(0, end);
  first = std::regex_replace(first, std::regex(R"("picks":\{"calibrated":[0-9]+\})"), R"("picks":{"calibrated":0})");
  first = std::regex_replace(first, std::regex(R"("plans":[0-9]+)"), R"("plans":1)");
  extra = first + extra.substr(end);
  EXPECT_NE(error_of([&] { (void)parse_validate_records(extra, "e.jsonl"); })
                .find("field \"plan\" = 1: request 0 has 1 plan (its \"plans\")"),
            std::string::npos)
      << error_of([&] { (void)parse_validate_records(extra, "e.jsonl"); });
  // A step out of order.
  std::string swapped = records(a, a);
  const std::size_t at = swapped.find(R"("step":0)");
  ASSERT_NE(at, std::string::npos);
  swapped.replace(at, 8, R"("step":5)");
  EXPECT_NE(error_of([&] { (void)parse_validate_records(swapped, "s.jsonl"); }).find("field \"step\" = 5: expected step 0 next"),
            std::string::npos);
}

// Hindsight: per request the one plan right in the most files. Three files of the same candidates: in two the merged
// all_reduce of P(sum)P(sum) -> RR measures 3x its curve (splitting it is fastest), in the third half of it (merging
// is). Hindsight keeps the split plan in all three and so misses there once: no one calibration, judged over the
// three files together, whose picks all ran, does better.
TEST(Rescore, HindsightIsTheBestPickThatStaysTheSameInEveryFile) {
  const Calibration validated = calibration();
  const Calibration slow = calibration(3.0);
  const Calibration fast = calibration(0.5);
  const std::vector<NamedCalibration> cals{{.name = "slow.json", .calibration = slow},
                                           {.name = "fast.json", .calibration = fast}};
  std::vector<RescoreReport> base;
  for (const Calibration* measured : {&slow, &slow, &fast}) {
    base.push_back(rescore_records(parse_validate_records(records(validated, *measured), "v.jsonl"), cals));
  }
  ASSERT_EQ(base[0].scores.size(), 4U);  // validated, the two calibrations, step times
  std::vector<RescoreReport> reports = base;
  add_hindsight(reports);
  const auto n = static_cast<std::int64_t>(kRequests.size());
  std::int64_t hindsight = 0;
  std::int64_t best_constant = 0;  // the better of the two calibrations, whose prices are the same in every file
  std::int64_t per_calibration[2] = {0, 0};
  for (const RescoreReport& r : reports) {
    ASSERT_EQ(r.scores.size(), 5U);
    EXPECT_EQ(r.scores[4].model, "hindsight");
    hindsight += r.scores[4].right;
    for (std::size_t k = 0; k < 2; ++k) per_calibration[k] += r.scores[k + 1].right;
  }
  best_constant = std::max(per_calibration[0], per_calibration[1]);
  EXPECT_EQ(reports[0].scores[4].right, n);
  EXPECT_EQ(reports[1].scores[4].right, n);
  EXPECT_EQ(reports[2].scores[4].right, n - 1);  // the merged plan was fastest there, beyond the tie floor
  EXPECT_EQ(hindsight, 3 * n - 1);
  EXPECT_EQ(per_calibration[0], 3 * n - 1);  // slow.json picks as hindsight does
  EXPECT_LE(best_constant, hindsight);
  // Its picks are one plan per request in every file, and its prices each step's median over the files: the same
  // plan measured alike in two of three files is priced as those two measured it.
  for (std::size_t q = 0; q < kRequests.size(); ++q) {
    const std::string& pick = reports[0].plan_keys[q][reports[0].requests[q].pick[4]];
    for (const RescoreReport& r : reports) EXPECT_EQ(r.plan_keys[q][r.requests[q].pick[4]], pick);
    for (std::size_t c = 0; c < reports[0].requests[q].candidates.size(); ++c) {
      const CandidateMeasurement& cm = reports[2].requests[q].candidates[c];
      for (std::size_t s = 0; s < cm.measured_steps_us.size(); ++s) {
        EXPECT_DOUBLE_EQ(cm.predicted_steps[4][s], reports[0].requests[q].candidates[c].measured_steps_us[s]);
      }
    }
  }
  // A file that did not measure the validated pick of each request: hindsight keeps a plan every file measured.
  std::vector<RescoreReport> missing{base[0], base[1],
                                     rescore_records(parse_validate_records(records(validated, fast, true), "d.jsonl"), cals)};
  add_hindsight(missing);
  std::size_t moved = 0;  // requests whose hindsight plan is not the one it keeps with every plan measured
  for (std::size_t q = 0; q < kRequests.size(); ++q) {
    const std::string& pick = missing[0].plan_keys[q][missing[0].requests[q].pick[4]];
    EXPECT_EQ(missing[2].plan_keys[q][missing[2].requests[q].pick[4]], pick);
    if (pick != reports[0].plan_keys[q][reports[0].requests[q].pick[4]]) ++moved;
  }
  EXPECT_EQ(missing[2].unmeasured_picks.back(), 0);
  EXPECT_GT(moved, 0U);  // some plan it kept before did not run in the third file
  // One file alone has no hindsight.
  std::vector<RescoreReport> one{rescore_records(parse_validate_records(records(validated, slow), "v.jsonl"), cals)};
  add_hindsight(one);
  EXPECT_EQ(one[0].scores.size(), 4U);
  const std::string table = rescore_table(reports);
  EXPECT_NE(table.find("hindsight"), std::string::npos) << table;
}

// A file of one request `key` whose candidates `plans` measured `totals` (one step each, every iteration alike).
RescoreReport one_request(const std::string& key, const std::vector<std::string>& plans, const std::vector<double>& totals) {
  RescoreReport r;
  r.source = key + ".jsonl";
  r.request_keys = {key};
  r.plan_keys = {plans};
  RequestMeasurement m;
  for (const double t : totals) {
    CandidateMeasurement c;
    c.measured_steps_us = {t};
    c.step_iterations_us = {std::vector<double>(9, t)};
    c.predicted_steps = {{t}};
    c.predicted_total = {t};
    c.verified = true;
    m.candidates.push_back(std::move(c));
  }
  m.pick = {0};
  r.requests = {m};
  r.unmeasured_picks = {0};
  r.scores = score_models({"validated"}, {true}, r.requests);
  return r;
}

std::string pick_of(const RescoreReport& r) { return r.plan_keys[0][r.requests[0].pick.back()]; }

// The plan right in the most runs, not the cheapest over them; only of the plans every run measured.
TEST(Rescore, HindsightKeepsThePlanRightInTheMostRunsOfThoseEveryRunMeasured) {
  // A is fastest in the first two runs, B in the third by far (B's median total is the lower); C ties A where it
  // ran, but the third run did not measure it: kept, C would have let the third run's fastest stand in there.
  std::vector<RescoreReport> runs{one_request("q", {"A", "B", "C"}, {10, 12, 10}),
                                  one_request("q", {"A", "B", "C"}, {50, 60, 50}),
                                  one_request("q", {"A", "B"}, {100, 1})};
  add_hindsight(runs);
  std::int64_t right = 0;
  for (const RescoreReport& r : runs) {
    EXPECT_EQ(pick_of(r), "A");
    right += r.scores.back().right;
    EXPECT_EQ(r.unmeasured_picks.back(), 0);
    EXPECT_EQ(r.single_run_requests, 0);
  }
  EXPECT_EQ(right, 2);
  // Its prices: each plan's median over the runs that measured it.
  EXPECT_DOUBLE_EQ(runs[2].requests[0].candidates[1].predicted_total.back(), 12.0);
  EXPECT_DOUBLE_EQ(runs[0].requests[0].candidates[2].predicted_total.back(), 30.0);
  // No plan measured in both runs: each run's fastest stands in, counted as unmeasured picks.
  std::vector<RescoreReport> apart{one_request("q", {"A", "B"}, {10, 5}), one_request("q", {"C"}, {7})};
  add_hindsight(apart);
  EXPECT_EQ(pick_of(apart[0]), "B");
  EXPECT_EQ(pick_of(apart[1]), "C");
  EXPECT_EQ(apart[0].unmeasured_picks.back() + apart[1].unmeasured_picks.back(), 2);
  const std::string table = rescore_table(apart);
  for (const std::string row : {"\nvalidated ", "\nhindsight "}) {
    const std::size_t at = table.find(row);
    ASSERT_NE(at, std::string::npos) << table;
    const std::string line = table.substr(at + 1, table.find('\n', at + 1) - at - 1);
    EXPECT_EQ(line.back(), row == "\nvalidated " ? '-' : '1') << line;  // hindsight's stand-ins are counted
  }
  // A plan that moved the wrong data is never right, even where it ties the fastest and measured less.
  std::vector<RescoreReport> wrong{one_request("q", {"W", "A"}, {9.8, 10}), one_request("q", {"W", "A"}, {9.8, 10})};
  for (RescoreReport& r : wrong) r.requests[0].candidates[0].verified = false;
  add_hindsight(wrong);
  for (const RescoreReport& r : wrong) EXPECT_EQ(pick_of(r), "A");
  // Requests of one run only: their run's fastest, and the table says how many.
  std::vector<RescoreReport> single{one_request("q", {"A", "B"}, {10, 5}), one_request("p", {"A", "B"}, {10, 5})};
  add_hindsight(single);
  EXPECT_EQ(single[0].single_run_requests, 1);
  EXPECT_NE(rescore_table(single).find("hindsight: 2 requests ran in one file only, where it picks that run's fastest"),
            std::string::npos);
}

// Two files judged under a.json (calibration()), with hindsight: v1 validated with a itself and measured as a 3x
// dearer 4-rank all_reduce prices it; v2 validated and measured with a, a's picks left out.
std::vector<RescoreReport> two_files() {
  const Calibration a = calibration();
  const std::vector<NamedCalibration> cals{{.name = "a.json", .calibration = a}};
  std::vector<RescoreReport> reports{rescore_records(parse_validate_records(records(a, calibration(3.0)), "v1.jsonl"), cals),
                                     rescore_records(parse_validate_records(records(a, a, true), "v2.jsonl"), cals)};
  add_hindsight(reports);
  return reports;
}

// --jsonl: what the table shows, as validate's report records, per file and all together.
TEST(Rescore, TheJsonLinesCarryEveryRowOfEveryFile) {
  const std::vector<RescoreReport> reports = two_files();
  std::vector<json> lines;
  std::istringstream in(rescore_jsonl(reports, {.extrapolate = false, .no_axis_corrections = true, .any_transport = false}));
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  // config, then per file a records record, 4 rows (validated, a.json, step times, hindsight) and a request record per
  // request, the 4 rows of all, end
  const std::size_t per_file = 5 + kRequests.size();
  ASSERT_EQ(lines.size(), 1 + 2 * per_file + 4 + 1);
  EXPECT_EQ(lines[0]["type"], "config");
  EXPECT_EQ(lines[0]["command"], "rescore");
  EXPECT_EQ(lines[0]["calibrations"], json::array({"a.json"}));
  EXPECT_EQ(lines[0]["no_axis_corrections"], true);
  EXPECT_EQ(lines[0]["any_transport"], false);
  EXPECT_EQ(lines[1]["type"], "records");
  EXPECT_EQ(lines[1]["records"], "v1.jsonl");
  EXPECT_EQ(lines[1]["calibration"], "v.json");
  EXPECT_EQ(lines[1]["requests"], kRequests.size());
  const RescoreReport all = rescore_all_files(reports);
  for (std::size_t f = 0; f < 3; ++f) {
    const RescoreReport& r = f < 2 ? reports[f] : all;
    for (std::size_t m = 0; m < 4; ++m) {
      const json& row = lines[1 + f * per_file + (f < 2 ? 1 : 0) + m];
      ASSERT_EQ(row["type"], "report") << row;
      EXPECT_EQ(row["records"], f < 2 ? r.source : "all");
      EXPECT_EQ(row["model"], r.scores[m].model);
      EXPECT_EQ(row["right"], r.scores[m].right);
      EXPECT_EQ(row["requests"], r.scores[m].requests);
      ASSERT_TRUE(r.scores[m].step_error);
      EXPECT_DOUBLE_EQ(row["step_error"]["median"].get<double>(), r.scores[m].step_error->median);
      if (m == 0 || m == 2) {
        EXPECT_TRUE(row["unmeasured_picks"].is_null()) << row;
      } else {
        EXPECT_EQ(row["unmeasured_picks"], r.unmeasured_picks[m]);
      }
    }
  }
  EXPECT_EQ(all.requests.size(), 2 * kRequests.size());
  EXPECT_EQ(all.unmeasured_picks[1], reports[0].unmeasured_picks[1] + reports[1].unmeasured_picks[1]);
  EXPECT_GT(all.unmeasured_picks[1], 0);  // the second file did not run a.json's picks
  EXPECT_EQ(lines.back()["type"], "end");
  EXPECT_EQ(lines.back()["files"], 2);
}

// --jsonl's request records: per file and request, every row's pick, whether it was right, what it cost, and whether
// it stood in for a pick that did not run.
TEST(Rescore, TheRequestRecordsSayWhatEveryRowPickedAndWhatItCost) {
  const std::vector<RescoreReport> reports = two_files();
  std::vector<json> requests;
  std::istringstream in(rescore_jsonl(reports, {}));
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line);
    if (j["type"] == "request") requests.push_back(std::move(j));
  }
  ASSERT_EQ(requests.size(), 2 * kRequests.size());
  for (std::size_t f = 0; f < 2; ++f) {
    for (std::size_t q = 0; q < kRequests.size(); ++q) {
      const json& j = requests[f * kRequests.size() + q];
      const RequestMeasurement& m = reports[f].requests[q];
      const RequestVerdict verdict = judge(m);
      EXPECT_EQ(j["records"], f == 0 ? "v1.jsonl" : "v2.jsonl");
      EXPECT_EQ(j["request"], q);
      EXPECT_EQ(j["label"], kRequests[q].src + " -> " + kRequests[q].dst);
      EXPECT_EQ(j["fastest"], verdict.fastest);
      ASSERT_EQ(j["plans"].size(), m.candidates.size());
      for (std::size_t c = 0; c < m.candidates.size(); ++c) {
        EXPECT_EQ(j["plans"][c]["trace"], reports[f].traces[q][c]);
        EXPECT_FALSE(j["plans"][c]["trace"].get<std::string>().empty());
        EXPECT_DOUBLE_EQ(j["plans"][c]["measured_us"].get<double>(), measured_total_us(m.candidates[c]));
      }
      ASSERT_EQ(j["picks"].size(), 4U);
      for (std::size_t s = 0; s < 4; ++s) {
        const json& pick = j["picks"][s];
        EXPECT_EQ(pick["model"], reports[f].scores[s].model);
        EXPECT_EQ(pick["plan"], m.pick[s]);
        EXPECT_EQ(pick["right"], static_cast<bool>(verdict.right[s]));
        EXPECT_EQ(pick["exact"], m.pick[s] == verdict.fastest);
        const double lost = measured_total_us(m.candidates[m.pick[s]]) / measured_total_us(m.candidates[verdict.fastest]) - 1;
        EXPECT_NEAR(pick["time_lost"].get<double>(), lost, 1e-12);
      }
      EXPECT_TRUE(j["picks"][0]["stand_in"].is_null());  // validated: the run's own pick
      EXPECT_EQ(j["picks"][1]["stand_in"], f == 1);      // a.json's picks did not run in v2
      EXPECT_TRUE(j["picks"][2]["stand_in"].is_null());  // step times
      EXPECT_TRUE(j["picks"][3]["stand_in"].is_boolean());
    }
  }
  // The request validate got wrong in v1: its calibration's pick (a's, the same) lost time; the step times did not.
  const json& missed = requests[0];
  EXPECT_EQ(missed["picks"][0]["right"], false);
  EXPECT_GT(missed["picks"][0]["time_lost"].get<double>(), 0.0);
  EXPECT_EQ(missed["picks"][1]["plan"], missed["picks"][0]["plan"]);
  EXPECT_EQ(missed["picks"][2]["right"], true);
  // A report built otherwise (no request names) writes its rows and no request records.
  const std::string hand = rescore_jsonl({one_request("q", {"A", "B"}, {10, 5})}, {});
  EXPECT_EQ(hand.find("\"type\":\"request\""), std::string::npos) << hand;
  EXPECT_NE(hand.find("\"type\":\"report\""), std::string::npos) << hand;
}

TEST(Rescore, TheTableShowsEveryFileThenAllTogether) {
  const Calibration a = calibration();
  const ValidateRecords r = parse_validate_records(records(a, calibration(3.0)), "v1.jsonl");
  const std::vector<NamedCalibration> cals{{.name = "a.json", .calibration = a}};
  const std::string table = rescore_table({rescore_records(r, cals), rescore_records(r, cals)});
  EXPECT_NE(table.find("\"v1.jsonl\": 4 requests, "), std::string::npos) << table;
  EXPECT_NE(table.find("validated with \"v.json\""), std::string::npos) << table;
  EXPECT_NE(table.find("unmeasured picks"), std::string::npos) << table;
  EXPECT_NE(table.find("all 2 files: 8 requests"), std::string::npos) << table;
  EXPECT_NE(table.find("step times"), std::string::npos) << table;
}

}  // namespace
}  // namespace meshloom::launcher
