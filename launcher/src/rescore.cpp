#include "rescore.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <tuple>
#include <utility>

#include "jsonl_read.hpp"
#include "live_backend.hpp"
#include "refine.hpp"
#include "meshloom/error.hpp"
#include "meshloom/plan/planner.hpp"
#include "text_format.hpp"
#include "timing.hpp"
#include "validate_suite.hpp"

namespace meshloom::launcher {

namespace {

using nlohmann::json;
using jsonl::LineContext;

constexpr std::size_t kMaxRecordsFileBytes = std::size_t{256} << 20;
constexpr double kInf = std::numeric_limits<double>::infinity();

// A list of non-negative integers, field `name`.
std::vector<std::int64_t> integers_of(const LineContext& ctx, const json& list, const std::string& name) {
  if (!list.is_array()) ctx.fail("field \"" + name + "\" = " + jsonl::show(list) + ": expected a list");
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::int64_t v = ctx.integer_at(list[i], name + "[" + std::to_string(i) + "]");
    if (v < 0) ctx.fail("field \"" + name + "\" = " + jsonl::show(list) + ": expected values >= 0");
    out.push_back(v);
  }
  return out;
}
std::vector<std::int64_t> integers(const LineContext& ctx, const json& record, const char* name) {
  return integers_of(ctx, ctx.field(record, name), name);
}

std::vector<double> numbers(const LineContext& ctx, const json& record, const char* name) {
  std::vector<double> out;
  if (!record.contains(name)) return out;
  const json& list = record[name];
  if (!list.is_array()) ctx.fail(std::string("field \"") + name + "\" = " + jsonl::show(list) + ": expected a list");
  for (const json& v : list) {
    if (!v.is_number() || !std::isfinite(v.get<double>())) {
      ctx.fail(std::string("field \"") + name + "\" = " + jsonl::show(list) + ": expected finite numbers");
    }
    out.push_back(v.get<double>());
  }
  return out;
}

// The calibrated prediction of a step or request record's "predicted" (validate writes an infinite one as null).
std::optional<double> calibrated_prediction(const LineContext& ctx, const json& record) {
  if (!record.contains("predicted")) return std::nullopt;
  const json& p = record["predicted"];
  if (!p.is_object()) ctx.fail("field \"predicted\" = " + jsonl::show(p) + ": expected an object of models");
  if (!p.contains("calibrated")) return std::nullopt;
  if (p["calibrated"].is_null()) return kInf;
  return ctx.number(p, "calibrated");
}

void parse_request(const LineContext& ctx, const json& j, MeasuredRequest& r) {
  r.label = j.contains("label") ? ctx.text(j, "label") : std::string();
  const json& mesh = ctx.field(j, "mesh");
  if (!mesh.is_object()) ctx.fail("field \"mesh\" = " + jsonl::show(mesh) + ": expected an object");
  PlanRequest& q = r.setup.request;
  for (const std::int64_t s : integers_of(ctx, ctx.field(mesh, "shape"), "mesh.shape")) {
    if (s < 1) ctx.fail("field \"mesh.shape\" = " + jsonl::show(mesh["shape"]) + ": axis sizes must be >= 1");
    q.mesh_shape.push_back(s);
  }
  if (mesh.contains("names")) {
    const json& names = mesh["names"];
    if (!names.is_array()) ctx.fail("field \"mesh.names\" = " + jsonl::show(names) + ": expected a list of names");
    for (const json& n : names) {
      if (!n.is_string()) ctx.fail("field \"mesh.names\" = " + jsonl::show(names) + ": expected a list of names");
      r.setup.names.push_back(n.get<std::string>());
    }
  }
  for (const std::int64_t s : integers(ctx, j, "tensor_shape")) q.tensor_shape.push_back(s);
  const std::string src = ctx.text(j, "src");
  const std::string dst = ctx.text(j, "dst");
  try {
    q.src = parse_state_text(src, "field \"src\"");
    q.dst = parse_state_text(dst, "field \"dst\"");
  } catch (const Error& e) {
    ctx.fail(e.message());
  }
  q.itemsize = ctx.integer(j, "itemsize");
  if (j.contains("flattened")) {
    const json& flat = j["flattened"];
    if (!flat.is_array()) ctx.fail("field \"flattened\" = " + jsonl::show(flat) + ": expected lists of axes");
    for (std::size_t i = 0; i < flat.size(); ++i) {
      std::vector<std::size_t> axes;
      for (const std::int64_t a : integers_of(ctx, flat[i], "flattened[" + std::to_string(i) + "]")) {
        axes.push_back(static_cast<std::size_t>(a));
      }
      q.flattened.push_back(std::move(axes));
    }
  }
  // What else shapes its plans (validate records them; older files ran the defaults).
  if (j.contains("variant")) {
    const std::string variant = ctx.text(j, "variant");
    const std::optional<PartialVariant> v = variant_from_string(variant);
    if (!v) ctx.fail("field \"variant\" = \"" + variant + "\": expected seed or newest");
    q.variant = *v;
  }
  if (j.contains("coordinate")) {
    for (const std::int64_t c : integers(ctx, j, "coordinate")) q.coordinate.push_back(c);
  }
  if (j.contains("state_budget")) {
    const std::int64_t budget = ctx.integer(j, "state_budget");
    if (budget < 1 || budget > static_cast<std::int64_t>(kDefaultStateBudget)) {
      ctx.fail("field \"state_budget\" = " + std::to_string(budget) + ": must be in [1, " +
               std::to_string(kDefaultStateBudget) + "] (validate's own bounds)");
    }
    q.state_budget = static_cast<std::size_t>(budget);
  }
  const json& picks = ctx.field(j, "picks");
  if (!picks.is_object()) ctx.fail("field \"picks\" = " + jsonl::show(picks) + ": expected an object of models");
  const std::int64_t pick = ctx.integer(picks, "calibrated");
  const std::int64_t plans = ctx.integer(j, "plans");
  if (pick < 0 || pick >= plans) {
    ctx.fail("field \"picks.calibrated\" = " + std::to_string(pick) + ": not one of the request's " +
             std::to_string(plans) + " plans");
  }
  r.recorded_pick = static_cast<std::size_t>(pick);
  r.recorded_plans = static_cast<std::size_t>(plans);
}

// The step of a plan record's request and plan, checked to come in order.
MeasuredStep parse_step(const LineContext& ctx, const json& j, const MeasuredRequest& r, std::size_t step) {
  MeasuredStep s;
  s.collective = ctx.text(j, "collective");
  if (!collective_from_string(s.collective)) ctx.fail("field \"collective\" = \"" + s.collective + "\": unknown collective");
  for (const std::int64_t a : integers(ctx, j, "axes")) {
    const bool ascending = s.axes.empty() || static_cast<std::size_t>(a) > s.axes.back();
    if (static_cast<std::size_t>(a) >= r.setup.request.mesh_shape.size() || !ascending) {
      ctx.fail("field \"axes\" = " + jsonl::show(j["axes"]) + ": expected ascending axes of a mesh of " +
               std::to_string(r.setup.request.mesh_shape.size()));
    }
    s.axes.push_back(static_cast<std::size_t>(a));
  }
  if (s.axes.empty()) ctx.fail("field \"axes\" = []: expected the step's mesh axes");
  if (j.contains("merged")) {
    if (!j["merged"].is_boolean()) ctx.fail("field \"merged\" = " + jsonl::show(j["merged"]) + ": expected true or false");
    s.merged = j["merged"].get<bool>();
  }
  if (!s.merged && s.axes.size() > 1) {
    ctx.fail("field \"axes\" = " + jsonl::show(j["axes"]) + ": a step on several axes is a merged one (\"merged\": false)");
  }
  s.bytes = ctx.integer(j, "bytes");
  if (s.bytes < 0) ctx.fail("field \"bytes\" = " + std::to_string(s.bytes) + ": must be >= 0");
  s.measured_us = ctx.number(j, "measured_us");
  if (!(s.measured_us >= 0) || !std::isfinite(s.measured_us)) {
    ctx.fail("field \"measured_us\" = " + jsonl::show(j["measured_us"]) + ": expected a finite time >= 0");
  }
  // A local step moves nothing: no time of its own, as validate judges it.
  if (communicates(*collective_from_string(s.collective))) s.iterations_us = numbers(ctx, j, "iterations_us");
  const std::optional<double> recorded = calibrated_prediction(ctx, j);
  if (!recorded) ctx.fail("no field \"predicted.calibrated\": the step's calibrated prediction (the validated row's)");
  s.recorded_us = *recorded;
  const std::int64_t index = ctx.integer(j, "step");
  if (index != static_cast<std::int64_t>(step)) {
    ctx.fail("field \"step\" = " + std::to_string(index) + ": expected step " + std::to_string(step) + " next");
  }
  return s;
}

std::string show_cpus(const std::vector<std::string>& cpus) {
  return cpus.empty() ? std::string("(not recorded)") : "[" + join(cpus, {.separator = " | "}) + "]";
}

// The key of a step's own measured time: mesh, axes, collective, merged, bytes.
using StepKey = std::tuple<std::vector<std::int64_t>, std::vector<std::size_t>, std::string, bool, std::int64_t>;

StepKey key_of(const MeasuredRequest& r, const MeasuredStep& s) {
  return {r.setup.request.mesh_shape, s.axes, s.collective, s.merged, s.bytes};
}

// Whether a planned plan is the recorded candidate: the same trace and the same collectives on the same axes.
bool same_plan(const Plan& plan, const MeasuredPlan& measured) {
  if (trace(plan) != measured.trace || plan.steps.size() != measured.steps.size()) return false;
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    if (to_string(plan.steps[i].collective) != measured.steps[i].collective || plan.steps[i].axes != measured.steps[i].axes) {
      return false;
    }
  }
  return true;
}

