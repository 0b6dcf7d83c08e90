// The skeleton every live command (bench, calibrate, run) runs under mpirun, in one place:
//
//   1. MPI and the world communicator; the JSON Lines stream (rank 0 creates the file, JsonlStream).
//   2. prepare(): everything a rank can decide alone, before any collective (parse, build the mesh, check the
//      settings). It throws on a usage error; since every rank decides the same, one exchange (agree_on_errors)
//      then ends every rank cleanly with exit 2, and no rank is left waiting in a collective.
//   3. The backend (open_backend: nccl finds a GPU on every rank and bootstraps its world through MPI), agreed the
//      same way.
//   4. run(): the collectives. From here a failure on one rank cannot be told to the others: it is reported (stderr
//      and an error record) and the job is aborted (exit 3).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench_io.hpp"
#include "file_args.hpp"
#include "live_backend.hpp"
#include "meshloom/backends/mpi_communicator.hpp"

namespace meshloom::launcher {

struct LiveCommand {
  std::optional<std::filesystem::path> jsonl;  // --jsonl
  std::string backend = "mpi";                 // --backend
  // The files the command reads (--design, --calibration, --suite) and writes atomically (--out): checked before
  // anything is opened (file_args.hpp), with --jsonl among the outputs.
  std::vector<FileArg> inputs, outputs;
  // Step 2. Returns the per-operation timeout in seconds (the command's --timeout); throws on a usage error.
  // `ranks_on_host`: this job's ranks on this rank's host, itself included, as MPI's shared-memory split groups
  // them (learned collectively before prepare, so that any launcher's job says it, not only mpirun's environment).
  std::function<double(mpi::MpiCommunicator& world, int ranks_on_host)> prepare;
  // Step 4. Returns the exit status (0, 1 for wrong elements or an unverified plan, 2 for a reported error).
  std::function<int(mpi::MpiCommunicator& world, LiveBackend& backend, JsonlStream& records)> run;
};

// Runs `command` on this rank and returns its exit status.
[[nodiscard]] int run_live_command(const LiveCommand& command);

// Every rank's host, indexed by world rank: the job's own view of which ranks share a machine (timing.hpp's
// host_labels over each rank's host name and its node, MPI's shared-memory split), never a number typed by hand.
// Collective over `world`.
[[nodiscard]] std::vector<std::string> job_hosts(mpi::MpiCommunicator& world);

// Every rank's CPU binding, indexed by world rank (bench_io.hpp's cpu_binding; "?" for a list longer than 4095
// characters), and whether every rank was bound (ranks_bound over `hosts`, job_hosts'). Collective over `world`.
struct JobCpus {
  std::vector<std::string> cpus;
  bool bound = false;
};
[[nodiscard]] JobCpus job_cpus(mpi::MpiCommunicator& world, const std::vector<std::string>& hosts);

// The header line of run, validate and advise --measure that says the job's ranks take turns on their CPUs
// (bench_io.hpp's crowding_note over `cpus` and `hosts`, job_cpus' and job_hosts', under this process's policy):
// "  note: ...\n", or "" when there is nothing to say.
[[nodiscard]] std::string crowding_line(const std::vector<std::string>& cpus, const std::vector<std::string>& hosts);

}  // namespace meshloom::launcher
