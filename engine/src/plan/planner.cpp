#include "meshloom/plan/planner.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <utility>

#include "checked.hpp"
#include "meshloom/error.hpp"
#include "plan/merge.hpp"

namespace meshloom {

// ---- Shapes -----------------------------------------------------------------------------------------------

ChunkExtent chunk_extent(std::int64_t size, std::int64_t parts, std::int64_t index) noexcept {
  if (size % parts == 0) {
    const std::int64_t c = size / parts;
    return {c, index * c};
  }
  const std::int64_t c = (size + parts - 1) / parts;
  const std::int64_t begin = std::min(size, index * c);
  const std::int64_t end = std::min(size, (index + 1) * c);
  return {end - begin, end - begin == 0 ? size : begin};
}

std::vector<std::int64_t> local_shape(const State& state, const std::vector<std::int64_t>& tensor_shape,
                                      const std::vector<std::int64_t>& mesh_shape,
                                      const std::vector<std::int64_t>& coordinate,
                                      const std::vector<std::size_t>& except) {
  std::vector<std::int64_t> shape = tensor_shape;
  for (const auto& entry : state.shard_order()) {
    auto& s = shape[static_cast<std::size_t>(entry.dim)];
    for (const std::size_t axis : entry.axes) {
      if (std::find(except.begin(), except.end(), axis) != except.end()) continue;
      s = chunk_extent(s, mesh_shape[axis], coordinate[axis]).size;
    }
  }
  return shape;
}

namespace {

// ---- Compact states ---------------------------------------------------------------------------------------
//
// The search touches hundreds of thousands of states, so it works on a packed form: per axis 10 bits, the
// kind (2), the dim or reduce op (4) and the axis' position in its dim's shard order (4). Equal states pack
// equally: a dim's order is its axes sorted by position, and positions are always 0..k-1.

enum : std::uint8_t { kReplicate = 0, kShard = 1, kPartial = 2 };

struct Key {
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  friend bool operator==(const Key&, const Key&) = default;
};

struct Compact {
  std::uint8_t n = 0;                    // axes
  std::array<std::uint8_t, kMaxPlanAxes> kind{};
  std::array<std::uint8_t, kMaxPlanAxes> arg{};  // dim (shard) or ReduceOp (partial)
  std::array<std::uint8_t, kMaxPlanAxes> pos{};  // position in the dim's shard order (shard)

