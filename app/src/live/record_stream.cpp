#include "live/record_stream.hpp"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <limits>
#include <map>
#include <string_view>

namespace meshloom::app {

// An axis is a mesh axis (n from the shape) or a flattened one (n the product of its axes). all_reduce and
// broadcast move size / itemsize elements; all_gather, reduce_scatter and all_to_all that many over the axis' group
// of n ranks, so (size / itemsize) / n per rank.
int expected_results_from_config(const QByteArray& line) {
  const QJsonObject o = QJsonDocument::fromJson(line).object();
  const QJsonObject mesh = o.value(QLatin1String("mesh")).toObject();
  const QJsonArray shape = mesh.value(QLatin1String("shape")).toArray();
  const QJsonArray names = mesh.value(QLatin1String("names")).toArray();
  std::map<QString, qint64> group_size;
  for (qsizetype i = 0; i < std::min(shape.size(), names.size()); ++i) {
    group_size[names.at(i).toString()] = shape.at(i).toInteger();
  }
  for (const QJsonValue f : mesh.value(QLatin1String("flattened")).toArray()) {
    qint64 n = 1;
    for (const QJsonValue a : f.toObject().value(QLatin1String("axes")).toArray()) {
      const auto it = group_size.find(a.toString());
      n *= it != group_size.end() ? it->second : 1;
    }
    group_size[f.toObject().value(QLatin1String("name")).toString()] = n;
  }
  const qint64 itemsize = std::max<qint64>(1, o.value(QLatin1String("itemsize")).toInteger(1));
  qint64 total = 0;
  for (const QJsonValue axis : o.value(QLatin1String("axes")).toArray()) {
    const auto it = group_size.find(axis.toString());
    const qint64 n = it != group_size.end() ? std::max<qint64>(1, it->second) : 1;
    for (const QJsonValue collective : o.value(QLatin1String("collectives")).toArray()) {
      const QString c = collective.toString();
      const bool split = c == QLatin1String("all_gather") || c == QLatin1String("reduce_scatter") ||
                         c == QLatin1String("all_to_all");
      for (const QJsonValue size : o.value(QLatin1String("sizes")).toArray()) {
        const qint64 elements = size.toInteger() / itemsize;
        total += (split ? elements / n : elements) > 0 ? 1 : 0;
      }
    }
  }
  return static_cast<int>(std::min<qint64>(total, std::numeric_limits<int>::max()));
}

RecordStream::RecordStream(QObject* parent) : QObject(parent) {}

RecordStream::~RecordStream() = default;

bool RecordStream::open(const QString& records_path, QString* error) {
  measurements_.clear();
  results_ = 0;
  expected_ = 0;
  partial_.clear();
  dropping_ = false;
  records_error_.clear();
  records_path_ = records_path;
  records_.reset();
  if (records_path.isEmpty()) return true;
  records_ = std::make_unique<QFile>(records_path);
  if (!records_->open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) {
    if (error) {
      *error = QStringLiteral("Cannot write the run's records to %1: %2").arg(records_path, records_->errorString());
    }
    records_.reset();
    return false;
  }
  return true;
}

void RecordStream::feed(const QByteArray& bytes) {
  qsizetype from = 0;
  if (dropping_) {  // the rest of an over-long line, through its newline
    const qsizetype nl = bytes.indexOf('\n');
    if (nl < 0) return;
    dropping_ = false;
    from = nl + 1;
  }
  // Only the new bytes can hold a newline: what waits in partial_ has none.
  qsizetype start = 0;
  qsizetype scan = partial_.size();
  partial_.append(bytes.constData() + from, bytes.size() - from);
  for (qsizetype nl = partial_.indexOf('\n', scan); nl >= 0; nl = partial_.indexOf('\n', scan)) {
    take_line(partial_.mid(start, nl - start));
    start = nl + 1;
    scan = start;
  }
  partial_.remove(0, start);
  if (partial_.size() > kMaxLineBytes) {
    emit log(QStringLiteral("A line of more than %1 MiB without a newline: not a record, dropped through its newline.")
                 .arg(kMaxLineBytes >> 20));
    partial_.clear();
    dropping_ = true;
  }
}

void RecordStream::close(bool take_partial) {
  dropping_ = false;
  if (!partial_.isEmpty()) {
    if (take_partial) {
      take_line(partial_);
    } else if (!partial_.trimmed().isEmpty()) {
      emit log(QStringLiteral("The last %1 bytes end without a newline: a record cut short when the run ended, not "
                              "read.")
                   .arg(partial_.size()));
    }
    partial_.clear();
  }
  if (records_) records_->close();
}

void RecordStream::take_line(const QByteArray& raw) {
  QByteArray line = raw;
  if (line.endsWith('\r')) line.chop(1);
  const QByteArray trimmed = line.trimmed();
  if (trimmed.isEmpty()) return;
  if (!trimmed.startsWith('{')) {  // not a record: mpirun's or a shell's words
    emit log(QString::fromLocal8Bit(line));
    return;
  }
  const LineResult r = measurements_.add_line(std::string_view(line.constData(), static_cast<std::size_t>(line.size())));
  if (!r.ok()) {
    emit log(QString::fromStdString(r.error));
    return;
  }
  if (records_ && records_error_.isEmpty()) {
    if (records_->write(line + '\n') != line.size() + 1 || !records_->flush()) {
      // The records accepted before this one (blank lines never get here).
      const std::size_t saved = measurements_.lines() - measurements_.problems().size() - 1;
      records_error_ =
          QStringLiteral("Cannot save the run's records to %1: %2 (it holds the first %3 records only).")
              .arg(records_path_, records_->errorString())
              .arg(saved);
      emit log(records_error_);
    }
  }
  emit record_line(QString::fromUtf8(line));
  if (r.kind == RecordKind::Config) {
    expected_ = expected_results_from_config(line);
    emit progress(results_, expected_);
  } else if (r.kind == RecordKind::Result) {
    ++results_;
    emit progress(results_, std::max(expected_, results_));
  } else if (r.kind == RecordKind::Error) {
    emit log(QStringLiteral("launcher: ") + QString::fromStdString(measurements_.run_errors().back()));
  }
}

}  // namespace meshloom::app
