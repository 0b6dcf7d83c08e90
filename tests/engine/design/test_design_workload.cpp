// Design files with a workload (format version 2): parsing, defaults, the canonical text byte for byte, version 1
// files kept as they are, every validation rule of the workload with its message, and the mesh edits carrying the
// model's role axes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "meshloom/design/design.hpp"
#include "meshloom/design/edit.hpp"
#include "meshloom/error.hpp"
#include "meshloom/workload/workload.hpp"

namespace meshloom {
namespace {

using json = nlohmann::json;

// A canonical version 2 design: mesh (dp 2, tp 4), two tensors, a workload of one tensor and a small model.
constexpr std::string_view kCanonical = R"json({
  "format": "meshloom-design",
  "version": 2,
  "name": "with workload",
  "world": 8,
  "devices_per_host": 4,
  "mesh": {
    "shape": [2, 4],
    "names": ["dp", "tp"],
    "flattened": [
      {"name": "dp_tp", "axes": ["dp", "tp"]}
    ]
  },
  "tensors": [
    {"name": "w", "shape": [64, 32], "dtype": "float32", "src": "S(0)R", "dst": "RR"},
    {"name": "g", "shape": [64], "dtype": "bfloat16", "src": "P(sum)P(sum)", "dst": "S(0)[1]S(0)[0]"}
  ],
  "workload": {
    "tensors": [
      {"tensor": "w", "count": 2},
      {"tensor": "g", "count": 1}
    ],
    "model": {
      "layers": 4,
      "hidden": 256,
      "ffn": 512,
      "heads": 8,
      "kv_heads": 2,
      "vocab": 1000,
      "seq_len": 128,
      "micro_batch": 2,
      "micro_batches": 4,
      "dtype": "bfloat16",
      "grad_dtype": "float32",
      "experts": 0,
      "top_k": 0,
      "sequence_parallel": true,
      "axes": {"fsdp": ["dp"], "replicate": [], "tp": "tp", "cp": "", "ep": "", "pp": ""}
    }
  },
  "calibration": "calibration/local.json"
}
)json";

json base() { return json::parse(kCanonical); }

std::string error_of(std::string_view text) {
  try {
    (void)parse_design(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ValueError) << e.what();
    return e.what();
  }
  return "";
}

// The whole message: "ValueError: " + expected.
void expect_error(const json& j, const std::string& expected) {
  EXPECT_EQ(error_of(j.dump()), "ValueError: " + expected) << j.dump();
}

// The message starts with "ValueError: " + start.
void expect_error_start(const json& j, const std::string& start) {
  const std::string message = error_of(j.dump());
  EXPECT_EQ(message.substr(0, 12 + start.size()), "ValueError: " + start) << message;
}

json with(const std::string& pointer, const json& value) {
  json j = base();
  j[json::json_pointer(pointer)] = value;
  return j;
}

json without(const std::string& pointer) {
  json j = base();
  const json::json_pointer p(pointer);
  j[p.parent_pointer()].erase(p.back());
  return j;
}

TEST(DesignWorkload, ParsesEveryField) {
  const Design d = parse_design(kCanonical);
  ASSERT_TRUE(d.workload.has_value());
  EXPECT_EQ(d.workload->tensors, (std::vector<WorkloadTensor>{{"w", 2}, {"g", 1}}));
  ASSERT_TRUE(d.workload->model.has_value());
  const ModelSpec& m = *d.workload->model;
  EXPECT_EQ((std::vector<std::int64_t>{m.layers, m.hidden, m.ffn, m.heads, m.kv_heads, m.vocab, m.seq_len, m.micro_batch,
                                       m.micro_batches, m.experts, m.top_k}),
            (std::vector<std::int64_t>{4, 256, 512, 8, 2, 1000, 128, 2, 4, 0, 0}));
  EXPECT_EQ(m.dtype, DType::BFloat16);
  EXPECT_EQ(m.grad_dtype, DType::Float32);
  EXPECT_TRUE(m.sequence_parallel);
  EXPECT_EQ(m.axes, (ModelAxes{{"dp"}, {}, "tp", "", "", ""}));
  EXPECT_EQ(d.calibration, "calibration/local.json");
}

