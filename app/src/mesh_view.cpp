#include "mesh_view.hpp"

#include <QWheelEvent>

#include <cmath>

namespace meshloom::app {

MeshView::MeshView(QGraphicsScene* scene, QWidget* parent) : QGraphicsView(scene, parent) {
  setDragMode(QGraphicsView::ScrollHandDrag);
  setRenderHint(QPainter::Antialiasing, false);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
}

void MeshView::fit() {
  auto_fit_ = true;
  if (scene()) fitInView(scene()->sceneRect(), Qt::KeepAspectRatio);
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

}  // namespace meshloom::app
