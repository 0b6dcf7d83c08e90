// TensorKey: the key to the block grids the animation draws in every rank's cell, pinned in a corner of the canvas:
// the global tensor's blocks drawn large, each in its colour (BlockOverlayItem::block_color), with the tensor's dims
// and the index range of every block along the edges, as JAX's visualize_array_sharding labels a sharded array.
// Dim 0 runs down (one row per block of dim 0); the other dims run across, nested: for a 3-D tensor the columns
// form one group per block of dim 1, each split by the blocks of dim 2, and the header has one row per dim. A 1-D
// tensor is one row across (dim 0), a 0-D tensor one block.
//
// Worked example: [64, 64] cut at 32 on both dims (S(0) on a mesh axis of 2, then S(1) on another) has 2 x 2
// blocks; the key's rows say "0:32", "32:64" (dim 0) and its columns "0:32", "32:64" (dim 1). [8, 4, 6] cut at 4
// on dim 0 and at 3 on dim 2 has rows "0:4", "4:8", one column group "0:4" of dim 1 and in it "0:3", "3:6" of dim 2.
#pragma once

#include <QColor>
#include <QRectF>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <cstdint>
#include <vector>

#include "plan/plan_animation.hpp"

class QPainter;

namespace meshloom::app {

// One labelled span of the key's edge: fractions of the grid [from, to), the dim's index range [first, end).
struct KeySpan {
  double from = 0.0;
  double to = 1.0;
  std::int64_t first = 0;
  std::int64_t end = 0;
  [[nodiscard]] QString label() const;  // "first:end", Python's slice of the dim
};

struct TensorKeyLayout {
  int row_dim = -1;                        // the dim down the side (0), or -1 (a 0-D or 1-D tensor: one row)
  std::vector<KeySpan> rows;               // one per row of the grid
  std::vector<int> column_dims;            // the dims across, outer first
  std::vector<std::vector<KeySpan>> columns;  // per dim across: its spans, left to right (repeated per outer span)
};

// The key's layout for a block grid (PlanAnimation::block_grid).
[[nodiscard]] TensorKeyLayout tensor_key_layout(const BlockGrid& grid);

// Draws the key into `area` with the painter's font (the widget's paintEvent, and each page of the PDF handout):
// the title, the header rows of the dims across, the blocks, the row ranges and the dim down. `drawn` (when not
// null) receives the labels drawn, as TensorKey::drawn_labels.
void paint_tensor_key(QPainter& painter, const QRectF& area, const BlockGrid& grid, const TensorKeyLayout& layout,
                      const QString& title, const QColor& text, const QColor& back,
                      std::vector<QStringList>* drawn = nullptr);

class TensorKey : public QWidget {
  Q_OBJECT

public:
  explicit TensorKey(QWidget* parent = nullptr);

  // The grid to explain and a title ("attention_out [1024, 512] float32"); shown until clear().
  void set_grid(const BlockGrid& grid, const QString& title);
  void clear();
  [[nodiscard]] bool has_grid() const noexcept { return has_grid_; }
  [[nodiscard]] const QString& title() const noexcept { return title_; }
  [[nodiscard]] const TensorKeyLayout& layout_info() const noexcept { return layout_; }
  // The labels drawn last, edge by edge: the row labels first, then each header row (tests read them).
  [[nodiscard]] const std::vector<QStringList>& drawn_labels() const noexcept { return drawn_; }
  [[nodiscard]] QSize sizeHint() const override;

protected:
  void paintEvent(QPaintEvent* event) override;

private:
  BlockGrid grid_;
  TensorKeyLayout layout_;
  QString title_;
  bool has_grid_ = false;
  std::vector<QStringList> drawn_;
};

}  // namespace meshloom::app
