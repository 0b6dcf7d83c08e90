// SlurmRun: a benchmark run as a Slurm batch job, watched from the app. The QProcess side of slurm_submit.hpp:
//   submit    `sbatch --parsable` with the script on standard input (over ssh too); submitted(job id), or
//             finished(FailedToStart) with sbatch's own words when it refuses the job (an unknown partition, limits)
//   watch     every poll interval (default 2 s): `squeue` for the job's state, `scontrol show job` once squeue no
//             longer lists it (and for a final state's exit code); state_changed() when what Slurm says changes
//   records   the job's records file (bench --jsonl <run folder>/job.jsonl) read as it grows (here: the bytes past
//             what was read, every half second; over ssh: `tail -c +N` at each poll) and fed to a RecordStream, as
//             LauncherRun feeds standard output: every accepted record appended to the app's records file, flushed
//   end       at a final state: the records read to the end, then finished() once with the outcome (slurm_outcome:
//             completed, failed with its exit code, cancelled, timed out), a failure with the last lines of the
//             job's output file
//   cancel    `scancel <job>`; the job then ends CANCELLED, and what it measured stays.
// Every command is an argument list started asynchronously: nothing here waits on a process in the thread it runs
// on. Destroying a run leaves its job to Slurm (it goes on writing its records file); only the commands under way
// here are ended.
#pragma once

#include <QByteArray>
#include <QObject>
#include <QString>

#include <algorithm>
#include <functional>
#include <optional>

#include "live/launcher_run.hpp"
#include "live/slurm_submit.hpp"

class QProcess;
class QTimer;

namespace meshloom::app {

class RecordStream;

class SlurmRun : public QObject {
  Q_OBJECT

public:
  static constexpr int kDefaultPollMs = 2000;
  static constexpr int kLocalReadMs = 500;    // the records file, when it is on this machine
  static constexpr int kOutputTailLines = 20;  // the job's output shown when it failed
  static constexpr int kCommandTimeoutMs = 60000;  // a Slurm command (or ssh) that takes longer is stopped, failed

  explicit SlurmRun(QObject* parent = nullptr);
  ~SlurmRun() override;

  // How often Slurm is asked for the job's state (tests ask more often).
  void set_poll_interval(int ms);
  [[nodiscard]] int poll_interval() const noexcept { return poll_ms_; }
  // How long one command may take before it is stopped and counts as failed (tests shorten it).
  void set_command_timeout(int ms) { command_timeout_ms_ = std::max(1, ms); }

  // Submits `script` with `settings` (login host, time limit for messages). The job writes files.records and
  // files.output; accepted records are appended to `records_path` (created or truncated; "" keeps none). False when
  // a run is under way (nothing emitted), or, with finished(FailedToStart) already emitted, when the records file
  // cannot be created.
  bool start(const SlurmSettings& settings, const QString& script, const SlurmJobFiles& files,
             const QString& records_path);
  // scancel the job (once sbatch has given its id: a cancel before that waits for it). finished(Cancelled) follows
  // when Slurm says CANCELLED.
  void cancel();

  [[nodiscard]] bool running() const noexcept { return !done_; }
  [[nodiscard]] const QString& job_id() const noexcept { return job_id_; }
  [[nodiscard]] const SlurmJobState& state() const noexcept { return state_; }
  [[nodiscard]] const Measurements& measurements() const noexcept;
  [[nodiscard]] int results() const noexcept;
  [[nodiscard]] int expected_results() const noexcept;
  [[nodiscard]] const QString& records_path() const noexcept;

signals:
  void submitted(const QString& job_id);
  void state_changed(const meshloom::app::SlurmJobState& state);
  void record_line(const QString& line);
  void log(const QString& text);
  void progress(int done, int total);
  void finished(const meshloom::app::RunOutcome& outcome);
  void cancel_failed(const QString& why);  // scancel refused or could not run (Cancel may be pressed again)

private:
  struct Result {
    bool started = true;   // false: the program could not be started (error says why)
    int exit_code = 0;
    QByteArray out;
    QString err;
    QString error;
    bool timed_out = false;  // stopped after command_timeout_ms_ without an answer (err says so)
  };
  using Done = std::function<void(const Result&)>;
  // Runs `command` (with `input` on standard input), then `done` unless the run ended or another started meanwhile.
  void run_command(const LaunchCommand& command, const QByteArray& input, Done done);

  void on_submitted(const Result& r);
  void poll();
  void ask_scontrol(const std::optional<SlurmJobState>& fallback);
  void query_failed(const QString& what, const Result& r);
  void query_failed(const QString& why);  // logged once, until Slurm answers again
  void take_state(const SlurmJobState& state);
  void read_local();
  void read_remote(std::function<void()> then);
  void send_scancel();
  void wrap_up();
  // The job is gone from squeue and scontrol alike: read its records to the end, then end by what they say.
  void forgotten(const QString& scontrol_said);
  void conclude_or_fetch_tail();
  void finish(RunOutcome outcome);

  SlurmSettings settings_;
  SlurmJobFiles files_;
  RecordStream* stream_ = nullptr;
  QTimer* poll_timer_ = nullptr;
  QTimer* read_timer_ = nullptr;
  int poll_ms_ = kDefaultPollMs;
  int command_timeout_ms_ = kCommandTimeoutMs;
  QString job_id_;
  SlurmJobState state_;
  QString last_query_error_;
  qint64 offset_ = 0;          // bytes of the job's records file read so far
  quint64 generation_ = 0;     // which start() the commands under way belong to
  bool querying_ = false;
  bool reading_ = false;
  std::function<void()> after_read_;  // over ssh: what waits for one more read of the records
  bool cancel_requested_ = false;
  bool cancel_sent_ = false;
  bool ending_ = false;
  bool done_ = true;
};

}  // namespace meshloom::app
