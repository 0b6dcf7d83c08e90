// The Slurm job a launcher command runs in, read from the environment Slurm gives every task (sbatch, salloc, srun;
// and the ranks mpirun starts inside such a job, which inherit it). The one place that reads it: every command that
// writes a JSON Lines `config` record (bench, calibrate, run, validate) adds its `slurm` object from here, so a
// record can be traced back to its job (`scontrol show job`, `sacct -j`).
//
// The world, each rank's host and its local rank never come from here: they come from MPI itself (the world
// communicator, MPI_Comm_split_type: live_command.hpp's job_hosts), which is right under mpirun, srun and a job's
// mpirun alike.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace meshloom::launcher {

// The job's fields as Slurm spells them in the environment, in record order: (record key, value). Only the
// variables that are set and not empty; always "job_id" first.
struct SlurmJob {
  std::vector<std::pair<std::string, std::string>> fields;
};

// Reads the job from `lookup` (std::getenv by default). std::nullopt outside a Slurm job: SLURM_JOB_ID unset or
// empty. Keys and the variables they come from:
//   job_id SLURM_JOB_ID, step_id SLURM_STEP_ID, nodelist SLURM_JOB_NODELIST (or SLURM_NODELIST),
//   num_nodes SLURM_JOB_NUM_NODES (or SLURM_NNODES), ntasks SLURM_NTASKS, job_name SLURM_JOB_NAME,
//   partition SLURM_JOB_PARTITION, cluster SLURM_CLUSTER_NAME, array_job_id SLURM_ARRAY_JOB_ID,
//   array_task_id SLURM_ARRAY_TASK_ID.
[[nodiscard]] std::optional<SlurmJob> slurm_job(
    const std::function<const char*(const char*)>& lookup = [](const char* name) { return std::getenv(name); });

// {"job_id": "123", "step_id": "0", "nodelist": "node[1-2]", ...}: every value a string, as Slurm wrote it
// (bytes that are not UTF-8, say in a job name, become U+FFFD so that every dump of the record succeeds).
[[nodiscard]] nlohmann::ordered_json slurm_json(const SlurmJob& job);

// Adds "slurm": slurm_json(*job) to a config record when `job` holds a job; leaves it as it is otherwise.
void add_slurm(nlohmann::ordered_json& config, const std::optional<SlurmJob>& job);

}  // namespace meshloom::launcher
