// Plan reports: a redistribution and its plans as Markdown, for a design review or a ticket. The numbers are
// the plans' own (steps, bytes, costs); the report only lays them out.
//
// Example (mesh (dp=2, tp=4), tensor w [1024, 1024] float32, S(0)R -> RR, one plan):
//   # Redistribution of `w`
//
//   Mesh `(dp=2, tp=4)`, tensor `[1024, 1024]` float32, from `S(0)R` to `RR`.
//
//   ## graph planner, comm model: 1 step, 12.34 µs
//
//   | Step | Axis | Collective | From → To | Bytes per rank | Cost (µs) |
//   |---:|---|---|---|---:|---:|
//   | 0 | dp | all_gather | `S(0)R` → `RR` | 2,097,152 | 12.34 |
//
// With two plans (before and after a recalibration, or graph against greedy) a comparison line follows:
//   **after** costs 8.00 µs against **before** 12.34 µs (0.65x).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "meshloom/dtype.hpp"
#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/state.hpp"

namespace meshloom {

struct ReportedPlan {
  std::string title;  // e.g. "graph planner, comm model", or "before" / "after"
  std::string unit;   // "µs" for the comm and calibrated models, "" for the fixed weights
  const Plan* plan = nullptr;
  std::string error;  // when there is no plan: why (the planner's message)
};

struct PlanReportInput {
  std::string tensor;
  std::vector<std::int64_t> tensor_shape;
  DType dtype = DType::Float32;
  State src;
  State dst;
  std::vector<std::string> axis_names;  // one per mesh axis
  std::vector<std::int64_t> mesh_shape;
  std::vector<ReportedPlan> plans;      // one section each, in order
};

// The report. Costs print with two decimals, bytes with thousands separators; a step merged on a flattened
// group names every axis ("dp_replicate+dp_shard"). With exactly two plans that both exist, a last line
// compares the second's total with the first's. ValueError when axis_names and mesh_shape differ in length.
[[nodiscard]] std::string plan_markdown(const PlanReportInput& input);

}  // namespace meshloom
