// Where each rank of an N-D mesh is drawn: 1-D a row, 2-D a grid, N-D nested grids in which the outer axes tile
// the inner grids, alternately across and down, with wider gaps at each outer level. An axis whose blocks in one
// row (or one column) would be far from a landscape 3:2, and which the next axis out would not bring back by
// tiling that line the other way, wraps instead: its blocks run across `columns` of them, then continue on the
// next line, like text, so a long axis forms a 2-D grid of its blocks (a 1-D mesh of 1,024 ranks a 32 x 32 grid;
// dp 128 of Llama 3 405B a grid of 16 x 8 blocks) rather than a strip. See layout_mesh for the rule.
//
// Levels: the innermost axis of size > 1 is level 0, the next axis of size > 1 out is level 1, and so on (a
// size-1 axis takes no turn: it has the level the next axis out would have, and tiles nothing). A wrapped axis
// runs both across and down, so it takes a whole pair of levels for itself ({0, 1}, {2, 3}, ...: the next pair
// when its own turn is the second of a pair) and has the second as its level. Levels 0 and 1 form the plain
// grids; every axis of level >= 2 of size > 1 is an *outer* axis: each of its blocks gets a frame, which the canvas
// draws as a labelled border ("dp 1"). Each pair of levels from 2 out has a wider gap than the pair inside it.
#pragma once

#include <QPointF>
#include <QRectF>
#include <QSizeF>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace meshloom::app {

struct MeshGeometry {
  static constexpr double kCell = 40.0;  // side of one rank cell
  static constexpr double kGap = 4.0;    // gap between cells; each outer level doubles it
  // The aspect (width / height) every block aims at, and how far (as a factor either way) one row or column of an
  // axis's blocks may stray from it before the axis wraps: a line that, fitted to a 3:2 view, fills less than an
  // eighth of it (wider than 12:1, or taller than 1:5.33).
  static constexpr double kAspect = 1.5;
  static constexpr double kWrapBeyond = 8.0;

  // One block of an outer axis: the exact extent of the sub-grid at `index` along `axis` (inside one block of
  // every axis further out). The canvas draws its border a quarter of gaps[axis] outside rect.
  struct Frame {
    QRectF rect;
    std::size_t axis = 0;
    std::int64_t index = 0;
  };

  std::vector<std::int64_t> shape;
  std::vector<QRectF> cells;  // one per rank position, row-major over the mesh coordinate
  QRectF bounds;
  // Frames of every outer axis, outermost axis first; within an axis, blocks in row-major order of the axes
  // [0, axis]. An axis of size s at depth d (s_0 * ... * s_axis blocks) has that many frames.
  std::vector<Frame> frames;

  // How the layout was built (what cell_at walks): per axis, the number of its blocks on one line (block k sits
  // in column k % columns and row k / columns: shape[a] for one row across, 1 for one column down, in between
  // for a wrapped axis), whether its blocks run across (one row, or wrapped rows) rather than down, the gap
  // between its blocks (across and down), and its level; blocks[a] is the extent of the axes [a, n) (blocks[n]
  // is one cell).
  std::vector<std::int64_t> columns;
  std::vector<bool> across;
  std::vector<double> gaps;
  std::vector<int> levels;
  std::vector<QSizeF> blocks;

  // True for an outer axis (level >= 2, size > 1): one that tiles inner grids and gets frames.
  [[nodiscard]] bool is_outer(std::size_t axis) const;
  // True for an axis whose blocks wrap: more than one row and more than one column of them.
  [[nodiscard]] bool wraps(std::size_t axis) const;
  // The number of lines (rows) of an axis's blocks: ceil(shape / columns); the last may be short.
  [[nodiscard]] std::int64_t rows(std::size_t axis) const;
  // The cell under `point`, or nullopt for a gap or a point outside. O(ndim): walks the axes outer to inner.
  [[nodiscard]] std::optional<std::size_t> cell_at(QPointF point) const;
};

// Cells for a mesh of the given shape (outer -> inner). An empty shape gives one cell.
[[nodiscard]] MeshGeometry layout_mesh(const std::vector<std::int64_t>& shape);

}  // namespace meshloom::app
