#include "shell/main_window.hpp"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QGraphicsScene>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QInputDialog>
#include <QKeySequence>
#include <QPushButton>
#include <QLabel>
#include <QListView>
#include <QLocale>
#include <QMenuBar>
#include <QPainter>
#include <QPalette>
#include <QProxyStyle>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QStyleFactory>
#include <QStyleOption>
#include <QTreeWidget>
#include <QUndoStack>
#include <QVBoxLayout>

#include <algorithm>
#include <array>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>

#include "mesh/axes_model.hpp"
#include "canvas/canvas_export.hpp"
#include "costs/costs_panel.hpp"
#include "costs/fit_table.hpp"
#include "document/design_document.hpp"
#include "shell/code_dialog.hpp"
#include "shell/inline_message.hpp"
#include "shell/palettes.hpp"
#include "canvas/mesh_geometry.hpp"
#include "canvas/mesh_grid_item.hpp"
#include "mesh/mesh_panel.hpp"
#include "canvas/mesh_view.hpp"
#include "canvas/tensor_key.hpp"
#include "advisor/advisor_model.hpp"
#include "advisor/advisor_panel.hpp"
#include "plan/animation_bar.hpp"
#include "plan/animation_export.hpp"
#include "canvas/block_overlay_item.hpp"
#include "plan/plan_animation.hpp"
#include "plan/plan_model.hpp"
#include "costs/prediction_chart.hpp"
#include "costs/prediction_points.hpp"
#include "meshloom/design/edit.hpp"
#include "meshloom/design/export.hpp"
#include "meshloom/io/atomic_file.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/state.hpp"
#include "meshloom/presets/presets.hpp"
#include "mesh/preset_dialog.hpp"
#include "mesh/rank_panel.hpp"
#include "plan/redistribution_panel.hpp"
#include "mesh/slice_model.hpp"

namespace meshloom::app {

namespace {

constexpr int kMaxRecent = 8;
constexpr double kPlanAreaShare = 0.4;  // of the window's height, when the plan area opens
constexpr qlonglong kMaxDrawnRanks = qlonglong{1} << 20;  // about 50 MB of cells; far past any real cluster
constexpr int kAutosaveMs = 30'000;
const char* const kRecentKey = "recent_files";

// The layout puts the canvas in front: one side column narrow enough that the canvas keeps most of the window, the
// plan area hidden until something needs it. The column opens at kSideWidth and widens (never narrows) to show every
// column of the Mesh dock's axes table when a design opens, up to kSideMaxShare of the window.
constexpr int kSideWidth = 340;
constexpr double kSideMaxShare = 0.32;
constexpr double kScreenShare = 0.9;            // of the screen's available geometry, for the first window
constexpr QSize kMaxWindowSize{1600, 1000};     // past this, the first window leaves the screen to other windows
constexpr int kLayoutVersion = 1;               // saveState's version: a state saved by another arrangement is refused
const char* const kGeometryKey = "window/geometry";
const char* const kStateKey = "window/state";

QString join_ints(const std::vector<std::int64_t>& values, const char* sep = " x ") {
  QStringList parts;
  for (auto v : values) parts << QString::number(v);
  return parts.join(QString::fromLatin1(sep));
}

QString q(const std::string& s) { return QString::fromStdString(s); }

// A dock; arrange_docks puts it in its place. The object name keys it in saveState.
QDockWidget* dock(QMainWindow* window, const QString& title, const QString& name, QWidget* widget) {
  auto* d = new QDockWidget(title, window);
  d->setObjectName(name);
  d->setWidget(widget);
  return d;
}

// A plan-area panel inside a scroll area: the charts and tables need more height than a laptop screen has to spare
// under the canvas, and a dock at their full minimum would push the window past the screen's edge.
QWidget* scrolled(QWidget* panel) {
  auto* area = new QScrollArea(panel->parentWidget());
  area->setWidget(panel);
  area->setWidgetResizable(true);
  area->setFrameShape(QFrame::NoFrame);
  return area;
}

// Fusion outlines a check box in its window colour darkened, which on the dark palette is the base colour it is
// drawn on (the axes table's and the advisor's check boxes vanished): outline them in the palette's Mid instead.
class DarkFusionStyle : public QProxyStyle {
public:
  DarkFusionStyle() : QProxyStyle(QStyleFactory::create(QStringLiteral("Fusion"))) {}
  void drawPrimitive(PrimitiveElement element, const QStyleOption* option, QPainter* painter,
                     const QWidget* widget) const override {
    QProxyStyle::drawPrimitive(element, option, painter, widget);
    if (element != PE_IndicatorCheckBox && element != PE_IndicatorItemViewItemCheck) return;
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing, false);
    painter->setBrush(Qt::NoBrush);
    painter->setPen(QPen(option->palette.color(QPalette::Mid).lighter(130), 1));
    painter->drawRect(option->rect.adjusted(1, 1, -2, -2));
    painter->restore();
  }
};

}  // namespace

