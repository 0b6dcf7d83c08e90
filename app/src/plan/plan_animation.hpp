// PlanAnimation: a redistribution plan played step by step on real data. Given a PlanRequest and its Plan, it runs
// the engine's simulator (meshloom/plan/simulator.hpp): initial_distribution of the request's source state, then
// apply_step for every step of the plan, and keeps what every rank holds before the first step (frame 0) and after
// each step (frame k, after step k): n steps give n + 1 frames. Nothing is drawn from the planner's states: which
// blocks of the global tensor a rank holds is read from its buffer (global_value(flat) = flat + 1 names every
// element), except in a state with Partial axes, where the values are not yet reduced and the positions are the
// simulator's expected_local slice of that state (the buffer must have its shape).
//
// Blocks: the global tensor cut, on each dim, at every shard boundary that any state of the plan has on any rank
// (torch.chunk offsets, nested in shard order; chunk_extent), so every shard of every frame is a set of whole
// blocks. An uneven split gives blocks of different sizes, an empty shard an empty block set. Block b is
// row-major over the block coordinates; the grid shown in a cell has BlockGrid::rows x BlockGrid::cols blocks: a
// 2-D tensor rows = blocks of dim 0 and cols = blocks of dim 1, a 1-D tensor one row, a tensor of more dims its
// trailing dims flattened into the columns, a 0-D tensor one block.
//
// Size: the simulator holds ranks x tensor elements values per frame. A request over max_elements (default 2^24)
// is simulated on a scaled tensor (simulation_shape): each dim whose blocks are many elements is cut down to the
// product M of the mesh axes that ever shard it (M + size % M when the size is not a multiple of M, so an uneven
// split stays uneven), never above its real size; the plan's steps are the same (apply_step does not depend on
// the shape). scaled() says so and the frame-0 caption names the shape shown.
//
// Playback: one QTimer drives everything, ticking every kTickMs while something moves. Speed is in steps per
// second (kMinSpeed..kMaxSpeed); a step lasts interval_ms() = 1000 / speed ms of a steady clock. When the current
// frame advances by one (playing, or step_forward), the frame changes at once and a transition runs from the
// previous frame: transition() rises from 0 to 1 over the first kTransitionShare of the step (transition_changed on
// every tick), and views draw the blocks a rank gains fading in and the blocks it drops fading out
// (transition_from() is the frame it comes from). step_back and jump_to show their frame settled (transition() 1),
// still from the frame before it, so that a view can mark what the step delivered; set_plan shows frame 0 (from -1). play() from the last frame starts again from frame 0; playback stops
// (playing_changed(false)) on reaching the last frame; the timer stops once nothing moves. Every change of the
// current frame emits frame_changed(frame) once.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/simulator.hpp"

