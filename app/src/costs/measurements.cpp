#include "costs/measurements.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <set>
#include <type_traits>
#include <utility>

#include "json_read.hpp"
#include "meshloom/error.hpp"
#include "meshloom/plan/plan.hpp"
#include "costs/record_fields.hpp"

namespace meshloom::app {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;
// A records file is read whole before its lines are: the launcher's bound on a records file (refine, rescore).
constexpr std::size_t kMaxFileBytes = std::size_t{256} << 20;
constexpr std::array<std::string_view, 5> kCollectives{"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                                       "broadcast"};

using records::Bad;
using records::excerpt;
using records::field;
using records::integer;
using records::show;
using records::text;

double number(const json& obj, const char* name) {
  const json& v = field(obj, name);
  if (!v.is_number()) throw Bad{std::string("field \"") + name + "\" = " + show(v) + ": expected a number"};
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < 0) throw Bad{std::string("field \"") + name + "\" = " + show(v) + ": must be finite and >= 0"};
  return d;
}
template <typename T>
std::vector<T> list_of(const json& obj, const char* name, bool (json::*is)() const noexcept, const char* what) {
  std::vector<T> out;
  const auto it = obj.find(name);
  if (it == obj.end()) return out;
  if (!it->is_array()) throw Bad{std::string("field \"") + name + "\" = " + show(*it) + ": expected a list of " + what};
  for (const auto& v : *it) {
    if (!(v.*is)()) throw Bad{std::string("field \"") + name + "\" = " + show(*it) + ": expected a list of " + what};
    if constexpr (std::is_same_v<T, std::int64_t>) {
      try {
        out.push_back(detail::get_int(v, std::string("field \"") + name + "\""));
      } catch (const Error& e) {
        throw Bad{e.message()};
      }
    } else {
      out.push_back(v.get<T>());
    }
  }
  return out;
}

RunConfig parse_config(const json& j) {
  RunConfig c;
  c.backend = text(j, "backend");
  c.world = integer(j, "world");
  const json& mesh = field(j, "mesh");
  if (!mesh.is_object()) throw Bad{"field \"mesh\" = " + show(mesh) + ": expected an object"};
  if (!mesh.contains("shape")) throw Bad{"missing field \"mesh.shape\""};
  c.mesh_shape = list_of<std::int64_t>(mesh, "shape", &json::is_number_integer, "integers");
  c.mesh_names = list_of<std::string>(mesh, "names", &json::is_string, "names");
  if (c.world < 1) throw Bad{"field \"world\" = " + std::to_string(c.world) + ": must be >= 1"};
  std::int64_t ranks = 1;
  for (const std::int64_t size : c.mesh_shape) {
    if (size < 1 || ranks > c.world / size) {
      throw Bad{"field \"mesh.shape\" = " + show(mesh["shape"]) + ": expected axis sizes >= 1 whose product is at most " +
                "the world, " + std::to_string(c.world)};
    }
    ranks *= size;
  }
  if (!c.mesh_names.empty() && c.mesh_names.size() != c.mesh_shape.size()) {
    throw Bad{"field \"mesh.names\" = " + show(mesh["names"]) + ": expected one name per axis of " +
              show(mesh["shape"])};
  }
  for (std::size_t i = 0; i < c.mesh_names.size(); ++i) {
    if (std::find(c.mesh_names.begin(), c.mesh_names.begin() + static_cast<std::ptrdiff_t>(i), c.mesh_names[i]) !=
        c.mesh_names.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw Bad{"field \"mesh.names\" = " + show(mesh["names"]) + ": \"" + c.mesh_names[i] + "\" names two axes"};
    }
  }
  c.sizes = list_of<std::int64_t>(j, "sizes", &json::is_number_integer, "integers");
  c.collectives = list_of<std::string>(j, "collectives", &json::is_string, "names");
  return c;
}

std::pair<SeriesKey, MeasuredPoint> parse_result(const json& j) {
  SeriesKey key;
  MeasuredPoint p;
  key.axis = text(j, "axis");
  if (key.axis.empty()) throw Bad{"field \"axis\" = \"\": expected an axis name"};
  key.collective = text(j, "collective");
  if (std::find(kCollectives.begin(), kCollectives.end(), key.collective) == kCollectives.end()) {
    throw Bad{"field \"collective\" = " + show(json(key.collective)) +
              ": unknown collective (expected all_reduce, all_gather, reduce_scatter, all_to_all or broadcast)"};
  }
  p.group_size = integer(j, "group_size");
  if (p.group_size < 1) throw Bad{"field \"group_size\" = " + std::to_string(p.group_size) + ": must be >= 1"};
  p.groups = integer(j, "groups");
  p.dtype = text(j, "dtype");
  p.bytes = integer(j, "bytes");
  if (p.bytes < 0) throw Bad{"field \"bytes\" = " + std::to_string(p.bytes) + ": must be >= 0"};
  p.count = integer(j, "count");
  p.time_us = number(j, "time_us");
  p.algbw_gbps = number(j, "algbw_gbps");
  p.busbw_gbps = number(j, "busbw_gbps");
  p.wrong = integer(j, "wrong");
  if (const auto span = j.find("span"); span != j.end()) {
    if (!span->is_object()) throw Bad{"field \"span\" = " + show(*span) + ": expected an object"};
    const GroupShape shape{p.group_size, integer(*span, "hosts"), integer(*span, "ranks_per_host")};
    if (shape.hosts < 1 || shape.hosts > shape.n || shape.ranks_per_host < 1 || shape.ranks_per_host > shape.n) {
      throw Bad{"field \"span\" = " + show(*span) + ": hosts and ranks_per_host must be in 1..group_size = " +
                std::to_string(shape.n)};
    }
    p.shape = shape;
  }
  return {std::move(key), std::move(p)};
}

}  // namespace

