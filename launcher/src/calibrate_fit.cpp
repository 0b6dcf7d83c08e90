#include "calibrate_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <set>

#include "meshloom/error.hpp"
#include "timing.hpp"

namespace meshloom::launcher {

const char* to_string(AlphaBetaFit::Kind kind) noexcept {
  switch (kind) {
    case AlphaBetaFit::Kind::Full: return "alpha+beta";
    case AlphaBetaFit::Kind::AlphaClamped: return "alpha clamped to 0";
    case AlphaBetaFit::Kind::BandwidthOnly: return "bandwidth only (one size)";
  }
  return "?";
}

double predict_time_us(const AlphaBetaFit& fit, double factor, double bytes) noexcept {
  if (!fit.ok || !(fit.busbw_gbps > 0)) return 0;
  return fit.alpha_us + factor * bytes / (fit.busbw_gbps * 1e3);
}

AlphaBetaFit fit_alpha_beta(const std::vector<FitSample>& samples, double factor) {
  AlphaBetaFit fit;
  if (!(factor > 0) || !std::isfinite(factor)) {
    fit.why = "the bus factor is " + std::to_string(factor) + " (a group of one rank moves nothing)";
    return fit;
  }
  std::vector<double> x, t, w;
  std::set<double> distinct;
  for (const auto& s : samples) {
    if (!std::isfinite(s.time_us) || !(s.time_us > 0) || !std::isfinite(s.bytes) || s.bytes < 0) continue;
    x.push_back(factor * s.bytes / 1e3);
    t.push_back(s.time_us);
    w.push_back(1.0 / (s.time_us * s.time_us));
    distinct.insert(s.bytes);
  }
  const std::size_t m = x.size();
  fit.samples = static_cast<std::int64_t>(m);
  if (m == 0) {
    fit.why = "no usable sample (every time is 0 or missing)";
    return fit;
  }
  double sw = 0, swx = 0, swt = 0;
  for (std::size_t i = 0; i < m; ++i) {
    sw += w[i];
    swx += w[i] * x[i];
    swt += w[i] * t[i];
  }
  const double xbar = swx / sw;
  const double tbar = swt / sw;

  // Through the origin: beta = sum w x t / sum w x^2.
  auto origin_slope = [&]() {
    double sxt = 0, sxx = 0;
    for (std::size_t i = 0; i < m; ++i) {
      sxt += w[i] * x[i] * t[i];
      sxx += w[i] * x[i] * x[i];
    }
    return sxx > 0 ? sxt / sxx : 0.0;
  };

  double alpha = 0;
  double beta = 0;
  if (distinct.size() < 2) {
    fit.kind = AlphaBetaFit::Kind::BandwidthOnly;
    beta = origin_slope();
  } else {
    double sxx = 0, sxt = 0;
    for (std::size_t i = 0; i < m; ++i) {
      const double dx = x[i] - xbar;
      sxx += w[i] * dx * dx;
      sxt += w[i] * dx * (t[i] - tbar);
    }
    beta = sxx > 0 ? sxt / sxx : 0.0;
    alpha = tbar - beta * xbar;
    if (alpha < 0) {
      fit.kind = AlphaBetaFit::Kind::AlphaClamped;
      alpha = 0;
      beta = origin_slope();
    }
  }
  if (!(beta > 0) || !std::isfinite(beta)) {
    fit.why = distinct.size() < 2 ? "one size of 0 bytes: no bandwidth to fit"
                                  : "the time does not grow with the size (latency-bound or noisy): no bandwidth to fit";
    return fit;
  }
  double ss_res = 0, ss_tot = 0;
  for (std::size_t i = 0; i < m; ++i) {
    const double r = t[i] - (alpha + beta * x[i]);
    const double d = t[i] - tbar;
    ss_res += w[i] * r * r;
    ss_tot += w[i] * d * d;
  }
  fit.ok = true;
  fit.alpha_us = alpha;
  fit.busbw_gbps = 1.0 / beta;
  if (ss_tot > 0) {
    fit.r2 = 1.0 - ss_res / ss_tot;
  } else {
    fit.r2 = ss_res <= 1e-24 * static_cast<double>(m) ? 1.0 : 0.0;
  }
  if (fit.r2 > 1) fit.r2 = 1;
  return fit;
}

std::optional<HoldoutError> error_summary(std::vector<double> errors) {
  if (errors.empty()) return std::nullopt;
  std::sort(errors.begin(), errors.end());
  const std::size_t k = errors.size();
  const double mid = quantile(errors, 0.5);
  const auto rank = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(k)));
  return HoldoutError{.median = mid, .p90 = std::max(mid, errors[std::max<std::size_t>(rank, 1) - 1]),
                      .points = static_cast<std::int64_t>(k)};
}

