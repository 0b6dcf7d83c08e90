#include "plan/plan_animation.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <limits>
#include <set>
#include <stdexcept>
#include <utility>

#include <QStringList>
#include "shell/inline_message.hpp"

namespace meshloom::app {

namespace {

using Shape = std::vector<std::int64_t>;

std::int64_t product(const Shape& s) {
  std::int64_t p = 1;
  for (auto v : s) p *= v;
  return p;
}

QString q(const std::string& s) { return QString::fromStdString(s); }
QString q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

// Every distinct state the plan passes through.
std::set<State> plan_states(const PlanRequest& request, const Plan& plan) {
  std::set<State> states{request.src, request.dst};
  for (const auto& s : plan.path) states.insert(s);
  for (const auto& step : plan.steps) {
    states.insert(step.before);
    states.insert(step.after);
  }
  return states;
}

// Calls fn(offset, size) for every shard of dim `dim` in `state` (every coordinate of the axes that shard it).
void for_each_shard(const State& state, std::int64_t dim, std::int64_t size, const Shape& mesh,
                    const std::function<void(std::int64_t, std::int64_t)>& fn) {
  const auto axes = state.shard_axes(dim);
  std::function<void(std::size_t, std::int64_t, std::int64_t)> walk = [&](std::size_t k, std::int64_t offset,
                                                                           std::int64_t extent) {
    if (k == axes.size()) {
      fn(offset, extent);
      return;
    }
    const std::int64_t parts = mesh[axes[k]];
    for (std::int64_t i = 0; i < parts; ++i) {
      const ChunkExtent e = chunk_extent(extent, parts, i);
      walk(k + 1, offset + std::min(e.offset, extent), e.size);
    }
  };
  walk(0, 0, size);
}

// The mesh axes with a Partial placement in a state.
std::vector<std::size_t> partial_axes(const State& s) {
  std::vector<std::size_t> axes;
  for (std::size_t a = 0; a < s.ndim(); ++a) {
    if (s.placements()[a].is_partial()) axes.push_back(a);
  }
  return axes;
}

QString fraction_text(double f) {
  if (f >= 1.0 - 1e-12) return QStringLiteral("all");
  if (f <= 0.0) return QStringLiteral("none");
  // A simple fraction 1/k when it is one, else a percentage.
  const double inv = 1.0 / f;
  if (std::abs(inv - std::round(inv)) < 1e-9) return QStringLiteral("1/%1").arg(static_cast<qint64>(std::round(inv)));
  return QStringLiteral("%1%").arg(f * 100.0, 0, 'g', 3);
}

}  // namespace

std::int64_t BlockGrid::block_elements(std::int64_t block) const {
  std::int64_t elements = 1;
  for (std::size_t d = boundaries.size(); d-- > 0;) {
    const auto k = static_cast<std::int64_t>(boundaries[d].size()) - 1;
    const auto i = static_cast<std::size_t>(block % k);
    block /= k;
    elements *= boundaries[d][i + 1] - boundaries[d][i];
  }
  return elements;
}

std::vector<std::int64_t> BlockFrame::blocks_of(std::size_t rank, std::int64_t block_count) const {
  std::vector<std::int64_t> blocks;
  for (std::int64_t b = 0; b < block_count; ++b) {
    if (holds(rank, b)) blocks.push_back(b);
  }
  return blocks;
}

PlanAnimation::PlanAnimation(QObject* parent) : QObject(parent), timer_(new QTimer(this)) {
  timer_->setInterval(kTickMs);
  timer_->setTimerType(Qt::PreciseTimer);
  connect(timer_, &QTimer::timeout, this, &PlanAnimation::tick);
}

int PlanAnimation::interval_ms() const noexcept { return static_cast<int>(std::lround(1000.0 / speed_)); }

PlanAnimation::~PlanAnimation() = default;

void PlanAnimation::set_max_elements(std::int64_t max_elements) { max_elements_ = std::max<std::int64_t>(1, max_elements); }

std::vector<std::int64_t> PlanAnimation::simulation_shape(const PlanRequest& request, const Plan& plan,
                                                          std::int64_t max_elements) {
  const std::int64_t ranks = product(request.mesh_shape);
  const Shape& shape = request.tensor_shape;
  auto fits = [&](const Shape& s) {
    const std::int64_t n = product(s);
    return n <= max_elements / std::max<std::int64_t>(ranks, 1);
  };
  // Overflow-safe check of the real shape: stop multiplying once past the bound.
  {
    std::int64_t n = 1;
    bool over = false;
    for (auto v : shape) {
      if (v > 0 && n > max_elements / v) {
        over = true;
        break;
      }
      n *= v;
    }
    if (!over && fits(shape)) return shape;
  }
  const auto states = plan_states(request, plan);
  Shape scaled = shape;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    std::set<std::size_t> axes;
    for (const auto& s : states) {
      for (auto a : s.shard_axes(static_cast<std::int64_t>(d))) axes.insert(a);
    }
    std::int64_t m = 1;
    for (auto a : axes) m *= request.mesh_shape[a];
    const std::int64_t rest = shape[d] % m;
    scaled[d] = std::min(shape[d], m + rest);
  }
  std::int64_t n = 1;
  for (auto v : scaled) {
    if (n > max_elements / v) {
      n = max_elements + 1;
      break;
    }
    n *= v;
  }
  if (n > max_elements || !fits(scaled)) {
    throw std::invalid_argument("the animation needs " + std::to_string(ranks) + " ranks x " +
                                std::to_string(n) + " elements of a tensor scaled to " +
                                shape_text(scaled).toStdString() + ", more than its bound of " +
                                std::to_string(max_elements));
  }
  return scaled;
}

