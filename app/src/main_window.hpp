// The main window: a canvas of the design's mesh and a summary of its axes, flattened axes and tensors.
// (The mesh designer, undo, slicing and redistribution views build on this frame.)
#pragma once

#include <QMainWindow>
#include <QString>

#include <memory>
#include <optional>

#include "meshloom/design/design.hpp"
#include "meshloom/mesh/device_mesh.hpp"

class QGraphicsScene;
class QTreeWidget;

namespace meshloom::app {

class MeshGridItem;
class MeshView;

class MainWindow : public QMainWindow {
  Q_OBJECT

public:
  explicit MainWindow(QWidget* parent = nullptr);

  // Loads a design file and shows it. Returns false and leaves the window as it was on error, with the
  // error text in last_error().
  bool open_design(const QString& path);

  // The design's mesh as code (the engine's export_pytorch / export_jax), written atomically to `path`.
  // Returns false with the error in last_error() (and the status bar) when there is no design or the file
  // cannot be written; an existing file then keeps its old content.
  enum class CodeKind { PyTorch, Jax };
  bool export_code(CodeKind kind, const QString& path);
  [[nodiscard]] const QString& last_error() const noexcept { return last_error_; }
  [[nodiscard]] const std::optional<Design>& design() const noexcept { return design_; }
  [[nodiscard]] const MeshGridItem* grid() const noexcept { return grid_; }
  [[nodiscard]] MeshView* view() const noexcept { return view_; }

private:
  void open_dialog();
  void export_dialog(CodeKind kind);
  void show_design(const Design& design, const DeviceMesh& mesh);
  QGraphicsScene* scene_ = nullptr;
  MeshView* view_ = nullptr;
  QTreeWidget* summary_ = nullptr;
  MeshGridItem* grid_ = nullptr;
  std::optional<Design> design_;
  QString path_;
  QString last_error_;
};

}  // namespace meshloom::app
