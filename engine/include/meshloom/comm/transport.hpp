#pragma once

// The transport settings a collective's cost depends on, beyond the machine: the environment variables that choose
// and tune how a communication library moves the bytes, and the ranks' CPU scheduling policy. The same all_gather on
// the same two ranks can cost a quarter more without Open MPI's single-copy path (CMA) than with it, or another NCCL
// protocol, so a calibration records the settings it was measured under, and the commands that set its prices
// against measurements (run, validate, advise --measure, refine, rescore) refuse measurements made under other ones.
// Values are compared as they are ("SCHED_RR priority 1" is not "SCHED_RR priority 2").
//
//   Open MPI  OMPI_MCA_btl*, OMPI_MCA_pml*, OMPI_MCA_mtl*, OMPI_MCA_coll*, OMPI_MCA_osc*,
//             OMPI_MCA_mpi_yield_when_idle, OMPI_MCA_mpi_leave_pinned (what `mpirun --mca NAME VALUE` sets),
//             but those ending in _verbose (logging)
//   UCX       UCX_* but UCX_LOG_*
//   NCCL      NCCL_* but NCCL_DEBUG, NCCL_DEBUG_SUBSYS, NCCL_DEBUG_FILE and NCCL_COMM_ID (a job's rendezvous)
//
//   scheduler the CPU scheduling policy the ranks ran under, where it is not Linux's default (SCHED_OTHER), as
//             "SCHED_RR priority 1" (`chrt -r 1 mpirun ...`): where ranks outnumber cores it decides who runs when
//             a rank waits. Read from the process (the launcher's job_transport), never from the environment; it
//             counts for every backend. Files written before it was recorded hold none: their policy reads as
//             the default
//
// Example: the environment {"OMPI_MCA_btl_vader_single_copy_mechanism=none", "OMPI_MCA_ess_base_jobid=1",
// "NCCL_DEBUG=INFO", "HOME=/root"} gives {"OMPI_MCA_btl_vader_single_copy_mechanism": "none"}.
// Settings read from files (Open MPI's mca-params.conf, /etc/nccl.conf) are not seen: pass them in the environment.

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace meshloom::comm {

// Name -> value, sorted by name.
using TransportSettings = std::map<std::string, std::string>;

// The name of the scheduling policy's setting (above).
inline constexpr std::string_view kSchedulerSetting = "scheduler";

// The most bytes of a setting's name or of its value a record holds.
inline constexpr std::size_t kMaxTransportChars = 1024;

// What a record holds of a name or value: single-line UTF-8 (no control characters) of at most kMaxTransportChars
// bytes. Example: "none" and "" yes; "a\nb", "\xff" and 1025 bytes no.
[[nodiscard]] bool recordable_setting(std::string_view text) noexcept;

// Whether a setting of this name shapes a collective's cost (the list above: an environment variable's name, or
// kSchedulerSetting).
[[nodiscard]] bool shapes_collective_cost(std::string_view name) noexcept;

// The transport settings of an environment given as "NAME=VALUE" entries (as `environ` holds them; the first of a
// name counts, as getenv reads it; a variable named kSchedulerSetting is not the policy, and is left out). A value a
// record cannot hold is recorded as "?" (it then matches only another such value); an entry without '=', or whose
// name a record cannot hold, is skipped.
[[nodiscard]] TransportSettings transport_settings(const std::vector<std::string>& environment);

// The settings of `settings` that the collectives of `backend` run on: "mpi": Open MPI's and UCX's; "nccl": NCCL's
// (MPI carries only control traffic there); any other backend: all of them; the scheduler on every backend. Example:
// {"NCCL_PROTO": "LL", "OMPI_MCA_btl": "^vader", "scheduler": "SCHED_RR priority 1"} on "mpi" gives
// {"OMPI_MCA_btl": "^vader", "scheduler": "SCHED_RR priority 1"}.
[[nodiscard]] TransportSettings settings_of_backend(const TransportSettings& settings, std::string_view backend);

// The settings that differ between two records of them, in name order, as people read it (values quoted as JSON
// strings), or "" when none does:
//   transport_difference({{"OMPI_MCA_btl", "^vader"}}, "the calibration", {}, "this job")
//     == "OMPI_MCA_btl is \"^vader\" in the calibration and unset in this job"
// (several joined by "; ").
[[nodiscard]] std::string transport_difference(const TransportSettings& a, std::string_view a_name,
                                               const TransportSettings& b, std::string_view b_name);
// The same over the settings `backend`'s collectives run on (settings_of_backend): what a calibration of that backend
// and a measurement disagree on. Example: on "mpi", {{"NCCL_PROTO", "LL"}} against {} gives "".
[[nodiscard]] std::string transport_difference(std::string_view backend, const TransportSettings& a,
                                               std::string_view a_name, const TransportSettings& b,
                                               std::string_view b_name);

}  // namespace meshloom::comm