BlockGrid PlanAnimation::block_grid(const PlanRequest& request, const Plan& plan) {
  BlockGrid grid;
  grid.tensor_shape = request.tensor_shape;
  const auto states = plan_states(request, plan);
  const auto dims = request.tensor_shape.size();
  grid.boundaries.resize(dims);
  grid.block_count = 1;
  for (std::size_t d = 0; d < dims; ++d) {
    const std::int64_t size = request.tensor_shape[d];
    std::set<std::int64_t> cuts{0, size};
    for (const auto& s : states) {
      for_each_shard(s, static_cast<std::int64_t>(d), size, request.mesh_shape, [&](std::int64_t offset, std::int64_t extent) {
        cuts.insert(offset);
        cuts.insert(offset + extent);
      });
    }
    grid.boundaries[d].assign(cuts.begin(), cuts.end());
    grid.block_count *= static_cast<std::int64_t>(cuts.size()) - 1;
  }
  auto edges = [](const std::vector<std::int64_t>& b) {
    std::vector<double> e;
    for (auto v : b) e.push_back(static_cast<double>(v) / static_cast<double>(b.back()));
    return e;
  };
  // Nested columns over dims [1, dims): each column as wide as the product of its blocks' shares.
  auto nested = [&grid, dims] {
    std::vector<double> widths{1.0};
    for (std::size_t d = 1; d < dims; ++d) {
      const auto& b = grid.boundaries[d];
      std::vector<double> next;
      for (const double w : widths) {
        for (std::size_t i = 0; i + 1 < b.size(); ++i) {
          next.push_back(w * static_cast<double>(b[i + 1] - b[i]) / static_cast<double>(b.back()));
        }
      }
      widths = std::move(next);
    }
    std::vector<double> e{0.0};
    for (const double w : widths) e.push_back(e.back() + w);
    e.back() = 1.0;
    return e;
  };
  if (dims == 0) {
    grid.rows = grid.cols = 1;
  } else if (dims == 1) {
    grid.rows = 1;
    grid.cols = grid.block_count;
    grid.col_edges = edges(grid.boundaries[0]);
  } else {
    grid.rows = static_cast<std::int64_t>(grid.boundaries[0].size()) - 1;
    grid.cols = grid.block_count / grid.rows;
    grid.row_edges = edges(grid.boundaries[0]);
    grid.col_edges = dims == 2 ? edges(grid.boundaries[1]) : nested();
    if (dims > 2) grid.col_group = grid.cols / (static_cast<std::int64_t>(grid.boundaries[1].size()) - 1);
  }
  return grid;
}

