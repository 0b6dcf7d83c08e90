// Fuzzing answer_mesh_line: random scripts, corrupted lines and random bytes must each give exactly one line of
// JSON, an object with a boolean "ok", and an error of the form "<Kind>: <message>" when not ok.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "mesh_batch.hpp"

namespace {

using json = nlohmann::json;
using meshloom::launcher::answer_mesh_line;
using meshloom::launcher::MeshBatchLimits;

class Gen : public meshloom::test::FuzzRandom {
public:
  explicit Gen(std::uint32_t seed) : FuzzRandom(seed) {}

  json name() {
    static const std::vector<std::string> names = {"dp", "tp", "cp", "pp", "ep", "dp_tp", "dp_cp", "x", "", "root", "a"};
    return names[static_cast<std::size_t>(pick(static_cast<int>(names.size())))];
  }
  json small_int() {
    static const std::vector<std::int64_t> ints = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, -1, -2, 1000, 2147483647,
                                                   2147483648, -9223372036854775807};
    return ints[static_cast<std::size_t>(pick(static_cast<int>(ints.size())))];
  }
  json junk() {
    switch (pick(7)) {
      case 0: return nullptr;
      case 1: return true;
      case 2: return 1.5;
      case 3: return "str";
      case 4: return json::array({1, "a"});
      case 5: return json::object({{"k", 1}});
      default: return small_int();
    }
  }
  json maybe(json v) { return coin(8) ? junk() : v; }

  json mesh() {
    json m = json::object();
    const int nd = 1 + pick(3);
    if (coin(75)) {
      json shape = json::array();
      for (int i = 0; i < nd; ++i) shape.push_back(1 + pick(4));
      m["shape"] = maybe(shape);
    } else {
      // A permutation of 0..n-1 shaped as nested lists.
      std::vector<int> dims;
      int n = 1;
      for (int i = 0; i < nd; ++i) {
        dims.push_back(1 + pick(3));
        n *= dims.back();
      }
      std::vector<int> ranks(static_cast<std::size_t>(n));
      for (int i = 0; i < n; ++i) ranks[static_cast<std::size_t>(i)] = i + (coin(10) ? pick(4) : 0);
      std::shuffle(ranks.begin(), ranks.end(), rng());
      std::size_t pos = 0;
      std::function<json(std::size_t)> build = [&](std::size_t d) -> json {
        if (d == dims.size()) return ranks[pos++];
        json a = json::array();
        for (int i = 0; i < dims[d]; ++i) a.push_back(build(d + 1));
        return a;
      };
      m["ranks"] = maybe(build(0));
    }
    if (coin(80)) {
      static const std::vector<std::string> axis = {"dp", "cp", "tp", "pp"};
      json names = json::array();
      for (int i = 0; i < nd; ++i) names.push_back(axis[static_cast<std::size_t>(i)]);
      if (coin(5)) names.push_back("ep");
      m["names"] = maybe(names);
    }
    if (coin(3)) m["bogus"] = 1;
    return m;
  }

  json names_list() {
    json a = json::array();
    const int n = pick(4);
    for (int i = 0; i < n; ++i) a.push_back(name());
    return maybe(a);
  }
  json axis() { return coin(50) ? maybe(name()) : maybe(small_int()); }

  json op() {
    static const std::vector<std::string> ops = {"describe", "create",     "slice",  "flatten",    "unflatten", "concatenate",
                                                 "submesh_of", "groups",   "coordinate", "local_rank", "equal", "bogus"};
    const std::string kind = ops[static_cast<std::size_t>(pick(static_cast<int>(ops.size())))];
    json o = {{"op", maybe(kind)}};
    if (coin(30)) o["on"] = maybe(name());
    if (coin(40)) o["as"] = maybe(name());
    if (kind == "create") o["mesh"] = mesh();
    if (kind == "slice" || kind == "submesh_of") o["names"] = names_list();
    if (kind == "flatten" && coin(50)) o["name"] = maybe(name());
    if (kind == "unflatten") {
      o["dim"] = axis();
      json sizes = json::array();
      const int n = 1 + pick(3);
      for (int i = 0; i < n; ++i) sizes.push_back(1 + pick(4));
      o["sizes"] = maybe(sizes);
      o["names"] = names_list();
    }
    if (kind == "concatenate") o["meshes"] = names_list();
    if (kind == "groups" || (kind == "local_rank" && coin(70))) o["dim"] = axis();
    if (kind == "submesh_of" || kind == "coordinate" || kind == "local_rank") o["rank"] = maybe(small_int());
    if (kind == "equal") o["other"] = maybe(name());
    if (coin(3)) o["extra"] = junk();
    return o;
  }

