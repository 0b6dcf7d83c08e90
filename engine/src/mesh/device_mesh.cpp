#include "meshloom/mesh/device_mesh.hpp"

#include <algorithm>
#include <limits>
#include <mutex>
#include <numeric>
#include <unordered_map>
#include <utility>

#include "meshloom/error.hpp"

namespace meshloom {

// ---- Formatting helpers ---------------------------------------------------------------------------------

namespace {

std::string py_ints(const std::vector<std::int64_t>& values) {
  std::string s = "(";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(values[i]);
  }
  if (values.size() == 1) s += ",";
  return s + ")";
}

std::string py_optional_names(const std::optional<DeviceMesh::Names>& names) {
  return names ? py_names(*names) : "None";
}

constexpr std::int64_t kMaxRanks = std::numeric_limits<std::int32_t>::max();

}  // namespace

std::string py_names(const std::vector<std::string>& names, bool as_list) {
  std::string s = as_list ? "[" : "(";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) s += ", ";
    s += "'" + names[i] + "'";
  }
  if (!as_list && names.size() == 1) s += ",";
  return s + (as_list ? "]" : ")");
}

// ---- RankMap --------------------------------------------------------------------------------------------

struct RankMap::Data {
  std::int64_t size = 0;
  bool identity = true;
  std::vector<std::int64_t> ranks;  // empty for identity maps
  std::int64_t max_rank = -1;
  std::size_t hash = 0;
  // Inverse of an explicit map, built on first use: dense when the ranks are dense enough, hashed otherwise.
  mutable std::once_flag inverse_once;
  mutable std::vector<std::int64_t> dense_inverse;
  mutable std::unordered_map<std::int64_t, std::int64_t> sparse_inverse;
};

namespace {
std::size_t hash_ranks(std::int64_t size, const std::vector<std::int64_t>* ranks) {
  std::size_t h = std::hash<std::int64_t>{}(size);
  auto mix = [&h](std::int64_t v) { h ^= std::hash<std::int64_t>{}(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  // Identity and an explicit 0..N-1 must hash alike because they compare equal.
  for (std::int64_t i = 0; i < size; ++i) mix(ranks ? (*ranks)[static_cast<std::size_t>(i)] : i);
  return h;
}
}  // namespace

RankMap RankMap::identity(std::int64_t size) {
  if (size < 1 || size > kMaxRanks) {
    raise(ErrorKind::ValueError, "a mesh must hold between 1 and " + std::to_string(kMaxRanks) + " ranks, got " +
                                     std::to_string(size));
  }
  auto data = std::make_shared<Data>();
  data->size = size;
  data->max_rank = size - 1;
  // Construction stays O(1): an identity map hashes by its size alone. An explicit map equal to an identity
  // map is stored as one (see from_ranks), so equal maps always hash alike.
  data->hash = std::hash<std::int64_t>{}(size) ^ 0x5bd1e995ULL;
  RankMap m;
  m.data_ = std::move(data);
  return m;
}

RankMap RankMap::from_ranks(std::vector<std::int64_t> ranks) {
  const auto n = static_cast<std::int64_t>(ranks.size());
  if (n < 1 || n > kMaxRanks) {
    raise(ErrorKind::ValueError, "a mesh must hold between 1 and " + std::to_string(kMaxRanks) + " ranks, got " +
                                     std::to_string(n));
  }
  bool identity = true;
  std::int64_t max_rank = -1;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t r = ranks[static_cast<std::size_t>(i)];
    if (r < 0 || r > kMaxRanks) {
      raise(ErrorKind::ValueError, "rank " + std::to_string(r) + " at position " + std::to_string(i) +
                                       " of the mesh tensor is out of range [0, " + std::to_string(kMaxRanks) + "]");
    }
    identity = identity && r == i;
    max_rank = std::max(max_rank, r);
  }
  if (identity) return RankMap::identity(n);
  // Repeated ranks: a sort of a copy finds them in O(N log N) once per explicit root.
  std::vector<std::pair<std::int64_t, std::int64_t>> sorted;
  sorted.reserve(ranks.size());
  for (std::int64_t i = 0; i < n; ++i) sorted.emplace_back(ranks[static_cast<std::size_t>(i)], i);
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i].first == sorted[i - 1].first) {
      raise(ErrorKind::ValueError, "rank " + std::to_string(sorted[i].first) +
                                       " appears more than once in the mesh tensor (positions " +
                                       std::to_string(sorted[i - 1].second) + " and " +
                                       std::to_string(sorted[i].second) + ")");
    }
  }
  auto data = std::make_shared<Data>();
  data->size = n;
  data->identity = false;
  data->max_rank = max_rank;
  data->hash = hash_ranks(n, &ranks);
  data->ranks = std::move(ranks);
  RankMap m;
  m.data_ = std::move(data);
  return m;
}

