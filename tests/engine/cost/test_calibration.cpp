// The calibration file: strict parsing, canonical printing, loading.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "cost_test_support.hpp"

namespace meshloom {
namespace {

namespace fs = std::filesystem;
using cost_test::error_of;

// The contract's example, one line.
const std::string kBase =
    R"({"format": "meshloom-calibration", "version": 1, "backend": "mpi", "world": 8, )"
    R"("mesh": {"shape": [2, 4], "names": ["dp", "tp"]}, )"
    R"("axes": {"tp": {"all_reduce": {"alpha_us": 12.0, "busbw_gbps": 3.1, "r2": 0.998, "samples": 14}}}})";

// kBase with the first `from` replaced by `to`.
std::string with(const std::string& from, const std::string& to) {
  std::string text = kBase;
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

Calibration sample() {
  Calibration c;
  c.backend = "nccl";
  c.world = 16;
  c.mesh_shape = {2, 2, 4};
  c.mesh_names = {"pp", "dp", "tp"};
  c.axes["tp"]["all_reduce"] = {12.0, 3.1, 0.998, 14};
  c.axes["tp"]["broadcast"] = {0.0, 250.0, 1.0, 1};
  c.axes["tp"]["all_gather"] = {7.25, 120.5, 0.9999, 20};
  c.axes["dp"]["reduce_scatter"] = {20.5, 1.25, 0.97, 12};
  c.axes["dp_tp"]["all_to_all"] = {40.0, 0.9, -0.5, 3};  // a bad fit: negative r2 is allowed
  c.axes["pp"] = {};
  return c;
}

const char* const kSampleText = R"({
  "format": "meshloom-calibration",
  "version": 1,
  "backend": "nccl",
  "world": 16,
  "mesh": {
    "shape": [2, 2, 4],
    "names": ["pp", "dp", "tp"]
  },
  "axes": {
    "dp": {
      "reduce_scatter": {"alpha_us": 20.5, "busbw_gbps": 1.25, "r2": 0.97, "samples": 12}
    },
    "dp_tp": {
      "all_to_all": {"alpha_us": 40.0, "busbw_gbps": 0.9, "r2": -0.5, "samples": 3}
    },
    "pp": {},
    "tp": {
      "all_gather": {"alpha_us": 7.25, "busbw_gbps": 120.5, "r2": 0.9999, "samples": 20},
      "all_reduce": {"alpha_us": 12.0, "busbw_gbps": 3.1, "r2": 0.998, "samples": 14},
      "broadcast": {"alpha_us": 0.0, "busbw_gbps": 250.0, "r2": 1.0, "samples": 1}
    }
  }
}
)";

// ---- parsing ------------------------------------------------------------------------------------------------

TEST(CalibrationParse, TheContractExample) {
  const Calibration c = parse_calibration(kBase);
  EXPECT_EQ(c.backend, "mpi");
  EXPECT_EQ(c.world, 8);
  EXPECT_EQ(c.mesh_shape, (std::vector<std::int64_t>{2, 4}));
  EXPECT_EQ(c.mesh_names, (std::vector<std::string>{"dp", "tp"}));
  ASSERT_EQ(c.axes.size(), 1U);
  ASSERT_EQ(c.axes.at("tp").size(), 1U);
  EXPECT_EQ(c.axes.at("tp").at("all_reduce"), (CollectiveFit{12.0, 3.1, 0.998, 14}));
}

TEST(CalibrationParse, LenientWhereTheFormatIs) {
  // Integers where numbers are expected, any key order, no axes, empty axis objects, a mesh smaller than the
  // world, fits for flattened groups, every collective.
  const Calibration c = parse_calibration(
      R"({"axes": {"dp_tp": {"all_gather": {"samples": 1, "r2": -40, "busbw_gbps": 1, "alpha_us": 0}}, "dp": {}},)"
      R"( "mesh": {"names": ["dp", "tp"], "shape": [2, 2]}, "world": 8, "backend": "gloo", "version": 1,)"
      R"( "format": "meshloom-calibration"})");
  EXPECT_EQ(c.axes.at("dp_tp").at("all_gather"), (CollectiveFit{0.0, 1.0, -40.0, 1}));
  EXPECT_TRUE(c.axes.at("dp").empty());
  const Calibration all = parse_calibration(with(
      R"("all_reduce": {"alpha_us": 12.0, "busbw_gbps": 3.1, "r2": 0.998, "samples": 14})",
      R"("all_reduce": {"alpha_us": 1, "busbw_gbps": 2, "r2": 1, "samples": 3}, )"
      R"("all_gather": {"alpha_us": 1, "busbw_gbps": 2, "r2": 1, "samples": 3}, )"
      R"("reduce_scatter": {"alpha_us": 1, "busbw_gbps": 2, "r2": 1, "samples": 3}, )"
      R"("all_to_all": {"alpha_us": 1, "busbw_gbps": 2, "r2": 1, "samples": 3}, )"
      R"("broadcast": {"alpha_us": 1, "busbw_gbps": 2, "r2": 1, "samples": 3})"));
  EXPECT_EQ(all.axes.at("tp").size(), 5U);
  const Calibration empty = parse_calibration(R"({"format": "meshloom-calibration", "version": 1, "backend": "mpi",)"
                                               R"( "world": 1, "mesh": {"shape": [1], "names": ["x"]}, "axes": {}})");
  EXPECT_TRUE(empty.axes.empty());
}

struct BadCase {
  std::string text;
  std::string what;  // the whole what(), or its beginning when prefix
  bool prefix = false;
};

TEST(CalibrationParse, EveryValidationError) {
  const std::string fit = R"("all_reduce": {"alpha_us": 12.0, "busbw_gbps": 3.1, "r2": 0.998, "samples": 14})";
  const std::string no_axes = R"({"format": "meshloom-calibration", "version": 1, "backend": "mpi", "world": 8, )"
                              R"("mesh": {"shape": [2, 4], "names": ["dp", "tp"]}})";
  const std::vector<BadCase> cases = {
      // the document
      {"[]", "ValueError: a calibration is a JSON object, got an array"},
      {"{", "ValueError: not valid JSON: ", true},
      {"", "ValueError: not valid JSON: ", true},
      {kBase + " x", "ValueError: not valid JSON: ", true},
      {with(R"("backend": "mpi")", R"("backend": "mpi", "backend": "nccl")"),
       R"(ValueError: backend: duplicate key "backend")"},
      {with(R"("samples": 14)", R"("samples": 14, "r2": 0.5)"), R"(ValueError: axes.tp.all_reduce.r2: duplicate key "r2")"},
      {with(R"("r2": 0.998)", R"("r2": [[[[[[[[[[[[[[1]]]]]]]]]]]]]])"),
       "ValueError: axes.tp.all_reduce.r2[0][0][0][0][0][0][0][0][0][0][0][0]: JSON nested deeper than 16 levels"},
      {with("12.0", "1e999"), "ValueError: not valid JSON: number overflow parsing '1e999'", true},
      // format and version
      {with(R"("format": "meshloom-calibration", )", ""),
       R"(ValueError: format: required field is missing; a calibration starts with "format": "meshloom-calibration")"},
      {with(R"("meshloom-calibration")", R"("meshloom-design")"),
       R"(ValueError: format = "meshloom-design": not a meshloom calibration; expected "meshloom-calibration")"},
      {with(R"("meshloom-calibration")", "1"),
       R"(ValueError: format = 1: not a meshloom calibration; expected "meshloom-calibration")"},
      {with(R"("version": 1, )", ""), "ValueError: version: required field is missing"},
      {with(R"("version": 1)", R"("version": 2)"), "ValueError: version = 2: unsupported version; this build reads version 1"},
      {with(R"("version": 1)", R"("version": "1")"), R"(ValueError: version = "1": expected an integer, got a string)"},
      // top-level fields
      {with(R"("world": 8)", R"("world": 8, "hosts": 2)"),
       "ValueError: hosts: unknown field; a calibration has format, version, backend, timing, world, mesh, axes, "
       "rank_hosts, groups, rank_cpus, axis_corrections, transport"},
      {with(R"("backend": "mpi")", R"("backend": "mpi", "timing": "single-shot")"),
       R"(ValueError: timing = "single-shot": expected "pipelined" or "single_shot")"},
      {with(R"("backend": "mpi")", R"("backend": "mpi", "timing": 1)"),
       R"(ValueError: timing = 1: expected a string, got an integer)"},
      {with(R"("backend": "mpi", )", ""), "ValueError: backend: required field is missing"},
      {with(R"("world": 8, )", ""), "ValueError: world: required field is missing"},
      {with(R"(, "mesh": {"shape": [2, 4], "names": ["dp", "tp"]})", ""), "ValueError: mesh: required field is missing"},
      {no_axes, "ValueError: axes: required field is missing"},
      {with(R"("mpi")", "7"), "ValueError: backend = 7: expected a string, got an integer"},
      {with(R"("mpi")", R"("")"), R"(ValueError: backend = "": must be 1 to 64 bytes long, not 0)"},
      {with(R"("mpi")", R"("m\tpi")"), R"(ValueError: backend = "m\tpi": control characters are not allowed here)"},
      {with(R"("world": 8)", R"("world": 0)"), "ValueError: world = 0: must be in 1..2147483647"},
      {with(R"("world": 8)", R"("world": -8)"), "ValueError: world = -8: must be in 1..2147483647"},
      {with(R"("world": 8)", R"("world": 2147483648)"), "ValueError: world = 2147483648: must be in 1..2147483647"},
      {with(R"("world": 8)", R"("world": 8.5)"), "ValueError: world = 8.5: expected an integer, got a non-integer number"},
      {with(R"("world": 8)", R"("world": 18446744073709551615)"),
       "ValueError: world = 18446744073709551615: out of range for a 64-bit integer"},
      // mesh
      {with(R"({"shape": [2, 4], "names": ["dp", "tp"]})", "[2, 4]"),
       "ValueError: mesh = [2,4]: expected an object, got an array"},
      {with(R"("names": ["dp", "tp"])", R"("names": ["dp", "tp"], "flattened": [])"),
       "ValueError: mesh.flattened: unknown field; mesh has shape, names"},
      {with(R"("shape": [2, 4], )", ""), "ValueError: mesh.shape: required field is missing"},
      {with(R"(, "names": ["dp", "tp"])", ""), "ValueError: mesh.names: required field is missing"},
      {with("[2, 4]", "8"), "ValueError: mesh.shape = 8: expected an array, got an integer"},
      {with("[2, 4]", R"([2, "4"])"), R"(ValueError: mesh.shape[1] = "4": expected an integer, got a string)"},
      {with("[2, 4]", "[2, 0]"), "ValueError: mesh.shape[1] = 0: axis sizes must be >= 1"},
      {with("[2, 4]", "[-2, 4]"), "ValueError: mesh.shape[0] = -2: axis sizes must be >= 1"},
      {with(R"("shape": [2, 4], "names": ["dp", "tp"])", R"("shape": [], "names": [])"),
       "ValueError: mesh.shape = []: a mesh needs at least one axis"},
      {with(R"(["dp", "tp"])", R"(["dp"])"), R"(ValueError: mesh.names = ["dp"]: 1 names for the 2 axes of mesh.shape = [2,4])"},
      {with(R"(["dp", "tp"])", R"(["dp", 1])"), "ValueError: mesh.names[1] = 1: expected a string, got an integer"},
      {with(R"(["dp", "tp"])", R"(["dp", "dp"])"),
       R"(ValueError: mesh.names[1] = "dp": duplicate axis name (also mesh.names[0]))"},
      {with(R"(["dp", "tp"])", R"(["dp", "t-p"])"),
       R"(ValueError: mesh.names[1] = "t-p": names must be 1 to 64 characters of A-Z, a-z, 0-9 and _)"},
      {with(R"(["dp", "tp"])", R"(["", "tp"])"),
       R"(ValueError: mesh.names[0] = "": names must be 1 to 64 characters of A-Z, a-z, 0-9 and _)"},
      {with("[2, 4]", "[4, 4]"), "ValueError: mesh.shape = [4,4]: world = 8 but the mesh holds 16 ranks"},
      {with("[2, 4]", "[4294967296, 4294967296]"),
       "ValueError: mesh.shape = [4294967296,4294967296]: world = 8 but the mesh holds more than 2^63-1 ranks"},
      // axes
      {with(R"("axes": {"tp": {)" + fit + "}}", R"("axes": [])"), "ValueError: axes = []: expected an object, got an array"},
      {with(R"("tp": {)", R"("t.p": {)"),
       R"(ValueError: axes = "t.p": names must be 1 to 64 characters of A-Z, a-z, 0-9 and _)"},
      {with(R"("tp": {)", R"("": {)"), R"(ValueError: axes = "": names must be 1 to 64 characters of A-Z, a-z, 0-9 and _)"},
      {with(R"({)" + fit + "}", "3"), "ValueError: axes.tp = 3: expected an object, got an integer"},
      {with(R"("all_reduce")", R"("all_to_one")"),
       R"(ValueError: axes.tp = "all_to_one": unknown collective; expected all_gather, all_reduce, all_to_all, broadcast, reduce_scatter)"},
      {with(R"("all_reduce")", R"("chunk")"),
       R"(ValueError: axes.tp = "chunk": unknown collective; expected all_gather, all_reduce, all_to_all, broadcast, reduce_scatter)"},
      {with(R"({"alpha_us": 12.0, "busbw_gbps": 3.1, "r2": 0.998, "samples": 14})", "[12.0]"),
       "ValueError: axes.tp.all_reduce = [12.0]: expected an object, got an array"},
      // a fit
      {with(R"("samples": 14)", R"("samples": 14, "beta": 1)"),
       "ValueError: axes.tp.all_reduce.beta: unknown field; axes.tp.all_reduce has alpha_us, busbw_gbps, r2, samples"},
      {with(R"(, "samples": 14)", ""), "ValueError: axes.tp.all_reduce.samples: required field is missing"},
      {with(R"("alpha_us": 12.0, )", ""), "ValueError: axes.tp.all_reduce.alpha_us: required field is missing"},
      {with(R"(, "busbw_gbps": 3.1)", ""), "ValueError: axes.tp.all_reduce.busbw_gbps: required field is missing"},
      {with(R"(, "r2": 0.998)", ""), "ValueError: axes.tp.all_reduce.r2: required field is missing"},
      {with("12.0", "-1.5"), "ValueError: axes.tp.all_reduce.alpha_us = -1.5: must be finite and >= 0"},
      {with("12.0", R"("12")"), R"(ValueError: axes.tp.all_reduce.alpha_us = "12": expected a number, got a string)"},
      {with("12.0", "null"), "ValueError: axes.tp.all_reduce.alpha_us = null: expected a number, got null"},
      {with("3.1", "0"), "ValueError: axes.tp.all_reduce.busbw_gbps = 0.0: must be finite and > 0"},
      {with("3.1", "-3.1"), "ValueError: axes.tp.all_reduce.busbw_gbps = -3.1: must be finite and > 0"},
      {with("3.1", "true"), "ValueError: axes.tp.all_reduce.busbw_gbps = true: expected a number, got a boolean"},
      {with("0.998", "1.5"), "ValueError: axes.tp.all_reduce.r2 = 1.5: must be finite and <= 1"},
      {with("0.998", "1.0000000000000002"), "ValueError: axes.tp.all_reduce.r2 = 1.0000000000000002: must be finite and <= 1"},
      {with("0.998", R"({})"), "ValueError: axes.tp.all_reduce.r2 = {}: expected a number, got an object"},
      {with(R"("samples": 14)", R"("samples": 0)"), "ValueError: axes.tp.all_reduce.samples = 0: must be >= 1"},
      {with(R"("samples": 14)", R"("samples": -2)"), "ValueError: axes.tp.all_reduce.samples = -2: must be >= 1"},
      {with(R"("samples": 14)", R"("samples": 14.0)"),
       "ValueError: axes.tp.all_reduce.samples = 14.0: expected an integer, got a non-integer number"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.text);
    const std::string what = error_of([&] { (void)parse_calibration(c.text); }, ErrorKind::ValueError);
    if (c.prefix) {
      EXPECT_TRUE(what.starts_with(c.what)) << what;
    } else {
      EXPECT_EQ(what, c.what);
    }
  }
}

TEST(CalibrationParse, EdgeValuesThatAreValid) {
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"12.0", "0"}, {"12.0", "0.0"}, {"12.0", "-0.0"}, {"0.998", "1"}, {"0.998", "-1e300"}, {"3.1", "5e-324"},
           {"3.1", "1.7976931348623157e308"}, {R"("samples": 14)", R"("samples": 9223372036854775807)"},
           {"[2, 4]", "[1, 8]"}, {R"("world": 8)", R"("world": 2147483647)"}}) {
    SCOPED_TRACE(to);
    EXPECT_NO_THROW((void)parse_calibration(with(from, to)));
  }
}