  [[nodiscard]] Key key() const noexcept;
};

constexpr std::uint64_t kCodeMask = 0x3ff;

constexpr std::uint64_t code_of(std::uint8_t kind, std::uint8_t arg, std::uint8_t pos) noexcept {
  return std::uint64_t{kind} | std::uint64_t{arg} << 2 | std::uint64_t{pos} << 6;
}

// The key with axis `axis` set to `code`: axes 0..5 live in lo, 6..11 in hi, 10 bits each.
Key with_code(Key k, std::size_t axis, std::uint64_t code) noexcept {
  const std::size_t bit = axis * 10;
  std::uint64_t& word = bit < 60 ? k.lo : k.hi;
  const std::size_t shift = bit < 60 ? bit : bit - 60;
  word = (word & ~(kCodeMask << shift)) | code << shift;
  return k;
}

std::uint64_t code_at(const Key& k, std::size_t axis) noexcept {
  const std::size_t bit = axis * 10;
  return ((bit < 60 ? k.lo >> bit : k.hi >> (bit - 60))) & kCodeMask;
}

Key Compact::key() const noexcept {
  Key k;
  for (std::size_t i = 0; i < n; ++i) k = with_code(k, i, code_of(kind[i], arg[i], pos[i]));
  return k;
}

Compact decode(const Key& k, std::uint8_t n) noexcept {
  Compact c;
  c.n = n;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t code = code_at(k, i);
    c.kind[i] = static_cast<std::uint8_t>(code & 0x3);
    c.arg[i] = static_cast<std::uint8_t>((code >> 2) & 0xf);
    c.pos[i] = static_cast<std::uint8_t>(code >> 6);
  }
  return c;
}

Compact compact(const State& s) {
  Compact c;
  c.n = static_cast<std::uint8_t>(s.ndim());
  for (std::size_t i = 0; i < s.ndim(); ++i) {
    const Placement& p = s.placement(i);
    if (p.is_shard()) {
      c.kind[i] = kShard;
      c.arg[i] = static_cast<std::uint8_t>(p.dim());
    } else if (p.is_partial()) {
      c.kind[i] = kPartial;
      c.arg[i] = static_cast<std::uint8_t>(p.op());
    }
  }
  for (const auto& entry : s.shard_order()) {
    for (std::size_t k = 0; k < entry.axes.size(); ++k) c.pos[entry.axes[k]] = static_cast<std::uint8_t>(k);
  }
  return c;
}

Placement placement_of(const Compact& c, std::size_t axis) {
  switch (c.kind[axis]) {
    case kShard: return Placement::shard(c.arg[axis]);
    case kPartial: return Placement::partial(static_cast<ReduceOp>(c.arg[axis]));
    default: return Placement::replicate();
  }
}

State expand(const Compact& c, std::int64_t dims) {
  std::vector<Placement> placements;
  placements.reserve(c.n);
  for (std::size_t i = 0; i < c.n; ++i) placements.push_back(placement_of(c, i));
  std::vector<ShardOrderEntry> order;
  for (std::int64_t d = 0; d < dims; ++d) {
    ShardOrderEntry e{d, {}};
    for (std::size_t i = 0; i < c.n; ++i) {
      if (c.kind[i] == kShard && c.arg[i] == d) e.axes.push_back(i);
    }
    if (e.axes.empty()) continue;
    std::sort(e.axes.begin(), e.axes.end(), [&c](std::size_t a, std::size_t b) { return c.pos[a] < c.pos[b]; });
    order.push_back(std::move(e));
  }
  return {std::move(placements), std::move(order)};
}

// Per dim, its shard order as axes (positions 0..len-1).
struct Orders {
  std::array<std::array<std::uint8_t, kMaxPlanAxes>, kMaxPlanTensorDims> axes{};
  std::array<std::uint8_t, kMaxPlanTensorDims> len{};
};

Orders orders_of(const Compact& c) {
  Orders o;
  for (std::size_t i = 0; i < c.n; ++i) {
    if (c.kind[i] != kShard) continue;
    o.axes[c.arg[i]][c.pos[i]] = static_cast<std::uint8_t>(i);
    ++o.len[c.arg[i]];
  }
  return o;
}

// ---- The graph's edges ------------------------------------------------------------------------------------

struct Problem {
  const PlanRequest* request = nullptr;
  const CostModel* model = nullptr;
  std::int64_t dims = 0;
  std::int64_t global_numel = 0;
  std::vector<std::int64_t> coordinate;
  std::vector<std::uint8_t> partial_ops;  // case 6 edges, newest variant: reduce ops of source and target
  Compact dst;                            // the target (for the newest variant's S -> P(sum) edge)
  bool merged_edges = false;              // the as-run search: flattened groups' merged collectives are edges too
};

// One edge: axis `axis` takes the placement (kind, arg) at shard-order position pos, by `collective`.
struct Edge {
  std::size_t axis;
  std::uint8_t kind;
  std::uint8_t arg;
  std::uint8_t pos;
  Collective collective;
};

constexpr std::size_t kCollectiveCount = static_cast<std::size_t>(Collective::ShardToPartial) + 1;

constexpr std::uint8_t kSumAvg = (1U << static_cast<unsigned>(ReduceOp::Sum)) | (1U << static_cast<unsigned>(ReduceOp::Avg));

// The reduce ops present in a state, as a bit set.
std::uint8_t partial_mask(const Compact& c) {
  std::uint8_t seen = 0;
  for (std::size_t i = 0; i < c.n; ++i) {
    if (c.kind[i] == kPartial) seen = static_cast<std::uint8_t>(seen | (1U << c.arg[i]));
  }
  return seen;
}

// Whether the newest variant allows a state with these partial ops: one kind, or only sum and avg.
bool partial_mix_allowed(std::uint8_t ops) { return (ops & (ops - 1)) == 0 || (ops & ~kSumAvg) == 0; }

// Every neighbour of `c`, in PyTorch's generation order. A neighbour differs from `c` on exactly one axis and
// the cases differ in the source or target kind of that axis, so no neighbour is generated twice.
template <typename Fn>
void for_each_edge(const Problem& p, const Compact& c, Fn&& fn) {
  const Orders o = orders_of(c);
  const auto dims = static_cast<std::uint8_t>(p.dims);
  // Case 1: S(a) -> S(b), the last axis of a's order to the end of b's order.
  for (std::uint8_t a = 0; a < dims; ++a) {
    if (o.len[a] == 0) continue;
    const std::size_t axis = o.axes[a][o.len[a] - 1];
    for (std::uint8_t b = 0; b < dims; ++b) {
      if (b != a) fn(Edge{axis, kShard, b, o.len[b], Collective::AllToAll});
    }
  }
  // Case 2: S(a) -> R, the last axis of a's order.
  for (std::uint8_t a = 0; a < dims; ++a) {
    if (o.len[a] != 0) fn(Edge{o.axes[a][o.len[a] - 1], kReplicate, 0, 0, Collective::AllGather});
  }
  // Case 3: P -> R.
  for (std::size_t axis = 0; axis < c.n; ++axis) {
    if (c.kind[axis] == kPartial) fn(Edge{axis, kReplicate, 0, 0, Collective::AllReduce});
  }
  // Case 4: R -> S(b).
  for (std::size_t axis = 0; axis < c.n; ++axis) {
    if (c.kind[axis] != kReplicate) continue;
    for (std::uint8_t b = 0; b < dims; ++b) fn(Edge{axis, kShard, b, o.len[b], Collective::Chunk});
  }
  // Case 5: P -> S(b).
  for (std::size_t axis = 0; axis < c.n; ++axis) {
    if (c.kind[axis] != kPartial) continue;
    for (std::uint8_t b = 0; b < dims; ++b) fn(Edge{axis, kShard, b, o.len[b], Collective::ReduceScatter});
  }
  // Case 6: R -> P.
  const std::uint8_t ops = partial_mask(c);
  const bool newest = p.request->variant == PartialVariant::Newest;
  for (std::size_t axis = 0; axis < c.n; ++axis) {
    if (c.kind[axis] != kReplicate) continue;
    for (const std::uint8_t op : p.partial_ops) {
      if (newest && !partial_mix_allowed(static_cast<std::uint8_t>(ops | (1U << op)))) continue;
      fn(Edge{axis, kPartial, op, 0, Collective::ReplicateToPartial});
    }
  }
  // Newest only, after every other neighbour: S(a) -> P(sum) on the last axis of a's order, when the target
  // holds exactly P(sum) on that axis (PyTorch's target-directed edge; it costs 0 in every model), and, as for R -> P,
  // no state mixing sum with max, min or product (S(0)RP(min) -> S(0)P(sum)P(min) was planned).
  if (!newest || !partial_mix_allowed(static_cast<std::uint8_t>(ops | (1U << static_cast<unsigned>(ReduceOp::Sum))))) {
    return;
  }
  for (std::uint8_t a = 0; a < dims; ++a) {
    if (o.len[a] == 0) continue;
    const std::size_t axis = o.axes[a][o.len[a] - 1];
    if (p.dst.kind[axis] != kPartial || p.dst.arg[axis] != static_cast<std::uint8_t>(ReduceOp::Sum)) continue;
    fn(Edge{axis, kPartial, static_cast<std::uint8_t>(ReduceOp::Sum), 0, Collective::ShardToPartial});
  }
}

// What the cost model sees of a state: its shard count and its local bytes at the request's coordinate.
StepCostInput cost_input(const Problem& p, const Compact& c) {
  const PlanRequest& r = *p.request;
  StepCostInput in;
  in.mesh_shape = &r.mesh_shape;
  in.itemsize = r.itemsize;
  in.global_numel = p.global_numel;
  const Orders o = orders_of(c);
  std::int64_t local = 1;
  for (std::size_t d = 0; d < r.tensor_shape.size(); ++d) {
    std::int64_t s = r.tensor_shape[d];
    for (std::uint8_t k = 0; k < o.len[d]; ++k) {
      const std::size_t axis = o.axes[d][k];
      s = chunk_extent(s, r.mesh_shape[axis], p.coordinate[axis]).size;
      in.source_shards *= r.mesh_shape[axis];
    }
    local *= s;
  }
  in.local_bytes = local * r.itemsize;
  return in;
}

// ---- Merged edges (the as-run search) ---------------------------------------------------------------------
//
// A merged edge changes every axis of a flattened group at once by one collective of the group: it passes through
// the states of the single-axis steps that merge_steps folds into that collective (in the order it requires), and
// costs what the model says the group's collective costs (CostModel::flattened_step_cost). It exists only where
// merge_steps would merge those steps: all_reduce from partial axes of one op (or sum and avg mixed) to R;
// reduce_scatter from them to S(d), the axes ascending at the end of d's order; all_gather from S(d) to R when the
// group's axes, ascending, are the last of d's order (gathered from the last); and for reduce_scatter and
// all_gather, d's extent on every rank divides by the group's size. No merged edge passes through a state the path
// has passed (R -> P edges cost nothing, so a path could otherwise step back to P(sum) and list it twice, only to
// merge a larger all_reduce). A later single-axis edge may still reach a state a merged edge passed between two
// others: the run never holds that state (the merged collective changes the group's axes at once), and refusing it
// would make the search miss cheaper paths (a state is settled once, by its cheapest path).

// One merged edge, as a recipe: the flattened group (its index in request.flattened), the placement its axes take
// (kind, arg; shards at positions first_pos, first_pos + 1, ... of arg's order) and the order they change in. The
// states it passes follow from the state it leaves (for_each_merged_state), so a search keeps 8 bytes per edge.
struct MergedEdge {
  std::uint32_t group = 0;
  std::uint8_t kind = 0;
  std::uint8_t arg = 0;
  std::uint8_t first_pos = 0;
  bool descending = false;
};

// Every state a merged edge passes from `key`, in order, each after one more axis of its group has changed; the last
// is the state it reaches.
template <typename Fn>
void for_each_merged_state(const Problem& p, Key key, const MergedEdge& e, Fn&& fn) {
  const std::vector<std::size_t>& group = p.request->flattened[e.group];
  for (std::size_t i = 0; i < group.size(); ++i) {
    const std::size_t axis = e.descending ? group[group.size() - 1 - i] : group[i];
    const auto pos = static_cast<std::uint8_t>(e.kind == kShard ? e.first_pos + i : 0);
    key = with_code(key, axis, code_of(e.kind, e.arg, pos));
    fn(key);
  }
}

// Whether dim d of the request, split by the first `count` axes of its shard order in `o`, divides by `group` on
// every rank (merge_steps' condition, on a packed state).
bool divides_on_every_rank(const Problem& p, const Orders& o, std::size_t d, std::size_t count, std::int64_t group) {
  const std::vector<std::size_t> axes(o.axes[d].begin(), o.axes[d].begin() + static_cast<std::ptrdiff_t>(count));
  return detail::divides_on_every_rank(p.request->tensor_shape[d], p.request->mesh_shape, axes, group);
}

// Every merged edge out of `c`, with its cost: fn(edge, cost). An edge the model cannot price (no curve, or
// +infinity) is no edge. Each group's collective is priced once per state (a reduce_scatter costs the same whatever
// dim it scatters: the model sees the bytes before it).
template <typename Fn>
void for_each_merged_edge(const Problem& p, const Compact& c, Fn&& fn) {
  const PlanRequest& r = *p.request;
  const Orders o = orders_of(c);
  std::optional<StepCostInput> in;
  for (std::size_t g = 0; g < r.flattened.size(); ++g) {
    const std::vector<std::size_t>& group = r.flattened[g];
    std::int64_t size = 1;
    for (const std::size_t a : group) size *= r.mesh_shape[a];
    const auto price = [&](Collective collective) -> std::optional<double> {
      if (!in) in = cost_input(p, c);
      in->collective = collective;
      in->axis = group.front();
      const std::optional<double> cost = p.model->flattened_step_cost(*in, group);
      if (!cost || !std::isfinite(*cost)) return std::nullopt;
      return cost;
    };
    const std::size_t first = group.front();
    if (c.kind[first] == kPartial) {
      const auto sum_or_avg = [&c](std::size_t a) { return ((kSumAvg >> c.arg[a]) & 1U) != 0; };
      const auto joins = [&](std::size_t a) {
        return c.kind[a] == kPartial && (c.arg[a] == c.arg[first] || (sum_or_avg(a) && sum_or_avg(first)));
      };
      if (!std::all_of(group.begin(), group.end(), joins)) continue;
      const auto index = static_cast<std::uint32_t>(g);
      if (const auto cost = price(Collective::AllReduce)) fn(MergedEdge{index, kReplicate, 0, 0, false}, *cost);
      std::optional<std::optional<double>> scatter;  // priced at the first dim that divides
      for (std::uint8_t d = 0; d < static_cast<std::uint8_t>(p.dims); ++d) {
        if (!divides_on_every_rank(p, o, d, o.len[d], size)) continue;
        if (!scatter) scatter = price(Collective::ReduceScatter);
        if (*scatter) fn(MergedEdge{index, kShard, d, o.len[d], false}, **scatter);
      }
    } else if (c.kind[first] == kShard) {
      const std::uint8_t d = c.arg[first];
      const std::size_t len = o.len[d];
      if (len < group.size()) continue;
      const std::size_t prefix = len - group.size();
      bool tail = true;
      for (std::size_t i = 0; i < group.size(); ++i) tail = tail && o.axes[d][prefix + i] == group[i];
      if (!tail || !divides_on_every_rank(p, o, d, prefix, size)) continue;
      if (const auto cost = price(Collective::AllGather)) {
        fn(MergedEdge{static_cast<std::uint32_t>(g), kReplicate, 0, 0, true}, *cost);
      }
    }
  }
}

// ---- Dijkstra -----------------------------------------------------------------------------------------------

// Open-addressing map from packed state to node index.
class NodeTable {
public:
  NodeTable() { slots_.assign(1024, Slot{}); }

