#include "costs/prediction_points.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <string>
#include <utility>

#include "json_read.hpp"
#include "costs/measurements.hpp"
#include "meshloom/error.hpp"
#include "costs/record_fields.hpp"

namespace meshloom::app {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;
constexpr std::size_t kMaxDepth = 16;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using records::Bad;
using records::excerpt;
using records::field;
using records::show;
using records::text;

// An integer >= 0, by the engine's integer policy (record_fields.hpp).
std::int64_t natural(const json& v, const std::string& what) {
  const std::int64_t n = records::integer_value(v, what);
  if (n < 0) throw Bad{what + " = " + std::to_string(n) + ": must be >= 0"};
  return n;
}
std::int64_t natural(const json& obj, const char* name) {
  return natural(field(obj, name), std::string("field \"") + name + "\"");
}
StepRecord parse_step(const json& j, const std::vector<std::string>& order) {
  StepRecord r;
  r.plan = natural(j, "plan");
  r.step = natural(j, "step");
  if (j.contains("request")) r.request = natural(j, "request");
  const json& axes = field(j, "axes");
  if (!axes.is_array()) throw Bad{"field \"axes\" = " + show(axes) + ": expected a list of mesh axes"};
  for (std::size_t i = 0; i < axes.size(); ++i) r.axes.push_back(natural(axes[i], "field \"axes[" + std::to_string(i) + "]\""));
  r.collective = text(j, "collective");
  if (!collective_from_string(r.collective)) {
    throw Bad{"field \"collective\" = " + show(json(r.collective)) + ": not one of the engine's collectives"};
  }
  if (const auto it = j.find("merged"); it != j.end()) {
    if (!it->is_boolean()) throw Bad{"field \"merged\" = " + show(*it) + ": expected true or false"};
    r.merged = it->get<bool>();
  }
  r.from = text(j, "from");
  r.to = text(j, "to");
  r.bytes = natural(j, "bytes");
  const json& predicted = field(j, "predicted");
  if (!predicted.is_object()) throw Bad{"field \"predicted\" = " + show(predicted) + ": expected an object of models"};
  for (const auto& [model, value] : predicted.items()) {
    if (value.is_null()) {
      r.predicted.emplace_back(model, std::nullopt);  // the launcher's JSON for inf and NaN
    } else if (value.is_number()) {
      const double v = value.get<double>();
      r.predicted.emplace_back(model, std::isfinite(v) ? std::optional<double>(v) : std::nullopt);
    } else {
      throw Bad{"field \"predicted." + model + "\" = " + show(value) + ": expected a number or null"};
    }
  }
  // The config's order of models first, then the rest by name (a json object iterates by name).
  std::stable_sort(r.predicted.begin(), r.predicted.end(), [&order](const auto& a, const auto& b) {
    const auto rank = [&order](const std::string& m) {
      return static_cast<std::size_t>(std::find(order.begin(), order.end(), m) - order.begin());
    };
    return rank(a.first) < rank(b.first);
  });
  const json& measured = field(j, "measured_us");
  if (!measured.is_number()) throw Bad{"field \"measured_us\" = " + show(measured) + ": expected a number"};
  r.measured_us = measured.get<double>();
  if (!std::isfinite(r.measured_us)) throw Bad{"field \"measured_us\" = " + show(measured) + ": must be finite"};
  return r;
}

double finite_number(const json& obj, const char* name) {
  const json& v = field(obj, name);
  if (!v.is_number() || !std::isfinite(v.get<double>())) {
    throw Bad{std::string("field \"") + name + "\" = " + show(v) + ": expected a finite number"};
  }
  return v.get<double>();
}

DriftRecord parse_drift(const json& j) {
  DriftRecord r;
  r.when = text(j, "when");
  if (r.when != "before" && r.when != "after") {
    throw Bad{"field \"when\" = " + show(json(r.when)) + ": expected \"before\" or \"after\""};
  }
  for (const auto& [name, ratio] : {std::pair{"median_ratio", &r.median_ratio}, std::pair{"min_ratio", &r.min_ratio},
                                     std::pair{"max_ratio", &r.max_ratio}}) {
    *ratio = finite_number(j, name);
    if (*ratio < 0) {
      throw Bad{"field \"" + std::string(name) + "\" = " + show(j[name]) +
                ": must be >= 0 (a ratio of two times; 0 without anchors)"};
    }
  }
  const json& drifted = field(j, "drifted");
  if (!drifted.is_boolean()) throw Bad{"field \"drifted\" = " + show(drifted) + ": expected true or false"};
  r.drifted = drifted.get<bool>();
  const json& anchors = field(j, "anchors");
  if (!anchors.is_array()) throw Bad{"field \"anchors\" = " + show(anchors) + ": expected a list"};
  r.anchors = anchors.size();
  return r;
}

ReportRecord parse_report(const json& j) {
  ReportRecord r;
  r.model = text(j, "model");
  r.requests = natural(j, "requests");
  r.right = natural(j, "right");
  if (r.right > r.requests) {
    throw Bad{"field \"right\" = " + std::to_string(r.right) + ": more than its " + std::to_string(r.requests) +
              " requests"};
  }
  if (const auto it = j.find("time_lost"); it != j.end()) {
    if (!it->is_object()) throw Bad{"field \"time_lost\" = " + show(*it) + ": expected {\"mean\": .., \"max\": ..}"};
    const auto share = [&it](const char* name) {
      const auto v = it->find(name);
      if (v == it->end()) throw Bad{std::string("field \"time_lost.") + name + "\" is missing"};
      if (!v->is_number() || !std::isfinite(v->get<double>())) {
        throw Bad{std::string("field \"time_lost.") + name + "\" = " + show(*v) + ": expected a finite number"};
      }
      return v->get<double>();
    };
    const double mean = share("mean");
    const double max = share("max");
    // A mean a rounding above its max (a sum divided by the count) is still a mean of those losses.
    if (mean < 0 || mean > max * (1 + 1e-12)) {
      throw Bad{"field \"time_lost\" = " + show(*it) + ": needs 0 <= mean <= max"};
    }
    r.time_lost_mean = mean;
    r.time_lost_max = max;
  }
  if (j.contains("misses_priced_alike")) {
    const std::int64_t alike = natural(j, "misses_priced_alike");
    if (alike > r.requests - r.right) {
      throw Bad{"field \"misses_priced_alike\" = " + std::to_string(alike) + ": must be <= requests - right = " +
                std::to_string(r.requests - r.right)};
    }
    r.misses_priced_alike = alike;
  }
  return r;
}

}  // namespace

