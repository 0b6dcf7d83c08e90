#include "advisor/advisor_panel.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QThread>
#include <QVBoxLayout>

#include <atomic>
#include <exception>
#include <filesystem>
#include <utility>

#include "advisor/advisor_chart.hpp"
#include "advisor/advisor_model.hpp"
#include "document/design_document.hpp"
#include "shell/inline_message.hpp"
#include "meshloom/plan/cost_model.hpp"

namespace meshloom::app {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

// "tp, cp" -> {"tp", "cp"}.
std::vector<std::string> split_names(const QString& text) {
  std::vector<std::string> names;
  for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
    const QString name = part.trimmed();
    if (!name.isEmpty()) names.push_back(name.toStdString());
  }
  return names;
}

// "tp=8, pp=16" -> {{"tp", 8}, {"pp", 16}}; nullopt with the offending part in *error.
std::optional<std::map<std::string, std::int64_t>> parse_fixed(const QString& text, QString* error) {
  std::map<std::string, std::int64_t> fixed;
  for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
    const QString item = part.trimmed();
    if (item.isEmpty()) continue;
    const auto pieces = item.split(QLatin1Char('='));
    bool ok = pieces.size() == 2;
    const qlonglong size = ok ? pieces[1].trimmed().toLongLong(&ok) : 0;
    if (!ok || size < 1 || pieces[0].trimmed().isEmpty()) {
      *error = QObject::tr("Fixed sizes: \"%1\" is not axis=size with a size >= 1 (e.g. \"tp=8, pp=16\")").arg(item);
      return std::nullopt;
    }
    fixed[pieces[0].trimmed().toStdString()] = size;
  }
  return fixed;
}

}  // namespace

AdvisorPanel::AdvisorPanel(DesignDocument* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);  // as the Costs dock's: the table and chart keep the height

  auto* controls = new QHBoxLayout;
  auto* form = new QFormLayout;
  model_box_ = new QComboBox(this);
  model_box_->setObjectName(QStringLiteral("advisor_model"));
  model_box_->addItem(tr("comm (PyTorch, µs)"), static_cast<int>(ModelKind::Comm));
  model_box_->addItem(tr("fixed weights"), static_cast<int>(ModelKind::Fixed));
  model_box_->addItem(tr("calibrated (µs)"), static_cast<int>(ModelKind::Calibrated));
  form->addRow(tr("Cost model"), model_box_);
  search_box_ = new QComboBox(this);
  search_box_->setObjectName(QStringLiteral("advisor_search"));
  search_box_->addItem(tr("every order of the axes"), static_cast<int>(AdvisorSearch::Orders));
  search_box_->addItem(tr("every factorization of the ranks"), static_cast<int>(AdvisorSearch::Factorizations));
  search_box_->addItem(tr("every factorization in every order"), static_cast<int>(AdvisorSearch::Both));
  form->addRow(tr("Candidates"), search_box_);
  controls->addLayout(form, 1);

  auto* constraints = new QFormLayout;
  within_host_ = new QLineEdit(this);
  within_host_->setObjectName(QStringLiteral("advisor_within_host"));
  within_host_->setPlaceholderText(tr("e.g. tp"));
  within_host_->setToolTip(tr("Axes whose groups must each stay on one host, comma-separated"));
  constraints->addRow(tr("Inside a host"), within_host_);
  fixed_ = new QLineEdit(this);
  fixed_->setObjectName(QStringLiteral("advisor_fixed"));
  fixed_->setPlaceholderText(tr("e.g. tp=8, pp=16"));
  fixed_->setToolTip(tr("Axes whose size a factorization must keep, as axis=size, comma-separated"));
  pp_divides_ = new QCheckBox(tr("pipeline size divides the layers"), this);
  pp_divides_->setObjectName(QStringLiteral("advisor_pp_divides"));
  // Beside the sizes it constrains: a row of its own cost the table and chart their height in a laptop's plan area.
  auto* sizes = new QHBoxLayout;
  sizes->addWidget(fixed_, 1);
  sizes->addWidget(pp_divides_);
  auto* sizes_label = new QLabel(tr("Fixed sizes"), this);
  sizes_label->setBuddy(fixed_);
  constraints->addRow(sizes_label, sizes);
  controls->addLayout(constraints, 1);

  auto* buttons = new QVBoxLayout;
  rank_button_ = new QPushButton(tr("Rank layouts"), this);
  rank_button_->setObjectName(QStringLiteral("advisor_rank"));
  apply_button_ = new QPushButton(tr("Apply layout"), this);
  apply_button_->setObjectName(QStringLiteral("advisor_apply"));
  apply_button_->setToolTip(tr("Make the selected layout (or the best) the design's mesh; Edit › Undo brings the old one back"));
  apply_button_->setEnabled(false);
  buttons->addWidget(rank_button_);
  buttons->addWidget(apply_button_);
  buttons->addStretch(1);
  controls->addLayout(buttons);
  layout->addLayout(controls);

  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("advisor_status"));
  status_->setWordWrap(true);
  layout->addWidget(status_);
  reason_ = new QLabel(this);
  reason_->setObjectName(QStringLiteral("advisor_reason"));
  reason_->setWordWrap(true);
  reason_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  QFont bold = reason_->font();
  bold.setBold(true);
  reason_->setFont(bold);
  layout->addWidget(reason_);

  auto* split = new QSplitter(Qt::Horizontal, this);
  model_ = new AdvisorModel(this);
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(Qt::UserRole);
  table_ = new QTableView(split);
  table_->setObjectName(QStringLiteral("advisor_table"));
  table_->setTabKeyNavigation(false);  // Tab leaves the table (arrows move between cells)
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(AdvisorModel::RankColumn, Qt::AscendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->setVisible(false);
  table_->horizontalHeader()->setStretchLastSection(true);
  chart_ = new AdvisorChart(split);
  split->addWidget(table_);
  split->addWidget(chart_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  // The height the lines above leave, down to the chart's minimum: the table's and chart's own 192 px hint made the
  // panel ask a laptop's plan area for more than it has (as the Redistribution dock's plan table).
  split->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Ignored);
  split->setMinimumHeight(chart_->minimumSizeHint().height());
  layout->addWidget(split, 1);

  connect(rank_button_, &QPushButton::clicked, this, [this] { (void)rank(); });
  connect(apply_button_, &QPushButton::clicked, this, [this] { (void)apply(); });
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            if (!current.isValid()) return;
            const int row = proxy_->mapToSource(current).row();
            if (row >= 0 && (!previewed_ || *previewed_ != static_cast<std::size_t>(row))) {
              preview(static_cast<std::size_t>(row));
            }
          });
  connect(chart_, &AdvisorChart::candidate_clicked, this, [this](std::size_t index) { preview(index); });
  connect(doc_, &DesignDocument::design_changed, this, [this] { update_availability(); });
  connect(doc_, &DesignDocument::path_changed, this, [this] { update_availability(); });
  update_availability();
}

