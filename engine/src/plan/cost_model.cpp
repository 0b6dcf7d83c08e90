#include "meshloom/plan/cost_model.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <functional>
#include <tuple>
#include <cmath>
#include <limits>
#include <utility>

#include "meshloom/error.hpp"

namespace meshloom {

namespace {
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The checks every send_cost makes: an axis of the mesh, bytes >= 0. ValueError naming the value otherwise.
void check_send(const std::vector<std::int64_t>& mesh_shape, std::size_t axis, std::int64_t bytes) {
  if (axis >= mesh_shape.size()) {
    raise(ErrorKind::ValueError, "send on axis " + std::to_string(axis) + ": out of range for a mesh of " +
                                     std::to_string(mesh_shape.size()) + " axes");
  }
  if (bytes < 0) raise(ErrorKind::ValueError, "send of " + std::to_string(bytes) + " bytes: must be >= 0");
}
}  // namespace

double CostModel::send_cost(const std::vector<std::int64_t>& mesh_shape, std::size_t axis, std::int64_t bytes) const {
  check_send(mesh_shape, axis, bytes);
  return mesh_shape[axis] == 1 ? 0.0 : kInfinity;
}

std::optional<double> CostModel::flattened_step_cost(const StepCostInput& /*step*/,
                                                     const std::vector<std::size_t>& /*axes*/) const {
  return std::nullopt;
}

// ---- fixed ------------------------------------------------------------------------------------------------

FixedCostModel::FixedCostModel(FixedWeights weights) : weights_(weights) {
  for (const double w : {weights.all_reduce, weights.all_to_all, weights.all_gather, weights.reduce_scatter,
                         weights.chunk, weights.send}) {
    if (!std::isfinite(w) || w < 0) raise(ErrorKind::ValueError, "cost weight " + std::to_string(w) + " must be finite and >= 0");
  }
}

double FixedCostModel::step_cost(const StepCostInput& step) const {
  switch (step.collective) {
    case Collective::AllReduce: return weights_.all_reduce;
    case Collective::AllToAll: return weights_.all_to_all;
    case Collective::AllGather: return weights_.all_gather;
    case Collective::ReduceScatter: return weights_.reduce_scatter;
    case Collective::Chunk:
    case Collective::ReplicateToPartial: return weights_.chunk;
    case Collective::ShardToPartial: return 0.0;
  }
  return kInfinity;
}

double FixedCostModel::send_cost(const std::vector<std::int64_t>& mesh_shape, std::size_t axis,
                                 std::int64_t bytes) const {
  check_send(mesh_shape, axis, bytes);
  return mesh_shape[axis] == 1 ? 0.0 : weights_.send;
}

// ---- comm (PyTorch's _collective_utils: MeshTopoInfo, allgather_cost, allreduce_cost, reduce_scatter_cost) ----

MeshTopology mesh_topology(const std::vector<std::int64_t>& mesh_shape, std::int64_t devices_per_host) {
  if (devices_per_host < 1) {
    raise(ErrorKind::ValueError, "devices_per_host " + std::to_string(devices_per_host) + " must be >= 1");
  }
  MeshTopology t;
  t.bandwidth_gbps.assign(mesh_shape.size(), 87.7);
  t.latency_us.assign(mesh_shape.size(), 0.6);
  // Once the running product passes devices_per_host every outer axis crosses hosts too, so the product
  // saturates there instead of overflowing on huge meshes.
  std::int64_t total = 1;
  for (std::size_t axis = mesh_shape.size(); axis-- > 0;) {
    const std::int64_t size = std::max<std::int64_t>(1, mesh_shape[axis]);
    total = total > devices_per_host / size ? devices_per_host + 1 : total * size;
    if (total > devices_per_host) {
      t.bandwidth_gbps[axis] *= 0.22;
      t.latency_us[axis] = 2.7;
    }
  }
  return t;
}

CommCostModel::CommCostModel(const std::vector<std::int64_t>& mesh_shape, std::int64_t devices_per_host)
    : topology_(mesh_topology(mesh_shape, devices_per_host)) {}

namespace {
// A ring collective of `hops` hops moving `gb` GiB over an axis of n devices, in microseconds: 6.6 us base,
// the axis' latency per hop, and gb * hops / n at its bandwidth. Evaluated in PyTorch's order of operations so
// that costs match to the last bit.
double ring_cost(double gb, std::int64_t n, std::int64_t hops, double latency_us, double bandwidth_gbps) {
  const double latency = 6.6 + static_cast<double>(hops) * latency_us;
  const double bw = (gb * static_cast<double>(hops) / static_cast<double>(n)) / bandwidth_gbps;
  return latency + bw * 1e6;
}
}  // namespace

double CommCostModel::step_cost(const StepCostInput& step) const {
  const std::int64_t n = (*step.mesh_shape)[step.axis];
  const double lat = topology_.latency_us[step.axis];
  const double bw = topology_.bandwidth_gbps[step.axis];
  // Bytes of the source state's (evenly divided) local shard, in GiB.
  const double gb = static_cast<double>(step.itemsize * step.global_numel) / static_cast<double>(step.source_shards) /
                    1024 / 1024 / 1024;
  switch (step.collective) {
    case Collective::AllGather: return ring_cost(gb * static_cast<double>(n), n, n - 1, lat, bw);
    case Collective::AllToAll: return ring_cost(gb, n, n - 1, lat, bw) + 1.0;  // all-gather cost + 1: favours all-gather
    case Collective::AllReduce: return ring_cost(gb, n, 2 * (n - 1), lat, bw);
    case Collective::ReduceScatter: return ring_cost(gb, n, n - 1, lat, bw);
    case Collective::Chunk:
    case Collective::ReplicateToPartial:
    case Collective::ShardToPartial: return 0.0;
  }
  return kInfinity;
}

double CommCostModel::send_cost(const std::vector<std::int64_t>& mesh_shape, std::size_t axis,
                                std::int64_t bytes) const {
  check_send(mesh_shape, axis, bytes);
  if (axis >= topology_.latency_us.size()) {
    raise(ErrorKind::ValueError, "send on axis " + std::to_string(axis) + ": the comm model was built for a mesh of " +
                                     std::to_string(topology_.latency_us.size()) + " axes");
  }
  if (mesh_shape[axis] == 1) return 0.0;
  const double gb = static_cast<double>(bytes) / 1024 / 1024 / 1024;
  return ring_cost(gb, 1, 1, topology_.latency_us[axis], topology_.bandwidth_gbps[axis]);
}

// ---- calibrated -------------------------------------------------------------------------------------------

double bus_factor(std::string_view collective, std::int64_t n) {
  const double nd = static_cast<double>(n);
  if (collective == "all_reduce") return 2.0 * (nd - 1) / nd;
  if (collective == "all_gather" || collective == "reduce_scatter" || collective == "all_to_all") return (nd - 1) / nd;
  if (collective == "broadcast") return 1.0;
  raise(ErrorKind::ValueError, "unknown collective '" + std::string(collective) +
                                   "' (expected all_reduce, all_gather, reduce_scatter, all_to_all or broadcast)");
}

std::string to_string(const GroupShape& shape) {
  return std::to_string(shape.n) + (shape.n == 1 ? " rank" : " ranks") + " on " + std::to_string(shape.hosts) +
         (shape.hosts == 1 ? " host" : " hosts") + " (" + std::to_string(shape.ranks_per_host) + " per host)";
}

std::optional<std::string> calibration_mismatch(const Calibration& calibration,
                                                const std::vector<std::int64_t>& mesh_shape, bool extrapolate) {
  const auto shape_text = [](const std::vector<std::int64_t>& v) {
    std::string out = "(";
    for (std::size_t i = 0; i < v.size(); ++i) out += (i > 0 ? ", " : "") + std::to_string(v[i]);
    return out + ")";
  };
  if (calibration.groups.empty()) {
    if (calibration.mesh_shape.empty() || calibration.mesh_shape == mesh_shape) return std::nullopt;
    return "the calibration was measured on a " + shape_text(calibration.mesh_shape) +
           " mesh and holds per-axis fits only, which price that mesh alone, not " + shape_text(mesh_shape);
  }
  if (extrapolate) return std::nullopt;
  std::int64_t ranks = 1;
  for (const std::int64_t s : mesh_shape) {
    if (s < 1 || __builtin_mul_overflow(ranks, s, &ranks)) return "the mesh " + shape_text(mesh_shape) + " is not a mesh";
  }
  const auto placed = static_cast<std::int64_t>(calibration.rank_hosts.size());
  if (ranks <= placed) return std::nullopt;
  return "the calibration's job placed " + std::to_string(placed) + (placed == 1 ? " rank" : " ranks") +
         " and this mesh holds " + std::to_string(ranks) + ": calibrate on at least " + std::to_string(ranks) +
         " ranks, or extrapolate";
}

std::vector<GroupShape> axis_group_shapes(const std::vector<std::int64_t>& mesh_shape, std::size_t axis,
                                          const std::vector<std::int64_t>& rank_hosts, bool repeat_hosts) {
  return group_shapes(mesh_shape, {axis}, rank_hosts, repeat_hosts);
}

std::vector<GroupShape> group_shapes(const std::vector<std::int64_t>& mesh_shape, const std::vector<std::size_t>& axes,
                                     const std::vector<std::int64_t>& rank_hosts, bool repeat_hosts) {
  if (axes.empty()) raise(ErrorKind::ValueError, "a group needs at least one mesh axis");
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] >= mesh_shape.size()) {
      raise(ErrorKind::ValueError, "axis " + std::to_string(axes[i]) + " is out of range for a mesh of " +
                                       std::to_string(mesh_shape.size()) + " axes");
    }
    if (i > 0 && axes[i] <= axes[i - 1]) {
      raise(ErrorKind::ValueError, "the axes of a group must ascend (axis " + std::to_string(axes[i]) + " after " +
                                       std::to_string(axes[i - 1]) + ")");
    }
  }
  std::int64_t ranks = 1;
  for (const std::int64_t size : mesh_shape) {
    if (size < 1) raise(ErrorKind::ValueError, "mesh axis size " + std::to_string(size) + " must be >= 1");
    if (__builtin_mul_overflow(ranks, size, &ranks)) raise(ErrorKind::ValueError, "the mesh holds more than 2^63-1 ranks");
  }
  const auto world = static_cast<std::int64_t>(rank_hosts.size());
  if (world == 0 || (ranks > world && !repeat_hosts)) {
    raise(ErrorKind::ValueError, "the mesh holds " + std::to_string(ranks) + " ranks but the calibrated job placed " +
                                     std::to_string(world) + " (rank_hosts)");
  }
  std::int64_t host_count = 0;
  for (const std::int64_t h : rank_hosts) host_count = std::max(host_count, h + 1);
  const auto host_of = [&](std::int64_t r) {
    return rank_hosts[static_cast<std::size_t>(r % world)] + (r / world) * host_count;
  };
  // Row-major strides; a group is the ranks whose coordinates differ on `axes` only.
  std::vector<std::int64_t> stride(mesh_shape.size(), 1);
  for (std::size_t a = mesh_shape.size(); a-- > 1;) stride[a - 1] = stride[a] * mesh_shape[a];
  std::vector<bool> in_group(mesh_shape.size(), false);
  std::int64_t n = 1;
  for (const std::size_t a : axes) {
    in_group[a] = true;
    n *= mesh_shape[a];
  }
  // The offsets of a group's members from its first rank.
  std::vector<std::int64_t> offsets{0};
  for (const std::size_t a : axes) {
    std::vector<std::int64_t> grown;
    for (std::int64_t k = 0; k < mesh_shape[a]; ++k) {
      for (const std::int64_t o : offsets) grown.push_back(o + k * stride[a]);
    }
    offsets = std::move(grown);
  }
  std::vector<GroupShape> shapes;
  std::vector<std::int64_t> hosts(static_cast<std::size_t>(n));
  std::vector<std::int64_t> coord(mesh_shape.size(), 0);  // the first rank's coordinate, zero on `axes`
  for (;;) {
    std::int64_t first = 0;
    for (std::size_t a = 0; a < mesh_shape.size(); ++a) first += coord[a] * stride[a];
    for (std::size_t k = 0; k < offsets.size(); ++k) hosts[k] = host_of(first + offsets[k]);
    std::sort(hosts.begin(), hosts.end());
    GroupShape shape{.n = n, .hosts = 0, .ranks_per_host = 0};
    for (std::size_t i = 0; i < hosts.size();) {
      std::size_t j = i;
      while (j < hosts.size() && hosts[j] == hosts[i]) ++j;
      ++shape.hosts;
      shape.ranks_per_host = std::max(shape.ranks_per_host, static_cast<std::int64_t>(j - i));
      i = j;
    }
    if (std::find(shapes.begin(), shapes.end(), shape) == shapes.end()) shapes.push_back(shape);
    // The next first rank: count over the axes outside the group, last fastest.
    std::size_t a = mesh_shape.size();
    while (a-- > 0) {
      if (in_group[a]) continue;
      if (++coord[a] < mesh_shape[a]) break;
      coord[a] = 0;
    }
    if (a == static_cast<std::size_t>(-1)) break;
  }
  std::sort(shapes.begin(), shapes.end());
  return shapes;
}

