// Design export (design/export.hpp): the PyTorch and JAX scripts of the bundled examples, verbatim; and a
// property test: a tiny parser reads back exactly the statements the exporters write, rebuilds the mesh through
// the engine's DeviceMesh (init, slice, flatten) and checks every axis and flattened axis has the groups of
// build_mesh(design.mesh, world), and the placements / PartitionSpecs give back the design's states. It runs on
// every bundled example and on random valid designs (up to 5 axes, random ordered flatten subsets, random
// states and shard orders, hostile descriptions). Every line of a script must be a comment, blank, or one of
// the statements the parser knows, so a description can never inject code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "meshloom/design/design.hpp"
#include "meshloom/design/export.hpp"
#include "meshloom/error.hpp"
#include "meshloom/mesh/device_mesh.hpp"
#include "meshloom/plan/state.hpp"
#include "support/example_design.hpp"
#include "support/expect_error.hpp"
#include "support/random_state.hpp"

namespace meshloom {
namespace {

namespace fs = std::filesystem;

using testing::example_design;

std::vector<fs::path> examples() {
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(MESHLOOM_EXAMPLES_DIR)) {
    if (entry.path().filename().string().ends_with(".meshloom.json")) paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// ---- Exact text of the bundled examples ---------------------------------------------------------------------

constexpr std::string_view kTorchtitanPytorch = R"py(# PyTorch DeviceMesh for a Meshloom design, written by Meshloom's export_pytorch.
# Run it on every rank: torchrun --nnodes=4 --nproc-per-node=8 <this file>
#
# design: torchtitan-4d
# torchtitan ParallelDims with pp=2, dp_replicate=2, dp_shard=4, cp=1 (left out of the mesh), tp=2 on 4 hosts of 8 GPUs. Flattened as torchtitan does: dp for data loading, dp_shard_cp for parameter sharding, dp_cp for the loss all-reduce.
# world: 32 ranks, 8 per host (4 hosts)
# mesh: (pp=2, dp_replicate=2, dp_shard=4, tp=2), 32 ranks
import torch
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Partial, Replicate, Shard

mesh = init_device_mesh("cuda", (2, 2, 4, 2), mesh_dim_names=("pp", "dp_replicate", "dp_shard", "tp"))

# Flattened axes, in creation order; each is also registered on the root mesh under its name.
dp_mesh = mesh["dp_replicate", "dp_shard"]._flatten("dp")
dp_shard_cp_mesh = mesh["dp_shard"]._flatten("dp_shard_cp")
dp_cp_mesh = mesh["dp_replicate", "dp_shard"]._flatten("dp_cp")

# Tensors: global shape, dtype, and the DTensor placements of the states they are redistributed
# between (src -> dst), one placement per mesh axis (pp, dp_replicate, dp_shard, tp).
# DTensor's placements split a dim sharded by several axes left to right; src_shard_order and
# dst_shard_order map each dim split in another order to its axes, in the order of the splits.
tensors = {
    # RRS(0)[1]S(0)[0] -> RRRS(0)
    "tok_embeddings": dict(
        shape=(128256, 4096),
        dtype=torch.bfloat16,
        src=[Replicate(), Replicate(), Shard(0), Shard(0)],
        src_shard_order={0: ("tp", "dp_shard")},
        dst=[Replicate(), Replicate(), Replicate(), Shard(0)],
    ),
    # RRS(0)[1]S(0)[0] -> RRRS(0)
    "attention_wq": dict(
        shape=(4096, 4096),
        dtype=torch.bfloat16,
        src=[Replicate(), Replicate(), Shard(0), Shard(0)],
        src_shard_order={0: ("tp", "dp_shard")},
        dst=[Replicate(), Replicate(), Replicate(), Shard(0)],
    ),
    # RRS(0)S(1) -> RRRS(1)
    "feed_forward_w2": dict(
        shape=(4096, 14336),
        dtype=torch.bfloat16,
        src=[Replicate(), Replicate(), Shard(0), Shard(1)],
        dst=[Replicate(), Replicate(), Replicate(), Shard(1)],
    ),
    # RP(avg)P(avg)S(1) -> RRS(0)S(1)
    "feed_forward_w2_grad": dict(
        shape=(4096, 14336),
        dtype=torch.float32,
        src=[Replicate(), Partial("avg"), Partial("avg"), Shard(1)],
        dst=[Replicate(), Replicate(), Shard(0), Shard(1)],
    ),
}
)py";

constexpr std::string_view kTorchtitanJax = R"py(# JAX Mesh for a Meshloom design, written by Meshloom's export_jax.
# Run it in every process of the job, after jax.distributed.initialize() when there are several.
#
# design: torchtitan-4d
# torchtitan ParallelDims with pp=2, dp_replicate=2, dp_shard=4, cp=1 (left out of the mesh), tp=2 on 4 hosts of 8 GPUs. Flattened as torchtitan does: dp for data loading, dp_shard_cp for parameter sharding, dp_cp for the loss all-reduce.
# world: 32 devices, 8 per host (4 hosts)
# mesh: (pp=2, dp_replicate=2, dp_shard=4, tp=2), 32 devices
# Rank r of the design is jax.devices()[r].
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

devices = np.array(jax.devices()).reshape((2, 2, 4, 2))
mesh = Mesh(devices, axis_names=("pp", "dp_replicate", "dp_shard", "tp"))

# Flattened axes: JAX has no flatten. A flattened axis is the tuple of its axis names in one
# PartitionSpec entry, which splits a tensor dim across the same device groups:
#   dp          -> P(("dp_replicate", "dp_shard"))
#   dp_shard_cp -> P("dp_shard")
#   dp_cp       -> P(("dp_replicate", "dp_shard"))

# Tensors: global shape, dtype, and the PartitionSpec of the states they are redistributed between
# (src -> dst): entry d holds the mesh axes that split dim d, in the order of the splits. A Partial
# placement has no PartitionSpec: such a state is None, and its comment says what is partial.
tensors = {
    # RRS(0)[1]S(0)[0] -> RRRS(0)
    "tok_embeddings": dict(
        shape=(128256, 4096),
        dtype=jnp.bfloat16,
        src=P(("tp", "dp_shard"), None),
        dst=P("tp", None),
    ),
    # RRS(0)[1]S(0)[0] -> RRRS(0)
    "attention_wq": dict(
        shape=(4096, 4096),
        dtype=jnp.bfloat16,
        src=P(("tp", "dp_shard"), None),
        dst=P("tp", None),
    ),
    # RRS(0)S(1) -> RRRS(1)
    "feed_forward_w2": dict(
        shape=(4096, 14336),
        dtype=jnp.bfloat16,
        src=P("dp_shard", "tp"),
        dst=P(None, "tp"),
    ),
    # RP(avg)P(avg)S(1) -> RRS(0)S(1)
    "feed_forward_w2_grad": dict(
        shape=(4096, 14336),
        dtype=jnp.float32,
        src=None,  # RP(avg)P(avg)S(1): partial on dp_replicate (avg), dp_shard (avg); reduced: P(None, "tp")
        dst=P("dp_shard", "tp"),
    ),
}
)py";

constexpr std::string_view kDefaultPytorch = R"py(# PyTorch DeviceMesh for a Meshloom design, written by Meshloom's export_pytorch.
# Run it on every rank: torchrun --nnodes=1 --nproc-per-node=8 <this file>
#
# design: default
# A 2x2x2 mesh (pp, dp, tp) over 8 local ranks: small enough to run under mpirun -np 8 on one machine.
# world: 8 ranks, 8 per host (1 host)
# mesh: (pp=2, dp=2, tp=2), 8 ranks
import torch
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Partial, Replicate, Shard

mesh = init_device_mesh("cuda", (2, 2, 2), mesh_dim_names=("pp", "dp", "tp"))

# Flattened axes, in creation order; each is also registered on the root mesh under its name.
dp_tp_mesh = mesh["dp", "tp"]._flatten("dp_tp")

# Tensors: global shape, dtype, and the DTensor placements of the states they are redistributed
# between (src -> dst), one placement per mesh axis (pp, dp, tp).
# DTensor's placements split a dim sharded by several axes left to right; src_shard_order and
# dst_shard_order map each dim split in another order to its axes, in the order of the splits.
tensors = {
    # RS(0)[1]S(0)[0] -> RRS(0)
    "weight": dict(
        shape=(1024, 512),
        dtype=torch.float32,
        src=[Replicate(), Shard(0), Shard(0)],
        src_shard_order={0: ("tp", "dp")},
        dst=[Replicate(), Replicate(), Shard(0)],
    ),
    # RS(0)P(sum) -> RRS(1)
    "activation": dict(
        shape=(64, 1024),
        dtype=torch.float32,
        src=[Replicate(), Shard(0), Partial("sum")],
        dst=[Replicate(), Replicate(), Shard(1)],
    ),
}
)py";

