// Exports the canvas (a QGraphicsScene) as a PNG or an SVG file. Both are written atomically (QSaveFile): on
// any failure the file keeps its old content and the error names the path and the cause.
#pragma once

#include <QString>

#include <cstddef>
#include <optional>
#include <vector>

class QGraphicsScene;

namespace meshloom::app {

class MeshGridItem;

// While it lives, the grids of `scene` draw no selection or hover outline (an export shows the mesh, not where the
// mouse was); both come back when it goes. Every export of the canvas (PNG, SVG, the animation's handout and frames)
// renders under one.
class WithoutPointer {
public:
  explicit WithoutPointer(QGraphicsScene& scene);
  ~WithoutPointer();
  WithoutPointer(const WithoutPointer&) = delete;
  WithoutPointer& operator=(const WithoutPointer&) = delete;

private:
  struct Kept {
    MeshGridItem* grid;
    std::optional<std::size_t> selected;
    std::optional<std::size_t> hovered;
  };
  std::vector<Kept> kept_;
};

// Renders the whole scene rect on the scene palette's Base colour, without the grids' selection and hover outlines
// (they come back after). PNG: at `scale` pixels per scene unit (capped
// so neither side exceeds 16,384 pixels): an image of ceil(width * s) x ceil(height * s). SVG: vector output,
// one scene unit per SVG unit, rank numbers and labels as text. Return false and set *error ("Cannot write
// <path>: <cause>") when the file cannot be written, the scale is not positive or the scene rect is empty.
bool export_scene_png(QGraphicsScene& scene, const QString& path, double scale, QString* error);
bool export_scene_svg(QGraphicsScene& scene, const QString& path, const QString& title, QString* error);

}  // namespace meshloom::app
