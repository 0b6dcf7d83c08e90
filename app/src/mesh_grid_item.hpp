// MeshGridItem: one scene item that renders every rank cell of a mesh. It only renders the state it is given
// (ranks by position, their host, the cell geometry); at low zoom it draws plain cells, rank numbers appear as
// the view zooms in (level of detail), so 16,384 ranks stay fluid.
#pragma once

#include <QGraphicsItem>

#include <cstdint>
#include <vector>

#include "mesh_geometry.hpp"

namespace meshloom::app {

class MeshGridItem : public QGraphicsItem {
public:
  // ranks: the global rank at each cell (row-major over the mesh coordinate); hosts: the host of each cell.
  MeshGridItem(MeshGeometry geometry, std::vector<std::int64_t> ranks, std::vector<std::int64_t> hosts);

  [[nodiscard]] QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  [[nodiscard]] std::size_t cell_count() const noexcept { return geometry_.cells.size(); }
  [[nodiscard]] std::int64_t rank_at(std::size_t cell) const { return ranks_.at(cell); }

private:
  MeshGeometry geometry_;
  std::vector<std::int64_t> ranks_;
  std::vector<std::int64_t> hosts_;
};

}  // namespace meshloom::app
