// The calibration file of the launcher's contract: reading (strict), loading and canonical writing.
//
//   {"format": "meshloom-calibration", "version": 1, "backend": "mpi", "world": 8,
//    "mesh": {"shape": [2, 4], "names": ["dp", "tp"]},
//    "axes": {"tp": {"all_reduce": {"alpha_us": 12.0, "busbw_gbps": 3.1, "r2": 0.998, "samples": 14}}},
//    "rank_hosts": [0, 0, 0, 0, 1, 1, 1, 1], "groups": [{"collective": "all_reduce", "n": 4, ...}]}
// (the format, its optional fields included, is documented on Calibration in cost_model.hpp)
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "json_read.hpp"
#include "meshloom/error.hpp"
#include "meshloom/plan/cost_model.hpp"

namespace meshloom {

namespace {

using detail::bad;
using detail::bad_value;
using detail::field;
using detail::get_int;
using detail::get_number;
using detail::get_string;
using detail::item;
using detail::join;
using detail::json;
using detail::render;
using detail::render_ints;
using detail::render_number;
using detail::render_strings;
using detail::render_text;
using detail::str;

constexpr std::string_view kNoun = "a calibration";
constexpr std::string_view kCalibrationFormat = "meshloom-calibration";
constexpr std::int64_t kCalibrationVersion = 1;
constexpr std::size_t kMaxCalibrationFileBytes = std::size_t{16} << 20;
constexpr std::size_t kMaxCalibrationJsonDepth = 16;
constexpr std::size_t kMaxCalibrationAxes = 64;         // mesh axes
constexpr std::size_t kMaxCalibrationNameChars = 64;    // axis, flattened axis names: [A-Za-z0-9_]
constexpr std::size_t kMaxCalibrationAxisEntries = 4096;  // entries of "axes" (mesh axes and flattened groups)
constexpr std::size_t kMaxBackendBytes = 64;
constexpr std::int64_t kMaxCalibrationWorld = 2147483647;  // 2^31 - 1, as a design's world
constexpr std::size_t kMaxCalibrationCurves = 4096;         // entries of "groups"
constexpr std::size_t kMaxCurvePoints = 256;                // points of one curve
constexpr std::size_t kMaxCpuListChars = 4095;              // one rank's CPU list (the launcher gathers 4095)
constexpr std::size_t kMaxTransportSettings = 4096;         // entries of "transport"
using comm::kMaxTransportChars;                             // a transport setting's name or value

// The collectives a calibration may fit, in sorted order (the order std::map writes them).
constexpr std::array<std::string_view, 5> kCollectives{"all_gather", "all_reduce", "all_to_all", "broadcast",
                                                       "reduce_scatter"};

std::string collective_list() {
  std::vector<std::string> words(kCollectives.begin(), kCollectives.end());
  return join(words);
}

bool known_collective(std::string_view name) {
  return std::find(kCollectives.begin(), kCollectives.end(), name) != kCollectives.end();
}

// ---- reading (types and structure) -------------------------------------------------------------------------

CollectiveFit fit_from_json(const json& value, const std::string& path) {
  detail::expect_object(value, path, kNoun);
  detail::check_fields(value, path, kNoun, {"alpha_us", "busbw_gbps", "r2", "samples"},
                       {"alpha_us", "busbw_gbps", "r2", "samples"});
  CollectiveFit fit;
  fit.alpha_us = get_number(value.at("alpha_us"), field(path, "alpha_us"));
  fit.busbw_gbps = get_number(value.at("busbw_gbps"), field(path, "busbw_gbps"));
  fit.r2 = get_number(value.at("r2"), field(path, "r2"));
  fit.samples = get_int(value.at("samples"), field(path, "samples"));
  return fit;
}

HoldoutError holdout_from_json(const json& value, const std::string& path) {
  detail::expect_object(value, path, kNoun);
  detail::check_fields(value, path, kNoun, {"median", "p90", "points"}, {"median", "p90", "points"});
  return {.median = get_number(value.at("median"), field(path, "median")),
          .p90 = get_number(value.at("p90"), field(path, "p90")),
          .points = get_int(value.at("points"), field(path, "points"))};
}

// [[bytes, factor, steps], ...]: a curve's "as_run" or a correction's "factors".
std::vector<AsRunPoint> factor_points_from_json(const json& value, const std::string& path, std::string_view noun) {
  const auto& points = detail::get_array(value, path, kMaxCurvePoints, "points");
  std::vector<AsRunPoint> out;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string at = item(path, i);
    const auto& triple = detail::get_array(points[i], at, 3, "numbers");
    if (triple.size() != 3) bad_value(at, render(points[i]), std::string(noun) + " is [bytes, factor, steps]");
    out.push_back({.bytes = get_number(triple[0], item(at, 0)),
                   .factor = get_number(triple[1], item(at, 1)),
                   .steps = get_int(triple[2], item(at, 2))});
  }
  return out;
}

GroupCurve curve_from_json(const json& value, const std::string& path) {
  detail::expect_object(value, path, kNoun);
  detail::check_fields(value, path, kNoun,
                       {"collective", "n", "hosts", "ranks_per_host", "model", "alpha_us", "busbw_gbps", "r2",
                        "samples", "holdout", "points", "as_run"},
                       {"collective", "n", "hosts", "ranks_per_host", "model", "points"});
  GroupCurve c;
  c.collective = get_string(value.at("collective"), field(path, "collective"));
  if (!known_collective(c.collective)) {
    bad_value(field(path, "collective"), render_text(c.collective), "unknown collective; expected " + collective_list());
  }
  c.shape.n = get_int(value.at("n"), field(path, "n"));
  c.shape.hosts = get_int(value.at("hosts"), field(path, "hosts"));
  c.shape.ranks_per_host = get_int(value.at("ranks_per_host"), field(path, "ranks_per_host"));
  const std::string model = get_string(value.at("model"), field(path, "model"));
  if (model == "alpha_beta") {
    c.model = CurveModel::AlphaBeta;
  } else if (model == "piecewise") {
    c.model = CurveModel::Piecewise;
  } else {
    bad_value(field(path, "model"), render_text(model), "expected \"alpha_beta\" or \"piecewise\"");
  }
  const int fit_fields = static_cast<int>(value.contains("alpha_us")) + static_cast<int>(value.contains("busbw_gbps")) +
                         static_cast<int>(value.contains("r2")) + static_cast<int>(value.contains("samples"));
  if (fit_fields == 4) {
    c.fit = CollectiveFit{.alpha_us = get_number(value.at("alpha_us"), field(path, "alpha_us")),
                          .busbw_gbps = get_number(value.at("busbw_gbps"), field(path, "busbw_gbps")),
                          .r2 = get_number(value.at("r2"), field(path, "r2")),
                          .samples = get_int(value.at("samples"), field(path, "samples"))};
  } else if (fit_fields != 0) {
    bad(path, "an alpha-beta fit needs all of alpha_us, busbw_gbps, r2 and samples (or none of them)");
  }
  if (value.contains("holdout")) c.holdout = holdout_from_json(value.at("holdout"), field(path, "holdout"));
  const auto& points = detail::get_array(value.at("points"), field(path, "points"), kMaxCurvePoints, "points");
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string at = item(field(path, "points"), i);
    const auto& pair = detail::get_array(points[i], at, 2, "numbers");
    if (pair.size() != 2) bad_value(at, render(points[i]), "a point is [bytes, time_us]");
    c.points.push_back({get_number(pair[0], item(at, 0)), get_number(pair[1], item(at, 1))});
  }
  if (value.contains("as_run")) c.as_run = factor_points_from_json(value.at("as_run"), field(path, "as_run"), "an as-run point");
  return c;
}

