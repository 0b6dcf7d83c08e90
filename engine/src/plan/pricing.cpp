// price_plan_steps: a plan's steps priced as the planner priced the path's edges, a merged step as its flattened
// group's collective where the model knows that (planner.hpp).
#include <cstddef>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "meshloom/error.hpp"
#include "meshloom/plan/planner.hpp"

namespace meshloom {

namespace {

// What the planner shows a model for the edge on `axis` out of `before` (planner.cpp's cost input).
StepCostInput edge_input(const PlanRequest& r, const State& before, std::size_t axis, Collective c,
                         const std::vector<std::int64_t>& coordinate) {
  StepCostInput in;
  in.collective = c;
  in.axis = axis;
  in.mesh_shape = &r.mesh_shape;
  in.itemsize = r.itemsize;
  in.global_numel = 1;
  for (const auto s : r.tensor_shape) in.global_numel *= s;
  std::int64_t local = 1;
  for (const auto s : local_shape(before, r.tensor_shape, r.mesh_shape, coordinate)) local *= s;
  for (std::size_t i = 0; i < before.ndim(); ++i) {
    if (before.placement(i).is_shard()) in.source_shards *= r.mesh_shape[i];
  }
  in.local_bytes = local * r.itemsize;
  return in;
}

}  // namespace

std::vector<double> price_plan_steps(const PlanRequest& request, const Plan& plan, const CostModel& model) {
  const std::vector<std::int64_t> coordinate =
      request.coordinate.empty() ? std::vector<std::int64_t>(request.mesh_shape.size(), 0) : request.coordinate;
  std::vector<double> costs;
  std::size_t edge = 0;  // index into plan.path of the state before the next edge
  for (const PlanStep& step : plan.steps) {
    double cost = 0;
    // The path's edges from step.before to step.after (one, or several for a merged step).
    while (edge + 1 < plan.path.size()) {
      const State& before = plan.path[edge];
      const State& after = plan.path[edge + 1];
      std::size_t axis = 0;
      for (std::size_t a = 0; a < before.ndim(); ++a) {
        if (!(before.placement(a) == after.placement(a))) axis = a;
      }
      if (const auto c = collective_for(before.placement(axis), after.placement(axis))) {
        cost += model.step_cost(edge_input(request, before, axis, *c, coordinate));
      }
      ++edge;
      if (after == step.after) break;
    }
    // A merged step runs as one collective on the flattened group: a model that knows that group's cost prices it.
    if (step.merged && step.axes.size() > 1) {
      if (const auto flat = model.flattened_step_cost(
              edge_input(request, step.before, step.axes.front(), step.collective, coordinate), step.axes)) {
        cost = *flat;
      }
    }
    costs.push_back(cost);
  }
  return costs;
}

std::string step_axes_text(const std::vector<std::size_t>& axes) {
  std::string text = axes.size() == 1 ? "axis " : "axes ";
  for (std::size_t i = 0; i < axes.size(); ++i) text += (i > 0 ? "," : "") + std::to_string(axes[i]);
  return text;
}

std::size_t cheapest_as_run(const PlanRequest& request, const std::vector<Plan>& plans, const CostModel& model) {
  if (plans.empty()) raise(ErrorKind::ValueError, "cheapest_as_run: no plans to choose from");
  std::size_t best = 0;
  double best_cost = std::numeric_limits<double>::infinity();
  std::vector<double> best_steps;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    std::vector<double> steps = price_plan_steps(request, plans[i], model);
    double cost = 0;
    for (const double c : steps) cost += c;
    if (i == 0 || cost < best_cost) {
      best = i;
      best_cost = cost;
      best_steps = std::move(steps);
    }
  }
  if (std::isfinite(best_cost)) return best;
  // Even the cheapest runs a step the model cannot price: a merged one, since the searches never take an edge of +inf.
  std::string step;
  for (std::size_t s = 0; s < best_steps.size() && step.empty(); ++s) {
    if (!std::isfinite(best_steps[s])) {
      step = std::string(to_string(plans[best].steps[s].collective)) + " on " + step_axes_text(plans[best].steps[s].axes);
    }
  }
  raise(ErrorKind::ValueError, "no plan from " + to_string(request.src) + " to " + to_string(request.dst) +
                                   " can be priced as it runs: the cheapest runs " + step +
                                   " as one collective, which the cost model cannot price (no curve of its group's "
                                   "shape)");
}

}  // namespace meshloom
