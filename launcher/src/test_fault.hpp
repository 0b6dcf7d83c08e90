// A fault injected by the launcher's own tests, so that they can exercise what a real cluster does to a job: a rank
// that dies (kill -9, a node lost) or a rank that stops making progress (a hung GPU, a stuck network).
//
//   MESHLOOM_TEST_FAULT=exit:RANK:AT   world rank RANK ends at once (std::_Exit(3)) before unit AT
//   MESHLOOM_TEST_FAULT=hang:RANK:AT   world rank RANK sleeps for good before unit AT
//   MESHLOOM_TEST_FAULT=setup:RANK:MS  world rank RANK fails before the run (a RuntimeError, as a bad setting on that
//                                      rank alone would), and world rank 0 waits MS milliseconds before it creates
//                                      the --jsonl file: the order in which rank 0's truncation would erase RANK's
//                                      error record if RANK appended it too early (bench_io.hpp, JsonlStream)
//
// A unit is a step of the plan for `run` (0-based) and a result row of the sweep for `bench` and `calibrate`.
// Unset, the hook costs one comparison per unit. A malformed value is a ValueError naming it, like any option.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "meshloom/error.hpp"

namespace meshloom::launcher {

struct TestFault {
  enum class Kind { Exit, Hang, Setup };
  Kind kind = Kind::Exit;
  int rank = 0;
  std::int64_t at = 0;  // Setup: rank 0's wait in milliseconds

  // Exit and Hang: acts when this is world rank `rank` before unit `unit`.
  void maybe_fire(int world_rank, std::int64_t unit) const {
    if (kind == Kind::Setup || world_rank != rank || unit != at) return;
    if (kind == Kind::Exit) std::_Exit(3);
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }

  // Setup: on world rank 0, waits before the --jsonl file is created.
  void maybe_delay_jsonl(int world_rank) const {
    if (kind == Kind::Setup && world_rank == 0) std::this_thread::sleep_for(std::chrono::milliseconds(at));
  }
  // Setup: fails on world rank `rank`, before the run.
  void maybe_fail_setup(int world_rank) const {
    if (kind != Kind::Setup || world_rank != rank) return;
    raise(ErrorKind::RuntimeError,
          "MESHLOOM_TEST_FAULT: world rank " + std::to_string(rank) + " failed before the run (injected)");
  }
};

// The fault of MESHLOOM_TEST_FAULT, nullopt when it is unset or empty.
inline std::optional<TestFault> test_fault_from_env() {
  const char* text = std::getenv("MESHLOOM_TEST_FAULT");
  if (text == nullptr || *text == '\0') return std::nullopt;
  const std::string s = text;
  const auto bad = [&] {
    raise(ErrorKind::ValueError,
          "MESHLOOM_TEST_FAULT=\"" + s + "\": expected exit:RANK:AT, hang:RANK:AT or setup:RANK:MS");
  };
  const auto first = s.find(':');
  const auto second = first == std::string::npos ? first : s.find(':', first + 1);
  if (second == std::string::npos) bad();
  TestFault f;
  const std::string kind = s.substr(0, first);
  if (kind == "exit") {
    f.kind = TestFault::Kind::Exit;
  } else if (kind == "hang") {
    f.kind = TestFault::Kind::Hang;
  } else if (kind == "setup") {
    f.kind = TestFault::Kind::Setup;
  } else {
    bad();
  }
  const auto number = [&](const std::string& part) {
    char* end = nullptr;
    const long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || end != part.c_str() + part.size() || v < 0 || v > 1'000'000'000) bad();
    return static_cast<std::int64_t>(v);
  };
  f.rank = static_cast<int>(number(s.substr(first + 1, second - first - 1)));
  f.at = number(s.substr(second + 1));
  return f;
}

// Before rank 0 creates the --jsonl file: the wait of a Setup fault. A malformed value waits for nothing here; the
// command reports it when it reads the fault with its settings.
inline void test_fault_delay_jsonl(int world_rank) noexcept {
  try {
    if (const auto f = test_fault_from_env()) f->maybe_delay_jsonl(world_rank);
  } catch (...) {
  }
}

}  // namespace meshloom::launcher