namespace meshloom::app {

// How the global tensor is cut into blocks and laid out in a cell's small grid.
struct BlockGrid {
  std::vector<std::int64_t> tensor_shape;             // the (simulated) global shape
  std::vector<std::vector<std::int64_t>> boundaries;  // per dim: 0 = b_0 < b_1 < ... < b_k = size (k blocks)
  std::int64_t block_count = 1;                       // product of the blocks per dim
  std::int64_t rows = 1;                              // the grid in a cell: rows x cols = block_count
  std::int64_t cols = 1;
  // Where the grid's lines lie, as fractions 0..1 of the grid (rows + 1 and cols + 1 values): proportional to
  // the blocks' extents for dim 0 (rows, or the one row's columns of a 1-D tensor) and for the columns, nested, for
  // dims 1.. (a tensor of 3 or more dims: column (j1, j2, ...) is as wide as the share of dim 1's block j1 times
  // the share of dim 2's block j2 ..., so the columns of one block of dim 1 form a group as wide as that block).
  std::vector<double> row_edges{0.0, 1.0};
  std::vector<double> col_edges{0.0, 1.0};
  // Columns per block of the outermost dim flattened into the columns (dim 1 of a tensor of 3 or more dims): a
  // cell draws a stronger line every col_group columns so that the nested grid reads as such. 1 for 1-D and 2-D.
  std::int64_t col_group = 1;
  [[nodiscard]] std::size_t words_per_rank() const noexcept {
    return static_cast<std::size_t>((block_count + 63) / 64);
  }
  [[nodiscard]] std::int64_t row_of(std::int64_t block) const noexcept { return block / cols; }
  [[nodiscard]] std::int64_t col_of(std::int64_t block) const noexcept { return block % cols; }
  // The elements of a block.
  [[nodiscard]] std::int64_t block_elements(std::int64_t block) const;
  friend bool operator==(const BlockGrid&, const BlockGrid&) = default;
};

// What every rank holds in one frame, ready to draw (BlockOverlayItem::set_frame).
struct BlockFrame {
  std::size_t ranks = 0;
  std::size_t words_per_rank = 1;
  std::vector<std::uint64_t> held;    // ranks x words_per_rank: bit b of rank r = rank r holds block b
  std::vector<std::uint8_t> partial;  // per rank: 1 when its values are Partial (not yet reduced)
  std::vector<float> fraction;        // per rank: the share of the global tensor's elements in its blocks
  // The groups of the step that leads to this frame (none in frame 0): per rank its group (-1: none), and how many.
  std::vector<std::int32_t> group;
  std::int32_t group_count = 0;

  [[nodiscard]] bool holds(std::size_t rank, std::int64_t block) const noexcept {
    const auto b = static_cast<std::size_t>(block);
    return rank < ranks && (held[rank * words_per_rank + b / 64] >> (b % 64) & 1U) != 0;
  }
  [[nodiscard]] bool is_partial(std::size_t rank) const noexcept { return rank < ranks && partial[rank] != 0; }
  // The blocks rank holds, ascending.
  [[nodiscard]] std::vector<std::int64_t> blocks_of(std::size_t rank, std::int64_t block_count) const;
  friend bool operator==(const BlockFrame&, const BlockFrame&) = default;
};

class PlanAnimation : public QObject {
  Q_OBJECT

public:
  static constexpr double kMinSpeed = 0.25;  // steps per second
  static constexpr double kMaxSpeed = 4.0;
  static constexpr double kDefaultSpeed = 1.0;
  static constexpr std::int64_t kDefaultMaxElements = std::int64_t{1} << 24;
  static constexpr int kTickMs = 33;               // about 30 frames per second while something moves
  static constexpr double kTransitionShare = 0.6;  // the share of a step its transition takes

  explicit PlanAnimation(QObject* parent = nullptr);
  ~PlanAnimation() override;

  // Simulates `plan` for `request` and shows frame 0. axis_names: one per mesh axis, for the captions ("d<i>"
  // where missing). False when the simulator refuses (the request does not fit, a step fails): error() says why
  // and the animation is empty. Stops playback either way; emits plan_changed() and frame_changed(0) on success.
  bool set_plan(const PlanRequest& request, const Plan& plan, const std::vector<std::string>& axis_names = {});
  // No plan: no frames.
  void clear();

  [[nodiscard]] bool has_plan() const noexcept { return !frames_.empty(); }
  [[nodiscard]] const QString& error() const noexcept { return error_; }
  [[nodiscard]] int frame_count() const noexcept { return static_cast<int>(frames_.size()); }
  [[nodiscard]] int step_count() const noexcept { return frame_count() > 0 ? frame_count() - 1 : 0; }
  [[nodiscard]] int current() const noexcept { return current_; }
  [[nodiscard]] bool playing() const noexcept { return playing_; }
  [[nodiscard]] double speed() const noexcept { return speed_; }
  // How long one step lasts while playing: 1000 / speed ms.
  [[nodiscard]] int interval_ms() const noexcept;
  // The transition into the current frame: 0 (just changed) .. 1 (settled), and the frame it comes from: the one
  // before it (-1 at frame 0 and without frames).
  [[nodiscard]] double transition() const noexcept { return transition_; }
  [[nodiscard]] int transition_from() const noexcept { return from_; }
  [[nodiscard]] const QTimer* timer() const noexcept { return timer_; }
  [[nodiscard]] std::int64_t max_elements() const noexcept { return max_elements_; }
  // The bound for later set_plan calls (ranks x elements the simulator may hold); >= 1.
  void set_max_elements(std::int64_t max_elements);

