#include "meshloom/design/export.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "meshloom/mesh/device_mesh.hpp"

namespace meshloom {

namespace {

// ---- Python text --------------------------------------------------------------------------------------------

std::string hex(std::uint32_t value, int digits) {
  static constexpr std::string_view kDigits = "0123456789abcdef";
  std::string out(static_cast<std::size_t>(digits), '0');
  for (std::size_t i = out.size(); i-- > 0;) {
    out[i] = kDigits[value & 0xfU];
    value >>= 4;
  }
  return out;
}

// A double-quoted Python string literal: backslash, quote and control bytes escaped, other UTF-8 kept.
std::string py_str(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      out += "\\x" + hex(u, 2);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// (2, 4), (8,), ().
std::string py_ints(const std::vector<std::int64_t>& values) {
  std::string out = "(";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i > 0 ? ", " : "") + std::to_string(values[i]);
  return out + (values.size() == 1 ? ",)" : ")");
}

// ("dp", "tp"), ("dp",), ().
std::string py_strs(const std::vector<std::string>& values) {
  std::string out = "(";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i > 0 ? ", " : "") + py_str(values[i]);
  return out + (values.size() == 1 ? ",)" : ")");
}

// "dp, tp": names for prose in comments.
std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i > 0 ? ", " : "") + names[i];
  return out;
}

// The variable a flattened axis is assigned to: dp -> dp_mesh; 1x -> mesh_1x (an identifier cannot start with a
// digit). No keyword ends in "_mesh", and no other name of the scripts ends in "_mesh" or starts with "mesh_<digit>".
std::string flat_variable(const std::string& name) {
  if (!name.empty() && name[0] >= '0' && name[0] <= '9') return "mesh_" + name;
  return name + "_mesh";
}

// ---- Comments -----------------------------------------------------------------------------------------------

// One UTF-8 code point at text[i]; an invalid byte reads as itself, one byte long.
struct CodePoint {
  std::uint32_t value = 0;
  std::size_t length = 1;
};

CodePoint decode(std::string_view text, std::size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  std::size_t extra = 0;
  std::uint32_t value = lead;
  if (lead >= 0xc2 && lead <= 0xdf) {
    extra = 1;
    value = lead & 0x1fU;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    extra = 2;
    value = lead & 0x0fU;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    extra = 3;
    value = lead & 0x07U;
  }
  if (extra == 0 || i + extra >= text.size()) return {lead, 1};
  for (std::size_t k = 1; k <= extra; ++k) {
    const auto next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xc0U) != 0x80U) return {lead, 1};
    value = (value << 6) | (next & 0x3fU);
  }
  const std::uint32_t min = extra == 1 ? 0x80U : extra == 2 ? 0x800U : 0x10000U;
  if (value < min || value > 0x10ffffU || (value >= 0xd800U && value <= 0xdfffU)) return {lead, 1};
  return {value, extra + 1};
}

// The line boundaries of Python's str.splitlines(); \r\n counts as one.
bool is_line_break(std::uint32_t cp) {
  return cp == '\n' || cp == '\r' || cp == 0x0b || cp == 0x0c || (cp >= 0x1c && cp <= 0x1e) || cp == 0x85 ||
         cp == 0x2028 || cp == 0x2029;
}

