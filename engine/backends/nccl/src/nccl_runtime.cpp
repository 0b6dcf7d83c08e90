#include "meshloom/backends/nccl_runtime.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>

namespace meshloom::nccl {

RuntimeInfo runtime_info() {
  RuntimeInfo info;
  info.nccl_header_version = NCCL_VERSION_CODE;
  if (ncclGetVersion(&info.nccl_version) != ncclSuccess) info.nccl_version = 0;
  if (cudaRuntimeGetVersion(&info.cuda_runtime_version) != cudaSuccess) info.cuda_runtime_version = 0;
  if (cudaDriverGetVersion(&info.cuda_driver_version) != cudaSuccess) info.cuda_driver_version = 0;

  // Without a driver cudaGetDeviceCount fails (cudaErrorInsufficientDriver) and leaves its output unwritten.
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    info.cuda_error = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
    (void)cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return info;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    info.devices.push_back({i, prop.name, prop.totalGlobalMem, prop.major, prop.minor});
  }
  if (info.devices.empty()) info.cuda_error = "no CUDA device";
  return info;
}

NcclVersion split_nccl_version(int code) noexcept {
  // Since NCCL 2.9 the code is major*10000 + minor*100 + patch; before, major*1000 + minor*100 + patch.
  if (code >= 10000) return {code / 10000, (code / 100) % 100, code % 100};
  return {code / 1000, (code / 100) % 10, code % 100};
}

std::string format_nccl_version(int code) {
  const NcclVersion v = split_nccl_version(code);
  return std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
}

std::string nccl_version_problem(int header, int loaded) {
  if (loaded <= 0) return "no NCCL library was loaded (ncclGetVersion failed)";
  const NcclVersion h = split_nccl_version(header);
  const NcclVersion l = split_nccl_version(loaded);
  const std::string pair =
      "NCCL " + format_nccl_version(loaded) + " loaded, nccl.h " + format_nccl_version(header) + " compiled against";
  if (l.major != h.major) return pair + ": a different major version (another ABI)";
  if (l.minor < h.minor) {
    return pair + ": the library is older than the header (an older minor version may lack functions the backend calls)";
  }
  if (l.major < 2 || (l.major == 2 && l.minor < 18)) return pair + ": the backend needs NCCL 2.18 (ncclCommSplit)";
  return {};
}

}  // namespace meshloom::nccl
