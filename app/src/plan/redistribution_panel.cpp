#include "plan/redistribution_panel.hpp"

#include <QAction>
#include <QComboBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QRegularExpression>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QToolButton>
#include <QUndoStack>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <exception>
#include <filesystem>
#include <initializer_list>
#include <numeric>
#include <string>

#include "document/design_document.hpp"
#include "shell/inline_message.hpp"
#include "meshloom/design/design.hpp"
#include "meshloom/dtype.hpp"
#include "meshloom/error.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/report.hpp"
#include "mesh/edit_dialog.hpp"
#include "meshloom/design/edit.hpp"
#include "plan/placement_picker.hpp"
#include "plan/plan_model.hpp"
#include "plan/tensor_dialog.hpp"
#include "costs/prediction_points.hpp"

namespace meshloom::app {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }
QString q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

std::string ints_key(const std::vector<std::int64_t>& values) {
  std::string out;
  for (const auto v : values) out += std::to_string(v) + ",";
  return out;
}

QString planner_name(PlannerKind kind) {
  switch (kind) {
    case PlannerKind::Graph: return QStringLiteral("graph");
    case PlannerKind::Greedy: return QStringLiteral("greedy");
    case PlannerKind::Auto: return QStringLiteral("auto");
  }
  return {};
}

// An engine message about typed state text, naming the text when the engine did not quote it as typed.
QString about_text(const QString& text, const QString& message) {
  const QString typed = text.trimmed();
  return message.contains(QStringLiteral("\"%1\"").arg(typed)) ? message
                                                                 : QStringLiteral("\"%1\": %2").arg(typed, message);
}

// The same request (PlanCache's notion of equality; it keeps no errors, the panel remembers them).
bool same_request(const PlanRequest& a, const PlanRequest& b) {
  return a.mesh_shape == b.mesh_shape && a.tensor_shape == b.tensor_shape && a.src == b.src && a.dst == b.dst &&
         a.planner == b.planner && a.variant == b.variant && a.itemsize == b.itemsize && a.coordinate == b.coordinate &&
         a.flattened == b.flattened && a.state_budget == b.state_budget;
}


QTableView* make_plan_table(QWidget* parent, PlanModel* model) {
  auto* table = new QTableView(parent);
  table->setTabKeyNavigation(false);  // Tab leaves the table (arrows move between cells)
  table->setModel(model);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->setSelectionMode(QAbstractItemView::SingleSelection);
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table->setAlternatingRowColors(true);
  table->setWordWrap(false);
  table->verticalHeader()->setVisible(false);
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  // From → To takes what is left and elides in the middle (the whole states in its tooltip), so the columns fit
  // the dock rather than hiding Cost behind a scroll bar.
  table->horizontalHeader()->setSectionResizeMode(PlanModel::FromToColumn, QHeaderView::Stretch);
  table->setTextElideMode(Qt::ElideMiddle);
  table->horizontalHeader()->setStretchLastSection(false);
  // Its height is what the plan area has left, at least the header and three steps: the panel's word-wrapped lines
  // make the dock's scroll area ask the panel's height for its width, which counted the table's 192 px hint and
  // scrolled the panel at 1280x800.
  table->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Ignored);
  table->setMinimumHeight(table->horizontalHeader()->sizeHint().height() + 3 * table->verticalHeader()->defaultSectionSize() +
                          2 * table->frameWidth());
  return table;
}

// A relative error as a percentage: "3.4 %"; "—" when not finite.
QString format_relative(double fraction) {
  return std::isfinite(fraction) ? QString::number(fraction * 100.0, 'f', 1) + QStringLiteral(" %") : QStringLiteral("—");
}

constexpr std::size_t kRememberedFailures = 32;  // per cost model: refused requests are not planned again

}  // namespace

// A cost model and its plan cache (the cache points at the model: it is declared after it, so destroyed first).
struct RedistributionPanel::ModelSlot {
  std::unique_ptr<CostModel> model;
  std::unique_ptr<PlanCache> cache;
  std::string key;  // what the model was built for; empty: not built
  std::vector<std::pair<PlanRequest, QString>> failures;

  void reset(std::unique_ptr<CostModel> next, std::string next_key) {
    cache.reset();
    model = std::move(next);
    if (model) cache = std::make_unique<PlanCache>(*model);
    key = model ? std::move(next_key) : std::string();
    failures.clear();
  }
};

