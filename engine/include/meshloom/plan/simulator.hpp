// The redistribution simulator: executes a Plan on a virtual cluster inside one process and proves it correct by
// moving real data.
//
// A global tensor of int64 values (element at flat row-major index i holds i + 1, so every element is distinct and
// nonzero) is laid out on every rank of the mesh as the request's source state says; every rank holds a real
// dense local buffer. Each plan step then performs its collective on those buffers, group by group, as a real
// cluster would: from the buffers alone plus the step's axes, collective and placements (from, to). Nothing is
// recomputed from the planner's states between steps. After the last step every rank's buffer is compared,
// element by element, with the target distribution of the same global tensor computed independently from the
// request's target state.
//
// Ranks are numbered row-major over the mesh shape (rank 5 of mesh (2,2,2) is coordinate (1,0,1)). The group
// of a step on axes A (ascending) holds the ranks that agree on every coordinate outside A, ordered row-major over
// A: the group index of a rank is its coordinate on A read as a row-major number (PyTorch's flattened mesh).
//
// Source distribution (initial_distribution):
//   Shard      each dim is split by its axes in shard order with torch.chunk semantics (chunk_extent).
//   Replicate  every rank on the axis holds the same buffer.
//   Partial    each rank holds a value that reduces to the global value over the state's partial axes, whatever
//              order the axes are reduced in; the split is pseudo-random per element (SimulationOptions::seed):
//                sum/avg   v * prod_k w_k(i_k), integers w_k != 0 with sum_i w_k(i) = 1 (sum) or n (avg, so every
//                          mean is exact);
//                max/min   plus offsets: 0 on one (pseudo-random) index of the axis, strictly negative (max) or
//                          strictly positive (min) on the others;
//                product   v on one rank of the partial sub-mesh and 1 elsewhere, times signs +-1 whose product
//                          along every axis is 1 (pairs of -1).
//              sum, avg, max and min compose freely; product composes only with product (no split reduces to v
//              in every order otherwise): ValueError.
//
// Collectives (apply_step), per group of n ranks, j = group index:
//   all_gather        S(d) -> R: the group's buffers concatenated along d in group order, given to every member.
//   all_reduce        P -> R: elementwise reduce of the group's buffers (equal shapes required).
//   reduce_scatter    P -> S(d): reduce, then member j keeps torch.chunk piece j of the result along d.
//   all_to_all        S(a) -> S(b): member i splits its buffer into n torch.chunk pieces along b and sends piece j
//                     to member j; member j concatenates what it receives along a in member order.
//   chunk             R -> S(d): member j keeps torch.chunk piece j of its buffer along d (local).
//   replicate_to_partial  R -> P(op): sum: member 0 keeps its buffer, the others zeros; product: the others ones;
//                     avg, max, min: every member keeps its buffer (local).
//   shard_to_partial  S(d) -> P(sum): a zero buffer of the group's full extent along d (the sum of the members'
//                     extents) with the member's shard at its offset (local apart from the extents).
//   Reductions use the op of the partial placement; a merged step (several axes) takes each axis' op from the
//   step's `before` state (a merged step prints P(sum) when it scales avg axes): sum and avg axes reduce as a sum
//   divided by the product of the avg axes' sizes (PyTorch's avg_scale); an inexact division is an error. Other
//   mixes in one step are errors. Sums and products are overflow-checked.
//   Padding::Torch additionally models PyTorch's padded collectives for uneven shards: in all_gather and
//   all_to_all each received piece along the concatenated dim is padded to ceil(L/n) (L = the sum of the
//   pieces) with the value kPaddingValue, concatenated, and the result cut to L (PyTorch's pad_tensor /
//   unpad_tensor); shard_to_partial places shards at torch.chunk offsets of L. When the pieces are exactly the
//   torch.chunk pieces of L this equals the exact concatenation; otherwise the data is silently corrupted, as on
//   a real PyTorch cluster, and the final comparison finds it. A piece longer than ceil(L/n) is an error.
//
// Verification (verify_distribution): every rank's shape must equal its shape in the target state; then, for a
// target without Partial axes, every element must equal the global tensor's element at that position. With
// Partial axes, the buffers of each partial group are reduced over those axes in ascending axis order, each with
// its own op, and the result must equal the expected slice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/state.hpp"

