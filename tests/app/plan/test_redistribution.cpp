// The redistribution panel on the offscreen platform: PlanModel under QAbstractItemModelTester; for every tensor of
// every example design, the panel's graph and greedy tables equal the engine's plan_redistribution step by step;
// impossible requests shown inline with the engine's message and no rows; source and target edits as one undoable
// command each; refused state text shown inline with the design unchanged; the calibrated model only with a
// calibration that loads; the per-axis placement pickers: every example state shown box by box as the engine's text,
// every choice one undoable edit checked against the engine's State, shard orders, refused choices, and the pickers
// following the mesh and the tensor.
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDir>
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLayout>
#include <QSpinBox>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "document/design_document.hpp"
#include "meshloom/design/design.hpp"
#include "meshloom/design/edit.hpp"
#include "meshloom/dtype.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/planner.hpp"
#include "plan/placement_picker.hpp"
#include "plan/plan_model.hpp"
#include "plan/redistribution_panel.hpp"
#include "shell/inline_message.hpp"

using namespace meshloom;
using namespace meshloom::app;

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

QString example(const char* name) { return QStringLiteral(MESHLOOM_EXAMPLES_DIR "/") + QString::fromLatin1(name); }

// The request for a design's tensor, built here from the design alone (not by the panel).
PlanRequest request_for(const Design& d, const DesignTensor& t, PlannerKind planner,
                        std::size_t budget = RedistributionPanel::kStateBudget) {
  PlanRequest r;
  r.mesh_shape = d.mesh.shape;
  r.tensor_shape = t.shape;
  r.src = t.src;
  r.dst = t.dst;
  r.planner = planner;
  r.itemsize = itemsize(t.dtype);
  r.state_budget = budget;
  for (const auto& f : d.mesh.flattened) {
    std::vector<std::size_t> group;
    for (const auto& name : f.axes) {
      group.push_back(static_cast<std::size_t>(std::find(d.mesh.names.begin(), d.mesh.names.end(), name) -
                                               d.mesh.names.begin()));
    }
    if (group.size() > 1 && std::find(r.flattened.begin(), r.flattened.end(), group) == r.flattened.end()) {
      r.flattened.push_back(group);
    }
  }
  return r;
}

// The engine's plan, or its error message.
struct Expected {
  std::optional<Plan> plan;
  QString error;
};

Expected engine_plan(const PlanRequest& r, const CostModel& model) {
  try {
    return {plan_redistribution(r, model), QString()};
  } catch (const std::exception& e) {
    return {std::nullopt, meshloom::app::error_text(e)};  // as the app shows it: the message without its kind
  }
}

// Compares a table with the engine's plan step by step: collective, axes (and the axis name shown), states,
// bytes, cost, and the total. Returns an empty string when equal, else what differs.
QString differs(const PlanModel& model, const Expected& want, const Design& d) {
  if (!want.plan) {
    if (model.rowCount() != 0) return QStringLiteral("rows without a plan");
    if (model.has_plan()) return QStringLiteral("a plan where the engine has none");
    if (model.error() != want.error) return QStringLiteral("error \"%1\" != \"%2\"").arg(model.error(), want.error);
    return {};
  }
  const Plan& p = *want.plan;
  if (model.rowCount() != static_cast<int>(p.steps.size())) {
    return QStringLiteral("%1 rows, %2 steps (%3)").arg(model.rowCount()).arg(p.steps.size()).arg(model.error());
  }
  if (model.total() != p.cost) return QStringLiteral("total %1 != %2").arg(model.total()).arg(p.cost);
  for (int row = 0; row < model.rowCount(); ++row) {
    const PlanStep& s = p.steps[static_cast<std::size_t>(row)];
    const auto at = [&](int column, int role) { return model.data(model.index(row, column), role); };
    const QString where = QStringLiteral("step %1: ").arg(row);
    if (at(PlanModel::StepColumn, Qt::DisplayRole).toInt() != row + 1) return where + QStringLiteral("index");
    if (at(PlanModel::CollectiveColumn, Qt::DisplayRole).toString() != QString::fromUtf8(to_string(s.collective).data()))
      return where + QStringLiteral("collective %1").arg(at(PlanModel::CollectiveColumn, Qt::DisplayRole).toString());
    QVariantList axes;
    for (auto a : s.axes) axes << QVariant::fromValue(static_cast<qulonglong>(a));
    if (at(PlanModel::AxisColumn, PlanModel::AxesRole).toList() != axes) return where + QStringLiteral("axes");
    if (s.axes.size() == 1 && at(PlanModel::AxisColumn, Qt::DisplayRole).toString() != q(d.mesh.names[s.axes.front()]))
      return where + QStringLiteral("axis name %1").arg(at(PlanModel::AxisColumn, Qt::DisplayRole).toString());
    if (at(PlanModel::FromToColumn, PlanModel::BeforeRole).toString() != q(to_string(s.before)) ||
        at(PlanModel::FromToColumn, PlanModel::AfterRole).toString() != q(to_string(s.after)))
      return where + QStringLiteral("states");
    const QString shown = at(PlanModel::FromToColumn, Qt::DisplayRole).toString();
    if (!shown.startsWith(q(to_string(s.before))) || !shown.endsWith(q(to_string(s.after))))
      return where + QStringLiteral("states shown as %1").arg(shown);
    if (at(PlanModel::BytesColumn, PlanModel::BytesRole).toLongLong() != s.bytes) return where + QStringLiteral("bytes");
    if (at(PlanModel::CostColumn, PlanModel::CostRole).toDouble() != s.cost) return where + QStringLiteral("cost");
    if (at(PlanModel::CostColumn, Qt::DisplayRole).toString() != model.cost_text(s.cost))
      return where + QStringLiteral("cost text");
  }
  return {};
}

QStringList example_files() {
  return QDir(QStringLiteral(MESHLOOM_EXAMPLES_DIR)).entryList({QStringLiteral("*.meshloom.json")}, QDir::Files, QDir::Name);
}

// What a picker's boxes spell: each axis' placement, and its [k] where the order box shows.
QString picker_text(const PlacementPicker& picker) {
  QString text;
  for (std::size_t a = 0; a < picker.axis_count(); ++a) {
    text += picker.placement_box(a)->currentText();
    if (!picker.order_box(a)->isHidden()) text += QStringLiteral("[%1]").arg(picker.order_box(a)->value());
  }
  return text;
}

