// Export: a design's mesh as Python code, for PyTorch (DeviceMesh and DTensor placements) and for JAX (Mesh and
// PartitionSpec). What the desktop app's "Export PyTorch code" / "Export JAX code" actions write.
//
// Both functions validate the design first (validate_design, so an invalid design is never exported: ValueError
// naming the JSON field path and value) and build its mesh (build_mesh), then return a complete Python script,
// '\n' line endings and a trailing newline. The text is a pure function of the design: the same design always
// gives the same bytes.
//
// Text from the design that is not a name (the design's name and description: arbitrary UTF-8) only ever
// appears in comments: split into lines as Python's str.splitlines() splits them (\n, \r, \r\n, \v, \f, \x1c-\x1e,
// U+0085, U+2028, U+2029), each line prefixed with "# " (trailing spaces dropped, so an empty line is "#"), and
// every other control character, and the Unicode bidirectional controls, written as an escape (\x01, \u202e).
// The first two lines of a script are fixed text, so no design can plant a Python encoding declaration
// ("# coding: ..."), which Python honours only there.
// Names (axes, flattened axes, tensors: [A-Za-z0-9_.] by the design rules) appear in double-quoted Python
// strings, escaped all the same. A flattened axis `n` is assigned to the variable `n_mesh` (`mesh_n` when `n`
// starts with a digit), which is always a valid identifier, never a keyword, and never one of the script's
// other names.
//
// export_pytorch: init_device_mesh("cuda", shape, mesh_dim_names=names), then every flattened axis in
// creation order as `mesh[axes]._flatten(name)` (one axis: mesh["a"], several: mesh["a", "b"]), then the tensors
// as a dict of shape, torch dtype and the DTensor placements of src and dst, one per mesh axis:
// [Replicate(), Shard(0), Partial("sum")]. DTensor's placements split a dim sharded by several axes left to
// right; a state with another order (plan/state.hpp: "S(0)[1]S(0)[0]") also gets `src_shard_order` /
// `dst_shard_order`: {dim: (axis names in split order)} for each dim whose order is not left to right.
//
// A mesh smaller than the world (product(shape) < world). PyTorch's init_device_mesh refuses only a mesh
// bigger than the world, but DeviceMesh raises on a rank that a sliced or flattened mesh does not contain
// ("... needs to contain the local rank"), and every rank of the default group takes part in creating the
// process groups of a flattened axis, so a rank outside the mesh can neither join nor skip those calls. The
// script therefore lets the ranks >= product leave (SystemExit(0), before any collective) and has the ranks in
// the mesh form the default group on their own: dist.init_process_group(rank=rank, world_size=product), with
// RANK from the launcher (torchrun), before init_device_mesh. A comment says which ranks are outside the mesh.
//
// export_jax: devices = np.array(jax.devices()).reshape(shape) (jax.devices()[:product] for a mesh smaller
// than the world; rank r of the design is jax.devices()[r]), mesh = Mesh(devices, axis_names=names). JAX has no
// flatten: a flattened axis is the tuple of its axis names in one PartitionSpec entry, listed in comments
// ("dp -> P(("dp_replicate", "dp_shard"))"), which splits a dim across exactly the groups of the flattened
// axis. Tensors: a dict of shape, jnp dtype and the PartitionSpec of src and dst: entry d holds the axes that
// shard dim d in split order (one axis as a plain string, several as a tuple, none as None), which is how
// JAX orders a dim split across several axes. A state with a Partial placement has no PartitionSpec: it is
// None, and a comment names the partial axes and the spec once reduced. A dim whose size is not a multiple of
// its axes' product keeps its spec with a comment: JAX needs even shards, PyTorch chunks unevenly.
//
// Example: resources/examples/hsdp-2d.meshloom.json (its description shortened here to "HSDP on 2 hosts ...").
//   export_pytorch(design) ==
//     # PyTorch DeviceMesh for a Meshloom design, written by Meshloom's export_pytorch.
//     # Run it on every rank: torchrun --nnodes=2 --nproc-per-node=4 <this file>
//     #
//     # design: hsdp-2d
//     # HSDP on 2 hosts ...
//     # world: 8 ranks, 4 per host (2 hosts)
//     # mesh: (dp_replicate=2, dp_shard=4), 8 ranks
//     import torch
//     from torch.distributed.device_mesh import init_device_mesh
//     from torch.distributed.tensor import Partial, Replicate, Shard
//
//     mesh = init_device_mesh("cuda", (2, 4), mesh_dim_names=("dp_replicate", "dp_shard"))
//
//     # Flattened axes, in creation order; each is also registered on the root mesh under its name.
//     dp_mesh = mesh["dp_replicate", "dp_shard"]._flatten("dp")
//
//     # Tensors: global shape, dtype, and the DTensor placements of the states they are redistributed
//     # between (src -> dst), one placement per mesh axis (dp_replicate, dp_shard).
//     tensors = {
//         # RS(0) -> RR
//         "attention_wq": dict(
//             shape=(4096, 4096),
//             dtype=torch.bfloat16,
//             src=[Replicate(), Shard(0)],
//             dst=[Replicate(), Replicate()],
//         ),
//         # P(avg)P(avg) -> RS(0)
//         "attention_wq_grad": dict(
//             shape=(4096, 4096),
//             dtype=torch.float32,
//             src=[Partial("avg"), Partial("avg")],
//             dst=[Replicate(), Shard(0)],
//         ),
//     }
//   export_jax(design), after the same kind of header (two fixed lines, "devices" for "ranks", and
//   "# Rank r of the design is jax.devices()[r]."):
//     import jax
//     import jax.numpy as jnp
//     import numpy as np
//     from jax.sharding import Mesh, PartitionSpec as P
//
//     devices = np.array(jax.devices()).reshape((2, 4))
//     mesh = Mesh(devices, axis_names=("dp_replicate", "dp_shard"))
//
//     # Flattened axes: JAX has no flatten. A flattened axis is the tuple of its axis names in one
//     # PartitionSpec entry, which splits a tensor dim across the same device groups:
//     #   dp -> P(("dp_replicate", "dp_shard"))
//
//     # Tensors: ... (three comment lines)
//     tensors = {
//         # RS(0) -> RR
//         "attention_wq": dict(
//             shape=(4096, 4096),
//             dtype=jnp.bfloat16,
//             src=P("dp_shard", None),
//             dst=P(None, None),
//         ),
//         # P(avg)P(avg) -> RS(0)
//         "attention_wq_grad": dict(
//             shape=(4096, 4096),
//             dtype=jnp.float32,
//             src=None,  # P(avg)P(avg): partial on dp_replicate (avg), dp_shard (avg); reduced: P(None, None)
//             dst=P("dp_shard", None),
//         ),
//     }
#pragma once

#include <string>

#include "meshloom/design/design.hpp"

namespace meshloom {

// The design's mesh, flattened axes and tensors as a PyTorch script (see above). ValueError for an invalid design.
[[nodiscard]] std::string export_pytorch(const Design& design);

// The design's mesh, flattened axes and tensors as a JAX script (see above). ValueError for an invalid design.
[[nodiscard]] std::string export_jax(const Design& design);

}  // namespace meshloom
