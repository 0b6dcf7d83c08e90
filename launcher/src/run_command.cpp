// `meshloom-launch run`: executes a planned redistribution for real under mpirun (Open MPI backend), verifies every
// element of every rank, and reports the measured time of every step beside the cost models' predictions.
//
//   mpirun -np 8 meshloom-launch run --mesh 2,2,2 --tensor 64,64,64 --src "S(0)[0]S(0)[1]R" --dst "RS(0)R"
//
// The request options are plan's (plan_options.hpp); --dtype picks what travels (float64, default, or int64).
// With --compare every distinct plan that graph, greedy and auto propose under the fixed, comm (and calibrated,
// given --calibration) models runs, and rank 0 says which was fastest and which models predicted it.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_format.hpp"
#include "bench_io.hpp"
#include "live_backend.hpp"
#include "live_command.hpp"
#include "commands.hpp"
#include "meshloom/backends/mpi_communicator.hpp"
#include "meshloom/comm/mesh_groups.hpp"
#include "meshloom/error.hpp"
#include "meshloom/mesh/device_mesh.hpp"
#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/planner.hpp"
#include "mpi_command.hpp"
#include "plan_options.hpp"
#include "run_exec.hpp"
#include "slurm_job.hpp"
#include "test_fault.hpp"
#include "text_format.hpp"

