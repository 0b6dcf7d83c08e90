// `run`'s execution on live ranks, many plans in one job (label mpi; mpirun -np 4 on mesh (2,2), -np 8 on
// (2,2,2)): every plan that graph and greedy make under the fixed and comm models, executed for real through
// build_mesh_groups' communicators, must leave every element of every rank equal to the target, in float64 and in
// int64. Uneven tensors, Partial sources and targets, non-default shard orders and merged steps (--flatten) are
// all in the list. A plan cut short must fail verification, naming a rank and an element.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "meshloom/backends/mpi_communicator.hpp"
#include "meshloom/comm/mesh_groups.hpp"
#include "meshloom/error.hpp"
#include "meshloom/mesh/device_mesh.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/planner.hpp"
#include "run_exec.hpp"

namespace meshloom::launcher {
namespace {

struct Case {
  std::vector<std::int64_t> tensor;
  const char* src;
  const char* dst;
};

comm::Communicator& world() {
  static std::unique_ptr<comm::Communicator> w = [] {
    auto c = mpi::MpiCommunicator::world();
    c->set_timeout(std::chrono::seconds(30));
    return std::unique_ptr<comm::Communicator>(std::move(c));
  }();
  return *w;
}

std::vector<std::int64_t> mesh_for_world() {
  return world().size() >= 8 ? std::vector<std::int64_t>{2, 2, 2} : std::vector<std::int64_t>{2, 2};
}

std::vector<Case> cases_for(std::size_t ndim) {
  if (ndim == 2) {
    return {
        {{8, 8}, "S(0)S(1)", "RR"},
        {{8, 8}, "S(0)R", "RS(0)"},
        {{7, 5, 3}, "S(0)S(1)", "S(1)S(0)"},
        {{7, 5, 3}, "S(2)S(0)", "RR"},
        {{7, 5, 3}, "RR", "S(0)S(2)"},
        {{5, 3}, "S(0)[1]S(0)[0]", "RS(1)"},
        {{5, 3}, "S(0)[0]S(0)[1]", "S(0)[1]S(0)[0]"},
        {{6, 4}, "P(sum)S(0)", "S(1)R"},
        {{7, 5}, "P(sum)P(sum)", "S(0)S(1)"},
        {{6, 4}, "P(avg)R", "RR"},
        {{7, 5}, "P(max)S(1)", "RS(0)"},
        {{6, 4}, "P(min)P(min)", "RR"},
        {{3, 4}, "P(product)R", "S(0)R"},
        {{6, 4}, "S(0)R", "P(sum)R"},
        {{7, 3}, "RS(0)", "RP(sum)"},
        {{1, 3}, "S(0)S(0)", "RR"},
        {{8, 8}, "P(sum)P(sum)", "RR"},
        {{8, 8}, "S(0)S(0)", "S(1)S(1)"},
    };
  }
  return {
      {{8, 8, 8}, "S(0)[0]S(0)[1]R", "RS(0)R"},
      {{7, 5, 3}, "S(0)S(1)S(2)", "RRR"},
      {{7, 5, 3}, "RRR", "S(2)S(0)S(1)"},
      {{7, 5, 3}, "S(0)[1]S(1)S(0)[0]", "S(1)RS(0)"},
      {{5, 6}, "S(0)[1]S(0)[0]R", "RRS(1)"},
      {{6, 4}, "P(sum)S(0)P(sum)", "S(1)RR"},
      {{7, 5}, "P(avg)P(sum)R", "RS(1)R"},
      {{6, 4}, "P(max)RS(0)", "RRR"},
      {{6, 5}, "RRR", "S(0)P(sum)R"},
      {{8, 8, 8}, "S(0)S(1)S(2)", "RRR"},
      {{8, 8}, "P(sum)P(sum)P(sum)", "RRR"},
      {{8, 8}, "S(0)S(0)S(0)", "RRR"},
  };
}

PlanRequest make_request(const std::vector<std::int64_t>& mesh, const std::vector<std::int64_t>& tensor,
                         const char* src, const char* dst) {
  PlanRequest r;
  r.mesh_shape = mesh;
  r.tensor_shape = tensor;
  r.src = parse_state(src);
  r.dst = parse_state(dst);
  r.itemsize = 8;
  return r;
}

// Plans of every (planner, model); each distinct one executed and verified. Counts the plans and merged steps run.
void run_all(const std::vector<std::vector<std::size_t>>& flattened, DType dtype, std::size_t& executed,
             std::size_t& merged) {
  const auto mesh_shape = mesh_for_world();
  std::vector<std::string> names;
  for (std::size_t a = 0; a < mesh_shape.size(); ++a) names.push_back(std::to_string(a));
  DeviceMesh mesh = DeviceMesh::init(mesh_shape, names, world().size());
  for (const auto& f : flattened) {
    std::vector<std::string> axes;
    for (const auto a : f) axes.push_back(names[a]);
    (void)mesh.slice(axes).flatten();
  }
  const comm::MeshGroups groups = comm::build_mesh_groups(world(), mesh);
  for (const auto& [name, c] : groups.axes) {
    if (c) c->set_timeout(world().timeout());
  }
  const FixedCostModel fixed;
  const CommCostModel comm_model(mesh_shape, 8);
  RunSettings settings;
  settings.iterations = 1;
  settings.dtype = dtype;
  for (const Case& c : cases_for(mesh_shape.size())) {
    std::map<std::string, Plan> plans;
    for (const auto kind : {PlannerKind::Graph, PlannerKind::Greedy}) {
      for (const CostModel* model : {static_cast<const CostModel*>(&fixed), static_cast<const CostModel*>(&comm_model)}) {
        PlanRequest r = make_request(mesh_shape, c.tensor, c.src, c.dst);
        r.planner = kind;
        r.flattened = flattened;
        try {
          Plan plan = plan_redistribution(r, *model);
          plans.emplace(trace(plan), std::move(plan));
        } catch (const Error&) {
          // greedy refuses non-default shard orders
        }
      }
    }
    ASSERT_FALSE(plans.empty()) << c.src << " -> " << c.dst;
    for (const auto& [text, plan] : plans) {
      PlanRequest r = make_request(mesh_shape, c.tensor, c.src, c.dst);
      r.flattened = flattened;
      for (const auto& step : plan.steps) merged += step.merged ? 1 : 0;
      const RunOutcome outcome = execute_plan(world(), groups, names, r, plan, settings);
      EXPECT_TRUE(outcome.verified) << c.src << " -> " << c.dst << " via " << text << ": " << outcome.mismatch;
      EXPECT_EQ(outcome.steps.size(), plan.steps.size());
      ++executed;
    }
  }
  if (world().rank() == 0) {
    std::printf("[rank 0] %zu plans executed and verified (%zu merged steps), mesh of %zu axes, %zu flattened groups\n",
                executed, merged, mesh_shape.size(), flattened.size());
  }
}

TEST(RunMpi, EveryPlanVerifiesInFloat64) {
  std::size_t executed = 0;
  std::size_t merged = 0;
  run_all({}, DType::Float64, executed, merged);
  EXPECT_GE(executed, 9U);
}

TEST(RunMpi, EveryPlanVerifiesInInt64) {
  std::size_t executed = 0;
  std::size_t merged = 0;
  run_all({}, DType::Int64, executed, merged);
  EXPECT_GE(executed, 9U);
}

TEST(RunMpi, MergedStepsOnFlattenedGroupsVerify) {
  std::size_t executed = 0;
  std::size_t merged = 0;
  if (mesh_for_world().size() == 2) {
    run_all({{0, 1}}, DType::Float64, executed, merged);
  } else {
    run_all({{0, 1}, {1, 2}, {0, 1, 2}}, DType::Float64, executed, merged);
  }
  EXPECT_GE(executed, 9U);
  EXPECT_GE(merged, 1U) << "no plan merged a step: the flattened groups were not exercised";
}

TEST(RunMpi, APlanCutShortFailsVerificationNamingRankAndElement) {
  const auto mesh_shape = mesh_for_world();
  std::vector<std::string> names;
  for (std::size_t a = 0; a < mesh_shape.size(); ++a) names.push_back(std::to_string(a));
  const DeviceMesh mesh = DeviceMesh::init(mesh_shape, names, world().size());
  const comm::MeshGroups groups = comm::build_mesh_groups(world(), mesh);
  const PlanRequest r = make_request(mesh_shape, {7, 5}, mesh_shape.size() == 2 ? "P(sum)S(0)" : "P(sum)S(0)R",
                                     mesh_shape.size() == 2 ? "RR" : "RRR");
  Plan plan = plan_redistribution(r, FixedCostModel{});
  ASSERT_GE(plan.steps.size(), 2U);
  plan.steps.pop_back();
  RunSettings settings;
  settings.iterations = 1;
  const RunOutcome outcome = execute_plan(world(), groups, names, r, plan, settings);
  EXPECT_FALSE(outcome.verified);
  EXPECT_NE(outcome.mismatch.find("rank "), std::string::npos) << outcome.mismatch;
}

// Forwards every call to the group it wraps, but changes one byte of the output of its second all_gather on world
// rank 0: a collective that sometimes gives wrong data.
class FlakyGather final : public comm::Communicator {
public:
  explicit FlakyGather(std::unique_ptr<comm::Communicator> inner) : inner_(std::move(inner)) {}
  [[nodiscard]] int rank() const noexcept override { return inner_->rank(); }
  [[nodiscard]] int size() const noexcept override { return inner_->size(); }
  [[nodiscard]] const std::string& name() const noexcept override { return inner_->name(); }
  [[nodiscard]] std::string_view backend() const noexcept override { return inner_->backend(); }
  void all_reduce(comm::ConstBuffer in, comm::Buffer out, ReduceOp op) override { inner_->all_reduce(in, out, op); }
  void all_gather(comm::ConstBuffer in, comm::Buffer out) override {
    inner_->all_gather(in, out);
    if (++gathers_ == 2 && world().rank() == 0 && out.count > 0) static_cast<unsigned char*>(out.data)[1] ^= 0x40;
  }
  void reduce_scatter(comm::ConstBuffer in, comm::Buffer out, ReduceOp op) override {
    inner_->reduce_scatter(in, out, op);
  }
  void all_to_all(comm::ConstBuffer in, comm::Buffer out) override { inner_->all_to_all(in, out); }
  void broadcast(comm::Buffer buffer, int root) override { inner_->broadcast(buffer, root); }
  void barrier() override { inner_->barrier(); }
  void synchronize() override { inner_->synchronize(); }
  [[nodiscard]] std::unique_ptr<comm::Communicator> split(int color, int key, std::string name) override {
    return inner_->split(color, key, std::move(name));
  }
  void abort(int error_code) noexcept override { inner_->abort(error_code); }

private:
  std::unique_ptr<comm::Communicator> inner_;
  int gathers_ = 0;
};

// Every timed iteration is checked: one whose result differs from its step's first fails the run, naming the step
// and the iteration, though the last iteration's result is right.
TEST(RunMpi, AnIterationThatGaveAnotherResultFailsVerification) {
  const auto mesh_shape = mesh_for_world();
  std::vector<std::string> names;
  for (std::size_t a = 0; a < mesh_shape.size(); ++a) names.push_back(std::to_string(a));
  const DeviceMesh mesh = DeviceMesh::init(mesh_shape, names, world().size());
  comm::MeshGroups groups = comm::build_mesh_groups(world(), mesh);
  for (auto& [name, c] : groups.axes) {
    if (c) c = std::make_unique<FlakyGather>(std::move(c));
  }
  const PlanRequest r = make_request(mesh_shape, {8, 4}, mesh_shape.size() == 2 ? "S(0)R" : "S(0)RR",
                                     mesh_shape.size() == 2 ? "RR" : "RRR");
  const Plan plan = plan_redistribution(r, FixedCostModel{});
  ASSERT_EQ(plan.steps.size(), 1U);
  ASSERT_EQ(plan.steps.front().collective, Collective::AllGather);
  RunSettings settings;
  settings.iterations = 3;
  const RunOutcome outcome = execute_plan(world(), groups, names, r, plan, settings);
  EXPECT_FALSE(outcome.verified);
  EXPECT_NE(outcome.mismatch.find("rank 0 "), std::string::npos) << outcome.mismatch;
  EXPECT_NE(outcome.mismatch.find("step 0 (all_gather), iteration 2 of 3, gave another result than its first "
                                  "iteration: element"),
            std::string::npos)
      << outcome.mismatch;
}

}  // namespace
}  // namespace meshloom::launcher
