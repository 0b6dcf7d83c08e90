#include "main_window.hpp"

#include <QAction>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QGraphicsScene>
#include <QGraphicsView>
#include <QHeaderView>
#include <QKeySequence>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <QTreeWidget>

#include <exception>
#include <stdexcept>
#include <string>

#include "mesh_geometry.hpp"
#include "mesh_grid_item.hpp"
#include "mesh_view.hpp"
#include "meshloom/design/export.hpp"
#include "meshloom/io/atomic_file.hpp"
#include "meshloom/plan/state.hpp"

namespace meshloom::app {

namespace {

QString join_ints(const std::vector<std::int64_t>& values, const char* sep = " x ") {
  QStringList parts;
  for (auto v : values) parts << QString::number(v);
  return parts.join(QString::fromLatin1(sep));
}

QString q(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  scene_ = new QGraphicsScene(this);
  view_ = new MeshView(scene_, this);
  setCentralWidget(view_);

  summary_ = new QTreeWidget(this);
  summary_->setColumnCount(2);
  summary_->setHeaderLabels({tr("Item"), tr("Value")});
  summary_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  summary_->setMinimumWidth(380);
  auto* dock = new QDockWidget(tr("Design"), this);
  dock->setObjectName(QStringLiteral("design_dock"));
  dock->setWidget(summary_);
  addDockWidget(Qt::LeftDockWidgetArea, dock);

  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(tr("&Open..."), this, &MainWindow::open_dialog);
  open->setShortcut(QKeySequence::Open);
  QMenu* export_menu = file->addMenu(tr("&Export"));
  QAction* export_torch =
      export_menu->addAction(tr("&PyTorch code..."), this, [this] { export_dialog(CodeKind::PyTorch); });
  export_torch->setToolTip(tr("init_device_mesh with the axis names, the _flatten calls and the tensors' placements"));
  export_menu->addAction(tr("&JAX code..."), this, [this] { export_dialog(CodeKind::Jax); })
      ->setToolTip(tr("jax.sharding.Mesh with the axis names and the tensors' PartitionSpecs"));
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
  QMenu* view = menuBar()->addMenu(tr("&View"));
  QAction* fit_action = view->addAction(tr("&Fit to window"), view_, &MeshView::fit);
  fit_action->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
  QAction* zoom_in = view->addAction(tr("Zoom &in"), this, [this] { view_->zoom(1.25); });
  zoom_in->setShortcut(QKeySequence::ZoomIn);
  QAction* zoom_out = view->addAction(tr("Zoom &out"), this, [this] { view_->zoom(0.8); });
  zoom_out->setShortcut(QKeySequence::ZoomOut);

  setWindowTitle(tr("Meshloom"));
  resize(1200, 800);
}

bool MainWindow::open_design(const QString& path) {
  try {
    Design design = load_design(path.toStdString());
    const DeviceMesh mesh = build_mesh(design.mesh, design.world);
    show_design(design, mesh);
    design_ = std::move(design);
    path_ = path;
    last_error_.clear();
    setWindowTitle(tr("%1 - Meshloom").arg(QFileInfo(path).fileName()));
    return true;
  } catch (const std::exception& e) {
    last_error_ = QString::fromUtf8(e.what());
    statusBar()->showMessage(last_error_);
    return false;
  }
}

void MainWindow::open_dialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open design"), QFileInfo(path_).absolutePath(),
                                                    tr("Meshloom designs (*.meshloom.json);;JSON (*.json)"));
  if (path.isEmpty()) return;
  if (!open_design(path)) QMessageBox::warning(this, tr("Cannot open design"), last_error_);
}

