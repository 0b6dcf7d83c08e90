// RunDialog: what a live benchmark runs and where. Local ranks (`mpirun --oversubscribe -np <world>` on this
// machine), a cluster command template typed once and remembered ("srun -n {world} {launcher} {args}",
// "ssh head mpirun -np {world} {launcher} {args}"), or a Slurm batch job (partition, nodes, tasks per node, GPUs per
// task, time limit, extra sbatch options, and whether Slurm's commands run here or on a login node over ssh); the
// launcher program; the sweep (backend, sizes, iterations, collectives). The exact argument list that will run is
// previewed as it is edited (Slurm: the sbatch command and the exact batch script it submits), and settings that do
// not make a command are explained under it (Run / Submit stays disabled); local ranks that outnumber the CPUs they
// may run on are said to take turns, with the cluster command that times them steadier. It only edits a RunSettings;
// CostsPanel runs it.
#pragma once

#include <QDialog>
#include <QString>

#include "costs/costs_panel.hpp"

class QButtonGroup;
class QCheckBox;
class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QSpinBox;

namespace meshloom::app {

class RunDialog : public QDialog {
  Q_OBJECT

public:
  RunDialog(RunSettings settings, const QString& design_path, QWidget* parent = nullptr);

  // The settings as edited (valid when accepted).
  [[nodiscard]] RunSettings settings() const;
  // The command that would run, or why there is none (preview_error()).
  [[nodiscard]] QString preview() const;
  [[nodiscard]] QString preview_error() const;
  // Slurm: the batch script that would be submitted ("" in the other modes, or when there is none).
  [[nodiscard]] QString script_preview() const;

private:
  void update_preview();
  [[nodiscard]] QString run_dir() const;

  QString design_path_;
  RunSettings base_;
  QButtonGroup* where_ = nullptr;
  QSpinBox* world_ = nullptr;
  QLabel* crowding_ = nullptr;  // more local ranks than CPUs: what that does to the times
  QLineEdit* launcher_ = nullptr;
  QLineEdit* mpirun_ = nullptr;
  QLineEdit* template_ = nullptr;
  QWidget* slurm_fields_ = nullptr;
  QLineEdit* partition_ = nullptr;
  QSpinBox* nodes_ = nullptr;
  QSpinBox* tasks_per_node_ = nullptr;
  QSpinBox* gpus_per_task_ = nullptr;
  QLineEdit* time_limit_ = nullptr;
  QLineEdit* sbatch_options_ = nullptr;
  QLineEdit* login_host_ = nullptr;
  QPlainTextEdit* script_ = nullptr;
  QLabel* runs_label_ = nullptr;
  QComboBox* backend_ = nullptr;
  QLineEdit* min_bytes_ = nullptr;
  QLineEdit* max_bytes_ = nullptr;
  QSpinBox* step_factor_ = nullptr;
  QComboBox* dtype_ = nullptr;
  QSpinBox* warmup_ = nullptr;
  QSpinBox* iters_ = nullptr;
  QComboBox* timing_ = nullptr;
  QSpinBox* rounds_ = nullptr;
  QCheckBox* check_ = nullptr;
  std::vector<QCheckBox*> collectives_;
  QLabel* preview_ = nullptr;
  QLabel* error_ = nullptr;
  QDialogButtonBox* buttons_ = nullptr;
};

}  // namespace meshloom::app
