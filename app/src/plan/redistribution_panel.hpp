// RedistributionPanel: how one of the design's tensors moves from its source state to its target state. A tensor
// picker (the design's tensors by name) with Add tensor..., Rename... and Remove beside it, the tensor's shape (an
// editable "1024, 512") and dtype (a box of the engine's dtypes), its source and target states as text (the
// engine's state text form, "S(0)[0]S(0)[1]R") and axis by axis (PlacementPicker: a placement and a shard-order
// place per mesh axis), a planner (graph, greedy, auto) and a cost model (fixed, comm,
// calibrated when the design's calibration file loads); the plan of the chosen planner, and under it the other
// planner in one line ("greedy: the same plan", "greedy: 3 steps, 14.4 µs, +12%", "greedy refuses: ...").
//
// It is a view over the engine: plans come from PlanCache (one per cost model; the engine's plan_redistribution),
// and editing the source or target text, the shape or the dtype, and adding, renaming or removing a tensor, is one
// undoable design edit through the document (parse_state, check_state and the engine's tensor edits of
// meshloom/design/edit.hpp decide what is valid). An impossible request for the chosen planner (greedy refusing a
// non-default shard order, no path between partial ops, a state that does not fit, a search past the state budget)
// shows the engine's message in red under the table and no rows; the other planner's refusal is a neutral note; a refused state text shows the message under its field,
// and the design is unchanged.
//
// After a calibration replaces another (Apply to planner), the plan under the calibrated model is priced under the
// old calibration and the new one side by side; where run or validate records (set_step_measurements) measured
// the plan's steps (the same collective, axes, from and to placements and bytes), the line says which calibration
// came closer: the smaller mean relative error |predicted - measured| / measured over the measured steps. Everything runs on the GUI thread; the state budget (kStateBudget) bounds every
// search, so a large mesh ends in the engine's RuntimeError rather than a frozen window.
#pragma once

#include <QList>
#include <QString>
#include <QWidget>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "meshloom/design/design.hpp"
#include "meshloom/plan/planner.hpp"

class QAction;
class QComboBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QTableView;

namespace meshloom::app {

class DesignDocument;
class EditDialog;
class PlacementPicker;
class PlanModel;
class PredictionRecords;
class TensorDialog;

class RedistributionPanel : public QWidget {
  Q_OBJECT

public:
  enum class CostModelKind { Fixed, Comm, Calibrated };
  // The states one search may settle (PlanRequest::state_budget): at most about half a second of planning on
  // one core (a refused request is remembered, so it is not searched again on every redraw).
  static constexpr std::size_t kStateBudget = 200'000;

  explicit RedistributionPanel(DesignDocument* doc, QWidget* parent = nullptr);
  ~RedistributionPanel() override;

  // The tensor shown, by name; "" when the design has none.
  [[nodiscard]] QString current_tensor() const;
  // Shows the tensor of that name; false (nothing changes) when the design has none of that name.
  bool select_tensor(const QString& name);

  [[nodiscard]] PlannerKind planner() const;
  void set_planner(PlannerKind kind);
  [[nodiscard]] CostModelKind cost_model() const;
  // False (nothing changes) when the model is not available (calibrated without a calibration that loads).
  bool set_cost_model(CostModelKind kind);
  // Whether the calibrated model can be chosen, and when not, why (the tooltip of its entry).
  [[nodiscard]] bool calibrated_available() const noexcept { return calibrated_reason_.isEmpty(); }
  [[nodiscard]] const QString& calibrated_reason() const noexcept { return calibrated_reason_; }
  [[nodiscard]] std::size_t state_budget() const noexcept { return budget_; }
  void set_state_budget(std::size_t budget);

