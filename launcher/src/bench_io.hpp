// Durable output of bench and calibrate: the JSON Lines stream (each record written with one write(2) on an
// O_APPEND descriptor, then fsync'ed, so a crash loses at most the record in flight and ranks that report an error
// can append their own record to the same file). The calibration file is written with the engine's
// write_file_atomically (meshloom/io/atomic_file.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>
#include <utility>

#include "meshloom/comm/transport.hpp"

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

// The JSON Lines stream of an MPI command (run, bench, calibrate) as each rank sees it. Rank 0 creates (or
// truncates) the file and writes every record; another rank only ever appends its own error record. Rank 0's
// truncation must never erase such a record, so another rank appends only once it knows that rank 0 has created
// the file: after a world collective that rank 0 entered only after open() succeeded. The commands open the stream
// before their first world exchange (agree_on_errors, mpi_command.hpp), which calls created() once it completes and
// rank 0 reported no error; before that, another rank's error goes to stderr alone.
class JsonlStream {
public:
  JsonlStream(int rank, std::optional<std::filesystem::path> path) : rank_(rank), path_(std::move(path)) {}

  // Rank 0 with a path: creates or truncates the file (RuntimeError naming it when it cannot, or when called after
  // created(): other ranks may have appended by then). Other ranks: nothing.
  void open();
  // A world collective that rank 0 entered after open() succeeded has completed: the file exists, and rank 0 will not
  // truncate it again, so other ranks may append to it from now on.
  void created() noexcept { created_ = true; }
  // Whether this rank reports its errors by appending to the file (a rank other than 0, once created()).
  [[nodiscard]] bool appends() const noexcept { return rank_ != 0 && created_ && path_.has_value(); }

  // Reports an error of this rank: stderr, and the error record (rank 0: written to the open stream; another rank:
  // appended when appends()). Never throws.
  void report_error(const std::string& what) noexcept;

  // Rank 0's open stream (closed on other ranks and without a path): what writes the records.
  [[nodiscard]] JsonlSink& sink() noexcept { return sink_; }

private:
  int rank_ = 0;
  std::optional<std::filesystem::path> path_;
  JsonlSink sink_;
  bool created_ = false;
};

// Reports an error of this rank: to stderr ("meshloom-launch: rank R: error: ..."), and as an error record of the
// JSON Lines stream: written to `sink` when this rank holds it open, else appended to `jsonl` when given (ranks
// other than the writer, only once rank 0 has created the file: JsonlStream decides). Never throws.
void report_rank_error(int rank, const std::string& what, JsonlSink& sink,
                       const std::optional<std::filesystem::path>& jsonl) noexcept;

// This machine's host name for the records ("unknown" when gethostname fails).
[[nodiscard]] std::string host_name();

// The CPUs this process may run on (sched_getaffinity), as Linux lists them: "0", "0-3", "0,2,4-7"; "?" when the
// call fails.
[[nodiscard]] std::string cpu_binding();
// Whether every rank of a job was bound: its CPUs (cpus[r], cpu_binding's) are fewer than those of all the ranks on
// its host (hosts[r]) together. A launcher that binds (mpirun --bind-to core, srun --cpu-bind) gives each rank a
// share of its host's CPUs; unbound, every rank of a host may run on every CPU it has (all of the machine's, or of a
// container's cpuset), so no rank's set is smaller than their union. A list that is not one (parse_cpu_list, e.g.
// "?"), or lists and hosts of different lengths: false. Examples: {"0", "1", "0", "1"} on one host: true;
// {"0-1", "0-1"}: false; {"0", "0"}: false (both on one CPU: nothing tells them apart).
[[nodiscard]] bool ranks_bound(const std::vector<std::string>& cpus, const std::vector<std::string>& hosts);
// A host whose ranks outnumber the CPUs they may run on together (the union of their cpu_binding lists): its ranks
// take turns on those CPUs.
struct CrowdedHost {
  std::string host;
  std::int64_t ranks = 0;
  std::int64_t cpus = 0;
  friend bool operator==(const CrowdedHost&, const CrowdedHost&) = default;
};
// The hosts of a job (every rank's CPUs and host, as ranks_bound takes them) that run more ranks than the CPUs of
// those ranks together, in the order of their first rank. A host where some rank's list is not one (parse_cpu_list,
// e.g. "?") is left out, its CPUs unknown; lists and hosts of different lengths give none. Examples, one host:
// {"0-1", "0-1", "0-1", "0-1"} -> {host, 4 ranks, 2 CPUs}; {"0", "1", "0", "1"} (bound two to a core): the same;
// {"0", "1"}: none.
[[nodiscard]] std::vector<CrowdedHost> crowded_hosts(const std::vector<std::string>& cpus,
                                                     const std::vector<std::string>& hosts);
// What the commands that time collectives (bench, calibrate, run, validate, advise --measure) print with their header
// for a job with crowded hosts whose ranks run under a fair-share policy: Linux's default (no "scheduler" in
// `transport`, job_transport's), SCHED_BATCH or SCHED_IDLE. There a rank that waits polls while the rank beside it
// waits for the core, and a collective's time depends on the steps before it (docs/05-launcher.md, "More ranks than
// cores"); the note says so and how to start the job instead. "" where no host is crowded, or under a real-time or
// unknown policy. One line, without its newline.
[[nodiscard]] std::string crowding_note(const std::vector<CrowdedHost>& crowded,
                                        const comm::TransportSettings& transport);
// A scheduling policy (sched_getscheduler's, with SCHED_RESET_ON_FORK or not) and static priority as the "scheduler"
// transport setting (comm/transport.hpp) records it: "" for Linux's default, SCHED_OTHER (not recorded);
// "SCHED_RR priority 1", "SCHED_FIFO priority 99", "SCHED_BATCH", "SCHED_IDLE", "SCHED_DEADLINE"; another number:
// "policy 7".
[[nodiscard]] std::string scheduler_setting(int policy, int priority);
// This process's transport settings (comm/transport.hpp): those of its environment, and the calling thread's
// scheduling policy where it is not the default ("?" where it cannot be read; called from the main thread, whose
// policy every thread it starts inherits). mpirun passes every rank the same environment (`--mca NAME VALUE` reaches
// them as OMPI_MCA_NAME), and the ranks it starts on its own host inherit its policy (`chrt -r 1 mpirun ...`, not
// `chrt -R`, which resets it in children), so rank 0's stand for the job in its records; run, validate and advise
// --measure check every rank's own against the calibration.
[[nodiscard]] comm::TransportSettings job_transport();
// The list of `cpus` (ascending CPU numbers, no repeats) as Linux writes it (/sys/devices/system/cpu/online):
// consecutive runs as "a-b". Example: {0, 1, 2, 4, 6, 7} -> "0-2,4,6-7".
[[nodiscard]] std::string cpu_list(const std::vector<int>& cpus);

}  // namespace meshloom::launcher
