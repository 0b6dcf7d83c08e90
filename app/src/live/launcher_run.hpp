// The launcher, run live from the app. Qt only (QProcess): the app never talks MPI itself.
//
// A run is one process started from an argument list, never a shell string:
//   local     mpirun --oversubscribe -np <world> <launcher> bench ... --jsonl -        (local_command)
//   cluster   the user's template, e.g. "srun -n {world} {launcher} {args}"             (template_command)
// (A Slurm batch job is SlurmRun's: live/slurm_run.hpp.)
// `bench --jsonl -` writes its JSON Lines records to standard output, one per line as each is measured, and its
// table to standard error (docs/05-launcher.md). LauncherRun hands standard output as it arrives to a RecordStream
// (live/record_stream.hpp): a line that is a record goes to record_line() and is appended to the run's records file
// (flushed per record); anything else, and all of standard error, goes to log(); progress counts results against
// the config record's plan. finished() comes exactly once per start, with what happened in words. Nothing here
// blocks the thread it runs on, but the destructor of a run still going (it kills the process and reaps it, at most
// a moment).
#pragma once

#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringDecoder>
#include <QStringList>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "costs/measurements.hpp"

class QTimer;

namespace meshloom::app {

class RecordStream;

// A program and its arguments, passed to the OS as they are (no shell, no word splitting).
struct LaunchCommand {
  QString program;
  QStringList arguments;
  friend bool operator==(const LaunchCommand&, const LaunchCommand&) = default;
};

// The command as one line for people (arguments quoted where a shell would need it). Display only: never run.
[[nodiscard]] QString command_text(const LaunchCommand& command);
// `word` as a POSIX shell reads it back as one word: as it is when it holds only [A-Za-z0-9_./:=,+@%-], else in
// single quotes (a quote inside becomes '\''). For command_text, and for the words of a command run by a remote
// shell (ssh) or written into a batch script.
[[nodiscard]] QString shell_quoted(const QString& word);

// What `meshloom-launch bench` measures.
struct BenchSettings {
  QString design_path;      // --design: the mesh (and world) to measure
  int world = 1;            // --world: checked by the launcher against the ranks it was started with
  QString backend = QStringLiteral("mpi");
  QString min_bytes = QStringLiteral("1K");  // -b, as the launcher reads it: "8", "1K", "64M"
  QString max_bytes = QStringLiteral("4M");  // -e
  int step_factor = 2;                        // -f: each size is the previous one times this
  QString dtype = QStringLiteral("float32");  // --dtype
  int warmup_iters = 3;
  int iters = 10;
  // --timing: single_shot times each collective alone after a barrier, as a training step, `run` and `validate` meet
  // it (calibrate's default, so that the calibration predicts them); pipelined times them back to back, as
  // nccl-tests report bus bandwidth.
  QString timing = QStringLiteral("single_shot");
  // --rounds: the sweep repeated, each size a share of the iterations each time, so that a slow spell of the
  // machine falls on every size a little (calibrate's default is 4; at most the iterations). Every size is reported
  // in the last round only, so with more than one the chart stays empty until then: 1 by default here.
  int rounds = 1;
  bool check = false;
  QStringList collectives;  // empty: the launcher's default (every collective)
  QStringList axes;         // empty: every axis, then every flattened axis
  double timeout_s = 60.0;
};

// bench's arguments for `settings`, ending in "--jsonl -":
//   bench --design F --world W --backend B -b MIN -e MAX -f STEP --dtype D -w WARM -n ITERS --timing T
//         --rounds min(R, ITERS) --timeout S [--check] [--collectives a,b] [--axes x,y] --jsonl -
[[nodiscard]] QStringList bench_arguments(const BenchSettings& settings);

// mpirun --oversubscribe -np <world> <launcher> <launcher_args...>
[[nodiscard]] LaunchCommand local_command(const QString& mpirun, const QString& launcher, int world,
                                          const QStringList& launcher_args);

// The user's template, split into words as QProcess::splitCommand does (quotes group words; no shell ever runs
// it), then per word: {world} -> the world, {launcher} -> the launcher program; a word that is exactly {args}
// becomes the launcher's arguments, one word each. nullopt with *error naming the offending text for an empty
// template, a {name} other than these three, a brace left open or closed alone, or no {args} word.
[[nodiscard]] std::optional<LaunchCommand> template_command(const QString& command_template, const QString& launcher,
                                                            int world, const QStringList& launcher_args,
                                                            QString* error);

// How a run ended. Succeeded: exit status 0, a summary record, every accepted record saved. Failed: a non-zero exit
// status (the message has it, the launcher's error records and the tail of standard error), no summary record, or
// records that could not be saved. Crashed: the program died of a signal it did not ask for. Cancelled: cancel().
// FailedToStart: the program could not be started (the message names it), the records file not created, or (Slurm)
// the job refused by sbatch. TimedOut: a Slurm job that reached its time limit. Whatever ended the run, what was
// measured stays: measurements() and the records file hold every accepted record.
struct RunOutcome {
  enum class Status { Succeeded, Failed, Crashed, Cancelled, FailedToStart, TimedOut };
  Status status = Status::Succeeded;
  int exit_code = 0;
  int results = 0;             // result records received
  int expected = 0;            // from the config record (0 when none arrived)
  bool summary_ok = false;     // a summary record with "ok": true arrived
  QStringList problems;        // standard output lines that looked like records but were not ("line N: ...", N
                               // counting the lines that start with '{'; other lines are chatter, sent to log())
  QString message;             // in words, for people: what happened and why

