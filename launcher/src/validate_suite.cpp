#include "validate_suite.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <climits>
#include <fstream>
#include <sstream>
#include <utility>

#include "meshloom/error.hpp"
#include "meshloom/plan/planner.hpp"
#include "text_format.hpp"

namespace meshloom::launcher {

namespace {

constexpr std::size_t kMaxSuiteBytes = std::size_t{16} << 20;
constexpr std::size_t kMaxSuiteRequests = 10000;

std::string label_of(const PlanSetup& s) {
  std::string mesh = "(" + join(s.request.mesh_shape, {.separator = ","}) + ")";
  std::string tensor = join(s.request.tensor_shape, {.separator = "x"});
  return mesh + " " + tensor + " " + to_string(s.request.src) + " -> " + to_string(s.request.dst);
}

std::int64_t ranks_of(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (const auto s : shape) {
    if (__builtin_mul_overflow(n, s, &n)) return INT64_MAX;
  }
  return n;
}

}  // namespace

std::vector<SuiteRequest> default_suite(std::int64_t world) {
  if (world < 2) {
    raise(ErrorKind::ValueError, "validate needs a world of at least 2 ranks (it has " + std::to_string(world) +
                                     "): a redistribution moves data between ranks");
  }
  std::vector<std::vector<std::int64_t>> meshes;
  switch (world) {
    case 2: meshes = {{2}}; break;
    case 4: meshes = {{2, 2}}; break;
    case 8: meshes = {{2, 4}, {2, 2, 2}}; break;
    case 16: meshes = {{4, 4}}; break;
    default: meshes = {{world}}; break;
  }
  const std::array<std::vector<std::int64_t>, 5> tensors{{{16, 32}, {64, 128}, {256, 512}, {1024, 2048}, {2048, 4096}}};
  const std::vector<std::pair<const char*, const char*>> one_d{
      {"S(0)", "S(1)"}, {"S(0)", "R"}, {"P(sum)", "R"}, {"P(sum)", "S(0)"}};
  const std::vector<std::pair<const char*, const char*>> two_d{
      {"S(0)S(1)", "S(1)S(0)"}, {"S(0)R", "RS(0)"}, {"P(sum)P(sum)", "RR"}, {"P(sum)S(0)", "RR"}};
  const std::vector<std::pair<const char*, const char*>> three_d{{"S(0)S(1)R", "RS(0)S(1)"},
                                                                 {"S(0)[0]S(0)[1]R", "RS(0)R"},
                                                                 {"P(sum)P(sum)R", "RRR"},
                                                                 {"S(0)RS(1)", "S(1)RS(0)"}};
  // On 2-D meshes with both axes flattened: merged steps run as one collective on the flattened group (a 4-rank
  // all_gather, or all_reduce against reduce_scatter + all_gather, on (2,2)), priced by that group's own curve.
  const std::vector<std::pair<const char*, const char*>> flattened_two_d{{"S(0)S(0)", "RR"}, {"P(sum)P(sum)", "RR"}};
  std::vector<SuiteRequest> suite;
  const auto add = [&](const std::vector<std::int64_t>& mesh, const char* src, const char* dst, bool flatten) {
    for (const auto& tensor : tensors) {
      SuiteRequest r;
      r.setup.request.mesh_shape = mesh;
      r.setup.request.tensor_shape = tensor;
      r.setup.request.src = parse_state_text(src, "src");
      r.setup.request.dst = parse_state_text(dst, "dst");
      r.setup.request.itemsize = 8;
      if (flatten) r.setup.request.flattened = {{0, 1}};
      r.label = label_of(r.setup) + (flatten ? ", axes 0 and 1 flattened" : "");
      suite.push_back(std::move(r));
    }
  };
  for (const auto& mesh : meshes) {
    const auto& pairs = mesh.size() == 1 ? one_d : mesh.size() == 2 ? two_d : three_d;
    for (const auto& [src, dst] : pairs) add(mesh, src, dst, false);
    if (mesh.size() == 2) {
      for (const auto& [src, dst] : flattened_two_d) add(mesh, src, dst, true);
    }
  }
  return suite;
}

std::vector<SuiteRequest> parse_suite(const std::string& text, const std::string& source, std::int64_t world) {
  std::vector<SuiteRequest> suite;
  std::istringstream in(text);
  std::size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    const std::string where = "\"" + source + "\" line " + std::to_string(number) + ": ";
    SuiteRequest r;
    try {
      r.setup = parse_plan_setup(line);
    } catch (const Error& e) {
      raise(e.kind(), where + e.message());
    }
    // parse_plan_setup read it: one JSON object.
    const nlohmann::json doc = nlohmann::json::parse(line);
    for (const char* field : {"cost_model", "weights", "calibration", "devices_per_host", "extrapolate"}) {
      if (doc.contains(field)) {
        raise(ErrorKind::ValueError, where + "field \"" + field +
                                         "\": validate prices every request with every model; a suite names requests only");
      }
    }
    if (r.setup.request.planner != PlannerKind::Graph) {
      raise(ErrorKind::ValueError, where + "planner = \"" + std::string(to_string(r.setup.request.planner)) +
                                       "\": validate runs the graph planner's k cheapest plans of every model");
    }
    if (doc.contains("itemsize") && r.setup.request.itemsize != 8) {
      raise(ErrorKind::ValueError, where + "itemsize = " + std::to_string(r.setup.request.itemsize) +
                                       ": validate moves float64 (itemsize 8), and the models must price what moves");
    }
    r.setup.request.itemsize = 8;
    const std::int64_t ranks = ranks_of(r.setup.request.mesh_shape);
    if (ranks > world) {
      raise(ErrorKind::ValueError, where + "mesh (" + join(r.setup.request.mesh_shape, {.separator = ","}) + ") needs " +
                                       std::to_string(ranks) + " ranks but the MPI world has " + std::to_string(world));
    }
    r.label = label_of(r.setup);
    suite.push_back(std::move(r));
    if (suite.size() > kMaxSuiteRequests) {
      raise(ErrorKind::ValueError, "\"" + source + "\": more than " + std::to_string(kMaxSuiteRequests) + " requests");
    }
  }
  if (suite.empty()) raise(ErrorKind::ValueError, "\"" + source + "\": no request (one JSON object per line)");
  return suite;
}

std::vector<SuiteRequest> read_suite(const std::filesystem::path& path, std::int64_t world) {
  std::ifstream in(path, std::ios::binary);
  if (!in) raise(ErrorKind::ValueError, "--suite \"" + path.string() + "\": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().size() > kMaxSuiteBytes) {
    raise(ErrorKind::ValueError, "--suite \"" + path.string() + "\": larger than 16 MiB");
  }
  return parse_suite(text.str(), path.string(), world);
}

ModelPlans model_plans(const PlanRequest& request, const CostModel& model, std::size_t k) {
  ModelPlans out;
  const bool as_run = plans_as_run(request, model);
  try {
    out.plans = as_run ? as_run_pool(request, model, std::max(k, kAsRunPool)) : plan_k_cheapest(request, model, k);
    out.pick = cheapest_as_run(request, out.plans, model);
  } catch (const Error& e) {
    if (!as_run || e.kind() != ErrorKind::RuntimeError) throw;
    out.plans = plan_k_cheapest(request, model, k);
    out.pick = 0;
  }
  return out;
}

}  // namespace meshloom::launcher
