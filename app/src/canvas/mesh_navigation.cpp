#include "canvas/mesh_navigation.hpp"

#include <algorithm>

namespace meshloom::app {

namespace {

// One digit of the odometer seen from a direction: a plain axis (base shape), or the column or row of a wrapped one.
enum class Part { Whole, Column, Row };
struct Digit {
  std::size_t axis;
  Part part;
};

bool runs_across(const MeshGeometry& g, std::size_t a) { return g.shape[a] > 1 && (g.wraps(a) || g.across[a]); }
bool runs_down(const MeshGeometry& g, std::size_t a) { return g.shape[a] > 1 && (g.wraps(a) || !g.across[a]); }

// The digits seen from across (horizontal) or down, innermost first.
std::vector<Digit> digits(const MeshGeometry& g, bool horizontal) {
  std::vector<Digit> out;
  for (std::size_t a = g.shape.size(); a-- > 0;) {
    if (horizontal ? !runs_across(g, a) : !runs_down(g, a)) continue;
    out.push_back({a, g.wraps(a) ? (horizontal ? Part::Column : Part::Row) : Part::Whole});
  }
  return out;
}

// Sets digit d of coordinate k (of axis d.axis) to `value` when that names a block of the axis; false otherwise.
bool set_digit(const MeshGeometry& g, const Digit& d, std::int64_t& k, std::int64_t value) {
  const std::int64_t cols = g.columns[d.axis];
  std::int64_t next = value;
  if (d.part == Part::Column) {
    if (value < 0 || value >= cols) return false;
    next = (k / cols) * cols + value;
  } else if (d.part == Part::Row) {
    if (value < 0) return false;
    next = value * cols + k % cols;
  }
  if (next < 0 || next >= g.shape[d.axis]) return false;
  k = next;
  return true;
}

std::int64_t digit_value(const MeshGeometry& g, const Digit& d, std::int64_t k) {
  const std::int64_t cols = g.columns[d.axis];
  return d.part == Part::Column ? k % cols : d.part == Part::Row ? k / cols : k;
}

// The largest value digit d can take with the other digits of k as they are.
std::int64_t last_value(const MeshGeometry& g, const Digit& d, std::int64_t k) {
  const std::int64_t size = g.shape[d.axis];
  const std::int64_t cols = g.columns[d.axis];
  if (d.part == Part::Column) return std::min(cols - 1, size - 1 - (k / cols) * cols);
  if (d.part == Part::Row) return (size - 1 - k % cols) / cols;
  return size - 1;
}

}  // namespace

std::vector<std::int64_t> cell_coordinate(const MeshGeometry& g, std::size_t cell) {
  std::vector<std::int64_t> coord(g.shape.size(), 0);
  auto rest = static_cast<std::int64_t>(cell);
  for (std::size_t a = g.shape.size(); a-- > 0;) {
    const std::int64_t s = std::max<std::int64_t>(g.shape[a], 1);
    coord[a] = rest % s;
    rest /= s;
  }
  return coord;
}

std::optional<std::size_t> step_cell(const MeshGeometry& g, std::size_t cell, MeshDirection direction, bool outer) {
  if (cell >= g.cells.size() || g.columns.size() != g.shape.size()) return std::nullopt;
  const bool horizontal = direction == MeshDirection::Left || direction == MeshDirection::Right;
  const bool forward = direction == MeshDirection::Right || direction == MeshDirection::Down;
  std::vector<Digit> order = digits(g, horizontal);
  if (outer && !order.empty()) order.erase(order.begin());
  std::vector<std::int64_t> coord = cell_coordinate(g, cell);
  for (const Digit& d : order) {
    std::int64_t& k = coord[d.axis];
    const std::int64_t value = digit_value(g, d, k);
    if (set_digit(g, d, k, forward ? value + 1 : value - 1)) {
      std::size_t index = 0;
      for (std::size_t a = 0; a < g.shape.size(); ++a) {
        index = index * static_cast<std::size_t>(g.shape[a]) + static_cast<std::size_t>(coord[a]);
      }
      return index;
    }
    // Off the end of its line: the digit starts over at the other end, and the next digit out moves.
    set_digit(g, d, k, forward ? 0 : last_value(g, d, k));
  }
  return std::nullopt;
}

Rulers mesh_rulers(const MeshGeometry& g) {
  Rulers rulers;
  const std::size_t n = g.shape.size();
  if (g.blocks.size() != n + 1 || g.columns.size() != n) return rulers;
  for (const bool horizontal : {true, false}) {
    // Offsets (from the mesh's left or top) of every block of the axes seen so far that run this way.
    std::vector<double> offsets{0.0};
    for (std::size_t a = 0; a < n; ++a) {
      if (horizontal ? !runs_across(g, a) : !runs_down(g, a)) continue;
      const bool wrapped = g.wraps(a);
      const std::int64_t count = wrapped ? (horizontal ? g.columns[a] : g.rows(a)) : g.shape[a];
      const double extent = horizontal ? g.blocks[a + 1].width() : g.blocks[a + 1].height();
      const double pitch = extent + g.gaps[a];
      const double origin = horizontal ? g.bounds.left() : g.bounds.top();
      RulerBand band;
      band.axis = a;
      band.wrapped = wrapped;
      band.per_group = count;
      std::vector<double> next;
      next.reserve(offsets.size() * static_cast<std::size_t>(count));
      for (const double o : offsets) {
        for (std::int64_t c = 0; c < count; ++c) {
          const double from = o + static_cast<double>(c) * pitch;
          next.push_back(from);
          const std::int64_t index = wrapped && !horizontal ? c * g.columns[a] : c;
          band.ticks.push_back({origin + from, origin + from + extent, index});
        }
      }
      std::sort(band.ticks.begin(), band.ticks.end(),
                [](const RulerTick& x, const RulerTick& y) { return x.from < y.from; });
      offsets = std::move(next);
      (horizontal ? rulers.top : rulers.left).push_back(std::move(band));
    }
  }
  return rulers;
}

std::string tick_text(const RulerBand& band, const RulerTick& tick, bool along_top) {
  return (band.wrapped && along_top ? "+" : "") + std::to_string(tick.index);
}

}  // namespace meshloom::app
