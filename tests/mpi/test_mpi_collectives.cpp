// Every collective of the MPI backend on every axis of a mesh, with inputs whose exact results are known;
// buffer-size and dtype errors; split; node_place.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "meshloom/comm/mesh_groups.hpp"
#include "meshloom/error.hpp"
#include "mpi_test_support.hpp"

namespace meshloom {
namespace {

using ::testing::HasSubstr;
using testing::gather_i64;
using testing::world;

// The mesh whose axes the collectives run on: (2,2,2) dp,cp,tp with dp_tp flattened at 8 ranks, (2,2) dp,tp
// with dp_tp at 4, (2,1) dp,tp at 2. Built once per process.
const comm::MeshGroups& axis_groups() {
  static const comm::MeshGroups groups = [] {
    const int n = world().size();
    DeviceMesh mesh = n == 8   ? DeviceMesh::init({2, 2, 2}, DeviceMesh::Names{"dp", "cp", "tp"})
                      : n == 4 ? DeviceMesh::init({2, 2}, DeviceMesh::Names{"dp", "tp"})
                               : DeviceMesh::init({n, 1}, DeviceMesh::Names{"dp", "tp"});
    if (n >= 4) (void)mesh.slice({"dp", "tp"}).flatten();
    return comm::build_mesh_groups(world(), mesh);
  }();
  return groups;
}

std::vector<comm::Communicator*> communicators() {
  std::vector<comm::Communicator*> out{&world()};
  for (const auto& [name, c] : axis_groups().axes) {
    EXPECT_NE(c, nullptr) << name;  // the mesh covers the world
    if (c) out.push_back(c.get());
  }
  return out;
}

template <typename T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::Float32;
  if constexpr (std::is_same_v<T, double>) return DType::Float64;
  if constexpr (std::is_same_v<T, std::int32_t>) return DType::Int32;
  if constexpr (std::is_same_v<T, std::int64_t>) return DType::Int64;
  if constexpr (std::is_same_v<T, std::int8_t>) return DType::Int8;
  if constexpr (std::is_same_v<T, std::uint8_t>) return DType::UInt8;
}

// Input of rank r at index i: small values (sums of 8 ranks fit int8); negative ones for signed types. For
// product, mostly 1 with a few 2 (and -1 for signed types), so that the product of 8 ranks stays within 4.
template <typename T>
T input(ReduceOp op, int r, std::size_t i) {
  const auto k = static_cast<int>(i);
  if (op == ReduceOp::Product) {
    const int m = (r + k) % 4;
    if (m == 0) return T(2);
    if (m == 1 && std::is_signed_v<T>) return T(-1);
    return T(1);
  }
  const int v = (r * 7 + k * 3) % 11;
  return static_cast<T>(std::is_signed_v<T> ? v - 5 : v);
}

template <typename T>
T expected(ReduceOp op, int n, std::size_t i) {
  double acc = op == ReduceOp::Product ? 1.0 : 0.0;
  for (int r = 0; r < n; ++r) {
    const double v = static_cast<double>(input<T>(op, r, i));
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Avg: acc += v; break;
      case ReduceOp::Product: acc *= v; break;
      case ReduceOp::Max: acc = r == 0 ? v : std::max(acc, v); break;
      case ReduceOp::Min: acc = r == 0 ? v : std::min(acc, v); break;
    }
  }
  const T result = static_cast<T>(acc);
  if (op == ReduceOp::Avg) return static_cast<T>(result / static_cast<T>(n));  // integer division for ints
  return result;
}

constexpr ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max, ReduceOp::Min, ReduceOp::Product};

