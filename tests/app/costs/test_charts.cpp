// The cost charts fed from recorded data: a JSON Lines file of `meshloom-launch bench` (cut from a real 2x2 run on
// local ranks, with a garbage line and a truncated last line), the calibration fitted from that run, the points per
// (axis, collective) against the records, the fitted line against the engine's calibrated cost, log axes, legend,
// the hover read-out, streaming, and PNG / PDF export. Runs on the offscreen platform.
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMouseEvent>
#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <qcustomplot.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "costs/cost_chart.hpp"
#include "costs/fit_table.hpp"
#include "costs/measurements.hpp"
#include "costs/plot_support.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/plan.hpp"

using meshloom::app::CostChart;
using meshloom::app::LineResult;
using meshloom::app::Measurements;
using meshloom::app::RecordKind;
using meshloom::app::SeriesKey;

namespace {

const QString kFixture = QStringLiteral(MESHLOOM_TEST_DATA_DIR "/bench-2x2-cut.jsonl");
const QString kCalibration = QStringLiteral(MESHLOOM_CALIBRATION_DIR "/local-2x2.calibration.json");

std::vector<std::string> fixture_lines() {
  std::ifstream in(kFixture.toStdString(), std::ios::binary);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The result records of the fixture, read independently of the app's parser (QJsonDocument): points per series.
std::map<SeriesKey, int> expected_counts() {
  std::map<SeriesKey, int> counts;
  for (const auto& line : fixture_lines()) {
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(line));
    if (!doc.isObject() || doc.object().value(QStringLiteral("type")).toString() != QStringLiteral("result")) continue;
    const QJsonObject o = doc.object();
    ++counts[SeriesKey{o.value(QStringLiteral("axis")).toString().toStdString(),
                       o.value(QStringLiteral("collective")).toString().toStdString()}];
  }
  return counts;
}

// The engine's calibrated cost of one collective on an axis of the real 2x2 mesh, at nccl-tests' size `bytes`.
double engine_cost(const meshloom::Calibration& calibration, const std::string& axis, meshloom::Collective collective,
                   double bytes) {
  const std::vector<std::int64_t> shape = calibration.mesh_shape;
  const meshloom::CalibratedCostModel model(calibration, calibration.mesh_names);
  meshloom::StepCostInput step;
  step.collective = collective;
  step.mesh_shape = &shape;
  for (std::size_t i = 0; i < calibration.mesh_names.size(); ++i) {
    if (calibration.mesh_names[i] == axis) step.axis = i;
  }
  const double per = collective == meshloom::Collective::AllGather ? static_cast<double>(shape[step.axis]) : 1.0;
  step.local_bytes = static_cast<std::int64_t>(std::llround(bytes / per));
  return model.step_cost(step);
}

QCPGraph* graph_named(QCustomPlot* plot, const QString& name) {
  for (int i = 0; i < plot->graphCount(); ++i) {
    if (plot->graph(i)->name() == name) return plot->graph(i);
  }
  return nullptr;
}

QStringList graph_names(QCustomPlot* plot) {
  QStringList names;
  for (int i = 0; i < plot->graphCount(); ++i) names << plot->graph(i)->name();
  return names;
}

QByteArray read_all(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool approx(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); }

}  // namespace

class ChartsTest : public QObject {
  Q_OBJECT

private slots:
  void loads_recorded_run_with_bad_lines() {
    Measurements m;
    QCOMPARE(QString::fromStdString(m.load_jsonl(kFixture.toStdString())), QString());
    QCOMPARE(m.lines(), std::size_t{26});
    QVERIFY(m.config().has_value());
    QCOMPARE(m.config()->world, std::int64_t{4});
    QCOMPARE(m.config()->mesh_names, (std::vector<std::string>{"dp", "tp"}));
    QCOMPARE(m.config()->sizes.size(), std::size_t{6});
    QVERIFY(!m.summary_seen());  // the run was cut short

    // Series and points equal the records.
    const auto expected = expected_counts();
    QCOMPARE(m.series().size(), expected.size());
    int total = 0;
    for (const auto& [key, count] : expected) {
      const auto* s = m.find(key);
      QVERIFY2(s != nullptr, key.axis.c_str());
      QCOMPARE(static_cast<int>(s->points.size()), count);
      QCOMPARE(s->group_size, std::int64_t{2});
      total += count;
    }
    QCOMPARE(static_cast<int>(m.point_count()), total);
    QCOMPARE(total, 23);
    QCOMPARE(m.find({"tp", "all_gather"})->points.size(), std::size_t{5});  // the 6th is the truncated line
    QCOMPARE(m.axes(), (std::vector<std::string>{"dp", "tp"}));
    QCOMPARE(m.collectives(), (std::vector<std::string>{"all_reduce", "all_gather"}));

    // The garbage line and the truncated last line, by number; the points around them are kept.
    QCOMPARE(m.problems().size(), std::size_t{2});
    const QString garbage = QString::fromStdString(m.problems()[0]);
    const QString cut = QString::fromStdString(m.problems()[1]);
    QVERIFY2(garbage.startsWith(QStringLiteral("line 8: not a JSON record")), qPrintable(garbage));
    QVERIFY2(garbage.contains(QStringLiteral("this line is not JSON")), qPrintable(garbage));
    QVERIFY2(cut.startsWith(QStringLiteral("line 26: truncated record")), qPrintable(cut));
    const auto& dp_gather = m.find({"dp", "all_gather"})->points;
    QCOMPARE(dp_gather.front().line, std::size_t{9});
    QCOMPARE(dp_gather.front().bytes, std::int64_t{1024});
    const auto& tp_reduce = m.find({"tp", "all_reduce"})->points;
    QCOMPARE(tp_reduce[3].bytes, std::int64_t{65536});
    QCOMPARE(tp_reduce[3].time_us, 35.756350000000005);
    QCOMPARE(tp_reduce[3].busbw_gbps, 1.832849270129641);

    // A file that cannot be read changes nothing and names the path.
    const std::string missing = (QDir::tempPath() + QStringLiteral("/no-such-dir-meshloom/x.jsonl")).toStdString();
    const std::string err = m.load_jsonl(missing);
    QVERIFY2(err.find(missing) != std::string::npos, err.c_str());
    QCOMPARE(m.point_count(), std::size_t{23});
  }

