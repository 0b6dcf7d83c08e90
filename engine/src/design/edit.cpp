#include "meshloom/design/edit.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "json_read.hpp"
#include "meshloom/error.hpp"
#include "meshloom/mesh/device_mesh.hpp"
#include "meshloom/plan/state.hpp"

namespace meshloom {

namespace {

using detail::join;

[[noreturn]] void fail(const std::string& message) { raise(ErrorKind::ValueError, message); }

// Runs a DeviceMesh call: its errors are PyTorch's checks, with PyTorch's kinds and messages, and pass as they are.
template <class F>
auto torch_checked(F&& f) -> decltype(f()) {
  return f();
}

// ---- Names ------------------------------------------------------------------------------------------------

bool is_identifier(const std::string& name) {
  return !name.empty() && name.size() <= kMaxDesignNameChars && std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
         });
}

// A name in a message: 'tp' when it is a valid name, else the JSON string literal ("a b", "").
std::string quote(const std::string& name) {
  return is_identifier(name) ? "'" + name + "'" : detail::render_text(name);
}

std::vector<std::string> flat_names(const MeshSpec& mesh) {
  std::vector<std::string> names;
  names.reserve(mesh.flattened.size());
  for (const FlattenSpec& f : mesh.flattened) names.push_back(f.name);
  return names;
}

// "axes are dp, tp".
std::string axes_are(const MeshSpec& mesh) { return "axes are " + join(mesh.names); }

// "flattened axes are dp_cp" or "the mesh has no flattened axes".
std::string flattened_are(const MeshSpec& mesh) {
  if (mesh.flattened.empty()) return "the mesh has no flattened axes";
  return "flattened axes are " + join(flat_names(mesh));
}

std::optional<std::size_t> axis_index(const MeshSpec& mesh, const std::string& name) {
  const auto it = std::find(mesh.names.begin(), mesh.names.end(), name);
  if (it == mesh.names.end()) return std::nullopt;
  return static_cast<std::size_t>(it - mesh.names.begin());
}

std::optional<std::size_t> flat_index(const MeshSpec& mesh, const std::string& name) {
  const auto it = std::find_if(mesh.flattened.begin(), mesh.flattened.end(),
                               [&name](const FlattenSpec& f) { return f.name == name; });
  if (it == mesh.flattened.end()) return std::nullopt;
  return static_cast<std::size_t>(it - mesh.flattened.begin());
}

// The index of mesh axis `name`. ValueError for a flattened axis or an unknown name.
std::size_t require_axis(const MeshSpec& mesh, const std::string& name) {
  if (const auto index = axis_index(mesh, name)) return *index;
  if (flat_index(mesh, name)) fail(quote(name) + " is a flattened axis, not a mesh axis; " + axes_are(mesh));
  fail("axis " + quote(name) + " does not exist; " + axes_are(mesh));
}

// ValueError when `name` is already the name of a mesh axis or of a flattened axis.
void require_unused(const MeshSpec& mesh, const std::string& name) {
  if (axis_index(mesh, name)) fail(quote(name) + " is already the name of a mesh axis; " + axes_are(mesh));
  if (flat_index(mesh, name)) fail(quote(name) + " is already the name of a flattened axis; " + flattened_are(mesh));
}

// The design's name rule for axes and flattened axes; `path` names the argument in the message.
void require_name(const std::string& name, const std::string& path) {
  detail::check_name(name, path, kMaxDesignNameChars, false);
}

void require_world(std::int64_t world) {
  if (world < 1 || world > kMaxDesignWorld) {
    fail("world = " + std::to_string(world) + ": must be in 1.." + std::to_string(kMaxDesignWorld));
  }
}

void require_divides(std::int64_t devices_per_host, std::int64_t world) {
  if (world % devices_per_host != 0) {
    fail("devices_per_host = " + std::to_string(devices_per_host) + " does not divide world = " + std::to_string(world));
  }
}

