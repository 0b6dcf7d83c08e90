// NcclCommunicator: the comm::Communicator of the NCCL backend, on device (CUDA) buffers.
//
// Every communicator owns a CUDA stream (non-blocking with respect to the legacy default stream) on its device.
// Each collective is enqueued on that stream and then completed by polling: cudaStreamQuery and
// ncclCommGetAsyncError, never cudaStreamSynchronize, so that an MPI progress engine running in the same process
// is never starved. The communicator's timeout (set_timeout, zero = none) bounds the whole operation, enqueue
// included; past it the collective throws comm::TimeoutError naming the rank, the communicator, the collective
// and its byte size, and the communicator is marked broken: the job must then abort (see abort()).
//
// NCCL communicators are created NON-BLOCKING (ncclConfig_t::blocking = 0), the only mode in which
// ncclCommAbort is safe: every NCCL call is followed by a wait loop on ncclCommGetAsyncError while it reports
// ncclInProgress. Splits are non-blocking too.
//
// Errors from CUDA and NCCL are meshloom::Error of kind RuntimeError naming the call, the code, its name and
// cudaGetErrorString / ncclGetErrorString (plus ncclGetLastError where NCCL has more to say). Bad arguments
// (mismatched counts or dtypes, a root out of range, a dtype NCCL cannot carry) are ValueError.
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
  // other ranks to join (zero = none); past it, TimeoutError. ValueError for rank/size/device out of range
  // or an empty bootstrap with size > 1; RuntimeError when CUDA has no such device (or no driver) or NCCL
  // fails. Argument checks run before the bootstrap; device checks after it, so that a rank without a GPU
  // fails where the others can time out rather than leaving them in the broadcast.
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
  // The CUDA device this communicator runs on.
  [[nodiscard]] int device() const noexcept;
  // The communicator's cudaStream_t, for callers that order their own work with it.
  [[nodiscard]] void* stream() const noexcept;

  // Buffers are device memory on device(). ReduceOp::Avg is ncclAvg, Product is ncclProd. all_to_all is
  // ncclAlltoAll (NCCL >= 2.28), grouped ncclSend/ncclRecv before. A zero count returns at once (it must then
  // be zero on every rank).
  void all_reduce(comm::ConstBuffer in, comm::Buffer out, ReduceOp op) override;
  void all_gather(comm::ConstBuffer in, comm::Buffer out) override;
  void reduce_scatter(comm::ConstBuffer in, comm::Buffer out, ReduceOp op) override;
  void all_to_all(comm::ConstBuffer in, comm::Buffer out) override;
  void broadcast(comm::Buffer buffer, int root) override;
  // NCCL has none: an all_reduce of one int32 on a small scratch buffer owned by the communicator.
  void barrier() override;
  // Polls the stream until the work queued on it has finished (collectives already complete on return).
  void synchronize() override;

  // ncclCommSplit, non-blocking like its parent: a NcclCommunicator on the same device with its own stream and
  // the parent's timeout; color < 0 (NCCL_SPLIT_NOCOLOR) gives nullptr. Collective over this communicator.
  [[nodiscard]] std::unique_ptr<comm::Communicator> split(int color, int key, std::string name) override;

  // ncclCommAbort: stops this communicator's outstanding work and frees it; returns (NCCL has no job abort:
  // error_code is unused here, the launcher ends the process). EVERY live rank must abort its communicators
  // (aborting on one rank leaves the others hanging in their next collective until their timeout), and a rank
  // holding several should abort all of them. Later operations throw RuntimeError. Never throws.
  void abort(int error_code) noexcept override;
  [[nodiscard]] bool aborted() const noexcept;

  struct Impl;

private:
  explicit NcclCommunicator(std::unique_ptr<Impl> impl) noexcept;
  std::unique_ptr<Impl> impl_;
};

}  // namespace meshloom::nccl
