// Errors raised by the engine.
//
// Every failure carries a kind word that follows PyTorch's exception kinds where PyTorch raises the same
// error (KeyError, ValueError, RuntimeError, NotImplementedError, IndexError, TypeError), and a message
// that names the offending value. what() is "<Kind>: <message>", the form the launcher's batch interface
// reports verbatim.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace meshloom {

enum class ErrorKind { KeyError, ValueError, RuntimeError, NotImplementedError, IndexError, TypeError };

[[nodiscard]] std::string_view to_string(ErrorKind kind) noexcept;

class Error : public std::runtime_error {
public:
  Error(ErrorKind kind, const std::string& message);

  [[nodiscard]] ErrorKind kind() const noexcept { return kind_; }
  // The message without the kind prefix.
  [[nodiscard]] const std::string& message() const noexcept { return message_; }
  // "<Kind>: <message>", whole: what() is a C string, which ends at a NUL the message may hold (a name read
  // from JSON's \u0000).
  [[nodiscard]] const std::string& text() const noexcept { return text_; }

private:
  ErrorKind kind_;
  std::string message_;
  std::string text_;
};

[[noreturn]] void raise(ErrorKind kind, const std::string& message);

}  // namespace meshloom
