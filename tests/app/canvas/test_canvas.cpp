// The canvas: cell geometry and hit-testing, the frames of the nested grids, slice colouring against the
// engine's groups, emphasis, hover and click from simulated mouse events, and PNG / SVG export. Runs on the
// offscreen platform.
#define QTEST_QPA_MOUSE_HANDLING  // mouse moves go through the window system, as a real pointer's do
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QGraphicsScene>
#include <QImage>
#include <QPainter>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "canvas/canvas_export.hpp"
#include "grid_support.hpp"
#include "canvas/mesh_geometry.hpp"
#include "canvas/mesh_grid_item.hpp"
#include "canvas/mesh_view.hpp"
#include "meshloom/error.hpp"
#include "meshloom/mesh/device_mesh.hpp"
#include "mesh/slice.hpp"

using meshloom::DeviceMesh;
using meshloom::app::layout_mesh;
using meshloom::app::MeshGeometry;
using meshloom::app::MeshGridItem;
using meshloom::app::MeshView;
using meshloom::app::slice_groups;
using Names = std::vector<std::string>;

namespace {

std::int64_t product(const std::vector<std::int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
}

// The grid of a mesh as the window builds it: ranks by position, hosts of `per_host` devices.
using meshloom::app::testing::make_grid;

DeviceMesh torchtitan_mesh() {
  meshloom::MeshSpec spec;
  spec.shape = {2, 2, 4, 2};
  spec.names = {"pp", "dp_replicate", "dp_shard", "tp"};
  spec.flattened = {{"dp", {"dp_replicate", "dp_shard"}},
                    {"dp_shard_cp", {"dp_shard"}},
                    {"dp_cp", {"dp_replicate", "dp_shard"}}};
  return meshloom::build_mesh(spec, 32);
}

// Every pick of own axes in mesh order (each non-empty subsequence), then every flattened name alone.
std::vector<Names> every_pick(const DeviceMesh& mesh) {
  const Names& names = *mesh.names();
  std::vector<Names> picks;
  for (unsigned mask = 1; mask < (1U << names.size()); ++mask) {
    Names pick;
    for (std::size_t a = 0; a < names.size(); ++a) {
      if ((mask >> a) & 1U) pick.push_back(names[a]);
    }
    picks.push_back(pick);
  }
  for (const auto& f : mesh.flattened_names()) picks.push_back({f});
  return picks;
}

QString pick_text(const Names& pick) {
  QStringList parts;
  for (const auto& n : pick) parts << QString::fromStdString(n);
  return parts.join(QLatin1Char(','));
}

// The first two rects whose interiors overlap, or nullopt. Buckets of the largest side: a rect can only overlap
// those whose top-left lies in the 3 x 3 buckets around its own, so n rects of one size cost O(n log n), not n^2.
std::optional<std::pair<std::size_t, std::size_t>> overlapping_pair(const std::vector<QRectF>& rects) {
  double side = 1e-9;
  for (const auto& r : rects) side = std::max({side, r.width(), r.height()});
  const auto key = [side](const QRectF& r) {
    return std::pair<std::int64_t, std::int64_t>(static_cast<std::int64_t>(std::floor(r.left() / side)),
                                                 static_cast<std::int64_t>(std::floor(r.top() / side)));
  };
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::size_t>> buckets;
  for (std::size_t i = 0; i < rects.size(); ++i) buckets[key(rects[i])].push_back(i);
  for (std::size_t i = 0; i < rects.size(); ++i) {
    const auto [bx, by] = key(rects[i]);
    for (std::int64_t dx = -1; dx <= 1; ++dx) {
      for (std::int64_t dy = -1; dy <= 1; ++dy) {
        const auto it = buckets.find({bx + dx, by + dy});
        if (it == buckets.end()) continue;
        for (const auto j : it->second) {
          if (j > i && rects[i].intersects(rects[j])) return std::pair(i, j);
        }
      }
    }
  }
  return std::nullopt;
}

// What every layout must hold, checked without an O(n^2) scan: one cell per position inside the bounds, found
// by cell_at at its centre and corners and not just past its right and bottom edges (a gap or outside); no two
// cells overlapping; and for each outer axis one frame per block of the axes [0, axis], in row-major order, that
// holds exactly the cells of its block (the contiguous run of cells with that prefix: each inside it, and frames
// of one axis disjoint, so no other cell is).
void check_layout(const MeshGeometry& g, const QString& what) {
  const auto& shape = g.shape;
  const std::size_t n = shape.size();
  QVERIFY2(static_cast<std::int64_t>(g.cells.size()) == product(shape), qPrintable(what));
  for (std::size_t i = 0; i < g.cells.size(); ++i) {
    const QRectF& c = g.cells[i];
    const QString at = what + QStringLiteral(": cell %1").arg(i);
    QVERIFY2(g.bounds.contains(c), qPrintable(at));
    QVERIFY2(g.cell_at(c.center()) == std::optional<std::size_t>(i), qPrintable(at));
    QVERIFY2(g.cell_at(c.topLeft() + QPointF(0.01, 0.01)) == std::optional<std::size_t>(i), qPrintable(at));
    QVERIFY2(g.cell_at(c.bottomRight() - QPointF(0.01, 0.01)) == std::optional<std::size_t>(i), qPrintable(at));
    QVERIFY2(!g.cell_at(QPointF(c.right() + 0.5 * MeshGeometry::kGap, c.center().y())), qPrintable(at));
    QVERIFY2(!g.cell_at(QPointF(c.center().x(), c.bottom() + 0.5 * MeshGeometry::kGap)), qPrintable(at));
  }
  QVERIFY2(!g.cell_at(QPointF(-1, -1)), qPrintable(what));
  QVERIFY2(!g.cell_at(g.bounds.bottomRight() + QPointF(1, 1)), qPrintable(what));
  const auto cells_overlap = overlapping_pair(g.cells);
  QVERIFY2(!cells_overlap, qPrintable(what + QStringLiteral(": cells %1 and %2 overlap")
                                                 .arg(cells_overlap ? cells_overlap->first : 0)
                                                 .arg(cells_overlap ? cells_overlap->second : 0)));
  std::size_t next = 0;  // frames come outermost axis first
  for (std::size_t a = 0; a < n; ++a) {
    if (!g.is_outer(a)) continue;
    std::int64_t blocks = 1;
    for (std::size_t b = 0; b <= a; ++b) blocks *= shape[b];
    std::int64_t inner = 1;
    for (std::size_t b = a + 1; b < n; ++b) inner *= shape[b];
    QVERIFY2(next + static_cast<std::size_t>(blocks) <= g.frames.size(), qPrintable(what));
    std::vector<QRectF> rects;
    for (std::int64_t k = 0; k < blocks; ++k) {
      const auto& f = g.frames[next + static_cast<std::size_t>(k)];
      const QString at = what + QStringLiteral(": frame %1 of axis %2").arg(k).arg(a);
      QVERIFY2(f.axis == a && f.index == k % shape[a], qPrintable(at));
      QVERIFY2(g.bounds.contains(f.rect), qPrintable(at));
      for (std::int64_t i = k * inner; i < (k + 1) * inner; ++i) {
        QVERIFY2(f.rect.contains(g.cells[static_cast<std::size_t>(i)]), qPrintable(at));
      }
      rects.push_back(f.rect);
    }
    QVERIFY2(!overlapping_pair(rects), qPrintable(what + QStringLiteral(": frames of axis %1 overlap").arg(a)));
    next += static_cast<std::size_t>(blocks);
  }
  QVERIFY2(next == g.frames.size(), qPrintable(what + ": frames of an axis that is not outer"));
}

QString shape_text(const std::vector<std::int64_t>& shape) {
  QStringList parts;
  for (auto s : shape) parts << QString::number(s);
  return QStringLiteral("(") + parts.join(QStringLiteral(", ")) + QStringLiteral(")");
}

bool dark(const QPalette& p) { return p.color(QPalette::Window).lightness() < 128; }

QPalette dark_palette() {
  QPalette p;
  p.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
  p.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
  p.setColor(QPalette::AlternateBase, QColor(0x26, 0x26, 0x26));
  p.setColor(QPalette::Text, QColor(0xe0, 0xe0, 0xe0));
  p.setColor(QPalette::WindowText, QColor(0xe0, 0xe0, 0xe0));
  return p;
}

QByteArray read_all(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<unreadable>");
}

}  // namespace

