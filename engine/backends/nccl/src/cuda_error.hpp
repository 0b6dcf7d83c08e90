// Internal to the NCCL backend: CUDA errors as meshloom RuntimeErrors.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

#include "meshloom/error.hpp"

namespace meshloom::nccl::detail {

// "<call> failed: cudaErrorInsufficientDriver (35): CUDA driver version is insufficient for CUDA runtime version"
[[nodiscard]] inline std::string cuda_error_message(std::string_view call, cudaError_t status) {
  return std::string(call) + " failed: " + cudaGetErrorName(status) + " (" +
         std::to_string(static_cast<int>(status)) + "): " + cudaGetErrorString(status);
}

// Throws RuntimeError for anything but cudaSuccess; `context` (when not empty) is appended after "; ".
inline void check_cuda(cudaError_t status, std::string_view call, std::string_view context = {}) {
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();  // clear a non-sticky error so later calls start clean
  std::string message = cuda_error_message(call, status);
  if (!context.empty()) message += std::string("; ") + std::string(context);
  raise(ErrorKind::RuntimeError, message);
}

}  // namespace meshloom::nccl::detail
