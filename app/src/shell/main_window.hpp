// The main window: the canvas of the design's mesh in front, with the animation of the current plan under it
// (AnimationBar: controls and caption; a BlockOverlayItem over the canvas shows what every rank holds at the frame
// shown). One narrow column of docks beside it: the mesh designer (axes table), the slice (its groups as rank
// lists), the rank under the mouse and an overview of the design. Under the canvas, the plan area comes up on
// demand: the redistribution plans of the design's tensors, the measured costs (CostsPanel: charts, live benchmark
// runs of the launcher, recalibration) and the layout advisor, tabbed. Menus:
// File (new, open, recent, save, save as, export code, canvas, plan and its animation), Edit (undo, redo), Mesh
// (axis edits, presets), Plan (calibration, export, playback), View (zoom, fit, theme, docks, plan area, reset
// layout, presentation mode). The
// window and dock layout are kept in QSettings between sessions. The window is glue: the document holds the design
// and its history, the models and panels are views over it, and every number shown comes from the engine.
#pragma once

#include <QByteArray>
#include <QMainWindow>
#include <QMessageBox>
#include <QString>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "document/autosave.hpp"
#include "meshloom/design/design.hpp"
#include "meshloom/mesh/device_mesh.hpp"
#include "meshloom/plan/planner.hpp"

class QAction;
class QImage;
class QDockWidget;
class QGraphicsScene;
class QLabel;
class QPushButton;
class QListView;
class QMenu;
class QTreeWidget;

namespace meshloom::app {

class AdvisorPanel;
class AnimationBar;
class AxesModel;
class BlockOverlayItem;
class CodeDialog;
class CostsPanel;
class DesignDocument;
class MeshGridItem;
class MeshPanel;
class MeshView;
class PlanAnimation;
class RankPanel;
class RedistributionPanel;
class SliceModel;
struct PresetRequest;

class MainWindow : public QMainWindow {
  Q_OBJECT

public:
  // autosave_dir: where unsaved changes are copied (default Autosave::default_dir()).
  explicit MainWindow(QWidget* parent = nullptr, const QString& autosave_dir = QString());
  // Disconnects the docks first: QWidget's destructor hides them, and their visibilityChanged must not reach a
  // window that is no longer a MainWindow.
  ~MainWindow() override;

  // Opens a design file. Returns false and leaves the window as it was on error, with the error text in
  // last_error() (and the status bar). Does not ask about unsaved changes (open_dialog does). A bundled example
  // (is_bundled_example) opens as an untitled copy (DesignDocument::open_copy).
  bool open_design(const QString& path);
  // Whether `path` is one of the examples that ship with Meshloom (resources/examples).
  [[nodiscard]] static bool is_bundled_example(const QString& path);
  // Saves to `path` (atomic). False with the error in last_error().
  bool save_design(const QString& path);

