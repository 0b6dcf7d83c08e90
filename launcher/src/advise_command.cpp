// `meshloom-launch advise`: which layout of a design's mesh is cheapest for its workload (the engine's layout
// advisor, meshloom/advisor/advisor.hpp), as a table for people or as JSON Lines with --json.
//
//   meshloom-launch advise --design D [--calibration C] [--model fixed|comm|calibrated] [--extrapolate]
//                          [--search orders|factorizations|both] [--top K] [--fix AXIS=SIZE]...
//                          [--within-host AXIS]... [--pp-divides-layers] [--json]
//   mpirun -np WORLD meshloom-launch advise --design D ... --measure [--iterations N] [--timeout S] [--jsonl FILE]
//
// The model defaults to calibrated when a calibration is given (--calibration, or the design's "calibration",
// relative to the design file), comm otherwise. --json writes one record per candidate ("advise_candidate", best
// first) and a final "advise_summary", each a JSON object on its own line, flushed (docs/05-launcher.md).
// --measure (mpi backend only) runs every shown candidate's workload for real and compares the measured ranking with
// the predicted one (run_measured below; docs/05-launcher.md, "Is the ranking right?").
#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "bench_format.hpp"
#include "bench_io.hpp"
#include "commands.hpp"
#include "live_backend.hpp"
#include "live_command.hpp"
#include "meshloom/advisor/advisor.hpp"
#include "meshloom/comm/mesh_groups.hpp"
#include "meshloom/mesh/device_mesh.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/workload/workload.hpp"
#include "mpi_command.hpp"
#include "run_exec.hpp"
#include "validate_report.hpp"
#include "meshloom/design/design.hpp"
#include "meshloom/error.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "plan_batch.hpp"
#include "plan_options.hpp"
#include "text_format.hpp"

