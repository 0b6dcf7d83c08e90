// Fuzz-style tests: thousands of random and corrupted inputs to parse_design and the state parser. Each
// input either parses or throws meshloom::Error; nothing crashes, hangs or throws anything else. What
// parses also survives a save and reparse unchanged. The seed is fixed so a failure reproduces.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "meshloom/design/design.hpp"
#include "meshloom/error.hpp"
#include "meshloom/plan/state.hpp"

namespace meshloom {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

std::vector<std::string> corpus() {
  std::vector<std::string> texts;
  for (const auto& entry : fs::directory_iterator(MESHLOOM_EXAMPLES_DIR)) {
    if (!entry.path().filename().string().ends_with(".meshloom.json")) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    texts.push_back(buffer.str());
  }
  std::sort(texts.begin(), texts.end());
  // A workload that plays every role (the examples use fsdp, tp, cp and pp): a mixture of experts with ep on an fsdp
  // axis, cp and pp, and a design tensor.
  texts.emplace_back(R"json({
  "format": "meshloom-design",
  "version": 2,
  "name": "every role",
  "world": 32,
  "devices_per_host": 8,
  "mesh": {
    "shape": [2, 2, 2, 2, 2],
    "names": ["pp", "dp_replicate", "dp", "cp", "tp"],
    "flattened": [
      {"name": "dp_cp", "axes": ["dp", "cp"]}
    ]
  },
  "tensors": [
    {"name": "w", "shape": [64, 32], "dtype": "float32", "src": "RRS(0)RS(1)", "dst": "RRRRS(1)"}
  ],
  "workload": {
    "tensors": [
      {"tensor": "w", "count": 3}
    ],
    "model": {
      "layers": 3,
      "hidden": 64,
      "ffn": 96,
      "heads": 4,
      "kv_heads": 2,
      "vocab": 100,
      "seq_len": 32,
      "micro_batch": 2,
      "micro_batches": 4,
      "dtype": "bfloat16",
      "grad_dtype": "float32",
      "experts": 4,
      "top_k": 2,
      "sequence_parallel": true,
      "axes": {"fsdp": ["dp", "cp"], "replicate": ["dp_replicate"], "tp": "tp", "cp": "cp", "ep": "dp", "pp": "pp"}
    }
  }
}
)json");
  return texts;
}

// Feeds text to parse_design: true when it parsed. A parsed design must save and reparse to itself.
bool feed_design(const std::string& text) {
  try {
    const Design design = parse_design(text);
    const std::string saved = to_json_text(design);
    EXPECT_EQ(parse_design(saved), design);
    EXPECT_EQ(to_json_text(parse_design(saved)), saved);
    return true;
  } catch (const Error&) {
    return false;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "non-meshloom exception " << e.what() << " for input of " << text.size() << " bytes: "
                  << text.substr(0, 200);
  } catch (...) {
    ADD_FAILURE() << "unknown exception for input: " << text.substr(0, 200);
  }
  return false;
}

// Feeds text to the state parser: parse_state and try_parse_state agree, and a parsed state prints a
// canonical text that parses back to it.
bool feed_state(const std::string& text) {
  std::optional<State> quiet;
  try {
    std::string why;
    quiet = try_parse_state(text, &why);
    EXPECT_EQ(quiet.has_value(), why.empty()) << text;
  } catch (...) {
    ADD_FAILURE() << "try_parse_state threw for: " << text;
    return false;
  }
  try {
    const State state = parse_state(text);
    EXPECT_TRUE(quiet.has_value()) << text;
    if (quiet) {
      EXPECT_EQ(*quiet, state);
    }
    const std::string printed = to_string(state);
    EXPECT_EQ(parse_state(printed), state) << text << " -> " << printed;
    EXPECT_EQ(to_string(parse_state(printed)), printed);
    return true;
  } catch (const Error& e) {
    EXPECT_FALSE(quiet.has_value()) << text;
    EXPECT_EQ(e.kind(), ErrorKind::ValueError);
    return false;
  } catch (...) {
    ADD_FAILURE() << "parse_state threw a non-meshloom exception for: " << text;
    return false;
  }
}

