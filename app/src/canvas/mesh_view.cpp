#include "canvas/mesh_view.hpp"

#include <QApplication>
#include <QGraphicsScene>
#include <QMouseEvent>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

#include "canvas/mesh_grid_item.hpp"

namespace meshloom::app {

namespace {
constexpr double kMaxFitScale = 4.0;  // a tiny mesh is not blown up past this when fitted
}  // namespace

MeshView::MeshView(QGraphicsScene* scene, QWidget* parent) : QGraphicsView(scene, parent) {
  setDragMode(QGraphicsView::ScrollHandDrag);
  setRenderHint(QPainter::Antialiasing, false);
  setRenderHint(QPainter::TextAntialiasing, true);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
  setOptimizationFlag(QGraphicsView::DontSavePainterState, true);
  viewport()->setMouseTracking(true);
}

void MeshView::set_grid(MeshGridItem* grid) {
  grid_ = grid;
  hovered_.reset();
  dragged_ = false;
}

void MeshView::fit() {
  auto_fit_ = true;
  if (!scene()) return;
  fitInView(scene()->sceneRect(), Qt::KeepAspectRatio);
  const double scale = transform().m11();
  if (scale > kMaxFitScale) {
    setTransform(QTransform::fromScale(kMaxFitScale, kMaxFitScale));
    centerOn(scene()->sceneRect().center());
  }
}

void MeshView::zoom(double factor) {
  auto_fit_ = false;
  scale(factor, factor);
}

void MeshView::resizeEvent(QResizeEvent* event) {
  QGraphicsView::resizeEvent(event);
  if (auto_fit_) fit();
}

void MeshView::wheelEvent(QWheelEvent* event) {
  const double steps = event->angleDelta().y() / 120.0;
  if (steps == 0.0) return QGraphicsView::wheelEvent(event);
  zoom(std::pow(1.2, steps));
  event->accept();
}

MeshGridItem* MeshView::live_grid() const {
  // The grid must still be an item of this view's scene (guards against an owner that deleted the item
  // without calling set_grid(nullptr)); only pointers are compared, nothing is dereferenced before that.
  if (!grid_ || !scene()) return nullptr;
  const QList<QGraphicsItem*> items = scene()->items();
  const auto* as_item = static_cast<const QGraphicsItem*>(grid_);
  return std::find(items.cbegin(), items.cend(), as_item) != items.cend() ? grid_ : nullptr;
}

std::optional<std::size_t> MeshView::cell_under(QPoint viewport_pos) const {
  MeshGridItem* grid = live_grid();
  if (!grid) return std::nullopt;
  return grid->cell_at(grid->mapFromScene(mapToScene(viewport_pos)));
}

void MeshView::update_hover(std::optional<std::size_t> cell) {
  if (cell == hovered_) return;
  hovered_ = cell;
  if (MeshGridItem* grid = live_grid()) grid->set_hovered_cell(cell);
  emit cell_hovered(cell);
}

void MeshView::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton) {
    press_pos_ = event->position().toPoint();
    dragged_ = false;
  }
  QGraphicsView::mousePressEvent(event);
}

void MeshView::mouseMoveEvent(QMouseEvent* event) {
  const QPoint pos = event->position().toPoint();
  if ((event->buttons() & Qt::LeftButton) != 0 &&
      (pos - press_pos_).manhattanLength() >= QApplication::startDragDistance()) {
    dragged_ = true;
  }
  QGraphicsView::mouseMoveEvent(event);
  update_hover(cell_under(pos));
}

void MeshView::mouseReleaseEvent(QMouseEvent* event) {
  QGraphicsView::mouseReleaseEvent(event);
  if (event->button() != Qt::LeftButton) return;
  const QPoint pos = event->position().toPoint();
  const bool click = !dragged_ && (pos - press_pos_).manhattanLength() < QApplication::startDragDistance();
  dragged_ = false;
  if (click) emit cell_clicked(cell_under(pos));
}

void MeshView::leaveEvent(QEvent* event) {
  QGraphicsView::leaveEvent(event);
  update_hover(std::nullopt);
}

bool MeshView::viewportEvent(QEvent* event) {
  if (event->type() == QEvent::Leave) update_hover(std::nullopt);
  return QGraphicsView::viewportEvent(event);
}

}  // namespace meshloom::app