AxisCorrection correction_from_json(const json& value, const std::string& path) {
  detail::expect_object(value, path, kNoun);
  detail::check_fields(value, path, kNoun, {"axes", "collective", "factors", "as_run"}, {"axes", "collective", "factors"});
  AxisCorrection c;
  for (const std::int64_t a : detail::get_ints(value.at("axes"), field(path, "axes"), kMaxCalibrationAxes, "axes")) {
    if (a < 0) bad_value(field(path, "axes"), render(value.at("axes")), "axes are mesh axis indices >= 0");
    c.axes.push_back(static_cast<std::size_t>(a));
  }
  c.collective = get_string(value.at("collective"), field(path, "collective"));
  c.factors = factor_points_from_json(value.at("factors"), field(path, "factors"), "a correction point");
  if (value.contains("as_run")) c.as_run = factor_points_from_json(value.at("as_run"), field(path, "as_run"), "an as-run point");
  return c;
}

Calibration calibration_from_json(const json& root) {
  detail::expect_object(root, "", kNoun);
  if (!root.contains("format")) {
    bad("format", "required field is missing; a calibration starts with \"format\": \"meshloom-calibration\"");
  }
  if (!root.at("format").is_string() || root.at("format").get_ref<const std::string&>() != kCalibrationFormat) {
    bad_value("format", render(root.at("format")), "not a meshloom calibration; expected \"meshloom-calibration\"");
  }
  if (!root.contains("version")) bad("version", "required field is missing");
  const std::int64_t version = get_int(root.at("version"), "version");
  if (version != kCalibrationVersion) {
    bad_value("version", std::to_string(version),
              "unsupported version; this build reads version " + std::to_string(kCalibrationVersion));
  }
  detail::check_fields(root, "", kNoun,
                       {"format", "version", "backend", "timing", "world", "mesh", "axes", "rank_hosts", "groups",
                        "rank_cpus", "axis_corrections", "transport"},
                       {"backend", "world", "mesh", "axes"});
  Calibration c;
  c.backend = get_string(root.at("backend"), "backend");
  if (root.contains("timing")) c.timing = get_string(root.at("timing"), "timing");
  c.world = get_int(root.at("world"), "world");

  const json& mesh = root.at("mesh");
  detail::expect_object(mesh, "mesh", kNoun);
  detail::check_fields(mesh, "mesh", kNoun, {"shape", "names"}, {"shape", "names"});
  c.mesh_shape = detail::get_ints(mesh.at("shape"), "mesh.shape", kMaxCalibrationAxes, "axes");
  c.mesh_names = detail::get_strings(mesh.at("names"), "mesh.names", kMaxCalibrationAxes, "names");

  const json& axes = root.at("axes");
  detail::expect_object(axes, "axes", kNoun);
  if (axes.size() > kMaxCalibrationAxisEntries) {
    bad("axes", std::to_string(axes.size()) + " axes; at most " + std::to_string(kMaxCalibrationAxisEntries));
  }
  for (const auto& [axis, collectives] : axes.items()) {
    // The key is checked before it becomes part of a path.
    detail::check_name(axis, "axes", kMaxCalibrationNameChars, false);
    const std::string axis_path = field("axes", axis);
    detail::expect_object(collectives, axis_path, kNoun);
    auto& fits = c.axes[axis];
    for (const auto& [collective, fit] : collectives.items()) {
      if (!known_collective(collective)) {
        bad_value(axis_path, render_text(collective), "unknown collective; expected " + collective_list());
      }
      fits[collective] = fit_from_json(fit, field(axis_path, collective));
    }
  }
  if (root.contains("rank_hosts")) {
    c.rank_hosts = detail::get_ints(root.at("rank_hosts"), "rank_hosts", kMaxCalibrationFileBytes / 2, "ranks");
  }
  if (root.contains("groups")) {
    const auto& groups = detail::get_array(root.at("groups"), "groups", kMaxCalibrationCurves, "curves");
    for (std::size_t i = 0; i < groups.size(); ++i) c.groups.push_back(curve_from_json(groups[i], item("groups", i)));
  }
  if (root.contains("rank_cpus")) {
    c.rank_cpus = detail::get_strings(root.at("rank_cpus"), "rank_cpus", kMaxCalibrationFileBytes / 4, "ranks");
  }
  if (root.contains("axis_corrections")) {
    const auto& corrections =
        detail::get_array(root.at("axis_corrections"), "axis_corrections", kMaxCalibrationCurves, "corrections");
    for (std::size_t i = 0; i < corrections.size(); ++i) {
      c.axis_corrections.push_back(correction_from_json(corrections[i], item("axis_corrections", i)));
    }
  }
  if (root.contains("transport")) {
    const json& transport = root.at("transport");
    detail::expect_object(transport, "transport", kNoun);
    if (transport.size() > kMaxTransportSettings) {
      bad("transport", std::to_string(transport.size()) + " settings; at most " + std::to_string(kMaxTransportSettings));
    }
    comm::TransportSettings settings;
    for (const auto& [name, value] : transport.items()) {
      detail::check_text(name, "transport", 1, kMaxTransportChars, true);
      const std::string path = field("transport", name);
      if (!comm::shapes_collective_cost(name)) {
        bad_value("transport", render_text(name),
                  "not a setting that shapes a collective's cost (meshloom/comm/transport.hpp lists them)");
      }
      settings[name] = get_string(value, path);
      detail::check_text(settings[name], path, 0, kMaxTransportChars, true);
    }
    c.transport = std::move(settings);
  }
  return c;
}

