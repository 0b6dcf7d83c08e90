// Design edits: the pure functions the mesh designer (and the Redistribution dock, for tensors) applies to a
// Design. Each takes a design and returns the edited design, validated (validate_design), or throws ValueError
// naming the offending value and the rule it breaks; the input is never modified. The app wraps each call in one
// undoable command and keeps no mesh arithmetic of its own.
//
// Errors: the edits' own checks throw meshloom::Error of kind ValueError (an unknown name too, as
// validate_design does, not KeyError). The checks flatten_axes and unflatten_axis leave to the engine's
// DeviceMesh come out exactly as PyTorch raises them, kind and text ("KeyError: Invalid mesh_dim_names ('tp',
// 'dp') specified. Mesh dim indices should be in ascending order."). The input design is validated
// first (an invalid input throws validate_design's error). Messages, e.g.:
//   axis 'cp' does not exist; axes are dp, tp
//   'dp_tp' is a flattened axis, not a mesh axis; axes are dp, tp
//   'tp' is already the name of a mesh axis; axes are dp, tp
//   axis name = "a b": names must be 1 to 64 characters of A-Z, a-z, 0-9 and _
//   size = 0: axis sizes must be >= 1
//   mesh: world = 8 but the mesh holds 16 ranks
//   devices_per_host = 4 does not divide world = 6
//
// Tensors follow the mesh: src and dst hold one placement per mesh axis, so every edit that adds, removes,
// moves or splits axes carries each tensor's placements (and shard orders) along by axis:
//   add     Replicate on the new axis;
//   remove  the axis' placement is dropped (and the axis leaves its dim's shard order);
//   move    placements are permuted with the axes; a dim's shard order keeps its axes, renumbered;
//   split   (unflatten) every part gets the axis' placement: S(d) on axis a becomes S(d) on each part, in
//           a's place in d's shard order, parts outer first: torch.chunk of a chunk, which gives every rank
//           the same block as before when the parts' product divides the dim's extent at that point of the
//           order (e.g. always for a dim divisible by the mesh size); with uneven chunks the blocks can differ
//           (dim 5 over 4 ranks: 2,2,1,0; over 2x2: 2,1,1,1). P(op) becomes P(op) on each part; R stays R;
//   preset  placements are carried by axis name where the new mesh has an axis of that name, Replicate
//           elsewhere; a dim's shard order keeps the relative order of its carried axes.
//
// World: when the old world equals the old mesh size (the mesh covers the world, the usual case) the world
// follows the mesh size, and devices_per_host becomes gcd(devices_per_host, world) so that hosts stay whole
// (8 per host, world 8 -> 4: 4 per host); otherwise the world stays, the mesh must still fit in it and
// devices_per_host must still divide it.
//
// Flattened axes follow their axes: rename renames the references; move re-sorts each flattened axis' list
// into the new mesh order; split replaces the axis by its parts; remove removes every flattened axis that
// uses the removed axis (flattened_using says which, so the app can name them in its undo text).
//
// Workload roles (design.workload->model->axes) follow their axes by name: rename renames them; remove drops the
// axis from fsdp and replicate and clears a tp, cp, ep or pp role it played; split puts every part in fsdp or
// replicate in the axis' place, and keeps a single-axis role only on a part that keeps the axis' name; preset keeps
// the roles whose axes the new mesh has (by name) and drops the others. add, move and resize leave them as they are
// (roles name axes, and fsdp and replicate are applied in mesh order whatever their listed order).
//
// Tensor edits (add_tensor .. set_tensor_dtype) change one design tensor and leave the mesh alone. They follow the
// design's tensor rules (design.hpp): names 1..256 characters of A-Z a-z 0-9 _ ., unique; at most 1024 tensors;
// shape 0..64 dims, each >= 1, numel * itemsize < 2^63; src and dst one placement per mesh axis, sharded dims < rank.
// The workload follows the tensor by name: rename renames its entry in design.workload->tensors, remove removes the
// entry (the workload lists tensors of the design; a removed tensor is no longer communicated), and the others leave
// it as it is (a new tensor is not added to the workload). Messages, e.g.:
//   tensor 'wq' does not exist; tensors are w, b
//   'w' is already the name of a tensor; tensors are w, b
//   tensor name = "a b": names must be 1 to 256 characters of A-Z, a-z, 0-9, _ and .
//   shape[1] = 0: dims must be >= 1
//   shape = [16]: src of 'w' = "RS(1)": S(1) on axis 1 shards dim 1 but the tensor has 1 dim (0..0); change the
//     states first
//
// Example: on (dp=2, tp=4) with tensor w "S(0)R",
//   unflatten_axis(d, "tp", {2, 2}, {"tp_a", "tp_b"})  -> (dp=2, tp_a=2, tp_b=2), w "S(0)RR"
//   flatten_axes(d, {"dp", "tp"}, std::nullopt)         -> flattened dp_tp = [dp, tp]
//   move_axis(d, "tp", 0)                               -> (tp=4, dp=2), w "RS(0)"
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "meshloom/design/design.hpp"
#include "meshloom/dtype.hpp"
#include "meshloom/mesh/mesh_spec.hpp"
#include "meshloom/plan/state.hpp"