LineResult Measurements::fail(LineResult result, const std::string& why) {
  result.kind = RecordKind::Invalid;
  result.series.reset();
  result.error = "line " + std::to_string(result.line) + ": " + why;
  problems_.push_back(result.error);
  return result;
}

LineResult Measurements::add_line(std::string_view line) {
  LineResult result;
  result.line = ++lines_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return result;
  if (line.size() > kMaxLineBytes) return fail(result, "longer than 1 MiB; not a bench record");

  json j;
  try {
    j = json::parse(line.begin(), line.end());
  } catch (const json::parse_error& e) {
    // An error at the end of the input: the line was cut short (a crash while writing it, or a partial read).
    if (e.byte >= line.size()) {
      return fail(result, "truncated record: the line ends inside a JSON value after " + std::to_string(line.size()) +
                              " characters");
    }
    return fail(result, "not a JSON record (syntax error at column " + std::to_string(e.byte) + "): " + excerpt(line));
  } catch (const json::exception& e) {
    // Valid syntax the parser still cannot hold: a number past a double's range (1e400). what() is
    // "[json.exception.out_of_range.406] number overflow parsing '1e400'".
    const std::string what = e.what();
    return fail(result, "not a JSON record (" + what.substr(what.find("] ") + 2) + "): " + excerpt(line));
  }
  // The engine's JSON policy on top of the syntax: duplicate keys and overly deep values are refused.
  try {
    (void)detail::parse_json(line, 16);
  } catch (const Error& e) {
    return fail(result, e.message());
  }
  if (!j.is_object()) return fail(result, "not a JSON object: " + excerpt(line));

  std::string type;
  try {
    type = text(j, "type");
  } catch (const Bad& bad) {
    return fail(result, "not a bench record: " + bad.why);
  }
  try {
    if (type == "config") {
      if (config_) throw Bad{"a second config record (one bench run per stream)"};
      config_ = parse_config(j);
      result.kind = RecordKind::Config;
    } else if (type == "result") {
      if (!config_) throw Bad{"a result record before the config record"};
      auto [key, point] = parse_result(j);
      point.line = result.line;
      result.kind = RecordKind::Result;
      result.series = key;
      add_point(key, std::move(point));
    } else if (type == "summary") {
      const auto it = j.find("ok");
      if (it == j.end() || !it->is_boolean()) {
        throw Bad{"field \"ok\"" + (it == j.end() ? std::string(" is missing") : " = " + show(*it)) +
                  ": expected true or false"};
      }
      summary_ = it->get<bool>();
      result.kind = RecordKind::Summary;
    } else if (type == "error") {
      const auto message = j.find("message");
      const auto rank = j.find("rank");
      run_errors_.push_back("rank " + (rank == j.end() ? std::string("?") : show(*rank)) + ": " +
                            (message != j.end() && message->is_string() ? message->get<std::string>()
                                                                         : std::string("(no message)")));
      result.kind = RecordKind::Error;
    } else {
      result.kind = RecordKind::Unknown;
    }
  } catch (const Bad& bad) {
    return fail(result, type + " record: " + bad.why);
  } catch (const json::exception& e) {
    return fail(result, type + " record: " + e.what());
  }
  return result;
}

void Measurements::add_point(const SeriesKey& key, MeasuredPoint point) {
  auto it = index_.find(key);
  if (it == index_.end()) {
    it = index_.emplace(key, series_.size()).first;
    MeasuredSeries s;
    s.key = key;
    s.group_size = point.group_size;
    s.shape = point.shape;
    series_.push_back(std::move(s));
  }
  series_[it->second].points.push_back(std::move(point));
}

