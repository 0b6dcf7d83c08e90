// Uneven shards (torch.chunk semantics) and the shapes a plan reports: chunk_extent, local_shape (with the axes a
// collective runs on left out) and each step's logical_shape and bytes, at the request's coordinate.
//
// chunk_extent(s, n, i) follows PyTorch's Shard.local_shard_size_and_offset: n | s gives (s/n, i*s/n); otherwise
// chunks are ceil(s/n) long, trailing ones short or empty, and an empty chunk's offset is s.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/state.hpp"

#include "planner_test_support.hpp"

namespace {

using namespace meshloom;
using namespace meshloom::testing;
using Extents = std::vector<ChunkExtent>;

Extents chunks(std::int64_t size, std::int64_t parts) {
  Extents out;
  for (std::int64_t i = 0; i < parts; ++i) out.push_back(chunk_extent(size, parts, i));
  return out;
}

TEST(ChunkExtent, DigestExamples) {
  EXPECT_EQ(chunks(5, 4), (Extents{{2, 0}, {2, 2}, {1, 4}, {0, 5}}));
  EXPECT_EQ(chunks(10, 4), (Extents{{3, 0}, {3, 3}, {3, 6}, {1, 9}}));
  EXPECT_EQ(chunks(9, 4), (Extents{{3, 0}, {3, 3}, {3, 6}, {0, 9}}));
  EXPECT_EQ(chunks(2, 4), (Extents{{1, 0}, {1, 1}, {0, 2}, {0, 2}}));
  EXPECT_EQ(chunks(0, 4), (Extents{{0, 0}, {0, 0}, {0, 0}, {0, 0}}));  // the even branch
}

TEST(ChunkExtent, EvenSplits) {
  EXPECT_EQ(chunks(8, 4), (Extents{{2, 0}, {2, 2}, {2, 4}, {2, 6}}));
  EXPECT_EQ(chunks(7, 1), (Extents{{7, 0}}));
}

TEST(ChunkExtent, ChunksTileTheDim) {
  for (std::int64_t s = 1; s <= 40; ++s) {
    for (std::int64_t n = 1; n <= 9; ++n) {
      std::int64_t covered = 0;
      for (const auto& c : chunks(s, n)) {
        ASSERT_GE(c.size, 0);
        if (c.size > 0) {
          ASSERT_EQ(c.offset, covered) << s << " split " << n;
        } else {
          ASSERT_EQ(c.offset, s) << s << " split " << n;
        }
        covered += c.size;
      }
      ASSERT_EQ(covered, s) << s << " split " << n;
    }
  }
}

TEST(LocalShape, AppliesTheSplitsInShardOrder) {
  // A dim of 5 split by axes of sizes 2 then 2: 5 -> (3, 2) -> (2, 1 | 1, 1).
  const State s = parse_state("S(0)[0]S(0)[1]");
  EXPECT_EQ(local_shape(s, {5}, {2, 2}, {0, 0}), (Shape{2}));
  EXPECT_EQ(local_shape(s, {5}, {2, 2}, {0, 1}), (Shape{1}));
  EXPECT_EQ(local_shape(s, {5}, {2, 2}, {1, 0}), (Shape{1}));
  EXPECT_EQ(local_shape(s, {5}, {2, 2}, {1, 1}), (Shape{1}));
  // Axis 1 first: on a (2,3) mesh 7 -> (3, 2, 2) by axis 1, then split by axis 0.
  const State t = parse_state("S(0)[1]S(0)[0]");
  EXPECT_EQ(local_shape(t, {7}, {2, 3}, {0, 0}), (Shape{2}));
  EXPECT_EQ(local_shape(t, {7}, {2, 3}, {1, 0}), (Shape{1}));
  EXPECT_EQ(local_shape(t, {7}, {2, 3}, {1, 2}), (Shape{0}));  // 7 -> 1 by axis 1, then 1 -> (1, 0)
  EXPECT_EQ(local_shape(parse_state("S(0)[0]S(0)[1]"), {7}, {2, 3}, {1, 2}), (Shape{1}));  // 7 -> 3 -> 1
}

TEST(LocalShape, ExceptLeavesAxesOut) {
  // The digest's example: dim of 5 sharded by axes (0,1) of sizes (2,2); a step on axis 1 sees 3 at coord0=0 and 2
  // at coord0=1.
  const State s = parse_state("S(0)[0]S(0)[1]");
  EXPECT_EQ(local_shape(s, {5}, {2, 2}, {0, 0}, {1}), (Shape{3}));
  EXPECT_EQ(local_shape(s, {5}, {2, 2}, {1, 0}, {1}), (Shape{2}));
  EXPECT_EQ(local_shape(s, {5}, {2, 2}, {1, 1}, {1}), (Shape{2}));
  EXPECT_EQ(local_shape(s, {5}, {2, 2}, {1, 1}, {0}), (Shape{2}));  // axis 1 alone splits 5 into 3, 2
  EXPECT_EQ(local_shape(s, {5}, {2, 2}, {1, 1}, {0, 1}), (Shape{5}));
  EXPECT_EQ(local_shape(parse_state("S(1)RS(0)"), {6, 10}, {2, 3, 2}, {1, 2, 1}, {2}), (Shape{6, 5}));
}

TEST(StepShapes, UnevenStepAtNonZeroCoordinates) {
  // S(0)[0]S(0)[1] -> S(0)R on a (2,2) mesh, tensor (5): one all_gather on axis 1.
  struct Row {
    Shape coordinate;
    std::int64_t logical;
    std::int64_t local;
  };
  const Row rows[] = {{{0, 0}, 3, 2}, {{0, 1}, 3, 1}, {{1, 0}, 2, 1}, {{1, 1}, 2, 1}};
  for (const auto& row : rows) {
    SCOPED_TRACE(::testing::PrintToString(row.coordinate));
    PlanRequest r = request({2, 2}, {5}, "S(0)[0]S(0)[1]", "S(0)R");
    r.coordinate = row.coordinate;
    const Plan p = plan_redistribution(r, FixedCostModel());
    ASSERT_EQ(p.steps.size(), 1U);
    EXPECT_EQ(p.steps[0].collective, Collective::AllGather);
    EXPECT_EQ(p.steps[0].logical_shape, (Shape{row.logical}));
    EXPECT_EQ(p.steps[0].bytes, row.local * 4);
  }
}

TEST(StepShapes, ContractExample) {
  // plan.hpp's example, mesh (2,2,2), tensor (8,8,8) float32: S(0)[0]S(0)[1]R -> RS(0)R by two gathers and a chunk.
  // The greedy planner issues exactly these steps; with fixed weights they cost 2, 2, 0.
  const PlanRequest r = request({2, 2, 2}, {8, 8, 8}, "S(0)[0]S(0)[1]R", "RS(0)R", PlannerKind::Greedy);
  const Plan p = plan_redistribution(r, FixedCostModel());
  EXPECT_EQ(trace(p), "S(0)[0]S(0)[1]R->S(0)RR->RRR->RS(0)R");
  EXPECT_EQ(p.cost, 4.0);
  ASSERT_EQ(p.steps.size(), 3U);
  const struct {
    std::size_t axis;
    Collective collective;
    Shape logical;
    std::int64_t bytes;
    double cost;
  } rows[] = {
      {1, Collective::AllGather, {4, 8, 8}, 512, 2},
      {0, Collective::AllGather, {8, 8, 8}, 1024, 2},
      {1, Collective::Chunk, {8, 8, 8}, 2048, 0},
  };
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(p.steps[i].axes, (std::vector<std::size_t>{rows[i].axis}));
    EXPECT_EQ(p.steps[i].collective, rows[i].collective);
    EXPECT_EQ(p.steps[i].logical_shape, rows[i].logical);
    EXPECT_EQ(p.steps[i].bytes, rows[i].bytes);
    EXPECT_EQ(p.steps[i].cost, rows[i].cost);
    EXPECT_FALSE(p.steps[i].merged);
  }
  EXPECT_EQ(p.steps[0].from, Placement::shard(0));
  EXPECT_EQ(p.steps[0].to, Placement::replicate());
  EXPECT_EQ(to_string(p.steps[0].before), "S(0)[0]S(0)[1]R");
  EXPECT_EQ(to_string(p.steps[0].after), "S(0)RR");
  // The graph planner with the comm model takes the same path, with the same shapes.
  PlanRequest g = r;
  g.planner = PlannerKind::Graph;
  const Plan c = plan_redistribution(g, CommCostModel(g.mesh_shape, 8));
  EXPECT_EQ(trace(c), trace(p));
  ASSERT_EQ(c.steps.size(), 3U);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(c.steps[i].logical_shape, p.steps[i].logical_shape);
    EXPECT_EQ(c.steps[i].bytes, p.steps[i].bytes);
  }
  // With fixed weights the graph finds a path of the same cost 4 first: an all_to_all (1) moves axis 1 to dim 1,
  // pushing RS(1)R at cost 3, whose all_to_all back pushes the target at 4 before RRR (popped at 4) can.
  const Plan f = plan_redistribution(g, FixedCostModel());
  EXPECT_EQ(trace(f), "S(0)[0]S(0)[1]R->S(0)S(1)R->RS(1)R->RS(0)R");
  EXPECT_EQ(f.cost, 4.0);
}

