// The live run of the launcher on the offscreen platform. Commands are argument lists (bench's arguments, local
// mpirun, the cluster template and its refusals). LauncherRun against a stand-in launcher that replays a recorded
// bench run (meshloom_fake_launcher): records arrive in order as signals and in the records file, progress against
// the config's plan (sizes too small for a group are not counted, as bench does not run them), garbage lines reported
// by line number while the rest is read, chatter on stdout logged, an early exit, a launcher's error record and exit
// status in the message, records that cannot be saved, a crash, a cancel of a process that ignores SIGTERM, a run
// destroyed while going, a program that does not exist, and the event loop free throughout. FileJob with the
// real launcher's calibrate --from, and its failures. The Costs panel fed by a run: the chart fills as records
// arrive, and a fit by calibrate --from; Correct by records (refine) on a calibration shown, and its refusals. With the label mpi (app_live_run_mpi): the Costs panel runs the default
// design for real (`mpirun -np 8 meshloom-launch bench --jsonl -` through LauncherRun), then calibrate on its records,
// loaded by the engine. The loop in the window: fit, apply, and the plan's price changes.
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QPushButton>
#include <QRadioButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <QUndoStack>
#include <QtTest>

#include <sched.h>
#include <signal.h>
#include <sys/types.h>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "costs/cost_chart.hpp"
#include "costs/costs_panel.hpp"
#include "costs/fit_table.hpp"
#include "document/design_document.hpp"
#include "live/launcher_run.hpp"
#include "live/record_stream.hpp"
#include "live/run_dialog.hpp"
#include "shell/main_window.hpp"
#include "meshloom/design/design.hpp"
#include "meshloom/dtype.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/state.hpp"
#include "plan/plan_animation.hpp"
#include "plan/plan_model.hpp"
#include "plan/redistribution_panel.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "live_support.hpp"
#include "support/two_by_two_design.hpp"

using namespace meshloom;
using namespace meshloom::app;

namespace {

const QString kFake = QStringLiteral(MESHLOOM_FAKE_LAUNCHER);
const QString kLauncher = QStringLiteral(MESHLOOM_LAUNCHER_PATH);
const QString kRecorded = QStringLiteral(MESHLOOM_TEST_DATA_DIR "/bench-2x2.jsonl");

using meshloom::app::testing::lines_of;

int results_in(const QStringList& lines) {
  int n = 0;
  for (const auto& l : lines) n += l.startsWith(QLatin1String("{\"type\":\"result\"")) ? 1 : 0;
  return n;
}

LaunchCommand fake(const QStringList& options) {
  return {kFake, QStringList{QStringLiteral("--replay"), kRecorded} + options};
}

RunOutcome wait_for(LauncherRun& run, QSignalSpy& finished, int timeout_ms = 30000) {
  if (finished.isEmpty() && !finished.wait(timeout_ms)) return RunOutcome{RunOutcome::Status::Failed, -1, 0, 0, false, {}, QStringLiteral("timed out")};
  Q_UNUSED(run);
  return finished.takeFirst().at(0).value<RunOutcome>();
}

}  // namespace

Q_DECLARE_METATYPE(meshloom::app::RunOutcome)

namespace {

// The push button of `w` labelled `text` (a test failure when there is none).
QPushButton* button(const QWidget& w, const QString& text) {
  for (auto* b : w.findChildren<QPushButton*>()) {
    if (b->text() == text) return b;
  }
  qFatal("no button '%s'", qPrintable(text));
}

// The design made a (2, 2) mesh of 4 ranks on one host, its tensors dropped (their states name 3 axes).
Design resized_to_2x2(const Design& d) {
  Design next = d;
  next.mesh.shape = {2, 2};
  next.mesh.names = {"dp", "tp"};
  next.mesh.flattened.clear();
  next.world = 4;
  next.devices_per_host = 4;
  next.tensors.clear();
  validate_design(next);
  return next;
}

}  // namespace

class LiveRunTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    qRegisterMetaType<RunOutcome>();
    QVERIFY(QFile::exists(kFake));
    QCOMPARE(results_in(lines_of(kRecorded)), 48);
  }

  void commands_are_argument_lists() {
    BenchSettings s;
    s.design_path = QStringLiteral("/tmp/my design.meshloom.json");
    s.world = 8;
    s.backend = QStringLiteral("nccl");
    s.min_bytes = QStringLiteral("8");
    s.max_bytes = QStringLiteral("1G");
    s.step_factor = 4;
    s.dtype = QStringLiteral("bfloat16");
    s.warmup_iters = 2;
    s.iters = 7;
    s.check = true;
    s.collectives = {QStringLiteral("all_reduce"), QStringLiteral("all_gather")};
    s.axes = {QStringLiteral("tp"), QStringLiteral("dp_tp")};
    s.timeout_s = 30;
    s.timing = QStringLiteral("pipelined");
    s.rounds = 9;  // more rounds than iterations: one iteration per round
    const QStringList args = bench_arguments(s);
    QCOMPARE(args, (QStringList{"bench", "--design", "/tmp/my design.meshloom.json", "--world", "8", "--backend", "nccl",
                                "-b", "8", "-e", "1G", "-f", "4", "--dtype", "bfloat16", "-w", "2", "-n", "7",
                                "--timing", "pipelined", "--rounds", "7", "--timeout", "30", "--check", "--collectives",
                                "all_reduce,all_gather", "--axes", "tp,dp_tp", "--jsonl", "-"}));
    // The defaults: every collective and axis (no option), the launcher's dtype and step spelled out, and calibrate's
    // timing (single-shot), so that a calibration fitted from the run predicts what run and validate measure; one
    // round, so that results arrive as they are measured.
    QCOMPARE(bench_arguments(BenchSettings{}),
             (QStringList{"bench", "--design", "", "--world", "1", "--backend", "mpi", "-b", "1K", "-e", "4M", "-f",
                          "2", "--dtype", "float32", "-w", "3", "-n", "10", "--timing", "single_shot", "--rounds", "1",
                          "--timeout", "60", "--jsonl", "-"}));
    QCOMPARE(local_command(QStringLiteral("mpirun"), QStringLiteral("/opt/ml/meshloom-launch"), 8, {"bench", "--jsonl", "-"}),
             (LaunchCommand{"mpirun", {"--oversubscribe", "-np", "8", "/opt/ml/meshloom-launch", "bench", "--jsonl", "-"}}));

    // Templates: split like a shell would, never run by one; {args} expands into several words.
    QString error;
    auto c = template_command(QStringLiteral("srun -N 2 --ntasks-per-node={world} {launcher} {args}"),
                              QStringLiteral("/opt/ml/meshloom-launch"), 8, {"bench", "--jsonl", "-"}, &error);
    QVERIFY2(c, qPrintable(error));
    QCOMPARE(*c, (LaunchCommand{"srun", {"-N", "2", "--ntasks-per-node=8", "/opt/ml/meshloom-launch", "bench", "--jsonl", "-"}}));
    c = template_command(QStringLiteral("ssh head \"mpirun -np {world}\" {args}"), QStringLiteral("L"), 4, {"a b"}, &error);
    QVERIFY2(c, qPrintable(error));
    QCOMPARE(*c, (LaunchCommand{"ssh", {"head", "mpirun -np 4", "a b"}}));
    QCOMPARE(command_text(*c), QStringLiteral("ssh head 'mpirun -np 4' 'a b'"));

    const struct {
      const char* text;
      const char* names;
    } refused[] = {
        {"", "empty"},
        {"   ", "empty"},
        {"srun {launcher}", "no {args}"},
        {"srun -n {ranks} {launcher} {args}", "{ranks}"},
        {"srun -n {world {args}", "{world"},
        {"srun -n world} {args}", "world}"},
        {"srun --x={args} {args}", "--x={args}"},
        {"{args}", "start with a program"},
    };
    for (const auto& r : refused) {
      error.clear();
      QVERIFY2(!template_command(QString::fromLatin1(r.text), QStringLiteral("L"), 2, {"bench"}, &error), r.text);
      QVERIFY2(error.contains(QString::fromLatin1(r.names)), qPrintable(QStringLiteral("%1 -> %2").arg(r.text, error)));
    }
  }

  void a_whole_run_streams_in_order() {
    QTemporaryDir tmp;
    const QString records = tmp.filePath(QStringLiteral("bench.jsonl"));
    LauncherRun run;
    QSignalSpy finished(&run, &LauncherRun::finished);
    QSignalSpy progress(&run, &LauncherRun::progress);
    QStringList received;
    QObject::connect(&run, &LauncherRun::record_line, &run, [&](const QString& l) { received << l; });
    // The event loop stays free: a timer keeps firing while the records stream.
    int ticks = 0;
    QTimer ticker;
    QObject::connect(&ticker, &QTimer::timeout, &ticker, [&] { ++ticks; });
    ticker.start(10);
    QVERIFY(run.start(fake({QStringLiteral("--delay-ms"), QStringLiteral("5")}), records));
    QVERIFY(run.running());
    QVERIFY(!run.start(fake({}), records));  // one run at a time
    const RunOutcome o = wait_for(run, finished);
    QCOMPARE(int(o.status), int(RunOutcome::Status::Succeeded));
    QVERIFY(!run.running());
    QCOMPARE(o.results, 48);
    QCOMPARE(o.expected, 48);  // 2 axes x 4 collectives x 6 sizes, from the config record
    QVERIFY(o.summary_ok);
    QVERIFY(o.problems.isEmpty());
    QCOMPARE(received, lines_of(kRecorded));  // every record, in order
    QCOMPARE(lines_of(records), lines_of(kRecorded));
    QVERIFY2(ticks >= 10, qPrintable(QString::number(ticks)));
    QCOMPARE(finished.count(), 0);  // exactly once
    // Progress: (0, 48) after the config, then 1..48.
    QCOMPARE(progress.count(), 49);
    for (int k = 0; k < progress.count(); ++k) {
      QCOMPARE(progress.at(k).at(0).toInt(), k);
      QCOMPARE(progress.at(k).at(1).toInt(), 48);
    }
    QCOMPARE(run.measurements().point_count(), std::size_t{48});
  }

  void garbage_lines_are_reported_and_the_rest_is_read() {
    QTemporaryDir tmp;
    LauncherRun run;
    QSignalSpy finished(&run, &LauncherRun::finished);
    QStringList log;
    QObject::connect(&run, &LauncherRun::log, &run, [&](const QString& t) { log << t; });
    QVERIFY(run.start(fake({QStringLiteral("--garbage-every"), QStringLiteral("7"), QStringLiteral("--cut-last")}),
                      tmp.filePath(QStringLiteral("r.jsonl"))));
    const RunOutcome o = wait_for(run, finished);
    QCOMPARE(int(o.status), int(RunOutcome::Status::Succeeded));  // the last line, cut short of its newline, counts
    QCOMPARE(o.results, 48);
    QCOMPARE(o.problems.size(), 7);  // after records 7, 14, ..., 49 of the replay
    QVERIFY2(o.problems.front().startsWith(QLatin1String("line 8:")), qPrintable(o.problems.front()));
    QVERIFY2(o.problems.back().startsWith(QLatin1String("line 56:")), qPrintable(o.problems.back()));
    QVERIFY(log.join(QString()).contains(QLatin1String("line 8:")));
    QCOMPARE(lines_of(tmp.filePath(QStringLiteral("r.jsonl"))), lines_of(kRecorded));  // garbage never saved
  }

  void an_early_exit_keeps_what_was_measured() {
    QTemporaryDir tmp;
    const QString records = tmp.filePath(QStringLiteral("r.jsonl"));
    LauncherRun run;
    QSignalSpy finished(&run, &LauncherRun::finished);
    QVERIFY(run.start(fake({QStringLiteral("--exit-after"), QStringLiteral("11"), QStringLiteral("--exit-code"), QStringLiteral("3")}),
                      records));
    const RunOutcome o = wait_for(run, finished);
    QCOMPARE(int(o.status), int(RunOutcome::Status::Failed));
    QCOMPARE(o.exit_code, 3);
    QCOMPARE(o.results, 10);  // the config and 10 results
    QVERIFY2(o.message.contains(QLatin1String("status 3")) && o.message.contains(QLatin1String("10 of 48")), qPrintable(o.message));
    QVERIFY2(o.message.contains(QLatin1String("fake launcher: exiting with status 3")), qPrintable(o.message));  // stderr
    QCOMPARE(lines_of(records), lines_of(kRecorded).mid(0, 11));
    QCOMPARE(run.measurements().point_count(), std::size_t{10});
  }

  void a_crash_is_reported_as_one() {
    QTemporaryDir tmp;
    LauncherRun run;
    QSignalSpy finished(&run, &LauncherRun::finished);
    QVERIFY(run.start(fake({QStringLiteral("--crash-after"), QStringLiteral("5")}), tmp.filePath(QStringLiteral("r.jsonl"))));
    const RunOutcome o = wait_for(run, finished);
    QCOMPARE(int(o.status), int(RunOutcome::Status::Crashed));
    QCOMPARE(o.results, 4);
    QVERIFY2(o.message.contains(QLatin1String("crashed after 4 of 48")), qPrintable(o.message));
    QCOMPARE(lines_of(tmp.filePath(QStringLiteral("r.jsonl"))).size(), 5);
  }

  void cancel_ends_even_a_process_that_ignores_sigterm() {
    QTemporaryDir tmp;
    LauncherRun run;
    QSignalSpy finished(&run, &LauncherRun::finished);
    QSignalSpy progress(&run, &LauncherRun::progress);
    QVERIFY(run.start(fake({QStringLiteral("--hang-after"), QStringLiteral("4"), QStringLiteral("--ignore-term")}),
                      tmp.filePath(QStringLiteral("r.jsonl"))));
    QTRY_COMPARE_WITH_TIMEOUT(run.results(), 3, 10000);
    QElapsedTimer clock;
    clock.start();
    run.cancel();
    const RunOutcome o = wait_for(run, finished, 15000);
    QCOMPARE(int(o.status), int(RunOutcome::Status::Cancelled));
    QVERIFY2(clock.elapsed() >= LauncherRun::kKillGraceMs * 9 / 10,  // SIGTERM was ignored: killed after the grace
             qPrintable(QStringLiteral("%1 ms: %2").arg(clock.elapsed()).arg(o.message)));
    QVERIFY(clock.elapsed() < LauncherRun::kKillGraceMs + 5000);
    QCOMPARE(o.results, 3);
    QVERIFY2(o.message.contains(QLatin1String("Cancelled after 3 of 48")), qPrintable(o.message));
  }

  void a_missing_program_is_named() {
    LauncherRun run;
    QSignalSpy finished(&run, &LauncherRun::finished);
    QVERIFY(run.start({QStringLiteral("/nonexistent/mpirun"), {QStringLiteral("-np"), QStringLiteral("2")}}, QString()));
    const RunOutcome o = wait_for(run, finished);
    QCOMPARE(int(o.status), int(RunOutcome::Status::FailedToStart));
    QVERIFY2(o.message.contains(QLatin1String("/nonexistent/mpirun")), qPrintable(o.message));
    QVERIFY(!run.running());
    // A records file that cannot be created: refused before anything runs.
    QVERIFY(!run.start(fake({}), QStringLiteral("/nonexistent/dir/r.jsonl")));
    QCOMPARE(finished.count(), 1);
    QVERIFY(finished.takeFirst().at(0).value<RunOutcome>().message.contains(QLatin1String("/nonexistent/dir/r.jsonl")));
  }

  // Progress counts what bench will write: sizes that leave a rank no element are not rows (here all_gather,
  // reduce_scatter and all_to_all below 8 B on dp and tp, below 16 B on the flattened dp_tp of 4 ranks).
  void progress_counts_the_rows_bench_writes() {
    const QString small = QStringLiteral(MESHLOOM_TEST_DATA_DIR "/bench-2x2-small.jsonl");
    const int in_file = results_in(lines_of(small));
    QCOMPARE(in_file, 63);  // 3 axes x 5 collectives x 5 sizes = 75, less 3 + 3 + 6 skipped
    LauncherRun run;
    QSignalSpy finished(&run, &LauncherRun::finished);
    QSignalSpy progress(&run, &LauncherRun::progress);
    QVERIFY(run.start({kFake, {QStringLiteral("--replay"), small}}, QString()));
    const RunOutcome o = wait_for(run, finished);
    QVERIFY2(o.status == RunOutcome::Status::Succeeded, qPrintable(o.message));
    QCOMPARE(run.expected_results(), in_file);
    QCOMPARE(o.expected, in_file);
    QCOMPARE(o.results, in_file);
    QCOMPARE(progress.count(), in_file + 1);
    QCOMPARE(progress.first().at(0).toInt(), 0);
    QCOMPARE(progress.last().at(0).toInt(), in_file);
    for (const auto& p : progress) QCOMPARE(p.at(1).toInt(), in_file);  // the total never moves
  }

  // A line on standard output that is not JSON (ssh's or srun's words) is logged, not a problem and not saved.
  void chatter_on_stdout_goes_to_the_log() {
    QTemporaryDir tmp;
    const QString records = tmp.filePath(QStringLiteral("r.jsonl"));
    LauncherRun run;
    QSignalSpy finished(&run, &LauncherRun::finished);
    QString log;
    QObject::connect(&run, &LauncherRun::log, &run, [&](const QString& t) { log += t; });
    QVERIFY(run.start(fake({QStringLiteral("--chatter")}), records));
    const RunOutcome o = wait_for(run, finished);
    QVERIFY2(o.status == RunOutcome::Status::Succeeded, qPrintable(o.message));
    QVERIFY(o.problems.isEmpty());
    QVERIFY2(log.contains(QLatin1String("Permanently added 'node1'")), qPrintable(log));
    QVERIFY2(log.contains(QLatin1String("# fake launcher: replaying")), qPrintable(log));  // standard error
    QCOMPARE(lines_of(records), lines_of(kRecorded));
  }

  // A process writing without newlines does not grow the app's memory without bound: past kMaxLineBytes the line is
  // dropped through its newline, said once, and the records after it are read as ever.
  void a_line_without_end_is_dropped_not_kept() {
    QTemporaryDir tmp;
    const QString records = tmp.filePath(QStringLiteral("r.jsonl"));
    RecordStream stream;
    QString error;
    QVERIFY2(stream.open(records, &error), qPrintable(error));
    QStringList log;
    QStringList accepted;
    QObject::connect(&stream, &RecordStream::log, &stream, [&](const QString& t) { log << t; });
    QObject::connect(&stream, &RecordStream::record_line, &stream, [&](const QString& l) { accepted << l; });
    const QByteArray chunk(qsizetype{1} << 20, 'x');
    stream.feed(QByteArrayLiteral("{\"type\":\"result\",\"pad\":\""));
    for (qsizetype fed = 0; fed <= RecordStream::kMaxLineBytes + chunk.size(); fed += chunk.size()) {
      stream.feed(chunk);
      QVERIFY2(stream.pending_bytes() <= RecordStream::kMaxLineBytes + chunk.size(),
               qPrintable(QString::number(stream.pending_bytes())));
    }
    QCOMPARE(log.size(), 1);
    QVERIFY2(log.front().contains(QLatin1String("16 MiB without a newline")), qPrintable(log.front()));
    const QString first = lines_of(kRecorded).front();
    stream.feed(chunk + QByteArrayLiteral("\"}\n") + first.toUtf8() + '\n');
    stream.close(false);
    QCOMPARE(log.size(), 1);
    QCOMPARE(accepted, QStringList{first});
    QCOMPARE(lines_of(records), QStringList{first});
  }

  // Standard error reaches the log in whole lines, however the process wrote them (a line in two writes, a UTF-8
  // character split between them), and its last line without a newline too.
  void standard_error_is_logged_in_whole_lines() {
    QTemporaryDir tmp;
    LauncherRun run;
    QSignalSpy finished(&run, &LauncherRun::finished);
    QStringList pieces;
    QObject::connect(&run, &LauncherRun::log, &run, [&](const QString& t) { pieces << t; });
    QVERIFY(run.start(fake({QStringLiteral("--split-stderr")}), tmp.filePath(QStringLiteral("r.jsonl"))));
    const RunOutcome o = wait_for(run, finished);
    QVERIFY2(o.status == RunOutcome::Status::Succeeded, qPrintable(o.message));
    const QString log = pieces.join(QString());
    QVERIFY2(log.contains(QStringLiteral("# fake launcher: half a line\n")), qPrintable(log));
    QVERIFY2(log.contains(QStringLiteral("# fake launcher: caf\u00e9\n")), qPrintable(log));
    QVERIFY2(log.endsWith(QLatin1String("# fake launcher: the last line, without its newline")), qPrintable(log));
    for (const QString& p : pieces) {
      QVERIFY2(p.endsWith(QLatin1Char('\n')) || p.endsWith(QLatin1String("without its newline")), qPrintable(p));
    }
  }

  // A launcher that reports an error record and exits non-zero: the message has the status, the launcher's own
  // words and standard error's tail; what was measured stays, and the records file holds the error record too.
  void a_failing_launcher_says_why() {
    QTemporaryDir tmp;
    const QString replay = tmp.filePath(QStringLiteral("failing.jsonl"));
    const QString error_record = QStringLiteral(
        R"({"type":"error","rank":1,"message":"RuntimeError: all_gather on axis 'tp' timed out after 60 s"})");
    QStringList replayed = lines_of(kRecorded).mid(0, 4);  // the config and 3 results
    replayed << error_record;
    {
      QFile f(replay);
      QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Text));
      f.write((replayed.join(QLatin1Char('\n')) + QLatin1Char('\n')).toUtf8());
    }
    const QString records = tmp.filePath(QStringLiteral("r.jsonl"));
    LauncherRun run;
    QSignalSpy finished(&run, &LauncherRun::finished);
    QVERIFY(run.start({kFake, {QStringLiteral("--replay"), replay, QStringLiteral("--exit-after"), QStringLiteral("5"),
                               QStringLiteral("--exit-code"), QStringLiteral("2")}},
                      records));
    const RunOutcome o = wait_for(run, finished);
    QCOMPARE(int(o.status), int(RunOutcome::Status::Failed));
    QCOMPARE(o.exit_code, 2);
    QCOMPARE(o.results, 3);
    QCOMPARE(o.expected, 48);
    QVERIFY(!o.summary_ok);
    QVERIFY2(o.message.contains(QLatin1String("exited with status 2 after 3 of 48 results")), qPrintable(o.message));
    QVERIFY2(o.message.contains(QLatin1String("rank 1: RuntimeError: all_gather on axis 'tp' timed out after 60 s")),
             qPrintable(o.message));
    QVERIFY2(o.message.contains(QLatin1String("fake launcher: exiting with status 2 after 5 lines")),
             qPrintable(o.message));
    QCOMPARE(lines_of(records), replayed);
    QCOMPARE(run.measurements().point_count(), std::size_t{3});
    QCOMPARE(run.measurements().run_errors().size(), std::size_t{1});
  }

  // Records that cannot be saved (a full disk) fail the run, saying where and how many made it; the points stay.
  void records_that_cannot_be_saved_fail_the_run() {
    if (!QFileInfo::exists(QStringLiteral("/dev/full"))) QSKIP("this system has no /dev/full");
    LauncherRun run;
    QSignalSpy finished(&run, &LauncherRun::finished);
    QString log;
    QObject::connect(&run, &LauncherRun::log, &run, [&](const QString& t) { log += t; });
    QVERIFY(run.start(fake({}), QStringLiteral("/dev/full")));
    const RunOutcome o = wait_for(run, finished);
    QCOMPARE(int(o.status), int(RunOutcome::Status::Failed));
    QCOMPARE(o.exit_code, 0);
    QCOMPARE(o.results, 48);
    QVERIFY2(o.message.contains(QLatin1String("Cannot save the run's records to /dev/full")) &&
                 o.message.contains(QLatin1String("the first 0 records only")),
             qPrintable(o.message));
    QVERIFY2(log.contains(QLatin1String("Cannot save the run's records to /dev/full")), qPrintable(log));
    QCOMPARE(run.measurements().point_count(), std::size_t{48});
  }

  // Destroying a run that is still going ends its process (even one that ignores SIGTERM) and reaps it.
  void destroying_a_run_ends_its_process() {
    QTemporaryDir tmp;
    const QString records = tmp.filePath(QStringLiteral("r.jsonl"));
    auto run = std::make_unique<LauncherRun>();
    QString log;
    QObject::connect(run.get(), &LauncherRun::log, run.get(), [&](const QString& t) { log += t; });
    QVERIFY(run->start(fake({QStringLiteral("--hang-after"), QStringLiteral("3"), QStringLiteral("--ignore-term")}),
                       records));
    static const QRegularExpression pid_line(QStringLiteral("fake launcher: pid (\\d+)"));
    QTRY_VERIFY_WITH_TIMEOUT(run->results() == 2 && pid_line.match(log).hasMatch(), 10000);
    const auto pid = static_cast<pid_t>(pid_line.match(log).captured(1).toInt());
    QVERIFY(pid > 0);
    QCOMPARE(::kill(pid, 0), 0);  // hanging
    QElapsedTimer clock;
    clock.start();
    run.reset();
    QVERIFY2(clock.elapsed() < LauncherRun::kKillGraceMs, qPrintable(QString::number(clock.elapsed())));
    errno = 0;
    QCOMPARE(::kill(pid, 0), -1);  // killed and reaped: no such process
    QCOMPARE(errno, ESRCH);
    QCOMPARE(lines_of(records).size(), 3);
  }

  // calibrate --from through FileJob: a fit the engine loads, and failures in the launcher's words.
  void calibrate_job_fits_or_says_why() {
    QTemporaryDir tmp;
    const QString out = tmp.filePath(QStringLiteral("calibration.json"));
    {
      FileJob job;
      QSignalSpy finished(&job, &FileJob::finished);
      job.start(kLauncher, calibrate_arguments(kRecorded, out));
      QVERIFY(job.running());
      QVERIFY(finished.wait(30000));
      QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(finished.at(0).at(1).toString()));
      QVERIFY(!job.running());
      const Calibration c = load_calibration(out.toStdString());
      QVERIFY(c.axes.count("dp") == 1 && c.axes.count("tp") == 1);
    }
    {
      FileJob job;
      QSignalSpy finished(&job, &FileJob::finished);
      job.start(kLauncher, calibrate_arguments(tmp.filePath(QStringLiteral("missing.jsonl")), out));
      QVERIFY(finished.wait(30000));
      QVERIFY(!finished.at(0).at(0).toBool());
      const QString why = finished.at(0).at(1).toString();
      QVERIFY2(why.contains(QLatin1String("missing.jsonl")), qPrintable(why));
    }
    {
      FileJob job;
      QSignalSpy finished(&job, &FileJob::finished);
      job.start(QStringLiteral("/nonexistent/meshloom-launch"), calibrate_arguments(kRecorded, out));
      QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
      QVERIFY(!finished.at(0).at(0).toBool());
      const QString why = finished.at(0).at(1).toString();
      QVERIFY2(why.contains(QLatin1String("/nonexistent/meshloom-launch")), qPrintable(why));
    }
  }

  // Correct by records: the real launcher's refine on the calibration shown with validate records (the bundled
  // 2-rank runs of the VM), the corrected file shown with its as-run factors in the Fits tab (this 8-rank design
  // cannot take a 2-rank calibration, and the message says so instead of pointing at Apply); the refusals before it
  // can run, and the launcher's reason when it fails (the corrected calibration stays shown).
  void correct_by_records_refines_the_calibration() {
    QTemporaryDir tmp;
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/default.meshloom.json"), &error), qPrintable(error));
    CostsPanel panel(&doc);
    panel.set_runs_root(tmp.path());
    panel.set_launcher(kLauncher);
    QPushButton* correct = button(panel, QStringLiteral("Correct by records..."));
    const QString dir = QStringLiteral(MESHLOOM_CALIBRATION_DIR);
    const QStringList records{dir + QStringLiteral("/vm-2.validate-1.jsonl"), dir + QStringLiteral("/vm-2.validate-2.jsonl")};

    QVERIFY(!correct->isEnabled());
    QVERIFY(!panel.refine_calibration(records));
    QVERIFY2(panel.message().contains(QLatin1String("Load or fit a calibration first")), qPrintable(panel.message()));
    QVERIFY(panel.load_calibration(dir + QStringLiteral("/local-2x2.calibration.json")).isEmpty());
    QVERIFY(!correct->isEnabled());
    QVERIFY2(correct->toolTip().contains(QLatin1String("local-2x2.calibration.json holds per-axis fits only")),
             qPrintable(correct->toolTip()));

    const QString base = dir + QStringLiteral("/vm-2.calibration.json");
    QVERIFY(panel.load_calibration(base).isEmpty());
    QVERIFY(correct->isEnabled());
    QVERIFY(!panel.refine_calibration({}));
    QVERIFY2(panel.message().contains(QLatin1String("Nothing to correct by")), qPrintable(panel.message()));
    for (int row = 0; row < panel.fits()->rowCount(); ++row) {
      QCOMPARE(panel.fits()->index(row, FitTableModel::AsRun).data().toString(), QString(QChar(0x2013)));
    }

    QSignalSpy calibrated(&panel, &CostsPanel::calibrated);
    QVERIFY2(panel.refine_calibration(records), qPrintable(panel.message()));
    QVERIFY(!correct->isEnabled());  // one job at a time
    QVERIFY(calibrated.wait(30000));
    const QString path = calibrated.takeFirst().at(0).toString();
    QVERIFY2(!path.isEmpty(), qPrintable(panel.message()));
    QCOMPARE(panel.calibration_path(), path);
    QCOMPARE(QFileInfo(path).absolutePath(), QFileInfo(panel.run_dir()).absoluteFilePath());
    const Calibration refined = load_calibration(path.toStdString());
    const Calibration plain = load_calibration(base.toStdString());
    QCOMPARE(refined.groups.size(), plain.groups.size());
    int corrected = 0;
    for (std::size_t i = 0; i < refined.groups.size(); ++i) {
      QCOMPARE(refined.groups[i].points.size(), plain.groups[i].points.size());  // the benchmark stays
      if (refined.groups[i].as_run.empty()) continue;
      ++corrected;
      const QString cell = panel.fits()->index(static_cast<int>(i), FitTableModel::AsRun).data().toString();
      QVERIFY2(cell.endsWith(QStringLiteral("(%1)").arg(refined.groups[i].as_run.size())), qPrintable(cell));
    }
    QVERIFY(corrected > 0);
    const QString said = panel.message();
    QVERIFY2(said.contains(QStringLiteral("Corrected vm-2.calibration.json by 2 records files: %1 of %2 curves")
                               .arg(corrected)
                               .arg(refined.groups.size())),
             qPrintable(said));
    QVERIFY2(said.contains(QLatin1String("It cannot be applied to this design: ")) &&
                 !said.contains(QLatin1String("Apply to planner plans with it")),
             qPrintable(said));
    QVERIFY2(panel.log_text().contains(QLatin1String("as run, own file left out")), qPrintable(panel.log_text()));
    QVERIFY(correct->isEnabled());

    // bench records hold no plan's steps: the launcher says so, nothing is written, the corrected file stays shown.
    QVERIFY2(panel.refine_calibration({kRecorded}), qPrintable(panel.message()));
    QVERIFY(calibrated.wait(30000));
    QVERIFY(calibrated.takeFirst().at(0).toString().isEmpty());
    QVERIFY2(panel.message().startsWith(QLatin1String("Correcting failed: ")) &&
                 panel.message().contains(QLatin1String("these are bench's records")),
             qPrintable(panel.message()));
    QCOMPARE(panel.calibration_path(), path);
    QCOMPARE(QDir(panel.run_dir()).entryList({QStringLiteral("calibration.refined-*.json")}).size(), 1);
  }

  // The Costs panel: a run through a cluster template (the stand-in launcher), the chart filling as records arrive,
  // then the real launcher's calibrate --from fits the records and the chart draws the fit.
  void the_costs_panel_fills_and_fits() {
    QTemporaryDir tmp;
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/default.meshloom.json"), &error), qPrintable(error));
    CostsPanel panel(&doc);
    panel.set_runs_root(tmp.path());
    RunSettings s;
    s.where = RunSettings::Where::Template;
    s.launcher = kLauncher;
    s.command_template = QStringLiteral("%1 --replay %2 --delay-ms 5 {launcher} {args}").arg(kFake, kRecorded);
    s.bench.world = 4;
    QSignalSpy finished(&panel, &CostsPanel::run_finished);
    std::vector<std::size_t> points_seen;
    QObject::connect(panel.run(), &LauncherRun::record_line, &panel,
                     [&] { points_seen.push_back(panel.chart()->measurements().point_count()); });
    QVERIFY2(panel.start_run(s), qPrintable(panel.message()));
    QVERIFY(panel.running());
    QVERIFY(!panel.start_run(s));  // one at a time
    QVERIFY(finished.wait(30000));
    const auto o = finished.takeFirst().at(0).value<RunOutcome>();
    QCOMPARE(int(o.status), int(RunOutcome::Status::Succeeded));
    QCOMPARE(panel.chart()->measurements().point_count(), std::size_t{48});
    QVERIFY(points_seen.size() == 50 && points_seen[1] == 1 && points_seen[48] == 48);  // filled as they arrived
    QCOMPARE(panel.progress_value(), 48);
    QCOMPARE(panel.progress_maximum(), 48);
    QVERIFY(QFile::exists(QDir(panel.run_dir()).filePath(QStringLiteral("design.meshloom.json"))));
    QVERIFY2(panel.log_text().contains(QLatin1String("fake launcher: replaying")), qPrintable(panel.log_text()));

    QSignalSpy calibrated(&panel, &CostsPanel::calibrated);
    QVERIFY2(panel.fit_calibration(), qPrintable(panel.message()));
    QVERIFY(calibrated.wait(30000));
    const QString path = calibrated.takeFirst().at(0).toString();
    QVERIFY2(!path.isEmpty(), qPrintable(panel.message()));
    QCOMPARE(panel.calibration_path(), path);
    const Calibration c = load_calibration(path.toStdString());
    QCOMPARE(c.mesh_shape, (std::vector<std::int64_t>{2, 2}));
    QVERIFY(panel.chart()->measurements().calibration().has_value());
    // The Fits tab lists every curve the launcher fitted, and the message says how well they hold.
    std::size_t curves = c.groups.size();
    if (curves == 0) {
      for (const auto& [axis, fits] : c.axes) curves += fits.size();
    }
    QVERIFY(curves > 0);
    QCOMPARE(panel.fits()->rowCount(), static_cast<int>(curves));
    QCOMPARE(panel.fits_summary(), meshloom::app::calibration_summary(c));
    QVERIFY2(panel.message().contains(panel.fits_summary()), qPrintable(panel.message()));
    // The run replayed a (2,2) recording into a (2,2,2) design: its calibration cannot price the design, and Apply
    // says so before it is pressed. Made (2,2), the design can take it.
    QPushButton* apply_button = button(panel, QStringLiteral("Apply to planner"));
    QVERIFY(!apply_button->isEnabled());
    QVERIFY2(apply_button->toolTip().startsWith(QLatin1String("Cannot apply: The calibration")),
             qPrintable(apply_button->toolTip()));
    QVERIFY(doc.edit(QStringLiteral("2 x 2"), [](const Design& d) { return resized_to_2x2(d); }, &error));
    QVERIFY2(apply_button->isEnabled(), qPrintable(apply_button->toolTip()));
    QSignalSpy apply(&panel, &CostsPanel::apply_requested);
    apply_button->click();
    QCOMPARE(apply.count(), 1);
    QCOMPARE(apply.takeFirst().at(0).toString(), path);
  }

  // More local ranks than the CPUs they may run on: the dialog says they take turns, and how to time steadier; not
  // for as many ranks as CPUs, nor for a cluster command (which runs elsewhere).
  void the_run_dialog_says_when_local_ranks_outnumber_the_cpus() {
    cpu_set_t mine;
    CPU_ZERO(&mine);
    QCOMPARE(::sched_getaffinity(0, sizeof mine, &mine), 0);
    const int cpus = CPU_COUNT(&mine);
    RunSettings s;
    s.where = RunSettings::Where::Local;
    s.launcher = kLauncher;
    s.mpirun = QStringLiteral("/bin/sh");
    s.bench.world = cpus + 2;
    RunDialog crowded(s, QString());
    auto* hint = crowded.findChild<QLabel*>(QStringLiteral("crowding"));
    QVERIFY(hint != nullptr);
    QVERIFY(hint->isVisibleTo(&crowded));
    const QString on = cpus == 1 ? QStringLiteral("1 CPU") : QStringLiteral("%1 CPUs").arg(cpus);
    QVERIFY2(hint->text().startsWith(QStringLiteral("%1 ranks take turns on this machine's %2: ").arg(cpus + 2).arg(on)),
             qPrintable(hint->text()));
    QVERIFY2(hint->text().contains(QLatin1String("chrt -r 1 mpirun --oversubscribe --mca mpi_yield_when_idle 1")),
             qPrintable(hint->text()));
    crowded.findChild<QRadioButton*>(QStringLiteral("slurm_mode"))->click();
    QVERIFY(!hint->isVisibleTo(&crowded));
    s.bench.world = cpus;
    RunDialog apart(s, QString());
    QVERIFY(!apart.findChild<QLabel*>(QStringLiteral("crowding"))->isVisibleTo(&apart));
  }

  // The Run dialog previews the command that runs, on the design's copy in the run's folder, and refuses an mpirun
  // that is not a program here before the settings are kept (OK disabled, the reason naming the path).
  void the_run_dialog_previews_the_exact_command() {
    QTemporaryDir tmp;
    RunSettings s;
    s.where = RunSettings::Where::Local;
    s.launcher = kLauncher;
    s.mpirun = QStringLiteral("/nonexistent/mpirun");
    s.bench.world = 8;
    const QString dir = QDir(tmp.path()).filePath(QStringLiteral("run1"));
    RunDialog dialog(s, CostsPanel::run_design_path(dir));
    auto* ok = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
    QVERIFY(!ok->isEnabled());
    QVERIFY2(dialog.preview_error().contains(QLatin1String("/nonexistent/mpirun")), qPrintable(dialog.preview_error()));
    QVERIFY(dialog.preview().isEmpty());
    dialog.findChild<QLineEdit*>(QStringLiteral("mpirun"))->setText(QStringLiteral("/bin/sh"));
    QCOMPARE(dialog.settings().mpirun, QStringLiteral("/bin/sh"));
    QVERIFY2(ok->isEnabled(), qPrintable(dialog.preview_error()));
    QVERIFY2(dialog.preview().contains(QDir(dir).filePath(QStringLiteral("design.meshloom.json"))),
             qPrintable(dialog.preview()));
    // Timing and rounds: calibrate's single-shot in one round unless changed, and the preview follows the choice.
    QVERIFY2(dialog.preview().contains(QLatin1String("--timing single_shot --rounds 1")), qPrintable(dialog.preview()));
    auto* timing = dialog.findChild<QComboBox*>(QStringLiteral("timing"));
    QVERIFY(timing != nullptr);
    timing->setCurrentIndex(timing->findData(QStringLiteral("pipelined")));
    auto* rounds = dialog.findChild<QSpinBox*>(QStringLiteral("rounds"));
    rounds->setValue(2);
    QCOMPARE(dialog.settings().bench.timing, QStringLiteral("pipelined"));
    QCOMPARE(dialog.settings().bench.rounds, 2);
    QVERIFY2(dialog.preview().contains(QLatin1String("--timing pipelined --rounds 2")), qPrintable(dialog.preview()));
    // Rounds never exceed the timed iterations (the launcher refuses more): the box follows them.
    QCOMPARE(rounds->maximum(), 10);
    rounds->setValue(50);
    QCOMPARE(dialog.settings().bench.rounds, 10);
    dialog.findChild<QSpinBox*>(QStringLiteral("iters"))->setValue(3);
    QCOMPARE(dialog.settings().bench.rounds, 3);

    // The run then uses that folder.
    DesignDocument doc;
    CostsPanel panel(&doc);
    RunSettings t;
    t.where = RunSettings::Where::Template;
    t.launcher = QStringLiteral("/nonexistent/meshloom-launch");
    t.command_template = QStringLiteral("{launcher} {args}");
    t.bench.world = 8;
    QSignalSpy finished(&panel, &CostsPanel::run_finished);
    QVERIFY2(panel.start_run(t, dir), qPrintable(panel.message()));
    QCOMPARE(panel.run_dir(), dir);
    QVERIFY(QFile::exists(CostsPanel::run_design_path(dir)));
    QVERIFY(finished.wait(10000));
  }

  // Measurements and calibrations belong to the design they were made for: records of another world are refused
  // when opened, a calibration that cannot price the design is shown but not applicable (the reason on the
  // button), and another design starts the dock empty. A run that fails to start leaves the chart as it was.
  void the_costs_dock_belongs_to_its_document() {
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/default.meshloom.json"), &error), qPrintable(error));
    QCOMPARE(doc.design().world, 8);
    CostsPanel panel(&doc);
    const QString records = QStringLiteral(MESHLOOM_CALIBRATION_DIR "/local-2x2.bench.jsonl");
    const QString refused = panel.open_measurements(records);
    QVERIFY2(refused.contains(QLatin1String("measured on 4 ranks, and this design's world is 8")), qPrintable(refused));
    QCOMPARE(panel.chart()->measurements().point_count(), std::size_t{0});

    QVERIFY(panel.load_calibration(QStringLiteral(MESHLOOM_CALIBRATION_DIR "/local-2x2.calibration.json")).isEmpty());
    QPushButton* apply = button(panel, QStringLiteral("Apply to planner"));
    QVERIFY(!apply->isEnabled());
    QVERIFY2(apply->toolTip().contains(QLatin1String("measured on a (2, 2) mesh")), qPrintable(apply->toolTip()));

    QVERIFY(doc.edit(QStringLiteral("2 x 2"), [](const Design& d) { return resized_to_2x2(d); }, &error));
    QVERIFY2(apply->isEnabled(), qPrintable(apply->toolTip()));
    QVERIFY2(panel.open_measurements(records).isEmpty(), qPrintable(panel.message()));
    const std::size_t points = panel.chart()->measurements().point_count();
    QVERIFY(points > 0);

    // A run whose launcher does not exist fails to start: what the chart showed stays.
    QTemporaryDir tmp;
    panel.set_runs_root(tmp.path());
    RunSettings s;
    s.where = RunSettings::Where::Template;
    s.launcher = QStringLiteral("/nonexistent/meshloom-launch");
    s.command_template = QStringLiteral("{launcher} {args}");
    s.bench.world = 4;
    QSignalSpy finished(&panel, &CostsPanel::run_finished);
    if (panel.start_run(s)) QVERIFY(finished.wait(10000));
    QCOMPARE(panel.chart()->measurements().point_count(), points);
    // ... and so do the files it was read from: Fit would fit those points.
    QCOMPARE(QFileInfo(records).canonicalFilePath(), QFileInfo(panel.records_path()).canonicalFilePath());

    // Another design: the dock forgets the last one's records and calibration.
    doc.new_design();
    QCOMPARE(panel.chart()->measurements().point_count(), std::size_t{0});
    QVERIFY(panel.calibration_path().isEmpty());
    QVERIFY(!panel.chart()->measurements().calibration().has_value());
    QVERIFY(!apply->isEnabled());
  }

  // The loop closed in the window: records opened in the Costs dock, fitted by the launcher, applied to the planner
  // (one undoable edit): the plan is now priced by the measurements, before against after.
  void a_fitted_calibration_applied_changes_the_plan() {
    QTemporaryDir tmp;
    MainWindow w(nullptr, tmp.filePath(QStringLiteral("autosave")));
    const Design d = meshloom::testing::two_by_two_design();
    const QString path = tmp.filePath(QStringLiteral("two.meshloom.json"));
    save_design(d, path.toStdString());
    QVERIFY(w.open_design(path));
    CostsPanel* costs = w.costs_panel();
    costs->set_runs_root(tmp.filePath(QStringLiteral("runs")));
    costs->set_launcher(kLauncher);
    QVERIFY(costs->open_measurements(kRecorded).isEmpty());
    const double before = w.redistribution_panel()->plan_model()->total();
    QCOMPARE(w.redistribution_panel()->cost_model(), RedistributionPanel::CostModelKind::Comm);

    QSignalSpy calibrated(costs, &CostsPanel::calibrated);
    QVERIFY2(costs->fit_calibration(), qPrintable(costs->message()));
    QVERIFY(calibrated.wait(30000));
    const QString fitted = calibrated.at(0).at(0).toString();
    QVERIFY2(!fitted.isEmpty(), qPrintable(costs->message()));
    for (auto* b : costs->findChildren<QPushButton*>()) {
      if (b->text() == QLatin1String("Apply to planner")) b->click();
    }
    QVERIFY(w.design().calibration.has_value());  // relative to the design's folder, which holds the runs here
    QCOMPARE(QFileInfo(QDir(tmp.path()).filePath(QString::fromStdString(*w.design().calibration))).canonicalFilePath(),
             QFileInfo(fitted).canonicalFilePath());
    QCOMPARE(w.redistribution_panel()->cost_model(), RedistributionPanel::CostModelKind::Calibrated);
    const double after = w.redistribution_panel()->plan_model()->total();
    // The calibrated total is the engine's calibrated price of the plan, from the fitted file.
    const CalibratedCostModel model(load_calibration(fitted.toStdString()), d.mesh.names);
    const auto request = w.redistribution_panel()->request(PlannerKind::Graph);
    QVERIFY(request.has_value());
    const Plan expected = plan_redistribution(*request, model);
    QCOMPARE(after, expected.cost);
    QVERIFY(after != before);
    const QString compared = w.redistribution_panel()->message(QStringLiteral("recalibration"));
    QVERIFY2(compared.startsWith(QLatin1String("Before calibration (comm model): ")), qPrintable(compared));
    QVERIFY(w.animation()->has_plan());  // the animation follows the recalibrated plan
    QCOMPARE(static_cast<std::size_t>(w.animation()->step_count()), expected.steps.size());
    w.document()->undo_stack()->undo();
    QCOMPARE(w.design().calibration, std::nullopt);
  }

  // The newcomer's path, for real: the Costs panel runs the design on local ranks (mpirun, as Run benchmark... does),
  // the chart fills, Fit calibration fits the records, and the engine loads the calibration for the design's mesh.
  void a_real_run_on_local_ranks() {
    if (qEnvironmentVariableIsEmpty("MESHLOOM_MPIRUN")) QSKIP("the mpi-labelled test (live_run_mpi) runs this one");
    QTemporaryDir tmp;
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(QStringLiteral(MESHLOOM_EXAMPLES_DIR "/default.meshloom.json"), &error), qPrintable(error));
    CostsPanel panel(&doc);
    panel.set_runs_root(tmp.path());
    RunSettings s;
    s.where = RunSettings::Where::Local;
    s.mpirun = qEnvironmentVariable("MESHLOOM_MPIRUN");
    s.launcher = kLauncher;
    s.bench.world = static_cast<int>(doc.design().world);
    s.bench.min_bytes = QStringLiteral("8");  // all_gather's smallest sizes leave a rank nothing: not rows
    // Up to 256 KiB: below about 16 KiB every size costs the latency alone, and on a loaded machine a fit of those
    // points alone can find no bandwidth (the axis is then left out of the calibration).
    s.bench.max_bytes = QStringLiteral("256K");
    s.bench.warmup_iters = 1;
    s.bench.iters = 3;
    s.bench.collectives = {QStringLiteral("all_reduce"), QStringLiteral("all_gather")};
    QSignalSpy finished(&panel, &CostsPanel::run_finished);
    QVERIFY2(panel.start_run(s), qPrintable(panel.message()));
    QVERIFY(finished.wait(240000));
    const auto o = finished.takeFirst().at(0).value<RunOutcome>();
    QVERIFY2(o.status == RunOutcome::Status::Succeeded, qPrintable(o.message + QStringLiteral("\n") + panel.log_text()));
    QVERIFY(o.expected > 0);
    QCOMPARE(o.results, o.expected);
    QVERIFY(o.summary_ok);
    QCOMPARE(panel.chart()->measurements().point_count(), static_cast<std::size_t>(o.results));
    QCOMPARE(lines_of(QDir(panel.run_dir()).filePath(QStringLiteral("bench.jsonl"))).size(), o.results + 2);

    QSignalSpy calibrated(&panel, &CostsPanel::calibrated);
    QVERIFY2(panel.fit_calibration(), qPrintable(panel.message()));
    QVERIFY(calibrated.wait(60000));
    const QString path = calibrated.at(0).at(0).toString();
    QVERIFY2(!path.isEmpty(), qPrintable(panel.message()));
    const Calibration c = load_calibration(path.toStdString());
    QCOMPARE(c.mesh_shape, doc.design().mesh.shape);
    QVERIFY(c.axes.count("dp") == 1 && c.axes.count("tp") == 1);
  }
};

QTEST_MAIN(LiveRunTest)
#include "test_live_run.moc"
