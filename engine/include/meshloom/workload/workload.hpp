// Workloads: what one training step communicates, as redistributions a design's mesh must perform.
//
// A design may hold a workload (design format version 2; see meshloom/design/design.hpp):
//   - its own tensors' redistributions (design.tensors, src -> dst), each with a count per training step;
//   - optionally a model: a small description of a transformer (Llama-style: attention with grouped KV heads and
//     a gated MLP, optionally mixture-of-experts) and which mesh axes play which parallel role. expand_workload
//     turns it into the redistributions (and pipeline sends) one rank performs per step.
//
// Conventions of the expansion (docs/04-planner.md, "Workloads", states every formula with a worked example).
// Notation: L layers, h hidden, f ffn, H heads, K kv_heads, d = h / H (head dim), V vocab, s seq_len, b micro_batch,
// M micro_batches, E experts, k top_k; T, C, P, G the sizes of the tp, cp, pp and ep axes (1 when the role is not
// used); "active": a role's axis of size > 1 (roles on size-1 axes do nothing).
//   - Counts are per rank per training step. A rank holds Ls = ceil(L / P) layers (the busiest stage), and the
//     output projection too; the embedding only when P = 1 (with P > 1 it lives on the first stage).
//   - Data axes: the fsdp, replicate, cp and ep axes. Ranks along a data axis see different tokens (other sequences,
//     another chunk of the sequence), so gradients are summed over every data axis that does not shard the weight:
//     a cp or ep axis that is not also an fsdp axis acts as a replicate axis for the weights it does not shard.
//   - Shapes are global over the whole mesh, as a design tensor's are, and a placement is R only where ranks hold
//     true copies. Where data differs along an axis that takes no part in the collective, the item says so with a
//     Shard: activations put the data axes (and pp: each stage holds another micro-batch's activations) on their
//     batch dim, and weights get a leading stage dim [P, ...] sharded on pp when P > 1. Otherwise the planner would
//     take different data for copies and "save" by chunking it (a chunk on dp before a tp all-reduce and an
//     all-gather after). The bytes one rank holds are what it holds in training.
//   - Weights are [out, in] (torch.nn.Linear), per layer: layers.wqkv [(H + 2K) d, h] (wq, wk, wv fused),
//     layers.wo [h, H d], layers.w13 [2f, h] (w1 and w3 fused), layers.w2 [h, f]; a mixture of experts replaces
//     w13 and w2 by layers.experts [E, 3f, h] (w1, w3 and w2 of every expert, w2 transposed). embedding and output
//     are [V, h]. Norm weights and the router are left out (under 0.01% of the bytes; FSDP2 gathers them with the
//     layer's other weights in one collective).
//   - Tensor parallel shards column-parallel weights (wqkv, w13, embedding, output: vocab-parallel) on dim 0 and
//     row-parallel ones (wo, w2) on dim 1; experts on dim 1 (the ffn dim of w1, w3 and w2).
//   - FSDP (FSDP2's fully_shard on the fsdp axes, listed in any order, applied in mesh order) shards dim 0, after
//     tensor parallel when tp shards dim 0 too (FSDP2's _StridedShard: "S(0)[1]S(0)[0]" on (dp, tp)). Expert
//     weights are sharded on dim 0 by ep first, then by the fsdp axes other than ep (torchtitan's dp_shard_mod_ep),
//     or on dim 1 after tp when G * (their size) > E (torchtitan's shard_placement_fn).
//       parameters: all-gathered twice per micro-batch (forward, and backward after reshard_after_forward), or
//         once per step when pp is active (torchtitan turns resharding off under PP): count Ls * 2M, or Ls.
//       gradients (in grad_dtype, float32 by default: Llama 3 reduce-scatters gradients in fp32, torchtitan's
//         mixed_precision_reduce): reduce-scattered over the fsdp axes (category fsdp_reduce_scatter) and the
//         sharded gradient all-reduced over the other data axes (HSDP's replicate axes, a cp or ep axis that is not
//         an fsdp axis: category dp_all_reduce), after every micro-batch (FSDP2's default, which torchtitan's
//         gradient accumulation keeps) or once per step when pp is active (the pipeline schedule syncs after the
//         last micro-batch): count Ls * M, or Ls.
//       no active fsdp axis (DDP): gradients all-reduced over the data axes once per step (DDP's no_sync during
//         gradient accumulation): count Ls.
//   - Tensor parallel activations [b * B, s, h] (B: the product of the active data axes other than cp, and of pp;
//     the sequence dim is sharded by cp first): 4 all-reduces per layer per micro-batch (2 forward, 2 backward),
//     or with sequence parallel 4 all-gathers and 4 reduce-scatters on the sequence dim; plus per micro-batch the
//     embedding's (forward all-reduce, or reduce-scatter + backward all-gather) and the output projection's
//     (backward all-reduce, or forward all-gather + backward reduce-scatter).
//   - Context parallel (PyTorch's ring attention with the default all-gather rotater): per layer per micro-batch
//     K and V, [2, b * B, s, T ceil(K / T) d] sharded on the sequence dim, all-gathered twice (forward, and again
//     in backward) and their gradients reduce-scattered once (in grad_dtype: PyTorch accumulates dK and dV in fp32).
//   - Experts (E > 0: every layer's MLP is a mixture of experts; ep active): 4 all-to-alls per layer per
//     micro-batch (dispatch and combine, forward and backward) of n = b * ceil(s / C) * k token copies of h values
//     per rank, as the tensor [B * G, n, h] going from dim 0 to dim 1 on ep (B: the other data axes, and pp).
//   - Pipeline: each micro-batch sends its activations [b, ceil(s / C), h] (with sequence parallel
//     [b, ceil(ceil(s / C) / T), h]) to the next stage and its gradients back: 2M sends (a Send item, priced as
//     point to point on the pp axis). A Send's shape is the sent tensor; its src and dst are R on every axis.
//   - Left out: activation recomputation, interleaved pipeline stages, the loss, optimizer and norm traffic.
//
// Item names: "<weight>" (fsdp_all_gather), "<weight>.grad" (fsdp_reduce_scatter, dp_all_reduce), with <weight>
// one of embedding, layers.wqkv, layers.wo, layers.w13, layers.w2, layers.experts, output; "layers.tp_activation",
// "embedding.tp_activation", "output.tp_activation" (tp_all_reduce, or sp_all_gather and sp_reduce_scatter);
// "layers.kv" (cp_all_gather), "layers.kv.grad" (cp_reduce_scatter); "layers.tokens" (ep_all_to_all);
// "pp.activation" (pp_send). A design tensor's item is named after it (category tensor). (name, category) is
// unique among a model's items.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "meshloom/dtype.hpp"
#include "meshloom/mesh/mesh_spec.hpp"
#include "meshloom/plan/state.hpp"

