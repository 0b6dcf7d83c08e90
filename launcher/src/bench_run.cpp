#include "bench_run.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <type_traits>
#include <utility>

#include "bench_io.hpp"
#include "collectives/collective.hpp"
#include "collectives/known_data.hpp"
#include "meshloom/error.hpp"
#include "sizes.hpp"
#include "text_format.hpp"

namespace meshloom::launcher {

namespace {

using Clock = std::chrono::steady_clock;

std::size_t usize(std::int64_t v) { return static_cast<std::size_t>(v); }

// One rank's buffers of one collective at one size: the host copies (filled and checked by the collective's own
// file) and, for a backend whose memory is not the host's, its copies of them (what the collective is given).
struct Buffers {
  CollectiveData host;
  std::unique_ptr<BackendBuffer> device_in, device_out;

  [[nodiscard]] void* in_data() { return device_in ? device_in->data() : host.in.data(); }
  [[nodiscard]] void* out_data() { return device_out ? device_out->data() : host.out.data(); }
  // Host -> backend memory (before the timed region), and the output back (after it).
  void upload() {
    if (device_in) device_in->upload(host.in.data(), host.in.size());
    if (device_out) device_out->upload(host.out.data(), host.out.size());
  }
  void download() {
    if (device_in) device_in->download(host.in.data(), host.in.size());  // broadcast works in place
    if (device_out) device_out->download(host.out.data(), host.out.size());
  }
};

std::int64_t sum_over_world(comm::Communicator& world, std::int64_t value) {
  std::int64_t out = 0;
  world.all_reduce(comm::ConstBuffer{&value, 1, DType::Int64}, comm::Buffer{&out, 1, DType::Int64}, ReduceOp::Sum);
  return out;
}

// ---- Progress ------------------------------------------------------------------------------------------------

class Progress {
public:
  Progress(bool enabled, std::int64_t total) : enabled_(enabled), total_(total) {}
  void show(std::int64_t done, const std::string& what) const {
    if (!enabled_ || total_ <= 0) return;
    constexpr std::int64_t kWidth = 30;
    const std::int64_t filled = done * kWidth / total_;
    std::string bar(usize(filled), '#');
    bar.append(usize(kWidth - filled), '.');
    std::cerr << "\r[" << bar << "] " << done << "/" << total_ << "  " << what << "\033[K" << std::flush;
  }
  void clear() const {
    if (enabled_) std::cerr << "\r\033[K" << std::flush;
  }

private:
  bool enabled_;
  std::int64_t total_;
};

std::string seconds_text(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

std::string mesh_text(const DeviceMesh& mesh) {
  const auto shape = mesh.shape();
  const auto names = axis_names(mesh);
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += names[i] + "=" + std::to_string(shape[i]);
  }
  return s + ")";
}

}  // namespace

std::vector<std::string> axis_names(const DeviceMesh& mesh) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < mesh.ndim(); ++i) names.push_back(mesh.names() ? (*mesh.names())[i] : std::to_string(i));
  return names;
}

AxisSelection select_axes(const DeviceMesh& mesh, const std::vector<std::string>& requested) {
  std::vector<std::string> all = axis_names(mesh);
  for (const auto& f : mesh.flattened_names()) {
    if (std::find(all.begin(), all.end(), f) == all.end()) all.push_back(f);
  }
  std::vector<std::string> chosen = requested.empty() ? all : requested;
  // A mesh of one rank (a world of one, or size-1 axes only) has only axes of size 1: they are what there is to
  // measure (a collective on one rank is the library's local copy, its launch and completion cost).
  const bool only_ones = mesh.size() == 1;
  AxisSelection sel;
  for (const auto& axis : chosen) {
    if (std::find(all.begin(), all.end(), axis) == all.end()) {
      raise(ErrorKind::KeyError, "--axes: the mesh has no axis '" + axis + "'. Valid axes are " + py_names(all, true));
    }
    if (std::find(sel.run.begin(), sel.run.end(), axis) != sel.run.end() ||
        std::find(sel.skipped.begin(), sel.skipped.end(), axis) != sel.skipped.end()) {
      raise(ErrorKind::ValueError, "--axes: axis '" + axis + "' is given twice");
    }
    const AxisRef ref = axis;
    (mesh.size(ref) > 1 || !requested.empty() || only_ones ? sel.run : sel.skipped).push_back(axis);
  }
  return sel;
}

