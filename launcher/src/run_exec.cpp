#include "run_exec.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <limits>
#include <utility>

#include "bench_io.hpp"
#include "sizes.hpp"
#include "meshloom/error.hpp"
#include "meshloom/plan/executor.hpp"
#include "meshloom/plan/simulator.hpp"

namespace meshloom::launcher {

namespace {

std::string coord_text(const std::vector<std::int64_t>& c) {
  std::string s = "(";
  for (std::size_t i = 0; i < c.size(); ++i) s += (i > 0 ? "," : "") + std::to_string(c[i]);
  return s + ")";
}

std::int64_t mesh_size(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (const auto s : shape) n *= s;
  return n;
}


}  // namespace

comm::Communicator* step_group(const comm::MeshGroups& groups, const std::vector<std::size_t>& axes,
                               const std::vector<std::string>& names) {
  std::string name;
  for (std::size_t k = 0; k < axes.size(); ++k) name += (k > 0 ? "_" : "") + names.at(axes[k]);
  return groups.get(name);
}

void check_fits_in_memory(const PlanRequest& request, const std::string& what, int ranks_on_host,
                          std::int64_t memory_bytes) {
  if (memory_bytes <= 0) memory_bytes = host_memory_bytes();
  if (memory_bytes <= 0) return;  // unknown: the allocation will say
  constexpr std::int64_t kValueBytes = 8;  // int64 values, float64 on the wire
  std::int64_t bytes = kValueBytes;
  std::string shape;
  bool overflow = false;
  for (const auto d : request.tensor_shape) {
    shape += (shape.empty() ? "" : "x") + std::to_string(d);
    overflow = overflow || __builtin_mul_overflow(bytes, d, &bytes);
  }
  // Only the mesh's ranks hold buffers: on a host of more, at most the mesh's size of them.
  const std::int64_t ranks =
      std::max<std::int64_t>(1, std::min<std::int64_t>(ranks_on_host, mesh_size(request.mesh_shape)));
  std::int64_t per_rank = 0;
  std::int64_t peak = 0;
  // Each product says "more than 8 EiB" from the first that passed 64 bits on.
  const bool per_rank_overflow = overflow || __builtin_mul_overflow(bytes, kRunCopies, &per_rank);
  const bool peak_overflow = per_rank_overflow || __builtin_mul_overflow(per_rank, ranks, &peak);
  if (!peak_overflow && peak <= memory_bytes) return;
  raise(ErrorKind::ValueError,
        what + ": tensor " + shape + " is " + format_size(bytes, overflow) +
            " as int64 values, and a rank may hold it whole " + std::to_string(kRunCopies) + " times over in a step (" +
            format_size(per_rank, per_rank_overflow) + ")" +
            (ranks > 1 ? ", " + std::to_string(ranks) + " ranks on this host (" + format_size(peak, peak_overflow) + ")"
                       : std::string()) +
            "; this host has " + format_size(memory_bytes) + " of memory");
}

RankBuffers rank_buffers(const PlanRequest& request, int rank) {
  RankBuffers b;
  b.in_mesh = rank >= 0 && rank < mesh_size(request.mesh_shape);
  if (b.in_mesh) {
    SimulationOptions unlimited;
    unlimited.max_elements = std::numeric_limits<std::int64_t>::max();
    b.coordinate = rank_coordinate(request.mesh_shape, static_cast<std::size_t>(rank));
    b.initial = initial_local(request, b.coordinate, unlimited);
    b.expected = expected_local(request, b.coordinate, unlimited);
  }
  return b;
}

RunOutcome execute_plan(comm::Communicator& world, const comm::MeshGroups& groups,
                        const std::vector<std::string>& names, const PlanRequest& request, const Plan& plan,
                        const RunSettings& settings) {
  return execute_plan(world, groups, names, request, plan, settings, rank_buffers(request, world.rank()));
}

RunOutcome execute_plan(comm::Communicator& world, const comm::MeshGroups& groups,
                        const std::vector<std::string>& names, const PlanRequest& request, const Plan& plan,
                        const RunSettings& settings, const RankBuffers& buffers, const StepObserver& observer) {
  RunOutcome outcome;
  const int rank = world.rank();
  const bool in_mesh = buffers.in_mesh;
  ExecutionContext ctx;
  ctx.mesh_shape = request.mesh_shape;
  ctx.tensor_shape = request.tensor_shape;
  ctx.dtype = settings.dtype;
  ctx.coordinate = buffers.coordinate;
  LocalTensor local = buffers.initial;
  const auto iterations = static_cast<std::size_t>(std::max<std::int64_t>(1, settings.iterations));
  std::string unstable;  // the first iteration that gave another result than its step's first
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& step = plan.steps[i];
    if (settings.fault) settings.fault->maybe_fire(rank, static_cast<std::int64_t>(i));
    comm::Communicator* group = in_mesh ? step_group(groups, step.axes, names) : nullptr;
    // times[it] is the whole step, times[iterations + it] the collective alone.
    std::vector<double> times(2 * iterations, 0.0);
    LocalTensor result;
    for (std::size_t it = 0; it < iterations; ++it) {
      LocalTensor copy = local;
      // The collective starts on a world barrier: every group runs it at the same time (as bench does), and no
      // rank still packing for one group takes a core from another group's collective.
      StepProfile profile;
      profile.before_collective = [&world] { world.barrier(); };
      world.barrier();
      const auto t0 = std::chrono::steady_clock::now();
      if (in_mesh) {
        execute_step(copy, step, ctx, group, &profile);
      } else if (communicates(step.collective)) {
        world.barrier();  // the members' barrier before their collective
      }
      const auto t1 = std::chrono::steady_clock::now();
      times[it] = std::chrono::duration<double>(t1 - t0).count();
      times[iterations + it] = profile.collective_s;
      // Every timed iteration is checked, not the last alone: each must give the first one's result, which the
      // verification below checks against the target.
      if (it == 0) {
        result = std::move(copy);
      } else if (in_mesh && unstable.empty() && !(copy == result)) {
        const std::optional<std::string> where = first_mismatch(copy, result);
        unstable = "step " + std::to_string(i) + " (" + std::string(to_string(step.collective)) + "), iteration " +
                   std::to_string(it + 1) + " of " + std::to_string(iterations) + ", gave another result than its " +
                   "first iteration" + (where ? ": " + *where : std::string());
      }
    }
    // The whole step: the slowest rank's time per iteration, the median over the iterations. The collective alone:
    // the timing protocol's statistics (timing.hpp: the mean over the ranks per iteration, p50 over the iterations),
    // the same figures bench and calibrate report.
    std::vector<double> slowest(iterations, 0.0);
    world.all_reduce(comm::ConstBuffer{times.data(), iterations, DType::Float64},
                     comm::Buffer{slowest.data(), slowest.size(), DType::Float64}, ReduceOp::Max);
    std::vector<double> collective_us;
    if (in_mesh) {
      for (std::size_t it = 0; it < iterations; ++it) collective_us.push_back(1e6 * times[iterations + it]);
    }
    StepTiming timing;
    timing.collective_stats =
        iteration_stats(world, collective_us, static_cast<std::int64_t>(iterations), settings.hosts);
    timing.iteration_s = std::move(slowest);
    for (const double us : timing.collective_stats.per_iteration_us) timing.collective_iteration_s.push_back(1e-6 * us);
    timing.median_s = median(timing.iteration_s);
    timing.collective_median_s = 1e-6 * timing.collective_stats.p50_us;
    outcome.total_s += timing.median_s;
    outcome.collective_total_s += timing.collective_median_s;
    if (observer) observer(i, timing);
    outcome.steps.push_back(std::move(timing));
    local = std::move(result);
  }

