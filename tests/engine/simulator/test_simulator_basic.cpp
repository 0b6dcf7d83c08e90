// Hand-picked plans executed on real data: every collective, even and uneven shards, merged steps, PyTorch's known
// uneven-shard bugs, and corrupted plans that must fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "meshloom/error.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/simulator.hpp"

namespace meshloom {
namespace {

PlanRequest request(std::vector<std::int64_t> mesh, std::vector<std::int64_t> tensor, const char* src, const char* dst,
                    std::vector<std::vector<std::size_t>> flattened = {}) {
  PlanRequest r;
  r.mesh_shape = std::move(mesh);
  r.tensor_shape = std::move(tensor);
  r.src = parse_state(src);
  r.dst = parse_state(dst);
  r.flattened = std::move(flattened);
  return r;
}

Plan plan_of(const PlanRequest& r) { return plan_redistribution(r, FixedCostModel()); }

// Plans with the graph planner (fixed weights) and simulates; returns the result.
SimulationResult run(const PlanRequest& r, Padding padding = Padding::Exact) {
  SimulationOptions o;
  o.padding = padding;
  return simulate(r, plan_of(r), o);
}

std::vector<std::int64_t> shape_of(const Distribution& d, std::size_t rank) { return d.ranks[rank].shape; }

// ---- distributions ------------------------------------------------------------------------------------------

TEST(SimulatorDistribution, RankCoordinatesAreRowMajor) {
  EXPECT_EQ(rank_coordinate({2, 2, 2}, 5), (std::vector<std::int64_t>{1, 0, 1}));
  EXPECT_EQ(rank_index({2, 3}, {1, 2}), 5U);
  for (std::size_t r = 0; r < 24; ++r) EXPECT_EQ(rank_index({2, 3, 4}, rank_coordinate({2, 3, 4}, r)), r);
}

TEST(SimulatorDistribution, ShardsFollowTorchChunkInShardOrder) {
  // 5 rows on 4 ranks: 2, 2, 1, 0.
  const auto d = initial_distribution({4}, {5, 10}, parse_state("S(0)"));
  EXPECT_EQ(shape_of(d, 0), (std::vector<std::int64_t>{2, 10}));
  EXPECT_EQ(shape_of(d, 2), (std::vector<std::int64_t>{1, 10}));
  EXPECT_EQ(shape_of(d, 3), (std::vector<std::int64_t>{0, 10}));
  EXPECT_EQ(d.ranks[2].data.front(), 41);  // row 4, col 0: flat 40, value 41
  // Dim 0 of 5 split by axis 1 first, then axis 0: rank (a0, a1) = (1, 0) holds axis-1 chunk 0 (rows 0..2),
  // then its axis-0 chunk 1 (row 2).
  const auto o = initial_distribution({2, 2}, {5, 3}, parse_state("S(0)[1]S(0)[0]"));
  EXPECT_EQ(o.ranks[rank_index({2, 2}, {1, 0})].shape, (std::vector<std::int64_t>{1, 3}));
  EXPECT_EQ(o.ranks[rank_index({2, 2}, {1, 0})].data, (std::vector<std::int64_t>{7, 8, 9}));
  // Default order: (1, 0) holds axis-0 chunk 1 (rows 3..4), then its axis-1 chunk 0 (row 3).
  const auto e = initial_distribution({2, 2}, {5, 3}, parse_state("S(0)S(0)"));
  EXPECT_EQ(e.ranks[rank_index({2, 2}, {1, 0})].data, (std::vector<std::int64_t>{10, 11, 12}));
  EXPECT_TRUE(verify_distribution(o, {5, 3}, parse_state("S(0)[1]S(0)[0]")).ok);
  EXPECT_FALSE(verify_distribution(o, {5, 3}, parse_state("S(0)S(0)")).ok);
}

TEST(SimulatorDistribution, PartialSplitsAreNontrivialAndReduceExactly) {
  for (const char* s : {"P(sum)", "P(avg)", "P(max)", "P(min)", "P(product)", "P(sum)P(avg)", "P(avg)RP(max)",
                        "P(max)P(min)", "P(product)P(product)", "P(sum)S(0)P(min)", "P(sum)P(sum)P(sum)"}) {
    const State state = parse_state(s);
    std::vector<std::int64_t> mesh(state.ndim(), 3);
    const auto d = initial_distribution(mesh, {4, 5}, state);
    const auto v = verify_distribution(d, {4, 5}, state);
    EXPECT_TRUE(v.ok) << s << ": " << v.error;
    // No rank holds the plain values: the reduction is needed.
    const auto plain = expected_distribution(mesh, {4, 5}, state);
    std::size_t differing = 0;
    for (std::size_t r = 0; r < d.ranks.size(); ++r) differing += d.ranks[r].data != plain.ranks[r].data ? 1U : 0U;
    EXPECT_GT(differing, d.ranks.size() / 3) << s;
  }
  // Sum addends: nonzero everywhere.
  const auto sum = initial_distribution({4}, {3, 3}, parse_state("P(sum)"));
  for (const auto& t : sum.ranks) {
    for (auto x : t.data) EXPECT_NE(x, 0);
  }
}

TEST(SimulatorDistribution, ProductMixedWithAnotherOpIsRefused) {
  EXPECT_THROW((void)initial_distribution({2, 2}, {3}, parse_state("P(product)P(sum)")), Error);
}

TEST(SimulatorDistribution, SizeGuard) {
  SimulationOptions o;
  o.max_elements = 1000;
  EXPECT_THROW((void)initial_distribution({4, 4}, {10, 10}, parse_state("RR"), o), Error);
  try {
    (void)simulate(request({64, 65}, {128, 128}, "RR", "S(0)S(1)"), Plan{}, {});
    FAIL() << "expected a ValueError";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ValueError);
    EXPECT_NE(e.message().find("limit"), std::string::npos) << e.message();
  }
}

// ---- single collectives ---------------------------------------------------------------------------------------

TEST(SimulatorCollectives, ShardToReplicateOfA5x10Tensor) {
  for (std::int64_t n : {2, 3, 4, 6}) {
    const auto r = request({n}, {5, 10}, "S(0)", "R");
    const Plan p = plan_of(r);
    ASSERT_EQ(p.steps.size(), 1U);
    EXPECT_EQ(p.steps[0].collective, Collective::AllGather);
    for (auto padding : {Padding::Exact, Padding::Torch}) {
      const auto res = run(r, padding);
      EXPECT_TRUE(res.ok) << n << ": " << res.error;
      EXPECT_EQ(res.elements_checked, static_cast<std::size_t>(50 * n));
    }
  }
  EXPECT_TRUE(run(request({2, 2}, {5, 10}, "S(0)S(1)", "RR")).ok);
  EXPECT_TRUE(run(request({2, 2}, {5, 10}, "S(0)S(0)", "RR"), Padding::Torch).ok);
}

TEST(SimulatorCollectives, EveryCollective) {
  struct Case {
    std::vector<std::int64_t> mesh;
    std::vector<std::int64_t> tensor;
    const char* src;
    const char* dst;
    Collective expect;
  };
  const std::vector<Case> cases = {
      {{4}, {5, 3}, "S(0)", "R", Collective::AllGather},
      {{3}, {5, 7}, "S(0)", "S(1)", Collective::AllToAll},
      {{4}, {5, 7}, "S(1)", "S(0)", Collective::AllToAll},
      {{3}, {2, 2}, "P(sum)", "R", Collective::AllReduce},
      {{3}, {2, 2}, "P(avg)", "R", Collective::AllReduce},
      {{3}, {2, 2}, "P(max)", "R", Collective::AllReduce},
      {{3}, {2, 2}, "P(min)", "R", Collective::AllReduce},
      {{4}, {2, 2}, "P(product)", "R", Collective::AllReduce},
      {{4}, {5, 3}, "P(sum)", "S(0)", Collective::ReduceScatter},
      {{3}, {5, 3}, "P(max)", "S(1)", Collective::ReduceScatter},
      {{4}, {7, 2}, "R", "S(0)", Collective::Chunk},
      {{3}, {2, 2}, "R", "P(sum)", Collective::ReplicateToPartial},
      {{3}, {2, 2}, "R", "P(avg)", Collective::ReplicateToPartial},
      {{3}, {2, 2}, "R", "P(max)", Collective::ReplicateToPartial},
      {{3}, {2, 2}, "R", "P(min)", Collective::ReplicateToPartial},
      {{3}, {2, 2}, "R", "P(product)", Collective::ReplicateToPartial},
      {{2, 2}, {5, 3}, "S(0)S(1)", "RP(sum)", Collective::ShardToPartial},
  };
  for (const auto& c : cases) {
    const auto r = request(c.mesh, c.tensor, c.src, c.dst);
    const Plan p = plan_of(r);
    ASSERT_FALSE(p.steps.empty()) << c.src << " -> " << c.dst;
    EXPECT_TRUE(std::any_of(p.steps.begin(), p.steps.end(), [&](const PlanStep& s) { return s.collective == c.expect; }))
        << c.src << " -> " << c.dst << ": " << trace(p);
    for (auto padding : {Padding::Exact, Padding::Torch}) {
      const auto res = run(r, padding);
      EXPECT_TRUE(res.ok) << c.src << " -> " << c.dst << ": " << res.error;
    }
  }
}

TEST(SimulatorCollectives, AllToAllMovesPiecesExplicitly) {
  // Mesh (2), tensor (2, 3) S(0) -> S(1): rank 0 holds row 0 = 1 2 3, rank 1 row 1 = 4 5 6. Rank 0 receives
  // columns 0..1 of both rows, rank 1 column 2.
  Distribution d = initial_distribution({2}, {2, 3}, parse_state("S(0)"));
  const auto r = request({2}, {2, 3}, "S(0)", "S(1)");
  apply_step(d, plan_of(r).steps.at(0));
  EXPECT_EQ(d.ranks[0].shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(d.ranks[0].data, (std::vector<std::int64_t>{1, 2, 4, 5}));
  EXPECT_EQ(d.ranks[1].data, (std::vector<std::int64_t>{3, 6}));
}

TEST(SimulatorCollectives, ShardToPartialZeroFills) {
  Distribution d = initial_distribution({3}, {4}, parse_state("S(0)"));
  PlanStep s;
  s.axes = {0};
  s.collective = Collective::ShardToPartial;
  s.from = Placement::shard(0);
  s.to = Placement::partial();
  apply_step(d, s);
  EXPECT_EQ(d.ranks[0].data, (std::vector<std::int64_t>{1, 2, 0, 0}));
  EXPECT_EQ(d.ranks[1].data, (std::vector<std::int64_t>{0, 0, 3, 4}));
  EXPECT_EQ(d.ranks[2].data, (std::vector<std::int64_t>{0, 0, 0, 0}));
  EXPECT_TRUE(verify_distribution(d, {4}, parse_state("P(sum)")).ok);
}

TEST(SimulatorCollectives, PlannedTracesOfTheSpecVerify) {
  // planner-spec.md §8, mesh (2,2,2), tensor (8,8,8), and their uneven (7,5,3) variants.
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"S(0)[0]S(0)[1]S(0)[2]", "RS(0)[0]S(0)[1]"}, {"S(0)[1]S(0)[0]S(0)[2]", "RS(0)[0]S(0)[1]"},
      {"S(0)[1]S(0)[0]S(0)[2]", "S(0)[0]S(0)[1]R"}, {"S(0)[0]S(0)[1]R", "RS(1)S(0)"},
      {"S(0)S(0)S(0)", "S(1)S(1)S(1)"},            {"S(0)S(1)S(2)", "S(2)S(1)S(0)"},
      {"P(sum)P(sum)S(0)", "S(0)S(0)S(0)"},         {"P(sum)S(0)P(sum)", "RRR"},
  };
  for (const auto& [src, dst] : cases) {
    for (const std::vector<std::int64_t>& tensor : {std::vector<std::int64_t>{8, 8, 8}, std::vector<std::int64_t>{7, 5, 3}}) {
      for (auto planner : {PlannerKind::Graph, PlannerKind::Greedy}) {
        auto r = request({2, 2, 2}, tensor, src, dst, {{0, 1}, {0, 2}, {1, 2}, {0, 1, 2}});
        r.planner = planner;
        // Greedy refuses non-default shard orders (see the property test).
        if (planner == PlannerKind::Greedy && !(r.src.has_default_shard_order() && r.dst.has_default_shard_order())) continue;
        const auto plan = plan_redistribution(r, CommCostModel(r.mesh_shape, 8));
        const auto res = simulate(r, plan);
        EXPECT_TRUE(res.ok) << src << " -> " << dst << " " << trace(plan) << ": " << res.error;
      }
    }
  }
}

