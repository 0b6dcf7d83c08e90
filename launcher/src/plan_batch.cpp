// `meshloom-launch plan --batch`: one JSON line in, one JSON line out (see plan_batch.hpp), and the pieces of a plan
// request that the human command shares.
#include "plan_batch.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <istream>
#include <limits>
#include <ostream>
#include <string_view>
#include <utility>

#include "batch_io.hpp"
#include "meshloom/error.hpp"
#include "meshloom/plan/state.hpp"
#include "text_format.hpp"

namespace meshloom::launcher {

// ---- Names -------------------------------------------------------------------------------------------------------

std::string_view to_string(PlannerKind kind) noexcept {
  switch (kind) {
    case PlannerKind::Graph: return "graph";
    case PlannerKind::Greedy: return "greedy";
    case PlannerKind::Auto: return "auto";
  }
  return "graph";
}

std::string_view to_string(PartialVariant variant) noexcept {
  return variant == PartialVariant::Seed ? "seed" : "newest";
}

std::string_view to_string(CostModelKind kind) noexcept {
  switch (kind) {
    case CostModelKind::Fixed: return "fixed";
    case CostModelKind::Comm: return "comm";
    case CostModelKind::Calibrated: return "calibrated";
  }
  return "comm";
}

std::optional<PlannerKind> planner_from_string(std::string_view text) noexcept {
  for (const auto k : {PlannerKind::Graph, PlannerKind::Greedy, PlannerKind::Auto}) {
    if (text == to_string(k)) return k;
  }
  return std::nullopt;
}

std::optional<PartialVariant> variant_from_string(std::string_view text) noexcept {
  for (const auto v : {PartialVariant::Seed, PartialVariant::Newest}) {
    if (text == to_string(v)) return v;
  }
  return std::nullopt;
}

std::optional<CostModelKind> cost_model_from_string(std::string_view text) noexcept {
  for (const auto k : {CostModelKind::Fixed, CostModelKind::Comm, CostModelKind::Calibrated}) {
    if (text == to_string(k)) return k;
  }
  return std::nullopt;
}

namespace {

template <class T>
T parse_choice(std::optional<T> parsed, const std::string& what, const char* noun,
               const std::vector<std::string>& choices) {
  if (!parsed) {
    raise(ErrorKind::ValueError, what + ": unknown " + noun + " (expected " + jsonl::join_words(choices) + ")");
  }
  return *parsed;
}

}  // namespace

PlannerKind parse_planner(const std::string& text, const std::string& what) {
  return parse_choice(planner_from_string(text), what, "planner", {"graph", "greedy", "auto"});
}

PartialVariant parse_variant(const std::string& text, const std::string& what) {
  return parse_choice(variant_from_string(text), what, "variant", {"seed", "newest"});
}

CostModelKind parse_cost_model(const std::string& text, const std::string& what) {
  return parse_choice(cost_model_from_string(text), what, "cost model", {"fixed", "comm", "calibrated"});
}

State parse_state_text(const std::string& text, const std::string& what) {
  std::string why;
  auto state = try_parse_state(text, &why);
  if (!state) raise(ErrorKind::ValueError, what + ": cannot parse state: " + why);
  return *std::move(state);
}

// ---- Setup -------------------------------------------------------------------------------------------------------

const std::vector<std::string>& weight_names() {
  static const std::vector<std::string> names = {"all_reduce", "all_to_all", "all_gather", "reduce_scatter", "chunk"};
  return names;
}

void set_weight(FixedWeights& weights, const std::string& name, double value, const std::string& what) {
  const std::array<double*, 5> slots = {&weights.all_reduce, &weights.all_to_all, &weights.all_gather,
                                        &weights.reduce_scatter, &weights.chunk};
  const auto& names = weight_names();
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) {
    raise(ErrorKind::ValueError, what + ": unknown weight " + jsonl::quote(name) + " (expected " +
                                     jsonl::join_words(names) + ")");
  }
  // At most 1e300: a plan's cost sums its steps' weights, and a sum that overflows to infinity would read as a step
  // the model cannot price ("no redistribution path").
  constexpr double kMaxWeight = 1e300;
  if (!std::isfinite(value) || value < 0 || value > kMaxWeight) {
    const std::string shown = std::isnan(value) ? "nan" : std::isinf(value) ? (value > 0 ? "inf" : "-inf")
                                                                             : jsonl::json(value).dump();
    raise(ErrorKind::ValueError, what + ": " + name + " = " + shown + " must be finite, >= 0 and <= 1e300");
  }
  *slots[static_cast<std::size_t>(it - names.begin())] = value;
}