namespace meshloom::launcher {

namespace {

using ordered_json = nlohmann::ordered_json;

struct AdviseOptions {
  std::string design, calibration, model, search, top;
  std::vector<std::string> fix, within_host;
  bool extrapolate = false;
  bool no_axis_corrections = false;
  bool pp_divides_layers = false;
  bool json = false;
  // --measure: run every shown candidate's workload for real under mpirun (run_measured below).
  bool measure = false;
  std::string iterations = "5", timeout = "60", jsonl, backend = "mpi";
};

// What the options ask for, checked.
struct AdviseSetup {
  Design design;
  CostModelKind model = CostModelKind::Comm;
  std::optional<Calibration> calibration;
  std::string calibration_file;  // as given or resolved, for the header line
  bool extrapolate = false;
  AdvisorOptions options;
};

std::size_t axis_named(const Design& design, const std::string& name, const std::string& what) {
  for (std::size_t a = 0; a < design.mesh.names.size(); ++a) {
    if (design.mesh.names[a] == name) return a;
  }
  raise(ErrorKind::ValueError, what + ": no mesh axis is named \"" + name + "\" (axes: " +
                                   join(design.mesh.names, {.separator = ", "}) + ")");
}

AdviseSetup parse_options(const AdviseOptions& o, const CLI::App& cmd) {
  auto given = [&cmd](const char* name) { return cmd.count(name) > 0; };
  if (!given("--design")) {
    raise(ErrorKind::ValueError, "--design is required (e.g. advise --design hsdp.meshloom.json)");
  }
  AdviseSetup s;
  s.design = load_design(o.design);
  if (!s.design.workload) {
    raise(ErrorKind::ValueError, "--design \"" + o.design + "\": the design has no workload (its \"workload\" field "
                                                            "says what one training step communicates)");
  }
  if (given("--search")) {
    const std::string what = "--search \"" + o.search + "\"";
    try {
      s.options.search = advisor_search_from_string(o.search);
    } catch (const Error&) {
      raise(ErrorKind::ValueError, what + ": unknown search (expected orders, factorizations or both)");
    }
  }
  s.options.top = 10;
  if (given("--top")) {
    const std::int64_t top = parse_int(o.top, "--top");
    if (top < 0) raise(ErrorKind::ValueError, "--top \"" + o.top + "\": must be >= 0 (0: every candidate)");
    s.options.top = static_cast<std::size_t>(top);
  }
  for (const std::string& f : o.fix) {
    const std::string what = "--fix \"" + f + "\"";
    const auto eq = f.find('=');
    if (eq == std::string::npos) raise(ErrorKind::ValueError, what + ": expected AXIS=SIZE (e.g. tp=8)");
    const std::string name = trim(std::string_view(f).substr(0, eq));
    const std::string value = trim(std::string_view(f).substr(eq + 1));
    (void)axis_named(s.design, name, what);
    const auto size = to_int(value);
    if (!size) raise(ErrorKind::ValueError, what + ": \"" + value + "\" is not an integer");
    if (*size < 1) raise(ErrorKind::ValueError, what + ": the size must be >= 1");
    if (!s.options.constraints.fixed.emplace(name, *size).second) {
      raise(ErrorKind::ValueError, what + ": " + name + " is fixed twice");
    }
  }
  for (const std::string& name : o.within_host) {
    (void)axis_named(s.design, name, "--within-host \"" + name + "\"");
    s.options.constraints.within_host.push_back(name);
  }
  s.options.constraints.pp_divides_layers = o.pp_divides_layers;
  if (o.pp_divides_layers && !s.design.workload->model) {
    raise(ErrorKind::ValueError, "--pp-divides-layers: the design's workload has no model (nothing says how many "
                                 "layers it has)");
  }

  // The cost model: calibrated when a calibration is given, comm otherwise, unless --model says.
  std::optional<std::filesystem::path> calibration;
  if (given("--calibration")) {
    calibration = o.calibration;
  } else if (s.design.calibration) {
    calibration = calibration_path(s.design, o.design);
  }
  s.model = calibration ? CostModelKind::Calibrated : CostModelKind::Comm;
  if (given("--model")) s.model = parse_cost_model(o.model, "--model \"" + o.model + "\"");
  if (s.model != CostModelKind::Calibrated) {
    const std::string other = "not the " + std::string(to_string(s.model)) + " model";
    if (given("--calibration")) raise(ErrorKind::ValueError, "--calibration goes with the calibrated model, " + other);
    if (o.extrapolate) raise(ErrorKind::ValueError, "--extrapolate goes with the calibrated model, " + other);
    return s;
  }
  if (!calibration) {
    raise(ErrorKind::ValueError, "--model calibrated needs a calibration: --calibration FILE, or a design that names "
                                 "one");
  }
  s.calibration_file = calibration->string();
  s.calibration = load_calibration(*calibration);
  if (s.calibration->groups.empty()) {
    raise(ErrorKind::ValueError, "calibration \"" + s.calibration_file + "\" has per-axis fits only (no curves by "
                                 "group shape): it prices its own layout, not others; run `meshloom-launch "
                                 "calibrate` again for curves");
  }
  if (o.no_axis_corrections) s.calibration->axis_corrections.clear();
  s.extrapolate = o.extrapolate;
  return s;
}

CostModelFactory make_factory(const AdviseSetup& s) {
  switch (s.model) {
    case CostModelKind::Fixed: {
      auto fixed = std::make_shared<const FixedCostModel>();
      return [fixed](const std::vector<std::int64_t>&, std::int64_t) -> std::shared_ptr<const CostModel> {
        return fixed;
      };
    }
    case CostModelKind::Comm:
      return [](const std::vector<std::int64_t>& shape, std::int64_t per_host) -> std::shared_ptr<const CostModel> {
        return std::make_shared<const CommCostModel>(shape, per_host);
      };
    case CostModelKind::Calibrated: break;
  }
  // Curves price every layout by its group shapes: one model for every candidate.
  auto calibrated = std::make_shared<const CalibratedCostModel>(*s.calibration, std::vector<std::string>{},
                                                                CalibratedOptions{.extrapolate = s.extrapolate});
  return [calibrated](const std::vector<std::int64_t>&, std::int64_t) -> std::shared_ptr<const CostModel> {
    return calibrated;
  };
}

std::string model_text(const AdviseSetup& s) {
  switch (s.model) {
    case CostModelKind::Fixed: return "fixed";
    case CostModelKind::Comm:
      return "comm (" + std::to_string(s.design.devices_per_host) + " devices per host)";
    case CostModelKind::Calibrated:
      return "calibrated (\"" + s.calibration_file + "\", " + std::to_string(s.calibration->groups.size()) + " curves" +
             (s.extrapolate ? ", extrapolating" : "") + ")";
  }
  return "";
}

// A cost in the table: as `plan` prints one (6 significant digits), but whole units from 100000 on, where that
// would switch to an exponent (a training step takes seconds: 2723198 us, not 2.7232e+06 us).
std::string cost_text(double cost, CostModelKind model) {
  if (!std::isfinite(cost)) return "cannot price";
  if (std::abs(cost) < 1e5) return format_plan_cost(cost, model);
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, std::round(cost), std::chars_format::fixed, 0);
  return std::string(buf, r.ptr) + (model == CostModelKind::Fixed ? "" : " us");
}

// "dp 2, pp 2": the axes whose groups span more than one host, with the hosts they span; "-" when none does.
std::string hosts_text(const CandidateCost& c) {
  std::vector<std::string> parts;
  for (const AxisCost& a : c.axes) {
    if (a.hosts > 1) parts.push_back(a.name + " " + std::to_string(a.hosts));
  }
  return parts.empty() ? "-" : join(parts, {.separator = ", "});
}

void print_table(std::ostream& out, const AdviseSetup& s, const AdvisorResult& r) {
  const Design& d = s.design;
  std::int64_t ranks = 1;
  for (const std::int64_t size : d.mesh.shape) ranks *= size;
  out << "advise \"" << d.name << "\": " << ranks << " ranks, hosts of " << d.devices_per_host << ", search "
      << to_string(s.options.search) << ", model " << model_text(s) << "\n";
  if (s.model == CostModelKind::Calibrated && !s.calibration->rank_hosts.empty()) {
    // The calibrated model prices groups on the calibrated job's hosts; "hosts crossed" and the reason use the
    // design's. Say so when the two place ranks differently.
    std::map<std::int64_t, std::int64_t> per_host;
    for (const std::int64_t h : s.calibration->rank_hosts) ++per_host[h];
    std::int64_t most = 0;
    for (const auto& [host, n] : per_host) most = std::max(most, n);
    if (most != d.devices_per_host) {
      out << "note: the calibration was measured with " << most << " ranks per host, the design has "
          << d.devices_per_host << ": prices follow the calibrated job's hosts, \"hosts crossed\" the design's\n";
    }
  }
  if (!r.host_rule_note.empty()) out << "note: " << r.host_rule_note << "\n";
  const std::size_t priced = r.candidates - r.rejected - r.unpriced;
  out << r.candidates << " candidates, " << r.rejected << " rejected by the constraints, " << priced << " priced"
      << (r.unpriced > 0 ? ", " + std::to_string(r.unpriced) + " cannot be priced" : std::string()) << " ("
      << r.plans_computed << " plans computed, " << r.plans_reused << " reused)\n\n";
  // One cost column per axis, by name in the design's order: the same column whatever the candidate's order.
  std::vector<std::string> header{"rank", "layout", "cost/step"};
  for (const std::string& name : d.mesh.names) header.push_back(name);
  header.emplace_back("hosts crossed");
  std::vector<std::vector<std::string>> rows{header};
  std::vector<std::string> unpriced;
  for (std::size_t i = 0; i < r.ranked.size(); ++i) {
    const CandidateCost& c = r.ranked[i];
    std::vector<std::string> row{std::to_string(i + 1), layout_text(c.mesh), cost_text(c.cost, s.model)};
    for (const std::string& name : d.mesh.names) {
      for (const AxisCost& a : c.axes) {
        if (a.name == name) row.push_back(std::isfinite(c.cost) ? cost_text(a.cost, s.model) : "-");
      }
    }
    row.push_back(hosts_text(c));
    rows.push_back(std::move(row));
    if (!c.unpriced.empty()) unpriced.push_back(layout_text(c.mesh) + ": " + c.unpriced);
  }
  std::vector<bool> right{true, false, true};
  right.resize(header.size(), true);
  right.back() = false;
  print_plan_table(out, rows, right);
  // Every candidate not rejected is in the ranking (the unpriced last): those past --top are the rest of them.
  const std::size_t ranked = r.candidates - r.rejected;
  if (r.ranked.size() < ranked) out << "(" << ranked - r.ranked.size() << " more; --top 0 shows every candidate)\n";
  for (const std::string& u : unpriced) out << "cannot price " << u << "\n";
  out << "\nreason: " << r.reason << "\n";
  out << "ties: " << (r.tied_with_best == 1 ? std::string("none, the best layout is the only one at its cost")
                                             : std::to_string(r.tied_with_best) + " layouts share the best cost")
      << "\n";
}

ordered_json number(double v) { return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr); }

