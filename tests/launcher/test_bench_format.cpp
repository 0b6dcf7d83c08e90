// bench without communication: size parsing and sweeps, nccl-tests' counts and bandwidths, the table and the JSON
// Lines records of the launcher's contract, the durable writers.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_format.hpp"
#include "bench_io.hpp"
#include "meshloom/error.hpp"
#include "meshloom/io/atomic_file.hpp"
#include "sizes.hpp"
#include "support/expect_error.hpp"

namespace meshloom::launcher {
namespace {

using nlohmann::json;

using testing::error_of;

TEST(BenchSizes, ParsesBytesAndSuffixes) {
  EXPECT_EQ(parse_size("8", "-b"), 8);
  EXPECT_EQ(parse_size("64M", "-e"), 64 * 1024 * 1024);
  EXPECT_EQ(parse_size("1K", "-b"), 1024);
  EXPECT_EQ(parse_size("1k", "-b"), 1024);
  EXPECT_EQ(parse_size("2G", "-e"), std::int64_t{2} << 30);
  EXPECT_EQ(parse_size(" 4m ", "-e"), 4 << 20);
}

TEST(BenchSizes, RejectsBadSizesNamingTheOption) {
  EXPECT_EQ(error_of([] { (void)parse_size("12X", "-b"); }),
            "ValueError: -b \"12X\": unknown size suffix 'X' (expected K, M or G)");
  EXPECT_EQ(error_of([] { (void)parse_size("", "-e"); }),
            "ValueError: -e \"\": empty size (expected bytes, e.g. 8, 64K, 64M or 1G)");
  EXPECT_EQ(error_of([] { (void)parse_size("M", "-e"); }), "ValueError: -e \"M\": no number before the suffix");
  EXPECT_EQ(error_of([] { (void)parse_size("-8", "-b"); }), "ValueError: -b \"-8\": sizes must be >= 1 byte");
  EXPECT_EQ(error_of([] { (void)parse_size("0", "-b"); }), "ValueError: -b \"0\": sizes must be >= 1 byte");
  EXPECT_EQ(error_of([] { (void)parse_size("1.5M", "-b"); }),
            "ValueError: -b \"1.5M\": not a size (expected bytes, e.g. 8, 64K, 64M or 1G)");
  EXPECT_EQ(error_of([] { (void)parse_size("99999999999G", "-e"); }), "ValueError: -e \"99999999999G\": too large");
  EXPECT_EQ(error_of([] { (void)parse_size("99999999999999999999", "-e"); }),
            "ValueError: -e \"99999999999999999999\": too large");
}

TEST(BenchSizes, SweepsLikeNcclTests) {
  // -b 8 -e 64M -f 2
  const auto sizes = size_sweep(8, 64 << 20, 2);
  ASSERT_EQ(sizes.size(), 24U);
  EXPECT_EQ(sizes.front(), 8);
  EXPECT_EQ(sizes.back(), 64 << 20);
  EXPECT_EQ(size_sweep(8, 4096, 2).size(), 10U);
  EXPECT_EQ(size_sweep(8, 100, 4), (std::vector<std::int64_t>{8, 32}));
  EXPECT_EQ(size_sweep(5, 5, 2), (std::vector<std::int64_t>{5}));
  EXPECT_EQ(size_sweep(1, INT64_MAX, 2).size(), 63U);  // no overflow
  EXPECT_EQ(error_of([] { (void)size_sweep(64, 8, 2); }),
            "ValueError: the smallest size (-b 64) is larger than the largest (-e 8)");
  EXPECT_EQ(error_of([] { (void)size_sweep(8, 64, 1); }), "ValueError: -f 1: the step factor must be >= 2");
}

TEST(BenchSizes, FormatsForPeople) {
  EXPECT_EQ(format_size(8), "8 B");
  EXPECT_EQ(format_size(4096), "4 KiB");
  EXPECT_EQ(format_size(64 << 20), "64 MiB");
  EXPECT_EQ(format_size(1536), "1.5 KiB");
}

TEST(BenchCounts, FollowNcclTests) {
  // all_reduce and broadcast: count = size / itemsize, bytes = count * itemsize.
  auto ar = size_counts(BenchCollective::AllReduce, 1 << 20, 4, 4);
  EXPECT_EQ(ar.count, 262144);
  EXPECT_EQ(ar.bytes, 1 << 20);
  EXPECT_EQ(ar.in_count, 262144);
  EXPECT_EQ(ar.out_count, 262144);
  // all_gather: per-rank count, bytes = the whole gathered array.
  auto ag = size_counts(BenchCollective::AllGather, 1000, 4, 3);  // 250 elements, 83 per rank
  EXPECT_EQ(ag.count, 83);
  EXPECT_EQ(ag.bytes, 83 * 4 * 3);
  EXPECT_EQ(ag.in_count, 83);
  EXPECT_EQ(ag.out_count, 249);
  auto rs = size_counts(BenchCollective::ReduceScatter, 1000, 4, 3);
  EXPECT_EQ(rs.in_count, 249);
  EXPECT_EQ(rs.out_count, 83);
  auto a2a = size_counts(BenchCollective::AllToAll, 64, 4, 4);
  EXPECT_EQ(a2a.count, 4);
  EXPECT_EQ(a2a.bytes, 64);
  EXPECT_EQ(a2a.in_count, 16);
  EXPECT_EQ(size_counts(BenchCollective::AllGather, 8, 4, 4).count, 0);  // too small: not run
  EXPECT_EQ(size_counts(BenchCollective::Broadcast, 10, 8, 4).bytes, 8);
}

TEST(BenchBandwidth, AlgbwAndBusbwFactors) {
  // 1e9 bytes in 1e6 us = 1 GB/s.
  EXPECT_DOUBLE_EQ(algbw_gbps(1000000000, 1e6), 1.0);
  EXPECT_DOUBLE_EQ(algbw_gbps(1048576, 512.0), 1048576.0 / 512e3);
  EXPECT_EQ(algbw_gbps(8, 0), 0.0);
  EXPECT_DOUBLE_EQ(busbw_gbps(BenchCollective::AllReduce, 2.0, 4), 2.0 * 2 * 3 / 4);
  EXPECT_DOUBLE_EQ(busbw_gbps(BenchCollective::AllGather, 2.0, 4), 2.0 * 3 / 4);
  EXPECT_DOUBLE_EQ(busbw_gbps(BenchCollective::ReduceScatter, 2.0, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw_gbps(BenchCollective::AllToAll, 2.0, 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_gbps(BenchCollective::Broadcast, 2.0, 8), 2.0);
  EXPECT_DOUBLE_EQ(busbw_gbps(BenchCollective::AllReduce, 2.0, 1), 0.0);
}

TEST(BenchCollectives, NamesRoundTrip) {
  for (const auto c : all_bench_collectives()) EXPECT_EQ(bench_collective_from_string(to_string(c)), c);
  EXPECT_FALSE(bench_collective_from_string("alltoall").has_value());
  EXPECT_EQ(all_bench_collectives().size(), 5U);
}

BenchResult sample_result() {
  BenchResult r;
  r.axis = "tp";
  r.group_size = 4;
  r.groups = 2;
  r.collective = BenchCollective::AllReduce;
  r.dtype = DType::Float32;
  r.bytes = 1048576;
  r.count = 262144;
  r.time_us = 512.3;
  r.algbw_gbps = algbw_gbps(r.bytes, r.time_us);
  r.busbw_gbps = busbw_gbps(r.collective, r.algbw_gbps, 4);
  r.wrong = 0;
  r.checked = true;
  return r;
}

TEST(BenchTable, RowsHaveNcclTestsColumns) {
  const std::string header = table_header();
  EXPECT_EQ(header,
            "#       size         count      type   redop    root     time   algbw   busbw  #wrong      p95     cv  slowest\n"
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)    (%)   (rank)\n");
  BenchResult r = sample_result();
  r.stats.p95_us = 640.25;
  r.stats.cv = 0.0734;
  r.stats.slowest_rank = 3;
  EXPECT_EQ(table_row(r),
            "     1048576        262144   float32     sum      -1    512.3    2.05    3.07       0    640.2    7.3        3\n");
  BenchResult b = sample_result();
  b.collective = BenchCollective::Broadcast;
  b.checked = false;
  b.time_us = 12345.6;
  // No rank ran (no statistics): the slowest column says so.
  EXPECT_EQ(table_row(b),
            "     1048576        262144   float32    none       0    12346    2.05    3.07     N/A     0.00    0.0        -\n");
  b.time_us = 3.14159;
  EXPECT_NE(table_row(b).find("   3.14 "), std::string::npos);
  EXPECT_EQ(table_footer(0, true), "# Out of bounds values : 0 OK\n");
  EXPECT_EQ(table_footer(5, true), "# Out of bounds values : 5 FAILED\n");
  EXPECT_EQ(table_footer(0, false), "# Out of bounds values : N/A (not checked; --check counts them)\n");
  EXPECT_EQ(avg_busbw_line(3.07), "# Avg bus bandwidth    : 3.07\n");
}

TEST(BenchRecords, ResultHasTheContractFields) {
  const json j = json::parse(result_record(sample_result()));
  EXPECT_EQ(j["type"], "result");
  EXPECT_EQ(j["axis"], "tp");
  EXPECT_EQ(j["group_size"], 4);
  EXPECT_EQ(j["groups"], 2);
  EXPECT_EQ(j["collective"], "all_reduce");
  EXPECT_EQ(j["dtype"], "float32");
  EXPECT_EQ(j["bytes"], 1048576);
  EXPECT_EQ(j["count"], 262144);
  EXPECT_TRUE(j["bytes"].is_number_integer());
  EXPECT_EQ(j["time_us"].get<double>(), 512.3);  // full precision
  EXPECT_EQ(j["algbw_gbps"].get<double>(), sample_result().algbw_gbps);
  EXPECT_EQ(j["busbw_gbps"].get<double>(), sample_result().busbw_gbps);
  EXPECT_EQ(j["wrong"], 0);
  EXPECT_TRUE(j["wrong"].is_number_integer());
  EXPECT_EQ(result_record(sample_result()).find('\n'), std::string::npos);
}

TEST(BenchRecords, ResultCarriesTheTimingProtocolsStatistics) {
  BenchResult r = sample_result();
  r.timing = TimingMode::SingleShot;
  r.stats = summarize({3, 1, 2, 10});
  r.stats.slowest_rank = 2;
  r.stats.slowest_host = "node-b";
  r.stats.slowest_count = 3;
  const json j = json::parse(result_record(r));
  EXPECT_EQ(j["timing"], "single_shot");
  json st = j["stats"];
  EXPECT_NEAR(st["p95_us"].get<double>(), 8.95, 1e-12);  // numpy.percentile([1, 2, 3, 10], 95)
  EXPECT_NEAR(st["cv"].get<double>(), std::sqrt(12.5) / 4.0, 1e-12);
  st.erase("p95_us");
  st.erase("cv");
  EXPECT_EQ(st, json::parse(R"({"iterations": 4, "min_us": 1.0, "p50_us": 2.5, "p99_us": 9.79, "mean_us": 4.0,
      "max_us": 10.0, "slowest": {"rank": 2, "host": "node-b", "iterations": 3}})"));
  r.stats.slowest_rank = -1;  // nobody ran: no straggler to name
  EXPECT_FALSE(json::parse(result_record(r))["stats"].contains("slowest"));
}

TEST(BenchRecords, ConfigSummaryAndError) {
  BenchRunInfo info;
  info.world = 4;
  info.mesh_shape = {2, 2};
  info.mesh_names = {"dp", "tp"};
  info.axes = {"dp", "tp"};
  info.collectives = {"all_reduce"};
  info.sizes = {8, 16};
  info.meshloom_version = "0.1.0";
  info.mpi_library = "Open MPI v4.1.4";
  info.host = "node1";
  const json c = json::parse(config_record(info));
  EXPECT_EQ(c["type"], "config");
  EXPECT_EQ(config_record(info).rfind("{\"type\":\"config\"", 0), 0U);
  EXPECT_EQ(c["backend"], "mpi");
  EXPECT_EQ(c["world"], 4);
  EXPECT_EQ(c["mesh"]["shape"], json({2, 2}));
  EXPECT_EQ(c["mesh"]["names"], json({"dp", "tp"}));
  EXPECT_EQ(c["sizes"], json({8, 16}));
  EXPECT_EQ(c["iters"], 20);
  EXPECT_EQ(c["warmup_iters"], 5);
  EXPECT_EQ(c["versions"]["meshloom"], "0.1.0");
  EXPECT_EQ(c["versions"]["mpi"], "Open MPI v4.1.4");
  EXPECT_EQ(c["host"], "node1");

  const json s = json::parse(summary_record(true, 3, 0, 1.5, 0.25));
  EXPECT_EQ(s["type"], "summary");
  EXPECT_EQ(s["ok"], true);
  const json e = json::parse(error_record(2, "TimeoutError: world rank 2 ..."));
  EXPECT_EQ(e["type"], "error");
  EXPECT_EQ(e["rank"], 2);
  EXPECT_EQ(e["message"], "TimeoutError: world rank 2 ...");
  // Invalid UTF-8 in a message still gives valid JSON.
  EXPECT_TRUE(json::parse(error_record(0, "bad \xff byte")).is_object());
}

std::filesystem::path temp_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("meshloom_bench_fmt_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(BenchIo, JsonlSinkTruncatesWritesAndOthersAppend) {
  const auto path = temp_path("run.jsonl");
  std::ofstream(path) << "old content\n";
  {
    JsonlSink sink(path);
    sink.write("{\"type\":\"config\"}");
    EXPECT_TRUE(JsonlSink::append(path, "{\"type\":\"error\",\"rank\":1}"));
    sink.write("{\"type\":\"summary\"}");
  }
  EXPECT_EQ(slurp(path), "{\"type\":\"config\"}\n{\"type\":\"error\",\"rank\":1}\n{\"type\":\"summary\"}\n");
  EXPECT_THROW(JsonlSink(temp_path("no/such/dir/x.jsonl")), Error);
  std::filesystem::remove_all(path.parent_path());
}

// The ordering that keeps another rank's error record from rank 0's truncation: a rank other than 0 appends only
// once told that rank 0 has created the file (before that its error goes to stderr alone), and rank 0 cannot
// (re)create the file once other ranks may append.
TEST(BenchIo, JsonlStreamAppendsOtherRanksRecordsOnlyAfterRankZeroCreatedTheFile) {
  const auto path = temp_path("stream.jsonl");
  std::filesystem::remove(path);
  JsonlStream other(1, path);
  other.open();  // not rank 0: creates nothing
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(other.appends());
  other.report_error("RuntimeError: too early");
  EXPECT_FALSE(std::filesystem::exists(path)) << slurp(path);

  std::ofstream(path) << "{\"type\":\"stale\"}\n";
  JsonlStream lead(0, path);
  lead.open();  // truncates
  EXPECT_EQ(slurp(path), "");
  lead.created();
  other.created();
  EXPECT_FALSE(lead.appends());  // rank 0 writes through its open stream
  EXPECT_TRUE(other.appends());
  other.report_error("RuntimeError: after");
  lead.report_error("RuntimeError: lead");
  const auto lines = slurp(path);
  EXPECT_EQ(lines, error_record(1, "RuntimeError: after") + "\n" + error_record(0, "RuntimeError: lead") + "\n");
  EXPECT_NE(error_of([&] { lead.open(); }).find("opened after other ranks may have appended"), std::string::npos);
  EXPECT_EQ(slurp(path), lines);  // not truncated
  std::filesystem::remove_all(path.parent_path());
}

TEST(BenchIo, AtomicWriteReplacesTheFile) {
  const auto path = temp_path("cal.json");
  write_file_atomically(path, "one\n");
  EXPECT_EQ(slurp(path), "one\n");
  write_file_atomically(path, "two\n");
  EXPECT_EQ(slurp(path), "two\n");
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(path.parent_path())) ++entries;
  EXPECT_EQ(entries, 1U);  // no temporary file left
  EXPECT_THROW(write_file_atomically(temp_path("no/such/dir/cal.json"), "x"), Error);
  std::filesystem::remove_all(path.parent_path());
}

}  // namespace
}  // namespace meshloom::launcher
