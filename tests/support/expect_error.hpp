// The tests' error checkers: code that must throw a meshloom::Error of a given kind whose message holds given
// phrases (expect_error), and the whole text of what code raised, to compare exactly (error_of). Header-only; include
// as "support/expect_error.hpp".
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "meshloom/error.hpp"

namespace meshloom::testing {

// Runs f, which must throw a meshloom::Error of `kind` whose message holds every phrase.
template <class F>
void expect_error(F&& f, ErrorKind kind, std::initializer_list<std::string> phrases) {
  try {
    f();
    ADD_FAILURE() << "no error was raised";
  } catch (const Error& e) {
    EXPECT_EQ(meshloom::to_string(e.kind()), meshloom::to_string(kind)) << e.what();
    for (const auto& p : phrases) {
      EXPECT_NE(e.message().find(p), std::string::npos) << "'" << p << "' is not in: " << e.message();
    }
  }
}

// What f raised: the meshloom::Error's what() ("ValueError: ..."), or "no error" when it returned.
template <class F>
[[nodiscard]] std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace meshloom::testing