// ---- validation (values) -----------------------------------------------------------------------------------

void validate_fit(const CollectiveFit& fit, const std::string& path) {
  if (!std::isfinite(fit.alpha_us) || fit.alpha_us < 0) {
    bad_value(field(path, "alpha_us"), render_number(fit.alpha_us), "must be finite and >= 0");
  }
  if (!std::isfinite(fit.busbw_gbps) || !(fit.busbw_gbps > 0)) {
    bad_value(field(path, "busbw_gbps"), render_number(fit.busbw_gbps), "must be finite and > 0");
  }
  if (!std::isfinite(fit.r2) || fit.r2 > 1) {
    bad_value(field(path, "r2"), render_number(fit.r2), "must be finite and <= 1");
  }
  if (fit.samples < 1) bad_value(field(path, "samples"), std::to_string(fit.samples), "must be >= 1");
}

// A curve's "as_run" or a correction's "factors": at most kMaxCurvePoints, bytes finite > 0 and strictly ascending,
// factors finite > 0, steps >= 1.
void validate_factor_points(const std::vector<AsRunPoint>& points, const std::string& path) {
  if (points.size() > kMaxCurvePoints) {
    bad(path, std::to_string(points.size()) + " points; at most " + std::to_string(kMaxCurvePoints));
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    const AsRunPoint& p = points[i];
    const std::string at = item(path, i);
    if (!std::isfinite(p.bytes) || !(p.bytes > 0)) bad_value(item(at, 0), render_number(p.bytes), "bytes must be finite and > 0");
    if (!std::isfinite(p.factor) || !(p.factor > 0)) bad_value(item(at, 1), render_number(p.factor), "factor must be finite and > 0");
    if (p.steps < 1) bad_value(item(at, 2), std::to_string(p.steps), "steps must be >= 1");
    if (i > 0 && !(p.bytes > points[i - 1].bytes)) {
      bad_value(item(at, 0), render_number(p.bytes),
                "bytes must ascend strictly (" + item(path, i - 1) + " has " + render_number(points[i - 1].bytes) + ")");
    }
  }
}

