// The Advisor dock: the ranking shown equals the engine's advise() for the same design and model, the table (rows,
// cells, sorting by the numbers), the stacked bars (one segment per axis, heights = the axis' cost), previewing a
// layout on the canvas without touching the design, Apply as one undoable edit, a design without a workload, a bad
// constraint, and the calibrated model refused for a design without a calibration. Offscreen platform.
#include <QApplication>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QDir>
#include <QtTest>

#include <cmath>
#include <string>
#include <vector>

#include "advisor/advisor_chart.hpp"
#include "advisor/advisor_model.hpp"
#include "advisor/advisor_panel.hpp"
#include "document/design_document.hpp"
#include "mesh/rank_panel.hpp"
#include "shell/main_window.hpp"
#include "meshloom/advisor/advisor.hpp"
#include "meshloom/design/design.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/state.hpp"
#include "meshloom/workload/workload.hpp"

using namespace meshloom;
using namespace meshloom::app;

namespace {

// 8 ranks on hosts of 4, mesh (dp 2, tp 4); tp moves big activations, dp small gradients: tp belongs inside a host.
Design advisor_design() {
  Design d;
  d.name = "advisor";
  d.world = 8;
  d.devices_per_host = 4;
  d.mesh.shape = {2, 4};
  d.mesh.names = {"dp", "tp"};
  d.tensors.push_back({"act", {8, 4096, 1024}, DType::BFloat16, parse_state("RP(sum)"), parse_state("RR")});
  d.tensors.push_back({"grad", {1024, 1024}, DType::Float32, parse_state("P(sum)S(0)"), parse_state("RS(0)")});
  d.workload = Workload{{{"act", 4}, {"grad", 1}}, std::nullopt};
  return d;
}

CostModelFactory comm_factory() {
  return [](const std::vector<std::int64_t>& shape, std::int64_t per_host) -> std::shared_ptr<const CostModel> {
    return std::make_shared<const CommCostModel>(shape, per_host);
  };
}

}  // namespace

class AdvisorDockTest : public QObject {
  Q_OBJECT

private:
  QTemporaryDir dir_;

  QString save(const Design& d, const QString& name) {
    const QString path = dir_.filePath(name);
    save_design(d, path.toStdString());
    return path;
  }

private slots:
  void initTestCase() { QVERIFY(dir_.isValid()); }

  void ranking_equals_the_engines() {
    MainWindow window(nullptr, dir_.filePath(QStringLiteral("autosave")));
    QVERIFY2(window.open_design(save(advisor_design(), QStringLiteral("a.meshloom.json"))), qPrintable(window.last_error()));
    AdvisorPanel* panel = window.advisor_panel();
    QVERIFY(panel != nullptr);
    panel->set_model(AdvisorPanel::ModelKind::Comm);
    panel->set_search(AdvisorSearch::Orders);
    QVERIFY2(panel->rank(), qPrintable(panel->error()));
    QVERIFY(panel->wait_idle());
    QVERIFY2(panel->error().isEmpty(), qPrintable(panel->error()));

    const AdvisorResult expected = advise(advisor_design(), comm_factory(), AdvisorOptions{});
    const AdvisorResult& shown = panel->result();
    QCOMPARE(shown.ranked.size(), expected.ranked.size());
    QCOMPARE(shown.ranked.size(), std::size_t{2});
    for (std::size_t i = 0; i < shown.ranked.size(); ++i) {
      QCOMPARE(shown.ranked[i].mesh, expected.ranked[i].mesh);
      QCOMPARE(shown.ranked[i].cost, expected.ranked[i].cost);
    }
    QCOMPARE(panel->reason(), QString::fromStdString(expected.reason));
    QVERIFY(!panel->reason().isEmpty());

    // The table: one row per candidate, rank order, the layout and the ratio to the best.
    AdvisorModel* model = panel->table_model();
    QCOMPARE(model->rowCount(), 2);
    QCOMPARE(model->data(model->index(0, AdvisorModel::LayoutColumn)).toString(), layout_label(expected.ranked[0].mesh));
    QCOMPARE(model->data(model->index(0, AdvisorModel::RatioColumn)).toString(), QStringLiteral("1.00×"));
    QCOMPARE(model->data(model->index(1, AdvisorModel::CostColumn), Qt::UserRole).toDouble(), expected.ranked[1].cost);
    // Sorting compares numbers: cost descending puts the dearest first.
    panel->table()->sortByColumn(AdvisorModel::CostColumn, Qt::DescendingOrder);
    const auto* proxy = qobject_cast<const QSortFilterProxyModel*>(panel->table()->model());
    QVERIFY(proxy != nullptr);
    QCOMPARE(proxy->mapToSource(proxy->index(0, 0)).row(), expected.ranked[1].cost > expected.ranked[0].cost ? 1 : 0);

    // The chart: one bar per candidate, one segment per axis of the axis' cost.
    AdvisorChart* chart = panel->chart();
    QCOMPARE(chart->bar_count(), std::size_t{2});
    for (std::size_t bar = 0; bar < 2; ++bar) {
      double total = 0;
      for (const auto& axis : expected.ranked[bar].axes) {
        QCOMPARE(chart->segment(bar, axis.name), axis.cost);
        total += axis.cost;
      }
      QVERIFY(std::abs(total - expected.ranked[bar].cost) <= 1e-9 * expected.ranked[bar].cost);
    }
  }

