// bench and run on the nccl backend, as users run them: `mpirun -np N meshloom-launch bench|run --backend nccl`
// (labels mpi and gpu). With one GPU, a world of one rank runs bench (every collective checked) and run, and two
// ranks on the one GPU fail with NCCL's own report of the shared GPU; with two GPUs or more, every collective of the
// sweep is checked element by element and plans are executed and verified through NCCL. Without a GPU the same
// commands must fail cleanly on every rank before any collective (exit 2, the ranks without a GPU named), which is
// what CI checks. `meshloom-launch info --json` failing is a failure, never a reason to skip.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "launch_support.hpp"
#ifndef MESHLOOM_MPIEXEC
#error "MESHLOOM_MPIEXEC must name mpirun"
#endif

namespace {

using meshloom::test::Launched;
using meshloom::test::slurp;

const meshloom::test::ScratchDir scratch("meshloom_nccl_live_");

Launched mpirun(int np, const std::string& args) { return meshloom::test::mpirun_launch(scratch, np, args, "", 120); }

// What `meshloom-launch info --json` says: whether NCCL is built and how many GPUs CUDA sees.
struct NcclInfo {
  bool built = false;
  int gpus = 0;
};

// Fails the calling test (use it under ASSERT_NO_FATAL_FAILURE) when info itself fails or prints something
// unreadable: a broken launcher must not look like a machine without a GPU.
void read_nccl_info(NcclInfo& info) {
  const Launched r = meshloom::test::launch("info --json");
  ASSERT_EQ(r.status, 0) << "meshloom-launch info --json failed:\n" << meshloom::test::launch("info --json 2>&1").out;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << "meshloom-launch info --json printed no JSON:\n" << r.out;
  ASSERT_TRUE(j.contains("nccl") && j.at("nccl").contains("built")) << r.out;
  info.built = j.at("nccl").at("built").get<bool>();
  if (!info.built) return;
  ASSERT_TRUE(j.at("nccl").contains("devices")) << r.out;
  info.gpus = static_cast<int>(j.at("nccl").at("devices").size());
}

TEST(NcclLive, WithoutAGpuEveryRankFailsBeforeAnyCollective) {
  NcclInfo info;
  ASSERT_NO_FATAL_FAILURE(read_nccl_info(info));
  if (info.gpus > 0) GTEST_SKIP() << "a GPU is present";
  for (const std::string command : {"bench --shape 2 --names dp -b 8 -e 64", "run --mesh 2 --tensor 8 --src 'S(0)' --dst R"}) {
    const Launched r = mpirun(2, command + " --backend nccl");
    EXPECT_EQ(r.status, 2) << command << "\n" << r.out << r.err;
    EXPECT_EQ(r.out, "") << command;
    if (info.built) {
      EXPECT_NE(r.err.find("--backend nccl needs a CUDA GPU on every rank; rank(s) 0, 1 found none"), std::string::npos)
          << r.err;
    } else {
      EXPECT_NE(r.err.find("built without NCCL"), std::string::npos) << r.err;
    }
  }
}

TEST(NcclLive, BenchChecksEveryCollectiveOnTwoGpus) {
  NcclInfo info;
  ASSERT_NO_FATAL_FAILURE(read_nccl_info(info));
  if (!info.built) GTEST_SKIP() << "built without NCCL";
  if (info.gpus < 2) GTEST_SKIP() << "needs 2 GPUs, found " << info.gpus;
  const auto jsonl = scratch.path() / "nccl.jsonl";
  const Launched r = mpirun(2, "bench --backend nccl --shape 2 --names dp --check -b 8 -e 1M -f 8 --jsonl '" +
                                   jsonl.string() + "'");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("# meshloom-launch bench: backend nccl (NCCL "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# Out of bounds values : 0 OK"), std::string::npos) << r.out;
  const auto config = nlohmann::json::parse(slurp(jsonl).substr(0, slurp(jsonl).find('\n')));
  EXPECT_EQ(config.at("backend"), "nccl");
  EXPECT_TRUE(config.at("versions").contains("nccl"));
}

TEST(NcclLive, RunVerifiesPlansOnTwoGpus) {
  NcclInfo info;
  ASSERT_NO_FATAL_FAILURE(read_nccl_info(info));
  if (!info.built) GTEST_SKIP() << "built without NCCL";
  if (info.gpus < 2) GTEST_SKIP() << "needs 2 GPUs, found " << info.gpus;
  for (const std::string request : {"--src 'S(0)' --dst R", "--src 'P(sum)' --dst 'S(1)'", "--src 'S(0)' --dst 'S(1)'"}) {
    const Launched r = mpirun(2, "run --backend nccl --mesh 2 --tensor 7,5 --iterations 2 " + request);
    EXPECT_EQ(r.status, 0) << request << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("verified: every element of every rank equals the target"), std::string::npos) << r.out;
  }
}

// One GPU: a world of one rank runs every collective of the sweep (checked) and verified plans through NCCL.
TEST(NcclLive, OneRankOnOneGpuBenchesAndRuns) {
  NcclInfo info;
  ASSERT_NO_FATAL_FAILURE(read_nccl_info(info));
  if (!info.built) GTEST_SKIP() << "built without NCCL";
  if (info.gpus < 1) GTEST_SKIP() << "needs a GPU, found none";
  const Launched bench = mpirun(1, "bench --backend nccl --shape 1 --names dp --check -b 8 -e 1M -f 8 --timeout 60");
  ASSERT_EQ(bench.status, 0) << bench.out << bench.err;
  EXPECT_NE(bench.out.find("# meshloom-launch bench: backend nccl (NCCL "), std::string::npos) << bench.out;
  EXPECT_NE(bench.out.find("# Out of bounds values : 0 OK"), std::string::npos) << bench.out;
  const Launched run = mpirun(1, "run --backend nccl --mesh 1 --tensor 7,5 --iterations 2 --src 'S(0)' --dst R");
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("verified: every element of every rank equals the target"), std::string::npos) << run.out;
}

// Two ranks on a node with one GPU both take it (local rank modulo the GPUs it sees, which is what per-rank
// CUDA_VISIBLE_DEVICES launches need): the launcher no longer refuses, NCCL reports the shared GPU itself and the
// job fails cleanly within its timeout instead of hanging.
TEST(NcclLive, TwoRanksOnOneGpuFailWithNcclsReport) {
  NcclInfo info;
  ASSERT_NO_FATAL_FAILURE(read_nccl_info(info));
  if (!info.built) GTEST_SKIP() << "built without NCCL";
  if (info.gpus != 1) GTEST_SKIP() << "needs exactly one GPU, found " << info.gpus;
  const Launched r = mpirun(2, "bench --backend nccl --shape 2 --names dp -b 8 -e 64 --timeout 30");
  EXPECT_NE(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.err.find("more ranks than GPUs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ncclCommInitRankConfig"), std::string::npos) << r.err;
}

}  // namespace
