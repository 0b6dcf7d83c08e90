#include "meshloom/workload/workload.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "design/validate.hpp"
#include "json_read.hpp"
#include "meshloom/design/design.hpp"
#include "meshloom/error.hpp"

namespace meshloom {

namespace {

using detail::bad;
using detail::bad_value;
using detail::field;
using detail::item;
using detail::join;
using detail::render_ints;
using detail::render_text;

constexpr std::string_view kModel = "workload.model";
constexpr std::string_view kAxes = "workload.model.axes";

// ---- Presets ----------------------------------------------------------------------------------------------

struct Preset {
  std::string_view name;
  std::int64_t layers, hidden, ffn, heads, kv_heads;
};

constexpr std::array<Preset, 3> kLlama3 = {{
    {"llama3_8b", 32, 4096, 14336, 32, 8},
    {"llama3_70b", 80, 8192, 28672, 64, 8},
    {"llama3_405b", 126, 16384, 53248, 128, 8},
}};

// ---- Roles --------------------------------------------------------------------------------------------------

// The role axes resolved to mesh indices; only active axes (size > 1), since a role on a size-1 axis moves nothing.
struct Roles {
  std::vector<std::size_t> fsdp;       // mesh order
  std::vector<std::size_t> replicate;  // mesh order
  std::optional<std::size_t> tp, cp, ep, pp;
  std::vector<std::size_t> data;  // fsdp, replicate, cp and ep axes, mesh order, each once
};

std::optional<std::size_t> axis_index(const MeshSpec& mesh, const std::string& name) {
  const auto it = std::find(mesh.names.begin(), mesh.names.end(), name);
  if (it == mesh.names.end()) return std::nullopt;
  return static_cast<std::size_t>(it - mesh.names.begin());
}

// A role's axis name checked against the mesh: its index, or ValueError naming `path`.
std::size_t require_role_axis(const MeshSpec& mesh, const std::string& name, const std::string& path) {
  if (const auto index = axis_index(mesh, name)) return *index;
  for (const FlattenSpec& flat : mesh.flattened) {
    if (flat.name == name) {
      bad_value(path, render_text(name),
                "a flattened axis (of " + join(flat.axes) + "); roles take mesh axes (list its axes in fsdp or replicate)");
    }
  }
  bad_value(path, render_text(name), "no mesh axis has that name (axes: " + join(mesh.names) + ")");
}

// Which second roles an axis may take: ep on a data axis (fsdp, replicate, cp), cp on an fsdp axis.
bool may_share(std::string_view role, std::string_view earlier) {
  if (role == "ep") return earlier == "fsdp" || earlier == "replicate" || earlier == "cp";
  if (role == "cp") return earlier == "fsdp";
  return false;
}

// Checks the role names (existence, duplicates, two roles on one axis) and resolves the active ones. On
// (dp_replicate 2, dp_shard 4, cp 1, tp 2) with fsdp [dp_shard], replicate [dp_replicate], cp "cp", tp "tp":
// fsdp {1}, replicate {0}, tp 3, no cp (size 1), data {0, 1}.
Roles resolve_roles(const ModelAxes& axes, const MeshSpec& mesh) {
  struct Taken {
    std::string role;
    std::string path;
  };
  std::map<std::size_t, std::vector<Taken>> taken;  // axis -> the roles it plays so far
  const std::string base(kAxes);
  auto take = [&](std::size_t axis, const std::string& role, const std::string& path, const std::string& name) {
    for (const Taken& t : taken[axis]) {
      if (t.role == role) bad_value(path, render_text(name), "listed twice (also " + t.path + ")");
      if (!may_share(role, t.role)) {
        bad_value(path, render_text(name),
                  "the axis already plays " + t.role + " (" + t.path +
                      "); an axis plays one role, except ep (also an fsdp, replicate or cp axis) and cp (also an fsdp "
                      "axis)");
      }
    }
    taken[axis].push_back({role, path});
  };
  Roles roles;
  auto active = [&mesh](std::size_t axis) { return mesh.shape[axis] > 1; };
  for (const auto& [role, list, out] :
       {std::tuple<const char*, const std::vector<std::string>*, std::vector<std::size_t>*>{"fsdp", &axes.fsdp, &roles.fsdp},
        {"replicate", &axes.replicate, &roles.replicate}}) {
    const std::string path = field(base, role);
    if (list->size() > kMaxRoleAxes) {
      bad_value(path, detail::render_strings(*list), "at most " + std::to_string(kMaxRoleAxes) + " axes");
    }
    for (std::size_t i = 0; i < list->size(); ++i) {
      const std::string at = item(path, i);
      const std::size_t axis = require_role_axis(mesh, (*list)[i], at);
      take(axis, role, at, (*list)[i]);
      if (active(axis)) out->push_back(axis);
    }
    std::sort(out->begin(), out->end());
  }
  for (const auto& [role, name, out] :
       {std::tuple<const char*, const std::string*, std::optional<std::size_t>*>{"tp", &axes.tp, &roles.tp},
        {"cp", &axes.cp, &roles.cp},
        {"ep", &axes.ep, &roles.ep},
        {"pp", &axes.pp, &roles.pp}}) {
    if (name->empty()) continue;
    const std::string path = field(base, role);
    const std::size_t axis = require_role_axis(mesh, *name, path);
    take(axis, role, path, *name);
    if (active(axis)) *out = axis;
  }
  std::vector<std::size_t> data = roles.fsdp;
  data.insert(data.end(), roles.replicate.begin(), roles.replicate.end());
  if (roles.cp) data.push_back(*roles.cp);
  if (roles.ep) data.push_back(*roles.ep);
  std::sort(data.begin(), data.end());
  data.erase(std::unique(data.begin(), data.end()), data.end());
  roles.data = std::move(data);
  return roles;
}

// ---- Model checks -----------------------------------------------------------------------------------------

void check_size(std::int64_t value, std::string_view key, std::int64_t min = 1, std::string_view note = "") {
  if (value < min || value > kMaxWorkloadCount) {
    bad_value(field(std::string(kModel), key), std::to_string(value),
              "must be in " + std::to_string(min) + ".." + std::to_string(kMaxWorkloadCount) + std::string(note));
  }
}

void check_dtype(DType dtype, std::string_view key) {
  if (dtype_from_string(to_string(dtype)) != dtype) {
    bad_value(field(std::string(kModel), key), std::to_string(static_cast<int>(dtype)), "unknown dtype");
  }
}

void check_model(const ModelSpec& m) {
  check_size(m.layers, "layers");
  check_size(m.hidden, "hidden");
  check_size(m.ffn, "ffn");
  check_size(m.heads, "heads");
  check_size(m.kv_heads, "kv_heads");
  check_size(m.vocab, "vocab");
  check_size(m.seq_len, "seq_len");
  check_size(m.micro_batch, "micro_batch");
  check_size(m.micro_batches, "micro_batches");
  check_dtype(m.dtype, "dtype");
  check_dtype(m.grad_dtype, "grad_dtype");
  const std::string model(kModel);
  if (m.hidden % m.heads != 0) {
    bad_value(field(model, "hidden"), std::to_string(m.hidden),
              "not divisible by heads = " + std::to_string(m.heads) + " (the head dim is hidden / heads)");
  }
  if (m.heads % m.kv_heads != 0) {
    bad_value(field(model, "kv_heads"), std::to_string(m.kv_heads),
              "does not divide heads = " + std::to_string(m.heads) + " (grouped-query attention shares each KV head "
                                                                      "among heads / kv_heads query heads)");
  }
  check_size(m.experts, "experts", 0, " (0: a dense model)");
  if (m.experts == 0 && m.top_k != 0) {
    bad_value(field(model, "top_k"), std::to_string(m.top_k),
              "a dense model (experts = 0) routes no tokens; top_k must be 0");
  }
  if (m.experts > 0 && (m.top_k < 1 || m.top_k > m.experts)) {
    bad_value(field(model, "top_k"), std::to_string(m.top_k),
              "must be in 1..experts = " + std::to_string(m.experts));
  }
}

// ---- Arithmetic -------------------------------------------------------------------------------------------

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// a * b, or ValueError "workload.model: <what> overflows 64-bit integers (a * b)".
std::int64_t mul(std::int64_t a, std::int64_t b, const std::string& what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    bad(std::string(kModel), what + " overflows 64-bit integers (" + std::to_string(a) + " * " + std::to_string(b) + ")");
  }
  return r;
}

// ---- States -----------------------------------------------------------------------------------------------

// Builds a State one placement at a time; each shard joins its dim's shard order last (the innermost split):
// on (dp, tp), StateBuilder(2).shard(1, 0).shard(0, 0).build() is "S(0)[1]S(0)[0]" (tp splits dim 0 first).
class StateBuilder {
public:
  explicit StateBuilder(std::size_t ndim) : placements_(ndim) {}
  StateBuilder& shard(std::size_t axis, std::int64_t dim) {
    placements_[axis] = Placement::shard(dim);
    order_[dim].push_back(axis);
    return *this;
  }
  StateBuilder& shard(const std::vector<std::size_t>& axes, std::int64_t dim) {
    for (std::size_t axis : axes) shard(axis, dim);
    return *this;
  }
  StateBuilder& partial(const std::vector<std::size_t>& axes) {
    for (std::size_t axis : axes) placements_[axis] = Placement::partial(ReduceOp::Sum);
    return *this;
  }
  StateBuilder& partial(std::size_t axis) { return partial(std::vector<std::size_t>{axis}); }
  [[nodiscard]] State build() const {
    std::vector<ShardOrderEntry> order;
    for (const auto& [dim, axes] : order_) order.push_back({dim, axes});
    return {placements_, std::move(order)};
  }

private:
  std::vector<Placement> placements_;
  std::map<std::int64_t, std::vector<std::size_t>> order_;
};

// The axes not in `removed`, in their order: minus({0, 1, 3}, {1}) == {0, 3}.
std::vector<std::size_t> minus(const std::vector<std::size_t>& axes, const std::vector<std::size_t>& removed) {
  std::vector<std::size_t> out;
  for (std::size_t a : axes) {
    if (std::find(removed.begin(), removed.end(), a) == removed.end()) out.push_back(a);
  }
  return out;
}

// The axes and `extra` (when given and not there yet), ascending: with({3, 1}, 2) == {1, 2, 3}.
std::vector<std::size_t> with(std::vector<std::size_t> axes, const std::optional<std::size_t>& extra) {
  if (extra && std::find(axes.begin(), axes.end(), *extra) == axes.end()) axes.push_back(*extra);
  std::sort(axes.begin(), axes.end());
  return axes;
}

// ---- Expansion --------------------------------------------------------------------------------------------

// What the expansion of a model needs, computed once.
struct Context {
  Context(const ModelSpec& model, const MeshSpec& mesh_spec, Roles resolved)
      : m(model), mesh(mesh_spec), roles(std::move(resolved)) {}
  const ModelSpec& m;
  const MeshSpec& mesh;
  Roles roles;
  std::int64_t T = 1, C = 1, G = 1, P = 1;  // sizes of the active tp, cp, ep and pp axes
  std::int64_t Ls = 1;                      // layers on the busiest stage
  std::int64_t gathers = 1;                 // parameter all-gathers per step per weight
  std::int64_t syncs = 1;                   // gradient reductions per step per weight
  std::int64_t offset = 0;                  // 1 when weights carry a leading stage dim
  std::vector<WorkItem> items;
};

// The product of the axes' sizes: 8 for {0, 1} of (2, 4); 1 for none.
std::int64_t size_of(const MeshSpec& mesh, const std::vector<std::size_t>& axes) {
  std::int64_t n = 1;
  for (std::size_t a : axes) n = mul(n, mesh.shape[a], "the product of the axes' sizes");
  return n;
}

// Appends an item, after checking that its global tensor's bytes fit in 64 bits.
void add(Context& c, std::string name, std::string category, std::vector<std::int64_t> shape, DType dtype, State src,
         State dst, std::int64_t count) {
  std::int64_t bytes = itemsize(dtype);
  for (std::int64_t d : shape) {
    if (__builtin_mul_overflow(bytes, d, &bytes)) {
      bad(std::string(kModel), name + " (" + category + ") has shape " + render_ints(shape) +
                                   ": more than 2^63-1 bytes of " + std::string(to_string(dtype)));
    }
  }
  WorkItem w;
  w.name = std::move(name);
  w.category = std::move(category);
  w.shape = std::move(shape);
  w.dtype = dtype;
  w.src = std::move(src);
  w.dst = std::move(dst);
  w.count = count;
  c.items.push_back(std::move(w));
}

// A weight as the expansion shards it (shape without the stage dim).
struct Weight {
  std::string name;
  std::vector<std::int64_t> shape;
  std::optional<std::int64_t> tp_dim;  // the dim tensor parallel shards
  bool expert = false;                 // ep shards dim 0 first
  std::int64_t per_step = 1;           // Ls for the layers' weights, 1 for embedding and output
};

// The weight's gather and gradient items (see the header's FSDP and DDP rules). Llama 3 8B's layers.wqkv on
// (dp 2, tp 4), fsdp [dp], tp tp, one micro-batch: fsdp_all_gather [6144, 4096] "S(0)[1]S(0)[0]" -> "RS(0)" 64
// times, fsdp_reduce_scatter of its float32 gradient "P(sum)S(0)" -> "S(0)[1]S(0)[0]" 32 times; on
// (dp_replicate 2, dp_shard 4) as HSDP also the dp_all_reduce "P(sum)S(0)" -> "RS(0)".
void add_weight(Context& c, const Weight& w) {
  const Roles& r = c.roles;
  const std::size_t ndim = c.mesh.shape.size();
  const std::vector<std::size_t> model_axes = w.expert && r.ep ? std::vector<std::size_t>{*r.ep} : std::vector<std::size_t>{};
  const std::vector<std::size_t> fs = minus(r.fsdp, model_axes);              // FSDP-shard this weight
  const std::vector<std::size_t> ar = minus(minus(r.data, r.fsdp), model_axes);  // all-reduce its gradient
  if (fs.empty() && ar.empty()) return;

  std::vector<std::int64_t> shape = w.shape;
  if (r.pp) shape.insert(shape.begin(), c.P);
  const std::int64_t o = c.offset;
  std::int64_t fsdp_dim = 0;
  if (w.expert && !fs.empty() && c.G * size_of(c.mesh, fs) > w.shape[0]) fsdp_dim = 1;
  // Model sharding: the stage dim on pp, ep on the experts' dim 0, tp on its dim; FSDP then shards fsdp_dim.
  auto base = [&]() {
    StateBuilder b(ndim);
    if (r.pp) b.shard(*r.pp, 0);
    if (w.expert && r.ep) b.shard(*r.ep, o + 0);
    if (r.tp && w.tp_dim) b.shard(*r.tp, o + *w.tp_dim);
    return b;
  };
  const std::string what = "the count of " + w.name;
  if (!fs.empty()) {
    add(c, w.name, "fsdp_all_gather", shape, c.m.dtype, base().shard(fs, o + fsdp_dim).build(), base().build(),
        mul(w.per_step, c.gathers, what));
    add(c, w.name + ".grad", "fsdp_reduce_scatter", shape, c.m.grad_dtype, base().partial(fs).partial(ar).build(),
        base().shard(fs, o + fsdp_dim).partial(ar).build(), mul(w.per_step, c.syncs, what + ".grad"));
  }
  if (!ar.empty()) {
    add(c, w.name + ".grad", "dp_all_reduce", shape, c.m.grad_dtype, base().shard(fs, o + fsdp_dim).partial(ar).build(),
        base().shard(fs, o + fsdp_dim).build(), mul(w.per_step, c.syncs, what + ".grad"));
  }
}

// Every weight of the busiest stage, in item order: embedding (P = 1 only), wqkv, wo, w13 and w2 (or experts),
// output.
void add_weights(Context& c) {
  const ModelSpec& m = c.m;
  const std::int64_t head_dim = m.hidden / m.heads;
  const std::int64_t qkv_rows = mul(m.heads + 2 * m.kv_heads, head_dim, "the shape of layers.wqkv");
  if (!c.roles.pp) add_weight(c, {"embedding", {m.vocab, m.hidden}, 0, false, 1});
  add_weight(c, {"layers.wqkv", {qkv_rows, m.hidden}, 0, false, c.Ls});
  add_weight(c, {"layers.wo", {m.hidden, m.hidden}, 1, false, c.Ls});
  if (m.experts == 0) {
    add_weight(c, {"layers.w13", {mul(2, m.ffn, "the shape of layers.w13"), m.hidden}, 0, false, c.Ls});
    add_weight(c, {"layers.w2", {m.hidden, m.ffn}, 1, false, c.Ls});
  } else {
    add_weight(c, {"layers.experts", {m.experts, mul(3, m.ffn, "the shape of layers.experts"), m.hidden}, 1, true, c.Ls});
  }
  add_weight(c, {"output", {m.vocab, m.hidden}, 0, false, 1});
}

// The batch axes of an activation: the active data axes and pp, less those the item uses otherwise. On
// (pp 2, dp 2, cp 2, tp 2) with fsdp [dp], cp, tp, pp: {pp, dp} for the tp activation (cp shards its sequence).
std::vector<std::size_t> batch_axes(const Context& c, const std::vector<std::size_t>& used) {
  return minus(with(c.roles.data, c.roles.pp), used);
}

// The tp, cp and ep activations and the pipeline send (see the header). On (dp 2, tp 4) with sequence parallel:
// layers.tp_activation [2, 8192, 4096] sp_all_gather "S(0)S(1)" -> "S(0)R" and sp_reduce_scatter
// "S(0)P(sum)" -> "S(0)S(1)", 4 * 1 * 32 = 128 times each, then the embedding's and output's, once each.
void add_activations(Context& c) {
  const ModelSpec& m = c.m;
  const Roles& r = c.roles;
  const std::size_t ndim = c.mesh.shape.size();
  const std::int64_t M = m.micro_batches;
  const std::int64_t head_dim = m.hidden / m.heads;

  if (r.tp) {
    const std::vector<std::size_t> batch = batch_axes(c, with({*r.tp}, r.cp));
    const std::vector<std::int64_t> shape = {mul(m.micro_batch, size_of(c.mesh, batch), "the batch of layers.tp_activation"),
                                             m.seq_len, m.hidden};
    auto base = [&]() {
      StateBuilder b(ndim);
      b.shard(batch, 0);
      if (r.cp) b.shard(*r.cp, 1);
      return b;
    };
    const std::int64_t per_layer = mul(mul(4, M, "the count of layers.tp_activation"), c.Ls, "the count of layers.tp_activation");
    std::vector<std::pair<std::string, std::int64_t>> uses = {{"layers.tp_activation", per_layer}};
    if (!r.pp) uses.emplace_back("embedding.tp_activation", M);
    uses.emplace_back("output.tp_activation", M);
    for (const auto& [name, count] : uses) {
      if (m.sequence_parallel) {
        add(c, name, "sp_all_gather", shape, m.dtype, base().shard(*r.tp, 1).build(), base().build(), count);
        add(c, name, "sp_reduce_scatter", shape, m.dtype, base().partial(*r.tp).build(), base().shard(*r.tp, 1).build(),
            count);
      } else {
        add(c, name, "tp_all_reduce", shape, m.dtype, base().partial(*r.tp).build(), base().build(), count);
      }
    }
  }

  if (r.cp) {
    const std::vector<std::size_t> batch = batch_axes(c, with({*r.cp}, r.tp));
    const std::string what = "the shape of layers.kv";
    const std::int64_t kv_dim = mul(mul(c.T, ceil_div(m.kv_heads, c.T), what), head_dim, what);
    const std::vector<std::int64_t> shape = {2, mul(m.micro_batch, size_of(c.mesh, batch), what), m.seq_len, kv_dim};
    auto base = [&]() {
      StateBuilder b(ndim);
      b.shard(batch, 1);
      if (r.tp) b.shard(*r.tp, 3);
      return b;
    };
    const std::int64_t per_layer = mul(M, c.Ls, "the count of layers.kv");
    add(c, "layers.kv", "cp_all_gather", shape, m.dtype, base().shard(*r.cp, 2).build(), base().build(),
        mul(2, per_layer, "the count of layers.kv"));
    add(c, "layers.kv.grad", "cp_reduce_scatter", shape, m.grad_dtype, base().partial(*r.cp).build(),
        base().shard(*r.cp, 2).build(), per_layer);
  }

  if (m.experts > 0 && r.ep) {
    const std::vector<std::size_t> batch = batch_axes(c, {*r.ep});
    const std::string what = "the shape of layers.tokens";
    const std::int64_t tokens = mul(mul(m.micro_batch, ceil_div(m.seq_len, c.C), what), m.top_k, what);
    const std::vector<std::int64_t> shape = {mul(size_of(c.mesh, batch), c.G, what), tokens, m.hidden};
    StateBuilder src(ndim);
    src.shard(batch, 0).shard(*r.ep, 0);
    StateBuilder dst(ndim);
    dst.shard(batch, 0).shard(*r.ep, 1);
    add(c, "layers.tokens", "ep_all_to_all", shape, m.dtype, src.build(), dst.build(),
        mul(mul(4, M, "the count of layers.tokens"), c.Ls, "the count of layers.tokens"));
  }

  if (r.pp) {
    std::int64_t seq = ceil_div(m.seq_len, c.C);
    if (m.sequence_parallel && r.tp) seq = ceil_div(seq, c.T);
    const State all_r{std::vector<Placement>(ndim)};
    add(c, "pp.activation", "pp_send", {m.micro_batch, seq, m.hidden}, m.dtype, all_r, all_r,
        mul(2, M, "the count of pp.activation"));
    c.items.back().kind = WorkItemKind::Send;
    c.items.back().axis = *r.pp;
  }
}

// The model's items on `mesh` (validated by the caller or here: a mesh whose names and shape disagree is refused).
std::vector<WorkItem> expand_model(const ModelSpec& m, const MeshSpec& mesh) {
  if (mesh.names.size() != mesh.shape.size()) {
    bad("workload.model", "the mesh has " + std::to_string(mesh.shape.size()) + " axes but " +
                              std::to_string(mesh.names.size()) + " names; validate_design names the problem");
  }
  check_model(m);
  Context c(m, mesh, resolve_roles(m.axes, mesh));
  const Roles& r = c.roles;
  auto size = [&mesh](const std::optional<std::size_t>& axis) { return axis ? mesh.shape[*axis] : std::int64_t{1}; };
  c.T = size(r.tp);
  c.C = size(r.cp);
  c.G = size(r.ep);
  c.P = size(r.pp);
  if (c.P > m.layers) {
    bad("workload.model", "the pp axis " + render_text(mesh.names[*r.pp]) + " has " + std::to_string(c.P) +
                              " stages but the model " + std::to_string(m.layers) +
                              " layers: a stage would hold none (pp <= layers)");
  }
  c.Ls = ceil_div(m.layers, c.P);
  c.offset = r.pp ? 1 : 0;
  c.gathers = r.pp ? 1 : mul(2, m.micro_batches, "the parameter all-gathers per step");
  c.syncs = r.pp || r.fsdp.empty() ? 1 : m.micro_batches;
  c.items.reserve(32);  // at most 7 weights x 3 items, 6 tp, 2 cp, 1 ep and 1 pp item
  add_weights(c);
  add_activations(c);
  return std::move(c.items);
}

// The most design tensor names an unknown-tensor message lists.
constexpr std::size_t kListedTensors = 16;

// The workload's tensor entries checked against the design: names exist and are listed once, counts in range.
void check_tensors(const Workload& workload, const Design& design) {
  if (workload.tensors.size() > kMaxWorkloadTensors) {
    bad("workload.tensors", std::to_string(workload.tensors.size()) + " tensors; at most " +
                                std::to_string(kMaxWorkloadTensors));
  }
  std::vector<std::string> names;
  for (const DesignTensor& t : design.tensors) names.push_back(t.name);
  for (std::size_t i = 0; i < workload.tensors.size(); ++i) {
    const WorkloadTensor& t = workload.tensors[i];
    const std::string at = item("workload.tensors", i);
    if (std::find(names.begin(), names.end(), t.tensor) == names.end()) {
      std::string known;
      if (names.empty()) {
        known = "the design has no tensors";
      } else if (names.size() <= kListedTensors) {
        known = "tensors: " + join(names);
      } else {
        known = "tensors: " + join({names.begin(), names.begin() + kListedTensors}) + ", ... (" +
                std::to_string(names.size()) + " tensors)";
      }
      bad_value(field(at, "tensor"), render_text(t.tensor), "no design tensor has that name (" + known + ")");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (workload.tensors[j].tensor == t.tensor) {
        bad_value(field(at, "tensor"), render_text(t.tensor),
                  "listed twice (also " + item("workload.tensors", j) + "); one entry per tensor, with a count");
      }
    }
    if (t.count < 1 || t.count > kMaxWorkloadCount) {
      bad_value(field(at, "count"), std::to_string(t.count), "must be in 1.." + std::to_string(kMaxWorkloadCount));
    }
  }
}

}  // namespace

