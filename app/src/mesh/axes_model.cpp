#include "mesh/axes_model.hpp"

#include <QBrush>
#include <QFont>
#include <QPalette>
#include <QRegularExpression>

#include <algorithm>

#include "document/design_document.hpp"
#include "meshloom/design/edit.hpp"

namespace meshloom::app {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

// CuTe notation, a one-mode layout without its tuple parentheses: "4:2" rather than "(4,):(2,)".
QString layout_text(const Layout& layout) {
  static const QRegularExpression one_mode(QStringLiteral("^\\((\\d+),\\):\\((\\d+),\\)$"));
  if (size(layout) == 1) return QStringLiteral("1:0");  // a size-1 axis owns no ranks: ():() in the engine
  QString text = q(to_string(layout));
  return text.replace(one_mode, QStringLiteral("\\1:\\2"));
}

// The table's rows: the mesh axes, then the flattened axes.
std::vector<std::string> row_names(const MeshSpec& spec) {
  std::vector<std::string> names = spec.names;
  for (const auto& f : spec.flattened) names.push_back(f.name);
  return names;
}

// How many rows name another axis than before; npos when the rows are not as many.
std::size_t rows_renamed(const std::vector<std::string>& before, const std::vector<std::string>& now) {
  if (before.size() != now.size()) return std::string::npos;
  std::size_t differing = 0;
  for (std::size_t i = 0; i < now.size(); ++i) {
    if (now[i] != before[i]) ++differing;
  }
  return differing;
}

}  // namespace

AxesModel::AxesModel(DesignDocument* doc, QObject* parent) : QAbstractTableModel(parent), doc_(doc) {
  (void)reload();
  connect(doc_, &DesignDocument::design_changed, this, [this] {
    // The same axes on the same rows (a resize, a world change, one rename): a data change, so an open editor
    // (TypingDelegate keeps its typing) and the selection survive. Rows added, removed or reordered: a reset, which
    // closes an open editor rather than leave it on a row that is another axis now (its typing would rename that).
    const bool same_rows = rows_renamed(names_, row_names(doc_->design().mesh)) <= 1;
    bool picks_changed = false;
    if (same_rows) {
      picks_changed = reload();
      if (rowCount() > 0) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
      emit headerDataChanged(Qt::Vertical, 0, rowCount() - 1);
    } else {
      beginResetModel();
      picks_changed = reload();
      endResetModel();
    }
    if (picks_changed) emit picked_changed();  // after the model is whole again
  });
}

bool AxesModel::reload() {
  std::vector<std::string> now = row_names(doc_->design().mesh);
  // A rename (the same rows, exactly one name different) carries its pick; other picks of names that are
  // gone are dropped.
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t renamed = kNone;  // the row of the one renamed name
  if (rows_renamed(names_, now) == 1) {
    renamed = static_cast<std::size_t>(std::mismatch(now.begin(), now.end(), names_.begin()).first - now.begin());
  }
  QStringList kept;
  for (const QString& p : picked_) {
    const std::string name = p.toStdString();
    if (std::find(now.begin(), now.end(), name) != now.end()) {
      kept << p;
    } else if (renamed != kNone && names_[renamed] == name) {
      kept << q(now[renamed]);
    }
  }
  const bool picks_changed = kept != picked_;
  picked_ = kept;
  names_ = std::move(now);
  return picks_changed;
}

int AxesModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(names_.size());
}

int AxesModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

std::string AxesModel::axis_name(int row) const {
  return row >= 0 && row < rowCount() ? names_[static_cast<std::size_t>(row)] : std::string();
}

bool AxesModel::is_flattened(int row) const {
  return row >= static_cast<int>(doc_->design().mesh.names.size()) && row < rowCount();
}

int AxesModel::row_of(const std::string& name) const {
  const auto it = std::find(names_.begin(), names_.end(), name);
  return it == names_.end() ? -1 : static_cast<int>(it - names_.begin());
}

