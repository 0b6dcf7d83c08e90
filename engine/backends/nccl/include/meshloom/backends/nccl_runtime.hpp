// What the NCCL backend runs on: the NCCL library it loaded, the CUDA runtime and driver, and the GPUs it
// sees. Safe on a machine without a GPU or driver: devices is then empty and `cuda_error` says why.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace meshloom::nccl {

struct Device {
  int index = 0;
  std::string name;
  std::size_t memory_bytes = 0;
  int compute_major = 0;
  int compute_minor = 0;
};

struct RuntimeInfo {
  int nccl_version = 0;          // ncclGetVersion: major*10000 + minor*100 + patch (e.g. 22809)
  int nccl_header_version = 0;   // NCCL_VERSION_CODE of the nccl.h this backend was compiled against
  int cuda_runtime_version = 0;  // cudaRuntimeGetVersion (e.g. 13000)
  int cuda_driver_version = 0;   // cudaDriverGetVersion; 0 without a driver
  std::vector<Device> devices;
  std::string cuda_error;        // why no device was found, when none was
};

[[nodiscard]] RuntimeInfo runtime_info();
struct NcclVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
};
// {2, 28, 9} from 22809 (and {2, 7, 8} from 2708: before 2.9 the code was major*1000 + minor*100 + patch).
[[nodiscard]] NcclVersion split_nccl_version(int code) noexcept;
// "2.28.9" from 22809.
[[nodiscard]] std::string format_nccl_version(int code);
// Whether the NCCL loaded at run time (`loaded`) can serve a backend compiled against nccl.h `header`: empty when
// it can, the reason otherwise. NCCL keeps its ABI within a major version, a later minor only adds and a patch
// release changes no API, so the rule is: the same major, a minor at least the header's (any patch), and at least
// 2.18 (ncclCommSplit). 0 (no library) is never compatible.
[[nodiscard]] std::string nccl_version_problem(int header, int loaded);

}  // namespace meshloom::nccl
