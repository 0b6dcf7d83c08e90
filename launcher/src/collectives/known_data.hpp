// The inputs every collective file fills and the closed forms it checks against: data whose exact result is known
// without looking at any other rank's input.
//
//   moved data (all_gather, all_to_all, broadcast)  element i of rank r is the first itemsize bytes of mix(r, i), a
//       64-bit hash: a block in the wrong place or from the wrong rank is caught, whatever the dtype (compared bytewise).
//   reduced data (all_reduce, reduce_scatter)       element i of rank r of n, with b = 2 + i mod 7:
//       sum      b + (r mod 64)                                  -> n*b + S(n), S(n) = sum of (r mod 64) over r < n
//       avg      b + 1 on rank 0, b - 1 on rank 1, b elsewhere  -> b   (b + 1 on one rank; the sum is n*b)
//       max/min  b + 2((r + i) mod m), m = min(n, 32)            -> b + 2(m - 1) / b   (every residue occurs)
//       product  2 at r = i mod n, n + 2 at r = (i + 1) mod n, else 1   -> 2(n + 2)   (2 on one rank)
//   Small integers, so every partial result is exact in every reducible type in any order (float32 up to 2^24:
//   a sum, at most 39.5 per rank, stays below it for groups of up to 420,000 ranks); integer sums and products
//   wrap the same way on both sides, and an integer average is the wrapped sum divided by n in the type, as both
//   backends compute it. A float average is compared within 2 max(n, 2) ulps: NCCL scales each input by 1/n before
//   it sums.
//   On two or more ranks each op's inputs tell it apart: every other op applied to them gives another value at every
//   element, so a backend that ran the wrong op is caught.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "collectives/collective.hpp"
#include "meshloom/dtype.hpp"
#include "meshloom/error.hpp"
#include "meshloom/plan/state.hpp"

namespace meshloom::launcher::known {

[[nodiscard]] inline std::uint64_t mix(std::uint64_t rank, std::uint64_t index) noexcept {
  std::uint64_t z = rank * 0x9E3779B97F4A7C15ULL + index + 0x632BE59BD9B4E019ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Element `element` of `buf` (itemsize `item`) set to / compared with mix(rank, index).
inline void put_moved(std::vector<std::byte>& buf, std::size_t element, std::size_t item, std::uint64_t rank,
                      std::uint64_t index) noexcept {
  const std::uint64_t v = mix(rank, index);
  std::memcpy(buf.data() + element * item, &v, item);
}
[[nodiscard]] inline bool same_moved(const std::vector<std::byte>& buf, std::size_t element, std::size_t item,
                                     std::uint64_t rank, std::uint64_t index) noexcept {
  const std::uint64_t v = mix(rank, index);
  return std::memcmp(buf.data() + element * item, &v, item) == 0;
}

inline constexpr std::int64_t kResidues = 64;  // sum
inline constexpr std::int64_t kSpread = 32;    // max and min: values up to 8 + 62, within int8

// Input element `index` of rank `rank` of n for a reduction with `op`.
[[nodiscard]] std::int64_t reduced_input(ReduceOp op, std::int64_t rank, std::int64_t index, std::int64_t n) noexcept;
// The exact reduction of element `index` over the n ranks, in closed form (O(1)), before conversion to the dtype.
[[nodiscard]] std::int64_t reduced_output(ReduceOp op, std::int64_t index, std::int64_t n) noexcept;
// For avg: the sum before the division (n * reduced_output); for the other ops, reduced_output.
[[nodiscard]] std::int64_t reduced_sum(ReduceOp op, std::int64_t index, std::int64_t n) noexcept;

// Whether the closed forms can be checked for `dtype` (the types both backends reduce exactly: float32, float64,
// int32, int64, int8, uint8).
[[nodiscard]] bool checkable(DType dtype) noexcept;

// Calls f(T{}) with the C++ type of a checkable dtype; ValueError naming the dtype otherwise.
template <class F>
void with_checkable_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Float32: f(float{}); return;
    case DType::Float64: f(double{}); return;
    case DType::Int32: f(std::int32_t{}); return;
    case DType::Int64: f(std::int64_t{}); return;
    case DType::Int8: f(std::int8_t{}); return;
    case DType::UInt8: f(std::uint8_t{}); return;
    default: break;
  }
  raise(ErrorKind::ValueError, "--check cannot predict a reduction of " + std::string(to_string(dtype)) +
                                   "; use float32, float64, int32, int64, int8 or uint8");
}

