// meshloom_bench_comm_overhead in a build without the NCCL backend: --backend nccl says so.
#include "bench_raw_nccl.hpp"
#include "meshloom/error.hpp"

namespace meshloom::bench {

std::unique_ptr<RawNccl> open_raw_nccl(mpi::MpiCommunicator& /*world*/, std::int64_t /*max_bytes*/) {
  raise(ErrorKind::ValueError, "--backend nccl: this build has no NCCL backend (CUDA and NCCL were not found)");
}

}  // namespace meshloom::bench