void check_axis_names(const std::vector<std::string>& names, std::size_t ndim) {
  std::string shown;
  jsonl::append_strings(shown, names);
  if (names.size() != ndim) {
    raise(ErrorKind::ValueError, "names " + shown + ": " + std::to_string(names.size()) + " names for a mesh of " +
                                     std::to_string(ndim) + " axes");
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) {
      raise(ErrorKind::ValueError, "names " + shown + ": axis " + std::to_string(i) + " has an empty name");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (names[i] == names[j]) {
        raise(ErrorKind::ValueError, "names " + shown + ": the name " + jsonl::quote(names[i]) + " is given to axes " +
                                         std::to_string(j) + " and " + std::to_string(i));
      }
    }
  }
}

std::size_t axis_by_name(const std::vector<std::string>& names, const std::string& name, const std::string& path) {
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) {
    std::vector<std::string> quoted;
    for (const auto& n : names) quoted.push_back(jsonl::quote(n));
    raise(ErrorKind::KeyError, path + " = " + jsonl::quote(name) + ": no mesh axis has that name (axes: " +
                                   (names.empty() ? std::string("unnamed") : jsonl::join_words(quoted, 16)) + ")");
  }
  return static_cast<std::size_t>(it - names.begin());
}

std::vector<std::string> calibration_axis_names(const PlanSetup& setup) {
  if (!setup.names.empty()) return setup.names;
  if (!setup.calibration) raise(ErrorKind::ValueError, "the calibrated cost model needs a calibration");
  const Calibration& c = *setup.calibration;
  if (!c.groups.empty()) return setup.names;
  if (c.mesh_names.empty()) {
    raise(ErrorKind::ValueError,
          "the calibration names no mesh axes: give the mesh's axis names to look its fits up by");
  }
  if (c.mesh_shape != setup.request.mesh_shape) {
    std::string shape;
    jsonl::append_ints(shape, c.mesh_shape);
    std::string mesh;
    jsonl::append_ints(mesh, setup.request.mesh_shape);
    raise(ErrorKind::ValueError, "the calibration is for mesh " + shape + " (" + jsonl::join_words(c.mesh_names) +
                                     "), not mesh " + mesh +
                                     ": give the mesh's axis names to look its fits up by name");
  }
  return c.mesh_names;
}

std::string calibration_timing_text(const Calibration& calibration) {
  return calibration.timing.empty() ? std::string("timing not recorded") : calibration.timing;
}

std::unique_ptr<CostModel> make_cost_model(const PlanSetup& setup) {
  if (setup.devices_per_host < 1 || setup.devices_per_host > kMaxDevicesPerHost) {
    raise(ErrorKind::ValueError, "devices_per_host " + std::to_string(setup.devices_per_host) +
                                     " is out of range [1, " + std::to_string(kMaxDevicesPerHost) + "]");
  }
  if (!setup.names.empty()) check_axis_names(setup.names, setup.request.mesh_shape.size());
  switch (setup.cost_model) {
    case CostModelKind::Fixed: return std::make_unique<FixedCostModel>(setup.weights);
    case CostModelKind::Comm:
      return std::make_unique<CommCostModel>(setup.request.mesh_shape, setup.devices_per_host);
    case CostModelKind::Calibrated: {
      if (!setup.calibration) {
        raise(ErrorKind::ValueError, "the calibrated cost model needs a calibration (a calibration file from "
                                     "`meshloom-launch calibrate`)");
      }
      return std::make_unique<CalibratedCostModel>(*setup.calibration, calibration_axis_names(setup),
                                                   CalibratedOptions{.extrapolate = setup.extrapolate});
    }
  }
  raise(ErrorKind::ValueError, "unknown cost model");
}

