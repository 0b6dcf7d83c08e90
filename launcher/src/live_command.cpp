#include "live_command.hpp"

#include <exception>
#include <memory>

#include "mpi_command.hpp"
#include "test_fault.hpp"

namespace meshloom::launcher {

int run_live_command(const LiveCommand& command) {
  mpi::MpiSession session;
  auto world = mpi::MpiCommunicator::world();
  const int rank = world->rank();
  // Rank 0 creates the file before the first exchange; other ranks append to it only after (JsonlStream).
  JsonlStream records(rank, command.jsonl);

  std::optional<double> timeout_s;
  std::string local_error;
  try {
    if (rank == 0 && command.jsonl) test_fault_delay_jsonl(rank);
    records.open();
    timeout_s = command.prepare(*world);
  } catch (const std::exception& e) {
    local_error = what_of(e);
  }
  // Every rank learns whether any rank failed before the first collective; the command's timeout once every setting
  // is valid, the default otherwise.
  const auto timeout = timeout_ms(timeout_s.value_or(kDefaultTimeoutS));
  if (const auto failed = agree_on_errors(*world, local_error, timeout, records)) return *failed;

  std::unique_ptr<LiveBackend> backend;
  std::string backend_error;
  try {
    backend = open_backend(command.backend, *world, timeout);
  } catch (const std::exception& e) {
    backend_error = what_of(e);
  }
  if (const auto failed = agree_on_errors(*world, backend_error, timeout, records)) return *failed;

  try {
    return command.run(*world, *backend, records);
  } catch (const std::exception& e) {
    records.report_error(what_of(e));
    world->abort(kAbortCode);
    return kAbortCode;
  }
}

}  // namespace meshloom::launcher
