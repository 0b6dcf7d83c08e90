#include "advisor/advisor_chart.hpp"

#include <QMouseEvent>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "advisor/advisor_model.hpp"
#include "costs/plot_support.hpp"

namespace meshloom::app {

struct AdvisorChart::Impl {
  QCustomPlot* plot = nullptr;
  std::vector<std::string> axes;             // stacking order, bottom first
  std::vector<std::vector<double>> heights;  // [bar][axis]
  std::vector<QCPBars*> bars;                // one per axis
  std::vector<QString> labels;               // per bar: "2 (tp 4, dp 2): 1.2 ms"
  QCPItemRect* outline = nullptr;
  std::optional<std::size_t> highlighted;
  double scale = 1;  // drawn value = cost / scale

  void draw_outline() {
    if (outline != nullptr) {
      plot->removeItem(outline);
      outline = nullptr;
    }
    if (!highlighted || *highlighted >= heights.size()) return;
    double total = 0;
    for (double h : heights[*highlighted]) total += h;
    outline = new QCPItemRect(plot);
    const double x = static_cast<double>(*highlighted + 1);
    outline->topLeft->setCoords(x - 0.45, total / scale);
    outline->bottomRight->setCoords(x + 0.45, 0);
    QPen pen(plot->palette().color(QPalette::Highlight));
    pen.setWidthF(2.5);
    outline->setPen(pen);
    outline->setBrush(Qt::NoBrush);
  }
};

AdvisorChart::AdvisorChart(QWidget* parent) : QWidget(parent), d_(std::make_unique<Impl>()) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  d_->plot = new QCustomPlot(this);
  d_->plot->setObjectName(QStringLiteral("advisor_plot"));
  d_->plot->setMinimumSize(320, 145);
  d_->plot->legend->setVisible(false);
  place_legend_below(*d_->plot);
  follow_palette(*d_->plot);
  d_->plot->xAxis->setLabel(tr("layout, by rank (as in the table)"));
  d_->plot->yAxis->setLabel(tr("cost per step"));
  layout->addWidget(d_->plot, 1);
  connect(d_->plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* event) {
    const double x = d_->plot->xAxis->pixelToCoord(event->position().x());
    const auto bar = static_cast<long long>(std::llround(x)) - 1;
    const bool on_bar = bar >= 0 && static_cast<std::size_t>(bar) < d_->labels.size() &&
                        std::abs(x - static_cast<double>(bar + 1)) <= 0.45;
    d_->plot->setToolTip(on_bar ? d_->labels[static_cast<std::size_t>(bar)] : QString());
  });
  connect(d_->plot, &QCustomPlot::mousePress, this, [this](QMouseEvent* event) {
    const double x = d_->plot->xAxis->pixelToCoord(event->position().x());
    const auto bar = static_cast<long long>(std::llround(x)) - 1;
    if (bar >= 0 && static_cast<std::size_t>(bar) < d_->heights.size() && std::abs(x - static_cast<double>(bar + 1)) <= 0.45) {
      emit candidate_clicked(static_cast<std::size_t>(bar));
    }
  });
}

AdvisorChart::~AdvisorChart() = default;

void AdvisorChart::set_candidates(const std::vector<CandidateCost>& ranked, const QString& unit) {
  QCustomPlot* plot = d_->plot;
  plot->clearPlottables();
  plot->clearItems();
  d_->outline = nullptr;
  d_->bars.clear();
  d_->axes.clear();
  d_->heights.clear();
  d_->labels.clear();
  const std::size_t n = std::min(ranked.size(), kMaxBars);
  for (std::size_t i = 0; i < n; ++i) {
    for (const auto& a : ranked[i].axes) {
      if (std::find(d_->axes.begin(), d_->axes.end(), a.name) == d_->axes.end()) d_->axes.push_back(a.name);
    }
  }
  d_->heights.assign(n, std::vector<double>(d_->axes.size(), 0.0));
  for (std::size_t i = 0; i < n; ++i) {
    for (const auto& a : ranked[i].axes) {
      const auto k = static_cast<std::size_t>(std::find(d_->axes.begin(), d_->axes.end(), a.name) - d_->axes.begin());
      d_->heights[i][k] = std::isfinite(a.cost) ? a.cost : 0.0;
    }
  }
  // Microsecond costs are drawn in the unit their largest bar reads best in (a 405B step is seconds).
  double top = 0;
  for (const auto& h : d_->heights) {
    double total = 0;
    for (double v : h) total += v;
    top = std::max(top, total);
  }
  double scale = 1;
  QString shown_unit = unit;
  if (unit == QStringLiteral("µs") && top >= 1e6) {
    scale = 1e6;
    shown_unit = QStringLiteral("s");
  } else if (unit == QStringLiteral("µs") && top >= 1e3) {
    scale = 1e3;
    shown_unit = QStringLiteral("ms");
  }
  d_->scale = scale;
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  QVector<double> keys;
  for (std::size_t i = 0; i < n; ++i) {
    keys << static_cast<double>(i + 1);
    d_->labels.push_back(QStringLiteral("%1 %2: %3").arg(i + 1).arg(layout_label(ranked[i].mesh), cost_text(ranked[i].cost, unit)));
    ticker->addTick(static_cast<double>(i + 1), QString::number(i + 1));  // the table's Rank; layouts are long
  }
  plot->xAxis->setTicker(ticker);
  QCPBars* below = nullptr;
  for (std::size_t k = 0; k < d_->axes.size(); ++k) {
    auto* bars = new QCPBars(plot->xAxis, plot->yAxis);
    bars->setName(QString::fromStdString(d_->axes[k]));
    const QColor color = series_color(k);
    bars->setPen(QPen(color.darker(130)));
    bars->setBrush(color);
    bars->setWidth(0.8);
    QVector<double> values;
    for (std::size_t i = 0; i < n; ++i) values << d_->heights[i][k] / scale;
    bars->setData(keys, values, true);
    if (below != nullptr) bars->moveAbove(below);
    below = bars;
    d_->bars.push_back(bars);
  }
  plot->yAxis->setLabel(unit.isEmpty() ? tr("cost per step (fixed weights)") : tr("cost per step (%1)").arg(shown_unit));
  plot->xAxis->setRange(0.4, static_cast<double>(std::max<std::size_t>(n, 1)) + 0.6);
  plot->yAxis->setRange(0, top > 0 ? top / scale * 1.08 : 1);
  plot->legend->setVisible(!d_->axes.empty());
  d_->draw_outline();
  plot->replot();
}

void AdvisorChart::clear() { set_candidates({}, QString()); }

void AdvisorChart::set_highlighted(std::optional<std::size_t> index) {
  d_->highlighted = index;
  d_->draw_outline();
  d_->plot->replot();
}

const std::vector<std::string>& AdvisorChart::stacked_axes() const noexcept { return d_->axes; }
std::size_t AdvisorChart::bar_count() const noexcept { return d_->heights.size(); }

double AdvisorChart::segment(std::size_t bar, const std::string& axis) const {
  if (bar >= d_->heights.size()) return 0;
  const auto it = std::find(d_->axes.begin(), d_->axes.end(), axis);
  return it == d_->axes.end() ? 0 : d_->heights[bar][static_cast<std::size_t>(it - d_->axes.begin())];
}

QCustomPlot* AdvisorChart::plot() const noexcept { return d_->plot; }

bool AdvisorChart::save_png(const QString& path, int width, int height, QString* error) {
  return export_plot(*d_->plot, PlotFormat::Png, path, width, height, error);
}

}  // namespace meshloom::app