void require_size(std::int64_t size) {
  if (size < 1) fail("size = " + std::to_string(size) + ": axis sizes must be >= 1");
}

// ---- Mesh arithmetic --------------------------------------------------------------------------------------

// The number of ranks of a shape; nullopt when it overflows int64.
std::optional<std::int64_t> ranks(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (std::int64_t size : shape) {
    if (__builtin_mul_overflow(n, size, &n)) return std::nullopt;
  }
  return n;
}

std::string ranks_word(const std::optional<std::int64_t>& n) { return n ? std::to_string(*n) : "more than 2^63-1"; }

// A mesh of n ranks (nullopt: more than int64 holds) must fit in the world.
void require_fit(const std::optional<std::int64_t>& n, std::int64_t world) {
  if (!n || *n > world) {
    fail("mesh: world = " + std::to_string(world) + " but the mesh holds " + ranks_word(n) + " ranks");
  }
}

// A world that follows a mesh of n ranks must be a world.
void require_world_size(const std::optional<std::int64_t>& n) {
  if (!n || *n > kMaxDesignWorld) {
    fail("mesh: the mesh holds " + ranks_word(n) + " ranks; a world holds at most " + std::to_string(kMaxDesignWorld));
  }
}

template <class T>
auto at(std::vector<T>& v, std::size_t i) {
  return v.begin() + static_cast<std::ptrdiff_t>(i);
}

// The edited design `next` with its world set by the world rule (see the header), checked and validated.
Design finish(const Design& before, Design next) {
  const std::optional<std::int64_t> old_ranks = ranks(before.mesh.shape);
  const std::optional<std::int64_t> new_ranks = ranks(next.mesh.shape);
  const bool follows = old_ranks && before.world == *old_ranks;
  if (follows) {
    require_world_size(new_ranks);
    next.world = *new_ranks;
  } else {
    require_fit(new_ranks, next.world);
  }
  // A following world keeps whole hosts: when devices_per_host no longer divides it, a host holds the
  // largest number of devices that does (8 per host over a world of 4 -> 4; over 12 -> 4).
  if (follows) next.devices_per_host = std::gcd(next.devices_per_host, next.world);
  require_divides(next.devices_per_host, next.world);
  validate_design(next);
  return next;
}

// ---- Tensors ----------------------------------------------------------------------------------------------

// Where each axis of an edited mesh comes from: from[j] is the old axis whose placement new axis j takes, or
// nullopt for a new axis (Replicate).
using AxisSources = std::vector<std::optional<std::size_t>>;

// The state on the edited mesh. Each dim's shard order lists the new axes in the order of their old axes in it;
// several new axes taken from one old axis (the parts of a split) stand in its place, ascending (outer first).
State carry(const State& state, const AxisSources& from) {
  std::vector<Placement> placements;
  placements.reserve(from.size());
  for (const auto& source : from) {
    placements.push_back(source && *source < state.ndim() ? state.placement(*source) : Placement::replicate());
  }
  std::vector<ShardOrderEntry> order;
  for (const ShardOrderEntry& entry : state.shard_order()) {
    ShardOrderEntry carried{entry.dim, {}};
    for (std::size_t old : entry.axes) {
      for (std::size_t j = 0; j < from.size(); ++j) {
        if (from[j] == old) carried.axes.push_back(j);
      }
    }
    if (!carried.axes.empty()) order.push_back(std::move(carried));
  }
  return {std::move(placements), std::move(order)};
}

void carry_tensors(Design& design, const AxisSources& from) {
  for (DesignTensor& tensor : design.tensors) {
    tensor.src = carry(tensor.src, from);
    tensor.dst = carry(tensor.dst, from);
  }
}

// ---- Workload roles ---------------------------------------------------------------------------------------