namespace meshloom::launcher {

namespace {

struct RunCliOptions {
  PlanOptions plan;
  std::string timeout = "60";
  std::string iterations = "5";
  bool compare = false;
  bool no_axis_corrections = false;
  std::string jsonl;
  std::string backend = "mpi";
};

// One plan to run, and who proposed it.
struct Candidate {
  Plan plan;
  std::vector<std::string> proposed_by;  // "graph/fixed", ...
};

struct Prepared {
  HumanSetup human;
  std::vector<std::string> cpus;  // every rank's CPUs (job_cpus), for the config record
  RunSettings settings;
  double timeout_s = kDefaultTimeoutS;
  RankBuffers buffers;  // this rank's source and expected target, built before the run
  std::vector<CostModelKind> models;  // the models predictions are shown for
  std::vector<std::unique_ptr<CostModel>> model_objects;
  std::vector<Candidate> candidates;
  std::vector<std::string> refused;  // "greedy/fixed: ValueError: ..." (compare)
  std::vector<std::string> names;    // mesh axis names as the groups are named
  std::optional<DeviceMesh> mesh;
};

std::string us_text(double seconds) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(1);
  s << seconds * 1e6 << " us";
  return s.str();
}

Prepared prepare(const RunCliOptions& o, const CLI::App& cmd, std::int64_t world_size, int rank,
                 int ranks_on_host) {
  Prepared p;
  if (o.compare && cmd.count("--planner") > 0) {
    raise(ErrorKind::ValueError, "--compare runs every planner's plan; --planner cannot be combined with it");
  }
  p.human = parse_plan_options(o.plan, cmd);
  PlanSetup& s = p.human.setup;
  if (p.human.dtype) {
    const std::string& d = *p.human.dtype;
    if (d == "float64" || d == "double") {
      p.settings.dtype = DType::Float64;
    } else if (d == "int64" || d == "long") {
      p.settings.dtype = DType::Int64;
    } else {
      raise(ErrorKind::ValueError, "--dtype \"" + d + "\": run moves float64 or int64 data (exact values)");
    }
  } else if (cmd.count("--itemsize") == 0) {
    s.request.itemsize = 8;  // what travels
  }
  if (cmd.count("--timeout") > 0) p.timeout_s = parse_timeout_seconds(o.timeout);
  p.settings.iterations = parse_int(o.iterations, "--iterations");
  if (p.settings.iterations < 1 || p.settings.iterations > 100000) {
    raise(ErrorKind::ValueError, "--iterations \"" + o.iterations + "\": must be in [1, 100000]");
  }
  p.settings.fault = test_fault_from_env();
  check_backend_name(o.backend);
  if (s.calibration) {
    const std::string source = "--calibration \"" + o.plan.calibration + "\"";
    check_calibration_fits_run(*s.calibration, source, o.backend);
    check_calibration_transport(*s.calibration, source);
    // Axis corrections price the calibrated mesh's own axes as its bound ranks ran them.
    if (o.no_axis_corrections) {
      s.calibration->axis_corrections.clear();
    } else if (same_layout(s.request.mesh_shape, s.calibration->mesh_shape)) {
      check_axis_binding(*s.calibration, source, rank);
    }
  }
  // The mesh against the world, before anything else runs.
  const auto& shape = s.request.mesh_shape;
  std::int64_t needed = 1;
  for (const auto n : shape) {
    if (n < 1) raise(ErrorKind::ValueError, "--mesh \"" + o.plan.mesh + "\": every size must be >= 1");
    if (__builtin_mul_overflow(needed, n, &needed)) needed = std::numeric_limits<std::int64_t>::max();
  }
  if (needed > world_size) {
    raise(ErrorKind::ValueError, "the mesh (" + o.plan.mesh + ") needs " + std::to_string(needed) +
                                     " ranks but the MPI world has " + std::to_string(world_size) +
                                     "; start it with mpirun -np " + std::to_string(needed) + " or more");
  }
  // Models: the chosen one first, then the others the comparison shows.
  p.models = {s.cost_model};
  for (const auto kind : {CostModelKind::Fixed, CostModelKind::Comm, CostModelKind::Calibrated}) {
    if (kind == CostModelKind::Calibrated && !s.calibration) continue;
    if (kind != s.cost_model) p.models.push_back(kind);
  }
  for (const auto kind : p.models) {
    PlanSetup m = s;
    m.cost_model = kind;
    p.model_objects.push_back(make_cost_model(m));
  }
  // Plans.
  if (!o.compare) {
    p.candidates.push_back({plan_naming_gaps(s.request, *p.model_objects.front()), {}});
  } else {
    std::map<std::string, std::size_t> by_trace;
    for (std::size_t m = 0; m < p.models.size(); ++m) {
      for (const auto kind : {PlannerKind::Graph, PlannerKind::Greedy, PlannerKind::Auto}) {
        PlanRequest r = s.request;
        r.planner = kind;
        const std::string who = std::string(to_string(kind)) + "/" + std::string(to_string(p.models[m]));
        try {
          Plan plan = plan_naming_gaps(r, *p.model_objects[m]);
          const std::string key = trace(plan);
          const auto it = by_trace.find(key);
          if (it == by_trace.end()) {
            by_trace.emplace(key, p.candidates.size());
            p.candidates.push_back({std::move(plan), {who}});
          } else {
            p.candidates[it->second].proposed_by.push_back(who);
          }
        } catch (const Error& e) {
          p.refused.push_back(who + ": " + e.text());
        }
      }
    }
    if (p.candidates.empty()) raise(ErrorKind::ValueError, "no planner finds a plan under any model");
  }
  // The mesh, named as its groups will be, and its flattened groups.
  if (s.names.empty()) {
    for (std::size_t a = 0; a < shape.size(); ++a) p.names.push_back(std::to_string(a));
  } else {
    p.names = s.names;
  }
  DeviceMesh mesh = DeviceMesh::init(shape, p.names, world_size);
  for (const auto& f : s.request.flattened) {
    std::vector<std::string> axes;
    for (const auto a : f) {
      if (a >= shape.size()) raise(ErrorKind::ValueError, "--flatten: axis " + std::to_string(a) + " is not on the mesh");
      axes.push_back(p.names[a]);
    }
    if (axes.size() > 1) (void)mesh.slice(axes).flatten();
  }
  p.mesh = mesh;
  // This rank's buffers: a source or target that cannot be built is a usage error, agreed before the run.
  check_fits_in_memory(s.request, "run", ranks_on_host);
  p.buffers = rank_buffers(s.request, rank);
  return p;
}

std::string shape_text(const std::vector<std::int64_t>& v) { return "[" + join(v, {.separator = ", "}) + "]"; }

// What every model predicts for every step of a plan, and in total.
struct PlanCosts {
  std::vector<std::vector<double>> steps;  // [model][step]
  std::vector<double> totals;              // [model]
};

PlanCosts price_plan(const Prepared& p, const Plan& plan) {
  PlanCosts c;
  for (const auto& model : p.model_objects) {
    c.steps.push_back(price_plan_steps(p.human.setup.request, plan, *model));
    double total = 0;
    for (const auto v : c.steps.back()) total += v;
    c.totals.push_back(total);
  }
  return c;
}

nlohmann::ordered_json per_model(const Prepared& p, const std::function<double(std::size_t)>& value) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (std::size_t m = 0; m < p.models.size(); ++m) j[std::string(to_string(p.models[m]))] = value(m);
  return j;
}

