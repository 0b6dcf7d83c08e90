#include "costs/costs_panel.hpp"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QSaveFile>
#include <QPushButton>
#include <QSettings>
#include <QSignalBlocker>
#include <QSplitter>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <unistd.h>

#include <algorithm>
#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "costs/cost_chart.hpp"
#include "costs/fit_table.hpp"
#include "document/design_document.hpp"
#include "shell/inline_message.hpp"
#include "meshloom/design/design.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "costs/prediction_chart.hpp"
#include "costs/prediction_points.hpp"
#include "live/run_dialog.hpp"
#include "live/slurm_run.hpp"

namespace meshloom::app {

namespace {

const char* const kGroup = "live_run";

QString q(const std::string& s) { return QString::fromStdString(s); }

// The launcher beside this program (a build tree: app/ and launcher/ side by side; an install: the same bin/), else
// on PATH; "meshloom-launch" when neither has it (the run then fails to start and says so).
QString default_launcher() {
  const QDir here(QCoreApplication::applicationDirPath());
  for (const QString& candidate : {here.filePath(QStringLiteral("meshloom-launch")),
                                   here.filePath(QStringLiteral("../launcher/meshloom-launch"))}) {
    const QFileInfo info(candidate);
    if (info.isFile() && info.isExecutable()) return QDir::cleanPath(info.absoluteFilePath());
  }
  const QString found = QStandardPaths::findExecutable(QStringLiteral("meshloom-launch"));
  return found.isEmpty() ? QStringLiteral("meshloom-launch") : found;
}

QString default_mpirun() {
  const QString found = QStandardPaths::findExecutable(QStringLiteral("mpirun"));
  return found.isEmpty() ? QStringLiteral("mpirun") : found;
}

}  // namespace

// ---- RunSettings ---------------------------------------------------------------------------------------------------

RunSettings RunSettings::load(int world) {
  QSettings s;
  s.beginGroup(QLatin1String(kGroup));
  RunSettings r;
  const QString where = s.value(QStringLiteral("where")).toString();
  r.where = where == QLatin1String("template") ? Where::Template
            : where == QLatin1String("slurm")  ? Where::Slurm
                                                : Where::Local;
  r.launcher = s.value(QStringLiteral("launcher")).toString();
  // A Slurm job runs the launcher on the cluster's nodes (over ssh, on another machine): its path need not exist here.
  if (r.launcher.isEmpty() || (r.where != Where::Slurm && !QFileInfo(r.launcher).isExecutable())) {
    r.launcher = default_launcher();
  }
  r.mpirun = s.value(QStringLiteral("mpirun"), default_mpirun()).toString();
  r.command_template = s.value(QStringLiteral("template")).toString();
  r.slurm.partition = s.value(QStringLiteral("slurm_partition")).toString();
  r.slurm.nodes = std::max(1, s.value(QStringLiteral("slurm_nodes"), 1).toInt());
  r.slurm.tasks_per_node = std::max(1, s.value(QStringLiteral("slurm_tasks_per_node"), world).toInt());
  if (world >= 1 && static_cast<qint64>(r.slurm.nodes) * r.slurm.tasks_per_node != world) {
    // Saved for another design's world: the same nodes when they divide this world, else one node.
    if (world % r.slurm.nodes != 0) r.slurm.nodes = 1;
    r.slurm.tasks_per_node = world / r.slurm.nodes;
  }
  r.slurm.gpus_per_task = std::max(0, s.value(QStringLiteral("slurm_gpus_per_task"), 0).toInt());
  r.slurm.time_limit = s.value(QStringLiteral("slurm_time"), r.slurm.time_limit).toString();
  r.slurm.extra_options = s.value(QStringLiteral("slurm_options")).toString();
  r.slurm.login_host = s.value(QStringLiteral("slurm_login_host")).toString();
  r.bench.world = world;
  r.bench.backend = s.value(QStringLiteral("backend"), r.bench.backend).toString();
  r.bench.min_bytes = s.value(QStringLiteral("min_bytes"), r.bench.min_bytes).toString();
  r.bench.max_bytes = s.value(QStringLiteral("max_bytes"), r.bench.max_bytes).toString();
  r.bench.step_factor = std::max(2, s.value(QStringLiteral("step_factor"), r.bench.step_factor).toInt());
  r.bench.dtype = s.value(QStringLiteral("dtype"), r.bench.dtype).toString();
  r.bench.warmup_iters = s.value(QStringLiteral("warmup_iters"), r.bench.warmup_iters).toInt();
  r.bench.iters = s.value(QStringLiteral("iters"), r.bench.iters).toInt();
  const QString timing = s.value(QStringLiteral("timing"), r.bench.timing).toString();
  if (timing == QLatin1String("single_shot") || timing == QLatin1String("pipelined")) r.bench.timing = timing;
  r.bench.rounds = std::max(1, s.value(QStringLiteral("rounds"), r.bench.rounds).toInt());
  r.bench.check = s.value(QStringLiteral("check"), r.bench.check).toBool();
  r.bench.collectives = s.value(QStringLiteral("collectives"), r.bench.collectives).toStringList();
  return r;
}

void RunSettings::save() const {
  QSettings s;
  s.beginGroup(QLatin1String(kGroup));
  s.setValue(QStringLiteral("where"), where == Where::Template ? QStringLiteral("template")
                                     : where == Where::Slurm  ? QStringLiteral("slurm")
                                                              : QStringLiteral("local"));
  s.setValue(QStringLiteral("launcher"), launcher);
  s.setValue(QStringLiteral("mpirun"), mpirun);
  s.setValue(QStringLiteral("template"), command_template);
  s.setValue(QStringLiteral("slurm_partition"), slurm.partition);
  s.setValue(QStringLiteral("slurm_nodes"), slurm.nodes);
  s.setValue(QStringLiteral("slurm_tasks_per_node"), slurm.tasks_per_node);
  s.setValue(QStringLiteral("slurm_gpus_per_task"), slurm.gpus_per_task);
  s.setValue(QStringLiteral("slurm_time"), slurm.time_limit);
  s.setValue(QStringLiteral("slurm_options"), slurm.extra_options);
  s.setValue(QStringLiteral("slurm_login_host"), slurm.login_host);
  s.setValue(QStringLiteral("backend"), bench.backend);
  s.setValue(QStringLiteral("min_bytes"), bench.min_bytes);
  s.setValue(QStringLiteral("max_bytes"), bench.max_bytes);
  s.setValue(QStringLiteral("step_factor"), bench.step_factor);
  s.setValue(QStringLiteral("dtype"), bench.dtype);
  s.setValue(QStringLiteral("warmup_iters"), bench.warmup_iters);
  s.setValue(QStringLiteral("iters"), bench.iters);
  s.setValue(QStringLiteral("timing"), bench.timing);
  s.setValue(QStringLiteral("rounds"), bench.rounds);
  s.setValue(QStringLiteral("check"), bench.check);
  s.setValue(QStringLiteral("collectives"), bench.collectives);
}

std::optional<LaunchCommand> RunSettings::command(QString* error) const {
  if (where == Where::Slurm) return sbatch_command(slurm);
  const QStringList args = bench_arguments(bench);
  if (where == Where::Local) {
    // A path must name a program; a bare name must be on PATH: refused here, before the settings are kept.
    const QFileInfo program(mpirun);
    const bool found = mpirun.contains(QLatin1Char('/')) ? program.isFile() && program.isExecutable()
                                                         : !QStandardPaths::findExecutable(mpirun).isEmpty();
    if (mpirun.isEmpty() || !found) {
      if (error) {
        *error = mpirun.isEmpty() ? QCoreApplication::translate("RunSettings", "Name the mpirun program.")
                                  : QCoreApplication::translate("RunSettings", "mpirun \"%1\" is not a program on this "
                                                                               "machine (no such file, or not executable)")
                                        .arg(mpirun);
      }
      return std::nullopt;
    }
    LaunchCommand c = local_command(mpirun, launcher, bench.world, args);
    if (::geteuid() == 0) c.arguments.prepend(QStringLiteral("--allow-run-as-root"));  // Open MPI refuses root otherwise
    return c;
  }
  return template_command(command_template, launcher, bench.world, args, error);
}

std::optional<QString> RunSettings::slurm_script(const QString& run_dir, QString* error) const {
  return batch_script(slurm, launcher, bench, slurm_job_files(run_dir), error);
}

// ---- CostsPanel ----------------------------------------------------------------------------------------------------

CostsPanel::CostsPanel(DesignDocument* doc, QWidget* parent)
    : QWidget(parent),
      doc_(doc),
      runs_root_(QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + QStringLiteral("/runs")) {
  build();
  sync_buttons();
}

CostsPanel::~CostsPanel() = default;

void CostsPanel::build() {
  chart_ = new CostChart(this);
  prediction_chart_ = new PredictionChart(this);
  views_ = new QTabWidget(this);
  views_->setDocumentMode(true);
  views_->addTab(chart_, tr("Cost chart"));
  views_->addTab(prediction_chart_, tr("Predicted vs measured"));
  auto* fits_page = fits_page_ = new QWidget(this);
  fits_ = new FitTableModel(this);
  fits_summary_ = new QLabel(tr("Load or fit a calibration to see its fits."), fits_page);
  fits_summary_->setObjectName(QStringLiteral("fits_summary"));
  fits_summary_->setWordWrap(true);
  auto* fits_view = new QTableView(fits_page);
  fits_view->setObjectName(QStringLiteral("fits_table"));
  fits_view->setModel(fits_);
  fits_view->setTabKeyNavigation(false);
  fits_view->setSelectionBehavior(QAbstractItemView::SelectRows);
  fits_view->verticalHeader()->hide();
  fits_view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  auto* fits_layout = new QVBoxLayout(fits_page);
  fits_layout->setContentsMargins(0, 4, 0, 0);
  fits_layout->addWidget(fits_summary_);
  fits_layout->addWidget(fits_view, 1);
  views_->addTab(fits_page, tr("Fits"));
  views_->setTabToolTip(2, tr("The calibration's fits: model, alpha, bus bandwidth, R² and held-out error per curve"));
  views_->setTabToolTip(1, tr("Each cost model's predicted step time against the measured one "
                              "(meshloom-launch run or validate --jsonl)"));
  run_ = new LauncherRun(this);
  slurm_ = new SlurmRun(this);

  auto* open = new QPushButton(tr("Open..."), this);
  open->setToolTip(tr("Plot a bench --jsonl file"));
  auto* calibration = new QPushButton(tr("Load calibration..."), this);
  calibration->setToolTip(tr("Draw a calibration's fitted model over the points"));
  auto* predictions = new QPushButton(tr("Open run or validate records..."), this);
  predictions->setToolTip(tr("Plot what each cost model predicted for every step against what it measured "
                             "(meshloom-launch run --jsonl or validate --jsonl)"));
  auto* png = new QPushButton(tr("PNG..."), this);
  auto* pdf = new QPushButton(tr("PDF..."), this);
  png->setToolTip(tr("Export the chart shown as a PNG image"));
  pdf->setToolTip(tr("Export the chart shown as a PDF document"));

  run_button_ = new QPushButton(tr("Run benchmark..."), this);
  run_button_->setToolTip(tr("Measure every collective on every axis of this mesh with meshloom-launch bench"));
  cancel_button_ = new QPushButton(tr("Cancel"), this);
  fit_button_ = new QPushButton(tr("Fit calibration"), this);
  fit_button_->setToolTip(tr("Fit alpha and bus bandwidth per axis and collective to the run's points "
                             "(meshloom-launch calibrate --from)"));
  refine_button_ = new QPushButton(tr("Correct by records..."), this);  // its tooltip: sync_buttons
  apply_button_ = new QPushButton(tr("Apply to planner"), this);
  apply_button_->setToolTip(tr("Make this calibration the design's and plan with it (undoable)"));
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 1);
  progress_->setValue(0);
  progress_->setFormat(tr("No run yet"));
  message_ = new QLabel(this);
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->hide();
  log_ = new QPlainTextEdit(this);
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(5000);
  log_->setPlaceholderText(tr("The launcher's output appears here during a run."));
  log_->setLineWrapMode(QPlainTextEdit::NoWrap);
  QFont mono = log_->font();
  mono.setFamily(QStringLiteral("monospace"));
  mono.setStyleHint(QFont::Monospace);
  log_->setFont(mono);

