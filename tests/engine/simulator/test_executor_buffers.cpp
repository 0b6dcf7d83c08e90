// The buffers the executor hands a collective (execute_step, plan/executor.hpp) are page-aligned
// (comm/host_memory.hpp), for every collective, both dtypes and any allocation history before the step: where the
// heap puts a buffer must not change what the collective costs. Run on a one-member group whose collectives copy;
// and the allocator behind them (HostVector).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "meshloom/comm/communicator.hpp"
#include "meshloom/comm/host_memory.hpp"
#include "meshloom/plan/executor.hpp"
#include "meshloom/plan/simulator.hpp"
#include "meshloom/plan/state.hpp"

namespace meshloom {
namespace {

// One member: every collective is a copy of its input. Records each buffer's offset from a page boundary.
class OneMember final : public comm::Communicator {
public:
  std::vector<std::uintptr_t> offsets;  // in, out of every collective, in call order

  int rank() const noexcept override { return 0; }
  int size() const noexcept override { return 1; }
  const std::string& name() const noexcept override { return name_; }
  std::string_view backend() const noexcept override { return "one member"; }
  void all_reduce(comm::ConstBuffer in, comm::Buffer out, ReduceOp /*op*/) override { copy(in, out); }
  void all_gather(comm::ConstBuffer in, comm::Buffer out) override { copy(in, out); }
  void reduce_scatter(comm::ConstBuffer in, comm::Buffer out, ReduceOp /*op*/) override { copy(in, out); }
  void all_to_all(comm::ConstBuffer in, comm::Buffer out) override { copy(in, out); }
  void broadcast(comm::Buffer /*buffer*/, int /*root*/) override {}
  void barrier() override {}
  void synchronize() override {}
  std::unique_ptr<comm::Communicator> split(int /*color*/, int /*key*/, std::string /*name*/) override {
    return nullptr;
  }
  void abort(int /*error_code*/) noexcept override {}

private:
  void copy(comm::ConstBuffer in, comm::Buffer out) {
    ASSERT_EQ(in.count, out.count);
    offsets.push_back(reinterpret_cast<std::uintptr_t>(in.data) % comm::kHostAlignment);
    offsets.push_back(reinterpret_cast<std::uintptr_t>(out.data) % comm::kHostAlignment);
    std::memcpy(out.data, in.data, in.count * static_cast<std::size_t>(itemsize(in.dtype)));
  }
  std::string name_ = "one";
};

struct Case {
  Collective collective;
  const char* from;
  const char* to;
};

TEST(ExecutorBuffers, EveryCollectiveGetsPageAlignedBuffersWhateverTheHeapHeldBefore) {
  const std::vector<std::int64_t> mesh{1};
  const std::vector<std::int64_t> tensor{6, 10};
  const std::vector<std::int64_t> at{0};
  for (const DType dtype : {DType::Float64, DType::Int64}) {
    for (const Case& c : {Case{Collective::AllGather, "S(0)", "R"}, Case{Collective::AllReduce, "P(sum)", "R"},
                          Case{Collective::ReduceScatter, "P(sum)", "S(1)"}, Case{Collective::AllToAll, "S(0)", "S(1)"}}) {
      // Odd-sized blocks left on the heap before each step move where an unaligned allocation would land.
      for (std::size_t litter = 0; litter < 5; ++litter) {
        std::vector<std::unique_ptr<char[]>> held;
        for (std::size_t k = 0; k <= litter; ++k) held.push_back(std::make_unique<char[]>(24 + 40 * k));
        PlanStep step;
        step.axes = {0};
        step.collective = c.collective;
        step.before = parse_state(c.from);
        step.after = parse_state(c.to);
        step.from = step.before.placement(0);
        step.to = step.after.placement(0);
        ExecutionContext ctx;
        ctx.mesh_shape = mesh;
        ctx.tensor_shape = tensor;
        ctx.coordinate = at;
        ctx.dtype = dtype;
        LocalTensor local = initial_local(mesh, tensor, step.before, at);
        OneMember group;
        execute_step(local, step, ctx, &group);
        const std::string label = std::string(to_string(c.collective)) + " " + c.from + " -> " + c.to + " in " +
                                  std::string(to_string(dtype)) + ", " + std::to_string(litter + 1) + " blocks held";
        ASSERT_EQ(group.offsets.size(), 2U) << label;
        EXPECT_EQ(group.offsets[0], 0U) << label << ": the input";
        EXPECT_EQ(group.offsets[1], 0U) << label << ": the output";
        // And the step still does what it must: one member holds the whole tensor.
        EXPECT_EQ(first_mismatch(local, expected_local(mesh, tensor, step.after, at)), std::nullopt) << label;
      }
    }
  }
}

TEST(HostMemory, EveryAllocationStartsOnAPageWhateverItsTypeAndSize) {
  std::vector<std::unique_ptr<char[]>> held;
  for (std::size_t n : {1U, 3U, 512U, 4097U, 1U << 20}) {
    held.push_back(std::make_unique<char[]>(n % 97 + 8));  // move the heap between the allocations
    const comm::HostVector<std::byte> bytes(n);
    const comm::HostVector<double> doubles(n);
    const comm::HostVector<std::int64_t> ints(n, 7);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(bytes.data()) % 4096, 0U) << n << " bytes";
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(doubles.data()) % 4096, 0U) << n << " doubles";
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(ints.data()) % 4096, 0U) << n << " int64";
    EXPECT_EQ(ints.back(), 7);
  }
  // Growing keeps the alignment (a new allocation), and the allocators of two types are interchangeable.
  comm::HostVector<double> v;
  for (int i = 0; i < 10000; ++i) {
    v.push_back(static_cast<double>(i));
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % 4096, 0U) << "after " << i + 1 << " push_backs";
  }
  EXPECT_TRUE(comm::HostAllocator<double>() == comm::HostAllocator<std::byte>());
  comm::HostAllocator<std::byte> rebound{comm::HostAllocator<double>()};
  std::byte* p = rebound.allocate(100);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 4096, 0U);
  rebound.deallocate(p, 100);
}

}  // namespace
}  // namespace meshloom