void print_json(std::ostream& out, const AdviseSetup& s, const AdvisorResult& r) {
  const std::string unit = s.model == CostModelKind::Fixed ? "fixed" : "us";
  for (std::size_t i = 0; i < r.ranked.size(); ++i) {
    const CandidateCost& c = r.ranked[i];
    ordered_json record;
    record["type"] = "advise_candidate";
    record["rank"] = i + 1;
    ordered_json mesh;
    mesh["shape"] = c.mesh.shape;
    mesh["names"] = c.mesh.names;
    ordered_json flattened = ordered_json::array();
    for (const FlattenSpec& f : c.mesh.flattened) flattened.push_back({{"name", f.name}, {"axes", f.axes}});
    mesh["flattened"] = std::move(flattened);
    record["mesh"] = std::move(mesh);
    record["layout"] = layout_text(c.mesh);
    record["cost"] = number(c.cost);
    record["unit"] = unit;
    ordered_json axes = ordered_json::array();
    for (const AxisCost& a : c.axes) {
      ordered_json axis;
      axis["name"] = a.name;
      axis["size"] = a.size;
      axis["hosts"] = a.hosts;
      // An unpriced candidate has no axis costs (the table prints "-"), not costs of 0.
      axis["cost"] = std::isfinite(c.cost) ? number(a.cost) : ordered_json(nullptr);
      axis["by_collective"] = ordered_json::object();
      for (const auto& [collective, cost] : a.by_collective) axis["by_collective"][collective] = number(cost);
      axis["counts"] = ordered_json::object();
      for (const auto& [collective, count] : a.counts) axis["counts"][collective] = count;
      axes.push_back(std::move(axis));
    }
    record["axes"] = std::move(axes);
    record["by_category"] = ordered_json::object();
    for (const auto& [category, cost] : c.by_category) record["by_category"][category] = number(cost);
    if (!c.unpriced.empty()) record["unpriced"] = c.unpriced;
    out << record.dump() << std::endl;
  }
  ordered_json summary;
  summary["type"] = "advise_summary";
  summary["design"] = s.design.name;
  summary["candidates"] = r.candidates;
  summary["rejected"] = r.rejected;
  summary["priced"] = r.candidates - r.rejected - r.unpriced;
  summary["unpriced"] = r.unpriced;
  summary["shown"] = r.ranked.size();
  summary["tied_with_best"] = r.tied_with_best;
  summary["plans_computed"] = r.plans_computed;
  summary["plans_reused"] = r.plans_reused;
  summary["reason"] = r.reason;
  summary["host_rule_note"] = r.host_rule_note;
  summary["model"] = to_string(s.model);
  summary["unit"] = unit;
  summary["search"] = to_string(s.options.search);
  out << summary.dump() << std::endl;
}