void validate_curve(const GroupCurve& curve, std::int64_t world, const std::string& path) {
  if (!known_collective(curve.collective)) {
    bad_value(field(path, "collective"), render_text(curve.collective), "unknown collective; expected " + collective_list());
  }
  const GroupShape& s = curve.shape;
  if (s.n < 1 || s.n > world) {
    bad_value(field(path, "n"), std::to_string(s.n), "must be in 1..world = " + std::to_string(world));
  }
  if (s.hosts < 1 || s.hosts > s.n) {
    bad_value(field(path, "hosts"), std::to_string(s.hosts), "must be in 1..n = " + std::to_string(s.n));
  }
  if (s.ranks_per_host < 1 || s.ranks_per_host > s.n || s.ranks_per_host * s.hosts < s.n ||
      s.ranks_per_host + (s.hosts - 1) > s.n) {
    bad_value(field(path, "ranks_per_host"), std::to_string(s.ranks_per_host),
              "n = " + std::to_string(s.n) + " ranks on hosts = " + std::to_string(s.hosts) +
                  " need ranks_per_host * hosts >= n and ranks_per_host + hosts - 1 <= n");
  }
  if (curve.fit) validate_fit(*curve.fit, path);
  if (curve.model == CurveModel::AlphaBeta && !curve.fit) {
    bad_value(field(path, "model"), "\"alpha_beta\"", "needs alpha_us, busbw_gbps, r2 and samples");
  }
  if (curve.points.empty()) bad(field(path, "points"), "a curve needs at least one point");
  if (curve.points.size() > kMaxCurvePoints) {
    bad(field(path, "points"), std::to_string(curve.points.size()) + " points; at most " + std::to_string(kMaxCurvePoints));
  }
  for (std::size_t i = 0; i < curve.points.size(); ++i) {
    const CurvePoint& p = curve.points[i];
    const std::string at = item(field(path, "points"), i);
    if (!std::isfinite(p.bytes) || !(p.bytes > 0)) bad_value(item(at, 0), render_number(p.bytes), "bytes must be finite and > 0");
    if (!std::isfinite(p.time_us) || !(p.time_us > 0)) bad_value(item(at, 1), render_number(p.time_us), "time_us must be finite and > 0");
    if (i > 0 && !(p.bytes > curve.points[i - 1].bytes)) {
      bad_value(item(at, 0), render_number(p.bytes),
                "bytes must ascend strictly (" + item(field(path, "points"), i - 1) + " has " +
                    render_number(curve.points[i - 1].bytes) + ")");
    }
  }
  validate_factor_points(curve.as_run, field(path, "as_run"));
  if (curve.holdout) {
    const HoldoutError& h = *curve.holdout;
    const std::string at = field(path, "holdout");
    if (!std::isfinite(h.median) || h.median < 0) bad_value(field(at, "median"), render_number(h.median), "must be finite and >= 0");
    if (!std::isfinite(h.p90) || h.p90 < h.median) {
      bad_value(field(at, "p90"), render_number(h.p90), "must be finite and >= median = " + render_number(h.median));
    }
    // calibrate holds out every other size and keeps the largest: at most half of the curve's points.
    const auto most = static_cast<std::int64_t>(curve.points.size() / 2);
    if (most < 1) {
      bad(at, "a curve of " + std::to_string(curve.points.size()) + " point has nothing to hold out");
    } else if (h.points < 1 || h.points > most) {
      bad_value(field(at, "points"), std::to_string(h.points),
                "must be in 1.." + std::to_string(most) + " (half of the curve's " +
                    std::to_string(curve.points.size()) + " points)");
    }
  }
}