RedistributionPanel::RedistributionPanel(DesignDocument* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
  for (int i = 0; i < 3; ++i) slots_.push_back(std::make_unique<ModelSlot>());

  // The request: tensor, states, planner, cost model.
  auto* form = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  tensor_ = new QComboBox(this);
  tensor_->setToolTip(tr("The design's tensors: pick the one whose redistribution to plan"));
  tensor_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  tensor_hint_ = new QLabel(tr("This design has no tensors. Add one with Add tensor... beside the picker (or Plan > "
                               "Add tensor...): its name, shape, dtype, and source and target states."),
                            this);
  tensor_hint_->setWordWrap(true);
  tensor_hint_->setVisible(false);
  tensor_message_ = make_message_label(this);
  const auto action = [this](const QString& text, const QString& button, const QString& tip) {
    auto* a = new QAction(text, this);
    a->setIconText(button);
    a->setToolTip(tip);
    a->setStatusTip(tip);
    addAction(a);
    return a;
  };
  add_action_ = action(tr("Add &tensor..."), tr("Add tensor..."),
                       tr("Add a tensor to the design: its name, shape, dtype, source and target states"));
  rename_action_ = action(tr("Re&name tensor..."), tr("Rename..."),
                          tr("Rename the tensor shown (and its workload entry)"));
  remove_action_ = action(tr("Remo&ve tensor"), tr("Remove"),
                          tr("Remove the tensor shown from the design (and its workload entry); Ctrl+Z brings it back"));
  connect(add_action_, &QAction::triggered, this, &RedistributionPanel::add_dialog);
  connect(rename_action_, &QAction::triggered, this, &RedistributionPanel::rename_dialog);
  connect(remove_action_, &QAction::triggered, this, [this] { (void)remove_tensor(current_tensor()); });
  auto* tensor_row = new QWidget(this);
  auto* tensor_layout = new QHBoxLayout(tensor_row);
  tensor_layout->setContentsMargins(0, 0, 0, 0);
  tensor_layout->addWidget(tensor_, 1);
  for (QAction* a : {add_action_, rename_action_, remove_action_}) {
    auto* b = new QToolButton(tensor_row);
    b->setDefaultAction(a);
    b->setToolButtonStyle(Qt::ToolButtonTextOnly);
    tensor_layout->addWidget(b);
  }
  auto* tensor_label = new QLabel(tr("&Tensor"), this);
  tensor_label->setBuddy(tensor_);
  shape_ = new QLineEdit(this);
  shape_->setPlaceholderText(tr("e.g. 1024, 512"));
  shape_->setToolTip(tr("The tensor's global shape: one size per dim, separated by commas (empty for a scalar). Press "
                        "Enter to apply; Ctrl+Z undoes."));
  shape_message_ = make_message_label(this);
  dtype_ = new QComboBox(this);
  add_dtype_items(dtype_);
  dtype_->setToolTip(tr("The tensor's element type (its size is the planner's itemsize)"));
  dtype_message_ = make_message_label(this);
  src_ = new QLineEdit(this);
  src_->setToolTip(tr("Where the tensor starts: one placement per mesh axis, R, S(d), P(op), e.g. S(0)[0]S(0)[1]R "
                      "(S(d)[k]: the k-th axis to split dim d). Press Enter to apply; Ctrl+Z undoes."));
  dst_ = new QLineEdit(this);
  dst_->setToolTip(tr("Where the tensor must end, in the same form as the source"));
  src_message_ = make_message_label(this);
  dst_message_ = make_message_label(this);
  src_picker_ = new PlacementPicker(this);
  dst_picker_ = new PlacementPicker(this);
  planner_ = new QComboBox(this);
  planner_->addItem(QStringLiteral("graph"), static_cast<int>(PlannerKind::Graph));
  planner_->addItem(QStringLiteral("greedy"), static_cast<int>(PlannerKind::Greedy));
  planner_->addItem(QStringLiteral("auto"), static_cast<int>(PlannerKind::Auto));
  planner_->setItemData(0, tr("Dijkstra over placements and shard orders: the cheapest plan"), Qt::ToolTipRole);
  planner_->setItemData(1, tr("PyTorch's older default: placements only; refuses non-default shard orders"),
                        Qt::ToolTipRole);
  planner_->setItemData(2, tr("PyTorch's choice: greedy when both states have the default shard order, else graph"),
                        Qt::ToolTipRole);
  planner_->setToolTip(tr("The planner of the plan above the comparison"));
  cost_ = new QComboBox(this);
  cost_->addItem(QStringLiteral("fixed"), static_cast<int>(CostModelKind::Fixed));
  cost_->addItem(QStringLiteral("comm"), static_cast<int>(CostModelKind::Comm));
  cost_->addItem(QStringLiteral("calibrated"), static_cast<int>(CostModelKind::Calibrated));
  cost_->setItemData(0, tr("PyTorch's seed weights: all_reduce 4, all_to_all 1, all_gather 2, reduce_scatter 2, chunk 0"),
                     Qt::ToolTipRole);
  cost_->setItemData(1, tr("PyTorch's size-aware model: ring latency and bandwidth per axis, slower across hosts (µs)"),
                     Qt::ToolTipRole);
  cost_->setCurrentIndex(1);
  form->addRow(tensor_label, tensor_row);
  form->addRow(QString(), tensor_message_);
  form->addRow(QString(), tensor_hint_);
  // Two fields to a row where they are short, so that the request fits the plan area's opening height at 1280x800:
  // the shape beside its dtype, the planner beside its cost model.
  const auto pair_row = [this](QWidget* first, int first_stretch, const QString& label, QWidget* second) {
    auto* row = new QWidget(this);
    auto* row_layout = new QHBoxLayout(row);
    row_layout->setContentsMargins(0, 0, 0, 0);
    row_layout->addWidget(first, first_stretch);
    auto* second_label = new QLabel(label, row);
    second_label->setBuddy(second);
    row_layout->addWidget(second_label);
    row_layout->addWidget(second, 1);
    return row;
  };
  auto* shape_label = new QLabel(tr("Shape"), this);
  shape_label->setBuddy(shape_);
  form->addRow(shape_label, pair_row(shape_, 2, tr("Dt&ype"), dtype_));
  form->addRow(QString(), shape_message_);
  form->addRow(QString(), dtype_message_);
  form->addRow(tr("&Source"), src_);
  form->addRow(QString(), src_picker_);
  form->addRow(QString(), src_message_);
  form->addRow(tr("T&arget"), dst_);
  form->addRow(QString(), dst_picker_);
  form->addRow(QString(), dst_message_);
  auto* planner_label = new QLabel(tr("P&lanner"), this);
  planner_label->setBuddy(planner_);  // the combo, not the row holding it (which takes no focus: Alt+L did nothing)
  form->addRow(planner_label, pair_row(planner_, 1, tr("&Cost model"), cost_));

  // The chosen planner's plan.
  plan_model_ = new PlanModel(this);
  graph_model_ = new PlanModel(this);
  greedy_model_ = new PlanModel(this);
  plan_box_ = new QGroupBox(tr("Plan"), this);
  plan_table_ = make_plan_table(plan_box_, plan_model_);
  plan_summary_ = new QLabel(plan_box_);
  plan_summary_->setWordWrap(true);
  plan_message_ = make_message_label(plan_box_);
  auto* plan_layout = new QVBoxLayout(plan_box_);
  plan_layout->addWidget(plan_table_, 1);  // the height the lines under it leave
  plan_layout->addWidget(plan_summary_);
  recalibration_ = new QLabel(plan_box_);
  recalibration_->setWordWrap(true);
  recalibration_->setVisible(false);
  plan_layout->addWidget(recalibration_);
  calibrations_ = new QLabel(plan_box_);
  calibrations_->setObjectName(QStringLiteral("calibrations"));
  calibrations_->setWordWrap(true);
  calibrations_->setVisible(false);
  plan_layout->addWidget(calibrations_);
  plan_layout->addWidget(plan_message_);

  // The other planner in one line under the plan ("greedy: the same plan", "greedy: 3 steps, 14.4 µs, +12%",
  // "greedy refuses: ..."): neutral, never red (a refusal of the planner not chosen is a note, not an error); its
  // steps or its whole reason in the tooltip.
  other_ = new QLabel(plan_box_);
  other_->setObjectName(QStringLiteral("other_planner"));
  other_->setWordWrap(true);
  other_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  plan_layout->insertWidget(plan_layout->indexOf(plan_summary_) + 1, other_);

  // Side by side: the request and the chosen plan (the panel lives in a wide, short dock).
  auto* layout = new QHBoxLayout(this);
  auto* request_column = new QVBoxLayout;
  request_column->addLayout(form);
  request_column->addStretch(1);
  layout->addLayout(request_column, 2);
  layout->addWidget(plan_box_, 5);

  connect(tensor_, &QComboBox::currentIndexChanged, this, [this] {
    sync_fields();
    replan();
  });
  connect(planner_, &QComboBox::currentIndexChanged, this, [this] { replan(); });
  connect(cost_, &QComboBox::currentIndexChanged, this, [this] {
    const CostModelKind now = cost_model();
    if (now == CostModelKind::Calibrated && shown_model_ != CostModelKind::Calibrated) before_calibrated_ = shown_model_;
    shown_model_ = now;
    left_calibrated_ = false;  // a choice made since
    replan();
  });
  connect(shape_, &QLineEdit::editingFinished, this, [this] {
    if (tensor_index() >= 0) (void)set_shape(shape_->text());
  });
  connect(dtype_, &QComboBox::currentIndexChanged, this, [this] {
    if (tensor_index() >= 0) (void)set_dtype(dtype_->currentData().toString());
  });
  connect(src_, &QLineEdit::editingFinished, this, [this] { (void)set_source(src_->text()); });
  connect(dst_, &QLineEdit::editingFinished, this, [this] { (void)set_target(dst_->text()); });
  // A picker's choice is the same edit as its text typed in the field.
  connect(src_picker_, &PlacementPicker::state_edited, this, [this](const State& state) {
    if (!set_source(q(to_string(state)))) sync_pickers();
  });
  connect(dst_picker_, &PlacementPicker::state_edited, this, [this](const State& state) {
    if (!set_target(q(to_string(state)))) sync_pickers();
  });
  connect(doc_, &DesignDocument::design_changed, this, &RedistributionPanel::refresh);
  // A relative calibration path follows the design file (open, save as).
  connect(doc_, &DesignDocument::path_changed, this, [this] {
    if (doc_->undo_stack()->count() == 0) left_calibrated_ = false;  // another document: nothing to come back to
    update_calibration();
    replan();
  });
  refresh();
}