// ---- --measure ---------------------------------------------------------------------------------------------
//
// Every rank ranks the candidates (the same ranking: the advisor is deterministic), then plans every Redistribution
// item of every shown candidate with the candidate's model, as the advisor does (the graph planner, the candidate's
// flattened groups), and runs the plan for real (execute_plan: verified, every step's collective timed single-shot).
// An item's measured time is the sum of its steps' collective medians times its count; a candidate's the sum over its
// items. Two candidates tie when their measured times differ by at most max(kAdviseTieFloor, 2 standard errors).

inline constexpr double kAdviseTieFloor = 0.10;

struct MeasuredItem {
  WorkItem item;
  PlanRequest request;
  Plan plan;
  double predicted = 0;  // per step (the plan's cost times the item's count)
};

struct MeasuredCandidate {
  std::size_t index = 0;  // in AdvisorResult::ranked
  std::vector<std::string> names;
  std::vector<MeasuredItem> items;
};

struct MeasurePrepared {
  AdviseSetup setup;
  AdvisorResult result;
  RunSettings settings;
  double timeout_s = kDefaultTimeoutS;
  std::vector<MeasuredCandidate> candidates;
};

MeasurePrepared prepare_measured(const AdviseOptions& o, const CLI::App& cmd, std::int64_t world_size, int rank,
                                 int ranks_on_host) {
  MeasurePrepared p;
  check_backend_name(o.backend);
  if (o.backend != "mpi") {
    raise(ErrorKind::ValueError, "--backend \"" + o.backend + "\": advise --measure runs on the mpi backend only");
  }
  if (o.json) raise(ErrorKind::ValueError, "--json cannot be combined with --measure (use --jsonl FILE)");
  p.settings.iterations = parse_int(o.iterations, "--iterations");
  if (p.settings.iterations < 3 || p.settings.iterations > 100000) {
    raise(ErrorKind::ValueError, "--iterations \"" + o.iterations + "\": must be in [3, 100000] (ties need a spread)");
  }
  if (cmd.count("--timeout") > 0) p.timeout_s = parse_timeout_seconds(o.timeout);
  p.setup = parse_options(o, cmd);
  if (p.setup.calibration) {
    const std::string source = "calibration \"" + p.setup.calibration_file + "\"";
    check_calibration_fits_run(*p.setup.calibration, source, o.backend);
    check_calibration_transport(*p.setup.calibration, source);
    // The candidates run on this job's ranks: axis corrections need them bound as calibrate's were.
    check_axis_binding(*p.setup.calibration, source, rank);
  }
  const Design& d = p.setup.design;
  if (d.world != world_size) {
    raise(ErrorKind::ValueError, "advise --measure: the design \"" + d.name + "\" is for a world of " +
                                     std::to_string(d.world) + " ranks, but mpirun started " +
                                     std::to_string(world_size) + " (run it with mpirun -np " +
                                     std::to_string(d.world) + ")");
  }
  const CostModelFactory factory = make_factory(p.setup);
  p.result = advise(d, factory, p.setup.options);
  for (std::size_t i = 0; i < p.result.ranked.size(); ++i) {
    const CandidateCost& c = p.result.ranked[i];
    const std::string layout = layout_text(c.mesh);
    if (!std::isfinite(c.cost)) {
      raise(ErrorKind::ValueError, "advise --measure: " + layout + " cannot be priced (" + c.unpriced +
                                       "), so it cannot be compared with a measurement");
    }
    MeasuredCandidate m;
    m.index = i;
    m.names = c.mesh.names;
    const std::shared_ptr<const CostModel> model = factory(c.mesh.shape, d.devices_per_host);
    std::vector<std::vector<std::size_t>> flattened;  // as the advisor builds them
    for (const FlattenSpec& f : c.mesh.flattened) {
      std::vector<std::size_t> group;
      for (const std::string& name : f.axes) {
        group.push_back(static_cast<std::size_t>(std::find(c.mesh.names.begin(), c.mesh.names.end(), name) -
                                                 c.mesh.names.begin()));
      }
      std::sort(group.begin(), group.end());
      if (group.size() >= 2) flattened.push_back(std::move(group));
    }
    for (const WorkItem& item : expand_workload(with_layout(d, c.mesh))) {
      const std::string what = "advise --measure: " + layout + ", item \"" + item.name + "\"";
      if (item.kind == WorkItemKind::Send) {
        raise(ErrorKind::ValueError, what + " (" + item.category + "): pipeline sends cannot be measured yet");
      }
      if (itemsize(item.dtype) != 8) {
        raise(ErrorKind::ValueError, what + " is " + std::string(to_string(item.dtype)) +
                                         ": --measure moves 8-byte elements (float64) only, so it would measure "
                                         "other bytes than the model prices");
      }
      MeasuredItem mi;
      mi.item = item;
      mi.request.mesh_shape = c.mesh.shape;
      mi.request.tensor_shape = item.shape;
      mi.request.src = item.src;
      mi.request.dst = item.dst;
      mi.request.planner = PlannerKind::Graph;
      mi.request.variant = PartialVariant::Newest;
      mi.request.itemsize = itemsize(item.dtype);
      mi.request.flattened = flattened;
      check_fits_in_memory(mi.request, what, ranks_on_host);
      mi.plan = plan_redistribution(mi.request, *model);
      mi.predicted = mi.plan.cost * static_cast<double>(item.count);
      m.items.push_back(std::move(mi));
    }
    p.candidates.push_back(std::move(m));
  }
  return p;
}

