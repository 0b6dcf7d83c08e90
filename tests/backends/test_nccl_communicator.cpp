// NcclCommunicator and DeviceBuffer. Argument and no-device error paths run everywhere; the collectives run on
// device buffers and skip cleanly without a GPU (label gpu): one rank on one GPU (every collective, every op and
// dtype, Queued completion and the stopwatch, stream-ordered copies, a split, the timeout and abort paths), and
// with two GPUs or more one rank per GPU in threads of this process (real reductions that tell the ops apart,
// block orders, split, timeout then abort).
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "meshloom/backends/device_buffer.hpp"
#include "meshloom/backends/nccl_communicator.hpp"
#include "meshloom/backends/nccl_runtime.hpp"
#include "meshloom/backends/nccl_types.hpp"
#include "meshloom/error.hpp"

using meshloom::DType;
using meshloom::Error;
using meshloom::ErrorKind;
using meshloom::ReduceOp;
using meshloom::comm::TimeoutError;
using meshloom::nccl::BootstrapFn;
using meshloom::nccl::DeviceBuffer;
using meshloom::nccl::NcclCommunicator;

namespace {

using namespace std::chrono_literals;

// Without a driver cudaGetDeviceCount fails (error 35) and leaves its output unwritten: start from 0.
int gpu_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

#define REQUIRE_GPUS(n)                                                                              \
  do {                                                                                               \
    const int have_ = gpu_count();                                                                   \
    if (have_ < (n)) GTEST_SKIP() << "needs " << (n) << " CUDA device(s), found " << have_;          \
  } while (false)

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

template <class F>
Error expect_error(ErrorKind kind, F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e;
  }
  ADD_FAILURE() << "no meshloom::Error thrown";
  return Error(ErrorKind::RuntimeError, "none");
}

const BootstrapFn kNoBootstrap{};

// ---- encodings of small positive integers, so every dtype carries predictable finite values ----

// The bits of a positive integer v exactly representable in a binary float of exp_bits exponent bits and man_bits
// mantissa bits (float16: 5/10, bfloat16: 8/7, e4m3: 4/3, e5m2: 5/2).
std::uint16_t float_bits(int v, int exp_bits, int man_bits) {
  int e = 0;
  while ((v >> (e + 1)) != 0) ++e;
  const int bias = (1 << (exp_bits - 1)) - 1;
  const int fraction = ((v - (1 << e)) << man_bits) >> e;
  return static_cast<std::uint16_t>(((e + bias) << man_bits) | fraction);
}
std::uint16_t half_bits(int v) { return float_bits(v, 5, 10); }      // 1 <= v <= 2048
std::uint16_t bfloat16_bits(int v) { return float_bits(v, 8, 7); }   // 1 <= v <= 256
std::uint8_t e4m3_bits(int v) { return static_cast<std::uint8_t>(float_bits(v, 4, 3)); }  // 1 <= v <= 16
std::uint8_t e5m2_bits(int v) { return static_cast<std::uint8_t>(float_bits(v, 5, 2)); }  // 1 <= v <= 8

// The value of such bits (normal numbers; sign included).
double float_value(unsigned bits, int exp_bits, int man_bits) {
  const unsigned mask = (1u << man_bits) - 1;
  const int exponent = static_cast<int>((bits >> man_bits) & ((1u << exp_bits) - 1));
  const int bias = (1 << (exp_bits - 1)) - 1;
  const double magnitude =
      (exponent == 0 ? 0.0 : 1.0) * std::ldexp(1.0 + static_cast<double>(bits & mask) / (mask + 1.0), exponent - bias);
  return ((bits >> (exp_bits + man_bits)) & 1u) != 0 ? -magnitude : magnitude;
}

// The bytes of the integers `values` in `dtype`.
std::vector<std::uint8_t> encode(DType dtype, const std::vector<int>& values) {
  std::vector<std::uint8_t> bytes;
  auto put = [&bytes](const auto x) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(&x);
    bytes.insert(bytes.end(), p, p + sizeof x);
  };
  for (const int v : values) {
    switch (dtype) {
      case DType::Float32: put(static_cast<float>(v)); break;
      case DType::Float64: put(static_cast<double>(v)); break;
      case DType::Int32: put(static_cast<std::int32_t>(v)); break;
      case DType::Int64: put(static_cast<std::int64_t>(v)); break;
      case DType::Int8: put(static_cast<std::int8_t>(v)); break;
      case DType::UInt8: put(static_cast<std::uint8_t>(v)); break;
      case DType::Float16: put(half_bits(v)); break;
      case DType::BFloat16: put(bfloat16_bits(v)); break;
      case DType::Float8E4M3: put(e4m3_bits(v)); break;
      case DType::Float8E5M2: put(e5m2_bits(v)); break;
    }
  }
  return bytes;
}

// The elements of `bytes` in `dtype`, as doubles.
std::vector<double> decode(DType dtype, const std::vector<std::uint8_t>& bytes) {
  std::vector<double> values;
  const auto size = static_cast<std::size_t>(meshloom::itemsize(dtype));
  for (std::size_t at = 0; at + size <= bytes.size(); at += size) {
    const std::uint8_t* p = bytes.data() + at;
    const auto get = [p](auto x) {
      std::memcpy(&x, p, sizeof x);
      return x;
    };
    switch (dtype) {
      case DType::Float32: values.push_back(static_cast<double>(get(0.0F))); break;
      case DType::Float64: values.push_back(get(0.0)); break;
      case DType::Int32: values.push_back(static_cast<double>(get(std::int32_t{0}))); break;
      case DType::Int64: values.push_back(static_cast<double>(get(std::int64_t{0}))); break;
      case DType::Int8: values.push_back(static_cast<double>(get(std::int8_t{0}))); break;
      case DType::UInt8: values.push_back(static_cast<double>(get(std::uint8_t{0}))); break;
      case DType::Float16: values.push_back(float_value(get(std::uint16_t{0}), 5, 10)); break;
      case DType::BFloat16: values.push_back(float_value(get(std::uint16_t{0}), 8, 7)); break;
      case DType::Float8E4M3: values.push_back(float_value(get(std::uint8_t{0}), 4, 3)); break;
      case DType::Float8E5M2: values.push_back(float_value(get(std::uint8_t{0}), 5, 2)); break;
    }
  }
  return values;
}

// The largest integer up to which every integer is exact in `dtype`.
double exact_integers_up_to(DType dtype) {
  switch (dtype) {
    case DType::Float32: return 16777216.0;
    case DType::Float64: return 9007199254740992.0;
    case DType::Float16: return 2048.0;
    case DType::BFloat16: return 256.0;
    case DType::Float8E4M3: return 16.0;
    case DType::Float8E5M2: return 8.0;
    case DType::Int8: return 127.0;
    case DType::UInt8: return 255.0;
    case DType::Int32: return 2147483647.0;
    case DType::Int64: return 4611686018427387904.0;
  }
  return 0.0;
}

bool is_float(DType dtype) {
  return dtype != DType::Int32 && dtype != DType::Int64 && dtype != DType::Int8 && dtype != DType::UInt8;
}

