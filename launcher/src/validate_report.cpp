#include "validate_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "meshloom/error.hpp"
#include "text_format.hpp"
#include "timing.hpp"

namespace meshloom::launcher {

namespace {

// Average ranks (1-based) of `v`, ties sharing the mean of their ranks.
std::vector<double> average_ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j < order.size() && v[order[j]] == v[order[i]]) ++j;
    const double rank = (static_cast<double>(i) + static_cast<double>(j - 1)) / 2 + 1;
    for (std::size_t k = i; k < j; ++k) ranks[order[k]] = rank;
    i = j;
  }
  return ranks;
}

}  // namespace

double median_se(std::vector<double> iterations) {
  if (iterations.size() < 2) return 0;
  const double m = median(iterations);
  for (auto& x : iterations) x = std::abs(x - m);
  const double sigma = 1.4826 * median(iterations);
  return 1.2533 * sigma / std::sqrt(static_cast<double>(iterations.size()));
}

double measured_total_us(const CandidateMeasurement& c) {
  double total = 0;
  for (const double t : c.measured_steps_us) total += t;
  return total;
}

double measured_se_us(const CandidateMeasurement& c) {
  double var = 0;
  for (const auto& it : c.step_iterations_us) {
    const double se = median_se(it);
    var += se * se;
  }
  return std::sqrt(var);
}

bool measured_tie(const CandidateMeasurement& a, const CandidateMeasurement& b) {
  const double ta = measured_total_us(a);
  const double tb = measured_total_us(b);
  const double sa = measured_se_us(a);
  const double sb = measured_se_us(b);
  const double tolerance = std::max(kTieFloor * std::min(ta, tb), 2 * std::sqrt(sa * sa + sb * sb));
  return std::abs(ta - tb) <= tolerance;
}

RequestVerdict judge(const RequestMeasurement& request) {
  if (request.candidates.empty()) raise(ErrorKind::ValueError, "a request without candidate plans cannot be judged");
  RequestVerdict v;
  // A plan that moved the wrong data is no plan to be fastest with: the fastest among the verified ones.
  const bool any_verified = std::any_of(request.candidates.begin(), request.candidates.end(),
                                        [](const CandidateMeasurement& c) { return c.verified; });
  const auto counts = [&](std::size_t k) { return !any_verified || request.candidates[k].verified; };
  while (!counts(v.fastest)) ++v.fastest;
  for (std::size_t k = v.fastest + 1; k < request.candidates.size(); ++k) {
    if (counts(k) && measured_total_us(request.candidates[k]) < measured_total_us(request.candidates[v.fastest])) {
      v.fastest = k;
    }
  }
  for (const std::size_t pick : request.pick) {
    if (pick >= request.candidates.size()) {
      raise(ErrorKind::ValueError, "pick " + std::to_string(pick) + " is not one of the " +
                                       std::to_string(request.candidates.size()) + " candidates");
    }
    const bool ok = counts(pick);
    v.exact.push_back(ok && pick == v.fastest);
    v.right.push_back(ok && (pick == v.fastest || measured_tie(request.candidates[pick], request.candidates[v.fastest])));
  }
  return v;
}

std::optional<double> spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return std::nullopt;
  const std::vector<double> ra = average_ranks(a);
  const std::vector<double> rb = average_ranks(b);
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n;
  const double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  if (!(saa > 0) || !(sbb > 0)) return std::nullopt;
  return sab / std::sqrt(saa * sbb);
}

double time_lost(const RequestMeasurement& request, const RequestVerdict& verdict, std::size_t m) {
  const double fastest = measured_total_us(request.candidates.at(verdict.fastest));
  const double lost = fastest > 0 ? measured_total_us(request.candidates.at(request.pick.at(m))) / fastest - 1 : 0.0;
  // A pick that moved wrong data (not verified) may have measured faster than the fastest verified plan; it gains
  // nothing by that.
  return std::max(lost, 0.0);
}

bool priced_alike(const RequestMeasurement& request, const RequestVerdict& verdict, std::size_t m) {
  const double mine = request.candidates.at(request.pick.at(m)).predicted_total.at(m);
  const double best = request.candidates.at(verdict.fastest).predicted_total.at(m);
  return std::isfinite(mine) && std::isfinite(best) &&
         std::abs(mine - best) <= kPricedAlike * std::max(std::abs(mine), std::abs(best));
}