std::int64_t RankMap::size() const noexcept { return data_->size; }
bool RankMap::is_identity() const noexcept { return data_->identity; }
std::int64_t RankMap::min_world() const noexcept { return data_->max_rank + 1; }
std::size_t RankMap::hash() const noexcept { return data_->hash; }

std::int64_t RankMap::operator[](std::int64_t position) const noexcept {
  return data_->identity ? position : data_->ranks[static_cast<std::size_t>(position)];
}

std::optional<std::int64_t> RankMap::position_of(std::int64_t rank) const {
  const Data& d = *data_;
  if (rank < 0 || rank > d.max_rank) return std::nullopt;
  if (d.identity) return rank;
  std::call_once(d.inverse_once, [&d] {
    if (d.max_rank < 4 * d.size + 1024) {
      d.dense_inverse.assign(static_cast<std::size_t>(d.max_rank + 1), -1);
      for (std::int64_t i = 0; i < d.size; ++i) d.dense_inverse[static_cast<std::size_t>(d.ranks[static_cast<std::size_t>(i)])] = i;
    } else {
      d.sparse_inverse.reserve(static_cast<std::size_t>(d.size));
      for (std::int64_t i = 0; i < d.size; ++i) d.sparse_inverse.emplace(d.ranks[static_cast<std::size_t>(i)], i);
    }
  });
  if (!d.dense_inverse.empty()) {
    const std::int64_t p = d.dense_inverse[static_cast<std::size_t>(rank)];
    return p < 0 ? std::nullopt : std::optional<std::int64_t>(p);
  }
  const auto it = d.sparse_inverse.find(rank);
  return it == d.sparse_inverse.end() ? std::nullopt : std::optional<std::int64_t>(it->second);
}

bool operator==(const RankMap& a, const RankMap& b) noexcept {
  if (a.data_ == b.data_) return true;
  if (a.data_->size != b.data_->size || a.data_->identity != b.data_->identity) return false;
  return a.data_->identity || a.data_->ranks == b.data_->ranks;
}

// ---- Root state -----------------------------------------------------------------------------------------

struct DeviceMesh::Root {
  RankMap rank_map;
  std::int64_t world = 0;
  std::vector<Layout> axes;
  std::optional<Names> names;
  // PyTorch's root `_flatten_mapping`, in creation order. Guarded: flatten() on any mesh of this root adds here.
  mutable std::mutex mutex;
  std::vector<std::pair<std::string, Layout>> flattened;

  [[nodiscard]] std::optional<Layout> find_flattened(const std::string& name) const {
    std::lock_guard lock(mutex);
    for (const auto& [n, l] : flattened) {
      if (n == name) return l;
    }
    return std::nullopt;
  }
};

// ---- Tiling: decomposing a rank-map position into (instance, coordinate) ---------------------------------

namespace {

std::vector<Leaf> all_leaves(const std::vector<Layout>& axes) {
  std::vector<Leaf> out;
  for (const auto& a : axes) {
    for (const auto& leaf : leaves(a)) out.push_back(leaf);
  }
  return out;
}

}  // namespace

// The leaves of `axes` together with the leaves of their complement in the rank map form one compact
// layout; sorted by stride, each position p of the rank map decomposes as (p / stride) % size per leaf.
struct DeviceMesh::Tiling {
  struct Part {
    std::int64_t size, stride;
    std::size_t owner;  // axis index, or kComplement
    std::int64_t weight;
  };
  static constexpr std::size_t kComplement = std::numeric_limits<std::size_t>::max();

  Layout complement;
  std::vector<Part> parts;  // stride descending

