// The fit behind `meshloom-launch calibrate`: per (axis, collective),
//
//   time_us = alpha_us + factor(n) * bytes / (busbw_gbps * 1e3)
//
// which is linear in (alpha, beta = 1 / busbw) with x = factor(n) * bytes / 1e3. Fitted by weighted least squares
// with weights 1 / time^2, so every sample counts by its relative error: a sweep from 8 B to 64 MiB spans several
// decades of time, and ordinary least squares would let the largest sizes decide alpha alone. The weighted sums
// are centred (x - mean, t - mean) before the slope is taken, so noise-free data is recovered to rounding error.
//
// Clamps and degenerate cases:
//   - fewer than two distinct sizes: the bandwidth alone is fitted through the origin (alpha = 0), kind
//     BandwidthOnly;
//   - a negative alpha: refitted with alpha = 0 (bandwidth only, over every sample), kind AlphaClamped;
//   - a slope that is not > 0 (the time does not grow with the size: latency-bound or noise), or no usable sample:
//     no fit (ok = false, `why` says so); the pair is left out of the calibration.
// r2 is the weighted coefficient of determination, 1 - sum w (t - fit)^2 / sum w (t - weighted mean)^2 (1 when
// every time is equal and fitted exactly); it may be negative after a clamp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "meshloom/plan/cost_model.hpp"

namespace meshloom::launcher {

struct FitSample {
  double bytes = 0;    // nccl-tests' size of the run (bytes of the result record)
  double time_us = 0;  // the time per iteration the record reports (timing.hpp time_of)
};

struct AlphaBetaFit {
  enum class Kind { Full, AlphaClamped, BandwidthOnly };
  bool ok = false;
  Kind kind = Kind::Full;
  double alpha_us = 0;
  double busbw_gbps = 0;
  double r2 = 0;
  std::int64_t samples = 0;  // samples used (times > 0 and finite, bytes >= 0)
  std::string why;           // when !ok: why there is no fit
};

[[nodiscard]] const char* to_string(AlphaBetaFit::Kind kind) noexcept;

// `factor` is the bus factor of the collective on its group (bus_factor(collective, n)); it must be > 0.
[[nodiscard]] AlphaBetaFit fit_alpha_beta(const std::vector<FitSample>& samples, double factor);

// The time the fit predicts for `bytes`.
[[nodiscard]] double predict_time_us(const AlphaBetaFit& fit, double factor, double bytes) noexcept;

// ---- Keyed curves ------------------------------------------------------------------------------------------
//
// One curve of a calibration (cost_model.hpp's GroupCurve) from the samples of one (collective, group shape):
//   points     one per measured size, its time the median of the samples of that size (two axes of one shape give
//              two samples per size);
//   fit        fit_alpha_beta over the points, with the curve's factor (bus factor; 1 for a group of one rank);
//   model      alpha_beta when that fit exists over 2 or more sizes and its largest relative residual over the
//              points, |fit - t| / t, is <= kAlphaBetaTolerance (10%): alpha-beta follows the data; piecewise
//              otherwise (the latency ramp of small messages, protocol switches; one size: its time up to that
//              size, its algbw beyond);
//   holdout    both models refitted on every other size (indices 0, 2, 4, ... and always the largest, so that the
//              held-out sizes lie inside the fitted range, as a planner's sizes mostly do) and asked for the sizes
//              left out (1, 3, 5, ...): median and p90 (nearest rank) of |predicted - measured| / measured. Needs 3
//              or more sizes (and, for alpha-beta, a fit of the fitted half); the chosen model's figures go into the
//              curve, none when it has none.
inline constexpr double kAlphaBetaTolerance = 0.10;

struct CurveFitReport {
  GroupCurve curve;
  AlphaBetaFit alpha_beta;                      // over every point (fit.ok false: no alpha-beta fit)
  double alpha_beta_max_residual = 0;           // largest |fit - t| / t over the points (when alpha_beta.ok)
  std::optional<HoldoutError> alpha_beta_holdout;
  std::optional<HoldoutError> piecewise_holdout;
};

// ValueError when no sample has a time > 0.
[[nodiscard]] CurveFitReport fit_group_curve(const std::string& collective, const GroupShape& shape,
                                             const std::vector<FitSample>& samples);

// Median and nearest-rank p90 of relative errors (none: nullopt).
[[nodiscard]] std::optional<HoldoutError> error_summary(std::vector<double> errors);

// The held-out error of an alpha-beta fit of `samples` (a per-axis fit's): the samples of more than 0 bytes reduced
// to one point per size (the median), then as a curve's holdout above (every other size fitted, the rest asked).
// None below 3 sizes or without a fit of the fitted half.
[[nodiscard]] std::optional<HoldoutError> alpha_beta_holdout(const std::vector<FitSample>& samples, double factor);

}  // namespace meshloom::launcher