struct CandidateMeasured {
  double predicted = 0, measured_us = 0, se_us = 0;
  bool verified = true;
  ordered_json items = ordered_json::array();
};

bool measured_tie_with_floor(const CandidateMeasured& a, const CandidateMeasured& b) {
  const double diff = std::abs(a.measured_us - b.measured_us);
  const double floor = kAdviseTieFloor * std::min(a.measured_us, b.measured_us);
  return diff <= std::max(floor, 2 * std::sqrt(a.se_us * a.se_us + b.se_us * b.se_us));
}

std::string us_text(double us) {
  if (us >= 1e5) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, std::round(us), std::chars_format::fixed, 0);
    return std::string(buf, r.ptr) + " us";
  }
  return format_time_us(us) + " us";
}

int run_measured(const AdviseOptions& o, const CLI::App& cmd) {
  std::optional<MeasurePrepared> prepared;
  LiveCommand live;
  if (cmd.count("--jsonl") > 0) live.jsonl = o.jsonl;
  live.backend = o.backend;
  live.inputs = {{"--design", o.design}, {"--calibration", o.calibration}};
  live.prepare = [&](mpi::MpiCommunicator& world, int ranks_on_host) {
    prepared = prepare_measured(o, cmd, world.size(), world.rank(), ranks_on_host);
    return prepared->timeout_s;
  };
  live.run = [&](mpi::MpiCommunicator& world, LiveBackend& backend, JsonlStream& records) {
    const bool lead = world.rank() == 0;
    JsonlSink& sink = records.sink();
    MeasurePrepared& p = *prepared;
    const AdviseSetup& s = p.setup;
    p.settings.hosts = job_hosts(world);
    const std::vector<std::string> cpus = job_cpus(world, p.settings.hosts).cpus;
    if (lead) {
      std::ostringstream table;
      print_table(table, s, p.result);
      std::cout << table.str() << "\nmeasuring " << p.candidates.size() << " candidates on " << world.size() << " "
                << backend.name() << " ranks (" << backend.describe() << "), " << p.settings.iterations
                << " iterations per step (collective: single_shot, p50 of the mean over the ranks)\n"
                << crowding_line(cpus, p.settings.hosts) << std::flush;
    }
    int status = 0;
    std::vector<CandidateMeasured> measured;
    for (const MeasuredCandidate& mc : p.candidates) {
      const CandidateCost& c = p.result.ranked[mc.index];
      DeviceMesh mesh = DeviceMesh::init(c.mesh.shape, mc.names, world.size());
      for (const FlattenSpec& f : c.mesh.flattened) {
        if (f.axes.size() > 1) (void)mesh.slice(f.axes).flatten();
      }
      // Steps on several axes run on the flattened group named by joining their names (step_group): the planner
      // merges only on the candidate's flattened groups, which were just built.
      const comm::MeshGroups groups = backend.groups(mesh, LiveBackend::Buffers::Host);
      CandidateMeasured cm;
      double var = 0;
      for (const MeasuredItem& mi : mc.items) {
        const RankBuffers buffers = rank_buffers(mi.request, world.rank());
        const RunOutcome outcome = execute_plan(world, groups, mc.names, mi.request, mi.plan, p.settings, buffers);
        const double count = static_cast<double>(mi.item.count);
        double item_var = 0;
        for (std::size_t k = 0; k < outcome.steps.size(); ++k) {
          if (!communicates(mi.plan.steps[k].collective)) continue;
          const double se = median_se(to_micros(outcome.steps[k].collective_iteration_s));
          item_var += se * se;
        }
        const double once_us = outcome.collective_total_s * 1e6;
        cm.predicted += mi.predicted;
        cm.measured_us += once_us * count;
        var += item_var * count * count;
        if (!outcome.verified) {
          cm.verified = false;
          status = 1;
          if (lead) std::cerr << "error: " << layout_text(c.mesh) << ", item \"" << mi.item.name
                              << "\": the plan did not verify: " << outcome.mismatch << "\n";
        }
        ordered_json item{{"name", mi.item.name},
                          {"category", mi.item.category},
                          {"count", mi.item.count},
                          {"trace", trace(mi.plan)},
                          {"steps", mi.plan.steps.size()},
                          {"predicted", mi.predicted},
                          {"measured_us", once_us * count},
                          {"once_us", once_us},
                          {"verified", outcome.verified},
                          {"elements_checked", outcome.elements_checked}};
        if (!outcome.verified) item["mismatch"] = outcome.mismatch;
        cm.items.push_back(std::move(item));
      }
      cm.se_us = std::sqrt(var);
      if (lead) {
        ordered_json record{{"type", "advise_measured"},
                            {"rank", mc.index + 1},
                            {"layout", layout_text(c.mesh)},
                            {"predicted", number(cm.predicted)},
                            {"measured_us", cm.measured_us},
                            {"se_us", cm.se_us},
                            {"verified", cm.verified},
                            {"items", cm.items}};
        sink.write(record.dump());
      }
      measured.push_back(std::move(cm));
    }
    // The verdict: the rank correlation, and whether the predicted best is the measured best or ties with it.
    std::vector<double> predicted, times;
    std::size_t best = 0;
    for (std::size_t i = 0; i < measured.size(); ++i) {
      predicted.push_back(measured[i].predicted);
      times.push_back(measured[i].measured_us);
      if (measured[i].measured_us < measured[best].measured_us) best = i;
    }
    const std::optional<double> rho = spearman(predicted, times);
    const bool agrees = !measured.empty() && (best == 0 || measured_tie_with_floor(measured[0], measured[best]));
    if (lead) {
      const std::string best_predicted = layout_text(p.result.ranked[0].mesh);
      const std::string best_measured = layout_text(p.result.ranked[p.candidates[best].index].mesh);
      sink.write(ordered_json{{"type", "advise_verdict"},
                              {"spearman", rho ? ordered_json(*rho) : ordered_json(nullptr)},
                              {"best_predicted", best_predicted},
                              {"best_measured", best_measured},
                              {"agrees", agrees},
                              {"candidates", measured.size()},
                              {"tie_floor", kAdviseTieFloor},
                              {"verified", status == 0}}
                     .dump());
      std::vector<std::vector<std::string>> rows{
          {"rank", "layout", "predicted/step", "measured/step", "se", "measured/predicted", "verified"}};
      for (std::size_t i = 0; i < measured.size(); ++i) {
        const CandidateMeasured& m = measured[i];
        char ratio[32];
        std::snprintf(ratio, sizeof ratio, "%.2f", m.predicted > 0 ? m.measured_us / m.predicted : 0.0);
        rows.push_back({std::to_string(p.candidates[i].index + 1), layout_text(p.result.ranked[p.candidates[i].index].mesh),
                        cost_text(m.predicted, s.model), us_text(m.measured_us), us_text(m.se_us),
                        s.model == CostModelKind::Fixed ? "-" : ratio, m.verified ? "yes" : "NO"});
      }
      std::ostringstream out;
      out << "\n";
      print_plan_table(out, rows, {true, false, true, true, true, true, false});
      char corr[32] = "-";
      if (rho) std::snprintf(corr, sizeof corr, "%.2f", *rho);
      out << "\nmeasured best: " << best_measured;
      if (best == 0) {
        out << ", the predicted best";
      } else {
        const double slower = measured[best].measured_us > 0 ? measured[0].measured_us / measured[best].measured_us - 1 : 0;
        char pct[32];
        std::snprintf(pct, sizeof pct, "%.1f%%", 100 * slower);
        out << "; the predicted best, " << best_predicted << ", is " << pct << " slower"
            << (agrees ? " (a tie: within max(10%, 2 standard errors))" : " (beyond the noise)");
      }
      out << "\nrank correlation (Spearman) of predicted and measured: " << corr << " over " << measured.size()
          << " candidates\nverdict: the advisor's ranking " << (agrees ? "agrees" : "DISAGREES")
          << " with the measured one" << (status == 0 ? "" : "; some plans did not verify") << "\n";
      std::cout << out.str() << std::flush;
    }
    return status;
  };
  return run_live_command(live);
}