class CanvasTest : public QObject {
  Q_OBJECT

private slots:
  void cell_at_finds_every_cell_and_no_gap() {
    for (const std::vector<std::int64_t>& shape : std::vector<std::vector<std::int64_t>>{
             {}, {5}, {3, 4}, {2, 3, 4}, {2, 3, 2, 4}, {4, 1, 3, 2}, {2, 2, 2, 2, 3}}) {
      const MeshGeometry g = layout_mesh(shape);
      QCOMPARE(static_cast<std::int64_t>(g.cells.size()), product(shape));
      for (std::size_t i = 0; i < g.cells.size(); ++i) {
        const QRectF& c = g.cells[i];
        QVERIFY(g.bounds.contains(c));
        QCOMPARE(g.cell_at(c.center()), std::optional<std::size_t>(i));
        QCOMPARE(g.cell_at(c.topLeft() + QPointF(0.01, 0.01)), std::optional<std::size_t>(i));
        QCOMPARE(g.cell_at(c.bottomRight() - QPointF(0.01, 0.01)), std::optional<std::size_t>(i));
        // Just past the right and bottom edges: a gap or outside, never a cell.
        QCOMPARE(g.cell_at(QPointF(c.right() + 0.5 * MeshGeometry::kGap, c.center().y())), std::nullopt);
        QCOMPARE(g.cell_at(QPointF(c.center().x(), c.bottom() + 0.5 * MeshGeometry::kGap)), std::nullopt);
      }
      QCOMPARE(g.cell_at(QPointF(-1, -1)), std::nullopt);
      QCOMPARE(g.cell_at(g.bounds.bottomRight() + QPointF(1, 1)), std::nullopt);
      // Gaps between the frames of the outer axes hold no cell either.
      for (const auto& f : g.frames) {
        QCOMPARE(g.cell_at(f.rect.topLeft() - QPointF(1, 1)), std::nullopt);
        QCOMPARE(g.cell_at(f.rect.bottomRight() + QPointF(1, 1)), std::nullopt);
      }
    }
    // The item answers the same, for a 3-D and a 4-D mesh.
    for (const auto& shape : std::vector<std::vector<std::int64_t>>{{2, 3, 4}, {2, 2, 4, 2}}) {
      const auto mesh = DeviceMesh::init(shape);
      std::unique_ptr<MeshGridItem> item(make_grid(mesh, 4));
      QCOMPARE(static_cast<std::int64_t>(item->cell_count()), mesh.size());
      for (std::size_t i = 0; i < item->cell_count(); ++i) {
        QCOMPARE(item->cell_at(item->geometry().cells[i].center()), std::optional<std::size_t>(i));
        QCOMPARE(item->rank_at(i), static_cast<std::int64_t>(i));
        QCOMPARE(item->host_at(i), static_cast<std::int64_t>(i) / 4);
      }
      QVERIFY(item->boundingRect().contains(item->geometry().bounds));
    }
  }