BlockFrame PlanAnimation::blocks_of(const Distribution& dist, const State& state, const BlockGrid& grid,
                                    const std::vector<std::int64_t>& tensor_shape) {
  BlockFrame f;
  f.ranks = dist.ranks.size();
  f.words_per_rank = grid.words_per_rank();
  f.held.assign(f.ranks * f.words_per_rank, 0);
  f.partial.assign(f.ranks, 0);
  f.fraction.assign(f.ranks, 0.0F);
  f.group.assign(f.ranks, -1);
  const std::size_t dims = tensor_shape.size();
  // Per dim: the block of each coordinate; block strides (row-major).
  std::vector<std::vector<std::int32_t>> block_at(dims);
  std::vector<std::int64_t> block_stride(dims, 1);
  for (std::size_t d = 0; d < dims; ++d) {
    block_at[d].resize(static_cast<std::size_t>(tensor_shape[d]));
    const auto& b = grid.boundaries[d];
    for (std::size_t i = 0; i + 1 < b.size(); ++i) {
      for (auto x = b[i]; x < b[i + 1]; ++x) block_at[d][static_cast<std::size_t>(x)] = static_cast<std::int32_t>(i);
    }
  }
  for (std::size_t d = dims; d-- > 1;) {
    block_stride[d - 1] = block_stride[d] * (static_cast<std::int64_t>(grid.boundaries[d].size()) - 1);
  }
  const std::int64_t numel = product(tensor_shape);
  const bool is_partial = !partial_axes(state).empty();
  std::vector<std::int64_t> elements(static_cast<std::size_t>(grid.block_count));
  for (std::int64_t b = 0; b < grid.block_count; ++b) elements[static_cast<std::size_t>(b)] = grid.block_elements(b);

  for (std::size_t r = 0; r < f.ranks; ++r) {
    std::uint64_t* bits = f.held.data() + r * f.words_per_rank;
    // The values to read positions from: the rank's own buffer, or (Partial) the slice it holds partial values of.
    LocalTensor slice;
    const LocalTensor* source = &dist.ranks[r];
    if (is_partial) {
      f.partial[r] = 1;
      slice = expected_local(dist.mesh_shape, tensor_shape, state, rank_coordinate(dist.mesh_shape, r),
                             SimulationOptions{.max_elements = std::numeric_limits<std::int64_t>::max()});
      source = &slice;
    }
    std::int64_t last_block = -1;
    for (auto v : source->data) {
      std::int64_t flat = v - 1;
      if (flat < 0 || flat >= numel) continue;  // not an element of the global tensor (padding)
      std::int64_t block = 0;
      for (std::size_t d = dims; d-- > 0;) {
        const std::int64_t x = flat % tensor_shape[d];
        flat /= tensor_shape[d];
        block += block_at[d][static_cast<std::size_t>(x)] * block_stride[d];
      }
      if (block == last_block) continue;
      last_block = block;
      bits[static_cast<std::size_t>(block) / 64] |= std::uint64_t{1} << (static_cast<std::size_t>(block) % 64);
    }
    std::int64_t held = 0;
    for (std::int64_t b = 0; b < grid.block_count; ++b) {
      if (f.holds(r, b)) held += elements[static_cast<std::size_t>(b)];
    }
    f.fraction[r] = static_cast<float>(static_cast<double>(held) / static_cast<double>(numel));
  }
  return f;
}

void PlanAnimation::reset() {
  stop();
  timer_->stop();
  frames_.clear();
  captions_.clear();
  error_.clear();
  current_ = 0;
  from_ = -1;
  transition_ = 1.0;
}