std::string percent_text(double share) {
  if (!std::isfinite(share)) return "—";
  char cell[32];
  std::snprintf(cell, sizeof cell, "%.1f %%", 100 * share);
  return cell;
}

namespace {

std::string ratio_text(double r) {
  char cell[32];
  std::snprintf(cell, sizeof cell, "%.2fx", r);
  return cell;
}

// A record the statistics compare: a communicating step that was measured.
bool compared(const StepRecord& r) {
  const auto c = collective_from_string(r.collective);
  return r.measured_us > 0 && c && communicates(*c);
}

}  // namespace

// ---- statistics ------------------------------------------------------------------------------------------------

bool is_microsecond_model(std::string_view model) noexcept { return model != "fixed"; }

double relative_error(double predicted, double measured) noexcept {
  return std::abs(predicted - measured) / measured;
}

double median(std::vector<double> values) {
  if (values.empty()) return kNaN;
  std::sort(values.begin(), values.end());
  const std::size_t k = values.size();
  return k % 2 == 1 ? values[k / 2] : (values[k / 2 - 1] + values[k / 2]) / 2;
}

double nearest_rank(std::vector<double> values, int percent) {
  if (values.empty()) return kNaN;
  std::sort(values.begin(), values.end());
  const auto k = values.size();
  const auto p = static_cast<std::size_t>(std::clamp(percent, 1, 100));
  const std::size_t rank = std::max<std::size_t>(1, (p * k + 99) / 100);  // ceil(p k / 100), exactly
  return values[rank - 1];
}

std::vector<double> average_ranks(const std::vector<double>& values) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&values](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    const double rank = (static_cast<double>(i + 1) + static_cast<double>(j + 1)) / 2.0;  // the average of i+1..j+1
    for (std::size_t k = i; k <= j; ++k) ranks[order[k]] = rank;
    i = j + 1;
  }
  return ranks;
}

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) return kNaN;
  const std::vector<double> rx = average_ranks(x);
  const std::vector<double> ry = average_ranks(y);
  const double mean = (static_cast<double>(x.size()) + 1.0) / 2.0;  // of ranks 1..n, ties averaged or not
  double sxy = 0;
  double sxx = 0;
  double syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double dx = rx[i] - mean;
    const double dy = ry[i] - mean;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx == 0 || syy == 0) return kNaN;
  return sxy / std::sqrt(sxx * syy);
}

// ---- records ---------------------------------------------------------------------------------------------------