  void frames_tile_each_outer_axis() {
    struct Case {
      std::vector<std::int64_t> shape;
      std::map<std::size_t, std::size_t> frames;  // outer axis -> frame count
    };
    const std::vector<Case> cases{
        {{5}, {}},
        {{3, 4}, {}},
        {{2, 3, 4}, {{0, 2}}},
        {{2, 3, 2, 4}, {{0, 2}, {1, 6}}},
        {{2, 1, 3, 4}, {{0, 2}}},  // a size-1 axis tiles nothing
        {{8, 8, 8, 8}, {{0, 8}, {1, 64}}},
        {{2, 2, 2, 2, 3}, {{0, 2}, {1, 4}, {2, 8}}},
    };
    for (const auto& c : cases) {
      const MeshGeometry g = layout_mesh(c.shape);
      std::map<std::size_t, std::size_t> counts;
      for (const auto& f : g.frames) ++counts[f.axis];
      QCOMPARE(counts, c.frames);
      for (std::size_t a = 0; a < c.shape.size(); ++a) QCOMPARE(g.is_outer(a), c.frames.count(a) == 1);
      // Each frame holds exactly the cells of its block: the product of the inner axes, with the frame's index
      // along its axis; frames of one axis never overlap.
      const std::size_t n = c.shape.size();
      for (std::size_t k = 0; k < g.frames.size(); ++k) {
        const auto& f = g.frames[k];
        std::int64_t inner = 1;
        for (std::size_t b = f.axis + 1; b < n; ++b) inner *= c.shape[b];
        std::int64_t held = 0;
        for (std::size_t i = 0; i < g.cells.size(); ++i) {
          if (!f.rect.contains(g.cells[i])) continue;
          ++held;
          auto rest = static_cast<std::int64_t>(i);
          for (std::size_t b = n; b-- > f.axis + 1;) rest /= c.shape[b];
          QCOMPARE(rest % c.shape[f.axis], f.index);
        }
        QCOMPARE(held, inner);
        for (std::size_t j = k + 1; j < g.frames.size(); ++j) {
          if (g.frames[j].axis == f.axis) QVERIFY(!f.rect.intersects(g.frames[j].rect));
        }
      }
    }
  }