MainWindow::MainWindow(QWidget* parent, const QString& autosave_dir) : QMainWindow(parent) {
  doc_ = new DesignDocument(this);
  // Connected before the models are made, so the canvas is rebuilt before AxesModel reports changed picks.
  connect(doc_, &DesignDocument::design_changed, this, [this] {
    const bool previewed = preview_.has_value();
    preview_.reset();  // an edit ends any layout preview: the canvas shows the design again
    if (rank_panel_ != nullptr && previewed) rank_panel_->set_preview(nullptr, nullptr);
    // An edit that leaves the mesh as drawn (a tensor, the description, a calibration) keeps the canvas, its zoom
    // and where it is centred.
    if (previewed || drawn_ != CanvasSource{doc_->design().mesh, doc_->design().world, doc_->design().devices_per_host}) {
      rebuild_canvas();
    }
    refresh_overview();
    refresh_slice();
  });
  axes_ = new AxesModel(doc_, this);
  slice_ = new SliceModel(this);
  autosave_ = new Autosave(doc_, autosave_dir.isEmpty() ? Autosave::default_dir() : autosave_dir, kAutosaveMs, this);

  build_canvas();
  build_docks();
  build_menus();
  connect(redistribution_, &RedistributionPanel::plans_changed, this, &MainWindow::update_animation);
  // The plan tables highlight the step the animation shows (frame k: step k).
  connect(animation_, &PlanAnimation::frame_changed, redistribution_, &RedistributionPanel::show_step);
  connect(animation_, &PlanAnimation::plan_changed, redistribution_,
          [this] { redistribution_->show_step(animation_->current()); });

  connect(doc_, &DesignDocument::path_changed, this, &MainWindow::update_title);
  connect(doc_, &DesignDocument::modified_changed, this, &MainWindow::update_title);
  connect(doc_, &DesignDocument::edited, this, [this](const QString& text) { statusBar()->showMessage(text, 8000); });
  connect(axes_, &AxesModel::picked_changed, this, &MainWindow::refresh_slice);
  connect(autosave_, &Autosave::failed, this, [this](const QString& message) { statusBar()->showMessage(message); });
  connect(view_, &MeshView::cell_clicked, this, [this](std::optional<std::size_t> cell) {
    select_rank(cell && grid_ ? std::optional<std::int64_t>(grid_->rank_at(*cell)) : std::nullopt);
  });
  connect(view_, &MeshView::cell_hovered, this, [this](std::optional<std::size_t> cell) {
    hovered_rank_ = cell && grid_ ? std::optional<std::int64_t>(grid_->rank_at(*cell)) : std::nullopt;
    rank_panel_->show_rank(hovered_rank_ ? hovered_rank_ : selected_rank_);
  });

  unsaved_prompt_ = [this](const QString& name) {
    return QMessageBox::warning(this, tr("Unsaved changes"), tr("%1 has unsaved changes. Save them?").arg(name),
                                QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
  };

  // First launch: most of the screen the window opens on, up to a size past which it only adds empty canvas.
  if (const QScreen* s = screen()) resize((s->availableGeometry().size() * kScreenShare).boundedTo(kMaxWindowSize));
  arrange_docks();
  rebuild_canvas();
  refresh_overview();
  refresh_slice();
  update_title();
  update_animation();
}

void MainWindow::build_canvas() {
  scene_ = new QGraphicsScene(this);
  auto* centre = new QWidget(this);
  view_ = new MeshView(scene_, centre);
  animation_ = new PlanAnimation(this);
  animation_bar_ = new AnimationBar(animation_, centre);
  auto* layout = new QVBoxLayout(centre);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addWidget(view_, 1);
  layout->addWidget(animation_bar_);
  setCentralWidget(centre);
  connect(animation_, &PlanAnimation::frame_changed, this, &MainWindow::update_overlay);
  connect(animation_, &PlanAnimation::plan_changed, this, [this] {
    overlay_frame_ = -1;  // the frames are new, whatever their numbers
    update_overlay();
  });
  connect(animation_, &PlanAnimation::transition_changed, this, &MainWindow::update_overlay);
  connect(animation_bar_, &AnimationBar::blocks_toggled, this, &MainWindow::update_overlay);
}

const Design& MainWindow::design() const { return doc_->design(); }

void MainWindow::build_docks() {
  mesh_panel_ = new MeshPanel(doc_, axes_, this);
  mesh_dock_ = dock(this, tr("Mesh"), QStringLiteral("mesh_dock"), mesh_panel_);

  auto* slice_widget = new QWidget(this);
  slice_summary_ = new QLabel(slice_widget);
  slice_summary_->setObjectName(QStringLiteral("slice_summary"));
  slice_summary_->setWordWrap(true);
  slice_summary_->setAlignment(Qt::AlignLeft | Qt::AlignTop);  // one line at the top while the list is hidden
  slice_error_ = make_message_label(slice_widget);
  groups_ = new QListView(slice_widget);
  groups_->setModel(slice_);
  groups_->setUniformItemSizes(true);
  groups_->setToolTip(tr("Every group of the slice; select one to emphasise it on the canvas."));
  auto* slice_layout = new QVBoxLayout(slice_widget);
  slice_layout->addWidget(slice_summary_);
  slice_layout->addWidget(slice_error_);
  slice_mesh_order_ = new QPushButton(tr("Use mesh order"), slice_widget);
  slice_mesh_order_->setObjectName(QStringLiteral("slice_mesh_order"));
  slice_mesh_order_->hide();
  connect(slice_mesh_order_, &QPushButton::clicked, this, [this] { axes_->set_picked(axes_->picked_in_mesh_order()); });
  slice_layout->addWidget(slice_mesh_order_, 0, Qt::AlignLeft);
  slice_layout->addWidget(groups_, 1);
  slice_dock_ = dock(this, tr("Slice"), QStringLiteral("slice_dock"), slice_widget);
  connect(groups_->selectionModel(), &QItemSelectionModel::currentChanged, this, [this](const QModelIndex& current) {
    if (grid_ && !syncing_groups_) grid_->set_emphasised_group(current.isValid() ? current.row() : -1);
  });

  redistribution_ = new RedistributionPanel(doc_, this);
  plan_dock_ = dock(this, tr("Redistribution"), QStringLiteral("redistribution_dock"), scrolled(redistribution_));
  costs_ = new CostsPanel(doc_, this);
  costs_dock_ = dock(this, tr("Costs"), QStringLiteral("costs_dock"), scrolled(costs_));
  connect(costs_, &CostsPanel::apply_requested, this, [this](const QString& path) {
    if (!apply_calibration(path)) QMessageBox::warning(this, tr("Cannot apply calibration"), last_error_);
  });
  // Run or validate records: the plan panel matches the plan's steps against them (old calibration against new).
  connect(costs_, &CostsPanel::predictions_loaded, this, [this](const QString& path) {
    redistribution_->set_step_measurements(
        std::make_shared<const PredictionRecords>(costs_->prediction_chart()->records()), QFileInfo(path).fileName());
  });
  advisor_ = new AdvisorPanel(doc_, this);
  advisor_dock_ = dock(this, tr("Advisor"), QStringLiteral("advisor_dock"), scrolled(advisor_));
  connect(advisor_, &AdvisorPanel::preview_requested, this, [this](const std::optional<MeshSpec>& mesh) {
    preview_layout(mesh);
  });
  connect(advisor_, &AdvisorPanel::apply_requested, this, [this](const MeshSpec& mesh) {
    if (!apply_layout(mesh)) QMessageBox::warning(this, tr("Cannot apply layout"), last_error_);
  });
  connect(costs_, &CostsPanel::run_finished, this, [this](const RunOutcome& outcome) {
    statusBar()->showMessage(outcome.status == RunOutcome::Status::Succeeded
                                 ? tr("Benchmark done: %1 results").arg(outcome.results)
                                 : outcome.message.section(QLatin1Char('\n'), 0, 0),
                             10000);
    show_costs();
  });

  rank_panel_ = new RankPanel(doc_, this);
  rank_dock_ = dock(this, tr("Rank"), QStringLiteral("rank_dock"), rank_panel_);

  overview_ = new QTreeWidget(this);
  overview_->setColumnCount(2);
  overview_->setHeaderLabels({tr("Item"), tr("Value")});
  overview_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  overview_dock_ = dock(this, tr("Overview"), QStringLiteral("overview_dock"), overview_);

  // The plan area's menu check follows its docks, however they are shown or closed.
  for (QDockWidget* d : plan_area_docks()) {
    connect(d, &QDockWidget::visibilityChanged, this, &MainWindow::sync_plan_area_action);
  }
}

MainWindow::~MainWindow() {
  for (QDockWidget* d : all_docks()) disconnect(d, nullptr, this, nullptr);
}

void MainWindow::arrange_docks() {
  const std::array<QDockWidget*, 7> docks = all_docks();
  for (QDockWidget* d : docks) {
    d->setFloating(false);
    removeDockWidget(d);  // out of wherever the user put it
  }
  // The side column, left of the canvas: the designer over the slice over the rank (tabbed with the overview).
  addDockWidget(Qt::LeftDockWidgetArea, mesh_dock_);
  splitDockWidget(mesh_dock_, slice_dock_, Qt::Vertical);
  splitDockWidget(slice_dock_, rank_dock_, Qt::Vertical);
  tabifyDockWidget(rank_dock_, overview_dock_);
  // The plan area, under the canvas and the column.
  addDockWidget(Qt::BottomDockWidgetArea, plan_dock_);
  tabifyDockWidget(plan_dock_, costs_dock_);
  tabifyDockWidget(costs_dock_, advisor_dock_);
  for (QDockWidget* d : docks) d->show();
  rank_dock_->raise();
  plan_dock_->raise();
  const int h = height();
  resizeDocks({mesh_dock_}, {kSideWidth}, Qt::Horizontal);
  widen_side_column();
  resizeDocks({mesh_dock_, slice_dock_, rank_dock_}, {h * 9 / 20, h / 5, h * 7 / 20}, Qt::Vertical);
  resizeDocks({plan_dock_}, {h * 2 / 5}, Qt::Vertical);  // the height it opens at
  set_plan_area_visible(false);
}

void MainWindow::build_menus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&New"), this, &MainWindow::new_dialog)->setShortcut(QKeySequence::New);
  file->addAction(tr("&Open..."), this, &MainWindow::open_dialog)->setShortcut(QKeySequence::Open);
  recent_menu_ = file->addMenu(tr("Open &Recent"));
  connect(recent_menu_, &QMenu::aboutToShow, this, &MainWindow::fill_recent_menu);
  file->addAction(tr("&Save"), this, [this] { (void)save_dialog(false); })->setShortcut(QKeySequence::Save);
  // Save As: the platform's keys, Ctrl+Shift+S where it has none.
  QList<QKeySequence> save_as = QKeySequence::keyBindings(QKeySequence::SaveAs);
  if (save_as.isEmpty()) save_as = {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S)};
  file->addAction(tr("Save &As..."), this, [this] { (void)save_dialog(true); })->setShortcuts(save_as);
  QMenu* export_menu = file->addMenu(tr("&Export"));
  export_menu->addAction(tr("&PyTorch code..."), this, [this] { export_code_dialog(CodeKind::PyTorch); })
      ->setToolTip(tr("init_device_mesh with the axis names, the _flatten calls and the tensors' placements"));
  export_menu->addAction(tr("&JAX code..."), this, [this] { export_code_dialog(CodeKind::Jax); })
      ->setToolTip(tr("jax.sharding.Mesh with the axis names and the tensors' PartitionSpecs"));
  export_menu->addSeparator();
  export_menu->addAction(tr("Canvas as P&NG..."), this, [this] { export_canvas_dialog(ImageKind::Png); })
      ->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
  export_menu->addAction(tr("Canvas as &SVG..."), this, [this] { export_canvas_dialog(ImageKind::Svg); });
  export_menu->addSeparator();
  export_menu->addAction(tr("Plan as &Markdown..."), this, &MainWindow::export_plan_dialog)
      ->setToolTip(tr("The current tensor's graph and greedy plans: steps, bytes, costs"));
  export_menu->addAction(tr("Plan animation as P&DF handout..."), this,
                         [this] { export_animation_dialog(AnimationKind::PdfHandout); })
      ->setToolTip(tr("One page per step: the canvas with the blocks at that step, and its caption"));
  export_menu->addAction(tr("Plan animation as PNG &frames..."), this,
                         [this] { export_animation_dialog(AnimationKind::PngFrames); })
      ->setToolTip(tr("One image of the canvas per step, <tensor>_step<k>.png in a folder"));
  file->addSeparator();
  file->addAction(tr("&Quit"), this, &QWidget::close)->setShortcut(QKeySequence::Quit);

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  QAction* undo = doc_->undo_stack()->createUndoAction(this, tr("&Undo"));
  undo->setShortcut(QKeySequence::Undo);
  QAction* redo = doc_->undo_stack()->createRedoAction(this, tr("&Redo"));
  redo->setShortcut(QKeySequence::Redo);
  edit->addAction(undo);
  edit->addAction(redo);

  QMenu* mesh = menuBar()->addMenu(tr("&Mesh"));
  mesh->addActions(mesh_panel_->actions_for_menu());
  mesh->addSeparator();
  QMenu* presets = mesh->addMenu(tr("&Presets"));
  const struct {
    const char* label;
    const char* preset;
  } entries[] = {{"&torchtitan...", "torchtitan"},         {"&OLMo-core...", "olmo_core"},
                 {"&Megatron-LM...", "megatron"},           {"&JAX...", "jax"},
                 {"JAX &hybrid (ICI x DCN)...", "jax_hybrid"}, {"&Llama 3 405B", "llama3_405b"},
                 {"Llama 3 405B long &context", "llama3_405b_long_context"}};
  for (const auto& e : entries) {
    const QString preset = QString::fromLatin1(e.preset);
    presets->addAction(tr(e.label), this, [this, preset] { preset_dialog(preset); });
  }

  QMenu* plan = menuBar()->addMenu(tr("&Plan"));
  // The tensors to plan (the Redistribution dock's buttons beside its picker).
  for (QAction* a : redistribution_->tensor_actions()) {
    plan->addAction(a);
    connect(a, &QAction::triggered, this, &MainWindow::show_plan);  // where the tensor it changed shows
  }
  plan->addSeparator();
  plan->addAction(tr("Apply &calibration..."), this, &MainWindow::calibration_dialog)
      ->setToolTip(tr("Price plans with costs measured on your cluster (meshloom-launch calibrate writes the file)"));
  plan->addAction(tr("Export plan as &Markdown..."), this, &MainWindow::export_plan_dialog);
  plan->addSeparator();
  plan->addAction(tr("&Run benchmark..."), this, [this] {
        show_costs();
        costs_->open_run_dialog();
      })
      ->setToolTip(tr("Measure the collectives on every axis of this mesh (meshloom-launch bench), live"));
  plan->addAction(tr("Open run or validate &records..."), this, [this] {
        show_costs();
        costs_->open_predictions_dialog();
      })
      ->setToolTip(tr("Each cost model's predicted step time against the measured one (meshloom-launch run or "
                      "validate --jsonl)"));
  plan->addAction(tr("Rank &layouts (Advisor)"), this, [this] {
        show_advisor();
        if (doc_->design().workload) (void)advisor_->rank();
      })
      ->setToolTip(tr("Which order or factorization of this mesh is cheapest for the design's workload"));
  plan->addSeparator();
  // Playback: the shortcuts act while the canvas or the animation bar has the focus (not in text fields and tables).
  const struct {
    QString label;
    QKeySequence key;
    std::function<void()> run;
  } playback[] = {
      {tr("&Play / Pause"), QKeySequence(Qt::Key_Space), [this] { animation_->toggle_play(); }},
      {tr("Step &forward"), QKeySequence(Qt::Key_Right), [this] { animation_->step_forward(); }},
      {tr("Step &back"), QKeySequence(Qt::Key_Left), [this] { animation_->step_back(); }},
      {tr("&First step"), QKeySequence(Qt::Key_Home), [this] { animation_->jump_to(0); }},
      {tr("&Last step"), QKeySequence(Qt::Key_End), [this] { animation_->jump_to(animation_->frame_count() - 1); }},
  };
  for (const auto& p : playback) {
    QAction* a = plan->addAction(p.label, this, p.run);
    a->setShortcut(p.key);
    a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    centralWidget()->addAction(a);
  }

  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(tr("&Fit to window"), view_, &MeshView::fit)->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
  view->addAction(tr("Zoom &in"), this, [this] { view_->zoom(1.25); })->setShortcut(QKeySequence::ZoomIn);
  view->addAction(tr("Zoom &out"), this, [this] { view_->zoom(0.8); })->setShortcut(QKeySequence::ZoomOut);
  QAction* go_to = view->addAction(tr("&Go to rank..."), this, &MainWindow::go_to_rank_dialog);
  go_to->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_G));
  go_to->setToolTip(tr("Select a rank and centre the canvas on it; then the arrow keys move along its axes"));
  view->addSeparator();
  QMenu* theme = view->addMenu(tr("&Theme"));
  auto* themes = new QActionGroup(this);
  const int saved = QSettings().value(QStringLiteral("theme"), 0).toInt();
  const std::pair<QString, Theme> choices[] = {
      {tr("&System"), Theme::System}, {tr("&Light"), Theme::Light}, {tr("&Dark"), Theme::Dark}};
  for (const auto& [label, t] : choices) {
    QAction* a = theme->addAction(label);
    a->setCheckable(true);
    a->setChecked(static_cast<int>(t) == saved);
    themes->addAction(a);
    connect(a, &QAction::triggered, this, [t = t] {
      QSettings().setValue(QStringLiteral("theme"), static_cast<int>(t));
      apply_theme(t);
    });
  }
  view->addSeparator();
  for (QDockWidget* d : all_docks()) view->addAction(d->toggleViewAction());
  view->addSeparator();
  plan_area_action_ = view->addAction(tr("&Plan area"));
  plan_area_action_->setCheckable(true);
  plan_area_action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_J));
  plan_area_action_->setToolTip(tr("Redistribution, Costs and Advisor, under the canvas"));
  connect(plan_area_action_, &QAction::triggered, this, &MainWindow::set_plan_area_visible);
  view->addAction(tr("&Reset layout"), this, &MainWindow::reset_layout)
      ->setToolTip(tr("The docks as at first launch: the canvas in front, the plan area hidden"));
  view->addSeparator();
  presentation_action_ = view->addAction(tr("Pre&sentation mode"));
  presentation_action_->setCheckable(true);
  presentation_action_->setShortcut(QKeySequence(Qt::Key_F5));
  presentation_action_->setToolTip(tr("The canvas full screen with large captions; arrows step, Space plays, Esc "
                                      "leaves"));
  connect(presentation_action_, &QAction::triggered, this, &MainWindow::set_presentation_mode);
  addAction(presentation_action_);  // F5 also while the menu bar is hidden
  leave_presentation_action_ = new QAction(tr("Leave presentation mode"), this);
  leave_presentation_action_->setShortcut(QKeySequence(Qt::Key_Escape));
  leave_presentation_action_->setEnabled(false);
  connect(leave_presentation_action_, &QAction::triggered, this, [this] { set_presentation_mode(false); });
  addAction(leave_presentation_action_);

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About Meshloom"), this, [this] {
    QMessageBox::about(this, tr("About Meshloom"),
                       tr("<b>Meshloom %1</b><p>Design device meshes and parallelism layouts. Slices, flattened axes "
                          "and exported code follow PyTorch's DeviceMesh.</p><p>Documentation: docs/06-app.md in the "
                          "source tree.</p>")
                           .arg(QApplication::applicationVersion()));
  });
}

