// What the launcher's end-to-end tests share: running the built meshloom-launch (or mpirun over it) through the
// shell with its output captured (or mpirun over it, where MESHLOOM_MPIEXEC names mpirun), and a per-process
// scratch directory removed when the test program ends. MESHLOOM_LAUNCH_PATH must name the meshloom-launch binary.
#pragma once

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#ifndef MESHLOOM_LAUNCH_PATH
#error "MESHLOOM_LAUNCH_PATH must name the meshloom-launch binary"
#endif

namespace meshloom::test {

struct Launched {
  std::string out, err;
  int status = -1;
};

// `text` in single quotes, for the shell.
inline std::string quoted(const std::string& text) { return "'" + text + "'"; }

// `meshloom-launch <args>` as a shell command line (`args` as the shell reads them).
inline std::string launch_command(const std::string& args) { return quoted(MESHLOOM_LAUNCH_PATH) + " " + args; }

// Runs `command` through the shell; its stdout is captured, and `status` is its exit status (-1 when it did not
// exit normally or could not be started). `err` stays empty.
inline Launched run_shell(const std::string& command) {
  Launched r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs `meshloom-launch <args>` through the shell; stdout is captured (stderr too when the args redirect it).
inline Launched launch(const std::string& args) { return run_shell(launch_command(args)); }

// The whole file (empty when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The lines of `text`, without their newlines.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The directory <system temp>/<prefix><pid>, created on demand and removed with everything in it when this
// object is destroyed (a namespace-scope object: when the test program ends).
class ScratchDir {
public:
  explicit ScratchDir(std::string prefix) : prefix_(std::move(prefix)) {}
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path(), ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  [[nodiscard]] std::filesystem::path path() const {
    return std::filesystem::temp_directory_path() / (prefix_ + std::to_string(::getpid()));
  }

  // Writes `content` to the file `name` in the directory (created when missing); its path.
  std::filesystem::path write(const std::string& name, const std::string& content) const {
    const auto dir = path();
    std::filesystem::create_directories(dir);
    const auto file = dir / name;
    std::ofstream(file, std::ios::binary) << content;
    return file;
  }

private:
  std::string prefix_;
};

// A prefix for mpirun_launch's `env` that starts every rank unbound on one CPU, the first this process may run on
// (taskset; mpirun would otherwise bind each rank to a core of its own); "" when the affinity cannot be read.
inline std::string one_cpu_prefix() {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (::sched_getaffinity(0, sizeof mine, &mine) != 0) return "";
  for (std::size_t cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &mine)) return "OMPI_MCA_hwloc_base_binding_policy=none taskset -c " + std::to_string(cpu);
  }
  return "";
}

// This machine's host name, as the launcher's records and notes give it ("" when it cannot be read).
inline std::string this_host() {
  std::array<char, 256> host{};
  return ::gethostname(host.data(), host.size() - 1) == 0 ? std::string(host.data()) : std::string();
}

// `meshloom-launch <args>` (no shell) with a pipe to its standard input and one from its standard output, for a
// test that talks to it line by line: an answer that comes back while its input is still open was flushed, not held
// for the end. The process is killed and reaped on destruction if still running.
class Conversation {
public:
  explicit Conversation(const std::vector<std::string>& args) {
    int in[2] = {-1, -1};
    int out[2] = {-1, -1};
    const auto close_all = [&] {
      for (const int fd : {in[0], in[1], out[0], out[1]}) {
        if (fd >= 0) ::close(fd);
      }
    };
    // On a failed pipe or fork nothing is left open and say/hear fail at once (the test then fails on its answers).
    if (::pipe(in) != 0 || ::pipe(out) != 0) {
      close_all();
      return;
    }
    ::signal(SIGPIPE, SIG_IGN);  // a write to a launcher that died fails instead of killing the test
    pid_ = ::fork();
    if (pid_ < 0) {
      close_all();
      return;
    }
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      for (const int fd : {in[0], in[1], out[0], out[1]}) ::close(fd);
      std::vector<char*> argv{const_cast<char*>(MESHLOOM_LAUNCH_PATH)};
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(MESHLOOM_LAUNCH_PATH, argv.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    to_ = in[1];
    from_ = out[0];
  }
  ~Conversation() {
    close_input();
    if (from_ >= 0) ::close(from_);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      (void)wait();
    }
  }
  Conversation(const Conversation&) = delete;
  Conversation& operator=(const Conversation&) = delete;

