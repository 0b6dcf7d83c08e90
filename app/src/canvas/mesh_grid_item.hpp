// MeshGridItem: one scene item that renders every rank cell of a mesh. It only renders the state it is given:
// the cell geometry (with the frames of the nested grids), the global rank and host of each cell, the axis
// names, and the view state set from outside (the slice colouring, the emphasised group, the selected and
// hovered cells). Level of detail (semantic zoom): below kAggregatePx per cell each host is one block (when every
// host's cells form one rectangle of the grid) and the slice is drawn by how its groups sit on hosts; above it plain
// cells; borders, rank numbers and frame labels appear as the view zooms in, so 131,072 ranks stay fluid. Everything per cell (frames, labels, host outlines) is
// precomputed in the constructor; paint() only culls to the exposed rect and batches rects of one colour.
// Colours come from the widget's palette (the scene's when rendered without a widget: exports), pens are
// cosmetic.
#pragma once

#include <QColor>
#include <QFont>
#include <QGraphicsItem>
#include <QLineF>
#include <QPointF>
#include <QRawFont>
#include <QString>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "canvas/mesh_geometry.hpp"

namespace meshloom::app {

class MeshGridItem : public QGraphicsItem {
public:
  // ranks: the global rank at each cell (row-major over the mesh coordinate); hosts: the host of each cell, or
  // empty (hosts are shaded alternately and outlined where the cells of a grid change host); axis_names: one per
  // axis of geometry.shape (frame labels and the axis legend; "d<i>" where missing). Throws
  // std::invalid_argument when ranks (or non-empty hosts) do not have one entry per cell.
  MeshGridItem(MeshGeometry geometry, std::vector<std::int64_t> ranks, std::vector<std::int64_t> hosts,
               std::vector<std::string> axis_names = {});

  [[nodiscard]] QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  [[nodiscard]] std::size_t cell_count() const noexcept { return geometry_.cells.size(); }
  [[nodiscard]] std::int64_t rank_at(std::size_t cell) const { return ranks_.at(cell); }
  [[nodiscard]] std::int64_t host_at(std::size_t cell) const { return hosts_.at(cell); }
  [[nodiscard]] const MeshGeometry& geometry() const noexcept { return geometry_; }
  // The axis legend drawn above the mesh: each axis's name, size and direction ("dp 128 ↵ 16 per row   pp 16 ↓
  // cp 1   tp 8 →": across, down, or wrapped with so many blocks to a row).
  [[nodiscard]] const QString& legend() const noexcept { return header_; }
  // The name of an axis as drawn ("d<i>" where it has none).
  [[nodiscard]] QString axis_label(std::size_t axis) const;
  // The cell under a point in item coordinates, or nullopt (gaps and outside). O(ndim), not a scan.
  [[nodiscard]] std::optional<std::size_t> cell_at(QPointF point) const;

  // Slice colouring: the group of every cell (-1: in no group, drawn plain) and the number of groups. Each
  // group gets a distinct colour (group_color). An empty vector clears the colouring. Throws
  // std::invalid_argument for a size other than cell_count() or a group outside [-1, group_count).
  void set_groups(std::vector<std::int32_t> cell_group, std::int32_t group_count);
  // The group drawn emphasised (its cells outlined thick, the other groups faded), or -1 (also for a group
  // outside [0, group_count); set_groups drops an emphasis its new groups do not have).
  void set_emphasised_group(std::int32_t group);
  // Rank numbers in a band along the top of each cell (kNumberBand of its side: a smaller font, left-aligned)
  // instead of centred, so that an overlay (BlockOverlayItem) can use the rest of the cell.
  static constexpr double kNumberBand = 0.3;
  void set_numbers_in_band(bool band);
  [[nodiscard]] bool numbers_in_band() const noexcept { return numbers_in_band_; }
  // How the slice groups are painted: Fill (each cell filled with its group's colour) or Outline (each cell keeps
  // the plain host shading and is outlined in its group's colour), so that a second colour system drawn over the
  // cells (the block overlay) is the only fill. MainWindow outlines the groups while the blocks are shown.
  enum class GroupPaint { Fill, Outline };
  void set_group_paint(GroupPaint paint);
  [[nodiscard]] GroupPaint group_paint() const noexcept { return group_paint_; }
  void set_selected_cell(std::optional<std::size_t> cell);  // outlined in the palette's Highlight; a bad cell: none
  void set_hovered_cell(std::optional<std::size_t> cell);   // outlined lighter
  [[nodiscard]] std::int32_t group_of_cell(std::size_t cell) const;  // -1 when not coloured
  [[nodiscard]] std::int32_t emphasised_group() const noexcept { return emphasised_; }
  [[nodiscard]] std::optional<std::size_t> selected_cell() const noexcept { return selected_; }
  [[nodiscard]] std::optional<std::size_t> hovered_cell() const noexcept { return hovered_; }
  // The fill colour the cell is painted with under `palette` (what paint() uses; tests check it), and the colour
  // of its group outline (an invalid QColor under GroupPaint::Fill and for a cell in no group).
  [[nodiscard]] QColor cell_fill(std::size_t cell, const QPalette& palette) const;
  [[nodiscard]] QColor cell_outline(std::size_t cell, const QPalette& palette) const;

