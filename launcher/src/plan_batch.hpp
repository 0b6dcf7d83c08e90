// `meshloom-launch plan`: redistribution plans, as JSON Lines with --batch (see docs/05-launcher.md and the
// machine-interface contract) or as a table for people (plan_command.cpp). Both build a PlanSetup, the request in
// the engine's terms, and plan it with the cost model the setup names.
//
// One input line
//   {"mesh": [2, 2, 2], "tensor_shape": [8, 8, 8], "src": "S(0)[0]S(0)[1]R", "dst": "RS(0)R", "cost_model": "fixed"}
// gives one output line
//   {"ok":true,"cost":4.0,"path":[...],"trace":"...","steps":[...],"comm_counts":{...},"states_explored":93}
// or {"ok":false,"error":"<Kind>: <message>"}.
//
// Fields: mesh, tensor_shape, src, dst (required); planner, variant, cost_model, weights, itemsize,
// devices_per_host, calibration, coordinate, flattened (the contract's); names (mesh axis names: the calibrated
// model's keys, and axis names in "flattened"; default the calibration's mesh names) and state_budget (most states
// the search may settle) are ours. Unknown fields are rejected.
//
// Nothing here throws or allocates in proportion to an absurd request: lines are capped in length and nesting depth
// before they are parsed, lists in length, and every search in the states it may settle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/plan.hpp"
#include "meshloom/plan/planner.hpp"

