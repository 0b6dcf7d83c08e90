#include "canvas/minimap.hpp"

#include <QGraphicsScene>
#include <QGraphicsView>
#include <QMouseEvent>
#include <QPainter>
#include <QPalette>

#include <algorithm>

#include "canvas/canvas_paint.hpp"

namespace meshloom::app {

namespace {
constexpr int kFrame = 1;  // the minimap's border, pixels
}  // namespace

Minimap::Minimap(QGraphicsView* view, QWidget* parent) : QWidget(parent), view_(view) {
  setCursor(Qt::PointingHandCursor);
  setToolTip(tr("The whole mesh: the outlined part is in view. Click or drag to move there."));
  refresh_.setSingleShot(true);
  refresh_.setInterval(kRefreshMs);
  connect(&refresh_, &QTimer::timeout, this, [this] {
    stale_ = true;
    update();
  });
}

QSize Minimap::sizeHint() const {
  const QRectF scene = view_->scene() ? view_->scene()->sceneRect() : QRectF(0, 0, 3, 2);
  if (scene.isEmpty()) return {kLongSide, kLongSide * 2 / 3};
  const double aspect = scene.width() / scene.height();
  const int w = aspect >= 1.0 ? kLongSide : std::max(40, static_cast<int>(kLongSide * aspect));
  const int h = aspect >= 1.0 ? std::max(40, static_cast<int>(kLongSide / aspect)) : kLongSide;
  return {w + 2 * kFrame, h + 2 * kFrame};
}

void Minimap::scene_changed() {
  refresh_.start();  // (re)started: the picture is redrawn once the changes pause for kRefreshMs
}

void Minimap::view_changed() { update(); }

QRectF Minimap::picture_rect() const {
  const QRectF inner = QRectF(rect()).adjusted(kFrame, kFrame, -kFrame, -kFrame);
  const QRectF scene = view_->scene() ? view_->scene()->sceneRect() : QRectF();
  if (scene.isEmpty() || inner.isEmpty()) return inner;
  QSizeF size = scene.size();
  size.scale(inner.size(), Qt::KeepAspectRatio);
  return {inner.center() - QPointF(size.width() / 2.0, size.height() / 2.0), size};
}

QRectF Minimap::viewport_outline() const {
  const QRectF scene = view_->scene() ? view_->scene()->sceneRect() : QRectF();
  if (scene.isEmpty()) return {};
  const QRectF shown = view_->mapToScene(view_->viewport()->rect()).boundingRect() & scene;
  const QRectF pic = picture_rect();
  const double k = pic.width() / scene.width();
  return {pic.left() + (shown.left() - scene.left()) * k, pic.top() + (shown.top() - scene.top()) * k,
          shown.width() * k, shown.height() * k};
}

void Minimap::render_picture() {
  stale_ = false;
  const QRectF pic = picture_rect();
  const qreal dpr = devicePixelRatioF();
  picture_ = QImage((pic.size() * dpr).toSize().expandedTo(QSize(1, 1)), QImage::Format_ARGB32_Premultiplied);
  picture_.setDevicePixelRatio(dpr);
  picture_.fill(palette().color(QPalette::Base));
  if (QGraphicsScene* scene = view_->scene()) {
    QPainter painter(&picture_);
    scene->render(&painter, QRectF(QPointF(0, 0), pic.size()), scene->sceneRect(), Qt::KeepAspectRatio);
  }
}

void Minimap::paintEvent(QPaintEvent* /*event*/) {
  if (stale_ || picture_.size() != (picture_rect().size() * devicePixelRatioF()).toSize()) render_picture();
  QPainter painter(this);
  const QPalette& pal = palette();
  painter.fillRect(rect(), pal.color(QPalette::Base));
  painter.drawImage(picture_rect().topLeft(), picture_);
  painter.setPen(cosmetic(mix(pal.color(QPalette::Base), pal.color(QPalette::Text), 0.5), 1.0));
  painter.drawRect(QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5));
  const QColor highlight = pal.color(QPalette::Highlight);
  QColor fill = highlight;
  fill.setAlpha(40);
  painter.setBrush(fill);
  painter.setPen(cosmetic(highlight, 2.0));
  painter.drawRect(viewport_outline());
}

void Minimap::centre_at(QPointF widget_pos) {
  const QRectF scene = view_->scene() ? view_->scene()->sceneRect() : QRectF();
  const QRectF pic = picture_rect();
  if (scene.isEmpty() || pic.isEmpty()) return;
  const double k = scene.width() / pic.width();
  view_->centerOn(scene.left() + (widget_pos.x() - pic.left()) * k, scene.top() + (widget_pos.y() - pic.top()) * k);
  update();
}

void Minimap::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton) centre_at(event->position());
  event->accept();
}

void Minimap::mouseMoveEvent(QMouseEvent* event) {
  if ((event->buttons() & Qt::LeftButton) != 0) centre_at(event->position());
  event->accept();
}

}  // namespace meshloom::app