// What names a request alike in every file: every field that shapes its plans (not the axis names, which do not).
std::string request_key(const MeasuredRequest& r) {
  const PlanRequest& q = r.setup.request;
  return json::array({q.mesh_shape, q.tensor_shape, to_string(q.src), to_string(q.dst), q.flattened, q.itemsize,
                      std::string(to_string(q.variant)), q.coordinate, q.state_budget})
      .dump();
}

// And a plan of a request: its trace and the collectives it runs on their axes, which validate's candidates of one
// request never share.
std::string plan_key(const MeasuredPlan& p) {
  json steps = json::array();
  for (const MeasuredStep& s : p.steps) steps.push_back(json::array({s.collective, s.axes, s.merged}));
  return json::array({p.trace, steps}).dump();
}

std::size_t cheapest(const std::vector<CandidateMeasurement>& candidates, std::size_t model) {
  std::size_t best = 0;
  for (std::size_t c = 1; c < candidates.size(); ++c) {
    if (candidates[c].predicted_total[model] < candidates[best].predicted_total[model]) best = c;
  }
  return best;
}

// A step's price under a calibrated model, as price_plan_steps gives it: a merged step by its flattened group.
double calibrated_step_price(const CostModel& model, const MeasuredRequest& r, const MeasuredStep& s) {
  const std::optional<Collective> c = collective_from_string(s.collective);
  if (!c || !communicates(*c)) return 0.0;
  StepCostInput in;
  in.collective = *c;
  in.axis = s.axes.front();
  in.mesh_shape = &r.setup.request.mesh_shape;
  in.itemsize = r.setup.request.itemsize;
  in.local_bytes = s.bytes;  // what the calibrated model prices by (global_numel and source_shards it does not read)
  if (s.merged && s.axes.size() > 1) {
    if (const std::optional<double> flat = model.flattened_step_cost(in, s.axes)) return *flat;
  }
  return model.step_cost(in);
}

