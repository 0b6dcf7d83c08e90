#include "canvas/block_overlay_item.hpp"

#include <QFont>
#include <QGraphicsScene>
#include <QLineF>
#include <QPainter>
#include <QPalette>
#include <QStyleOptionGraphicsItem>
#include <QWidget>

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "canvas/canvas_paint.hpp"
#include "canvas/mesh_grid_item.hpp"

namespace meshloom::app {

namespace {

// The colour of Partial values' bars and marks.
const QColor kPartialColor(214, 120, 20);

}  // namespace

BlockOverlayItem::BlockOverlayItem(MeshGeometry geometry) : geometry_(std::move(geometry)) {
  setFlag(QGraphicsItem::ItemUsesExtendedStyleOption);
  setAcceptedMouseButtons(Qt::NoButton);
  setAcceptHoverEvents(false);
  setZValue(1.0);
}

QRectF BlockOverlayItem::boundingRect() const { return geometry_.bounds.adjusted(-2, -2, 2, 2); }

void BlockOverlayItem::set_frame(const BlockGrid& grid, const BlockFrame& frame) {
  if (frame.ranks != geometry_.cells.size()) {
    throw std::invalid_argument("BlockOverlayItem::set_frame: " + std::to_string(frame.ranks) + " ranks for " +
                                std::to_string(geometry_.cells.size()) + " cells");
  }
  if (frame.words_per_rank != grid.words_per_rank() || frame.held.size() != frame.ranks * frame.words_per_rank ||
      frame.partial.size() != frame.ranks || frame.fraction.size() != frame.ranks || frame.group.size() != frame.ranks ||
      grid.rows * grid.cols != grid.block_count || grid.row_edges.size() != static_cast<std::size_t>(grid.rows) + 1 ||
      grid.col_edges.size() != static_cast<std::size_t>(grid.cols) + 1) {
    throw std::invalid_argument("BlockOverlayItem::set_frame: the frame does not fit its block grid");
  }
  grid_ = grid;
  frame_ = frame;
  has_frame_ = true;
  has_previous_ = false;
  previous_ = BlockFrame{};
  t_ = 1.0;
  update();
}

void BlockOverlayItem::set_transition(const BlockFrame* previous, double t) {
  if (previous == nullptr || !has_frame_) {
    has_previous_ = false;
    previous_ = BlockFrame{};
    t_ = 1.0;
    update();
    return;
  }
  if (previous->ranks != frame_.ranks || previous->words_per_rank != frame_.words_per_rank ||
      previous->held.size() != frame_.held.size() || previous->partial.size() != frame_.ranks ||
      previous->fraction.size() != frame_.ranks) {
    throw std::invalid_argument("BlockOverlayItem::set_transition: the previous frame does not fit the frame shown");
  }
  if (!has_previous_ || previous_.held != previous->held || previous_.partial != previous->partial ||
      previous_.fraction != previous->fraction) {
    previous_ = *previous;
  }
  has_previous_ = true;
  t_ = std::isfinite(t) ? std::clamp(t, 0.0, 1.0) : 1.0;
  update();
}

void BlockOverlayItem::clear() {
  has_frame_ = false;
  frame_ = BlockFrame{};
  grid_ = BlockGrid{};
  has_previous_ = false;
  previous_ = BlockFrame{};
  t_ = 1.0;
  update();
}

bool BlockOverlayItem::arriving(std::size_t cell, std::int64_t block) const {
  return has_previous_ && filled(cell, block) && !previous_.holds(cell, block);
}

bool BlockOverlayItem::leaving(std::size_t cell, std::int64_t block) const {
  return has_previous_ && block >= 0 && block < grid_.block_count && previous_.holds(cell, block) &&
         !frame_.holds(cell, block);
}

float BlockOverlayItem::drawn_fraction(std::size_t cell) const {
  const float now = fill_fraction(cell);
  if (!has_previous_ || cell >= previous_.ranks) return now;
  const float before = previous_.fraction[cell];
  return before + (now - before) * static_cast<float>(t_);
}

bool BlockOverlayItem::filled(std::size_t cell, std::int64_t block) const {
  return has_frame_ && block >= 0 && block < grid_.block_count && frame_.holds(cell, block);
}

std::vector<std::int64_t> BlockOverlayItem::filled_blocks(std::size_t cell) const {
  if (!has_frame_ || cell >= frame_.ranks) return {};
  return frame_.blocks_of(cell, grid_.block_count);
}

bool BlockOverlayItem::partial_mark(std::size_t cell) const { return has_frame_ && frame_.is_partial(cell); }

float BlockOverlayItem::fill_fraction(std::size_t cell) const {
  return has_frame_ && cell < frame_.ranks ? frame_.fraction[cell] : 0.0F;
}

std::int32_t BlockOverlayItem::outline_group(std::size_t cell) const {
  return has_frame_ && cell < frame_.ranks ? frame_.group[cell] : -1;
}

QRectF BlockOverlayItem::inner(std::size_t cell) const {
  const QRectF& c = geometry_.cells[cell];
  const double dx = c.width() * kInset;
  const double dy = c.height() * kInset;
  return c.adjusted(dx, c.height() * MeshGridItem::kNumberBand, -dx, -dy);
}

QRectF BlockOverlayItem::block_rect(std::size_t cell, std::int64_t block) const {
  if (!has_frame_ || cell >= geometry_.cells.size() || block < 0 || block >= grid_.block_count) return {};
  const QRectF in = inner(cell);
  const auto r = static_cast<std::size_t>(grid_.row_of(block));
  const auto c = static_cast<std::size_t>(grid_.col_of(block));
  const double x0 = in.left() + in.width() * grid_.col_edges[c];
  const double x1 = in.left() + in.width() * grid_.col_edges[c + 1];
  const double y0 = in.top() + in.height() * grid_.row_edges[r];
  const double y1 = in.top() + in.height() * grid_.row_edges[r + 1];
  return {x0, y0, x1 - x0, y1 - y0};
}

bool BlockOverlayItem::detailed(double lod) const noexcept {
  const double width = MeshGeometry::kCell * (1.0 - 2.0 * kInset) * lod;
  const double height = MeshGeometry::kCell * (1.0 - MeshGridItem::kNumberBand - kInset) * lod;
  return std::min(width / static_cast<double>(std::max<std::int64_t>(grid_.cols, 1)),
                  height / static_cast<double>(std::max<std::int64_t>(grid_.rows, 1))) >= kDetailPx;
}

QColor BlockOverlayItem::block_color(std::int64_t block, std::int64_t count) {
  if (block < 0 || block >= count) return {};
  constexpr double kGolden = 0.6180339887498949;
  const double hue = std::fmod(0.58 + kGolden * static_cast<double>(block), 1.0);
  const auto tier = static_cast<float>(block % 3);
  return QColor::fromHsvF(static_cast<float>(hue), 0.62F - 0.1F * tier, 0.88F - 0.08F * tier);
}

void BlockOverlayItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) {
  if (!has_frame_) return;
  const QPalette palette = widget ? widget->palette() : scene() ? scene()->palette() : QPalette();
  const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
  const QRectF exposed = visible_area(painter, option->exposedRect.isEmpty() ? boundingRect() : option->exposedRect);
  const bool everything = exposed.contains(geometry_.bounds);
  const QColor base = palette.color(QPalette::Base);
  const QColor text = palette.color(QPalette::Text);
  const bool dark = is_dark(palette);
  const auto& cells = geometry_.cells;
  const bool detail = detailed(lod);
  const auto groups = static_cast<std::size_t>(std::max(frame_.group_count, 0));
  if (group_rects_.size() < groups) group_rects_.resize(groups);
  for (std::size_t g = 0; g < groups; ++g) group_rects_[g].clear();
  bars_.clear();
  partial_bars_.clear();
  hatched_.clear();
  outlines_.clear();
  lines_.clear();
  group_lines_.clear();
  marked_.clear();
  const auto blocks = static_cast<std::size_t>(grid_.block_count);
  const bool moving = has_previous_;
  arrived_.clear();
  reducing_.clear();
  if (detail) {
    for (auto* per_block : {&block_rects_, &arriving_rects_, &leaving_rects_}) {
      if (per_block->size() < blocks) per_block->resize(blocks);
      for (std::size_t b = 0; b < blocks; ++b) (*per_block)[b].clear();
    }
  }
  const bool marks = lod * MeshGeometry::kCell >= kMarkPx;

  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (!everything && !exposed.intersects(cells[i])) continue;
    const std::int32_t g = frame_.group[i];
    if (g >= 0 && static_cast<std::size_t>(g) < groups) group_rects_[static_cast<std::size_t>(g)].push_back(cells[i]);
    const bool partial = frame_.partial[i] != 0;
    const QRectF in = inner(i);
    if (!detail) {
      const double h = in.height() * static_cast<double>(drawn_fraction(i));
      if (h <= 0.0) continue;
      (partial ? partial_bars_ : bars_).push_back(QRectF(in.left(), in.bottom() - h, in.width(), h));
      continue;
    }
    outlines_.push_back(in);
    // The grid's inner lines, then each held block in its colour.
    for (std::size_t r = 1; r < static_cast<std::size_t>(grid_.rows); ++r) {
      const double y = in.top() + in.height() * grid_.row_edges[r];
      lines_.emplace_back(in.left(), y, in.right(), y);
    }
    for (std::size_t c = 1; c < static_cast<std::size_t>(grid_.cols); ++c) {
      const double x = in.left() + in.width() * grid_.col_edges[c];
      // Between two blocks of the outer flattened dim (a tensor of 3 or more dims): the nested grid's stronger line.
      auto& into = grid_.col_group > 1 && static_cast<std::int64_t>(c) % grid_.col_group == 0 ? group_lines_ : lines_;
      into.emplace_back(x, in.top(), x, in.bottom());
    }
    const std::uint64_t* bits = frame_.held.data() + i * frame_.words_per_rank;
    const std::uint64_t* before = moving ? previous_.held.data() + i * frame_.words_per_rank : nullptr;
    const bool reduced = moving && previous_.partial[i] != 0 && !partial;
    for (std::size_t w = 0; w < frame_.words_per_rank; ++w) {
      const std::uint64_t was = before ? before[w] : bits[w];
      // Held now (settled or arriving), then held before only (leaving).
      for (std::uint64_t word = bits[w]; word != 0; word &= word - 1) {
        const std::size_t b = w * 64 + static_cast<std::size_t>(std::countr_zero(word));
        if (b >= blocks) break;
        const QRectF rect = block_rect(i, static_cast<std::int64_t>(b));
        if ((was >> (b % 64) & 1U) != 0) {
          block_rects_[b].push_back(rect);
        } else {
          arriving_rects_[b].push_back(rect);
          arrived_.push_back(rect);
        }
        if (partial) hatched_.push_back(rect);
        if (reduced) reducing_.push_back(rect);
      }
      for (std::uint64_t word = was & ~bits[w]; word != 0; word &= word - 1) {
        const std::size_t b = w * 64 + static_cast<std::size_t>(std::countr_zero(word));
        if (b >= blocks) break;
        leaving_rects_[b].push_back(block_rect(i, static_cast<std::int64_t>(b)));
      }
    }
    if (partial && marks) marked_.push_back(i);
  }

  painter->setPen(Qt::NoPen);
  if (!detail) {
    if (!bars_.empty()) {
      painter->setBrush(mix(palette.color(QPalette::Highlight), text, dark ? 0.0 : 0.15));
      painter->drawRects(bars_.data(), static_cast<int>(bars_.size()));
    }
    if (!partial_bars_.empty()) {
      painter->setBrush(kPartialColor);
      painter->drawRects(partial_bars_.data(), static_cast<int>(partial_bars_.size()));
    }
  } else {
    // Settled blocks, then those arriving (fading in) and leaving (fading out) under a transition.
    const std::pair<std::vector<std::vector<QRectF>>*, double> layers[] = {
        {&block_rects_, 1.0}, {&arriving_rects_, t_}, {&leaving_rects_, 1.0 - t_}};
    for (const auto& [per_block, opacity] : layers) {
      if (opacity <= 0.0) continue;
      for (std::size_t b = 0; b < blocks; ++b) {
        const auto& rects = (*per_block)[b];
        if (rects.empty()) continue;
        QColor c = block_color(static_cast<std::int64_t>(b), grid_.block_count);
        c.setAlphaF(static_cast<float>(opacity));
        painter->setBrush(c);
        painter->drawRects(rects.data(), static_cast<int>(rects.size()));
      }
    }
    if (!hatched_.empty()) {
      painter->setBrush(QBrush(mix(text, kPartialColor, 0.3), Qt::BDiagPattern));
      painter->drawRects(hatched_.data(), static_cast<int>(hatched_.size()));
    }
    if (!reducing_.empty() && t_ < 1.0) {
      QColor c = mix(text, kPartialColor, 0.3);
      c.setAlphaF(static_cast<float>(1.0 - t_));
      painter->setBrush(QBrush(c, Qt::BDiagPattern));
      painter->drawRects(reducing_.data(), static_cast<int>(reducing_.size()));
    }
    painter->setBrush(Qt::NoBrush);
    const QColor line = mix(base, text, 0.45);
    painter->setPen(cosmetic(line, 0));
    if (!lines_.empty()) painter->drawLines(lines_.data(), static_cast<int>(lines_.size()));
    if (!outlines_.empty()) painter->drawRects(outlines_.data(), static_cast<int>(outlines_.size()));
    if (!group_lines_.empty()) {
      painter->setPen(cosmetic(mix(base, text, 0.8), 2.0));
      painter->drawLines(group_lines_.data(), static_cast<int>(group_lines_.size()));
    }
    if (!arrived_.empty()) {  // what the step delivered: outlined in the palette's text colour
      painter->setPen(cosmetic(text, lod * MeshGeometry::kCell >= 48.0 ? 1.5 : 1.0));
      painter->drawRects(arrived_.data(), static_cast<int>(arrived_.size()));
    }
    if (!marked_.empty()) {
      QFont font = painter->font();
      font.setPixelSize(static_cast<int>(MeshGeometry::kCell * MeshGridItem::kNumberBand * 0.62));
      font.setBold(true);
      painter->setFont(font);
      painter->setPen(kPartialColor.darker(dark ? 80 : 130));
      for (auto i : marked_) {
        const QRectF& c = cells[i];
        const double band = c.height() * MeshGridItem::kNumberBand;
        painter->drawText(QRectF(c.right() - band * 1.2, c.top(), band, band), Qt::AlignRight | Qt::AlignVCenter,
                          QStringLiteral("P"));
      }
    }
  }

  // The step's groups: each outlined in its colour.
  painter->setBrush(Qt::NoBrush);
  const double width = lod * MeshGeometry::kCell >= 12.0 ? 2.0 : 1.0;
  for (std::size_t g = 0; g < groups; ++g) {
    const auto& rects = group_rects_[g];
    if (rects.empty()) continue;
    painter->setPen(cosmetic(MeshGridItem::group_color(static_cast<std::int32_t>(g), frame_.group_count, !dark)
                                 .darker(dark ? 100 : 115),
                             width));
    painter->drawRects(rects.data(), static_cast<int>(rects.size()));
  }
}

}  // namespace meshloom::app
