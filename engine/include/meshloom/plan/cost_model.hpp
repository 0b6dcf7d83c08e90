// Cost models for redistribution steps. One interface, injected into the planners:
//
//   fixed        PyTorch's seed weights per collective (all_reduce 4, all_to_all 1, all_gather 2,
//                reduce_scatter 2, chunk 0), configurable.
//   comm         PyTorch's newest size-aware model (one_step_redistribute_cost): ring latency and bandwidth
//                per axis, with the inter-host factors for axes that cross hosts. Microseconds.
//   calibrated   alpha + factor(n) * bytes / busbw per (axis, collective), fitted from measurements by
//                `meshloom-launch calibrate` (the calibration file of the launcher's contract). Microseconds.
//
// A model prices one edge of the planner's graph: one collective on one axis, seen from the state before it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "meshloom/plan/plan.hpp"

namespace meshloom {

// What a cost model may look at for one step.
struct StepCostInput {
  Collective collective = Collective::Chunk;
  std::size_t axis = 0;
  const std::vector<std::int64_t>* mesh_shape = nullptr;  // axis sizes
  std::int64_t itemsize = 4;
  std::int64_t global_numel = 0;    // elements of the whole tensor
  std::int64_t source_shards = 1;   // product of the sizes of the axes that shard the tensor before the step
  std::int64_t local_bytes = 0;     // bytes each rank holds before the step (real, possibly uneven, shapes)
};

class CostModel {
public:
  virtual ~CostModel() = default;
  // The cost of one step; +infinity when the model cannot perform it.
  [[nodiscard]] virtual double step_cost(const StepCostInput& step) const = 0;
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;

protected:
  CostModel() = default;
  CostModel(const CostModel&) = default;
  CostModel& operator=(const CostModel&) = default;
};

// ---- fixed ------------------------------------------------------------------------------------------------

struct FixedWeights {
  double all_reduce = 4;
  double all_to_all = 1;
  double all_gather = 2;
  double reduce_scatter = 2;
  double chunk = 0;  // R -> S and R -> P
  friend bool operator==(const FixedWeights&, const FixedWeights&) = default;
};

class FixedCostModel final : public CostModel {
public:
  explicit FixedCostModel(FixedWeights weights = {});
  [[nodiscard]] double step_cost(const StepCostInput& step) const override;
  [[nodiscard]] std::string_view name() const noexcept override { return "fixed"; }
  [[nodiscard]] const FixedWeights& weights() const noexcept { return weights_; }

private:
  FixedWeights weights_;
};

// ---- comm -------------------------------------------------------------------------------------------------

// PyTorch's MeshTopoInfo for a mesh: per axis, bandwidth (GB/s) and latency per hop (us). Walking the axes from
// the last to the first with a running product of sizes, once the product exceeds devices_per_host that axis
// and every outer one crosses hosts: bandwidth x 0.22 and 2.7 us per hop instead of 87.7 GB/s and 0.6 us.
struct MeshTopology {
  std::vector<double> bandwidth_gbps;
  std::vector<double> latency_us;
};
[[nodiscard]] MeshTopology mesh_topology(const std::vector<std::int64_t>& mesh_shape, std::int64_t devices_per_host);

class CommCostModel final : public CostModel {
public:
  // The model needs the mesh to know which axes cross hosts.
  CommCostModel(const std::vector<std::int64_t>& mesh_shape, std::int64_t devices_per_host);
  [[nodiscard]] double step_cost(const StepCostInput& step) const override;
  [[nodiscard]] std::string_view name() const noexcept override { return "comm"; }
  [[nodiscard]] const MeshTopology& topology() const noexcept { return topology_; }

private:
  MeshTopology topology_;
};

// ---- calibrated -------------------------------------------------------------------------------------------

// One fitted (axis, collective): time_us(bytes) = alpha_us + factor(n) * bytes / (busbw_gbps * 1e3).
struct CollectiveFit {
  double alpha_us = 0;
  double busbw_gbps = 0;
  double r2 = 0;
  std::int64_t samples = 0;
  friend bool operator==(const CollectiveFit&, const CollectiveFit&) = default;
};

// The calibration file of the launcher's contract:
// {"format": "meshloom-calibration", "version": 1, "backend": "mpi", "timing": "single_shot", "world": 8,
//  "mesh": {"shape": [2, 4], "names": ["dp", "tp"]},
//  "axes": {"tp": {"all_reduce": {"alpha_us": 12.0, "busbw_gbps": 3.1, "r2": 0.998, "samples": 14}, ...}, ...}}
// "timing" (optional: files written before it existed have none) is the launcher's timing protocol the fits come
// from: "pipelined" (nccl-tests' back-to-back figure) or "single_shot" (one collective after a barrier, as a
// training step and `meshloom-launch run` meet it).
struct Calibration {
  std::string backend;
  std::string timing;  // "pipelined", "single_shot", or empty (not recorded)
  std::int64_t world = 0;
  std::vector<std::int64_t> mesh_shape;
  std::vector<std::string> mesh_names;
  // axis name (or flattened name) -> collective name -> fit
  std::map<std::string, std::map<std::string, CollectiveFit>> axes;
  friend bool operator==(const Calibration&, const Calibration&) = default;
};

// Strict parsing: ValueError naming the field and value (unknown fields, wrong types, negative or zero
// bandwidth, an unknown collective, a mesh that is not the calibrated one's shape).
[[nodiscard]] Calibration parse_calibration(std::string_view json_text);
[[nodiscard]] Calibration load_calibration(const std::filesystem::path& path);
[[nodiscard]] std::string to_json_text(const Calibration& calibration);

// nccl-tests' bus factor for a collective on n ranks: all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all
// (n-1)/n; broadcast 1.
[[nodiscard]] double bus_factor(std::string_view collective, std::int64_t n);

class CalibratedCostModel final : public CostModel {
public:
  // Every communicating collective must have a fit on every axis of size > 1 it may run on; a missing fit makes
  // that step cost +infinity (the planner then avoids it, or fails clearly when it cannot).
  CalibratedCostModel(Calibration calibration, const std::vector<std::string>& mesh_names);
  [[nodiscard]] double step_cost(const StepCostInput& step) const override;
  [[nodiscard]] std::string_view name() const noexcept override { return "calibrated"; }
  [[nodiscard]] const Calibration& calibration() const noexcept { return calibration_; }

private:
  Calibration calibration_;
  std::vector<std::string> names_;
};

}  // namespace meshloom
