#include "meshloom/backends/nccl_communicator.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cuda_error.hpp"
#include "meshloom/backends/nccl_types.hpp"
#include "meshloom/error.hpp"

namespace meshloom::nccl {

namespace {

using Clock = std::chrono::steady_clock;
using detail::check_cuda;

// What rank 0 broadcasts: the unique id, whether creating it worked, and a tag that tells a rank its bootstrap
// really delivered rank 0's bytes.
struct BootstrapPayload {
  ncclUniqueId id;
  std::int32_t status;
  std::uint32_t magic;
};
constexpr std::uint32_t kPayloadMagic = 0x4d4c4e43;  // "MLNC"

// How long the destructor waits for ncclCommFinalize when the communicator has no timeout.
constexpr std::chrono::milliseconds kDefaultFinalizeTimeout{30'000};

class Deadline {
public:
  explicit Deadline(std::chrono::milliseconds timeout)
      : timeout_(timeout), end_(Clock::now() + (timeout.count() > 0 ? timeout : std::chrono::milliseconds{0})) {}
  [[nodiscard]] bool expired() const { return timeout_.count() > 0 && Clock::now() >= end_; }
  [[nodiscard]] std::chrono::milliseconds timeout() const { return timeout_; }

private:
  std::chrono::milliseconds timeout_;
  Clock::time_point end_;
};

// How a wait loop passes the time between polls. Spin: yield the core and poll again, never sleep (collectives
// and synchronize: a sleep would quantize every timed result by the scheduler's timer slack). Backoff: yield for
// the first polls, then sleep briefly (init, split and finalize, which are never timed and can take seconds).
enum class Pace { Spin, Backoff };

class Poller {
public:
  explicit Poller(Pace pace) noexcept : pace_(pace) {}
  void pause() {
    if (pace_ == Pace::Spin || ++polls_ < 1000) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds{50});
    }
  }

private:
  Pace pace_;
  int polls_ = 0;
};

ncclConfig_t nonblocking_config(const std::string& name) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // the only mode in which ncclCommAbort is safe
  // No resource sharing between a split and its parent (nccl_communicator.hpp, split()): each communicator has
  // its own channels, proxy and abort flag, so groups run independently and a child's abort stays its own.
  config.splitShare = 0;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 3)  // ncclConfig_t::commName: NCCL 2.27.3 and later
  config.commName = name.c_str();
#else
  (void)name;
#endif
  return config;
}

// The grouped send/recv all_to_all of NCCL versions without ncclAlltoAll; compiled everywhere so that it stays
// correct, used only where the header lacks ncclAlltoAll.
[[maybe_unused]] ncclResult_t grouped_all_to_all(const void* in, void* out, std::size_t per_peer, ncclDataType_t type,
                                                 std::size_t item_bytes, int size, ncclComm_t comm,
                                                 cudaStream_t stream) {
  ncclResult_t result = ncclGroupStart();
  if (result != ncclSuccess) return result;
  const std::size_t block = per_peer * item_bytes;
  for (int peer = 0; peer < size; ++peer) {
    const std::size_t offset = static_cast<std::size_t>(peer) * block;
    result = ncclSend(static_cast<const char*>(in) + offset, per_peer, type, peer, comm, stream);
    if (result == ncclSuccess || result == ncclInProgress) {
      result = ncclRecv(static_cast<char*>(out) + offset, per_peer, type, peer, comm, stream);
    }
    if (result != ncclSuccess && result != ncclInProgress) {
      (void)ncclGroupEnd();
      return result;
    }
  }
  return ncclGroupEnd();
}

std::size_t byte_size(std::size_t count, DType dtype) { return count * static_cast<std::size_t>(itemsize(dtype)); }

// CUDA events on a communicator's stream (communicator.hpp's Stopwatch). Nothing is allocated by mark().
class EventStopwatch final : public comm::Stopwatch {
public:
  EventStopwatch(cudaStream_t stream, std::size_t marks, std::string where) : stream_(stream), where_(std::move(where)) {
    events_.reserve(marks);
    for (std::size_t i = 0; i < marks; ++i) {
      cudaEvent_t event = nullptr;
      check_cuda(cudaEventCreate(&event), "cudaEventCreate", where_);  // default flags: timing enabled
      events_.push_back(event);
    }
  }
  ~EventStopwatch() override {
    for (cudaEvent_t event : events_) (void)cudaEventDestroy(event);
    (void)cudaGetLastError();
  }
  EventStopwatch(const EventStopwatch&) = delete;
  EventStopwatch& operator=(const EventStopwatch&) = delete;

