// The app's Slurm mode against a real Slurm (label slurm): the private single-node cluster of tests/slurm
// (slurm_cluster.sh, the CTest fixture `slurm`), whose environment file MESHLOOM_SLURM_ENV names; without it the test
// fails, it never skips. The newcomer's path in the main window: the Run dialog in Slurm mode shows the exact script,
// the job waits behind another (PENDING with Slurm's reason), runs (RUNNING on the node), completes, its records
// in the chart and, whole and in order, in the run's bench.jsonl (the same lines as the job's own job.jsonl, the
// config naming the job). A long job cancelled while its records arrive ends CANCELLED with every record so far
// kept whole; a partition that does not exist shows sbatch's own words; a job whose launcher rejects its arguments
// ends FAILED with exit code 2 and the end of its output; and the same through ssh (a stand-in that runs the
// words with a shell, as a login node's sshd does) to the real Slurm. With MESHLOOM_SLURM_SCREENSHOTS=DIR it also
// writes the docs' screenshots there (app-slurm.png, app-slurm-dialog.png).
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QRadioButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "costs/cost_chart.hpp"
#include "costs/costs_panel.hpp"
#include "document/design_document.hpp"
#include "live/run_dialog.hpp"
#include "live/slurm_run.hpp"
#include "meshloom/design/design.hpp"
#include "shell/main_window.hpp"
#include "live_support.hpp"

using namespace meshloom;
using namespace meshloom::app;

Q_DECLARE_METATYPE(meshloom::app::RunOutcome)
Q_DECLARE_METATYPE(meshloom::app::SlurmJobState)

namespace {

const QString kLauncher = QStringLiteral(MESHLOOM_LAUNCHER_PATH);
const QString kFakeSsh = QStringLiteral(MESHLOOM_FAKE_SLURM_DIR "/ssh");

using meshloom::app::testing::lines_of;

// The lines of a file that end in a newline (a record still being written is not one yet).
QStringList whole_lines_of(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  QByteArray text = f.readAll();
  const qsizetype last = text.lastIndexOf('\n');
  text.truncate(last + 1);
  QStringList lines = QString::fromUtf8(text).split(QLatin1Char('\n'));
  while (!lines.isEmpty() && lines.back().isEmpty()) lines.pop_back();
  return lines;
}

// Empty when every line is one JSON object, else the first that is not.
QString not_json_objects(const QStringList& lines) {
  for (qsizetype i = 0; i < lines.size(); ++i) {
    QJsonParseError e{};
    const QJsonDocument d = QJsonDocument::fromJson(lines.at(i).toUtf8(), &e);
    if (e.error != QJsonParseError::NoError || !d.isObject()) return QStringLiteral("line %1: %2").arg(i + 1).arg(lines.at(i));
  }
  return {};
}

QString run_tool(const QString& program, const QStringList& args) {
  QProcess p;
  p.start(program, args);
  if (!p.waitForFinished(30000)) return QStringLiteral("(%1 did not answer)").arg(program);
  return QString::fromLocal8Bit(p.readAllStandardOutput() + p.readAllStandardError());
}

// Waits (at most `seconds`) for the panel's run to end. A job still there is cancelled, and the outcome then says
// what Slurm and the log said.
RunOutcome wait_for_end(CostsPanel& panel, QSignalSpy& finished, int seconds) {
  if (finished.isEmpty() && !finished.wait(seconds * 1000)) {
    const QString id = panel.slurm_run()->job_id();
    QString what = QStringLiteral("no end within %1 s (job '%2'). ").arg(seconds).arg(id);
    if (!id.isEmpty()) {
      what += run_tool(QStringLiteral("scontrol"), {QStringLiteral("show"), QStringLiteral("job"), id});
      run_tool(QStringLiteral("scancel"), {id});
    }
    return RunOutcome{RunOutcome::Status::Failed, -1, 0, 0, false, {}, what + QStringLiteral("\nlog:\n") + panel.log_text()};
  }
  return finished.takeFirst().at(0).value<RunOutcome>();
}

}  // namespace

class SlurmRunTest : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  QString design_path_;
  QString partition_;
  QString screenshots_;

  // A small bench of the 2-rank design as a Slurm job on the test cluster.
  RunSettings settings(const QString& max_bytes, int iters) const {
    RunSettings s;
    s.where = RunSettings::Where::Slurm;
    s.launcher = kLauncher;
    s.slurm.partition = partition_;
    s.slurm.nodes = 1;
    s.slurm.tasks_per_node = 2;
    s.slurm.time_limit = QStringLiteral("00:05:00");
    s.bench.world = 2;
    s.bench.min_bytes = QStringLiteral("1K");
    s.bench.max_bytes = max_bytes;
    s.bench.step_factor = 4;
    s.bench.warmup_iters = 1;
    s.bench.iters = iters;
    s.bench.check = true;
    return s;
  }

