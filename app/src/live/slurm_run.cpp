#include "live/slurm_run.hpp"

#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTimer>

#include <memory>
#include <utility>

#include "live/record_stream.hpp"

namespace meshloom::app {

namespace {

// The last `lines` lines of a file on this machine (its last 64 KiB at most); "" when it cannot be read.
QString local_tail(const QString& path, int lines) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  constexpr qint64 kMax = 64 * 1024;
  if (f.size() > kMax) f.seek(f.size() - kMax);
  QStringList all = QString::fromLocal8Bit(f.readAll()).split(QLatin1Char('\n'));
  while (!all.isEmpty() && all.back().trimmed().isEmpty()) all.pop_back();
  return all.mid(std::max<qsizetype>(0, all.size() - lines)).join(QLatin1Char('\n'));
}

QString said(const QString& program, int exit_code, const QString& err) {
  const QString words = err.trimmed();
  return words.isEmpty() ? QStringLiteral("%1 exited with status %2 without saying why").arg(program).arg(exit_code)
                         : words;
}

}  // namespace

SlurmRun::SlurmRun(QObject* parent)
    : QObject(parent), stream_(new RecordStream(this)), poll_timer_(new QTimer(this)), read_timer_(new QTimer(this)) {
  connect(stream_, &RecordStream::record_line, this, &SlurmRun::record_line);
  connect(stream_, &RecordStream::log, this, &SlurmRun::log);
  connect(stream_, &RecordStream::progress, this, &SlurmRun::progress);
  poll_timer_->setInterval(poll_ms_);
  read_timer_->setInterval(kLocalReadMs);
  connect(poll_timer_, &QTimer::timeout, this, &SlurmRun::poll);
  connect(read_timer_, &QTimer::timeout, this, &SlurmRun::read_local);
}

SlurmRun::~SlurmRun() {
  // The job is Slurm's and goes on; the commands under way here (a query, a read) end now.
  for (QProcess* p : findChildren<QProcess*>(Qt::FindDirectChildrenOnly)) {
    p->disconnect(this);
    if (p->state() != QProcess::NotRunning) {
      p->kill();
      p->waitForFinished(1000);
    }
  }
}

void SlurmRun::set_poll_interval(int ms) {
  poll_ms_ = std::max(50, ms);
  poll_timer_->setInterval(poll_ms_);
  read_timer_->setInterval(std::min(kLocalReadMs, poll_ms_));
}

const Measurements& SlurmRun::measurements() const noexcept { return stream_->measurements(); }
int SlurmRun::results() const noexcept { return stream_->results(); }
int SlurmRun::expected_results() const noexcept { return stream_->expected(); }
const QString& SlurmRun::records_path() const noexcept { return stream_->records_path(); }

bool SlurmRun::start(const SlurmSettings& settings, const QString& script, const SlurmJobFiles& files,
                     const QString& records_path) {
  if (!done_) return false;
  ++generation_;  // answers to an earlier run's commands are ignored
  settings_ = settings;
  files_ = files;
  job_id_.clear();
  state_ = {};
  last_query_error_.clear();
  offset_ = 0;
  querying_ = false;
  reading_ = false;
  after_read_ = nullptr;
  cancel_requested_ = false;
  cancel_sent_ = false;
  ending_ = false;
  done_ = false;
  QString error;
  if (!stream_->open(records_path, &error)) {
    finish(RunOutcome::failed_to_start(error));
    return false;
  }
  const LaunchCommand sbatch = sbatch_command(settings_);
  emit log(QStringLiteral("$ %1 < %2").arg(command_text(sbatch), files.script));
  run_command(sbatch, script.toUtf8(), [this](const Result& r) { on_submitted(r); });
  return true;
}