// The value v in T as the backends produce it: integers wrap modulo 2^bits (C++20 conversion), floats are exact.
template <class T>
[[nodiscard]] T as(std::int64_t v) noexcept {
  return static_cast<T>(v);
}

// Fills elements [0, count) of `buf` (T) with reduced_input of rank `rank` at element index k.
template <class T>
void put_reduced(std::vector<std::byte>& buf, std::size_t count, ReduceOp op, std::int64_t rank, std::int64_t n) {
  for (std::size_t k = 0; k < count; ++k) {
    const T v = as<T>(reduced_input(op, rank, static_cast<std::int64_t>(k), n));
    std::memcpy(buf.data() + k * sizeof(T), &v, sizeof(T));
  }
}

// What a backend produces for element `index` in T: the closed form, except that an integer average is the wrapped
// sum divided by n in T (both backends sum, then divide).
template <class T>
[[nodiscard]] T expected_reduced(ReduceOp op, std::int64_t index, std::int64_t n) noexcept {
  if constexpr (std::is_integral_v<T>) {
    if (op == ReduceOp::Avg && as<T>(n) != T{0}) return static_cast<T>(as<T>(reduced_sum(op, index, n)) / as<T>(n));
  }
  return as<T>(reduced_output(op, index, n));
}

// Whether `got` is what a backend may produce for `want` over n ranks: bitwise equal, or, for a float average,
// within 2 max(n, 2) ulps of it (NCCL's average scales each input by 1/n, rounding, then sums n inexact terms).
template <class T>
[[nodiscard]] bool same_reduced(T got, T want, ReduceOp op, std::int64_t n) noexcept {
  if (std::memcmp(&got, &want, sizeof(T)) == 0) return true;
  if constexpr (std::is_floating_point_v<T>) {
    if (op == ReduceOp::Avg) {
      const T ulps = T{2} * static_cast<T>(std::max<std::int64_t>(n, 2));
      return std::abs(got - want) <= ulps * std::numeric_limits<T>::epsilon() * std::max(std::abs(want), T{1});
    }
  }
  return false;
}

// The elements of `buf` (T, `count` of them) that are not what a backend produces at index offset + k.
template <class T>
[[nodiscard]] std::int64_t wrong_reduced(const std::vector<std::byte>& buf, std::size_t count, ReduceOp op,
                                         std::int64_t offset, std::int64_t n) {
  std::int64_t wrong = 0;
  for (std::size_t k = 0; k < count; ++k) {
    T got;
    std::memcpy(&got, buf.data() + k * sizeof(T), sizeof(T));
    if (!same_reduced(got, expected_reduced<T>(op, offset + static_cast<std::int64_t>(k), n), op, n)) ++wrong;
  }
  return wrong;
}

// The output poison written before a run, so that an output the collective never wrote is caught.
inline constexpr std::byte kPoison{0xA5};

// What the collective files share (collective.hpp's CollectiveData):
// sizes data.in from counts.in_count and data.out from counts.out_count, poisoned (empty when `in_place`);
void size_buffers(CollectiveData& data, bool in_place);
// element i of data.in is mix(pattern, i) (moved data of rank `pattern`);
void fill_moved(CollectiveData& data, std::uint64_t pattern);
// the elements e of `buf` (itemsize data.item(), `count` of them) that are not mix(source(e)), source(e) being the
// (rank, index) whose element e must hold;
template <class Source>
[[nodiscard]] std::int64_t wrong_moved(const std::vector<std::byte>& buf, std::int64_t count, std::size_t item,
                                       Source&& source) {
  std::int64_t wrong = 0;
  for (std::size_t e = 0; e < static_cast<std::size_t>(count); ++e) {
    const auto [rank, index] = source(e);
    if (!same_moved(buf, e, item, rank, index)) ++wrong;
  }
  return wrong;
}
// element i of data.in is reduced_input(op, me, i, n) (zeros for a dtype the check cannot predict: timed only);
void fill_reduced(CollectiveData& data);
// the elements of data.out that are not reduced_output(op, offset + k, n).
[[nodiscard]] std::int64_t wrong_reduced_output(const CollectiveData& data, std::int64_t offset);

}  // namespace meshloom::launcher::known
