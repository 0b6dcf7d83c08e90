#include "canvas/canvas_ruler.hpp"

#include <QFontMetricsF>
#include <QGraphicsView>
#include <QPaintEvent>
#include <QPainter>
#include <QPalette>

#include <algorithm>
#include <array>
#include <cmath>

#include "canvas/canvas_paint.hpp"

namespace meshloom::app {

namespace {
constexpr double kPad = 4.0;  // pixels around a label
}  // namespace

CanvasRuler::CanvasRuler(QGraphicsView* view, Qt::Orientation orientation, QWidget* parent)
    : QWidget(parent), view_(view), orientation_(orientation) {
  QFont small = font();
  small.setPointSizeF(std::max(7.0, small.pointSizeF() * 0.85));
  setFont(small);
  setAttribute(Qt::WA_OpaquePaintEvent);
  setToolTip(orientation == Qt::Horizontal ? tr("The axes drawn across, outermost at the top: each block labelled "
                                                "with its coordinate")
                                           : tr("The axes drawn down, outermost at the left: each block labelled "
                                                "with its coordinate"));
}

void CanvasRuler::set_bands(std::vector<RulerBand> bands, std::vector<QString> names) {
  bands_ = std::move(bands);
  largest_.clear();
  for (const RulerBand& band : bands_) {
    std::int64_t last = 0;
    for (const auto& t : band.ticks) last = std::max(last, t.index);
    largest_.push_back(last);
  }
  names_ = std::move(names);
  names_.resize(bands_.size());
  drawn_.assign(bands_.size(), {});
  drawn_ticks_.assign(bands_.size(), {});
  updateGeometry();
  update();
}

int CanvasRuler::band_extent() const {
  const QFontMetricsF fm(font());
  if (orientation_ == Qt::Horizontal) return static_cast<int>(std::ceil(fm.height() + 2.0 * 2.0));
  // Down the left: wide enough for the widest "name index" of any band.
  double widest = 0.0;
  for (std::size_t b = 0; b < bands_.size(); ++b) {
    widest = std::max(widest, fm.horizontalAdvance(names_[b] + QStringLiteral(" ") + QString::number(largest_[b])));
  }
  return static_cast<int>(std::ceil(widest + 2.0 * kPad));
}

void CanvasRuler::set_viewport_offset(int offset) {
  if (offset == offset_) return;
  offset_ = offset;
  update();
}

void CanvasRuler::paintEvent(QPaintEvent* /*event*/) {
  QPainter painter(this);
  const QPalette& pal = palette();
  const QColor base = pal.color(QPalette::Base);
  const QColor text = pal.color(QPalette::Text);
  painter.fillRect(rect(), pal.color(QPalette::Window));
  const bool across = orientation_ == Qt::Horizontal;
  const QTransform to_view = view_->viewportTransform();
  const double scale = across ? to_view.m11() : to_view.m22();
  const double shift = across ? to_view.dx() : to_view.dy();
  const double length = across ? width() : height();
  const int extent = band_extent();
  const QFontMetricsF fm(font());
  const auto to_px = [&](double at) { return at * scale + shift + offset_; };
  // The visible range in item coordinates.
  const double lo = -shift / scale;
  const double hi = (length - offset_ - shift) / scale;
  painter.setPen(Qt::NoPen);
  for (std::size_t b = 0; b < bands_.size(); ++b) {
    const RulerBand& band = bands_[b];
    QStringList& drawn = drawn_[b];
    drawn.clear();
    drawn_ticks_[b].clear();
    const double band_at = static_cast<double>(b) * extent;
    const auto strip = [&](double from, double to) {
      return across ? QRectF(from, band_at + 1.0, to - from, extent - 2.0)
                    : QRectF(band_at + 1.0, from, extent - 2.0, to - from);
    };
    if (band.ticks.empty()) continue;
    // Ticks in view: the first ending after lo, up to the last starting before hi.
    auto first = std::lower_bound(band.ticks.begin(), band.ticks.end(), lo,
                                  [](const RulerTick& t, double x) { return t.to < x; });
    auto last = std::upper_bound(first, band.ticks.end(), hi, [](double x, const RulerTick& t) { return x < t.from; });
    if (first == last) continue;
    // How many blocks one label needs: the smallest of 1, 2, 5, 10, 20, 50, ... whose blocks hold it.
    const double block_px = std::max((first->to - first->from) * scale, 1e-9);
    // The widest label is the one of the largest index, as drawn ("+15" on a ruler of offsets, not "15"): sized by
    // the bare number, labels of more digits ran into each other and were dropped unevenly.
    auto widest = first;
    for (auto t = first; t != last; ++t) {
      if (t->index > widest->index) widest = t;
    }
    const double need =
        (across ? fm.horizontalAdvance(QString::fromStdString(tick_text(band, *widest, across))) : fm.height()) + kPad;
    // A divisor of the ticks in a group, so that the labelled ones repeat alike in every group (0 and 4 of 8, not
    // 0 and 5 with the next group's 0 crowded out); past the group's proper divisors, in a band of one group 1, 2, 5,
    // 10, 20, ... ticks (a prime size would leave its first tick alone), and in a band of several whole groups: every
    // group's 0, then every 2nd, 5th, 10th, ... group's. Strides count ticks along the band (a wrapped axis' rows are
    // 0, 16, 32, ...; the band's groups are whole and in order).
    std::int64_t stride = 0;
    const std::int64_t per_group = std::max<std::int64_t>(band.per_group, 1);
    const bool one_group = static_cast<std::int64_t>(band.ticks.size()) <= per_group;
    for (std::int64_t d = 1; d < per_group; ++d) {
      if (per_group % d == 0 && static_cast<double>(d) * block_px >= need) {
        stride = d;
        break;
      }
    }
    static constexpr std::array<std::int64_t, 3> kSteps{1, 2, 5};
    const std::int64_t unit = one_group ? 1 : per_group;
    for (std::int64_t decade = 1; stride == 0; decade *= 10) {
      for (const auto s : kSteps) {
        const std::int64_t ticks = s * decade * unit;
        // No band has 2^50 ticks: the cap ends the search on a zoom no view reaches.
        if (static_cast<double>(ticks) * block_px >= need || ticks >= (std::int64_t{1} << 50) / 10) {
          stride = ticks;
          break;
        }
      }
    }
    // The blocks, each a bar once it is two pixels long; else one bar over the blocks in view.
    painter.setBrush(mix(base, text, 0.10));
    if (block_px >= 2.0) {
      for (auto t = first; t != last; ++t) {
        const double from = to_px(t->from);
        const double to = to_px(t->to);
        painter.drawRect(strip(from, std::max(to - (block_px >= 6.0 ? 1.0 : 0.0), from + 1.0)));
      }
    } else {
      painter.drawRect(strip(to_px(first->from), to_px(std::prev(last)->to)));
    }
    // Labels: the axis name, then the numbers of every stride-th block. Across, the name goes just left of the first
    // number in view where the band has room for it there ("tp  0 4 0 4"), else in the corner left of the band where
    // it fits, so that every group is labelled alike from the first (leading the first number, "tp 0" crowded out
    // the first group's 4); else, and down, it leads the first label in view ("dp 3").
    painter.setPen(text);
    double free_from = offset_;  // labels never overlap, nor run into the corner
    bool named = false;
    const auto position = [&band](auto t) { return static_cast<std::int64_t>(t - band.ticks.begin()); };
    // Where a block's label of width w starts: centred on the part of the block in view, so that a block cut by an
    // edge still says what it is.
    const auto label_from = [&](const RulerTick& t, double w) {
      const double from = std::max(to_px(t.from), static_cast<double>(offset_));
      const double to = std::min(to_px(t.to), length);
      return to - from >= w + kPad ? (from + to - w) / 2.0 : from + 1.0;
    };
    if (across) {
      const double name_w = fm.horizontalAdvance(names_[b]);
      auto labelled = first;
      while (labelled != last && position(labelled) % stride != 0) ++labelled;
      double name_x = -1.0;
      if (labelled != last) {
        const QString number = QString::fromStdString(tick_text(band, *labelled, across));
        const double x = label_from(*labelled, fm.horizontalAdvance(number));
        if (x - 2 * kPad - name_w >= offset_) name_x = x - 2 * kPad - name_w;
      }
      if (name_x < 0.0 && name_w + 2 * kPad <= offset_) name_x = offset_ - kPad - name_w;
      if (name_x >= 0.0) {
        painter.drawText(QPointF(name_x, band_at + (extent - fm.height()) / 2.0 + fm.ascent()), names_[b]);
        drawn << names_[b];
        named = true;
      }
    }
    for (auto t = first; t != last; ++t) {
      if (position(t) % stride != 0 && named) continue;
      QString label = QString::fromStdString(tick_text(band, *t, across));
      if (!named) label = names_[b] + QLatin1Char(' ') + label;
      if (across) {
        const double w = fm.horizontalAdvance(label);
        const double x = label_from(*t, w);
        if (x < free_from) continue;  // would run into the label before: this block goes unlabelled
        if (x + w > length) break;
        painter.drawText(QPointF(x, band_at + (extent - fm.height()) / 2.0 + fm.ascent()), label);
        free_from = x + w + kPad;
      } else {
        const double from = std::max(to_px(t->from), static_cast<double>(offset_));
        const double to = std::min(to_px(t->to), length);
        const double h = fm.height();
        const double y = to - from >= h ? (from + to - h) / 2.0 : from;
        if (y < free_from) continue;
        if (y + h > length) break;
        painter.drawText(QPointF(band_at + kPad, y + fm.ascent()), label);
        free_from = y + h;
      }
      drawn << label;
      drawn_ticks_[b].push_back(position(t));
      named = true;
    }
    painter.setPen(Qt::NoPen);
  }
  // A rule parts the ruler from the canvas.
  painter.setPen(mix(base, text, 0.35));
  if (across) {
    painter.drawLine(QPointF(offset_, height() - 0.5), QPointF(width(), height() - 0.5));
  } else {
    painter.drawLine(QPointF(width() - 0.5, 0), QPointF(width() - 0.5, height()));
  }
}

}  // namespace meshloom::app
