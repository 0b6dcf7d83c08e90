// Where each rank of an N-D mesh is drawn: 1-D a row, 2-D a grid, N-D nested grids in which the outer axes tile
// the inner grids, alternately across and down, with wider gaps at each outer level.
#pragma once

#include <QRectF>

#include <cstdint>
#include <vector>

namespace meshloom::app {

struct MeshGeometry {
  static constexpr double kCell = 40.0;  // side of one rank cell
  static constexpr double kGap = 4.0;    // gap between cells; each outer level doubles it

  std::vector<std::int64_t> shape;
  std::vector<QRectF> cells;  // one per rank position, row-major over the mesh coordinate
  QRectF bounds;
};

// Cells for a mesh of the given shape (outer -> inner). An empty shape gives one cell.
[[nodiscard]] MeshGeometry layout_mesh(const std::vector<std::int64_t>& shape);

}  // namespace meshloom::app
