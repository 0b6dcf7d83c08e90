#include "meshloom/backends/nccl_types.hpp"

#include <cstdint>

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

void check_reduction(std::string_view collective, DType dtype, ReduceOp op, int compute_major, int compute_minor) {
  if (dtype != DType::Float8E4M3 && dtype != DType::Float8E5M2) return;
  const std::string what = std::string(collective) + " of " + std::string(to_string(dtype));
  if (compute_major < 9) {
    raise(ErrorKind::ValueError, what + ": NCCL reduces float8 only on compute capability 9.0 or later; this device has " +
                                     std::to_string(compute_major) + "." + std::to_string(compute_minor) +
                                     " (all_gather, all_to_all and broadcast still carry it)");
  }
  if (op == ReduceOp::Avg) {
    raise(ErrorKind::ValueError, what + " with op avg: NCCL has no average for float8 (ncclAvg is an invalid "
                                        "argument there); reduce with sum and scale");
  }
}

namespace {

std::string_view collective_name(Collective op) noexcept {
  switch (op) {
    case Collective::AllReduce: return "all_reduce";
    case Collective::AllGather: return "all_gather";
    case Collective::ReduceScatter: return "reduce_scatter";
    case Collective::AllToAll: return "all_to_all";
  }
  return "collective";
}

}  // namespace

void check_in_place(Collective op, const void* in, std::size_t in_bytes, const void* out, std::size_t out_bytes,
                    int rank) {
  if (in == nullptr || out == nullptr || in_bytes == 0 || out_bytes == 0) return;
  const auto a = reinterpret_cast<std::uintptr_t>(in);
  const auto b = reinterpret_cast<std::uintptr_t>(out);
  const bool overlap = a < b + out_bytes && b < a + in_bytes;
  if (!overlap) return;
  const auto r = static_cast<std::uintptr_t>(rank < 0 ? 0 : rank);
  const std::string name(collective_name(op));
  const std::string where = " (rank " + std::to_string(rank) + ": out = in " + (b >= a ? "+ " : "- ") +
                            std::to_string(b >= a ? b - a : a - b) + " bytes)";
  switch (op) {
    case Collective::AllReduce:
      if (a == b) return;
      raise(ErrorKind::ValueError, name + ": input and output overlap without being the same buffer" + where +
                                       "; NCCL's in-place all_reduce needs in == out");
    case Collective::AllGather:
      if (a == b + r * in_bytes) return;
      raise(ErrorKind::ValueError,
            name + ": input and output overlap" + where + "; NCCL's in-place all_gather needs in == out + rank * count (" +
                std::to_string(r * in_bytes) + " bytes in)");
    case Collective::ReduceScatter:
      if (b == a + r * out_bytes) return;
      raise(ErrorKind::ValueError,
            name + ": input and output overlap" + where +
                "; NCCL's in-place reduce_scatter needs out == in + rank * count (" + std::to_string(r * out_bytes) +
                " bytes in), not out == in as MPI's in place (which keeps the block at the start); pass separate "
                "buffers or out = in + rank * count");
    case Collective::AllToAll:
      raise(ErrorKind::ValueError, name + " in place (or on overlapping buffers)" + where +
                                       " is not supported by ncclAlltoAll; pass separate input and output buffers");
  }
}

}  // namespace meshloom::nccl