TEST(CalibrationParse, SizeLimit) {
  const std::string big(std::size_t{16} << 20, ' ');
  EXPECT_EQ(error_of([&] { (void)parse_calibration(big + " "); }, ErrorKind::ValueError),
            "ValueError: the calibration is 16777217 bytes; at most 16777216 (16 MiB)");
  // Exactly 16 MiB is read (and fails only as JSON).
  EXPECT_TRUE(error_of([&] { (void)parse_calibration(big); }, ErrorKind::ValueError).starts_with("ValueError: not valid JSON"));
  // Whitespace padding within the limit is fine.
  EXPECT_EQ(parse_calibration(std::string(1000, '\n') + kBase + std::string(1000, ' ')), parse_calibration(kBase));
}

// ---- printing ------------------------------------------------------------------------------------------------

TEST(CalibrationPrint, CanonicalText) {
  EXPECT_EQ(to_json_text(sample()), kSampleText);
  EXPECT_EQ(parse_calibration(kSampleText), sample());
}

TEST(CalibrationPrint, ContractExampleRoundTrips) {
  const Calibration c = parse_calibration(kBase);
  const std::string text = to_json_text(c);
  EXPECT_EQ(text,
            "{\n  \"format\": \"meshloom-calibration\",\n  \"version\": 1,\n  \"backend\": \"mpi\",\n  \"world\": 8,\n"
            "  \"mesh\": {\n    \"shape\": [2, 4],\n    \"names\": [\"dp\", \"tp\"]\n  },\n"
            "  \"axes\": {\n    \"tp\": {\n"
            "      \"all_reduce\": {\"alpha_us\": 12.0, \"busbw_gbps\": 3.1, \"r2\": 0.998, \"samples\": 14}\n"
            "    }\n  }\n}\n");
  EXPECT_EQ(parse_calibration(text), c);
  EXPECT_EQ(to_json_text(parse_calibration(text)), text);
}

