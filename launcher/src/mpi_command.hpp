// What the MPI commands (`run`, `bench`, `calibrate`) share: the exit statuses, the text of an error, the
// --timeout option (parsed, validated and converted to the communicator's milliseconds) and the one exchange that
// tells every rank whether any rank failed before the first collective of the run.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>

#include "bench_io.hpp"
#include "meshloom/comm/communicator.hpp"
#include "meshloom/dtype.hpp"
#include "meshloom/error.hpp"

namespace meshloom::launcher {

// Exit statuses: 0 ok, 1 a check found wrong elements, 2 an error (every rank agreed on it), 3 the job was aborted.
inline constexpr int kExitError = 2;
inline constexpr int kAbortCode = 3;

inline constexpr double kDefaultTimeoutS = 60;
inline constexpr double kMaxTimeoutS = 1e6;

// The text an error is reported with: meshloom's errors carry their kind; others are named here.
inline std::string what_of(const std::exception& e) {
  if (const auto* error = dynamic_cast<const Error*>(&e)) return error->text();
  if (dynamic_cast<const comm::TimeoutError*>(&e) != nullptr) return std::string("TimeoutError: ") + e.what();
  return std::string("RuntimeError: ") + e.what();
}

// --timeout TEXT: seconds, finite, in [0, 1000000] (0 = none). ValueError naming the text otherwise.
inline double parse_timeout_seconds(const std::string& text) {
  const std::string option = "--timeout \"" + text + "\": ";
  char* end = nullptr;
  const double t = text.empty() ? 0.0 : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) raise(ErrorKind::ValueError, option + "not a number of seconds");
  if (!std::isfinite(t) || t < 0 || t > kMaxTimeoutS) {
    raise(ErrorKind::ValueError, option + "seconds must be finite and in 0..1000000 (0 = none)");
  }
  return t;
}

// Validated seconds as the communicator's timeout: 0 stays 0 (none); anything else is at least 1 ms, rounded up.
inline std::chrono::milliseconds timeout_ms(double seconds) {
  if (!(seconds > 0)) return std::chrono::milliseconds(0);
  const double ms = std::ceil(std::min(seconds, kMaxTimeoutS) * 1000.0);
  return std::chrono::milliseconds(std::max<std::int64_t>(1, static_cast<std::int64_t>(ms)));
}

// Every rank learns whether any rank failed before the run (local_error: this rank's, empty when none). The
// exchange runs under `timeout` (set on world). Returns nullopt when no rank failed; otherwise the exit status:
// kExitError after reporting (rank 0 reports its own error, or that another rank failed; another rank reports its
// own only when rank 0 had none), or kAbortCode after world.abort when the exchange itself fails. Errors are
// reported through `stream` (stderr and the JSON Lines record), which every rank must have opened before: rank 0
// enters the exchange only after creating the file, so once the exchange completes with no error on rank 0, every
// rank knows that the file exists and calls stream.created(): other ranks may append their records from then on
// (their own error here included) and rank 0's truncation can no longer erase one.
inline std::optional<int> agree_on_errors(comm::Communicator& world, const std::string& local_error,
                                          std::chrono::milliseconds timeout, JsonlStream& stream) {
  const bool lead = world.rank() == 0;
  const std::int64_t mine[2] = {local_error.empty() ? 0 : 1, lead && !local_error.empty() ? 1 : 0};
  std::int64_t any[2] = {0, 0};
  try {
    world.set_timeout(timeout);
    world.all_reduce(comm::ConstBuffer{mine, 2, DType::Int64}, comm::Buffer{any, 2, DType::Int64}, ReduceOp::Max);
  } catch (const std::exception& e) {
    stream.report_error(what_of(e));  // not known to be created: stderr alone on ranks other than 0
    world.abort(kAbortCode);
    return kAbortCode;
  }
  if (any[1] == 0) stream.created();  // rank 0 opened the stream without error before it joined
  if (any[0] == 0) return std::nullopt;
  if (!local_error.empty() && (lead || any[1] == 0)) {
    stream.report_error(local_error);
  } else if (lead) {
    stream.report_error("RuntimeError: another rank failed before the run (see its message)");
  }
  return kExitError;
}

}  // namespace meshloom::launcher
