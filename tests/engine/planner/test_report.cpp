// plan_markdown: the report of a redistribution, checked byte for byte on hand-made plans, and row by row on
// the planner's own plans.
#include <gtest/gtest.h>

#include <string>

#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/plan/report.hpp"
#include "support/expect_error.hpp"

namespace meshloom {
namespace {

PlanStep step(std::vector<std::size_t> axes, Collective c, const char* before, const char* after, std::int64_t bytes,
              double cost) {
  PlanStep s;
  s.axes = std::move(axes);
  s.collective = c;
  s.before = parse_state(before);
  s.after = parse_state(after);
  s.bytes = bytes;
  s.cost = cost;
  return s;
}

PlanReportInput input(const Plan* a, const Plan* b = nullptr) {
  PlanReportInput in;
  in.tensor = "w";
  in.tensor_shape = {1024, 1024};
  in.dtype = DType::Float32;
  in.src = parse_state("S(0)S(1)");
  in.dst = parse_state("RR");
  in.axis_names = {"dp", "tp"};
  in.mesh_shape = {2, 4};
  in.plans.push_back({"before", "µs", a, a == nullptr ? "ValueError: no path" : ""});
  if (b != nullptr) in.plans.push_back({"after", "µs", b, ""});
  return in;
}

TEST(PlanMarkdown, OnePlanByteForByte) {
  Plan p;
  p.steps = {step({1}, Collective::AllGather, "S(0)S(1)", "S(0)R", 131072, 10.5),
             step({0}, Collective::AllGather, "S(0)R", "RR", 2097152, 1.75)};
  p.cost = 12.25;
  EXPECT_EQ(plan_markdown(input(&p)),
            "# Redistribution of `w`\n\n"
            "Mesh `(dp=2, tp=4)`, tensor `[1024, 1024]` float32, from `S(0)S(1)` to `RR`.\n\n"
            "## before: 2 steps, 12.25 µs\n\n"
            "| Step | Axis | Collective | From → To | Bytes per rank | Cost (µs) |\n"
            "|---:|---|---|---|---:|---:|\n"
            "| 0 | tp | all_gather | `S(0)S(1)` → `S(0)R` | 131,072 | 10.50 |\n"
            "| 1 | dp | all_gather | `S(0)R` → `RR` | 2,097,152 | 1.75 |\n\n");
}

TEST(PlanMarkdown, TwoPlansAreComparedAndMergedStepsNameEveryAxis) {
  Plan before;
  before.steps = {step({0, 1}, Collective::AllGather, "S(0)S(1)", "RR", 131072, 8.0)};
  before.steps[0].merged = true;
  before.cost = 8.0;
  Plan after;
  after.cost = 0.0;
  const std::string md = plan_markdown(input(&before, &after));
  EXPECT_NE(md.find("| 0 | dp+tp | all_gather | `S(0)S(1)` → `RR` | 131,072 | 8.00 |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("## after: 0 steps, 0.00 µs\n\nThe tensor is already where it must be.\n"), std::string::npos) << md;
  EXPECT_NE(md.find("**after** costs 0.00 µs against **before** 8.00 µs (0.00x).\n"), std::string::npos) << md;
}

TEST(PlanMarkdown, AMissingPlanSaysWhyAndIsNotCompared) {
  Plan after;
  after.cost = 1.0;
  PlanReportInput in = input(nullptr, &after);
  const std::string md = plan_markdown(in);
  EXPECT_NE(md.find("## before: no plan\n\nValueError: no path\n"), std::string::npos) << md;
  EXPECT_EQ(md.find("against"), std::string::npos) << md;
  in.axis_names.pop_back();
  testing::expect_error([&] { (void)plan_markdown(in); }, ErrorKind::ValueError, {"1 axis names for a mesh of 2 axes"});
}

TEST(PlanMarkdown, EveryStepOfARealPlanIsARow) {
  PlanRequest r;
  r.mesh_shape = {2, 2, 2};
  r.tensor_shape = {8, 8, 8};
  r.src = parse_state("S(0)[0]S(0)[1]R");
  r.dst = parse_state("RS(0)R");
  const FixedCostModel model;
  const Plan plan = plan_redistribution(r, model);
  PlanReportInput in;
  in.tensor = "x";
  in.tensor_shape = r.tensor_shape;
  in.src = r.src;
  in.dst = r.dst;
  in.axis_names = {"pp", "dp", "tp"};
  in.mesh_shape = r.mesh_shape;
  in.plans.push_back({"graph planner, fixed model", "", &plan, ""});
  const std::string md = plan_markdown(in);
  std::size_t rows = 0;
  for (std::size_t at = md.find("\n| "); at != std::string::npos; at = md.find("\n| ", at + 1)) ++rows;
  EXPECT_EQ(rows, plan.steps.size() + 1) << md;  // the header row and one row per step
  for (const PlanStep& s : plan.steps) {
    EXPECT_NE(md.find("`" + to_string(s.before) + "` → `" + to_string(s.after) + "`"), std::string::npos) << md;
  }
  EXPECT_NE(md.find("## graph planner, fixed model: " + std::to_string(plan.steps.size()) + " steps"), std::string::npos);
}

}  // namespace
}  // namespace meshloom
