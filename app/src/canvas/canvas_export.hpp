// Exports the canvas (a QGraphicsScene) as a PNG or an SVG file. Both are written atomically (QSaveFile): on
// any failure the file keeps its old content and the error names the path and the cause.
#pragma once

#include <QString>

class QGraphicsScene;

namespace meshloom::app {

// Renders the whole scene rect on the scene palette's Base colour, without the grids' selection and hover outlines
// (they come back after). PNG: at `scale` pixels per scene unit (capped
// so neither side exceeds 16,384 pixels): an image of ceil(width * s) x ceil(height * s). SVG: vector output,
// one scene unit per SVG unit, rank numbers and labels as text. Return false and set *error ("Cannot write
// <path>: <cause>") when the file cannot be written, the scale is not positive or the scene rect is empty.
bool export_scene_png(QGraphicsScene& scene, const QString& path, double scale, QString* error);
bool export_scene_svg(QGraphicsScene& scene, const QString& path, const QString& title, QString* error);

}  // namespace meshloom::app
