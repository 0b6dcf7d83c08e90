// meshloom: the desktop app. `meshloom [design]` opens a design (the bundled example by default);
// `meshloom --screenshot out.png [design]` renders the window offscreen to a PNG and exits.
#include <QApplication>
#include <QCommandLineParser>
#include <QPixmap>

#include <cstdio>

#include "main_window.hpp"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("Meshloom"));
  QApplication::setApplicationVersion(QStringLiteral(MESHLOOM_VERSION));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Design device meshes and parallelism layouts."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                      QStringLiteral("Render the window to <png> and exit."), QStringLiteral("png"));
  parser.addOption(screenshot);
  parser.addPositionalArgument(QStringLiteral("design"), QStringLiteral("A *.meshloom.json design to open."));
  parser.process(app);

  const QStringList args = parser.positionalArguments();
  const QString design = args.isEmpty() ? QStringLiteral(MESHLOOM_DEFAULT_DESIGN) : args.first();

  meshloom::app::MainWindow window;
  const bool opened = window.open_design(design);
  if (parser.isSet(screenshot)) {
    if (!opened) {
      std::fprintf(stderr, "meshloom: %s\n", qPrintable(window.last_error()));
      return 2;
    }
    window.show();
    QApplication::processEvents();
    const QString out = parser.value(screenshot);
    if (!window.grab().save(out)) {
      std::fprintf(stderr, "meshloom: cannot write screenshot %s\n", qPrintable(out));
      return 2;
    }
    return 0;
  }
  window.show();
  if (!opened) std::fprintf(stderr, "meshloom: %s\n", qPrintable(window.last_error()));
  return QApplication::exec();
}
