// The judgement of `meshloom-launch validate`, without communication: which plan of a request was measured fastest,
// whether each cost model's own pick was it, and how far each model's predictions are from the measurements.
//
// For one request every candidate plan (the k cheapest of every model) ran for real, each step timed by the
// single_shot protocol over `iterations` runs. Per candidate:
//   measured     T = sum over its steps of the collective's p50 (what the models predict: local steps cost 0)
//   noise        se(T) = sqrt(sum over steps se_s^2), se_s = 1.2533 * 1.4826 * MAD_s / sqrt(iterations): the
//                standard error of a median (1.2533 sigma / sqrt(n)) with sigma estimated robustly from the median
//                absolute deviation of the step's iterations (1.4826 MAD), so that one descheduled iteration does
//                not widen it
// Two candidates tie when |T_a - T_b| <= max(kTieFloor * min(T_a, T_b), 2 * sqrt(se_a^2 + se_b^2)): within twice the
// standard error of their difference, and never closer than 3% (below that no layout decision matters).
//
// Per model m (its pick: the cheapest plan under m; where merged steps are priced as they run, the cheapest of the
// as-run pool as it runs, validate_suite.hpp model_plans):
//   right        the pick is the measured fastest, or ties with it
//   step error   |predicted - measured| / measured over every communicating step of every candidate (time models only:
//                fixed's weights are unitless); median and p90 (nearest rank)
//   plan error   the same over candidates' totals
//   time lost    what following the model's picks costs in measured time: per request T(pick) / T(fastest) - 1 (0
//                when it picks the fastest, or when the fastest measured 0: local steps only; a tie's small excess
//                counts as it was measured), the mean and the greatest over the requests. Unlike right picks it
//                weighs a miss by how much slower the pick ran, and it is defined for fixed, whose weights are not
//                times
//   rank corr.   Spearman's rho (average ranks for ties) between predicted and measured totals of a request's
//                candidates, averaged over the requests with at least 3 candidates whose predictions and
//                measurements both differ (a constant has no ranking)
//   alike        of its wrong picks, those where the model priced its pick and the measured fastest alike:
//                |P(pick) - P(fastest)| <= kPricedAlike * max(|P(pick)|, |P(fastest)|), P its predicted total. Its
//                prices did not separate the two (its pick was the first of equal prices): fixed's weights add up
//                alike for different collectives (an all_reduce weighs as much as the reduce_scatter + all_gather it
//                splits into), and a calibration keyed by group shape prices the same collectives on two axes of
//                one shape alike, even where the machine runs one of them faster
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate_fit.hpp"

namespace meshloom::launcher {

inline constexpr double kTieFloor = 0.03;
inline constexpr double kPricedAlike = 0.001;

struct CandidateMeasurement {
  std::vector<std::vector<double>> predicted_steps;  // [model][step]
  std::vector<double> predicted_total;               // [model]
  std::vector<double> measured_steps_us;             // [step]: the collective's p50; 0 for a local step
  std::vector<std::vector<double>> step_iterations_us;  // [step]: every iteration's collective time
  bool verified = false;
};

struct RequestMeasurement {
  std::vector<CandidateMeasurement> candidates;
  std::vector<std::size_t> pick;  // [model]: the candidate the model picks
};

// Sum of a candidate's measured steps, and its standard error (see above).
[[nodiscard]] double measured_total_us(const CandidateMeasurement& c);
[[nodiscard]] double measured_se_us(const CandidateMeasurement& c);
// The standard error of the median of `iterations` (see above); 0 for fewer than two.
[[nodiscard]] double median_se(std::vector<double> iterations);
// Whether two candidates' measured totals tie (see above).
[[nodiscard]] bool measured_tie(const CandidateMeasurement& a, const CandidateMeasurement& b);

struct RequestVerdict {
  std::size_t fastest = 0;   // the candidate of the least measured total among those verified (among all when none
                             // was: the run then exits 1 anyway, naming the mismatch)
  std::vector<bool> right;   // [model]: its pick is verified and the fastest or ties with it
  std::vector<bool> exact;   // [model]: its pick is verified and the fastest itself
};
// ValueError for a request without candidates or a pick out of range.
[[nodiscard]] RequestVerdict judge(const RequestMeasurement& request);

// What following model m's pick cost: T(pick) / T(fastest) - 1 in measured totals; 0 where the fastest measured 0
// (local steps only: nothing moved, no ratio to take), and never below 0 (a pick that moved wrong data may have
// measured faster than the fastest verified plan).
[[nodiscard]] double time_lost(const RequestMeasurement& request, const RequestVerdict& verdict, std::size_t m);

// Whether model m priced its pick and the measured fastest alike (the "alike" above; either not finite: no).
[[nodiscard]] bool priced_alike(const RequestMeasurement& request, const RequestVerdict& verdict, std::size_t m);

// Spearman's rho with average ranks; nullopt when fewer than 2 values or either side is constant.
[[nodiscard]] std::optional<double> spearman(const std::vector<double>& a, const std::vector<double>& b);

struct ModelScore {
  std::string model;
  bool time_model = true;           // predictions in microseconds (all but fixed)
  std::int64_t requests = 0;
  std::int64_t right = 0;           // picks that were the fastest or tied with it
  std::int64_t exact = 0;           // picks that were the fastest itself
  std::optional<HoldoutError> step_error;  // time models with measured steps
  std::optional<HoldoutError> plan_error;
  double time_lost_mean = 0;        // mean over the requests of T(pick) / T(fastest) - 1
  double time_lost_max = 0;         // the greatest
  std::optional<double> rank_correlation;  // mean over the requests that have one
  std::int64_t correlated_requests = 0;
  std::int64_t misses_priced_alike = 0;  // wrong picks priced within kPricedAlike of the fastest (above)
};

// `models[m]` names model m of every request's predictions; `time_model[m]` whether its predictions are times.
[[nodiscard]] std::vector<ModelScore> score_models(const std::vector<std::string>& models,
                                                  const std::vector<bool>& time_model,
                                                  const std::vector<RequestMeasurement>& requests);

// A score as validate's and rescore's report records carry it: model, time_model, requests, right, exact, share_right,
// time_lost {mean, max}, step_error and plan_error {median, p90, points} (null where none), rank_correlation (null
// where none), correlated_requests, misses_priced_alike.
[[nodiscard]] nlohmann::ordered_json score_json(const ModelScore& score);

// The report's table as validate prints it: a header row (model, right picks, exact, time lost mean / max, step error
// med / p90 (steps), plan error med / p90 (plans), rank corr. (requests)), then one row per score.
[[nodiscard]] std::vector<std::vector<std::string>> score_rows(const std::vector<ModelScore>& scores);
// The line under that table naming the misses between plans a model priced alike ("alike" above), per model that had
// any: "wrong picks between plans the model priced alike (within 0.1%: ...): fixed 11 of 12, ...\n"; empty if none.
[[nodiscard]] std::string priced_alike_note(const std::vector<ModelScore>& scores);

}  // namespace meshloom::launcher
