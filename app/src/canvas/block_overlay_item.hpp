// BlockOverlayItem: drawn over a MeshGridItem with the same MeshGeometry, it shows inside every rank cell which
// blocks of the global tensor the rank holds in one animation frame (PlanAnimation: BlockGrid + BlockFrame). It only
// renders the frame it is given.
//
// In each cell, below the band of its rank number (MeshGridItem::kNumberBand) and inset from its border, a small grid
// of the tensor's blocks (BlockGrid::rows x cols, lines at the grid's edges, so uneven blocks are drawn narrower; for
// a tensor of 3 or more dims a stronger line between the column groups of dim 1's blocks, a nested grid): a block the rank holds is filled with the block's colour
// (block_color: by block index, the same in every frame), a block it does not hold is left empty inside the grid
// lines; Partial values (not yet reduced) are hatched over their fill and marked "P" once the cell is large enough;
// the cells of the step's groups are outlined in one colour per group. A transition (set_transition: the frame the
// step started from and a progress t in 0..1) shows the step moving data: a block the rank gains is drawn with its
// colour at opacity t and outlined as "arrived" (the outline stays once settled, so a still picture shows what the
// step delivered), a block the rank drops fades out at opacity 1 - t, Partial hatching that a reduction removes
// fades out, and the low-zoom bars grow or shrink from the old share to the new. Level of detail: when a block would be
// under kDetailPx pixels, each cell shows only a bar filled to the share of the global tensor the rank holds
// (Partial in its own colour), so 4,096 ranks stay fluid. paint() culls to the exposed rect and batches rects of
// one colour (one drawRects per block colour, per group, per bar colour).
#pragma once

#include <QColor>
#include <QGraphicsItem>
#include <QRectF>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "canvas/mesh_geometry.hpp"
#include "plan/plan_animation.hpp"

namespace meshloom::app {

class BlockOverlayItem : public QGraphicsItem {
public:
  static constexpr double kDetailPx = 3.0;   // the smallest block side, on screen, for which the grid is drawn
  static constexpr double kMarkPx = 24.0;    // the smallest cell side, on screen, for the "P" mark
  static constexpr double kInset = 0.12;     // the block grid's inset inside a cell (sides and bottom), per side

  // Same geometry as the MeshGridItem it covers (cells row-major over the mesh coordinate = simulator ranks).
  explicit BlockOverlayItem(MeshGeometry geometry);

  [[nodiscard]] QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  // The frame to show. std::invalid_argument when frame.ranks is not cell_count() or its sizes do not fit the grid.
  // Clears any transition.
  void set_frame(const BlockGrid& grid, const BlockFrame& frame);
  // The transition into the frame shown: from `previous` (same grid and ranks; std::invalid_argument otherwise) at
  // progress t (clamped to 0..1). nullptr: none (every held block drawn settled, nothing arrived).
  void set_transition(const BlockFrame* previous, double t);
  void clear();  // nothing drawn

  [[nodiscard]] bool has_frame() const noexcept { return has_frame_; }
  [[nodiscard]] std::size_t cell_count() const noexcept { return geometry_.cells.size(); }
  [[nodiscard]] const MeshGeometry& geometry() const noexcept { return geometry_; }
  [[nodiscard]] const BlockGrid& grid() const noexcept { return grid_; }
  [[nodiscard]] const BlockFrame& frame() const noexcept { return frame_; }

  // What paint() draws, per cell (tests check these rather than pixels):
  [[nodiscard]] bool filled(std::size_t cell, std::int64_t block) const;    // the block filled in the cell
  [[nodiscard]] std::vector<std::int64_t> filled_blocks(std::size_t cell) const;
  [[nodiscard]] bool partial_mark(std::size_t cell) const;                  // hatched / "P"
  [[nodiscard]] float fill_fraction(std::size_t cell) const;                // the low-zoom bar
  [[nodiscard]] std::int32_t outline_group(std::size_t cell) const;         // -1: not outlined
  [[nodiscard]] bool has_transition() const noexcept { return has_previous_; }
  [[nodiscard]] double transition() const noexcept { return has_previous_ ? t_ : 1.0; }
  // Under a transition: the block is gained by the cell (held now, not before) / dropped (held before, not now).
  [[nodiscard]] bool arriving(std::size_t cell, std::int64_t block) const;
  [[nodiscard]] bool leaving(std::size_t cell, std::int64_t block) const;
  // The bar's share drawn at the transition's progress (low zoom): previous + (now - previous) * t.
  [[nodiscard]] float drawn_fraction(std::size_t cell) const;
  // Where block `block` of cell `cell` is drawn (item coordinates); empty for a bad cell or block.
  [[nodiscard]] QRectF block_rect(std::size_t cell, std::int64_t block) const;
  // Whether a paint at this level of detail (QStyleOptionGraphicsItem::levelOfDetailFromTransform) draws the block
  // grids (true) or the fill bars (false).
  [[nodiscard]] bool detailed(double lod) const noexcept;

  // The colour of block b of count (hue by golden angle; invalid outside [0, count)).
  [[nodiscard]] static QColor block_color(std::int64_t block, std::int64_t count);

private:
  [[nodiscard]] QRectF inner(std::size_t cell) const;

  MeshGeometry geometry_;
  BlockGrid grid_;
  BlockFrame frame_;
  bool has_frame_ = false;
  BlockFrame previous_;
  bool has_previous_ = false;
  double t_ = 1.0;

  // Per-frame scratch, kept to avoid reallocating on every paint.
  std::vector<std::vector<QRectF>> block_rects_;
  std::vector<std::vector<QRectF>> arriving_rects_;
  std::vector<std::vector<QRectF>> leaving_rects_;
  std::vector<QRectF> arrived_;      // outlines of the blocks the step delivered
  std::vector<QRectF> reducing_;     // Partial hatching that fades out
  std::vector<std::vector<QRectF>> group_rects_;
  std::vector<QRectF> bars_;
  std::vector<QRectF> partial_bars_;
  std::vector<QRectF> hatched_;
  std::vector<QRectF> outlines_;
  std::vector<QLineF> lines_;
  std::vector<QLineF> group_lines_;  // every BlockGrid::col_group columns: the nested grid of a 3-D+ tensor
  std::vector<std::size_t> marked_;
};

}  // namespace meshloom::app
