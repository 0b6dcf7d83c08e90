#include "plan/animation_bar.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QFont>
#include <QEvent>
#include <QHBoxLayout>
#include <QIcon>
#include <QLabel>
#include <QPainter>
#include <QPalette>
#include <QPixmap>
#include <QSignalBlocker>
#include <QSlider>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

#include <cmath>
#include <utility>

#include "plan/plan_animation.hpp"

namespace meshloom::app {

namespace {

// The style's standard icon, recoloured with the palette's button text (enabled and disabled) where the button is dark:
// the style draws its media glyphs dark whatever the palette, unreadable on the dark theme (and darker than the
// disabled ones). On a light button the style's own icon stays.
QIcon themed_icon(const QWidget* widget, QStyle::StandardPixmap which) {
  const QIcon icon = widget->style()->standardIcon(which, nullptr, widget);
  const QPalette& pal = widget->palette();
  if (pal.color(QPalette::Button).lightness() >= 128) return icon;
  QIcon out;
  for (const QSize size : {QSize(16, 16), QSize(32, 32)}) {
    for (const auto& [mode, group] :
         {std::pair{QIcon::Normal, QPalette::Active}, std::pair{QIcon::Disabled, QPalette::Disabled}}) {
      QPixmap pixmap = icon.pixmap(size);
      QPainter painter(&pixmap);
      painter.setCompositionMode(QPainter::CompositionMode_SourceIn);
      painter.fillRect(pixmap.rect(), pal.color(group, QPalette::ButtonText));
      painter.end();
      out.addPixmap(pixmap, mode);
    }
  }
  return out;
}

QToolButton* tool_button(QWidget* parent, QStyle::StandardPixmap icon, const QString& text, const QString& tip) {
  auto* b = new QToolButton(parent);
  b->setIcon(themed_icon(parent, icon));
  b->setText(text);
  b->setToolTip(tip);
  b->setAutoRaise(true);
  return b;
}

QString speed_text(double s) {
  if (s == 0.25) return QStringLiteral("\u00bc\u00d7");
  if (s == 0.5) return QStringLiteral("\u00bd\u00d7");
  return QStringLiteral("%1\u00d7").arg(s);
}

}  // namespace

AnimationBar::AnimationBar(PlanAnimation* animation, QWidget* parent) : QWidget(parent), animation_(animation) {
  first_ = tool_button(this, QStyle::SP_MediaSkipBackward, tr("First"), tr("The layout before the first step (Home)"));
  back_ = tool_button(this, QStyle::SP_MediaSeekBackward, tr("Back"), tr("One step back (Left)"));
  play_ = tool_button(this, QStyle::SP_MediaPlay, tr("Play"), tr("Play the plan step by step (Space)"));
  play_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  forward_ = tool_button(this, QStyle::SP_MediaSeekForward, tr("Forward"), tr("One step forward (Right)"));
  last_ = tool_button(this, QStyle::SP_MediaSkipForward, tr("Last"), tr("The layout after the last step (End)"));

  slider_ = new QSlider(Qt::Horizontal, this);
  slider_->setPageStep(1);
  slider_->setTickPosition(QSlider::TicksBelow);
  slider_->setTickInterval(1);
  slider_->setToolTip(tr("Jump to a step: 0 is the layout before the first step, k the layout after step k"));
  position_ = new QLabel(this);
  position_->setMinimumWidth(position_->fontMetrics().horizontalAdvance(QStringLiteral("Step 00 of 00")));

  speed_ = new QComboBox(this);
  for (double s : kSpeeds) speed_->addItem(speed_text(s), s);
  speed_->setToolTip(tr("Playback speed: 1\u00d7 is one step per second"));
  blocks_ = new QCheckBox(tr("Blocks"), this);
  blocks_->setChecked(true);
  blocks_->setToolTip(tr("Show in every rank which blocks of the global tensor it holds, coloured by block"));

  caption_ = new QLabel(this);
  caption_->setWordWrap(true);
  caption_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  caption_->setMinimumHeight(caption_->fontMetrics().lineSpacing() * 3);
  caption_->setAlignment(Qt::AlignLeft | Qt::AlignTop);

  auto* controls = new QHBoxLayout;
  controls->setContentsMargins(0, 0, 0, 0);
  for (QWidget* w : {static_cast<QWidget*>(first_), static_cast<QWidget*>(back_), static_cast<QWidget*>(play_),
                     static_cast<QWidget*>(forward_), static_cast<QWidget*>(last_)}) {
    controls->addWidget(w);
  }
  controls->addWidget(slider_, 1);
  controls->addWidget(position_);
  controls->addWidget(speed_);
  controls->addWidget(blocks_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 2, 6, 4);
  layout->setSpacing(2);
  layout->addLayout(controls);
  layout->addWidget(caption_);

  connect(first_, &QToolButton::clicked, animation_, [this] { animation_->jump_to(0); });
  connect(back_, &QToolButton::clicked, animation_, &PlanAnimation::step_back);
  connect(play_, &QToolButton::clicked, animation_, &PlanAnimation::toggle_play);
  connect(forward_, &QToolButton::clicked, animation_, &PlanAnimation::step_forward);
  connect(last_, &QToolButton::clicked, animation_, [this] { animation_->jump_to(animation_->frame_count() - 1); });
  connect(slider_, &QSlider::valueChanged, animation_, [this](int v) {
    if (v != animation_->current()) animation_->jump_to(v);
  });
  connect(speed_, &QComboBox::currentIndexChanged, animation_,
          [this](int i) { animation_->set_speed(speed_->itemData(i).toDouble()); });
  connect(blocks_, &QCheckBox::toggled, this, &AnimationBar::blocks_toggled);

  connect(animation_, &PlanAnimation::frame_changed, this, &AnimationBar::sync);
  connect(animation_, &PlanAnimation::plan_changed, this, &AnimationBar::sync);
  connect(animation_, &PlanAnimation::playing_changed, this, &AnimationBar::sync);
  connect(animation_, &PlanAnimation::speed_changed, this, &AnimationBar::sync);
  sync();
}

void AnimationBar::set_idle_text(const QString& text) {
  idle_text_ = text;
  sync();
}

QString AnimationBar::caption() const { return caption_->text(); }
QString AnimationBar::position_text() const { return position_->text(); }
void AnimationBar::set_large_caption(bool large) {
  QFont f = font();
  if (large) f.setPointSizeF(f.pointSizeF() * kLargeCaption);
  caption_->setFont(f);
  caption_->setMinimumHeight(caption_->fontMetrics().lineSpacing() * 3);
}

bool AnimationBar::blocks_shown() const { return blocks_->isChecked(); }
void AnimationBar::set_blocks_shown(bool shown) { blocks_->setChecked(shown); }

void AnimationBar::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange) sync_icons();
}

