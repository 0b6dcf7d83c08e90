// Slices of the design's mesh as the canvas shows them: pick axes (own or flattened), get every group of that
// slice and, for every canvas cell, the group that holds it. All mesh arithmetic is the engine's: the groups
// are DeviceMesh::slice(axes).instances() (one group per instance, ranks in the instance's row-major order,
// which for one axis is DeviceMesh::groups(axis)); this file only maps ranks to cells.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "meshloom/mesh/device_mesh.hpp"

namespace meshloom::app {

struct SliceGroups {
  std::vector<std::string> axes;                 // the picked axes, as given
  std::vector<std::vector<std::int64_t>> groups;  // every group's global ranks
  std::vector<std::int32_t> cell_group;           // per canvas cell (root position): its group, -1 for none
};

// The groups of root.slice(axes) and the group of every cell of root (cells are the root's rank-map
// positions, row-major). Throws meshloom::Error with PyTorch's message for an invalid pick (unknown, out of
// order, overlapping axes; no axes).
[[nodiscard]] SliceGroups slice_groups(const DeviceMesh& root, const std::vector<std::string>& axes);

}  // namespace meshloom::app