// The workload model's role axes after an edit: parts(name) is what axis `name` becomes (empty: removed; one name:
// kept or renamed; several: split). fsdp and replicate take every part; a single-axis role keeps the part that
// still has its name, or the only part, and is cleared otherwise (a removed axis, a split without the old name).
template <class Parts>
void carry_roles(Design& design, Parts&& parts) {
  if (!design.workload || !design.workload->model) return;
  ModelAxes& axes = design.workload->model->axes;
  for (std::vector<std::string>* list : {&axes.fsdp, &axes.replicate}) {
    std::vector<std::string> next;
    for (const std::string& name : *list) {
      for (std::string& part : parts(name)) {
        if (std::find(next.begin(), next.end(), part) == next.end()) next.push_back(std::move(part));
      }
    }
    *list = std::move(next);
  }
  for (std::string* role : {&axes.tp, &axes.cp, &axes.ep, &axes.pp}) {
    if (role->empty()) continue;
    const std::vector<std::string> to = parts(*role);
    if (std::find(to.begin(), to.end(), *role) != to.end()) continue;
    *role = to.size() == 1 ? to[0] : std::string();
  }
}

// ---- Tensor edits -----------------------------------------------------------------------------------------

// Tensors listed in a message: at most this many names, then how many there are.
constexpr std::size_t kListedTensors = 8;

bool is_tensor_name(const std::string& name) {
  return !name.empty() && name.size() <= kMaxTensorNameChars && std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
         });
}

// A tensor name in a message: 'layers.0.wq' when it is a valid name, else the JSON string literal ("a b", "").
std::string quote_tensor(const std::string& name) {
  return is_tensor_name(name) ? "'" + name + "'" : detail::render_text(name);
}

// "tensors are w, b", "tensors are a, b, ... (1024 in all)" or "the design has no tensors".
std::string tensors_are(const Design& design) {
  if (design.tensors.empty()) return "the design has no tensors";
  std::vector<std::string> names;
  for (std::size_t i = 0; i < design.tensors.size() && i < kListedTensors; ++i) names.push_back(design.tensors[i].name);
  std::string out = "tensors are " + join(names);
  if (design.tensors.size() > kListedTensors) out += ", ... (" + std::to_string(design.tensors.size()) + " in all)";
  return out;
}

std::optional<std::size_t> tensor_index(const Design& design, const std::string& name) {
  const auto it = std::find_if(design.tensors.begin(), design.tensors.end(),
                               [&name](const DesignTensor& t) { return t.name == name; });
  if (it == design.tensors.end()) return std::nullopt;
  return static_cast<std::size_t>(it - design.tensors.begin());
}

std::size_t require_tensor(const Design& design, const std::string& name) {
  if (const auto index = tensor_index(design, name)) return *index;
  fail("tensor " + quote_tensor(name) + " does not exist; " + tensors_are(design));
}

// The tensor name rule, and a name no tensor has.
void require_new_tensor_name(const Design& design, const std::string& name) {
  detail::check_name(name, "tensor name", kMaxTensorNameChars, true);
  if (tensor_index(design, name)) fail(quote_tensor(name) + " is already the name of a tensor; " + tensors_are(design));
}

// The shape rules: at most kMaxDesignTensorRank dims, each >= 1, numel * itemsize < 2^63.
void require_shape(const std::vector<std::int64_t>& shape, DType dtype) {
  if (shape.size() > kMaxDesignTensorRank) {
    fail("shape = " + detail::render_ints(shape) + ": at most " + std::to_string(kMaxDesignTensorRank) + " dims");
  }
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 1) fail(detail::item("shape", i) + " = " + std::to_string(shape[i]) + ": dims must be >= 1");
  }
  std::int64_t bytes = itemsize(dtype);
  for (std::int64_t size : shape) {
    if (__builtin_mul_overflow(bytes, size, &bytes)) {
      fail("shape = " + detail::render_ints(shape) + ": the tensor would hold more than 2^63-1 bytes of " +
           std::string(to_string(dtype)));
    }
  }
}