ModelSpec llama3_model(std::string_view name) {
  for (const Preset& p : kLlama3) {
    if (p.name != name) continue;
    ModelSpec m;
    m.layers = p.layers;
    m.hidden = p.hidden;
    m.ffn = p.ffn;
    m.heads = p.heads;
    m.kv_heads = p.kv_heads;
    m.vocab = 128256;
    m.seq_len = 8192;
    m.micro_batch = 1;
    m.micro_batches = 1;
    m.dtype = DType::BFloat16;
    m.grad_dtype = DType::Float32;
    m.sequence_parallel = true;
    return m;
  }
  raise(ErrorKind::KeyError, "unknown model preset " + render_text(name) + "; known: " + join(model_preset_names()));
}

std::vector<std::string> model_preset_names() {
  std::vector<std::string> names;
  for (const Preset& p : kLlama3) names.emplace_back(p.name);
  return names;
}

ModelAxes default_model_axes(const MeshSpec& mesh) {
  ModelAxes axes;
  for (const std::string& name : mesh.names) {
    if (name == "dp" || name == "dp_shard" || name == "fsdp" || name == "dp_shard_mod_ep") {
      axes.fsdp.push_back(name);
    } else if (name == "dp_shard_in_ep") {
      axes.fsdp.push_back(name);
      if (axes.ep.empty()) axes.ep = name;
    } else if (name == "dp_replicate" || name == "ddp" || name == "replicate") {
      axes.replicate.push_back(name);
    } else if (name == "tp" && axes.tp.empty()) {
      axes.tp = name;
    } else if (name == "cp" && axes.cp.empty()) {
      axes.cp = name;
    } else if (name == "ep" && axes.ep.empty()) {
      axes.ep = name;
    } else if (name == "pp" && axes.pp.empty()) {
      axes.pp = name;
    }
  }
  return axes;
}

void validate_workload(const Workload& workload, const Design& design) {
  check_tensors(workload, design);
  if (workload.model) (void)expand_model(*workload.model, design.mesh);
}

std::vector<WorkItem> expand_workload(const Design& design) {
  if (!design.workload) return {};
  // validate_design, with the model expanded once: the expansion checks what validate_workload checks by it.
  detail::validate_design_without_workload(design);
  const Workload& workload = *design.workload;
  check_tensors(workload, design);
  std::vector<WorkItem> items;
  for (const WorkloadTensor& entry : workload.tensors) {
    const auto it = std::find_if(design.tensors.begin(), design.tensors.end(),
                                 [&entry](const DesignTensor& t) { return t.name == entry.tensor; });
    WorkItem w;
    w.name = it->name;
    w.category = "tensor";
    w.shape = it->shape;
    w.dtype = it->dtype;
    w.src = it->src;
    w.dst = it->dst;
    w.count = entry.count;
    items.push_back(std::move(w));
  }
  if (workload.model) {
    std::vector<WorkItem> model = expand_model(*workload.model, design.mesh);
    items.insert(items.end(), std::make_move_iterator(model.begin()), std::make_move_iterator(model.end()));
  }
  return items;
}

}  // namespace meshloom