std::string_view to_string(CurveModel model) noexcept {
  return model == CurveModel::AlphaBeta ? "alpha_beta" : "piecewise";
}

namespace {
// The straight line through (x0, y0) and (x1, y1) in log(x), log(y), at x (x0 < x1, every value > 0).
double log_log(double x0, double y0, double x1, double y1, double x) noexcept {
  const double t = (std::log(x) - std::log(x0)) / (std::log(x1) - std::log(x0));
  return std::exp(std::log(y0) + t * (std::log(y1) - std::log(y0)));
}
}  // namespace

double piecewise_time_us(const std::vector<CurvePoint>& points, double bytes) noexcept {
  if (points.empty()) return 0.0;
  const CurvePoint& first = points.front();
  const CurvePoint& last = points.back();
  if (!(bytes > first.bytes)) return first.time_us;  // the latency floor (and NaN)
  if (bytes >= last.bytes) {
    // The extra bytes at the largest point's algbw, or at the last segment's bandwidth where that is slower still:
    // never faster than the largest size ran (a last segment that barely rises, by noise, would otherwise price
    // them at an absurd bandwidth, cheaper than a flat one).
    const double algbw = last.time_us * bytes / last.bytes;
    if (points.size() >= 2) {
      const CurvePoint& before = points[points.size() - 2];
      const double segment =
          last.time_us + (bytes - last.bytes) * (last.time_us - before.time_us) / (last.bytes - before.bytes);
      return std::max(algbw, segment);
    }
    return algbw;
  }
  const auto upper = std::upper_bound(points.begin(), points.end(), bytes,
                                      [](double b, const CurvePoint& p) { return b < p.bytes; });
  return log_log(upper[-1].bytes, upper[-1].time_us, upper->bytes, upper->time_us, bytes);
}