namespace meshloom {

// A rank's local dense buffer, row-major.
struct LocalTensor {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> data;  // product(shape) values
  friend bool operator==(const LocalTensor&, const LocalTensor&) = default;
};

// Every rank's buffer; ranks row-major over mesh_shape.
struct Distribution {
  std::vector<std::int64_t> mesh_shape;
  std::vector<LocalTensor> ranks;
  friend bool operator==(const Distribution&, const Distribution&) = default;
};

// How uneven pieces travel in all_gather and all_to_all (see the top of this file).
enum class Padding : std::uint8_t { Exact, Torch };

// The value PyTorch-style padding writes (Padding::Torch); never a value of the global tensor or of its splits.
inline constexpr std::int64_t kPaddingValue = -999'999'999'989;

// Default bound on the elements all ranks hold together (mesh size times tensor elements): 2^26.
inline constexpr std::int64_t kDefaultSimulationElements = std::int64_t{1} << 26;

struct SimulationOptions {
  Padding padding = Padding::Exact;
  // ValueError when the number of ranks times the tensor's elements (the most the ranks can hold together
  // between two steps of a plan without shard_to_partial) exceeds this.
  std::int64_t max_elements = kDefaultSimulationElements;
  std::uint64_t seed = 0x5eed'5eed'1234'abcdULL;  // the pseudo-random Partial splits
};

struct SimulationResult {
  bool ok = false;
  // Empty when ok; otherwise the first problem, e.g.
  //   "after step 2 of 3: rank 3 (1,1): shape [2,3], expected [3,3]"
  //   "after step 3 of 3: rank 2 (1,0): element [0,1] (global [3,1]): expected 11, got 13"
  //   "step 1 of 3 (all_gather S(0) -> R on axes [0]): group of rank 0: pieces along dim 0 differ in dim 1"
  std::string error;
  std::size_t elements_checked = 0;  // elements compared with the target distribution
  std::size_t steps_executed = 0;    // steps performed before the comparison or the failing step
};

// The value of the global tensor at flat row-major index `flat`: flat + 1.
[[nodiscard]] constexpr std::int64_t global_value(std::int64_t flat) noexcept { return flat + 1; }

// The coordinate of `rank` on the mesh (row-major) and back.
[[nodiscard]] std::vector<std::int64_t> rank_coordinate(const std::vector<std::int64_t>& mesh_shape, std::size_t rank);
[[nodiscard]] std::size_t rank_index(const std::vector<std::int64_t>& mesh_shape,
                                     const std::vector<std::int64_t>& coordinate);

// The source distribution of the global tensor in `state` (see the top of this file). ValueError when the state
// does not fit, when the sizes exceed options.max_elements, for product mixed with another partial op, or when a
// partial split overflows int64.
[[nodiscard]] Distribution initial_distribution(const std::vector<std::int64_t>& mesh_shape,
                                                const std::vector<std::int64_t>& tensor_shape, const State& state,
                                                const SimulationOptions& options = {});

// What every rank must hold in `state` once its Partial axes are reduced: the slice of the global tensor given by
// the state's shardings (Partial and Replicate axes do not split). Computed from the state alone.
[[nodiscard]] Distribution expected_distribution(const std::vector<std::int64_t>& mesh_shape,
                                                 const std::vector<std::int64_t>& tensor_shape, const State& state,
                                                 const SimulationOptions& options = {});

// The same, for one rank: the buffer of the rank at `coordinate` (one index per mesh axis), computed without the
// other ranks' buffers; initial_distribution and expected_distribution are these for every rank. A real cluster
// builds each rank's buffer with them (the executor). ValueError as above, and for a coordinate off the mesh.
[[nodiscard]] LocalTensor initial_local(const std::vector<std::int64_t>& mesh_shape,
                                        const std::vector<std::int64_t>& tensor_shape, const State& state,
                                        const std::vector<std::int64_t>& coordinate,
                                        const SimulationOptions& options = {});
[[nodiscard]] LocalTensor expected_local(const std::vector<std::int64_t>& mesh_shape,
                                         const std::vector<std::int64_t>& tensor_shape, const State& state,
                                         const std::vector<std::int64_t>& coordinate,
                                         const SimulationOptions& options = {});
// The request's source (initial_local of request.src) and target (expected_local of request.dst) at a coordinate.
[[nodiscard]] LocalTensor initial_local(const PlanRequest& request, const std::vector<std::int64_t>& coordinate,
                                        const SimulationOptions& options = {});
[[nodiscard]] LocalTensor expected_local(const PlanRequest& request, const std::vector<std::int64_t>& coordinate,
                                         const SimulationOptions& options = {});

// Performs one step on the buffers (see the top of this file). RuntimeError naming the step and the group when
// the buffers do not allow it (mismatched shapes, a collective that does not match from/to, an inexact average,
// an overflow, a piece too long for Padding::Torch); ValueError for axes outside the mesh or not ascending.
void apply_step(Distribution& distribution, const PlanStep& step, const SimulationOptions& options = {});

// Compares the buffers with `target` (see the top of this file); error names the first mismatch.
[[nodiscard]] SimulationResult verify_distribution(const Distribution& actual,
                                                   const std::vector<std::int64_t>& tensor_shape,
                                                   const State& target);

// Runs the whole plan from request.src and verifies the result against request.dst. A step that fails is
// reported (ok = false) with its index, not thrown. ValueError for a request whose shapes or states are invalid
// or too large (options.max_elements).
[[nodiscard]] SimulationResult simulate(const PlanRequest& request, const Plan& plan,
                                        const SimulationOptions& options = {});

}  // namespace meshloom