// Values 1..7 in a pattern (exact in every dtype, float8 e5m2 included).
std::vector<int> pattern(std::size_t count, int salt = 0) {
  std::vector<int> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = static_cast<int>((i * 5 + static_cast<std::size_t>(salt)) % 7) + 1;
  return v;
}

DeviceBuffer device_buffer(DType dtype, const std::vector<int>& values, int device = 0) {
  DeviceBuffer buffer(values.size(), dtype, device);
  const auto bytes = encode(dtype, values);
  buffer.copy_from_host(bytes.data(), bytes.size());
  return buffer;
}

std::vector<std::uint8_t> host_bytes(const DeviceBuffer& buffer) {
  std::vector<std::uint8_t> bytes(buffer.bytes());
  buffer.copy_to_host(bytes.data(), bytes.size());
  return bytes;
}

std::vector<std::uint8_t> host_bytes_on(const DeviceBuffer& buffer, void* stream) {
  std::vector<std::uint8_t> bytes(buffer.bytes());
  buffer.copy_to_host(bytes.data(), bytes.size(), stream);
  return bytes;
}

std::vector<std::int32_t> host_ints(const DeviceBuffer& buffer) { return buffer.download<std::int32_t>(); }

}  // namespace

// ---------------------------------------------------------------- everywhere: arguments and missing devices

TEST(NcclCommunicator, BadArgumentsAreValueErrorsBeforeAnyBootstrap) {
  int calls = 0;
  const BootstrapFn counting = [&calls](void*, std::size_t) { ++calls; };
  auto e = expect_error(ErrorKind::ValueError, [&] { (void)NcclCommunicator::create(counting, 0, 0, 0, "world"); });
  EXPECT_TRUE(contains(e.message(), "size must be >= 1")) << e.what();
  e = expect_error(ErrorKind::ValueError, [&] { (void)NcclCommunicator::create(counting, 2, 2, 0, "world"); });
  EXPECT_TRUE(contains(e.message(), "rank 2 out of range for size 2")) << e.what();
  e = expect_error(ErrorKind::ValueError, [&] { (void)NcclCommunicator::create(counting, -1, 2, 0, "world"); });
  EXPECT_TRUE(contains(e.message(), "rank -1")) << e.what();
  e = expect_error(ErrorKind::ValueError, [&] { (void)NcclCommunicator::create(counting, 0, 2, -1, "tp"); });
  EXPECT_TRUE(contains(e.message(), "'tp'")) << e.what();
  EXPECT_TRUE(contains(e.message(), "device must be >= 0")) << e.what();
  e = expect_error(ErrorKind::ValueError, [&] { (void)NcclCommunicator::create(kNoBootstrap, 1, 2, 0, "world"); });
  EXPECT_TRUE(contains(e.message(), "bootstrap")) << e.what();
  EXPECT_EQ(calls, 0);
}

TEST(NcclCommunicator, WithoutAGpuCreatingIsAClearRuntimeError) {
  if (gpu_count() > 0) GTEST_SKIP() << "a GPU is present";
  const auto e =
      expect_error(ErrorKind::RuntimeError, [] { (void)NcclCommunicator::create(kNoBootstrap, 0, 1, 0, "world"); });
  EXPECT_TRUE(contains(e.message(), "cudaGetDeviceCount failed")) << e.what();
  EXPECT_TRUE(contains(e.message(), "rank 0 of communicator 'world'")) << e.what();
  EXPECT_TRUE(contains(e.message(), "needs a CUDA device")) << e.what();
  EXPECT_EQ(meshloom::nccl::cuda_device_count(), 0);
}

TEST(NcclCommunicator, AMissingDeviceIsARuntimeError) {
  const int missing = gpu_count() + 3;
  const auto e = expect_error(ErrorKind::RuntimeError,
                              [&] { (void)NcclCommunicator::create(kNoBootstrap, 0, 1, missing, "world"); });
  EXPECT_TRUE(contains(e.message(), "rank 0 of communicator 'world'")) << e.what();
  if (gpu_count() > 0) {
    EXPECT_TRUE(contains(e.message(), "requested but")) << e.what();
  }
}

// Rank 0 creates the id and broadcasts it with a status; the other ranks take theirs from the broadcast. The
// device step then fails (no such device), after the bootstrap, as it must for the other ranks not to hang in
// the broadcast.
TEST(NcclCommunicator, BootstrapCarriesRankZerosIdToTheOthers) {
  const int missing = gpu_count() + 3;
  std::vector<std::uint8_t> sent;
  const BootstrapFn root = [&sent](void* bytes, std::size_t n) {
    const auto* p = static_cast<const std::uint8_t*>(bytes);
    sent.assign(p, p + n);
  };
  auto e = expect_error(ErrorKind::RuntimeError, [&] { (void)NcclCommunicator::create(root, 0, 2, missing, "w"); });
  ASSERT_GE(sent.size(), std::size_t{128});  // NCCL_UNIQUE_ID_BYTES and more
  EXPECT_FALSE(contains(e.message(), "bootstrap")) << e.what();

  const BootstrapFn receiver = [&sent](void* bytes, std::size_t n) {
    ASSERT_EQ(n, sent.size());
    std::memcpy(bytes, sent.data(), n);
  };
  e = expect_error(ErrorKind::RuntimeError, [&] { (void)NcclCommunicator::create(receiver, 1, 2, missing, "w"); });
  EXPECT_TRUE(contains(e.message(), "rank 1 of communicator 'w'")) << e.what();
  EXPECT_FALSE(contains(e.message(), "bootstrap")) << e.what();

  const BootstrapFn silent = [](void*, std::size_t) {};
  e = expect_error(ErrorKind::RuntimeError, [&] { (void)NcclCommunicator::create(silent, 1, 2, missing, "w"); });
  EXPECT_TRUE(contains(e.message(), "did not receive rank 0's NCCL id")) << e.what();
}

TEST(DeviceBuffer, HostElementSizeAndCountAreChecked) {
  DeviceBuffer empty;
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(empty.bytes(), 0u);
  auto e = expect_error(ErrorKind::ValueError, [&] { empty.upload(std::vector<double>(1)); });
  EXPECT_TRUE(contains(e.message(), "float32")) << e.what();
  e = expect_error(ErrorKind::ValueError, [&] { empty.upload(std::vector<float>(3)); });
  EXPECT_TRUE(contains(e.message(), "3 host elements")) << e.what();
  const std::uint8_t byte = 0;
  e = expect_error(ErrorKind::ValueError, [&] { empty.copy_from_host(&byte, 1); });
  EXPECT_TRUE(contains(e.message(), "1 bytes into a buffer of 0")) << e.what();
}

TEST(DeviceBuffer, WithoutAGpuAllocatingIsARuntimeError) {
  if (gpu_count() > 0) GTEST_SKIP() << "a GPU is present";
  const auto e = expect_error(ErrorKind::RuntimeError, [] { DeviceBuffer b(16, DType::Float32, 0); });
  EXPECT_TRUE(contains(e.message(), "cudaSetDevice(0) failed")) << e.what();
}

