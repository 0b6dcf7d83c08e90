#include "canvas/mesh_grid_item.hpp"

#include <QFontMetricsF>
#include <QGlyphRun>
#include <QGraphicsScene>
#include <QLocale>
#include <QObject>
#include <QPaintEngine>
#include <QPainter>
#include <QPalette>
#include <QStringList>
#include <QStyleOptionGraphicsItem>
#include <QWidget>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "canvas/canvas_paint.hpp"

namespace meshloom::app {

namespace {

constexpr double kCell = MeshGeometry::kCell;
constexpr double kGap = MeshGeometry::kGap;
// Level of detail, in device pixels: what is drawn once it reaches that size on screen.
constexpr double kBordersPx = 10.0;     // cell borders, per cell side
constexpr double kNumbersPx = 22.0;     // rank numbers, per cell side
constexpr double kHostLinesPx = 1.5;    // host outlines, per small gap (they run in the gaps)
constexpr double kFramePx = 2.0;        // frames of an outer axis, per gap between its blocks
constexpr double kLegibleTextPx = 6.5;  // frame labels and the axis legend, per font pixel size
constexpr double kNumberFontPx = 14.0;  // rank numbers' font, in scene units, before shrinking to fit

QString axis_name(const std::vector<std::string>& names, std::size_t axis) {
  return axis < names.size() && !names[axis].empty() ? QString::fromStdString(names[axis])
                                                     : QStringLiteral("d%1").arg(axis);
}

// Axis-aligned segments along one line (at `at`), merged where they touch or overlap.
struct Segment {
  double at;
  double from;
  double to;
};

void merge_into(std::vector<Segment>& segs, bool vertical, std::vector<QLineF>& out) {
  std::sort(segs.begin(), segs.end(),
            [](const Segment& a, const Segment& b) { return std::tie(a.at, a.from) < std::tie(b.at, b.from); });
  constexpr double eps = 1e-6;
  for (std::size_t i = 0; i < segs.size();) {
    Segment cur = segs[i++];
    while (i < segs.size() && std::abs(segs[i].at - cur.at) < eps && segs[i].from <= cur.to + eps) {
      cur.to = std::max(cur.to, segs[i].to);
      ++i;
    }
    out.push_back(vertical ? QLineF(cur.at, cur.from, cur.at, cur.to) : QLineF(cur.from, cur.at, cur.to, cur.at));
  }
}

// What of `exposed` (item coordinates) can reach the device: QGraphicsScene::render() exposes the whole item
// however small its target, so clip to the painter's clip and the device's extent (in device pixels, a
}  // namespace

MeshGridItem::MeshGridItem(MeshGeometry geometry, std::vector<std::int64_t> ranks, std::vector<std::int64_t> hosts,
                           std::vector<std::string> axis_names)
    : geometry_(std::move(geometry)),
      ranks_(std::move(ranks)),
      hosts_(std::move(hosts)),
      axis_names_(std::move(axis_names)) {
  if (ranks_.size() != geometry_.cells.size()) {
    throw std::invalid_argument("MeshGridItem: " + std::to_string(ranks_.size()) + " ranks for " +
                                std::to_string(geometry_.cells.size()) + " cells");
  }
  if (!hosts_.empty() && hosts_.size() != geometry_.cells.size()) {
    throw std::invalid_argument("MeshGridItem: " + std::to_string(hosts_.size()) + " hosts for " +
                                std::to_string(geometry_.cells.size()) + " cells");
  }
  setFlag(QGraphicsItem::ItemUsesExtendedStyleOption);
  for (const auto r : ranks_) max_rank_ = std::max(max_rank_, r);
  // Host outlines run in the gaps (kGap / 2 outside the cells); frames a quarter of their gap outside.
  bounding_ = geometry_.bounds.adjusted(-kGap, -kGap, kGap, kGap);
  build_frames();
  build_host_lines();
  build_host_blocks();
  build_header();
}

QRectF MeshGridItem::boundingRect() const { return bounding_; }

QString MeshGridItem::axis_label(std::size_t axis) const { return axis_name(axis_names_, axis); }

void MeshGridItem::build_frames() {
  const auto& g = geometry_;
  std::vector<std::size_t> outer;
  for (std::size_t a = 0; a < g.shape.size(); ++a) {
    if (g.is_outer(a)) outer.push_back(a);
  }
  // Innermost outer axis first, so the outer frames are drawn over the inner ones where they meet.
  for (std::size_t k = outer.size(); k-- > 0;) {
    FrameSet set;
    set.axis = outer[k];
    set.gap = g.gaps[outer[k]];
    set.depth = static_cast<int>(outer.size() - 1 - k);
    frame_sets_.push_back(std::move(set));
  }
  const auto set_of = [this](std::size_t axis) -> FrameSet& {
    return *std::find_if(frame_sets_.begin(), frame_sets_.end(), [axis](const FrameSet& s) { return s.axis == axis; });
  };
  // The frames sharing a top-left corner get one label, on the outermost one (frames come outermost axis first).
  std::map<std::pair<double, double>, std::vector<std::size_t>> corners;
  for (std::size_t i = 0; i < g.frames.size(); ++i) {
    const auto& f = g.frames[i];
    const double m = g.gaps[f.axis] / 4.0;
    const QRectF border = f.rect.adjusted(-m, -m, m, m);
    set_of(f.axis).rects.push_back(border);
    bounding_ |= border.adjusted(-1, -1, 1, 1);
    corners[{f.rect.top(), f.rect.left()}].push_back(i);
  }
  // First the full texts and their places; then each is elided to the room before the next label on its line
  // (or the end of its frame), so a long composed label does not run into its neighbour.
  struct Pending {
    Label label;
    QString full;
    double limit;  // the outermost frame's right border
  };
  std::vector<Pending> pending;
  std::map<double, std::vector<std::size_t>> lines;  // label bottom -> labels on that line
  for (const auto& [corner, members] : corners) {
    const auto& outermost = g.frames[members.front()];
    QStringList parts;
    for (const auto i : members) {
      parts << QStringLiteral("%1 %2").arg(axis_name(axis_names_, g.frames[i].axis)).arg(g.frames[i].index);
    }
    Pending p;
    p.label.font_px = std::max(6, static_cast<int>(g.gaps[outermost.axis] / 2.0));
    p.full = parts.join(QStringLiteral(" \u00b7 "));
    const double m = g.gaps[outermost.axis] / 4.0;
    // On the outermost frame's top border, a little in from its corner, its bottom just above the cells.
    const double bottom = outermost.rect.top() - 0.5;
    const double left = outermost.rect.left() - m + p.label.font_px * 0.5;
    p.label.box = QRectF(left, bottom, 0.0, 0.0);
    p.limit = outermost.rect.right() + m;
    lines[bottom].push_back(pending.size());
    pending.push_back(std::move(p));
  }
  for (auto& [bottom, on_line] : lines) {
    std::sort(on_line.begin(), on_line.end(),
              [&](std::size_t a, std::size_t b) { return pending[a].label.box.left() < pending[b].label.box.left(); });
    for (std::size_t k = 0; k < on_line.size(); ++k) {
      Pending& p = pending[on_line[k]];
      Label& label = p.label;
      QFont font;
      font.setPixelSize(label.font_px);
      const QFontMetricsF fm(font);
      const double pad = label.font_px * 0.3;
      const double left = label.box.left();
      double end = p.limit;
      if (k + 1 < on_line.size()) end = std::min(end, pending[on_line[k + 1]].label.box.left() - label.font_px * 0.5);
      const double room = std::max(end - left - 2.0 * pad, 3.0 * label.font_px);
      label.text = fm.elidedText(p.full, Qt::ElideRight, room);
      label.box = QRectF(left, bottom - fm.height(), fm.horizontalAdvance(label.text) + 2.0 * pad, fm.height());
      label.baseline = QPointF(left + pad, label.box.top() + fm.ascent());
      bounding_ |= label.box.adjusted(-1, -1, 1, 1);
    }
  }
  for (auto& p : pending) labels_.push_back(std::move(p.label));
}

void MeshGridItem::build_host_lines() {
  if (hosts_.empty()) return;
  std::vector<std::int64_t> distinct = hosts_;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  // One host, or one cell per host: an outline would only repeat the grid.
  if (distinct.size() <= 1 || distinct.size() == hosts_.size()) return;
  std::vector<Segment> vertical;
  std::vector<Segment> horizontal;
  const double h = kGap / 2.0;
  const double probe = kGap + 0.5;  // just inside the cell across a small gap; in a wider gap nothing is there
  for (std::size_t i = 0; i < geometry_.cells.size(); ++i) {
    const QRectF& c = geometry_.cells[i];
    const QPointF mid = c.center();
    const auto differs = [&](QPointF p) {
      const auto j = geometry_.cell_at(p);
      return !j || hosts_[*j] != hosts_[i];
    };
    if (differs({c.right() + probe, mid.y()})) vertical.push_back({c.right() + h, c.top() - h, c.bottom() + h});
    if (differs({c.left() - probe, mid.y()})) vertical.push_back({c.left() - h, c.top() - h, c.bottom() + h});
    if (differs({mid.x(), c.bottom() + probe})) horizontal.push_back({c.bottom() + h, c.left() - h, c.right() + h});
    if (differs({mid.x(), c.top() - probe})) horizontal.push_back({c.top() - h, c.left() - h, c.right() + h});
  }
  merge_into(vertical, true, host_lines_);
  merge_into(horizontal, false, host_lines_);
}

void MeshGridItem::build_host_blocks() {
  if (hosts_.empty()) return;
  const auto& cells = geometry_.cells;
  // Host blocks in order of first appearance; each the bounding rect of its cells.
  std::map<std::int64_t, std::int32_t> block_of_host;
  std::vector<QRectF> rects;
  std::vector<std::int64_t> counts;
  cell_host_block_.resize(cells.size());
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto [it, added] = block_of_host.try_emplace(hosts_[i], static_cast<std::int32_t>(rects.size()));
    if (added) {
      rects.push_back(cells[i]);
      counts.push_back(0);
    }
    const auto b = static_cast<std::size_t>(it->second);
    rects[b] |= cells[i];
    ++counts[b];
    cell_host_block_[i] = it->second;
  }
  // One host, or one cell per host: nothing to aggregate.
  if (rects.size() <= 1 || rects.size() == cells.size()) {
    cell_host_block_.clear();
    return;
  }
  // Every host must be a solid rectangle: its cells, and no other's, on a contiguous run of the mesh's distinct
  // columns and rows of cells (so the block hides no cell of another host and no hole).
  std::vector<double> xs;
  std::vector<double> ys;
  xs.reserve(cells.size());
  ys.reserve(cells.size());
  for (const auto& c : cells) {
    xs.push_back(c.left());
    ys.push_back(c.top());
  }
  const auto distinct = [](std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  };
  distinct(xs);
  distinct(ys);
  const auto index_in = [](const std::vector<double>& v, double x) {
    return static_cast<std::int64_t>(std::lower_bound(v.begin(), v.end(), x - 1e-6) - v.begin());
  };
  for (std::size_t b = 0; b < rects.size(); ++b) {
    const QRectF& r = rects[b];
    const std::int64_t cols = index_in(xs, r.right() - kCell) - index_in(xs, r.left()) + 1;
    const std::int64_t rows = index_in(ys, r.bottom() - kCell) - index_in(ys, r.top()) + 1;
    if (cols * rows != counts[b]) {
      cell_host_block_.clear();
      return;
    }
    ranks_per_host_ = std::max(ranks_per_host_, counts[b]);
  }
  host_rects_ = std::move(rects);
}

