// PyTorch's published planner traces and collective counts, reproduced as our own tests.
//
// Sources (see build/planner-spec.md §4 and §8): test/distributed/tensor/test_redistribute.py (newest: rows N1-N9
// and the collective-count tables; seed era: rows O1-O4), the docstring of test_force_min_cost_redistribution_plan
// (O5, a comment only), test_debug_mode.py (D1, D2) and the digest's worked cost examples.
//
// Conventions: DistributeWithDeviceOrderTest runs on a (2,2,2) mesh with a (8,8,8) float32 tensor. Newest rows use
// the comm model (devices_per_host 8; PyTorch's CPU tests see 1 device per host, which gives the same paths);
// seed rows use the fixed weights all_reduce 4, all_to_all 1, all_gather 2, reduce_scatter 2, chunk 0 and the seed's
// R -> P(sum)-only transitions. Counts are of communicating collectives (CommDebugMode's view): chunk,
// replicate_to_partial and shard_to_partial are local. Default shard orders plan greedily unless a row says graph,
// as PyTorch's redistribute() does; the flattened groups name the axes of the test's flattened meshes
// (A_B = {0,1}, A_C = {0,2}, B_C = {1,2}, A_B_C = {0,1,2}).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/state.hpp"

#include "planner_test_support.hpp"

