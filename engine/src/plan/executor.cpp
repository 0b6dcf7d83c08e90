#include "meshloom/plan/executor.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <utility>

#include "local_ops.hpp"
#include "meshloom/error.hpp"

namespace meshloom {

namespace {

using Shape = std::vector<std::int64_t>;

std::string ints(const Shape& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i > 0 ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

using detail::count_of;
using detail::split_at;
using detail::Split;

[[noreturn]] void step_error(const PlanStep& step, const std::string& what) {
  std::string axes = "[";
  for (std::size_t i = 0; i < step.axes.size(); ++i) axes += (i > 0 ? "," : "") + std::to_string(step.axes[i]);
  raise(ErrorKind::RuntimeError, "executor: " + std::string(to_string(step.collective)) + " " + to_string(step.from) +
                                     " -> " + to_string(step.to) + " on axes " + axes + "]: " + what);
}

// ---- The wire: int64 or float64 --------------------------------------------------------------------------------

constexpr std::int64_t kMaxExactDouble = std::int64_t{1} << 53;

// A collective's buffers come from the heap, input first, then output, as bench's do (launcher collectives/
// collective.hpp, CollectiveData): keep the two alike. Where a buffer sits modulo the page changes what copies
// through it cost (4K aliasing), and page-aligning these alone put the steps at 0.35-0.6x the curves
// (docs/benchmarks.md, "What did not help").
struct Wire {
  DType dtype = DType::Float64;
  std::vector<std::int64_t> ints;
  std::vector<double> doubles;

  // The values on the wire. A value float64 cannot hold exactly is a ValueError, or, with `problem`, the first
  // such is described there and the value travels rounded (verification keeps every rank in the collective).
  Wire(DType t, std::vector<std::int64_t> values, std::string* problem = nullptr) : dtype(t), ints(std::move(values)) {
    if (dtype == DType::Float64) {
      doubles.reserve(ints.size());
      for (const auto v : ints) {
        if (v > kMaxExactDouble || v < -kMaxExactDouble) {
          const std::string what = "executor: the value " + std::to_string(v) +
                                   " cannot travel as float64 exactly (|v| > 2^53); use int64";
          if (problem == nullptr) raise(ErrorKind::ValueError, what);
          if (problem->empty()) *problem = "ValueError: " + what;
        }
        doubles.push_back(static_cast<double>(v));
      }
      ints.clear();
    }
  }
  Wire(DType t, std::size_t count) : dtype(t) {
    if (dtype == DType::Float64) {
      doubles.assign(count, 0.0);
    } else {
      ints.assign(count, 0);
    }
  }
  [[nodiscard]] std::size_t size() const { return dtype == DType::Float64 ? doubles.size() : ints.size(); }
  [[nodiscard]] comm::ConstBuffer cbuf() const {
    return {dtype == DType::Float64 ? static_cast<const void*>(doubles.data()) : static_cast<const void*>(ints.data()),
            size(), dtype};
  }
  [[nodiscard]] comm::Buffer buf() {
    return {dtype == DType::Float64 ? static_cast<void*>(doubles.data()) : static_cast<void*>(ints.data()), size(),
            dtype};
  }
  // The values as int64, each divided by `divisor` (exactly; false in `exact` otherwise).
  [[nodiscard]] std::vector<std::int64_t> values(std::int64_t divisor, bool& exact) const {
    exact = true;
    if (dtype == DType::Int64) {
      if (divisor == 1) return ints;
      std::vector<std::int64_t> out(ints.size());
      for (std::size_t i = 0; i < ints.size(); ++i) {
        exact = exact && ints[i] % divisor == 0;
        out[i] = ints[i] / divisor;
      }
      return out;
    }
    std::vector<std::int64_t> out(doubles.size());
    const auto d = static_cast<double>(divisor);
    for (std::size_t i = 0; i < doubles.size(); ++i) {
      const double v = doubles[i] / d;
      exact = exact && std::isfinite(v) && std::nearbyint(v) == v && std::fabs(v) <= static_cast<double>(kMaxExactDouble);
      out[i] = exact ? static_cast<std::int64_t>(v) : 0;
    }
    return out;
  }
};

// ---- Reductions ------------------------------------------------------------------------------------------------

struct Reduction {
  ReduceOp op = ReduceOp::Sum;  // what the communicator runs
  std::int64_t divisor = 1;     // applied afterwards (the avg axes)
};

Reduction reduction_of(const PlanStep& step, const Shape& mesh) {
  const std::vector<ReduceOp> ops = detail::step_ops(step, mesh.size());
  const bool linear =
      std::all_of(ops.begin(), ops.end(), [](ReduceOp op) { return op == ReduceOp::Sum || op == ReduceOp::Avg; });
  if (!linear && std::any_of(ops.begin(), ops.end(), [&](ReduceOp op) { return op != ops.front(); })) {
    step_error(step, "reduce ops cannot be combined in one collective");
  }
  Reduction r;
  r.op = linear ? ReduceOp::Sum : ops.front();
  for (std::size_t k = 0; k < ops.size(); ++k) {
    if (ops[k] == ReduceOp::Avg) r.divisor *= mesh[step.axes[k]];
  }
  return r;
}

std::vector<std::int64_t> reduced_values(const PlanStep& step, const Wire& wire, const Reduction& r) {
  bool exact = true;
  auto out = wire.values(r.divisor, exact);
  if (!exact) {
    step_error(step, r.divisor == 1 ? "a reduced value is not an integer float64 can hold exactly"
                                    : "the average is not exact (a sum is not a multiple of " +
                                          std::to_string(r.divisor) + ")");
  }
  return out;
}

}  // namespace

// ---- Pack / unpack ------------------------------------------------------------------------------------------------

std::vector<std::int64_t> pack_blocks(const LocalTensor& t, std::size_t split_dim, const std::vector<ChunkExtent>& pieces,
                                      std::size_t outer_dim, std::size_t block_count, std::int64_t padding) {
  if (split_dim >= t.shape.size() || outer_dim >= t.shape.size()) {
    raise(ErrorKind::ValueError, "pack_blocks: dims " + std::to_string(split_dim) + " and " +
                                     std::to_string(outer_dim) + " of a tensor of shape " + ints(t.shape));
  }
  std::vector<std::int64_t> out(pieces.size() * block_count, padding);
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    const ChunkExtent e = pieces[k];
    if (e.size == 0) continue;
    if (e.size < 0 || e.offset < 0 || e.offset + e.size > t.shape[split_dim]) {
      raise(ErrorKind::ValueError, "pack_blocks: piece [" + std::to_string(e.offset) + ", +" + std::to_string(e.size) +
                                       ") outside dim " + std::to_string(split_dim) + " of shape " + ints(t.shape));
    }
    const LocalTensor piece = detail::slice(t, split_dim, e.offset, e.size);
    if (piece.data.size() > block_count) {
      raise(ErrorKind::ValueError, "pack_blocks: a piece of " + std::to_string(piece.data.size()) +
                                       " elements does not fit a block of " + std::to_string(block_count));
    }
    const Split s = split_at(piece.shape, outer_dim);
    auto* block = out.data() + k * block_count;
    for (std::size_t o = 0; o < s.outer; ++o) {
      for (std::size_t x = 0; x < s.extent; ++x) {
        const auto* from = piece.data.data() + (o * s.extent + x) * s.inner;
        std::copy(from, from + s.inner, block + (x * s.outer + o) * s.inner);
      }
    }
  }
  return out;
}

LocalTensor unpack_blocks(const std::vector<std::int64_t>& blocks, std::size_t block_count,
                          const std::vector<std::vector<std::int64_t>>& shapes, std::size_t outer_dim) {
  if (shapes.empty()) raise(ErrorKind::ValueError, "unpack_blocks: no blocks");
  const Shape& first = shapes.front();
  if (outer_dim >= first.size()) {
    raise(ErrorKind::ValueError, "unpack_blocks: dim " + std::to_string(outer_dim) + " of shape " + ints(first));
  }
  if (blocks.size() < shapes.size() * block_count) {
    raise(ErrorKind::ValueError, "unpack_blocks: " + std::to_string(blocks.size()) + " elements for " +
                                     std::to_string(shapes.size()) + " blocks of " + std::to_string(block_count));
  }
  LocalTensor out;
  out.shape = first;
  std::int64_t total = 0;
  for (const auto& shape : shapes) {
    bool same = shape.size() == first.size();
    for (std::size_t d = 0; same && d < shape.size(); ++d) same = d == outer_dim || shape[d] == first[d];
    if (!same) {
      raise(ErrorKind::ValueError, "unpack_blocks: shapes " + ints(first) + " and " + ints(shape) + " differ outside dim " +
                                       std::to_string(outer_dim));
    }
    if (count_of(shape) > block_count) {
      raise(ErrorKind::ValueError, "unpack_blocks: a block of shape " + ints(shape) + " exceeds " +
                                       std::to_string(block_count) + " elements");
    }
    total += shape[outer_dim];
  }
  out.shape[outer_dim] = total;
  out.data.assign(count_of(out.shape), 0);
  const Split all = split_at(out.shape, outer_dim);
  std::size_t at = 0;  // offset along outer_dim
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    const auto extent = static_cast<std::size_t>(shapes[k][outer_dim]);
    const auto* block = blocks.data() + k * block_count;
    for (std::size_t x = 0; x < extent; ++x) {
      for (std::size_t o = 0; o < all.outer; ++o) {
        const auto* from = block + (x * all.outer + o) * all.inner;
        std::copy(from, from + all.inner, out.data.data() + (o * all.extent + at + x) * all.inner);
      }
    }
    at += extent;
  }
  return out;
}

