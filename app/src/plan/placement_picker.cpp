#include "plan/placement_picker.hpp"

#include <QComboBox>
#include <QGridLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSizePolicy>
#include <QSpinBox>
#include <QStringList>

#include <algorithm>
#include <optional>
#include <utility>

namespace meshloom::app {

namespace {

constexpr ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max, ReduceOp::Min, ReduceOp::Product};
constexpr int kColumnsPerAxis = 3;  // name, placement, order

QString q(const std::string& s) { return QString::fromStdString(s); }
QString q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

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
  for (ShardOrderEntry e : state.shard_order()) {  // axes that still shard their dim keep their places
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
  std::vector<ShardOrderEntry> order = state.shard_order();
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

QLabel* PlacementPicker::axis_label(std::size_t axis) const { return axis < labels_.size() ? labels_[axis] : nullptr; }
QComboBox* PlacementPicker::placement_box(std::size_t axis) const { return axis < boxes_.size() ? boxes_[axis] : nullptr; }
QSpinBox* PlacementPicker::order_box(std::size_t axis) const { return axis < orders_.size() ? orders_[axis] : nullptr; }

void PlacementPicker::set_state(const State& state, const std::vector<std::int64_t>& mesh_shape,
                                const std::vector<std::string>& axis_names, std::int64_t tensor_rank) {
  const std::optional<std::string> misfit = state_misfit(state, mesh_shape.size(), tensor_rank);
  const bool rebuild_needed = !built_ || mesh_shape != mesh_shape_ || axis_names != names_ || tensor_rank != rank_;
  mesh_shape_ = mesh_shape;
  names_ = axis_names;
  rank_ = tensor_rank;
  state_ = misfit ? State() : state;
  if (rebuild_needed) rebuild();
  setEnabled(!misfit);
  setToolTip(misfit ? tr("This state does not fit the mesh and the tensor: %1").arg(q(*misfit)) : QString());
  sync();
}

QString PlacementPicker::axis_name(std::size_t axis) const {
  return axis < names_.size() ? q(names_[axis]) : QStringLiteral("axis %1").arg(axis);
}

QString PlacementPicker::explain(const Placement& p, std::size_t axis) const {
  const QString name = axis_name(axis);
  const qlonglong n = axis < mesh_shape_.size() ? mesh_shape_[axis] : 0;
  if (p.is_replicate()) return tr("R: every one of the %1 ranks of %2 holds the same data").arg(n).arg(name);
  if (p.is_shard()) return tr("S(%1): tensor dim %1 split across the %2 ranks of %3").arg(p.dim()).arg(n).arg(name);
  return tr("P(%1): the %2 ranks of %3 hold partial values, to be reduced with %1")
      .arg(q(to_string(p.op())))
      .arg(n)
      .arg(name);
}

void PlacementPicker::rebuild() {
  // Later, not now: rebuild may run while a box of the old mesh is still emitting.
  const auto drop = [this](QWidget* w) {
    grid_->removeWidget(w);
    w->hide();
    w->deleteLater();
  };
  for (QWidget* w : labels_) drop(w);
  for (QWidget* w : boxes_) drop(w);
  for (QWidget* w : orders_) drop(w);
  labels_.clear();
  boxes_.clear();
  orders_.clear();
  for (int c = 0; c <= columns_; ++c) {
    grid_->setColumnMinimumWidth(c, 0);
    grid_->setColumnStretch(c, 0);
  }
  built_ = true;

  // Balanced rows of at most kMaxAxesPerRow axes: 4 axes stand 2 and 2, 5 stand 3 and 2.
  const int n = static_cast<int>(mesh_shape_.size());
  const int rows = (n + kMaxAxesPerRow - 1) / kMaxAxesPerRow;
  per_row_ = rows == 0 ? 0 : (n + rows - 1) / rows;
  columns_ = kColumnsPerAxis * per_row_;
  const auto options = choices(rank_);
  for (std::size_t a = 0; a < mesh_shape_.size(); ++a) {
    auto* label = new QLabel(axis_name(a), this);
    label->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    label->setToolTip(tr("Mesh axis %1 (%2 ranks in each of its groups): the placement of the tensor along it")
                          .arg(axis_name(a))
                          .arg(mesh_shape_[a]));
    auto* box = new QComboBox(this);
    for (std::size_t i = 0; i < options.size(); ++i) {
      box->addItem(q(to_string(options[i])));
      box->setItemData(static_cast<int>(i), explain(options[i], a), Qt::ToolTipRole);
    }
    box->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    auto* order = new QSpinBox(this);
    order->setPrefix(QStringLiteral("["));
    order->setSuffix(QStringLiteral("]"));
    order->setKeyboardTracking(false);  // a typed place applies on Enter, not digit by digit
    order->setRange(0, 0);              // sync() sets the dim's; a hidden box keeps its place at this width
    order->setVisible(false);
    label->setBuddy(box);
    const int at = static_cast<int>(a);
    const int row = at / per_row_;
    const int col = kColumnsPerAxis * (at % per_row_);
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
      const State next = with_order(state_, a, static_cast<std::size_t>(k));
      if (next != state_) emit state_edited(next);
    });
  }
  grid_->setColumnStretch(columns_, 1);  // the boxes stay left, under the start of the text field
}

