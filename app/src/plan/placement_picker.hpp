// PlacementPicker: a redistribution state edited axis by axis. For every mesh axis, its name, a placement box
// (R, S(0) .. S(rank-1) for the tensor's dims, P(sum), P(avg), P(max), P(min), P(product)) and, where a tensor dim is
// split by more than one axis, this axis' place in the dim's shard order (the text form's [k]: 0 is split first).
// Every box explains its choice in words in its tooltip ("S(1): tensor dim 1 split across the 4 ranks of tp"), and
// an order box names the dim's whole order ("tensor dim 0 is split by pp [0], then tp [1]").
//
// Layout: the axes left to right in mesh order, at most kMaxAxesPerRow to a row and the rows balanced (4 axes: 2
// and 2), each axis a label, its placement box and its order box (hidden where the axis shares its dim with no
// other). align() gives two pickers of the same mesh the same column widths, so that the source's and the target's
// boxes of one axis stand one above the other whichever order boxes either shows.
//
// It only edits: a choice emits state_edited(new state) and the owner decides (RedistributionPanel applies it as
// the same undoable edit as typed text, or shows why the engine refuses it, then shows the design's state again).
// The new state keeps the shard order of the dims it does not touch; an axis that newly shards a dim joins its
// order last (innermost), one that stops sharding leaves it; moving an axis in a dim's order shifts the others.
// So every choice is a state the engine's State accepts. set_state() shows a state without emitting.
#pragma once

#include <QString>
#include <QWidget>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "meshloom/plan/state.hpp"

class QComboBox;
class QGridLayout;
class QLabel;
class QSpinBox;

namespace meshloom::app {

class PlacementPicker : public QWidget {
  Q_OBJECT

public:
  static constexpr int kMaxAxesPerRow = 3;

  explicit PlacementPicker(QWidget* parent = nullptr);

  // Shows `state` on a mesh of `mesh_shape` with these axis names, for a tensor of `tensor_rank` dims. The boxes are
  // rebuilt when the mesh (sizes or names) or the rank changed. A state that does not fit (another number of axes,
  // a dim past the rank) selects nothing, disables the picker and says why in its tooltip.
  void set_state(const State& state, const std::vector<std::int64_t>& mesh_shape,
                 const std::vector<std::string>& axis_names, std::int64_t tensor_rank);
  // The state shown (a default State when the one given did not fit).
  [[nodiscard]] const State& state() const noexcept { return state_; }
  [[nodiscard]] std::size_t axis_count() const noexcept { return boxes_.size(); }
  // How many axes stand in one row (1..kMaxAxesPerRow; 0 without axes).
  [[nodiscard]] int axes_per_row() const noexcept { return per_row_; }

  // The axis' name label, placement box and shard-order box (nullptr past the last axis). The placement box's
  // entries are choices(rank) in order; the order box is visible only where the axis shares its dim with other
  // axes, its value is the axis' 0-based place in that dim's order and its range the dim's axes.
  [[nodiscard]] QLabel* axis_label(std::size_t axis) const;
  [[nodiscard]] QComboBox* placement_box(std::size_t axis) const;
  [[nodiscard]] QSpinBox* order_box(std::size_t axis) const;

  // Gives both pickers the wider of their natural column widths, column by column (for two pickers of one mesh,
  // one above the other). Call after set_state on both.
  static void align(PlacementPicker& a, PlacementPicker& b);

  // The placements a box offers for a tensor of `rank` dims, in order: R, S(0)..S(rank-1), P(op) for every op.
  [[nodiscard]] static std::vector<Placement> choices(std::int64_t rank);
  // The state with axis `axis` placed at `placement` (orders kept, a new shard axis innermost). `state` itself when
  // the axis is past its last.
  [[nodiscard]] static State with_placement(const State& state, std::size_t axis, const Placement& placement);
  // The state with axis `axis` moved to position `position` of its dim's shard order (clamped to the last place);
  // `state` itself when the axis shards nothing.
  [[nodiscard]] static State with_order(const State& state, std::size_t axis, std::size_t position);

signals:
  void state_edited(const meshloom::State& state);

private:
  void rebuild();
  void sync();  // the boxes from state_
  [[nodiscard]] QString axis_name(std::size_t axis) const;
  [[nodiscard]] QString explain(const Placement& p, std::size_t axis) const;
  [[nodiscard]] std::vector<int> natural_widths() const;  // per grid column, of what is not hidden

  State state_;
  std::vector<std::int64_t> mesh_shape_;
  std::vector<std::string> names_;
  std::int64_t rank_ = 0;
  bool built_ = false;
  int per_row_ = 0;
  int columns_ = 0;  // grid columns in use (3 per axis in a row), the stretch column after them
  QGridLayout* grid_ = nullptr;
  std::vector<QLabel*> labels_;
  std::vector<QComboBox*> boxes_;
  std::vector<QSpinBox*> orders_;
};

}  // namespace meshloom::app
