// RecordStream: the JSON Lines records of a live run as they arrive, whatever brings them (a launcher's standard
// output read by LauncherRun, the records file a Slurm job writes, read by SlurmRun as it grows). Bytes go in as
// they come; each complete line that starts with '{' is read as a record (Measurements::add_line): an accepted one
// is appended to the run's records file and flushed (so `meshloom-launch calibrate --from` can fit it, and a crash
// keeps what was measured), then announced by record_line(); a line that is not a record is reported by log() with
// its number ("line N: ...") and never saved; a line that does not start with '{' (mpirun's, ssh's or a shell's
// words) goes to log() as it is. Progress counts result records against the config record's plan, counted as bench
// counts its rows: every axis x collective x size, less the sizes that leave a rank no element (all_gather,
// reduce_scatter and all_to_all split size / itemsize elements over the axis' group; bench_run.cpp skips a size
// when that is 0).
#pragma once

#include <QByteArray>
#include <QObject>
#include <QString>

#include <memory>

#include "costs/measurements.hpp"

class QFile;

namespace meshloom::app {

class RecordStream : public QObject {
  Q_OBJECT

public:
  explicit RecordStream(QObject* parent = nullptr);
  ~RecordStream() override;

  // Starts afresh (what was read before is forgotten). Accepted records are appended to `records_path`, created or
  // truncated ("" keeps none). False, with the reason in *error, when the file cannot be created.
  bool open(const QString& records_path, QString* error);
  // The longest line kept while it waits for its newline. Every record the launcher writes is far shorter; a line
  // past it (a process writing without newlines) is dropped through its newline, said once in the log, so memory
  // stays bounded whatever the process writes.
  static constexpr qsizetype kMaxLineBytes = qsizetype{16} << 20;

  // Bytes as they arrived: every complete line is taken; the rest waits for the next feed().
  void feed(const QByteArray& bytes);
  // The end of the stream: a last line without its newline is taken when take_partial (a process's last words),
  // else dropped and said in the log (a record cut short by a job that was ended while writing it). Closes the
  // records file.
  void close(bool take_partial);

  [[nodiscard]] const Measurements& measurements() const noexcept { return measurements_; }
  [[nodiscard]] int results() const noexcept { return results_; }
  [[nodiscard]] int expected() const noexcept { return expected_; }
  [[nodiscard]] const QString& records_path() const noexcept { return records_path_; }
  // The first failure to save a record ("" while every record is saved).
  [[nodiscard]] const QString& records_error() const noexcept { return records_error_; }
  // Bytes of a line still waiting for its newline.
  [[nodiscard]] qsizetype pending_bytes() const noexcept { return partial_.size(); }

signals:
  void record_line(const QString& line);  // an accepted record, as it arrived
  void log(const QString& text);          // lines that are not records, and why a record was refused
  void progress(int done, int total);     // after the config record and after each result

private:
  void take_line(const QByteArray& line);

  std::unique_ptr<QFile> records_;
  QString records_path_;
  QString records_error_;
  QByteArray partial_;
  bool dropping_ = false;  // inside a line longer than kMaxLineBytes, dropped through its newline
  Measurements measurements_;
  int results_ = 0;
  int expected_ = 0;
};

// The number of result records a bench config record announces (see above); 0 when it lists no axes, collectives
// or sizes.
[[nodiscard]] int expected_results_from_config(const QByteArray& line);

}  // namespace meshloom::app