std::int32_t MeshGridItem::host_block_of(std::size_t cell) const {
  if (cell >= geometry_.cells.size()) throw std::out_of_range("MeshGridItem: no cell " + std::to_string(cell));
  return cell_host_block_.empty() ? -1 : cell_host_block_[cell];
}

std::int32_t MeshGridItem::span_group() const {
  if (group_hosts_.empty()) return -1;
  const auto crosses = [this](std::int32_t g) { return group_hosts_[static_cast<std::size_t>(g)].size() > 1; };
  if (emphasised_ >= 0) return crosses(emphasised_) ? emphasised_ : -1;
  for (std::int32_t g = 0; g < group_count_; ++g) {
    if (crosses(g)) return g;
  }
  return -1;
}

QString MeshGridItem::aggregate_legend() const {
  if (!aggregates_hosts()) return {};
  QString text = ranks_per_host_ == 1 ? QObject::tr("One block per host (1 rank).")
                                      : QObject::tr("One block per host (up to %1 ranks); zoom in for ranks.")
                                            .arg(ranks_per_host_);
  if (group_hosts_.empty()) return text;
  std::size_t fewest = group_hosts_.front().size();
  std::size_t most = fewest;
  std::size_t local = 0;
  for (const auto& hosts : group_hosts_) {
    const std::size_t n = hosts.size();
    fewest = std::min(fewest, n);
    most = std::max(most, n);
    if (n == 1) ++local;
  }
  const QString groups = QLocale().toString(static_cast<qlonglong>(group_hosts_.size()));
  if (local == group_hosts_.size()) {
    return text + QLatin1Char(' ') +
           (group_hosts_.size() == 1 ? QObject::tr("The slice's group lies inside one host.")
                                     : QObject::tr("Each of the slice's %1 groups lies inside one host.").arg(groups));
  }
  const QString span = fewest == most ? QString::number(most) : QStringLiteral("%1\u2013%2").arg(fewest).arg(most);
  const std::int32_t shown = span_group();
  text += QLatin1Char(' ') + QObject::tr("The slice's %1 groups span %2 hosts each").arg(groups, span);
  if (shown >= 0) text += QObject::tr("; group %1 is drawn joining its hosts").arg(shown);
  return text + QLatin1Char('.');
}

