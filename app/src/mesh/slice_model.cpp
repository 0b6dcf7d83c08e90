#include "mesh/slice_model.hpp"

#include <QGuiApplication>
#include <QPalette>

#include <exception>

#include "canvas/mesh_grid_item.hpp"
#include "shell/inline_message.hpp"

namespace meshloom::app {

namespace {

constexpr int kRanksShown = 64;  // a group's row lists at most this many ranks; the tooltip says how many more

bool dark_palette() { return QGuiApplication::palette().color(QPalette::Window).lightness() < 128; }

QString rank_list(const std::vector<std::int64_t>& ranks, int limit) {
  QStringList parts;
  const int n = static_cast<int>(ranks.size());
  for (int i = 0; i < n && i < limit; ++i) parts << QString::number(ranks[static_cast<std::size_t>(i)]);
  QString text = parts.join(QStringLiteral(", "));
  if (n > limit) text += QStringLiteral(", … (%1 ranks)").arg(n);
  return text;
}

}  // namespace

QString slice_expression(const std::vector<std::string>& axes) {
  QStringList parts;
  for (const auto& a : axes) parts << QStringLiteral("\"%1\"").arg(QString::fromStdString(a));
  return QStringLiteral("mesh[%1]").arg(parts.join(QStringLiteral(", ")));
}

QString slice_rule(const QString& message) {
  if (message.contains(QStringLiteral("ascending order"))) {
    return QObject::tr("PyTorch slices axes in mesh order, outer to inner: the axes of mesh[...] must appear in "
                       "the order their strides decrease (a flattened axis stands where its outermost axis is).");
  }
  if (message.contains(QStringLiteral("overlapping"))) {
    return QObject::tr("A slice may use each mesh axis once: a flattened axis covers every axis it was made of, so "
                       "it cannot be picked together with one of them.");
  }
  if (message.contains(QStringLiteral("Invalid mesh_dim_names"))) {
    return QObject::tr("Slice by the mesh's own axis names or the names of axes flattened from the root.");
  }
  return {};
}

SliceModel::SliceModel(QObject* parent) : QAbstractListModel(parent) {}

int SliceModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(slice_.groups.size());
}

QVariant SliceModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || !checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const auto& ranks = slice_.groups[static_cast<std::size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole: return tr("%1: %2").arg(index.row()).arg(rank_list(ranks, kRanksShown));
    case Qt::ToolTipRole:
      return tr("Group %1 of %2: %3 ranks\n%4")
          .arg(index.row())
          .arg(rowCount())
          .arg(ranks.size())
          .arg(rank_list(ranks, 1024));
    case Qt::DecorationRole: return group_color(index.row());
    default: return {};
  }
}

void SliceModel::set_slice(const DeviceMesh& root, const std::vector<std::string>& axes) {
  beginResetModel();
  slice_ = SliceGroups{};
  error_.clear();
  expression_ = axes.empty() ? QString() : slice_expression(axes);
  if (!axes.empty()) {
    try {
      slice_ = slice_groups(root, axes);
    } catch (const std::exception& e) {
      const QString message = error_text(e);
      const QString rule = slice_rule(message);
      error_ = rule.isEmpty() ? message : message + QLatin1Char('\n') + rule;
    }
  }
  endResetModel();
}

QString SliceModel::summary() const {
  if (expression_.isEmpty()) return tr("Tick axes in the Mesh table to slice.");
  if (!error_.isEmpty()) return tr("%1 is not a valid slice.").arg(expression_);
  const auto groups = slice_.groups.size();
  const auto size = groups == 0 ? 0 : slice_.groups.front().size();
  const QString of = groups == 1 ? tr("1 group") : tr("%1 groups").arg(groups);
  const QString ranks = size == 1 ? tr("1 rank") : tr("%1 ranks").arg(size);
  return tr("%1: %2 of %3").arg(expression_, of, ranks);
}

int SliceModel::group_of_rank(std::int64_t rank) const {
  for (std::size_t g = 0; g < slice_.groups.size(); ++g) {
    for (auto r : slice_.groups[g]) {
      if (r == rank) return static_cast<int>(g);
    }
  }
  return -1;
}

QColor SliceModel::group_color(int row) const {
  return MeshGridItem::group_color(row, rowCount(), dark_palette());
}

}  // namespace meshloom::app