constexpr std::string_view kDefaultJax = R"py(# JAX Mesh for a Meshloom design, written by Meshloom's export_jax.
# Run it in every process of the job, after jax.distributed.initialize() when there are several.
#
# design: default
# A 2x2x2 mesh (pp, dp, tp) over 8 local ranks: small enough to run under mpirun -np 8 on one machine.
# world: 8 devices, 8 per host (1 host)
# mesh: (pp=2, dp=2, tp=2), 8 devices
# Rank r of the design is jax.devices()[r].
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

devices = np.array(jax.devices()).reshape((2, 2, 2))
mesh = Mesh(devices, axis_names=("pp", "dp", "tp"))

# Flattened axes: JAX has no flatten. A flattened axis is the tuple of its axis names in one
# PartitionSpec entry, which splits a tensor dim across the same device groups:
#   dp_tp -> P(("dp", "tp"))

# Tensors: global shape, dtype, and the PartitionSpec of the states they are redistributed between
# (src -> dst): entry d holds the mesh axes that split dim d, in the order of the splits. A Partial
# placement has no PartitionSpec: such a state is None, and its comment says what is partial.
tensors = {
    # RS(0)[1]S(0)[0] -> RRS(0)
    "weight": dict(
        shape=(1024, 512),
        dtype=jnp.float32,
        src=P(("tp", "dp"), None),
        dst=P("tp", None),
    ),
    # RS(0)P(sum) -> RRS(1)
    "activation": dict(
        shape=(64, 1024),
        dtype=jnp.float32,
        src=None,  # RS(0)P(sum): partial on tp (sum); reduced: P("dp", None)
        dst=P(None, "tp"),
    ),
}
)py";

TEST(Export, TorchtitanPytorchVerbatim) { EXPECT_EQ(export_pytorch(example_design("torchtitan-4d")), kTorchtitanPytorch); }
TEST(Export, TorchtitanJaxVerbatim) { EXPECT_EQ(export_jax(example_design("torchtitan-4d")), kTorchtitanJax); }
TEST(Export, DefaultPytorchVerbatim) { EXPECT_EQ(export_pytorch(example_design("default")), kDefaultPytorch); }
TEST(Export, DefaultJaxVerbatim) { EXPECT_EQ(export_jax(example_design("default")), kDefaultJax); }