TEST(DesignWorkload, CanonicalVersion2RoundTripsByteForByte) {
  const Design d = parse_design(kCanonical);
  EXPECT_EQ(to_json_text(d), kCanonical);
  EXPECT_EQ(parse_design(to_json_text(d)), d);
  // Without calibration and model, with an empty tensor list.
  Design e = d;
  e.calibration.reset();
  e.workload->model.reset();
  e.workload->tensors.clear();
  const std::string text = to_json_text(e);
  EXPECT_NE(text.find("  ],\n  \"workload\": {\n    \"tensors\": []\n  }\n}\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\"version\": 2,"), std::string::npos);
  EXPECT_EQ(to_json_text(parse_design(text)), text);
  // A model without tensors.
  Design f = d;
  f.workload->tensors.clear();
  const std::string model_only = to_json_text(f);
  EXPECT_NE(model_only.find("    \"tensors\": [],\n    \"model\": {\n      \"layers\": 4,\n"), std::string::npos) << model_only;
  EXPECT_EQ(to_json_text(parse_design(model_only)), model_only);
}

TEST(DesignWorkload, WithoutAWorkloadTheFileStaysVersion1) {
  Design d = parse_design(kCanonical);
  d.workload.reset();
  const std::string text = to_json_text(d);
  EXPECT_NE(text.find("\"version\": 1,"), std::string::npos);
  EXPECT_EQ(text.find("\"workload\""), std::string::npos);
  EXPECT_EQ(parse_design(text), d);
  // A version 2 file without a workload loads too, and is written as version 1.
  json v2 = without("/workload");
  EXPECT_EQ(parse_design(v2.dump()), d);
  EXPECT_EQ(to_json_text(parse_design(v2.dump())), text);
  // A version 1 file cannot hold a workload.
  expect_error(with("/version", 1),
               "workload: a version 1 design has no workload; a design with a workload is version 2 (\"version\": 2)");
}

TEST(DesignWorkload, OptionalFieldsTakeTheirDefaults) {
  json j = base();
  j["workload"].erase("tensors");
  for (const char* key : {"micro_batch", "micro_batches", "dtype", "grad_dtype", "experts", "top_k", "sequence_parallel"}) {
    j["workload"]["model"].erase(key);
  }
  j["workload"]["model"]["axes"] = {{"tp", "tp"}};
  const Design d = parse_design(j.dump());
  EXPECT_TRUE(d.workload->tensors.empty());
  const ModelSpec& m = *d.workload->model;
  EXPECT_EQ(m.micro_batch, 1);
  EXPECT_EQ(m.micro_batches, 1);
  EXPECT_EQ(m.dtype, DType::BFloat16);
  EXPECT_EQ(m.grad_dtype, DType::Float32);
  EXPECT_EQ(m.experts, 0);
  EXPECT_EQ(m.top_k, 0);
  EXPECT_FALSE(m.sequence_parallel);
  EXPECT_EQ(m.axes, (ModelAxes{{}, {}, "tp", "", "", ""}));
  j["workload"]["model"].erase("axes");
  EXPECT_EQ(parse_design(j.dump()).workload->model->axes, ModelAxes{});
  // A count defaults to 1; the canonical text writes every field.
  json k = base();
  k["workload"]["tensors"][0].erase("count");
  const Design e = parse_design(k.dump());
  EXPECT_EQ(e.workload->tensors[0].count, 1);
  EXPECT_NE(to_json_text(e).find(R"({"tensor": "w", "count": 1})"), std::string::npos);
  // An empty workload is valid.
  EXPECT_EQ(parse_design(with("/workload", json::object()).dump()).workload, Workload{});
}