  // The chart has its own pickers (collective, metric, axes); the files it reads and writes sit beside the tabs,
  // in the tab bar's corner (a row of their own scrolled the dock at 1280x800).
  auto* corner = new QWidget(this);
  auto* files = new QHBoxLayout(corner);
  files->setContentsMargins(0, 0, 0, 2);
  files->addWidget(open);
  files->addWidget(calibration);
  files->addWidget(predictions);
  files->addWidget(png);
  files->addWidget(pdf);

  // Beside the charts (the dock is wide and short): the run's buttons and progress, its message, and the launcher's
  // log under them, so that the chart keeps the dock's whole height.
  auto* runs = new QGridLayout;
  runs->setContentsMargins(0, 0, 0, 0);
  runs->addWidget(run_button_, 0, 0);
  runs->addWidget(cancel_button_, 0, 1);
  runs->addWidget(progress_, 1, 0, 1, 2);
  runs->addWidget(fit_button_, 2, 0);
  runs->addWidget(refine_button_, 2, 1);
  runs->addWidget(apply_button_, 3, 0, 1, 2);
  auto* side = new QWidget(this);
  auto* side_layout = new QVBoxLayout(side);
  side_layout->setContentsMargins(0, 0, 0, 0);
  side_layout->addLayout(runs);
  side_layout->addWidget(message_);
  side_layout->addWidget(log_, 1);
  views_->setCornerWidget(corner, Qt::TopRightCorner);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->setChildrenCollapsible(false);
  split->addWidget(views_);
  split->addWidget(side);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(split);

