// Workload expansion (workload/workload.hpp): every formula of the header (and of docs/04-planner.md, "Workloads")
// against numbers computed by hand: shapes, states, the bytes one rank holds before and after, and counts per step.
// Llama 3 8B on (dp 2, tp 4) is the worked example: L = 32, h = 4096, f = 14336, H = 32, K = 8, d = 128, V = 128256,
// s = 8192, b = 1.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "meshloom/design/design.hpp"
#include "meshloom/error.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "meshloom/plan/planner.hpp"
#include "meshloom/workload/workload.hpp"
#include "support/expect_error.hpp"

#ifndef MESHLOOM_EXAMPLES_DIR
#error "MESHLOOM_EXAMPLES_DIR must name resources/examples"
#endif
#ifndef MESHLOOM_DOCS_DIR
#error "MESHLOOM_DOCS_DIR must name docs"
#endif

namespace meshloom {
namespace {

namespace fs = std::filesystem;
using testing::expect_error;

constexpr std::int64_t MiB = std::int64_t{1} << 20;

// A design over exactly the mesh's ranks whose workload is `model`.
Design model_design(std::vector<std::int64_t> shape, std::vector<std::string> names, std::int64_t devices_per_host,
                    const ModelSpec& model) {
  Design d;
  d.name = "workload test";
  d.world = 1;
  for (std::int64_t s : shape) d.world *= s;
  d.devices_per_host = devices_per_host;
  d.mesh.shape = std::move(shape);
  d.mesh.names = std::move(names);
  d.workload = Workload{{}, model};
  validate_design(d);
  return d;
}

ModelSpec llama8b(ModelAxes axes, bool sequence_parallel = true, std::int64_t micro_batches = 1) {
  ModelSpec m = llama3_model("llama3_8b");
  m.axes = std::move(axes);
  m.sequence_parallel = sequence_parallel;
  m.micro_batches = micro_batches;
  return m;
}

// The item named `name` of `category`; a failure (and an empty item) when there is none.
WorkItem find(const std::vector<WorkItem>& items, std::string_view name, std::string_view category) {
  for (const WorkItem& w : items) {
    if (w.name == name && w.category == category) return w;
  }
  ADD_FAILURE() << "no item " << name << " (" << category << ")";
  return {};
}

bool has(const std::vector<WorkItem>& items, std::string_view name, std::string_view category) {
  for (const WorkItem& w : items) {
    if (w.name == name && w.category == category) return true;
  }
  return false;
}

std::set<std::string> categories(const std::vector<WorkItem>& items) {
  std::set<std::string> out;
  for (const WorkItem& w : items) out.insert(w.category);
  return out;
}

// Bytes the rank at coordinate 0 holds in `state` (the largest shard under torch.chunk).
std::int64_t local_bytes(const WorkItem& w, const State& state, const MeshSpec& mesh) {
  std::int64_t bytes = itemsize(w.dtype);
  for (std::int64_t d : local_shape(state, w.shape, mesh.shape, std::vector<std::int64_t>(mesh.shape.size(), 0))) bytes *= d;
  return bytes;
}

// Checks an item's shape, dtype, states (text form) and count.
void expect_item(const WorkItem& w, const std::vector<std::int64_t>& shape, DType dtype, std::string_view src,
                 std::string_view dst, std::int64_t count) {
  SCOPED_TRACE(w.name + " " + w.category);
  EXPECT_EQ(w.kind, WorkItemKind::Redistribution);
  EXPECT_EQ(w.shape, shape);
  EXPECT_EQ(w.dtype, dtype);
  EXPECT_EQ(to_string(w.src), src);
  EXPECT_EQ(to_string(w.dst), dst);
  EXPECT_EQ(w.count, count);
}

// ---- Presets ------------------------------------------------------------------------------------------------

TEST(ModelPresets, Llama3Numbers) {
  EXPECT_EQ(model_preset_names(), (std::vector<std::string>{"llama3_8b", "llama3_70b", "llama3_405b"}));
  const ModelSpec m8 = llama3_model("llama3_8b");
  EXPECT_EQ(m8.layers, 32);
  EXPECT_EQ(m8.hidden, 4096);
  EXPECT_EQ(m8.ffn, 14336);
  EXPECT_EQ(m8.heads, 32);
  EXPECT_EQ(m8.kv_heads, 8);
  EXPECT_EQ(m8.vocab, 128256);
  EXPECT_EQ(m8.seq_len, 8192);
  EXPECT_EQ(m8.micro_batch, 1);
  EXPECT_EQ(m8.micro_batches, 1);
  EXPECT_EQ(m8.dtype, DType::BFloat16);
  EXPECT_EQ(m8.grad_dtype, DType::Float32);
  EXPECT_EQ(m8.experts, 0);
  EXPECT_EQ(m8.top_k, 0);
  EXPECT_TRUE(m8.sequence_parallel);
  EXPECT_EQ(m8.axes, ModelAxes{});
  const ModelSpec m70 = llama3_model("llama3_70b");
  EXPECT_EQ((std::vector<std::int64_t>{m70.layers, m70.hidden, m70.ffn, m70.heads, m70.kv_heads, m70.vocab}),
            (std::vector<std::int64_t>{80, 8192, 28672, 64, 8, 128256}));
  const ModelSpec m405 = llama3_model("llama3_405b");
  EXPECT_EQ((std::vector<std::int64_t>{m405.layers, m405.hidden, m405.ffn, m405.heads, m405.kv_heads, m405.vocab}),
            (std::vector<std::int64_t>{126, 16384, 53248, 128, 8, 128256}));
  expect_error([] { (void)llama3_model("llama2_7b"); }, ErrorKind::KeyError,
               {"unknown model preset \"llama2_7b\"; known: llama3_8b, llama3_70b, llama3_405b"});
}

// The weights of the expansion hold every parameter of the model but the norms (2h per layer and h at the end):
// Llama 3's published sizes.
TEST(ModelPresets, WeightsAddUpToTheParameterCounts) {
  const std::map<std::string, std::int64_t> expected = {
      // 32 * (6144*4096 + 4096*4096 + 28672*4096 + 4096*14336) + 2 * 128256*4096
      {"llama3_8b", 8'029'995'008},
      // 80 * (10240*8192 + 8192*8192 + 57344*8192 + 8192*28672) + 2 * 128256*8192
      {"llama3_70b", 70'552'387'584},
      // 126 * (18432*16384 + 16384*16384 + 106496*16384 + 16384*53248) + 2 * 128256*16384
      {"llama3_405b", 405'849'243'648},
  };
  for (const auto& [name, parameters] : expected) {
    SCOPED_TRACE(name);
    ModelSpec m = llama3_model(name);
    m.axes.fsdp = {"dp"};
    const Design d = model_design({2}, {"dp"}, 2, m);
    std::int64_t total = 0;
    for (const WorkItem& w : expand_workload(d)) {
      if (w.category != "fsdp_all_gather") continue;
      std::int64_t numel = 1;
      for (std::int64_t s : w.shape) numel *= s;
      total += numel * (w.name.starts_with("layers.") ? m.layers : 1);
    }
    EXPECT_EQ(total, parameters);
    const std::int64_t norms = m.layers * 2 * m.hidden + m.hidden;
    if (name == "llama3_8b") {
      EXPECT_EQ(total + norms, 8'030'261'248);  // Llama 3 8B: 8.03B parameters
    }
  }
}

TEST(DefaultModelAxes, ByAxisName) {
  MeshSpec titan{{2, 2, 4, 2, 2}, {"pp", "dp_replicate", "dp_shard", "cp", "tp"}, {}};
  EXPECT_EQ(default_model_axes(titan), (ModelAxes{{"dp_shard"}, {"dp_replicate"}, "tp", "cp", "", "pp"}));
  EXPECT_EQ(default_model_axes(MeshSpec{{2, 4}, {"dp", "tp"}, {}}), (ModelAxes{{"dp"}, {}, "tp", "", "", ""}));
  EXPECT_EQ(default_model_axes(MeshSpec{{2, 4}, {"dp_shard_mod_ep", "dp_shard_in_ep"}, {}}),
            (ModelAxes{{"dp_shard_mod_ep", "dp_shard_in_ep"}, {}, "", "", "dp_shard_in_ep", ""}));
  EXPECT_EQ(default_model_axes(MeshSpec{{2, 2, 2}, {"ddp", "fsdp", "ep"}, {}}), (ModelAxes{{"fsdp"}, {"ddp"}, "", "", "ep", ""}));
  EXPECT_EQ(default_model_axes(MeshSpec{{4, 2}, {"data", "model"}, {}}), ModelAxes{});
  // The defaults are valid roles on their mesh.
  ModelSpec m = llama3_model("llama3_8b");
  m.axes = default_model_axes(titan);
  EXPECT_NO_THROW((void)model_design(titan.shape, titan.names, 8, m));
}

// ---- FSDP and tensor parallel: Llama 3 8B on (dp 2, tp 4) -------------------------------------------------

// MiB with at most two decimals, trailing zeros dropped: 6, 125.25, 250.5.
std::string mib(std::int64_t bytes) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(2) << static_cast<double>(bytes) / static_cast<double>(MiB);
  std::string text = out.str();
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// The worked example's table in docs/04-planner.md ("Worked example: Llama 3 8B on (dp 2, tp 4)") is this
// expansion of resources/examples/llama3-8b.meshloom.json, row for row.
TEST(ExpandFsdpTp, TheDocsTableIsTheExpansionOfTheExample) {
  const Design d = load_design(fs::path(MESHLOOM_EXAMPLES_DIR) / "llama3-8b.meshloom.json");
  std::vector<std::vector<std::string>> rows = {{"item", "category", "shape", "src -> dst", "MiB per rank", "count"}};
  for (const WorkItem& w : expand_workload(d)) {
    rows.push_back({w.name, w.category, shape_text(w.shape), to_string(w.src) + " -> " + to_string(w.dst),
                    mib(local_bytes(w, w.src, d.mesh)) + " -> " + mib(local_bytes(w, w.dst, d.mesh)),
                    std::to_string(w.count)});
  }
  std::vector<std::size_t> width(6, 0);
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < 6; ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string table;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < 6; ++i) {
      const std::string pad(width[i] - row[i].size(), ' ');
      line += (i ? "  " : "") + (i < 4 ? row[i] + pad : pad + row[i]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    table += line + "\n";
  }
  std::ifstream in(fs::path(MESHLOOM_DOCS_DIR) / "04-planner.md");
  std::stringstream page;
  page << in.rdbuf();
  const std::string text = page.str();
  const std::size_t section = text.find("### Worked example: Llama 3 8B on (dp 2, tp 4)");
  ASSERT_NE(section, std::string::npos);
  const std::size_t start = text.find("```text\n", section);
  ASSERT_NE(start, std::string::npos);
  const std::size_t end = text.find("```\n", start + 8);
  EXPECT_EQ(text.substr(start + 8, end - start - 8), table);
}

TEST(ExpandFsdpTp, Llama8bItemsInOrder) {
  const Design d = model_design({2, 4}, {"dp", "tp"}, 4, llama8b({{"dp"}, {}, "tp", "", "", ""}));
  std::vector<std::pair<std::string, std::string>> names;
  for (const WorkItem& w : expand_workload(d)) names.emplace_back(w.name, w.category);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"embedding", "fsdp_all_gather"},
      {"embedding.grad", "fsdp_reduce_scatter"},
      {"layers.wqkv", "fsdp_all_gather"},
      {"layers.wqkv.grad", "fsdp_reduce_scatter"},
      {"layers.wo", "fsdp_all_gather"},
      {"layers.wo.grad", "fsdp_reduce_scatter"},
      {"layers.w13", "fsdp_all_gather"},
      {"layers.w13.grad", "fsdp_reduce_scatter"},
      {"layers.w2", "fsdp_all_gather"},
      {"layers.w2.grad", "fsdp_reduce_scatter"},
      {"output", "fsdp_all_gather"},
      {"output.grad", "fsdp_reduce_scatter"},
      {"layers.tp_activation", "sp_all_gather"},
      {"layers.tp_activation", "sp_reduce_scatter"},
      {"embedding.tp_activation", "sp_all_gather"},
      {"embedding.tp_activation", "sp_reduce_scatter"},
      {"output.tp_activation", "sp_all_gather"},
      {"output.tp_activation", "sp_reduce_scatter"},
  };
  EXPECT_EQ(names, expected);
}

TEST(ExpandFsdpTp, Llama8bWeights) {
  const Design d = model_design({2, 4}, {"dp", "tp"}, 4, llama8b({{"dp"}, {}, "tp", "", "", ""}));
  const auto items = expand_workload(d);
  const MeshSpec& mesh = d.mesh;
  // wqkv [(32 + 2*8) * 128, 4096] = [6144, 4096], 48 MiB in bfloat16: tp shards the rows 4 ways (1536), FSDP then
  // halves a tp shard (768): 768 * 4096 * 2 = 6 MiB per rank, 12 MiB once gathered. 2 gathers per layer (forward,
  // backward) in each of 32 layers: 64.
  const WorkItem wqkv = find(items, "layers.wqkv", "fsdp_all_gather");
  expect_item(wqkv, {6144, 4096}, DType::BFloat16, "S(0)[1]S(0)[0]", "RS(0)", 64);
  EXPECT_EQ(local_bytes(wqkv, wqkv.src, mesh), 6 * MiB);
  EXPECT_EQ(local_bytes(wqkv, wqkv.dst, mesh), 12 * MiB);
  // Its gradient in float32, reduce-scattered once per micro-batch per layer: 32; 24 MiB -> 12 MiB.
  const WorkItem wqkv_grad = find(items, "layers.wqkv.grad", "fsdp_reduce_scatter");
  expect_item(wqkv_grad, {6144, 4096}, DType::Float32, "P(sum)S(0)", "S(0)[1]S(0)[0]", 32);
  EXPECT_EQ(local_bytes(wqkv_grad, wqkv_grad.src, mesh), 24 * MiB);
  EXPECT_EQ(local_bytes(wqkv_grad, wqkv_grad.dst, mesh), 12 * MiB);
  // wo [4096, 4096] row-parallel: tp on dim 1 (1024 columns), FSDP on dim 0 (2048 rows): 4 MiB -> 8 MiB.
  const WorkItem wo = find(items, "layers.wo", "fsdp_all_gather");
  expect_item(wo, {4096, 4096}, DType::BFloat16, "S(0)S(1)", "RS(1)", 64);
  EXPECT_EQ(local_bytes(wo, wo.src, mesh), 4 * MiB);
  EXPECT_EQ(local_bytes(wo, wo.dst, mesh), 8 * MiB);
  expect_item(find(items, "layers.wo.grad", "fsdp_reduce_scatter"), {4096, 4096}, DType::Float32, "P(sum)S(1)", "S(0)S(1)",
              32);
  // w13 [2 * 14336, 4096]: 28672 / 8 = 3584 rows per rank: 28 MiB -> 56 MiB.
  const WorkItem w13 = find(items, "layers.w13", "fsdp_all_gather");
  expect_item(w13, {28672, 4096}, DType::BFloat16, "S(0)[1]S(0)[0]", "RS(0)", 64);
  EXPECT_EQ(local_bytes(w13, w13.src, mesh), 28 * MiB);
  EXPECT_EQ(local_bytes(w13, w13.dst, mesh), 56 * MiB);
  // w2 [4096, 14336]: 2048 x 3584 per rank: 14 MiB -> 28 MiB.
  const WorkItem w2 = find(items, "layers.w2", "fsdp_all_gather");
  expect_item(w2, {4096, 14336}, DType::BFloat16, "S(0)S(1)", "RS(1)", 64);
  EXPECT_EQ(local_bytes(w2, w2.src, mesh), 14 * MiB);
  EXPECT_EQ(local_bytes(w2, w2.dst, mesh), 28 * MiB);
  expect_item(find(items, "layers.w2.grad", "fsdp_reduce_scatter"), {4096, 14336}, DType::Float32, "P(sum)S(1)",
              "S(0)S(1)", 32);
  // embedding and output [128256, 4096], vocab-parallel: 128256 / 8 = 16032 rows, 16032 * 4096 * 2 bytes; gathered
  // twice per micro-batch, their gradients reduce-scattered once.
  for (const char* name : {"embedding", "output"}) {
    const WorkItem w = find(items, name, "fsdp_all_gather");
    expect_item(w, {128256, 4096}, DType::BFloat16, "S(0)[1]S(0)[0]", "RS(0)", 2);
    EXPECT_EQ(local_bytes(w, w.src, mesh), 16032 * 4096 * 2);
    EXPECT_EQ(local_bytes(w, w.dst, mesh), 32064 * 4096 * 2);
    expect_item(find(items, std::string(name) + ".grad", "fsdp_reduce_scatter"), {128256, 4096}, DType::Float32,
                "P(sum)S(0)", "S(0)[1]S(0)[0]", 1);
  }
  EXPECT_FALSE(has(items, "layers.wqkv.grad", "dp_all_reduce"));  // no other data axis
}

TEST(ExpandFsdpTp, Llama8bSequenceParallelActivations) {
  const Design d = model_design({2, 4}, {"dp", "tp"}, 4, llama8b({{"dp"}, {}, "tp", "", "", ""}));
  const auto items = expand_workload(d);
  // The activations of the 2 dp ranks' micro-batches [1 * 2, 8192, 4096], dim 0 on dp: each tp group all-gathers
  // its [1, 8192, 4096] = 64 MiB from 16 MiB sequence shards. 4 per layer per micro-batch: 4 * 1 * 32 = 128.
  const WorkItem ag = find(items, "layers.tp_activation", "sp_all_gather");
  expect_item(ag, {2, 8192, 4096}, DType::BFloat16, "S(0)S(1)", "S(0)R", 128);
  EXPECT_EQ(local_bytes(ag, ag.src, d.mesh), 16 * MiB);
  EXPECT_EQ(local_bytes(ag, ag.dst, d.mesh), 64 * MiB);
  const WorkItem rs = find(items, "layers.tp_activation", "sp_reduce_scatter");
  expect_item(rs, {2, 8192, 4096}, DType::BFloat16, "S(0)P(sum)", "S(0)S(1)", 128);
  EXPECT_EQ(local_bytes(rs, rs.src, d.mesh), 64 * MiB);
  // The embedding (forward reduce-scatter, backward all-gather) and the output projection (forward all-gather,
  // backward reduce-scatter): one of each per micro-batch.
  for (const char* name : {"embedding.tp_activation", "output.tp_activation"}) {
    expect_item(find(items, name, "sp_all_gather"), {2, 8192, 4096}, DType::BFloat16, "S(0)S(1)", "S(0)R", 1);
    expect_item(find(items, name, "sp_reduce_scatter"), {2, 8192, 4096}, DType::BFloat16, "S(0)P(sum)", "S(0)S(1)", 1);
  }
  EXPECT_FALSE(has(items, "layers.tp_activation", "tp_all_reduce"));
}

TEST(ExpandFsdpTp, Llama8bWithoutSequenceParallel) {
  const Design d = model_design({2, 4}, {"dp", "tp"}, 4, llama8b({{"dp"}, {}, "tp", "", "", ""}, false));
  const auto items = expand_workload(d);
  const WorkItem ar = find(items, "layers.tp_activation", "tp_all_reduce");
  expect_item(ar, {2, 8192, 4096}, DType::BFloat16, "S(0)P(sum)", "S(0)R", 128);
  EXPECT_EQ(local_bytes(ar, ar.src, d.mesh), 64 * MiB);
  EXPECT_EQ(local_bytes(ar, ar.dst, d.mesh), 64 * MiB);
  expect_item(find(items, "embedding.tp_activation", "tp_all_reduce"), {2, 8192, 4096}, DType::BFloat16, "S(0)P(sum)",
              "S(0)R", 1);
  expect_item(find(items, "output.tp_activation", "tp_all_reduce"), {2, 8192, 4096}, DType::BFloat16, "S(0)P(sum)",
              "S(0)R", 1);
  EXPECT_EQ(categories(items), (std::set<std::string>{"fsdp_all_gather", "fsdp_reduce_scatter", "tp_all_reduce"}));
}

TEST(ExpandFsdpTp, GradientAccumulationMultipliesPerMicroBatchCounts) {
  // 4 micro-batches, no pipeline: gathers 2 * 4 * 32 = 256, gradient reduce-scatters 4 * 32 = 128 (FSDP2 reduces
  // after every micro-batch), tp activations 4 * 4 * 32 = 512, embedding gathers 2 * 4 = 8.
  const Design d = model_design({2, 4}, {"dp", "tp"}, 4, llama8b({{"dp"}, {}, "tp", "", "", ""}, true, 4));
  const auto items = expand_workload(d);
  EXPECT_EQ(find(items, "layers.wqkv", "fsdp_all_gather").count, 256);
  EXPECT_EQ(find(items, "layers.wqkv.grad", "fsdp_reduce_scatter").count, 128);
  EXPECT_EQ(find(items, "layers.tp_activation", "sp_all_gather").count, 512);
  EXPECT_EQ(find(items, "embedding", "fsdp_all_gather").count, 8);
  EXPECT_EQ(find(items, "embedding.grad", "fsdp_reduce_scatter").count, 4);
  EXPECT_EQ(find(items, "output.tp_activation", "sp_reduce_scatter").count, 4);
}

// ---- Data parallelism: DDP, FSDP, HSDP on (dp_replicate 2, dp_shard 4), 2 micro-batches ------------------------

TEST(ExpandDataParallel, DdpAllReducesOncePerStep) {
  const Design d =
      model_design({2, 4}, {"dp_replicate", "dp_shard"}, 4, llama8b({{}, {"dp_replicate", "dp_shard"}, "", "", "", ""}, true, 2));
  const auto items = expand_workload(d);
  EXPECT_EQ(categories(items), std::set<std::string>{"dp_all_reduce"});
  // No gathers; each gradient summed over all 8 ranks once per step (no_sync during accumulation): 32 per layer weight.
  const WorkItem g = find(items, "layers.wqkv.grad", "dp_all_reduce");
  expect_item(g, {6144, 4096}, DType::Float32, "P(sum)P(sum)", "RR", 32);
  EXPECT_EQ(local_bytes(g, g.src, d.mesh), 96 * MiB);
  expect_item(find(items, "embedding.grad", "dp_all_reduce"), {128256, 4096}, DType::Float32, "P(sum)P(sum)", "RR", 1);
  EXPECT_EQ(items.size(), 6U);  // embedding, wqkv, wo, w13, w2, output
}

TEST(ExpandDataParallel, FsdpOverBothAxes) {
  const Design d =
      model_design({2, 4}, {"dp_replicate", "dp_shard"}, 4, llama8b({{"dp_replicate", "dp_shard"}, {}, "", "", "", ""}, true, 2));
  const auto items = expand_workload(d);
  EXPECT_EQ(categories(items), (std::set<std::string>{"fsdp_all_gather", "fsdp_reduce_scatter"}));
  // 8-way FSDP on dim 0 in mesh order: 768 rows of 6144 per rank (6 MiB), gathered 2 * 2 * 32 = 128 times.
  const WorkItem w = find(items, "layers.wqkv", "fsdp_all_gather");
  expect_item(w, {6144, 4096}, DType::BFloat16, "S(0)[0]S(0)[1]", "RR", 128);
  EXPECT_EQ(local_bytes(w, w.src, d.mesh), 6 * MiB);
  EXPECT_EQ(local_bytes(w, w.dst, d.mesh), 48 * MiB);
  expect_item(find(items, "layers.wqkv.grad", "fsdp_reduce_scatter"), {6144, 4096}, DType::Float32, "P(sum)P(sum)",
              "S(0)[0]S(0)[1]", 64);
  // The order the fsdp axes are listed in does not matter: FSDP shards in mesh order.
  const Design reversed =
      model_design({2, 4}, {"dp_replicate", "dp_shard"}, 4, llama8b({{"dp_shard", "dp_replicate"}, {}, "", "", "", ""}, true, 2));
  EXPECT_EQ(expand_workload(reversed), items);
}

TEST(ExpandDataParallel, HsdpReduceScattersThenAllReducesTheShard) {
  const Design d =
      model_design({2, 4}, {"dp_replicate", "dp_shard"}, 4, llama8b({{"dp_shard"}, {"dp_replicate"}, "", "", "", ""}, true, 2));
  const auto items = expand_workload(d);
  // Parameters are copies across dp_replicate (R there): 1536 rows per rank, 12 MiB -> 48 MiB.
  const WorkItem w = find(items, "layers.wqkv", "fsdp_all_gather");
  expect_item(w, {6144, 4096}, DType::BFloat16, "RS(0)", "RR", 128);
  EXPECT_EQ(local_bytes(w, w.src, d.mesh), 12 * MiB);
  // Gradients: reduce-scatter within the replica (the sum over dp_replicate still pending), then the all-reduce of
  // the 24 MiB shard across replicas; both after each of the 2 micro-batches.
  const WorkItem rs = find(items, "layers.wqkv.grad", "fsdp_reduce_scatter");
  expect_item(rs, {6144, 4096}, DType::Float32, "P(sum)P(sum)", "P(sum)S(0)", 64);
  const WorkItem ar = find(items, "layers.wqkv.grad", "dp_all_reduce");
  expect_item(ar, {6144, 4096}, DType::Float32, "P(sum)S(0)", "RS(0)", 64);
  EXPECT_EQ(local_bytes(ar, ar.src, d.mesh), 24 * MiB);
}

// ---- Pipeline ---------------------------------------------------------------------------------------------------

TEST(ExpandPipeline, BusiestStageAndOneGatherPerStep) {
  // 32 layers over 3 stages: ceil(32 / 3) = 11 on the busiest. 6 micro-batches.
  const Design d = model_design({3, 2}, {"pp", "dp"}, 2, llama8b({{"dp"}, {}, "", "", "", "pp"}, true, 6));
  const auto items = expand_workload(d);
  // Weights carry the stage dim [3, ...] on pp: each stage holds other layers. Under PP, parameters are gathered
  // once per step and gradients reduce-scattered once per step: 11 each.
  const WorkItem w = find(items, "layers.wqkv", "fsdp_all_gather");
  expect_item(w, {3, 6144, 4096}, DType::BFloat16, "S(0)S(1)", "S(0)R", 11);
  EXPECT_EQ(local_bytes(w, w.src, d.mesh), 24 * MiB);  // 3072 rows of 4096
  EXPECT_EQ(local_bytes(w, w.dst, d.mesh), 48 * MiB);
  expect_item(find(items, "layers.wqkv.grad", "fsdp_reduce_scatter"), {3, 6144, 4096}, DType::Float32, "S(0)P(sum)",
              "S(0)S(1)", 11);
  // The busiest stage holds the output projection (the last), not the embedding (the first).
  EXPECT_FALSE(has(items, "embedding", "fsdp_all_gather"));
  expect_item(find(items, "output", "fsdp_all_gather"), {3, 128256, 4096}, DType::BFloat16, "S(0)S(1)", "S(0)R", 1);
  // Activations forward and gradients back per micro-batch: 2 * 6 = 12 sends of [1, 8192, 4096] (64 MiB) on pp.
  const WorkItem send = find(items, "pp.activation", "pp_send");
  EXPECT_EQ(send.kind, WorkItemKind::Send);
  EXPECT_EQ(send.axis, 0U);
  EXPECT_EQ(send.shape, (std::vector<std::int64_t>{1, 8192, 4096}));
  EXPECT_EQ(send.dtype, DType::BFloat16);
  EXPECT_EQ(send.count, 12);
  EXPECT_EQ(to_string(send.src), "RR");
  EXPECT_EQ(to_string(send.dst), "RR");
}

TEST(ExpandPipeline, SequenceParallelSendsAndActivationsPerStage) {
  // (pp 2, dp 2, tp 2), 4 micro-batches: 16 layers per stage.
  const Design d = model_design({2, 2, 2}, {"pp", "dp", "tp"}, 8, llama8b({{"dp"}, {}, "tp", "", "", "pp"}, true, 4));
  const auto items = expand_workload(d);
  // With sequence parallel a stage sends its sequence shard: [1, 8192 / 2, 4096].
  const WorkItem send = find(items, "pp.activation", "pp_send");
  EXPECT_EQ(send.shape, (std::vector<std::int64_t>{1, 4096, 4096}));
  EXPECT_EQ(send.count, 8);
  // Activations: every stage's and every dp rank's micro-batch on the batch dim, [1 * 2 * 2, 8192, 4096];
  // 4 * 4 * 16 = 256 per step, plus the output projection's 4 (no embedding on the busiest stage).
  expect_item(find(items, "layers.tp_activation", "sp_all_gather"), {4, 8192, 4096}, DType::BFloat16, "S(0)[0]S(0)[1]S(1)",
              "S(0)[0]S(0)[1]R", 256);
  EXPECT_EQ(find(items, "output.tp_activation", "sp_reduce_scatter").count, 4);
  EXPECT_FALSE(has(items, "embedding.tp_activation", "sp_all_gather"));
  // The stage dim comes first in the weights' states: wqkv [2, 6144, 4096], tp then dp on dim 1.
  expect_item(find(items, "layers.wqkv", "fsdp_all_gather"), {2, 6144, 4096}, DType::BFloat16, "S(0)S(1)[1]S(1)[0]",
              "S(0)RS(1)", 16);
  expect_item(find(items, "layers.wo", "fsdp_all_gather"), {2, 4096, 4096}, DType::BFloat16, "S(0)S(1)S(2)", "S(0)RS(2)", 16);
}

TEST(ExpandPipeline, LayersNotDivisibleByStages) {
  ModelSpec m = llama8b({{"dp"}, {}, "", "", "", "pp"});
  m.layers = 126;
  const Design d = model_design({16, 2}, {"pp", "dp"}, 8, m);
  EXPECT_EQ(find(expand_workload(d), "layers.w2", "fsdp_all_gather").count, 8);  // ceil(126 / 16)
}

// Every stage holds a layer: more stages than layers is refused, naming both counts.
TEST(ExpandPipeline, MoreStagesThanLayersIsRefused) {
  ModelSpec m = llama8b({{"dp"}, {}, "", "", "", "pp"});
  m.layers = 6;
  expect_error([&] { (void)expand_workload(model_design({8, 2}, {"pp", "dp"}, 8, m)); }, ErrorKind::ValueError,
               {"workload.model: the pp axis \"pp\" has 8 stages but the model 6 layers: a stage would hold none "
                "(pp <= layers)"});
  EXPECT_EQ(find(expand_workload(model_design({6, 2}, {"pp", "dp"}, 4, m)), "layers.w2", "fsdp_all_gather").count, 1);
}

// ---- Context parallel ------------------------------------------------------------------------------------------

TEST(ExpandContextParallel, KvAllGatheredTwiceAndGradientsReduceScattered) {
  const Design d = model_design({2, 2, 2}, {"dp", "cp", "tp"}, 8, llama8b({{"dp"}, {}, "tp", "cp", "", ""}));
  const auto items = expand_workload(d);
  // K and V of each tp rank's 8 / 2 = 4 KV heads: [2, 1 * 2 (dp), 8192, 2 * 4 * 128], sequence on cp.
  // Per rank [2, 1, 4096, 512] = 8 MiB, gathered to 16 MiB: twice per layer per micro-batch (64), and the
  // float32 gradients reduce-scattered once (32).
  const WorkItem kv = find(items, "layers.kv", "cp_all_gather");
  expect_item(kv, {2, 2, 8192, 1024}, DType::BFloat16, "S(1)S(2)S(3)", "S(1)RS(3)", 64);
  EXPECT_EQ(local_bytes(kv, kv.src, d.mesh), 8 * MiB);
  EXPECT_EQ(local_bytes(kv, kv.dst, d.mesh), 16 * MiB);
  expect_item(find(items, "layers.kv.grad", "cp_reduce_scatter"), {2, 2, 8192, 1024}, DType::Float32, "S(1)P(sum)S(3)",
              "S(1)S(2)S(3)", 32);
  // Sequence parallel inside a cp chunk: the sequence dim split by cp first, then tp; [1, 2048, 4096] per rank.
  const WorkItem ag = find(items, "layers.tp_activation", "sp_all_gather");
  expect_item(ag, {2, 8192, 4096}, DType::BFloat16, "S(0)S(1)[0]S(1)[1]", "S(0)S(1)R", 128);
  EXPECT_EQ(local_bytes(ag, ag.src, d.mesh), 16 * MiB);
  EXPECT_EQ(local_bytes(ag, ag.dst, d.mesh), 32 * MiB);
  // cp is not an fsdp axis: parameters are copies along it, gradients summed over it after the reduce-scatter.
  expect_item(find(items, "layers.wqkv", "fsdp_all_gather"), {6144, 4096}, DType::BFloat16, "S(0)[1]RS(0)[0]", "RRS(0)",
              64);
  expect_item(find(items, "layers.wqkv.grad", "fsdp_reduce_scatter"), {6144, 4096}, DType::Float32, "P(sum)P(sum)S(0)",
              "S(0)[1]P(sum)S(0)[0]", 32);
  expect_item(find(items, "layers.wqkv.grad", "dp_all_reduce"), {6144, 4096}, DType::Float32, "S(0)[1]P(sum)S(0)[0]",
              "S(0)[1]RS(0)[0]", 32);
}

TEST(ExpandContextParallel, CpAlsoAnFsdpAxis) {
  // torchtitan's dp_shard_cp: parameters sharded over dp and cp, no all-reduce left.
  const Design d = model_design({2, 2, 2}, {"dp", "cp", "tp"}, 8, llama8b({{"dp", "cp"}, {}, "tp", "cp", "", ""}));
  const auto items = expand_workload(d);
  expect_item(find(items, "layers.wqkv", "fsdp_all_gather"), {6144, 4096}, DType::BFloat16, "S(0)[1]S(0)[2]S(0)[0]",
              "RRS(0)", 64);
  expect_item(find(items, "layers.wqkv.grad", "fsdp_reduce_scatter"), {6144, 4096}, DType::Float32, "P(sum)P(sum)S(0)",
              "S(0)[1]S(0)[2]S(0)[0]", 32);
  EXPECT_FALSE(has(items, "layers.wqkv.grad", "dp_all_reduce"));
  EXPECT_TRUE(has(items, "layers.kv", "cp_all_gather"));
}

TEST(ExpandContextParallel, FewerKvHeadsThanTensorParallelRanks) {
  // 2 KV heads over tp 4: each tp rank keeps ceil(2 / 4) = 1 head (copies), so the kv dim is 4 * 1 * 128.
  ModelSpec m = llama8b({{}, {}, "tp", "cp", "", ""});
  m.hidden = 1024;
  m.heads = 8;
  m.kv_heads = 2;
  m.seq_len = 4096;
  const Design d = model_design({2, 4}, {"cp", "tp"}, 8, m);
  const WorkItem kv = find(expand_workload(d), "layers.kv", "cp_all_gather");
  expect_item(kv, {2, 1, 4096, 512}, DType::BFloat16, "S(2)S(3)", "RS(3)", 64);
  EXPECT_EQ(local_bytes(kv, kv.dst, d.mesh), 2 * 4096 * 128 * 2);
}

// ---- Experts ------------------------------------------------------------------------------------------------------

ModelSpec small_moe(ModelAxes axes, std::int64_t experts = 8) {
  ModelSpec m;
  m.layers = 2;
  m.hidden = 1024;
  m.ffn = 512;
  m.heads = 8;
  m.kv_heads = 8;
  m.vocab = 1000;
  m.seq_len = 4096;
  m.experts = experts;
  m.top_k = 2;
  m.axes = std::move(axes);
  return m;
}

TEST(ExpandExperts, AllToAllOfTheRoutedTokens) {
  // dp2ep: ep is the fsdp axis itself. Each rank routes 1 * 4096 * 2 = 8192 token copies of 1024 values (16 MiB),
  // as [4, 8192, 1024] going from dim 0 (its own) to dim 1 (one quarter from each rank): 4 per layer per micro-batch.
  const Design d = model_design({4, 2}, {"dp", "tp"}, 8, small_moe({{"dp"}, {}, "tp", "", "dp", ""}));
  const auto items = expand_workload(d);
  const WorkItem t = find(items, "layers.tokens", "ep_all_to_all");
  expect_item(t, {4, 8192, 1024}, DType::BFloat16, "S(0)R", "S(1)R", 8);
  EXPECT_EQ(local_bytes(t, t.src, d.mesh), 16 * MiB);
  EXPECT_EQ(local_bytes(t, t.dst, d.mesh), 16 * MiB);
  // The experts are sharded by ep alone (no fsdp axis left for them) and ep is where their tokens come from: no
  // gather, no gradient sync; the dense weights are FSDP-sharded on dp as usual.
  EXPECT_FALSE(has(items, "layers.experts", "fsdp_all_gather"));
  EXPECT_FALSE(has(items, "layers.experts.grad", "dp_all_reduce"));
  EXPECT_FALSE(has(items, "layers.w13", "fsdp_all_gather"));
  EXPECT_TRUE(has(items, "layers.wqkv", "fsdp_all_gather"));
}

TEST(ExpandExperts, ExpertWeightsShardedByEpThenFsdp) {
  // (dp 2, ep 2, tp 2), fsdp [dp, ep]: experts [8, 3 * 512, 1024] on dim 0 by ep, then by dp (2 * 2 <= 8 experts),
  // and on dim 1 by tp.
  const Design d = model_design({2, 2, 2}, {"dp", "ep", "tp"}, 8, small_moe({{"dp", "ep"}, {}, "tp", "", "ep", ""}));
  const auto items = expand_workload(d);
  const WorkItem e = find(items, "layers.experts", "fsdp_all_gather");
  expect_item(e, {8, 1536, 1024}, DType::BFloat16, "S(0)[1]S(0)[0]S(1)", "RS(0)S(1)", 4);
  EXPECT_EQ(local_bytes(e, e.src, d.mesh), 2 * 768 * 1024 * 2);
  expect_item(find(items, "layers.experts.grad", "fsdp_reduce_scatter"), {8, 1536, 1024}, DType::Float32,
              "P(sum)S(0)S(1)", "S(0)[1]S(0)[0]S(1)", 2);
  // Tokens: dp's ranks hold other tokens, so dp shards the source dim before ep.
  expect_item(find(items, "layers.tokens", "ep_all_to_all"), {4, 8192, 1024}, DType::BFloat16, "S(0)[0]S(0)[1]R",
              "S(0)S(1)R", 8);
  // With 2 experts, 2 * 2 ranks would split them unevenly: FSDP shards dim 1 after tp instead.
  ModelSpec two = small_moe({{"dp", "ep"}, {}, "tp", "", "ep", ""}, 2);
  two.top_k = 1;
  const Design d2 = model_design({2, 2, 2}, {"dp", "ep", "tp"}, 8, two);
  expect_item(find(expand_workload(d2), "layers.experts", "fsdp_all_gather"), {2, 1536, 1024}, DType::BFloat16,
              "S(1)[1]S(0)S(1)[0]", "RS(0)S(1)", 4);
}

TEST(ExpandExperts, StandaloneEpAxisIsADataAxis) {
  // A dense model with an ep axis: ranks along it see other tokens, so gradients are summed over it.
  const Design d = model_design({2, 2}, {"dp", "ep"}, 4, llama8b({{"dp"}, {}, "", "", "ep", ""}));
  const auto items = expand_workload(d);
  expect_item(find(items, "layers.w2.grad", "dp_all_reduce"), {4096, 14336}, DType::Float32, "S(0)P(sum)", "S(0)R", 32);
  EXPECT_FALSE(has(items, "layers.tokens", "ep_all_to_all"));
}

// ---- What is left out ------------------------------------------------------------------------------------------

TEST(ExpandLeftOut, SizeOneAxesAndUnusedRoles) {
  // dp of size 1: nothing for FSDP; tp unused: no activations. Nothing at all.
  EXPECT_TRUE(expand_workload(model_design({1, 4}, {"dp", "tp"}, 4, llama8b({{"dp"}, {}, "", "", "", ""}))).empty());
  // Only tensor parallel is left.
  const auto items = expand_workload(model_design({1, 4}, {"dp", "tp"}, 4, llama8b({{"dp"}, {}, "tp", "", "", ""})));
  EXPECT_EQ(categories(items), (std::set<std::string>{"sp_all_gather", "sp_reduce_scatter"}));
  // The activations are then [1, 8192, 4096]: no data axis to put on the batch dim.
  expect_item(find(items, "layers.tp_activation", "sp_all_gather"), {1, 8192, 4096}, DType::BFloat16, "RS(1)", "RR", 128);
  // A design without a workload expands to nothing.
  Design plain = model_design({2}, {"dp"}, 2, llama8b({{"dp"}, {}, "", "", "", ""}));
  plain.workload.reset();
  EXPECT_TRUE(expand_workload(plain).empty());
}

TEST(ExpandTensors, DesignTensorsFirstWithTheirCounts) {
  Design d = model_design({2, 4}, {"dp", "tp"}, 4, llama8b({{"dp"}, {}, "tp", "", "", ""}));
  d.tensors.push_back({"a", {64, 32}, DType::Float32, parse_state("S(0)R"), parse_state("RR")});
  d.tensors.push_back({"b", {8}, DType::Int8, parse_state("RR"), parse_state("RR")});
  d.workload->tensors = {{"b", 3}, {"a", 7}};
  const auto items = expand_workload(d);
  ASSERT_EQ(items.size(), 20U);
  expect_item(items[0], {8}, DType::Int8, "RR", "RR", 3);  // kept although nothing moves
  EXPECT_EQ(items[0].name, "b");
  EXPECT_EQ(items[0].category, "tensor");
  expect_item(items[1], {64, 32}, DType::Float32, "S(0)R", "RR", 7);
  EXPECT_EQ(items[1].name, "a");
  EXPECT_EQ(items[2].name, "embedding");
  // Tensors alone.
  d.workload->model.reset();
  EXPECT_EQ(expand_workload(d).size(), 2U);
}

TEST(ExpandErrors, OverflowsNameTheItem) {
  ModelSpec m = llama8b({{"dp"}, {}, "tp", "", "", ""});
  m.vocab = kMaxWorkloadCount;
  m.hidden = 2147483520;  // 2^31 - 128: divisible by 32 heads
  m.dtype = DType::Float64;
  Design d;
  d.name = "big";
  d.world = 4;
  d.devices_per_host = 4;
  d.mesh = {{2, 2}, {"dp", "tp"}, {}};
  d.workload = Workload{{}, m};
  expect_error([&] { (void)expand_workload(d); }, ErrorKind::ValueError,
               {"workload.model: embedding (fsdp_all_gather) has shape [2147483647,2147483520]: more than 2^63-1 bytes of "
                "float64"});
  expect_error([&] { validate_design(d); }, ErrorKind::ValueError, {"workload.model: embedding (fsdp_all_gather)"});
  // 4 * micro_batches * layers tp all-reduces: (4 * 2147483647) * 2147483647 does not fit.
  d.workload->model = llama8b({{"dp"}, {}, "tp", "", "", ""}, true, kMaxWorkloadCount);
  d.workload->model->layers = kMaxWorkloadCount;
  expect_error([&] { (void)expand_workload(d); }, ErrorKind::ValueError,
               {"workload.model: the count of layers.tp_activation overflows 64-bit integers (8589934588 * 2147483647)"});
}

// ---- Every item plans as the collective its category names --------------------------------------------------

std::string detail_of(const Design& d) {
  std::string out = "(";
  for (std::size_t i = 0; i < d.mesh.names.size(); ++i) {
    out += (i ? ", " : "") + d.mesh.names[i] + " " + std::to_string(d.mesh.shape[i]);
  }
  return out + ")";
}

Collective expected_collective(const std::string& category) {
  static const std::map<std::string, Collective> kinds = {
      {"fsdp_all_gather", Collective::AllGather},  {"fsdp_reduce_scatter", Collective::ReduceScatter},
      {"dp_all_reduce", Collective::AllReduce},    {"tp_all_reduce", Collective::AllReduce},
      {"sp_all_gather", Collective::AllGather},    {"sp_reduce_scatter", Collective::ReduceScatter},
      {"cp_all_gather", Collective::AllGather},    {"cp_reduce_scatter", Collective::ReduceScatter},
      {"ep_all_to_all", Collective::AllToAll},
  };
  return kinds.at(category);
}

// On these designs every model item has one axis for its collective: the graph planner (comm model) must find
// exactly that one collective, and nothing else (no chunk-and-regather around it on an axis that holds other data).
// The one exception is legitimate: the routed tokens are copies along tp, so the planner may send each tp rank's
// 1/T of the hidden values through the all-to-all and all-gather them on tp after (Megatron's expert tensor
// parallel does the same); the all-to-all on ep is still there, once. (Where weights are true copies along an axis
// faster than the collective's, e.g. dense weights along an intra-host ep axis while dp crosses hosts, the planner
// may also gather hierarchically: a valid plan, so such designs are not in this list.)
TEST(ExpandPlans, EveryModelItemIsOneCollective) {
  std::vector<Design> designs = {
      model_design({2, 4}, {"dp", "tp"}, 4, llama8b({{"dp"}, {}, "tp", "", "", ""})),
      model_design({4, 2}, {"tp", "dp"}, 4, llama8b({{"dp"}, {}, "tp", "", "", ""}, false)),
      model_design({2, 2, 2}, {"pp", "dp", "tp"}, 2, llama8b({{"dp"}, {}, "tp", "", "", "pp"}, true, 4)),
      model_design({2, 2, 2}, {"cp", "dp", "tp"}, 2, llama8b({{"dp"}, {}, "tp", "cp", "", ""})),
      model_design({2, 2, 2}, {"cp", "dp_replicate", "dp_shard"}, 4, llama8b({{"dp_shard"}, {"dp_replicate"}, "", "", "", ""})),
      model_design({2, 2}, {"tp", "dp_shard"}, 2, llama8b({{"dp_shard"}, {}, "tp", "", "", ""})),
      model_design({2, 4}, {"ep", "tp"}, 4, small_moe({{"ep"}, {}, "tp", "", "ep", ""})),
      model_design({2, 4}, {"dp", "ep"}, 8, small_moe({{"dp"}, {}, "", "", "ep", ""})),
  };
  int planned = 0;
  for (const Design& d : designs) {
    const CommCostModel model(d.mesh.shape, d.devices_per_host);
    for (const WorkItem& w : expand_workload(d)) {
      if (w.kind == WorkItemKind::Send) continue;
      SCOPED_TRACE(detail_of(d) + ": " + w.name + " " + w.category);
      PlanRequest r;
      r.mesh_shape = d.mesh.shape;
      r.tensor_shape = w.shape;
      r.src = w.src;
      r.dst = w.dst;
      r.itemsize = itemsize(w.dtype);
      const Plan plan = plan_redistribution(r, model);
      int matching = 0;
      for (const PlanStep& step : plan.steps) matching += step.collective == expected_collective(w.category) ? 1 : 0;
      EXPECT_EQ(matching, 1) << trace(plan);
      if (w.category != "ep_all_to_all" || !w.src.placement(1).is_replicate()) {
        EXPECT_EQ(plan.steps.size(), 1U) << trace(plan);
      }
      ++planned;
    }
  }
  EXPECT_GT(planned, 100);
}

// The bundled examples with a model: every item plans (several fsdp axes may take several steps).
TEST(ExpandPlans, BundledExamplesPlan) {
  int expanded = 0;
  for (const auto& entry : fs::directory_iterator(MESHLOOM_EXAMPLES_DIR)) {
    if (!entry.path().filename().string().ends_with(".meshloom.json")) continue;
    const Design d = load_design(entry.path());
    if (!d.workload) continue;
    const CommCostModel model(d.mesh.shape, d.devices_per_host);
    for (const WorkItem& w : expand_workload(d)) {
      if (w.kind == WorkItemKind::Send) continue;
      SCOPED_TRACE(entry.path().filename().string() + ": " + w.name + " " + w.category);
      PlanRequest r;
      r.mesh_shape = d.mesh.shape;
      r.tensor_shape = w.shape;
      r.src = w.src;
      r.dst = w.dst;
      r.itemsize = itemsize(w.dtype);
      const Plan plan = plan_redistribution(r, model);
      if (w.category != "tensor") {
        EXPECT_EQ(plan.steps.size(), 1U) << trace(plan);
      }
    }
    ++expanded;
  }
  EXPECT_GE(expanded, 3);  // llama3-8b, llama3-405b, advisor-2x2
}

}  // namespace
}  // namespace meshloom