TEST(DesignWorkloadErrors, JsonShape) {
  expect_error(with("/workload", json::array()), "workload = []: expected an object, got an array");
  expect_error(with("/workload/colour", 1), "workload.colour: unknown field; workload has tensors, model");
  expect_error(with("/workload/tensors", json::object()), "workload.tensors = {}: expected an array, got an object");
  expect_error(with("/workload/tensors/0/name", "w"),
               "workload.tensors[0].name: unknown field; workload.tensors[0] has tensor, count");
  expect_error(without("/workload/tensors/1/tensor"), "workload.tensors[1].tensor: required field is missing");
  expect_error(with("/workload/tensors/0/count", "2"), "workload.tensors[0].count = \"2\": expected an integer, got a string");
  expect_error(with("/workload/tensors/0/count", 2.0), "workload.tensors[0].count = 2.0: expected an integer, got a non-integer number");
  expect_error(with("/workload/model", 5), "workload.model = 5: expected an object, got an integer");
  expect_error(with("/workload/model/dropout", 0),
               "workload.model.dropout: unknown field; workload.model has layers, hidden, ffn, heads, kv_heads, vocab, "
               "seq_len, micro_batch, micro_batches, dtype, grad_dtype, experts, top_k, sequence_parallel, axes");
  for (const char* key : {"layers", "hidden", "ffn", "heads", "kv_heads", "vocab", "seq_len"}) {
    expect_error(without(std::string("/workload/model/") + key),
                 std::string("workload.model.") + key + ": required field is missing");
  }
  expect_error(with("/workload/model/layers", true), "workload.model.layers = true: expected an integer, got a boolean");
  expect_error(with("/workload/model/sequence_parallel", 1),
               "workload.model.sequence_parallel = 1: expected a boolean, got an integer");
  expect_error(with("/workload/model/dtype", "fp8"),
               "workload.model.dtype = \"fp8\": unknown dtype; expected one of float32, float16, bfloat16, float64, "
               "int32, int64, int8, uint8, float8_e4m3, float8_e5m2");
  expect_error(with("/workload/model/grad_dtype", 4), "workload.model.grad_dtype = 4: expected a string, got an integer");
  expect_error(with("/workload/model/axes", "dp"), "workload.model.axes = \"dp\": expected an object, got a string");
  expect_error(with("/workload/model/axes/dp", "dp"),
               "workload.model.axes.dp: unknown field; workload.model.axes has fsdp, replicate, tp, cp, ep, pp");
  expect_error(with("/workload/model/axes/fsdp", "dp"), "workload.model.axes.fsdp = \"dp\": expected an array, got a string");
  expect_error(with("/workload/model/axes/tp", json::array({"tp"})),
               "workload.model.axes.tp = [\"tp\"]: expected a string, got an array");
  expect_error(with("/workload/model/axes/fsdp", std::vector<std::string>(65, "dp")),
               "workload.model.axes.fsdp = [\"dp\",\"dp\",\"dp\",\"dp\",\"dp\",\"dp\",\"dp\",\"dp\",\"dp\",\"dp\",\"dp\",\"dp\",\"dp\",\"dp\",\"dp\",\"dp\""
               "...: 65 axes; at most 64");
}

TEST(DesignWorkloadErrors, Tensors) {
  expect_error(with("/workload/tensors/0/tensor", "wq"),
               "workload.tensors[0].tensor = \"wq\": no design tensor has that name (tensors: w, g)");
  json none = with("/workload/tensors/0/tensor", "wq");
  none["tensors"] = json::array();
  none["workload"]["tensors"].erase(1);
  expect_error(none, "workload.tensors[0].tensor = \"wq\": no design tensor has that name (the design has no tensors)");
  expect_error(with("/workload/tensors/1/tensor", "w"),
               "workload.tensors[1].tensor = \"w\": listed twice (also workload.tensors[0]); one entry per tensor, with a "
               "count");
  json many_names = base();
  for (int i = 0; i < 20; ++i) {
    many_names["tensors"].push_back({{"name", "t" + std::to_string(i)}, {"shape", {8}}, {"dtype", "int8"}, {"src", "RR"}, {"dst", "RR"}});
  }
  many_names["workload"]["tensors"][0]["tensor"] = "x";
  expect_error(many_names,
               "workload.tensors[0].tensor = \"x\": no design tensor has that name (tensors: w, g, t0, t1, t2, t3, t4, t5, t6, "
               "t7, t8, t9, t10, t11, t12, t13, ... (22 tensors))");
  expect_error(with("/workload/tensors/0/count", 0), "workload.tensors[0].count = 0: must be in 1..2147483647");
  expect_error(with("/workload/tensors/1/count", -3), "workload.tensors[1].count = -3: must be in 1..2147483647");
  expect_error(with("/workload/tensors/0/count", 2147483648LL), "workload.tensors[0].count = 2147483648: must be in 1..2147483647");
  json many = base();
  many["workload"]["tensors"] = json::array();
  for (int i = 0; i < 1025; ++i) many["workload"]["tensors"].push_back({{"tensor", "w"}});
  EXPECT_NE(error_of(many.dump()).find("workload.tensors = [{\"tensor\":\"w\"}"), std::string::npos);
  EXPECT_NE(error_of(many.dump()).find("1025 tensors; at most 1024"), std::string::npos);
}