template <typename T>
void check_all_reduce(comm::Communicator& c, std::size_t count) {
  const int n = c.size();
  const int r = c.rank();
  for (const ReduceOp op : kOps) {
    std::vector<T> in(count);
    for (std::size_t i = 0; i < count; ++i) in[i] = input<T>(op, r, i);
    std::vector<T> out(count, T(99));
    c.all_reduce(comm::ConstBuffer{in.data(), count, dtype_of<T>()}, comm::Buffer{out.data(), count, dtype_of<T>()},
                 op);
    std::vector<T> inplace = in;
    c.all_reduce(comm::ConstBuffer{inplace.data(), count, dtype_of<T>()},
                 comm::Buffer{inplace.data(), count, dtype_of<T>()}, op);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const T want = expected<T>(op, n, i);
      if (out[i] != want || inplace[i] != want) {
        if (wrong++ < 3) {
          ADD_FAILURE() << "all_reduce " << to_string(op) << " " << to_string(dtype_of<T>()) << " on '" << c.name()
                        << "' [" << i << "]: got " << +out[i] << " (in place " << +inplace[i] << "), want " << +want;
        }
      }
    }
    EXPECT_EQ(wrong, 0U) << c.name() << " " << to_string(op) << " " << to_string(dtype_of<T>());
  }
}

template <typename T>
void check_reduce_scatter(comm::Communicator& c, std::size_t block) {
  const auto n = static_cast<std::size_t>(c.size());
  const int r = c.rank();
  for (const ReduceOp op : kOps) {
    std::vector<T> in(block * n);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = input<T>(op, r, i);
    std::vector<T> out(block, T(99));
    c.reduce_scatter(comm::ConstBuffer{in.data(), in.size(), dtype_of<T>()},
                     comm::Buffer{out.data(), block, dtype_of<T>()}, op);
    std::vector<T> inplace = in;
    c.reduce_scatter(comm::ConstBuffer{inplace.data(), inplace.size(), dtype_of<T>()},
                     comm::Buffer{inplace.data(), block, dtype_of<T>()}, op);
    for (std::size_t j = 0; j < block; ++j) {
      const T want = expected<T>(op, c.size(), static_cast<std::size_t>(r) * block + j);
      EXPECT_EQ(out[j], want) << "reduce_scatter " << to_string(op) << " " << to_string(dtype_of<T>()) << " on '"
                              << c.name() << "' [" << j << "]";
      EXPECT_EQ(inplace[j], want) << "in-place reduce_scatter " << to_string(op) << " on '" << c.name() << "'";
    }
  }
}

template <typename T>
void check_movement(comm::Communicator& c, DType dtype) {
  const auto n = static_cast<std::size_t>(c.size());
  const auto r = static_cast<std::size_t>(c.rank());
  const std::string label = std::string(to_string(dtype)) + " on '" + c.name() + "'";

  // all_gather: rank r contributes r*3 + j.
  constexpr std::size_t kGather = 3;
  std::vector<T> in(kGather);
  for (std::size_t j = 0; j < kGather; ++j) in[j] = static_cast<T>(r * kGather + j);
  std::vector<T> out(kGather * n, T(0));
  c.all_gather(comm::ConstBuffer{in.data(), kGather, dtype}, comm::Buffer{out.data(), out.size(), dtype});
  std::vector<T> inplace(kGather * n, T(0));
  std::memcpy(inplace.data() + r * kGather, in.data(), kGather * sizeof(T));
  c.all_gather(comm::ConstBuffer{inplace.data() + r * kGather, kGather, dtype},
               comm::Buffer{inplace.data(), inplace.size(), dtype});
  for (std::size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i], static_cast<T>(i)) << "all_gather " << label << " [" << i << "]";
    EXPECT_EQ(inplace[i], static_cast<T>(i)) << "in-place all_gather " << label << " [" << i << "]";
  }

  // all_to_all: block b of rank r holds (r*n + b)*2 + j and lands as block r of rank b.
  constexpr std::size_t kBlock = 2;
  std::vector<T> send(kBlock * n);
  for (std::size_t b = 0; b < n; ++b) {
    for (std::size_t j = 0; j < kBlock; ++j) send[b * kBlock + j] = static_cast<T>((r * n + b) * kBlock + j);
  }
  std::vector<T> recv(send.size(), T(0));
  c.all_to_all(comm::ConstBuffer{send.data(), send.size(), dtype}, comm::Buffer{recv.data(), recv.size(), dtype});
  std::vector<T> both = send;
  c.all_to_all(comm::ConstBuffer{both.data(), both.size(), dtype}, comm::Buffer{both.data(), both.size(), dtype});
  for (std::size_t b = 0; b < n; ++b) {
    for (std::size_t j = 0; j < kBlock; ++j) {
      const auto want = static_cast<T>((b * n + r) * kBlock + j);
      EXPECT_EQ(recv[b * kBlock + j], want) << "all_to_all " << label << " block " << b;
      EXPECT_EQ(both[b * kBlock + j], want) << "in-place all_to_all " << label << " block " << b;
    }
  }

  // broadcast from the first and the last rank.
  for (const int root : {0, c.size() - 1}) {
    std::vector<T> buffer(4, T(0));
    if (c.rank() == root) {
      for (std::size_t j = 0; j < buffer.size(); ++j) buffer[j] = static_cast<T>(40 + static_cast<std::size_t>(root) + j);
    }
    c.broadcast(comm::Buffer{buffer.data(), buffer.size(), dtype}, root);
    for (std::size_t j = 0; j < buffer.size(); ++j) {
      EXPECT_EQ(buffer[j], static_cast<T>(40 + static_cast<std::size_t>(root) + j))
          << "broadcast " << label << " root " << root;
    }
  }
}

