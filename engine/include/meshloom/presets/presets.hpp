// Presets: each training framework's way of turning parallelism degrees into a named mesh, reproduced as a
// MeshSpec (shape outer -> inner, one name per axis, flattened axes in creation order) so a layout designed
// here can be carried over unchanged.
//
// Every preset checks its input the way its framework does and raises meshloom::Error with the framework's
// message text (values filled in). Kinds: ValueError for configuration errors (Python asserts and
// OLMoConfigurationError included), RuntimeError where the framework raises RuntimeError, KeyError for unknown
// names. Messages that the framework does not have (it asserts without text, or fails later inside
// DeviceMesh) are Meshloom's own and are marked "(Meshloom)" below.
//
// Vocabulary: "axis" is a mesh axis; "dim" is reserved for tensors. Degrees are int64; -1 means "infer" where
// the framework allows it. All functions are pure: no global state, no I/O.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "meshloom/mesh/mesh_spec.hpp"

namespace meshloom {

// ---- torchtitan ParallelDims ----------------------------------------------------------------------------

// torchtitan/distributed/parallel_dims.py ParallelDims fields. dp_shard = -1 means "infer":
// world_size / (dp_replicate * cp * tp * pp).
struct TorchtitanDims {
  std::int64_t dp_replicate = 1;
  std::int64_t dp_shard = -1;
  std::int64_t cp = 1;
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::int64_t ep = 1;
  std::int64_t etp = 1;
  std::int64_t world_size = 1;
  friend bool operator==(const TorchtitanDims&, const TorchtitanDims&) = default;
};

// ParallelDims._validate(): returns the dims with dp_shard inferred. Throws ValueError, in this order:
//   any of dp_replicate, cp, tp, pp, ep, etp < 1 -> "Parallelism degree should be >= 1, except for dp_shard"
//   dp_shard not -1 and < 1                      -> "dp_shard must -1 or >=1."
//   product != world (also when the inferred dp_shard is 0) ->
//     "Invalid parallel dims: dp_replicate(1) * dp_shard(3) * cp(1) * tp(2) * pp(1) != WORLD_SIZE(8)"
//   ep > 1 and etp not in {tp, 1}                -> "Currently we only support ETP=TP or ETP=1"
//   ep > 1, etp == tp: ep % cp or (dp_shard*cp) % ep nonzero, or etp == 1 (tp > 1): ep % (cp*tp) or
//   (dp_shard*cp*tp) % ep nonzero -> (Meshloom; torchtitan asserts without text)
//     "ep(3) must be a multiple of cp(1) and divide dp_shard(4) * cp(1)"
//     "ep(4) must be a multiple of cp(1) * tp(2) and divide dp_shard(2) * cp(1) * tp(2)"
// torchtitan_resolve({.dp_shard = -1, .tp = 2, .world_size = 8}).dp_shard == 4.
[[nodiscard]] TorchtitanDims torchtitan_resolve(TorchtitanDims dims);

// ParallelDims.build_mesh(). Validates as torchtitan_resolve, then:
//
// ep == 1: axes pp, dp_replicate, dp_shard, cp, tp in that order (outer -> inner), each only when its degree
// is > 1. Flattened, each only when its axis list is non-empty (a one-axis list is still flattened):
//   dp          = [dp_replicate?, dp_shard?]         data loading
//   dp_shard_cp = [dp_shard?, cp?]                   parameter sharding (FSDP)
//   dp_cp       = [dp_replicate?, dp_shard?, cp?]    loss all-reduce
// where "x?" means "when degree x > 1".
//   torchtitan_mesh({.dp_replicate = 2, .dp_shard = -1, .cp = 2, .tp = 2, .world_size = 32}) ==
//     shape (2, 4, 2, 2), names (dp_replicate, dp_shard, cp, tp), flattened
//     dp = [dp_replicate, dp_shard], dp_shard_cp = [dp_shard, cp], dp_cp = [dp_replicate, dp_shard, cp].
//
// ep > 1 (dp2ep: EP borrows all of cp, part of dp_shard, and with etp == 1 also all of tp): dp_shard is split
// into dp_shard_mod_ep * dp_shard_in_ep with dp_shard_in_ep = ep / cp (etp == tp) or ep / (cp * tp)
// (etp == 1). Axes pp, dp_replicate, dp_shard_mod_ep, dp_shard_in_ep, cp, tp, each when > 1 except
// dp_shard_mod_ep, which is always kept (even at 1: its FSDP wrapping gives the MoE layers mixed precision).
// Flattened (always created, in this order):
//   dp          = [dp_replicate?, dp_shard_mod_ep, dp_shard_in_ep?]
//   dp_shard_cp = [dp_shard_mod_ep, dp_shard_in_ep?, cp?]
//   dp_cp       = [dp_replicate?, dp_shard_mod_ep, dp_shard_in_ep?, cp?]
//   ep          = [dp_shard_in_ep?, cp?, tp (only when etp == 1 and tp > 1)]
//   torchtitan_mesh({.dp_shard = 8, .ep = 4, .world_size = 8}) == shape (2, 4), names (dp_shard_mod_ep,
//     dp_shard_in_ep), flattened dp = dp_shard_cp = dp_cp = [dp_shard_mod_ep, dp_shard_in_ep],
//     ep = [dp_shard_in_ep].
// All degrees 1 gives an empty mesh (shape ()), as torchtitan's dims list would be empty.
[[nodiscard]] MeshSpec torchtitan_mesh(const TorchtitanDims& dims);

// ---- OLMo-core build_world_mesh ---------------------------------------------------------------------------

enum class OlmoDataParallelType { fsdp, hsdp, ddp };

// DataParallelConfig: name, and for HSDP the optional num_replicas / shard_degree.
struct OlmoDataParallel {
  OlmoDataParallelType type = OlmoDataParallelType::fsdp;
  std::optional<std::int64_t> num_replicas{};
  std::optional<std::int64_t> shard_degree{};
  friend bool operator==(const OlmoDataParallel&, const OlmoDataParallel&) = default;
};

// build_world_mesh(dp=, tp=, cp=, pp=, ep=): a config that is absent is std::nullopt (a present config of
// degree 1 still makes an axis of size 1, as in OLMo-core). ep degree -1 means "the HSDP shard degree".
// num_nodes stands for get_num_nodes(), used when HSDP gives neither num_replicas nor shard_degree.
struct OlmoConfig {
  std::int64_t world_size = 1;
  std::optional<OlmoDataParallel> dp{};
  std::optional<std::int64_t> tp{};
  std::optional<std::int64_t> cp{};
  std::optional<std::int64_t> pp{};
  std::optional<std::int64_t> ep{};
  std::int64_t num_nodes = 1;
  friend bool operator==(const OlmoConfig&, const OlmoConfig&) = default;
};

// Axes outer -> inner: pp, then dp (fsdp/ddp) or dp_replicate, dp_shard (hsdp), then cp, then tp. No config at
// all gives the 1-D mesh (dp = world). EP reuses dp_shard under HSDP (no ep axis; get_ep_mesh returns
// dp_shard). Flattened axes, in the order OLMo-core creates them:
//   dp    = [dp_replicate, dp_shard]   HSDP only; made by build_world_mesh -> get_dp_process_group
//   dp_cp = [<last dp axis>, cp]       when cp is present; made by get_dp_model_mesh (dp or dp_shard + cp)
// (dp_ep = [dp, ep] exists in OLMo-core only for non-HSDP EP, which build_world_mesh currently rejects.)
// Throws ValueError (OLMoConfigurationError), in this order:
//   a parallel config without dp -> "Data parallel config is required in addition to
//     expert/tensor/context/pipeline parallel configs"
//   pp, cp, tp (in that order, each dividing the remaining dp world size) < 1 or not dividing ->
//     "PipelineParallelConfig.degree must be at least 1 and divide into the world size" (also
//     ContextParallelConfig, TensorParallelConfig)
//   ep == 0 or not dividing -> "ExpertParallelConfig.degree must be at least 1 and divide into the world size"
//   ep with tp -> "expert parallelism is mutually exclusive with tensor parallism"
//   ep without HSDP -> "expert parallelism can currently only be used with HSDP data parallelism"
//   HSDP num_replicas / shard_degree not dividing -> "data parallel world size (8) must be divisible by
//     'num_replicas' (3)" / "... by 'shard_degree' (3)"
//   HSDP replicas * shard != dp world size -> (Meshloom) "HSDP num_replicas (2) * shard_degree (2) = 4 does
//     not equal the data parallel world size (8)"
//   ep (>= 0) != shard degree -> "expert parallelism + HSDP requires the same sharding degree"
// olmo_core_mesh({.world_size = 16, .dp = OlmoDataParallel{.type = hsdp, .shard_degree = 4}, .cp = 2}) ==
//   shape (2, 4, 2), names (dp_replicate, dp_shard, cp), flattened dp = [dp_replicate, dp_shard],
//   dp_cp = [dp_shard, cp].
[[nodiscard]] MeshSpec olmo_core_mesh(const OlmoConfig& config);

// ---- Megatron-LM RankGenerator ----------------------------------------------------------------------------

// RankGenerator(tp, ep, dp, pp, cp, order, rank_offset). dp = -1 means world_size / (tp * cp * ep * pp).
// In the order string the FIRST name varies fastest ("tp-cp-ep-dp-pp": tp has stride 1, pp the largest).
struct MegatronConfig {
  std::int64_t tp = 1;
  std::int64_t cp = 1;
  std::int64_t ep = 1;
  std::int64_t dp = -1;
  std::int64_t pp = 1;
  std::int64_t world_size = 1;
  std::string order = "tp-cp-ep-dp-pp";
  std::int64_t rank_offset = 0;
  friend bool operator==(const MegatronConfig&, const MegatronConfig&) = default;
};

// The order as Megatron completes it: lower-cased, then each of tp, pp, dp, ep, cp (in that order) that is
// missing and of size 1 appended. megatron_order({.tp = 2, .dp = 4, .world_size = 8, .order = "TP-DP"}) ==
// {"tp", "dp", "pp", "ep", "cp"}. Throws (checks in this order):
//   any size < 1 (dp may be -1)        -> ValueError (Meshloom) "Parallelism sizes must be >= 1, got cp=0"
//   ep > 1 and cp > 1                  -> ValueError "Both EP and CP > 1 in not allow in one rank generator.
//                                         CP is only included in default RankGenerator, and EP only in expert
//                                         RankGenerator."
//   world % (tp*pp*cp) != 0, ep == 1   -> RuntimeError "world_size (12) is not divisible by 8"
//   world % (tp*ep*pp) != 0, ep > 1    -> RuntimeError "world_size (12) is not divisible by
//                                         expert_tensor_model_pipeline_parallel size (8)"
//   explicit dp with product != world  -> ValueError (Meshloom) "world_size (16) does not equal tp (2) * cp (1)
//                                         * ep (1) * dp (4) * pp (1) = 8"
//   a size > 1 missing from the order  -> RuntimeError "The size of (dp) is (4), but you haven't specified the
//                                         order (tp-pp)."
//   an unknown name                    -> KeyError (Meshloom) "Unknown parallelism 'sp' in order 'tp-sp';
//                                         expected names from tp, cp, ep, dp, pp"
//   a repeated name                    -> ValueError (Meshloom) "Parallelism 'tp' appears twice in order
//                                         'tp-tp-dp'"
[[nodiscard]] std::vector<std::string> megatron_order(const MegatronConfig& config);

// The mesh equal to the RankGenerator: the completed order reversed (shape outer -> inner), sizes of size 1
// kept so any query name is an axis. No flattened axes (see megatron_flatten).
// megatron_mesh({.tp = 8, .dp = 4, .pp = 2, .world_size = 64}) == shape (2, 4, 1, 1, 8),
//   names (pp, dp, ep, cp, tp).
[[nodiscard]] MeshSpec megatron_mesh(const MegatronConfig& config);

// RankGenerator.get_ranks(query) computed as generate_masked_orthogonal_rank_groups does: query names the
// axes of the group ("tp-dp"); the group index runs over the other axes, first order name fastest; inside a
// group the ranks run over the queried axes, first order name fastest; rank_offset is added to every rank.
// An unknown query name throws ValueError "'sp' is not in list" (Python's list.index).
// megatron_rank_groups({.tp = 2, .dp = 2, .pp = 2, .world_size = 8, .order = "tp-pp-dp"}, "dp") ==
//   {{0, 4}, {1, 5}, {2, 6}, {3, 7}}.
[[nodiscard]] std::vector<std::vector<std::int64_t>> megatron_rank_groups(const MegatronConfig& config,
                                                                          std::string_view query);

// The flattened axis of megatron_mesh whose groups equal megatron_rank_groups(config, query) (for
// rank_offset 0): name = query with '-' replaced by '_', axes = the queried names in mesh (outer -> inner)
// order. megatron_flatten({.tp = 2, .cp = 2, .dp = 2, .world_size = 8}, "tp-cp") == {"tp_cp", {"cp", "tp"}}.
[[nodiscard]] FlattenSpec megatron_flatten(const MegatronConfig& config, std::string_view query);

// ---- JAX mesh_utils ---------------------------------------------------------------------------------------

// create_device_mesh(mesh_shape) + Mesh(devices, axis_names): axes ordered by increasing network intensity
// ([replica, data, model]); devices laid out row-major (GPU). Throws ValueError:
//   names count != shape length -> "Mesh requires the ndim of its first argument (`devices`) to equal the
//     length of its second argument (`axis_names`), got devices.ndim == 2 and len(axis_names) == 1."
//   a size < 1 -> (Meshloom) "mesh_shape must contain positive integers. Got (2, 0)"
//   a repeated name -> (Meshloom) "Duplicate axis name 'data' in axis_names"
//   num_devices given and != product -> "Number of devices 6 must equal the product of mesh_shape (2, 4)"
// jax_device_mesh({2, 4}, {"data", "model"}) == shape (2, 4), names (data, model).
[[nodiscard]] MeshSpec jax_device_mesh(const std::vector<std::int64_t>& mesh_shape,
                                       const std::vector<std::string>& axis_names,
                                       std::optional<std::int64_t> num_devices = std::nullopt);

// create_hybrid_device_mesh(mesh_shape = ici_shape, dcn_mesh_shape = dcn_shape): one ICI mesh per granule
// (host/slice, made of consecutive devices) tiled by the DCN mesh; logical axis i has size dcn_i * ici_i and
// coordinate dcn_index_i * ici_i + ici_index_i, and the device at a position is
// granule * prod(ici) + (row-major ICI index), granule = row-major DCN index.
struct JaxHybridMesh {
  MeshSpec logical{};     // shape = elementwise product, names = axis_names (JAX's result shape)
  MeshSpec placement{};   // exact device placement as a row-major mesh: axes <n>_dcn... then <n>_ici..., and each
                        // logical axis n flattened from [<n>_dcn, <n>_ici]
  std::vector<std::int64_t> ici_shape{};
  std::vector<std::int64_t> dcn_shape{};
  std::int64_t devices_per_host = 1;  // prod(ici_shape): the suggested devices (GPUs) per host
  std::int64_t num_hosts = 1;         // prod(dcn_shape): the granules
  friend bool operator==(const JaxHybridMesh&, const JaxHybridMesh&) = default;
};

// Throws ValueError: ici/dcn lengths differ -> (Meshloom) "mesh_shape (2, 4) and dcn_mesh_shape (2,) must have
// the same length"; name count, sizes and duplicate names as jax_device_mesh (also "<n>_dcn"/"<n>_ici" clashes);
// num_hosts given and != prod(dcn) -> "Number of slices 3 must equal the product of dcn_mesh_shape (2, 1)";
// num_devices given and != num_hosts * prod(ici) -> "Number of devices 6 must equal the product of mesh_shape
// (1, 8)" (the per-host count when it divides, else the total).
// jax_hybrid_device_mesh({1, 8}, {2, 1}, {"data", "model"}) == logical (2, 8) (data, model), devices_per_host 8,
//   placement shape (2, 1, 1, 8) names (data_dcn, model_dcn, data_ici, model_ici), flattened
//   data = [data_dcn, data_ici], model = [model_dcn, model_ici].
[[nodiscard]] JaxHybridMesh jax_hybrid_device_mesh(const std::vector<std::int64_t>& ici_shape,
                                                   const std::vector<std::int64_t>& dcn_shape,
                                                   const std::vector<std::string>& axis_names,
                                                   std::optional<std::int64_t> num_devices = std::nullopt,
                                                   std::optional<std::int64_t> num_hosts = std::nullopt);

// The device id at every position of the hybrid mesh, positions in row-major order of the logical shape
// (np.block of per-granule meshes). jax_hybrid_device_ids({2}, {2}) == {0, 1, 2, 3};
// jax_hybrid_device_ids({1, 2}, {2, 1}) == {0, 1, 2, 3}; jax_hybrid_device_ids({2, 1}, {1, 2}) == {0, 2, 1, 3}.
[[nodiscard]] std::vector<std::int64_t> jax_hybrid_device_ids(const std::vector<std::int64_t>& ici_shape,
                                                              const std::vector<std::int64_t>& dcn_shape);

// ---- Llama 3 405B -----------------------------------------------------------------------------------------

// The Llama 3 405B pre-training layout on 16,384 H100: order [tp, cp, pp, dp] inner -> outer, i.e.
// shape (128, 16, 1, 8), names (dp, pp, cp, tp). No flattened axes.
[[nodiscard]] MeshSpec llama3_405b_mesh();
// The long-context phase: shape (8, 16, 16, 8), names (dp, pp, cp, tp), 16,384 GPUs.
[[nodiscard]] MeshSpec llama3_405b_long_context_mesh();

// ---- Registry ---------------------------------------------------------------------------------------------

struct PresetInfo {
  std::string name{};                // the name build_preset accepts (":<arg>" suffix shown as a placeholder)
  std::string description{};         // one line
  std::vector<std::string> degrees{};  // accepted degree keys; a trailing '*' marks a required one
  friend bool operator==(const PresetInfo&, const PresetInfo&) = default;
};

// All presets: torchtitan, olmo_core[:fsdp|:ddp|:hsdp], megatron[:<order>], jax:<names>,
// jax_hybrid:<names>, llama3_405b, llama3_405b_long_context.
[[nodiscard]] std::vector<PresetInfo> list_presets();

// Builds a preset by name from string -> int degrees. Names with an argument take it after ':'
// ("megatron:tp-pp-dp", "olmo_core:hsdp", "jax:data,model"). Degree keys per preset:
//   torchtitan:  world_size*, dp_replicate, dp_shard, cp, tp, pp, ep, etp (defaults as TorchtitanDims)
//   olmo_core:   world_size*, tp, cp, pp, ep (a key present = that config given), num_replicas, shard_degree,
//                num_nodes
//   megatron:    world_size*, tp, cp, ep, dp, pp (order default "tp-cp-ep-dp-pp")
//   jax:         one key per axis name (required), num_devices
//   jax_hybrid:  <name>* (ICI size), dcn_<name> (DCN size, default 1), num_devices, num_hosts; returns the
//                placement mesh (exact JAX device order)
//   llama3_*:    none
// Throws KeyError "Unknown preset 'x'; available: ..." / "Unknown degree 'x' for preset 'torchtitan';
// accepted: ..." / "Preset 'torchtitan' requires degree 'world_size'", ValueError for a missing or bad
// argument, and whatever the preset itself raises.
// build_preset("torchtitan", {{"world_size", 8}, {"tp", 2}}) == torchtitan_mesh({.tp = 2, .world_size = 8}).
[[nodiscard]] MeshSpec build_preset(std::string_view name, const std::map<std::string, std::int64_t>& degrees);

}  // namespace meshloom