  // 12 ranks on hosts of 4 as (dp 4, tp 3): comm prices tp inside a host though its group {3, 4, 5} straddles two;
  // the dock says so under the reason, as advise does. Hosts of 3 line up with tp's groups: no note.
  void the_comm_host_rule_is_noted_where_groups_straddle_hosts() {
    Design d;
    d.name = "straddle";
    d.world = 12;
    d.devices_per_host = 4;
    d.mesh.shape = {4, 3};
    d.mesh.names = {"dp", "tp"};
    d.tensors.push_back({"act", {96, 96}, DType::Float32, parse_state("RP(sum)"), parse_state("RR")});
    d.workload = Workload{{{"act", 1}}, std::nullopt};
    for (const std::int64_t per_host : {4, 3}) {
      d.devices_per_host = per_host;
      MainWindow window(nullptr, dir_.filePath(QStringLiteral("autosave")));
      QVERIFY2(window.open_design(save(d, QStringLiteral("straddle.meshloom.json"))), qPrintable(window.last_error()));
      AdvisorPanel* panel = window.advisor_panel();
      panel->set_model(AdvisorPanel::ModelKind::Comm);
      QVERIFY2(panel->rank(), qPrintable(panel->error()));
      QVERIFY(panel->wait_idle());
      const AdvisorResult expected = advise(d, comm_factory(), AdvisorOptions{});
      QCOMPARE(expected.host_rule_note.empty(), per_host == 3);
      QCOMPARE(panel->reason(), QString::fromStdString(expected.reason) +
                                    (per_host == 4 ? QStringLiteral("\nNote: ") +
                                                         QString::fromStdString(expected.host_rule_note) +
                                                         QStringLiteral(".")
                                                   : QString()));
    }
  }

  // Saved into another folder, the design names its calibration from there: the same file, so the ranking still
  // holds and Apply layout stays available.
  void a_ranking_survives_save_as_into_another_folder() {
    QVERIFY(QDir(dir_.path()).mkpath(QStringLiteral("from/cal")));
    QVERIFY(QDir(dir_.path()).mkpath(QStringLiteral("to")));
    MainWindow window(nullptr, dir_.filePath(QStringLiteral("autosave-moved")));
    Design d = advisor_design();
    d.calibration = "cal/c.json";
    QVERIFY(window.open_design(save(d, QStringLiteral("from/d.meshloom.json"))));
    AdvisorPanel* panel = window.advisor_panel();
    panel->set_model(AdvisorPanel::ModelKind::Comm);
    QVERIFY(panel->rank());
    QVERIFY(panel->wait_idle());
    QVERIFY2(window.save_design(dir_.filePath(QStringLiteral("to/d.meshloom.json"))), qPrintable(window.last_error()));
    QCOMPARE(window.design().calibration,
             std::optional<std::string>(dir_.filePath(QStringLiteral("from/cal/c.json")).toStdString()));
    panel->preview(1);
    QVERIFY(panel->apply());
  }