TEST(MpiCommunicator, WorldMatchesMpi) {
  auto& w = world();
  EXPECT_EQ(w.backend(), "mpi");
  EXPECT_EQ(w.name(), "world");
  const auto ranks = gather_i64(w, w.rank());
  for (std::size_t i = 0; i < ranks.size(); ++i) EXPECT_EQ(ranks[i], static_cast<std::int64_t>(i));
  w.barrier();
  w.synchronize();
}

// node_place: the ranks that share memory with this one. The node's name (first) is its lowest rank, so every rank
// names its node by a rank of that node that is not above its own, the node's lowest names itself, and as many
// ranks name a node as it has. Under this test's mpirun every rank is on one machine: one node of the whole world.
TEST(MpiCommunicator, NodePlaceNamesEachNodeByItsLowestRank) {
  auto& w = world();
  const mpi::MpiCommunicator::NodePlace place = w.node_place();
  const auto first = gather_i64(w, place.first);
  const auto size = gather_i64(w, place.size);
  const auto index = gather_i64(w, place.rank);
  for (std::size_t r = 0; r < first.size(); ++r) {
    ASSERT_GE(first[r], 0);
    ASSERT_LE(first[r], static_cast<std::int64_t>(r));
    EXPECT_EQ(first[static_cast<std::size_t>(first[r])], first[r]) << "rank " << r;
    EXPECT_EQ(std::count(first.begin(), first.end(), first[r]), size[r]) << "rank " << r;
    EXPECT_LT(index[r], size[r]);
  }
  EXPECT_EQ(place.first, 0);
  EXPECT_EQ(place.size, w.size());
  EXPECT_EQ(place.rank, w.rank());
  // On a communicator of part of the world, ranks are that communicator's: the odd world ranks name their node by
  // its rank 0.
  auto odd = w.split(w.rank() % 2 == 1 ? 0 : -1, w.rank(), "odd");
  if (odd != nullptr) {
    auto& o = dynamic_cast<mpi::MpiCommunicator&>(*odd);
    const mpi::MpiCommunicator::NodePlace p = o.node_place();
    EXPECT_EQ(p.first, 0);
    EXPECT_EQ(p.size, o.size());
    EXPECT_EQ(p.rank, o.rank());
  }
}

TEST(MpiCommunicator, AllReduceEveryOpEveryAxis) {
  for (auto* c : communicators()) {
    check_all_reduce<std::int32_t>(*c, 7);
    check_all_reduce<std::int64_t>(*c, 7);
    check_all_reduce<std::int8_t>(*c, 7);
    check_all_reduce<std::uint8_t>(*c, 7);
    check_all_reduce<float>(*c, 7);
    check_all_reduce<double>(*c, 7);
  }
  // A larger buffer, where Open MPI switches algorithms.
  check_all_reduce<float>(world(), 40000);
}