TEST(CalibrationPrint, TheTimingModeRoundTripsWhenRecorded) {
  Calibration c = parse_calibration(kBase);
  EXPECT_EQ(c.timing, "");  // files from before the field have none
  c.timing = "single_shot";
  const std::string text = to_json_text(c);
  EXPECT_NE(text.find("  \"backend\": \"mpi\",\n  \"timing\": \"single_shot\",\n"), std::string::npos) << text;
  EXPECT_EQ(parse_calibration(text), c);
  c.timing = "sometimes";
  EXPECT_THROW((void)to_json_text(c), Error);
}

TEST(CalibrationPrint, NoAxes) {
  Calibration c = sample();
  c.axes.clear();
  const std::string text = to_json_text(c);
  EXPECT_NE(text.find("  \"axes\": {}\n}\n"), std::string::npos) << text;
  EXPECT_EQ(parse_calibration(text), c);
}

TEST(CalibrationPrint, DoublesRoundTripExactly) {
  const std::vector<double> values = {0.1,
                                      1.0 / 3.0,
                                      2.0 / 3.0,
                                      3.141592653589793,
                                      1e-300,
                                      5e-324,  // the smallest denormal
                                      2.2250738585072014e-308,
                                      1.7976931348623157e308,
                                      123456789012345678.0,
                                      1e21,
                                      0.30000000000000004,
                                      7.210874279548531,
                                      std::nextafter(1.0, 2.0),
                                      std::nextafter(12.0, 0.0)};
  for (const double v : values) {
    SCOPED_TRACE(v);
    Calibration c = sample();
    c.axes["tp"]["all_reduce"] = {v, v, -v, 7};
    c.axes["dp"]["reduce_scatter"].r2 = std::nextafter(1.0, 0.0);
    const Calibration back = parse_calibration(to_json_text(c));
    EXPECT_EQ(back, c);
    const CollectiveFit& f = back.axes.at("tp").at("all_reduce");
    EXPECT_EQ(f.alpha_us, v);
    EXPECT_EQ(f.busbw_gbps, v);
    EXPECT_EQ(f.r2, -v);
  }
}

