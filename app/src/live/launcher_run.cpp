#include "live/launcher_run.hpp"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTimer>

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

namespace meshloom::app {

namespace {

QString quoted(const QString& word) {
  static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_./:=,+@%-]+$"));
  if (plain.match(word).hasMatch()) return word;
  QString w = word;
  w.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
  return QLatin1Char('\'') + w + QLatin1Char('\'');
}

// The number of result records a config record announces, as bench counts its rows (bench_run.cpp): for every axis,
// collective and size, one row unless the size leaves a rank no element. all_reduce and broadcast move size /
// itemsize elements; all_gather, reduce_scatter and all_to_all that many over the axis' group of n ranks, so
// (size / itemsize) / n per rank. An axis is a mesh axis (n from the shape) or a flattened one (n the product of its
// axes). 0 when the record lists no axes, collectives or sizes.
int expected_from_config(const QByteArray& line) {
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

// Ends a process that is still running when its owner goes (its signals no longer reach the owner).
void end_process(QProcess* process, QObject* owner) {
  if (process->state() == QProcess::NotRunning) return;
  process->disconnect(owner);
  process->kill();
  process->waitForFinished(2000);
}

QString status_word(QProcess::ProcessError error) {
  switch (error) {
    case QProcess::FailedToStart: return QStringLiteral("could not be started (missing, or not executable)");
    case QProcess::Crashed: return QStringLiteral("crashed");
    case QProcess::Timedout: return QStringLiteral("timed out");
    case QProcess::WriteError: return QStringLiteral("could not be written to");
    case QProcess::ReadError: return QStringLiteral("could not be read from");
    case QProcess::UnknownError: break;
  }
  return QStringLiteral("failed");
}

}  // namespace

QString command_text(const LaunchCommand& command) {
  QStringList words{quoted(command.program)};
  for (const QString& a : command.arguments) words << quoted(a);
  return words.join(QLatin1Char(' '));
}

QStringList bench_arguments(const BenchSettings& s) {
  QStringList a{QStringLiteral("bench")};
  a << QStringLiteral("--design") << s.design_path << QStringLiteral("--world") << QString::number(s.world)
    << QStringLiteral("--backend") << s.backend << QStringLiteral("-b") << s.min_bytes << QStringLiteral("-e")
    << s.max_bytes << QStringLiteral("-f") << QString::number(s.step_factor) << QStringLiteral("--dtype") << s.dtype
    << QStringLiteral("-w") << QString::number(s.warmup_iters) << QStringLiteral("-n") << QString::number(s.iters)
    << QStringLiteral("--timeout") << QString::number(s.timeout_s);
  if (s.check) a << QStringLiteral("--check");
  if (!s.collectives.isEmpty()) a << QStringLiteral("--collectives") << s.collectives.join(QLatin1Char(','));
  if (!s.axes.isEmpty()) a << QStringLiteral("--axes") << s.axes.join(QLatin1Char(','));
  a << QStringLiteral("--jsonl") << QStringLiteral("-");
  return a;
}

LaunchCommand local_command(const QString& mpirun, const QString& launcher, int world, const QStringList& launcher_args) {
  LaunchCommand c{mpirun, {QStringLiteral("--oversubscribe"), QStringLiteral("-np"), QString::number(world), launcher}};
  c.arguments << launcher_args;
  return c;
}

std::optional<LaunchCommand> template_command(const QString& command_template, const QString& launcher, int world,
                                              const QStringList& launcher_args, QString* error) {
  const auto fail = [&](const QString& why) -> std::optional<LaunchCommand> {
    if (error) *error = why;
    return std::nullopt;
  };
  const QStringList words = QProcess::splitCommand(command_template);
  if (words.isEmpty()) return fail(QStringLiteral("The cluster command is empty: write one such as "
                                                  "\"srun -n {world} {launcher} {args}\"."));
  static const QRegularExpression placeholder(QStringLiteral("\\{([^{}]*)\\}"));
  LaunchCommand command;
  bool has_args = false;
  for (const QString& word : words) {
    if (word == QLatin1String("{args}")) {
      has_args = true;
      command.arguments << launcher_args;
      continue;
    }
    QString out;
    qsizetype at = 0;
    for (auto it = placeholder.globalMatch(word); it.hasNext();) {
      const auto m = it.next();
      out += word.mid(at, m.capturedStart() - at);
      const QString name = m.captured(1);
      if (name == QLatin1String("world")) {
        out += QString::number(world);
      } else if (name == QLatin1String("launcher")) {
        out += launcher;
      } else if (name == QLatin1String("args")) {
        return fail(QStringLiteral("{args} must be a word of its own (it becomes several arguments), not part of \"%1\".")
                        .arg(word));
      } else {
        return fail(QStringLiteral("Unknown placeholder {%1} in \"%2\": use {world}, {launcher} and {args}.")
                        .arg(name, word));
      }
      at = m.capturedEnd();
    }
    out += word.mid(at);
    if (out.contains(QLatin1Char('{')) || out.contains(QLatin1Char('}'))) {
      return fail(QStringLiteral("Unbalanced brace in \"%1\": placeholders are {world}, {launcher} and {args}.").arg(word));
    }
    if (command.program.isEmpty() && command.arguments.isEmpty() && !has_args) {
      command.program = out;
    } else {
      command.arguments << out;
    }
  }
  if (!has_args) return fail(QStringLiteral("The cluster command has no {args} word: without it the launcher gets no "
                                            "arguments (e.g. \"srun -n {world} {launcher} {args}\")."));
  if (command.program.isEmpty()) return fail(QStringLiteral("The cluster command must start with a program, not {args}."));
  return command;
}

// ---- LauncherRun ---------------------------------------------------------------------------------------------------

LauncherRun::LauncherRun(QObject* parent)
    : QObject(parent), process_(new QProcess(this)), kill_timer_(new QTimer(this)) {
  kill_timer_->setSingleShot(true);
  kill_timer_->setInterval(kKillGraceMs);
  kill_timer_->setTimerType(Qt::PreciseTimer);
  connect(kill_timer_, &QTimer::timeout, process_, &QProcess::kill);
  connect(process_, &QProcess::readyReadStandardOutput, this, &LauncherRun::read_stdout);
  connect(process_, &QProcess::readyReadStandardError, this, &LauncherRun::read_stderr);
  connect(process_, &QProcess::finished, this, &LauncherRun::on_finished);
  connect(process_, &QProcess::errorOccurred, this, &LauncherRun::on_error);
}

LauncherRun::~LauncherRun() { end_process(process_, this); }

bool LauncherRun::running() const { return !done_; }

bool LauncherRun::start(const LaunchCommand& command, const QString& records_path) {
  if (!done_) return false;  // the run under way keeps its single finished()
  measurements_.clear();
  results_ = 0;
  expected_ = 0;
  cancelled_ = false;
  partial_.clear();
  stderr_decoder_.resetState();
  stderr_.clear();
  records_error_.clear();
  program_ = command.program;
  records_path_ = records_path;
  records_.reset();
  done_ = false;
  if (!records_path.isEmpty()) {
    records_ = std::make_unique<QFile>(records_path);
    if (!records_->open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) {
      RunOutcome o;
      o.status = RunOutcome::Status::FailedToStart;
      o.message = QStringLiteral("Cannot write the run's records to %1: %2").arg(records_path, records_->errorString());
      records_.reset();
      finish(std::move(o));
      return false;
    }
  }
  process_->setProgram(command.program);
  process_->setArguments(command.arguments);
  process_->setProcessChannelMode(QProcess::SeparateChannels);
  process_->start(QIODevice::ReadOnly);
  return true;
}

void LauncherRun::cancel() {
  if (done_ || process_->state() == QProcess::NotRunning) return;
  cancelled_ = true;
  process_->terminate();
  kill_timer_->start();
}

QString LauncherRun::stderr_tail() const { return stderr_.right(kStderrTail).trimmed(); }

void LauncherRun::read_stdout() {
  partial_ += process_->readAllStandardOutput();
  qsizetype start = 0;
  for (qsizetype nl = partial_.indexOf('\n', start); nl >= 0; nl = partial_.indexOf('\n', start)) {
    take_line(partial_.mid(start, nl - start));
    start = nl + 1;
  }
  partial_.remove(0, start);
}

void LauncherRun::read_stderr() {
  const QString text = stderr_decoder_.decode(process_->readAllStandardError());
  if (text.isEmpty()) return;
  stderr_ += text;
  if (stderr_.size() > 4 * kStderrTail) stderr_ = stderr_.right(2 * kStderrTail);
  emit log(text);
}

void LauncherRun::take_line(const QByteArray& raw) {
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
    expected_ = expected_from_config(line);
    emit progress(results_, expected_);
  } else if (r.kind == RecordKind::Result) {
    ++results_;
    emit progress(results_, std::max(expected_, results_));
  } else if (r.kind == RecordKind::Error) {
    emit log(QStringLiteral("launcher: ") + QString::fromStdString(measurements_.run_errors().back()));
  }
}

