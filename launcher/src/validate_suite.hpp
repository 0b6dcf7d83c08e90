// The requests `meshloom-launch validate` runs: a bundled default for the job's world, or a suite file.
//
// A suite file holds JSON Lines, one request per line in `plan --batch`'s form (mesh, tensor_shape, src, dst, and
// optionally names, variant, flattened, coordinate): {"mesh": [2, 2], "tensor_shape": [256, 512], "src": "S(0)R",
// "dst": "RS(0)"}. Cost model fields (cost_model, weights, calibration, devices_per_host, extrapolate) are refused:
// validate prices every request with every model. Blank lines and lines starting with '#' are skipped. What travels
// is float64: an itemsize other than 8 is refused.
//
// The default suite, for a world of W ranks (every mesh uses all W ranks):
//   meshes      W = 2: (2)   W = 4: (2,2)   W = 8: (2,4), (2,2,2)   W = 16: (4,4)   other W: (W)
//   tensors     float64, 2-D, 4 KiB to 64 MiB: 16x32, 64x128, 256x512, 1024x2048, 2048x4096
//   transitions where plans really differ:
//     1-D  S(0) -> S(1), S(0) -> R, P(sum) -> R, P(sum) -> S(0)
//     2-D  S(0)S(1) -> S(1)S(0), S(0)R -> RS(0), P(sum)P(sum) -> RR, P(sum)S(0) -> RR
//     3-D  S(0)S(1)R -> RS(0)S(1), S(0)[0]S(0)[1]R -> RS(0)R, P(sum)P(sum)R -> RRR, S(0)RS(1) -> S(1)RS(0)
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "plan_batch.hpp"

namespace meshloom::launcher {

struct SuiteRequest {
  PlanSetup setup;   // the request (cost model fields unset)
  std::string label;  // "(2,2) 256x512 S(0)R -> RS(0)"
};

// ValueError for a world below 2 (nothing to redistribute between).
[[nodiscard]] std::vector<SuiteRequest> default_suite(std::int64_t world);
// ValueError naming the file, line and field; ValueError for a file without requests or a mesh of more than `world`
// ranks.
[[nodiscard]] std::vector<SuiteRequest> parse_suite(const std::string& text, const std::string& source, std::int64_t world);
[[nodiscard]] std::vector<SuiteRequest> read_suite(const std::filesystem::path& path, std::int64_t world);

// A model's candidate plans for a request, cheapest first, and its pick among them: the plan the planner gives it
// (plan_redistribution). Where merged steps are priced as the flattened group's collective (plans_as_run), the pool
// is as_run_pool's (at least k plans, kAsRunPool) and the pick the cheapest as it runs of them; where that pool's
// searches pass the state budget, plan_k_cheapest's k plans and its first, as the planner falls back. Otherwise
// plan_k_cheapest's k plans and the first. The planner's errors otherwise.
struct ModelPlans {
  std::vector<Plan> plans;
  std::size_t pick = 0;
};
[[nodiscard]] ModelPlans model_plans(const PlanRequest& request, const CostModel& model, std::size_t k);

}  // namespace meshloom::launcher