  // The design's mesh as code (the engine's export_pytorch / export_jax), written atomically to `path`.
  enum class CodeKind { PyTorch, Jax };
  bool export_code(CodeKind kind, const QString& path);
  // The code's preview (File > Export > PyTorch / JAX code...): Copy and Save...; null with last_error() when the
  // engine cannot write code for the design.
  [[nodiscard]] std::unique_ptr<CodeDialog> make_code_dialog(CodeKind kind);
  // The canvas as an image (PNG at 2 px per scene unit, or SVG), written atomically.
  enum class ImageKind { Png, Svg };
  bool export_canvas(ImageKind kind, const QString& path);
  // The current tensor's plans as Markdown (RedistributionPanel::markdown), written atomically. False with
  // the error in last_error() when the design has no tensor or the file cannot be written.
  bool export_plan(const QString& path);
  // The current plan's animation, with the block overlay at every frame (frame k: the layout after step k): a PDF
  // handout at `path` (one page per frame, its caption as text), or PNG frames in the folder `path`
  // (<tensor>_step<k>.png); see plan/animation_export.hpp. Atomic: a failure leaves no partial file or set. False
  // with the error in last_error() when there is no plan to animate (or a layout is previewed) or the files cannot
  // be written. The canvas shows the animation's own frame again afterwards.
  enum class AnimationKind { PdfHandout, PngFrames };
  bool export_animation(AnimationKind kind, const QString& path);
  // Presentation mode (View > Presentation mode, F5; Esc leaves): the canvas full screen with its animation bar
  // and a large caption, the docks, menu bar and status bar hidden; Left and Right step, Space plays or pauses.
  // Leaving restores the docks (saveState/restoreState) and the window state (maximized, full screen, normal) as
  // they were on entering.
  void set_presentation_mode(bool on);
  [[nodiscard]] bool presenting() const noexcept { return presentation_.has_value(); }
  [[nodiscard]] QAction* presentation_action() const noexcept { return presentation_action_; }
  // Names `path` as the design's calibration (one undoable edit; relative to the design's folder when it is
  // inside it) and plans with it, showing the Redistribution dock. False with the reason in last_error() when the
  // file does not load or was measured on another mesh; the design is unchanged then.
  bool apply_calibration(const QString& path);
  // Shows frame `step` of the current plan's animation (0: before the first step; k: after step k), paused, with
  // the plan area open on the Redistribution dock. False with the reason in last_error() when there is no plan to
  // animate or the step is past its last.
  bool show_plan_step(int step);
  // The plan area: the Redistribution, Costs and Advisor docks, tabbed under the canvas. Hidden at first launch;
  // View > Plan area (plan_area_action, Ctrl+J) toggles it, and what needs it shows it (show_plan, show_costs,
  // show_advisor: a plan step asked for, a calibration applied, a benchmark run or finished, layouts ranked).
  void set_plan_area_visible(bool visible);
  // True while any dock of the plan area is shown.
  [[nodiscard]] bool plan_area_visible() const;
  [[nodiscard]] QAction* plan_area_action() const noexcept { return plan_area_action_; }
  // Shows the plan area with the Redistribution dock in front.
  void show_plan();
  // Shows the plan area with the Costs dock in front.
  void show_costs();
  // Shows the plan area with the Advisor dock in front.
  void show_advisor();
  // The window's geometry and dock layout between sessions (QSettings): save_layout writes them (on close),
  // restore_layout reads them back (the app calls it at start; false, with the layout unchanged, when nothing
  // usable was saved), and reset_layout (View > Reset layout) puts back the first-launch layout and forgets the
  // saved one.
  void save_layout() const;
  bool restore_layout();
  void reset_layout();
  // Replaces the mesh by a preset's (one undoable edit). False with the framework's error in last_error().
  bool apply_preset(const PresetRequest& request);
  // Shows `mesh` (a layout of the design's axes, as the advisor proposes it) on the canvas without changing the
  // design; nullopt shows the design's own mesh again. Any edit of the design ends the preview.
  void preview_layout(const std::optional<MeshSpec>& mesh);
  [[nodiscard]] bool previewing() const noexcept { return preview_.has_value(); }
  // Makes `mesh` the design's mesh (the engine's with_layout: states and flattened axes follow their axes), one
  // undoable edit. False with the engine's message in last_error().
  bool apply_layout(const MeshSpec& mesh);
  // Ticks the axes to slice by (the slice dock shows its groups or why the pick is invalid).
  void set_slice(const std::vector<std::string>& axes);
  // Selects a rank (its info in the rank dock, its slice group emphasised); nullopt clears.
  void select_rank(std::optional<std::int64_t> rank);
  // View > Go to rank (Ctrl+G): selects `rank` and centres the canvas on it, zoomed in until its number shows.
  // False with the reason in last_error() for a rank the mesh does not have (or a mesh too large to draw).
  bool go_to_rank(std::int64_t rank);
  // Page `frame` of the current plan's PDF handout (File > Export > Plan animation as PDF handout) as an image
  // `width` pixels wide, drawn as the PDF draws it; a null image with the reason in last_error() when there is no
  // plan to animate or no such frame.
  [[nodiscard]] QImage handout_page(int frame, int width);
  // Opens an autosaved copy: on top of its original file as one undoable edit when that still loads and was not
  // saved after the copy was written, else as an unsaved design (untitled when the file is newer: it keeps what was
  // saved). The copy is removed once it is open.
  bool recover(const Autosave::Recovery& recovery);
  // Asks, for the newest copy left by a crashed session, whether to recover it.
  void offer_recovery();