void PlacementPicker::sync() {
  const auto options = choices(rank_);
  for (std::size_t a = 0; a < boxes_.size(); ++a) {
    const QSignalBlocker block_box(boxes_[a]);
    const QSignalBlocker block_order(orders_[a]);
    if (a >= state_.ndim()) {  // a state that does not fit: nothing chosen
      boxes_[a]->setCurrentIndex(-1);
      boxes_[a]->setToolTip(toolTip());
      orders_[a]->setVisible(false);
      orders_[a]->setRange(0, 0);
      continue;
    }
    const Placement& p = state_.placement(a);
    const auto it = std::find(options.begin(), options.end(), p);
    boxes_[a]->setCurrentIndex(it == options.end() ? -1 : static_cast<int>(it - options.begin()));
    boxes_[a]->setToolTip(explain(p, a));
    const std::vector<std::size_t> axes = p.is_shard() ? state_.shard_axes(p.dim()) : std::vector<std::size_t>{};
    const bool shared = axes.size() > 1;
    orders_[a]->setVisible(shared);
    if (!shared) {
      orders_[a]->setRange(0, 0);
      continue;
    }
    orders_[a]->setRange(0, static_cast<int>(axes.size()) - 1);
    orders_[a]->setValue(static_cast<int>(std::find(axes.begin(), axes.end(), a) - axes.begin()));
    QStringList order;
    for (std::size_t k = 0; k < axes.size(); ++k) order << QStringLiteral("%1 [%2]").arg(axis_name(axes[k])).arg(k);
    orders_[a]->setToolTip(tr("Tensor dim %1 is split by %2, in that order: [0] splits the dim first, each next axis "
                              "splits what the one before left (the last is the innermost). Sets the place of %3.")
                               .arg(p.dim())
                               .arg(order.join(tr(", then ")))
                               .arg(axis_name(a)));
  }
}

std::vector<int> PlacementPicker::natural_widths() const {
  std::vector<int> widths(static_cast<std::size_t>(columns_), 0);
  for (std::size_t a = 0; a < boxes_.size(); ++a) {
    const auto col = static_cast<std::size_t>(kColumnsPerAxis * (static_cast<int>(a) % per_row_));
    const QWidget* cells[] = {labels_[a], boxes_[a], orders_[a]};
    for (std::size_t i = 0; i < std::size(cells); ++i) {
      if (!cells[i]->isHidden()) widths[col + i] = std::max(widths[col + i], cells[i]->sizeHint().width());
    }
  }
  return widths;
}

void PlacementPicker::align(PlacementPicker& a, PlacementPicker& b) {
  const std::vector<int> wa = a.natural_widths();
  const std::vector<int> wb = b.natural_widths();
  std::vector<int> widths(std::max(wa.size(), wb.size()), 0);
  for (std::size_t c = 0; c < widths.size(); ++c) {
    widths[c] = std::max(c < wa.size() ? wa[c] : 0, c < wb.size() ? wb[c] : 0);
  }
  for (PlacementPicker* p : {&a, &b}) {
    for (int c = 0; c < p->columns_; ++c) p->grid_->setColumnMinimumWidth(c, widths[static_cast<std::size_t>(c)]);
    // A column whose widgets are all hidden is empty to the grid, which then leaves out its spacing too: an order
    // box that the other picker shows in its column keeps its place while hidden, so the columns stay in step.
    for (std::size_t axis = 0; axis < p->orders_.size(); ++axis) {
      const auto col = static_cast<std::size_t>(kColumnsPerAxis * (static_cast<int>(axis) % p->per_row_) + 2);
      QSizePolicy policy = p->orders_[axis]->sizePolicy();
      policy.setRetainSizeWhenHidden(widths[col] > 0);
      p->orders_[axis]->setSizePolicy(policy);
    }
  }
}

}  // namespace meshloom::app
