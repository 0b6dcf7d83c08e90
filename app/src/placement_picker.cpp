#include "placement_picker.hpp"

#include <QComboBox>
#include <QGridLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>

#include <algorithm>
#include <utility>

namespace meshloom::app {

namespace {

constexpr int kAxesPerRow = 3;
constexpr ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max, ReduceOp::Min, ReduceOp::Product};

QString q(const std::string& s) { return QString::fromStdString(s); }

// The shard order of every dim of `state`, as (dim, axes) entries, for editing.
std::vector<ShardOrderEntry> orders_of(const State& state) { return state.shard_order(); }

}  // namespace

std::vector<Placement> PlacementPicker::choices(std::int64_t rank) {
  std::vector<Placement> c{Placement::replicate()};
  for (std::int64_t d = 0; d < rank; ++d) c.push_back(Placement::shard(d));
  for (ReduceOp op : kOps) c.push_back(Placement::partial(op));
  return c;
}

State PlacementPicker::with_placement(const State& state, std::size_t axis, const Placement& placement) {
  std::vector<Placement> placements = state.placements();
  if (axis >= placements.size()) return state;
  placements[axis] = placement;
  std::vector<ShardOrderEntry> order;
  for (ShardOrderEntry e : orders_of(state)) {  // axes that still shard their dim keep their places
    std::erase_if(e.axes, [&](std::size_t a) { return !placements[a].is_shard() || placements[a].dim() != e.dim; });
    if (!e.axes.empty()) order.push_back(std::move(e));
  }
  if (placement.is_shard()) {  // a new split of a dim joins its order innermost
    auto it = std::find_if(order.begin(), order.end(), [&](const ShardOrderEntry& e) { return e.dim == placement.dim(); });
    if (it == order.end()) {
      order.push_back(ShardOrderEntry{placement.dim(), {axis}});
    } else if (std::find(it->axes.begin(), it->axes.end(), axis) == it->axes.end()) {
      it->axes.push_back(axis);
    }
  }
  return State(std::move(placements), std::move(order));
}

State PlacementPicker::with_order(const State& state, std::size_t axis, std::size_t position) {
  if (axis >= state.ndim() || !state.placement(axis).is_shard()) return state;
  std::vector<ShardOrderEntry> order = orders_of(state);
  for (ShardOrderEntry& e : order) {
    const auto it = std::find(e.axes.begin(), e.axes.end(), axis);
    if (it == e.axes.end()) continue;
    e.axes.erase(it);
    e.axes.insert(e.axes.begin() + static_cast<std::ptrdiff_t>(std::min(position, e.axes.size())), axis);
  }
  return State(state.placements(), std::move(order));
}

PlacementPicker::PlacementPicker(QWidget* parent) : QWidget(parent), grid_(new QGridLayout(this)) {
  grid_->setContentsMargins(0, 0, 0, 0);
  grid_->setHorizontalSpacing(4);
  grid_->setVerticalSpacing(2);
}

QComboBox* PlacementPicker::placement_box(std::size_t axis) const { return axis < boxes_.size() ? boxes_[axis] : nullptr; }
QSpinBox* PlacementPicker::order_box(std::size_t axis) const { return axis < orders_.size() ? orders_[axis] : nullptr; }

void PlacementPicker::set_state(const State& state, const std::vector<std::int64_t>& mesh_shape,
                                const std::vector<std::string>& axis_names, std::int64_t tensor_rank) {
  const bool fits = !state_misfit(state, mesh_shape.size(), tensor_rank).has_value();
  const bool rebuild_needed = !built_ || mesh_shape != mesh_shape_ || axis_names != names_ || tensor_rank != rank_;
  mesh_shape_ = mesh_shape;
  names_ = axis_names;
  rank_ = tensor_rank;
  state_ = fits ? state : State();
  if (rebuild_needed) rebuild();
  setEnabled(fits);
  sync();
}

