// MeshView: the canvas. Keeps the mesh fitted to the window until the user zooms (wheel or shortcuts), pans
// by dragging, and zooms under the mouse.
#pragma once

#include <QGraphicsView>

namespace meshloom::app {

class MeshView : public QGraphicsView {
  Q_OBJECT

public:
  explicit MeshView(QGraphicsScene* scene, QWidget* parent = nullptr);

  void fit();                        // fit the whole scene and keep fitting on resize
  void zoom(double factor);          // zoom by factor and stop auto-fitting

protected:
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;

private:
  bool auto_fit_ = true;
};

}  // namespace meshloom::app