namespace meshloom::launcher {

struct PlanBatchLimits {
  // Longest input line accepted, in bytes (a longer line answers a ValueError and is skipped to its end).
  std::size_t max_line_bytes = std::size_t{16} << 20;
  // Deepest JSON nesting accepted (arrays and objects).
  std::size_t max_depth = 64;
  // Most states one search may settle: the default of a line's "state_budget" and the most it may ask for.
  std::size_t max_state_budget = kDefaultStateBudget;
};

// ---- The request in the engine's terms (shared by --batch and the human command) -------------------------------

enum class CostModelKind : std::uint8_t { Fixed, Comm, Calibrated };

struct PlanSetup {
  PlanRequest request;
  CostModelKind cost_model = CostModelKind::Comm;
  FixedWeights weights;            // the fixed model's
  std::int64_t devices_per_host = 8;  // the comm model's
  std::optional<Calibration> calibration;  // the calibrated model's
  bool extrapolate = false;                // the calibrated model's: price group shapes never measured (a guess)
  std::vector<std::string> names;  // mesh axis names; empty when none were given
};

// Most devices per host the comm model takes (as many as ranks on one mesh axis).
inline constexpr std::int64_t kMaxDevicesPerHost = std::int64_t{1} << 31;

// "graph", "greedy", "auto"; "seed", "newest"; "fixed", "comm", "calibrated". The *_from_string functions
// return nullopt for anything else (case-sensitive).
[[nodiscard]] std::string_view to_string(PlannerKind kind) noexcept;
[[nodiscard]] std::string_view to_string(PartialVariant variant) noexcept;
[[nodiscard]] std::string_view to_string(CostModelKind kind) noexcept;
[[nodiscard]] std::optional<PlannerKind> planner_from_string(std::string_view text) noexcept;
[[nodiscard]] std::optional<PartialVariant> variant_from_string(std::string_view text) noexcept;
[[nodiscard]] std::optional<CostModelKind> cost_model_from_string(std::string_view text) noexcept;

// The same, for a value the user gave: ValueError `<what>: unknown planner (expected graph, greedy, auto)`, where
// `what` names the value (`planner = "x"` in a batch line, `--planner "x"` on the command line).
[[nodiscard]] PlannerKind parse_planner(const std::string& text, const std::string& what);
[[nodiscard]] PartialVariant parse_variant(const std::string& text, const std::string& what);
[[nodiscard]] CostModelKind parse_cost_model(const std::string& text, const std::string& what);
// A state in the text form of state.hpp; ValueError `<what>: cannot parse state: position 4, token "X": ...`.
[[nodiscard]] State parse_state_text(const std::string& text, const std::string& what);

// The weight names of the fixed model, in the contract's order: all_reduce, all_to_all, all_gather,
// reduce_scatter, chunk.
[[nodiscard]] const std::vector<std::string>& weight_names();
// Sets one weight of the fixed model. ValueError `<what>: unknown weight "x" (...)` when the name is not a weight,
// `<what>: chunk = -1.0 must be finite, >= 0 and <= 1e300` for a bad value (inf and nan named as such); `what`
// names where the weights come from ("weights", `--weights "chunk=-1"`).
void set_weight(FixedWeights& weights, const std::string& name, double value, const std::string& what);

// Mesh axis names: one per axis, none empty, no two alike. ValueError otherwise.
void check_axis_names(const std::vector<std::string>& names, std::size_t ndim);
// An axis given by name: its index in `names`. KeyError when no axis has that name (`path` names the field).
[[nodiscard]] std::size_t axis_by_name(const std::vector<std::string>& names, const std::string& name,
                                       const std::string& path);

// The axis names the calibrated model looks its fits up by: setup.names, or when none are given the calibration's
// mesh names, which then must be for a mesh of the request's shape (ValueError otherwise). A calibration with curves
// by group shape prices any mesh without names: setup.names as given (possibly none).
[[nodiscard]] std::vector<std::string> calibration_axis_names(const PlanSetup& setup);

// The timing protocol a calibration's curves come from, for a header line: "single_shot", "pipelined", or "timing not
// recorded" for a file older than the field (its curves may be pipelined, which single collectives do not meet).
[[nodiscard]] std::string calibration_timing_text(const Calibration& calibration);

// The cost model the setup names, after checking the inputs of every model: devices_per_host in
// [1, kMaxDevicesPerHost], axis names (check_axis_names), and for the calibrated model a calibration whose axes
// can be named. ValueError otherwise. The request itself is checked by plan_redistribution.
[[nodiscard]] std::unique_ptr<CostModel> make_cost_model(const PlanSetup& setup);

// What a calibrated model cannot price, to follow the planner's error where that left it no plan: "; the calibration
// cannot price: <gaps> (calibrate those shapes, or --extrapolate to guess them)", the gaps being `lacking` where
// given (the curves a plan's steps need: missing_curves), else the model's gaps on the axes of `mesh_shape`; empty
// for any other model or where it prices everything.
[[nodiscard]] std::string unpriced_note(const CostModel& model, const std::vector<std::int64_t>& mesh_shape,
                                        const std::vector<std::string>& lacking = {});
// plan_redistribution, a search's error followed by what the calibration lacks: a calibrated model that cannot price
// a step leaves the search without that edge, and "no redistribution path" then names what was never measured on the
// axes (unpriced_note); "no plan from ... can be priced as it runs" names the flattened groups' missing curves. The
// plan may cost +inf: greedy chooses by placements alone, and a plan priced as it runs may merge a step no curve
// prices (plan_naming_gaps refuses such a plan).
[[nodiscard]] Plan plan_noting_gaps(const PlanRequest& request, const CostModel& model);
// The steps of `plan` that cost +inf: "step 1, all_gather on axes 0,1; ..."; empty where none does.
[[nodiscard]] std::string unpriced_steps(const Plan& plan);
// The curves a calibrated model lacks for those steps (a merged step's on its flattened group): "all_gather on axes
// 0,1: 4 ranks on 1 host (4 per host) never measured", ...; empty for any other model.
[[nodiscard]] std::vector<std::string> missing_curves(const PlanRequest& request, const Plan& plan,
                                                      const CostModel& model);
// plan_noting_gaps, refusing a plan that costs +inf: "greedy's plan S(0)S(0)->... takes steps its cost model cannot
// price (step 0, all_gather on axes 0,1)", followed by unpriced_note of its missing_curves.
[[nodiscard]] Plan plan_naming_gaps(const PlanRequest& request, const CostModel& model);

// The price as it runs of a plan of plan_redistribution's, where the model compares paths so (plans_as_run: a
// calibration with curves for a flattened group two moving axes share): its Plan::cost, which plan_redistribution
// prices so there (price_plan_steps: a merged step at its group's own curve). nullopt where the model compares path
// costs, and where a step cannot be priced so (+inf). plan --batch's `cost_as_run` and the human plan's "cost as it
// runs".
[[nodiscard]] std::optional<double> price_as_run(const PlanRequest& request, const Plan& plan, const CostModel& model);

// The collectives that communicate, counted per kind: comm_counts(plan) without the local steps (chunk,
// replicate_to_partial, shard_to_partial), as PyTorch's CommDebugMode counts them.
[[nodiscard]] std::map<std::string, int> communication_counts(const Plan& plan);

// ---- --batch -----------------------------------------------------------------------------------------------------

// One input line's request and model inputs, read as answer_plan_line reads them (ValueError or KeyError naming the
// field and value). validate reads its suite's lines with it.
[[nodiscard]] PlanSetup parse_plan_setup(const std::string& line, const PlanBatchLimits& limits = {});

// Answers one input line (without its newline) with one output line (without a newline). Never throws.
[[nodiscard]] std::string answer_plan_line(const std::string& line);
[[nodiscard]] std::string answer_plan_line(const std::string& line, const PlanBatchLimits& limits);

// Reads JSON Lines from `in` until its end and writes exactly one answer line per input line to `out`, in order,
// flushing after each; the same loop and statuses as run_mesh_batch (0, or 1 when `in` or `out` fails).
int run_plan_batch(std::istream& in, std::ostream& out);
int run_plan_batch(std::istream& in, std::ostream& out, const PlanBatchLimits& limits);

}  // namespace meshloom::launcher