// ---- merged steps -----------------------------------------------------------------------------------------------

TEST(SimulatorMerged, AllReduceReduceScatterAndAllGatherOnFlattenedAxes) {
  struct Case {
    const char* src;
    const char* dst;
    std::size_t merged_steps;
  };
  for (const Case& c : std::vector<Case>{{"P(sum)P(sum)P(sum)", "RRR", 1},
                                         {"P(avg)P(avg)P(sum)", "RRR", 1},
                                         {"P(avg)P(avg)P(sum)", "S(0)S(0)S(0)", 1},
                                         {"P(max)P(max)R", "RRR", 1},
                                         {"P(sum)P(sum)R", "S(0)S(1)R", 0},
                                         {"S(0)S(0)S(0)", "RRR", 1},
                                         {"P(sum)P(sum)S(0)", "S(0)S(0)S(0)", 2}}) {
    const auto r = request({2, 2, 2}, {16, 16}, c.src, c.dst, {{0, 1}, {0, 2}, {1, 2}, {0, 1, 2}});
    const Plan p = plan_of(r);
    const auto merged = static_cast<std::size_t>(
        std::count_if(p.steps.begin(), p.steps.end(), [](const PlanStep& s) { return s.merged; }));
    EXPECT_GE(merged, std::min<std::size_t>(c.merged_steps, 1)) << c.src << " -> " << c.dst << ": " << trace(p);
    const auto res = simulate(r, p);
    EXPECT_TRUE(res.ok) << c.src << " -> " << c.dst << " " << trace(p) << ": " << res.error;
  }
}

