#include "meshloom/design/design.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <utility>

#include "json_read.hpp"
#include "meshloom/error.hpp"
#include "validate.hpp"
#include "meshloom/io/atomic_file.hpp"

namespace meshloom {

namespace {

using detail::bad;
using detail::bad_value;
using detail::field;
using detail::get_array;
using detail::get_int;
using detail::get_ints;
using detail::get_string;
using detail::get_strings;
using detail::ints_inline;
using detail::item;
using detail::join;
using detail::json;
using detail::render;
using detail::render_ints;
using detail::render_strings;
using detail::render_text;
using detail::str;
using detail::strings_inline;
using detail::type_word;

// The document's noun in messages ("a design is a JSON object", "a design has ...").
constexpr std::string_view kNoun = "a design";


void expect_object(const json& value, const std::string& path) { detail::expect_object(value, path, kNoun); }

// Rejects keys outside `known`, then requires `required`.
void check_fields(const json& object, const std::string& path, std::initializer_list<std::string_view> known,
                  std::initializer_list<std::string_view> required) {
  detail::check_fields(object, path, kNoun, known, required);
}

State get_state(const json& value, const std::string& path) {
  const std::string text = get_string(value, path);
  std::string why;
  std::optional<State> state = try_parse_state(text, &why);
  if (!state) bad_value(path, render_text(text), why);
  return std::move(*state);
}

bool get_bool(const json& value, const std::string& path) {
  if (!value.is_boolean()) bad_value(path, render(value), "expected a boolean, got " + type_word(value));
  return value.get<bool>();
}

DType get_dtype(const json& value, const std::string& path) {
  const std::string dtype = get_string(value, path);
  const std::optional<DType> parsed = dtype_from_string(dtype);
  if (!parsed) {
    std::vector<std::string> names;
    for (const auto name : dtype_names()) names.emplace_back(name);
    bad_value(path, render_text(dtype), "unknown dtype; expected one of " + join(names));
  }
  return *parsed;
}

MeshSpec mesh_from_json(const json& value) {
  const std::string path = "mesh";
  expect_object(value, path);
  check_fields(value, path, {"shape", "names", "flattened"}, {"shape", "names"});
  MeshSpec mesh;
  mesh.shape = get_ints(value.at("shape"), "mesh.shape", kMaxDesignAxes, "axes");
  mesh.names = get_strings(value.at("names"), "mesh.names", kMaxDesignAxes, "names");
  if (value.contains("flattened")) {
    const auto& array = get_array(value.at("flattened"), "mesh.flattened", kMaxDesignFlattened, "flattened axes");
    mesh.flattened.reserve(array.size());
    for (std::size_t i = 0; i < array.size(); ++i) {
      const std::string at = item("mesh.flattened", i);
      expect_object(array[i], at);
      check_fields(array[i], at, {"name", "axes"}, {"name", "axes"});
      FlattenSpec spec;
      spec.name = get_string(array[i].at("name"), field(at, "name"));
      spec.axes = get_strings(array[i].at("axes"), field(at, "axes"), kMaxDesignAxes, "axes");
      mesh.flattened.push_back(std::move(spec));
    }
  }
  return mesh;
}

DesignTensor tensor_from_json(const json& value, const std::string& path) {
  expect_object(value, path);
  check_fields(value, path, {"name", "shape", "dtype", "src", "dst"}, {"name", "shape", "dtype", "src", "dst"});
  DesignTensor tensor;
  tensor.name = get_string(value.at("name"), field(path, "name"));
  tensor.shape = get_ints(value.at("shape"), field(path, "shape"), kMaxDesignTensorRank, "dims");
  tensor.dtype = get_dtype(value.at("dtype"), field(path, "dtype"));
  tensor.src = get_state(value.at("src"), field(path, "src"));
  tensor.dst = get_state(value.at("dst"), field(path, "dst"));
  return tensor;
}

// "workload.model.axes": every key optional ([] or "": the role is not used).
ModelAxes axes_from_json(const json& value, const std::string& path) {
  expect_object(value, path);
  check_fields(value, path, {"fsdp", "replicate", "tp", "cp", "ep", "pp"}, {});
  ModelAxes axes;
  if (value.contains("fsdp")) axes.fsdp = get_strings(value.at("fsdp"), field(path, "fsdp"), kMaxRoleAxes, "axes");
  if (value.contains("replicate")) {
    axes.replicate = get_strings(value.at("replicate"), field(path, "replicate"), kMaxRoleAxes, "axes");
  }
  for (const auto& [key, out] : {std::pair<std::string_view, std::string*>{"tp", &axes.tp}, {"cp", &axes.cp},
                                 {"ep", &axes.ep}, {"pp", &axes.pp}}) {
    if (value.contains(key)) *out = get_string(value.at(key), field(path, key));
  }
  return axes;
}

ModelSpec model_from_json(const json& value, const std::string& path) {
  expect_object(value, path);
  check_fields(value, path,
               {"layers", "hidden", "ffn", "heads", "kv_heads", "vocab", "seq_len", "micro_batch", "micro_batches", "dtype",
                "grad_dtype", "experts", "top_k", "sequence_parallel", "axes"},
               {"layers", "hidden", "ffn", "heads", "kv_heads", "vocab", "seq_len"});
  ModelSpec model;
  for (const auto& [key, out] : {std::pair<std::string_view, std::int64_t*>{"layers", &model.layers},
                                 {"hidden", &model.hidden}, {"ffn", &model.ffn}, {"heads", &model.heads},
                                 {"kv_heads", &model.kv_heads}, {"vocab", &model.vocab}, {"seq_len", &model.seq_len},
                                 {"micro_batch", &model.micro_batch}, {"micro_batches", &model.micro_batches},
                                 {"experts", &model.experts}, {"top_k", &model.top_k}}) {
    if (value.contains(key)) *out = get_int(value.at(key), field(path, key));
  }
  if (value.contains("dtype")) model.dtype = get_dtype(value.at("dtype"), field(path, "dtype"));
  if (value.contains("grad_dtype")) model.grad_dtype = get_dtype(value.at("grad_dtype"), field(path, "grad_dtype"));
  if (value.contains("sequence_parallel")) {
    model.sequence_parallel = get_bool(value.at("sequence_parallel"), field(path, "sequence_parallel"));
  }
  if (value.contains("axes")) model.axes = axes_from_json(value.at("axes"), field(path, "axes"));
  return model;
}

Workload workload_from_json(const json& value) {
  const std::string path = "workload";
  expect_object(value, path);
  check_fields(value, path, {"tensors", "model"}, {});
  Workload workload;
  if (value.contains("tensors")) {
    const auto& array = get_array(value.at("tensors"), field(path, "tensors"), kMaxWorkloadTensors, "tensors");
    workload.tensors.reserve(array.size());
    for (std::size_t i = 0; i < array.size(); ++i) {
      const std::string at = item(field(path, "tensors"), i);
      expect_object(array[i], at);
      check_fields(array[i], at, {"tensor", "count"}, {"tensor"});
      WorkloadTensor entry;
      entry.tensor = get_string(array[i].at("tensor"), field(at, "tensor"));
      if (array[i].contains("count")) entry.count = get_int(array[i].at("count"), field(at, "count"));
      workload.tensors.push_back(std::move(entry));
    }
  }
  if (value.contains("model")) workload.model = model_from_json(value.at("model"), field(path, "model"));
  return workload;
}

Design design_from_json(const json& root) {
  expect_object(root, "");
  if (!root.contains("format")) bad("format", "required field is missing; a design starts with \"format\": \"meshloom-design\"");
  if (!root.at("format").is_string() || root.at("format").get_ref<const std::string&>() != kDesignFormat) {
    bad_value("format", render(root.at("format")), "not a meshloom design; expected \"meshloom-design\"");
  }
  if (!root.contains("version")) bad("version", "required field is missing");
  const std::int64_t version = get_int(root.at("version"), "version");
  if (version != kDesignVersionWithoutWorkload && version != kDesignVersion) {
    bad_value("version", std::to_string(version),
              "unsupported version; this build reads versions " + std::to_string(kDesignVersionWithoutWorkload) +
                  " and " + std::to_string(kDesignVersion));
  }
  check_fields(root, "",
               {"format", "version", "name", "description", "world", "devices_per_host", "mesh", "tensors", "workload",
                "calibration"},
               {"name", "world", "devices_per_host", "mesh", "tensors"});
  if (version == kDesignVersionWithoutWorkload && root.contains("workload")) {
    bad("workload", "a version 1 design has no workload; a design with a workload is version 2 (\"version\": 2)");
  }
  Design design;
  design.name = get_string(root.at("name"), "name");
  if (root.contains("description")) design.description = get_string(root.at("description"), "description");
  design.world = get_int(root.at("world"), "world");
  design.devices_per_host = get_int(root.at("devices_per_host"), "devices_per_host");
  design.mesh = mesh_from_json(root.at("mesh"));
  const auto& tensors = get_array(root.at("tensors"), "tensors", kMaxDesignTensors, "tensors");
  design.tensors.reserve(tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i) design.tensors.push_back(tensor_from_json(tensors[i], item("tensors", i)));
  if (root.contains("workload")) design.workload = workload_from_json(root.at("workload"));
  if (root.contains("calibration")) design.calibration = get_string(root.at("calibration"), "calibration");
  return design;
}

// ---- validation --------------------------------------------------------------------------------------

// Axis names are identifiers; tensor names may also hold dots, as module paths do (layers.0.attention.wq).
void check_name(const std::string& name, const std::string& path, bool dots = false) {
  detail::check_name(name, path, dots ? kMaxTensorNameChars : kMaxDesignNameChars, dots);
}

void check_text(const std::string& text, const std::string& path, std::size_t min, std::size_t max, bool single_line) {
  detail::check_text(text, path, min, max, single_line);
}

void validate_mesh(const Design& design) {
  const MeshSpec& mesh = design.mesh;
  if (mesh.shape.empty()) bad_value("mesh.shape", "[]", "a mesh needs at least one axis");
  if (mesh.shape.size() > kMaxDesignAxes) {
    bad_value("mesh.shape", render_ints(mesh.shape), "at most " + std::to_string(kMaxDesignAxes) + " axes");
  }
  for (std::size_t i = 0; i < mesh.shape.size(); ++i) {
    if (mesh.shape[i] < 1) bad_value(item("mesh.shape", i), std::to_string(mesh.shape[i]), "axis sizes must be >= 1");
  }
  if (mesh.names.size() != mesh.shape.size()) {
    bad_value("mesh.names", render_strings(mesh.names),
              std::to_string(mesh.names.size()) + " names for the " + std::to_string(mesh.shape.size()) +
                  " axes of mesh.shape = " + render_ints(mesh.shape));
  }
  for (std::size_t i = 0; i < mesh.names.size(); ++i) {
    check_name(mesh.names[i], item("mesh.names", i));
    for (std::size_t j = 0; j < i; ++j) {
      if (mesh.names[j] == mesh.names[i]) {
        bad_value(item("mesh.names", i), render_text(mesh.names[i]), "duplicate axis name (also " + item("mesh.names", j) + ")");
      }
    }
  }
  std::int64_t ranks = 1;
  for (std::int64_t size : mesh.shape) {
    if (__builtin_mul_overflow(ranks, size, &ranks)) {
      bad_value("mesh.shape", render_ints(mesh.shape),
                "world = " + std::to_string(design.world) + " but the mesh holds more than 2^63-1 ranks");
    }
  }
  if (ranks > design.world) {
    bad_value("mesh.shape", render_ints(mesh.shape),
              "world = " + std::to_string(design.world) + " but the mesh holds " + std::to_string(ranks) + " ranks");
  }

  if (mesh.flattened.size() > kMaxDesignFlattened) {
    bad("mesh.flattened", std::to_string(mesh.flattened.size()) + " flattened axes; at most " +
                              std::to_string(kMaxDesignFlattened));
  }
  for (std::size_t f = 0; f < mesh.flattened.size(); ++f) {
    const FlattenSpec& spec = mesh.flattened[f];
    const std::string at = item("mesh.flattened", f);
    check_name(spec.name, field(at, "name"));
    for (std::size_t i = 0; i < mesh.names.size(); ++i) {
      if (mesh.names[i] == spec.name) {
        bad_value(field(at, "name"), render_text(spec.name), "collides with the axis name " + item("mesh.names", i));
      }
    }
    for (std::size_t g = 0; g < f; ++g) {
      if (mesh.flattened[g].name == spec.name) {
        bad_value(field(at, "name"), render_text(spec.name),
                  "duplicate flattened axis name (also " + item("mesh.flattened", g) + ")");
      }
    }
    const std::string axes_path = field(at, "axes");
    if (spec.axes.empty()) bad_value(axes_path, "[]", "a flattened axis needs at least one mesh axis");
    if (spec.axes.size() > kMaxDesignAxes) {
      bad_value(axes_path, render_strings(spec.axes), "at most " + std::to_string(kMaxDesignAxes) + " axes");
    }
    std::size_t previous = 0;
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
      const auto it = std::find(mesh.names.begin(), mesh.names.end(), spec.axes[a]);
      if (it == mesh.names.end()) {
        bad_value(item(axes_path, a), render_text(spec.axes[a]), "not an axis of the mesh (axes: " + join(mesh.names) + ")");
      }
      for (std::size_t b = 0; b < a; ++b) {
        if (spec.axes[b] == spec.axes[a]) {
          bad_value(item(axes_path, a), render_text(spec.axes[a]), "axis listed twice (also " + item(axes_path, b) + ")");
        }
      }
      const auto index = static_cast<std::size_t>(it - mesh.names.begin());
      if (a > 0 && index < previous) {
        bad_value(axes_path, render_strings(spec.axes), "axes must be listed in mesh order (outer to inner: " +
                                                            join(mesh.names) + ")");
      }
      previous = index;
    }
  }
}

void validate_tensor(const DesignTensor& tensor, const std::string& path, const Design& design,
                     const std::vector<DesignTensor>& all, std::size_t index) {
  check_name(tensor.name, field(path, "name"), true);
  for (std::size_t j = 0; j < index; ++j) {
    if (all[j].name == tensor.name) {
      bad_value(field(path, "name"), render_text(tensor.name), "duplicate tensor name (also " + item("tensors", j) + ")");
    }
  }
  const std::string shape_path = field(path, "shape");
  if (tensor.shape.size() > kMaxDesignTensorRank) {
    bad_value(shape_path, render_ints(tensor.shape), "at most " + std::to_string(kMaxDesignTensorRank) + " dims");
  }
  for (std::size_t i = 0; i < tensor.shape.size(); ++i) {
    if (tensor.shape[i] < 1) bad_value(item(shape_path, i), std::to_string(tensor.shape[i]), "dim sizes must be >= 1");
  }
  if (dtype_from_string(to_string(tensor.dtype)) != tensor.dtype) {
    bad_value(field(path, "dtype"), std::to_string(static_cast<int>(tensor.dtype)), "unknown dtype");
  }
  std::int64_t bytes = itemsize(tensor.dtype);
  for (std::int64_t size : tensor.shape) {
    if (__builtin_mul_overflow(bytes, size, &bytes)) {
      bad_value(shape_path, render_ints(tensor.shape),
                "the tensor holds more than 2^63-1 bytes of " + std::string(to_string(tensor.dtype)));
    }
  }
  const auto rank = static_cast<std::int64_t>(tensor.shape.size());
  for (const auto& [key, state] : {std::pair<std::string_view, const State*>{"src", &tensor.src}, {"dst", &tensor.dst}}) {
    if (auto why = state_misfit(*state, design.mesh.shape.size(), rank)) {
      bad_value(field(path, key), render_text(to_string(*state)), *why);
    }
  }
}

// The canonical "workload" member, indented as a top-level field, without a trailing comma or newline.
std::string workload_text(const Workload& workload) {
  std::string out = "  \"workload\": {\n";
  if (workload.tensors.empty()) {
    out += "    \"tensors\": []";
  } else {
    out += "    \"tensors\": [\n";
    for (std::size_t i = 0; i < workload.tensors.size(); ++i) {
      const WorkloadTensor& t = workload.tensors[i];
      out += "      {\"tensor\": " + str(t.tensor) + ", \"count\": " + std::to_string(t.count) + "}";
      out += i + 1 < workload.tensors.size() ? ",\n" : "\n";
    }
    out += "    ]";
  }
  if (workload.model) {
    const ModelSpec& m = *workload.model;
    out += ",\n    \"model\": {\n";
    for (const auto& [key, value] : {std::pair<std::string_view, std::int64_t>{"layers", m.layers}, {"hidden", m.hidden},
                                     {"ffn", m.ffn}, {"heads", m.heads}, {"kv_heads", m.kv_heads}, {"vocab", m.vocab},
                                     {"seq_len", m.seq_len}, {"micro_batch", m.micro_batch},
                                     {"micro_batches", m.micro_batches}}) {
      out += "      " + str(key) + ": " + std::to_string(value) + ",\n";
    }
    out += "      \"dtype\": " + str(to_string(m.dtype)) + ",\n";
    out += "      \"grad_dtype\": " + str(to_string(m.grad_dtype)) + ",\n";
    out += "      \"experts\": " + std::to_string(m.experts) + ",\n";
    out += "      \"top_k\": " + std::to_string(m.top_k) + ",\n";
    out += "      \"sequence_parallel\": " + std::string(m.sequence_parallel ? "true" : "false") + ",\n";
    const ModelAxes& a = m.axes;
    out += "      \"axes\": {\"fsdp\": " + strings_inline(a.fsdp) + ", \"replicate\": " + strings_inline(a.replicate) +
           ", \"tp\": " + str(a.tp) + ", \"cp\": " + str(a.cp) + ", \"ep\": " + str(a.ep) + ", \"pp\": " + str(a.pp) +
           "}\n";
    out += "    }";
  }
  out += "\n  }";
  return out;
}

}  // namespace

