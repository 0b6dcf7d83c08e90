// Measurements: the points of a `meshloom-launch bench` run (its --jsonl records, see the launcher's contract) and,
// optionally, a calibration with the fitted model per (axis, collective). Qt-free.
//
// Records are added one line at a time, as they stream in from a live run, or a whole file at once. A line that
// is not a record (garbage, a line cut short by a crash, a wrong field) is reported with its line number and what
// is wrong; the points already held are kept and later lines are still read. Points are grouped in series keyed by
// (axis, collective), in the order first seen.
//
// The fitted curve is the engine's calibrated cost (CalibratedCostModel::step_cost): the app never re-derives
// alpha + factor(n) * bytes / (busbw * 1e3).
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "meshloom/plan/cost_model.hpp"

namespace meshloom::app {

struct SeriesKey {
  std::string axis;        // a mesh axis or a flattened axis name
  std::string collective;  // all_reduce, all_gather, reduce_scatter, all_to_all, broadcast
  friend auto operator<=>(const SeriesKey&, const SeriesKey&) = default;
  friend bool operator==(const SeriesKey&, const SeriesKey&) = default;
};

// One result record.
struct MeasuredPoint {
  std::int64_t bytes = 0;  // nccl-tests' size column (all_gather, reduce_scatter, all_to_all: the whole array)
  std::int64_t count = 0;
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  std::int64_t wrong = 0;
  std::int64_t group_size = 0;
  std::int64_t groups = 0;
  std::optional<GroupShape> shape;  // the record's "span" as the group shape a calibration keys its curves by
  std::string dtype;
  std::size_t line = 0;  // the line it came from (1-based)
};

struct MeasuredSeries {
  SeriesKey key;
  std::int64_t group_size = 0;  // of its first point
  std::optional<GroupShape> shape;  // of its first point (records written before spans have none)
  std::vector<MeasuredPoint> points;  // in arrival order
};

// What the config record says about the run.
struct RunConfig {
  std::string backend;
  std::int64_t world = 0;
  std::vector<std::int64_t> mesh_shape;
  std::vector<std::string> mesh_names;
  std::vector<std::int64_t> sizes;          // the sweep, when the record lists it
  std::vector<std::string> collectives;     // when the record lists them
};

enum class RecordKind { Blank, Config, Result, Summary, Error, Unknown, Invalid };

struct LineResult {
  std::size_t line = 0;          // 1-based number of the line
  RecordKind kind = RecordKind::Blank;
  std::string error;             // empty when the line was accepted; else "line N: what is wrong"
  std::optional<SeriesKey> series;  // result records: the series the point joined
  [[nodiscard]] bool ok() const noexcept { return error.empty(); }
};

// One point of a fitted curve: the size it was evaluated at and the model's time.
struct FittedPoint {
  double bytes = 0;
  double time_us = 0;
};

class Measurements {
public:
  // Reads one line (without its newline; a trailing '\r' is ignored). Never throws. Blank lines are accepted and
  // counted. Unknown record types are accepted and ignored (as the launcher's calibrate does).
  LineResult add_line(std::string_view line);
  // Adds a point directly (tests, or a source that is not JSON Lines).
  void add_point(const SeriesKey& key, MeasuredPoint point);
  // Replaces everything but the calibration with the records of `path`. Line problems go to problems(); the return
  // value is empty, or the reason the file could not be read at all ("cannot read records \"path\": cause"), in
  // which case nothing changes.
  [[nodiscard]] std::string load_jsonl(const std::filesystem::path& path);
  // Forgets the records (not the calibration).
  void clear();

  [[nodiscard]] std::size_t lines() const noexcept { return lines_; }
  [[nodiscard]] const std::optional<RunConfig>& config() const noexcept { return config_; }
  [[nodiscard]] bool summary_seen() const noexcept { return summary_.has_value(); }
  [[nodiscard]] std::optional<bool> summary_ok() const noexcept { return summary_; }
  // Error records of the run: "rank R: message".
  [[nodiscard]] const std::vector<std::string>& run_errors() const noexcept { return run_errors_; }
  // The lines that were not accepted, "line N: ...", in order.
  [[nodiscard]] const std::vector<std::string>& problems() const noexcept { return problems_; }

  [[nodiscard]] const std::vector<MeasuredSeries>& series() const noexcept { return series_; }
  [[nodiscard]] const MeasuredSeries* find(const SeriesKey& key) const;
  [[nodiscard]] std::size_t point_count() const noexcept;
  // Distinct axes and collectives of the series, in the order first seen.
  [[nodiscard]] std::vector<std::string> axes() const;
  [[nodiscard]] std::vector<std::string> collectives() const;

  // ---- the fitted model ----
  // Loads a calibration file with the engine's strict reader. Returns empty on success, else the engine's message
  // (the calibration held before is kept).
  [[nodiscard]] std::string load_calibration(const std::filesystem::path& path);
  void set_calibration(std::optional<Calibration> calibration) { calibration_ = std::move(calibration); }
  [[nodiscard]] const std::optional<Calibration>& calibration() const noexcept { return calibration_; }
  [[nodiscard]] std::optional<CollectiveFit> fit(const SeriesKey& key) const;
  // The group size of an axis: from its measured points, else the calibration's or the config's mesh.
  [[nodiscard]] std::optional<std::int64_t> group_size(const SeriesKey& key) const;
  // The calibrated time of `key` at `bytes`, through the engine's CalibratedCostModel; nullopt when there is no fit,
  // no known group size, or the collective is not one the planner prices (broadcast). For all_gather the engine
  // takes the local shard, so `bytes` is rounded down to a multiple of the group size; FittedPoint::bytes is the
  // size actually priced.
  [[nodiscard]] std::optional<FittedPoint> fitted(const SeriesKey& key, double bytes) const;
  // `samples` (>= 2) points of the fitted curve, log-spaced over [lo, hi] bytes; empty when fitted() has none.
  [[nodiscard]] std::vector<FittedPoint> fitted_curve(const SeriesKey& key, double lo, double hi,
                                                      int samples = 64) const;

private:
  LineResult fail(LineResult result, const std::string& why);

  std::size_t lines_ = 0;
  std::optional<RunConfig> config_;
  std::optional<bool> summary_;
  std::vector<std::string> run_errors_;
  std::vector<std::string> problems_;
  std::vector<MeasuredSeries> series_;
  std::map<SeriesKey, std::size_t> index_;
  std::optional<Calibration> calibration_;
};

// The lines of a JSON Lines file, read whole before anything is replaced: empty on success, else why it cannot be
// read ("cannot read records \"f\": Is a directory"; a file over 256 MiB is refused, naming its bound). Measurements
// and PredictionRecords load with it.
[[nodiscard]] std::string read_jsonl_lines(const std::filesystem::path& path, std::vector<std::string>& lines);

}  // namespace meshloom::app
