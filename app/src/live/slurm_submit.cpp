#include "live/slurm_submit.hpp"

#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>

#include <algorithm>
#include <iterator>

namespace meshloom::app {

namespace {

// A word as sbatch reads it back from an #SBATCH line (src/sbatch/opt.c: blanks separate words, '...' and "..."
// group them, a backslash keeps the next character, an unquoted # starts a comment).
QString sbatch_quoted(const QString& word) {
  static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_./:=,+@%\\[\\]-]+$"));
  if (plain.match(word).hasMatch()) return word;
  QString w = word;
  w.replace(QLatin1Char('\\'), QStringLiteral("\\\\"));
  w.replace(QLatin1Char('"'), QStringLiteral("\\\""));
  return QLatin1Char('"') + w + QLatin1Char('"');
}

struct RefusedOption {
  const char* name;  // long name, without "--"
  char letter;       // short name, or 0
  const char* why;
};

const RefusedOption kRefused[] = {
    {"output", 'o', "the app names the job's output file (job.out in the run's folder) to show its last lines"},
    {"error", 'e', "the app names the job's output file (job.out in the run's folder) to show its last lines"},
    {"parsable", 0, "the app submits with --parsable already"},
    {"wrap", 0, "the app writes the job's script"},
    {"wait", 'W', "sbatch would not return until the job ends; the app watches the job instead"},
    {"test-only", 0, "the app submits the job (the dialog shows the script first)"},
    {"partition", 'p', "it has a field of its own: Partition"},
    {"nodes", 'N', "it has a field of its own: Nodes"},
    {"ntasks-per-node", 0, "it has a field of its own: Tasks per node"},
    {"ntasks", 'n', "the job runs nodes x tasks per node ranks, the design's world"},
    {"time", 't', "it has a field of its own: Time limit"},
    {"gpus-per-task", 0, "it has a field of its own: GPUs per task"},
    {"chdir", 'D', "the job runs in the run's folder, where it writes its records"},
    {"array", 'a', "the run is one job writing one records file; the tasks of an array would all write into it"},
    {"clusters", 'M', "the app watches the job with squeue, scontrol and scancel of the cluster it submits to; "
                      "submit from that cluster's login node (Submit on) instead"},
    {"requeue", 0, "a requeued job starts its records file afresh while the app reads on where it was; the script "
                   "asks for --no-requeue"},
};

}  // namespace

SlurmJobFiles slurm_job_files(const QString& run_dir) {
  const QDir dir(run_dir);
  return {dir.filePath(QStringLiteral("job.sbatch")), dir.filePath(QStringLiteral("job.jsonl")),
          dir.filePath(QStringLiteral("job.out"))};
}

std::optional<QStringList> split_shell_words(const QString& text, QString* error) {
  const auto fail = [&](const QString& why) -> std::optional<QStringList> {
    if (error) *error = why;
    return std::nullopt;
  };
  QStringList words;
  QString word;
  bool in_word = false;
  const qsizetype n = text.size();
  for (qsizetype i = 0; i < n; ++i) {
    const QChar c = text.at(i);
    if (c == QLatin1Char(' ') || c == QLatin1Char('\t') || c == QLatin1Char('\n')) {
      if (in_word) words << word;
      word.clear();
      in_word = false;
      continue;
    }
    if (c == QLatin1Char('\'')) {
      const qsizetype end = text.indexOf(QLatin1Char('\''), i + 1);
      if (end < 0) return fail(QStringLiteral("Unmatched ' in \"%1\".").arg(text.mid(i)));
      word += text.mid(i + 1, end - i - 1);
      i = end;
      in_word = true;
      continue;
    }
    if (c == QLatin1Char('"')) {
      const qsizetype open = i;
      for (++i; i < n && text.at(i) != QLatin1Char('"'); ++i) {
        const QChar d = text.at(i);
        if (d == QLatin1Char('\\') && i + 1 < n && QStringLiteral("\"\\$`\n").contains(text.at(i + 1))) {
          if (text.at(i + 1) != QLatin1Char('\n')) word += text.at(i + 1);
          ++i;
        } else if (d == QLatin1Char('$') || d == QLatin1Char('`')) {
          return fail(QStringLiteral("\"%1\" in \"%2\": only a shell expands it, and these options never go "
                                     "through one; write the value itself (or quote it with '...').")
                          .arg(d)
                          .arg(text.mid(open)));
        } else {
          word += d;
        }
      }
      if (i >= n) return fail(QStringLiteral("Unmatched \" in \"%1\".").arg(text.mid(open)));
      in_word = true;
      continue;
    }
    if (c == QLatin1Char('\\')) {
      if (i + 1 >= n) return fail(QStringLiteral("A backslash ends \"%1\": it must escape a character.").arg(text));
      if (text.at(i + 1) != QLatin1Char('\n')) word += text.at(i + 1);
      ++i;
      in_word = true;
      continue;
    }
    if (QStringLiteral("$`;|&<>()").contains(c) || (c == QLatin1Char('#') && !in_word)) {
      return fail(QStringLiteral("\"%1\" in \"%2\": only a shell would act on it, and these options never go "
                                 "through one (quote it to mean the character itself).")
                      .arg(c)
                      .arg(text.trimmed()));
    }
    word += c;
    in_word = true;
  }
  if (in_word) words << word;
  return words;
}

