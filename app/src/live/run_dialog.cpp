#include "live/run_dialog.hpp"

#include <QButtonGroup>
#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QThread>
#include <QVBoxLayout>

#include <sched.h>

#include <algorithm>
#include <optional>

#include "shell/inline_message.hpp"

namespace meshloom::app {

namespace {

const char* const kCollectives[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"};
const char* const kDtypes[] = {"float32", "float16", "bfloat16", "float64", "int32", "int64"};

// The CPUs local ranks may run on: this process's affinity mask, which mpirun's ranks inherit (a container's or a
// job's cpuset, not every CPU of the machine), or Qt's count where the mask cannot be read.
int usable_cpus() {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (::sched_getaffinity(0, sizeof mine, &mine) == 0 && CPU_COUNT(&mine) > 0) return CPU_COUNT(&mine);
  return std::max(1, QThread::idealThreadCount());
}

}  // namespace

RunDialog::RunDialog(RunSettings settings, const QString& design_path, QWidget* parent)
    : QDialog(parent), design_path_(design_path), base_(std::move(settings)) {
  setWindowTitle(tr("Run benchmark"));

  auto* local = new QRadioButton(tr("Local ranks on this machine (mpirun)"), this);
  auto* cluster = new QRadioButton(tr("Cluster command"), this);
  auto* slurm = new QRadioButton(tr("Slurm batch job (sbatch)"), this);
  slurm->setObjectName(QStringLiteral("slurm_mode"));
  where_ = new QButtonGroup(this);
  where_->addButton(local, static_cast<int>(RunSettings::Where::Local));
  where_->addButton(cluster, static_cast<int>(RunSettings::Where::Template));
  where_->addButton(slurm, static_cast<int>(RunSettings::Where::Slurm));
  where_->button(static_cast<int>(base_.where))->setChecked(true);

  world_ = new QSpinBox(this);
  world_->setRange(1, 1 << 20);
  world_->setValue(base_.bench.world);
  world_->setEnabled(false);
  world_->setToolTip(tr("The design's world: the launcher checks that mpirun started exactly this many ranks"));
  crowding_ = make_message_label(this);
  crowding_->setObjectName(QStringLiteral("crowding"));
  launcher_ = new QLineEdit(base_.launcher, this);
  auto* browse = new QPushButton(tr("Browse..."), this);
  mpirun_ = new QLineEdit(base_.mpirun, this);
  mpirun_->setObjectName(QStringLiteral("mpirun"));
  template_ = new QLineEdit(base_.command_template, this);
  template_->setPlaceholderText(QStringLiteral("srun -n {world} {launcher} {args}"));
  template_->setToolTip(tr("One command line, split into arguments like a shell would (quotes respected) but never run "
                           "by a shell. {world} is the number of ranks, {launcher} the launcher program, and the word "
                           "{args} becomes the launcher's arguments."));
  // Slurm: the job's resources, and where Slurm's commands run.
  const SlurmSettings& js = base_.slurm;
  partition_ = new QLineEdit(js.partition, this);
  partition_->setObjectName(QStringLiteral("slurm_partition"));
  partition_->setPlaceholderText(tr("the cluster's default"));
  nodes_ = new QSpinBox(this);
  nodes_->setObjectName(QStringLiteral("slurm_nodes"));
  nodes_->setRange(1, 1 << 20);
  nodes_->setValue(js.nodes);
  tasks_per_node_ = new QSpinBox(this);
  tasks_per_node_->setObjectName(QStringLiteral("slurm_tasks_per_node"));
  tasks_per_node_->setRange(1, 1 << 20);
  tasks_per_node_->setValue(js.tasks_per_node);
  tasks_per_node_->setToolTip(tr("Ranks per node: nodes x tasks per node must be the design's world"));
  gpus_per_task_ = new QSpinBox(this);
  gpus_per_task_->setObjectName(QStringLiteral("slurm_gpus_per_task"));
  gpus_per_task_->setRange(0, 64);
  gpus_per_task_->setSpecialValueText(tr("none"));
  gpus_per_task_->setValue(js.gpus_per_task);
  gpus_per_task_->setToolTip(tr("--gpus-per-task: 1 with the nccl backend gives every rank a GPU of its own"));
  time_limit_ = new QLineEdit(js.time_limit, this);
  time_limit_->setObjectName(QStringLiteral("slurm_time"));
  time_limit_->setPlaceholderText(tr("the partition's default"));
  time_limit_->setToolTip(tr("--time: minutes, hours:minutes:seconds or days-hours:minutes:seconds"));
  sbatch_options_ = new QLineEdit(js.extra_options, this);
  sbatch_options_->setObjectName(QStringLiteral("slurm_options"));
  sbatch_options_->setPlaceholderText(QStringLiteral("--account=myproject --qos=normal"));
  sbatch_options_->setToolTip(tr("More sbatch options, one #SBATCH line each; split like a shell would (quotes "
                                 "respected) but never run by one"));
  login_host_ = new QLineEdit(js.login_host, this);
  login_host_->setObjectName(QStringLiteral("slurm_login_host"));
  login_host_->setPlaceholderText(tr("this machine; or user@login-node, over ssh"));
  login_host_->setToolTip(tr("Where sbatch, squeue, scontrol and scancel run. Over ssh the run's folder must be on a "
                             "filesystem the login node and the job's nodes see at the same path."));
  slurm_fields_ = new QWidget(this);
  auto* slurm_form = new QFormLayout(slurm_fields_);
  slurm_form->setContentsMargins(0, 0, 0, 0);
  auto* shape_row = new QHBoxLayout;
  shape_row->addWidget(nodes_);
  shape_row->addWidget(new QLabel(tr("nodes of"), slurm_fields_));
  shape_row->addWidget(tasks_per_node_);
  shape_row->addWidget(new QLabel(tr("tasks each"), slurm_fields_));
  shape_row->addStretch(1);
  slurm_form->addRow(tr("Partition"), partition_);
  slurm_form->addRow(tr("Nodes"), shape_row);
  slurm_form->addRow(tr("GPUs per task"), gpus_per_task_);
  slurm_form->addRow(tr("Time limit"), time_limit_);
  slurm_form->addRow(tr("sbatch options"), sbatch_options_);
  slurm_form->addRow(tr("Submit on"), login_host_);

  backend_ = new QComboBox(this);
  backend_->addItem(tr("mpi (host memory)"), QStringLiteral("mpi"));
  backend_->addItem(tr("nccl (one GPU per rank)"), QStringLiteral("nccl"));
  backend_->setCurrentIndex(std::max(0, backend_->findData(base_.bench.backend)));
  min_bytes_ = new QLineEdit(base_.bench.min_bytes, this);
  max_bytes_ = new QLineEdit(base_.bench.max_bytes, this);
  min_bytes_->setToolTip(tr("Smallest message: bytes with an optional K, M or G suffix"));
  max_bytes_->setToolTip(tr("Largest message: bytes with an optional K, M or G suffix; sizes double in between"));
  step_factor_ = new QSpinBox(this);
  step_factor_->setRange(2, 1024);
  step_factor_->setValue(base_.bench.step_factor);
  step_factor_->setPrefix(QStringLiteral("\u00d7"));
  step_factor_->setToolTip(tr("Each size is the previous one times this factor"));
  dtype_ = new QComboBox(this);
  for (const char* t : kDtypes) dtype_->addItem(QString::fromLatin1(t));
  dtype_->setCurrentIndex(std::max(0, dtype_->findText(base_.bench.dtype)));
  dtype_->setToolTip(tr("The element type of the measured buffers (reductions are computed in it)"));
  warmup_ = new QSpinBox(this);
  warmup_->setRange(0, 1000);
  warmup_->setValue(base_.bench.warmup_iters);
  iters_ = new QSpinBox(this);
  iters_->setObjectName(QStringLiteral("iters"));
  iters_->setRange(1, 100000);
  iters_->setValue(base_.bench.iters);
  timing_ = new QComboBox(this);
  timing_->setObjectName(QStringLiteral("timing"));
  timing_->addItem(tr("single-shot (each collective alone)"), QStringLiteral("single_shot"));
  timing_->addItem(tr("pipelined (back to back, as nccl-tests)"), QStringLiteral("pipelined"));
  timing_->setCurrentIndex(std::max(0, timing_->findData(base_.bench.timing)));
  timing_->setToolTip(tr("Single-shot times each collective alone after a barrier, as a training step, run and "
                         "validate meet it, so a calibration fitted from it predicts them; pipelined runs them back "
                         "to back and hides each one's latency behind the next"));
  rounds_ = new QSpinBox(this);
  rounds_->setObjectName(QStringLiteral("rounds"));
  rounds_->setRange(1, std::max(1, iters_->value()));  // at most the timed iterations, as the launcher requires
  rounds_->setValue(base_.bench.rounds);
  rounds_->setToolTip(tr("Run the whole sweep this many times, each size a share of the timed iterations each time, "
                         "so that a slow spell of the machine falls on every size a little (calibrate takes 4; at "
                         "most the iterations). Results arrive in the last round only"));
  check_ = new QCheckBox(tr("Check every result (untimed)"), this);
  check_->setChecked(base_.bench.check);

  auto* collectives = new QWidget(this);
  auto* grid = new QGridLayout(collectives);
  grid->setContentsMargins(0, 0, 0, 0);
  int i = 0;
  for (const char* c : kCollectives) {
    auto* box = new QCheckBox(QString::fromLatin1(c), collectives);
    box->setChecked(base_.bench.collectives.isEmpty() || base_.bench.collectives.contains(QLatin1String(c)));
    collectives_.push_back(box);
    grid->addWidget(box, i / 3, i % 3);
    ++i;
  }

  preview_ = new QLabel(this);
  preview_->setWordWrap(true);
  preview_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  QFont mono = preview_->font();
  mono.setFamily(QStringLiteral("monospace"));
  mono.setStyleHint(QFont::Monospace);
  preview_->setFont(mono);
  error_ = make_message_label(this);
  script_ = new QPlainTextEdit(this);
  script_->setObjectName(QStringLiteral("slurm_script"));
  script_->setReadOnly(true);
  script_->setTabChangesFocus(true);
  script_->setLineWrapMode(QPlainTextEdit::NoWrap);
  script_->setFont(mono);
  script_->setFixedHeight(QFontMetrics(mono).lineSpacing() * 12 + 12);
  script_->setToolTip(tr("The batch script as it will be submitted (a copy is kept as job.sbatch in the run's folder)"));

  auto* where_box = new QGroupBox(tr("Where"), this);
  auto* where_form = new QFormLayout(where_box);
  auto* launcher_row = new QHBoxLayout;
  launcher_row->addWidget(launcher_, 1);
  launcher_row->addWidget(browse);
  where_form->addRow(local);
  where_form->addRow(tr("mpirun"), mpirun_);
  where_form->addRow(cluster);
  where_form->addRow(tr("Command"), template_);
  where_form->addRow(slurm);
  where_form->addRow(slurm_fields_);
  where_form->addRow(tr("Launcher"), launcher_row);
  where_form->addRow(tr("Ranks"), world_);
  where_form->addRow(crowding_);

  auto* sweep_box = new QGroupBox(tr("Sweep"), this);
  auto* sweep_form = new QFormLayout(sweep_box);
  auto* sizes = new QHBoxLayout;
  sizes->addWidget(min_bytes_);
  sizes->addWidget(new QLabel(tr("to"), this));
  sizes->addWidget(max_bytes_);
  sizes->addWidget(step_factor_);
  sweep_form->addRow(tr("Backend"), backend_);
  sweep_form->addRow(tr("Message sizes"), sizes);
  sweep_form->addRow(tr("Element type"), dtype_);
  sweep_form->addRow(tr("Warm-up iterations"), warmup_);
  sweep_form->addRow(tr("Timed iterations"), iters_);
  sweep_form->addRow(tr("Timing"), timing_);
  sweep_form->addRow(tr("Rounds"), rounds_);
  sweep_form->addRow(tr("Collectives"), collectives);
  sweep_form->addRow(QString(), check_);

  buttons_ = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  buttons_->button(QDialogButtonBox::Ok)->setText(tr("Run"));

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(where_box);
  layout->addWidget(sweep_box);
  runs_label_ = new QLabel(tr("Runs:"), this);
  layout->addWidget(runs_label_);
  layout->addWidget(preview_);
  layout->addWidget(script_);
  layout->addWidget(error_);
  layout->addWidget(buttons_);

  connect(buttons_, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("The meshloom-launch program"), launcher_->text());
    if (!path.isEmpty()) launcher_->setText(path);
  });
  connect(where_, &QButtonGroup::idClicked, this, &RunDialog::update_preview);
  for (QLineEdit* e : {launcher_, mpirun_, template_, min_bytes_, max_bytes_, partition_, time_limit_, sbatch_options_,
                       login_host_}) {
    connect(e, &QLineEdit::textChanged, this, &RunDialog::update_preview);
  }
  // Nodes that divide the world take the tasks per node with them (nodes x tasks per node = world).
  connect(nodes_, &QSpinBox::valueChanged, this, [this](int nodes) {
    const int world = world_->value();
    if (nodes > 0 && world % nodes == 0) tasks_per_node_->setValue(world / nodes);
    update_preview();
  });
  connect(tasks_per_node_, &QSpinBox::valueChanged, this, &RunDialog::update_preview);
  connect(gpus_per_task_, &QSpinBox::valueChanged, this, &RunDialog::update_preview);
  connect(backend_, &QComboBox::currentIndexChanged, this, &RunDialog::update_preview);
  connect(step_factor_, &QSpinBox::valueChanged, this, &RunDialog::update_preview);
  connect(dtype_, &QComboBox::currentIndexChanged, this, &RunDialog::update_preview);
  connect(warmup_, &QSpinBox::valueChanged, this, &RunDialog::update_preview);
  connect(iters_, &QSpinBox::valueChanged, this, &RunDialog::update_preview);
  connect(timing_, &QComboBox::currentIndexChanged, this, &RunDialog::update_preview);
  connect(rounds_, &QSpinBox::valueChanged, this, &RunDialog::update_preview);
  connect(iters_, &QSpinBox::valueChanged, this, [this](int iters) { rounds_->setMaximum(std::max(1, iters)); });
  connect(check_, &QCheckBox::toggled, this, &RunDialog::update_preview);
  for (QCheckBox* c : collectives_) connect(c, &QCheckBox::toggled, this, &RunDialog::update_preview);
  update_preview();
}

