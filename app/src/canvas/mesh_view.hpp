// MeshView: the canvas. Keeps the mesh fitted to the window until the user zooms (wheel or shortcuts), pans
// by dragging, zooms under the mouse, and reports the cell under the mouse (hover) and the cell clicked (a
// press and release without a drag). It holds no state of the mesh; the window owns the grid item.
#pragma once

#include <QGraphicsView>

#include <cstddef>
#include <optional>

namespace meshloom::app {

class MeshGridItem;

class MeshView : public QGraphicsView {
  Q_OBJECT

public:
  explicit MeshView(QGraphicsScene* scene, QWidget* parent = nullptr);

  // The item whose cells hover and click report (the view also sets its hovered cell); nullptr for none. Call
  // set_grid(nullptr) before deleting the item.
  void set_grid(MeshGridItem* grid);
  void fit();                         // fit the whole scene (at most 4x) and keep fitting on resize
  void zoom(double factor);           // zoom by factor and stop auto-fitting

signals:
  void cell_hovered(std::optional<std::size_t> cell);  // nullopt when the mouse leaves every cell
  void cell_clicked(std::optional<std::size_t> cell);  // nullopt: a click on empty canvas (clears selection)

protected:
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;
  bool viewportEvent(QEvent* event) override;  // the viewport's Leave clears the hover

private:
  [[nodiscard]] MeshGridItem* live_grid() const;  // grid_ while it is still an item of the scene
  [[nodiscard]] std::optional<std::size_t> cell_under(QPoint viewport_pos) const;
  void update_hover(std::optional<std::size_t> cell);  // sets the grid's hovered cell, emits on a change

  bool auto_fit_ = true;
  MeshGridItem* grid_ = nullptr;
  QPoint press_pos_;
  bool dragged_ = false;
  std::optional<std::size_t> hovered_;
};

}  // namespace meshloom::app