  void mark() override {
    if (used_ >= events_.size()) {
      raise(ErrorKind::ValueError, "Stopwatch::mark: mark " + std::to_string(used_ + 1) + " past the capacity of " +
                                       std::to_string(events_.size()) + "; " + where_);
    }
    check_cuda(cudaEventRecord(events_[used_], stream_), "cudaEventRecord", where_);
    ++used_;
  }

  std::vector<double> intervals_us() override {
    std::vector<double> out;
    if (used_ > 1) out.reserve(used_ - 1);
    for (std::size_t i = 1; i < used_; ++i) {
      float ms = 0.0F;
      const cudaError_t status = cudaEventElapsedTime(&ms, events_[i - 1], events_[i]);
      if (status != cudaSuccess) {
        check_cuda(status, "cudaEventElapsedTime(mark " + std::to_string(i) + ", mark " + std::to_string(i + 1) + ")",
                   where_ + (status == cudaErrorNotReady ? " (call intervals_us() after synchronize())" : ""));
      }
      out.push_back(static_cast<double>(ms) * 1000.0);
    }
    return out;
  }

  void reset() noexcept override { used_ = 0; }

private:
  cudaStream_t stream_;
  std::string where_;
  std::vector<cudaEvent_t> events_;
  std::size_t used_ = 0;
};

}  // namespace

struct NcclCommunicator::Impl {
  ncclComm_t comm = nullptr;  // written by NCCL's split job for a child: stays at this address until it settles
  cudaStream_t stream = nullptr;
  void* scratch = nullptr;  // one int32 for barrier()
  int rank = 0;
  int size = 1;
  int device = 0;
  int cc_major = 0;
  int cc_minor = 0;
  std::string name;
  std::chrono::milliseconds init_timeout{0};
  bool broken = false;             // an NCCL/CUDA error or a timeout left the communicator in an unknown state
  bool aborted = false;            // ncclCommAbort was called (abort_cause says why)
  std::string_view abort_cause;    // "abort()", "a timeout", "an error"
  // Queued collectives not yet known complete (for the messages of a timed-out synchronize).
  std::size_t queued = 0;
  std::string_view last_op;
  std::size_t last_bytes = 0;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() { close(kDefaultFinalizeTimeout); }

  [[nodiscard]] std::string where() const {
    if (size == 0) {  // a split that has not joined yet
      return "communicator '" + name + "' (nccl, being split, device " + std::to_string(device) + ")";
    }
    return "rank " + std::to_string(rank) + " of communicator '" + name + "' (nccl, size " + std::to_string(size) +
           ", device " + std::to_string(device) + ")";
  }

  // ncclCommAbort now: stops NCCL's kernels and frees the communicator, so that cudaFree of the buffers it used
  // cannot wait forever. Never throws.
  void abort_now(std::string_view cause) noexcept {
    if (comm != nullptr) {
      if (cudaSetDevice(device) != cudaSuccess) (void)cudaGetLastError();
      // ncclCommAbort is blocking even on a non-blocking communicator and frees it: nothing to poll afterwards.
      (void)ncclCommAbort(comm);
      comm = nullptr;
    }
    if (!aborted) {
      aborted = true;
      abort_cause = cause;
    }
  }

  [[noreturn]] void fail_nccl(std::string_view call, ncclResult_t result) {
    broken = true;
    std::string message = nccl_error_message(call, result) + "; " + where();
    const char* last = ncclGetLastError(comm);
    if (last != nullptr && *last != '\0') message += ": " + std::string(last);
    abort_now("an error");
    raise(ErrorKind::RuntimeError, message + " (the communicator was aborted)");
  }

  void fail_cuda(std::string_view call, cudaError_t status) {
    if (status == cudaSuccess) return;
    broken = true;
    const std::string context = where() + " (the communicator was aborted)";
    abort_now("an error");
    check_cuda(status, call, context);
  }

