// `meshloom-launch refine`: a calibration's curves corrected by what the collectives of plans measured when the plans
// ran for real. No communication.
//
// calibrate times each collective back to back on buffers it keeps (timing.hpp); a plan's step meets its collective
// after packing fresh buffers, and the two differ by size, the same way run after run (on the 2-core VM of
// docs/benchmarks.md, over seven validate runs on seven calibrations, the steps' collectives measured a median
// 1.4-1.7x their curves at 512 KiB-1 MiB and 0.7-0.9x at 32-64 MiB, by collective). refine reads the step records
// of `meshloom-launch run --jsonl` and `validate --jsonl`, prices every measured collective by the calibration's
// benchmark curve of its group's shape (the records' own hosts place the groups), and gives each curve an as-run
// correction (AsRunPoint, cost_model.hpp): each collective counts at the curve's own point size nearest its
// nccl-tests size (in log size), and per such size where at least `min_steps` collectives were measured, a factor of
// measured / benchmark (the benchmark at the collective's own size). Every price of the curve is then its benchmark
// time times that factor, interpolated in log size between the sizes measured and flat beyond them. The correction
// is keyed as the curves are, so it prices every layout they price.
//
// On the calibrated mesh itself, bound ranks give more: where the calibration has axis corrections (its axes of one
// group shape measured apart) and a records file's ranks sat on the calibrated job's CPUs, every step on such an axis
// also counts for that axis alone, and the axis gets its own as-run points the same way (AxisCorrection::as_run),
// which its steps take instead of the curve's. The curve's points still come from every step, for every other layout.
// The axes of one shape run the plans' collectives unlike each other as well as unlike the sweep: held out over eight
// bound calibrate + validate runs on 4 ranks of the VM (each refined by the other seven runs' records, its own run
// re-priced by rescore), the curve's points alone picked right in 211 of 240 requests, with the axes' own 222.
//
// A factor is the mean over the records files of each file's median ratio at that size: the median within a file,
// so that a stray collective does not move it, and every file weighs the same, so that a run with many collectives
// of a size does not outvote the others. The mean, not the median, over the files, because a plan runs in one job
// and some collectives run slow in some jobs and fast in others (on 4 ranks of the VM, the merged 4-rank 64 KiB
// all_reduce measured 138-158 us in some runs and 213-246 us in others): the median prices the usual job and picks
// the plan that loses most in the others, the mean prices the average job. Held out over 53 runs on 4 ranks in five
// batches (each run refined by its batch's other runs), the mean picked right in 1509 of 1590 requests and the median
// in 1494 (docs/benchmarks.md). The machine's speed also moves between calibrating and running (validate's drift check
// measures it: 0.6x-1.8x within minutes on that VM), and a factor must not take a spell for the protocol's gap: a
// validate file is used only when its drift anchors (the calibration's own points re-timed by the benchmark during
// that run) sit where the calibration's curves do, their median over the calibration's times for them (validate's
// drift ratio: the measured point, anchor_reference_us) within [1/1.15, 1.15] (validate's drift warning); others are
// listed and left out (`any_level` keeps them). run's records have no anchors and are used. Dividing each file's ratios by its anchors' level instead was measured and predicted
// held-out runs worse (docs/benchmarks.md).
//
// A step refine cannot compare with one curve is counted, not used: one whose groups differ in shape (it takes its
// slowest group's time, which the records do not name), one of a shape or collective the calibration has no curve
// for. Steps that moved nothing (local steps, measured 0) are skipped.
//
// The error figures: |predicted - measured| / measured over the steps used, median and p90 (nearest rank), by the
// benchmark curves and, with two record files or more, by the as-run curves fitted without the file the step is in
// (leave one file out: a held-out figure, not the fit's own).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "meshloom/plan/cost_model.hpp"