// docs/03-mesh.md shows the torchtitan-4d scripts in ```python blocks, which the docs test does not run.
TEST(Export, DocsShowTheTorchtitanScripts) {
  const fs::path page = fs::path(MESHLOOM_EXAMPLES_DIR) / ".." / ".." / "docs" / "03-mesh.md";
  std::ifstream in(page, std::ios::binary);
  ASSERT_TRUE(in) << page;
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string docs = buffer.str();
  EXPECT_NE(docs.find("```python\n" + std::string(kTorchtitanPytorch) + "```\n"), std::string::npos);
  const std::string jax(kTorchtitanJax.substr(kTorchtitanJax.find("import jax\n")));
  EXPECT_NE(docs.find("```python\n" + jax + "```\n"), std::string::npos);
}

// ---- A tiny parser for the statements the exporters write -------------------------------------------------

struct ParseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A cursor over one line of Python: string and int literals, tuples, and literal text.
struct Cursor {
  std::string_view s;
  std::size_t i = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw ParseError(what + " at column " + std::to_string(i) + " of: " + std::string(s));
  }
  bool at(std::string_view lit) const { return s.substr(i, lit.size()) == lit; }
  bool eat(std::string_view lit) {
    if (!at(lit)) return false;
    i += lit.size();
    return true;
  }
  void expect(std::string_view lit) {
    if (!eat(lit)) fail("expected '" + std::string(lit) + "'");
  }
  void end() const {
    if (i != s.size()) fail("unexpected text");
  }
  std::string rest() {
    std::string out(s.substr(i));
    i = s.size();
    return out;
  }
  // "..." with \\, \" and \xNN escapes.
  std::string string() {
    expect("\"");
    std::string out;
    while (i < s.size() && s[i] != '"') {
      if (s[i] == '\\') {
        if (i + 1 >= s.size()) fail("dangling backslash");
        const char next = s[i + 1];
        if (next == '\\' || next == '"') {
          out += next;
          i += 2;
        } else if (next == 'x' && i + 3 < s.size()) {
          out += static_cast<char>(std::stoi(std::string(s.substr(i + 2, 2)), nullptr, 16));
          i += 4;
        } else {
          fail("unknown escape");
        }
      } else {
        out += s[i++];
      }
    }
    expect("\"");
    return out;
  }
  std::int64_t integer() {
    const std::size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == start) fail("expected an integer");
    return std::stoll(std::string(s.substr(start, i - start)));
  }
  std::string identifier() {
    const std::size_t start = i;
    while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) != 0 || s[i] == '_')) ++i;
    if (i == start) fail("expected an identifier");
    return std::string(s.substr(start, i - start));
  }
  // A Python tuple: (), (x,), (x, y); `item` reads one element.
  template <class F>
  auto tuple(F item) -> std::vector<decltype(item())> {
    std::vector<decltype(item())> out;
    expect("(");
    if (eat(")")) return out;
    out.push_back(item());
    if (eat(",)")) return out;
    while (eat(", ")) out.push_back(item());
    if (out.size() < 2) fail("a one-element tuple needs a trailing comma");
    expect(")");
    return out;
  }
  std::vector<std::int64_t> ints() {
    return tuple([this] { return integer(); });
  }
  std::vector<std::string> strings() {
    return tuple([this] { return string(); });
  }
};

// Python's str.splitlines(), on UTF-8 bytes.
std::vector<std::string> splitlines(std::string_view text) {
  std::vector<std::string> lines;
  std::string line;
  bool pending = false;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t n = 0;  // bytes of a line break at i
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      n = 2;
    } else if (c == '\n' || c == '\r' || c == 0x0b || c == 0x0c || (c >= 0x1c && c <= 0x1e)) {
      n = 1;
    } else if (text.substr(i, 2) == "\xc2\x85") {
      n = 2;
    } else if (text.substr(i, 3) == "\xe2\x80\xa8" || text.substr(i, 3) == "\xe2\x80\xa9") {
      n = 3;
    }
    if (n > 0) {
      lines.push_back(line);
      line.clear();
      pending = false;
      i += n;
    } else {
      line += text[i++];
      pending = true;
    }
  }
  if (pending) lines.push_back(line);
  return lines;
}

bool is_comment(std::string_view line) {
  const std::size_t first = line.find_first_not_of(' ');
  return first == std::string_view::npos || line[first] == '#';
}

const std::set<std::string>& python_keywords() {
  static const std::set<std::string> kw = {"False", "None", "True", "and", "as", "assert", "async", "await", "break",
                                           "class", "continue", "def", "del", "elif", "else", "except", "finally",
                                           "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
                                           "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
                                           "match", "case", "type", "_"};
  return kw;
}

bool is_identifier(const std::string& s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; });
}

// One tensor entry of `tensors = {...}`: each state as the text the exporter wrote for it.
struct TensorEntry {
  std::string name;
  std::vector<std::int64_t> shape;
  std::string dtype;
  std::map<std::string, std::string> fields;  // key ("src", "src_shard_order", ...) -> text after '='
};

