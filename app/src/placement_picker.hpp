// PlacementPicker: a redistribution state edited axis by axis. For every mesh axis, its name, a placement box
// (R, S(0) .. S(rank-1) for the tensor's dims, P(sum), P(avg), P(max), P(min), P(product)) and, where a tensor dim is
// split by more than one axis, this axis' place in the dim's shard order (the text form's [k]: 0 is split first).
// Every box explains its choice in words in its tooltip ("S(1): tensor dim 1 split across the 4 ranks of tp").
//
// It only edits: a choice emits state_edited(new state) and the owner decides (RedistributionPanel applies it as
// the same undoable edit as typed text, or shows why the engine refuses it). The new state keeps the shard order
// of the dims it does not touch; an axis that newly shards a dim joins its order last (innermost), one that stops
// sharding leaves it; moving an axis in a dim's order shifts the others. set_state() shows a state without emitting.
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
  explicit PlacementPicker(QWidget* parent = nullptr);

  // Shows `state` on a mesh of `mesh_shape` with these axis names, for a tensor of `tensor_rank` dims. The boxes are
  // rebuilt when the mesh or the rank changed. A state that does not fit (another number of axes, a dim past the
  // rank) shows nothing and disables the picker.
  void set_state(const State& state, const std::vector<std::int64_t>& mesh_shape,
                 const std::vector<std::string>& axis_names, std::int64_t tensor_rank);
  [[nodiscard]] const State& state() const noexcept { return state_; }
  [[nodiscard]] std::size_t axis_count() const noexcept { return boxes_.size(); }

  // The placement box and the shard-order box of an axis (nullptr past the last axis); the order box is visible
  // only where the axis shares its dim with other axes.
  [[nodiscard]] QComboBox* placement_box(std::size_t axis) const;
  [[nodiscard]] QSpinBox* order_box(std::size_t axis) const;

  // The placements a box offers for a tensor of `rank` dims, in order: R, S(0)..S(rank-1), P(op) for every op.
  [[nodiscard]] static std::vector<Placement> choices(std::int64_t rank);
  // The state with axis `axis` placed at `placement` (orders kept, a new shard axis innermost).
  [[nodiscard]] static State with_placement(const State& state, std::size_t axis, const Placement& placement);
  // The state with axis `axis` moved to position `position` of its dim's shard order (clamped).
  [[nodiscard]] static State with_order(const State& state, std::size_t axis, std::size_t position);

signals:
  void state_edited(const meshloom::State& state);

private:
  void rebuild();
  void sync();  // the boxes from state_
  [[nodiscard]] QString explain(const Placement& p, std::size_t axis) const;

  State state_;
  std::vector<std::int64_t> mesh_shape_;
  std::vector<std::string> names_;
  std::int64_t rank_ = 0;
  bool built_ = false;
  QGridLayout* grid_ = nullptr;
  std::vector<QLabel*> labels_;
  std::vector<QComboBox*> boxes_;
  std::vector<QSpinBox*> orders_;
};

}  // namespace meshloom::app
