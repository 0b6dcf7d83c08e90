#include "mesh_grid_item.hpp"

#include <QPainter>
#include <QPalette>
#include <QStyleOptionGraphicsItem>
#include <QWidget>

#include <utility>

namespace meshloom::app {

MeshGridItem::MeshGridItem(MeshGeometry geometry, std::vector<std::int64_t> ranks, std::vector<std::int64_t> hosts)
    : geometry_(std::move(geometry)), ranks_(std::move(ranks)), hosts_(std::move(hosts)) {
  setFlag(QGraphicsItem::ItemUsesExtendedStyleOption);
}

QRectF MeshGridItem::boundingRect() const { return geometry_.bounds.adjusted(-2, -2, 2, 2); }

void MeshGridItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) {
  const QPalette palette = widget ? widget->palette() : QPalette();
  const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
  const QRectF exposed = option->exposedRect;
  const QColor even = palette.color(QPalette::Base);
  const QColor odd = palette.color(QPalette::AlternateBase).darker(104);
  const bool numbers = lod * MeshGeometry::kCell >= 18.0;
  const bool borders = lod * MeshGeometry::kCell >= 6.0;
  painter->setPen(borders ? QPen(palette.color(QPalette::Mid), 0) : Qt::NoPen);
  QFont font = painter->font();
  font.setPointSizeF(9.0);
  painter->setFont(font);
  for (std::size_t i = 0; i < geometry_.cells.size(); ++i) {
    const QRectF& cell = geometry_.cells[i];
    if (!exposed.intersects(cell)) continue;
    painter->setBrush(hosts_[i] % 2 == 0 ? even : odd);
    painter->drawRect(cell);
    if (numbers) {
      painter->setPen(palette.color(QPalette::Text));
      painter->drawText(cell, Qt::AlignCenter, QString::number(ranks_[i]));
      painter->setPen(borders ? QPen(palette.color(QPalette::Mid), 0) : Qt::NoPen);
    }
  }
}

}  // namespace meshloom::app