void validate_bench_settings(const BenchSettings& s, const DeviceMesh& mesh, const AxisSelection& axes,
                             const std::string& backend) {
  if (s.collectives.empty()) raise(ErrorKind::ValueError, "--collectives: no collective given");
  if (s.sizes.empty()) raise(ErrorKind::ValueError, "no message size to run");
  if (s.iters < 1) raise(ErrorKind::ValueError, "-n " + std::to_string(s.iters) + ": at least 1 iteration");
  if (s.warmup_iters < 0) raise(ErrorKind::ValueError, "-w " + std::to_string(s.warmup_iters) + ": must be >= 0");
  if (s.rounds < 1 || s.rounds > s.iters) {
    raise(ErrorKind::ValueError, "--rounds " + std::to_string(s.rounds) + ": must be in [1, " + std::to_string(s.iters) +
                                     "] (at most one round per iteration, -n)");
  }
  if (!(s.timeout_s >= 0) || s.timeout_s > 1e6) {
    raise(ErrorKind::ValueError, "--timeout " + std::to_string(s.timeout_s) + ": seconds in 0..1000000 (0 = none)");
  }
  for (const auto c : s.collectives) {
    // The mpi backend reduces exactly the types --check can predict.
    if (reduces(c) && !known::checkable(s.dtype) && (backend == "mpi" || s.check)) {
      raise(ErrorKind::ValueError, "--dtype " + std::string(to_string(s.dtype)) + ": " +
                                       (backend == "mpi" ? "the mpi backend cannot reduce it ("
                                                         : "--check cannot predict its reduction (") +
                                       std::string(to_string(c)) +
                                       "); use float32, float64, int32, int64, int8 or uint8, or leave "
                                       "all_reduce and reduce_scatter out of --collectives");
    }
  }
  const std::int64_t item = itemsize(s.dtype);
  for (const auto& axis : backend == "mpi" ? axes.run : std::vector<std::string>{}) {
    const std::int64_t n = mesh.size(AxisRef{axis});
    for (const auto c : s.collectives) {
      const auto counts = size_counts(c, s.sizes.back(), item, n);
      if (std::max(counts.in_count, counts.out_count) > INT_MAX) {
        raise(ErrorKind::ValueError, "-e " + std::to_string(s.sizes.back()) + ": " + std::string(to_string(c)) +
                                         " on axis '" + axis + "' needs buffers of " +
                                         std::to_string(std::max(counts.in_count, counts.out_count)) +
                                         " elements; MPI counts stop at 2147483647");
      }
    }
  }
}

void check_bench_fits_in_memory(const BenchSettings& s, const DeviceMesh& mesh, const AxisSelection& axes,
                                int ranks_on_host, std::int64_t memory_bytes) {
  if (memory_bytes <= 0) memory_bytes = host_memory_bytes();
  if (memory_bytes <= 0 || s.sizes.empty()) return;  // unknown: the allocation will say
  const std::int64_t item = itemsize(s.dtype);
  // Only the mesh's ranks fill buffers: on a host of more, at most the mesh's size of them.
  const std::int64_t ranks = std::max<std::int64_t>(1, std::min<std::int64_t>(ranks_on_host, mesh.size()));
  for (const auto& axis : axes.run) {
    const std::int64_t n = mesh.size(AxisRef{axis});
    for (const auto c : s.collectives) {
      const auto counts = size_counts(c, s.sizes.back(), item, n);
      const std::int64_t out = rooted(c) ? 0 : counts.out_count;  // broadcast works in place: one buffer
      std::int64_t per_rank = 0;
      std::int64_t host = 0;
      const bool rank_past = __builtin_add_overflow(counts.in_count, out, &per_rank) ||
                             __builtin_mul_overflow(per_rank, item, &per_rank);
      const bool host_past = rank_past || __builtin_mul_overflow(per_rank, ranks, &host);
      if (!host_past && host <= memory_bytes) continue;
      raise(ErrorKind::ValueError,
            "-e: the sweep's largest size, " + std::to_string(s.sizes.back()) + " bytes: " +
                std::string(to_string(c)) + " on axis '" + axis + "' holds " + format_size(per_rank, rank_past) +
                " per rank (input and output)" +
                (ranks > 1 ? ", " + std::to_string(ranks) + " ranks on this host (" + format_size(host, host_past) + ")"
                           : std::string()) +
                "; this host has " + format_size(memory_bytes) + " of memory");
    }
  }
}

