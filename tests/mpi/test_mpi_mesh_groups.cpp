// build_mesh_groups over the MPI backend: the communicator of every axis and flattened axis holds exactly the
// group the engine's DeviceMesh enumerates; mismatched meshes fail on every rank with a clear error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "meshloom/comm/mesh_groups.hpp"
#include "meshloom/error.hpp"
#include "mpi_test_support.hpp"

namespace meshloom {
namespace {

using ::testing::HasSubstr;
using testing::gather_i64;
using testing::world;

// Checks every axis of `mesh` against DeviceMesh::groups: size, local rank, and the members (all-gathered
// world ranks, in local-rank order).
void check_groups(const DeviceMesh& mesh) {
  auto& w = world();
  const std::int64_t me = w.rank();
  const comm::MeshGroups groups = comm::build_mesh_groups(w, mesh);

  std::vector<std::pair<std::string, AxisRef>> axes;
  for (std::size_t i = 0; i < mesh.ndim(); ++i) {
    axes.emplace_back(mesh.names() ? (*mesh.names())[i] : std::to_string(i), AxisRef{static_cast<std::int64_t>(i)});
  }
  for (const auto& name : mesh.flattened_names()) axes.emplace_back(name, AxisRef{name});
  EXPECT_EQ(groups.axes.size(), axes.size()) << mesh.repr();

  for (const auto& [name, ref] : axes) {
    SCOPED_TRACE(mesh.repr() + " axis " + name);
    const RankTensor g = mesh.groups(ref);
    ASSERT_EQ(g.shape.size(), 2U);
    const auto group_size = static_cast<std::size_t>(g.shape[1]);
    std::vector<std::int64_t> mine;
    for (std::size_t k = 0; k < g.values.size(); k += group_size) {
      const std::vector<std::int64_t> group(g.values.begin() + static_cast<std::ptrdiff_t>(k),
                                            g.values.begin() + static_cast<std::ptrdiff_t>(k + group_size));
      for (const auto r : group) {
        if (r == me) mine = group;
      }
    }
    comm::Communicator* c = groups.get(name);
    if (mine.empty()) {
      EXPECT_EQ(c, nullptr) << "rank " << me << " is in no group";
      continue;
    }
    ASSERT_NE(c, nullptr) << "rank " << me;
    EXPECT_EQ(c->name(), name);
    EXPECT_EQ(c->size(), static_cast<int>(group_size));
    EXPECT_EQ(c->rank(), mesh.local_rank(me, ref));
    EXPECT_EQ(gather_i64(*c, me), mine);
  }
  EXPECT_THROW((void)groups.get("no_such_axis"), Error);
}

bool fits(const DeviceMesh& mesh) { return mesh.rank_map().min_world() <= world().size(); }

TEST(MeshGroups, NamedMeshesWithFlattenedAxes) {
  // (2,4) dp,tp with dp_tp; (2,2,2) dp,cp,tp with dp_cp, cp_tp and the non-contiguous dp_tp; (4,2) ep,tp.
  {
    auto m = DeviceMesh::init({2, 4}, DeviceMesh::Names{"dp", "tp"});
    (void)m.flatten();
    if (fits(m)) check_groups(m);
  }
  {
    auto m = DeviceMesh::init({2, 2, 2}, DeviceMesh::Names{"dp", "cp", "tp"});
    (void)m.slice({"dp", "cp"}).flatten();
    (void)m.slice({"cp", "tp"}).flatten();
    (void)m.slice({"dp", "tp"}).flatten();
    if (fits(m)) check_groups(m);
  }
  {
    auto m = DeviceMesh::init({4, 2}, DeviceMesh::Names{"ep", "tp"});
    if (fits(m)) check_groups(m);
  }
  // Smaller meshes: at 4 and 8 ranks, the ranks outside them get no communicator.
  for (const auto& shape : std::vector<std::vector<std::int64_t>>{{2, 2}, {2, 1}, {2}, {1, 2}}) {
    DeviceMesh::Names names;
    for (std::size_t i = 0; i < shape.size(); ++i) names.push_back("a" + std::to_string(i));
    auto m = DeviceMesh::init(shape, names);
    if (fits(m)) check_groups(m);
  }
}

TEST(MeshGroups, UnnamedMeshesUseAxisIndices) {
  for (const auto& shape : std::vector<std::vector<std::int64_t>>{{4, 2}, {2, 4}, {2, 2}, {2, 1}}) {
    auto m = DeviceMesh::init(shape);
    if (!fits(m)) continue;
    check_groups(m);
    const auto groups = comm::build_mesh_groups(world(), m);
    EXPECT_EQ(groups.axes.count("0"), 1U);
    EXPECT_EQ(groups.axes.count("1"), 1U);
  }
}

TEST(MeshGroups, PermutedExplicitRankMaps) {
  {
    auto m = DeviceMesh::from_ranks({2, 4}, {7, 2, 5, 0, 3, 6, 1, 4}, DeviceMesh::Names{"dp", "tp"});
    (void)m.flatten("all");
    if (fits(m)) check_groups(m);
  }
  {
    auto m = DeviceMesh::from_ranks({2, 2, 2}, {6, 4, 2, 0, 7, 5, 3, 1}, DeviceMesh::Names{"pp", "dp", "tp"});
    (void)m.slice({"pp", "tp"}).flatten();
    if (fits(m)) check_groups(m);
  }
  {
    auto m = DeviceMesh::from_ranks({2, 2}, {3, 0, 2, 1}, DeviceMesh::Names{"dp", "tp"});
    if (fits(m)) check_groups(m);
  }
  {
    // A subset of the world, permuted: ranks 0 and 2 are outside at 4 and 8 ranks.
    auto m = DeviceMesh::from_ranks({2}, {3, 1}, DeviceMesh::Names{"x"});
    if (fits(m)) check_groups(m);
  }
  {
    auto m = DeviceMesh::from_ranks({2, 1}, {1, 0}, DeviceMesh::Names{"dp", "tp"});
    if (fits(m)) check_groups(m);
  }
}

TEST(MeshGroups, FingerprintIsAFunctionOfTheMesh) {
  const auto a = DeviceMesh::init({2, 4}, DeviceMesh::Names{"dp", "tp"});
  const auto b = DeviceMesh::init({2, 4}, DeviceMesh::Names{"dp", "tp"});
  EXPECT_EQ(comm::mesh_fingerprint(a), comm::mesh_fingerprint(b));
  EXPECT_NE(comm::mesh_fingerprint(a), comm::mesh_fingerprint(DeviceMesh::init({2, 4}, DeviceMesh::Names{"dp", "cp"})));
  EXPECT_NE(comm::mesh_fingerprint(a), comm::mesh_fingerprint(DeviceMesh::init({4, 2}, DeviceMesh::Names{"dp", "tp"})));
  EXPECT_NE(comm::mesh_fingerprint(a), comm::mesh_fingerprint(DeviceMesh::init({2, 4})));
  EXPECT_NE(comm::mesh_fingerprint(a),
            comm::mesh_fingerprint(DeviceMesh::from_ranks({2, 4}, {1, 0, 2, 3, 4, 5, 6, 7}, DeviceMesh::Names{"dp", "tp"})));
  const auto before = comm::mesh_fingerprint(b);
  (void)b.flatten();
  EXPECT_NE(comm::mesh_fingerprint(b), before);
  // Every rank computes the same value for the same mesh (it is exchanged as is).
  const auto all = gather_i64(world(), static_cast<std::int64_t>(comm::mesh_fingerprint(a)));
  for (const auto v : all) EXPECT_EQ(v, all[0]);
}

std::string error_of(ErrorKind kind, const DeviceMesh& mesh) {
  try {
    (void)comm::build_mesh_groups(world(), mesh);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error on rank " << world().rank();
  return {};
}

TEST(MeshGroups, MismatchedMeshesFailOnEveryRank) {
  auto& w = world();
  const int n = w.size();
  // The upper half of the ranks names its axes differently.
  const bool upper = w.rank() >= n / 2;
  const auto mesh = DeviceMesh::init({2, n / 2}, upper ? DeviceMesh::Names{"dp", "cp"} : DeviceMesh::Names{"dp", "tp"});
  std::string ranks;
  for (int r = n / 2; r < n; ++r) ranks += (r > n / 2 ? ", " : "") + std::to_string(r);
  const std::string expected = (n / 2 == 1 ? "rank " : "ranks ") + ranks + (n / 2 == 1 ? " holds" : " hold") +
                               " a different mesh than rank 0";
  EXPECT_THAT(error_of(ErrorKind::RuntimeError, mesh),
              AllOf(HasSubstr("the mesh differs between ranks"), HasSubstr(expected)));

  // Only the last rank registers an extra flattened axis.
  auto m2 = DeviceMesh::init({2, n / 2}, DeviceMesh::Names{"dp", "tp"});
  if (w.rank() == n - 1) (void)m2.flatten();
  EXPECT_THAT(error_of(ErrorKind::RuntimeError, m2),
              HasSubstr("rank " + std::to_string(n - 1) + " holds a different mesh than rank 0"));
  // The world still works afterwards: nothing was left half done.
  EXPECT_EQ(gather_i64(w, 1).size(), static_cast<std::size_t>(n));
}

TEST(MeshGroups, MeshLargerThanTheWorld) {
  const int n = world().size();
  const auto mesh = DeviceMesh::init({2, n});
  EXPECT_THAT(error_of(ErrorKind::ValueError, mesh),
              AllOf(HasSubstr("needs a world of " + std::to_string(2 * n) + " ranks"),
                    HasSubstr("has " + std::to_string(n) + " ranks")));
  const auto sparse = DeviceMesh::from_ranks({2}, {0, n + 3});
  EXPECT_THAT(error_of(ErrorKind::ValueError, sparse), HasSubstr("needs a world of " + std::to_string(n + 4)));
}

}  // namespace
}  // namespace meshloom
