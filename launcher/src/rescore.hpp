// `meshloom-launch rescore`: the plans a validate run measured, judged again under calibrations that did not take
// part in it. No communication.
//
// validate runs the k cheapest plans of every model for each request and judges each model's pick by what the plans
// measured (validate_report.hpp). Two validate runs of two calibrations differ by the calibrations and by the
// machine between the runs. rescore takes the machine out of the comparison: it reads one run's records
// (validate --jsonl) and prices every measured plan by each calibration given, step by step as validate prices them
// (calibrated model, price_plan_steps: a step by its groups' curves, a merged step by its flattened group's curve,
// the calibration's as-run and axis corrections applied as they apply), then judges every pick by validate's rules.
// So a refined calibration is judged held out on a run whose records it was not refined by, before any new run.
//
// A calibration's pick is the plan the planner gives it (model_plans, validate_suite.hpp) when that plan was among the
// measured ones; otherwise the cheapest of the measured plans by its prices, and the request counts as an unmeasured
// pick: there the judgement is of a stand-in.
//
// Rows per records file:
//   validated    the file's own calibrated model: its recorded predictions and picks (validate's own verdict)
//   <file>       each --calibration
//   step times   every step priced by the run's own measurement: the median measured time of the steps of the file
//                with its mesh, axes, collective and size, over every plan and request that ran one. A price that
//                knew each step's time in this very run, one step at a time: its misses are the run's noise and what
//                a step costs differently inside different plans, which no price per step follows, so a calibration
//                that misses about as often has reached what the measurements can tell (a reference, not a bound:
//                noise can favour either side). On 4 bound ranks of the VM of docs/benchmarks.md: 229 of 240 and
//                273 of 300 right, the best refined calibration held out 222 and 277.
//   hindsight    with two files or more (add_hindsight): per request (the same mesh, tensor, states, flattened axes,
//                itemsize, variant, coordinate and state budget in every file: its runs), of the plans (the same
//                trace and steps) measured in every run of it, the one right in the most runs, the least median
//                measured total breaking a tie. A pick chosen after seeing every run, the same in each. One
//                calibration judged over these files together prices a request's plans alike in every run, so where
//                its planner's picks all ran it picks one plan each measured every time, and cannot be right in more
//                runs: where hindsight falls short of a goal, no one calibration reaches it on these runs. Where no
//                plan ran in every run of a request, each run's fastest stands in (counted as unmeasured picks); a
//                request of one run only gets that run's fastest (counted below the table). Its prices, for the
//                step and plan error and the rank correlation: each step by the median over the runs of that plan's
//                step, so its step error is the spread of the very same step around that median. Over the sixteen
//                4-rank runs of docs/benchmarks.md: 466 of 480 right (97.1%, every plan it kept measured in every
//                run).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "meshloom/plan/cost_model.hpp"
#include "plan_batch.hpp"
#include "validate_report.hpp"

