// Seeded randomness for the design tests, and random redistribution states. Header-only; include as
// "support/random_state.hpp".
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "meshloom/plan/state.hpp"

namespace meshloom::testing {

// A seeded source of the few random choices the tests make (std::mt19937, so a seed replays the same run).
class Random {
public:
  explicit Random(std::uint32_t seed) : engine_(seed) {}
  std::int64_t between(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(engine_);
  }
  std::size_t index(std::size_t n) { return static_cast<std::size_t>(between(0, static_cast<std::int64_t>(n) - 1)); }
  bool chance(int percent) { return between(1, 100) <= percent; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[index(v.size())];
  }
  template <class T>
  void shuffle(std::vector<T>& v) {
    std::shuffle(v.begin(), v.end(), engine_);
  }

private:
  std::mt19937 engine_;
};

// A state of `ndim` placements for a tensor of `rank` dims: each axis R, S(d) or P (sum or `other`), and each
// dim sharded by several axes in its default order or, half the time, a shuffled one.
inline State random_state(Random& rng, std::size_t ndim, std::int64_t rank, ReduceOp other = ReduceOp::Max) {
  std::vector<Placement> placements;
  for (std::size_t a = 0; a < ndim; ++a) {
    const std::int64_t kind = rng.between(0, 2);
    if (kind == 1 && rank > 0) {
      placements.push_back(Placement::shard(rng.between(0, rank - 1)));
    } else if (kind == 2) {
      placements.push_back(Placement::partial(rng.chance(50) ? ReduceOp::Sum : other));
    } else {
      placements.push_back(Placement::replicate());
    }
  }
  std::map<std::int64_t, std::vector<std::size_t>> order;
  for (std::size_t a = 0; a < ndim; ++a) {
    if (placements[a].is_shard()) order[placements[a].dim()].push_back(a);
  }
  std::vector<ShardOrderEntry> entries;
  for (auto& [dim, axes] : order) {
    if (rng.chance(50)) rng.shuffle(axes);
    entries.push_back({dim, axes});
  }
  return State(placements, entries);
}

}  // namespace meshloom::testing