  // Semantic zoom. Below kAggregatePx (8) device pixels per cell side, every host is drawn as one block (its cells and
  // the gaps between them; a device pixel apart from the next host), provided every host's cells form one solid
  // rectangle of the grid (aggregates_hosts(); a mesh whose hosts do not, or of one rank per host, keeps its cells).
  // A slice is then drawn by how its groups sit on hosts: hosts whose groups each lie inside that host are tinted
  // one colour (the emphasised group's host outlined); a group that crosses hosts is drawn as a span: its hosts in
  // its colour, joined in the order of its ranks (the emphasised group, or group 0 when none is).
  static constexpr double kAggregatePx = 8.0;
  [[nodiscard]] bool aggregates_hosts() const noexcept { return !host_rects_.empty(); }
  [[nodiscard]] bool aggregated_at(double lod) const noexcept {
    return aggregates_hosts() && lod * MeshGeometry::kCell < kAggregatePx;
  }
  // The host blocks of the aggregated view (item coordinates), one per host in order of first appearance, and the
  // block of a cell's host.
  [[nodiscard]] const std::vector<QRectF>& host_blocks() const noexcept { return host_rects_; }
  [[nodiscard]] std::int32_t host_block_of(std::size_t cell) const;
  // The group drawn as a span in the aggregated view, or -1 (no slice, or every group inside one host).
  [[nodiscard]] std::int32_t span_group() const;
  // What one block of the aggregated view is, and how the slice's groups sit on hosts, in a sentence or two.
  [[nodiscard]] QString aggregate_legend() const;

  // Distinct colours for groups 0..count-1 (hue by golden angle; lighter on a light palette, deeper on a dark).
  // An invalid QColor for a group outside [0, count). The item takes a palette as dark when its Window colour
  // has lightness < 128.
  [[nodiscard]] static QColor group_color(std::int32_t group, std::int32_t count, bool dark_palette);

private:
  // A frame label ("pp 1 · dp 0": the frames sharing one top-left corner, outer first), drawn on the
  // outermost frame's top border when font_px is legible at the current zoom.
  struct Label {
    QRectF box;       // background box, item coordinates
    QPointF baseline; // where the text starts
    QString text;
    int font_px = 0;
  };
  struct FrameSet {  // the frames of one outer axis, as the rects their borders are drawn on
    std::size_t axis = 0;
    double gap = 0.0;
    int depth = 0;  // 0 for the innermost outer axis, growing outwards (darker pen)
    std::vector<QRectF> rects;
  };

  void build_frames();
  void build_host_lines();
  void build_header();
  void build_host_blocks();
  void build_group_hosts();  // group_hosts_ and host_local_ from cell_group_
  void paint_aggregated(QPainter* painter, const QRectF& exposed, double lod, const QPalette& palette);
  void ensure_number_font();
  // Cells are painted in buckets of one fill: 0 and 1 plain (even and odd host), 2 + g the cells of group g
  // (under GroupPaint::Fill; under Outline every cell is in a plain bucket and group g's cells are outlined).
  [[nodiscard]] std::int32_t bucket_of(std::size_t cell) const;
  [[nodiscard]] QColor bucket_color(std::int32_t bucket, const QPalette& palette) const;
  // Group g's colour, faded when another group is emphasised.
  [[nodiscard]] QColor shown_group_color(std::int32_t group, const QPalette& palette) const;
  [[nodiscard]] QRectF cell_update_rect(std::size_t cell) const;

  MeshGeometry geometry_;
  std::vector<std::int64_t> ranks_;
  std::vector<std::int64_t> hosts_;
  std::vector<std::string> axis_names_;
  std::vector<std::int32_t> cell_group_;
  std::int32_t group_count_ = 0;
  std::int32_t emphasised_ = -1;
  GroupPaint group_paint_ = GroupPaint::Fill;
  std::optional<std::size_t> selected_;
  std::optional<std::size_t> hovered_;

  // Precomputed in the constructor.
  QRectF bounding_;
  std::vector<FrameSet> frame_sets_;
  std::vector<Label> labels_;
  std::vector<QLineF> host_lines_;  // host outlines, in the gaps around each host's cells of a grid
  std::vector<QRectF> host_rects_;  // the aggregated view's host blocks (empty: cells at every zoom)
  std::vector<std::int32_t> cell_host_block_;  // per cell, its host block
  std::int64_t ranks_per_host_ = 0;            // the most cells of one host
  // Per slice group, the host blocks it touches in the order of its first cell on each, and per
  // host block whether every group with a cell there lies inside that host alone.
  std::vector<std::vector<std::int32_t>> group_hosts_;
  std::vector<bool> host_local_;
  QString header_;                  // the axis legend above the mesh: "dp 128 ↵ 16 per row   pp 16 ↓   tp 8 →"
  QRectF header_box_;
  int header_px_ = 0;
  std::int64_t max_rank_ = 0;
  double last_lod_ = 1.0;  // the zoom of the last paint: sizes the update rect of a cosmetic outline

  // Rank numbers: digit glyphs of one raw font, laid out as one glyph run per frame (raster engines).
  bool number_font_ready_ = false;
  bool numbers_in_band_ = false;
  QFont number_font_;
  QRawFont number_raw_;
  std::array<quint32, 10> digit_glyph_{};
  std::array<double, 10> digit_advance_{};

  // Per-frame scratch, kept to avoid reallocating on every paint.
  std::vector<std::vector<QRectF>> bucket_rects_;
  std::vector<std::vector<QRectF>> group_rects_;  // under GroupPaint::Outline: the visible cells of each group
  std::vector<QRectF> scratch_rects_;
  std::vector<QLineF> scratch_lines_;
  std::vector<QPointF> scratch_points_;
  std::vector<char> span_mark_;
  std::vector<std::size_t> visible_;
  std::vector<quint32> glyphs_;
  std::vector<QPointF> glyph_positions_;
};

}  // namespace meshloom::app