  Tiling(const std::vector<Layout>& axes, std::int64_t n) : complement(complement_of(axes, n)) {
    auto add = [this](const std::vector<Leaf>& ls, std::size_t owner) {
      std::int64_t weight = 1;
      for (std::size_t j = ls.size(); j-- > 0;) {
        if (ls[j].size != 1) parts.push_back({ls[j].size, ls[j].stride, owner, weight});
        weight *= ls[j].size;
      }
    };
    add(leaves(complement), kComplement);
    for (std::size_t k = 0; k < axes.size(); ++k) add(leaves(axes[k]), k);
    std::sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return a.stride > b.stride; });
  }

  static Layout complement_of(const std::vector<Layout>& axes, std::int64_t n) {
    const auto ls = all_leaves(axes);
    return ls.empty() ? meshloom::complement(Layout(), n) : meshloom::complement(from_leaves(ls), n);
  }

  // Instance index (lexicographic over the complement) and per-axis coordinates of position p.
  [[nodiscard]] std::int64_t decompose(std::int64_t p, std::vector<std::int64_t>& coordinate) const {
    std::int64_t instance = 0;
    for (const auto& part : parts) {
      const std::int64_t c = (p / part.stride) % part.size;
      if (part.owner == kComplement) {
        instance += c * part.weight;
      } else {
        coordinate[part.owner] += c * part.weight;
      }
    }
    return instance;
  }
};

namespace {

// rank_map[base + o] for every base (in the given order) and every offset o in `inner` (lexicographic).
RankTensor enumerate(const std::vector<std::int64_t>& bases, const std::vector<Leaf>& inner, const RankMap& rank_map,
                     std::vector<std::int64_t> shape) {
  RankTensor t;
  t.shape = std::move(shape);
  std::vector<std::int64_t> offsets;
  for_each_offset(inner, [&offsets](std::int64_t o) { offsets.push_back(o); });
  t.values.reserve(bases.size() * offsets.size());
  if (rank_map.is_identity()) {
    for (auto base : bases) {
      for (auto o : offsets) t.values.push_back(base + o);
    }
  } else {
    for (auto base : bases) {
      for (auto o : offsets) t.values.push_back(rank_map[base + o]);
    }
  }
  return t;
}

using Tiling = DeviceMesh::Tiling;

void check_names(const std::vector<std::int64_t>& shape, const std::optional<DeviceMesh::Names>& names) {
  if (!names) return;
  auto sorted = *names;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    raise(ErrorKind::RuntimeError,
          "Each mesh_dim_name must be unique. Found repeated mesh_dim_name in mesh_dim_names " + py_names(*names));
  }
  if (names->size() != shape.size()) {
    raise(ErrorKind::RuntimeError, "mesh_shape and mesh_dim_names should have same length! Found len(mesh_dim_names): " +
                                       std::to_string(names->size()) + " and len(mesh_shape):" +
                                       std::to_string(shape.size()) + ".");
  }
}

// `what` names the argument in messages: mesh_shape, or mesh_sizes for unflatten.
std::int64_t checked_numel(const std::vector<std::int64_t>& shape, const char* what = "mesh_shape") {
  if (shape.empty()) raise(ErrorKind::ValueError, std::string(what) + " () is empty: a mesh needs at least one axis");
  std::int64_t numel = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 1) {
      raise(ErrorKind::ValueError, std::string(what) + " " + py_ints(shape) + " has size " + std::to_string(shape[i]) +
                                       " at axis " + std::to_string(i) + ": every axis size must be >= 1");
    }
    if (numel > kMaxRanks / shape[i]) {
      raise(ErrorKind::ValueError, std::string(what) + " " + py_ints(shape) + " holds more than " +
                                       std::to_string(kMaxRanks) + " ranks");
    }
    numel *= shape[i];
  }
  return numel;
}

std::vector<Layout> row_major_axes(const std::vector<std::int64_t>& shape) {
  std::vector<Layout> axes;
  std::int64_t stride = 1;
  axes.resize(shape.size());
  for (std::size_t i = shape.size(); i-- > 0;) {
    axes[i] = normalize_axis(Layout(IntTuple(shape[i]), IntTuple(stride)));
    stride *= shape[i];
  }
  return axes;
}