RedistributionPanel::~RedistributionPanel() = default;

// ---- State -----------------------------------------------------------------------------------------------------

int RedistributionPanel::tensor_index() const {
  const std::string name = tensor_->currentText().toStdString();
  const auto& tensors = doc_->design().tensors;
  const auto it = std::find_if(tensors.begin(), tensors.end(), [&name](const DesignTensor& t) { return t.name == name; });
  return tensor_->currentIndex() < 0 || it == tensors.end() ? -1 : static_cast<int>(it - tensors.begin());
}

QString RedistributionPanel::current_tensor() const { return tensor_index() < 0 ? QString() : tensor_->currentText(); }

bool RedistributionPanel::select_tensor(const QString& name) {
  const int at = tensor_->findText(name, Qt::MatchExactly);
  if (at < 0) return false;
  tensor_->setCurrentIndex(at);
  return true;
}

PlannerKind RedistributionPanel::planner() const { return static_cast<PlannerKind>(planner_->currentData().toInt()); }

void RedistributionPanel::set_planner(PlannerKind kind) {
  planner_->setCurrentIndex(planner_->findData(static_cast<int>(kind)));
}

RedistributionPanel::CostModelKind RedistributionPanel::cost_model() const {
  return static_cast<CostModelKind>(cost_->currentData().toInt());
}

bool RedistributionPanel::set_cost_model(CostModelKind kind) {
  if (kind == CostModelKind::Calibrated && !calibrated_available()) return false;
  cost_->setCurrentIndex(cost_->findData(static_cast<int>(kind)));
  return true;
}

void RedistributionPanel::set_state_budget(std::size_t budget) {
  if (budget == budget_) return;
  budget_ = budget;
  replan();
}

std::optional<PlanRequest> RedistributionPanel::request(PlannerKind kind) const {
  const int i = tensor_index();
  if (i < 0) return std::nullopt;
  const Design& d = doc_->design();
  const DesignTensor& t = d.tensors[static_cast<std::size_t>(i)];
  PlanRequest r;
  r.mesh_shape = d.mesh.shape;
  r.tensor_shape = t.shape;
  r.src = t.src;
  r.dst = t.dst;
  r.planner = kind;
  r.itemsize = itemsize(t.dtype);
  r.state_budget = budget_;
  // The design's flattened axes are process groups its steps may merge on (a flattened group of one axis is that
  // axis' own group; two flattened axes over the same axes are one group).
  for (const FlattenSpec& f : d.mesh.flattened) {
    std::vector<std::size_t> group;
    for (const std::string& name : f.axes) {
      const auto it = std::find(d.mesh.names.begin(), d.mesh.names.end(), name);
      if (it != d.mesh.names.end()) group.push_back(static_cast<std::size_t>(it - d.mesh.names.begin()));
    }
    std::sort(group.begin(), group.end());
    if (group.size() >= 2 && std::find(r.flattened.begin(), r.flattened.end(), group) == r.flattened.end()) {
      r.flattened.push_back(std::move(group));
    }
  }
  return r;
}

QString RedistributionPanel::cost_unit(CostModelKind kind) const {
  return kind == CostModelKind::Fixed ? QString() : QStringLiteral("µs");
}

// ---- Refresh ---------------------------------------------------------------------------------------------------

void RedistributionPanel::refresh() {
  // The replaced calibration belongs to this document's history: another document (its undo stack cleared by
  // open, new or recovery) has none.
  if (doc_->undo_stack()->count() == 0) {
    previous_calibration_.reset();
    applied_calibration_.reset();
    apply_undone_ = false;
    left_calibrated_ = false;
  }
  sync_tensors();
  sync_fields();
  update_calibration();
  follow_apply();
  replan();
}