RunSettings RunDialog::settings() const {
  RunSettings s = base_;
  s.where = static_cast<RunSettings::Where>(where_->checkedId());
  s.launcher = launcher_->text().trimmed();
  s.mpirun = mpirun_->text().trimmed();
  s.command_template = template_->text().trimmed();
  s.slurm.partition = partition_->text().trimmed();
  s.slurm.nodes = nodes_->value();
  s.slurm.tasks_per_node = tasks_per_node_->value();
  s.slurm.gpus_per_task = gpus_per_task_->value();
  s.slurm.time_limit = time_limit_->text().trimmed();
  s.slurm.extra_options = sbatch_options_->text().trimmed();
  s.slurm.login_host = login_host_->text().trimmed();
  s.bench.backend = backend_->currentData().toString();
  s.bench.min_bytes = min_bytes_->text().trimmed();
  s.bench.max_bytes = max_bytes_->text().trimmed();
  s.bench.step_factor = step_factor_->value();
  s.bench.dtype = dtype_->currentText();
  s.bench.warmup_iters = warmup_->value();
  s.bench.iters = iters_->value();
  s.bench.timing = timing_->currentData().toString();
  s.bench.rounds = rounds_->value();
  s.bench.check = check_->isChecked();
  s.bench.collectives.clear();
  bool all = true;
  for (QCheckBox* c : collectives_) {
    if (c->isChecked()) {
      s.bench.collectives << c->text();
    } else {
      all = false;
    }
  }
  if (all) s.bench.collectives.clear();  // the launcher's default: every collective
  s.bench.design_path = design_path_.isEmpty() ? QStringLiteral("<design>") : design_path_;
  return s;
}