  // Verification (untimed). First every rank learns whether every rank holds the target's shape: a rank that
  // does not must not enter the partial reductions (its count would differ), and neither may its peers.
  const bool shape_ok = !in_mesh || local.shape == buffers.expected.shape;
  const std::int64_t shape_flag = shape_ok ? 1 : 0;
  std::int64_t all_shapes_ok = 0;
  world.all_reduce(comm::ConstBuffer{&shape_flag, 1, DType::Int64}, comm::Buffer{&all_shapes_ok, 1, DType::Int64},
                   ReduceOp::Min);
  std::string mine;
  if (in_mesh) {
    if (!shape_ok) {
      mine = *first_mismatch(local, buffers.expected);
    } else if (all_shapes_ok == 1) {
      std::vector<comm::Communicator*> axis_groups;
      for (std::size_t a = 0; a < request.mesh_shape.size(); ++a) axis_groups.push_back(step_group(groups, {a}, names));
      // Every rank runs the same reductions; an inexact average is a verification failure, not a crash.
      if (const auto problem = reduce_partial_axes(local, request.dst, ctx, axis_groups)) mine = *problem;
      if (mine.empty()) {
        if (const auto m = first_mismatch(local, buffers.expected)) mine = *m;
      }
    }  // else another rank's shape is wrong: that rank reports, this one is not checked further
    if (mine.empty()) mine = unstable;
    if (!mine.empty()) mine = "rank " + std::to_string(rank) + " " + coord_text(ctx.coordinate) + ": " + mine;
  }
  // The lowest rank with a finding.
  const std::int64_t flags[2] = {mine.empty() ? std::numeric_limits<std::int64_t>::max() : rank,
                                 static_cast<std::int64_t>(local.data.size())};
  std::int64_t first = 0;
  std::int64_t checked = 0;
  world.all_reduce(comm::ConstBuffer{&flags[0], 1, DType::Int64}, comm::Buffer{&first, 1, DType::Int64}, ReduceOp::Min);
  world.all_reduce(comm::ConstBuffer{&flags[1], 1, DType::Int64}, comm::Buffer{&checked, 1, DType::Int64}, ReduceOp::Sum);
  outcome.elements_checked = checked;
  outcome.verified = first == std::numeric_limits<std::int64_t>::max();
  if (!outcome.verified) {
    std::array<char, 1024> text{};
    if (rank == first) std::copy_n(mine.begin(), std::min(mine.size(), text.size() - 1), text.begin());
    world.broadcast(comm::Buffer{text.data(), text.size(), DType::Int8}, static_cast<int>(first));
    outcome.mismatch = std::string(text.data());
  }
  return outcome;
}

