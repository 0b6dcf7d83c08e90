// Shared helpers of the cost model tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "meshloom/error.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/state.hpp"
#include "support/plan_request.hpp"

namespace meshloom::cost_test {

// Runs f and returns the what() of the Error it throws ("<Kind>: <message>"), checking its kind; a failure
// when it throws nothing.
template <class F>
std::string error_of(F&& f, ErrorKind kind) {
  try {
    std::forward<F>(f)();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error was raised";
  return {};
}

// A request from text states (support/plan_request.hpp).
using meshloom::testing::request;

// The (2,2,2) mesh and (8,8,8) float32 tensor of planner-spec.md's worked examples.
inline PlanRequest request222(const std::string& src, const std::string& dst, PlannerKind planner = PlannerKind::Graph) {
  return request({2, 2, 2}, {8, 8, 8}, src, dst, planner);
}

inline StepCostInput step_input(Collective collective, std::size_t axis, const std::vector<std::int64_t>& mesh,
                                std::int64_t global_numel, std::int64_t source_shards, std::int64_t local_bytes,
                                std::int64_t itemsize = 4) {
  StepCostInput in;
  in.collective = collective;
  in.axis = axis;
  in.mesh_shape = &mesh;
  in.itemsize = itemsize;
  in.global_numel = global_numel;
  in.source_shards = source_shards;
  in.local_bytes = local_bytes;
  return in;
}

}  // namespace meshloom::cost_test
