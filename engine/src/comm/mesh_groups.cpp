#include "meshloom/comm/mesh_groups.hpp"

#include <bit>
#include <cstddef>
#include <cstdio>
#include <string_view>
#include <utility>
#include <vector>

#include "meshloom/error.hpp"

namespace meshloom::comm {

namespace {

// FNV-1a, 64 bit, over explicitly laid out little-endian values: the same in every process.
class Fnv1a {
public:
  void byte(std::uint8_t b) noexcept {
    h_ ^= b;
    h_ *= 0x100000001b3ULL;
  }
  void u64(std::uint64_t v) noexcept {
    for (int i = 0; i < 8; ++i) byte(static_cast<std::uint8_t>((v >> (8 * i)) & 0xffU));
  }
  void i64(std::int64_t v) noexcept { u64(static_cast<std::uint64_t>(v)); }
  void text(std::string_view s) noexcept {
    u64(s.size());
    for (const char c : s) byte(static_cast<std::uint8_t>(c));
  }
  void tensor(const RankTensor& t) noexcept {
    u64(t.shape.size());
    for (const auto v : t.shape) i64(v);
    u64(t.values.size());
    for (const auto v : t.values) i64(v);
  }
  [[nodiscard]] std::uint64_t value() const noexcept { return h_; }

private:
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

struct AxisEntry {
  std::string name;
  AxisRef ref;
};

// Own axes by name (by index when unnamed), then the root's flattened axes, skipping a flattened name that
// repeats an own axis name.
std::vector<AxisEntry> all_axes(const DeviceMesh& mesh) {
  std::vector<AxisEntry> out;
  for (std::size_t i = 0; i < mesh.ndim(); ++i) {
    const std::string name = mesh.names() ? (*mesh.names())[i] : std::to_string(i);
    out.push_back({name, AxisRef{static_cast<std::int64_t>(i)}});
  }
  for (const auto& name : mesh.flattened_names()) {
    bool repeated = false;
    for (const auto& e : out) repeated = repeated || e.name == name;
    if (!repeated) out.push_back({name, AxisRef{name}});
  }
  return out;
}

std::string hex(std::uint64_t v) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(v));
  return text;
}

}  // namespace

std::uint64_t mesh_fingerprint(const DeviceMesh& mesh) {
  Fnv1a h;
  h.text("meshloom.mesh.v1");
  const auto shape = mesh.shape();
  h.u64(shape.size());
  for (const auto s : shape) h.i64(s);
  h.byte(mesh.names() ? 1 : 0);
  if (mesh.names()) {
    h.u64(mesh.names()->size());
    for (const auto& n : *mesh.names()) h.text(n);
  }
  h.text(to_string(mesh.layout()));
  h.tensor(mesh.instances());
  const auto flattened = mesh.flattened_names();
  h.u64(flattened.size());
  for (const auto& name : flattened) {
    h.text(name);
    h.tensor(mesh.groups(name));
  }
  return h.value();
}

Communicator* MeshGroups::get(const std::string& axis) const {
  const auto it = axes.find(axis);
  if (it == axes.end()) {
    std::vector<std::string> names;
    for (const auto& [name, c] : axes) names.push_back(name);
    raise(ErrorKind::KeyError, "no communicator for mesh axis '" + axis + "'. Valid axes are " + py_names(names, true));
  }
  return it->second.get();
}

void check_same_mesh(Communicator& world, const DeviceMesh& mesh) {
  // 1. Every rank's fingerprint, before anything that could make ranks diverge.
  const std::uint64_t mine = mesh_fingerprint(mesh);
  const auto n = static_cast<std::size_t>(world.size());
  std::vector<std::int64_t> all(n, 0);
  const std::int64_t own = std::bit_cast<std::int64_t>(mine);
  world.all_gather(ConstBuffer{&own, 1, DType::Int64}, Buffer{all.data(), n, DType::Int64});

  std::vector<std::size_t> differ;
  for (std::size_t r = 1; r < n; ++r) {
    if (all[r] != all[0]) differ.push_back(r);
  }
  if (!differ.empty()) {
    std::string ranks;
    for (std::size_t i = 0; i < differ.size(); ++i) ranks += (i > 0 ? ", " : "") + std::to_string(differ[i]);
    const std::string verb = differ.size() == 1 ? " holds" : " hold";
    raise(ErrorKind::RuntimeError,
          "the mesh differs between ranks of communicator '" + world.name() + "': " +
              (differ.size() == 1 ? "rank " : "ranks ") + ranks + verb + " a different mesh than rank 0 (fingerprint " +
              hex(std::bit_cast<std::uint64_t>(all[0])) + "); this rank (" + std::to_string(world.rank()) +
              ") holds " + mesh.repr() + " with fingerprint " + hex(mine) +
              ". Every rank must build the same mesh, with the same flattened axes in the same order.");
  }

  // 2. The mesh must fit the world (the same answer on every rank now that the meshes agree).
  const std::int64_t needed = mesh.rank_map().min_world();
  if (needed > world.size()) {
    raise(ErrorKind::ValueError, "the mesh " + mesh.repr() + " needs a world of " + std::to_string(needed) +
                                     " ranks (its largest rank is " + std::to_string(needed - 1) +
                                     ") but communicator '" + world.name() + "' has " +
                                     std::to_string(world.size()) + " ranks");
  }

}

MeshGroups split_mesh_groups(Communicator& world, const DeviceMesh& mesh) {
  // 3. One split per axis.
  MeshGroups groups;
  const std::int64_t me = world.rank();
  for (const auto& axis : all_axes(mesh)) {
    const RankTensor g = mesh.groups(axis.ref);
    const std::int64_t group_size = g.shape.size() == 2 ? g.shape[1] : 1;
    int color = -1;
    int key = 0;
    for (std::size_t p = 0; p < g.values.size(); ++p) {
      if (g.values[p] == me) {
        color = static_cast<int>(static_cast<std::int64_t>(p) / group_size);
        key = static_cast<int>(static_cast<std::int64_t>(p) % group_size);
        break;
      }
    }
    groups.axes.emplace(axis.name, world.split(color, key, axis.name));
  }
  return groups;
}

MeshGroups build_mesh_groups(Communicator& world, const DeviceMesh& mesh) {
  check_same_mesh(world, mesh);
  return split_mesh_groups(world, mesh);
}

}  // namespace meshloom::comm