  // What to ask before unsaved changes are dropped: Save, Discard or Cancel. Tests replace the dialog.
  using UnsavedPrompt = std::function<QMessageBox::StandardButton(const QString& document_name)>;
  void set_unsaved_prompt(UnsavedPrompt prompt) { unsaved_prompt_ = std::move(prompt); }
  // Resolves unsaved changes before they would be lost: true when it is fine to go on.
  bool maybe_save();

  [[nodiscard]] const QString& last_error() const noexcept { return last_error_; }
  [[nodiscard]] const Design& design() const;
  [[nodiscard]] DesignDocument* document() const noexcept { return doc_; }
  [[nodiscard]] AxesModel* axes_model() const noexcept { return axes_; }
  [[nodiscard]] SliceModel* slice_model() const noexcept { return slice_; }
  [[nodiscard]] MeshPanel* mesh_panel() const noexcept { return mesh_panel_; }
  [[nodiscard]] RankPanel* rank_panel() const noexcept { return rank_panel_; }
  [[nodiscard]] RedistributionPanel* redistribution_panel() const noexcept { return redistribution_; }
  [[nodiscard]] CostsPanel* costs_panel() const noexcept { return costs_; }
  [[nodiscard]] AdvisorPanel* advisor_panel() const noexcept { return advisor_; }
  [[nodiscard]] PlanAnimation* animation() const noexcept { return animation_; }
  [[nodiscard]] AnimationBar* animation_bar() const noexcept { return animation_bar_; }
  [[nodiscard]] const BlockOverlayItem* overlay() const noexcept { return overlay_; }
  [[nodiscard]] Autosave* autosave() const noexcept { return autosave_; }
  [[nodiscard]] const MeshGridItem* grid() const noexcept { return grid_; }
  [[nodiscard]] MeshView* view() const noexcept { return view_; }
  [[nodiscard]] QStringList recent_files() const;
  // File > Open Recent's entry: a file that no longer exists is dropped from the list, with the reason in *error,
  // before anything is asked; otherwise the unsaved changes are asked about (a cancel: false, *error empty) and the
  // file opened (false and why in *error when it cannot be).
  bool open_recent(const QString& path, QString* error);

  // Themes: the platform's palette, or Meshloom's light or dark palette (Fusion style).
  enum class Theme { System, Light, Dark };
  static void apply_theme(Theme theme);

protected:
  void closeEvent(QCloseEvent* event) override;

private:
  bool wrote(const QString& path);  // an export succeeded: no error, "Wrote <path>" in the status bar; true

  // What the canvas draws: an edit that leaves it equal does not rebuild the grid (nor refit the view).
  struct CanvasSource {
    MeshSpec mesh;
    std::int64_t world = 0;
    std::int64_t devices_per_host = 0;
    friend bool operator==(const CanvasSource&, const CanvasSource&) = default;
  };
  std::optional<CanvasSource> drawn_;