void check_calibration(const ValidateRecords& records, const NamedCalibration& c, const RescoreOptions& options) {
  const Calibration& cal = c.calibration;
  const std::string who = "--calibration \"" + c.name + "\"";
  if (cal.groups.empty()) {
    raise(ErrorKind::ValueError, "rescore: " + who + " holds per-axis fits only (no curves by group shape), which "
                                 "cannot price a merged step; calibrate again with this version");
  }
  // As validate refuses it: another backend than the records', or the pipelined protocol.
  check_calibration_fits_run(cal, "rescore: " + who, records.backend);
  if (!options.any_transport) {
    const std::string where = "\"" + records.source + "\"";
    const std::string difference = transport_mismatch(cal, records.transport, where);
    if (!difference.empty()) {
      raise(ErrorKind::ValueError, "rescore: " + who + ": measured under other transport settings than " + where +
                                       " (" + difference + "): its prices are of another transport; judge it on " +
                                       "records made under its settings, or --any-transport");
    }
  }
  if (options.no_axis_corrections || cal.axis_corrections.empty()) return;
  const bool on_its_mesh = std::any_of(records.requests.begin(), records.requests.end(), [&](const MeasuredRequest& r) {
    return same_layout(r.setup.request.mesh_shape, cal.mesh_shape);
  });
  if (!on_its_mesh || ranks_sat_as_calibrated(cal, records.cpus)) return;
  const std::string mesh = "(" + join(cal.mesh_shape, {.separator = ", "}) + ")";
  if (records.cpus.empty()) {
    raise(ErrorKind::ValueError, "rescore: " + who + " corrects the axes of its mesh " + mesh + " for ranks bound as " +
                                     "its job's were, and \"" + records.source + "\" does not say where its ranks sat " +
                                     "(written before validate recorded it): --no-axis-corrections prices by the " +
                                     "curves alone");
  }
  raise(ErrorKind::ValueError,
        "rescore: " + who + " corrects the axes of its mesh " + mesh + " for ranks on CPUs " +
            show_cpus(cal.rank_cpus) + ", and the ranks of \"" + records.source + "\" sat on " +
            show_cpus(records.cpus) + ": its corrections do not hold there (--no-axis-corrections prices by the "
            "curves alone)");
}

}  // namespace

