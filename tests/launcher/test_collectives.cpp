// Every collective's file (launcher/src/collectives): the defining property at every element, for groups of 1 to 7
// ranks, every reduce op and every checkable dtype. A naive model of the collective (written here, from the
// communicator.hpp semantics, reducing across ranks element by element) produces each rank's output from every
// rank's fill(); the collective's own O(elements) closed-form check must accept it, and must count a single
// corrupted element of any rank as exactly one wrong element.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "bench_format.hpp"
#include "collectives/collective.hpp"
#include "collectives/known_data.hpp"
#include "meshloom/plan/cost_model.hpp"

namespace meshloom::launcher {
namespace {

constexpr ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max, ReduceOp::Min, ReduceOp::Product};
constexpr DType kTypes[] = {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::Int8, DType::UInt8};

template <class T>
T load(const std::vector<std::byte>& b, std::size_t i) {
  T v;
  std::memcpy(&v, b.data() + i * sizeof(T), sizeof(T));
  return v;
}
template <class T>
void store(std::vector<std::byte>& b, std::size_t i, T v) {
  std::memcpy(b.data() + i * sizeof(T), &v, sizeof(T));
}

// a + b and a * b as a backend computes integers: modulo 2^bits (in C++ signed overflow is undefined, and a sum or
// product of one op's inputs under another op may overflow: 13! in int32).
template <class T>
T wrapping(T a, T b, bool product) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
    const U x = static_cast<U>(a);
    const U y = static_cast<U>(b);
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(product ? x * y : x + y));
  } else {
    return product ? a * b : a + b;
  }
}

// The naive reduction of element i over every rank's input, in T, left to right (as a ring would not, which is why
// the inputs are small integers: any order gives the same exact value).
template <class T>
T reduce_naive(const std::vector<CollectiveData>& ranks, std::size_t i, ReduceOp op) {
  T acc = load<T>(ranks[0].in, i);
  for (std::size_t r = 1; r < ranks.size(); ++r) {
    const T v = load<T>(ranks[r].in, i);
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Avg: acc = wrapping(acc, v, false); break;
      case ReduceOp::Max: acc = std::max(acc, v); break;
      case ReduceOp::Min: acc = std::min(acc, v); break;
      case ReduceOp::Product: acc = wrapping(acc, v, true); break;
    }
  }
  if (op == ReduceOp::Avg) acc = static_cast<T>(acc / static_cast<T>(ranks.size()));
  return acc;
}

// What each rank holds after the collective, by the naive model.
void run_naive(BenchCollective c, std::vector<CollectiveData>& ranks) {
  const std::size_t n = ranks.size();
  const std::size_t item = ranks[0].item();
  const auto count = static_cast<std::size_t>(ranks[0].counts.count);
  switch (c) {
    case BenchCollective::AllReduce:
    case BenchCollective::ReduceScatter:
      known::with_checkable_type(ranks[0].dtype, [&](auto tag) {
        using T = decltype(tag);
        for (std::size_t r = 0; r < n; ++r) {
          const std::size_t offset = c == BenchCollective::ReduceScatter ? r * count : 0;
          for (std::size_t k = 0; k < static_cast<std::size_t>(ranks[r].counts.out_count); ++k) {
            store<T>(ranks[r].out, k, reduce_naive<T>(ranks, offset + k, ranks[0].op));
          }
        }
      });
      break;
    case BenchCollective::AllGather:
      for (std::size_t r = 0; r < n; ++r) {
        for (std::size_t j = 0; j < n; ++j) std::memcpy(ranks[r].out.data() + j * count * item, ranks[j].in.data(), count * item);
      }
      break;
    case BenchCollective::AllToAll:
      for (std::size_t r = 0; r < n; ++r) {
        for (std::size_t j = 0; j < n; ++j) {
          std::memcpy(ranks[r].out.data() + j * count * item, ranks[j].in.data() + r * count * item, count * item);
        }
      }
      break;
    case BenchCollective::Broadcast:
      for (std::size_t r = 1; r < n; ++r) ranks[r].in = ranks[0].in;
      break;
  }
}