  // Writes `line` and a newline; false when the write fails.
  bool say(const std::string& line) {
    const std::string text = line + "\n";
    return to_ >= 0 && ::write(to_, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  }
  // The next line of output without its newline, or nullopt when none comes within `limit` (or the output ends).
  std::optional<std::string> hear(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      if (const auto end = buffer_.find('\n'); end != std::string::npos) {
        std::string line = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        return line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (from_ < 0 || left.count() <= 0) return std::nullopt;
      pollfd p{from_, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
      if (ready < 0 && errno != EINTR) return std::nullopt;  // not a timeout: nothing more will come
      if (ready <= 0) continue;
      std::array<char, 4096> buf{};
      const ssize_t n = ::read(from_, buf.data(), buf.size());
      if (n <= 0) return std::nullopt;
      buffer_.append(buf.data(), static_cast<std::size_t>(n));
    }
  }
  void close_input() {
    if (to_ >= 0) ::close(to_);
    to_ = -1;
  }
  // Waits for the exit; its status (-1 when it did not exit normally).
  int wait() {
    if (pid_ <= 0) return -1;
    int status = 0;
    const pid_t done = ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return done > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

private:
  pid_t pid_ = -1;
  int to_ = -1;
  int from_ = -1;
  std::string buffer_;
};

// A `<command> --batch` conversation as a script holds one over pipes: `line` sent and its answer read while
// standard input stays open (an answer held back until the input ends was not flushed per line), then "not json" and
// its answer; then the input closed. What came back, in order: the two answers ("<none>" where none came within a
// minute), then "exit N" once the output ended (or "more: <line>" when something else came first).
inline std::vector<std::string> batch_conversation(const std::string& command, const std::string& line) {
  Conversation c({command, "--batch"});
  std::vector<std::string> heard;
  for (const std::string& said : {line, std::string("not json")}) {
    const auto answer = c.say(said) ? c.hear(std::chrono::seconds(60)) : std::nullopt;
    heard.push_back(answer.value_or("<none>"));
  }
  c.close_input();
  const auto more = c.hear(std::chrono::seconds(60));
  heard.push_back(more ? "more: " + *more : "exit " + std::to_string(c.wait()));
  return heard;
}

// Under AddressSanitizer (scripts/check --asan) the launcher runs several times slower: time limits stretch by this.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr int kSanitizerSlowdown = 5;
#else
inline constexpr int kSanitizerSlowdown = 1;
#endif

#ifdef MESHLOOM_MPIEXEC
// `mpirun -np <np> meshloom-launch <args>` (run as root allowed, oversubscribed) under `timeout <limit_s>` (times
// kSanitizerSlowdown), with stdout captured and stderr read back from a file in `scratch`; `env` prefixes the command
// (VAR=value ...).
inline Launched mpirun_launch(const ScratchDir& scratch, int np, const std::string& args, const std::string& env = "",
                              int limit_s = 60) {
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  std::filesystem::create_directories(scratch.path());
  const auto err_path = scratch.path() / "stderr.txt";
  const int limit = limit_s * kSanitizerSlowdown;
  Launched r = run_shell(env + " timeout " + std::to_string(limit) + " " + quoted(MESHLOOM_MPIEXEC) +
                         " --allow-run-as-root --oversubscribe -np " + std::to_string(np) + " " + launch_command(args) +
                         " 2>" + quoted(err_path.string()));
  r.err = slurp(err_path);
  return r;
}
#endif

}  // namespace meshloom::test
