#include "meshloom/plan/simulator.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "checked.hpp"
#include "local_ops.hpp"
#include "meshloom/error.hpp"

namespace meshloom {

namespace {

using Shape = std::vector<std::int64_t>;

std::string ints(const Shape& v, char open = '[', char close = ']') {
  std::string s(1, open);
  for (std::size_t i = 0; i < v.size(); ++i) s += (i > 0 ? "," : "") + std::to_string(v[i]);
  return s + close;
}

std::string axes_text(const std::vector<std::size_t>& axes) {
  std::string s = "[";
  for (std::size_t i = 0; i < axes.size(); ++i) s += (i > 0 ? "," : "") + std::to_string(axes[i]);
  return s + "]";
}

std::int64_t numel(const Shape& shape) {
  std::int64_t n = 1;
  for (auto s : shape) n = detail::checked_mul(n, s, "simulator: elements");
  return n;
}

std::size_t unumel(const Shape& shape) { return static_cast<std::size_t>(numel(shape)); }

// ---- Pseudo-random splits -------------------------------------------------------------------------------------

std::uint64_t mix(std::uint64_t x) noexcept {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t rnd(std::uint64_t seed, std::int64_t element, std::size_t axis, std::int64_t index, std::uint64_t salt) {
  std::uint64_t h = mix(seed ^ salt);
  h = mix(h ^ static_cast<std::uint64_t>(element));
  h = mix(h ^ static_cast<std::uint64_t>(axis));
  return mix(h ^ static_cast<std::uint64_t>(index));
}

std::int64_t small(std::uint64_t r, std::int64_t bound) { return static_cast<std::int64_t>(r % static_cast<std::uint64_t>(bound)); }

// w(i) for a sum (target 1) or avg (target n) axis: telescoping, so sum_i w(i) = target; w(i >= 1) in [5, 11],
// w(0) < 0 when n >= 2: never zero.
std::int64_t linear_weight(std::uint64_t seed, std::int64_t e, std::size_t axis, std::int64_t n, std::int64_t i,
                           std::int64_t target) {
  auto r = [&](std::int64_t k) { return 8 * k + small(rnd(seed, e, axis, k, 1), 4); };
  if (n == 1) return target;
  if (i == 0) return target + r(0) - r(n - 1);
  return r(i) - r(i - 1);
}

// The index of an axis that carries the unchanged value (max/min offset 0, product's v).
std::int64_t chosen_index(std::uint64_t seed, std::int64_t e, std::size_t axis, std::int64_t n) {
  return small(rnd(seed, e, axis, -1, 2), n);
}

// +-1 with product 1 along the axis: (-1)^(b(i) + b(i-1 mod n)).
std::int64_t sign(std::uint64_t seed, std::int64_t e, std::size_t axis, std::int64_t n, std::int64_t i) {
  if (n == 1) return 1;
  auto b = [&](std::int64_t k) { return rnd(seed, e, axis, k, 3) & 1U; };
  return ((b(i) + b((i + n - 1) % n)) & 1U) != 0 ? -1 : 1;
}

// ---- Mesh arithmetic ----------------------------------------------------------------------------------------

// Groups of a step on `axes` (ascending): ranks agreeing outside `axes`, each ordered by group index.
std::vector<std::vector<std::size_t>> make_groups(const Shape& mesh, const std::vector<std::size_t>& axes) {
  const std::size_t world = unumel(mesh);
  std::size_t n = 1;
  for (auto a : axes) n *= static_cast<std::size_t>(mesh[a]);
  std::vector<std::vector<std::size_t>> groups;
  groups.reserve(world / n);
  for (std::size_t r = 0; r < world; ++r) {
    Shape c = rank_coordinate(mesh, r);
    bool leader = true;
    for (auto a : axes) leader = leader && c[a] == 0;
    if (!leader) continue;
    std::vector<std::size_t> g;
    g.reserve(n);
    for (std::size_t j = 0; j < n; ++j) {
      std::size_t rest = j;
      for (std::size_t k = axes.size(); k-- > 0;) {
        const auto size = static_cast<std::size_t>(mesh[axes[k]]);
        c[axes[k]] = static_cast<std::int64_t>(rest % size);
        rest /= size;
      }
      g.push_back(rank_index(mesh, c));
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

}  // namespace

// ---- Local tensors (shared with the executor through local_ops.hpp) ------------------------------------------

namespace detail {

// [offset, offset + size) of t along dim.
LocalTensor slice(const LocalTensor& t, std::size_t dim, std::int64_t offset, std::int64_t size) {
  LocalTensor out;
  out.shape = t.shape;
  out.shape[dim] = size;
  const Split s = split_at(t.shape, dim);
  out.data.reserve(s.outer * static_cast<std::size_t>(size) * s.inner);
  for (std::size_t o = 0; o < s.outer; ++o) {
    const auto begin = t.data.begin() + static_cast<std::ptrdiff_t>((o * s.extent + static_cast<std::size_t>(offset)) * s.inner);
    out.data.insert(out.data.end(), begin, begin + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(size) * s.inner));
  }
  return out;
}

// torch.chunk piece `index` of `parts` along dim.
LocalTensor chunk(const LocalTensor& t, std::size_t dim, std::int64_t parts, std::int64_t index) {
  const ChunkExtent e = chunk_extent(t.shape[dim], parts, index);
  return slice(t, dim, e.size == 0 ? 0 : e.offset, e.size);
}

// Concatenation along dim; the pieces must agree on every other dim (checked by the caller).
LocalTensor concat(const std::vector<const LocalTensor*>& pieces, std::size_t dim) {
  LocalTensor out;
  out.shape = pieces.front()->shape;
  std::int64_t total = 0;
  for (const auto* p : pieces) total += p->shape[dim];
  out.shape[dim] = total;
  const Split s = split_at(out.shape, dim);
  out.data.reserve(unumel(out.shape));
  for (std::size_t o = 0; o < s.outer; ++o) {
    for (const auto* p : pieces) {
      const std::size_t len = static_cast<std::size_t>(p->shape[dim]) * s.inner;
      const auto begin = p->data.begin() + static_cast<std::ptrdiff_t>(o * len);
      out.data.insert(out.data.end(), begin, begin + static_cast<std::ptrdiff_t>(len));
    }
  }
  return out;
}

// The reduce ops of a P -> ... step, one per axis.
std::vector<ReduceOp> step_ops(const PlanStep& step, std::size_t mesh_ndim) {
  std::vector<ReduceOp> ops;
  for (auto axis : step.axes) {
    if (step.axes.size() > 1 && step.before.ndim() == mesh_ndim && step.before.placement(axis).is_partial()) {
      ops.push_back(step.before.placement(axis).op());
    } else {
      ops.push_back(step.from.op());
    }
  }
  return ops;
}

}  // namespace detail

namespace {

using detail::chunk;
using detail::concat;
using detail::slice;
using detail::step_ops;

// t extended along dim to `size` with `value` after its end.
LocalTensor pad(const LocalTensor& t, std::size_t dim, std::int64_t size, std::int64_t value) {
  LocalTensor filler;
  filler.shape = t.shape;
  filler.shape[dim] = size - t.shape[dim];
  filler.data.assign(unumel(filler.shape), value);
  return concat({&t, &filler}, dim);
}

// ---- Step errors --------------------------------------------------------------------------------------------

[[noreturn]] void step_error(const PlanStep& step, const std::string& what) {
  raise(ErrorKind::RuntimeError, std::string(to_string(step.collective)) + " " + to_string(step.from) + " -> " +
                                     to_string(step.to) + " on axes " + axes_text(step.axes) + ": " + what);
}

std::string group_name(const Shape& mesh, const std::vector<std::size_t>& group) {
  return "group of rank " + std::to_string(group.front()) + " " + ints(rank_coordinate(mesh, group.front()), '(', ')');
}

// The pieces of a group concatenated along dim, as the step's padding model moves them.
LocalTensor gather(const PlanStep& step, const Shape& mesh, const std::vector<std::size_t>& group,
                   const std::vector<const LocalTensor*>& pieces, std::size_t dim, Padding padding) {
  const auto& first = *pieces.front();
  std::int64_t total = 0;
  for (const auto* p : pieces) {
    if (p->shape.size() != first.shape.size() || dim >= first.shape.size()) {
      step_error(step, group_name(mesh, group) + ": pieces of rank " + std::to_string(p->shape.size()) +
                           " and " + std::to_string(first.shape.size()) + " along dim " + std::to_string(dim));
    }
    for (std::size_t d = 0; d < first.shape.size(); ++d) {
      if (d != dim && p->shape[d] != first.shape[d]) {
        step_error(step, group_name(mesh, group) + ": pieces " + ints(first.shape) + " and " + ints(p->shape) +
                             " differ outside dim " + std::to_string(dim));
      }
    }
    total += p->shape[dim];
  }
  const auto n = static_cast<std::int64_t>(pieces.size());
  const bool even = total % n == 0 && std::all_of(pieces.begin(), pieces.end(), [&](const LocalTensor* p) {
                      return p->shape[dim] == total / n;
                    });
  if (padding == Padding::Exact || even) {
    return concat(pieces, dim);
  }
  // PyTorch: pad every piece to the full chunk, gather, cut the tail.
  const std::int64_t full = (total + n - 1) / n;
  std::vector<LocalTensor> padded;
  padded.reserve(pieces.size());
  for (const auto* p : pieces) {
    if (p->shape[dim] > full) {
      step_error(step, group_name(mesh, group) + ": a piece of " + std::to_string(p->shape[dim]) + " along dim " +
                           std::to_string(dim) + " exceeds the padded chunk of " + std::to_string(full) + " (" +
                           std::to_string(total) + " over " + std::to_string(n) + " ranks)");
    }
    padded.push_back(pad(*p, dim, full, kPaddingValue));
  }
  std::vector<const LocalTensor*> ptrs;
  for (const auto& p : padded) ptrs.push_back(&p);
  return slice(concat(ptrs, dim), dim, 0, total);
}

std::int64_t reduce_pair(ReduceOp op, std::int64_t a, std::int64_t b, bool& overflow) {
  std::int64_t r = 0;
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: overflow = overflow || __builtin_add_overflow(a, b, &r); return r;
    case ReduceOp::Product: overflow = overflow || __builtin_mul_overflow(a, b, &r); return r;
    case ReduceOp::Max: return std::max(a, b);
    case ReduceOp::Min: return std::min(a, b);
  }
  return r;
}

// Elementwise reduction of the group's buffers. Sum and avg axes reduce as a sum divided by the product of the
// avg axes' sizes; other ops must be alone. On failure returns the reason in `why`.
bool reduce_group(const std::vector<const LocalTensor*>& buffers, const std::vector<ReduceOp>& ops,
                  const std::vector<std::int64_t>& sizes, LocalTensor& out, std::string& why) {
  const bool linear = std::all_of(ops.begin(), ops.end(), [](ReduceOp op) { return op == ReduceOp::Sum || op == ReduceOp::Avg; });
  if (!linear && std::any_of(ops.begin(), ops.end(), [&](ReduceOp op) { return op != ops.front(); })) {
    why = "reduce ops cannot be combined in one collective";
    return false;
  }
  std::int64_t divisor = 1;
  for (std::size_t k = 0; k < ops.size(); ++k) {
    if (ops[k] == ReduceOp::Avg) divisor *= sizes[k];
  }
  const ReduceOp op = linear ? ReduceOp::Sum : ops.front();
  for (const auto* b : buffers) {
    if (b->shape != buffers.front()->shape) {
      why = "buffers of shapes " + ints(buffers.front()->shape) + " and " + ints(b->shape) + " cannot be reduced";
      return false;
    }
  }
  out = *buffers.front();
  bool overflow = false;
  for (std::size_t k = 1; k < buffers.size(); ++k) {
    const auto& d = buffers[k]->data;
    for (std::size_t i = 0; i < d.size(); ++i) out.data[i] = reduce_pair(op, out.data[i], d[i], overflow);
  }
  if (overflow) {
    why = "the " + std::string(to_string(op)) + " overflows int64";
    return false;
  }
  if (divisor != 1) {
    for (std::size_t i = 0; i < out.data.size(); ++i) {
      if (out.data[i] % divisor != 0) {
        why = "the average is not exact: element " + std::to_string(i) + " sums to " + std::to_string(out.data[i]) +
              ", not a multiple of " + std::to_string(divisor);
        return false;
      }
      out.data[i] /= divisor;
    }
  }
  return true;
}

// ---- Slices of the global tensor ------------------------------------------------------------------------------

struct Box {
  Shape offset;
  Shape size;
};

Box box_of(const State& state, const Shape& tensor_shape, const Shape& mesh, const Shape& coord) {
  Box b{Shape(tensor_shape.size(), 0), tensor_shape};
  for (const auto& entry : state.shard_order()) {
    const auto d = static_cast<std::size_t>(entry.dim);
    for (const std::size_t axis : entry.axes) {
      const ChunkExtent e = chunk_extent(b.size[d], mesh[axis], coord[axis]);
      if (e.size > 0) b.offset[d] += e.offset;
      b.size[d] = e.size;
    }
  }
  return b;
}

// Calls fn(local flat index, global flat index, local multi-index) for every element of the box.
template <typename Fn>
void for_each_element(const Box& box, const Shape& tensor_shape, Fn&& fn) {
  const std::size_t n = box.size.size();
  const std::int64_t count = numel(box.size);
  if (count == 0) return;
  Shape stride = tensor_shape;
  std::int64_t acc = 1;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t d = n - 1 - k;
    stride[d] = acc;
    acc *= tensor_shape[d];
  }
  Shape idx = box.size;
  std::fill(idx.begin(), idx.end(), 0);
  for (std::int64_t local = 0; local < count; ++local) {
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < n; ++d) flat += (box.offset[d] + idx[d]) * stride[d];
    fn(static_cast<std::size_t>(local), flat, idx);
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t d = n - 1 - k;
      if (++idx[d] < box.size[d]) break;
      idx[d] = 0;
    }
  }
}

void check_fit(const Shape& mesh, const Shape& tensor_shape, const State& state, const SimulationOptions& options) {
  if (mesh.empty()) raise(ErrorKind::ValueError, "simulator: the mesh needs at least one axis");
  for (auto s : mesh) {
    if (s < 1) raise(ErrorKind::ValueError, "simulator: mesh " + ints(mesh) + " has an axis of size " + std::to_string(s));
  }
  for (auto s : tensor_shape) {
    if (s < 1) raise(ErrorKind::ValueError, "simulator: tensor_shape " + ints(tensor_shape) + " has a dim of size " + std::to_string(s));
  }
  check_state(state, mesh.size(), static_cast<std::int64_t>(tensor_shape.size()));
  const std::int64_t total = detail::checked_mul(numel(mesh), numel(tensor_shape), "simulator: ranks times elements");
  if (total > options.max_elements) {
    raise(ErrorKind::ValueError, "simulator: mesh " + ints(mesh) + " and tensor " + ints(tensor_shape) + " need up to " +
                                     std::to_string(total) + " elements across ranks, more than the limit of " +
                                     std::to_string(options.max_elements));
  }
}

std::string rank_name(const Shape& mesh, std::size_t rank) {
  return "rank " + std::to_string(rank) + " " + ints(rank_coordinate(mesh, rank), '(', ')');
}

}  // namespace