std::optional<QStringList> sbatch_extra_options(const SlurmSettings& settings, QString* error) {
  const auto fail = [&](const QString& why) -> std::optional<QStringList> {
    if (error) *error = why;
    return std::nullopt;
  };
  QString why;
  const std::optional<QStringList> words = split_shell_words(settings.extra_options, &why);
  if (!words) return fail(QStringLiteral("Extra sbatch options: %1").arg(why));
  for (qsizetype i = 0; i < words->size(); ++i) {
    const QString& w = words->at(i);
    // A line break ends an #SBATCH line, and bash runs what follows it.
    if (w.contains(QLatin1Char('\n')) || w.contains(QLatin1Char('\r'))) {
      QString shown = w;
      shown.replace(QLatin1Char('\n'), QStringLiteral("\\n")).replace(QLatin1Char('\r'), QStringLiteral("\\r"));
      return fail(QStringLiteral("Extra sbatch options: \"%1\" holds a line break, which would end its #SBATCH line "
                                 "(and bash would run the rest).")
                      .arg(shown));
    }
    if (!w.startsWith(QLatin1Char('-'))) {
      if (i == 0) {
        return fail(QStringLiteral("Extra sbatch options: \"%1\" is not an option (options start with -, as in "
                                   "--account=myproject).")
                        .arg(w));
      }
      continue;  // the value of the option before it
    }
    // sbatch reads long options with getopt_long, which takes any unambiguous abbreviation: "--outp" is --output.
    // The option a long word names: the refused one it spells out, else the first it abbreviates.
    const QString key = w.startsWith(QLatin1String("--")) ? w.mid(2).section(QLatin1Char('='), 0, 0) : QString();
    // getopt_long takes an exact name over the names it abbreviates: sbatch's own --gpus is not --gpus-per-task.
    static const QStringList kOwnNames{QStringLiteral("gpus")};
    if (kOwnNames.contains(key)) continue;
    const bool exact = std::any_of(std::begin(kRefused), std::end(kRefused),
                                   [&key](const RefusedOption& r) { return key == QLatin1String(r.name); });
    for (const RefusedOption& r : kRefused) {
      const QString name = QString::fromLatin1(r.name);
      const bool long_match = !key.isEmpty() && (exact ? key == name : name.startsWith(key));
      const bool short_match = r.letter != 0 && !w.startsWith(QLatin1String("--")) && w.size() >= 2 &&
                               w.at(1) == QLatin1Char(r.letter);
      if (long_match || short_match) {
        return fail(QStringLiteral("Extra sbatch options: %1 is not taken here: %2.")
                        .arg(w.section(QLatin1Char('='), 0, 0), QString::fromLatin1(r.why)));
      }
    }
  }
  return words;
}