namespace {
// A unique id per calibrated model (CalibratedCostModel::pricing_of's per-thread memo).
std::uint64_t next_model_id() {
  static std::atomic<std::uint64_t> next{1};
  return next++;
}

// The factor a curve of `collective` on n ranks divides its bytes by: the bus factor, or 1 for a group of one rank
// (calibrate fits a one-rank group by algbw: its local copy).
double curve_factor(std::string_view collective, std::int64_t n) { return n == 1 ? 1.0 : bus_factor(collective, n); }
}  // namespace

double as_run_factor(const std::vector<AsRunPoint>& points, double bytes) noexcept {
  if (points.empty()) return 1.0;
  if (!(bytes > points.front().bytes)) return points.front().factor;  // below the first (and NaN)
  if (bytes >= points.back().bytes) return points.back().factor;
  const auto upper = std::upper_bound(points.begin(), points.end(), bytes,
                                      [](double b, const AsRunPoint& p) { return b < p.bytes; });
  return log_log(upper[-1].bytes, upper[-1].factor, upper->bytes, upper->factor, bytes);
}

double benchmark_time_us(const GroupCurve& curve, double bytes) {
  if (curve.model == CurveModel::AlphaBeta && curve.fit) {
    return curve.fit->alpha_us + curve_factor(curve.collective, curve.shape.n) * bytes / (curve.fit->busbw_gbps * 1e3);
  }
  return piecewise_time_us(curve.points, bytes);
}