void SlurmRun::run_command(const LaunchCommand& command, const QByteArray& input, Done done) {
  auto* p = new QProcess(this);
  p->setProgram(command.program);
  p->setArguments(command.arguments);
  const quint64 generation = generation_;
  auto fired = std::make_shared<bool>(false);
  // Exactly once per command: an answer for a run that has ended (or been replaced) is dropped.
  auto complete = [this, p, generation, fired, done = std::move(done)](const Result& r) {
    if (*fired) return;
    *fired = true;
    p->deleteLater();
    if (generation != generation_ || done_) return;
    done(r);
  };
  connect(p, &QProcess::errorOccurred, this, [p, complete](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart) return;
    Result r;
    r.started = false;
    r.error = QStringLiteral("%1 could not be started (missing, or not executable): %2").arg(p->program(), p->errorString());
    complete(r);
  });
  connect(p, &QProcess::finished, this, [p, complete](int code, QProcess::ExitStatus status) {
    Result r;
    r.exit_code = status == QProcess::CrashExit ? -1 : code;
    r.out = p->readAllStandardOutput();
    r.err = QString::fromLocal8Bit(p->readAllStandardError());
    complete(r);
  });
  // A command that does not answer (a login node gone quiet, a hung controller) is ended and counts as failed, so
  // the polling, the reads and Cancel go on instead of waiting for it forever.
  auto* limit = new QTimer(p);
  limit->setSingleShot(true);
  connect(limit, &QTimer::timeout, this, [p, complete, ms = command_timeout_ms_] {
    Result r;
    r.exit_code = -1;
    r.timed_out = true;
    r.err = QStringLiteral("%1 did not answer within %2 s and was stopped").arg(p->program()).arg(ms / 1000.0);
    complete(r);
    p->kill();
  });
  limit->start(command_timeout_ms_);
  p->start(QIODevice::ReadWrite);
  if (!input.isEmpty()) p->write(input);  // buffered until the process runs
  p->closeWriteChannel();                 // after what was written: the script ends here
}

void SlurmRun::on_submitted(const Result& r) {
  const QString program = settings_.login_host.isEmpty() ? QStringLiteral("sbatch") : QStringLiteral("ssh");
  if (!r.started) {
    finish(RunOutcome::failed_to_start(
        r.error + (settings_.login_host.isEmpty()
                       ? QStringLiteral(". Slurm's commands must be on PATH here, or submit from a login node over ssh.")
                       : QStringLiteral("."))));
    return;
  }
  if (r.timed_out) {
    // The controller may have taken the job and only its answer been lost: no id, so nothing here can watch or
    // cancel it. Say so, rather than that it was refused.
    finish(RunOutcome::failed_to_start(
        QStringLiteral("%1: the job may have been submitted all the same, unwatched (no job id came back). Look for "
                       "a job named meshloom-bench (squeue --me --name meshloom-bench%2) and cancel it if it is "
                       "there; it writes into %3.")
            .arg(r.err, settings_.login_host.isEmpty() ? QString() : QStringLiteral(" on ") + settings_.login_host,
                 QFileInfo(files_.records).absolutePath())));
    return;
  }
  if (r.exit_code != 0) {  // sbatch's refusal (or ssh's), word for word
    const QString who = settings_.login_host.isEmpty() ? QStringLiteral("sbatch refused the job:")
                        : r.exit_code == 255       ? QStringLiteral("ssh %1 failed:").arg(settings_.login_host)
                                                   : QStringLiteral("sbatch on %1 refused the job:").arg(settings_.login_host);
    finish(RunOutcome::failed_to_start(who + QLatin1Char(' ') + said(program, r.exit_code, r.err), r.exit_code));
    return;
  }
  const std::optional<QString> id = parse_sbatch_job_id(QString::fromLocal8Bit(r.out));
  if (!id) {
    finish(RunOutcome::failed_to_start(
        QStringLiteral("sbatch printed no job id: %1").arg((QString::fromLocal8Bit(r.out) + r.err).trimmed())));
    return;
  }
  if (!r.err.trimmed().isEmpty()) emit log(r.err.trimmed());  // sbatch's warnings
  job_id_ = *id;
  emit log(QStringLiteral("Submitted batch job %1").arg(job_id_));
  emit submitted(job_id_);
  poll_timer_->start(poll_ms_);
  if (settings_.login_host.isEmpty()) read_timer_->start();
  if (cancel_requested_) send_scancel();
  poll();
}

