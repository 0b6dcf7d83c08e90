// Editing tensors in the Redistribution dock, on the offscreen platform: add, rename and remove (through the panel's
// API, the actions and the dialogs) and the shape field and dtype box (through the widgets), each one undoable command
// whose design equals the engine's edit, undone and redone to the designs before and after; the workload entry
// following a rename and going with a removal; bad input refused with a message naming the value, the design
// unchanged, and the message cleared by the next edit that succeeds.
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QTimer>
#include <QUndoStack>
#include <QtTest>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "document/design_document.hpp"
#include "mesh/edit_dialog.hpp"
#include "meshloom/design/design.hpp"
#include "meshloom/design/edit.hpp"
#include "meshloom/dtype.hpp"
#include "meshloom/plan/state.hpp"
#include "plan/plan_model.hpp"
#include "plan/redistribution_panel.hpp"
#include "plan/tensor_dialog.hpp"
#include "shell/inline_message.hpp"
#include "shell/main_window.hpp"

using namespace meshloom;
using namespace meshloom::app;

namespace {

QString example(const char* name) { return QStringLiteral(MESHLOOM_EXAMPLES_DIR "/") + QString::fromLatin1(name); }

QString last_undo_text(const DesignDocument& doc) { return doc.undo_stack()->undoText(); }

// Undoes the last command (the design must equal `before`) and redoes it (the design must equal `after`).
bool undo_redo(DesignDocument& doc, const Design& before, const Design& after) {
  doc.undo_stack()->undo();
  if (doc.design() != before) return false;
  doc.undo_stack()->redo();
  return doc.design() == after;
}

std::vector<std::string> workload_tensors(const Design& d) {
  std::vector<std::string> out;
  if (d.workload) {
    for (const WorkloadTensor& w : d.workload->tensors) out.push_back(w.tensor);
  }
  return out;
}

QAction* action(const RedistributionPanel& panel, int i) { return panel.tensor_actions().at(i); }

}  // namespace

class TensorEditingTest : public QObject {
  Q_OBJECT

private slots:
  void add_tensor_is_one_undoable_edit() {
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(example("default.meshloom.json"), &error), qPrintable(error));
    RedistributionPanel panel(&doc);
    const Design before = doc.design();
    const DesignTensor t{"layers.0.wq", {4096, 1024}, DType::BFloat16, parse_state("S(0)RR"), parse_state("RRS(1)")};
    QVERIFY(panel.add_tensor(t));
    QCOMPARE(doc.design(), add_tensor(before, t));
    QCOMPARE(last_undo_text(doc), QStringLiteral("Add tensor layers.0.wq"));
    QCOMPARE(panel.current_tensor(), QStringLiteral("layers.0.wq"));  // the picker shows it
    QCOMPARE(panel.shape_field()->text(), QStringLiteral("[4096, 1024]"));
    QCOMPARE(panel.dtype_box()->currentData().toString(), QStringLiteral("bfloat16"));
    QCOMPARE(panel.source_field()->text(), QStringLiteral("S(0)RR"));
    QVERIFY(panel.graph_model()->rowCount() > 0);
    const Design after = doc.design();
    QVERIFY(undo_redo(doc, before, after));
    QCOMPARE(doc.undo_stack()->count(), 1);
    QCOMPARE(panel.current_tensor(), QStringLiteral("layers.0.wq"));  // redo shows it again