std::int64_t check_world(std::optional<std::int64_t> world, std::int64_t numel, std::int64_t min_world) {
  if (!world) return std::max(numel, min_world);
  if (*world < 1 || *world > kMaxRanks) {
    raise(ErrorKind::ValueError, "world size " + std::to_string(*world) + " is out of range [1, " +
                                     std::to_string(kMaxRanks) + "]");
  }
  if (numel > *world) {
    raise(ErrorKind::RuntimeError, "Mesh should not be bigger than default world size " + std::to_string(*world) +
                                       ", but found " + std::to_string(numel) + " ranks!");
  }
  if (min_world > *world) {
    raise(ErrorKind::RuntimeError, "rank " + std::to_string(min_world - 1) + " of the mesh is not in the world of " +
                                       std::to_string(*world) + " ranks");
  }
  return *world;
}

}  // namespace

Layout normalize_axis(const Layout& l) {
  std::vector<Leaf> ls;
  for (const auto& leaf : leaves(coalesce(l))) {
    if (leaf.size != 1) ls.push_back(leaf);
  }
  return from_leaves(ls);
}

// ---- Construction ---------------------------------------------------------------------------------------

DeviceMesh::DeviceMesh(std::shared_ptr<Root> root, std::vector<Layout> axes, std::optional<Names> names)
    : root_(std::move(root)), axes_(std::move(axes)), names_(std::move(names)) {
  for (auto& a : axes_) a = normalize_axis(a);
  if (names_ && names_->empty()) names_.reset();
  const auto collapsed = all_leaves(axes_);
  for (const auto& leaf : collapsed) {
    if (leaf.stride == 0) {
      raise(ErrorKind::ValueError, "Please use a non-overlapping layout when creating a DeviceMesh: " +
                                       to_string(layout()) + " repeats rank positions");
    }
  }
  if (!collapsed.empty() && !is_orthogonal(from_leaves(collapsed))) {
    raise(ErrorKind::ValueError,
          "Please use a non-overlapping layout when creating a DeviceMesh: " + to_string(layout()) + " overlaps");
  }
  const std::int64_t n = root_->rank_map.size();
  auto tiling = std::make_shared<const Tiling>(axes_, n);
  const std::int64_t last = cosize(tiling->complement) - 1 + (collapsed.empty() ? 0 : cosize(from_leaves(collapsed)) - 1);
  if (last >= n) {
    raise(ErrorKind::ValueError, "The rank map contains " + std::to_string(n) +
                                     " elements, which isn't large enough for layout " + to_string(layout()));
  }
  tiling_ = std::move(tiling);
}

DeviceMesh DeviceMesh::init(const std::vector<std::int64_t>& shape, const std::optional<Names>& names,
                            std::optional<std::int64_t> world) {
  check_names(shape, names);
  const std::int64_t numel = checked_numel(shape);
  auto root = std::make_shared<Root>();
  root->rank_map = RankMap::identity(numel);
  root->world = check_world(world, numel, numel);
  root->axes = row_major_axes(shape);
  root->names = names && !names->empty() ? names : std::nullopt;
  return {root, root->axes, root->names};
}

DeviceMesh DeviceMesh::from_ranks(const std::vector<std::int64_t>& shape, std::vector<std::int64_t> ranks,
                                  const std::optional<Names>& names, std::optional<std::int64_t> world) {
  check_names(shape, names);
  const std::int64_t numel = checked_numel(shape);
  if (numel != static_cast<std::int64_t>(ranks.size())) {
    raise(ErrorKind::ValueError, "the mesh tensor of shape " + py_ints(shape) + " needs " + std::to_string(numel) +
                                     " ranks but " + std::to_string(ranks.size()) + " were given");
  }
  auto root = std::make_shared<Root>();
  root->rank_map = RankMap::from_ranks(std::move(ranks));
  root->world = check_world(world, numel, root->rank_map.min_world());
  root->axes = row_major_axes(shape);
  root->names = names && !names->empty() ? names : std::nullopt;
  return {root, root->axes, root->names};
}