std::vector<CollectiveData> filled(const CollectiveDef& def, std::int64_t n, std::int64_t elements, DType dtype,
                                   ReduceOp op) {
  std::vector<CollectiveData> ranks(static_cast<std::size_t>(n));
  for (std::int64_t r = 0; r < n; ++r) {
    CollectiveData& d = ranks[static_cast<std::size_t>(r)];
    d.dtype = dtype;
    d.op = op;
    d.me = r;
    d.n = n;
    d.counts = def.counts(elements, itemsize(dtype), n);
    def.fill(d);
  }
  return ranks;
}

TEST(Collectives, EveryEnumValueHasOneDefinitionWithItsName) {
  for (const BenchCollective c : all_bench_collectives()) {
    EXPECT_EQ(collective_def(c).id(), c);
    EXPECT_EQ(bench_collective_from_string(collective_def(c).name()), c);
  }
  EXPECT_EQ(collective_defs().size(), 5U);
}

TEST(Collectives, BusFactorsAreTheCalibratedModels) {
  for (const CollectiveDef* def : collective_defs()) {
    for (std::int64_t n = 1; n <= 64; ++n) {
      EXPECT_DOUBLE_EQ(def->bus_factor(n), bus_factor(def->name(), n)) << def->name() << " n=" << n;
    }
  }
}

TEST(Collectives, CountsFollowNcclTests) {
  // 1000 float32 elements on 3 ranks: all_reduce and broadcast take them all; the others 333 per rank.
  EXPECT_EQ(collective_def(BenchCollective::AllReduce).counts(1000, 4, 3).bytes, 4000);
  const SizeCounts ag = collective_def(BenchCollective::AllGather).counts(1000, 4, 3);
  EXPECT_EQ(ag.count, 333);
  EXPECT_EQ(ag.in_count, 333);
  EXPECT_EQ(ag.out_count, 999);
  EXPECT_EQ(ag.bytes, 3996);
  const SizeCounts rs = collective_def(BenchCollective::ReduceScatter).counts(1000, 4, 3);
  EXPECT_EQ(rs.in_count, 999);
  EXPECT_EQ(rs.out_count, 333);
  const SizeCounts a2a = collective_def(BenchCollective::AllToAll).counts(1000, 4, 3);
  EXPECT_EQ(a2a.in_count, 999);
  EXPECT_EQ(a2a.out_count, 999);
}

TEST(Collectives, ClosedFormsMatchTheNaiveReductionForEveryOpTypeAndGroupSize) {
  for (const CollectiveDef* def : collective_defs()) {
    for (std::int64_t n : {1, 2, 3, 4, 7, 65, 130}) {
      for (const DType dtype : kTypes) {
        for (const ReduceOp op : def->reduces() ? std::vector<ReduceOp>(std::begin(kOps), std::end(kOps))
                                                : std::vector<ReduceOp>{ReduceOp::Sum}) {
          std::vector<CollectiveData> ranks = filled(*def, n, 7 * n + 5, dtype, op);
          run_naive(def->id(), ranks);
          for (std::int64_t r = 0; r < n; ++r) {
            const CollectiveData& d = ranks[static_cast<std::size_t>(r)];
            ASSERT_EQ(def->wrong(d), 0) << def->name() << " n=" << n << " " << to_string(dtype) << " "
                                        << to_string(op) << " rank " << r;
          }
        }
      }
    }
  }
}

TEST(Collectives, OneCorruptedElementOfAnyRankIsOneWrongElement) {
  for (const CollectiveDef* def : collective_defs()) {
    for (std::int64_t n : {1, 2, 5}) {
      std::vector<CollectiveData> ranks = filled(*def, n, 4 * n, DType::Int32, ReduceOp::Sum);
      run_naive(def->id(), ranks);
      for (std::int64_t r = 0; r < n; ++r) {
        CollectiveData d = ranks[static_cast<std::size_t>(r)];
        std::vector<std::byte>& out = def->in_place() ? d.in : d.out;
        ASSERT_FALSE(out.empty());
        out[out.size() / 2] ^= std::byte{0x10};
        EXPECT_EQ(def->wrong(d), 1) << def->name() << " n=" << n << " rank " << r;
      }
    }
  }
}

TEST(Collectives, AnOutputLeftUnwrittenIsWrongEverywhere) {
  for (const CollectiveDef* def : collective_defs()) {
    if (def->in_place()) continue;
    std::vector<CollectiveData> ranks = filled(*def, 3, 30, DType::Float32, ReduceOp::Max);
    EXPECT_EQ(def->wrong(ranks[1]), ranks[1].counts.out_count) << def->name();
  }
}

