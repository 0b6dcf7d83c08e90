// NcclCommunicator and DeviceBuffer. Argument and no-device error paths run everywhere; the collectives run on
// device buffers and skip cleanly without a GPU: one rank on one GPU (every collective, every op and dtype), and
// with two GPUs or more one rank per GPU in threads of this process (real reductions, block orders, split,
// timeout then abort).
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
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

std::uint16_t half_bits(int v) {  // 1 <= v < 2048
  int e = 0;
  while ((v >> (e + 1)) != 0) ++e;
  return static_cast<std::uint16_t>(((e + 15) << 10) | ((v << (10 - e)) & 0x3ff));
}
std::uint16_t bfloat16_bits(int v) {
  const auto f = static_cast<float>(v);
  std::uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof bits);
  return static_cast<std::uint16_t>(bits >> 16);
}
std::uint8_t e4m3_bits(int v) {  // 1 <= v <= 15
  int e = 0;
  while ((v >> (e + 1)) != 0) ++e;
  return static_cast<std::uint8_t>(((e + 7) << 3) | ((v << (3 - e)) & 0x7));
}
std::uint8_t e5m2_bits(int v) {  // 1 <= v <= 7
  int e = 0;
  while ((v >> (e + 1)) != 0) ++e;
  return static_cast<std::uint8_t>(((e + 15) << 2) | ((v << (2 - e)) & 0x3));
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

class NcclSingleRank : public ::testing::Test {
protected:
  void SetUp() override {
    REQUIRE_GPUS(1);
    comm_ = NcclCommunicator::create(kNoBootstrap, 0, 1, 0, "world");
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
}

TEST_F(NcclSingleRank, DeviceBufferRoundTrips) {
  DeviceBuffer b(5, DType::Int32, 0);
  b.upload(std::vector<std::int32_t>{1, -2, 3, -4, 5});
  EXPECT_EQ(b.download<std::int32_t>(), (std::vector<std::int32_t>{1, -2, 3, -4, 5}));
  b.fill_zero();
  EXPECT_EQ(b.download<std::int32_t>(), (std::vector<std::int32_t>(5, 0)));
  DeviceBuffer moved = std::move(b);
  EXPECT_EQ(b.data(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(moved.count(), 5u);
}

// With one rank every reduction is the identity, bit for bit (avg divides by 1): every op on every dtype NCCL
// reduces, float8 only on compute capability 9.0 and later.
TEST_F(NcclSingleRank, AllReduceEveryOpOnEveryDtype) {
  const auto info = meshloom::nccl::runtime_info();
  const bool fp8 = !info.devices.empty() && info.devices[0].compute_major >= 9 && meshloom::nccl::kHasFloat8;
  for (const auto name : meshloom::dtype_names()) {
    const DType dtype = *meshloom::dtype_from_string(name);
    if ((dtype == DType::Float8E4M3 || dtype == DType::Float8E5M2) && !fp8) continue;
    for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max, ReduceOp::Min, ReduceOp::Product}) {
      SCOPED_TRACE(std::string(name) + " " + std::string(meshloom::to_string(op)));
      const auto values = pattern(1000);
      const DeviceBuffer in = device_buffer(dtype, values);
      DeviceBuffer out(values.size(), dtype, 0);
      comm_->all_reduce(in.const_buffer(), out.buffer(), op);
      EXPECT_EQ(host_bytes(out), encode(dtype, values));
      // in place
      DeviceBuffer inplace = device_buffer(dtype, values);
      comm_->all_reduce(inplace.const_buffer(), inplace.buffer(), op);
      EXPECT_EQ(host_bytes(inplace), encode(dtype, values));
    }
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
  }
  comm_->barrier();
  comm_->synchronize();
}

TEST_F(NcclSingleRank, ZeroCountsReturnAtOnce) {
  const meshloom::comm::ConstBuffer in{nullptr, 0, DType::Float32};
  const meshloom::comm::Buffer out{nullptr, 0, DType::Float32};
  comm_->all_reduce(in, out, ReduceOp::Sum);
  comm_->all_gather(in, out);
  comm_->reduce_scatter(in, out, ReduceOp::Sum);
  comm_->all_to_all(in, out);
  comm_->broadcast(out, 0);
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
  // The communicator is still usable after argument errors.
  comm_->barrier();
}

TEST_F(NcclSingleRank, SplitsAndNoColor) {
  auto sub = comm_->split(7, 0, "sub");
  ASSERT_NE(sub, nullptr);
  EXPECT_EQ(sub->rank(), 0);
  EXPECT_EQ(sub->size(), 1);
  EXPECT_EQ(sub->name(), "sub");
  EXPECT_EQ(sub->timeout(), comm_->timeout());
  const auto values = pattern(64);
  const DeviceBuffer in = device_buffer(DType::Int32, values);
  DeviceBuffer out(values.size(), DType::Int32, 0);
  sub->all_reduce(in.const_buffer(), out.buffer(), ReduceOp::Sum);
  EXPECT_EQ(host_bytes(out), encode(DType::Int32, values));
  EXPECT_EQ(comm_->split(-1, 0, "none"), nullptr);
  comm_->barrier();
}

TEST_F(NcclSingleRank, AbortThenOperationsAreRuntimeErrors) {
  comm_->abort(3);
  EXPECT_TRUE(comm_->aborted());
  comm_->abort(3);  // idempotent
  const auto e = expect_error(ErrorKind::RuntimeError, [&] { comm_->barrier(); });
  EXPECT_TRUE(contains(e.message(), "rank 0 of communicator 'world'")) << e.what();
  EXPECT_TRUE(contains(e.message(), "barrier after abort()")) << e.what();
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
