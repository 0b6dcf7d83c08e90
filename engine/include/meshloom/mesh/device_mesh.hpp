// DeviceMesh: an N-D arrangement of ranks with named axes, behaving like PyTorch's newest DeviceMesh
// (torch/distributed/device_mesh.py on the per-axis normalized layouts of _mesh_layout.py), without a
// communicator.
//
// A mesh is a value over
//   - the root rank map: the global ranks of the root mesh, in row-major order (identity 0..N-1 for a mesh
//     built from a shape, or an explicit rank tensor), shared by every mesh derived from that root;
//   - one normalized layout per axis (coalesced, flat, size-1 axes empty): offsets into the rank map;
//   - the axis names (optional);
//   - the root's identity, which holds the registry of flattened axes (name -> layout), as PyTorch's root
//     mesh holds `_flatten_mapping`. flatten() registers on the root, so every mesh of that root sees it.
//
// Unlike PyTorch, which gives each process only the instance of a submesh that holds it, a mesh here answers
// for any rank: every group of every axis, every instance of a submesh, the coordinate and local ranks of
// any rank. Nothing per rank is materialised unless asked for: construction, slicing, flattening and
// lookups are O(number of layout leaves); enumerations are O(size of the answer).
//
// Example (world 8):
//   auto mesh = DeviceMesh::init({2, 2, 2}, {{"dp", "cp", "tp"}});      // layout (2,2,2):(4,2,1)
//   mesh.groups("tp")              == [[0,1],[2,3],[4,5],[6,7]]
//   mesh.slice({"dp", "tp"}).instances() == [[[0,1],[4,5]], [[2,3],[6,7]]]
//   auto dp_cp = mesh.slice({"dp", "cp"}).flatten();                    // "dp_cp", layout (4,):(2,)
//   mesh.groups("dp_cp")           == [[0,2,4,6],[1,3,5,7]]
//   mesh.coordinate(5)             == (1,0,1)
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "meshloom/layout/layout.hpp"
#include "meshloom/mesh/mesh_spec.hpp"

namespace meshloom {

// The global ranks of a root mesh, by position. Identity maps store nothing per rank.
class RankMap {
public:
  static RankMap identity(std::int64_t size);
  // Throws ValueError naming a negative or repeated rank.
  static RankMap from_ranks(std::vector<std::int64_t> ranks);

  [[nodiscard]] std::int64_t size() const noexcept;
  [[nodiscard]] bool is_identity() const noexcept;
  [[nodiscard]] std::int64_t operator[](std::int64_t position) const noexcept;
  // The position of a global rank, or nullopt. O(1); an explicit map builds its inverse once, on first use.
  [[nodiscard]] std::optional<std::int64_t> position_of(std::int64_t rank) const;
  // Largest rank + 1 (the smallest world that holds every rank).
  [[nodiscard]] std::int64_t min_world() const noexcept;

  friend bool operator==(const RankMap& a, const RankMap& b) noexcept;
  [[nodiscard]] std::size_t hash() const noexcept;

private:
  struct Data;
  std::shared_ptr<const Data> data_;
};

// A mesh axis named by index (negative counts from the end) or by name (an own axis, or a flattened axis
// registered on the root).
using AxisRef = std::variant<std::int64_t, std::string>;

class DeviceMesh {
public:
  using Names = std::vector<std::string>;

  // init_device_mesh(shape, mesh_dim_names): ranks 0..N-1 in row-major order, layout shape:suffix_product.
  // Checks, in PyTorch's order: repeated names (RuntimeError "Each mesh_dim_name must be unique. ..."), name
  // count (RuntimeError "mesh_shape and mesh_dim_names should have same length! ..."); then sizes >= 1 and
  // the world (RuntimeError "Mesh should not be bigger than default world size W, but found N ranks!").
  // world defaults to the number of ranks in the mesh.
  static DeviceMesh init(const std::vector<std::int64_t>& shape, const std::optional<Names>& names = std::nullopt,
                         std::optional<std::int64_t> world = std::nullopt);

  // DeviceMesh(mesh=tensor): an explicit rank tensor of the given shape, in row-major order. Any permutation
  // or subset of a world; ranks must be distinct and >= 0. world defaults to max(N, largest rank + 1).
  static DeviceMesh from_ranks(const std::vector<std::int64_t>& shape, std::vector<std::int64_t> ranks,
                               const std::optional<Names>& names = std::nullopt,
                               std::optional<std::int64_t> world = std::nullopt);

  // ---- Shape ----------------------------------------------------------------------------------------------
  [[nodiscard]] std::size_t ndim() const noexcept { return axes_.size(); }
  [[nodiscard]] std::vector<std::int64_t> shape() const;
  [[nodiscard]] std::int64_t size() const;                 // number of ranks in one instance
  [[nodiscard]] std::int64_t size(const AxisRef& axis) const;
  [[nodiscard]] const std::optional<Names>& names() const noexcept { return names_; }
  [[nodiscard]] std::int64_t world() const noexcept;
  // The normalized layout of each axis (flat and coalesced; a size-1 axis is the empty layout ():()).
  [[nodiscard]] const std::vector<Layout>& axes() const noexcept { return axes_; }
  // The mesh layout, one top-level mode per axis: an axis of one leaf prints as an int, a size-1 axis as 1:0,
  // a non-contiguous (flattened) axis as a tuple. (2,4):(4,1); ((2,2),):((4,1),) for dp*tp of (2,2,2).
  [[nodiscard]] Layout layout() const;
  [[nodiscard]] const RankMap& rank_map() const noexcept;