  [[noreturn]] void fail_timeout(std::string_view op, std::size_t bytes, const Deadline& deadline) {
    broken = true;
    // bytes == 0: not a data collective (init, split, synchronize)
    const std::string of_bytes = bytes > 0 ? " of " + std::to_string(bytes) + " bytes" : std::string();
    std::string pending;
    if (queued > 0) {
      pending = " (" + std::to_string(queued) + " queued collective(s) outstanding, the last " + std::string(last_op) +
                " of " + std::to_string(last_bytes) + " bytes)";
    }
    std::string message = where() + ": " + std::string(op) + of_bytes + pending + " did not finish within " +
                          std::to_string(deadline.timeout().count()) +
                          " ms; the NCCL communicator was aborted (ncclCommAbort) so that its buffers can be freed; "
                          "the job must abort (every rank aborts its communicators)";
    abort_now("a timeout");
    throw comm::TimeoutError(message);
  }

  void ensure_usable(std::string_view op) const {
    if (aborted && abort_cause == "abort()") {
      raise(ErrorKind::RuntimeError, where() + ": " + std::string(op) + " after abort()");
    }
    if (aborted) {
      raise(ErrorKind::RuntimeError, where() + ": " + std::string(op) + " on a communicator aborted after " +
                                         std::string(abort_cause) + "; abort the job");
    }
    if (broken || comm == nullptr) {
      raise(ErrorKind::RuntimeError, where() + ": " + std::string(op) +
                                         " on a communicator broken by an earlier error or timeout; abort the job");
    }
  }

  void select_device() {
    int current = -1;
    if (cudaGetDevice(&current) != cudaSuccess) {
      (void)cudaGetLastError();
      current = -1;
    }
    if (current != device) fail_cuda("cudaSetDevice(" + std::to_string(device) + ")", cudaSetDevice(device));
  }

  // The wait loop after an NCCL call on a non-blocking communicator: raises for an error, then polls
  // ncclCommGetAsyncError on `target` while it reports ncclInProgress.
  void settle(ncclComm_t target, ncclResult_t result, std::string_view call, std::string_view op, std::size_t bytes,
              const Deadline& deadline, Pace pace) {
    if (result != ncclSuccess && result != ncclInProgress) fail_nccl(call, result);
    Poller poller(pace);
    for (;;) {
      ncclResult_t state = ncclSuccess;
      const ncclResult_t query = ncclCommGetAsyncError(target, &state);
      if (query != ncclSuccess) fail_nccl("ncclCommGetAsyncError", query);
      if (state == ncclSuccess) return;
      if (state != ncclInProgress) fail_nccl(call, state);
      if (deadline.expired()) fail_timeout(op, bytes, deadline);
      poller.pause();
    }
  }

  // Completion without cudaStreamSynchronize: cudaStreamQuery and the communicator's async error, polled by
  // spinning (never a sleep: this wait is inside timed regions).
  void wait_stream(std::string_view call, std::string_view op, std::size_t bytes, const Deadline& deadline) {
    Poller poller(Pace::Spin);
    for (;;) {
      const cudaError_t status = cudaStreamQuery(stream);
      if (status != cudaSuccess && status != cudaErrorNotReady) fail_cuda("cudaStreamQuery", status);
      ncclResult_t state = ncclSuccess;
      const ncclResult_t query = ncclCommGetAsyncError(comm, &state);
      if (query != ncclSuccess) fail_nccl("ncclCommGetAsyncError", query);
      if (state != ncclSuccess && state != ncclInProgress) fail_nccl(call, state);
      if (status == cudaSuccess) {
        queued = 0;  // the stream is in order: everything queued before has finished too
        return;
      }
      if (deadline.expired()) fail_timeout(op, bytes, deadline);
      poller.pause();
    }
  }

  // Enqueue one collective on the stream; wait for it (Blocking) or return once NCCL accepted it (Queued).
  template <class Enqueue>
  void run(std::string_view call, std::string_view op, std::size_t bytes, std::chrono::milliseconds timeout,
           comm::Completion completion, Enqueue&& enqueue) {
    ensure_usable(op);
    select_device();
    const Deadline deadline(timeout);
    const ncclResult_t enqueued = enqueue();
    // ncclSuccess: enqueued already (nothing to poll, which keeps back-to-back launches as cheap as raw NCCL calls);
    // ncclInProgress: NCCL is still enqueueing on a non-blocking communicator.
    if (enqueued != ncclSuccess) settle(comm, enqueued, call, op, bytes, deadline, Pace::Spin);
    if (completion == comm::Completion::Queued) {
      ++queued;
      last_op = op;
      last_bytes = bytes;
      return;
    }
    wait_stream(call, op, bytes, deadline);
  }

