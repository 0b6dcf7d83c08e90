// Redistribution planners: the cheapest sequence of collectives from a source state to a target state of a
// tensor on a mesh, as PyTorch DTensor plans it.
//
//   graph    Dijkstra over states (placements + shard order). One step changes one axis:
//              1 S(a) -> S(b)  all_to_all      only the last axis of a's order moves, to the end of b's order
//              2 S(a) -> R     all_gather      only the last axis of a's order
//              3 P -> R        all_reduce      any partial axis
//              4 R -> S(b)     chunk           the axis goes to the end of b's order
//              5 P -> S(b)     reduce_scatter  the axis goes to the end of b's order
//              6 R -> P        local           seed: P(sum) only; newest: one edge per reduce op of the source
//                                              or target, and no state mixing partial ops beyond {sum, avg}
//            Neighbours are generated in that order (dims and axes ascending within a case) and the queue
//            breaks cost ties first-in first-out, so the plans equal PyTorch's also when paths tie.
//   greedy   PyTorch's older default: placements only, with the nested-sharding detection. It refuses states
//            with a non-default shard order, where its plans would move the wrong data.
//   auto     greedy when both states have the default shard order, graph otherwise (PyTorch's choice).
//   k cheapest  not a planner choice: the k cheapest loopless paths of the graph (plan_k_cheapest, below).
//
// Example (mesh (2,2,2), tensor (8,8,8)):
//   plan_redistribution({.mesh_shape = {2,2,2}, .tensor_shape = {8,8,8},
//                        .src = parse_state("S(0)[0]S(0)[1]R"), .dst = parse_state("RS(0)R")}, model)
//   fixed weights: "S(0)[0]S(0)[1]R->S(0)S(1)R->RS(1)R->RS(0)R", cost 4 (all_to_all 1 + all_gather 2 + all_to_all
//   1; it ties with two all_gathers and a chunk, and its first edge is generated first)
//   comm model:    "S(0)[0]S(0)[1]R->S(0)RR->RRR->RS(0)R", cost 14.41... us
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/state.hpp"