// src and dst fit the mesh and a tensor of `rank` dims: "<prefix>src<owner> = \"S(2)R\": <why><suffix>".
void require_states_fit(const Design& design, const DesignTensor& tensor, std::size_t rank, const std::string& prefix,
                        const std::string& owner, const std::string& suffix) {
  for (const auto& [key, state] : {std::pair<std::string, const State*>{"src", &tensor.src}, {"dst", &tensor.dst}}) {
    if (auto why = state_misfit(*state, design.mesh.shape.size(), static_cast<std::int64_t>(rank))) {
      fail(prefix + key + owner + " = " + detail::render_text(to_string(*state)) + ": " + *why + suffix);
    }
  }
}

}  // namespace

std::vector<std::string> flattened_using(const Design& design, const std::string& axis) {
  std::vector<std::string> names;
  for (const FlattenSpec& f : design.mesh.flattened) {
    if (std::find(f.axes.begin(), f.axes.end(), axis) != f.axes.end()) names.push_back(f.name);
  }
  return names;
}

Design add_axis(const Design& design, std::size_t index, const std::string& name, std::int64_t size) {
  validate_design(design);
  const MeshSpec& mesh = design.mesh;
  const std::size_t n = mesh.shape.size();
  if (index > n) {
    fail("index = " + std::to_string(index) + ": a new axis goes at 0.." + std::to_string(n) + " (" +
         std::to_string(n) + " appends); " + axes_are(mesh));
  }
  if (n >= kMaxDesignAxes) {
    fail("the mesh has " + std::to_string(n) + " axes; at most " + std::to_string(kMaxDesignAxes));
  }
  require_name(name, "axis name");
  require_unused(mesh, name);
  require_size(size);
  Design next = design;
  next.mesh.shape.insert(at(next.mesh.shape, index), size);
  next.mesh.names.insert(at(next.mesh.names, index), name);
  AxisSources from;
  for (std::size_t j = 0; j <= n; ++j) {
    if (j == index) {
      from.emplace_back(std::nullopt);
    } else {
      from.emplace_back(j < index ? j : j - 1);
    }
  }
  carry_tensors(next, from);
  return finish(design, std::move(next));
}

Design remove_axis(const Design& design, const std::string& axis) {
  validate_design(design);
  const std::size_t k = require_axis(design.mesh, axis);
  const std::size_t n = design.mesh.shape.size();
  if (n == 1) fail("cannot remove " + quote(axis) + ": a mesh keeps at least one axis");
  Design next = design;
  next.mesh.shape.erase(at(next.mesh.shape, k));
  next.mesh.names.erase(at(next.mesh.names, k));
  std::erase_if(next.mesh.flattened, [&axis](const FlattenSpec& f) {
    return std::find(f.axes.begin(), f.axes.end(), axis) != f.axes.end();
  });
  AxisSources from;
  for (std::size_t j = 0; j + 1 < n; ++j) from.emplace_back(j < k ? j : j + 1);
  carry_tensors(next, from);
  carry_roles(next, [&axis](const std::string& name) {
    return name == axis ? std::vector<std::string>{} : std::vector<std::string>{name};
  });
  return finish(design, std::move(next));
}

