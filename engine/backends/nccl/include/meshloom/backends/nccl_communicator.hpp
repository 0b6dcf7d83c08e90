// NcclCommunicator: the comm::Communicator of the NCCL backend, on device (CUDA) buffers.
//
// Every communicator owns a CUDA stream (non-blocking with respect to the legacy default stream) on its device.
// Each collective is enqueued on that stream; NCCL's answer to the enqueue (ncclInProgress on a non-blocking
// communicator) is settled by polling ncclCommGetAsyncError, and completion by polling cudaStreamQuery and
// ncclCommGetAsyncError, never cudaStreamSynchronize, so that an MPI progress engine running in the same process is
// never starved. The polls of collectives and synchronize() spin (yielding the core between polls) and never sleep:
// a sleep would quantize every timed collective by the scheduler's timer slack. Only init, split and finalize,
// which are never timed, back off with short sleeps.
//
// Completion (communicator.hpp): Blocking (the default) returns once the collective has finished. Queued returns
// once it is enqueued and NCCL accepted it (the enqueue's ncclInProgress settled, its errors raised); synchronize()
// then completes everything queued under the timeout, and raises the errors NCCL reported meanwhile. Data written
// by a queued collective may be read only after synchronize() (or by work ordered on stream(): DeviceBuffer's
// stream-ordered copies). stopwatch(marks) gives CUDA events recorded on stream(): intervals_us() after
// synchronize().
//
// Timeouts: the communicator's timeout (set_timeout, zero = none) bounds each collective, enqueue included, and
// synchronize(). Past it the communicator is ABORTED AT ONCE (ncclCommAbort, as PyTorch's watchdog does), then
// comm::TimeoutError names the rank, the communicator, the collective and its byte size. Aborting stops NCCL's
// kernels, so that freeing the buffers afterwards (cudaFree waits for the device) cannot hang; the other ranks must
// abort theirs too (their collectives fail or time out). Later operations on it raise RuntimeError. An NCCL or
// CUDA error reported while waiting aborts the communicator the same way.
//
// Init and split have a separate timeout (create()'s init_timeout, set_init_timeout; zero = none), inherited by
// splits: they wait for the other ranks to join, which can take much longer than one collective.
//
// NCCL communicators are created NON-BLOCKING (ncclConfig_t::blocking = 0), the only mode in which
// ncclCommAbort is safe. Splits are non-blocking too, with splitShare = 0 (see split()).
//
// In place (NCCL's rules, which differ from MPI's; nccl_types.hpp check_in_place): all_reduce in == out;
// all_gather in == out + rank * count; reduce_scatter out == in + rank * count (MPI's in-place reduce_scatter,
// out == in with the result in the first block, is the same only on rank 0); all_to_all never. Any other overlap
// of input and output is a ValueError naming the collective, before any NCCL call.
//
// Errors from CUDA and NCCL are meshloom::Error of kind RuntimeError naming the call, the code, its name and
// cudaGetErrorString / ncclGetErrorString (plus ncclGetLastError where NCCL has more to say). Bad arguments
// (mismatched counts or dtypes, a root out of range, a dtype NCCL cannot carry, an overlap NCCL cannot honour, a
// float8 reduction on a device before compute capability 9.0, avg of float8) are ValueError, raised before any
// NCCL call (the communicator stays usable).
//
// This header names no CUDA, NCCL or MPI type: the launcher includes it without the CUDA include path.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "meshloom/comm/communicator.hpp"

namespace meshloom::nccl {

// Broadcasts n bytes from rank 0 of the job to every other rank, in place (rank 0's bytes are the input, every
// other rank's are overwritten). The launcher passes one that calls MPI_Bcast through the MPI backend; this
// target stays free of MPI. It must broadcast whatever n it is given (a few hundred bytes: the ncclUniqueId
// plus a status word, so that a failure on rank 0 reaches every rank instead of leaving them waiting).
using BootstrapFn = std::function<void(void* bytes, std::size_t n)>;

class NcclCommunicator final : public comm::Communicator {
public:
  // Collective over the `size` ranks of the job: rank 0 creates the ncclUniqueId, `bootstrap` broadcasts it,
  // then every rank selects `device` (cudaSetDevice) and joins with ncclCommInitRankConfig (non-blocking).
  // With size == 1 the bootstrap is not called (it may be empty). `init_timeout` bounds the wait for the
  // other ranks to join (zero = none) and becomes init_timeout(), which bounds later splits; past it,
  // TimeoutError. ValueError for rank/size/device out of range or an empty bootstrap with size > 1;
  // RuntimeError when CUDA has no such device (or no driver) or NCCL fails (two ranks on one GPU, say). Argument
  // checks run before the bootstrap; device checks after it, so that a rank without a GPU fails where the others
  // can time out rather than leaving them in the broadcast.
  [[nodiscard]] static std::unique_ptr<NcclCommunicator> create(const BootstrapFn& bootstrap, int rank, int size,
                                                                int device, std::string name,
                                                                std::chrono::milliseconds init_timeout =
                                                                    std::chrono::milliseconds{0});