AdvisorPanel::~AdvisorPanel() {
  ++generation_;  // nothing running may show its result any more
  if (cancel_) cancel_->store(true);
  for (QThread* t : findChildren<QThread*>()) t->wait();
}

void AdvisorPanel::supersede() {
  ++generation_;
  if (cancel_) cancel_->store(true);  // the running ranking stops at its next candidate
  cancel_.reset();
}

bool AdvisorPanel::stale() const {
  if (!ranked_design_) return true;
  // Compared with the calibration named absolutely: saved into another folder, the design names the same file.
  const Design d = with_absolute_calibration(doc_->design(), doc_->path());
  return d != *ranked_design_ && (!applied_design_ || d != *applied_design_);
}

void AdvisorPanel::update_availability() {
  const Design& d = doc_->design();
  // The calibrated model prices any layout only from curves keyed by group shape.
  calibrated_reason_.clear();
  if (!d.calibration) {
    calibrated_reason_ = tr("This design names no calibration file (`meshloom-launch calibrate` writes one).");
  } else if (!std::filesystem::path(*d.calibration).is_absolute() && doc_->path().isEmpty()) {
    calibrated_reason_ = tr("The calibration \"%1\" is relative to the design file: save the design first.").arg(q(*d.calibration));
  } else {
    try {
      const Calibration c =
          load_calibration(*calibration_path(d, std::filesystem::path(doc_->path().toStdString())));
      if (c.groups.empty()) {
        calibrated_reason_ = tr("The calibration \"%1\" has per-axis fits only: it cannot price other layouts "
                                "(calibrate again to key its curves by group shape).").arg(q(*d.calibration));
      }
    } catch (const std::exception& e) {
      calibrated_reason_ = tr("The calibration file does not load: %1").arg(error_text(e));
    }
  }
  auto* items = qobject_cast<QStandardItemModel*>(model_box_->model());
  if (items != nullptr) {
    QStandardItem* item = items->item(static_cast<int>(ModelKind::Calibrated));
    item->setEnabled(calibrated_reason_.isEmpty());
    item->setToolTip(calibrated_reason_.isEmpty() ? tr("Fitted from measurements of this cluster (µs)") : calibrated_reason_);
  }
  if (model() == ModelKind::Calibrated && !calibrated_reason_.isEmpty()) set_model(ModelKind::Comm);

  const bool has_workload = d.workload.has_value();
  rank_button_->setEnabled(has_workload);
  if (previewed_) preview(std::nullopt);
  if (busy()) {  // a ranking of the design as it was: superseded
    supersede();
    worker_ = nullptr;
  }
  // The ranking shown may only be applied to the design it ranked (or to that design with one of its layouts
  // applied): after any other edit Apply would silently undo the edit.
  apply_button_->setEnabled(!model_->result().ranked.empty() && !stale());
  if (!has_workload) {
    ranked_design_.reset();
    model_->clear();
    chart_->clear();
    reason_->clear();
    apply_button_->setEnabled(false);
    show_message(status_, QString());
    status_->setText(tr("This design has no workload: add \"workload\" to the design file (its tensors' "
                        "redistributions with counts per step, or a model such as Llama 3) to rank its layouts. The "
                        "Llama 3 examples have one."));
  } else if (!model_->result().ranked.empty() && stale()) {
    status_->setText(tr("The design changed since this ranking: Rank layouts again to include the change (the "
                        "layouts shown can be looked at, not applied or previewed)."));
  } else {
    status_->setText(tr("Rank layouts to price every candidate layout of this mesh for the workload."));
  }
}

