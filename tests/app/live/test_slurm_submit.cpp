// Slurm from the app, without a Slurm: the pure part (live/slurm_submit.hpp) against texts captured from Slurm
// 22.05 (sbatch --parsable, squeue, scontrol show job), the batch script (exact, valid bash, every value quoted, the
// settings' errors naming the bad value), the commands as argument lists here and over ssh, the outcome of every end
// state; RunSettings remembered in QSettings; the Run dialog's Slurm mode (fields, the exact script, refusals). Then
// SlurmRun against stand-ins for sbatch, squeue, scontrol, scancel and ssh (shell scripts first on PATH, driven by
// files the test writes): pending, running with records arriving, a time-out with the end of the job's output, a
// failure, a cancel, sbatch's refusal word for word, a missing sbatch, and the ssh path reading records with tail.
// The same against a real Slurm: test_slurm_run.cpp (label slurm).
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QRadioButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "costs/costs_panel.hpp"
#include "live/run_dialog.hpp"
#include "live/slurm_run.hpp"
#include "live/slurm_submit.hpp"
#include "live_support.hpp"

using namespace meshloom::app;

Q_DECLARE_METATYPE(meshloom::app::RunOutcome)
Q_DECLARE_METATYPE(meshloom::app::SlurmJobState)

namespace {

const QString kRecorded = QStringLiteral(MESHLOOM_TEST_DATA_DIR "/bench-2x2.jsonl");

// Captured from the test cluster (tests/slurm/slurm_cluster.sh), Slurm 22.05.
const char* const kScontrolPending =
    "JobId=54185571 JobName=x UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901758 Nice=0 "
    "Account=(null) QOS=(null) JobState=PENDING Reason=Priority Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 "
    "Reboot=0 ExitCode=0:0 RunTime=00:00:00 TimeLimit=00:01:00 TimeMin=N/A SubmitTime=2026-11-26T15:57:40 "
    "EligibleTime=2026-11-26T15:57:40 AccrueTime=Unknown StartTime=Unknown EndTime=Unknown Deadline=N/A "
    "SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-11-26T15:57:40 Scheduler=Main Partition=debug "
    "AllocNode:Sid=localhost:12647 ReqNodeList=(null) ExcNodeList=(null) NodeList= NumNodes=1 NumCPUs=2 NumTasks=2 "
    "CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=2,mem=1M,node=1,billing=2 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* "
    "CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK "
    "Contiguous=0 Licenses=(null) Network=(null) Command=(null) WorkDir=/tmp/meshloom-slurm.96fAT4/tmp "
    "StdErr=/tmp/slurmapp-x-54185571.out StdIn=/dev/null StdOut=/tmp/slurmapp-x-54185571.out Power= \n";
const char* const kScontrolCompleted =
    "JobId=54185570 JobName=x UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901759 Nice=0 "
    "Account=(null) QOS=(null) JobState=COMPLETED Reason=None Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 "
    "Reboot=0 ExitCode=0:0 RunTime=00:00:05 TimeLimit=00:01:00 TimeMin=N/A SubmitTime=2026-11-26T15:57:40 "
    "Partition=debug AllocNode:Sid=localhost:12647 ReqNodeList=(null) ExcNodeList=(null) NodeList=vm BatchHost=vm "
    "NumNodes=1 NumCPUs=2 NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=2,node=1,billing=2 "
    "WorkDir=/tmp/slurmapp a#b StdOut=/tmp/slurmapp a#b/x.out Power= \n";
// scontrol without --oneliner: the pairs over several indented lines.
const char* const kScontrolFailedMultiline =
    "JobId=54185590 JobName=meshloom-bench\n"
    "   UserId=root(0) GroupId=root(0) MCS_label=N/A\n"
    "   JobState=FAILED Reason=NonZeroExitCode Dependency=(null)\n"
    "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=2:0\n"
    "   NodeList=vm\n"
    "   WorkDir=/tmp/a run\n";

using meshloom::app::testing::lines_of;

bool write_file(const QString& path, const QByteArray& text, QIODevice::OpenMode mode = QIODevice::WriteOnly) {
  QFile f(path);
  if (!f.open(mode)) return false;
  return f.write(text) == text.size();
}

// Stand-ins for Slurm's commands and ssh (tests/app/live/fake_slurm), copied into `dir`, which goes first on PATH.
// Each reads the files the test writes beside it: sbatch.err (refuse with it), squeue.out (its output), scontrol.out (its
// output; none: "Invalid job id"), scancel.err; and records what it was given: submitted.sbatch, sbatch.args,
// squeue.args, scontrol.args, scancel.log, ssh.log.
void install_fake_slurm(const QString& dir) {
  for (const char* name : {"sbatch", "squeue", "scontrol", "scancel", "ssh"}) {
    const QString to = QDir(dir).filePath(QString::fromLatin1(name));
    QVERIFY(QFile::copy(QStringLiteral(MESHLOOM_FAKE_SLURM_DIR "/") + QString::fromLatin1(name), to));
    QVERIFY(QFile::setPermissions(to, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
  }
}

RunOutcome outcome_of(QSignalSpy& finished, int timeout_ms = 20000) {
  if (finished.isEmpty() && !finished.wait(timeout_ms)) {
    return RunOutcome{RunOutcome::Status::Failed, -1, 0, 0, false, {}, QStringLiteral("no finished() in time")};
  }
  return finished.takeFirst().at(0).value<RunOutcome>();
}

}  // namespace

class SlurmSubmitTest : public QObject {
  Q_OBJECT

  QTemporaryDir settings_dir_;
  QByteArray path_;

private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("MeshloomTest"));
    QCoreApplication::setApplicationName(QStringLiteral("SlurmSubmitTest"));
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settings_dir_.path());
    QSettings().clear();
    qRegisterMetaType<RunOutcome>();
    qRegisterMetaType<SlurmJobState>();
    path_ = qgetenv("PATH");
  }

  void cleanup() { qputenv("PATH", path_); }

  void options_split_like_a_shell() {
    QString error;
    const auto words = split_shell_words(
        QStringLiteral("--account=proj  --comment=\"a \\\"b\\\" \\$c\" --x='it''s #1' -J\\ name --exclude=node[1-3] a#b"),
        &error);
    QVERIFY2(words, qPrintable(error));
    QCOMPARE(*words, (QStringList{"--account=proj", "--comment=a \"b\" $c", "--x=its #1", "-J name",
                                  "--exclude=node[1-3]", "a#b"}));
    QCOMPARE(*split_shell_words(QString(), &error), QStringList{});
    QCOMPARE(*split_shell_words(QStringLiteral("  \t "), &error), QStringList{});
    QCOMPARE(*split_shell_words(QStringLiteral("''"), &error), QStringList{QString()});
    const struct {
      const char* text;
      const char* names;
    } refused[] = {
        {"--comment='open", "Unmatched '"},
        {"--comment=\"open", "Unmatched \""},
        {"--x=a\\", "backslash"},
        {"--comment=$HOME", "\"$\""},
        {"--comment=\"$HOME\"", "\"$\""},
        {"--comment=`date`", "\"`\""},
        {"--a; rm -rf x", "\";\""},
        {"--a | b", "\"|\""},
        {"--a && b", "\"&\""},
        {"--a > f", "\">\""},
        {"--a (b)", "\"(\""},
        {"--a #comment", "\"#\""},
    };
    for (const auto& r : refused) {
      error.clear();
      QVERIFY2(!split_shell_words(QString::fromLatin1(r.text), &error), r.text);
      QVERIFY2(error.contains(QString::fromLatin1(r.names)), qPrintable(QStringLiteral("%1 -> %2").arg(r.text, error)));
    }
  }

  void extra_options_are_checked() {
    SlurmSettings s;
    QString error;
    s.extra_options = QStringLiteral("--account=proj --mail-type END --qos=debug -C gpu80g --exclusive");
    QCOMPARE(*sbatch_extra_options(s, &error),
             (QStringList{"--account=proj", "--mail-type", "END", "--qos=debug", "-C", "gpu80g", "--exclusive"}));
    const struct {
      const char* text;
      const char* names;
    } refused[] = {
        {"account=proj", "\"account=proj\" is not an option"},
        {"--output=x.out", "--output is not taken here: the app names the job's output"},
        {"-o x.out", "-o is not taken here"},
        {"--error=e", "--error"},
        {"--parsable", "--parsable already"},
        {"--wait", "would not return"},
        {"-W", "would not return"},
        {"--wrap='hostname'", "--wrap"},
        {"--test-only", "--test-only"},
        {"--partition=gpu", "field of its own: Partition"},
        {"-pgpu", "Partition"},
        {"--nodes=2", "Nodes"},
        {"-N 2", "Nodes"},
        {"--ntasks-per-node=4", "Tasks per node"},
        {"--ntasks=8", "nodes x tasks per node"},
        {"-n8", "nodes x tasks per node"},
        {"--time=10", "Time limit"},
        {"-t 10", "Time limit"},
        {"--gpus-per-task=2", "GPUs per task"},
        {"--chdir=/x", "run's folder"},
        {"--comment=$USER", "\"$\""},
        // Abbreviations, which sbatch's getopt_long takes for the whole name, and job arrays.
        {"--outp=/x", "--outp is not taken here: the app names the job's output"},
        {"--ntasks-per-n=4", "Tasks per node"},
        {"--parti=gpu", "Partition"},
        {"--array=0-3", "one records file"},
        {"-a 0-3", "one records file"},
        // Another cluster's job, which squeue and scontrol here do not know; a requeue, which restarts the records.
        {"--clusters=other", "Submit on"},
        {"-M other", "Submit on"},
        {"--requeue", "--no-requeue"},
        // A line break inside quotes would end the #SBATCH line, and bash would run the rest.
        {"--comment='a\nrm -rf ~'", "\"--comment=a\\nrm -rf ~\" holds a line break"},
    };
    for (const auto& r : refused) {
      error.clear();
      s.extra_options = QString::fromLatin1(r.text);
      QVERIFY2(!sbatch_extra_options(s, &error), r.text);
      QVERIFY2(error.startsWith(QLatin1String("Extra sbatch options: ")), qPrintable(error));
      QVERIFY2(error.contains(QString::fromLatin1(r.names)), qPrintable(QStringLiteral("%1 -> %2").arg(r.text, error)));
    }
    // Options that only start like a refused one are someone else's.
    s.extra_options = QStringLiteral("--nodelist=vm --gpus=2 --time-min=5 --output-foo --no-requeue");
    QVERIFY2(sbatch_extra_options(s, &error), qPrintable(error));
  }

  void settings_errors_name_the_bad_value() {
    SlurmSettings s;
    s.tasks_per_node = 8;
    QCOMPARE(slurm_settings_error(s, 8), std::nullopt);
    const auto refused = [&](SlurmSettings bad, int world, const char* names) {
      const std::optional<QString> why = slurm_settings_error(bad, world);
      QVERIFY2(why, names);
      QVERIFY2(why->contains(QString::fromUtf8(names)), qPrintable(*why));
    };
    SlurmSettings b = s;
    b.nodes = 0;
    refused(b, 8, "Nodes must be at least 1 (it is 0)");
    b = s;
    b.tasks_per_node = 0;
    refused(b, 8, "Tasks per node must be at least 1 (it is 0)");
    b = s;
    b.gpus_per_task = -1;
    refused(b, 8, "GPUs per task cannot be negative");
    b = s;
    b.nodes = 2;
    refused(b, 8, "2 node(s) x 8 task(s) per node make 16 ranks, and the design's world is 8");
    b = s;
    b.partition = QStringLiteral("my partition");
    refused(b, 8, "Partition \"my partition\"");
    b.partition = QStringLiteral("gpu,cpu");
    QCOMPARE(slurm_settings_error(b, 8), std::nullopt);
    b = s;
    b.time_limit = QStringLiteral("half an hour");
    refused(b, 8, "Time limit \"half an hour\"");
    for (const char* ok : {"30", "30:00", "00:30:00", "1-0", "1-12:00", "2-00:00:00", "UNLIMITED", "infinite", ""}) {
      b.time_limit = QString::fromLatin1(ok);
      QVERIFY2(!slurm_settings_error(b, 8), ok);
    }
    b = s;
    b.login_host = QStringLiteral("-oProxyCommand=evil");
    refused(b, 8, "Login node \"-oProxyCommand=evil\"");
    b.login_host = QStringLiteral("login 1");
    refused(b, 8, "Login node \"login 1\"");
    b.login_host = QStringLiteral("me@login1.example.org");
    QCOMPARE(slurm_settings_error(b, 8), std::nullopt);
    b = s;
    b.extra_options = QStringLiteral("--nodes=3");
    refused(b, 8, "Extra sbatch options: --nodes");
  }

  void the_batch_script_is_exact() {
    SlurmSettings s;
    s.partition = QStringLiteral("debug");
    s.nodes = 2;
    s.tasks_per_node = 4;
    s.gpus_per_task = 1;
    s.time_limit = QStringLiteral("00:10:00");
    s.extra_options = QStringLiteral("--account=proj --mail-type END --comment='a \"quoted\" #1'");
    BenchSettings b;
    b.design_path = QStringLiteral("/runs/my run/design.meshloom.json");
    b.world = 8;
    b.backend = QStringLiteral("nccl");
    b.collectives = {QStringLiteral("all_reduce")};
    const SlurmJobFiles files = slurm_job_files(QStringLiteral("/runs/my run"));
    QCOMPARE(files.script, QStringLiteral("/runs/my run/job.sbatch"));
    QCOMPARE(files.records, QStringLiteral("/runs/my run/job.jsonl"));
    QCOMPARE(files.output, QStringLiteral("/runs/my run/job.out"));
    QString error;
    const std::optional<QString> script =
        batch_script(s, QStringLiteral("/opt/meshloom/bin/meshloom-launch"), b, files, &error);
    QVERIFY2(script, qPrintable(error));
    const QStringList expected{
        "#!/bin/bash",
        "# Meshloom: meshloom-launch bench of the design /runs/my run/design.meshloom.json, submitted by the app.",
        "# The job writes its records to /runs/my run/job.jsonl as each is measured; the app reads them from there.",
        "#SBATCH --job-name=meshloom-bench",
        "#SBATCH --partition=debug",
        "#SBATCH --nodes=2",
        "#SBATCH --ntasks-per-node=4",
        "#SBATCH --gpus-per-task=1",
        "#SBATCH --time=00:10:00",
        "#SBATCH --no-requeue",
        "#SBATCH \"--chdir=/runs/my run\"",
        "#SBATCH \"--output=/runs/my run/job.out\"",
        "#SBATCH --account=proj",
        "#SBATCH --mail-type END",
        "#SBATCH \"--comment=a \\\"quoted\\\" #1\"",
        "set -euo pipefail",
        "",
        "LAUNCH=/opt/meshloom/bin/meshloom-launch",
        "command -v \"$LAUNCH\" >/dev/null || { echo \"error: $LAUNCH not found on $(hostname): set the launcher to "
        "its path on the cluster\" >&2; exit 127; }",
        "# One rank per task, started by Slurm through PMIx; the records go to --jsonl as each is measured.",
        "srun --mpi=pmix \"$LAUNCH\" bench --design '/runs/my run/design.meshloom.json' --world 8 --backend nccl -b 1K "
        "-e 4M -f 2 --dtype float32 -w 3 -n 10 --timing single_shot --rounds 1 --timeout 60 --collectives all_reduce "
        "--jsonl '/runs/my run/job.jsonl'",
    };
    const QStringList got = script->split(QLatin1Char('\n'));
    QCOMPARE(got.size(), expected.size() + 1);  // and a newline at the end
    for (qsizetype i = 0; i < expected.size(); ++i) QCOMPARE(got.at(i), expected.at(i));
    QVERIFY(got.back().isEmpty());

    // Valid bash (nothing is run: -n).
    QTemporaryDir tmp;
    QVERIFY(write_file(tmp.filePath(QStringLiteral("job.sbatch")), script->toUtf8()));
    QProcess bash;
    bash.start(QStringLiteral("bash"), {QStringLiteral("-n"), tmp.filePath(QStringLiteral("job.sbatch"))});
    QVERIFY(bash.waitForFinished(10000));
    QVERIFY2(bash.exitCode() == 0, bash.readAllStandardError().constData());

    // The defaults: the cluster's partition (no line), no GPUs; % in the folder is not a Slurm pattern.
    SlurmSettings d;
    d.tasks_per_node = 2;
    d.time_limit.clear();
    b.world = 2;
    const auto plain = batch_script(d, QStringLiteral("meshloom-launch"), b, slurm_job_files(QStringLiteral("/r/100%")), &error);
    QVERIFY2(plain, qPrintable(error));
    QVERIFY(!plain->contains(QLatin1String("--partition")));
    QVERIFY(!plain->contains(QLatin1String("--gpus-per-task")));
    QVERIFY(!plain->contains(QLatin1String("#SBATCH --time")));
    QVERIFY2(plain->contains(QLatin1String("#SBATCH --output=/r/100%%/job.out\n")), qPrintable(*plain));
    QVERIFY2(plain->contains(QLatin1String("--jsonl /r/100%/job.jsonl\n")), qPrintable(*plain));

    // Refused with the reason: the settings', and a launcher that is not named.
    b.world = 3;
    QVERIFY(!batch_script(d, QStringLiteral("meshloom-launch"), b, files, &error));
    QVERIFY2(error.contains(QLatin1String("make 2 ranks, and the design's world is 3")), qPrintable(error));
    b.world = 2;
    QVERIFY(!batch_script(d, QStringLiteral(" "), b, files, &error));
    QVERIFY2(error.contains(QLatin1String("meshloom-launch program")), qPrintable(error));
    // A line break in a path would end a line of the script (and bash would run the rest).
    QVERIFY(!batch_script(d, QStringLiteral("meshloom-launch"), b, slurm_job_files(QStringLiteral("/r/a\nb")), &error));
    QVERIFY2(error.contains(QLatin1String("has a line break in its name")), qPrintable(error));
    b.design_path = QStringLiteral("/r/x\nrm -rf ~.meshloom.json");
    QVERIFY(!batch_script(d, QStringLiteral("meshloom-launch"), b, files, &error));
    QVERIFY2(error.contains(QLatin1String("The design's file name")), qPrintable(error));
  }

  void commands_here_and_over_ssh() {
    SlurmSettings here;
    QCOMPARE(sbatch_command(here), (LaunchCommand{"sbatch", {"--parsable"}}));
    QCOMPARE(squeue_command(here, "42"), (LaunchCommand{"squeue", {"--noheader", "--jobs", "42", "--format", "%T|%r|%N"}}));
    QCOMPARE(scontrol_command(here, "42"), (LaunchCommand{"scontrol", {"--oneliner", "show", "job", "42"}}));
    QCOMPARE(scancel_command(here, "42"), (LaunchCommand{"scancel", {"42"}}));
    SlurmSettings remote;
    remote.login_host = QStringLiteral("me@login1");
    QCOMPARE(sbatch_command(remote), (LaunchCommand{"ssh", {"-o", "BatchMode=yes", "-o", "ConnectTimeout=15", "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3", "me@login1", "sbatch", "--parsable"}}));
    // Every remote word quoted for the login node's shell: the | of the format is not a pipe there.
    QCOMPARE(squeue_command(remote, "42"), (LaunchCommand{"ssh", {"-o", "BatchMode=yes", "-o", "ConnectTimeout=15", "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3", "me@login1", "squeue", "--noheader",
                                                                   "--jobs", "42", "--format", "'%T|%r|%N'"}}));
    QCOMPARE(scancel_command(remote, "42"), (LaunchCommand{"ssh", {"-o", "BatchMode=yes", "-o", "ConnectTimeout=15", "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3", "me@login1", "scancel", "42"}}));
    QCOMPARE(remote_read_command(remote, QStringLiteral("/runs/my run/job.jsonl"), 1234),
             (LaunchCommand{"ssh", {"-o", "BatchMode=yes", "-o", "ConnectTimeout=15", "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3", "me@login1", "sh", "-c",
                                    "'printf \"%s\\n\" meshloom-records && exec tail -c +\"$1\" \"$0\"'",
                                    "'/runs/my run/job.jsonl'", "1235"}}));
    // What a login shell prints before the command is not the file's; without the marker nothing is.
    QCOMPARE(remote_read_payload("meshloom-records\n{\"type\":\"config\"}\n"), std::optional<QByteArray>("{\"type\":\"config\"}\n"));
    QCOMPARE(remote_read_payload("Welcome to login1\nmeshloom-records\nab"), std::optional<QByteArray>("ab"));
    QCOMPARE(remote_read_payload("meshloom-records\n"), std::optional<QByteArray>(QByteArray()));
    QCOMPARE(remote_read_payload("Welcome\n"), std::nullopt);
    QCOMPARE(remote_read_payload("xmeshloom-records\nab"), std::nullopt);
    QCOMPARE(remote_tail_command(remote, QStringLiteral("/runs/it's/job.out"), 20),
             (LaunchCommand{"ssh", {"-o", "BatchMode=yes", "-o", "ConnectTimeout=15", "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3", "me@login1", "tail", "-n", "20", "'/runs/it'\\''s/job.out'"}}));
  }

  void slurm_answers_are_read() {
    QCOMPARE(parse_sbatch_job_id(QStringLiteral("54185570\n")), std::optional<QString>(QStringLiteral("54185570")));
    QCOMPARE(parse_sbatch_job_id(QStringLiteral("123;cluster\n")), std::optional<QString>(QStringLiteral("123")));
    QCOMPARE(parse_sbatch_job_id(QStringLiteral("Welcome to the cluster\n99\n")), std::optional<QString>(QStringLiteral("99")));
    QCOMPARE(parse_sbatch_job_id(QString()), std::nullopt);
    QCOMPARE(parse_sbatch_job_id(QStringLiteral("Submitted batch job 12\n")), std::nullopt);

    QCOMPARE(parse_squeue(QStringLiteral("PENDING|Resources|\n")),
             std::optional<SlurmJobState>(SlurmJobState{"PENDING", "Resources", "", ""}));
    QCOMPARE(parse_squeue(QStringLiteral("PENDING|None|\n")),
             std::optional<SlurmJobState>(SlurmJobState{"PENDING", "", "", ""}));
    QCOMPARE(parse_squeue(QStringLiteral("RUNNING|None|vm\n")),
             std::optional<SlurmJobState>(SlurmJobState{"RUNNING", "", "vm", ""}));
    QCOMPARE(parse_squeue(QStringLiteral("COMPLETING|None|node[1-2]\n")),
             std::optional<SlurmJobState>(SlurmJobState{"COMPLETING", "", "node[1-2]", ""}));
    QCOMPARE(parse_squeue(QString()), std::nullopt);  // the job left the queue
    QCOMPARE(parse_squeue(QStringLiteral("\n")), std::nullopt);

    QCOMPARE(parse_scontrol_job(QString::fromLatin1(kScontrolPending)),
             std::optional<SlurmJobState>(SlurmJobState{"PENDING", "Priority", "", "0:0"}));
    QCOMPARE(parse_scontrol_job(QString::fromLatin1(kScontrolCompleted)),
             std::optional<SlurmJobState>(SlurmJobState{"COMPLETED", "", "vm", "0:0"}));
    QCOMPARE(parse_scontrol_job(QString::fromLatin1(kScontrolFailedMultiline)),
             std::optional<SlurmJobState>(SlurmJobState{"FAILED", "NonZeroExitCode", "vm", "2:0"}));
    QCOMPARE(parse_scontrol_job(QStringLiteral("JobId=5 JobState=CANCELLED Reason=None ExitCode=0:15 NodeList=(null)")),
             std::optional<SlurmJobState>(SlurmJobState{"CANCELLED", "", "", "0:15"}));
    QCOMPARE(parse_scontrol_job(QStringLiteral("slurm_load_jobs error: Invalid job id specified")), std::nullopt);
    QCOMPARE(parse_scontrol_job(QString()), std::nullopt);

    for (const char* s : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL",
                          "DEADLINE", "PREEMPTED"}) {
      QVERIFY2(is_final_state(QString::fromLatin1(s)), s);
    }
    for (const char* s : {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", ""}) {
      QVERIFY2(!is_final_state(QString::fromLatin1(s)), s);
    }

    QCOMPARE(describe_job("123", {"PENDING", "Resources", "", ""}), QStringLiteral("Job 123: PENDING (Resources)"));
    QCOMPARE(describe_job("123", {"PENDING", "", "", ""}), QStringLiteral("Job 123: PENDING"));
    QCOMPARE(describe_job("123", {"RUNNING", "", "node[1-2]", ""}), QStringLiteral("Job 123: RUNNING on node[1-2]"));
    QCOMPARE(describe_job("123", {"COMPLETED", "", "vm", "0:0"}), QStringLiteral("Job 123: COMPLETED"));
    QCOMPARE(describe_job("123", {"FAILED", "NonZeroExitCode", "vm", "2:0"}), QStringLiteral("Job 123: FAILED (exit code 2)"));
    QCOMPARE(describe_job("123", {"CANCELLED", "", "vm", "0:15"}), QStringLiteral("Job 123: CANCELLED"));
    QCOMPARE(describe_job("123", {"TIMEOUT", "TimeLimit", "vm", "0:0"}), QStringLiteral("Job 123: TIMEOUT (TimeLimit)"));
    QCOMPARE(describe_job("123", {"NODE_FAIL", "", "vm", "0:9"}), QStringLiteral("Job 123: NODE_FAIL (signal 9)"));
  }

  void every_end_has_its_outcome() {
    SlurmEnd e;
    e.job_id = QStringLiteral("123");
    e.results = 48;
    e.expected = 48;
    e.summary_seen = true;
    e.summary_ok = true;
    e.time_limit = QStringLiteral("00:30:00");
    e.output_path = QStringLiteral("/r/job.out");
    e.state = {"COMPLETED", "", "vm", "0:0"};
    RunOutcome o = slurm_outcome(e);
    QCOMPARE(int(o.status), int(RunOutcome::Status::Succeeded));
    QCOMPARE(o.message, QStringLiteral("Job 123 completed: 48 results."));

    e.summary_seen = false;
    e.results = 10;
    e.output_tail = QStringLiteral("srun: error: vm: task 1: Exited with exit code 0\n");
    o = slurm_outcome(e);
    QCOMPARE(int(o.status), int(RunOutcome::Status::Failed));
    QVERIFY2(o.message.startsWith(QLatin1String("Job 123 completed without a summary record after 10 of 48 results.")),
             qPrintable(o.message));
    QVERIFY2(o.message.endsWith(QLatin1String("Its output (/r/job.out) ends:\nsrun: error: vm: task 1: Exited with exit code 0")),
             qPrintable(o.message));

    e.state = {"FAILED", "NonZeroExitCode", "vm", "2:0"};
    e.run_errors = {QStringLiteral("rank 0: ValueError: unknown collective 'frob'")};
    e.output_tail = QStringLiteral("error: ValueError: unknown collective 'frob'");
    o = slurm_outcome(e);
    QCOMPARE(int(o.status), int(RunOutcome::Status::Failed));
    QCOMPARE(o.exit_code, 2);
    QCOMPARE(o.message, QStringLiteral("Job 123 FAILED (exit code 2) after 10 of 48 results. The launcher said: rank 0: "
                                       "ValueError: unknown collective 'frob'\nIts output (/r/job.out) ends:\nerror: "
                                       "ValueError: unknown collective 'frob'"));

    e.run_errors.clear();
    e.state = {"TIMEOUT", "TimeLimit", "vm", "0:0"};
    e.output_tail = QStringLiteral("slurmstepd: error: *** JOB 123 ON vm CANCELLED AT 2026-11-26T16:00:00 DUE TO TIME LIMIT ***");
    o = slurm_outcome(e);
    QCOMPARE(int(o.status), int(RunOutcome::Status::TimedOut));
    QVERIFY2(o.message.startsWith(QLatin1String("Job 123 reached its time limit (00:30:00) after 10 of 48 results.\n"
                                                "Its output (/r/job.out) ends:\nslurmstepd: error: *** JOB 123")),
             qPrintable(o.message));

    e.state = {"CANCELLED", "", "vm", "0:15"};
    e.cancel_requested = true;
    o = slurm_outcome(e);
    QCOMPARE(int(o.status), int(RunOutcome::Status::Cancelled));
    QCOMPARE(o.message, QStringLiteral("Job 123 cancelled after 10 of 48 results."));
    e.cancel_requested = false;
    o = slurm_outcome(e);
    QCOMPARE(int(o.status), int(RunOutcome::Status::Cancelled));
    QVERIFY2(o.message.startsWith(QLatin1String("Job 123 was cancelled outside the app (scancel) after 10 of 48")),
             qPrintable(o.message));

    e.state = {"NODE_FAIL", "", "vm", "0:9"};
    e.output_tail.clear();
    o = slurm_outcome(e);
    QCOMPARE(int(o.status), int(RunOutcome::Status::Failed));
    QCOMPARE(o.message, QStringLiteral("Job 123 NODE_FAIL (signal 9) after 10 of 48 results.\n"
                                       "Its output (/r/job.out) is empty or could not be read."));
  }

  // Remembered between sessions; nodes x tasks per node made the world again for a design of another world.
  void slurm_settings_are_remembered() {
    RunSettings s = RunSettings::load(8);
    QCOMPARE(int(s.where), int(RunSettings::Where::Local));
    QCOMPARE(s.slurm.nodes, 1);
    QCOMPARE(s.slurm.tasks_per_node, 8);
    QCOMPARE(s.slurm.time_limit, QStringLiteral("00:30:00"));
    s.where = RunSettings::Where::Slurm;
    s.slurm.partition = QStringLiteral("gpu");
    s.slurm.nodes = 2;
    s.slurm.tasks_per_node = 4;
    s.slurm.gpus_per_task = 1;
    s.slurm.time_limit = QStringLiteral("1:00:00");
    s.slurm.extra_options = QStringLiteral("--account=proj");
    s.slurm.login_host = QStringLiteral("me@login1");
    QCOMPARE(s.bench.timing, QStringLiteral("single_shot"));
    QCOMPARE(s.bench.rounds, 1);
    s.bench.timing = QStringLiteral("pipelined");
    s.bench.rounds = 3;
    s.save();
    RunSettings back = RunSettings::load(8);
    QCOMPARE(back.bench.timing, QStringLiteral("pipelined"));
    QCOMPARE(back.bench.rounds, 3);
    QCOMPARE(int(back.where), int(RunSettings::Where::Slurm));
    QVERIFY(back.slurm == s.slurm);
    QCOMPARE(*back.command(nullptr), sbatch_command(s.slurm));
    back = RunSettings::load(16);  // 2 nodes of 8
    QCOMPARE(back.slurm.nodes, 2);
    QCOMPARE(back.slurm.tasks_per_node, 8);
    back = RunSettings::load(3);  // 2 nodes cannot share 3 ranks: one node of 3
    QCOMPARE(back.slurm.nodes, 1);
    QCOMPARE(back.slurm.tasks_per_node, 3);
    QSettings().clear();
  }

  // The dialog's Slurm mode: its fields, the exact script and the sbatch command it submits with, the reasons it
  // refuses (Submit disabled), and nodes that carry tasks per node with them.
  void the_run_dialog_has_a_slurm_mode() {
    QTemporaryDir tmp;
    RunSettings s;
    s.where = RunSettings::Where::Local;
    s.launcher = QStringLiteral("/opt/ml/meshloom-launch");
    s.mpirun = QStringLiteral("/bin/sh");
    s.bench.world = 8;
    s.slurm.tasks_per_node = 8;
    const QString dir = QDir(tmp.path()).filePath(QStringLiteral("run1"));
    RunDialog dialog(s, CostsPanel::run_design_path(dir));
    auto* ok = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
    auto* script = dialog.findChild<QPlainTextEdit*>(QStringLiteral("slurm_script"));
    auto* fields = dialog.findChild<QLineEdit*>(QStringLiteral("slurm_partition"))->parentWidget();
    QVERIFY(script && fields);
    QVERIFY(script->isHidden());  // Slurm's fields only in Slurm mode
    QVERIFY(fields->isHidden());
    QCOMPARE(ok->text(), QStringLiteral("Run"));
    QVERIFY(dialog.script_preview().isEmpty());

    dialog.findChild<QRadioButton*>(QStringLiteral("slurm_mode"))->click();
    QVERIFY(!script->isHidden());
    QVERIFY(!fields->isHidden());
    QCOMPARE(ok->text(), QStringLiteral("Submit"));
    QVERIFY2(ok->isEnabled(), qPrintable(dialog.preview_error()));
    QCOMPARE(dialog.preview(), QStringLiteral("sbatch --parsable < ") + QDir(dir).filePath(QStringLiteral("job.sbatch")));
    RunSettings chosen = dialog.settings();
    QCOMPARE(int(chosen.where), int(RunSettings::Where::Slurm));
    QCOMPARE(dialog.script_preview(), *chosen.slurm_script(dir, nullptr));
    QVERIFY2(dialog.script_preview().contains(QLatin1String("#SBATCH --ntasks-per-node=8\n")), qPrintable(dialog.script_preview()));
    QVERIFY(dialog.script_preview().contains(QDir(dir).filePath(QStringLiteral("design.meshloom.json"))));

    dialog.findChild<QLineEdit*>(QStringLiteral("slurm_partition"))->setText(QStringLiteral("debug"));
    dialog.findChild<QSpinBox*>(QStringLiteral("slurm_gpus_per_task"))->setValue(1);
    QVERIFY(dialog.script_preview().contains(QLatin1String("#SBATCH --partition=debug\n")));
    QVERIFY(dialog.script_preview().contains(QLatin1String("#SBATCH --gpus-per-task=1\n")));
    // 2 nodes: 4 tasks each, the world still 8.
    dialog.findChild<QSpinBox*>(QStringLiteral("slurm_nodes"))->setValue(2);
    QCOMPARE(dialog.findChild<QSpinBox*>(QStringLiteral("slurm_tasks_per_node"))->value(), 4);
    QVERIFY(dialog.script_preview().contains(QLatin1String("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4\n")));
    // 3 nodes cannot share 8 ranks: refused, naming why.
    dialog.findChild<QSpinBox*>(QStringLiteral("slurm_nodes"))->setValue(3);
    QVERIFY(!ok->isEnabled());
    QVERIFY2(dialog.preview_error().contains(QLatin1String("3 node(s) x 4 task(s) per node make 12 ranks")),
             qPrintable(dialog.preview_error()));
    QVERIFY(dialog.script_preview().isEmpty());
    dialog.findChild<QSpinBox*>(QStringLiteral("slurm_nodes"))->setValue(1);
    QVERIFY(ok->isEnabled());
    dialog.findChild<QLineEdit*>(QStringLiteral("slurm_options"))->setText(QStringLiteral("--output=x"));
    QVERIFY(!ok->isEnabled());
    QVERIFY2(dialog.preview_error().contains(QLatin1String("--output is not taken here")), qPrintable(dialog.preview_error()));
    dialog.findChild<QLineEdit*>(QStringLiteral("slurm_options"))->setText(QStringLiteral("--qos=short"));
    dialog.findChild<QLineEdit*>(QStringLiteral("slurm_login_host"))->setText(QStringLiteral("me@login1"));
    QVERIFY(ok->isEnabled());
    QCOMPARE(dialog.preview(), QStringLiteral("ssh -o BatchMode=yes -o ConnectTimeout=15 -o ServerAliveInterval=15 -o ServerAliveCountMax=3 me@login1 sbatch --parsable < ") +
                                   QDir(dir).filePath(QStringLiteral("job.sbatch")));
    QVERIFY(dialog.script_preview().contains(QLatin1String("#SBATCH --qos=short\n")));
    chosen = dialog.settings();
    QCOMPARE(chosen.slurm.login_host, QStringLiteral("me@login1"));
    QCOMPARE(chosen.slurm.partition, QStringLiteral("debug"));
    QCOMPARE(chosen.slurm.gpus_per_task, 1);
    // Back to local ranks: the Slurm fields go, the mpirun command is previewed again.
    dialog.findChild<QRadioButton*>()->click();
    QVERIFY(script->isHidden());
    QCOMPARE(ok->text(), QStringLiteral("Run"));
    QVERIFY2(dialog.preview().startsWith(QLatin1String("/bin/sh ")), qPrintable(dialog.preview()));
  }

  // SlurmRun against the stand-ins: sbatch gets the script on standard input, the states come as Slurm gives them,
  // records arrive as the job's file grows (a line cut in two by the read is taken whole), and a time-out ends the
  // run with the end of the job's output; the app's records file holds every record.
  void a_job_is_watched_to_its_end() {
    QTemporaryDir bin;
    QTemporaryDir run_dir;
    install_fake_slurm(bin.path());
    qputenv("PATH", (bin.path() + QLatin1Char(':')).toUtf8() + path_);
    const SlurmJobFiles files = slurm_job_files(run_dir.path());
    const QString records = run_dir.filePath(QStringLiteral("bench.jsonl"));
    SlurmRun run;
    run.set_poll_interval(100);
    QSignalSpy submitted(&run, &SlurmRun::submitted);
    QSignalSpy states(&run, &SlurmRun::state_changed);
    QSignalSpy finished(&run, &SlurmRun::finished);
    QStringList received;
    QString log;
    QObject::connect(&run, &SlurmRun::record_line, &run, [&](const QString& l) { received << l; });
    QObject::connect(&run, &SlurmRun::log, &run, [&](const QString& t) { log += t + QLatin1Char('\n'); });
    QVERIFY(write_file(bin.filePath(QStringLiteral("squeue.out")), "PENDING|Priority|\n"));
    SlurmSettings s;
    s.time_limit = QStringLiteral("00:01:00");
    QVERIFY(run.start(s, QStringLiteral("#!/bin/bash\necho the script\n"), files, records));
    QVERIFY(run.running());
    QVERIFY(!run.start(s, QString(), files, records));  // one at a time
    QVERIFY(submitted.wait(20000));
    QCOMPARE(submitted.at(0).at(0).toString(), QStringLiteral("77"));
    QCOMPARE(run.job_id(), QStringLiteral("77"));
    QCOMPARE(lines_of(bin.filePath(QStringLiteral("submitted.sbatch"))), (QStringList{"#!/bin/bash", "echo the script"}));
    QCOMPARE(lines_of(bin.filePath(QStringLiteral("sbatch.args"))), QStringList{"--parsable"});
    QVERIFY2(log.contains(QLatin1String("sbatch: warning: a fake sbatch")), qPrintable(log));  // sbatch's warnings
    QTRY_VERIFY2_WITH_TIMEOUT(!states.isEmpty(), qPrintable(log), 10000);
    QCOMPARE(states.at(0).at(0).value<SlurmJobState>(), (SlurmJobState{"PENDING", "Priority", "", ""}));
    QCOMPARE(lines_of(bin.filePath(QStringLiteral("squeue.args"))), QStringList{"--noheader --jobs 77 --format %T|%r|%N"});

    // Running: records arrive as the job writes them, a line cut across two reads taken whole.
    const QStringList recorded = lines_of(kRecorded);
    QVERIFY(write_file(bin.filePath(QStringLiteral("squeue.out")), "RUNNING|None|node1\n"));
    QTRY_COMPARE_WITH_TIMEOUT(run.state().state, QStringLiteral("RUNNING"), 10000);
    QCOMPARE(run.state().nodes, QStringLiteral("node1"));
    QByteArray first = (recorded.mid(0, 5).join(QLatin1Char('\n')) + QLatin1Char('\n')).toUtf8();
    const QByteArray half = recorded.at(5).toUtf8().left(20);
    QVERIFY(write_file(files.records, first + half));
    QTRY_COMPARE_WITH_TIMEOUT(received.size(), 5, 10000);
    QCOMPARE(run.results(), 4);
    QVERIFY(write_file(files.records, recorded.at(5).toUtf8().mid(20) + '\n', QIODevice::Append));
    QTRY_COMPARE_WITH_TIMEOUT(received.size(), 6, 10000);
    QCOMPARE(received, recorded.mid(0, 6));

    // Time's up: squeue no longer lists it, scontrol says TIMEOUT; the job's output ends the message.
    QVERIFY(write_file(files.output, "starting\nsome table line\nslurmstepd: error: *** JOB 77 ON node1 CANCELLED AT "
                                     "2026-11-26T16:00:00 DUE TO TIME LIMIT ***\n"));
    QVERIFY(write_file(files.records, recorded.at(6).toUtf8() + '\n', QIODevice::Append));
    QVERIFY(write_file(bin.filePath(QStringLiteral("scontrol.out")),
                       "JobId=77 JobName=meshloom-bench JobState=TIMEOUT Reason=TimeLimit ExitCode=0:0 NodeList=node1\n"));
    QVERIFY(QFile::remove(bin.filePath(QStringLiteral("squeue.out"))));
    const RunOutcome o = outcome_of(finished);
    QCOMPARE(int(o.status), int(RunOutcome::Status::TimedOut));
    QCOMPARE(o.results, 6);
    QCOMPARE(o.expected, 48);
    QVERIFY2(o.message.startsWith(QLatin1String("Job 77 reached its time limit (00:01:00) after 6 of 48 results.\nIts output (")),
             qPrintable(o.message));
    QVERIFY2(o.message.endsWith(QLatin1String("some table line\nslurmstepd: error: *** JOB 77 ON node1 CANCELLED AT "
                                              "2026-11-26T16:00:00 DUE TO TIME LIMIT ***")),
             qPrintable(o.message));
    QCOMPARE(received, recorded.mid(0, 7));  // the last record, written before it ended, read too
    QCOMPARE(lines_of(records), recorded.mid(0, 7));
    QCOMPARE(lines_of(bin.filePath(QStringLiteral("scontrol.args"))), QStringList{"--oneliner show job 77"});
    QVERIFY(!run.running());
    QTest::qWait(300);
    QCOMPARE(finished.count(), 0);  // exactly once
  }

  // A command that does not answer is stopped after the command timeout and counts as failed: the polling goes on,
  // and the run still sees its job to the end.
  void a_command_that_hangs_is_stopped() {
    QTemporaryDir bin;
    QTemporaryDir run_dir;
    install_fake_slurm(bin.path());
    qputenv("PATH", (bin.path() + QLatin1Char(':')).toUtf8() + path_);
    SlurmRun run;
    run.set_poll_interval(100);
    run.set_command_timeout(300);
    QString log;
    QObject::connect(&run, &SlurmRun::log, &run, [&](const QString& t) { log += t + QLatin1Char('\n'); });
    QSignalSpy finished(&run, &SlurmRun::finished);
    QVERIFY(write_file(bin.filePath(QStringLiteral("squeue.hang")), ""));
    // squeue stopped, the run asks scontrol, which still knows the job.
    QVERIFY(write_file(bin.filePath(QStringLiteral("scontrol.out")), "JobId=77 JobState=PENDING Reason=Priority "
                                                                     "ExitCode=0:0 NodeList=(null)\n"));
    QVERIFY(run.start(SlurmSettings{}, QStringLiteral("#!/bin/bash\n"), slurm_job_files(run_dir.path()),
                      run_dir.filePath(QStringLiteral("bench.jsonl"))));
    QTRY_VERIFY2_WITH_TIMEOUT(log.contains(QLatin1String("squeue did not answer within 0.3 s and was stopped")),
                              qPrintable(log), 10000);
    QVERIFY(run.running());
    QVERIFY(QFile::remove(bin.filePath(QStringLiteral("squeue.hang"))));
    QVERIFY(write_file(bin.filePath(QStringLiteral("squeue.out")), "RUNNING|None|node1\n"));
    QTRY_COMPARE_WITH_TIMEOUT(run.state().state, QStringLiteral("RUNNING"), 10000);
    QVERIFY(write_file(bin.filePath(QStringLiteral("scontrol.out")), "JobId=77 JobState=FAILED Reason=NonZeroExitCode "
                                                                     "ExitCode=1:0 NodeList=node1\n"));
    QVERIFY(QFile::remove(bin.filePath(QStringLiteral("squeue.out"))));
    QVERIFY(finished.wait(10000));
    QCOMPARE(int(outcome_of(finished).status), int(RunOutcome::Status::Failed));

    // sbatch that does not answer: the job may have been taken all the same, which the message says (not "refused").
    QVERIFY(write_file(bin.filePath(QStringLiteral("sbatch.hang")), ""));
    SlurmRun submit;
    submit.set_command_timeout(300);
    QSignalSpy submit_finished(&submit, &SlurmRun::finished);
    QVERIFY(submit.start(SlurmSettings{}, QStringLiteral("#!/bin/bash\n"), slurm_job_files(run_dir.path()), QString()));
    const RunOutcome o = outcome_of(submit_finished);
    QCOMPARE(int(o.status), int(RunOutcome::Status::FailedToStart));
    QVERIFY2(o.message.startsWith(QLatin1String("sbatch did not answer within 0.3 s and was stopped: the job may have "
                                                "been submitted all the same")),
             qPrintable(o.message));
    QVERIFY2(o.message.contains(run_dir.path()), qPrintable(o.message));
  }

  // A failed job: its exit code, the launcher's error record, the end of its output; a cancel: scancel, the job
  // ends CANCELLED and the records so far stay; a cancel before sbatch answered waits for the id.
  void failures_and_cancels() {
    QTemporaryDir bin;
    install_fake_slurm(bin.path());
    qputenv("PATH", (bin.path() + QLatin1Char(':')).toUtf8() + path_);
    const QStringList recorded = lines_of(kRecorded);
    {
      QTemporaryDir run_dir;
      const SlurmJobFiles files = slurm_job_files(run_dir.path());
      SlurmRun run;
      run.set_poll_interval(100);
      QSignalSpy finished(&run, &SlurmRun::finished);
      QVERIFY(write_file(files.records, (recorded.at(0) + QStringLiteral(
                                             "\n{\"type\":\"error\",\"rank\":0,\"message\":\"ValueError: frob\"}\n"))
                                            .toUtf8()));
      QVERIFY(write_file(files.output, "error: ValueError: frob\nsrun: error: node1: task 0: Exited with exit code 2\n"));
      QVERIFY(write_file(bin.filePath(QStringLiteral("scontrol.out")),
                         "JobId=77 JobState=FAILED Reason=NonZeroExitCode ExitCode=2:0 NodeList=node1\n"));
      QVERIFY(run.start(SlurmSettings{}, QStringLiteral("#!/bin/bash\n"), files, run_dir.filePath(QStringLiteral("b.jsonl"))));
      const RunOutcome o = outcome_of(finished);
      QCOMPARE(int(o.status), int(RunOutcome::Status::Failed));
      QCOMPARE(o.exit_code, 2);
      QVERIFY2(o.message.startsWith(QLatin1String("Job 77 FAILED (exit code 2) after 0 of 48 results. The launcher said: "
                                                  "rank 0: ValueError: frob\nIts output (")),
               qPrintable(o.message));
      QVERIFY2(o.message.endsWith(QLatin1String("srun: error: node1: task 0: Exited with exit code 2")), qPrintable(o.message));
      QCOMPARE(lines_of(run_dir.filePath(QStringLiteral("b.jsonl"))).size(), 2);
      QVERIFY(QFile::remove(bin.filePath(QStringLiteral("scontrol.out"))));
    }
    {
      QTemporaryDir run_dir;
      const SlurmJobFiles files = slurm_job_files(run_dir.path());
      SlurmRun run;
      run.set_poll_interval(100);
      QSignalSpy finished(&run, &SlurmRun::finished);
      QSignalSpy cancel_failed(&run, &SlurmRun::cancel_failed);
      QVERIFY(write_file(bin.filePath(QStringLiteral("squeue.out")), "RUNNING|None|node1\n"));
      QVERIFY(write_file(files.records, (recorded.mid(0, 3).join(QLatin1Char('\n')) + QStringLiteral("\n{\"type\":\"res"))
                                            .toUtf8()));
      QVERIFY(run.start(SlurmSettings{}, QStringLiteral("#!/bin/bash\n"), files, run_dir.filePath(QStringLiteral("b.jsonl"))));
      QTRY_COMPARE_WITH_TIMEOUT(run.results(), 2, 10000);
      // scancel refuses first: said, and Cancel can be pressed again.
      QVERIFY(write_file(bin.filePath(QStringLiteral("scancel.err")), "scancel: error: Kill job error on job id 77: Access/permission denied\n"));
      run.cancel();
      QVERIFY(cancel_failed.wait(10000));
      QCOMPARE(cancel_failed.at(0).at(0).toString(),
               QStringLiteral("scancel: error: Kill job error on job id 77: Access/permission denied"));
      QVERIFY(run.running());
      QVERIFY(QFile::remove(bin.filePath(QStringLiteral("scancel.err"))));
      run.cancel();
      QTRY_COMPARE_WITH_TIMEOUT(lines_of(bin.filePath(QStringLiteral("scancel.log"))), (QStringList{"77", "77"}), 10000);
      QVERIFY(write_file(bin.filePath(QStringLiteral("scontrol.out")),
                         "JobId=77 JobState=CANCELLED Reason=None ExitCode=0:15 NodeList=node1\n"));
      QVERIFY(QFile::remove(bin.filePath(QStringLiteral("squeue.out"))));
      const RunOutcome o = outcome_of(finished);
      QCOMPARE(int(o.status), int(RunOutcome::Status::Cancelled));
      QCOMPARE(o.message, QStringLiteral("Job 77 cancelled after 2 of 48 results."));
      QVERIFY(o.problems.isEmpty());  // the record cut short by the cancel is not one
      QCOMPARE(lines_of(run_dir.filePath(QStringLiteral("b.jsonl"))), recorded.mid(0, 3));  // whole records only
      QVERIFY(QFile::remove(bin.filePath(QStringLiteral("scontrol.out"))));
      QVERIFY(QFile::remove(bin.filePath(QStringLiteral("scancel.log"))));
    }
    {
      // Cancelled before sbatch answered: scancel as soon as the id is known.
      QTemporaryDir run_dir;
      SlurmRun run;
      run.set_poll_interval(100);
      QSignalSpy finished(&run, &SlurmRun::finished);
      QVERIFY(write_file(bin.filePath(QStringLiteral("squeue.out")), "PENDING|Priority|\n"));
      QVERIFY(run.start(SlurmSettings{}, QStringLiteral("#!/bin/bash\n"), slurm_job_files(run_dir.path()), QString()));
      run.cancel();
      QTRY_COMPARE_WITH_TIMEOUT(lines_of(bin.filePath(QStringLiteral("scancel.log"))), QStringList{"77"}, 10000);
      QVERIFY(write_file(bin.filePath(QStringLiteral("scontrol.out")), "JobId=77 JobState=CANCELLED Reason=None ExitCode=0:15\n"));
      QVERIFY(QFile::remove(bin.filePath(QStringLiteral("squeue.out"))));
      QCOMPARE(int(outcome_of(finished).status), int(RunOutcome::Status::Cancelled));
      QVERIFY(QFile::remove(bin.filePath(QStringLiteral("scontrol.out"))));
    }
  }

  // A job gone from squeue and scontrol alike (Slurm's MinJobAge passed while the app could not ask) ends by its
  // records, read to the end: whole, with a summary that says it succeeded, it did; else it failed, its records kept.
  void a_job_slurm_forgot_ends_by_its_records() {
    QTemporaryDir bin;
    install_fake_slurm(bin.path());
    qputenv("PATH", (bin.path() + QLatin1Char(':')).toUtf8() + path_);
    const QStringList recorded = lines_of(kRecorded);
    for (const bool whole : {true, false}) {
      QTemporaryDir run_dir;
      const SlurmJobFiles files = slurm_job_files(run_dir.path());
      const QStringList written = whole ? recorded : recorded.mid(0, 3);
      QVERIFY(write_file(files.records, (written.join(QLatin1Char('\n')) + QLatin1Char('\n')).toUtf8()));
      SlurmRun run;
      run.set_poll_interval(100);
      QSignalSpy finished(&run, &SlurmRun::finished);
      QVERIFY(run.start(SlurmSettings{}, QStringLiteral("#!/bin/bash\n"), files,
                        run_dir.filePath(QStringLiteral("b.jsonl"))));
      const RunOutcome o = outcome_of(finished);
      QVERIFY2(o.message.startsWith(QLatin1String("Slurm no longer knows job 77 (scontrol: slurm_load_jobs error: "
                                                  "Invalid job id specified)")),
               qPrintable(o.message));
      QCOMPARE(int(o.status), int(whole ? RunOutcome::Status::Succeeded : RunOutcome::Status::Failed));
      QCOMPARE(o.results, whole ? 48 : 2);
      QVERIFY2(o.message.contains(whole ? QLatin1String("48 results and the summary")
                                        : QLatin1String("2 results, no summary")),
               qPrintable(o.message));
      QCOMPARE(lines_of(run_dir.filePath(QStringLiteral("b.jsonl"))), written);
    }
  }

  // sbatch's refusal is shown word for word; a missing sbatch says what to do; a records file that cannot be
  // created refuses before anything is submitted.
  void refusals_are_word_for_word() {
    QTemporaryDir bin;
    install_fake_slurm(bin.path());
    qputenv("PATH", (bin.path() + QLatin1Char(':')).toUtf8() + path_);
    QTemporaryDir run_dir;
    const QByteArray refusal = "sbatch: error: invalid partition specified: nope\n"
                               "sbatch: error: Batch job submission failed: Invalid partition name specified\n";
    QVERIFY(write_file(bin.filePath(QStringLiteral("sbatch.err")), refusal));
    SlurmRun run;
    QSignalSpy finished(&run, &SlurmRun::finished);
    QSignalSpy submitted(&run, &SlurmRun::submitted);
    QVERIFY(run.start(SlurmSettings{}, QStringLiteral("#!/bin/bash\n"), slurm_job_files(run_dir.path()), QString()));
    RunOutcome o = outcome_of(finished);
    QCOMPARE(int(o.status), int(RunOutcome::Status::FailedToStart));
    QCOMPARE(o.message, QStringLiteral("sbatch refused the job: ") + QString::fromLatin1(refusal).trimmed());
    QCOMPARE(submitted.count(), 0);

    QTemporaryDir empty;
    qputenv("PATH", empty.path().toUtf8());
    QVERIFY(run.start(SlurmSettings{}, QStringLiteral("#!/bin/bash\n"), slurm_job_files(run_dir.path()), QString()));
    o = outcome_of(finished);
    QCOMPARE(int(o.status), int(RunOutcome::Status::FailedToStart));
    QVERIFY2(o.message.startsWith(QLatin1String("sbatch could not be started")) &&
                 o.message.contains(QLatin1String("Slurm's commands must be on PATH here")),
             qPrintable(o.message));
    qputenv("PATH", path_);

    QVERIFY(!run.start(SlurmSettings{}, QStringLiteral("#!/bin/bash\n"), slurm_job_files(run_dir.path()),
                       QStringLiteral("/nonexistent/dir/b.jsonl")));
    o = outcome_of(finished);
    QCOMPARE(int(o.status), int(RunOutcome::Status::FailedToStart));
    QVERIFY(o.message.contains(QLatin1String("/nonexistent/dir/b.jsonl")));
  }

  // Over ssh: every command goes through ssh to the login node (here a stand-in that runs the words with a shell,
  // as sshd does), records are read with tail -c from where the last read stopped, the end of the output with tail
  // -n; the folder's name has a blank and a quote, which the login node's shell must get right.
  void over_ssh_the_words_arrive_whole() {
    QTemporaryDir bin;
    install_fake_slurm(bin.path());
    qputenv("PATH", (bin.path() + QLatin1Char(':')).toUtf8() + path_);
    QTemporaryDir root;
    const QString dir = root.filePath(QStringLiteral("it's a run"));
    QVERIFY(QDir().mkpath(dir));
    const SlurmJobFiles files = slurm_job_files(dir);
    const QStringList recorded = lines_of(kRecorded);
    SlurmSettings s;
    s.login_host = QStringLiteral("me@login1");
    SlurmRun run;
    run.set_poll_interval(100);
    QSignalSpy finished(&run, &SlurmRun::finished);
    QStringList received;
    QObject::connect(&run, &SlurmRun::record_line, &run, [&](const QString& l) { received << l; });
    QVERIFY(write_file(bin.filePath(QStringLiteral("squeue.out")), "RUNNING|None|node1\n"));
    QVERIFY(write_file(files.records, (recorded.mid(0, 3).join(QLatin1Char('\n')) + QLatin1Char('\n')).toUtf8()));
    QVERIFY(run.start(s, QStringLiteral("#!/bin/bash\necho over ssh\n"), files, QDir(dir).filePath(QStringLiteral("bench.jsonl"))));
    QTRY_COMPARE_WITH_TIMEOUT(received.size(), 3, 10000);
    QCOMPARE(lines_of(bin.filePath(QStringLiteral("submitted.sbatch"))), (QStringList{"#!/bin/bash", "echo over ssh"}));
    QCOMPARE(lines_of(bin.filePath(QStringLiteral("squeue.args"))), QStringList{"--noheader --jobs 77 --format %T|%r|%N"});
    QVERIFY(write_file(files.records, (recorded.mid(3, 2).join(QLatin1Char('\n')) + QLatin1Char('\n')).toUtf8(),
                       QIODevice::Append));
    QTRY_COMPARE_WITH_TIMEOUT(received.size(), 5, 10000);
    QVERIFY(write_file(files.output, "line one\nsrun: error: node1: task 1: Killed\n"));
    QVERIFY(write_file(bin.filePath(QStringLiteral("scontrol.out")),
                       "JobId=77 JobState=OUT_OF_MEMORY Reason=OutOfMemory ExitCode=0:125 NodeList=node1\n"));
    QVERIFY(QFile::remove(bin.filePath(QStringLiteral("squeue.out"))));
    const RunOutcome o = outcome_of(finished);
    QCOMPARE(int(o.status), int(RunOutcome::Status::Failed));
    QVERIFY2(o.message.startsWith(QLatin1String("Job 77 OUT_OF_MEMORY (OutOfMemory, signal 125) after 4 of 48 results.")),
             qPrintable(o.message));
    QVERIFY2(o.message.endsWith(QLatin1String("line one\nsrun: error: node1: task 1: Killed")), qPrintable(o.message));
    QCOMPARE(received, recorded.mid(0, 5));  // each record once: every read went on from the last
    const QStringList ssh = lines_of(bin.filePath(QStringLiteral("ssh.log")));
    QVERIFY(!ssh.isEmpty());
    for (const QString& l : ssh) QVERIFY2(l.startsWith(QLatin1String("me@login1: ")), qPrintable(l));
    QVERIFY(ssh.first().contains(QLatin1String("sbatch --parsable")));
    QVERIFY2(ssh.join(QLatin1Char('\n')).contains(QLatin1String("tail -c +")), qPrintable(ssh.join(QLatin1Char('\n'))));
    QVERIFY(ssh.join(QLatin1Char('\n')).contains(QLatin1String("tail -n 20")));
  }
};

QTEST_MAIN(SlurmSubmitTest)
#include "test_slurm_submit.moc"
