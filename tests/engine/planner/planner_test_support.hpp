// Helpers shared by the planner tests of tests/engine/planner: request builders, the error checker and the
// collective counter. Header-only; a test file includes it and writes `using namespace meshloom::testing;`.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "meshloom/error.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/state.hpp"

namespace meshloom::testing {

using meshloom::Error;
using meshloom::ErrorKind;
using Shape = std::vector<std::int64_t>;
using Groups = std::vector<std::vector<std::size_t>>;

// A request from text states; the other fields keep their defaults (graph planner, newest variant, float32).
inline PlanRequest request(Shape mesh, Shape tensor, std::string_view src, std::string_view dst,
                           PlannerKind planner = PlannerKind::Graph) {
  PlanRequest r;
  r.mesh_shape = std::move(mesh);
  r.tensor_shape = std::move(tensor);
  r.src = parse_state(src);
  r.dst = parse_state(dst);
  r.planner = planner;
  return r;
}

// Collectives that communicate, by name: comm_counts without the local steps (chunk, replicate_to_partial,
// shard_to_partial), as PyTorch's CommDebugMode counts them.
inline std::map<std::string, int> comms(const Plan& plan) {
  std::map<std::string, int> out;
  for (const auto& [name, count] : comm_counts(plan)) {
    if (name == "chunk" || name == "replicate_to_partial" || name == "shard_to_partial") continue;
    out[name] += count;
  }
  return out;
}

inline int total_comms(const Plan& plan) {
  int total = 0;
  for (const auto& [name, count] : comms(plan)) total += count;
  return total;
}

// Runs f, which must throw a meshloom::Error of `kind` whose message holds every phrase.
template <class F>
void expect_error(F&& f, ErrorKind kind, std::initializer_list<std::string> phrases) {
  try {
    f();
    ADD_FAILURE() << "no error was raised";
  } catch (const Error& e) {
    EXPECT_EQ(meshloom::to_string(e.kind()), meshloom::to_string(kind)) << e.what();
    for (const auto& p : phrases) {
      EXPECT_NE(e.message().find(p), std::string::npos) << "'" << p << "' is not in: " << e.message();
    }
  }
}

}  // namespace meshloom::testing
