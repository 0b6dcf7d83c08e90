#include "meshloom/backends/nccl_types.hpp"

#include "meshloom/error.hpp"

namespace meshloom::nccl {

ncclDataType_t to_nccl(DType dtype) {
  switch (dtype) {
    case DType::Float32: return ncclFloat32;
    case DType::Float16: return ncclFloat16;
    case DType::BFloat16: return ncclBfloat16;
    case DType::Float64: return ncclFloat64;
    case DType::Int32: return ncclInt32;
    case DType::Int64: return ncclInt64;
    case DType::Int8: return ncclInt8;
    case DType::UInt8: return ncclUint8;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
    case DType::Float8E4M3: return ncclFloat8e4m3;
    case DType::Float8E5M2: return ncclFloat8e5m2;
#else
    case DType::Float8E4M3:
    case DType::Float8E5M2:
      break;
#endif
  }
  raise(ErrorKind::ValueError, "the NCCL backend cannot carry dtype " + std::string(to_string(dtype)) +
                                   " (NCCL " + std::to_string(NCCL_VERSION_CODE) + " has no such type)");
}

ncclRedOp_t to_nccl(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::Sum: return ncclSum;
    case ReduceOp::Avg: return ncclAvg;
    case ReduceOp::Max: return ncclMax;
    case ReduceOp::Min: return ncclMin;
    case ReduceOp::Product: return ncclProd;
  }
  return ncclSum;
}

std::string nccl_result_name(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "ncclSuccess";
    case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
    case ncclSystemError: return "ncclSystemError";
    case ncclInternalError: return "ncclInternalError";
    case ncclInvalidArgument: return "ncclInvalidArgument";
    case ncclInvalidUsage: return "ncclInvalidUsage";
    case ncclRemoteError: return "ncclRemoteError";
    case ncclInProgress: return "ncclInProgress";
    case ncclNumResults: break;
  }
  return "ncclResult(" + std::to_string(static_cast<int>(result)) + ")";
}

std::string nccl_error_message(std::string_view call, ncclResult_t result) {
  return std::string(call) + " failed: " + nccl_result_name(result) + " (" +
         std::to_string(static_cast<int>(result)) + "): " + ncclGetErrorString(result);
}

}  // namespace meshloom::nccl