bool PlanAnimation::set_plan(const PlanRequest& request, const Plan& plan, const std::vector<std::string>& axis_names) {
  reset();
  try {
    PlanRequest req = request;
    original_shape_ = request.tensor_shape;
    req.tensor_shape = simulation_shape(request, plan, max_elements_);
    scaled_ = req.tensor_shape != request.tensor_shape;
    request_ = req;
    plan_ = plan;
    axis_names_ = axis_names;
    grid_ = block_grid(req, plan);
    SimulationOptions options;
    options.max_elements = max_elements_;
    Distribution dist = initial_distribution(req.mesh_shape, req.tensor_shape, req.src, options);
    std::vector<QString> captions;
    frames_.push_back(blocks_of(dist, req.src, grid_, req.tensor_shape));  // make_caption reads the last frame
    captions.push_back(make_caption(0, dist));
    for (std::size_t k = 0; k < plan.steps.size(); ++k) {
      const PlanStep& step = plan.steps[k];
      apply_step(dist, step, options);
      BlockFrame f = blocks_of(dist, step.after, grid_, req.tensor_shape);
      // The step's groups: ranks that agree on every coordinate outside its axes, numbered row-major over those.
      std::int32_t count = 1;
      for (std::size_t a = 0; a < req.mesh_shape.size(); ++a) {
        if (std::find(step.axes.begin(), step.axes.end(), a) == step.axes.end()) {
          count *= static_cast<std::int32_t>(req.mesh_shape[a]);
        }
      }
      for (std::size_t r = 0; r < f.ranks; ++r) {
        const auto c = rank_coordinate(req.mesh_shape, r);
        std::int64_t g = 0;
        for (std::size_t a = 0; a < c.size(); ++a) {
          if (std::find(step.axes.begin(), step.axes.end(), a) == step.axes.end()) g = g * req.mesh_shape[a] + c[a];
        }
        f.group[r] = static_cast<std::int32_t>(g);
      }
      f.group_count = count;
      frames_.push_back(std::move(f));
      captions.push_back(make_caption(static_cast<int>(k) + 1, dist));
    }
    captions_ = std::move(captions);
  } catch (const std::exception& e) {
    frames_.clear();
    captions_.clear();
    error_ = error_text(e);
    emit plan_changed();
    emit frame_changed(0);
    return false;
  }
  emit plan_changed();
  emit frame_changed(0);
  return true;
}

void PlanAnimation::clear() {
  reset();
  emit plan_changed();
  emit frame_changed(0);
}

const BlockFrame& PlanAnimation::frame(int k) const {
  if (k < 0 || k >= frame_count()) throw std::out_of_range("PlanAnimation::frame: no frame " + std::to_string(k));
  return frames_[static_cast<std::size_t>(k)];
}

const QString& PlanAnimation::caption(int k) const {
  if (k < 0 || k >= frame_count()) throw std::out_of_range("PlanAnimation::caption: no frame " + std::to_string(k));
  return captions_[static_cast<std::size_t>(k)];
}

const State& PlanAnimation::state(int k) const {
  if (k < 0 || k >= frame_count()) throw std::out_of_range("PlanAnimation::state: no frame " + std::to_string(k));
  return k == 0 ? request_.src : plan_.steps[static_cast<std::size_t>(k - 1)].after;
}

Distribution PlanAnimation::distribution(int k) const {
  if (k < 0 || k >= frame_count()) throw std::out_of_range("PlanAnimation::distribution: no frame " + std::to_string(k));
  SimulationOptions options;
  options.max_elements = max_elements_;
  Distribution dist = initial_distribution(request_.mesh_shape, request_.tensor_shape, request_.src, options);
  for (int s = 0; s < k; ++s) apply_step(dist, plan_.steps[static_cast<std::size_t>(s)], options);
  return dist;
}

QString PlanAnimation::axis_text(const std::vector<std::size_t>& axes) const {
  QStringList names;
  for (auto a : axes) {
    names << (a < axis_names_.size() && !axis_names_[a].empty() ? q(axis_names_[a]) : QStringLiteral("d%1").arg(a));
  }
  return names.join(QLatin1Char('+'));
}

