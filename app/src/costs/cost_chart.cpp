#include "costs/cost_chart.hpp"

#include <QComboBox>
#include <QFile>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QSaveFile>
#include <QSignalBlocker>
#include <QTemporaryDir>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "meshloom/plan/cost_model.hpp"
#include "costs/plot_support.hpp"

namespace meshloom::app {

namespace {

constexpr int kMaxExportSide = 16384;
constexpr int kDefaultExportWidth = 800;
constexpr int kDefaultExportHeight = 500;
constexpr int kFitSamples = 64;
constexpr double kMargin = 1.6;  // log-space margin around the data when rescaling

// Distinct colours, one per axis (in the order axes are first seen).
QColor axis_color(std::size_t index) { return series_color(index); }

QString trim_number(double value, int significant) {
  return QString::number(value, 'g', significant);
}

// Log ticks labelled with binary byte units. Base 2: QCustomPlot steps in powers of 2^k (k a clean number), so
// the ticks land on 1 KiB, 32 KiB, 1 MiB or 1 KiB, 1 MiB, 1 GiB as the range needs.
class BytesTicker : public QCPAxisTickerLog {
public:
  BytesTicker() {
    setLogBase(2);
    setSubTickCount(1);
    setTickCount(6);
  }

protected:
  QString getTickLabel(double tick, const QLocale& /*locale*/, QChar /*format*/, int /*precision*/) override {
    return format_bytes(tick);
  }
};

// Base-10 log ticks that stay logarithmic on a narrow range. QCustomPlot's log ticker falls back to linear ticks
// below 1.6 decades (10, 15, 20, ... 150: crowded at the top, nothing at the bottom of a log axis); here such a
// range gets m x 10^k for m in {1, 2, 5}, or in 1..9 when that gives fewer than 3, and the fallback only when even
// that does (a range within one step of 1..9).
class DecadeTicker : public QCPAxisTickerLog {
public:
  DecadeTicker() {
    setLogBase(10);
    setSubTickCount(8);
  }

protected:
  QVector<double> createTickVector(double tick_step, const QCPRange& range) override {
    narrow_ = false;
    if (range.lower > 0 && range.upper > range.lower && std::log10(range.upper / range.lower) < 1.6) {
      const auto first = static_cast<int>(std::floor(std::log10(range.lower)));
      const auto last = static_cast<int>(std::ceil(std::log10(range.upper)));
      static const std::vector<std::vector<int>> kMantissas{{1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}};
      for (const std::vector<int>& mantissas : kMantissas) {
        QVector<double> ticks;
        for (int k = first; k <= last; ++k) {
          for (const int m : mantissas) {
            const double tick = m * std::pow(10.0, k);
            if (tick >= range.lower && tick <= range.upper) ticks.push_back(tick);
          }
        }
        if (ticks.size() >= 3) {
          narrow_ = true;
          range_ = range;
          return ticks;
        }
      }
    }
    return QCPAxisTickerLog::createTickVector(tick_step, range);
  }