QString PlacementPicker::explain(const Placement& p, std::size_t axis) const {
  const QString name = axis < names_.size() ? q(names_[axis]) : QStringLiteral("d%1").arg(axis);
  const qlonglong n = axis < mesh_shape_.size() ? mesh_shape_[axis] : 0;
  if (p.is_replicate()) return tr("R: every one of the %1 ranks of %2 holds the same data").arg(n).arg(name);
  if (p.is_shard()) return tr("S(%1): tensor dim %1 split across the %2 ranks of %3").arg(p.dim()).arg(n).arg(name);
  return tr("P(%1): the %2 ranks of %3 hold partial values, to be reduced with %1")
      .arg(q(std::string(to_string(p.op()))))
      .arg(n)
      .arg(name);
}

void PlacementPicker::rebuild() {
  for (QWidget* w : labels_) delete w;
  for (QWidget* w : boxes_) delete w;
  for (QWidget* w : orders_) delete w;
  labels_.clear();
  boxes_.clear();
  orders_.clear();
  built_ = true;
  const auto options = choices(rank_);
  for (std::size_t a = 0; a < mesh_shape_.size(); ++a) {
    auto* label = new QLabel(a < names_.size() ? q(names_[a]) : QStringLiteral("d%1").arg(a), this);
    auto* box = new QComboBox(this);
    for (std::size_t i = 0; i < options.size(); ++i) {
      box->addItem(q(to_string(options[i])));
      box->setItemData(static_cast<int>(i), explain(options[i], a), Qt::ToolTipRole);
    }
    box->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    auto* order = new QSpinBox(this);
    order->setPrefix(QStringLiteral("["));
    order->setSuffix(QStringLiteral("]"));
    order->setToolTip(tr("This axis' place in the dim's shard order: [0] splits the dim first, the last splits "
                         "what the others left (the innermost)"));
    const int row = static_cast<int>(a) / kAxesPerRow;
    const int col = 3 * (static_cast<int>(a) % kAxesPerRow);
    grid_->addWidget(label, row, col);
    grid_->addWidget(box, row, col + 1);
    grid_->addWidget(order, row, col + 2);
    labels_.push_back(label);
    boxes_.push_back(box);
    orders_.push_back(order);
    connect(box, &QComboBox::currentIndexChanged, this, [this, a](int i) {
      const auto c = choices(rank_);
      if (i < 0 || static_cast<std::size_t>(i) >= c.size() || state_.ndim() != mesh_shape_.size()) return;
      emit state_edited(with_placement(state_, a, c[static_cast<std::size_t>(i)]));
    });
    connect(order, &QSpinBox::valueChanged, this, [this, a](int k) {
      if (k < 0 || state_.ndim() != mesh_shape_.size()) return;
      emit state_edited(with_order(state_, a, static_cast<std::size_t>(k)));
    });
  }
  grid_->setColumnStretch(3 * kAxesPerRow, 1);
}

void PlacementPicker::sync() {
  const auto options = choices(rank_);
  for (std::size_t a = 0; a < boxes_.size(); ++a) {
    const QSignalBlocker block_box(boxes_[a]);
    const QSignalBlocker block_order(orders_[a]);
    if (a >= state_.ndim()) {
      boxes_[a]->setCurrentIndex(-1);
      orders_[a]->setVisible(false);
      continue;
    }
    const Placement& p = state_.placement(a);
    const auto it = std::find(options.begin(), options.end(), p);
    boxes_[a]->setCurrentIndex(it == options.end() ? -1 : static_cast<int>(it - options.begin()));
    boxes_[a]->setToolTip(explain(p, a));
    const std::vector<std::size_t> axes = p.is_shard() ? state_.shard_axes(p.dim()) : std::vector<std::size_t>{};
    const bool shared = axes.size() > 1;
    orders_[a]->setVisible(shared);
    if (shared) {
      orders_[a]->setRange(0, static_cast<int>(axes.size()) - 1);
      orders_[a]->setValue(static_cast<int>(std::find(axes.begin(), axes.end(), a) - axes.begin()));
    }
  }
}

}  // namespace meshloom::app