// Reads the `tensors = {` block starting at lines[k] (the line after "tensors = {"); returns the entries and
// leaves k at the closing "}".
std::vector<TensorEntry> parse_tensors(const std::vector<std::string>& lines, std::size_t& k,
                                       std::string_view dtype_prefix) {
  std::vector<TensorEntry> out;
  for (; k < lines.size() && lines[k] != "}"; ++k) {
    if (is_comment(lines[k])) continue;
    Cursor c{lines[k]};
    c.expect("    ");
    TensorEntry entry;
    entry.name = c.string();
    c.expect(": dict(");
    c.end();
    for (++k; k < lines.size() && lines[k] != "    ),"; ++k) {
      Cursor f{lines[k]};
      f.expect("        ");
      const std::string key = f.identifier();
      f.expect("=");
      if (key == "shape") {
        entry.shape = f.ints();
        f.expect(",");
        f.end();
      } else if (key == "dtype") {
        f.expect(dtype_prefix);
        entry.dtype = f.identifier();
        f.expect(",");
        f.end();
      } else {
        if (entry.fields.count(key) != 0) f.fail("field written twice");
        entry.fields[key] = f.rest();
      }
    }
    if (k == lines.size()) throw ParseError("unterminated tensor entry " + entry.name);
    out.push_back(std::move(entry));
  }
  if (k == lines.size()) throw ParseError("unterminated tensors block");
  return out;
}

std::optional<std::size_t> axis_index(const std::vector<std::string>& names, const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) return std::nullopt;
  return static_cast<std::size_t>(it - names.begin());
}

// ---- PyTorch -------------------------------------------------------------------------------------------------

struct TorchScript {
  std::vector<std::int64_t> shape;
  std::vector<std::string> names;
  std::optional<std::int64_t> own_world;  // the mesh's ranks form the default group on their own
  struct Flatten {
    std::string variable;
    std::vector<std::string> axes;
    std::string name;
  };
  std::vector<Flatten> flattens;
  std::vector<TensorEntry> tensors;
};

TorchScript parse_torch(const std::string& script) {
  static const std::set<std::string> kImports = {
      "import os", "import torch", "import torch.distributed as dist",
      "from torch.distributed.device_mesh import init_device_mesh",
      "from torch.distributed.tensor import Partial, Replicate, Shard"};
  TorchScript out;
  bool have_mesh = false;
  std::optional<std::int64_t> guard;
  bool have_rank = false;
  bool exits = false;
  const std::vector<std::string> lines = splitlines(script);
  for (std::size_t k = 0; k < lines.size(); ++k) {
    const std::string& line = lines[k];
    if (is_comment(line) || kImports.count(line) != 0) continue;
    Cursor c{line};
    if (c.eat("mesh = init_device_mesh(\"cuda\", ")) {
      if (have_mesh) c.fail("a second mesh");
      out.shape = c.ints();
      c.expect(", mesh_dim_names=");
      out.names = c.strings();
      c.expect(")");
      c.end();
      have_mesh = true;
    } else if (line == "rank = int(os.environ[\"RANK\"])") {
      have_rank = true;
    } else if (c.eat("if rank >= ")) {
      guard = c.integer();
      c.expect(":");
      c.end();
    } else if (line == "    raise SystemExit(0)") {
      if (!guard || k == 0 || !lines[k - 1].starts_with("if rank >= ")) c.fail("exit outside the guard");
      exits = true;
    } else if (c.eat("dist.init_process_group(rank=rank, world_size=")) {
      out.own_world = c.integer();
      c.expect(")");
      c.end();
    } else if (line == "tensors = {") {
      ++k;
      out.tensors = parse_tensors(lines, k, "torch.");
    } else {
      TorchScript::Flatten f;
      f.variable = c.identifier();
      c.expect(" = mesh[");
      if (!have_mesh) c.fail("flatten before the mesh");
      f.axes.push_back(c.string());
      while (c.eat(", ")) f.axes.push_back(c.string());
      c.expect("]._flatten(");
      f.name = c.string();
      c.expect(")");
      c.end();
      out.flattens.push_back(std::move(f));
    }
  }
  if (!have_mesh) throw ParseError("no init_device_mesh");
  if (out.own_world || guard || have_rank || exits) {
    if (!(out.own_world && guard && have_rank && exits && *guard == *out.own_world)) {
      throw ParseError("incomplete guard for the ranks outside the mesh");
    }
  }
  return out;
}

std::vector<Placement> parse_placements(const std::string& text) {
  Cursor c{text};
  std::vector<Placement> out;
  c.expect("[");
  do {
    if (c.eat("Replicate()")) {
      out.push_back(Placement::replicate());
    } else if (c.eat("Shard(")) {
      out.push_back(Placement::shard(c.integer()));
      c.expect(")");
    } else {
      c.expect("Partial(");
      const auto op = reduce_op_from_string(c.string());
      if (!op) c.fail("unknown reduce op");
      out.push_back(Placement::partial(*op));
      c.expect(")");
    }
  } while (c.eat(", "));
  c.expect("],");
  c.end();
  return out;
}

// {0: ("tp", "dp")} -> dim -> axes in split order.
std::map<std::int64_t, std::vector<std::size_t>> parse_order(const std::string& text,
                                                             const std::vector<std::string>& names) {
  Cursor c{text};
  std::map<std::int64_t, std::vector<std::size_t>> out;
  c.expect("{");
  do {
    const std::int64_t dim = c.integer();
    c.expect(": ");
    for (const std::string& name : c.strings()) {
      const auto axis = axis_index(names, name);
      if (!axis) c.fail("unknown axis " + name);
      out[dim].push_back(*axis);
    }
  } while (c.eat(", "));
  c.expect("},");
  c.end();
  return out;
}