void LauncherRun::on_error(QProcess::ProcessError error) {
  if (error != QProcess::FailedToStart || done_) return;  // the others end in finished()
  RunOutcome o;
  o.status = RunOutcome::Status::FailedToStart;
  o.message = QStringLiteral("%1 %2: %3").arg(program_, status_word(error), process_->errorString());
  finish(std::move(o));
}

void LauncherRun::on_finished(int exit_code, QProcess::ExitStatus status) {
  kill_timer_->stop();
  read_stdout();
  read_stderr();
  if (!partial_.isEmpty()) {  // a last line without its newline
    take_line(partial_);
    partial_.clear();
  }
  RunOutcome o;
  o.exit_code = exit_code;
  const QString tail = stderr_tail();
  const QString said = tail.isEmpty() ? QString() : QStringLiteral("\n%1").arg(tail);
  QStringList errors;
  for (const auto& e : measurements_.run_errors()) errors << QString::fromStdString(e);
  if (cancelled_) {
    o.status = RunOutcome::Status::Cancelled;
    o.message = QStringLiteral("Cancelled after %1 of %2 results.").arg(results_).arg(expected_);
  } else if (status == QProcess::CrashExit) {
    o.status = RunOutcome::Status::Crashed;
    o.message = QStringLiteral("%1 crashed after %2 of %3 results.%4").arg(program_).arg(results_).arg(expected_).arg(said);
  } else if (exit_code != 0) {
    o.status = RunOutcome::Status::Failed;
    o.message = QStringLiteral("%1 exited with status %2 after %3 of %4 results.")
                    .arg(program_)
                    .arg(exit_code)
                    .arg(results_)
                    .arg(expected_);
    if (!errors.isEmpty()) o.message += QStringLiteral(" The launcher said: ") + errors.join(QStringLiteral("; "));
    o.message += said;
  } else if (!measurements_.summary_seen()) {
    o.status = RunOutcome::Status::Failed;
    o.message = QStringLiteral("%1 exited without a summary record after %2 of %3 results: was it started with "
                               "--jsonl -?%4")
                    .arg(program_)
                    .arg(results_)
                    .arg(expected_)
                    .arg(said);
  } else if (!records_error_.isEmpty()) {
    o.status = RunOutcome::Status::Failed;
    o.message = QStringLiteral("%1 results, but not all saved. %2").arg(results_).arg(records_error_);
  } else {
    o.status = RunOutcome::Status::Succeeded;
    o.message = QStringLiteral("%1 results.").arg(results_);
  }
  finish(std::move(o));
}

