// Helpers shared by the planner tests of tests/engine/planner: request builders, the error checker and the
// collective counter. Header-only; a test file includes it and writes `using namespace meshloom::testing;`.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "meshloom/error.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/state.hpp"
#include "support/expect_error.hpp"
#include "support/plan_request.hpp"

namespace meshloom::testing {

using meshloom::Error;
using meshloom::ErrorKind;
using Shape = std::vector<std::int64_t>;
using Groups = std::vector<std::vector<std::size_t>>;

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

}  // namespace meshloom::testing
