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

#include "meshloom/error.hpp"
#include "sizes.hpp"
#include "text_format.hpp"

namespace meshloom::launcher {

namespace {

using Clock = std::chrono::steady_clock;
using Bytes = std::vector<std::byte>;

std::size_t usize(std::int64_t v) { return static_cast<std::size_t>(v); }

// ---- Data whose exact result is known ----------------------------------------------------------------------

// Element `index` of rank `rank` for collectives that only move data: itemsize bytes of a mixed 64-bit value, so
// that a block in the wrong place or from the wrong rank is caught.
std::uint64_t mix(std::uint64_t rank, std::uint64_t index) noexcept {
  std::uint64_t z = rank * 0x9E3779B97F4A7C15ULL + index + 0x632BE59BD9B4E019ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

void put_moved(Bytes& buf, std::size_t element, std::size_t item, std::uint64_t rank, std::uint64_t index) {
  const std::uint64_t v = mix(rank, index);
  std::memcpy(buf.data() + element * item, &v, item);
}

bool same_moved(const Bytes& buf, std::size_t element, std::size_t item, std::uint64_t rank, std::uint64_t index) {
  const std::uint64_t v = mix(rank, index);
  return std::memcmp(buf.data() + element * item, &v, item) == 0;
}

// Element `index` of rank `rank` (of n) for reducing collectives: small integers whose reduction is exact in every
// type (integer sums wrap the same way on both sides).
std::int64_t reduced_input(ReduceOp op, std::int64_t rank, std::int64_t index, std::int64_t n) {
  switch (op) {
    case ReduceOp::Sum: return (index * 7 + rank * 3) % 11;
    case ReduceOp::Avg: return (index % 7) + n + 2 * rank - (n - 1);  // the ranks' offsets cancel: sum = n * base
    case ReduceOp::Max:
    case ReduceOp::Min: return (index * 5 + rank * 3) % 17;
    case ReduceOp::Product: return index % n == rank ? 2 : 1;
  }
  return 0;
}

template <class T>
T combine(ReduceOp op, T a, T b) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: return static_cast<T>(a + b);
    case ReduceOp::Max: return std::max(a, b);
    case ReduceOp::Min: return std::min(a, b);
    case ReduceOp::Product: return static_cast<T>(a * b);
  }
  return a;
}

template <class T>
T expected_reduction(ReduceOp op, std::int64_t index, std::int64_t n) {
  T acc = static_cast<T>(reduced_input(op, 0, index, n));
  for (std::int64_t r = 1; r < n; ++r) acc = combine(op, acc, static_cast<T>(reduced_input(op, r, index, n)));
  if (op == ReduceOp::Avg) acc = static_cast<T>(acc / static_cast<T>(n));
  return acc;
}

// Calls f(T{}) with the C++ type of a dtype the backends reduce.
template <class F>
void with_reducible_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Float32: f(float{}); return;
    case DType::Float64: f(double{}); return;
    case DType::Int32: f(std::int32_t{}); return;
    case DType::Int64: f(std::int64_t{}); return;
    case DType::Int8: f(std::int8_t{}); return;
    case DType::UInt8: f(std::uint8_t{}); return;
    default: break;
  }
  raise(ErrorKind::ValueError, "--dtype " + std::string(to_string(dtype)) +
                                   ": the mpi backend cannot reduce it (all_reduce, reduce_scatter); use float32, "
                                   "float64, int32, int64, int8 or uint8, or leave those collectives out");
}

bool reducible(DType dtype) {
  switch (dtype) {
    case DType::Float32: case DType::Float64: case DType::Int32: case DType::Int64: case DType::Int8: case DType::UInt8:
      return true;
    default: return false;
  }
}

template <class T>
void put_reduced(Bytes& buf, std::size_t element, ReduceOp op, std::int64_t rank, std::int64_t index, std::int64_t n) {
  const T v = static_cast<T>(reduced_input(op, rank, index, n));
  std::memcpy(buf.data() + element * sizeof(T), &v, sizeof(T));
}

template <class T>
bool same_reduced(const Bytes& buf, std::size_t element, ReduceOp op, std::int64_t index, std::int64_t n) {
  T got;
  std::memcpy(&got, buf.data() + element * sizeof(T), sizeof(T));
  const T want = expected_reduction<T>(op, index, n);
  return std::memcmp(&got, &want, sizeof(T)) == 0;
}

// The buffers of one collective at one size on one rank: host bytes (filled and checked here), and, for a backend
// whose memory is not the host's, its copies of them (what the collective is given).
struct Buffers {
  Bytes in, out;
  SizeCounts counts;
  std::size_t item = 0;
  std::unique_ptr<BackendBuffer> device_in, device_out;

