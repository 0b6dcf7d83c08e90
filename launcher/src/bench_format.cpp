#include "bench_format.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

#include "collectives/collective.hpp"
#include "meshloom/error.hpp"

namespace meshloom::launcher {

namespace {

using ojson = nlohmann::ordered_json;

std::string dump(const ojson& j) { return j.dump(-1, ' ', false, ojson::error_handler_t::replace); }

}  // namespace

std::string_view to_string(BenchCollective c) noexcept {
  for (const CollectiveDef* def : collective_defs()) {
    if (def->id() == c) return def->name();
  }
  return "?";
}

std::optional<BenchCollective> bench_collective_from_string(std::string_view text) noexcept {
  for (const CollectiveDef* def : collective_defs()) {
    if (def->name() == text) return def->id();
  }
  return std::nullopt;
}

std::vector<BenchCollective> all_bench_collectives() {
  std::vector<BenchCollective> all;
  for (const CollectiveDef* def : collective_defs()) all.push_back(def->id());
  return all;
}

bool reduces(BenchCollective c) noexcept { return collective_def(c).reduces(); }
bool rooted(BenchCollective c) noexcept { return collective_def(c).rooted(); }

SizeCounts size_counts(BenchCollective c, std::int64_t size_bytes, std::int64_t itemsize, std::int64_t n) {
  if (itemsize < 1 || n < 1 || size_bytes < 0) {
    raise(ErrorKind::ValueError, "size_counts: size " + std::to_string(size_bytes) + ", itemsize " +
                                     std::to_string(itemsize) + ", group size " + std::to_string(n));
  }
  return collective_def(c).counts(size_bytes / itemsize, itemsize, n);
}

double algbw_gbps(std::int64_t bytes, double time_us) noexcept {
  if (!(time_us > 0)) return 0;
  return static_cast<double>(bytes) / (time_us * 1e3);
}

double busbw_gbps(BenchCollective c, double algbw, std::int64_t n) { return algbw * collective_def(c).bus_factor(n); }

// ---- The table ---------------------------------------------------------------------------------------------

std::string table_header() {
  char line[256];
  std::string out;
  std::snprintf(line, sizeof line, "#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %5s  %7s\n", "size", "count",
                "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "p95", "cv", "slowest");
  out += line;
  std::snprintf(line, sizeof line, "#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %5s  %7s\n", "(B)",
                "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(%)", "(rank)");
  out += line;
  return out;
}

std::string format_time_us(double time_us) {
  char buf[64];
  if (time_us >= 10000.0) {
    std::snprintf(buf, sizeof buf, "%.0f", time_us);
  } else if (time_us >= 100.0) {
    std::snprintf(buf, sizeof buf, "%.1f", time_us);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f", time_us);
  }
  return buf;
}

std::string table_row(const BenchResult& r) {
  const std::string redop = reduces(r.collective) ? std::string(to_string(r.op)) : "none";
  const std::string wrong = r.checked ? std::to_string(r.wrong) : "N/A";
  const std::string slowest = r.stats.slowest_rank >= 0 ? std::to_string(r.stats.slowest_rank) : "-";
  char line[400];
  std::snprintf(line, sizeof line, "%12lld  %12lld  %8s  %6s  %6d  %7s  %6.2f  %6.2f  %6s  %7s  %5.1f  %7s\n",
                static_cast<long long>(r.bytes), static_cast<long long>(r.count), std::string(to_string(r.dtype)).c_str(),
                redop.c_str(), rooted(r.collective) ? 0 : -1, format_time_us(r.time_us).c_str(), r.algbw_gbps,
                r.busbw_gbps, wrong.c_str(), format_time_us(r.stats.p95_us).c_str(), 100.0 * r.stats.cv,
                slowest.c_str());
  return line;
}

std::string table_footer(std::int64_t wrong, bool checked) {
  char line[160];
  if (checked) {
    std::snprintf(line, sizeof line, "# Out of bounds values : %lld %s\n", static_cast<long long>(wrong),
                  wrong == 0 ? "OK" : "FAILED");
  } else {
    std::snprintf(line, sizeof line, "# Out of bounds values : N/A (not checked; --check counts them)\n");
  }
  return line;
}

std::string avg_busbw_line(double avg_busbw) {
  char line[80];
  std::snprintf(line, sizeof line, "# Avg bus bandwidth    : %g\n", avg_busbw);
  return line;
}

// ---- The JSON Lines records --------------------------------------------------------------------------------

std::string config_record(const BenchRunInfo& info) {
  ojson flattened = ojson::array();
  for (const auto& f : info.flattened) flattened.push_back({{"name", f.name}, {"axes", f.axes}});
  ojson j;
  j["type"] = "config";
  j["command"] = info.command;
  j["backend"] = info.backend;
  j["world"] = info.world;
  j["mesh"] = {{"shape", info.mesh_shape}, {"names", info.mesh_names}, {"flattened", flattened}};
  j["axes"] = info.axes;
  j["skipped_axes"] = info.skipped_axes;
  j["collectives"] = info.collectives;
  j["dtype"] = std::string(to_string(info.dtype));
  j["itemsize"] = itemsize(info.dtype);
  j["op"] = std::string(to_string(info.op));
  j["sizes"] = info.sizes;
  j["warmup_iters"] = info.warmup_iters;
  j["rounds"] = info.rounds;
  j["iters"] = info.iters;
  j["check"] = info.check;
  j["timeout_s"] = info.timeout_s;
  j["timing"] = std::string(to_string(info.timing));
  j["versions"] = {{"meshloom", info.meshloom_version}, {"mpi", info.mpi_library}};
  if (!info.backend_library.empty()) j["versions"][info.backend] = info.backend_library;
  j["host"] = info.host;
  j["hosts"] = info.hosts;
  if (!info.cpus.empty()) {
    j["cpus"] = info.cpus;
    j["bound"] = info.bound;
  }
  j["transport"] = info.transport;
  add_slurm(j, info.slurm);
  return dump(j);
}

ojson stats_json(const IterationStats& s) {
  ojson j = {{"iterations", s.iterations}, {"min_us", s.min_us}, {"p50_us", s.p50_us}, {"p95_us", s.p95_us},
             {"p99_us", s.p99_us},         {"mean_us", s.mean_us}, {"max_us", s.max_us}, {"cv", s.cv}};
  if (s.slowest_rank >= 0) {
    j["slowest"] = {{"rank", s.slowest_rank}, {"host", s.slowest_host}, {"iterations", s.slowest_count}};
  }
  return j;
}

std::string result_record(const BenchResult& r) {
  ojson j;
  j["type"] = "result";
  j["axis"] = r.axis;
  j["group_size"] = r.group_size;
  j["groups"] = r.groups;
  j["span"] = {{"hosts", r.span.hosts}, {"ranks_per_host", r.span.ranks_per_host}, {"uniform", r.span.uniform}};
  j["collective"] = std::string(to_string(r.collective));
  j["dtype"] = std::string(to_string(r.dtype));
  if (reduces(r.collective)) j["op"] = std::string(to_string(r.op));
  if (rooted(r.collective)) j["root"] = 0;
  j["bytes"] = r.bytes;
  j["count"] = r.count;
  j["time_us"] = r.time_us;
  j["algbw_gbps"] = r.algbw_gbps;
  j["busbw_gbps"] = r.busbw_gbps;
  j["wrong"] = r.wrong;
  j["checked"] = r.checked;
  j["timing"] = std::string(to_string(r.timing));
  j["stats"] = stats_json(r.stats);
  return dump(j);
}

std::string summary_record(bool ok, std::int64_t results, std::int64_t wrong, double avg_busbw, double elapsed_s) {
  ojson j;
  j["type"] = "summary";
  j["ok"] = ok;
  j["results"] = results;
  j["wrong"] = wrong;
  j["avg_busbw_gbps"] = avg_busbw;
  j["elapsed_s"] = elapsed_s;
  return dump(j);
}

std::string error_record(int rank, const std::string& message) {
  ojson j;
  j["type"] = "error";
  j["rank"] = rank;
  j["message"] = message;
  return dump(j);
}

}  // namespace meshloom::launcher