  void streams_lines_and_reports_each_problem() {
    const auto lines = fixture_lines();
    Measurements m;
    LineResult r = m.add_line(lines[1]);  // a result before the config
    QVERIFY(!r.ok());
    QCOMPARE(QString::fromStdString(r.error), QStringLiteral("line 1: result record: a result record before the config record"));
    r = m.add_line(lines[0]);
    QVERIFY(r.ok());
    QCOMPARE(r.kind, RecordKind::Config);
    for (std::size_t i = 1; i < 7; ++i) {
      r = m.add_line(lines[i]);
      QVERIFY2(r.ok(), r.error.c_str());
      QCOMPARE(r.kind, RecordKind::Result);
      QCOMPARE(r.series, std::optional<SeriesKey>(SeriesKey{"dp", "all_reduce"}));
    }
    QCOMPARE(m.point_count(), std::size_t{6});
    r = m.add_line("{\"type\":\"result\",\"axis\":\"dp\",\"group_size\":2");  // cut short
    QCOMPARE(QString::fromStdString(r.error).left(25), QStringLiteral("line 9: truncated record:"));
    QCOMPARE(r.kind, RecordKind::Invalid);
    r = m.add_line("\x01\x02 binary garbage");
    QVERIFY2(QString::fromStdString(r.error).startsWith(QStringLiteral("line 10: not a JSON record")), r.error.c_str());
    r = m.add_line("[1, 2]");
    QVERIFY2(QString::fromStdString(r.error).startsWith(QStringLiteral("line 11: not a JSON object")), r.error.c_str());
    r = m.add_line(R"({"type":"result","axis":"dp","group_size":2,"groups":2,"collective":"all_reduce","dtype":"float32",)"
                   R"("bytes":8,"count":2,"time_us":"fast","algbw_gbps":1,"busbw_gbps":1,"wrong":0})");
    QCOMPARE(QString::fromStdString(r.error),
             QStringLiteral("line 12: result record: field \"time_us\" = \"fast\": expected a number"));
    r = m.add_line(R"({"type":"result","axis":"dp","group_size":2,"groups":2,"collective":"gather","dtype":"float32",)"
                   R"("bytes":8,"count":2,"time_us":1,"algbw_gbps":1,"busbw_gbps":1,"wrong":0})");
    QVERIFY2(r.error.find("field \"collective\" = \"gather\": unknown collective") != std::string::npos, r.error.c_str());
    r = m.add_line(R"({"type":"result","axis":"dp"})");
    QVERIFY2(r.error.find("missing field") != std::string::npos, r.error.c_str());
    r = m.add_line(R"({"axis":"dp"})");
    QVERIFY2(r.error.find("line 15: not a bench record: missing field \"type\"") != std::string::npos, r.error.c_str());
    r = m.add_line(lines[0]);
    QVERIFY2(r.error.find("a second config record") != std::string::npos, r.error.c_str());
    // The engine's JSON policy: a duplicate key and an integer past int64 are refused, not read as the last value
    // or wrapped to a negative one.
    r = m.add_line(R"({"type":"result","axis":"dp","group_size":2,"groups":2,"collective":"all_reduce","dtype":"float32",)"
                   R"("bytes":8,"bytes":16,"count":2,"time_us":1,"algbw_gbps":1,"busbw_gbps":1,"wrong":0})");
    QVERIFY2(r.error.find("line 17: ") == 0 && r.error.find("duplicate key \"bytes\"") != std::string::npos,
             r.error.c_str());
    r = m.add_line(R"({"type":"result","axis":"dp","group_size":2,"groups":2,"collective":"all_reduce","dtype":"float32",)"
                   R"("bytes":18446744073709551615,"count":2,"time_us":1,"algbw_gbps":1,"busbw_gbps":1,"wrong":0})");
    QVERIFY2(r.error.find("field \"bytes\" = 18446744073709551615: out of range for a 64-bit integer") !=
                 std::string::npos,
             r.error.c_str());
    QCOMPARE(m.point_count(), std::size_t{6});  // nothing lost
    QCOMPARE(m.problems().size(), std::size_t{11});

    QVERIFY(m.add_line("").ok());
    QVERIFY(m.add_line("   \r").ok());
    r = m.add_line(R"({"type":"progress","done":3})");
    QVERIFY(r.ok());
    QCOMPARE(r.kind, RecordKind::Unknown);
    r = m.add_line(lines[8] + "\r");  // CRLF files
    QVERIFY2(r.ok(), r.error.c_str());
    QCOMPARE(m.point_count(), std::size_t{7});
    r = m.add_line(R"({"type":"error","rank":3,"message":"RuntimeError: MPI_Allreduce failed"})");
    QCOMPARE(r.kind, RecordKind::Error);
    QCOMPARE(m.run_errors(), (std::vector<std::string>{"rank 3: RuntimeError: MPI_Allreduce failed"}));
    r = m.add_line(R"({"type":"summary","ok":false,"results":7})");
    QCOMPARE(r.kind, RecordKind::Summary);
    QCOMPARE(m.summary_ok(), std::optional<bool>(false));
    QCOMPARE(r.line, std::size_t{24});
  }