  connect(open, &QPushButton::clicked, this, &CostsPanel::open_dialog);
  connect(calibration, &QPushButton::clicked, this, &CostsPanel::calibration_dialog);
  connect(predictions, &QPushButton::clicked, this, &CostsPanel::open_predictions_dialog);
  connect(png, &QPushButton::clicked, this, [this] { export_dialog(false); });
  connect(pdf, &QPushButton::clicked, this, [this] { export_dialog(true); });
  connect(run_button_, &QPushButton::clicked, this, &CostsPanel::open_run_dialog);
  connect(cancel_button_, &QPushButton::clicked, this, &CostsPanel::cancel_run);
  connect(fit_button_, &QPushButton::clicked, this, [this] { (void)fit_calibration(); });
  connect(refine_button_, &QPushButton::clicked, this, &CostsPanel::refine_dialog);
  connect(apply_button_, &QPushButton::clicked, this, [this] {
    if (!calibration_path_.isEmpty()) emit apply_requested(calibration_path_);
  });

  // The live run: records into the chart as they arrive (the chart shown before stays until the first one: a run
  // that fails to start leaves it); everything else into the log.
  connect(run_, &LauncherRun::record_line, this, &CostsPanel::on_record_line);
  connect(slurm_, &SlurmRun::record_line, this, &CostsPanel::on_record_line);
  // What the dock shows belongs to its design: another design (new, open, a recovered copy) starts it empty, and
  // every edit re-checks whether the calibration shown can be applied to the design as it now is.
  connect(doc_, &DesignDocument::document_replaced, this, &CostsPanel::forget_document);
  connect(doc_, &DesignDocument::design_changed, this, &CostsPanel::sync_buttons);
  connect(run_, &LauncherRun::log, this, &CostsPanel::append_log);
  connect(run_, &LauncherRun::progress, this, &CostsPanel::on_progress);
  connect(run_, &LauncherRun::finished, this, &CostsPanel::on_finished);
  // A Slurm job: its state as Slurm reports it in the message line, the rest as for a run.
  connect(slurm_, &SlurmRun::log, this, &CostsPanel::append_log);
  connect(slurm_, &SlurmRun::progress, this, &CostsPanel::on_progress);
  connect(slurm_, &SlurmRun::finished, this, &CostsPanel::on_finished);
  connect(slurm_, &SlurmRun::submitted, this, [this](const QString& id) {
    show_message(tr("Job %1: submitted").arg(id), false);
  });
  connect(slurm_, &SlurmRun::state_changed, this, [this](const SlurmJobState& state) {
    if (is_final_state(state.state)) return;  // the outcome's message says it, with what was measured
    show_message(describe_job(slurm_->job_id(), state), false);
  });
  connect(slurm_, &SlurmRun::cancel_failed, this, [this](const QString& why) {
    show_message(tr("Job %1: scancel failed: %2").arg(slurm_->job_id(), why), true);
  });
}

