// RunDialog: what a live benchmark runs and where. Local ranks (`mpirun --oversubscribe -np <world>` on this
// machine) or a cluster command template typed once and remembered ("srun -n {world} {launcher} {args}",
// "ssh head mpirun -np {world} {launcher} {args}"); the launcher program; the sweep (backend, sizes, iterations,
// collectives). The exact argument list that will run is previewed as it is edited, and a template that does not
// expand is explained under it (Run stays disabled). It only edits a RunSettings; CostsPanel runs it.
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

private:
  void update_preview();

  QString design_path_;
  RunSettings base_;
  QButtonGroup* where_ = nullptr;
  QSpinBox* world_ = nullptr;
  QLineEdit* launcher_ = nullptr;
  QLineEdit* mpirun_ = nullptr;
  QLineEdit* template_ = nullptr;
  QComboBox* backend_ = nullptr;
  QLineEdit* min_bytes_ = nullptr;
  QLineEdit* max_bytes_ = nullptr;
  QSpinBox* step_factor_ = nullptr;
  QComboBox* dtype_ = nullptr;
  QSpinBox* warmup_ = nullptr;
  QSpinBox* iters_ = nullptr;
  QCheckBox* check_ = nullptr;
  std::vector<QCheckBox*> collectives_;
  QLabel* preview_ = nullptr;
  QLabel* error_ = nullptr;
  QDialogButtonBox* buttons_ = nullptr;
};

}  // namespace meshloom::app