void MainWindow::apply_theme(Theme theme) {
  static const QString system_style = QApplication::style()->name();
  if (theme == Theme::System) {
    QApplication::setStyle(QStyleFactory::create(system_style));
    QApplication::setPalette(QApplication::style()->standardPalette());
    return;
  }
  if (theme == Theme::Dark) {
    QApplication::setStyle(new DarkFusionStyle);
    QApplication::setPalette(dark_palette());
    return;
  }
  QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
  QApplication::setPalette(light_palette());
}

// ---- Documents --------------------------------------------------------------------------------------------

void MainWindow::fail(const QString& message) {
  last_error_ = message;
  statusBar()->showMessage(message);
}

bool MainWindow::is_bundled_example(const QString& path) {
  const QString examples = QDir(QStringLiteral(MESHLOOM_BUNDLED_EXAMPLES_DIR)).canonicalPath();
  const QString file = QFileInfo(path).canonicalFilePath();
  return !examples.isEmpty() && !file.isEmpty() && file.startsWith(examples + QLatin1Char('/'));
}

bool MainWindow::open_design(const QString& path) {
  QString error;
  // A bundled example opens as an untitled copy: Save asks for a file of the user's, never the tracked example.
  if (!(is_bundled_example(path) ? doc_->open_copy(path, &error) : doc_->open(path, &error))) {
    fail(error);
    return false;
  }
  last_error_.clear();
  remember_recent(QFileInfo(path).absoluteFilePath());
  widen_side_column();
  return true;
}