StepTiming pool_rounds(const std::vector<StepTiming>& rounds, const std::vector<std::string>& hosts) {
  if (rounds.empty()) raise(ErrorKind::ValueError, "pool_rounds: no rounds to pool");
  StepTiming pooled;
  std::vector<double> per_iteration_us;
  std::vector<std::int64_t> slowest_by_iteration;
  for (const StepTiming& r : rounds) {
    pooled.iteration_s.insert(pooled.iteration_s.end(), r.iteration_s.begin(), r.iteration_s.end());
    pooled.collective_iteration_s.insert(pooled.collective_iteration_s.end(), r.collective_iteration_s.begin(),
                                         r.collective_iteration_s.end());
    const IterationStats& s = r.collective_stats;
    per_iteration_us.insert(per_iteration_us.end(), s.per_iteration_us.begin(), s.per_iteration_us.end());
    slowest_by_iteration.insert(slowest_by_iteration.end(), s.slowest_by_iteration.begin(),
                                s.slowest_by_iteration.end());
  }
  pooled.collective_stats = summarize(per_iteration_us);
  pooled.collective_stats.per_iteration_us = std::move(per_iteration_us);
  pooled.collective_stats.slowest_by_iteration = std::move(slowest_by_iteration);
  name_straggler(pooled.collective_stats, hosts);
  pooled.median_s = median(pooled.iteration_s);
  pooled.collective_median_s = 1e-6 * pooled.collective_stats.p50_us;
  return pooled;
}

}  // namespace meshloom::launcher
