// Painting helpers shared by the canvas' items (MeshGridItem, BlockOverlayItem): palette tests, colour mixing,
// cosmetic pens, and the part of an exposed rect that the device really shows.
#pragma once

#include <QColor>
#include <QPaintDevice>
#include <QPainter>
#include <QPalette>
#include <QPen>
#include <QRectF>
#include <QTransform>

#include <algorithm>

namespace meshloom::app {

// A dark palette: its window colour is darker than mid-grey.
[[nodiscard]] inline bool is_dark(const QPalette& palette) { return palette.color(QPalette::Window).lightness() < 128; }

// a + (b - a) t per RGB channel (t in 0..1); opaque.
[[nodiscard]] inline QColor mix(const QColor& a, const QColor& b, double t) {
  const QColor x = a.toRgb();
  const QColor y = b.toRgb();
  const auto f = static_cast<float>(t);
  const auto lerp = [f](float p, float q) { return p * (1.0F - f) + q * f; };
  return QColor::fromRgbF(lerp(x.redF(), y.redF()), lerp(x.greenF(), y.greenF()), lerp(x.blueF(), y.blueF()));
}

// A pen `width` device pixels wide at any zoom and scale factor, with mitred joins.
[[nodiscard]] inline QPen cosmetic(const QColor& color, double width) {
  QPen pen(color, width);
  pen.setCosmetic(true);
  pen.setJoinStyle(Qt::MiterJoin);
  return pen;
}

// `exposed` (item coordinates) cut to the painter's clip and to what its device shows, so an item culls what is
// off screen even when the view exposes all of it.
[[nodiscard]] inline QRectF visible_area(const QPainter* painter, QRectF exposed) {
  if (painter->hasClipping()) exposed &= painter->clipBoundingRect();
  const QPaintDevice* device = painter->device();
  bool invertible = false;
  const QTransform inverse = painter->worldTransform().inverted(&invertible);
  if (device && invertible && device->width() > 0 && device->height() > 0) {
    const double dpr = std::max(1.0, device->devicePixelRatio());
    exposed &= inverse.mapRect(QRectF(0, 0, device->width() * dpr, device->height() * dpr)).adjusted(-1, -1, 1, 1);
  }
  return exposed;
}

}  // namespace meshloom::app