// The state a picker choice must make, built here from the engine's State alone: axis `axis` placed at `p`; every
// dim keeps its shard order less the axes that no longer split it; a dim that `axis` newly splits gets it last.
State chosen(const State& s, std::size_t axis, const Placement& p) {
  std::vector<Placement> placements = s.placements();
  placements[axis] = p;
  std::vector<ShardOrderEntry> order;
  for (std::int64_t dim = 0; dim < static_cast<std::int64_t>(kMaxDesignTensorRank); ++dim) {
    std::vector<std::size_t> axes;
    for (const std::size_t a : s.shard_axes(dim)) {
      if (placements[a] == Placement::shard(dim)) axes.push_back(a);
    }
    if (p == Placement::shard(dim) && std::find(axes.begin(), axes.end(), axis) == axes.end()) axes.push_back(axis);
    if (!axes.empty()) order.push_back(ShardOrderEntry{dim, axes});
  }
  return State(std::move(placements), std::move(order));
}

Design cube_with(const char* src, const char* dst) {  // (pp, dp, tp) = 2x2x2, one tensor
  Design d;
  d.name = "cube";
  d.world = 8;
  d.devices_per_host = 8;
  d.mesh.shape = {2, 2, 2};
  d.mesh.names = {"pp", "dp", "tp"};
  d.tensors.push_back({"w", {64, 32}, DType::Float32, parse_state(src), parse_state(dst)});
  return d;
}

}  // namespace

class RedistributionTest : public QObject {
  Q_OBJECT

private slots:
  void plan_model_stays_consistent() {
    PlanModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(model.columnCount(), int(PlanModel::ColumnCount));
    QCOMPARE(model.summary(), QStringLiteral("No plan."));
    QCOMPARE(model.total(), 0.0);

    // hsdp-style (2, 4) with a flattened dp: the two all_gathers merge into one on dp.
    MeshSpec mesh;
    mesh.shape = {2, 4};
    mesh.names = {"dp_replicate", "dp_shard"};
    mesh.flattened = {{"dp", {"dp_replicate", "dp_shard"}}};
    PlanRequest r;
    r.mesh_shape = mesh.shape;
    r.tensor_shape = {64, 64};
    r.src = parse_state("S(0)[0]S(0)[1]");
    r.dst = parse_state("RR");
    r.flattened = {{0, 1}};
    const FixedCostModel fixed;
    auto merged = std::make_shared<const Plan>(plan_redistribution(r, fixed));
    QCOMPARE(merged->steps.size(), std::size_t{1});
    QVERIFY(merged->steps.front().merged);
    model.set_plan(merged, mesh, QString());
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.axis_text(0), QStringLiteral("dp (dp_replicate, dp_shard)"));
    QCOMPARE(model.data(model.index(0, PlanModel::CollectiveColumn)).toString(), QStringLiteral("all_gather"));
    QCOMPARE(model.data(model.index(0, PlanModel::AxisColumn), PlanModel::MergedRole).toBool(), true);
    QCOMPARE(model.total(), merged->cost);
    QCOMPARE(model.total_text(), QStringLiteral("4"));
    QVERIFY2(model.summary().contains(QStringLiteral("total 4")), qPrintable(model.summary()));
    QCOMPARE(model.headerData(PlanModel::CostColumn, Qt::Horizontal).toString(), QStringLiteral("Cost"));