DeviceMesh build_mesh(const MeshSpec& spec, std::optional<std::int64_t> world) {
  DeviceMesh root = DeviceMesh::init(spec.shape, spec.names, world);
  for (const auto& f : spec.flattened) (void)root.slice(f.axes).flatten(f.name);
  return root;
}

// ---- Shape ----------------------------------------------------------------------------------------------

std::vector<std::int64_t> DeviceMesh::shape() const {
  std::vector<std::int64_t> s;
  s.reserve(axes_.size());
  for (const auto& a : axes_) s.push_back(meshloom::size(a));
  return s;
}

std::int64_t DeviceMesh::size() const {
  std::int64_t n = 1;
  for (const auto& a : axes_) n *= meshloom::size(a);
  return n;
}

std::int64_t DeviceMesh::size(const AxisRef& axis) const { return meshloom::size(axis_layout(axis)); }

std::int64_t DeviceMesh::world() const noexcept { return root_->world; }

const RankMap& DeviceMesh::rank_map() const noexcept { return root_->rank_map; }

Layout DeviceMesh::layout() const {
  std::vector<Layout> modes;
  modes.reserve(axes_.size());
  for (const auto& a : axes_) {
    const auto ls = leaves(a);
    if (ls.empty()) {
      modes.emplace_back(IntTuple(1), IntTuple(0));
    } else if (ls.size() == 1) {
      modes.emplace_back(IntTuple(ls[0].size), IntTuple(ls[0].stride));
    } else {
      modes.push_back(a);
    }
  }
  return make_layout(modes);
}

// ---- Root -----------------------------------------------------------------------------------------------

DeviceMesh DeviceMesh::root() const { return {root_, root_->axes, root_->names}; }

std::vector<std::string> DeviceMesh::flattened_names() const {
  std::lock_guard lock(root_->mutex);
  std::vector<std::string> out;
  for (const auto& [name, l] : root_->flattened) out.push_back(name);
  return out;
}

std::optional<DeviceMesh> DeviceMesh::flattened(const std::string& name) const {
  if (auto l = root_->find_flattened(name)) return DeviceMesh(root_, {*l}, Names{name});
  return std::nullopt;
}

// ---- Axis lookup ----------------------------------------------------------------------------------------

std::size_t DeviceMesh::axis_index(const std::string& name) const {
  if (!names_) raise(ErrorKind::KeyError, "No `mesh_dim_names` found.");
  const auto it = std::find(names_->begin(), names_->end(), name);
  if (it == names_->end()) {
    raise(ErrorKind::KeyError, "Mesh dimension '" + name +
                                   "' does not exist. Available mesh dimensions are: mesh_dim_names=" +
                                   py_names(*names_));
  }
  return static_cast<std::size_t>(it - names_->begin());
}

Layout DeviceMesh::axis_layout(const AxisRef& axis) const {
  if (const auto* index = std::get_if<std::int64_t>(&axis)) {
    const auto n = static_cast<std::int64_t>(axes_.size());
    if (*index < -n || *index >= n) {
      raise(ErrorKind::IndexError, "Dim " + std::to_string(*index) + " is out of range for a mesh with " +
                                       std::to_string(n) + " dimensions. Expected dim to be in range [" +
                                       std::to_string(-n) + ", " + std::to_string(n - 1) + "].");
    }
    return axes_[static_cast<std::size_t>(*index < 0 ? *index + n : *index)];
  }
  const auto& name = std::get<std::string>(axis);
  // As PyTorch's get_group: a flattened name registered on the root first, then an own axis name.
  if (auto l = root_->find_flattened(name)) return *l;
  return axes_[axis_index(name)];
}

// ---- Transformations ------------------------------------------------------------------------------------