  [[nodiscard]] const PlanRequest& request() const noexcept { return request_; }  // as simulated (scaled shape)
  [[nodiscard]] const Plan& plan() const noexcept { return plan_; }
  [[nodiscard]] bool scaled() const noexcept { return scaled_; }
  [[nodiscard]] const std::vector<std::int64_t>& original_shape() const noexcept { return original_shape_; }
  [[nodiscard]] const BlockGrid& grid() const noexcept { return grid_; }
  // Frame k (0..frame_count()-1); std::out_of_range otherwise.
  [[nodiscard]] const BlockFrame& frame(int k) const;
  // The simulator's buffers at frame k: frame 0 = initial_distribution, frame k = after apply_step of steps
  // 0..k-1. Recomputed from the request on each call (the frames keep only the blocks).
  [[nodiscard]] Distribution distribution(int k) const;
  // The state of frame k: the request's source for 0, step k-1's `after` otherwise.
  [[nodiscard]] const State& state(int k) const;
  // The caption of frame k: what the step leading to it did, in words (frame 0: the starting layout).
  [[nodiscard]] const QString& caption(int k) const;
  [[nodiscard]] const QString& current_caption() const { return caption(current_); }

  // The tensor shape the simulator runs for `request` under max_elements (see the top of this file): the real
  // shape when it fits. ValueError when even the scaled tensor does not fit.
  [[nodiscard]] static std::vector<std::int64_t> simulation_shape(const PlanRequest& request, const Plan& plan,
                                                                  std::int64_t max_elements);
  // The block grid of a plan on a tensor (every state of plan.path and of its steps, and request.src/dst).
  [[nodiscard]] static BlockGrid block_grid(const PlanRequest& request, const Plan& plan);
  // The blocks every rank holds in `dist` (in `state`) on `grid`; groups empty.
  [[nodiscard]] static BlockFrame blocks_of(const Distribution& dist, const State& state, const BlockGrid& grid,
                                            const std::vector<std::int64_t>& tensor_shape);

public slots:
  void play();
  void pause();
  void toggle_play();
  void step_forward();  // pauses; nothing at the last frame
  void step_back();     // pauses; nothing at frame 0
  void jump_to(int frame);  // pauses; clamped to 0..frame_count()-1
  // Steps per second, clamped to kMinSpeed..kMaxSpeed; changes a running timer's interval at once.
  void set_speed(double steps_per_second);

signals:
  void frame_changed(int frame);
  void playing_changed(bool playing);
  void plan_changed();
  void speed_changed(double steps_per_second);
  void transition_changed(double progress);

private:
  void tick();
  void show(int frame);         // settled, no transition
  void advance_to(int frame);   // with a transition from the current frame
  void stop();                  // stops playback (the timer runs on until a transition ends)
  void reset();                 // no frames, no playback, no transition
  [[nodiscard]] QString make_caption(int k, const Distribution& dist) const;
  [[nodiscard]] QString axis_text(const std::vector<std::size_t>& axes) const;

  QTimer* timer_ = nullptr;
  QElapsedTimer clock_;  // since the current frame was entered
  bool playing_ = false;
  double transition_ = 1.0;
  int from_ = -1;
  double speed_ = kDefaultSpeed;
  std::int64_t max_elements_ = kDefaultMaxElements;
  int current_ = 0;
  QString error_;
  PlanRequest request_;
  Plan plan_;
  std::vector<std::string> axis_names_;
  std::vector<std::int64_t> original_shape_;
  bool scaled_ = false;
  BlockGrid grid_;
  std::vector<BlockFrame> frames_;
  std::vector<QString> captions_;
};

}  // namespace meshloom::app