  // The stream and barrier scratch of a freshly joined communicator (stream-ordered clear of the scratch).
  void allocate_resources() {
    fail_cuda("cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    fail_cuda("cudaMalloc(barrier scratch)", cudaMalloc(&scratch, sizeof(std::int32_t)));
    fail_cuda("cudaMemsetAsync(barrier scratch)", cudaMemsetAsync(scratch, 0, sizeof(std::int32_t), stream));
  }

  // Finalize and destroy (at most `timeout`), or abort when broken or finalizing fails; then free the stream and
  // scratch. Never throws. Init-side wait: it may back off with sleeps.
  void close(std::chrono::milliseconds timeout) noexcept {
    if (comm != nullptr) {
      if (cudaSetDevice(device) != cudaSuccess) (void)cudaGetLastError();
      bool clean = !broken && !aborted;
      if (clean) {
        const ncclResult_t result = ncclCommFinalize(comm);
        clean = result == ncclSuccess || result == ncclInProgress;
        const Deadline deadline(timeout.count() > 0 ? timeout : kDefaultFinalizeTimeout);
        Poller poller(Pace::Backoff);
        while (clean) {
          ncclResult_t state = ncclSuccess;
          if (ncclCommGetAsyncError(comm, &state) != ncclSuccess) {
            clean = false;
          } else if (state == ncclSuccess) {
            break;
          } else if (state != ncclInProgress || deadline.expired()) {
            clean = false;
          } else {
            poller.pause();
          }
        }
        if (clean) clean = ncclCommDestroy(comm) == ncclSuccess;
      }
      if (!clean) (void)ncclCommAbort(comm);
      comm = nullptr;
    }
    if (scratch != nullptr) {
      (void)cudaFree(scratch);
      scratch = nullptr;
    }
    if (stream != nullptr) {
      (void)cudaStreamDestroy(stream);
      stream = nullptr;
    }
    (void)cudaGetLastError();
  }
};

namespace {

// The state of a split that did not settle: NCCL's asynchronous split job may still write the child's handle into
// it, so it is never freed (kept reachable here, never destroyed). Only after a failure, which ends the job.
void keep_forever(std::unique_ptr<NcclCommunicator::Impl> impl) noexcept {
  static std::mutex mutex;
  static auto* kept = new std::vector<NcclCommunicator::Impl*>();
  NcclCommunicator::Impl* raw = impl.release();
  try {
    const std::lock_guard lock(mutex);
    kept->push_back(raw);
  } catch (...) {  // out of memory: the pointer is lost, the memory still never freed
  }
}

}  // namespace

NcclCommunicator::NcclCommunicator(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}

NcclCommunicator::~NcclCommunicator() {
  if (impl_) impl_->close(timeout());
}

std::unique_ptr<NcclCommunicator> NcclCommunicator::create(const BootstrapFn& bootstrap, int rank, int size, int device,
                                                           std::string name, std::chrono::milliseconds init_timeout) {
  const std::string label = "NCCL communicator '" + name + "'";
  if (size < 1) raise(ErrorKind::ValueError, label + ": size must be >= 1, got " + std::to_string(size));
  if (rank < 0 || rank >= size) {
    raise(ErrorKind::ValueError,
          label + ": rank " + std::to_string(rank) + " out of range for size " + std::to_string(size));
  }
  if (device < 0) raise(ErrorKind::ValueError, label + ": device must be >= 0, got " + std::to_string(device));
  if (size > 1 && !bootstrap) {
    raise(ErrorKind::ValueError, label + ": a bootstrap function is needed for " + std::to_string(size) + " ranks");
  }

  // Rank 0 creates the id; it broadcasts whatever happened so that no rank is left waiting.
  BootstrapPayload payload{};
  if (rank == 0) {
    payload.status = static_cast<std::int32_t>(ncclGetUniqueId(&payload.id));
    payload.magic = kPayloadMagic;
  }
  if (size > 1) bootstrap(&payload, sizeof payload);
  if (payload.magic != kPayloadMagic) {
    raise(ErrorKind::RuntimeError, label + ": rank " + std::to_string(rank) +
                                       " did not receive rank 0's NCCL id from the bootstrap broadcast");
  }
  if (payload.status != static_cast<std::int32_t>(ncclSuccess)) {
    raise(ErrorKind::RuntimeError,
          nccl_error_message("ncclGetUniqueId on rank 0", static_cast<ncclResult_t>(payload.status)) + "; " + label);
  }

  auto impl = std::make_unique<Impl>();
  impl->rank = rank;
  impl->size = size;
  impl->device = device;
  impl->name = std::move(name);
  impl->init_timeout = init_timeout;

  int count = 0;  // cudaGetDeviceCount leaves it unwritten without a driver
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    check_cuda(status, "cudaGetDeviceCount",
               impl->where() + " needs a CUDA device; none is usable (no GPU or no driver)");
  }
  if (device >= count) {
    raise(ErrorKind::RuntimeError, impl->where() + ": CUDA device " + std::to_string(device) +
                                       " requested but " + std::to_string(count) + " present");
  }
  check_cuda(cudaSetDevice(device), "cudaSetDevice(" + std::to_string(device) + ")", impl->where());
  check_cuda(cudaDeviceGetAttribute(&impl->cc_major, cudaDevAttrComputeCapabilityMajor, device),
             "cudaDeviceGetAttribute(compute capability major)", impl->where());
  check_cuda(cudaDeviceGetAttribute(&impl->cc_minor, cudaDevAttrComputeCapabilityMinor, device),
             "cudaDeviceGetAttribute(compute capability minor)", impl->where());

