// The command-line options of `meshloom-launch plan` and their parsing into a PlanSetup (plan_command.cpp), shared
// with `meshloom-launch run`, which takes the same request options.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "plan_batch.hpp"

namespace CLI {
class App;
}

namespace meshloom::launcher {

struct PlanOptions {
  bool batch = false;
  bool compare = false;
  bool verify = false;
  std::string mesh, names, tensor, src, dst, planner, variant, cost, weights, calibration, itemsize, dtype,
      devices_per_host, coordinate, state_budget;
  std::vector<std::string> flatten;
  bool extrapolate = false;
};

struct HumanSetup {
  PlanSetup setup;
  std::optional<std::string> dtype;
};

// The help texts that differ between the commands taking the request options.
struct PlanOptionHelp {
  const char* mesh = "Mesh shape, outer to inner, e.g. 2,2,2";
  const char* itemsize = "Bytes per element (default 4)";
  const char* dtype = "Element type instead of --itemsize: float32, bfloat16, float16, ...";
};
// Registers the request options (--mesh .. --state-budget) on `cmd`, bound to `o`.
void add_plan_request_options(CLI::App& cmd, PlanOptions& o, const PlanOptionHelp& help = {});

// The request and cost model of the options `cmd` was given. `cmd` must define every option `plan` defines except
// --batch, --compare and --verify (they are looked up with count()). ValueError naming the option otherwise.
[[nodiscard]] HumanSetup parse_plan_options(const PlanOptions& o, const CLI::App& cmd);
// A cost as people read it: 6 significant digits, " us" for the models that measure time.
[[nodiscard]] std::string format_plan_cost(double cost, CostModelKind model);
// "fixed (all_reduce 4, ...)", "comm (8 devices per host)", ...; "2x2 (dp, tp)"-style mesh text.
[[nodiscard]] std::string plan_model_text(const PlanSetup& s);
[[nodiscard]] std::string plan_mesh_text(const PlanSetup& s);
// "0,1" or "dp,tp": the axes of a step.
[[nodiscard]] std::string plan_axes_label(const std::vector<std::size_t>& axes, const std::vector<std::string>& names);
// Columns padded to their widest cell; right[c] aligns column c to the right.
void print_plan_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows,
                      const std::vector<bool>& right);

}  // namespace meshloom::launcher
