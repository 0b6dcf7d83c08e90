#include "meshloom/backends/mpi_communicator.hpp"

#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "meshloom/error.hpp"

namespace meshloom::mpi {

namespace {

std::string mpi_error_string(int code) {
  std::array<char, MPI_MAX_ERROR_STRING> text{};
  int length = 0;
  if (MPI_Error_string(code, text.data(), &length) != MPI_SUCCESS || length <= 0) {
    return "MPI error " + std::to_string(code);
  }
  return std::string(text.data(), static_cast<std::size_t>(length));
}

void check(int code, const std::string& what) {
  if (code != MPI_SUCCESS) raise(ErrorKind::RuntimeError, what + " failed: " + mpi_error_string(code));
}

// check() whose message is built only on failure: collectives stay free of string work on their hot path.
template <class What>
void check_lazy(int code, What&& what) {
  if (code != MPI_SUCCESS) raise(ErrorKind::RuntimeError, what() + " failed: " + mpi_error_string(code));
}

// Whether this node runs more ranks than the cores they may run on (Open MPI then sets mpi_yield_when_idle itself):
// the polling loop yields the core between polls only then. The cores are the union of the node's ranks' affinity
// masks: mpirun binding each rank to a core of its own gives as many cores as ranks (no yield needed), and a
// container or job limited to a cpuset gives that cpuset, however many cores the host has. Collective over `world`.
bool node_oversubscribed(MPI_Comm world) {
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) return true;
  int ranks = 1;
  MPI_Comm_size(node, &ranks);
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) {
    for (unsigned c = 0; c < std::thread::hardware_concurrency() && c < CPU_SETSIZE; ++c) CPU_SET(c, &mine);
  }
  cpu_set_t all;
  CPU_ZERO(&all);
  const int rc = MPI_Allreduce(&mine, &all, static_cast<int>(sizeof mine), MPI_BYTE, MPI_BOR, node);
  MPI_Comm_free(&node);
  if (rc != MPI_SUCCESS) return true;
  const int cores = CPU_COUNT(&all);
  return cores <= 0 || ranks > cores;
}

int to_mpi(ThreadLevel level) noexcept {
  switch (level) {
    case ThreadLevel::Single: return MPI_THREAD_SINGLE;
    case ThreadLevel::Funneled: return MPI_THREAD_FUNNELED;
    case ThreadLevel::Serialized: return MPI_THREAD_SERIALIZED;
    case ThreadLevel::Multiple: return MPI_THREAD_MULTIPLE;
  }
  return MPI_THREAD_SINGLE;
}

ThreadLevel from_mpi(int level) noexcept {
  if (level == MPI_THREAD_MULTIPLE) return ThreadLevel::Multiple;
  if (level == MPI_THREAD_SERIALIZED) return ThreadLevel::Serialized;
  if (level == MPI_THREAD_FUNNELED) return ThreadLevel::Funneled;
  return ThreadLevel::Single;
}

bool mpi_initialized() noexcept {
  int flag = 0;
  MPI_Initialized(&flag);
  return flag != 0;
}

bool mpi_finalized() noexcept {
  int flag = 0;
  MPI_Finalized(&flag);
  return flag != 0;
}

// The MPI datatype that reduces `dtype`, or MPI_DATATYPE_NULL when MPI has none.
MPI_Datatype reduction_type(DType dtype) noexcept {
  switch (dtype) {
    case DType::Float32: return MPI_FLOAT;
    case DType::Float64: return MPI_DOUBLE;
    case DType::Int32: return MPI_INT32_T;
    case DType::Int64: return MPI_INT64_T;
    case DType::Int8: return MPI_INT8_T;
    case DType::UInt8: return MPI_UINT8_T;
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float8E4M3:
    case DType::Float8E5M2: return MPI_DATATYPE_NULL;
  }
  return MPI_DATATYPE_NULL;
}

// Data movement: the reduction type where there is one, bytes otherwise.
struct Moved {
  MPI_Datatype type;
  std::size_t per_element;  // MPI elements per meshloom element
};