int run(const AdviseOptions& o, const CLI::App& cmd) {
  if (o.measure) return run_measured(o, cmd);
  return status_or_error(std::cerr, [&]() -> int {
    for (const char* flag : {"--iterations", "--timeout", "--jsonl", "--backend"}) {
      if (cmd.count(flag) > 0) raise(ErrorKind::ValueError, std::string(flag) + " goes with --measure");
    }
    const AdviseSetup s = parse_options(o, cmd);
    const AdvisorResult result = advise(s.design, make_factory(s), s.options);
    // Cheapest first: when the first cannot be priced, none can, and there is no ranking to give.
    if (!result.ranked.empty() && !std::isfinite(result.ranked.front().cost)) {
      const CandidateCost& first = result.ranked.front();
      raise(ErrorKind::ValueError, "no layout can be priced: " + layout_text(first.mesh) + ": " +
                                       (first.unpriced.empty() ? std::string("its cost is not finite") : first.unpriced) +
                                       (s.model == CostModelKind::Calibrated
                                            ? "; calibrate those group shapes, or --extrapolate to price them from the "
                                              "nearest measured ones"
                                            : ""));
    }
    if (o.json) {
      print_json(std::cout, s, result);
      return 0;
    }
    // Print only a complete answer: an error halfway leaves stdout empty.
    std::ostringstream buffer;
    print_table(buffer, s, result);
    std::cout << buffer.str();
    return 0;
  });
}

}  // namespace