void RedistributionPanel::sync_tensors() {
  const auto& tensors = doc_->design().tensors;
  QStringList names;
  for (const DesignTensor& t : tensors) names << q(t.name);
  QStringList shown;
  for (int i = 0; i < tensor_->count(); ++i) shown << tensor_->itemText(i);
  const QSignalBlocker block(tensor_);
  if (names != shown) {
    // One tensor more (added, or brought back by undo or redo) is shown; otherwise the tensor is kept by name, and
    // when it is gone (removed, renamed) the one at its place (or the last).
    const QString kept = tensor_->currentText();
    const int was = tensor_->currentIndex();
    QStringList added;
    for (const QString& n : names) {
      if (!shown.contains(n)) added << n;
    }
    tensor_->clear();
    tensor_->addItems(names);
    int at = static_cast<int>(names.indexOf(kept));
    // (Within one document's history: another document's tensors are not "added".)
    if (doc_->undo_stack()->count() > 0 && names.size() == shown.size() + 1 && added.size() == 1) {
      at = static_cast<int>(names.indexOf(added.front()));
    }
    if (at < 0 && !names.isEmpty()) at = std::clamp(was, 0, static_cast<int>(names.size()) - 1);
    tensor_->setCurrentIndex(at);
  }
  const bool none = names.isEmpty();
  tensor_hint_->setVisible(none);
  tensor_->setEnabled(!none);
}

void RedistributionPanel::sync_fields() {
  const int i = tensor_index();
  for (QLabel* label : {tensor_message_, shape_message_, dtype_message_, src_message_, dst_message_}) {
    show_message(label, QString());
  }
  for (QWidget* field : std::initializer_list<QWidget*>{shape_, dtype_, src_, dst_}) field->setEnabled(i >= 0);
  rename_action_->setEnabled(i >= 0);
  remove_action_->setEnabled(i >= 0);
  const QSignalBlocker block(dtype_);
  if (i < 0) {
    for (QLineEdit* field : {shape_, src_, dst_}) field->clear();
    dtype_->setCurrentIndex(-1);
    sync_pickers();
    return;
  }
  const DesignTensor& t = doc_->design().tensors[static_cast<std::size_t>(i)];
  shape_->setText(shape_text(t.shape));
  dtype_->setCurrentIndex(dtype_->findData(q(to_string(t.dtype))));
  src_->setText(q(to_string(t.src)));
  dst_->setText(q(to_string(t.dst)));
  sync_pickers();
}

void RedistributionPanel::sync_pickers() {
  const int i = tensor_index();
  src_picker_->setVisible(i >= 0);
  dst_picker_->setVisible(i >= 0);
  if (i < 0) return;
  const Design& d = doc_->design();
  const DesignTensor& t = d.tensors[static_cast<std::size_t>(i)];
  const auto rank = static_cast<std::int64_t>(t.shape.size());
  src_picker_->set_state(t.src, d.mesh.shape, d.mesh.names, rank);
  dst_picker_->set_state(t.dst, d.mesh.shape, d.mesh.names, rank);
  PlacementPicker::align(*src_picker_, *dst_picker_);
}

QComboBox* RedistributionPanel::placement_picker(bool source, std::size_t axis) const {
  return (source ? src_picker_ : dst_picker_)->placement_box(axis);
}

QSpinBox* RedistributionPanel::order_picker(bool source, std::size_t axis) const {
  return (source ? src_picker_ : dst_picker_)->order_box(axis);
}

void RedistributionPanel::update_calibration() {
  const Design& d = doc_->design();
  ModelSlot& s = *slots_[static_cast<std::size_t>(CostModelKind::Calibrated)];
  QString reason;
  if (!d.calibration) {
    reason = tr("This design names no calibration file (its \"calibration\" field; `meshloom-launch calibrate` "
                "writes one).");
    s.reset(nullptr, {});
  } else if (!std::filesystem::path(*d.calibration).is_absolute() && doc_->path().isEmpty()) {
    reason = tr("The calibration \"%1\" is relative to the design file: save the design first.")
                 .arg(q(*d.calibration));
    s.reset(nullptr, {});
  } else {
    const auto path = *calibration_path(d, std::filesystem::path(doc_->path().toStdString()));
    // The file as it is now (a calibrate run again rewrites it): its time and size are in the key.
    const QFileInfo file(QString::fromStdString(path.string()));
    std::string key = path.string() + "|" + std::to_string(file.lastModified().toMSecsSinceEpoch()) + "|" +
                      std::to_string(file.size()) + "|" + ints_key(d.mesh.shape);
    for (const auto& n : d.mesh.names) key += "|" + n;
    if (key != s.key) {
      try {
        Calibration c = load_calibration(path);
        if (const std::optional<std::string> why = calibration_mismatch(c, d.mesh.shape)) {
          reason = tr("%1 (%2).").arg(capitalized(q(*why)), q(path.filename().string()));
          s.reset(nullptr, {});
        } else {
          s.reset(std::make_unique<CalibratedCostModel>(std::move(c), d.mesh.names), key);
        }
      } catch (const std::exception& e) {
        reason = tr("The calibration file does not load: %1").arg(error_text(e));
        s.reset(nullptr, {});  // not remembered: the next design change tries again
      }
    }
  }
  calibrated_reason_ = reason;
  auto* items = qobject_cast<QStandardItemModel*>(cost_->model());
  const int at = cost_->findData(static_cast<int>(CostModelKind::Calibrated));
  if (QStandardItem* item = items != nullptr ? items->item(at) : nullptr) {
    item->setEnabled(reason.isEmpty());
    item->setToolTip(reason.isEmpty() ? tr("Fitted from measurements of this cluster (%1; µs)").arg(q(*d.calibration))
                                      : reason);
  }
  cost_->setToolTip(reason.isEmpty() ? tr("How a step is priced")
                                     : tr("How a step is priced. Calibrated is unavailable: %1").arg(reason));
  // Without a calibration the calibrated model gives way to the one chosen before it; when the calibration comes
  // back (redo of Apply calibration, undo of its removal) and nothing was chosen since, the calibrated model does too.
  if (!reason.isEmpty() && cost_model() == CostModelKind::Calibrated) {
    show_model(before_calibrated_ == CostModelKind::Calibrated ? CostModelKind::Comm : before_calibrated_);
    left_calibrated_ = true;
  } else if (reason.isEmpty() && left_calibrated_) {
    show_model(CostModelKind::Calibrated);
    left_calibrated_ = false;
  }
}

