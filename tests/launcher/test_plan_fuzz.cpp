// Fuzzing answer_plan_line: random requests, corrupted lines and random bytes must each give exactly one line of
// JSON, an object with a boolean "ok", and an error of the form "<Kind>: <message>" when not ok; a plan answer has
// the contract's fields, consistent with each other.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "plan_batch.hpp"

namespace {

using json = nlohmann::json;
using meshloom::launcher::answer_plan_line;
using meshloom::launcher::PlanBatchLimits;

class Gen : public meshloom::test::FuzzRandom {
public:
  explicit Gen(std::uint32_t seed) : FuzzRandom(seed) {}

  json junk() {
    switch (pick(8)) {
      case 0: return nullptr;
      case 1: return true;
      case 2: return 1.5;
      case 3: return "str";
      case 4: return json::array({1, "a"});
      case 5: return json::object({{"k", 1}});
      case 6: return -1;
      default: return 9223372036854775807LL;
    }
  }
  json maybe(json v) { return coin(6) ? junk() : v; }

  // A state of `axes` placements on a tensor of `dims` dims, sometimes with an explicit shard order.
  std::string state(int axes, int dims) {
    std::string s;
    std::vector<int> per_dim(static_cast<std::size_t>(dims > 0 ? dims : 1), 0);
    std::vector<int> shard_dim(static_cast<std::size_t>(axes), -1);
    for (int a = 0; a < axes; ++a) {
      const int k = pick(10);
      if (k < 3) {
        s += "R";
      } else if (k < 8 && dims > 0) {
        const int d = pick(dims + (coin(3) ? 1 : 0));  // now and then a dim past the tensor
        shard_dim[static_cast<std::size_t>(a)] = d;
        s += "S(" + std::to_string(d) + ")";
        if (d < dims) ++per_dim[static_cast<std::size_t>(d)];
      } else {
        static const char* ops[] = {"P", "P(sum)", "P(avg)", "P(max)", "P(min)"};
        s += ops[pick(coin(80) ? 2 : 5)];
      }
    }
    if (coin(90)) return s;
    return s + (coin(50) ? "X" : "S(0)[3]");  // a parse error
  }