  ncclConfig_t config = nonblocking_config(impl->name);
  const Deadline deadline(init_timeout);
  const ncclResult_t result = ncclCommInitRankConfig(&impl->comm, size, payload.id, rank, &config);
  if (result != ncclSuccess && result != ncclInProgress) impl->fail_nccl("ncclCommInitRankConfig", result);
  if (impl->comm == nullptr) {
    raise(ErrorKind::RuntimeError, impl->where() + ": ncclCommInitRankConfig returned no communicator");
  }
  impl->settle(impl->comm, result, "ncclCommInitRankConfig", "init (waiting for every rank to join)", 0, deadline,
               Pace::Backoff);
  impl->allocate_resources();
  return std::unique_ptr<NcclCommunicator>(new NcclCommunicator(std::move(impl)));
}

int NcclCommunicator::rank() const noexcept { return impl_->rank; }
int NcclCommunicator::size() const noexcept { return impl_->size; }
const std::string& NcclCommunicator::name() const noexcept { return impl_->name; }
int NcclCommunicator::device() const noexcept { return impl_->device; }
int NcclCommunicator::compute_capability() const noexcept { return impl_->cc_major * 10 + impl_->cc_minor; }
void* NcclCommunicator::stream() const noexcept { return impl_->stream; }
bool NcclCommunicator::aborted() const noexcept { return impl_->aborted; }
void NcclCommunicator::set_init_timeout(std::chrono::milliseconds timeout) noexcept { impl_->init_timeout = timeout; }
std::chrono::milliseconds NcclCommunicator::init_timeout() const noexcept { return impl_->init_timeout; }

void NcclCommunicator::set_completion(comm::Completion completion) { Communicator::set_completion(completion); }

std::unique_ptr<comm::Stopwatch> NcclCommunicator::stopwatch(std::size_t marks) {
  Impl& s = *impl_;
  s.ensure_usable("stopwatch");
  s.select_device();  // the events belong to the current device: the stream's
  return std::make_unique<EventStopwatch>(s.stream, marks, s.where());
}

namespace {

void check_same_dtype(std::string_view op, DType in, DType out) {
  if (in != out) {
    raise(ErrorKind::ValueError, std::string(op) + ": input dtype " + std::string(to_string(in)) +
                                     " but output dtype " + std::string(to_string(out)));
  }
}

void check_counts(std::string_view op, std::size_t in, std::size_t expected_out, std::size_t out,
                  std::string_view rule) {
  if (out != expected_out) {
    raise(ErrorKind::ValueError, std::string(op) + ": " + std::to_string(in) + " input elements need " +
                                     std::to_string(expected_out) + " output elements (" + std::string(rule) +
                                     "), got " + std::to_string(out));
  }
}

void check_pointer(std::string_view op, const void* data, std::size_t count, std::string_view which) {
  if (data == nullptr && count > 0) {
    raise(ErrorKind::ValueError, std::string(op) + ": null " + std::string(which) + " buffer of " +
                                     std::to_string(count) + " elements");
  }
}

}  // namespace