  // Sub-ticks at the m x 10^k (m in 1..9) in the range that are not ticks, past the first and last tick too (15..450
  // ticks 20, 50, 100, 200 and has sub-ticks at 300 and 400): QCustomPlot's own are evenly spaced in value, which is
  // right only between decades (20, 50, 100 got 23.3, 26.7, ...).
  QVector<double> createSubTickVector(int sub_tick_count, const QVector<double>& ticks) override {
    if (!narrow_) return QCPAxisTickerLog::createSubTickVector(sub_tick_count, ticks);
    QVector<double> sub;
    const auto first = static_cast<int>(std::floor(std::log10(range_.lower)));
    const auto last = static_cast<int>(std::ceil(std::log10(range_.upper)));
    for (int k = first; k <= last; ++k) {
      for (int m = 1; m <= 9; ++m) {
        const double v = m * std::pow(10.0, k);
        const bool is_tick = std::any_of(ticks.begin(), ticks.end(), [v](double t) { return std::abs(t - v) <= 1e-9 * v; });
        if (v >= range_.lower && v <= range_.upper && !is_tick) sub.push_back(v);
      }
    }
    return sub;
  }

private:
  bool narrow_ = false;  // the last tick vector was this ticker's own (a narrow range), ...
  QCPRange range_;       // ... for this range
};

// Log ticks in microseconds, shown as µs, ms or s.
class TimeTicker : public DecadeTicker {
protected:
  QString getTickLabel(double tick, const QLocale& /*locale*/, QChar /*format*/, int /*precision*/) override {
    if (tick >= 1e6) return trim_number(tick / 1e6, 3) + QStringLiteral(" s");
    if (tick >= 1e3) return trim_number(tick / 1e3, 3) + QStringLiteral(" ms");
    return trim_number(tick, 3) + QStringLiteral(" \u00b5s");
  }
};

// Log ticks in GB/s.
class BandwidthTicker : public DecadeTicker {
protected:
  QString getTickLabel(double tick, const QLocale& /*locale*/, QChar /*format*/, int /*precision*/) override {
    return trim_number(tick, 6);
  }
};

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = 0;
  void add(double v) {
    if (v > 0 && std::isfinite(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  [[nodiscard]] bool valid() const { return hi > 0 && std::isfinite(lo); }
};

}  // namespace

QString format_bytes(double bytes) {
  static const std::array<const char*, 7> units{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (!std::isfinite(bytes)) return QStringLiteral("?");
  double value = bytes;
  std::size_t unit = 0;
  while (std::abs(value) >= 1024.0 && unit + 1 < units.size()) {
    value /= 1024.0;
    ++unit;
  }
  return trim_number(value, 3) + QLatin1Char(' ') + QLatin1String(units[unit]);
}

QString format_time_us(double time_us) {
  const int decimals = time_us < 100 ? 2 : (time_us < 10000 ? 1 : 0);
  return QString::number(time_us, 'f', decimals) + QStringLiteral(" \u00b5s");
}

QString format_gbps(double gbps) { return QString::number(gbps, 'g', 4) + QStringLiteral(" GB/s"); }

// ---- Impl ----------------------------------------------------------------------------------------------------

struct CostChart::Impl {
  Measurements model;
  QString collective;  // chosen; empty: the first with points
  Metric metric = Metric::Time;
  std::vector<std::string> axes_filter;

  QCustomPlot* plot = nullptr;
  QCPTextElement* title = nullptr;
  QComboBox* collective_box = nullptr;
  QComboBox* metric_box = nullptr;
  QComboBox* axis_box = nullptr;
  QLabel* readout = nullptr;

  // The measured series drawn now.
  std::vector<SeriesKey> shown;

  [[nodiscard]] QString effective_collective() const {
    if (!collective.isEmpty()) return collective;
    const auto all = model.collectives();
    return all.empty() ? QString() : QString::fromStdString(all.front());
  }
  [[nodiscard]] bool axis_shown(const std::string& axis) const {
    return axes_filter.empty() || std::find(axes_filter.begin(), axes_filter.end(), axis) != axes_filter.end();
  }
  // The point's value under the metric: NaN for a residual without a fit (not drawn).
  [[nodiscard]] double value_of(const SeriesKey& key, const MeasuredPoint& p) const {
    if (metric == Metric::Residual) return residual_percent(key, p);
    return metric == Metric::Time ? p.time_us : p.busbw_gbps;
  }
  // 100 (fit - measured) / measured at the point's size; NaN when the calibration has no fit for the series.
  [[nodiscard]] double residual_percent(const SeriesKey& key, const MeasuredPoint& p) const {
    const auto fit = model.fitted(key, static_cast<double>(p.bytes));
    if (!fit || !(p.time_us > 0) || !std::isfinite(fit->time_us)) return std::nan("");
    return 100.0 * (fit->time_us - p.time_us) / p.time_us;
  }
  // Whether a value can be drawn: any finite residual, positive times and bandwidths (log axis).
  [[nodiscard]] bool drawable(double y) const { return metric == Metric::Residual ? std::isfinite(y) : y > 0; }
  // Every axis of the chosen collective, measured ones first, then those only the calibration has.
  [[nodiscard]] std::vector<std::string> axes_of(const std::string& coll) const {
    std::vector<std::string> out;
    for (const auto& s : model.series()) {
      if (s.key.collective == coll && std::find(out.begin(), out.end(), s.key.axis) == out.end()) {
        out.push_back(s.key.axis);
      }
    }
    if (const auto& cal = model.calibration()) {
      for (const auto& [axis, fits] : cal->axes) {
        if (fits.contains(coll) && std::find(out.begin(), out.end(), axis) == out.end()) out.push_back(axis);
      }
    }
    return out;
  }
  [[nodiscard]] std::size_t color_index(const std::string& axis) const {
    const auto all = model.axes();
    const auto it = std::find(all.begin(), all.end(), axis);
    if (it != all.end()) return static_cast<std::size_t>(it - all.begin());
    std::size_t extra = all.size();
    if (const auto& cal = model.calibration()) {
      for (const auto& [name, fits] : cal->axes) {
        if (name == axis) return extra;
        if (std::find(all.begin(), all.end(), name) == all.end()) ++extra;
      }
    }
    return extra;
  }

  void sync_controls() {
    {
      const QSignalBlocker block(collective_box);
      collective_box->clear();
      std::vector<std::string> names = model.collectives();
      if (const auto& cal = model.calibration()) {
        for (const auto& [axis, fits] : cal->axes) {
          for (const auto& [name, fit] : fits) {
            if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
          }
        }
      }
      const QString current = effective_collective();
      if (!current.isEmpty() && std::find(names.begin(), names.end(), current.toStdString()) == names.end()) {
        names.push_back(current.toStdString());
      }
      for (const auto& n : names) collective_box->addItem(QString::fromStdString(n));
      collective_box->setCurrentIndex(collective_box->findText(current));
    }
    {
      const QSignalBlocker block(metric_box);
      metric_box->setCurrentIndex(static_cast<int>(metric));
    }
    {
      const QSignalBlocker block(axis_box);
      axis_box->clear();
      axis_box->addItem(QObject::tr("All axes"));
      for (const auto& a : axes_of(effective_collective().toStdString())) axis_box->addItem(QString::fromStdString(a));
      axis_box->setCurrentIndex(axes_filter.size() == 1 ? std::max(0, axis_box->findText(QString::fromStdString(axes_filter.front()))) : 0);
    }
  }

  void rebuild() {
    plot->clearGraphs();
    shown.clear();
    const std::string coll = effective_collective().toStdString();

    // The size range the fitted lines cover: the measured points of this collective, else the run's sweep.
    Range sizes;
    for (const auto& s : model.series()) {
      if (s.key.collective != coll || !axis_shown(s.key.axis)) continue;
      for (const auto& p : s.points) sizes.add(static_cast<double>(p.bytes));
    }
    if (!sizes.valid() && model.config()) {
      for (const auto b : model.config()->sizes) sizes.add(static_cast<double>(b));
    }
    if (!sizes.valid()) {
      sizes.add(1024.0);
      sizes.add(1024.0 * 1024.0 * 1024.0);
    }

    for (const auto& axis : axes_of(coll)) {
      if (!axis_shown(axis)) continue;
      const QColor color = axis_color(color_index(axis));
      const SeriesKey key{axis, coll};
      if (const MeasuredSeries* s = model.find(key)) {
        QCPGraph* g = plot->addGraph();
        g->setName(QString::fromStdString(axis));
        g->setLineStyle(QCPGraph::lsNone);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, color, color, 7));
        g->setPen(QPen(color));
        QVector<double> xs;
        QVector<double> ys;
        for (const auto& p : s->points) {
          const double y = value_of(key, p);
          if (p.bytes > 0 && drawable(y)) {
            xs.push_back(static_cast<double>(p.bytes));
            ys.push_back(y);
          }
        }
        g->setData(xs, ys);
        shown.push_back(key);
      }
      const auto curve = model.fitted_curve(key, sizes.lo, sizes.hi, kFitSamples);
      const auto n = model.group_size(key);
      if (!curve.empty() && n && metric != Metric::Residual) {
        QCPGraph* g = plot->addGraph();
        g->setName(QString::fromStdString(axis) + QStringLiteral(" fit"));
        QPen pen(color);
        pen.setWidthF(1.5);
        pen.setStyle(Qt::DashLine);
        g->setPen(pen);
        g->setLineStyle(QCPGraph::lsLine);
        QVector<double> xs;
        QVector<double> ys;
        const double factor = bus_factor(coll, *n);
        for (const auto& p : curve) {
          const double y = metric == Metric::Time ? p.time_us : factor * p.bytes / (p.time_us * 1e3);
          if (p.bytes > 0 && y > 0 && std::isfinite(y)) {
            xs.push_back(p.bytes);
            ys.push_back(y);
          }
        }
        g->setData(xs, ys, true);
      }
    }

    if (metric == Metric::Residual) {
      // The fit itself is the zero line: a point above it was measured faster than fitted, below slower.
      QCPGraph* zero = plot->addGraph();
      zero->setName(QObject::tr("fit (0 %)"));
      zero->setPen(QPen(plot->palette().color(QPalette::WindowText), 1.0, Qt::DashLine));
      zero->setData(QVector<double>{sizes.lo, sizes.hi}, QVector<double>{0.0, 0.0});
    }
    plot->yAxis->setLabel(metric == Metric::Time           ? QObject::tr("time")
                          : metric == Metric::BusBandwidth ? QObject::tr("bus bandwidth (GB/s)")
                                                           : QObject::tr("fit residual: (fit - measured) / measured (%)"));
    plot->yAxis->setScaleType(metric == Metric::Residual ? QCPAxis::stLinear : QCPAxis::stLogarithmic);
    if (metric == Metric::Time) {
      plot->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new TimeTicker));
    } else if (metric == Metric::Residual) {
      plot->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    } else {
      plot->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new BandwidthTicker));
    }
    title->setText(coll.empty() ? QObject::tr("No measurements: open a bench run (Open...) or run one (Run benchmark...)")
                                : QString::fromStdString(coll) +
                                      (metric == Metric::Time           ? QObject::tr(": time against message size")
                                       : metric == Metric::BusBandwidth ? QObject::tr(": bus bandwidth against message size")
                                                                        : QObject::tr(": the fit's residuals per size")));
    plot->legend->setVisible(plot->graphCount() > 0);
    rescale();
    sync_controls();
  }

  void rescale() {
    Range xr;
    Range yr;
    double reach = 10.0;  // residuals: the largest |value|, at least 10 %
    for (int i = 0; i < plot->graphCount(); ++i) {
      const auto data = plot->graph(i)->data();
      for (auto it = data->constBegin(); it != data->constEnd(); ++it) {
        xr.add(it->key);
        yr.add(it->value);
        if (std::isfinite(it->value)) reach = std::max(reach, std::abs(it->value));
      }
    }
    if (!xr.valid()) {
      xr.add(1024.0);
      xr.add(1024.0 * 1024.0);
    }
    if (!yr.valid()) {
      yr.add(1.0);
      yr.add(1000.0);
    }
    plot->xAxis->setRange(xr.lo / kMargin, xr.hi * kMargin);
    if (metric == Metric::Residual) {  // linear, symmetric around the fit, at least +-10 %
      plot->yAxis->setRange(-reach * 1.15, reach * 1.15);
    } else {
      plot->yAxis->setRange(yr.lo / kMargin, yr.hi * kMargin);
    }
  }

  [[nodiscard]] const MeasuredPoint* point(const SeriesKey& key, std::size_t index) const {
    const MeasuredSeries* s = model.find(key);
    if (s == nullptr || index >= s->points.size()) return nullptr;
    return &s->points[index];
  }

  [[nodiscard]] std::optional<QPointF> position(const SeriesKey& key, std::size_t index) const {
    if (std::find(shown.begin(), shown.end(), key) == shown.end()) return std::nullopt;
    const MeasuredPoint* p = point(key, index);
    if (p == nullptr || p->bytes <= 0 || !drawable(value_of(key, *p))) return std::nullopt;
    return QPointF(plot->xAxis->coordToPixel(static_cast<double>(p->bytes)),
                   plot->yAxis->coordToPixel(value_of(key, *p)));
  }

  [[nodiscard]] QString text_of(const SeriesKey& key, const MeasuredPoint& p) const {
    QString text = QString::fromStdString(key.axis) + QStringLiteral(" · ") + QString::fromStdString(key.collective) +
                   QStringLiteral(" · ") + format_bytes(static_cast<double>(p.bytes)) + QStringLiteral(" (") +
                   QString::number(p.bytes) + QStringLiteral(" B) · ") + format_time_us(p.time_us) +
                   QStringLiteral(" · busbw ") + format_gbps(p.busbw_gbps) + QStringLiteral(" · n=") +
                   QString::number(p.group_size);
    if (const auto fit = model.fitted(key, static_cast<double>(p.bytes))) {
      text += QStringLiteral(" · fit ") + format_time_us(fit->time_us);
      const double residual = residual_percent(key, p);
      if (std::isfinite(residual)) {
        text += QStringLiteral(" (%1%2 %)").arg(residual >= 0 ? QStringLiteral("+") : QString()).arg(residual, 0, 'f', 1);
      }
    }
    if (p.wrong != 0) text += QStringLiteral(" · %1 wrong").arg(p.wrong);
    return text;
  }

  void set_readout(const QString& text, CostChart* owner) {
    if (readout->text() == text) return;
    readout->setText(text);
    emit owner->readoutChanged(text);
  }
};