// ---------------------------------------------------------------- one rank on one GPU
//
// A world of 1 (create with size 1, no bootstrap) exercises every code path but the exchange itself: every
// collective, both completions, the stopwatch, a split into a 1-rank child, the timeout and abort paths. Work is
// held back on the communicator's stream by a StreamGate (a host function that waits for a flag), which makes
// ordering and timeout checks deterministic.

namespace {

// Blocks `stream` until it opens: a host function on a side stream waits for a flag, and `stream` waits for the
// side stream. It opens on open(), at the time open_after() sets, or by itself 10 s after its creation, so that no
// test can hang on it; the destructor opens it and waits for the side stream.
class StreamGate {
public:
  explicit StreamGate(void* stream) : opens_at_(std::chrono::steady_clock::now() + 10s) {
    expect_cuda(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    expect_cuda(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    expect_cuda(cudaLaunchHostFunc(side_, &StreamGate::wait, &open_), "cudaLaunchHostFunc");
    expect_cuda(cudaEventRecord(event_, side_), "cudaEventRecord");
    expect_cuda(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), event_, 0), "cudaStreamWaitEvent");
    opener_ = std::thread([this] {
      std::unique_lock lock(mutex_);
      // opens_at_ may move (open_after notifies): wait until it has passed or the gate was opened.
      while (!open_.load() && std::chrono::steady_clock::now() < opens_at_) cv_.wait_until(lock, opens_at_);
      open_.store(true);
    });
  }
  ~StreamGate() {
    open();
    opener_.join();
    while (cudaStreamQuery(side_) == cudaErrorNotReady) std::this_thread::yield();
    (void)cudaStreamDestroy(side_);
    (void)cudaEventDestroy(event_);
  }
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;

  void open() {
    {
      const std::lock_guard lock(mutex_);
      open_.store(true);
    }
    cv_.notify_all();
  }
  // Opens the gate `delay` from now, from another thread (for calls that themselves wait on the gated stream).
  void open_after(std::chrono::milliseconds delay) {
    {
      const std::lock_guard lock(mutex_);
      opens_at_ = std::chrono::steady_clock::now() + delay;
    }
    cv_.notify_all();
  }

private:
  static void expect_cuda(cudaError_t status, const char* call) {
    EXPECT_EQ(status, cudaSuccess) << call << ": " << cudaGetErrorString(status);
  }
  static void CUDART_CB wait(void* flag) {
    const auto* open = static_cast<const std::atomic<bool>*>(flag);
    while (!open->load()) std::this_thread::yield();
  }

  cudaStream_t side_ = nullptr;
  cudaEvent_t event_ = nullptr;
  std::atomic<bool> open_{false};
  std::mutex mutex_;
  std::condition_variable cv_;
  std::chrono::steady_clock::time_point opens_at_;
  std::thread opener_;
};

bool fp8_reductions(const NcclCommunicator& comm) {
  return meshloom::nccl::kHasFloat8 && comm.compute_capability() >= 90;
}

}  // namespace

class NcclSingleRank : public ::testing::Test {
protected:
  void SetUp() override {
    REQUIRE_GPUS(1);
    comm_ = NcclCommunicator::create(kNoBootstrap, 0, 1, 0, "world", 60s);
    comm_->set_timeout(60s);
  }
  std::unique_ptr<NcclCommunicator> comm_;
};

TEST_F(NcclSingleRank, Identity) {
  EXPECT_EQ(comm_->rank(), 0);
  EXPECT_EQ(comm_->size(), 1);
  EXPECT_EQ(comm_->name(), "world");
  EXPECT_EQ(comm_->backend(), "nccl");
  EXPECT_EQ(comm_->device(), 0);
  EXPECT_NE(comm_->stream(), nullptr);
  EXPECT_FALSE(comm_->aborted());
  EXPECT_EQ(comm_->init_timeout(), 60s);
  EXPECT_EQ(comm_->completion(), meshloom::comm::Completion::Blocking);
  const auto info = meshloom::nccl::runtime_info();
  ASSERT_FALSE(info.devices.empty());
  EXPECT_EQ(comm_->compute_capability(), info.devices[0].compute_major * 10 + info.devices[0].compute_minor);
}

TEST_F(NcclSingleRank, DeviceBufferRoundTrips) {
  DeviceBuffer b(5, DType::Int32, 0);
  b.upload(std::vector<std::int32_t>{1, -2, 3, -4, 5});
  EXPECT_EQ(b.download<std::int32_t>(), (std::vector<std::int32_t>{1, -2, 3, -4, 5}));
  b.fill_zero();
  EXPECT_EQ(b.download<std::int32_t>(), (std::vector<std::int32_t>(5, 0)));
  b.upload(std::vector<std::int32_t>{6, 7, 8, 9, 10}, comm_->stream());
  EXPECT_EQ(b.download<std::int32_t>(comm_->stream()), (std::vector<std::int32_t>{6, 7, 8, 9, 10}));
  b.fill_zero(comm_->stream());
  EXPECT_EQ(b.download<std::int32_t>(comm_->stream()), (std::vector<std::int32_t>(5, 0)));
  DeviceBuffer moved = std::move(b);
  EXPECT_EQ(b.data(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(moved.count(), 5u);
}

// Copies and clears given the communicator's stream run after the collectives queued on it; the legacy default
// stream's do not (the stream is non-blocking), which is why the launcher passes the stream.
TEST_F(NcclSingleRank, StreamOrderedCopiesWaitForQueuedCollectives) {
  const auto values = pattern(1 << 16);
  const DeviceBuffer in = device_buffer(DType::Int32, values);
  DeviceBuffer out(values.size(), DType::Int32, 0);
  out.fill_zero();
  comm_->set_completion(meshloom::comm::Completion::Queued);
  {
    StreamGate gate(comm_->stream());
    comm_->all_reduce(in.const_buffer(), out.buffer(), ReduceOp::Sum);  // queued behind the gate
    // Unordered: runs now, before the collective.
    EXPECT_EQ(out.download<std::int32_t>(), std::vector<std::int32_t>(values.size(), 0));
    // Ordered: waits for the collective, which waits for the gate.
    gate.open_after(100ms);
    EXPECT_EQ(host_bytes_on(out, comm_->stream()), encode(DType::Int32, values));
  }
  {
    StreamGate gate(comm_->stream());
    comm_->all_reduce(in.const_buffer(), out.buffer(), ReduceOp::Sum);
    gate.open_after(100ms);
    out.fill_zero(comm_->stream());  // after the collective: the zeros stay
    EXPECT_EQ(out.download<std::int32_t>(comm_->stream()), std::vector<std::int32_t>(values.size(), 0));
  }
  {
    DeviceBuffer fresh(values.size(), DType::Int32, 0);
    fresh.fill_zero();
    StreamGate gate(comm_->stream());
    const auto bytes = encode(DType::Int32, values);
    gate.open_after(100ms);
    fresh.copy_from_host(bytes.data(), bytes.size(), comm_->stream());  // waits for the gate, then copies
    comm_->all_reduce(fresh.const_buffer(), out.buffer(), ReduceOp::Sum);
    comm_->synchronize();
    EXPECT_EQ(host_bytes(out), bytes);
  }
  comm_->set_completion(meshloom::comm::Completion::Blocking);
}

// With one rank every reduction gives its input back bit for bit, whatever the op (avg divides by 1): a world of 1
// cannot tell the ops apart. This checks that NCCL accepts every op on every dtype it reduces, out of place and in
// place, and carries the bytes unchanged; the ops are told apart by NcclMultiRank.EveryOpOnEveryDtype (two GPUs or
// more) and their mapping by NcclTypes.MapsEveryReduceOp.
TEST_F(NcclSingleRank, AllReduceEveryOpOnEveryDtype) {
  for (const auto name : meshloom::dtype_names()) {
    const DType dtype = *meshloom::dtype_from_string(name);
    const bool float8 = dtype == DType::Float8E4M3 || dtype == DType::Float8E5M2;
    if (float8 && !fp8_reductions(*comm_)) continue;
    for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max, ReduceOp::Min, ReduceOp::Product}) {
      if (float8 && op == ReduceOp::Avg) continue;  // a ValueError: Float8ReductionsFollowTheComputeCapability
      const std::string what = std::string(name) + " " + std::string(meshloom::to_string(op));
      SCOPED_TRACE(what);
      const auto values = pattern(1000);
      const DeviceBuffer in = device_buffer(dtype, values);
      DeviceBuffer out(values.size(), dtype, 0);
      DeviceBuffer inplace = device_buffer(dtype, values);
      DeviceBuffer scattered(values.size(), dtype, 0);
      try {
        comm_->all_reduce(in.const_buffer(), out.buffer(), op);
        EXPECT_EQ(host_bytes(out), encode(dtype, values));
        comm_->all_reduce(inplace.const_buffer(), inplace.buffer(), op);  // in place
        EXPECT_EQ(host_bytes(inplace), encode(dtype, values));
        // reduce_scatter of one rank: the whole input is rank 0's block
        comm_->reduce_scatter(in.const_buffer(), scattered.buffer(), op);
        EXPECT_EQ(host_bytes(scattered), encode(dtype, values));
      } catch (const std::exception& e) {
        ADD_FAILURE() << what << ": " << e.what();
        comm_ = NcclCommunicator::create(kNoBootstrap, 0, 1, 0, "world", 60s);  // the failure aborted it
        comm_->set_timeout(60s);
      }
    }
  }
}