QString PlanAnimation::make_caption(int k, const Distribution& dist) const {
  const BlockFrame& f = frames_.back();
  const Shape& shape = request_.tensor_shape;
  const std::size_t ranks = f.ranks;
  const int steps = static_cast<int>(plan_.steps.size());
  std::size_t empty = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    if (f.fraction[r] <= 0.0F) ++empty;
  }
  const QString empty_text =
      empty > 0 ? QStringLiteral(" %1 %2 an empty shard (uneven torch.chunk).")
                      .arg(empty)
                      .arg(empty == 1 ? QStringLiteral("rank holds") : QStringLiteral("ranks hold"))
                : QString();
  auto partial_text = [&](const State& s) {
    const auto axes = partial_axes(s);
    if (axes.empty()) return QString();
    QStringList ops;
    for (auto a : axes) ops << q(to_string(s.placements()[a]));
    return QStringLiteral(" The values are Partial (%1 on %2): not yet reduced.").arg(ops.join(QStringLiteral(", ")), axis_text(axes));
  };

  if (k == 0) {
    const float lo = *std::min_element(f.fraction.begin(), f.fraction.end());
    const float hi = *std::max_element(f.fraction.begin(), f.fraction.end());
    QString held = lo == hi ? QStringLiteral("each rank holds %1 of it").arg(fraction_text(lo))
                            : QStringLiteral("ranks hold between %1 and %2 of it").arg(fraction_text(lo), fraction_text(hi));
    QString text = steps == 0 ? QStringLiteral("No steps: the tensor %1 is already laid out as %2; %3.")
                                    .arg(shape_text(original_shape_), q(to_string(request_.src)), held)
                              : QStringLiteral("Before step 1 of %1: the tensor %2 is laid out as %3; %4.")
                                    .arg(steps)
                                    .arg(shape_text(original_shape_), q(to_string(request_.src)), held);
    text += partial_text(request_.src) + empty_text;
    if (scaled_) text += QStringLiteral(" Shown on the tensor scaled to %1 so that it can be simulated.").arg(shape_text(shape));
    return text;
  }

  const PlanStep& step = plan_.steps[static_cast<std::size_t>(k - 1)];
  std::int64_t n = 1;
  for (auto a : step.axes) n *= request_.mesh_shape[a];
  const QString ax = axis_text(step.axes);
  const QString coll = q(to_string(step.collective));
  QString head = QStringLiteral("Step %1 of %2: %3 on %4 (groups of %5%6): ")
                     .arg(k)
                     .arg(steps)
                     .arg(coll, ax)
                     .arg(n)
                     .arg(step.merged ? QStringLiteral(", merged") : QString());
  const QString op = q(to_string(step.from.op()));
  auto whole = [&](std::int64_t d) {
    std::size_t count = 0;
    for (const auto& t : dist.ranks) {
      if (static_cast<std::size_t>(d) < t.shape.size() && t.shape[static_cast<std::size_t>(d)] == shape[static_cast<std::size_t>(d)]) ++count;
    }
    if (count == ranks) return QStringLiteral("all %1 ranks now hold dim %2 whole").arg(ranks).arg(d);
    if (count > 0) return QStringLiteral("%1 ranks now hold dim %2 whole").arg(count).arg(d);
    return QStringLiteral("dim %1 stays split by %2").arg(d).arg(axis_text(step.after.shard_axes(d)));
  };
  auto still_partial = [&]() {
    const auto axes = partial_axes(step.after);
    return axes.empty() ? QStringLiteral("no rank holds Partial values any more")
                        : QStringLiteral("the values stay Partial on %1").arg(axis_text(axes));
  };
  QString body;
  switch (step.collective) {
    case Collective::AllGather:
      body = QStringLiteral("each rank receives the %1 from its %2 group; %3.")
                 .arg(n - 1 == 1 ? QStringLiteral("other shard of dim %1").arg(step.from.dim())
                                 : QStringLiteral("%1 other shards of dim %2").arg(n - 1).arg(step.from.dim()),
                      ax, whole(step.from.dim()));
      break;
    case Collective::AllReduce:
      body = QStringLiteral("each %1 group reduces its %2 Partial values with %3, element by element, and every member "
                            "receives the result; %4.")
                 .arg(ax)
                 .arg(n)
                 .arg(op, still_partial());
      break;
    case Collective::ReduceScatter:
      body = QStringLiteral("each %1 group reduces its %2 Partial values with %3 and member j keeps piece j of %2 of "
                            "dim %4; %5.")
                 .arg(ax)
                 .arg(n)
                 .arg(op)
                 .arg(step.to.dim())
                 .arg(still_partial());
      break;
    case Collective::AllToAll:
      body = QStringLiteral("each rank cuts its shard into %1 pieces along dim %2 and swaps them within its %3 group: dim "
                            "%4 is gathered (%5) and dim %2 is now split %1 ways.")
                 .arg(n)
                 .arg(step.to.dim())
                 .arg(ax)
                 .arg(step.from.dim())
                 .arg(whole(step.from.dim()));
      break;
    case Collective::Chunk:
      body = QStringLiteral("local, no communication: member j of each %1 group keeps piece j of %2 of dim %3 "
                            "(torch.chunk).")
                 .arg(ax)
                 .arg(n)
                 .arg(step.to.dim());
      break;
    case Collective::ReplicateToPartial: {
      const QString to_op = q(to_string(step.to.op()));
      if (step.to.op() == ReduceOp::Sum || step.to.op() == ReduceOp::Product) {
        body = QStringLiteral("local, no communication: the values become Partial(%1): member 0 of each %2 group keeps "
                              "them, the other %3 hold %4.")
                   .arg(to_op, ax)
                   .arg(n - 1)
                   .arg(step.to.op() == ReduceOp::Sum ? QStringLiteral("zeros") : QStringLiteral("ones"));
      } else {
        body = QStringLiteral("local, no communication: every member of each %1 group keeps its values, now "
                              "Partial(%2).")
                   .arg(ax, to_op);
      }
      break;
    }
    case Collective::ShardToPartial:
      body = QStringLiteral("local, no communication: each rank zero-fills dim %1 around its shard to its %2 group's "
                            "full extent; the values become Partial(sum).")
                 .arg(step.from.dim())
                 .arg(ax);
      break;
  }
  return head + body + empty_text + QStringLiteral(" Now %1.").arg(q(to_string(step.after)));
}