  // The node of `key`, created when new (second = true). A slot holds the key beside its node, so a lookup
  // touches one cache line.
  std::pair<std::uint32_t, bool> find_or_add(const Key& key) {
    if ((keys_.size() + 1) * 2 > slots_.size()) grow();
    std::size_t i = hash(key) & (slots_.size() - 1);
    while (slots_[i].node != kEmpty) {
      if (slots_[i].key == key) return {slots_[i].node, false};
      i = (i + 1) & (slots_.size() - 1);
    }
    slots_[i] = {key, static_cast<std::uint32_t>(keys_.size())};
    keys_.push_back(key);
    return {slots_[i].node, true};
  }
  [[nodiscard]] const Key& key(std::uint32_t node) const noexcept { return keys_[node]; }

private:
  static constexpr std::uint32_t kEmpty = std::numeric_limits<std::uint32_t>::max();
  struct Slot {
    Key key;
    std::uint32_t node = kEmpty;
  };
  static std::size_t hash(const Key& k) noexcept {
    std::uint64_t h = k.lo * 0x9e3779b97f4a7c15ULL ^ (k.hi + 0x632be59bd9b4e019ULL) * 0xbf58476d1ce4e5b9ULL;
    return static_cast<std::size_t>(h ^ (h >> 31));
  }
  void grow() {
    std::vector<Slot> bigger(slots_.size() * 2, Slot{});
    for (std::uint32_t node = 0; node < keys_.size(); ++node) {
      std::size_t i = hash(keys_[node]) & (bigger.size() - 1);
      while (bigger[i].node != kEmpty) i = (i + 1) & (bigger.size() - 1);
      bigger[i] = {keys_[node], node};
    }
    slots_ = std::move(bigger);
  }
  std::vector<Slot> slots_;
  std::vector<Key> keys_;  // by node
};

// What a spur search of the k search (plan_k_cheapest) may not use: states it never enters (its root path
// before the spur state) and states its source may not step to (where accepted plans sharing that root went).
// It starts at cost `start`, the root's cost, so the costs it sums are the whole path's, left to right, exactly
// as plan_redistribution sums a plan's steps.
struct Detour {
  std::vector<Key> removed;
  std::vector<Key> removed_first;
  double start = 0.0;
};

// A path the search found: its states, source first, and the cost up to each of them (costs[0] is the start).
// Empty when the target cannot be reached.
struct Found {
  std::vector<Key> keys;
  std::vector<double> costs;
};

// PyTorch's find_min_cost_path: a heap of (cost, push counter), a state settled when first popped, the search
// over when the target pops. Pushing a state only when it improves on its best pushed cost gives the same
// pops: an entry of equal or higher cost and a later counter always pops after the earlier one. A state first
// reached at +infinity (or NaN) is never pushed: such an edge is no edge. Adds the states it settles to
// `settled_count` and raises when that total passes the request's state budget. With p.merged_edges (never with a
// detour) a state's merged edges follow its single-axis ones, and a path through one lists the states between.
Found dijkstra(const Problem& p, const Compact& src, const Compact& dst, std::size_t& settled_count,
               const Detour* detour = nullptr) {
  constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  struct Node {
    double best = std::numeric_limits<double>::infinity();
    std::uint32_t parent = kNone;
    bool settled = false;
  };
  struct Entry {
    double cost;
    std::uint64_t counter;
    std::uint32_t node;
    bool operator>(const Entry& o) const noexcept { return cost != o.cost ? cost > o.cost : counter > o.counter; }
  };
  NodeTable table;
  std::vector<Node> nodes;
  // With merged edges: the merged edges that improved a state, and by node the one it was reached by (kNone: a
  // single-axis edge), apart from the nodes so that the search without them keeps its 16-byte nodes.
  std::vector<MergedEdge> merged;
  std::vector<std::uint32_t> via;
  const auto via_of = [&via](std::uint32_t node) { return node < via.size() ? via[node] : kNone; };
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  std::uint64_t counter = 0;
  const Key src_key = src.key();
  const Key dst_key = dst.key();
  const double start = detour != nullptr ? detour->start : 0.0;

  (void)table.find_or_add(src_key);
  nodes.push_back({.best = start});
  heap.push({start, counter, 0});
  if (detour != nullptr) {
    // Removed states enter the table settled: no edge relaxes them, and they count for no budget.
    for (const Key& k : detour->removed) {
      if (k == src_key) continue;
      const auto [node, added] = table.find_or_add(k);
      if (added) nodes.emplace_back();
      nodes[node].settled = true;
    }
  }
  while (!heap.empty()) {
    const Entry top = heap.top();
    heap.pop();
    if (nodes[top.node].settled) continue;
    nodes[top.node].settled = true;
    ++settled_count;
    if (settled_count > p.request->state_budget) {
      raise(ErrorKind::RuntimeError, "planning exceeded its state budget of " + std::to_string(p.request->state_budget) +
                                         " states; raise the budget or simplify the request");
    }
    const Key key = table.key(top.node);
    if (key == dst_key) {
      Found found;
      for (std::uint32_t n = top.node; n != kNone; n = nodes[n].parent) {
        found.keys.push_back(table.key(n));
        found.costs.push_back(nodes[n].best);
        if (via_of(n) == kNone) continue;
        // The states a merged edge passes before the one it reaches, each at the cost before the edge (the edge is
        // paid on arrival).
        std::vector<Key> between;
        for_each_merged_state(p, table.key(nodes[n].parent), merged[via_of(n)],
                              [&between](const Key& k) { between.push_back(k); });
        between.pop_back();
        for (auto it = between.rbegin(); it != between.rend(); ++it) {
          found.keys.push_back(*it);
          found.costs.push_back(nodes[nodes[n].parent].best);
        }
      }
      std::reverse(found.keys.begin(), found.keys.end());
      std::reverse(found.costs.begin(), found.costs.end());
      return found;
    }
    const Compact state = decode(key, src.n);
    StepCostInput in = cost_input(p, state);
    const bool restricted = detour != nullptr && top.node == 0 && !detour->removed_first.empty();
    // Reaching `next` at `cost` from this state (by the merged edge `by`, or kNone): whether it improved it. The
    // search without merged edges relaxes inline (its hot loop: a call per edge and a larger node cost it 7%).
    const auto relax = [&](const Key& next, double cost, std::uint32_t by) {
      const auto [node, added] = table.find_or_add(next);
      if (added) nodes.emplace_back();
      Node& n = nodes[node];
      if (n.settled || !(cost < n.best)) return false;
      n.best = cost;
      n.parent = top.node;
      if (via.size() <= node) via.resize(nodes.size(), kNone);
      via[node] = by;
      heap.push({cost, ++counter, node});
      return true;
    };
    // A step's cost depends on the state, its collective and its axis only: price each pair once per state.
    std::array<std::array<double, kMaxPlanAxes>, kCollectiveCount> priced{};
    std::array<std::array<bool, kMaxPlanAxes>, kCollectiveCount> known{};
    for_each_edge(p, state, [&](const Edge& e) {
      const auto k = static_cast<std::size_t>(e.collective);
      if (!known[k][e.axis]) {
        in.collective = e.collective;
        in.axis = e.axis;
        priced[k][e.axis] = p.model->step_cost(in);
        known[k][e.axis] = true;
      }
      const double cost = top.cost + priced[k][e.axis];
      const Key next = with_code(key, e.axis, code_of(e.kind, e.arg, e.pos));
      if (restricted && std::find(detour->removed_first.begin(), detour->removed_first.end(), next) !=
                            detour->removed_first.end()) {
        return;
      }
      if (p.merged_edges) {
        relax(next, cost, kNone);
        return;
      }
      const auto [node, added] = table.find_or_add(next);
      if (added) nodes.emplace_back();
      Node& n = nodes[node];
      if (n.settled || !(cost < n.best)) return;
      n.best = cost;
      n.parent = top.node;
      heap.push({cost, ++counter, node});
    });
    if (!p.merged_edges) continue;
    // Whether the path to this state passed `k`: its states, and those its merged edges passed between them.
    const auto passed = [&](const Key& k) {
      for (std::uint32_t n = top.node; n != kNone; n = nodes[n].parent) {
        if (table.key(n) == k) return true;
        if (via_of(n) == kNone) continue;
        bool hit = false;
        for_each_merged_state(p, table.key(nodes[n].parent), merged[via_of(n)],
                              [&](const Key& s) { hit = hit || s == k; });
        if (hit) return true;
      }
      return false;
    };
    for_each_merged_edge(p, state, [&](const MergedEdge& e, double edge_cost) {
      const double cost = top.cost + edge_cost;
      Key next = key;
      bool revisits = false;
      for_each_merged_state(p, key, e, [&](const Key& k) {
        next = k;
        revisits = revisits || passed(k);
      });
      if (!revisits && relax(next, cost, static_cast<std::uint32_t>(merged.size()))) merged.push_back(e);
    });
  }
  return {};
}

// ---- Greedy (PyTorch's generate_greedy_transform_infos) ---------------------------------------------------

struct GreedyStep {
  std::size_t axis;
  Placement from;
  Placement to;
};

std::vector<GreedyStep> greedy_steps(const PlanRequest& r) {
  const auto& src = r.src.placements();
  const auto& dst = r.dst.placements();
  std::vector<GreedyStep> steps;
  if (r.mesh_shape.size() == 1) {
    if (src[0] != dst[0]) steps.push_back({0, src[0], dst[0]});
    return steps;
  }
  std::vector<Placement> current = src;
  std::int64_t num_shards = 1;
  for (std::size_t i = 0; i < src.size(); ++i) {
    if (src[i].is_shard()) num_shards *= r.mesh_shape[i];
  }
  if (num_shards > 1) {
    // Inner to outer: a target Shard(d) whose dim is sharded differently by the axes before it (nested or
    // misaligned sharding) is replicated first.
    for (std::size_t axis = current.size(); axis-- > 0;) {
      Placement target = dst[axis];
      if (target.is_shard()) {
        std::vector<std::size_t> cur_axes;
        std::vector<std::size_t> dst_axes;
        for (std::size_t i = 0; i < axis; ++i) {
          if (current[i].is_shard() && current[i].dim() == target.dim()) cur_axes.push_back(i);
          if (dst[i].is_shard() && dst[i].dim() == target.dim()) dst_axes.push_back(i);
        }
        if (cur_axes != dst_axes) target = Placement::replicate();
      }
      if (current[axis] != target) {
        steps.push_back({axis, current[axis], target});
        current[axis] = target;
      }
    }
  }
  for (std::size_t axis = 0; axis < current.size(); ++axis) {
    if (current[axis] != dst[axis]) {
      steps.push_back({axis, current[axis], dst[axis]});
      current[axis] = dst[axis];
    }
  }
  return steps;
}

// The state after one axis changes from `from` to `to`: a sharding axis leaves its dim's order, a new one goes
// to the end of its dim's order.
State apply_step(const State& s, std::size_t axis, const Placement& to) {
  std::vector<Placement> placements = s.placements();
  std::vector<ShardOrderEntry> order = s.shard_order();
  if (placements[axis].is_shard()) {
    for (auto& e : order) std::erase(e.axes, axis);
    std::erase_if(order, [](const ShardOrderEntry& e) { return e.axes.empty(); });
  }
  placements[axis] = to;
  if (to.is_shard()) {
    auto it = std::find_if(order.begin(), order.end(), [&](const ShardOrderEntry& e) { return e.dim == to.dim(); });
    if (it == order.end()) {
      order.push_back({to.dim(), {axis}});
    } else {
      it->axes.push_back(axis);
    }
  }
  return {std::move(placements), std::move(order)};
}

// Equal placements, and equal shard orders once the axes of size 1 are left out.
bool same_up_to_unit_axes(const State& a, const State& b, const std::vector<std::int64_t>& mesh_shape) {
  if (a.placements() != b.placements()) return false;
  auto reduced = [&mesh_shape](const State& s) {
    std::vector<ShardOrderEntry> order = s.shard_order();
    for (auto& e : order) std::erase_if(e.axes, [&](std::size_t axis) { return mesh_shape[axis] == 1; });
    return order;
  };
  return reduced(a) == reduced(b);
}

// ---- Requests -------------------------------------------------------------------------------------------------

std::string ints(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i > 0 ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

void validate(const PlanRequest& r) {
  if (r.mesh_shape.empty() || r.mesh_shape.size() > kMaxPlanAxes) {
    raise(ErrorKind::ValueError, "mesh " + ints(r.mesh_shape) + ": a plan needs 1 to " + std::to_string(kMaxPlanAxes) +
                                     " mesh axes");
  }
  std::int64_t ranks = 1;
  for (std::size_t i = 0; i < r.mesh_shape.size(); ++i) {
    if (r.mesh_shape[i] < 1 || r.mesh_shape[i] > kMaxPlanRanks) {
      raise(ErrorKind::ValueError, "mesh " + ints(r.mesh_shape) + ": axis " + std::to_string(i) + " has size " +
                                       std::to_string(r.mesh_shape[i]) + " (must be 1 to 2^31-1)");
    }
    ranks *= r.mesh_shape[i];
    if (ranks > kMaxPlanRanks) {
      raise(ErrorKind::ValueError, "mesh " + ints(r.mesh_shape) + " holds more than 2^31-1 ranks");
    }
  }
  const auto dims = static_cast<std::int64_t>(r.tensor_shape.size());
  if (dims > kMaxPlanTensorDims) {
    raise(ErrorKind::ValueError, "tensor_shape " + ints(r.tensor_shape) + " has " + std::to_string(dims) +
                                     " dims; a plan handles at most " + std::to_string(kMaxPlanTensorDims));
  }
  std::int64_t numel = 1;
  for (std::size_t i = 0; i < r.tensor_shape.size(); ++i) {
    if (r.tensor_shape[i] < 1) {
      raise(ErrorKind::ValueError, "tensor_shape " + ints(r.tensor_shape) + ": dim " + std::to_string(i) + " has size " +
                                       std::to_string(r.tensor_shape[i]) + " (must be >= 1)");
    }
    numel = detail::checked_mul(numel, r.tensor_shape[i], "tensor_shape");
  }
  if (r.itemsize < 1 || r.itemsize > 64) {
    raise(ErrorKind::ValueError, "itemsize " + std::to_string(r.itemsize) + " is out of range [1, 64]");
  }
  (void)detail::checked_mul(numel, r.itemsize, "tensor bytes");
  for (const auto& [name, state] : {std::pair<const char*, const State*>{"src", &r.src}, {"dst", &r.dst}}) {
    if (const auto why = state_misfit(*state, r.mesh_shape.size(), dims)) {
      raise(ErrorKind::ValueError, std::string(name) + ": state \"" + to_string(*state) + "\" does not fit: " + *why);
    }
  }
  // PyTorch's assert_no_mixed_partial_types, which DTensor's constructors and redistribute call: max and min do not
  // commute with sum, so which axis reduces first would change the value (P(max)P(sum) -> RR reduced max first and
  // P(max)P(sum) -> RS(0) sum first); only sum with avg may mix.
  for (const auto& [name, state] : {std::pair<const char*, const State*>{"src", &r.src}, {"dst", &r.dst}}) {
    std::set<std::string> ops;
    for (std::size_t axis = 0; axis < r.mesh_shape.size(); ++axis) {
      if (state->placement(axis).is_partial()) ops.insert(std::string(to_string(state->placement(axis).op())));
    }
    if (ops.size() > 1 && ops != std::set<std::string>{"avg", "sum"}) {
      std::string found;
      for (const auto& op : ops) found += (found.empty() ? "'" : ", '") + op + "'";
      raise(ErrorKind::ValueError, std::string(name) + ": state \"" + to_string(*state) +
                                       "\": Mixed Partial reduce types are not supported in the same placement list. "
                                       "Found reduce ops: {" + found + "}. Please ensure all Partial placements use "
                                       "the same reduce operation.");
    }
  }
  for (std::size_t axis = 0; axis < r.mesh_shape.size(); ++axis) {
    const Placement& a = r.src.placement(axis);
    const Placement& b = r.dst.placement(axis);
    if (a.is_partial() && b.is_partial() && a.op() != b.op()) {
      raise(ErrorKind::ValueError, "Redistribution from one partial type (" + std::string(to_string(a.op())) +
                                       ") to another (" + std::string(to_string(b.op())) + ") on mesh axis " +
                                       std::to_string(axis) + " is unsupported");
    }
  }
  if (!r.coordinate.empty()) {
    if (r.coordinate.size() != r.mesh_shape.size()) {
      raise(ErrorKind::ValueError, "coordinate " + ints(r.coordinate) + " has " + std::to_string(r.coordinate.size()) +
                                       " entries for a mesh of " + std::to_string(r.mesh_shape.size()) + " axes");
    }
    for (std::size_t i = 0; i < r.coordinate.size(); ++i) {
      if (r.coordinate[i] < 0 || r.coordinate[i] >= r.mesh_shape[i]) {
        raise(ErrorKind::ValueError, "coordinate " + ints(r.coordinate) + ": entry " + std::to_string(i) +
                                         " is outside axis " + std::to_string(i) + " of size " +
                                         std::to_string(r.mesh_shape[i]));
      }
    }
  }
  for (std::size_t g = 0; g < r.flattened.size(); ++g) {
    const auto& group = r.flattened[g];
    std::string text;
    for (const std::size_t a : group) text += (text.empty() ? "" : ", ") + std::to_string(a);
    const std::string named = "flattened[" + std::to_string(g) + "] = [" + text + "]";
    if (group.size() < 2) {
      raise(ErrorKind::ValueError, named + ": a flattened group needs at least 2 axes, got " +
                                       std::to_string(group.size()));
    }
    for (std::size_t k = 0; k < group.size(); ++k) {
      if (group[k] >= r.mesh_shape.size() || (k > 0 && group[k] <= group[k - 1])) {
        raise(ErrorKind::ValueError, named + ": axes must be ascending and < " + std::to_string(r.mesh_shape.size()) +
                                         ", got axis " + std::to_string(group[k]));
      }
    }
  }
}

// The reduce ops of case 6. Seed: sum only. Newest: every op of a Partial in the source, then the target, in
// order of first appearance (PyTorch iterates a Python set here, whose order depends on the hash seed; a fixed
// order keeps plans deterministic).
std::vector<std::uint8_t> case6_ops(const PlanRequest& r) {
  if (r.variant == PartialVariant::Seed) return {static_cast<std::uint8_t>(ReduceOp::Sum)};
  std::vector<std::uint8_t> ops;
  for (const State* s : {&r.src, &r.dst}) {
    for (const auto& placement : s->placements()) {
      if (!placement.is_partial()) continue;
      const auto op = static_cast<std::uint8_t>(placement.op());
      if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
    }
  }
  return ops;
}

PlanStep make_step(const PlanRequest& r, const CostModel& model, std::int64_t global_numel,
                   const std::vector<std::int64_t>& coordinate, const State& before, const State& after,
                   std::size_t axis) {
  PlanStep step;
  step.axes = {axis};
  step.from = before.placement(axis);
  step.to = after.placement(axis);
  const auto collective = collective_for(step.from, step.to);
  // The seed has no S -> P(sum) step (PyTorch's executor refuses the greedy planner's at run time); the newest
  // variant runs it as the local shard_to_partial (PR 191828).
  const bool seed_refuses = collective == Collective::ShardToPartial && r.variant == PartialVariant::Seed;
  if (!collective || seed_refuses) {
    raise(ErrorKind::ValueError, "redistribute from " + to_string(step.from) + " to " + to_string(step.to) +
                                     " on mesh axis " + std::to_string(axis) + " is not supported (in " +
                                     to_string(before) + " -> " + to_string(after) + ")" +
                                     (seed_refuses ? " under the seed variant; the newest variant runs it as "
                                                     "shard_to_partial"
                                                   : ""));
  }
  step.collective = *collective;
  step.before = before;
  step.after = after;
  step.logical_shape = local_shape(before, r.tensor_shape, r.mesh_shape, coordinate, {axis});
  std::int64_t local = 1;
  std::int64_t shards = 1;
  for (auto s : local_shape(before, r.tensor_shape, r.mesh_shape, coordinate)) local *= s;
  for (std::size_t i = 0; i < before.ndim(); ++i) {
    if (before.placement(i).is_shard()) shards *= r.mesh_shape[i];
  }
  step.bytes = local * r.itemsize;
  StepCostInput in;
  in.collective = step.collective;
  in.axis = axis;
  in.mesh_shape = &r.mesh_shape;
  in.itemsize = r.itemsize;
  in.global_numel = global_numel;
  in.source_shards = shards;
  in.local_bytes = step.bytes;
  step.cost = model.step_cost(in);
  return step;
}

// What every search of a request shares: the request, the model and the edge generator's inputs.
Problem make_problem(const PlanRequest& request, const CostModel& model) {
  Problem p;
  p.request = &request;
  p.model = &model;
  p.dims = static_cast<std::int64_t>(request.tensor_shape.size());
  p.global_numel = 1;
  for (auto s : request.tensor_shape) p.global_numel *= s;
  p.coordinate = request.coordinate.empty() ? std::vector<std::int64_t>(request.mesh_shape.size(), 0) : request.coordinate;
  p.partial_ops = case6_ops(request);
  p.dst = compact(request.dst);
  return p;
}

[[noreturn]] void raise_no_path(const PlanRequest& request) {
  raise(ErrorKind::ValueError, "no redistribution path from " + to_string(request.src) + " to " +
                                   to_string(request.dst) + " (" +
                                   (request.variant == PartialVariant::Seed ? "seed" : "newest") +
                                   " transitions; Partial changes its reduce op only through Replicate)");
}

// Fills a plan's steps and cost from its path (one step per consecutive pair of states, priced by the model,
// summed left to right, then merged on the flattened groups): the one construction of every plan.
void build_steps(const Problem& p, Plan& plan) {
  const PlanRequest& request = *p.request;
  std::vector<PlanStep> steps;
  for (std::size_t i = 0; i + 1 < plan.path.size(); ++i) {
    const State& before = plan.path[i];
    const State& after = plan.path[i + 1];
    std::size_t axis = 0;
    for (std::size_t a = 0; a < before.ndim(); ++a) {
      if (before.placement(a) != after.placement(a)) axis = a;
    }
    steps.push_back(make_step(request, *p.model, p.global_numel, p.coordinate, before, after, axis));
    plan.cost += steps.back().cost;
  }
  plan.path_cost = plan.cost;
  plan.steps = detail::merge_steps(std::move(steps), request);
}

// The graph plan of a path the search found.
Plan graph_plan(const Problem& p, const std::vector<Key>& keys, std::size_t states_explored) {
  Plan plan;
  const auto n = static_cast<std::uint8_t>(p.request->mesh_shape.size());
  plan.path.reserve(keys.size());
  for (const Key& k : keys) plan.path.push_back(expand(decode(k, n), p.dims));
  plan.states_explored = states_explored;
  build_steps(p, plan);
  return plan;
}

// A plan compared as it runs costs what it runs at: every consumer of cost (the advisor's sums, advise --measure's
// predictions, the planners' comparison) then prices the plan that runs as the model does. path_cost stays the
// path's edges before merging.
void price_as_it_runs(const PlanRequest& request, Plan& plan, const CostModel& model) {
  const std::vector<double> as_run = price_plan_steps(request, plan, model);
  plan.cost = 0;
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    plan.steps[i].cost = as_run[i];
    plan.cost += as_run[i];
  }
}

}  // namespace