TEST(Collectives, ABroadcastThatReachedNoOneIsCaughtOnEveryReceiver) {
  const CollectiveDef& def = collective_def(BenchCollective::Broadcast);
  const std::vector<CollectiveData> ranks = filled(def, 3, 12, DType::Float64, ReduceOp::Sum);
  EXPECT_EQ(def.wrong(ranks[0]), 0);
  EXPECT_EQ(def.wrong(ranks[1]), 12);
  EXPECT_EQ(def.wrong(ranks[2]), 12);
}

TEST(Collectives, AFloatAverageIsComparedWithinUlpsAsNcclScalesBeforeItSums) {
  // NCCL's avg of floats: every input times 1/n, rounded, then summed. The check accepts that; a value off by 1%
  // is still wrong.
  const CollectiveDef& def = collective_def(BenchCollective::AllReduce);
  for (std::int64_t n : {3, 5, 6, 7, 9, 10, 4099}) {
    std::vector<CollectiveData> ranks = filled(def, n, 40, DType::Float32, ReduceOp::Avg);
    CollectiveData& d = ranks[0];
    const float inv = 1.0F / static_cast<float>(n);
    for (std::size_t k = 0; k < 40; ++k) {
      float acc = 0;
      for (std::int64_t r = 0; r < n; ++r) {
        acc += static_cast<float>(known::reduced_input(ReduceOp::Avg, r, static_cast<std::int64_t>(k), n)) * inv;
      }
      store<float>(d.out, k, acc);
    }
    EXPECT_EQ(def.wrong(d), 0) << "n=" << n;
    store<float>(d.out, 3, load<float>(d.out, 3) * 1.01F);
    EXPECT_EQ(def.wrong(d), 1) << "n=" << n;
  }
}

TEST(Collectives, AnIntegerAverageIsTheWrappedSumDividedAsTheBackendsDivide) {
  // 16 ranks of int8: the sum 16 * 8 = 128 wraps to -128 before the division (MPI and NCCL sum, then divide).
  const CollectiveDef& def = collective_def(BenchCollective::AllReduce);
  std::vector<CollectiveData> ranks = filled(def, 16, 14, DType::Int8, ReduceOp::Avg);
  run_naive(def.id(), ranks);
  EXPECT_EQ(load<std::int8_t>(ranks[0].out, 6), std::int8_t{-8});  // b = 2 + 6 mod 7 = 8
  EXPECT_EQ(def.wrong(ranks[0]), 0);
}

TEST(Collectives, DtypesTheCheckCannotPredictAreStillFilledForTiming) {
  // nccl reduces float16 without --check: the buffers are sized (zeros), nothing throws.
  CollectiveData d;
  d.dtype = DType::Float16;
  d.n = 2;
  d.counts = collective_def(BenchCollective::AllReduce).counts(64, 2, 2);
  EXPECT_NO_THROW(collective_def(BenchCollective::AllReduce).fill(d));
  EXPECT_EQ(d.in.size(), 128U);
  EXPECT_EQ(d.out.size(), 128U);
}

TEST(Collectives, ReductionsTellOpsApartOnMoreThanOneRank) {
  // Each op's inputs reduced with any other op give another value at every element: a backend that applied the
  // wrong op is caught everywhere.
  const CollectiveDef& def = collective_def(BenchCollective::AllReduce);
  for (std::int64_t n : {2, 3, 4, 7, 65}) {
    for (const DType dtype : {DType::Int32, DType::Float64}) {
      for (const ReduceOp op : kOps) {
        for (const ReduceOp other : kOps) {
          if (other == op) continue;
          std::vector<CollectiveData> ranks = filled(def, n, 70, dtype, op);
          for (CollectiveData& d : ranks) d.op = other;
          run_naive(def.id(), ranks);
          CollectiveData& d = ranks[1];
          d.op = op;
          EXPECT_EQ(def.wrong(d), d.counts.out_count)
              << to_string(op) << " checked after " << to_string(other) << " on " << n << " ranks, " << to_string(dtype);
        }
      }
    }
  }
}

}  // namespace
}  // namespace meshloom::launcher