Design move_axis(const Design& design, const std::string& axis, std::size_t index) {
  validate_design(design);
  const MeshSpec& mesh = design.mesh;
  const std::size_t k = require_axis(mesh, axis);
  const std::size_t n = mesh.shape.size();
  if (index >= n) {
    fail("index = " + std::to_string(index) + ": a mesh axis moves to 0.." + std::to_string(n - 1) +
         " (0 = outermost); " + axes_are(mesh));
  }
  std::vector<std::size_t> order;  // order[j]: the old index of new axis j
  for (std::size_t j = 0; j < n; ++j) {
    if (j != k) order.push_back(j);
  }
  order.insert(at(order, index), k);
  std::vector<std::size_t> position(n);  // position[old]: its new index
  for (std::size_t j = 0; j < n; ++j) position[order[j]] = j;

  Design next = design;
  AxisSources from;
  for (std::size_t j = 0; j < n; ++j) {
    next.mesh.shape[j] = mesh.shape[order[j]];
    next.mesh.names[j] = mesh.names[order[j]];
    from.emplace_back(order[j]);
  }
  for (FlattenSpec& f : next.mesh.flattened) {
    std::sort(f.axes.begin(), f.axes.end(), [&](const std::string& a, const std::string& b) {
      return position[*axis_index(mesh, a)] < position[*axis_index(mesh, b)];
    });
  }
  carry_tensors(next, from);
  return finish(design, std::move(next));
}

Design rename_axis(const Design& design, const std::string& from, const std::string& to) {
  validate_design(design);
  const MeshSpec& mesh = design.mesh;
  const std::optional<std::size_t> axis = axis_index(mesh, from);
  const std::optional<std::size_t> flat = flat_index(mesh, from);
  if (!axis && !flat) fail("axis " + quote(from) + " does not exist; " + axes_are(mesh) + "; " + flattened_are(mesh));
  if (to == from) return design;
  require_name(to, axis ? "axis name" : "flattened axis name");
  require_unused(mesh, to);
  Design next = design;
  if (axis) {
    next.mesh.names[*axis] = to;
    for (FlattenSpec& f : next.mesh.flattened) std::replace(f.axes.begin(), f.axes.end(), from, to);
    carry_roles(next, [&](const std::string& name) { return std::vector<std::string>{name == from ? to : name}; });
  } else {
    next.mesh.flattened[*flat].name = to;
  }
  validate_design(next);
  return next;
}

Design resize_axis(const Design& design, const std::string& axis, std::int64_t size) {
  validate_design(design);
  const std::size_t k = require_axis(design.mesh, axis);
  require_size(size);
  Design next = design;
  next.mesh.shape[k] = size;
  return finish(design, std::move(next));
}

Design set_world(const Design& design, std::int64_t world) {
  validate_design(design);
  require_world(world);
  require_fit(ranks(design.mesh.shape), world);
  require_divides(design.devices_per_host, world);
  Design next = design;
  next.world = world;
  validate_design(next);
  return next;
}

Design set_devices_per_host(const Design& design, std::int64_t devices_per_host) {
  validate_design(design);
  if (devices_per_host < 1) fail("devices_per_host = " + std::to_string(devices_per_host) + ": must be >= 1");
  require_divides(devices_per_host, design.world);
  Design next = design;
  next.devices_per_host = devices_per_host;
  validate_design(next);
  return next;
}

Design flatten_axes(const Design& design, const std::vector<std::string>& axes,
                    const std::optional<std::string>& name) {
  validate_design(design);
  const MeshSpec& mesh = design.mesh;
  // Mesh axes only: the root would also slice by a flattened name, which a design cannot record.
  for (const std::string& axis : axes) (void)require_axis(mesh, axis);
  const DeviceMesh root = torch_checked([&design] { return build_mesh(design.mesh, design.world); });
  const DeviceMesh sliced = torch_checked([&root, &axes] { return root.slice(axes); });
  // PyTorch lets size-1 axes (which own no ranks) through in any order; a design lists axes in mesh order.
  for (std::size_t a = 1; a < axes.size(); ++a) {
    for (std::size_t b = 0; b < a; ++b) {
      if (axes[a] == axes[b]) fail("axis " + quote(axes[a]) + " is listed twice in " + py_names(axes));
    }
    if (*axis_index(mesh, axes[a]) < *axis_index(mesh, axes[a - 1])) {
      fail("axes " + py_names(axes) + " are not in mesh order (outer to inner: " + join(mesh.names) + ")");
    }
  }
  std::string flat_name;
  if (name) {
    flat_name = *name;
  } else {
    for (std::size_t a = 0; a < axes.size(); ++a) flat_name += (a > 0 ? "_" : "") + axes[a];
  }
  require_name(flat_name, "flattened axis name");
  // mesh["dp"]._flatten("dp") is mesh["dp"] itself in PyTorch: nothing is registered.
  if (axes.size() == 1 && axes[0] == flat_name) return design;
  (void)torch_checked([&sliced, &flat_name] { return sliced.flatten(flat_name); });
  // PyTorch returns the registered mesh when the name exists with the same groups: nothing changes.
  if (flat_index(mesh, flat_name)) return design;
  Design next = design;
  next.mesh.flattened.push_back(FlattenSpec{flat_name, axes});
  validate_design(next);
  return next;
}