private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("MeshloomTest"));
    QCoreApplication::setApplicationName(QStringLiteral("SlurmRunTest"));
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, tmp_.filePath(QStringLiteral("settings")));
    qRegisterMetaType<RunOutcome>();
    qRegisterMetaType<SlurmJobState>();
    const QString env = qEnvironmentVariable("MESHLOOM_SLURM_ENV");
    QVERIFY2(!env.isEmpty(), "MESHLOOM_SLURM_ENV names no cluster: run this test with ctest -L slurm, whose fixture "
                             "slurm_cluster_start starts one");
    QVERIFY2(QFile::exists(env), qPrintable(env + QStringLiteral(" is missing: the cluster is not running (the "
                                                                 "fixture test slurm_cluster_start failed or did not run)")));
    // The cluster's SLURM_CONF, PATH and TMPDIR, as `source slurm.env` would set them.
    static const QRegularExpression assignment(QStringLiteral("^export ([A-Za-z_][A-Za-z0-9_]*)=(.*)$"));
    for (const QString& line : lines_of(env)) {
      const auto m = assignment.match(line);
      if (!m.hasMatch()) continue;
      QString value = m.captured(2);
      value.replace(QStringLiteral("$PATH"), qEnvironmentVariable("PATH"));
      qputenv(m.captured(1).toUtf8().constData(), value.toUtf8());
    }
    QVERIFY2(!qEnvironmentVariableIsEmpty("SLURM_CONF"), qPrintable(env + QStringLiteral(" sets no SLURM_CONF")));
    partition_ = qEnvironmentVariable("MESHLOOM_SLURM_PARTITION", QStringLiteral("debug"));
    QVERIFY2(!QStandardPaths::findExecutable(QStringLiteral("sbatch")).isEmpty(), "sbatch is not on PATH");
    QVERIFY(QFile::exists(kLauncher));
    screenshots_ = qEnvironmentVariable("MESHLOOM_SLURM_SCREENSHOTS");

    // The design: 2 ranks on one host, one axis.
    Design d;
    d.name = "slurm_pair";
    d.description = "Two ranks, measured as a Slurm job";
    d.world = 2;
    d.devices_per_host = 2;
    d.mesh.shape = {2};
    d.mesh.names = {"tp"};
    design_path_ = tmp_.filePath(QStringLiteral("pair.meshloom.json"));
    save_design(d, design_path_.toStdString());
  }

  // The newcomer's path: Run benchmark... in Slurm mode, submitted, pending behind another job, running, completed,
  // the chart filled in.
  void a_job_goes_from_pending_to_running_to_completed() {
    MainWindow w(nullptr, tmp_.filePath(QStringLiteral("autosave")));
    w.resize(1600, 1100);
    w.show();
    QVERIFY(w.open_design(design_path_));
    CostsPanel* panel = w.costs_panel();
    panel->set_runs_root(tmp_.filePath(QStringLiteral("runs")));
    panel->slurm_run()->set_poll_interval(250);

    // The dialog: Slurm mode, the cluster's partition; it shows the exact script it will submit.
    RunSettings base = settings(QStringLiteral("1M"), 10);
    base.bench.step_factor = 2;
    base.bench.warmup_iters = 3;
    base.where = RunSettings::Where::Local;
    base.slurm.partition.clear();
    const QString dir = panel->new_run_dir();
    RunDialog dialog(base, CostsPanel::run_design_path(dir), &w);
    dialog.findChild<QRadioButton*>(QStringLiteral("slurm_mode"))->click();
    dialog.findChild<QLineEdit*>(QStringLiteral("slurm_partition"))->setText(partition_);
    dialog.findChild<QLineEdit*>(QStringLiteral("slurm_time"))->setText(QStringLiteral("00:05:00"));
    QPushButton* submit = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
    QCOMPARE(submit->text(), QStringLiteral("Submit"));
    QVERIFY2(submit->isEnabled(), qPrintable(dialog.preview_error()));
    const QString script = dialog.script_preview();
    QVERIFY2(script.contains(QStringLiteral("#SBATCH --partition=%1\n").arg(partition_)), qPrintable(script));
    QVERIFY2(script.contains(QLatin1String("srun --mpi=pmix")), qPrintable(script));
    QCOMPARE(dialog.preview(), QStringLiteral("sbatch --parsable < ") + QDir(dir).filePath(QStringLiteral("job.sbatch")));
    if (!screenshots_.isEmpty()) {
      dialog.show();
      QTest::qWait(200);
      QVERIFY(dialog.grab().save(QDir(screenshots_).filePath(QStringLiteral("app-slurm-dialog.png"))));
      dialog.hide();
    }
    const RunSettings chosen = dialog.settings();
    chosen.save();
    QCOMPARE(int(RunSettings::load(2).where), int(RunSettings::Where::Slurm));  // remembered

    // Another job holds the node for a few seconds: this one waits, and Slurm says why.
    const QString blocker = run_tool(QStringLiteral("sbatch"),
                                     {QStringLiteral("--parsable"), QStringLiteral("--exclusive"),
                                      QStringLiteral("--job-name=blocker"), QStringLiteral("--time=1"),
                                      QStringLiteral("--output=/dev/null"), QStringLiteral("--wrap"),
                                      QStringLiteral("sleep 4")})
                                .trimmed();
    QVERIFY2(QRegularExpression(QStringLiteral("^\\d+$")).match(blocker).hasMatch(), qPrintable(blocker));

    QSignalSpy finished(panel, &CostsPanel::run_finished);
    QList<SlurmJobState> states;
    QStringList messages;
    QObject::connect(panel->slurm_run(), &SlurmRun::state_changed, panel, [&](const SlurmJobState& s) {
      states << s;
      messages << panel->message();  // the panel has shown it already
    });
    QVERIFY2(panel->start_run(chosen, dir), qPrintable(panel->message()));
    QVERIFY(panel->running());
    QVERIFY(!panel->start_run(chosen, panel->new_run_dir()));  // one run at a time
    const RunOutcome o = wait_for_end(*panel, finished, 120);
    const QString id = panel->slurm_run()->job_id();
    QVERIFY2(o.status == RunOutcome::Status::Succeeded, qPrintable(o.message + QStringLiteral("\n") + panel->log_text()));

    // The states, as Slurm reported them: pending with its reason, running on the node, completed.
    QStringList seen;
    for (const auto& s : states) seen << describe_job(id, s);
    QVERIFY2(states.size() >= 3, qPrintable(seen.join(QStringLiteral(" -> "))));
    QCOMPARE(states.first().state, QStringLiteral("PENDING"));
    QVERIFY2(!states.first().reason.isEmpty(), qPrintable(seen.join(QStringLiteral(" -> "))));
    qsizetype running = -1;
    for (qsizetype i = 0; i < states.size(); ++i) {
      if (states.at(i).state == QLatin1String("RUNNING") && running < 0) running = i;
    }
    QVERIFY2(running > 0, qPrintable(seen.join(QStringLiteral(" -> "))));
    QVERIFY(!states.at(running).nodes.isEmpty());
    QCOMPARE(states.last().state, QStringLiteral("COMPLETED"));
    QCOMPARE(states.last().exit_code, QStringLiteral("0:0"));
    QVERIFY2(messages.first().startsWith(QStringLiteral("Job %1: PENDING (").arg(id)), qPrintable(messages.first()));
    QCOMPARE(messages.at(running), QStringLiteral("Job %1: RUNNING on %2").arg(id, states.at(running).nodes));
    QVERIFY2(panel->message().startsWith(QStringLiteral("Job %1: COMPLETED. Done: %2 results").arg(id).arg(o.results)),
             qPrintable(panel->message()));

    // The records: in the chart, and whole in the run's bench.jsonl, line for line the job's own file.
    QVERIFY(o.expected > 0);
    QCOMPARE(o.results, o.expected);
    QVERIFY(o.summary_ok);
    QVERIFY(o.problems.isEmpty());
    QCOMPARE(panel->chart()->measurements().point_count(), static_cast<std::size_t>(o.results));
    const QStringList records = lines_of(QDir(dir).filePath(QStringLiteral("bench.jsonl")));
    QCOMPARE(records.size(), o.results + 2);  // the config, the results, the summary
    QCOMPARE(not_json_objects(records), QString());
    QCOMPARE(records, lines_of(QDir(dir).filePath(QStringLiteral("job.jsonl"))));
    const QJsonObject config = QJsonDocument::fromJson(records.first().toUtf8()).object();
    QCOMPARE(config.value(QLatin1String("slurm")).toObject().value(QLatin1String("job_id")).toString(), id);
    QCOMPARE(lines_of(QDir(dir).filePath(QStringLiteral("job.sbatch"))).join(QLatin1Char('\n')) + QLatin1Char('\n'), script);
    QVERIFY2(panel->log_text().contains(QStringLiteral("Submitted batch job %1").arg(id)), qPrintable(panel->log_text()));
    QCOMPARE(panel->records_path(), QDir(dir).filePath(QStringLiteral("bench.jsonl")));  // Fit calibration fits these

    if (!screenshots_.isEmpty()) {
      w.show_costs();
      auto* dock = w.findChild<QDockWidget*>(QStringLiteral("costs_dock"));
      QVERIFY(dock);
      w.resizeDocks({dock}, {780}, Qt::Vertical);  // the Costs dock large: chart, message line and log
      QTest::qWait(300);
      QVERIFY(w.grab().save(QDir(screenshots_).filePath(QStringLiteral("app-slurm.png"))));
    }
  }

  // A long job cancelled once it runs and its records arrive: scancel, CANCELLED, and every record so far kept
  // whole, in the chart and in bench.jsonl.
  void a_long_job_is_cancelled_and_its_records_stay() {
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(design_path_, &error), qPrintable(error));
    CostsPanel panel(&doc);
    panel.set_runs_root(tmp_.filePath(QStringLiteral("runs")));
    panel.slurm_run()->set_poll_interval(250);
    RunSettings s = settings(QStringLiteral("64M"), 200);  // minutes of work on two cores
    s.bench.step_factor = 2;
    s.bench.warmup_iters = 5;
    QSignalSpy finished(&panel, &CostsPanel::run_finished);
    QVERIFY2(panel.start_run(s), qPrintable(panel.message()));
    const auto running_with_records = [&] {
      return panel.slurm_run()->state().state == QLatin1String("RUNNING") && panel.slurm_run()->results() >= 3;
    };
    QTRY_VERIFY2_WITH_TIMEOUT(running_with_records() || !finished.isEmpty(),
                              qPrintable(panel.message() + QStringLiteral("\n") + panel.log_text()), 90000);
    if (!running_with_records()) {
      const RunOutcome early = finished.takeFirst().at(0).value<RunOutcome>();
      QFAIL(qPrintable(QStringLiteral("the long job ended before it could be cancelled: ") + early.message));
    }
    const QString id = panel.slurm_run()->job_id();
    const int before = panel.slurm_run()->results();
    panel.cancel_run();
    QCOMPARE(panel.message(), QStringLiteral("Job %1: cancelling (scancel)...").arg(id));
    const RunOutcome o = wait_for_end(panel, finished, 60);
    QVERIFY2(o.status == RunOutcome::Status::Cancelled, qPrintable(o.message + QStringLiteral("\n") + panel.log_text()));
    QCOMPARE(panel.slurm_run()->state().state, QStringLiteral("CANCELLED"));
    QVERIFY2(panel.message().startsWith(QStringLiteral("Job %1: CANCELLED. Cancelled after %2 results").arg(id).arg(o.results)),
             qPrintable(panel.message()));
    QVERIFY(o.results >= before);
    QVERIFY(o.results < o.expected);
    QVERIFY2(o.problems.isEmpty(), qPrintable(o.problems.join(QLatin1Char('\n'))));
    QVERIFY2(panel.log_text().contains(QStringLiteral("scancel %1").arg(id)), qPrintable(panel.log_text()));
    // Every record so far, whole: the config and the results, as the job wrote them.
    const QStringList records = lines_of(QDir(panel.run_dir()).filePath(QStringLiteral("bench.jsonl")));
    QCOMPARE(records.size(), o.results + 1);
    QCOMPARE(not_json_objects(records), QString());
    const QStringList job = whole_lines_of(QDir(panel.run_dir()).filePath(QStringLiteral("job.jsonl")));
    QCOMPARE(records, job);
    QCOMPARE(panel.chart()->measurements().point_count(), static_cast<std::size_t>(o.results));
    QVERIFY(!panel.running());
  }

  // sbatch refuses a partition that does not exist: its own words under the chart; nothing was measured.
  void an_unknown_partition_shows_sbatchs_words() {
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(design_path_, &error), qPrintable(error));
    CostsPanel panel(&doc);
    panel.set_runs_root(tmp_.filePath(QStringLiteral("runs")));
    RunSettings s = settings(QStringLiteral("4K"), 2);
    s.slurm.partition = QStringLiteral("meshloom-no-such-partition");
    QSignalSpy finished(&panel, &CostsPanel::run_finished);
    QVERIFY2(panel.start_run(s), qPrintable(panel.message()));
    const RunOutcome o = wait_for_end(panel, finished, 30);
    QCOMPARE(int(o.status), int(RunOutcome::Status::FailedToStart));
    QVERIFY2(o.message.contains(QLatin1String("sbatch: error: Batch job submission failed: Invalid partition name specified")),
             qPrintable(o.message));
    QVERIFY2(panel.message().contains(QLatin1String("sbatch: error: Batch job submission failed: Invalid partition name "
                                                    "specified")),
             qPrintable(panel.message()));
    QVERIFY(panel.slurm_run()->job_id().isEmpty());
    QCOMPARE(panel.chart()->measurements().point_count(), std::size_t{0});
  }

  // The launcher rejects an argument on every rank: FAILED with exit code 2, the launcher's error record and the end
  // of the job's output in the message.
  void a_failing_job_shows_its_output() {
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(design_path_, &error), qPrintable(error));
    CostsPanel panel(&doc);
    panel.set_runs_root(tmp_.filePath(QStringLiteral("runs")));
    panel.slurm_run()->set_poll_interval(250);
    RunSettings s = settings(QStringLiteral("4K"), 2);
    s.bench.collectives = {QStringLiteral("all_reduce"), QStringLiteral("frob")};
    QSignalSpy finished(&panel, &CostsPanel::run_finished);
    QVERIFY2(panel.start_run(s), qPrintable(panel.message()));
    const RunOutcome o = wait_for_end(panel, finished, 90);
    const QString id = panel.slurm_run()->job_id();
    QVERIFY2(o.status == RunOutcome::Status::Failed, qPrintable(o.message));
    QCOMPARE(o.exit_code, 2);
    QVERIFY2(o.message.startsWith(QStringLiteral("Job %1 FAILED (exit code 2)").arg(id)), qPrintable(o.message));
    QVERIFY2(o.message.contains(QStringLiteral("Its output (%1) ends:\n").arg(QDir(panel.run_dir()).filePath(QStringLiteral("job.out")))),
             qPrintable(o.message));
    QVERIFY2(o.message.contains(QLatin1String("frob")), qPrintable(o.message));
    QVERIFY2(panel.message().startsWith(QStringLiteral("Job %1 FAILED (exit code 2)").arg(id)), qPrintable(panel.message()));
  }

  // Over ssh to a login node: a stand-in ssh that runs the words with a shell here, so every command (sbatch with
  // the script on standard input, squeue's format, scontrol, tail of the records) meets the real Slurm through the
  // quoting a login node's shell would see. The run's folder has a blank and a quote in its name.
  void over_ssh_a_job_completes() {
    QTemporaryDir bin;
    QVERIFY(QFile::copy(kFakeSsh, bin.filePath(QStringLiteral("ssh"))));
    QVERIFY(QFile::setPermissions(bin.filePath(QStringLiteral("ssh")), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
    const QByteArray path = qgetenv("PATH");
    qputenv("PATH", (bin.path() + QLatin1Char(':')).toUtf8() + path);
    DesignDocument doc;
    QString error;
    QVERIFY2(doc.open(design_path_, &error), qPrintable(error));
    CostsPanel panel(&doc);
    panel.slurm_run()->set_poll_interval(250);
    RunSettings s = settings(QStringLiteral("16K"), 3);
    s.slurm.login_host = QStringLiteral("me@login-node");
    QSignalSpy finished(&panel, &CostsPanel::run_finished);
    const QString dir = tmp_.filePath(QStringLiteral("it's a run"));
    const bool started = panel.start_run(s, dir);
    const RunOutcome o = started ? wait_for_end(panel, finished, 90) : RunOutcome{};
    qputenv("PATH", path);
    QVERIFY2(started, qPrintable(panel.message()));
    QVERIFY2(o.status == RunOutcome::Status::Succeeded, qPrintable(o.message + QStringLiteral("\n") + panel.log_text()));
    QCOMPARE(o.results, o.expected);
    QCOMPARE(panel.slurm_run()->state().state, QStringLiteral("COMPLETED"));
    const QStringList records = lines_of(QDir(dir).filePath(QStringLiteral("bench.jsonl")));
    QCOMPARE(records.size(), o.results + 2);
    QCOMPARE(records, lines_of(QDir(dir).filePath(QStringLiteral("job.jsonl"))));
    const QStringList ssh = lines_of(bin.filePath(QStringLiteral("ssh.log")));
    QVERIFY2(!ssh.isEmpty() && ssh.first().startsWith(QLatin1String("me@login-node: sbatch --parsable")),
             qPrintable(ssh.join(QLatin1Char('\n'))));
    QVERIFY2(ssh.join(QLatin1Char('\n')).contains(QLatin1String("tail -c +")), qPrintable(ssh.join(QLatin1Char('\n'))));
  }
};

QTEST_MAIN(SlurmRunTest)
#include "test_slurm_run.moc"
