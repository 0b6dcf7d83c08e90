// Llama 3 405B presets and the preset registry.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "meshloom/error.hpp"
#include "meshloom/presets/presets.hpp"

#include "presets_test_support.hpp"

namespace meshloom {
namespace {

using meshloom::testing::expect_error;

std::int64_t product(const std::vector<std::int64_t>& v) {
  std::int64_t p = 1;
  for (const auto x : v) p *= x;
  return p;
}

TEST(Llama3, Pretraining405b) {
  const MeshSpec m = llama3_405b_mesh();
  EXPECT_EQ(m, (MeshSpec{{128, 16, 1, 8}, {"dp", "pp", "cp", "tp"}, {}}));
  EXPECT_EQ(product(m.shape), 16384);
}

TEST(Llama3, LongContext405b) {
  const MeshSpec m = llama3_405b_long_context_mesh();
  EXPECT_EQ(m, (MeshSpec{{8, 16, 16, 8}, {"dp", "pp", "cp", "tp"}, {}}));
  EXPECT_EQ(product(m.shape), 16384);
}

TEST(Llama3, EqualsMegatronOrderTpCpPpDp) {
  // [TP, CP, PP, DP] inner -> outer is the Megatron order "tp-cp-pp-dp".
  const MegatronConfig c{.tp = 8, .cp = 1, .dp = 128, .pp = 16, .world_size = 16384, .order = "tp-cp-pp-dp"};
  const MeshSpec m = megatron_mesh(c);
  EXPECT_EQ(m.shape, (std::vector<std::int64_t>{1, 128, 16, 1, 8}));  // ep appended as size 1, outermost
  EXPECT_EQ(m.names, (std::vector<std::string>{"ep", "dp", "pp", "cp", "tp"}));
}

TEST(Registry, ListsAllPresets) {
  const auto presets = list_presets();
  std::set<std::string> names;
  for (const auto& p : presets) {
    EXPECT_FALSE(p.description.empty()) << p.name;
    EXPECT_TRUE(names.insert(p.name).second) << p.name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"torchtitan", "olmo_core[:fsdp|:ddp|:hsdp]", "megatron[:<order>]",
                                          "jax:<name,name,...>", "jax_hybrid:<name,name,...>", "llama3_405b",
                                          "llama3_405b_long_context"}));
}

TEST(Registry, BuildsEachPreset) {
  EXPECT_EQ(build_preset("torchtitan", {{"world_size", 8}, {"tp", 2}}),
            torchtitan_mesh(TorchtitanDims{.tp = 2, .world_size = 8}));
  EXPECT_EQ(build_preset("olmo_core", {{"world_size", 8}, {"tp", 2}}), (MeshSpec{{4, 2}, {"dp", "tp"}, {}}));
  EXPECT_EQ(build_preset("olmo_core:hsdp", {{"world_size", 16}, {"shard_degree", 8}}).names,
            (std::vector<std::string>{"dp_replicate", "dp_shard"}));
  EXPECT_EQ(build_preset("olmo_core:ddp", {{"world_size", 4}}), (MeshSpec{{4}, {"dp"}, {}}));
  EXPECT_EQ(build_preset("megatron", {{"world_size", 16}, {"tp", 2}, {"pp", 4}}).shape,
            (std::vector<std::int64_t>{4, 2, 1, 1, 2}));
  EXPECT_EQ(build_preset("megatron:tp-pp-dp", {{"world_size", 16}, {"tp", 2}, {"pp", 4}}).names,
            (std::vector<std::string>{"cp", "ep", "dp", "pp", "tp"}));
  EXPECT_EQ(build_preset("jax:data,model", {{"data", 2}, {"model", 4}}), (MeshSpec{{2, 4}, {"data", "model"}, {}}));
  EXPECT_EQ(build_preset("jax_hybrid:data,model", {{"data", 1}, {"model", 8}, {"dcn_data", 2}}),
            jax_hybrid_device_mesh({1, 8}, {2, 1}, {"data", "model"}).placement);
  EXPECT_EQ(build_preset("llama3_405b", {}), llama3_405b_mesh());
  EXPECT_EQ(build_preset("llama3_405b_long_context", {}), llama3_405b_long_context_mesh());
}

TEST(Registry, Errors) {
  expect_error([] { (void)build_preset("deepspeed", {}); }, ErrorKind::KeyError,
               "Unknown preset 'deepspeed'; available: torchtitan, olmo_core[:fsdp|:ddp|:hsdp], megatron[:<order>], "
               "jax:<name,name,...>, jax_hybrid:<name,name,...>, llama3_405b, llama3_405b_long_context");
  expect_error([] { (void)build_preset("torchtitan", {{"world_size", 8}, {"dp", 2}}); }, ErrorKind::KeyError,
               "Unknown degree 'dp' for preset 'torchtitan'; accepted: world_size, dp_replicate, dp_shard, cp, tp, "
               "pp, ep, etp");
  expect_error([] { (void)build_preset("torchtitan", {{"tp", 2}}); }, ErrorKind::KeyError,
               "Preset 'torchtitan' requires degree 'world_size'");
  expect_error([] { (void)build_preset("llama3_405b", {{"tp", 8}}); }, ErrorKind::KeyError,
               "Unknown degree 'tp' for preset 'llama3_405b'; accepted: none");
  expect_error([] { (void)build_preset("jax", {{"data", 2}}); }, ErrorKind::ValueError,
               "Preset 'jax' needs axis names after ':', e.g. 'jax:data,model'");
  expect_error([] { (void)build_preset("jax:data,model", {{"data", 2}}); }, ErrorKind::KeyError,
               "Preset 'jax' requires degree 'model'");
  expect_error([] { (void)build_preset("olmo_core:zero3", {{"world_size", 8}}); }, ErrorKind::ValueError,
               "Unknown data parallel type 'zero3' for preset 'olmo_core'; expected fsdp, ddp or hsdp");
  expect_error([] { (void)build_preset("torchtitan:x", {{"world_size", 8}}); }, ErrorKind::ValueError,
               "Preset 'torchtitan' takes no argument, got 'torchtitan:x'");
  // The preset's own validation comes through.
  expect_error([] { (void)build_preset("torchtitan", {{"world_size", 10}, {"dp_shard", 2}, {"tp", 2}}); },
               ErrorKind::ValueError,
               "Invalid parallel dims: dp_replicate(1) * dp_shard(2) * cp(1) * tp(2) * pp(1) != WORLD_SIZE(10)");
}

}  // namespace
}  // namespace meshloom