// "axis_corrections", once the rest is valid (a correction needs the curve of its axes' group shape and rank_cpus).
// `mesh_ranks` is the calibrated mesh's rank count (<= world).
void validate_axis_corrections(const Calibration& c, std::int64_t mesh_ranks) {
  if (!c.axis_corrections.empty() && c.groups.empty()) {
    bad("axis_corrections", "needs \"groups\": a correction scales the curve of its axis' group shape");
  }
  if (!c.axis_corrections.empty() && c.rank_cpus.empty()) {
    bad("axis_corrections", "needs \"rank_cpus\": corrections hold for ranks bound as the calibrated job's were");
  }
  if (c.axis_corrections.size() > kMaxCalibrationCurves) {
    bad("axis_corrections", std::to_string(c.axis_corrections.size()) + " corrections; at most " +
                                std::to_string(kMaxCalibrationCurves));
  }
  for (std::size_t i = 0; i < c.axis_corrections.size(); ++i) {
    const AxisCorrection& a = c.axis_corrections[i];
    const std::string path = item("axis_corrections", i);
    std::vector<std::int64_t> axes(a.axes.begin(), a.axes.end());
    if (a.axes.empty()) bad_value(field(path, "axes"), "[]", "a correction names at least one axis");
    for (std::size_t k = 0; k < a.axes.size(); ++k) {
      if (a.axes[k] >= c.mesh_shape.size() || (k > 0 && a.axes[k] <= a.axes[k - 1])) {
        bad_value(field(path, "axes"), render_ints(axes),
                  "ascending axes of mesh.shape = " + render_ints(c.mesh_shape) + " (0.." +
                      std::to_string(c.mesh_shape.size() - 1) + ")");
      }
    }
    if (!known_collective(a.collective)) {
      bad_value(field(path, "collective"), render_text(a.collective), "unknown collective; expected " + collective_list());
    }
    if (a.factors.empty()) bad(field(path, "factors"), "a correction needs at least one point");
    validate_factor_points(a.factors, field(path, "factors"));
    validate_factor_points(a.as_run, field(path, "as_run"));
    // The curve it corrects: the collective on the one shape of its axes' groups in the calibrated job.
    if (mesh_ranks <= static_cast<std::int64_t>(c.rank_hosts.size())) {
      const std::vector<GroupShape> shapes = group_shapes(c.mesh_shape, a.axes, c.rank_hosts);
      if (shapes.size() != 1 || find_curve(c, a.collective, shapes.front()) == nullptr) {
        bad(path, a.collective + " on axes " + render_ints(axes) + ": " +
                      (shapes.size() != 1 ? std::string("their groups differ in shape")
                                          : "no curve of their groups' shape (" + to_string(shapes.front()) + ")") +
                      ", so nothing to correct");
      }
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (c.axis_corrections[j].axes == a.axes && c.axis_corrections[j].collective == a.collective) {
        bad(path, a.collective + " on axes " + render_ints(axes) + " has a correction already (" +
                      item("axis_corrections", j) + ")");
      }
    }
  }
}

