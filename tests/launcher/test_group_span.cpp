// group_span: the hosts each group of an axis spans and its ranks per host, from every rank's host, at every group.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "group_span.hpp"
#include "meshloom/error.hpp"
#include "meshloom/mesh/device_mesh.hpp"

namespace meshloom::launcher {
namespace {

// Ranks 0..world-1 on hosts of `per_host` consecutive ranks each ("h0", "h1", ...).
std::vector<std::string> hosts_of(std::int64_t world, std::int64_t per_host) {
  std::vector<std::string> hosts;
  for (std::int64_t r = 0; r < world; ++r) hosts.push_back("h" + std::to_string(r / per_host));
  return hosts;
}

TEST(GroupSpan, TheWorkedExamplesOfTheHeader) {
  const DeviceMesh mesh = DeviceMesh::init({2, 4}, std::vector<std::string>{"dp", "tp"}, 8);
  const auto hosts = hosts_of(8, 4);
  EXPECT_EQ(group_span(mesh.groups(AxisRef{"tp"}), hosts), (GroupSpan{.hosts = 1, .ranks_per_host = 4, .uniform = true}));
  EXPECT_EQ(group_span(mesh.groups(AxisRef{"dp"}), hosts), (GroupSpan{.hosts = 2, .ranks_per_host = 1, .uniform = true}));
}

TEST(GroupSpan, EveryAxisOfMeshesOverHostsMatchesACountByHand) {
  // 16 ranks, 4 per host, mesh (pp=2, dp=2, tp=4): tp stays in a host, dp and pp cross hosts.
  const DeviceMesh mesh = DeviceMesh::init({2, 2, 4}, std::vector<std::string>{"pp", "dp", "tp"}, 16);
  const auto hosts = hosts_of(16, 4);
  for (const std::string axis : {"pp", "dp", "tp"}) {
    const RankTensor groups = mesh.groups(AxisRef{axis});
    const auto size = static_cast<std::size_t>(groups.shape[1]);
    for (std::size_t g = 0; g < static_cast<std::size_t>(groups.shape[0]); ++g) {
      std::vector<std::string> seen;
      for (std::size_t k = 0; k < size; ++k) {
        const std::string& h = hosts[static_cast<std::size_t>(groups.values[g * size + k])];
        if (std::find(seen.begin(), seen.end(), h) == seen.end()) seen.push_back(h);
      }
      const GroupSpan span = group_span(groups, hosts);
      EXPECT_EQ(span.hosts, static_cast<std::int64_t>(seen.size())) << axis << " group " << g;
      EXPECT_EQ(span.ranks_per_host * span.hosts, groups.shape[1]) << axis;
      EXPECT_TRUE(span.uniform) << axis;
    }
  }
}

TEST(GroupSpan, GroupsThatSitDifferentlyAreNotUniform) {
  // 6 ranks on hosts of 4: tp groups of 3 are [0,1,2] (one host) and [3,4,5] (two hosts, 1 + 2 ranks).
  const DeviceMesh mesh = DeviceMesh::init({2, 3}, std::vector<std::string>{"dp", "tp"}, 6);
  const GroupSpan span = group_span(mesh.groups(AxisRef{"tp"}), hosts_of(6, 4));
  EXPECT_EQ(span, (GroupSpan{.hosts = 2, .ranks_per_host = 3, .uniform = false}));
}

TEST(GroupSpan, OneShapeSpreadUnevenlyOverItsHostsIsUniform) {
  // 6 ranks on hosts of 4, one group of 3 at stride 2: ranks 0, 2 on host 0 and 4 on host 1 (2 + 1); the other
  // group 1, 3 | 5 alike: both are {3 ranks, 2 hosts, 2 on the fullest}.
  const DeviceMesh mesh = DeviceMesh::init({3, 2}, std::vector<std::string>{"a", "b"}, 6);
  EXPECT_EQ(group_span(mesh.groups(AxisRef{"a"}), hosts_of(6, 4)),
            (GroupSpan{.hosts = 2, .ranks_per_host = 2, .uniform = true}));
}

TEST(GroupSpan, RanksWithoutAKnownHostCountAsHostsOfTheirOwn) {
  const DeviceMesh mesh = DeviceMesh::init({4}, std::vector<std::string>{"dp"}, 4);
  EXPECT_EQ(group_span(mesh.groups(AxisRef{"dp"}), {"a", "a"}).hosts, 3);
  EXPECT_THROW((void)group_span(RankTensor{{4}, {0, 1, 2, 3}}, {"a"}), Error);
}

}  // namespace
}  // namespace meshloom::launcher
