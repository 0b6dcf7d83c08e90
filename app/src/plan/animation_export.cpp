#include "plan/animation_export.hpp"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFont>
#include <QGraphicsScene>
#include <QImage>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPalette>
#include <QPdfWriter>
#include <QSaveFile>

#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>

#include "canvas/block_overlay_item.hpp"
#include "canvas/canvas_export.hpp"
#include "canvas/tensor_key.hpp"
#include "plan/plan_animation.hpp"
#include "shell/inline_message.hpp"
#include "shell/palettes.hpp"

namespace meshloom::app {

namespace {

constexpr int kPdfResolution = 300;  // dots per inch of the page's coordinates (the canvas stays vector)
constexpr double kMarginMm = 12.0;

bool fail(QString* error, const QString& message) {
  if (error) *error = message;
  return false;
}

// Why the animation cannot be rendered on `overlay`, or "" when it can.
QString unrenderable(const PlanAnimation& animation, const BlockOverlayItem& overlay) {
  if (!animation.has_plan()) return QStringLiteral("there is no plan to animate");
  if (overlay.scene() == nullptr) return QStringLiteral("the canvas is empty");
  if (animation.frame(0).ranks != overlay.cell_count()) {
    return QStringLiteral("the plan has %1 ranks but the canvas draws %2")
        .arg(animation.frame(0).ranks)
        .arg(overlay.cell_count());
  }
  return {};
}

// Puts the overlay at frame k, settled.
void show_frame(const PlanAnimation& animation, BlockOverlayItem& overlay, int k) {
  overlay.set_frame(animation.grid(), animation.frame(k));
  overlay.set_transition(nullptr, 1.0);
}

// A page is paper whatever the window's theme: while it renders, the scene draws in the light palette (a handout
// made in the dark theme printed a black canvas on the white sheet), and gets its own palette back after.
class PaperPalette {
public:
  explicit PaperPalette(QGraphicsScene& scene) : scene_(scene), kept_(scene.palette()) {
    scene_.setPalette(light_palette());
  }
  ~PaperPalette() { scene_.setPalette(kept_); }
  PaperPalette(const PaperPalette&) = delete;
  PaperPalette& operator=(const PaperPalette&) = delete;

private:
  QGraphicsScene& scene_;
  QPalette kept_;  // with its resolve mask: a scene that followed the application's palette follows it again
};

// One page: the title, the canvas fitted in the space left (beside the tensor key, top right, when there is a grid),
// the caption under it (word-wrapped).
void paint_page(QPainter& painter, const QRectF& page, QGraphicsScene& scene, const QString& title,
                const QString& caption, const BlockGrid* grid = nullptr, const QString& key_title = QString()) {
  QFont title_font = painter.font();
  title_font.setPointSizeF(14.0);
  title_font.setBold(true);
  QFont caption_font = painter.font();
  caption_font.setPointSizeF(12.0);
  caption_font.setBold(false);
  constexpr int kWrap = Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap;

  painter.setPen(Qt::black);
  painter.setFont(title_font);
  const QRectF title_box = painter.boundingRect(page, kWrap, title);
  painter.drawText(page, kWrap, title);
  painter.setFont(caption_font);
  const double gap = page.height() * 0.02;
  const QRectF caption_box = painter.boundingRect(page, kWrap, caption);
  const QRectF caption_at(page.left(), page.bottom() - caption_box.height(), page.width(), caption_box.height());
  painter.drawText(caption_at, kWrap, caption);

  QRectF space(page.left(), title_box.bottom() + gap, page.width(), caption_at.top() - gap - (title_box.bottom() + gap));
  if (grid != nullptr && space.height() > 0) {
    // The key: the right quarter of the page, as tall as it needs up to the space's height.
    QFont key_font = caption_font;
    key_font.setPointSizeF(10.0);
    painter.setFont(key_font);
    const QRectF key(space.right() - space.width() * 0.26, space.top(), space.width() * 0.26,
                     std::min(space.height(), space.width() * 0.2));
    paint_tensor_key(painter, key, *grid, tensor_key_layout(*grid), key_title, Qt::black, Qt::white);
    painter.setPen(QColor(0x99, 0x99, 0x99));
    painter.drawRect(key);
    space.setRight(key.left() - gap);
  }
  const QRectF source = scene.sceneRect();
  if (space.height() <= 0 || source.isEmpty()) return;
  // The canvas at its aspect ratio, centred, on the scene's own background.
  const double s = std::min(space.width() / source.width(), space.height() / source.height());
  const QSizeF size(source.width() * s, source.height() * s);
  const QRectF target(space.center() - QPointF(size.width() / 2, size.height() / 2), size);
  const PaperPalette paper(scene);
  painter.fillRect(target, scene.palette().color(QPalette::Base));
  const WithoutPointer clean(scene);
  scene.render(&painter, target, source, Qt::KeepAspectRatio);
}

// The key's title: the tensor's shape as simulated ("[1024, 512]", "(scaled)" when it was cut down).
QString key_title(const PlanAnimation& animation) {
  return QStringLiteral("blocks of %1%2")
      .arg(shape_text(animation.grid().tensor_shape), animation.scaled() ? QStringLiteral(" (scaled)") : QString());
}

}  // namespace

QString animation_frame_path(const QString& dir, const QString& stem, int frame) {
  return QDir(dir).filePath(QStringLiteral("%1_step%2.png").arg(stem).arg(frame));
}

bool export_animation_pdf(const PlanAnimation& animation, BlockOverlayItem& overlay, const QString& title,
                          const QString& path, QString* error) {
  if (const QString why = unrenderable(animation, overlay); !why.isEmpty()) {
    return fail(error, QStringLiteral("Cannot write %1: %2").arg(path, why));
  }
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) {
    return fail(error, QStringLiteral("Cannot write %1: %2").arg(path, file.errorString()));
  }
  {
    QPdfWriter pdf(&file);
    pdf.setResolution(kPdfResolution);
    pdf.setPageLayout(QPageLayout(QPageSize(QPageSize::A4), QPageLayout::Landscape,
                                  QMarginsF(kMarginMm, kMarginMm, kMarginMm, kMarginMm), QPageLayout::Millimeter));
    pdf.setTitle(title);
    pdf.setCreator(QStringLiteral("Meshloom"));
    QPainter painter;
    if (!painter.begin(&pdf)) {
      file.cancelWriting();
      return fail(error, QStringLiteral("Cannot write %1: cannot start the PDF document").arg(path));
    }
    painter.setRenderHint(QPainter::TextAntialiasing, true);
    const QRectF page(0, 0, pdf.width(), pdf.height());
    QGraphicsScene& scene = *overlay.scene();
    try {
      for (int k = 0; k < animation.frame_count(); ++k) {
        if (k > 0) pdf.newPage();
        show_frame(animation, overlay, k);
        paint_page(painter, page, scene, title, animation.caption(k), &animation.grid(), key_title(animation));
      }
    } catch (const std::exception& e) {
      painter.end();
      file.cancelWriting();
      return fail(error, QStringLiteral("Cannot write %1: %2").arg(path, error_text(e)));
    }
    painter.end();
  }
  if (!file.commit()) return fail(error, QStringLiteral("Cannot write %1: %2").arg(path, file.errorString()));
  return true;
}