std::vector<ModelScore> score_models(const std::vector<std::string>& models, const std::vector<bool>& time_model,
                                     const std::vector<RequestMeasurement>& requests) {
  std::vector<ModelScore> scores(models.size());
  std::vector<std::vector<double>> step_errors(models.size()), plan_errors(models.size());
  std::vector<double> rho_sum(models.size(), 0.0);
  for (std::size_t m = 0; m < models.size(); ++m) {
    scores[m].model = models[m];
    scores[m].time_model = time_model[m];
  }
  for (const auto& request : requests) {
    if (request.pick.size() != models.size()) {
      raise(ErrorKind::ValueError, "a request has " + std::to_string(request.pick.size()) + " picks for " +
                                       std::to_string(models.size()) + " models");
    }
    for (const auto& c : request.candidates) {
      if (c.predicted_total.size() != models.size() || c.predicted_steps.size() != models.size()) {
        raise(ErrorKind::ValueError, "a candidate has predictions of " + std::to_string(c.predicted_total.size()) +
                                         " models for " + std::to_string(models.size()));
      }
    }
    const RequestVerdict v = judge(request);
    std::vector<double> measured;
    for (const auto& c : request.candidates) measured.push_back(measured_total_us(c));
    for (std::size_t m = 0; m < models.size(); ++m) {
      ModelScore& s = scores[m];
      ++s.requests;
      s.right += v.right[m] ? 1 : 0;
      s.exact += v.exact[m] ? 1 : 0;
      const double lost = time_lost(request, v, m);
      s.time_lost_mean += lost;  // a sum until the end
      s.time_lost_max = std::max(s.time_lost_max, lost);
      if (!v.right[m] && priced_alike(request, v, m)) ++s.misses_priced_alike;
      std::vector<double> predicted;
      for (const auto& c : request.candidates) predicted.push_back(c.predicted_total[m]);
      if (request.candidates.size() >= 3) {
        if (const auto rho = spearman(predicted, measured)) {
          rho_sum[m] += *rho;
          ++s.correlated_requests;
        }
      }
      if (!time_model[m]) continue;
      for (const auto& c : request.candidates) {
        for (std::size_t i = 0; i < c.measured_steps_us.size(); ++i) {
          const double meas = c.measured_steps_us[i];
          const double pred = c.predicted_steps[m][i];
          if (meas > 0 && std::isfinite(pred)) step_errors[m].push_back(std::abs(pred - meas) / meas);
        }
        const double total = measured_total_us(c);
        if (total > 0 && std::isfinite(c.predicted_total[m])) {
          plan_errors[m].push_back(std::abs(c.predicted_total[m] - total) / total);
        }
      }
    }
  }
  for (std::size_t m = 0; m < models.size(); ++m) {
    scores[m].step_error = error_summary(step_errors[m]);
    scores[m].plan_error = error_summary(plan_errors[m]);
    if (scores[m].requests > 0) {
      // The sum's rounding may leave the mean of equal losses an ulp above them: a mean is never above its max.
      scores[m].time_lost_mean =
          std::min(scores[m].time_lost_mean / static_cast<double>(scores[m].requests), scores[m].time_lost_max);
    }
    if (scores[m].correlated_requests > 0) {
      scores[m].rank_correlation = rho_sum[m] / static_cast<double>(scores[m].correlated_requests);
    }
  }
  return scores;
}

namespace {
std::string errors_text(const std::optional<HoldoutError>& e, bool time_model) {
  if (!time_model) return "unitless";
  if (!e) return "-";
  return percent_text(e->median) + " / " + percent_text(e->p90) + " (" + std::to_string(e->points) + ")";
}
}  // namespace

nlohmann::ordered_json score_json(const ModelScore& s) {
  using ojson = nlohmann::ordered_json;
  const auto error = [](const std::optional<HoldoutError>& e) {
    return e ? ojson{{"median", e->median}, {"p90", e->p90}, {"points", e->points}} : ojson(nullptr);
  };
  return {{"model", s.model},
          {"time_model", s.time_model},
          {"requests", s.requests},
          {"right", s.right},
          {"exact", s.exact},
          {"share_right", s.requests > 0 ? static_cast<double>(s.right) / static_cast<double>(s.requests) : 0.0},
          {"time_lost", ojson{{"mean", s.time_lost_mean}, {"max", s.time_lost_max}}},
          {"step_error", error(s.step_error)},
          {"plan_error", error(s.plan_error)},
          {"rank_correlation", s.rank_correlation ? ojson(*s.rank_correlation) : ojson(nullptr)},
          {"correlated_requests", s.correlated_requests},
          {"misses_priced_alike", s.misses_priced_alike}};
}

std::vector<std::vector<std::string>> score_rows(const std::vector<ModelScore>& scores) {
  std::vector<std::vector<std::string>> rows{{"model", "right picks", "exact", "time lost mean / max",
                                              "step error med / p90 (steps)", "plan error med / p90 (plans)",
                                              "rank corr. (requests)"}};
  for (const auto& s : scores) {
    const double share = s.requests > 0 ? static_cast<double>(s.right) / static_cast<double>(s.requests) : 0;
    char corr[64] = "-";
    if (s.rank_correlation) {
      std::snprintf(corr, sizeof corr, "%.2f (%lld)", *s.rank_correlation, static_cast<long long>(s.correlated_requests));
    }
    rows.push_back({s.model, std::to_string(s.right) + "/" + std::to_string(s.requests) + " " + percent_text(share),
                    std::to_string(s.exact) + "/" + std::to_string(s.requests),
                    percent_text(s.time_lost_mean) + " / " + percent_text(s.time_lost_max),
                    errors_text(s.step_error, s.time_model), errors_text(s.plan_error, s.time_model), corr});
  }
  return rows;
}

std::string priced_alike_note(const std::vector<ModelScore>& scores) {
  // Misses the model could not have avoided by its prices: plans it priced alike.
  std::vector<std::string> alike;
  for (const auto& s : scores) {
    const std::int64_t wrong = s.requests - s.right;
    if (s.misses_priced_alike > 0) {
      alike.push_back(s.model + " " + std::to_string(s.misses_priced_alike) + " of " + std::to_string(wrong));
    }
  }
  if (alike.empty()) return {};
  std::string out = "wrong picks between plans the model priced alike (within " + percent_text(kPricedAlike) +
                    ": its prices did not separate them): ";
  for (std::size_t i = 0; i < alike.size(); ++i) out += (i > 0 ? ", " : "") + alike[i];
  return out + "\n";
}

}  // namespace meshloom::launcher
