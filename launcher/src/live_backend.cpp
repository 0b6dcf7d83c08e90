#include "live_backend.hpp"

#include <cstring>
#include <utility>
#include <vector>

#include "bench_io.hpp"
#include "meshloom/backends/mpi_runtime.hpp"
#include "meshloom/error.hpp"

namespace meshloom::launcher {

#ifdef MESHLOOM_HAVE_NCCL
// live_backend_nccl.cpp
[[nodiscard]] std::unique_ptr<LiveBackend> open_nccl_backend(mpi::MpiCommunicator& world,
                                                             std::chrono::milliseconds timeout);
#endif

namespace {

class HostBuffer final : public BackendBuffer {
public:
  explicit HostBuffer(std::size_t bytes) : bytes_(bytes) {}
  void* data() noexcept override { return bytes_.data(); }
  void upload(const void* host, std::size_t n) override { std::memcpy(bytes_.data(), host, checked(n)); }
  void download(void* host, std::size_t n) const override { std::memcpy(host, bytes_.data(), checked(n)); }

private:
  [[nodiscard]] std::size_t checked(std::size_t n) const {
    if (n > bytes_.size()) {
      raise(ErrorKind::ValueError, "a copy of " + std::to_string(n) + " bytes into a host buffer of " +
                                       std::to_string(bytes_.size()));
    }
    return n;
  }
  std::vector<std::byte> bytes_;
};

class MpiBackend final : public LiveBackend {
public:
  explicit MpiBackend(mpi::MpiCommunicator& world) : world_(world) {}
  std::string_view name() const noexcept override { return "mpi"; }
  std::string describe() const override { return mpi::runtime_info().library; }
  bool host_memory() const noexcept override { return true; }
  comm::MeshGroups groups(const DeviceMesh& mesh, Buffers /*buffers*/) override {
    return comm::build_mesh_groups(world_, mesh);
  }
  std::unique_ptr<BackendBuffer> allocate(std::size_t bytes) override { return std::make_unique<HostBuffer>(bytes); }

private:
  mpi::MpiCommunicator& world_;
};

}  // namespace

std::string available_backends() {
#ifdef MESHLOOM_HAVE_NCCL
  return "mpi, nccl";
#else
  return "mpi";
#endif
}

void check_backend_name(const std::string& name) {
  if (name == "mpi") return;
  if (name == "nccl") {
#ifdef MESHLOOM_HAVE_NCCL
    return;
#else
    raise(ErrorKind::ValueError, "--backend nccl: this meshloom-launch was built without NCCL (CUDA and NCCL were "
                                 "not found at configure time); available: " + available_backends());
#endif
  }
  raise(ErrorKind::ValueError, "--backend \"" + name + "\": expected one of " + available_backends());
}

void check_calibration_fits_run(const Calibration& calibration, const std::string& source, const std::string& backend) {
  const std::string file = source + ": ";
  if (!calibration.backend.empty() && calibration.backend != backend) {
    raise(ErrorKind::ValueError, file + "measured on the " + calibration.backend + " backend, but this run's " +
                                     "collectives run on " + backend + ", whose costs it does not hold (calibrate " +
                                     "with --backend " + backend + ", or run with --backend " + calibration.backend +
                                     ")");
  }
  if (calibration.timing == "pipelined") {
    raise(ErrorKind::ValueError, file + "timing = pipelined (collectives back to back, one wait), but this run " +
                                     "times each collective alone (single_shot), as a training step meets it: " +
                                     "calibrate with --timing single_shot (calibrate's default), or from a bench run " +
                                     "with --timing single_shot (calibrate --from)");
  }
}

std::string transport_mismatch(const Calibration& calibration, const std::optional<comm::TransportSettings>& measured,
                               const std::string& where) {
  if (!calibration.transport || !measured) return {};
  return comm::transport_difference(calibration.backend, *calibration.transport, "the calibration", *measured, where);
}

void check_calibration_transport(const Calibration& calibration, const std::string& source) {
  const std::string difference = transport_mismatch(calibration, job_transport(), "this job");
  if (difference.empty()) return;
  raise(ErrorKind::ValueError,
        source + ": measured under other transport settings than this job (" + difference +
            "): its prices are of another transport; calibrate under this job's settings (the same mpirun --mca "
            "options, UCX_ and NCCL_ variables, and scheduling policy)");
}

void check_axis_binding(const Calibration& calibration, const std::string& source, int rank) {
  if (calibration.axis_corrections.empty()) return;
  // Only the calibrated mesh's ranks (0..N-1) are priced by the corrections.
  std::int64_t ranks = 1;
  for (const std::int64_t n : calibration.mesh_shape) ranks *= n;  // <= world (parse_calibration)
  if (rank >= ranks) return;
  const auto r = static_cast<std::size_t>(rank);
  const std::string calibrated = r < calibration.rank_cpus.size() ? calibration.rank_cpus[r] : std::string("?");
  const std::string here = cpu_binding();
  if (here == calibrated) return;
  raise(ErrorKind::ValueError,
        source + ": its axis corrections were measured with rank " + std::to_string(rank) + " on CPUs " + calibrated +
            ", and here it may run on CPUs " + here + ": start the job bound as calibrate's was (mpirun " +
            "--bind-to core --map-by core, with :overload-allowed when ranks outnumber cores), or price without " +
            "them (--no-axis-corrections)");
}

std::unique_ptr<LiveBackend> open_backend(const std::string& name, mpi::MpiCommunicator& world,
                                          std::chrono::milliseconds timeout) {
  check_backend_name(name);
#ifdef MESHLOOM_HAVE_NCCL
  if (name == "nccl") return open_nccl_backend(world, timeout);
#else
  (void)timeout;
#endif
  return std::make_unique<MpiBackend>(world);
}

}  // namespace meshloom::launcher
