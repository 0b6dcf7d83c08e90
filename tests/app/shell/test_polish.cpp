// Keyboard, themes and documents: tables do not trap Tab, mnemonics do not collide, Save As has keys, error and
// caption text stay readable (>= 4.5:1) when the theme changes either way, and bundled examples open untitled.
// Runs on the offscreen platform.
#include <QAbstractButton>
#include <QAbstractItemView>
#include <QClipboard>
#include <QApplication>
#include <QDir>
#include <QGraphicsScene>
#include <QFile>
#include <QLabel>
#include <QMap>
#include <QMenu>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QStyle>
#include <QStyleFactory>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>

#include <memory>
#include <stdexcept>

#include "document/design_document.hpp"
#include "mesh/axes_model.hpp"
#include "meshloom/design/design.hpp"
#include "meshloom/design/export.hpp"
#include "meshloom/error.hpp"
#include "plan/animation_bar.hpp"
#include "shell/code_dialog.hpp"
#include "shell/inline_message.hpp"
#include "canvas/mesh_view.hpp"
#include "shell/main_window.hpp"
#include "shell/palettes.hpp"

using meshloom::app::MainWindow;

namespace {

const QString kDefault = QStringLiteral(MESHLOOM_EXAMPLES_DIR "/default.meshloom.json");

// The colour a label's style sheet sets ("color: #rrggbb;").
QColor style_colour(const QWidget& w) {
  const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("color:\\s*(#[0-9a-fA-F]{6})")).match(w.styleSheet());
  return m.hasMatch() ? QColor(m.captured(1)) : QColor();
}

}  // namespace

class PolishTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // settings and autosaves in ~/.qttest
    QCoreApplication::setOrganizationName(QStringLiteral("MeshloomTest"));
    QCoreApplication::setApplicationName(QStringLiteral("MeshloomPolishTest"));
    QSettings().clear();
  }
  void cleanup() { MainWindow::apply_theme(MainWindow::Theme::System); }

  // Tab moves focus out of every table (arrows move between cells): no view of the window keeps Tab for itself,
  // and pressing Tab in the axes table leaves it.
  void tab_leaves_every_table() {
    MainWindow w;
    QVERIFY2(w.open_design(kDefault), qPrintable(w.last_error()));
    w.show();
    const auto views = w.findChildren<QAbstractItemView*>();
    QVERIFY(views.size() >= 3);
    for (const QAbstractItemView* v : views) {
      QVERIFY2(!v->tabKeyNavigation(), qPrintable(v->metaObject()->className() + QStringLiteral(" ") + v->objectName()));
    }
    w.activateWindow();
    if (!QTest::qWaitForWindowActive(&w)) QSKIP("this platform does not activate windows");
    QTableView* axes = nullptr;
    for (QTableView* t : w.findChildren<QTableView*>()) {
      if (t->isVisible() && t->model() != nullptr && t->model()->rowCount() > 1) axes = t;
      if (axes != nullptr) break;
    }
    QVERIFY(axes != nullptr);
    axes->setFocus(Qt::TabFocusReason);
    axes->setCurrentIndex(axes->model()->index(0, 0));
    QTRY_COMPARE(QApplication::focusWidget(), axes);
    QTest::keyClick(axes, Qt::Key_Tab);
    QTRY_VERIFY(QApplication::focusWidget() != axes);
  }

  // Every Alt+letter of the window does one thing: the menus' letters and the docks' labels and buttons never
  // share one (Alt+P opens the Plan menu, not the planner field).
  void mnemonics_do_not_collide() {
    MainWindow w;
    QVERIFY2(w.open_design(kDefault), qPrintable(w.last_error()));
    w.show();
    QMap<QString, QString> owner;  // the mnemonic's key -> what has it
    const auto take = [&](const QString& text, const QString& what) {
      const QKeySequence key = QKeySequence::mnemonic(text);
      if (key.isEmpty()) return;
      const QString k = key.toString();
      QVERIFY2(!owner.contains(k), qPrintable(k + QStringLiteral(": ") + owner.value(k) + QStringLiteral(" and ") + what));
      owner.insert(k, what);
    };
    for (const QAction* menu : w.menuBar()->actions()) take(menu->text(), QStringLiteral("menu ") + menu->text());
    for (const QLabel* l : w.findChildren<QLabel*>()) {
      if (l->buddy() == nullptr) continue;
      take(l->text(), QStringLiteral("label ") + l->text());
      // The letter moves focus to the buddy: a buddy that takes no focus (a row holding the field) does nothing.
      if (!QKeySequence::mnemonic(l->text()).isEmpty()) {
        QVERIFY2(l->buddy()->focusPolicy() != Qt::NoFocus,
                 qPrintable(l->text() + QStringLiteral(": its buddy ") + QString::fromLatin1(l->buddy()->metaObject()->className()) +
                            QStringLiteral(" takes no focus")));
      }
    }
    for (const QAbstractButton* b : w.findChildren<QAbstractButton*>()) take(b->text(), QStringLiteral("button ") + b->text());
    QCOMPARE(owner.value(QKeySequence(Qt::ALT | Qt::Key_P).toString()), QStringLiteral("menu &Plan"));
  }

  // The tick order decides the slice: with two or more axes ticked each shows its place ("tp (1)"); an order
  // mesh[...] refuses says so and offers the mesh order, one click away.
  void tick_order_is_shown_and_mesh_order_offered() {
    MainWindow w;
    QVERIFY2(w.open_design(kDefault), qPrintable(w.last_error()));
    w.show();
    meshloom::app::AxesModel* axes = w.axes_model();
    const int dp = axes->row_of("dp");
    const int tp = axes->row_of("tp");
    QVERIFY(dp >= 0 && tp > dp);
    w.set_slice({"tp"});
    QCOMPARE(axes->index(tp, meshloom::app::AxesModel::Name).data().toString(), QStringLiteral("tp"));
    axes->setData(axes->index(dp, meshloom::app::AxesModel::Name), Qt::Checked, Qt::CheckStateRole);
    QCOMPARE(axes->index(tp, meshloom::app::AxesModel::Name).data().toString(), QStringLiteral("tp (1)"));
    QCOMPARE(axes->index(dp, meshloom::app::AxesModel::Name).data().toString(), QStringLiteral("dp (2)"));
    QCOMPARE(axes->index(dp, meshloom::app::AxesModel::Name).data(Qt::EditRole).toString(), QStringLiteral("dp"));
    auto* use_order = w.findChild<QPushButton*>(QStringLiteral("slice_mesh_order"));
    QVERIFY(use_order != nullptr);
    QVERIFY(use_order->isVisible());
    bool said = false;
    for (const QLabel* l : w.findChildren<QLabel*>()) {
      said = said || (l->isVisible() && l->text().contains(QStringLiteral("Ticked in mesh order it is mesh[dp, tp]")));
    }
    QVERIFY(said);
    use_order->click();
    QCOMPARE(axes->picked(), (std::vector<std::string>{"dp", "tp"}));
    QVERIFY(!use_order->isVisible());
    QCOMPARE(axes->index(dp, meshloom::app::AxesModel::Name).data().toString(), QStringLiteral("dp (1)"));
  }

  // Where mesh order is refused too (a flattened axis with one it was made of), no mesh order is offered.
  void mesh_order_is_not_offered_where_it_is_refused_too() {
    MainWindow w;
    const QString torchtitan = QStringLiteral(MESHLOOM_EXAMPLES_DIR "/torchtitan-4d.meshloom.json");
    QVERIFY2(w.open_design(torchtitan), qPrintable(w.last_error()));
    w.show();
    w.set_slice({"dp", "dp_shard"});  // dp flattens dp_replicate and dp_shard
    QCOMPARE(w.axes_model()->picked_in_mesh_order(), (std::vector<std::string>{"dp_shard", "dp"}));
    auto* use_order = w.findChild<QPushButton*>(QStringLiteral("slice_mesh_order"));
    QVERIFY(use_order != nullptr);
    QVERIFY(!use_order->isVisible());
    bool refused = false;
    for (const QLabel* l : w.findChildren<QLabel*>()) {
      if (!l->isVisible()) continue;
      QVERIFY2(!l->text().contains(QStringLiteral("Ticked in mesh order")), qPrintable(l->text()));
      refused = refused || l->text().contains(QStringLiteral("Slicing overlapping dim_names"));
    }
    QVERIFY(refused);
  }

  void save_as_has_its_own_keys() {
    MainWindow w;
    const QAction* save = nullptr;
    const QAction* save_as = nullptr;
    for (const QAction* a : w.menuBar()->actions().front()->menu()->actions()) {
      if (a->text() == QLatin1String("&Save")) save = a;
      if (a->text() == QLatin1String("Save &As...")) save_as = a;
    }
    QVERIFY(save != nullptr && save_as != nullptr);
    QVERIFY(!save_as->shortcuts().isEmpty());
    QVERIFY(!save_as->shortcuts().contains(save->shortcut()));
  }

  // A handout page is paper whatever the theme: made in the dark theme it is the light theme's page, pixel for pixel
  // (the canvas was a black panel on the white sheet), and the canvas keeps following the theme after it.
  void a_handout_page_is_paper_in_every_theme() {
    MainWindow w;
    QVERIFY2(w.open_design(kDefault), qPrintable(w.last_error()));
    w.show();
    QVERIFY(w.show_plan_step(1));
    MainWindow::apply_theme(MainWindow::Theme::Light);
    QCoreApplication::processEvents();
    const QImage light = w.handout_page(1, 800);
    QVERIFY2(!light.isNull(), qPrintable(w.last_error()));
    MainWindow::apply_theme(MainWindow::Theme::Dark);
    QCoreApplication::processEvents();
    const QImage dark = w.handout_page(1, 800);
    QVERIFY(dark == light);
    QCOMPARE(w.view()->scene()->palette().color(QPalette::Base), QApplication::palette().color(QPalette::Base));
    MainWindow::apply_theme(MainWindow::Theme::Light);
    QCoreApplication::processEvents();
    QCOMPARE(w.view()->scene()->palette().color(QPalette::Base), QApplication::palette().color(QPalette::Base));
  }

  // The light theme and paper are Fusion's light palette as Qt 6.4 defines it, colour for colour in every group, kept
  // fixed: from Qt 6.5 Fusion's own follows a dark desktop (and a handout page would print dark).
  void the_light_palette_is_fusions_light_one() {
    const QPalette light = meshloom::app::light_palette();
    QCOMPARE(light.color(QPalette::Base), QColor(Qt::white));
    QCOMPARE(light.color(QPalette::Text), QColor(Qt::black));
    QCOMPARE(light.color(QPalette::Window), QColor(0xef, 0xef, 0xef));
#if QT_VERSION < QT_VERSION_CHECK(6, 5, 0)
    const std::unique_ptr<QStyle> fusion(QStyleFactory::create(QStringLiteral("Fusion")));
    QVERIFY(fusion != nullptr);
    const QPalette qt = fusion->standardPalette();
    for (const auto group : {QPalette::Active, QPalette::Inactive, QPalette::Disabled}) {
      for (int role = 0; role < QPalette::NColorRoles; ++role) {
        const auto r = static_cast<QPalette::ColorRole>(role);
        QVERIFY2(light.color(group, r).rgba() == qt.color(group, r).rgba(),
                 qPrintable(QStringLiteral("group %1, role %2: %3, Fusion's %4")
                                .arg(group).arg(role).arg(light.color(group, r).name(QColor::HexArgb),
                                                          qt.color(group, r).name(QColor::HexArgb))));
      }
    }
#endif
    MainWindow::apply_theme(MainWindow::Theme::Light);
    QCOMPARE(QApplication::palette().color(QPalette::Window), light.color(QPalette::Window));
  }

  // Error text and the animation's caption read at >= 4.5:1 on the window colour under every theme, and the error
  // colour follows a theme change both ways (it is chosen again for the new window colour).
  void text_contrast_follows_the_theme() {
    MainWindow w;
    QVERIFY2(w.open_design(kDefault), qPrintable(w.last_error()));
    w.show();
    QLabel* error = meshloom::app::make_message_label(&w);
    meshloom::app::show_message(error, QStringLiteral("Example error"));
    const auto* bar = w.findChild<meshloom::app::AnimationBar*>();
    QVERIFY(bar != nullptr);
    for (const MainWindow::Theme t : {MainWindow::Theme::Dark, MainWindow::Theme::Light, MainWindow::Theme::Dark,
                                      MainWindow::Theme::System}) {
      MainWindow::apply_theme(t);
      QCoreApplication::processEvents();
      const QColor window = error->palette().color(QPalette::Window);
      const QColor red = style_colour(*error);
      QVERIFY2(red.isValid(), qPrintable(error->styleSheet()));
      QCOMPARE(red, meshloom::app::error_colour(error->palette()));
      QVERIFY2(meshloom::app::contrast_ratio(red, window) >= 4.5,
               qPrintable(red.name() + QStringLiteral(" on ") + window.name()));
      for (const QLabel* l : bar->findChildren<QLabel*>()) {
        const double c = meshloom::app::contrast_ratio(l->palette().color(QPalette::WindowText),
                                                       l->palette().color(QPalette::Window));
        QVERIFY2(c >= 4.5, qPrintable(QString::number(c)));
      }
      // The play button's glyph reads on the bar (WCAG's 3:1 for non-text); the style's own media glyphs are dark
      // whatever the palette (1.2:1 on the dark theme).
      const QImage glyph = bar->play_button()->icon().pixmap(16, 16).toImage();
      QColor ink;
      for (int y = 0; y < glyph.height(); ++y) {
        for (int x = 0; x < glyph.width(); ++x) {
          if (glyph.pixelColor(x, y).alpha() > ink.alpha() || !ink.isValid()) ink = glyph.pixelColor(x, y);
        }
      }
      ink.setAlpha(255);
      const double glyph_contrast = meshloom::app::contrast_ratio(ink, bar->palette().color(QPalette::Button));
      QVERIFY2(glyph_contrast >= 3.0, qPrintable(ink.name() + QStringLiteral(" on ") +
                                                   bar->palette().color(QPalette::Button).name()));
    }
    // The formula itself: black on white is 21:1, a colour on itself 1:1.
    QCOMPARE(meshloom::app::contrast_ratio(Qt::black, Qt::white), 21.0);
    QCOMPARE(meshloom::app::contrast_ratio(QColor(0x2b, 0x2d, 0x31), QColor(0x2b, 0x2d, 0x31)), 1.0);
  }

  // Messages start with a capital letter and name no exception kind; field paths and names keep their case.
  void messages_start_with_a_capital_and_name_no_exception() {
    using meshloom::app::capitalized;
    using meshloom::app::error_text;
    QCOMPARE(error_text(meshloom::Error(meshloom::ErrorKind::ValueError, "size 0 of axis tp must be >= 1")),
             QStringLiteral("Size 0 of axis tp must be >= 1"));
    QCOMPARE(error_text(std::runtime_error("cannot write x")), QStringLiteral("Cannot write x"));
    QCOMPARE(capitalized(QStringLiteral("fsdp already exists for submesh")), QStringLiteral("fsdp already exists for submesh"));
    QCOMPARE(capitalized(QStringLiteral("tensors[0].dst = \"S(5)\": no such dim")),
             QStringLiteral("tensors[0].dst = \"S(5)\": no such dim"));
    QCOMPARE(capitalized(QStringLiteral("dp_shard is not an axis")), QStringLiteral("dp_shard is not an axis"));
    QCOMPARE(capitalized(QStringLiteral("mesh: world = 8")), QStringLiteral("Mesh: world = 8"));
    QCOMPARE(capitalized(QString()), QString());
    // In the window: a refused open names the file and the reason, not the engine's exception kind.
    MainWindow w;
    QVERIFY(!w.open_design(QStringLiteral("/nonexistent/x.meshloom.json")));
    QVERIFY2(!w.last_error().contains(QLatin1String("Error:")), qPrintable(w.last_error()));
    QVERIFY2(w.last_error().contains(QLatin1String("x.meshloom.json")), qPrintable(w.last_error()));
  }

  // File > Export > PyTorch code shows the code before anything is written: read-only, Copy puts it on the clipboard.
  void code_export_previews_and_copies() {
    MainWindow w;
    QVERIFY2(w.open_design(kDefault), qPrintable(w.last_error()));
    const auto dialog = w.make_code_dialog(MainWindow::CodeKind::PyTorch);
    QVERIFY(dialog != nullptr);
    QCOMPARE(dialog->code(), QString::fromStdString(meshloom::export_pytorch(w.design())));
    QVERIFY(dialog->code().contains(QLatin1String("init_device_mesh")));
    QVERIFY(dialog->findChild<QPlainTextEdit*>()->isReadOnly());
    const auto jax = w.make_code_dialog(MainWindow::CodeKind::Jax);
    QVERIFY(jax != nullptr && jax->code().contains(QLatin1String("Mesh(")));
    QApplication::clipboard()->setText(QStringLiteral("probe"));
    if (QApplication::clipboard()->text() != QLatin1String("probe")) QSKIP("this platform has no clipboard");
    dialog->copy_button()->click();
    QCOMPARE(QApplication::clipboard()->text(), dialog->code());
    QCOMPARE(dialog->copy_button()->text(), QStringLiteral("Copied"));
  }

  // A bundled example opens as an untitled copy (Save asks for a new file; the tracked example is never written
  // over); the same file elsewhere opens as itself.
  void bundled_examples_open_untitled() {
    QTemporaryDir tmp;
    MainWindow w(nullptr, tmp.filePath(QStringLiteral("autosave")));
    QVERIFY(MainWindow::is_bundled_example(kDefault));
    QVERIFY2(w.open_design(kDefault), qPrintable(w.last_error()));
    QVERIFY(w.document()->path().isEmpty());
    QCOMPARE(w.document()->display_name(), QStringLiteral("untitled (from default.meshloom.json)"));
    QVERIFY2(w.windowTitle().contains(QLatin1String("untitled (from default.meshloom.json)")), qPrintable(w.windowTitle()));
    QVERIFY(!w.document()->is_modified());
    QCOMPARE(w.design(), meshloom::load_design(kDefault.toStdString()));

    const QString copy = tmp.filePath(QStringLiteral("mine.meshloom.json"));
    QVERIFY(QFile::copy(kDefault, copy));
    QVERIFY(!MainWindow::is_bundled_example(copy));
    QVERIFY2(w.open_design(copy), qPrintable(w.last_error()));
    QCOMPARE(w.document()->path(), copy);
    QCOMPARE(w.document()->display_name(), QStringLiteral("mine.meshloom.json"));
  }

  // A copy's relative calibration points at the file beside the example it came from.
  void a_copy_keeps_its_calibration() {
    QTemporaryDir tmp;
    meshloom::Design d = meshloom::load_design(kDefault.toStdString());
    d.calibration = "cal/some.calibration.json";
    const QString path = tmp.filePath(QStringLiteral("template.meshloom.json"));
    meshloom::save_design(d, path.toStdString());
    meshloom::app::DesignDocument doc;
    QString error;
    QVERIFY2(doc.open_copy(path, &error), qPrintable(error));
    QVERIFY(doc.path().isEmpty());
    QCOMPARE(QString::fromStdString(*doc.design().calibration), QDir(tmp.path()).filePath(QStringLiteral("cal/some.calibration.json")));
  }
};

QTEST_MAIN(PolishTest)
#include "test_polish.moc"