CostModelFactory AdvisorPanel::make_factory(QString* error) const {
  switch (model()) {
    case ModelKind::Fixed: {
      auto fixed = std::make_shared<const FixedCostModel>();
      return [fixed](const std::vector<std::int64_t>&, std::int64_t) -> std::shared_ptr<const CostModel> { return fixed; };
    }
    case ModelKind::Comm:
      return [](const std::vector<std::int64_t>& shape, std::int64_t per_host) -> std::shared_ptr<const CostModel> {
        return std::make_shared<const CommCostModel>(shape, per_host);
      };
    case ModelKind::Calibrated: break;
  }
  const Design& d = doc_->design();
  try {
    Calibration c = load_calibration(*calibration_path(d, std::filesystem::path(doc_->path().toStdString())));
    if (c.groups.empty()) {  // per-axis fits price only the layout they were measured on
      *error = tr("The calibration \"%1\" has per-axis fits only: it cannot price other layouts (calibrate again to "
                  "key its curves by group shape).").arg(q(*d.calibration));
      return {};
    }
    auto calibrated = std::make_shared<const CalibratedCostModel>(std::move(c), std::vector<std::string>{});
    return [calibrated](const std::vector<std::int64_t>&, std::int64_t) -> std::shared_ptr<const CostModel> {
      return calibrated;
    };
  } catch (const std::exception& e) {
    *error = error_text(e);
    return {};
  }
}

bool AdvisorPanel::rank() {
  supersede();  // whatever runs is for older settings, even when this request is refused
  worker_ = nullptr;
  error_.clear();
  const Design& d = doc_->design();
  AdvisorOptions options;
  options.search = static_cast<AdvisorSearch>(search_box_->currentData().toInt());
  options.constraints.within_host = split_names(within_host_->text());
  options.constraints.pp_divides_layers = pp_divides_->isChecked();
  QString error;
  if (!d.workload) {
    error = tr("This design has no workload to rank layouts for.");
  } else if (const auto fixed = parse_fixed(fixed_->text(), &error)) {
    options.constraints.fixed = *fixed;
  }
  CostModelFactory factory;
  if (error.isEmpty()) factory = make_factory(&error);
  if (!error.isEmpty()) {
    error_ = error;
    show_message(status_, error_);
    emit ranked();
    return false;
  }
  const std::uint64_t generation = generation_;
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  auto outcome = std::make_shared<std::pair<AdvisorResult, QString>>();
  const QString unit = model() == ModelKind::Fixed ? QString() : QStringLiteral("µs");
  auto ranked_design = std::make_shared<const Design>(with_absolute_calibration(d, doc_->path()));
  QThread* thread = QThread::create([design = ranked_design, factory, options, outcome, cancel = cancel_]() mutable {
    options.cancel = cancel.get();
    try {
      outcome->first = advise(*design, factory, options);
    } catch (const std::exception& e) {
      outcome->second = error_text(e);
    }
  });
  thread->setParent(this);
  connect(thread, &QThread::finished, this, [this, thread, outcome, generation, unit, ranked_design] {
    if (worker_ == thread) worker_ = nullptr;
    thread->deleteLater();
    if (generation != generation_) return;  // superseded by a newer request or an edit
    ranked_design_ = *ranked_design;
    applied_design_.reset();
    show_result(std::move(outcome->first), outcome->second, unit);
  });
  worker_ = thread;
  show_message(status_, QString());
  status_->setText(tr("Ranking the layouts of %1 ...").arg(layout_label(d.mesh)));
  thread->start();
  return true;
}