RedistributionPanel::ModelSlot& RedistributionPanel::slot(CostModelKind kind) {
  ModelSlot& s = *slots_[static_cast<std::size_t>(kind)];
  const Design& d = doc_->design();
  switch (kind) {
    case CostModelKind::Fixed:
      if (!s.model) s.reset(std::make_unique<FixedCostModel>(), "fixed");
      break;
    case CostModelKind::Comm: {
      // The comm model knows which axes cross hosts: it is built for one mesh and host size.
      const std::string key = ints_key(d.mesh.shape) + "/" + std::to_string(d.devices_per_host);
      if (s.key != key) s.reset(std::make_unique<CommCostModel>(d.mesh.shape, d.devices_per_host), key);
      break;
    }
    case CostModelKind::Calibrated: break;  // update_calibration builds it
  }
  return s;
}

RedistributionPanel::Outcome RedistributionPanel::plan_with(ModelSlot& s, const PlanRequest& request) {
  if (!s.cache) return {nullptr, calibrated_reason_};
  for (const auto& [refused, message] : s.failures) {
    if (same_request(refused, request)) return {nullptr, message};
  }
  try {
    return {s.cache->plan(request), QString()};
  } catch (const std::exception& e) {
    // PlanCache keeps no errors: remember them, so a redraw does not search a refused request again.
    if (s.failures.size() >= kRememberedFailures) s.failures.erase(s.failures.begin());
    s.failures.emplace_back(request, error_text(e));
    return {nullptr, s.failures.back().second};
  }
}

void RedistributionPanel::replan() {
  const CostModelKind kind = cost_model();
  ModelSlot& s = slot(kind);
  const QString unit = cost_unit(kind);
  const MeshSpec& mesh = doc_->design().mesh;
  // The graph and greedy plans (one of them is the chosen one; the other is told in one line under it), each with
  // the engine's error when it has none.
  const auto plan_into = [&](PlanModel* model, QString* error, PlannerKind kind_of_plan) {
    error->clear();
    const auto r = request(kind_of_plan);
    if (!r) {
      model->clear();
      return;
    }
    const Outcome o = plan_with(s, *r);
    if (o.plan) {
      model->set_plan(o.plan, mesh, unit);
    } else {
      model->set_error(o.error);
    }
    *error = o.error;
  };
  plan_into(graph_model_, &graph_error_, PlannerKind::Graph);
  plan_into(greedy_model_, &greedy_error_, PlannerKind::Greedy);
  const auto show = [&](PlanModel* model, QLabel* summary_label, QLabel* message_at, PlannerKind kind_of_plan) {
    QString error;
    plan_into(model, &error, kind_of_plan);
    summary_label->setText(model->summary());
    show_message(message_at, error);
  };
  // The chosen plan: auto resolves to graph or greedy (the engine's rule), so it is one of the two above, from the
  // cache.
  PlannerKind chosen = planner();
  QString title = planner_name(chosen);
  if (chosen == PlannerKind::Auto) {
    if (const auto r = request(PlannerKind::Auto)) {
      chosen = resolve_planner(*r);
      title = tr("auto → %1").arg(planner_name(chosen));
    }
  }
  show(plan_model_, plan_summary_, plan_message_, chosen);
  plan_box_->setTitle(tr("Plan: %1 planner, %2 model").arg(title, cost_->currentText()));

  // Recalibration, before against after: the same request priced by PyTorch's comm model and by the
  // measurements, and whether the planner's choice (its path) changed.
  QString recalibrated;
  if (kind == CostModelKind::Calibrated && plan_model_->has_plan()) {
    if (const auto r = request(chosen)) {
      const Outcome before = plan_with(slot(CostModelKind::Comm), *r);
      if (before.plan) {
        const bool same = trace(*before.plan) == trace(*plan_model_->plan());
        // After: the plan priced as it runs (a merged step as its flattened group's one collective), as the step
        // tooltips and validate price it, not the search's edge sum.
        const std::vector<double> as_run = price_plan_steps(*r, *plan_model_->plan(), *s.model);
        const double after = std::accumulate(as_run.begin(), as_run.end(), 0.0);
        const std::size_t n = before.plan->steps.size();
        recalibrated = tr("Before calibration (comm model): %1 µs in %2. After: %3 µs. %4")
                           .arg(before.plan->cost, 0, 'f', 2)
                           .arg(n == 1 ? tr("1 step") : tr("%1 steps").arg(n))
                           .arg(after, 0, 'f', 2)
                           .arg(same ? tr("The planner's choice is the same.")
                                     : tr("The planner's choice changed: %1 instead of %2.")
                                           .arg(q(trace(*plan_model_->plan())), q(trace(*before.plan))));
      }
    }
  }
  recalibration_->setText(recalibrated);
  recalibration_->setVisible(!recalibrated.isEmpty());

  // The old calibration against the new, after one replaced the other: the same plan priced under both, and
  // against what run or validate records measured of its steps.
  std::pair<QString, QString> calibrations;
  if (kind == CostModelKind::Calibrated && plan_model_->has_plan()) {
    if (const auto r = request(chosen)) calibrations = calibrations_text(*r, *plan_model_->plan());
  }
  calibrations_->setText(calibrations.first);
  calibrations_->setToolTip(calibrations.second);
  calibrations_->setVisible(!calibrations.first.isEmpty());

  const auto [line, tip] = other_planner_text(chosen);
  other_->setText(line);
  other_->setToolTip(tip);
  other_->setVisible(!line.isEmpty());
  show_step(step_);  // the models were reset: select the step's rows again
  emit plans_changed();
}

