// PlanModel: one redistribution plan of the engine (meshloom/plan/plan.hpp) as a table, one row per step.
//
// Columns:
//   Step        the step's number, 1..n (row r is step r + 1), as the animation's bar and captions count: step k
//               leads from frame k - 1 to frame k, and frame 0 is the layout before step 1
//   Axis        the mesh axis the step runs on, by the design's name; a step merged on a flattened group shows
//               the flattened axis' name and its axes, "dp (dp_replicate, dp_shard)"
//   Collective  the engine's name: all_gather, all_to_all, all_reduce, reduce_scatter, chunk,
//               replicate_to_partial, shard_to_partial (local steps in italics)
//   From → To   the whole state before and after the step, in the engine's text form
//   Bytes       bytes of the local tensor each rank holds before the step, as the engine reports them
//   Cost        the step's cost as the cost model predicted it (fixed weights, or microseconds)
// The model only displays what the engine computed: the plan comes whole from plan_redistribution (or a
// PlanCache); total() is the plan's own cost. Without a plan the model has no rows and may hold the engine's
// error for the request.
#pragma once

#include <QAbstractTableModel>
#include <QString>

#include <memory>
#include <string>

#include "meshloom/mesh/mesh_spec.hpp"
#include "meshloom/plan/plan.hpp"

namespace meshloom::app {

class PlanModel : public QAbstractTableModel {
  Q_OBJECT

public:
  enum Column { StepColumn, AxisColumn, CollectiveColumn, FromToColumn, BytesColumn, CostColumn, ColumnCount };
  // Raw values of a row (any column), for views and tests that need the engine's values rather than text.
  enum Role {
    CollectiveRole = Qt::UserRole + 1,  // QString: to_string(step.collective), e.g. "all_gather"
    AxesRole,                           // QVariantList of the step's axis indices (qulonglong), ascending
    BeforeRole,                         // QString: to_string(step.before)
    AfterRole,                          // QString: to_string(step.after)
    BytesRole,                          // qlonglong: step.bytes
    CostRole,                           // double: step.cost
    MergedRole,                         // bool: step.merged
  };

  explicit PlanModel(QObject* parent = nullptr);

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
  [[nodiscard]] Qt::ItemFlags flags(const QModelIndex& index) const override;

  // Shows `plan` (planned by the engine on a mesh described by `mesh`: axis names and flattened axes);
  // `cost_unit` is the cost model's unit ("" for fixed weights, "µs" for the comm and calibrated models).
  void set_plan(std::shared_ptr<const Plan> plan, const MeshSpec& mesh, const QString& cost_unit);
  // No plan: no rows, and the engine's message for the request (empty: simply nothing to show).
  void set_error(const QString& message);
  void clear() { set_error(QString()); }

  [[nodiscard]] const Plan* plan() const noexcept { return plan_.get(); }
  [[nodiscard]] const std::shared_ptr<const Plan>& shared_plan() const noexcept { return plan_; }
  [[nodiscard]] bool has_plan() const noexcept { return plan_ != nullptr; }
  // The plan's total cost (Plan::cost, the engine's sum over its path); 0 without a plan.
  [[nodiscard]] double total() const noexcept;
  // total() as shown: "4", "14.41 µs"; empty without a plan.
  [[nodiscard]] QString total_text() const;
  [[nodiscard]] const QString& error() const noexcept { return error_; }
  [[nodiscard]] const QString& cost_unit() const noexcept { return unit_; }
  // One line: "3 steps (all_gather 2, chunk 1), total 4; 12 states explored"; "No plan." without one.
  [[nodiscard]] QString summary() const;
  // The Axis column's text of a step (see above).
  [[nodiscard]] QString axis_text(int row) const;
  // A cost in this model's unit as the Cost column shows it.
  [[nodiscard]] QString cost_text(double cost) const;

private:
  std::shared_ptr<const Plan> plan_;
  MeshSpec mesh_;
  QString unit_;
  QString error_;
};

}  // namespace meshloom::app
