// PredictionRecords: the step records of `meshloom-launch run --jsonl` and `meshloom-launch validate --jsonl`, read
// as what each cost model predicted for a step against what the step measured. Qt-free, no QCustomPlot.
//
// A step record (validate's carry an integer "request" too):
//   {"type":"step","plan":0,"step":1,"axes":[0],"collective":"all_gather","merged":false,"from":"S(0)","to":"R",
//    "bytes":16384,"predicted":{"comm":14.2,"fixed":2.0,"calibrated":21.5},"measured_us":23.9,...}
// "predicted" holds one number per cost model: "fixed" is PyTorch's unitless weights, every other model is in
// microseconds. A prediction written as null (the launcher's JSON for an infinite or NaN cost) is not finite and
// is skipped for that model; a record whose measured_us is <= 0 gives no point at all. The config record
// ("command": "run" or "validate") and validate's drift and report records (DriftRecord, ReportRecord) are read;
// every other record type (plan, summary, compare, request, error, ...) is accepted and ignored.
//
// Lines are read with the JSON policy of measurements.cpp (the engine's json_read: duplicate keys and integers
// past int64 are refused): a line that is not a step record (garbage, cut short, a wrong field) is reported as
// "line N: what is wrong" and skipped; the rest is kept.
//
// The statistics, per model (docs/06-app.md), as `meshloom-launch validate` reports its step error:
//   points          step records of a communicating collective (local steps move no data; their measured_us is 0)
//                   with measured_us > 0 and a finite prediction of the model
//   relative error  |predicted - measured| / measured, per point
//   median          the middle error (the mean of the two middle ones for an even count)
//   p90             nearest rank: the ceil(0.9 k)-th smallest of k errors
//   spearman        Pearson's correlation of the ranks of predicted and of measured, ties given their average
//                   rank; NaN when it is undefined (fewer than two points, or all predictions or all measurements
//                   equal)
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/planner.hpp"

namespace meshloom::app {

// One step record as read.
struct StepRecord {
  std::size_t line = 0;                   // 1-based line of the file
  std::int64_t plan = 0;
  std::int64_t step = 0;
  std::optional<std::int64_t> request;    // validate only
  std::vector<std::int64_t> axes;
  std::string collective;                 // the engine's name, e.g. "all_gather"
  bool merged = false;
  std::string from;                       // the placement on the step's axes before, e.g. "S(0)"
  std::string to;                         // ... and after, e.g. "R"
  std::int64_t bytes = 0;
  // model -> prediction, in the order of the config's "models" when it lists them, else by name; nullopt where
  // the record holds null (not finite).
  std::vector<std::pair<std::string, std::optional<double>>> predicted;
  double measured_us = 0;
};

// validate's drift check, before or after its requests (docs/05): the calibration's own points re-timed.
//   {"type":"drift","when":"before","median_ratio":1.02,"min_ratio":0.91,"max_ratio":1.10,"drifted":false,
//    "anchors":[...]}
struct DriftRecord {
  std::size_t line = 0;
  std::string when;           // "before" or "after" (the requests)
  double median_ratio = 0;    // measured / calibrated, the median over the anchors
  double min_ratio = 0, max_ratio = 0;
  bool drifted = false;       // the launcher's verdict: the median outside [1/1.15, 1.15]
  std::size_t anchors = 0;
};

// validate's verdict on one model over its requests (docs/05): how often its pick was the measured fastest (or tied
// with it), and what following its picks cost, T(pick) / T(fastest) - 1, the mean and the greatest over the requests.
//   {"type":"report","model":"calibrated","requests":30,"right":29,"exact":18,"time_lost":{"mean":0.022,"max":0.2},
//    ...}
// "time_lost" and "misses_priced_alike" (of the wrong picks, those between plans the model priced within 0.1%) are
// absent from records written before validate reported them. Other fields are not this view's.
struct ReportRecord {
  std::size_t line = 0;
  std::string model;
  std::int64_t requests = 0;
  std::int64_t right = 0;  // 0..requests
  std::optional<double> time_lost_mean;
  std::optional<double> time_lost_max;
  std::optional<std::int64_t> misses_priced_alike;  // 0..requests - right
};

// A share as a percentage with one decimal: 0.2215 -> "22.2 %"; "—" when not finite.
[[nodiscard]] std::string percent_text(double share);
// "29/30 (96.7 %)"; "—" without requests.
[[nodiscard]] std::string picks_text(const ReportRecord& report);
// What the right picks' cell says when hovered: how many of the misses were between plans the model priced alike
// ("6 of its 7 wrong picks were between plans it priced alike: ...", "its one wrong pick was ..."); empty without
// misses or without the field.
[[nodiscard]] std::string picks_note(const ReportRecord& report);
// "2.2 % (max 20.0 %)"; "—" without time_lost.
[[nodiscard]] std::string time_lost_text(const ReportRecord& report);

// One (model, step) pair that can be compared: a communicating step, a finite prediction and a measurement > 0.
struct PredictionPoint {
  std::string model;
  double predicted_us = 0;   // "fixed": unitless weights
  double measured_us = 0;
  std::string collective;
  std::int64_t bytes = 0;
  std::optional<std::int64_t> request;
  std::int64_t plan = 0;
  std::int64_t step = 0;
  std::size_t line = 0;
};

struct ModelSummary {
  std::string model;
  bool comparable = true;          // false for "fixed" (unitless): no error statistics
  std::size_t count = 0;           // points
  std::size_t not_finite = 0;      // measured communicating steps whose prediction for this model is not finite
  double median_error = 0;         // relative errors; NaN without points or when not comparable
  double p90_error = 0;
  double spearman = 0;             // NaN when undefined or not comparable
};

// Whether a model's predictions are microseconds (every model but PyTorch's unitless "fixed" weights).
[[nodiscard]] bool is_microsecond_model(std::string_view model) noexcept;

// |predicted - measured| / measured (measured > 0).
[[nodiscard]] double relative_error(double predicted, double measured) noexcept;
// The median of `values` (the mean of the middle two for an even count); NaN for none.
[[nodiscard]] double median(std::vector<double> values);
// The nearest-rank percentile (1 <= percent <= 100): the ceil(percent k / 100)-th smallest of k values; NaN for none.
[[nodiscard]] double nearest_rank(std::vector<double> values, int percent);
// 1-based ranks of `values`, ties given the average of the ranks they span.
[[nodiscard]] std::vector<double> average_ranks(const std::vector<double>& values);
// Spearman's rank correlation of x and y (same length): Pearson's correlation of their average ranks; NaN when
// undefined (fewer than 2 values, or either side constant).
[[nodiscard]] double spearman(const std::vector<double>& x, const std::vector<double>& y);

// Measurements of one plan step found in the records.
struct StepMatch {
  std::size_t count = 0;     // step records that match (see PredictionRecords::match)
  double measured_us = 0;    // their median measured time
};

class PredictionRecords {
public:
  // Reads one line (without its newline; a trailing '\r' is ignored). Never throws. Returns empty when the line
  // was accepted (a step record, another record, or a blank line), else "line N: what is wrong" (also kept in
  // problems()).
  std::string add_line(std::string_view line);
  // Replaces everything with the records of `path`. Line problems go to problems(); the return value is empty, or
  // the reason the file could not be read at all ("cannot read records \"path\": cause"), in which case nothing
  // changes.
  [[nodiscard]] std::string load_jsonl(const std::filesystem::path& path);
  void clear();