DeviceMesh DeviceMesh::slice(const Names& names) const {
  if (!names_) raise(ErrorKind::RuntimeError, "Cannot slice a DeviceMesh without mesh_dim_names!");
  if (names == *names_) return *this;
  if (names.empty()) raise(ErrorKind::ValueError, "Cannot slice a DeviceMesh by an empty tuple of mesh_dim_names");

  // Valid names: own names, plus the root's flattened names when slicing the root itself.
  const bool from_root = axes_ == root_->axes && names_ == root_->names;  // *this == root(), without building it
  std::vector<std::pair<std::string, Layout>> flattened;
  if (from_root) {
    std::lock_guard lock(root_->mutex);
    flattened = root_->flattened;
  }
  std::vector<Layout> sliced;
  for (const auto& name : names) {
    const auto own = std::find(names_->begin(), names_->end(), name);
    if (own != names_->end()) {
      sliced.push_back(axes_[static_cast<std::size_t>(own - names_->begin())]);
      continue;
    }
    const auto flat = std::find_if(flattened.begin(), flattened.end(), [&](const auto& f) { return f.first == name; });
    if (flat == flattened.end()) {
      Names valid = *names_;
      for (const auto& f : flattened) valid.push_back(f.first);
      raise(ErrorKind::KeyError, "Invalid mesh_dim_names " + py_names(names) + " specified. Valid mesh_dim_names are " +
                                     py_names(valid, true) + ".");
    }
    sliced.push_back(flat->second);
  }
  const auto collapsed = all_leaves(sliced);
  if (!collapsed.empty() && !is_sorted(from_leaves(collapsed))) {
    raise(ErrorKind::KeyError,
          "Invalid mesh_dim_names " + py_names(names) + " specified. Mesh dim indices should be in ascending order.");
  }
  if (!collapsed.empty() && !is_orthogonal(from_leaves(collapsed))) {
    raise(ErrorKind::RuntimeError, "Slicing overlapping dim_names " + py_names(names) + " is not allowed.");
  }
  return {root_, std::move(sliced), names};
}

DeviceMesh DeviceMesh::flatten(const std::optional<std::string>& name) const {
  if (!names_) raise(ErrorKind::RuntimeError, "Cannot flatten a DeviceMesh without mesh_dim_names!");
  std::string flat_name;
  if (name && !name->empty()) {
    flat_name = *name;
  } else {
    for (std::size_t i = 0; i < names_->size(); ++i) flat_name += (i > 0 ? "_" : "") + (*names_)[i];
  }
  if (ndim() == 1 && std::find(names_->begin(), names_->end(), flat_name) != names_->end()) return *this;

  if (root_->names && std::find(root_->names->begin(), root_->names->end(), flat_name) != root_->names->end()) {
    raise(ErrorKind::ValueError, flat_name + " already exists for submesh of the " + root().repr() +
                                     ". The mesh_dim_names of submesh and flattened mesh are " +
                                     py_names(*root_->names) + ". Please specify another valid mesh_dim_name.");
  }
  const Layout flat = normalize_axis(from_leaves(all_leaves(axes_)));
  {
    std::lock_guard lock(root_->mutex);
    const auto it = std::find_if(root_->flattened.begin(), root_->flattened.end(),
                                 [&](const auto& f) { return f.first == flat_name; });
    if (it != root_->flattened.end() && !(it->second == flat)) {
      raise(ErrorKind::ValueError, "Flatten mesh with mesh_dim_name " + flat_name +
                                       " has been created before, Please specify another valid mesh_dim_name.");
    }
    if (it == root_->flattened.end()) root_->flattened.emplace_back(flat_name, flat);
  }
  return {root_, {flat}, Names{flat_name}};
}