TEST(MpiCommunicator, ReduceScatterEveryOpEveryAxis) {
  for (auto* c : communicators()) {
    check_reduce_scatter<std::int32_t>(*c, 3);
    check_reduce_scatter<std::int64_t>(*c, 3);
    check_reduce_scatter<std::int8_t>(*c, 3);
    check_reduce_scatter<std::uint8_t>(*c, 3);
    check_reduce_scatter<float>(*c, 3);
    check_reduce_scatter<double>(*c, 3);
  }
}

TEST(MpiCommunicator, AvgOfIntsTruncatesTowardZero) {
  auto& w = world();
  if (w.size() < 2) GTEST_SKIP();
  // Rank 0 holds -3, the others 0: the sum -3 divided by the size truncates toward zero.
  std::int32_t in = w.rank() == 0 ? -3 : 0;
  std::int32_t out = 0;
  w.all_reduce(comm::ConstBuffer{&in, 1, DType::Int32}, comm::Buffer{&out, 1, DType::Int32}, ReduceOp::Avg);
  EXPECT_EQ(out, -3 / w.size());
  float fin = w.rank() == 0 ? -3.0F : 0.0F;
  float fout = 0;
  w.all_reduce(comm::ConstBuffer{&fin, 1, DType::Float32}, comm::Buffer{&fout, 1, DType::Float32}, ReduceOp::Avg);
  EXPECT_EQ(fout, -3.0F / static_cast<float>(w.size()));
}

TEST(MpiCommunicator, GatherAllToAllBroadcastEveryDtypeEveryAxis) {
  for (auto* c : communicators()) {
    check_movement<std::int32_t>(*c, DType::Int32);
    check_movement<std::int64_t>(*c, DType::Int64);
    check_movement<std::int8_t>(*c, DType::Int8);
    check_movement<std::uint8_t>(*c, DType::UInt8);
    check_movement<float>(*c, DType::Float32);
    check_movement<double>(*c, DType::Float64);
    // 16-bit and 8-bit floats move as bytes: any bit pattern survives.
    check_movement<std::uint16_t>(*c, DType::Float16);
    check_movement<std::uint16_t>(*c, DType::BFloat16);
    check_movement<std::uint8_t>(*c, DType::Float8E4M3);
    check_movement<std::uint8_t>(*c, DType::Float8E5M2);
  }
}

template <typename F>
std::string value_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ValueError) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(MpiCommunicator, BufferSizeErrorsNameTheCounts) {
  auto& w = world();
  const int n = w.size();
  std::vector<float> in(3), out(100);
  EXPECT_THAT(value_error([&] {
                w.all_gather(comm::ConstBuffer{in.data(), 3, DType::Float32}, comm::Buffer{out.data(), 5, DType::Float32});
              }),
              AllOf(HasSubstr("out.count (5)"), HasSubstr("in.count (3)"), HasSubstr("size (" + std::to_string(n) + ")"),
                    HasSubstr("'world'")));
  EXPECT_THAT(value_error([&] {
                w.all_reduce(comm::ConstBuffer{in.data(), 3, DType::Float32}, comm::Buffer{out.data(), 4, DType::Float32},
                             ReduceOp::Sum);
              }),
              AllOf(HasSubstr("in.count (3)"), HasSubstr("out.count (4)")));
  EXPECT_THAT(value_error([&] {
                w.reduce_scatter(comm::ConstBuffer{out.data(), static_cast<std::size_t>(2 * n + 1), DType::Float32},
                                 comm::Buffer{in.data(), 2, DType::Float32}, ReduceOp::Sum);
              }),
              AllOf(HasSubstr("in.count (" + std::to_string(2 * n + 1) + ")"), HasSubstr("out.count (2)")));
  EXPECT_THAT(value_error([&] {
                w.all_to_all(comm::ConstBuffer{out.data(), static_cast<std::size_t>(n + 1), DType::Float32},
                             comm::Buffer{in.data(), static_cast<std::size_t>(n + 1), DType::Float32});
              }),
              HasSubstr("multiple of size (" + std::to_string(n) + ")"));
  EXPECT_THAT(value_error([&] {
                w.all_reduce(comm::ConstBuffer{in.data(), 3, DType::Float32}, comm::Buffer{out.data(), 3, DType::Float64},
                             ReduceOp::Sum);
              }),
              AllOf(HasSubstr("float32"), HasSubstr("float64")));
  EXPECT_THAT(value_error([&] { w.broadcast(comm::Buffer{in.data(), 3, DType::Float32}, n); }),
              HasSubstr("root " + std::to_string(n) + " is out of range for size " + std::to_string(n)));
  EXPECT_THAT(value_error([&] {
                w.all_reduce(comm::ConstBuffer{nullptr, 3, DType::Float32}, comm::Buffer{out.data(), 3, DType::Float32},
                             ReduceOp::Sum);
              }),
              HasSubstr("null buffer"));
  // The communicator still works after the errors (they are raised before any MPI call).
  EXPECT_EQ(gather_i64(w, 7).size(), static_cast<std::size_t>(n));
}

