// AdvisorPanel: which layout of the design's mesh is cheapest for its workload (the engine's layout advisor).
//
// Controls: the cost model (comm, fixed, or calibrated when the design's calibration loads and keys its curves by
// group shape, so that layouts never run can be priced), the search (orders, factorizations, both), constraints
// (axes kept inside a host, sizes held fixed as "tp=8, pp=16", pipeline size dividing the layers), and Rank. The
// ranking runs on a worker thread (the 16,384-rank factorization search takes seconds); a newer request or an edit
// of the design supersedes a running one, whose result is dropped.
//
// Shown: the reason for the winner in one sentence and the ties, a sortable table (AdvisorModel) and a stacked bar
// chart of each layout's cost by axis (AdvisorChart). Selecting a row or clicking a bar previews that layout on the
// canvas (preview_requested); Apply makes it the design's mesh (apply_requested; the window turns it into one
// undoable edit). The panel only asks the engine; it never edits the design itself.
#pragma once

#include <QString>
#include <QWidget>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "meshloom/advisor/advisor.hpp"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;
class QThread;

namespace meshloom::app {

class AdvisorChart;
class AdvisorModel;
class DesignDocument;

class AdvisorPanel : public QWidget {
  Q_OBJECT

public:
  enum class ModelKind { Comm, Fixed, Calibrated };

  explicit AdvisorPanel(DesignDocument* doc, QWidget* parent = nullptr);
  ~AdvisorPanel() override;

  // Starts ranking with the current controls. False (nothing starts) when the design has no workload or a
  // constraint does not parse; the reason is shown in the panel and returned by error().
  bool rank();
  // Whether a ranking runs; wait_idle() blocks until it has finished and its result is shown (tests, screenshots).
  [[nodiscard]] bool busy() const noexcept;
  bool wait_idle(int timeout_ms = 60'000);

  // Calibrated is refused (nothing changes) while calibrated_reason() is not empty.
  void set_model(ModelKind kind);
  [[nodiscard]] ModelKind model() const;
  // Whether the calibrated model can be chosen, and when not, why.
  [[nodiscard]] const QString& calibrated_reason() const noexcept { return calibrated_reason_; }
  void set_search(AdvisorSearch search);
  // Constraint text as typed: axes kept inside a host ("tp, cp") and fixed sizes ("tp=8, pp=16").
  void set_within_host(const QString& axes);
  void set_fixed(const QString& sizes);
  void set_pp_divides_layers(bool on);

  [[nodiscard]] const AdvisorResult& result() const noexcept;
  [[nodiscard]] QString reason() const;
  [[nodiscard]] const QString& error() const noexcept { return error_; }
  [[nodiscard]] AdvisorModel* table_model() const noexcept { return model_; }
  [[nodiscard]] QTableView* table() const noexcept { return table_; }
  [[nodiscard]] AdvisorChart* chart() const noexcept { return chart_; }

  // Previews candidate `index` of the ranking (its row is selected); nullopt clears the preview.
  void preview(std::optional<std::size_t> index);
  [[nodiscard]] std::optional<std::size_t> previewed() const noexcept { return previewed_; }
  // Applies the previewed candidate, or the best when none is previewed. False when there is no ranking or it is
  // stale (the design was edited since, other than by applying one of its layouts).
  bool apply();

signals:
  void preview_requested(std::optional<MeshSpec> mesh);  // nullopt: show the design's own mesh again
  void apply_requested(const MeshSpec& mesh);
  void ranked();  // a ranking (or its error) is shown

private:
  void update_availability();  // on design changes: workload present? calibration usable?
  void show_result(AdvisorResult result, const QString& error, const QString& unit);
  void supersede();  // a running ranking is dropped and told to stop
  // Whether the ranking shown is of another design than the document's (an edit since): then it can be looked at
  // but not previewed or applied. True when nothing was ranked.
  [[nodiscard]] bool stale() const;
  [[nodiscard]] CostModelFactory make_factory(QString* error) const;

  DesignDocument* doc_;
  QComboBox* model_box_ = nullptr;
  QComboBox* search_box_ = nullptr;
  QLineEdit* within_host_ = nullptr;
  QLineEdit* fixed_ = nullptr;
  QCheckBox* pp_divides_ = nullptr;
  QPushButton* rank_button_ = nullptr;
  QPushButton* apply_button_ = nullptr;
  QLabel* status_ = nullptr;
  QLabel* reason_ = nullptr;
  AdvisorModel* model_ = nullptr;
  QSortFilterProxyModel* proxy_ = nullptr;
  QTableView* table_ = nullptr;
  AdvisorChart* chart_ = nullptr;
  QThread* worker_ = nullptr;
  std::uint64_t generation_ = 0;
  std::shared_ptr<std::atomic<bool>> cancel_;  // the running ranking's stop flag
  std::optional<Design> ranked_design_;        // what the shown ranking ranked (its calibration named absolutely)
  std::optional<Design> applied_design_;       // ranked_design_ with the last applied layout
  std::optional<std::size_t> previewed_;
  QString calibrated_reason_;
  QString error_;
};

}  // namespace meshloom::app