// Written as an escape inside a comment: control characters other than tab, and the bidirectional controls
// (which can make a line display in another order than Python reads it).
bool must_escape(std::uint32_t cp) {
  return (cp < 0x20 && cp != '\t') || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
         (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff;
}

// text split as str.splitlines() splits it ("" has no line, "a\n" one), each line safe inside a comment.
std::vector<std::string> comment_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::string line;
  bool pending = false;  // code points read since the last line break
  for (std::size_t i = 0; i < text.size();) {
    const CodePoint cp = decode(text, i);
    if (is_line_break(cp.value)) {
      lines.push_back(line);
      line.clear();
      pending = false;
      i += (cp.value == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ? 2 : cp.length;
      continue;
    }
    if (cp.length == 1 && cp.value >= 0x80) {
      line += "\\x" + hex(cp.value, 2);  // a byte that is not UTF-8
    } else if (must_escape(cp.value)) {
      line += cp.value <= 0xff ? "\\x" + hex(cp.value, 2) : "\\u" + hex(cp.value, 4);
    } else {
      line.append(text.substr(i, cp.length));
    }
    pending = true;
    i += cp.length;
  }
  if (pending) lines.push_back(line);
  return lines;
}

// Appends text as comment lines, the first prefixed with `first`, the others with "# ", trailing spaces dropped
// ("#" alone for an empty line). Text without lines ("") gives no line, or `first` alone when `always`.
void append_comment(std::string& out, std::string_view first, std::string_view text, bool always = false) {
  std::vector<std::string> lines = comment_lines(text);
  if (lines.empty() && always) lines.emplace_back();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string line = std::string(i == 0 ? first : "# ") + lines[i];
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
}

// "rank 3" or "ranks 3..7".
std::string rank_range(std::int64_t lo, std::int64_t hi, std::string_view noun) {
  if (lo == hi) return std::string(noun) + " " + std::to_string(lo);
  return std::string(noun) + "s " + std::to_string(lo) + ".." + std::to_string(hi);
}

// ---- The design ---------------------------------------------------------------------------------------------

std::int64_t mesh_ranks(const MeshSpec& mesh) {
  std::int64_t n = 1;
  for (std::int64_t size : mesh.shape) n *= size;  // validate_design bounds it by the world
  return n;
}

// validate_design, then build_mesh: every slice and flatten a script performs is one DeviceMesh accepts.
void check_exportable(const Design& design) {
  validate_design(design);
  (void)build_mesh(design.mesh, design.world);
}

// The header shared by both scripts: two fixed lines, then the design's name, description, world and mesh.
void append_header(std::string& out, const Design& design, std::string_view line1, std::string_view line2,
                   std::string_view unit) {
  out += std::string(line1) + "\n" + std::string(line2) + "\n#\n";
  append_comment(out, "# design: ", design.name, true);
  if (design.description) append_comment(out, "# ", *design.description);
  const std::int64_t hosts = design.world / design.devices_per_host;
  out += "# world: " + std::to_string(design.world) + " " + std::string(unit) + (design.world == 1 ? "" : "s") + ", " +
         std::to_string(design.devices_per_host) + " per host (" + std::to_string(hosts) +
         (hosts == 1 ? " host)\n" : " hosts)\n");
  const std::int64_t n = mesh_ranks(design.mesh);
  std::string axes;
  for (std::size_t i = 0; i < design.mesh.shape.size(); ++i) {
    axes += (i > 0 ? ", " : "") + design.mesh.names[i] + "=" + std::to_string(design.mesh.shape[i]);
  }
  out += "# mesh: (" + axes + "), " + std::to_string(n) + " " + std::string(unit) + (n == 1 ? "" : "s") + "\n";
}

// The axes that shard `dim` in `state`, in split order, as names.
std::vector<std::string> shard_axis_names(const State& state, std::int64_t dim, const MeshSpec& mesh) {
  std::vector<std::string> names;
  for (std::size_t axis : state.shard_axes(dim)) names.push_back(mesh.names[axis]);
  return names;
}

bool is_ascending(const std::vector<std::size_t>& axes) {
  for (std::size_t i = 1; i < axes.size(); ++i) {
    if (axes[i] < axes[i - 1]) return false;
  }
  return true;
}

// ---- PyTorch --------------------------------------------------------------------------------------------------

std::string torch_dtype(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "torch.float32";
    case DType::Float16: return "torch.float16";
    case DType::BFloat16: return "torch.bfloat16";
    case DType::Float64: return "torch.float64";
    case DType::Int32: return "torch.int32";
    case DType::Int64: return "torch.int64";
    case DType::Int8: return "torch.int8";
    case DType::UInt8: return "torch.uint8";
    case DType::Float8E4M3: return "torch.float8_e4m3fn";
    case DType::Float8E5M2: return "torch.float8_e5m2";
  }
  return "None";
}