TEST(MpiCommunicator, LowPrecisionFloatsCannotBeReduced) {
  auto& w = world();
  std::vector<std::uint16_t> h(4 * static_cast<std::size_t>(w.size()));
  for (const DType d : {DType::Float16, DType::BFloat16}) {
    EXPECT_THAT(value_error([&] {
                  w.all_reduce(comm::ConstBuffer{h.data(), 4, d}, comm::Buffer{h.data(), 4, d}, ReduceOp::Sum);
                }),
                AllOf(HasSubstr(std::string(to_string(d))), HasSubstr("all_reduce")));
    EXPECT_THAT(value_error([&] {
                  w.reduce_scatter(comm::ConstBuffer{h.data(), h.size(), d}, comm::Buffer{h.data(), 4, d}, ReduceOp::Max);
                }),
                AllOf(HasSubstr(std::string(to_string(d))), HasSubstr("reduce_scatter")));
  }
  std::vector<std::uint8_t> b(4);
  for (const DType d : {DType::Float8E4M3, DType::Float8E5M2}) {
    EXPECT_THAT(value_error([&] {
                  w.all_reduce(comm::ConstBuffer{b.data(), 4, d}, comm::Buffer{b.data(), 4, d}, ReduceOp::Avg);
                }),
                HasSubstr(std::string(to_string(d))));
  }
}

TEST(MpiCommunicator, SplitWithNegativeColorGivesNone) {
  auto& w = world();
  const int n = w.size();
  // Even ranks opt out; odd ranks form one communicator ordered by key = -rank (descending world rank).
  auto odd = w.split(w.rank() % 2 == 0 ? -1 : 0, -w.rank(), "odd");
  if (w.rank() % 2 == 0) {
    EXPECT_EQ(odd, nullptr);
  } else {
    ASSERT_NE(odd, nullptr);
    EXPECT_EQ(odd->name(), "odd");
    EXPECT_EQ(odd->size(), n / 2);
    EXPECT_EQ(odd->timeout(), w.timeout());
    const auto members = gather_i64(*odd, w.rank());
    std::vector<std::int64_t> want;
    for (int r = n - 1; r >= 0; --r) {
      if (r % 2 == 1) want.push_back(r);
    }
    EXPECT_EQ(members, want);
    EXPECT_EQ(odd->rank(), (n - 1 - w.rank()) / 2);
  }
  // Two colours, keyed by rank: halves of the world.
  auto half = w.split(w.rank() < n / 2 ? 0 : 1, w.rank(), "half");
  ASSERT_NE(half, nullptr);
  EXPECT_EQ(half->size(), n / 2);
  const auto members = gather_i64(*half, w.rank());
  for (std::size_t i = 0; i < members.size(); ++i) {
    EXPECT_EQ(members[i], static_cast<std::int64_t>(i) + (w.rank() < n / 2 ? 0 : n / 2));
  }
  // Every rank opting out gives none everywhere.
  EXPECT_EQ(w.split(-1, 0, "none"), nullptr);
}

}  // namespace
}  // namespace meshloom
