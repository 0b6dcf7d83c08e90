#include "meshloom/plan/plan.hpp"

#include <array>
#include <utility>

namespace meshloom {

namespace {
constexpr std::array<std::pair<Collective, std::string_view>, 7> kNames{{
    {Collective::AllGather, "all_gather"},
    {Collective::AllReduce, "all_reduce"},
    {Collective::ReduceScatter, "reduce_scatter"},
    {Collective::AllToAll, "all_to_all"},
    {Collective::Chunk, "chunk"},
    {Collective::ReplicateToPartial, "replicate_to_partial"},
    {Collective::ShardToPartial, "shard_to_partial"},
}};
}  // namespace

std::string_view to_string(Collective c) noexcept {
  for (const auto& [collective, name] : kNames) {
    if (collective == c) return name;
  }
  return "unknown";
}

std::optional<Collective> collective_from_string(std::string_view text) noexcept {
  for (const auto& [collective, name] : kNames) {
    if (name == text) return collective;
  }
  return std::nullopt;
}

std::optional<Collective> collective_for(const Placement& from, const Placement& to) noexcept {
  if (from == to) return std::nullopt;
  if (from.is_shard()) {
    if (to.is_shard()) return Collective::AllToAll;
    if (to.is_replicate()) return Collective::AllGather;
    if (to.op() == ReduceOp::Sum) return Collective::ShardToPartial;
    return std::nullopt;
  }
  if (from.is_partial()) {
    if (to.is_replicate()) return Collective::AllReduce;
    if (to.is_shard()) return Collective::ReduceScatter;
    return std::nullopt;  // P(a) -> P(b)
  }
  return to.is_shard() ? Collective::Chunk : Collective::ReplicateToPartial;
}

bool communicates(Collective c) noexcept {
  return c == Collective::AllGather || c == Collective::AllReduce || c == Collective::ReduceScatter ||
         c == Collective::AllToAll;
}

std::string trace(const Plan& plan) {
  if (plan.steps.empty()) return plan.path.empty() ? std::string() : to_string(plan.path.front());
  std::string out = to_string(plan.steps.front().before);
  for (const auto& step : plan.steps) {
    out += step.merged ? "-->" : "->";
    out += to_string(step.after);
  }
  return out;
}

std::map<std::string, int> comm_counts(const Plan& plan) {
  std::map<std::string, int> counts;
  for (const auto& step : plan.steps) ++counts[std::string(to_string(step.collective))];
  return counts;
}

}  // namespace meshloom
