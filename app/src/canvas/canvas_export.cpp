#include "canvas/canvas_export.hpp"

#include <QGraphicsScene>
#include <QImage>
#include <QPainter>
#include <QPalette>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QtMath>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "canvas/mesh_grid_item.hpp"

namespace meshloom::app {

namespace {

constexpr double kMaxPixels = 16384.0;

bool fail(QString* error, const QString& message) {
  if (error) *error = message;
  return false;
}

// Opens `file` for writing, or explains why not.
bool open_for_write(QSaveFile& file, QString* error) {
  if (file.open(QIODevice::WriteOnly)) return true;
  return fail(error, QStringLiteral("Cannot write %1: %2").arg(file.fileName(), file.errorString()));
}

bool commit(QSaveFile& file, QString* error) {
  if (file.commit()) return true;
  return fail(error, QStringLiteral("Cannot write %1: %2").arg(file.fileName(), file.errorString()));
}

bool check_scene(const QGraphicsScene& scene, const QString& path, QString* error) {
  const QRectF rect = scene.sceneRect();
  if (rect.isEmpty() || !std::isfinite(rect.width()) || !std::isfinite(rect.height())) {
    return fail(error, QStringLiteral("Cannot write %1: the canvas is empty").arg(path));
  }
  return true;
}

}  // namespace

WithoutPointer::WithoutPointer(QGraphicsScene& scene) {
  for (QGraphicsItem* item : scene.items()) {
    if (auto* grid = dynamic_cast<MeshGridItem*>(item)) {
      kept_.push_back({grid, grid->selected_cell(), grid->hovered_cell()});
      grid->set_selected_cell(std::nullopt);
      grid->set_hovered_cell(std::nullopt);
    }
  }
}

WithoutPointer::~WithoutPointer() {
  for (const auto& k : kept_) {
    k.grid->set_selected_cell(k.selected);
    k.grid->set_hovered_cell(k.hovered);
  }
}

bool export_scene_png(QGraphicsScene& scene, const QString& path, double scale, QString* error) {
  if (!(scale > 0.0) || !std::isfinite(scale)) {
    return fail(error, QStringLiteral("Cannot write %1: invalid scale %2").arg(path).arg(scale));
  }
  if (!check_scene(scene, path, error)) return false;
  const QRectF source = scene.sceneRect();
  const double s = std::min(scale, kMaxPixels / std::max(source.width(), source.height()));
  const QSize size(std::max(1, qCeil(source.width() * s)), std::max(1, qCeil(source.height() * s)));
  QImage image(size, QImage::Format_ARGB32_Premultiplied);
  if (image.isNull()) return fail(error, QStringLiteral("Cannot write %1: out of memory for the image").arg(path));
  image.fill(scene.palette().color(QPalette::Base));
  {
    const WithoutPointer clean(scene);
    QPainter painter(&image);
    painter.setRenderHint(QPainter::TextAntialiasing, true);
    scene.render(&painter, QRectF(0, 0, source.width() * s, source.height() * s), source, Qt::IgnoreAspectRatio);
  }
  QSaveFile file(path);
  if (!open_for_write(file, error)) return false;
  if (!image.save(&file, "PNG")) {
    file.cancelWriting();
    return fail(error, QStringLiteral("Cannot write %1: %2").arg(path, file.errorString()));
  }
  return commit(file, error);
}

bool export_scene_svg(QGraphicsScene& scene, const QString& path, const QString& title, QString* error) {
  if (!check_scene(scene, path, error)) return false;
  const QRectF source = scene.sceneRect();
  QSaveFile file(path);
  if (!open_for_write(file, error)) return false;
  QSvgGenerator svg;
  svg.setOutputDevice(&file);
  svg.setSize(QSize(qCeil(source.width()), qCeil(source.height())));
  svg.setViewBox(QRectF(0, 0, source.width(), source.height()));
  svg.setTitle(title);
  svg.setDescription(QStringLiteral("Meshloom canvas"));
  {
    QPainter painter;
    if (!painter.begin(&svg)) {
      file.cancelWriting();
      return fail(error, QStringLiteral("Cannot write %1: cannot start the SVG document").arg(path));
    }
    const QRectF target(0, 0, source.width(), source.height());
    painter.fillRect(target, scene.palette().color(QPalette::Base));
    const WithoutPointer clean(scene);
    scene.render(&painter, target, source, Qt::IgnoreAspectRatio);
    painter.end();
  }
  return commit(file, error);
}

}  // namespace meshloom::app
