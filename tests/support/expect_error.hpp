// The engine tests' error checker: runs code that must throw a meshloom::Error of a given kind whose message
// holds given phrases. Header-only; include as "support/expect_error.hpp".
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

}  // namespace meshloom::testing