namespace meshloom::launcher {

inline constexpr std::int64_t kDefaultMinSteps = 3;

// One measured collective of a plan's step.
struct StepSample {
  std::string collective;  // all_gather, all_reduce, reduce_scatter, all_to_all
  GroupShape shape;        // its groups' one shape
  double bytes = 0;        // nccl-tests' size: all_gather the gathered output, the others one rank's buffer
  double measured_us = 0;  // the collective's p50 over the step's iterations
  std::vector<std::int64_t> mesh;  // the step's mesh (empty for a drift anchor: a group shape alone)
  std::vector<std::size_t> axes;   // the axes of `mesh` it ran on
  std::size_t drift_check = 0;     // a drift anchor: which drift record of its file (validate's: 0 before, 1 after)
};

// The usable steps of one records file.
struct StepRecords {
  std::string source;
  std::string backend;
  std::string timing;  // the steps' timing protocol ("single_shot")
  std::vector<StepSample> samples;
  std::vector<StepSample> anchors;  // validate's drift anchors, before and after: the benchmark re-timed in the run
  std::int64_t mixed_shapes = 0;    // steps whose groups differ in shape: left out
  std::vector<std::string> cpus;    // the config's "cpus": every rank's CPUs (empty in older files)
  // The config's "axis_corrections": how many the run applied (0 under --no-axis-corrections; none in older files).
  std::optional<std::int64_t> axis_corrections;
  std::optional<comm::TransportSettings> transport;  // the config's "transport" (none in older files)
};

// Reads run's or validate's JSON Lines: the config record (its "backend" and "hosts"; run's carries the mesh),
// validate's request records (each request's mesh) and drift records (their anchors), and the step records.
// ValueError naming `source`, the line and the field for a malformed record, another command's records (a config
// whose "command" is not run or validate: bench's, calibrate's), a config without hosts, a step before the config or
// of an unknown request, a mesh of more ranks than the hosts place, or steps of two timing protocols.
[[nodiscard]] StepRecords parse_step_records(const std::string& text, const std::string& source);
[[nodiscard]] StepRecords read_step_records(const std::filesystem::path& path);

// One curve's correction.
struct AsRunCurve {
  std::string collective;
  GroupShape shape;
  std::vector<AsRunPoint> points;
  std::int64_t steps = 0;          // steps measured on it, over every size (those of dropped sizes too)
  std::int64_t sizes_dropped = 0;  // sizes of fewer than min_steps steps
};

// One axis correction's own as-run correction (AxisCorrection::as_run): the steps of bound records on that axis of
// the calibrated mesh.
struct AsRunAxis {
  std::string collective;
  std::vector<std::size_t> axes;
  std::vector<AsRunPoint> points;
  std::int64_t steps = 0;
  std::int64_t sizes_dropped = 0;
};

// Where the machine stood during one records file against the calibration: the median over the file's drift anchors
// (validate's) of anchor / the calibration's time for it (anchor_reference_us, validate's drift ratio).
struct RecordsLevel {
  std::string source;
  // Each drift record's median over its priced anchors of anchor / the calibration's time for it (validate's drift
  // line), in file order; `level`, the one farthest from 1 (in log): the file is level when every check was.
  std::vector<double> checks;
  std::optional<double> level;       // none without a priced anchor (run's records have none)
  std::int64_t anchors = 0;          // anchors priced
  std::int64_t unpriced_anchors = 0; // anchors of a (collective, shape) the calibration has no curve for
  bool used = true;             // false: its level lies outside the band (and any_level is off)
  // The calibration corrects its mesh's axes (axis_corrections) and the file's ranks sat on its CPUs (rank_cpus):
  // its steps and anchors on that mesh are compared with their axis' own time. Otherwise with the shared curves.
  bool by_axis = false;
};

// A curve (or an axis correction) of the base calibration that had an as-run correction and has none after refine,
// and why.
struct DroppedCorrection {
  std::string curve;  // "all_gather on 2 ranks on 1 host (2 per host)", "all_gather on axes dp"
  bool measured = false;  // false: no step of the records used measured it; true: its sizes had too few steps each
  bool operator==(const DroppedCorrection&) const = default;
};

struct RefineReport {
  Calibration calibration;           // the base with every curve's as_run replaced
  std::vector<AsRunCurve> curves;    // the curves given a correction, in the calibration's order
  std::vector<AsRunAxis> axes;       // the axis corrections whose axis' steps were measured, in their order
  std::vector<RecordsLevel> levels;  // per records file, in order
  std::int64_t files = 0;            // files with a step used (the level band passed, a step priced)
  // Curves whose earlier correction is gone: no step of the records used measured them, or none of their sizes had
  // min_steps measured collectives.
  std::vector<DroppedCorrection> dropped;
  std::int64_t steps_used = 0;
  std::int64_t steps_unpriced = 0;   // of a (collective, shape) without a curve
  std::int64_t steps_mixed = 0;      // groups of more than one shape
  // The step error of the steps used by the benchmark curves, and by the as-run curves fitted leaving out each
  // step's own file (2+ files).
  std::optional<HoldoutError> benchmark_error;
  std::optional<HoldoutError> held_out_error;
};

// Whether records whose ranks sat on `cpus` (their config's, one CPU list per rank) ran the calibrated mesh's ranks
// 0..N-1 where the calibrated job did (its rank_cpus): what axis corrections and the axes' own as-run points hold for,
// as run and validate check it rank by rank. False where either list is shorter than the mesh (or not recorded).
[[nodiscard]] bool ranks_sat_as_calibrated(const Calibration& calibration, const std::vector<std::string>& cpus);

// The band a validate file's drift anchors must sit in to be used: [1 / kLevelBand, kLevelBand] (validate's drift
// warning, 1 + kDriftWarning).
inline constexpr double kLevelBand = 1.15;

// The base calibration with every curve's as-run correction fitted from `records` (replacing any it had; a curve no
// step measured has none). ValueError when the base holds no curves (per-axis fits only), when min_steps < 1, or when
// a records file's backend or timing is not the calibration's (naming both). Unless any_transport, also when a records
// file was measured under other transport settings (comm/transport.hpp, those of the calibration's backend) than the
// calibration or an earlier records file (naming each setting that differs); where the base does not record its
// settings, the result takes those of the records that do.
[[nodiscard]] RefineReport refine_calibration(const Calibration& base, const std::vector<StepRecords>& records,
                                              std::int64_t min_steps = kDefaultMinSteps, bool any_level = false,
                                              bool any_transport = false);

// The report for people: one row per corrected curve (collective, n, hosts, ranks per host, sizes, steps, factor
// range), each records file's level, the error figures, and what was left out; comment lines start with `#`.
[[nodiscard]] std::string refine_table(const RefineReport& report);

}  // namespace meshloom::launcher
