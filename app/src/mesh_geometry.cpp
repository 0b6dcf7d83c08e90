#include "mesh_geometry.hpp"

#include <cstddef>

namespace meshloom::app {

namespace {
struct Block {
  double width = MeshGeometry::kCell;
  double height = MeshGeometry::kCell;
};
}  // namespace

MeshGeometry layout_mesh(const std::vector<std::int64_t>& shape) {
  MeshGeometry g;
  g.shape = shape;
  const std::size_t n = shape.size();
  // Axis a tiles the block of axes (a, n): the innermost axis runs across, and each outer axis runs across or
  // down, whichever keeps the block closer to a landscape 3:2 (so the inner two form a grid and outer ones
  // alternate); each outer pair of levels doubles the gap so the nesting reads at a glance.
  std::vector<double> gaps(n, 0.0);
  std::vector<bool> across(n, true);
  std::vector<Block> block(n + 1);  // block[a]: extent of the axes [a, n)
  std::size_t seen = 0;  // axes of size > 1 placed so far: a size-1 axis takes no turn
  for (std::size_t a = n; a-- > 0;) {
    const std::size_t level = seen;
    if (shape[a] > 1) ++seen;
    across[a] = level == 0 || block[a + 1].width <= 1.5 * block[a + 1].height;
    gaps[a] = level < 2 ? MeshGeometry::kGap : MeshGeometry::kGap * static_cast<double>(1U << (level / 2 + 1));
    const auto count = static_cast<double>(shape[a]);
    const Block& in = block[a + 1];
    block[a] = across[a] ? Block{count * in.width + (count - 1) * gaps[a], in.height}
                         : Block{in.width, count * in.height + (count - 1) * gaps[a]};
  }
  std::int64_t total = 1;
  for (auto s : shape) total *= s;
  g.cells.reserve(static_cast<std::size_t>(total));
  std::vector<std::int64_t> coord(n, 0);
  for (std::int64_t i = 0; i < total; ++i) {
    double x = 0.0;
    double y = 0.0;
    for (std::size_t a = 0; a < n; ++a) {
      const auto c = static_cast<double>(coord[a]);
      if (across[a]) {
        x += c * (block[a + 1].width + gaps[a]);
      } else {
        y += c * (block[a + 1].height + gaps[a]);
      }
    }
    g.cells.emplace_back(x, y, MeshGeometry::kCell, MeshGeometry::kCell);
    for (std::size_t a = n; a-- > 0;) {
      if (++coord[a] < shape[a]) break;
      coord[a] = 0;
    }
  }
  g.bounds = QRectF(0, 0, block[0].width, block[0].height);
  return g;
}

}  // namespace meshloom::app