// ---- CostChart -----------------------------------------------------------------------------------------------

CostChart::CostChart(QWidget* parent) : QWidget(parent), d_(std::make_unique<Impl>()) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* bar = new QHBoxLayout;
  d_->collective_box = new QComboBox(this);
  d_->collective_box->setObjectName(QStringLiteral("collective"));
  d_->collective_box->setToolTip(tr("The collective shown"));
  d_->metric_box = new QComboBox(this);
  d_->metric_box->setObjectName(QStringLiteral("metric"));
  d_->metric_box->addItem(tr("Time"));
  d_->metric_box->addItem(tr("Bus bandwidth"));
  d_->metric_box->addItem(tr("Fit residual"));
  d_->axis_box = new QComboBox(this);
  d_->axis_box->setObjectName(QStringLiteral("axis"));
  bar->addWidget(new QLabel(tr("Collective:"), this));
  bar->addWidget(d_->collective_box);
  bar->addWidget(new QLabel(tr("Show:"), this));
  bar->addWidget(d_->metric_box);
  bar->addWidget(new QLabel(tr("Axes:"), this));
  bar->addWidget(d_->axis_box);
  // The point under the mouse, in the pickers' row (a row of its own under the chart scrolled a laptop's plan area);
  // a long readout is cut at the dock's edge rather than widening it.
  d_->readout = new QLabel(this);
  d_->readout->setObjectName(QStringLiteral("readout"));
  d_->readout->setTextInteractionFlags(Qt::TextSelectableByMouse);
  d_->readout->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  bar->addSpacing(12);
  bar->addWidget(d_->readout, 1);
  layout->addLayout(bar);

  d_->plot = new QCustomPlot(this);
  d_->plot->setObjectName(QStringLiteral("cost_plot"));
  d_->plot->setMinimumSize(320, 170);
  d_->plot->xAxis->setScaleType(QCPAxis::stLogarithmic);
  d_->plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
  d_->plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new BytesTicker));
  d_->plot->xAxis->setLabel(tr("message size"));
  d_->plot->xAxis->grid()->setSubGridVisible(false);
  d_->plot->yAxis->grid()->setSubGridVisible(true);
  d_->plot->plotLayout()->insertRow(0);
  d_->title = new QCPTextElement(d_->plot, QString(), QFont(font().family(), font().pointSize() + 1, QFont::Bold));
  d_->plot->plotLayout()->addElement(0, 0, d_->title);
  d_->plot->legend->setVisible(false);
  place_legend_below(*d_->plot);
  follow_palette(*d_->plot);
  layout->addWidget(d_->plot, 1);

  connect(d_->plot, &QCustomPlot::mouseMove, this,
          [this](QMouseEvent* event) { d_->set_readout(readout_at(event->position()), this); });
  connect(d_->collective_box, &QComboBox::currentTextChanged, this, [this](const QString& text) {
    if (!text.isEmpty()) set_collective(text);
  });
  connect(d_->metric_box, &QComboBox::currentIndexChanged, this,
          [this](int index) { set_metric(static_cast<Metric>(std::clamp(index, 0, 2))); });
  connect(d_->axis_box, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (index <= 0) {
      set_axes({});
    } else {
      set_axes({d_->axis_box->itemText(index).toStdString()});
    }
  });

  d_->rebuild();
  d_->plot->replot();
}