TEST(CalibrationPrint, QuotesAndKeepsOrder) {
  Calibration c = sample();
  c.backend = "mpi \"open\" \\ é";
  const std::string text = to_json_text(c);
  EXPECT_NE(text.find(R"("backend": "mpi \"open\" \\ é",)"), std::string::npos) << text;
  EXPECT_EQ(parse_calibration(text), c);
  // axes and collectives are printed sorted (std::map order), whatever the input order.
  const auto dp = text.find("\"dp\":");
  const auto dp_tp = text.find("\"dp_tp\":");
  const auto pp = text.find("\"pp\":");
  const auto tp = text.find("\"tp\":");
  EXPECT_LT(dp, dp_tp);
  EXPECT_LT(dp_tp, pp);
  EXPECT_LT(pp, tp);
  EXPECT_LT(text.find("all_gather"), text.find("all_reduce"));
  EXPECT_LT(text.find("all_reduce"), text.find("broadcast"));
  EXPECT_EQ(text.back(), '\n');
}

TEST(CalibrationPrint, RefusesInvalidValues) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto what = [](const Calibration& c) { return error_of([&] { (void)to_json_text(c); }, ErrorKind::ValueError); };
  Calibration c = sample();
  c.axes["tp"]["all_reduce"].alpha_us = inf;
  EXPECT_EQ(what(c), "ValueError: axes.tp.all_reduce.alpha_us = inf: must be finite and >= 0");
  c = sample();
  c.axes["tp"]["all_reduce"].busbw_gbps = nan;
  EXPECT_EQ(what(c), "ValueError: axes.tp.all_reduce.busbw_gbps = nan: must be finite and > 0");
  c = sample();
  c.axes["tp"]["all_reduce"].r2 = -inf;
  EXPECT_EQ(what(c), "ValueError: axes.tp.all_reduce.r2 = -inf: must be finite and <= 1");
  c = sample();
  c.axes["tp"]["gather"] = {1, 1, 1, 1};
  EXPECT_EQ(what(c),
            R"(ValueError: axes.tp = "gather": unknown collective; expected all_gather, all_reduce, all_to_all, broadcast, reduce_scatter)");
  c = sample();
  c.axes["a b"] = {};
  EXPECT_EQ(what(c), R"(ValueError: axes = "a b": names must be 1 to 64 characters of A-Z, a-z, 0-9 and _)");
  c = sample();
  c.world = 8;
  EXPECT_EQ(what(c), "ValueError: mesh.shape = [2,2,4]: world = 8 but the mesh holds 16 ranks");
  c = sample();
  c.backend = "";
  EXPECT_EQ(what(c), R"(ValueError: backend = "": must be 1 to 64 bytes long, not 0)");
  c = sample();
  c.backend = "\xff";
  EXPECT_EQ(what(c), R"(ValueError: backend = "�": not valid UTF-8)");
  c = sample();
  c.mesh_names.pop_back();
  EXPECT_EQ(what(c), R"(ValueError: mesh.names = ["pp","dp"]: 2 names for the 3 axes of mesh.shape = [2,2,4])");
  c = sample();
  c.axes["tp"]["all_reduce"].samples = 0;
  EXPECT_EQ(what(c), "ValueError: axes.tp.all_reduce.samples = 0: must be >= 1");
}