// [Replicate(), Shard(0), Partial("sum")].
std::string torch_placements(const State& state) {
  std::string out = "[";
  for (std::size_t i = 0; i < state.ndim(); ++i) {
    const Placement& p = state.placement(i);
    out += i > 0 ? ", " : "";
    if (p.is_shard()) {
      out += "Shard(" + std::to_string(p.dim()) + ")";
    } else if (p.is_partial()) {
      out += "Partial(" + py_str(to_string(p.op())) + ")";
    } else {
      out += "Replicate()";
    }
  }
  return out + "]";
}

// {0: ("tp", "dp_shard")}: the dims whose split order is not left to right; empty when there is none.
std::string torch_shard_order(const State& state, const MeshSpec& mesh) {
  std::string out;
  for (const ShardOrderEntry& entry : state.shard_order()) {
    if (is_ascending(entry.axes)) continue;
    out += (out.empty() ? "{" : ", ") + std::to_string(entry.dim) + ": " +
           py_strs(shard_axis_names(state, entry.dim, mesh));
  }
  return out.empty() ? out : out + "}";
}

// ---- JAX ------------------------------------------------------------------------------------------------------

std::string jax_dtype(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "jnp.float32";
    case DType::Float16: return "jnp.float16";
    case DType::BFloat16: return "jnp.bfloat16";
    case DType::Float64: return "jnp.float64";
    case DType::Int32: return "jnp.int32";
    case DType::Int64: return "jnp.int64";
    case DType::Int8: return "jnp.int8";
    case DType::UInt8: return "jnp.uint8";
    case DType::Float8E4M3: return "jnp.float8_e4m3fn";
    case DType::Float8E5M2: return "jnp.float8_e5m2";
  }
  return "None";
}

// One PartitionSpec entry: None, "tp", or ("tp", "dp_shard").
std::string jax_entry(const std::vector<std::string>& axes) {
  if (axes.empty()) return "None";
  if (axes.size() == 1) return py_str(axes[0]);
  return py_strs(axes);
}

// P(...) of a state's Shard placements (Partial ones ignored): one entry per tensor dim.
std::string jax_spec(const State& state, const DesignTensor& tensor, const MeshSpec& mesh) {
  std::string out = "P(";
  for (std::size_t d = 0; d < tensor.shape.size(); ++d) {
    out += (d > 0 ? ", " : "") + jax_entry(shard_axis_names(state, static_cast<std::int64_t>(d), mesh));
  }
  return out + ")";
}

// What a PartitionSpec cannot say about a state, for the comment after it; empty when nothing.
std::string jax_remark(const State& state, const DesignTensor& tensor, const MeshSpec& mesh) {
  std::string partial;
  for (std::size_t i = 0; i < state.ndim(); ++i) {
    const Placement& p = state.placement(i);
    if (!p.is_partial()) continue;
    partial += (partial.empty() ? "" : ", ") + mesh.names[i] + " (" + std::string(to_string(p.op())) + ")";
  }
  std::string uneven;
  for (std::size_t d = 0; d < tensor.shape.size(); ++d) {
    std::int64_t ways = 1;
    for (std::size_t axis : state.shard_axes(static_cast<std::int64_t>(d))) ways *= mesh.shape[axis];
    if (tensor.shape[d] % ways != 0) {
      uneven += (uneven.empty() ? "" : "; ") + std::string("dim ") + std::to_string(d) + " (" +
                std::to_string(tensor.shape[d]) + ") is split " + std::to_string(ways) + " ways";
    }
  }
  std::string out;
  if (!partial.empty()) out = "partial on " + partial + "; reduced: " + jax_spec(state, tensor, mesh);
  if (!uneven.empty()) out += (out.empty() ? "" : "; ") + uneven + ": JAX needs even shards";
  return out;
}