TEST(SimulatorMerged, MixedSumAvgValueIsScaledOnce) {
  // PyTorch's test_mixed_sum_avg_partial_numerics: (avg, avg, sum) on (2,2,2) reduces as sum / 4.
  const auto r = request({2, 2, 2}, {16}, "P(avg)P(avg)P(sum)", "RRR", {{0, 1, 2}});
  const Plan p = plan_of(r);
  ASSERT_EQ(p.steps.size(), 1U);
  EXPECT_TRUE(p.steps[0].merged);
  EXPECT_EQ(p.steps[0].from, Placement::partial(ReduceOp::Sum));  // printed as P(sum), scaled by the avg axes
  EXPECT_TRUE(simulate(r, p).ok);
  // Dropping the scale (reading every axis as sum) must fail: the merged step's ops come from `before`.
  Plan wrong = p;
  wrong.steps[0].before = parse_state("P(sum)P(sum)P(sum)");
  const auto res = simulate(r, wrong);
  EXPECT_FALSE(res.ok);
}

// PyTorch's known bug (redistribute.md "Uneven shards"): a (5,3) tensor on a 2x2 mesh, S(0)S(0) -> RR with a
// flattened group. PyTorch merges the two all_gathers into one (it checks no divisibility for all_gather) and
// its padded all_gather pads each piece to ceil(5/4) = 2 rows, but the pieces are 2,1,1,1 rows (the nested
// split), not torch.chunk(5, 4) = 2,2,1,0: rows 0,1 | 2,pad | 3,pad | 4,pad cut to 5 rows puts padding in row 3.
// Meshloom's planner does not merge there; the merged plan PyTorch would run, built by hand, shows the corruption.
TEST(SimulatorMerged, FlattenedAllGatherOfA5x3TensorOn2x2) {
  const auto r = request({2, 2}, {5, 3}, "S(0)S(0)", "RR", {{0, 1}});
  const Plan p = plan_of(r);
  ASSERT_EQ(p.steps.size(), 2U);
  EXPECT_FALSE(p.steps[0].merged || p.steps[1].merged);
  EXPECT_EQ(trace(p), "S(0)[0]S(0)[1]->S(0)R->RR");
  EXPECT_TRUE(run(r, Padding::Torch).ok);  // one axis at a time, PyTorch's padding is harmless
  Plan pytorch = p;
  PlanStep merged = p.steps[0];
  merged.axes = {0, 1};
  merged.after = p.steps[1].after;
  merged.merged = true;
  pytorch.steps = {merged};
  EXPECT_EQ(trace(pytorch), "S(0)[0]S(0)[1]-->RR");
  SimulationOptions exact;
  exact.padding = Padding::Exact;
  EXPECT_TRUE(simulate(r, pytorch, exact).ok);  // a variable-size all_gather gets it right
  SimulationOptions padded;
  padded.padding = Padding::Torch;
  const auto torch = simulate(r, pytorch, padded);
  EXPECT_FALSE(torch.ok);
  EXPECT_NE(torch.error.find("rank 0 (0,0): element [3,0] (global [3,0]): expected 10, got " +
                             std::to_string(kPaddingValue)), std::string::npos) << torch.error;
  // Even sizes merge, and are right with padding too.
  const auto even = request({2, 2}, {8, 3}, "S(0)S(0)", "RR", {{0, 1}});
  EXPECT_EQ(trace(plan_of(even)), "S(0)[0]S(0)[1]-->RR");
  EXPECT_TRUE(run(even, Padding::Torch).ok);
}