  void long_axes_wrap_into_grids_near_three_to_two() {
    // A long axis laid out in one row or column would be a strip whose cells vanish when fitted: it wraps into a
    // grid of its blocks, so the whole mesh stays within 1:3 .. 3:1 (3:2 is the aim; a third of the way to a
    // square either side of it is what a fitted view can show without most of it empty).
    struct Case {
      std::vector<std::int64_t> shape;
      std::size_t axis;      // the axis that wraps
      std::int64_t columns;  // its blocks to a row
    };
    const std::vector<Case> cases{
        {{128, 16, 1, 8}, 0, 16},  // Llama 3 405B (dp, pp, cp, tp): 16 x 8 blocks of pp 16 down x tp 8 across
        {{1024}, 0, 32},           // 1-D: a 32 x 32 grid of cells
        {{64, 8}, 0, 4},           // 4 x 16 framed rows of tp 8
        {{16384}, 0, 128},
        {{1024, 8}, 0, 16},
        {{3, 256, 8}, 1, 8},       // the next axis out (3) cannot square 256 tp rows: pp wraps, framed
        {{2, 100}, 1, 10},         // nor can 2 a row of 100: a 10 x 10 grid of cells, twice
    };
    for (const auto& c : cases) {
      const MeshGeometry g = layout_mesh(c.shape);
      const QString what = shape_text(c.shape);
      check_layout(g, what);
      if (QTest::currentTestFailed()) return;
      const double aspect = g.bounds.width() / g.bounds.height();
      QVERIFY2(aspect >= 1.0 / 3.0 && aspect <= 3.0, qPrintable(what + QStringLiteral(": aspect %1").arg(aspect)));
      QVERIFY2(g.wraps(c.axis), qPrintable(what));
      QCOMPARE(g.columns[c.axis], c.columns);
      QCOMPARE(g.rows(c.axis), (c.shape[c.axis] + c.columns - 1) / c.columns);
      // Blocks k and k + 1 of the wrapped axis side by side, block `columns` starting the next line below block 0.
      std::int64_t inner = 1;
      for (std::size_t b = c.axis + 1; b < c.shape.size(); ++b) inner *= c.shape[b];
      const auto first = [&](std::int64_t k) { return g.cells[static_cast<std::size_t>(k * inner)]; };
      QCOMPARE(first(1).top(), first(0).top());
      QVERIFY(first(1).left() > first(0).right());
      QCOMPARE(first(c.columns).left(), first(0).left());
      QVERIFY(first(c.columns).top() > first(0).bottom());
      // Its lines lie further apart than anything inside its blocks (unless it is the innermost axis: a grid of
      // cells), and the axes outside it further apart again, so the nesting still reads.
      for (std::size_t b = 0; b < c.shape.size(); ++b) {
        if (c.shape[b] <= 1 || b == c.axis) continue;
        QVERIFY2(b < c.axis ? g.gaps[b] > g.gaps[c.axis] : g.gaps[b] < g.gaps[c.axis], qPrintable(what));
      }
      QCOMPARE(g.is_outer(c.axis), g.levels[c.axis] >= 2);
    }
    // Llama: the inner block is unchanged (tp across, pp down); every dp block is framed.
    const MeshGeometry llama = layout_mesh({128, 16, 1, 8});
    QVERIFY(llama.cells[1].left() > llama.cells[0].right());
    QCOMPARE(llama.cells[8].left(), llama.cells[0].left());
    QVERIFY(llama.cells[8].top() > llama.cells[0].bottom());
    QVERIFY(llama.is_outer(0) && !llama.is_outer(1) && !llama.is_outer(3));
    QCOMPARE(llama.frames.size(), std::size_t{128});
    // (64, 8): the wrapped pp takes the outer pair of levels, so each tp row of 8 is framed and labelled.
    const MeshGeometry wide = layout_mesh({64, 8});
    QVERIFY(wide.is_outer(0));
    QCOMPARE(wide.frames.size(), std::size_t{64});
    // The 1-D 1,024: no frames, one plain grid.
    QVERIFY(layout_mesh({1024}).frames.empty());
  }

  void short_axes_stay_on_one_line() {
    // Rows and columns near enough to 3:2 do not wrap: what small meshes always looked like.
    for (const std::vector<std::int64_t>& shape : std::vector<std::vector<std::int64_t>>{
             {5}, {8}, {2, 4}, {4, 2}, {3, 4}, {32, 8}, {2, 3, 2, 4}, {8, 8, 8, 8}, {2, 2, 2, 2, 3},
             // A long line the next axis out squares by tiling it the other way stays a line: a grid of blocks.
             {16, 16, 8, 8}, {2, 64, 8}, {4, 64, 8}, {8, 32}}) {
      const MeshGeometry g = layout_mesh(shape);
      for (std::size_t a = 0; a < shape.size(); ++a) {
        QVERIFY2(!g.wraps(a), qPrintable(shape_text(shape)));
        QCOMPARE(g.columns[a], g.across[a] ? shape[a] : std::int64_t{1});
        QCOMPARE(g.rows(a), g.across[a] ? std::int64_t{1} : shape[a]);
      }
    }
    // A 1-D mesh of 8: one row.
    const MeshGeometry row = layout_mesh({8});
    for (std::size_t i = 1; i < row.cells.size(); ++i) {
      QCOMPARE(row.cells[i].top(), row.cells[0].top());
      QVERIFY(row.cells[i].left() > row.cells[i - 1].right());
    }
    // (2, 4) and (4, 2): a plain grid, the innermost axis across.
    for (const std::vector<std::int64_t>& shape : std::vector<std::vector<std::int64_t>>{{2, 4}, {4, 2}}) {
      const MeshGeometry g = layout_mesh(shape);
      const auto inner = static_cast<std::size_t>(shape[1]);
      QVERIFY(g.frames.empty());
      QVERIFY(g.cells[1].left() > g.cells[0].right());
      QCOMPARE(g.cells[inner].left(), g.cells[0].left());
      QVERIFY(g.cells[inner].top() > g.cells[0].bottom());
      QCOMPARE(g.bounds.width(), static_cast<double>(shape[1]) * 44.0 - 4.0);
      QCOMPARE(g.bounds.height(), static_cast<double>(shape[0]) * 44.0 - 4.0);
    }
  }