  void go_to_rank_dialog();
  [[nodiscard]] QString handout_title() const;  // "<design>: tensor <name>" on every page of the handout
  void build_menus();
  void build_docks();
  void build_canvas();
  void arrange_docks();  // the first-launch layout: the side column beside the canvas, the plan area hidden
  void widen_side_column();  // to the axes table's width (within kSideMaxShare of the window), never narrower
  void sync_plan_area_action();
  void show_in_plan_area(QDockWidget* dock);  // opens the plan area with `dock` in front
  [[nodiscard]] std::array<QDockWidget*, 3> plan_area_docks() const;  // Redistribution, Costs, Advisor
  [[nodiscard]] std::array<QDockWidget*, 7> all_docks() const;        // the side column's, then the plan area's
  [[nodiscard]] QString document_dir() const;  // the design file's folder (file dialogs start there); empty if none
  void update_animation();  // the panel's plan into the animation
  void update_overlay();    // the animation's frame onto the canvas
  void new_dialog();
  void open_dialog();
  bool save_dialog(bool save_as);
  void export_code_dialog(CodeKind kind);
  void export_canvas_dialog(ImageKind kind);
  void export_plan_dialog();
  void export_animation_dialog(AnimationKind kind);
  void calibration_dialog();
  void preset_dialog(const QString& preset);
  void remember_recent(const QString& path);
  void fill_recent_menu();
  void rebuild_canvas();
  void refresh_slice();
  void refresh_overview();
  void update_title();
  void fail(const QString& message);
  void commit_pending();  // what is typed in the panels but not yet committed

  DesignDocument* doc_ = nullptr;
  AxesModel* axes_ = nullptr;
  SliceModel* slice_ = nullptr;
  Autosave* autosave_ = nullptr;
  QGraphicsScene* scene_ = nullptr;
  MeshView* view_ = nullptr;
  MeshGridItem* grid_ = nullptr;
  BlockOverlayItem* overlay_ = nullptr;  // owned by the scene; over grid_
  int overlay_frame_ = -1;               // the frame overlay_ holds
  QString overlay_title_;                // and the tensor key's title with it
  PlanAnimation* animation_ = nullptr;
  AnimationBar* animation_bar_ = nullptr;
  std::shared_ptr<const Plan> animated_plan_;  // what animation_ was given, with its request and axis names
  std::optional<PlanRequest> animated_request_;
  std::vector<std::string> animated_names_;
  MeshPanel* mesh_panel_ = nullptr;
  RankPanel* rank_panel_ = nullptr;
  RedistributionPanel* redistribution_ = nullptr;
  CostsPanel* costs_ = nullptr;
  AdvisorPanel* advisor_ = nullptr;
  QDockWidget* mesh_dock_ = nullptr;
  QDockWidget* slice_dock_ = nullptr;
  QDockWidget* rank_dock_ = nullptr;
  QDockWidget* overview_dock_ = nullptr;
  QDockWidget* plan_dock_ = nullptr;  // the plan area: plan_dock_, costs_dock_ and advisor_dock_, tabbed
  QDockWidget* costs_dock_ = nullptr;
  QDockWidget* advisor_dock_ = nullptr;
  QAction* plan_area_action_ = nullptr;
  QAction* presentation_action_ = nullptr;
  QAction* leave_presentation_action_ = nullptr;  // Esc, enabled while presenting
  struct Presentation {
    QByteArray dock_state;         // saveState() on entering
    Qt::WindowStates window_state;  // windowState() on entering
  };
  std::optional<Presentation> presentation_;  // set while presenting
  struct LayoutPreview {
    Design design;    // the document's design with the previewed layout
    DeviceMesh mesh;  // built from it
  };
  std::optional<LayoutPreview> preview_;  // what the canvas shows instead of the document, while set
  QTreeWidget* overview_ = nullptr;
  QLabel* slice_summary_ = nullptr;
  QLabel* slice_error_ = nullptr;
  QPushButton* slice_mesh_order_ = nullptr;  // "Use mesh order": shown while the tick order is refused
  QListView* groups_ = nullptr;
  QMenu* recent_menu_ = nullptr;
  std::optional<std::int64_t> selected_rank_;
  std::optional<std::int64_t> hovered_rank_;
  bool syncing_groups_ = false;
  UnsavedPrompt unsaved_prompt_;
  QString last_error_;
};

}  // namespace meshloom::app
