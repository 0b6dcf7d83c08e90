// Exports a plan's animation for teaching: a PDF handout, one page per frame (the canvas with the block overlay
// at that frame, and the frame's caption as text under it), and PNG frames, one image of the canvas per frame.
// Frame k is the layout after step k (frame 0: before step 1), numbered as the bar, the captions and the plan
// table number them. Both drive `overlay` through the frames and render its scene (the whole scene rect): the
// overlay is left at the last frame, and the caller shows its own frame again. Nothing here opens a dialog.
#pragma once

#include <QImage>
#include <QString>
#include <QStringList>

namespace meshloom::app {

class BlockOverlayItem;
class PlanAnimation;

// Frame k's image in `dir`: <dir>/<stem>_step<k>.png.
[[nodiscard]] QString animation_frame_path(const QString& dir, const QString& stem, int frame);

// The handout: A4 landscape, one page per frame, `title` at the top of every page, then the canvas, then the
// frame's caption. Written atomically (QSaveFile): on any failure the file keeps its old content. False with
// *error ("Cannot write <path>: <cause>") when the file cannot be written, the animation has no frames or its
// ranks are not the overlay's cells, or the overlay is in no scene.
bool export_animation_pdf(const PlanAnimation& animation, BlockOverlayItem& overlay, const QString& title,
                          const QString& path, QString* error);

// Page `frame` of the handout as an image of `width` pixels (the page's A4 landscape proportions, white), drawn by
// the same code as the PDF's pages: a preview, and the docs' picture of a page. A null image when the animation
// cannot be rendered on `overlay` (as above) or `frame` is not one of its frames.
[[nodiscard]] QImage handout_page_image(const PlanAnimation& animation, BlockOverlayItem& overlay, const QString& title,
                                        int frame, int width);

// The frames: every frame as animation_frame_path(dir, stem, k), the scene at `scale` pixels per scene unit
// (export_scene_png: each file written atomically). `dir` must be an existing folder. False with *error
// ("Cannot write frames to <dir>: <cause>", or the failing file's error) on the same conditions as above; the
// files already written by this call are removed then, so no partial set is left. *written (when not null)
// receives the paths written, in frame order.
bool export_animation_pngs(const PlanAnimation& animation, BlockOverlayItem& overlay, const QString& dir,
                           const QString& stem, double scale, QString* error, QStringList* written = nullptr);

}  // namespace meshloom::app