// float8 reductions: carried on compute capability 9.0 and later, a ValueError naming the dtype and the device's
// capability before; avg is a ValueError everywhere (NCCL refuses it), and the communicator stays usable. Moving
// float8 works everywhere.
TEST_F(NcclSingleRank, Float8ReductionsFollowTheComputeCapability) {
  if (!meshloom::nccl::kHasFloat8) GTEST_SKIP() << "this nccl.h has no float8 types";
  const auto values = pattern(64);
  for (const DType dtype : {DType::Float8E4M3, DType::Float8E5M2}) {
    SCOPED_TRACE(std::string(meshloom::to_string(dtype)));
    const DeviceBuffer in = device_buffer(dtype, values);
    DeviceBuffer out(values.size(), dtype, 0);
    if (fp8_reductions(*comm_)) {
      comm_->all_reduce(in.const_buffer(), out.buffer(), ReduceOp::Max);
      EXPECT_EQ(host_bytes(out), encode(dtype, values));
      const auto e = expect_error(ErrorKind::ValueError,
                                  [&] { comm_->all_reduce(in.const_buffer(), out.buffer(), ReduceOp::Avg); });
      EXPECT_TRUE(contains(e.message(), "with op avg")) << e.what();
      EXPECT_FALSE(comm_->aborted());
    } else {
      const auto e = expect_error(ErrorKind::ValueError,
                                  [&] { comm_->all_reduce(in.const_buffer(), out.buffer(), ReduceOp::Sum); });
      EXPECT_TRUE(contains(e.message(), std::string(meshloom::to_string(dtype)))) << e.what();
      EXPECT_TRUE(contains(e.message(), std::to_string(comm_->compute_capability() / 10) + "." +
                                            std::to_string(comm_->compute_capability() % 10)))
          << e.what();
      (void)expect_error(ErrorKind::ValueError,
                         [&] { comm_->reduce_scatter(in.const_buffer(), out.buffer(), ReduceOp::Sum); });
    }
    comm_->all_gather(in.const_buffer(), out.buffer());
    EXPECT_EQ(host_bytes(out), encode(dtype, values));
  }
}

TEST_F(NcclSingleRank, GatherScatterAllToAllBroadcast) {
  for (const DType dtype : {DType::Float32, DType::BFloat16, DType::Int64, DType::UInt8}) {
    SCOPED_TRACE(std::string(meshloom::to_string(dtype)));
    const auto values = pattern(333, 2);
    const DeviceBuffer in = device_buffer(dtype, values);
    DeviceBuffer out(values.size(), dtype, 0);
    comm_->all_gather(in.const_buffer(), out.buffer());
    EXPECT_EQ(host_bytes(out), encode(dtype, values));
    out.fill_zero();
    comm_->reduce_scatter(in.const_buffer(), out.buffer(), ReduceOp::Sum);
    EXPECT_EQ(host_bytes(out), encode(dtype, values));
    out.fill_zero();
    comm_->all_to_all(in.const_buffer(), out.buffer());
    EXPECT_EQ(host_bytes(out), encode(dtype, values));
    DeviceBuffer b = device_buffer(dtype, values);
    comm_->broadcast(b.buffer(), 0);
    EXPECT_EQ(host_bytes(b), encode(dtype, values));
    // NCCL's in place on rank 0: all_gather in == out, reduce_scatter out == in.
    DeviceBuffer g = device_buffer(dtype, values);
    comm_->all_gather(g.const_buffer(), g.buffer());
    EXPECT_EQ(host_bytes(g), encode(dtype, values));
    DeviceBuffer r = device_buffer(dtype, values);
    comm_->reduce_scatter(r.const_buffer(), r.buffer(), ReduceOp::Sum);
    EXPECT_EQ(host_bytes(r), encode(dtype, values));
  }
  comm_->barrier();
  comm_->synchronize();
}