// ---- loading -------------------------------------------------------------------------------------------------

class CalibrationFiles : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("meshloom-cost-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  static std::string quoted(const fs::path& p) { return "\"" + p.string() + "\""; }
  fs::path dir_;
};

TEST_F(CalibrationFiles, LoadsAFile) {
  const fs::path path = write("calibration.json", kSampleText);
  EXPECT_EQ(load_calibration(path), sample());
  EXPECT_EQ(load_calibration(write("base.json", kBase)), parse_calibration(kBase));
}

TEST_F(CalibrationFiles, MissingFile) {
  const fs::path path = dir_ / "missing.json";
  EXPECT_EQ(error_of([&] { (void)load_calibration(path); }, ErrorKind::RuntimeError),
            "RuntimeError: cannot read calibration " + quoted(path) + ": No such file or directory");
}

TEST_F(CalibrationFiles, Directory) {
  EXPECT_EQ(error_of([&] { (void)load_calibration(dir_); }, ErrorKind::RuntimeError),
            "RuntimeError: cannot read calibration " + quoted(dir_) + ": Is a directory");
}

TEST_F(CalibrationFiles, OversizedFile) {
  const fs::path path = write("big.json", std::string((std::size_t{16} << 20) + 1, ' '));
  EXPECT_EQ(error_of([&] { (void)load_calibration(path); }, ErrorKind::ValueError),
            "ValueError: " + quoted(path) + ": the file is larger than 16777216 bytes (16 MiB)");
}

TEST_F(CalibrationFiles, ErrorsNameTheFile) {
  const fs::path path = write("bad.json", with("3.1", "0"));
  EXPECT_EQ(error_of([&] { (void)load_calibration(path); }, ErrorKind::ValueError),
            "ValueError: " + quoted(path) + ": axes.tp.all_reduce.busbw_gbps = 0.0: must be finite and > 0");
  const fs::path empty = write("empty.json", "");
  EXPECT_TRUE(error_of([&] { (void)load_calibration(empty); }, ErrorKind::ValueError)
                  .starts_with("ValueError: " + quoted(empty) + ": not valid JSON: "));
  const fs::path odd = write("we\"ird\\name.json", "[]");
  EXPECT_EQ(error_of([&] { (void)load_calibration(odd); }, ErrorKind::ValueError),
            "ValueError: \"" + (dir_ / "we\\\"ird\\\\name.json").string() + "\": a calibration is a JSON object, got an array");
}

TEST_F(CalibrationFiles, SavedTextLoadsBack) {
  const Calibration c = sample();
  EXPECT_EQ(load_calibration(write("saved.json", to_json_text(c))), c);
}

}  // namespace
}  // namespace meshloom

