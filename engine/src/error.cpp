#include "meshloom/error.hpp"

namespace meshloom {

std::string_view to_string(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::KeyError: return "KeyError";
    case ErrorKind::ValueError: return "ValueError";
    case ErrorKind::RuntimeError: return "RuntimeError";
    case ErrorKind::NotImplementedError: return "NotImplementedError";
    case ErrorKind::IndexError: return "IndexError";
    case ErrorKind::TypeError: return "TypeError";
  }
  return "RuntimeError";
}

namespace {

std::string with_kind(ErrorKind kind, const std::string& message) {
  return std::string(to_string(kind)) + ": " + message;
}

}  // namespace

// what() keeps its copy as a C string, which a NUL in the message ends: text_ is the same whole.
Error::Error(ErrorKind kind, const std::string& message)
    : std::runtime_error(with_kind(kind, message)), kind_(kind), message_(message), text_(with_kind(kind, message)) {}

void raise(ErrorKind kind, const std::string& message) { throw Error(kind, message); }

}  // namespace meshloom