QString RunDialog::preview() const { return preview_->text(); }
QString RunDialog::preview_error() const { return error_->text(); }
QString RunDialog::script_preview() const { return script_->isHidden() ? QString() : script_->toPlainText(); }

QString RunDialog::run_dir() const {
  return design_path_.isEmpty() ? QStringLiteral("<run folder>") : QFileInfo(design_path_).absolutePath();
}

void RunDialog::update_preview() {
  const auto where = static_cast<RunSettings::Where>(where_->checkedId());
  const bool slurm = where == RunSettings::Where::Slurm;
  mpirun_->setEnabled(where == RunSettings::Where::Local);
  template_->setEnabled(where == RunSettings::Where::Template);
  if (slurm_fields_->isHidden() == slurm) {  // the Slurm fields and script only in Slurm mode
    slurm_fields_->setVisible(slurm);
    script_->setVisible(slurm);
    if (isVisible()) adjustSize();
  }
  // More local ranks than CPUs: they take turns, and the launcher's note (docs/05-launcher.md, "More ranks than
  // cores") says what that does to the times; said here before the run.
  const int cpus = usable_cpus();
  const bool crowded = where == RunSettings::Where::Local && world_->value() > cpus;
  show_message(crowding_,
               crowded ? tr("%1 ranks take turns on this machine's %2: a collective's time then depends on what ran "
                            "before it (docs/05-launcher.md, \"More ranks than cores\"). For steadier times, run "
                            "them as a cluster command under round-robin scheduling, e.g. chrt -r 1 mpirun "
                            "--oversubscribe --mca mpi_yield_when_idle 1 -np {world} {launcher} {args} (it needs a "
                            "real-time allowance), and measure every later run alike.")
                             .arg(world_->value())
                             .arg(cpus == 1 ? tr("1 CPU") : tr("%1 CPUs").arg(cpus))
                       : QString(),
               false);
  runs_label_->setText(slurm ? tr("Submits (the script below on standard input):") : tr("Runs:"));
  buttons_->button(QDialogButtonBox::Ok)->setText(slurm ? tr("Submit") : tr("Run"));
  const RunSettings s = settings();
  QString why;
  if (s.launcher.isEmpty()) why = tr("Name the meshloom-launch program.");
  bool none = true;
  for (QCheckBox* c : collectives_) none = none && !c->isChecked();
  if (none) why = tr("Pick at least one collective.");
  std::optional<LaunchCommand> command;
  std::optional<QString> script;
  if (why.isEmpty() && slurm) {
    script = s.slurm_script(run_dir(), &why);
    if (script) command = s.command(&why);
  } else if (why.isEmpty()) {
    command = s.command(&why);
  }
  QString text;
  if (command) {
    text = command_text(*command);
    if (slurm) text += QStringLiteral(" < ") + QDir::toNativeSeparators(slurm_job_files(run_dir()).script);
  }
  preview_->setText(text);
  script_->setPlainText(script.value_or(QString()));
  show_message(error_, command ? QString() : why);
  buttons_->button(QDialogButtonBox::Ok)->setEnabled(command.has_value());
}

}  // namespace meshloom::app
