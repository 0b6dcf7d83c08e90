// MeshView: the canvas. Keeps the mesh fitted to the window until the user zooms (wheel or shortcuts), pans
// by dragging, zooms under the mouse, and reports the cell under the mouse (hover) and the cell chosen (a
// press and release without a drag, or the arrow keys). Around it: rulers along the top and left edges (the axes'
// coordinates, CanvasRuler), a minimap while the view shows part of the mesh (Minimap), and while the grid draws
// hosts as blocks (semantic zoom) a legend saying what a block is; while a plan's blocks are shown, the tensor's key
// (TensorKey) top right. It holds no state of the mesh; the window owns
// the grid item.
//
// Keys, while a cell is selected: the arrows choose the next cell that way (step_cell: along the innermost axis
// drawn that way, into the next block at its end), with Shift one block of the next axis out. The arrows are the
// view's own only while a cell is selected and keyboard navigation is on; otherwise window shortcuts get them.
#pragma once

#include <QGraphicsView>

class QKeyEvent;
class QLabel;

#include <cstddef>
#include <optional>

namespace meshloom::app {

class MeshGridItem;
class CanvasRuler;
class Minimap;
class TensorKey;

class MeshView : public QGraphicsView {
  Q_OBJECT

public:
  explicit MeshView(QGraphicsScene* scene, QWidget* parent = nullptr);

  // The item whose cells hover and click report (the view also sets its hovered cell); nullptr for none. Call
  // set_grid(nullptr) before deleting the item.
  void set_grid(MeshGridItem* grid);
  void fit();                         // fit the whole scene (at most 4x) and keep fitting on resize
  void zoom(double factor);           // zoom by factor and stop auto-fitting
  // Centre a cell, zoomed in until its rank number shows (at least kCentreCellPx per side), and stop auto-fitting.
  static constexpr double kCentreCellPx = 48.0;
  void centre_on_cell(std::size_t cell);
  // Whether the arrow keys move the selection (off in presentation mode, where they step the animation).
  void set_keyboard_navigation(bool on) { keyboard_navigation_ = on; }
  // What the scene draws changed (a slice, a selection, an animation frame): the minimap's picture and the legend
  // follow. The window calls it; the view does not listen to every scene update (that would route each item update
  // through the scene).
  void content_changed();

  [[nodiscard]] CanvasRuler* top_ruler() const noexcept { return top_ruler_; }
  [[nodiscard]] CanvasRuler* left_ruler() const noexcept { return left_ruler_; }
  [[nodiscard]] Minimap* minimap() const noexcept { return minimap_; }
  [[nodiscard]] QLabel* zoom_legend() const noexcept { return legend_; }
  // The key to the animation's block grids, top right while the window gives it a grid (TensorKey::set_grid).
  [[nodiscard]] TensorKey* tensor_key() const noexcept { return tensor_key_; }

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
  bool event(QEvent* event) override;          // ShortcutOverride: the arrows while a cell is selected
  void keyPressEvent(QKeyEvent* event) override;
  void scrollContentsBy(int dx, int dy) override;

private:
  [[nodiscard]] MeshGridItem* live_grid() const;  // grid_ while it is still an item of the scene
  // Whether the viewport `vp` has room for the tensor key (and the key something to show).
  [[nodiscard]] bool key_has_room(const QRect& vp) const;
  [[nodiscard]] std::optional<std::size_t> cell_under(QPoint viewport_pos) const;
  void update_hover(std::optional<std::size_t> cell);  // sets the grid's hovered cell, emits on a change
  [[nodiscard]] std::optional<std::size_t> arrow_target(const QKeyEvent* event) const;  // nullopt: not ours
  void layout_overlays();   // rulers in the viewport margins, minimap and legend in the viewport's corners
  void update_overlays();   // after a zoom, a scroll or a scene change

  CanvasRuler* top_ruler_ = nullptr;
  CanvasRuler* left_ruler_ = nullptr;
  Minimap* minimap_ = nullptr;
  QLabel* legend_ = nullptr;
  TensorKey* tensor_key_ = nullptr;
  bool keyboard_navigation_ = true;

  bool auto_fit_ = true;
  MeshGridItem* grid_ = nullptr;
  QPoint press_pos_;
  bool dragged_ = false;
  std::optional<std::size_t> hovered_;
};

}  // namespace meshloom::app
