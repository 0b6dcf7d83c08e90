#include "validate_drift.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>
#include <utility>

#include "timing.hpp"

namespace meshloom::launcher {

namespace {

std::string ratio_text(double r) {
  char cell[32];
  std::snprintf(cell, sizeof cell, "%.2fx", r);
  return cell;
}

}  // namespace

double anchor_reference_us(const Calibration& calibration, const std::string& collective, const GroupShape& shape,
                           double bytes, const std::vector<std::int64_t>& mesh_shape,
                           const std::vector<std::size_t>& axes, bool by_axis) {
  const GroupCurve* curve = find_curve(calibration, collective, shape);
  if (curve == nullptr) return 0;
  const AxisCorrection* correction = by_axis ? correction_on_mesh(calibration, mesh_shape, axes, collective) : nullptr;
  if (correction != nullptr) return benchmark_time_us(*curve, bytes) * as_run_factor(correction->factors, bytes);
  for (const CurvePoint& p : curve->points) {
    if (p.bytes == bytes) return p.time_us;
  }
  return benchmark_time_us(*curve, bytes);  // what the anchors re-time: no as-run factor
}

bool DriftCheck::drifted() const noexcept {
  return !anchors.empty() && (median_ratio > 1 + kDriftWarning || median_ratio < 1 / (1 + kDriftWarning));
}

std::vector<std::int64_t> drift_sizes(const Calibration& calibration) {
  std::set<std::int64_t> distinct;
  for (const GroupCurve& curve : calibration.groups) {
    for (const CurvePoint& p : curve.points) distinct.insert(static_cast<std::int64_t>(p.bytes));
  }
  const std::vector<std::int64_t> sizes(distinct.begin(), distinct.end());
  std::set<std::int64_t> chosen;
  const std::size_t m = sizes.size();
  for (const std::size_t i : {m / 4, m / 2, 3 * m / 4}) {
    if (i < m) chosen.insert(sizes[i]);
  }
  return {chosen.begin(), chosen.end()};
}

DriftCheck summarize_drift(std::string when, std::vector<DriftAnchor> anchors) {
  DriftCheck check;
  check.when = std::move(when);
  check.anchors = std::move(anchors);
  std::vector<double> ratios;
  for (const auto& a : check.anchors) {
    if (a.calibrated_us > 0) ratios.push_back(a.ratio());
  }
  if (!ratios.empty()) {
    check.median_ratio = median(ratios);
    check.min_ratio = *std::min_element(ratios.begin(), ratios.end());
    check.max_ratio = *std::max_element(ratios.begin(), ratios.end());
  }
  return check;
}

DriftProbe::DriftProbe(mpi::MpiCommunicator& world, LiveBackend& backend, const Calibration& calibration,
                       const std::vector<std::int64_t>& mesh_shape, const std::vector<std::string>& names,
                       const std::vector<std::string>& hosts)
    : world_(world), backend_(backend), calibration_(calibration) {
  BenchSettings& s = settings_;
  s.sizes = drift_sizes(calibration);
  if (s.sizes.empty()) return;
  for (const GroupCurve& curve : calibration.groups) {
    const auto c = bench_collective_from_string(curve.collective);
    if (c && std::find(s.collectives.begin(), s.collectives.end(), *c) == s.collectives.end()) s.collectives.push_back(*c);
  }
  if (s.collectives.empty()) return;
  s.warmup_iters = kDriftWarmup;
  s.iters = kDriftIterations;
  s.timing = calibration.timing == "pipelined" ? TimingMode::Pipelined : TimingMode::SingleShot;
  s.dtype = DType::Float64;
  s.print_tables = false;
  s.progress = false;

  DeviceMesh mesh = DeviceMesh::init(mesh_shape, names, world.size());
  const AxisSelection axes = select_axes(mesh, {});
  if (axes.run.empty()) return;
  s.axes = axes.run;
  s.shape_only_axes = axes.run;
  validate_bench_settings(s, mesh, axes, std::string(backend.name()));
  info_.backend = std::string(backend.name());
  info_.world = world.size();
  info_.mesh_shape = mesh_shape;
  info_.mesh_names = names;
  info_.hosts = hosts;
  info_.host = hosts.empty() ? std::string() : hosts[static_cast<std::size_t>(world.rank())];
  groups_ = backend.groups(mesh, LiveBackend::Buffers::Native);
  mesh_ = std::move(mesh);
}

std::optional<DriftCheck> DriftProbe::measure(std::string when) {
  if (!active()) return std::nullopt;
  std::ostringstream quiet;
  JsonlSink none;
  const BenchOutcome outcome = run_bench(world_, *groups_, *mesh_, settings_, info_, quiet, none, &backend_);
  std::vector<DriftAnchor> anchors;
  for (const BenchResult& r : outcome.sweep.results) {
    DriftAnchor a;
    a.collective = std::string(to_string(r.collective));
    a.shape = GroupShape{r.group_size, r.span.hosts, r.span.ranks_per_host};
    a.bytes = r.bytes;
    // The mesh axis it ran on (the probe's mesh has its own axes only, no flattened ones).
    const auto axis = std::find(info_.mesh_names.begin(), info_.mesh_names.end(), r.axis);
    if (axis != info_.mesh_names.end()) a.axes = {static_cast<std::size_t>(axis - info_.mesh_names.begin())};
    a.calibrated_us =
        anchor_reference_us(calibration_, a.collective, a.shape, static_cast<double>(a.bytes), info_.mesh_shape, a.axes);
    a.measured_us = r.time_us;
    if (a.calibrated_us > 0) anchors.push_back(std::move(a));
  }
  DriftCheck check = summarize_drift(std::move(when), std::move(anchors));
  check.mesh_shape = info_.mesh_shape;
  return check;
}

nlohmann::ordered_json drift_json(const DriftCheck& check) {
  nlohmann::ordered_json anchors = nlohmann::ordered_json::array();
  for (const auto& a : check.anchors) {
    anchors.push_back({{"collective", a.collective},
                       {"axes", a.axes},
                       {"n", a.shape.n},
                       {"hosts", a.shape.hosts},
                       {"ranks_per_host", a.shape.ranks_per_host},
                       {"bytes", a.bytes},
                       {"calibrated_us", a.calibrated_us},
                       {"measured_us", a.measured_us},
                       {"ratio", a.ratio()}});
  }
  return {{"type", "drift"},
          {"when", check.when},
          {"mesh", check.mesh_shape},
          {"median_ratio", check.median_ratio},
          {"min_ratio", check.min_ratio},
          {"max_ratio", check.max_ratio},
          {"drifted", check.drifted()},
          {"anchors", std::move(anchors)}};
}

std::string drift_line(const DriftCheck& check) {
  std::string line = "drift " + check.when + " the requests: ";
  if (check.anchors.empty()) return line + "no anchor (the calibration has no point on these groups)";
  line += "the calibration's points re-timed measure " + ratio_text(check.median_ratio) + " (" +
          std::to_string(check.anchors.size()) + (check.anchors.size() == 1 ? " anchor, " : " anchors, ") +
          ratio_text(check.min_ratio) + " to " + ratio_text(check.max_ratio) + ")";
  if (check.drifted()) {
    line += std::string(": the machine is ") + (check.median_ratio > 1 ? "slower" : "faster") +
            " than when it was calibrated";
  }
  return line;
}

}  // namespace meshloom::launcher