// ---- Groups ------------------------------------------------------------------------------------------------------

std::int64_t group_index(const std::vector<std::int64_t>& mesh_shape, const std::vector<std::int64_t>& coordinate,
                         const std::vector<std::size_t>& axes) {
  std::int64_t j = 0;
  for (const auto a : axes) j = j * mesh_shape[a] + coordinate[a];
  return j;
}

std::vector<std::vector<std::int64_t>> group_members(const std::vector<std::int64_t>& mesh_shape,
                                                     const std::vector<std::int64_t>& coordinate,
                                                     const std::vector<std::size_t>& axes) {
  std::int64_t n = 1;
  for (const auto a : axes) n *= mesh_shape[a];
  std::vector<std::vector<std::int64_t>> members;
  members.reserve(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) {
    Shape c = coordinate;
    std::int64_t rest = j;
    for (std::size_t k = axes.size(); k-- > 0;) {
      c[axes[k]] = rest % mesh_shape[axes[k]];
      rest /= mesh_shape[axes[k]];
    }
    members.push_back(std::move(c));
  }
  return members;
}

// ---- Execution ---------------------------------------------------------------------------------------------------

void execute_step(LocalTensor& local, const PlanStep& step, const ExecutionContext& ctx, comm::Communicator* group,
                  StepProfile* profile) {
  const Shape& mesh = ctx.mesh_shape;
  if (ctx.dtype != DType::Float64 && ctx.dtype != DType::Int64) {
    raise(ErrorKind::ValueError, "executor: data travels as float64 or int64, not " + std::string(to_string(ctx.dtype)));
  }
  if (step.axes.empty()) raise(ErrorKind::ValueError, "executor: a step without axes");
  for (std::size_t k = 0; k < step.axes.size(); ++k) {
    if (step.axes[k] >= mesh.size() || (k > 0 && step.axes[k] <= step.axes[k - 1])) {
      step_error(step, "axes must be ascending and < " + std::to_string(mesh.size()));
    }
  }
  if (ctx.coordinate.size() != mesh.size()) step_error(step, "the coordinate " + ints(ctx.coordinate) + " is not on the mesh");
  const auto expected = collective_for(step.from, step.to);
  if (!expected || *expected != step.collective) {
    step_error(step, "the collective does not turn " + to_string(step.from) + " into " + to_string(step.to));
  }
  const Shape mine = local_shape(step.before, ctx.tensor_shape, mesh, ctx.coordinate);
  if (local.shape != mine || local.data.size() != count_of(mine)) {
    step_error(step, "the buffer has shape " + ints(local.shape) + " but the state before the step gives " + ints(mine));
  }
  const auto members = group_members(mesh, ctx.coordinate, step.axes);
  const auto n = static_cast<std::int64_t>(members.size());
  const std::int64_t j = group_index(mesh, ctx.coordinate, step.axes);
  std::vector<Shape> shapes;  // every member's shape before the step
  shapes.reserve(members.size());
  for (const auto& c : members) shapes.push_back(local_shape(step.before, ctx.tensor_shape, mesh, c));
  const auto dim_of = [&](std::int64_t d) {
    if (d < 0 || static_cast<std::size_t>(d) >= local.shape.size()) {
      step_error(step, "dim " + std::to_string(d) + " is outside the local tensor of shape " + ints(local.shape));
    }
    return static_cast<std::size_t>(d);
  };
  if (communicates(step.collective)) {
    if (group == nullptr) step_error(step, "no communicator for the step's group");
    if (group->size() != n || group->rank() != j) {
      step_error(step, "communicator '" + group->name() + "' has rank " + std::to_string(group->rank()) + " of " +
                           std::to_string(group->size()) + ", the mesh gives group index " + std::to_string(j) +
                           " of " + std::to_string(n));
    }
  }
  // Runs one collective of the step; with a profile, timed the single-shot way (comm::time_single_shot: the group's
  // stopwatch around the launch, then its completion).
  std::unique_ptr<comm::Stopwatch> watch =
      profile != nullptr && group != nullptr && communicates(step.collective) ? group->stopwatch(2) : nullptr;
  const auto timed = [&](auto&& collective) {
    if (profile != nullptr && profile->before_collective) profile->before_collective();
    if (watch == nullptr) {
      collective();
      group->synchronize();
      return;
    }
    profile->collective_s += 1e-6 * comm::time_single_shot(*group, *watch, collective);
  };
  if (profile != nullptr) profile->collective_s = 0;
  switch (step.collective) {
    case Collective::AllGather: {
      const std::size_t d = dim_of(step.from.dim());
      std::size_t block = 0;
      for (const auto& s : shapes) block = std::max(block, count_of(s));
      const Wire in(ctx.dtype, pack_blocks(local, d, {ChunkExtent{local.shape[d], 0}}, d, block));
      Wire out(ctx.dtype, block * members.size());
      timed([&] { group->all_gather(in.cbuf(), out.buf()); });
      bool exact = true;
      local = unpack_blocks(out.values(1, exact), block, shapes, d);
      break;
    }
    case Collective::AllReduce: {
      const Reduction r = reduction_of(step, mesh);
      // Out of place, as bench and calibrate time it (nccl-tests' out-of-place figure): the calibrated curve is the
      // cost of this very call. (In place, MPI_IN_PLACE, Open MPI's tuned all_reduce takes other paths whose cost the
      // curves do not hold.)
      const Wire in(ctx.dtype, local.data);
      Wire out(ctx.dtype, in.size());
      timed([&] { group->all_reduce(in.cbuf(), out.buf(), r.op); });
      local.data = reduced_values(step, out, r);
      break;
    }
    case Collective::ReduceScatter: {
      const Reduction r = reduction_of(step, mesh);
      const std::size_t d = dim_of(step.to.dim());
      std::vector<ChunkExtent> pieces;
      for (std::int64_t k = 0; k < n; ++k) {
        ChunkExtent e = chunk_extent(local.shape[d], n, k);
        if (e.size == 0) e.offset = 0;
        pieces.push_back(e);
      }
      Shape piece_shape = local.shape;
      piece_shape[d] = pieces.front().size;
      const std::size_t block = count_of(piece_shape);
      const Wire in(ctx.dtype, pack_blocks(local, d, pieces, d, block));
      Wire out(ctx.dtype, block);
      timed([&] { group->reduce_scatter(in.cbuf(), out.buf(), r.op); });
      Shape kept = local.shape;
      kept[d] = pieces[static_cast<std::size_t>(j)].size;
      local = unpack_blocks(reduced_values(step, out, r), block, {kept}, d);
      break;
    }
    case Collective::AllToAll: {
      const std::size_t a = dim_of(step.from.dim());
      const std::size_t b = dim_of(step.to.dim());
      std::vector<ChunkExtent> pieces;
      for (std::int64_t k = 0; k < n; ++k) {
        ChunkExtent e = chunk_extent(local.shape[b], n, k);
        if (e.size == 0) e.offset = 0;
        pieces.push_back(e);
      }
      // The largest piece any member sends: its shape with dim b cut to the first (largest) chunk.
      std::size_t block = 0;
      std::vector<Shape> received;  // what member i sends to this rank
      for (const auto& s : shapes) {
        if (s[b] != local.shape[b]) step_error(step, "members differ along dim " + std::to_string(b));
        Shape largest = s;
        largest[b] = pieces.front().size;
        block = std::max(block, count_of(largest));
        Shape mine_piece = s;
        mine_piece[b] = pieces[static_cast<std::size_t>(j)].size;
        received.push_back(std::move(mine_piece));
      }
      const Wire in(ctx.dtype, pack_blocks(local, b, pieces, a, block));
      Wire out(ctx.dtype, block * members.size());
      timed([&] { group->all_to_all(in.cbuf(), out.buf()); });
      bool exact = true;
      local = unpack_blocks(out.values(1, exact), block, received, a);
      break;
    }
    case Collective::Chunk: {
      local = detail::chunk(local, dim_of(step.to.dim()), n, j);
      break;
    }
    case Collective::ReplicateToPartial: {
      const ReduceOp op = step.to.op();
      if (j != 0 && (op == ReduceOp::Sum || op == ReduceOp::Product)) {
        std::fill(local.data.begin(), local.data.end(), op == ReduceOp::Sum ? 0 : 1);
      }
      break;
    }
    case Collective::ShardToPartial: {
      const std::size_t d = dim_of(step.from.dim());
      std::int64_t total = 0;
      std::int64_t at = 0;
      for (std::size_t i = 0; i < shapes.size(); ++i) {
        if (static_cast<std::int64_t>(i) == j) at = total;
        total += shapes[i][d];
      }
      LocalTensor before;
      before.shape = local.shape;
      before.shape[d] = at;
      before.data.assign(count_of(before.shape), 0);
      LocalTensor after;
      after.shape = local.shape;
      after.shape[d] = total - at - local.shape[d];
      after.data.assign(count_of(after.shape), 0);
      local = detail::concat({&before, &local, &after}, d);
      break;
    }
  }
}