void MeshGridItem::build_header() {
  const auto& g = geometry_;
  if (g.shape.empty()) return;
  QStringList parts;
  for (std::size_t a = 0; a < g.shape.size(); ++a) {
    QString part = QStringLiteral("%1 %2").arg(axis_name(axis_names_, a)).arg(g.shape[a]);
    // Its direction: across, down, or wrapped like text, so many blocks to a row ("dp 128 \u21b5 16 per row").
    if (g.wraps(a)) {
      part += QStringLiteral(" \u21b5 %1 per row").arg(g.columns[a]);
    } else if (g.shape[a] > 1) {
      part += g.across[a] ? QStringLiteral(" \u2192") : QStringLiteral(" \u2193");
    }
    parts << part;
  }
  header_ = parts.join(QStringLiteral("   "));
  // About a fortieth of the mesh, so it reads (12 px or more) when a large mesh is fitted to a window, and above every
  // frame label.
  int largest_label = 0;
  for (const auto& label : labels_) largest_label = std::max(largest_label, label.font_px);
  header_px_ = std::max({10, largest_label + largest_label / 4,
                         static_cast<int>(std::lround(std::max(g.bounds.width(), g.bounds.height()) / 40.0))});
  QFont font;
  font.setPixelSize(header_px_);
  const QFontMetricsF fm(font);
  const double gap = header_px_ * 0.5;
  header_box_ = QRectF(g.bounds.left(), bounding_.top() - gap - fm.height(), fm.horizontalAdvance(header_),
                       fm.height());
  bounding_ |= header_box_.adjusted(-1, -1, 1, 1);
}

