// `meshloom-launch plan`: the cheapest sequence of collectives that moves a tensor from one placement state to
// another, as a table for people (or planner against planner with --compare), or as JSON Lines with --batch.
// The request and cost model are built as in plan_batch.cpp, which also answers --batch.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "meshloom/error.hpp"
#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/simulator.hpp"
#include "meshloom/plan/state.hpp"
#include "plan_batch.hpp"
#include "plan_options.hpp"
#include "text_format.hpp"

namespace meshloom::launcher {

namespace {

// Bytes per element of the dtypes people name (PyTorch's names and their aliases, and the design format's
// float8_e4m3).
struct Dtype {
  const char* name;
  std::int64_t itemsize;
};
constexpr Dtype kDtypes[] = {
    {"float32", 4},   {"float", 4},         {"float64", 8},     {"double", 8},      {"float16", 2},
    {"half", 2},      {"bfloat16", 2},      {"float8_e4m3fn", 1}, {"float8_e4m3", 1}, {"float8_e5m2", 1},
    {"int64", 8},     {"long", 8},          {"int32", 4},       {"int", 4},         {"int16", 2},
    {"short", 2},     {"int8", 1},          {"uint8", 1},       {"bool", 1},        {"complex64", 8},
    {"complex128", 16},
};

std::int64_t dtype_itemsize(const std::string& name) {
  for (const auto& d : kDtypes) {
    if (name == d.name) return d.itemsize;
  }
  std::vector<std::string> known;
  for (const auto& d : kDtypes) known.emplace_back(d.name);
  raise(ErrorKind::ValueError, "--dtype \"" + name + "\": unknown dtype (expected one of " +
                                   join(known, {.separator = ", "}) + ")");
}

// "all_reduce=4,chunk=0.5": the fixed model's weights, the others at their defaults.
FixedWeights parse_weights(const std::string& text) {
  FixedWeights w;
  for (const auto& part : split(text, ',')) {
    const auto eq = part.find('=');
    if (eq == std::string::npos) {
      raise(ErrorKind::ValueError, "--weights \"" + text + "\": \"" + part +
                                       "\" is not NAME=VALUE (e.g. all_reduce=4,chunk=0)");
    }
    const std::string name = trim(std::string_view(part).substr(0, eq));
    const std::string value = trim(std::string_view(part).substr(eq + 1));
    double v = 0;
    const auto r = std::from_chars(value.data(), value.data() + value.size(), v);
    if (value.empty() || r.ec != std::errc() || r.ptr != value.data() + value.size()) {
      raise(ErrorKind::ValueError, "--weights \"" + text + "\": \"" + value + "\" is not a number");
    }
    set_weight(w, name, v, "--weights \"" + text + "\"");
  }
  return w;
}

// "dp,tp" or "1,2": the axes of one flattened group, by name (with --names) or index.
std::vector<std::size_t> parse_axes(const std::string& text, const std::vector<std::string>& names) {
  std::vector<std::size_t> axes;
  for (const auto& part : split(text, ',')) {
    const std::string what = "--flatten \"" + text + "\"";
    if (part.empty()) raise(ErrorKind::ValueError, what + ": empty entry (expected axis names or indices)");
    if (const auto index = to_int(part)) {
      if (*index < 0) raise(ErrorKind::ValueError, what + ": axis " + part + " must be >= 0");
      axes.push_back(static_cast<std::size_t>(*index));
    } else {
      axes.push_back(axis_by_name(names, part, what));
    }
  }
  return axes;
}

HumanSetup parse_options(const PlanOptions& o, const CLI::App& cmd) {
  auto given = [&cmd](const char* name) { return cmd.count(name) > 0; };
  for (const char* name : {"--mesh", "--tensor", "--src", "--dst"}) {
    if (!given(name)) {
      raise(ErrorKind::ValueError, std::string(name) + " is required (e.g. plan --mesh 2,2 --tensor 8,8 --src S(0)R "
                                                       "--dst RS(0), or --batch)");
    }
  }
  HumanSetup h;
  PlanSetup& s = h.setup;
  PlanRequest& r = s.request;
  r.mesh_shape = parse_int_list(o.mesh, "--mesh");
  r.tensor_shape = parse_int_list(o.tensor, "--tensor");
  r.src = parse_state_text(o.src, "--src \"" + o.src + "\"");
  r.dst = parse_state_text(o.dst, "--dst \"" + o.dst + "\"");
  if (given("--names")) {
    s.names = parse_name_list(o.names, "--names");
    check_axis_names(s.names, r.mesh_shape.size());
  }
  if (given("--planner")) r.planner = parse_planner(o.planner, "--planner \"" + o.planner + "\"");
  if (given("--variant")) r.variant = parse_variant(o.variant, "--variant \"" + o.variant + "\"");
  if (given("--itemsize") && given("--dtype")) {
    raise(ErrorKind::ValueError, "give either --itemsize or --dtype, not both");
  }
  if (given("--itemsize")) r.itemsize = parse_int(o.itemsize, "--itemsize");
  if (given("--dtype")) {
    r.itemsize = dtype_itemsize(o.dtype);
    h.dtype = o.dtype;
  }
  if (given("--devices-per-host")) s.devices_per_host = parse_int(o.devices_per_host, "--devices-per-host");
  if (given("--weights")) s.weights = parse_weights(o.weights);
  if (given("--calibration")) s.calibration = load_calibration(o.calibration);
  s.extrapolate = o.extrapolate;
  s.cost_model = s.calibration ? CostModelKind::Calibrated : CostModelKind::Comm;
  if (given("--cost")) s.cost_model = parse_cost_model(o.cost, "--cost \"" + o.cost + "\"");
  if (given("--coordinate")) r.coordinate = parse_int_list(o.coordinate, "--coordinate");
  for (const auto& f : o.flatten) r.flattened.push_back(parse_axes(f, s.names));
  if (given("--state-budget")) {
    const std::int64_t budget = parse_int(o.state_budget, "--state-budget");
    if (budget < 1) raise(ErrorKind::ValueError, "--state-budget \"" + o.state_budget + "\": must be >= 1");
    r.state_budget = static_cast<std::size_t>(budget);
  }
  return h;
}

// ---- Human output ------------------------------------------------------------------------------------------------

// A cost as people read it: 6 significant digits, in microseconds for the models that measure time.
std::string format_cost(double cost, CostModelKind model) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, cost, std::chars_format::general, 6);
  std::string s(buf, r.ptr);
  if (model != CostModelKind::Fixed) s += " us";
  return s;
}