namespace {

// Every rule, in the order of the fields; the workload's when `workload` is set.
void validate_parts(const Design& design, bool workload) {
  check_text(design.name, "name", 1, kMaxDesignTitleBytes, true);
  if (design.description) check_text(*design.description, "description", 0, kMaxDesignDescriptionBytes, false);
  if (design.world < 1 || design.world > kMaxDesignWorld) {
    bad_value("world", std::to_string(design.world), "must be in 1.." + std::to_string(kMaxDesignWorld));
  }
  if (design.devices_per_host < 1) {
    bad_value("devices_per_host", std::to_string(design.devices_per_host), "must be >= 1");
  }
  if (design.world % design.devices_per_host != 0) {
    bad_value("devices_per_host", std::to_string(design.devices_per_host),
              "does not divide world = " + std::to_string(design.world));
  }
  validate_mesh(design);
  if (design.tensors.size() > kMaxDesignTensors) {
    bad("tensors", std::to_string(design.tensors.size()) + " tensors; at most " + std::to_string(kMaxDesignTensors));
  }
  for (std::size_t i = 0; i < design.tensors.size(); ++i) {
    validate_tensor(design.tensors[i], item("tensors", i), design, design.tensors, i);
  }
  if (workload && design.workload) validate_workload(*design.workload, design);
  if (design.calibration) check_text(*design.calibration, "calibration", 1, kMaxDesignPathBytes, true);
}

}  // namespace

