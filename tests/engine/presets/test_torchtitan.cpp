// torchtitan ParallelDims: order, names, flattened axes and validation messages. Configurations are those of
// torchtitan's tests/unit_tests/test_parallel_dims.py unless noted.
#include <gtest/gtest.h>

#include <string>

#include "meshloom/error.hpp"
#include "meshloom/presets/presets.hpp"

#include "presets_test_support.hpp"

namespace meshloom {
namespace {

using meshloom::testing::expect_error;

TorchtitanDims dims(std::int64_t dp_replicate, std::int64_t dp_shard, std::int64_t cp, std::int64_t tp,
                    std::int64_t pp, std::int64_t ep, std::int64_t etp, std::int64_t world) {
  return TorchtitanDims{dp_replicate, dp_shard, cp, tp, pp, ep, etp, world};
}

TEST(Torchtitan, BasicHsdpTp) {
  // test_basic_initialization / test_world_size_8_mesh_operations: dp_replicate=2, dp_shard=2, tp=2, world 8.
  const MeshSpec m = torchtitan_mesh(dims(2, 2, 1, 2, 1, 1, 1, 8));
  EXPECT_EQ(m.shape, (std::vector<std::int64_t>{2, 2, 2}));
  EXPECT_EQ(m.names, (std::vector<std::string>{"dp_replicate", "dp_shard", "tp"}));
  EXPECT_EQ(m.flattened, (std::vector<FlattenSpec>{{"dp", {"dp_replicate", "dp_shard"}},
                                                   {"dp_shard_cp", {"dp_shard"}},
                                                   {"dp_cp", {"dp_replicate", "dp_shard"}}}));
}

TEST(Torchtitan, InfersDpShard) {
  // test_auto_calculate_dp_shard.
  EXPECT_EQ(torchtitan_resolve(dims(2, -1, 1, 2, 1, 1, 1, 8)).dp_shard, 2);
  EXPECT_EQ(torchtitan_resolve(dims(1, -1, 1, 8, 1, 1, 1, 64)).dp_shard, 8);
}

TEST(Torchtitan, AllFiveAxes) {
  // test_non_data_parallel_size: dp_replicate=2, dp_shard=2, cp=2, tp=3, pp=2, world 48.
  const MeshSpec m = torchtitan_mesh(dims(2, 2, 2, 3, 2, 1, 1, 48));
  EXPECT_EQ(m.shape, (std::vector<std::int64_t>{2, 2, 2, 2, 3}));
  EXPECT_EQ(m.names, (std::vector<std::string>{"pp", "dp_replicate", "dp_shard", "cp", "tp"}));
  EXPECT_EQ(m.flattened, (std::vector<FlattenSpec>{{"dp", {"dp_replicate", "dp_shard"}},
                                                   {"dp_shard_cp", {"dp_shard", "cp"}},
                                                   {"dp_cp", {"dp_replicate", "dp_shard", "cp"}}}));
}

TEST(Torchtitan, DegreeOneAxesLeftOut) {
  // test_seq_len_divisor: dp_replicate=2, dp_shard=1, cp=2, tp=4, world 16: no dp_shard axis.
  const MeshSpec m = torchtitan_mesh(dims(2, 1, 2, 4, 1, 1, 1, 16));
  EXPECT_EQ(m.shape, (std::vector<std::int64_t>{2, 2, 4}));
  EXPECT_EQ(m.names, (std::vector<std::string>{"dp_replicate", "cp", "tp"}));
  EXPECT_EQ(m.flattened, (std::vector<FlattenSpec>{{"dp", {"dp_replicate"}},
                                                   {"dp_shard_cp", {"cp"}},
                                                   {"dp_cp", {"dp_replicate", "cp"}}}));
}

TEST(Torchtitan, CpOnlyAndPpOnly) {
  // test_enabled_properties: cp=2 world 2; pp=2 world 2.
  const MeshSpec cp = torchtitan_mesh(dims(1, 1, 2, 1, 1, 1, 1, 2));
  EXPECT_EQ(cp.names, (std::vector<std::string>{"cp"}));
  EXPECT_EQ(cp.flattened, (std::vector<FlattenSpec>{{"dp_shard_cp", {"cp"}}, {"dp_cp", {"cp"}}}));
  const MeshSpec pp = torchtitan_mesh(dims(1, 1, 1, 1, 2, 1, 1, 2));
  EXPECT_EQ(pp.names, (std::vector<std::string>{"pp"}));
  EXPECT_TRUE(pp.flattened.empty());
  // test_single_rank_mesh_operations: everything 1 -> no axes.
  const MeshSpec one = torchtitan_mesh(dims(1, 1, 1, 1, 1, 1, 1, 1));
  EXPECT_TRUE(one.shape.empty());
  EXPECT_TRUE(one.flattened.empty());
}

TEST(Torchtitan, FsdpTpPpLlama3Style) {
  // A llama3_70b-style toml: dp_shard = -1, tp = 8, pp = 4 on 256 GPUs.
  const MeshSpec m = torchtitan_mesh(dims(1, -1, 1, 8, 4, 1, 1, 256));
  EXPECT_EQ(m.shape, (std::vector<std::int64_t>{4, 8, 8}));
  EXPECT_EQ(m.names, (std::vector<std::string>{"pp", "dp_shard", "tp"}));
  EXPECT_EQ(m.flattened, (std::vector<FlattenSpec>{
                             {"dp", {"dp_shard"}}, {"dp_shard_cp", {"dp_shard"}}, {"dp_cp", {"dp_shard"}}}));
}

TEST(Torchtitan, ExpertParallelEtp1) {
  // test_enabled_properties: dp_shard=2, ep=2, etp=1, world 2.
  const MeshSpec m = torchtitan_mesh(dims(1, 2, 1, 1, 1, 2, 1, 2));
  EXPECT_EQ(m.shape, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(m.names, (std::vector<std::string>{"dp_shard_mod_ep", "dp_shard_in_ep"}));
  EXPECT_EQ(m.flattened, (std::vector<FlattenSpec>{{"dp", {"dp_shard_mod_ep", "dp_shard_in_ep"}},
                                                   {"dp_shard_cp", {"dp_shard_mod_ep", "dp_shard_in_ep"}},
                                                   {"dp_cp", {"dp_shard_mod_ep", "dp_shard_in_ep"}},
                                                   {"ep", {"dp_shard_in_ep"}}}));
}

TEST(Torchtitan, ExpertParallelBorrowsCpAndTp) {
  // etp == 1 < tp: ep = dp_shard_in_ep * cp * tp. dp_replicate=2, dp_shard=4, cp=2, tp=2, ep=8, world 32.
  const MeshSpec m = torchtitan_mesh(dims(2, 4, 2, 2, 1, 8, 1, 32));
  EXPECT_EQ(m.shape, (std::vector<std::int64_t>{2, 2, 2, 2, 2}));
  EXPECT_EQ(m.names,
            (std::vector<std::string>{"dp_replicate", "dp_shard_mod_ep", "dp_shard_in_ep", "cp", "tp"}));
  EXPECT_EQ(m.flattened.back(), (FlattenSpec{"ep", {"dp_shard_in_ep", "cp", "tp"}}));
  // etp == tp: ep = dp_shard_in_ep * cp, tp stays out of ep. dp_shard=8, cp=2, tp=2, ep=4, pp=2, world 64.
  const MeshSpec n = torchtitan_mesh(dims(1, 8, 2, 2, 2, 4, 2, 64));
  EXPECT_EQ(n.shape, (std::vector<std::int64_t>{2, 4, 2, 2, 2}));
  EXPECT_EQ(n.names, (std::vector<std::string>{"pp", "dp_shard_mod_ep", "dp_shard_in_ep", "cp", "tp"}));
  EXPECT_EQ(n.flattened, (std::vector<FlattenSpec>{{"dp", {"dp_shard_mod_ep", "dp_shard_in_ep"}},
                                                   {"dp_shard_cp", {"dp_shard_mod_ep", "dp_shard_in_ep", "cp"}},
                                                   {"dp_cp", {"dp_shard_mod_ep", "dp_shard_in_ep", "cp"}},
                                                   {"ep", {"dp_shard_in_ep", "cp"}}}));
  // ep == cp: dp_shard_in_ep is 1 and left out; dp_shard_mod_ep kept.
  const MeshSpec k = torchtitan_mesh(dims(1, 4, 2, 1, 1, 2, 1, 8));
  EXPECT_EQ(k.names, (std::vector<std::string>{"dp_shard_mod_ep", "cp"}));
  EXPECT_EQ(k.flattened.back(), (FlattenSpec{"ep", {"cp"}}));
}

TEST(Torchtitan, ValidationMessages) {
  // test_validation_zero_parallelism.
  expect_error([] { (void)torchtitan_mesh(dims(0, 1, 1, 1, 1, 1, 1, 1)); }, ErrorKind::ValueError,
               "Parallelism degree should be >= 1, except for dp_shard");
  expect_error([] { (void)torchtitan_mesh(dims(1, 1, 1, 1, 1, 1, 0, 1)); }, ErrorKind::ValueError,
               "Parallelism degree should be >= 1, except for dp_shard");
  // test_validation_invalid_dp_shard.
  expect_error([] { (void)torchtitan_mesh(dims(1, 0, 1, 1, 1, 1, 1, 1)); }, ErrorKind::ValueError,
               "dp_shard must -1 or >=1.");
  // test_validation_invalid_world_size.
  expect_error([] { (void)torchtitan_mesh(dims(2, 2, 1, 2, 1, 1, 1, 10)); }, ErrorKind::ValueError,
               "Invalid parallel dims: dp_replicate(2) * dp_shard(2) * cp(1) * tp(2) * pp(1) != WORLD_SIZE(10)");
  // Inferred dp_shard that does not fit.
  expect_error([] { (void)torchtitan_mesh(dims(1, -1, 1, 3, 1, 1, 1, 8)); }, ErrorKind::ValueError,
               "Invalid parallel dims: dp_replicate(1) * dp_shard(2) * cp(1) * tp(3) * pp(1) != WORLD_SIZE(8)");
  expect_error([] { (void)torchtitan_mesh(dims(1, -1, 1, 16, 1, 1, 1, 8)); }, ErrorKind::ValueError,
               "Invalid parallel dims: dp_replicate(1) * dp_shard(0) * cp(1) * tp(16) * pp(1) != WORLD_SIZE(8)");
  // test_validation_invalid_etp.
  expect_error([] { (void)torchtitan_mesh(dims(1, 2, 1, 4, 1, 2, 2, 8)); }, ErrorKind::ValueError,
               "Currently we only support ETP=TP or ETP=1");
  // test_expert_parallelism_validation's ep=3 on dp_shard=2: current torchtitan accepts it (its unflattened
  // sparse mesh has no divisibility assert), the dp2ep mesh cannot place it.
  expect_error([] { (void)torchtitan_mesh(dims(2, 2, 1, 1, 1, 3, 1, 4)); }, ErrorKind::ValueError,
               "ep(3) must be a multiple of cp(1) and divide dp_shard(2) * cp(1)");
  expect_error([] { (void)torchtitan_mesh(dims(1, 2, 1, 2, 1, 3, 1, 4)); }, ErrorKind::ValueError,
               "ep(3) must be a multiple of cp(1) * tp(2) and divide dp_shard(2) * cp(1) * tp(2)");
  expect_error([] { (void)torchtitan_mesh(dims(1, 4, 2, 1, 1, 3, 1, 8)); }, ErrorKind::ValueError,
               "ep(3) must be a multiple of cp(2) and divide dp_shard(4) * cp(2)");
  // Typed by hand (the app's preset dialog): a world below 1, and degrees whose product passes 64 bits, which wrapped
  // to 0 and divided by it.
  expect_error([] { (void)torchtitan_mesh(dims(2, -1, 1, 1, 1, 1, 1, 0)); }, ErrorKind::ValueError,
               "WORLD_SIZE must be >= 1, got 0");
  expect_error([] { (void)torchtitan_mesh(dims(1, -1, 1, 4294967296, 4294967296, 1, 1, 8)); }, ErrorKind::ValueError,
               "dp_replicate(1) * cp(1) * tp(4294967296) * pp(4294967296) overflows a 64-bit integer; WORLD_SIZE is 8");
  expect_error([] { (void)torchtitan_mesh(dims(1, 4294967296, 1, 4294967296, 1, 1, 1, 8)); }, ErrorKind::ValueError,
               "Invalid parallel dims: dp_replicate(1) * dp_shard(4294967296) * cp(1) * tp(4294967296) * pp(1) != "
               "WORLD_SIZE(8)");
}

TEST(Torchtitan, EpOneIgnoresEtp) {
  // etp only matters with ep > 1 (torchtitan checks it under "if ep > 1").
  EXPECT_NO_THROW((void)torchtitan_mesh(dims(1, 2, 1, 4, 1, 1, 2, 8)));
}

}  // namespace
}  // namespace meshloom