std::optional<std::string> reduce_partial_axes(LocalTensor& local, const State& target, const ExecutionContext& ctx,
                                               const std::vector<comm::Communicator*>& axis_groups) {
  const Shape mine = local_shape(target, ctx.tensor_shape, ctx.mesh_shape, ctx.coordinate);
  if (local.shape != mine || local.data.size() != count_of(mine)) {
    raise(ErrorKind::RuntimeError, "reduce_partial_axes: the buffer has shape " + ints(local.shape) + " but " +
                                       to_string(target) + " gives " + ints(mine));
  }
  std::string problem;  // the first value problem
  for (std::size_t a = 0; a < target.ndim(); ++a) {
    const Placement& p = target.placement(a);
    if (!p.is_partial()) continue;
    if (a >= axis_groups.size() || axis_groups[a] == nullptr) {
      raise(ErrorKind::ValueError, "reduce_partial_axes: no communicator for axis " + std::to_string(a));
    }
    PlanStep step;
    step.axes = {a};
    step.collective = Collective::AllReduce;
    step.from = p;
    step.to = Placement::replicate();
    step.before = target;
    const Reduction r = reduction_of(step, ctx.mesh_shape);
    Wire wire(ctx.dtype, local.data, &problem);
    axis_groups[a]->all_reduce(wire.cbuf(), wire.buf(), r.op);
    bool exact = true;
    local.data = wire.values(r.divisor, exact);
    if (!exact && problem.empty()) {
      problem = "RuntimeError: executor: all_reduce " + to_string(p) + " -> R on axis " + std::to_string(a) + ": " +
                (r.divisor == 1 ? std::string("a reduced value is not an integer float64 can hold exactly")
                                : "the average is not exact (a sum is not a multiple of " + std::to_string(r.divisor) + ")");
    }
  }
  if (problem.empty()) return std::nullopt;
  return problem;
}

std::optional<std::string> first_mismatch(const LocalTensor& actual, const LocalTensor& expected) {
  if (actual.shape != expected.shape || actual.data.size() != expected.data.size()) {
    return "shape " + ints(actual.shape) + ", expected " + ints(expected.shape);
  }
  for (std::size_t i = 0; i < expected.data.size(); ++i) {
    if (actual.data[i] == expected.data[i]) continue;
    Shape index(expected.shape.size(), 0);
    std::size_t rest = i;
    for (std::size_t d = index.size(); d-- > 0;) {
      index[d] = static_cast<std::int64_t>(rest % static_cast<std::size_t>(expected.shape[d]));
      rest /= static_cast<std::size_t>(expected.shape[d]);
    }
    return "element " + ints(index) + " (flat index " + std::to_string(i) + "): expected " +
           std::to_string(expected.data[i]) + ", got " + std::to_string(actual.data[i]);
  }
  return std::nullopt;
}

}  // namespace meshloom