QVariant AxesModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || !checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const int row = index.row();
  const std::string name = axis_name(row);
  const bool flat = is_flattened(row);
  const DeviceMesh& mesh = doc_->mesh();
  const AxisRef axis{name};
  switch (role) {
    case AxisNameRole: return q(name);
    case IsFlattenedRole: return flat;
    case Qt::CheckStateRole:
      return index.column() == Name ? QVariant(picked_.contains(q(name)) ? Qt::Checked : Qt::Unchecked) : QVariant();
    case Qt::FontRole:
      if (flat && index.column() == Name) {
        QFont f;
        f.setItalic(true);
        return f;
      }
      return {};
    case Qt::ToolTipRole:
      switch (index.column()) {
        case Name:
          return flat ? tr("Flattened axis %1: tick to slice by it; double-click to rename").arg(q(name))
                      : tr("Mesh axis %1: tick to slice by it; double-click to rename").arg(q(name));
        case Size: return flat ? tr("The product of the axes it flattens") : tr("Double-click to resize");
        case Groups: return tr("Every group of %1 is a process group in PyTorch: mesh.get_group(\"%1\")").arg(q(name));
        case LayoutColumn: return tr("size:stride of the axis over the ranks of the mesh (CuTe notation)");
        default: return {};
      }
    case Qt::TextAlignmentRole:
      return index.column() == Size ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    case Qt::DisplayRole:
    case Qt::EditRole:
      switch (index.column()) {
        case Name:
          // The tick order, once it matters (two or more ticked): "tp (1)".
          if (role == Qt::DisplayRole && picked_.size() > 1 && picked_.contains(q(name))) {
            return QStringLiteral("%1 (%2)").arg(q(name)).arg(picked_.indexOf(q(name)) + 1);
          }
          return q(name);
        case Size: return static_cast<qlonglong>(mesh.size(axis));
        case MadeOf: {
          if (!flat) return QString();
          const auto& f = doc_->design().mesh.flattened[static_cast<std::size_t>(row) - doc_->design().mesh.names.size()];
          QStringList parts;
          for (const auto& a : f.axes) parts << q(a);
          return parts.join(QStringLiteral(" × "));
        }
        case Groups: {
          // The root mesh has one instance: size / size(axis) groups of size(axis) (DeviceMesh::groups), counted
          // without enumerating them.
          const std::int64_t size = mesh.size(axis);
          const std::int64_t count = mesh.size() / size;
          return count == 1 ? tr("1 group of %1").arg(size) : tr("%1 groups of %2").arg(count).arg(size);
        }
        case LayoutColumn: {
          const std::size_t own = doc_->design().mesh.names.size();
          // A copy: flattened() returns a temporary mesh.
          const Layout layout = static_cast<std::size_t>(row) < own ? mesh.axes()[static_cast<std::size_t>(row)]
                                                                     : mesh.flattened(name)->axes().front();
          return layout_text(layout);
        }
        default: return {};
      }
    default: return {};
  }
}

QVariant AxesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation == Qt::Vertical) {
    if (role == Qt::DisplayRole) return section < static_cast<int>(doc_->design().mesh.names.size()) ? QString::number(section) : QStringLiteral("⊗");
    return {};
  }
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case Name: return tr("Axis");
    case Size: return tr("Size");
    case MadeOf: return tr("Made of");
    case Groups: return tr("Groups");
    case LayoutColumn: return tr("Layout");
    default: return {};
  }
}

Qt::ItemFlags AxesModel::flags(const QModelIndex& index) const {
  if (!index.isValid() || !checkIndex(index, CheckIndexOption::IndexIsValid)) return Qt::NoItemFlags;
  Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
  if (index.column() == Name) f |= Qt::ItemIsEditable | Qt::ItemIsUserCheckable;
  if (index.column() == Size && !is_flattened(index.row())) f |= Qt::ItemIsEditable;
  return f;
}

bool AxesModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!index.isValid() || !checkIndex(index, CheckIndexOption::IndexIsValid)) return false;
  const std::string name = axis_name(index.row());
  if (role == Qt::CheckStateRole && index.column() == Name) {
    const bool on = value.value<Qt::CheckState>() == Qt::Checked;
    const QString qname = q(name);
    if (on == picked_.contains(qname)) return true;
    if (on) {
      picked_ << qname;
    } else {
      picked_.removeAll(qname);
    }
    // Every ticked row's place in the tick order may have changed with this one.
    emit dataChanged(this->index(0, Name), this->index(rowCount() - 1, Name), {Qt::CheckStateRole, Qt::DisplayRole});
    emit picked_changed();
    return true;
  }
  if (role != Qt::EditRole) return false;
  QString error;
  bool ok = false;
  if (index.column() == Name) {
    const std::string to = value.toString().trimmed().toStdString();
    ok = doc_->edit(tr("Rename %1 to %2").arg(q(name), q(to)),
                    [&](const Design& d) { return rename_axis(d, name, to); }, &error);
  } else if (index.column() == Size && !is_flattened(index.row())) {
    bool is_int = false;
    const qlonglong size = value.toLongLong(&is_int);
    if (!is_int) {
      error = tr("size %1 of axis %2 is not an integer").arg(value.toString(), q(name));
    } else {
      ok = doc_->edit(tr("Resize %1 to %2").arg(q(name)).arg(size),
                      [&](const Design& d) { return resize_axis(d, name, size); }, &error);
    }
  } else {
    return false;
  }
  if (!ok) emit edit_refused(index, error);
  return ok;
}

std::vector<std::string> AxesModel::picked() const {
  std::vector<std::string> out;
  for (const QString& p : picked_) out.push_back(p.toStdString());
  return out;
}

void AxesModel::set_picked(const std::vector<std::string>& names) {
  QStringList next;
  for (const auto& n : names) {
    if (row_of(n) >= 0) next << q(n);
  }
  if (next == picked_) return;
  picked_ = next;
  if (rowCount() > 0) {
    emit dataChanged(index(0, Name), index(rowCount() - 1, Name), {Qt::CheckStateRole, Qt::DisplayRole});
  }
  emit picked_changed();
}

std::vector<std::string> AxesModel::picked_in_mesh_order() const {
  std::vector<std::string> out = picked();
  std::stable_sort(out.begin(), out.end(),
                   [this](const std::string& a, const std::string& b) { return row_of(a) < row_of(b); });
  return out;
}

}  // namespace meshloom::app
