// AdvisorChart: each ranked layout's cost per step as a stacked bar, one stack segment per mesh axis (the axis'
// colour is the same in every bar, so a segment that grows from one layout to the next is the axis that got
// dearer), cheapest layout on the left, numbered by its rank in the table, a legend of the axes; hovering a bar names its layout
// (tooltip). The highlighted
// candidate (the one previewed) is outlined. At most kMaxBars bars (the cheapest); PNG and PDF export as CostChart's.
//
// The plot is a QCustomPlot; this header does not include qcustomplot.h (only advisor_chart.cpp and tests do).
#pragma once

#include <QString>
#include <QWidget>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "meshloom/advisor/advisor.hpp"

class QCustomPlot;

namespace meshloom::app {

class AdvisorChart : public QWidget {
  Q_OBJECT

public:
  static constexpr std::size_t kMaxBars = 24;

  explicit AdvisorChart(QWidget* parent = nullptr);
  ~AdvisorChart() override;
  AdvisorChart(const AdvisorChart&) = delete;
  AdvisorChart& operator=(const AdvisorChart&) = delete;

  // Draws the first kMaxBars candidates of `ranked`, `unit` on the value axis ("µs", or "" for fixed weights).
  void set_candidates(const std::vector<CandidateCost>& ranked, const QString& unit);
  void clear();
  // Outlines the bar of candidate `index` (into the ranked list); nullopt: none.
  void set_highlighted(std::optional<std::size_t> index);

  // What is drawn: the axes of the stacks (bottom to top) and each bar's segment heights, for tests.
  [[nodiscard]] const std::vector<std::string>& stacked_axes() const noexcept;
  [[nodiscard]] std::size_t bar_count() const noexcept;
  // The cost of `axis`'s segment in bar `bar` (in the candidates' unit; the plot may draw it in ms or s); 0 when the
  // axis is not in that layout.
  [[nodiscard]] double segment(std::size_t bar, const std::string& axis) const;
  [[nodiscard]] QCustomPlot* plot() const noexcept;

  bool save_png(const QString& path, int width = 0, int height = 0, QString* error = nullptr);

signals:
  // A click on a bar: the candidate's index into the ranked list.
  void candidate_clicked(std::size_t index);

private:
  struct Impl;
  std::unique_ptr<Impl> d_;
};

}  // namespace meshloom::app
