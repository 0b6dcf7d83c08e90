#include "meshloom/plan/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "meshloom/error.hpp"

namespace meshloom {

namespace {
constexpr double kInfinity = std::numeric_limits<double>::infinity();
}  // namespace

// ---- fixed ------------------------------------------------------------------------------------------------

FixedCostModel::FixedCostModel(FixedWeights weights) : weights_(weights) {
  for (const double w : {weights.all_reduce, weights.all_to_all, weights.all_gather, weights.reduce_scatter,
                         weights.chunk}) {
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

// ---- calibrated -------------------------------------------------------------------------------------------

double bus_factor(std::string_view collective, std::int64_t n) {
  const double nd = static_cast<double>(n);
  if (collective == "all_reduce") return 2.0 * (nd - 1) / nd;
  if (collective == "all_gather" || collective == "reduce_scatter" || collective == "all_to_all") return (nd - 1) / nd;
  if (collective == "broadcast") return 1.0;
  raise(ErrorKind::ValueError, "unknown collective '" + std::string(collective) +
                                   "' (expected all_reduce, all_gather, reduce_scatter, all_to_all or broadcast)");
}

CalibratedCostModel::CalibratedCostModel(Calibration calibration, const std::vector<std::string>& mesh_names)
    : calibration_(std::move(calibration)), names_(mesh_names) {}

double CalibratedCostModel::step_cost(const StepCostInput& step) const {
  if (!communicates(step.collective)) return 0.0;
  const std::int64_t n = (*step.mesh_shape)[step.axis];
  if (n == 1) return 0.0;  // a group of one rank moves nothing
  if (step.axis >= names_.size()) return kInfinity;
  const auto axis = calibration_.axes.find(names_[step.axis]);
  if (axis == calibration_.axes.end()) return kInfinity;
  const std::string name(to_string(step.collective));
  const auto fit = axis->second.find(name);
  if (fit == axis->second.end() || !(fit->second.busbw_gbps > 0)) return kInfinity;
  // nccl-tests' size: all_gather counts the gathered output (n local shards), the others one local buffer.
  const double size = static_cast<double>(step.local_bytes) * (step.collective == Collective::AllGather ? static_cast<double>(n) : 1.0);
  return fit->second.alpha_us + bus_factor(name, n) * size / (fit->second.busbw_gbps * 1e3);
}

}  // namespace meshloom