std::string mutate_bytes(std::string text, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> kind(0, 5);
  const int mutations = 1 + static_cast<int>(rng() % 4);
  for (int m = 0; m < mutations && !text.empty(); ++m) {
    const std::size_t at = rng() % text.size();
    switch (kind(rng)) {
      case 0: text[at] = static_cast<char>(text[at] ^ static_cast<char>(1 << (rng() % 8))); break;  // bit flip
      case 1: text.resize(at); break;                                                                // truncation
      case 2: text.erase(at, 1 + rng() % 8); break;                                                  // deletion
      case 3: text.insert(at, 1, static_cast<char>(rng() % 256)); break;                             // random byte
      case 4: text.insert(at, text.substr(rng() % text.size(), rng() % 16)); break;                  // duplication
      default: text[at] = "{}[]\",:0123456789-eE.tfn\\ "[rng() % 26]; break;                          // JSON punctuation
    }
  }
  return text;
}

json random_scalar(std::mt19937_64& rng) {
  switch (rng() % 14) {
    case 0: return nullptr;
    case 1: return rng() % 2 == 0;
    case 2: return static_cast<std::int64_t>(rng() % 17) - 4;
    case 3: return static_cast<std::int64_t>(rng());
    case 4: return rng();  // unsigned, possibly > 2^63
    case 5: return -static_cast<double>(rng() % 1000) / 7.0;
    case 6: return 1e308;
    case 7: return json::parse("123456789012345678901234567890");
    case 8: return std::string(rng() % 70, "aZ_9 .-"[rng() % 7]);
    case 9: return std::vector<std::string>{"S(0)R", "RS(1)", "P(sum)P(avg)", "S(0)[1]S(0)[0]", "RRRR", "S(9)R", "X"}[rng() % 7];
    case 10: return std::vector<std::string>{"float32", "bfloat16", "fp8", "int64", ""}[rng() % 5];
    case 11: return std::vector<std::string>{"dp", "tp", "pp", "dp_shard", "cp"}[rng() % 5];
    case 12: return json::array({rng() % 9, rng() % 9});
    default: return json::object();
  }
}

// Replaces random leaves (and sometimes whole subtrees) of a valid design with random values.
void mutate_json(json& j, std::mt19937_64& rng, int depth = 0) {
  if (j.is_object() || j.is_array()) {
    if (j.empty()) return;
    if (depth > 0 && rng() % 12 == 0) {
      j = random_scalar(rng);
      return;
    }
    if (j.is_object() && rng() % 20 == 0) j["extra_" + std::to_string(rng() % 3)] = random_scalar(rng);
    if (j.is_object() && rng() % 20 == 0) j.erase(j.begin());
    if (j.is_array() && rng() % 10 == 0) j.push_back(j.empty() ? random_scalar(rng) : j[0]);
    if (j.empty()) return;
    auto it = j.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(rng() % j.size()));
    mutate_json(*it, rng, depth + 1);
    return;
  }
  j = random_scalar(rng);
}

TEST(DesignFuzz, BitFlipsTruncationsAndInsertions) {
  const std::vector<std::string> seeds = corpus();
  ASSERT_FALSE(seeds.empty());
  std::mt19937_64 rng(20240611);
  int parsed = 0;
  for (int i = 0; i < 4000; ++i) {
    const std::string text = mutate_bytes(seeds[static_cast<std::size_t>(i) % seeds.size()], rng);
    parsed += feed_design(text) ? 1 : 0;
    if (HasFailure()) FAIL() << "iteration " << i;
  }
  RecordProperty("parsed", parsed);
}

TEST(DesignFuzz, RightShapeWrongValues) {
  const std::vector<std::string> seeds = corpus();
  std::mt19937_64 rng(77);
  int parsed = 0;
  for (int i = 0; i < 3000; ++i) {
    json j = json::parse(seeds[static_cast<std::size_t>(i) % seeds.size()]);
    const int rounds = 1 + static_cast<int>(rng() % 3);
    for (int r = 0; r < rounds; ++r) mutate_json(j, rng);
    parsed += feed_design(j.dump()) ? 1 : 0;
    if (HasFailure()) FAIL() << "iteration " << i << ": " << j.dump();
  }
  RecordProperty("parsed", parsed);
  EXPECT_LT(parsed, 3000);
}