// ---- Public API -------------------------------------------------------------------------------------------

std::vector<std::int64_t> rank_coordinate(const std::vector<std::int64_t>& mesh_shape, std::size_t rank) {
  Shape c(mesh_shape.size(), 0);
  for (std::size_t k = mesh_shape.size(); k-- > 0;) {
    const auto size = static_cast<std::size_t>(mesh_shape[k]);
    c[k] = static_cast<std::int64_t>(rank % size);
    rank /= size;
  }
  return c;
}

std::size_t rank_index(const std::vector<std::int64_t>& mesh_shape, const std::vector<std::int64_t>& coordinate) {
  std::size_t r = 0;
  for (std::size_t k = 0; k < mesh_shape.size(); ++k) {
    r = r * static_cast<std::size_t>(mesh_shape[k]) + static_cast<std::size_t>(coordinate[k]);
  }
  return r;
}

namespace {

// expected_local without the checks (the callers check once).
LocalTensor expected_slice(const Shape& mesh_shape, const Shape& tensor_shape, const State& state, const Shape& coordinate) {
  const Box box = box_of(state, tensor_shape, mesh_shape, coordinate);
  LocalTensor t;
  t.shape = box.size;
  t.data.assign(unumel(box.size), 0);
  for_each_element(box, tensor_shape, [&](std::size_t local, std::int64_t flat, const Shape&) {
    t.data[local] = global_value(flat);
  });
  return t;
}

void check_coordinate(const Shape& mesh_shape, const Shape& coordinate) {
  bool ok = coordinate.size() == mesh_shape.size();
  for (std::size_t k = 0; ok && k < coordinate.size(); ++k) ok = coordinate[k] >= 0 && coordinate[k] < mesh_shape[k];
  if (!ok) {
    raise(ErrorKind::ValueError, "simulator: coordinate " + ints(coordinate, '(', ')') + " is not on mesh " + ints(mesh_shape));
  }
}

// The partial axes of a state by kind of op; ValueError when product mixes with another op.
struct PartialAxes {
  std::vector<std::size_t> linear, extreme, product;
};

PartialAxes partial_axes_of(const State& state) {
  PartialAxes p;
  for (std::size_t a = 0; a < state.ndim(); ++a) {
    const Placement& pl = state.placement(a);
    if (!pl.is_partial()) continue;
    switch (pl.op()) {
      case ReduceOp::Sum:
      case ReduceOp::Avg: p.linear.push_back(a); break;
      case ReduceOp::Max:
      case ReduceOp::Min: p.extreme.push_back(a); break;
      case ReduceOp::Product: p.product.push_back(a); break;
    }
  }
  if (!p.product.empty() && (!p.linear.empty() || !p.extreme.empty())) {
    raise(ErrorKind::ValueError, "simulator: state " + to_string(state) +
                                     " mixes P(product) with another partial op; no split reduces to the value in "
                                     "every order");
  }
  return p;
}

// Turns the expected slice `t` of the rank at coordinate c into its share of the partial split.
void split_partial(LocalTensor& t, const Shape& mesh_shape, const Shape& tensor_shape, const State& state,
                   const Shape& c, const PartialAxes& p, std::uint64_t seed) {
  if (p.linear.empty() && p.extreme.empty() && p.product.empty()) return;
  const Box box = box_of(state, tensor_shape, mesh_shape, c);
  bool overflow = false;
  for_each_element(box, tensor_shape, [&](std::size_t local, std::int64_t flat, const Shape&) {
    std::int64_t x = t.data[local];
    for (const auto a : p.linear) {
      const std::int64_t n = mesh_shape[a];
      const std::int64_t target = state.placement(a).op() == ReduceOp::Avg ? n : 1;
      overflow = overflow || __builtin_mul_overflow(x, linear_weight(seed, flat, a, n, c[a], target), &x);
    }
    for (const auto a : p.extreme) {
      const std::int64_t n = mesh_shape[a];
      if (c[a] == chosen_index(seed, flat, a, n)) continue;
      const std::int64_t offset = 1 + small(rnd(seed, flat, a, c[a], 4), 5);
      const bool is_max = state.placement(a).op() == ReduceOp::Max;
      overflow = overflow || __builtin_add_overflow(x, is_max ? -offset : offset, &x);
    }
    if (!p.product.empty()) {
      bool chosen = true;
      std::int64_t s = 1;
      for (const auto a : p.product) {
        chosen = chosen && c[a] == chosen_index(seed, flat, a, mesh_shape[a]);
        s *= sign(seed, flat, a, mesh_shape[a], c[a]);
      }
      x = (chosen ? x : 1) * s;
    }
    t.data[local] = x;
  });
  if (overflow) {
    raise(ErrorKind::ValueError, "simulator: the partial split of state " + to_string(state) + " on mesh " +
                                     ints(mesh_shape) + " overflows int64");
  }
}

}  // namespace