void CostsPanel::on_record_line(const QString& line) {
  if (clear_on_first_record_) {
    clear_on_first_record_ = false;
    chart_->clear();
  }
  (void)chart_->append_line(line.toStdString());
}

void CostsPanel::on_progress(int done, int total) {
  progress_->setRange(0, std::max(total, 1));
  progress_->setValue(std::min(done, std::max(total, 1)));
}

void CostsPanel::sync_buttons() {
  const bool busy = running() || job_busy();
  run_button_->setEnabled(!busy);
  cancel_button_->setEnabled(running());
  fit_button_->setEnabled(!busy && !records_path_.isEmpty() && chart_->measurements().point_count() > 0);
  const QString no_refine = refine_refusal();
  refine_button_->setEnabled(!busy && no_refine.isEmpty());
  refine_button_->setToolTip(no_refine.isEmpty()
                                 ? tr("Correct the calibration's curves by what plans measured when they ran (run or "
                                      "validate --jsonl files; meshloom-launch refine)")
                                 : no_refine);
  const QString refusal = apply_refusal();
  apply_button_->setEnabled(!busy && !calibration_path_.isEmpty() && refusal.isEmpty());
  apply_button_->setToolTip(refusal.isEmpty() ? tr("Make this calibration the design's and plan with it (undoable)")
                                              : tr("Cannot apply: %1").arg(refusal));
}

