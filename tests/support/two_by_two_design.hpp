// A (2,2) mesh (dp, tp) of 4 ranks on one host with one tensor, w (1024 x 1024 float32) from S(0)S(1) to RR: the
// design the bundled local-2x2 calibration (resources/calibration) prices. Header-only; include as
// "support/two_by_two_design.hpp".
#pragma once

#include "meshloom/design/design.hpp"
#include "meshloom/plan/state.hpp"

namespace meshloom::testing {

inline Design two_by_two_design() {
  Design d;
  d.name = "two_by_two";
  d.world = 4;
  d.devices_per_host = 4;
  d.mesh.shape = {2, 2};
  d.mesh.names = {"dp", "tp"};
  d.tensors.push_back(DesignTensor{"w", {1024, 1024}, DType::Float32, parse_state("S(0)S(1)"), parse_state("RR")});
  return d;
}

}  // namespace meshloom::testing