void AnimationBar::sync_icons() {
  if (last_ == nullptr) return;  // still being built
  first_->setIcon(themed_icon(this, QStyle::SP_MediaSkipBackward));
  back_->setIcon(themed_icon(this, QStyle::SP_MediaSeekBackward));
  forward_->setIcon(themed_icon(this, QStyle::SP_MediaSeekForward));
  last_->setIcon(themed_icon(this, QStyle::SP_MediaSkipForward));
  play_->setIcon(themed_icon(this, animation_->playing() ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
}

void AnimationBar::sync() {
  const bool has = animation_->has_plan();
  const int last = has ? animation_->frame_count() - 1 : 0;
  const int at = animation_->current();
  {
    const QSignalBlocker block(slider_);
    slider_->setRange(0, last);
    slider_->setValue(at);
  }
  {
    const QSignalBlocker block(speed_);
    int nearest = 0;
    for (int i = 1; i < speed_->count(); ++i) {
      if (std::abs(speed_->itemData(i).toDouble() - animation_->speed()) <
          std::abs(speed_->itemData(nearest).toDouble() - animation_->speed())) {
        nearest = i;
      }
    }
    speed_->setCurrentIndex(nearest);
  }
  const bool playing = animation_->playing();
  play_->setIcon(themed_icon(this, playing ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
  play_->setText(playing ? tr("Pause") : tr("Play"));
  play_->setEnabled(has && last > 0);
  first_->setEnabled(has && at > 0);
  back_->setEnabled(has && at > 0);
  forward_->setEnabled(has && at < last);
  last_->setEnabled(has && at < last);
  slider_->setEnabled(has && last > 0);
  if (!has) {
    position_->clear();
    caption_->setText(animation_->error().isEmpty()
                          ? idle_text_
                          : tr("This plan cannot be animated: %1").arg(animation_->error()));
    return;
  }
  position_->setText(tr("Step %1 of %2").arg(at).arg(last));
  caption_->setText(animation_->current_caption());
}

}  // namespace meshloom::app
