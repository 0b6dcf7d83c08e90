// `meshloom-launch mesh --batch`: one JSON line in, one JSON line out (see mesh_batch.hpp).
#include "mesh_batch.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <istream>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <ostream>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "batch_io.hpp"
#include "meshloom/error.hpp"
#include "meshloom/layout/layout.hpp"
#include "meshloom/mesh/device_mesh.hpp"
#include "text_format.hpp"

namespace meshloom::launcher {
namespace {

using namespace jsonl;  // NOLINT(google-build-using-namespace): the shared batch helpers
using Names = DeviceMesh::Names;

// Meshes (and every list of axes, names or sizes in a request) hold at most this many axes.
constexpr std::size_t kMaxAxes = kMaxListEntries;

// An axis: an index or a name.
AxisRef get_axis(const json& v, const std::string& path) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return get_int(v, path);
  value_error(path + " = " + show(v) + ": expected an axis index or name, got " + type_word(v));
}

// The tensor as nested lists (recursion depth = number of dims <= kMaxAxes + 1).
void append_tensor(std::string& out, const RankTensor& t) {
  std::size_t pos = 0;
  append_nested(out, t.shape, t.values, pos);
}

// ---- Meshes ----------------------------------------------------------------------------------------------------

struct MeshInput {
  std::vector<std::int64_t> shape;
  std::optional<std::vector<std::int64_t>> ranks;  // explicit rank tensor, row-major
  std::optional<Names> names;
};

std::string index_path(const std::string& path, const std::vector<std::size_t>& index) {
  std::string s = path;
  for (auto i : index) s += "[" + std::to_string(i) + "]";
  return s;
}

// Walks a nested list that must be rectangular with the given shape, collecting its integers in row-major
// order. Recursion depth is bounded by the shape's length (itself bounded by the line's nesting limit).
void collect_ranks(const json& v, const std::vector<std::int64_t>& shape, std::size_t dim,
                   std::vector<std::size_t>& index, const std::string& path, std::vector<std::int64_t>& out) {
  if (dim == shape.size()) {
    if (!v.is_number_integer()) {
      value_error(index_path(path, index) + " = " + show(v) + ": expected an integer rank, got " + type_word(v) +
                  " (the rank tensor must be a rectangular nested list of integers)");
    }
    out.push_back(get_int(v, index_path(path, index)));
    return;
  }
  const auto expected = static_cast<std::size_t>(shape[dim]);
  if (!v.is_array() || v.size() != expected) {
    std::vector<std::size_t> first(index.size(), 0);
    value_error(index_path(path, index) + " = " + show(v) + ": expected a list of " + std::to_string(expected) +
                " elements like " + index_path(path, first) + " (the rank tensor must be rectangular)");
  }
  index.push_back(0);
  for (std::size_t i = 0; i < expected; ++i) {
    index.back() = i;
    collect_ranks(v[i], shape, dim + 1, index, path, out);
  }
  index.pop_back();
}

MeshInput parse_mesh(const json& v, const std::string& path) {
  if (!v.is_object()) {
    value_error(path + " = " + show(v) + ": expected an object {\"shape\": [...], \"names\": [...]} or {\"ranks\": "
                "[[...]], \"names\": [...]}, got " + type_word(v));
  }
  check_fields(v, path + ": ", {"shape", "ranks", "names"}, "");
  const json* shape = find_field(v, "shape");
  const json* ranks = find_field(v, "ranks");
  const json* names = find_field(v, "names");
  if ((shape == nullptr) == (ranks == nullptr)) {
    value_error(path + ": give exactly one of \"shape\" (ranks 0..N-1, row-major) and \"ranks\" (an explicit rank "
                "tensor)");
  }
  MeshInput m;
  if (names != nullptr && !names->is_null()) m.names = get_strings(*names, path + ".names");
  if (shape != nullptr) {
    m.shape = get_ints(*shape, path + ".shape");
    return m;
  }
  const std::string rpath = path + ".ranks";
  if (!ranks->is_array()) {
    value_error(rpath + " = " + show(*ranks) + ": expected a nested list of integer ranks, got " + type_word(*ranks));
  }
  // The shape follows the first element at each level; collect_ranks then checks every list against it.
  for (const json* cur = ranks; cur->is_array(); cur = &(*cur)[0]) {
    if (m.shape.size() == kMaxAxes) {
      value_error(rpath + " nests more than " + std::to_string(kMaxAxes) + " levels: a mesh has at most " +
                  std::to_string(kMaxAxes) + " axes");
    }
    m.shape.push_back(static_cast<std::int64_t>(cur->size()));
    if (cur->empty()) value_error(rpath + " = " + show(*ranks) + ": the rank tensor holds no ranks");
  }
  std::vector<std::int64_t> values;
  std::vector<std::size_t> index;
  collect_ranks(*ranks, m.shape, 0, index, rpath, values);
  m.ranks = std::move(values);
  return m;
}

DeviceMesh build(const MeshInput& m, std::optional<std::int64_t> world) {
  if (m.ranks) return DeviceMesh::from_ranks(m.shape, *m.ranks, m.names, world);
  return DeviceMesh::init(m.shape, m.names, world);
}

// ---- Ops -------------------------------------------------------------------------------------------------------

struct OpSpec {
  const char* name;
  bool takes_on;                    // acts on a saved mesh (`on`, default "root")
  std::vector<std::string> fields;  // besides op, on, as
};

// create and concatenate make their mesh from their own fields: an `on` there is refused as an unknown field
// rather than silently ignored.
const std::vector<OpSpec>& op_specs() {
  static const std::vector<OpSpec> specs = {
      {"describe", true, {}},
      {"create", false, {"mesh", "world"}},
      {"slice", true, {"names"}},
      {"flatten", true, {"name"}},
      {"unflatten", true, {"dim", "sizes", "names"}},
      {"concatenate", false, {"meshes"}},
      {"submesh_of", true, {"names", "rank"}},
      {"groups", true, {"dim"}},
      {"coordinate", true, {"rank"}},
      {"local_rank", true, {"rank", "dim"}},
      {"equal", true, {"other"}},
  };
  return specs;
}

struct Context {
  const MeshBatchLimits& limits;
  std::optional<std::int64_t> world;
  std::map<std::string, DeviceMesh> saved;
  std::int64_t ranks_written = 0;
};

const DeviceMesh& lookup(const Context& ctx, const std::string& name, const std::string& path) {
  const auto it = ctx.saved.find(name);
  if (it == ctx.saved.end()) {
    std::vector<std::string> names;
    for (const auto& [n, m] : ctx.saved) names.push_back(quote(n));
    raise(ErrorKind::KeyError, path + " = " + show_key(name) + ": no mesh is saved under that name (saved: " +
                                   join_words(names, 16) + ")");
  }
  return it->second;
}

// Fails, before anything is enumerated, when `ranks` more would pass the line's output budget.
void check_budget(const Context& ctx, std::int64_t ranks, const std::string& path) {
  const std::int64_t left = ctx.limits.max_output_ranks - ctx.ranks_written;
  if (ranks > left) {
    value_error(path + ": the result would hold " + std::to_string(ranks) + " ranks, over the output limit of " +
                std::to_string(ctx.limits.max_output_ranks) + " ranks per line (" +
                std::to_string(ctx.ranks_written) + " already written on this line)");
  }
}

// Charges `ranks` to the line's output budget, or fails before anything is enumerated.
void charge(Context& ctx, std::int64_t ranks, const std::string& path) {
  check_budget(ctx, ranks, path);
  ctx.ranks_written += ranks;
}

// Every mesh an op yields is checked here: bounded axis count, unique names (so dim_groups keys are unique).
// The engine refuses repeated names when it builds or unflattens a mesh, but DeviceMesh::concatenate only
// appends the parts' names (as PyTorch does), so mesh[dp] concatenated with a mesh whose axis is also named dp
// would otherwise come out with two "dp" axes.
void check_result_mesh(const DeviceMesh& m, const std::string& path) {
  if (m.ndim() > kMaxAxes) {
    value_error(path + ": the resulting mesh would have " + std::to_string(m.ndim()) + " axes: at most " +
                std::to_string(kMaxAxes) + " are allowed");
  }
  if (m.names()) {
    auto sorted = *m.names();
    std::sort(sorted.begin(), sorted.end());
    const auto dup = std::adjacent_find(sorted.begin(), sorted.end());
    if (dup != sorted.end()) {
      value_error(path + ": the resulting mesh " + m.repr() + " would repeat the axis name " + quote(*dup));
    }
  }
}

std::string axis_key(const DeviceMesh& m, std::size_t i) { return m.names() ? (*m.names())[i] : std::to_string(i); }

// The first fields of a mesh result (without braces): shape, names, layout.
void append_mesh_header(std::string& out, const DeviceMesh& m) {
  out += "\"shape\":";
  append_ints(out, m.shape());
  out += ",\"names\":";
  if (m.names()) {
    append_strings(out, *m.names());
  } else {
    out += "null";
  }
  out += ",\"layout\":" + quote(to_string(m.layout()));
}

// The mesh result fields (without braces): shape, names, layout, meshes, dim_groups.
void append_mesh_fields(std::string& out, const DeviceMesh& m, Context& ctx, const std::string& path) {
  const std::int64_t n = m.rank_map().size();
  charge(ctx, n * static_cast<std::int64_t>(m.ndim() + 1), path);
  append_mesh_header(out, m);
  out += ",\"meshes\":";
  append_tensor(out, m.instances());
  out += ",\"dim_groups\":{";
  for (std::size_t i = 0; i < m.ndim(); ++i) {
    if (i > 0) out += ',';
    out += quote(axis_key(m, i)) + ":";
    append_tensor(out, m.groups(static_cast<std::int64_t>(i)));
  }
  out += '}';
}

// The mesh result of the one instance of `sub` that holds `rank`: meshes = [that instance]; dim_groups = for each
// axis the groups of that axis inside the instance, in the order groups(axis) lists them (ascending position of
// the group's first rank in the root rank map, since complement offsets increase lexicographically).
void append_instance_fields(std::string& out, const DeviceMesh& sub, std::int64_t rank, Context& ctx,
                            const std::string& path) {
  charge(ctx, sub.size() * static_cast<std::int64_t>(sub.ndim() + 1), path);
  const RankTensor inst = sub.instance_of(rank);
  const auto shape = sub.shape();
  append_mesh_header(out, sub);
  out += ",\"meshes\":";
  append_tensor(out, inst);
  out += ",\"dim_groups\":{";
  const std::size_t nd = shape.size();
  std::vector<std::int64_t> strides(nd, 1);
  for (std::size_t j = nd; j-- > 1;) strides[j - 1] = strides[j] * shape[j];
  for (std::size_t i = 0; i < nd; ++i) {
    if (i > 0) out += ',';
    out += quote(axis_key(sub, i)) + ":";
    // One line per coordinate of the other axes.
    std::vector<std::pair<std::int64_t, std::vector<std::int64_t>>> lines;  // (position of first rank, ranks)
    const std::int64_t count = sub.size() / shape[i];
    std::vector<std::int64_t> coord(nd, 0);
    for (std::int64_t k = 0; k < count; ++k) {
      std::int64_t base = 0;
      for (std::size_t j = 0; j < nd; ++j) base += coord[j] * strides[j];
      std::vector<std::int64_t> line;
      line.reserve(static_cast<std::size_t>(shape[i]));
      for (std::int64_t t = 0; t < shape[i]; ++t) line.push_back(inst.values[static_cast<std::size_t>(base + t * strides[i])]);
      const std::int64_t pos = sub.rank_map().position_of(line.front()).value_or(0);
      lines.emplace_back(pos, std::move(line));
      // Next coordinate of the other axes, row-major.
      for (std::size_t j = nd; j-- > 0;) {
        if (j == i) continue;
        if (++coord[j] < shape[j]) break;
        coord[j] = 0;
      }
    }
    std::stable_sort(lines.begin(), lines.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    out += '[';
    for (std::size_t g = 0; g < lines.size(); ++g) {
      if (g > 0) out += ',';
      append_ints(out, lines[g].second);
    }
    out += ']';
  }
  out += '}';
}

std::string run_op(const json& op, std::size_t index, Context& ctx) {
  const std::string path = "ops[" + std::to_string(index) + "]";
  const std::string where = path + ": ";
  if (!op.is_object()) value_error(path + " = " + show(op) + ": expected an object, got " + type_word(op));
  const std::string name = get_string(require_field(op, "op", where, ""), path + ".op");
  const auto& specs = op_specs();
  const auto spec = std::find_if(specs.begin(), specs.end(), [&](const OpSpec& s) { return name == s.name; });
  if (spec == specs.end()) {
    std::vector<std::string> known;
    for (const auto& s : specs) known.emplace_back(s.name);
    value_error(path + ".op = " + quote(name) + ": unknown op (expected one of " + join_words(known) + ")");
  }
  const std::string context = " for op \"" + name + "\"";
  std::vector<std::string> allowed = {"op"};
  if (spec->takes_on) allowed.emplace_back("on");
  allowed.emplace_back("as");
  allowed.insert(allowed.end(), spec->fields.begin(), spec->fields.end());
  check_fields(op, where, allowed, context);
  auto field = [&](const char* f) -> const json& { return require_field(op, f, where, context); };
  auto sub = [&](const char* f) { return path + "." + f; };

  std::string on_name = "root";
  if (const json* on = find_field(op, "on")) on_name = get_string(*on, sub("on"));
  std::optional<std::string> as;
  if (const json* a = find_field(op, "as")) as = get_string(*a, sub("as"));

  std::string out = "{\"ok\":true,";
  std::optional<DeviceMesh> produced;
  if (name == "create") {
    const MeshInput input = parse_mesh(field("mesh"), sub("mesh"));
    std::optional<std::int64_t> world = ctx.world;
    if (const json* w = find_field(op, "world"); w != nullptr && !w->is_null()) world = get_int(*w, sub("world"));
    produced = build(input, world);
  } else if (name == "concatenate") {
    const json& list = field("meshes");
    if (!list.is_array()) value_error(sub("meshes") + " = " + show(list) + ": expected a list of saved mesh names");
    if (list.size() > kMaxAxes) {
      value_error(sub("meshes") + " holds " + std::to_string(list.size()) + " entries: at most " +
                  std::to_string(kMaxAxes) + " are allowed");
    }
    std::vector<DeviceMesh> meshes;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string p = sub("meshes") + "[" + std::to_string(i) + "]";
      meshes.push_back(lookup(ctx, get_string(list[i], p), p));
    }
    produced = DeviceMesh::concatenate(meshes);
  } else {
    const DeviceMesh& on = lookup(ctx, on_name, sub("on"));
    if (name == "describe") {
      produced = on;
    } else if (name == "slice") {
      produced = on.slice(get_strings(field("names"), sub("names")));
    } else if (name == "flatten") {
      std::optional<std::string> flat;
      if (const json* n = find_field(op, "name"); n != nullptr && !n->is_null()) flat = get_string(*n, sub("name"));
      // flatten registers its axis on the root mesh (as PyTorch's does), so a result over the output limit is
      // refused before it is made: a failed op leaves no axis behind. Its mesh result charges each rank twice.
      check_budget(ctx, 2 * static_cast<std::int64_t>(on.rank_map().size()), path);
      produced = on.flatten(flat);
    } else if (name == "unflatten") {
      const AxisRef dim = get_axis(field("dim"), sub("dim"));
      const auto sizes = get_ints(field("sizes"), sub("sizes"));
      const auto names = get_strings(field("names"), sub("names"));
      produced = on.unflatten(dim, sizes, names);
    } else if (name == "submesh_of") {
      const auto names = get_strings(field("names"), sub("names"));
      const std::int64_t rank = get_int(field("rank"), sub("rank"));
      const DeviceMesh sliced = on.slice(names);
      check_result_mesh(sliced, path);
      append_instance_fields(out, sliced, rank, ctx, path);
      if (as) ctx.saved.insert_or_assign(*as, sliced);
      return out + "}";
    } else if (name == "groups") {
      // The groups of any axis cover the root's rank map once, so the charge is known before the axis is
      // resolved; it is committed only once groups() has succeeded (a bad axis charges nothing).
      const AxisRef dim = get_axis(field("dim"), sub("dim"));
      const std::int64_t ranks = on.rank_map().size();
      check_budget(ctx, ranks, path);
      const RankTensor groups = on.groups(dim);
      ctx.ranks_written += ranks;
      out += "\"groups\":";
      append_tensor(out, groups);
      return out + "}";
    } else if (name == "coordinate") {
      // The contract: null when the rank is not in the mesh, a rank past the world included. A negative rank
      // is malformed and keeps the engine's ValueError.
      const std::int64_t rank = get_int(field("rank"), sub("rank"));
      const auto c = rank >= on.world() ? std::nullopt : on.coordinate(rank);
      out += "\"coordinate\":";
      if (c) {
        append_ints(out, *c);
      } else {
        out += "null";
      }
      return out + "}";
    } else if (name == "local_rank") {
      const std::int64_t rank = get_int(field("rank"), sub("rank"));
      std::optional<AxisRef> dim;
      if (const json* d = find_field(op, "dim"); d != nullptr && !d->is_null()) dim = get_axis(*d, sub("dim"));
      out += "\"local_rank\":";
      append_int(out, on.local_rank(rank, dim));
      return out + "}";
    } else {  // equal
      const DeviceMesh& other = lookup(ctx, get_string(field("other"), sub("other")), sub("other"));
      out += std::string("\"equal\":") + (on == other ? "true" : "false");
      return out + "}";
    }
  }
  check_result_mesh(*produced, path);
  append_mesh_fields(out, *produced, ctx, path);
  if (as) ctx.saved.insert_or_assign(*as, *produced);
  return out + "}";
}

std::string answer_op(const json& op, std::size_t index, Context& ctx) {
  try {
    return run_op(op, index, ctx);
  } catch (const Error& e) {
    return error_object(e.text());
  } catch (const std::bad_alloc&) {
    return error_object("RuntimeError: out of memory while answering ops[" + std::to_string(index) + "]");
  } catch (const std::exception& e) {
    return error_object(std::string("RuntimeError: ") + e.what());
  }
}

// ---- Lines -----------------------------------------------------------------------------------------------------

std::string answer(const std::string& line, const MeshBatchLimits& limits) {
  const json doc = parse_line_object(line, limits.max_line_bytes, limits.max_depth);
  check_fields(doc, "", {"world", "mesh", "ops"}, " in the line");

  Context ctx{limits, std::nullopt, {}, 0};
  if (const json* w = find_field(doc, "world"); w != nullptr && !w->is_null()) ctx.world = get_int(*w, "world");
  const json* mesh = find_field(doc, "mesh");
  if (mesh == nullptr) value_error("missing field \"mesh\" in the line");
  const MeshInput input = parse_mesh(*mesh, "mesh");
  const json* ops = find_field(doc, "ops");
  if (ops != nullptr && !ops->is_array()) {
    value_error("ops = " + show(*ops) + ": expected a list of ops, got " + type_word(*ops));
  }
  ctx.saved.emplace("root", build(input, ctx.world));

  std::string out = "{\"ok\":true,\"results\":[";
  if (ops != nullptr) {
    for (std::size_t i = 0; i < ops->size(); ++i) {
      if (i > 0) out += ',';
      out += answer_op((*ops)[i], i, ctx);
    }
  }
  return out + "]}";
}

}  // namespace

std::string answer_mesh_line(const std::string& line) { return answer_mesh_line(line, MeshBatchLimits{}); }

std::string answer_mesh_line(const std::string& line, const MeshBatchLimits& limits) {
  return guarded_answer([&] { return answer(line, limits); });
}

int run_mesh_batch(std::istream& in, std::ostream& out) { return run_mesh_batch(in, out, MeshBatchLimits{}); }

int run_mesh_batch(std::istream& in, std::ostream& out, const MeshBatchLimits& limits) {
  return run_json_lines(in, out, limits.max_line_bytes,
                        [&limits](const std::string& line) { return answer_mesh_line(line, limits); });
}

}  // namespace meshloom::launcher
