// meshloom-launch info: what this build can run on. The engine version, the MPI library, and (when built) the
// NCCL library, the CUDA runtime and driver and the GPUs it sees. Human text, or one JSON object with --json.
#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

#include "commands.hpp"
#include "meshloom/backends/mpi_runtime.hpp"
#ifdef MESHLOOM_HAVE_NCCL
#include "meshloom/backends/nccl_runtime.hpp"
#endif

namespace meshloom::launcher {

namespace {

nlohmann::ordered_json gather() {
  nlohmann::ordered_json j;
  j["version"] = MESHLOOM_VERSION;
  const auto mpi = meshloom::mpi::runtime_info();
  j["mpi"] = {{"library", mpi.library},
              {"standard", std::to_string(mpi.standard_major) + "." + std::to_string(mpi.standard_minor)}};
#ifdef MESHLOOM_HAVE_NCCL
  const auto nccl = meshloom::nccl::runtime_info();
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const auto& d : nccl.devices) {
    devices.push_back({{"index", d.index},
                       {"name", d.name},
                       {"memory_bytes", d.memory_bytes},
                       {"compute_capability", std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor)}});
  }
  j["nccl"] = {{"built", true},
               {"version", meshloom::nccl::format_nccl_version(nccl.nccl_version)},
               {"header_version", meshloom::nccl::format_nccl_version(nccl.nccl_header_version)},
               {"cuda_runtime", nccl.cuda_runtime_version},
               {"cuda_driver", nccl.cuda_driver_version},
               {"devices", devices}};
  if (!nccl.cuda_error.empty()) j["nccl"]["cuda_error"] = nccl.cuda_error;
#else
  j["nccl"] = {{"built", false}};
#endif
  return j;
}

void print_human(const nlohmann::ordered_json& j) {
  std::cout << "meshloom-launch " << j["version"].get<std::string>() << "\n";
  std::cout << "mpi:  " << j["mpi"]["library"].get<std::string>() << " (MPI " << j["mpi"]["standard"].get<std::string>()
            << ")\n";
  const auto& n = j["nccl"];
  if (!n["built"].get<bool>()) {
    std::cout << "nccl: not built (CUDA or NCCL was not found at configure time)\n";
    return;
  }
  auto cuda = [](int v) { return v == 0 ? std::string("none") : std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); };
  std::cout << "nccl: NCCL " << n["version"].get<std::string>() << " (built against "
            << n["header_version"].get<std::string>() << "), CUDA runtime " << cuda(n["cuda_runtime"].get<int>())
            << ", driver " << cuda(n["cuda_driver"].get<int>()) << "\n";
  if (n["devices"].empty()) {
    std::cout << "      no GPU: " << n.value("cuda_error", std::string("no CUDA device")) << "\n";
    return;
  }
  for (const auto& d : n["devices"]) {
    std::cout << "      GPU " << d["index"].get<int>() << ": " << d["name"].get<std::string>() << ", "
              << d["memory_bytes"].get<std::size_t>() / (1024 * 1024) << " MiB, sm "
              << d["compute_capability"].get<std::string>() << "\n";
  }
}

}  // namespace

void add_info_command(CLI::App& root, int& exit_code) {
  auto* sub = root.add_subcommand("info", "Show the engine version and the backends this build can use");
  auto json = std::make_shared<bool>(false);
  sub->add_flag("--json", *json, "Print one JSON object instead of text");
  sub->callback([json, &exit_code] {
    const auto j = gather();
    if (*json) {
      std::cout << j.dump() << "\n";
    } else {
      print_human(j);
    }
    exit_code = 0;
  });
}

}  // namespace meshloom::launcher