// ---- JSON Lines records of a run: config, then per plan: plan, step..., summary; compare; or error -----------

nlohmann::ordered_json config_json(const Prepared& p, const comm::Communicator& world, const LiveBackend& backend) {
  const PlanSetup& s = p.human.setup;
  std::vector<std::string> models;
  for (const auto kind : p.models) models.emplace_back(to_string(kind));
  nlohmann::ordered_json config = {
      {"type", "config"},
      {"command", "run"},
      {"backend", std::string(backend.name())},
      {"world", world.size()},
      {"mesh", {{"shape", s.request.mesh_shape}, {"names", p.names}}},
      {"tensor_shape", s.request.tensor_shape},
      {"src", to_string(s.request.src)},
      {"dst", to_string(s.request.dst)},
      {"dtype", p.settings.dtype == DType::Float64 ? "float64" : "int64"},
      {"itemsize", s.request.itemsize},
      {"models", models},
      {"axis_corrections",  // how many apply: on the calibrated mesh, unless --no-axis-corrections
       s.calibration && same_layout(s.calibration->mesh_shape, s.request.mesh_shape)
           ? s.calibration->axis_corrections.size()
           : 0},
      {"plans", p.candidates.size()},
      {"iterations", p.settings.iterations},
      {"timeout_s", p.timeout_s},
      {"versions", {{"meshloom", MESHLOOM_VERSION}, {std::string(backend.name()), backend.describe()}}},
      {"host", host_name()},
      {"hosts", p.settings.hosts},
      {"cpus", p.cpus},
      {"transport", job_transport()}};
  add_slurm(config, slurm_job());
  return config;
}

nlohmann::ordered_json plan_json(const Prepared& p, const Candidate& c, std::size_t index, const PlanCosts& costs) {
  return {{"type", "plan"},          {"plan", index},
          {"trace", trace(c.plan)},  {"proposed_by", c.proposed_by},
          {"steps", c.plan.steps.size()},
          {"predicted", per_model(p, [&](std::size_t m) { return costs.totals[m]; })}};
}

nlohmann::ordered_json step_json(const Prepared& p, const Candidate& c, std::size_t index, const PlanCosts& costs,
                         std::size_t i, const StepTiming& t) {
  const PlanStep& step = c.plan.steps[i];
  return {{"type", "step"},
          {"plan", index},
          {"step", i},
          {"axes", step.axes},
          {"collective", to_string(step.collective)},
          {"merged", step.merged},
          {"from", to_string(step.from)},
          {"to", to_string(step.to)},
          {"logical_shape", step.logical_shape},
          {"bytes", step.bytes},
          {"predicted", per_model(p, [&](std::size_t m) { return costs.steps[m][i]; })},
          {"measured_us", t.collective_median_s * 1e6},
          {"iterations_us", to_micros(t.collective_iteration_s)},
          {"timing", "single_shot"},
          {"stats", stats_json(t.collective_stats)},
          {"step_us", t.median_s * 1e6},
          {"step_iterations_us", to_micros(t.iteration_s)}};
}