// Queued: every collective returns once enqueued (the gate holds the stream, so nothing has run yet), and
// synchronize() completes them all.
TEST_F(NcclSingleRank, QueuedCollectivesCompleteAtSynchronize) {
  const auto values = pattern(4096, 3);
  const auto expected = encode(DType::Float32, values);
  const DeviceBuffer in = device_buffer(DType::Float32, values);
  DeviceBuffer reduced(values.size(), DType::Float32, 0);
  DeviceBuffer gathered(values.size(), DType::Float32, 0);
  DeviceBuffer scattered(values.size(), DType::Float32, 0);
  DeviceBuffer exchanged(values.size(), DType::Float32, 0);
  DeviceBuffer broadcast = device_buffer(DType::Float32, values);
  for (DeviceBuffer* b : {&reduced, &gathered, &scattered, &exchanged}) b->fill_zero();
  comm_->set_completion(meshloom::comm::Completion::Queued);
  EXPECT_EQ(comm_->completion(), meshloom::comm::Completion::Queued);
  {
    StreamGate gate(comm_->stream());
    const auto start = std::chrono::steady_clock::now();
    comm_->all_reduce(in.const_buffer(), reduced.buffer(), ReduceOp::Sum);
    comm_->all_gather(in.const_buffer(), gathered.buffer());
    comm_->reduce_scatter(in.const_buffer(), scattered.buffer(), ReduceOp::Max);
    comm_->all_to_all(in.const_buffer(), exchanged.buffer());
    comm_->broadcast(broadcast.buffer(), 0);
    comm_->barrier();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);  // returned although nothing could run
    EXPECT_EQ(cudaStreamQuery(static_cast<cudaStream_t>(comm_->stream())), cudaErrorNotReady);
    EXPECT_EQ(reduced.download<float>(), std::vector<float>(values.size(), 0.0F));  // not yet written
    gate.open();
    comm_->synchronize();
  }
  EXPECT_EQ(cudaStreamQuery(static_cast<cudaStream_t>(comm_->stream())), cudaSuccess);
  for (const DeviceBuffer* b : {&reduced, &gathered, &scattered, &exchanged, &broadcast}) {
    EXPECT_EQ(host_bytes(*b), expected);
  }
  comm_->set_completion(meshloom::comm::Completion::Blocking);
}

// CUDA events on the stream: back-to-back queued collectives between marks, intervals read after synchronize().
TEST_F(NcclSingleRank, StopwatchTimesQueuedCollectives) {
  constexpr std::size_t kIterations = 8;
  const std::size_t count = std::size_t{1} << 22;  // 16 MiB of float32
  DeviceBuffer in(count, DType::Float32, 0);
  DeviceBuffer out(count, DType::Float32, 0);
  in.fill_zero();
  comm_->set_completion(meshloom::comm::Completion::Queued);
  const auto watch = comm_->stopwatch(kIterations + 1);
  ASSERT_NE(watch, nullptr);
  for (int round = 0; round < 2; ++round) {  // reset() reuses the events
    watch->reset();
    watch->mark();
    for (std::size_t i = 0; i < kIterations; ++i) {
      comm_->all_reduce(in.const_buffer(), out.buffer(), ReduceOp::Sum);
      watch->mark();
    }
    comm_->synchronize();
    const std::vector<double> intervals = watch->intervals_us();
    ASSERT_EQ(intervals.size(), kIterations);
    for (const double us : intervals) {
      EXPECT_GT(us, 0.0);
      EXPECT_LT(us, 1e6);
    }
  }
  const auto e = expect_error(ErrorKind::ValueError, [&] { watch->mark(); });
  EXPECT_TRUE(contains(e.message(), "past the capacity of 9")) << e.what();
  // Marks still pending on a gated stream cannot be read yet: RuntimeError, not a wrong number.
  {
    const auto pending = comm_->stopwatch(2);
    StreamGate gate(comm_->stream());
    pending->mark();
    pending->mark();
    const auto not_ready = expect_error(ErrorKind::RuntimeError, [&] { (void)pending->intervals_us(); });
    EXPECT_TRUE(contains(not_ready.message(), "cudaEventElapsedTime")) << not_ready.what();
    gate.open();
    comm_->synchronize();
    EXPECT_EQ(pending->intervals_us().size(), 1u);
  }
  comm_->set_completion(meshloom::comm::Completion::Blocking);
}

// A zero count returns before touching the stream: with the stream held by a gate, a Blocking collective that
// enqueued or waited for anything would time out instead.
TEST_F(NcclSingleRank, ZeroCountsReturnAtOnce) {
  const meshloom::comm::ConstBuffer in{nullptr, 0, DType::Float32};
  const meshloom::comm::Buffer out{nullptr, 0, DType::Float32};
  comm_->set_timeout(300ms);
  {
    StreamGate gate(comm_->stream());
    const auto start = std::chrono::steady_clock::now();
    EXPECT_NO_THROW(comm_->all_reduce(in, out, ReduceOp::Sum));
    EXPECT_NO_THROW(comm_->all_gather(in, out));
    EXPECT_NO_THROW(comm_->reduce_scatter(in, out, ReduceOp::Sum));
    EXPECT_NO_THROW(comm_->all_to_all(in, out));
    EXPECT_NO_THROW(comm_->broadcast(out, 0));
    EXPECT_LT(std::chrono::steady_clock::now() - start, 300ms);
    EXPECT_FALSE(comm_->aborted());
    gate.open();
  }
  comm_->set_timeout(60s);
  comm_->synchronize();
  comm_->barrier();
}

TEST_F(NcclSingleRank, BadBuffersAreValueErrors) {
  DeviceBuffer f(8, DType::Float32, 0);
  DeviceBuffer g(4, DType::Float32, 0);
  DeviceBuffer h(8, DType::Float16, 0);
  auto e = expect_error(ErrorKind::ValueError, [&] { comm_->all_reduce(f.const_buffer(), g.buffer(), ReduceOp::Sum); });
  EXPECT_TRUE(contains(e.message(), "all_reduce")) << e.what();
  e = expect_error(ErrorKind::ValueError, [&] { comm_->all_reduce(f.const_buffer(), h.buffer(), ReduceOp::Sum); });
  EXPECT_TRUE(contains(e.message(), "float16")) << e.what();
  e = expect_error(ErrorKind::ValueError, [&] { comm_->all_gather(f.const_buffer(), g.buffer()); });
  EXPECT_TRUE(contains(e.message(), "count * size")) << e.what();
  e = expect_error(ErrorKind::ValueError, [&] { comm_->broadcast(f.buffer(), 1); });
  EXPECT_TRUE(contains(e.message(), "root 1 out of range")) << e.what();
  e = expect_error(ErrorKind::ValueError, [&] {
    comm_->all_reduce({nullptr, 8, DType::Float32}, f.buffer(), ReduceOp::Sum);
  });
  EXPECT_TRUE(contains(e.message(), "null input")) << e.what();
  // In place where NCCL cannot honour it.
  e = expect_error(ErrorKind::ValueError, [&] { comm_->all_to_all(f.const_buffer(), f.buffer()); });
  EXPECT_TRUE(contains(e.message(), "all_to_all in place")) << e.what();
  auto* base = static_cast<float*>(f.data());
  e = expect_error(ErrorKind::ValueError, [&] {
    comm_->all_reduce({base, 4, DType::Float32}, {base + 2, 4, DType::Float32}, ReduceOp::Sum);
  });
  EXPECT_TRUE(contains(e.message(), "overlap")) << e.what();
  e = expect_error(ErrorKind::ValueError, [&] {
    comm_->reduce_scatter({base, 4, DType::Float32}, {base + 1, 4, DType::Float32}, ReduceOp::Sum);
  });
  EXPECT_TRUE(contains(e.message(), "reduce_scatter")) << e.what();
  // The communicator is still usable after argument errors.
  EXPECT_FALSE(comm_->aborted());
  comm_->barrier();
}