  json script() {
    json line = json::object();
    if (coin(40)) line["world"] = maybe(coin(80) ? json(1 + pick(16)) : small_int());
    if (coin(97)) line["mesh"] = mesh();
    json ops = json::array();
    const int n = pick(8);
    for (int i = 0; i < n; ++i) ops.push_back(op());
    line["ops"] = maybe(ops);
    return line;
  }
};

// One answer: one line, a JSON object with a boolean ok; errors are "<Kind>: <message>".
void check_answer(const std::string& line, const std::string& answer) {
  json j;
  meshloom::test::check_answer_line(line, answer, j);
  if (::testing::Test::HasFatalFailure() || !j["ok"].get<bool>()) return;
  ASSERT_TRUE(j["results"].is_array()) << answer;
  for (const auto& r : j["results"]) {
    ASSERT_TRUE(r.is_object() && r.contains("ok") && r["ok"].is_boolean()) << answer;
    if (!r["ok"].get<bool>()) meshloom::test::check_error_text(r, answer);
  }
  // One result per op when the ops parsed as a list.
  const json in = json::parse(line, nullptr, false);
  if (in.is_object() && in.contains("ops") && in["ops"].is_array()) {
    EXPECT_EQ(j["results"].size(), in["ops"].size());
  }
}

TEST(MeshBatchFuzz, EveryLineGetsOneJsonAnswer) {
  Gen gen(20240611U);
  MeshBatchLimits limits;
  limits.max_output_ranks = 100000;  // keeps corrupted huge shapes cheap under sanitizers
  int ok_ops = 0;
  const auto run = meshloom::test::feed_mixed_lines(
      gen, 6000, [&] { return gen.script().dump(); },
      [&](const std::string& line) { return answer_mesh_line(line, limits); }, check_answer,
      [&](const json& j) { for (const auto& r : j["results"]) ok_ops += r["ok"].get<bool>() ? 1 : 0; });
  if (HasFatalFailure()) return;
  // The generator reaches past the line checks into the ops.
  EXPECT_GT(run.ok_lines, 1000);
  EXPECT_GT(ok_ops, 1000);
}

TEST(MeshBatchFuzz, HostileShapes) {
  const std::vector<std::string> lines = {
      std::string(1 << 20, '['),
      std::string(1 << 20, '{'),
      "{\"mesh\": {\"shape\": [2147483647]}, \"ops\": [{\"op\": \"describe\"}, {\"op\": \"coordinate\", \"rank\": 2147483646},"
      " {\"op\": \"local_rank\", \"rank\": 5}, {\"op\": \"submesh_of\", \"names\": [], \"rank\": 0}]}",
      "{\"mesh\": {\"shape\": [2147483647], \"names\": [\"a\"]}, \"ops\": [{\"op\": \"submesh_of\", \"names\": [\"a\"], \"rank\": 3}]}",
      "{\"mesh\": {\"shape\": [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]}, \"ops\": [{\"op\": \"describe\"}]}",
      "{\"mesh\": {\"shape\": [4], \"names\": [\"a\"]}, \"ops\": [{\"op\": \"unflatten\", \"dim\": 0, \"sizes\": "
      "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,4],"
      " \"names\": [\"b\"]}]}",
      "{\"mesh\": {\"shape\": [4]}, \"world\": -5}",
      "{\"mesh\": {\"shape\": [4]}, \"world\": 9223372036854775807}",
      "{\"mesh\": {\"shape\": [0]}}",
      "{\"mesh\": {\"shape\": []}, \"ops\": [{\"op\": \"describe\"}, {\"op\": \"coordinate\", \"rank\": 0}]}",
      "{\"mesh\": {\"shape\": [-1, -1]}}",
      "{\"mesh\": {\"shape\": [3037000500, 3037000500]}}",
      "{\"mesh\": {\"ranks\": [[2147483647, 0]]}, \"ops\": [{\"op\": \"describe\"}, {\"op\": \"coordinate\", \"rank\": 2147483646}]}",
      "{\"mesh\": {\"ranks\": [9223372036854775807]}}",
      "\"\\ud800\"",
      "{\"mesh\": {\"shape\": [2], \"names\": [\"\\u0000\\n\"]}, \"ops\": [{\"op\": \"describe\"}]}",
  };
  for (const auto& line : lines) {
    const auto start = std::chrono::steady_clock::now();
    check_answer(line, answer_mesh_line(line));
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0) << line.substr(0, 200);
  }
}

}  // namespace
