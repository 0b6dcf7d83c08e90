// Moving through a drawn mesh with the keyboard, and the rulers along the canvas edges: both pure functions of a
// MeshGeometry (no Qt widgets), so that tests can check their defining properties at every cell.
//
// Directions. Each axis of size > 1 runs across (its blocks in one row), down (one column), or both (a wrapped
// axis: block k in column k % columns, row k / columns). Seen from one direction, the mesh is an odometer whose
// digits are the axes running that way, innermost first: a plain axis is one digit of base shape[a], a wrapped
// axis gives a column digit (across) and a row digit (down).
//
// step_cell(g, cell, Right) is the nearest cell to the right on the same row of cells: the innermost digit + 1,
// carrying into the next digit out when it runs off its line (so the move crosses into the next block). With
// `outer`, the first digit is skipped: the move jumps one block of the next axis out. Left, Up and Down likewise.
// Worked example: shape (2, 4) with names (dp, tp) draws dp down and tp across; from rank 3 (dp 0, tp 3) Right
// carries into nothing (no axis further out runs across) and stays put; Down goes to rank 7 (dp 1, tp 3).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "canvas/mesh_geometry.hpp"

namespace meshloom::app {

enum class MeshDirection { Left, Right, Up, Down };

// The cell reached from `cell` one step in `direction` (one block of the next axis out with `outer`), or nullopt
// when the mesh ends that way (or the cell is out of range).
[[nodiscard]] std::optional<std::size_t> step_cell(const MeshGeometry& g, std::size_t cell, MeshDirection direction,
                                                   bool outer = false);

// The mesh coordinate of a cell (row-major over g.shape), and back.
[[nodiscard]] std::vector<std::int64_t> cell_coordinate(const MeshGeometry& g, std::size_t cell);

// One band of a ruler: the blocks of one axis along one edge, in item coordinates. A tick is one block: its extent
// along the edge [from, to) and its label. Along the top, a plain axis's tick k says k; a wrapped axis's column
// ticks say "+c" (the offset inside a row) and its row ticks along the left the first index of the row.
struct RulerTick {
  double from = 0.0;
  double to = 0.0;
  std::int64_t index = 0;  // the axis coordinate (a wrapped axis: the column c, or the row's first index)
};
struct RulerBand {
  std::size_t axis = 0;
  bool wrapped = false;
  std::vector<RulerTick> ticks;  // sorted by `from`, not overlapping
  std::int64_t per_group = 1;    // ticks in one group of the band: the axis' size, or a wrapped axis' rows or columns
};
struct Rulers {
  std::vector<RulerBand> top;   // axes running across, outermost first (the band nearest the mesh last)
  std::vector<RulerBand> left;  // axes running down, outermost first
};
[[nodiscard]] Rulers mesh_rulers(const MeshGeometry& g);

// A tick's text: "3", or "+3" for the column of a wrapped axis along the top.
[[nodiscard]] std::string tick_text(const RulerBand& band, const RulerTick& tick, bool along_top);

}  // namespace meshloom::app
