// `meshloom-launch mesh --batch`: DeviceMesh scripts as JSON Lines (see docs/05-launcher.md and the
// machine-interface contract).
//
// One input line
//   {"world": 8, "mesh": {"shape": [2, 4], "names": ["dp", "tp"]}, "ops": [{"op": "groups", "dim": "tp"}]}
// gives one output line
//   {"ok":true,"results":[{"ok":true,"groups":[[0,1,2,3],[4,5,6,7]]}]}
// or {"ok":false,"error":"<Kind>: <message>"} when the line itself is bad or its mesh cannot be built. A
// failed op yields {"ok":false,"error":...} as its own result and the later ops still run.
//
// Nothing here throws, allocates in proportion to an absurd request, or recurses in proportion to the input:
// lines are capped in length and nesting depth before they are parsed, and every enumeration is checked
// against an output budget (ranks per line) before it is computed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "meshloom/layout/layout.hpp"
#include "meshloom/mesh/device_mesh.hpp"

namespace meshloom::launcher {

struct MeshBatchLimits {
  // Longest input line accepted, in bytes (a longer line answers a ValueError and is skipped to its end).
  std::size_t max_line_bytes = std::size_t{16} << 20;
  // Deepest JSON nesting accepted (arrays and objects).
  std::size_t max_depth = 64;
  // Most ranks written in one output line, over all its results (each rank of meshes, dim_groups, groups).
  std::int64_t max_output_ranks = std::int64_t{64} << 20;
};

// Answers one input line (without its newline) with one output line (without a newline). Never throws.
[[nodiscard]] std::string answer_mesh_line(const std::string& line);
[[nodiscard]] std::string answer_mesh_line(const std::string& line, const MeshBatchLimits& limits);

// Reads JSON Lines from `in` until its end and writes exactly one answer line per input line to `out`, in order,
// flushing after each. A final line without a newline counts; a trailing "\r" is dropped. Returns 0, or 1 when
// `in` or `out` fails: a read error (an exception from `in`'s streambuf, as libstdc++'s file buffer throws) sets
// badbit on `in` and ends the input, the lines before it answered and a partial last line not.
int run_mesh_batch(std::istream& in, std::ostream& out);
int run_mesh_batch(std::istream& in, std::ostream& out, const MeshBatchLimits& limits);

}  // namespace meshloom::launcher
