// Designs: the versioned JSON file `*.meshloom.json` that the desktop app saves and the launcher runs.
//
// A design is a mesh over a world of ranks plus the tensors whose redistributions are planned on it, and
// optionally a workload (meshloom/workload/workload.hpp): what one training step communicates on it.
//
//   {
//     "format": "meshloom-design",
//     "version": 2,                                                       (1 when there is no workload)
//     "name": "hsdp-2d",
//     "description": "HSDP: replicate across 2 groups, shard across 4",     (optional)
//     "world": 8,
//     "devices_per_host": 4,
//     "mesh": {
//       "shape": [2, 4],
//       "names": ["dp_replicate", "dp_shard"],
//       "flattened": [                                                     (optional on input)
//         {"name": "dp", "axes": ["dp_replicate", "dp_shard"]}
//       ]
//     },
//     "tensors": [
//       {"name": "wq", "shape": [4096, 4096], "dtype": "bfloat16", "src": "RS(0)", "dst": "RR"}
//     ],
//     "workload": {                                                        (optional; version 2)
//       "tensors": [                                                       (optional on input)
//         {"tensor": "wq", "count": 64}                                    (count optional on input: 1)
//       ],
//       "model": {                                                         (optional)
//         "layers": 32,
//         "hidden": 4096,
//         "ffn": 14336,
//         "heads": 32,
//         "kv_heads": 8,
//         "vocab": 128256,
//         "seq_len": 8192,
//         "micro_batch": 1,                                                (optional on input: 1)
//         "micro_batches": 1,                                              (optional on input: 1)
//         "dtype": "bfloat16",                                             (optional on input: bfloat16)
//         "grad_dtype": "float32",                                         (optional on input: float32)
//         "experts": 0,                                                    (optional on input: 0)
//         "top_k": 0,                                                      (optional on input: 0)
//         "sequence_parallel": true,                                       (optional on input: false)
//         "axes": {"fsdp": ["dp_shard"], "replicate": ["dp_replicate"], "tp": "", "cp": "", "ep": "", "pp": ""}
//       }                                                                  (axes and each of its keys optional on
//     },                                                                    input: [] and "", the role unused)
//     "calibration": "calibration/h100.json"                               (optional)
//   }
//
// Rules (every violation is a ValueError naming the JSON field path and the offending value, e.g.
// "mesh.shape[1] = 0: axis sizes must be >= 1", "mesh.shape = [2,4]: world = 4 but the mesh holds 8 ranks"):
//   - format is "meshloom-design" and version is 1 or 2; a version 1 design has no workload ("workload: ...
//     version 1 ..."); unknown fields are rejected by name; required fields must be present with the right JSON
//     type; integers must be JSON integers (8, not 8.0 or "8"), booleans JSON booleans.
//   - world in 1..2^31-1; devices_per_host >= 1 and divides world.
//   - mesh: 1..64 axes, sizes >= 1, one name per axis, product(shape) <= world; names unique.
//   - flattened: at most 64; each name unique and not an axis name; axes: 1..64 distinct axis names of the
//     mesh, listed in mesh order (outer to inner), like PyTorch's mesh[axes]._flatten(name).
//   - axis and flattened axis names are 1..64 characters of A-Z a-z 0-9 _; tensor names 1..256 characters of
//     A-Z a-z 0-9 _ . (module paths), unique.
//   - the design name is 1..128 bytes of UTF-8 without control characters; description <= 64 KiB of UTF-8;
//     calibration is a non-empty path of <= 4096 bytes, relative to the design file's directory.
//   - tensors: at most 1024; shape: 0..64 dims, each >= 1, numel * itemsize < 2^63; dtype one of
//     float32 float16 bfloat16 float64 int32 int64 int8 uint8 float8_e4m3 float8_e5m2; src and dst in the
//     state text form of meshloom/plan/state.hpp, one placement per mesh axis, sharded dims < rank.
//   - workload: validate_workload's rules (workload.hpp): at most 1024 tensor entries, each naming a design
//     tensor once, counts and model sizes in 1..2^31-1 (experts and top_k from 0), hidden % heads == 0,
//     heads % kv_heads == 0, top_k in 1..experts for a mixture of experts (0 when dense), role axes that are mesh
//     axes, one role per axis (ep may also be an fsdp, replicate or cp axis; cp may also be an fsdp axis).
//   - the file is at most 16 MiB, JSON nesting at most 16 levels, object keys unique.
//
// Canonical form (what to_json_text writes): 2-space indent, keys in the order above, optional fields only
// when present, "flattened" always written, arrays of numbers or strings and each flattened axis, tensor,
// workload tensor and the model's axes on one line, every model field written (one per line), states in
// canonical text form, strings escaped as JSON requires (non-ASCII kept as UTF-8), a trailing newline. The
// version is 1 when the design has no workload (so that readers of version 1 keep reading it) and 2 when it
// has one. parse_design followed by to_json_text reproduces a canonical file byte for byte.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "meshloom/dtype.hpp"
#include "meshloom/mesh/mesh_spec.hpp"
#include "meshloom/plan/state.hpp"
#include "meshloom/workload/workload.hpp"

