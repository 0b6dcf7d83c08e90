// Where the groups of one mesh axis sit on the cluster, from every rank's host (from the job itself, MPI's
// shared-memory split: live_command.hpp's job_hosts, never typed by hand): with the group size, what sets a
// collective's cost on a cluster (autoparallel keys its NCCL tables by nodes and ranks per node). bench records it
// with every result.
//
//   groups [[0,1,2,3],[4,5,6,7]] on hosts a,a,a,a,b,b,b,b   -> 1 host, 4 ranks per host, uniform
//   groups [[0,4],[1,5],[2,6],[3,7]] on the same hosts       -> 2 hosts, 1 rank per host, uniform
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "meshloom/layout/layout.hpp"

namespace meshloom::launcher {

struct GroupSpan {
  std::int64_t hosts = 1;           // hosts one group spans (the most over the axis' groups)
  std::int64_t ranks_per_host = 1;  // ranks of one group on one host (the most)
  // Every group spans as many hosts, with as many ranks on its fullest one: the groups share one shape (the key of a
  // calibration's curve), even when a group's ranks are spread unevenly over its hosts (3 ranks as 2 + 1).
  bool uniform = true;
  friend bool operator==(const GroupSpan&, const GroupSpan&) = default;
};

// `groups` as DeviceMesh::groups gives them (shape {groups, group size}); hosts[r] is world rank r's host. A rank
// past the end of `hosts` counts as a host of its own. ValueError for a tensor that is not 2-D.
[[nodiscard]] GroupSpan group_span(const RankTensor& groups, const std::vector<std::string>& hosts);

// Every rank's host as an index, numbered in order of first appearance ({a, b, a} -> {0, 1, 0}): a calibration's
// rank_hosts.
[[nodiscard]] std::vector<std::int64_t> host_indices(const std::vector<std::string>& hosts);

}  // namespace meshloom::launcher
