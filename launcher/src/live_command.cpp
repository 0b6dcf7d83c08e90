#include "live_command.hpp"

#include <malloc.h>

#include <exception>
#include <iostream>
#include <memory>

#include "mpi_command.hpp"
#include "test_fault.hpp"
#include "timing.hpp"

namespace meshloom::launcher {

namespace {

// Buffers as a framework's caching allocator keeps them: run and validate allocate every step's buffers afresh,
// and glibc maps each large one with mmap and unmaps it when freed, so a collective would land on freshly mapped
// pages and time the kernel (page tables, TLB shootdowns) rather than the transfer: a 4 MiB-per-rank all_to_all on
// 2 ranks here measured 1942 us on fresh mappings and 768 us on reused memory. Every allocation comes from the heap
// (no mmap) and freed memory stays with the process (no trim), so buffers are reused as PyTorch's allocator reuses
// them. Set before MPI allocates anything.
void keep_freed_memory() {
  (void)mallopt(M_MMAP_MAX, 0);
  (void)mallopt(M_TRIM_THRESHOLD, -1);
}

// With --jsonl -, standard output carries the records alone (JsonlSink writes them to its own descriptor): every
// command's human output (its table, its verdict) goes to standard error for the command's whole run.
class HumanOutputToStderr {
public:
  explicit HumanOutputToStderr(bool active) : saved_(active ? std::cout.rdbuf(std::cerr.rdbuf()) : nullptr) {}
  ~HumanOutputToStderr() {
    if (saved_ == nullptr) return;
    std::cout.rdbuf(saved_);
    std::cout.clear();  // a failed write meanwhile was standard error's: main judges standard output's own
  }
  HumanOutputToStderr(const HumanOutputToStderr&) = delete;
  HumanOutputToStderr& operator=(const HumanOutputToStderr&) = delete;

private:
  std::streambuf* saved_;
};

}  // namespace

int run_live_command(const LiveCommand& command) {
  keep_freed_memory();
  const HumanOutputToStderr human(command.jsonl && is_stdout(*command.jsonl));
  mpi::MpiSession session;
  auto world = mpi::MpiCommunicator::world();
  const int rank = world->rank();
  // The files first: a --jsonl or --out that is one of the inputs is refused before the stream creates it (which
  // would empty the input), and an --out that cannot be written before the collectives measure anything.
  std::string files_error;
  try {
    std::vector<FileArg> outputs = command.outputs;
    if (command.jsonl) {
      check_names_a_file({"--jsonl", *command.jsonl});
      outputs.insert(outputs.begin(), FileArg{"--jsonl", *command.jsonl});
    }
    check_files_apart(command.inputs, outputs);
    for (const FileArg& out : command.outputs) check_output_target(out);
  } catch (const std::exception& e) {
    files_error = what_of(e);
  }
  // Rank 0 creates the file before the first exchange; other ranks append to it only after (JsonlStream).
  JsonlStream records(rank, files_error.empty() ? command.jsonl : std::nullopt);

  // Collective, so every rank takes it before prepare, which may end early on one rank; a failure is agreed as any.
  int ranks_on_host = 1;
  std::string local_error = files_error;
  try {
    ranks_on_host = world->node_place().size;
  } catch (const std::exception& e) {
    if (local_error.empty()) local_error = what_of(e);
  }
  std::optional<double> timeout_s;
  if (local_error.empty()) {
    try {
      if (rank == 0 && command.jsonl) test_fault_delay_jsonl(rank);
      records.open();
      timeout_s = command.prepare(*world, ranks_on_host);
    } catch (const std::exception& e) {
      local_error = what_of(e);
    }
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

std::vector<std::string> job_hosts(mpi::MpiCommunicator& world) {
  const int node = world.node_place().first;
  return gather_hosts(world, host_name(), node);
}

JobCpus job_cpus(mpi::MpiCommunicator& world, const std::vector<std::string>& hosts) {
  constexpr std::size_t kWidth = 4096;
  std::string mine = cpu_binding();
  if (mine.size() >= kWidth) mine = "?";  // cut, it could never match: unknown
  JobCpus job;
  job.cpus = gather_strings(world, mine, kWidth);
  job.bound = ranks_bound(job.cpus, hosts);
  return job;
}

std::string crowding_line(const std::vector<std::string>& cpus, const std::vector<std::string>& hosts) {
  const std::string note = crowding_note(crowded_hosts(cpus, hosts), job_transport());
  return note.empty() ? note : "  note: " + note + "\n";
}

}  // namespace meshloom::launcher
