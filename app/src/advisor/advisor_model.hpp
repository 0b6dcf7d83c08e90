// AdvisorModel: the layout advisor's ranking (the engine's AdvisorResult) as a table. One row per candidate, in
// rank order: Rank, Layout ("(dp 2, tp 4)"), Cost per step, × best, one column per axis name with that axis' cost
// per step (the axes keep their names across candidates, so a column compares like with like), and Crosses hosts
// ("dp: 2 hosts"; "none"). Sorting (through a QSortFilterProxyModel) uses Qt::UserRole: the numbers, not their
// text. The model only renders the result it is given; it never prices anything.
#pragma once

#include <QAbstractTableModel>
#include <QString>

#include <string>
#include <vector>

#include "meshloom/advisor/advisor.hpp"

namespace meshloom::app {

class AdvisorModel : public QAbstractTableModel {
  Q_OBJECT

public:
  enum Column { RankColumn = 0, LayoutColumn, CostColumn, RatioColumn, FirstAxisColumn };

  explicit AdvisorModel(QObject* parent = nullptr);

  // Replaces the ranking; `unit` labels the costs ("µs" or "" for the unitless fixed weights).
  void set_result(AdvisorResult result, const QString& unit);
  void clear();
  [[nodiscard]] const AdvisorResult& result() const noexcept { return result_; }
  [[nodiscard]] const std::vector<std::string>& axis_names() const noexcept { return axis_names_; }
  [[nodiscard]] const QString& unit() const noexcept { return unit_; }
  // The candidate shown in a row of this model (not of a proxy); nullptr outside the rows.
  [[nodiscard]] const CandidateCost* candidate(int row) const;
  [[nodiscard]] int hosts_column() const noexcept { return FirstAxisColumn + static_cast<int>(axis_names_.size()); }

  [[nodiscard]] int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
  AdvisorResult result_;
  std::vector<std::string> axis_names_;  // the union of the candidates' axis names, in the first candidate's order
  QString unit_;
};

// "(dp 2, tp 4)": the engine's layout_text as a QString.
[[nodiscard]] QString layout_label(const MeshSpec& mesh);
// "dp: 2 hosts, pp: 16 hosts", or "none" when every axis stays inside a host.
[[nodiscard]] QString hosts_text(const CandidateCost& candidate);
// A cost with its unit: "1.23 ms", "456 µs" (unit "µs"), or "12.5" (unitless).
[[nodiscard]] QString cost_text(double cost, const QString& unit);

}  // namespace meshloom::app