// A state from DTensor placements and an optional shard order (dims not listed: left to right).
State torch_state(const TensorEntry& t, const std::string& key, const std::vector<std::string>& names) {
  const std::vector<Placement> placements = parse_placements(t.fields.at(key));
  std::map<std::int64_t, std::vector<std::size_t>> order;
  if (t.fields.count(key + "_shard_order") != 0) order = parse_order(t.fields.at(key + "_shard_order"), names);
  for (std::size_t axis = 0; axis < placements.size(); ++axis) {
    const Placement& p = placements[axis];
    if (!p.is_shard()) continue;
    auto it = order.find(p.dim());
    if (it == order.end() || std::find(it->second.begin(), it->second.end(), axis) == it->second.end()) {
      order[p.dim()].push_back(axis);  // left to right (only ever appended for dims not in the written order)
    }
  }
  std::vector<ShardOrderEntry> entries;
  for (auto& [dim, axes] : order) entries.push_back({dim, axes});
  return State(placements, entries);
}

// Every axis and flattened axis of `rebuilt` has the groups of build_mesh(design.mesh, design.world).
void expect_same_groups(const DeviceMesh& rebuilt, const Design& design) {
  const DeviceMesh expected = build_mesh(design.mesh, design.world);
  for (const std::string& name : design.mesh.names) {
    EXPECT_EQ(rebuilt.groups(name), expected.groups(name)) << "axis " << name;
  }
  ASSERT_EQ(rebuilt.flattened_names(), expected.flattened_names());
  for (const FlattenSpec& spec : design.mesh.flattened) {
    EXPECT_EQ(rebuilt.groups(spec.name), expected.groups(spec.name)) << "flattened axis " << spec.name;
  }
}

std::string torch_dtype_name(DType dtype) {
  switch (dtype) {
    case DType::Float8E4M3: return "float8_e4m3fn";
    default: return std::string(to_string(dtype));
  }
}

// parsed = parse(script), or a test failure with the parser's message.
template <class Parse, class Script>
void parse_or_fail(Parse parse, const std::string& script, Script& parsed) {
  try {
    parsed = parse(script);
  } catch (const ParseError& e) {
    FAIL() << e.what();
  }
}

// The mesh a script declares against the design's: its shape and names, and the rank count it limits itself to,
// which is the mesh's when the mesh is smaller than the world and none otherwise.
void expect_declared_mesh(const Design& design, const std::vector<std::int64_t>& shape,
                          const std::vector<std::string>& names, const std::optional<std::int64_t>& limited) {
  ASSERT_EQ(shape, design.mesh.shape);
  ASSERT_EQ(names, design.mesh.names);
  std::int64_t ranks = 1;
  for (std::int64_t size : design.mesh.shape) ranks *= size;
  if (ranks < design.world) {
    ASSERT_EQ(limited, ranks);
  } else {
    ASSERT_EQ(limited, std::nullopt);
  }
}

// Parses the PyTorch script of `design`, rebuilds its mesh and checks it against the design.
void check_pytorch(const Design& design) {
  const std::string script = export_pytorch(design);
  SCOPED_TRACE(script);
  TorchScript parsed;
  ASSERT_NO_FATAL_FAILURE(parse_or_fail(parse_torch, script, parsed));
  ASSERT_NO_FATAL_FAILURE(expect_declared_mesh(design, parsed.shape, parsed.names, parsed.own_world));
  // Rebuild as the script does: init_device_mesh, then mesh[axes]._flatten(name).
  const DeviceMesh mesh = DeviceMesh::init(parsed.shape, parsed.names, parsed.own_world.value_or(design.world));
  std::set<std::string> variables = {"mesh", "torch", "dist", "os", "rank", "tensors", "init_device_mesh",
                                     "Partial", "Replicate", "Shard"};
  ASSERT_EQ(parsed.flattens.size(), design.mesh.flattened.size());
  for (std::size_t f = 0; f < parsed.flattens.size(); ++f) {
    const auto& call = parsed.flattens[f];
    EXPECT_EQ(call.name, design.mesh.flattened[f].name);
    EXPECT_EQ(call.axes, design.mesh.flattened[f].axes);
    EXPECT_TRUE(is_identifier(call.variable)) << call.variable;
    EXPECT_EQ(python_keywords().count(call.variable), 0U) << call.variable;
    EXPECT_TRUE(variables.insert(call.variable).second) << call.variable << " is assigned twice or shadows a name";
    const DeviceMesh flat = mesh.slice(call.axes).flatten(call.name);
    EXPECT_EQ(flat.names(), std::optional<DeviceMesh::Names>(DeviceMesh::Names{call.name}));
  }
  expect_same_groups(mesh, design);
  ASSERT_EQ(parsed.tensors.size(), design.tensors.size());
  for (std::size_t i = 0; i < design.tensors.size(); ++i) {
    const DesignTensor& t = design.tensors[i];
    const TensorEntry& e = parsed.tensors[i];
    EXPECT_EQ(e.name, t.name);
    EXPECT_EQ(e.shape, t.shape);
    EXPECT_EQ(e.dtype, torch_dtype_name(t.dtype));
    EXPECT_EQ(torch_state(e, "src", design.mesh.names), t.src) << t.name;
    EXPECT_EQ(torch_state(e, "dst", design.mesh.names), t.dst) << t.name;
    for (const auto& [key, text] : e.fields) {
      EXPECT_TRUE(key == "src" || key == "dst" || key == "src_shard_order" || key == "dst_shard_order") << key;
    }
  }
}

// ---- JAX -------------------------------------------------------------------------------------------------------

struct JaxScript {
  std::vector<std::int64_t> shape;
  std::vector<std::string> names;
  std::optional<std::int64_t> device_count;  // jax.devices()[:n]
  std::vector<std::pair<std::string, std::vector<std::string>>> flattened;  // name -> PartitionSpec entry
  std::vector<TensorEntry> tensors;
};

