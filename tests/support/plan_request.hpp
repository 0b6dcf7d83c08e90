// The planner and cost model tests' request builder. Header-only; include as "support/plan_request.hpp".
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/state.hpp"

namespace meshloom::testing {

// A request from text states; the other fields keep their defaults (graph planner, newest variant, float32).
inline PlanRequest request(std::vector<std::int64_t> mesh, std::vector<std::int64_t> tensor, std::string_view src,
                           std::string_view dst, PlannerKind planner = PlannerKind::Graph) {
  PlanRequest r;
  r.mesh_shape = std::move(mesh);
  r.tensor_shape = std::move(tensor);
  r.src = parse_state(src);
  r.dst = parse_state(dst);
  r.planner = planner;
  return r;
}

}  // namespace meshloom::testing