LocalTensor expected_local(const std::vector<std::int64_t>& mesh_shape, const std::vector<std::int64_t>& tensor_shape,
                           const State& state, const std::vector<std::int64_t>& coordinate,
                           const SimulationOptions& options) {
  check_fit(mesh_shape, tensor_shape, state, options);
  check_coordinate(mesh_shape, coordinate);
  return expected_slice(mesh_shape, tensor_shape, state, coordinate);
}

LocalTensor initial_local(const std::vector<std::int64_t>& mesh_shape, const std::vector<std::int64_t>& tensor_shape,
                          const State& state, const std::vector<std::int64_t>& coordinate,
                          const SimulationOptions& options) {
  check_fit(mesh_shape, tensor_shape, state, options);
  check_coordinate(mesh_shape, coordinate);
  const PartialAxes p = partial_axes_of(state);
  LocalTensor t = expected_slice(mesh_shape, tensor_shape, state, coordinate);
  split_partial(t, mesh_shape, tensor_shape, state, coordinate, p, options.seed);
  return t;
}

LocalTensor initial_local(const PlanRequest& request, const std::vector<std::int64_t>& coordinate,
                          const SimulationOptions& options) {
  return initial_local(request.mesh_shape, request.tensor_shape, request.src, coordinate, options);
}

