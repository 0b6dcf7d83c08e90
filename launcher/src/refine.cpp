#include "refine.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <sstream>
#include <utility>

#include "calibrate_fit.hpp"
#include "group_span.hpp"
#include "jsonl_read.hpp"
#include "meshloom/comm/transport.hpp"
#include "meshloom/error.hpp"
#include "meshloom/plan/plan.hpp"
#include "text_format.hpp"
#include "timing.hpp"
#include "validate_drift.hpp"

namespace meshloom::launcher {

namespace {

using nlohmann::json;
using jsonl::LineContext;

constexpr std::size_t kMaxRecordsFileBytes = std::size_t{256} << 20;
static_assert(kLevelBand == 1 + kDriftWarning, "refine's level band is validate's drift warning");

// A list of axis sizes (each >= 1) in field `name`.
std::vector<std::int64_t> axis_sizes(const LineContext& ctx, const json& shape, const std::string& name) {
  if (!shape.is_array() || shape.empty()) {
    ctx.fail("field \"" + name + "\" = " + jsonl::show(shape) + ": expected a list of axis sizes");
  }
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const std::string at = name + "[" + std::to_string(i) + "]";
    const std::int64_t s = ctx.integer_at(shape[i], at);
    if (s < 1) ctx.fail("field \"" + at + "\" = " + std::to_string(s) + ": must be >= 1");
    out.push_back(s);
  }
  return out;
}

std::vector<std::int64_t> mesh_shape_of(const LineContext& ctx, const json& record) {
  const json& mesh = ctx.field(record, "mesh");
  if (!mesh.is_object()) ctx.fail("field \"mesh\" = " + jsonl::show(mesh) + ": expected an object");
  return axis_sizes(ctx, ctx.field(mesh, "shape"), "mesh.shape");
}

// A drift anchor's "axes" (ascending axes of the drift record's `mesh`); empty when it has none (older files).
std::vector<std::size_t> anchor_axes(const LineContext& ctx, const json& anchor, const std::vector<std::int64_t>& mesh) {
  std::vector<std::size_t> axes;
  if (!anchor.contains("axes")) return axes;
  const json& list = anchor["axes"];
  if (!list.is_array()) ctx.fail("field \"anchors.axes\" = " + jsonl::show(list) + ": expected a list of mesh axes");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::int64_t a = ctx.integer_at(list[i], "anchors.axes[" + std::to_string(i) + "]");
    if (a < 0 || a >= static_cast<std::int64_t>(mesh.size()) ||
        (!axes.empty() && a <= static_cast<std::int64_t>(axes.back()))) {
      ctx.fail("field \"anchors.axes\" = " + jsonl::show(list) + ": expected ascending axes of the drift's mesh of " +
               std::to_string(mesh.size()));
    }
    axes.push_back(static_cast<std::size_t>(a));
  }
  return axes;
}

using CurveKey = std::pair<std::string, GroupShape>;
// The curve's size a step counts at -> records file -> measured / benchmark of its steps there.
using RatiosBySize = std::map<double, std::map<std::size_t, std::vector<double>>>;
// (collective, shape) -> its ratios.
using Ratios = std::map<CurveKey, RatiosBySize>;
// (collective, axes of the calibrated mesh) -> the ratios of that axis' steps, for an axis with a correction.
using AxisKey = std::pair<std::string, std::vector<std::size_t>>;
using AxisRatios = std::map<AxisKey, RatiosBySize>;

// The as-run points of one curve: per size with at least min_steps steps, the mean over the records files of each
// file's median ratio (refine.hpp: each file weighs the same, whatever its number of steps, and a size whose
// collectives run slow in some jobs and fast in others is priced at what it costs on average over jobs).
std::vector<AsRunPoint> fit_points(const RatiosBySize& by_size, std::int64_t min_steps, std::int64_t* dropped) {
  std::vector<AsRunPoint> points;
  for (const auto& [bytes, files] : by_size) {
    std::int64_t steps = 0;
    std::vector<double> per_file;
    for (const auto& [file, ratios] : files) {
      steps += static_cast<std::int64_t>(ratios.size());
      per_file.push_back(median(ratios));
    }
    if (steps < min_steps) {
      if (dropped != nullptr) ++*dropped;
      continue;
    }
    const double mean = std::accumulate(per_file.begin(), per_file.end(), 0.0) / static_cast<double>(per_file.size());
    points.push_back({.bytes = bytes, .factor = mean, .steps = steps});
  }
  return points;
}