    // Refused: the name is taken. The message names it, the design is unchanged, nothing is pushed.
    QVERIFY(!panel.add_tensor(t));
    QVERIFY2(panel.message(QStringLiteral("tensors")).contains(QStringLiteral("'layers.0.wq' is already the name of a tensor")),
             qPrintable(panel.message(QStringLiteral("tensors"))));
    QCOMPARE(doc.design(), after);
    QCOMPARE(doc.undo_stack()->count(), 1);
    // The next edit that succeeds clears it.
    QVERIFY(panel.add_tensor({"other", {8}, DType::Int8, parse_state("RRR"), parse_state("RRS(0)")}));
    QVERIFY(panel.message(QStringLiteral("tensors")).isEmpty());
  }

  void the_add_dialog_checks_as_you_type_and_keeps_the_text() {
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(example("default.meshloom.json"), &error), qPrintable(error));
    RedistributionPanel panel(&doc);
    const Design before = doc.design();
    const std::unique_ptr<TensorDialog> dialog = panel.make_add_dialog();
    // Prefilled: a free name, a shape, float32, R on every axis.
    QCOMPARE(dialog->name_field()->text(), QStringLiteral("tensor0"));
    QCOMPARE(dialog->shape_field()->text(), QStringLiteral("[1024, 1024]"));
    QCOMPARE(dialog->dtype_box()->currentData().toString(), QStringLiteral("float32"));
    QCOMPARE(dialog->source_field()->text(), QStringLiteral("RRR"));
    QCOMPARE(dialog->target_field()->text(), QStringLiteral("RRR"));
    QVERIFY(dialog->can_accept());
    QVERIFY2(dialog->preview().startsWith(QStringLiteral("Adds tensor0: [1024, 1024] float32 (4 MiB), RRR → RRR")),
             qPrintable(dialog->preview()));

    const auto refused = [&](const QString& phrase) {
      return !dialog->can_accept() && !dialog->tensor() && dialog->error().contains(phrase) && dialog->preview().isEmpty();
    };
    dialog->name_field()->setText(QStringLiteral("weight"));
    QVERIFY2(refused(QStringLiteral("'weight' is already the name of a tensor; tensors are weight, activation")),
             qPrintable(dialog->error()));
    dialog->name_field()->setText(QStringLiteral("a b"));
    QVERIFY2(refused(QStringLiteral("tensor name = \"a b\": names must be 1 to 256 characters")), qPrintable(dialog->error()));
    dialog->name_field()->setText(QStringLiteral("layers.1.w2"));
    dialog->shape_field()->setText(QStringLiteral("4096, x"));
    QVERIFY2(refused(QStringLiteral("shape \"4096, x\": \"x\" is not a whole number")), qPrintable(dialog->error()));
    dialog->shape_field()->setText(QStringLiteral("4096, 0"));
    QVERIFY2(refused(QStringLiteral("shape[1] = 0: dims must be >= 1")), qPrintable(dialog->error()));
    dialog->shape_field()->setText(QStringLiteral("4096 x 14336"));
    dialog->source_field()->setText(QStringLiteral("S(2)RR"));
    QVERIFY2(refused(QStringLiteral("src = \"S(2)RR\": S(2) on axis 0 shards dim 2 but the tensor has 2 dims (0..1)")),
             qPrintable(dialog->error()));
    dialog->source_field()->setText(QStringLiteral("S(0"));
    QVERIFY2(refused(QStringLiteral("src = \"S(0\"")), qPrintable(dialog->error()));
    dialog->source_field()->setText(QStringLiteral("RS(0)S(1)"));
    dialog->target_field()->setText(QStringLiteral("RR"));
    QVERIFY2(refused(QStringLiteral("dst = \"RR\": 2 placements for a mesh of 3 axes")), qPrintable(dialog->error()));
    // Everything typed is still there.
    QCOMPARE(dialog->name_field()->text(), QStringLiteral("layers.1.w2"));
    QCOMPARE(dialog->shape_field()->text(), QStringLiteral("4096 x 14336"));
    dialog->target_field()->setText(QStringLiteral("RRS(0)"));
    dialog->dtype_box()->setCurrentIndex(dialog->dtype_box()->findData(QStringLiteral("bfloat16")));
    QVERIFY2(dialog->can_accept(), qPrintable(dialog->error()));
    QVERIFY(dialog->error().isEmpty());
    const std::optional<DesignTensor> t = dialog->tensor();
    QVERIFY(t.has_value());
    QCOMPARE(*t, (DesignTensor{"layers.1.w2", {4096, 14336}, DType::BFloat16, parse_state("RS(0)S(1)"),
                               parse_state("RRS(0)")}));
    QVERIFY(panel.add_tensor(*t));
    QCOMPARE(doc.design(), add_tensor(before, *t));
    QCOMPARE(panel.current_tensor(), QStringLiteral("layers.1.w2"));
    QVERIFY(undo_redo(doc, before, add_tensor(before, *t)));
    // The next dialog suggests the next free name after tensor0 is taken.
    QVERIFY(panel.add_tensor({"tensor0", {1}, DType::Float32, replicated_state(doc.design()), replicated_state(doc.design())}));
    QCOMPARE(panel.make_add_dialog()->name_field()->text(), QStringLiteral("tensor1"));
  }

  void rename_follows_the_workload() {
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(example("advisor-2x2.meshloom.json"), &error), qPrintable(error));
    RedistributionPanel panel(&doc);
    QVERIFY(panel.select_tensor(QStringLiteral("weight")));
    const Design before = doc.design();
    QVERIFY(panel.rename_tensor(QStringLiteral("weight"), QStringLiteral("layers.0.weight")));
    QCOMPARE(doc.design(), rename_tensor(before, "weight", "layers.0.weight"));
    QCOMPARE(last_undo_text(doc), QStringLiteral("Rename tensor weight to layers.0.weight, and its workload entry"));
    QCOMPARE(panel.current_tensor(), QStringLiteral("layers.0.weight"));
    QCOMPARE(doc.design().workload->tensors[3].tensor, std::string("layers.0.weight"));
    QCOMPARE(doc.design().workload->tensors[3].count, before.workload->tensors[3].count);
    const Design after = doc.design();
    QVERIFY(undo_redo(doc, before, after));
    doc.undo_stack()->undo();
    QCOMPARE(panel.current_tensor(), QStringLiteral("weight"));  // the tensor at its place
    doc.undo_stack()->redo();

    // Refused: taken, invalid, unknown; the design is unchanged and the message names the value.
    QVERIFY(!panel.rename_tensor(QStringLiteral("layers.0.weight"), QStringLiteral("embedding")));
    QVERIFY(panel.message(QStringLiteral("tensors")).contains(QStringLiteral("'embedding' is already the name of a tensor")));
    QVERIFY(!panel.rename_tensor(QStringLiteral("layers.0.weight"), QStringLiteral("w-1")));
    QVERIFY(panel.message(QStringLiteral("tensors")).contains(QStringLiteral("tensor name = \"w-1\"")));
    QVERIFY(!panel.rename_tensor(QStringLiteral("nothing"), QStringLiteral("w")));
    QVERIFY(panel.message(QStringLiteral("tensors")).contains(QStringLiteral("tensor 'nothing' does not exist")));
    QCOMPARE(doc.design(), after);
    // Without a workload entry the undo text names only the tensor.
    QVERIFY(panel.add_tensor({"extra", {4}, DType::Float32, parse_state("RR"), parse_state("RR")}));
    QVERIFY(panel.rename_tensor(QStringLiteral("extra"), QStringLiteral("extra2")));
    QCOMPARE(last_undo_text(doc), QStringLiteral("Rename tensor extra to extra2"));
    QVERIFY(panel.message(QStringLiteral("tensors")).isEmpty());
  }

  void the_rename_dialog_previews_and_refuses() {
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(example("advisor-2x2.meshloom.json"), &error), qPrintable(error));
    RedistributionPanel panel(&doc);
    QVERIFY(panel.select_tensor(QStringLiteral("mlp_hidden")));
    const std::unique_ptr<EditDialog> dialog = panel.make_rename_dialog();
    QVERIFY(dialog != nullptr);
    QCOMPARE(dialog->field(0)->text(), QStringLiteral("mlp_hidden"));
    dialog->field(0)->setText(QStringLiteral("weight"));
    QVERIFY(!dialog->can_accept());
    QVERIFY2(dialog->error().contains(QStringLiteral("'weight' is already the name of a tensor")), qPrintable(dialog->error()));
    QCOMPARE(dialog->field(0)->text(), QStringLiteral("weight"));
    dialog->field(0)->setText(QStringLiteral("layers.0.mlp"));
    QVERIFY(dialog->can_accept());
    QCOMPARE(dialog->preview(), QStringLiteral("Renames mlp_hidden to layers.0.mlp, and its workload entry"));
    // No tensor, no dialog.
    DesignDocument empty;
    RedistributionPanel none(&empty);
    QVERIFY(none.make_rename_dialog() == nullptr);
  }

  void remove_takes_the_workload_entry_with_it() {
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(example("advisor-2x2.meshloom.json"), &error), qPrintable(error));
    RedistributionPanel panel(&doc);
    QVERIFY(panel.select_tensor(QStringLiteral("norm_stats")));
    const Design before = doc.design();
    // Through the action beside the picker (and in the Plan menu).
    action(panel, 2)->trigger();
    QCOMPARE(doc.design(), remove_tensor(before, "norm_stats"));
    QCOMPARE(last_undo_text(doc), QStringLiteral("Remove tensor norm_stats, and its workload entry"));
    QCOMPARE(workload_tensors(doc.design()),
             (std::vector<std::string>{"attention_out", "mlp_hidden", "weight", "weight_grad", "embedding"}));
    QCOMPARE(panel.current_tensor(), QStringLiteral("weight"));  // the one that took its place
    const Design after = doc.design();
    QVERIFY(undo_redo(doc, before, after));
    // Undo brings the tensor back, and shows it; redo removes it again.
    doc.undo_stack()->undo();
    QCOMPARE(panel.current_tensor(), QStringLiteral("norm_stats"));
    doc.undo_stack()->redo();
    QCOMPARE(panel.current_tensor(), QStringLiteral("weight"));
    // Refused: an unknown name.
    QVERIFY(!panel.remove_tensor(QStringLiteral("norm_stats")));
    QVERIFY(panel.message(QStringLiteral("tensors")).contains(QStringLiteral("tensor 'norm_stats' does not exist")));
    QCOMPARE(doc.design(), after);

    // Every tensor away: the hint says how to add one, Rename and Remove are disabled, undo brings them back.
    const int commands = doc.undo_stack()->index();
    while (!panel.current_tensor().isEmpty()) QVERIFY(panel.remove_tensor(panel.current_tensor()));
    QVERIFY(doc.design().tensors.empty());
    QVERIFY(doc.design().workload.has_value() && doc.design().workload->tensors.empty());
    QVERIFY(panel.message(QStringLiteral("tensor")).contains(QStringLiteral("no tensors")));
    QVERIFY(panel.message(QStringLiteral("tensor")).contains(QStringLiteral("Add tensor...")));
    QVERIFY(action(panel, 0)->isEnabled());
    QVERIFY(!action(panel, 1)->isEnabled());
    QVERIFY(!action(panel, 2)->isEnabled());
    QVERIFY(!panel.shape_field()->isEnabled());
    QVERIFY(!panel.dtype_box()->isEnabled());
    while (doc.undo_stack()->index() > commands) doc.undo_stack()->undo();
    QCOMPARE(doc.design(), after);
    QVERIFY(action(panel, 1)->isEnabled());
    QVERIFY(panel.message(QStringLiteral("tensor")).isEmpty());
  }

  void the_shape_field_edits_the_shape() {
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(example("default.meshloom.json"), &error), qPrintable(error));
    RedistributionPanel panel(&doc);
    QVERIFY(panel.select_tensor(QStringLiteral("weight")));
    QLineEdit* shape = panel.shape_field();
    QVERIFY(!shape->isReadOnly());
    QCOMPARE(shape->text(), QStringLiteral("[1024, 512]"));
    const Design before = doc.design();
    // Typed and committed with Enter, as a person does.
    shape->setText(QStringLiteral("2048, 512"));
    QTest::keyClick(shape, Qt::Key_Return);
    QCOMPARE(doc.design(), set_tensor_shape(before, "weight", {2048, 512}));
    QCOMPARE(last_undo_text(doc), QStringLiteral("Shape of weight: [1024, 512] → [2048, 512]"));
    QCOMPARE(shape->text(), QStringLiteral("[2048, 512]"));
    const Design after = doc.design();
    QVERIFY(undo_redo(doc, before, after));
    doc.undo_stack()->undo();
    QCOMPARE(shape->text(), QStringLiteral("[1024, 512]"));  // the field follows undo
    doc.undo_stack()->redo();
    // The same shape in another spelling pushes nothing.
    const int commands = doc.undo_stack()->count();
    QVERIFY(panel.set_shape(QStringLiteral("(2048 x 512)")));
    QCOMPARE(doc.undo_stack()->count(), commands);
    QCOMPARE(shape->text(), QStringLiteral("[2048, 512]"));

    // Refused, the text kept, the design unchanged.
    shape->setText(QStringLiteral("2048, x"));
    QTest::keyClick(shape, Qt::Key_Return);
    QCOMPARE(panel.message(QStringLiteral("shape")), QStringLiteral("shape \"2048, x\": \"x\" is not a whole number"));
    QCOMPARE(shape->text(), QStringLiteral("2048, x"));
    QCOMPARE(doc.design(), after);
    QVERIFY(!panel.set_shape(QStringLiteral("2048, 0")));
    QVERIFY2(panel.message(QStringLiteral("shape")).contains(QStringLiteral("shape[1] = 0: dims must be >= 1")),
             qPrintable(panel.message(QStringLiteral("shape"))));
    // A dim the states shard cannot go: the states first.
    QVERIFY(panel.select_tensor(QStringLiteral("activation")));  // RS(0)P(sum) -> RRS(1)
    QVERIFY(!panel.set_shape(QStringLiteral("64")));
    QVERIFY2(panel.message(QStringLiteral("shape"))
                 .contains(QStringLiteral("dst of 'activation' = \"RRS(1)\": S(1) on axis 2 shards dim 1 but the tensor "
                                          "has 1 dim (0..0); change the states first")),
             qPrintable(panel.message(QStringLiteral("shape"))));
    QCOMPARE(doc.design(), after);
    QCOMPARE(doc.undo_stack()->count(), commands);
    // The next edit that succeeds clears the message.
    QVERIFY(panel.set_target(QStringLiteral("RRS(0)")));
    QVERIFY(panel.message(QStringLiteral("shape")).isEmpty());
    QVERIFY(panel.set_shape(QStringLiteral("64")));
    QCOMPARE(doc.design().tensors[1].shape, (std::vector<std::int64_t>{64}));
    // A scalar: no dims, when nothing shards.
    QVERIFY(panel.set_source(QStringLiteral("RRP(sum)")));
    QVERIFY(panel.set_target(QStringLiteral("RRR")));
    QVERIFY(panel.set_shape(QString()));
    QCOMPARE(panel.shape_field()->text(), QStringLiteral("[]"));
    QVERIFY(doc.design().tensors[1].shape.empty());
  }

  void the_dtype_box_edits_the_dtype() {
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(example("default.meshloom.json"), &error), qPrintable(error));
    RedistributionPanel panel(&doc);
    QVERIFY(panel.select_tensor(QStringLiteral("weight")));
    QComboBox* dtype = panel.dtype_box();
    QCOMPARE(dtype->count(), static_cast<int>(dtype_names().size()));
    QCOMPARE(dtype->currentText(), QStringLiteral("float32 (4 bytes)"));
    const Design before = doc.design();
    QVERIFY(panel.graph_model()->has_plan());
    const auto bytes_before = panel.graph_model()->plan()->steps.front().bytes;
    dtype->setCurrentIndex(dtype->findData(QStringLiteral("bfloat16")));
    QCOMPARE(doc.design(), set_tensor_dtype(before, "weight", DType::BFloat16));
    QCOMPARE(last_undo_text(doc), QStringLiteral("Dtype of weight: float32 → bfloat16"));
    QCOMPARE(panel.graph_model()->plan()->steps.front().bytes, bytes_before / 2);  // the planner's itemsize follows
    const Design after = doc.design();
    QVERIFY(undo_redo(doc, before, after));
    doc.undo_stack()->undo();
    QCOMPARE(dtype->currentData().toString(), QStringLiteral("float32"));  // the box follows undo
    doc.undo_stack()->redo();
    QCOMPARE(dtype->currentData().toString(), QStringLiteral("bfloat16"));

    // Refused: an unknown name; a dtype too large for the shape. The box shows the design's dtype again.
    QVERIFY(!panel.set_dtype(QStringLiteral("fp8")));
    QVERIFY2(panel.message(QStringLiteral("dtype")).startsWith(QStringLiteral("dtype \"fp8\": dtypes are float32, float16")),
             qPrintable(panel.message(QStringLiteral("dtype"))));
    QVERIFY(panel.set_shape(QStringLiteral("1152921504606846976, 2")));  // 2^61 bfloat16 values: 2^62 bytes
    dtype->setCurrentIndex(dtype->findData(QStringLiteral("float64")));
    QVERIFY2(panel.message(QStringLiteral("dtype")).contains(QStringLiteral("dtype = float64: the tensor")),
             qPrintable(panel.message(QStringLiteral("dtype"))));
    QCOMPARE(dtype->currentData().toString(), QStringLiteral("bfloat16"));
    QCOMPARE(doc.design().tensors[0].dtype, DType::BFloat16);
    // The next edit that succeeds clears it.
    dtype->setCurrentIndex(dtype->findData(QStringLiteral("int8")));
    QVERIFY(panel.message(QStringLiteral("dtype")).isEmpty());
    QCOMPARE(doc.design().tensors[0].dtype, DType::Int8);
  }

  void commit_pending_applies_a_typed_shape_with_new_states() {
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(example("default.meshloom.json"), &error), qPrintable(error));
    RedistributionPanel panel(&doc);
    QVERIFY(panel.select_tensor(QStringLiteral("activation")));  // [64, 1024] RS(0)P(sum) -> RRS(1)
    // Fewer dims and states that no longer shard the dim that goes: the states first, then the shape.
    panel.shape_field()->setText(QStringLiteral("64"));
    panel.target_field()->setText(QStringLiteral("RRS(0)"));
    panel.commit_pending();
    QCOMPARE(doc.design().tensors[1].shape, (std::vector<std::int64_t>{64}));
    QCOMPARE(to_string(doc.design().tensors[1].dst), std::string("RRS(0)"));
    // More dims and a state on the new dim: the shape first.
    panel.shape_field()->setText(QStringLiteral("64, 8, 2"));
    panel.source_field()->setText(QStringLiteral("RS(2)R"));
    panel.commit_pending();
    QCOMPARE(doc.design().tensors[1].shape, (std::vector<std::int64_t>{64, 8, 2}));
    QCOMPARE(to_string(doc.design().tensors[1].src), std::string("RS(2)R"));
  }

  // The actions beside the picker open their dialogs and apply what OK accepts; Cancel changes nothing.
  void the_actions_open_the_dialogs() {
    DesignDocument doc;  // new: no tensors
    RedistributionPanel panel(&doc);
    const Design before = doc.design();
    // Answers the next modal dialog: `fill` types into it, then OK (or Cancel when !ok).
    const auto answer = [](std::function<void(QDialog*)> fill, bool ok) {
      QTimer::singleShot(0, [fill = std::move(fill), ok] {
        auto* dialog = qobject_cast<QDialog*>(QApplication::activeModalWidget());
        QVERIFY(dialog != nullptr);
        fill(dialog);
        if (ok) {
          dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->click();
        } else {
          dialog->reject();
        }
      });
    };
    answer([](QDialog* d) { qobject_cast<TensorDialog*>(d)->name_field()->setText(QStringLiteral("w")); }, false);
    action(panel, 0)->trigger();
    QCOMPARE(doc.design(), before);
    answer([](QDialog* d) {
             auto* dialog = qobject_cast<TensorDialog*>(d);
             dialog->name_field()->setText(QStringLiteral("w"));
             dialog->shape_field()->setText(QStringLiteral("64, 32"));
             dialog->source_field()->setText(QStringLiteral("S(0)"));
           },
           true);
    action(panel, 0)->trigger();
    const Design added = add_tensor(before, {"w", {64, 32}, DType::Float32, parse_state("S(0)"), parse_state("R")});
    QCOMPARE(doc.design(), added);
    QCOMPARE(panel.current_tensor(), QStringLiteral("w"));
    answer([](QDialog* d) { qobject_cast<EditDialog*>(d)->field(0)->setText(QStringLiteral("w.renamed")); }, true);
    action(panel, 1)->trigger();
    QCOMPARE(doc.design(), rename_tensor(added, "w", "w.renamed"));
    QCOMPARE(panel.current_tensor(), QStringLiteral("w.renamed"));
    QCOMPARE(last_undo_text(doc), QStringLiteral("Rename tensor w to w.renamed"));
    // A refused name keeps OK disabled: clicking it leaves the dialog open, Cancel closes it.
    answer([](QDialog* d) {
             auto* dialog = qobject_cast<EditDialog*>(d);
             dialog->field(0)->setText(QStringLiteral("bad name"));
             dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->click();
             QVERIFY(dialog->isVisible());
             QCOMPARE(dialog->field(0)->text(), QStringLiteral("bad name"));
           },
           false);
    action(panel, 1)->trigger();
    QCOMPARE(doc.design(), rename_tensor(added, "w", "w.renamed"));
  }

  // The main window's Plan menu offers the same actions.
  void the_plan_menu_offers_them() {
    MainWindow w;
    QMenu* plan = nullptr;
    for (QAction* a : w.menuBar()->actions()) {
      if (a->text() == QLatin1String("&Plan")) plan = a->menu();
    }
    QVERIFY(plan != nullptr);
    QStringList texts;
    for (const QAction* a : plan->actions()) texts << a->text();
    QVERIFY2(texts.mid(0, 3) == (QStringList{QStringLiteral("Add &tensor..."), QStringLiteral("Re&name tensor..."),
                                             QStringLiteral("Remo&ve tensor")}),
             qPrintable(texts.join(QStringLiteral(" | "))));
  }

  void parse_shape_reads_what_people_type() {
    std::vector<std::int64_t> shape;
    QString error;
    QVERIFY(parse_shape(QStringLiteral("1024, 512"), &shape, &error));
    QCOMPARE(shape, (std::vector<std::int64_t>{1024, 512}));
    QVERIFY(parse_shape(QStringLiteral(" [1024,512] "), &shape, &error));
    QCOMPARE(shape, (std::vector<std::int64_t>{1024, 512}));
    QVERIFY(parse_shape(QStringLiteral("1024x512×3"), &shape, &error));
    QCOMPARE(shape, (std::vector<std::int64_t>{1024, 512, 3}));
    QVERIFY(parse_shape(QStringLiteral("(8,)"), &shape, &error));
    QCOMPARE(shape, (std::vector<std::int64_t>{8}));
    QVERIFY(parse_shape(QStringLiteral("[]"), &shape, &error));
    QVERIFY(shape.empty());
    QVERIFY(parse_shape(QString(), &shape, &error));
    QVERIFY(shape.empty());
    QVERIFY(parse_shape(QStringLiteral("4, -1"), &shape, &error));  // the engine names the size
    QCOMPARE(shape, (std::vector<std::int64_t>{4, -1}));
    QVERIFY(!parse_shape(QStringLiteral("4, 2.5"), &shape, &error));
    QCOMPARE(error, QStringLiteral("shape \"4, 2.5\": \"2.5\" is not a whole number"));
    QVERIFY(!parse_shape(QStringLiteral("99999999999999999999"), &shape, &error));
    QVERIFY(error.contains(QStringLiteral("\"99999999999999999999\" is not a whole number")));
    QCOMPARE(shape_text({1024, 512}), QStringLiteral("[1024, 512]"));
    QCOMPARE(shape_text({}), QStringLiteral("[]"));
  }
};

QTEST_MAIN(TensorEditingTest)
#include "test_tensor_editing.moc"
