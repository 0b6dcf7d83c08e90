#include "canvas/mesh_geometry.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>

namespace meshloom::app {

namespace {

// The gap between the blocks of an axis of the given level: kGap inside the plain grid (levels 0 and 1), then
// four times that for levels 2 and 3, and twice the pair inside for every pair further out.
double gap_of(int level) {
  return level < 2 ? MeshGeometry::kGap : std::ldexp(MeshGeometry::kGap, level / 2 + 1);
}

// The extent of `count` blocks of size `in`, `columns` of them to a line, `gap` apart both ways.
QSizeF extent(QSizeF in, std::int64_t count, std::int64_t columns, double gap) {
  const std::int64_t rows = (count + columns - 1) / columns;
  const auto c = static_cast<double>(columns);
  const auto r = static_cast<double>(rows);
  return {c * in.width() + (c - 1.0) * gap, r * in.height() + (r - 1.0) * gap};
}

// How far an extent's aspect is from kAspect, as a factor >= 1 either way (1: exactly 3:2).
double off_aspect(QSizeF size) {
  const double aspect = size.width() / size.height();
  return std::max(aspect / MeshGeometry::kAspect, MeshGeometry::kAspect / aspect);
}

}  // namespace

bool MeshGeometry::is_outer(std::size_t axis) const {
  return axis < shape.size() && shape[axis] > 1 && axis < levels.size() && levels[axis] >= 2;
}

bool MeshGeometry::wraps(std::size_t axis) const {
  return axis < shape.size() && axis < columns.size() && columns[axis] > 1 && columns[axis] < shape[axis];
}

std::int64_t MeshGeometry::rows(std::size_t axis) const {
  if (axis >= shape.size() || axis >= columns.size() || columns[axis] < 1) return 1;
  return (shape[axis] + columns[axis] - 1) / columns[axis];
}

std::optional<std::size_t> MeshGeometry::cell_at(QPointF point) const {
  const std::size_t n = shape.size();
  if (cells.empty() || blocks.size() != n + 1 || columns.size() != n || gaps.size() != n) return std::nullopt;
  double x = point.x() - bounds.left();
  double y = point.y() - bounds.top();
  std::size_t index = 0;
  // Inside the block of the axes [a, n): find the block of axis a (its column and row on the grid of its
  // blocks), then go on inside it.
  for (std::size_t a = 0; a < n; ++a) {
    if (x < 0.0 || y < 0.0) return std::nullopt;
    const QSizeF& inner = blocks[a + 1];
    const double pitch_x = inner.width() + gaps[a];
    const double pitch_y = inner.height() + gaps[a];
    const double col = std::floor(x / pitch_x);
    const double row = std::floor(y / pitch_y);
    const auto cols = static_cast<double>(columns[a]);
    if (col >= cols || row >= static_cast<double>(rows(a))) return std::nullopt;
    const double k = row * cols + col;
    if (k >= static_cast<double>(shape[a])) return std::nullopt;  // past the end of a short last line
    x -= col * pitch_x;
    y -= row * pitch_y;
    if (x >= inner.width() || y >= inner.height()) return std::nullopt;  // in the gap after block k
    index = index * static_cast<std::size_t>(shape[a]) + static_cast<std::size_t>(k);
  }
  if (x < 0.0 || y < 0.0 || x >= kCell || y >= kCell) return std::nullopt;
  return index;
}

MeshGeometry layout_mesh(const std::vector<std::int64_t>& shape) {
  MeshGeometry g;
  g.shape = shape;
  const std::size_t n = shape.size();
  // Axis a tiles the block of axes (a, n): the innermost axis runs across, and each outer axis runs across or
  // down, whichever keeps the block closer to a landscape 3:2 (so the inner two form a grid and outer ones
  // alternate); each outer pair of levels widens the gap so the nesting reads at a glance.
  //
  // When that one line of blocks is more than kWrapBeyond off 3:2, and the next axis out (of size > 1), laid in
  // one line the other way, would not bring it within that, the axis wraps: of every number of columns c
  // (1 < c < size; rows = ceil(size / c)), the one whose block is closest to 3:2, unless a c that divides the
  // size (a full grid) is within a factor 1.5 of that, when the best such c. A wrapped axis takes a pair of
  // levels (it runs both ways), so it is outer (framed) unless it is the innermost, and its gap is wider than
  // that of every axis inside it, in both directions.
  g.columns.assign(n, 1);
  g.gaps.assign(n, 0.0);
  g.across.assign(n, true);
  g.levels.assign(n, 0);
  g.blocks.assign(n + 1, QSizeF(MeshGeometry::kCell, MeshGeometry::kCell));  // blocks[a]: extent of axes [a, n)
  int seen = 0;  // turns taken so far by axes of size > 1: a size-1 axis takes none, a wrapped axis two
  for (std::size_t a = n; a-- > 0;) {
    const QSizeF in = g.blocks[a + 1];
    const std::int64_t count = std::max<std::int64_t>(shape[a], 1);
    const int level = seen;
    g.levels[a] = level;
    g.across[a] = level == 0 || in.width() <= MeshGeometry::kAspect * in.height();
    g.gaps[a] = gap_of(level);
    g.columns[a] = g.across[a] ? count : 1;
    g.blocks[a] = extent(in, count, g.columns[a], g.gaps[a]);
    if (count <= 1) continue;
    ++seen;
    const double line = off_aspect(g.blocks[a]);
    if (line <= MeshGeometry::kWrapBeyond || count < 3) continue;
    // A line the next axis out (of size > 1) brings back near 3:2 by tiling it the other way is the first half
    // of a grid, as in (16, 16, 8, 8): dp 16 across, then pp 16 down; it stays a line.
    std::optional<std::size_t> next;
    for (std::size_t b = a; b-- > 0;) {
      if (shape[b] > 1) {
        next = b;
        break;
      }
    }
    if (next) {
      const QSizeF& line_block = g.blocks[a];
      const std::int64_t next_count = shape[*next];
      const bool next_across = line_block.width() <= MeshGeometry::kAspect * line_block.height();
      const QSizeF both = extent(line_block, next_count, next_across ? next_count : 1, gap_of(seen));
      if (off_aspect(both) <= MeshGeometry::kWrapBeyond) continue;
    }

    const int pair = level + level % 2;  // the first pair of levels at or after this turn
    const double gap = gap_of(pair + 1);
    std::int64_t best = 0;
    double best_off = line;
    std::int64_t best_full = 0;
    double best_full_off = 0.0;
    for (std::int64_t c = 2; c < count; ++c) {
      const double off = off_aspect(extent(in, count, c, gap));
      if (off < best_off) {
        best = c;
        best_off = off;
      }
      if (count % c == 0 && (best_full == 0 || off < best_full_off)) {
        best_full = c;
        best_full_off = off;
      }
    }
    if (best_full != 0 && best_full_off < line && best_full_off <= 1.5 * best_off) best = best_full;
    if (best == 0) continue;  // no wrapping beats the line
    g.levels[a] = pair + 1;
    g.across[a] = true;
    g.gaps[a] = gap;
    g.columns[a] = best;
    g.blocks[a] = extent(in, count, best, gap);
    seen = pair + 2;
  }
  // The offset of block k of axis a inside its parent block: column k % columns, row k / columns.
  const auto step = [&g](std::size_t a, std::int64_t k) {
    const std::int64_t cols = g.columns[a];
    return QPointF(static_cast<double>(k % cols) * (g.blocks[a + 1].width() + g.gaps[a]),
                   static_cast<double>(k / cols) * (g.blocks[a + 1].height() + g.gaps[a]));
  };
  std::int64_t total = 1;
  for (auto s : shape) total *= s;
  g.cells.reserve(static_cast<std::size_t>(std::max<std::int64_t>(total, 0)));
  std::vector<std::int64_t> coord(n, 0);
  for (std::int64_t i = 0; i < total; ++i) {
    QPointF at(0.0, 0.0);
    for (std::size_t a = 0; a < n; ++a) at += step(a, coord[a]);
    g.cells.emplace_back(at, QSizeF(MeshGeometry::kCell, MeshGeometry::kCell));
    for (std::size_t a = n; a-- > 0;) {
      if (++coord[a] < shape[a]) break;
      coord[a] = 0;
    }
  }
  g.bounds = QRectF(QPointF(0.0, 0.0), g.blocks[0]);

  // Frames: for each outer axis, every block of the axes [0, a] (row-major), sized as the axes (a, n).
  for (std::size_t a = 0; a < n; ++a) {
    if (!g.is_outer(a)) continue;
    std::vector<std::int64_t> prefix(a + 1, 0);
    std::int64_t blocks = 1;
    for (std::size_t b = 0; b <= a; ++b) blocks *= shape[b];
    for (std::int64_t k = 0; k < blocks; ++k) {
      QPointF at(0.0, 0.0);
      for (std::size_t b = 0; b <= a; ++b) at += step(b, prefix[b]);
      g.frames.push_back({QRectF(at, g.blocks[a + 1]), a, prefix[a]});
      for (std::size_t b = a + 1; b-- > 0;) {
        if (++prefix[b] < shape[b]) break;
        prefix[b] = 0;
      }
    }
  }
  return g;
}

}  // namespace meshloom::app
