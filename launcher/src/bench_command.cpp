// `meshloom-launch bench` and `meshloom-launch calibrate`: the CLI wiring. bench runs the collective sweep of
// bench_run.cpp under mpirun; calibrate runs the same sweep (or reads a finished run's JSON Lines with --from, no
// MPI needed) and fits the contract's calibration file (calibrate_fit.cpp, calibrate_io.cpp).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench_format.hpp"
#include "bench_io.hpp"
#include "bench_run.hpp"
#include "calibrate_io.hpp"
#include "live_backend.hpp"
#include "live_command.hpp"
#include "commands.hpp"
#include "meshloom/backends/mpi_communicator.hpp"
#include "meshloom/backends/mpi_runtime.hpp"
#include "meshloom/comm/mesh_groups.hpp"
#include "meshloom/design/design.hpp"
#include "meshloom/error.hpp"
#include "meshloom/io/atomic_file.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "mpi_command.hpp"
#include "sizes.hpp"
#include "test_fault.hpp"
#include "text_format.hpp"

namespace meshloom::launcher {

namespace {

// calibrate's rounds when --rounds is not given (at most -n).
constexpr std::int64_t kCalibrateRounds = 4;

struct BenchCliOptions {
  std::string design, shape, names, world, axes, collectives, min_bytes, max_bytes, step_factor, warmup, iters, rounds,
      dtype, op, timeout, jsonl, out, from, timing, backend = "mpi";
  std::vector<std::string> flatten;
  bool check = false;
  bool shapes = false;  // calibrate --shapes
};

struct MeshChoice {
  MeshSpec spec;
  bool named = true;
  std::optional<std::int64_t> world;  // --world or the design's world
};

MeshChoice parse_mesh_choice(const BenchCliOptions& o, const CLI::App& cmd) {
  auto given = [&cmd](const char* name) { return cmd.count(name) > 0; };
  MeshChoice m;
  if (given("--design")) {
    for (const char* name : {"--shape", "--names", "--flatten"}) {
      if (given(name)) raise(ErrorKind::ValueError, std::string("give either --design or ") + name + ", not both");
    }
    const Design design = load_design(o.design);
    m.spec = design.mesh;
    m.world = design.world;
  } else {
    if (!given("--shape")) raise(ErrorKind::ValueError, "give the mesh: --shape (and --names) or --design FILE");
    m.spec.shape = parse_int_list(o.shape, "--shape");
    if (given("--names")) {
      m.spec.names = parse_name_list(o.names, "--names");
    } else {
      m.named = false;
      for (std::size_t i = 0; i < m.spec.shape.size(); ++i) m.spec.names.push_back(std::to_string(i));
    }
    for (const auto& f : o.flatten) {
      const auto colon = f.find(':');
      FlattenSpec spec;
      spec.axes = parse_name_list(f.substr(0, colon), "--flatten");
      if (colon != std::string::npos) {
        spec.name = trim(f.substr(colon + 1));
        if (spec.name.empty()) raise(ErrorKind::ValueError, "--flatten \"" + f + "\": empty name after ':'");
      } else {
        spec.name = join(spec.axes, {.separator = "_"});
      }
      if (!m.named) raise(ErrorKind::ValueError, "--flatten needs named axes: give --names");
      m.spec.flattened.push_back(spec);
    }
  }
  if (given("--world")) {
    const std::int64_t w = parse_int(o.world, "--world");
    if (m.world && *m.world != w) {
      raise(ErrorKind::ValueError, "--world " + std::to_string(w) + " but the design's world is " + std::to_string(*m.world));
    }
    m.world = w;
  }
  for (const auto s : m.spec.shape) {
    if (s < 1) raise(ErrorKind::ValueError, "--shape \"" + o.shape + "\": axis sizes must be >= 1");
  }
  return m;
}

BenchSettings parse_settings(const BenchCliOptions& o, const CLI::App& cmd, const std::string& command) {
  auto given = [&cmd](const char* name) { return cmd.count(name) > 0; };
  BenchSettings s;
  // bench measures as nccl-tests does; calibrate as the planner's steps are met (one collective at a time).
  s.timing = command == "calibrate" ? TimingMode::SingleShot : TimingMode::Pipelined;
  if (given("--timing")) {
    const auto mode = timing_mode_from_string(o.timing);
    if (!mode) raise(ErrorKind::ValueError, "--timing \"" + o.timing + "\": expected pipelined or single_shot");
    s.timing = *mode;
  }
  if (given("--axes")) s.axes = parse_name_list(o.axes, "--axes");
  if (given("--collectives")) {
    for (const auto& name : parse_name_list(o.collectives, "--collectives")) {
      const auto c = bench_collective_from_string(name);
      if (!c) {
        raise(ErrorKind::ValueError, "--collectives: unknown collective '" + name +
                                         "' (expected all_reduce, all_gather, reduce_scatter, all_to_all, broadcast)");
      }
      if (std::find(s.collectives.begin(), s.collectives.end(), *c) != s.collectives.end()) {
        raise(ErrorKind::ValueError, "--collectives: collective '" + name + "' is given twice");
      }
      s.collectives.push_back(*c);
    }
  } else {
    s.collectives = all_bench_collectives();
  }
  const std::int64_t min_bytes = parse_size(given("--minbytes") ? o.min_bytes : "8", "-b");
  const std::int64_t max_bytes = parse_size(given("--maxbytes") ? o.max_bytes : "64M", "-e");
  const std::int64_t factor = given("--stepfactor") ? parse_int(o.step_factor, "-f") : 2;
  s.sizes = size_sweep(min_bytes, max_bytes, factor);
  if (given("--warmup-iters")) s.warmup_iters = parse_int(o.warmup, "-w");
  if (given("--iters")) s.iters = parse_int(o.iters, "-n");
  // calibrate spreads every row over the sweep's time (a slow spell then does not fall on the few rows measured
  // during it, skewing one collective's curve); bench is nccl-tests' one pass.
  if (given("--rounds")) {
    s.rounds = parse_int(o.rounds, "--rounds");
  } else if (command == "calibrate") {
    s.rounds = std::clamp<std::int64_t>(s.iters, 1, kCalibrateRounds);
  }
  if (given("--dtype")) {
    const auto d = dtype_from_string(o.dtype);
    if (!d) {
      std::vector<std::string> names;
      for (const auto n : dtype_names()) names.emplace_back(n);
      raise(ErrorKind::ValueError, "--dtype \"" + o.dtype + "\": unknown dtype (expected " +
                                       join(names, {.separator = ", "}) + ")");
    }
    s.dtype = *d;
  }
  if (given("--op")) {
    const auto op = reduce_op_from_string(o.op);
    if (!op) raise(ErrorKind::ValueError, "--op \"" + o.op + "\": unknown reduce op (expected sum, avg, max, min, product)");
    s.op = *op;
  }
  if (given("--timeout")) s.timeout_s = parse_timeout_seconds(o.timeout);
  s.check = o.check;
  if (given("--jsonl")) s.jsonl = o.jsonl;
  return s;
}

// calibrate measures the group shapes a mesh exposes: besides every axis, the flattened group of every set of two or
// more axes of size > 1 (every subset up to 5 such axes, runs of neighbouring axes beyond), added as shape-only axes
// so that a flattening whose groups repeat a shape already measured is not run twice.
void add_flattened_shapes(MeshSpec& spec, BenchSettings& settings) {
  std::vector<std::size_t> wide;
  for (std::size_t a = 0; a < spec.shape.size(); ++a) {
    if (spec.shape[a] > 1) wide.push_back(a);
  }
  std::vector<std::vector<std::size_t>> subsets;
  if (wide.size() <= 5) {
    for (std::uint32_t mask = 1; mask < (1U << wide.size()); ++mask) {
      if (std::popcount(mask) < 2) continue;
      std::vector<std::size_t> axes;
      for (std::size_t i = 0; i < wide.size(); ++i) {
        if ((mask >> i) & 1U) axes.push_back(wide[i]);
      }
      subsets.push_back(std::move(axes));
    }
  } else {
    for (std::size_t first = 0; first < wide.size(); ++first) {
      for (std::size_t last = first + 1; last < wide.size(); ++last) {
        subsets.emplace_back(wide.begin() + static_cast<std::ptrdiff_t>(first),
                             wide.begin() + static_cast<std::ptrdiff_t>(last) + 1);
      }
    }
  }
  std::stable_sort(subsets.begin(), subsets.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });
  for (const auto& axes : subsets) {
    FlattenSpec f;
    for (const std::size_t a : axes) f.axes.push_back(spec.names[a]);
    f.name = join(f.axes, {.separator = "_"});
    const bool present = std::any_of(spec.flattened.begin(), spec.flattened.end(), [&](const FlattenSpec& g) {
      return g.axes == f.axes || g.name == f.name;
    });
    // A calibration names an axis in at most 64 characters: a longer joined name is not measured.
    if (present || f.name.size() > 64 || std::find(spec.names.begin(), spec.names.end(), f.name) != spec.names.end()) {
      continue;
    }
    settings.shape_only_axes.push_back(f.name);
    spec.flattened.push_back(std::move(f));
  }
}

// calibrate --shapes: the group shapes of the job itself, without a mesh of the user's. The world's prime factors
// as a mesh (8 ranks: (2,2,2), named f0, f1, f2; 12: (2,2,3)), whose axes and flattened groups (add_flattened_shapes)
// are the groups of every size the world divides into, at every stride a factor gives: consecutive ranks (a host's
// own) and ranks spread over the hosts, so the job's host placement yields every span it can.
MeshChoice shapes_mesh(const CLI::App& cmd, std::int64_t world) {
  for (const char* name : {"--design", "--shape", "--names", "--flatten", "--axes", "--world"}) {
    if (cmd.count(name) > 0) {
      raise(ErrorKind::ValueError, std::string("--shapes measures the job's own group shapes; ") + name +
                                       " cannot be combined with it");
    }
  }
  if (world < 2) raise(ErrorKind::ValueError, "--shapes needs at least 2 ranks (the world has " + std::to_string(world) + ")");
  MeshChoice m;
  std::int64_t rest = world;
  for (std::int64_t p = 2; p * p <= rest; ++p) {
    while (rest % p == 0) {
      m.spec.shape.push_back(p);
      rest /= p;
    }
  }
  if (rest > 1) m.spec.shape.push_back(rest);
  for (std::size_t i = 0; i < m.spec.shape.size(); ++i) m.spec.names.push_back("f" + std::to_string(i));
  return m;
}

// Writes the calibration of a sweep on this (lead) rank and prints its fit table. Returns an exit status.
int write_calibration(const BenchSweep& sweep, const std::filesystem::path& out_path, std::ostream& out) {
  const CalibrationReport report = calibrate_sweep(sweep);
  out << "#\n" << fit_table(report);
  if (report.calibration.axes.empty() && report.calibration.groups.empty()) {
    raise(ErrorKind::ValueError, "no (axis, collective) could be fitted; " + out_path.string() + " not written");
  }
  write_file_atomically(out_path, to_json_text(report.calibration));
  std::size_t fits = 0;
  for (const auto& [axis, collectives] : report.calibration.axes) fits += collectives.size();
  out << "# wrote " << out_path.string() << " (" << fits << " fits over " << report.calibration.axes.size()
      << " axes, " << report.calibration.groups.size() << " curves by group shape"
      << (report.calibration.axis_corrections.empty()
              ? std::string()
              : ", " + std::to_string(report.calibration.axis_corrections.size()) + " axis corrections")
      << ")\n" << std::flush;
  return 0;
}

// The sweep on live ranks: bench, or calibrate without --from.
int run_live(const BenchCliOptions& o, const CLI::App& cmd, const std::string& command) {
  BenchSettings settings;
  std::optional<DeviceMesh> mesh;
  BenchRunInfo info;
  std::optional<std::filesystem::path> out_path;
  LiveCommand live;
  if (cmd.count("--jsonl") > 0) live.jsonl = o.jsonl;
  live.backend = o.backend;
  live.inputs = {{"--design", o.design}};
  if (command == "calibrate" && cmd.count("--out") > 0) live.outputs = {{"--out", o.out}};
  live.prepare = [&](mpi::MpiCommunicator& world, int ranks_on_host) {
    const int rank = world.rank();
    if (command == "calibrate") {
      if (cmd.count("--out") == 0) raise(ErrorKind::ValueError, "calibrate needs --out FILE (the calibration to write)");
      out_path = o.out;
    }
    MeshChoice choice = o.shapes ? shapes_mesh(cmd, world.size()) : parse_mesh_choice(o, cmd);
    settings = parse_settings(o, cmd, command);
    settings.defer_summary = out_path.has_value();  // written after the calibration (run below)
    if (command == "calibrate" && cmd.count("--axes") == 0) add_flattened_shapes(choice.spec, settings);
    // --shapes: the factor axes are there for their shapes too (on one host, every f axis has the same one).
    if (o.shapes) settings.shape_only_axes.insert(settings.shape_only_axes.end(), choice.spec.names.begin(), choice.spec.names.end());
    settings.fault = test_fault_from_env();
    if (settings.fault) settings.fault->maybe_fail_setup(rank);
    check_backend_name(o.backend);
    const std::int64_t world_size = world.size();
    std::int64_t needed = 1;
    for (const auto s : choice.spec.shape) {
      if (__builtin_mul_overflow(needed, s, &needed)) needed = std::numeric_limits<std::int64_t>::max();
    }
    std::string shape_text;
    for (std::size_t i = 0; i < choice.spec.shape.size(); ++i) {
      shape_text += (i > 0 ? ", " : "") + choice.spec.names[i] + "=" + std::to_string(choice.spec.shape[i]);
    }
    if (needed > world_size) {
      raise(ErrorKind::ValueError, "the mesh (" + shape_text + ") needs " + std::to_string(needed) +
                                       " ranks but the MPI world has " + std::to_string(world_size) +
                                       "; start it with mpirun -np " + std::to_string(needed) + " or more");
    }
    if (choice.world && *choice.world != world_size) {
      raise(ErrorKind::ValueError, std::string(cmd.count("--world") > 0 ? "--world " : "the design's world ") +
                                       std::to_string(*choice.world) + " but the MPI world has " +
                                       std::to_string(world_size) + " ranks; start it with mpirun -np " +
                                       std::to_string(*choice.world));
    }
    // An unnamed --shape names its axes "0", "1", ... (what the JSON Lines and the calibration call them).
    mesh = build_mesh(choice.spec, world_size);
    const AxisSelection axes = select_axes(*mesh, settings.axes);
    validate_bench_settings(settings, *mesh, axes, o.backend);
    check_bench_fits_in_memory(settings, *mesh, axes, ranks_on_host);

    info.command = command;
    info.backend = o.backend;
    info.world = world_size;
    info.mesh_shape = mesh->shape();
    info.mesh_names = choice.spec.names;
    for (const auto& f : choice.spec.flattened) info.flattened.push_back({f.name, f.axes});
    info.meshloom_version = MESHLOOM_VERSION;
    info.mpi_library = mpi::runtime_info().library;
    info.host = host_name();
    info.slurm = slurm_job();
    return settings.timeout_s;
  };
  live.run = [&](mpi::MpiCommunicator& world, LiveBackend& backend, JsonlStream& records) {
    if (o.backend != "mpi") info.backend_library = backend.describe();
    info.hosts = job_hosts(world);
    const JobCpus cpus = job_cpus(world, info.hosts);
    info.cpus = cpus.cpus;
    info.bound = cpus.bound;
    info.transport = job_transport();
    // Every group inherits the world's timeout (split passes it on).
    const comm::MeshGroups groups = backend.groups(*mesh, LiveBackend::Buffers::Native);
    // With --jsonl -, run_live_command has sent standard output's stream to standard error: the records alone go out.
    std::ostream& human = std::cout;
    BenchOutcome outcome = run_bench(world, groups, *mesh, settings, info, human, records.sink(), &backend);
    int status = outcome.exit_code;
    if (out_path) {
      int written = 0;
      if (world.rank() == 0) {
        try {
          written = write_calibration(outcome.sweep, *out_path, human);
          records.sink().write(outcome.summary);  // the run's last record, once all of it is done
        } catch (const std::exception& e) {
          records.report_error(what_of(e));
          written = 1;
        }
      }
      // Every rank learns whether rank 0 wrote the calibration.
      std::int64_t failed = written, any = 0;
      world.all_reduce(comm::ConstBuffer{&failed, 1, DType::Int64}, comm::Buffer{&any, 1, DType::Int64}, ReduceOp::Max);
      if (any != 0) status = kExitError;
    }
    return status;
  };
  return run_live_command(live);
}

int run_from_file(const BenchCliOptions& o, const CLI::App& cmd) {
  try {
    for (const char* name : {"--design", "--shape", "--names", "--world", "--flatten", "--axes", "--collectives",
                             "--minbytes", "--maxbytes", "--stepfactor", "--warmup-iters", "--iters", "--rounds", "--timing", "--dtype", "--op",
                             "--timeout", "--jsonl", "--check", "--backend", "--shapes"}) {
      if (cmd.count(name) > 0) {
        raise(ErrorKind::ValueError, std::string("--from reads a finished bench run; ") + name +
                                         " cannot be combined with it");
      }
    }
    if (cmd.count("--out") == 0) raise(ErrorKind::ValueError, "calibrate needs --out FILE (the calibration to write)");
    check_files_apart({{"--from", o.from}}, {{"--out", o.out}});
    check_output_target({"--out", o.out});
    const BenchSweep sweep = read_bench_jsonl(o.from);
    std::cout << "# meshloom-launch calibrate --from " << o.from << ": backend " << sweep.backend << ", world "
              << sweep.world << ", " << sweep.results.size() << " results\n";
    return write_calibration(sweep, o.out, std::cout);
  } catch (const std::exception& e) {
    std::cerr << "error: " << what_of(e) << "\n";
  }
  return kExitError;
}

void add_sweep_options(CLI::App* cmd, BenchCliOptions& o) {
  cmd->add_option("--design", o.design, "Take the mesh (and world) from a *.meshloom.json design")->type_name("FILE");
  cmd->add_option("--shape", o.shape, "Mesh shape, outer to inner, e.g. 2,4")->type_name("SIZES");
  cmd->add_option("--names", o.names, "Axis names, e.g. dp,tp")->type_name("NAMES");
  cmd->add_option("--flatten", o.flatten, "Flatten axes: AXES[:NAME], e.g. dp,tp:dp_tp (repeatable)")
      ->type_name("AXES[:NAME]")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--world", o.world, "Expected world size; must equal the MPI world (mpirun -np)")->type_name("W");
  cmd->add_option("--axes", o.axes, "Axes to run (default: every axis, then every flattened axis)")->type_name("NAMES");
  cmd->add_option("--collectives", o.collectives,
                  "Collectives (default all_reduce,all_gather,reduce_scatter,all_to_all,broadcast)")
      ->type_name("NAMES");
  cmd->add_option("-b,--minbytes", o.min_bytes, "Smallest size in bytes, K/M/G suffixes (default 8)")->type_name("SIZE");
  cmd->add_option("-e,--maxbytes", o.max_bytes, "Largest size in bytes, K/M/G suffixes (default 64M)")->type_name("SIZE");
  cmd->add_option("-f,--stepfactor", o.step_factor, "Size multiplication factor (default 2)")->type_name("F");
  cmd->add_option("-w,--warmup-iters", o.warmup, "Warm-up iterations per size (default 5)")->type_name("N");
  cmd->add_option("-n,--iters", o.iters, "Timed iterations per size (default 20)")->type_name("N");
  cmd->add_option("--rounds", o.rounds,
                  "Run the sweep this many times, each size a share of -n each time, reported over all of them "
                  "(bench's default 1; calibrate's 4, or -n when smaller)")
      ->type_name("N");
  cmd->add_option("--timing", o.timing,
                  "pipelined: iterations back to back, one wait (nccl-tests; bench's default); single_shot: each "
                  "iteration alone after a barrier, as a training step meets it (calibrate's default)")
      ->type_name("MODE");
  cmd->add_option("--dtype", o.dtype, "Element type (default float32)")->type_name("DTYPE");
  cmd->add_option("--op", o.op, "Reduction of all_reduce and reduce_scatter: sum (default), avg, max, min, product")
      ->type_name("OP");
  cmd->add_flag("--check", o.check, "Check every result against the exact expected output (untimed); count wrong elements");
  cmd->add_option("--timeout", o.timeout, "Per-operation timeout in seconds (default 60; 0 = none)")->type_name("S");
  cmd->add_option("--backend", o.backend,
                  "Where the collectives run: mpi (host memory, default) or nccl (one GPU per rank); this build has " +
                      available_backends())
      ->type_name("NAME");
  cmd->add_option("--jsonl", o.jsonl,
                  "Write the JSON Lines records (config, result, summary | error) to FILE; '-': to standard output, "
                  "the table then to standard error")
      ->type_name("FILE");
}

}  // namespace

