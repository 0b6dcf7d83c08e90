// Redistribution states: where a tensor lives on a mesh, as the planner sees it.
//
// A State holds one Placement per mesh axis plus the shard order: for every sharded tensor dim, the mesh
// axes that shard it, in the order the sharding was applied (the last one is the innermost split).
// Placements:
//   Replicate          every rank on the axis holds the whole (local) tensor          text: R
//   Shard(d)           tensor dim d is split across the axis (torch.chunk semantics)  text: S(d)
//   Partial(op)        every rank holds a partial value, reduced with op              text: P(op)
//                      op is one of sum, avg, max, min, product
//
// Text form (PyTorch's format_shard_order_str): one token per mesh axis, left to right, no separators.
// `S(d)[k]` says this axis is the k-th (0-based) axis in dim d's shard order. Brackets are printed only
// when a dim is sharded by more than one axis; then every S(d) of that dim carries them. Examples on a
// 3-axis mesh:
//   S(0)[0]S(0)[1]S(0)[2]   dim 0 split by axis 0, then 1, then 2 (the default order)
//   S(0)[1]S(0)[0]S(0)[2]   same placements, dim 0 split by axis 1 first, then 0, then 2
//   RS(1)S(0)               axis 1 shards dim 1, axis 2 shards dim 0
//   P(sum)RS(0)             partial sums on axis 0
//   RRR                     replicated everywhere
// Input is more lenient, output is always the form above:
//   - `P` alone means P(sum); `S(d)[0]` is accepted when only one axis shards d;
//   - the long forms Replicate(), Shard(d), Shard(dim=d), Partial(op) (PyTorch's reprs);
//   - whitespace anywhere between tokens and at most one `,` or `|` between two tokens:
//     "Shard(0), Replicate(), Partial(sum)" parses as S(0)RP(sum), "S(0) | R" as S(0)R;
//   - without brackets the order of a dim is its axes left to right: "S(0)S(0)R" prints
//     "S(0)[0]S(0)[1]R". With brackets, every S(d) of that dim carries one and the indices are a
//     permutation of 0..n-1, where n is the number of axes that shard d.
// Parse errors name the offending token, its 0-based byte position and what is wrong, e.g.
//   ValueError: cannot parse state "S(0)[1]S(0)": position 7, token "S(0)": every S(0) must carry a
//   shard-order index [k] or none may; S(0)[1] at position 0 does, this one does not
//
// Words: a mesh has axes (indexed 0..ndim-1), a tensor has dims (indexed 0..rank-1).
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace meshloom {

// Reduce op of a Partial placement.
enum class ReduceOp : std::uint8_t { Sum, Avg, Max, Min, Product };

// "sum", "avg", "max", "min", "product".
[[nodiscard]] std::string_view to_string(ReduceOp op) noexcept;
// The inverse of to_string; nullopt for anything else (case-sensitive).
[[nodiscard]] std::optional<ReduceOp> reduce_op_from_string(std::string_view text) noexcept;

// One axis' placement: Replicate, Shard(dim) or Partial(op). An immutable value type.
class Placement {
public:
  enum class Kind : std::uint8_t { Replicate, Shard, Partial };

  // Replicate.
  constexpr Placement() noexcept = default;
  [[nodiscard]] static constexpr Placement replicate() noexcept { return Placement(); }
  // Shard(dim); ValueError when dim < 0.
  [[nodiscard]] static Placement shard(std::int64_t dim);
  [[nodiscard]] static constexpr Placement partial(ReduceOp op = ReduceOp::Sum) noexcept {
    return Placement(Kind::Partial, 0, op);
  }

  [[nodiscard]] constexpr Kind kind() const noexcept { return kind_; }
  [[nodiscard]] constexpr bool is_replicate() const noexcept { return kind_ == Kind::Replicate; }
  [[nodiscard]] constexpr bool is_shard() const noexcept { return kind_ == Kind::Shard; }
  [[nodiscard]] constexpr bool is_partial() const noexcept { return kind_ == Kind::Partial; }
  // The sharded tensor dim; 0 unless is_shard().
  [[nodiscard]] constexpr std::int64_t dim() const noexcept { return dim_; }
  // The reduce op; Sum unless is_partial().
  [[nodiscard]] constexpr ReduceOp op() const noexcept { return op_; }

  friend constexpr bool operator==(const Placement&, const Placement&) noexcept = default;
  // Replicate < Shard(0) < Shard(1) < ... < Partial(sum) < Partial(avg) < ...
  friend constexpr auto operator<=>(const Placement&, const Placement&) noexcept = default;

private:
  constexpr Placement(Kind kind, std::int64_t dim, ReduceOp op) noexcept : kind_(kind), dim_(dim), op_(op) {}
  Kind kind_ = Kind::Replicate;
  std::int64_t dim_ = 0;
  ReduceOp op_ = ReduceOp::Sum;
};

// "R", "S(0)", "P(sum)".
[[nodiscard]] std::string to_string(const Placement& placement);

// The shard order of one tensor dim: the mesh axes that shard it, in the order the splits were applied.
struct ShardOrderEntry {
  std::int64_t dim = 0;
  std::vector<std::size_t> axes;  // never empty; no repeats
  friend bool operator==(const ShardOrderEntry&, const ShardOrderEntry&) = default;
  friend auto operator<=>(const ShardOrderEntry&, const ShardOrderEntry&) = default;
};

// Placements on every mesh axis plus the shard order. An immutable value type; two states are equal when
// their placements and their shard orders are.
class State {
public:
  // No axes. Only a placeholder (e.g. in a default-constructed struct); every real state has >= 1 axis.
  State() = default;
  // The default shard order: each sharded dim is split by its axes left to right.
  explicit State(std::vector<Placement> placements);
  // An explicit shard order, one entry per sharded dim, in any order (stored sorted by dim). ValueError
  // unless the entries cover exactly the Shard placements: entry dim d lists each axis whose placement is
  // S(d) once, and no other axis; no dim appears twice.
  State(std::vector<Placement> placements, std::vector<ShardOrderEntry> shard_order);

  [[nodiscard]] std::size_t ndim() const noexcept { return placements_.size(); }
  [[nodiscard]] const std::vector<Placement>& placements() const noexcept { return placements_; }
  // IndexError when axis >= ndim().
  [[nodiscard]] const Placement& placement(std::size_t axis) const;
  // One entry per sharded dim, sorted by dim.
  [[nodiscard]] const std::vector<ShardOrderEntry>& shard_order() const noexcept { return shard_order_; }
  // The axes that shard dim, in shard order; empty when no axis shards it.
  [[nodiscard]] std::vector<std::size_t> shard_axes(std::int64_t dim) const;
  // True when every dim's order is its axes ascending (what State(placements) builds).
  [[nodiscard]] bool has_default_shard_order() const noexcept;

  friend bool operator==(const State&, const State&) = default;
  friend auto operator<=>(const State&, const State&) = default;

private:
  std::vector<Placement> placements_;
  std::vector<ShardOrderEntry> shard_order_;
};

// The canonical text form, e.g. "S(0)[1]S(0)[0]R", "P(sum)RS(0)".
[[nodiscard]] std::string to_string(const State& state);

// Parses the text form (see the top of this file). ValueError naming the position and text of the bad token:
//   parse_state("S(0)[1]S(0)[0]R") -> placements S(0),S(0),R; dim 0 order: axis 1, then axis 0
//   parse_state("Shard(0), P")     -> S(0)P(sum)
//   parse_state("S(0)X")           -> ValueError: cannot parse state "S(0)X": position 4, token "X": ...
[[nodiscard]] State parse_state(std::string_view text);
// Same, without throwing: nullopt on failure, and when why is given it receives the reason
// ("position 4, token \"X\": ...") without the "cannot parse state" prefix.
[[nodiscard]] std::optional<State> try_parse_state(std::string_view text, std::string* why = nullptr);

// Checks that the state fits a mesh of mesh_ndim axes and a tensor of tensor_rank dims: one placement per
// axis, every S(d) with 0 <= d < tensor_rank. ValueError otherwise, e.g.
//   check_state(parse_state("S(2)R"), 2, 2) -> ValueError: state "S(2)R" does not fit: S(2) on axis 0 shards
//   dim 2 but the tensor has 2 dims (0..1)
void check_state(const State& state, std::size_t mesh_ndim, std::int64_t tensor_rank);
// Same, without throwing: the reason when it does not fit, nullopt when it does.
[[nodiscard]] std::optional<std::string> state_misfit(const State& state, std::size_t mesh_ndim,
                                                      std::int64_t tensor_rank);

}  // namespace meshloom

template <>
struct std::hash<meshloom::Placement> {
  std::size_t operator()(const meshloom::Placement& placement) const noexcept;
};

template <>
struct std::hash<meshloom::State> {
  std::size_t operator()(const meshloom::State& state) const noexcept;
};