// One PartitionSpec entry: None, "a", or ("a", "b").
std::vector<std::string> spec_entry(Cursor& c) {
  if (c.eat("None")) return {};
  if (c.at("\"")) return {c.string()};
  std::vector<std::string> axes = c.strings();
  if (axes.size() < 2) c.fail("a one-axis entry is written as a plain string");
  return axes;
}

// P(entry, ...) -> one axis list per tensor dim.
std::vector<std::vector<std::string>> spec(Cursor& c) {
  std::vector<std::vector<std::string>> out;
  c.expect("P(");
  if (c.eat(")")) return out;
  out.push_back(spec_entry(c));
  while (c.eat(", ")) out.push_back(spec_entry(c));
  c.expect(")");
  return out;
}

JaxScript parse_jax(const std::string& script) {
  static const std::set<std::string> kImports = {"import jax", "import jax.numpy as jnp", "import numpy as np",
                                                 "from jax.sharding import Mesh",
                                                 "from jax.sharding import Mesh, PartitionSpec as P"};
  JaxScript out;
  bool have_devices = false;
  bool have_mesh = false;
  const std::vector<std::string> lines = splitlines(script);
  for (std::size_t k = 0; k < lines.size(); ++k) {
    const std::string& line = lines[k];
    Cursor c{line};
    if (have_mesh && c.eat("#   ")) {  // a flattened axis: "#   dp -> P((...))"
      const std::string name = c.identifier();
      while (c.eat(" ")) {
      }
      c.expect("-> P(");
      std::vector<std::string> axes = spec_entry(c);
      c.expect(")");
      c.end();
      out.flattened.emplace_back(name, std::move(axes));
      continue;
    }
    if (is_comment(line) || kImports.count(line) != 0) continue;
    if (c.eat("devices = np.array(jax.devices()")) {
      if (c.eat("[:")) {
        out.device_count = c.integer();
        c.expect("]");
      }
      c.expect(").reshape(");
      out.shape = c.ints();
      c.expect(")");
      c.end();
      have_devices = true;
    } else if (c.eat("mesh = Mesh(devices, axis_names=")) {
      if (!have_devices) c.fail("mesh before devices");
      out.names = c.strings();
      c.expect(")");
      c.end();
      have_mesh = true;
    } else if (line == "tensors = {") {
      ++k;
      out.tensors = parse_tensors(lines, k, "jnp.");
    } else {
      c.fail("unknown statement");
    }
  }
  if (!have_mesh) throw ParseError("no Mesh");
  return out;
}

// The state a PartitionSpec describes: S(d) on each axis of entry d, split in the order listed.
State state_of_spec(const std::vector<std::vector<std::string>>& entries, const std::vector<std::string>& names) {
  std::vector<Placement> placements(names.size(), Placement::replicate());
  std::vector<ShardOrderEntry> order;
  for (std::size_t d = 0; d < entries.size(); ++d) {
    if (entries[d].empty()) continue;
    ShardOrderEntry entry{static_cast<std::int64_t>(d), {}};
    for (const std::string& name : entries[d]) {
      const auto axis = axis_index(names, name);
      if (!axis) throw ParseError("unknown axis " + name);
      placements[*axis] = Placement::shard(static_cast<std::int64_t>(d));
      entry.axes.push_back(*axis);
    }
    order.push_back(std::move(entry));
  }
  return State(placements, order);
}

// The state without its Partial placements (what a reduction leaves).
State reduced(const State& state) {
  std::vector<Placement> placements = state.placements();
  for (Placement& p : placements) {
    if (p.is_partial()) p = Placement::replicate();
  }
  return State(placements, state.shard_order());
}

void check_jax_state(const TensorEntry& e, const std::string& key, const State& expected, const DesignTensor& t,
                     const std::vector<std::string>& names) {
  SCOPED_TRACE(key + " of " + t.name);
  Cursor c{e.fields.at(key)};
  bool partial = false;
  for (const Placement& p : expected.placements()) partial = partial || p.is_partial();
  std::vector<std::vector<std::string>> entries;
  if (partial) {
    c.expect("None,  # " + to_string(expected) + ": partial on ");
    const std::string remark = c.rest();
    const std::size_t at = remark.find("reduced: ");
    ASSERT_NE(at, std::string::npos) << remark;
    Cursor r{remark, at + 9};
    entries = spec(r);
    EXPECT_EQ(state_of_spec(entries, names), reduced(expected));
  } else {
    entries = spec(c);
    c.expect(",");
    EXPECT_EQ(state_of_spec(entries, names), expected);
    if (c.i != c.s.size()) {  // only for a dim split unevenly
      c.expect("  # " + to_string(expected) + ": ");
      EXPECT_NE(c.rest().find(": JAX needs even shards"), std::string::npos);
    }
  }
  EXPECT_EQ(entries.size(), t.shape.size());
}

