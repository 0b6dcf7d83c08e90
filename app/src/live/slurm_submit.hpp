// Slurm from the app, the pure part: the batch script a benchmark is submitted as, the commands that submit, watch
// and cancel it (argument lists, run here or on a login node over ssh), and the reading of what Slurm answers
// (`sbatch --parsable`, `squeue`, `scontrol show job`). No process is started here: SlurmRun (slurm_run.hpp) runs
// these commands. Tested with texts captured from Slurm 22.05 (tests/app/live/test_slurm_submit.cpp).
//
// The job runs `srun --mpi=pmix <launcher> bench ... --jsonl <run folder>/job.jsonl`, its output in job.out beside
// it: the run's folder must be one the job's nodes see at the same path (this machine's folder when this machine is
// the cluster, or a shared filesystem; docs/05-launcher.md).
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <optional>

#include "live/launcher_run.hpp"

namespace meshloom::app {

// What the Run dialog's Slurm mode asks for (remembered in RunSettings).
struct SlurmSettings {
  QString partition;                            // empty: the cluster's default partition
  int nodes = 1;                                // --nodes
  int tasks_per_node = 1;                       // --ntasks-per-node: nodes x tasks per node must be the world
  int gpus_per_task = 0;                        // --gpus-per-task (0: none asked for)
  QString time_limit = QStringLiteral("00:30:00");  // --time, as Slurm reads it; empty: the partition's default
  QString extra_options;                        // more sbatch options, as typed ("--account=proj --qos=debug")
  QString login_host;                           // empty: Slurm's commands run here; else over `ssh <login_host>`
  friend bool operator==(const SlurmSettings&, const SlurmSettings&) = default;
};

// The files of a Slurm run in the run's folder.
struct SlurmJobFiles {
  QString script;   // job.sbatch: the script as submitted (a copy, for people; sbatch reads it on standard input)
  QString records;  // job.jsonl: the records the job writes (bench --jsonl)
  QString output;   // job.out: the job's standard output and error (#SBATCH --output)
};
[[nodiscard]] SlurmJobFiles slurm_job_files(const QString& run_dir);

// `text` split into words as a POSIX shell splits them: blanks separate, '...' keeps everything, "..." keeps all but
// \" \\ \$ \` (and a backslash before a newline), a backslash outside quotes keeps the next character. What only a
// shell could do is refused, nullopt with *error naming it: an unmatched quote, a trailing backslash, and unquoted
// $ ` ; | & < > ( ) or a # starting a word (the options are given to sbatch, never to a shell).
[[nodiscard]] std::optional<QStringList> split_shell_words(const QString& text, QString* error);

// The extra sbatch options of `settings` as words, each checked: every option starts with '-' (a word that does
// not is the value of the option before it); refused, naming the option and why: --output/-o and --error/-e (the
// app names the job's output, to show its end), --parsable, --wrap, --wait/-W, --test-only, and the options that
// have a field of their own (--partition/-p, --nodes/-N, --ntasks-per-node, --ntasks/-n, --time/-t,
// --gpus-per-task, --chdir/-D).
[[nodiscard]] std::optional<QStringList> sbatch_extra_options(const SlurmSettings& settings, QString* error);

// Whether `settings` can be submitted for a world of `world` ranks: nullopt when it can, else why, naming the bad
// value (nodes < 1, nodes x tasks per node != world, a partition or login host Slurm or ssh would not take, a time
// limit Slurm does not read, GPUs < 0, extra options refused above).
[[nodiscard]] std::optional<QString> slurm_settings_error(const SlurmSettings& settings, int world);

// The batch script that runs `launcher bench` with `bench` (its --jsonl replaced by files.records) on the job's
// ranks: #SBATCH lines for the job name, partition, nodes, tasks per node, GPUs per task, time, the folder and the
// output file, then the extra options; a check that the launcher exists where the job runs; then
//   srun --mpi=pmix <launcher> bench ... --jsonl <records>
// every word shell-quoted (and every #SBATCH value quoted as sbatch reads it). nullopt with *error when
// slurm_settings_error() refuses the settings.
[[nodiscard]] std::optional<QString> batch_script(const SlurmSettings& settings, const QString& launcher,
                                                  const BenchSettings& bench, const SlurmJobFiles& files,
                                                  QString* error);

// A Slurm command, here ({program, arguments}) or on settings.login_host over ssh: {"ssh", {"-o", "BatchMode=yes",
// host, program, arguments...}} with every remote word shell-quoted (ssh hands the words, joined by spaces, to the
// login node's shell), and BatchMode so that ssh fails instead of asking for a password nobody can type.
[[nodiscard]] LaunchCommand slurm_command(const SlurmSettings& settings, const QString& program,
                                          const QStringList& arguments);
// sbatch --parsable (the script on standard input).
[[nodiscard]] LaunchCommand sbatch_command(const SlurmSettings& settings);
// squeue --noheader --jobs ID --format %T|%r|%N
[[nodiscard]] LaunchCommand squeue_command(const SlurmSettings& settings, const QString& job_id);
// scontrol --oneliner show job ID
[[nodiscard]] LaunchCommand scontrol_command(const SlurmSettings& settings, const QString& job_id);
// scancel ID
[[nodiscard]] LaunchCommand scancel_command(const SlurmSettings& settings, const QString& job_id);
// Over ssh only: the bytes of a remote file from `offset` on, after a marker line (kRemoteReadMarker), so that what a
// login shell prints before the command (a banner from .bashrc) is told apart from the file:
//   sh -c 'printf "%s\n" meshloom-records && exec tail -c +"$1" "$0"' PATH <offset + 1>
[[nodiscard]] LaunchCommand remote_read_command(const SlurmSettings& settings, const QString& path, qint64 offset);
inline constexpr char kRemoteReadMarker[] = "meshloom-records\n";
// The file's bytes in the output of remote_read_command: what follows the first marker line; nullopt without one
// (the command did not run as asked: nothing of it is the file's).
[[nodiscard]] std::optional<QByteArray> remote_read_payload(const QByteArray& output);
// Over ssh only: tail -n LINES PATH.
[[nodiscard]] LaunchCommand remote_tail_command(const SlurmSettings& settings, const QString& path, int lines);

// The job id `sbatch --parsable` printed ("123", or "123;cluster" on a federation); nullopt when it printed none.
[[nodiscard]] std::optional<QString> parse_sbatch_job_id(const QString& output);

// A job as Slurm reports it.
struct SlurmJobState {
  QString state;      // PENDING, RUNNING, COMPLETING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ...
  QString reason;     // why it waits or ended (Resources, Priority, NonZeroExitCode, ...); "" for None
  QString nodes;      // the node list, Slurm's compressed form ("node[1-4]"); "" before it runs
  QString exit_code;  // "code:signal" (scontrol only; "" from squeue)
  friend bool operator==(const SlurmJobState&, const SlurmJobState&) = default;
};

// One line of `squeue --noheader --format %T|%r|%N`; nullopt when squeue listed nothing (the job left the queue).
[[nodiscard]] std::optional<SlurmJobState> parse_squeue(const QString& output);
// `scontrol show job` (one line or many): JobState, Reason, NodeList, ExitCode; nullopt without a JobState.
[[nodiscard]] std::optional<SlurmJobState> parse_scontrol_job(const QString& output);
// Whether Slurm is done with a job in `state` (COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY,
// BOOT_FAIL, DEADLINE, PREEMPTED, REVOKED, SPECIAL_EXIT). COMPLETING is not: the job's processes are still ending.
[[nodiscard]] bool is_final_state(const QString& state);
// For the message line: "Job 123: PENDING (Resources)", "Job 123: RUNNING on node[1-2]", "Job 123: COMPLETED",
// "Job 123: FAILED (exit code 2)".
[[nodiscard]] QString describe_job(const QString& job_id, const SlurmJobState& state);

// What a Slurm run ended with, and its outcome (slurm_outcome).
struct SlurmEnd {
  QString job_id;
  SlurmJobState state;         // a final state
  bool cancel_requested = false;
  int results = 0;
  int expected = 0;
  bool summary_seen = false;
  bool summary_ok = false;
  QStringList run_errors;      // the launcher's error records, "rank R: message"
  QString records_error;       // records that could not be saved
  QString time_limit;          // as submitted
  QString output_path;         // the job's output file
  QString output_tail;         // its last lines ("" when it could not be read)
};
// Succeeded: COMPLETED with a summary and every record saved. Cancelled: CANCELLED. TimedOut: TIMEOUT (the time
// limit named). Failed: every other end (the exit code or signal, the launcher's error records), and COMPLETED
// without a summary record. Every message that is not a success ends with the last lines of the job's output.
[[nodiscard]] RunOutcome slurm_outcome(const SlurmEnd& end);

}  // namespace meshloom::app