  void every_layout_holds_its_cells_and_frames() {
    // A sweep of 1-D, 2-D and nested shapes on both sides of the wrapping threshold, primes (no full grid) included.
    std::vector<std::vector<std::int64_t>> shapes;
    for (std::int64_t s = 1; s <= 80; ++s) shapes.push_back({s});
    for (const std::int64_t s : {97, 127, 128, 251, 256, 500, 4096}) shapes.push_back({s});
    for (std::int64_t s = 1; s <= 72; ++s) {
      shapes.push_back({s, 8});
      shapes.push_back({s, 4});
      shapes.push_back({s, 16, 1, 8});
    }
    for (const std::vector<std::int64_t>& shape : std::vector<std::vector<std::int64_t>>{
             {2, 64, 8}, {31, 2, 2, 16, 8}, {3, 1, 1000}, {1, 200, 1}, {7, 3, 60}, {2, 2, 2, 97}}) {
      shapes.push_back(shape);
    }
    for (const auto& shape : shapes) {
      const MeshGeometry g = layout_mesh(shape);
      check_layout(g, shape_text(shape));
      if (QTest::currentTestFailed()) return;
      for (std::size_t a = 0; a < shape.size(); ++a) {
        QVERIFY(g.columns[a] >= 1 && g.columns[a] <= std::max<std::int64_t>(shape[a], 1));
        QCOMPARE(g.rows(a), (shape[a] + g.columns[a] - 1) / g.columns[a]);
      }
    }
  }

  void the_legend_names_each_axis_and_its_direction() {
    const auto mesh = DeviceMesh::init({128, 16, 1, 8}, Names{"dp", "pp", "cp", "tp"});
    std::unique_ptr<MeshGridItem> item(make_grid(mesh, 8));
    QCOMPARE(item->legend(),
             QStringLiteral("dp 128 \u21b5 16 per row   pp 16 \u2193   cp 1   tp 8 \u2192"));
    const auto small = DeviceMesh::init({2, 4}, Names{"dp", "tp"});
    std::unique_ptr<MeshGridItem> plain(make_grid(small, 4));
    QCOMPARE(plain->legend(), QStringLiteral("dp 2 \u2193   tp 4 \u2192"));
    // The wrapped grid is hit-tested like any other: every cell's centre finds it through the item.
    for (std::size_t i = 0; i < item->cell_count(); i += 37) {
      QCOMPARE(item->cell_at(item->geometry().cells[i].center()), std::optional<std::size_t>(i));
    }
    QVERIFY(item->boundingRect().contains(item->geometry().bounds));
  }