void MainWindow::widen_side_column() {
  // Not a column the user closed (resizing it would bring nothing into view) nor one they floated off.
  if (mesh_dock_->isHidden() || mesh_dock_->isFloating() || dockWidgetArea(mesh_dock_) == Qt::NoDockWidgetArea) return;
  const int wanted = std::min(mesh_panel_->width_for_table() + mesh_dock_->width() - mesh_panel_->width(),
                              static_cast<int>(width() * kSideMaxShare));
  if (mesh_dock_->width() < wanted) resizeDocks({mesh_dock_}, {wanted}, Qt::Horizontal);
}

bool MainWindow::save_design(const QString& path) {
  QString error;
  if (!doc_->save(path, &error)) {
    fail(error);
    return false;
  }
  last_error_.clear();
  remember_recent(QFileInfo(path).absoluteFilePath());
  statusBar()->showMessage(tr("Saved %1").arg(path), 5000);
  return true;
}

void MainWindow::commit_pending() {
  mesh_panel_->commit_pending();
  redistribution_->commit_pending();
}

bool MainWindow::maybe_save() {
  commit_pending();
  if (!doc_->is_modified()) return true;
  switch (unsaved_prompt_(doc_->display_name())) {
    case QMessageBox::Save: return save_dialog(false);
    case QMessageBox::Discard: return true;  // the copy goes when the changes do (new, open, close)
    default: return false;
  }
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (maybe_save()) {
    autosave_->discard();
    set_presentation_mode(false);  // the layout kept is the one presentation mode restores
    save_layout();
    event->accept();
  } else {
    event->ignore();
  }
}

void MainWindow::new_dialog() {
  if (!maybe_save()) return;
  doc_->new_design();
}

void MainWindow::open_dialog() {
  if (!maybe_save()) return;
  const QString dir = document_dir();
  const QString path = QFileDialog::getOpenFileName(this, tr("Open design"), dir,
                                                    tr("Meshloom designs (*.meshloom.json);;JSON (*.json)"));
  if (path.isEmpty()) return;
  if (!open_design(path)) QMessageBox::warning(this, tr("Cannot open design"), last_error_);
}

bool MainWindow::save_dialog(bool save_as) {
  commit_pending();
  QString path = doc_->path();
  if (save_as || path.isEmpty()) {
    const QString suggested = path.isEmpty() ? q(doc_->design().name) + QStringLiteral(".meshloom.json") : path;
    path = QFileDialog::getSaveFileName(this, tr("Save design"), suggested, tr("Meshloom designs (*.meshloom.json)"));
    if (path.isEmpty()) return false;
    if (!path.endsWith(QLatin1String(".json"))) path += QStringLiteral(".meshloom.json");
  }
  if (save_design(path)) return true;
  QMessageBox::warning(this, tr("Cannot save design"), last_error_);
  return false;
}

QStringList MainWindow::recent_files() const { return QSettings().value(QString::fromLatin1(kRecentKey)).toStringList(); }

void MainWindow::remember_recent(const QString& path) {
  QStringList recent = recent_files();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > kMaxRecent) recent.removeLast();
  QSettings().setValue(QString::fromLatin1(kRecentKey), recent);
}

bool MainWindow::open_recent(const QString& path, QString* error) {
  error->clear();
  if (!QFileInfo::exists(path)) {
    QStringList recent = recent_files();
    recent.removeAll(path);
    QSettings().setValue(QString::fromLatin1(kRecentKey), recent);
    *error = tr("%1 no longer exists; it is removed from the recent files.").arg(path);
    return false;
  }
  if (!maybe_save()) return false;
  if (open_design(path)) return true;
  *error = last_error_;
  return false;
}

void MainWindow::fill_recent_menu() {
  recent_menu_->clear();
  const QStringList recent = recent_files();
  if (recent.isEmpty()) recent_menu_->addAction(tr("(none)"))->setEnabled(false);
  for (int i = 0; i < recent.size(); ++i) {
    const QString path = recent[i];
    QAction* a = recent_menu_->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(path).fileName()), this, [this, path] {
      QString error;
      if (!open_recent(path, &error) && !error.isEmpty()) QMessageBox::warning(this, tr("Cannot open design"), error);
    });
    a->setToolTip(path);
    a->setStatusTip(path);
  }
}

namespace {
// The copy's file was saved after the copy was written (by a later session, or another window): the copy is older
// than what is on disk, and laying it over the file would undo what was saved since.
bool saved_after_copy(const Autosave::Recovery& recovery) {
  if (recovery.origin.isEmpty()) return false;
  const QFileInfo origin(recovery.origin);
  return origin.exists() && origin.lastModified() > recovery.when;
}
}  // namespace