PlannerKind resolve_planner(const PlanRequest& request) noexcept {
  if (request.planner != PlannerKind::Auto) return request.planner;
  return request.src.has_default_shard_order() && request.dst.has_default_shard_order() ? PlannerKind::Greedy
                                                                                          : PlannerKind::Graph;
}

bool plans_as_run(const PlanRequest& request, const CostModel& model) {
  if (!model.prices_flattened_groups()) return false;
  // An axis moves when its placement changes, or when it shards one dim in both but the axes splitting that dim
  // before it, or its place among them, differ (S(0)[0]S(0)[1] -> S(0)[1]S(0)[0] moves both axes; S(0)[0]S(0)[1] ->
  // S(0)R only axis 1).
  const auto up_to = [](const State& s, std::int64_t dim, std::size_t a) {
    std::vector<std::size_t> order = s.shard_axes(dim);
    const auto at = std::find(order.begin(), order.end(), a);
    order.erase(at == order.end() ? at : at + 1, order.end());
    return order;
  };
  const auto moves = [&](std::size_t a) {
    const Placement& from = request.src.placement(a);
    const Placement& to = request.dst.placement(a);
    if (!(from == to)) return true;
    return from.is_shard() && up_to(request.src, from.dim(), a) != up_to(request.dst, from.dim(), a);
  };
  for (const auto& group : request.flattened) {
    int changing = 0;
    for (const std::size_t a : group) {
      if (a < request.mesh_shape.size() && a < request.src.ndim() && a < request.dst.ndim() &&
          request.mesh_shape[a] > 1 && moves(a)) {
        ++changing;
      }
    }
    if (changing >= 2) return true;
  }
  return false;
}