// `key=` line of a tensor entry: the spec, or None for a Partial state, and a comment when needed.
std::string jax_state_line(std::string_view key, const State& state, const DesignTensor& tensor, const MeshSpec& mesh) {
  bool partial = false;
  for (const Placement& p : state.placements()) partial = partial || p.is_partial();
  std::string line = "        " + std::string(key) + "=";
  line += (partial ? std::string("None") : jax_spec(state, tensor, mesh)) + ",";
  const std::string remark = jax_remark(state, tensor, mesh);
  if (!remark.empty()) line += "  # " + to_string(state) + ": " + remark;
  return line + "\n";
}

}  // namespace

std::string export_pytorch(const Design& design) {
  check_exportable(design);
  const std::int64_t n = mesh_ranks(design.mesh);
  const bool partial_world = n < design.world;
  std::string out;
  append_header(out, design, "# PyTorch DeviceMesh for a Meshloom design, written by Meshloom's export_pytorch.",
                "# Run it on every rank: torchrun --nnodes=" + std::to_string(design.world / design.devices_per_host) +
                    " --nproc-per-node=" + std::to_string(design.devices_per_host) + " <this file>",
                "rank");

  if (partial_world) out += "import os\n\n";
  if (!design.tensors.empty()) out += "import torch\n";
  if (partial_world) out += "import torch.distributed as dist\n";
  out += "from torch.distributed.device_mesh import init_device_mesh\n";
  if (!design.tensors.empty()) out += "from torch.distributed.tensor import Partial, Replicate, Shard\n";
  out += "\n";

  if (partial_world) {
    out += "# The mesh holds " + rank_range(0, n - 1, "rank") + "; " + rank_range(n, design.world - 1, "rank") +
           " of the world (" + std::to_string(design.world) + ") " + (design.world - n == 1 ? "is" : "are") +
           " outside it.\n"
           "# init_device_mesh accepts a mesh smaller than the world, but DeviceMesh raises on a rank that a\n"
           "# sliced or flattened mesh does not contain, and every rank of the default group takes part in\n"
           "# creating the process groups of a flattened axis. So the ranks outside the mesh leave here, and the\n"
           "# ranks in it form the default group on their own.\n";
    out += "rank = int(os.environ[\"RANK\"])\n";
    out += "if rank >= " + std::to_string(n) + ":\n";
    out += "    raise SystemExit(0)\n";
    out += "dist.init_process_group(rank=rank, world_size=" + std::to_string(n) + ")\n";
  }
  out += "mesh = init_device_mesh(\"cuda\", " + py_ints(design.mesh.shape) +
         ", mesh_dim_names=" + py_strs(design.mesh.names) + ")\n";

  if (!design.mesh.flattened.empty()) {
    out += "\n# Flattened axes, in creation order; each is also registered on the root mesh under its name.\n";
    for (const FlattenSpec& spec : design.mesh.flattened) {
      std::string key;
      for (std::size_t i = 0; i < spec.axes.size(); ++i) key += (i > 0 ? ", " : "") + py_str(spec.axes[i]);
      out += flat_variable(spec.name) + " = mesh[" + key + "]._flatten(" + py_str(spec.name) + ")\n";
    }
  }

  if (!design.tensors.empty()) {
    bool ordered = false;
    for (const DesignTensor& t : design.tensors) {
      ordered = ordered || !t.src.has_default_shard_order() || !t.dst.has_default_shard_order();
    }
    out += "\n# Tensors: global shape, dtype, and the DTensor placements of the states they are redistributed\n";
    out += "# between (src -> dst), one placement per mesh axis (" + joined(design.mesh.names) + ").\n";
    if (ordered) {
      out += "# DTensor's placements split a dim sharded by several axes left to right; src_shard_order and\n";
      out += "# dst_shard_order map each dim split in another order to its axes, in the order of the splits.\n";
    }
    out += "tensors = {\n";
    for (const DesignTensor& t : design.tensors) {
      out += "    # " + to_string(t.src) + " -> " + to_string(t.dst) + "\n";
      out += "    " + py_str(t.name) + ": dict(\n";
      out += "        shape=" + py_ints(t.shape) + ",\n";
      out += "        dtype=" + torch_dtype(t.dtype) + ",\n";
      for (const auto& [key, state] : {std::pair<std::string_view, const State*>{"src", &t.src}, {"dst", &t.dst}}) {
        out += "        " + std::string(key) + "=" + torch_placements(*state) + ",\n";
        const std::string order = torch_shard_order(*state, design.mesh);
        if (!order.empty()) out += "        " + std::string(key) + "_shard_order=" + order + ",\n";
      }
      out += "    ),\n";
    }
    out += "}\n";
  }
  return out;
}