std::string axis_label(std::size_t axis, const std::vector<std::string>& names) {
  return names.empty() ? std::to_string(axis) : names[axis];
}

std::string axes_label(const std::vector<std::size_t>& axes, const std::vector<std::string>& names) {
  std::vector<std::string> labels;
  for (const auto a : axes) labels.push_back(axis_label(a, names));
  return join(labels, {.separator = ","});
}

std::string shape_text(const std::vector<std::int64_t>& shape) { return "[" + join(shape, {.separator = ", "}) + "]"; }

std::string model_text(const PlanSetup& s) {
  std::string text(to_string(s.cost_model));
  switch (s.cost_model) {
    case CostModelKind::Fixed: {
      const FixedWeights& w = s.weights;
      const double values[] = {w.all_reduce, w.all_to_all, w.all_gather, w.reduce_scatter, w.chunk};
      std::vector<std::string> parts;
      for (std::size_t i = 0; i < weight_names().size(); ++i) {
        parts.push_back(weight_names()[i] + " " + format_cost(values[i], CostModelKind::Fixed));
      }
      return text + " (" + join(parts, {.separator = ", "}) + ")";
    }
    case CostModelKind::Comm: return text + " (" + std::to_string(s.devices_per_host) + " devices per host)";
    case CostModelKind::Calibrated: {
      const Calibration& c = *s.calibration;
      const std::string timing = ", " + calibration_timing_text(c);
      if (!c.groups.empty()) {
        return text + " (" + c.backend + " calibration, " + std::to_string(c.groups.size()) + " curves by group shape" +
               timing + (s.extrapolate ? ", extrapolating" : "") + ")";
      }
      return text + " (" + c.backend + " calibration, axes " + join(calibration_axis_names(s), {.separator = ", "}) +
             timing + (s.extrapolate ? ", extrapolating" : "") + ")";
    }
  }
  return text;
}

std::string mesh_text(const PlanSetup& s) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < s.request.mesh_shape.size(); ++i) {
    parts.push_back(s.names.empty() ? std::to_string(s.request.mesh_shape[i])
                                    : s.names[i] + "=" + std::to_string(s.request.mesh_shape[i]));
  }
  return "(" + join(parts, {.separator = ", "}) + ")";
}