std::string read_jsonl_lines(const std::filesystem::path& path, std::vector<std::string>& lines) {
  std::string text;
  try {
    text = detail::read_file(path, "records", kMaxFileBytes);
  } catch (const Error& e) {
    return e.message();
  }
  lines.clear();
  std::size_t begin = 0;
  while (begin < text.size()) {
    const std::size_t end = std::min(text.find('\n', begin), text.size());
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return {};
}

std::string Measurements::load_jsonl(const std::filesystem::path& path) {
  std::vector<std::string> all;
  if (std::string error = read_jsonl_lines(path, all); !error.empty()) return error;
  clear();
  for (const auto& line : all) (void)add_line(line);
  return {};
}

void Measurements::clear() {
  lines_ = 0;
  config_.reset();
  summary_.reset();
  run_errors_.clear();
  problems_.clear();
  series_.clear();
  index_.clear();
}

const MeasuredSeries* Measurements::find(const SeriesKey& key) const {
  const auto it = index_.find(key);
  return it == index_.end() ? nullptr : &series_[it->second];
}

std::size_t Measurements::point_count() const noexcept {
  std::size_t n = 0;
  for (const auto& s : series_) n += s.points.size();
  return n;
}

std::vector<std::string> Measurements::axes() const {
  std::vector<std::string> out;
  for (const auto& s : series_) {
    if (std::find(out.begin(), out.end(), s.key.axis) == out.end()) out.push_back(s.key.axis);
  }
  return out;
}

std::vector<std::string> Measurements::collectives() const {
  std::vector<std::string> out;
  for (const auto& s : series_) {
    if (std::find(out.begin(), out.end(), s.key.collective) == out.end()) out.push_back(s.key.collective);
  }
  return out;
}

std::string Measurements::load_calibration(const std::filesystem::path& path) {
  try {
    calibration_ = meshloom::load_calibration(path);
  } catch (const meshloom::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("cannot load the calibration \"") + path.string() + "\": " + e.what();
  }
  return {};
}

std::optional<CollectiveFit> Measurements::fit(const SeriesKey& key) const {
  if (!calibration_) return std::nullopt;
  const auto axis = calibration_->axes.find(key.axis);
  if (axis == calibration_->axes.end()) return std::nullopt;
  const auto f = axis->second.find(key.collective);
  if (f == axis->second.end()) return std::nullopt;
  return f->second;
}

std::optional<std::int64_t> Measurements::group_size(const SeriesKey& key) const {
  if (const MeasuredSeries* s = find(key); s != nullptr && s->group_size > 0) return s->group_size;
  const auto from_mesh = [&key](const std::vector<std::int64_t>& shape,
                                const std::vector<std::string>& names) -> std::optional<std::int64_t> {
    for (std::size_t i = 0; i < names.size() && i < shape.size(); ++i) {
      if (names[i] == key.axis) return shape[i];
    }
    return std::nullopt;
  };
  if (calibration_) {
    if (auto n = from_mesh(calibration_->mesh_shape, calibration_->mesh_names)) return n;
  }
  if (config_) return from_mesh(config_->mesh_shape, config_->mesh_names);
  return std::nullopt;
}

std::optional<FittedPoint> Measurements::fitted(const SeriesKey& key, double bytes) const {
  if (!calibration_ || !fit(key) || !(bytes >= 0) || !std::isfinite(bytes)) return std::nullopt;
  const auto collective = collective_from_string(key.collective);
  if (!collective || !communicates(*collective)) return std::nullopt;
  const auto n = group_size(key);
  if (!n || *n < 1) return std::nullopt;
  // nccl-tests' all_gather size is the gathered array: the engine takes the local shard and multiplies by n.
  const std::int64_t per = *collective == Collective::AllGather ? *n : 1;
  if (!calibration_->groups.empty()) {
    // Curves by group shape: the series' own groups' shape (its span), priced at the points' size.
    const MeasuredSeries* s = find(key);
    if (s == nullptr || !s->shape) return std::nullopt;
    const CalibratedCostModel model(*calibration_, {});
    const double size = std::floor(bytes / static_cast<double>(per)) * static_cast<double>(per);
    // The benchmark's curve (no as-run correction): these are the benchmark's points.
    const std::optional<double> cost = model.benchmark_us(key.collective, *s->shape, size);
    if (!cost || !std::isfinite(*cost)) return std::nullopt;
    return FittedPoint{size, *cost};
  }
  // One axis of the calibrated size, named as the series' axis: the engine prices exactly this (axis, collective).
  const std::vector<std::int64_t> shape{*n};
  const CalibratedCostModel model(*calibration_, {key.axis});
  StepCostInput step;
  step.collective = *collective;
  step.axis = 0;
  step.mesh_shape = &shape;
  step.local_bytes = static_cast<std::int64_t>(std::floor(bytes / static_cast<double>(per)));
  const double cost = model.step_cost(step);
  if (!std::isfinite(cost)) return std::nullopt;
  return FittedPoint{static_cast<double>(step.local_bytes * per), cost};
}

std::vector<FittedPoint> Measurements::fitted_curve(const SeriesKey& key, double lo, double hi, int samples) const {
  std::vector<FittedPoint> out;
  if (samples < 2 || !(lo > 0) || !(hi >= lo) || !std::isfinite(hi)) return out;
  const double llo = std::log(lo);
  const double lhi = std::log(hi);
  for (int i = 0; i < samples; ++i) {
    const double x = i + 1 == samples ? hi : std::exp(llo + (lhi - llo) * i / (samples - 1));
    const auto p = fitted(key, x);
    if (!p) return {};
    if (p->bytes > 0 && (out.empty() || p->bytes > out.back().bytes)) out.push_back(*p);
  }
  return out;
}

}  // namespace meshloom::app