namespace meshloom {

// Names of the flattened axes whose axis list contains `axis`, in creation order (none for an unknown name).
[[nodiscard]] std::vector<std::string> flattened_using(const Design& design, const std::string& axis);

// Inserts axis `name` of `size` before mesh axis `index` (index == ndim appends). ValueError for an index
// past the end, a name already used by an axis or a flattened axis, or a size < 1.
[[nodiscard]] Design add_axis(const Design& design, std::size_t index, const std::string& name, std::int64_t size);

// Removes mesh axis `axis` and every flattened axis that uses it. ValueError for an unknown axis (the
// message lists the axes) or for the last axis of the mesh ("a mesh keeps at least one axis").
[[nodiscard]] Design remove_axis(const Design& design, const std::string& axis);

// Moves mesh axis `axis` to position `index` (0 = outermost). ValueError for an unknown axis or an index past
// the last axis. The design records the moved mesh as init_device_mesh builds it, so ranks are renumbered:
// every axis keeps its groups up to that renumbering (the rank at coordinate c before is the rank at the
// permuted coordinate after), not as sets of global ranks: moving tp of (dp=2, tp=4) to the front turns its
// groups [[0,1,2,3],[4,5,6,7]] into [[0,2,4,6],[1,3,5,7]].
[[nodiscard]] Design move_axis(const Design& design, const std::string& axis, std::size_t index);

// Renames a mesh axis or a flattened axis, and every reference to it. ValueError for an unknown name, an
// invalid new name (the design's name rule) or one already in use. Renaming to the same name is a no-op.
[[nodiscard]] Design rename_axis(const Design& design, const std::string& from, const std::string& to);

// Sets the size of mesh axis `axis`. ValueError for an unknown axis, size < 1, or a mesh that no longer fits
// the world it does not follow ("mesh: world = 8 but the mesh holds 16 ranks").
[[nodiscard]] Design resize_axis(const Design& design, const std::string& axis, std::int64_t size);

// Sets the world (ValueError: < the mesh size, > kMaxDesignWorld, or not divisible by devices_per_host) and
// the devices per host (ValueError: < 1 or not dividing the world).
[[nodiscard]] Design set_world(const Design& design, std::int64_t world);
[[nodiscard]] Design set_devices_per_host(const Design& design, std::int64_t devices_per_host);

// Flattens mesh axes `axes` under `name` (default: the axis names joined by "_"), as PyTorch's
// mesh[axes]._flatten(name) on the root. Unknown names and flattened axes among `axes` are refused first (the
// root would slice by a flattened name, which a design cannot record); the engine's DeviceMesh then checks the
// slice (empty, order, overlap) and the name with PyTorch's messages; size-1 axes, which PyTorch lets through
// in any order, must still be listed once each in mesh order; the name must follow the design's name rule.
// Flattening axes already flattened under the same name (same groups) is a no-op, and so is flattening one
// axis under its own name (mesh["dp"]._flatten("dp") is mesh["dp"] in PyTorch); any other name used by a mesh
// axis, or by a flattened axis with other groups, is a ValueError.
[[nodiscard]] Design flatten_axes(const Design& design, const std::vector<std::string>& axes,
                                  const std::optional<std::string>& name = std::nullopt);

// Removes flattened axis `name`. ValueError for an unknown flattened axis (or a mesh axis' name).
[[nodiscard]] Design remove_flattened(const Design& design, const std::string& name);

// Splits mesh axis `axis` into `sizes` named `names`, in place (PyTorch's mesh._unflatten(axis, sizes,
// names) on the root; the engine's DeviceMesh::unflatten checks it with PyTorch's messages). The design
// records the result as init_device_mesh would build it: the groups of every axis equal those of the
// unflattened mesh (a split of a row-major root axis is row-major), and every flattened axis keeps its groups.
// A flattened axis cannot be split here ("'dp' is a flattened axis: ..."); new names must not be in use (except
// `axis` itself) and must follow the design's name rule ("names[1] = ...").
[[nodiscard]] Design unflatten_axis(const Design& design, const std::string& axis,
                                    const std::vector<std::int64_t>& sizes, const std::vector<std::string>& names);

// Replaces the mesh by `mesh` (a preset's MeshSpec) over `world` ranks (default: the mesh size, whatever the
// old world was), devices_per_host becoming gcd(devices_per_host, world); tensors carried by axis
// name (see above). The spec is checked by validate_design ("mesh.shape[1] = 0: axis sizes must be >= 1").
[[nodiscard]] Design apply_mesh(const Design& design, const MeshSpec& mesh,
                                std::optional<std::int64_t> world = std::nullopt);

// ---- Tensors ----

// The state with R on every axis of the design's mesh ("RR" on (dp, tp)): what a new tensor starts from.
[[nodiscard]] State replicated_state(const Design& design);

// Appends `tensor` to design.tensors. ValueError for a name that breaks the tensor name rule or is already a
// tensor's, a design that already has kMaxDesignTensors tensors, a bad shape (see set_tensor_shape), or a src or dst
// that does not fit the mesh and the shape ("src = \"S(2)R\": S(2) on axis 0 shards dim 2 but the tensor has 2 dims
// (0..1)"). The workload is left as it is.
[[nodiscard]] Design add_tensor(const Design& design, const DesignTensor& tensor);

// Removes tensor `name`, and its entry of the workload when it has one (the workload itself stays, empty or not).
// ValueError for an unknown name (the message lists the tensors).
[[nodiscard]] Design remove_tensor(const Design& design, const std::string& name);

// Renames tensor `from` to `to`, and its workload entry. ValueError for an unknown name, an invalid new name (the
// tensor name rule) or one that another tensor has. Renaming to the same name is a no-op.
[[nodiscard]] Design rename_tensor(const Design& design, const std::string& from, const std::string& to);

// Sets the global shape of tensor `name`; src and dst stay as they are. ValueError for an unknown name, more than
// kMaxDesignTensorRank dims ("shape = [...]: at most 64 dims"), a dim < 1 ("shape[1] = 0: dims must be >= 1"),
// numel * itemsize >= 2^63, or a src or dst that shards a dim the new shape does not have: the edit is refused (not
// the state reset), naming the state and the dim, so a rank can only shrink once the states no longer shard the dims
// it drops (see the messages above).
[[nodiscard]] Design set_tensor_shape(const Design& design, const std::string& name,
                                      const std::vector<std::int64_t>& shape);

// Sets the element type of tensor `name`. ValueError for an unknown name or a tensor that would hold 2^63 bytes or
// more ("dtype = float64: the tensor [...] would hold more than 2^63-1 bytes").
[[nodiscard]] Design set_tensor_dtype(const Design& design, const std::string& name, DType dtype);

}  // namespace meshloom