namespace meshloom {
namespace {

// ---- keyed curves: "rank_hosts" and "groups" (optional: version-1 files without them still read) ----------------

const std::string kCurves =
    R"(, "rank_hosts": [0, 0, 0, 0, 1, 1, 1, 1], "groups": [)"
    R"({"collective": "all_reduce", "n": 4, "hosts": 1, "ranks_per_host": 4, "model": "piecewise", )"
    R"("alpha_us": 12.0, "busbw_gbps": 3.1, "r2": 0.998, "samples": 3, )"
    R"("holdout": {"median": 0.04, "p90": 0.11, "points": 1}, "points": [[4096, 20.5], [16384, 24.0], [65536, 60.0]]}, )"
    R"({"collective": "all_gather", "n": 2, "hosts": 2, "ranks_per_host": 1, "model": "piecewise", "points": [[1024, 9.0]]}]})";

// kBase with curves, and one `from` replaced by `to` in them.
std::string curves_with(const std::string& from = "", const std::string& to = "") {
  std::string tail = kCurves;
  if (!from.empty()) {
    const auto at = tail.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    tail.replace(at, from.size(), to);
  }
  return kBase.substr(0, kBase.size() - 1) + tail;
}

// The error of parsing `text` with its first `from` replaced by `to`.
std::string error_replacing(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return error_of([&] { (void)parse_calibration(text); }, ErrorKind::ValueError);
}

TEST(CalibrationCurves, ReadAndRoundTrip) {
  const Calibration c = parse_calibration(curves_with());
  EXPECT_EQ(c.rank_hosts, (std::vector<std::int64_t>{0, 0, 0, 0, 1, 1, 1, 1}));
  ASSERT_EQ(c.groups.size(), 2U);
  EXPECT_EQ(c.groups[0].collective, "all_reduce");
  EXPECT_EQ(c.groups[0].shape, (GroupShape{4, 1, 4}));
  EXPECT_EQ(c.groups[0].model, CurveModel::Piecewise);
  ASSERT_TRUE(c.groups[0].fit);
  EXPECT_EQ(c.groups[0].fit->samples, 3);
  ASSERT_TRUE(c.groups[0].holdout);
  EXPECT_EQ(c.groups[0].holdout->p90, 0.11);
  EXPECT_EQ(c.groups[0].points[1], (CurvePoint{16384, 24.0}));
  EXPECT_FALSE(c.groups[1].fit);
  EXPECT_FALSE(c.groups[1].holdout);
  const std::string text = to_json_text(c);
  EXPECT_EQ(parse_calibration(text), c);
  EXPECT_EQ(to_json_text(parse_calibration(text)), text);
  // Files without curves keep reading, and print without the fields.
  EXPECT_EQ(to_json_text(parse_calibration(kBase)).find("groups"), std::string::npos);
}

TEST(CalibrationCurves, EveryValidationError) {
  const auto error = [](const std::string& text) { return error_of([&] { (void)parse_calibration(text); }, ErrorKind::ValueError); };
  EXPECT_EQ(error(curves_with("[4096, 20.5], [16384, 24.0]", "[16384, 20.5], [4096, 24.0]")),
            "ValueError: groups[0].points[1][0] = 4096.0: bytes must ascend strictly (groups[0].points[0] has 16384.0)");
  EXPECT_EQ(error(curves_with("[1024, 9.0]", "[1024, 0]")), "ValueError: groups[1].points[0][1] = 0.0: time_us must be finite and > 0");
  EXPECT_EQ(error(curves_with("[1024, 9.0]", "[0, 9.0]")), "ValueError: groups[1].points[0][0] = 0.0: bytes must be finite and > 0");
  EXPECT_EQ(error(curves_with("[1024, 9.0]", "[1024]")), "ValueError: groups[1].points[0] = [1024]: a point is [bytes, time_us]");
  EXPECT_EQ(error(curves_with(R"("points": [[1024, 9.0]])", R"("points": [])")), "ValueError: groups[1].points: a curve needs at least one point");
  EXPECT_EQ(error(curves_with(R"("model": "piecewise", "points")", R"("model": "cubic", "points")")),
            "ValueError: groups[1].model = \"cubic\": expected \"alpha_beta\" or \"piecewise\"");
  EXPECT_EQ(error(curves_with(R"("model": "piecewise", "points")", R"("model": "alpha_beta", "points")")),
            "ValueError: groups[1].model = \"alpha_beta\": needs alpha_us, busbw_gbps, r2 and samples");
  EXPECT_EQ(error(curves_with(R"("samples": 3, )", "")),
            "ValueError: groups[0]: an alpha-beta fit needs all of alpha_us, busbw_gbps, r2 and samples (or none of them)");
  EXPECT_EQ(error(curves_with(R"("n": 2, "hosts": 2)", R"("n": 2, "hosts": 3)")), "ValueError: groups[1].hosts = 3: must be in 1..n = 2");
  EXPECT_EQ(error(curves_with(R"("n": 4, "hosts": 1, "ranks_per_host": 4)", R"("n": 4, "hosts": 1, "ranks_per_host": 2)")),
            "ValueError: groups[0].ranks_per_host = 2: n = 4 ranks on hosts = 1 need ranks_per_host * hosts >= n and "
            "ranks_per_host + hosts - 1 <= n");
  EXPECT_EQ(error(curves_with(R"("n": 4, "hosts")", R"("n": 9, "hosts")")), "ValueError: groups[0].n = 9: must be in 1..world = 8");
  EXPECT_EQ(error(curves_with(R"("collective": "all_gather", "n": 2, "hosts": 2, "ranks_per_host": 1)",
                              R"("collective": "all_reduce", "n": 4, "hosts": 1, "ranks_per_host": 4)")),
            "ValueError: groups[1]: all_reduce on 4 ranks on 1 host (4 per host) has a curve already (groups[0])");
  EXPECT_EQ(error(curves_with("[0, 0, 0, 0, 1, 1, 1, 1]", "[0, 0]")),
            "ValueError: rank_hosts: 2 hosts for world = 8 ranks: one host index per world rank");
  EXPECT_EQ(error(curves_with("[0, 0, 0, 0, 1, 1, 1, 1]", "[0, 0, 0, 0, 1, 1, 1, 8]")),
            "ValueError: rank_hosts[7] = 8: a host index in 0..world-1");
  EXPECT_EQ(error(curves_with(R"("rank_hosts": [0, 0, 0, 0, 1, 1, 1, 1], )", "")),
            "ValueError: rank_hosts: required with \"groups\": the curves are keyed by the hosts of the calibrated job's ranks");
  EXPECT_EQ(error(curves_with(R"("median": 0.04, "p90": 0.11)", R"("median": 0.2, "p90": 0.11)")),
            "ValueError: groups[0].holdout.p90 = 0.11: must be finite and >= median = 0.2");
  // Fields that contradict each other: more held-out sizes than calibrate holds out (every other one, the largest
  // kept), a curve of a shape the job's hosts could not hold.
  EXPECT_EQ(error(curves_with(R"("points": 1})", R"("points": 2})")),
            "ValueError: groups[0].holdout.points = 2: must be in 1..1 (half of the curve's 3 points)");
  EXPECT_EQ(error(curves_with(R"("points": [[4096, 20.5], [16384, 24.0], [65536, 60.0]])",
                              R"("points": [[4096, 20.5]])")),
            "ValueError: groups[0].holdout: a curve of 1 point has nothing to hold out");
  EXPECT_EQ(error(curves_with("[0, 0, 0, 0, 1, 1, 1, 1]", "[0, 0, 0, 0, 0, 0, 0, 0]")),
            "ValueError: groups[1].hosts = 2: rank_hosts places the calibrated job on 1 host");
  EXPECT_EQ(error(curves_with("[0, 0, 0, 0, 1, 1, 1, 1]", "[0, 1, 0, 1, 0, 1, 2, 3]")),
            "ValueError: groups[0].ranks_per_host = 4: rank_hosts puts at most 3 of the calibrated job's ranks on one "
            "host");
  EXPECT_EQ(error(curves_with(R"("model": "piecewise", "points": [[1024)", R"("model": "piecewise", "shape": 1, "points": [[1024)")),
            "ValueError: groups[1].shape: unknown field; groups[1] has collective, n, hosts, ranks_per_host, model, "
            "alpha_us, busbw_gbps, r2, samples, holdout, points, as_run");
}

TEST(CalibrationCurves, AsRunReadsRoundTripsAndIsValidated) {
  const std::string with = curves_with(R"("points": [[1024, 9.0]])",
                                       R"("points": [[1024, 9.0]], "as_run": [[1024, 1.25, 7], [1048576, 0.8, 3]])");
  const Calibration c = parse_calibration(with);
  EXPECT_EQ(c.groups[1].as_run, (std::vector<AsRunPoint>{{1024, 1.25, 7}, {1048576, 0.8, 3}}));
  EXPECT_TRUE(c.groups[0].as_run.empty());
  const std::string text = to_json_text(c);
  EXPECT_NE(text.find(R"("as_run": [[1024.0, 1.25, 7], [1048576.0, 0.8, 3]])"), std::string::npos) << text;
  EXPECT_EQ(parse_calibration(text), c);
  EXPECT_EQ(to_json_text(parse_calibration(text)), text);
  EXPECT_EQ(to_json_text(parse_calibration(curves_with())).find("as_run"), std::string::npos);  // none, not printed

  const auto error = [&](const std::string& from, const std::string& to) { return error_replacing(with, from, to); };
  EXPECT_EQ(error("[1048576, 0.8, 3]", "[512, 0.8, 3]"),
            "ValueError: groups[1].as_run[1][0] = 512.0: bytes must ascend strictly (groups[1].as_run[0] has 1024.0)");
  EXPECT_EQ(error("[1024, 1.25, 7]", "[1024, 0, 7]"),
            "ValueError: groups[1].as_run[0][1] = 0.0: factor must be finite and > 0");
  EXPECT_EQ(error("[1024, 1.25, 7]", "[1024, 1.25, 0]"), "ValueError: groups[1].as_run[0][2] = 0: steps must be >= 1");
  EXPECT_EQ(error("[1024, 1.25, 7]", "[0, 1.25, 7]"), "ValueError: groups[1].as_run[0][0] = 0.0: bytes must be finite and > 0");
  EXPECT_EQ(error("[1024, 1.25, 7]", "[1024, 1.25]"),
            "ValueError: groups[1].as_run[0] = [1024,1.25]: an as-run point is [bytes, factor, steps]");
  EXPECT_TRUE(error("[1024, 1.25, 7]", "[1024, 1.25, 7.5]").starts_with("ValueError: groups[1].as_run[0][2] = 7.5"));
}

TEST(CalibrationCurves, AxisCorrectionsAndRankCpusReadRoundTripAndAreValidated) {
  // (2,4) on hosts 0000 1111: axis 0's groups are 2 ranks on 2 hosts (the all_gather curve), axis 1's 4 ranks on 1
  // host (the all_reduce curve).
  const std::string with = curves_with(
      R"("points": [[1024, 9.0]]}])",
      R"("points": [[1024, 9.0]]}], "rank_cpus": ["0", "1", "2", "3", "0-1", "2,3", "4-7", "0"], )"
      R"("axis_corrections": [{"axes": [1], "collective": "all_reduce", "factors": [[1024, 0.8, 15], [65536, 1.1, 15]]}, )"
      R"({"axes": [0], "collective": "all_gather", "factors": [[4096, 1.25, 15]]}])");
  const Calibration c = parse_calibration(with);
  EXPECT_EQ(c.rank_cpus, (std::vector<std::string>{"0", "1", "2", "3", "0-1", "2,3", "4-7", "0"}));
  ASSERT_EQ(c.axis_corrections.size(), 2U);
  EXPECT_EQ(c.axis_corrections[0].axes, (std::vector<std::size_t>{1}));
  EXPECT_EQ(c.axis_corrections[0].factors, (std::vector<AsRunPoint>{{1024, 0.8, 15}, {65536, 1.1, 15}}));
  EXPECT_EQ(c.axis_corrections[1].axes, (std::vector<std::size_t>{0}));
  EXPECT_EQ(find_axis_correction(c, {0}, "all_gather"), &c.axis_corrections[1]);
  EXPECT_EQ(find_axis_correction(c, {0}, "all_reduce"), nullptr);
  const std::string text = to_json_text(c);
  EXPECT_NE(text.find(R"({"axes": [1], "collective": "all_reduce",
     "factors": [[1024.0, 0.8, 15], [65536.0, 1.1, 15]]})"),
            std::string::npos)
      << text;
  EXPECT_EQ(parse_calibration(text), c);
  EXPECT_EQ(to_json_text(parse_calibration(text)), text);
  EXPECT_EQ(to_json_text(parse_calibration(curves_with())).find("axis_corrections"), std::string::npos);