TEST(DesignWorkloadErrors, ModelSizes) {
  for (const char* key : {"layers", "hidden", "ffn", "heads", "kv_heads", "vocab", "seq_len", "micro_batch", "micro_batches"}) {
    expect_error(with(std::string("/workload/model/") + key, 0),
                 std::string("workload.model.") + key + " = 0: must be in 1..2147483647");
  }
  expect_error(with("/workload/model/layers", 2147483648LL), "workload.model.layers = 2147483648: must be in 1..2147483647");
  expect_error(with("/workload/model/hidden", 250),
               "workload.model.hidden = 250: not divisible by heads = 8 (the head dim is hidden / heads)");
  expect_error(with("/workload/model/kv_heads", 3),
               "workload.model.kv_heads = 3: does not divide heads = 8 (grouped-query attention shares each KV head among "
               "heads / kv_heads query heads)");
  expect_error_start(with("/workload/model/kv_heads", 16), "workload.model.kv_heads = 16: does not divide heads = 8 (grouped-query");
  expect_error(with("/workload/model/experts", -1), "workload.model.experts = -1: must be in 0..2147483647 (0: a dense model)");
  expect_error(with("/workload/model/top_k", 2),
               "workload.model.top_k = 2: a dense model (experts = 0) routes no tokens; top_k must be 0");
  json moe = with("/workload/model/experts", 8);
  moe["workload"]["model"]["top_k"] = 9;
  expect_error(moe, "workload.model.top_k = 9: must be in 1..experts = 8");
  moe["workload"]["model"]["top_k"] = 0;
  expect_error(moe, "workload.model.top_k = 0: must be in 1..experts = 8");
  moe["workload"]["model"]["top_k"] = 2;
  EXPECT_EQ(error_of(moe.dump()), "");
}

TEST(DesignWorkloadErrors, Axes) {
  expect_error(with("/workload/model/axes/tp", "mp"), "workload.model.axes.tp = \"mp\": no mesh axis has that name (axes: dp, tp)");
  expect_error(with("/workload/model/axes/fsdp/0", "data"),
               "workload.model.axes.fsdp[0] = \"data\": no mesh axis has that name (axes: dp, tp)");
  expect_error(with("/workload/model/axes/replicate", {"dp_tp"}),
               "workload.model.axes.replicate[0] = \"dp_tp\": a flattened axis (of dp, tp); roles take mesh axes (list its "
               "axes in fsdp or replicate)");
  expect_error(with("/workload/model/axes/fsdp", {"dp", "dp"}),
               "workload.model.axes.fsdp[1] = \"dp\": listed twice (also workload.model.axes.fsdp[0])");
  expect_error(with("/workload/model/axes/pp", "tp"),
               "workload.model.axes.pp = \"tp\": the axis already plays tp (workload.model.axes.tp); an axis plays one role, "
               "except ep (also an fsdp, replicate or cp axis) and cp (also an fsdp axis)");
  expect_error(with("/workload/model/axes/replicate", {"dp"}),
               "workload.model.axes.replicate[0] = \"dp\": the axis already plays fsdp (workload.model.axes.fsdp[0]); an axis "
               "plays one role, except ep (also an fsdp, replicate or cp axis) and cp (also an fsdp axis)");
  expect_error_start(with("/workload/model/axes/tp", "dp"), "workload.model.axes.tp = \"dp\": the axis already plays fsdp (workload.model.axes.fsdp[0])");
  expect_error_start(with("/workload/model/axes/ep", "tp"), "workload.model.axes.ep = \"tp\": the axis already plays tp (workload.model.axes.tp)");
  // The pairs that are allowed: ep on an fsdp, replicate or cp axis; cp on an fsdp axis.
  EXPECT_EQ(error_of(with("/workload/model/axes/ep", "dp").dump()), "");
  EXPECT_EQ(error_of(with("/workload/model/axes/cp", "dp").dump()), "");
  json cp_ep = with("/workload/model/axes/cp", "dp");
  cp_ep["workload"]["model"]["axes"]["ep"] = "dp";
  EXPECT_EQ(error_of(cp_ep.dump()), "");
  json replicated = with("/workload/model/axes", {{"replicate", {"dp"}}, {"ep", "dp"}});
  EXPECT_EQ(error_of(replicated.dump()), "");
  replicated["workload"]["model"]["axes"]["cp"] = "dp";
  expect_error_start(replicated, "workload.model.axes.cp = \"dp\": the axis already plays replicate (workload.model.axes.replicate[0])");
}

