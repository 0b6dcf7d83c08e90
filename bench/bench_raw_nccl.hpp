// The raw NCCL side of meshloom_bench_comm_overhead: an NCCL world of its own (bootstrapped through MPI), a stream
// and buffers on this rank's GPU (local rank modulo the GPUs it sees, as the nccl backend chooses), and a loop of
// ncclAllReduce back to back timed with CUDA events the way bench's pipelined mode times (timing.hpp).
#pragma once

#include <cstdint>
#include <memory>

#include "meshloom/backends/mpi_communicator.hpp"

namespace meshloom::bench {

class RawNccl {
public:
  virtual ~RawNccl() = default;
  // float32 sum of `bytes` bytes: a world barrier, the warm-up, a barrier, `iters` launches with an event after
  // each; the p50 over the iterations of the mean over the ranks, in microseconds. Collective over `world`.
  [[nodiscard]] virtual double all_reduce_us(mpi::MpiCommunicator& world, std::int64_t bytes, std::int64_t warmup,
                                             std::int64_t iters) = 0;
};

// Buffers for up to max_bytes. Collective over `world`. ValueError in a build without the NCCL backend;
// RuntimeError naming the CUDA or NCCL call that failed.
[[nodiscard]] std::unique_ptr<RawNccl> open_raw_nccl(mpi::MpiCommunicator& world, std::int64_t max_bytes);

}  // namespace meshloom::bench