ValidateRecords parse_validate_records(const std::string& text, const std::string& source) {
  ValidateRecords out;
  out.source = source;
  bool config_seen = false;
  std::map<std::int64_t, std::size_t> by_index;  // request number -> out.requests
  const auto request_of = [&](const LineContext& ctx, const json& j) -> MeasuredRequest& {
    const std::int64_t index = ctx.integer(j, "request");
    const auto it = by_index.find(index);
    if (it == by_index.end()) ctx.fail("field \"request\" = " + std::to_string(index) + ": no such request record before it");
    return out.requests[it->second];
  };
  const auto plan_of = [&](const LineContext& ctx, const json& j, MeasuredRequest& r) -> MeasuredPlan& {
    const std::int64_t plan = ctx.integer(j, "plan");
    if (plan < 0 || plan >= static_cast<std::int64_t>(r.plans.size())) {
      ctx.fail("field \"plan\" = " + std::to_string(plan) + ": no such plan record of request " +
               std::to_string(r.index) + " before it");
    }
    return r.plans[static_cast<std::size_t>(plan)];
  };
  jsonl::for_each_record(text, source, [&](const LineContext& ctx, const json& j, const std::string& type) {
    if (type == "config") {
      if (config_seen) ctx.fail("a second config record (one run per file)");
      config_seen = true;
      jsonl::check_command(ctx, j, {"validate"}, true, "rescore reads the records of meshloom-launch validate --jsonl");
      out.backend = ctx.text(j, "backend");
      if (j.contains("calibration")) out.calibration = ctx.text(j, "calibration");
      if (j.contains("cpus")) out.cpus = jsonl::cpus_of(ctx, j);
      if (j.contains("transport")) out.transport = jsonl::transport_of(ctx, j);
      return;
    }
    if (!config_seen) ctx.fail("a \"" + type + "\" record before the config record");
    if (type == "request") {
      const std::int64_t index = ctx.integer(j, "request");
      if (index < 0 || by_index.count(index) > 0) {
        ctx.fail("field \"request\" = " + std::to_string(index) + ": a second record of that request, or below 0");
      }
      MeasuredRequest r;
      r.index = static_cast<std::size_t>(index);
      parse_request(ctx, j, r);
      by_index[index] = out.requests.size();
      out.requests.push_back(std::move(r));
    } else if (type == "plan") {
      MeasuredRequest& r = request_of(ctx, j);
      const std::int64_t plan = ctx.integer(j, "plan");
      if (plan != static_cast<std::int64_t>(r.plans.size())) {
        ctx.fail("field \"plan\" = " + std::to_string(plan) + ": expected plan " + std::to_string(r.plans.size()) +
                 " of request " + std::to_string(r.index) + " next");
      }
      if (r.plans.size() >= r.recorded_plans) {  // a plan its request does not have: not a run cut short
        ctx.fail("field \"plan\" = " + std::to_string(plan) + ": request " + std::to_string(r.index) + " has " +
                 std::to_string(r.recorded_plans) + (r.recorded_plans == 1 ? " plan" : " plans") + " (its \"plans\")");
      }
      MeasuredPlan p{.trace = ctx.text(j, "trace"), .steps = {}, .expected_steps = std::nullopt, .summarized = false,
                     .verified = true};
      if (j.contains("steps")) {
        const std::int64_t steps = ctx.integer(j, "steps");
        if (steps < 0) ctx.fail("field \"steps\" = " + std::to_string(steps) + ": must be >= 0");
        p.expected_steps = static_cast<std::size_t>(steps);
      }
      r.plans.push_back(std::move(p));
    } else if (type == "step") {
      MeasuredRequest& r = request_of(ctx, j);
      MeasuredPlan& p = plan_of(ctx, j, r);
      if (p.summarized) ctx.fail("a step of plan " + std::to_string(&p - r.plans.data()) + " after its summary");
      p.steps.push_back(parse_step(ctx, j, r, p.steps.size()));
    } else if (type == "summary") {
      MeasuredRequest& r = request_of(ctx, j);
      MeasuredPlan& p = plan_of(ctx, j, r);
      const auto plan = static_cast<std::size_t>(&p - r.plans.data());
      if (p.summarized) ctx.fail("a second summary of plan " + std::to_string(plan));
      if (p.expected_steps && *p.expected_steps != p.steps.size()) {
        ctx.fail("the summary of plan " + std::to_string(plan) + " after " + std::to_string(p.steps.size()) +
                 " of its " + std::to_string(*p.expected_steps) + " steps");
      }
      if (j.contains("verified")) {
        if (!j["verified"].is_boolean()) ctx.fail("field \"verified\" = " + jsonl::show(j["verified"]) + ": expected true or false");
        p.verified = j["verified"].get<bool>();
      }
      p.summarized = true;
    }
  });
  if (!config_seen) {
    raise(ErrorKind::ValueError, "\"" + source + "\": no config record (is it the --jsonl file of meshloom-launch validate?)");
  }
  // A request is judged when every plan of it ran, each with its summary (a run cut short leaves its last request
  // without): the others are counted.
  std::vector<MeasuredRequest> complete;
  for (MeasuredRequest& r : out.requests) {
    const bool all = !r.plans.empty() && r.plans.size() == r.recorded_plans &&
                     std::all_of(r.plans.begin(), r.plans.end(), [](const MeasuredPlan& p) { return p.summarized; });
    if (all) {
      complete.push_back(std::move(r));
    } else {
      ++out.unfinished;
    }
  }
  out.requests = std::move(complete);
  if (out.requests.empty()) {
    raise(ErrorKind::ValueError, "\"" + source + "\": no request whose plans all ran (every plan with its summary record)");
  }
  return out;
}