std::string export_jax(const Design& design) {
  check_exportable(design);
  const std::int64_t n = mesh_ranks(design.mesh);
  std::string out;
  append_header(out, design, "# JAX Mesh for a Meshloom design, written by Meshloom's export_jax.",
                "# Run it in every process of the job, after jax.distributed.initialize() when there are several.",
                "device");
  out += "# Rank r of the design is jax.devices()[r].\n";

  out += "import jax\n";
  if (!design.tensors.empty()) out += "import jax.numpy as jnp\n";
  out += "import numpy as np\n";
  out += design.tensors.empty() ? "from jax.sharding import Mesh\n"
                                 : "from jax.sharding import Mesh, PartitionSpec as P\n";
  out += "\n";

  if (n < design.world) {
    out += "# The mesh holds " + rank_range(0, n - 1, "device") + "; " + rank_range(n, design.world - 1, "device") +
           " of the world (" + std::to_string(design.world) + ") " + (design.world - n == 1 ? "is" : "are") +
           " outside it.\n";
    out += "devices = np.array(jax.devices()[:" + std::to_string(n) + "]).reshape(" + py_ints(design.mesh.shape) +
           ")\n";
  } else {
    out += "devices = np.array(jax.devices()).reshape(" + py_ints(design.mesh.shape) + ")\n";
  }
  out += "mesh = Mesh(devices, axis_names=" + py_strs(design.mesh.names) + ")\n";

  if (!design.mesh.flattened.empty()) {
    std::size_t width = 0;
    for (const FlattenSpec& spec : design.mesh.flattened) width = std::max(width, spec.name.size());
    out += "\n# Flattened axes: JAX has no flatten. A flattened axis is the tuple of its axis names in one\n";
    out += "# PartitionSpec entry, which splits a tensor dim across the same device groups:\n";
    for (const FlattenSpec& spec : design.mesh.flattened) {
      out += "#   " + spec.name + std::string(width - spec.name.size(), ' ') + " -> P(" + jax_entry(spec.axes) + ")\n";
    }
  }

  if (!design.tensors.empty()) {
    out += "\n# Tensors: global shape, dtype, and the PartitionSpec of the states they are redistributed between\n";
    out += "# (src -> dst): entry d holds the mesh axes that split dim d, in the order of the splits. A Partial\n";
    out += "# placement has no PartitionSpec: such a state is None, and its comment says what is partial.\n";
    out += "tensors = {\n";
    for (const DesignTensor& t : design.tensors) {
      out += "    # " + to_string(t.src) + " -> " + to_string(t.dst) + "\n";
      out += "    " + py_str(t.name) + ": dict(\n";
      out += "        shape=" + py_ints(t.shape) + ",\n";
      out += "        dtype=" + jax_dtype(t.dtype) + ",\n";
      out += jax_state_line("src", t.src, t, design.mesh);
      out += jax_state_line("dst", t.dst, t, design.mesh);
      out += "    ),\n";
    }
    out += "}\n";
  }
  return out;
}

}  // namespace meshloom