  void preview_and_apply_with_undo() {
    MainWindow window(nullptr, dir_.filePath(QStringLiteral("autosave")));
    QVERIFY(window.open_design(save(advisor_design(), QStringLiteral("b.meshloom.json"))));
    AdvisorPanel* panel = window.advisor_panel();
    panel->set_model(AdvisorPanel::ModelKind::Comm);
    QVERIFY(panel->rank());
    QVERIFY(panel->wait_idle());
    const MeshSpec original = window.design().mesh;
    const MeshSpec other = panel->result().ranked[1].mesh;
    QVERIFY(other != original || panel->result().ranked[0].mesh != original);

    // Preview: the canvas shows the candidate, the design is untouched; the Rank dock answers for the candidate's
    // rank numbers, as the canvas draws them, then for the design's again.
    window.select_rank(1);
    const QString own = window.rank_panel()->value(QStringLiteral("Coordinate"));
    panel->preview(1);
    QVERIFY(window.previewing());
    QCOMPARE(window.design().mesh, original);
    QCOMPARE(window.document()->undo_stack()->count(), 0);
    {
      const Design shown = with_layout(advisor_design(), other);
      const DeviceMesh built = build_mesh(shown.mesh, shown.world);
      QStringList named;
      const auto coord = built.coordinate(1);
      QVERIFY(coord.has_value());
      for (std::size_t a = 0; a < coord->size(); ++a) {
        named << QStringLiteral("%1=%2").arg(QString::fromStdString(shown.mesh.names[a])).arg((*coord)[a]);
      }
      QCOMPARE(window.rank_panel()->value(QStringLiteral("Coordinate")),
               QStringLiteral("(%1)").arg(named.join(QStringLiteral(", "))));
      QVERIFY(window.rank_panel()->value(QStringLiteral("Coordinate")) != own);  // the layouts place rank 1 apart
    }
    panel->preview(std::nullopt);
    QVERIFY(!window.previewing());
    QCOMPARE(window.rank_panel()->value(QStringLiteral("Coordinate")), own);

    // Apply: one undoable edit; states follow their axes (with_layout); undo brings the old mesh back.
    panel->preview(1);
    QVERIFY(panel->apply());
    QVERIFY(!window.previewing());
    QCOMPARE(window.design().mesh.shape, other.shape);
    QCOMPARE(window.design().mesh.names, other.names);
    QCOMPARE(window.design(), with_layout(advisor_design(), other));
    QCOMPARE(window.document()->undo_stack()->count(), 1);
    window.document()->undo_stack()->undo();
    QCOMPARE(window.design().mesh, original);
  }

  // The newcomer: the Llama 3 405B example, its 6 orders ranked with their breakdown, the best applied and
  // undone; the ranking is the engine's (which meshloom-launch advise prints).
  void llama3_405b_orders_apply_and_undo() {
    MainWindow window(nullptr, dir_.filePath(QStringLiteral("autosave")));
    const QString path = QStringLiteral(MESHLOOM_EXAMPLES_DIR "/llama3-405b.meshloom.json");
    QVERIFY2(window.open_design(path), qPrintable(window.last_error()));
    AdvisorPanel* panel = window.advisor_panel();
    panel->set_search(AdvisorSearch::Orders);
    QVERIFY(panel->rank());
    QVERIFY(panel->wait_idle());
    QVERIFY2(panel->error().isEmpty(), qPrintable(panel->error()));
    const AdvisorResult& r = panel->result();
    QCOMPARE(r.ranked.size(), std::size_t{6});  // 24 orders; cp has size 1, so 6 layouts
    QCOMPARE(panel->table_model()->rowCount(), 6);
    QCOMPARE(panel->chart()->bar_count(), std::size_t{6});
    const AdvisorResult engine = advise(load_design(path.toStdString()), comm_factory(), AdvisorOptions{});
    for (std::size_t i = 0; i < 6; ++i) {
      QCOMPARE(r.ranked[i].mesh, engine.ranked[i].mesh);
      QCOMPARE(r.ranked[i].cost, engine.ranked[i].cost);
      QCOMPARE(r.ranked[i].axes.size(), std::size_t{4});  // the breakdown: every axis, with its hosts
    }
    // tp (8 per host) inside a host wins: every layout whose tp groups cross hosts costs more.
    for (const auto& c : r.ranked) {
      for (const auto& a : c.axes) {
        if (a.name == "tp" && a.hosts > 1) QVERIFY(c.cost > r.ranked.front().cost);
      }
    }
    // The example already is the best layout (ties lead with the design's own): applying it changes nothing.
    const Design before = window.design();
    QCOMPARE(r.ranked.front().mesh, before.mesh);
    QVERIFY(panel->apply());
    QCOMPARE(window.document()->undo_stack()->count(), 0);
    // The runner-up ties with it (pp outer instead of dp); applying it is one edit, and undo restores the example.
    const MeshSpec second = r.ranked[1].mesh;
    panel->preview(1);
    QVERIFY(panel->apply());
    QCOMPARE(window.design().mesh, second);
    QCOMPARE(window.document()->undo_stack()->count(), 1);
    window.document()->undo_stack()->undo();
    QCOMPARE(window.design(), before);
  }