ValidateRecords read_validate_records(const std::filesystem::path& path) {
  return parse_validate_records(jsonl::read_records_file(path, kMaxRecordsFileBytes, "a validate JSON Lines file"),
                                path.string());
}

RescoreReport rescore_records(const ValidateRecords& records, const std::vector<NamedCalibration>& calibrations,
                              const RescoreOptions& options) {
  for (const NamedCalibration& c : calibrations) check_calibration(records, c, options);
  RescoreReport report;
  report.source = records.source;
  report.calibration = records.calibration;
  report.unfinished = records.unfinished;
  report.calibrations = calibrations.size();
  for (const MeasuredRequest& r : records.requests) {
    report.request_keys.push_back(request_key(r));
    report.request_numbers.push_back(r.index);
    report.request_labels.push_back(r.label);
    std::vector<std::string> plans;
    std::vector<std::string> traces;
    for (const MeasuredPlan& p : r.plans) {
      plans.push_back(plan_key(p));
      traces.push_back(p.trace);
    }
    report.plan_keys.push_back(std::move(plans));
    report.traces.push_back(std::move(traces));
  }
  std::vector<std::string> names{"validated"};
  for (const NamedCalibration& c : calibrations) names.push_back(c.name);
  names.emplace_back("step times");
  const std::size_t models = names.size();
  report.unmeasured_picks.assign(models, 0);

  // The run's own time of every step key: the median over the file's steps of that key.
  std::map<StepKey, std::vector<double>> measured_by_key;
  for (const MeasuredRequest& r : records.requests) {
    for (const MeasuredPlan& p : r.plans) {
      for (const MeasuredStep& s : p.steps) measured_by_key[key_of(r, s)].push_back(s.measured_us);
    }
  }
  std::map<StepKey, double> step_time;
  for (auto& [key, times] : measured_by_key) step_time[key] = median(std::move(times));

  for (const MeasuredRequest& r : records.requests) {
    RequestMeasurement m;
    m.candidates.resize(r.plans.size());
    m.pick.assign(models, 0);
    for (std::size_t c = 0; c < r.plans.size(); ++c) {
      CandidateMeasurement& cm = m.candidates[c];
      cm.verified = r.plans[c].verified;
      cm.predicted_steps.assign(models, {});
      for (const MeasuredStep& s : r.plans[c].steps) {
        cm.measured_steps_us.push_back(s.measured_us);
        cm.step_iterations_us.push_back(s.iterations_us);
        cm.predicted_steps[0].push_back(s.recorded_us);
        cm.predicted_steps[models - 1].push_back(step_time.at(key_of(r, s)));
      }
    }
    m.pick[0] = r.recorded_pick;
    std::vector<std::optional<std::size_t>> planned(models);  // [model]: its planner's pick, where it was measured
    for (std::size_t k = 0; k < calibrations.size(); ++k) {
      PlanSetup setup = r.setup;
      setup.cost_model = CostModelKind::Calibrated;
      setup.calibration = calibrations[k].calibration;
      if (options.no_axis_corrections) setup.calibration->axis_corrections.clear();
      setup.extrapolate = options.extrapolate;
      const std::string where = "rescore: --calibration \"" + calibrations[k].name + "\", request " +
                                std::to_string(r.index) + " (" + r.label + ")";
      std::unique_ptr<CostModel> model;
      try {
        model = make_cost_model(setup);
      } catch (const Error& e) {
        raise(e.kind(), where + ": " + e.message());
      }
      for (std::size_t c = 0; c < r.plans.size(); ++c) {
        for (const MeasuredStep& s : r.plans[c].steps) {
          m.candidates[c].predicted_steps[k + 1].push_back(calibrated_step_price(*model, r, s));
        }
      }
      try {
        const ModelPlans own = model_plans(setup.request, *model, 1);
        for (std::size_t c = 0; c < r.plans.size() && !planned[k + 1]; ++c) {
          if (same_plan(own.plans.at(own.pick), r.plans[c])) planned[k + 1] = c;
        }
      } catch (const Error& e) {
        raise(e.kind(), where + ": " + e.message() + unpriced_note(*model, setup.request.mesh_shape));
      }
    }
    for (CandidateMeasurement& cm : m.candidates) {
      for (const std::vector<double>& steps : cm.predicted_steps) {
        cm.predicted_total.push_back(std::accumulate(steps.begin(), steps.end(), 0.0));
      }
    }
    std::vector<bool> stand_in(models, false);
    for (std::size_t k = 1; k < models; ++k) {
      if (k + 1 < models && !planned[k]) {
        ++report.unmeasured_picks[k];
        stand_in[k] = true;
      }
      m.pick[k] = planned[k] ? *planned[k] : cheapest(m.candidates, k);
    }
    report.requests.push_back(std::move(m));
    report.stand_ins.push_back(std::move(stand_in));
  }
  report.scores = score_models(names, std::vector<bool>(models, true), report.requests);
  return report;
}

