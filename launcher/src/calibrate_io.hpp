// `meshloom-launch calibrate` without communication: reading a bench JSON Lines file (the contract's records),
// fitting every (axis, collective) of a sweep with fit_alpha_beta, building the contract's calibration file and the
// fit table for people.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "bench_format.hpp"
#include "calibrate_fit.hpp"
#include "meshloom/plan/cost_model.hpp"

namespace meshloom::launcher {

// What a calibration needs from a sweep: the run's backend, world and mesh, and its result rows.
struct BenchSweep {
  std::string backend;
  std::string timing;  // the config record's "timing" ("pipelined" / "single_shot"; empty in older files)
  std::int64_t world = 0;
  std::vector<std::int64_t> mesh_shape;
  std::vector<std::string> mesh_names;
  std::vector<BenchResult> results;
  std::vector<std::string> hosts;  // the config's "hosts": every world rank's host (empty in older files)
  std::vector<std::string> cpus;   // the config's "cpus": every world rank's CPU binding (empty in older files)
  bool bound = false;              // the config's "bound": every rank was bound (ranks_bound)
  std::optional<comm::TransportSettings> transport;  // the config's "transport" (none in older files)
  std::map<std::string, std::vector<std::string>> flattened;  // the config's mesh.flattened: name -> axis names
  bool spans = true;               // every result carries its "span" (older files have none)
  bool summary_seen = false;
  std::vector<std::string> errors;  // messages of error records, "rank r: message"
};

// Parses bench JSON Lines: a config record first, then result records (other record types are read for errors
// and the summary; unknown types are ignored). ValueError naming `source`, the line number and the field
// otherwise: `"run.jsonl" line 3: field "time_us" = "x": expected a number`.
[[nodiscard]] BenchSweep parse_bench_jsonl(const std::string& text, const std::string& source);
[[nodiscard]] BenchSweep read_bench_jsonl(const std::filesystem::path& path);

struct CalibrationFitRow {
  std::string axis;
  std::string collective;
  std::int64_t group_size = 0;
  AlphaBetaFit fit;
  std::optional<HoldoutError> holdout;  // alpha_beta_holdout of its samples
};

struct CalibrationReport {
  Calibration calibration;             // the fits that succeeded, and the curves
  std::vector<CalibrationFitRow> rows;  // every (axis, collective), in the sweep's order, failed fits included
  std::vector<CurveFitReport> curves;   // every (collective, group shape), sorted as the calibration's "groups"
  std::vector<std::string> notes;       // rows left out (wrong elements), errors of the run, a missing summary
};

// Fits every (axis, collective) of the sweep (the calibration's per-axis views), and every (collective, group shape)
// (its keyed curves, fit_group_curve) when the sweep records where its ranks sit (the config's hosts, every
// result's span); an axis whose groups differ in shape (span not uniform) is left out of the curves. Rows with
// wrong elements are left out (noted). ValueError when the sweep has no result at all.
[[nodiscard]] CalibrationReport calibrate_sweep(const BenchSweep& sweep);

// The fit table: one row per (axis, collective) with n, samples, alpha, busbw, r2, its held-out median and p90
// error and the kind of fit (or why there is none), then one row per curve (collective, n, hosts, ranks per host,
// sizes, the model chosen, the largest alpha-beta residual, held-out median and p90 error of both models), `#`
// lines around them.
[[nodiscard]] std::string fit_table(const CalibrationReport& report);

}  // namespace meshloom::launcher
