// SliceModel: the groups of the picked slice as a list, one row per group (its ranks, its colour on the
// canvas). It holds the current SliceGroups (slice.hpp: computed by the engine) or, for an invalid pick, the
// engine's error with a line on the rule PyTorch applies.
#pragma once

#include <QAbstractListModel>
#include <QString>

#include <string>
#include <vector>

#include "mesh/slice.hpp"

namespace meshloom::app {

class SliceModel : public QAbstractListModel {
  Q_OBJECT

public:
  explicit SliceModel(QObject* parent = nullptr);

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

  // Recomputes the slice of `root` by `axes` (empty: no slice). Never throws: an invalid pick leaves no rows
  // and sets error().
  void set_slice(const DeviceMesh& root, const std::vector<std::string>& axes);
  [[nodiscard]] const SliceGroups& slice() const noexcept { return slice_; }
  [[nodiscard]] bool has_slice() const noexcept { return !slice_.groups.empty(); }
  // The engine's message for an invalid pick, then a line with PyTorch's rule; empty when the pick is valid.
  [[nodiscard]] const QString& error() const noexcept { return error_; }
  // One line for the panel: mesh["dp", "tp"]: 2 groups of 4 ranks.
  [[nodiscard]] QString summary() const;
  // The row of the group that holds `rank`, or -1.
  [[nodiscard]] int group_of_rank(std::int64_t rank) const;
  // The colour of group `row`, as the canvas paints it under the application palette.
  [[nodiscard]] QColor group_color(int row) const;

private:
  SliceGroups slice_;
  QString error_;
  QString expression_;
};

// mesh["dp", "tp"] for the picked axes (Python's subscript form).
[[nodiscard]] QString slice_expression(const std::vector<std::string>& axes);
// A sentence on the PyTorch rule an engine slicing error breaks, or an empty string when none applies.
[[nodiscard]] QString slice_rule(const QString& engine_message);

}  // namespace meshloom::app
