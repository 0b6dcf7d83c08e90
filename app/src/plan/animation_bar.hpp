// AnimationBar: the controls and the caption of a PlanAnimation, under the canvas. A thin view: every button
// calls one of the animation's slots and every label is redrawn from its signals.
//
//   [|<] [<] [Play] [>] [>|]  (slider over the frames)  Step 2 of 3   [1x]   [x] Blocks
//   Step 2 of 3: all_gather on pp (groups of 2): each rank receives the other shard of dim 0 ...
//
// First / back / play-pause / forward / last; the slider jumps to a frame (frame 0 is the layout before the first
// step, frame k the layout after step k); the speed is in steps per second (PlanAnimation::kMinSpeed..kMaxSpeed);
// "Blocks" shows or hides the block overlay on the canvas (blocks_toggled). The caption is the animation's caption
// of the current frame, or, without frames, why there is nothing to play (set_idle_text: no tensor, no plan, the
// simulator's refusal). Keyboard: Space plays or pauses, Left and Right step, Home and End jump (MainWindow binds
// them to the Plan menu).
#pragma once

#include <QString>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QSlider;
class QToolButton;

namespace meshloom::app {

class PlanAnimation;

class AnimationBar : public QWidget {
  Q_OBJECT

public:
  // The speeds offered, in steps per second.
  static constexpr double kSpeeds[] = {0.25, 0.5, 1.0, 2.0, 4.0};

  explicit AnimationBar(PlanAnimation* animation, QWidget* parent = nullptr);

  // What the caption says while the animation has no frames (its error() when it has one takes precedence).
  void set_idle_text(const QString& text);
  [[nodiscard]] QString caption() const;
  [[nodiscard]] QString position_text() const;  // "Step 0 of 3" (before the first), "Step 2 of 3"; "" without frames
  // The caption in a large font (kLargeCaption times the normal size: presentation mode), or the normal one.
  static constexpr double kLargeCaption = 2.0;
  void set_large_caption(bool large);
  [[nodiscard]] const QLabel* caption_label() const noexcept { return caption_; }
  [[nodiscard]] bool blocks_shown() const;
  void set_blocks_shown(bool shown);

  [[nodiscard]] QToolButton* play_button() const noexcept { return play_; }
  [[nodiscard]] QToolButton* back_button() const noexcept { return back_; }
  [[nodiscard]] QToolButton* forward_button() const noexcept { return forward_; }
  [[nodiscard]] QToolButton* first_button() const noexcept { return first_; }
  [[nodiscard]] QToolButton* last_button() const noexcept { return last_; }
  [[nodiscard]] QSlider* slider() const noexcept { return slider_; }
  [[nodiscard]] QComboBox* speed_box() const noexcept { return speed_; }

signals:
  void blocks_toggled(bool shown);

protected:
  void changeEvent(QEvent* event) override;  // a palette change (the theme) recolours the icons

private:
  void sync();           // everything from the animation's state
  void sync_icons();     // the buttons' icons in the palette's button text colour

  PlanAnimation* animation_;
  QString idle_text_;
  QToolButton* first_ = nullptr;
  QToolButton* back_ = nullptr;
  QToolButton* play_ = nullptr;
  QToolButton* forward_ = nullptr;
  QToolButton* last_ = nullptr;
  QSlider* slider_ = nullptr;
  QLabel* position_ = nullptr;
  QComboBox* speed_ = nullptr;
  QCheckBox* blocks_ = nullptr;
  QLabel* caption_ = nullptr;
};

}  // namespace meshloom::app
