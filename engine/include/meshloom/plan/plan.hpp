// Redistribution plans as plain values: the steps that move a tensor from one state to another, each one
// collective on one mesh axis (or one merged collective on a flattened group of axes).
//
// Example, mesh (2,2,2), tensor (8,8,8) float32, greedy planner, fixed weights:
//   S(0)[0]S(0)[1]R -> RS(0)R
//   step 0  axis 1  all_gather  S(0) -> R      logical shape [4,8,8]  512 bytes  cost 2
//   step 1  axis 0  all_gather  S(0) -> R      logical shape [8,8,8]  1024 bytes cost 2
//   step 2  axis 1  chunk       R -> S(0)      logical shape [8,8,8]  2048 bytes cost 0
//   trace "S(0)[0]S(0)[1]R->S(0)RR->RRR->RS(0)R", cost 4
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "meshloom/plan/state.hpp"

namespace meshloom {

// The operation a step performs on its axis.
enum class Collective : std::uint8_t {
  AllGather,           // S(a) -> R
  AllReduce,           // P -> R
  ReduceScatter,       // P -> S(b)
  AllToAll,            // S(a) -> S(b)
  Chunk,               // R -> S(b): local, no communication
  ReplicateToPartial,  // R -> P: local, no communication
  ShardToPartial,      // S(a) -> P(sum): local, no communication (each rank zero-fills around its shard)
};

// "all_gather", "all_reduce", "reduce_scatter", "all_to_all", "chunk", "replicate_to_partial",
// "shard_to_partial".
[[nodiscard]] std::string_view to_string(Collective c) noexcept;
[[nodiscard]] std::optional<Collective> collective_from_string(std::string_view text) noexcept;
// The collective that turns `from` into `to` on one axis; nullopt when no single step does (S -> P(op) for an
// op other than sum, P(a) -> P(b), and no change at all).
[[nodiscard]] std::optional<Collective> collective_for(const Placement& from, const Placement& to) noexcept;
// True for the collectives that communicate (all but chunk and replicate_to_partial).
[[nodiscard]] bool communicates(Collective c) noexcept;

struct PlanStep {
  std::vector<std::size_t> axes;  // the axis of the step; several (ascending) when merged on a flattened group
  Collective collective = Collective::Chunk;
  Placement from;  // the placement on the step's axes before ...
  Placement to;    // ... and after
  State before;    // the whole state before the step ...
  State after;     // ... and after it
  // The global shape as the collective sees it: every sharding of `before` applied except those on `axes`,
  // evaluated at the request's coordinate (uneven shards follow torch.chunk).
  std::vector<std::int64_t> logical_shape;
  // Bytes of the local tensor each rank (at the request's coordinate) holds before the step.
  std::int64_t bytes = 0;
  double cost = 0.0;
  bool merged = false;
  friend bool operator==(const PlanStep&, const PlanStep&) = default;
};

struct Plan {
  std::vector<State> path;      // every state the planner's path visits, source first, target last
  std::vector<PlanStep> steps;  // after merging: one per collective issued
  double cost = 0.0;            // the planner's path cost, before any merging (a plan the graph planner chose as
                                // it runs: its price as it runs, planner.hpp)
  double path_cost = 0.0;       // the sum of the path's edges, before any merging, always (plan --batch's `cost`);
                                // equal to cost unless the plan was chosen as it runs
  std::size_t states_explored = 0;  // states the search settled (graph) or visited (greedy)
  friend bool operator==(const Plan&, const Plan&) = default;
};

// "S(0)[0]S(0)[1]R->S(0)RR->RRR->RS(0)R": the source state, then the state after each step, joined by "->",
// or by "-->" before the state a merged step leads to (PyTorch's format: "S(0)[0]S(0)[1]-->RR"). A plan
// without steps is its one state.
[[nodiscard]] std::string trace(const Plan& plan);
// How many collectives of each kind the plan issues, local steps included: {"all_gather": 2, "chunk": 1}.
[[nodiscard]] std::map<std::string, int> comm_counts(const Plan& plan);

}  // namespace meshloom