  // A run that never started (a records file that cannot be made, a program missing, a job refused).
  [[nodiscard]] static RunOutcome failed_to_start(QString message, int exit_code = 0) {
    RunOutcome o;
    o.status = Status::FailedToStart;
    o.exit_code = exit_code;
    o.message = std::move(message);
    return o;
  }
};

// What a process writes, handed on in whole lines: a line it wrote in two pieces, or a character split across two
// reads, comes out once and whole. take() decodes `bytes` (the system's encoding) and gives the text through its
// last newline (all of it once 64 Ki characters wait without one); rest() gives what is left, at the end.
class LineBuffer {
public:
  [[nodiscard]] QString take(const QByteArray& bytes);
  [[nodiscard]] QString rest();
  void reset();

private:
  QStringDecoder decoder_{QStringDecoder::System};
  QString pending_;
};

class LauncherRun : public QObject {
  Q_OBJECT

public:
  // How long a cancelled run has after SIGTERM before it is killed.
  static constexpr int kKillGraceMs = 3000;

  explicit LauncherRun(QObject* parent = nullptr);
  ~LauncherRun() override;  // kills a run still going (and waits for it, briefly)

  // Starts `command`; accepted records are appended to `records_path` (created or truncated; "" to keep none).
  // False when a run is under way (nothing emitted: that run keeps its one finished()), or, with
  // finished(FailedToStart) already emitted, when the records file cannot be created. A program that cannot be
  // started is reported by finished(FailedToStart), naming it.
  bool start(const LaunchCommand& command, const QString& records_path);
  // SIGTERM (mpirun passes it to the ranks), then SIGKILL after kKillGraceMs. finished(Cancelled) follows.
  void cancel();

  [[nodiscard]] bool running() const;
  [[nodiscard]] const Measurements& measurements() const noexcept;
  [[nodiscard]] int results() const noexcept;
  [[nodiscard]] int expected_results() const noexcept;
  [[nodiscard]] const QString& records_path() const noexcept;
  // The last lines of standard error (at most kStderrTail characters), for messages.
  [[nodiscard]] QString stderr_tail() const;
  static constexpr int kStderrTail = 2000;

signals:
  void record_line(const QString& line);  // a record from standard output, as it arrived
  void log(const QString& text);          // standard error, and standard output lines that are not records
  void progress(int done, int total);     // after the config record and after each result
  void finished(const meshloom::app::RunOutcome& outcome);

private:
  void read_stdout();
  void read_stderr();
  void on_finished(int exit_code, QProcess::ExitStatus status);
  void on_error(QProcess::ProcessError error);
  void finish(RunOutcome outcome);

  QProcess* process_ = nullptr;
  QTimer* kill_timer_ = nullptr;
  RecordStream* stream_ = nullptr;
  QString program_;
  LineBuffer stderr_lines_;  // standard error, logged in whole lines
  QString stderr_;
  bool cancelled_ = false;
  bool done_ = true;
};

// The arguments of the launcher's commands that only read and write files (no MPI, a second or so):
//   calibrate --from RECORDS --out FILE                                fits a calibration to a run's bench records
//   refine --calibration CAL --records R [--records R ...] --out FILE  corrects its curves by what plans measured
[[nodiscard]] QStringList calibrate_arguments(const QString& records, const QString& out);
[[nodiscard]] QStringList refine_arguments(const QString& calibration, const QStringList& records, const QString& out);

// One such command run (start(launcher, calibrate_arguments(...))). finished(ok, why) comes once per start: why is
// the launcher's error line (or why it did not start) when not ok; log() carries its output as it arrives.
class FileJob : public QObject {
  Q_OBJECT

public:
  explicit FileJob(QObject* parent = nullptr);
  ~FileJob() override;
  void start(const QString& launcher, const QStringList& arguments);
  [[nodiscard]] bool running() const;

signals:
  void log(const QString& text);
  void finished(bool ok, const QString& why);

private:
  void read_output();

  QProcess* process_ = nullptr;
  LineBuffer lines_;
  QString output_;
  bool done_ = true;
};

}  // namespace meshloom::app
