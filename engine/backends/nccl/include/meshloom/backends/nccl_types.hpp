// The NCCL backend's type mappings and error formatting, exposed for its tests. Unlike the other headers of this
// target it includes nccl.h: a consumer links Meshloom::nccl (and CUDA::cudart) itself.
#pragma once

#include <nccl.h>

#include <string>
#include <string_view>

#include "meshloom/dtype.hpp"
#include "meshloom/plan/state.hpp"

namespace meshloom::nccl {

// Whether this build's nccl.h has the float8 types (ncclFloat8e4m3 / ncclFloat8e5m2, NCCL 2.24+).
inline constexpr bool kHasFloat8 = NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0);
// Whether all_to_all is ncclAlltoAll (NCCL 2.28+) rather than grouped ncclSend/ncclRecv.
inline constexpr bool kHasAlltoAll = NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0);

// Every DType NCCL carries; ValueError naming the dtype otherwise (float8 before NCCL 2.24).
[[nodiscard]] ncclDataType_t to_nccl(DType dtype);
// Sum, Avg (ncclAvg), Max, Min, Product (ncclProd).
[[nodiscard]] ncclRedOp_t to_nccl(ReduceOp op) noexcept;
// "ncclInvalidArgument" for ncclInvalidArgument; "ncclResult(N)" for a code this header does not know.
[[nodiscard]] std::string nccl_result_name(ncclResult_t result);
// "<call> failed: <name> (<code>): <ncclGetErrorString>", the message of the RuntimeError the backend raises.
[[nodiscard]] std::string nccl_error_message(std::string_view call, ncclResult_t result);

}  // namespace meshloom::nccl
