// Merging consecutive steps on a flattened group of axes into one collective (PyTorch's newest
// _optimize_transform_infos). A post-pass over a planned path: the search never prices merged steps.
#pragma once

#include <cstdint>
#include <vector>

#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/planner.hpp"

namespace meshloom::detail {

// Scans the steps left to right. A run of consecutive all_gather, all_reduce or reduce_scatter steps with the
// first step's placements (or, for Partial sources, sum and avg mixed into the same target) becomes one merged
// step when: it has >= 2 steps; reduce_scatter axes come in ascending order and all_gather axes in descending
// order; the request lists exactly those axes as a flattened group; and, for reduce_scatter and all_gather, the
// scattered or gathered dim divides by the group's size on every rank. Otherwise every step of the run stays
// as it was.
[[nodiscard]] std::vector<PlanStep> merge_steps(std::vector<PlanStep> steps, const PlanRequest& request);

// Whether a dim of `extent`, split by the mesh axes `axes` in order (torch.chunk at every index of each), has an
// extent divisible by `group` on every rank: the condition for merging a reduce_scatter or all_gather of that dim
// on a group of that size (checked for every rank, since an uneven outer split gives ranks different extents).
[[nodiscard]] bool divides_on_every_rank(std::int64_t extent, const std::vector<std::int64_t>& mesh_shape,
                                         const std::vector<std::size_t>& axes, std::int64_t group);

}  // namespace meshloom::detail