  // Sets the current tensor's source or target state from text, as editingFinished on its field does: one
  // undoable design edit. False when the text is refused: the engine's message (naming the text) is shown under
  // the field and the design is unchanged. Text equal to the current state pushes nothing and returns true.
  bool set_source(const QString& text);
  bool set_target(const QString& text);
  // Commits what is typed in the shape, source and target fields but not yet committed (before saving or closing).
  void commit_pending();

  // ---- Tensor edits ----
  // Each is one undoable design edit, the engine's add_tensor, rename_tensor, remove_tensor, set_tensor_shape or
  // set_tensor_dtype, named on the undo stack "Add tensor w", "Rename tensor w to w2", "Remove tensor w" (", and its
  // workload entry" when the workload listed it: the entry goes with the tensor, and a rename renames it), "Shape of
  // w: [1024, 512] → [2048, 512]", "Dtype of w: float32 → bfloat16". A refused edit returns false, shows why (the
  // engine's message, naming the value) under the picker (message "tensors"), the shape field ("shape") or the dtype
  // box ("dtype"), and leaves the design unchanged; the shape field keeps what was typed, the dtype box shows the
  // design's dtype again. The next edit that succeeds clears the message. After add and rename the picker shows that
  // tensor; after remove, the tensor that took its place. An edit that changes nothing pushes nothing and returns
  // true.
  bool add_tensor(const DesignTensor& tensor);
  bool rename_tensor(const QString& from, const QString& to);
  bool remove_tensor(const QString& name);
  // The current tensor's shape from text as parse_shape (plan/tensor_dialog.hpp) reads it: "1024, 512", "[]".
  bool set_shape(const QString& text);
  // The current tensor's dtype by name ("bfloat16"); an unknown name is refused with the names there are.
  bool set_dtype(const QString& name);
  // The dialogs behind Add tensor... and Rename... (the actions exec them and apply add_tensor / rename_tensor).
  // Add: a free name (tensor0, tensor1, ...), shape [1024, 1024], float32, R on every axis as source and target.
  // Rename: the current tensor's name; nullptr without a tensor.
  [[nodiscard]] std::unique_ptr<TensorDialog> make_add_dialog();
  [[nodiscard]] std::unique_ptr<EditDialog> make_rename_dialog();
  // Add tensor..., Rename tensor..., Remove tensor: the buttons beside the picker, and the Plan menu's entries.
  // Rename and Remove are disabled without a tensor.
  [[nodiscard]] QList<QAction*> tensor_actions() const;
  [[nodiscard]] QComboBox* tensor_box() const noexcept { return tensor_; }
  [[nodiscard]] QLineEdit* shape_field() const noexcept { return shape_; }
  [[nodiscard]] QComboBox* dtype_box() const noexcept { return dtype_; }
  // The current tensor's graph and greedy plans under the chosen cost model as Markdown (the engine's
  // plan_markdown: steps, bytes, costs, and the two totals compared); empty when the design has no tensor.
  [[nodiscard]] std::string markdown() const;

  // ---- old calibration against new ----
  // The calibration the calibrated model prices with now; nullopt when calibrated is unavailable.
  [[nodiscard]] std::optional<Calibration> calibration() const;
  // Apply calibration: the design's calibration set to `applied` as the undoable edit `text` (false, with the
  // reason in *error, when the design refuses it), then the calibrated model chosen. While the design names
  // `applied`, the calibrated model is chosen, the calibration it replaced (`replaced_label`: its file name) differs
  // and is of this mesh, the plan is priced under both (message "calibrations"); an undo of the Apply hides that line
  // and gives back the cost model chosen before it, a redo brings both back (unless another model was chosen in
  // between). The calibration file is read again, so that one rewritten since (calibrate run again) prices the plan;
  // applying the calibration the design already names pushes no edit and keeps what it replaced.
  bool apply_calibration(const QString& text, const std::string& applied, const QString& replaced_label,
                         QString* error);
  // Measured steps of run or validate records (`label`: their file name), matched against the plan's steps in
  // that line; nullptr: none.
  void set_step_measurements(std::shared_ptr<const PredictionRecords> records, const QString& label);

