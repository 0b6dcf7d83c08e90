// The nccl live backend (live_backend.hpp): one GPU per rank, an NCCL world bootstrapped through MPI, groups by
// ncclCommSplit, device buffers; and, for run's executor, communicators that stage host buffers through the device.
// Compiled only where CUDA and NCCL were found (MESHLOOM_HAVE_NCCL).
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "live_backend.hpp"
#include "meshloom/backends/device_buffer.hpp"
#include "meshloom/backends/nccl_communicator.hpp"
#include "meshloom/backends/nccl_runtime.hpp"
#include "meshloom/error.hpp"

namespace meshloom::launcher {

std::unique_ptr<LiveBackend> open_nccl_backend(mpi::MpiCommunicator& world, std::chrono::milliseconds timeout);

namespace {

class DeviceBytes final : public BackendBuffer {
public:
  DeviceBytes(std::size_t bytes, int device) : buffer_(bytes, DType::UInt8, device) {}
  void* data() noexcept override { return buffer_.data(); }
  void upload(const void* host, std::size_t n) override { buffer_.copy_from_host(host, n); }
  void download(void* host, std::size_t n) const override { buffer_.copy_to_host(host, n); }

private:
  nccl::DeviceBuffer buffer_;
};

// An NCCL communicator that takes host buffers: each collective copies its input to device scratch buffers, runs,
// and copies the output back (synchronous copies, outside any MPI operation). For run's executor, which computes on
// the host; the scratch buffers grow to the largest collective and are kept.
class HostStagedCommunicator final : public comm::Communicator {
public:
  // Stages through `inner`, which `owned` keeps alive when set (a split's child; the world is only borrowed).
  explicit HostStagedCommunicator(nccl::NcclCommunicator& inner, std::unique_ptr<comm::Communicator> owned = nullptr)
      : inner_(&inner), owned_(std::move(owned)) {
    set_timeout(inner_->timeout());
  }

  int rank() const noexcept override { return inner_->rank(); }
  int size() const noexcept override { return inner_->size(); }
  const std::string& name() const noexcept override { return inner_->name(); }
  std::string_view backend() const noexcept override { return "nccl"; }

  void all_reduce(comm::ConstBuffer in, comm::Buffer out, ReduceOp op) override {
    run(in, out, [&](comm::ConstBuffer i, comm::Buffer o) { inner_->all_reduce(i, o, op); });
  }
  void all_gather(comm::ConstBuffer in, comm::Buffer out) override {
    run(in, out, [&](comm::ConstBuffer i, comm::Buffer o) { inner_->all_gather(i, o); });
  }
  void reduce_scatter(comm::ConstBuffer in, comm::Buffer out, ReduceOp op) override {
    run(in, out, [&](comm::ConstBuffer i, comm::Buffer o) { inner_->reduce_scatter(i, o, op); });
  }
  void all_to_all(comm::ConstBuffer in, comm::Buffer out) override {
    run(in, out, [&](comm::ConstBuffer i, comm::Buffer o) { inner_->all_to_all(i, o); });
  }
  void broadcast(comm::Buffer buffer, int root) override {
    const std::size_t n = bytes_of(buffer.count, buffer.dtype);
    grow(out_, n);
    out_.copy_from_host(buffer.data, n);
    inner_->broadcast(comm::Buffer{out_.data(), buffer.count, buffer.dtype}, root);
    out_.copy_to_host(buffer.data, n);
  }
  void barrier() override { inner_->barrier(); }
  void synchronize() override { inner_->synchronize(); }
  std::unique_ptr<comm::Communicator> split(int color, int key, std::string name) override {
    auto child = inner_->split(color, key, std::move(name));
    if (!child) return nullptr;
    auto* nccl_child = dynamic_cast<nccl::NcclCommunicator*>(child.get());
    if (nccl_child == nullptr) raise(ErrorKind::RuntimeError, "ncclCommSplit did not give an NCCL communicator");
    return std::make_unique<HostStagedCommunicator>(*nccl_child, std::move(child));
  }
  void abort(int error_code) noexcept override { inner_->abort(error_code); }

private:
  static std::size_t bytes_of(std::size_t count, DType dtype) { return count * static_cast<std::size_t>(itemsize(dtype)); }

  void grow(nccl::DeviceBuffer& b, std::size_t bytes) {
    if (b.bytes() < bytes || b.data() == nullptr) b = nccl::DeviceBuffer(std::max<std::size_t>(bytes, 1), DType::UInt8, inner_->device());
  }

