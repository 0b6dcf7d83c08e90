#include "costs/fit_table.hpp"

#include <algorithm>
#include <cmath>

#include <QStringList>

namespace meshloom::app {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

QString percent(double share) { return QString::number(100.0 * share, 'f', share < 0.1 ? 1 : 0) + QLatin1Char('%'); }

QString timing_label(const std::string& timing) {
  if (timing == "single_shot") return QObject::tr("single-shot");
  if (timing.empty()) return QObject::tr("timing not recorded");
  return q(timing);
}

QString factor_range(const std::vector<AsRunPoint>& points) {
  const auto by_factor = [](const AsRunPoint& a, const AsRunPoint& b) { return a.factor < b.factor; };
  const auto [lo, hi] = std::minmax_element(points.begin(), points.end(), by_factor);
  return QStringLiteral("%1\u2013%2\u00d7").arg(lo->factor, 0, 'f', 2).arg(hi->factor, 0, 'f', 2);
}

// The axis corrections that scale `curve` on the calibrated mesh: those of its collective whose axes' groups have
// its shape, as "dp 0.73–0.99×, tp 1.01–1.27×" (flattened axes named as calibrate names them, "dp_tp"); an axis with
// its own as-run points (refine's, which its steps take instead of the curve's) adds them: "dp 0.73–0.99× as run
// 0.50–1.20×".
QString axis_ranges(const Calibration& c, const GroupCurve& curve) {
  QStringList parts;
  for (const AxisCorrection& a : c.axis_corrections) {
    if (a.collective != curve.collective || a.factors.empty()) continue;
    const std::vector<GroupShape> shapes = group_shapes(c.mesh_shape, a.axes, c.rank_hosts);
    if (shapes.size() != 1 || !(shapes.front() == curve.shape)) continue;
    QStringList names;
    for (const std::size_t axis : a.axes) names << q(c.mesh_names.at(axis));
    QString part = names.join(QLatin1Char('_')) + QLatin1Char(' ') + factor_range(a.factors);
    if (!a.as_run.empty()) part += QStringLiteral(" as run ") + factor_range(a.as_run);
    parts << part;
  }
  return parts.join(QStringLiteral(", "));
}

}  // namespace

FitTableModel::FitTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void FitTableModel::set_calibration(const std::optional<Calibration>& calibration) {
  beginResetModel();
  calibration_ = calibration;
  rows_.clear();
  if (calibration_) {
    for (const auto& curve : calibration_->groups) {
      rows_.push_back({q(curve.collective), q(to_string(curve.shape)), q(std::string(to_string(curve.model))), curve.fit,
                       curve.holdout, static_cast<std::int64_t>(curve.points.size()), curve.as_run,
                       axis_ranges(*calibration_, curve)});
    }
    if (calibration_->groups.empty()) {  // a file from before curves: its per-axis alpha-beta fits
      for (const auto& [axis, fits] : calibration_->axes) {
        for (const auto& [collective, fit] : fits) {
          rows_.push_back({q(collective), tr("axis %1").arg(q(axis)), QStringLiteral("alpha_beta"), fit, std::nullopt,
                           fit.samples, {}, {}});
        }
      }
    }
  }
  endResetModel();
}

int FitTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int FitTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant FitTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || !checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const Row& r = rows_[static_cast<std::size_t>(index.row())];
  if (role == Qt::TextAlignmentRole) {
    return index.column() >= Alpha ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
  }
  if (role == Qt::ToolTipRole) {
    switch (index.column()) {
      case Model:
        return r.model == QLatin1String("piecewise")
                   ? tr("Predicts along straight lines through the measured points in log(size), log(time)")
                   : tr("Predicts alpha + bytes / bus bandwidth");
      case HeldOutMedian:
      case HeldOutP90:
        return r.holdout ? tr("Fitted on part of the sweep, predicting the other %1 point(s)").arg(r.holdout->points)
                         : tr("Too few points to hold any out");
      case AsRun:
        return r.as_run.empty() ? tr("Not corrected: priced as the benchmark measured")
                                : tr("Priced as the benchmark measured times these factors, from %1 sizes of plans run "
                                     "for real (meshloom-launch refine)")
                                      .arg(r.as_run.size());
      case ByAxis:
        return r.by_axis.isEmpty()
                   ? tr("Every axis of this shape priced by the curve alone")
                   : tr("On the calibrated mesh itself each axis is priced by its own time against this curve, over "
                        "its sizes (ranks bound: run and validate need them bound alike); \"as run\": the axis' own "
                        "correction by plans run for real, taken instead of the curve's");
      default: return {};
    }
  }
  if (role != Qt::DisplayRole) return {};
  const auto dash = QStringLiteral("\u2013");
  switch (index.column()) {
    case Collective: return r.collective;
    case Group: return r.group;
    case Model: return r.model;
    case Alpha: return r.fit ? QString::number(r.fit->alpha_us, 'f', 1) : dash;
    case Busbw: return r.fit ? QString::number(r.fit->busbw_gbps, 'g', 3) : dash;
    case R2: return r.fit ? QString::number(r.fit->r2, 'f', 3) : dash;
    case HeldOutMedian: return r.holdout ? percent(r.holdout->median) : dash;
    case HeldOutP90: return r.holdout ? percent(r.holdout->p90) : dash;
    case Points: return static_cast<qlonglong>(r.points);
    case AsRun: return r.as_run.empty() ? dash : QStringLiteral("%1 (%2)").arg(factor_range(r.as_run)).arg(r.as_run.size());
    case ByAxis: return r.by_axis.isEmpty() ? dash : r.by_axis;
    default: return {};
  }
}

