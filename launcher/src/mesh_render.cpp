// `meshloom-launch mesh` for people (see mesh_render.hpp).
#include "mesh_render.hpp"

#include <algorithm>
#include <exception>
#include <new>
#include <ostream>
#include <sstream>

#include "mesh_batch.hpp"
#include "meshloom/error.hpp"
#include "meshloom/layout/layout.hpp"
#include "text_format.hpp"

namespace meshloom::launcher {
namespace {

// Meshes whose root holds more ranks than this are not drawn rank by rank.
constexpr std::int64_t kMaxDrawnRanks = 4096;
// Groups longer than this are shown abbreviated in --rank.
constexpr std::size_t kMaxListedGroup = 32;

[[noreturn]] void value_error(const std::string& message) { raise(ErrorKind::ValueError, message); }

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

std::string pad_left(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string pad_right(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string axis_label(const DeviceMesh& mesh, std::size_t i) {
  return mesh.names() ? (*mesh.names())[i] : "dim" + std::to_string(i);
}

std::size_t digits(std::int64_t v) { return std::to_string(v).size(); }

std::size_t max_width(const std::vector<std::int64_t>& values) {
  std::size_t w = 1;
  for (auto v : values) w = std::max(w, digits(v));
  return w;
}

std::string plural(std::int64_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string too_many(const DeviceMesh& mesh) {
  return "  (" + std::to_string(mesh.rank_map().size()) + " ranks: too many to draw; use --rank or --batch)\n";
}

}  // namespace

// ---- Pieces --------------------------------------------------------------------------------------------------

std::string render_header(const DeviceMesh& mesh) {
  return mesh.repr() + "  layout " + to_string(mesh.layout()) + "  world " + std::to_string(mesh.world()) + "\n";
}

std::string render_grid(const DeviceMesh& mesh) {
  if (mesh.rank_map().size() > kMaxDrawnRanks) return too_many(mesh);
  const RankTensor t = mesh.instances();
  const auto shape = mesh.shape();
  const std::size_t nd = shape.size();
  const std::int64_t instances = t.shape.front();
  const std::int64_t per_instance = mesh.size();
  const std::size_t value_width = max_width(t.values);
  std::string out;
  if (nd == 0) {
    for (std::int64_t k = 0; k < instances; ++k) {
      out += (instances > 1 ? "instance " + std::to_string(k) + ": " : "") + "rank " +
             std::to_string(t.values[static_cast<std::size_t>(k)]) + "\n";
    }
    return out;
  }
  // The last axis runs along the columns; the one before it (if any) along the rows; any others title blocks.
  const std::size_t col_axis = nd - 1;
  const std::int64_t cols = shape[col_axis];
  const std::int64_t rows = nd >= 2 ? shape[nd - 2] : 1;
  const std::int64_t blocks = per_instance / (rows * cols);
  std::vector<std::string> col_labels;
  std::size_t col_width = value_width;
  for (std::int64_t c = 0; c < cols; ++c) {
    col_labels.push_back(axis_label(mesh, col_axis) + "=" + std::to_string(c));
    col_width = std::max(col_width, col_labels.back().size());
  }
  std::vector<std::string> row_labels;
  std::size_t row_width = 0;
  if (nd >= 2) {
    for (std::int64_t r = 0; r < rows; ++r) {
      row_labels.push_back(axis_label(mesh, nd - 2) + "=" + std::to_string(r));
      row_width = std::max(row_width, row_labels.back().size());
    }
  }
  auto header_row = [&] {
    std::string line = std::string(row_width, ' ');
    for (std::int64_t c = 0; c < cols; ++c) {
      if (!line.empty()) line += "  ";
      line += pad_left(col_labels[static_cast<std::size_t>(c)], col_width);
    }
    return line + "\n";
  };
  bool first_block = true;
  for (std::int64_t k = 0; k < instances; ++k) {
    for (std::int64_t b = 0; b < blocks; ++b) {
      std::string title;
      if (instances > 1) title = "instance " + std::to_string(k);
      if (nd > 2) {
        // Outer coordinate of block b, row-major over the leading axes.
        std::vector<std::int64_t> outer(nd - 2, 0);
        std::int64_t rest = b;
        for (std::size_t j = nd - 2; j-- > 0;) {
          outer[j] = rest % shape[j];
          rest /= shape[j];
        }
        for (std::size_t j = 0; j < nd - 2; ++j) {
          if (!title.empty()) title += ", ";
          title += axis_label(mesh, j) + "=" + std::to_string(outer[j]);
        }
      }
      if (!first_block) out += "\n";
      first_block = false;
      if (!title.empty()) out += title + "\n";
      out += header_row();
      for (std::int64_t r = 0; r < rows; ++r) {
        std::string line = nd >= 2 ? pad_right(row_labels[static_cast<std::size_t>(r)], row_width) : "";
        for (std::int64_t c = 0; c < cols; ++c) {
          const auto pos = static_cast<std::size_t>(k * per_instance + (b * rows + r) * cols + c);
          if (!line.empty() || c > 0) line += "  ";
          line += pad_left(std::to_string(t.values[pos]), col_width);
        }
        out += line + "\n";
      }
    }
  }
  return out;
}

std::string render_instances(const std::string& title, const DeviceMesh& mesh) {
  const auto shape = mesh.shape();
  const std::int64_t n = mesh.rank_map().size();
  const std::int64_t count = mesh.size() > 0 ? n / mesh.size() : 0;
  std::string summary;
  if (shape.size() == 1) {
    summary = plural(count, "group") + " of " + std::to_string(shape[0]);
  } else {
    std::string dims;
    for (std::size_t i = 0; i < shape.size(); ++i) dims += (i > 0 ? "x" : "") + std::to_string(shape[i]);
    summary = plural(count, "instance") + (dims.empty() ? "" : " of " + dims);
  }
  std::string out = title + ": " + mesh.repr() + "  layout " + to_string(mesh.layout()) + "  " + summary + "\n";
  if (n > kMaxDrawnRanks) return out + too_many(mesh);
  const RankTensor t = mesh.instances();
  const std::int64_t instances = t.shape.front();
  const std::size_t width = max_width(t.values);
  const std::string word = shape.size() == 1 ? "group " : "instance ";
  const std::size_t index_width = digits(instances - 1);
  const auto per = static_cast<std::size_t>(mesh.size());
  for (std::int64_t k = 0; k < instances; ++k) {
    out += "  " + word + pad_left(std::to_string(k), index_width) + ": ";
    if (shape.size() == 1) {
      const auto begin = t.values.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(k) * per);
      out += join(std::vector<std::int64_t>(begin, begin + static_cast<std::ptrdiff_t>(per)), {.width = width});
    } else {
      std::size_t pos = static_cast<std::size_t>(k) * per;
      append_nested(out, shape, t.values, pos, ", ", width);
    }
    out += "\n";
  }
  return out;
}

std::string render_rank(const DeviceMesh& mesh, std::int64_t rank) {
  const auto coordinate = mesh.coordinate(rank);  // ValueError outside the world
  if (!coordinate) {
    return "rank " + std::to_string(rank) + ": not in this mesh (world " + std::to_string(mesh.world()) + ")\n";
  }
  std::string out = "rank " + std::to_string(rank) + ": coordinate (";
  for (std::size_t i = 0; i < coordinate->size(); ++i) {
    if (i > 0) out += ", ";
    out += axis_label(mesh, i) + "=" + std::to_string((*coordinate)[i]);
  }
  out += ")\n";
  struct Row {
    std::string axis, local, group;
  };
  std::vector<Row> rows;
  auto add = [&](const std::string& label, const AxisRef& axis) {
    const std::int64_t size = mesh.size(axis);
    const std::string local = std::to_string(mesh.local_rank(rank, axis));
    std::string group;
    if (size > kMaxDrawnRanks) {
      group = "(" + std::to_string(size) + " ranks)";
    } else {
      const auto g = mesh.group_of(rank, axis);
      if (g.size() > kMaxListedGroup) {
        std::vector<std::int64_t> head(g.begin(), g.begin() + 8);
        group = join(head) + " ... " + std::to_string(g.back()) + " (" + std::to_string(g.size()) + " ranks)";
      } else {
        group = join(g);
      }
    }
    rows.push_back({label, local, group});
  };
  for (std::size_t i = 0; i < mesh.ndim(); ++i) add(axis_label(mesh, i), static_cast<std::int64_t>(i));
  for (const auto& name : mesh.flattened_names()) {
    if (mesh.names() && std::find(mesh.names()->begin(), mesh.names()->end(), name) != mesh.names()->end()) continue;
    add(name, name);
  }
  std::size_t axis_width = 4;  // "axis"
  for (const auto& r : rows) axis_width = std::max(axis_width, r.axis.size());
  const std::size_t local_width = 10;  // "local rank"
  out += "  " + pad_right("axis", axis_width) + "  local rank  group\n";
  for (const auto& r : rows) {
    out += "  " + pad_right(r.axis, axis_width) + "  " + pad_left(r.local, local_width) + "  " + r.group + "\n";
  }
  return out;
}

// ---- The command ---------------------------------------------------------------------------------------------

std::string render_mesh_request(const MeshRequest& request) {
  if (request.shape && request.spec) value_error("give either --shape or --design, not both");
  if (!request.shape && !request.spec) value_error("give the mesh with --shape (and --names), or --design FILE");
  if (request.names && !request.shape) value_error("--names goes with --shape");
  std::optional<std::int64_t> world = request.spec_world;
  if (request.world) world = parse_int(*request.world, "--world");

  DeviceMesh mesh = [&] {
    if (request.spec) return build_mesh(*request.spec, world);
    std::optional<DeviceMesh::Names> names;
    if (request.names) names = parse_name_list(*request.names, "--names");
    return DeviceMesh::init(parse_int_list(*request.shape, "--shape"), names, world);
  }();

  for (const auto& text : request.unflatten) {
    // AXIS=SIZES:NAMES
    const auto eq = text.find('=');
    const auto colon = text.find(':', eq == std::string::npos ? 0 : eq);
    if (eq == std::string::npos || colon == std::string::npos) {
      value_error("--unflatten " + quoted(text) + ": expected AXIS=SIZES:NAMES, e.g. dp=2,2:dp_replicate,dp_shard");
    }
    const std::string axis_text = trim(text.substr(0, eq));
    if (axis_text.empty()) value_error("--unflatten " + quoted(text) + ": missing the axis before '='");
    AxisRef axis = axis_text;
    if (const auto index = to_int(axis_text)) axis = *index;
    const auto sizes = parse_int_list(text.substr(eq + 1, colon - eq - 1), "--unflatten " + quoted(text) + ": sizes");
    const auto names = parse_name_list(text.substr(colon + 1), "--unflatten " + quoted(text) + ": names");
    mesh = mesh.unflatten(axis, sizes, names);
  }
  for (const auto& text : request.flatten) {
    // AXES[:NAME]
    const auto colon = text.find(':');
    if (colon != std::string::npos && trim(text.substr(0, colon)).empty()) {
      value_error("--flatten " + quoted(text) + ": no axes before ':' (expected AXES[:NAME], e.g. dp,tp:dp_tp)");
    }
    const auto axes = parse_name_list(text.substr(0, colon), "--flatten");
    std::optional<std::string> name;
    if (colon != std::string::npos) {
      name = trim(text.substr(colon + 1));
      if (name->empty()) value_error("--flatten " + quoted(text) + ": empty name after ':'");
    }
    (void)mesh.slice(axes).flatten(name);
  }

  std::string out = render_header(mesh) + "\n" + render_grid(mesh);
  for (const auto& name : mesh.flattened_names()) {
    out += "\n" + render_instances("flatten " + name, *mesh.flattened(name));
  }
  for (const auto& text : request.slice) {
    const auto names = parse_name_list(text, "--slice");
    std::string title = "slice ";
    for (std::size_t i = 0; i < names.size(); ++i) title += (i > 0 ? "," : "") + names[i];
    out += "\n" + render_instances(title, mesh.slice(names));
  }
  if (request.rank) out += "\n" + render_rank(mesh, parse_int(*request.rank, "--rank"));
  return out;
}

int run_mesh_request(const MeshRequest& request, std::ostream& out, std::ostream& err) {
  try {
    const std::string text = render_mesh_request(request);
    out << text << std::flush;
    return out ? 0 : 1;
  } catch (const Error& e) {
    err << "error: " << e.text() << "\n";
  } catch (const std::bad_alloc&) {
    err << "error: RuntimeError: out of memory\n";
  } catch (const std::exception& e) {
    err << "error: RuntimeError: " << e.what() << "\n";
  }
  return 2;
}

}  // namespace meshloom::launcher
