// Predicted against measured: the step records of `meshloom-launch run` / `validate` (a small hand-written file
// with a garbage line, a wrong field, a null prediction, an unmeasured step and records of other types), the error
// statistics against values computed by hand, the scatter (points per model, fixed never drawn, the diagonal,
// the summary table, the read-out, PNG export) in the Costs dock, and, in the plan panel, the plan under the old
// and the new calibration after Apply, with the closer one named against measured steps. Offscreen platform.
#include <QApplication>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QImage>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

#include <qcustomplot.h>

#include <cmath>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "costs/cost_chart.hpp"
#include "costs/costs_panel.hpp"
#include "document/design_document.hpp"
#include "shell/main_window.hpp"
#include "meshloom/design/design.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/state.hpp"
#include "plan/plan_model.hpp"
#include "costs/prediction_chart.hpp"
#include "costs/prediction_points.hpp"
#include "plan/redistribution_panel.hpp"
#include "shell/inline_message.hpp"
#include "support/two_by_two_design.hpp"

using namespace meshloom;
using namespace meshloom::app;

namespace {

const QString kFixture = QStringLiteral(MESHLOOM_TEST_DATA_DIR "/predictions-small.jsonl");
const QString kCalibration = QStringLiteral(MESHLOOM_CALIBRATION_DIR "/local-2x2.calibration.json");

bool near(double a, double b) { return std::abs(a - b) <= 1e-12 * std::max(1.0, std::abs(b)); }

QCPGraph* graph_named(QCustomPlot* plot, const QString& name) {
  for (int i = 0; i < plot->graphCount(); ++i) {
    if (plot->graph(i)->name() == name) return plot->graph(i);
  }
  return nullptr;
}

int table_row(const PredictionChart& chart, const QString& model) {
  for (int r = 0; r < chart.summary_table()->rowCount(); ++r) {
    if (chart.summary_cell(r, 0) == model) return r;
  }
  return -1;
}

void write(const QString& path, const std::string& text) {
  std::ofstream out(path.toStdString(), std::ios::binary);
  out << text;
}

// The 2x2 design saved into `dir` as two.meshloom.json; its path.
QString saved_two_by_two(const QTemporaryDir& dir) {
  const QString path = dir.filePath(QStringLiteral("two.meshloom.json"));
  save_design(meshloom::testing::two_by_two_design(), path.toStdString());
  return path;
}

// `c` with `change` applied to every fit of every axis.
template <class Change>
Calibration with_fits(Calibration c, Change change) {
  for (auto& [axis, fits] : c.axes) {
    for (auto& [name, fit] : fits) change(fit);
  }
  return c;
}

// A step record of `step` measured at `measured_us`, as the launcher writes it.
std::string step_record(const PlanStep& step, std::size_t index, double measured_us) {
  std::string axes;
  for (const auto a : step.axes) axes += (axes.empty() ? "" : ",") + std::to_string(a);
  return R"({"type":"step","plan":0,"step":)" + std::to_string(index) + R"(,"axes":[)" + axes +
         R"(],"collective":")" + std::string(to_string(step.collective)) + R"(","merged":)" +
         (step.merged ? "true" : "false") + R"(,"from":")" + to_string(step.from) + R"(","to":")" +
         to_string(step.to) + R"(","bytes":)" + std::to_string(step.bytes) +
         R"(,"predicted":{"comm":1.0},"measured_us":)" +
         QString::number(measured_us, 'g', 17).toStdString() + "}\n";
}

}  // namespace

class PredictionsTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("MeshloomTest"));
    QCoreApplication::setApplicationName(QStringLiteral("MeshloomPredictionsTest"));
    QSettings().clear();
  }

  void parses_step_records_and_reports_bad_lines() {
    PredictionRecords r;
    QCOMPARE(QString::fromStdString(r.load_jsonl(kFixture.toStdString())), QString());
    QCOMPARE(r.lines(), std::size_t{12});
    QCOMPARE(r.command(), std::string("validate"));
    // Six step records read (one of them unmeasured) and the report; config, request and summary ignored.
    QCOMPARE(r.steps().size(), std::size_t{6});
    QCOMPARE(r.reports().size(), std::size_t{1});
    QCOMPARE(r.reports()[0].line, std::size_t{12});
    QCOMPARE(r.unmeasured(), std::size_t{1});
    QCOMPARE(r.models(), (std::vector<std::string>{"fixed", "comm", "calibrated"}));  // the config's order

    // The garbage line and the wrong field, by line number and field.
    QCOMPARE(r.problems().size(), std::size_t{2});
    const QString garbage = QString::fromStdString(r.problems()[0]);
    const QString field = QString::fromStdString(r.problems()[1]);
    QVERIFY2(garbage.startsWith(QStringLiteral("line 5: not a JSON record")), qPrintable(garbage));
    QVERIFY2(field.startsWith(QStringLiteral("line 10: step record: field \"bytes\"")), qPrintable(field));

    // Everything of a record is kept.
    const StepRecord& merged = r.steps()[3];
    QCOMPARE(merged.line, std::size_t{7});
    QCOMPARE(merged.request, std::optional<std::int64_t>(1));
    QCOMPARE(merged.axes, (std::vector<std::int64_t>{0, 1}));
    QCOMPARE(merged.collective, std::string("all_reduce"));
    QVERIFY(merged.merged);
    QCOMPARE(merged.from, std::string("P(sum)"));
    QCOMPARE(merged.to, std::string("R"));
    QCOMPARE(merged.bytes, std::int64_t{8192});
    QCOMPARE(merged.measured_us, 100.0);
    QCOMPARE(merged.predicted.size(), std::size_t{3});
    QCOMPARE(merged.predicted[2].first, std::string("calibrated"));
    QVERIFY(!merged.predicted[2].second);  // null: not finite

    // Points: the unmeasured record gives none, the null prediction none for calibrated.
    QCOMPARE(r.points("comm").size(), std::size_t{5});
    QCOMPARE(r.points("calibrated").size(), std::size_t{4});
    QCOMPARE(r.points("fixed").size(), std::size_t{5});
    const PredictionPoint p = r.points("comm")[1];
    QCOMPARE(p.predicted_us, 20.0);
    QCOMPARE(p.measured_us, 25.0);
    QCOMPARE(p.collective, std::string("all_gather"));
    QCOMPARE(p.bytes, std::int64_t{2048});
    QCOMPARE(p.request, std::optional<std::int64_t>(0));
    QCOMPARE(p.plan, std::int64_t{0});
    QCOMPARE(p.step, std::int64_t{1});
    QCOMPARE(p.line, std::size_t{4});

    // A run's record (no "request"), a line cut short, a duplicate key, an integer past int64, a wrong prediction.
    PredictionRecords s;
    QCOMPARE(s.add_line(R"({"type":"config","command":"run","models":["comm"]})"), std::string());
    QCOMPARE(s.add_line(R"j({"type":"step","plan":0,"step":0,"axes":[0],"collective":"all_gather","from":"S(0)",)j"
                        R"j("to":"R","bytes":64,"predicted":{"comm":1.5},"measured_us":2.0})j"),
             std::string());
    QVERIFY(!s.steps().back().request);
    std::string e = s.add_line(R"({"type":"step","plan":0,"step":1,"axes":[0)");
    QVERIFY2(e.rfind("line 3: truncated record", 0) == 0, e.c_str());
    e = s.add_line(R"j({"type":"step","plan":0,"plan":1,"step":0,"axes":[0],"collective":"all_gather","from":"S(0)",)j"
                   R"j("to":"R","bytes":64,"predicted":{"comm":1.5},"measured_us":2.0})j");
    QVERIFY2(e.rfind("line 4: ", 0) == 0 && e.find("duplicate key \"plan\"") != std::string::npos, e.c_str());
    e = s.add_line(R"j({"type":"step","plan":0,"step":0,"axes":[0],"collective":"all_gather","from":"S(0)",)j"
                   R"j("to":"R","bytes":18446744073709551615,"predicted":{"comm":1.5},"measured_us":2.0})j");
    QVERIFY2(e.find("line 5: step record: field \"bytes\" = 18446744073709551615: out of range") == 0, e.c_str());
    e = s.add_line(R"j({"type":"step","plan":0,"step":0,"axes":[0],"collective":"all_gather","from":"S(0)",)j"
                   R"j("to":"R","bytes":64,"predicted":{"comm":"fast"},"measured_us":2.0})j");
    QCOMPARE(QString::fromStdString(e),
             QStringLiteral("line 6: step record: field \"predicted.comm\" = \"fast\": expected a number or null"));
    e = s.add_line(R"j({"type":"step","plan":0,"step":0,"axes":[0],"collective":"gather","from":"S(0)",)j"
                   R"j("to":"R","bytes":64,"predicted":{"comm":1},"measured_us":2.0})j");
    QVERIFY2(e.find("line 7: step record: field \"collective\" = \"gather\"") == 0, e.c_str());
    e = s.add_line(R"j({"type":"step","plan":0,"step":0,"axes":[0],"collective":"all_gather","from":"S(0)",)j"
                   R"j("to":"R","bytes":64,"predicted":{"comm":1}})j");
    QVERIFY2(e.find("line 8: step record: missing field \"measured_us\"") == 0, e.c_str());
    QCOMPARE(s.add_line("   "), std::string());
    QCOMPARE(s.steps().size(), std::size_t{1});
    QCOMPARE(s.problems().size(), std::size_t{6});

    // A file that cannot be read changes nothing and names the path.
    const std::string missing = (QDir::tempPath() + QStringLiteral("/no-such-dir-meshloom/x.jsonl")).toStdString();
    const std::string err = r.load_jsonl(missing);
    QVERIFY2(err.find(missing) != std::string::npos, err.c_str());
    QCOMPARE(r.steps().size(), std::size_t{6});
  }

  void statistics_match_hand_computed_values() {
    // The helpers on their own.
    QVERIFY(std::isnan(median({})));
    QVERIFY(std::isnan(nearest_rank({}, 90)));
    QCOMPARE(median({3.0, 1.0, 2.0}), 2.0);
    QCOMPARE(median({4.0, 1.0, 3.0, 2.0}), 2.5);  // the mean of the middle two
    QCOMPARE(nearest_rank({3.0}, 90), 3.0);
    QCOMPARE(nearest_rank({0.0, 10.0}, 90), 10.0);  // ceil(1.8) = the 2nd
    QCOMPARE(nearest_rank({10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 90), 9.0);  // ceil(9) = the 9th
    QCOMPARE(nearest_rank({10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, 90), 9.0);  // ceil(9.9) = the 10th of 0..10
    QCOMPARE(nearest_rank({5, 1, 3}, 50), 3.0);
    QCOMPARE(average_ranks({10.0, 30.0, 20.0, 30.0, 30.0}), (std::vector<double>{1, 4, 2, 4, 4}));
    QCOMPARE(average_ranks({5.0, 5.0}), (std::vector<double>{1.5, 1.5}));
    QCOMPARE(spearman({1, 2, 3}, {10, 20, 30}), 1.0);
    QCOMPARE(spearman({1, 2, 3}, {30, 20, 10}), -1.0);
    QVERIFY(std::isnan(spearman({1}, {1})));
    QVERIFY(std::isnan(spearman({1, 1, 1}, {1, 2, 3})));  // constant: undefined
    QCOMPARE(relative_error(20, 25), 0.2);

    PredictionRecords r;
    QCOMPARE(r.load_jsonl(kFixture.toStdString()), std::string());
    const std::vector<ModelSummary> all = r.summaries();
    QCOMPARE(all.size(), std::size_t{3});

    // comm: (10,10) (20,25) (40,20) (50,100) (60,40); relative errors 0, 0.2, 1, 0.5, 0.5.
    // Sorted 0, 0.2, 0.5, 0.5, 1: median 0.5; p90 the ceil(4.5) = 5th: 1.
    // Ranks of predicted 1 2 3 4 5, of measured 1 3 2 5 4: sum d^2 = 4, rho = 1 - 6 * 4 / (5 * 24) = 0.8.
    const ModelSummary comm = r.summary("comm");
    QVERIFY(comm.comparable);
    QCOMPARE(comm.count, std::size_t{5});
    QCOMPARE(comm.not_finite, std::size_t{0});
    QVERIFY2(near(comm.median_error, 0.5), qPrintable(QString::number(comm.median_error, 'g', 17)));
    QVERIFY2(near(comm.p90_error, 1.0), qPrintable(QString::number(comm.p90_error, 'g', 17)));
    QVERIFY2(near(comm.spearman, 0.8), qPrintable(QString::number(comm.spearman, 'g', 17)));

    // calibrated: (12,10) (18,25) (30,20) (18,40), the null of the merged step skipped; errors 0.2, 0.28, 0.5,
    // 0.55: median (0.28 + 0.5) / 2 = 0.39, p90 the ceil(3.6) = 4th: 0.55. Predicted ranks with the tie averaged:
    // 1, 2.5, 4, 2.5; measured ranks 1, 3, 2, 4; Pearson of the ranks: 1.5 / sqrt(4.5 * 5) = 1/sqrt(10).
    const ModelSummary cal = r.summary("calibrated");
    QCOMPARE(cal.count, std::size_t{4});
    QCOMPARE(cal.not_finite, std::size_t{1});
    QVERIFY2(near(cal.median_error, 0.39), qPrintable(QString::number(cal.median_error, 'g', 17)));
    QVERIFY2(near(cal.p90_error, 0.55), qPrintable(QString::number(cal.p90_error, 'g', 17)));
    QVERIFY2(near(cal.spearman, 1.0 / std::sqrt(10.0)), qPrintable(QString::number(cal.spearman, 'g', 17)));

    // fixed: unitless, counted but not compared.
    const ModelSummary fixed = r.summary("fixed");
    QVERIFY(!fixed.comparable);
    QCOMPARE(fixed.count, std::size_t{5});
    QVERIFY(std::isnan(fixed.median_error) && std::isnan(fixed.p90_error) && std::isnan(fixed.spearman));
    QVERIFY(!is_microsecond_model("fixed"));
    QVERIFY(is_microsecond_model("comm") && is_microsecond_model("calibrated") && is_microsecond_model("nccl"));
  }

  void the_scatter_shows_every_point_per_model() {
    PredictionRecords r;
    QCOMPARE(r.load_jsonl(kFixture.toStdString()), std::string());
    // A step predicted at 0 µs (an axis of one rank): in the statistics, not on log axes.
    QCOMPARE(r.add_line(R"j({"type":"step","plan":3,"step":0,"axes":[0],"collective":"all_gather","from":"S(0)",)j"
                        R"j("to":"R","bytes":64,"predicted":{"comm":0,"calibrated":0,"fixed":0},"measured_us":3})j"),
             std::string());
    // A local step, measured or not, is never compared (validate's rule: local steps move no data).
    QCOMPARE(r.add_line(R"j({"type":"step","plan":3,"step":1,"axes":[0],"collective":"chunk","from":"R","to":"S(0)",)j"
                        R"j("bytes":64,"predicted":{"comm":0,"calibrated":0,"fixed":0},"measured_us":2})j"),
             std::string());
    QCOMPARE(r.points("comm").size(), std::size_t{6});
    PredictionChart chart;
    chart.resize(900, 700);
    chart.show();
    QSignalSpy changed(&chart, &PredictionChart::chartChanged);
    chart.set_records(std::move(r), QStringLiteral("predictions-small.jsonl"));
    QCOMPARE(changed.count(), 1);
    QCustomPlot* plot = chart.plot();
    QCOMPARE(chart.plotted_models(), (std::vector<std::string>{"comm", "calibrated"}));
    QCOMPARE(plot->graphCount(), 3);
    QVERIFY(graph_named(plot, QStringLiteral("fixed")) == nullptr);  // unitless: never drawn
    QCOMPARE(graph_named(plot, QStringLiteral("comm"))->dataCount(), 5);
    QCOMPARE(graph_named(plot, QStringLiteral("calibrated"))->dataCount(), 4);
    QCOMPARE(chart.undrawn("comm"), std::size_t{1});
    QCPGraph* diagonal = graph_named(plot, QStringLiteral("y = x"));
    QVERIFY(diagonal != nullptr);
    QCOMPARE(diagonal->dataCount(), 2);
    for (auto it = diagonal->data()->constBegin(); it != diagonal->data()->constEnd(); ++it) {
      QCOMPARE(it->key, it->value);
    }
    QCOMPARE(plot->xAxis->scaleType(), QCPAxis::stLogarithmic);
    QCOMPARE(plot->yAxis->scaleType(), QCPAxis::stLogarithmic);
    QCOMPARE(plot->xAxis->range().lower, plot->yAxis->range().lower);
    QCOMPARE(plot->xAxis->range().upper, plot->yAxis->range().upper);
    QVERIFY(plot->xAxis->range().contains(10.0) && plot->xAxis->range().contains(100.0));  // every point: 10 to 100 us
    QVERIFY(plot->legend->visible());
    QCOMPARE(plot->xAxis->label(), QStringLiteral("predicted"));
    QCOMPARE(plot->yAxis->label(), QStringLiteral("measured"));
    // A model's colour and marker differ from the other's.
    QVERIFY(graph_named(plot, QStringLiteral("comm"))->scatterStyle().shape() !=
            graph_named(plot, QStringLiteral("calibrated"))->scatterStyle().shape());

    // The table: one row per model; fixed not comparable. The step predicted at 0 (error 1) joins comm's and
    // calibrated's statistics.
    QCOMPARE(chart.summary_table()->rowCount(), 3);
    const int fixed = table_row(chart, QStringLiteral("fixed"));
    const int comm = table_row(chart, QStringLiteral("comm"));
    const int cal = table_row(chart, QStringLiteral("calibrated"));
    QVERIFY(fixed >= 0 && comm >= 0 && cal >= 0);
    QCOMPARE(chart.summary_cell(fixed, 1), QStringLiteral("6"));
    QCOMPARE(chart.summary_cell(fixed, 2), QStringLiteral("unitless: not comparable"));
    QCOMPARE(chart.summary_table()->columnSpan(fixed, 2), 3);
    QCOMPARE(chart.summary_cell(comm, 1), QStringLiteral("6 (1 at 0 not drawn)"));
    QCOMPARE(chart.summary_cell(cal, 1), QStringLiteral("5 (1 at 0 not drawn) (1 not finite)"));
    // comm with that step's 1: 0, 0.2, 0.5, 0.5, 1, 1: median 0.5, p90 the ceil(5.4) = 6th: 1.
    QCOMPARE(chart.summary_cell(comm, 2), QStringLiteral("50.0 %"));
    QCOMPARE(chart.summary_cell(comm, 3), QStringLiteral("100.0 %"));
    QVERIFY(!chart.summary_cell(comm, 4).isEmpty());

    // The read-out of a drawn point.
    plot->replot();
    const QPointF at(plot->xAxis->coordToPixel(20.0), plot->yAxis->coordToPixel(25.0));
    const QString text = chart.readout_at(at);
    QVERIFY2(text.startsWith(QStringLiteral("comm · all_gather · 2 KiB · predicted 20.00 µs · measured 25.00 µs · "
                                            "20.0 % off · request 0 plan 0 step 1 · line 4")),
             qPrintable(text));
    QCOMPARE(chart.readout_at(QPointF(-1000, -1000)), QString());

    // PNG export through the chart's shared exporter.
    QTemporaryDir tmp;
    const QString png = tmp.filePath(QStringLiteral("scatter.png"));
    QString error;
    QVERIFY2(chart.save_png(png, 640, 480, &error), qPrintable(error));
    const QImage image(png);
    QCOMPARE(image.size(), QSize(640, 480));

    chart.clear();
    QCOMPARE(chart.plot()->graphCount(), 1);  // only the diagonal
    QCOMPARE(chart.summary_table()->rowCount(), 0);
  }

  // validate's report records: each model's right picks and time lost, read field by field and shown in the table
  // beside the step statistics (fixed's too: its picks are judged though its weights are not times).
  void report_records_give_each_models_picks() {
    PredictionRecords r;
    QCOMPARE(r.add_line(R"({"type":"config","command":"validate","models":["fixed","calibrated"]})"), std::string());
    QCOMPARE(r.add_line(R"j({"type":"step","request":0,"plan":0,"step":0,"axes":[0],"collective":"all_gather",)j"
                        R"j("from":"S(0)","to":"R","bytes":64,"predicted":{"fixed":1,"calibrated":2},)j"
                        R"j("measured_us":2})j"),
             std::string());
    QCOMPARE(r.add_line(R"j({"type":"report","model":"fixed","time_model":false,"requests":30,"right":23,"exact":16,)j"
                        R"j("time_lost":{"mean":0.086,"max":0.63},"step_error":null,"misses_priced_alike":6})j"),
             std::string());
    // Written before validate reported the time lost: the picks alone.
    QCOMPARE(r.add_line(R"j({"type":"report","model":"calibrated","requests":30,"right":29})j"), std::string());
    QCOMPARE(r.reports().size(), std::size_t{2});
    QCOMPARE(r.reports()[0].line, std::size_t{3});
    QVERIFY(r.report("comm") == nullptr);
    QCOMPARE(picks_text(*r.report("fixed")), std::string("23/30 (76.7 %)"));
    QCOMPARE(time_lost_text(*r.report("fixed")), std::string("8.6 % (max 63.0 %)"));
    QCOMPARE(time_lost_text(*r.report("calibrated")), std::string("—"));
    QCOMPARE(picks_note(*r.report("fixed")),
             std::string("6 of its 7 wrong picks were between plans it priced alike: its prices did not separate them"));
    QCOMPARE(picks_note(*r.report("calibrated")), std::string());  // written before validate counted them
    ReportRecord one;
    one.model = "comm";
    one.requests = 3;
    one.right = 2;
    one.misses_priced_alike = 1;
    QCOMPARE(picks_note(one), std::string("its one wrong pick was between plans it priced alike: its prices did not "
                                          "separate them"));
    one.misses_priced_alike = 0;
    QCOMPARE(picks_note(one).rfind("its one wrong pick was not between", 0), 0U);
    one.right = 3;
    QCOMPARE(picks_note(one), std::string());  // no misses
    // The last report of a model counts.
    QCOMPARE(r.add_line(R"j({"type":"report","model":"calibrated","requests":30,"right":30,)j"
                        R"j("time_lost":{"mean":0,"max":0}})j"),
             std::string());
    QCOMPARE(picks_text(*r.report("calibrated")), std::string("30/30 (100.0 %)"));
    QCOMPARE(time_lost_text(*r.report("calibrated")), std::string("0.0 % (max 0.0 %)"));

    PredictionChart chart;
    chart.resize(900, 600);
    PredictionRecords shown = r;
    chart.set_records(std::move(shown));
    const int fixed = table_row(chart, QStringLiteral("fixed"));
    const int cal = table_row(chart, QStringLiteral("calibrated"));
    QVERIFY(fixed >= 0 && cal >= 0);
    QCOMPARE(chart.summary_table()->horizontalHeaderItem(5)->text(), QStringLiteral("Right picks"));
    QCOMPARE(chart.summary_table()->horizontalHeaderItem(6)->text(), QStringLiteral("Time lost"));
    QCOMPARE(chart.summary_cell(fixed, 2), QStringLiteral("unitless: not comparable"));
    QCOMPARE(chart.summary_table()->columnSpan(fixed, 2), 3);  // the step statistics only
    QCOMPARE(chart.summary_cell(fixed, 5), QStringLiteral("23/30 (76.7 %)"));
    QCOMPARE(chart.summary_cell(fixed, 6), QStringLiteral("8.6 % (max 63.0 %)"));
    QCOMPARE(chart.summary_cell(cal, 5), QStringLiteral("30/30 (100.0 %)"));
    QVERIFY(chart.summary_table()->item(fixed, 5)->toolTip().startsWith(QStringLiteral("6 of its 7 wrong picks")));
    QVERIFY(chart.summary_table()->item(cal, 5)->toolTip().isEmpty());
    // A run's records have no report: a dash.
    PredictionRecords run;
    QCOMPARE(run.add_line(R"j({"type":"step","plan":0,"step":0,"axes":[0],"collective":"all_gather",)j"
                          R"j("from":"S(0)","to":"R","bytes":64,"predicted":{"calibrated":2},"measured_us":2})j"),
             std::string());
    chart.set_records(std::move(run));
    QCOMPARE(chart.summary_cell(0, 5), QStringLiteral("—"));
    QCOMPARE(chart.summary_cell(0, 6), QStringLiteral("—"));

    // Bad report records name the line and the field, and the rest is kept.
    PredictionRecords bad;
    QCOMPARE(bad.add_line(R"j({"type":"report","model":"comm","requests":2,"right":3})j"),
             std::string("line 1: report record: field \"right\" = 3: more than its 2 requests"));
    QCOMPARE(bad.add_line(R"j({"type":"report","model":"comm","requests":2,"right":1,)j"
                          R"j("time_lost":{"mean":0.5,"max":0.1}})j"),
             std::string("line 2: report record: field \"time_lost\" = {\"max\":0.1,\"mean\":0.5}: needs 0 <= mean "
                         "<= max"));
    QCOMPARE(bad.add_line(R"j({"type":"report","model":"comm","requests":-1,"right":0})j"),
             std::string("line 3: report record: field \"requests\" = -1: must be >= 0"));
    QCOMPARE(bad.add_line(R"j({"type":"report","requests":1,"right":0})j").rfind("line 4: report record: ", 0), 0U);
    QCOMPARE(bad.add_line(R"j({"type":"report","model":"comm","requests":1,"right":0,"time_lost":{"max":0.1}})j"),
             std::string("line 5: report record: field \"time_lost.mean\" is missing"));
    QCOMPARE(bad.add_line(R"j({"type":"report","model":"comm","requests":1,"right":0,"time_lost":0.1})j"),
             std::string("line 6: report record: field \"time_lost\" = 0.1: expected {\"mean\": .., \"max\": ..}"));
    QCOMPARE(bad.add_line(R"j({"type":"report","model":"comm","requests":3,"right":2,"misses_priced_alike":2})j"),
             std::string("line 7: report record: field \"misses_priced_alike\" = 2: must be <= requests - right = 1"));
    QVERIFY(bad.reports().empty());
    QCOMPARE(bad.problems().size(), std::size_t{7});
    // The launcher's mean of equal losses may round an ulp above them: still read.
    QCOMPARE(bad.add_line(R"j({"type":"report","model":"comm","requests":3,"right":0,)j"
                          R"j("time_lost":{"mean":0.10000000000000002,"max":0.1}})j"),
             std::string());
  }

  // validate's drift records: read, checked field by field, and said under the scatter's table (in the error colour
  // when the launcher found the machine drifted).
  void drift_records_say_how_far_the_machine_moved() {
    PredictionRecords r;
    QCOMPARE(r.add_line(R"({"type":"config","command":"validate","models":["comm","calibrated"]})"), std::string());
    QCOMPARE(r.add_line(R"j({"type":"drift","when":"before","median_ratio":1.0,"min_ratio":0.79,"max_ratio":1.15,)j"
                        R"j("drifted":false,"anchors":[{},{}]})j"),
             std::string());
    QCOMPARE(r.add_line(R"j({"type":"step","request":0,"plan":0,"step":0,"axes":[0],"collective":"all_gather",)j"
                        R"j("from":"S(0)","to":"R","bytes":64,"predicted":{"comm":1.5,"calibrated":2},"measured_us":2})j"),
             std::string());
    // A ratio of two times below 0 is no drift record.
    PredictionRecords negative;
    (void)negative.add_line(R"({"type":"config","command":"validate","models":["comm","calibrated"]})");
    QCOMPARE(negative.add_line(R"j({"type":"drift","when":"before","median_ratio":-5,"min_ratio":0.79,)j"
                               R"j("max_ratio":1.15,"drifted":false,"anchors":[{}]})j"),
             std::string("line 2: drift record: field \"median_ratio\" = -5: must be >= 0 (a ratio of two times; 0 "
                         "without anchors)"));
    QVERIFY(negative.drift().empty());
    QCOMPARE(r.drift().size(), std::size_t{1});
    QCOMPARE(r.drift()[0].line, std::size_t{2});
    QCOMPARE(r.drift()[0].when, std::string("before"));
    QCOMPARE(r.drift()[0].anchors, std::size_t{2});
    QCOMPARE(r.drift()[0].max_ratio, 1.15);
    QVERIFY(!any_drifted(r.drift()));
    QCOMPARE(drift_text(r.drift()), std::string("Drift against the calibration (its own points re-timed): 1.00x before "
                                                "the requests."));

    PredictionChart chart;
    chart.resize(800, 600);
    chart.show();
    PredictionRecords steady = r;
    chart.set_records(std::move(steady));
    QVERIFY(chart.drift_label()->isVisible());
    QCOMPARE(chart.drift_label()->text(), QString::fromStdString(drift_text(r.drift())));
    QVERIFY(chart.drift_label()->styleSheet().isEmpty());  // the palette's own colour

    QCOMPARE(r.add_line(R"j({"type":"drift","when":"after","median_ratio":1.6,"min_ratio":1.47,"max_ratio":2.24,)j"
                        R"j("drifted":true,"anchors":[{}]})j"),
             std::string());
    QVERIFY(any_drifted(r.drift()));
    QCOMPARE(drift_text(r.drift()),
             std::string("Drift against the calibration (its own points re-timed): 1.00x before the requests, 1.60x "
                         "after. The machine ran slower than when it was calibrated: the errors above include that "
                         "drift."));
    PredictionRecords moved = r;
    chart.set_records(std::move(moved));
    QCOMPARE(chart.drift_label()->text(), QString::fromStdString(drift_text(r.drift())));
    QVERIFY2(chart.drift_label()->styleSheet().contains(error_colour(chart.drift_label()->palette()).name()),
             qPrintable(chart.drift_label()->styleSheet()));
    PredictionRecords faster;
    QCOMPARE(faster.add_line(R"j({"type":"drift","when":"after","median_ratio":0.66,"min_ratio":0.49,)j"
                             R"j("max_ratio":1.02,"drifted":true,"anchors":[{}]})j"),
             std::string());
    QVERIFY(drift_text(faster.drift()).find("ran faster than") != std::string::npos);
    PredictionRecords none;
    QCOMPARE(none.add_line(R"j({"type":"drift","when":"before","median_ratio":0,"min_ratio":0,"max_ratio":0,)j"
                           R"j("drifted":false,"anchors":[]})j"),
             std::string());
    QCOMPARE(drift_text(none.drift()),
             std::string("Drift against the calibration (its own points re-timed): no anchor before the requests."));

    // Bad drift records are problems by line and field; the rest is kept.
    std::string e = r.add_line(R"j({"type":"drift","when":"during","median_ratio":1,"min_ratio":1,"max_ratio":1,)j"
                               R"j("drifted":false,"anchors":[]})j");
    QCOMPARE(QString::fromStdString(e),
             QStringLiteral("line 5: drift record: field \"when\" = \"during\": expected \"before\" or \"after\""));
    e = r.add_line(R"j({"type":"drift","when":"after","median_ratio":null,"min_ratio":1,"max_ratio":1,)j"
                   R"j("drifted":false,"anchors":[]})j");
    QCOMPARE(QString::fromStdString(e),
             QStringLiteral("line 6: drift record: field \"median_ratio\" = null: expected a finite number"));
    e = r.add_line(R"j({"type":"drift","when":"after","median_ratio":1,"min_ratio":1,"max_ratio":1,)j"
                   R"j("drifted":"yes","anchors":[]})j");
    QCOMPARE(QString::fromStdString(e),
             QStringLiteral("line 7: drift record: field \"drifted\" = \"yes\": expected true or false"));
    QCOMPARE(r.drift().size(), std::size_t{2});

    // Without drift records the line is hidden.
    chart.clear();
    QVERIFY(!chart.drift_label()->isVisible());
  }

  void the_costs_dock_opens_run_or_validate_records() {
    DesignDocument doc;
    CostsPanel panel(&doc);
    QSignalSpy loaded(&panel, &CostsPanel::predictions_loaded);
    QCOMPARE(panel.open_predictions(kFixture), QString());
    QCOMPARE(loaded.count(), 1);
    QCOMPARE(panel.views()->currentWidget(), static_cast<QWidget*>(panel.prediction_chart()));
    QCOMPARE(panel.predictions_path(), QFileInfo(kFixture).absoluteFilePath());
    QCOMPARE(panel.prediction_chart()->records().steps().size(), std::size_t{6});
    QVERIFY2(panel.message().contains(QStringLiteral("6 step records; 2 lines skipped")), qPrintable(panel.message()));
    QVERIFY2(panel.log_text().contains(QStringLiteral("predictions-small.jsonl: line 5: not a JSON record")),
             qPrintable(panel.log_text()));
    // A bench file has no step records: the message points at Open.
    QCOMPARE(panel.open_predictions(QStringLiteral(MESHLOOM_TEST_DATA_DIR "/bench-2x2-small.jsonl")), QString());
    QVERIFY2(panel.message().contains(QStringLiteral("These are bench records")), qPrintable(panel.message()));
    // A file that cannot be read: the reason, and the view keeps nothing new.
    const QString error = panel.open_predictions(QStringLiteral("/no/such/file.jsonl"));
    QVERIFY2(error.contains(QStringLiteral("/no/such/file.jsonl")), qPrintable(error));
    QCOMPARE(loaded.count(), 2);
  }

  // A calibration loaded with nothing measured shows the Fits tab (the chart has nothing to draw its fits against);
  // once measurements are open the chart stays in front, and so do predictions.
  void a_calibration_without_measurements_shows_its_fits() {
    DesignDocument doc;
    doc.reset(meshloom::testing::two_by_two_design(), QString());  // the bench file's 4 ranks
    CostsPanel panel(&doc);
    QCOMPARE(panel.load_calibration(kCalibration), QString());
    QCOMPARE(panel.views()->tabText(panel.views()->currentIndex()), QStringLiteral("Fits"));
    QCOMPARE(panel.open_measurements(QStringLiteral(MESHLOOM_TEST_DATA_DIR "/bench-2x2-small.jsonl")), QString());
    QCOMPARE(panel.views()->currentWidget(), static_cast<QWidget*>(panel.chart()));
    QCOMPARE(panel.load_calibration(kCalibration), QString());
    QCOMPARE(panel.views()->currentWidget(), static_cast<QWidget*>(panel.chart()));
    // Predictions being read stay in front.
    CostsPanel reading(&doc);
    reading.views()->setCurrentWidget(reading.prediction_chart());
    QCOMPARE(reading.load_calibration(kCalibration), QString());
    QCOMPARE(reading.views()->currentWidget(), static_cast<QWidget*>(reading.prediction_chart()));
  }

  // After Apply to planner replaced a calibration: the plan under the old one and the new one, and which came
  // closer to the measured steps.
  void the_plan_panel_compares_old_and_new_calibration() {
    QTemporaryDir tmp;
    MainWindow w(nullptr, tmp.filePath(QStringLiteral("autosave")));
    const Design d = meshloom::testing::two_by_two_design();
    const QString design_path = saved_two_by_two(tmp);
    QVERIFY(w.open_design(design_path));

    // The old calibration and a new one: slower start-up, half the bandwidth.
    const Calibration old_cal = load_calibration(kCalibration.toStdString());
    const Calibration new_cal = with_fits(old_cal, [](auto& fit) {
      fit.alpha_us += 5.0;
      fit.busbw_gbps /= 2.0;
    });
    const QString new_path = tmp.filePath(QStringLiteral("new.calibration.json"));
    write(new_path, to_json_text(new_cal));

    RedistributionPanel* panel = w.redistribution_panel();
    QVERIFY2(w.apply_calibration(kCalibration), qPrintable(w.last_error()));
    QCOMPARE(panel->message(QStringLiteral("calibrations")), QString());  // nothing was replaced
    QVERIFY2(w.apply_calibration(new_path), qPrintable(w.last_error()));
    QCOMPARE(panel->cost_model(), RedistributionPanel::CostModelKind::Calibrated);
    QCOMPARE(panel->calibration(), std::optional<Calibration>(new_cal));

    // The shown plan priced under both, as the planner prices it (the new model's total is the plan's cost).
    const Plan* plan = panel->plan_model()->plan();
    QVERIFY(plan != nullptr);
    const auto request = panel->request(panel->planner());
    QVERIFY(request.has_value());
    const CalibratedCostModel old_model(old_cal, d.mesh.names);
    const CalibratedCostModel new_model(new_cal, d.mesh.names);
    const std::vector<double> before = price_plan_steps(*request, *plan, old_model);
    const std::vector<double> after = price_plan_steps(*request, *plan, new_model);
    QCOMPARE(after.size(), plan->steps.size());
    const double old_total = std::accumulate(before.begin(), before.end(), 0.0);
    const double new_total = std::accumulate(after.begin(), after.end(), 0.0);
    QVERIFY(std::abs(new_total - plan->cost) <= 1e-9 * plan->cost);
    QVERIFY(old_total < new_total);
    const QString text = panel->message(QStringLiteral("calibrations"));
    QVERIFY2(text.startsWith(QStringLiteral("This plan under the old calibration (local-2x2.calibration.json): %1 µs; "
                                            "under the new (new.calibration.json): %2 µs.")
                                 .arg(old_total, 0, 'f', 2)
                                 .arg(new_total, 0, 'f', 2)),
             qPrintable(text));

    // Records that measured the new model's prices exactly: the new calibration is closer.
    std::size_t communicating = 0;
    std::string exact_new;
    std::string exact_old;
    std::string unrelated;
    for (std::size_t i = 0; i < plan->steps.size(); ++i) {
      if (!communicates(plan->steps[i].collective)) continue;
      ++communicating;
      exact_new += step_record(plan->steps[i], i, after[i]);
      exact_old += step_record(plan->steps[i], i, before[i]);
      PlanStep other = plan->steps[i];
      other.bytes += 4;
      unrelated += step_record(other, i, after[i]);
    }
    QVERIFY(communicating >= 1);
    const QString new_records = tmp.filePath(QStringLiteral("measured-new.jsonl"));
    const QString old_records = tmp.filePath(QStringLiteral("measured-old.jsonl"));
    const QString other_records = tmp.filePath(QStringLiteral("other.jsonl"));
    write(new_records, R"({"type":"config","command":"run"})" "\n" + exact_new);
    write(old_records, R"({"type":"config","command":"run"})" "\n" + exact_old);
    write(other_records, R"({"type":"config","command":"run"})" "\n" + unrelated);

    QCOMPARE(w.costs_panel()->open_predictions(new_records), QString());
    QString compared = panel->message(QStringLiteral("calibrations"));
    QVERIFY2(compared.contains(QStringLiteral("Measured in measured-new.jsonl: %1 of its %1 communicating step(s)")
                                   .arg(communicating)),
             qPrintable(compared));
    QVERIFY2(compared.contains(QStringLiteral("the new %1 µs (0.0 % off)").arg(new_total, 0, 'f', 2)),
             qPrintable(compared));
    QVERIFY2(compared.endsWith(QStringLiteral("the new calibration is closer.")), qPrintable(compared));

    QCOMPARE(w.costs_panel()->open_predictions(old_records), QString());
    compared = panel->message(QStringLiteral("calibrations"));
    QVERIFY2(compared.endsWith(QStringLiteral("the old calibration is closer.")), qPrintable(compared));

    QCOMPARE(w.costs_panel()->open_predictions(other_records), QString());
    compared = panel->message(QStringLiteral("calibrations"));
    QVERIFY2(compared.endsWith(QStringLiteral("other.jsonl measures none of its steps.")), qPrintable(compared));

    // Undo: the old calibration is the design's again, nothing to compare; redo brings the line back.
    w.document()->undo_stack()->undo();
    QCOMPARE(panel->calibration(), std::optional<Calibration>(old_cal));
    QCOMPARE(panel->message(QStringLiteral("calibrations")), QString());
    w.document()->undo_stack()->redo();
    QVERIFY(!panel->message(QStringLiteral("calibrations")).isEmpty());
    // Under another cost model the line is hidden.
    QVERIFY(panel->set_cost_model(RedistributionPanel::CostModelKind::Comm));
    QCOMPARE(panel->message(QStringLiteral("calibrations")), QString());
    QVERIFY(panel->set_cost_model(RedistributionPanel::CostModelKind::Calibrated));
    // Another document has no replaced calibration.
    QVERIFY(w.open_design(design_path));
    QCOMPARE(panel->message(QStringLiteral("calibrations")), QString());
  }

  // Applies over a calibration: undo gives back the model chosen before each Apply (the old calibration still
  // prices), and the old-against-new line only while the design names what the last Apply set (two undos do not
  // show it with the roles turned round). Applying the file the design names again reads it again.
  void applies_follow_undo_and_read_the_file_again() {
    QTemporaryDir tmp;
    MainWindow w(nullptr, tmp.filePath(QStringLiteral("autosave")));
    QVERIFY(w.open_design(saved_two_by_two(tmp)));
    const Calibration a = load_calibration(kCalibration.toStdString());
    const Calibration b = with_fits(a, [](auto& fit) { fit.alpha_us += 5.0; });
    const Calibration c = with_fits(a, [](auto& fit) { fit.alpha_us += 9.0; });
    const QString b_path = tmp.filePath(QStringLiteral("b.calibration.json"));
    const QString c_path = tmp.filePath(QStringLiteral("c.calibration.json"));
    write(b_path, to_json_text(b));
    write(c_path, to_json_text(c));
    RedistributionPanel* panel = w.redistribution_panel();

    QVERIFY2(w.apply_calibration(kCalibration), qPrintable(w.last_error()));
    QVERIFY(panel->set_cost_model(RedistributionPanel::CostModelKind::Fixed));
    QVERIFY2(w.apply_calibration(b_path), qPrintable(w.last_error()));
    QCOMPARE(panel->cost_model(), RedistributionPanel::CostModelKind::Calibrated);
    w.document()->undo_stack()->undo();  // A again, which still prices: the model chosen before, fixed
    QCOMPARE(panel->calibration(), std::optional<Calibration>(a));
    QCOMPARE(panel->cost_model(), RedistributionPanel::CostModelKind::Fixed);
    w.document()->undo_stack()->redo();
    QCOMPARE(panel->cost_model(), RedistributionPanel::CostModelKind::Calibrated);

    QVERIFY2(w.apply_calibration(c_path), qPrintable(w.last_error()));
    QVERIFY2(panel->message(QStringLiteral("calibrations")).contains(QLatin1String("old calibration (b.calibration")),
             qPrintable(panel->message(QStringLiteral("calibrations"))));
    w.document()->undo_stack()->undo();  // B: it replaced nothing the line could show
    QCOMPARE(panel->message(QStringLiteral("calibrations")), QString());
    w.document()->undo_stack()->undo();  // A: not "old B, new A"
    QCOMPARE(panel->calibration(), std::optional<Calibration>(a));
    QCOMPARE(panel->message(QStringLiteral("calibrations")), QString());
    w.document()->undo_stack()->redo();
    w.document()->undo_stack()->redo();
    QVERIFY(!panel->message(QStringLiteral("calibrations")).isEmpty());

    // C rewritten (calibrate run again), applied again: read again, no edit, and C still replaced B.
    const Calibration c2 = with_fits(c, [](auto& fit) { fit.busbw_gbps /= 2.0; });
    write(c_path, to_json_text(c2));
    const int edits = w.document()->undo_stack()->count();
    QVERIFY2(w.apply_calibration(c_path), qPrintable(w.last_error()));
    QCOMPARE(w.document()->undo_stack()->count(), edits);
    QCOMPARE(panel->calibration(), std::optional<Calibration>(c2));
    QVERIFY2(panel->message(QStringLiteral("calibrations")).contains(QLatin1String("old calibration (b.calibration")),
             qPrintable(panel->message(QStringLiteral("calibrations"))));
  }
};

QTEST_MAIN(PredictionsTest)
#include "test_predictions.moc"