  void slice_groups_match_the_engine_and_colour_every_group() {
    const std::vector<std::int64_t> permuted{5, 2, 7, 0, 3, 6, 1, 4};
    const std::vector<DeviceMesh> meshes{
        DeviceMesh::init({2, 2, 2}, Names{"dp", "cp", "tp"}),
        DeviceMesh::from_ranks({2, 2, 2}, permuted, Names{"dp", "cp", "tp"}),
        torchtitan_mesh(),
    };
    for (const auto& mesh : meshes) {
      QGraphicsScene scene;
      MeshGridItem* item = make_grid(mesh, 4);
      scene.addItem(item);
      scene.setSceneRect(item->geometry().bounds);
      // Where each rank is drawn: its position in the root's rank map.
      std::map<std::int64_t, std::size_t> cell_of;
      for (std::size_t i = 0; i < item->cell_count(); ++i) cell_of[item->rank_at(i)] = i;
      for (const auto& pick : every_pick(mesh)) {
        const QString what = QString::fromStdString(mesh.repr()) + " [" + pick_text(pick) + "]";
        const auto s = slice_groups(mesh, pick);
        const auto expected = mesh.slice(pick).instances();
        QCOMPARE(s.axes, pick);
        QCOMPARE(static_cast<std::int64_t>(s.groups.size()), expected.shape.front());
        std::vector<std::int64_t> flat;
        for (const auto& g : s.groups) flat.insert(flat.end(), g.begin(), g.end());
        QVERIFY2(flat == expected.values, qPrintable(what));
        if (pick.size() == 1) QVERIFY2(flat == mesh.groups(pick.front()).values, qPrintable(what));
        QCOMPARE(s.cell_group.size(), item->cell_count());

        const auto count = static_cast<std::int32_t>(s.groups.size());
        item->set_groups(s.cell_group, count);
        for (const QPalette& palette : {QPalette(), dark_palette()}) {
          scene.setPalette(palette);
          QImage image(qCeil(scene.sceneRect().width()), qCeil(scene.sceneRect().height()), QImage::Format_ARGB32);
          image.fill(Qt::transparent);
          {
            QPainter painter(&image);
            scene.render(&painter, QRectF(QPointF(0, 0), scene.sceneRect().size()), scene.sceneRect());
          }
          QSet<QString> colours;
          for (std::int32_t g = 0; g < count; ++g) {
            const QColor colour = MeshGridItem::group_color(g, count, dark(palette));
            QVERIFY(colour.isValid());
            colours.insert(colour.name());
            for (const auto rank : s.groups[static_cast<std::size_t>(g)]) {
              const std::size_t cell = cell_of.at(rank);
              QCOMPARE(item->group_of_cell(cell), g);
              QVERIFY2(item->cell_fill(cell, palette) == colour, qPrintable(what));
              // What is painted: a pixel inside the cell, clear of its number.
              const QPointF p = item->geometry().cells[cell].topLeft() + QPointF(4, 4) - scene.sceneRect().topLeft();
              QCOMPARE(QColor(image.pixel(p.toPoint())).name(), colour.name());
            }
          }
          QVERIFY2(colours.size() == count, qPrintable(what + ": two groups share a colour"));
        }
      }
      // Clearing the colouring: every cell plain again, hosts alternating.
      item->set_groups({}, 0);
      for (std::size_t i = 0; i < item->cell_count(); ++i) QCOMPARE(item->group_of_cell(i), -1);
      for (std::size_t i = 0; i < item->cell_count(); ++i) {
        const bool same_fill = item->cell_fill(i, QPalette()) == item->cell_fill(0, QPalette());
        QCOMPARE(same_fill, item->host_at(i) % 2 == item->host_at(0) % 2);
      }
    }
  }

  void bad_picks_carry_pytorchs_message() {
    const auto mesh = torchtitan_mesh();
    const auto message = [&](const Names& pick) -> std::string {
      try {
        (void)slice_groups(mesh, pick);
      } catch (const meshloom::Error& e) {
        return e.what();
      }
      return "<no error>";
    };
    const auto engine = [&](const Names& pick) -> std::string {
      try {
        (void)mesh.slice(pick);
      } catch (const meshloom::Error& e) {
        return e.what();
      }
      return "<no error>";
    };
    QCOMPARE(message({"tp", "pp"}),
             std::string("KeyError: Invalid mesh_dim_names ('tp', 'pp') specified. Mesh dim indices should be in "
                         "ascending order."));
    QCOMPARE(message({"tp", "tp"}), std::string("RuntimeError: Slicing overlapping dim_names ('tp', 'tp') is not allowed."));
    const std::string overlap = message({"dp", "dp_shard"});
    QVERIFY2(overlap.find("Slicing overlapping dim_names ('dp', 'dp_shard') is not allowed.") != std::string::npos,
             overlap.c_str());
    for (const Names& pick : std::vector<Names>{{"cp"}, {}, {"dp", "tp", "pp"}}) {
      QCOMPARE(message(pick), engine(pick));
      QVERIFY(message(pick) != "<no error>");
    }
  }

  void the_selected_group_is_emphasised() {
    const auto mesh = DeviceMesh::init({2, 2, 2}, Names{"dp", "cp", "tp"});
    std::unique_ptr<MeshGridItem> item(make_grid(mesh, 4));
    const auto s = slice_groups(mesh, {"tp"});
    const auto count = static_cast<std::int32_t>(s.groups.size());
    item->set_groups(s.cell_group, count);
    QCOMPARE(item->emphasised_group(), -1);
    item->set_emphasised_group(1);
    QCOMPARE(item->emphasised_group(), 1);
    const QPalette palette;
    for (std::size_t i = 0; i < item->cell_count(); ++i) {
      const auto g = item->group_of_cell(i);
      const QColor own = MeshGridItem::group_color(g, count, dark(palette));
      if (g == 1) {
        QCOMPARE(item->cell_fill(i, palette), own);
      } else {
        QVERIFY(item->cell_fill(i, palette) != own);  // faded
        QVERIFY(item->cell_fill(i, palette) != MeshGridItem::group_color(1, count, dark(palette)));
      }
    }
    item->set_emphasised_group(count);  // no such group
    QCOMPARE(item->emphasised_group(), -1);
    item->set_emphasised_group(2);
    item->set_groups(slice_groups(mesh, {"dp", "cp"}).cell_group, 2);  // fewer groups: the emphasis goes
    QCOMPARE(item->emphasised_group(), -1);
    item->set_selected_cell(3);
    QCOMPARE(item->selected_cell(), std::optional<std::size_t>(3));
    item->set_selected_cell(99);
    QCOMPARE(item->selected_cell(), std::nullopt);
    QVERIFY(!MeshGridItem::group_color(-1, 4, false).isValid());
    QVERIFY(!MeshGridItem::group_color(4, 4, false).isValid());
  }

