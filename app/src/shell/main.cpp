// meshloom: the desktop app. `meshloom [design]` opens a design (the bundled example by default);
// `meshloom --screenshot out.png [--size WxH] [design]` renders the window offscreen to a PNG and exits. --slice, --select, --go-to,
// --tensor, --step, --handout-page, --measurements, --fit, --predictions, --advise, --preview and --theme set up what the window shows first (the docs' screenshots use them):
// `meshloom --screenshot out.png --step 2 design` renders step 2 of the current tensor's plan (0: the layout
// before the first step).
#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QImage>
#include <QPixmap>
#include <QSaveFile>
#include <QSettings>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "advisor/advisor_panel.hpp"
#include "mesh/axes_model.hpp"
#include "document/design_document.hpp"
#include "costs/cost_chart.hpp"
#include "costs/costs_panel.hpp"
#include "costs/measurements.hpp"
#include "costs/prediction_chart.hpp"
#include "costs/prediction_points.hpp"
#include "shell/main_window.hpp"
#include "plan/redistribution_panel.hpp"
#include "shell/inline_message.hpp"

namespace {

// Writes `image` to `path` in the format its suffix names (PNG without one) through a temporary file renamed over
// `path`: a failed write (a full disk, a file size limit) leaves any earlier file whole.
bool save_image(const QImage& image, const QString& path) {
  const QByteArray suffix = QFileInfo(path).suffix().toLower().toLatin1();
  QSaveFile file(path);
  return file.open(QIODevice::WriteOnly) && image.save(&file, suffix.isEmpty() ? "PNG" : suffix.constData()) &&
         file.commit();
}

}  // namespace

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
  const QCommandLineOption handout(QStringLiteral("handout-page"),
                                   QStringLiteral("Render the PDF handout's page of --step <n> (default 0) to <png> "
                                                  "(1600 pixels wide) and exit."),
                                   QStringLiteral("png"));
  const QCommandLineOption go_to(QStringLiteral("go-to"),
                                 QStringLiteral("Select rank <rank> and centre the canvas on it (View > Go to rank)."),
                                 QStringLiteral("rank"));
  const QCommandLineOption theme(QStringLiteral("theme"), QStringLiteral("system, light or dark."), QStringLiteral("theme"));
  const QCommandLineOption tensor(QStringLiteral("tensor"), QStringLiteral("Show the plan of tensor <name>."),
                                  QStringLiteral("name"));
  const QCommandLineOption step(QStringLiteral("step"),
                                QStringLiteral("Show step <n> of the plan's animation (0: before the first step)."),
                                QStringLiteral("n"));
  const QCommandLineOption measurements(QStringLiteral("measurements"),
                                        QStringLiteral("Plot a bench --jsonl <file> in the Costs dock."),
                                        QStringLiteral("file"));
  const QCommandLineOption fit(QStringLiteral("fit"),
                               QStringLiteral("Draw the calibration <file>'s fitted model over the plotted points."),
                               QStringLiteral("file"));
  const QCommandLineOption predictions(
      QStringLiteral("predictions"),
      QStringLiteral("Plot the predicted against the measured steps of a run or validate --jsonl <file>."),
      QStringLiteral("file"));
  const QCommandLineOption advise(QStringLiteral("advise"),
                                  QStringLiteral("Rank the design's layouts in the Advisor dock: <search> is orders, "
                                                 "factorizations or both."),
                                  QStringLiteral("search"));
  const QCommandLineOption preview(QStringLiteral("preview"),
                                   QStringLiteral("With --advise: preview the layout ranked <n> (1: the best) on the canvas."),
                                   QStringLiteral("n"));
  const QCommandLineOption size(QStringLiteral("size"),
                                QStringLiteral("With --screenshot: the window's <WxH> in pixels (default 1280x800)."),
                                QStringLiteral("WxH"));
  parser.addOptions(
      {screenshot, handout, size, slice, select, go_to, tensor, step, measurements, fit, predictions, advise, preview, theme});
  parser.addPositionalArgument(QStringLiteral("design"), QStringLiteral("A *.meshloom.json design to open."));
  parser.process(app);

  // "; line 3: ..." naming the first of a file's problems, or nothing.
  const auto first_problem = [](const std::vector<std::string>& problems) {
    return problems.empty() ? QString() : QStringLiteral("; %1").arg(QString::fromStdString(problems.front()));
  };
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
  // The layout of the last session. Screenshots keep the first-launch layout at one size, whatever the screen, so
  // they come out the same on every machine.
  if (parser.isSet(screenshot)) {
    QSize shot(1280, 800);
    if (parser.isSet(size)) {
      const QStringList wh = parser.value(size).split(QLatin1Char('x'));
      bool ok_w = false;
      bool ok_h = false;
      if (wh.size() == 2) shot = QSize(wh[0].toInt(&ok_w), wh[1].toInt(&ok_h));
      if (!ok_w || !ok_h || shot.width() < 320 || shot.height() < 240 || shot.width() > 8192 || shot.height() > 8192) {
        return fail(QStringLiteral("--size %1: expected WxH in pixels, 320x240 to 8192x8192").arg(parser.value(size)));
      }
    }
    window.resize(shot);
  } else if (parser.isSet(size)) {
    return fail(QStringLiteral("--size needs --screenshot"));
  } else {
    window.restore_layout();
  }
  // Shown before the options below set it up: a dock raised in a hidden window does not stay raised.
  window.show();
  const bool opened = window.open_design(design);
  if (opened && parser.isSet(slice)) {
    std::vector<std::string> axes;
    for (const QString& a : parser.value(slice).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
      const std::string name = a.trimmed().toStdString();
      if (std::find(axes.begin(), axes.end(), name) != axes.end()) {
        return fail(QStringLiteral("--slice %1: names '%2' twice").arg(parser.value(slice), a.trimmed()));
      }
      axes.push_back(name);
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
  if (opened && parser.isSet(go_to)) {
    bool ok = false;
    const qlonglong rank = parser.value(go_to).toLongLong(&ok);
    if (!ok || !window.go_to_rank(rank)) {
      return fail(QStringLiteral("--go-to %1: %2")
                      .arg(parser.value(go_to), ok ? window.last_error() : QStringLiteral("not a number")));
    }
  }
  if (opened && parser.isSet(tensor)) {
    if (!window.redistribution_panel()->select_tensor(parser.value(tensor))) {
      return fail(QStringLiteral("--tensor %1: the design has no tensor of that name").arg(parser.value(tensor)));
    }
    window.show_plan();
  }
  if (opened && parser.isSet(step)) {
    bool ok = false;
    const int n = parser.value(step).toInt(&ok);
    if (!ok) return fail(QStringLiteral("--step %1: not a step number").arg(parser.value(step)));
    if (!window.show_plan_step(n)) return fail(QStringLiteral("--step %1: %2").arg(parser.value(step), window.last_error()));
  }
  if (opened && parser.isSet(measurements)) {
    const QString error = window.costs_panel()->open_measurements(parser.value(measurements));
    if (!error.isEmpty()) return fail(QStringLiteral("--measurements: %1").arg(error));
    const meshloom::app::Measurements& m = window.costs_panel()->chart()->measurements();
    if (m.point_count() == 0) {
      return fail(QStringLiteral("--measurements %1: no bench record to plot%2")
                      .arg(parser.value(measurements), first_problem(m.problems())));
    }
    window.show_costs();
  }
  if (opened && parser.isSet(fit)) {
    const QString error = window.costs_panel()->load_calibration(parser.value(fit));
    if (!error.isEmpty()) return fail(QStringLiteral("--fit: %1").arg(error));
    window.show_costs();
  }
  if (opened && parser.isSet(predictions)) {
    const QString error = window.costs_panel()->open_predictions(parser.value(predictions));
    if (!error.isEmpty()) return fail(QStringLiteral("--predictions: %1").arg(error));
    const meshloom::app::PredictionRecords& r = window.costs_panel()->prediction_chart()->records();
    if (r.steps().empty()) {
      return fail(QStringLiteral("--predictions %1: no step record of meshloom-launch run or validate --jsonl%2")
                      .arg(parser.value(predictions), first_problem(r.problems())));
    }
    window.show_costs();
  }
  if (opened && parser.isSet(advise)) {
    meshloom::AdvisorSearch search{};
    try {
      search = meshloom::advisor_search_from_string(parser.value(advise).toStdString());
    } catch (const std::exception& e) {
      return fail(QStringLiteral("--advise: %1").arg(meshloom::app::error_text(e)));
    }
    meshloom::app::AdvisorPanel* advisor = window.advisor_panel();
    advisor->set_search(search);
    window.show_advisor();
    if (!advisor->rank()) return fail(QStringLiteral("--advise: %1").arg(advisor->error()));
    if (!advisor->wait_idle(120'000)) return fail(QStringLiteral("--advise: the ranking took more than 120 s"));
    if (!advisor->error().isEmpty()) return fail(QStringLiteral("--advise: %1").arg(advisor->error()));
    if (parser.isSet(preview)) {
      bool ok = false;
      const int n = parser.value(preview).toInt(&ok);
      if (!ok || n < 1 || static_cast<std::size_t>(n) > advisor->result().ranked.size()) {
        return fail(QStringLiteral("--preview %1: not a rank between 1 and %2")
                        .arg(parser.value(preview))
                        .arg(advisor->result().ranked.size()));
      }
      advisor->preview(static_cast<std::size_t>(n - 1));
    }
  } else if (parser.isSet(preview)) {
    return fail(QStringLiteral("--preview needs --advise"));
  }
  if (parser.isSet(handout)) {
    if (!opened) return fail(window.last_error());
    const int page = parser.isSet(step) ? parser.value(step).toInt() : 0;
    const QImage image = window.handout_page(page, 1600);
    if (image.isNull()) return fail(QStringLiteral("--handout-page: %1").arg(window.last_error()));
    const QString out = parser.value(handout);
    if (!save_image(image, out)) return fail(QStringLiteral("cannot write %1").arg(out));
    return 0;
  }
  if (parser.isSet(screenshot)) {
    if (!opened) return fail(window.last_error());
    QApplication::processEvents();
    const QString out = parser.value(screenshot);
    if (!save_image(window.grab().toImage(), out)) return fail(QStringLiteral("cannot write screenshot %1").arg(out));
    return 0;
  }
  if (!opened) std::fprintf(stderr, "meshloom: %s\n", qPrintable(window.last_error()));
  window.offer_recovery();
  return QApplication::exec();
}