void add_hindsight(std::vector<RescoreReport>& reports) {
  if (reports.size() < 2) return;
  // Every run of each request: (report, request); a request may run in several files, or twice in one.
  std::map<std::string, std::vector<std::pair<std::size_t, std::size_t>>> runs;
  for (std::size_t f = 0; f < reports.size(); ++f) {
    for (std::size_t q = 0; q < reports[f].requests.size(); ++q) runs[reports[f].request_keys.at(q)].emplace_back(f, q);
    reports[f].hindsight = true;
    reports[f].unmeasured_picks.push_back(0);
  }
  struct Tally {
    std::size_t runs = 0;                    // runs that measured the plan
    std::int64_t right = 0;                  // of those, the runs where it was the fastest or tied with it
    std::vector<double> totals;              // its measured total in each
    std::vector<std::vector<double>> steps;  // [step]: its step's measured time in each
  };
  for (const auto& [key, where] : runs) {
    std::map<std::string, Tally> tally;
    std::vector<std::size_t> fastest_of;  // per run of the request
    for (const auto& [f, q] : where) {
      const RequestMeasurement& m = reports[f].requests[q];
      const std::size_t fastest = fastest_of.emplace_back(judge(m).fastest);
      // As validate judges a pick: a plan that moved the wrong data is never right (unless none of the run's did).
      const bool any_verified = std::any_of(m.candidates.begin(), m.candidates.end(),
                                            [](const CandidateMeasurement& c) { return c.verified; });
      for (std::size_t c = 0; c < m.candidates.size(); ++c) {
        const CandidateMeasurement& cm = m.candidates[c];
        Tally& t = tally[reports[f].plan_keys[q][c]];
        ++t.runs;
        if ((!any_verified || cm.verified) && (c == fastest || measured_tie(cm, m.candidates[fastest]))) ++t.right;
        t.totals.push_back(measured_total_us(cm));
        t.steps.resize(cm.measured_steps_us.size());
        for (std::size_t s = 0; s < cm.measured_steps_us.size(); ++s) t.steps[s].push_back(cm.measured_steps_us[s]);
      }
    }
    // Of the plans every run measured (a calibration's pick that ran in every run is one of them), the one right in
    // the most runs; the least median total, then the first key, breaks a tie. None: each run's fastest stands in.
    const std::string* best = nullptr;
    double best_median = 0;
    for (const auto& [plan, t] : tally) {
      if (t.runs != where.size()) continue;
      const double med = median(t.totals);
      if (best == nullptr || t.right > tally.at(*best).right || (t.right == tally.at(*best).right && med < best_median)) {
        best = &plan;
        best_median = med;
      }
    }
    for (std::size_t run = 0; run < where.size(); ++run) {
      const auto [f, q] = where[run];
      RescoreReport& r = reports[f];
      RequestMeasurement& m = r.requests[q];
      std::size_t pick = fastest_of[run];
      for (std::size_t c = 0; c < m.candidates.size(); ++c) {
        CandidateMeasurement& cm = m.candidates[c];
        const Tally& t = tally.at(r.plan_keys[q][c]);
        std::vector<double> prices;
        for (const std::vector<double>& times : t.steps) prices.push_back(median(times));
        cm.predicted_total.push_back(std::accumulate(prices.begin(), prices.end(), 0.0));
        cm.predicted_steps.push_back(std::move(prices));
        if (best != nullptr && r.plan_keys[q][c] == *best) pick = c;
      }
      m.pick.push_back(pick);
      if (q < r.stand_ins.size()) r.stand_ins[q].push_back(best == nullptr);
      if (best == nullptr) ++r.unmeasured_picks.back();
      if (where.size() == 1) ++r.single_run_requests;
    }
  }
  for (RescoreReport& r : reports) {
    std::vector<std::string> names;
    for (const ModelScore& s : r.scores) names.push_back(s.model);
    names.emplace_back("hindsight");
    r.scores = score_models(names, std::vector<bool>(names.size(), true), r.requests);
  }
}