QVariant FitTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case Alpha: return tr("Latency of the alpha-beta fit over every point (µs)");
      case Busbw: return tr("Bus bandwidth of the alpha-beta fit (GB/s, nccl-tests' busbw)");
      case R2: return tr("How much of the variance the alpha-beta fit explains");
      case HeldOutMedian: return tr("Median relative error on points the fit did not see");
      case HeldOutP90: return tr("90th percentile relative error on points the fit did not see");
      case AsRun: return tr("The correction by what plans measured when they ran (meshloom-launch refine)");
      case ByAxis:
        return tr("The calibrated mesh's axes of this shape, each against the curve (axis corrections, ranks bound)");
      default: return {};
    }
  }
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case Collective: return tr("Collective");
    case Group: return tr("Group");
    case Model: return tr("Model");
    case Alpha: return tr("\u03b1 (\u00b5s)");
    case Busbw: return tr("busbw (GB/s)");
    case R2: return tr("R\u00b2");
    case HeldOutMedian: return tr("held-out median");
    case HeldOutP90: return tr("p90");
    case Points: return tr("points");
    case AsRun: return tr("as run");
    case ByAxis: return tr("by axis");
    default: return {};
  }
}

QString FitTableModel::summary() const { return calibration_ ? calibration_summary(*calibration_) : QString(); }

QString calibration_summary(const Calibration& c) {
  const QString how = QStringLiteral("%1, %2").arg(q(c.backend), timing_label(c.timing));
  if (c.groups.empty()) {
    std::size_t fits = 0;
    for (const auto& [axis, by_collective] : c.axes) fits += by_collective.size();
    return (fits == 1 ? QObject::tr("1 per-axis fit (%1)") : QObject::tr("%1 per-axis fits (%2)").arg(fits)).arg(how);
  }
  QString text = (c.groups.size() == 1 ? QObject::tr("1 curve (%1)") : QObject::tr("%1 curves (%2)").arg(c.groups.size()))
                     .arg(how);
  double lo = INFINITY;
  double hi = 0;
  double p90 = 0;
  for (const auto& curve : c.groups) {
    if (!curve.holdout) continue;
    lo = std::min(lo, curve.holdout->median);
    hi = std::max(hi, curve.holdout->median);
    p90 = std::max(p90, curve.holdout->p90);
  }
  if (hi > 0 || std::isfinite(lo)) {
    const QString median = lo == hi ? percent(lo) : percent(lo) + QStringLiteral("\u2013") + percent(hi);
    text += QObject::tr("; held-out error median %1, p90 at most %2").arg(median, percent(p90));
  }
  if (!c.axis_corrections.empty()) {
    QStringList shape;
    for (const std::int64_t n : c.mesh_shape) shape << QString::number(n);
    text += QObject::tr("; its mesh (%1) priced by axis (ranks bound)").arg(shape.join(QStringLiteral(", ")));
  }
  if (c.transport && !c.transport->empty()) {
    QStringList settings;
    for (const auto& [name, value] : *c.transport) settings << q(name) + QLatin1Char('=') + q(value);
    text += QObject::tr("; measured with %1").arg(settings.join(QStringLiteral(", ")));
  }
  return text;
}

}  // namespace meshloom::app