TEST(DesignFuzz, DeepNestingHugeNumbersAndHugeInputs) {
  for (const std::size_t depth : {15U, 16U, 17U, 1000U, 200000U}) {
    feed_design(std::string(depth, '[') + std::string(depth, ']'));
    feed_design(std::string(depth, '['));
    std::string objects;
    for (std::size_t d = 0; d < std::min<std::size_t>(depth, 50000); ++d) objects += "{\"a\":";
    feed_design(objects + "1" + std::string(std::min<std::size_t>(depth, 50000), '}'));
  }
  const std::string head = R"({"format": "meshloom-design", "version": 1, "name": "n", "devices_per_host": 1, )"
                           R"("tensors": [], "mesh": {"shape": [SHAPE], "names": ["a", "b"]}, "world": WORLD})";
  for (const char* number : {"1e999", "-1e999", "18446744073709551616", "18446744073709551615", "9223372036854775808",
                             "-9223372036854775809", "99999999999999999999999999999999", "0.5", "-0", "1E2", "4e0"}) {
    std::string text = head;
    text.replace(text.find("SHAPE"), 5, std::string(number) + ", 1");
    text.replace(text.find("WORLD"), 5, number);
    EXPECT_FALSE(feed_design(text)) << text;
  }
  // Many values, a long string, a file over the limit.
  std::string many = "[";
  for (int i = 0; i < (1 << 20) + 1; ++i) many += "0,";
  many += "0]";
  try {
    (void)parse_design(many);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("more than 1048576 values"), std::string::npos);
  }
  EXPECT_FALSE(feed_design("{\"format\": \"meshloom-design\", \"version\": 1, \"name\": \"" + std::string(std::size_t{1} << 20, 'n') + "\"}"));
  EXPECT_FALSE(feed_design(std::string(kMaxDesignFileBytes + 1, '{')));
}

TEST(StateFuzz, RandomAndCorruptedStates) {
  std::mt19937_64 rng(4242);
  const std::string alphabet = "RSP()[]0123456789,| \tsumavgmaxinproduct=-ShardReplicatePartialdim\x01\xff";
  const std::vector<std::string> seeds = {"S(0)[0]S(0)[1]S(0)[2]", "S(0)[1]S(0)[0]S(0)[2]", "RS(1)S(0)", "P(sum)RS(0)",
                                          "RRR", "Shard(0), Replicate(), Partial(avg)", "S(1)[1]S(0)S(1)[0]",
                                          "Shard(dim=2) | P(max) | R"};
  int parsed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    if (i % 2 == 0) {
      const std::size_t length = rng() % 24;
      for (std::size_t k = 0; k < length; ++k) text += alphabet[rng() % alphabet.size()];
    } else {
      text = mutate_bytes(seeds[rng() % seeds.size()], rng);
    }
    parsed += feed_state(text) ? 1 : 0;
    if (HasFailure()) FAIL() << "iteration " << i << ": " << text;
  }
  // Structured random states: tokens from the grammar, with or without shard-order indices.
  for (int i = 0; i < 5000; ++i) {
    std::string text;
    const std::size_t axes = 1 + rng() % 6;
    for (std::size_t a = 0; a < axes; ++a) {
      switch (rng() % 4) {
        case 0: text += "R"; break;
        case 1: text += "P(" + std::string(std::vector<const char*>{"sum", "avg", "max", "min", "product"}[rng() % 5]) + ")"; break;
        default:
          text += "S(" + std::to_string(rng() % 3) + ")";
          if (rng() % 2 == 0) text += "[" + std::to_string(rng() % 4) + "]";
      }
    }
    parsed += feed_state(text) ? 1 : 0;
    if (HasFailure()) FAIL() << "structured iteration " << i << ": " << text;
  }
  EXPECT_GT(parsed, 1000);
  feed_state(std::string(100000, 'R'));
  feed_state(std::string(100000, '('));
  feed_state("S(" + std::string(100000, '9') + ")");
}

}  // namespace
}  // namespace meshloom