  const auto error = [&](const std::string& from, const std::string& to) { return error_replacing(with, from, to); };
  EXPECT_EQ(error(R"("axes": [1])", R"("axes": [2])"),
            "ValueError: axis_corrections[0].axes = [2]: ascending axes of mesh.shape = [2,4] (0..1)");
  EXPECT_EQ(error(R"("axes": [0])", R"("axes": [1, 0])"),
            "ValueError: axis_corrections[1].axes = [1,0]: ascending axes of mesh.shape = [2,4] (0..1)");
  EXPECT_EQ(error(R"("axes": [1])", R"("axes": [])"), "ValueError: axis_corrections[0].axes = []: a correction names at least one axis");
  EXPECT_EQ(error(R"("axes": [1])", R"("axes": [-1])"),
            "ValueError: axis_corrections[0].axes = [-1]: axes are mesh axis indices >= 0");
  EXPECT_EQ(error(R"("collective": "all_reduce", "factors")", R"("collective": "gather", "factors")"),
            "ValueError: axis_corrections[0].collective = \"gather\": unknown collective; expected all_gather, "
            "all_reduce, all_to_all, broadcast, reduce_scatter");
  EXPECT_EQ(error("[[4096, 1.25, 15]]", "[]"), "ValueError: axis_corrections[1].factors: a correction needs at least one point");
  EXPECT_EQ(error("[4096, 1.25, 15]", "[4096, -1, 15]"),
            "ValueError: axis_corrections[1].factors[0][1] = -1.0: factor must be finite and > 0");
  EXPECT_EQ(error("[4096, 1.25, 15]", "[4096, 1.25]"),
            "ValueError: axis_corrections[1].factors[0] = [4096,1.25]: a correction point is [bytes, factor, steps]");
  EXPECT_EQ(error(R"("axes": [0], "collective": "all_gather")", R"("axes": [1], "collective": "all_reduce")"),
            "ValueError: axis_corrections[1]: all_reduce on axes [1] has a correction already (axis_corrections[0])");
  EXPECT_EQ(error(R"("collective": "all_gather", "factors")", R"("collective": "all_gather", "n": 2, "factors")"),
            "ValueError: axis_corrections[1].n: unknown field; axis_corrections[1] has axes, collective, factors, "
            "as_run");
  // An axis' own as-run points (refine's): read, written back, and checked like a curve's.
  Calibration with_as_run = c;
  with_as_run.axis_corrections[1].as_run = {{4096, 0.7, 3}, {1048576, 1.4, 5}};
  const std::string as_run_text = to_json_text(with_as_run);
  EXPECT_NE(as_run_text.find(R"("factors": [[4096.0, 1.25, 15]],
     "as_run": [[4096.0, 0.7, 3], [1048576.0, 1.4, 5]]})"),
            std::string::npos)
      << as_run_text;
  EXPECT_EQ(parse_calibration(as_run_text), with_as_run);
  EXPECT_EQ(error_replacing(as_run_text, "[1048576.0, 1.4, 5]", "[2048.0, 1.4, 5]"),
            "ValueError: axis_corrections[1].as_run[1][0] = 2048.0: bytes must ascend strictly "
            "(axis_corrections[1].as_run[0] has 4096.0)");
  EXPECT_EQ(error_replacing(as_run_text, "[4096.0, 0.7, 3]", "[4096.0, 0.7, 0]"),
            "ValueError: axis_corrections[1].as_run[0][2] = 0: steps must be >= 1");
  // A correction scales a curve of the calibration: the collective on its axes' one group shape.
  EXPECT_EQ(error(R"("axes": [0], "collective": "all_gather")", R"("axes": [0], "collective": "all_reduce")"),
            "ValueError: axis_corrections[1]: all_reduce on axes [0]: no curve of their groups' shape (2 ranks on 2 "
            "hosts (1 per host)), so nothing to correct");
  EXPECT_EQ(error(R"("axes": [0], "collective": "all_gather")", R"("axes": [0, 1], "collective": "all_gather")"),
            "ValueError: axis_corrections[1]: all_gather on axes [0,1]: no curve of their groups' shape (8 ranks on 2 "
            "hosts (4 per host)), so nothing to correct");
  EXPECT_EQ(error(R"(["0", "1", "2", "3", "0-1", "2,3", "4-7", "0"])", R"(["0", "1"])"),
            "ValueError: rank_cpus: 2 CPU lists for world = 8 ranks: one per world rank");
  EXPECT_EQ(error(R"("4-7")", R"("7-4")"),
            "ValueError: rank_cpus[6] = \"7-4\": a CPU list as Linux writes one: ascending CPUs and ranges a-b with "
            "a < b (\"0-3,8\")");
  EXPECT_EQ(error(R"("rank_cpus": ["0", "1", "2", "3", "0-1", "2,3", "4-7", "0"], )", ""),
            "ValueError: axis_corrections: needs \"rank_cpus\": corrections hold for ranks bound as the calibrated "
            "job's were");
  // Corrections scale curves: none without them.
  Calibration no_curves = c;
  no_curves.groups.clear();
  EXPECT_EQ(error_of([&] { (void)to_json_text(no_curves); }, ErrorKind::ValueError),
            "ValueError: axis_corrections: needs \"groups\": a correction scales the curve of its axis' group shape");
}