void print_plan(std::ostream& out, const HumanSetup& h, const Plan& plan, const CostModel& model) {
  const PlanSetup& s = h.setup;
  const PlanRequest& r = s.request;
  std::vector<std::int64_t> coordinate = r.coordinate;
  if (coordinate.empty()) coordinate.assign(r.mesh_shape.size(), 0);
  const PlannerKind used = resolve_planner(r);
  out << "plan " << to_string(r.src) << " -> " << to_string(r.dst) << "\n";
  out << "  mesh " << mesh_text(s) << ", tensor " << shape_text(r.tensor_shape) << ", "
      << (h.dtype ? *h.dtype : "itemsize " + std::to_string(r.itemsize)) << ", shapes at coordinate "
      << shape_text(coordinate) << "\n";
  out << "  planner " << to_string(r.planner);
  if (r.planner == PlannerKind::Auto) out << " (= " << to_string(used) << ")";
  out << ", variant " << to_string(r.variant) << ", cost model " << model_text(s) << "\n\n";
  if (plan.steps.empty()) {
    out << "no steps: the source already is the target\n";
  } else {
    std::vector<std::vector<std::string>> rows = {
        {"step", "axis", "collective", "from -> to", "logical shape", "bytes", "cost"}};
    for (std::size_t i = 0; i < plan.steps.size(); ++i) {
      const PlanStep& step = plan.steps[i];
      rows.push_back({std::to_string(i), axes_label(step.axes, s.names),
                      std::string(to_string(step.collective)) + (step.merged ? " (merged)" : ""),
                      to_string(step.from) + " -> " + to_string(step.to), shape_text(step.logical_shape),
                      std::to_string(step.bytes), format_cost(step.cost, s.cost_model)});
    }
    print_table(out, rows, {true, false, false, false, false, true, true});
  }
  out << "\ntrace: " << trace(plan) << "\n";
  // The path's cost before merging, as plan --batch's `cost`; under a model that compares plans as they run, also
  // that price (what the steps above add up to where the plan was chosen so).
  out << "cost: " << format_cost(plan.path_cost, s.cost_model) << "\n";
  if (const auto as_run = price_as_run(r, plan, model)) {
    out << "cost as it runs: " << format_cost(*as_run, s.cost_model) << "\n";
  }
  out << "states explored: " << plan.states_explored << "\n";
}

