#include "plan/merge.hpp"

#include <algorithm>
#include <iterator>
#include <set>

namespace meshloom::detail {

namespace {

bool mergeable(Collective c) {
  return c == Collective::AllGather || c == Collective::AllReduce || c == Collective::ReduceScatter;
}

bool sum_or_avg(const Placement& p) { return p.is_partial() && (p.op() == ReduceOp::Sum || p.op() == ReduceOp::Avg); }

// Whether `step` may join a run started by `first`.
bool joins(const PlanStep& first, const PlanStep& step) {
  if (step.collective != first.collective || step.to != first.to) return false;
  return step.from == first.from || (sum_or_avg(first.from) && sum_or_avg(step.from));
}

// The dim whose extent picks the step with the largest logical shape: the target dim of a reduce_scatter, the
// source dim of an all_gather.
std::int64_t affected_dim(const PlanStep& step) {
  if (step.collective == Collective::ReduceScatter) return step.to.dim();
  if (step.collective == Collective::AllGather) return step.from.dim();
  return -1;
}

bool can_merge(const std::vector<PlanStep>& run, const PlanRequest& r) {
  if (run.size() < 2) return false;
  std::vector<std::size_t> axes;
  for (const auto& s : run) axes.push_back(s.axes.front());
  std::vector<std::size_t> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  const Collective c = run.front().collective;
  if (c == Collective::ReduceScatter && axes != sorted) return false;
  if (c == Collective::AllGather && !std::equal(axes.begin(), axes.end(), sorted.rbegin(), sorted.rend())) return false;
  if (std::find(r.flattened.begin(), r.flattened.end(), sorted) == r.flattened.end()) return false;
  if (c == Collective::AllReduce) return true;
  // Every rank's extent of the scattered (or gathered) dim must divide evenly over the group, so the flattened
  // collective's pieces are the nested steps' pieces. The extent varies by rank when an outer split of that
  // dim is uneven, so it is checked for every rank, not only at the request's coordinate. (PyTorch checks one
  // rank for reduce_scatter and nothing for all_gather, whose padded form then corrupts uneven pieces.)
  const std::int64_t dim = affected_dim(run.front());
  std::int64_t group = 1;
  for (auto a : sorted) group *= r.mesh_shape[a];
  std::vector<std::size_t> outside;  // the axes splitting the dim before the run, outside the group
  for (const std::size_t axis : run.front().before.shard_axes(dim)) {
    if (std::find(sorted.begin(), sorted.end(), axis) == sorted.end()) outside.push_back(axis);
  }
  return divides_on_every_rank(r.tensor_shape[static_cast<std::size_t>(dim)], r.mesh_shape, outside, group);
}

PlanStep merged(const std::vector<PlanStep>& run, const PlanRequest& r) {
  PlanStep m = run.front();
  m.axes.clear();
  for (const auto& s : run) m.axes.push_back(s.axes.front());
  std::sort(m.axes.begin(), m.axes.end());
  m.after = run.back().after;
  m.merged = true;
  m.cost = 0.0;
  for (const auto& s : run) m.cost += s.cost;
  // Partial avg axes reduce as a sum, divided by their sizes afterwards (PyTorch's avg_scale): the merged step
  // then reads P(sum), as it does where sum and avg mix (P(sum)P(avg) on (2, 1) read P(avg), the first step's,
  // where a sum runs: PyTorch labels it so, and averages over the group).
  const bool scaled_avg = std::any_of(run.begin(), run.end(), [&r](const PlanStep& s) {
    return s.from.is_partial() && s.from.op() == ReduceOp::Avg && r.mesh_shape[s.axes.front()] > 1;
  });
  const bool sums = std::any_of(run.begin(), run.end(), [](const PlanStep& s) {
    return s.from.is_partial() && s.from.op() == ReduceOp::Sum;
  });
  if (scaled_avg || sums) m.from = Placement::partial(ReduceOp::Sum);
  const std::int64_t dim = affected_dim(run.front());
  if (dim >= 0) {
    const auto d = static_cast<std::size_t>(dim);
    const auto largest = std::max_element(run.begin(), run.end(), [d](const PlanStep& a, const PlanStep& b) {
      return a.logical_shape[d] < b.logical_shape[d];
    });
    m.logical_shape = largest->logical_shape;
  }
  return m;
}

}  // namespace

bool divides_on_every_rank(std::int64_t extent, const std::vector<std::int64_t>& mesh_shape,
                           const std::vector<std::size_t>& axes, std::int64_t group) {
  std::set<std::int64_t> extents{extent};
  for (const std::size_t axis : axes) {
    std::set<std::int64_t> split;
    for (const std::int64_t e : extents) {
      for (std::int64_t i = 0; i < mesh_shape[axis]; ++i) split.insert(chunk_extent(e, mesh_shape[axis], i).size);
    }
    extents = std::move(split);
  }
  return std::all_of(extents.begin(), extents.end(), [group](std::int64_t e) { return e % group == 0; });
}

std::vector<PlanStep> merge_steps(std::vector<PlanStep> steps, const PlanRequest& request) {
  if (steps.size() < 2 || request.flattened.empty()) return steps;
  std::vector<PlanStep> out;
  std::size_t i = 0;
  while (i < steps.size()) {
    if (!mergeable(steps[i].collective)) {
      out.push_back(std::move(steps[i++]));
      continue;
    }
    std::size_t j = i + 1;
    while (j < steps.size() && joins(steps[i], steps[j])) ++j;
    std::vector<PlanStep> run(std::make_move_iterator(steps.begin() + static_cast<std::ptrdiff_t>(i)),
                              std::make_move_iterator(steps.begin() + static_cast<std::ptrdiff_t>(j)));
    if (can_merge(run, request)) {
      out.push_back(merged(run, request));
    } else {
      for (auto& s : run) out.push_back(std::move(s));
    }
    i = j;
  }
  return out;
}

}  // namespace meshloom::detail