std::string unpriced_note(const CostModel& model, const std::vector<std::int64_t>& mesh_shape,
                          const std::vector<std::string>& lacking) {
  const auto* calibrated = dynamic_cast<const CalibratedCostModel*>(&model);
  if (calibrated == nullptr) return {};
  const std::vector<std::string> gaps = lacking.empty() ? calibrated->gaps(mesh_shape) : lacking;
  if (gaps.empty()) return {};
  return "; the calibration cannot price: " + join(gaps, {.separator = "; "}) +
         " (calibrate those shapes, or --extrapolate to guess them)";
}

std::optional<double> price_as_run(const PlanRequest& request, const Plan& plan, const CostModel& model) {
  // plan_redistribution priced it so already (Plan::cost): no second pass over its steps.
  if (!plans_as_run(request, model) || !std::isfinite(plan.cost)) return std::nullopt;
  return plan.cost;
}

Plan plan_noting_gaps(const PlanRequest& request, const CostModel& model) {
  try {
    return plan_redistribution(request, model);
  } catch (const Error& e) {
    // Only where a search found nothing it could price: not on a refused request (a Partial op changed, a shard
    // order greedy cannot follow). Compared as they run, no plan could be priced for a merged step: the flattened
    // groups' curves are what is missing, not the axes'.
    std::string note;
    if (e.message().starts_with("no redistribution path")) note = unpriced_note(model, request.mesh_shape);
    if (e.message().starts_with("no plan from")) {
      std::vector<std::string> groups;
      if (const auto* calibrated = dynamic_cast<const CalibratedCostModel*>(&model)) {
        for (const auto& gap : calibrated->gap_list(request.mesh_shape, request.flattened)) {
          if (gap.axes.size() > 1) groups.push_back(gap.text);
        }
      }
      note = unpriced_note(model, request.mesh_shape, groups);
    }
    if (note.empty()) throw;
    raise(e.kind(), e.message() + note);
  }
}

std::string unpriced_steps(const Plan& plan) {
  std::vector<std::string> unpriced;
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& step = plan.steps[i];
    if (std::isfinite(step.cost)) continue;
    unpriced.push_back("step " + std::to_string(i) + ", " + std::string(to_string(step.collective)) + " on " +
                       step_axes_text(step.axes));
  }
  return join(unpriced, {.separator = "; "});
}

std::vector<std::string> missing_curves(const PlanRequest& request, const Plan& plan, const CostModel& model) {
  std::vector<std::string> missing;
  const auto* calibrated = dynamic_cast<const CalibratedCostModel*>(&model);
  if (calibrated == nullptr) return missing;
  for (const auto& gap : calibrated->gap_list(request.mesh_shape, request.flattened)) {
    const bool named = std::any_of(plan.steps.begin(), plan.steps.end(), [&gap](const PlanStep& step) {
      return !std::isfinite(step.cost) && step.axes == gap.axes && to_string(step.collective) == gap.collective;
    });
    if (named) missing.push_back(gap.text);
  }
  return missing;
}

Plan plan_naming_gaps(const PlanRequest& request, const CostModel& model) {
  Plan plan = plan_noting_gaps(request, model);
  if (std::isfinite(plan.cost)) return plan;
  // Greedy, which looks at placements alone, or a plan priced as it runs whose merged step has no curve.
  std::string path;
  for (const State& state : plan.path) path += (path.empty() ? "" : "->") + to_string(state);
  const std::string note = unpriced_note(model, request.mesh_shape, missing_curves(request, plan, model));
  raise(ErrorKind::ValueError, std::string(to_string(resolve_planner(request))) + "'s plan " + path +
                                   " takes steps its cost model cannot price (" + unpriced_steps(plan) + ")" + note);
}