DeviceMesh DeviceMesh::unflatten(const AxisRef& axis, const std::vector<std::int64_t>& sizes,
                                 const Names& names) const {
  const auto n = static_cast<std::int64_t>(ndim());
  std::int64_t index = 0;
  if (const auto* i = std::get_if<std::int64_t>(&axis)) {
    if (*i >= n || *i < -n) {
      raise(ErrorKind::ValueError, "dim " + std::to_string(*i) + " specified in `_unflatten` is out of range " +
                                       std::to_string(n));
    }
    index = *i < 0 ? *i + n : *i;
  } else {
    const auto& name = std::get<std::string>(axis);
    const auto it = names_ ? std::find(names_->begin(), names_->end(), name) : Names::const_iterator{};
    if (!names_ || it == names_->end()) {
      raise(ErrorKind::ValueError,
            "dim " + name + " specified in `_unflatten` is not in " + py_optional_names(names_));
    }
    index = it - names_->begin();
  }
  if (!names_) raise(ErrorKind::RuntimeError, "Cannot unflatten a DeviceMesh without mesh_dim_names!");
  if (sizes.size() != names.size()) {
    raise(ErrorKind::RuntimeError, "mesh_dim_names must have same length as mesh_sizes in _unflatten!");
  }
  const auto k = static_cast<std::size_t>(index);
  const std::int64_t numel = checked_numel(sizes, "mesh_sizes");
  const std::int64_t original = meshloom::size(axes_[k]);
  if (numel != original) {
    raise(ErrorKind::ValueError, "The product of mesh_sizes=" + py_ints(sizes) + " is " + std::to_string(numel) +
                                     ", but the original dimension at dim=" + std::to_string(index) + " has size " +
                                     std::to_string(original) + ". These must be equal for unflatten to work correctly.");
  }
  Names new_names = *names_;
  new_names.erase(new_names.begin() + index);
  new_names.insert(new_names.begin() + index, names.begin(), names.end());
  check_names(std::vector<std::int64_t>(new_names.size(), 1), new_names);
  for (const auto& name : names) {
    if (root_->find_flattened(name)) {
      raise(ErrorKind::ValueError, name + " already exists as a flattened mesh_dim_name of the root " + root().repr() +
                                       ". Please specify another valid mesh_dim_name.");
    }
  }

  const Layout split = composition(axes_[k], Layout(IntTuple::from_ints(sizes)));
  std::vector<Layout> new_axes(axes_.begin(), axes_.begin() + index);
  for (std::size_t j = 0; j < sizes.size(); ++j) new_axes.push_back(mode(split, static_cast<std::int64_t>(j)));
  new_axes.insert(new_axes.end(), axes_.begin() + index + 1, axes_.end());
  return {root_, std::move(new_axes), std::move(new_names)};
}

DeviceMesh DeviceMesh::concatenate(const std::vector<DeviceMesh>& meshes) {
  if (meshes.empty()) raise(ErrorKind::ValueError, "Cannot concatenate an empty list of meshes");
  std::vector<Layout> axes;
  Names names;
  for (const auto& m : meshes) {
    if (!(m.rank_map() == meshes.front().rank_map())) {
      raise(ErrorKind::RuntimeError, "Cannot concatenate DeviceMeshes derived from different device meshes");
    }
    if (!m.names_) raise(ErrorKind::RuntimeError, "Cannot concatenate " + m.repr() + ": it has no mesh_dim_names");
    axes.insert(axes.end(), m.axes_.begin(), m.axes_.end());
    names.insert(names.end(), m.names_->begin(), m.names_->end());
  }
  const auto collapsed = all_leaves(axes);
  if (!collapsed.empty() && !is_orthogonal(from_leaves(collapsed))) {
    std::string list = "[";
    for (std::size_t i = 0; i < meshes.size(); ++i) list += (i > 0 ? ", " : "") + meshes[i].repr();
    raise(ErrorKind::RuntimeError, "Cannot concatenate overlapping meshes: " + list + "]");
  }
  return {meshes.front().root_, std::move(axes), std::move(names)};
}

// ---- Enumeration ----------------------------------------------------------------------------------------

RankTensor DeviceMesh::instances() const {
  auto shape = this->shape();
  shape.insert(shape.begin(), meshloom::size(tiling_->complement));
  return enumerate(codomain(tiling_->complement), all_leaves(axes_), rank_map(), std::move(shape));
}

RankTensor DeviceMesh::groups(const AxisRef& axis) const {
  const Layout l = axis_layout(axis);
  const Tiling tiling({l}, rank_map().size());
  return enumerate(codomain(tiling.complement), leaves(l), rank_map(),
                   {meshloom::size(tiling.complement), meshloom::size(l)});
}

namespace {
[[noreturn]] void not_held(std::int64_t rank, const std::string& what) {
  raise(ErrorKind::RuntimeError, "rank " + std::to_string(rank) + " is not part of " + what);
}
}  // namespace

std::optional<std::int64_t> DeviceMesh::position(std::int64_t rank) const {
  if (rank < 0 || rank >= world()) {
    raise(ErrorKind::ValueError, "rank " + std::to_string(rank) + " is out of range for world size " +
                                     std::to_string(world()) + " (valid ranks are 0.." + std::to_string(world() - 1) + ")");
  }
  return rank_map().position_of(rank);
}

