// The nccl live backend (live_backend.hpp): one GPU per rank, an NCCL world bootstrapped through MPI, groups by
// ncclCommSplit, device buffers; and, for run's executor, communicators that stage host buffers through the device.
// Compiled only where CUDA and NCCL were found (MESHLOOM_HAVE_NCCL).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
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

// Device memory whose copies are ordered on the world communicator's stream (captured at construction) and finished
// on return (DeviceBuffer's stream-ordered copies: cudaMemcpyAsync, then a spin on cudaStreamQuery). Copies on the
// legacy default stream would not wait for work queued on the communicators' non-blocking streams.
class DeviceBytes final : public BackendBuffer {
public:
  DeviceBytes(std::size_t bytes, int device, void* stream) : buffer_(bytes, DType::UInt8, device), stream_(stream) {}
  void* data() noexcept override { return buffer_.data(); }
  void upload(const void* host, std::size_t n) override { buffer_.copy_from_host(host, n, stream_); }
  void download(void* host, std::size_t n) const override { buffer_.copy_to_host(host, n, stream_); }

private:
  nccl::DeviceBuffer buffer_;
  void* stream_;
};

// An NCCL communicator that takes host buffers: each collective copies its input to device scratch buffers, runs,
// and copies the output back (copies ordered on the inner communicator's stream and finished on return, outside
// any MPI operation). For run's executor, which computes on the host; the scratch buffers grow to the largest
// collective and are kept. Always Blocking: the host output is written when a call returns, so Queued is ignored;
// its stopwatch is the wall clock (each call being complete on return, as on MPI).
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
    out_.copy_from_host(buffer.data, n, inner_->stream());
    inner_->broadcast(comm::Buffer{out_.data(), buffer.count, buffer.dtype}, root);
    out_.copy_to_host(buffer.data, n, inner_->stream());
  }
  void barrier() override { inner_->barrier(); }
  void synchronize() override { inner_->synchronize(); }
  // Staged collectives complete on return (their output is copied back to the host): always Blocking, whatever is
  // asked, and the inner communicator stays Blocking too.
  void set_completion(comm::Completion /*completion*/) override {
    Communicator::set_completion(comm::Completion::Blocking);
    inner_->set_completion(comm::Completion::Blocking);
  }
  // The wall clock, as for MPI: each staged call (copies included) is complete when it returns.
  std::unique_ptr<comm::Stopwatch> stopwatch(std::size_t marks) override {
    return std::make_unique<comm::WallStopwatch>(marks);
  }
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
    in_.copy_from_host(in.data, in_bytes, inner_->stream());
    collective(comm::ConstBuffer{in_.data(), in.count, in.dtype}, comm::Buffer{out_.data(), out.count, out.dtype});
    out_.copy_to_host(out.data, out_bytes, inner_->stream());
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
    // The communicators are created non-blocking; NCCL's own NCCL_COMM_BLOCKING=1 overrides that (page 5).
    const char* blocking = std::getenv("NCCL_COMM_BLOCKING");
    const bool blocking_set = blocking != nullptr && std::string_view(blocking) == "1";
    return "NCCL " + nccl::format_nccl_version(info.nccl_version) + ", CUDA runtime " +
           std::to_string(info.cuda_runtime_version) + ", GPU " + std::to_string(world_->device()) + " of " +
           std::to_string(gpus_) + (gpu.empty() ? std::string() : " (" + gpu + ")") +
           (blocking_set ? ", blocking communicators (NCCL_COMM_BLOCKING=1)" : ", non-blocking communicators");
  }
  bool host_memory() const noexcept override { return false; }
  comm::MeshGroups groups(const DeviceMesh& mesh, Buffers buffers) override {
    comm::check_same_mesh(control_, mesh);
    if (buffers == Buffers::Native) return comm::split_mesh_groups(*world_, mesh);
    HostStagedCommunicator staged(*world_);  // its splits stage too
    return comm::split_mesh_groups(staged, mesh);
  }
  std::unique_ptr<BackendBuffer> allocate(std::size_t bytes) override {
    return std::make_unique<DeviceBytes>(std::max<std::size_t>(bytes, 1), world_->device(), world_->stream());
  }

