// FitTableModel: a calibration's fits, one row per keyed curve (collective, group shape), with what the fit says
// and how well it holds: the model the curve predicts with (piecewise in log size, or alpha-beta), the alpha-beta
// fit over all its points (alpha in µs, bus bandwidth in GB/s, R²), its held-out error (fit on part of the sweep,
// predict the rest: median and p90 of |predicted - measured| / measured) and its number of points. A calibration
// without curves (written before them) shows its per-axis alpha-beta fits instead, one row per (axis,
// collective). A curve corrected by what plans measured when they ran (meshloom-launch refine) shows the range of its
// as-run factors and their sizes ("0.74–1.17× (5)"). A curve that axes of the calibrated mesh share, when the
// calibration corrects each by its own time (axis corrections, ranks bound), shows each axis' range in "by axis"
// ("dp 0.73–0.99×, tp 1.01–1.27×"). Read-only; the Costs dock shows it in its "Fits" tab.
//
// Worked example: the curve {all_reduce, 2 ranks on 1 host, piecewise, alpha 12.0, busbw 3.1, R² 0.998, held-out
// 4% / 11% over 7 points} is the row
//   all_reduce | 2 ranks on 1 host (2 per host) | piecewise | 12.0 | 3.10 | 0.998 | 4.0% | 11.0% | 14 | – | –
#pragma once

#include <QAbstractTableModel>
#include <QString>

#include <optional>
#include <vector>

#include "meshloom/plan/cost_model.hpp"

namespace meshloom::app {

class FitTableModel : public QAbstractTableModel {
  Q_OBJECT

public:
  enum Column {
    Collective, Group, Model, Alpha, Busbw, R2, HeldOutMedian, HeldOutP90, Points, AsRun, ByAxis, ColumnCount
  };

  explicit FitTableModel(QObject* parent = nullptr);

  void set_calibration(const std::optional<Calibration>& calibration);
  [[nodiscard]] const std::optional<Calibration>& calibration() const noexcept { return calibration_; }

  [[nodiscard]] int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  // One line over the whole calibration: "15 curves (mpi, single-shot); held-out error median 2.1%–9.8%, p90 at
  // most 24%", or "6 per-axis fits (mpi)"; empty without a calibration.
  [[nodiscard]] QString summary() const;

private:
  struct Row {
    QString collective;
    QString group;
    QString model;
    std::optional<CollectiveFit> fit;
    std::optional<HoldoutError> holdout;
    std::int64_t points = 0;
    std::vector<AsRunPoint> as_run;
    QString by_axis;  // "dp 0.73–0.99×, tp 1.01–1.27×"; empty without axis corrections
  };
  std::optional<Calibration> calibration_;
  std::vector<Row> rows_;
};

// The same line for a calibration, without a model (FitTableModel::summary).
[[nodiscard]] QString calibration_summary(const Calibration& calibration);

}  // namespace meshloom::app