bool MainWindow::recover(const Autosave::Recovery& recovery) {
  const bool file_newer = saved_after_copy(recovery);
  Design copy;
  try {
    copy = load_design(recovery.copy.toStdString());
  } catch (const std::exception& e) {
    fail(tr("cannot recover %1: %2").arg(recovery.copy, error_text(e)));
    return false;
  }
  QString why;
  if (!file_newer && !recovery.origin.isEmpty() && doc_->open(recovery.origin, &why) &&
      doc_->edit(tr("Recover autosaved changes"), [&copy](const Design&) { return copy; }, &why)) {
    // The recovered changes sit on top of the saved file, one undo away from it.
  } else {
    try {
      // A file saved since the copy keeps what was saved: the copy opens as an untitled design beside it, a
      // calibration it names relative to the file's folder pointing at that file still.
      if (file_newer && !recovery.origin.isEmpty()) {
        copy = with_absolute_calibration(std::move(copy), recovery.origin);
      }
      doc_->reset(copy, file_newer ? QString() : recovery.origin, /*modified=*/true);
    } catch (const std::exception& e) {
      // A copy the loader accepts but no mesh can be built from: reported, and the copy kept for the user.
      fail(tr("cannot recover %1: %2").arg(recovery.copy, error_text(e)));
      return false;
    }
  }
  // This session's copy first; the old one goes only once the changes are safe in it.
  if (!autosave_->write_now(&why)) {
    fail(tr("recovered, but %1; the old copy %2 is kept").arg(why, recovery.copy));
    return true;
  }
  Autosave::remove(recovery);
  statusBar()->showMessage(
      file_newer ? tr("Recovered unsaved changes from %1 as an untitled design: %2 was saved after them")
                       .arg(recovery.when.toString(), QFileInfo(recovery.origin).fileName())
                 : tr("Recovered unsaved changes from %1").arg(recovery.when.toString()),
      8000);
  return true;
}

void MainWindow::offer_recovery() {
  const auto pending = Autosave::pending(autosave_->dir());
  if (pending.empty()) return;
  const auto& newest = pending.front();
  const QString name = newest.origin.isEmpty() ? tr("an untitled design") : QFileInfo(newest.origin).fileName();
  QString text = tr("Meshloom closed without saving changes to %1 (autosaved %2). Recover them?")
                     .arg(name, newest.when.toString());
  if (saved_after_copy(newest)) {
    text += QLatin1Char(' ') + tr("%1 was saved after them (%2): they open as an untitled design, and the file stays "
                                  "as saved.")
                                   .arg(name, QFileInfo(newest.origin).lastModified().toString());
  }
  const auto answer = QMessageBox::question(
      this, tr("Recover unsaved changes"), text,
      QMessageBox::Yes | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Yes);
  if (answer == QMessageBox::Yes) {
    (void)recover(newest);
  } else if (answer == QMessageBox::Discard) {
    Autosave::remove(newest);
  }
}

void MainWindow::update_title() {
  setWindowTitle(tr("%1[*] - Meshloom").arg(doc_->display_name()));
  setWindowModified(doc_->is_modified());
}

// ---- Export -----------------------------------------------------------------------------------------------

bool MainWindow::wrote(const QString& path) {
  last_error_.clear();
  statusBar()->showMessage(tr("Wrote %1").arg(path), 5000);
  return true;
}

bool MainWindow::export_code(CodeKind kind, const QString& path) {
  try {
    const std::string code = kind == CodeKind::PyTorch ? export_pytorch(doc_->design()) : export_jax(doc_->design());
    write_file_atomically(path.toStdString(), code);
  } catch (const std::exception& e) {
    fail(error_text(e));
    return false;
  }
  return wrote(path);
}

bool MainWindow::export_canvas(ImageKind kind, const QString& path) {
  QString error;
  const bool ok = kind == ImageKind::Png ? export_scene_png(*scene_, path, 2.0, &error)
                                         : export_scene_svg(*scene_, path, q(doc_->design().name), &error);
  if (!ok) {
    fail(error);
    return false;
  }
  return wrote(path);
}

bool MainWindow::export_plan(const QString& path) {
  commit_pending();
  const std::string markdown = redistribution_->markdown();
  if (markdown.empty()) {
    fail(tr("cannot export a plan: the design has no tensors"));
    return false;
  }
  try {
    write_file_atomically(path.toStdString(), markdown);
  } catch (const std::exception& e) {
    fail(error_text(e));
    return false;
  }
  return wrote(path);
}

bool MainWindow::apply_calibration(const QString& path) {
  const QFileInfo file(path);
  QString summary;
  try {
    const Calibration c = load_calibration(file.absoluteFilePath().toStdString());
    summary = calibration_summary(c);
    // Curves by group shape price any mesh the calibrated job can place; per-axis fits only their own.
    if (const std::optional<std::string> why = calibration_mismatch(c, doc_->design().mesh.shape)) {
      fail(tr("Cannot apply %1: %2").arg(file.fileName(), q(*why)));
      return false;
    }
  } catch (const std::exception& e) {
    fail(error_text(e));
    return false;
  }
  // Relative to the design's folder when the file is inside it, so the pair moves together.
  QString stored = file.absoluteFilePath();
  if (!doc_->path().isEmpty()) {
    const QDir here = QFileInfo(doc_->path()).absoluteDir();
    const QString relative = here.relativeFilePath(stored);
    if (!relative.startsWith(QLatin1String(".."))) stored = relative;
  }
  // The calibration this one replaces: the plan panel prices the plan under both.
  const QString before_label = design().calibration ? QFileInfo(q(*design().calibration)).fileName() : QString();
  QString error;
  // The undo entry (and the status bar) say what changed: the new fits, and what they replace.
  const QString replaces = before_label.isEmpty() ? tr("the design had none before")
                                                  : tr("replacing %1").arg(before_label);
  if (!redistribution_->apply_calibration(tr("Apply calibration %1: %2, %3").arg(file.fileName(), summary, replaces),
                                          stored.toStdString(), before_label, &error)) {
    fail(error);
    return false;
  }
  show_plan();  // the plan priced under the new calibration and the one it replaced
  last_error_.clear();
  return true;
}

void MainWindow::calibration_dialog() {
  const QString dir = document_dir();
  const QString path = QFileDialog::getOpenFileName(this, tr("Apply calibration"), dir,
                                                    tr("Meshloom calibrations (*.json)"));
  if (path.isEmpty()) return;
  if (!apply_calibration(path)) QMessageBox::warning(this, tr("Cannot apply calibration"), last_error_);
}

void MainWindow::export_plan_dialog() {
  const QString dir = document_dir();
  const QString path = QFileDialog::getSaveFileName(this, tr("Export plan"),
                                                    QDir(dir).filePath(redistribution_->current_tensor() + "_plan.md"),
                                                    tr("Markdown (*.md)"));
  if (path.isEmpty()) return;
  if (!export_plan(path)) QMessageBox::warning(this, tr("Cannot export"), last_error_);
}

bool MainWindow::export_animation(AnimationKind kind, const QString& path) {
  if (overlay_ == nullptr || grid_ == nullptr || preview_ || !animation_->has_plan()) {
    fail(preview_ ? tr("Cannot export the animation while a layout is previewed")
         : animation_->error().isEmpty()
             ? tr("No plan to animate for tensor '%1'").arg(redistribution_->current_tensor())
             : tr("Cannot animate the plan: %1").arg(animation_->error()));
    return false;
  }
  // Every frame with its blocks, whatever the Blocks box says; update_overlay puts the canvas back.
  grid_->set_numbers_in_band(true);
  grid_->set_group_paint(MeshGridItem::GroupPaint::Outline);
  const QString tensor = redistribution_->current_tensor();
  QString error;
  const bool ok =
      kind == AnimationKind::PdfHandout
          ? export_animation_pdf(*animation_, *overlay_, handout_title(), path, &error)
          : export_animation_pngs(*animation_, *overlay_, path, tensor, 2.0, &error);
  overlay_frame_ = -1;
  update_overlay();
  if (!ok) {
    fail(error);
    return false;
  }
  return wrote(path);
}

QString MainWindow::handout_title() const {
  return tr("%1: tensor %2").arg(q(doc_->design().name), redistribution_->current_tensor());
}