void MeshGridItem::set_numbers_in_band(bool band) {
  if (band == numbers_in_band_) return;
  numbers_in_band_ = band;
  number_font_ready_ = false;
  update();
}

void MeshGridItem::ensure_number_font() {
  if (number_font_ready_) return;
  number_font_ready_ = true;
  int digits = 1;
  for (std::int64_t r = max_rank_; r >= 10; r /= 10) ++digits;
  const auto fit = [&](double px) {
    QFont font;
    font.setPixelSize(std::max(6, static_cast<int>(px)));
    return font;
  };
  const double base = numbers_in_band_ ? kNumberFontPx * 0.62 : kNumberFontPx;
  const double room = numbers_in_band_ ? 0.6 * kCell : 0.8 * kCell;
  number_font_ = fit(base);
  const QFontMetricsF fm(number_font_);
  const double width = digits * fm.horizontalAdvance(QStringLiteral("0"));
  if (width > room) number_font_ = fit(std::floor(base * room / width));
  number_raw_ = QRawFont::fromFont(number_font_);
  if (!number_raw_.isValid()) return;
  const QList<quint32> glyphs = number_raw_.glyphIndexesForString(QStringLiteral("0123456789"));
  if (glyphs.size() != 10) {
    number_raw_ = QRawFont();
    return;
  }
  const QList<QPointF> advances = number_raw_.advancesForGlyphIndexes(glyphs);
  for (std::size_t d = 0; d < 10; ++d) {
    digit_glyph_[d] = glyphs[static_cast<qsizetype>(d)];
    digit_advance_[d] = advances.size() == 10 ? advances[static_cast<qsizetype>(d)].x() : 0.0;
  }
}

std::int32_t MeshGridItem::bucket_of(std::size_t cell) const {
  const std::int32_t g = cell_group_.empty() ? -1 : cell_group_[cell];
  if (g >= 0 && group_paint_ == GroupPaint::Fill) return 2 + g;
  return hosts_.empty() ? 0 : static_cast<std::int32_t>(hosts_[cell] & 1);
}

QColor MeshGridItem::bucket_color(std::int32_t bucket, const QPalette& palette) const {
  if (bucket < 2) return mix(palette.color(QPalette::Base), palette.color(QPalette::Text), bucket == 0 ? 0.09 : 0.17);
  return shown_group_color(bucket - 2, palette);
}

QColor MeshGridItem::shown_group_color(std::int32_t group, const QPalette& palette) const {
  const QColor color = group_color(group, group_count_, is_dark(palette));
  return emphasised_ >= 0 && group != emphasised_ ? mix(color, palette.color(QPalette::Base), 0.6) : color;
}

QColor MeshGridItem::cell_fill(std::size_t cell, const QPalette& palette) const {
  if (cell >= geometry_.cells.size()) throw std::out_of_range("MeshGridItem::cell_fill: no cell " + std::to_string(cell));
  return bucket_color(bucket_of(cell), palette);
}