void SlurmRun::poll() {
  if (done_ || ending_ || job_id_.isEmpty()) return;
  if (settings_.login_host.isEmpty()) {
    read_local();
  } else {
    read_remote(nullptr);
  }
  if (querying_) return;
  querying_ = true;
  run_command(squeue_command(settings_, job_id_), {}, [this](const Result& r) {
    if (!r.started || r.exit_code != 0) {
      // A job squeue no longer knows ("Invalid job id specified") may still be in scontrol's memory.
      if (!r.err.contains(QLatin1String("Invalid job id"))) query_failed(QStringLiteral("squeue"), r);
      ask_scontrol(std::nullopt);
      return;
    }
    const std::optional<SlurmJobState> s = parse_squeue(QString::fromLocal8Bit(r.out));
    if (!s || is_final_state(s->state)) {  // gone from the queue, or ended: scontrol has the exit code
      ask_scontrol(s);
      return;
    }
    querying_ = false;
    take_state(*s);
  });
}

void SlurmRun::ask_scontrol(const std::optional<SlurmJobState>& fallback) {
  run_command(scontrol_command(settings_, job_id_), {}, [this, fallback](const Result& r) {
    querying_ = false;
    if (r.started && r.exit_code == 0) {
      if (const auto s = parse_scontrol_job(QString::fromLocal8Bit(r.out))) {
        take_state(*s);
        return;
      }
    }
    if (fallback) {
      take_state(*fallback);
      return;
    }
    if (r.started && r.err.contains(QLatin1String("Invalid job id"))) {
      // Slurm forgot the job (MinJobAge passed while nobody asked: a login node out of reach, a laptop asleep):
      // what it wrote is all there is to know. Its records are read to the end, and a run whose summary says it
      // succeeded did.
      forgotten(r.err.trimmed());
      return;
    }
    if (r.started && r.exit_code == 0) {
      query_failed(QStringLiteral("scontrol printed no JobState: %1").arg(QString::fromLocal8Bit(r.out).trimmed().left(200)));
      return;
    }
    query_failed(QStringLiteral("scontrol"), r);
  });
}

void SlurmRun::forgotten(const QString& scontrol_said) {
  if (ending_) return;
  ending_ = true;
  poll_timer_->stop();
  read_timer_->stop();
  const auto records_read = [this, scontrol_said] {
    stream_->close(/*take_partial=*/false);
    const Measurements& m = stream_->measurements();
    RunOutcome o;
    const QString forgot = QStringLiteral("Slurm no longer knows job %1 (scontrol: %2)").arg(job_id_, scontrol_said);
    if (m.summary_seen() && m.summary_ok().value_or(false) && stream_->records_error().isEmpty()) {
      o.status = RunOutcome::Status::Succeeded;
      o.message = forgot + QStringLiteral(": it ended before the app saw it end, and its records are whole (%1 "
                                          "results and the summary, which says the run succeeded).")
                               .arg(stream_->results());
    } else {
      o.status = RunOutcome::Status::Failed;
      o.message = forgot + QStringLiteral("; its records so far are kept (%1 results, no summary that says the run "
                                          "succeeded).")
                               .arg(stream_->results());
    }
    finish(std::move(o));
  };
  if (settings_.login_host.isEmpty()) {
    read_local();
    records_read();
  } else {
    read_remote(records_read);
  }
}

void SlurmRun::query_failed(const QString& what, const Result& r) {
  query_failed(r.started ? said(what, r.exit_code, r.err) : r.error);
}

void SlurmRun::query_failed(const QString& why) {
  if (why == last_query_error_) return;  // said once, until Slurm answers again
  last_query_error_ = why;
  emit log(QStringLiteral("Cannot ask Slurm about job %1: %2").arg(job_id_, why));
}

void SlurmRun::take_state(const SlurmJobState& s) {
  if (done_ || ending_) return;
  last_query_error_.clear();
  if (s != state_) {
    state_ = s;
    emit log(describe_job(job_id_, s));
    emit state_changed(s);
  }
  if (is_final_state(s.state)) wrap_up();
}

void SlurmRun::read_local() {
  if (done_ || !settings_.login_host.isEmpty()) return;
  QFile f(files_.records);
  if (!f.open(QIODevice::ReadOnly)) return;  // not written yet
  if (f.size() <= offset_ || !f.seek(offset_)) return;
  const QByteArray bytes = f.readAll();
  offset_ += bytes.size();
  if (!bytes.isEmpty()) stream_->feed(bytes);
}