void add_advise_command(CLI::App& root, int& exit_code) {
  auto o = std::make_shared<AdviseOptions>();
  CLI::App* cmd = root.add_subcommand(
      "advise", "Rank the layouts of a design's mesh (axis orders, sizes or both) by what its workload costs per "
                "training step, and say why the best one wins");
  cmd->add_option("--design", o->design, "The *.meshloom.json design, with a workload")->type_name("FILE");
  cmd->add_option("--calibration", o->calibration,
                  "Calibration file with curves by group shape (default: the design's calibration)")
      ->type_name("FILE");
  cmd->add_option("--model", o->model,
                  "Cost model: fixed, comm or calibrated (default: calibrated with a calibration, comm otherwise)")
      ->type_name("MODEL");
  cmd->add_flag("--extrapolate", o->extrapolate,
                "Calibrated model: price group shapes the calibration never measured from the nearest measured one");
  cmd->add_flag("--no-axis-corrections", o->no_axis_corrections,
                "Calibrated model: price the calibrated mesh's axes by their group shape's curve alone, without the "
                "calibration's axis corrections (--measure needs ranks bound as calibrate's were otherwise)");
  cmd->add_option("--search", o->search,
                  "orders (every order of the axes, the default), factorizations (every size per axis) or both")
      ->type_name("SEARCH");
  cmd->add_option("--top", o->top, "Candidates shown, best first (default 10; 0: every one)")->type_name("K");
  cmd->add_option("--fix", o->fix, "An axis that keeps a size, e.g. tp=8 (repeatable)")
      ->type_name("AXIS=SIZE")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--within-host", o->within_host, "An axis whose groups must each stay on one host (repeatable)")
      ->type_name("AXIS")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_flag("--pp-divides-layers", o->pp_divides_layers,
                "Only layouts whose pipeline axis size divides the model's layers");
  cmd->add_flag("--json", o->json,
                "JSON Lines: one advise_candidate record per candidate, then an advise_summary (see the docs)");
  cmd->add_flag("--measure", o->measure,
                "Under mpirun (world = the design's): run every shown candidate's workload for real, verified, and "
                "compare the measured ranking with the predicted one");
  cmd->add_option("--iterations", o->iterations, "--measure: timed runs of every step (default 5; p50)")
      ->type_name("N");
  cmd->add_option("--timeout", o->timeout, "--measure: per-operation timeout in seconds (default 60; 0 = none)")
      ->type_name("S");
  cmd->add_option("--backend", o->backend, "--measure: where the collectives run (mpi only)")->type_name("NAME");
  cmd->add_option("--jsonl", o->jsonl,
                  "--measure: write advise_measured records and an advise_verdict to FILE as the run goes")
      ->type_name("FILE");
  cmd->callback([o, cmd, &exit_code] { exit_code = run(*o, *cmd); });
}

}  // namespace meshloom::launcher