LocalTensor expected_local(const PlanRequest& request, const std::vector<std::int64_t>& coordinate,
                           const SimulationOptions& options) {
  return expected_local(request.mesh_shape, request.tensor_shape, request.dst, coordinate, options);
}

Distribution expected_distribution(const std::vector<std::int64_t>& mesh_shape,
                                   const std::vector<std::int64_t>& tensor_shape, const State& state,
                                   const SimulationOptions& options) {
  check_fit(mesh_shape, tensor_shape, state, options);
  Distribution dist;
  dist.mesh_shape = mesh_shape;
  const std::size_t world = unumel(mesh_shape);
  dist.ranks.reserve(world);
  for (std::size_t r = 0; r < world; ++r) {
    dist.ranks.push_back(expected_slice(mesh_shape, tensor_shape, state, rank_coordinate(mesh_shape, r)));
  }
  return dist;
}

Distribution initial_distribution(const std::vector<std::int64_t>& mesh_shape,
                                  const std::vector<std::int64_t>& tensor_shape, const State& state,
                                  const SimulationOptions& options) {
  check_fit(mesh_shape, tensor_shape, state, options);
  const PartialAxes p = partial_axes_of(state);
  Distribution dist;
  dist.mesh_shape = mesh_shape;
  const std::size_t world = unumel(mesh_shape);
  dist.ranks.reserve(world);
  for (std::size_t r = 0; r < world; ++r) {
    const Shape c = rank_coordinate(mesh_shape, r);
    dist.ranks.push_back(expected_slice(mesh_shape, tensor_shape, state, c));
    split_partial(dist.ranks.back(), mesh_shape, tensor_shape, state, c, p, options.seed);
  }
  return dist;
}