Plan plan_redistribution(const PlanRequest& request, const CostModel& model) {
  validate(request);
  const Problem p = make_problem(request, model);
  const bool as_run = plans_as_run(request, model);
  if (resolve_planner(request) == PlannerKind::Graph) {
    if (as_run) {
      // Sixteen searches settle more states than one: where they pass the budget, the one search's plan stands.
      try {
        std::vector<Plan> pool = as_run_pool(request, model, kAsRunPool);
        Plan plan = std::move(pool[cheapest_as_run(request, pool, model)]);
        price_as_it_runs(request, plan, model);
        return plan;
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::RuntimeError) throw;
      }
    }
    std::size_t settled = 0;
    const Found found = dijkstra(p, compact(request.src), p.dst, settled);
    if (found.keys.empty()) raise_no_path(request);
    Plan plan = graph_plan(p, found.keys, settled);
    // Past the budget of the searches above, the one search's path, priced as it runs all the same.
    if (as_run) price_as_it_runs(request, plan, model);
    return plan;
  }
  // PyTorch's greedy planner reads placements only; on a non-default shard order its steps gather inner
  // splits out of order or end in the wrong order, and the data comes out wrong (the simulator shows it).
  for (const State* s : {&request.src, &request.dst}) {
    if (!s->has_default_shard_order()) {
      raise(ErrorKind::ValueError, "the greedy planner ignores shard order, and " + to_string(*s) +
                                       " does not have the default one: use the graph planner (auto picks it)");
    }
  }
  Plan plan;
  plan.path.push_back(request.src);
  for (const auto& g : greedy_steps(request)) plan.path.push_back(apply_step(plan.path.back(), g.axis, g.to));
  plan.states_explored = plan.path.size();
  // Appending a size-1 axis anywhere in a shard order splits nothing: when the greedy path ends in the target
  // up to such axes (it skips the nested-sharding pass when only size-1 axes shard), it ends in the target.
  if (plan.path.back() != request.dst && same_up_to_unit_axes(plan.path.back(), request.dst, request.mesh_shape)) {
    plan.path.back() = request.dst;
  }
  build_steps(p, plan);
  // Greedy chooses by placements alone, but under a model that compares plans as they run its plan is priced so too,
  // like the graph planner's: a step the model cannot price as it runs (a merged step on a group shape it lacks)
  // then costs +inf, and so does the plan.
  if (as_run) price_as_it_runs(request, plan, model);
  return plan;
}