QColor MeshGridItem::cell_outline(std::size_t cell, const QPalette& palette) const {
  if (cell >= geometry_.cells.size()) {
    throw std::out_of_range("MeshGridItem::cell_outline: no cell " + std::to_string(cell));
  }
  const std::int32_t g = group_of_cell(cell);
  return group_paint_ == GroupPaint::Outline && g >= 0 ? shown_group_color(g, palette) : QColor();
}

void MeshGridItem::set_group_paint(GroupPaint paint) {
  if (paint == group_paint_) return;
  group_paint_ = paint;
  update();
}

QColor MeshGridItem::group_color(std::int32_t group, std::int32_t count, bool dark_palette) {
  if (group < 0 || group >= count) return {};
  // Hue steps by the golden ratio of a turn (neighbouring groups far apart on the wheel, no two alike); the
  // saturation and value cycle in threes so that even close hues of many groups stay apart.
  constexpr double kGolden = 0.6180339887498949;
  const double hue = std::fmod(0.07 + kGolden * group, 1.0);
  static constexpr std::array<float, 3> light_s{0.36F, 0.25F, 0.47F};
  static constexpr std::array<float, 3> light_v{0.97F, 0.91F, 0.85F};
  static constexpr std::array<float, 3> dark_s{0.60F, 0.48F, 0.70F};
  static constexpr std::array<float, 3> dark_v{0.60F, 0.50F, 0.70F};
  const auto tier = static_cast<std::size_t>(group % 3);
  const auto shade = static_cast<std::size_t>((group / 3) % 3);
  return QColor::fromHsvF(static_cast<float>(hue), dark_palette ? dark_s[tier] : light_s[tier],
                          dark_palette ? dark_v[shade] : light_v[shade]);
}

std::optional<std::size_t> MeshGridItem::cell_at(QPointF point) const { return geometry_.cell_at(point); }

std::int32_t MeshGridItem::group_of_cell(std::size_t cell) const {
  if (cell >= geometry_.cells.size()) throw std::out_of_range("MeshGridItem: no cell " + std::to_string(cell));
  return cell_group_.empty() ? -1 : cell_group_[cell];
}

void MeshGridItem::set_groups(std::vector<std::int32_t> cell_group, std::int32_t group_count) {
  if (!cell_group.empty() && cell_group.size() != geometry_.cells.size()) {
    throw std::invalid_argument("MeshGridItem::set_groups: " + std::to_string(cell_group.size()) + " groups for " +
                                std::to_string(geometry_.cells.size()) + " cells");
  }
  if (cell_group.empty()) group_count = 0;
  for (const auto g : cell_group) {
    if (g < -1 || g >= group_count) {
      throw std::invalid_argument("MeshGridItem::set_groups: group " + std::to_string(g) + " outside [-1, " +
                                  std::to_string(group_count) + ")");
    }
  }
  cell_group_ = std::move(cell_group);
  group_count_ = std::max(0, group_count);
  if (emphasised_ >= group_count_) emphasised_ = -1;
  build_group_hosts();
  update();
}

void MeshGridItem::build_group_hosts() {
  group_hosts_.clear();
  host_local_.clear();
  if (cell_group_.empty() || !aggregates_hosts()) return;
  // (group, host, first cell): sorted by group and host to keep each pair once, at its first cell; then by group
  // and first cell, so that a group's hosts come in the order of its ranks.
  struct Touch {
    std::int32_t group;
    std::int32_t host;
    std::size_t cell;
  };
  std::vector<Touch> touches;
  touches.reserve(cell_group_.size());
  for (std::size_t i = 0; i < cell_group_.size(); ++i) {
    if (cell_group_[i] >= 0) touches.push_back({cell_group_[i], cell_host_block_[i], i});
  }
  std::sort(touches.begin(), touches.end(), [](const Touch& a, const Touch& b) {
    return std::tie(a.group, a.host, a.cell) < std::tie(b.group, b.host, b.cell);
  });
  touches.erase(std::unique(touches.begin(), touches.end(),
                            [](const Touch& a, const Touch& b) { return a.group == b.group && a.host == b.host; }),
                touches.end());
  std::sort(touches.begin(), touches.end(),
            [](const Touch& a, const Touch& b) { return std::tie(a.group, a.cell) < std::tie(b.group, b.cell); });
  group_hosts_.assign(static_cast<std::size_t>(group_count_), {});
  for (const auto& t : touches) group_hosts_[static_cast<std::size_t>(t.group)].push_back(t.host);
  // A host is local when every group with a cell on it lies on it alone (and it has some group).
  std::vector<char> seen(host_rects_.size(), 0);
  std::vector<char> crossing(host_rects_.size(), 0);
  for (const auto& hosts : group_hosts_) {
    for (const auto h : hosts) {
      seen[static_cast<std::size_t>(h)] = 1;
      if (hosts.size() > 1) crossing[static_cast<std::size_t>(h)] = 1;
    }
  }
  host_local_.resize(host_rects_.size());
  for (std::size_t h = 0; h < host_rects_.size(); ++h) host_local_[h] = seen[h] != 0 && crossing[h] == 0;
}

