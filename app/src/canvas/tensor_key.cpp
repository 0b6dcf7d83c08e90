#include "canvas/tensor_key.hpp"

#include <QFontMetricsF>
#include <QPainter>
#include <QPalette>

#include <algorithm>
#include <cmath>

#include "canvas/block_overlay_item.hpp"
#include "canvas/canvas_paint.hpp"

namespace meshloom::app {

namespace {
constexpr double kGridWidth = 220.0;   // pixels
constexpr double kGridHeight = 140.0;
constexpr double kPad = 6.0;

// The spans of one dim's blocks inside [from, to), in proportion to their extents.
void add_spans(const std::vector<std::int64_t>& bounds, double from, double to, std::vector<KeySpan>& out) {
  const double size = static_cast<double>(bounds.back());
  for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
    const double a = from + (to - from) * static_cast<double>(bounds[i]) / size;
    const double b = from + (to - from) * static_cast<double>(bounds[i + 1]) / size;
    out.push_back({a, b, bounds[i], bounds[i + 1]});
  }
}
}  // namespace

QString KeySpan::label() const { return QStringLiteral("%1:%2").arg(first).arg(end); }

TensorKeyLayout tensor_key_layout(const BlockGrid& grid) {
  TensorKeyLayout key;
  const std::size_t dims = grid.tensor_shape.size();
  if (dims == 0 || grid.boundaries.size() != dims) {
    key.rows.push_back({0.0, 1.0, 0, 1});
    return key;
  }
  const std::size_t first_across = dims == 1 ? 0 : 1;
  if (dims == 1) {
    key.rows.push_back({0.0, 1.0, 0, grid.tensor_shape[0]});
  } else {
    key.row_dim = 0;
    add_spans(grid.boundaries[0], 0.0, 1.0, key.rows);
  }
  // Across: each dim's spans nested inside every span of the dim before it.
  std::vector<KeySpan> outer{{0.0, 1.0, 0, 0}};
  for (std::size_t d = first_across; d < dims; ++d) {
    std::vector<KeySpan> level;
    for (const auto& o : outer) add_spans(grid.boundaries[d], o.from, o.to, level);
    key.column_dims.push_back(static_cast<int>(d));
    key.columns.push_back(level);
    outer = std::move(level);
  }
  return key;
}

TensorKey::TensorKey(QWidget* parent) : QWidget(parent) {
  setAutoFillBackground(true);
  setBackgroundRole(QPalette::ToolTipBase);
  setForegroundRole(QPalette::ToolTipText);
  setToolTip(tr("The tensor's blocks: each cell of the canvas holds the blocks drawn in the same colours"));
}

void TensorKey::set_grid(const BlockGrid& grid, const QString& title) {
  grid_ = grid;
  layout_ = tensor_key_layout(grid);
  title_ = title;
  has_grid_ = true;
  updateGeometry();
  adjustSize();
  update();
}

void TensorKey::clear() {
  has_grid_ = false;
  drawn_.clear();
  update();
}

QSize TensorKey::sizeHint() const {
  const QFontMetricsF fm(font());
  double label_w = fm.horizontalAdvance(QStringLiteral("dim 0"));
  for (const auto& r : layout_.rows) label_w = std::max(label_w, fm.horizontalAdvance(r.label()));
  const double w = kPad + label_w + kPad + kGridWidth + kPad;
  const double title_w = fm.horizontalAdvance(title_) + 2 * kPad;
  // The title, one header row per dim across, the grid, and the line naming the dim down.
  const double h = kPad + fm.height() * (2.0 + static_cast<double>(layout_.columns.size())) + kGridHeight + kPad;
  return {static_cast<int>(std::ceil(std::max(w, title_w))), static_cast<int>(std::ceil(h))};
}

void TensorKey::paintEvent(QPaintEvent* /*event*/) {
  drawn_.assign(1 + layout_.columns.size(), {});
  if (!has_grid_) return;
  QPainter painter(this);
  const QPalette& pal = palette();
  paint_tensor_key(painter, QRectF(rect()), grid_, layout_, title_, pal.color(QPalette::ToolTipText),
                   pal.color(QPalette::ToolTipBase), &drawn_);
}