QImage handout_page_image(const PlanAnimation& animation, BlockOverlayItem& overlay, const QString& title, int frame,
                          int width) {
  if (!unrenderable(animation, overlay).isEmpty() || frame < 0 || frame >= animation.frame_count() || width < 16) {
    return {};
  }
  // A4 landscape with the PDF's margins, at `width` pixels across the sheet.
  const QSizeF sheet_mm(297.0, 210.0);
  const double px_per_mm = width / sheet_mm.width();
  QImage image(QSize(width, static_cast<int>(std::lround(sheet_mm.height() * px_per_mm))),
               QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::white);
  // The PDF's page is 300 dpi and fonts in points follow the device's resolution: the image claims 300 dpi and is
  // drawn in a coordinate system of 300-dpi dots, scaled down to its pixels: the same layout, smaller.
  const int dots_per_metre = static_cast<int>(std::lround(kPdfResolution / 0.0254));
  image.setDotsPerMeterX(dots_per_metre);
  image.setDotsPerMeterY(dots_per_metre);
  QPainter painter(&image);
  painter.setRenderHint(QPainter::TextAntialiasing, true);
  painter.setRenderHint(QPainter::Antialiasing, true);
  const double dots_per_px = kPdfResolution / 25.4 / px_per_mm;
  painter.scale(1.0 / dots_per_px, 1.0 / dots_per_px);
  const double margin = kMarginMm * px_per_mm * dots_per_px;
  const QRectF page(margin, margin, image.width() * dots_per_px - 2 * margin, image.height() * dots_per_px - 2 * margin);
  show_frame(animation, overlay, frame);
  paint_page(painter, page, *overlay.scene(), title, animation.caption(frame), &animation.grid(), key_title(animation));
  return image;
}

bool export_animation_pngs(const PlanAnimation& animation, BlockOverlayItem& overlay, const QString& dir,
                           const QString& stem, double scale, QString* error, QStringList* written) {
  if (written) written->clear();
  const QFileInfo folder(dir);
  if (dir.isEmpty() || !folder.isDir()) {
    return fail(error, QStringLiteral("Cannot write frames to %1: no such folder").arg(dir));
  }
  if (const QString why = unrenderable(animation, overlay); !why.isEmpty()) {
    return fail(error, QStringLiteral("Cannot write frames to %1: %2").arg(dir, why));
  }
  QStringList done;
  const auto undo = [&done] {
    for (const QString& p : done) QFile::remove(p);
  };
  try {
    for (int k = 0; k < animation.frame_count(); ++k) {
      const QString path = animation_frame_path(dir, stem, k);
      show_frame(animation, overlay, k);
      if (!export_scene_png(*overlay.scene(), path, scale, error)) {
        undo();
        return false;
      }
      done << path;
    }
  } catch (const std::exception& e) {
    undo();
    return fail(error, QStringLiteral("Cannot write frames to %1: %2").arg(dir, error_text(e)));
  }
  if (written) *written = done;
  return true;
}

}  // namespace meshloom::app
