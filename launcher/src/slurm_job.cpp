#include "slurm_job.hpp"

#include <nlohmann/json.hpp>

#include <array>

namespace meshloom::launcher {

namespace {

struct Source {
  const char* key;
  std::array<const char*, 2> variables;  // the first one set wins; nullptr: no fallback
};

constexpr std::array<Source, 10> kSources{{
    {"job_id", {"SLURM_JOB_ID", "SLURM_JOBID"}},
    {"step_id", {"SLURM_STEP_ID", "SLURM_STEPID"}},
    {"nodelist", {"SLURM_JOB_NODELIST", "SLURM_NODELIST"}},
    {"num_nodes", {"SLURM_JOB_NUM_NODES", "SLURM_NNODES"}},
    {"ntasks", {"SLURM_NTASKS", "SLURM_NPROCS"}},
    {"job_name", {"SLURM_JOB_NAME", nullptr}},
    {"partition", {"SLURM_JOB_PARTITION", nullptr}},
    {"cluster", {"SLURM_CLUSTER_NAME", nullptr}},
    {"array_job_id", {"SLURM_ARRAY_JOB_ID", nullptr}},
    {"array_task_id", {"SLURM_ARRAY_TASK_ID", nullptr}},
}};

// The value as valid UTF-8: invalid bytes replaced by U+FFFD (nlohmann's strict dump would throw on them).
std::string valid_utf8(const std::string& value) {
  const std::string quoted = nlohmann::json(value).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return nlohmann::json::parse(quoted).get<std::string>();
}

}  // namespace

std::optional<SlurmJob> slurm_job(const std::function<const char*(const char*)>& lookup) {
  SlurmJob job;
  for (const Source& source : kSources) {
    for (const char* variable : source.variables) {
      if (variable == nullptr) break;
      const char* value = lookup(variable);
      if (value != nullptr && *value != '\0') {
        job.fields.emplace_back(source.key, valid_utf8(value));
        break;
      }
    }
  }
  if (job.fields.empty() || job.fields.front().first != "job_id") return std::nullopt;
  return job;
}

nlohmann::ordered_json slurm_json(const SlurmJob& job) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [key, value] : job.fields) j[key] = value;
  return j;
}

void add_slurm(nlohmann::ordered_json& config, const std::optional<SlurmJob>& job) {
  if (job) config["slurm"] = slurm_json(*job);
}

}  // namespace meshloom::launcher