std::string PredictionRecords::fail(std::size_t line, const std::string& why) {
  problems_.push_back("line " + std::to_string(line) + ": " + why);
  return problems_.back();
}

std::string PredictionRecords::add_line(std::string_view line) {
  const std::size_t number = ++lines_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return {};
  if (line.size() > kMaxLineBytes) return fail(number, "longer than 1 MiB; not a record");

  json j;
  try {
    j = json::parse(line.begin(), line.end());
  } catch (const json::parse_error& e) {
    if (e.byte >= line.size()) {
      return fail(number, "truncated record: the line ends inside a JSON value after " + std::to_string(line.size()) +
                              " characters");
    }
    return fail(number, "not a JSON record (syntax error at column " + std::to_string(e.byte) + "): " + excerpt(line));
  } catch (const json::exception& e) {
    // Valid syntax the parser still cannot hold: a number past a double's range (1e400). what() is
    // "[json.exception.out_of_range.406] number overflow parsing '1e400'".
    const std::string what = e.what();
    return fail(number, "not a JSON record (" + what.substr(what.find("] ") + 2) + "): " + excerpt(line));
  }
  // The engine's JSON policy on top of the syntax: duplicate keys and overly deep values are refused.
  try {
    (void)detail::parse_json(line, kMaxDepth);
  } catch (const Error& e) {
    return fail(number, e.message());
  }
  if (!j.is_object()) return fail(number, "not a JSON object: " + excerpt(line));

  std::string type;
  try {
    type = text(j, "type");
  } catch (const Bad& bad) {
    return fail(number, "not a record: " + bad.why);
  }
  try {
    if (type == "config") {
      command_ = text(j, "command");
      config_models_.clear();
      if (const auto it = j.find("models"); it != j.end() && it->is_array()) {
        for (const auto& m : *it) {
          if (m.is_string()) config_models_.push_back(m.get<std::string>());
        }
      }
    } else if (type == "step") {
      StepRecord r = parse_step(j, config_models_);
      r.line = number;
      steps_.push_back(std::move(r));
    } else if (type == "drift") {
      DriftRecord r = parse_drift(j);
      r.line = number;
      drift_.push_back(std::move(r));
    } else if (type == "report") {
      ReportRecord r = parse_report(j);
      r.line = number;
      reports_.push_back(std::move(r));
    }
    // plan, summary, compare, request, error, ...: not this view's.
  } catch (const Bad& bad) {
    return fail(number, type + " record: " + bad.why);
  } catch (const json::exception& e) {
    return fail(number, type + " record: " + e.what());
  }
  return {};
}

std::string PredictionRecords::load_jsonl(const std::filesystem::path& path) {
  std::vector<std::string> all;
  if (std::string error = read_jsonl_lines(path, all); !error.empty()) return error;
  clear();
  for (const auto& line : all) (void)add_line(line);
  return {};
}

void PredictionRecords::clear() {
  lines_ = 0;
  command_.clear();
  config_models_.clear();
  problems_.clear();
  steps_.clear();
  drift_.clear();
  reports_.clear();
}

const ReportRecord* PredictionRecords::report(const std::string& model) const noexcept {
  const auto it =
      std::find_if(reports_.rbegin(), reports_.rend(), [&model](const ReportRecord& r) { return r.model == model; });
  return it == reports_.rend() ? nullptr : &*it;
}

std::string picks_text(const ReportRecord& report) {
  if (report.requests == 0) return "—";
  return std::to_string(report.right) + "/" + std::to_string(report.requests) + " (" +
         percent_text(static_cast<double>(report.right) / static_cast<double>(report.requests)) + ")";
}

std::string picks_note(const ReportRecord& report) {
  const std::int64_t wrong = report.requests - report.right;
  if (!report.misses_priced_alike || wrong == 0) return {};
  const std::string how = " between plans it priced alike: its prices did not separate them";
  if (wrong == 1) return (*report.misses_priced_alike == 1 ? "its one wrong pick was" : "its one wrong pick was not") + how;
  return std::to_string(*report.misses_priced_alike) + " of its " + std::to_string(wrong) + " wrong picks" +
         (*report.misses_priced_alike == 1 ? " was" : " were") + how;
}

std::string time_lost_text(const ReportRecord& report) {
  if (!report.time_lost_mean || !report.time_lost_max) return "—";
  return percent_text(*report.time_lost_mean) + " (max " + percent_text(*report.time_lost_max) + ")";
}