private:
  mpi::MpiCommunicator& control_;
  std::unique_ptr<nccl::NcclCommunicator> world_;
  int gpus_ = 0;
};

}  // namespace

std::unique_ptr<LiveBackend> open_nccl_backend(mpi::MpiCommunicator& world, std::chrono::milliseconds timeout) {
  // Which GPU: this rank's place on its node modulo the GPUs it sees. With per-rank CUDA_VISIBLE_DEVICES (Slurm
  // --gpus-per-task=1, say) every rank sees one GPU, its own, as device 0; with all GPUs visible the r-th rank of
  // a node takes GPU r. Ranks that end up on the same GPU are not refused here: NCCL reports the duplicate itself
  // when the world is created. Every rank learns whether every rank has a GPU at all before any NCCL call, so that
  // a rank without one cannot leave the others in the bootstrap.
  // The NCCL library loaded must serve the nccl.h the launcher was compiled against: an older one (a wheel's, on
  // LD_LIBRARY_PATH) may lack a function the backend calls, which would end the rank at its first call ("symbol
  // lookup error") rather than with a message.
  const mpi::MpiCommunicator::NodePlace place = world.node_place();
  const nccl::RuntimeInfo info = nccl::runtime_info();
  const std::string library = nccl::nccl_version_problem(info.nccl_header_version, info.nccl_version);
  const int gpus = nccl::cuda_device_count();
  const std::int64_t mine = (gpus == 0 ? 1 : 0) | (library.empty() ? 0 : 2);  // 1: no GPU; 2: an unfit library
  std::vector<std::int64_t> verdicts(static_cast<std::size_t>(world.size()), 0);
  world.all_gather(comm::ConstBuffer{&mine, 1, DType::Int64},
                   comm::Buffer{verdicts.data(), verdicts.size(), DType::Int64});
  std::string without;
  std::string unfit;
  for (std::size_t r = 0; r < verdicts.size(); ++r) {
    if ((verdicts[r] & 1) != 0) without += (without.empty() ? "" : ", ") + std::to_string(r);
    if ((verdicts[r] & 2) != 0) unfit += (unfit.empty() ? "" : ", ") + std::to_string(r);
  }
  if (!unfit.empty()) {
    raise(ErrorKind::RuntimeError,
          "--backend nccl: rank(s) " + unfit + " loaded an NCCL library that cannot serve this meshloom-launch (" +
              (library.empty() ? std::string("this rank's can: NCCL ") + nccl::format_nccl_version(info.nccl_version)
                               : "this rank: " + library) +
              "). Put the NCCL it was built against first on LD_LIBRARY_PATH, or rebuild against the one the job "
              "loads");
  }
  if (!without.empty()) {
    raise(ErrorKind::RuntimeError,
          "--backend nccl needs a CUDA GPU on every rank; rank(s) " + without + " found none" +
              (gpus == 0 && !info.cuda_error.empty() ? " (this rank: " + info.cuda_error + ")" : std::string()) +
              ". Run the mpi backend, or start the job where every rank has a GPU");
  }
  const int device = place.rank % gpus;
  const nccl::BootstrapFn bootstrap = [&world](void* bytes, std::size_t n) {
    world.broadcast(comm::Buffer{bytes, n, DType::UInt8}, 0);
  };
  // The launcher's --timeout bounds the world's creation and its splits (init_timeout) and every collective.
  auto nccl_world = nccl::NcclCommunicator::create(bootstrap, world.rank(), world.size(), device, "world", timeout);
  nccl_world->set_timeout(timeout);
  return std::make_unique<NcclBackend>(world, std::move(nccl_world), gpus);
}

}  // namespace meshloom::launcher
