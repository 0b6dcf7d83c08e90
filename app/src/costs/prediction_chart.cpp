#include "costs/prediction_chart.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMouseEvent>
#include <QTableWidget>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "costs/cost_chart.hpp"
#include "costs/plot_support.hpp"
#include "shell/inline_message.hpp"

namespace meshloom::app {

namespace {

constexpr double kMargin = 1.6;  // log-space margin around the data

const std::array<QCPScatterStyle::ScatterShape, 8> kShapes{
    QCPScatterStyle::ssCircle, QCPScatterStyle::ssSquare, QCPScatterStyle::ssTriangle, QCPScatterStyle::ssDiamond,
    QCPScatterStyle::ssCross,  QCPScatterStyle::ssPlus,   QCPScatterStyle::ssStar,     QCPScatterStyle::ssTriangleInverted};

// The step statistics of the records, then validate's report of each model's picks ("—" for run's records).
enum Column {
  ModelColumn, PointsColumn, MedianColumn, P90Column, SpearmanColumn, PicksColumn, TimeLostColumn, ColumnCount
};

QString q(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

QString format_percent(double fraction) { return QString::fromStdString(percent_text(fraction)); }

struct PredictionChart::Impl {
  PredictionRecords records;
  QString title_text;
  QCustomPlot* plot = nullptr;
  QCPTextElement* title = nullptr;
  QTableWidget* table = nullptr;
  QLabel* readout = nullptr;
  QLabel* drift = nullptr;  // validate's drift check, hidden without drift records
  // The drawn points of each plotted model, in graph order (graph i is model i).
  std::vector<std::pair<std::string, std::vector<PredictionPoint>>> drawn;
  std::vector<std::pair<std::string, std::size_t>> hidden;  // model -> points not drawable on log axes

  void rebuild() {
    plot->clearGraphs();
    drawn.clear();
    hidden.clear();
    const std::vector<std::string> models = records.models();
    double lo = std::numeric_limits<double>::infinity();
    double hi = 0;
    for (std::size_t m = 0; m < models.size(); ++m) {
      const std::string& model = models[m];
      if (!is_microsecond_model(model)) continue;
      std::vector<PredictionPoint> shown;
      std::size_t not_drawn = 0;
      for (auto& p : records.points(model)) {
        if (p.predicted_us > 0) {
          shown.push_back(std::move(p));
        } else {
          ++not_drawn;
        }
      }
      hidden.emplace_back(model, not_drawn);
      if (shown.empty()) continue;
      const QColor color = series_color(m);
      QCPGraph* g = plot->addGraph();
      g->setName(q(model));
      g->setLineStyle(QCPGraph::lsNone);
      g->setPen(QPen(color));
      // Every other model hollow: its fill transparent, so the plot shows through in either theme (white stood out
      // as solid dots on the dark theme's plot).
      const QColor fill = m % 2 == 0 ? color : QColor(Qt::transparent);
      g->setScatterStyle(QCPScatterStyle(kShapes[m % kShapes.size()], color, fill, 7));
      QVector<double> xs;
      QVector<double> ys;
      for (const auto& p : shown) {
        xs.push_back(p.predicted_us);
        ys.push_back(p.measured_us);
        lo = std::min({lo, p.predicted_us, p.measured_us});
        hi = std::max({hi, p.predicted_us, p.measured_us});
      }
      g->setData(xs, ys);  // sorted by key: the read-out uses `drawn`, not the graph's order
      drawn.emplace_back(model, std::move(shown));
    }
    if (!(hi > 0)) {
      lo = 1.0;
      hi = 1000.0;
    }
    // The same range on both axes, so y = x is the diagonal of the plot.
    lo /= kMargin;
    hi *= kMargin;
    QCPGraph* diagonal = plot->addGraph();
    diagonal->setName(QStringLiteral("y = x"));
    QPen pen(QColor(90, 90, 90));
    pen.setStyle(Qt::DashLine);
    diagonal->setPen(pen);
    diagonal->setData(QVector<double>{lo, hi}, QVector<double>{lo, hi}, true);
    plot->xAxis->setRange(lo, hi);
    plot->yAxis->setRange(lo, hi);
    plot->legend->setVisible(!drawn.empty());
    // Short: the axes say predicted and measured, and the chart shares the dock's width with its table.
    const QString file = title_text.isEmpty() ? QString() : QStringLiteral(": %1").arg(title_text);
    title->setText(records.steps().empty() ? QObject::tr("No step records") : QObject::tr("Step time") + file);
    fill_table(models);
    show_message(drift, q(drift_text(records.drift())), any_drifted(records.drift()));
  }

  void fill_table(const std::vector<std::string>& models) {
    table->clearSpans();
    table->setRowCount(static_cast<int>(models.size()));
    const auto cell = [this](int row, int column, const QString& text, bool right = true) {
      auto* item = new QTableWidgetItem(text);
      item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
      if (right) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      table->setItem(row, column, item);
    };
    for (int row = 0; row < static_cast<int>(models.size()); ++row) {
      const ModelSummary s = records.summary(models[static_cast<std::size_t>(row)]);
      cell(row, ModelColumn, q(s.model), false);
      QString count = QString::number(s.count);
      const auto it = std::find_if(hidden.begin(), hidden.end(), [&s](const auto& h) { return h.first == s.model; });
      if (it != hidden.end() && it->second > 0) count += QObject::tr(" (%1 at 0 not drawn)").arg(it->second);
      if (s.not_finite > 0) count += QObject::tr(" (%1 not finite)").arg(s.not_finite);
      cell(row, PointsColumn, count);
      // Picks are judged for every model, fixed's unitless weights included.
      const ReportRecord* report = records.report(s.model);
      cell(row, PicksColumn, report != nullptr ? q(picks_text(*report)) : QStringLiteral("—"));
      if (report != nullptr) table->item(row, PicksColumn)->setToolTip(q(picks_note(*report)));
      cell(row, TimeLostColumn, report != nullptr ? q(time_lost_text(*report)) : QStringLiteral("—"));
      if (!s.comparable) {
        cell(row, MedianColumn, QObject::tr("unitless: not comparable"), false);
        table->setSpan(row, MedianColumn, 1, PicksColumn - MedianColumn);
        continue;
      }
      cell(row, MedianColumn, format_percent(s.median_error));
      cell(row, P90Column, format_percent(s.p90_error));
      cell(row, SpearmanColumn, std::isfinite(s.spearman) ? QString::number(s.spearman, 'f', 3) : QStringLiteral("—"));
    }
    table->resizeColumnsToContents();
    // Every model's row in view: the table is as tall as its header and rows (at least one row's room).
    const int rows = std::max(1, table->rowCount());
    table->setFixedHeight(table->horizontalHeader()->height() + rows * table->verticalHeader()->defaultSectionSize() +
                          2 * table->frameWidth());
  }

  [[nodiscard]] const PredictionPoint* nearest(const QPointF& pos, double max_distance) const {
    double best = max_distance * max_distance;
    const PredictionPoint* found = nullptr;
    for (const auto& [model, points] : drawn) {
      for (const auto& p : points) {
        const double dx = plot->xAxis->coordToPixel(p.predicted_us) - pos.x();
        const double dy = plot->yAxis->coordToPixel(p.measured_us) - pos.y();
        if (dx * dx + dy * dy <= best) {
          best = dx * dx + dy * dy;
          found = &p;
        }
      }
    }
    return found;
  }

  void set_readout(const QString& text, PredictionChart* owner) {
    if (readout->text() == text) return;
    readout->setText(text);
    emit owner->readoutChanged(text);
  }
};

PredictionChart::PredictionChart(QWidget* parent) : QWidget(parent), d_(std::make_unique<Impl>()) {
  // The scatter and its readout on the left, the drift and the summary table beside them: stacked, they needed 300 px
  // of height that a laptop's plan area does not have, and the table filled a third of the width.
  auto* columns = new QHBoxLayout(this);
  columns->setContentsMargins(0, 0, 0, 0);
  auto* layout = new QVBoxLayout;
  auto* side = new QVBoxLayout;
  columns->addLayout(layout, 1);
  columns->addLayout(side);
  d_->plot = new QCustomPlot(this);
  d_->plot->setObjectName(QStringLiteral("prediction_plot"));
  d_->plot->setMinimumSize(320, 170);
  for (QCPAxis* axis : {d_->plot->xAxis, d_->plot->yAxis}) {
    axis->setScaleType(QCPAxis::stLogarithmic);
    axis->setTicker(make_time_ticker());
    axis->grid()->setSubGridVisible(true);
  }
  d_->plot->xAxis->setLabel(tr("predicted"));
  d_->plot->yAxis->setLabel(tr("measured"));
  d_->plot->plotLayout()->insertRow(0);
  d_->title = new QCPTextElement(d_->plot, QString(), QFont(font().family(), font().pointSize() + 1, QFont::Bold));
  d_->plot->plotLayout()->addElement(0, 0, d_->title);
  place_legend_below(*d_->plot);
  follow_palette(*d_->plot);
  layout->addWidget(d_->plot, 1);

  d_->readout = new QLabel(this);
  d_->readout->setObjectName(QStringLiteral("prediction_readout"));
  d_->readout->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(d_->readout);

  d_->table = new QTableWidget(0, ColumnCount, this);
  d_->table->setObjectName(QStringLiteral("prediction_summary"));
  d_->table->setTabKeyNavigation(false);  // Tab leaves the table (arrows move between cells)
  d_->table->setHorizontalHeaderLabels(
      {tr("Model"), tr("Points"), tr("Median error"), tr("p90 error"), tr("Spearman ρ"), tr("Right picks"),
       tr("Time lost")});
  d_->table->horizontalHeaderItem(MedianColumn)->setToolTip(tr("Median of |predicted − measured| / measured"));
  d_->table->horizontalHeaderItem(P90Column)
      ->setToolTip(tr("90th percentile of |predicted − measured| / measured (nearest rank)"));
  d_->table->horizontalHeaderItem(SpearmanColumn)
      ->setToolTip(tr("Rank correlation of predicted and measured (ties: average ranks); 1: the model orders the "
                      "steps as they measured"));
  d_->table->horizontalHeaderItem(PicksColumn)
      ->setToolTip(tr("validate's verdict: requests where the model's pick was the measured fastest plan or tied with "
                      "it (within the run's noise; docs/05)"));
  d_->table->horizontalHeaderItem(TimeLostColumn)
      ->setToolTip(tr("What following the model's picks cost in measured time: T(pick) / T(fastest) − 1, the mean "
                      "over validate's requests and the greatest"));
  d_->table->verticalHeader()->setVisible(false);
  d_->table->horizontalHeader()->setStretchLastSection(false);  // columns as wide as their contents
  d_->table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  d_->table->setSelectionBehavior(QAbstractItemView::SelectRows);
  // As wide as its columns, so the column beside the chart is the table's width.
  d_->table->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
  d_->table->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
  d_->drift = make_message_label(this);
  d_->drift->setObjectName(QStringLiteral("prediction_drift"));
  d_->drift->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // wraps to the table's width
  side->addWidget(d_->drift);
  side->addWidget(d_->table);
  side->addStretch(1);

  connect(d_->plot, &QCustomPlot::mouseMove, this,
          [this](QMouseEvent* event) { d_->set_readout(readout_at(event->position()), this); });
  d_->rebuild();
  d_->plot->replot();
}

PredictionChart::~PredictionChart() = default;

void PredictionChart::set_records(PredictionRecords records, const QString& title) {
  d_->records = std::move(records);
  d_->title_text = title;
  d_->set_readout(QString(), this);
  d_->rebuild();
  d_->plot->replot();
  emit chartChanged();
}

const PredictionRecords& PredictionChart::records() const noexcept { return d_->records; }

void PredictionChart::clear() { set_records(PredictionRecords{}); }

std::vector<std::string> PredictionChart::plotted_models() const {
  std::vector<std::string> out;
  for (const auto& [model, points] : d_->drawn) out.push_back(model);
  return out;
}

std::size_t PredictionChart::undrawn(const std::string& model) const {
  const auto it = std::find_if(d_->hidden.begin(), d_->hidden.end(), [&model](const auto& h) { return h.first == model; });
  return it == d_->hidden.end() ? 0 : it->second;
}

QTableWidget* PredictionChart::summary_table() const noexcept { return d_->table; }

QString PredictionChart::summary_cell(int row, int column) const {
  const QTableWidgetItem* item = d_->table->item(row, column);
  return item == nullptr ? QString() : item->text();
}

QString PredictionChart::readout_at(const QPointF& pos, double max_distance) const {
  const PredictionPoint* p = d_->nearest(pos, max_distance);
  if (p == nullptr) return {};
  QString text = q(p->model) + QStringLiteral(" · ") + q(p->collective) + QStringLiteral(" · ") +
                 format_bytes(static_cast<double>(p->bytes)) + QStringLiteral(" · predicted ") +
                 format_time_us(p->predicted_us) + QStringLiteral(" · measured ") + format_time_us(p->measured_us) +
                 QStringLiteral(" · ") + format_percent(relative_error(p->predicted_us, p->measured_us)) +
                 tr(" off") + QStringLiteral(" · ");
  if (p->request) text += tr("request %1 ").arg(*p->request);
  text += tr("plan %1 step %2 · line %3").arg(p->plan).arg(p->step).arg(p->line);
  return text;
}

QString PredictionChart::readout() const { return d_->readout->text(); }

QLabel* PredictionChart::drift_label() const noexcept { return d_->drift; }

bool PredictionChart::save_png(const QString& path, int width, int height, QString* error) {
  return export_plot(*d_->plot, PlotFormat::Png, path, width, height, error);
}

bool PredictionChart::save_pdf(const QString& path, int width, int height, QString* error) {
  return export_plot(*d_->plot, PlotFormat::Pdf, path, width, height, error);
}

QCustomPlot* PredictionChart::plot() const noexcept { return d_->plot; }

}  // namespace meshloom::app