std::optional<QString> slurm_settings_error(const SlurmSettings& s, int world) {
  if (s.nodes < 1) return QStringLiteral("Nodes must be at least 1 (it is %1).").arg(s.nodes);
  if (s.tasks_per_node < 1) return QStringLiteral("Tasks per node must be at least 1 (it is %1).").arg(s.tasks_per_node);
  if (s.gpus_per_task < 0) return QStringLiteral("GPUs per task cannot be negative (it is %1).").arg(s.gpus_per_task);
  if (static_cast<qint64>(s.nodes) * s.tasks_per_node != world) {
    return QStringLiteral("%1 node(s) x %2 task(s) per node make %3 ranks, and the design's world is %4: the job "
                          "runs one rank per task.")
        .arg(s.nodes)
        .arg(s.tasks_per_node)
        .arg(static_cast<qint64>(s.nodes) * s.tasks_per_node)
        .arg(world);
  }
  static const QRegularExpression partition(QStringLiteral("^[A-Za-z0-9_.,-]+$"));
  if (!s.partition.isEmpty() && !partition.match(s.partition).hasMatch()) {
    return QStringLiteral("Partition \"%1\": a partition's name has only letters, digits, _ . and - (several "
                          "partitions: a,b).")
        .arg(s.partition);
  }
  static const QRegularExpression time(
      QStringLiteral("^(\\d+(:\\d+){0,2}|\\d+-\\d+(:\\d+){0,2}|INFINITE|UNLIMITED)$"),
      QRegularExpression::CaseInsensitiveOption);
  if (!s.time_limit.isEmpty() && !time.match(s.time_limit).hasMatch()) {
    return QStringLiteral("Time limit \"%1\": Slurm reads minutes, minutes:seconds, hours:minutes:seconds, "
                          "days-hours, days-hours:minutes or days-hours:minutes:seconds (e.g. 00:30:00).")
        .arg(s.time_limit);
  }
  static const QRegularExpression host(QStringLiteral("^[A-Za-z0-9_.@:%\\[\\]-]+$"));
  if (!s.login_host.isEmpty() &&
      (s.login_host.startsWith(QLatin1Char('-')) || !host.match(s.login_host).hasMatch())) {
    return QStringLiteral("Login node \"%1\": write a host ssh can reach, as login1 or user@login1.example.org.")
        .arg(s.login_host);
  }
  QString why;
  if (!sbatch_extra_options(s, &why)) return why;
  return std::nullopt;
}