RankTensor DeviceMesh::instance_of(std::int64_t rank) const {
  const auto p = position(rank);
  if (!p) {
    // PyTorch's `mesh`: when remap_to_tensor yields a single instance, every rank sees it, member or not.
    if (meshloom::size(tiling_->complement) == 1) return instances();
    // PyTorch's words where `mesh` fails on that rank, then which rank and mesh.
    raise(ErrorKind::RuntimeError,
          "In order to get the mesh Tensor of a DeviceMesh it needs to either have all its original dimensions (e.g., "
          "no slicing) or it needs to contain the local rank: rank " +
              std::to_string(rank) + " is not part of " + repr());
  }
  std::vector<std::int64_t> unused(axes_.size(), 0);
  const std::int64_t instance = tiling_->decompose(*p, unused);
  auto shape = this->shape();
  shape.insert(shape.begin(), 1);
  return enumerate({tiling_->complement(instance)}, all_leaves(axes_), rank_map(), std::move(shape));
}

std::vector<std::int64_t> DeviceMesh::group_of(std::int64_t rank, const AxisRef& axis) const {
  const Layout l = axis_layout(axis);
  const auto p = position(rank);
  if (!p) not_held(rank, repr());
  const Tiling tiling({l}, rank_map().size());
  std::vector<std::int64_t> unused(1, 0);
  return enumerate({tiling.complement(tiling.decompose(*p, unused))}, leaves(l), rank_map(), {}).values;
}

std::optional<std::vector<std::int64_t>> DeviceMesh::coordinate(std::int64_t rank) const {
  const auto p = position(rank);
  if (!p) return std::nullopt;
  std::vector<std::int64_t> coordinate(axes_.size(), 0);
  (void)tiling_->decompose(*p, coordinate);
  return coordinate;
}

bool DeviceMesh::contains(std::int64_t rank) const { return rank_map().position_of(rank).has_value(); }

std::int64_t DeviceMesh::local_rank(std::int64_t rank, const std::optional<AxisRef>& axis) const {
  if (!axis && ndim() != 1) {
    raise(ErrorKind::RuntimeError, "Found the DeviceMesh have " + std::to_string(ndim()) +
                                       " dimensions. Optional kwarg `mesh_dim` needs to be specified when "
                                       "device_mesh.ndim > 1.");
  }
  const Layout l = axis_layout(axis ? *axis : AxisRef(std::int64_t{0}));
  const auto p = position(rank);
  if (!p) not_held(rank, repr());
  std::vector<std::int64_t> coordinate(1, 0);
  (void)Tiling({l}, rank_map().size()).decompose(*p, coordinate);
  return coordinate[0];
}

// ---- Identity -------------------------------------------------------------------------------------------

bool operator==(const DeviceMesh& a, const DeviceMesh& b) noexcept {
  if (a.root_ != b.root_ && !(a.root_->rank_map == b.root_->rank_map)) return false;
  return a.axes_ == b.axes_ && a.names_ == b.names_;
}

std::size_t DeviceMesh::hash() const noexcept {
  std::size_t h = root_->rank_map.hash();
  auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (const auto& a : axes_) mix(hash_value(a));
  if (names_) {
    for (const auto& n : *names_) mix(std::hash<std::string>{}(n));
  }
  return h;
}

std::string DeviceMesh::repr() const {
  const auto s = shape();
  std::string body;
  if (names_) {
    body = "(";
    for (std::size_t i = 0; i < s.size(); ++i) body += (i > 0 ? ", " : "") + (*names_)[i] + "=" + std::to_string(s[i]);
    body += ")";
  } else {
    body = py_ints(s);
  }
  std::string stride = "(";
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    if (i > 0) stride += ", ";
    const auto ls = leaves(axes_[i]);
    if (ls.size() == 1) {
      stride += std::to_string(ls[0].stride);
    } else {
      std::vector<std::int64_t> strides;
      for (const auto& leaf : ls) strides.push_back(leaf.stride);
      stride += py_ints(strides);
    }
  }
  if (axes_.size() == 1) stride += ",";
  stride += ")";
  return "DeviceMesh(" + body + ", stride=" + stride + ")";
}

}  // namespace meshloom