// Refits `points` (a curve's or an axis correction's as_run) from `ratios` (nullptr: no step measured it), replacing
// any earlier points; an earlier correction that is gone goes to `dropped` under `name`. Returns the steps counted
// (those of sizes left out too).
std::int64_t refit(const RatiosBySize* ratios, std::int64_t min_steps, const std::string& name,
                   std::vector<AsRunPoint>& points, std::int64_t& sizes_dropped, std::vector<DroppedCorrection>& dropped) {
  const bool had_correction = !points.empty();
  points.clear();
  std::int64_t steps = 0;
  if (ratios != nullptr) {
    points = fit_points(*ratios, min_steps, &sizes_dropped);
    for (const auto& [bytes, files] : *ratios) {
      for (const auto& [file, values] : files) steps += static_cast<std::int64_t>(values.size());
    }
  }
  if (had_correction && points.empty()) dropped.push_back({.curve = name, .measured = ratios != nullptr});
  return steps;
}

// "dp" or "dp,tp": axes of the calibration's mesh by name ("0", "0,1" without names).
std::string axes_text(const Calibration& c, const std::vector<std::size_t>& axes) {
  std::string out;
  for (const std::size_t a : axes) {
    if (!out.empty()) out += ",";
    out += a < c.mesh_names.size() ? c.mesh_names[a] : std::to_string(a);
  }
  return out;
}

// The benchmark curve's time for a sample of a records file, what the as-run factor is taken against: for a file
// whose ranks sat as the calibrated job's (`by_axis`), on the calibrated mesh the time its own axis measured
// (axis_correction_factor); 0 without a curve of its key.
double benchmark_of(const Calibration& base, const StepSample& s, bool by_axis) {
  const GroupCurve* curve = find_curve(base, s.collective, s.shape);
  if (curve == nullptr) return 0.0;
  const double axis = by_axis ? axis_correction_factor(base, s.mesh, s.axes, s.collective, s.bytes) : 1.0;
  return benchmark_time_us(*curve, s.bytes) * axis;
}

// The size of the curve's points nearest `bytes` in log size (the lower on a tie): a step counts at the benchmark's
// own sizes, so that a curve gets at most one factor per point however many tensor shapes the plans had.
double nearest_point_bytes(const GroupCurve& curve, double bytes) {
  double best = curve.points.front().bytes;
  for (const CurvePoint& p : curve.points) {
    if (std::abs(std::log(p.bytes / bytes)) < std::abs(std::log(best / bytes))) best = p.bytes;
  }
  return best;
}

// A records file's level, check by check as validate's drift lines have it: per drift record the median over its
// priced anchors of anchor / the calibration's time for it; the file's level is the check farthest from 1
// (refine_calibration leaves a file out when it lies outside the band: when validate said any check drifted).
RecordsLevel level_of(const Calibration& base, const StepRecords& r) {
  RecordsLevel level;
  level.source = r.source;
  level.by_axis = !base.axis_corrections.empty() && ranks_sat_as_calibrated(base, r.cpus);
  std::map<std::size_t, std::vector<double>> by_check;
  // As validate divided: by the axis' own time only where the file's ranks sat as the calibrated job's (validate
  // refuses axis corrections otherwise, unless told to leave them out, when it divides by the point as here) and the
  // run applied them (its config's count: 0 under --no-axis-corrections).
  const bool anchors_by_axis = level.by_axis && r.axis_corrections.value_or(1) > 0;
  for (const StepSample& a : r.anchors) {
    const double reference = anchor_reference_us(base, a.collective, a.shape, a.bytes, a.mesh, a.axes, anchors_by_axis);
    if (reference > 0) {
      by_check[a.drift_check].push_back(a.measured_us / reference);
      ++level.anchors;
    }
  }
  level.unpriced_anchors = static_cast<std::int64_t>(r.anchors.size()) - level.anchors;
  for (auto& [check, ratios] : by_check) {
    const double m = median(std::move(ratios));
    level.checks.push_back(m);
    if (!level.level || std::abs(std::log(m)) > std::abs(std::log(*level.level))) level.level = m;
  }
  return level;
}