QImage MainWindow::handout_page(int frame, int width) {
  if (overlay_ == nullptr || grid_ == nullptr || preview_ || !animation_->has_plan()) {
    fail(animation_->error().isEmpty() ? tr("No plan to animate for tensor '%1'").arg(redistribution_->current_tensor())
                                       : tr("Cannot animate the plan: %1").arg(animation_->error()));
    return {};
  }
  if (frame < 0 || frame >= animation_->frame_count()) {
    fail(tr("No page %1: the handout has pages 0 to %2").arg(frame).arg(animation_->frame_count() - 1));
    return {};
  }
  grid_->set_numbers_in_band(true);
  grid_->set_group_paint(MeshGridItem::GroupPaint::Outline);
  const QImage page = handout_page_image(*animation_, *overlay_, handout_title(), frame, width);
  overlay_frame_ = -1;
  update_overlay();
  last_error_.clear();
  return page;
}

void MainWindow::export_animation_dialog(AnimationKind kind) {
  commit_pending();
  const QString dir = document_dir();
  const QString path =
      kind == AnimationKind::PdfHandout
          ? QFileDialog::getSaveFileName(this, tr("Export plan animation"),
                                         QDir(dir).filePath(redistribution_->current_tensor() + "_animation.pdf"),
                                         tr("PDF (*.pdf)"))
          : QFileDialog::getExistingDirectory(this, tr("Export plan animation frames into"), dir);
  if (path.isEmpty()) return;
  if (!export_animation(kind, path)) QMessageBox::warning(this, tr("Cannot export"), last_error_);
}

std::unique_ptr<CodeDialog> MainWindow::make_code_dialog(CodeKind kind) {
  commit_pending();
  QString code;
  try {
    code = q(kind == CodeKind::PyTorch ? export_pytorch(doc_->design()) : export_jax(doc_->design()));
  } catch (const std::exception& e) {
    fail(error_text(e));
    return nullptr;
  }
  const QString title = kind == CodeKind::PyTorch ? tr("PyTorch code") : tr("JAX code");
  const auto save = [this, kind, title] {
    const QString dir = document_dir();
    const QString suggested =
        QDir(dir).filePath(q(doc_->design().name) + (kind == CodeKind::PyTorch ? "_mesh.py" : "_jax_mesh.py"));
    const QString path = QFileDialog::getSaveFileName(this, tr("Save %1").arg(title), suggested, tr("Python (*.py)"));
    if (path.isEmpty()) return false;
    if (export_code(kind, path)) return true;
    QMessageBox::warning(this, tr("Cannot export"), last_error_);
    return false;
  };
  return std::make_unique<CodeDialog>(tr("%1 for %2").arg(title, q(doc_->design().name)), code, save, this);
}

void MainWindow::export_code_dialog(CodeKind kind) {
  const std::unique_ptr<CodeDialog> dialog = make_code_dialog(kind);
  if (!dialog) {
    QMessageBox::warning(this, tr("Cannot export"), last_error_);
    return;
  }
  dialog->exec();
}

void MainWindow::export_canvas_dialog(ImageKind kind) {
  const QString dir = document_dir();
  const QString suggested = QDir(dir).filePath(q(doc_->design().name) + (kind == ImageKind::Png ? ".png" : ".svg"));
  const QString path = QFileDialog::getSaveFileName(this, tr("Export canvas"), suggested,
                                                    kind == ImageKind::Png ? tr("PNG image (*.png)") : tr("SVG (*.svg)"));
  if (path.isEmpty()) return;
  if (!export_canvas(kind, path)) QMessageBox::warning(this, tr("Cannot export"), last_error_);
}

// ---- Presets ----------------------------------------------------------------------------------------------

void MainWindow::preview_layout(const std::optional<MeshSpec>& mesh) {
  if (!mesh) {
    if (!preview_) return;
    preview_.reset();
  } else {
    try {
      Design shown = with_layout(doc_->design(), *mesh);
      DeviceMesh built = build_mesh(shown.mesh, shown.world);
      preview_ = LayoutPreview{std::move(shown), std::move(built)};
    } catch (const std::exception& e) {
      preview_.reset();  // the design's own mesh again, not an older preview
      rank_panel_->set_preview(nullptr, nullptr);
      rebuild_canvas();
      refresh_slice();
      fail(error_text(e));
      return;
    }
  }
  rank_panel_->set_preview(preview_ ? &preview_->design : nullptr, preview_ ? &preview_->mesh : nullptr);
  rebuild_canvas();
  refresh_slice();
  if (preview_) {
    statusBar()->showMessage(tr("Preview of layout %1: Apply layout in the Advisor keeps it").arg(layout_label(*mesh)));
  }
}

bool MainWindow::apply_layout(const MeshSpec& mesh) {
  QString error;
  if (!doc_->edit(tr("Apply layout %1").arg(layout_label(mesh)), [&](const Design& d) { return with_layout(d, mesh); },
                  &error)) {
    fail(error);
    return false;
  }
  last_error_.clear();
  return true;
}

bool MainWindow::apply_preset(const PresetRequest& request) {
  QString error;
  const auto mesh = build_request(request, &error);
  if (!mesh) {
    fail(error);
    return false;
  }
  // The preset names and describes the design it builds: "megatron:tp-pp-dp (world_size=16, tp=2)" and the
  // preset's one line; undo brings the old ones back.
  std::string title = request.name;
  std::string degrees;
  for (const auto& [key, value] : request.degrees) {
    degrees += (degrees.empty() ? "" : ", ") + key + "=" + std::to_string(value);
  }
  if (!degrees.empty()) title += " (" + degrees + ")";
  std::string description;
  for (const auto& info : list_presets()) {
    const auto base = request.name.substr(0, request.name.find(':'));
    if (info.name == request.name || info.name.substr(0, info.name.find(':')) == base) {
      description = info.description;
      if (info.name == request.name) break;
    }
  }
  const auto edit = [&](const Design& d) {
    Design next = apply_mesh(d, *mesh);
    next.name = title.substr(0, kMaxDesignTitleBytes);
    next.description = description.empty() ? std::nullopt : std::optional<std::string>(description);
    validate_design(next);
    return next;
  };
  if (!doc_->edit(tr("Apply preset %1; name and description from the preset").arg(q(request.name)), edit, &error)) {
    fail(error);
    return false;
  }
  last_error_.clear();
  return true;
}

void MainWindow::preset_dialog(const QString& preset) {
  for (const auto& info : list_presets()) {
    if (q(info.name) == preset && info.degrees.empty()) {  // nothing to ask (Llama 3): apply it at once
      if (!apply_preset(PresetRequest{info.name, {}})) QMessageBox::warning(this, tr("Cannot apply preset"), last_error_);
      return;
    }
  }
  PresetDialog dialog(preset, this);
  if (dialog.exec() != QDialog::Accepted) return;
  if (!apply_preset(dialog.request())) QMessageBox::warning(this, tr("Cannot apply preset"), last_error_);
}

// ---- Canvas, slice, overview ------------------------------------------------------------------------------