CostChart::~CostChart() = default;

void CostChart::set_measurements(Measurements measurements) {
  std::optional<Calibration> calibration = measurements.calibration();
  if (!calibration) calibration = d_->model.calibration();
  d_->model = std::move(measurements);
  d_->model.set_calibration(std::move(calibration));
  d_->rebuild();
  d_->plot->replot();
  emit chartChanged();
}

const Measurements& CostChart::measurements() const noexcept { return d_->model; }

LineResult CostChart::append_line(std::string_view line) {
  LineResult result = d_->model.add_line(line);
  if (result.kind == RecordKind::Result || result.kind == RecordKind::Config) {
    d_->rebuild();
    d_->plot->replot(QCustomPlot::rpQueuedReplot);
    emit chartChanged();
  }
  return result;
}

void CostChart::append(const SeriesKey& key, const MeasuredPoint& point) {
  d_->model.add_point(key, point);
  d_->rebuild();
  d_->plot->replot(QCustomPlot::rpQueuedReplot);
  emit chartChanged();
}

void CostChart::set_calibration(std::optional<Calibration> calibration) {
  d_->model.set_calibration(std::move(calibration));
  d_->rebuild();
  d_->plot->replot();
  emit chartChanged();
}

QString CostChart::load_calibration(const QString& path) {
  const std::string error = d_->model.load_calibration(path.toStdString());
  if (!error.empty()) return QString::fromStdString(error);
  d_->rebuild();
  d_->plot->replot();
  emit chartChanged();
  return {};
}

