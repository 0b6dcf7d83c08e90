// PlanCache returns the plan plan_redistribution would, plans each request once, drops the oldest plans when
// full, never caches a failure, and serves threads concurrently.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "meshloom/error.hpp"
#include "meshloom/plan/planner.hpp"

namespace meshloom {
namespace {

PlanRequest request(const char* src, const char* dst) {
  PlanRequest r;
  r.mesh_shape = {2, 2, 2};
  r.tensor_shape = {8, 8, 8};
  r.src = parse_state(src);
  r.dst = parse_state(dst);
  return r;
}

TEST(PlanCache, HitReturnsTheSamePlanAsPlanning) {
  const FixedCostModel model;
  PlanCache cache(model);
  const auto r = request("S(0)[0]S(0)[1]R", "RS(0)R");
  const auto first = cache.plan(r);
  const auto second = cache.plan(r);
  EXPECT_EQ(first.get(), second.get());  // the very same cached object
  EXPECT_EQ(*first, plan_redistribution(r, model));
  EXPECT_EQ(cache.hits(), 1U);
  EXPECT_EQ(cache.misses(), 1U);
}

TEST(PlanCache, EveryFieldOfTheRequestIsPartOfTheKey) {
  const FixedCostModel model;
  PlanCache cache(model);
  auto r = request("S(0)RR", "RRS(0)");
  (void)cache.plan(r);
  std::vector<PlanRequest> variants(8, r);
  variants[0].planner = PlannerKind::Greedy;
  variants[1].variant = PartialVariant::Seed;
  variants[2].itemsize = 2;
  variants[3].coordinate = {1, 0, 0};
  variants[4].flattened = {{0, 1}};
  variants[5].tensor_shape = {8, 8, 9};
  variants[6].dst = parse_state("RS(0)R");
  variants[7].state_budget = 100;
  for (const auto& v : variants) (void)cache.plan(v);
  EXPECT_EQ(cache.misses(), 9U);
  EXPECT_EQ(cache.hits(), 0U);
  EXPECT_EQ(cache.size(), 9U);
}

TEST(PlanCache, DropsTheOldestWhenFull) {
  const FixedCostModel model;
  PlanCache cache(model, 2);
  const auto a = request("S(0)RR", "RRR");
  const auto b = request("RS(0)R", "RRR");
  const auto c = request("RRS(0)", "RRR");
  (void)cache.plan(a);
  (void)cache.plan(b);
  (void)cache.plan(c);  // evicts a
  EXPECT_EQ(cache.size(), 2U);
  (void)cache.plan(b);
  EXPECT_EQ(cache.hits(), 1U);
  (void)cache.plan(a);  // planned again
  EXPECT_EQ(cache.misses(), 4U);
}

TEST(PlanCache, FailuresAreNotCached) {
  const FixedCostModel model;
  PlanCache cache(model);
  const auto bad = request("P(sum)RR", "P(max)RR");
  EXPECT_THROW((void)cache.plan(bad), Error);
  EXPECT_THROW((void)cache.plan(bad), Error);
  EXPECT_EQ(cache.size(), 0U);
  EXPECT_EQ(cache.misses(), 2U);
}

TEST(PlanCache, ServesThreadsConcurrently) {
  const CommCostModel model({2, 2, 2}, 8);
  PlanCache cache(model);
  const std::vector<PlanRequest> requests{request("S(0)[0]S(0)[1]S(0)[2]", "RS(0)[0]S(0)[1]"),
                                          request("S(0)[0]S(0)[1]R", "RS(1)S(0)"), request("P(sum)RP(sum)", "RRR")};
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (std::size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const auto& r = requests[static_cast<std::size_t>(i) % requests.size()];
        if (!(*cache.plan(r) == plan_redistribution(r, model))) ++mismatches[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
  EXPECT_EQ(cache.size(), requests.size());
  EXPECT_EQ(cache.hits() + cache.misses(), 800U);
}

}  // namespace
}  // namespace meshloom