double curve_time_us(const GroupCurve& curve, double bytes) {
  return benchmark_time_us(curve, bytes) * as_run_factor(curve.as_run, bytes);
}

CalibratedCostModel::CalibratedCostModel(Calibration calibration, const std::vector<std::string>& mesh_names,
                                         CalibratedOptions options)
    : calibration_(std::move(calibration)), names_(mesh_names), options_(options), id_(next_model_id()) {}

const GroupCurve* find_curve(const Calibration& calibration, std::string_view collective,
                             const GroupShape& shape) noexcept {
  for (const auto& c : calibration.groups) {
    if (c.collective == collective && c.shape == shape) return &c;
  }
  return nullptr;
}

std::optional<std::vector<int>> parse_cpu_list(std::string_view text) {
  std::vector<int> cpus;
  const auto number = [&text](std::size_t& at) -> std::optional<int> {
    const std::size_t begin = at;
    int value = 0;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
      if (value > 99999) return std::nullopt;  // more CPUs than any machine has
      value = value * 10 + (text[at] - '0');
      ++at;
    }
    if (at == begin) return std::nullopt;
    return value;
  };
  std::size_t at = 0;
  while (true) {
    const std::optional<int> first = number(at);
    if (!first || (!cpus.empty() && *first <= cpus.back())) return std::nullopt;
    int last = *first;
    if (at < text.size() && text[at] == '-') {
      ++at;
      const std::optional<int> end = number(at);
      if (!end || *end <= *first) return std::nullopt;
      last = *end;
    }
    for (int c = *first; c <= last; ++c) cpus.push_back(c);
    if (at == text.size()) return cpus;
    if (text[at] != ',') return std::nullopt;
    ++at;
  }
}

const AxisCorrection* find_axis_correction(const Calibration& calibration, const std::vector<std::size_t>& axes,
                                           std::string_view collective) noexcept {
  for (const auto& c : calibration.axis_corrections) {
    if (c.collective == collective && c.axes == axes) return &c;
  }
  return nullptr;
}

namespace {
// The axes of size > 1 of a mesh, in order.
std::vector<std::size_t> grouping_axes(const std::vector<std::int64_t>& shape) {
  std::vector<std::size_t> out;
  for (std::size_t a = 0; a < shape.size(); ++a) {
    if (shape[a] != 1) out.push_back(a);
  }
  return out;
}
}  // namespace

bool same_layout(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) noexcept {
  std::size_t i = 0;
  std::size_t j = 0;
  for (;;) {
    while (i < a.size() && a[i] == 1) ++i;
    while (j < b.size() && b[j] == 1) ++j;
    if (i == a.size() || j == b.size()) return i == a.size() && j == b.size();
    if (a[i++] != b[j++]) return false;
  }
}