// The ratios of every usable step of the files used but `skip_file`, and what could not be used. A step of a file
// whose ranks sat as the calibrated job's (by_axis) on an axis of the calibrated mesh that has a correction counts
// for its axis too.
struct Collected {
  Ratios ratios;
  AxisRatios axis_ratios;
  std::int64_t used = 0, unpriced = 0;
  std::int64_t files = 0;  // files with at least one step used
};
Collected collect(const Calibration& base, const std::vector<StepRecords>& records,
                  const std::vector<RecordsLevel>& levels, std::size_t skip_file) {
  Collected out;
  for (std::size_t f = 0; f < records.size(); ++f) {
    if (f == skip_file || !levels[f].used) continue;
    const std::int64_t before = out.used;
    for (const StepSample& s : records[f].samples) {
      const GroupCurve* curve = find_curve(base, s.collective, s.shape);
      const double bench = benchmark_of(base, s, levels[f].by_axis);
      if (curve == nullptr || !(bench > 0)) {
        ++out.unpriced;
        continue;
      }
      const double at = nearest_point_bytes(*curve, s.bytes);
      out.ratios[{s.collective, s.shape}][at][f].push_back(s.measured_us / bench);
      const AxisCorrection* c = levels[f].by_axis ? correction_on_mesh(base, s.mesh, s.axes, s.collective) : nullptr;
      if (c != nullptr) {
        out.axis_ratios[{s.collective, c->axes}][at][f].push_back(s.measured_us / bench);  // as the calibrated mesh's
      }
      ++out.used;
    }
    if (out.used > before) ++out.files;
  }
  return out;
}

}  // namespace

bool ranks_sat_as_calibrated(const Calibration& calibration, const std::vector<std::string>& cpus) {
  std::int64_t ranks = 1;
  for (const std::int64_t n : calibration.mesh_shape) ranks *= n;  // <= world (parse_calibration)
  const auto n = static_cast<std::size_t>(ranks);
  return cpus.size() >= n && calibration.rank_cpus.size() >= n &&
         std::equal(cpus.begin(), cpus.begin() + static_cast<std::ptrdiff_t>(n), calibration.rank_cpus.begin());
}