void NcclCommunicator::all_reduce(comm::ConstBuffer in, comm::Buffer out, ReduceOp op) {
  Impl& s = *impl_;
  check_same_dtype("all_reduce", in.dtype, out.dtype);
  check_counts("all_reduce", in.count, in.count, out.count, "the same count");
  check_pointer("all_reduce", in.data, in.count, "input");
  check_pointer("all_reduce", out.data, out.count, "output");
  const ncclDataType_t type = to_nccl(in.dtype);
  check_reduction("all_reduce", in.dtype, op, s.cc_major, s.cc_minor);
  check_in_place(Collective::AllReduce, in.data, byte_size(in.count, in.dtype), out.data,
                 byte_size(out.count, out.dtype), s.rank);
  if (in.count == 0) return;
  s.run("ncclAllReduce", "all_reduce", byte_size(in.count, in.dtype), timeout(), completion(), [&] {
    return ncclAllReduce(in.data, out.data, in.count, type, to_nccl(op), s.comm, s.stream);
  });
}

void NcclCommunicator::all_gather(comm::ConstBuffer in, comm::Buffer out) {
  Impl& s = *impl_;
  const auto n = static_cast<std::size_t>(s.size);
  check_same_dtype("all_gather", in.dtype, out.dtype);
  check_counts("all_gather", in.count, in.count * n, out.count, "count * size");
  check_pointer("all_gather", in.data, in.count, "input");
  check_pointer("all_gather", out.data, out.count, "output");
  const ncclDataType_t type = to_nccl(in.dtype);
  check_in_place(Collective::AllGather, in.data, byte_size(in.count, in.dtype), out.data,
                 byte_size(out.count, out.dtype), s.rank);
  if (in.count == 0) return;
  s.run("ncclAllGather", "all_gather", byte_size(out.count, out.dtype), timeout(), completion(),
        [&] { return ncclAllGather(in.data, out.data, in.count, type, s.comm, s.stream); });
}

void NcclCommunicator::reduce_scatter(comm::ConstBuffer in, comm::Buffer out, ReduceOp op) {
  Impl& s = *impl_;
  const auto n = static_cast<std::size_t>(s.size);
  check_same_dtype("reduce_scatter", in.dtype, out.dtype);
  if (in.count % n != 0) {
    raise(ErrorKind::ValueError, "reduce_scatter: " + std::to_string(in.count) +
                                     " input elements do not divide among " + std::to_string(n) + " ranks");
  }
  check_counts("reduce_scatter", in.count, in.count / n, out.count, "count / size");
  check_pointer("reduce_scatter", in.data, in.count, "input");
  check_pointer("reduce_scatter", out.data, out.count, "output");
  const ncclDataType_t type = to_nccl(in.dtype);
  check_reduction("reduce_scatter", in.dtype, op, s.cc_major, s.cc_minor);
  check_in_place(Collective::ReduceScatter, in.data, byte_size(in.count, in.dtype), out.data,
                 byte_size(out.count, out.dtype), s.rank);
  if (out.count == 0) return;
  s.run("ncclReduceScatter", "reduce_scatter", byte_size(in.count, in.dtype), timeout(), completion(), [&] {
    return ncclReduceScatter(in.data, out.data, out.count, type, to_nccl(op), s.comm, s.stream);
  });
}

void NcclCommunicator::all_to_all(comm::ConstBuffer in, comm::Buffer out) {
  Impl& s = *impl_;
  const auto n = static_cast<std::size_t>(s.size);
  check_same_dtype("all_to_all", in.dtype, out.dtype);
  check_counts("all_to_all", in.count, in.count, out.count, "the same count");
  if (in.count % n != 0) {
    raise(ErrorKind::ValueError, "all_to_all: " + std::to_string(in.count) + " elements do not divide among " +
                                     std::to_string(n) + " ranks");
  }
  check_pointer("all_to_all", in.data, in.count, "input");
  check_pointer("all_to_all", out.data, out.count, "output");
  const ncclDataType_t type = to_nccl(in.dtype);
  check_in_place(Collective::AllToAll, in.data, byte_size(in.count, in.dtype), out.data,
                 byte_size(out.count, out.dtype), s.rank);
  if (in.count == 0) return;
  const std::size_t per_peer = in.count / n;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  s.run("ncclAlltoAll", "all_to_all", byte_size(in.count, in.dtype), timeout(), completion(),
        [&] { return ncclAlltoAll(in.data, out.data, per_peer, type, s.comm, s.stream); });
#else
  s.run("ncclSend/ncclRecv group", "all_to_all", byte_size(in.count, in.dtype), timeout(), completion(), [&] {
    return grouped_all_to_all(in.data, out.data, per_peer, type, static_cast<std::size_t>(itemsize(in.dtype)),
                              s.size, s.comm, s.stream);
  });
#endif
}