// A split of the 1-rank world into a 1-rank child that works (NCCL fills the child's handle only when its
// asynchronous init finishes), and color < 0 gives none.
TEST_F(NcclSingleRank, SplitsAndNoColor) {
  comm_->set_init_timeout(30s);
  auto sub = comm_->split(7, 0, "sub");
  ASSERT_NE(sub, nullptr);
  EXPECT_EQ(sub->rank(), 0);
  EXPECT_EQ(sub->size(), 1);
  EXPECT_EQ(sub->name(), "sub");
  EXPECT_EQ(sub->timeout(), comm_->timeout());
  EXPECT_EQ(sub->completion(), meshloom::comm::Completion::Blocking);
  auto* nccl_sub = dynamic_cast<NcclCommunicator*>(sub.get());
  ASSERT_NE(nccl_sub, nullptr);
  EXPECT_EQ(nccl_sub->init_timeout(), 30s);
  EXPECT_NE(nccl_sub->stream(), comm_->stream());
  const auto values = pattern(64);
  const DeviceBuffer in = device_buffer(DType::Int32, values);
  DeviceBuffer out(values.size(), DType::Int32, 0);
  sub->all_reduce(in.const_buffer(), out.buffer(), ReduceOp::Sum);
  EXPECT_EQ(host_bytes(out), encode(DType::Int32, values));
  // Queued and timed on the child too.
  sub->set_completion(meshloom::comm::Completion::Queued);
  const auto watch = sub->stopwatch(2);
  watch->mark();
  sub->all_gather(in.const_buffer(), out.buffer());
  watch->mark();
  sub->synchronize();
  ASSERT_EQ(watch->intervals_us().size(), 1u);
  EXPECT_GT(watch->intervals_us()[0], 0.0);
  EXPECT_EQ(comm_->split(-1, 0, "none"), nullptr);
  EXPECT_EQ(comm_->split(-5, 0, "none"), nullptr);
  // A child of the child.
  auto grandchild = sub->split(0, 0, "grandchild");
  ASSERT_NE(grandchild, nullptr);
  grandchild->barrier();
  comm_->barrier();
}

// Work queued on the parent is completed before the split (NCCL allows none outstanding).
TEST_F(NcclSingleRank, SplitCompletesQueuedWorkFirst) {
  const auto values = pattern(1 << 16);
  const DeviceBuffer in = device_buffer(DType::Int32, values);
  DeviceBuffer out(values.size(), DType::Int32, 0);
  comm_->set_completion(meshloom::comm::Completion::Queued);
  StreamGate gate(comm_->stream());
  comm_->all_reduce(in.const_buffer(), out.buffer(), ReduceOp::Sum);
  gate.open_after(200ms);
  auto sub = comm_->split(0, 0, "after_queued");
  ASSERT_NE(sub, nullptr);
  EXPECT_EQ(cudaStreamQuery(static_cast<cudaStream_t>(comm_->stream())), cudaSuccess);
  EXPECT_EQ(host_bytes(out), encode(DType::Int32, values));
  comm_->set_completion(meshloom::comm::Completion::Blocking);
}

// A collective that cannot finish (its stream is held) times out: TimeoutError naming it, and the communicator is
// aborted at that moment, so that freeing its buffers later cannot hang on a still-running kernel.
TEST_F(NcclSingleRank, TimeoutAbortsTheCommunicator) {
  const auto values = pattern(1024);
  const DeviceBuffer in = device_buffer(DType::Float32, values);
  DeviceBuffer out(values.size(), DType::Float32, 0);
  {
    StreamGate gate(comm_->stream());
    gate.open_after(1s);  // the stream drains before the buffers are freed, whatever the abort waits for
    comm_->set_timeout(200ms);
    const auto start = std::chrono::steady_clock::now();
    try {
      comm_->all_reduce(in.const_buffer(), out.buffer(), ReduceOp::Sum);
      ADD_FAILURE() << "no timeout";
    } catch (const TimeoutError& e) {
      const std::string what = e.what();
      EXPECT_TRUE(contains(what, "rank 0 of communicator 'world'")) << what;
      EXPECT_TRUE(contains(what, "all_reduce of 4096 bytes")) << what;
      EXPECT_TRUE(contains(what, "200 ms")) << what;
      EXPECT_TRUE(contains(what, "ncclCommAbort")) << what;
    }
    const auto waited = std::chrono::steady_clock::now() - start;
    EXPECT_GE(waited, 200ms);
    std::cout << "[          ] timed out and aborted after "
              << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count() << " ms\n";
    EXPECT_TRUE(comm_->aborted());
    const auto later = expect_error(ErrorKind::RuntimeError, [&] { comm_->barrier(); });
    EXPECT_TRUE(contains(later.message(), "aborted after a timeout")) << later.what();
    comm_->abort(1);  // still fine
    EXPECT_TRUE(comm_->aborted());
  }
}

// In Queued mode the timeout is synchronize()'s: it names the queued work, and aborts the communicator too.
TEST_F(NcclSingleRank, QueuedTimeoutIsSynchronizesAndAborts) {
  const auto values = pattern(1024);
  const DeviceBuffer in = device_buffer(DType::Float32, values);
  DeviceBuffer out(values.size(), DType::Float32, 0);
  comm_->set_completion(meshloom::comm::Completion::Queued);
  {
    StreamGate gate(comm_->stream());
    gate.open_after(1s);
    comm_->set_timeout(200ms);
    comm_->all_reduce(in.const_buffer(), out.buffer(), ReduceOp::Sum);  // returns: only enqueued
    comm_->all_gather(in.const_buffer(), out.buffer());
    try {
      comm_->synchronize();
      ADD_FAILURE() << "no timeout";
    } catch (const TimeoutError& e) {
      const std::string what = e.what();
      EXPECT_TRUE(contains(what, "synchronize")) << what;
      EXPECT_TRUE(contains(what, "2 queued collective(s)")) << what;
      EXPECT_TRUE(contains(what, "all_gather of 4096 bytes")) << what;
    }
    EXPECT_TRUE(comm_->aborted());
  }
}

// Splits are bounded by the init timeout, not the per-collective one. A world of 1 cannot hold a split back (that
// needs a peer that never joins: NcclMultiRank.SplitThatTimesOutAbortsTheParent), so this checks the plumbing: a
// 1 ms collective timeout does not fail a split that a generous init timeout lets through.
TEST_F(NcclSingleRank, SplitsUseTheInitTimeout) {
  comm_->set_timeout(1ms);  // the per-collective timeout does not bound splits
  comm_->set_init_timeout(60s);
  auto sub = comm_->split(1, 0, "bounded");
  ASSERT_NE(sub, nullptr);
  EXPECT_EQ(sub->timeout(), 1ms);
  comm_->set_timeout(60s);
  sub->set_timeout(60s);
  sub->barrier();
}

TEST_F(NcclSingleRank, AbortThenOperationsAreRuntimeErrors) {
  comm_->abort(3);
  EXPECT_TRUE(comm_->aborted());
  comm_->abort(3);  // idempotent
  const auto e = expect_error(ErrorKind::RuntimeError, [&] { comm_->barrier(); });
  EXPECT_TRUE(contains(e.message(), "rank 0 of communicator 'world'")) << e.what();
  EXPECT_TRUE(contains(e.message(), "barrier after abort()")) << e.what();
  (void)expect_error(ErrorKind::RuntimeError, [&] { (void)comm_->split(0, 0, "x"); });
  (void)expect_error(ErrorKind::RuntimeError, [&] { comm_->synchronize(); });
}