StepRecords parse_step_records(const std::string& text, const std::string& source) {
  StepRecords out;
  out.source = source;
  bool config_seen = false;
  std::vector<std::int64_t> config_mesh;        // run: the config's mesh
  std::map<std::int64_t, std::vector<std::int64_t>> request_mesh;  // validate: each request's
  std::vector<std::int64_t> rank_hosts;
  std::size_t drift_checks = 0;  // drift records so far
  jsonl::for_each_record(text, source, [&](const LineContext& ctx, const json& j, const std::string& type) {
    if (type == "config") {
      if (config_seen) ctx.fail("a second config record (one run per file)");
      config_seen = true;
      jsonl::check_command(ctx, j, {"run", "validate"}, false,
                           "refine reads the step records of meshloom-launch run or validate --jsonl");
      out.backend = ctx.text(j, "backend");
      if (!j.contains("hosts")) {
        ctx.fail("no field \"hosts\": the records do not say where the ranks sat (written before they did), so no "
                 "step has a group shape");
      }
      const std::vector<std::string> names = jsonl::hosts_of(ctx, j);
      if (names.empty()) ctx.fail("field \"hosts\" = []: expected every rank's host");
      rank_hosts = host_indices(names);
      if (j.contains("mesh")) config_mesh = mesh_shape_of(ctx, j);
      if (j.contains("cpus")) out.cpus = jsonl::cpus_of(ctx, j);
      if (j.contains("axis_corrections")) out.axis_corrections = ctx.integer(j, "axis_corrections");
      if (j.contains("transport")) out.transport = jsonl::transport_of(ctx, j);
    } else if (type == "drift") {
      if (!config_seen) ctx.fail("a drift record before the config record");
      // The mesh its anchors ran on (older files do not say: their anchors are priced by the shared curves).
      const std::vector<std::int64_t> drift_mesh =
          j.contains("mesh") ? axis_sizes(ctx, j["mesh"], "mesh") : std::vector<std::int64_t>{};
      const json& anchors = ctx.field(j, "anchors");
      if (!anchors.is_array()) ctx.fail("field \"anchors\" = " + jsonl::show(anchors) + ": expected a list of anchors");
      for (const json& a : anchors) {
        if (!a.is_object()) ctx.fail("field \"anchors\" = " + jsonl::show(anchors) + ": expected objects");
        const double measured = ctx.number(a, "measured_us");
        if (!(measured > 0) || !std::isfinite(measured)) continue;  // not re-timed
        out.anchors.push_back({.collective = ctx.text(a, "collective"),
                               .shape = {.n = ctx.integer(a, "n"),
                                         .hosts = ctx.integer(a, "hosts"),
                                         .ranks_per_host = ctx.integer(a, "ranks_per_host")},
                               .bytes = static_cast<double>(ctx.integer(a, "bytes")),
                               .measured_us = measured,
                               .mesh = drift_mesh,
                               .axes = anchor_axes(ctx, a, drift_mesh),
                               .drift_check = drift_checks});
      }
      ++drift_checks;
    } else if (type == "request") {
      if (!config_seen) ctx.fail("a request record before the config record");
      request_mesh[ctx.integer(j, "request")] = mesh_shape_of(ctx, j);
    } else if (type == "step") {
      if (!config_seen) ctx.fail("a step record before the config record");
      const std::string name = ctx.text(j, "collective");
      const auto collective = collective_from_string(name);
      if (!collective) ctx.fail("field \"collective\" = \"" + name + "\": unknown collective");
      const double measured = ctx.number(j, "measured_us");
      if (!communicates(*collective) || !(measured > 0)) return;  // a local step, or nothing measured
      if (!std::isfinite(measured)) {
        ctx.fail("field \"measured_us\" = " + jsonl::show(j["measured_us"]) + ": not finite");
      }
      const std::string timing = ctx.text(j, "timing");
      if (out.timing.empty()) out.timing = timing;
      if (timing != out.timing) {
        ctx.fail("field \"timing\" = \"" + timing + "\": earlier steps were timed \"" + out.timing + "\"");
      }
      const std::vector<std::int64_t>* mesh = &config_mesh;
      if (j.contains("request")) {
        const std::int64_t request = ctx.integer(j, "request");
        const auto it = request_mesh.find(request);
        if (it == request_mesh.end()) {
          ctx.fail("field \"request\" = " + std::to_string(request) + ": no such request record before it");
        }
        mesh = &it->second;
      }
      if (mesh->empty()) ctx.fail("a step without a mesh (no \"request\", and the config names none)");
      const json& axes_json = ctx.field(j, "axes");
      if (!axes_json.is_array() || axes_json.empty()) {
        ctx.fail("field \"axes\" = " + jsonl::show(axes_json) + ": expected a list of mesh axes");
      }
      std::int64_t ranks = 1;
      bool overflow = false;
      for (const std::int64_t s : *mesh) overflow = overflow || __builtin_mul_overflow(ranks, s, &ranks);
      if (overflow || ranks > static_cast<std::int64_t>(rank_hosts.size())) {
        ctx.fail("the step's mesh holds " + (overflow ? std::string("more than 2^63") : std::to_string(ranks)) +
                 " ranks and the config's \"hosts\" place " + std::to_string(rank_hosts.size()));
      }
      std::vector<std::size_t> axes;
      std::int64_t n = 1;
      for (std::size_t i = 0; i < axes_json.size(); ++i) {
        const std::int64_t a = ctx.integer_at(axes_json[i], "axes[" + std::to_string(i) + "]");
        const bool ascending = axes.empty() || a > static_cast<std::int64_t>(axes.back());
        if (a < 0 || a >= static_cast<std::int64_t>(mesh->size()) || !ascending) {
          ctx.fail("field \"axes\" = " + jsonl::show(axes_json) + ": expected ascending axes of a mesh of " +
                   std::to_string(mesh->size()));
        }
        axes.push_back(static_cast<std::size_t>(a));
        n *= (*mesh)[static_cast<std::size_t>(a)];
      }
      const std::int64_t bytes = ctx.integer(j, "bytes");
      if (bytes < 1) {
        ctx.fail("field \"bytes\" = " + std::to_string(bytes) + ": must be >= 1 for a measured collective");
      }
      const std::vector<GroupShape> shapes = group_shapes(*mesh, axes, rank_hosts);
      if (shapes.size() != 1) {
        ++out.mixed_shapes;
        return;
      }
      out.samples.push_back({.collective = name,
                             .shape = shapes.front(),
                             .bytes = static_cast<double>(bytes) *
                                      (*collective == Collective::AllGather ? static_cast<double>(n) : 1.0),
                             .measured_us = measured,
                             .mesh = *mesh,
                             .axes = axes});
    }
  });
  if (!config_seen) {
    raise(ErrorKind::ValueError,
          "\"" + source + "\": no config record (is it the --jsonl file of meshloom-launch run or validate?)");
  }
  return out;
}