Design remove_flattened(const Design& design, const std::string& name) {
  validate_design(design);
  const MeshSpec& mesh = design.mesh;
  const std::optional<std::size_t> flat = flat_index(mesh, name);
  if (!flat) {
    if (axis_index(mesh, name)) fail(quote(name) + " is a mesh axis, not a flattened axis; " + flattened_are(mesh));
    fail("flattened axis " + quote(name) + " does not exist; " + flattened_are(mesh));
  }
  Design next = design;
  next.mesh.flattened.erase(at(next.mesh.flattened, *flat));
  validate_design(next);
  return next;
}

Design unflatten_axis(const Design& design, const std::string& axis, const std::vector<std::int64_t>& sizes,
                      const std::vector<std::string>& names) {
  validate_design(design);
  const MeshSpec& mesh = design.mesh;
  if (flat_index(mesh, axis)) {
    fail(quote(axis) + " is a flattened axis: only a mesh axis can be split; " + axes_are(mesh));
  }
  const DeviceMesh root = torch_checked([&design] { return build_mesh(design.mesh, design.world); });
  (void)torch_checked([&] { return root.unflatten(axis, sizes, names); });
  for (std::size_t i = 0; i < names.size(); ++i) require_name(names[i], detail::item("names", i));
  const std::size_t k = *axis_index(mesh, axis);
  const std::size_t m = sizes.size();
  const std::size_t n = mesh.shape.size();
  if (n - 1 + m > kMaxDesignAxes) {
    fail("the mesh would have " + std::to_string(n - 1 + m) + " axes; at most " + std::to_string(kMaxDesignAxes));
  }

  Design next = design;
  next.mesh.shape.erase(at(next.mesh.shape, k));
  next.mesh.shape.insert(at(next.mesh.shape, k), sizes.begin(), sizes.end());
  next.mesh.names.erase(at(next.mesh.names, k));
  next.mesh.names.insert(at(next.mesh.names, k), names.begin(), names.end());
  for (FlattenSpec& f : next.mesh.flattened) {
    const auto it = std::find(f.axes.begin(), f.axes.end(), axis);
    if (it == f.axes.end()) continue;
    const auto pos = f.axes.erase(it);
    f.axes.insert(pos, names.begin(), names.end());
  }
  AxisSources from;
  for (std::size_t j = 0; j < n - 1 + m; ++j) from.emplace_back(j < k ? j : j < k + m ? k : j + 1 - m);
  carry_tensors(next, from);
  carry_roles(next, [&](const std::string& name) { return name == axis ? names : std::vector<std::string>{name}; });
  return finish(design, std::move(next));
}

