// Design files: parsing and the validation rules, one error at a time (each message names the field path
// and the offending value).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "meshloom/design/design.hpp"
#include "meshloom/error.hpp"

namespace meshloom {
namespace {

using json = nlohmann::json;

// A valid design: world 8 on 2 hosts, mesh (dp=2, tp=4), one flattened axis, two tensors.
json base() {
  return json::parse(R"json({
    "format": "meshloom-design", "version": 1, "name": "base", "description": "for tests",
    "world": 8, "devices_per_host": 4,
    "mesh": {"shape": [2, 4], "names": ["dp", "tp"], "flattened": [{"name": "dp_tp", "axes": ["dp", "tp"]}]},
    "tensors": [
      {"name": "w", "shape": [64, 32], "dtype": "float32", "src": "S(0)R", "dst": "RS(1)"},
      {"name": "g", "shape": [64], "dtype": "bfloat16", "src": "P(sum)P(sum)", "dst": "S(0)[1]S(0)[0]"}
    ],
    "calibration": "calibration/local.json"})json");
}

// The what() of the error parse_design throws for text; "" when it parses.
std::string error_of(std::string_view text, ErrorKind kind = ErrorKind::ValueError) {
  try {
    (void)parse_design(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  return "";
}

std::string error_of_json(const json& j) { return error_of(j.dump()); }

// Every fragment must appear in the message.
void expect_error(const json& j, const std::vector<std::string>& fragments) {
  const std::string message = error_of_json(j);
  SCOPED_TRACE("message: " + message);
  ASSERT_FALSE(message.empty()) << "expected an error for " << j.dump();
  for (const std::string& fragment : fragments) {
    EXPECT_NE(message.find(fragment), std::string::npos) << "missing: " << fragment;
  }
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

TEST(DesignParse, ValidDesignFields) {
  const Design d = parse_design(base().dump());
  EXPECT_EQ(d.name, "base");
  EXPECT_EQ(d.description, "for tests");
  EXPECT_EQ(d.world, 8);
  EXPECT_EQ(d.devices_per_host, 4);
  EXPECT_EQ(d.mesh.shape, (std::vector<std::int64_t>{2, 4}));
  EXPECT_EQ(d.mesh.names, (std::vector<std::string>{"dp", "tp"}));
  ASSERT_EQ(d.mesh.flattened.size(), 1U);
  EXPECT_EQ(d.mesh.flattened[0], (FlattenSpec{"dp_tp", {"dp", "tp"}}));
  ASSERT_EQ(d.tensors.size(), 2U);
  EXPECT_EQ(d.tensors[0].name, "w");
  EXPECT_EQ(d.tensors[0].dtype, DType::Float32);
  EXPECT_EQ(d.tensors[0].src, parse_state("S(0)R"));
  EXPECT_EQ(d.tensors[1].dst, parse_state("S(0)[1]S(0)[0]"));
  EXPECT_EQ(d.calibration, "calibration/local.json");
  EXPECT_EQ(parse_design(to_json_text(d)), d);
}

TEST(DesignParse, OptionalFieldsAndSmallerMesh) {
  json j = base();
  j.erase("description");
  j.erase("calibration");
  j["mesh"].erase("flattened");
  j["tensors"] = json::array();
  j["mesh"]["shape"] = {2, 2};  // 4 ranks of 8: allowed
  const Design d = parse_design(j.dump());
  EXPECT_FALSE(d.description.has_value());
  EXPECT_FALSE(d.calibration.has_value());
  EXPECT_TRUE(d.mesh.flattened.empty());
  EXPECT_TRUE(d.tensors.empty());
  const std::string text = to_json_text(d);
  EXPECT_NE(text.find("\"flattened\": []"), std::string::npos);
  EXPECT_NE(text.find("\"tensors\": []\n}\n"), std::string::npos);
  EXPECT_EQ(parse_design(text), d);
  // Long state forms are accepted and saved canonically.
  j["tensors"] = json::parse(R"json([{"name": "x", "shape": [4, 4], "dtype": "int8", "src": "Shard(0), Replicate()", "dst": "P, R"}])json");
  const std::string saved = to_json_text(parse_design(j.dump()));
  EXPECT_NE(saved.find(R"x("src": "S(0)R", "dst": "P(sum)R")x"), std::string::npos) << saved;
}

TEST(DesignParse, DTypes) {
  const std::vector<std::pair<std::string, std::int64_t>> dtypes = {
      {"float32", 4}, {"float16", 2}, {"bfloat16", 2}, {"float64", 8}, {"int32", 4}, {"int64", 8}, {"int8", 1},
      {"uint8", 1}, {"float8_e4m3", 1}, {"float8_e5m2", 1}};
  for (const auto& [name, size] : dtypes) {
    const auto dtype = dtype_from_string(name);
    ASSERT_TRUE(dtype.has_value()) << name;
    EXPECT_EQ(to_string(*dtype), name);
    EXPECT_EQ(itemsize(*dtype), size);
    EXPECT_EQ(parse_design(with("/tensors/0/dtype", name).dump()).tensors[0].dtype, *dtype);
  }
  // PyTorch's name for float8_e4m3 reads too (`plan --dtype` takes both); a design is written with the format's.
  EXPECT_EQ(dtype_from_string("float8_e4m3fn"), DType::Float8E4M3);
  EXPECT_EQ(parse_design(with("/tensors/0/dtype", "float8_e4m3fn").dump()).tensors[0].dtype, DType::Float8E4M3);
  EXPECT_FALSE(dtype_from_string("fp32").has_value());
}

TEST(DesignErrors, NotADesign) {
  EXPECT_EQ(error_of("[]"), "ValueError: a design is a JSON object, got an array");
  EXPECT_EQ(error_of("5"), "ValueError: a design is a JSON object, got an integer");
  expect_error(without("/format"), {"format: required field is missing"});
  expect_error(with("/format", "meshloom-calibration"), {"format = \"meshloom-calibration\": not a meshloom design"});
  expect_error(with("/version", 3), {"version = 3: unsupported version; this build reads versions 1 and 2"});
  expect_error(with("/version", 0), {"version = 0: unsupported version; this build reads versions 1 and 2"});
  expect_error(with("/version", "1"), {"version = \"1\": expected an integer, got a string"});
  expect_error(without("/version"), {"version: required field is missing"});
}

TEST(DesignErrors, JsonSyntax) {
  expect_error(json(), {"a design is a JSON object, got null"});
  EXPECT_NE(error_of("{").find("ValueError: not valid JSON: parse error at line 1, column 2"), std::string::npos);
  EXPECT_NE(error_of("{\"world\": 8,}").find("not valid JSON"), std::string::npos);
  EXPECT_NE(error_of("").find("not valid JSON"), std::string::npos);
  // nlohmann's reader ends at a NUL byte; the engine's refuses one, so nothing after it passes unread.
  EXPECT_EQ(error_of(std::string("{\"world\": 8}\n\0{{{garbage", 24)),
            "ValueError: not valid JSON: a NUL byte at line 2, column 1 (JSON text holds none)");
  EXPECT_EQ(error_of(std::string("\0", 1)),
            "ValueError: not valid JSON: a NUL byte at line 1, column 1 (JSON text holds none)");
  EXPECT_NE(error_of("{\"a\": \"\xff\"}").find("not valid JSON"), std::string::npos);
  EXPECT_NE(error_of("{\"a\": 1e999}").find("not valid JSON"), std::string::npos);
  EXPECT_EQ(error_of(R"({"world": 1, "world": 2})"), "ValueError: world: duplicate key \"world\"");
  EXPECT_EQ(error_of(R"({"mesh": {"shape": [2], "shape": [4]}})"), "ValueError: mesh.shape: duplicate key \"shape\"");
  EXPECT_EQ(error_of(R"({"tensors": [{}, {"name": "a", "name": "b"}]})"), "ValueError: tensors[1].name: duplicate key \"name\"");
  EXPECT_EQ(error_of(std::string(17, '[') + std::string(17, ']')),
            "ValueError: [0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]: JSON nested deeper than 16 levels");
  EXPECT_NE(error_of(std::string(100000, '[')).find("nested deeper than 16 levels"), std::string::npos);
  EXPECT_NE(error_of(std::string(kMaxDesignFileBytes + 1, ' ')).find("bytes; at most 16777216 (16 MiB)"), std::string::npos);
}

TEST(DesignErrors, UnknownFields) {
  expect_error(with("/colour", "red"), {"ValueError: colour: unknown field; a design has format, version, name"});
  expect_error(with("/mesh/colour", 1), {"ValueError: mesh.colour: unknown field; mesh has shape, names, flattened"});
  expect_error(with("/mesh/flattened/0/size", 1), {"mesh.flattened[0].size: unknown field; mesh.flattened[0] has name, axes"});
  expect_error(with("/tensors/1/dtpye", "float32"), {"tensors[1].dtpye: unknown field; tensors[1] has name, shape, dtype, src, dst"});
}

TEST(DesignErrors, MissingFields) {
  for (const char* pointer : {"/name", "/world", "/devices_per_host", "/mesh", "/tensors", "/mesh/shape", "/mesh/names",
                              "/mesh/flattened/0/name", "/mesh/flattened/0/axes", "/tensors/0/name", "/tensors/0/shape",
                              "/tensors/1/dtype", "/tensors/0/src", "/tensors/0/dst"}) {
    std::string path = std::string(pointer).substr(1);
    for (auto& c : path) c = c == '/' ? '.' : c;
    for (const std::string index : {"0", "1"}) {
      const auto at = path.find("." + index);
      if (at != std::string::npos) path.replace(at, 2, "[" + index + "]");
    }
    expect_error(without(pointer), {"ValueError: " + path + ": required field is missing"});
  }
}

TEST(DesignErrors, WrongTypes) {
  expect_error(with("/name", 5), {"name = 5: expected a string, got an integer"});
  expect_error(with("/description", json::array()), {"description = []: expected a string, got an array"});
  expect_error(with("/world", 8.0), {"world = 8.0: expected an integer, got a non-integer number"});
  expect_error(with("/world", "8"), {"world = \"8\": expected an integer, got a string"});
  expect_error(with("/devices_per_host", true), {"devices_per_host = true: expected an integer, got a boolean"});
  expect_error(with("/mesh", "2x4"), {"mesh = \"2x4\": expected an object, got a string"});
  expect_error(with("/mesh/shape", 8), {"mesh.shape = 8: expected an array, got an integer"});
  expect_error(with("/mesh/shape/1", "4"), {"mesh.shape[1] = \"4\": expected an integer, got a string"});
  expect_error(with("/mesh/names/0", nullptr), {"mesh.names[0] = null: expected a string, got null"});
  expect_error(with("/mesh/flattened", json::object()), {"mesh.flattened = {}: expected an array, got an object"});
  expect_error(with("/mesh/flattened/0", "dp_tp"), {"mesh.flattened[0] = \"dp_tp\": expected an object"});
  expect_error(with("/tensors", json::object()), {"tensors = {}: expected an array, got an object"});
  expect_error(with("/tensors/1", 3), {"tensors[1] = 3: expected an object, got an integer"});
  expect_error(with("/tensors/0/src", json::array({"S(0)", "R"})), {"tensors[0].src = [\"S(0)\",\"R\"]: expected a string"});
  expect_error(with("/calibration", 7), {"calibration = 7: expected a string, got an integer"});
}

TEST(DesignErrors, WorldAndHosts) {
  expect_error(with("/world", 0), {"ValueError: world = 0: must be in 1..2147483647"});
  expect_error(with("/world", -8), {"world = -8: must be in 1..2147483647"});
  expect_error(with("/world", 2147483648LL), {"world = 2147483648: must be in 1..2147483647"});
  expect_error(with("/world", 18446744073709551615ULL),
               {"world = 18446744073709551615: out of range for a 64-bit integer"});
  // An integer beyond 64 bits, which the parser holds as a double: out of range too, not "a non-integer number".
  expect_error(with("/world", json::parse("123456789012345678901234567890")),
               {"world = 1.2345678901234568e+29: out of range for a 64-bit integer"});
  expect_error(with("/world", json::parse("-9223372036854775809")),
               {"world = -9.223372036854776e+18: out of range for a 64-bit integer"});
  expect_error(with("/devices_per_host", 0), {"devices_per_host = 0: must be >= 1"});
  expect_error(with("/devices_per_host", 3), {"ValueError: devices_per_host = 3: does not divide world = 8"});
  expect_error(with("/devices_per_host", 16), {"devices_per_host = 16: does not divide world = 8"});
}

TEST(DesignErrors, MeshShapeAndNames) {
  EXPECT_EQ(error_of_json(with("/mesh/shape/1", 0)), "ValueError: mesh.shape[1] = 0: axis sizes must be >= 1");
  expect_error(with("/mesh/shape/0", -2), {"mesh.shape[0] = -2: axis sizes must be >= 1"});
  json empty = with("/mesh/shape", json::array());
  empty["mesh"]["names"] = json::array();
  empty["mesh"].erase("flattened");
  empty["tensors"] = json::array();
  expect_error(empty, {"mesh.shape = []: a mesh needs at least one axis"});
  expect_error(with("/mesh/shape", std::vector<int>(65, 1)), {"mesh.shape = [1,1,1", "65 axes; at most 64"});
  expect_error(with("/mesh/names", {"dp"}), {"ValueError: mesh.names = [\"dp\"]: 1 names for the 2 axes of mesh.shape = [2,4]"});
  expect_error(with("/mesh/names/1", "dp"), {"ValueError: mesh.names[1] = \"dp\": duplicate axis name (also mesh.names[0])"});
  expect_error(with("/mesh/names/0", "d p"), {"mesh.names[0] = \"d p\": names must be 1 to 64 characters of A-Z, a-z, 0-9 and _"});
  expect_error(with("/mesh/names/0", ""), {"mesh.names[0] = \"\": names must be 1 to 64"});
  expect_error(with("/mesh/names/0", std::string(65, 'a')), {"mesh.names[0] = \"aaaa", "names must be 1 to 64"});
  expect_error(with("/mesh/names/1", "tp-1"), {"mesh.names[1] = \"tp-1\": names must be"});
}

TEST(DesignErrors, MeshLargerThanWorld) {
  json j = with("/world", 4);
  j["devices_per_host"] = 4;
  EXPECT_EQ(error_of_json(j), "ValueError: mesh.shape = [2,4]: world = 4 but the mesh holds 8 ranks");
  j = with("/mesh/shape", {4294967296LL, 4294967296LL});
  j["mesh"].erase("flattened");
  expect_error(j, {"mesh.shape = [4294967296,4294967296]: world = 8 but the mesh holds more than 2^63-1 ranks"});
}

TEST(DesignErrors, FlattenedAxes) {
  expect_error(with("/mesh/flattened/0/axes/1", "ep"),
               {"ValueError: mesh.flattened[0].axes[1] = \"ep\": not an axis of the mesh (axes: dp, tp)"});
  expect_error(with("/mesh/flattened/0/axes", {"dp", "dp"}),
               {"mesh.flattened[0].axes[1] = \"dp\": axis listed twice (also mesh.flattened[0].axes[0])"});
  expect_error(with("/mesh/flattened/0/name", "tp"),
               {"ValueError: mesh.flattened[0].name = \"tp\": collides with the axis name mesh.names[1]"});
  expect_error(with("/mesh/flattened/1", {{"name", "dp_tp"}, {"axes", {"tp"}}}),
               {"mesh.flattened[1].name = \"dp_tp\": duplicate flattened axis name (also mesh.flattened[0])"});
  expect_error(with("/mesh/flattened/0/axes", json::array()), {"mesh.flattened[0].axes = []: a flattened axis needs at least one mesh axis"});
  expect_error(with("/mesh/flattened/0/axes", {"tp", "dp"}),
               {"mesh.flattened[0].axes = [\"tp\",\"dp\"]: axes must be listed in mesh order (outer to inner: dp, tp)"});
  expect_error(with("/mesh/flattened/0/name", "dp+tp"), {"mesh.flattened[0].name = \"dp+tp\": names must be"});
  json many = base();
  for (int i = 0; i < 65; ++i) many["mesh"]["flattened"].push_back({{"name", "f" + std::to_string(i)}, {"axes", {"dp"}}});
  expect_error(many, {"mesh.flattened = [", "66 flattened axes; at most 64"});
}

TEST(DesignErrors, Tensors) {
  expect_error(with("/tensors/0/dtype", "fp32"),
               {"ValueError: tensors[0].dtype = \"fp32\": unknown dtype; expected one of float32, float16, bfloat16, float64, "
                "int32, int64, int8, uint8, float8_e4m3, float8_e5m2"});
  expect_error(with("/tensors/0/src", "S(0)[1]R"),
               {"ValueError: tensors[0].src = \"S(0)[1]R\": position 0, token \"S(0)[1]\": shard-order index 1 is out of range"});
  expect_error(with("/tensors/1/dst", "X"), {"tensors[1].dst = \"X\": position 0, token \"X\": expected a placement"});
  expect_error(with("/tensors/0/dst", "RRR"), {"ValueError: tensors[0].dst = \"RRR\": 3 placements for a mesh of 2 axes"});
  expect_error(with("/tensors/0/src", "S(2)R"),
               {"ValueError: tensors[0].src = \"S(2)R\": S(2) on axis 0 shards dim 2 but the tensor has 2 dims (0..1)"});
  expect_error(with("/tensors/1/src", "Shard(1), R"), {"tensors[1].src = \"S(1)R\": S(1) on axis 0 shards dim 1 but the tensor has 1 dim"});
  expect_error(with("/tensors/0/shape/1", 0), {"ValueError: tensors[0].shape[1] = 0: dim sizes must be >= 1"});
  expect_error(with("/tensors/0/shape", std::vector<int>(65, 1)), {"tensors[0].shape = [1,1", "65 dims; at most 64"});
  expect_error(with("/tensors/0/shape", {4611686018427387904LL, 2}),
               {"tensors[0].shape = [4611686018427387904,2]: the tensor holds more than 2^63-1 bytes of float32"});
  expect_error(with("/tensors/1/name", "w"), {"ValueError: tensors[1].name = \"w\": duplicate tensor name (also tensors[0])"});
  expect_error(with("/tensors/0/name", "layers 0"), {"tensors[0].name = \"layers 0\": names must be"});
  // Tensor names may be module paths.
  EXPECT_EQ(error_of(with("/tensors/0/name", "layers.0.attention.wq.weight").dump()), "");
  json many = base();
  many["tensors"] = json::array();
  for (int i = 0; i < 1025; ++i) {
    many["tensors"].push_back({{"name", "t" + std::to_string(i)}, {"shape", {8}}, {"dtype", "int8"}, {"src", "RR"}, {"dst", "RR"}});
  }
  expect_error(many, {"tensors = [", "1025 tensors; at most 1024"});
  many["tensors"].erase(many["tensors"].size() - 1);
  EXPECT_EQ(parse_design(many.dump()).tensors.size(), 1024U);
  // A scalar tensor: rank 0, so no shard placements.
  json scalar = with("/tensors/0/shape", json::array());
  scalar["tensors"][0]["src"] = "P(max)R";
  scalar["tensors"][0]["dst"] = "RR";
  EXPECT_TRUE(parse_design(scalar.dump()).tensors[0].shape.empty());
}

TEST(DesignErrors, TextFields) {
  expect_error(with("/name", ""), {"ValueError: name = \"\": must be 1 to 128 bytes long, not 0"});
  expect_error(with("/name", std::string(129, 'x')), {"name = \"xxx", "must be 1 to 128 bytes long, not 129"});
  expect_error(with("/name", "two\nlines"), {"name = \"two\\nlines\": control characters are not allowed here"});
  EXPECT_EQ(parse_design(with("/name", "Llama 3 405B — pre-training").dump()).name, "Llama 3 405B — pre-training");
  EXPECT_EQ(parse_design(with("/description", "line 1\nline 2\t✓").dump()).description, "line 1\nline 2\t✓");
  expect_error(with("/description", std::string(65537, 'd')), {"description = \"ddd", "must be 0 to 65536 bytes long, not 65537"});
  expect_error(with("/description", std::string("nul\0here", 8)), {"description = \"nul\\u0000here\": control characters"});
  expect_error(with("/calibration", ""), {"ValueError: calibration = \"\": must be 1 to 4096 bytes long, not 0"});
  expect_error(with("/calibration", std::string(4097, 'c')), {"must be 1 to 4096 bytes long, not 4097"});
}

TEST(DesignValidate, StructValuesUseTheSamePaths) {
  Design d = parse_design(base().dump());
  EXPECT_NO_THROW(validate_design(d));
  Design bad = d;
  bad.mesh.shape[1] = 0;
  EXPECT_THROW(validate_design(bad), Error);
  try {
    (void)to_json_text(bad);
    FAIL() << "to_json_text must validate";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "ValueError: mesh.shape[1] = 0: axis sizes must be >= 1");
  }
  bad = d;
  bad.description = std::string("\xc3\x28");
  EXPECT_THROW(
      {
        try {
          validate_design(bad);
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("description = \"\xef\xbf\xbd(\": not valid UTF-8"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
  bad = d;
  bad.tensors[0].src = parse_state("S(0)[1]RS(0)[0]");
  EXPECT_THROW(validate_design(bad), Error);
}

TEST(DesignValue, EqualityAndCalibrationPath) {
  const Design a = parse_design(base().dump());
  Design b = a;
  EXPECT_EQ(a, b);
  b.tensors[1].dst = parse_state("S(0)S(0)");
  EXPECT_NE(a, b);
  EXPECT_EQ(calibration_path(a, "/designs/x.meshloom.json"), std::filesystem::path("/designs/calibration/local.json"));
  b.calibration = "/abs/c.json";
  EXPECT_EQ(calibration_path(b, "/designs/x.meshloom.json"), std::filesystem::path("/abs/c.json"));
  b.calibration.reset();
  EXPECT_FALSE(calibration_path(b, "/designs/x.meshloom.json").has_value());
}

}  // namespace
}  // namespace meshloom
