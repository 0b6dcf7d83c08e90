#include "advisor/advisor_model.hpp"

#include <QLocale>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <utility>

namespace meshloom::app {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

const AxisCost* axis_of(const CandidateCost& c, const std::string& name) {
  for (const auto& a : c.axes) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

}  // namespace

QString layout_label(const MeshSpec& mesh) { return q(layout_text(mesh)); }

QString hosts_text(const CandidateCost& candidate) {
  QStringList parts;
  for (const auto& a : candidate.axes) {
    if (a.hosts > 1) parts << QObject::tr("%1: %2 hosts").arg(q(a.name)).arg(a.hosts);
  }
  return parts.isEmpty() ? QObject::tr("none") : parts.join(QStringLiteral(", "));
}

QString cost_text(double cost, const QString& unit) {
  if (!std::isfinite(cost)) return QObject::tr("cannot price");
  if (unit.isEmpty()) return QLocale().toString(cost, 'g', 4);
  if (cost >= 1e6) return QStringLiteral("%1 s").arg(QLocale().toString(cost / 1e6, 'f', 3));
  if (cost >= 1e3) return QStringLiteral("%1 ms").arg(QLocale().toString(cost / 1e3, 'f', 3));
  return QStringLiteral("%1 %2").arg(QLocale().toString(cost, 'f', 1), unit);
}

AdvisorModel::AdvisorModel(QObject* parent) : QAbstractTableModel(parent) {}

void AdvisorModel::set_result(AdvisorResult result, const QString& unit) {
  beginResetModel();
  result_ = std::move(result);
  unit_ = unit;
  axis_names_.clear();
  for (const auto& c : result_.ranked) {
    for (const auto& name : c.mesh.names) {
      if (std::find(axis_names_.begin(), axis_names_.end(), name) == axis_names_.end()) axis_names_.push_back(name);
    }
  }
  endResetModel();
}

void AdvisorModel::clear() { set_result(AdvisorResult{}, unit_); }

const CandidateCost* AdvisorModel::candidate(int row) const {
  if (row < 0 || row >= static_cast<int>(result_.ranked.size())) return nullptr;
  return &result_.ranked[static_cast<std::size_t>(row)];
}

int AdvisorModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(result_.ranked.size());
}

int AdvisorModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : hosts_column() + 1; }

QVariant AdvisorModel::data(const QModelIndex& index, int role) const {
  const CandidateCost* c = candidate(index.row());
  if (c == nullptr || index.column() < 0 || index.column() > hosts_column()) return {};
  const int col = index.column();
  const double best = result_.ranked.front().cost;
  const double ratio = best > 0 && std::isfinite(best) ? c->cost / best : (c->cost == best ? 1.0 : INFINITY);
  if (role == Qt::UserRole) {  // what sorting compares
    if (col == RankColumn) return index.row() + 1;
    if (col == LayoutColumn) return layout_label(c->mesh);
    if (col == CostColumn) return c->cost;
    if (col == RatioColumn) return ratio;
    if (col == hosts_column()) {
      std::int64_t most = 1;
      for (const auto& a : c->axes) most = std::max(most, a.hosts);
      return static_cast<qlonglong>(most);
    }
    const AxisCost* a = axis_of(*c, axis_names_[static_cast<std::size_t>(col - FirstAxisColumn)]);
    return a != nullptr ? a->cost : 0.0;
  }
  if (role == Qt::TextAlignmentRole) {
    return (col == LayoutColumn || col == hosts_column()) ? QVariant(int(Qt::AlignLeft | Qt::AlignVCenter))
                                                          : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
  }
  if (role == Qt::ToolTipRole && col == LayoutColumn && !c->unpriced.empty()) return q(c->unpriced);
  if (role != Qt::DisplayRole) return {};
  if (col == RankColumn) return index.row() + 1;
  if (col == LayoutColumn) return layout_label(c->mesh);
  if (col == CostColumn) return cost_text(c->cost, unit_);
  if (col == RatioColumn) return std::isfinite(ratio) ? QStringLiteral("%1×").arg(QLocale().toString(ratio, 'f', 2)) : QStringLiteral("—");
  if (col == hosts_column()) return hosts_text(*c);
  const auto& name = axis_names_[static_cast<std::size_t>(col - FirstAxisColumn)];
  const AxisCost* a = axis_of(*c, name);
  if (a == nullptr) return QStringLiteral("—");
  return QStringLiteral("%1 (%2)").arg(cost_text(a->cost, unit_)).arg(a->size);
}

QVariant AdvisorModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case RankColumn: return tr("Rank");
    case LayoutColumn: return tr("Layout");
    case CostColumn: return unit_.isEmpty() ? tr("Cost / step (fixed weights)") : tr("Cost / step");
    case RatioColumn: return tr("× best");
    default: break;
  }
  if (section == hosts_column()) return tr("Crosses hosts");
  if (section >= FirstAxisColumn && section < hosts_column()) {
    return tr("%1 (size)").arg(q(axis_names_[static_cast<std::size_t>(section - FirstAxisColumn)]));
  }
  return {};
}

}  // namespace meshloom::app