  // ---- Root ------------------------------------------------------------------------------------------------
  // The root mesh this mesh was derived from (itself for a root).
  [[nodiscard]] DeviceMesh root() const;
  // Names of the flattened axes registered on the root, in creation order.
  [[nodiscard]] std::vector<std::string> flattened_names() const;
  // The flattened mesh registered on the root under `name`, if any.
  [[nodiscard]] std::optional<DeviceMesh> flattened(const std::string& name) const;

  // ---- Transformations -------------------------------------------------------------------------------------
  // mesh[names]: own axis names, plus flattened names when this mesh equals its root. Returns *this when the
  // names equal its own. Errors as PyTorch: no names (RuntimeError), unknown names (KeyError "Invalid
  // mesh_dim_names ... Valid mesh_dim_names are [...]"), out of major-to-minor order (KeyError "... Mesh dim
  // indices should be in ascending order."), overlapping (RuntimeError "Slicing overlapping dim_names ...").
  [[nodiscard]] DeviceMesh slice(const Names& names) const;
  // _flatten(name): all axes as one, registered on the root. Default name: the axis names joined by "_".
  // Returns *this for a 1-D mesh already named `name`, and the registered mesh when `name` exists with the
  // same layout; a root axis name or a different layout under an existing name is a ValueError.
  [[nodiscard]] DeviceMesh flatten(const std::optional<std::string>& name = std::nullopt) const;
  // _unflatten(axis, sizes, names): splits one axis into several, in place. The new axes are not registered;
  // their names must not repeat another axis name or a flattened name of the root (PyTorch checks neither).
  [[nodiscard]] DeviceMesh unflatten(const AxisRef& axis, const std::vector<std::int64_t>& sizes,
                                     const Names& names) const;
  // _concatenate(meshes): the axes of every mesh, in order (no ordering check: a transposed mesh is fine).
  // The meshes must share the root rank map and must not overlap.
  [[nodiscard]] static DeviceMesh concatenate(const std::vector<DeviceMesh>& meshes);

  // ---- Enumeration -----------------------------------------------------------------------------------------
  // Every instance of this mesh across the rank map (PyTorch's remap_to_tensor): shape {instances, shape...}.
  [[nodiscard]] RankTensor instances() const;
  // Every group of one axis (own or flattened), in PyTorch's order: shape {groups, group size}; the order
  // inside a group is the local-rank order.
  [[nodiscard]] RankTensor groups(const AxisRef& axis) const;
  // The instance of this mesh that holds `rank` (what PyTorch's `mesh` property returns on that rank): shape
  // {1, shape...}. A mesh with a single instance returns it for every rank of the world, member or not (as
  // PyTorch does); otherwise RuntimeError when no instance holds it.
  [[nodiscard]] RankTensor instance_of(std::int64_t rank) const;
  // The group of `axis` that holds `rank`. RuntimeError when no group holds it.
  [[nodiscard]] std::vector<std::int64_t> group_of(std::int64_t rank, const AxisRef& axis) const;
  // The coordinate of `rank` inside the instance that holds it, or nullopt. ValueError for a rank outside
  // [0, world).
  [[nodiscard]] std::optional<std::vector<std::int64_t>> coordinate(std::int64_t rank) const;
  // The position of `rank` in its group of `axis` (own or flattened). Without an axis the mesh must be 1-D.
  [[nodiscard]] std::int64_t local_rank(std::int64_t rank, const std::optional<AxisRef>& axis = std::nullopt) const;
  // True when some instance holds `rank`.
  [[nodiscard]] bool contains(std::int64_t rank) const;

  // ---- Identity --------------------------------------------------------------------------------------------
  // PyTorch's equality: same root rank map, same normalized axes, same names.
  friend bool operator==(const DeviceMesh& a, const DeviceMesh& b) noexcept;
  [[nodiscard]] std::size_t hash() const noexcept;
  // DeviceMesh((dp=2, tp=4), stride=(4, 1)); unnamed: DeviceMesh((2, 4), stride=(4, 1)).
  [[nodiscard]] std::string repr() const;

  struct Root;
  struct Tiling;

private:
  DeviceMesh(std::shared_ptr<Root> root, std::vector<Layout> axes, std::optional<Names> names);
  [[nodiscard]] std::size_t axis_index(const std::string& name) const;
  // The rank-map position of `rank`, or nullopt when the root holds no such rank. ValueError outside [0, world).
  [[nodiscard]] std::optional<std::int64_t> position(std::int64_t rank) const;
  [[nodiscard]] Layout axis_layout(const AxisRef& axis) const;

  std::shared_ptr<Root> root_;
  std::vector<Layout> axes_;
  std::optional<Names> names_;
  std::shared_ptr<const Tiling> tiling_;  // derived from axes_ and the rank map size at construction
};

// The normalized form of one axis layout: coalesced and flat; size 1 gives ():(). Equal functions give equal
// layouts (PyTorch's _FlatLayout).
[[nodiscard]] Layout normalize_axis(const Layout& l);
// Builds a MeshSpec: init(shape, names, world), then each flattened axis as root.slice(axes).flatten(name).
[[nodiscard]] DeviceMesh build_mesh(const MeshSpec& spec, std::optional<std::int64_t> world = std::nullopt);
// Python's repr of a tuple of names: ('dp', 'tp'), ('dp',), ().
[[nodiscard]] std::string py_names(const std::vector<std::string>& names, bool as_list = false);

}  // namespace meshloom

template <>
struct std::hash<meshloom::DeviceMesh> {
  std::size_t operator()(const meshloom::DeviceMesh& m) const noexcept { return m.hash(); }
};
