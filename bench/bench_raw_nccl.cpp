#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <string>
#include <vector>

#include "bench_raw_nccl.hpp"
#include "meshloom/error.hpp"
#include "timing.hpp"

namespace meshloom::bench {

namespace {

void cuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    raise(ErrorKind::RuntimeError, std::string(call) + " failed: " + cudaGetErrorName(status) + ": " +
                                       cudaGetErrorString(status));
  }
}

void nccl(ncclResult_t result, const char* call) {
  if (result != ncclSuccess) raise(ErrorKind::RuntimeError, std::string(call) + " failed: " + ncclGetErrorString(result));
}

class Raw final : public RawNccl {
public:
  Raw(mpi::MpiCommunicator& world, std::int64_t max_bytes) {
    int gpus = 0;
    cuda(cudaGetDeviceCount(&gpus), "cudaGetDeviceCount");
    if (gpus < 1) raise(ErrorKind::RuntimeError, "no CUDA device");
    device_ = world.node_place().rank % gpus;
    cuda(cudaSetDevice(device_), "cudaSetDevice");
    cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    const auto bytes = static_cast<std::size_t>(max_bytes);
    cuda(cudaMalloc(&in_, bytes), "cudaMalloc");
    cuda(cudaMalloc(&out_, bytes), "cudaMalloc");
    cuda(cudaMemset(in_, 0, bytes), "cudaMemset");
    ncclUniqueId id{};
    if (world.rank() == 0) nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    world.broadcast(comm::Buffer{&id, sizeof id, DType::UInt8}, 0);
    nccl(ncclCommInitRank(&comm_, world.size(), id, world.rank()), "ncclCommInitRank");
  }
  ~Raw() override {
    if (comm_ != nullptr) (void)ncclCommDestroy(comm_);
    (void)cudaFree(in_);
    (void)cudaFree(out_);
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
    for (cudaEvent_t e : events_) (void)cudaEventDestroy(e);
  }
  Raw(const Raw&) = delete;
  Raw& operator=(const Raw&) = delete;

  double all_reduce_us(mpi::MpiCommunicator& world, std::int64_t bytes, std::int64_t warmup,
                       std::int64_t iters) override {
    cuda(cudaSetDevice(device_), "cudaSetDevice");
    const auto n = static_cast<std::size_t>(iters);
    while (events_.size() < n + 1) {
      cudaEvent_t e = nullptr;
      cuda(cudaEventCreate(&e), "cudaEventCreate");
      events_.push_back(e);
    }
    const auto count = static_cast<std::size_t>(bytes) / sizeof(float);
    world.barrier();
    for (std::int64_t i = 0; i < warmup; ++i) launch(count);
    wait();
    world.barrier();
    cuda(cudaEventRecord(events_[0], stream_), "cudaEventRecord");
    for (std::size_t i = 0; i < n; ++i) {
      launch(count);
      cuda(cudaEventRecord(events_[i + 1], stream_), "cudaEventRecord");
    }
    wait();
    std::vector<double> mine(n);
    for (std::size_t i = 0; i < n; ++i) {
      float ms = 0;
      cuda(cudaEventElapsedTime(&ms, events_[i], events_[i + 1]), "cudaEventElapsedTime");
      mine[i] = 1000.0 * static_cast<double>(ms);
    }
    std::vector<double> sums(n);
    world.all_reduce({mine.data(), n, DType::Float64}, {sums.data(), n, DType::Float64}, ReduceOp::Sum);
    for (double& v : sums) v /= world.size();
    return launcher::summarize(sums).p50_us;
  }

private:
  void launch(std::size_t count) {
    nccl(ncclAllReduce(in_, out_, count, ncclFloat32, ncclSum, comm_, stream_), "ncclAllReduce");
  }
  // Spins like the backend does (an MPI progress engine may share the process): cudaStreamQuery, no sleep.
  void wait() {
    for (;;) {
      const cudaError_t status = cudaStreamQuery(stream_);
      if (status == cudaSuccess) return;
      if (status != cudaErrorNotReady) cuda(status, "cudaStreamQuery");
    }
  }

  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  void* in_ = nullptr;
  void* out_ = nullptr;
  ncclComm_t comm_ = nullptr;
  std::vector<cudaEvent_t> events_;
};

}  // namespace

std::unique_ptr<RawNccl> open_raw_nccl(mpi::MpiCommunicator& world, std::int64_t max_bytes) {
  return std::make_unique<Raw>(world, max_bytes);
}

}  // namespace meshloom::bench