  // A config record states a mesh a bench run could have run; each bad one is a problem naming the field, and a
  // number past a double's range is a bad line (it aborted the app before).
  void a_config_of_an_impossible_mesh_is_refused() {
    const auto config = [](const std::string& world, const std::string& mesh) {
      return R"({"type":"config","backend":"mpi","world":)" + world + R"(,"mesh":)" + mesh + "}";
    };
    const auto error_of = [](const std::string& line) {
      Measurements m;
      return QString::fromStdString(m.add_line(line).error);
    };
    QCOMPARE(error_of(config("4", R"({"shape":[2,2],"names":["dp","tp"]})")), QString());
    QCOMPARE(error_of(config("0", R"({"shape":[1]})")), QStringLiteral("line 1: config record: field \"world\" = 0: must be >= 1"));
    QCOMPARE(error_of(config("4", R"({"shape":[-2,-2]})")),
             QStringLiteral("line 1: config record: field \"mesh.shape\" = [-2,-2]: expected axis sizes >= 1 whose "
                            "product is at most the world, 4"));
    QVERIFY(error_of(config("4", R"({"shape":[1000,1000]})")).contains(QLatin1String("at most the world, 4")));
    QCOMPARE(error_of(config("4", R"({"shape":[2,2],"names":["dp","dp"]})")),
             QStringLiteral("line 1: config record: field \"mesh.names\" = [\"dp\",\"dp\"]: \"dp\" names two axes"));
    QVERIFY(error_of(config("4", R"({"shape":[2,2],"names":["dp"]})")).contains(QLatin1String("one name per axis")));
    QVERIFY(error_of(R"({"type":"config","world":1e400})")
                .startsWith(QLatin1String("line 1: not a JSON record (number overflow parsing '1e400'): ")));
  }

  void fitted_model_is_the_engines_calibrated_cost() {
    Measurements m;
    QCOMPARE(QString::fromStdString(m.load_calibration("/nonexistent/cal.json")).contains(QStringLiteral("/nonexistent/cal.json")), true);
    QVERIFY(!m.calibration());
    QCOMPARE(QString::fromStdString(m.load_calibration(kCalibration.toStdString())), QString());
    QVERIFY(m.calibration());
    const meshloom::Calibration& cal = *m.calibration();
    QCOMPARE(m.fit({"tp", "all_reduce"})->busbw_gbps, cal.axes.at("tp").at("all_reduce").busbw_gbps);
    QVERIFY(!m.fit({"pp", "all_reduce"}));
    QCOMPARE(m.group_size({"tp", "all_reduce"}), std::optional<std::int64_t>(2));  // from the calibration's mesh

    for (const auto& [axis, collective, engine] :
         std::vector<std::tuple<std::string, std::string, meshloom::Collective>>{
             {"dp", "all_reduce", meshloom::Collective::AllReduce},
             {"tp", "all_gather", meshloom::Collective::AllGather},
             {"tp", "reduce_scatter", meshloom::Collective::ReduceScatter},
             {"dp", "all_to_all", meshloom::Collective::AllToAll}}) {
      for (const double bytes : {1024.0, 65536.0, 1048576.0}) {
        const auto p = m.fitted({axis, collective}, bytes);
        QVERIFY(p);
        QCOMPARE(p->bytes, bytes);
        QCOMPARE(p->time_us, engine_cost(cal, axis, engine, bytes));
      }
      const auto curve = m.fitted_curve({axis, collective}, 1024, 1048576, 32);
      QCOMPARE(curve.size(), std::size_t{32});
      QCOMPARE(curve.front().bytes, 1024.0);
      QCOMPARE(curve.back().bytes, 1048576.0);
      for (const auto& p : curve) QCOMPARE(p.time_us, engine_cost(cal, axis, engine, p.bytes));
    }
    QVERIFY(!m.fitted({"tp", "broadcast"}, 1024));  // no fit (and not a planner collective)
  }

  void fitted_model_of_a_curves_calibration_follows_the_series_span() {
    // dp's groups cross two hosts: its fitted line is the cross-host curve, not the one-host curve of a (2) mesh.
    Measurements m;
    (void)m.add_line(R"({"type":"config","command":"bench","backend":"mpi","world":4,"mesh":{"shape":[2,2],"names":["dp","tp"]}})");
    (void)m.add_line(R"({"type":"result","axis":"dp","group_size":2,"groups":2,"collective":"all_reduce","dtype":"float32",)"
                     R"("op":"sum","bytes":1024,"count":256,"time_us":49.0,"algbw_gbps":0.02,"busbw_gbps":0.02,"wrong":0,)"
                     R"("span":{"hosts":2,"ranks_per_host":1,"uniform":true}})");
    QCOMPARE(m.problems().size(), std::size_t{0});
    meshloom::Calibration c;
    c.backend = "mpi";
    c.world = 4;
    c.mesh_shape = {2, 2};
    c.mesh_names = {"dp", "tp"};
    c.axes["dp"]["all_reduce"] = meshloom::CollectiveFit{40.0, 1.0, 0.9, 1};
    c.rank_hosts = {0, 0, 1, 1};
    meshloom::GroupCurve local;
    local.collective = "all_reduce";
    local.shape = {2, 1, 2};
    local.points = {{1024, 5.0}};
    meshloom::GroupCurve across = local;
    across.shape = {2, 2, 1};
    across.points = {{1024, 50.0}};
    c.groups = {local, across};
    m.set_calibration(c);
    const auto p = m.fitted({"dp", "all_reduce"}, 1024);
    QVERIFY(p);
    QCOMPARE(p->time_us, 50.0);
    // A curve corrected by refine still draws what the benchmark measured over the sweep's points.
    c.groups[1].as_run = {{1024, 1.5, 3}};
    m.set_calibration(c);
    QCOMPARE(m.fitted({"dp", "all_reduce"}, 1024)->time_us, 50.0);
    // A bad span is a problem of its line.
    (void)m.add_line(R"({"type":"result","axis":"dp","group_size":2,"groups":2,"collective":"all_reduce","dtype":"float32",)"
                     R"("op":"sum","bytes":8,"count":2,"time_us":1.0,"algbw_gbps":0.01,"busbw_gbps":0.01,"wrong":0,)"
                     R"("span":{"hosts":3,"ranks_per_host":1,"uniform":true}})");
    QCOMPARE(m.problems().size(), std::size_t{1});
  }