void MeshGridItem::set_emphasised_group(std::int32_t group) {
  if (group < 0 || group >= group_count_) group = -1;
  if (group == emphasised_) return;
  emphasised_ = group;
  update();
}

QRectF MeshGridItem::cell_update_rect(std::size_t cell) const {
  // The outlines are cosmetic (a few device pixels): grow the cell by that much at the last zoom.
  const double m = kGap + 4.0 / std::max(last_lod_, 1e-3);
  return geometry_.cells[cell].adjusted(-m, -m, m, m);
}

void MeshGridItem::set_selected_cell(std::optional<std::size_t> cell) {
  if (cell && *cell >= geometry_.cells.size()) cell.reset();
  if (cell == selected_) return;
  if (selected_) update(cell_update_rect(*selected_));
  selected_ = cell;
  if (selected_) update(cell_update_rect(*selected_));
}

void MeshGridItem::set_hovered_cell(std::optional<std::size_t> cell) {
  if (cell && *cell >= geometry_.cells.size()) cell.reset();
  if (cell == hovered_) return;
  if (hovered_) update(cell_update_rect(*hovered_));
  hovered_ = cell;
  if (hovered_) update(cell_update_rect(*hovered_));
}

void MeshGridItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) {
  const QPalette palette = widget ? widget->palette() : scene() ? scene()->palette() : QPalette();
  const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
  // The zoom of the view (a widget), not of an export or the minimap's picture: it sizes update rects.
  if (widget != nullptr) last_lod_ = lod;
  const QRectF exposed = visible_area(painter, option->exposedRect.isEmpty() ? bounding_ : option->exposedRect);
  const bool everything = exposed.contains(geometry_.bounds);
  const QColor base = palette.color(QPalette::Base);
  const QColor text = palette.color(QPalette::Text);
  const double cell_px = lod * kCell;
  const bool aggregated = aggregated_at(lod);
  const bool numbers = cell_px >= kNumbersPx && !aggregated;
  const auto& cells = geometry_.cells;

  visible_.clear();
  if (aggregated) {
    paint_aggregated(painter, exposed, lod, palette);
  } else {
    // Cells, batched by fill: one drawRects per colour.
    const auto buckets = static_cast<std::size_t>(2 + group_count_);
    if (bucket_rects_.size() < buckets) bucket_rects_.resize(buckets);
    for (std::size_t b = 0; b < buckets; ++b) bucket_rects_[b].clear();
    const bool outline_groups = group_paint_ == GroupPaint::Outline && group_count_ > 0;
    if (outline_groups) {
      const auto groups = static_cast<std::size_t>(group_count_);
      if (group_rects_.size() < groups) group_rects_.resize(groups);
      for (auto& rects : group_rects_) rects.clear();
    }
    // Below a pixel the small gaps only alias (uneven stripes): close them, so grids read as solid blocks.
    const double close = lod * kGap < 1.0 ? kGap / 2.0 : 0.0;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (!everything && !exposed.intersects(cells[i])) continue;
      bucket_rects_[static_cast<std::size_t>(bucket_of(i))].push_back(cells[i].adjusted(-close, -close, close, close));
      if (outline_groups && cell_group_[i] >= 0) group_rects_[static_cast<std::size_t>(cell_group_[i])].push_back(cells[i]);
      if (numbers) visible_.push_back(i);
    }
    painter->setPen(cell_px >= kBordersPx ? cosmetic(mix(base, text, 0.32), 0) : QPen(Qt::NoPen));
    for (std::size_t b = 0; b < buckets; ++b) {
      const auto& rects = bucket_rects_[b];
      if (rects.empty()) continue;
      painter->setBrush(bucket_color(static_cast<std::int32_t>(b), palette));
      painter->drawRects(rects.data(), static_cast<int>(rects.size()));
    }
    painter->setBrush(Qt::NoBrush);

    // Hosts, outlined in the gaps around their cells.
    if (!host_lines_.empty() && lod * kGap >= kHostLinesPx) {
      painter->setPen(cosmetic(mix(base, text, 0.62), lod * kGap >= 3.0 ? 2.0 : 1.0));
      const QLineF* lines = host_lines_.data();
      std::size_t count = host_lines_.size();
      if (!everything) {
        scratch_lines_.clear();
        for (const auto& l : host_lines_) {
          if (exposed.intersects(QRectF(l.p1(), l.p2()).normalized().adjusted(-1, -1, 1, 1))) scratch_lines_.push_back(l);
        }
        lines = scratch_lines_.data();
        count = scratch_lines_.size();
      }
      if (count > 0) painter->drawLines(lines, static_cast<int>(count));
    }

    // Under GroupPaint::Outline, every group's cells outlined in its colour (thicker once the cells are large).
    if (outline_groups) {
      const double width = cell_px >= 24.0 ? 3.0 : cell_px >= 8.0 ? 2.0 : 1.0;
      for (std::size_t g = 0; g < static_cast<std::size_t>(group_count_); ++g) {
        const auto& rects = group_rects_[g];
        if (rects.empty()) continue;
        painter->setPen(cosmetic(shown_group_color(static_cast<std::int32_t>(g), palette), width));
        painter->drawRects(rects.data(), static_cast<int>(rects.size()));
      }
    }

    // The emphasised group: its cells outlined.
    if (emphasised_ >= 0) {
      const auto& rects = outline_groups ? group_rects_[static_cast<std::size_t>(emphasised_)]
                                         : bucket_rects_[static_cast<std::size_t>(2 + emphasised_)];
      if (!rects.empty()) {
        painter->setPen(cosmetic(text, 2.0));
        painter->drawRects(rects.data(), static_cast<int>(rects.size()));
      }
    }
  }

  // Frames of the outer axes, inner first; each once its blocks are far enough apart to tell.
  for (const auto& set : frame_sets_) {
    if (lod * set.gap < kFramePx) continue;
    painter->setPen(cosmetic(mix(base, text, std::min(0.38 + 0.14 * set.depth, 0.8)), set.depth > 0 ? 1.5 : 1.0));
    const QRectF* rects = set.rects.data();
    std::size_t count = set.rects.size();
    if (!everything) {
      scratch_rects_.clear();
      for (const auto& r : set.rects) {
        if (exposed.intersects(r.adjusted(-1, -1, 1, 1))) scratch_rects_.push_back(r);
      }
      rects = scratch_rects_.data();
      count = scratch_rects_.size();
    }
    if (count > 0) painter->drawRects(rects, static_cast<int>(count));
  }

  // Rank numbers: one glyph run of digit glyphs on raster devices; plain text elsewhere (SVG keeps text).
  if (numbers && !visible_.empty()) {
    ensure_number_font();
    painter->setPen(text);
    const QPaintEngine* engine = painter->paintEngine();
    if (number_raw_.isValid() && engine && engine->type() == QPaintEngine::Raster) {
      glyphs_.clear();
      glyph_positions_.clear();
      const double lift = (number_raw_.ascent() - number_raw_.descent()) / 2.0;
      std::array<std::size_t, 20> digits{};
      for (const auto i : visible_) {
        std::int64_t r = std::max<std::int64_t>(ranks_[i], 0);
        std::size_t n = 0;
        double width = 0.0;
        do {
          digits[n] = static_cast<std::size_t>(r % 10);
          width += digit_advance_[digits[n]];
          ++n;
          r /= 10;
        } while (r > 0 && n < digits.size());
        const QRectF& c = cells[i];
        double x = numbers_in_band_ ? c.left() + 0.1 * c.width() : c.center().x() - width / 2.0;
        const double y = (numbers_in_band_ ? c.top() + c.height() * kNumberBand / 2.0 : c.center().y()) + lift;
        while (n-- > 0) {
          glyphs_.push_back(digit_glyph_[digits[n]]);
          glyph_positions_.emplace_back(x, y);
          x += digit_advance_[digits[n]];
        }
      }
      QGlyphRun run;
      run.setRawFont(number_raw_);
      run.setRawData(glyphs_.data(), glyph_positions_.data(), static_cast<int>(glyphs_.size()));
      painter->drawGlyphRun(QPointF(0, 0), run);
    } else {
      painter->setFont(number_font_);
      for (const auto i : visible_) {
        if (numbers_in_band_) {
          const QRectF& c = cells[i];
          painter->drawText(QRectF(c.left() + 0.1 * c.width(), c.top(), 0.8 * c.width(), c.height() * kNumberBand),
                            Qt::AlignLeft | Qt::AlignVCenter, QString::number(ranks_[i]));
        } else {
          painter->drawText(cells[i], Qt::AlignCenter, QString::number(ranks_[i]));
        }
      }
    }
  }

  // Frame labels on their borders, and the axis legend above the mesh, once legible.
  int font_px = 0;
  for (const auto& label : labels_) {
    if (label.font_px * lod < kLegibleTextPx || !exposed.intersects(label.box)) continue;
    if (label.font_px != font_px) {
      font_px = label.font_px;
      QFont font = painter->font();
      font.setPixelSize(font_px);
      painter->setFont(font);
    }
    painter->fillRect(label.box, base);
    painter->setPen(text);
    painter->drawText(label.baseline, label.text);
  }
  if (!header_.isEmpty() && header_px_ * lod >= kLegibleTextPx && exposed.intersects(header_box_)) {
    QFont font = painter->font();
    font.setPixelSize(header_px_);
    painter->setFont(font);
    painter->setPen(text);
    painter->drawText(header_box_, Qt::AlignLeft | Qt::AlignVCenter, header_);
  }

  // Hover and selection on top.
  const QColor highlight = palette.color(QPalette::Highlight);
  if (hovered_ && hovered_ != selected_ && exposed.intersects(cell_update_rect(*hovered_))) {
    QColor hover = highlight;
    hover.setAlpha(170);
    painter->setPen(cosmetic(hover, 2.0));
    painter->drawRect(cells[*hovered_]);
  }
  if (selected_ && exposed.intersects(cell_update_rect(*selected_))) {
    painter->setPen(cosmetic(highlight, 3.0));
    painter->drawRect(cells[*selected_]);
  }
}