TEST(StepShapes, UnevenGatherOfAFiveByTenTensor) {
  // PyTorch's known Shard -> Replicate bug lives here: (5,10) on 4 ranks is 2,2,1,0 rows.
  const std::int64_t rows[] = {2, 2, 1, 0};
  for (std::int64_t rank = 0; rank < 4; ++rank) {
    PlanRequest r = request({4}, {5, 10}, "S(0)", "R");
    r.coordinate = {rank};
    r.itemsize = 2;
    const Plan p = plan_redistribution(r, FixedCostModel());
    ASSERT_EQ(p.steps.size(), 1U);
    EXPECT_EQ(p.steps[0].logical_shape, (Shape{5, 10}));
    EXPECT_EQ(p.steps[0].bytes, rows[rank] * 10 * 2) << "rank " << rank;
  }
}

TEST(StepShapes, MergedStepTakesTheLargestLogicalShape) {
  // N7: (4,2) mesh, (8,8) tensor; gathers on axis 1 (logical [2,8]) then axis 0 ([8,8]) merge into one.
  PlanRequest r = request({4, 2}, {8, 8}, "S(0)[0]S(0)[1]", "RR");
  r.flattened = {{0, 1}};
  const Plan p = plan_redistribution(r, CommCostModel(r.mesh_shape, 8));
  ASSERT_EQ(p.steps.size(), 1U);
  EXPECT_TRUE(p.steps[0].merged);
  EXPECT_EQ(p.steps[0].logical_shape, (Shape{8, 8}));
  EXPECT_EQ(p.steps[0].bytes, 1 * 8 * 4);  // what each rank holds before the merged gather
  EXPECT_EQ(to_string(p.steps[0].before), "S(0)[0]S(0)[1]");
  EXPECT_EQ(to_string(p.steps[0].after), "RR");
  EXPECT_EQ(p.steps[0].cost, p.cost);  // the merged step carries the sum of its members' costs
}

}  // namespace