const AxisCorrection* correction_on_mesh(const Calibration& calibration, const std::vector<std::int64_t>& mesh_shape,
                                         const std::vector<std::size_t>& axes, std::string_view collective) noexcept {
  if (calibration.axis_corrections.empty() || !same_layout(mesh_shape, calibration.mesh_shape)) return nullptr;
  const std::vector<std::size_t> mine = grouping_axes(mesh_shape);
  const std::vector<std::size_t> theirs = grouping_axes(calibration.mesh_shape);
  std::vector<std::size_t> want;  // the step's axes of size > 1, as the calibrated mesh's
  for (const std::size_t a : axes) {
    if (a >= mesh_shape.size()) return nullptr;
    if (mesh_shape[a] == 1) continue;
    want.push_back(theirs[static_cast<std::size_t>(std::find(mine.begin(), mine.end(), a) - mine.begin())]);
  }
  for (const AxisCorrection& c : calibration.axis_corrections) {
    if (c.collective != collective) continue;
    std::vector<std::size_t> its;
    for (const std::size_t a : c.axes) {
      if (a < calibration.mesh_shape.size() && calibration.mesh_shape[a] != 1) its.push_back(a);
    }
    if (its == want) return &c;
  }
  return nullptr;
}

double axis_correction_factor(const Calibration& calibration, const std::vector<std::int64_t>& mesh_shape,
                              const std::vector<std::size_t>& axes, std::string_view collective,
                              double bytes) noexcept {
  const AxisCorrection* c = correction_on_mesh(calibration, mesh_shape, axes, collective);
  return c == nullptr ? 1.0 : as_run_factor(c->factors, bytes);
}

const GroupCurve* CalibratedCostModel::pricing_curve(std::string_view collective, const GroupShape& shape) const {
  if (const GroupCurve* exact = find_curve(calibration_, collective, shape)) return exact;
  if (!options_.extrapolate) return nullptr;
  // The nearest measured shape of the collective: fewest host differences, then ranks per host, then n (log2).
  const GroupCurve* nearest = nullptr;
  std::tuple<std::int64_t, std::int64_t, double> best{};
  for (const auto& c : calibration_.groups) {
    if (c.collective != collective || (c.shape.n == 1) != (shape.n == 1)) continue;
    const std::tuple<std::int64_t, std::int64_t, double> score{
        std::abs(c.shape.hosts - shape.hosts), std::abs(c.shape.ranks_per_host - shape.ranks_per_host),
        std::abs(std::log2(static_cast<double>(c.shape.n)) - std::log2(static_cast<double>(shape.n)))};
    if (nearest == nullptr || score < best) {
      nearest = &c;
      best = score;
    }
  }
  return nearest;
}

std::optional<double> CalibratedCostModel::predict_us(std::string_view collective, const GroupShape& shape,
                                                      double bytes) const {
  return priced_us(collective, shape, bytes, true);
}

std::optional<double> CalibratedCostModel::benchmark_us(std::string_view collective, const GroupShape& shape,
                                                        double bytes) const {
  return priced_us(collective, shape, bytes, false);
}

std::optional<double> CalibratedCostModel::priced_us(std::string_view collective, const GroupShape& shape,
                                                     double bytes, bool as_run) const {
  const GroupCurve* curve = pricing_curve(collective, shape);
  if (curve == nullptr) return std::nullopt;
  const double t = as_run ? curve_time_us(*curve, bytes) : benchmark_time_us(*curve, bytes);
  if (curve->shape == shape) return t;
  return t * curve_factor(collective, shape.n) / curve_factor(collective, curve->shape.n);
}

namespace {

// The size a per-axis fit of `axis` was measured on, when it is not `n` and the model does not extrapolate: the fit
// does not price an axis of n ranks (a guess). None when it does, or when the calibrated mesh has no such name.
std::optional<std::int64_t> unpriced_fit_size(const Calibration& calibration, const CalibratedOptions& options,
                                              const std::string& axis, std::int64_t n) {
  const auto& names = calibration.mesh_names;
  const auto it = std::find(names.begin(), names.end(), axis);
  if (options.extrapolate || it == names.end() || names.size() != calibration.mesh_shape.size()) return std::nullopt;
  const std::int64_t fitted = calibration.mesh_shape[static_cast<std::size_t>(it - names.begin())];
  return fitted == n ? std::nullopt : std::optional<std::int64_t>(fitted);
}

}  // namespace

double CalibratedCostModel::axis_fit_cost(const StepCostInput& step, double size) const {
  if (step.axis >= names_.size()) return kInfinity;
  const auto axis = calibration_.axes.find(names_[step.axis]);
  if (axis == calibration_.axes.end()) return kInfinity;
  const std::string name(to_string(step.collective));
  const auto fit = axis->second.find(name);
  if (fit == axis->second.end() || !(fit->second.busbw_gbps > 0)) return kInfinity;
  const std::int64_t n = (*step.mesh_shape)[step.axis];
  // A fit prices the group size it was measured on; another is a guess, made only when asked to extrapolate.
  if (unpriced_fit_size(calibration_, options_, names_[step.axis], n)) return kInfinity;
  return fit->second.alpha_us + bus_factor(name, n) * size / (fit->second.busbw_gbps * 1e3);
}