void AdvisorPanel::show_result(AdvisorResult result, const QString& error, const QString& unit) {
  if (previewed_) preview(std::nullopt);
  error_ = error;
  if (!error.isEmpty()) {
    model_->clear();
    chart_->clear();
    reason_->clear();
    apply_button_->setEnabled(false);
    show_message(status_, error);
    emit ranked();
    return;
  }
  show_message(status_, QString());
  status_->setText(tr("%1 candidate layout(s), %2 rejected by the constraints; %3 plans computed, %4 reused.")
                       .arg(result.candidates)
                       .arg(result.rejected)
                       .arg(result.plans_computed)
                       .arg(result.plans_reused));
  QString reason = q(result.reason);
  if (result.tied_with_best > 1) reason += tr(" (%1 layouts tie for the best cost.)").arg(result.tied_with_best);
  // The comm model's host rule against groups that straddle hosts, as advise notes it.
  if (!result.host_rule_note.empty()) reason += QStringLiteral("\n") + tr("Note: %1.").arg(q(result.host_rule_note));
  reason_->setText(reason);
  model_->set_result(std::move(result), unit);
  chart_->set_candidates(model_->result().ranked, unit);
  table_->resizeColumnsToContents();
  apply_button_->setEnabled(!model_->result().ranked.empty());
  emit ranked();
}

bool AdvisorPanel::busy() const noexcept { return worker_ != nullptr; }

bool AdvisorPanel::wait_idle(int timeout_ms) {
  QDeadlineTimer deadline(timeout_ms);
  while (busy() && !deadline.hasExpired()) {
    if (worker_ != nullptr) worker_->wait(QDeadlineTimer(20));
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
  }
  return !busy();
}

void AdvisorPanel::set_model(ModelKind kind) {
  if (kind == ModelKind::Calibrated && !calibrated_reason_.isEmpty()) return;  // its entry is disabled
  const int index = model_box_->findData(static_cast<int>(kind));
  if (index >= 0) model_box_->setCurrentIndex(index);
}

AdvisorPanel::ModelKind AdvisorPanel::model() const {
  return static_cast<ModelKind>(model_box_->currentData().toInt());
}

void AdvisorPanel::set_search(AdvisorSearch search) {
  const int index = search_box_->findData(static_cast<int>(search));
  if (index >= 0) search_box_->setCurrentIndex(index);
}

void AdvisorPanel::set_within_host(const QString& axes) { within_host_->setText(axes); }
void AdvisorPanel::set_fixed(const QString& sizes) { fixed_->setText(sizes); }
void AdvisorPanel::set_pp_divides_layers(bool on) { pp_divides_->setChecked(on); }

const AdvisorResult& AdvisorPanel::result() const noexcept { return model_->result(); }
QString AdvisorPanel::reason() const { return reason_->text(); }

void AdvisorPanel::preview(std::optional<std::size_t> index) {
  const CandidateCost* c = index && !stale() ? model_->candidate(static_cast<int>(*index)) : nullptr;
  if (c == nullptr) {
    previewed_.reset();
    chart_->set_highlighted(std::nullopt);
    table_->selectionModel()->clearSelection();
    emit preview_requested(std::nullopt);
    return;
  }
  previewed_ = index;
  chart_->set_highlighted(index);
  const QModelIndex row = proxy_->mapFromSource(model_->index(static_cast<int>(*index), 0));
  if (table_->currentIndex().row() != row.row()) {
    table_->selectionModel()->setCurrentIndex(row, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  }
  emit preview_requested(c->mesh);
}

bool AdvisorPanel::apply() {
  const CandidateCost* c = model_->candidate(previewed_ ? static_cast<int>(*previewed_) : 0);
  if (c == nullptr || stale()) return false;
  const MeshSpec mesh = c->mesh;
  // The ranking stays valid for the design with this layout applied (the same candidates), so it can be applied
  // again, another layout chosen, or the edit undone.
  try {
    applied_design_ = with_layout(*ranked_design_, mesh);
  } catch (const std::exception&) {
    applied_design_.reset();
  }
  emit apply_requested(mesh);
  return true;
}

}  // namespace meshloom::app
