// bench and run on the nccl backend, as users run them: `mpirun -np 2 meshloom-launch bench|run --backend nccl`
// (labels mpi and gpu). With two GPUs or more, every collective of the sweep is checked element by element and a
// plan is executed and verified through NCCL. Without a GPU the same commands must fail cleanly on every rank before
// any collective (exit 2, the ranks without a GPU named), which is what CI checks.
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

NcclInfo nccl_info() {
  const Launched r = meshloom::test::launch("info --json");
  NcclInfo info;
  if (r.status != 0) return info;
  const auto j = nlohmann::json::parse(r.out);
  info.built = j.at("nccl").at("built").get<bool>();
  if (info.built) info.gpus = static_cast<int>(j.at("nccl").at("devices").size());
  return info;
}

TEST(NcclLive, WithoutAGpuEveryRankFailsBeforeAnyCollective) {
  const NcclInfo info = nccl_info();
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
  const NcclInfo info = nccl_info();
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
  const NcclInfo info = nccl_info();
  if (info.gpus < 2) GTEST_SKIP() << "needs 2 GPUs, found " << info.gpus;
  for (const std::string request : {"--src 'S(0)' --dst R", "--src 'P(sum)' --dst 'S(1)'", "--src 'S(0)' --dst 'S(1)'"}) {
    const Launched r = mpirun(2, "run --backend nccl --mesh 2 --tensor 7,5 --iterations 2 " + request);
    EXPECT_EQ(r.status, 0) << request << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("verified: every element of every rank equals the target"), std::string::npos) << r.out;
  }
}

}  // namespace