namespace {

std::string header_text(const BenchRunInfo& info, const BenchSettings& s, const DeviceMesh& mesh,
                        const AxisSelection& axes) {
  std::string h;
  h += "# meshloom-launch " + info.command + ": backend " + info.backend + " (" +
       (info.backend_library.empty() ? info.mpi_library : info.backend_library + "; " + info.mpi_library) +
       "), world " + std::to_string(info.world) + ", host " + info.host + ", meshloom " + info.meshloom_version + "\n";
  h += "# mesh " + mesh_text(mesh) + ", layout " + to_string(mesh.layout());
  if (!mesh.flattened_names().empty()) h += ", flattened " + join(mesh.flattened_names(), {.separator = ", "});
  h += "\n";
  h += "# sizes " + format_size(s.sizes.front()) + " .. " + format_size(s.sizes.back()) + " (" +
       std::to_string(s.sizes.size()) + " sizes), dtype " + std::string(to_string(s.dtype)) + ", op " +
       std::string(to_string(s.op)) + ", warm-up " + std::to_string(s.warmup_iters) + ", iterations " +
       std::to_string(s.iters) +
       (s.rounds > 1 ? " in " + std::to_string(s.rounds) + " rounds (the sweep repeated, warm-up each round)"
                     : std::string()) +
       ", check " + (s.check ? "on" : "off") + ", timeout " +
       (s.timeout_s > 0 ? seconds_text(s.timeout_s) : std::string("none")) + "\n";
  h += "# collectives " + join(info.collectives, {.separator = ", "}) + "\n";
  h += "# axes " + (axes.run.empty() ? std::string("none") : join(axes.run, {.separator = ", "}));
  if (!axes.skipped.empty()) h += "; skipped (size 1): " + join(axes.skipped, {.separator = ", "});
  h += "\n# timing " + std::string(to_string(s.timing)) +
       (s.timing == TimingMode::Pipelined ? " (iterations back to back, one wait; nccl-tests)"
                                          : " (each iteration alone after a barrier, as a training step meets it)") +
       "; time = " +
       (s.timing == TimingMode::Pipelined
            ? "the sum over the iterations of the mean over the ranks / iterations (nccl-tests)"
            : "p50 over the iterations of the mean over the ranks") +
       "; GB = 1e9 bytes; busbw = algbw * bus factor;"
       " cv = stddev / mean; slowest = the rank slowest in the most iterations\n";
  if (const std::string note = crowding_note(crowded_hosts(info.cpus, info.hosts), info.transport); !note.empty()) {
    h += "# note: " + note + "\n";
  }
  return h;
}

}  // namespace