void MeshGridItem::paint_aggregated(QPainter* painter, const QRectF& exposed, double lod, const QPalette& palette) {
  const QColor base = palette.color(QPalette::Base);
  const QColor text = palette.color(QPalette::Text);
  // Host blocks: the gaps inside a host closed, half a device pixel left open on every side so neighbours part.
  const double inset = 0.5 / std::max(lod, 1e-6) - kGap / 2.0;
  const std::int32_t span = span_group();
  const bool sliced = !group_hosts_.empty();
  // Buckets: 0 and 1 plain (even and odd host), 2 local (every group on it inside it), 3 the span group's hosts.
  constexpr std::size_t kBuckets = 4;
  if (bucket_rects_.size() < kBuckets) bucket_rects_.resize(kBuckets);
  for (std::size_t b = 0; b < kBuckets; ++b) bucket_rects_[b].clear();
  std::vector<char>& on_span = span_mark_;
  on_span.assign(host_rects_.size(), 0);
  if (span >= 0) {
    for (const auto h : group_hosts_[static_cast<std::size_t>(span)]) on_span[static_cast<std::size_t>(h)] = 1;
  }
  for (std::size_t h = 0; h < host_rects_.size(); ++h) {
    const QRectF& r = host_rects_[h];
    if (!exposed.intersects(r)) continue;
    std::size_t bucket = h & 1U;
    if (sliced && on_span[h] != 0) {
      bucket = 3;
    } else if (sliced && host_local_[h]) {
      bucket = 2;
    }
    bucket_rects_[bucket].push_back(r.adjusted(inset, inset, -inset, -inset));
  }
  painter->setPen(Qt::NoPen);
  const QColor local = mix(base, palette.color(QPalette::Highlight), is_dark(palette) ? 0.45 : 0.3);
  const QColor colours[kBuckets] = {mix(base, text, 0.09), mix(base, text, 0.17), local,
                                    span >= 0 ? group_color(span, group_count_, is_dark(palette)) : local};
  for (std::size_t b = 0; b < kBuckets; ++b) {
    if (bucket_rects_[b].empty()) continue;
    painter->setBrush(colours[b]);
    painter->drawRects(bucket_rects_[b].data(), static_cast<int>(bucket_rects_[b].size()));
  }
  painter->setBrush(Qt::NoBrush);
  // The span: the group's hosts joined in the order of its ranks.
  if (span >= 0) {
    const auto& hosts = group_hosts_[static_cast<std::size_t>(span)];
    scratch_points_.clear();
    for (const auto h : hosts) scratch_points_.push_back(host_rects_[static_cast<std::size_t>(h)].center());
    painter->setPen(cosmetic(mix(colours[3], text, 0.45), 1.0));
    painter->drawPolyline(scratch_points_.data(), static_cast<int>(scratch_points_.size()));
  }
  // The emphasised group's hosts outlined.
  if (emphasised_ >= 0 && sliced) {
    scratch_rects_.clear();
    for (const auto h : group_hosts_[static_cast<std::size_t>(emphasised_)]) {
      const QRectF& r = host_rects_[static_cast<std::size_t>(h)];
      if (exposed.intersects(r)) scratch_rects_.push_back(r.adjusted(inset, inset, -inset, -inset));
    }
    painter->setPen(cosmetic(text, 2.0));
    if (!scratch_rects_.empty()) painter->drawRects(scratch_rects_.data(), static_cast<int>(scratch_rects_.size()));
  }
}

}  // namespace meshloom::app