bool CostsPanel::job_busy() const { return job_ && job_->running(); }

QString CostsPanel::refine_refusal() const {
  const std::optional<Calibration>& c = chart_->measurements().calibration();
  if (calibration_path_.isEmpty() || !c) return tr("Load or fit a calibration first: refine corrects its curves.");
  if (c->groups.empty()) {
    return tr("%1 holds per-axis fits only; refine corrects curves by group shape: calibrate again with this version.")
        .arg(QFileInfo(calibration_path_).fileName());
  }
  return {};
}

QString CostsPanel::apply_refusal() const {
  const std::optional<Calibration>& c = chart_->measurements().calibration();
  if (calibration_path_.isEmpty() || !c) return {};
  const std::optional<std::string> why = calibration_mismatch(*c, doc_->design().mesh.shape);
  return why ? capitalized(q(*why)) : QString();
}

void CostsPanel::forget_document() {
  if (running()) return;  // a run under way keeps its records; they were made for the design it saved
  job_.reset();  // a fit or correction under way was for the last design: stopped, its file never shown here
  clear_on_first_record_ = false;
  chart_->clear();
  chart_->set_calibration(std::nullopt);
  sync_fits();
  prediction_chart_->clear();
  records_path_.clear();
  calibration_path_.clear();
  predictions_path_.clear();
  run_dir_.clear();
  show_message({}, false);
  sync_buttons();
}

void CostsPanel::sync_fits() {
  fits_->set_calibration(chart_->measurements().calibration());
  fits_summary_->setText(fits_->rowCount() > 0 ? fits_->summary()
                                                : tr("Load or fit a calibration to see its fits."));
}

QString CostsPanel::fits_summary() const { return fits_summary_->text(); }

void CostsPanel::show_message(const QString& text, bool error) {
  app::show_message(message_, text, error);
}

QString CostsPanel::message() const { return message_->text(); }
QString CostsPanel::log_text() const { return log_->toPlainText(); }
int CostsPanel::progress_value() const { return progress_->value(); }
int CostsPanel::progress_maximum() const { return progress_->maximum(); }
bool CostsPanel::running() const { return run_->running() || slurm_->running(); }

void CostsPanel::append_log(const QString& text) {
  QString t = text;
  while (t.endsWith(QLatin1Char('\n'))) t.chop(1);
  if (!t.isEmpty()) log_->appendPlainText(t);
}

QString CostsPanel::open_measurements(const QString& path) {
  Measurements m;
  if (chart_->measurements().calibration()) m.set_calibration(chart_->measurements().calibration());
  const std::string error = m.load_jsonl(path.toStdString());
  if (!error.empty()) {
    show_message(q(error), true);
    return q(error);
  }
  if (m.config() && m.config()->world != doc_->design().world) {
    const QString why = tr("%1 was measured on %2 ranks, and this design's world is %3: open it with the design it "
                           "was measured for")
                            .arg(QFileInfo(path).fileName())
                            .arg(m.config()->world)
                            .arg(doc_->design().world);
    show_message(why, true);
    return why;
  }
  for (const auto& p : m.problems()) append_log(q(p));
  records_path_ = QFileInfo(path).absoluteFilePath();  // Fit calibration fits these
  run_dir_.clear();
  const auto points = m.point_count();
  const auto problems = m.problems().size();
  chart_->set_measurements(std::move(m));
  views_->setCurrentWidget(chart_);
  sync_buttons();
  const QString shown = tr("%1: %2").arg(QFileInfo(path).fileName(), counted(static_cast<long long>(points), tr("point")));
  show_message(problems == 0 ? shown
                             : tr("%1; %2 skipped, listed in the log")
                                   .arg(shown, counted(static_cast<long long>(problems), tr("line"))),
               problems != 0);
  return {};
}

QString CostsPanel::load_calibration(const QString& path) {
  const QString error = chart_->load_calibration(path);
  if (!error.isEmpty()) {
    show_message(error, true);
    return error;
  }
  calibration_path_ = QFileInfo(path).absoluteFilePath();
  sync_fits();
  // Without measurements the chart has nothing to draw the fits against: show them as the table lists them (from
  // the cost chart only: predictions being read stay in front).
  if (chart_->measurements().point_count() == 0 && views_->currentWidget() == chart_) {
    views_->setCurrentWidget(fits_page_);
  }
  show_message(tr("Fitted model from %1: %2").arg(QFileInfo(path).fileName(), fits_->summary()), false);
  sync_buttons();
  return {};
}