void CostChart::clear() {
  d_->model.clear();
  d_->set_readout(QString(), this);
  d_->rebuild();
  d_->plot->replot();
  emit chartChanged();
}

void CostChart::set_collective(const QString& collective) {
  if (collective == d_->collective) return;
  d_->collective = collective;
  d_->rebuild();
  d_->plot->replot();
  emit chartChanged();
}

QString CostChart::collective() const { return d_->effective_collective(); }

void CostChart::set_metric(Metric metric) {
  if (metric == d_->metric) return;
  d_->metric = metric;
  d_->rebuild();
  d_->plot->replot();
  emit chartChanged();
}

CostChart::Metric CostChart::metric() const noexcept { return d_->metric; }

void CostChart::set_axes(const std::vector<std::string>& axes) {
  if (axes == d_->axes_filter) return;
  d_->axes_filter = axes;
  d_->rebuild();
  d_->plot->replot();
  emit chartChanged();
}

const std::vector<std::string>& CostChart::axes_filter() const noexcept { return d_->axes_filter; }

QString CostChart::readout_at(const QPointF& pos, double max_distance) const {
  double best = max_distance * max_distance;
  const MeasuredPoint* found = nullptr;
  const SeriesKey* found_key = nullptr;
  for (const auto& key : d_->shown) {
    const MeasuredSeries* s = d_->model.find(key);
    if (s == nullptr) continue;
    for (std::size_t i = 0; i < s->points.size(); ++i) {
      const auto at = d_->position(key, i);
      if (!at) continue;
      const double dx = at->x() - pos.x();
      const double dy = at->y() - pos.y();
      const double dist = dx * dx + dy * dy;
      if (dist <= best) {
        best = dist;
        found = &s->points[i];
        found_key = &key;
      }
    }
  }
  return found == nullptr ? QString() : d_->text_of(*found_key, *found);
}