  // The step the plan animation shows: frame k is the layout after step k, so step k (1..n) is highlighted, as
  // the selected and current row k - 1 of the plan table, and of the graph or greedy table when its plan is the
  // one animated (the same steps); 0 (frame 0, before step 1) highlights no row. Kept when the plans are planned
  // again (the rows are reselected; MainWindow sets it from PlanAnimation::frame_changed).
  void show_step(int step);
  [[nodiscard]] int shown_step() const noexcept { return step_; }

  // What the panel asks the engine for the current tensor with `kind` (auto stays auto); nullopt without one.
  [[nodiscard]] std::optional<PlanRequest> request(PlannerKind kind) const;

  // The plan of the chosen planner (the one table), and the graph and greedy plans it is compared with.
  [[nodiscard]] PlanModel* plan_model() const noexcept { return plan_model_; }
  [[nodiscard]] PlanModel* graph_model() const noexcept { return graph_model_; }
  [[nodiscard]] PlanModel* greedy_model() const noexcept { return greedy_model_; }
  [[nodiscard]] QTableView* plan_table() const noexcept { return plan_table_; }
  [[nodiscard]] QLineEdit* source_field() const noexcept { return src_; }
  [[nodiscard]] QLineEdit* target_field() const noexcept { return dst_; }
  // The per-axis pickers under the source and target fields (PlacementPicker), one label, placement box and
  // shard-order box per mesh axis, the source's and the target's boxes of an axis one above the other. They show the
  // current tensor's states from the design: on every design change (undo and redo too), another tensor, axes
  // added, removed, renamed or resized, another tensor rank (the boxes are rebuilt then); hidden without a tensor.
  // A choice there is set_source / set_target of the new state's text (to_string): the same single undoable edit
  // as that text typed in the field, refused with the same inline message under the field, after which the picker
  // shows the design's state again.
  [[nodiscard]] PlacementPicker* source_picker() const noexcept { return src_picker_; }
  [[nodiscard]] PlacementPicker* target_picker() const noexcept { return dst_picker_; }
  // A picker's placement box (entries PlacementPicker::choices(rank): R, S(0).., P(sum)..) and shard-order box
  // ([k], shown only where the axis shares its dim with other axes) of mesh axis `axis`, of the source picker
  // when `source`, else of the target's; nullptr past the mesh's last axis.
  [[nodiscard]] QComboBox* placement_picker(bool source, std::size_t axis) const;
  [[nodiscard]] QSpinBox* order_picker(bool source, std::size_t axis) const;

  // The inline message shown (empty when none). Fields: "source", "target" (a refused state text), "shape", "dtype"
  // (a refused shape or dtype), "tensors" (a refused add, rename or remove), "plan" (the engine's error for the
  // chosen plan, shown), "graph", "greedy" (the engine's error for that planner's plan, shown or not), "tensor" (the
  // hint of a design without tensors), "other" (the other planner's line under the plan), "recalibration" (before
  // calibration against after),
  // "calibrations" (the old calibration against the new).
  [[nodiscard]] QString message(const QString& field) const;

signals:
  // The three plans were planned again (a design edit, another tensor, planner or cost model).
  void plans_changed();

public slots:
  // Re-reads the design (tensors, fields, calibration) and plans again. Called on design_changed.
  void refresh();

private:
  struct ModelSlot;
  struct Outcome {
    std::shared_ptr<const Plan> plan;
    QString error;
  };