namespace {

double relative_error(double predicted, double measured) { return std::abs(predicted - measured) / measured; }

std::vector<FitSample> as_samples(const std::vector<CurvePoint>& points) {
  std::vector<FitSample> out;
  for (const auto& p : points) out.push_back({p.bytes, p.time_us});
  return out;
}

// A curve's points split for the held-out check: every other size fitted (0, 2, 4, ... and always the largest),
// the rest asked. None below 3 sizes.
struct HeldOutSplit {
  std::vector<CurvePoint> train;
  std::vector<CurvePoint> test;
};

std::optional<HeldOutSplit> held_out_split(const std::vector<CurvePoint>& points) {
  if (points.size() < 3) return std::nullopt;
  HeldOutSplit split;
  for (std::size_t i = 0; i < points.size(); ++i) {
    (i % 2 == 0 || i + 1 == points.size() ? split.train : split.test).push_back(points[i]);
  }
  return split;
}

// Alpha-beta fitted on the split's train half, asked for its test half; none when that half has no fit.
std::optional<HoldoutError> alpha_beta_held_out(const HeldOutSplit& split, double factor) {
  const AlphaBetaFit fit = fit_alpha_beta(as_samples(split.train), factor);
  if (!fit.ok) return std::nullopt;
  std::vector<double> errors;
  for (const auto& p : split.test) errors.push_back(relative_error(predict_time_us(fit, factor, p.bytes), p.time_us));
  return error_summary(errors);
}

// One point per size, its time the median of that size's samples (samples of no size or no time left out).
std::vector<CurvePoint> medians_by_size(const std::vector<FitSample>& samples) {
  std::map<double, std::vector<double>> by_size;
  for (const auto& s : samples) {
    if (std::isfinite(s.time_us) && s.time_us > 0 && std::isfinite(s.bytes) && s.bytes > 0) by_size[s.bytes].push_back(s.time_us);
  }
  std::vector<CurvePoint> points;
  for (const auto& [bytes, times] : by_size) points.push_back({bytes, median(times)});
  return points;
}

}  // namespace

std::optional<HoldoutError> alpha_beta_holdout(const std::vector<FitSample>& samples, double factor) {
  const auto split = held_out_split(medians_by_size(samples));
  if (!split) return std::nullopt;
  return alpha_beta_held_out(*split, factor);
}

CurveFitReport fit_group_curve(const std::string& collective, const GroupShape& shape,
                               const std::vector<FitSample>& samples) {
  CurveFitReport r;
  r.curve.collective = collective;
  r.curve.shape = shape;
  r.curve.points = medians_by_size(samples);
  if (r.curve.points.empty()) {
    raise(ErrorKind::ValueError, collective + " on " + to_string(shape) + ": no sample of more than 0 bytes with a time > 0");
  }
  const double factor = shape.n == 1 ? 1.0 : bus_factor(collective, shape.n);
  const auto& points = r.curve.points;
  r.alpha_beta = fit_alpha_beta(as_samples(points), factor);
  if (r.alpha_beta.ok) {
    r.curve.fit = CollectiveFit{r.alpha_beta.alpha_us, r.alpha_beta.busbw_gbps, r.alpha_beta.r2, r.alpha_beta.samples};
    for (const auto& p : points) {
      r.alpha_beta_max_residual =
          std::max(r.alpha_beta_max_residual, relative_error(predict_time_us(r.alpha_beta, factor, p.bytes), p.time_us));
    }
  }
  if (const auto held = held_out_split(points)) {
    std::vector<double> pw;
    for (const auto& p : held->test) pw.push_back(relative_error(piecewise_time_us(held->train, p.bytes), p.time_us));
    r.piecewise_holdout = error_summary(pw);
    r.alpha_beta_holdout = alpha_beta_held_out(*held, factor);
  }
  // One size fits any line through the origin: without a second size there is no latency to fit, so piecewise (its
  // latency floor) rather than a bandwidth-only line that prices small messages near 0.
  const bool alpha_beta = r.alpha_beta.ok && points.size() >= 2 && r.alpha_beta_max_residual <= kAlphaBetaTolerance;
  r.curve.model = alpha_beta ? CurveModel::AlphaBeta : CurveModel::Piecewise;
  r.curve.holdout = alpha_beta ? r.alpha_beta_holdout : r.piecewise_holdout;
  return r;
}

}  // namespace meshloom::launcher