Design apply_mesh(const Design& design, const MeshSpec& mesh, std::optional<std::int64_t> world) {
  validate_design(design);
  const std::optional<std::int64_t> n = ranks(mesh.shape);
  const bool sizes_ok = std::all_of(mesh.shape.begin(), mesh.shape.end(), [](std::int64_t s) { return s >= 1; });
  Design next = design;
  next.mesh = mesh;
  if (world) {
    require_world(*world);
    if (sizes_ok) require_fit(n, *world);
    next.world = *world;
  } else {
    if (sizes_ok) require_world_size(n);
    next.world = sizes_ok && n ? *n : 1;  // validate_design names a bad size
  }
  next.devices_per_host = std::gcd(design.devices_per_host, next.world);
  AxisSources from;
  for (const std::string& axis : mesh.names) from.push_back(axis_index(design.mesh, axis));
  carry_tensors(next, from);
  carry_roles(next, [&mesh](const std::string& name) {
    return axis_index(mesh, name) ? std::vector<std::string>{name} : std::vector<std::string>{};
  });
  validate_design(next);
  return next;
}

// ---- Tensors ------------------------------------------------------------------------------------------------

State replicated_state(const Design& design) {
  return State(std::vector<Placement>(design.mesh.shape.size(), Placement::replicate()));
}

Design add_tensor(const Design& design, const DesignTensor& tensor) {
  validate_design(design);
  if (design.tensors.size() >= kMaxDesignTensors) {
    fail("tensors: the design has " + std::to_string(design.tensors.size()) + " tensors; at most " +
         std::to_string(kMaxDesignTensors));
  }
  require_new_tensor_name(design, tensor.name);
  require_shape(tensor.shape, tensor.dtype);
  require_states_fit(design, tensor, tensor.shape.size(), "", "", "");
  Design next = design;
  next.tensors.push_back(tensor);
  validate_design(next);
  return next;
}

Design remove_tensor(const Design& design, const std::string& name) {
  validate_design(design);
  const std::size_t k = require_tensor(design, name);
  Design next = design;
  next.tensors.erase(at(next.tensors, k));
  if (next.workload) {
    std::erase_if(next.workload->tensors, [&name](const WorkloadTensor& w) { return w.tensor == name; });
  }
  validate_design(next);
  return next;
}

Design rename_tensor(const Design& design, const std::string& from, const std::string& to) {
  validate_design(design);
  const std::size_t k = require_tensor(design, from);
  if (to == from) return design;
  require_new_tensor_name(design, to);
  Design next = design;
  next.tensors[k].name = to;
  if (next.workload) {
    for (WorkloadTensor& w : next.workload->tensors) {
      if (w.tensor == from) w.tensor = to;
    }
  }
  validate_design(next);
  return next;
}

Design set_tensor_shape(const Design& design, const std::string& name, const std::vector<std::int64_t>& shape) {
  validate_design(design);
  const std::size_t k = require_tensor(design, name);
  const DesignTensor& tensor = design.tensors[k];
  require_shape(shape, tensor.dtype);
  require_states_fit(design, tensor, shape.size(), "shape = " + detail::render_ints(shape) + ": ",
                     " of " + quote_tensor(name), "; change the states first");
  Design next = design;
  next.tensors[k].shape = shape;
  validate_design(next);
  return next;
}

Design set_tensor_dtype(const Design& design, const std::string& name, DType dtype) {
  validate_design(design);
  const std::size_t k = require_tensor(design, name);
  if (dtype_from_string(to_string(dtype)) != dtype) {
    fail("dtype = " + std::to_string(static_cast<int>(dtype)) + ": not a dtype; dtypes are " + [] {
      std::vector<std::string> names;
      for (const auto n : dtype_names()) names.emplace_back(n);
      return join(names);
    }());
  }
  const DesignTensor& tensor = design.tensors[k];
  std::int64_t bytes = itemsize(dtype);
  for (std::int64_t size : tensor.shape) {
    if (__builtin_mul_overflow(bytes, size, &bytes)) {
      fail("dtype = " + std::string(to_string(dtype)) + ": the tensor " + detail::render_ints(tensor.shape) +
           " would hold more than 2^63-1 bytes");
    }
  }
  Design next = design;
  next.tensors[k].dtype = dtype;
  validate_design(next);
  return next;
}

}  // namespace meshloom
