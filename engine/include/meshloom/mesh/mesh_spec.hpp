// MeshSpec: a mesh described by degrees, before it is built. Presets and design files produce it;
// build_mesh() (device_mesh.hpp) turns it into a DeviceMesh with its flattened axes registered.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace meshloom {

// A flattened axis: root[axes...] flattened under `name` (PyTorch's mesh[axes]._flatten(name)).
struct FlattenSpec {
  std::string name;
  std::vector<std::string> axes;
  friend bool operator==(const FlattenSpec&, const FlattenSpec&) = default;
};

struct MeshSpec {
  std::vector<std::int64_t> shape;  // outer -> inner; the last axis varies fastest
  std::vector<std::string> names;   // one per axis
  std::vector<FlattenSpec> flattened;  // in creation order
  friend bool operator==(const MeshSpec&, const MeshSpec&) = default;
};

}  // namespace meshloom
