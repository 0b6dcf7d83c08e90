#include "bench_io.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "bench_format.hpp"
#include "meshloom/error.hpp"
#include "meshloom/plan/cost_model.hpp"

namespace meshloom::launcher {

namespace {

[[noreturn]] void io_fail(const std::string& what, const std::filesystem::path& path, int err) {
  raise(ErrorKind::RuntimeError, what + " \"" + path.string() + "\": " + std::strerror(err));
}

// Writes all of `data`; false (errno set) on failure.
bool write_all(int fd, const char* data, std::size_t size) noexcept {
  std::size_t written = 0;
  while (written < size) {
    const ssize_t n = ::write(fd, data + written, size - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    written += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

JsonlSink::JsonlSink(const std::filesystem::path& path) : path_(path) {
  if (is_stdout(path)) {
    fd_ = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
    if (fd_ < 0) io_fail("cannot write the JSON Lines records to standard output", path, errno);
    return;
  }
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) io_fail("cannot open the JSON Lines file", path, errno);
}

JsonlSink::~JsonlSink() {
  if (fd_ >= 0) ::close(fd_);
}

JsonlSink::JsonlSink(JsonlSink&& other) noexcept : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

JsonlSink& JsonlSink::operator=(JsonlSink&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

void JsonlSink::write(const std::string& record) {
  if (fd_ < 0) return;
  const std::string line = record + "\n";
  if (!write_all(fd_, line.data(), line.size())) io_fail("cannot write the JSON Lines file", path_, errno);
  if (::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS) io_fail("cannot flush the JSON Lines file", path_, errno);
}

bool JsonlSink::append(const std::filesystem::path& path, const std::string& record) noexcept {
  if (is_stdout(path)) {  // this rank's own standard output: the launcher (mpirun) forwards it
    try {
      const std::string line = record + "\n";
      return write_all(STDOUT_FILENO, line.data(), line.size());
    } catch (...) {
      return false;
    }
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  std::string line;
  try {
    line = record + "\n";
  } catch (...) {
    ::close(fd);
    return false;
  }
  bool ok = write_all(fd, line.data(), line.size());
  ok = ::fsync(fd) == 0 && ok;
  ok = ::close(fd) == 0 && ok;
  return ok;
}

void report_rank_error(int rank, const std::string& what, JsonlSink& sink,
                       const std::optional<std::filesystem::path>& jsonl) noexcept {
  try {
    // One write (std::cerr is unbuffered: one write per <<), so that ranks' lines do not interleave mid-line.
    std::cerr << ("meshloom-launch: rank " + std::to_string(rank) + ": error: " + what + "\n") << std::flush;
    const std::string record = error_record(rank, what);
    if (sink.is_open()) {
      sink.write(record);
    } else if (jsonl) {
      (void)JsonlSink::append(*jsonl, record);
    }
  } catch (const std::exception&) {
    // The stream cannot take the record (a full disk, say): stderr already has the error.
  }
}

void JsonlStream::open() {
  if (rank_ != 0 || !path_) return;
  if (created_) {
    raise(ErrorKind::RuntimeError, "the JSON Lines stream \"" + path_->string() +
                                       "\" is opened after other ranks may have appended to it");
  }
  sink_ = JsonlSink(*path_);
}

void JsonlStream::report_error(const std::string& what) noexcept {
  report_rank_error(rank_, what, sink_, appends() ? path_ : std::nullopt);
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    if (j > i) {
      out += std::to_string(cpus[i]) + "-" + std::to_string(cpus[j]);
      i = j + 1;
    } else {
      out += std::to_string(cpus[i]);
      ++i;
    }
  }
  return out;
}

std::string cpu_binding() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return "?";
  std::vector<int> cpus;
  for (std::size_t c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(static_cast<int>(c));
  }
  return cpu_list(cpus);
}

std::string scheduler_setting(int policy, int priority) {
  constexpr int kSchedDeadline = 6;  // Linux's SCHED_DEADLINE (linux/sched.h; not every libc names it)
  switch (policy & ~SCHED_RESET_ON_FORK) {
    case SCHED_OTHER:
      return "";
    case SCHED_FIFO:
      return "SCHED_FIFO priority " + std::to_string(priority);
    case SCHED_RR:
      return "SCHED_RR priority " + std::to_string(priority);
    case SCHED_BATCH:
      return "SCHED_BATCH";
    case SCHED_IDLE:
      return "SCHED_IDLE";
    case kSchedDeadline:
      return "SCHED_DEADLINE";
    default:
      return "policy " + std::to_string(policy & ~SCHED_RESET_ON_FORK);
  }
}

comm::TransportSettings job_transport() {
  std::vector<std::string> environment;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) environment.emplace_back(*e);
  comm::TransportSettings settings = comm::transport_settings(environment);
  const int policy = ::sched_getscheduler(0);
  sched_param param{};
  if (policy < 0 || ::sched_getparam(0, &param) != 0) {
    settings[std::string(comm::kSchedulerSetting)] = "?";
  } else if (std::string scheduler = scheduler_setting(policy, param.sched_priority); !scheduler.empty()) {
    settings[std::string(comm::kSchedulerSetting)] = std::move(scheduler);
  }
  return settings;
}

bool ranks_bound(const std::vector<std::string>& cpus, const std::vector<std::string>& hosts) {
  if (cpus.empty() || cpus.size() != hosts.size()) return false;
  std::vector<std::vector<int>> sets;
  std::map<std::string, std::set<int>> by_host;
  for (std::size_t r = 0; r < cpus.size(); ++r) {
    std::optional<std::vector<int>> set = parse_cpu_list(cpus[r]);
    if (!set) return false;
    by_host[hosts[r]].insert(set->begin(), set->end());
    sets.push_back(std::move(*set));
  }
  for (std::size_t r = 0; r < sets.size(); ++r) {
    if (sets[r].size() >= by_host[hosts[r]].size()) return false;
  }
  return true;
}

std::vector<CrowdedHost> crowded_hosts(const std::vector<std::string>& cpus, const std::vector<std::string>& hosts) {
  if (cpus.size() != hosts.size()) return {};
  struct Host {
    std::int64_t ranks = 0;
    std::set<int> cpus;
    bool known = true;
  };
  std::vector<std::string> order;  // hosts by their first rank
  std::map<std::string, Host> by_host;
  for (std::size_t r = 0; r < cpus.size(); ++r) {
    auto [it, fresh] = by_host.try_emplace(hosts[r]);
    if (fresh) order.push_back(hosts[r]);
    Host& host = it->second;
    ++host.ranks;
    if (std::optional<std::vector<int>> set = parse_cpu_list(cpus[r])) {
      host.cpus.insert(set->begin(), set->end());
    } else {
      host.known = false;
    }
  }
  std::vector<CrowdedHost> crowded;
  for (const std::string& name : order) {
    const Host& host = by_host.at(name);
    const auto count = static_cast<std::int64_t>(host.cpus.size());
    if (host.known && host.ranks > count) crowded.push_back({name, host.ranks, count});
  }
  return crowded;
}

std::string crowding_note(const std::vector<CrowdedHost>& crowded, const comm::TransportSettings& transport) {
  if (crowded.empty()) return "";
  const auto policy = transport.find(std::string(comm::kSchedulerSetting));
  std::string scheduler = "Linux's default scheduler";
  if (policy != transport.end()) {
    if (policy->second != "SCHED_BATCH" && policy->second != "SCHED_IDLE") return "";
    scheduler = policy->second;
  }
  const auto cpus_text = [](std::int64_t n) { return std::to_string(n) + (n == 1 ? " CPU" : " CPUs"); };
  std::string where;
  if (crowded.size() == 1) {
    where = std::to_string(crowded.front().ranks) + " ranks share " + cpus_text(crowded.front().cpus) + " on host " +
            crowded.front().host;
  } else {
    constexpr std::size_t kNamed = 3;
    where = "ranks outnumber their CPUs on " + std::to_string(crowded.size()) + " hosts (";
    for (std::size_t i = 0; i < crowded.size() && i < kNamed; ++i) {
      where += (i > 0 ? ", " : "") + crowded[i].host + ": " + std::to_string(crowded[i].ranks) + " ranks on " +
               cpus_text(crowded[i].cpus);
    }
    if (crowded.size() > kNamed) where += ", and " + std::to_string(crowded.size() - kNamed) + " more";
    where += ")";
  }
  return where + " under " + scheduler +
         ", so a collective's time there depends on what ran before it (docs/05-launcher.md, \"More ranks than "
         "cores\"); for steadier times start every command alike as chrt -r 1 mpirun --mca mpi_yield_when_idle 1 ...";
}

}  // namespace meshloom::launcher
