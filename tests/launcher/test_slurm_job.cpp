// slurm_job: the Slurm job a command runs in, from the environment, and the `slurm` object of the config records.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>

#include "bench_format.hpp"
#include "slurm_job.hpp"

namespace meshloom::launcher {
namespace {

using json = nlohmann::json;

// A fake environment: lookup() answers from the map, nullptr for a variable it does not hold.
struct FakeEnv {
  std::map<std::string, std::string> vars;
  std::optional<SlurmJob> job() const {
    return slurm_job([this](const char* name) -> const char* {
      const auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    });
  }
};

TEST(SlurmJob, NoneOutsideAJob) {
  EXPECT_FALSE(FakeEnv{}.job().has_value());
  // Other Slurm variables without a job id (a login shell that kept SLURM_CONF, say) are no job.
  EXPECT_FALSE((FakeEnv{{{"SLURM_CONF", "/etc/slurm/slurm.conf"}, {"SLURM_NTASKS", "4"}}}.job().has_value()));
  EXPECT_FALSE((FakeEnv{{{"SLURM_JOB_ID", ""}}}.job().has_value()));
}

TEST(SlurmJob, AnSrunStepGivesEveryFieldInRecordOrder) {
  const FakeEnv env{{{"SLURM_JOB_ID", "123"},
                     {"SLURM_STEP_ID", "0"},
                     {"SLURM_JOB_NODELIST", "node[1-2]"},
                     {"SLURM_NODELIST", "ignored: SLURM_JOB_NODELIST wins"},
                     {"SLURM_JOB_NUM_NODES", "2"},
                     {"SLURM_NTASKS", "8"},
                     {"SLURM_JOB_NAME", "meshloom-bench"},
                     {"SLURM_JOB_PARTITION", "gpu"},
                     {"SLURM_CLUSTER_NAME", "cluster"},
                     {"SLURM_PROCID", "3"}}};
  const auto job = env.job();
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(slurm_json(*job).dump(),
            R"({"job_id":"123","step_id":"0","nodelist":"node[1-2]","num_nodes":"2","ntasks":"8",)"
            R"("job_name":"meshloom-bench","partition":"gpu","cluster":"cluster"})");
}

TEST(SlurmJob, ABatchScriptWithoutStepAndTheOlderSpellings) {
  // The batch script itself (mpirun started from it) has no SLURM_STEP_ID; SLURM_JOBID, SLURM_NODELIST, SLURM_NNODES
  // and SLURM_NPROCS are the older names Slurm still sets.
  const FakeEnv env{{{"SLURM_JOBID", "77"}, {"SLURM_NODELIST", "vm"}, {"SLURM_NNODES", "1"}, {"SLURM_NPROCS", "2"},
                     {"SLURM_ARRAY_JOB_ID", "70"}, {"SLURM_ARRAY_TASK_ID", "7"}}};
  const auto job = env.job();
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(slurm_json(*job).dump(), R"({"job_id":"77","nodelist":"vm","num_nodes":"1","ntasks":"2",)"
                                     R"("array_job_id":"70","array_task_id":"7"})");
}

TEST(SlurmJob, BytesThatAreNotUtf8AreReplacedSoEveryDumpSucceeds) {
  const FakeEnv env{{{"SLURM_JOB_ID", "5"}, {"SLURM_JOB_NAME", "bad \xff name"}}};
  const auto job = env.job();
  ASSERT_TRUE(job.has_value());
  const nlohmann::ordered_json j = slurm_json(*job);
  EXPECT_NO_THROW((void)j.dump());
  EXPECT_EQ(j["job_name"], "bad \xEF\xBF\xBD name");
}

TEST(SlurmJob, AddSlurmAddsTheObjectOnlyInAJob) {
  nlohmann::ordered_json config = {{"type", "config"}};
  add_slurm(config, std::nullopt);
  EXPECT_FALSE(config.contains("slurm"));
  add_slurm(config, FakeEnv{{{"SLURM_JOB_ID", "9"}, {"SLURM_STEP_ID", "1"}}}.job());
  EXPECT_EQ(config.dump(), R"({"type":"config","slurm":{"job_id":"9","step_id":"1"}})");
}

TEST(SlurmJob, BenchAndCalibrateConfigRecordsCarryIt) {
  BenchRunInfo info;
  info.world = 2;
  info.mesh_shape = {2};
  info.mesh_names = {"dp"};
  EXPECT_FALSE(json::parse(config_record(info)).contains("slurm"));
  info.slurm = FakeEnv{{{"SLURM_JOB_ID", "123"}, {"SLURM_STEP_ID", "0"}, {"SLURM_JOB_NODELIST", "node1"}}}.job();
  const json c = json::parse(config_record(info));
  EXPECT_EQ(c["slurm"], json::parse(R"({"job_id": "123", "step_id": "0", "nodelist": "node1"})"));
  EXPECT_EQ(c["type"], "config");  // still the first field
  EXPECT_EQ(config_record(info).rfind("{\"type\":\"config\"", 0), 0U);
}

}  // namespace
}  // namespace meshloom::launcher
