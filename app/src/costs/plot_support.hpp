// What the app's QCustomPlot charts (CostChart, PredictionChart) share: the series palette, the microsecond log
// ticker and the PNG / PDF export. Defined in cost_chart.cpp, so qcustomplot.h is compiled by one translation
// unit fewer; this header only forward-declares QCustomPlot's types.
#pragma once

#include <QColor>
#include <QSharedPointer>
#include <QString>

#include <cstddef>

class QCustomPlot;
class QCPAxisTicker;

namespace meshloom::app {

// Distinct colours for series, by index (cycling).
[[nodiscard]] QColor series_color(std::size_t index);
// Log ticks in microseconds, labelled µs, ms or s.
[[nodiscard]] QSharedPointer<QCPAxisTicker> make_time_ticker();
// Colours the plot from its palette (background Base, axes, labels, titles and legend text Text, grid lines between
// the two) now and whenever the palette changes, so that a chart follows the dark theme. On a light palette the
// grid keeps QCustomPlot's own greys.
void follow_palette(QCustomPlot& plot);
// Moves the plot's legend out of the axis rect to a row of its own under it (entries across, wrapping after
// `columns`), so that it never covers a point; call once, after the plot's layout is set up.
void place_legend_below(QCustomPlot& plot, int columns = 4);

enum class PlotFormat { Png, Pdf };
// Writes `plot` as PNG or PDF at width x height (0: the plot's current size, or 800 x 500 when it has none; at
// most 16384 per side), atomically (QSaveFile): on failure `path` keeps its old content, false is returned and
// *error is "Cannot write <path>: <cause>".
bool export_plot(QCustomPlot& plot, PlotFormat format, const QString& path, int width, int height, QString* error);

}  // namespace meshloom::app