std::pair<QString, QString> RedistributionPanel::other_planner_text(PlannerKind chosen) const {
  const bool graph_chosen = chosen != PlannerKind::Greedy;
  const PlanModel* mine = graph_chosen ? graph_model_ : greedy_model_;
  const PlanModel* other = graph_chosen ? greedy_model_ : graph_model_;
  const QString& other_error = graph_chosen ? greedy_error_ : graph_error_;
  const QString name = graph_chosen ? tr("greedy") : tr("graph");
  if (other->has_plan()) {
    const QString steps = q(trace(*other->plan()));
    if (mine->has_plan() && trace(*mine->plan()) == trace(*other->plan())) {
      return {tr("%1: the same plan.").arg(name), steps};
    }
    const std::size_t n = other->plan()->steps.size();
    QString line = tr("%1: %2, %3").arg(name, n == 1 ? tr("1 step") : tr("%1 steps").arg(n), other->total_text());
    if (mine->has_plan() && mine->total() > 0 && std::isfinite(mine->total()) && std::isfinite(other->total())) {
      const double change = 100.0 * (other->total() - mine->total()) / mine->total();
      line += change == 0.0 ? tr(", the same cost") : QStringLiteral(", %1%2%").arg(change > 0 ? QStringLiteral("+") : QString()).arg(change, 0, 'f', 0);
    }
    return {line + QLatin1Char('.'), steps};
  }
  if (!other_error.isEmpty()) {
    // The engine's reason, its exception kind left out and cut to its first sentence; whole in the tooltip.
    QString reason = other_error;
    reason.remove(QRegularExpression(QStringLiteral("^[A-Za-z]*Error: ")));
    const auto stop = reason.indexOf(QStringLiteral(". "));
    if (stop > 0) reason = reason.left(stop + 1);
    return {tr("%1 refuses: %2").arg(name, reason), other_error};
  }
  return {};
}

