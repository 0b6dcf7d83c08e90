// OLMo-core build_world_mesh: order, names, flattened axes and every validation message of
// olmo_core/distributed/parallel/__init__.py and data_parallel.py.
#include <gtest/gtest.h>

#include <string>

#include "meshloom/error.hpp"
#include "meshloom/presets/presets.hpp"

#include "presets_test_support.hpp"

namespace meshloom {
namespace {

using meshloom::testing::expect_error;

OlmoDataParallel fsdp() { return OlmoDataParallel{OlmoDataParallelType::fsdp, std::nullopt, std::nullopt}; }
OlmoDataParallel ddp() { return OlmoDataParallel{OlmoDataParallelType::ddp, std::nullopt, std::nullopt}; }
OlmoDataParallel hsdp(std::optional<std::int64_t> replicas, std::optional<std::int64_t> shard) {
  return OlmoDataParallel{OlmoDataParallelType::hsdp, replicas, shard};
}

TEST(OlmoCore, NoConfigIsOneDimensionalDp) {
  const MeshSpec m = olmo_core_mesh(OlmoConfig{.world_size = 8});
  EXPECT_EQ(m, (MeshSpec{{8}, {"dp"}, {}}));
}

TEST(OlmoCore, FsdpAndDdp) {
  EXPECT_EQ(olmo_core_mesh(OlmoConfig{.world_size = 8, .dp = fsdp()}), (MeshSpec{{8}, {"dp"}, {}}));
  EXPECT_EQ(olmo_core_mesh(OlmoConfig{.world_size = 4, .dp = ddp()}), (MeshSpec{{4}, {"dp"}, {}}));
}

TEST(OlmoCore, FsdpTp) {
  // OLMo-core's test_build_world_mesh style: fsdp + tp=2 on 8 ranks.
  const MeshSpec m = olmo_core_mesh(OlmoConfig{.world_size = 8, .dp = fsdp(), .tp = 2});
  EXPECT_EQ(m, (MeshSpec{{4, 2}, {"dp", "tp"}, {}}));
}

TEST(OlmoCore, FullOrderPpDpCpTp) {
  const MeshSpec m = olmo_core_mesh(OlmoConfig{.world_size = 64, .dp = fsdp(), .tp = 2, .cp = 4, .pp = 2});
  EXPECT_EQ(m.shape, (std::vector<std::int64_t>{2, 4, 4, 2}));
  EXPECT_EQ(m.names, (std::vector<std::string>{"pp", "dp", "cp", "tp"}));
  EXPECT_EQ(m.flattened, (std::vector<FlattenSpec>{{"dp_cp", {"dp", "cp"}}}));
}

TEST(OlmoCore, DegreeOneConfigKeepsAxis) {
  const MeshSpec m = olmo_core_mesh(OlmoConfig{.world_size = 8, .dp = fsdp(), .tp = 1});
  EXPECT_EQ(m, (MeshSpec{{8, 1}, {"dp", "tp"}, {}}));
}

TEST(OlmoCore, Hsdp) {
  // Explicit shard degree.
  const MeshSpec m = olmo_core_mesh(OlmoConfig{.world_size = 16, .dp = hsdp(std::nullopt, 4), .cp = 2});
  EXPECT_EQ(m.shape, (std::vector<std::int64_t>{2, 4, 2}));
  EXPECT_EQ(m.names, (std::vector<std::string>{"dp_replicate", "dp_shard", "cp"}));
  EXPECT_EQ(m.flattened, (std::vector<FlattenSpec>{{"dp", {"dp_replicate", "dp_shard"}}, {"dp_cp", {"dp_shard", "cp"}}}));
  // Defaults: one replica per node.
  const MeshSpec d = olmo_core_mesh(OlmoConfig{.world_size = 32, .dp = hsdp(std::nullopt, std::nullopt), .num_nodes = 4});
  EXPECT_EQ(d.shape, (std::vector<std::int64_t>{4, 8}));
  EXPECT_EQ(d.flattened, (std::vector<FlattenSpec>{{"dp", {"dp_replicate", "dp_shard"}}}));
  // num_replicas only, with pp.
  const MeshSpec r = olmo_core_mesh(OlmoConfig{.world_size = 32, .dp = hsdp(2, std::nullopt), .pp = 2});
  EXPECT_EQ(r.shape, (std::vector<std::int64_t>{2, 2, 8}));
  EXPECT_EQ(r.names, (std::vector<std::string>{"pp", "dp_replicate", "dp_shard"}));
  // Both.
  const MeshSpec b = olmo_core_mesh(OlmoConfig{.world_size = 16, .dp = hsdp(4, 4)});
  EXPECT_EQ(b.shape, (std::vector<std::int64_t>{4, 4}));
}

TEST(OlmoCore, HsdpExpertParallelReusesDpShard) {
  // MoE: HSDP shard degree 8 = ep 8, no ep axis.
  const MeshSpec m = olmo_core_mesh(OlmoConfig{.world_size = 32, .dp = hsdp(std::nullopt, 8), .ep = 8});
  EXPECT_EQ(m.shape, (std::vector<std::int64_t>{4, 8}));
  EXPECT_EQ(m.names, (std::vector<std::string>{"dp_replicate", "dp_shard"}));
  // ep = -1: "the shard degree".
  const MeshSpec n = olmo_core_mesh(OlmoConfig{.world_size = 32, .dp = hsdp(std::nullopt, 8), .ep = -1});
  EXPECT_EQ(n.shape, (std::vector<std::int64_t>{4, 8}));
}

TEST(OlmoCore, ValidationMessages) {
  expect_error([] { (void)olmo_core_mesh(OlmoConfig{.world_size = 8, .tp = 2}); }, ErrorKind::ValueError,
               "Data parallel config is required in addition to expert/tensor/context/pipeline parallel configs");
  expect_error([] { (void)olmo_core_mesh(OlmoConfig{.world_size = 8, .dp = fsdp(), .pp = 3}); }, ErrorKind::ValueError,
               "PipelineParallelConfig.degree must be at least 1 and divide into the world size");
  expect_error([] { (void)olmo_core_mesh(OlmoConfig{.world_size = 8, .dp = fsdp(), .pp = 0}); }, ErrorKind::ValueError,
               "PipelineParallelConfig.degree must be at least 1 and divide into the world size");
  // cp divides what pp left: 8 / 4 = 2, cp 4 does not divide 2.
  expect_error([] { (void)olmo_core_mesh(OlmoConfig{.world_size = 8, .dp = fsdp(), .cp = 4, .pp = 4}); },
               ErrorKind::ValueError, "ContextParallelConfig.degree must be at least 1 and divide into the world size");
  expect_error([] { (void)olmo_core_mesh(OlmoConfig{.world_size = 8, .dp = fsdp(), .tp = 16}); }, ErrorKind::ValueError,
               "TensorParallelConfig.degree must be at least 1 and divide into the world size");
  expect_error([] { (void)olmo_core_mesh(OlmoConfig{.world_size = 8, .dp = hsdp(std::nullopt, 4), .ep = 0}); },
               ErrorKind::ValueError, "ExpertParallelConfig.degree must be at least 1 and divide into the world size");
  expect_error([] { (void)olmo_core_mesh(OlmoConfig{.world_size = 8, .dp = hsdp(std::nullopt, 4), .ep = 3}); },
               ErrorKind::ValueError, "ExpertParallelConfig.degree must be at least 1 and divide into the world size");
  // Python: 8 % -3 == -1, so a negative degree that does not divide is refused (-1 passes: 8 % -1 == 0).
  expect_error([] { (void)olmo_core_mesh(OlmoConfig{.world_size = 8, .dp = hsdp(std::nullopt, 8), .ep = -3}); },
               ErrorKind::ValueError, "ExpertParallelConfig.degree must be at least 1 and divide into the world size");
  expect_error([] { (void)olmo_core_mesh(OlmoConfig{.world_size = 0, .dp = fsdp(), .tp = 2}); }, ErrorKind::ValueError,
               "world size must be >= 1, got 0");
  expect_error([] { (void)olmo_core_mesh(OlmoConfig{.world_size = -8}); }, ErrorKind::ValueError,
               "world size must be >= 1, got -8");
  expect_error([] { (void)olmo_core_mesh(OlmoConfig{.world_size = 8, .dp = hsdp(std::nullopt, 2), .tp = 2, .ep = 2}); },
               ErrorKind::ValueError, "expert parallelism is mutually exclusive with tensor parallism");
  expect_error([] { (void)olmo_core_mesh(OlmoConfig{.world_size = 8, .dp = fsdp(), .ep = 2}); }, ErrorKind::ValueError,
               "expert parallelism can currently only be used with HSDP data parallelism");
  expect_error([] { (void)olmo_core_mesh(OlmoConfig{.world_size = 8, .dp = hsdp(std::nullopt, 4), .ep = 2}); },
               ErrorKind::ValueError, "expert parallelism + HSDP requires the same sharding degree");
  expect_error([] { (void)olmo_core_mesh(OlmoConfig{.world_size = 8, .dp = hsdp(3, std::nullopt)}); },
               ErrorKind::ValueError, "data parallel world size (8) must be divisible by 'num_replicas' (3)");
  expect_error([] { (void)olmo_core_mesh(OlmoConfig{.world_size = 8, .dp = hsdp(std::nullopt, 3)}); },
               ErrorKind::ValueError, "data parallel world size (8) must be divisible by 'shard_degree' (3)");
  expect_error([] { (void)olmo_core_mesh(OlmoConfig{.world_size = 8, .dp = hsdp(2, 2)}); }, ErrorKind::ValueError,
               "HSDP num_replicas (2) * shard_degree (2) = 4 does not equal the data parallel world size (8)");
  expect_error([] { (void)olmo_core_mesh(OlmoConfig{.world_size = 8, .dp = hsdp(std::nullopt, std::nullopt), .num_nodes = 3}); },
               ErrorKind::ValueError,
               "HSDP num_replicas (3) * shard_degree (2) = 6 does not equal the data parallel world size (8)");
}

}  // namespace
}  // namespace meshloom
