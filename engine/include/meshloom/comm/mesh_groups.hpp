// The communicators of a DeviceMesh: one per own axis and per flattened axis, made from a world communicator
// with one split per axis (MPI_Comm_split / ncclCommSplit), so creating every group of a mesh costs one
// collective per axis whatever the number of groups.
//
// Before any split, build_mesh_groups all-gathers every rank's mesh_fingerprint: a mesh that differs between
// ranks (PyTorch's init_device_mesh hangs silently there) is a RuntimeError on every rank naming the ranks
// that differ from rank 0, never a hang.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "meshloom/comm/communicator.hpp"
#include "meshloom/mesh/device_mesh.hpp"

namespace meshloom::comm {

// A 64-bit FNV-1a hash of everything that decides the groups, identical in every process and on every build:
// the shape, the names (or their absence), the layout text, every instance of the mesh (the rank map through
// instances()), and each flattened axis of the root by name with its groups. Not DeviceMesh::hash(), which
// mixes std::hash values.
[[nodiscard]] std::uint64_t mesh_fingerprint(const DeviceMesh& mesh);

struct MeshGroups {
  // Every own axis by name ("0", "1", ... when the mesh is unnamed) and every flattened axis of the root by
  // name; nullptr where this rank is in no group of that axis (a rank outside the mesh).
  std::map<std::string, std::unique_ptr<Communicator>> axes;

  // The communicator of `axis`: nullptr when this rank is in no group; KeyError naming the valid axes when
  // the mesh has no such axis.
  [[nodiscard]] Communicator* get(const std::string& axis) const;
};

// Splits `world` along every axis of `mesh`. The mesh's ranks are ranks of `world`; a rank of world outside
// the mesh gets nullptr for every axis. Collective over `world` and must be called by every rank of it, with
// the same mesh; world must accept host buffers (the MPI backend), since the fingerprints are exchanged with
// one host all_gather. world's timeout bounds that exchange (and, on MPI, the splits).
// Order: all_gather of the fingerprints; RuntimeError on every rank when they differ ("the mesh differs
// between ranks: ranks 2, 3 hold a different mesh than rank 0 ..."); ValueError when the mesh needs more
// ranks than world has (naming both numbers); then one split per own axis, in order, and per flattened axis,
// in creation order: color = the index of this rank's group in mesh.groups(axis), key = its local rank, name =
// the axis name.
[[nodiscard]] MeshGroups build_mesh_groups(Communicator& world, const DeviceMesh& mesh);

// The two halves of build_mesh_groups, for a backend whose communicators do not take host buffers (NCCL): the
// fingerprint exchange and the world-size check on a host communicator over the same ranks (the MPI world) ...
void check_same_mesh(Communicator& control, const DeviceMesh& mesh);
// ... then the splits of that backend's world communicator. Every rank must have passed check_same_mesh.
[[nodiscard]] MeshGroups split_mesh_groups(Communicator& world, const DeviceMesh& mesh);

}  // namespace meshloom::comm