  [[nodiscard]] void* in_data() { return device_in ? device_in->data() : in.data(); }
  [[nodiscard]] void* out_data() { return device_out ? device_out->data() : out.data(); }
  // Host -> backend memory (before the timed region), and the output back (after it).
  void upload() {
    if (device_in) device_in->upload(in.data(), in.size());
    if (device_out) device_out->upload(out.data(), out.size());
  }
  void download() {
    if (device_in) device_in->download(in.data(), in.size());  // broadcast works in place
    if (device_out) device_out->download(out.data(), out.size());
  }
};

// Fills the inputs (and poisons the outputs) with the known data of `collective` for local rank `me` of n.
void fill(Buffers& b, BenchCollective collective, DType dtype, ReduceOp op, std::int64_t me, std::int64_t n) {
  const auto urank = static_cast<std::uint64_t>(me);
  const std::size_t item = b.item;
  std::fill(b.out.begin(), b.out.end(), std::byte{0xA5});
  switch (collective) {
    case BenchCollective::AllReduce:
    case BenchCollective::ReduceScatter:
      with_reducible_type(dtype, [&](auto tag) {
        using T = decltype(tag);
        const std::size_t elements = b.in.size() / sizeof(T);
        for (std::size_t i = 0; i < elements; ++i) put_reduced<T>(b.in, i, op, me, static_cast<std::int64_t>(i), n);
      });
      break;
    case BenchCollective::AllGather:
    case BenchCollective::AllToAll: {
      const std::size_t elements = b.in.size() / item;
      for (std::size_t i = 0; i < elements; ++i) put_moved(b.in, i, item, urank, i);
      break;
    }
    case BenchCollective::Broadcast: {
      // In place: rank 0 holds the data, the others a different pattern.
      const std::size_t elements = b.in.size() / item;
      for (std::size_t i = 0; i < elements; ++i) put_moved(b.in, i, item, me == 0 ? 0 : urank + 1000003, i);
      break;
    }
  }
}

// Wrong elements of this rank's output after a run on fill()ed buffers.
std::int64_t count_wrong(const Buffers& b, BenchCollective collective, DType dtype, ReduceOp op, std::int64_t me,
                         std::int64_t n) {
  std::int64_t wrong = 0;
  const std::size_t item = b.item;
  const auto count = usize(b.counts.count);
  switch (collective) {
    case BenchCollective::AllReduce:
    case BenchCollective::ReduceScatter:
      with_reducible_type(dtype, [&](auto tag) {
        using T = decltype(tag);
        const std::int64_t offset = collective == BenchCollective::ReduceScatter ? me * b.counts.count : 0;
        for (std::size_t i = 0; i < count; ++i) {
          if (!same_reduced<T>(b.out, i, op, offset + static_cast<std::int64_t>(i), n)) ++wrong;
        }
      });
      break;
    case BenchCollective::AllGather:
      for (std::size_t r = 0; r < usize(n); ++r) {
        for (std::size_t i = 0; i < count; ++i) {
          if (!same_moved(b.out, r * count + i, item, r, i)) ++wrong;
        }
      }
      break;
    case BenchCollective::AllToAll:
      // Block j of my output is block `me` of rank j's input.
      for (std::size_t j = 0; j < usize(n); ++j) {
        for (std::size_t i = 0; i < count; ++i) {
          if (!same_moved(b.out, j * count + i, item, j, usize(me) * count + i)) ++wrong;
        }
      }
      break;
    case BenchCollective::Broadcast:
      for (std::size_t i = 0; i < count; ++i) {
        if (!same_moved(b.in, i, item, 0, i)) ++wrong;
      }
      break;
  }
  return wrong;
}

void run_once(comm::Communicator& c, BenchCollective collective, Buffers& b, DType dtype, ReduceOp op) {
  const comm::ConstBuffer in{b.in_data(), usize(b.counts.in_count), dtype};
  const comm::Buffer out{b.out_data(), usize(b.counts.out_count), dtype};
  switch (collective) {
    case BenchCollective::AllReduce: c.all_reduce(in, out, op); break;
    case BenchCollective::AllGather: c.all_gather(in, out); break;
    case BenchCollective::ReduceScatter: c.reduce_scatter(in, out, op); break;
    case BenchCollective::AllToAll: c.all_to_all(in, out); break;
    case BenchCollective::Broadcast: c.broadcast(comm::Buffer{b.in_data(), usize(b.counts.in_count), dtype}, 0); break;
  }
}

double sum_over_world(comm::Communicator& world, double value) {
  double out = 0;
  world.all_reduce(comm::ConstBuffer{&value, 1, DType::Float64}, comm::Buffer{&out, 1, DType::Float64}, ReduceOp::Sum);
  return out;
}

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
    (mesh.size(ref) > 1 ? sel.run : sel.skipped).push_back(axis);
  }
  return sel;
}

