// The layout advisor: which mesh layout of a design is cheapest for its workload, and why.
//
// Candidates are the design's mesh with its axes in another order (search "orders": every permutation of the axes),
// or with other sizes under the same names (search "factorizations": every way of writing the mesh's ranks (the
// product of its sizes, which may be less than the world) as a product of one size per axis, in the design's order;
// "both": every factorization in every order). A candidate keeps the axis
// names; placements follow their axis (the design tensors' states are permuted with the axes, shard orders
// included), flattened axes follow their members (listed in the candidate's order). Ranks are placed row-major
// (init_device_mesh) on hosts of design.devices_per_host consecutive ranks.
//
// Each candidate is priced with one cost model: every work item of expand_workload planned by the graph planner
// (Send items: the model's point-to-point price on the item's axis), times its count. Plans are cached by
// (mesh shape, tensor shape, itemsize, src, dst, flattened groups) -- the group shapes of every axis, and so the
// prices of a candidate's model, follow from its mesh shape and the hosts every candidate shares -- so a hit is the
// very plan the planner would make (AdvisorOptions::reuse_plans off gives the same result). Candidates are priced
// on AdvisorOptions::threads threads.
//
// Example (docs/05-launcher.md, "meshloom-launch advise"; resources/examples/llama3-8b.meshloom.json): the 8-rank
// design (dp 2, tp 4) on hosts of 4 with a Llama 3 8B workload, comm model, search orders: (dp 2, tp 4) first at
// 532387 us per step, then (tp 4, dp 2) at 723577 us; the reason: "tp stays inside a host; dp's all-gathers cross 2
// hosts; (tp 4, dp 2) costs 1.4x: its tp all-gathers cross 2 hosts" (tests/engine/advisor checks it).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "meshloom/design/design.hpp"
#include "meshloom/mesh/mesh_spec.hpp"
#include "meshloom/plan/cost_model.hpp"

