// The Open MPI backend of comm::Communicator: collectives on host buffers over an MPI communicator.
//
//   meshloom::mpi::MpiSession session(&argc, &argv);          // MPI_Init_thread ... MPI_Finalize
//   auto world = meshloom::mpi::MpiCommunicator::world();      // MPI_COMM_WORLD, named "world"
//   world->set_timeout(std::chrono::seconds(30));
//   auto tp = world->split(color, key, "tp");                  // MPI_Comm_split
//
// Datatypes: float32, float64, int32, int64, int8 and uint8 map to MPI's own types and support every
// ReduceOp. float16, bfloat16 and the float8 types have no MPI reduction: all_reduce and reduce_scatter of
// them throw ValueError naming the dtype; all_gather, all_to_all and broadcast move them as bytes.
//
// ReduceOp::Avg is a sum followed by a division by size() on every rank. For the integer types the division
// is C++ integer division (truncates toward zero: -7 / 2 == -3), so avg of ints is sum / size rounded toward
// zero; for float types it is an ordinary float division.
//
// Buffers: in and out must have the same dtype and the counts of communicator.hpp (ValueError naming the
// counts otherwise). in.data == out.data is in-place (for all_gather, in may also be rank()'s block of out).
// Counts are limited to INT_MAX elements (MPI's int counts).
//
// Timeouts: every collective is the non-blocking MPI_I* call completed by an MPI_Test polling loop that never
// sleeps (it yields the core between polls, so oversubscribed ranks progress; a sleep would quantize every timed
// collective by the scheduler's timer slack). Collectives complete on return: Completion::Queued is Blocking here
// and the stopwatch is the wall clock (communicator.hpp). With a non-zero
// timeout() a collective that has not completed in time throws comm::TimeoutError naming the world rank, the
// communicator, the collective and its size in bytes; the request stays outstanding (MPI cannot cancel a
// collective), so the caller must then call abort(). split() with a timeout first waits (bounded) on an
// MPI_Ibarrier so that a missing peer surfaces as a TimeoutError rather than a hang inside MPI_Comm_split.
//
// Errors of MPI calls are returned (MPI_ERRORS_RETURN is set on MPI_COMM_WORLD by world(), and inherited by
// every split) and thrown as RuntimeError with MPI's error string.
//
// The header includes no MPI header: the MPI_Comm lives inside the implementation.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "meshloom/comm/communicator.hpp"

namespace meshloom::mpi {

enum class ThreadLevel { Single, Funneled, Serialized, Multiple };

[[nodiscard]] std::string_view to_string(ThreadLevel level) noexcept;

// RAII MPI initialisation. The constructor calls MPI_Init_thread(argc, argv, required) unless MPI is already
// initialised (then it neither initialises nor finalises: owns() is false). The destructor calls MPI_Finalize
// when this session initialised MPI and MPI is not finalised yet; every MpiCommunicator should be destroyed
// before it (one destroyed later skips MPI_Comm_free).
// Throws RuntimeError when MPI was already finalised, when MPI_Init_thread fails, or when the thread level
// provided is below `required` (MPI is then finalised again before throwing).
class MpiSession {
public:
  explicit MpiSession(int* argc = nullptr, char*** argv = nullptr, ThreadLevel required = ThreadLevel::Funneled);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  [[nodiscard]] bool owns() const noexcept { return owns_; }
  [[nodiscard]] ThreadLevel provided() const noexcept { return provided_; }
  // MPI_COMM_WORLD's rank and size.
  [[nodiscard]] int world_rank() const;
  [[nodiscard]] int world_size() const;

  // MPI_Init has been called and MPI_Finalize has not.
  [[nodiscard]] static bool active() noexcept;

private:
  bool owns_ = false;
  ThreadLevel provided_ = ThreadLevel::Single;
};

class MpiCommunicator final : public comm::Communicator {
public:
  // MPI_COMM_WORLD (not freed on destruction). Collective over MPI_COMM_WORLD: every rank calls it (it learns
  // whether its node is oversubscribed, for the polling loop). Throws RuntimeError when MPI is not initialised or
  // already finalised.
  [[nodiscard]] static std::unique_ptr<MpiCommunicator> world(std::string name = "world");

  ~MpiCommunicator() override;

  [[nodiscard]] int rank() const noexcept override;
  [[nodiscard]] int size() const noexcept override;
  [[nodiscard]] const std::string& name() const noexcept override;
  [[nodiscard]] std::string_view backend() const noexcept override { return "mpi"; }
  // This process's rank in MPI_COMM_WORLD (what error messages name).
  [[nodiscard]] int world_rank() const noexcept;
  // This rank's index among the ranks of this communicator that share its node (MPI_Comm_split_type with
  // MPI_COMM_TYPE_SHARED, ordered by rank), how many there are (which GPU a rank takes), and the lowest of their
  // ranks in this communicator: the node's name within the job, the same on each of its ranks and different on
  // every other node, whatever the host names say. Collective over this communicator. RuntimeError when MPI fails.
  struct NodePlace {
    int rank = 0;
    int size = 1;
    int first = 0;
  };
  [[nodiscard]] NodePlace node_place();

  void all_reduce(comm::ConstBuffer in, comm::Buffer out, ReduceOp op) override;
  void all_gather(comm::ConstBuffer in, comm::Buffer out) override;
  void reduce_scatter(comm::ConstBuffer in, comm::Buffer out, ReduceOp op) override;
  void all_to_all(comm::ConstBuffer in, comm::Buffer out) override;
  void broadcast(comm::Buffer buffer, int root) override;
  void barrier() override;
  // Collectives complete on return: a no-op.
  void synchronize() override {}

  // MPI_Comm_split(comm, color < 0 ? MPI_UNDEFINED : color, key); nullptr for a negative color. The new
  // communicator inherits this one's timeout.
  [[nodiscard]] std::unique_ptr<comm::Communicator> split(int color, int key, std::string name) override;
  // MPI_Abort(MPI_COMM_WORLD, error_code): ends every rank of the job.
  void abort(int error_code) noexcept override;

  struct Impl;

private:
  explicit MpiCommunicator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace meshloom::mpi
