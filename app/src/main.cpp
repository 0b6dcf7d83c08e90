// meshloom: the desktop app. `meshloom [design]` opens a design (the bundled example by default);
// `meshloom --screenshot out.png [design]` renders the window offscreen to a PNG and exits. --slice, --select
// and --theme set up what the window shows first (the docs' screenshots use them).
#include <QApplication>
#include <QCommandLineParser>
#include <QPixmap>
#include <QSettings>

#include <cstdio>
#include <string>
#include <vector>

#include "axes_model.hpp"
#include "design_document.hpp"
#include "main_window.hpp"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("Meshloom"));
  QApplication::setApplicationName(QStringLiteral("Meshloom"));
  QApplication::setApplicationVersion(QStringLiteral(MESHLOOM_VERSION));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Design device meshes and parallelism layouts."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                      QStringLiteral("Render the window to <png> and exit."), QStringLiteral("png"));
  const QCommandLineOption slice(QStringLiteral("slice"),
                                 QStringLiteral("Slice by <axes> (comma separated), as mesh[axes] in PyTorch."),
                                 QStringLiteral("axes"));
  const QCommandLineOption select(QStringLiteral("select"), QStringLiteral("Select rank <rank>."), QStringLiteral("rank"));
  const QCommandLineOption theme(QStringLiteral("theme"), QStringLiteral("system, light or dark."), QStringLiteral("theme"));
  parser.addOptions({screenshot, slice, select, theme});
  parser.addPositionalArgument(QStringLiteral("design"), QStringLiteral("A *.meshloom.json design to open."));
  parser.process(app);

  const auto fail = [](const QString& message) {
    std::fprintf(stderr, "meshloom: %s\n", qPrintable(message));
    return 2;
  };
  using meshloom::app::MainWindow;
  MainWindow::Theme chosen = static_cast<MainWindow::Theme>(QSettings().value(QStringLiteral("theme"), 0).toInt());
  if (parser.isSet(theme)) {
    const QString t = parser.value(theme);
    if (t == QLatin1String("system")) {
      chosen = MainWindow::Theme::System;
    } else if (t == QLatin1String("light")) {
      chosen = MainWindow::Theme::Light;
    } else if (t == QLatin1String("dark")) {
      chosen = MainWindow::Theme::Dark;
    } else {
      return fail(QStringLiteral("--theme %1: expected system, light or dark").arg(t));
    }
  }
  if (chosen != MainWindow::Theme::System) MainWindow::apply_theme(chosen);

  const QStringList args = parser.positionalArguments();
  const QString design = args.isEmpty() ? QStringLiteral(MESHLOOM_DEFAULT_DESIGN) : args.first();

  MainWindow window;
  const bool opened = window.open_design(design);
  if (opened && parser.isSet(slice)) {
    std::vector<std::string> axes;
    for (const QString& a : parser.value(slice).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
      axes.push_back(a.trimmed().toStdString());
      if (window.axes_model()->row_of(axes.back()) < 0) {
        return fail(QStringLiteral("--slice %1: the design has no axis or flattened axis named '%2'")
                        .arg(parser.value(slice), a.trimmed()));
      }
    }
    window.set_slice(axes);
  }
  if (opened && parser.isSet(select)) {
    bool ok = false;
    const qlonglong rank = parser.value(select).toLongLong(&ok);
    if (!ok || rank < 0 || rank >= window.design().world || !window.document()->mesh().contains(rank)) {
      return fail(QStringLiteral("--select %1: not a rank of the mesh").arg(parser.value(select)));
    }
    window.select_rank(rank);
  }
  if (parser.isSet(screenshot)) {
    if (!opened) return fail(window.last_error());
    window.show();
    QApplication::processEvents();
    const QString out = parser.value(screenshot);
    if (!window.grab().save(out)) return fail(QStringLiteral("cannot write screenshot %1").arg(out));
    return 0;
  }
  window.show();
  if (!opened) std::fprintf(stderr, "meshloom: %s\n", qPrintable(window.last_error()));
  window.offer_recovery();
  return QApplication::exec();
}
