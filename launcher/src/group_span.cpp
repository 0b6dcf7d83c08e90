#include "group_span.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "meshloom/error.hpp"

namespace meshloom::launcher {

GroupSpan group_span(const RankTensor& groups, const std::vector<std::string>& hosts) {
  if (groups.shape.size() != 2) {
    raise(ErrorKind::ValueError, "group_span: groups of shape with " + std::to_string(groups.shape.size()) +
                                     " dims; expected {groups, group size}");
  }
  const auto count = static_cast<std::size_t>(groups.shape[0]);
  const auto size = static_cast<std::size_t>(groups.shape[1]);
  GroupSpan span{.hosts = 0, .ranks_per_host = 0, .uniform = true};
  std::optional<std::pair<std::int64_t, std::int64_t>> first;
  for (std::size_t g = 0; g < count; ++g) {
    std::map<std::string, std::int64_t> per_host;
    for (std::size_t k = 0; k < size; ++k) {
      const std::int64_t rank = groups.values[g * size + k];
      const bool known = rank >= 0 && static_cast<std::size_t>(rank) < hosts.size();
      ++per_host[known ? hosts[static_cast<std::size_t>(rank)] : "rank " + std::to_string(rank)];
    }
    std::int64_t most = 0;
    for (const auto& [host, ranks] : per_host) most = std::max(most, ranks);
    const auto spanned = static_cast<std::int64_t>(per_host.size());
    if (!first) {
      first = std::make_pair(spanned, most);
    } else if (*first != std::make_pair(spanned, most)) {
      span.uniform = false;
    }
    span.hosts = std::max(span.hosts, spanned);
    span.ranks_per_host = std::max(span.ranks_per_host, most);
  }
  if (count == 0) return GroupSpan{};
  return span;
}

std::vector<std::int64_t> host_indices(const std::vector<std::string>& hosts) {
  std::map<std::string, std::int64_t> index;
  std::vector<std::int64_t> out;
  out.reserve(hosts.size());
  for (const auto& h : hosts) {
    const auto next = static_cast<std::int64_t>(index.size());
    out.push_back(index.try_emplace(h, next).first->second);
  }
  return out;
}

}  // namespace meshloom::launcher