  template <class F>
  void run(comm::ConstBuffer in, comm::Buffer out, F&& collective) {
    const std::size_t in_bytes = bytes_of(in.count, in.dtype);
    const std::size_t out_bytes = bytes_of(out.count, out.dtype);
    grow(in_, in_bytes);
    grow(out_, out_bytes);
    in_.copy_from_host(in.data, in_bytes);
    collective(comm::ConstBuffer{in_.data(), in.count, in.dtype}, comm::Buffer{out_.data(), out.count, out.dtype});
    out_.copy_to_host(out.data, out_bytes);
  }

  nccl::NcclCommunicator* inner_;
  std::unique_ptr<comm::Communicator> owned_;
  nccl::DeviceBuffer in_;
  nccl::DeviceBuffer out_;
};

class NcclBackend final : public LiveBackend {
public:
  NcclBackend(mpi::MpiCommunicator& control, std::unique_ptr<nccl::NcclCommunicator> world, int gpus)
      : control_(control), world_(std::move(world)), gpus_(gpus) {}

  std::string_view name() const noexcept override { return "nccl"; }
  std::string describe() const override {
    const nccl::RuntimeInfo info = nccl::runtime_info();
    std::string gpu;
    for (const auto& d : info.devices) {
      if (d.index == world_->device()) gpu = d.name;
    }
    return "NCCL " + nccl::format_nccl_version(info.nccl_version) + ", CUDA runtime " +
           std::to_string(info.cuda_runtime_version) + ", GPU " + std::to_string(world_->device()) + " of " +
           std::to_string(gpus_) + (gpu.empty() ? std::string() : " (" + gpu + ")");
  }
  bool host_memory() const noexcept override { return false; }
  comm::MeshGroups groups(const DeviceMesh& mesh, Buffers buffers) override {
    comm::check_same_mesh(control_, mesh);
    if (buffers == Buffers::Native) return comm::split_mesh_groups(*world_, mesh);
    HostStagedCommunicator staged(*world_);  // its splits stage too
    return comm::split_mesh_groups(staged, mesh);
  }
  std::unique_ptr<BackendBuffer> allocate(std::size_t bytes) override {
    return std::make_unique<DeviceBytes>(std::max<std::size_t>(bytes, 1), world_->device());
  }

private:
  mpi::MpiCommunicator& control_;
  std::unique_ptr<nccl::NcclCommunicator> world_;
  int gpus_ = 0;
};

}  // namespace

std::unique_ptr<LiveBackend> open_nccl_backend(mpi::MpiCommunicator& world, std::chrono::milliseconds timeout) {
  // Which GPU: this rank's place on its node, modulo the node's GPUs. Every rank learns whether every rank has
  // one before any NCCL call, so that a rank without a GPU cannot leave the others in the bootstrap.
  const mpi::MpiCommunicator::NodePlace place = world.node_place();
  const int gpus = nccl::cuda_device_count();
  // 0: fine; 1: no GPU; 2: more ranks on this node than GPUs (NCCL needs a GPU of its own per rank).
  const std::int64_t mine = gpus == 0 ? 1 : place.size > gpus ? 2 : 0;
  std::vector<std::int64_t> verdicts(static_cast<std::size_t>(world.size()), 0);
  world.all_gather(comm::ConstBuffer{&mine, 1, DType::Int64},
                   comm::Buffer{verdicts.data(), verdicts.size(), DType::Int64});
  std::string without;
  std::string crowded;
  for (std::size_t r = 0; r < verdicts.size(); ++r) {
    std::string& list = verdicts[r] == 1 ? without : crowded;
    if (verdicts[r] != 0) list += (list.empty() ? "" : ", ") + std::to_string(r);
  }
  if (!without.empty()) {
    const nccl::RuntimeInfo info = nccl::runtime_info();
    raise(ErrorKind::RuntimeError,
          "--backend nccl needs a CUDA GPU on every rank; rank(s) " + without + " found none" +
              (gpus == 0 && !info.cuda_error.empty() ? " (this rank: " + info.cuda_error + ")" : std::string()) +
              ". Run the mpi backend, or start the job where every rank has a GPU");
  }
  if (!crowded.empty()) {
    raise(ErrorKind::RuntimeError, "--backend nccl needs one GPU per rank; rank(s) " + crowded +
                                       " share a node with more ranks than GPUs (this node: " +
                                       std::to_string(place.size) + " ranks, " + std::to_string(gpus) +
                                       " GPUs). Start at most as many ranks per node as it has GPUs");
  }
  const int device = place.rank;
  const nccl::BootstrapFn bootstrap = [&world](void* bytes, std::size_t n) {
    world.broadcast(comm::Buffer{bytes, n, DType::UInt8}, 0);
  };
  auto nccl_world = nccl::NcclCommunicator::create(bootstrap, world.rank(), world.size(), device, "world", timeout);
  nccl_world->set_timeout(timeout);
  return std::make_unique<NcclBackend>(world, std::move(nccl_world), gpus);
}

}  // namespace meshloom::launcher