Moved moved_type(DType dtype) noexcept {
  const MPI_Datatype t = reduction_type(dtype);
  if (t != MPI_DATATYPE_NULL) return {t, 1};
  return {MPI_BYTE, static_cast<std::size_t>(itemsize(dtype))};
}

std::size_t bytes_of(std::size_t count, DType dtype) noexcept {
  return count * static_cast<std::size_t>(itemsize(dtype));
}

template <typename T>
void divide(void* data, std::size_t count, int by) {
  auto* p = static_cast<T*>(data);
  const auto d = static_cast<T>(by);
  for (std::size_t i = 0; i < count; ++i) p[i] = static_cast<T>(p[i] / d);
}

void divide_by(void* data, std::size_t count, DType dtype, int by) {
  switch (dtype) {
    case DType::Float32: divide<float>(data, count, by); break;
    case DType::Float64: divide<double>(data, count, by); break;
    case DType::Int32: divide<std::int32_t>(data, count, by); break;
    case DType::Int64: divide<std::int64_t>(data, count, by); break;
    case DType::Int8: divide<std::int8_t>(data, count, by); break;
    case DType::UInt8: divide<std::uint8_t>(data, count, by); break;
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float8E4M3:
    case DType::Float8E5M2: break;  // never reduced
  }
}

MPI_Op mpi_op(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: return MPI_SUM;
    case ReduceOp::Max: return MPI_MAX;
    case ReduceOp::Min: return MPI_MIN;
    case ReduceOp::Product: return MPI_PROD;
  }
  return MPI_SUM;
}

}  // namespace

std::string_view to_string(ThreadLevel level) noexcept {
  switch (level) {
    case ThreadLevel::Single: return "MPI_THREAD_SINGLE";
    case ThreadLevel::Funneled: return "MPI_THREAD_FUNNELED";
    case ThreadLevel::Serialized: return "MPI_THREAD_SERIALIZED";
    case ThreadLevel::Multiple: return "MPI_THREAD_MULTIPLE";
  }
  return "MPI_THREAD_SINGLE";
}

// ---- MpiSession -----------------------------------------------------------------------------------------

MpiSession::MpiSession(int* argc, char*** argv, ThreadLevel required) {
  if (mpi_finalized()) {
    raise(ErrorKind::RuntimeError, "MpiSession: MPI has already been finalised in this process and cannot be "
                                   "initialised again");
  }
  int provided = MPI_THREAD_SINGLE;
  if (mpi_initialized()) {
    MPI_Query_thread(&provided);
    provided_ = from_mpi(provided);
    return;
  }
  const int rc = MPI_Init_thread(argc, argv, to_mpi(required), &provided);
  if (rc != MPI_SUCCESS) {
    raise(ErrorKind::RuntimeError, "MpiSession: MPI_Init_thread(" + std::string(to_string(required)) +
                                       ") failed: " + mpi_error_string(rc) +
                                       " (run the program under mpirun, or check the Open MPI installation)");
  }
  owns_ = true;
  provided_ = from_mpi(provided);
  if (provided < to_mpi(required)) {
    MPI_Finalize();
    owns_ = false;
    raise(ErrorKind::RuntimeError, "MpiSession: MPI_Init_thread provided " + std::string(to_string(provided_)) +
                                       " but " + std::string(to_string(required)) + " was required");
  }
}

MpiSession::~MpiSession() {
  if (owns_ && !mpi_finalized()) MPI_Finalize();
}

int MpiSession::world_rank() const {
  int r = 0;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &r), "MPI_Comm_rank(MPI_COMM_WORLD)");
  return r;
}

int MpiSession::world_size() const {
  int s = 0;
  check(MPI_Comm_size(MPI_COMM_WORLD, &s), "MPI_Comm_size(MPI_COMM_WORLD)");
  return s;
}

bool MpiSession::active() noexcept { return mpi_initialized() && !mpi_finalized(); }

// ---- MpiCommunicator ------------------------------------------------------------------------------------

