// Overflow-checked 64-bit arithmetic for the engine's index computations. A result that does not fit raises
// ValueError naming the operands and what was being computed, instead of wrapping (undefined behaviour).
#pragma once

#include <cstdint>
#include <string>

#include "meshloom/error.hpp"

namespace meshloom::detail {

inline std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    raise(ErrorKind::ValueError, std::string(what) + ": " + std::to_string(a) + " * " + std::to_string(b) +
                                     " overflows 64-bit integers");
  }
  return r;
}

inline std::int64_t checked_add(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) {
    raise(ErrorKind::ValueError, std::string(what) + ": " + std::to_string(a) + " + " + std::to_string(b) +
                                     " overflows 64-bit integers");
  }
  return r;
}

}  // namespace meshloom::detail