  void chart_plots_points_fits_log_axes_and_legend() {
    Measurements m;
    QCOMPARE(QString::fromStdString(m.load_jsonl(kFixture.toStdString())), QString());
    CostChart chart;
    chart.resize(900, 600);
    chart.set_measurements(m);
    QCustomPlot* plot = chart.plot();
    QCOMPARE(chart.collective(), QStringLiteral("all_reduce"));
    QCOMPARE(graph_names(plot), (QStringList{QStringLiteral("dp"), QStringLiteral("tp")}));  // no calibration yet
    QCOMPARE(plot->xAxis->scaleType(), QCPAxis::stLogarithmic);
    QCOMPARE(plot->yAxis->scaleType(), QCPAxis::stLogarithmic);

    QCOMPARE(chart.load_calibration(kCalibration), QString());
    QCOMPARE(graph_names(plot),
             (QStringList{QStringLiteral("dp"), QStringLiteral("dp fit"), QStringLiteral("tp"), QStringLiteral("tp fit")}));
    QVERIFY(plot->legend->visible());
    QCOMPARE(plot->legend->itemCount(), 4);
    QStringList legend;
    for (int i = 0; i < plot->legend->itemCount(); ++i) {
      auto* item = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i));
      QVERIFY(item != nullptr);
      legend << item->plottable()->name();
    }
    QCOMPARE(legend, graph_names(plot));

    // Points: one per record, at (bytes, time_us).
    const auto expected = expected_counts();
    QCOMPARE(graph_named(plot, QStringLiteral("dp"))->dataCount(), expected.at({"dp", "all_reduce"}));
    const auto* tp = m.find({"tp", "all_reduce"});
    QCPGraph* tp_graph = graph_named(plot, QStringLiteral("tp"));
    QCOMPARE(tp_graph->dataCount(), static_cast<int>(tp->points.size()));
    for (int i = 0; i < tp_graph->dataCount(); ++i) {
      QCOMPARE(tp_graph->data()->at(i)->key, static_cast<double>(tp->points[static_cast<std::size_t>(i)].bytes));
      QCOMPARE(tp_graph->data()->at(i)->value, tp->points[static_cast<std::size_t>(i)].time_us);
    }
    // The fitted line: the engine's calibrated cost over the measured sizes.
    const meshloom::Calibration cal = *chart.measurements().calibration();
    QCPGraph* tp_fit = graph_named(plot, QStringLiteral("tp fit"));
    QVERIFY(tp_fit->dataCount() >= 32);
    QCOMPARE(tp_fit->data()->at(0)->key, 1024.0);
    QCOMPARE(tp_fit->data()->at(tp_fit->dataCount() - 1)->key, 1048576.0);
    for (int i = 0; i < tp_fit->dataCount(); ++i) {
      const auto p = tp_fit->data()->at(i);
      QVERIFY(approx(p->value, engine_cost(cal, "tp", meshloom::Collective::AllReduce, p->key)));
    }
    QVERIFY(tp_fit->pen().style() == Qt::DashLine);
    QCOMPARE(tp_graph->lineStyle(), QCPGraph::lsNone);

    // Every point lies inside the axis ranges; the size axis is labelled with binary units.
    plot->replot();
    for (int g = 0; g < plot->graphCount(); ++g) {
      for (auto it = plot->graph(g)->data()->constBegin(); it != plot->graph(g)->data()->constEnd(); ++it) {
        QVERIFY(plot->xAxis->range().contains(it->key));
        QVERIFY(plot->yAxis->range().contains(it->value));
      }
    }
    const QStringList xlabels = plot->xAxis->tickVectorLabels();
    QVERIFY2(xlabels.contains(QStringLiteral("1 KiB")) && xlabels.contains(QStringLiteral("1 MiB")),
             qPrintable(xlabels.join(QStringLiteral(", "))));
    const QStringList ylabels = plot->yAxis->tickVectorLabels();
    QVERIFY2(ylabels.contains(QStringLiteral("100 \u00b5s")), qPrintable(ylabels.join(QStringLiteral(", "))));

    // all_gather: the truncated record is missing from tp.
    chart.set_collective(QStringLiteral("all_gather"));
    QCOMPARE(graph_named(plot, QStringLiteral("tp"))->dataCount(), 5);
    QCOMPARE(graph_named(plot, QStringLiteral("dp"))->dataCount(), 6);
    QCPGraph* ag_fit = graph_named(plot, QStringLiteral("tp fit"));
    for (int i = 0; i < ag_fit->dataCount(); ++i) {
      const auto p = ag_fit->data()->at(i);
      QCOMPARE(std::fmod(p->key, 2.0), 0.0);  // whole local shards
      QVERIFY(approx(p->value, engine_cost(cal, "tp", meshloom::Collective::AllGather, p->key)));
    }

    // Bus bandwidth: measured busbw, and the fit's busbw (nccl-tests' factor over the model's time).
    chart.set_metric(CostChart::Metric::BusBandwidth);
    const auto* dp_ag = chart.measurements().find({"dp", "all_gather"});
    QCPGraph* dp_graph = graph_named(plot, QStringLiteral("dp"));
    for (int i = 0; i < dp_graph->dataCount(); ++i) {
      QCOMPARE(dp_graph->data()->at(i)->value, dp_ag->points[static_cast<std::size_t>(i)].busbw_gbps);
    }
    QCPGraph* dp_fit = graph_named(plot, QStringLiteral("dp fit"));
    for (int i = 0; i < dp_fit->dataCount(); ++i) {
      const auto p = dp_fit->data()->at(i);
      const double t = engine_cost(cal, "dp", meshloom::Collective::AllGather, p->key);
      QVERIFY(approx(p->value, meshloom::bus_factor("all_gather", 2) * p->key / (t * 1e3)));
    }
    QCOMPARE(plot->yAxis->label(), QStringLiteral("bus bandwidth (GB/s)"));

    // One axis only.
    chart.set_axes({"tp"});
    QCOMPARE(graph_names(plot), (QStringList{QStringLiteral("tp"), QStringLiteral("tp fit")}));
    chart.set_axes({});
    QCOMPARE(plot->graphCount(), 4);
    // The toolbar follows.
    auto* collective_box = chart.findChild<QComboBox*>(QStringLiteral("collective"));
    QVERIFY(collective_box != nullptr);
    QCOMPARE(collective_box->currentText(), QStringLiteral("all_gather"));
    collective_box->setCurrentIndex(collective_box->findText(QStringLiteral("all_reduce")));
    QCOMPARE(chart.collective(), QStringLiteral("all_reduce"));
  }

  void residuals_are_each_points_distance_from_the_fit() {
    Measurements m;
    QCOMPARE(QString::fromStdString(m.load_jsonl(kFixture.toStdString())), QString());
    CostChart chart;
    chart.resize(900, 600);
    chart.set_measurements(m);
    QCOMPARE(chart.load_calibration(kCalibration), QString());
    chart.set_collective(QStringLiteral("all_reduce"));
    chart.set_metric(CostChart::Metric::Residual);
    QCustomPlot* plot = chart.plot();
    QCOMPARE(plot->yAxis->scaleType(), QCPAxis::stLinear);
    QCOMPARE(plot->xAxis->scaleType(), QCPAxis::stLogarithmic);
    // No fitted lines: the fit is the zero line; every measured point sits at 100 (fit - measured) / measured.
    QCOMPARE(graph_names(plot), (QStringList{QStringLiteral("dp"), QStringLiteral("tp"), QStringLiteral("fit (0 %)")}));
    const meshloom::Calibration cal = *chart.measurements().calibration();
    for (const char* axis : {"dp", "tp"}) {
      const auto* series = m.find({axis, "all_reduce"});
      QCPGraph* g = graph_named(plot, QString::fromLatin1(axis));
      QCOMPARE(g->dataCount(), static_cast<int>(series->points.size()));
      for (int i = 0; i < g->dataCount(); ++i) {
        const auto& p = series->points[static_cast<std::size_t>(i)];
        const double fit = engine_cost(cal, axis, meshloom::Collective::AllReduce, static_cast<double>(p.bytes));
        QCOMPARE(g->data()->at(i)->key, static_cast<double>(p.bytes));
        QVERIFY(approx(g->data()->at(i)->value, 100.0 * (fit - p.time_us) / p.time_us));
      }
    }
    plot->replot();
    for (int g = 0; g < plot->graphCount(); ++g) {  // the symmetric range holds every residual
      for (auto it = plot->graph(g)->data()->constBegin(); it != plot->graph(g)->data()->constEnd(); ++it) {
        QVERIFY2(plot->yAxis->range().contains(it->value),
                 qPrintable(QStringLiteral("%1: %2 outside [%3, %4]").arg(plot->graph(g)->name()).arg(it->value)
                                .arg(plot->yAxis->range().lower).arg(plot->yAxis->range().upper)));
      }
    }
    QVERIFY(plot->yAxis->range().lower <= -10.0 && plot->yAxis->range().upper >= 10.0);
    // The toolbar names the view, and going back restores the log axis.
    auto* metric_box = chart.findChild<QComboBox*>(QStringLiteral("metric"));
    QVERIFY(metric_box != nullptr);
    QCOMPARE(metric_box->currentIndex(), 2);
    chart.set_metric(CostChart::Metric::Time);
    QCOMPARE(plot->yAxis->scaleType(), QCPAxis::stLogarithmic);
    // Without a calibration there is nothing to be a residual of: no points, only the empty view.
    CostChart bare;
    bare.set_measurements(m);
    bare.set_metric(CostChart::Metric::Residual);
    QCOMPARE(graph_named(bare.plot(), QStringLiteral("dp"))->dataCount(), 0);
  }

  void streaming_rescales_as_points_arrive() {
    CostChart chart;
    chart.resize(900, 600);
    QSignalSpy changed(&chart, &CostChart::chartChanged);
    const auto lines = fixture_lines();
    int results = 0;
    int problems = 0;
    for (const auto& line : lines) {
      const LineResult r = chart.append_line(line);
      if (!r.ok()) ++problems;
      if (r.kind != RecordKind::Result) continue;
      ++results;
      QCustomPlot* plot = chart.plot();
      // The shown collective's points are all inside the ranges after each arrival.
      for (int g = 0; g < plot->graphCount(); ++g) {
        for (auto it = plot->graph(g)->data()->constBegin(); it != plot->graph(g)->data()->constEnd(); ++it) {
          QVERIFY(plot->xAxis->range().contains(it->key));
          QVERIFY(plot->yAxis->range().contains(it->value));
        }
      }
    }
    QCOMPARE(results, 23);
    QCOMPARE(problems, 2);
    QCOMPARE(chart.measurements().point_count(), std::size_t{23});
    QCOMPARE(chart.collective(), QStringLiteral("all_reduce"));  // the first one seen
    QCOMPARE(graph_names(chart.plot()), (QStringList{QStringLiteral("dp"), QStringLiteral("tp")}));
    QCOMPARE(changed.count(), 24);  // the config and each result
    meshloom::app::MeasuredPoint big;
    big.bytes = 4 << 20;
    big.count = 1 << 20;
    big.time_us = 1500.0;
    big.algbw_gbps = 2.8;
    big.busbw_gbps = 2.8;
    big.group_size = 2;
    chart.append({"dp", "all_reduce"}, big);
    QCOMPARE(graph_named(chart.plot(), QStringLiteral("dp"))->dataCount(), 7);
    QVERIFY(chart.plot()->xAxis->range().contains(4 << 20));
    chart.clear();
    QCOMPARE(chart.plot()->graphCount(), 0);
  }

  void hover_reads_out_the_nearest_point() {
    Measurements m;
    (void)m.load_jsonl(kFixture.toStdString());
    CostChart chart;
    chart.resize(900, 600);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    chart.set_measurements(m);
    QCOMPARE(chart.load_calibration(kCalibration), QString());
    chart.plot()->replot();

    const SeriesKey key{"tp", "all_reduce"};
    const auto pos = chart.point_position(key, 3);  // 64 KiB
    QVERIFY(pos);
    const auto fit = chart.measurements().fitted(key, 65536);
    QVERIFY(fit);
    // The fit's residual, 100 (fit - measured) / measured, with one decimal and its sign.
    const double residual = 100.0 * (fit->time_us - 35.76) / 35.76;
    const QString expected = QStringLiteral("tp · all_reduce · 64 KiB (65536 B) · 35.76 µs · busbw 1.833 GB/s · n=2 · fit ") +
                             meshloom::app::format_time_us(fit->time_us) +
                             QStringLiteral(" (%1%2 %)").arg(residual >= 0 ? QStringLiteral("+") : QString()).arg(residual, 0, 'f', 1);
    QCOMPARE(chart.readout_at(*pos + QPointF(3, -2)), expected);
    QCOMPARE(chart.readout_at(QPointF(-500, -500)), QString());

    QSignalSpy spy(&chart, &CostChart::readoutChanged);
    QMouseEvent move(QEvent::MouseMove, *pos, chart.plot()->mapToGlobal(*pos), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(chart.plot(), &move);
    QCOMPARE(chart.readout(), expected);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(chart.findChild<QLabel*>(QStringLiteral("readout"))->text(), expected);
  }

  void formats_sizes_and_times() {
    using meshloom::app::format_bytes;
    QCOMPARE(format_bytes(512), QStringLiteral("512 B"));
    QCOMPARE(format_bytes(1024), QStringLiteral("1 KiB"));
    QCOMPARE(format_bytes(1536), QStringLiteral("1.5 KiB"));
    QCOMPARE(format_bytes(256.0 * 1024 * 1024), QStringLiteral("256 MiB"));
    QCOMPARE(format_bytes(2.0 * 1024 * 1024 * 1024), QStringLiteral("2 GiB"));
    QCOMPARE(meshloom::app::format_time_us(35.756), QStringLiteral("35.76 \u00b5s"));
    QCOMPARE(meshloom::app::format_time_us(370.75), QStringLiteral("370.8 \u00b5s"));
    QCOMPARE(meshloom::app::format_gbps(1.832849), QStringLiteral("1.833 GB/s"));
  }

  // A time axis on a narrow range stays logarithmic: 1-2-5 ticks (QCustomPlot's own log ticker falls back to linear
  // ticks below 1.6 decades, crowded at the top of a log axis), 1..9 where that gives fewer than 3, labelled in units.
  void time_ticks_on_a_narrow_range_stay_logarithmic() {
    const QSharedPointer<QCPAxisTicker> ticker = meshloom::app::make_time_ticker();
    QVector<double> last_sub;
    const auto ticks_of = [&ticker, &last_sub](double lo, double hi) {
      QVector<double> ticks;
      QVector<double> sub;
      QVector<QString> labels;
      ticker->generate(QCPRange(lo, hi), QLocale::c(), QLatin1Char('g'), 6, ticks, &sub, &labels);
      last_sub = sub;
      return std::make_pair(ticks, labels);
    };
    auto [ticks, labels] = ticks_of(20, 150);
    QCOMPARE(ticks, (QVector<double>{20, 50, 100}));
    // Sub-ticks at the other m x 10^k between them, not evenly in value (23.3, 26.7, ...).
    QCOMPARE(last_sub, (QVector<double>{30, 40, 60, 70, 80, 90}));
    QCOMPARE(labels, (QVector<QString>{QStringLiteral("20 \u00b5s"), QStringLiteral("50 \u00b5s"),
                                       QStringLiteral("100 \u00b5s")}));
    // Past the last tick (and before the first) too, as far as the range goes: 300 and 400 (they stopped at 200).
    std::tie(ticks, labels) = ticks_of(15, 450);
    QCOMPARE(ticks, (QVector<double>{20, 50, 100, 200}));
    QCOMPARE(last_sub, (QVector<double>{30, 40, 60, 70, 80, 90, 300, 400}));
    std::tie(ticks, labels) = ticks_of(35, 450);  // 40 before the first tick, 50
    QCOMPARE(last_sub.front(), 40.0);
    std::tie(ticks, labels) = ticks_of(1100, 4500);  // 1-2-5 gives 2000 alone: 1..9
    QCOMPARE(ticks, (QVector<double>{2000, 3000, 4000}));
    QVERIFY(last_sub.isEmpty());  // every m x 10^k between them is a tick
    QCOMPARE(labels.front(), QStringLiteral("2 ms"));
    std::tie(ticks, labels) = ticks_of(1, 1e4);  // four decades: QCustomPlot's own decade ticks
    QVERIFY(ticks.contains(10) && ticks.contains(100) && ticks.contains(1000));
    QVERIFY(!ticks.contains(20));
  }

  // A chart takes its colours from the palette, and follows a change of it (the dark theme): background Base, axes
  // and labels Text. QCustomPlot's own defaults are white and black whatever the palette.
  void the_chart_follows_the_palette() {
    CostChart chart;
    chart.resize(600, 400);
    QPalette dark = chart.palette();
    dark.setColor(QPalette::Base, QColor(0x1f, 0x21, 0x24));
    dark.setColor(QPalette::Text, QColor(0xe6, 0xe6, 0xe6));
    chart.setPalette(dark);
    auto* plot = chart.findChild<QCustomPlot*>();
    QVERIFY(plot != nullptr);
    QCOMPARE(plot->toPixmap(600, 400).toImage().pixelColor(2, 2), QColor(0x1f, 0x21, 0x24));
    QCOMPARE(plot->xAxis->tickLabelColor(), QColor(0xe6, 0xe6, 0xe6));
    QCOMPARE(plot->yAxis->labelColor(), QColor(0xe6, 0xe6, 0xe6));
    QCOMPARE(plot->legend->textColor(), QColor(0xe6, 0xe6, 0xe6));
  }

  // The Fits table: one row per curve with its model, alpha-beta fit and held-out error ("-" where a curve has
  // none), a summary over them; a calibration from before curves lists its per-axis fits.
  void fit_table_lists_every_curve_and_how_well_it_holds() {
    meshloom::Calibration c;
    c.backend = "mpi";
    c.timing = "single_shot";
    c.world = 4;
    c.mesh_shape = {2, 2};
    c.mesh_names = {"dp", "tp"};
    c.rank_hosts = {0, 0, 0, 0};
    meshloom::GroupCurve reduce;
    reduce.collective = "all_reduce";
    reduce.shape = {2, 1, 2};
    reduce.model = meshloom::CurveModel::Piecewise;
    reduce.fit = meshloom::CollectiveFit{12.0, 3.1, 0.998, 14};
    reduce.holdout = meshloom::HoldoutError{0.04, 0.11, 7};
    for (int i = 0; i < 14; ++i) reduce.points.push_back({4096.0 * (1 << i), 20.0 + i});
    reduce.as_run = {{4096, 1.2, 3}, {65536, 0.8, 4}};  // corrected by refine
    meshloom::GroupCurve gather;
    gather.collective = "all_gather";
    gather.shape = {4, 1, 4};
    gather.model = meshloom::CurveModel::Piecewise;
    gather.points = {{4096, 30}, {8192, 31}};
    c.groups = {reduce, gather};
    meshloom::app::FitTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.set_calibration(c);
    using M = meshloom::app::FitTableModel;
    QCOMPARE(model.rowCount(), 2);
    const auto cell = [&](int row, int column) { return model.index(row, column).data().toString(); };
    QCOMPARE(cell(0, M::Collective), QStringLiteral("all_reduce"));
    QCOMPARE(cell(0, M::Group), QString::fromStdString(meshloom::to_string(reduce.shape)));
    QCOMPARE(cell(0, M::Model), QStringLiteral("piecewise"));
    QCOMPARE(cell(0, M::Alpha), QStringLiteral("12.0"));
    QCOMPARE(cell(0, M::Busbw), QStringLiteral("3.1"));
    QCOMPARE(cell(0, M::R2), QStringLiteral("0.998"));
    QCOMPARE(cell(0, M::HeldOutMedian), QStringLiteral("4.0%"));
    QCOMPARE(cell(0, M::HeldOutP90), QStringLiteral("11%"));
    QCOMPARE(cell(0, M::Points), QStringLiteral("14"));
    QCOMPARE(cell(0, M::AsRun), QStringLiteral("0.80\u20131.20\u00d7 (2)"));
    QCOMPARE(cell(1, M::Alpha), QStringLiteral("\u2013"));
    QCOMPARE(cell(1, M::HeldOutMedian), QStringLiteral("\u2013"));
    QCOMPARE(cell(1, M::AsRun), QStringLiteral("\u2013"));
    QCOMPARE(model.summary(), QStringLiteral("2 curves (mpi, single-shot); held-out error median 4.0%, p90 at most 11%"));
    QCOMPARE(model.headerData(M::Alpha, Qt::Horizontal).toString(), QStringLiteral("\u03b1 (\u00b5s)"));
    QCOMPARE(cell(0, M::ByAxis), QStringLiteral("\u2013"));

    // Bound ranks: dp and tp share the all_reduce curve of 2 ranks, each corrected by its own time; the flattened
    // group's all_gather is its curve's only axis.
    c.rank_cpus = {"0", "1", "0", "1"};
    c.axis_corrections = {{.axes = {0}, .collective = "all_reduce", .factors = {{4096, 0.9, 14}, {65536, 0.8, 14}}, .as_run = {}},
                          {.axes = {1}, .collective = "all_reduce", .factors = {{4096, 1.1, 14}, {65536, 1.2, 14}}, .as_run = {}},
                          {.axes = {0, 1}, .collective = "all_gather", .factors = {{4096, 1.0, 14}}, .as_run = {}}};
    model.set_calibration(c);
    QCOMPARE(cell(0, M::ByAxis), QStringLiteral("dp 0.80\u20130.90\u00d7, tp 1.10\u20131.20\u00d7"));
    QCOMPARE(cell(1, M::ByAxis), QStringLiteral("dp_tp 1.00\u20131.00\u00d7"));
    // refine's own points for an axis (taken instead of the curve's) follow its correction.
    c.axis_corrections[0].as_run = {{4096, 1.3, 6}, {65536, 0.7, 6}};
    model.set_calibration(c);
    QCOMPARE(cell(0, M::ByAxis),
             QStringLiteral("dp 0.80\u20130.90\u00d7 as run 0.70\u20131.30\u00d7, tp 1.10\u20131.20\u00d7"));
    QCOMPARE(model.summary(), QStringLiteral("2 curves (mpi, single-shot); held-out error median 4.0%, p90 at most 11%; "
                                             "its mesh (2, 2) priced by axis (ranks bound)"));
    QCOMPARE(model.headerData(M::ByAxis, Qt::Horizontal).toString(), QStringLiteral("by axis"));
    // The transport settings it was measured under, where any was set ({}: none, said by nothing).
    c.transport = meshloom::comm::TransportSettings{};
    model.set_calibration(c);
    QVERIFY2(!model.summary().contains(QStringLiteral("measured with")), qPrintable(model.summary()));
    c.transport = meshloom::comm::TransportSettings{{"NCCL_PROTO", "Simple"},
                                                    {"OMPI_MCA_btl_vader_single_copy_mechanism", "none"}};
    model.set_calibration(c);
    QVERIFY2(model.summary().endsWith(QStringLiteral("(ranks bound); measured with NCCL_PROTO=Simple, "
                                                     "OMPI_MCA_btl_vader_single_copy_mechanism=none")),
             qPrintable(model.summary()));

    const meshloom::Calibration old = meshloom::load_calibration(kCalibration.toStdString());
    model.set_calibration(old);
    int fits = 0;
    for (const auto& [axis, by_collective] : old.axes) fits += static_cast<int>(by_collective.size());
    QVERIFY(fits > 0);
    QCOMPARE(model.rowCount(), fits);
    QVERIFY2(model.summary().startsWith(QStringLiteral("%1 per-axis fits (mpi").arg(fits)), qPrintable(model.summary()));
    model.set_calibration(std::nullopt);
    QCOMPARE(model.rowCount(), 0);
    QVERIFY(model.summary().isEmpty());
  }

  void exports_png_and_pdf_atomically() {
    Measurements m;
    (void)m.load_jsonl(kFixture.toStdString());
    CostChart chart;
    chart.set_measurements(m);
    QCOMPARE(chart.load_calibration(kCalibration), QString());
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    QString error;

    const QString png = tmp.filePath(QStringLiteral("chart.png"));
    QVERIFY2(chart.save_png(png, 640, 400, &error), qPrintable(error));
    QVERIFY(QFileInfo(png).size() > 0);
    const QImage image(png);
    QCOMPARE(image.size(), QSize(640, 400));
    const QString pdf = tmp.filePath(QStringLiteral("chart.pdf"));
    QVERIFY2(chart.save_pdf(pdf, 0, 0, &error), qPrintable(error));
    QVERIFY(QFileInfo(pdf).size() > 0);
    QVERIFY(read_all(pdf).startsWith("%PDF"));
    // No temporaries left beside the files.
    QCOMPARE(QDir(tmp.path()).entryList(QDir::Files | QDir::Hidden).size(), 2);

    // An existing file survives a failed export untouched.
    const QString existing = tmp.filePath(QStringLiteral("existing.png"));
    {
      QFile f(existing);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("old content");
    }
    error.clear();
    QVERIFY(!chart.save_png(existing, 100000, 400, &error));
    QVERIFY2(error.startsWith(QStringLiteral("Cannot write ") + existing), qPrintable(error));
    QCOMPARE(read_all(existing), QByteArray("old content"));

    // A directory that refuses writes (binding only for users without CAP_DAC_OVERRIDE).
    const QString locked_dir = tmp.filePath(QStringLiteral("locked"));
    QVERIFY(QDir().mkpath(locked_dir));
    const QString locked = locked_dir + QStringLiteral("/chart.pdf");
    {
      QFile f(locked);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("old content");
    }
    QVERIFY(QFile::setPermissions(locked_dir, QFileDevice::ReadOwner | QFileDevice::ExeOwner));
    QFile probe(locked_dir + QStringLiteral("/probe"));
    const bool binding = !probe.open(QIODevice::WriteOnly);
    if (!binding) probe.remove();
    if (binding) {
      error.clear();
      QVERIFY(!chart.save_pdf(locked, 0, 0, &error));
      QVERIFY2(error.contains(locked), qPrintable(error));
      QCOMPARE(read_all(locked), QByteArray("old content"));
      error.clear();
      QVERIFY(!chart.save_png(locked, 0, 0, &error));
      QCOMPARE(read_all(locked), QByteArray("old content"));
    }
    QVERIFY(QFile::setPermissions(locked_dir, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));

    // Paths no user can write: a directory, and a file under a regular file.
    const QString dir_path = tmp.filePath(QStringLiteral("a_directory.png"));
    QVERIFY(QDir().mkpath(dir_path));
    error.clear();
    QVERIFY(!chart.save_png(dir_path, 0, 0, &error));
    QVERIFY2(error.startsWith(QStringLiteral("Cannot write ") + dir_path), qPrintable(error));
    QVERIFY(QFileInfo(dir_path).isDir());
    const QString under_file = existing + QStringLiteral("/chart.pdf");
    error.clear();
    QVERIFY(!chart.save_pdf(under_file, 0, 0, &error));
    QVERIFY2(error.startsWith(QStringLiteral("Cannot write ") + under_file), qPrintable(error));
    QCOMPARE(read_all(existing), QByteArray("old content"));
  }
};

QTEST_MAIN(ChartsTest)
#include "test_charts.moc"