  // An edit after ranking: the ranking is of another design, so Apply refuses (it would silently undo the edit);
  // undo makes it current again. Applying one of its layouts keeps it current.
  void a_stale_ranking_is_not_applied() {
    MainWindow window(nullptr, dir_.filePath(QStringLiteral("autosave")));
    QVERIFY(window.open_design(save(advisor_design(), QStringLiteral("f.meshloom.json"))));
    AdvisorPanel* panel = window.advisor_panel();
    panel->set_model(AdvisorPanel::ModelKind::Comm);
    QVERIFY(panel->rank());
    QVERIFY(panel->wait_idle());
    QString error;
    QVERIFY(window.document()->edit(QStringLiteral("hosts of 2"), [](const Design& d) {
      Design e = d;
      e.devices_per_host = 2;
      return e;
    }, &error));
    panel->preview(1);
    QVERIFY(!window.previewing());
    QVERIFY(!panel->apply());
    QCOMPARE(window.design().devices_per_host, std::int64_t{2});
    window.document()->undo_stack()->undo();
    QVERIFY(panel->apply());  // the best: the design's own layout, nothing to change
    panel->preview(1);
    QVERIFY(window.previewing());
    QVERIFY(panel->apply());
    QCOMPARE(window.design().mesh, panel->result().ranked[1].mesh);
    panel->preview(0);  // the ranking still holds for the design with its layout applied
    QVERIFY(panel->apply());
    QCOMPARE(window.design().mesh, panel->result().ranked[0].mesh);
  }

  // A newer request supersedes a running one: only the newest result is shown.
  void a_newer_request_supersedes() {
    MainWindow window(nullptr, dir_.filePath(QStringLiteral("autosave")));
    QVERIFY(window.open_design(save(advisor_design(), QStringLiteral("g.meshloom.json"))));
    AdvisorPanel* panel = window.advisor_panel();
    panel->set_search(AdvisorSearch::Both);
    QVERIFY(panel->rank());
    panel->set_search(AdvisorSearch::Orders);
    QVERIFY(panel->rank());
    QVERIFY(panel->wait_idle());
    QTest::qWait(50);  // let the superseded thread finish and be dropped
    QCOMPARE(panel->result().ranked.size(), std::size_t{2});
  }

  void without_a_workload_nothing_ranks() {
    Design d = advisor_design();
    d.workload.reset();
    MainWindow window(nullptr, dir_.filePath(QStringLiteral("autosave")));
    QVERIFY(window.open_design(save(d, QStringLiteral("c.meshloom.json"))));
    AdvisorPanel* panel = window.advisor_panel();
    QVERIFY(!panel->rank());
    QVERIFY2(panel->error().contains(QStringLiteral("workload")), qPrintable(panel->error()));
    QCOMPARE(panel->table_model()->rowCount(), 0);
  }

  void bad_constraints_are_named() {
    MainWindow window(nullptr, dir_.filePath(QStringLiteral("autosave")));
    QVERIFY(window.open_design(save(advisor_design(), QStringLiteral("d.meshloom.json"))));
    AdvisorPanel* panel = window.advisor_panel();
    panel->set_fixed(QStringLiteral("tp=zero"));
    QVERIFY(!panel->rank());
    QVERIFY2(panel->error().contains(QStringLiteral("tp=zero")), qPrintable(panel->error()));
    // An unknown axis is the engine's error, shown once the ranking ends.
    panel->set_fixed(QString());
    panel->set_within_host(QStringLiteral("nope"));
    QVERIFY(panel->rank());
    QVERIFY(panel->wait_idle());
    QVERIFY2(panel->error().contains(QStringLiteral("nope")), qPrintable(panel->error()));
    QCOMPARE(panel->table_model()->rowCount(), 0);
    // Keeping tp inside a host leaves the layouts whose tp groups stay on one host.
    panel->set_within_host(QStringLiteral("tp"));
    QVERIFY(panel->rank());
    QVERIFY(panel->wait_idle());
    QVERIFY2(panel->error().isEmpty(), qPrintable(panel->error()));
    QCOMPARE(panel->result().ranked.size(), std::size_t{1});
    QCOMPARE(panel->result().rejected, std::size_t{1});
  }

  void calibrated_needs_a_calibration() {
    MainWindow window(nullptr, dir_.filePath(QStringLiteral("autosave")));
    QVERIFY(window.open_design(save(advisor_design(), QStringLiteral("e.meshloom.json"))));
    AdvisorPanel* panel = window.advisor_panel();
    QVERIFY(panel->calibrated_reason().contains(QStringLiteral("no calibration")));
    panel->set_model(AdvisorPanel::ModelKind::Calibrated);
    QCOMPARE(panel->model(), AdvisorPanel::ModelKind::Comm);  // refused: the entry is disabled
  }
};

QTEST_MAIN(AdvisorDockTest)
#include "test_advisor.moc"
