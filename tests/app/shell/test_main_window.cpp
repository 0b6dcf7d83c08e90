// The main window over the bundled examples: every rank drawn once, at the right cell, and bad files refused
// without losing what is shown; the current plan animated under the canvas (bar, captions, block overlay) and
// --step screenshots. Runs on the offscreen platform.
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <csignal>

#include <QDir>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

#include <QCheckBox>
#include <QListView>
#include <QSlider>
#include <QTableView>
#include <QTreeWidget>
#include <QRegularExpression>
#include <QItemSelectionModel>
#include <QLabel>
#include <QToolButton>

#include <QAction>
#include <QDockWidget>
#include <QMenu>
#include <QMenuBar>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>

#include "plan/animation_bar.hpp"
#include "canvas/block_overlay_item.hpp"
#include "shell/main_window.hpp"
#include "costs/costs_panel.hpp"
#include "advisor/advisor_panel.hpp"
#include "plan/plan_animation.hpp"
#include "plan/plan_model.hpp"
#include "plan/redistribution_panel.hpp"
#include "meshloom/design/export.hpp"
#include "meshloom/mesh/device_mesh.hpp"
#include "canvas/mesh_geometry.hpp"
#include "canvas/mesh_grid_item.hpp"
#include "canvas/mesh_view.hpp"
#include "canvas/tensor_key.hpp"
#include "mesh/mesh_panel.hpp"
#include "document/design_document.hpp"

using meshloom::app::MainWindow;
using meshloom::app::PlanAnimation;
using meshloom::app::PlanModel;

namespace {

// The overlay shows frame k of the animation, cell by cell.
bool overlay_shows(const MainWindow& w, int k) {
  const auto* overlay = w.overlay();
  const PlanAnimation* anim = w.animation();
  if (overlay == nullptr || !overlay->has_frame()) return false;
  const auto& f = anim->frame(k);
  for (std::size_t c = 0; c < overlay->cell_count(); ++c) {
    if (overlay->filled_blocks(c) != f.blocks_of(c, anim->grid().block_count)) return false;
    if (overlay->outline_group(c) != f.group[c]) return false;
  }
  return true;
}

// The canvas's share of the window's area (the MeshView alone, without the animation bar under it).
double canvas_share(const MainWindow& w) {
  const QSize canvas = w.view()->size();
  return static_cast<double>(canvas.width()) * canvas.height() / (static_cast<double>(w.width()) * w.height());
}

QDockWidget* dock(const MainWindow& w, const char* name) {
  return w.findChild<QDockWidget*>(QString::fromLatin1(name));
}

// The bottom plan area's docks are all shown or all hidden, as `shown` says.
bool plan_area_is(const MainWindow& w, bool shown) {
  for (const char* name : {"redistribution_dock", "costs_dock", "advisor_dock"}) {
    if (dock(w, name)->isVisible() != shown) return false;
  }
  return w.plan_area_visible() == shown && w.plan_area_action()->isChecked() == shown;
}

// Gives the current tensor (of a 3-axis mesh) a plan of two steps or more: sharded on two axes, gathered on all.
bool show_a_multi_step_plan(MainWindow& w) {
  auto* panel = w.redistribution_panel();
  return panel->set_source(QStringLiteral("S(0)S(1)R")) && panel->set_target(QStringLiteral("RRR")) &&
         w.animation()->step_count() >= 2;
}

// A window at `size` (the offscreen screen is smaller than the sizes tried: set explicitly), shown and laid out.
void show_at(MainWindow& w, QSize size) {
  w.resize(size);
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  QCoreApplication::processEvents();
  QCOMPARE(w.size(), size);
}

// The View menu's action labelled `text` (with its mnemonic).
QAction* view_action(const MainWindow& w, const QString& text) {
  for (QAction* menu : w.menuBar()->actions()) {
    if (menu->text() != QLatin1String("&View")) continue;
    for (QAction* a : menu->menu()->actions()) {
      if (a->text() == text) return a;
    }
  }
  return nullptr;
}

}  // namespace

class MainWindowTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // settings and autosaves in ~/.qttest
    QCoreApplication::setOrganizationName(QStringLiteral("MeshloomTest"));
    QCoreApplication::setApplicationName(QStringLiteral("MeshloomMainWindowTest"));
    QSettings().remove(QStringLiteral("window"));  // no layout left by an earlier run
  }

  void the_canvas_takes_most_of_a_fresh_window() {
    // The first window fits the screen it opens on.
    {
      MainWindow w;
      const QSize available = w.screen()->availableGeometry().size();
      QVERIFY2(w.width() <= available.width() && w.height() <= available.height(),
               qPrintable(QStringLiteral("%1x%2 on %3x%4").arg(w.width()).arg(w.height()).arg(available.width()).arg(available.height())));
    }
    for (const QSize size : {QSize(1280, 800), QSize(1600, 1000)}) {
      MainWindow w;
      QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/torchtitan-4d.meshloom.json")));
      show_at(w, size);
      QVERIFY2(canvas_share(w) >= 0.6, qPrintable(QStringLiteral("%1x%2: canvas %3x%4, %5 of the window")
                                                      .arg(size.width()).arg(size.height())
                                                      .arg(w.view()->width()).arg(w.view()->height())
                                                      .arg(canvas_share(w))));
      QVERIFY(plan_area_is(w, false));
      QVERIFY(dock(w, "mesh_dock")->isVisible());
      // Nothing ticked, nothing hovered: the Slice and Rank docks say so in a line, with no empty list or table.
      QVERIFY(!dock(w, "slice_dock")->findChild<QListView*>()->isVisible());
      QVERIFY(!dock(w, "rank_dock")->findChild<QTreeWidget*>()->isVisible());
      w.set_slice({"dp_shard"});
      w.select_rank(3);
      QVERIFY(dock(w, "slice_dock")->findChild<QListView*>()->isVisible());
      QVERIFY(dock(w, "rank_dock")->findChild<QTreeWidget*>()->isVisible());
    }
  }

  void the_plan_area_comes_up_on_demand() {
    MainWindow w;
    QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/pp-dp-tp-3d.meshloom.json")));
    show_at(w, QSize(1280, 800));
    const double share = canvas_share(w);
    QAction* toggle = view_action(w, QStringLiteral("&Plan area"));
    QVERIFY(toggle != nullptr);
    QCOMPARE(toggle, w.plan_area_action());
    QCOMPARE(toggle->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_J));
    QVERIFY(plan_area_is(w, false));
    toggle->trigger();
    QCoreApplication::processEvents();
    QVERIFY(plan_area_is(w, true));
    // It opens at a useful height, under the canvas, and gives it back when toggled off.
    QVERIFY2(dock(w, "redistribution_dock")->height() >= 200, qPrintable(QString::number(dock(w, "redistribution_dock")->height())));
    QVERIFY(canvas_share(w) < share);
    toggle->trigger();
    QCoreApplication::processEvents();
    QVERIFY(plan_area_is(w, false));
    QCOMPARE(canvas_share(w), share);

    // What needs the plan area shows it, with the right tab in front.
    const auto in_front = [&w](const char* name) {
      QCoreApplication::processEvents();
      return dock(w, name)->visibleRegion().isEmpty() == false;
    };
    QVERIFY(w.show_plan_step(1));
    QVERIFY(plan_area_is(w, true));
    QVERIFY(in_front("redistribution_dock"));
    w.set_plan_area_visible(false);
    w.show_costs();
    QVERIFY(plan_area_is(w, true));
    QVERIFY(in_front("costs_dock"));
    QVERIFY(!in_front("redistribution_dock"));
    w.set_plan_area_visible(false);
    w.show_advisor();
    QVERIFY(plan_area_is(w, true));
    QVERIFY(in_front("advisor_dock"));
    // Closing its docks one by one unchecks the toggle with the last.
    for (const char* name : {"redistribution_dock", "costs_dock"}) dock(w, name)->close();
    QVERIFY(toggle->isChecked());
    dock(w, "advisor_dock")->close();
    QVERIFY(plan_area_is(w, false));
  }

  // The tensor key names the tensor shown: a rename (which keeps the plan and its frames) and its undo rename it.
  void the_tensor_key_follows_a_rename() {
    MainWindow w;
    QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/default.meshloom.json")));
    show_at(w, QSize(1280, 800));
    QVERIFY(w.show_plan_step(1));
    const meshloom::app::TensorKey* key = w.view()->tensor_key();
    QVERIFY(key->has_grid());
    QVERIFY2(key->title().startsWith(QLatin1String("weight [")), qPrintable(key->title()));
    QVERIFY(w.redistribution_panel()->rename_tensor(QStringLiteral("weight"), QStringLiteral("w2")));
    QVERIFY2(key->title().startsWith(QLatin1String("w2 [")), qPrintable(key->title()));
    w.document()->undo_stack()->undo();
    QVERIFY2(key->title().startsWith(QLatin1String("weight [")), qPrintable(key->title()));
  }

  // The fitted canvas leaves the tensor key its own room: the key, top right, covers no rank (it used to sit on the
  // mesh's top right ranks of wide meshes: torchtitan's 32, or ranks 5 and 7 of the 3-D example at step 1).
  void the_tensor_key_covers_no_rank() {
    for (const char* example : {"torchtitan-4d", "pp-dp-tp-3d", "default"}) {
      MainWindow w;
      QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/%1.meshloom.json").arg(QLatin1String(example))));
      for (const QSize size : {QSize(1280, 800), QSize(1600, 1000)}) {
        show_at(w, size);
        QVERIFY(w.show_plan_step(1));
        QCoreApplication::processEvents();
        const meshloom::app::MeshView* view = w.view();
        const meshloom::app::TensorKey* key = view->tensor_key();
        QVERIFY2(key->isVisible(), example);
        const QRect ranks = view->mapFromScene(view->scene()->itemsBoundingRect()).boundingRect();
        const QRect covered = key->geometry().translated(-view->viewport()->pos());  // in viewport coordinates
        QVERIFY2(!ranks.intersects(covered), qPrintable(QStringLiteral("%1 at %2x%3: ranks %4,%5 %6x%7, key %8,%9 %10x%11")
                                                           .arg(QLatin1String(example))
                                                           .arg(size.width())
                                                           .arg(size.height())
                                                           .arg(ranks.x())
                                                           .arg(ranks.y())
                                                           .arg(ranks.width())
                                                           .arg(ranks.height())
                                                           .arg(covered.x())
                                                           .arg(covered.y())
                                                           .arg(covered.width())
                                                           .arg(covered.height())));
      }
    }
  }

  // The side column opens wide enough for every column of the axes table (the Layout column was cut off at
  // 1280x800, Llama 405B's at every size), widening as a design opens, never narrowing, and never past a third of
  // the window (torchtitan's and HSDP's long flattened axes scroll there rather than crowd the canvas).
  void the_axes_table_shows_every_column() {
    for (const char* example : {"default", "llama3-405b", "llama3-8b", "hsdp-2d", "torchtitan-4d"}) {
      const bool fits = std::string_view(example) != "hsdp-2d" && std::string_view(example) != "torchtitan-4d";
      MainWindow w;
      show_at(w, QSize(1280, 800));  // as meshloom does: the window, then the design
      QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/%1.meshloom.json").arg(QLatin1String(example))));
      QCoreApplication::processEvents();
      const QTableView* table = w.mesh_panel()->table();
      const int side = dock(w, "mesh_dock")->width();
      QVERIFY2((table->horizontalScrollBar()->maximum() == 0) == fits,
               qPrintable(QStringLiteral("%1: the axes table scrolls by %2 px in a side column of %3 px")
                              .arg(QLatin1String(example))
                              .arg(table->horizontalScrollBar()->maximum())
                              .arg(side)));
      QVERIFY2(side <= w.width() / 3, example);
      QVERIFY2(canvas_share(w) >= 0.55, example);  // the canvas stays in front
      // A design with a narrower table keeps the width the column has.
      QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/default.meshloom.json")));
      QCoreApplication::processEvents();
      QCOMPARE(dock(w, "mesh_dock")->width(), side);
    }
    // A column whose Mesh dock the user closed stays as they left it: the Slice dock keeps its width.
    MainWindow w;
    show_at(w, QSize(1280, 800));
    dock(w, "mesh_dock")->toggleViewAction()->trigger();
    QCoreApplication::processEvents();
    QVERIFY(dock(w, "mesh_dock")->isHidden());
    const int slice = dock(w, "slice_dock")->width();
    QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/llama3-405b.meshloom.json")));
    QCoreApplication::processEvents();
    QVERIFY(dock(w, "mesh_dock")->isHidden());
    QCOMPARE(dock(w, "slice_dock")->width(), slice);
  }

  // The Redistribution dock's request and plan fit the plan area as it opens at 1280x800 (its form and its plan
  // table's 192 px hint scrolled it): the shape shares a row with its dtype, the planner with its cost model, and the
  // plan table takes the height the lines under it leave.
  void the_redistribution_dock_fits_the_plan_area() {
    MainWindow w;
    show_at(w, QSize(1280, 800));
    QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/pp-dp-tp-3d.meshloom.json")));
    QVERIFY(w.redistribution_panel()->select_tensor(QStringLiteral("attention_out")));
    w.show_plan();
    QCoreApplication::processEvents();
    const QScrollArea* area = nullptr;
    for (QWidget* p = w.redistribution_panel()->parentWidget(); p != nullptr && area == nullptr; p = p->parentWidget()) {
      area = qobject_cast<QScrollArea*>(p);
    }
    QVERIFY(area != nullptr);
    QVERIFY(plan_area_is(w, true));
    QVERIFY2(area->verticalScrollBar()->maximum() == 0,
             qPrintable(QStringLiteral("the panel scrolls by %1 px in %2 px").arg(area->verticalScrollBar()->maximum())
                            .arg(area->viewport()->height())));
    const auto* table = w.redistribution_panel()->findChild<QTableView*>();
    QVERIFY(table != nullptr);
    QVERIFY2(table->height() >= 100, qPrintable(QString::number(table->height())));  // the rest goes to the plan
  }

  // At 1280x800 every dock of the plan area fits the height it opens at (the side column's minimum leaves it about
  // 290 px): the Costs dock scrolled by 89 px and the Advisor dock by 75 (the predictions' table under their chart,
  // the chart's readout on a row of its own, the advisor's check box on a row of its own), the Advisor's ranking shown.
  void no_dock_of_the_plan_area_scrolls_at_1280x800() {
    MainWindow w;
    show_at(w, QSize(1280, 800));
    QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/advisor-2x2.meshloom.json")));
    // The Advisor with its verdict, table and chart shown (a one-line verdict: Llama 3 405B's two lines still scroll
    // it by a few pixels).
    QVERIFY(w.advisor_panel()->rank());
    QVERIFY(w.advisor_panel()->wait_idle());
    QVERIFY(!w.advisor_panel()->findChild<QLabel*>(QStringLiteral("advisor_reason"))->text().isEmpty());
    for (int front = 0; front < 3; ++front) {
      QWidget* panel = nullptr;
      if (front == 0) w.show_plan(), panel = w.redistribution_panel();
      if (front == 1) w.show_costs(), panel = w.costs_panel();
      if (front == 2) w.show_advisor(), panel = w.advisor_panel();
      QCoreApplication::processEvents();
      const QScrollArea* area = nullptr;
      for (QWidget* p = panel->parentWidget(); p != nullptr && area == nullptr; p = p->parentWidget()) {
        area = qobject_cast<QScrollArea*>(p);
      }
      QVERIFY(area != nullptr);
      const int need = std::max(panel->minimumSizeHint().height(), panel->heightForWidth(area->viewport()->width()));
      QVERIFY2(need <= area->viewport()->height(),
               qPrintable(QStringLiteral("%1 needs %2 px of %3").arg(QLatin1String(panel->metaObject()->className()))
                              .arg(need).arg(area->viewport()->height())));
    }
  }

  void reset_layout_puts_the_canvas_in_front_again() {
    MainWindow w;
    QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/hsdp-2d.meshloom.json")));
    show_at(w, QSize(1280, 800));
    const double share = canvas_share(w);
    // The user opens the plan area, moves the Mesh dock to the right, floats the Slice dock, widens the Rank dock.
    w.set_plan_area_visible(true);
    w.addDockWidget(Qt::RightDockWidgetArea, dock(w, "mesh_dock"));
    dock(w, "slice_dock")->setFloating(true);
    w.resizeDocks({dock(w, "rank_dock")}, {520}, Qt::Horizontal);
    QCoreApplication::processEvents();
    QVERIFY(canvas_share(w) < 0.5);
    w.save_layout();
    QVERIFY(QSettings().contains(QStringLiteral("window/state")));

    QAction* reset = view_action(w, QStringLiteral("&Reset layout"));
    QVERIFY(reset != nullptr);
    reset->trigger();
    QCoreApplication::processEvents();
    QCOMPARE(canvas_share(w), share);
    QVERIFY(canvas_share(w) >= 0.6);
    QVERIFY(plan_area_is(w, false));
    QVERIFY(!dock(w, "slice_dock")->isFloating());
    QCOMPARE(w.dockWidgetArea(dock(w, "mesh_dock")), Qt::LeftDockWidgetArea);
    QVERIFY(!QSettings().contains(QStringLiteral("window/state")));  // the next session starts fresh too
  }

  void the_layout_is_restored_in_the_next_window() {
    QSettings().remove(QStringLiteral("window"));
    QRect geometry;
    int rank_width = 0;
    {
      MainWindow first;
      show_at(first, QSize(1400, 900));
      first.show_costs();
      first.addDockWidget(Qt::RightDockWidgetArea, dock(first, "rank_dock"));
      first.resizeDocks({dock(first, "rank_dock")}, {300}, Qt::Horizontal);
      QCoreApplication::processEvents();
      geometry = first.geometry();
      rank_width = dock(first, "rank_dock")->width();
      QVERIFY(first.close());  // saves the layout
    }
    MainWindow second;
    QVERIFY(plan_area_is(second, false));  // a window keeps the first-launch layout until it restores
    QVERIFY(second.restore_layout());
    second.show();
    QVERIFY(QTest::qWaitForWindowExposed(&second));
    QCoreApplication::processEvents();
    QCOMPARE(second.size(), geometry.size());
    QVERIFY(plan_area_is(second, true));
    QCOMPARE(second.dockWidgetArea(dock(second, "rank_dock")), Qt::RightDockWidgetArea);
    QCOMPARE(dock(second, "rank_dock")->width(), rank_width);

    // Nothing saved: nothing restored, the first-launch layout stays.
    second.reset_layout();
    MainWindow third;
    QVERIFY(!third.restore_layout());
    QVERIFY(plan_area_is(third, false));
  }


  void every_example_draws_every_rank_once() {
    const QDir dir(QStringLiteral(MESHLOOM_EXAMPLES_DIR));
    const QStringList files = dir.entryList({QStringLiteral("*.meshloom.json")}, QDir::Files, QDir::Name);
    QVERIFY(files.size() >= 5);
    for (const QString& f : files) {
      MainWindow w;
      QVERIFY2(w.open_design(dir.filePath(f)), qPrintable(f + ": " + w.last_error()));
      const auto& design = w.design();
      const auto mesh = meshloom::build_mesh(design.mesh, design.world);
      const auto expected = mesh.instances();
      QCOMPARE(static_cast<qint64>(w.grid()->cell_count()), mesh.size());
      for (std::size_t i = 0; i < w.grid()->cell_count(); ++i) QCOMPARE(w.grid()->rank_at(i), expected.values[i]);
    }
  }

  void cells_never_overlap_and_nest_by_axis() {
    const auto g = meshloom::app::layout_mesh({2, 3, 2, 4});
    QCOMPARE(g.cells.size(), std::size_t{48});
    for (std::size_t i = 0; i < g.cells.size(); ++i) {
      QVERIFY(g.bounds.contains(g.cells[i]));
      for (std::size_t j = i + 1; j < g.cells.size(); ++j) QVERIFY(!g.cells[i].intersects(g.cells[j]));
    }
    // Innermost axis runs across, the next down: cell 1 is right of cell 0, cell 4 below it.
    QVERIFY(g.cells[1].left() > g.cells[0].right());
    QCOMPARE(g.cells[4].left(), g.cells[0].left());
    QVERIFY(g.cells[4].top() > g.cells[0].bottom());
  }

  void export_writes_the_engines_code_and_refuses_what_it_cannot_write() {
    QTemporaryDir tmp;
    MainWindow w(nullptr, tmp.filePath(QStringLiteral("autosave")));
    QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/torchtitan-4d.meshloom.json")));
    const auto read = [](const QString& path) {
      QFile f(path);
      return f.open(QIODevice::ReadOnly) ? f.readAll().toStdString() : std::string("<unreadable>");
    };
    const QString torch = tmp.filePath(QStringLiteral("mesh.py"));
    QVERIFY2(w.export_code(MainWindow::CodeKind::PyTorch, torch), qPrintable(w.last_error()));
    QCOMPARE(read(torch), meshloom::export_pytorch(w.design()));
    const QString jax = tmp.filePath(QStringLiteral("jax_mesh.py"));
    QVERIFY2(w.export_code(MainWindow::CodeKind::Jax, jax), qPrintable(w.last_error()));
    QCOMPARE(read(jax), meshloom::export_jax(w.design()));
    // A directory that does not exist: refused, naming the path.
    const QString nowhere = tmp.filePath(QStringLiteral("missing/dir/mesh.py"));
    QVERIFY(!w.export_code(MainWindow::CodeKind::PyTorch, nowhere));
    QVERIFY2(w.last_error().contains(QStringLiteral("missing/dir/mesh.py")), qPrintable(w.last_error()));
    QVERIFY(!QFile::exists(nowhere));
  }

  void a_bad_file_is_refused_and_the_window_keeps_its_design() {
    MainWindow w;
    QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/default.meshloom.json")));
    const auto before = w.design();
    QTemporaryDir tmp;
    const QString bad = tmp.filePath(QStringLiteral("bad.meshloom.json"));
    QFile file(bad);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(R"({"format": "meshloom-design", "version": 1, "mesh": {"shape": [2, 0]}})");
    file.close();
    QVERIFY(!w.open_design(bad));
    QVERIFY2(w.last_error().contains(QStringLiteral("bad.meshloom.json")), qPrintable(w.last_error()));
    QVERIFY(w.design() == before);
    QVERIFY(!w.open_design(tmp.filePath(QStringLiteral("missing.meshloom.json"))));
    QVERIFY(w.last_error().contains(QStringLiteral("missing.meshloom.json")));
  }

  void screenshot_option_writes_a_png() {
    QTemporaryDir tmp;
    const QString out = tmp.filePath(QStringLiteral("shot.png"));
    QProcess p;
    p.start(QStringLiteral(MESHLOOM_APP_PATH),
            {QStringLiteral("--screenshot"), out, QStringLiteral(MESHLOOM_EXAMPLES_DIR "/hsdp-2d.meshloom.json")});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 0);
    const QImage image(out);
    QVERIFY(!image.isNull());
    QVERIFY(image.width() >= 640 && image.height() >= 480);
  }

  // The screenshot is written to a new file and renamed over the old one: a write that fails midway (here the
  // process may write no file past 4 KiB) leaves the old file whole.
  void a_screenshot_that_cannot_be_written_leaves_the_old_file() {
    QTemporaryDir tmp;
    const QString out = tmp.filePath(QStringLiteral("shot.png"));
    QFile old(out);
    QVERIFY(old.open(QIODevice::WriteOnly));
    old.write("the old image");
    old.close();
    QProcess p;
    p.setChildProcessModifier([] {
      std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG instead of killing the process
      const rlimit limit{4096, 4096};
      ::setrlimit(RLIMIT_FSIZE, &limit);
    });
    p.start(QStringLiteral(MESHLOOM_APP_PATH),
            {QStringLiteral("--screenshot"), out, QStringLiteral(MESHLOOM_EXAMPLES_DIR "/hsdp-2d.meshloom.json")});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 2);
    QVERIFY2(QString::fromUtf8(p.readAllStandardError()).contains(QLatin1String("cannot write screenshot")),
             "expected the write to fail");
    QFile again(out);
    QVERIFY(again.open(QIODevice::ReadOnly));
    QCOMPARE(again.readAll(), QByteArray("the old image"));
  }

  void screenshot_options_name_what_they_refuse() {
    QTemporaryDir tmp;
    const QString design = QStringLiteral(MESHLOOM_EXAMPLES_DIR "/hsdp-2d.meshloom.json");
    const auto run = [&](const QStringList& options) {
      QProcess p;
      p.start(QStringLiteral(MESHLOOM_APP_PATH), QStringList{QStringLiteral("--screenshot"), tmp.filePath(QStringLiteral("s.png"))} + options + QStringList{design});
      p.waitForFinished(60000);
      return std::pair{p.exitCode(), QString::fromUtf8(p.readAllStandardError())};
    };
    auto [code, err] = run({QStringLiteral("--slice"), QStringLiteral("dp_shard,cp")});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains(QLatin1String("'cp'")), qPrintable(err));
    std::tie(code, err) = run({QStringLiteral("--select"), QStringLiteral("8")});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains(QLatin1String("--select 8")), qPrintable(err));
    std::tie(code, err) = run({QStringLiteral("--theme"), QStringLiteral("purple")});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains(QLatin1String("purple")), qPrintable(err));
    std::tie(code, err) = run({QStringLiteral("--slice"), QStringLiteral("dp_shard,dp_shard")});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains(QLatin1String("--slice dp_shard,dp_shard: names 'dp_shard' twice")), qPrintable(err));
    // Records files: a number past a double's range is a bad line, not a crash; a file with no record to plot is
    // refused naming its first problem; a FIFO nobody writes reads as empty instead of hanging.
    const QString huge = tmp.filePath(QStringLiteral("huge.jsonl"));
    QFile f(huge);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\"x\": 1e400}\n");
    f.close();
    std::tie(code, err) = run({QStringLiteral("--measurements"), huge});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains(QLatin1String("no bench record to plot; line 1: not a JSON record (number overflow parsing "
                                        "'1e400')")),
             qPrintable(err));
    std::tie(code, err) = run({QStringLiteral("--predictions"), huge});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains(QLatin1String("no step record of meshloom-launch run or validate --jsonl; line 1: not a JSON "
                                        "record (number overflow parsing '1e400')")),
             qPrintable(err));
    const QString fifo = tmp.filePath(QStringLiteral("fifo.jsonl"));
    QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
    std::tie(code, err) = run({QStringLiteral("--measurements"), fifo});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains(QLatin1String("no bench record to plot")), qPrintable(err));
    std::tie(code, err) = run({QStringLiteral("--slice"), QStringLiteral("dp"), QStringLiteral("--select"), QStringLiteral("5"),
                               QStringLiteral("--theme"), QStringLiteral("dark")});
    QCOMPARE(code, 0);
    QVERIFY(!QImage(tmp.filePath(QStringLiteral("s.png"))).isNull());
  }

  void the_current_plan_is_animated_under_the_canvas() {
    MainWindow w(nullptr, QDir::tempPath() + QStringLiteral("/meshloom-test-autosave"));
    QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/pp-dp-tp-3d.meshloom.json")));
    auto* panel = w.redistribution_panel();
    auto* anim = w.animation();
    auto* bar = w.animation_bar();
    QVERIFY2(anim->has_plan(), qPrintable(anim->error()));
    QCOMPARE(static_cast<std::size_t>(anim->step_count()), panel->plan_model()->plan()->steps.size());
    QCOMPARE(anim->current(), 0);
    QCOMPARE(bar->caption(), anim->caption(0));
    QCOMPARE(bar->position_text(), QStringLiteral("Step 0 of %1").arg(anim->step_count()));
    QVERIFY(overlay_shows(w, 0));
    QVERIFY(w.grid()->numbers_in_band());  // rank numbers move to the top band while blocks show

    // The bar's buttons drive the animation, and the caption, slider and overlay follow.
    QVERIFY(!bar->back_button()->isEnabled());
    bar->forward_button()->click();
    QCOMPARE(anim->current(), 1);
    QVERIFY(!anim->playing());
    QCOMPARE(bar->caption(), anim->caption(1));
    QCOMPARE(bar->slider()->value(), 1);
    QVERIFY(overlay_shows(w, 1));
    QVERIFY(bar->back_button()->isEnabled());
    bar->first_button()->click();
    QCOMPARE(anim->current(), 0);
    bar->slider()->setValue(anim->step_count());
    QCOMPARE(anim->current(), anim->step_count());
    QVERIFY(overlay_shows(w, anim->step_count()));
    bar->play_button()->click();  // from the last frame, play starts again at 0
    QVERIFY(anim->playing());
    QCOMPARE(bar->play_button()->text(), QStringLiteral("Pause"));
    bar->play_button()->click();
    QVERIFY(!anim->playing());
    QCOMPARE(bar->play_button()->text(), QStringLiteral("Play"));

    // Hiding the blocks clears the overlay; showing them again restores the frame.
    bar->set_blocks_shown(false);
    QVERIFY(!w.overlay()->has_frame());
    QVERIFY(!w.grid()->numbers_in_band());
    bar->set_blocks_shown(true);
    QVERIFY(overlay_shows(w, anim->current()));

    // Another tensor: its own plan, from its first frame.
    const QString other = panel->current_tensor() == QLatin1String("feed_forward_w2") ? QStringLiteral("attention_out")
                                                                                     : QStringLiteral("feed_forward_w2");
    QVERIFY(panel->select_tensor(other));
    QVERIFY(anim->has_plan());
    QCOMPARE(static_cast<std::size_t>(anim->step_count()), panel->plan_model()->plan()->steps.size());
    QCOMPARE(anim->current(), 0);
    QVERIFY(overlay_shows(w, 0));

    // --step's check: a step past the last is refused by name; a good one is shown, paused.
    QVERIFY(!w.show_plan_step(anim->step_count() + 1));
    QVERIFY2(w.last_error().contains(QStringLiteral("No step %1").arg(anim->step_count() + 1)), qPrintable(w.last_error()));
    QVERIFY(w.show_plan_step(anim->step_count()));
    QCOMPARE(anim->current(), anim->step_count());

    // An edit that changes the mesh replans and the canvas is rebuilt with a fresh overlay over the new cells.
    QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/hsdp-2d.meshloom.json")));
    QVERIFY(anim->has_plan());
    QCOMPARE(w.overlay()->cell_count(), w.grid()->cell_count());
    QVERIFY(overlay_shows(w, 0));
  }

  void the_plan_tables_highlight_the_step_shown() {
    MainWindow w(nullptr, QDir::tempPath() + QStringLiteral("/meshloom-test-autosave"));
    QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/pp-dp-tp-3d.meshloom.json")));
    auto* panel = w.redistribution_panel();
    auto* anim = w.animation();
    auto* bar = w.animation_bar();
    QVERIFY2(show_a_multi_step_plan(w), "a tensor of the example has a plan of two steps or more");
    const QTableView* table = panel->plan_table();
    const PlanModel* model = panel->plan_model();
    // Frame 0 is the layout before step 1: no row.
    QCOMPARE(anim->current(), 0);
    QVERIFY(!table->selectionModel()->hasSelection());
    QVERIFY(anim->caption(0).startsWith(QStringLiteral("Before step 1 of %1").arg(anim->step_count())));
    // Frame k: step k everywhere (the table's Step column, the bar's label, the caption) and its row selected.
    const auto agrees = [&](int k) {
      if (anim->current() != k || panel->shown_step() != k) return QStringLiteral("frame %1 shown as %2").arg(k).arg(anim->current());
      const QModelIndexList rows = table->selectionModel()->selectedRows();
      if (rows.size() != 1 || rows.front().row() != k - 1 || table->currentIndex().row() != k - 1) {
        return QStringLiteral("frame %1: row %2 current").arg(k).arg(table->currentIndex().row());
      }
      const int step = model->data(model->index(k - 1, PlanModel::StepColumn)).toInt();
      const QString label = QStringLiteral("Step %1 of %2").arg(step).arg(anim->step_count());
      if (step != k || bar->position_text() != label || !bar->caption().startsWith(label + QLatin1Char(':'))) {
        return QStringLiteral("frame %1: table step %2, label '%3', caption '%4'").arg(k).arg(step).arg(bar->position_text(), bar->caption());
      }
      return QString();
    };
    for (int k = 1; k <= anim->step_count(); ++k) {
      bar->forward_button()->click();
      const QString why = agrees(k);
      QVERIFY2(why.isEmpty(), qPrintable(why));
    }
    bar->back_button()->click();
    QVERIFY2(agrees(anim->step_count() - 1).isEmpty(), qPrintable(agrees(anim->step_count() - 1)));
    // A replan keeps the row.
    panel->refresh();
    QVERIFY2(agrees(anim->current()).isEmpty(), qPrintable(agrees(anim->current())));
    // Playback moves the row with the frame.
    bar->first_button()->click();
    QVERIFY(!table->selectionModel()->hasSelection());
    anim->set_speed(PlanAnimation::kMaxSpeed);
    anim->play();
    QTRY_COMPARE_WITH_TIMEOUT(anim->current(), 1, 5000);
    QCOMPARE(table->currentIndex().row(), 0);
    anim->pause();
  }

  void slice_groups_are_outlined_while_blocks_show() {
    using meshloom::app::MeshGridItem;
    MainWindow w(nullptr, QDir::tempPath() + QStringLiteral("/meshloom-test-autosave"));
    QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/pp-dp-tp-3d.meshloom.json")));
    w.set_slice({"tp"});
    const MeshGridItem* grid = w.grid();
    QVERIFY(grid->group_of_cell(0) >= 0);
    const QPalette palette;
    // Blocks shown (the default with a plan): the groups are outlines, the cells keep their plain fill.
    QVERIFY(w.overlay()->has_frame());
    QCOMPARE(grid->group_paint(), MeshGridItem::GroupPaint::Outline);
    QVERIFY(grid->cell_outline(0, palette).isValid());
    const QColor outlined_fill = grid->cell_fill(0, palette);
    // Blocks hidden: the groups fill their cells again, and nothing is outlined.
    w.animation_bar()->set_blocks_shown(false);
    QCOMPARE(grid->group_paint(), MeshGridItem::GroupPaint::Fill);
    QVERIFY(!grid->cell_outline(0, palette).isValid());
    QVERIFY(grid->cell_fill(0, palette) != outlined_fill);
    w.animation_bar()->set_blocks_shown(true);
    QCOMPARE(grid->group_paint(), MeshGridItem::GroupPaint::Outline);
  }

  void the_animation_exports_a_pdf_handout_and_png_frames() {
    MainWindow w(nullptr, QDir::tempPath() + QStringLiteral("/meshloom-test-autosave"));
    QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/pp-dp-tp-3d.meshloom.json")));
    auto* anim = w.animation();
    QVERIFY(anim->has_plan());
    QVERIFY(w.show_plan_step(1));
    QTemporaryDir tmp;

    // The handout: one page per frame.
    const QString pdf = tmp.filePath(QStringLiteral("handout.pdf"));
    QVERIFY2(w.export_animation(MainWindow::AnimationKind::PdfHandout, pdf), qPrintable(w.last_error()));
    QFile file(pdf);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray bytes = file.readAll();
    QVERIFY(bytes.startsWith("%PDF"));
    qsizetype pages = 0;  // page objects ("/Type /Page"), not the page tree ("/Type /Pages")
    auto it = QRegularExpression(QStringLiteral("/Type\\s*/Page(?!s)")).globalMatch(QString::fromLatin1(bytes));
    while (it.hasNext()) {
      (void)it.next();
      ++pages;
    }
    QCOMPARE(pages, static_cast<qsizetype>(anim->frame_count()));
    // The canvas shows the animation's own frame again.
    QCOMPARE(anim->current(), 1);
    QVERIFY(overlay_shows(w, 1));
    // A page as an image (the docs' picture of it): A4 landscape, white margins, the tensor key's colours on it;
    // a page past the last refused with the pages there are.
    const QImage page = w.handout_page(1, 800);
    QVERIFY2(!page.isNull(), qPrintable(w.last_error()));
    QCOMPARE(page.width(), 800);
    QVERIFY(std::abs(page.height() - qRound(800 * 210.0 / 297.0)) <= 1);
    QCOMPARE(page.pixelColor(2, 2), QColor(Qt::white));
    bool key_colour = false;
    const QColor first = meshloom::app::BlockOverlayItem::block_color(0, anim->grid().block_count);
    for (int y = 0; y < page.height() / 2 && !key_colour; ++y) {
      for (int x = page.width() * 3 / 4; x < page.width() && !key_colour; ++x) key_colour = page.pixelColor(x, y).rgb() == first.rgb();
    }
    QVERIFY(key_colour);
    QVERIFY(w.handout_page(anim->frame_count(), 800).isNull());
    QVERIFY2(w.last_error().contains(QStringLiteral("No page %1").arg(anim->frame_count())), qPrintable(w.last_error()));
    QVERIFY(overlay_shows(w, 1));

    // The frames: <tensor>_step<k>.png for k = 0..n, real images.
    const QString tensor = w.redistribution_panel()->current_tensor();
    QVERIFY2(w.export_animation(MainWindow::AnimationKind::PngFrames, tmp.path()), qPrintable(w.last_error()));
    for (int k = 0; k < anim->frame_count(); ++k) {
      const QString png = tmp.filePath(QStringLiteral("%1_step%2.png").arg(tensor).arg(k));
      QVERIFY2(QFileInfo(png).size() > 1000, qPrintable(png));
      QVERIFY(!QImage(png).isNull());
    }
    QVERIFY(!QFileInfo::exists(tmp.filePath(QStringLiteral("%1_step%2.png").arg(tensor).arg(anim->frame_count()))));

    // A folder that is not there: refused by name, nothing written.
    const QString missing = tmp.filePath(QStringLiteral("no/such/folder"));
    QVERIFY(!w.export_animation(MainWindow::AnimationKind::PngFrames, missing));
    QVERIFY2(w.last_error().contains(missing), qPrintable(w.last_error()));
    QVERIFY(!QFileInfo::exists(tmp.filePath(QStringLiteral("no"))));
    // A frame that cannot be written (a folder in its place): the frames written before it are removed again.
    QTemporaryDir frames;
    QVERIFY(QDir(frames.path()).mkdir(QStringLiteral("%1_step1.png").arg(tensor)));
    QVERIFY(!w.export_animation(MainWindow::AnimationKind::PngFrames, frames.path()));
    QVERIFY2(w.last_error().contains(QStringLiteral("%1_step1.png").arg(tensor)), qPrintable(w.last_error()));
    QVERIFY(!QFileInfo::exists(QDir(frames.path()).filePath(QStringLiteral("%1_step0.png").arg(tensor))));
    QCOMPARE(QDir(frames.path()).entryList(QDir::Files).size(), 0);
  }

  void presentation_mode_shows_the_canvas_alone_and_restores_the_layout() {
    MainWindow w(nullptr, QDir::tempPath() + QStringLiteral("/meshloom-test-autosave"));
    QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/pp-dp-tp-3d.meshloom.json")));
    QVERIFY(show_a_multi_step_plan(w));
    show_at(w, QSize(1400, 900));
    w.show_plan();
    w.activateWindow();
    if (!QTest::qWaitForWindowActive(&w)) QSKIP("this platform does not activate windows (the keys need it)");
    const QList<QDockWidget*> docks = w.findChildren<QDockWidget*>();
    QMap<QString, bool> before;
    for (QDockWidget* d : docks) before[d->objectName()] = d->isVisible();
    QVERIFY(before.value(QStringLiteral("redistribution_dock")));
    const double normal = w.animation_bar()->caption_label()->font().pointSizeF();

    w.presentation_action()->trigger();
    QVERIFY(w.presenting());
    QVERIFY(w.windowState().testFlag(Qt::WindowFullScreen));
    for (QDockWidget* d : docks) QVERIFY2(!d->isVisible(), qPrintable(d->objectName()));
    QVERIFY(!w.menuBar()->isVisible());
    QVERIFY(w.animation_bar()->caption_label()->font().pointSizeF() > normal * 1.5);

    // The keys: Right and Left step, Space plays and pauses.
    auto* anim = w.animation();
    QCOMPARE(anim->current(), 0);
    QTest::keyClick(w.view(), Qt::Key_Right);
    QCOMPARE(anim->current(), 1);
    QTest::keyClick(w.view(), Qt::Key_Right);
    QCOMPARE(anim->current(), 2);
    QTest::keyClick(w.view(), Qt::Key_Left);
    QCOMPARE(anim->current(), 1);
    QTest::keyClick(w.view(), Qt::Key_Space);
    QVERIFY(anim->playing());
    QTest::keyClick(w.view(), Qt::Key_Space);
    QVERIFY(!anim->playing());

    // Esc: the layout as it was.
    QTest::keyClick(w.view(), Qt::Key_Escape);
    QVERIFY(!w.presenting());
    QVERIFY(!w.presentation_action()->isChecked());
    QVERIFY(!w.windowState().testFlag(Qt::WindowFullScreen));
    QTRY_VERIFY(w.menuBar()->isVisible());
    for (QDockWidget* d : docks) QCOMPARE(d->isVisible(), before.value(d->objectName()));
    QCOMPARE(w.animation_bar()->caption_label()->font().pointSizeF(), normal);
    QVERIFY(w.plan_area_action()->isChecked());
  }

  void step_option_renders_a_step_and_names_what_it_refuses() {
    QTemporaryDir tmp;
    const QString design = QStringLiteral(MESHLOOM_EXAMPLES_DIR "/pp-dp-tp-3d.meshloom.json");
    const auto run = [&](const QStringList& options) {
      QProcess p;
      p.start(QStringLiteral(MESHLOOM_APP_PATH),
              QStringList{QStringLiteral("--screenshot"), tmp.filePath(QStringLiteral("step.png"))} + options + QStringList{design});
      p.waitForFinished(60000);
      return std::pair{p.exitCode(), QString::fromUtf8(p.readAllStandardError())};
    };
    auto [code, err] = run({QStringLiteral("--tensor"), QStringLiteral("attention_out"), QStringLiteral("--step"), QStringLiteral("1")});
    QCOMPARE(code, 0);
    QVERIFY(!QImage(tmp.filePath(QStringLiteral("step.png"))).isNull());
    std::tie(code, err) = run({QStringLiteral("--step"), QStringLiteral("99")});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains(QLatin1String("--step 99")) && err.contains(QLatin1String("No step 99")), qPrintable(err));
    std::tie(code, err) = run({QStringLiteral("--step"), QStringLiteral("two")});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains(QLatin1String("--step two")), qPrintable(err));
    std::tie(code, err) = run({QStringLiteral("--tensor"), QStringLiteral("nope")});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains(QLatin1String("--tensor nope")), qPrintable(err));
  }

  void screenshot_of_a_bad_design_fails_with_exit_2() {
    QProcess p;
    p.start(QStringLiteral(MESHLOOM_APP_PATH), {QStringLiteral("--screenshot"), QStringLiteral("/nonexistent/x.png"),
                                                QStringLiteral("/nonexistent/design.meshloom.json")});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 2);
    QVERIFY(p.readAllStandardError().contains("design.meshloom.json"));
  }
};

QTEST_MAIN(MainWindowTest)
#include "test_main_window.moc"