// Graph, greedy and auto on the same request and model, side by side, and which is cheaper.
void print_comparison(std::ostream& out, const HumanSetup& h, const CostModel& model) {
  const PlanSetup& s = h.setup;
  out << "compare planners: " << to_string(s.request.src) << " -> " << to_string(s.request.dst) << " on mesh "
      << mesh_text(s) << ", tensor " << shape_text(s.request.tensor_shape) << "\n";
  out << "  variant " << to_string(s.request.variant) << ", cost model " << model_text(s) << "\n";
  // Like with like: every planner's plan at its Plan::cost, its path cost before merging, or, under a model that
  // compares plans as they run (a calibration with a flattened group's curve), its price as it runs, which
  // plan_redistribution gives every plan there (greedy's path cost against the graph plan's price as it runs
  // compared unlike prices).
  if (plans_as_run(s.request, model)) {
    out << "  priced as they run: the calibration prices the flattened group's merged steps\n";
  }
  out << "\n";
  std::vector<std::vector<std::string>> rows = {{"planner", "cost", "steps", "states", "trace"}};
  std::optional<double> graph_cost;
  std::optional<double> greedy_cost;
  std::vector<std::string> unpriced;  // "greedy's step 0, all_gather on axes 0,1": plans found but not priced
  std::vector<std::string> missing;   // the curves the calibration lacks to price them
  for (const auto kind : {PlannerKind::Graph, PlannerKind::Greedy, PlannerKind::Auto}) {
    PlanRequest r = s.request;
    r.planner = kind;
    std::string label(to_string(kind));
    if (kind == PlannerKind::Auto) label += " (= " + std::string(to_string(resolve_planner(r))) + ")";
    try {
      const Plan plan = plan_noting_gaps(r, model);
      // Plan::cost: the path's edges, or where plans are compared as they run, the plan's price so.
      const std::optional<double> priced = std::isfinite(plan.cost) ? std::optional<double>(plan.cost) : std::nullopt;
      if (priced && kind == PlannerKind::Graph) graph_cost = *priced;
      if (priced && kind == PlannerKind::Greedy) greedy_cost = *priced;
      if (!priced && kind != PlannerKind::Auto) {
        unpriced.push_back(std::string(to_string(kind)) + "'s " + unpriced_steps(plan));
        for (std::string& curve : missing_curves(r, plan, model)) {
          if (std::find(missing.begin(), missing.end(), curve) == missing.end()) missing.push_back(std::move(curve));
        }
      }
      rows.push_back({label, priced ? format_cost(*priced, s.cost_model) : "unpriced",
                      std::to_string(plan.steps.size()), std::to_string(plan.states_explored), trace(plan)});
    } catch (const Error& e) {
      rows.push_back({label, "-", "-", "-", std::string("failed: ") + e.text()});
    }
  }
  print_table(out, rows, {false, true, true, true, false});
  out << "\n";
  if (graph_cost && greedy_cost) {
    const std::string g = format_cost(*graph_cost, s.cost_model);
    const std::string y = format_cost(*greedy_cost, s.cost_model);
    if (*graph_cost < *greedy_cost) {
      out << "graph is cheaper: " << g << " against " << y << " for greedy\n";
    } else if (*greedy_cost < *graph_cost) {
      out << "greedy is cheaper: " << y << " against " << g << " for graph\n";
    } else {
      out << "graph and greedy cost the same: " << g << "\n";
    }
  } else if (!unpriced.empty()) {
    // A plan was found that the model cannot price (greedy's, which chooses by placements alone): say which step.
    if (graph_cost || greedy_cost) {
      out << "only " << (graph_cost ? "graph" : "greedy") << "'s plan can be priced ("
          << format_cost(graph_cost ? *graph_cost : *greedy_cost, s.cost_model) << "): ";
    } else {
      out << "no plan can be priced: ";
    }
    out << "the cost model cannot price " << join(unpriced, {.separator = "; "})
        << unpriced_note(model, s.request.mesh_shape, missing) << "\n";
  } else if (graph_cost || greedy_cost) {
    out << (graph_cost ? "only graph" : "only greedy") << " finds a plan\n";
  } else {
    out << "no planner finds a plan\n";
  }
}

// Runs the plan on real data on a virtual cluster (the engine's simulator) and says whether every rank ends with
// exactly its part of the target. Exit status 1 when it does not.
int print_verification(std::ostream& out, const PlanRequest& request, const Plan& plan) {
  std::int64_t ranks = 1;
  for (const auto s : request.mesh_shape) ranks *= s;
  const SimulationResult result = simulate(request, plan);
  if (result.ok) {
    out << "verified: " << result.steps_executed << " steps on " << ranks << " simulated ranks, "
        << result.elements_checked << " elements equal to the target\n";
    return 0;
  }
  out << "verification FAILED: " << result.error << "\n";
  return 1;
}

int run(const PlanOptions& o, const CLI::App& cmd) {
  auto given = [&cmd](const char* name) { return cmd.count(name) > 0; };
  return status_or_error(std::cerr, [&]() -> int {
    if (o.batch) {
      for (const char* name : {"--mesh", "--names", "--tensor", "--src", "--dst", "--planner", "--variant", "--cost",
                               "--weights", "--calibration", "--extrapolate", "--itemsize", "--dtype", "--devices-per-host",
                               "--flatten", "--coordinate", "--compare", "--state-budget", "--verify"}) {
        if (given(name)) raise(ErrorKind::ValueError, std::string("--batch reads everything from standard input; ") +
                                                          name + " cannot be combined with it");
      }
      // As in `mesh --batch`: C++'s own file buffer on standard input, whose read errors give status 1.
      std::ios::sync_with_stdio(false);
      const int status = run_plan_batch(std::cin, std::cout);
      return std::ferror(stdin) != 0 ? 1 : status;
    }
    if (o.compare && given("--planner")) {
      raise(ErrorKind::ValueError, "--compare plans with every planner; --planner cannot be combined with it");
    }
    if (o.compare && o.verify) raise(ErrorKind::ValueError, "--verify checks one plan; it cannot be combined with --compare");
    const HumanSetup h = parse_options(o, cmd);
    const auto model = make_cost_model(h.setup);
    // Print only a complete answer: an error halfway leaves stdout empty.
    std::ostringstream buffer;
    int status = 0;
    if (o.compare) {
      print_comparison(buffer, h, *model);
    } else {
      const Plan plan = plan_naming_gaps(h.setup.request, *model);
      print_plan(buffer, h, plan, *model);
      if (o.verify) status = print_verification(buffer, h.setup.request, plan);
    }
    std::cout << buffer.str();
    return status;
  });
}

}  // namespace