    // A three-step plan under the comm model, then an error, then nothing.
    r.flattened.clear();
    r.src = parse_state("S(0)[1]S(0)[0]");
    r.dst = parse_state("RS(1)");
    const CommCostModel comm(mesh.shape, 4);
    auto three = std::make_shared<const Plan>(plan_redistribution(r, comm));
    model.set_plan(three, mesh, QStringLiteral("µs"));
    QCOMPARE(model.rowCount(), static_cast<int>(three->steps.size()));
    QVERIFY(model.total_text().endsWith(QStringLiteral(" µs")));
    QCOMPARE(model.headerData(PlanModel::CostColumn, Qt::Horizontal).toString(), QStringLiteral("Cost (µs)"));
    for (int row = 0; row < model.rowCount(); ++row) {
      for (int column = 0; column < model.columnCount(); ++column) {
        QVERIFY(model.data(model.index(row, column)).isValid());
        QVERIFY(model.flags(model.index(row, column)).testFlag(Qt::ItemIsEnabled));
        QVERIFY(!model.flags(model.index(row, column)).testFlag(Qt::ItemIsEditable));
      }
    }
    model.set_error(QStringLiteral("ValueError: something"));
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(model.error(), QStringLiteral("ValueError: something"));
    QVERIFY(!model.has_plan());
    model.clear();
    QVERIFY(model.error().isEmpty());
  }

  void tables_equal_the_engine_for_every_example_tensor() {
    const QStringList files = QDir(QStringLiteral(MESHLOOM_EXAMPLES_DIR))
                                  .entryList({QStringLiteral("*.meshloom.json")}, QDir::Files, QDir::Name);
    QVERIFY(files.size() >= 5);
    int compared = 0;
    int refused = 0;
    for (const QString& file : files) {
      DesignDocument doc;
      QString error;
      QVERIFY2(doc.open(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/") + file, &error), qPrintable(error));
      RedistributionPanel panel(&doc);
      // The models under the tester while the panel switches tensors and models.
      QAbstractItemModelTester t1(panel.graph_model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
      QAbstractItemModelTester t2(panel.greedy_model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
      QAbstractItemModelTester t3(panel.plan_model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
      const Design& d = doc.design();
      QVERIFY(!panel.calibrated_available());
      const FixedCostModel fixed;
      const CommCostModel comm(d.mesh.shape, d.devices_per_host);
      for (const auto kind : {RedistributionPanel::CostModelKind::Fixed, RedistributionPanel::CostModelKind::Comm}) {
        QVERIFY(panel.set_cost_model(kind));
        const CostModel& model = kind == RedistributionPanel::CostModelKind::Fixed
                                     ? static_cast<const CostModel&>(fixed)
                                     : static_cast<const CostModel&>(comm);
        for (const auto planner : {PlannerKind::Graph, PlannerKind::Greedy, PlannerKind::Auto}) {
          panel.set_planner(planner);
          for (const DesignTensor& t : d.tensors) {
            QVERIFY(panel.select_tensor(q(t.name)));
            QCOMPARE(panel.current_tensor(), q(t.name));
            const QString what = QStringLiteral("%1 / %2 / %3").arg(file, q(t.name), QString::fromUtf8(model.name().data()));
            const Expected graph = engine_plan(request_for(d, t, PlannerKind::Graph), model);
            const Expected greedy = engine_plan(request_for(d, t, PlannerKind::Greedy), model);
            QVERIFY2(graph.plan.has_value(), qPrintable(what + QStringLiteral(": ") + graph.error));
            QString diff = differs(*panel.graph_model(), graph, d);
            QVERIFY2(diff.isEmpty(), qPrintable(what + QStringLiteral(" graph: ") + diff));
            diff = differs(*panel.greedy_model(), greedy, d);
            QVERIFY2(diff.isEmpty(), qPrintable(what + QStringLiteral(" greedy: ") + diff));
            QCOMPARE(panel.message(QStringLiteral("graph")), graph.error);
            QCOMPARE(panel.message(QStringLiteral("greedy")), greedy.error);
            // The chosen planner's table: auto is the engine's resolve_planner.
            const Expected& chosen =
                resolve_planner(request_for(d, t, planner)) == PlannerKind::Graph ? graph : greedy;
            diff = differs(*panel.plan_model(), chosen, d);
            QVERIFY2(diff.isEmpty(), qPrintable(what + QStringLiteral(" chosen: ") + diff));
            QCOMPARE(panel.graph_model()->summary().contains(panel.graph_model()->total_text()), true);
            if (!greedy.plan) ++refused;
            ++compared;
          }
        }
      }
    }
    QVERIFY(compared >= 15 * 6);
    QVERIFY(refused > 0);  // the examples' non-default shard orders, which greedy refuses
  }

  void the_request_is_what_the_engine_is_asked() {
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(example("torchtitan-4d.meshloom.json"), &error), qPrintable(error));
    RedistributionPanel panel(&doc);
    const auto r = panel.request(PlannerKind::Graph);
    QVERIFY(r.has_value());
    QCOMPARE(r->flattened, (std::vector<std::vector<std::size_t>>{{1, 2}}));  // dp and dp_cp are one group
    QCOMPARE(r->state_budget, RedistributionPanel::kStateBudget);
    QCOMPARE(r->itemsize, std::int64_t{2});
  }

  void impossible_requests_show_the_engine_message_and_no_rows() {
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(example("default.meshloom.json"), &error), qPrintable(error));
    RedistributionPanel panel(&doc);
    QVERIFY(panel.select_tensor(QStringLiteral("weight")));  // src RS(0)[1]S(0)[0]: not the default order
    panel.set_planner(PlannerKind::Greedy);
    QCOMPARE(panel.greedy_model()->rowCount(), 0);
    QCOMPARE(panel.plan_model()->rowCount(), 0);
    QVERIFY2(panel.message(QStringLiteral("greedy")).contains(QStringLiteral("greedy planner ignores shard order")),
             qPrintable(panel.message(QStringLiteral("greedy"))));
    QCOMPARE(panel.message(QStringLiteral("plan")), panel.message(QStringLiteral("greedy")));
    QVERIFY(panel.graph_model()->rowCount() > 0);
    QVERIFY(panel.message(QStringLiteral("graph")).isEmpty());
    // The other planner in one line under the plan: graph's plan, its steps and cost.
    const QString graph_line = panel.message(QStringLiteral("other"));
    QVERIFY2(graph_line.startsWith(QStringLiteral("graph: ")) && graph_line.contains(panel.graph_model()->total_text()),
             qPrintable(graph_line));

    // With graph chosen (the first screen of the bundled default), nothing is red: greedy's refusal is a neutral
    // note under the one plan table, its whole reason in the tooltip.
    panel.set_planner(PlannerKind::Graph);
    QVERIFY(panel.message(QStringLiteral("plan")).isEmpty());
    const QString note = panel.message(QStringLiteral("other"));
    QVERIFY2(note.startsWith(QStringLiteral("greedy refuses: ")) && note.contains(QStringLiteral("shard order")),
             qPrintable(note));
    const auto* other = panel.findChild<QLabel*>(QStringLiteral("other_planner"));
    QVERIFY(other != nullptr);
    QVERIFY(other->styleSheet().isEmpty());
    QCOMPARE(other->toolTip(), panel.message(QStringLiteral("greedy")));
    QCOMPARE(panel.findChildren<QTableView*>().size(), 1);  // one plan table

    // One partial op to another: both planners refuse, with the engine's words.
    QVERIFY(panel.set_source(QStringLiteral("P(sum)RR")));
    QVERIFY(panel.set_target(QStringLiteral("P(max)RR")));
    const Expected want = engine_plan(request_for(doc.design(), doc.design().tensors[0], PlannerKind::Graph),
                                      CommCostModel(doc.design().mesh.shape, doc.design().devices_per_host));
    QVERIFY(!want.plan);
    QVERIFY(want.error.contains(QStringLiteral("partial type")));
    QCOMPARE(panel.message(QStringLiteral("graph")), want.error);
    QCOMPARE(panel.message(QStringLiteral("plan")), want.error);
    QCOMPARE(panel.graph_model()->rowCount(), 0);
    QCOMPARE(panel.plan_model()->rowCount(), 0);
    QVERIFY(panel.message(QStringLiteral("other")).startsWith(QStringLiteral("greedy refuses: ")));

    // A state that does not fit (a design that reached the document unvalidated): the engine's message.
    doc.reset(cube_with("S(5)RR", "RRR"), QString());
    QCOMPARE(panel.current_tensor(), QStringLiteral("w"));
    QVERIFY2(panel.message(QStringLiteral("graph")).contains(QStringLiteral("does not fit")),
             qPrintable(panel.message(QStringLiteral("graph"))));
    QCOMPARE(panel.graph_model()->rowCount(), 0);

    // Past the state budget: the engine's RuntimeError, no rows, and the window never waits on a long search.
    doc.reset(cube_with("S(0)[2]S(0)[0]S(0)[1]", "S(1)[1]S(1)[2]S(1)[0]"), QString());
    QVERIFY(panel.graph_model()->rowCount() > 0);
    panel.set_state_budget(3);
    const Expected over = engine_plan(
        request_for(doc.design(), doc.design().tensors[0], PlannerKind::Graph, 3),
        CommCostModel(doc.design().mesh.shape, doc.design().devices_per_host));
    QVERIFY(!over.plan);
    QVERIFY2(over.error.contains(QStringLiteral("budget")), qPrintable(over.error));
    QCOMPARE(panel.message(QStringLiteral("graph")), over.error);
    QCOMPARE(panel.graph_model()->rowCount(), 0);
    panel.set_state_budget(RedistributionPanel::kStateBudget);
    QVERIFY(panel.graph_model()->rowCount() > 0);
    QVERIFY(panel.message(QStringLiteral("graph")).isEmpty());
  }

  void editing_the_source_is_one_undoable_edit() {
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(example("default.meshloom.json"), &error), qPrintable(error));
    RedistributionPanel panel(&doc);
    QAbstractItemModelTester tester(panel.graph_model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(panel.select_tensor(QStringLiteral("activation")));
    const Design before = doc.design();
    const int commands = doc.undo_stack()->count();
    QCOMPARE(panel.source_field()->text(), QStringLiteral("RS(0)P(sum)"));

    // Typed into the field and committed with Enter (editingFinished).
    QSignalSpy changed(&doc, &DesignDocument::design_changed);
    panel.source_field()->selectAll();
    QTest::keyClicks(panel.source_field(), QStringLiteral("Shard(0), R, Shard(1)"));
    QTest::keyClick(panel.source_field(), Qt::Key_Return);
    QCOMPARE(doc.undo_stack()->count(), commands + 1);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(doc.design().tensors[1].src, parse_state("S(0)RS(1)"));
    QCOMPARE(doc.design().tensors[0], before.tensors[0]);
    QCOMPARE(panel.source_field()->text(), QStringLiteral("S(0)RS(1)"));  // the canonical form
    QVERIFY(panel.message(QStringLiteral("source")).isEmpty());
    QCOMPARE(panel.current_tensor(), QStringLiteral("activation"));
    const FixedCostModel fixed;
    panel.set_cost_model(RedistributionPanel::CostModelKind::Fixed);
    QString diff = differs(*panel.graph_model(),
                           engine_plan(request_for(doc.design(), doc.design().tensors[1], PlannerKind::Graph), fixed),
                           doc.design());
    QVERIFY2(diff.isEmpty(), qPrintable(diff));

    // The same state again pushes nothing; another target pushes one more.
    QVERIFY(panel.set_source(QStringLiteral("S(0) R S(1)")));
    QCOMPARE(doc.undo_stack()->count(), commands + 1);
    QVERIFY(panel.set_target(QStringLiteral("RRR")));
    QCOMPARE(doc.undo_stack()->count(), commands + 2);
    QCOMPARE(doc.design().tensors[1].dst, parse_state("RRR"));
    QVERIFY(doc.undo_stack()->text(commands + 1).contains(QStringLiteral("activation")));

    // Undo restores both, and the panel follows.
    doc.undo_stack()->undo();
    doc.undo_stack()->undo();
    QCOMPARE(doc.design(), before);
    QCOMPARE(panel.source_field()->text(), QStringLiteral("RS(0)P(sum)"));
    QCOMPARE(panel.target_field()->text(), QStringLiteral("RRS(1)"));
    diff = differs(*panel.graph_model(),
                   engine_plan(request_for(before, before.tensors[1], PlannerKind::Graph), fixed), before);
    QVERIFY2(diff.isEmpty(), qPrintable(diff));
    doc.undo_stack()->redo();
    QCOMPARE(doc.design().tensors[1].src, parse_state("S(0)RS(1)"));
    QCOMPARE(panel.source_field()->text(), QStringLiteral("S(0)RS(1)"));

    // Typed in both fields, not committed: commit_pending (saving, closing) applies both, one command each.
    const int now = doc.undo_stack()->index();  // one redo is left on the stack, which the next push drops
    panel.source_field()->setText(QStringLiteral("RRR"));
    panel.target_field()->setText(QStringLiteral("S(1)RR"));
    panel.commit_pending();
    QCOMPARE(doc.undo_stack()->index(), now + 2);
    QCOMPARE(doc.undo_stack()->count(), now + 2);
    QCOMPARE(doc.design().tensors[1].src, parse_state("RRR"));
    QCOMPARE(doc.design().tensors[1].dst, parse_state("S(1)RR"));
    panel.commit_pending();  // nothing pending
    QCOMPARE(doc.undo_stack()->index(), now + 2);
  }

  // The per-axis pickers show every example tensor's states axis by axis: the boxes spell the engine's text of the
  // state (the text field's), every entry and tooltip says what it places where, and the source's and the target's
  // boxes of an axis stand one above the other.
  void pickers_show_every_example_state() {
    int shown = 0;
    for (const QString& file : example_files()) {
      DesignDocument doc;
      QString error;
      QVERIFY2(doc.open(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/") + file, &error), qPrintable(error));
      RedistributionPanel panel(&doc);
      // Shown for the boxes' places, as a window of the app's dock size whose layout does not set its minimum size
      // (the offscreen platform warns about every such change).
      panel.layout()->setSizeConstraint(QLayout::SetNoConstraint);
      panel.resize(1280, 420);
      panel.show();
      const Design& d = doc.design();
      for (const DesignTensor& t : d.tensors) {
        QVERIFY(panel.select_tensor(q(t.name)));
        QApplication::processEvents();  // the layout, for the boxes' places
        const auto options = PlacementPicker::choices(static_cast<std::int64_t>(t.shape.size()));
        for (const bool source : {true, false}) {
          const State& state = source ? t.src : t.dst;
          PlacementPicker* picker = source ? panel.source_picker() : panel.target_picker();
          QLineEdit* field = source ? panel.source_field() : panel.target_field();
          const QString what = QStringLiteral("%1 / %2 / %3").arg(file, q(t.name), source ? QStringLiteral("src") : QStringLiteral("dst"));
          QVERIFY(picker->isEnabled());
          QCOMPARE(picker->state(), state);
          QCOMPARE(picker->axis_count(), d.mesh.shape.size());
          QCOMPARE(field->text(), q(to_string(state)));
          QCOMPARE(picker_text(*picker), field->text());
          QCOMPARE(parse_state(picker_text(*picker).toStdString()), state);
          for (std::size_t a = 0; a < picker->axis_count(); ++a) {
            QComboBox* box = picker->placement_box(a);
            QCOMPARE(panel.placement_picker(source, a), box);
            QCOMPARE(panel.order_picker(source, a), picker->order_box(a));
            QCOMPARE(picker->axis_label(a)->text(), q(d.mesh.names[a]));
            QCOMPARE(box->count(), static_cast<int>(options.size()));
            for (int i = 0; i < box->count(); ++i) {
              const Placement& p = options[static_cast<std::size_t>(i)];
              QCOMPARE(box->itemText(i), q(to_string(p)));
              const QString tip = box->itemData(i, Qt::ToolTipRole).toString();
              QVERIFY2(tip.startsWith(q(to_string(p)) + QStringLiteral(": ")), qPrintable(tip));
              QVERIFY2(tip.contains(QStringLiteral(" %1 ranks of %2").arg(d.mesh.shape[a]).arg(q(d.mesh.names[a]))),
                       qPrintable(tip));
              if (p.is_shard()) QVERIFY2(tip.contains(QStringLiteral("tensor dim %1 split").arg(p.dim())), qPrintable(tip));
            }
            QCOMPARE(options[static_cast<std::size_t>(box->currentIndex())], state.placement(a));
            QCOMPARE(box->toolTip(), box->itemData(box->currentIndex(), Qt::ToolTipRole).toString());
            const Placement& p = state.placement(a);
            const std::vector<std::size_t> axes = p.is_shard() ? state.shard_axes(p.dim()) : std::vector<std::size_t>{};
            QSpinBox* order = picker->order_box(a);
            QCOMPARE(!order->isHidden(), axes.size() > 1);
            if (axes.size() > 1) {
              QCOMPARE(order->maximum(), static_cast<int>(axes.size()) - 1);
              QCOMPARE(static_cast<std::size_t>(order->value()),
                       static_cast<std::size_t>(std::find(axes.begin(), axes.end(), a) - axes.begin()));
              QVERIFY2(order->toolTip().contains(QStringLiteral("Tensor dim %1 is split by").arg(p.dim())),
                       qPrintable(order->toolTip()));
            }
            // Source above target, axis by axis.
            QCOMPARE(box->mapTo(&panel, QPoint(0, 0)).x(),
                     panel.placement_picker(!source, a)->mapTo(&panel, QPoint(0, 0)).x());
            QVERIFY2(box->width() >= box->sizeHint().width(), qPrintable(what));
          }
          ++shown;
        }
      }
    }
    QVERIFY(shown >= 30);
  }

  // Every choice in every box of every example tensor: one undoable edit whose state is built here from the engine's
  // State alone and whose text is the engine's; undo restores the design, the field and the pickers.
  void every_picker_choice_is_one_undoable_edit() {
    int edits = 0;
    for (const QString& file : example_files()) {
      DesignDocument doc;
      QString error;
      QVERIFY2(doc.open(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/") + file, &error), qPrintable(error));
      RedistributionPanel panel(&doc);
      panel.set_state_budget(20'000);  // the plans of odd states need not be found, only asked for
      const Design before = doc.design();
      for (std::size_t ti = 0; ti < before.tensors.size(); ++ti) {
        const DesignTensor& t = before.tensors[ti];
        QVERIFY(panel.select_tensor(q(t.name)));
        const auto options = PlacementPicker::choices(static_cast<std::int64_t>(t.shape.size()));
        for (const bool source : {true, false}) {
          const State& state = source ? t.src : t.dst;
          PlacementPicker* picker = source ? panel.source_picker() : panel.target_picker();
          QLineEdit* field = source ? panel.source_field() : panel.target_field();
          for (std::size_t a = 0; a < state.ndim(); ++a) {
            // One other choice per axis, a different one for every axis and tensor: all of them over the examples.
            const auto now = static_cast<std::size_t>(panel.placement_picker(source, a)->currentIndex());
            const std::size_t pick = (now + 1 + (a + ti) % (options.size() - 1)) % options.size();
            const State want = chosen(state, a, options[pick]);
            const QString what = QStringLiteral("%1 / %2 / axis %3 -> %4")
                                     .arg(file, q(t.name))
                                     .arg(a)
                                     .arg(q(to_string(options[pick])));
            const int commands = doc.undo_stack()->index();  // undone commands stay counted until the next push
            panel.placement_picker(source, a)->setCurrentIndex(static_cast<int>(pick));
            QVERIFY2(panel.message(source ? QStringLiteral("source") : QStringLiteral("target")).isEmpty(),
                     qPrintable(what));
            QCOMPARE(doc.undo_stack()->index(), commands + 1);
            QCOMPARE(doc.undo_stack()->count(), commands + 1);
            const DesignTensor& after = doc.design().tensors[ti];
            QCOMPARE(source ? after.src : after.dst, want);
            QCOMPARE(source ? after.dst : after.src, source ? t.dst : t.src);
            QCOMPARE(field->text(), q(to_string(want)));
            QCOMPARE(parse_state(field->text().toStdString()), want);
            QCOMPARE(picker->state(), want);
            QCOMPARE(picker_text(*picker), field->text());
            QCOMPARE(panel.current_tensor(), q(t.name));
            doc.undo_stack()->undo();
            QCOMPARE(doc.design(), before);
            QCOMPARE(field->text(), q(to_string(state)));
            QCOMPARE(picker->state(), state);
            QCOMPARE(picker_text(*picker), field->text());
            ++edits;
          }
        }
      }
    }
    QVERIFY(edits >= 90);
  }

  // A new split joins its dim's order innermost; the order box moves an axis and the others shift; undo restores the
  // state, the field and the pickers; a split that ends leaves the others' order.
  void picker_shard_order() {
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(example("default.meshloom.json"), &error), qPrintable(error));  // (pp, dp, tp)
    RedistributionPanel panel(&doc);
    QVERIFY(panel.select_tensor(QStringLiteral("activation")));
    PlacementPicker* src = panel.source_picker();
    const State before = doc.design().tensors[1].src;  // RS(0)P(sum)
    QCOMPARE(before, parse_state("RS(0)P(sum)"));
    const int commands = doc.undo_stack()->count();
    // pp: R -> S(0): pp joins dim 0's order after dp (innermost).
    const auto options = PlacementPicker::choices(2);
    const auto s0 = static_cast<int>(std::find(options.begin(), options.end(), Placement::shard(0)) - options.begin());
    panel.placement_picker(true, 0)->setCurrentIndex(s0);
    QCOMPARE(doc.undo_stack()->count(), commands + 1);
    const State joined = doc.design().tensors[1].src;
    QCOMPARE(joined, chosen(before, 0, Placement::shard(0)));
    QCOMPARE(joined.shard_axes(0), (std::vector<std::size_t>{1, 0}));
    QCOMPARE(panel.source_field()->text(), q(to_string(joined)));
    QCOMPARE(joined, parse_state("S(0)[1]S(0)[0]P(sum)"));
    QCOMPARE(src->state(), joined);
    QVERIFY(!panel.order_picker(true, 0)->isHidden());
    QVERIFY(!panel.order_picker(true, 1)->isHidden());
    QVERIFY(panel.order_picker(true, 2)->isHidden());
    QCOMPARE(panel.order_picker(true, 0)->value(), 1);
    QCOMPARE(panel.order_picker(true, 1)->value(), 0);
    // The order box moves pp first: the default order.
    panel.order_picker(true, 0)->setValue(0);
    QCOMPARE(doc.undo_stack()->count(), commands + 2);
    const State moved = doc.design().tensors[1].src;
    QCOMPARE(moved.shard_axes(0), (std::vector<std::size_t>{0, 1}));
    QVERIFY(moved.has_default_shard_order());
    QCOMPARE(moved, parse_state("S(0)S(0)P(sum)"));
    QCOMPARE(panel.source_field()->text(), q(to_string(moved)));
    QCOMPARE(panel.order_picker(true, 0)->value(), 0);
    QCOMPARE(panel.order_picker(true, 1)->value(), 1);
    // tp joins too, innermost of three; then to the front, the others shift back.
    panel.placement_picker(true, 2)->setCurrentIndex(s0);
    QCOMPARE(doc.undo_stack()->count(), commands + 3);
    QCOMPARE(doc.design().tensors[1].src.shard_axes(0), (std::vector<std::size_t>{0, 1, 2}));
    QCOMPARE(panel.order_picker(true, 2)->value(), 2);
    QCOMPARE(panel.order_picker(true, 2)->maximum(), 2);
    panel.order_picker(true, 2)->setValue(0);
    QCOMPARE(doc.undo_stack()->count(), commands + 4);
    const State front(std::vector<Placement>(3, Placement::shard(0)), {ShardOrderEntry{0, {2, 0, 1}}});
    QCOMPARE(doc.design().tensors[1].src, front);
    QCOMPARE(panel.source_field()->text(), q(to_string(front)));
    QCOMPARE(parse_state(panel.source_field()->text().toStdString()), front);
    QCOMPARE(picker_text(*src), panel.source_field()->text());
    QCOMPARE(panel.order_picker(true, 0)->value(), 1);
    QCOMPARE(panel.order_picker(true, 1)->value(), 2);
    QCOMPARE(panel.order_picker(true, 2)->value(), 0);
    // Undo all four: the state, the field and the pickers are as they were.
    for (int i = 0; i < 4; ++i) doc.undo_stack()->undo();
    QCOMPARE(doc.undo_stack()->index(), commands);
    QCOMPARE(doc.design().tensors[1].src, before);
    QCOMPARE(panel.source_field()->text(), q(to_string(before)));
    QCOMPARE(src->state(), before);
    QCOMPARE(picker_text(*src), panel.source_field()->text());
    for (std::size_t a = 0; a < 3; ++a) QVERIFY(panel.order_picker(true, a)->isHidden());
    // Redo twice: pp and dp split dim 0 in the default order again.
    doc.undo_stack()->redo();
    doc.undo_stack()->redo();
    QCOMPARE(src->state(), moved);
    // A split that ends leaves the others' order: dp back to R.
    panel.placement_picker(true, 1)->setCurrentIndex(0);
    QCOMPARE(doc.design().tensors[1].src, chosen(moved, 1, Placement::replicate()));
    QCOMPARE(panel.source_field()->text(), q(to_string(parse_state("S(0)RP(sum)"))));
    QVERIFY(panel.order_picker(true, 0)->isHidden());
  }

  // A choice the engine refuses (here: the design's other state does not fit, which validate_design names) shows the
  // engine's message under the field, as the same text typed there does, and changes nothing.
  void refused_picker_choice_changes_nothing() {
    DesignDocument doc;
    doc.reset(cube_with("RRR", "S(5)RR"), QString());  // a design that reached the document unvalidated
    RedistributionPanel panel(&doc);
    QCOMPARE(panel.current_tensor(), QStringLiteral("w"));
    // The target does not fit: its picker shows nothing, disabled, and says why.
    QVERIFY(!panel.target_picker()->isEnabled());
    QVERIFY2(panel.target_picker()->toolTip().contains(QStringLiteral("does not fit")),
             qPrintable(panel.target_picker()->toolTip()));
    for (std::size_t a = 0; a < 3; ++a) QCOMPARE(panel.placement_picker(false, a)->currentIndex(), -1);
    QVERIFY(panel.source_picker()->isEnabled());

    const Design before = doc.design();
    const int commands = doc.undo_stack()->count();
    QSignalSpy changed(&doc, &DesignDocument::design_changed);
    const auto options = PlacementPicker::choices(2);
    const auto s1 = static_cast<int>(std::find(options.begin(), options.end(), Placement::shard(1)) - options.begin());
    panel.placement_picker(true, 1)->setCurrentIndex(s1);
    const QString message = panel.message(QStringLiteral("source"));
    QVERIFY2(message.contains(QStringLiteral("tensors[0].dst")), qPrintable(message));
    QVERIFY2(!message.contains(QStringLiteral("ValueError")), qPrintable(message));  // no exception names
    QCOMPARE(doc.design(), before);
    QCOMPARE(doc.undo_stack()->count(), commands);
    QCOMPARE(changed.count(), 0);
    // The picker shows the design's state again; the field never changed.
    QCOMPARE(panel.source_picker()->state(), before.tensors[0].src);
    QCOMPARE(panel.placement_picker(true, 1)->currentIndex(), 0);
    QCOMPARE(panel.source_field()->text(), q(to_string(before.tensors[0].src)));
    // The same state typed: the same message, word for word.
    const State wanted = chosen(before.tensors[0].src, 1, Placement::shard(1));
    QVERIFY(!panel.set_source(q(to_string(wanted))));
    QCOMPARE(panel.message(QStringLiteral("source")), message);
    QCOMPARE(doc.undo_stack()->count(), commands);
    // Once the design is fixed, the same choice is one edit and the message goes.
    QVERIFY2(panel.set_target(QStringLiteral("RRR")), qPrintable(panel.message(QStringLiteral("target"))));
    QVERIFY(panel.target_picker()->isEnabled());
    QVERIFY(panel.target_picker()->toolTip().isEmpty());
    panel.placement_picker(true, 1)->setCurrentIndex(s1);
    QVERIFY(panel.message(QStringLiteral("source")).isEmpty());
    QCOMPARE(doc.design().tensors[0].src, wanted);
    QCOMPARE(doc.undo_stack()->count(), commands + 2);
  }

  // The pickers follow the design: a typed state, axes added, renamed, resized and removed (with undo), another tensor
  // rank, another tensor, a design without tensors.
  void pickers_follow_the_mesh_and_the_tensor() {
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(example("default.meshloom.json"), &error), qPrintable(error));  // (pp, dp, tp)
    RedistributionPanel panel(&doc);
    QVERIFY(panel.select_tensor(QStringLiteral("activation")));
    PlacementPicker* src = panel.source_picker();
    PlacementPicker* dst = panel.target_picker();
    const auto names = [](const PlacementPicker& p) {
      QStringList out;
      for (std::size_t a = 0; a < p.axis_count(); ++a) out << p.axis_label(a)->text();
      return out;
    };
    const auto follows = [&](const QString& what) -> QString {
      const Design& d = doc.design();
      const DesignTensor& t = d.tensors[1];
      for (const auto& [picker, state, field] : {std::tuple{src, t.src, panel.source_field()},
                                                 std::tuple{dst, t.dst, panel.target_field()}}) {
        if (picker->axis_count() != d.mesh.shape.size()) return what + QStringLiteral(": axis count");
        if (picker->state() != state) return what + QStringLiteral(": state");
        if (picker_text(*picker) != field->text() || field->text() != q(to_string(state)))
          return what + QStringLiteral(": text %1 / %2").arg(picker_text(*picker), field->text());
        if (picker->placement_box(0)->count() != static_cast<int>(t.shape.size()) + 6)
          return what + QStringLiteral(": choices");
        for (std::size_t a = 0; a < d.mesh.shape.size(); ++a) {
          if (picker->axis_label(a)->text() != q(d.mesh.names[a])) return what + QStringLiteral(": label %1").arg(a);
          const QString tip = picker->placement_box(a)->toolTip();
          if (!tip.contains(QStringLiteral(" %1 ranks of %2").arg(d.mesh.shape[a]).arg(q(d.mesh.names[a]))))
            return what + QStringLiteral(": tooltip %1").arg(tip);
        }
      }
      return {};
    };
    QCOMPARE(follows(QStringLiteral("opened")), QString());

    // Typed in the field: the pickers show it.
    panel.source_field()->setText(QStringLiteral("Shard(1), Shard(0), Shard(1)"));
    emit panel.source_field()->editingFinished();
    QCOMPARE(src->state(), parse_state("S(1)S(0)S(1)"));
    QCOMPARE(panel.source_field()->text(), QStringLiteral("S(1)[0]S(0)S(1)[1]"));
    QVERIFY(!panel.order_picker(true, 0)->isHidden());
    QVERIFY(panel.order_picker(true, 1)->isHidden());
    QCOMPARE(follows(QStringLiteral("typed")), QString());

    const int base = doc.undo_stack()->index();
    const auto apply = [&](const QString& text, const std::function<Design(const Design&)>& edit) {
      QString why;
      const bool ok = doc.edit(text, edit, &why);
      if (!ok) qWarning("%s", qPrintable(why));
      return ok;
    };
    // A fourth axis: Replicate on it, the boxes rebuilt, the rows balanced (2 and 2), a choice on it is one edit.
    QVERIFY(apply(QStringLiteral("add ep"), [](const Design& d) { return add_axis(d, 3, "ep", 2); }));
    QCOMPARE(names(*src), (QStringList{QStringLiteral("pp"), QStringLiteral("dp"), QStringLiteral("tp"), QStringLiteral("ep")}));
    QCOMPARE(names(*dst), names(*src));
    QCOMPARE(src->axes_per_row(), 2);
    QCOMPARE(panel.placement_picker(true, 3)->currentText(), QStringLiteral("R"));
    QVERIFY(panel.placement_picker(true, 4) == nullptr);
    QCOMPARE(follows(QStringLiteral("added")), QString());
    const State with_ep = doc.design().tensors[1].src;
    const auto options = PlacementPicker::choices(2);
    const auto s1 = static_cast<int>(std::find(options.begin(), options.end(), Placement::shard(1)) - options.begin());
    panel.placement_picker(true, 3)->setCurrentIndex(s1);
    QCOMPARE(doc.undo_stack()->index(), base + 2);
    QCOMPARE(doc.design().tensors[1].src, chosen(with_ep, 3, Placement::shard(1)));
    QCOMPARE(doc.design().tensors[1].src.shard_axes(1), (std::vector<std::size_t>{0, 2, 3}));
    QCOMPARE(panel.order_picker(true, 3)->value(), 2);
    QCOMPARE(follows(QStringLiteral("chosen on ep")), QString());
    // Renamed, resized, removed.
    QVERIFY(apply(QStringLiteral("rename"), [](const Design& d) { return rename_axis(d, "tp", "mp"); }));
    QCOMPARE(names(*src), (QStringList{QStringLiteral("pp"), QStringLiteral("dp"), QStringLiteral("mp"), QStringLiteral("ep")}));
    QVERIFY(panel.order_picker(true, 0)->toolTip().contains(QStringLiteral("pp [0], then mp [1], then ep [2]")));
    QCOMPARE(follows(QStringLiteral("renamed")), QString());
    QVERIFY(apply(QStringLiteral("resize"), [](const Design& d) { return resize_axis(d, "mp", 4); }));
    QCOMPARE(follows(QStringLiteral("resized")), QString());
    QVERIFY(panel.placement_picker(true, 2)->toolTip().contains(QStringLiteral("4 ranks of mp")));
    QVERIFY(apply(QStringLiteral("remove"), [](const Design& d) { return remove_axis(d, "pp"); }));
    QCOMPARE(names(*src), (QStringList{QStringLiteral("dp"), QStringLiteral("mp"), QStringLiteral("ep")}));
    QCOMPARE(src->axes_per_row(), 3);
    QCOMPARE(follows(QStringLiteral("removed")), QString());
    // Undo back to the three axes the design opened with.
    while (doc.undo_stack()->index() > base) doc.undo_stack()->undo();
    QCOMPARE(names(*src), (QStringList{QStringLiteral("pp"), QStringLiteral("dp"), QStringLiteral("tp")}));
    QCOMPARE(src->state(), parse_state("S(1)S(0)S(1)"));
    QCOMPARE(follows(QStringLiteral("undone")), QString());

    // Another tensor rank: S(2) is offered, and chosen as one edit.
    QVERIFY(apply(QStringLiteral("rank 3"), [](const Design& d) {
      Design next = d;
      next.tensors[1].shape = {64, 1024, 8};
      validate_design(next);
      return next;
    }));
    QCOMPARE(follows(QStringLiteral("rank 3")), QString());
    const auto options3 = PlacementPicker::choices(3);
    QCOMPARE(panel.placement_picker(false, 0)->itemText(3), q(to_string(options3[3])));
    panel.placement_picker(false, 0)->setCurrentIndex(3);  // S(2)
    QCOMPARE(doc.design().tensors[1].dst, chosen(parse_state("RRS(1)"), 0, Placement::shard(2)));
    QCOMPARE(follows(QStringLiteral("S(2)")), QString());

    // Another tensor, then none: the pickers show the first's states, then hide.
    QVERIFY(panel.select_tensor(QStringLiteral("weight")));
    QCOMPARE(src->state(), doc.design().tensors[0].src);
    QCOMPARE(picker_text(*src), panel.source_field()->text());
    QCOMPARE(picker_text(*dst), panel.target_field()->text());
    QVERIFY(!src->isHidden());
    doc.new_design();
    QVERIFY(src->isHidden());
    QVERIFY(dst->isHidden());
  }

  void invalid_state_text_is_refused_inline() {
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(example("default.meshloom.json"), &error), qPrintable(error));
    RedistributionPanel panel(&doc);
    const Design before = doc.design();
    const int commands = doc.undo_stack()->count();
    QSignalSpy changed(&doc, &DesignDocument::design_changed);
    for (const QString& text : {QStringLiteral("S(9)R"), QStringLiteral("X"), QStringLiteral("S(9)RR"),
                                QStringLiteral("S(0)[1]S(0)"), QString()}) {
      QVERIFY(!panel.set_source(text));
      const QString message = panel.message(QStringLiteral("source"));
      QVERIFY2(message.contains(QStringLiteral("\"%1\"").arg(text)), qPrintable(message));
      QVERIFY2(!message.contains(QStringLiteral("Error:")), qPrintable(message));  // the reason, not an exception name
      QCOMPARE(doc.design(), before);
      QCOMPARE(doc.undo_stack()->count(), commands);
    }
    QVERIFY(!panel.set_target(QStringLiteral("X")));
    QVERIFY2(panel.message(QStringLiteral("target")).contains(QStringLiteral("Cannot parse state \"X\"")),
             qPrintable(panel.message(QStringLiteral("target"))));
    QCOMPARE(changed.count(), 0);
    // The field keeps the refused text to fix it; the plan still shows the design's states.
    panel.source_field()->setText(QStringLiteral("S(9)R"));
    emit panel.source_field()->editingFinished();
    QCOMPARE(panel.source_field()->text(), QStringLiteral("S(9)R"));
    QVERIFY(panel.message(QStringLiteral("source")).contains(QStringLiteral("does not fit")));
    QVERIFY(panel.graph_model()->rowCount() > 0);
    // A good edit answers the message.
    QVERIFY(panel.set_source(QStringLiteral("RRR")));
    QVERIFY(panel.message(QStringLiteral("source")).isEmpty());
    QVERIFY(panel.message(QStringLiteral("target")).isEmpty());
    QCOMPARE(doc.undo_stack()->count(), commands + 1);
  }

  void a_design_without_tensors_shows_a_hint() {
    DesignDocument doc;  // new: world 8, axis dp, no tensors
    RedistributionPanel panel(&doc);
    QVERIFY(panel.current_tensor().isEmpty());
    QVERIFY(panel.message(QStringLiteral("tensor")).contains(QStringLiteral("no tensors")));
    QCOMPARE(panel.graph_model()->rowCount(), 0);
    QCOMPARE(panel.plan_model()->rowCount(), 0);
    QVERIFY(panel.message(QStringLiteral("graph")).isEmpty());
    QVERIFY(!panel.request(PlannerKind::Graph).has_value());
    QVERIFY(!panel.set_source(QStringLiteral("R")));
    QVERIFY(!panel.source_field()->isEnabled());
    // Opening a design with tensors picks the first.
    QString error;
    QVERIFY2(doc.open(example("hsdp-2d.meshloom.json"), &error), qPrintable(error));
    QCOMPARE(panel.current_tensor(), QStringLiteral("attention_wq"));
    QVERIFY(panel.message(QStringLiteral("tensor")).isEmpty());
    QVERIFY(panel.graph_model()->rowCount() > 0);
    QVERIFY(panel.source_field()->isEnabled());
  }

  void calibrated_only_with_a_calibration_that_loads() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    Design d = cube_with("S(0)[0]S(0)[1]R", "RS(0)R");
    d.calibration = "cal.json";
    DesignDocument doc;
    doc.reset(d, QString());  // untitled: the relative path has no directory yet
    RedistributionPanel panel(&doc);
    QVERIFY(!panel.calibrated_available());
    QVERIFY2(panel.calibrated_reason().contains(QStringLiteral("save the design first")),
             qPrintable(panel.calibrated_reason()));
    QVERIFY(!panel.set_cost_model(RedistributionPanel::CostModelKind::Calibrated));
    QCOMPARE(panel.cost_model(), RedistributionPanel::CostModelKind::Comm);

    // Saved next to a file that is not a calibration: the engine's message.
    const QString design_path = dir.filePath(QStringLiteral("cube.meshloom.json"));
    QFile junk(dir.filePath(QStringLiteral("cal.json")));
    QVERIFY(junk.open(QIODevice::WriteOnly));
    junk.write("{}");
    junk.close();
    QString error;
    QVERIFY2(doc.save(design_path, &error), qPrintable(error));
    QVERIFY(!panel.calibrated_available());
    QVERIFY2(panel.calibrated_reason().contains(QStringLiteral("does not load")), qPrintable(panel.calibrated_reason()));

    // A real calibration: calibrated is offered and its plans are the engine's.
    Calibration c;
    c.backend = "mpi";
    c.world = 8;
    c.mesh_shape = {2, 2, 2};
    c.mesh_names = {"pp", "dp", "tp"};
    double alpha = 5;
    for (const auto& axis : c.mesh_names) {
      for (const char* coll : {"all_gather", "all_reduce", "reduce_scatter", "all_to_all"}) {
        c.axes[axis][coll] = CollectiveFit{alpha, 40.0 + alpha, 0.99, 12};
        alpha += 1;
      }
    }
    QVERIFY(junk.open(QIODevice::WriteOnly | QIODevice::Truncate));
    junk.write(QByteArray::fromStdString(to_json_text(c)));
    junk.close();
    QVERIFY2(doc.open(design_path, &error), qPrintable(error));
    QVERIFY2(panel.calibrated_available(), qPrintable(panel.calibrated_reason()));
    QVERIFY(panel.set_cost_model(RedistributionPanel::CostModelKind::Calibrated));
    const CalibratedCostModel calibrated(c, doc.design().mesh.names);
    for (const auto planner : {PlannerKind::Graph, PlannerKind::Greedy}) {
      const QString diff =
          differs(planner == PlannerKind::Graph ? *panel.graph_model() : *panel.greedy_model(),
                  engine_plan(request_for(doc.design(), doc.design().tensors[0], planner), calibrated), doc.design());
      QVERIFY2(diff.isEmpty(), qPrintable(diff));
    }
    QCOMPARE(panel.graph_model()->cost_unit(), QStringLiteral("µs"));

    // Resizing an axis makes the calibration another mesh's: calibrated is withdrawn, comm takes over.
    QVERIFY(doc.edit(QStringLiteral("resize"), [](const Design& x) {
      Design next = x;
      next.mesh.shape = {2, 2, 1};
      next.world = 4;
      next.devices_per_host = 4;
      validate_design(next);
      return next;
    }, &error));
    QVERIFY(!panel.calibrated_available());
    QVERIFY2(panel.calibrated_reason().contains(QStringLiteral("measured on a (2, 2, 2) mesh")),
             qPrintable(panel.calibrated_reason()));
    QCOMPARE(panel.cost_model(), RedistributionPanel::CostModelKind::Comm);
    QVERIFY(panel.graph_model()->rowCount() > 0);
  }
};

QTEST_MAIN(RedistributionTest)
#include "test_redistribution.moc"
