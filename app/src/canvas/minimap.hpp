// Minimap: a small picture of the whole scene in a corner of the canvas with the part in view outlined; a click or
// a drag on it centres the view there. It shows only while the view does not show the whole scene. The picture
// is rendered from the scene (at its own small size, so the grid paints its aggregated view) and kept until the
// scene changes; redrawing waits until the changes pause for kRefreshMs, so that playback or a stream of edits does
// not re-render it on every frame.
#pragma once

#include <QImage>
#include <QRectF>
#include <QTimer>
#include <QWidget>

class QGraphicsView;

namespace meshloom::app {

class Minimap : public QWidget {
  Q_OBJECT

public:
  static constexpr int kRefreshMs = 150;
  static constexpr int kLongSide = 180;  // pixels

  explicit Minimap(QGraphicsView* view, QWidget* parent = nullptr);

  // The scene changed (the picture is stale) or the view moved (the outline is): both schedule an update.
  void scene_changed();
  void view_changed();
  // The part of the scene in view, as drawn on the minimap (widget coordinates); tests read it.
  [[nodiscard]] QRectF viewport_outline() const;
  [[nodiscard]] QSize sizeHint() const override;

protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;

private:
  [[nodiscard]] QRectF picture_rect() const;  // where the scene is drawn inside the widget
  void render_picture();
  void centre_at(QPointF widget_pos);

  QGraphicsView* view_;
  QImage picture_;
  bool stale_ = true;
  QTimer refresh_;
};

}  // namespace meshloom::app
