// `meshloom-launch validate`: do the cost models pick the plans that are really fastest? Under mpirun, for every
// request of a suite (the bundled default for the world, or --suite FILE), the k cheapest distinct plans under each
// model (fixed, comm, calibrated; plan_k_cheapest over the graph planner's states) run for real through the engine's
// executor, every element verified, every step's collective timed by the single_shot protocol (the candidates taken
// in turn over --rounds rounds, so that the machine's slow spells fall on all of them). Then, per model: the
// share of requests where its own pick was the measured fastest (ties within the run's noise count), the time its
// picks lose against the fastest plans, the median and p90 of |predicted - measured| / measured per step and per
// plan, and the rank correlation (validate_report.hpp).
//
//   mpirun -np 4 meshloom-launch validate --calibration cal.json --jsonl validate.jsonl
//
// JSON Lines (--jsonl): config; per request a request record, then per plan a plan record, its step records (run's
// fields plus "request") and a summary; a verdict per request; a report per model last, then an end record.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
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
#include "commands.hpp"
#include "live_backend.hpp"
#include "live_command.hpp"
#include "meshloom/comm/mesh_groups.hpp"
#include "meshloom/error.hpp"
#include "meshloom/mesh/device_mesh.hpp"
#include "meshloom/plan/planner.hpp"
#include "mpi_command.hpp"
#include "plan_batch.hpp"
#include "plan_options.hpp"
#include "run_exec.hpp"
#include "slurm_job.hpp"
#include "test_fault.hpp"
#include "text_format.hpp"
#include "validate_drift.hpp"
#include "validate_report.hpp"
#include "validate_suite.hpp"