void apply_step(Distribution& dist, const PlanStep& step, const SimulationOptions& options) {
  const Shape& mesh = dist.mesh_shape;
  if (step.axes.empty()) raise(ErrorKind::ValueError, "simulator: a step without axes");
  for (std::size_t k = 0; k < step.axes.size(); ++k) {
    if (step.axes[k] >= mesh.size() || (k > 0 && step.axes[k] <= step.axes[k - 1])) {
      raise(ErrorKind::ValueError, "simulator: step axes " + axes_text(step.axes) + " must be ascending and < " +
                                       std::to_string(mesh.size()));
    }
  }
  const auto expected = collective_for(step.from, step.to);
  if (!expected || *expected != step.collective) {
    step_error(step, "the collective does not turn " + to_string(step.from) + " into " + to_string(step.to));
  }
  std::vector<std::int64_t> sizes;
  for (auto a : step.axes) sizes.push_back(mesh[a]);
  const auto groups = make_groups(mesh, step.axes);
  auto check_dim = [&](const LocalTensor& t, std::int64_t dim) {
    if (dim < 0 || static_cast<std::size_t>(dim) >= t.shape.size()) {
      step_error(step, "dim " + std::to_string(dim) + " is outside the local tensor of shape " + ints(t.shape));
    }
    return static_cast<std::size_t>(dim);
  };
  for (const auto& group : groups) {
    const auto n = static_cast<std::int64_t>(group.size());
    std::vector<const LocalTensor*> buffers;
    for (auto r : group) buffers.push_back(&dist.ranks[r]);
    switch (step.collective) {
      case Collective::AllGather: {
        const std::size_t d = check_dim(*buffers.front(), step.from.dim());
        LocalTensor out = gather(step, mesh, group, buffers, d, options.padding);
        for (auto r : group) dist.ranks[r] = out;
        break;
      }
      case Collective::AllReduce:
      case Collective::ReduceScatter: {
        LocalTensor out;
        std::string why;
        if (!reduce_group(buffers, step_ops(step, mesh.size()), sizes, out, why)) {
          step_error(step, group_name(mesh, group) + ": " + why);
        }
        if (step.collective == Collective::AllReduce) {
          for (auto r : group) dist.ranks[r] = out;
        } else {
          const std::size_t d = check_dim(out, step.to.dim());
          for (std::size_t j = 0; j < group.size(); ++j) dist.ranks[group[j]] = chunk(out, d, n, static_cast<std::int64_t>(j));
        }
        break;
      }
      case Collective::AllToAll: {
        const std::size_t a = check_dim(*buffers.front(), step.from.dim());
        const std::size_t b = check_dim(*buffers.front(), step.to.dim());
        // pieces[i][j]: what member i sends to member j.
        std::vector<std::vector<LocalTensor>> pieces(group.size());
        for (std::size_t i = 0; i < group.size(); ++i) {
          for (std::int64_t j = 0; j < n; ++j) pieces[i].push_back(chunk(*buffers[i], b, n, j));
        }
        for (std::size_t j = 0; j < group.size(); ++j) {
          std::vector<const LocalTensor*> received;
          for (std::size_t i = 0; i < group.size(); ++i) received.push_back(&pieces[i][j]);
          dist.ranks[group[j]] = gather(step, mesh, group, received, a, options.padding);
        }
        break;
      }
      case Collective::Chunk: {
        for (std::size_t j = 0; j < group.size(); ++j) {
          LocalTensor& t = dist.ranks[group[j]];
          t = chunk(t, check_dim(t, step.to.dim()), n, static_cast<std::int64_t>(j));
        }
        break;
      }
      case Collective::ReplicateToPartial: {
        const ReduceOp op = step.to.op();
        if (op != ReduceOp::Sum && op != ReduceOp::Product) break;
        for (std::size_t j = 1; j < group.size(); ++j) {
          auto& data = dist.ranks[group[j]].data;
          std::fill(data.begin(), data.end(), op == ReduceOp::Sum ? 0 : 1);
        }
        break;
      }
      case Collective::ShardToPartial: {
        const std::size_t d = check_dim(*buffers.front(), step.from.dim());
        std::int64_t total = 0;
        for (const auto* b : buffers) total += b->shape[d];
        std::int64_t offset = 0;
        for (std::size_t j = 0; j < group.size(); ++j) {
          LocalTensor& t = dist.ranks[group[j]];
          const std::int64_t size = t.shape[d];
          std::int64_t at = offset;
          if (options.padding == Padding::Torch) {
            const ChunkExtent e = chunk_extent(total, n, static_cast<std::int64_t>(j));
            if (e.size != size) {
              step_error(step, rank_name(mesh, group[j]) + ": a shard of " + std::to_string(size) + " along dim " +
                                   std::to_string(d) + " is not torch.chunk piece " + std::to_string(j) + " of " +
                                   std::to_string(total) + " (" + std::to_string(e.size) + ")");
            }
            at = e.size == 0 ? 0 : e.offset;
          }
          offset += size;
          LocalTensor before;
          before.shape = t.shape;
          before.shape[d] = at;
          before.data.assign(unumel(before.shape), 0);
          LocalTensor after;
          after.shape = t.shape;
          after.shape[d] = total - at - size;
          after.data.assign(unumel(after.shape), 0);
          t = concat({&before, &t, &after}, d);
        }
        break;
      }
    }
  }
}

