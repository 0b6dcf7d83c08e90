// CostsPanel: the measured cost of every collective on every mesh axis, and the loop that feeds the planner with
// it. A thin view that composes:
//   - a CostChart (time or bus bandwidth against message size, one series per axis, the fitted model over it, its
//     own pickers for the collective, the metric and the axes shown); Open (a bench --jsonl file), Load
//     calibration, Export PNG / PDF;
//   - beside it, in a second tab, a PredictionChart: "Open run or validate records..." reads the step records of
//     `meshloom-launch run --jsonl` or `validate --jsonl` and plots each cost model's predicted step time against
//     the measured one, with each model's error statistics (PNG / PDF export the tab shown);
//   - a live run: "Run benchmark..." asks for a RunSettings (RunDialog) and starts the launcher through a
//     LauncherRun (local ranks under mpirun, or the user's cluster command template, always as an argument list)
//     or submits it as a Slurm batch job through a SlurmRun (sbatch, its state from squeue / scontrol in the
//     message line, Cancel runs scancel); records stream into the chart as they arrive, with a progress bar,
//     Cancel, and the launcher's output and errors in a log. The run's files go to a folder of their own
//     (run_dir(): the design as run, bench.jsonl with every accepted record, calibration.json once fitted,
//     calibration.refined-<time>.json per correction; a Slurm job's script, records and output too), so a crashed
//     launcher leaves what was measured;
//   - recalibration: "Fit calibration" runs `meshloom-launch calibrate --from bench.jsonl --out calibration.json`
//     (no MPI), shows the fitted model over the points, and "Apply to planner" hands the file to the window
//     (apply_requested), which makes it the design's calibration as one undoable edit; "Correct by records..."
//     runs `meshloom-launch refine` on the calibration shown with run or validate records (what plans measured when
//     they ran) and shows the corrected calibration, for Apply in turn.
// Nothing here talks to MPI: the launcher does.
#pragma once

#include <QString>
#include <QWidget>

#include <functional>
#include <memory>
#include <utility>
#include <optional>

#include "live/launcher_run.hpp"
#include "live/slurm_submit.hpp"

class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTabWidget;

namespace meshloom::app {

class CostChart;
class DesignDocument;
class SlurmRun;
class FitTableModel;
class PredictionChart;

// What the run dialog asks for, remembered between runs (QSettings).
struct RunSettings {
  enum class Where { Local, Template, Slurm };
  Where where = Where::Local;
  QString launcher;         // the meshloom-launch program (Slurm: its path on the job's nodes)
  QString mpirun;           // for Local
  QString command_template; // for Template: e.g. "srun -n {world} {launcher} {args}"
  SlurmSettings slurm;      // for Slurm: partition, nodes, tasks per node, GPUs, time, extra options, login node
  BenchSettings bench;      // world, sizes, collectives, backend, ... (design_path is filled in by the panel)

  // The saved settings, with defaults for what was never saved: the launcher beside this program (or on PATH),
  // mpirun from PATH, the design's world (Slurm: nodes x tasks per node made the world again when the saved ones
  // do not make it).
  [[nodiscard]] static RunSettings load(int world);
  void save() const;
  // The command that runs the benchmark (local_command or template_command over bench_arguments; Slurm: the sbatch
  // command, which reads slurm_script() on standard input); nullopt with the reason in *error when the template does
  // not expand.
  [[nodiscard]] std::optional<LaunchCommand> command(QString* error) const;
  // Slurm: the batch script of a run whose files go to `run_dir` (batch_script); nullopt with the reason.
  [[nodiscard]] std::optional<QString> slurm_script(const QString& run_dir, QString* error) const;
};

class CostsPanel : public QWidget {
  Q_OBJECT

public:
  explicit CostsPanel(DesignDocument* doc, QWidget* parent = nullptr);
  ~CostsPanel() override;