TEST(DesignWorkloadErrors, StructValuesUseTheSamePaths) {
  Design d = parse_design(kCanonical);
  d.workload->model->axes.tp = "mp";
  try {
    validate_design(d);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "ValueError: workload.model.axes.tp = \"mp\": no mesh axis has that name (axes: dp, tp)");
  }
  EXPECT_THROW((void)to_json_text(d), Error);
  d = parse_design(kCanonical);
  d.workload->model->dtype = static_cast<DType>(200);
  EXPECT_THROW(validate_design(d), Error);
  // validate_workload checks against the design it is given.
  d = parse_design(kCanonical);
  Design other = d;
  other.tensors.clear();
  EXPECT_THROW(validate_workload(*d.workload, other), Error);
  EXPECT_NO_THROW(validate_workload(*d.workload, d));
}

// ---- Edits carry the roles ---------------------------------------------------------------------------------------

TEST(DesignWorkloadEdits, RolesFollowTheirAxes) {
  const Design d = parse_design(kCanonical);
  auto axes = [](const Design& x) { return x.workload->model->axes; };
  EXPECT_EQ(axes(rename_axis(d, "tp", "mp")), (ModelAxes{{"dp"}, {}, "mp", "", "", ""}));
  EXPECT_EQ(axes(rename_axis(d, "dp", "data")), (ModelAxes{{"data"}, {}, "tp", "", "", ""}));
  EXPECT_EQ(axes(move_axis(d, "tp", 0)), axes(d));
  EXPECT_EQ(axes(add_axis(d, 0, "pp", 1)), axes(d));
  EXPECT_EQ(axes(remove_axis(d, "tp")), (ModelAxes{{"dp"}, {}, "", "", "", ""}));
  EXPECT_EQ(axes(remove_axis(d, "dp")), (ModelAxes{{}, {}, "tp", "", "", ""}));
  // Split: every part shards parameters; a single-axis role stays only on a part that keeps its name.
  EXPECT_EQ(axes(unflatten_axis(d, "dp", {2, 1}, {"dp_a", "dp_b"})), (ModelAxes{{"dp_a", "dp_b"}, {}, "tp", "", "", ""}));
  EXPECT_EQ(axes(unflatten_axis(d, "tp", {2, 2}, {"tp", "sp"})), (ModelAxes{{"dp"}, {}, "tp", "", "", ""}));
  EXPECT_EQ(axes(unflatten_axis(d, "tp", {2, 2}, {"tp_a", "tp_b"})), (ModelAxes{{"dp"}, {}, "", "", "", ""}));
  // A preset: roles kept by name.
  EXPECT_EQ(axes(apply_mesh(d, MeshSpec{{4, 2}, {"dp", "cp"}, {}})), (ModelAxes{{"dp"}, {}, "", "", "", ""}));
  // The workload's tensors are untouched and the result validates.
  EXPECT_EQ(rename_axis(d, "tp", "mp").workload->tensors, d.workload->tensors);
}

}  // namespace
}  // namespace meshloom
