// The backend a live command (bench, calibrate, run) moves its data on. The MPI world always carries the control
// traffic: the agreement on errors, the barriers that start timed regions, the reductions of timings and checks,
// the check that every rank holds the same mesh. The backend's communicators carry the collectives being measured:
//
//   --backend mpi    groups are MPI_Comm_split of the world (build_mesh_groups); buffers are host memory.
//   --backend nccl   each rank takes GPU (local rank mod the GPUs it sees), so that launches giving every rank one
//                    GPU of its own (per-rank CUDA_VISIBLE_DEVICES, Slurm --gpus-per-task=1) and launches showing
//                    every GPU to every rank both work; ranks that end up sharing a GPU are reported by NCCL
//                    ("Duplicate GPU detected") when the world is created. An NCCL world is bootstrapped through an
//                    MPI broadcast of its unique id, and the groups are ncclCommSplit of it (one split per axis, as
//                    with MPI); buffers are device memory, copied on the communicator's stream. Built only where
//                    CUDA and NCCL (2.18 or newer) were found.
//
// bench allocates its buffers through allocate() (device memory on nccl: what nccl-tests times). run's executor
// works on host buffers: groups(mesh, Buffers::Host) gives nccl communicators that copy each collective's input to
// the device and its output back (its measured collective then includes those copies; bench has the pure figure).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "meshloom/backends/mpi_communicator.hpp"
#include "meshloom/comm/mesh_groups.hpp"
#include "meshloom/comm/transport.hpp"
#include "meshloom/mesh/device_mesh.hpp"
#include "meshloom/plan/cost_model.hpp"

namespace meshloom::launcher {

// Bytes in a backend's memory.
class BackendBuffer {
public:
  virtual ~BackendBuffer() = default;
  // What the backend's communicators are given.
  [[nodiscard]] virtual void* data() noexcept = 0;
  // Copies n bytes from the host into the start of the buffer, or from it to the host.
  virtual void upload(const void* host, std::size_t n) = 0;
  virtual void download(void* host, std::size_t n) const = 0;
};

class LiveBackend {
public:
  enum class Buffers { Native, Host };

  virtual ~LiveBackend() = default;
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  // For headers and records: "Open MPI v4.1.4, ..." or "NCCL 2.28.9, CUDA runtime 13000, GPU 0 of 8 on this node".
  [[nodiscard]] virtual std::string describe() const = 0;
  // Whether allocate() gives host memory (the communicators then take host buffers directly).
  [[nodiscard]] virtual bool host_memory() const noexcept = 0;
  // The communicators of every axis and flattened axis of `mesh`: the mesh check on the MPI world, then one
  // split per axis. With Buffers::Host the communicators take host buffers whatever the backend. Collective over
  // the world.
  [[nodiscard]] virtual comm::MeshGroups groups(const DeviceMesh& mesh, Buffers buffers) = 0;
  [[nodiscard]] virtual std::unique_ptr<BackendBuffer> allocate(std::size_t bytes) = 0;
};

// The backends this build of meshloom-launch has: "mpi", or "mpi, nccl".
[[nodiscard]] std::string available_backends();

// Opens backend `name` over `world` (collective over it, after every rank agreed that its settings are valid).
// "mpi": at once. "nccl": every rank learns whether every rank has a GPU before any NCCL call (a RuntimeError on
// every rank naming the ranks without one otherwise), then the NCCL world is created under `timeout` (zero: none).
// ValueError naming the value for another name, or for nccl in a build without it.
[[nodiscard]] std::unique_ptr<LiveBackend> open_backend(const std::string& name, mpi::MpiCommunicator& world,
                                                        std::chrono::milliseconds timeout);

// Checks `name` without opening anything (what every rank can check alone, before any collective).
void check_backend_name(const std::string& name);

// A calibration prices the collectives it measured: those of its backend, timed by its protocol. The live commands
// that compare its predictions with what they measure (run, validate, advise --measure) run their collectives on
// `backend`, each one alone (single_shot). ValueError naming the calibration (`source`: how the user gave it, e.g.
// --calibration "cal.json") and both values when it records another backend or the pipelined protocol; a file that
// records neither (written before they were) passes.
void check_calibration_fits_run(const Calibration& calibration, const std::string& source, const std::string& backend);

// A calibration prices the collectives of the transport settings it was measured under (Calibration::transport,
// comm/transport.hpp). The settings of its backend's collectives (comm::settings_of_backend) that differ between it
// and measurements made under `measured` (named by `where`: "this job", "\"v3.jsonl\""), as comm::transport_difference
// says it; "" when none does or either side did not record its settings (files written before they were).
[[nodiscard]] std::string transport_mismatch(const Calibration& calibration,
                                             const std::optional<comm::TransportSettings>& measured,
                                             const std::string& where);

// What run, validate and advise --measure check before they run: ValueError naming the calibration (`source`) and
// every setting of the transport that differs between it and this job (job_transport), with both values and what to
// do (calibrate under this job's settings).
void check_calibration_transport(const Calibration& calibration, const std::string& source);

// A calibration's axis corrections (AxisCorrection) hold for ranks bound as in the calibrated job: its rank_cpus.
// ValueError naming the calibration (`source`), the rank and both CPU lists when this rank may run on other CPUs
// (cpu_binding), with what to do: bind the job as calibrate's was, or leave the corrections out
// (--no-axis-corrections). Nothing for a calibration without corrections. What every rank checks alone.
void check_axis_binding(const Calibration& calibration, const std::string& source, int rank);

}  // namespace meshloom::launcher
