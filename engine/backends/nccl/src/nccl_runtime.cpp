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

std::string format_nccl_version(int code) {
  // Since NCCL 2.9 the code is major*10000 + minor*100 + patch; before, major*1000 + minor*100 + patch.
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? (code / 100) % 100 : (code / 100) % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

}  // namespace meshloom::nccl