  void hover_and_click_report_the_cell_under_the_mouse() {
    const auto mesh = DeviceMesh::init({2, 2, 2}, Names{"dp", "cp", "tp"});
    QGraphicsScene scene;
    MeshGridItem* item = make_grid(mesh, 4);
    scene.addItem(item);
    scene.setSceneRect(item->boundingRect().adjusted(-24, -24, 24, 24));
    MeshView view(&scene);
    view.resize(640, 480);
    view.set_grid(item);
    std::vector<std::optional<std::size_t>> hovered;
    std::vector<std::optional<std::size_t>> clicked;
    QObject::connect(&view, &MeshView::cell_hovered, [&](std::optional<std::size_t> c) { hovered.push_back(c); });
    QObject::connect(&view, &MeshView::cell_clicked, [&](std::optional<std::size_t> c) { clicked.push_back(c); });
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.fit();
    const auto at = [&](QPointF item_point) { return view.mapFromScene(item->mapToScene(item_point)); };
    for (const std::size_t cell : {std::size_t{0}, std::size_t{5}, std::size_t{7}, std::size_t{2}}) {
      const QPoint p = at(item->geometry().cells[cell].center());
      QTest::mouseMove(view.viewport(), p);
      QVERIFY(!hovered.empty());
      QCOMPARE(hovered.back(), std::optional<std::size_t>(cell));
      QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, p);
      QVERIFY(!clicked.empty());
      QCOMPARE(clicked.back(), std::optional<std::size_t>(cell));
    }
    // The gap between cells 0 and 1: hover leaves every cell, a click there reports no cell.
    const QRectF c0 = item->geometry().cells[0];
    const QPoint gap = at(QPointF(c0.right() + MeshGeometry::kGap / 2, c0.center().y()));
    QTest::mouseMove(view.viewport(), gap);
    QCOMPARE(hovered.back(), std::nullopt);
    const std::size_t clicks = clicked.size();
    QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, gap);
    QCOMPARE(clicked.size(), clicks + 1);
    QCOMPARE(clicked.back(), std::nullopt);
    // A drag pans and is no click.
    const QPoint from = at(item->geometry().cells[1].center());
    const QPoint to = from + QPoint(QApplication::startDragDistance() * 4, QApplication::startDragDistance() * 3);
    QTest::mousePress(view.viewport(), Qt::LeftButton, {}, from);
    QTest::mouseMove(view.viewport(), from + QPoint(2, 1));
    QTest::mouseMove(view.viewport(), to);
    QTest::mouseRelease(view.viewport(), Qt::LeftButton, {}, to);
    QCOMPARE(clicked.size(), clicks + 1);
    // Without a grid nothing is reported as a cell.
    view.set_grid(nullptr);
    QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, at(item->geometry().cells[3].center()));
    QCOMPARE(clicked.back(), std::nullopt);
  }

  void export_writes_png_and_svg_and_refuses_what_it_cannot_write() {
    const auto mesh = torchtitan_mesh();
    QGraphicsScene scene;
    MeshGridItem* item = make_grid(mesh, 8);
    scene.addItem(item);
    item->set_groups(slice_groups(mesh, {"dp"}).cell_group, 4);
    scene.setSceneRect(item->boundingRect().adjusted(-24, -24, 24, 24));
    QTemporaryDir tmp;
    QString error;

    const QString png = tmp.filePath(QStringLiteral("canvas.png"));
    QVERIFY2(meshloom::app::export_scene_png(scene, png, 2.0, &error), qPrintable(error));
    const QImage image(png);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), QSize(qCeil(scene.sceneRect().width() * 2.0), qCeil(scene.sceneRect().height() * 2.0)));
    // A selected (and a hovered) cell: the export shows the mesh, not the pointer; the selection stays on the canvas.
    item->set_selected_cell(3);
    item->set_hovered_cell(5);
    const QString selected_png = tmp.filePath(QStringLiteral("selected.png"));
    QVERIFY2(meshloom::app::export_scene_png(scene, selected_png, 2.0, &error), qPrintable(error));
    QCOMPARE(QImage(selected_png), image);
    QCOMPARE(item->selected_cell(), std::optional<std::size_t>(3));
    QCOMPARE(item->hovered_cell(), std::optional<std::size_t>(5));
    item->set_selected_cell(std::nullopt);
    item->set_hovered_cell(std::nullopt);

    const QString svg = tmp.filePath(QStringLiteral("canvas.svg"));
    QVERIFY2(meshloom::app::export_scene_svg(scene, svg, QStringLiteral("torchtitan-4d"), &error), qPrintable(error));
    const QByteArray text = read_all(svg);
    QVERIFY(text.contains("<svg"));
    QVERIFY(text.contains("</svg>"));
    QVERIFY(text.contains("torchtitan-4d"));

    // A directory that does not exist: refused, naming the path, nothing created.
    const QString nowhere = tmp.filePath(QStringLiteral("missing/dir/canvas.png"));
    error.clear();
    QVERIFY(!meshloom::app::export_scene_png(scene, nowhere, 1.0, &error));
    QVERIFY2(error.contains(nowhere), qPrintable(error));
    QVERIFY(!QFile::exists(nowhere));
    error.clear();
    QVERIFY(!meshloom::app::export_scene_svg(scene, nowhere, QString(), &error));
    QVERIFY2(error.contains(nowhere), qPrintable(error));

    // An existing file stays as it was when the export fails.
    const QByteArray before = read_all(png);
    error.clear();
    QVERIFY(!meshloom::app::export_scene_png(scene, png, 0.0, &error));  // no such scale
    QVERIFY2(error.contains(png), qPrintable(error));
    QCOMPARE(read_all(png), before);
    // A read-only directory (where permissions bind: not for a privileged user).
    const QString locked_dir = tmp.filePath(QStringLiteral("locked"));
    QVERIFY(QDir().mkpath(locked_dir));
    const QString locked = locked_dir + QStringLiteral("/canvas.svg");
    {
      QFile f(locked);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("old content");
    }
    QVERIFY(QFile::setPermissions(locked_dir, QFileDevice::ReadOwner | QFileDevice::ExeOwner));
    QFile probe(locked_dir + QStringLiteral("/probe"));
    const bool binding = !probe.open(QIODevice::WriteOnly);
    if (!binding) probe.remove();
    if (binding) {
      error.clear();
      QVERIFY(!meshloom::app::export_scene_svg(scene, locked, QString(), &error));
      QVERIFY2(error.contains(locked), qPrintable(error));
      QCOMPARE(read_all(locked), QByteArray("old content"));
      error.clear();
      QVERIFY(!meshloom::app::export_scene_png(scene, locked, 1.0, &error));
      QCOMPARE(read_all(locked), QByteArray("old content"));
    }
    QVERIFY(QFile::setPermissions(locked_dir, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));
    // A path that is a directory: refused, naming it, for any user.
    const QString dir_path = tmp.filePath(QStringLiteral("a_directory.png"));
    QVERIFY(QDir().mkpath(dir_path));
    error.clear();
    QVERIFY(!meshloom::app::export_scene_png(scene, dir_path, 1.0, &error));
    QVERIFY2(error.contains(dir_path), qPrintable(error));
    QVERIFY(QFileInfo(dir_path).isDir());
  }

  void paints_at_every_level_of_detail() {
    // Fitted (plain cells, frames), mid zoom (borders, host outlines) and close (numbers, labels, legend):
    // each paints without error and differs from an empty canvas.
    const auto mesh = DeviceMesh::init({2, 4, 4, 4}, Names{"pp", "dp", "cp", "tp"});
    QGraphicsScene scene;
    MeshGridItem* item = make_grid(mesh, 8);
    scene.addItem(item);
    item->set_groups(slice_groups(mesh, {"dp"}).cell_group, 32);
    item->set_emphasised_group(3);
    item->set_selected_cell(17);
    item->set_hovered_cell(18);
    const QRectF all = item->boundingRect();
    for (const double scale : {0.05, 0.2, 0.5, 1.0, 2.0}) {
      QImage image(qCeil(all.width() * scale), qCeil(all.height() * scale), QImage::Format_ARGB32_Premultiplied);
      image.fill(Qt::white);
      {
        QPainter painter(&image);
        scene.render(&painter, QRectF(QPointF(0, 0), all.size() * scale), all);
      }
      QImage blank(image.size(), image.format());
      blank.fill(Qt::white);
      QVERIFY(image != blank);
    }
  }
};

QTEST_MAIN(CanvasTest)
#include "test_canvas.moc"