namespace meshloom {

inline constexpr std::string_view kDesignFormat = "meshloom-design";
// The newest version this build writes and reads; it writes kDesignVersionWithoutWorkload for designs without a
// workload, and reads both.
inline constexpr std::int64_t kDesignVersion = 2;
inline constexpr std::int64_t kDesignVersionWithoutWorkload = 1;

// Limits, checked before anything of that size is allocated.
inline constexpr std::size_t kMaxDesignFileBytes = std::size_t{16} << 20;
inline constexpr std::size_t kMaxDesignAxes = 64;
inline constexpr std::size_t kMaxDesignFlattened = 64;
inline constexpr std::int64_t kMaxDesignWorld = 2147483647;  // 2^31 - 1
inline constexpr std::size_t kMaxDesignTensors = 1024;
inline constexpr std::size_t kMaxDesignTensorRank = 64;
inline constexpr std::size_t kMaxDesignNameChars = 64;   // axis and flattened axis names: [A-Za-z0-9_]
inline constexpr std::size_t kMaxTensorNameChars = 256;  // tensor names: [A-Za-z0-9_.], module paths
inline constexpr std::size_t kMaxDesignTitleBytes = 128;  // Design::name
inline constexpr std::size_t kMaxDesignDescriptionBytes = std::size_t{64} << 10;
inline constexpr std::size_t kMaxDesignPathBytes = 4096;  // Design::calibration
inline constexpr std::size_t kMaxDesignJsonDepth = 16;

// A tensor to redistribute: its global shape and element type, and the states it moves between.
struct DesignTensor {
  std::string name;
  std::vector<std::int64_t> shape;  // global shape; one size per dim
  DType dtype = DType::Float32;
  State src;
  State dst;
  friend bool operator==(const DesignTensor&, const DesignTensor&) = default;
};

struct Design {
  std::string name;
  std::optional<std::string> description;
  std::int64_t world = 1;
  std::int64_t devices_per_host = 1;
  MeshSpec mesh;
  std::vector<DesignTensor> tensors;
  std::optional<Workload> workload;        // version 2; see meshloom/workload/workload.hpp
  std::optional<std::string> calibration;  // path of a calibration file, relative to the design file
  friend bool operator==(const Design&, const Design&) = default;
};

// Checks every rule above that a Design value can break (all but JSON syntax, types and unknown fields);
// the messages use the JSON field paths, e.g. "ValueError: tensors[0].src = \"S(2)R\": S(2) on axis 0 shards
// dim 2 but the tensor has 2 dims (0..1)".
void validate_design(const Design& design);

// Parses and validates a design file's text. ValueError for anything that breaks the rules.
[[nodiscard]] Design parse_design(std::string_view text);

// Reads and parses a design file. RuntimeError when it cannot be read (RuntimeError: cannot read design
// "x.meshloom.json": No such file or directory), ValueError when it is not a valid design, its message starting with
// the quoted path (ValueError: "x.meshloom.json": mesh.shape[1] = 0: ...).
[[nodiscard]] Design load_design(const std::filesystem::path& path);

// The canonical text (see above). Validates first, so an invalid design is never written.
[[nodiscard]] std::string to_json_text(const Design& design);

// Writes to_json_text(design) to path atomically: a temporary file in the same directory, fsync, rename
// over path, fsync of the directory. When path is a symbolic link its target is replaced. On failure path
// keeps its old content, the temporary file is removed, and a RuntimeError names the path and the cause
// (ValueError when the design is invalid; nothing is written then).
void save_design(const Design& design, const std::filesystem::path& path);

// Where design.calibration points for a design loaded from design_file: the path itself when absolute,
// else relative to design_file's directory. nullopt when the design has no calibration.
[[nodiscard]] std::optional<std::filesystem::path> calibration_path(const Design& design,
                                                                    const std::filesystem::path& design_file);

}  // namespace meshloom