std::optional<QString> batch_script(const SlurmSettings& s, const QString& launcher, const BenchSettings& bench,
                                    const SlurmJobFiles& files, QString* error) {
  const auto fail = [&](const QString& why) -> std::optional<QString> {
    if (error) *error = why;
    return std::nullopt;
  };
  if (const auto why = slurm_settings_error(s, bench.world)) return fail(*why);
  if (launcher.trimmed().isEmpty()) return fail(QStringLiteral("Name the meshloom-launch program."));
  if (files.output.contains(QLatin1Char('\\'))) {
    return fail(QStringLiteral("The run's folder %1 has a backslash, which Slurm does not keep in an output file's "
                               "name: choose another folder.")
                    .arg(QFileInfo(files.output).absolutePath()));
  }
  // A line break ends a comment or an #SBATCH line, and bash runs what follows it.
  const auto line_break = [](const QString& text) {
    return text.contains(QLatin1Char('\n')) || text.contains(QLatin1Char('\r'));
  };
  if (line_break(files.records) || line_break(files.output)) {
    return fail(QStringLiteral("The run's folder \"%1\" has a line break in its name, which would end a line of the "
                               "job's script: choose another folder.")
                    .arg(QFileInfo(files.output).absolutePath()));
  }
  if (line_break(bench.design_path)) {
    return fail(QStringLiteral("The design's file name \"%1\" has a line break, which would end a line of the job's "
                               "script: save the design under another name.")
                    .arg(bench.design_path));
  }
  const QStringList extra = sbatch_extra_options(s, nullptr).value_or(QStringList{});

  QStringList lines{QStringLiteral("#!/bin/bash"),
                    QStringLiteral("# Meshloom: meshloom-launch bench of the design %1, submitted by the app.")
                        .arg(bench.design_path),
                    QStringLiteral("# The job writes its records to %1 as each is measured; the app reads them from "
                                   "there.")
                        .arg(files.records)};
  const auto sbatch_line = [&](const QStringList& words) {
    QStringList quoted;
    for (const QString& w : words) quoted << sbatch_quoted(w);
    lines << QStringLiteral("#SBATCH ") + quoted.join(QLatin1Char(' '));
  };
  sbatch_line({QStringLiteral("--job-name=meshloom-bench")});
  if (!s.partition.isEmpty()) sbatch_line({QStringLiteral("--partition=") + s.partition});
  sbatch_line({QStringLiteral("--nodes=%1").arg(s.nodes)});
  sbatch_line({QStringLiteral("--ntasks-per-node=%1").arg(s.tasks_per_node)});
  if (s.gpus_per_task > 0) sbatch_line({QStringLiteral("--gpus-per-task=%1").arg(s.gpus_per_task)});
  if (!s.time_limit.isEmpty()) sbatch_line({QStringLiteral("--time=") + s.time_limit});
  // Requeued (after a node failure or preemption), the job would start job.jsonl afresh while the app reads on
  // from where it was.
  sbatch_line({QStringLiteral("--no-requeue")});
  sbatch_line({QStringLiteral("--chdir=") + QFileInfo(files.records).absolutePath()});
  QString output = files.output;
  output.replace(QLatin1Char('%'), QStringLiteral("%%"));  // Slurm's file name patterns (%j) are not ours
  sbatch_line({QStringLiteral("--output=") + output});
  // The extra options, one line per option with the values that follow it.
  QStringList group;
  for (const QString& w : extra) {
    if (w.startsWith(QLatin1Char('-')) && !group.isEmpty()) {
      sbatch_line(group);
      group.clear();
    }
    group << w;
  }
  if (!group.isEmpty()) sbatch_line(group);

  QStringList args = bench_arguments(bench);
  if (!args.isEmpty() && args.back() == QLatin1String("-")) args.back() = files.records;  // --jsonl <records>
  QStringList quoted_args;
  for (const QString& a : args) quoted_args << shell_quoted(a);
  lines << QStringLiteral("set -euo pipefail") << QString() << QStringLiteral("LAUNCH=") + shell_quoted(launcher)
        << QStringLiteral("command -v \"$LAUNCH\" >/dev/null || { echo \"error: $LAUNCH not found on $(hostname): "
                          "set the launcher to its path on the cluster\" >&2; exit 127; }")
        << QStringLiteral("# One rank per task, started by Slurm through PMIx; the records go to --jsonl as each "
                          "is measured.")
        << QStringLiteral("srun --mpi=pmix \"$LAUNCH\" ") + quoted_args.join(QLatin1Char(' '));
  return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

LaunchCommand slurm_command(const SlurmSettings& s, const QString& program, const QStringList& arguments) {
  if (s.login_host.isEmpty()) return {program, arguments};
  // Never a password prompt, and a login node that stops answering ends the command (ConnectTimeout, and
  // ServerAlive* for a connection that goes quiet) rather than hanging the run's polling.
  QStringList a{QStringLiteral("-o"), QStringLiteral("BatchMode=yes"),          QStringLiteral("-o"),
                QStringLiteral("ConnectTimeout=15"), QStringLiteral("-o"),    QStringLiteral("ServerAliveInterval=15"),
                QStringLiteral("-o"), QStringLiteral("ServerAliveCountMax=3"), s.login_host,
                shell_quoted(program)};
  for (const QString& w : arguments) a << shell_quoted(w);
  return {QStringLiteral("ssh"), a};
}

LaunchCommand sbatch_command(const SlurmSettings& s) {
  return slurm_command(s, QStringLiteral("sbatch"), {QStringLiteral("--parsable")});
}

LaunchCommand squeue_command(const SlurmSettings& s, const QString& job_id) {
  return slurm_command(s, QStringLiteral("squeue"),
                       {QStringLiteral("--noheader"), QStringLiteral("--jobs"), job_id, QStringLiteral("--format"),
                        QStringLiteral("%T|%r|%N")});
}

LaunchCommand scontrol_command(const SlurmSettings& s, const QString& job_id) {
  return slurm_command(s, QStringLiteral("scontrol"),
                       {QStringLiteral("--oneliner"), QStringLiteral("show"), QStringLiteral("job"), job_id});
}

LaunchCommand scancel_command(const SlurmSettings& s, const QString& job_id) {
  return slurm_command(s, QStringLiteral("scancel"), {job_id});
}

LaunchCommand remote_read_command(const SlurmSettings& s, const QString& path, qint64 offset) {
  return slurm_command(s, QStringLiteral("sh"),
                       {QStringLiteral("-c"),
                        QStringLiteral("printf \"%s\\n\" meshloom-records && exec tail -c +\"$1\" \"$0\""), path,
                        QString::number(offset + 1)});
}

std::optional<QByteArray> remote_read_payload(const QByteArray& output) {
  const QByteArray marker(kRemoteReadMarker);
  const qsizetype at = output.startsWith(marker) ? 0 : output.indexOf(QByteArray("\n") + marker);
  if (at < 0) return std::nullopt;
  return output.mid(at == 0 ? marker.size() : at + 1 + marker.size());
}

LaunchCommand remote_tail_command(const SlurmSettings& s, const QString& path, int lines) {
  return slurm_command(s, QStringLiteral("tail"), {QStringLiteral("-n"), QString::number(lines), path});
}

std::optional<QString> parse_sbatch_job_id(const QString& output) {
  static const QRegularExpression id(QStringLiteral("^(\\d+)(;\\S*)?$"));
  const QStringList lines = output.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    const auto m = id.match(it->trimmed());
    if (m.hasMatch()) return m.captured(1);
  }
  return std::nullopt;
}