// ---- The k cheapest plans (Yen's k-shortest loopless paths, with Lawler's saving) ------------------------------
//
// The first plan is the graph planner's. After each accepted plan, every state of it from the one where it left
// its parent plan onwards is a spur: Dijkstra from the spur to the target, never entering the root path before
// the spur, and never stepping from the spur to a state that an accepted plan with the same root steps to. Root
// plus spur path is a candidate; the cheapest candidate is accepted next, the earliest found among equal costs.
// Spurs before the deviation state would repeat searches already made, whose paths are candidates already.

namespace {

// Yen's search for p's request (validated, graph planner): the k cheapest plans, adding the states it settles to
// `settled`.
std::vector<Plan> k_cheapest(const Problem& p, std::size_t k, std::size_t& settled) {
  const PlanRequest& graph = *p.request;
  const auto n = static_cast<std::uint8_t>(graph.mesh_shape.size());

  struct Path {
    std::vector<Key> keys;
    std::vector<double> costs;     // left-to-right cost up to each state
    std::size_t deviation = 0;     // index of the spur state it was found from
    std::size_t explored = 0;      // states settled by the whole search when it was accepted
  };
  std::vector<Path> accepted;
  std::vector<Path> candidates;  // in the order found
  {
    Found first = dijkstra(p, compact(graph.src), p.dst, settled);
    if (first.keys.empty()) raise_no_path(graph);
    accepted.push_back({std::move(first.keys), std::move(first.costs), 0, settled});
  }
  while (accepted.size() < k) {
    const std::size_t last = accepted.size() - 1;
    for (std::size_t i = accepted[last].deviation; i + 1 < accepted[last].keys.size(); ++i) {
      const Path& base = accepted[last];
      Detour detour;
      detour.start = base.costs[i];
      detour.removed.assign(base.keys.begin(), base.keys.begin() + static_cast<std::ptrdiff_t>(i));
      for (const Path& a : accepted) {
        if (a.keys.size() > i + 1 &&
            std::equal(a.keys.begin(), a.keys.begin() + static_cast<std::ptrdiff_t>(i) + 1, base.keys.begin())) {
          detour.removed_first.push_back(a.keys[i + 1]);
        }
      }
      Found spur = dijkstra(p, decode(base.keys[i], n), p.dst, settled, &detour);
      if (spur.keys.empty()) continue;
      Path candidate;
      candidate.keys.assign(base.keys.begin(), base.keys.begin() + static_cast<std::ptrdiff_t>(i));
      candidate.keys.insert(candidate.keys.end(), spur.keys.begin(), spur.keys.end());
      candidate.costs.assign(base.costs.begin(), base.costs.begin() + static_cast<std::ptrdiff_t>(i));
      candidate.costs.insert(candidate.costs.end(), spur.costs.begin(), spur.costs.end());
      candidate.deviation = i;
      const bool known = std::any_of(candidates.begin(), candidates.end(),
                                     [&](const Path& c) { return c.keys == candidate.keys; });
      if (!known) candidates.push_back(std::move(candidate));
    }
    if (candidates.empty()) break;
    auto best = candidates.begin();
    for (auto it = candidates.begin() + 1; it != candidates.end(); ++it) {
      if (it->costs.back() < best->costs.back()) best = it;
    }
    accepted.push_back(std::move(*best));
    candidates.erase(best);
    accepted.back().explored = settled;
  }

  std::vector<Plan> plans;
  plans.reserve(accepted.size());
  for (const Path& a : accepted) plans.push_back(graph_plan(p, a.keys, a.explored));
  return plans;
}

// The request for the k searches: the graph planner's, validated; ValueError naming k out of range.
PlanRequest k_request(const PlanRequest& request, std::size_t k) {
  if (k < 1 || k > kMaxCheapestPlans) {
    raise(ErrorKind::ValueError, "k " + std::to_string(k) + " is out of range [1, " + std::to_string(kMaxCheapestPlans) +
                                     "]: ask for 1 to " + std::to_string(kMaxCheapestPlans) + " plans");
  }
  PlanRequest graph = request;
  graph.planner = PlannerKind::Graph;
  validate(graph);
  return graph;
}

}  // namespace