  [[nodiscard]] CostChart* chart() const noexcept { return chart_; }
  [[nodiscard]] PredictionChart* prediction_chart() const noexcept { return prediction_chart_; }
  // The views: the cost chart (tab 0), predicted against measured (tab 1), and the calibration's fits (tab 2: a
  // table of every curve's model, alpha, bus bandwidth, R² and held-out error, with a one-line summary).
  [[nodiscard]] QTabWidget* views() const noexcept { return views_; }
  [[nodiscard]] LauncherRun* run() const noexcept { return run_; }
  // The Slurm side of live runs (Run benchmark... in Slurm mode).
  [[nodiscard]] SlurmRun* slurm_run() const noexcept { return slurm_; }
  [[nodiscard]] FitTableModel* fits() const noexcept { return fits_; }
  [[nodiscard]] QString fits_summary() const;

  // Loads a bench JSON Lines file into the chart (replacing its points). Empty on success, else the reason; lines
  // that are not records are listed in the log and the rest is shown.
  QString open_measurements(const QString& path);
  // Loads a calibration file for the fitted lines (the engine's strict reader). Empty on success, else the reason.
  QString load_calibration(const QString& path);
  // Loads the step records of a run or validate --jsonl file into the predicted-against-measured view and shows
  // it. Empty on success (lines that are not records are listed in the log and the rest is shown), else the
  // reason the file cannot be read (nothing changes then). Emits predictions_loaded.
  QString open_predictions(const QString& path);
  // Asks for a run or validate --jsonl file and opens it (open_predictions).
  void open_predictions_dialog();
  // The records file shown in the predicted-against-measured view; empty before one is opened.
  [[nodiscard]] const QString& predictions_path() const noexcept { return predictions_path_; }

  // Starts a benchmark of the design's mesh with `settings` (the design is saved into the run's folder first; in
  // Slurm mode the batch script too, as job.sbatch, which is then submitted). False with the reason in message()
  // when it cannot start (a run under way, a bad template, Slurm settings that make no script, no folder).
  bool start_run(RunSettings settings);
  // The same in the run folder `dir` (new_run_dir(): the Run dialog previews its command with the design copy there).
  bool start_run(RunSettings settings, const QString& dir);
  // A new run's folder under the runs root (a time stamp), not yet created.
  [[nodiscard]] QString new_run_dir() const;
  // The design's copy a run in `dir` runs on.
  [[nodiscard]] static QString run_design_path(const QString& dir);
  // Asks for the settings (RunDialog) and starts the run.
  void open_run_dialog();
  void cancel_run();
  [[nodiscard]] bool running() const;
  // Fits a calibration to the last run's records (meshloom-launch calibrate --from). False with the reason in
  // message() when there is nothing to fit or the launcher cannot start; the outcome arrives as calibrated().
  bool fit_calibration();
  // Corrects the calibration shown by what plans measured when they ran: meshloom-launch refine --calibration
  // calibration_path() --records R ... --out <folder>/calibration.refined-<time>.json (no MPI), `records` being run
  // or validate --jsonl files. False with the reason in message() when there is no calibration with curves, no
  // records, a run or job under way, or no folder; the outcome arrives as calibrated(), and the corrected file is
  // shown (the Fits tab's as-run factors) for Apply to planner.
  bool refine_calibration(const QStringList& records);
  // Asks for run or validate records (one or more; from the folder of the records shown) and corrects by them.
  void refine_dialog();
  // The bench records the chart shows, which Fit calibration fits; empty when none.
  [[nodiscard]] const QString& records_path() const noexcept { return records_path_; }
  // The calibration file fitted last (or loaded), for Apply; empty when none.
  [[nodiscard]] const QString& calibration_path() const noexcept { return calibration_path_; }
  // The folder of the last run; empty before the first.
  [[nodiscard]] const QString& run_dir() const noexcept { return run_dir_; }
  // The line under the chart: what happened last (run finished, failed, fitted, ...).
  [[nodiscard]] QString message() const;
  [[nodiscard]] QString log_text() const;
  [[nodiscard]] int progress_value() const;
  [[nodiscard]] int progress_maximum() const;