void validate_calibration(const Calibration& c) {
  detail::check_text(c.backend, "backend", 1, kMaxBackendBytes, true);
  if (!c.timing.empty() && c.timing != "pipelined" && c.timing != "single_shot") {
    bad_value("timing", render_text(c.timing), "expected \"pipelined\" or \"single_shot\"");
  }
  if (c.world < 1 || c.world > kMaxCalibrationWorld) {
    bad_value("world", std::to_string(c.world), "must be in 1.." + std::to_string(kMaxCalibrationWorld));
  }
  if (c.mesh_shape.empty()) bad_value("mesh.shape", "[]", "a mesh needs at least one axis");
  if (c.mesh_shape.size() > kMaxCalibrationAxes) {
    bad_value("mesh.shape", render_ints(c.mesh_shape), "at most " + std::to_string(kMaxCalibrationAxes) + " axes");
  }
  for (std::size_t i = 0; i < c.mesh_shape.size(); ++i) {
    if (c.mesh_shape[i] < 1) bad_value(item("mesh.shape", i), std::to_string(c.mesh_shape[i]), "axis sizes must be >= 1");
  }
  if (c.mesh_names.size() != c.mesh_shape.size()) {
    bad_value("mesh.names", render_strings(c.mesh_names),
              std::to_string(c.mesh_names.size()) + " names for the " + std::to_string(c.mesh_shape.size()) +
                  " axes of mesh.shape = " + render_ints(c.mesh_shape));
  }
  for (std::size_t i = 0; i < c.mesh_names.size(); ++i) {
    detail::check_name(c.mesh_names[i], item("mesh.names", i), kMaxCalibrationNameChars, false);
    for (std::size_t j = 0; j < i; ++j) {
      if (c.mesh_names[j] == c.mesh_names[i]) {
        bad_value(item("mesh.names", i), render_text(c.mesh_names[i]),
                  "duplicate axis name (also " + item("mesh.names", j) + ")");
      }
    }
  }
  std::int64_t ranks = 1;
  for (const std::int64_t size : c.mesh_shape) {
    if (__builtin_mul_overflow(ranks, size, &ranks)) {
      bad_value("mesh.shape", render_ints(c.mesh_shape),
                "world = " + std::to_string(c.world) + " but the mesh holds more than 2^63-1 ranks");
    }
  }
  if (ranks > c.world) {
    bad_value("mesh.shape", render_ints(c.mesh_shape),
              "world = " + std::to_string(c.world) + " but the mesh holds " + std::to_string(ranks) + " ranks");
  }
  if (c.axes.size() > kMaxCalibrationAxisEntries) {
    bad("axes", std::to_string(c.axes.size()) + " axes; at most " + std::to_string(kMaxCalibrationAxisEntries));
  }
  for (const auto& [axis, fits] : c.axes) {
    detail::check_name(axis, "axes", kMaxCalibrationNameChars, false);
    const std::string axis_path = field("axes", axis);
    for (const auto& [collective, fit] : fits) {
      if (!known_collective(collective)) {
        bad_value(axis_path, render_text(collective), "unknown collective; expected " + collective_list());
      }
      validate_fit(fit, field(axis_path, collective));
    }
  }
  if (!c.rank_hosts.empty() && static_cast<std::int64_t>(c.rank_hosts.size()) != c.world) {
    bad("rank_hosts", std::to_string(c.rank_hosts.size()) + " hosts for world = " + std::to_string(c.world) +
                          " ranks: one host index per world rank");
  }
  for (std::size_t r = 0; r < c.rank_hosts.size(); ++r) {
    if (c.rank_hosts[r] < 0 || c.rank_hosts[r] >= c.world) {
      bad_value(item("rank_hosts", r), std::to_string(c.rank_hosts[r]), "a host index in 0..world-1");
    }
  }
  if (!c.groups.empty() && c.rank_hosts.empty()) {
    bad("rank_hosts", "required with \"groups\": the curves are keyed by the hosts of the calibrated job's ranks");
  }
  if (c.groups.size() > kMaxCalibrationCurves) {
    bad("groups", std::to_string(c.groups.size()) + " curves; at most " + std::to_string(kMaxCalibrationCurves));
  }
  // The job's hosts and its fullest one: a curve of a shape they could not hold was never measured on them.
  std::map<std::int64_t, std::int64_t> ranks_on_host;
  for (const std::int64_t h : c.rank_hosts) ++ranks_on_host[h];
  std::int64_t fullest = 0;
  for (const auto& [host, count] : ranks_on_host) fullest = std::max(fullest, count);
  const auto hosts = static_cast<std::int64_t>(ranks_on_host.size());
  for (std::size_t i = 0; i < c.groups.size(); ++i) {
    validate_curve(c.groups[i], c.world, item("groups", i));
    const GroupShape& shape = c.groups[i].shape;
    if (shape.hosts > hosts) {
      bad_value(field(item("groups", i), "hosts"), std::to_string(shape.hosts),
                "rank_hosts places the calibrated job on " + std::to_string(hosts) + (hosts == 1 ? " host" : " hosts"));
    }
    if (shape.ranks_per_host > fullest) {
      bad_value(field(item("groups", i), "ranks_per_host"), std::to_string(shape.ranks_per_host),
                "rank_hosts puts at most " + std::to_string(fullest) + " of the calibrated job's ranks on one host");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (c.groups[j].collective == c.groups[i].collective && c.groups[j].shape == c.groups[i].shape) {
        bad(item("groups", i), c.groups[i].collective + " on " + to_string(c.groups[i].shape) + " has a curve already (" +
                                   item("groups", j) + ")");
      }
    }
  }
  if (!c.rank_cpus.empty() && static_cast<std::int64_t>(c.rank_cpus.size()) != c.world) {
    bad("rank_cpus", std::to_string(c.rank_cpus.size()) + " CPU lists for world = " + std::to_string(c.world) +
                         " ranks: one per world rank");
  }
  for (std::size_t r = 0; r < c.rank_cpus.size(); ++r) {
    const std::string& cpus = c.rank_cpus[r];
    if (cpus.size() > kMaxCpuListChars || !parse_cpu_list(cpus)) {
      bad_value(item("rank_cpus", r), render_text(cpus.substr(0, 64)),
                "a CPU list as Linux writes one: ascending CPUs and ranges a-b with a < b (\"0-3,8\")");
    }
  }
  validate_axis_corrections(c, ranks);
}

