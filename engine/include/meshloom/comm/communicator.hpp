// The communicator interface every backend implements (Open MPI on CPU buffers, NCCL on device buffers). The
// engine core only sees this header: no MPI, NCCL or CUDA type appears here.
//
// Semantics follow NCCL and nccl-tests:
//   all_reduce      count elements in, count out, reduced with op on every rank
//   all_gather      count in per rank, count * size out, rank r's block at offset r * count
//   reduce_scatter  count * size in, count out: rank r keeps block r of the reduction
//   all_to_all      count * size in and out: block j of rank r goes to block r of rank j
//   broadcast       count from root to every rank, in place
// Buffers are typed by meshloom::DType and addressed by Buffer: a pointer the backend understands (host memory for
// MPI, device memory for NCCL) plus an element count. A backend that cannot reduce a dtype (float8 on MPI, say)
// throws ValueError naming it. Every operation is collective over the communicator and
// blocking from the caller's view; a backend honours a per-operation timeout and then throws TimeoutError. A
// TimeoutError is fatal: the timed-out operation may still read or write its buffers, so the caller must not
// free them or communicate again, only report and abort() (collectives cannot be cancelled portably).
//
// Timing (the launcher's timing protocol, launcher/src/timing.hpp, is built on these two hooks):
//   set_completion(Completion::Queued)   a collective returns once it is enqueued on the backend's ordered queue
//                                        (NCCL: the communicator's CUDA stream); synchronize() completes everything
//                                        queued, under the timeout. Back-to-back launches then pipeline as in
//                                        nccl-tests. A backend whose calls complete on return (MPI) treats Queued as
//                                        Blocking.
//   stopwatch(marks)                     timestamps taken in the communicator's own order: mark() records one after
//                                        the work issued so far (NCCL: cudaEventRecord on the stream; MPI: the
//                                        steady clock, the work being complete on return); after synchronize(),
//                                        intervals_us() gives the times between consecutive marks. Neither sleeps.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "meshloom/dtype.hpp"
#include "meshloom/plan/state.hpp"

namespace meshloom::comm {

struct Buffer {
  void* data = nullptr;
  std::size_t count = 0;  // elements
  DType dtype = DType::Float32;
};

struct ConstBuffer {
  const void* data = nullptr;
  std::size_t count = 0;
  DType dtype = DType::Float32;
};

// A collective that did not finish within its timeout. The message names the rank, the communicator (axis),
// the collective and the size.
class TimeoutError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// Whether a collective call returns when complete (Blocking) or once enqueued (Queued; see above).
enum class Completion { Blocking, Queued };

// Timestamps in a communicator's order (see above). Capacity is fixed at creation, so that nothing is allocated
// while a timed region runs.
class Stopwatch {
public:
  virtual ~Stopwatch() = default;
  // Records the next timestamp after the work issued so far. ValueError past the capacity.
  virtual void mark() = 0;
  // The times between consecutive marks in microseconds (marks - 1 values); call after the communicator's
  // synchronize(). RuntimeError when the backend cannot read them.
  [[nodiscard]] virtual std::vector<double> intervals_us() = 0;
  // Forgets the marks (the capacity stays).
  virtual void reset() noexcept = 0;
};

// The Stopwatch of backends whose collectives complete on return: std::chrono::steady_clock.
class WallStopwatch final : public Stopwatch {
public:
  explicit WallStopwatch(std::size_t marks);
  void mark() override;
  [[nodiscard]] std::vector<double> intervals_us() override;
  void reset() noexcept override { used_ = 0; }

private:
  std::vector<std::chrono::steady_clock::time_point> marks_;
  std::size_t used_ = 0;
};

class Communicator {
public:
  virtual ~Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  [[nodiscard]] virtual int rank() const noexcept = 0;
  [[nodiscard]] virtual int size() const noexcept = 0;
  // A label for messages ("world", "tp", "dp_cp").
  [[nodiscard]] virtual const std::string& name() const noexcept = 0;
  [[nodiscard]] virtual std::string_view backend() const noexcept = 0;

  virtual void all_reduce(ConstBuffer in, Buffer out, ReduceOp op) = 0;
  virtual void all_gather(ConstBuffer in, Buffer out) = 0;
  virtual void reduce_scatter(ConstBuffer in, Buffer out, ReduceOp op) = 0;
  virtual void all_to_all(ConstBuffer in, Buffer out) = 0;
  virtual void broadcast(Buffer buffer, int root) = 0;
  virtual void barrier() = 0;
  // Waits until the work queued so far has finished (a no-op for backends that complete on return).
  virtual void synchronize() = 0;

  // See "Timing" above. The default completion is Blocking; the default stopwatch is a WallStopwatch.
  virtual void set_completion(Completion completion) { completion_ = completion; }
  [[nodiscard]] Completion completion() const noexcept { return completion_; }
  [[nodiscard]] virtual std::unique_ptr<Stopwatch> stopwatch(std::size_t marks);

  // MPI_Comm_split / ncclCommSplit: ranks with equal color form one new communicator, ordered by key then by
  // old rank; color < 0 gives none (nullptr). Collective over this communicator.
  [[nodiscard]] virtual std::unique_ptr<Communicator> split(int color, int key, std::string name) = 0;
  // Ends the job's communication after a failure; never returns normally on MPI (MPI_Abort).
  virtual void abort(int error_code) noexcept = 0;

  // The timeout of every later operation; zero means none.
  void set_timeout(std::chrono::milliseconds timeout) noexcept { timeout_ = timeout; }
  [[nodiscard]] std::chrono::milliseconds timeout() const noexcept { return timeout_; }

protected:
  Communicator() = default;

private:
  std::chrono::milliseconds timeout_{0};
  Completion completion_ = Completion::Blocking;
};

// One collective timed the single-shot way, the one definition of it that bench's single_shot mode and run's steps
// share: in Queued mode, a mark, `launch()`, a mark, then synchronize(); returns the interval in microseconds.
// `watch` (of `group`, at least 2 marks) is reset first. The group's completion is Blocking again on return.
[[nodiscard]] double time_single_shot(Communicator& group, Stopwatch& watch, const std::function<void()>& launch);

}  // namespace meshloom::comm