void detail::validate_design_without_workload(const Design& design) { validate_parts(design, false); }

void validate_design(const Design& design) { validate_parts(design, true); }

Design parse_design(std::string_view text) {
  if (text.size() > kMaxDesignFileBytes) {
    raise(ErrorKind::ValueError, "the design is " + std::to_string(text.size()) + " bytes; at most " +
                                     std::to_string(kMaxDesignFileBytes) + " (16 MiB)");
  }
  const json root = detail::parse_json(text, kMaxDesignJsonDepth);
  Design design = design_from_json(root);
  validate_design(design);
  return design;
}

Design load_design(const std::filesystem::path& path) {
  const std::string text = detail::read_file(path, "design", kMaxDesignFileBytes);
  return detail::with_path(path, [&text] { return parse_design(text); });
}

std::string to_json_text(const Design& design) {
  validate_design(design);
  std::string out = "{\n";
  out += "  \"format\": " + str(kDesignFormat) + ",\n";
  const std::int64_t version = design.workload ? kDesignVersion : kDesignVersionWithoutWorkload;
  out += "  \"version\": " + std::to_string(version) + ",\n";
  out += "  \"name\": " + str(design.name) + ",\n";
  if (design.description) out += "  \"description\": " + str(*design.description) + ",\n";
  out += "  \"world\": " + std::to_string(design.world) + ",\n";
  out += "  \"devices_per_host\": " + std::to_string(design.devices_per_host) + ",\n";
  out += "  \"mesh\": {\n";
  out += "    \"shape\": " + ints_inline(design.mesh.shape) + ",\n";
  out += "    \"names\": " + strings_inline(design.mesh.names) + ",\n";
  if (design.mesh.flattened.empty()) {
    out += "    \"flattened\": []\n";
  } else {
    out += "    \"flattened\": [\n";
    for (std::size_t i = 0; i < design.mesh.flattened.size(); ++i) {
      const FlattenSpec& spec = design.mesh.flattened[i];
      out += "      {\"name\": " + str(spec.name) + ", \"axes\": " + strings_inline(spec.axes) + "}";
      out += i + 1 < design.mesh.flattened.size() ? ",\n" : "\n";
    }
    out += "    ]\n";
  }
  out += "  },\n";
  if (design.tensors.empty()) {
    out += "  \"tensors\": []";
  } else {
    out += "  \"tensors\": [\n";
    for (std::size_t i = 0; i < design.tensors.size(); ++i) {
      const DesignTensor& t = design.tensors[i];
      out += "    {\"name\": " + str(t.name) + ", \"shape\": " + ints_inline(t.shape) + ", \"dtype\": " +
             str(to_string(t.dtype)) + ", \"src\": " + str(to_string(t.src)) + ", \"dst\": " + str(to_string(t.dst)) + "}";
      out += i + 1 < design.tensors.size() ? ",\n" : "\n";
    }
    out += "  ]";
  }
  if (design.workload) out += ",\n" + workload_text(*design.workload);
  if (design.calibration) out += ",\n  \"calibration\": " + str(*design.calibration);
  out += "\n}\n";
  return out;
}

void save_design(const Design& design, const std::filesystem::path& path) {
  write_file_atomically(path, to_json_text(design), "cannot save design to");
}

std::optional<std::filesystem::path> calibration_path(const Design& design, const std::filesystem::path& design_file) {
  if (!design.calibration) return std::nullopt;
  const std::filesystem::path calibration(*design.calibration);
  if (calibration.is_absolute()) return calibration;
  return design_file.parent_path() / calibration;
}

}  // namespace meshloom