void NcclCommunicator::broadcast(comm::Buffer buffer, int root) {
  Impl& s = *impl_;
  if (root < 0 || root >= s.size) {
    raise(ErrorKind::ValueError, "broadcast: root " + std::to_string(root) + " out of range for communicator '" +
                                     s.name + "' of size " + std::to_string(s.size));
  }
  check_pointer("broadcast", buffer.data, buffer.count, "");
  const ncclDataType_t type = to_nccl(buffer.dtype);
  if (buffer.count == 0) return;
  s.run("ncclBroadcast", "broadcast", byte_size(buffer.count, buffer.dtype), timeout(), completion(), [&] {
    return ncclBroadcast(buffer.data, buffer.data, buffer.count, type, root, s.comm, s.stream);
  });
}

void NcclCommunicator::barrier() {
  Impl& s = *impl_;
  s.run("ncclAllReduce", "barrier", sizeof(std::int32_t), timeout(), completion(),
        [&] { return ncclAllReduce(s.scratch, s.scratch, 1, ncclInt32, ncclSum, s.comm, s.stream); });
}

void NcclCommunicator::synchronize() {
  Impl& s = *impl_;
  s.ensure_usable("synchronize");
  s.select_device();
  s.wait_stream("cudaStreamQuery", "synchronize", 0, Deadline(timeout()));
}

std::unique_ptr<comm::Communicator> NcclCommunicator::split(int color, int key, std::string name) {
  Impl& parent = *impl_;
  parent.ensure_usable("split");
  parent.select_device();
  // NCCL allows no operation outstanding on the parent of a split: complete what was queued.
  parent.wait_stream("cudaStreamQuery", "split (completing the work queued before it)", 0, Deadline(timeout()));

  auto child = std::make_unique<Impl>();
  child->device = parent.device;
  child->cc_major = parent.cc_major;
  child->cc_minor = parent.cc_minor;
  child->name = std::move(name);
  child->init_timeout = parent.init_timeout;
  child->rank = -1;
  child->size = 0;
  child->broken = true;  // until it has joined: a failed split aborts the child instead of finalizing it
  ncclConfig_t config = nonblocking_config(child->name);
  const Deadline deadline(parent.init_timeout);
  const std::string op = "split into '" + child->name + "'";
  // A non-blocking split returns at once with the handle NULL; NCCL's asynchronous init job writes the real one
  // into child->comm (heap memory, alive until the split settles) when it finishes, and reports its progress on
  // the PARENT: poll the parent's async error, then read the handle.
  const ncclResult_t result =
      ncclCommSplit(parent.comm, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &child->comm, &config);
  try {
    parent.settle(parent.comm, result, "ncclCommSplit", op, 0, deadline, Pace::Backoff);
  } catch (...) {
    // The parent is aborted (settle's failures abort it, timeouts included) before anything is freed; NCCL's job
    // may still write into child->comm, so the child's state is never freed.
    keep_forever(std::move(child));
    throw;
  }
  const ncclComm_t handle = __atomic_load_n(&child->comm, __ATOMIC_ACQUIRE);
  if (color < 0) return nullptr;  // NCCL_SPLIT_NOCOLOR: no communicator (the handle stays NULL)
  if (handle == nullptr) {
    parent.broken = true;
    raise(ErrorKind::RuntimeError, parent.where() + ": ncclCommSplit (color " + std::to_string(color) +
                                       ") settled without a communicator");
  }
  child->settle(handle, ncclSuccess, "ncclCommSplit", op, 0, deadline, Pace::Backoff);

  ncclResult_t query = ncclCommCount(handle, &child->size);
  if (query != ncclSuccess) child->fail_nccl("ncclCommCount", query);
  query = ncclCommUserRank(handle, &child->rank);
  if (query != ncclSuccess) child->fail_nccl("ncclCommUserRank", query);
  child->allocate_resources();
  child->broken = false;
  std::unique_ptr<NcclCommunicator> made(new NcclCommunicator(std::move(child)));
  made->set_timeout(timeout());
  return made;
}

void NcclCommunicator::abort(int /*error_code*/) noexcept { impl_->abort_now("abort()"); }

}  // namespace meshloom::nccl