// ---------------------------------------------------------------- one rank per GPU, in threads

namespace {

// An in-process broadcast from rank 0, standing in for MPI_Bcast.
class ThreadBootstrap {
public:
  BootstrapFn for_rank(int rank) {
    return [this, rank](void* bytes, std::size_t n) {
      std::unique_lock lock(mutex_);
      if (rank == 0) {
        const auto* p = static_cast<const std::uint8_t*>(bytes);
        bytes_.assign(p, p + n);
        ready_ = true;
        cv_.notify_all();
      } else {
        cv_.wait(lock, [this] { return ready_; });
        std::memcpy(bytes, bytes_.data(), std::min(n, bytes_.size()));
      }
    };
  }

private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::uint8_t> bytes_;
  bool ready_ = false;
};

// Runs body(rank, communicator) on `ranks` threads, rank r on GPU r; rethrows the first failure's text.
void run_ranks(int ranks, const std::function<void(int, NcclCommunicator&)>& body) {
  ThreadBootstrap bootstrap;
  std::mutex mutex;
  std::vector<std::string> failures;
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      try {
        auto comm = NcclCommunicator::create(bootstrap.for_rank(r), r, ranks, r, "world", 60s);
        comm->set_timeout(60s);
        body(r, *comm);
      } catch (const std::exception& e) {
        const std::lock_guard lock(mutex);
        failures.push_back("rank " + std::to_string(r) + ": " + e.what());
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& f : failures) ADD_FAILURE() << f;
}

int multi_gpu_ranks() { return std::min(gpu_count(), 4); }

}  // namespace

TEST(NcclMultiRank, CollectivesReduceGatherAndExchangeAcrossRanks) {
  REQUIRE_GPUS(2);
  const int n = multi_gpu_ranks();
  const std::size_t count = 1024;  // per rank block for gather/scatter/all_to_all
  run_ranks(n, [n, count](int r, NcclCommunicator& comm) {
    const auto nz = static_cast<std::size_t>(n);
    EXPECT_EQ(comm.rank(), r);
    EXPECT_EQ(comm.size(), n);
    // all_reduce: in[i] = r + i + 1
    std::vector<std::int32_t> in(count);
    for (std::size_t i = 0; i < count; ++i) in[i] = r + static_cast<std::int32_t>(i % 50) + 1;
    DeviceBuffer a(count, DType::Int32, r);
    a.upload(in);
    DeviceBuffer out(count, DType::Int32, r);
    const auto check = [&](ReduceOp op, const std::function<std::int64_t(std::int64_t)>& expected) {
      comm.all_reduce(a.const_buffer(), out.buffer(), op);
      const auto got = host_ints(out);
      for (std::size_t i = 0; i < count; ++i) {
        ASSERT_EQ(got[i], expected(static_cast<std::int64_t>(i % 50) + 1))
            << meshloom::to_string(op) << " element " << i;
      }
    };
    check(ReduceOp::Sum, [n](std::int64_t b) { return n * b + n * (n - 1) / 2; });
    check(ReduceOp::Max, [n](std::int64_t b) { return b + n - 1; });
    check(ReduceOp::Min, [](std::int64_t b) { return b; });
    check(ReduceOp::Avg, [n](std::int64_t b) { return (n * b + n * (n - 1) / 2) / n; });
    check(ReduceOp::Product, [n](std::int64_t b) {
      std::int64_t p = 1;
      for (int k = 0; k < n; ++k) p *= b + k;
      return static_cast<std::int32_t>(p);  // int32 wraps like the device
    });
    // float avg
    {
      DeviceBuffer f(count, DType::Float32, r);
      f.upload(std::vector<float>(count, static_cast<float>(2 * r)));
      comm.all_reduce(f.const_buffer(), f.buffer(), ReduceOp::Avg);
      const auto got = f.download<float>();
      EXPECT_FLOAT_EQ(got[7], static_cast<float>(n - 1));
    }
    // all_gather: block k of the output is rank k's input
    std::vector<std::int32_t> mine(count, 100 * r);
    DeviceBuffer g_in(count, DType::Int32, r);
    g_in.upload(mine);
    DeviceBuffer g_out(count * nz, DType::Int32, r);
    comm.all_gather(g_in.const_buffer(), g_out.buffer());
    const auto gathered = host_ints(g_out);
    for (std::size_t k = 0; k < nz; ++k) EXPECT_EQ(gathered[k * count + 3], 100 * static_cast<int>(k));
    // reduce_scatter: rank r keeps block r of the sum; input block k holds k + rank
    std::vector<std::int32_t> rs(count * nz);
    for (std::size_t k = 0; k < nz; ++k) {
      std::fill_n(rs.begin() + static_cast<std::ptrdiff_t>(k * count), count, static_cast<std::int32_t>(k) + r);
    }
    DeviceBuffer rs_in(count * nz, DType::Int32, r);
    rs_in.upload(rs);
    DeviceBuffer rs_out(count, DType::Int32, r);
    comm.reduce_scatter(rs_in.const_buffer(), rs_out.buffer(), ReduceOp::Sum);
    EXPECT_EQ(host_ints(rs_out)[5], n * r + n * (n - 1) / 2);
    // all_to_all: block j of rank r (value 1000 r + j) lands in block r of rank j
    std::vector<std::int32_t> a2a(count * nz);
    for (std::size_t j = 0; j < nz; ++j) {
      std::fill_n(a2a.begin() + static_cast<std::ptrdiff_t>(j * count), count, 1000 * r + static_cast<std::int32_t>(j));
    }
    DeviceBuffer x_in(count * nz, DType::Int32, r);
    x_in.upload(a2a);
    DeviceBuffer x_out(count * nz, DType::Int32, r);
    comm.all_to_all(x_in.const_buffer(), x_out.buffer());
    const auto exchanged = host_ints(x_out);
    for (std::size_t k = 0; k < nz; ++k) EXPECT_EQ(exchanged[k * count + 1], 1000 * static_cast<int>(k) + r);
    // broadcast from the last rank
    DeviceBuffer b(count, DType::Int32, r);
    b.upload(std::vector<std::int32_t>(count, r == n - 1 ? 42 : -1));
    comm.broadcast(b.buffer(), n - 1);
    EXPECT_EQ(host_ints(b)[count - 1], 42);
    comm.barrier();
  });
}

TEST(NcclMultiRank, SplitOrdersByKeyAndLeavesNoColorOut) {
  REQUIRE_GPUS(2);
  const int n = multi_gpu_ranks();
  run_ranks(n, [n](int r, NcclCommunicator& comm) {
    // Every rank but the last joins color 0, ordered by descending old rank; the last gets no communicator.
    const bool member = r != n - 1;
    auto sub = comm.split(member ? 0 : -1, -r, "sub");
    if (!member) {
      EXPECT_EQ(sub, nullptr);
      return;
    }
    ASSERT_NE(sub, nullptr);
    EXPECT_EQ(sub->size(), n - 1);
    EXPECT_EQ(sub->rank(), n - 2 - r);
    DeviceBuffer one(1, DType::Int32, r);
    one.upload(std::vector<std::int32_t>{1});
    sub->all_reduce(one.const_buffer(), one.buffer(), ReduceOp::Sum);
    EXPECT_EQ(host_ints(one)[0], n - 1);
  });
}