StepRecords read_step_records(const std::filesystem::path& path) {
  return parse_step_records(
      jsonl::read_records_file(path, kMaxRecordsFileBytes, "a run or validate JSON Lines file"), path.string());
}

RefineReport refine_calibration(const Calibration& base, const std::vector<StepRecords>& records,
                                std::int64_t min_steps, bool any_level, bool any_transport) {
  if (base.groups.empty()) {
    raise(ErrorKind::ValueError, "refine: the calibration holds per-axis fits only (no curves by group shape) and "
                                 "they have nothing to correct; calibrate again with this version");
  }
  if (min_steps < 1) {
    raise(ErrorKind::ValueError, "refine: --min-steps " + std::to_string(min_steps) + ": must be >= 1");
  }
  for (const StepRecords& r : records) {
    if (r.backend != base.backend) {
      raise(ErrorKind::ValueError, "refine: \"" + r.source + "\" ran on backend \"" + r.backend +
                                       "\" and the calibration measured \"" + base.backend + "\"");
    }
    if (!r.timing.empty() && !base.timing.empty() && r.timing != base.timing) {
      raise(ErrorKind::ValueError, "refine: \"" + r.source + "\" timed its steps \"" + r.timing +
                                       "\" and the calibration's curves are \"" + base.timing +
                                       "\": calibrate with --timing " + r.timing);
    }
  }
  // One transport: the calibration's and every records file's that say theirs (older ones do not), for the
  // collectives of the calibration's backend.
  std::optional<comm::TransportSettings> transport = base.transport;
  std::string transport_source = "the calibration";
  for (const StepRecords& r : records) {
    if (any_transport || !r.transport) continue;
    const std::string where = "\"" + r.source + "\"";
    if (!transport) {
      transport = r.transport;
      transport_source = where;
      continue;
    }
    const std::string difference =
        comm::transport_difference(base.backend, *transport, transport_source, *r.transport, where);
    if (!difference.empty()) {
      raise(ErrorKind::ValueError, "refine: " + where + " was measured under other transport settings than " +
                                       transport_source + " (" + difference + "): its steps cost what " +
                                       (base.transport ? "the calibration never measured" : "the others did not") +
                                       "; refine by records made under one transport, the calibration's, or "
                                       "--any-transport");
    }
  }
  RefineReport report;
  report.calibration = base;
  if (!any_transport) report.calibration.transport = transport;
  for (const StepRecords& r : records) {
    RecordsLevel level = level_of(base, r);
    level.used = any_level || !level.level || (*level.level <= kLevelBand && *level.level >= 1.0 / kLevelBand);
    if (level.used) report.steps_mixed += r.mixed_shapes;
    report.levels.push_back(std::move(level));
  }
  const Collected all = collect(base, records, report.levels, records.size());
  report.files = all.files;
  report.steps_used = all.used;
  report.steps_unpriced = all.unpriced;
  for (GroupCurve& curve : report.calibration.groups) {
    const auto it = all.ratios.find({curve.collective, curve.shape});
    const RatiosBySize* ratios = it == all.ratios.end() ? nullptr : &it->second;
    AsRunCurve row{.collective = curve.collective, .shape = curve.shape, .points = {}, .steps = 0, .sizes_dropped = 0};
    row.steps = refit(ratios, min_steps, curve.collective + " on " + to_string(curve.shape), curve.as_run,
                      row.sizes_dropped, report.dropped);
    if (ratios == nullptr) continue;
    row.points = curve.as_run;
    report.curves.push_back(std::move(row));
  }
  // The calibrated mesh's axes that have a correction: their own as-run points, from the steps of bound records
  // (AxisCorrection::as_run).
  for (AxisCorrection& a : report.calibration.axis_corrections) {
    const auto it = all.axis_ratios.find({a.collective, a.axes});
    const RatiosBySize* ratios = it == all.axis_ratios.end() ? nullptr : &it->second;
    AsRunAxis row{.collective = a.collective, .axes = a.axes, .points = {}, .steps = 0, .sizes_dropped = 0};
    row.steps = refit(ratios, min_steps, a.collective + " on axes " + axes_text(report.calibration, a.axes), a.as_run,
                      row.sizes_dropped, report.dropped);
    if (ratios == nullptr) continue;
    row.points = a.as_run;
    report.axes.push_back(std::move(row));
  }
  // The benchmark curves' error, and the as-run curves' with each file left out of its own correction.
  std::vector<double> bench_errors, held_errors;
  for (std::size_t f = 0; f < records.size(); ++f) {
    if (!report.levels[f].used) continue;
    const Collected others = report.files >= 2 ? collect(base, records, report.levels, f) : Collected{};
    // The other files' points per curve, fitted once.
    std::map<CurveKey, std::vector<AsRunPoint>> fitted;
    for (const auto& [key, by_size] : others.ratios) fitted[key] = fit_points(by_size, min_steps, nullptr);
    std::map<AxisKey, std::vector<AsRunPoint>> fitted_axes;
    for (const auto& [key, by_size] : others.axis_ratios) fitted_axes[key] = fit_points(by_size, min_steps, nullptr);
    for (const StepSample& s : records[f].samples) {
      const double bench = benchmark_of(base, s, report.levels[f].by_axis);
      if (!(bench > 0)) continue;
      bench_errors.push_back(std::abs(bench - s.measured_us) / s.measured_us);
      if (report.files < 2) continue;
      // As the corrected calibration prices it: by its axis' own points where they exist, else its curve's.
      const AxisCorrection* c =
          report.levels[f].by_axis ? correction_on_mesh(base, s.mesh, s.axes, s.collective) : nullptr;
      const auto axis = c != nullptr ? fitted_axes.find({s.collective, c->axes}) : fitted_axes.end();
      const auto it = fitted.find({s.collective, s.shape});
      const double factor = axis != fitted_axes.end() && !axis->second.empty() ? as_run_factor(axis->second, s.bytes)
                            : it == fitted.end()                              ? 1.0
                                                                              : as_run_factor(it->second, s.bytes);
      held_errors.push_back(std::abs(bench * factor - s.measured_us) / s.measured_us);
    }
  }
  report.benchmark_error = error_summary(std::move(bench_errors));
  report.held_out_error = error_summary(std::move(held_errors));
  return report;
}