QString CostsPanel::open_predictions(const QString& path) {
  PredictionRecords records;
  const std::string error = records.load_jsonl(path.toStdString());
  if (!error.empty()) {
    show_message(q(error), true);
    return q(error);
  }
  const QString name = QFileInfo(path).fileName();
  for (const auto& p : records.problems()) append_log(name + QStringLiteral(": ") + q(p));
  const auto steps = records.steps().size();
  const auto problems = records.problems().size();
  const std::string command = records.command();
  predictions_path_ = QFileInfo(path).absoluteFilePath();
  prediction_chart_->set_records(std::move(records), name);
  views_->setCurrentWidget(prediction_chart_);
  QString text = tr("%1: %2").arg(name, counted(static_cast<long long>(steps), tr("step record")));
  if (problems != 0) {
    text += tr("; %1 skipped, listed in the log").arg(counted(static_cast<long long>(problems), tr("line")));
  }
  if (steps == 0) {
    text += command.empty() || command == "run" || command == "validate"
                ? tr(". Predicted against measured reads the step records of meshloom-launch run or validate --jsonl.")
                : tr(". These are %1 records: open them with Open... (the cost chart).").arg(q(command));
  }
  show_message(text, problems != 0 || steps == 0);
  emit predictions_loaded(predictions_path_);
  return {};
}

QString CostsPanel::new_run_dir() const {
  const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss-zzz"));
  return QDir(runs_root_).filePath(stamp);
}

bool CostsPanel::start_run(RunSettings settings) { return start_run(std::move(settings), new_run_dir()); }

bool CostsPanel::start_run(RunSettings settings, const QString& dir) {
  if (running()) {
    show_message(tr("A run is under way: cancel it first."), true);
    return false;
  }
  // The run's own folder: the design as run, its records, its calibration.
  if (!QDir().mkpath(dir)) {
    show_message(tr("Cannot create the run folder %1").arg(dir), true);
    return false;
  }
  const QString design_path = run_design_path(dir);
  try {
    save_design(doc_->design(), design_path.toStdString());
  } catch (const std::exception& e) {
    show_message(tr("Cannot write the design for the run: %1").arg(error_text(e)), true);
    return false;
  }
  QString error;
  settings.bench.design_path = design_path;
  if (settings.where == RunSettings::Where::Slurm) return start_slurm(settings, dir);
  const std::optional<LaunchCommand> command = settings.command(&error);
  if (!command) {
    show_message(error, true);
    return false;
  }
  begin_run(dir, settings.launcher);
  append_log(QStringLiteral("$ ") + command_text(*command));
  slurm_active_ = false;
  run_->start(*command, records_path_);
  show_message(tr("Running %1 on %2 ranks...").arg(QFileInfo(command->program).fileName()).arg(settings.bench.world),
               false);
  sync_buttons();
  return true;
}

void CostsPanel::begin_run(const QString& dir, const QString& launcher) {
  // The chart shown stays until the run's first record, and with it what it was read from (Fit fits those).
  shown_before_run_ = {records_path_, run_dir_};
  run_dir_ = dir;
  records_path_ = QDir(dir).filePath(QStringLiteral("bench.jsonl"));
  launcher_ = launcher;
  log_->clear();
  clear_on_first_record_ = true;
  views_->setCurrentWidget(chart_);
  progress_->setRange(0, 0);  // busy until the config record says how many results to expect
  progress_->setFormat(tr("%v of %m results"));
}

bool CostsPanel::start_slurm(const RunSettings& settings, const QString& dir) {
  QString error;
  const std::optional<QString> script = settings.slurm_script(dir, &error);
  if (!script) {
    show_message(error, true);
    return false;
  }
  // The script as submitted stays in the run's folder, beside what the job writes (written whole, or not at all).
  const SlurmJobFiles files = slurm_job_files(dir);
  QSaveFile copy(files.script);
  if (!copy.open(QIODevice::WriteOnly | QIODevice::Text) || copy.write(script->toUtf8()) < 0 || !copy.commit()) {
    show_message(tr("Cannot write the job's script %1: %2").arg(files.script, copy.errorString()), true);
    return false;
  }
  begin_run(dir, settings.launcher);
  slurm_active_ = true;
  show_message(settings.slurm.login_host.isEmpty()
                   ? tr("Submitting the job to Slurm (sbatch)...")
                   : tr("Submitting the job to Slurm on %1 (ssh, sbatch)...").arg(settings.slurm.login_host),
               false);
  slurm_->start(settings.slurm, *script, files, records_path_);
  sync_buttons();
  return true;
}