// Rank 0 enters an all_reduce the others never join: it times out naming itself, the communicator, the
// collective and the size; then every rank aborts, which must return on all of them.
TEST(NcclMultiRank, TimeoutNamesTheCollectiveThenEveryRankAborts) {
  REQUIRE_GPUS(2);
  const int n = multi_gpu_ranks();
  std::mutex mutex;
  std::condition_variable cv;
  bool timed_out = false;
  run_ranks(n, [&](int r, NcclCommunicator& comm) {
    if (r == 0) {
      comm.set_timeout(500ms);
      DeviceBuffer a(1024, DType::Float32, 0);
      try {
        comm.all_reduce(a.const_buffer(), a.buffer(), ReduceOp::Sum);
        ADD_FAILURE() << "no timeout";
      } catch (const TimeoutError& e) {
        const std::string what = e.what();
        EXPECT_TRUE(contains(what, "rank 0 of communicator 'world'")) << what;
        EXPECT_TRUE(contains(what, "all_reduce of 4096 bytes")) << what;
        EXPECT_TRUE(contains(what, "500 ms")) << what;
      }
      const std::lock_guard lock(mutex);
      timed_out = true;
      cv.notify_all();
    } else {
      std::unique_lock lock(mutex);
      cv.wait(lock, [&] { return timed_out; });
    }
    comm.abort(1);
    EXPECT_TRUE(comm.aborted());
  });
}

// Inputs on which the ops differ: rank r holds b + 2r (b = 1 or 2), so sum, avg, max, min and product all give
// different results for n >= 2. Every op on every dtype NCCL reduces (float8 on compute capability 9.0+), out of
// place, and reduce_scatter too. A result is compared exactly where the dtype holds it exactly (integers up to
// exact_integers_up_to), avg of a float type within the dtype's rounding (NCCL may scale before summing).
TEST(NcclMultiRank, EveryOpOnEveryDtype) {
  REQUIRE_GPUS(2);
  const int n = multi_gpu_ranks();
  const std::size_t count = 96;
  run_ranks(n, [n, count](int r, NcclCommunicator& comm) {
    const auto nz = static_cast<std::size_t>(n);
    const auto base = [](std::size_t i) { return static_cast<int>(i % 2) + 1; };
    for (const auto name : meshloom::dtype_names()) {
      const DType dtype = *meshloom::dtype_from_string(name);
      if ((dtype == DType::Float8E4M3 || dtype == DType::Float8E5M2) && !fp8_reductions(comm)) continue;
      std::vector<int> mine(count * nz);
      for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = base(i) + 2 * r;
      const DeviceBuffer in = device_buffer(dtype, mine, r);
      for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max, ReduceOp::Min, ReduceOp::Product}) {
        if ((dtype == DType::Float8E4M3 || dtype == DType::Float8E5M2) && op == ReduceOp::Avg) continue;
        SCOPED_TRACE(std::string(name) + " " + std::string(meshloom::to_string(op)) + " rank " + std::to_string(r));
        const auto expected = [n, op](int b) {
          double sum = 0.0, product = 1.0;
          for (int k = 0; k < n; ++k) {
            sum += b + 2 * k;
            product *= b + 2 * k;
          }
          switch (op) {
            case ReduceOp::Sum: return sum;
            case ReduceOp::Avg: return sum / n;
            case ReduceOp::Max: return static_cast<double>(b + 2 * (n - 1));
            case ReduceOp::Min: return static_cast<double>(b);
            case ReduceOp::Product: return product;
          }
          return 0.0;
        };
        const auto check = [&](const std::vector<double>& got, std::size_t offset) {
          for (std::size_t i = 0; i < got.size(); ++i) {
            const double want = expected(base(i + offset));
            if (want > exact_integers_up_to(dtype)) continue;  // not exact in this dtype
            if (op == ReduceOp::Avg && is_float(dtype)) {
              ASSERT_NEAR(got[i], want, want * 0.25) << "element " << i;
            } else {
              ASSERT_EQ(got[i], want) << "element " << i;
            }
          }
        };
        DeviceBuffer out(count * nz, dtype, r);
        comm.all_reduce(in.const_buffer(), out.buffer(), op);
        check(decode(dtype, host_bytes(out)), 0);
        DeviceBuffer kept(count, dtype, r);
        comm.reduce_scatter(in.const_buffer(), kept.buffer(), op);
        check(decode(dtype, host_bytes(kept)), static_cast<std::size_t>(r) * count);
      }
    }
  });
}

// Rank 0 splits; the others never join. The split is bounded by the init timeout: TimeoutError, and rank 0's
// world is aborted before anything is freed (NCCL's split job may still write the child's handle). Then every
// rank aborts.
TEST(NcclMultiRank, SplitThatTimesOutAbortsTheParent) {
  REQUIRE_GPUS(2);
  const int n = multi_gpu_ranks();
  std::mutex mutex;
  std::condition_variable cv;
  bool timed_out = false;
  run_ranks(n, [&](int r, NcclCommunicator& comm) {
    if (r == 0) {
      comm.set_init_timeout(500ms);
      try {
        (void)comm.split(0, 0, "lonely");
        ADD_FAILURE() << "no timeout";
      } catch (const TimeoutError& e) {
        const std::string what = e.what();
        EXPECT_TRUE(contains(what, "split into 'lonely'")) << what;
        EXPECT_TRUE(contains(what, "500 ms")) << what;
      }
      EXPECT_TRUE(comm.aborted());
      const std::lock_guard lock(mutex);
      timed_out = true;
      cv.notify_all();
    } else {
      std::unique_lock lock(mutex);
      cv.wait(lock, [&] { return timed_out; });
    }
    comm.abort(1);
    EXPECT_TRUE(comm.aborted());
  });
}

// Two ranks on the same GPU (what the launcher's local-rank-modulo-GPUs choice gives when a node has fewer GPUs than
// ranks): NCCL itself refuses the duplicate, on every rank, within the init timeout (no hang).
TEST(NcclOneGpu, TwoRanksOnTheSameGpuAreRefusedByNccl) {
  REQUIRE_GPUS(1);
  ThreadBootstrap bootstrap;
  std::mutex mutex;
  std::vector<std::string> outcomes;
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      std::string outcome;
      try {
        auto comm = NcclCommunicator::create(bootstrap.for_rank(r), r, 2, 0, "world", 30s);
        outcome = "created";
      } catch (const TimeoutError& e) {
        outcome = std::string("timeout: ") + e.what();
      } catch (const std::exception& e) {
        outcome = e.what();
      }
      const std::lock_guard lock(mutex);
      outcomes.push_back("rank " + std::to_string(r) + ": " + outcome);
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(outcomes.size(), 2u);
  for (const auto& o : outcomes) {
    std::cout << "[          ] " << o << "\n";
    EXPECT_TRUE(contains(o, "ncclCommInitRankConfig failed")) << o;
  }
}
