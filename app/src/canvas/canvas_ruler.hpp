// CanvasRuler: one edge of the canvas (top or left), outside the view's viewport, showing where the mesh's axes
// are: one band per axis that runs along that edge (outermost first), each block of the axis a tick labelled
// with its coordinate, the axis's name at the band's start. It renders Rulers (mesh_navigation.hpp) through the
// view's current transform and holds no other state: labels are thinned (every d-th block for a divisor d of a
// group's blocks, else every 2nd, 5th, 10th, ... block of a band of one group, or group of a band of several) so they
// never overlap, and at every zoom each band says at least which coordinates are in view.
#pragma once

#include <QString>
#include <QWidget>

#include <cstdint>
#include <vector>

#include "canvas/mesh_navigation.hpp"

class QGraphicsView;

namespace meshloom::app {

class CanvasRuler : public QWidget {
  Q_OBJECT

public:
  CanvasRuler(QGraphicsView* view, Qt::Orientation orientation, QWidget* parent = nullptr);

  // The bands to draw (item coordinates of an item at the scene's origin) and each band's axis name.
  void set_bands(std::vector<RulerBand> bands, std::vector<QString> names);
  [[nodiscard]] int band_count() const noexcept { return static_cast<int>(bands_.size()); }
  // The room the ruler needs across its edge: band_count() bands of band_extent() pixels.
  [[nodiscard]] int band_extent() const;
  [[nodiscard]] int thickness() const { return band_count() * band_extent(); }
  // Where the viewport starts inside the ruler (along its edge), set by the view as it lays the rulers out.
  void set_viewport_offset(int offset);
  // The labels last drawn, band by band: across, the axis name ("tp", left of the first number where the band has
  // room for it, else in the corner) then the bare numbers; where it fits in neither, and down, "dp 3" for the first
  // number in view, then the bare numbers. Tests read them.
  [[nodiscard]] const std::vector<QStringList>& drawn_labels() const noexcept { return drawn_; }
  // The ticks whose numbers were last drawn, band by band, as positions along the band (0 for its first block), so
  // that tests can tell which of a band's groups are labelled.
  [[nodiscard]] const std::vector<std::vector<std::int64_t>>& drawn_ticks() const noexcept { return drawn_ticks_; }

protected:
  void paintEvent(QPaintEvent* event) override;

private:
  QGraphicsView* view_;
  Qt::Orientation orientation_;
  std::vector<RulerBand> bands_;
  std::vector<std::int64_t> largest_;  // per band: its largest index (the widest label down the left)
  std::vector<QString> names_;
  int offset_ = 0;
  std::vector<QStringList> drawn_;
  std::vector<std::vector<std::int64_t>> drawn_ticks_;
};

}  // namespace meshloom::app