std::vector<Plan> plan_k_cheapest(const PlanRequest& request, const CostModel& model, std::size_t k) {
  const PlanRequest graph = k_request(request, k);
  std::size_t settled = 0;
  return k_cheapest(make_problem(graph, model), k, settled);
}

std::vector<Plan> as_run_pool(const PlanRequest& request, const CostModel& model, std::size_t k) {
  const PlanRequest graph = k_request(request, k);
  Problem p = make_problem(graph, model);
  std::size_t settled = 0;
  std::vector<Plan> pool = k_cheapest(p, k, settled);
  p.merged_edges = true;
  const Found found = dijkstra(p, compact(graph.src), p.dst, settled);
  if (found.keys.empty()) return pool;
  Plan plan = graph_plan(p, found.keys, settled);
  if (std::none_of(pool.begin(), pool.end(), [&plan](const Plan& q) { return q.path == plan.path; })) {
    pool.push_back(std::move(plan));
  }
  return pool;
}

// ---- PlanCache --------------------------------------------------------------------------------------------

namespace {
void mix(std::size_t& h, std::size_t v) noexcept { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }
void mix_ints(std::size_t& h, const std::vector<std::int64_t>& v) noexcept {
  mix(h, v.size());
  for (auto x : v) mix(h, static_cast<std::size_t>(x));
}
}  // namespace

