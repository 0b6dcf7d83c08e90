// Helpers shared by the preset tests of tests/engine/presets. Header-only.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "meshloom/error.hpp"

namespace meshloom::testing {

// Runs f, which must throw a meshloom::Error of `kind` whose message is exactly `message`.
inline void expect_error(const std::function<void()>& f, ErrorKind kind, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "no error; expected: " << message;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_EQ(e.message(), message);
  }
}

}  // namespace meshloom::testing
