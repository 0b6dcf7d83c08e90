#include "plan/plan_model.hpp"

#include <QFont>
#include <QLocale>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <utility>

#include "shell/inline_message.hpp"

namespace meshloom::app {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }
QString q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

QString axis_name(const MeshSpec& mesh, std::size_t axis) {
  return axis < mesh.names.size() ? q(mesh.names[axis]) : QString::number(axis);
}

QString collective_tip(Collective c) {
  switch (c) {
    case Collective::AllGather: return PlanModel::tr("all_gather: S(d) → R, every rank receives the whole dim");
    case Collective::AllReduce: return PlanModel::tr("all_reduce: P → R, the partial values are reduced on every rank");
    case Collective::ReduceScatter:
      return PlanModel::tr("reduce_scatter: P → S(d), reduced and split across the axis");
    case Collective::AllToAll: return PlanModel::tr("all_to_all: S(a) → S(b), the shards are exchanged");
    case Collective::Chunk: return PlanModel::tr("chunk: R → S(d), local: each rank keeps its chunk (no communication)");
    case Collective::ReplicateToPartial:
      return PlanModel::tr("replicate_to_partial: R → P, local (no communication)");
    case Collective::ShardToPartial:
      return PlanModel::tr("shard_to_partial: S(d) → P(sum), local: zero-filled around the shard (no communication)");
  }
  return {};
}

}  // namespace

PlanModel::PlanModel(QObject* parent) : QAbstractTableModel(parent) {}

int PlanModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !plan_ ? 0 : static_cast<int>(plan_->steps.size());
}

int PlanModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

void PlanModel::set_plan(std::shared_ptr<const Plan> plan, const MeshSpec& mesh, const QString& cost_unit) {
  beginResetModel();
  plan_ = std::move(plan);
  mesh_ = mesh;
  unit_ = cost_unit;
  error_.clear();
  endResetModel();
}

void PlanModel::set_error(const QString& message) {
  beginResetModel();
  plan_.reset();
  error_ = message;
  endResetModel();
}

double PlanModel::total() const noexcept { return plan_ ? plan_->cost : 0.0; }

QString PlanModel::total_text() const { return plan_ ? cost_text(plan_->cost) : QString(); }

QString PlanModel::cost_text(double cost) const {
  if (std::isinf(cost)) return QStringLiteral("∞");
  if (unit_.isEmpty()) return QString::number(cost, 'g', 6);
  return QStringLiteral("%1 %2").arg(QString::number(cost, 'f', 2), unit_);
}

QString PlanModel::axis_text(int row) const {
  if (!plan_ || row < 0 || row >= rowCount()) return {};
  const PlanStep& step = plan_->steps[static_cast<std::size_t>(row)];
  if (step.axes.size() == 1) return axis_name(mesh_, step.axes.front());
  QStringList names;
  std::vector<std::string> raw;
  for (const std::size_t a : step.axes) {
    names << axis_name(mesh_, a);
    raw.push_back(a < mesh_.names.size() ? mesh_.names[a] : std::to_string(a));
  }
  const QString list = names.join(QStringLiteral(", "));
  // The flattened axis whose group the merged step ran on (its axes in mesh order, as the step lists them).
  const auto flat = std::find_if(mesh_.flattened.begin(), mesh_.flattened.end(),
                                 [&raw](const FlattenSpec& f) { return f.axes == raw; });
  return flat == mesh_.flattened.end() ? list : QStringLiteral("%1 (%2)").arg(q(flat->name), list);
}

QVariant PlanModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || !checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const PlanStep& step = plan_->steps[static_cast<std::size_t>(index.row())];
  switch (role) {
    case CollectiveRole: return q(to_string(step.collective));
    case AxesRole: {
      QVariantList axes;
      for (const std::size_t a : step.axes) axes << QVariant::fromValue(static_cast<qulonglong>(a));
      return axes;
    }
    case BeforeRole: return q(to_string(step.before));
    case AfterRole: return q(to_string(step.after));
    case BytesRole: return static_cast<qlonglong>(step.bytes);
    case CostRole: return step.cost;
    case MergedRole: return step.merged;
    case Qt::TextAlignmentRole:
      return index.column() == StepColumn || index.column() == BytesColumn || index.column() == CostColumn
                 ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                 : QVariant();
    case Qt::FontRole:
      if (index.column() == CollectiveColumn && !communicates(step.collective)) {
        QFont f;
        f.setItalic(true);
        return f;
      }
      return {};
    case Qt::ToolTipRole:
      switch (index.column()) {
        case AxisColumn:
          return step.merged ? tr("Merged: one collective on the flattened group of %1").arg(axis_text(index.row()))
                             : tr("Mesh axis %1 (%2)").arg(step.axes.front()).arg(axis_text(index.row()));
        case CollectiveColumn: return collective_tip(step.collective);
        case FromToColumn:
          return tr("%1 → %2 on the axis; logical shape %3")
              .arg(q(to_string(step.from)), q(to_string(step.to)), shape_text(step.logical_shape));
        case BytesColumn:
          return tr("Bytes of the local tensor each rank holds before the step (%1)")
              .arg(QLocale().formattedDataSize(step.bytes, 2, QLocale::DataSizeTraditionalFormat));
        case CostColumn:
          return unit_.isEmpty() ? tr("The step's weight under the fixed cost model")
                                 : tr("The step's predicted time in %1").arg(unit_);
        default: return {};
      }
    case Qt::DisplayRole:
      switch (index.column()) {
        case StepColumn: return index.row() + 1;  // step k leads to the animation's frame k
        case AxisColumn: return axis_text(index.row());
        case CollectiveColumn: return q(to_string(step.collective));
        case FromToColumn:
          return QStringLiteral("%1 → %2").arg(q(to_string(step.before)), q(to_string(step.after)));
        case BytesColumn: return QLocale().toString(static_cast<qlonglong>(step.bytes));
        case CostColumn: return cost_text(step.cost);
        default: return {};
      }
    default: return {};
  }
}

QVariant PlanModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case StepColumn: return tr("Step");
    case AxisColumn: return tr("Axis");
    case CollectiveColumn: return tr("Collective");
    case FromToColumn: return tr("From → To");
    case BytesColumn: return tr("Bytes");
    case CostColumn: return unit_.isEmpty() ? tr("Cost") : tr("Cost (%1)").arg(unit_);
    default: return {};
  }
}

Qt::ItemFlags PlanModel::flags(const QModelIndex& index) const {
  if (!index.isValid() || !checkIndex(index, CheckIndexOption::IndexIsValid)) return Qt::NoItemFlags;
  return Qt::ItemIsEnabled | Qt::ItemIsSelectable;
}

QString PlanModel::summary() const {
  if (!plan_) return tr("No plan.");
  const int steps = rowCount();
  QStringList counts;
  for (const auto& [name, count] : comm_counts(*plan_)) counts << QStringLiteral("%1 %2").arg(q(name)).arg(count);
  const QString list = counts.join(QStringLiteral(", "));
  const QString head = steps == 0   ? tr("No steps: the states are equal")
                       : steps == 1 ? tr("1 step (%1)").arg(list)
                                    : tr("%1 steps (%2)").arg(steps).arg(list);
  return tr("%1, total %2; %3 explored").arg(head, total_text(), counted(static_cast<long long>(plan_->states_explored), tr("state")));
}

}  // namespace meshloom::app
