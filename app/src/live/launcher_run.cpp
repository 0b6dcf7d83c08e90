#include "live/launcher_run.hpp"

#include <QRegularExpression>
#include <QTimer>

#include <algorithm>
#include <utility>

#include "live/record_stream.hpp"

namespace meshloom::app {

namespace {

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

QString shell_quoted(const QString& word) {
  static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_./:=,+@%-]+$"));
  if (plain.match(word).hasMatch()) return word;
  QString w = word;
  w.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
  return QLatin1Char('\'') + w + QLatin1Char('\'');
}

QString command_text(const LaunchCommand& command) {
  QStringList words{shell_quoted(command.program)};
  for (const QString& a : command.arguments) words << shell_quoted(a);
  return words.join(QLatin1Char(' '));
}

QStringList bench_arguments(const BenchSettings& s) {
  QStringList a{QStringLiteral("bench")};
  a << QStringLiteral("--design") << s.design_path << QStringLiteral("--world") << QString::number(s.world)
    << QStringLiteral("--backend") << s.backend << QStringLiteral("-b") << s.min_bytes << QStringLiteral("-e")
    << s.max_bytes << QStringLiteral("-f") << QString::number(s.step_factor) << QStringLiteral("--dtype") << s.dtype
    << QStringLiteral("-w") << QString::number(s.warmup_iters) << QStringLiteral("-n") << QString::number(s.iters)
    << QStringLiteral("--timing") << s.timing << QStringLiteral("--rounds")
    << QString::number(std::max(1, std::min(s.rounds, s.iters))) << QStringLiteral("--timeout")
    << QString::number(s.timeout_s);
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
    : QObject(parent), process_(new QProcess(this)), kill_timer_(new QTimer(this)), stream_(new RecordStream(this)) {
  connect(stream_, &RecordStream::record_line, this, &LauncherRun::record_line);
  connect(stream_, &RecordStream::log, this, &LauncherRun::log);
  connect(stream_, &RecordStream::progress, this, &LauncherRun::progress);
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

QString LineBuffer::take(const QByteArray& bytes) {
  constexpr qsizetype kMaxWaiting = 64 * 1024;  // a line that long is logged in pieces rather than held
  pending_ += decoder_.decode(bytes);
  const qsizetype end = pending_.size() > kMaxWaiting ? pending_.size() - 1 : pending_.lastIndexOf(QLatin1Char('\n'));
  if (end < 0) return {};
  QString lines = pending_.left(end + 1);
  pending_.remove(0, end + 1);
  return lines;
}

QString LineBuffer::rest() { return std::exchange(pending_, QString()); }

void LineBuffer::reset() {
  decoder_.resetState();
  pending_.clear();
}

bool LauncherRun::running() const { return !done_; }
const Measurements& LauncherRun::measurements() const noexcept { return stream_->measurements(); }
int LauncherRun::results() const noexcept { return stream_->results(); }
int LauncherRun::expected_results() const noexcept { return stream_->expected(); }
const QString& LauncherRun::records_path() const noexcept { return stream_->records_path(); }

bool LauncherRun::start(const LaunchCommand& command, const QString& records_path) {
  if (!done_) return false;  // the run under way keeps its single finished()
  cancelled_ = false;
  stderr_lines_.reset();
  stderr_.clear();
  program_ = command.program;
  done_ = false;
  QString error;
  if (!stream_->open(records_path, &error)) {
    finish(RunOutcome::failed_to_start(error));
    return false;
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

void LauncherRun::read_stdout() { stream_->feed(process_->readAllStandardOutput()); }

void LauncherRun::read_stderr() {
  const QString text = stderr_lines_.take(process_->readAllStandardError());
  if (text.isEmpty()) return;
  stderr_ += text;
  if (stderr_.size() > 4 * kStderrTail) stderr_ = stderr_.right(2 * kStderrTail);
  emit log(text);
}

void LauncherRun::on_error(QProcess::ProcessError error) {
  if (error != QProcess::FailedToStart || done_) return;  // the others end in finished()
  finish(RunOutcome::failed_to_start(
      QStringLiteral("%1 %2: %3").arg(program_, status_word(error), process_->errorString())));
}

void LauncherRun::on_finished(int exit_code, QProcess::ExitStatus status) {
  kill_timer_->stop();
  read_stdout();
  read_stderr();
  if (const QString rest = stderr_lines_.rest(); !rest.isEmpty()) {  // a last line without its newline
    stderr_ += rest;
    emit log(rest);
  }
  stream_->close(/*take_partial=*/true);  // a last line without its newline counts
  const int results = stream_->results();
  const int expected = stream_->expected();
  const Measurements& measurements = stream_->measurements();
  const QString& records_error = stream_->records_error();
  RunOutcome o;
  o.exit_code = exit_code;
  const QString tail = stderr_tail();
  const QString said = tail.isEmpty() ? QString() : QStringLiteral("\n%1").arg(tail);
  QStringList errors;
  for (const auto& e : measurements.run_errors()) errors << QString::fromStdString(e);
  if (cancelled_) {
    o.status = RunOutcome::Status::Cancelled;
    o.message = QStringLiteral("Cancelled after %1 of %2 results.").arg(results).arg(expected);
  } else if (status == QProcess::CrashExit) {
    o.status = RunOutcome::Status::Crashed;
    o.message = QStringLiteral("%1 crashed after %2 of %3 results.%4").arg(program_).arg(results).arg(expected).arg(said);
  } else if (exit_code != 0) {
    o.status = RunOutcome::Status::Failed;
    o.message = QStringLiteral("%1 exited with status %2 after %3 of %4 results.")
                    .arg(program_)
                    .arg(exit_code)
                    .arg(results)
                    .arg(expected);
    if (!errors.isEmpty()) o.message += QStringLiteral(" The launcher said: ") + errors.join(QStringLiteral("; "));
    o.message += said;
  } else if (!measurements.summary_seen()) {
    o.status = RunOutcome::Status::Failed;
    o.message = QStringLiteral("%1 exited without a summary record after %2 of %3 results: was it started with "
                               "--jsonl -?%4")
                    .arg(program_)
                    .arg(results)
                    .arg(expected)
                    .arg(said);
  } else if (!records_error.isEmpty()) {
    o.status = RunOutcome::Status::Failed;
    o.message = QStringLiteral("%1 results, but not all saved. %2").arg(results).arg(records_error);
  } else {
    o.status = RunOutcome::Status::Succeeded;
    o.message = QStringLiteral("%1 results.").arg(results);
  }
  finish(std::move(o));
}

void LauncherRun::finish(RunOutcome o) {
  if (done_) return;
  done_ = true;
  kill_timer_->stop();
  stream_->close(/*take_partial=*/false);
  const QString& records_error = stream_->records_error();
  if (!records_error.isEmpty() && !o.message.contains(records_error)) o.message += QLatin1Char('\n') + records_error;
  o.results = stream_->results();
  o.expected = stream_->expected();
  o.summary_ok = stream_->measurements().summary_ok().value_or(false);
  for (const auto& p : stream_->measurements().problems()) o.problems << QString::fromStdString(p);
  emit finished(o);
}

// ---- FileJob -------------------------------------------------------------------------------------------------------

FileJob::FileJob(QObject* parent) : QObject(parent), process_(new QProcess(this)) {
  process_->setProcessChannelMode(QProcess::MergedChannels);
  connect(process_, &QProcess::readyReadStandardOutput, this, &FileJob::read_output);
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
    if (error != QProcess::FailedToStart || done_) return;
    done_ = true;
    emit finished(false, QStringLiteral("%1 %2: %3").arg(process_->program(), status_word(error), process_->errorString()));
  });
  connect(process_, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
    if (done_) return;
    done_ = true;
    read_output();
    if (const QString rest = lines_.rest(); !rest.isEmpty()) {  // a last line without its newline
      output_ += rest;
      emit log(rest);
    }
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

FileJob::~FileJob() { end_process(process_, this); }

bool FileJob::running() const { return !done_; }

void FileJob::read_output() {
  const QString text = lines_.take(process_->readAllStandardOutput());
  if (text.isEmpty()) return;
  output_ += text;
  emit log(text);
}

void FileJob::start(const QString& launcher, const QStringList& arguments) {
  lines_.reset();
  output_.clear();
  done_ = false;
  process_->start(launcher, arguments);
}

QStringList calibrate_arguments(const QString& records, const QString& out) {
  return {QStringLiteral("calibrate"), QStringLiteral("--from"), records, QStringLiteral("--out"), out};
}

QStringList refine_arguments(const QString& calibration, const QStringList& records, const QString& out) {
  QStringList args{QStringLiteral("refine"), QStringLiteral("--calibration"), calibration};
  for (const QString& r : records) args << QStringLiteral("--records") << r;
  args << QStringLiteral("--out") << out;
  return args;
}

}  // namespace meshloom::app