  [[nodiscard]] std::size_t lines() const noexcept { return lines_; }
  // The config record's "command" ("run", "validate", or another command's); empty without a config record.
  [[nodiscard]] const std::string& command() const noexcept { return command_; }
  [[nodiscard]] const std::vector<std::string>& problems() const noexcept { return problems_; }
  [[nodiscard]] const std::vector<StepRecord>& steps() const noexcept { return steps_; }
  // validate's drift records, in file order.
  [[nodiscard]] const std::vector<DriftRecord>& drift() const noexcept { return drift_; }
  // validate's report records, in file order; report(model) is the last one of that model, or nullptr.
  [[nodiscard]] const std::vector<ReportRecord>& reports() const noexcept { return reports_; }
  [[nodiscard]] const ReportRecord* report(const std::string& model) const noexcept;
  // Step records whose measured_us is <= 0 (they give no point; local steps among them).
  [[nodiscard]] std::size_t unmeasured() const noexcept;

  // Every model named by a step record (or the config's "models"), the config's order first, then by name.
  [[nodiscard]] std::vector<std::string> models() const;
  // The points of one model, in record order (see the top of this file).
  [[nodiscard]] std::vector<PredictionPoint> points(const std::string& model) const;
  [[nodiscard]] ModelSummary summary(const std::string& model) const;
  [[nodiscard]] std::vector<ModelSummary> summaries() const;

  // The measured step records of a plan's step: the same collective, axes, from and to placements and bytes
  // (and measured_us > 0); their count and median measured time.
  [[nodiscard]] StepMatch match(const PlanStep& step) const;

private:
  std::string fail(std::size_t line, const std::string& why);

  std::size_t lines_ = 0;
  std::string command_;
  std::vector<std::string> config_models_;
  std::vector<std::string> problems_;
  std::vector<StepRecord> steps_;
  std::vector<DriftRecord> drift_;
  std::vector<ReportRecord> reports_;
};

// What the scatter says of the drift records: empty without any; else "Drift against the calibration (its own
// points re-timed): 1.00x before the requests, 1.60x after.", and when one drifted, " The machine ran slower than
// when it was calibrated: the errors above include that drift." (faster, when the median fell below 1). A check
// without anchors (no point of the calibration on the mesh's groups) reads "no anchor".
[[nodiscard]] std::string drift_text(const std::vector<DriftRecord>& drift);
// Whether any of them drifted.
[[nodiscard]] bool any_drifted(const std::vector<DriftRecord>& drift) noexcept;

}  // namespace meshloom::app
