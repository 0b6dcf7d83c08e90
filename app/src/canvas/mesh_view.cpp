#include "canvas/mesh_view.hpp"

#include <QApplication>
#include <QGraphicsScene>
#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QScrollBar>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "canvas/canvas_ruler.hpp"
#include "canvas/mesh_grid_item.hpp"
#include "canvas/mesh_navigation.hpp"
#include "canvas/minimap.hpp"
#include "canvas/tensor_key.hpp"

namespace meshloom::app {

namespace {
constexpr double kMaxFitScale = 4.0;  // a tiny mesh is not blown up past this when fitted
constexpr int kOverlayMargin = 8;     // pixels between the minimap or legend and the viewport's edges
}  // namespace

MeshView::MeshView(QGraphicsScene* scene, QWidget* parent) : QGraphicsView(scene, parent) {
  setDragMode(QGraphicsView::ScrollHandDrag);
  setRenderHint(QPainter::Antialiasing, false);
  setRenderHint(QPainter::TextAntialiasing, true);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
  setOptimizationFlag(QGraphicsView::DontSavePainterState, true);
  viewport()->setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);

  top_ruler_ = new CanvasRuler(this, Qt::Horizontal, this);
  left_ruler_ = new CanvasRuler(this, Qt::Vertical, this);
  minimap_ = new Minimap(this, this);
  minimap_->hide();
  legend_ = new QLabel(this);
  legend_->setObjectName(QStringLiteral("zoom_legend"));
  legend_->setWordWrap(true);
  legend_->setAutoFillBackground(true);
  legend_->setBackgroundRole(QPalette::ToolTipBase);
  legend_->setForegroundRole(QPalette::ToolTipText);
  legend_->setMargin(6);
  legend_->hide();
  tensor_key_ = new TensorKey(this);
  tensor_key_->hide();
}

void MeshView::content_changed() {
  minimap_->scene_changed();
  if (auto_fit_) {
    fit();  // the tensor key may have come or gone: make room for it, or take the room back
  } else {
    update_overlays();
  }
}

bool MeshView::key_has_room(const QRect& vp) const {
  const QSize key = tensor_key_->sizeHint();
  return tensor_key_->has_grid() && vp.width() >= 2 * key.width() && vp.height() >= key.height() + 2 * kOverlayMargin;
}

void MeshView::set_grid(MeshGridItem* grid) {
  grid_ = grid;
  hovered_.reset();
  dragged_ = false;
  std::vector<RulerBand> top;
  std::vector<RulerBand> left;
  std::vector<QString> top_names;
  std::vector<QString> left_names;
  if (grid) {
    Rulers rulers = mesh_rulers(grid->geometry());
    top = std::move(rulers.top);
    left = std::move(rulers.left);
    for (const auto& b : top) top_names.push_back(grid->axis_label(b.axis));
    for (const auto& b : left) left_names.push_back(grid->axis_label(b.axis));
  }
  top_ruler_->set_bands(std::move(top), std::move(top_names));
  left_ruler_->set_bands(std::move(left), std::move(left_names));
  minimap_->scene_changed();
  layout_overlays();
}

void MeshView::layout_overlays() {
  const int top = top_ruler_->thickness();
  const int left = left_ruler_->thickness();
  setViewportMargins(left, top, 0, 0);
  const QRect vp = viewport()->geometry();  // in this widget's coordinates
  top_ruler_->setGeometry(vp.left() - left, vp.top() - top, vp.width() + left, top);
  top_ruler_->set_viewport_offset(left);
  top_ruler_->setVisible(top > 0);
  left_ruler_->setGeometry(vp.left() - left, vp.top(), left, vp.height());
  left_ruler_->setVisible(left > 0);
  update_overlays();
}

void MeshView::update_overlays() {
  top_ruler_->update();
  left_ruler_->update();
  const QRect vp = viewport()->geometry();
  // The minimap while part of the mesh is out of view (and the viewport has room for it).
  const QRectF scene_rect = scene() ? scene()->sceneRect() : QRectF();
  const QRectF shown = mapToScene(viewport()->rect()).boundingRect();
  const bool partial = live_grid() && !scene_rect.isEmpty() &&
                       !shown.adjusted(-1, -1, 1, 1).contains(live_grid()->geometry().bounds);
  const QSize mini = minimap_->sizeHint();
  const bool room = vp.width() >= 3 * mini.width() && vp.height() >= 2 * mini.height();
  if (partial && room) {
    minimap_->setGeometry(vp.right() + 1 - kOverlayMargin - mini.width(), vp.bottom() + 1 - kOverlayMargin - mini.height(),
                          mini.width(), mini.height());
    minimap_->show();
    minimap_->raise();
    minimap_->view_changed();
  } else {
    minimap_->hide();
  }
  // The tensor key, top right, while it has a grid and the viewport room for it.
  const QSize key = tensor_key_->sizeHint();
  if (key_has_room(vp)) {
    tensor_key_->setGeometry(vp.right() + 1 - kOverlayMargin - key.width(), vp.top() + kOverlayMargin, key.width(),
                             key.height());
    tensor_key_->show();
    tensor_key_->raise();
  } else {
    tensor_key_->hide();
  }
  // The legend of the aggregated view, bottom left.
  MeshGridItem* grid = live_grid();
  const bool aggregated = grid && grid->aggregated_at(transform().m11());
  if (aggregated) {
    const QString text = grid->aggregate_legend();
    if (legend_->text() != text) legend_->setText(text);
    const int w = std::min(vp.width() - 2 * kOverlayMargin - (minimap_->isVisible() ? mini.width() + kOverlayMargin : 0),
                           420);
    if (w > 120) {
      legend_->setFixedWidth(w);
      legend_->adjustSize();
      legend_->move(vp.left() + kOverlayMargin, vp.bottom() + 1 - kOverlayMargin - legend_->height());
      legend_->show();
      legend_->raise();
      return;
    }
  }
  legend_->hide();
}