namespace meshloom {

struct Design;

// Limits of a workload, checked by validate_workload.
inline constexpr std::size_t kMaxWorkloadTensors = 1024;       // entries of Workload::tensors
inline constexpr std::int64_t kMaxWorkloadCount = 2147483647;  // WorkloadTensor::count and every ModelSpec size
inline constexpr std::size_t kMaxRoleAxes = 64;                // entries of ModelAxes::fsdp and ::replicate

// Which mesh axes (by name) play each parallel role. An empty name / list: the role is not used. Roles take mesh
// axes, not flattened ones (list a flattened axis' members in fsdp or replicate instead). An axis plays one role,
// except that ep may also be an fsdp, replicate or cp axis (EP borrowed from data parallelism: torchtitan's dp2ep)
// and cp may also be an fsdp axis (torchtitan's dp_shard_cp).
struct ModelAxes {
  std::vector<std::string> fsdp;       // parameter sharding (FSDP / ZeRO-3); any order (applied in mesh order)
  std::vector<std::string> replicate;  // data-parallel replicas (DDP, or HSDP's outer axis)
  std::string tp;                      // tensor parallel
  std::string cp;                      // context parallel
  std::string ep;                      // expert parallel
  std::string pp;                      // pipeline parallel
  friend bool operator==(const ModelAxes&, const ModelAxes&) = default;
};

// A transformer as the expansion needs it.
struct ModelSpec {
  std::int64_t layers = 1;
  std::int64_t hidden = 1;
  std::int64_t ffn = 1;        // MLP (or each expert's) intermediate size
  std::int64_t heads = 1;
  std::int64_t kv_heads = 1;
  std::int64_t vocab = 1;
  std::int64_t seq_len = 1;
  std::int64_t micro_batch = 1;    // sequences per micro-batch
  std::int64_t micro_batches = 1;  // micro-batches per step (gradient accumulation or pipeline)
  DType dtype = DType::BFloat16;       // parameters and activations
  DType grad_dtype = DType::Float32;   // gradient reductions
  std::int64_t experts = 0;        // 0: dense
  std::int64_t top_k = 0;          // experts per token (0 when dense)
  bool sequence_parallel = false;
  ModelAxes axes;
  friend bool operator==(const ModelSpec&, const ModelSpec&) = default;
};

// A design tensor's redistribution, `count` times per step.
struct WorkloadTensor {
  std::string tensor;  // a name in design.tensors
  std::int64_t count = 1;
  friend bool operator==(const WorkloadTensor&, const WorkloadTensor&) = default;
};

// An empty workload (no tensors, no model) is valid and communicates nothing.
struct Workload {
  std::vector<WorkloadTensor> tensors;
  std::optional<ModelSpec> model;
  friend bool operator==(const Workload&, const Workload&) = default;
};

// Llama 3 (Meta, "The Llama 3 Herd of Models", table 3): 8B, 70B, 405B, at sequence length 8192, micro-batch 1,
// one micro-batch per step, bfloat16 (gradients reduced in float32), sequence parallel on, no axes assigned.
//   8B   32 layers, hidden 4096,  ffn 14336, 32 heads, 8 KV heads, vocab 128256
//   70B  80 layers, hidden 8192,  ffn 28672, 64 heads, 8 KV heads, vocab 128256
//   405B 126 layers, hidden 16384, ffn 53248, 128 heads, 8 KV heads, vocab 128256
// `name` is "llama3_8b", "llama3_70b" or "llama3_405b"; KeyError naming it and the known names otherwise:
//   llama3_model("llama3_8b").ffn == 14336
//   llama3_model("llama2_7b") -> KeyError: unknown model preset "llama2_7b"; known: llama3_8b, llama3_70b, llama3_405b
[[nodiscard]] ModelSpec llama3_model(std::string_view name);
// {"llama3_8b", "llama3_70b", "llama3_405b"}.
[[nodiscard]] std::vector<std::string> model_preset_names();

// Default role assignment from a mesh's axis names, in mesh order; axes it does not know play no role:
//   dp, dp_shard, fsdp, dp_shard_mod_ep -> fsdp      dp_replicate, ddp, replicate -> replicate
//   dp_shard_in_ep -> fsdp and ep                     tp -> tp, cp -> cp, ep -> ep, pp -> pp
// e.g. (pp, dp_replicate, dp_shard, cp, tp) -> fsdp [dp_shard], replicate [dp_replicate], tp, cp, pp;
//      (dp, tp) -> fsdp [dp], tp.
[[nodiscard]] ModelAxes default_model_axes(const MeshSpec& mesh);

// One unit of a step's communication on a given mesh.
enum class WorkItemKind : std::uint8_t { Redistribution, Send };

struct WorkItem {
  std::string name;      // "layers.wqkv", "layers.tp_activation", "output", a design tensor's name, ...
  std::string category;  // fsdp_all_gather fsdp_reduce_scatter dp_all_reduce tp_all_reduce sp_all_gather
                         // sp_reduce_scatter cp_all_gather cp_reduce_scatter ep_all_to_all pp_send tensor
  WorkItemKind kind = WorkItemKind::Redistribution;
  std::vector<std::int64_t> shape;  // global shape (Redistribution) or the sent tensor's shape (Send)
  DType dtype = DType::BFloat16;
  State src;  // one placement per mesh axis (Send: R everywhere)
  State dst;
  std::size_t axis = 0;  // Send: the mesh axis whose neighbouring coordinates exchange
  std::int64_t count = 1;  // per rank per step
  friend bool operator==(const WorkItem&, const WorkItem&) = default;
};

// Checks a workload against a design's mesh and tensors: tensor names exist and are listed once, counts and model
// sizes in 1..kMaxWorkloadCount, hidden % heads == 0, heads % kv_heads == 0, experts >= 0 with 1 <= top_k <= experts
// when experts > 0 (top_k 0 when dense), dtypes known, role axes are mesh axes listed once, no axis plays two roles
// (but see ModelAxes), and every item's bytes and count fit in 64 bits. ValueError naming the JSON field path and
// value, e.g. "workload.model.axes.tp = \"mp\": no mesh axis has that name (axes: dp, tp)".
void validate_workload(const Workload& workload, const Design& design);

// Every item one rank performs per step on design.mesh: the workload's tensors first (in order, each with its count,
// even when src equals dst), then the model's items (when present) in the order: per weight (embedding,
// layers.wqkv, layers.wo, layers.w13, layers.w2 or layers.experts, output) its gather, reduce-scatter and all-reduce;
// then the tp, cp and ep activations; then the pipeline send. Items with nothing to move (all their axes of size 1,
// or a role not used) are left out. ValueError as validate_workload; an empty vector when the design has no
// workload. Example, Llama 3 8B on (dp 2, tp 4) with fsdp [dp], tp tp, one micro-batch:
//   layers.wqkv fsdp_all_gather [6144, 4096] bfloat16 S(0)[1]S(0)[0] -> RS(0), count 64 (32 layers x 2)
//   layers.wqkv.grad fsdp_reduce_scatter [6144, 4096] float32 P(sum)S(0) -> S(0)[1]S(0)[0], count 32
//   layers.tp_activation sp_all_gather [2, 8192, 4096] bfloat16 S(0)S(1) -> S(0)R, count 128
[[nodiscard]] std::vector<WorkItem> expand_workload(const Design& design);

}  // namespace meshloom
