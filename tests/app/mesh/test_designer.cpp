// The mesh designer end to end on the offscreen platform: the models under QAbstractItemModelTester, every
// edit one undoable command checked against the engine, refused edits shown inline with the design intact,
// presets, documents (save, reopen, unsaved prompt, recent files), autosave and recovery after a crash.
#include <QAbstractItemModelTester>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QStatusBar>
#include <QLineEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QTableView>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QPlainTextEdit>
#include <QtTest>

#include <memory>

#include "mesh/axes_model.hpp"
#include "document/design_document.hpp"
#include "shell/main_window.hpp"
#include "canvas/mesh_grid_item.hpp"
#include "mesh/edit_dialog.hpp"
#include "mesh/mesh_panel.hpp"
#include "canvas/mesh_view.hpp"
#include "meshloom/design/edit.hpp"
#include "meshloom/design/export.hpp"
#include "meshloom/mesh/device_mesh.hpp"
#include "meshloom/plan/state.hpp"
#include "meshloom/presets/presets.hpp"
#include "mesh/preset_dialog.hpp"
#include "mesh/rank_panel.hpp"
#include "plan/redistribution_panel.hpp"
#include "mesh/slice_model.hpp"
#include "support/two_by_two_design.hpp"

using namespace meshloom;
using namespace meshloom::app;

namespace {

Design cube() {  // (dp=2, cp=2, tp=2) on 8 ranks, 4 per host
  Design d;
  d.name = "cube";
  d.world = 8;
  d.devices_per_host = 4;
  d.mesh.shape = {2, 2, 2};
  d.mesh.names = {"dp", "cp", "tp"};
  return d;
}

std::vector<std::vector<std::int64_t>> rows(const RankTensor& t) {
  std::vector<std::vector<std::int64_t>> out;
  const auto n = static_cast<std::size_t>(t.shape[0]);
  const std::size_t width = n == 0 ? 0 : t.values.size() / n;
  for (std::size_t i = 0; i < n; ++i) {
    out.emplace_back(t.values.begin() + static_cast<std::ptrdiff_t>(i * width),
                     t.values.begin() + static_cast<std::ptrdiff_t>((i + 1) * width));
  }
  return out;
}

QString read(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QStringLiteral("<unreadable>");
}

// A session that opened `path`, doubled its world, autosaved into `dir` and crashed: *edited is the design it left.
void crash_after_an_edit(const QString& dir, const QString& path, Design* edited) {
  auto w = std::make_unique<MainWindow>(nullptr, dir);
  QVERIFY(w->open_design(path));
  QVERIFY(w->mesh_panel()->set_world(w->design().world * 2));
  *edited = w->design();
  QVERIFY(w->autosave()->write_now());
  QVERIFY(QFile::exists(w->autosave()->copy_path()));
  QVERIFY(Autosave::pending(dir).empty());  // its session is alive: not offered to anyone
}  // the crash: the window goes away without closing, its copy stays

}  // namespace

class DesignerTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("MeshloomTest"));
    QCoreApplication::setApplicationName(QStringLiteral("MeshloomDesignerTest"));
    QSettings().clear();
  }

  void axes_model_stays_consistent_through_every_kind_of_edit() {
    DesignDocument doc;
    doc.reset(cube(), QString());
    AxesModel model(&doc);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 3);
    QString error;
    QVERIFY(doc.edit(QStringLiteral("flatten"), [](const Design& d) { return flatten_axes(d, {"dp", "cp"}); }, &error));
    QCOMPARE(model.rowCount(), 4);
    QCOMPARE(model.axis_name(3), std::string("dp_cp"));
    QVERIFY(model.is_flattened(3));
    QCOMPARE(model.data(model.index(3, AxesModel::MadeOf)).toString(), QStringLiteral("dp × cp"));
    QCOMPARE(model.data(model.index(3, AxesModel::Size)).toLongLong(), 4LL);
    // dp (2:4) and cp (2:2) coalesce to one mode: 4 ranks, 2 apart (the engine prints "(4,):(2,)").
    QCOMPARE(QString::fromStdString(to_string(doc.mesh().flattened("dp_cp")->axes().front())), QStringLiteral("(4,):(2,)"));
    QCOMPARE(model.data(model.index(3, AxesModel::LayoutColumn)).toString(), QStringLiteral("4:2"));
    QCOMPARE(model.data(model.index(2, AxesModel::LayoutColumn)).toString(), QStringLiteral("2:1"));
    QVERIFY(!(model.flags(model.index(3, AxesModel::Size)) & Qt::ItemIsEditable));
    QVERIFY(model.setData(model.index(0, AxesModel::Name), QStringLiteral("data")));
    QVERIFY(model.setData(model.index(2, AxesModel::Size), 4));
    QVERIFY(doc.edit(QStringLiteral("unflatten"),
                     [](const Design& d) { return unflatten_axis(d, "tp", {2, 2}, {"tp_a", "tp_b"}); }, &error));
    QVERIFY(doc.edit(QStringLiteral("add"), [](const Design& d) { return add_axis(d, 0, "pp", 2); }, &error));
    QVERIFY(doc.edit(QStringLiteral("move"), [](const Design& d) { return move_axis(d, "pp", 2); }, &error));
    QVERIFY(doc.edit(QStringLiteral("remove"), [](const Design& d) { return remove_axis(d, "cp"); }, &error));
    // Every row and column agrees with the engine after all of it.
    for (int r = 0; r < model.rowCount(); ++r) {
      const std::string name = model.axis_name(r);
      QCOMPARE(model.data(model.index(r, AxesModel::Size)).toLongLong(), doc.mesh().size(AxisRef{name}));
      const auto groups = doc.mesh().groups(AxisRef{name});
      QVERIFY(model.data(model.index(r, AxesModel::Groups)).toString().contains(QString::number(groups.shape[0])));
    }
    while (doc.undo_stack()->canUndo()) doc.undo_stack()->undo();
    QCOMPARE(doc.design(), cube());
    QCOMPARE(model.rowCount(), 3);
  }

  // An edit says what else it changed: resizing tp of the (2,2,2) example on 8 ranks of one host to 3 makes the
  // world 12, on hosts of 4; the undo entry and the edited() signal (the status bar) both say so.
  void an_edit_says_its_side_effects() {
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/default.meshloom.json"), &error), qPrintable(error));
    const Design before = doc.design();
    AxesModel model(&doc);
    QSignalSpy edited(&doc, &DesignDocument::edited);
    QVERIFY(model.setData(model.index(model.row_of("tp"), AxesModel::Size), 3));
    QCOMPARE(doc.design().world, before.world / 2 * 3);
    QCOMPARE(edited.count(), 1);
    const QString said = doc.undo_stack()->text(doc.undo_stack()->index() - 1);
    QCOMPARE(edited.takeFirst().at(0).toString(), said);
    QCOMPARE(said, QStringLiteral("Resize tp to 3; world 8 → 12, devices per host 8 → 4"));
    QCOMPARE(DesignDocument::side_effects(before, doc.design()), said.mid(QStringLiteral("Resize tp to 3").size()));
    // An edit without side effects says only what it did.
    QVERIFY(model.setData(model.index(model.row_of("tp"), AxesModel::Name), QStringLiteral("mp")));
    QCOMPARE(doc.undo_stack()->text(doc.undo_stack()->index() - 1), QStringLiteral("Rename tp to mp"));
  }

  void a_rename_is_one_undoable_edit_and_carries_the_slice_pick() {
    DesignDocument doc;
    doc.reset(cube(), QString());
    AxesModel model(&doc);
    model.set_picked({"tp"});
    QVERIFY(model.setData(model.index(2, AxesModel::Name), QStringLiteral("mp")));
    QCOMPARE(doc.design().mesh.names, (std::vector<std::string>{"dp", "cp", "mp"}));
    QCOMPARE(doc.undo_stack()->count(), 1);
    QCOMPARE(doc.undo_stack()->undoText(), QStringLiteral("Rename tp to mp"));
    QCOMPARE(model.picked(), std::vector<std::string>{"mp"});
    QVERIFY(doc.is_modified());
    doc.undo_stack()->undo();
    QCOMPARE(doc.design(), cube());
    QVERIFY(!doc.is_modified());
    doc.undo_stack()->redo();
    QCOMPARE(doc.design().mesh.names[2], std::string("mp"));
  }

  void refused_edits_leave_the_design_and_history_alone_and_say_why() {
    DesignDocument doc;
    doc.reset(cube(), QString());
    AxesModel model(&doc);
    QSignalSpy refused(&model, &AxesModel::edit_refused);
    QVERIFY(!model.setData(model.index(1, AxesModel::Size), 0));
    QVERIFY(!model.setData(model.index(1, AxesModel::Size), QStringLiteral("two")));
    QVERIFY(!model.setData(model.index(0, AxesModel::Name), QStringLiteral("tp")));      // in use
    QVERIFY(!model.setData(model.index(0, AxesModel::Name), QStringLiteral("bad name")));  // not [A-Za-z0-9_]
    QCOMPARE(refused.count(), 4);
    QVERIFY2(refused[0][1].toString().contains(QLatin1String("0")), qPrintable(refused[0][1].toString()));
    QVERIFY2(refused[1][1].toString().contains(QLatin1String("two")), qPrintable(refused[1][1].toString()));
    QVERIFY2(refused[2][1].toString().contains(QLatin1String("tp")), qPrintable(refused[2][1].toString()));
    QVERIFY2(refused[3][1].toString().contains(QLatin1String("bad name")), qPrintable(refused[3][1].toString()));
    QCOMPARE(doc.design(), cube());
    QCOMPARE(doc.undo_stack()->count(), 0);

    // The panel shows the message next to the field at fault, and only there.
    MeshPanel panel(&doc, &model);
    QVERIFY(!panel.set_world(6));  // 4 devices per host do not divide 6
    QVERIFY2(panel.message(QStringLiteral("world")).contains(QLatin1String("6")), qPrintable(panel.message(QStringLiteral("world"))));
    QVERIFY(panel.message(QStringLiteral("devices")).isEmpty());
    QVERIFY(panel.set_world(16));
    QVERIFY(panel.message(QStringLiteral("world")).isEmpty());
    QVERIFY(!panel.set_devices_per_host(3));
    QVERIFY(panel.message(QStringLiteral("devices")).contains(QLatin1String("3")));
    QVERIFY(!panel.set_design_name(QString()));
    QVERIFY(!panel.message(QStringLiteral("name")).isEmpty());
    QCOMPARE(doc.design().world, 16);
  }

  // The Add axis and Unflatten dialogs check what is typed as it is typed: a bad value says why under the fields,
  // OK stays disabled and the text stays; a good one previews the edit (the mesh and what else changes).
  void edit_dialogs_validate_inline_and_preview() {
    DesignDocument doc;
    doc.reset(cube(), QString());
    const Design before = doc.design();
    AxesModel model(&doc);
    MeshPanel panel(&doc, &model);
    panel.select_axis("dp");
    const auto add = panel.make_add_dialog();
    QVERIFY(add->minimumWidth() >= 480);
    QVERIFY(add->can_accept());  // the suggestion (a free name, size 2) is an edit the engine takes
    add->field(0)->setText(QStringLiteral("pp"));
    add->field(1)->setText(QStringLiteral("two"));
    QVERIFY(!add->can_accept());
    QCOMPARE(add->error(), QStringLiteral("Size \"two\" is not a whole number"));
    QCOMPARE(add->field(1)->text(), QStringLiteral("two"));  // what was typed stays
    add->field(1)->setText(QStringLiteral("0"));
    QVERIFY(!add->can_accept());
    QVERIFY2(add->error().contains(QLatin1String("0")), qPrintable(add->error()));
    add->field(0)->setText(QStringLiteral("tp"));  // in use
    add->field(1)->setText(QStringLiteral("2"));
    QVERIFY(!add->can_accept());
    QVERIFY2(add->error().contains(QLatin1String("tp")), qPrintable(add->error()));
    add->field(0)->setText(QStringLiteral("pp"));
    QVERIFY(add->can_accept());
    QVERIFY(add->error().isEmpty());
    QCOMPARE(add->preview(), QStringLiteral("Mesh (dp 2, pp 2, cp 2, tp 2); world 8 → 16"));
    QCOMPARE(doc.design(), before);  // nothing happens before OK

    panel.select_axis("tp");
    const auto split = panel.make_unflatten_dialog();
    QVERIFY(split != nullptr);
    QVERIFY(!split->can_accept());  // nothing typed yet
    split->field(0)->setText(QStringLiteral("3, 1"));
    split->field(1)->setText(QStringLiteral("tp_a, tp_b"));
    QVERIFY(!split->can_accept());
    QVERIFY2(!split->error().isEmpty(), "a product that is not the axis size is refused");
    split->field(0)->setText(QStringLiteral("2, 1"));
    QVERIFY2(split->can_accept(), qPrintable(split->error()));
    QCOMPARE(split->preview(), QStringLiteral("Mesh (dp 2, cp 2, tp_a 2, tp_b 1)"));
    QCOMPARE(doc.design(), before);
  }

  void the_panel_adds_moves_flattens_unflattens_and_removes_through_the_engine() {
    DesignDocument doc;
    doc.reset(cube(), QString());
    AxesModel model(&doc);
    MeshPanel panel(&doc, &model);
    panel.select_axis("dp");
    QVERIFY(panel.add_axis("pp", 2));  // after dp
    QCOMPARE(doc.design().mesh.names, (std::vector<std::string>{"dp", "pp", "cp", "tp"}));
    QCOMPARE(doc.design().world, 16);  // the world followed the mesh
    QCOMPARE(panel.current_axis(), std::string("pp"));
    QVERIFY(panel.move_current(-1));
    QCOMPARE(doc.design().mesh.names, (std::vector<std::string>{"pp", "dp", "cp", "tp"}));
    QVERIFY(!panel.move_current(-1));  // already outermost

    model.set_picked({"dp", "cp"});
    QVERIFY(panel.flatten_picked(QString()));  // PyTorch's default name
    QCOMPARE(doc.design().mesh.flattened.back(), (FlattenSpec{"dp_cp", {"dp", "cp"}}));
    const DeviceMesh built = build_mesh(doc.design().mesh, doc.design().world);
    QCOMPARE(rows(doc.mesh().groups(AxisRef{std::string("dp_cp")})),
             rows(built.slice({"dp", "cp"}).flatten("dp_cp").groups(0)));

    // An out-of-order pick is refused with PyTorch's rule and nothing changes.
    const Design before = doc.design();
    model.set_picked({"tp", "dp"});
    QVERIFY(!panel.flatten_picked(QStringLiteral("x")));
    QVERIFY2(panel.message(QStringLiteral("axes")).contains(QLatin1String("ascending")), qPrintable(panel.message(QStringLiteral("axes"))));
    QCOMPARE(doc.design(), before);

    panel.select_axis("tp");
    QVERIFY(!panel.unflatten_current(QStringLiteral("3"), QStringLiteral("a")));  // 3 != 2
    QVERIFY(panel.message(QStringLiteral("axes")).contains(QLatin1String("product")));
    QVERIFY(!panel.unflatten_current(QStringLiteral("1, two"), QStringLiteral("a, b")));
    QVERIFY(panel.message(QStringLiteral("axes")).contains(QLatin1String("\"two\"")));
    QVERIFY(panel.unflatten_current(QStringLiteral("2 1"), QStringLiteral("tp_a, tp_b")));
    QCOMPARE(doc.design().mesh.names, (std::vector<std::string>{"pp", "dp", "cp", "tp_a", "tp_b"}));
    // The unflattened groups are the engine's DeviceMesh::unflatten groups.
    const DeviceMesh unflat = build_mesh(before.mesh, before.world).unflatten(AxisRef{std::string("tp")}, {2, 1}, {"tp_a", "tp_b"});
    for (const char* axis : {"pp", "dp", "cp", "tp_a", "tp_b"}) {
      QCOMPARE(rows(doc.mesh().groups(AxisRef{std::string(axis)})), rows(unflat.groups(AxisRef{std::string(axis)})));
    }

    panel.select_axis("cp");
    QVERIFY(panel.remove_current());  // takes dp_cp with it
    QCOMPARE(doc.undo_stack()->undoText(), QStringLiteral("Remove axis cp (and flattened dp_cp); world 16 → 8"));
    QVERIFY(doc.design().mesh.flattened.empty());
    while (doc.undo_stack()->canUndo()) doc.undo_stack()->undo();
    QCOMPARE(doc.design(), cube());
  }

  // What the user is typing is not thrown away by another edit arriving mid-word (the dock's buttons take no focus)
  // nor by an undo: it is committed when the field is left. After an undo the selection stays on its axis, so that
  // Remove takes the axis the user picked, not the one that came back before it.
  void typing_survives_other_edits_and_the_selection_follows_its_axis() {
    DesignDocument doc;
    doc.reset(cube(), QString());
    AxesModel model(&doc);
    MeshPanel panel(&doc, &model);
    auto* name = panel.findChild<QLineEdit*>(QStringLiteral("design_name"));
    auto* description = panel.findChild<QPlainTextEdit*>(QStringLiteral("design_description"));
    QVERIFY(name != nullptr && description != nullptr);
    name->setFocus();
    QTest::keyClicks(name, QStringLiteral("-renamed"));
    description->setPlainText(QStringLiteral("typed, not yet committed"));
    panel.select_axis("cp");
    QVERIFY(panel.move_current(-1));  // another edit while both fields hold typing
    QCOMPARE(name->text(), QStringLiteral("cube-renamed"));
    QCOMPARE(description->toPlainText(), QStringLiteral("typed, not yet committed"));
    doc.undo_stack()->undo();  // and an undo
    QCOMPARE(name->text(), QStringLiteral("cube-renamed"));
    QCOMPARE(description->toPlainText(), QStringLiteral("typed, not yet committed"));
    panel.commit_pending();
    QCOMPARE(doc.design().name, std::string("cube-renamed"));
    QCOMPARE(doc.design().description, std::optional<std::string>("typed, not yet committed"));
    // Committed, the fields follow the design again: undo both edits.
    doc.undo_stack()->undo();
    doc.undo_stack()->undo();
    QCOMPARE(name->text(), QStringLiteral("cube"));
    QCOMPARE(description->toPlainText(), QString());

    // Select tp, undo a removal of dp: tp moves down a row and stays selected.
    panel.select_axis("dp");
    QVERIFY(panel.remove_current());
    panel.select_axis("tp");
    doc.undo_stack()->undo();
    QCOMPARE(doc.design().mesh.names, (std::vector<std::string>{"dp", "cp", "tp"}));
    QCOMPARE(panel.current_axis(), std::string("tp"));
  }

  void a_cells_typing_survives_other_edits_and_a_reorder_closes_it() {
    DesignDocument doc;
    doc.reset(cube(), QString());
    AxesModel model(&doc);
    MeshPanel panel(&doc, &model);
    auto* table = panel.findChild<QTableView*>();
    QVERIFY(table != nullptr);
    const QModelIndex tp = model.index(2, AxesModel::Name);
    table->edit(tp);
    auto* editor = qobject_cast<QLineEdit*>(table->indexWidget(tp));
    QVERIFY(editor != nullptr);
    editor->selectAll();
    QTest::keyClicks(editor, QStringLiteral("tensor"));
    QString error;
    // An edit that keeps every axis on its row: the editor stays open and keeps the typing (Qt's view refills
    // an open editor on every dataChanged over its cell).
    QVERIFY(doc.edit(QStringLiteral("devices"), [](const Design& d) { return set_devices_per_host(d, 2); }, &error));
    QCOMPARE(table->indexWidget(tp), editor);
    QCOMPARE(editor->text(), QStringLiteral("tensor"));
    QTest::keyClick(editor, Qt::Key_Return);  // committed (the delegate queues it): one rename
    QTRY_COMPARE(doc.design().mesh.names, (std::vector<std::string>{"dp", "cp", "tensor"}));
    doc.undo_stack()->undo();
    QCOMPARE(doc.design().mesh.names, (std::vector<std::string>{"dp", "cp", "tp"}));

    // Typing on a row whose axis an undo moves: the editor closes (committed, it would rename another axis).
    QVERIFY(doc.edit(QStringLiteral("move"), [](const Design& d) { return move_axis(d, "dp", 2); }, &error));
    const QModelIndex first = model.index(0, AxesModel::Name);  // cp now
    table->edit(first);
    editor = qobject_cast<QLineEdit*>(table->indexWidget(first));
    QVERIFY(editor != nullptr);
    editor->selectAll();
    QTest::keyClicks(editor, QStringLiteral("typed"));
    doc.undo_stack()->undo();  // dp back on row 0
    QCOMPARE(table->indexWidget(model.index(0, AxesModel::Name)), static_cast<QWidget*>(nullptr));
    QCOMPARE(doc.design().mesh.names, (std::vector<std::string>{"dp", "cp", "tp"}));
  }

  void slices_list_the_engines_groups_and_explain_invalid_picks() {
    DesignDocument doc;
    doc.reset(cube(), QString());
    SliceModel slices;
    QAbstractItemModelTester tester(&slices, QAbstractItemModelTester::FailureReportingMode::QtTest);
    for (const std::vector<std::string>& axes : {std::vector<std::string>{"tp"}, {"dp", "tp"}, {"dp", "cp", "tp"}}) {
      slices.set_slice(doc.mesh(), axes);
      QVERIFY(slices.error().isEmpty());
      QCOMPARE(slices.slice().groups, rows([&] {
                 RankTensor t = doc.mesh().slice(axes).instances();
                 t.shape = {t.shape[0], static_cast<std::int64_t>(t.values.size()) / t.shape[0]};
                 return t;
               }()));
      QCOMPARE(slices.rowCount(), static_cast<int>(slices.slice().groups.size()));
      for (int g = 0; g < slices.rowCount(); ++g) {
        for (auto r : slices.slice().groups[static_cast<std::size_t>(g)]) QCOMPARE(slices.group_of_rank(r), g);
      }
    }
    QCOMPARE(slices.summary(), QStringLiteral("mesh[\"dp\", \"cp\", \"tp\"]: 1 group of 8 ranks"));
    // Singular where a count is 1 ("1 group", "1 rank"), plural elsewhere.
    slices.set_slice(DeviceMesh::init({4, 1}, DeviceMesh::Names{"dp", "cp"}), {"cp"});
    QCOMPARE(slices.summary(), QStringLiteral("mesh[\"cp\"]: 4 groups of 1 rank"));
    slices.set_slice(doc.mesh(), {"tp"});
    QCOMPARE(slices.summary(), QStringLiteral("mesh[\"tp\"]: 4 groups of 2 ranks"));
    slices.set_slice(doc.mesh(), {"tp", "dp"});
    QCOMPARE(slices.rowCount(), 0);
    QVERIFY(slices.error().contains(QLatin1String("ascending order")));
    QVERIFY(slices.error().contains(QLatin1String("outer to inner")));
    QString error;
    QVERIFY(doc.edit(QStringLiteral("flatten"), [](const Design& d) { return flatten_axes(d, {"dp", "cp"}); }, &error));
    slices.set_slice(doc.mesh(), {"dp_cp", "cp"});
    QVERIFY(slices.error().contains(QLatin1String("overlapping")));
    QVERIFY(slices.error().contains(QLatin1String("each mesh axis once")));
    slices.set_slice(doc.mesh(), {"dp_cp"});
    QCOMPARE(slices.slice().groups, rows(doc.mesh().groups(AxisRef{std::string("dp_cp")})));
  }

  void the_rank_panel_shows_the_engines_coordinate_and_local_ranks() {
    DesignDocument doc;
    doc.reset(cube(), QString());
    QString error;
    QVERIFY(doc.edit(QStringLiteral("flatten"), [](const Design& d) { return flatten_axes(d, {"dp", "tp"}); }, &error));
    RankPanel panel(&doc);
    panel.show_rank(5);
    QCOMPARE(panel.value(QStringLiteral("Coordinate")), QStringLiteral("(dp=1, cp=0, tp=1)"));
    QCOMPARE(panel.value(QStringLiteral("Host")), QStringLiteral("1 (device 1 of 4)"));
    QCOMPARE(panel.value(QStringLiteral("tp")), QStringLiteral("local rank 1 of 2"));
    QCOMPARE(panel.value(QStringLiteral("dp_tp")), QStringLiteral("local rank %1 of 4").arg(doc.mesh().local_rank(5, AxisRef{std::string("dp_tp")})));
    panel.show_rank(std::nullopt);
    QVERIFY(panel.value(QStringLiteral("Coordinate")).isEmpty());
  }

  void presets_build_the_engines_mesh_and_refuse_bad_degrees() {
    std::map<std::string, std::int64_t> degrees;
    QString error;
    QVERIFY(parse_degrees(QStringLiteral("world_size=64, tp=8 pp=2"), &degrees, &error));
    QCOMPARE(degrees.size(), std::size_t{3});
    QVERIFY(!parse_degrees(QStringLiteral("tp=eight"), &degrees, &error));
    QVERIFY(error.contains(QLatin1String("tp=eight")));

    PresetDialog dialog(QStringLiteral("megatron"));
    QVERIFY(dialog.mesh().has_value());  // the example degrees build
    dialog.set_fields(QStringLiteral("tp-pp-dp"), QStringLiteral("world_size=16, tp=2, pp=2"));
    QCOMPARE(*dialog.mesh(), build_preset("megatron:tp-pp-dp", {{"world_size", 16}, {"tp", 2}, {"pp", 2}}));
    dialog.set_fields(QStringLiteral("tp-pp"), QStringLiteral("world_size=16, tp=2, pp=2"));
    QVERIFY(!dialog.mesh().has_value());
    QVERIFY2(dialog.preview().contains(QLatin1String("haven't specified the order")), qPrintable(dialog.preview()));

    QTemporaryDir autosave;
    MainWindow w(nullptr, autosave.path());
    QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/default.meshloom.json")));
    const Design before = w.design();
    QVERIFY(!w.apply_preset(PresetRequest{"torchtitan", {{"world_size", 64}, {"tp", 3}}}));
    QVERIFY2(w.last_error().contains(QLatin1String("tp(3)")), qPrintable(w.last_error()));
    QCOMPARE(w.design(), before);
    const PresetRequest titan{"torchtitan", {{"world_size", 64}, {"dp_replicate", 2}, {"cp", 2}, {"tp", 8}}};
    QVERIFY2(w.apply_preset(titan), qPrintable(w.last_error()));
    QCOMPARE(w.design().mesh, build_preset(titan.name, titan.degrees));
    QCOMPARE(w.design().world, 64);
    QCOMPARE(static_cast<qint64>(w.grid()->cell_count()), 64);
    // The preset names and describes the design, and the Mesh dock shows both.
    QCOMPARE(w.design().name, std::string("torchtitan (cp=2, dp_replicate=2, tp=8, world_size=64)"));
    QVERIFY(w.design().description && !w.design().description->empty());
    const auto* description = w.findChild<QPlainTextEdit*>(QStringLiteral("design_description"));
    QVERIFY(description != nullptr);
    QCOMPARE(description->toPlainText(), QString::fromStdString(*w.design().description));
    QVERIFY(w.document()->undo_stack()->undoText().contains(QLatin1String("name and description from the preset")));
    w.document()->undo_stack()->undo();
    QCOMPARE(w.design(), before);
    QCOMPARE(description->toPlainText(), QString::fromStdString(before.description.value_or(std::string())));
    // The description is the user's to edit: one undoable edit; cleared, the design has none.
    QVERIFY(w.mesh_panel()->set_description(QStringLiteral("  Two hosts of four.  ")));
    QCOMPARE(w.design().description, std::optional<std::string>("Two hosts of four."));
    QVERIFY(w.mesh_panel()->set_description(QString()));
    QVERIFY(!w.design().description);
    w.document()->undo_stack()->undo();
    QCOMPARE(w.design().description, std::optional<std::string>("Two hosts of four."));
    w.document()->undo_stack()->undo();
    QCOMPARE(w.design(), before);
    QVERIFY(w.apply_preset(PresetRequest{"llama3_405b", {}}));
    QCOMPARE(w.design().name, std::string("llama3_405b"));
    QCOMPARE(static_cast<qint64>(w.grid()->cell_count()), 16384);
  }

  // The description box turns "\r\n" and a non-breaking space into "\n" and a space; a file whose description holds
  // them is not edited by opening it and saving (or closing) untouched, nor by focusing the box and leaving it.
  // A recent file that was deleted is dropped from the list before the unsaved changes are asked about.
  void a_deleted_recent_file_is_dropped_without_asking() {
    QTemporaryDir tmp;
    const QString path = tmp.filePath(QStringLiteral("gone.meshloom.json"));
    QVERIFY(QFile::copy(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/default.meshloom.json"), path));
    MainWindow w(nullptr, tmp.filePath(QStringLiteral("autosave")));
    QVERIFY(w.open_design(path));
    QVERIFY(w.recent_files().contains(QFileInfo(path).absoluteFilePath()));
    QVERIFY(w.mesh_panel()->set_world(16));  // unsaved changes
    int asked = 0;
    w.set_unsaved_prompt([&asked](const QString&) {
      ++asked;
      return QMessageBox::Cancel;
    });
    QVERIFY(QFile::remove(path));
    QString error;
    QVERIFY(!w.open_recent(QFileInfo(path).absoluteFilePath(), &error));
    QCOMPARE(asked, 0);
    QVERIFY2(error.contains(QLatin1String("no longer exists")), qPrintable(error));
    QVERIFY(!w.recent_files().contains(QFileInfo(path).absoluteFilePath()));
    QVERIFY(w.document()->is_modified());  // the design in the window is untouched
    // One that exists asks first: a cancel opens nothing and says nothing.
    const QString other = tmp.filePath(QStringLiteral("other.meshloom.json"));
    QVERIFY(QFile::copy(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/default.meshloom.json"), other));
    QVERIFY(!w.open_recent(other, &error));
    QCOMPARE(asked, 1);
    QVERIFY(error.isEmpty());
  }

  void an_untouched_description_is_no_edit() {
    QTemporaryDir tmp;
    MainWindow w(nullptr, tmp.filePath(QStringLiteral("autosave")));
    QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/default.meshloom.json")));
    Design described = w.design();
    described.description = "Two hosts\u00a0of four.\r\nA second line.";
    const QString path = tmp.filePath(QStringLiteral("described.meshloom.json"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QByteArray::fromStdString(to_json_text(described)));
    file.close();
    QVERIFY2(w.open_design(path), qPrintable(w.last_error()));
    auto* box = w.findChild<QPlainTextEdit*>(QStringLiteral("design_description"));
    QVERIFY(box != nullptr);
    QVERIFY(box->toPlainText() != QString::fromStdString(*described.description));  // what the widget made of it
    w.mesh_panel()->commit_pending();
    QFocusEvent out(QEvent::FocusOut);
    QCoreApplication::sendEvent(box, &out);
    QVERIFY(!w.document()->is_modified());
    QCOMPARE(w.document()->undo_stack()->count(), 0);
    QCOMPARE(w.design().description, described.description);
    // Typing in the box is still one edit.
    box->setPlainText(QStringLiteral("Edited."));
    w.mesh_panel()->commit_pending();
    QCOMPARE(w.design().description, std::optional<std::string>("Edited."));
    QCOMPARE(w.document()->undo_stack()->count(), 1);
  }

  void save_reopen_and_refuse_what_cannot_be_written() {
    QTemporaryDir tmp;
    MainWindow w(nullptr, tmp.filePath(QStringLiteral("autosave")));
    QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/hsdp-2d.meshloom.json")));
    QCOMPARE(w.recent_files().front(), QFileInfo(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/hsdp-2d.meshloom.json")).absoluteFilePath());
    QVERIFY(w.mesh_panel()->set_world(16));
    QVERIFY(w.document()->is_modified());
    QVERIFY(w.isWindowModified());
    const QString path = tmp.filePath(QStringLiteral("mine.meshloom.json"));
    QVERIFY2(w.save_design(path), qPrintable(w.last_error()));
    QVERIFY(!w.document()->is_modified());
    QCOMPARE(w.document()->path(), path);
    QCOMPARE(read(path).toStdString(), to_json_text(w.design()));
    QCOMPARE(w.recent_files().front(), QFileInfo(path).absoluteFilePath());

    MainWindow other(nullptr, tmp.filePath(QStringLiteral("autosave")));
    QVERIFY(other.open_design(path));
    QCOMPARE(other.design(), w.design());

    const QString saved = read(path);
    QVERIFY(w.mesh_panel()->set_world(32));
    QVERIFY(!w.save_design(tmp.filePath(QStringLiteral("missing/dir/x.meshloom.json"))));
    QVERIFY(w.last_error().contains(QLatin1String("missing/dir")));
    QVERIFY(w.document()->is_modified());
    QCOMPARE(w.document()->path(), path);
    QCOMPARE(read(path), saved);
  }

  void unsaved_changes_are_asked_about_before_they_are_lost() {
    QTemporaryDir tmp;
    MainWindow w(nullptr, tmp.filePath(QStringLiteral("autosave")));
    QVERIFY(w.maybe_save());  // nothing to lose: no question
    int asked = 0;
    auto answer = QMessageBox::Cancel;
    w.set_unsaved_prompt([&](const QString&) {
      ++asked;
      return answer;
    });
    QVERIFY(w.maybe_save());
    QCOMPARE(asked, 0);
    QVERIFY(w.mesh_panel()->set_world(16));
    QVERIFY(!w.maybe_save());
    QCOMPARE(asked, 1);
    QVERIFY(!w.close());  // Cancel keeps the window open
    QCOMPARE(asked, 2);
    answer = QMessageBox::Discard;
    QVERIFY(w.maybe_save());
  }

  void a_crash_leaves_an_autosave_that_the_next_start_recovers() {
    QTemporaryDir tmp;
    const QString dir = tmp.filePath(QStringLiteral("autosave"));
    const QString path = tmp.filePath(QStringLiteral("d.meshloom.json"));
    QVERIFY(QFile::copy(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/default.meshloom.json"), path));
    Design edited;
    crash_after_an_edit(dir, path, &edited);
    if (QTest::currentTestFailed()) return;
    const auto pending = Autosave::pending(dir);
    QCOMPARE(pending.size(), std::size_t{1});
    QCOMPARE(pending.front().origin, path);
    MainWindow next(nullptr, dir);
    QVERIFY(next.recover(pending.front()));
    QCOMPARE(next.design(), edited);
    QCOMPARE(next.document()->path(), path);
    QVERIFY(next.document()->is_modified());
    QVERIFY(!QFile::exists(pending.front().copy));
    next.document()->undo_stack()->undo();  // back to the file as it was saved
    QCOMPARE(next.design(), load_design(path.toStdString()));
    // Saving removes this session's copy.
    next.document()->undo_stack()->redo();
    QVERIFY(next.autosave()->write_now());
    QVERIFY(QFile::exists(next.autosave()->copy_path()));
    QVERIFY(next.save_design(path));
    QVERIFY(!QFile::exists(next.autosave()->copy_path()));
  }

  // A file opened by a relative name is the document's absolutely: a crash's copy, recovered by a session started in
  // another folder, lands on that file and on no other of the same relative name.
  void a_relative_path_is_recorded_absolutely() {
    QTemporaryDir tmp;
    const QString dir = tmp.filePath(QStringLiteral("autosave"));
    // a/d.meshloom.json from the folder of the session that crashed, another design under that name from b.
    QVERIFY(QDir(tmp.path()).mkpath(QStringLiteral("a")) && QDir(tmp.path()).mkpath(QStringLiteral("b/a")));
    const QString path = tmp.filePath(QStringLiteral("a/d.meshloom.json"));
    QVERIFY(QFile::copy(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/default.meshloom.json"), path));
    QVERIFY(QFile::copy(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/hsdp-2d.meshloom.json"),
                        tmp.filePath(QStringLiteral("b/a/d.meshloom.json"))));
    // The working directory is the test's to change and to give back, whatever fails.
    struct Restore {
      QString dir = QDir::currentPath();
      ~Restore() { QDir::setCurrent(dir); }
    } restore;
    QVERIFY(QDir::setCurrent(tmp.path()));
    Design edited;
    crash_after_an_edit(dir, QStringLiteral("a/d.meshloom.json"), &edited);
    QVERIFY(QDir::setCurrent(tmp.filePath(QStringLiteral("b"))));  // the next session starts elsewhere
    const auto pending = Autosave::pending(dir);
    QCOMPARE(pending.size(), std::size_t{1});
    QCOMPARE(pending.front().origin, QFileInfo(path).absoluteFilePath());
    DesignDocument doc;
    QVERIFY(QDir::setCurrent(tmp.path()));
    QString error;
    QVERIFY2(doc.open(QStringLiteral("a/d.meshloom.json"), &error), qPrintable(error));
    QCOMPARE(doc.path(), QFileInfo(path).absoluteFilePath());
  }

  // A copy older than its file (the file saved since, by a later session or another window) does not undo what was
  // saved: it opens as an untitled design, the file as it is, and a calibration named from the file's folder still
  // names its file (absolutely: the untitled design has no folder).
  void a_copy_older_than_its_file_opens_beside_it() {
    QTemporaryDir tmp;
    const QString dir = tmp.filePath(QStringLiteral("autosave"));
    const QString path = tmp.filePath(QStringLiteral("d.meshloom.json"));
    QVERIFY(QDir(tmp.path()).mkpath(QStringLiteral("cal")));
    QVERIFY(QFile::copy(QStringLiteral(MESHLOOM_CALIBRATION_DIR "/local-2x2.calibration.json"),
                        tmp.filePath(QStringLiteral("cal/c.json"))));
    Design calibrated = load_design(MESHLOOM_EXAMPLES_DIR "/default.meshloom.json");
    calibrated.calibration = "cal/c.json";
    save_design(calibrated, path.toStdString());
    Design copied;
    crash_after_an_edit(dir, path, &copied);
    if (QTest::currentTestFailed()) return;
    auto pending = Autosave::pending(dir);
    QCOMPARE(pending.size(), std::size_t{1});
    {
      MainWindow other(nullptr, tmp.filePath(QStringLiteral("autosave-other")));
      QVERIFY(other.open_design(path));
      QVERIFY(other.mesh_panel()->set_devices_per_host(2));
      QVERIFY(other.save_design(path));
    }
    {
      QFile file(path);  // saved a minute after the copy, whatever the clock's resolution
      QVERIFY(file.open(QIODevice::ReadWrite));
      QVERIFY(file.setFileTime(pending.front().when.addSecs(60), QFileDevice::FileModificationTime));
    }
    const Design saved = load_design(path.toStdString());
    MainWindow next(nullptr, dir);
    QVERIFY(next.recover(pending.front()));
    Design expected = copied;
    expected.calibration = tmp.filePath(QStringLiteral("cal/c.json")).toStdString();
    QCOMPARE(next.design(), expected);
    QVERIFY(next.document()->path().isEmpty());
    QVERIFY(next.document()->is_modified());
    QCOMPARE(load_design(path.toStdString()), saved);
    QVERIFY(!QFile::exists(pending.front().copy));
  }

  // A slice and a hovered rank that the next edit takes away: the canvas, slice and rank dock follow the new
  // mesh (the window reacts before the models report their changed picks), and the undo action follows too.
  void edits_under_a_slice_and_a_hover_follow_the_new_mesh() {
    QTemporaryDir tmp;
    MainWindow w(nullptr, tmp.filePath(QStringLiteral("autosave")));
    QVERIFY(w.mesh_panel()->add_axis("tp", 2));  // untitled (dp=8) -> (dp=8, tp=2), 16 ranks
    QCOMPARE(static_cast<qint64>(w.grid()->cell_count()), 16);
    w.set_slice({"dp", "tp"});
    QCOMPARE(w.slice_model()->rowCount(), 1);
    emit w.view()->cell_hovered(std::optional<std::size_t>(12));
    QCOMPARE(w.rank_panel()->rank(), std::optional<std::int64_t>(12));
    w.select_rank(13);
    w.mesh_panel()->select_axis("tp");
    QVERIFY(w.mesh_panel()->remove_current());  // 8 ranks: the hovered 12 and the selected 13 are gone
    QCOMPARE(static_cast<qint64>(w.grid()->cell_count()), 8);
    QCOMPARE(w.axes_model()->picked(), std::vector<std::string>{"dp"});
    QCOMPARE(w.slice_model()->rowCount(), 1);
    QCOMPARE(w.grid()->group_of_cell(7), 0);
    QCOMPARE(w.rank_panel()->rank(), std::nullopt);
    w.document()->undo_stack()->undo();  // tp is back, unticked
    QCOMPARE(static_cast<qint64>(w.grid()->cell_count()), 16);
    QCOMPARE(w.slice_model()->slice().groups, rows(w.document()->mesh().groups(AxisRef{std::string("dp")})));
    QCOMPARE(w.grid()->group_of_cell(15), w.slice_model()->group_of_rank(15));

    QAction* undo = nullptr;
    for (QAction* a : w.findChildren<QAction*>()) {
      if (a->shortcut() == QKeySequence(QKeySequence::Undo)) undo = a;
    }
    QVERIFY(undo != nullptr);
    QVERIFY(undo->isEnabled());
    w.set_unsaved_prompt([](const QString&) { return QMessageBox::Discard; });
    QVERIFY(w.maybe_save());
    w.document()->new_design();
    QVERIFY(!undo->isEnabled());  // the action hears the stack even when the document is replaced

    // A refusal's message goes once an edit goes through.
    QVERIFY(!w.mesh_panel()->set_devices_per_host(3));
    QVERIFY(!w.mesh_panel()->message(QStringLiteral("devices")).isEmpty());
    QVERIFY(w.mesh_panel()->set_devices_per_host(4));
    QVERIFY(w.mesh_panel()->message(QStringLiteral("devices")).isEmpty());
  }

  void a_mesh_too_large_to_draw_is_described_not_drawn() {
    QTemporaryDir tmp;
    MainWindow w(nullptr, tmp.filePath(QStringLiteral("autosave")));
    w.set_slice({"dp"});
    QVERIFY(w.mesh_panel()->add_axis("tp", 1 << 20));  // 8 x 2^20 ranks
    QCOMPARE(w.grid(), nullptr);
    QCOMPARE(w.slice_model()->rowCount(), 0);
    QCOMPARE(w.axes_model()->data(w.axes_model()->index(1, AxesModel::Groups)).toString(),
             QStringLiteral("8 groups of 1048576"));
    // The Slice dock and, for such a design opened, the status bar speak of this mesh, not of the one drawn before.
    const QString huge = tmp.filePath(QStringLiteral("huge.meshloom.json"));
    save_design(w.design(), huge.toStdString());
    MainWindow opened(nullptr, tmp.filePath(QStringLiteral("autosave2")));
    QVERIFY(opened.open_design(huge));
    QCOMPARE(opened.statusBar()->currentMessage(), QStringLiteral("8388608 ranks on 1048576 hosts of 8 devices"));
    auto* summary = w.findChild<QLabel*>(QStringLiteral("slice_summary"));
    QVERIFY(summary != nullptr);
    QVERIFY2(summary->text().contains(QStringLiteral("slices are listed for meshes of up to")),
             qPrintable(summary->text()));
    w.select_rank(5);
    QCOMPARE(w.rank_panel()->value(QStringLiteral("tp")), QStringLiteral("local rank 5 of 1048576"));
    w.document()->undo_stack()->undo();
    QVERIFY(w.grid() != nullptr);
    QCOMPARE(w.slice_model()->rowCount(), 1);
  }

  void the_current_tensors_plans_export_as_markdown() {
    QTemporaryDir tmp;
    MainWindow w(nullptr, tmp.filePath(QStringLiteral("autosave")));
    const QString md = tmp.filePath(QStringLiteral("plan.md"));
    QVERIFY(!w.export_plan(md));  // the untitled design has no tensors
    QVERIFY2(w.last_error().contains(QLatin1String("no tensors")), qPrintable(w.last_error()));
    QVERIFY(!QFile::exists(md));
    QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/hsdp-2d.meshloom.json")));
    QVERIFY2(w.export_plan(md), qPrintable(w.last_error()));
    const QString text = read(md);
    QCOMPARE(text.toStdString(), w.redistribution_panel()->markdown());
    QVERIFY(text.startsWith(QLatin1String("# Redistribution of `attention_wq`")));
    QVERIFY(text.contains(QLatin1String("## graph planner, comm model: ")));
    QVERIFY(text.contains(QLatin1String("## greedy planner, comm model: ")));
    QVERIFY(!w.export_plan(tmp.filePath(QStringLiteral("missing/plan.md"))));
    QVERIFY(w.last_error().contains(QLatin1String("missing/plan.md")));
  }

  // A calibration applied from a file: one undoable edit; the plan is priced by the measurements, shown against
  // the comm model's price (before against after); a calibration of another mesh is refused.
  void a_calibration_applies_as_an_edit_and_shows_before_against_after() {
    QTemporaryDir tmp;
    MainWindow w(nullptr, tmp.filePath(QStringLiteral("autosave")));
    const Design d = meshloom::testing::two_by_two_design();
    const QString path = tmp.filePath(QStringLiteral("two.meshloom.json"));
    save_design(d, path.toStdString());
    QVERIFY(w.open_design(path));
    const QString calibration = QStringLiteral(MESHLOOM_CALIBRATION_DIR "/local-2x2.calibration.json");
    QVERIFY2(w.apply_calibration(calibration), qPrintable(w.last_error()));
    QCOMPARE(w.design().calibration, std::optional<std::string>(QFileInfo(calibration).absoluteFilePath().toStdString()));
    QCOMPARE(w.redistribution_panel()->cost_model(), RedistributionPanel::CostModelKind::Calibrated);
    const QString compared = w.redistribution_panel()->message(QStringLiteral("recalibration"));
    QVERIFY2(compared.startsWith(QLatin1String("Before calibration (comm model): ")), qPrintable(compared));
    w.document()->undo_stack()->undo();
    QCOMPARE(w.design().calibration, std::nullopt);
    QVERIFY(w.redistribution_panel()->message(QStringLiteral("recalibration")).isEmpty());

    QVERIFY(w.open_design(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/default.meshloom.json")));  // (2, 2, 2)
    QVERIFY(!w.apply_calibration(calibration));
    QVERIFY2(w.last_error().contains(QLatin1String("measured on a (2, 2) mesh")), qPrintable(w.last_error()));
    QCOMPARE(w.design().calibration, std::nullopt);
    QVERIFY(!w.apply_calibration(tmp.filePath(QStringLiteral("none.json"))));
    QVERIFY(w.last_error().contains(QLatin1String("none.json")));
  }

  // Undo of Apply calibration gives back the cost model chosen before it, redo the calibrated one; a design saved
  // into another folder keeps naming its calibration's file (relative inside the new folder, absolute elsewhere),
  // in the undo history too.
  void the_calibration_follows_undo_and_save_as() {
    QTemporaryDir tmp;
    MainWindow w(nullptr, tmp.filePath(QStringLiteral("autosave")));
    const Design d = meshloom::testing::two_by_two_design();
    QVERIFY(QDir(tmp.path()).mkpath(QStringLiteral("a/cal")));
    QVERIFY(QDir(tmp.path()).mkpath(QStringLiteral("b")));
    const QString cal = tmp.filePath(QStringLiteral("a/cal/c.json"));
    QVERIFY(QFile::copy(QStringLiteral(MESHLOOM_CALIBRATION_DIR "/local-2x2.calibration.json"), cal));
    const QString path = tmp.filePath(QStringLiteral("a/two.meshloom.json"));
    save_design(d, path.toStdString());
    QVERIFY(w.open_design(path));
    RedistributionPanel* panel = w.redistribution_panel();
    QVERIFY(panel->set_cost_model(RedistributionPanel::CostModelKind::Fixed));
    QVERIFY2(w.apply_calibration(cal), qPrintable(w.last_error()));
    QCOMPARE(w.design().calibration, std::optional<std::string>("cal/c.json"));  // inside the design's folder
    QCOMPARE(panel->cost_model(), RedistributionPanel::CostModelKind::Calibrated);
    w.document()->undo_stack()->undo();
    QCOMPARE(panel->cost_model(), RedistributionPanel::CostModelKind::Fixed);
    w.document()->undo_stack()->redo();
    QCOMPARE(panel->cost_model(), RedistributionPanel::CostModelKind::Calibrated);
    // A model chosen in between stays chosen.
    w.document()->undo_stack()->undo();
    QVERIFY(panel->set_cost_model(RedistributionPanel::CostModelKind::Comm));
    w.document()->undo_stack()->redo();
    QCOMPARE(panel->cost_model(), RedistributionPanel::CostModelKind::Comm);
    QVERIFY(panel->set_cost_model(RedistributionPanel::CostModelKind::Calibrated));

    // Save as, one folder up: relative from there.
    const QString up = tmp.filePath(QStringLiteral("up.meshloom.json"));
    QVERIFY2(w.save_design(up), qPrintable(w.last_error()));
    QCOMPARE(w.design().calibration, std::optional<std::string>("a/cal/c.json"));
    QCOMPARE(load_design(up.toStdString()).calibration, std::optional<std::string>("a/cal/c.json"));
    QVERIFY2(panel->calibrated_available(), qPrintable(panel->calibrated_reason()));
    // The same file named from another folder is still the Apply's: no undo of it, the model stays.
    QCOMPARE(panel->cost_model(), RedistributionPanel::CostModelKind::Calibrated);
    // Save as into a folder beside it: absolute, and so in the history (undo, then redo of the apply).
    const QString moved = tmp.filePath(QStringLiteral("b/moved.meshloom.json"));
    QVERIFY2(w.save_design(moved), qPrintable(w.last_error()));
    const std::optional<std::string> absolute = QFileInfo(cal).absoluteFilePath().toStdString();
    QCOMPARE(w.design().calibration, absolute);
    QCOMPARE(load_design(moved.toStdString()).calibration, absolute);
    QVERIFY(!w.document()->is_modified());
    QCOMPARE(panel->cost_model(), RedistributionPanel::CostModelKind::Calibrated);
    // Nor is an edit afterwards.
    QVERIFY(w.mesh_panel()->set_design_name(QStringLiteral("moved")));
    QCOMPARE(panel->cost_model(), RedistributionPanel::CostModelKind::Calibrated);
    w.document()->undo_stack()->undo();
    QVERIFY(!w.document()->is_modified());
    w.document()->undo_stack()->undo();
    QCOMPARE(w.design().calibration, std::nullopt);
    w.document()->undo_stack()->redo();
    QCOMPARE(w.design().calibration, absolute);
    QVERIFY(!w.document()->is_modified());
    QVERIFY2(panel->calibrated_available(), qPrintable(panel->calibrated_reason()));
  }

  // The "done when", without dialogs: a 4-D mesh from a preset, sliced, two axes flattened, an undo,
  // save, reopen, and PyTorch code for exactly the reopened design.
  void preset_slice_flatten_undo_save_reopen_export() {
    QTemporaryDir tmp;
    MainWindow w(nullptr, tmp.filePath(QStringLiteral("autosave")));
    QVERIFY(w.apply_preset(PresetRequest{"torchtitan", {{"world_size", 32}, {"dp_replicate", 2}, {"cp", 2}, {"tp", 2}}}));
    QCOMPARE(w.design().mesh.shape.size(), std::size_t{4});
    w.set_slice({"dp_shard", "tp"});
    QCOMPARE(w.slice_model()->rowCount(), 4);
    w.select_rank(5);
    const int group = w.slice_model()->group_of_rank(5);
    QCOMPARE(w.grid()->emphasised_group(), group);
    w.set_slice({"cp", "tp"});
    QVERIFY(w.mesh_panel()->flatten_picked(QStringLiteral("cp_tp")));
    w.set_slice({"dp_replicate"});
    QVERIFY(w.mesh_panel()->flatten_picked(QStringLiteral("rep")));
    w.document()->undo_stack()->undo();  // drop "rep"
    QCOMPARE(w.design().mesh.flattened.back().name, std::string("cp_tp"));
    const QString path = tmp.filePath(QStringLiteral("titan.meshloom.json"));
    QVERIFY(w.save_design(path));
    MainWindow reopened(nullptr, tmp.filePath(QStringLiteral("autosave")));
    QVERIFY(reopened.open_design(path));
    QCOMPARE(reopened.design(), w.design());
    const QString py = tmp.filePath(QStringLiteral("mesh.py"));
    QVERIFY(reopened.export_code(MainWindow::CodeKind::PyTorch, py));
    QCOMPARE(read(py).toStdString(), export_pytorch(reopened.design()));
    QVERIFY(read(py).contains(QLatin1String("_flatten(\"cp_tp\")")) || read(py).contains(QLatin1String("_flatten('cp_tp')")));
  }
};

QTEST_MAIN(DesignerTest)
#include "test_designer.moc"
