// The NCCL backend's mappings and messages: pure functions, no GPU needed.
#include <gtest/gtest.h>

#include <string>

#include "meshloom/backends/nccl_types.hpp"
#include "meshloom/error.hpp"

using meshloom::DType;
using meshloom::Error;
using meshloom::ErrorKind;
using meshloom::ReduceOp;
namespace nccl = meshloom::nccl;

TEST(NcclTypes, MapsEveryDTypeNcclCarries) {
  EXPECT_EQ(nccl::to_nccl(DType::Float32), ncclFloat32);
  EXPECT_EQ(nccl::to_nccl(DType::Float16), ncclFloat16);
  EXPECT_EQ(nccl::to_nccl(DType::BFloat16), ncclBfloat16);
  EXPECT_EQ(nccl::to_nccl(DType::Float64), ncclFloat64);
  EXPECT_EQ(nccl::to_nccl(DType::Int32), ncclInt32);
  EXPECT_EQ(nccl::to_nccl(DType::Int64), ncclInt64);
  EXPECT_EQ(nccl::to_nccl(DType::Int8), ncclInt8);
  EXPECT_EQ(nccl::to_nccl(DType::UInt8), ncclUint8);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
  EXPECT_TRUE(nccl::kHasFloat8);
  EXPECT_EQ(nccl::to_nccl(DType::Float8E4M3), ncclFloat8e4m3);
  EXPECT_EQ(nccl::to_nccl(DType::Float8E5M2), ncclFloat8e5m2);
#else
  EXPECT_FALSE(nccl::kHasFloat8);
#endif
}

TEST(NcclTypes, EveryDTypeMapsOrIsAValueErrorNamingIt) {
  for (const auto name : meshloom::dtype_names()) {
    const auto dtype = meshloom::dtype_from_string(name);
    ASSERT_TRUE(dtype.has_value()) << name;
    try {
      const ncclDataType_t type = nccl::to_nccl(*dtype);
      EXPECT_GE(static_cast<int>(type), 0) << name;
      EXPECT_LT(static_cast<int>(type), static_cast<int>(ncclNumTypes)) << name;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::ValueError) << name;
      EXPECT_NE(e.message().find(std::string(name)), std::string::npos) << e.what();
      EXPECT_FALSE(nccl::kHasFloat8) << "only float8 may be missing, and only before NCCL 2.24: " << e.what();
    }
  }
}

TEST(NcclTypes, MapsEveryReduceOp) {
  EXPECT_EQ(nccl::to_nccl(ReduceOp::Sum), ncclSum);
  EXPECT_EQ(nccl::to_nccl(ReduceOp::Avg), ncclAvg);
  EXPECT_EQ(nccl::to_nccl(ReduceOp::Max), ncclMax);
  EXPECT_EQ(nccl::to_nccl(ReduceOp::Min), ncclMin);
  EXPECT_EQ(nccl::to_nccl(ReduceOp::Product), ncclProd);
}

TEST(NcclTypes, AllToAllUsesNcclAlltoAllFrom228) {
  EXPECT_EQ(nccl::kHasAlltoAll, NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0));
}

TEST(NcclTypes, ErrorMessagesNameTheCallTheCodeAndNcclsText) {
  EXPECT_EQ(nccl::nccl_result_name(ncclInvalidArgument), "ncclInvalidArgument");
  EXPECT_EQ(nccl::nccl_result_name(ncclRemoteError), "ncclRemoteError");
  EXPECT_EQ(nccl::nccl_result_name(ncclNumResults), "ncclResult(" + std::to_string(static_cast<int>(ncclNumResults)) + ")");
  const std::string message = nccl::nccl_error_message("ncclAllReduce", ncclInvalidArgument);
  EXPECT_EQ(message, std::string("ncclAllReduce failed: ncclInvalidArgument (4): ") +
                         ncclGetErrorString(ncclInvalidArgument));
}