  void sync_tensors();
  void sync_fields();
  void sync_pickers();  // the pickers from the design (after a refused picker choice too), aligned
  void update_calibration();
  void replan();
  [[nodiscard]] int tensor_index() const;  // into design().tensors; -1 when none
  [[nodiscard]] ModelSlot& slot(CostModelKind kind);
  [[nodiscard]] Outcome plan_with(ModelSlot& slot, const PlanRequest& request);
  [[nodiscard]] QString cost_unit(CostModelKind kind) const;
  bool set_state(bool source, const QString& text);
  // Runs one tensor edit through the document as the undo entry `text`; a refusal shows under `label`.
  bool edit_tensor(const QString& text, const std::function<Design(const Design&)>& edit, QLabel* label);
  void add_dialog();
  void rename_dialog();
  // The other planner's line under the plan and its tooltip (its steps, or its whole refusal).
  [[nodiscard]] std::pair<QString, QString> other_planner_text(PlannerKind chosen) const;
  // The "calibrations" line and its tooltip (the steps one by one); empty when there is nothing to compare.
  [[nodiscard]] std::pair<QString, QString> calibrations_text(const PlanRequest& request, const Plan& plan) const;

  DesignDocument* doc_;
  std::size_t budget_ = kStateBudget;
  int step_ = 0;  // show_step
  std::vector<std::unique_ptr<ModelSlot>> slots_;  // one per CostModelKind
  QString calibrated_reason_;
  // The cost model shown (cost_'s, as last chosen), the one before the calibrated model was chosen, and whether the
  // calibrated model was left because its calibration went away (undo of Apply calibration): it comes back with it.
  CostModelKind shown_model_ = CostModelKind::Comm;
  CostModelKind before_calibrated_ = CostModelKind::Comm;
  bool left_calibrated_ = false;

  QComboBox* tensor_ = nullptr;
  QLabel* tensor_hint_ = nullptr;
  QLabel* tensor_message_ = nullptr;
  QAction* add_action_ = nullptr;
  QAction* rename_action_ = nullptr;
  QAction* remove_action_ = nullptr;
  QLineEdit* shape_ = nullptr;
  QLabel* shape_message_ = nullptr;
  QComboBox* dtype_ = nullptr;
  QLabel* dtype_message_ = nullptr;
  QLineEdit* src_ = nullptr;
  QLineEdit* dst_ = nullptr;
  PlacementPicker* src_picker_ = nullptr;
  PlacementPicker* dst_picker_ = nullptr;
  QLabel* src_message_ = nullptr;
  QLabel* dst_message_ = nullptr;
  QComboBox* planner_ = nullptr;
  QComboBox* cost_ = nullptr;
  QGroupBox* plan_box_ = nullptr;
  PlanModel* plan_model_ = nullptr;
  PlanModel* graph_model_ = nullptr;
  PlanModel* greedy_model_ = nullptr;
  QTableView* plan_table_ = nullptr;
  QLabel* plan_summary_ = nullptr;
  QLabel* recalibration_ = nullptr;  // under the calibrated model: the same request under comm, before against after
  QLabel* calibrations_ = nullptr;   // under the calibrated model: the plan under the old calibration and the new
  std::optional<Calibration> previous_calibration_;
  QString previous_label_;
  // The file the last Apply set as the design's calibration (calibration_file: the same file after Save As into
  // another folder), the cost model chosen before that Apply, and whether the design names another since (an undo
  // of the Apply): apply_calibration.
  std::optional<std::string> applied_calibration_;
  CostModelKind model_before_apply_ = CostModelKind::Comm;
  bool apply_undone_ = false;
  bool applying_ = false;  // inside apply_calibration's edit: follow_apply waits for it
  // After a design change: an undo of the last Apply gives back the model chosen before it (see apply_calibration).
  void follow_apply();
  // Shows `kind` in the cost model box as the design's state, not the user's choice (no signal; callers replan).
  void show_model(CostModelKind kind);
  std::shared_ptr<const PredictionRecords> measured_;
  QString measured_label_;
  QLabel* plan_message_ = nullptr;
  QLabel* other_ = nullptr;  // the other planner, in one line
  QString graph_error_;      // the engine's error for the graph plan (empty when it has one)
  QString greedy_error_;
};

}  // namespace meshloom::app