void RedistributionPanel::show_step(int step) {
  step_ = std::max(0, step);
  const auto follow = [this](QTableView* table, const PlanModel* model) {
    const bool animated = model == plan_model_ || (model->has_plan() && plan_model_->has_plan() &&
                                                   trace(*model->plan()) == trace(*plan_model_->plan()));
    const int row = step_ - 1;
    if (!animated || row < 0 || row >= model->rowCount()) {
      table->selectionModel()->clear();
      return;
    }
    const QModelIndex at = model->index(row, PlanModel::StepColumn);
    table->selectionModel()->setCurrentIndex(at, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    table->scrollTo(at);
  };
  follow(plan_table_, plan_model_);
}

// ---- Old calibration against new -------------------------------------------------------------------------------

std::optional<Calibration> RedistributionPanel::calibration() const {
  const ModelSlot& s = *slots_[static_cast<std::size_t>(CostModelKind::Calibrated)];
  if (const auto* model = dynamic_cast<const CalibratedCostModel*>(s.model.get())) return model->calibration();
  return std::nullopt;
}

bool RedistributionPanel::apply_calibration(const QString& text, const std::string& applied,
                                            const QString& replaced_label, QString* error) {
  Design after = doc_->design();
  after.calibration = applied;
  const std::optional<std::string> file = calibration_file(after, doc_->path());
  const bool again = calibration_file(doc_->design(), doc_->path()) == file;
  std::optional<Calibration> replaced = calibration();
  const CostModelKind before = cost_model();
  applying_ = true;
  const bool ok = doc_->edit(text,
                             [&applied](const Design& d) {
                               Design next = d;
                               next.calibration = applied;
                               validate_design(next);
                               return next;
                             },
                             error);
  applying_ = false;
  if (!ok) return false;
  if (!again || !applied_calibration_ || apply_undone_) {
    model_before_apply_ = before;
    previous_calibration_ = again ? std::nullopt : std::move(replaced);
    previous_label_ = replaced_label;
  }
  applied_calibration_ = file;
  apply_undone_ = false;
  slots_[static_cast<std::size_t>(CostModelKind::Calibrated)]->reset(nullptr, {});  // read the file again
  update_calibration();
  (void)set_cost_model(CostModelKind::Calibrated);
  replan();
  return true;
}

void RedistributionPanel::show_model(CostModelKind kind) {
  const QSignalBlocker block(cost_);  // replan() follows in every caller
  cost_->setCurrentIndex(cost_->findData(static_cast<int>(kind)));
  shown_model_ = kind;
}

void RedistributionPanel::follow_apply() {
  if (!applied_calibration_ || applying_) return;
  const bool named = calibration_file(doc_->design(), doc_->path()) == applied_calibration_;
  if (!named && !apply_undone_) {
    apply_undone_ = true;
    if (cost_model() == CostModelKind::Calibrated && model_before_apply_ != CostModelKind::Calibrated) {
      show_model(model_before_apply_);
      left_calibrated_ = true;  // a redo brings the calibrated model back (update_calibration)
    }
  } else if (named && apply_undone_) {
    apply_undone_ = false;
  }
}

void RedistributionPanel::set_step_measurements(std::shared_ptr<const PredictionRecords> records,
                                                const QString& label) {
  measured_ = std::move(records);
  measured_label_ = label;
  replan();
}

std::pair<QString, QString> RedistributionPanel::calibrations_text(const PlanRequest& request, const Plan& plan) const {
  const ModelSlot& s = *slots_[static_cast<std::size_t>(CostModelKind::Calibrated)];
  const auto* now = dynamic_cast<const CalibratedCostModel*>(s.model.get());
  const Design& d = doc_->design();
  if (now == nullptr || !previous_calibration_ || calibration_file(d, doc_->path()) != applied_calibration_ ||
      *previous_calibration_ == now->calibration() ||
      (previous_calibration_->groups.empty() && !previous_calibration_->mesh_shape.empty() &&
       previous_calibration_->mesh_shape != d.mesh.shape)) {
    return {};
  }
  const CalibratedCostModel old_model(*previous_calibration_, d.mesh.names);
  const std::vector<double> before = price_plan_steps(request, plan, old_model);
  const std::vector<double> after = price_plan_steps(request, plan, *now);
  const auto us = [](double v) {
    return std::isfinite(v) ? QStringLiteral("%1 µs").arg(v, 0, 'f', 2) : tr("not priced (a step has no curve or fit)");
  };
  const double old_total = std::accumulate(before.begin(), before.end(), 0.0);
  const double new_total = std::accumulate(after.begin(), after.end(), 0.0);
  const QString new_label = d.calibration ? QFileInfo(q(*d.calibration)).fileName() : QString();
  QString text = tr("This plan under the old calibration (%1): %2; under the new (%3): %4.")
                     .arg(previous_label_, us(old_total), new_label, us(new_total));

  // Which one came closer to the measured steps: the mean relative error over the communicating steps measured.
  QStringList rows;
  if (measured_) {
    std::size_t communicating = 0;
    std::size_t matched = 0;
    double measured_total = 0;
    double old_on = 0;
    double new_on = 0;
    double old_error = 0;
    double new_error = 0;
    for (std::size_t i = 0; i < plan.steps.size() && i < before.size() && i < after.size(); ++i) {
      const PlanStep& step = plan.steps[i];
      if (!communicates(step.collective)) continue;
      ++communicating;
      const StepMatch m = measured_->match(step);
      QString row = tr("step %1 %2: old %3, new %4").arg(i + 1).arg(q(to_string(step.collective)), us(before[i]), us(after[i]));
      if (m.count > 0) {
        ++matched;
        measured_total += m.measured_us;
        old_on += before[i];
        new_on += after[i];
        old_error += relative_error(before[i], m.measured_us);
        new_error += relative_error(after[i], m.measured_us);
        row += tr(", measured %1 (%2 record(s))").arg(us(m.measured_us)).arg(m.count);
      }
      rows << row;
    }
    if (matched == 0) {
      text += tr(" %1 measures none of its steps.").arg(measured_label_);
    } else {
      old_error /= static_cast<double>(matched);
      new_error /= static_cast<double>(matched);
      const QString verdict = !std::isfinite(old_error) && !std::isfinite(new_error) ? tr("neither can be compared")
                              : old_error == new_error ? tr("both are as close")
                              : new_error < old_error  ? tr("the new calibration is closer")
                                                       : tr("the old calibration is closer");
      text += tr(" Measured in %1: %2 of its %3 communicating step(s), %4; on those the old predicts %5 (%6 off per "
                 "step on average), the new %7 (%8 off): %9.")
                  .arg(measured_label_)
                  .arg(matched)
                  .arg(communicating)
                  .arg(us(measured_total), us(old_on), format_relative(old_error), us(new_on),
                       format_relative(new_error), verdict);
    }
  }
  return {text, rows.join(QLatin1Char('\n'))};
}

// ---- Edits -----------------------------------------------------------------------------------------------------

bool RedistributionPanel::set_source(const QString& text) { return set_state(true, text); }
bool RedistributionPanel::set_target(const QString& text) { return set_state(false, text); }

std::string RedistributionPanel::markdown() const {
  const int i = tensor_index();
  if (i < 0) return {};
  const Design& d = doc_->design();
  const DesignTensor& t = d.tensors[static_cast<std::size_t>(i)];
  PlanReportInput in{t.name, t.shape, t.dtype, t.src, t.dst, d.mesh.names, d.mesh.shape, {}};
  const std::string model = cost_->currentText().toStdString();
  for (const auto& [name, plans] : {std::pair{"graph", graph_model_}, std::pair{"greedy", greedy_model_}}) {
    in.plans.push_back({std::string(name) + " planner, " + model + " model", plans->cost_unit().toStdString(),
                        plans->plan(), plans->error().toStdString()});
  }
  return plan_markdown(in);
}

void RedistributionPanel::commit_pending() {
  const int i = tensor_index();
  if (i < 0) return;
  // Copies: a committed edit replaces the design (and the tensor a reference would point into).
  const DesignTensor t = doc_->design().tensors[static_cast<std::size_t>(i)];
  const QString shape = shape_->text();  // before an edit resets the fields
  const QString src = src_->text();
  const QString dst = dst_->text();
  // A new shape may need the new states (fewer dims) or the states the new shape (more dims): the shape goes first,
  // and once more after the states when it was refused.
  const bool shape_pending = shape != shape_text(t.shape);
  const bool shaped = !shape_pending || set_shape(shape);
  if (src != q(to_string(t.src))) (void)set_source(src);
  if (dst != q(to_string(t.dst))) (void)set_target(dst);
  if (!shaped) (void)set_shape(shape);
}

bool RedistributionPanel::set_state(bool source, const QString& text) {
  QLabel* label = source ? src_message_ : dst_message_;
  const int i = tensor_index();
  if (i < 0) {
    show_message(label, tr("The design has no tensor to edit."));
    return false;
  }
  const Design& d = doc_->design();
  const DesignTensor& t = d.tensors[static_cast<std::size_t>(i)];
  State state;
  try {
    state = parse_state(text.toStdString());
    check_state(state, d.mesh.shape.size(), static_cast<std::int64_t>(t.shape.size()));
  } catch (const std::exception& e) {
    show_message(label, about_text(text, error_text(e)));
    return false;
  }
  if (state == (source ? t.src : t.dst)) {
    show_message(label, QString());
    (source ? src_ : dst_)->setText(q(to_string(state)));  // the canonical form
    return true;
  }
  const std::string name = t.name;
  QString error;
  const QString what = source ? tr("Set source of %1 to %2") : tr("Set target of %1 to %2");
  const bool ok = doc_->edit(what.arg(q(name), q(to_string(state))),
                             [&](const Design& current) {
                               Design next = current;
                               const auto it = std::find_if(next.tensors.begin(), next.tensors.end(),
                                                            [&name](const DesignTensor& x) { return x.name == name; });
                               if (it == next.tensors.end()) {
                                 meshloom::raise(ErrorKind::ValueError, "tensor '" + name + "' is not in the design");
                               }
                               (source ? it->src : it->dst) = state;
                               validate_design(next);
                               return next;
                             },
                             &error);
  show_message(label, ok ? QString() : about_text(text, error));
  return ok;
}


// ---- Tensor edits ----------------------------------------------------------------------------------------------

bool RedistributionPanel::edit_tensor(const QString& text, const std::function<Design(const Design&)>& edit,
                                      QLabel* label) {
  QString error;
  const bool ok = doc_->edit(text, edit, &error);
  show_message(label, ok ? QString() : error);
  return ok;
}

bool RedistributionPanel::add_tensor(const DesignTensor& tensor) {
  const bool ok = edit_tensor(tr("Add tensor %1").arg(q(tensor.name)),
                              [&tensor](const Design& d) { return meshloom::add_tensor(d, tensor); }, tensor_message_);
  if (ok) (void)select_tensor(q(tensor.name));
  return ok;
}

bool RedistributionPanel::rename_tensor(const QString& from, const QString& to) {
  const std::string was = from.toStdString();
  const std::string name = to.trimmed().toStdString();
  const Design& d = doc_->design();
  const bool listed = d.workload && std::any_of(d.workload->tensors.begin(), d.workload->tensors.end(),
                                                [&was](const WorkloadTensor& w) { return w.tensor == was; });
  const QString text = listed ? tr("Rename tensor %1 to %2, and its workload entry") : tr("Rename tensor %1 to %2");
  const bool ok = edit_tensor(text.arg(from, q(name)),
                              [&](const Design& x) { return meshloom::rename_tensor(x, was, name); }, tensor_message_);
  if (ok) (void)select_tensor(q(name));
  return ok;
}

bool RedistributionPanel::remove_tensor(const QString& name) {
  const std::string was = name.toStdString();
  const Design& d = doc_->design();
  const bool listed = d.workload && std::any_of(d.workload->tensors.begin(), d.workload->tensors.end(),
                                                [&was](const WorkloadTensor& w) { return w.tensor == was; });
  const QString text = listed ? tr("Remove tensor %1, and its workload entry") : tr("Remove tensor %1");
  return edit_tensor(text.arg(name), [&was](const Design& x) { return meshloom::remove_tensor(x, was); },
                     tensor_message_);
}

bool RedistributionPanel::set_shape(const QString& text) {
  const int i = tensor_index();
  if (i < 0) {
    show_message(shape_message_, tr("The design has no tensor to edit."));
    return false;
  }
  const DesignTensor& t = doc_->design().tensors[static_cast<std::size_t>(i)];
  std::vector<std::int64_t> shape;
  QString error;
  if (!parse_shape(text, &shape, &error)) {
    show_message(shape_message_, error);
    return false;
  }
  if (shape == t.shape) {
    show_message(shape_message_, QString());
    shape_->setText(shape_text(shape));  // the canonical form
    return true;
  }
  const std::string name = t.name;
  return edit_tensor(tr("Shape of %1: %2 → %3").arg(q(name), shape_text(t.shape), shape_text(shape)),
                     [&](const Design& d) { return set_tensor_shape(d, name, shape); }, shape_message_);
}

bool RedistributionPanel::set_dtype(const QString& name) {
  const int i = tensor_index();
  if (i < 0) {
    show_message(dtype_message_, tr("The design has no tensor to edit."));
    return false;
  }
  const DesignTensor& t = doc_->design().tensors[static_cast<std::size_t>(i)];
  const auto restore = [this, &t] {
    const QSignalBlocker block(dtype_);
    dtype_->setCurrentIndex(dtype_->findData(q(to_string(t.dtype))));
  };
  const std::optional<DType> dtype = dtype_from_string(name.trimmed().toStdString());
  if (!dtype) {
    QStringList names;
    for (const auto n : dtype_names()) names << q(n);
    show_message(dtype_message_, tr("dtype \"%1\": dtypes are %2").arg(name, names.join(QStringLiteral(", "))));
    restore();
    return false;
  }
  if (*dtype == t.dtype) {
    show_message(dtype_message_, QString());
    restore();
    return true;
  }
  const std::string tensor = t.name;
  const QString text = tr("Dtype of %1: %2 → %3").arg(q(tensor), q(to_string(t.dtype)), q(to_string(*dtype)));
  const bool ok = edit_tensor(text, [&](const Design& d) { return set_tensor_dtype(d, tensor, *dtype); },
                              dtype_message_);
  if (!ok) restore();
  return ok;
}

std::unique_ptr<TensorDialog> RedistributionPanel::make_add_dialog() {
  const Design& d = doc_->design();
  DesignTensor t;
  for (std::size_t n = 0;; ++n) {
    t.name = "tensor" + std::to_string(n);
    if (std::none_of(d.tensors.begin(), d.tensors.end(), [&t](const DesignTensor& x) { return x.name == t.name; })) break;
  }
  t.shape = {1024, 1024};
  t.dtype = DType::Float32;
  t.src = replicated_state(d);
  t.dst = t.src;
  return std::make_unique<TensorDialog>(d, t, this);
}

std::unique_ptr<EditDialog> RedistributionPanel::make_rename_dialog() {
  const QString current = current_tensor();
  if (current.isEmpty()) return nullptr;
  const std::string from = current.toStdString();
  const EditDialog::Check check = [this, from](const std::vector<QString>& t) -> EditDialog::Outcome {
    const std::string to = t[0].trimmed().toStdString();
    try {
      Design next = meshloom::rename_tensor(doc_->design(), from, to);
      const bool listed = next.workload && std::any_of(next.workload->tensors.begin(), next.workload->tensors.end(),
                                                       [&to](const WorkloadTensor& w) { return w.tensor == to; });
      const QString said = to == from ? tr("The name is unchanged")
                           : listed   ? tr("Renames %1 to %2, and its workload entry").arg(q(from), q(to))
                                      : tr("Renames %1 to %2").arg(q(from), q(to));
      return {std::move(next), QString(), said};
    } catch (const std::exception& e) {
      return {std::nullopt, error_text(e), QString()};
    }
  };
  return std::make_unique<EditDialog>(tr("Rename tensor"),
                                      std::vector<std::vector<QString>>{{tr("&Name"), current, tr("e.g. layers.0.wq")}},
                                      doc_->design(), check, this);
}

void RedistributionPanel::add_dialog() {
  const std::unique_ptr<TensorDialog> dialog = make_add_dialog();
  if (dialog->exec() != QDialog::Accepted) return;
  if (const auto tensor = dialog->tensor()) (void)add_tensor(*tensor);
}

void RedistributionPanel::rename_dialog() {
  const std::unique_ptr<EditDialog> dialog = make_rename_dialog();
  if (!dialog || dialog->exec() != QDialog::Accepted) return;
  (void)rename_tensor(current_tensor(), dialog->field(0)->text());
}

QList<QAction*> RedistributionPanel::tensor_actions() const { return {add_action_, rename_action_, remove_action_}; }

QString RedistributionPanel::message(const QString& field) const {
  if (field == QLatin1String("graph")) return graph_error_;
  if (field == QLatin1String("greedy")) return greedy_error_;
  const QLabel* l = field == QLatin1String("source")   ? src_message_
                    : field == QLatin1String("target") ? dst_message_
                    : field == QLatin1String("shape")  ? shape_message_
                    : field == QLatin1String("dtype")  ? dtype_message_
                    : field == QLatin1String("tensors") ? tensor_message_
                    : field == QLatin1String("plan")   ? plan_message_
                    : field == QLatin1String("tensor") ? tensor_hint_
                    : field == QLatin1String("other") ? other_
                    : field == QLatin1String("recalibration") ? recalibration_
                    : field == QLatin1String("calibrations") ? calibrations_
                                                        : nullptr;
  return l == nullptr || l->isHidden() ? QString() : l->text();
}

}  // namespace meshloom::app
