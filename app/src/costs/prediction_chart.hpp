// PredictionChart: what the cost models predicted for each step of `meshloom-launch run` / `validate` against what
// the step measured (PredictionRecords). A scatter on log-log axes, predicted time on x and measured on y, one
// colour and marker per microsecond model with a legend, the y = x diagonal (on it: predicted exactly), and under
// it a table with each model's points, median and p90 relative error and Spearman rank correlation. PyTorch's
// "fixed" weights are unitless: listed in the table as not comparable, never plotted. A read-out names the point
// nearest the pointer; PNG and PDF export as CostChart's.
//
// The plot is a QCustomPlot; this header does not include qcustomplot.h (only prediction_chart.cpp and tests do).
#pragma once

#include <QPointF>
#include <QString>
#include <QWidget>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "costs/prediction_points.hpp"

class QCustomPlot;
class QLabel;
class QTableWidget;

namespace meshloom::app {

class PredictionChart : public QWidget {
  Q_OBJECT

public:
  explicit PredictionChart(QWidget* parent = nullptr);
  ~PredictionChart() override;
  PredictionChart(const PredictionChart&) = delete;
  PredictionChart& operator=(const PredictionChart&) = delete;

  // Replaces the records and redraws; `title` names their source (a file name) above the plot.
  void set_records(PredictionRecords records, const QString& title = QString());
  [[nodiscard]] const PredictionRecords& records() const noexcept;
  void clear();

  // The models drawn (microsecond models with at least one point), in the records' order.
  [[nodiscard]] std::vector<std::string> plotted_models() const;
  // Points a model has that cannot be drawn on log axes (a prediction of 0, e.g. a local chunk step): counted in
  // the statistics, not drawn.
  [[nodiscard]] std::size_t undrawn(const std::string& model) const;

  // The summary table: Model, Points, Median error, p90 error, Spearman ρ; one row per model.
  [[nodiscard]] QTableWidget* summary_table() const noexcept;
  // The text of a table cell (row, column), for tests and the clipboard.
  [[nodiscard]] QString summary_cell(int row, int column) const;
  // The line above the table that says how far the machine drifted from the calibration (validate's drift
  // records: drift_text), in the error colour when it drifted; hidden without drift records.
  [[nodiscard]] QLabel* drift_label() const noexcept;

  // The text for the point nearest `pos` (plot widget coordinates) within `max_distance` pixels; empty when
  // none is that close. "calibrated · all_gather · 16 KiB · predicted 21.50 us · measured 23.90 us · 10.0 % off
  // · plan 0 step 1 · line 3".
  [[nodiscard]] QString readout_at(const QPointF& pos, double max_distance = 24.0) const;
  [[nodiscard]] QString readout() const;

  bool save_png(const QString& path, int width = 0, int height = 0, QString* error = nullptr);
  bool save_pdf(const QString& path, int width = 0, int height = 0, QString* error = nullptr);

  // The plot, for tests (include qcustomplot.h to use it). Graphs: one per plotted model, named as the model,
  // then "y = x".
  [[nodiscard]] QCustomPlot* plot() const noexcept;

signals:
  void chartChanged();
  void readoutChanged(const QString& text);

private:
  struct Impl;
  std::unique_ptr<Impl> d_;
};

// "12.3 %" for a relative error of 0.123; "—" for NaN.
[[nodiscard]] QString format_percent(double fraction);

}  // namespace meshloom::app