TEST(CalibrationCurves, CpuListsAreReadAsLinuxWritesThem) {
  EXPECT_EQ(parse_cpu_list("0-2,4,6-7"), (std::vector<int>{0, 1, 2, 4, 6, 7}));
  EXPECT_EQ(parse_cpu_list("3"), (std::vector<int>{3}));
  EXPECT_EQ(parse_cpu_list("0,2"), (std::vector<int>{0, 2}));
  for (const char* bad : {"", "-", "1-", "-1", "3-1", "1-1", "0,,1", "1,0", "0-1,1", ",0", "0,", "a", "0 1", "0-1-2",
                          "1000000"}) {
    EXPECT_FALSE(parse_cpu_list(bad)) << bad;
  }
}

TEST(CalibrationTransport, ReadRoundTripAndValidated) {
  // The settings it was measured under: read, written back in name order, {} kept apart from not recorded.
  const std::string with = kBase.substr(0, kBase.size() - 1) +
                           R"(, "transport": {"OMPI_MCA_btl_vader_single_copy_mechanism": "none", "NCCL_PROTO": "Simple"}})";
  const Calibration c = parse_calibration(with);
  ASSERT_TRUE(c.transport.has_value());
  EXPECT_EQ(*c.transport, (comm::TransportSettings{{"NCCL_PROTO", "Simple"},
                                                   {"OMPI_MCA_btl_vader_single_copy_mechanism", "none"}}));
  const std::string text = to_json_text(c);
  EXPECT_NE(text.find("\n  \"transport\": {\"NCCL_PROTO\": \"Simple\", \"OMPI_MCA_btl_vader_single_copy_mechanism\": "
                      "\"none\"}\n}\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(parse_calibration(text), c);
  EXPECT_FALSE(parse_calibration(kBase).transport.has_value());
  EXPECT_EQ(to_json_text(parse_calibration(kBase)).find("transport"), std::string::npos);
  Calibration none_set = parse_calibration(kBase);
  none_set.transport = comm::TransportSettings{};
  const std::string empty_text = to_json_text(none_set);
  EXPECT_NE(empty_text.find("\"transport\": {}"), std::string::npos) << empty_text;
  EXPECT_EQ(parse_calibration(empty_text), none_set);

  const auto error = [&](const std::string& from, const std::string& to) { return error_replacing(with, from, to); };
  EXPECT_EQ(error(R"("NCCL_PROTO": "Simple")", R"("NCCL_PROTO": 3)"),
            "ValueError: transport.NCCL_PROTO = 3: expected a string, got an integer");
  EXPECT_EQ(error(R"("NCCL_PROTO")", R"("HOME")"),
            "ValueError: transport = \"HOME\": not a setting that shapes a collective's cost "
            "(meshloom/comm/transport.hpp lists them)");
  EXPECT_EQ(error(R"("NCCL_PROTO")", R"("NCCL_DEBUG")"),
            "ValueError: transport = \"NCCL_DEBUG\": not a setting that shapes a collective's cost "
            "(meshloom/comm/transport.hpp lists them)");
  EXPECT_EQ(error(R"("Simple")", R"("Sim\nple")"),
            "ValueError: transport.NCCL_PROTO = \"Sim\\nple\": control characters are not allowed here");
  EXPECT_EQ(error(R"({"OMPI_MCA_btl_vader_single_copy_mechanism": "none", "NCCL_PROTO": "Simple"})", "[]"),
            "ValueError: transport = []: expected an object, got an array");
}

}  // namespace
}  // namespace meshloom