const CalibratedCostModel::AxisPricing& CalibratedCostModel::pricing_of(const std::vector<std::int64_t>& mesh_shape,
                                                                        std::size_t axis) const {
  // The last mesh this thread asked about, with its axes' pricings: most calls are for the mesh of the call before
  // (a plan asks for every edge of every state), and they then take no lock and copy no key. Entries of shapes_ are
  // never removed while the model lives, and ids are never reused, so a pointer of the memo stays valid.
  struct Memo {
    std::uint64_t model = 0;
    std::vector<std::int64_t> mesh;
    std::vector<const AxisPricing*> axes;
  };
  thread_local Memo memo;
  if (axis >= mesh_shape.size()) {
    raise(ErrorKind::ValueError, "axis " + std::to_string(axis) + " is out of range for a mesh of " +
                                     std::to_string(mesh_shape.size()) + " axes");
  }
  if (memo.model != id_ || memo.mesh != mesh_shape) {
    memo.model = id_;
    memo.mesh = mesh_shape;
    memo.axes.assign(mesh_shape.size(), nullptr);
  }
  if (memo.axes[axis] != nullptr) return *memo.axes[axis];
  const std::lock_guard<std::mutex> lock(shapes_mutex_);
  auto key = std::make_pair(mesh_shape, axis);
  if (const auto it = shapes_.find(key); it != shapes_.end()) return *(memo.axes[axis] = &it->second);
  AxisPricing pricing;
  if (placeable(mesh_shape)) pricing.shapes = axis_group_shapes(mesh_shape, axis, calibration_.rank_hosts, options_.extrapolate);
  constexpr std::array<Collective, 4> kPlanned{Collective::AllGather, Collective::AllReduce, Collective::ReduceScatter,
                                               Collective::AllToAll};
  for (const Collective c : kPlanned) {
    const auto k = static_cast<std::size_t>(c);
    const std::string_view name = to_string(c);
    pricing.corrections[k] = correction_on_mesh(calibration_, mesh_shape, {axis}, name);
    pricing.priced[k] = !pricing.shapes.empty();
    for (const GroupShape& shape : pricing.shapes) {
      const GroupCurve* curve = pricing_curve(name, shape);
      if (curve == nullptr) {
        pricing.priced[k] = false;
        pricing.curves[k].clear();
        break;
      }
      pricing.curves[k].push_back({.curve = curve, .scaled = !(curve->shape == shape),
                                   .factor = curve_factor(name, shape.n),
                                   .curve_factor = curve_factor(name, curve->shape.n)});
    }
  }
  return *(memo.axes[axis] = &shapes_.emplace(std::move(key), std::move(pricing)).first->second);
}

const std::vector<GroupShape>& CalibratedCostModel::pair_shapes_of(const std::vector<std::int64_t>& mesh_shape,
                                                                  std::size_t axis) const {
  const std::lock_guard<std::mutex> lock(shapes_mutex_);
  const auto key = std::make_pair(mesh_shape, axis);
  if (const auto it = pair_shapes_.find(key); it != pair_shapes_.end()) return it->second;
  std::vector<GroupShape> shapes;
  const auto world = static_cast<std::int64_t>(calibration_.rank_hosts.size());
  if (placeable(mesh_shape)) {
    std::int64_t ranks = 1;
    for (const std::int64_t s : mesh_shape) ranks *= s;
    std::int64_t host_count = 0;
    for (const std::int64_t h : calibration_.rank_hosts) host_count = std::max(host_count, h + 1);
    const auto host_of = [&](std::int64_t r) {
      return calibration_.rank_hosts[static_cast<std::size_t>(r % world)] + (r / world) * host_count;
    };
    const std::int64_t n = mesh_shape[axis];
    std::int64_t stride = 1;
    for (std::size_t a = axis + 1; a < mesh_shape.size(); ++a) stride *= mesh_shape[a];
    bool same = false;
    bool across = false;
    // Rank r and its neighbour r + stride, for every r whose coordinate on the axis is below n - 1.
    for (std::int64_t outer = 0; outer < ranks && !(same && across); outer += n * stride) {
      for (std::int64_t r = outer; r < outer + (n - 1) * stride && !(same && across); ++r) {
        (host_of(r) == host_of(r + stride) ? same : across) = true;
      }
    }
    if (same) shapes.push_back({.n = 2, .hosts = 1, .ranks_per_host = 2});
    if (across) shapes.push_back({.n = 2, .hosts = 2, .ranks_per_host = 1});
    std::sort(shapes.begin(), shapes.end());
  }
  return pair_shapes_.emplace(key, std::move(shapes)).first->second;
}