QString CostChart::readout() const { return d_->readout->text(); }

std::optional<QPointF> CostChart::point_position(const SeriesKey& key, std::size_t index) const {
  return d_->position(key, index);
}

// ---- shared with PredictionChart (plot_support.hpp) ----------------------------------------------------------

QColor series_color(std::size_t index) {
  static const std::array<QColor, 8> colors{QColor(31, 119, 180), QColor(255, 127, 14), QColor(44, 160, 44),
                                            QColor(214, 39, 40),  QColor(148, 103, 189), QColor(140, 86, 75),
                                            QColor(227, 119, 194), QColor(127, 127, 127)};
  return colors[index % colors.size()];
}

QSharedPointer<QCPAxisTicker> make_time_ticker() { return QSharedPointer<QCPAxisTicker>(new TimeTicker); }

namespace {

void style_plot(QCustomPlot& plot) {
  const QPalette& pal = plot.palette();
  const QColor back = pal.color(QPalette::Base);
  const QColor text = pal.color(QPalette::Text);
  const bool dark = back.lightness() < 128;
  // Between the text and the background: QCustomPlot's greys (200, 220) on white.
  const auto between = [&](double k) {
    if (!dark) return k > 0.82 ? QColor(220, 220, 220) : QColor(200, 200, 200);
    return QColor::fromRgbF(static_cast<float>(text.redF() * (1 - k) + back.redF() * k),
                            static_cast<float>(text.greenF() * (1 - k) + back.greenF() * k),
                            static_cast<float>(text.blueF() * (1 - k) + back.blueF() * k));
  };
  plot.setBackground(back);
  for (QCPAxisRect* rect : plot.axisRects()) {
    for (QCPAxis* axis : rect->axes()) {
      axis->setBasePen(QPen(text, 0));
      axis->setTickPen(QPen(text, 0));
      axis->setSubTickPen(QPen(text, 0));
      axis->setLabelColor(text);
      axis->setTickLabelColor(text);
      axis->grid()->setPen(QPen(between(0.78), 0, Qt::DotLine));
      axis->grid()->setSubGridPen(QPen(between(0.86), 0, Qt::DotLine));
    }
  }
  plot.legend->setBrush(back);
  plot.legend->setTextColor(text);
  for (int i = 0; i < plot.plotLayout()->elementCount(); ++i) {
    if (auto* title = qobject_cast<QCPTextElement*>(plot.plotLayout()->elementAt(i))) title->setTextColor(text);
  }
}

// Restyles its plot on a palette change (the theme switched).
class PaletteFollower : public QObject {
public:
  explicit PaletteFollower(QCustomPlot& plot) : QObject(&plot), plot_(plot) { plot.installEventFilter(this); }

protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (watched == &plot_ && event->type() == QEvent::PaletteChange) {
      style_plot(plot_);
      plot_.replot();
    }
    return false;
  }

private:
  QCustomPlot& plot_;
};

}  // namespace