struct MpiCommunicator::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  std::string name;
  int rank = 0;
  int size = 1;
  int world_rank = 0;
  bool yield = true;  // node_oversubscribed(), found by world() and inherited by splits
  // Temporaries of collectives that timed out: MPI may still write them, so they live as long as this.
  std::vector<std::vector<std::byte>> abandoned;

  [[nodiscard]] std::string where() const {
    return "world rank " + std::to_string(world_rank) + " (rank " + std::to_string(rank) + " of " +
           std::to_string(size) + " on communicator '" + name + "')";
  }

  // Polls `request` until it completes, throwing TimeoutError after `timeout` (when non-zero).
  // `describe()` names the collective and its size (called only for the message). Never sleeps: a sleep between
  // polls quantizes every timed collective by the scheduler's timer slack (tens of microseconds). It spins on
  // MPI_Test (which drives Open MPI's progress engine) as MPI_Wait does, yielding the core between polls only where
  // the node runs more ranks than it has cores (what Open MPI's mpi_yield_when_idle does there); the clock is read
  // every kClockEvery polls.
  template <class Describe>
  void wait(MPI_Request& request, std::chrono::milliseconds timeout, const std::string& collective,
            Describe&& describe, std::vector<std::byte>* temporary = nullptr) {
    using clock = std::chrono::steady_clock;
    constexpr unsigned kClockEvery = 64;
    const auto start = clock::now();
    int done = 0;
    for (unsigned polls = 1;; ++polls) {
      const int rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS) {
        raise(ErrorKind::RuntimeError, where() + ": " + collective + " failed: " + mpi_error_string(rc));
      }
      if (done != 0) return;
      if (timeout.count() > 0 && polls % kClockEvery == 0 && clock::now() - start >= timeout) {
        if (temporary != nullptr) abandoned.push_back(std::move(*temporary));
        const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - start);
        throw comm::TimeoutError(where() + ": " + collective + " " + describe() +
                                 " did not complete within the timeout of " + std::to_string(timeout.count()) +
                                 " ms (waited " + std::to_string(waited.count()) +
                                 " ms): a peer did not join; the job must abort");
      }
      if (yield) std::this_thread::yield();
    }
  }

  [[nodiscard]] int checked_count(std::size_t count, const std::string& collective) const {
    if (count > static_cast<std::size_t>(INT_MAX)) {
      raise(ErrorKind::ValueError, collective + " on communicator '" + name + "': a count of " +
                                       std::to_string(count) + " MPI elements exceeds MPI's limit of " +
                                       std::to_string(INT_MAX));
    }
    return static_cast<int>(count);
  }

  void check_pointers(const void* in, std::size_t in_count, const void* out, std::size_t out_count,
                      const std::string& collective) const {
    if ((in_count > 0 && in == nullptr) || (out_count > 0 && out == nullptr)) {
      raise(ErrorKind::ValueError, collective + " on communicator '" + name + "': a null buffer with count " +
                                       std::to_string(in == nullptr ? in_count : out_count));
    }
  }

  void check_same_dtype(DType in, DType out, const std::string& collective) const {
    if (in != out) {
      raise(ErrorKind::ValueError, collective + " on communicator '" + name + "': the input is " +
                                       std::string(to_string(in)) + " but the output is " +
                                       std::string(to_string(out)));
    }
  }

  [[nodiscard]] MPI_Datatype reducible(DType dtype, ReduceOp op, const std::string& collective) const {
    const MPI_Datatype t = reduction_type(dtype);
    if (t == MPI_DATATYPE_NULL) {
      raise(ErrorKind::ValueError, collective + " (" + std::string(to_string(op)) + ") of " +
                                       std::string(to_string(dtype)) + " on communicator '" + name +
                                       "' is not supported by the MPI backend: MPI has no " +
                                       std::string(to_string(dtype)) +
                                       " reduction (all_gather, all_to_all and broadcast of it work)");
    }
    return t;
  }
};

MpiCommunicator::MpiCommunicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MpiCommunicator::~MpiCommunicator() {
  if (impl_ && impl_->comm != MPI_COMM_NULL && impl_->comm != MPI_COMM_WORLD && !mpi_finalized()) {
    MPI_Comm_free(&impl_->comm);
  }
}