bool any_drifted(const std::vector<DriftRecord>& drift) noexcept {
  return std::any_of(drift.begin(), drift.end(), [](const DriftRecord& d) { return d.drifted; });
}

std::string drift_text(const std::vector<DriftRecord>& drift) {
  if (drift.empty()) return {};
  std::string text = "Drift against the calibration (its own points re-timed): ";
  for (std::size_t i = 0; i < drift.size(); ++i) {
    if (i > 0) text += ", ";
    text += (drift[i].anchors == 0 ? std::string("no anchor") : ratio_text(drift[i].median_ratio)) +
            (drift[i].when == "before" ? " before the requests" : " after");
  }
  text += ".";
  const auto worst = std::max_element(drift.begin(), drift.end(), [](const DriftRecord& a, const DriftRecord& b) {
    return std::abs(std::log(a.median_ratio > 0 ? a.median_ratio : 1.0)) <
           std::abs(std::log(b.median_ratio > 0 ? b.median_ratio : 1.0));
  });
  if (any_drifted(drift)) {
    text += std::string(" The machine ran ") + (worst->median_ratio > 1 ? "slower" : "faster") +
            " than when it was calibrated: the errors above include that drift.";
  }
  return text;
}

std::size_t PredictionRecords::unmeasured() const noexcept {
  return static_cast<std::size_t>(
      std::count_if(steps_.begin(), steps_.end(), [](const StepRecord& r) { return !(r.measured_us > 0); }));
}

std::vector<std::string> PredictionRecords::models() const {
  std::vector<std::string> out = config_models_;
  std::vector<std::string> rest;
  for (const auto& r : steps_) {
    for (const auto& [model, value] : r.predicted) {
      if (std::find(out.begin(), out.end(), model) == out.end() &&
          std::find(rest.begin(), rest.end(), model) == rest.end()) {
        rest.push_back(model);
      }
    }
  }
  std::sort(rest.begin(), rest.end());
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

std::vector<PredictionPoint> PredictionRecords::points(const std::string& model) const {
  std::vector<PredictionPoint> out;
  for (const auto& r : steps_) {
    if (!compared(r)) continue;
    const auto it = std::find_if(r.predicted.begin(), r.predicted.end(), [&model](const auto& p) { return p.first == model; });
    if (it == r.predicted.end() || !it->second) continue;
    out.push_back(PredictionPoint{model, *it->second, r.measured_us, r.collective, r.bytes, r.request, r.plan, r.step,
                                  r.line});
  }
  return out;
}

ModelSummary PredictionRecords::summary(const std::string& model) const {
  ModelSummary s;
  s.model = model;
  s.comparable = is_microsecond_model(model);
  for (const auto& r : steps_) {
    if (!compared(r)) continue;
    const auto it = std::find_if(r.predicted.begin(), r.predicted.end(), [&model](const auto& p) { return p.first == model; });
    if (it != r.predicted.end() && !it->second) ++s.not_finite;
  }
  const std::vector<PredictionPoint> pts = points(model);
  s.count = pts.size();
  if (!s.comparable) {
    s.median_error = s.p90_error = s.spearman = kNaN;
    return s;
  }
  std::vector<double> errors;
  std::vector<double> predicted;
  std::vector<double> measured;
  for (const auto& p : pts) {
    errors.push_back(relative_error(p.predicted_us, p.measured_us));
    predicted.push_back(p.predicted_us);
    measured.push_back(p.measured_us);
  }
  s.p90_error = nearest_rank(errors, 90);
  s.median_error = median(std::move(errors));
  s.spearman = spearman(predicted, measured);
  return s;
}

std::vector<ModelSummary> PredictionRecords::summaries() const {
  std::vector<ModelSummary> out;
  for (const auto& m : models()) out.push_back(summary(m));
  return out;
}

StepMatch PredictionRecords::match(const PlanStep& step) const {
  const std::string collective(to_string(step.collective));
  const std::string from = to_string(step.from);
  const std::string to = to_string(step.to);
  std::vector<double> times;
  for (const auto& r : steps_) {
    if (!(r.measured_us > 0) || r.collective != collective || r.bytes != step.bytes || r.from != from || r.to != to ||
        r.axes.size() != step.axes.size()) {
      continue;
    }
    bool same_axes = true;
    for (std::size_t i = 0; i < r.axes.size(); ++i) same_axes = same_axes && static_cast<std::size_t>(r.axes[i]) == step.axes[i];
    if (same_axes) times.push_back(r.measured_us);
  }
  return StepMatch{times.size(), times.empty() ? 0.0 : median(times)};
}

}  // namespace meshloom::app