void paint_tensor_key(QPainter& painter, const QRectF& area, const BlockGrid& grid, const TensorKeyLayout& layout,
                      const QString& title, const QColor& text, const QColor& back, std::vector<QStringList>* drawn) {
  std::vector<QStringList> labels(1 + layout.columns.size());
  const QFontMetricsF fm(painter.font());
  const double pad = fm.height() * 0.4;
  double label_w = fm.horizontalAdvance(QStringLiteral("dim 0"));
  for (const auto& r : layout.rows) label_w = std::max(label_w, fm.horizontalAdvance(r.label()));
  const double header_h = fm.height() * static_cast<double>(layout.columns.size());
  const QRectF grid_rect(area.left() + pad + label_w + pad, area.top() + pad + fm.height() + header_h,
                         std::max(4.0 * pad, area.width() - (pad + label_w + pad) - pad),
                         std::max(3.0 * pad, area.height() - (pad + fm.height() + header_h) - fm.height() - pad));
  painter.save();
  painter.setPen(text);
  painter.drawText(QPointF(area.left() + pad, area.top() + pad + fm.ascent()),
                   fm.elidedText(title, Qt::ElideRight, area.width() - 2 * pad));

  // Blocks in their colours.
  painter.setPen(Qt::NoPen);
  for (std::int64_t b = 0; b < grid.block_count; ++b) {
    const auto r = static_cast<std::size_t>(grid.row_of(b));
    const auto c = static_cast<std::size_t>(grid.col_of(b));
    if (r + 1 >= grid.row_edges.size() || c + 1 >= grid.col_edges.size()) continue;
    const QRectF block(grid_rect.left() + grid_rect.width() * grid.col_edges[c],
                       grid_rect.top() + grid_rect.height() * grid.row_edges[r],
                       grid_rect.width() * (grid.col_edges[c + 1] - grid.col_edges[c]),
                       grid_rect.height() * (grid.row_edges[r + 1] - grid.row_edges[r]));
    painter.setBrush(BlockOverlayItem::block_color(b, grid.block_count));
    painter.drawRect(block);
  }
  // Lines: every block edge thin, the edges of the outer spans across (dim 1 of a 3-D tensor) strong.
  painter.setBrush(Qt::NoBrush);
  painter.setPen(cosmetic(mix(back, text, 0.45), 1.0));
  for (const auto& r : layout.rows) {
    const double y = grid_rect.top() + grid_rect.height() * r.from;
    painter.drawLine(QPointF(grid_rect.left(), y), QPointF(grid_rect.right(), y));
  }
  if (!layout.columns.empty()) {
    for (const auto& sp : layout.columns.back()) {
      const double x = grid_rect.left() + grid_rect.width() * sp.from;
      painter.drawLine(QPointF(x, grid_rect.top()), QPointF(x, grid_rect.bottom()));
    }
  }
  if (layout.columns.size() > 1) {
    painter.setPen(cosmetic(mix(back, text, 0.85), 2.0));
    for (const auto& sp : layout.columns.front()) {
      if (sp.from <= 0.0) continue;  // the grid's own border
      const double x = grid_rect.left() + grid_rect.width() * sp.from;
      painter.drawLine(QPointF(x, grid_rect.top() - header_h), QPointF(x, grid_rect.bottom()));
    }
  }
  painter.setPen(cosmetic(text, 1.0));
  painter.drawRect(grid_rect);

  // Labels: each range where it fits (else left out, never overlapping), the dims' names in the corner column.
  painter.setPen(text);
  const auto place = [&](const QRectF& room, const QString& label, QStringList& out) {
    if (fm.horizontalAdvance(label) > room.width() + 0.5 || fm.height() > room.height() + 0.5) return;
    painter.drawText(room, Qt::AlignCenter, label);
    out << label;
  };
  for (const auto& r : layout.rows) {
    const QRectF room(area.left() + pad, grid_rect.top() + grid_rect.height() * r.from, label_w,
                      grid_rect.height() * (r.to - r.from));
    place(room, r.label(), labels[0]);
  }
  if (layout.row_dim >= 0) {
    painter.drawText(QPointF(area.left() + pad, grid_rect.bottom() + 0.3 * pad + fm.ascent()),
                     QStringLiteral("dim %1 \u2193 (rows)").arg(layout.row_dim));
  }
  for (std::size_t level = 0; level < layout.columns.size(); ++level) {
    const double y = area.top() + pad + fm.height() * static_cast<double>(1 + level);
    painter.drawText(QPointF(area.left() + pad, y + fm.ascent()), QStringLiteral("dim %1 \u2192").arg(layout.column_dims[level]));
    for (const auto& sp : layout.columns[level]) {
      const QRectF room(grid_rect.left() + grid_rect.width() * sp.from, y, grid_rect.width() * (sp.to - sp.from),
                        fm.height());
      place(room, sp.label(), labels[1 + level]);
    }
  }
  painter.restore();
  if (drawn) *drawn = std::move(labels);
}

}  // namespace meshloom::app
