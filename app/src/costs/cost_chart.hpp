// CostChart: measured collective costs against message size, one series per mesh axis, for one collective at a
// time: time (us) or bus bandwidth (GB/s) on log-log axes, or the fit's residual per point (%), the fitted model of a calibration over the points as a
// line (the engine's calibrated cost), a legend, a read-out of the point nearest the pointer, PNG and PDF export.
// Points can stream in (append_line) as a live run writes its JSON Lines; the axes rescale as they arrive.
//
// The plot is a QCustomPlot. This header does not include qcustomplot.h (it costs seconds per translation unit):
// only cost_chart.cpp and code that inspects the plot (tests) do.
#pragma once

#include <QPointF>
#include <QString>
#include <QWidget>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "costs/measurements.hpp"

class QCustomPlot;

namespace meshloom::app {

class CostChart : public QWidget {
  Q_OBJECT

public:
  // Time (us) and bus bandwidth (GB/s) on log axes; Residual: each measured point's 100 (fit - measured) / measured
  // against its size on a linear axis, the fit as the zero line (points of series without a fit are not drawn).
  enum class Metric { Time, BusBandwidth, Residual };

  explicit CostChart(QWidget* parent = nullptr);
  ~CostChart() override;
  CostChart(const CostChart&) = delete;
  CostChart& operator=(const CostChart&) = delete;

  // ---- data ----
  // Replaces the points (and the calibration, when `measurements` holds one) and redraws.
  void set_measurements(Measurements measurements);
  [[nodiscard]] const Measurements& measurements() const noexcept;
  // Streaming: adds one JSON Lines record (see Measurements::add_line) and, when it is a result, redraws and
  // rescales. The first collective seen becomes the shown one when none is chosen. Never throws.
  LineResult append_line(std::string_view line);
  // Adds one point directly and redraws.
  void append(const SeriesKey& key, const MeasuredPoint& point);
  // The fitted model: a calibration, or none (no fitted lines).
  void set_calibration(std::optional<Calibration> calibration);
  // Loads a calibration file; empty on success, else the engine's message (the chart is unchanged).
  [[nodiscard]] QString load_calibration(const QString& path);
  void clear();

  // ---- what is shown ----
  // The collective shown (all_reduce, ...). Empty: the first one with points.
  void set_collective(const QString& collective);
  [[nodiscard]] QString collective() const;
  void set_metric(Metric metric);
  [[nodiscard]] Metric metric() const noexcept;
  // The axes shown; empty: every axis.
  void set_axes(const std::vector<std::string>& axes);
  [[nodiscard]] const std::vector<std::string>& axes_filter() const noexcept;

  // ---- read-out ----
  // The text for the measured point nearest `pos` (plot widget coordinates), within `max_distance` pixels;
  // empty when none is that close. "tp · all_reduce · 64 KiB (65536 B) · 35.29 us · busbw 1.857 GB/s · n=2".
  [[nodiscard]] QString readout_at(const QPointF& pos, double max_distance = 24.0) const;
  // The read-out currently shown under the plot (set by mouse moves over the plot).
  [[nodiscard]] QString readout() const;
  // Where a measured point is drawn, in plot widget coordinates (after the last replot); nullopt when not shown.
  [[nodiscard]] std::optional<QPointF> point_position(const SeriesKey& key, std::size_t index) const;

  // ---- export ----
  // Writes the chart as PNG or PDF at width x height (0: the plot's current size, or 800 x 500 when it has none;
  // at most 16384 per side). Written atomically (QSaveFile): on failure `path` keeps its old content, false is
  // returned and *error is "Cannot write <path>: <cause>".
  bool save_png(const QString& path, int width = 0, int height = 0, QString* error = nullptr);
  bool save_pdf(const QString& path, int width = 0, int height = 0, QString* error = nullptr);

  // The plot, for embedding options and for tests (include qcustomplot.h to use it).
  [[nodiscard]] QCustomPlot* plot() const noexcept;

signals:
  // After every redraw: the shown collective may have changed, points arrived or the calibration changed.
  void chartChanged();
  // The hover read-out changed (empty when the pointer left every point).
  void readoutChanged(const QString& text);

private:
  struct Impl;
  std::unique_ptr<Impl> d_;
};

// "512 B", "1 KiB", "1.5 KiB", "256 MiB", "2 GiB": binary units, up to 3 significant digits.
[[nodiscard]] QString format_bytes(double bytes);
// nccl-tests' time precision: 2 decimals below 100 us, 1 below 10000, none above; "35.29 us".
[[nodiscard]] QString format_time_us(double time_us);
// "1.857 GB/s" (4 significant digits).
[[nodiscard]] QString format_gbps(double gbps);

}  // namespace meshloom::app
