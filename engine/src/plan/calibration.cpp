// The calibration file of the launcher's contract: reading (strict), loading and canonical writing.
//
//   {"format": "meshloom-calibration", "version": 1, "backend": "mpi", "world": 8,
//    "mesh": {"shape": [2, 4], "names": ["dp", "tp"]},
//    "axes": {"tp": {"all_reduce": {"alpha_us": 12.0, "busbw_gbps": 3.1, "r2": 0.998, "samples": 14}}}}
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
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
  detail::check_fields(root, "", kNoun, {"format", "version", "backend", "timing", "world", "mesh", "axes"},
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
    out += "  \"axes\": {}\n";
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
    out += "  }\n";
  }
  out += "}\n";
  return out;
}

}  // namespace meshloom