void CostsPanel::cancel_run() {
  if (slurm_->running()) {
    show_message(slurm_->job_id().isEmpty() ? tr("Cancelling: the job is cancelled once sbatch gives its id...")
                                            : tr("Job %1: cancelling (scancel)...").arg(slurm_->job_id()),
                 false);
    slurm_->cancel();
    return;
  }
  if (!run_->running()) return;
  show_message(tr("Cancelling..."), false);
  run_->cancel();
}

void CostsPanel::on_finished(const RunOutcome& outcome) {
  const int results = outcome.results;
  if (clear_on_first_record_) {  // no record arrived: the chart is still the one before, and so are its files
    clear_on_first_record_ = false;
    records_path_ = shown_before_run_.first;
    run_dir_ = shown_before_run_.second;
  }
  if (progress_->maximum() == 0) {  // no config record arrived: stop the busy indicator
    progress_->setRange(0, 1);
    progress_->setValue(0);
    progress_->setFormat(tr("No results"));
  }
  // A Slurm job says its id and end state first: "Job 123: COMPLETED. Done: ...".
  const QString job = slurm_active_ && !slurm_->job_id().isEmpty()
                          ? describe_job(slurm_->job_id(), slurm_->state()) + QStringLiteral(". ")
                          : QString();
  switch (outcome.status) {
    case RunOutcome::Status::Succeeded:
      show_message(job + tr("Done: %1 results in %2. Fit a calibration to price plans with them.")
                             .arg(results)
                             .arg(QDir::toNativeSeparators(records_path_)),
                   false);
      break;
    case RunOutcome::Status::Cancelled:
      show_message(job + tr("Cancelled after %1 results; what was measured stays (%2).")
                             .arg(results)
                             .arg(QDir::toNativeSeparators(records_path_)),
                   true);
      break;
    default:
      show_message(outcome.message + (results > 0 ? tr(" %1 results were kept.").arg(results) : QString()), true);
      break;
  }
  sync_buttons();
  emit run_finished(outcome);
}

bool CostsPanel::fit_calibration() {
  if (records_path_.isEmpty() || chart_->measurements().point_count() == 0) {
    show_message(tr("Nothing to fit: run a benchmark or open its records first."), true);
    return false;
  }
  if (!ready_for_job()) return false;
  const QString out = QDir(run_dir_).filePath(QStringLiteral("calibration.json"));
  start_job(calibrate_arguments(records_path_, out), out, {tr("Fitting..."), tr("Fitting failed: %1")},
            [this](const QString& path) {
              return tr("Fitted %1: %2. The lines over the points are the model the planner will use.")
                  .arg(QDir::toNativeSeparators(path), fits_->summary());
            });
  return true;
}

bool CostsPanel::refine_calibration(const QStringList& records) {
  if (const QString why = refine_refusal(); !why.isEmpty()) {
    show_message(why, true);
    return false;
  }
  if (records.isEmpty()) {
    show_message(tr("Nothing to correct by: choose the run or validate --jsonl files of plans run with it."), true);
    return false;
  }
  if (!ready_for_job()) return false;
  // A name of its own each time: the calibration corrected may be an earlier correction in this folder.
  const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss-zzz"));
  const QString out = QDir(run_dir_).filePath(QStringLiteral("calibration.refined-%1.json").arg(stamp));
  const QString base = QFileInfo(calibration_path_).fileName();
  const auto files = static_cast<long long>(records.size());
  const JobText text{tr("Correcting %1...").arg(base), tr("Correcting failed: %1")};
  start_job(refine_arguments(calibration_path_, records, out), out, text, [this, base, files](const QString& path) {
    const std::optional<Calibration>& c = chart_->measurements().calibration();
    const auto corrected = c ? std::count_if(c->groups.begin(), c->groups.end(),
                                             [](const GroupCurve& g) { return !g.as_run.empty(); })
                             : 0;
    const QString refusal = apply_refusal();
    return tr("Corrected %1 by %2: %3 of %4 curves priced as plans ran (the Fits tab's \"as run\" column; the "
              "launcher's table, with the held-out error, in the log). Wrote %5. %6")
        .arg(base, counted(files, tr("records file")), QString::number(corrected),
             QString::number(c ? c->groups.size() : 0), QDir::toNativeSeparators(path),
             refusal.isEmpty() ? tr("Apply to planner plans with it.")
                               : tr("It cannot be applied to this design: %1").arg(refusal));
  });
  return true;
}