void SlurmRun::read_remote(std::function<void()> then) {
  if (reading_) {
    // A read is under way: once it is in, read again and then go on.
    if (then) after_read_ = std::move(then);
    return;
  }
  reading_ = true;
  run_command(remote_read_command(settings_, files_.records, offset_), {}, [this, then](const Result& r) {
    reading_ = false;
    const std::optional<QByteArray> bytes =
        r.started && r.exit_code == 0 ? remote_read_payload(r.out) : std::optional<QByteArray>();
    if (bytes) {
      offset_ += bytes->size();
      if (!bytes->isEmpty()) stream_->feed(*bytes);
    } else if (then) {  // the last read: say why it failed (before that, the file may not be there yet)
      const QString why = !r.started       ? r.error
                          : r.exit_code != 0 ? said(QStringLiteral("tail"), r.exit_code, r.err)
                                             : QStringLiteral("its output lacks the line that starts the file's bytes");
      emit log(QStringLiteral("Cannot read the job's records %1 on %2: %3").arg(files_.records, settings_.login_host, why));
    }
    if (after_read_) {
      std::function<void()> next = std::move(after_read_);
      after_read_ = nullptr;
      read_remote(std::move(next));
      return;
    }
    if (then) then();
  });
}

void SlurmRun::cancel() {
  if (done_ || ending_) return;
  cancel_requested_ = true;
  if (!job_id_.isEmpty()) send_scancel();  // else sbatch is under way: its answer cancels
}

void SlurmRun::send_scancel() {
  if (cancel_sent_) return;
  cancel_sent_ = true;
  const LaunchCommand scancel = scancel_command(settings_, job_id_);
  emit log(QStringLiteral("$ ") + command_text(scancel));
  run_command(scancel, {}, [this](const Result& r) {
    if (!r.started || r.exit_code != 0) {
      cancel_sent_ = false;  // Cancel may be pressed again
      const QString why = r.started ? said(QStringLiteral("scancel"), r.exit_code, r.err) : r.error;
      emit log(QStringLiteral("scancel %1 failed: %2").arg(job_id_, why));
      emit cancel_failed(why);
      return;
    }
    poll();  // see it end without waiting for the next poll
  });
}

void SlurmRun::wrap_up() {
  if (ending_) return;
  ending_ = true;
  poll_timer_->stop();
  read_timer_->stop();
  // The job has ended: its records file is whole. Read it to the end, then say how it went.
  const auto records_read = [this] {
    stream_->close(/*take_partial=*/state_.state == QLatin1String("COMPLETED"));
    conclude_or_fetch_tail();
  };
  if (settings_.login_host.isEmpty()) {
    read_local();
    records_read();
  } else {
    read_remote(records_read);
  }
}

void SlurmRun::conclude_or_fetch_tail() {
  SlurmEnd end;
  end.job_id = job_id_;
  end.state = state_;
  end.cancel_requested = cancel_requested_;
  end.results = stream_->results();
  end.expected = stream_->expected();
  const Measurements& m = stream_->measurements();
  end.summary_seen = m.summary_seen();
  end.summary_ok = m.summary_ok().value_or(false);
  for (const auto& e : m.run_errors()) end.run_errors << QString::fromStdString(e);
  end.records_error = stream_->records_error();
  end.time_limit = settings_.time_limit;
  end.output_path = files_.output;
  RunOutcome o = slurm_outcome(end);
  if (o.status == RunOutcome::Status::Succeeded || (o.status == RunOutcome::Status::Cancelled && cancel_requested_)) {
    finish(std::move(o));
    return;
  }
  // It did not go as asked: the end of the job's output says why.
  if (settings_.login_host.isEmpty()) {
    end.output_tail = local_tail(files_.output, kOutputTailLines);
    finish(slurm_outcome(end));
    return;
  }
  run_command(remote_tail_command(settings_, files_.output, kOutputTailLines), {}, [this, end](const Result& r) mutable {
    if (r.started && r.exit_code == 0) end.output_tail = QString::fromLocal8Bit(r.out);
    finish(slurm_outcome(end));
  });
}

void SlurmRun::finish(RunOutcome o) {
  if (done_) return;
  done_ = true;
  poll_timer_->stop();
  read_timer_->stop();
  stream_->close(/*take_partial=*/false);
  o.results = stream_->results();
  o.expected = stream_->expected();
  o.summary_ok = stream_->measurements().summary_ok().value_or(false);
  o.problems.clear();
  for (const auto& p : stream_->measurements().problems()) o.problems << QString::fromStdString(p);
  emit finished(o);
}

}  // namespace meshloom::app