nlohmann::ordered_json summary_json(const Prepared& p, const Candidate& c, std::size_t index, const PlanCosts& costs,
                            const RunOutcome& outcome) {
  nlohmann::ordered_json j = {{"type", "summary"},
                      {"plan", index},
                      {"ok", outcome.verified},
                      {"trace", trace(c.plan)},
                      {"proposed_by", c.proposed_by},
                      {"verified", outcome.verified},
                      {"measured_us", outcome.collective_total_s * 1e6},
                      {"step_us", outcome.total_s * 1e6},
                      {"predicted", per_model(p, [&](std::size_t m) { return costs.totals[m]; })},
                      {"elements_checked", outcome.elements_checked}};
  if (!outcome.verified) j["mismatch"] = outcome.mismatch;
  return j;
}

// The plan's table: every step with the models' predictions, the collective's measured time (what the models
// predict) and the whole step's; then the trace and the verification.
void print_plan(std::ostream& out, const Prepared& p, const Candidate& c, const PlanCosts& costs,
                const RunOutcome& outcome) {
  const PlanSetup& s = p.human.setup;
  std::vector<std::string> header = {"step", "axis", "collective", "from -> to", "logical shape", "bytes"};
  for (const auto kind : p.models) header.push_back("predicted " + std::string(to_string(kind)));
  header.emplace_back("measured");
  header.emplace_back("whole step");
  std::vector<std::vector<std::string>> rows = {header};
  std::vector<bool> right = {true, false, false, false, false, true};
  right.resize(header.size(), true);
  for (std::size_t i = 0; i < c.plan.steps.size(); ++i) {
    const PlanStep& step = c.plan.steps[i];
    std::vector<std::string> row = {std::to_string(i), plan_axes_label(step.axes, s.names),
                                    std::string(to_string(step.collective)) + (step.merged ? " (merged)" : ""),
                                    to_string(step.from) + " -> " + to_string(step.to), shape_text(step.logical_shape),
                                    std::to_string(step.bytes)};
    for (std::size_t m = 0; m < p.models.size(); ++m) row.push_back(format_plan_cost(costs.steps[m][i], p.models[m]));
    row.push_back(us_text(outcome.steps[i].collective_median_s));
    row.push_back(us_text(outcome.steps[i].median_s));
    rows.push_back(std::move(row));
  }
  if (c.plan.steps.empty()) {
    out << "no steps: the source already is the target\n";
  } else {
    std::vector<std::string> total = {"total", "", "", "", "", ""};
    for (std::size_t m = 0; m < p.models.size(); ++m) total.push_back(format_plan_cost(costs.totals[m], p.models[m]));
    total.push_back(us_text(outcome.collective_total_s));
    total.push_back(us_text(outcome.total_s));
    rows.push_back(std::move(total));
    print_plan_table(out, rows, right);
  }
  out << "\ntrace: " << trace(c.plan) << "\n";
  if (outcome.verified) {
    out << "verified: every element of every rank equals the target (" << outcome.elements_checked << " elements)\n";
  } else {
    out << "verification FAILED: " << outcome.mismatch << "\n";
  }
}

