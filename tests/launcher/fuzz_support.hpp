// What the launcher's batch fuzz tests share: a seeded random source with the line corruptions and random bytes
// they feed, and the check that an answer is one line of JSON, an object with a boolean "ok", whose error (when not
// ok) reads "<Kind>: <message>"; and the loop that feeds mixed lines (valid, corrupted, random bytes) to a batch
// interface.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>

namespace meshloom::test {

class FuzzRandom {
public:
  explicit FuzzRandom(std::uint32_t seed) : rng_(seed) {}

  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool coin(int percent) { return pick(100) < percent; }

  // 1 to 4 random edits: a byte replaced, bytes erased, a JSON punctuation character inserted, the text cut, a
  // piece repeated.
  std::string corrupt(std::string s) {
    const int edits = 1 + pick(4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const auto at = static_cast<std::size_t>(pick(static_cast<int>(s.size())));
      switch (pick(5)) {
        case 0: s[at] = static_cast<char>(pick(256)); break;
        case 1: s.erase(at, 1 + static_cast<std::size_t>(pick(8))); break;
        case 2: s.insert(at, 1, "[]{}\",:0-9e\\"[pick(12)]); break;
        case 3: s.resize(at); break;
        default: s.insert(at, s.substr(at, static_cast<std::size_t>(pick(16)))); break;
      }
    }
    return s;
  }

  // Up to 63 random bytes.
  std::string bytes() {
    std::string s;
    const int n = pick(64);
    for (int i = 0; i < n; ++i) s.push_back(static_cast<char>(pick(256)));
    return s;
  }

  std::mt19937& rng() { return rng_; }

private:
  std::mt19937 rng_;
};

// An error object's "error": a string "<Kind>: <message>" with one of the engine's kinds.
inline void check_error_text(const nlohmann::json& e, const std::string& answer) {
  ASSERT_TRUE(e.contains("error") && e["error"].is_string()) << answer;
  const auto text = e["error"].get<std::string>();
  const auto colon = text.find(": ");
  ASSERT_NE(colon, std::string::npos) << text;
  const auto kind = text.substr(0, colon);
  EXPECT_TRUE(kind == "ValueError" || kind == "KeyError" || kind == "RuntimeError" || kind == "IndexError" ||
              kind == "NotImplementedError" || kind == "TypeError")
      << text;
}

// One answer: one line, a JSON object with a boolean "ok"; the parsed answer in `j`.
inline void check_answer_line(const std::string& line, const std::string& answer, nlohmann::json& j) {
  ASSERT_EQ(answer.find('\n'), std::string::npos) << line;
  ASSERT_NO_THROW(j = nlohmann::json::parse(answer)) << line << "\n" << answer;
  ASSERT_TRUE(j.is_object()) << answer;
  ASSERT_TRUE(j.contains("ok") && j["ok"].is_boolean()) << answer;
  if (!j["ok"].get<bool>()) check_error_text(j, answer);
}

// What feed_mixed_lines saw: the lines answered ok. (No wall-clock bound: a line that hangs is ctest's timeout to
// catch, and speed is the benchmarks' to measure, not a test's on a shared machine.)
struct MixedLinesRun {
  int ok_lines = 0;
};

// Feeds `count` lines to `answer_line` (a line -> its answer), of each four two `valid()`, one `valid()` corrupted
// and one random bytes, in that order. Each answer goes to `check(line, answer)`; the answer of a line answered
// ok then goes, parsed, to `on_ok`. Stops at the first fatal failure (the caller checks HasFatalFailure()).
template <class Valid, class Answer, class Check, class OnOk>
MixedLinesRun feed_mixed_lines(FuzzRandom& random, int count, Valid&& valid, Answer&& answer_line, Check&& check,
                               OnOk&& on_ok) {
  MixedLinesRun run;
  for (int i = 0; i < count; ++i) {
    std::string line;
    switch (i % 4) {
      case 0:
      case 1: line = valid(); break;
      case 2: line = random.corrupt(valid()); break;
      default: line = random.bytes(); break;
    }
    const std::string answer = answer_line(line);
    check(line, answer);
    if (::testing::Test::HasFatalFailure()) break;
    const nlohmann::json j = nlohmann::json::parse(answer);
    if (j["ok"].get<bool>()) {
      ++run.ok_lines;
      on_ok(j);
    }
  }
  return run;
}

}  // namespace meshloom::test