SimulationResult verify_distribution(const Distribution& actual, const std::vector<std::int64_t>& tensor_shape,
                                     const State& target) {
  SimulationResult result;
  const Shape& mesh = actual.mesh_shape;
  SimulationOptions unlimited;
  unlimited.max_elements = std::numeric_limits<std::int64_t>::max();
  const Distribution expected = expected_distribution(mesh, tensor_shape, target, unlimited);
  if (actual.ranks.size() != expected.ranks.size()) {
    result.error = "the distribution has " + std::to_string(actual.ranks.size()) + " ranks, the mesh " +
                   std::to_string(expected.ranks.size());
    return result;
  }
  for (std::size_t r = 0; r < expected.ranks.size(); ++r) {
    const LocalTensor& t = actual.ranks[r];
    if (t.shape != expected.ranks[r].shape || t.data.size() != expected.ranks[r].data.size()) {
      result.error = rank_name(mesh, r) + ": shape " + ints(t.shape) + ", expected " + ints(expected.ranks[r].shape);
      return result;
    }
  }
  // Reduce the partial axes, ascending, into the ranks whose coordinate on them is 0.
  std::vector<LocalTensor> reduced = actual.ranks;
  std::vector<std::size_t> partial_axes;
  for (std::size_t a = 0; a < target.ndim(); ++a) {
    if (!target.placement(a).is_partial()) continue;
    partial_axes.push_back(a);
    for (const auto& group : make_groups(mesh, {a})) {
      std::vector<const LocalTensor*> buffers;
      for (auto r : group) buffers.push_back(&reduced[r]);
      LocalTensor out;
      std::string why;
      if (!reduce_group(buffers, {target.placement(a).op()}, {mesh[a]}, out, why)) {
        result.error = "reducing " + to_string(target.placement(a)) + " on axis " + std::to_string(a) + " over the " +
                       group_name(mesh, group) + ": " + why;
        return result;
      }
      reduced[group.front()] = std::move(out);
    }
  }
  for (std::size_t r = 0; r < expected.ranks.size(); ++r) {
    const Shape c = rank_coordinate(mesh, r);
    if (std::any_of(partial_axes.begin(), partial_axes.end(), [&](std::size_t a) { return c[a] != 0; })) continue;
    const auto& want = expected.ranks[r].data;
    const auto& got = reduced[r].data;
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (want[i] == got[i]) continue;
      const Box box = box_of(target, tensor_shape, mesh, c);
      Shape local(box.size.size(), 0);
      std::size_t rest = i;
      for (std::size_t d = box.size.size(); d-- > 0;) {
        local[d] = static_cast<std::int64_t>(rest % static_cast<std::size_t>(box.size[d]));
        rest /= static_cast<std::size_t>(box.size[d]);
      }
      Shape global = local;
      for (std::size_t d = 0; d < global.size(); ++d) global[d] += box.offset[d];
      result.error = rank_name(mesh, r) + (partial_axes.empty() ? "" : " (its partial group reduced over axes " +
                                                                          axes_text(partial_axes) + ")") +
                     ": element " + ints(local) + " (global " + ints(global) + "): expected " +
                     std::to_string(want[i]) + ", got " + std::to_string(got[i]);
      return result;
    }
  }
  for (const auto& t : actual.ranks) result.elements_checked += t.data.size();
  result.ok = true;
  return result;
}

SimulationResult simulate(const PlanRequest& request, const Plan& plan, const SimulationOptions& options) {
  check_fit(request.mesh_shape, request.tensor_shape, request.src, options);
  check_state(request.dst, request.mesh_shape.size(), static_cast<std::int64_t>(request.tensor_shape.size()));
  Distribution dist = initial_distribution(request.mesh_shape, request.tensor_shape, request.src, options);
  const std::size_t count = plan.steps.size();
  for (std::size_t i = 0; i < count; ++i) {
    try {
      apply_step(dist, plan.steps[i], options);
    } catch (const Error& e) {
      SimulationResult failed;
      failed.steps_executed = i;
      failed.error = "step " + std::to_string(i + 1) + " of " + std::to_string(count) + " (" + e.message() + ")";
      return failed;
    }
  }
  SimulationResult result = verify_distribution(dist, request.tensor_shape, request.dst);
  result.steps_executed = count;
  if (!result.ok) result.error = "after step " + std::to_string(count) + " of " + std::to_string(count) + ": " + result.error;
  return result;
}

}  // namespace meshloom