double CalibratedCostModel::send_cost(const std::vector<std::int64_t>& mesh_shape, std::size_t axis,
                                      std::int64_t bytes) const {
  check_send(mesh_shape, axis, bytes);
  if (mesh_shape[axis] == 1) return 0.0;
  if (calibration_.groups.empty()) {
    if (axis >= names_.size()) return kInfinity;
    const auto fits = calibration_.axes.find(names_[axis]);
    if (fits == calibration_.axes.end()) return kInfinity;
    const auto fit = fits->second.find("broadcast");
    if (fit == fits->second.end() || !(fit->second.busbw_gbps > 0)) return kInfinity;
    if (unpriced_fit_size(calibration_, options_, names_[axis], mesh_shape[axis])) return kInfinity;  // as steps
    return fit->second.alpha_us + static_cast<double>(bytes) / (fit->second.busbw_gbps * 1e3);
  }
  const std::vector<GroupShape>& shapes = pair_shapes_of(mesh_shape, axis);
  if (shapes.empty()) return kInfinity;
  // On the calibrated mesh an axis of two ranks is its own pair: its sends take the axis' broadcast correction, as
  // its steps take their collective's (with its own as-run points instead of the curve's where it has them). A
  // longer axis' correction was measured on its n-rank groups, not on a pair: its sends take the curve alone.
  const AxisCorrection* c =
      mesh_shape[axis] == 2 ? correction_on_mesh(calibration_, mesh_shape, {axis}, "broadcast") : nullptr;
  const bool axis_as_run = c != nullptr && !c->as_run.empty();
  const auto size = static_cast<double>(bytes);
  double cost = 0.0;
  for (const GroupShape& shape : shapes) {
    const std::optional<double> t =
        axis_as_run ? benchmark_us("broadcast", shape, size) : predict_us("broadcast", shape, size);
    if (!t) return kInfinity;
    cost = std::max(cost, *t);
  }
  return c == nullptr ? cost : cost * as_run_factor(c->factors, size) * as_run_factor(c->as_run, size);
}

double CalibratedCostModel::step_cost(const StepCostInput& step) const {
  if (!communicates(step.collective)) return 0.0;
  const std::int64_t n = (*step.mesh_shape)[step.axis];
  if (n == 1) return 0.0;  // a group of one rank moves nothing
  // nccl-tests' size: all_gather counts the gathered output (n local shards), the others one local buffer.
  const double size = static_cast<double>(step.local_bytes) * (step.collective == Collective::AllGather ? static_cast<double>(n) : 1.0);
  if (calibration_.groups.empty()) return axis_fit_cost(step, size);
  // predict_us of every group shape (resolved once per mesh and axis), the slowest.
  const AxisPricing& pricing = pricing_of(*step.mesh_shape, step.axis);
  const auto k = static_cast<std::size_t>(step.collective);
  if (!pricing.priced[k]) return kInfinity;
  // An axis with its own as-run correction takes it instead of the curve's (AxisCorrection::as_run).
  const AxisCorrection* c = pricing.corrections[k];
  const bool axis_as_run = c != nullptr && !c->as_run.empty();
  double cost = 0.0;
  for (const ResolvedCurve& r : pricing.curves[k]) {
    const double t = axis_as_run ? benchmark_time_us(*r.curve, size) : curve_time_us(*r.curve, size);
    cost = std::max(cost, r.scaled ? t * r.factor / r.curve_factor : t);
  }
  if (c != nullptr) cost *= as_run_factor(c->factors, size) * as_run_factor(c->as_run, size);
  return cost;
}

bool CalibratedCostModel::placeable(const std::vector<std::int64_t>& mesh_shape) const {
  std::int64_t ranks = 1;
  for (const std::int64_t s : mesh_shape) {
    if (s < 1 || __builtin_mul_overflow(ranks, s, &ranks)) return false;
  }
  const auto world = static_cast<std::int64_t>(calibration_.rank_hosts.size());
  return world > 0 && ranks <= kMaxEnumeratedRanks && (ranks <= world || options_.extrapolate);
}

std::optional<double> CalibratedCostModel::flattened_step_cost(const StepCostInput& step,
                                                               const std::vector<std::size_t>& axes) const {
  if (calibration_.groups.empty()) return std::nullopt;
  if (!communicates(step.collective)) return 0.0;
  const std::vector<std::int64_t>& mesh = *step.mesh_shape;
  if (!placeable(mesh)) return kInfinity;
  std::int64_t n = 1;
  for (const std::size_t a : axes) n *= mesh.at(a);
  if (n == 1) return 0.0;
  const double size =
      static_cast<double>(step.local_bytes) * (step.collective == Collective::AllGather ? static_cast<double>(n) : 1.0);
  const std::string_view name = to_string(step.collective);
  const AxisCorrection* c = correction_on_mesh(calibration_, mesh, axes, name);
  const bool axis_as_run = c != nullptr && !c->as_run.empty();  // instead of the curve's (AxisCorrection::as_run)
  double cost = 0.0;
  for (const GroupShape& shape : group_shapes(mesh, axes, calibration_.rank_hosts, options_.extrapolate)) {
    const std::optional<double> t = axis_as_run ? benchmark_us(name, shape, size) : predict_us(name, shape, size);
    if (!t) return kInfinity;
    cost = std::max(cost, *t);
  }
  return c == nullptr ? cost : cost * as_run_factor(c->factors, size) * as_run_factor(c->as_run, size);
}