namespace {

QString first_word(const QString& s) { return s.trimmed().section(QLatin1Char(' '), 0, 0); }

QString none_as_empty(const QString& s) {
  const QString t = s.trimmed();
  return t == QLatin1String("None") || t == QLatin1String("(null)") ? QString() : t;
}

}  // namespace

std::optional<SlurmJobState> parse_squeue(const QString& output) {
  for (const QString& line : output.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
    const QStringList f = line.trimmed().split(QLatin1Char('|'));
    if (f.size() < 3 || f[0].trimmed().isEmpty()) continue;
    return SlurmJobState{first_word(f[0]), none_as_empty(f[1]), none_as_empty(f[2]), QString()};
  }
  return std::nullopt;
}

std::optional<SlurmJobState> parse_scontrol_job(const QString& output) {
  // Key=Value pairs separated by blanks; a value may hold blanks (WorkDir=/a b), so a value runs to the next Key=.
  static const QRegularExpression key(QStringLiteral("(?:^|\\s)([A-Za-z][A-Za-z0-9_:/]*)="));
  QString state;
  SlurmJobState s;
  bool found = false;
  const QString text = output.trimmed();
  auto it = key.globalMatch(text);
  if (!it.hasNext()) return std::nullopt;
  auto m = it.next();
  while (true) {
    const QString name = m.captured(1);
    const qsizetype value_start = m.capturedEnd();
    const bool last = !it.hasNext();
    QRegularExpressionMatch next;
    if (!last) next = it.next();
    const qsizetype value_end = last ? text.size() : next.capturedStart();
    const QString value = text.mid(value_start, value_end - value_start).trimmed();
    if (name == QLatin1String("JobState")) {
      s.state = first_word(value);
      found = !s.state.isEmpty();
    } else if (name == QLatin1String("Reason")) {
      s.reason = none_as_empty(value);
    } else if (name == QLatin1String("NodeList")) {
      s.nodes = none_as_empty(value);
    } else if (name == QLatin1String("ExitCode")) {
      s.exit_code = value;
    }
    if (last) break;
    m = next;
  }
  if (!found) return std::nullopt;
  return s;
}

bool is_final_state(const QString& state) {
  static const QStringList final_states{
      QStringLiteral("COMPLETED"), QStringLiteral("FAILED"),        QStringLiteral("CANCELLED"),
      QStringLiteral("TIMEOUT"),   QStringLiteral("NODE_FAIL"),     QStringLiteral("OUT_OF_MEMORY"),
      QStringLiteral("BOOT_FAIL"), QStringLiteral("DEADLINE"),      QStringLiteral("PREEMPTED"),
      QStringLiteral("REVOKED"),   QStringLiteral("SPECIAL_EXIT")};
  return final_states.contains(state);
}

namespace {

// "2:0" -> 2; "0:15" -> -15 (a signal); 0 when there is none.
int exit_status(const QString& exit_code) {
  const int code = exit_code.section(QLatin1Char(':'), 0, 0).toInt();
  const int signal = exit_code.section(QLatin1Char(':'), 1, 1).toInt();
  return code != 0 ? code : -signal;
}

QString exit_words(const QString& exit_code) {
  const int code = exit_code.section(QLatin1Char(':'), 0, 0).toInt();
  const int signal = exit_code.section(QLatin1Char(':'), 1, 1).toInt();
  if (code != 0) return QStringLiteral("exit code %1").arg(code);
  if (signal != 0) return QStringLiteral("signal %1").arg(signal);
  return {};
}

}  // namespace