namespace meshloom {

enum class AdvisorSearch : std::uint8_t { Orders, Factorizations, Both };
[[nodiscard]] std::string_view to_string(AdvisorSearch search) noexcept;
// "orders", "factorizations", "both"; ValueError naming the text otherwise.
[[nodiscard]] AdvisorSearch advisor_search_from_string(std::string_view text);

// What a candidate must satisfy; a violating candidate is not priced (counted in AdvisorResult::rejected).
struct AdvisorConstraints {
  std::map<std::string, std::int64_t> fixed;  // axis name -> the size it must keep
  std::vector<std::string> within_host;       // axes whose groups must each stay on one host
  bool pp_divides_layers = false;             // the model's pp axis size divides its layers
};

struct AdvisorOptions {
  AdvisorSearch search = AdvisorSearch::Orders;
  AdvisorConstraints constraints;
  std::size_t top = 0;  // 0: every candidate in the result
  // The most candidates a search may enumerate before pricing (ValueError naming the count beyond it).
  std::size_t max_candidates = 200'000;
  // Threads pricing candidates; 0: std::thread::hardware_concurrency(). The result does not depend on it.
  std::size_t threads = 0;
  // Share plans between candidates and items (the cache above). Off: every item planned anew, the same result.
  bool reuse_plans = true;
  // When set and it turns true while the candidates are priced, advise stops early and throws RuntimeError
  // "advise: cancelled" (an app superseding a running ranking). Read only; the caller owns it.
  const std::atomic<bool>* cancel = nullptr;
};

// The cost model for a candidate mesh shape (comm needs it; fixed and calibrated may return one shared model). Its
// prices must depend on these arguments only: candidates of one shape share their plans. Example:
//   [](const std::vector<std::int64_t>& shape, std::int64_t per_host) -> std::shared_ptr<const CostModel> {
//     return std::make_shared<const CommCostModel>(shape, per_host);
//   }
using CostModelFactory = std::function<std::shared_ptr<const CostModel>(const std::vector<std::int64_t>& mesh_shape,
                                                                        std::int64_t devices_per_host)>;

struct AxisCost {
  std::string name;
  std::int64_t size = 1;
  std::int64_t hosts = 1;       // the most hosts one of its groups spans
  double cost = 0;              // per step, the model's unit, of the steps on this axis
  std::map<std::string, double> by_collective;  // all_gather, reduce_scatter, all_reduce, all_to_all, send
  std::map<std::string, std::int64_t> counts;   // collectives issued per step on this axis, by kind
};

struct CandidateCost {
  MeshSpec mesh;
  double cost = 0;                // per step; +infinity when the model cannot price some item (see unpriced)
  std::vector<AxisCost> axes;     // in the candidate's axis order; merged steps on flattened groups are split
                                  // over their axes in proportion to their sizes' logs
  std::map<std::string, double> by_category;  // WorkItem::category -> cost per step
  std::string unpriced;           // why the cost is +infinity ("layers.wqkv: no plan: ..."), empty otherwise
};

struct AdvisorResult {
  std::vector<CandidateCost> ranked;  // cheapest first; the candidates tied with the best lead in enumeration order
                                      // (the design's own layout first when it is one of them)
  std::size_t candidates = 0;         // enumerated
  std::size_t rejected = 0;           // failing a constraint
  std::size_t unpriced = 0;           // of the others, those the model cannot price (CandidateCost::unpriced)
  std::size_t tied_with_best = 1;     // candidates within 1e-9 relative of the best (itself included)
  std::size_t plans_computed = 0;     // cache misses
  std::size_t plans_reused = 0;       // cache hits
  // One sentence on why ranked[0] wins: which of its axes stay inside a host and where most of its cost goes, the
  // layouts tied with it, and what the next costlier layout loses on (the axis and collective whose cost grows the
  // most: more hosts crossed, or a larger cost): "tp stays inside a host; dp's all-gathers cross 2 hosts; 3 other
  // layouts cost the same; the next, (tp 4, dp 2), costs 1.4x: its tp all-gathers cross 2 hosts".
  std::string reason;
  // Where the comm model prices an axis of a candidate shown as inside a host while its groups cross hosts (PyTorch's
  // rule counts the ranks from the axis inward, and groups that do not line up with hosts straddle one: (dp 4, tp 3)
  // on hosts of 4): "the comm model prices tp in (dp 4, tp 3) as inside a host (PyTorch's rule: it and the axes after
  // it hold 3 ranks, at most 4 per host) though its groups cross 2 hosts; a calibrated model prices groups where they
  // fall". Empty otherwise (every other model, and groups that line up with the hosts).
  std::string host_rule_note;
};

// "(dp 128, pp 16, cp 1, tp 8)": a layout as the advisor names it (axis names with their sizes, outer to inner).
[[nodiscard]] std::string layout_text(const MeshSpec& mesh);

// The candidates a search enumerates (before constraints), the design's own mesh first; then orders in
// lexicographic order of the axes' indices, sizes in lexicographic order of the shapes (both: every order of each
// shape in turn). Candidates that differ only in where their axes of size 1 sit are one layout (the same groups on
// every axis): the first enumerated stands for them. ValueError naming the count when it passes max_candidates
// (counted before anything is enumerated, size-1 repeats included). Examples, for the mesh (dp 4, tp 4):
//   orders          (dp 4, tp 4), (tp 4, dp 4)                                             2 = 2!
//   factorizations  (dp 4, tp 4), (dp 1, tp 16), (dp 2, tp 8), (dp 8, tp 2), (dp 16, tp 1)   5 ordered factorizations
//   both            (dp 4, tp 4), (tp 4, dp 4), (dp 1, tp 16), (dp 2, tp 8), (tp 8, dp 2), ... 8 (not 10: (tp 16, dp 1)
//                   is (dp 1, tp 16), and (tp 1, dp 16) is (dp 16, tp 1))
// and 680 factorizations of 16384 = 2^14 into (dp, pp, cp, tp) (C(17, 3)); the 24 orders of (dp 128, pp 16, cp 1,
// tp 8) are 6 layouts.
[[nodiscard]] std::vector<MeshSpec> advisor_candidates(const Design& design, AdvisorSearch search,
                                                       std::size_t max_candidates = 200'000);

// Ranks the candidates. Each is priced with models(its shape, design.devices_per_host), called once per candidate
// on the calling thread (the factory need not be thread-safe; the models must be, as the shipped ones are). An
// item the model cannot plan (no path, a send it cannot price) makes its candidate cost +infinity, with the reason
// in CandidateCost::unpriced; it ranks last. ValueError when the design has no workload (or it is invalid), a
// constraint names an unknown axis ("constraints.fixed: no mesh axis is named \"mp\" (axes: dp, tp)") or a size
// < 1, pp_divides_layers is asked of a workload without a model, the search has too many candidates, or no
// candidate satisfies the constraints ("no candidate layout satisfies the constraints (tp = 3): all 2 of search
// \"orders\" were rejected").
// Example: the file example above; with constraints.fixed {tp: 8} and search factorizations on Llama 3 405B's
// (dp 128, pp 16, cp 1, tp 8), the 78 factorizations with tp 8 are priced (2048 = 2^11 into 3 axes: C(13, 2))
// and the other 602 rejected.
[[nodiscard]] AdvisorResult advise(const Design& design, const CostModelFactory& models,
                                   const AdvisorOptions& options = {});

// The design with its mesh replaced by `mesh` (same axis names, any order and sizes; mesh.flattened is not read):
// tensor states permuted with their axes (shard orders included), the design's flattened axes re-listed in the new
// order, the workload kept as it is (its model axes are names). ValueError naming the layout when its names are
// not the design's in some order, a size is < 1, or it holds more ranks than design.world.
// Example: a design on (a 2, b 3, c 4) with a tensor in S(0)[1]S(0)[0]P(sum) (dim 0 split by b, then a), laid out
// as (c 4, a 2, b 3): the tensor is in P(sum)S(0)[1]S(0)[0] (dim 0 split by axis 2, then axis 1).
[[nodiscard]] Design with_layout(const Design& design, const MeshSpec& mesh);

}  // namespace meshloom