void LauncherRun::finish(RunOutcome o) {
  if (done_) return;
  done_ = true;
  kill_timer_->stop();
  if (records_) records_->close();
  if (!records_error_.isEmpty() && !o.message.contains(records_error_)) o.message += QLatin1Char('\n') + records_error_;
  o.results = results_;
  o.expected = expected_;
  o.summary_ok = measurements_.summary_ok().value_or(false);
  for (const auto& p : measurements_.problems()) o.problems << QString::fromStdString(p);
  emit finished(o);
}

// ---- CalibrateJob --------------------------------------------------------------------------------------------------

CalibrateJob::CalibrateJob(QObject* parent) : QObject(parent), process_(new QProcess(this)) {
  process_->setProcessChannelMode(QProcess::MergedChannels);
  connect(process_, &QProcess::readyReadStandardOutput, this, [this] {
    const QString text = QString::fromLocal8Bit(process_->readAllStandardOutput());
    output_ += text;
    emit log(text);
  });
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
    if (error != QProcess::FailedToStart || done_) return;
    done_ = true;
    emit finished(false, QStringLiteral("%1 %2: %3").arg(process_->program(), status_word(error), process_->errorString()));
  });
  connect(process_, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
    if (done_) return;
    done_ = true;
    if (status == QProcess::NormalExit && code == 0) {
      emit finished(true, QString());
      return;
    }
    // The launcher's own words: its "error: ..." line when it printed one.
    QString why;
    for (const QString& line : output_.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
      if (line.startsWith(QLatin1String("error:"))) why = line.mid(6).trimmed();
    }
    if (why.isEmpty()) why = output_.trimmed().right(LauncherRun::kStderrTail);
    emit finished(false, status == QProcess::CrashExit ? QStringLiteral("the launcher crashed") : why);
  });
}

CalibrateJob::~CalibrateJob() { end_process(process_, this); }

bool CalibrateJob::running() const { return !done_; }

void CalibrateJob::start(const QString& launcher, const QString& records, const QString& out) {
  output_.clear();
  done_ = false;
  process_->start(launcher, {QStringLiteral("calibrate"), QStringLiteral("--from"), records, QStringLiteral("--out"), out});
}

}  // namespace meshloom::app