namespace meshloom::launcher {

namespace {

using ojson = nlohmann::ordered_json;

struct ValidateOptions {
  std::string calibration, suite, k = "3", iterations = "9", rounds = "3", timeout = "60", jsonl, backend = "mpi", devices_per_host;
  bool extrapolate = false;
  bool no_axis_corrections = false;
};

struct Candidate {
  Plan plan;
  std::vector<std::string> proposed_by;  // "calibrated#0": the model and the plan's place in its k cheapest
};

struct PreparedRequest {
  SuiteRequest item;
  std::vector<std::string> names;  // the mesh's axis names as its groups are built
  std::vector<Candidate> candidates;
  std::vector<std::size_t> pick;                              // [model]
  std::vector<std::vector<std::vector<double>>> step_costs;  // [candidate][model][step]
  std::vector<std::vector<double>> total_costs;              // [candidate][model]
};

struct Prepared {
  std::vector<std::string> models{"fixed", "comm", "calibrated"};
  std::vector<std::string> cpus;  // every rank's CPUs (job_cpus), for the config record
  std::vector<bool> time_model{false, true, true};
  Calibration calibration;
  std::string calibration_path;
  std::size_t k = 3;
  std::int64_t rounds = 3;
  std::int64_t devices_per_host = 8;
  RunSettings settings;
  double timeout_s = kDefaultTimeoutS;
  std::vector<PreparedRequest> requests;
};

// The most ranks the calibrated job had on one host (the comm model's devices per host on that machine); 8 (the
// comm model's default) when the calibration does not say.
std::int64_t calibrated_devices_per_host(const Calibration& c) {
  if (c.rank_hosts.empty()) return 8;
  std::map<std::int64_t, std::int64_t> count;
  std::int64_t most = 0;
  for (const auto h : c.rank_hosts) most = std::max(most, ++count[h]);
  return most;
}

PreparedRequest prepare_request(const Prepared& p, const SuiteRequest& item, std::size_t index) {
  PreparedRequest r;
  r.item = item;
  const PlanSetup& s = item.setup;
  if (s.names.empty()) {
    for (std::size_t a = 0; a < s.request.mesh_shape.size(); ++a) r.names.push_back(std::to_string(a));
  } else {
    r.names = s.names;
  }
  std::vector<std::unique_ptr<CostModel>> models;
  for (const auto kind : {CostModelKind::Fixed, CostModelKind::Comm, CostModelKind::Calibrated}) {
    PlanSetup m = s;
    m.cost_model = kind;
    m.devices_per_host = p.devices_per_host;
    m.calibration = p.calibration;
    m.extrapolate = s.extrapolate;
    try {
      models.push_back(make_cost_model(m));
    } catch (const Error& e) {
      raise(e.kind(), "request " + std::to_string(index) + " (" + item.label + "): " + e.message());
    }
  }
  std::map<std::string, std::size_t> by_path;
  std::vector<std::size_t> picks(models.size());  // [model]: its pick, as a candidate
  for (std::size_t m = 0; m < models.size(); ++m) {
    // The model's pick is the plan the planner gives it (model_plans): of a wider pool where merged steps are priced
    // as the flattened group's collective.
    std::vector<Plan> plans;
    std::size_t pick = 0;
    try {
      ModelPlans mp = model_plans(s.request, *models[m], p.k);
      plans = std::move(mp.plans);
      pick = mp.pick;
    } catch (const Error& e) {
      raise(e.kind(), "request " + std::to_string(index) + " (" + item.label + "), " + p.models[m] + " model: " +
                          e.text() + unpriced_note(*models[m], s.request.mesh_shape));
    }
    for (std::size_t rank = 0; rank < plans.size(); ++rank) {
      if (rank >= p.k && rank != pick) continue;  // of a wider pool, the k cheapest and the pick run
      const std::string who = p.models[m] + "#" + std::to_string(rank);
      // By the steps that run, each with the states around it: two paths that differ only inside a merged step
      // (P(sum)P(sum) through RP(sum) or P(sum)R, merged into one all_reduce on the flattened group) run the same
      // collectives and are one candidate; the trace would not do, as merging can print two different runs alike.
      std::string key = to_string(plans[rank].path.front()) + ";";
      for (const auto& step : plans[rank].steps) {
        key += std::string(to_string(step.collective)) + "@";
        for (const std::size_t a : step.axes) key += std::to_string(a) + ",";
        key += ">" + to_string(step.after) + ";";
      }
      auto it = by_path.find(key);
      if (it == by_path.end()) {
        it = by_path.emplace(key, r.candidates.size()).first;
        r.candidates.push_back({std::move(plans[rank]), {}});
      }
      r.candidates[it->second].proposed_by.push_back(who);
      if (rank == pick) picks[m] = it->second;
    }
  }
  for (const auto& c : r.candidates) {
    std::vector<std::vector<double>> steps;
    std::vector<double> totals;
    for (const auto& model : models) {
      steps.push_back(price_plan_steps(s.request, c.plan, *model));
      double total = 0;
      for (const double v : steps.back()) total += v;
      totals.push_back(total);
    }
    r.step_costs.push_back(std::move(steps));
    r.total_costs.push_back(std::move(totals));
  }
  r.pick = std::move(picks);
  return r;
}

Prepared prepare(const ValidateOptions& o, const CLI::App& cmd, std::int64_t world_size, int rank,
                 int ranks_on_host) {
  Prepared p;
  if (cmd.count("--calibration") == 0) {
    raise(ErrorKind::ValueError, "validate needs --calibration FILE (the calibration to judge, from `meshloom-launch "
                                 "calibrate`)");
  }
  check_backend_name(o.backend);
  p.calibration_path = o.calibration;
  p.calibration = load_calibration(o.calibration);
  check_calibration_fits_run(p.calibration, "--calibration \"" + o.calibration + "\"", o.backend);
  check_calibration_transport(p.calibration, "--calibration \"" + o.calibration + "\"");
  const std::int64_t k = parse_int(o.k, "--k");
  if (k < 1 || k > 16) raise(ErrorKind::ValueError, "--k \"" + o.k + "\": must be in [1, 16]");
  p.k = static_cast<std::size_t>(k);
  p.settings.iterations = parse_int(o.iterations, "--iterations");
  if (p.settings.iterations < 3 || p.settings.iterations > 100000) {
    raise(ErrorKind::ValueError, "--iterations \"" + o.iterations + "\": must be in [3, 100000] (ties need a spread)");
  }
  p.rounds = parse_int(o.rounds, "--rounds");
  if (p.rounds < 1 || p.rounds > p.settings.iterations) {
    raise(ErrorKind::ValueError, "--rounds \"" + o.rounds + "\": must be in [1, " +
                                     std::to_string(p.settings.iterations) + "] (at most one round per iteration)");
  }
  p.settings.fault = test_fault_from_env();
  if (cmd.count("--timeout") > 0) p.timeout_s = parse_timeout_seconds(o.timeout);
  p.devices_per_host = cmd.count("--devices-per-host") > 0 ? parse_int(o.devices_per_host, "--devices-per-host")
                                                           : calibrated_devices_per_host(p.calibration);
  std::vector<SuiteRequest> suite =
      cmd.count("--suite") > 0 ? read_suite(o.suite, world_size) : default_suite(world_size);
  // Axis corrections price the calibrated mesh's own axes as its bound ranks ran them.
  if (o.no_axis_corrections) {
    p.calibration.axis_corrections.clear();
  } else if (std::any_of(suite.begin(), suite.end(), [&](const SuiteRequest& r) {
               return same_layout(r.setup.request.mesh_shape, p.calibration.mesh_shape);
             })) {
    check_axis_binding(p.calibration, "--calibration \"" + o.calibration + "\"", rank);
  }
  for (std::size_t i = 0; i < suite.size(); ++i) {
    check_fits_in_memory(suite[i].setup.request, "request " + std::to_string(i) + " (" + suite[i].label + ")",
                         ranks_on_host);
    suite[i].setup.extrapolate = o.extrapolate;
    p.requests.push_back(prepare_request(p, suite[i], i));
  }
  return p;
}

// ---- records ----------------------------------------------------------------------------------------------------

ojson per_model(const Prepared& p, const std::vector<double>& values) {
  ojson j = ojson::object();
  for (std::size_t m = 0; m < p.models.size(); ++m) j[p.models[m]] = values[m];
  return j;
}

ojson per_model_flags(const Prepared& p, const std::vector<bool>& values) {
  ojson j = ojson::object();
  for (std::size_t m = 0; m < p.models.size(); ++m) j[p.models[m]] = static_cast<bool>(values[m]);
  return j;
}

ojson config_json(const Prepared& p, const comm::Communicator& world, const LiveBackend& backend) {
  ojson config = {
      {"type", "config"},
      {"command", "validate"},
      {"backend", std::string(backend.name())},
      {"world", world.size()},
      {"hosts", p.settings.hosts},
      {"cpus", p.cpus},
      {"transport", job_transport()},
      {"calibration", p.calibration_path},
      {"calibration_timing", p.calibration.timing},
      {"axis_corrections", p.calibration.axis_corrections.size()},
      {"models", p.models},
      {"k", p.k},
      {"iterations", p.settings.iterations},
      {"rounds", p.rounds},
      {"requests", p.requests.size()},
      {"devices_per_host", p.devices_per_host},
      {"tie_floor", kTieFloor},
      {"priced_alike", kPricedAlike},
      {"timeout_s", p.timeout_s},
      {"versions", {{"meshloom", MESHLOOM_VERSION}, {std::string(backend.name()), backend.describe()}}},
      {"host", host_name()}};
  add_slurm(config, slurm_job());
  return config;
}

ojson request_json(const Prepared& p, const PreparedRequest& r, std::size_t index) {
  const PlanRequest& q = r.item.setup.request;
  ojson picks = ojson::object();
  for (std::size_t m = 0; m < p.models.size(); ++m) picks[p.models[m]] = r.pick[m];
  // Every field that shapes its plans (rescore plans the request again from it).
  return {{"type", "request"},         {"request", index},         {"label", r.item.label},
          {"mesh", {{"shape", q.mesh_shape}, {"names", r.names}}},  {"tensor_shape", q.tensor_shape},
          {"flattened", q.flattened},  {"src", to_string(q.src)},   {"dst", to_string(q.dst)},  {"dtype", "float64"},
          {"itemsize", q.itemsize},    {"variant", to_string(q.variant)}, {"coordinate", q.coordinate},
          {"state_budget", q.state_budget}, {"plans", r.candidates.size()}, {"picks", picks}};
}

ojson step_json(const Prepared& p, const PreparedRequest& r, std::size_t index, std::size_t plan, std::size_t i,
                const StepTiming& t) {
  const PlanStep& step = r.candidates[plan].plan.steps[i];
  std::vector<double> predicted;
  for (std::size_t m = 0; m < p.models.size(); ++m) predicted.push_back(r.step_costs[plan][m][i]);
  return {{"type", "step"},
          {"request", index},
          {"plan", plan},
          {"step", i},
          {"axes", step.axes},
          {"collective", to_string(step.collective)},
          {"merged", step.merged},
          {"from", to_string(step.from)},
          {"to", to_string(step.to)},
          {"logical_shape", step.logical_shape},
          {"bytes", step.bytes},
          {"predicted", per_model(p, predicted)},
          {"measured_us", communicates(step.collective) ? t.collective_median_s * 1e6 : 0.0},
          {"iterations_us", to_micros(t.collective_iteration_s)},
          {"timing", "single_shot"},
          {"stats", stats_json(t.collective_stats)},
          {"step_us", t.median_s * 1e6}};
}

// ---- the human report -----------------------------------------------------------------------------------------

std::string request_line(const Prepared& p, const PreparedRequest& r, std::size_t index,
                         const RequestMeasurement& request, const RequestVerdict& v) {
  const std::vector<CandidateMeasurement>& measured = request.candidates;
  std::ostringstream out;
  out << "[" << index + 1 << "/" << p.requests.size() << "] " << r.item.label << ": " << r.candidates.size()
      << (r.candidates.size() == 1 ? " plan" : " plans") << "; fastest plan " << v.fastest << " ("
      << format_time_us(measured_total_us(measured[v.fastest])) << " us, se "
      << format_time_us(measured_se_us(measured[v.fastest])) << "): " << trace(r.candidates[v.fastest].plan)
      << "\n    picks:";
  for (std::size_t m = 0; m < p.models.size(); ++m) {
    const std::size_t pick = r.pick[m];
    out << " " << p.models[m] << " " << pick;
    if (v.exact[m]) {
      out << " (fastest)";
    } else {
      out << " (+" << percent_text(time_lost(request, v, m))
          << (v.right[m] ? ", a tie)" : priced_alike(request, v, m) ? ", WRONG, priced alike)" : ", WRONG)");
    }
    out << (m + 1 < p.models.size() ? "," : "\n");
  }
  return out.str();
}

std::string report_table(const Prepared& p, const std::vector<ModelScore>& scores) {
  const std::vector<std::vector<std::string>> rows = score_rows(scores);
  std::ostringstream out;
  out << "\nmodels over " << p.requests.size() << " requests (a pick is right when it is the measured fastest or "
      << "ties with it: within max(" << percent_text(kTieFloor) << ", 2 standard errors)):\n";
  print_plan_table(out, rows, {false, true, true, true, true, true, true});
  out << priced_alike_note(scores);
  return out.str();
}

int run_live(const ValidateOptions& o, const CLI::App& cmd) {
  std::optional<Prepared> prepared;
  LiveCommand live;
  if (cmd.count("--jsonl") > 0) live.jsonl = o.jsonl;
  live.backend = o.backend;
  live.inputs = {{"--calibration", o.calibration}, {"--suite", o.suite}};
  live.prepare = [&](mpi::MpiCommunicator& world, int ranks_on_host) {
    prepared = prepare(o, cmd, world.size(), world.rank(), ranks_on_host);
    if (prepared->settings.fault) prepared->settings.fault->maybe_fail_setup(world.rank());
    return prepared->timeout_s;
  };
  live.run = [&](mpi::MpiCommunicator& world, LiveBackend& backend, JsonlStream& records) {
    const bool lead = world.rank() == 0;
    JsonlSink& sink = records.sink();
    Prepared& p = *prepared;
    p.settings.hosts = job_hosts(world);
    p.cpus = job_cpus(world, p.settings.hosts).cpus;
    if (lead) {
      sink.write(config_json(p, world, backend).dump());
      std::cout << "validate " << p.requests.size() << " requests on " << world.size() << " " << backend.name()
                << " ranks (" << backend.describe() << ")\n  models fixed, comm (" << p.devices_per_host
                << " devices per host), calibrated (" << p.calibration_path
                << ", " << calibration_timing_text(p.calibration)
                << (p.calibration.axis_corrections.empty() ? std::string() : ", its axis corrections on (" +
                        join(p.calibration.mesh_shape, {.separator = ", "}) + ")")
                << "); the " << p.k
                << " cheapest plans of each; " << p.settings.iterations
                << " iterations per step in " << p.rounds << (p.rounds == 1 ? " round" : " rounds")
                << " (collective: single_shot, p50 of the mean over the ranks)\n"
                << crowding_line(p.cpus, p.settings.hosts) << "\n"
                << std::flush;
    }
    // The drift check (validate_drift.hpp) on the first request's mesh, before the requests and after them.
    DriftProbe probe(world, backend, p.calibration, p.requests.front().item.setup.request.mesh_shape,
                     p.requests.front().names, p.settings.hosts);
    const auto drift = [&](const char* when) {
      std::optional<DriftCheck> check = probe.measure(when);
      if (lead && check) {
        sink.write(drift_json(*check).dump());
        std::cout << drift_line(*check) << "\n" << std::flush;
      }
      return check;
    };
    const std::optional<DriftCheck> drift_before = drift("before");
    if (lead && drift_before) std::cout << "\n" << std::flush;
    int status = 0;
    std::map<std::string, comm::MeshGroups> groups_by_mesh;
    std::vector<RequestMeasurement> measured_requests;
    for (std::size_t i = 0; i < p.requests.size(); ++i) {
      const PreparedRequest& r = p.requests[i];
      const PlanRequest& q = r.item.setup.request;
      // Groups per mesh, built once (every rank walks the requests in the same order).
      std::string key = join(q.mesh_shape, {.separator = ","}) + "|" + join(r.names, {.separator = ","});
      for (const auto& f : q.flattened) {
        key += "|";
        for (const auto a : f) key += std::to_string(a) + ",";
      }
      auto g = groups_by_mesh.find(key);
      if (g == groups_by_mesh.end()) {
        DeviceMesh mesh = DeviceMesh::init(q.mesh_shape, r.names, world.size());
        for (const auto& f : q.flattened) {
          std::vector<std::string> axes;
          for (const auto a : f) axes.push_back(r.names.at(a));
          if (axes.size() > 1) (void)mesh.slice(axes).flatten();
        }
        g = groups_by_mesh.emplace(key, backend.groups(mesh, LiveBackend::Buffers::Host)).first;
      }
      if (lead) sink.write(request_json(p, r, i).dump());
      const RankBuffers buffers = rank_buffers(q, world.rank());
      // The candidates run in rounds, each round every candidate once with its share of the iterations, the order
      // turned by one each round: a slow spell of the machine then falls on every candidate alike instead of on
      // the one that ran during it, and the medians and standard errors are over every round.
      const std::size_t count = r.candidates.size();
      std::vector<std::vector<std::vector<StepTiming>>> rounds_of(count);  // [candidate][step][round]
      std::vector<RunOutcome> outcomes(count);
      for (std::size_t j = 0; j < count; ++j) {
        rounds_of[j].resize(r.candidates[j].plan.steps.size());
        outcomes[j].verified = true;
      }
      for (std::int64_t round = 0; round < p.rounds; ++round) {
        RunSettings settings = p.settings;
        settings.iterations = round_iterations(p.settings.iterations, p.rounds, round);
        for (std::size_t turn = 0; turn < count; ++turn) {
          const std::size_t j = (turn + static_cast<std::size_t>(round)) % count;
          const StepObserver observe = [&](std::size_t s, const StepTiming& t) { rounds_of[j][s].push_back(t); };
          const RunOutcome outcome =
              execute_plan(world, g->second, r.names, q, r.candidates[j].plan, settings, buffers, observe);
          outcomes[j].elements_checked = outcome.elements_checked;
          if (!outcome.verified && outcomes[j].verified) {
            outcomes[j].verified = false;
            outcomes[j].mismatch = outcome.mismatch;
          }
        }
      }
      RequestMeasurement measurement;
      measurement.pick = r.pick;
      for (std::size_t j = 0; j < count; ++j) {
        const Candidate& c = r.candidates[j];
        if (lead) {
          sink.write(ojson{{"type", "plan"},
                           {"request", i},
                           {"plan", j},
                           {"trace", trace(c.plan)},
                           {"proposed_by", c.proposed_by},
                           {"steps", c.plan.steps.size()},
                           {"predicted", per_model(p, r.total_costs[j])}}
                         .dump());
        }
        CandidateMeasurement cm;
        cm.predicted_steps = r.step_costs[j];
        cm.predicted_total = r.total_costs[j];
        for (std::size_t s = 0; s < c.plan.steps.size(); ++s) {
          const StepTiming t = pool_rounds(rounds_of[j][s], p.settings.hosts);
          const bool moves = communicates(c.plan.steps[s].collective);
          cm.measured_steps_us.push_back(moves ? t.collective_median_s * 1e6 : 0.0);
          cm.step_iterations_us.push_back(moves ? to_micros(t.collective_iteration_s) : std::vector<double>{});
          if (lead) sink.write(step_json(p, r, i, j, s, t).dump());
        }
        const RunOutcome& outcome = outcomes[j];
        cm.verified = outcome.verified;
        if (!outcome.verified) status = 1;
        if (lead) {
          ojson summary{{"type", "summary"},
                        {"request", i},
                        {"plan", j},
                        {"ok", outcome.verified},
                        {"verified", outcome.verified},
                        {"measured_us", measured_total_us(cm)},
                        {"se_us", measured_se_us(cm)},
                        {"predicted", per_model(p, r.total_costs[j])},
                        {"elements_checked", outcome.elements_checked}};
          if (!outcome.verified) summary["mismatch"] = outcome.mismatch;
          sink.write(summary.dump());
        }
        measurement.candidates.push_back(std::move(cm));
      }
      const RequestVerdict v = judge(measurement);
      if (lead) {
        sink.write(ojson{{"type", "verdict"},
                         {"request", i},
                         {"fastest", v.fastest},
                         {"fastest_us", measured_total_us(measurement.candidates[v.fastest])},
                         {"right", per_model_flags(p, v.right)},
                         {"exact", per_model_flags(p, v.exact)}}
                       .dump());
        std::cout << request_line(p, r, i, measurement, v) << std::flush;
      }
      measured_requests.push_back(std::move(measurement));
    }
    const std::optional<DriftCheck> drift_after = drift("after");
    const std::vector<ModelScore> scores = score_models(p.models, p.time_model, measured_requests);
    if (lead) {
      for (const auto& s : scores) {
        ojson record{{"type", "report"}};
        record.update(score_json(s));
        sink.write(record.dump());
      }
      sink.write(ojson{{"type", "end"}, {"ok", status == 0}, {"requests", p.requests.size()}}.dump());
      std::cout << report_table(p, scores);
      if ((drift_before && drift_before->drifted()) || (drift_after && drift_after->drifted())) {
        std::cout << "\nThe machine drifted from its calibration (the drift lines above): the time models' errors "
                     "include that drift. Calibrate again and validate right after for the models' own error.\n";
      }
      std::cout << std::flush;
    }
    return status;
  };
  return run_live_command(live);
}

}  // namespace

void add_validate_command(CLI::App& root, int& exit_code) {
  auto o = std::make_shared<ValidateOptions>();
  CLI::App* cmd = root.add_subcommand(
      "validate", "Run the k cheapest plans of every cost model for a suite of redistributions under mpirun, and "
                  "report how often each model picked the measured fastest and how far its predictions were");
  cmd->add_option("--calibration", o->calibration, "The calibration to judge (meshloom-launch calibrate --out)")
      ->type_name("FILE");
  cmd->add_option("--suite", o->suite,
                  "Requests, one JSON object per line in plan --batch's form (default: the bundled suite for the world)")
      ->type_name("FILE");
  cmd->add_option("--k", o->k, "Cheapest distinct plans run per model (default 3)")->type_name("N");
  cmd->add_option("--iterations", o->iterations, "Timed runs of every step (default 9; p50)")->type_name("N");
  cmd->add_option("--rounds", o->rounds,
                  "Rounds the iterations are split over, every candidate plan run once a round, the order turned "
                  "each round (default 3)")
      ->type_name("N");
  cmd->add_option("--timeout", o->timeout, "Per-operation timeout in seconds (default 60; 0 = none)")->type_name("S");
  cmd->add_option("--devices-per-host", o->devices_per_host,
                  "Comm model: devices per host (default: the most ranks the calibrated job had on one host)")
      ->type_name("N");
  cmd->add_flag("--extrapolate", o->extrapolate,
                "Calibrated model: price group shapes the calibration never measured from the nearest measured one");
  cmd->add_flag("--no-axis-corrections", o->no_axis_corrections,
                "Calibrated model: price the calibrated mesh's axes by their group shape's curve alone, without the "
                "calibration's axis corrections (which need ranks bound as calibrate's were)");
  cmd->add_option("--backend", o->backend, "Where the collectives run: mpi (default) or nccl; this build has " +
                                               available_backends())
      ->type_name("NAME");
  cmd->add_option("--jsonl", o->jsonl, "Write JSON Lines to FILE as the run goes (fsynced per record)")->type_name("FILE");
  cmd->callback([o, cmd, &exit_code] { exit_code = run_live(*o, *cmd); });
}

}  // namespace meshloom::launcher