void MeshView::fit() {
  auto_fit_ = true;
  if (!scene()) return;
  // The scene fitted so that the overlays cover no rank: beside the tensor key (a column on the right) or under it
  // (a band along the top), whichever leaves the larger scale, and above the legend of the aggregated view (a band
  // along the bottom) where the fitted scale draws hosts as blocks. The view's scene rect grows by that room (in
  // scene units at the scale) and is fitted and centred whole.
  const QRectF content = scene()->sceneRect();
  const QRect vp = viewport()->rect();
  QRectF target = content;
  if (content.width() > 0 && content.height() > 0) {
    const bool key = key_has_room(vp);
    const double column = key ? tensor_key_->sizeHint().width() + 2.0 * kOverlayMargin : 0.0;
    const double band = key ? tensor_key_->sizeHint().height() + 2.0 * kOverlayMargin : 0.0;
    const auto arrange = [&](double bottom) {
      const double beside = std::min((vp.width() - column) / content.width(), (vp.height() - bottom) / content.height());
      const double under = std::min(vp.width() / content.width(), (vp.height() - band - bottom) / content.height());
      const double scale = std::min(std::max(beside, under), kMaxFitScale);
      if (scale <= 0) return std::pair{content, 0.0};
      QRectF r = beside >= under ? content.adjusted(0, 0, column / scale, 0) : content.adjusted(0, -band / scale, 0, 0);
      return std::pair{r.adjusted(0, 0, 0, bottom / scale), scale};
    };
    auto [rect, scale] = arrange(0.0);
    MeshGridItem* grid = live_grid();
    const int legend_width = std::min(vp.width() - 2 * kOverlayMargin, 420);
    if (grid != nullptr && scale > 0 && grid->aggregated_at(scale) && legend_width > 120) {
      legend_->setText(grid->aggregate_legend());
      std::tie(rect, scale) = arrange(legend_->heightForWidth(legend_width) + 2.0 * kOverlayMargin);
    }
    target = rect;
  }
  setSceneRect(target);
  fitInView(target, Qt::KeepAspectRatio);
  const double scale = transform().m11();
  if (scale > kMaxFitScale) {
    setTransform(QTransform::fromScale(kMaxFitScale, kMaxFitScale));
    centerOn(target.center());
  }
  update_overlays();
}

void MeshView::zoom(double factor) {
  auto_fit_ = false;
  scale(factor, factor);
  update_overlays();
}

void MeshView::centre_on_cell(std::size_t cell) {
  MeshGridItem* grid = live_grid();
  if (!grid || cell >= grid->cell_count()) return;
  auto_fit_ = false;
  const double cell_px = transform().m11() * MeshGeometry::kCell;
  if (cell_px < kCentreCellPx) {
    const double k = kCentreCellPx / MeshGeometry::kCell;
    setTransform(QTransform::fromScale(k, k));
  }
  centerOn(grid->mapToScene(grid->geometry().cells[cell].center()));
  update_overlays();
}

void MeshView::resizeEvent(QResizeEvent* event) {
  QGraphicsView::resizeEvent(event);
  layout_overlays();
  if (auto_fit_) fit();
}

void MeshView::scrollContentsBy(int dx, int dy) {
  QGraphicsView::scrollContentsBy(dx, dy);
  update_overlays();
}

std::optional<std::size_t> MeshView::arrow_target(const QKeyEvent* event) const {
  MeshGridItem* grid = live_grid();
  if (!keyboard_navigation_ || !grid || !grid->selected_cell()) return std::nullopt;
  const Qt::KeyboardModifiers mods = event->modifiers() & ~Qt::KeypadModifier;
  if (mods != Qt::NoModifier && mods != Qt::ShiftModifier) return std::nullopt;
  MeshDirection direction{};
  switch (event->key()) {
    case Qt::Key_Left: direction = MeshDirection::Left; break;
    case Qt::Key_Right: direction = MeshDirection::Right; break;
    case Qt::Key_Up: direction = MeshDirection::Up; break;
    case Qt::Key_Down: direction = MeshDirection::Down; break;
    default: return std::nullopt;
  }
  const std::size_t from = *grid->selected_cell();
  // At the mesh's end that way the selection stays where it is (the key is still the view's).
  return step_cell(grid->geometry(), from, direction, mods == Qt::ShiftModifier).value_or(from);
}

bool MeshView::event(QEvent* event) {
  if (event->type() == QEvent::ShortcutOverride && arrow_target(static_cast<QKeyEvent*>(event))) {
    event->accept();  // the arrows move the selection, not the animation's window shortcuts
    return true;
  }
  return QGraphicsView::event(event);
}

void MeshView::keyPressEvent(QKeyEvent* event) {
  const auto target = arrow_target(event);
  if (!target) return QGraphicsView::keyPressEvent(event);
  event->accept();
  MeshGridItem* grid = live_grid();
  if (*target == grid->selected_cell()) return;
  emit cell_clicked(*target);
  const QRectF cell = grid->mapToScene(grid->geometry().cells[*target]).boundingRect();
  ensureVisible(cell, 40, 40);
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
  // The viewport resized without the view (a scroll bar came or went): the rulers follow its edges.
  if (event->type() == QEvent::Resize) layout_overlays();
  return QGraphicsView::viewportEvent(event);
}

}  // namespace meshloom::app