void add_bench_command(CLI::App& root, int& exit_code) {
  auto o = std::make_shared<BenchCliOptions>();
  CLI::App* cmd = root.add_subcommand(
      "bench", "Measure collectives on every axis of a mesh, nccl-tests style (run under mpirun)");
  add_sweep_options(cmd, *o);
  cmd->callback([o, cmd, &exit_code] { exit_code = run_live(*o, *cmd, "bench"); });
}

void add_calibrate_command(CLI::App& root, int& exit_code) {
  auto o = std::make_shared<BenchCliOptions>();
  CLI::App* cmd = root.add_subcommand(
      "calibrate", "Fit alpha and bus bandwidth per axis and collective from a bench sweep (run under mpirun, or "
                   "--from a bench JSON Lines file) and write a calibration file");
  add_sweep_options(cmd, *o);
  cmd->add_option("--from", o->from, "Fit a finished run's --jsonl file instead of running the sweep (no MPI)")
      ->type_name("FILE");
  cmd->add_option("--out", o->out, "The calibration file to write (atomically)")->type_name("FILE");
  cmd->add_flag("--shapes", o->shapes,
                "Measure the job's own group shapes instead of a mesh's: every group size the world divides into, "
                "over consecutive and spread ranks (a mesh of the world's prime factors and all its flattenings)");
  cmd->callback([o, cmd, &exit_code] {
    exit_code = cmd->count("--from") > 0 ? run_from_file(*o, *cmd) : run_live(*o, *cmd, "calibrate");
  });
}

}  // namespace meshloom::launcher