std::unique_ptr<MpiCommunicator> MpiCommunicator::world(std::string name) {
  if (!mpi_initialized()) {
    raise(ErrorKind::RuntimeError, "MpiCommunicator::world: MPI is not initialised (create a "
                                   "meshloom::mpi::MpiSession first)");
  }
  if (mpi_finalized()) {
    raise(ErrorKind::RuntimeError, "MpiCommunicator::world: MPI has already been finalised");
  }
  auto impl = std::make_unique<Impl>();
  impl->comm = MPI_COMM_WORLD;
  impl->name = std::move(name);
  check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler(MPI_COMM_WORLD)");
  check(MPI_Comm_rank(MPI_COMM_WORLD, &impl->rank), "MPI_Comm_rank(MPI_COMM_WORLD)");
  check(MPI_Comm_size(MPI_COMM_WORLD, &impl->size), "MPI_Comm_size(MPI_COMM_WORLD)");
  impl->world_rank = impl->rank;
  impl->yield = node_oversubscribed(MPI_COMM_WORLD);
  return std::unique_ptr<MpiCommunicator>(new MpiCommunicator(std::move(impl)));
}

int MpiCommunicator::rank() const noexcept { return impl_->rank; }
int MpiCommunicator::size() const noexcept { return impl_->size; }
const std::string& MpiCommunicator::name() const noexcept { return impl_->name; }
int MpiCommunicator::world_rank() const noexcept { return impl_->world_rank; }