namespace {

using namespace meshloom;
using namespace meshloom::testing;
using Counts = std::map<std::string, int>;

const Shape kMesh3{2, 2, 2};
const Shape kTensor3{8, 8, 8};
const Groups kAB{{0, 1}};
const Groups kAllGroups3{{0, 1}, {0, 2}, {1, 2}, {0, 1, 2}};

Plan plan_comm(const PlanRequest& r, std::int64_t devices_per_host = 8) {
  return plan_redistribution(r, CommCostModel(r.mesh_shape, devices_per_host));
}

Plan plan_seed(PlanRequest r) {
  r.variant = PartialVariant::Seed;
  return plan_redistribution(r, FixedCostModel(FixedWeights{4, 1, 2, 2, 0}));
}

// ---- N1-N6: newest planner, comm model ------------------------------------------------------------------------

struct TraceRow {
  const char* id;
  const char* src;
  const char* dst;
  PlannerKind planner;
  const char* trace;
};

const TraceRow kNewestRows[] = {
    {"N1", "S(0)[0]S(0)[1]S(0)[2]", "RS(0)[0]S(0)[1]", PlannerKind::Graph,
     "S(0)[0]S(0)[1]S(0)[2]->S(0)[0]S(0)[1]R->S(0)RR->RRR->RS(0)R->RS(0)[0]S(0)[1]"},
    {"N2", "S(0)[1]S(0)[0]S(0)[2]", "RS(0)[0]S(0)[1]", PlannerKind::Graph,
     "S(0)[1]S(0)[0]S(0)[2]->S(0)[1]S(0)[0]R->RS(0)R->RS(0)[0]S(0)[1]"},
    {"N3", "S(0)[1]S(0)[0]S(0)[2]", "S(0)[0]S(0)[1]R", PlannerKind::Graph,
     "S(0)[1]S(0)[0]S(0)[2]->S(0)[1]S(0)[0]R->RS(0)R->RRR->S(0)RR->S(0)[0]S(0)[1]R"},
    {"N4", "S(0)[0]S(0)[1]R", "RS(1)S(0)", PlannerKind::Graph,
     "S(0)[0]S(0)[1]R->S(0)RR->S(0)S(1)R->RS(1)R->RS(1)S(0)"},
    {"N5", "S(0)[0]S(0)[1]S(0)[2]", "S(1)[0]S(1)[1]S(1)[2]", PlannerKind::Graph,
     "S(0)[0]S(0)[1]S(0)[2]->S(0)[0]S(0)[1]R->S(0)RR->RRR->S(1)RR->S(1)[0]S(1)[1]R->S(1)[0]S(1)[1]S(1)[2]"},
    {"N6", "S(0)[0]S(0)[1]S(0)[2]", "S(1)[0]S(1)[1]S(1)[2]", PlannerKind::Greedy,
     "S(0)[0]S(0)[1]S(0)[2]->S(0)[0]S(0)[1]R->S(0)RR->S(1)RR->S(1)[0]S(1)[1]R->S(1)[0]S(1)[1]S(1)[2]"},
};

TEST(PyTorchTraces, NewestRowsWithCommModel) {
  for (const auto& row : kNewestRows) {
    SCOPED_TRACE(row.id);
    EXPECT_EQ(trace(plan_comm(request(kMesh3, kTensor3, row.src, row.dst, row.planner))), row.trace);
  }
}

TEST(PyTorchTraces, NewestRowsSamePathsWithOneDevicePerHost) {
  // PyTorch's CPU tests see one device per host: every axis crosses hosts. The digest re-simulated both.
  for (const auto& row : kNewestRows) {
    SCOPED_TRACE(row.id);
    EXPECT_EQ(trace(plan_comm(request(kMesh3, kTensor3, row.src, row.dst, row.planner), 1)), row.trace);
  }
}

TEST(PyTorchTraces, NewestRowsCosts) {
  // The digest's whole-plan costs (microseconds), accumulated in path order as PyTorch does.
  EXPECT_EQ(plan_comm(request(kMesh3, kTensor3, "S(0)[0]S(0)[1]S(0)[2]", "RS(0)[0]S(0)[1]")).cost, 21.619029989209928);
  EXPECT_EQ(plan_comm(request(kMesh3, kTensor3, "S(0)[0]S(0)[1]S(0)[2]", "RS(0)[0]S(0)[1]"), 2).cost,
            25.87686138499076);
  EXPECT_EQ(plan_comm(request(kMesh3, kTensor3, "S(0)[0]S(0)[1]R", "RS(1)S(0)")).cost, 14.41087427954853);
  EXPECT_EQ(plan_comm(request(kMesh3, kTensor3, "S(0)[0]S(0)[1]R", "RS(1)S(0)"), 2).cost, 18.64942854340242);
}

TEST(PyTorchTraces, N1StepsWithCommModel) {
  const Plan p = plan_comm(request(kMesh3, kTensor3, "S(0)[0]S(0)[1]S(0)[2]", "RS(0)[0]S(0)[1]"));
  ASSERT_EQ(p.steps.size(), 5U);
  EXPECT_EQ(p.steps[0].cost, 7.202718569887132);  // all_gather axis 2 from 8 shards
  EXPECT_EQ(p.steps[3].cost, 0.0);                 // chunk
  EXPECT_EQ(p.steps[4].cost, 0.0);
  EXPECT_EQ(comms(p), (Counts{{"all_gather", 3}}));
}

TEST(PyTorchTraces, WorkedExamplesOfTheCommModel) {
  // P(sum)P(sum)R -> S(0)[0]S(0)[1]R: two reduce_scatters.
  const Plan pp = plan_comm(request(kMesh3, kTensor3, "P(sum)P(sum)R", "S(0)[0]S(0)[1]R"));
  EXPECT_EQ(trace(pp), "P(sum)P(sum)R->S(0)P(sum)R->S(0)[0]S(0)[1]R");
  EXPECT_EQ(pp.cost, 14.416311419322795);
  // Size matters: a (1024,1024,256) tensor prefers all_to_all chains.
  const Shape big{1024, 1024, 256};
  const Plan b1 = plan_comm(request(kMesh3, big, "S(0)[0]S(0)[1]S(0)[2]", "RS(0)[0]S(0)[1]"));
  EXPECT_EQ(trace(b1),
            "S(0)[0]S(0)[1]S(0)[2]->S(0)[0]S(0)[1]S(1)->S(0)S(1)[1]S(1)[0]->S(2)S(1)[1]S(1)[0]->S(2)S(0)S(1)->"
            "S(2)S(0)[0]S(0)[1]->RS(0)[0]S(0)[1]");
  EXPECT_EQ(b1.cost, 5036.797491448118);
  const Plan b4 = plan_comm(request(kMesh3, big, "S(0)[0]S(0)[1]R", "RS(1)S(0)"));
  EXPECT_EQ(trace(b4), "S(0)[0]S(0)[1]R->S(0)[0]S(0)[1]S(2)->S(0)S(1)S(2)->RS(1)S(2)->RS(1)S(0)");
  EXPECT_EQ(b4.cost, 3586.883922462942);
}

TEST(PyTorchTraces, SingleStepCostsOfTheCommModel) {
  // The digest's step table (mesh (2,2,2), tensor (8,8,8) float32), each step planned greedily so it is issued
  // directly. {src, dst, cost with 8 devices per host, cost with 2}.
  struct Row {
    const char* src;
    const char* dst;
    double dph8;
    double dph2;
  };
  const Row rows[] = {
      {"S(0)RR", "RRR", 7.210874279548531, 9.349428543402418},
      {"RRS(0)", "RRR", 7.210874279548531, 7.210874279548531},
      {"S(0)[0]S(0)[1]S(0)[2]", "S(0)[0]S(0)[1]R", 7.202718569887132, 7.202718569887132},
      {"RS(0)R", "RS(1)R", 8.205437139774265, 10.32471427170121},
      {"P(sum)RR", "RRR", 7.821748559097063, 12.098857086804836},
      {"RRP(sum)", "RRR", 7.821748559097063, 7.821748559097063},
      {"P(sum)RR", "S(0)RR", 7.210874279548531, 9.349428543402418},
      {"RRR", "S(0)RR", 0.0, 0.0},
      {"RRR", "P(sum)RR", 0.0, 0.0},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(std::string(row.src) + " -> " + row.dst);
    const PlanRequest r = request(kMesh3, kTensor3, row.src, row.dst, PlannerKind::Greedy);
    const Plan p8 = plan_comm(r, 8);
    const Plan p2 = plan_comm(r, 2);
    ASSERT_EQ(p8.steps.size(), 1U);
    ASSERT_EQ(p2.steps.size(), 1U);
    EXPECT_EQ(p8.steps[0].cost, row.dph8);
    EXPECT_EQ(p8.cost, row.dph8);
    EXPECT_EQ(p2.steps[0].cost, row.dph2);
  }
}

// ---- N7-N9: merging on flattened meshes ---------------------------------------------------------------------

TEST(PyTorchTraces, N7DebugModeShowsOptimizedTrace) {
  PlanRequest r = request({4, 2}, {8, 8}, "S(0)[0]S(0)[1]", "RR");
  r.flattened = kAB;
  const Plan p = plan_comm(r);
  const std::string t = trace(p);
  EXPECT_EQ(t, "S(0)[0]S(0)[1]-->RR");
  EXPECT_NE(t.find("-->"), std::string::npos);
  EXPECT_EQ(t.find("S(0)R"), std::string::npos);  // the per-axis intermediate state is not printed
  EXPECT_EQ(comms(p), (Counts{{"all_gather", 1}}));
  ASSERT_EQ(p.steps.size(), 1U);
  EXPECT_TRUE(p.steps[0].merged);
  EXPECT_EQ(p.steps[0].axes, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(p.path.size(), 3U);  // the planner's path still visits S(0)RR
}

TEST(PyTorchTraces, N8OrderedAllGatherWithFlatteningMerges) {
  PlanRequest r = request(kMesh3, kTensor3, "S(0)[0]S(0)[1]S(0)[2]", "RRR");
  r.flattened = kAllGroups3;
  const Plan p = plan_comm(r);
  EXPECT_EQ(trace(p), "S(0)[0]S(0)[1]S(0)[2]-->RRR");
  EXPECT_EQ(comms(p), (Counts{{"all_gather", 1}}));
}

TEST(PyTorchTraces, N9NonDefaultOrderDoesNotMerge) {
  // The gathers come on axes 2, 0, 1: not descending, so no group is merged.
  PlanRequest r = request(kMesh3, kTensor3, "S(0)[1]S(0)[0]S(0)[2]", "RRR");
  r.flattened = kAllGroups3;
  const Plan p = plan_comm(r);
  EXPECT_EQ(trace(p), "S(0)[1]S(0)[0]S(0)[2]->S(0)[1]S(0)[0]R->RS(0)R->RRR");
  EXPECT_EQ(comms(p), (Counts{{"all_gather", 3}}));
}

// ---- O1-O5: the seed planner, fixed weights ------------------------------------------------------------------

struct SeedRow {
  const char* id;
  const char* src;
  const char* dst;
  const char* trace;
  double cost;
};

const SeedRow kSeedRows[] = {
    {"O1", "S(0)[0]S(0)[1]S(0)[2]", "RS(0)[0]S(0)[1]",
     "S(0)[0]S(0)[1]S(0)[2]->S(0)[0]S(0)[1]S(1)->S(0)S(1)[1]S(1)[0]->RS(1)[1]S(1)[0]->RS(0)S(1)->RS(0)[0]S(0)[1]", 6},
    {"O2", "S(0)[1]S(0)[0]S(0)[2]", "RS(0)[0]S(0)[1]",
     "S(0)[1]S(0)[0]S(0)[2]->S(0)[1]S(0)[0]S(1)->RS(0)S(1)->RS(0)[0]S(0)[1]", 4},
    {"O3", "S(0)[1]S(0)[0]S(0)[2]", "S(0)[0]S(0)[1]R",
     "S(0)[1]S(0)[0]S(0)[2]->S(0)[1]S(0)[0]R->S(1)S(0)R->S(1)S(2)R->S(0)S(2)R->S(0)[0]S(0)[1]R", 6},
    {"O4", "S(0)[0]S(0)[1]R", "RS(1)S(0)", "S(0)[0]S(0)[1]R->S(0)S(1)R->RS(1)R->RS(1)S(0)", 3},
    // O5 is only a comment in PyTorch's test (the digest's re-simulation of the seed).
    {"O5", "S(0)[0]S(0)[1]S(0)[2]", "S(1)[0]S(1)[1]S(1)[2]",
     "S(0)[0]S(0)[1]S(0)[2]->S(0)[0]S(0)[1]S(2)->S(0)S(2)[1]S(2)[0]->S(1)S(2)[1]S(2)[0]->S(1)[0]S(1)[1]S(2)->"
     "S(1)[0]S(1)[1]S(1)[2]",
     5},
};

TEST(PyTorchTraces, SeedRowsWithFixedWeights) {
  for (const auto& row : kSeedRows) {
    SCOPED_TRACE(row.id);
    const Plan p = plan_seed(request(kMesh3, kTensor3, row.src, row.dst));
    EXPECT_EQ(trace(p), row.trace);
    EXPECT_EQ(p.cost, row.cost);
  }
}

TEST(PyTorchTraces, SeedRowsSameWithNewestTransitions) {
  // No partial placement in these rows, so the newest variant's graph differs only by the absent R -> P(sum)
  // edges, which no cheapest path uses.
  for (const auto& row : kSeedRows) {
    SCOPED_TRACE(row.id);
    const Plan p = plan_redistribution(request(kMesh3, kTensor3, row.src, row.dst), FixedCostModel());
    EXPECT_EQ(trace(p), row.trace);
    EXPECT_EQ(p.cost, row.cost);
  }
}

TEST(PyTorchTraces, O4GreedyGivesTheSameString) {
  const Plan p = plan_seed(request(kMesh3, kTensor3, "S(0)[0]S(0)[1]R", "RS(1)S(0)", PlannerKind::Greedy));
  EXPECT_EQ(trace(p), "S(0)[0]S(0)[1]R->S(0)S(1)R->RS(1)R->RS(1)S(0)");
  EXPECT_EQ(p.cost, 3.0);
}

// ---- D1-D2: test_debug_mode.py, 1-D mesh of 8 ---------------------------------------------------------------

TEST(PyTorchTraces, DebugModeOneDimensionalTraces) {
  const Plan d1 = plan_comm(request({8}, {8, 32}, "S(0)", "R", PlannerKind::Auto));
  EXPECT_EQ(trace(d1), "S(0)->R");
  EXPECT_EQ(comms(d1), (Counts{{"all_gather", 1}}));
  const Plan d2 = plan_comm(request({8}, {8, 8}, "S(1)", "S(0)", PlannerKind::Auto));
  EXPECT_EQ(trace(d2), "S(1)->S(0)");
  EXPECT_EQ(comms(d2), (Counts{{"all_to_all", 1}}));
}

// ---- Collective-count tables ---------------------------------------------------------------------------------

TEST(PyTorchCounts, ShardDimChangeOneDimensionalMesh) {
  for (const Shape& t : {Shape{8, 8}, Shape{8, 8, 8}, Shape{8, 5}, Shape{5, 8}, Shape{5, 5}}) {
    for (const auto& [src, dst] : {std::pair{"S(0)", "S(1)"}, std::pair{"S(1)", "S(0)"}}) {
      SCOPED_TRACE(std::string(src) + " -> " + dst + " on " + std::to_string(t[0]) + "x" + std::to_string(t[1]));
      EXPECT_EQ(comms(plan_comm(request({4}, t, src, dst, PlannerKind::Auto))), (Counts{{"all_to_all", 1}}));
    }
  }
}

TEST(PyTorchCounts, ShardDimChangeTwoDimensionalMesh) {
  struct Row {
    const char* src;
    const char* dst;
    int comms;
  };
  const Row rows2[] = {{"S(0)S(1)", "S(0)[0]S(0)[1]", 1}, {"S(0)S(1)", "S(1)S(0)", 2}, {"S(0)[0]S(0)[1]", "S(1)[0]S(1)[1]", 2}};
  const Row rows3[] = {{"S(0)S(2)", "S(1)S(0)", 2}, {"S(1)[0]S(1)[1]", "S(1)S(2)", 1}};
  for (const Shape& t : {Shape{8, 8}, Shape{8, 8, 8}, Shape{8, 5}, Shape{5, 8}, Shape{5, 5}}) {
    for (const auto& row : rows2) {
      SCOPED_TRACE(std::string(row.src) + " -> " + row.dst + ", rank " + std::to_string(t.size()));
      EXPECT_EQ(total_comms(plan_comm(request({2, 2}, t, row.src, row.dst, PlannerKind::Auto))), row.comms);
    }
  }
  for (const auto& row : rows3) {
    SCOPED_TRACE(std::string(row.src) + " -> " + row.dst);
    EXPECT_EQ(total_comms(plan_comm(request({2, 2}, {8, 8, 8}, row.src, row.dst, PlannerKind::Auto))), row.comms);
  }
}

TEST(PyTorchCounts, ShardDimMultiDimMesh) {
  struct Row {
    const char* src;
    const char* dst;
    int comms;
  };
  const Row rows[] = {
      {"S(0)S(0)S(0)", "S(1)S(1)S(1)", 3}, {"S(0)S(1)S(0)", "S(1)S(0)S(0)", 3}, {"S(0)S(1)S(2)", "S(2)S(1)S(0)", 2},
      {"S(1)S(0)S(0)", "RS(0)S(0)", 1},    {"S(1)RS(0)", "RS(0)S(0)", 2},       {"S(0)S(0)S(1)", "S(0)S(1)S(2)", 2},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(std::string(row.src) + " -> " + row.dst);
    EXPECT_EQ(total_comms(plan_comm(request(kMesh3, kTensor3, row.src, row.dst, PlannerKind::Auto))), row.comms);
  }
}

TEST(PyTorchCounts, OneChunkMeshIssuesNoCollectiveOnTheSizeOneAxis) {
  // Mesh (4,1): PyTorch's executor skips every step on an axis of size 1 (its local tensor is already the
  // result). Our plans keep such steps, so the count is of steps on groups of more than one rank.
  const Shape mesh{4, 1};
  for (const char* src : {"S(0)S(1)", "S(0)R", "S(0)P(sum)"}) {
    for (const char* dst : {"S(0)[0]S(0)[1]", "S(0)S(1)", "S(0)R"}) {
      SCOPED_TRACE(std::string(src) + " -> " + dst);
      const Plan p = plan_comm(request(mesh, {64, 8}, src, dst, PlannerKind::Auto));
      int on_real_groups = 0;
      for (const auto& step : p.steps) {
        EXPECT_EQ(step.axes, (std::vector<std::size_t>{1}));  // axis 0 keeps its S(0)
        std::int64_t group = 1;
        for (const std::size_t axis : step.axes) group *= mesh[axis];
        if (communicates(step.collective) && group > 1) ++on_real_groups;
      }
      EXPECT_EQ(on_real_groups, 0);
    }
  }
}

TEST(PyTorchCounts, MultiDimRedistributeOptimizationTwoAxes) {
  struct Row {
    const char* src;
    const char* dst;
    Counts counts;
  };
  const Row rows[] = {
      {"P(sum)P(sum)", "RR", {{"all_reduce", 1}}},
      {"P(sum)P(sum)", "S(0)[0]S(0)[1]", {{"reduce_scatter", 1}}},
      {"P(sum)P(sum)", "S(0)S(1)", {{"reduce_scatter", 2}}},
      {"S(0)[0]S(0)[1]", "RR", {{"all_gather", 1}}},
      {"S(0)S(1)", "RR", {{"all_gather", 2}}},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(std::string(row.src) + " -> " + row.dst);
    PlanRequest r = request({4, 2}, {16, 16, 16}, row.src, row.dst, PlannerKind::Auto);
    r.flattened = kAB;
    EXPECT_EQ(comms(plan_comm(r)), row.counts);
  }
}

TEST(PyTorchCounts, MultiDimRedistributeOptimizationThreeAxes) {
  struct Row {
    const char* src;
    const char* dst;
    Counts counts;
  };
  const Row rows[] = {
      {"P(sum)P(sum)S(0)", "S(0)[0]S(0)[1]S(0)[2]", {{"reduce_scatter", 1}, {"all_reduce", 1}, {"all_gather", 1}}},
      {"P(sum)P(sum)P(sum)", "RRR", {{"all_reduce", 1}}},
      {"P(sum)S(0)P(sum)", "RRR", {{"all_reduce", 2}, {"all_gather", 1}}},
      {"P(sum)RP(sum)", "RRR", {{"all_reduce", 1}}},
      {"P(sum)P(sum)R", "S(0)S(1)R", {{"reduce_scatter", 2}}},
      {"P(sum)P(sum)P(sum)", "S(0)[0]S(0)[1]S(1)", {{"reduce_scatter", 2}}},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(std::string(row.src) + " -> " + row.dst);
    PlanRequest r = request(kMesh3, {16, 16, 16}, row.src, row.dst, PlannerKind::Auto);
    r.flattened = {{0, 1}, {0, 2}, {0, 1, 2}};  // A_B, A_C, A_B_C
    EXPECT_EQ(comms(plan_comm(r)), row.counts);
  }
  PlanRequest all_reduce = request(kMesh3, {16, 16, 16}, "P(sum)P(sum)P(sum)", "RRR", PlannerKind::Auto);
  all_reduce.flattened = {{0, 1, 2}};
  EXPECT_EQ(trace(plan_comm(all_reduce)), "P(sum)P(sum)P(sum)-->RRR");
}

TEST(PyTorchCounts, MixedSumAvgPartialsMergeAsSum) {
  // (avg, avg, sum) reduces as one sum over the flattened group, then divides by the avg axes' sizes (2*2).
  for (const auto& [dst, name] : {std::pair{"RRR", "all_reduce"}, std::pair{"S(0)[0]S(0)[1]S(0)[2]", "reduce_scatter"}}) {
    SCOPED_TRACE(dst);
    PlanRequest r = request(kMesh3, {16}, "P(avg)P(avg)P(sum)", dst, PlannerKind::Auto);
    r.flattened = {{0, 1, 2}};
    const Plan p = plan_comm(r);
    EXPECT_EQ(comms(p), (Counts{{name, 1}}));
    ASSERT_EQ(p.steps.size(), 1U);
    EXPECT_TRUE(p.steps[0].merged);
    EXPECT_EQ(p.steps[0].from, Placement::partial(ReduceOp::Sum));
    EXPECT_EQ(trace(p), std::string("P(avg)P(avg)P(sum)-->") + dst);
  }
  // An avg axis of size 1 divides by 1: the merged step still reads P(sum), what runs (the first step's P(avg)
  // was its label, and PyTorch, which labels it so, averages over the group of 2).
  PlanRequest r = request({2, 1}, {8}, "P(sum)P(avg)", "RR", PlannerKind::Auto);
  r.flattened = {{0, 1}};
  const Plan p = plan_comm(r);
  ASSERT_EQ(p.steps.size(), 1U);
  EXPECT_TRUE(p.steps[0].merged);
  EXPECT_EQ(p.steps[0].from, Placement::partial(ReduceOp::Sum));
}

TEST(PyTorchCounts, FlattenedReductionIntegration) {
  struct Row {
    const char* src;
    Groups groups;
    Counts counts;
    std::size_t steps;
  };
  const Row rows[] = {
      {"P(sum)P(sum)P(sum)", {{0, 1, 2}}, {{"all_reduce", 1}}, 1},
      {"P(sum)P(sum)R", {{0, 1, 2}, {0, 1}}, {{"all_reduce", 1}}, 1},
      {"P(sum)RP(sum)", {{0, 1, 2}, {0, 1}, {0, 2}}, {{"all_reduce", 1}}, 1},
      {"P(sum)S(0)P(sum)", {{0, 1, 2}, {0, 1}, {0, 2}}, {{"all_reduce", 2}, {"all_gather", 1}}, 3},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.src);
    PlanRequest r = request(kMesh3, {8, 8}, row.src, "RRR", PlannerKind::Auto);
    r.flattened = row.groups;
    const Plan p = plan_comm(r);
    EXPECT_EQ(comms(p), row.counts);
    EXPECT_EQ(p.steps.size(), row.steps);
  }
  // The unmerged row runs all_reduce, all_gather, all_reduce in that order.
  PlanRequest r = request(kMesh3, {8, 8}, "P(sum)S(0)P(sum)", "RRR", PlannerKind::Auto);
  r.flattened = {{0, 1, 2}, {0, 1}, {0, 2}};
  const Plan p = plan_comm(r);
  ASSERT_EQ(p.steps.size(), 3U);
  EXPECT_EQ(p.steps[0].collective, Collective::AllReduce);
  EXPECT_EQ(p.steps[1].collective, Collective::AllGather);
  EXPECT_EQ(p.steps[2].collective, Collective::AllReduce);
}

TEST(PyTorchCounts, UnevenFlattenedReduceScatterIsNotMerged) {
  PlanRequest r = request({2, 3}, {4, 1}, "P(sum)P(sum)", "S(0)[0]S(0)[1]", PlannerKind::Auto);
  r.flattened = kAB;
  const Plan p = plan_comm(r);
  EXPECT_EQ(comms(p), (Counts{{"reduce_scatter", 2}}));  // 4 % 6 != 0
  EXPECT_EQ(trace(p), "P(sum)P(sum)->S(0)P(sum)->S(0)[0]S(0)[1]");
  // Local sizes of dim 0 on ranks 0..5 (coordinates row-major): 1, 1, 0, 1, 1, 0.
  const std::int64_t expected[] = {1, 1, 0, 1, 1, 0};
  for (std::int64_t rank = 0; rank < 6; ++rank) {
    const Shape coord{rank / 3, rank % 3};
    EXPECT_EQ(local_shape(r.dst, r.tensor_shape, r.mesh_shape, coord), (Shape{expected[rank], 1})) << "rank " << rank;
  }
}

TEST(PyTorchCounts, ZeroSizeShards) {
  const State s0 = parse_state("S(0)");
  const std::int64_t sizes[] = {1, 1, 0, 0};
  for (std::int64_t rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(local_shape(s0, {2, 8}, {4}, {rank}), (Shape{sizes[rank], 8})) << "rank " << rank;
    EXPECT_EQ(local_shape(parse_state("S(1)"), {2, 8}, {4}, {rank}), (Shape{2, 2})) << "rank " << rank;
  }
  EXPECT_EQ(local_shape(parse_state("R"), {2, 8}, {4}, {3}), (Shape{2, 8}));
  EXPECT_EQ(comms(plan_comm(request({4}, {2, 8}, "S(0)", "R", PlannerKind::Auto))), (Counts{{"all_gather", 1}}));
  EXPECT_EQ(comms(plan_comm(request({4}, {2, 8}, "S(0)", "S(1)", PlannerKind::Auto))), (Counts{{"all_to_all", 1}}));
}

TEST(PyTorchCounts, PartialToShard) {
  for (const std::int64_t s : {12, 13, 14}) {
    for (const std::int64_t dim : {0, 1}) {
      const Shape tensor = dim == 0 ? Shape{s, 3} : Shape{3, s};
      const std::string dst = "S(" + std::to_string(dim) + ")";
      SCOPED_TRACE(dst + " of size " + std::to_string(s));
      EXPECT_EQ(comms(plan_comm(request({4}, tensor, "P(sum)", dst, PlannerKind::Auto))),
                (Counts{{"reduce_scatter", 1}}));
      const std::int64_t c = (s + 3) / 4;
      for (std::int64_t i = 0; i < 4; ++i) {
        const std::int64_t size = std::max<std::int64_t>(std::min(s, c * (i + 1)) - c * i, 0);
        EXPECT_EQ(local_shape(parse_state(dst), tensor, {4}, {i})[static_cast<std::size_t>(dim)], size) << "rank " << i;
      }
    }
  }
}

}  // namespace