RescoreReport rescore_all_files(const std::vector<RescoreReport>& reports) {
  RescoreReport all;
  if (reports.empty()) return all;
  all.source = "all " + std::to_string(reports.size()) + " files";
  all.calibrations = reports.front().calibrations;
  all.hindsight = reports.front().hindsight;
  all.unmeasured_picks.assign(reports.front().unmeasured_picks.size(), 0);
  for (const RescoreReport& r : reports) {
    all.requests.insert(all.requests.end(), r.requests.begin(), r.requests.end());
    for (std::size_t m = 0; m < all.unmeasured_picks.size(); ++m) all.unmeasured_picks[m] += r.unmeasured_picks.at(m);
    all.single_run_requests += r.single_run_requests;
    all.unfinished += r.unfinished;
  }
  std::vector<std::string> names;
  for (const ModelScore& s : reports.front().scores) names.push_back(s.model);
  all.scores = score_models(names, std::vector<bool>(names.size(), true), all.requests);
  return all;
}

namespace {

std::size_t measured_plans(const RescoreReport& r) {
  std::size_t plans = 0;
  for (const RequestMeasurement& q : r.requests) plans += q.candidates.size();
  return plans;
}

// Whether row m of a report picks a plan of its own (validated and step times do not; hindsight may stand in).
bool picks_own(const RescoreReport& r, std::size_t m) {
  return (m >= 1 && m <= r.calibrations) || (r.hindsight && m + 1 == r.scores.size());
}

// Request q of a report as a "request" record: which plan each row picked, and what that cost.
nlohmann::ordered_json request_record(const RescoreReport& r, std::size_t q) {
  using ojson = nlohmann::ordered_json;
  const RequestMeasurement& m = r.requests.at(q);
  const RequestVerdict verdict = judge(m);
  ojson plans = ojson::array();
  for (std::size_t c = 0; c < m.candidates.size(); ++c) {
    plans.push_back({{"trace", r.traces.at(q).at(c)}, {"measured_us", measured_total_us(m.candidates[c])}});
  }
  ojson picks = ojson::array();
  for (std::size_t s = 0; s < r.scores.size(); ++s) {
    picks.push_back({{"model", r.scores[s].model},
                     {"plan", m.pick.at(s)},
                     {"right", static_cast<bool>(verdict.right.at(s))},
                     {"exact", static_cast<bool>(verdict.exact.at(s))},
                     {"time_lost", time_lost(m, verdict, s)},
                     {"stand_in", picks_own(r, s) ? ojson(static_cast<bool>(r.stand_ins.at(q).at(s))) : ojson(nullptr)}});
  }
  return {{"type", "request"},
          {"records", r.source},
          {"request", r.request_numbers.at(q)},
          {"label", r.request_labels.at(q)},
          {"fastest", verdict.fastest},
          {"plans", std::move(plans)},
          {"picks", std::move(picks)}};
}

}  // namespace