void check_jax(const Design& design) {
  const std::string script = export_jax(design);
  SCOPED_TRACE(script);
  JaxScript parsed;
  ASSERT_NO_FATAL_FAILURE(parse_or_fail(parse_jax, script, parsed));
  ASSERT_NO_FATAL_FAILURE(expect_declared_mesh(design, parsed.shape, parsed.names, parsed.device_count));
  // A PartitionSpec entry of several axes splits a dim over them as mesh[axes]._flatten() groups ranks.
  const DeviceMesh mesh = DeviceMesh::init(parsed.shape, parsed.names, design.world);
  ASSERT_EQ(parsed.flattened.size(), design.mesh.flattened.size());
  for (std::size_t f = 0; f < parsed.flattened.size(); ++f) {
    EXPECT_EQ(parsed.flattened[f].first, design.mesh.flattened[f].name);
    (void)mesh.slice(parsed.flattened[f].second).flatten(parsed.flattened[f].first);
  }
  expect_same_groups(mesh, design);
  ASSERT_EQ(parsed.tensors.size(), design.tensors.size());
  for (std::size_t i = 0; i < design.tensors.size(); ++i) {
    const DesignTensor& t = design.tensors[i];
    const TensorEntry& e = parsed.tensors[i];
    EXPECT_EQ(e.name, t.name);
    EXPECT_EQ(e.shape, t.shape);
    EXPECT_EQ(e.dtype, torch_dtype_name(t.dtype));
    EXPECT_EQ(e.fields.size(), 2U);
    check_jax_state(e, "src", t.src, t, design.mesh.names);
    check_jax_state(e, "dst", t.dst, t, design.mesh.names);
  }
}

// The safety rules every script keeps, whatever the name and description: fixed first two lines, '\n' line
// ends only, no control character but tab, and the design's text only inside comments (checked by the parsers).
void check_text_safety(const std::string& script, std::string_view line1) {
  ASSERT_TRUE(script.ends_with("\n"));
  const std::vector<std::string> lines = splitlines(script);
  ASSERT_GE(lines.size(), 2U);
  EXPECT_EQ(lines[0], line1);
  EXPECT_TRUE(lines[1].starts_with("# Run it ")) << lines[1];
  EXPECT_EQ(lines[1].find("coding"), std::string::npos);
  std::size_t newlines = 0;
  for (char c : script) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') ++newlines;
    EXPECT_FALSE((u < 0x20 && c != '\n' && c != '\t') || u == 0x7f) << "control byte " << static_cast<int>(u);
  }
  EXPECT_EQ(lines.size(), newlines) << "a line break other than \\n";
}

TEST(Export, BundledExamplesRebuildTheSameMesh) {
  const auto paths = examples();
  ASSERT_GE(paths.size(), 5U);
  for (const fs::path& path : paths) {
    SCOPED_TRACE(path.filename().string());
    const Design design = load_design(path);
    check_pytorch(design);
    check_jax(design);
  }
}

// ---- Random valid designs ------------------------------------------------------------------------------------

using testing::Random;

// Hostile text for the name (one line) and description: line breaks of every kind, controls, bidi overrides,
// Python that must stay inside comments, and a coding declaration.
std::string random_text(Random& rng, bool single_line) {
  static const std::vector<std::string> pieces = {
      "plain", " ", "import os", "os.system(\"x\")", "\"\"\"", "'''", "\\", "# coding: latin-1",
      "-*- coding: utf-8 -*-",
      "\xc3\xa9t\xc3\xa9", "\xe2\x80\xa8", "\xe2\x80\xa9", "\xc2\x85", "\xe2\x80\xae", "\xe2\x81\xa6", "\xef\xbb\xbf",
      "\xc2\x9b", "\xf0\x9f\x98\x80", "\t", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x01",
      "\x1b[31m", "\x7f", "x = 1", "}", ")", "mesh = None"};
  std::string out;
  const std::int64_t n = rng.between(single_line ? 1 : 0, 8);
  for (std::int64_t i = 0; i < n; ++i) {
    std::string piece = rng.pick(pieces);
    if (single_line && static_cast<unsigned char>(piece[0]) < 0x20) piece = "y";
    if (single_line && piece == "\x7f") piece = "z";
    if (out.size() + piece.size() > kMaxDesignTitleBytes) break;
    out += piece;
  }
  return out;
}

Design random_design(Random& rng) {
  static const std::vector<std::string> axis_pool = {"dp", "tp", "pp", "cp", "ep", "dp_shard", "dp_replicate", "x1",
                                                     "1x", "if", "None", "lambda", "_", "__init__", "mesh", "torch",
                                                     "P", "np", "rank", "jax", "A9_b"};
  static const std::vector<std::string> flat_pool = {"dp_cp", "dp_flat", "9", "mesh_9", "0dp", "all", "class",
                                                     "tensors", "devices", "dist", "os", "Shard", "f", "dp_shard_cp",
                                                     "_x", "Mesh"};
  Design d;
  d.name = random_text(rng, true);
  if (rng.chance(70)) d.description = random_text(rng, false);
  const auto ndim = static_cast<std::size_t>(rng.between(1, 5));
  std::vector<std::string> names = axis_pool;
  rng.shuffle(names);
  names.resize(ndim);
  d.mesh.names = names;
  std::int64_t ranks = 1;
  for (std::size_t i = 0; i < ndim; ++i) {
    d.mesh.shape.push_back(rng.between(1, 4));
    ranks *= d.mesh.shape.back();
  }
  d.world = ranks * (rng.chance(70) ? 1 : rng.between(2, 3));
  std::vector<std::int64_t> divisors;
  for (std::int64_t k = 1; k <= d.world; ++k) {
    if (d.world % k == 0) divisors.push_back(k);
  }
  d.devices_per_host = rng.pick(divisors);
  // Flattened axes: ordered subsets of the axes, contiguous or not.
  std::vector<std::string> flat_names = flat_pool;
  rng.shuffle(flat_names);
  const auto nflat = static_cast<std::size_t>(rng.between(0, 4));
  for (std::size_t f = 0; f < nflat; ++f) {
    FlattenSpec spec;
    spec.name = flat_names[f];
    if (rng.chance(50)) {  // a contiguous run
      const std::size_t lo = rng.index(ndim);
      const std::size_t hi = lo + rng.index(ndim - lo);
      for (std::size_t a = lo; a <= hi; ++a) spec.axes.push_back(names[a]);
    } else {
      for (std::size_t a = 0; a < ndim; ++a) {
        if (rng.chance(50)) spec.axes.push_back(names[a]);
      }
      if (spec.axes.empty()) spec.axes.push_back(names[rng.index(ndim)]);
    }
    d.mesh.flattened.push_back(std::move(spec));
  }
  // Tensors with random states and shard orders.
  static const std::vector<DType> dtypes = {DType::Float32, DType::BFloat16, DType::Int8, DType::Float8E4M3,
                                            DType::Float8E5M2, DType::UInt8};
  const std::int64_t ntensors = rng.between(0, 3);
  for (std::int64_t i = 0; i < ntensors; ++i) {
    DesignTensor t;
    t.name = "t" + std::to_string(i) + (rng.chance(50) ? ".weight" : "");
    const std::int64_t rank = rng.between(0, 3);
    for (std::int64_t k = 0; k < rank; ++k) t.shape.push_back(rng.between(1, 12));
    t.dtype = rng.pick(dtypes);
    t.src = testing::random_state(rng, ndim, rank, ReduceOp::Avg);
    t.dst = testing::random_state(rng, ndim, rank, ReduceOp::Avg);
    d.tensors.push_back(std::move(t));
  }
  return d;
}

