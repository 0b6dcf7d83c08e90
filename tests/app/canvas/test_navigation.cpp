// Huge meshes readable: the arrow keys' steps (step_cell: the nearest cell that way, at every cell of many
// layouts), the rulers (every cell inside the tick of its coordinate, in every band), the aggregated host view
// (host blocks hold exactly their hosts' cells; groups inside one host against groups that span hosts; what is
// painted), and the view around them: rulers labelled, the minimap while zoomed in, the legend of the aggregated
// view, arrow keys and Go to rank. Runs on the offscreen platform.
#include <QApplication>
#include <QGraphicsScene>
#include <QImage>
#include <QLabel>
#include <QPainter>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QtTest>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "canvas/canvas_paint.hpp"
#include "canvas/canvas_ruler.hpp"
#include "grid_support.hpp"
#include "canvas/mesh_geometry.hpp"
#include "canvas/mesh_grid_item.hpp"
#include "canvas/mesh_navigation.hpp"
#include "canvas/mesh_view.hpp"
#include "canvas/minimap.hpp"
#include "meshloom/mesh/device_mesh.hpp"
#include "mesh/slice.hpp"
#include "plan/plan_animation.hpp"
#include "shell/main_window.hpp"

using meshloom::DeviceMesh;
using meshloom::app::cell_coordinate;
using meshloom::app::layout_mesh;
using meshloom::app::MeshDirection;
using meshloom::app::MeshGeometry;
using meshloom::app::MeshGridItem;
using meshloom::app::MeshView;
using meshloom::app::step_cell;
using Shape = std::vector<std::int64_t>;
using Names = std::vector<std::string>;

namespace {

// Layouts of every kind: one line, grids, nested grids, size-1 axes, wrapped axes (1-D 1,024 and 100; dp 128 of
// Llama 3 405B), wrapped axes with a short last row (37), and wrapped axes inside outer ones.
const std::vector<Shape> kShapes{{1},        {6},          {2, 4},        {3, 1, 5, 2}, {2, 3, 4, 5},
                                 {1024},     {100},        {37},          {5, 37},      {7, 9},
                                 {4, 4, 4, 4}, {128, 16, 1, 8}, {2, 2, 2, 2, 2, 2}};

const QString kLlama = QStringLiteral(MESHLOOM_EXAMPLES_DIR "/llama3-405b.meshloom.json");

using meshloom::app::testing::make_grid;

DeviceMesh llama() { return DeviceMesh::init({128, 16, 1, 8}, Names{"dp", "pp", "cp", "tp"}); }

// Llama 3 405B's mesh in a view of `size`, shown and fitted (show() says whether it was exposed), its rulers painted.
struct FittedLlama {
  QGraphicsScene scene;
  MeshGridItem* grid = make_grid(llama(), 8);
  MeshView view{&scene};

  explicit FittedLlama(QSize size) {
    scene.addItem(grid);
    scene.setSceneRect(grid->boundingRect().adjusted(-24, -24, 24, 24));
    view.resize(size);
    view.set_grid(grid);
  }
  [[nodiscard]] bool show() {
    view.show();
    if (!QTest::qWaitForWindowExposed(&view)) return false;
    view.fit();
    (void)view.grab();  // paints the rulers
    return true;
  }
};

// For every cell, its nearest neighbour each way on its own row (same top) or column (same left), by brute order.
struct Neighbours {
  std::vector<std::optional<std::size_t>> left, right, up, down;
};
Neighbours neighbours(const MeshGeometry& g) {
  const std::size_t n = g.cells.size();
  Neighbours out{std::vector<std::optional<std::size_t>>(n), std::vector<std::optional<std::size_t>>(n),
                 std::vector<std::optional<std::size_t>>(n), std::vector<std::optional<std::size_t>>(n)};
  std::map<double, std::vector<std::size_t>> rows;
  std::map<double, std::vector<std::size_t>> cols;
  for (std::size_t i = 0; i < n; ++i) {
    rows[g.cells[i].top()].push_back(i);
    cols[g.cells[i].left()].push_back(i);
  }
  for (auto& [y, row] : rows) {
    std::sort(row.begin(), row.end(), [&](auto a, auto b) { return g.cells[a].left() < g.cells[b].left(); });
    for (std::size_t k = 0; k < row.size(); ++k) {
      if (k > 0) out.left[row[k]] = row[k - 1];
      if (k + 1 < row.size()) out.right[row[k]] = row[k + 1];
    }
  }
  for (auto& [x, col] : cols) {
    std::sort(col.begin(), col.end(), [&](auto a, auto b) { return g.cells[a].top() < g.cells[b].top(); });
    for (std::size_t k = 0; k < col.size(); ++k) {
      if (k > 0) out.up[col[k]] = col[k - 1];
      if (k + 1 < col.size()) out.down[col[k]] = col[k + 1];
    }
  }
  return out;
}

QString shape_text(const Shape& s) {
  QStringList parts;
  for (auto v : s) parts << QString::number(v);
  return QStringLiteral("(") + parts.join(QLatin1Char(',')) + QStringLiteral(")");
}

}  // namespace

class NavigationTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("MeshloomTest"));
    QCoreApplication::setApplicationName(QStringLiteral("MeshloomNavigationTest"));
    QSettings().clear();
  }

  // The defining property, at every cell of every layout: a step is the nearest cell that way on the cell's own
  // row (or column), and there is none exactly where the row (column) ends.
  void a_step_is_the_nearest_cell_that_way() {
    for (const Shape& shape : kShapes) {
      const MeshGeometry g = layout_mesh(shape);
      const Neighbours expect = neighbours(g);
      for (std::size_t c = 0; c < g.cells.size(); ++c) {
        const QString where = shape_text(shape) + QStringLiteral(" cell %1").arg(c);
        QVERIFY2(step_cell(g, c, MeshDirection::Right) == expect.right[c], qPrintable(where + " right"));
        QVERIFY2(step_cell(g, c, MeshDirection::Left) == expect.left[c], qPrintable(where + " left"));
        QVERIFY2(step_cell(g, c, MeshDirection::Down) == expect.down[c], qPrintable(where + " down"));
        QVERIFY2(step_cell(g, c, MeshDirection::Up) == expect.up[c], qPrintable(where + " up"));
      }
      QVERIFY(!step_cell(g, g.cells.size(), MeshDirection::Right));
    }
  }

  // With Shift, a step jumps a whole block of the next axis out: the same row, further along it, past every cell of
  // the block it leaves; a mesh with one axis that way has nowhere to jump.
  void an_outer_step_jumps_a_block() {
    for (const Shape& shape : kShapes) {
      const MeshGeometry g = layout_mesh(shape);
      for (std::size_t c = 0; c < g.cells.size(); ++c) {
        const QRectF& from = g.cells[c];
        if (const auto r = step_cell(g, c, MeshDirection::Right, true)) {
          QCOMPARE(g.cells[*r].top(), from.top());
          QVERIFY(g.cells[*r].left() > from.left());
          const auto near = step_cell(g, c, MeshDirection::Right);
          QVERIFY(near && g.cells[*r].left() >= g.cells[*near].left());
        }
        if (const auto d = step_cell(g, c, MeshDirection::Down, true)) {
          QCOMPARE(g.cells[*d].left(), from.left());
          QVERIFY(g.cells[*d].top() > from.top());
        }
      }
    }
    // (2, 4): dp down, tp across. From rank 1 Shift+Right has no outer axis across; Shift+Down has none either.
    const MeshGeometry g = layout_mesh({2, 4});
    QVERIFY(!step_cell(g, 1, MeshDirection::Right, true));
    QCOMPARE(step_cell(g, 3, MeshDirection::Down), std::optional<std::size_t>(7));
    QCOMPARE(step_cell(g, 3, MeshDirection::Right), std::nullopt);
  }

  // Every cell lies inside the tick of its own coordinate in every band: along the top the axis's coordinate (a
  // wrapped axis: its column), down the left the coordinate (a wrapped axis: its row's first index).
  void every_cell_lies_in_the_tick_of_its_coordinate() {
    for (const Shape& shape : kShapes) {
      const MeshGeometry g = layout_mesh(shape);
      const auto rulers = meshloom::app::mesh_rulers(g);
      std::size_t across = 0;
      std::size_t down = 0;
      for (std::size_t a = 0; a < shape.size(); ++a) {
        if (shape[a] <= 1) continue;
        across += g.wraps(a) || g.across[a] ? 1U : 0U;
        down += g.wraps(a) || !g.across[a] ? 1U : 0U;
      }
      QCOMPARE(rulers.top.size(), across);
      QCOMPARE(rulers.left.size(), down);
      for (const bool top : {true, false}) {
        for (const auto& band : top ? rulers.top : rulers.left) {
          for (std::size_t k = 1; k < band.ticks.size(); ++k) QVERIFY(band.ticks[k].from >= band.ticks[k - 1].to);
          const std::int64_t cols = g.columns[band.axis];
          for (std::size_t c = 0; c < g.cells.size(); ++c) {
            const std::int64_t v = cell_coordinate(g, c)[band.axis];
            const std::int64_t want = !band.wrapped ? v : top ? v % cols : (v / cols) * cols;
            const double lo = top ? g.cells[c].left() : g.cells[c].top();
            const double hi = top ? g.cells[c].right() : g.cells[c].bottom();
            const auto t = std::upper_bound(band.ticks.begin(), band.ticks.end(), lo,
                                            [](double x, const auto& tick) { return x < tick.from; });
            QVERIFY2(t != band.ticks.begin(), qPrintable(shape_text(shape) + QStringLiteral(" cell %1").arg(c)));
            const auto& tick = *std::prev(t);
            QVERIFY2(tick.from <= lo && hi <= tick.to + 1e-9 && tick.index == want,
                     qPrintable(shape_text(shape) + QStringLiteral(" cell %1 axis %2").arg(c).arg(band.axis)));
          }
        }
      }
    }
    const MeshGeometry g = layout_mesh({128, 16, 1, 8});
    const auto rulers = meshloom::app::mesh_rulers(g);
    QCOMPARE(rulers.top.front().axis, std::size_t{0});  // dp, wrapped 16 to a row: "+0" ... "+15" along the top
    QCOMPARE(meshloom::app::tick_text(rulers.top.front(), rulers.top.front().ticks[3], true), std::string("+3"));
    QCOMPARE(meshloom::app::tick_text(rulers.left.front(), rulers.left.front().ticks[2], false), std::string("32"));
  }

  // Host blocks hold exactly the cells of their host; hosts that are not one rectangle keep their cells.
  void hosts_aggregate_into_blocks() {
    const DeviceMesh mesh = llama();
    std::unique_ptr<MeshGridItem> grid(make_grid(mesh, 8));
    QVERIFY(grid->aggregates_hosts());
    QCOMPARE(grid->host_blocks().size(), std::size_t{2048});
    std::vector<int> held(grid->host_blocks().size(), 0);
    for (std::size_t c = 0; c < grid->cell_count(); ++c) {
      const auto b = static_cast<std::size_t>(grid->host_block_of(c));
      QVERIFY(grid->host_blocks()[b].contains(grid->geometry().cells[c]));
      QCOMPARE(grid->host_block_of(c), grid->host_block_of(static_cast<std::size_t>(grid->rank_at(c) / 8 * 8)));
      ++held[b];
    }
    QVERIFY(std::all_of(held.begin(), held.end(), [](int n) { return n == 8; }));
    QVERIFY(grid->aggregated_at(4.0 / MeshGeometry::kCell));
    QVERIFY(!grid->aggregated_at(20.0 / MeshGeometry::kCell));

    // 3 devices per host on (2, 4): host 1 holds ranks 3, 4, 5, an L across two rows: no blocks, cells at any zoom.
    std::unique_ptr<MeshGridItem> odd(make_grid(DeviceMesh::init({2, 4}, Names{"dp", "tp"}), 3));
    QVERIFY(!odd->aggregates_hosts());
    QVERIFY(!odd->aggregated_at(0.01));
    QVERIFY(odd->aggregate_legend().isEmpty());
    // One rank per host: nothing to aggregate.
    std::unique_ptr<MeshGridItem> single(make_grid(DeviceMesh::init({2, 4}, Names{"dp", "tp"}), 1));
    QVERIFY(!single->aggregates_hosts());
  }

  // A slice whose groups lie inside hosts is told as such; a slice whose groups span hosts shows one group joined
  // (the emphasised one, else group 0), and the legend says which.
  void the_aggregated_view_tells_how_groups_sit_on_hosts() {
    const DeviceMesh mesh = llama();
    std::unique_ptr<MeshGridItem> grid(make_grid(mesh, 8));
    QVERIFY(grid->aggregate_legend().startsWith(QStringLiteral("One block per host (up to 8 ranks)")));
    auto tp = meshloom::app::slice_groups(mesh, {"tp"});
    grid->set_groups(tp.cell_group, static_cast<std::int32_t>(tp.groups.size()));
    QCOMPARE(grid->span_group(), -1);
    QVERIFY2(grid->aggregate_legend().contains(QStringLiteral("Each of the slice's 2,048 groups lies inside one host")),
             qPrintable(grid->aggregate_legend()));
    auto dp = meshloom::app::slice_groups(mesh, {"dp"});
    grid->set_groups(dp.cell_group, static_cast<std::int32_t>(dp.groups.size()));
    QCOMPARE(grid->span_group(), 0);
    QVERIFY2(grid->aggregate_legend().contains(QStringLiteral("128 groups span 128 hosts each; group 0")),
             qPrintable(grid->aggregate_legend()));
    grid->set_emphasised_group(5);
    QCOMPARE(grid->span_group(), 5);
    QVERIFY(grid->aggregate_legend().contains(QStringLiteral("group 5 is drawn")));
  }

  // What the aggregated view paints: a host of the span group in the group's colour, a host of no shown group in
  // the plain host shading, a host whose groups are all inside it in the one local tint.
  void the_aggregated_view_paints_hosts_by_their_groups() {
    const DeviceMesh mesh = DeviceMesh::init({4, 4, 8}, Names{"dp", "pp", "tp"});
    QGraphicsScene scene;
    auto* grid = make_grid(mesh, 8);
    scene.addItem(grid);
    const double k = 6.0 / MeshGeometry::kCell;  // 6 px per cell: aggregated
    QVERIFY(grid->aggregated_at(k));
    const QRectF bounds = grid->geometry().bounds;
    const auto render = [&] {
      QImage image((bounds.size() * k).toSize() + QSize(2, 2), QImage::Format_ARGB32_Premultiplied);
      image.fill(Qt::white);
      QPainter p(&image);
      scene.render(&p, QRectF(QPointF(0, 0), bounds.size() * k), bounds, Qt::KeepAspectRatio);
      return image;
    };
    // The share of a host block's pixels (along a line a quarter down, over its middle 60%) of one colour: the
    // span's line runs through host centres, so most of a host, not all of it, is its fill.
    const auto share = [&](const QImage& image, std::int32_t host, const QColor& colour) {
      const QRectF r = grid->host_blocks()[static_cast<std::size_t>(host)];
      int same = 0;
      int pixels = 0;
      for (double x = r.left() + 0.2 * r.width(); x < r.right() - 0.2 * r.width(); x += 1.0 / k) {
        const QPoint p = ((QPointF(x, r.center().y() - 0.25 * r.height()) - bounds.topLeft()) * k).toPoint();
        ++pixels;
        same += image.pixelColor(p).rgb() == colour.rgb() ? 1 : 0;
      }
      return pixels == 0 ? 0.0 : static_cast<double>(same) / pixels;
    };
    const QPalette palette = scene.palette();
    auto dp = meshloom::app::slice_groups(mesh, {"dp"});
    grid->set_groups(dp.cell_group, static_cast<std::int32_t>(dp.groups.size()));
    const std::int32_t span = grid->span_group();
    QCOMPARE(span, 0);
    QImage image = render();
    const std::int32_t on_span = grid->host_block_of(0);  // rank 0 is in dp group 0
    const std::int32_t off_span = grid->host_block_of(8);  // ranks 8..15: pp 1, in other groups
    const QColor span_colour = MeshGridItem::group_color(span, static_cast<std::int32_t>(dp.groups.size()), false);
    QVERIFY(share(image, on_span, span_colour) > 0.5);
    const QColor plain = meshloom::app::mix(palette.color(QPalette::Base), palette.color(QPalette::Text),
                                            (off_span & 1) != 0 ? 0.17 : 0.09);
    QVERIFY(share(image, off_span, plain) > 0.5);
    auto tp = meshloom::app::slice_groups(mesh, {"tp"});
    grid->set_groups(tp.cell_group, static_cast<std::int32_t>(tp.groups.size()));
    image = render();
    const QColor local = meshloom::app::mix(palette.color(QPalette::Base), palette.color(QPalette::Highlight), 0.3);
    QVERIFY(share(image, off_span, local) > 0.5);
    QVERIFY(share(image, on_span, local) > 0.5);
  }

  // The view: rulers labelled with axis names and coordinates, the legend while hosts are blocks, the minimap
  // while part of the mesh is out of view, centring a cell.
  void the_view_shows_rulers_minimap_and_legend() {
    FittedLlama fitted(QSize(1000, 700));
    QVERIFY(fitted.show());
    MeshView& view = fitted.view;
    MeshGridItem* grid = fitted.grid;
    QCOMPARE(view.top_ruler()->band_count(), 2);   // dp (wrapped: its columns) and tp
    QCOMPARE(view.left_ruler()->band_count(), 2);  // dp (its rows) and pp
    const auto& top = view.top_ruler()->drawn_labels();
    QVERIFY(!top[0].isEmpty() && !top[1].isEmpty());
    // Across, the axis name stands alone left of the first number (it used to lead it, "tp 0", and crowd out the
    // first group's 4); down, it leads the first label.
    QCOMPARE(top[0].mid(0, 2), (QStringList{QStringLiteral("dp"), QStringLiteral("+0")}));
    QCOMPARE(top[1].mid(0, 3), (QStringList{QStringLiteral("tp"), QStringLiteral("0"), QStringLiteral("4")}));
    const auto& left = view.left_ruler()->drawn_labels();
    QCOMPARE(left[0].front(), QStringLiteral("dp 0"));
    QCOMPARE(left[1].front(), QStringLiteral("pp 0"));
    QVERIFY(left[0].contains(QStringLiteral("112")));  // the last row of dp: every row labelled at fit
    // Labels too narrow for every block repeat alike in every group: every d-th index for a divisor d of the band's
    // period (tp's 8: 0, 4, 0, 4, ..., not 0, 5 with the next host's 0 crowded out), and evenly along the wrapped dp
    // (+0, +2, ... sized by "+14" as drawn, not by "14", which dropped +11, +13 and +15 but kept +10 and +12).
    // (After the axis name: from the first number on.)
    const auto expect_every_dth = [](const QStringList& labels, int period) {
      std::vector<int> v;
      for (const QString& label : labels.mid(1)) v.push_back(label.toInt());  // "+2" reads 2
      QVERIFY(v.size() >= 3);
      const int d = (v[1] - v[0] + period) % period == 0 ? period : (v[1] - v[0] + period) % period;
      const QString all = labels.join(QLatin1Char(' '));
      QVERIFY2(period % d == 0 && v[0] % d == 0, qPrintable(all));
      for (std::size_t i = 1; i < v.size(); ++i) QVERIFY2(v[i] == (v[i - 1] + d) % period, qPrintable(all));
    };
    expect_every_dth(top[1], 8);
    expect_every_dth(top[0], 16);
    // Fitted, 16,384 ranks: hosts are blocks, the legend says so; the whole mesh is in view: no minimap.
    QVERIFY(grid->aggregated_at(view.transform().m11()));
    QVERIFY(view.zoom_legend()->isVisible());
    QVERIFY(view.zoom_legend()->text().startsWith(QStringLiteral("One block per host")));
    // Fitted, the mesh keeps clear of the legend (a band along the bottom).
    const QRect mesh_px = view.mapFromScene(grid->sceneBoundingRect()).boundingRect();
    QVERIFY(!mesh_px.intersects(view.zoom_legend()->geometry().translated(-view.viewport()->pos())));
    QVERIFY(!view.minimap()->isVisible());
    // Centred on rank 1000, zoomed to its number: no legend, the minimap with the part in view outlined.
    std::size_t cell = 0;
    while (grid->rank_at(cell) != 1000) ++cell;
    view.centre_on_cell(cell);
    QVERIFY(view.transform().m11() * MeshGeometry::kCell >= MeshView::kCentreCellPx - 1e-9);
    const QPoint at = view.mapFromScene(grid->geometry().cells[cell].center());
    QVERIFY(std::abs(at.x() - view.viewport()->width() / 2) <= 2 && std::abs(at.y() - view.viewport()->height() / 2) <= 2);
    QVERIFY(!view.zoom_legend()->isVisible());
    QVERIFY(view.minimap()->isVisible());
    const QRectF outline = view.minimap()->viewport_outline();
    QVERIFY(QRectF(view.minimap()->rect()).contains(outline));
    QVERIFY(outline.width() < view.minimap()->width() / 4.0);
    (void)view.grab();
    const auto& zoomed = view.top_ruler()->drawn_labels();
    QVERIFY(zoomed[1].size() >= 8);  // each tp block labelled once they are 48 px wide
    view.fit();
    QVERIFY(!view.minimap()->isVisible());
  }

  // A wrapped axis' rows down the left, shorter than a line of text: thinned to every d-th row for a divisor d of the
  // rows (Llama's dp: 8 rows of 16), labelled evenly; their indices step by 16, which made the count they repeat over
  // 113 (a prime) and left only "dp 0".
  void wrapped_rows_thin_evenly() {
    FittedLlama fitted(QSize(420, 150));  // rows of about 10 px
    QVERIFY(fitted.show());
    const MeshView& view = fitted.view;
    const QStringList dp = view.left_ruler()->drawn_labels()[0];
    QVERIFY2(dp.size() >= 2, qPrintable(dp.join(QLatin1Char(' '))));
    QCOMPARE(dp.front(), QStringLiteral("dp 0"));
    std::vector<int> rows{0};
    for (const QString& label : dp.mid(1)) rows.push_back(label.toInt() / 16);
    const int d = rows[1] - rows[0];
    QVERIFY2(d >= 2 && 8 % d == 0, qPrintable(dp.join(QLatin1Char(' '))));  // thinned, to a divisor of 8
    for (std::size_t i = 1; i < rows.size(); ++i) QVERIFY2(rows[i] == rows[i - 1] + d, qPrintable(dp.join(QLatin1Char(' '))));
  }

  // Past a group: a band of several groups too narrow to label every group labels each group's first block, or
  // every 2nd, 5th, 10th, ... group's, evenly (it labelled the 0 of whichever groups had room after the last label).
  void bands_of_many_groups_thin_by_whole_groups() {
    FittedLlama fitted(QSize(420, 150));
    QVERIFY(fitted.show());
    const MeshView& view = fitted.view;
    // tp across: 8 blocks a group, under dp's 16 columns.
    const std::vector<std::int64_t>& ticks = view.top_ruler()->drawn_ticks()[1];
    QString all;
    for (const auto t : ticks) all += QString::number(t) + QLatin1Char(' ');
    QVERIFY2(ticks.size() >= 3, qPrintable(all));
    const std::int64_t stride = ticks[1] - ticks[0];
    QVERIFY2(stride % 8 == 0 && stride > 8, qPrintable(all));  // past one group
    std::int64_t groups = stride / 8;
    while (groups % 10 == 0) groups /= 10;
    QVERIFY2(groups == 1 || groups == 2 || groups == 5, qPrintable(all));
    QVERIFY2(ticks[0] % stride == 0, qPrintable(all));
    for (std::size_t i = 1; i < ticks.size(); ++i) QVERIFY2(ticks[i] - ticks[i - 1] == stride, qPrintable(all));
    for (const QString& label : view.top_ruler()->drawn_labels()[1].mid(1)) QCOMPARE(label, QStringLiteral("0"));
  }

  // Arrow keys move the selection (Shift: a block of the next axis out) while a cell is selected; without a
  // selection, or with keyboard navigation off, the view leaves them to the window.
  void arrow_keys_move_the_selection() {
    QGraphicsScene scene;
    const DeviceMesh mesh = DeviceMesh::init({2, 2, 4}, Names{"pp", "dp", "tp"});
    auto* grid = make_grid(mesh, 4);
    scene.addItem(grid);
    MeshView view(&scene);
    view.resize(600, 400);
    view.set_grid(grid);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QSignalSpy chosen(&view, &MeshView::cell_clicked);
    QObject::connect(&view, &MeshView::cell_clicked, &view, [grid](std::optional<std::size_t> c) { grid->set_selected_cell(c); });
    QTest::keyClick(&view, Qt::Key_Right);
    QCOMPARE(chosen.count(), 0);  // nothing selected: not the view's key
    grid->set_selected_cell(0);
    QTest::keyClick(&view, Qt::Key_Right);
    QCOMPARE(grid->selected_cell(), step_cell(grid->geometry(), 0, MeshDirection::Right));
    QCOMPARE(grid->rank_at(*grid->selected_cell()), std::int64_t{1});
    QTest::keyClick(&view, Qt::Key_Down);
    QCOMPARE(grid->rank_at(*grid->selected_cell()), std::int64_t{5});  // dp 1: drawn down
    // (dp, tp) is 4 x 2 cells, so pp runs down too: Shift+Down jumps a pp block (dp and tp kept); no axis out of
    // tp runs across, so Shift+Right stays.
    QTest::keyClick(&view, Qt::Key_Down, Qt::ShiftModifier);
    QCOMPARE(cell_coordinate(grid->geometry(), *grid->selected_cell()), (std::vector<std::int64_t>{1, 1, 1}));
    QTest::keyClick(&view, Qt::Key_Right, Qt::ShiftModifier);
    QCOMPARE(cell_coordinate(grid->geometry(), *grid->selected_cell()), (std::vector<std::int64_t>{1, 1, 1}));
    const qsizetype before = chosen.count();
    view.set_keyboard_navigation(false);
    QTest::keyClick(&view, Qt::Key_Left);
    QCOMPARE(chosen.count(), before);
  }

  // In the window: with a rank selected, Left and Right move the selection, not the animation; with none (and in
  // presentation mode), they step the animation as the Play menu says.
  void arrows_move_the_selection_or_step_the_animation() {
    meshloom::app::MainWindow w;
    QVERIFY2(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/default.meshloom.json")), qPrintable(w.last_error()));
    w.show();
    w.activateWindow();
    if (!QTest::qWaitForWindowActive(&w)) QSKIP("this platform does not activate windows");
    auto* anim = w.animation();
    QVERIFY(anim->has_plan() && anim->frame_count() > 1);
    auto* view = w.findChild<MeshView*>();
    QVERIFY(w.go_to_rank(0));
    QTRY_COMPARE(QApplication::focusWidget(), static_cast<QWidget*>(view));
    MeshGridItem* grid = nullptr;
    for (auto* item : view->scene()->items()) {
      if (auto* g = dynamic_cast<MeshGridItem*>(item)) grid = g;
    }
    QVERIFY(grid != nullptr);
    const int frame = anim->current();
    QTest::keyClick(view, Qt::Key_Right);
    QCOMPARE(grid->rank_at(*grid->selected_cell()), std::int64_t{1});
    QCOMPARE(anim->current(), frame);
    w.select_rank(std::nullopt);
    QTest::keyClick(view, Qt::Key_Right);
    QCOMPARE(anim->current(), frame + 1);
    QTest::keyClick(view, Qt::Key_Left);
    QCOMPARE(anim->current(), frame);
  }

  // View > Go to rank: selects and centres a rank of the mesh; a rank outside it is refused with the reason.
  void go_to_rank_selects_and_centres() {
    meshloom::app::MainWindow w;
    QVERIFY2(w.open_design(kLlama), qPrintable(w.last_error()));
    w.resize(1600, 1000);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(!w.go_to_rank(16384));
    QVERIFY2(w.last_error().contains(QStringLiteral("16384")) && w.last_error().contains(QStringLiteral("16383")),
             qPrintable(w.last_error()));
    QVERIFY2(w.go_to_rank(1000), qPrintable(w.last_error()));
    auto* view = w.findChild<MeshView*>();
    QVERIFY(view != nullptr);
    QVERIFY(view->transform().m11() * MeshGeometry::kCell >= MeshView::kCentreCellPx - 1e-9);
    const auto items = view->scene()->items();
    MeshGridItem* grid = nullptr;
    for (auto* item : items) {
      if (auto* g = dynamic_cast<MeshGridItem*>(item)) grid = g;
    }
    QVERIFY(grid != nullptr && grid->selected_cell());
    QCOMPARE(grid->rank_at(*grid->selected_cell()), std::int64_t{1000});
    QVERIFY(view->minimap()->isVisible());
    // The shortcut is Go to rank's alone.
    int owners = 0;
    for (const QAction* a : w.findChildren<QAction*>()) owners += a->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_G) ? 1 : 0;
    QCOMPARE(owners, 1);
  }
};

QTEST_MAIN(NavigationTest)
#include "test_navigation.moc"