void PlanAnimation::show(int frame) {
  if (frames_.empty()) return;
  frame = std::clamp(frame, 0, frame_count() - 1);
  const bool moving = transition_ < 1.0;
  from_ = frame - 1;
  transition_ = 1.0;
  if (!playing_) timer_->stop();
  if (moving) emit transition_changed(transition_);
  if (frame == current_) return;
  current_ = frame;
  emit frame_changed(current_);
}

void PlanAnimation::advance_to(int frame) {
  if (frame < 0 || frame >= frame_count() || frame == current_) return;
  from_ = current_;
  current_ = frame;
  transition_ = 0.0;
  clock_.start();
  if (!timer_->isActive()) timer_->start();
  emit frame_changed(current_);
  emit transition_changed(transition_);
}

void PlanAnimation::stop() {
  if (!playing_) return;
  playing_ = false;
  if (transition_ >= 1.0) timer_->stop();
  emit playing_changed(false);
}

void PlanAnimation::play() {
  if (frames_.size() < 2 || playing_) return;
  if (current_ == frame_count() - 1) show(0);
  playing_ = true;
  if (transition_ >= 1.0) clock_.start();  // a transition under way keeps its clock
  timer_->start();
  emit playing_changed(true);
}

void PlanAnimation::pause() { stop(); }

void PlanAnimation::toggle_play() {
  if (playing()) {
    pause();
  } else {
    play();
  }
}

void PlanAnimation::tick() {
  const auto elapsed = static_cast<double>(clock_.isValid() ? clock_.elapsed() : 0);
  const double step = interval_ms();
  if (transition_ < 1.0) {
    transition_ = std::min(1.0, elapsed / (kTransitionShare * step));
    emit transition_changed(transition_);
  }
  if (playing_ && elapsed >= step) {
    if (current_ < frame_count() - 1) advance_to(current_ + 1);
    if (current_ >= frame_count() - 1) stop();
  }
  if (!playing_ && transition_ >= 1.0) timer_->stop();
}

void PlanAnimation::step_forward() {
  stop();
  advance_to(current_ + 1);
}

void PlanAnimation::step_back() {
  stop();
  show(current_ - 1);
}

void PlanAnimation::jump_to(int frame) {
  stop();
  show(frame);
}

void PlanAnimation::set_speed(double steps_per_second) {
  if (!std::isfinite(steps_per_second)) return;
  const double s = std::clamp(steps_per_second, kMinSpeed, kMaxSpeed);
  if (s == speed_) return;
  speed_ = s;  // a step under way keeps its clock and ends at the new interval
  emit speed_changed(speed_);
}

}  // namespace meshloom::app