namespace {
// The last cells of a row of the table: the sizes with a factor, the steps measured, the least and greatest factor.
std::string factor_cells(const std::vector<AsRunPoint>& points, std::int64_t steps) {
  char cells[96];
  if (points.empty()) {
    std::snprintf(cells, sizeof cells, " %6d %6lld %7s %7s\n", 0, static_cast<long long>(steps), "-", "-");
    return cells;
  }
  const auto by_factor = [](const AsRunPoint& a, const AsRunPoint& b) { return a.factor < b.factor; };
  const auto [lo, hi] = std::minmax_element(points.begin(), points.end(), by_factor);
  std::snprintf(cells, sizeof cells, " %6zu %6lld %6.2fx %6.2fx\n", points.size(), static_cast<long long>(steps),
                lo->factor, hi->factor);
  return cells;
}
}  // namespace

std::string refine_table(const RefineReport& report) {
  std::ostringstream out;
  out << "# as-run corrections from " << report.files << (report.files == 1 ? " records file, " : " records files, ")
      << report.steps_used << " measured collectives: per curve and size (of its points, the nearest), the mean "
      << "over the files of each file's median measured / benchmark where --min-steps were measured\n";
  char line[256];
  std::snprintf(line, sizeof line, "# %-15s %4s %6s %9s %6s %6s %7s %7s\n", "collective", "n", "hosts", "per host",
                "sizes", "steps", "min", "max");
  out << line;
  for (const AsRunCurve& c : report.curves) {
    std::snprintf(line, sizeof line, "  %-15s %4lld %6lld %9lld", c.collective.c_str(), static_cast<long long>(c.shape.n),
                  static_cast<long long>(c.shape.hosts), static_cast<long long>(c.shape.ranks_per_host));
    out << line << factor_cells(c.points, c.steps);
  }
  if (!report.axes.empty()) {
    out << "# by axis of the calibrated mesh (records whose ranks sat on its CPUs): the same for each axis' own steps, "
           "which take these factors instead of their curve's\n";
    std::snprintf(line, sizeof line, "# %-15s %-10s %6s %6s %7s %7s\n", "collective", "axes", "sizes", "steps", "min",
                  "max");
    out << line;
    for (const AsRunAxis& a : report.axes) {
      std::snprintf(line, sizeof line, "  %-15s %-10s", a.collective.c_str(), axes_text(report.calibration, a.axes).c_str());
      out << line << factor_cells(a.points, a.steps);
    }
  }
  const bool has_corrections = !report.calibration.axis_corrections.empty();
  for (const RecordsLevel& l : report.levels) {
    std::vector<std::string> checks;  // "1.00x", or per drift check "1.25x and 1.00x"
    for (const double c : l.checks) {
      char one[32];
      std::snprintf(one, sizeof one, "%.2fx", c);
      checks.emplace_back(one);
    }
    const std::string level = join(checks, {.separator = " and "});
    const std::string none = l.unpriced_anchors > 0 ? "no drift anchor of a curve of the calibration: used as measured"
                                                    : "no drift anchors (run's records): used as measured";
    out << "# " << l.source << ": "
        << (l.level ? std::string("its ") + std::to_string(l.anchors) + " drift anchors re-timed " + level +
                          " the calibration's points" +
                          (l.checks.size() > 1 ? ", check by check" : "")
                    : none)
        << (l.used ? "" : "; left out: the machine stood elsewhere than when calibrated (--any-level keeps it)")
        << (has_corrections && !l.by_axis ? "; its ranks did not sit on the calibrated job's CPUs (or it does not "
                                            "say): its steps are compared with the shared curves, not their axes'"
                                          : "")
        << "\n";
  }
  out << "# step error |predicted - measured| / measured of those collectives, median / p90:\n";
  const auto figure = [](const std::optional<HoldoutError>& e) {
    return e ? percent_text(e->median) + " / " + percent_text(e->p90) : std::string("-");
  };
  out << "#   benchmark curves:             " << figure(report.benchmark_error) << "\n";
  out << "#   as run, own file left out:    "
      << (report.files >= 2 ? figure(report.held_out_error) : std::string("- (needs two records files or more)"))
      << "\n";
  const auto sizes_left_out = [&out](const std::string& name, std::int64_t sizes) {
    if (sizes > 0) out << "# " << name << ": " << sizes << (sizes == 1 ? " size" : " sizes") << " of too few steps left out\n";
  };
  for (const AsRunCurve& c : report.curves) sizes_left_out(c.collective + " on " + to_string(c.shape), c.sizes_dropped);
  for (const AsRunAxis& a : report.axes) {
    sizes_left_out(a.collective + " on axes " + axes_text(report.calibration, a.axes), a.sizes_dropped);
  }
  if (report.steps_unpriced > 0) {
    out << "# " << report.steps_unpriced << " measured collectives of a collective or group shape the calibration has "
        << "no curve for: left out\n";
  }
  for (const DroppedCorrection& d : report.dropped) {
    out << "# " << d.curve << ": its earlier correction dropped ("
        << (d.measured ? "none of its sizes had --min-steps measured collectives"
                       : "no collective of the records used measured it")
        << ")\n";
  }
  if (report.steps_mixed > 0) {
    out << "# " << report.steps_mixed << " measured collectives on groups of more than one shape: left out\n";
  }
  return out.str();
}

}  // namespace meshloom::launcher