std::string rescore_jsonl(const std::vector<RescoreReport>& reports, const RescoreOptions& options) {
  using ojson = nlohmann::ordered_json;
  std::vector<std::string> sources;
  for (const RescoreReport& r : reports) sources.push_back(r.source);
  std::vector<std::string> calibrations;
  if (!reports.empty()) {
    for (std::size_t m = 1; m <= reports.front().calibrations; ++m) calibrations.push_back(reports.front().scores.at(m).model);
  }
  std::string out = ojson{{"type", "config"},
                          {"command", "rescore"},
                          {"records", sources},
                          {"calibrations", calibrations},
                          {"tie_floor", kTieFloor},
                          {"priced_alike", kPricedAlike},
                          {"extrapolate", options.extrapolate},
                          {"no_axis_corrections", options.no_axis_corrections},
                          {"any_transport", options.any_transport}}
                        .dump() +
                    "\n";
  const auto rows = [&out](const RescoreReport& r, const ojson& records) {
    for (std::size_t m = 0; m < r.scores.size(); ++m) {
      ojson record = {{"type", "report"}, {"records", records}};
      record.update(score_json(r.scores[m]));
      record["unmeasured_picks"] = picks_own(r, m) ? ojson(r.unmeasured_picks.at(m)) : ojson(nullptr);
      out += record.dump() + "\n";
    }
  };
  for (const RescoreReport& r : reports) {
    out += ojson{{"type", "records"},
                 {"records", r.source},
                 {"calibration", r.calibration},
                 {"requests", r.requests.size()},
                 {"unfinished", r.unfinished},
                 {"plans", measured_plans(r)},
                 {"single_run_requests", r.single_run_requests}}
               .dump() +
           "\n";
    rows(r, r.source);
    if (r.request_numbers.size() == r.requests.size()) {
      for (std::size_t q = 0; q < r.requests.size(); ++q) out += request_record(r, q).dump() + "\n";
    }
  }
  if (reports.size() >= 2) rows(rescore_all_files(reports), "all");
  return out + ojson{{"type", "end"}, {"ok", true}, {"files", reports.size()}}.dump() + "\n";
}

std::string rescore_table(const std::vector<RescoreReport>& reports) {
  std::ostringstream out;
  const auto block = [&out](const std::string& title, const RescoreReport& r) {
    std::vector<std::vector<std::string>> rows = score_rows(r.scores);
    rows.front().emplace_back("unmeasured picks");
    for (std::size_t m = 0; m < r.scores.size(); ++m) {
      rows[m + 1].push_back(picks_own(r, m) ? std::to_string(r.unmeasured_picks.at(m)) : std::string("-"));
    }
    out << "\n" << title << "\n";
    print_table(out, rows, {false, true, true, true, true, true, true, true});
    out << priced_alike_note(r.scores);
    if (r.single_run_requests > 0) {
      out << "hindsight: " << r.single_run_requests << (r.single_run_requests == 1 ? " request" : " requests")
          << " ran in one file only, where it picks that run's fastest\n";
    }
  };
  for (const RescoreReport& r : reports) {
    block("\"" + r.source + "\": " + std::to_string(r.requests.size()) + " requests" +
              (r.unfinished > 0 ? " (" + std::to_string(r.unfinished) + " left out: not every plan ran)" : std::string()) +
              ", " + std::to_string(measured_plans(r)) + " measured plans" +
              (r.calibration.empty() ? std::string() : "; validated with \"" + r.calibration + "\""),
          r);
  }
  if (reports.size() >= 2) {
    const RescoreReport all = rescore_all_files(reports);
    block(all.source + ": " + std::to_string(all.requests.size()) + " requests", all);
  }
  return out.str();
}

}  // namespace meshloom::launcher