void follow_palette(QCustomPlot& plot) {
  style_plot(plot);
  new PaletteFollower(plot);
}

void place_legend_below(QCustomPlot& plot, int columns) {
  QCPLayoutGrid* layout = plot.plotLayout();
  plot.axisRect()->insetLayout()->take(plot.legend);
  plot.axisRect()->insetLayout()->simplify();
  const int row = layout->rowCount();
  layout->addElement(row, 0, plot.legend);
  layout->setRowStretchFactor(row, 0.001);  // as tall as its entries, no more
  plot.legend->setFillOrder(QCPLegend::foColumnsFirst);
  plot.legend->setWrap(std::max(1, columns));
  plot.legend->setBorderPen(Qt::NoPen);
  plot.legend->setMargins(QMargins(4, 0, 4, 2));
}

bool export_plot(QCustomPlot& plot, PlotFormat kind, const QString& path, int width, int height, QString* error) {
  const auto fail = [&path, error](const QString& cause) {
    if (error != nullptr) *error = QStringLiteral("Cannot write %1: %2").arg(path, cause);
    return false;
  };
  if (path.isEmpty()) return fail(QStringLiteral("no file name"));
  if (width < 0 || height < 0 || width > kMaxExportSide || height > kMaxExportSide) {
    return fail(QStringLiteral("the size %1 x %2 is not in 1..%3 per side").arg(width).arg(height).arg(kMaxExportSide));
  }
  if (width == 0 || height == 0) {
    const bool sized = plot.isVisible() && plot.width() > 1 && plot.height() > 1;
    if (width == 0) width = sized ? plot.width() : kDefaultExportWidth;
    if (height == 0) height = sized ? plot.height() : kDefaultExportHeight;
  }
  // QCustomPlot writes to a file name: render into a private temporary directory, then copy the bytes into the
  // target through QSaveFile (a temporary beside the target, renamed over it on commit).
  QTemporaryDir scratch;
  if (!scratch.isValid()) return fail(QStringLiteral("no temporary directory: ") + scratch.errorString());
  const QString rendered = scratch.filePath(kind == PlotFormat::Png ? QStringLiteral("chart.png") : QStringLiteral("chart.pdf"));
  const bool ok = kind == PlotFormat::Png ? plot.savePng(rendered, width, height, 1.0)
                                          : plot.savePdf(rendered, width, height);
  if (!ok) return fail(QStringLiteral("the chart could not be rendered"));
  QFile in(rendered);
  if (!in.open(QIODevice::ReadOnly)) return fail(QStringLiteral("the rendered chart could not be read: ") + in.errorString());
  const QByteArray bytes = in.readAll();
  if (bytes.isEmpty()) return fail(QStringLiteral("the chart rendered empty"));
  QSaveFile out(path);
  if (!out.open(QIODevice::WriteOnly)) return fail(out.errorString());
  if (out.write(bytes) != bytes.size()) {
    const QString cause = out.errorString();
    out.cancelWriting();
    return fail(cause);
  }
  if (!out.commit()) return fail(out.errorString());
  return true;
}

bool CostChart::save_png(const QString& path, int width, int height, QString* error) {
  return export_plot(*d_->plot, PlotFormat::Png, path, width, height, error);
}

bool CostChart::save_pdf(const QString& path, int width, int height, QString* error) {
  return export_plot(*d_->plot, PlotFormat::Pdf, path, width, height, error);
}

QCustomPlot* CostChart::plot() const noexcept { return d_->plot; }

}  // namespace meshloom::app