// ---- corrupted plans must fail ----------------------------------------------------------------------------------

TEST(SimulatorNegative, AllGatherOnTheOuterAxisOfTheShardOrderFails) {
  const auto r = request({2, 2}, {8, 3}, "S(0)S(0)", "RR");
  Plan p = plan_of(r);
  ASSERT_EQ(p.steps.size(), 2U);
  ASSERT_EQ(p.steps[0].axes, std::vector<std::size_t>{1});
  EXPECT_TRUE(simulate(r, p).ok);
  std::swap(p.steps[0], p.steps[1]);  // gather the outer axis 0 first
  const auto res = simulate(r, p);
  EXPECT_FALSE(res.ok);
  EXPECT_EQ(res.steps_executed, 2U);
  EXPECT_NE(res.error.find("after step 2 of 2: rank 0 (0,0): element [2,0] (global [2,0]): expected 7, got 13"),
            std::string::npos)
      << res.error;
}

TEST(SimulatorNegative, WrongOrMissingStepsFail) {
  const auto r = request({2, 2}, {6, 4}, "P(sum)S(1)", "S(0)R");
  const Plan good = plan_of(r);
  ASSERT_TRUE(simulate(r, good).ok);
  // Drop the last step: shapes differ.
  Plan shorter = good;
  shorter.steps.pop_back();
  const auto a = simulate(r, shorter);
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.error.find("shape"), std::string::npos) << a.error;
  // A reduce that pretends to be local: replace the collective by a chunk (its from/to no longer match).
  Plan wrong = good;
  for (auto& s : wrong.steps) {
    if (s.collective == Collective::ReduceScatter || s.collective == Collective::AllReduce) s.collective = Collective::Chunk;
  }
  const auto b = simulate(r, wrong);
  EXPECT_FALSE(b.ok);
  EXPECT_NE(b.error.find("does not turn"), std::string::npos) << b.error;
  // P(sum) -> S(0) by a chunk of the addends (from R, as if already reduced) gives wrong values.
  const auto rr = request({3}, {6}, "P(sum)", "S(0)");
  PlanStep chunk;
  chunk.axes = {0};
  chunk.collective = Collective::Chunk;
  chunk.from = Placement::replicate();
  chunk.to = Placement::shard(0);
  Plan fake;
  fake.steps = {chunk};
  EXPECT_FALSE(simulate(rr, fake).ok);
}

TEST(SimulatorNegative, ReduceScatterWithoutDivisibilityWouldBeWrongIfMerged) {
  // A merged reduce_scatter on a dim that does not divide is wrong: flattened torch.chunk(5, 4) = 2,2,1,0 while
  // nested chunks give 2,1,1,1. The planner refuses to merge it; a plan that merges it anyway must fail.
  const auto r = request({2, 2}, {5}, "P(sum)P(sum)", "S(0)S(0)", {{0, 1}});
  const Plan p = plan_of(r);
  ASSERT_EQ(p.steps.size(), 2U);  // not merged
  EXPECT_TRUE(simulate(r, p).ok);
  Plan forced = p;
  forced.steps = {p.steps[0]};
  forced.steps[0].axes = {0, 1};
  forced.steps[0].merged = true;
  forced.steps[0].after = p.steps[1].after;
  const auto res = simulate(r, forced);
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.error.find("shape"), std::string::npos) << res.error;
}

}  // namespace
}  // namespace meshloom