std::size_t PlanCache::Hash::operator()(const PlanRequest& r) const noexcept {
  std::size_t h = 0;
  mix_ints(h, r.mesh_shape);
  mix_ints(h, r.tensor_shape);
  mix(h, std::hash<State>{}(r.src));
  mix(h, std::hash<State>{}(r.dst));
  mix(h, static_cast<std::size_t>(r.planner) << 8 | static_cast<std::size_t>(r.variant));
  mix(h, static_cast<std::size_t>(r.itemsize));
  mix_ints(h, r.coordinate);
  for (const auto& group : r.flattened) {
    mix(h, group.size());
    for (auto a : group) mix(h, a);
  }
  mix(h, r.state_budget);
  return h;
}

bool PlanCache::Equal::operator()(const PlanRequest& a, const PlanRequest& b) const noexcept {
  return a.mesh_shape == b.mesh_shape && a.tensor_shape == b.tensor_shape && a.src == b.src && a.dst == b.dst &&
         a.planner == b.planner && a.variant == b.variant && a.itemsize == b.itemsize && a.coordinate == b.coordinate &&
         a.flattened == b.flattened && a.state_budget == b.state_budget;
}

PlanCache::PlanCache(const CostModel& model, std::size_t capacity) : model_(&model), capacity_(std::max<std::size_t>(1, capacity)) {}

std::shared_ptr<const Plan> PlanCache::plan(const PlanRequest& request) {
  {
    std::lock_guard lock(mutex_);
    if (const auto it = plans_.find(request); it != plans_.end()) {
      ++hits_;
      return it->second;
    }
    ++misses_;
  }
  auto planned = std::make_shared<const Plan>(plan_redistribution(request, *model_));  // outside the lock
  std::lock_guard lock(mutex_);
  const auto [it, inserted] = plans_.emplace(request, planned);
  if (!inserted) return it->second;
  if (order_.size() < capacity_) {
    order_.push_back(request);
  } else {
    plans_.erase(order_[next_evict_]);
    order_[next_evict_] = request;
    next_evict_ = (next_evict_ + 1) % capacity_;
  }
  return planned;
}

std::size_t PlanCache::size() const {
  std::lock_guard lock(mutex_);
  return plans_.size();
}

std::size_t PlanCache::hits() const {
  std::lock_guard lock(mutex_);
  return hits_;
}

std::size_t PlanCache::misses() const {
  std::lock_guard lock(mutex_);
  return misses_;
}

}  // namespace meshloom