void MainWindow::rebuild_canvas() {
  const Design& design = preview_ ? preview_->design : doc_->design();
  const DeviceMesh& mesh = preview_ ? preview_->mesh : doc_->mesh();
  if (selected_rank_ && !mesh.contains(*selected_rank_)) selected_rank_.reset();
  hovered_rank_.reset();
  view_->set_grid(nullptr);
  drawn_ = CanvasSource{design.mesh, design.world, design.devices_per_host};
  const std::int64_t hosts_used = (mesh.size() + design.devices_per_host - 1) / design.devices_per_host;
  const QString ranks = mesh.size() == 1 ? tr("1 rank") : tr("%1 ranks").arg(mesh.size());
  const QString on_hosts = hosts_used == 1 ? tr("1 host") : tr("%1 hosts").arg(hosts_used);
  const QString devices = design.devices_per_host == 1 ? tr("1 device") : tr("%1 devices").arg(design.devices_per_host);
  statusBar()->showMessage(tr("%1 on %2 of %3").arg(ranks, on_hosts, devices));
  if (mesh.size() > kMaxDrawnRanks) {
    scene_->clear();
    grid_ = nullptr;
    overlay_ = nullptr;
    view_->tensor_key()->clear();  // no blocks are drawn: no key to them
    auto* note = scene_->addSimpleText(
        tr("This mesh has %1 ranks; the canvas draws meshes of up to %2 ranks, and the Slice dock lists their "
           "groups.\nThe axes table, the Rank dock and export as code still work.")
            .arg(QLocale().toString(static_cast<qlonglong>(mesh.size())), QLocale().toString(kMaxDrawnRanks)));
    note->setBrush(palette().color(QPalette::Text));
    scene_->setSceneRect(note->boundingRect().adjusted(-24, -24, 24, 24));
    rank_panel_->show_rank(selected_rank_);
    view_->fit();
    return;
  }
  const RankTensor instances = mesh.instances();  // the root has one instance: every rank, row-major
  std::vector<std::int64_t> hosts;
  hosts.reserve(instances.values.size());
  for (auto r : instances.values) hosts.push_back(r / design.devices_per_host);
  // The new item first: should it fail, the scene still holds the old one.
  auto* grid = new MeshGridItem(layout_mesh(mesh.shape()), instances.values, std::move(hosts), design.mesh.names);
  overlay_ = nullptr;  // scene_->clear() deletes it with the grid
  scene_->clear();
  grid_ = grid;
  scene_->addItem(grid_);
  overlay_ = new BlockOverlayItem(grid_->geometry());
  overlay_frame_ = -1;
  scene_->addItem(overlay_);
  update_overlay();
  scene_->setSceneRect(grid_->boundingRect().adjusted(-24, -24, 24, 24));
  view_->set_grid(grid_);
  if (selected_rank_) {
    for (std::size_t c = 0; c < grid_->cell_count(); ++c) {
      if (grid_->rank_at(c) == *selected_rank_) grid_->set_selected_cell(c);
    }
  }
  rank_panel_->show_rank(selected_rank_);
  view_->fit();
}

void MainWindow::set_slice(const std::vector<std::string>& axes) { axes_->set_picked(axes); }

void MainWindow::refresh_slice() {
  const DeviceMesh& mesh = preview_ ? preview_->mesh : doc_->mesh();
  const bool drawn = mesh.size() <= kMaxDrawnRanks;
  slice_->set_slice(mesh, drawn ? axes_->picked() : std::vector<std::string>{});
  slice_summary_->setText(drawn || axes_->picked().empty()
                              ? slice_->summary()
                              : tr("This mesh has %1 ranks: slices are listed for meshes of up to %2 ranks.")
                                    .arg(QLocale().toString(static_cast<qlonglong>(mesh.size())),
                                         QLocale().toString(kMaxDrawnRanks)));
  // A tick order mesh[...] refuses, where the table's order would do: say so and offer it. Not where mesh order is
  // refused too (overlapping axes: a flattened axis with one it was made of).
  const std::vector<std::string> in_order = axes_->picked_in_mesh_order();
  bool reorder = !slice_->error().isEmpty() && in_order != axes_->picked();
  if (reorder) {
    try {
      (void)mesh.slice(in_order);
    } catch (const std::exception&) {
      reorder = false;
    }
  }
  QString error = slice_->error();
  if (reorder) {
    QStringList names;
    for (const auto& n : in_order) names << QString::fromStdString(n);
    error += QLatin1Char('\n') + tr("Ticked in mesh order it is mesh[%1].").arg(names.join(QStringLiteral(", ")));
    slice_mesh_order_->setToolTip(tr("Tick the same axes in mesh order: %1").arg(names.join(QStringLiteral(", "))));
  }
  show_message(slice_error_, error);
  slice_mesh_order_->setVisible(reorder);
  groups_->setVisible(slice_->rowCount() > 0);  // nothing ticked or no valid slice: the summary's one line says so
  const auto& s = slice_->slice();
  if (grid_ && (s.cell_group.empty() || s.cell_group.size() == grid_->cell_count())) {
    grid_->set_groups(s.cell_group, static_cast<std::int32_t>(s.groups.size()));
  }
  select_rank(selected_rank_);
}

void MainWindow::select_rank(std::optional<std::int64_t> rank) {
  const auto in_mesh = [this](std::int64_t r) { return r >= 0 && r < doc_->design().world && doc_->mesh().contains(r); };
  if (rank && !in_mesh(*rank)) rank.reset();
  if (hovered_rank_ && !in_mesh(*hovered_rank_)) hovered_rank_.reset();
  selected_rank_ = rank;
  std::optional<std::size_t> cell;
  if (grid_ && rank) {
    for (std::size_t c = 0; c < grid_->cell_count(); ++c) {
      if (grid_->rank_at(c) == *rank) cell = c;
    }
  }
  if (grid_) grid_->set_selected_cell(cell);
  rank_panel_->show_rank(hovered_rank_ ? hovered_rank_ : selected_rank_);
  const int group = rank ? slice_->group_of_rank(*rank) : -1;
  if (grid_) grid_->set_emphasised_group(group);
  syncing_groups_ = true;  // the list follows the canvas; its currentChanged must not emphasise again
  if (group >= 0) {
    groups_->setCurrentIndex(slice_->index(group));
    groups_->scrollTo(slice_->index(group));
  } else {
    groups_->setCurrentIndex(QModelIndex());
  }
  syncing_groups_ = false;
  view_->content_changed();  // the minimap's picture and the host view's legend (the group shown as a span)
}

bool MainWindow::go_to_rank(std::int64_t rank) {
  const DeviceMesh& mesh = preview_ ? preview_->mesh : doc_->mesh();
  if (!mesh.contains(rank)) {
    last_error_ = tr("Rank %1 is not in the mesh (its ranks are 0 to %2).").arg(rank).arg(mesh.size() - 1);
    return false;
  }
  if (!grid_) {
    last_error_ = tr("The canvas does not draw this mesh (%1 ranks).").arg(mesh.size());
    return false;
  }
  select_rank(rank);
  if (const auto cell = grid_->selected_cell()) view_->centre_on_cell(*cell);
  view_->setFocus();  // the arrow keys go on from here
  return true;
}

void MainWindow::go_to_rank_dialog() {
  const DeviceMesh& mesh = preview_ ? preview_->mesh : doc_->mesh();
  bool ok = false;
  const int rank = QInputDialog::getInt(this, tr("Go to rank"), tr("Rank (0 to %1):").arg(mesh.size() - 1),
                                        static_cast<int>(selected_rank_.value_or(0)), 0,
                                        static_cast<int>(std::max<std::int64_t>(mesh.size() - 1, 0)), 1, &ok);
  if (ok && !go_to_rank(rank)) QMessageBox::warning(this, tr("Go to rank"), last_error_);
}

void MainWindow::refresh_overview() {
  const Design& design = doc_->design();
  const DeviceMesh& mesh = doc_->mesh();
  overview_->clear();
  auto* top = new QTreeWidgetItem(overview_, {tr("Design"), q(design.name)});
  new QTreeWidgetItem(top, {tr("World"), QString::number(design.world)});
  new QTreeWidgetItem(top, {tr("Devices per host"), QString::number(design.devices_per_host)});
  new QTreeWidgetItem(top, {tr("Mesh"), q(mesh.repr())});
  new QTreeWidgetItem(top, {tr("Layout"), q(to_string(mesh.layout()))});
  new QTreeWidgetItem(top, {tr("Shape"), join_ints(mesh.shape())});
  if (!design.tensors.empty()) {
    auto* tensors = new QTreeWidgetItem(overview_, {tr("Tensors"), QString()});
    for (const auto& t : design.tensors) {
      new QTreeWidgetItem(tensors, {q(t.name), tr("%1 %2: %3 -> %4")
                                                   .arg(join_ints(t.shape), q(std::string(to_string(t.dtype))),
                                                        q(to_string(t.src)), q(to_string(t.dst)))});
    }
  }
  overview_->expandAll();
}

// ---- Layout -------------------------------------------------------------------------------------------------