std::map<std::string, int> communication_counts(const Plan& plan) {
  std::map<std::string, int> counts;
  for (const auto& step : plan.steps) {
    if (communicates(step.collective)) ++counts[std::string(to_string(step.collective))];
  }
  return counts;
}

// ---- --batch -----------------------------------------------------------------------------------------------------

namespace {

using namespace jsonl;  // NOLINT(google-build-using-namespace): the shared batch helpers

const std::vector<std::string>& line_fields() {
  static const std::vector<std::string> fields = {
      "mesh",   "tensor_shape",     "src",         "dst",        "planner",   "variant", "cost_model", "weights",
      "itemsize", "devices_per_host", "calibration", "coordinate", "flattened", "names",   "state_budget", "extrapolate"};
  return fields;
}

// An optional field: nullptr when absent or null.
const json* optional_field(const json& doc, const char* name) {
  const json* v = find_field(doc, name);
  return v == nullptr || v->is_null() ? nullptr : v;
}

FixedWeights get_weights(const json& v) {
  if (!v.is_object()) {
    value_error("weights = " + show(v) + ": expected an object such as {\"all_reduce\": 4, \"chunk\": 0}, got " +
                type_word(v));
  }
  FixedWeights w;
  check_fields(v, "weights: ", weight_names(), "");
  for (const auto& item : v.items()) {
    set_weight(w, item.key(), get_number(item.value(), "weights." + item.key()), "weights");
  }
  return w;
}

// Re-raises an engine error about the calibration with "calibration: " in front of its message.
template <class Load>
Calibration with_calibration_context(Load&& load) {
  try {
    return load();
  } catch (const Error& e) {
    raise(e.kind(), "calibration: " + e.message());
  }
}

Calibration get_calibration(const json& v) {
  if (v.is_object()) return with_calibration_context([&v] { return parse_calibration(v.dump()); });
  if (v.is_string()) {
    const std::string path = v.get<std::string>();
    return with_calibration_context([&path] { return load_calibration(path); });
  }
  value_error("calibration = " + show(v) + ": expected a calibration object or the path of a calibration file, got " +
              type_word(v));
}

// "flattened": a list of axis lists; an axis is an index or, with "names", a name.
std::vector<std::vector<std::size_t>> get_flattened(const json& v, const std::vector<std::string>& names) {
  check_list(v, "flattened", "axis lists");
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t g = 0; g < v.size(); ++g) {
    const std::string gpath = "flattened[" + std::to_string(g) + "]";
    check_list(v[g], gpath, "axes");
    std::vector<std::size_t> group;
    for (std::size_t k = 0; k < v[g].size(); ++k) {
      const json& a = v[g][k];
      const std::string path = gpath + "[" + std::to_string(k) + "]";
      if (a.is_string()) {
        group.push_back(axis_by_name(names, a.get<std::string>(), path));
        continue;
      }
      if (!a.is_number_integer()) {
        value_error(path + " = " + show(a) + ": expected an axis index or name, got " + type_word(a));
      }
      const std::int64_t axis = get_int(a, path);
      if (axis < 0) value_error(path + " = " + show(a) + ": an axis index must be >= 0");
      group.push_back(static_cast<std::size_t>(axis));
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

PlanSetup parse_setup(const json& doc, const PlanBatchLimits& limits) {
  check_fields(doc, "", line_fields(), " in the line");
  PlanSetup s;
  PlanRequest& r = s.request;
  const auto required = [&doc](const char* name) -> const json& {
    return require_field(doc, name, "", " in the line");
  };
  r.mesh_shape = get_ints(required("mesh"), "mesh");
  r.tensor_shape = get_ints(required("tensor_shape"), "tensor_shape");
  r.src = parse_state_text(get_string(required("src"), "src"), "src = " + show(required("src")));
  r.dst = parse_state_text(get_string(required("dst"), "dst"), "dst = " + show(required("dst")));
  if (const json* v = optional_field(doc, "planner")) {
    r.planner = parse_planner(get_string(*v, "planner"), "planner = " + show(*v));
  }
  if (const json* v = optional_field(doc, "variant")) {
    r.variant = parse_variant(get_string(*v, "variant"), "variant = " + show(*v));
  }
  if (const json* v = optional_field(doc, "names")) {
    s.names = get_strings(*v, "names");
    check_axis_names(s.names, r.mesh_shape.size());
  }
  if (const json* v = optional_field(doc, "weights")) s.weights = get_weights(*v);
  if (const json* v = optional_field(doc, "itemsize")) r.itemsize = get_int(*v, "itemsize");
  if (const json* v = optional_field(doc, "devices_per_host")) s.devices_per_host = get_int(*v, "devices_per_host");
  if (const json* v = optional_field(doc, "calibration")) s.calibration = get_calibration(*v);
  if (const json* v = optional_field(doc, "extrapolate")) {
    if (!v->is_boolean()) value_error("extrapolate = " + show(*v) + ": expected true or false");
    s.extrapolate = v->get<bool>();
  }
  s.cost_model = s.calibration ? CostModelKind::Calibrated : CostModelKind::Comm;
  if (const json* v = optional_field(doc, "cost_model")) {
    s.cost_model = parse_cost_model(get_string(*v, "cost_model"), "cost_model = " + show(*v));
  }
  if (const json* v = optional_field(doc, "coordinate")) r.coordinate = get_ints(*v, "coordinate");
  if (const json* v = optional_field(doc, "flattened")) r.flattened = get_flattened(*v, s.names);
  r.state_budget = limits.max_state_budget;
  if (const json* v = optional_field(doc, "state_budget")) {
    const std::int64_t budget = get_int(*v, "state_budget");
    if (budget < 1 || static_cast<std::uint64_t>(budget) > limits.max_state_budget) {
      value_error("state_budget = " + show(*v) + ": out of range [1, " + std::to_string(limits.max_state_budget) + "]");
    }
    r.state_budget = static_cast<std::size_t>(budget);
  }
  return s;
}

void append_step(std::string& out, const PlanStep& step) {
  out += "{\"axes\":[";
  for (std::size_t i = 0; i < step.axes.size(); ++i) {
    if (i > 0) out += ',';
    append_int(out, static_cast<std::int64_t>(step.axes[i]));
  }
  out += "],\"collective\":" + quote(std::string(to_string(step.collective)));
  out += ",\"from\":" + quote(to_string(step.from));
  out += ",\"to\":" + quote(to_string(step.to));
  out += ",\"cost\":";
  append_double(out, step.cost);
  out += ",\"logical_shape\":";
  append_ints(out, step.logical_shape);
  out += ",\"bytes\":";
  append_int(out, step.bytes);
  out += std::string(",\"merged\":") + (step.merged ? "true" : "false") + "}";
}

std::string plan_object(const Plan& plan, std::optional<double> as_run) {
  // The contract's cost: the path's edges, before any merging. Under a model that compares plans as they run
  // (page 4), also that price, which the steps' costs of a plan it chose so add up to.
  std::string out = "{\"ok\":true,\"cost\":";
  append_double(out, plan.path_cost);
  if (as_run) {
    out += ",\"cost_as_run\":";
    append_double(out, *as_run);
  }
  out += ",\"path\":[";
  for (std::size_t i = 0; i < plan.path.size(); ++i) {
    if (i > 0) out += ',';
    out += quote(to_string(plan.path[i]));
  }
  out += "],\"trace\":" + quote(trace(plan));
  out += ",\"steps\":[";
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    if (i > 0) out += ',';
    append_step(out, plan.steps[i]);
  }
  out += "],\"comm_counts\":{";
  bool first = true;
  for (const auto& [name, count] : communication_counts(plan)) {
    if (!first) out += ',';
    first = false;
    out += quote(name) + ":";
    append_int(out, count);
  }
  out += "},\"states_explored\":";
  append_int(out, static_cast<std::int64_t>(plan.states_explored));
  return out + "}";
}

// The engine names a refused flattened group by its axis indices ("flattened[0] = [1, 0]: ..."); a line that wrote
// the group by names gets it back as written ("flattened[0] = [\"tp\", \"dp\"]: ...").
[[noreturn]] void restate_flattened(const Error& e, const json& doc) {
  const std::string& m = e.message();
  const json* groups = doc.contains("flattened") ? &doc["flattened"] : nullptr;
  const std::size_t open = m.find("] = [");
  const std::size_t close = open == std::string::npos ? open : m.find(']', open + 5);
  if (groups != nullptr && groups->is_array() && m.starts_with("flattened[") && close != std::string::npos) {
    std::size_t g = 0;
    const auto [end, ec] = std::from_chars(m.data() + 10, m.data() + open, g);
    const auto named = [](const json& group) {
      return group.is_array() && std::any_of(group.begin(), group.end(), [](const json& a) { return a.is_string(); });
    };
    if (ec == std::errc() && end == m.data() + open && g < groups->size() && named((*groups)[g])) {
      std::string tail = m.substr(close + 1);
      // "..., got axis 0": the axis by the name the group wrote it with, where it did ("got axis 0 (\"dp\")").
      constexpr std::string_view kGot = ", got axis ";
      const std::size_t got = tail.rfind(kGot);
      const json* names = doc.contains("names") && doc["names"].is_array() ? &doc["names"] : nullptr;
      if (got != std::string::npos && names != nullptr) {
        std::size_t axis = 0;
        const char* last = tail.data() + tail.size();
        const auto [axis_end, axis_ec] = std::from_chars(tail.data() + got + kGot.size(), last, axis);
        const json& group = (*groups)[g];
        if (axis_ec == std::errc() && axis_end == last && axis < names->size() && (*names)[axis].is_string() &&
            std::find(group.begin(), group.end(), (*names)[axis]) != group.end()) {
          tail += " (" + (*names)[axis].dump() + ")";
        }
      }
      raise(e.kind(), m.substr(0, open + 4) + show((*groups)[g]) + tail);
    }
  }
  throw e;
}

std::string answer(const std::string& line, const PlanBatchLimits& limits) {
  const json doc = parse_line_object(line, limits.max_line_bytes, limits.max_depth);
  const PlanSetup setup = parse_setup(doc, limits);
  const auto model = make_cost_model(setup);
  Plan plan;
  try {
    plan = plan_naming_gaps(setup.request, *model);
  } catch (const Error& e) {
    // At the most a line may ask for, the engine's advice to raise the budget cannot be taken.
    if (setup.request.state_budget == limits.max_state_budget &&
        e.message().starts_with("planning exceeded its state budget")) {
      raise(e.kind(), "planning exceeded its state budget of " + std::to_string(limits.max_state_budget) +
                          " states, the most a line may ask for (state_budget); simplify the request");
    }
    restate_flattened(e, doc);
  }
  return plan_object(plan, price_as_run(setup.request, plan, *model));
}

}  // namespace

PlanSetup parse_plan_setup(const std::string& line, const PlanBatchLimits& limits) {
  return parse_setup(parse_line_object(line, limits.max_line_bytes, limits.max_depth), limits);
}

std::string answer_plan_line(const std::string& line) { return answer_plan_line(line, PlanBatchLimits{}); }

std::string answer_plan_line(const std::string& line, const PlanBatchLimits& limits) {
  return jsonl::guarded_answer([&] { return answer(line, limits); });
}

int run_plan_batch(std::istream& in, std::ostream& out) { return run_plan_batch(in, out, PlanBatchLimits{}); }

int run_plan_batch(std::istream& in, std::ostream& out, const PlanBatchLimits& limits) {
  return jsonl::run_json_lines(in, out, limits.max_line_bytes,
                               [&limits](const std::string& line) { return answer_plan_line(line, limits); });
}

}  // namespace meshloom::launcher