  json request() {
    json line = json::object();
    const int axes = 1 + pick(coin(90) ? 3 : 5);
    const int dims = pick(4);
    json mesh = json::array();
    for (int i = 0; i < axes; ++i) mesh.push_back(coin(95) ? 1 + pick(4) : (coin(50) ? 0 : 2147483648LL));
    json tensor = json::array();
    for (int i = 0; i < dims; ++i) tensor.push_back(coin(95) ? 1 + pick(12) : (coin(50) ? 0 : 4611686018427387904LL));
    if (coin(98)) line["mesh"] = maybe(mesh);
    if (coin(98)) line["tensor_shape"] = maybe(tensor);
    if (coin(98)) line["src"] = maybe(state(axes, dims));
    if (coin(98)) line["dst"] = maybe(state(axes, dims));
    static const char* planners[] = {"graph", "greedy", "auto", "bogus"};
    if (coin(50)) line["planner"] = maybe(planners[pick(4)]);
    if (coin(30)) line["variant"] = maybe(coin(50) ? "seed" : "newest");
    static const char* models[] = {"fixed", "comm", "calibrated", "nope"};
    if (coin(50)) line["cost_model"] = maybe(models[pick(coin(90) ? 2 : 4)]);
    if (coin(20)) {
      json w = json::object();
      static const char* names[] = {"all_reduce", "all_to_all", "all_gather", "reduce_scatter", "chunk", "x"};
      for (int i = pick(4); i > 0; --i) w[names[pick(coin(95) ? 5 : 6)]] = maybe(json(pick(5)));
      line["weights"] = maybe(w);
    }
    if (coin(20)) line["itemsize"] = maybe(json(coin(90) ? 1 + pick(8) : pick(100)));
    if (coin(20)) line["devices_per_host"] = maybe(json(coin(90) ? 1 + pick(8) : -pick(3)));
    if (coin(20)) {
      json c = json::array();
      for (int i = 0; i < axes; ++i) c.push_back(pick(3));
      line["coordinate"] = maybe(c);
    }
    if (coin(25)) {
      json f = json::array();
      for (int g = pick(3); g > 0; --g) {
        json group = json::array();
        for (int a = 0; a < axes; ++a) {
          if (coin(70)) group.push_back(a);
        }
        f.push_back(maybe(group));
      }
      line["flattened"] = maybe(f);
    }
    if (axes >= 2 && coin(15)) {
      // Mergeable: every axis partial (or sharding dim 0) to replicated, with the whole mesh flattened.
      const bool shard = dims > 0 && coin(50);
      std::string src;
      std::string dst;
      json group = json::array();
      for (int a = 0; a < axes; ++a) {
        src += shard ? "S(0)" : "P";
        dst += "R";
        group.push_back(a);
      }
      line["src"] = src;
      line["dst"] = maybe(dst);
      line["flattened"] = json::array({group});
    }
    if (coin(10)) {
      static const char* names[] = {"dp", "tp", "cp", "pp", "ep"};
      json n = json::array();
      for (int i = 0; i < axes + (coin(5) ? 1 : 0); ++i) n.push_back(names[i % 5]);
      line["names"] = maybe(n);
    }
    if (coin(10)) line["state_budget"] = maybe(json(pick(50)));
    if (coin(3)) line["extra"] = junk();
    return line;
  }
};

// One answer: one JSON line; a plan holds the contract's fields, its path matches its trace, its steps its cost.
void check_answer(const std::string& line, const std::string& answer) {
  json j;
  meshloom::test::check_answer_line(line, answer, j);
  if (::testing::Test::HasFatalFailure() || !j["ok"].get<bool>()) return;
  ASSERT_EQ(j.size(), 7U) << answer;
  ASSERT_TRUE(j["cost"].is_number() && j["path"].is_array() && j["trace"].is_string() && j["steps"].is_array() &&
              j["comm_counts"].is_object() && j["states_explored"].is_number_unsigned())
      << answer;
  ASSERT_GE(j["path"].size(), 1U) << answer;
  ASSERT_LE(j["steps"].size(), j["path"].size() - 1) << answer;
  for (const auto& s : j["steps"]) {
    ASSERT_EQ(s.size(), 8U) << answer;
    ASSERT_TRUE(s["axes"].is_array() && !s["axes"].empty() && s["merged"].is_boolean() && s["bytes"].is_number_integer())
        << answer;
    EXPECT_EQ(s["merged"].get<bool>(), s["axes"].size() > 1) << answer;
  }
  EXPECT_TRUE(std::isfinite(j["cost"].get<double>())) << answer;
}

TEST(PlanBatchFuzz, EveryLineGetsOneJsonAnswer) {
  Gen gen(20240612U);
  PlanBatchLimits limits;
  limits.max_state_budget = 20000;  // keeps a search under sanitizers short
  int merged = 0;
  const auto run = meshloom::test::feed_mixed_lines(
      gen, 12000, [&] { return gen.request().dump(); },
      [&](const std::string& line) { return answer_plan_line(line, limits); }, check_answer,
      [&](const json& j) { for (const auto& s : j["steps"]) merged += s["merged"].get<bool>() ? 1 : 0; });
  if (HasFatalFailure()) return;
  // The generator reaches past the field checks into the planner, merging included.
  EXPECT_GT(run.ok_lines, 1500);
  EXPECT_GT(merged, 30);
}

TEST(PlanBatchFuzz, HostileRequests) {
  const std::vector<std::string> lines = {
      std::string(1 << 20, '['),
      std::string(1 << 20, '{'),
      R"J({"mesh": [2147483648, 2147483648, 2147483648, 2147483648], "tensor_shape": [8], "src": "S(0)RRR", "dst": "RRRR"})J",
      R"J({"mesh": [2147483648, 2147483648, 2147483648], "tensor_shape": [8], "src": "S(0)RR", "dst": "RRR", "devices_per_host": 2147483648})J",
      R"J({"mesh": [2147483648, 2147483648, 2147483648], "tensor_shape": [8], "src": "S(0)RR", "dst": "RRR", "devices_per_host": 1})J",
      R"J({"mesh": [2, 2], "tensor_shape": [4611686018427387904, 4], "src": "S(0)R", "dst": "RR"})J",
      R"J({"mesh": [2], "tensor_shape": [9223372036854775807], "src": "S(0)", "dst": "R", "itemsize": 64})J",
      R"J({"mesh": [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2], "tensor_shape": [8], "src": "RRRRRRRRRRRRR", "dst": "RRRRRRRRRRRRR"})J",
      R"J({"mesh": [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], "tensor_shape": [8], "src": "R", "dst": "R"})J",
      R"J({"mesh": [2, 2, 2, 2, 2, 2], "tensor_shape": [8, 8, 8, 8], "src": "S(0)S(1)S(2)S(3)P(max)P(sum)", "dst": "P(max)P(sum)S(3)S(2)S(1)S(0)", "state_budget": 50})J",
      R"J({"mesh": [2], "tensor_shape": [], "src": "R", "dst": "P"})J",
      R"J({"mesh": [], "tensor_shape": [4], "src": "", "dst": ""})J",
      R"J({"mesh": [2], "tensor_shape": [4], "src": "S(99999999999999999999)", "dst": "R"})J",
      R"J({"mesh": [2], "tensor_shape": [4], "src": "\ud800", "dst": "R"})J",
      R"J({"mesh": [2], "tensor_shape": [4], "src": "S(0)", "dst": "R", "calibration": "/dev/zero"})J",
      R"J({"mesh": [2], "tensor_shape": [4], "src": "S(0)", "dst": "R", "calibration": "/"})J",
      R"J({"mesh": [2], "tensor_shape": [4], "src": "S(0)", "dst": "R", "cost_model": "fixed", "weights": {"all_gather": 1.7976931348623157e308}})J",
      R"J({"mesh": [2, 2], "tensor_shape": [4], "src": "RR", "dst": "RR", "flattened": [[0, 18446744073709551615]]})J",
  };
  for (const auto& line : lines) {
    const auto start = std::chrono::steady_clock::now();
    check_answer(line, answer_plan_line(line));
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0) << line.substr(0, 200);
  }
}

}  // namespace