// --compare: which plan was fastest (by its collectives, what the models predict) and which models predicted it.
void print_comparison(std::ostream& out, const Prepared& p, const std::vector<RunOutcome>& outcomes,
                      const std::vector<PlanCosts>& costs, JsonlSink& sink) {
  for (const auto& r : p.refused) out << "refused: " << r << "\n";
  std::size_t fastest = 0;
  for (std::size_t k = 1; k < outcomes.size(); ++k) {
    if (outcomes[k].collective_total_s < outcomes[fastest].collective_total_s) fastest = k;
  }
  out << "fastest measured: plan " << fastest << " (" << us_text(outcomes[fastest].collective_total_s)
      << " in collectives): " << trace(p.candidates[fastest].plan) << "\n";
  std::vector<std::string> right_models;
  for (std::size_t m = 0; m < p.models.size(); ++m) {
    double least = costs[0].totals[m];
    for (const auto& c : costs) least = std::min(least, c.totals[m]);
    std::vector<std::size_t> cheapest;  // every plan at the least predicted cost
    for (std::size_t k = 0; k < costs.size(); ++k) {
      if (costs[k].totals[m] == least) cheapest.push_back(k);
    }
    const bool among = std::find(cheapest.begin(), cheapest.end(), fastest) != cheapest.end();
    // A model predicted the fastest plan only when it singles that plan out as the cheapest.
    const bool right = cheapest.size() == 1 && among;
    const std::string cost = format_plan_cost(least, p.models[m]);
    out << "  " << to_string(p.models[m]);
    if (cheapest.size() == 1) {
      out << " predicts plan " << cheapest.front() << " cheapest (" << cost << ")"
          << (right ? ": the fastest" : ": not the fastest") << "\n";
    } else {
      std::vector<std::string> tied;
      for (const auto k : cheapest) tied.push_back(std::to_string(k));
      out << " ties between plans " << join(tied, {.separator = ", "}) << " as cheapest (" << cost << ")"
          << (among ? ": the fastest is among them, not singled out" : ": the fastest is not among them") << "\n";
    }
    if (right) right_models.emplace_back(to_string(p.models[m]));
  }
  out << "models that predicted the fastest plan: "
      << (right_models.empty() ? std::string("none") : join(right_models, {.separator = ", "})) << "\n";
  sink.write(nlohmann::ordered_json{{"type", "compare"},
                            {"fastest_plan", fastest},
                            {"fastest_measured_us", outcomes[fastest].collective_total_s * 1e6},
                            {"models_predicting_fastest", right_models}}
                 .dump());
}

std::string run_header(const RunCliOptions& o, const Prepared& p, const comm::Communicator& world,
                       const LiveBackend& backend) {
  const PlanSetup& s = p.human.setup;
  std::ostringstream head;
  head << "run " << to_string(s.request.src) << " -> " << to_string(s.request.dst) << " on " << world.size() << " "
       << backend.name() << " ranks (" << backend.describe() << ")\n  mesh " << plan_mesh_text(s) << ", tensor " << shape_text(s.request.tensor_shape)
       << ", " << (p.settings.dtype == DType::Float64 ? "float64" : "int64") << " (itemsize " << s.request.itemsize
       << " for the models), " << p.settings.iterations << " iterations per step (collective: single_shot, p50 of the mean over the ranks; step: median of the slowest rank)\n";
  if (!o.compare) {
    const PlannerKind used = resolve_planner(s.request);
    head << "  planner " << to_string(s.request.planner);
    if (s.request.planner == PlannerKind::Auto) head << " (= " << to_string(used) << ")";
    head << ", variant " << to_string(s.request.variant) << ", cost model " << plan_model_text(s) << "\n";
  } else {
    head << "  compare: " << p.candidates.size() << " distinct plans from graph, greedy, auto under";
    for (const auto kind : p.models) head << " " << to_string(kind);
    head << "\n";
  }
  head << "  measured: the collective alone" << (backend.host_memory() ? "" : " (with its host-device copies)")
       << "; whole step: with packing, padding and unpacking\n"
       << crowding_line(p.cpus, p.settings.hosts) << "\n";
  return head.str();
}