void validate_bench_settings(const BenchSettings& s, const DeviceMesh& mesh, const AxisSelection& axes,
                             const std::string& backend) {
  if (s.collectives.empty()) raise(ErrorKind::ValueError, "--collectives: no collective given");
  if (s.sizes.empty()) raise(ErrorKind::ValueError, "no message size to run");
  if (s.iters < 1) raise(ErrorKind::ValueError, "-n " + std::to_string(s.iters) + ": at least 1 iteration");
  if (s.warmup_iters < 0) raise(ErrorKind::ValueError, "-w " + std::to_string(s.warmup_iters) + ": must be >= 0");
  if (!(s.timeout_s >= 0) || s.timeout_s > 1e6) {
    raise(ErrorKind::ValueError, "--timeout " + std::to_string(s.timeout_s) + ": seconds in 0..1000000 (0 = none)");
  }
  for (const auto c : s.collectives) {
    if (reduces(c) && !reducible(s.dtype) && (backend == "mpi" || s.check)) {
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

BenchOutcome run_bench(comm::Communicator& world, const comm::MeshGroups& groups, const DeviceMesh& mesh,
                       const BenchSettings& s, BenchRunInfo info, std::ostream& out, JsonlSink& sink,
                       LiveBackend* backend) {
  const bool staged = backend != nullptr && !backend->host_memory();
  const auto started = Clock::now();
  const bool lead = world.rank() == 0;
  const AxisSelection axes = select_axes(mesh, s.axes);
  const std::int64_t item = itemsize(s.dtype);

  info.axes = axes.run;
  info.skipped_axes = axes.skipped;
  info.collectives.clear();
  for (const auto c : s.collectives) info.collectives.emplace_back(to_string(c));
  info.sizes = s.sizes;
  info.dtype = s.dtype;
  info.op = s.op;
  info.warmup_iters = s.warmup_iters;
  info.iters = s.iters;
  info.check = s.check;
  info.timeout_s = s.timeout_s;

  BenchOutcome outcome;
  outcome.sweep.backend = info.backend;
  outcome.sweep.world = info.world;
  outcome.sweep.mesh_shape = info.mesh_shape;
  outcome.sweep.mesh_names = info.mesh_names;

  if (lead) {
    sink.write(config_record(info));
    if (s.print_tables) {
      std::string h;
      h += "# meshloom-launch " + info.command + ": backend " + info.backend + " (" +
           (info.backend_library.empty() ? info.mpi_library : info.backend_library + "; " + info.mpi_library) +
           "), world " +
           std::to_string(info.world) + ", host " + info.host + ", meshloom " + info.meshloom_version + "\n";
      h += "# mesh " + mesh_text(mesh) + ", layout " + to_string(mesh.layout());
      if (!mesh.flattened_names().empty()) h += ", flattened " + join(mesh.flattened_names(), {.separator = ", "});
      h += "\n";
      h += "# sizes " + format_size(s.sizes.front()) + " .. " + format_size(s.sizes.back()) + " (" +
           std::to_string(s.sizes.size()) + " sizes), dtype " + std::string(to_string(s.dtype)) + ", op " +
           std::string(to_string(s.op)) + ", warm-up " + std::to_string(s.warmup_iters) + ", iterations " +
           std::to_string(s.iters) + ", check " + (s.check ? "on" : "off") + ", timeout " +
           (s.timeout_s > 0 ? seconds_text(s.timeout_s) : std::string("none")) + "\n";
      h += "# collectives " + join(info.collectives, {.separator = ", "}) + "\n";
      h += "# axes " + (axes.run.empty() ? std::string("none") : join(axes.run, {.separator = ", "}));
      if (!axes.skipped.empty()) h += "; skipped (size 1): " + join(axes.skipped, {.separator = ", "});
      h += "\n# time: mean per iteration over every rank; GB = 1e9 bytes; busbw = algbw * bus factor\n";
      out << h << std::flush;
    }
  }

  std::int64_t total_rows = 0;
  for (const auto& axis : axes.run) {
    const std::int64_t n = mesh.size(AxisRef{axis});
    for (const auto c : s.collectives) {
      for (const auto size : s.sizes) total_rows += size_counts(c, size, item, n).count > 0 ? 1 : 0;
    }
  }
  const Progress progress(lead && ::isatty(STDERR_FILENO) == 1, total_rows);

  std::int64_t done = 0;
  std::int64_t all_wrong = 0;
  double busbw_total = 0;
  for (const auto& axis : axes.run) {
    const AxisRef ref = axis;
    const std::int64_t n = mesh.size(ref);
    const std::int64_t group_count = mesh.groups(ref).shape.front();
    comm::Communicator* c = groups.get(axis);
    const std::int64_t me = c != nullptr ? c->rank() : -1;
    std::int64_t axis_wrong = 0;
    double axis_busbw = 0;
    std::int64_t axis_rows = 0;
    if (lead && s.print_tables) {
      out << "#\n# axis " << axis << ": " << group_count << (group_count == 1 ? " group" : " groups") << " of " << n
          << " ranks, run at the same time\n"
          << table_header() << std::flush;
    }
    for (const auto collective : s.collectives) {
      if (lead && s.print_tables) out << "# " << to_string(collective) << "\n";
      std::vector<std::int64_t> too_small;
      for (const auto size : s.sizes) {
        Buffers b;
        b.item = usize(item);
        b.counts = size_counts(collective, size, item, n);
        if (b.counts.count == 0) {
          too_small.push_back(size);
          continue;
        }
        if (s.fault) s.fault->maybe_fire(world.rank(), done);
        if (lead) {
          progress.show(done, axis + " " + std::string(to_string(collective)) + " " + format_size(size));
        }
        double local_us = 0;
        std::int64_t local_wrong = 0;
        if (c != nullptr) {
          b.in.resize(usize(b.counts.in_count) * b.item);
          b.out.resize(collective == BenchCollective::Broadcast ? 0 : usize(b.counts.out_count) * b.item);
          fill(b, collective, s.dtype, s.op, me, n);
          if (staged) {
            b.device_in = backend->allocate(b.in.size());
            if (!b.out.empty()) b.device_out = backend->allocate(b.out.size());
            b.upload();
          }
        }
        world.barrier();
        if (c != nullptr) {
          for (std::int64_t i = 0; i < s.warmup_iters; ++i) run_once(*c, collective, b, s.dtype, s.op);
          c->synchronize();
        }
        world.barrier();
        if (c != nullptr) {
          const auto t0 = Clock::now();
          for (std::int64_t i = 0; i < s.iters; ++i) run_once(*c, collective, b, s.dtype, s.op);
          c->synchronize();
          const auto t1 = Clock::now();
          local_us = std::chrono::duration<double, std::micro>(t1 - t0).count() / static_cast<double>(s.iters);
        }
        const double time_sum = sum_over_world(world, local_us);
        const double ranks = sum_over_world(world, c != nullptr ? 1.0 : 0.0);
        if (s.check) {
          if (c != nullptr) {
            fill(b, collective, s.dtype, s.op, me, n);
            b.upload();
            run_once(*c, collective, b, s.dtype, s.op);
            c->synchronize();
            b.download();
            local_wrong = count_wrong(b, collective, s.dtype, s.op, me, n);
          }
          local_wrong = sum_over_world(world, local_wrong);
        }
        ++done;
        if (!lead) continue;

        BenchResult r;
        r.axis = axis;
        r.group_size = n;
        r.groups = group_count;
        r.collective = collective;
        r.dtype = s.dtype;
        r.op = s.op;
        r.bytes = b.counts.bytes;
        r.count = b.counts.count;
        r.time_us = ranks > 0 ? time_sum / ranks : 0;
        r.algbw_gbps = algbw_gbps(r.bytes, r.time_us);
        r.busbw_gbps = busbw_gbps(collective, r.algbw_gbps, n);
        r.wrong = local_wrong;
        r.checked = s.check;
        axis_wrong += r.wrong;
        axis_busbw += r.busbw_gbps;
        ++axis_rows;
        sink.write(result_record(r));
        if (s.print_tables) {
          progress.clear();
          out << table_row(r) << std::flush;
        }
        outcome.sweep.results.push_back(std::move(r));
      }
      if (lead && s.print_tables && !too_small.empty()) {
        out << "# " << to_string(collective) << ": sizes below " << format_size(n * item) << " skipped ("
            << too_small.size() << "): no element per rank\n";
      }
    }
    all_wrong += axis_wrong;
    busbw_total += axis_busbw;
    if (lead && s.print_tables) {
      progress.clear();
      out << table_footer(axis_wrong, s.check, axis_rows > 0 ? axis_busbw / static_cast<double>(axis_rows) : 0.0)
          << std::flush;
    }
  }
  if (lead) progress.clear();

  const bool ok = all_wrong == 0;
  outcome.exit_code = ok ? 0 : 1;
  if (lead) {
    const auto rows = static_cast<std::int64_t>(outcome.sweep.results.size());
    const double avg = rows > 0 ? busbw_total / static_cast<double>(rows) : 0.0;
    const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
    sink.write(summary_record(ok, rows, all_wrong, avg, elapsed));
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
