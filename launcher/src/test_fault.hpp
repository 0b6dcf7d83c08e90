// A fault injected by the launcher's own tests, so that they can exercise what a real cluster does to a job: a rank
// that dies (kill -9, a node lost) or a rank that stops making progress (a hung GPU, a stuck network).
//
//   MESHLOOM_TEST_FAULT=exit:RANK:AT   world rank RANK ends at once (std::_Exit(3)) before unit AT
//   MESHLOOM_TEST_FAULT=hang:RANK:AT   world rank RANK sleeps for good before unit AT
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
  enum class Kind { Exit, Hang };
  Kind kind = Kind::Exit;
  int rank = 0;
  std::int64_t at = 0;

  // Acts when this is world rank `rank` before unit `unit`.
  void maybe_fire(int world_rank, std::int64_t unit) const {
    if (world_rank != rank || unit != at) return;
    if (kind == Kind::Exit) std::_Exit(3);
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }
};

// The fault of MESHLOOM_TEST_FAULT, nullopt when it is unset or empty.
inline std::optional<TestFault> test_fault_from_env() {
  const char* text = std::getenv("MESHLOOM_TEST_FAULT");
  if (text == nullptr || *text == '\0') return std::nullopt;
  const std::string s = text;
  const auto bad = [&] {
    raise(ErrorKind::ValueError, "MESHLOOM_TEST_FAULT=\"" + s + "\": expected exit:RANK:AT or hang:RANK:AT");
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

}  // namespace meshloom::launcher