TEST(Export, RandomDesignsRebuildTheSameMesh) {
  Random rng(20240611);
  int smaller_world = 0;
  int reordered = 0;
  for (int n = 0; n < 300; ++n) {
    const Design design = random_design(rng);
    SCOPED_TRACE("random design " + std::to_string(n) + ": " + to_json_text(design));
    check_pytorch(design);
    check_jax(design);
    check_text_safety(export_pytorch(design),
                      "# PyTorch DeviceMesh for a Meshloom design, written by Meshloom's export_pytorch.");
    check_text_safety(export_jax(design), "# JAX Mesh for a Meshloom design, written by Meshloom's export_jax.");
    std::int64_t ranks = 1;
    for (std::int64_t size : design.mesh.shape) ranks *= size;
    smaller_world += ranks < design.world ? 1 : 0;
    for (const DesignTensor& t : design.tensors) {
      reordered += t.src.has_default_shard_order() && t.dst.has_default_shard_order() ? 0 : 1;
    }
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(smaller_world, 10);  // the generator covers both cases
  EXPECT_GT(reordered, 10);
}

// ---- Comments and errors -------------------------------------------------------------------------------------

TEST(Export, DescriptionStaysInComments) {
  Design design = example_design("hsdp-2d");
  design.name = "x \xe2\x80\xa8import os \xe2\x80\xae# coding: latin-1";
  design.description = "first\nimport os\r\nos.system('rm')\r\x0bthird\x0c\x1c" "fourth\xc2\x85" "fifth\n\n\x01\ttab\n";
  const std::string script = export_pytorch(design);
  EXPECT_NE(script.find("# design: x\n# import os \\u202e# coding: latin-1\n"), std::string::npos) << script;
  EXPECT_NE(script.find("\n# first\n# import os\n# os.system('rm')\n#\n# third\n#\n# fourth\n# fifth\n#\n# \\x01\ttab\n"
                        "# world:"),
            std::string::npos)
      << script;
  check_text_safety(script, "# PyTorch DeviceMesh for a Meshloom design, written by Meshloom's export_pytorch.");
  check_pytorch(design);
  check_jax(design);
}

TEST(Export, MeshSmallerThanWorld) {
  Design design = example_design("hsdp-2d");
  design.world = 16;
  const std::string script = export_pytorch(design);
  EXPECT_NE(script.find("import os\n\nimport torch\nimport torch.distributed as dist\n"), std::string::npos) << script;
  EXPECT_NE(script.find("# The mesh holds ranks 0..7; ranks 8..15 of the world (16) are outside it.\n"),
            std::string::npos);
  EXPECT_NE(script.find("rank = int(os.environ[\"RANK\"])\nif rank >= 8:\n    raise SystemExit(0)\n"
                        "dist.init_process_group(rank=rank, world_size=8)\n"
                        "mesh = init_device_mesh(\"cuda\", (2, 4), mesh_dim_names=(\"dp_replicate\", \"dp_shard\"))\n"),
            std::string::npos)
      << script;
  const std::string jax = export_jax(design);
  EXPECT_NE(jax.find("# The mesh holds devices 0..7; devices 8..15 of the world (16) are outside it.\n"
                     "devices = np.array(jax.devices()[:8]).reshape((2, 4))\n"),
            std::string::npos)
      << jax;
  design.world = 9;
  design.devices_per_host = 9;
  design.mesh = {{8}, {"dp"}, {}};
  design.tensors.clear();
  EXPECT_NE(export_pytorch(design).find("# The mesh holds ranks 0..7; rank 8 of the world (9) is outside it.\n"),
            std::string::npos);
}

TEST(Export, InvalidDesignIsRefused) {
  Design design = example_design("default");
  design.world = 4;
  design.devices_per_host = 4;
  testing::expect_error([&] { (void)export_pytorch(design); }, ErrorKind::ValueError, {"mesh.shape", "world = 4"});
  testing::expect_error([&] { (void)export_jax(design); }, ErrorKind::ValueError, {"mesh.shape", "world = 4"});
}

}  // namespace
}  // namespace meshloom