HumanSetup parse_plan_options(const PlanOptions& o, const CLI::App& cmd) { return parse_options(o, cmd); }
std::string format_plan_cost(double cost, CostModelKind model) { return format_cost(cost, model); }
std::string plan_model_text(const PlanSetup& s) { return model_text(s); }
std::string plan_mesh_text(const PlanSetup& s) { return mesh_text(s); }
std::string plan_axes_label(const std::vector<std::size_t>& axes, const std::vector<std::string>& names) {
  return axes_label(axes, names);
}
void print_plan_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows,
                      const std::vector<bool>& right) {
  print_table(out, rows, right);
}

void add_plan_request_options(CLI::App& cmd, PlanOptions& o, const PlanOptionHelp& help) {
  cmd.add_option("--mesh", o.mesh, help.mesh)->type_name("SIZES");
  cmd.add_option("--names", o.names, "Mesh axis names, e.g. pp,dp,tp")->type_name("NAMES");
  cmd.add_option("--tensor", o.tensor, "Global tensor shape, e.g. 8,8,8")->type_name("SIZES");
  cmd.add_option("--src", o.src, "Source state, e.g. \"S(0)[0]S(0)[1]R\"")->type_name("STATE");
  cmd.add_option("--dst", o.dst, "Target state, e.g. \"RS(0)R\"")->type_name("STATE");
  cmd.add_option("--planner", o.planner, "graph (default), greedy or auto")->type_name("NAME");
  cmd.add_option("--variant", o.variant, "R -> P edges: seed or newest (default)")->type_name("NAME");
  cmd.add_option("--cost", o.cost, "Cost model: fixed, comm (default) or calibrated (default with --calibration)")
      ->type_name("MODEL");
  cmd.add_option("--weights", o.weights,
                 "Fixed model weights, e.g. all_reduce=4,all_to_all=1,all_gather=2,reduce_scatter=2,chunk=0")
      ->type_name("NAME=W,...");
  cmd.add_option("--calibration", o.calibration, "Calibration file for the calibrated model")->type_name("FILE");
  cmd.add_flag("--extrapolate", o.extrapolate,
               "Calibrated model: price group shapes the calibration never measured from the nearest measured one "
               "(a guess; refused otherwise)");
  cmd.add_option("--itemsize", o.itemsize, help.itemsize)->type_name("N");
  cmd.add_option("--dtype", o.dtype, help.dtype)->type_name("NAME");
  cmd.add_option("--devices-per-host", o.devices_per_host, "Comm model: devices per host (default 8)")
      ->type_name("N");
  cmd.add_option("--flatten", o.flatten,
                 "Axes that have a flattened group, by name or index, e.g. dp,tp (repeatable): merges their steps")
      ->type_name("AXES")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd.add_option("--coordinate", o.coordinate, "Rank whose local shapes are shown, e.g. 0,1,0 (default all zeros)")
      ->type_name("C");
  cmd.add_option("--state-budget", o.state_budget, "Most states the search may settle (default 4000000)")
      ->type_name("N");
}

void add_plan_command(CLI::App& root, int& exit_code) {
  auto o = std::make_shared<PlanOptions>();
  CLI::App* cmd = root.add_subcommand(
      "plan", "Plan a redistribution: the cheapest collectives from one placement state to another (a table, "
              "--compare for planner against planner, or JSON Lines with --batch)");
  cmd->add_flag("--batch", o->batch,
                "Read JSON Lines from standard input and answer one JSON line per input line (see the docs)");
  add_plan_request_options(*cmd, *o);
  cmd->add_flag("--compare", o->compare, "Plan with graph, greedy and auto and compare their costs");
  cmd->add_flag("--verify", o->verify,
                "Run the plan on real data on a simulated cluster and check every rank's result (exit 1 if wrong)");
  cmd->callback([o, cmd, &exit_code] { exit_code = run(*o, *cmd); });
}

}  // namespace meshloom::launcher