namespace meshloom::launcher {

// One measured step of a candidate plan, as validate recorded it.
struct MeasuredStep {
  std::string collective;         // to_string(Collective): all_gather, ..., chunk
  std::vector<std::size_t> axes;  // ascending mesh axes
  bool merged = false;            // one collective on the flattened group of `axes`
  std::int64_t bytes = 0;         // one rank's bytes before the step
  double measured_us = 0;         // the collective's p50; 0 for a local step
  std::vector<double> iterations_us;
  double recorded_us = 0;         // the file's calibrated prediction of the step (+infinity: it could not price it)
};

struct MeasuredPlan {
  std::string trace;
  std::vector<MeasuredStep> steps;
  std::optional<std::size_t> expected_steps;  // the plan record's "steps"
  bool summarized = false;                    // its summary record came
  bool verified = true;                       // the summary's "verified"
};

struct MeasuredRequest {
  std::size_t index = 0;  // the request's number in the file
  std::string label;
  PlanSetup setup;  // the request (mesh, tensor, states, itemsize, flattened) and its axis names
  std::vector<MeasuredPlan> plans;
  std::size_t recorded_pick = 0;             // the file's calibrated pick (its request record's "picks")
  std::size_t recorded_plans = 0;            // its request record's "plans"
};

struct ValidateRecords {
  std::string source;
  std::string backend;
  std::string calibration;        // the calibration validate judged (config "calibration")
  std::vector<std::string> cpus;  // every rank's CPUs (config "cpus"; empty in older files)
  std::optional<comm::TransportSettings> transport;  // the config's "transport" (none in older files)
  std::vector<MeasuredRequest> requests;  // those whose plans all ran (every plan with its summary)
  std::size_t unfinished = 0;             // requests left out: a plan without its summary (a run cut short)
};

// Reads validate's JSON Lines. ValueError naming `source`, the line and the field for a malformed record, another
// command's records (a config whose "command" is not validate), a plan, step or summary of an unknown request or plan,
// steps out of order or after their plan's summary, a summary before all its plan's steps, a pick that is not one of
// the request's plans, a step without its calibrated prediction, a file without a config or without a request whose
// plans all ran (requests with a plan never summarized are left out and counted: a run cut short).
[[nodiscard]] ValidateRecords parse_validate_records(const std::string& text, const std::string& source);
[[nodiscard]] ValidateRecords read_validate_records(const std::filesystem::path& path);

struct NamedCalibration {
  std::string name;  // as the table shows it (the file's name)
  Calibration calibration;
};

struct RescoreOptions {
  bool extrapolate = false;          // price group shapes the calibration never measured from the nearest one
  bool no_axis_corrections = false;  // price the calibrated mesh's axes by their curves alone
  bool any_transport = false;        // judge calibrations on records made under other transport settings too
};

// The verdicts for one records file: scores[0] the validated model, then one per calibration, then step times (and
// hindsight, added by add_hindsight).
struct RescoreReport {
  std::string source;
  bool hindsight = false;  // add_hindsight added its row (the last score)
  std::int64_t single_run_requests = 0;  // hindsight: requests of this file that ran in no other
  std::string calibration;  // the records' own (the validated row's)
  std::size_t unfinished = 0;  // the records' requests left out (ValidateRecords::unfinished)
  std::size_t calibrations = 0;  // scores[1 .. calibrations] are the --calibration rows
  std::vector<ModelScore> scores;
  std::vector<std::int64_t> unmeasured_picks;  // per score: requests where the model's own pick was not measured
  std::vector<RequestMeasurement> requests;    // what was judged, every model's predictions per candidate
  // What names a request and each of its plans alike in every file (hindsight matches them across files).
  std::vector<std::string> request_keys;             // [request]
  std::vector<std::vector<std::string>> plan_keys;   // [request][candidate]
  // What names a request in its file, for rescore_jsonl's request records (rescore_records fills them; a report
  // built otherwise, or all files together, has none and writes none).
  std::vector<std::size_t> request_numbers;          // [request]: its number in the records file
  std::vector<std::string> request_labels;           // [request]
  std::vector<std::vector<std::string>> traces;      // [request][candidate]: the plan's trace
  std::vector<std::vector<bool>> stand_ins;          // [request][score]: its own pick did not run (see above)
};

// ValueError when a calibration holds per-axis fits only, measured another backend than the records ran on or the
// pipelined protocol (as validate refuses them), or corrects the axes of a requested mesh whose ranks sat on other
// CPUs in the records or whose records do not say (naming both lists; no_axis_corrections leaves them out); the
// planner's error, with what the calibration cannot price, when it finds no plan for a request. A measured step the
// calibration cannot price costs +infinity, as validate prices it.
[[nodiscard]] RescoreReport rescore_records(const ValidateRecords& records,
                                            const std::vector<NamedCalibration>& calibrations,
                                            const RescoreOptions& options = {});

// With two reports or more: the hindsight row (above) added to every report, its scores judged again; fewer: nothing.
void add_hindsight(std::vector<RescoreReport>& reports);

// Every report's requests judged together (two files or more): source "all N files", the unmeasured picks and the
// requests of one file summed.
[[nodiscard]] RescoreReport rescore_all_files(const std::vector<RescoreReport>& reports);

// The same as JSON Lines (rescore --jsonl): a config record (command "rescore", records, calibrations, tie_floor,
// priced_alike, extrapolate, no_axis_corrections, any_transport), per records file a "records" record (source, its calibration,
// requests, left out, measured plans, requests of that file only), then per row a "report" record (validate's report
// fields, score_json, with "records": the file, and "unmeasured_picks": null for rows without a pick of their own)
// and per request a "request" record (its number and label in the file, the index of the measured fastest plan, every
// plan's trace and measured total, and per row its pick: the plan, right, exact, time lost, and stand_in: whether its
// own pick did not run and its cheapest measured plan stood in, null for rows without a pick of their own); with two
// files or more the report rows for all of them ("records": "all"); an "end" record last.
[[nodiscard]] std::string rescore_jsonl(const std::vector<RescoreReport>& reports, const RescoreOptions& options);

// The table: per records file, one row per model (right picks, exact, time lost, step and plan error, rank
// correlation, unmeasured picks); with two files or more, the same over every file's requests together.
[[nodiscard]] std::string rescore_table(const std::vector<RescoreReport>& reports);

}  // namespace meshloom::launcher