  // The launcher that fits and corrects calibrations (calibrate --from, refine); default: the last run's, else the
  // saved setting's.
  void set_launcher(const QString& launcher) { launcher_ = launcher; }
  // Where runs are kept (default: QStandardPaths::AppLocalDataLocation/runs); tests point it elsewhere.
  void set_runs_root(const QString& dir) { runs_root_ = dir; }

signals:
  // A run ended (any status).
  void run_finished(const RunOutcome& outcome);
  // calibrate --from or refine ended: the calibration file on success, else empty with the reason in message().
  void calibrated(const QString& path);
  // The user asked to make this calibration the design's ("Apply to planner").
  void apply_requested(const QString& path);
  // Run or validate records were loaded into the predicted-against-measured view (prediction_chart()->records()).
  void predictions_loaded(const QString& path);

private:
  void build();
  void sync_buttons();
  void show_message(const QString& text, bool error);
  void append_log(const QString& text);
  void open_dialog();
  void calibration_dialog();
  void export_dialog(bool pdf);
  void on_finished(const RunOutcome& outcome);
  void on_record_line(const QString& line);
  void on_progress(int done, int total);
  bool start_slurm(const RunSettings& settings, const QString& dir);
  // Why the calibration shown cannot be applied to the design (calibration_mismatch); empty when it can, or when
  // there is none.
  [[nodiscard]] QString apply_refusal() const;
  // Why Correct by records cannot run (no calibration, or one without curves); empty when it can.
  [[nodiscard]] QString refine_refusal() const;
  [[nodiscard]] bool job_busy() const;
  // Before a fit or a correction: nothing under way (else false with the reason in message()), the folder its file
  // goes to (the last run's, or a new one), and the launcher.
  bool ready_for_job();
  // What the message line says while a file job runs, and when it fails ("%1": the launcher's reason).
  struct JobText {
    QString pending, failed;
  };
  // Runs a file job writing `out`; on success loads `out` and says success(out), else why (text.failed, or that
  // `out` cannot be loaded). Emits calibrated() either way.
  void start_job(const QStringList& arguments, const QString& out, const JobText& text,
                 std::function<QString(const QString&)> success);
  // Another design replaced the document: what was shown for the last one goes.
  void forget_document();
  // A run (local, template or Slurm) starts in `dir`: its records file, the chart kept until the first record, the
  // log cleared, the progress bar busy.
  void begin_run(const QString& dir, const QString& launcher);
  void sync_fits();  // the Fits tab shows the chart's calibration

  DesignDocument* doc_;
  CostChart* chart_ = nullptr;
  PredictionChart* prediction_chart_ = nullptr;
  QTabWidget* views_ = nullptr;
  FitTableModel* fits_ = nullptr;
  QLabel* fits_summary_ = nullptr;
  QWidget* fits_page_ = nullptr;  // the Fits tab
  LauncherRun* run_ = nullptr;
  SlurmRun* slurm_ = nullptr;
  bool slurm_active_ = false;  // the run under way (or last run) is slurm_'s
  std::unique_ptr<FileJob> job_;  // calibrate --from or refine
  QString runs_root_;
  QString run_dir_;
  QString records_path_;
  QString calibration_path_;
  QString predictions_path_;
  QString launcher_;  // the launcher of the last run (calibrate and refine use the same)
  bool clear_on_first_record_ = false;  // a run started: its first record replaces the chart shown
  std::pair<QString, QString> shown_before_run_;  // records_path_ and run_dir_ of that chart, kept if none arrives

  QPushButton* run_button_ = nullptr;
  QPushButton* cancel_button_ = nullptr;
  QPushButton* fit_button_ = nullptr;
  QPushButton* refine_button_ = nullptr;
  QPushButton* apply_button_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* message_ = nullptr;
  QPlainTextEdit* log_ = nullptr;
};

}  // namespace meshloom::app