void CostsPanel::refine_dialog() {
  const QString dir = predictions_path_.isEmpty() ? run_dir_ : QFileInfo(predictions_path_).absolutePath();
  const QStringList paths = QFileDialog::getOpenFileNames(
      this, tr("Correct the calibration by run or validate records"), dir,
      tr("Run or validate JSON Lines (*.jsonl);;All files (*)"));
  if (!paths.isEmpty()) (void)refine_calibration(paths);
}

bool CostsPanel::ready_for_job() {
  if (running() || job_busy()) {
    show_message(tr("Wait for the run to end first."), true);
    return false;
  }
  if (run_dir_.isEmpty()) {  // records opened from a file: the job's output gets a folder of its own
    run_dir_ = new_run_dir();
    if (!QDir().mkpath(run_dir_)) {
      show_message(tr("Cannot create the folder %1").arg(run_dir_), true);
      run_dir_.clear();
      return false;
    }
  }
  if (launcher_.isEmpty()) launcher_ = RunSettings::load(static_cast<int>(doc_->design().world)).launcher;
  return true;
}

void CostsPanel::start_job(const QStringList& arguments, const QString& out, const JobText& text,
                           std::function<QString(const QString&)> success) {
  if (job_) job_.release()->deleteLater();  // ended, but this may run in a slot of its finished()
  job_ = std::make_unique<FileJob>();
  connect(job_.get(), &FileJob::finished, this,
          [this, out, failed = text.failed, success = std::move(success)](bool ok, const QString& why) {
            if (!ok) {
              show_message(QString(failed).arg(why), true);
              emit calibrated(QString());
            } else if (const QString error = load_calibration(out); !error.isEmpty()) {
              show_message(tr("The launcher wrote %1, which cannot be loaded: %2")
                               .arg(QDir::toNativeSeparators(out), error),
                           true);
              emit calibrated(QString());
            } else {
              show_message(success(out), false);
              emit calibrated(out);
            }
            sync_buttons();
          });
  connect(job_.get(), &FileJob::log, this, &CostsPanel::append_log);
  show_message(text.pending, false);  // before the start: a program that cannot start says so in its place
  job_->start(launcher_, arguments);
  sync_buttons();
}

void CostsPanel::open_run_dialog() {
  // The folder is chosen first, so the dialog previews the command that runs: on the design's copy in it.
  const QString dir = new_run_dir();
  RunDialog dialog(RunSettings::load(static_cast<int>(doc_->design().world)), run_design_path(dir), this);
  if (dialog.exec() != QDialog::Accepted) return;
  const RunSettings settings = dialog.settings();
  settings.save();
  (void)start_run(settings, dir);
}

QString CostsPanel::run_design_path(const QString& dir) {
  return QDir(dir).filePath(QStringLiteral("design.meshloom.json"));
}

void CostsPanel::open_dialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open measurements"), run_dir_,
                                                    tr("Bench JSON Lines (*.jsonl);;All files (*)"));
  if (!path.isEmpty()) (void)open_measurements(path);
}

void CostsPanel::calibration_dialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Load calibration"), run_dir_,
                                                    tr("Calibrations (*.json);;All files (*)"));
  if (!path.isEmpty()) (void)load_calibration(path);
}

void CostsPanel::open_predictions_dialog() {
  const QString dir = predictions_path_.isEmpty() ? run_dir_ : QFileInfo(predictions_path_).absolutePath();
  const QString path = QFileDialog::getOpenFileName(this, tr("Open run or validate records"), dir,
                                                    tr("Run or validate JSON Lines (*.jsonl);;All files (*)"));
  if (!path.isEmpty()) (void)open_predictions(path);
}

void CostsPanel::export_dialog(bool pdf) {
  const bool predictions = views_->currentWidget() == prediction_chart_;
  const QString filter = pdf ? tr("PDF (*.pdf)") : tr("PNG image (*.png)");
  const QString suffix = pdf ? QStringLiteral(".pdf") : QStringLiteral(".png");
  const QString name =
      (predictions ? QStringLiteral("predicted-vs-measured") : QStringLiteral("costs-") + chart_->collective()) + suffix;
  const QString path = QFileDialog::getSaveFileName(this, tr("Export chart"), name, filter);
  if (path.isEmpty()) return;
  QString error;
  bool ok = false;
  if (predictions) {
    ok = pdf ? prediction_chart_->save_pdf(path, 0, 0, &error) : prediction_chart_->save_png(path, 0, 0, &error);
  } else {
    ok = pdf ? chart_->save_pdf(path, 0, 0, &error) : chart_->save_png(path, 0, 0, &error);
  }
  show_message(ok ? tr("Wrote %1").arg(QDir::toNativeSeparators(path)) : error, !ok);
}

}  // namespace meshloom::app
