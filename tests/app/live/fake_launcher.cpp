// meshloom_fake_launcher: a stand-in for `mpirun ... meshloom-launch bench --jsonl -` in the app's tests. It replays
// a recorded JSON Lines file to standard output, one line at a time, each flushed, and misbehaves on request:
//
//   --replay FILE        the records to replay (required)
//   --delay-ms N         sleep N ms before each line (default 0)
//   --garbage-every K    after every K-th line, print a line that is not a record
//   --exit-after K       after K lines, exit with --exit-code (default 1) without the rest (K = the number of lines:
//                        after all of them)
//   --crash-after K      after K lines, abort() (a crash: SIGABRT)
//   --hang-after K       after K lines, sleep until killed
//   --ignore-term        ignore SIGTERM (so only SIGKILL ends it)
//   --cut-last           print the last line without its newline
//   --chatter            print a line that is not JSON before the records (as ssh or srun may)
//   --split-stderr       write standard error lines in pieces, flushed apart (a line, a UTF-8 character split between
//                        two writes), and end it with a line without its newline
// Any other argument is ignored (the app appends the launcher's own). It says on standard error what it does, as the
// launcher prints its table there, and its process id ("# fake launcher: pid N").
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  std::string replay;
  long delay_ms = 0;
  long garbage_every = 0;
  long exit_after = -1;
  int exit_code = 1;
  long crash_after = -1;
  long hang_after = -1;
  bool cut_last = false;
  bool chatter = false;
  bool split_stderr = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--replay") {
      replay = next();
    } else if (a == "--delay-ms") {
      delay_ms = std::stol(next());
    } else if (a == "--garbage-every") {
      garbage_every = std::stol(next());
    } else if (a == "--exit-after") {
      exit_after = std::stol(next());
    } else if (a == "--exit-code") {
      exit_code = std::stoi(next());
    } else if (a == "--crash-after") {
      crash_after = std::stol(next());
    } else if (a == "--hang-after") {
      hang_after = std::stol(next());
    } else if (a == "--ignore-term") {
      std::signal(SIGTERM, SIG_IGN);
    } else if (a == "--cut-last") {
      cut_last = true;
    } else if (a == "--chatter") {
      chatter = true;
    } else if (a == "--split-stderr") {
      split_stderr = true;
    }
  }
  std::ifstream in(replay);
  if (!in) {
    std::cerr << "fake launcher: cannot read " << replay << "\n";
    return 2;
  }
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::cerr << "# fake launcher: replaying " << lines.size() << " records\n"
            << "# fake launcher: pid " << ::getpid() << "\n"
            << std::flush;
  if (chatter) std::fputs("Warning: Permanently added 'node1' to the list of known hosts.\n", stdout);
  if (split_stderr) {
    const auto piece = [](const char* text) {
      std::fputs(text, stderr);
      std::fflush(stderr);
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
    };
    piece("# fake launcher: half a li");
    piece("ne\n# fake launcher: caf\xc3");
    piece("\xa9\n");
  }
  for (std::size_t k = 0; k < lines.size(); ++k) {
    const auto n = static_cast<long>(k);
    if (n == exit_after) {
      std::cerr << "fake launcher: exiting with status " << exit_code << " after " << n << " lines\n" << std::flush;
      std::fflush(stdout);
      std::_Exit(exit_code);
    }
    if (n == crash_after) {
      std::fflush(stdout);
      std::abort();
    }
    if (n == hang_after) {
      std::cerr << "fake launcher: hanging after " << n << " lines\n" << std::flush;
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    std::fputs(lines[k].c_str(), stdout);
    if (!(cut_last && k + 1 == lines.size())) std::fputc('\n', stdout);
    if (garbage_every > 0 && (n + 1) % garbage_every == 0) std::fputs("{\"type\": \"result\", \"axis\": oops\n", stdout);
    std::fflush(stdout);
  }
  if (split_stderr) {
    std::fputs("# fake launcher: the last line, without its newline", stderr);
    std::fflush(stderr);
  }
  if (exit_after == static_cast<long>(lines.size())) {
    std::cerr << "fake launcher: exiting with status " << exit_code << " after " << lines.size() << " lines\n"
              << std::flush;
    return exit_code;
  }
  return 0;
}