  // Finalizes and destroys the NCCL communicator (waiting at most timeout(), when set, then aborting it
  // instead); a communicator that was aborted or broken by an error or timeout is aborted, not finalized.
  ~NcclCommunicator() override;

  [[nodiscard]] int rank() const noexcept override;
  [[nodiscard]] int size() const noexcept override;
  [[nodiscard]] const std::string& name() const noexcept override;
  [[nodiscard]] std::string_view backend() const noexcept override { return "nccl"; }
  // The CUDA device this communicator runs on, and its compute capability.
  [[nodiscard]] int device() const noexcept;
  [[nodiscard]] int compute_capability() const noexcept;  // major * 10 + minor (90 for an H100)
  // The communicator's cudaStream_t, for callers that order their own work with it (DeviceBuffer's copies).
  [[nodiscard]] void* stream() const noexcept;

  // Buffers are device memory on device(). ReduceOp::Avg is ncclAvg, Product is ncclProd. all_to_all is
  // ncclAlltoAll (NCCL >= 2.28), grouped ncclSend/ncclRecv before. A zero count returns at once, before touching
  // the stream (it must then be zero on every rank). In place: see the top of this header.
  void all_reduce(comm::ConstBuffer in, comm::Buffer out, ReduceOp op) override;
  void all_gather(comm::ConstBuffer in, comm::Buffer out) override;
  void reduce_scatter(comm::ConstBuffer in, comm::Buffer out, ReduceOp op) override;
  void all_to_all(comm::ConstBuffer in, comm::Buffer out) override;
  void broadcast(comm::Buffer buffer, int root) override;
  // NCCL has none: an all_reduce of one int32 on a small scratch buffer owned by the communicator (queued like any
  // collective in Queued mode).
  void barrier() override;
  // Polls the stream until the work queued on it has finished, under the timeout (a TimeoutError aborts the
  // communicator, as above), and raises the errors NCCL reported meanwhile.
  void synchronize() override;

  // Blocking or Queued (see the top of this header). Switching back to Blocking does not wait for the work
  // already queued: call synchronize().
  void set_completion(comm::Completion completion) override;
  // `marks` CUDA events (cudaEventCreate, default flags: timing enabled) created now on device(); mark() records
  // the next one on stream() (ValueError past the capacity), intervals_us() reads cudaEventElapsedTime between
  // consecutive recorded events (x1000) and raises RuntimeError naming the call when an event has not completed
  // (call it after synchronize()). The stopwatch must not outlive this communicator. RuntimeError when CUDA fails.
  [[nodiscard]] std::unique_ptr<comm::Stopwatch> stopwatch(std::size_t marks) override;

  // The timeout of init and of later splits (create()'s init_timeout; zero = none).
  void set_init_timeout(std::chrono::milliseconds timeout) noexcept;
  [[nodiscard]] std::chrono::milliseconds init_timeout() const noexcept;

  // ncclCommSplit, non-blocking like its parent, bounded by init_timeout(): a NcclCommunicator on the same device
  // with its own stream, the parent's timeout and init timeout, Blocking completion; color < 0
  // (NCCL_SPLIT_NOCOLOR) gives nullptr. Collective over this communicator. NCCL allows no operation outstanding on
  // the parent, so work queued on it is completed first (under timeout()). NCCL fills the child's handle only when
  // its asynchronous init
  // finishes, so the wait polls this (the parent) communicator. On a timeout this communicator is aborted and the
  // child's state is deliberately leaked (NCCL may still write into it). splitShare = 0: each child has its own
  // resources (channels, proxy, abort flag), so that the groups of one mesh axis run independently of the world,
  // a child's abort does not abort its parent or siblings, and timings of a group do not depend on the parent's
  // resources; the price, a few buffers per communicator, is small for one split per mesh axis.
  [[nodiscard]] std::unique_ptr<comm::Communicator> split(int color, int key, std::string name) override;

  // ncclCommAbort: stops this communicator's outstanding work and frees it; returns (NCCL has no job abort:
  // error_code is unused here, the launcher ends the process). EVERY live rank must abort its communicators
  // (aborting on one rank leaves the others hanging in their next collective until their timeout), and a rank
  // holding several should abort all of them. Later operations throw RuntimeError. Never throws.
  void abort(int error_code) noexcept override;
  // Whether the NCCL communicator was aborted: by abort(), or by a timeout or error (see above).
  [[nodiscard]] bool aborted() const noexcept;

  struct Impl;

private:
  explicit NcclCommunicator(std::unique_ptr<Impl> impl) noexcept;
  std::unique_ptr<Impl> impl_;
};

}  // namespace meshloom::nccl