QString describe_job(const QString& job_id, const SlurmJobState& s) {
  QString text = QStringLiteral("Job %1: %2").arg(job_id, s.state);
  if (s.state == QLatin1String("RUNNING") || s.state == QLatin1String("COMPLETING")) {
    if (!s.nodes.isEmpty()) text += QStringLiteral(" on ") + s.nodes;
    return text;
  }
  QStringList why;
  if (!s.reason.isEmpty() && s.state != QLatin1String("COMPLETED") && s.state != QLatin1String("CANCELLED") &&
      s.reason != QLatin1String("NonZeroExitCode")) {
    why << s.reason;
  }
  if (s.state != QLatin1String("COMPLETED") && s.state != QLatin1String("CANCELLED") && is_final_state(s.state)) {
    const QString exit = exit_words(s.exit_code);
    if (!exit.isEmpty()) why << exit;
  }
  if (!why.isEmpty()) text += QStringLiteral(" (%1)").arg(why.join(QStringLiteral(", ")));
  return text;
}

RunOutcome slurm_outcome(const SlurmEnd& e) {
  RunOutcome o;
  o.results = e.results;
  o.expected = e.expected;
  o.summary_ok = e.summary_ok;
  o.exit_code = exit_status(e.state.exit_code);
  const QString after = QStringLiteral("after %1 of %2 results").arg(e.results).arg(e.expected);
  QString tail;
  if (!e.output_tail.trimmed().isEmpty()) {
    tail = QStringLiteral("\nIts output (%1) ends:\n%2").arg(e.output_path, e.output_tail.trimmed());
  } else if (!e.output_path.isEmpty()) {
    tail = QStringLiteral("\nIts output (%1) is empty or could not be read.").arg(e.output_path);
  }
  QString said;
  if (!e.run_errors.isEmpty()) said = QStringLiteral(" The launcher said: ") + e.run_errors.join(QStringLiteral("; "));
  const QString& state = e.state.state;
  if (state == QLatin1String("COMPLETED")) {
    if (!e.summary_seen) {
      o.status = RunOutcome::Status::Failed;
      o.message = QStringLiteral("Job %1 completed without a summary record %2.%3%4").arg(e.job_id, after, said, tail);
    } else if (!e.records_error.isEmpty()) {
      o.status = RunOutcome::Status::Failed;
      o.message = QStringLiteral("Job %1 completed: %2 results, but not all saved. %3")
                      .arg(e.job_id)
                      .arg(e.results)
                      .arg(e.records_error);
    } else {
      o.status = RunOutcome::Status::Succeeded;
      o.message = QStringLiteral("Job %1 completed: %2 results.").arg(e.job_id).arg(e.results);
    }
  } else if (state == QLatin1String("CANCELLED")) {
    o.status = RunOutcome::Status::Cancelled;
    o.message = e.cancel_requested
                    ? QStringLiteral("Job %1 cancelled %2.").arg(e.job_id, after)
                    : QStringLiteral("Job %1 was cancelled outside the app (scancel) %2.%3").arg(e.job_id, after, tail);
  } else if (state == QLatin1String("TIMEOUT")) {
    o.status = RunOutcome::Status::TimedOut;
    o.message = QStringLiteral("Job %1 reached its time limit%2 %3.%4")
                    .arg(e.job_id,
                         e.time_limit.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(e.time_limit), after, tail);
  } else {
    o.status = RunOutcome::Status::Failed;
    const QString exit = exit_words(e.state.exit_code);
    QStringList why;
    if (!e.state.reason.isEmpty() && e.state.reason != QLatin1String("NonZeroExitCode")) why << e.state.reason;
    if (!exit.isEmpty()) why << exit;
    o.message = QStringLiteral("Job %1 %2%3 %4.%5%6")
                    .arg(e.job_id, state,
                         why.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(why.join(QStringLiteral(", "))), after,
                         said, tail);
  }
  if (!e.records_error.isEmpty() && !o.message.contains(e.records_error)) o.message += QLatin1Char('\n') + e.records_error;
  return o;
}

}  // namespace meshloom::app
