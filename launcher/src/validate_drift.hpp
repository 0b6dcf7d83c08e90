// validate's drift check: has the machine changed since it was calibrated? Before the requests and after them,
// validate re-times some of the calibration's own measurements (anchors) on this job's groups, the same collective on
// the same group shape at the same size under the same timing mode, and compares each with the time the calibration
// recorded for it. A model cannot be more right than the machine is alike: when the anchors measure 1.7x what they
// measured at calibration time, every step's error includes that 1.7x, whatever the model.
//
//   anchors      the mesh of the suite's first request, each of its own axes whose groups have a shape no axis
//                before it had (bench's shape_only_axes); per such shape every collective the calibration has a curve
//                of, at three of the calibration's sizes: of its distinct sizes s_0 < ... < s_{m-1}, those at
//                indices floor(m/4), floor(m/2), floor(3m/4) (1K..64M by factors of 2: 16 KiB, 256 KiB, 4 MiB)
//   timing       bench's driver (run_bench) with the calibration's timing mode (single_shot: validate refuses a
//                pipelined calibration), kDriftWarmup warm-up and kDriftIterations timed iterations, float64
//   ratio        measured p50 / the calibration's point at that size (its curve's time where it has no point); on
//                the calibrated mesh, where the calibration corrects the axis (AxisCorrection), over what that axis
//                measured: the curve's price times the correction
//   summary      the median, least and greatest ratio; the machine "drifted" when the median is outside
//                [1 / (1 + kDriftWarning), 1 + kDriftWarning]
//
// Example, 2 ranks of a 2-core VM whose small messages slowed between calibrate and validate:
//   drift before the requests: the calibration's points re-timed measure 1.71x (12 anchors, 0.93x to 2.10x):
//   the machine is slower than when it was calibrated
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_run.hpp"
#include "live_backend.hpp"
#include "meshloom/backends/mpi_communicator.hpp"
#include "meshloom/comm/mesh_groups.hpp"
#include "meshloom/mesh/device_mesh.hpp"
#include "meshloom/plan/cost_model.hpp"

namespace meshloom::launcher {

inline constexpr std::int64_t kDriftWarmup = 3;
inline constexpr std::int64_t kDriftIterations = 10;
inline constexpr double kDriftWarning = 0.15;

struct DriftAnchor {
  std::string collective;
  std::vector<std::size_t> axes;  // the axes of the check's mesh it ran on (empty: not known)
  GroupShape shape;
  std::int64_t bytes = 0;
  double calibrated_us = 0;
  double measured_us = 0;
  [[nodiscard]] double ratio() const noexcept { return calibrated_us > 0 ? measured_us / calibrated_us : 0.0; }
};

struct DriftCheck {
  std::string when;  // "before" or "after" (the requests)
  std::vector<std::int64_t> mesh_shape;  // the mesh the anchors ran on
  std::vector<DriftAnchor> anchors;
  double median_ratio = 0, min_ratio = 0, max_ratio = 0;  // 0 without anchors
  [[nodiscard]] bool drifted() const noexcept;
};

// The calibration's own time for an anchor of `collective` on `shape` at `bytes`, run on `axes` of a mesh of
// `mesh_shape` (the ratio's denominator above): on the calibrated mesh, where the calibration corrects the axis and
// `by_axis` holds, what that axis measured (the curve's price times its correction); otherwise the curve's measured
// point at that size, else its benchmark time; 0 without a curve of that key. refine's level filter divides by the
// same, so that a records file validate found level is level for refine too.
[[nodiscard]] double anchor_reference_us(const Calibration& calibration, const std::string& collective,
                                         const GroupShape& shape, double bytes,
                                         const std::vector<std::int64_t>& mesh_shape,
                                         const std::vector<std::size_t>& axes, bool by_axis = true);

// The anchors' sizes (see above); empty for a calibration without curves.
[[nodiscard]] std::vector<std::int64_t> drift_sizes(const Calibration& calibration);

// Summarizes `anchors` measured `when` (the median, least and greatest ratio).
[[nodiscard]] DriftCheck summarize_drift(std::string when, std::vector<DriftAnchor> anchors);

// The anchors of one calibration on one mesh, timed as often as asked (validate: before and after the requests) on
// groups built once. Construction is collective over `world` (every rank passes the same arguments), as is measure;
// `world`, `backend` and `calibration` must outlive the probe.
class DriftProbe {
public:
  // Builds the groups of `mesh_shape` named `names` that `backend` makes. Inactive, without communicating, for a
  // calibration without curves (it records no points to re-time) or a mesh without an axis of more than one rank.
  DriftProbe(mpi::MpiCommunicator& world, LiveBackend& backend, const Calibration& calibration,
             const std::vector<std::int64_t>& mesh_shape, const std::vector<std::string>& names,
             const std::vector<std::string>& hosts);
  [[nodiscard]] bool active() const noexcept { return groups_.has_value(); }
  // Times the anchors now; rank 0's result holds them, other ranks' none. nullopt when inactive.
  [[nodiscard]] std::optional<DriftCheck> measure(std::string when);

private:
  mpi::MpiCommunicator& world_;
  LiveBackend& backend_;
  const Calibration& calibration_;
  BenchSettings settings_;
  BenchRunInfo info_;
  std::optional<DeviceMesh> mesh_;
  std::optional<comm::MeshGroups> groups_;
};

// {"type": "drift", "when", "median_ratio", "min_ratio", "max_ratio", "drifted", "anchors": [{collective, n, hosts,
// ranks_per_host, bytes, calibrated_us, measured_us, ratio}]}.
[[nodiscard]] nlohmann::ordered_json drift_json(const DriftCheck& check);
// "drift before the requests: the calibration's points re-timed measure 1.02x (12 anchors, 0.91x to 1.10x)", and
// when it drifted ": the machine is slower than when it was calibrated" (or faster).
[[nodiscard]] std::string drift_line(const DriftCheck& check);

}  // namespace meshloom::launcher
