// Durable output of bench and calibrate: the JSON Lines stream (each record written with one write(2) on an
// O_APPEND descriptor, then fsync'ed, so a crash loses at most the record in flight and ranks that report an error
// can append their own record to the same file). The calibration file is written with the engine's
// write_file_atomically (meshloom/io/atomic_file.hpp).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace meshloom::launcher {

// The path "-" names standard output: the records are written there (one write(2) each; fsync does not apply to a
// pipe or terminal: EINVAL is tolerated), and the command prints what it has for people to standard error instead, so
// a program that starts the launcher reads records alone from its standard output, as they are known.
[[nodiscard]] inline bool is_stdout(const std::filesystem::path& path) noexcept { return path == "-"; }

class JsonlSink {
public:
  JsonlSink() = default;
  // Creates or truncates `path` ("-": standard output). RuntimeError naming the path and the cause when it cannot.
  explicit JsonlSink(const std::filesystem::path& path);
  ~JsonlSink();
  JsonlSink(const JsonlSink&) = delete;
  JsonlSink& operator=(const JsonlSink&) = delete;
  JsonlSink(JsonlSink&& other) noexcept;
  JsonlSink& operator=(JsonlSink&& other) noexcept;

  [[nodiscard]] bool is_open() const noexcept { return fd_ >= 0; }
  // Writes `record` and a newline, then fsyncs. A no-op when not open. RuntimeError when the write fails.
  void write(const std::string& record);

  // Appends one record to `path` (created when missing) without truncating it, fsynced. Never throws; false when
  // it failed. For ranks other than the writer that report their own error.
  static bool append(const std::filesystem::path& path, const std::string& record) noexcept;

private:
  int fd_ = -1;
  std::filesystem::path path_;
};

// Reports an error of this rank: to stderr ("meshloom-launch: rank R: error: ..."), and as an error record of the
// JSON Lines stream: written to `sink` when this rank holds it open, else appended to `jsonl` when given (ranks
// other than the writer, once the run has started). Never throws.
void report_rank_error(int rank, const std::string& what, JsonlSink& sink,
                       const std::optional<std::filesystem::path>& jsonl) noexcept;

// This machine's host name for the records ("unknown" when gethostname fails).
[[nodiscard]] std::string host_name();

}  // namespace meshloom::launcher