MpiCommunicator::NodePlace MpiCommunicator::node_place() {
  auto& im = *impl_;
  MPI_Comm node = MPI_COMM_NULL;
  check(MPI_Comm_split_type(im.comm, MPI_COMM_TYPE_SHARED, im.rank, MPI_INFO_NULL, &node),
        im.where() + ": MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
  NodePlace place;
  const int rc_rank = MPI_Comm_rank(node, &place.rank);
  const int rc_size = MPI_Comm_size(node, &place.size);
  const int rc_first = MPI_Allreduce(&im.rank, &place.first, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  check(rc_rank, im.where() + ": MPI_Comm_rank(node)");
  check(rc_size, im.where() + ": MPI_Comm_size(node)");
  check(rc_first, im.where() + ": MPI_Allreduce(node, MPI_MIN)");
  return place;
}

void MpiCommunicator::all_reduce(comm::ConstBuffer in, comm::Buffer out, ReduceOp op) {
  const std::string what = "all_reduce";
  auto& im = *impl_;
  im.check_same_dtype(in.dtype, out.dtype, what);
  const MPI_Datatype type = im.reducible(in.dtype, op, what);
  if (in.count != out.count) {
    raise(ErrorKind::ValueError, "all_reduce on communicator '" + im.name + "': in.count (" +
                                     std::to_string(in.count) + ") must equal out.count (" +
                                     std::to_string(out.count) + ")");
  }
  im.check_pointers(in.data, in.count, out.data, out.count, what);
  const int count = im.checked_count(in.count, what);
  const void* send = in.data == out.data ? MPI_IN_PLACE : in.data;
  MPI_Request request = MPI_REQUEST_NULL;
  check_lazy(MPI_Iallreduce(send, out.data, count, type, mpi_op(op), im.comm, &request),
             [&] { return im.where() + ": MPI_Iallreduce"; });
  im.wait(request, timeout(), what, [&] {
    return "of " + std::to_string(bytes_of(in.count, in.dtype)) + " bytes (" + std::to_string(in.count) + " x " +
           std::string(to_string(in.dtype)) + ", " + std::string(to_string(op)) + ")";
  });
  if (op == ReduceOp::Avg) divide_by(out.data, out.count, out.dtype, im.size);
}

void MpiCommunicator::all_gather(comm::ConstBuffer in, comm::Buffer out) {
  const std::string what = "all_gather";
  auto& im = *impl_;
  im.check_same_dtype(in.dtype, out.dtype, what);
  const auto n = static_cast<std::size_t>(im.size);
  if (out.count != in.count * n) {
    raise(ErrorKind::ValueError, "all_gather on communicator '" + im.name + "': out.count (" +
                                     std::to_string(out.count) + ") must be in.count (" + std::to_string(in.count) +
                                     ") * size (" + std::to_string(im.size) + ") = " + std::to_string(in.count * n));
  }
  im.check_pointers(in.data, in.count, out.data, out.count, what);
  const Moved m = moved_type(in.dtype);
  const int count = im.checked_count(in.count * m.per_element, what);
  const auto block = bytes_of(in.count, in.dtype);
  const void* own = static_cast<const std::byte*>(out.data) + block * static_cast<std::size_t>(im.rank);
  const void* send = (in.data == own && in.count > 0) ? MPI_IN_PLACE : in.data;
  MPI_Request request = MPI_REQUEST_NULL;
  check_lazy(MPI_Iallgather(send, count, m.type, out.data, count, m.type, im.comm, &request),
             [&] { return im.where() + ": MPI_Iallgather"; });
  im.wait(request, timeout(), what, [&] {
    return "of " + std::to_string(block) + " bytes per rank (" + std::to_string(in.count) + " x " +
           std::string(to_string(in.dtype)) + ", " + std::to_string(block * n) + " bytes gathered)";
  });
}

void MpiCommunicator::reduce_scatter(comm::ConstBuffer in, comm::Buffer out, ReduceOp op) {
  const std::string what = "reduce_scatter";
  auto& im = *impl_;
  im.check_same_dtype(in.dtype, out.dtype, what);
  const MPI_Datatype type = im.reducible(in.dtype, op, what);
  const auto n = static_cast<std::size_t>(im.size);
  if (in.count != out.count * n) {
    raise(ErrorKind::ValueError, "reduce_scatter on communicator '" + im.name + "': in.count (" +
                                     std::to_string(in.count) + ") must be out.count (" + std::to_string(out.count) +
                                     ") * size (" + std::to_string(im.size) + ") = " + std::to_string(out.count * n));
  }
  im.check_pointers(in.data, in.count, out.data, out.count, what);
  const int count = im.checked_count(out.count, what);
  MPI_Request request = MPI_REQUEST_NULL;
  const auto describe = [&] {
    return "of " + std::to_string(bytes_of(in.count, in.dtype)) + " bytes (" + std::to_string(in.count) + " x " +
           std::string(to_string(in.dtype)) + ", " + std::string(to_string(op)) + ", " +
           std::to_string(bytes_of(out.count, out.dtype)) + " bytes kept per rank)";
  };
  if (in.data == out.data) {
    // In place: MPI reads size() blocks from the buffer and leaves the result in its first block.
    check_lazy(MPI_Ireduce_scatter_block(MPI_IN_PLACE, out.data, count, type, mpi_op(op), im.comm, &request),
               [&] { return im.where() + ": MPI_Ireduce_scatter_block"; });
  } else {
    check_lazy(MPI_Ireduce_scatter_block(in.data, out.data, count, type, mpi_op(op), im.comm, &request),
               [&] { return im.where() + ": MPI_Ireduce_scatter_block"; });
  }
  im.wait(request, timeout(), what, describe);
  if (op == ReduceOp::Avg) divide_by(out.data, out.count, out.dtype, im.size);
}

void MpiCommunicator::all_to_all(comm::ConstBuffer in, comm::Buffer out) {
  const std::string what = "all_to_all";
  auto& im = *impl_;
  im.check_same_dtype(in.dtype, out.dtype, what);
  const auto n = static_cast<std::size_t>(im.size);
  if (in.count != out.count || in.count % n != 0) {
    raise(ErrorKind::ValueError, "all_to_all on communicator '" + im.name + "': in.count (" +
                                     std::to_string(in.count) + ") and out.count (" + std::to_string(out.count) +
                                     ") must be equal and a multiple of size (" + std::to_string(im.size) + ")");
  }
  im.check_pointers(in.data, in.count, out.data, out.count, what);
  const Moved m = moved_type(in.dtype);
  const int count = im.checked_count(in.count / n * m.per_element, what);
  const auto total = bytes_of(in.count, in.dtype);
  // In place: send from a copy (MPI_IN_PLACE for non-blocking all-to-all is not reliable everywhere).
  std::vector<std::byte> copy;
  const void* send = in.data;
  if (in.data == out.data && total > 0) {
    copy.resize(total);
    std::memcpy(copy.data(), in.data, total);
    send = copy.data();
  }
  MPI_Request request = MPI_REQUEST_NULL;
  check_lazy(MPI_Ialltoall(send, count, m.type, out.data, count, m.type, im.comm, &request),
             [&] { return im.where() + ": MPI_Ialltoall"; });
  im.wait(
      request, timeout(), what,
      [&] {
        return "of " + std::to_string(total) + " bytes (" + std::to_string(in.count) + " x " +
               std::string(to_string(in.dtype)) + ", " + std::to_string(total / n) + " bytes per peer)";
      },
      copy.empty() ? nullptr : &copy);
}

void MpiCommunicator::broadcast(comm::Buffer buffer, int root) {
  const std::string what = "broadcast";
  auto& im = *impl_;
  if (root < 0 || root >= im.size) {
    raise(ErrorKind::ValueError, "broadcast on communicator '" + im.name + "': root " + std::to_string(root) +
                                     " is out of range for size " + std::to_string(im.size));
  }
  im.check_pointers(buffer.data, buffer.count, buffer.data, buffer.count, what);
  const Moved m = moved_type(buffer.dtype);
  const int count = im.checked_count(buffer.count * m.per_element, what);
  MPI_Request request = MPI_REQUEST_NULL;
  check_lazy(MPI_Ibcast(buffer.data, count, m.type, root, im.comm, &request),
             [&] { return im.where() + ": MPI_Ibcast"; });
  im.wait(request, timeout(), what, [&] {
    return "of " + std::to_string(bytes_of(buffer.count, buffer.dtype)) + " bytes (" + std::to_string(buffer.count) +
           " x " + std::string(to_string(buffer.dtype)) + ", root " + std::to_string(root) + ")";
  });
}

void MpiCommunicator::barrier() {
  auto& im = *impl_;
  MPI_Request request = MPI_REQUEST_NULL;
  check_lazy(MPI_Ibarrier(im.comm, &request),
             [&] { return im.where() + ": MPI_Ibarrier"; });
  im.wait(request, timeout(), "barrier", [] { return std::string("(0 bytes)"); });
}

std::unique_ptr<comm::Communicator> MpiCommunicator::split(int color, int key, std::string name) {
  auto& im = *impl_;
  if (timeout().count() > 0) {
    // MPI_Comm_split blocks without a bound: first make sure every rank has arrived.
    MPI_Request request = MPI_REQUEST_NULL;
    check_lazy(MPI_Ibarrier(im.comm, &request),
               [&] { return im.where() + ": MPI_Ibarrier before MPI_Comm_split"; });
    im.wait(request, timeout(), "split",
            [&] { return "into '" + name + "' (0 bytes; the barrier before MPI_Comm_split)"; });
  }
  MPI_Comm child = MPI_COMM_NULL;
  check(MPI_Comm_split(im.comm, color < 0 ? MPI_UNDEFINED : color, key, &child),
        im.where() + ": MPI_Comm_split into '" + name + "'");
  if (child == MPI_COMM_NULL) return nullptr;
  auto impl = std::make_unique<Impl>();
  impl->comm = child;
  impl->world_rank = im.world_rank;
  impl->yield = im.yield;
  MPI_Comm_set_name(child, name.c_str());
  impl->name = std::move(name);
  check(MPI_Comm_rank(child, &impl->rank), "MPI_Comm_rank");
  check(MPI_Comm_size(child, &impl->size), "MPI_Comm_size");
  std::unique_ptr<MpiCommunicator> result(new MpiCommunicator(std::move(impl)));
  result->set_timeout(timeout());
  return result;
}

void MpiCommunicator::abort(int error_code) noexcept {
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, error_code);
}

}  // namespace meshloom::mpi