BenchOutcome run_bench(comm::Communicator& world, const comm::MeshGroups& groups, const DeviceMesh& mesh,
                       const BenchSettings& s, BenchRunInfo info, std::ostream& out, JsonlSink& sink,
                       LiveBackend* backend) {
  const bool staged = backend != nullptr && !backend->host_memory();
  const auto started = Clock::now();
  const bool lead = world.rank() == 0;
  AxisSelection axes = select_axes(mesh, s.axes);
  const std::int64_t item = itemsize(s.dtype);
  if (info.hosts.size() != static_cast<std::size_t>(world.size())) {
    raise(ErrorKind::ValueError, "run_bench: " + std::to_string(info.hosts.size()) + " hosts for a world of " +
                                     std::to_string(world.size()) + " ranks (job_hosts gives every rank's)");
  }
  // Axes run for their group shape alone are dropped when an axis before them has that shape.
  std::vector<std::string> shape_duplicates;
  {
    std::vector<std::pair<std::int64_t, GroupSpan>> seen;
    std::vector<std::string> run;
    for (const auto& axis : axes.run) {
      const RankTensor axis_groups = mesh.groups(AxisRef{axis});
      const std::pair<std::int64_t, GroupSpan> shape{mesh.size(AxisRef{axis}), group_span(axis_groups, info.hosts)};
      const bool shape_only =
          std::find(s.shape_only_axes.begin(), s.shape_only_axes.end(), axis) != s.shape_only_axes.end();
      if (shape_only && std::find(seen.begin(), seen.end(), shape) != seen.end()) {
        shape_duplicates.push_back(axis);
        continue;
      }
      seen.push_back(shape);
      run.push_back(axis);
    }
    axes.run = std::move(run);
  }

  info.axes = axes.run;
  info.skipped_axes = axes.skipped;
  info.collectives.clear();
  for (const auto c : s.collectives) info.collectives.emplace_back(to_string(c));
  info.sizes = s.sizes;
  info.dtype = s.dtype;
  info.op = s.op;
  info.warmup_iters = s.warmup_iters;
  info.iters = s.iters;
  info.rounds = s.rounds;
  info.check = s.check;
  info.timeout_s = s.timeout_s;
  info.timing = s.timing;

  BenchOutcome outcome;
  outcome.sweep.backend = info.backend;
  outcome.sweep.timing = std::string(to_string(s.timing));
  outcome.sweep.world = info.world;
  outcome.sweep.mesh_shape = info.mesh_shape;
  outcome.sweep.mesh_names = info.mesh_names;
  outcome.sweep.hosts = info.hosts;
  outcome.sweep.cpus = info.cpus;
  outcome.sweep.bound = info.bound;
  outcome.sweep.transport = info.transport;
  for (const auto& f : info.flattened) outcome.sweep.flattened[f.name] = f.axes;

  if (lead) {
    sink.write(config_record(info));
    if (s.print_tables) {
      out << header_text(info, s, mesh, axes);
      if (!shape_duplicates.empty()) {
        out << "# not run (their groups have the shape of an axis run before them): "
            << join(shape_duplicates, {.separator = ", "}) << "\n";
      }
      out << std::flush;
    }
  }

  std::int64_t total_rows = 0;
  for (const auto& axis : axes.run) {
    const std::int64_t n = mesh.size(AxisRef{axis});
    for (const auto c : s.collectives) {
      for (const auto size : s.sizes) total_rows += size_counts(c, size, item, n).count > 0 ? 1 : 0;
    }
  }
  const Progress progress(s.progress && lead && ::isatty(STDERR_FILENO) == 1, total_rows * s.rounds);
  // This rank's times of every row, pooled over the rounds (in row order).
  std::vector<std::vector<double>> pooled(static_cast<std::size_t>(total_rows));

  std::int64_t done = 0;
  std::int64_t all_wrong = 0;
  double busbw_total = 0;
  // With rounds, the whole sweep runs `rounds` times, each row a share of the iterations each time; the last round
  // reports every row over all of its iterations (and runs --check), so a slow spell of the machine is spread over
  // every row instead of falling on the rows measured during it.
  for (std::int64_t round = 0; round < s.rounds; ++round) {
    const bool last = round + 1 == s.rounds;
    const TimingPlan timing{.mode = s.timing, .warmup = s.warmup_iters, .iters = round_iterations(s.iters, s.rounds, round)};
    std::size_t row = 0;
    for (const auto& axis : axes.run) {
      const AxisRef ref = axis;
      const std::int64_t n = mesh.size(ref);
      const RankTensor axis_groups = mesh.groups(ref);
      const std::int64_t group_count = axis_groups.shape.front();
      const GroupSpan span = group_span(axis_groups, info.hosts);
      comm::Communicator* c = groups.get(axis);
      const std::int64_t me = c != nullptr ? c->rank() : -1;
      std::int64_t axis_wrong = 0;
      double axis_busbw = 0;
      const bool print = last && lead && s.print_tables;
      if (print) {
        out << "#\n# axis " << axis << ": " << group_count << (group_count == 1 ? " group" : " groups") << " of " << n
            << (n == 1 ? " rank" : " ranks") << " (" << span.hosts << (span.hosts == 1 ? " host, " : " hosts, ")
            << span.ranks_per_host << (span.ranks_per_host == 1 ? " rank" : " ranks") << " per host"
            << (span.uniform ? "" : " at most, not alike in every group") << "), run at the same time\n"
            << table_header() << std::flush;
      }
      for (const auto collective : s.collectives) {
        const CollectiveDef& def = collective_def(collective);
        if (print) out << "# " << def.name() << "\n";
        std::vector<std::int64_t> too_small;
        double collective_busbw = 0;
        std::int64_t collective_rows = 0;
        for (const auto size : s.sizes) {
          Buffers b;
          b.host.counts = def.counts(size / item, item, n);
          b.host.dtype = s.dtype;
          b.host.op = s.op;
          b.host.me = me;
          b.host.n = n;
          if (b.host.counts.count == 0) {
            too_small.push_back(size);
            continue;
          }
          const std::size_t this_row = row++;
          std::vector<double>& times = pooled[this_row];
          if (s.fault && last) s.fault->maybe_fire(world.rank(), static_cast<std::int64_t>(this_row));
          if (lead) {
            progress.show(done, axis + " " + std::string(def.name()) + " " + format_size(size) +
                                    (s.rounds > 1 ? ", round " + std::to_string(round + 1) + "/" + std::to_string(s.rounds)
                                                  : std::string()));
          }
          if (c != nullptr) {
            def.fill(b.host);
            if (staged) {
              b.device_in = backend->allocate(b.host.in.size());
              if (!b.host.out.empty()) b.device_out = backend->allocate(b.host.out.size());
              b.upload();
            }
          }
          const auto launch = [&] { def.launch(*c, b.in_data(), b.out_data(), b.host.counts, s.dtype, s.op); };
          // Single-shot iterations get freshly written buffers, as the executor's steps and a training step do.
          const auto refill = [&] {
            def.fill(b.host);
            if (staged) b.upload();
          };
          const std::vector<double> round_times = time_iterations(world, c, timing, launch, refill);
          times.insert(times.end(), round_times.begin(), round_times.end());
          ++done;
          if (!last) continue;
          const IterationStats stats = iteration_stats(world, times, s.iters, info.hosts);
          std::int64_t wrong = 0;
          if (s.check) {
            // Untimed: fresh inputs, one run, the closed form on every rank.
            if (c != nullptr) {
              def.fill(b.host);
              b.upload();
              launch();
              c->synchronize();
              b.download();
              wrong = def.wrong(b.host);
            }
            wrong = sum_over_world(world, wrong);
          }
          if (!lead) continue;

          BenchResult r;
          r.axis = axis;
          r.group_size = n;
          r.groups = group_count;
          r.span = span;
          r.collective = collective;
          r.dtype = s.dtype;
          r.op = s.op;
          r.bytes = b.host.counts.bytes;
          r.count = b.host.counts.count;
          r.timing = s.timing;
          r.stats = stats;
          r.time_us = time_of(s.timing, stats);
          r.algbw_gbps = algbw_gbps(r.bytes, r.time_us);
          r.busbw_gbps = busbw_gbps(collective, r.algbw_gbps, n);
          r.wrong = wrong;
          r.checked = s.check;
          axis_wrong += r.wrong;
          axis_busbw += r.busbw_gbps;
          collective_busbw += r.busbw_gbps;
          ++collective_rows;
          sink.write(result_record(r));
          if (s.print_tables) {
            progress.clear();
            out << table_row(r) << std::flush;
          }
          outcome.sweep.results.push_back(std::move(r));
        }
        if (print && !too_small.empty()) {
          // The smallest size that leaves a rank an element: one item, or one per rank of the group where the
          // collective splits its buffer over them.
          const std::int64_t smallest = def.counts(1, item, n).count == 0 ? n * item : item;
          out << "# " << def.name() << ": sizes below " << format_size(smallest) << " skipped (" << too_small.size()
              << "): no element per rank\n";
        }
        // As nccl-tests ends the table of its one collective: the mean busbw of its rows.
        if (print && collective_rows > 0) {
          out << avg_busbw_line(collective_busbw / static_cast<double>(collective_rows)) << std::flush;
        }
      }
      all_wrong += axis_wrong;
      busbw_total += axis_busbw;
      if (print) {
        progress.clear();
        out << table_footer(axis_wrong, s.check) << std::flush;
      }
    }
  }
  if (lead) progress.clear();

  const bool ok = all_wrong == 0;
  outcome.exit_code = ok ? 0 : 1;
  if (lead) {
    const auto rows = static_cast<std::int64_t>(outcome.sweep.results.size());
    const double avg = rows > 0 ? busbw_total / static_cast<double>(rows) : 0.0;
    const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
    outcome.summary = summary_record(ok, rows, all_wrong, avg, elapsed);
    if (!s.defer_summary) sink.write(outcome.summary);
    outcome.sweep.summary_seen = true;
    if (s.print_tables) {
      out << "#\n# " << rows << " results";
      if (s.check) out << ", " << all_wrong << " wrong elements: " << (ok ? "OK" : "FAILED");
      out << "\n" << std::flush;
    }
  }
  return outcome;
}

}  // namespace meshloom::launcher