// [[bytes, factor, steps], ...] on one line.
std::string factor_points_inline(const std::vector<AsRunPoint>& points) {
  std::string out = "[";
  for (std::size_t k = 0; k < points.size(); ++k) {
    const AsRunPoint& p = points[k];
    out += (k == 0 ? "[" : ", [") + detail::number(p.bytes) + ", " + detail::number(p.factor) + ", " +
           std::to_string(p.steps) + "]";
  }
  return out + "]";
}

}  // namespace

Calibration parse_calibration(std::string_view json_text) {
  if (json_text.size() > kMaxCalibrationFileBytes) {
    raise(ErrorKind::ValueError, "the calibration is " + std::to_string(json_text.size()) + " bytes; at most " +
                                     std::to_string(kMaxCalibrationFileBytes) + " (16 MiB)");
  }
  const json root = detail::parse_json(json_text, kMaxCalibrationJsonDepth);
  Calibration calibration = calibration_from_json(root);
  validate_calibration(calibration);
  return calibration;
}

Calibration load_calibration(const std::filesystem::path& path) {
  const std::string text = detail::read_file(path, "calibration", kMaxCalibrationFileBytes);
  return detail::with_path(path, [&text] { return parse_calibration(text); });
}

std::string to_json_text(const Calibration& calibration) {
  validate_calibration(calibration);
  std::string out = "{\n";
  out += "  \"format\": " + str(kCalibrationFormat) + ",\n";
  out += "  \"version\": " + std::to_string(kCalibrationVersion) + ",\n";
  out += "  \"backend\": " + str(calibration.backend) + ",\n";
  if (!calibration.timing.empty()) out += "  \"timing\": " + str(calibration.timing) + ",\n";
  out += "  \"world\": " + std::to_string(calibration.world) + ",\n";
  out += "  \"mesh\": {\n";
  out += "    \"shape\": " + detail::ints_inline(calibration.mesh_shape) + ",\n";
  out += "    \"names\": " + detail::strings_inline(calibration.mesh_names) + "\n";
  out += "  },\n";
  if (calibration.axes.empty()) {
    out += "  \"axes\": {}";
  } else {
    out += "  \"axes\": {\n";
    std::size_t a = 0;
    for (const auto& [axis, fits] : calibration.axes) {
      out += "    " + str(axis) + ": ";
      if (fits.empty()) {
        out += "{}";
      } else {
        out += "{\n";
        std::size_t f = 0;
        for (const auto& [collective, fit] : fits) {
          out += "      " + str(collective) + ": {\"alpha_us\": " + detail::number(fit.alpha_us) +
                 ", \"busbw_gbps\": " + detail::number(fit.busbw_gbps) + ", \"r2\": " + detail::number(fit.r2) +
                 ", \"samples\": " + std::to_string(fit.samples) + "}";
          out += ++f < fits.size() ? ",\n" : "\n";
        }
        out += "    }";
      }
      out += ++a < calibration.axes.size() ? ",\n" : "\n";
    }
    out += "  }";
  }
  if (!calibration.rank_hosts.empty()) out += ",\n  \"rank_hosts\": " + detail::ints_inline(calibration.rank_hosts);
  if (!calibration.groups.empty()) {
    out += ",\n  \"groups\": [\n";
    for (std::size_t i = 0; i < calibration.groups.size(); ++i) {
      const GroupCurve& c = calibration.groups[i];
      out += "    {\"collective\": " + str(c.collective) + ", \"n\": " + std::to_string(c.shape.n) +
             ", \"hosts\": " + std::to_string(c.shape.hosts) + ", \"ranks_per_host\": " +
             std::to_string(c.shape.ranks_per_host) + ", \"model\": " + str(to_string(c.model));
      if (c.fit) {
        out += ", \"alpha_us\": " + detail::number(c.fit->alpha_us) + ", \"busbw_gbps\": " +
               detail::number(c.fit->busbw_gbps) + ", \"r2\": " + detail::number(c.fit->r2) +
               ", \"samples\": " + std::to_string(c.fit->samples);
      }
      if (c.holdout) {
        out += ",\n     \"holdout\": {\"median\": " + detail::number(c.holdout->median) + ", \"p90\": " +
               detail::number(c.holdout->p90) + ", \"points\": " + std::to_string(c.holdout->points) + "}";
      }
      out += ",\n     \"points\": [";
      for (std::size_t k = 0; k < c.points.size(); ++k) {
        out += (k == 0 ? "[" : ", [") + detail::number(c.points[k].bytes) + ", " + detail::number(c.points[k].time_us) + "]";
      }
      out += "]";
      if (!c.as_run.empty()) out += ",\n     \"as_run\": " + factor_points_inline(c.as_run);
      out += "}";
      out += i + 1 < calibration.groups.size() ? ",\n" : "\n";
    }
    out += "  ]";
  }
  if (!calibration.rank_cpus.empty()) out += ",\n  \"rank_cpus\": " + detail::strings_inline(calibration.rank_cpus);
  if (!calibration.axis_corrections.empty()) {
    out += ",\n  \"axis_corrections\": [\n";
    for (std::size_t i = 0; i < calibration.axis_corrections.size(); ++i) {
      const AxisCorrection& a = calibration.axis_corrections[i];
      const std::vector<std::int64_t> axes(a.axes.begin(), a.axes.end());
      out += "    {\"axes\": " + detail::ints_inline(axes) + ", \"collective\": " + str(a.collective) +
             ",\n     \"factors\": " + factor_points_inline(a.factors) +
             (a.as_run.empty() ? std::string() : ",\n     \"as_run\": " + factor_points_inline(a.as_run)) + "}";
      out += i + 1 < calibration.axis_corrections.size() ? ",\n" : "\n";
    }
    out += "  ]";
  }
  if (calibration.transport) {
    out += ",\n  \"transport\": {";
    bool first = true;
    for (const auto& [name, value] : *calibration.transport) {
      out += (first ? "" : ", ") + str(name) + ": " + str(value);
      first = false;
    }
    out += "}";
  }
  out += "\n}\n";
  return out;
}

}  // namespace meshloom
