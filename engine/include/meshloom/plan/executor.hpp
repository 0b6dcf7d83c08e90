// The executor: performs the steps of a Plan for real, one rank at a time, through comm::Communicator.
//
// Each rank holds only its own buffer, a LocalTensor of the simulator (simulator.hpp): initial_local gives it from
// the request's source state, expected_local what it must hold at the end. execute_step performs one PlanStep on
// that buffer with the step's communicator (the group of the step's axis, or of the flattened group for a merged
// step), with the simulator's data-layout rules (torch.chunk pieces, group order = the rank's coordinate on the
// step's axes read row-major, merged reductions with each axis' op):
//
//   all_gather      S(d) -> R    the buffer is packed with d outermost into one block of the largest member's
//                                element count (shorter pieces padded, PyTorch's pad_tensor), all-gathered, and
//                                every member's block is cut to its real extent (unpad_tensor) and concatenated
//                                along d in group order.
//   all_reduce      P -> R       the buffer reduced in place.
//   reduce_scatter  P -> S(d)    the n torch.chunk pieces along d, packed with d outermost, each padded to the
//                                ceil piece; member j keeps the reduction of piece j.
//   all_to_all      S(a) -> S(b) the n torch.chunk pieces along b, packed with a outermost and padded to the
//                                largest piece of any member; member j concatenates what it receives along a.
//   chunk, replicate_to_partial, shard_to_partial: local, as the simulator does them.
//
// Every member's extents come from the step's `before` state (local_shape at that member's coordinate): no extra
// collective exchanges shapes. Reductions with sum or avg axes reduce as a sum, then divide by the product of the
// avg axes' sizes (exactly, or a RuntimeError); max, min and product reduce with their own op.
//
// What travels is float64 or int64 (ExecutionContext::dtype): the simulator's integer values, exact in both
// (float64 holds integers up to 2^53 exactly; a larger value is a ValueError, raised by the step that meets it on
// the rank that holds it, so callers keep tensors below 2^53 elements' worth of values for float64). int64
// reductions wrap on overflow, as MPI's do: the values stay far below that for any tensor a run can hold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "meshloom/comm/communicator.hpp"
#include "meshloom/dtype.hpp"
#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/simulator.hpp"
#include "meshloom/plan/state.hpp"

namespace meshloom {

struct ExecutionContext {
  std::vector<std::int64_t> mesh_shape;
  std::vector<std::int64_t> tensor_shape;
  std::vector<std::int64_t> coordinate;  // this rank's, one index per mesh axis
  DType dtype = DType::Float64;          // Float64 or Int64
};

// ---- Pack / pad / unpack (pure) ------------------------------------------------------------------------------

// The pieces [pieces[k].offset, + pieces[k].size) of t along split_dim, each written with outer_dim moved
// outermost (the piece's shape [s0, .., sd, ..] stored as [sd, s0, .., s(d-1), s(d+1), ..], row-major) into
// block k of block_count elements, the rest of the block filled with `padding`. An empty piece is all padding.
// ValueError when a piece does not fit its block or lies outside t.
[[nodiscard]] std::vector<std::int64_t> pack_blocks(const LocalTensor& t, std::size_t split_dim,
                                                    const std::vector<ChunkExtent>& pieces, std::size_t outer_dim,
                                                    std::size_t block_count, std::int64_t padding = 0);

// The inverse: block k of `blocks` (block_count elements each) holds a tensor of shapes[k] with outer_dim
// outermost followed by padding; returns the blocks' tensors concatenated along outer_dim, row-major. The shapes
// must agree outside outer_dim. ValueError when they do not, or when the blocks are too short.
[[nodiscard]] LocalTensor unpack_blocks(const std::vector<std::int64_t>& blocks, std::size_t block_count,
                                        const std::vector<std::vector<std::int64_t>>& shapes, std::size_t outer_dim);

// ---- Groups ----------------------------------------------------------------------------------------------------

// The index of the rank at `coordinate` in its group of a step on `axes`: its coordinates on those axes read as a
// row-major number (the group's local rank, PyTorch's flattened order for several axes).
[[nodiscard]] std::int64_t group_index(const std::vector<std::int64_t>& mesh_shape,
                                       const std::vector<std::int64_t>& coordinate,
                                       const std::vector<std::size_t>& axes);
// The coordinates of every member of that group, in group order.
[[nodiscard]] std::vector<std::vector<std::int64_t>> group_members(const std::vector<std::int64_t>& mesh_shape,
                                                                   const std::vector<std::int64_t>& coordinate,
                                                                   const std::vector<std::size_t>& axes);

// ---- Execution -----------------------------------------------------------------------------------------------

// What one execute_step spent inside its communicator: the collective alone, timed the single-shot way
// (comm::time_single_shot: the group's stopwatch, CUDA events on NCCL, around the launch, then its completion), apart
// from packing, padding, unpacking and the int64/float64 conversion around it. Zero for a local step.
struct StepProfile {
  // Called by every member right before the collective is issued, when set: a barrier of the step's group there
  // keeps a peer still packing out of this rank's collective time.
  std::function<void()> before_collective;
  double collective_s = 0;
};

// Performs `step` on this rank's buffer. `group` is the communicator of the step's axes (of the flattened group
// for a merged step), in group order; it may be nullptr for a local step (chunk, replicate_to_partial,
// shard_to_partial). Collective over the group for a communicating step. RuntimeError when the buffer's shape is
// not its shape in step.before, when the group does not match the step (size, this rank's index), and for an
// inexact average; ValueError for a dtype other than float64 or int64 and for a value float64 cannot hold
// exactly; the communicator's errors (TimeoutError, ...) pass through. With `profile`, the time spent in the
// collective is stored there.
void execute_step(LocalTensor& local, const PlanStep& step, const ExecutionContext& context, comm::Communicator* group,
                  StepProfile* profile = nullptr);

// Reduces every Partial axis of `target` in ascending axis order (an all_reduce with that axis' op on
// axis_groups[axis], one communicator per mesh axis), so that every rank holds what it must hold in `target`
// once its partial axes are reduced: expected_local's slice. A no-op for a target without Partial axes.
// For verification: every rank runs the same collectives whatever its values. A value problem (an average that
// is not exact, a value float64 cannot carry exactly) does not stop the reductions: the first one is returned,
// nullopt when there is none. Throws before any collective only when local's shape is not target's at this
// rank's coordinate (RuntimeError) or a communicator is missing (ValueError): callers agree on the shapes first,
// since a rank that throws leaves its group's other members waiting in the collective.
[[nodiscard]] std::optional<std::string> reduce_partial_axes(LocalTensor& local, const State& target,
                                                             const ExecutionContext& context,
                                                             const std::vector<comm::Communicator*>& axis_groups);

// The first difference between a rank's buffer and what it should hold: "shape [2,3], expected [3,3]" or
// "element [0,1] (flat index 1): expected 11, got 13"; nullopt when they are equal.
[[nodiscard]] std::optional<std::string> first_mismatch(const LocalTensor& actual, const LocalTensor& expected);

}  // namespace meshloom
