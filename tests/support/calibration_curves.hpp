// Calibrations with curves by group shape, written out in a test: one curve from its points, and the frame of a
// calibration of four ranks on one host measured on a (2,2) mesh. Header-only; include as
// "support/calibration_curves.hpp".
#pragma once

#include <utility>
#include <vector>

#include "meshloom/plan/cost_model.hpp"

namespace meshloom::testing {

// A piecewise curve of `collective` on groups of `shape` through `points` (nccl-tests' size in bytes, time in us).
inline GroupCurve piecewise(const char* collective, GroupShape shape, std::vector<CurvePoint> points) {
  GroupCurve c;
  c.collective = collective;
  c.shape = shape;
  c.model = CurveModel::Piecewise;
  c.points = std::move(points);
  return c;
}

// Four ranks on one host, measured single-shot over MPI on a (2,2) mesh "dp" x "tp": groups of 2 and the flattened
// group of 4 ({2, 1, 2} and {4, 1, 4}). No curves: a test adds its own.
inline Calibration four_ranks_on_one_host() {
  Calibration c;
  c.backend = "mpi";
  c.timing = "single_shot";
  c.world = 4;
  c.mesh_shape = {2, 2};
  c.mesh_names = {"dp", "tp"};
  c.rank_hosts = {0, 0, 0, 0};
  return c;
}

}  // namespace meshloom::testing