void MainWindow::set_plan_area_visible(bool visible) {
  if (presenting()) return;  // the canvas alone until the presentation ends (a run finishing must not pop docks)
  const bool was_visible = plan_area_visible();
  for (QDockWidget* d : plan_area_docks()) d->setVisible(visible);
  // Opened from hidden: room enough for a table or a chart (kPlanAreaShare of the window), the canvas keeps the rest.
  if (visible && !was_visible) {
    resizeDocks({plan_dock_}, {static_cast<int>(height() * kPlanAreaShare)}, Qt::Vertical);
  }
  sync_plan_area_action();
}

bool MainWindow::plan_area_visible() const {
  const auto docks = plan_area_docks();
  return std::any_of(docks.begin(), docks.end(), [](const QDockWidget* d) { return !d->isHidden(); });
}

std::array<QDockWidget*, 3> MainWindow::plan_area_docks() const { return {plan_dock_, costs_dock_, advisor_dock_}; }

std::array<QDockWidget*, 7> MainWindow::all_docks() const {
  return {mesh_dock_, slice_dock_, rank_dock_, overview_dock_, plan_dock_, costs_dock_, advisor_dock_};
}

QString MainWindow::document_dir() const {
  return doc_->path().isEmpty() ? QString() : QFileInfo(doc_->path()).absolutePath();
}

void MainWindow::sync_plan_area_action() {
  if (plan_area_action_ != nullptr) plan_area_action_->setChecked(plan_area_visible());
}

void MainWindow::show_in_plan_area(QDockWidget* dock) {
  set_plan_area_visible(true);
  dock->raise();
}

void MainWindow::show_plan() { show_in_plan_area(plan_dock_); }

void MainWindow::show_costs() { show_in_plan_area(costs_dock_); }

void MainWindow::show_advisor() { show_in_plan_area(advisor_dock_); }

void MainWindow::save_layout() const {
  QSettings settings;
  settings.setValue(QString::fromLatin1(kGeometryKey), saveGeometry());
  settings.setValue(QString::fromLatin1(kStateKey), saveState(kLayoutVersion));
}

bool MainWindow::restore_layout() {
  const QSettings settings;
  const QByteArray geometry = settings.value(QString::fromLatin1(kGeometryKey)).toByteArray();
  const QByteArray state = settings.value(QString::fromLatin1(kStateKey)).toByteArray();
  const bool sized = !geometry.isEmpty() && restoreGeometry(geometry);
  const bool arranged = !state.isEmpty() && restoreState(state, kLayoutVersion);
  sync_plan_area_action();
  return sized || arranged;
}

void MainWindow::reset_layout() {
  QSettings settings;
  settings.remove(QString::fromLatin1(kGeometryKey));
  settings.remove(QString::fromLatin1(kStateKey));
  arrange_docks();
}

// ---- Presentation mode -------------------------------------------------------------------------------------

void MainWindow::set_presentation_mode(bool on) {
  if (on == presenting()) {
    presentation_action_->setChecked(on);
    return;
  }
  if (on) {
    presentation_ = Presentation{saveState(kLayoutVersion), windowState()};
    for (QDockWidget* d : findChildren<QDockWidget*>()) d->hide();
    menuBar()->hide();
    statusBar()->hide();
    animation_bar_->set_large_caption(true);
    showFullScreen();
    view_->set_keyboard_navigation(false);  // the arrows step the animation
    view_->setFocus();  // the playback keys act on the canvas
  } else {
    const Presentation before = *presentation_;
    presentation_.reset();
    animation_bar_->set_large_caption(false);
    view_->set_keyboard_navigation(true);
    menuBar()->show();
    statusBar()->show();
    setWindowState(before.window_state);
    restoreState(before.dock_state, kLayoutVersion);
    sync_plan_area_action();
  }
  presentation_action_->setChecked(on);
  leave_presentation_action_->setEnabled(on);
  view_->fit();
}

// ---- Animation ----------------------------------------------------------------------------------------------

void MainWindow::update_animation() {
  const PlanModel* model = redistribution_->plan_model();
  std::optional<PlanRequest> request = redistribution_->request(redistribution_->planner());
  const std::vector<std::string>& names = design().mesh.names;
  if (!model->has_plan() || !request) {
    animated_plan_.reset();
    animated_request_.reset();
    animation_->clear();
    animation_bar_->set_idle_text(
        !request ? tr("No tensor to animate: add one (Plan > Add tensor...), then its plan plays here step by step.")
        : model->error().isEmpty() ? tr("No plan to animate.")
                                   : tr("No plan to animate: %1").arg(model->error()));
    return;
  }
  // The same plan of the same request keeps its place (an edit elsewhere in the design replans to the same plan).
  const std::shared_ptr<const Plan>& plan = model->shared_plan();
  if (plan == animated_plan_ && animated_request_ && animated_request_->mesh_shape == request->mesh_shape &&
      animated_request_->tensor_shape == request->tensor_shape && animated_request_->src == request->src &&
      animated_request_->dst == request->dst && animated_names_ == names && animation_->has_plan()) {
    update_overlay();  // the frames stand; the key's title follows the tensor's name
    return;
  }
  animated_plan_ = plan;
  animated_request_ = request;
  animated_names_ = names;
  if (!animation_->set_plan(*request, *plan, names)) animation_bar_->set_idle_text(QString());
}

void MainWindow::update_overlay() {
  if (overlay_ == nullptr || grid_ == nullptr) return;
  // The plan's blocks belong to the document's mesh: a previewed layout places its ranks elsewhere, so none are drawn.
  const bool shown = !preview_ && animation_bar_->blocks_shown() && animation_->has_plan() &&
                     animation_->frame(animation_->current()).ranks == overlay_->cell_count();
  grid_->set_numbers_in_band(shown);
  // One colour system at a time: while the blocks fill the cells, the slice groups are only outlined.
  grid_->set_group_paint(shown ? MeshGridItem::GroupPaint::Outline : MeshGridItem::GroupPaint::Fill);
  if (!shown) {
    if (overlay_->has_frame()) overlay_->clear();
    overlay_frame_ = -1;
    if (view_->tensor_key()->has_grid()) {
      view_->tensor_key()->clear();
      view_->content_changed();
    }
    return;
  }
  const int k = animation_->current();
  // The key to the blocks: the tensor as simulated (the shape the blocks are of), under the tensor's current name (a
  // rename, or another tensor of the same request, keeps the plan and its frames).
  QString title = QStringLiteral("%1 %2").arg(redistribution_->current_tensor(), shape_text(animation_->grid().tensor_shape));
  if (animation_->scaled()) title += tr(" (scaled)");
  if (k != overlay_frame_ || !overlay_->has_frame() || title != overlay_title_) {
    overlay_->set_frame(animation_->grid(), animation_->frame(k));
    overlay_frame_ = k;
    overlay_title_ = title;
    view_->tensor_key()->set_grid(animation_->grid(), title);
    view_->content_changed();
  }
  const int from = animation_->transition_from();
  overlay_->set_transition(from >= 0 ? &animation_->frame(from) : nullptr, animation_->transition());
}

bool MainWindow::show_plan_step(int step) {
  if (!animation_->has_plan()) {
    fail(animation_->error().isEmpty() ? tr("No plan to animate for tensor '%1'").arg(redistribution_->current_tensor())
                                       : tr("Cannot animate the plan: %1").arg(animation_->error()));
    return false;
  }
  if (step < 0 || step > animation_->step_count()) {
    const int n = animation_->step_count();
    fail(tr("No step %1: the plan of tensor '%2' has %3; step 0 is the layout before the first")
             .arg(step)
             .arg(redistribution_->current_tensor(), n == 1 ? tr("1 step") : tr("%1 steps").arg(n)));
    return false;
  }
  animation_->jump_to(step);
  show_plan();  // the step's collectives and costs, beside the frame on the canvas
  last_error_.clear();
  return true;
}

}  // namespace meshloom::app