namespace meshloom {

enum class PlannerKind : std::uint8_t { Graph, Greedy, Auto };
// Which R -> P edges the graph has (transition case 6).
enum class PartialVariant : std::uint8_t { Seed, Newest };

// Limits of the planner's compact state encoding.
inline constexpr std::size_t kMaxPlanAxes = 12;
inline constexpr std::int64_t kMaxPlanTensorDims = 16;
inline constexpr std::int64_t kMaxPlanRanks = 2147483647;  // product of the mesh sizes
// Default bound on the states one search may settle.
inline constexpr std::size_t kDefaultStateBudget = 4'000'000;

struct PlanRequest {
  std::vector<std::int64_t> mesh_shape;    // axis sizes, each >= 1
  std::vector<std::int64_t> tensor_shape;  // global dim sizes, each >= 1
  State src;
  State dst;
  PlannerKind planner = PlannerKind::Graph;
  PartialVariant variant = PartialVariant::Newest;
  std::int64_t itemsize = 4;
  // The rank whose local shapes are reported (logical_shape, bytes): a coordinate on the mesh; empty means
  // all zeros (the largest shards under torch.chunk).
  std::vector<std::int64_t> coordinate;
  // Groups of axes that have a flattened process group: consecutive steps of one kind on them are merged.
  std::vector<std::vector<std::size_t>> flattened;
  std::size_t state_budget = kDefaultStateBudget;
};

// Validates the request (ValueError naming the field and value: sizes < 1, states that do not fit the mesh or the
// tensor, a coordinate outside the mesh, more than kMaxPlanAxes axes or kMaxPlanTensorDims dims, itemsize < 1, an
// axis going from one Partial op to another, as PyTorch's executor refuses, a source or target mixing Partial ops
// other than sum with avg, as PyTorch's assert_no_mixed_partial_types refuses) and plans it. ValueError when no path exists ("no
// redistribution path from P(sum) to P(max) ...") or, compared as they run (plans_as_run), when even the cheapest
// plan runs a merged step the model cannot price ("no plan from S(0)[0]S(0)[1] to RR can be priced as it runs: ...");
// RuntimeError when the search settles more than state_budget states.
//
// The graph planner's search prices a path edge by edge. Where a merged step can form and the model prices it as
// the flattened group's own collective (plans_as_run), a path whose steps merge can cost less as it runs than its
// edges say, so the planner compares the plans of as_run_pool (below) and returns the one cheapest as it runs
// (cheapest_as_run), its steps' costs and its cost being its price as it runs (price_plan_steps). Otherwise (every
// other model, no merge that can form, or those searches together settling more than state_budget states) the plan
// is the search's cheapest path, PyTorch's. Wherever plans_as_run holds, the plan is priced as it runs, that path
// past the budget and greedy's plan too (greedy chooses by placements alone): a step the model cannot price so, and
// the plan, then cost +inf, and plans of both planners compare like with like. Example, (4, 4) on one host
// calibrated on 16 ranks, 1024x2048 float64, axes 0 and 1 flattened, P(sum)P(sum) -> RR: the search's cheapest is
// reduce_scatter + all_reduce + all_gather on the axes (23.6 ms as it runs); the all_reduces on both axes merge into
// one all_reduce of the 16-rank group, 20.1 ms as it runs, measured 15% faster (docs/benchmarks.md).
[[nodiscard]] Plan plan_redistribution(const PlanRequest& request, const CostModel& model);

// The cheapest paths plan_redistribution compares as they run (above).
inline constexpr std::size_t kAsRunPool = 16;

// The plans plan_redistribution compares as they run: plan_k_cheapest(request, model, k), then, when its path is not
// one of them, the cheapest path of a search whose edges also include each flattened group's merged collective,
// priced as it runs (CostModel::flattened_step_cost) and passing through the states of the single-axis steps that
// merging folds into it (none through a state the path has passed). The k cheapest by their edges can all be
// cheaper by their edges than a path that merges: on (2,2) of one host calibrated on 4 ranks, 1024x2048 float64,
// axes 0 and 1 flattened, P(sum)P(sum) -> RR, the two all_reduces of 2 ranks cost 31.0 ms by their edges, above the
// 16 cheapest paths (reduce_scatters, all_reduces of half the tensor, all_gathers, all_to_alls: 27.3 to 30.9 ms),
// yet merged they are one all_reduce of 4 ranks, 20.8 ms as it runs; it measured 18.1 ms, the fastest of the others
// 20.8 ms (docs/04-planner.md). The merged search prices a path exactly as it runs where its merged edges are the
// path's only merges; single-axis steps it takes one after another on a group's axes merge as they run too, at the
// group's price, and a merged edge next to the same collective on a further axis does not merge as it runs. So the
// search's path is a candidate, not the answer: cheapest_as_run prices every plan of the pool as it runs. The merged
// search's plan has states_explored counting every search's states, the k searches' and its own; RuntimeError when
// they pass request.state_budget, and the errors of plan_k_cheapest.
[[nodiscard]] std::vector<Plan> as_run_pool(const PlanRequest& request, const CostModel& model,
                                            std::size_t k = kAsRunPool);

// Whether plan_redistribution compares paths as they run: the model prices merged steps
// (CostModel::prices_flattened_groups) and some flattened group has two axes of size > 1 that must move: their
// placements differ between src and dst, or they shard the same dim in both and that dim's shard order differs
// (S(0)[0]S(0)[1] -> S(0)[1]S(0)[0] moves both axes, and their gathers merge). A merge needs steps on two of a
// group's axes; a request that moves data on one axis of a group, as FSDP's gathers on dp of a dp_cp group do, is
// planned by the one search, at its cost.
[[nodiscard]] bool plans_as_run(const PlanRequest& request, const CostModel& model);

// The most plans plan_k_cheapest returns.
inline constexpr std::size_t kMaxCheapestPlans = 64;

// The k cheapest distinct plans from request.src to request.dst over the graph planner's state graph (Yen's
// k-shortest loopless paths), cheapest first; fewer when fewer loopless paths exist. Two plans are distinct when
// their sequences of states (Plan::path) differ: two distinct plans can print the same trace when merging on a
// flattened group folds their steps into one collective (P(sum)P(sum) -> RR through RP(sum) or P(sum)R), and
// states that differ only in where a size-1 axis sits in a shard order are different states, as in the graph.
// The search always uses the graph, whatever request.planner says (greedy and auto are ignored), and plans[0]
// equals plan_redistribution(request with planner = Graph, model), states_explored included, unless plans_as_run
// (then plan_redistribution picks among these plans by cost as run). Every plan is built as plan_redistribution
// builds one: a step per edge priced by the model, the cost summed left to right before merging, steps merged on
// the flattened groups. A later plan's states_explored is the number of states the
// whole k search had settled when it was chosen. An edge the model prices at +infinity is no edge (as in the
// graph planner, which never pushes a state it reaches at +infinity), so no plan costs +infinity.
// Ties: plans[0] is the graph planner's plan; after it, among candidates of equal cost the one the search found
// first comes first. Spur searches run after each accepted plan, from its states in order (source first), each
// a Dijkstra with the graph planner's first-in first-out tie-breaking; the candidates keep the order they were
// found in. That is deterministic (no hashing or address decides an order) for a deterministic model, but it is
// an order of discovery, not a rule on the plans: a tied plan that no search has found yet comes later.
// Validates as plan_redistribution does (the same ValueErrors, "no redistribution path ..." included); ValueError
// naming k when k is 0 or above kMaxCheapestPlans; RuntimeError when all the searches together settle more than
// request.state_budget states.
//
// Example (mesh (2,), tensor (8,8), fixed weights):
//   plan_k_cheapest({.mesh_shape = {2}, .tensor_shape = {8,8}, .src = parse_state("S(0)"),
//                    .dst = parse_state("S(1)")}, model, 5)
//   plan 0  "S(0)->S(1)"     all_to_all, cost 1
//   plan 1  "S(0)->R->S(1)"  all_gather + chunk, cost 2
//   and no more: there are no other loopless paths. From P(sum) (R -> P(sum) edges join the graph), k = 64:
//   "P(sum)->S(1)" 2 (reduce_scatter), "P(sum)->S(0)->S(1)" 3, "P(sum)->R->S(1)" 4, "P(sum)->S(0)->R->S(1)" 4,
//   "P(sum)->R->S(0)->S(1)" 5. The two at 4 are both found after plan 1, the first by the spur from its source,
//   the second by the spur from its state S(0).
[[nodiscard]] std::vector<Plan> plan_k_cheapest(const PlanRequest& request, const CostModel& model, std::size_t k);

// What `model` predicts for every step of `plan`, planned for `request`: each step priced as the planner priced the
// path's edges it covers, at the request's coordinate; a merged step as the sum of its edges, or, where the model
// knows the flattened group's own cost (CostModel::flattened_step_cost: the calibrated model with curves), as that
// one collective. With the model the plan was planned under and no merged step priced that way, the sum is
// plan.cost; under another model, what that model would have charged for this plan.
[[nodiscard]] std::vector<double> price_plan_steps(const PlanRequest& request, const Plan& plan, const CostModel& model);

// Of `plans` (non-empty; plan_k_cheapest's, cheapest first), the index of the one `model` prices lowest as it runs:
// price_plan_steps summed; the first of equal ones. ValueError for no plans, and where even that one costs +inf (a
// merged step of a group shape the model has no curve for): "no plan from S(0)[0]S(0)[1] to RR can be priced as it
// runs: the cheapest runs all_gather on axes 0,1 as one collective, ...".
[[nodiscard]] std::size_t cheapest_as_run(const PlanRequest& request, const std::vector<Plan>& plans,
                                          const CostModel& model);

// A step's axes as messages name them: "axis 1", "axes 0,1".
[[nodiscard]] std::string step_axes_text(const std::vector<std::size_t>& axes);

// Plans by request, for callers that ask the same questions again (an app redrawing, a launcher answering a
// batch): a hit costs a hash of the request and one comparison. Bound to one cost model, whose parameters must
// not change while the cache lives. Thread-safe. When full, the oldest plans are dropped first.
class PlanCache {
public:
  explicit PlanCache(const CostModel& model, std::size_t capacity = 4096);
  // The plan of `request`, planned on the first call and cached. Errors are not cached.
  [[nodiscard]] std::shared_ptr<const Plan> plan(const PlanRequest& request);
  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] std::size_t hits() const;
  [[nodiscard]] std::size_t misses() const;

private:
  struct Hash {
    std::size_t operator()(const PlanRequest& r) const noexcept;
  };
  struct Equal {
    bool operator()(const PlanRequest& a, const PlanRequest& b) const noexcept;
  };
  const CostModel* model_;
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::unordered_map<PlanRequest, std::shared_ptr<const Plan>, Hash, Equal> plans_;
  std::vector<PlanRequest> order_;  // insertion order, for eviction
  std::size_t next_evict_ = 0;
  std::size_t hits_ = 0;
  std::size_t misses_ = 0;
};

// The planner `auto` picks for a request: Graph or Greedy.
[[nodiscard]] PlannerKind resolve_planner(const PlanRequest& request) noexcept;

// torch.chunk semantics: a dim of `size` split `parts` ways; the size and offset of chunk `index`. Chunks are
// ceil(size/parts) long; trailing chunks may be short or empty, and an empty chunk's offset is `size`.
struct ChunkExtent {
  std::int64_t size = 0;
  std::int64_t offset = 0;
  friend bool operator==(const ChunkExtent&, const ChunkExtent&) = default;
};
[[nodiscard]] ChunkExtent chunk_extent(std::int64_t size, std::int64_t parts, std::int64_t index) noexcept;

// The local shape of the tensor on the rank at `coordinate` in `state`: every dim split by its axes in shard
// order. Skips the axes in `except` (the logical shape a collective on those axes sees).
[[nodiscard]] std::vector<std::int64_t> local_shape(const State& state, const std::vector<std::int64_t>& tensor_shape,
                                                    const std::vector<std::int64_t>& mesh_shape,
                                                    const std::vector<std::int64_t>& coordinate,
                                                    const std::vector<std::size_t>& except = {});

}  // namespace meshloom