bool MainWindow::export_code(CodeKind kind, const QString& path) {
  try {
    if (!design_) throw std::runtime_error("no design is open");
    const std::string code = kind == CodeKind::PyTorch ? export_pytorch(*design_) : export_jax(*design_);
    write_file_atomically(path.toStdString(), code);
    last_error_.clear();
    statusBar()->showMessage(tr("Wrote %1").arg(path), 5000);
    return true;
  } catch (const std::exception& e) {
    last_error_ = QString::fromUtf8(e.what());
    statusBar()->showMessage(last_error_);
    return false;
  }
}

void MainWindow::export_dialog(CodeKind kind) {
  if (!design_) return;
  const QFileInfo here(path_);
  const QString suggested =
      here.absoluteDir().filePath(q(design_->name) + (kind == CodeKind::PyTorch ? "_mesh.py" : "_jax_mesh.py"));
  const QString path = QFileDialog::getSaveFileName(
      this, kind == CodeKind::PyTorch ? tr("Export PyTorch code") : tr("Export JAX code"), suggested,
      tr("Python (*.py)"));
  if (path.isEmpty()) return;
  if (!export_code(kind, path)) QMessageBox::warning(this, tr("Cannot export"), last_error_);
}

void MainWindow::show_design(const Design& design, const DeviceMesh& mesh) {
  const RankTensor instances = mesh.instances();  // the root has one instance: every rank, row-major
  std::vector<std::int64_t> hosts;
  hosts.reserve(instances.values.size());
  for (auto r : instances.values) hosts.push_back(r / design.devices_per_host);

  scene_->clear();
  grid_ = new MeshGridItem(layout_mesh(mesh.shape()), instances.values, std::move(hosts));
  scene_->addItem(grid_);
  scene_->setSceneRect(grid_->boundingRect().adjusted(-20, -20, 20, 20));

  summary_->clear();
  auto* top = new QTreeWidgetItem(summary_, {tr("Design"), q(design.name)});
  new QTreeWidgetItem(top, {tr("World"), QString::number(design.world)});
  new QTreeWidgetItem(top, {tr("Devices per host"), QString::number(design.devices_per_host)});
  new QTreeWidgetItem(top, {tr("Mesh"), q(mesh.repr())});
  new QTreeWidgetItem(top, {tr("Layout"), q(to_string(mesh.layout()))});
  auto* axes = new QTreeWidgetItem(summary_, {tr("Axes"), join_ints(mesh.shape())});
  for (std::size_t i = 0; i < mesh.ndim(); ++i) {
    const std::string& name = design.mesh.names[i];
    new QTreeWidgetItem(axes, {q(name), tr("size %1, %2 groups")
                                              .arg(mesh.size(AxisRef{name}))
                                              .arg(mesh.groups(AxisRef{name}).shape[0])});
  }
  if (!design.mesh.flattened.empty()) {
    auto* flat = new QTreeWidgetItem(summary_, {tr("Flattened axes"), QString()});
    for (const auto& f : design.mesh.flattened) {
      QStringList parts;
      for (const auto& a : f.axes) parts << q(a);
      new QTreeWidgetItem(flat, {q(f.name), tr("%1 (size %2)").arg(parts.join(QStringLiteral(" * "))).arg(mesh.size(AxisRef{f.name}))});
    }
  }
  if (!design.tensors.empty()) {
    auto* tensors = new QTreeWidgetItem(summary_, {tr("Tensors"), QString()});
    for (const auto& t : design.tensors) {
      new QTreeWidgetItem(tensors, {q(t.name), tr("%1 %2: %3 -> %4")
                                                   .arg(join_ints(t.shape), q(std::string(to_string(t.dtype))),
                                                        q(to_string(t.src)), q(to_string(t.dst)))});
    }
  }
  summary_->expandAll();
  const std::int64_t host_count = design.world / design.devices_per_host;
  statusBar()->showMessage(host_count == 1 ? tr("%1 ranks on 1 host").arg(mesh.size())
                                      : tr("%1 ranks on %2 hosts").arg(mesh.size()).arg(host_count));
  view_->fit();
}

}  // namespace meshloom::app