std::vector<CalibratedCostModel::Gap> CalibratedCostModel::gap_list(
    const std::vector<std::int64_t>& mesh_shape, const std::vector<std::vector<std::size_t>>& flattened) const {
  std::vector<Gap> out;
  constexpr std::array<Collective, 4> kPlanned{Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter,
                                               Collective::AllToAll};
  std::int64_t ranks = 1;
  for (const std::int64_t s : mesh_shape) {
    if (__builtin_mul_overflow(ranks, s, &ranks)) ranks = std::numeric_limits<std::int64_t>::max();
  }
  if (!calibration_.groups.empty() && ranks > static_cast<std::int64_t>(calibration_.rank_hosts.size()) &&
      !options_.extrapolate) {
    out.push_back({{}, {}, "the mesh holds " + std::to_string(ranks) + " ranks but the calibrated job placed " +
                               std::to_string(calibration_.rank_hosts.size())});
    return out;
  }
  if (!calibration_.groups.empty() && ranks > kMaxEnumeratedRanks) {
    out.push_back({{}, {}, "the mesh holds " + std::to_string(ranks) + " ranks, more than the " +
                               std::to_string(kMaxEnumeratedRanks) + " whose groups the calibrated model places"});
    return out;
  }
  for (std::size_t axis = 0; axis < mesh_shape.size(); ++axis) {
    if (mesh_shape[axis] == 1) continue;
    for (const Collective c : kPlanned) {
      const std::string name(to_string(c));
      if (calibration_.groups.empty()) {
        const bool named = axis < names_.size();
        const auto fits = named ? calibration_.axes.find(names_[axis]) : calibration_.axes.end();
        const std::string where = name + " on axis " + (named ? "'" + names_[axis] + "'" : std::to_string(axis));
        if (fits == calibration_.axes.end() || !fits->second.contains(name)) {
          out.push_back({{axis}, name, where + ": no fit"});
        } else if (const auto fitted = unpriced_fit_size(calibration_, options_, names_[axis], mesh_shape[axis])) {
          out.push_back({{axis}, name, where + ": fitted on " + std::to_string(*fitted) + " ranks, not " +
                                           std::to_string(mesh_shape[axis])});
        }
        continue;
      }
      for (const GroupShape& shape : shapes_of(mesh_shape, axis)) {
        if (!predict_us(name, shape, 1.0)) {
          out.push_back(
              {{axis}, name, name + " on axis " + std::to_string(axis) + ": " + to_string(shape) + " never measured"});
        }
      }
    }
  }
  if (calibration_.groups.empty()) return out;  // merged steps are priced as their members
  // The collectives that merge (all_to_all does not), on each group as a merged step names it: all its axes.
  constexpr std::array<Collective, 3> kMerged{Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter};
  for (const std::vector<std::size_t>& axes : flattened) {
    const bool valid = std::all_of(axes.begin(), axes.end(), [&](std::size_t a) { return a < mesh_shape.size(); }) &&
                       std::adjacent_find(axes.begin(), axes.end(), std::greater_equal<>()) == axes.end();
    const auto moving = std::count_if(axes.begin(), axes.end(),
                                      [&](std::size_t a) { return a < mesh_shape.size() && mesh_shape[a] > 1; });
    if (!valid || moving < 2) continue;  // a merge needs two axes of size > 1
    std::string text;
    for (const std::size_t a : axes) text += (text.empty() ? "" : ",") + std::to_string(a);
    const std::vector<GroupShape> shapes =
        group_shapes(mesh_shape, axes, calibration_.rank_hosts, options_.extrapolate);
    for (const Collective c : kMerged) {
      const std::string name(to_string(c));
      for (const GroupShape& shape : shapes) {
        if (!predict_us(name, shape, 1.0)) {
          out.push_back({axes, name, name + " on axes " + text + ": " + to_string(shape) + " never measured"});
        }
      }
    }
  }
  return out;
}

std::vector<std::string> CalibratedCostModel::gaps(const std::vector<std::int64_t>& mesh_shape) const {
  std::vector<std::string> out;
  for (Gap& gap : gap_list(mesh_shape)) out.push_back(std::move(gap.text));
  return out;
}

}  // namespace meshloom