int run_live(const RunCliOptions& o, const CLI::App& cmd) {
  std::optional<Prepared> prepared;
  LiveCommand live;
  if (cmd.count("--jsonl") > 0) live.jsonl = o.jsonl;
  live.backend = o.backend;
  live.inputs = {{"--calibration", o.plan.calibration}};
  live.prepare = [&](mpi::MpiCommunicator& world, int ranks_on_host) {
    prepared = prepare(o, cmd, world.size(), world.rank(), ranks_on_host);
    if (prepared->settings.fault) prepared->settings.fault->maybe_fail_setup(world.rank());
    return prepared->timeout_s;
  };
  live.run = [&](mpi::MpiCommunicator& world, LiveBackend& backend, JsonlStream& records) {
    const bool lead = world.rank() == 0;
    JsonlSink& sink = records.sink();
    Prepared& p = *prepared;
    int status = 0;
    p.settings.hosts = job_hosts(world);
    p.cpus = job_cpus(world, p.settings.hosts).cpus;
    // Every group inherits the world's timeout (split passes it on). The executor computes on the host.
    const comm::MeshGroups groups = backend.groups(*p.mesh, LiveBackend::Buffers::Host);
    if (lead) {
      sink.write(config_json(p, world, backend).dump());
      std::cout << run_header(o, p, world, backend) << std::flush;
    }
    std::vector<RunOutcome> outcomes;
    std::vector<PlanCosts> costs;
    for (std::size_t k = 0; k < p.candidates.size(); ++k) {
      const Candidate& c = p.candidates[k];
      costs.push_back(price_plan(p, c.plan));
      if (lead) sink.write(plan_json(p, c, k, costs.back()).dump());
      const StepObserver stream = [&](std::size_t i, const StepTiming& t) {
        if (lead) sink.write(step_json(p, c, k, costs.back(), i, t).dump());
      };
      RunOutcome outcome = execute_plan(world, groups, p.names, p.human.setup.request, c.plan, p.settings,
                                        p.buffers, stream);
      if (!outcome.verified) status = 1;
      if (lead) {
        sink.write(summary_json(p, c, k, costs.back(), outcome).dump());
        std::ostringstream out;
        if (o.compare) out << "plan " << k << " (proposed by " << join(c.proposed_by, {.separator = ", "}) << ")\n";
        print_plan(out, p, c, costs.back(), outcome);
        std::cout << out.str() << (o.compare ? "\n" : "") << std::flush;
      }
      outcomes.push_back(std::move(outcome));
    }
    if (o.compare && lead) {
      std::ostringstream out;
      print_comparison(out, p, outcomes, costs, sink);
      std::cout << out.str() << std::flush;
    }
    return status;
  };
  return run_live_command(live);
}

}  // namespace

void add_run_command(CLI::App& root, int& exit_code) {
  auto o = std::make_shared<RunCliOptions>();
  CLI::App* cmd = root.add_subcommand(
      "run", "Execute a planned redistribution for real under mpirun: verify every element and time every step "
             "beside the cost models' predictions");
  add_plan_request_options(*cmd, o->plan,
                           {.mesh = "Mesh shape, outer to inner, e.g. 2,2,2 (at most the MPI world)",
                            .itemsize = "Bytes per element the models price (default 8, what travels)",
                            .dtype = "What travels: float64 (default) or int64"});
  cmd->add_option("--timeout", o->timeout, "Per-operation timeout in seconds (default 60; 0 = none)")->type_name("S");
  cmd->add_option("--iterations", o->iterations, "Timed runs of every step on fresh copies (default 5; median)")
      ->type_name("N");
  cmd->add_option("--backend", o->backend,
                  "Where the collectives run: mpi (default) or nccl (one GPU per rank, host data staged through the "
                  "device); this build has " + available_backends())
      ->type_name("NAME");
  cmd->add_flag("--compare", o->compare,
                "Run every distinct plan of graph, greedy and auto under every model and say which was fastest");
  cmd->add_flag("--no-axis-corrections", o->no_axis_corrections,
                "Calibrated model: price the calibrated mesh's axes by their group shape's curve alone, without the "
                "calibration's axis corrections (which need ranks bound as calibrate's were)");
  cmd->add_option("--jsonl", o->jsonl,
                  "Write JSON Lines to FILE as the run goes: config, then per plan a plan record, one per step, a "
                  "summary (fsynced per record)")
      ->type_name("FILE");
  cmd->callback([o, cmd, &exit_code] { exit_code = run_live(*o, *cmd); });
}

}  // namespace meshloom::launcher
