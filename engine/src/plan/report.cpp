#include "meshloom/plan/report.hpp"

#include <cstdio>
#include <string_view>

#include "meshloom/error.hpp"

namespace meshloom {

namespace {

std::string fixed2(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string grouped(std::int64_t v) {
  const bool negative = v < 0;
  std::string digits = std::to_string(negative ? -v : v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return negative ? "-" + out : out;
}

std::string ints(const std::vector<std::int64_t>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i > 0 ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

std::string with_unit(double cost, const std::string& unit) {
  return unit.empty() ? fixed2(cost) : fixed2(cost) + " " + unit;
}

void section(std::string& out, const PlanReportInput& in, const ReportedPlan& p) {
  if (p.plan == nullptr) {
    out += "## " + p.title + ": no plan\n\n" + p.error + "\n\n";
    return;
  }
  const Plan& plan = *p.plan;
  const std::size_t n = plan.steps.size();
  out += "## " + p.title + ": " + std::to_string(n) + (n == 1 ? " step, " : " steps, ") + with_unit(plan.cost, p.unit) +
         "\n\n";
  if (n == 0) {
    out += "The tensor is already where it must be.\n\n";
    return;
  }
  out += "| Step | Axis | Collective | From → To | Bytes per rank | Cost" + (p.unit.empty() ? "" : " (" + p.unit + ")") +
         " |\n|---:|---|---|---|---:|---:|\n";
  for (std::size_t i = 0; i < n; ++i) {
    const PlanStep& s = plan.steps[i];
    std::string axes;
    for (std::size_t k = 0; k < s.axes.size(); ++k) axes += (k > 0 ? "+" : "") + in.axis_names.at(s.axes[k]);
    out += "| " + std::to_string(i) + " | " + axes + " | " + std::string(to_string(s.collective)) + " | `" +
           to_string(s.before) + "` → `" + to_string(s.after) + "` | " + grouped(s.bytes) + " | " + fixed2(s.cost) +
           " |\n";
  }
  out += "\n";
}

}  // namespace

std::string plan_markdown(const PlanReportInput& in) {
  if (in.axis_names.size() != in.mesh_shape.size()) {
    raise(ErrorKind::ValueError, "plan report: " + std::to_string(in.axis_names.size()) + " axis names for a mesh of " +
                                     std::to_string(in.mesh_shape.size()) + " axes");
  }
  std::string mesh = "(";
  for (std::size_t a = 0; a < in.mesh_shape.size(); ++a) {
    mesh += (a > 0 ? ", " : "") + in.axis_names[a] + "=" + std::to_string(in.mesh_shape[a]);
  }
  mesh += ")";
  std::string out = "# Redistribution of `" + in.tensor + "`\n\nMesh `" + mesh + "`, tensor `" + ints(in.tensor_shape) +
                    "` " + std::string(to_string(in.dtype)) + ", from `" + to_string(in.src) + "` to `" +
                    to_string(in.dst) + "`.\n\n";
  for (const ReportedPlan& p : in.plans) section(out, in, p);
  if (in.plans.size() == 2 && in.plans[0].plan != nullptr && in.plans[1].plan != nullptr) {
    const ReportedPlan& a = in.plans[0];
    const ReportedPlan& b = in.plans[1];
    out += "**" + b.title + "** costs " + with_unit(b.plan->cost, b.unit) + " against **" + a.title + "** " +
           with_unit(a.plan->cost, a.unit);
    if (a.plan->cost > 0.0) out += " (" + fixed2(b.plan->cost / a.plan->cost) + "x)";
    out += ".\n";
  }
  return out;
}

}  // namespace meshloom
