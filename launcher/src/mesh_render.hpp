// `meshloom-launch mesh` for people: a mesh drawn as a rank grid, its slices, flattened axes and one rank's view.
//
//   $ meshloom-launch mesh --shape 2,4 --names dp,tp --slice tp
//   DeviceMesh((dp=2, tp=4), stride=(4, 1))  layout (2,4):(4,1)  world 8
//
//         tp=0  tp=1  tp=2  tp=3
//   dp=0     0     1     2     3
//   dp=1     4     5     6     7
//
//   slice tp: DeviceMesh((tp=4), stride=(1,))  layout (4,):(1,)  2 groups of 4
//     group 0: 0 1 2 3
//     group 1: 4 5 6 7
//
// The option values arrive as the raw strings the user typed; they are parsed here so that every mistake is
// reported the same way ("ValueError: --shape \"2,x\": \"x\" is not an integer").
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "meshloom/mesh/device_mesh.hpp"
#include "meshloom/mesh/mesh_spec.hpp"
#include "text_format.hpp"

namespace meshloom::launcher {

struct MeshRequest {
  // Either a shape (with optional names) ...
  std::optional<std::string> shape;  // "2,4"
  std::optional<std::string> names;  // "dp,tp"
  // ... or a spec (from a design file), with its world.
  std::optional<MeshSpec> spec;
  std::optional<std::int64_t> spec_world;
  std::optional<std::string> world;       // "8"; overrides spec_world
  std::vector<std::string> unflatten;     // "dp=2,2:dp_replicate,dp_shard", applied first, in order
  std::vector<std::string> flatten;       // "dp,tp" or "dp,tp:dp_tp", registered on the root, in order
  std::vector<std::string> slice;         // "tp" or "dp,tp", in order
  std::optional<std::string> rank;        // "5"
};

// Draws what the request asks for. Throws meshloom::Error (ValueError for a malformed option value).
[[nodiscard]] std::string render_mesh_request(const MeshRequest& request);

// render_mesh_request to `out`, or "error: <Kind>: <message>" to `err`; returns 0 or 2.
int run_mesh_request(const MeshRequest& request, std::ostream& out, std::ostream& err);

// ---- Pieces (also used by tests) -----------------------------------------------------------------------------
// (The option values are parsed with parse_int, parse_int_list and parse_name_list from text_format.hpp.)

// The header line: repr, layout and world.
[[nodiscard]] std::string render_header(const DeviceMesh& mesh);
// The rank grid of every instance: 1-D one row, 2-D a table, N-D one table per outer index ("pp=0").
[[nodiscard]] std::string render_grid(const DeviceMesh& mesh);
// A derived mesh and all its instances, one line each ("group i" for 1-D, "instance i" otherwise).
[[nodiscard]] std::string render_instances(const std::string& title, const DeviceMesh& mesh);
// One rank: its coordinate, and for every axis and flattened axis its local rank and group.
[[nodiscard]] std::string render_rank(const DeviceMesh& mesh, std::int64_t rank);

}  // namespace meshloom::launcher
