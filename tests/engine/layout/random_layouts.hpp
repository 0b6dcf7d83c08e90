// Seeded random layouts for the layout-algebra property tests.
//
// Every generator draws 1..4 leaves of size 1..4 (sizes 2..4 where a property needs non-trivial leaves) and
// wraps them in a random nesting (ints, 1-tuples, nested tuples), so the operations are exercised on the same
// variety of shapes a mesh layout can take. The kinds, by the property they guarantee:
//
//   arbitrary()         any strides in [0, 12]: possibly overlapping, possibly stride 0
//   compact()           the lexicographic default strides: L(i) == i
//   permuted_compact()  compact leaves in a random stride order: a bijection onto [0, size)
//   sub_layout()        some leaves of a permuted compact layout: injective and orthogonal, with gaps
//
// Plus helpers for enumerating coordinates and for the offsets of a layout, computed independently of the
// engine (straight from the definition L(c) = sum c_i * stride_i).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "meshloom/layout/int_tuple.hpp"
#include "meshloom/layout/layout.hpp"

namespace meshloom::testing {

// How many random layouts each property test draws.
inline constexpr int kRandomCases = 500;

class LayoutGen {
public:
  explicit LayoutGen(std::uint64_t seed) : rng_(seed) {}

  // A uniform integer in [lo, hi].
  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
  }
  bool coin() { return uniform(0, 1) == 1; }
  std::mt19937_64& engine() { return rng_; }

  // Leaf sizes: n in [min_leaves, max_leaves] leaves, each of size [min_size, max_size].
  std::vector<std::int64_t> sizes(std::size_t min_leaves = 1, std::size_t max_leaves = 4, std::int64_t min_size = 1,
                                  std::int64_t max_size = 4) {
    const auto n = static_cast<std::size_t>(uniform(static_cast<std::int64_t>(min_leaves),
                                                    static_cast<std::int64_t>(max_leaves)));
    std::vector<std::int64_t> out(n);
    for (auto& s : out) s = uniform(min_size, max_size);
    return out;
  }

  // The given flat leaves in a random nesting (depth-first order of leaves preserved).
  Layout nested(const std::vector<Leaf>& leaves) {
    auto [shape, stride] = nest_range(leaves, 0, leaves.size(), 0);
    return {shape, stride};
  }

  Layout arbitrary() {
    std::vector<Leaf> leaves;
    for (auto s : sizes()) leaves.push_back({s, uniform(0, 12)});
    return nested(leaves);
  }

  Layout compact() {
    const auto s = sizes();
    std::vector<Leaf> leaves;
    std::int64_t stride = 1;
    std::vector<std::int64_t> strides(s.size());
    for (std::size_t i = s.size(); i-- > 0;) {
      strides[i] = stride;
      stride *= s[i];
    }
    for (std::size_t i = 0; i < s.size(); ++i) leaves.push_back({s[i], strides[i]});
    return nested(leaves);
  }

  // Flat leaves of a compact layout whose place values are assigned in a random order.
  std::vector<Leaf> permuted_compact_leaves(std::size_t min_leaves = 1, std::size_t max_leaves = 4,
                                            std::int64_t min_size = 1) {
    const auto s = sizes(min_leaves, max_leaves, min_size, 4);
    std::vector<std::size_t> order(s.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::shuffle(order.begin(), order.end(), rng_);
    std::vector<Leaf> leaves(s.size());
    std::int64_t stride = 1;
    for (auto i : order) {
      leaves[i] = {s[i], stride};
      stride *= s[i];
    }
    return leaves;
  }

  Layout permuted_compact() { return nested(permuted_compact_leaves()); }

  // Keeps a random non-empty subset of the leaves of a permuted compact layout of 2..5 leaves of size >= 2.
  Layout sub_layout() {
    auto all = permuted_compact_leaves(2, 5, 2);
    std::vector<Leaf> kept;
    while (kept.empty()) {
      for (const auto& leaf : all) {
        if (uniform(0, 2) != 0) kept.push_back(leaf);
      }
    }
    return nested(kept);
  }

private:
  // Nests leaves [begin, end) into a congruent (shape, stride) pair.
  std::pair<IntTuple, IntTuple> nest_range(const std::vector<Leaf>& leaves, std::size_t begin, std::size_t end,
                                           int depth) {
    const std::size_t n = end - begin;
    if (n == 1 && (depth > 0 || uniform(0, 3) != 0) && uniform(0, 3) != 0) {
      return {IntTuple(leaves[begin].size), IntTuple(leaves[begin].stride)};
    }
    std::vector<IntTuple> shape;
    std::vector<IntTuple> stride;
    std::size_t i = begin;
    while (i < end) {
      // At depth >= 2 keep the remaining leaves flat; otherwise group a random run of them.
      std::size_t run = 1;
      if (depth < 2 && uniform(0, 2) == 0) {
        run = static_cast<std::size_t>(uniform(1, static_cast<std::int64_t>(end - i)));
      }
      if (run == 1 && !(depth < 2 && uniform(0, 5) == 0)) {
        shape.emplace_back(leaves[i].size);
        stride.emplace_back(leaves[i].stride);
      } else {
        auto [sub_shape, sub_stride] = nest_range(leaves, i, i + run, depth + 1);
        shape.push_back(std::move(sub_shape));
        stride.push_back(std::move(sub_stride));
      }
      i += run;
    }
    return {IntTuple::tuple(std::move(shape)), IntTuple::tuple(std::move(stride))};
  }

  std::mt19937_64 rng_;
};

// Offsets of the flat leaves straight from the definition, lexicographically (last leaf fastest).
inline std::vector<std::int64_t> reference_offsets(const std::vector<Leaf>& leaves) {
  std::vector<std::int64_t> out{0};
  for (const auto& leaf : leaves) {
    std::vector<std::int64_t> next;
    next.reserve(out.size() * static_cast<std::size_t>(leaf.size));
    for (auto base : out) {
      for (std::int64_t c = 0; c < leaf.size; ++c) next.push_back(base + c * leaf.stride);
    }
    out = std::move(next);
  }
  return out;
}

inline std::vector<std::int64_t> reference_offsets(const Layout& l) { return reference_offsets(leaves(l)); }

// Every coordinate of a shape (congruent to it, ints at the leaves), lexicographically.
inline std::vector<IntTuple> all_coordinates(const IntTuple& shape) {
  if (shape.is_int()) {
    std::vector<IntTuple> out;
    for (std::int64_t c = 0; c < shape.value(); ++c) out.emplace_back(c);
    return out;
  }
  std::vector<std::vector<IntTuple>> partial{{}};
  for (const auto& e : shape.elements()) {
    std::vector<std::vector<IntTuple>> next;
    const auto sub = all_coordinates(e);
    for (const auto& prefix : partial) {
      for (const auto& c : sub) {
        next.push_back(prefix);
        next.back().push_back(c);
      }
    }
    partial = std::move(next);
  }
  std::vector<IntTuple> out;
  out.reserve(partial.size());
  for (auto& p : partial) out.push_back(IntTuple::tuple(std::move(p)));
  return out;
}

}  // namespace meshloom::testing
