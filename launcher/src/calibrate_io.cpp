#include "calibrate_io.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "batch_io.hpp"
#include "group_span.hpp"
#include "json_read.hpp"
#include "jsonl_read.hpp"
#include "meshloom/error.hpp"
#include "meshloom/mesh/device_mesh.hpp"
#include "text_format.hpp"
#include "timing.hpp"

namespace meshloom::launcher {

namespace {

using nlohmann::json;
using jsonl::LineContext;

constexpr std::size_t kMaxBenchFileBytes = std::size_t{256} << 20;

}  // namespace

BenchSweep parse_bench_jsonl(const std::string& text, const std::string& source) {
  BenchSweep sweep;
  bool config_seen = false;
  // The config's mesh, flattened axes registered: what a result's group size and span must be, which calibrate
  // keys its curves by (a record that says otherwise would key a curve by a shape the job never ran).
  std::optional<DeviceMesh> mesh_of_config;
  std::map<std::string, std::pair<std::int64_t, std::optional<GroupSpan>>> axis_shapes;
  std::vector<std::pair<std::string, std::vector<std::string>>> flattened_in_order;
  jsonl::for_each_record(text, source, [&](const LineContext& ctx, const json& j, const std::string& type) {
    if (type == "config") {
      if (config_seen) ctx.fail("a second config record (one bench run per file)");
      config_seen = true;
      jsonl::check_command(ctx, j, {"bench", "calibrate"}, false,
                           "calibrate --from reads the records of meshloom-launch bench or calibrate --jsonl");
      sweep.backend = ctx.text(j, "backend");
      if (j.contains("timing")) {
        sweep.timing = ctx.text(j, "timing");
        if (!timing_mode_from_string(sweep.timing)) {
          ctx.fail("field \"timing\" = \"" + sweep.timing + "\": expected \"pipelined\" or \"single_shot\"");
        }
      }
      if (sweep.backend != "mpi" && sweep.backend != "nccl") {
        ctx.fail("field \"backend\" = \"" + sweep.backend + "\": expected \"mpi\" or \"nccl\"");
      }
      sweep.world = ctx.integer(j, "world");
      if (sweep.world < 1) ctx.fail("field \"world\" = " + std::to_string(sweep.world) + ": must be >= 1");
      if (j.contains("hosts")) sweep.hosts = jsonl::hosts_of(ctx, j);
      if (j.contains("transport")) sweep.transport = jsonl::transport_of(ctx, j);
      if (j.contains("cpus")) {
        sweep.cpus = jsonl::cpus_of(ctx, j);
        const json& bound = ctx.field(j, "bound");
        if (!bound.is_boolean()) ctx.fail("field \"bound\" = " + jsonl::show(bound) + ": expected true or false");
        sweep.bound = bound.get<bool>();
      }
      const json& mesh = ctx.field(j, "mesh");
      if (!mesh.is_object()) ctx.fail("field \"mesh\" = " + jsonl::show(mesh) + ": expected an object");
      const json& shape = ctx.field(mesh, "shape");
      const json& names = ctx.field(mesh, "names");
      if (!shape.is_array()) ctx.fail("field \"mesh.shape\" = " + jsonl::show(shape) + ": expected a list of integers");
      if (!names.is_array()) ctx.fail("field \"mesh.names\" = " + jsonl::show(names) + ": expected a list of names");
      for (std::size_t i = 0; i < shape.size(); ++i) {
        sweep.mesh_shape.push_back(ctx.integer_at(shape[i], "mesh.shape[" + std::to_string(i) + "]"));
      }
      for (const auto& s : names) {
        if (!s.is_string()) ctx.fail("field \"mesh.names\" = " + jsonl::show(names) + ": expected strings");
        sweep.mesh_names.push_back(s.get<std::string>());
      }
      if (mesh.contains("flattened")) {
        const json& flattened = mesh["flattened"];
        const std::string bad = "field \"mesh.flattened\" = " + jsonl::show(flattened) +
                                ": expected a list of {\"name\": ..., \"axes\": [axis names]}";
        if (!flattened.is_array()) ctx.fail(bad);
        for (const auto& f : flattened) {
          if (!f.is_object() || !f.contains("name") || !f["name"].is_string() || !f.contains("axes") ||
              !f["axes"].is_array()) {
            ctx.fail(bad);
          }
          std::vector<std::string>& axes = sweep.flattened[f["name"].get<std::string>()];
          for (const auto& a : f["axes"]) {
            if (!a.is_string()) ctx.fail(bad);
            axes.push_back(a.get<std::string>());
          }
          flattened_in_order.emplace_back(f["name"].get<std::string>(), axes);
        }
      }
      try {
        DeviceMesh m = DeviceMesh::init(sweep.mesh_shape, sweep.mesh_names, sweep.world);
        // In the config's order, as bench flattened them (one may be made of an earlier one).
        for (const auto& [name, axes] : flattened_in_order) (void)m.slice(axes).flatten(name);
        mesh_of_config = std::move(m);
      } catch (const Error& e) {
        ctx.fail("field \"mesh\" = " + jsonl::show(mesh) + ": " + e.text());
      }
    } else if (type == "result") {
      if (!config_seen) ctx.fail("a result record before the config record");
      BenchResult r;
      r.axis = ctx.text(j, "axis");
      r.group_size = ctx.integer(j, "group_size");
      r.groups = ctx.integer(j, "groups");
      const std::string collective = ctx.text(j, "collective");
      const auto c = bench_collective_from_string(collective);
      if (!c) {
        ctx.fail("field \"collective\" = \"" + collective +
                 "\": unknown collective (expected all_reduce, all_gather, reduce_scatter, all_to_all or broadcast)");
      }
      r.collective = *c;
      const std::string dtype = ctx.text(j, "dtype");
      const auto d = dtype_from_string(dtype);
      if (!d) ctx.fail("field \"dtype\" = \"" + dtype + "\": unknown dtype");
      r.dtype = *d;
      r.bytes = ctx.integer(j, "bytes");
      r.count = ctx.integer(j, "count");
      r.time_us = ctx.number(j, "time_us");
      r.algbw_gbps = ctx.number(j, "algbw_gbps");
      r.busbw_gbps = ctx.number(j, "busbw_gbps");
      r.wrong = ctx.integer(j, "wrong");
      if (j.contains("stats")) {
        const json& stats = j["stats"];
        if (!stats.is_object()) ctx.fail("field \"stats\" = " + jsonl::show(stats) + ": expected an object");
        r.stats.iterations = ctx.integer(stats, "iterations");
      }
      if (j.contains("span")) {
        const json& span = j["span"];
        if (!span.is_object()) ctx.fail("field \"span\" = " + jsonl::show(span) + ": expected an object");
        r.span.hosts = ctx.integer(span, "hosts");
        r.span.ranks_per_host = ctx.integer(span, "ranks_per_host");
        const json& uniform = ctx.field(span, "uniform");
        if (!uniform.is_boolean()) ctx.fail("field \"span.uniform\" = " + jsonl::show(uniform) + ": expected true or false");
        r.span.uniform = uniform.get<bool>();
        if (r.span.hosts < 1 || r.span.hosts > r.group_size) {
          ctx.fail("field \"span.hosts\" = " + std::to_string(r.span.hosts) + ": must be in 1..group_size = " +
                   std::to_string(r.group_size));
        }
        if (r.span.ranks_per_host < 1 || r.span.ranks_per_host > r.group_size) {
          ctx.fail("field \"span.ranks_per_host\" = " + std::to_string(r.span.ranks_per_host) +
                   ": must be in 1..group_size = " + std::to_string(r.group_size));
        }
      } else {
        sweep.spans = false;
      }
      if (r.group_size < 1 || r.group_size > sweep.world) {
        ctx.fail("field \"group_size\" = " + std::to_string(r.group_size) + ": must be in 1..world = " +
                 std::to_string(sweep.world));
      }
      const bool axis_known =
          std::find(sweep.mesh_names.begin(), sweep.mesh_names.end(), r.axis) != sweep.mesh_names.end() ||
          sweep.flattened.contains(r.axis);
      if (!axis_known) {
        ctx.fail("field \"axis\" = \"" + r.axis + "\": not an axis or flattened axis of the config's mesh");
      }
      auto shape = axis_shapes.find(r.axis);
      if (shape == axis_shapes.end()) {
        const AxisRef axis{r.axis};
        std::optional<GroupSpan> span;
        if (!sweep.hosts.empty()) span = group_span(mesh_of_config->groups(axis), sweep.hosts);
        shape = axis_shapes.emplace(r.axis, std::make_pair(mesh_of_config->size(axis), span)).first;
      }
      const auto& [ranks, placed] = shape->second;
      if (r.group_size != ranks) {
        ctx.fail("field \"group_size\" = " + std::to_string(r.group_size) + ": axis \"" + r.axis +
                 "\" of the config's mesh has " + std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks"));
      }
      // The shape a curve is keyed by (hosts, ranks per host); "uniform" is the file's own (earlier builds judged
      // it otherwise, and a file is read as its run judged it).
      if (j.contains("span") && placed &&
          (r.span.hosts != placed->hosts || r.span.ranks_per_host != placed->ranks_per_host)) {
        ctx.fail("field \"span\" = " + jsonl::show(j["span"]) + ": the config's hosts place axis \"" + r.axis +
                 "\"'s groups on " + std::to_string(placed->hosts) + (placed->hosts == 1 ? " host" : " hosts") +
                 " with at most " + std::to_string(placed->ranks_per_host) + " per host");
      }
      if (!std::isfinite(r.time_us) || r.time_us < 0) {
        ctx.fail("field \"time_us\" = " + jsonl::show(j["time_us"]) + ": expected a finite time >= 0");
      }
      if (r.bytes < 0) ctx.fail("field \"bytes\" = " + std::to_string(r.bytes) + ": must be >= 0");
      sweep.results.push_back(std::move(r));
    } else if (type == "summary") {
      sweep.summary_seen = true;
    } else if (type == "error") {
      std::string message = j.contains("message") && j["message"].is_string() ? j["message"].get<std::string>() : "?";
      const std::string rank = j.contains("rank") ? j["rank"].dump() : "?";
      sweep.errors.push_back("rank " + rank + ": " + message);
    }
  });
  if (!config_seen) {
    raise(ErrorKind::ValueError, "\"" + source + "\": no config record (is it the --jsonl file of meshloom-launch bench?)");
  }
  return sweep;
}

BenchSweep read_bench_jsonl(const std::filesystem::path& path) {
  const std::string text = jsonl::read_records_file(path, kMaxBenchFileBytes, "a bench JSON Lines file");
  return parse_bench_jsonl(text, path.string());
}

namespace {

// The axes of the calibrated mesh that `name` runs on (a mesh axis, or a flattened axis' axes), ascending; empty
// when the sweep names no such axis.
std::vector<std::size_t> mesh_axes_of(const BenchSweep& sweep, const std::string& name) {
  const auto index = [&](const std::string& axis) -> std::optional<std::size_t> {
    const auto it = std::find(sweep.mesh_names.begin(), sweep.mesh_names.end(), axis);
    if (it == sweep.mesh_names.end()) return std::nullopt;
    return static_cast<std::size_t>(it - sweep.mesh_names.begin());
  };
  if (const auto a = index(name)) return {*a};
  const auto f = sweep.flattened.find(name);
  if (f == sweep.flattened.end()) return {};
  std::vector<std::size_t> axes;
  for (const auto& axis : f->second) {
    const auto a = index(axis);
    if (!a) return {};
    axes.push_back(*a);
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return {};
  return axes;
}

// The calibration's axis corrections (AxisCorrection): for every curve that two or more axes of the mesh measured,
// each axis' time at each of the curve's sizes over the curve's price there (its point, the median over the axes, or
// its alpha-beta fit). Only with every rank bound: unbound, the OS places ranks anew in every job, and the axes'
// order with them.
void correct_axes(const BenchSweep& sweep, CalibrationReport& report) {
  // (collective, shape) -> axis name -> bytes -> (times, iterations)
  using Sizes = std::map<double, std::pair<std::vector<double>, std::int64_t>>;
  std::map<std::pair<std::string, GroupShape>, std::map<std::string, Sizes>> by_axis;
  for (const auto& r : sweep.results) {
    if (!r.span.uniform || r.wrong != 0 || r.bytes <= 0 || !(r.time_us > 0)) continue;
    const GroupShape shape{.n = r.group_size, .hosts = r.span.hosts, .ranks_per_host = r.span.ranks_per_host};
    auto& at = by_axis[{std::string(to_string(r.collective)), shape}][r.axis][static_cast<double>(r.bytes)];
    at.first.push_back(r.time_us);
    at.second += std::max<std::int64_t>(r.stats.iterations, 1);
  }
  std::erase_if(by_axis, [](const auto& entry) { return entry.second.size() < 2; });
  if (by_axis.empty()) return;
  const std::string why =
      sweep.cpus.empty() ? "the run does not record its ranks' CPUs"
      : sweep.cpus.size() != static_cast<std::size_t>(sweep.world)
          ? "the run records " + std::to_string(sweep.cpus.size()) + " CPU lists for world " + std::to_string(sweep.world)
      : !sweep.bound ? "its ranks were not bound to CPUs"
                     : std::string();
  if (!why.empty()) {
    report.notes.push_back("no axis corrections: " + why +
                           ", so which of two axes of one group shape is faster can change from job to job (bind "
                           "them, e.g. mpirun --bind-to core, to measure the axes apart)");
    return;
  }
  report.calibration.rank_cpus = sweep.cpus;
  for (const auto& [key, axes] : by_axis) {
    const GroupCurve* curve = find_curve(report.calibration, key.first, key.second);
    if (curve == nullptr) continue;
    for (const auto& [name, sizes] : axes) {
      AxisCorrection correction{.axes = mesh_axes_of(sweep, name), .collective = key.first, .factors = {}, .as_run = {}};
      if (correction.axes.empty()) continue;
      for (const CurvePoint& point : curve->points) {
        const auto it = sizes.find(point.bytes);
        const double price = benchmark_time_us(*curve, point.bytes);
        if (it == sizes.end() || !(price > 0)) continue;
        correction.factors.push_back(
            {.bytes = point.bytes, .factor = median(it->second.first) / price, .steps = it->second.second});
      }
      if (!correction.factors.empty()) report.calibration.axis_corrections.push_back(std::move(correction));
    }
  }
  std::sort(report.calibration.axis_corrections.begin(), report.calibration.axis_corrections.end(),
            [](const AxisCorrection& a, const AxisCorrection& b) {
              return std::tie(a.axes, a.collective) < std::tie(b.axes, b.collective);
            });
}

// The keyed curves of a sweep that records where its ranks sit (calibrate_sweep).
void fit_curves(const BenchSweep& sweep, CalibrationReport& report) {
  if (sweep.hosts.empty() || !sweep.spans) {
    report.notes.push_back("the run does not record its ranks' hosts (written before they were): per-axis fits only, "
                           "no curves by group shape");
    return;
  }
  if (static_cast<std::int64_t>(sweep.hosts.size()) != sweep.world) {
    report.notes.push_back("the run records " + std::to_string(sweep.hosts.size()) + " hosts for world " +
                           std::to_string(sweep.world) + ": no curves by group shape");
    return;
  }
  report.calibration.rank_hosts = host_indices(sweep.hosts);
  std::map<std::pair<std::string, GroupShape>, std::vector<FitSample>> samples;
  std::set<std::string> mixed;
  for (const auto& r : sweep.results) {
    if (!r.span.uniform) {
      mixed.insert(r.axis);
      continue;
    }
    if (r.wrong != 0) continue;
    const GroupShape shape{.n = r.group_size, .hosts = r.span.hosts, .ranks_per_host = r.span.ranks_per_host};
    samples[{std::string(to_string(r.collective)), shape}].push_back({static_cast<double>(r.bytes), r.time_us});
  }
  for (const auto& axis : mixed) {
    report.notes.push_back("axis " + axis + ": its groups differ in shape (span not uniform); left out of the curves");
  }
  for (const auto& [key, points] : samples) {
    try {
      report.curves.push_back(fit_group_curve(key.first, key.second, points));
      report.calibration.groups.push_back(report.curves.back().curve);
    } catch (const Error& e) {
      report.notes.push_back(e.message());
    }
  }
  correct_axes(sweep, report);
}

}  // namespace

CalibrationReport calibrate_sweep(const BenchSweep& sweep) {
  if (sweep.results.empty()) raise(ErrorKind::ValueError, "the bench run has no result records: nothing to calibrate");
  CalibrationReport report;
  report.calibration.backend = sweep.backend;
  report.calibration.timing = sweep.timing;
  report.calibration.transport = sweep.transport;
  report.calibration.world = sweep.world;
  report.calibration.mesh_shape = sweep.mesh_shape;
  report.calibration.mesh_names = sweep.mesh_names;
  for (const auto& e : sweep.errors) report.notes.push_back("the run reported an error: " + e);
  if (!sweep.summary_seen && sweep.errors.empty()) report.notes.push_back("the run has no summary record (cut short?)");

  // (axis, collective) in the order first seen.
  std::vector<std::pair<std::string, BenchCollective>> order;
  std::map<std::pair<std::string, BenchCollective>, std::vector<FitSample>> samples;
  std::map<std::pair<std::string, BenchCollective>, std::int64_t> group_size;
  std::int64_t left_out = 0;
  for (const auto& r : sweep.results) {
    const auto key = std::make_pair(r.axis, r.collective);
    if (!samples.contains(key)) {
      order.push_back(key);
      samples[key];
      group_size[key] = r.group_size;
    }
    if (r.wrong != 0) {
      ++left_out;
      continue;
    }
    samples[key].push_back({static_cast<double>(r.bytes), r.time_us});
  }
  if (left_out > 0) {
    report.notes.push_back(std::to_string(left_out) + " result(s) with wrong elements left out of the fits");
  }
  for (const auto& key : order) {
    CalibrationFitRow row;
    row.axis = key.first;
    row.collective = std::string(to_string(key.second));
    row.group_size = group_size[key];
    // A group of one rank moves nothing between ranks (its bus factor is 0, and the planner never prices it): its
    // fit is the local copy's, by algbw (factor 1), so that a world of one rank (one GPU) still calibrates.
    const double factor = row.group_size == 1 ? 1.0 : bus_factor(row.collective, row.group_size);
    row.fit = fit_alpha_beta(samples[key], factor);
    if (row.fit.ok) {
      row.holdout = alpha_beta_holdout(samples[key], factor);
      report.calibration.axes[row.axis][row.collective] =
          CollectiveFit{row.fit.alpha_us, row.fit.busbw_gbps, row.fit.r2, row.fit.samples};
    }
    report.rows.push_back(std::move(row));
  }
  fit_curves(sweep, report);
  return report;
}

std::string fit_table(const CalibrationReport& report) {
  std::string out;
  char line[512];
  const auto percent = [](const std::optional<HoldoutError>& h) {
    char cell[64];
    if (!h) return std::string("-");
    std::snprintf(cell, sizeof cell, "%.1f%% / %.1f%%", 100 * h->median, 100 * h->p90);
    return std::string(cell);
  };
  std::snprintf(line, sizeof line, "# Fits: time_us = alpha_us + factor(n) * bytes / (busbw_gbps * 1e3), weighted 1/t^2 (groups of one rank: factor 1)\n");
  out += line;
  const std::string held_out = "held out: fitted on every other size, asked for the rest; |error| / measured";
  out += "# (" + held_out + ")\n";
  std::snprintf(line, sizeof line, "#%11s  %14s  %4s  %7s  %10s  %12s  %8s  %18s  %s\n", "axis", "collective", "n",
                "samples", "alpha (us)", "busbw (GB/s)", "r2", "held out med/p90", "fit");
  out += line;
  for (const auto& row : report.rows) {
    if (row.fit.ok) {
      std::snprintf(line, sizeof line, "%12s  %14s  %4lld  %7lld  %10.3f  %12.4f  %8.5f  %18s  %s\n", row.axis.c_str(),
                    row.collective.c_str(), static_cast<long long>(row.group_size),
                    static_cast<long long>(row.fit.samples), row.fit.alpha_us, row.fit.busbw_gbps, row.fit.r2,
                    percent(row.holdout).c_str(), to_string(row.fit.kind));
    } else {
      std::snprintf(line, sizeof line, "%12s  %14s  %4lld  %7lld  %10s  %12s  %8s  %18s  skipped: %s\n",
                    row.axis.c_str(), row.collective.c_str(), static_cast<long long>(row.group_size),
                    static_cast<long long>(row.fit.samples), "-", "-", "-", "-", row.fit.why.c_str());
    }
    out += line;
  }
  if (!report.curves.empty()) {
    out += "# Curves by group shape (" + held_out + ")\n";
    std::snprintf(line, sizeof line, "#%13s  %4s  %5s  %4s  %5s  %10s  %9s  %21s  %21s\n", "collective", "n", "hosts",
                  "rph", "sizes", "model", "ab resid", "held out ab med/p90", "held out pw med/p90");
    out += line;
    for (const auto& c : report.curves) {
      char resid[32] = "-";
      if (c.alpha_beta.ok) std::snprintf(resid, sizeof resid, "%.1f%%", 100 * c.alpha_beta_max_residual);
      std::snprintf(line, sizeof line, "%14s  %4lld  %5lld  %4lld  %5zu  %10s  %9s  %21s  %21s\n",
                    c.curve.collective.c_str(), static_cast<long long>(c.curve.shape.n),
                    static_cast<long long>(c.curve.shape.hosts), static_cast<long long>(c.curve.shape.ranks_per_host),
                    c.curve.points.size(), std::string(to_string(c.curve.model)).c_str(), resid,
                    percent(c.alpha_beta_holdout).c_str(), percent(c.piecewise_holdout).c_str());
      out += line;
    }
  }
  if (!report.calibration.axis_corrections.empty()) {
    const Calibration& c = report.calibration;
    out += "# Axis corrections (ranks bound): each axis' time / its shape's curve, over the curve's sizes; a step on "
           "this mesh is priced by its own axis\n";
    std::snprintf(line, sizeof line, "#%11s  %14s  %5s  %7s  %7s  %7s\n", "axis", "collective", "sizes", "min",
                  "median", "max");
    out += line;
    for (const AxisCorrection& a : c.axis_corrections) {
      std::vector<std::string> names;
      for (const std::size_t axis : a.axes) names.push_back(c.mesh_names.at(axis));
      std::vector<double> factors;
      for (const AsRunPoint& p : a.factors) factors.push_back(p.factor);
      const auto [lo, hi] = std::minmax_element(factors.begin(), factors.end());
      std::snprintf(line, sizeof line, "%12s  %14s  %5zu  %7.3f  %7.3f  %7.3f\n",
                    join(names, {.separator = "_"}).c_str(), a.collective.c_str(), factors.size(), *lo,
                    median(factors), *hi);
      out += line;
    }
  }
  for (const auto& note : report.notes) out += "# note: " + note + "\n";
  return out;
}

}  // namespace meshloom::launcher
