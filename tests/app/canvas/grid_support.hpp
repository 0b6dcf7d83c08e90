// What the canvas tests share: the grid item of a mesh as the window builds it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "canvas/mesh_geometry.hpp"
#include "canvas/mesh_grid_item.hpp"
#include "meshloom/mesh/device_mesh.hpp"

namespace meshloom::app::testing {

// The grid of `mesh`: ranks by position, hosts of `per_host` consecutive ranks, the mesh's axis names. The caller
// owns the item (or hands it to a scene).
inline MeshGridItem* make_grid(const DeviceMesh& mesh, std::int64_t per_host) {
  const auto ranks = mesh.instances().values;
  std::vector<std::int64_t> hosts;
  hosts.reserve(ranks.size());
  for (auto r : ranks) hosts.push_back(r / per_host);
  return new MeshGridItem(layout_mesh(mesh.shape()), ranks, std::move(hosts),
                          mesh.names().value_or(std::vector<std::string>{}));
}

}  // namespace meshloom::app::testing
