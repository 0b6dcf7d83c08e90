// AxesModel: the design's mesh axes and flattened axes as a table, the model behind the mesh designer.
//
// Rows: the mesh axes, outer to inner, then the flattened axes in creation order. Columns:
//   Name     editable; a check box picks the axis for the slice view (view state, not a design edit)
//   Size     editable for mesh axes (flattened axes are the product of theirs)
//   Made of  for a flattened axis the axes it flattens ("dp_replicate × dp_shard"); empty for a mesh axis
//   Groups   "4 groups of 2" (the engine's DeviceMesh::groups)
//   Layout   the axis' normalized layout, e.g. "4:2" (offsets into the rank map)
// Renames and resizes are design edits: setData runs the engine's rename_axis / resize_axis through the
// document (one undoable command each). A refused edit leaves the design as it was, returns false and emits
// edit_refused with the engine's message, so the view can show it next to the cell at fault.
#pragma once

#include <QAbstractTableModel>
#include <QStringList>

#include <string>
#include <vector>

namespace meshloom::app {

class DesignDocument;

class AxesModel : public QAbstractTableModel {
  Q_OBJECT

public:
  enum Column { Name, Size, MadeOf, Groups, LayoutColumn, ColumnCount };
  enum Role { AxisNameRole = Qt::UserRole + 1, IsFlattenedRole };

  explicit AxesModel(DesignDocument* doc, QObject* parent = nullptr);

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
  [[nodiscard]] Qt::ItemFlags flags(const QModelIndex& index) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

  // The axis name on a row ("" for an invalid row) and whether it is a flattened axis.
  [[nodiscard]] std::string axis_name(int row) const;
  [[nodiscard]] bool is_flattened(int row) const;
  // The row of an axis or flattened axis, or -1.
  [[nodiscard]] int row_of(const std::string& name) const;

  // The axes picked for the slice view, in the order they were ticked (the order of mesh[...] in PyTorch, so
  // an out-of-order pick is shown with PyTorch's rule). Picks of names an edit removes are dropped; a rename
  // carries the pick.
  [[nodiscard]] std::vector<std::string> picked() const;
  void set_picked(const std::vector<std::string>& names);
  // The picks in table order (mesh axes outer to inner, then flattened axes): the order mesh[...] accepts when
  // the tick order is refused. While two or more axes are ticked, each ticked name shows its place in the tick
  // order ("tp (1)", "cp (2)"), since that order decides the slice and the flattened axis.
  [[nodiscard]] std::vector<std::string> picked_in_mesh_order() const;

signals:
  void edit_refused(const QModelIndex& index, const QString& message);
  void picked_changed();

private:
  bool reload();  // true when the picks changed
  DesignDocument* doc_;
  std::vector<std::string> names_;  // what the rows showed before the last reload (to carry picks on rename)
  QStringList picked_;
};

}  // namespace meshloom::app
