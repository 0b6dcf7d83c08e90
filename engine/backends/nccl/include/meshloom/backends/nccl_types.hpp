// The NCCL backend's type mappings, argument rules and error formatting, exposed for its tests. Unlike the other
// headers of this target it includes nccl.h: a consumer links Meshloom::nccl (and CUDA::cudart) itself.
#pragma once

#include <nccl.h>

#include <cstddef>
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

// ---- argument rules NcclCommunicator applies before any NCCL call (pure functions: testable without a GPU) ----

// The reductions NCCL refuses on float8, as ValueErrors naming the collective and the dtype: any reduction on a
// device before compute capability 9.0 (Hopper; the message names the device's capability, "8.6"), and avg
// anywhere (ncclAvg on float8 is ncclInvalidArgument, seen with NCCL 2.28). Any other dtype or op passes.
void check_reduction(std::string_view collective, DType dtype, ReduceOp op, int compute_major, int compute_minor);

enum class Collective { AllReduce, AllGather, ReduceScatter, AllToAll };

// The in-place calls NCCL honours, for an input of in_bytes and an output of out_bytes (whole buffers, counts
// already checked):
//   all_reduce      in == out
//   all_gather      in == out + rank * in_bytes   (NCCL's and MPI's in-place all_gather agree)
//   reduce_scatter  out == in + rank * out_bytes  (NCCL's in place. MPI's in place is out == in, keeping the
//                                                  block at the start: the same only on rank 0)
//   all_to_all      never (ncclAlltoAll and grouped send/recv need disjoint buffers)
// Any other overlap of the two byte ranges is a ValueError naming the collective and what NCCL would need.
// Empty ranges never overlap.
void check_in_place(Collective op, const void* in, std::size_t in_bytes, const void* out, std::size_t out_bytes,
                    int rank);

}  // namespace meshloom::nccl
