// The NCCL backend's mappings, argument rules and messages: pure functions, no GPU needed. The dtype mapping is
// checked against an independent description of NCCL's types (size and number format), and what this build
// assumes of the NCCL it compiled against is checked against the library actually loaded.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <array>
#include <ostream>
#include <set>
#include <string>

#include "meshloom/backends/nccl_runtime.hpp"
#include "meshloom/backends/nccl_types.hpp"
#include "meshloom/error.hpp"

using meshloom::DType;
using meshloom::Error;
using meshloom::ErrorKind;
using meshloom::ReduceOp;
namespace nccl = meshloom::nccl;

namespace {

// What a number format is, written from NCCL's documentation of ncclDataType_t (not from the backend's mapping).
struct Format {
  int bytes = 0;
  std::string kind;  // "int", "uint", "ieee" (IEEE binary16/32/64), "bf16", "e4m3", "e5m2"
  bool operator==(const Format&) const = default;
  friend void PrintTo(const Format& f, std::ostream* os) { *os << f.bytes << "-byte " << f.kind; }
};

Format nccl_format(ncclDataType_t type) {
  switch (type) {
    case ncclInt8: return {1, "int"};
    case ncclUint8: return {1, "uint"};
    case ncclInt32: return {4, "int"};
    case ncclUint32: return {4, "uint"};
    case ncclInt64: return {8, "int"};
    case ncclUint64: return {8, "uint"};
    case ncclFloat16: return {2, "ieee"};
    case ncclFloat32: return {4, "ieee"};
    case ncclFloat64: return {8, "ieee"};
    case ncclBfloat16: return {2, "bf16"};
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
    case ncclFloat8e4m3: return {1, "e4m3"};
    case ncclFloat8e5m2: return {1, "e5m2"};
#endif
    default: break;
  }
  return {0, "unknown(" + std::to_string(static_cast<int>(type)) + ")"};
}

// The same description of meshloom's dtypes, from their names ("float8_e4m3", "bfloat16", "uint8", ...) and
// itemsize.
Format meshloom_format(DType dtype) {
  const std::string name(meshloom::to_string(dtype));
  const int bytes = static_cast<int>(meshloom::itemsize(dtype));
  if (name == "float8_e4m3") return {bytes, "e4m3"};
  if (name == "float8_e5m2") return {bytes, "e5m2"};
  if (name == "bfloat16") return {bytes, "bf16"};
  if (name.rfind("float", 0) == 0) return {bytes, "ieee"};
  if (name.rfind("uint", 0) == 0) return {bytes, "uint"};
  if (name.rfind("int", 0) == 0) return {bytes, "int"};
  return {bytes, "unknown " + name};
}

bool exported(const char* symbol) { return dlsym(RTLD_DEFAULT, symbol) != nullptr; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

template <class F>
std::string value_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ValueError) << e.what();
    return e.message();
  }
  ADD_FAILURE() << "no ValueError";
  return {};
}

}  // namespace

// Every dtype maps to the NCCL type of the same size and number format, and no two dtypes share one (so a float16
// buffer can never be reduced as bfloat16, or int8 as uint8).
TEST(NcclTypes, EveryDTypeMapsToTheNcclTypeOfTheSameSizeAndFormat) {
  std::set<int> seen;
  for (const auto name : meshloom::dtype_names()) {
    const DType dtype = *meshloom::dtype_from_string(name);
    SCOPED_TRACE(std::string(name));
    const bool float8 = dtype == DType::Float8E4M3 || dtype == DType::Float8E5M2;
    if (float8 && !nccl::kHasFloat8) {
      const std::string message = value_error([&] { (void)nccl::to_nccl(dtype); });
      EXPECT_TRUE(contains(message, std::string(name))) << message;
      continue;
    }
    const ncclDataType_t type = nccl::to_nccl(dtype);
    EXPECT_EQ(nccl_format(type), meshloom_format(dtype)) << "NCCL type " << static_cast<int>(type);
    EXPECT_TRUE(seen.insert(static_cast<int>(type)).second) << "NCCL type " << static_cast<int>(type) << " twice";
  }
  EXPECT_EQ(seen.size(), meshloom::dtype_names().size() - (nccl::kHasFloat8 ? 0 : 2));
}

// What this build assumes of NCCL holds for the library loaded at run time: float8 types (2.24+) need a library
// that knows them, ncclAlltoAll (2.28+) must be exported by it, and the backend's other entry points too.
TEST(NcclTypes, TheLoadedLibraryHasWhatTheBuildAssumes) {
  int loaded = 0;
  ASSERT_EQ(ncclGetVersion(&loaded), ncclSuccess);
  if (nccl::kHasFloat8) {
    EXPECT_GE(loaded, NCCL_VERSION(2, 24, 0)) << "float8 compiled in, but the loaded NCCL "
                                              << nccl::format_nccl_version(loaded) << " predates it";
  }
  EXPECT_EQ(exported("ncclAlltoAll"), loaded >= NCCL_VERSION(2, 28, 0))
      << "ncclAlltoAll exported by NCCL " << nccl::format_nccl_version(loaded);
  if (nccl::kHasAlltoAll) {
    EXPECT_TRUE(exported("ncclAlltoAll"));
  }
  for (const char* symbol : {"ncclCommSplit", "ncclCommInitRankConfig", "ncclCommGetAsyncError", "ncclCommAbort",
                             "ncclCommFinalize", "ncclReduceScatter", "ncclGetLastError"}) {
    EXPECT_TRUE(exported(symbol)) << symbol;
  }
}

TEST(NcclTypes, MapsEveryReduceOp) {
  EXPECT_EQ(nccl::to_nccl(ReduceOp::Sum), ncclSum);
  EXPECT_EQ(nccl::to_nccl(ReduceOp::Avg), ncclAvg);
  EXPECT_EQ(nccl::to_nccl(ReduceOp::Max), ncclMax);
  EXPECT_EQ(nccl::to_nccl(ReduceOp::Min), ncclMin);
  EXPECT_EQ(nccl::to_nccl(ReduceOp::Product), ncclProd);
  std::set<int> ops;
  for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max, ReduceOp::Min, ReduceOp::Product}) {
    ops.insert(static_cast<int>(nccl::to_nccl(op)));
  }
  EXPECT_EQ(ops.size(), 5u);
}

TEST(NcclTypes, ErrorMessagesNameTheCallTheCodeAndNcclsText) {
  EXPECT_EQ(nccl::nccl_result_name(ncclInvalidArgument), "ncclInvalidArgument");
  EXPECT_EQ(nccl::nccl_result_name(ncclRemoteError), "ncclRemoteError");
  EXPECT_EQ(nccl::nccl_result_name(ncclNumResults), "ncclResult(" + std::to_string(static_cast<int>(ncclNumResults)) + ")");
  const std::string message = nccl::nccl_error_message("ncclAllReduce", ncclInvalidArgument);
  EXPECT_EQ(message, std::string("ncclAllReduce failed: ncclInvalidArgument (4): ") +
                         ncclGetErrorString(ncclInvalidArgument));
}

// float8 reductions need compute capability 9.0 and have no avg; moving float8 (gather, all_to_all, broadcast) is
// not checked here.
TEST(NcclTypes, Float8ReductionsNeedComputeCapabilityNineAndHaveNoAvg) {
  std::string message =
      value_error([] { nccl::check_reduction("all_reduce", DType::Float8E4M3, ReduceOp::Sum, 8, 6); });
  EXPECT_TRUE(contains(message, "all_reduce of float8_e4m3")) << message;
  EXPECT_TRUE(contains(message, "8.6")) << message;
  EXPECT_TRUE(contains(message, "9.0")) << message;
  message = value_error([] { nccl::check_reduction("reduce_scatter", DType::Float8E5M2, ReduceOp::Max, 8, 0); });
  EXPECT_TRUE(contains(message, "reduce_scatter of float8_e5m2")) << message;
  EXPECT_TRUE(contains(message, "8.0")) << message;
  message = value_error([] { nccl::check_reduction("all_reduce", DType::Float8E5M2, ReduceOp::Avg, 9, 0); });
  EXPECT_TRUE(contains(message, "all_reduce of float8_e5m2 with op avg")) << message;
  for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Product}) {
    EXPECT_NO_THROW(nccl::check_reduction("all_reduce", DType::Float8E4M3, op, 9, 0));
    EXPECT_NO_THROW(nccl::check_reduction("all_reduce", DType::Float8E5M2, op, 10, 0));
  }
  EXPECT_NO_THROW(nccl::check_reduction("all_reduce", DType::BFloat16, ReduceOp::Avg, 7, 0));
  EXPECT_NO_THROW(nccl::check_reduction("all_reduce", DType::Float32, ReduceOp::Avg, 7, 0));
}

// NCCL's in-place rules (which differ from MPI's for reduce_scatter) and the overlaps it cannot honour.
TEST(NcclTypes, InPlaceCallsNcclCannotHonourAreValueErrors) {
  using nccl::Collective;
  std::array<char, 4096> memory{};
  char* base = memory.data();
  // all_reduce: in == out, or disjoint.
  EXPECT_NO_THROW(nccl::check_in_place(Collective::AllReduce, base, 64, base, 64, 3));
  EXPECT_NO_THROW(nccl::check_in_place(Collective::AllReduce, base, 64, base + 64, 64, 3));
  std::string m = value_error([&] { nccl::check_in_place(Collective::AllReduce, base, 64, base + 8, 64, 0); });
  EXPECT_TRUE(contains(m, "all_reduce")) << m;
  // all_gather on rank 2 of 4, 16 bytes each: in place is in == out + 32 (the same for MPI).
  EXPECT_NO_THROW(nccl::check_in_place(Collective::AllGather, base + 32, 16, base, 64, 2));
  EXPECT_NO_THROW(nccl::check_in_place(Collective::AllGather, base + 64, 16, base, 64, 2));  // disjoint
  m = value_error([&] { nccl::check_in_place(Collective::AllGather, base, 16, base, 64, 2); });
  EXPECT_TRUE(contains(m, "all_gather")) << m;
  EXPECT_TRUE(contains(m, "in == out + rank * count")) << m;
  // reduce_scatter on rank 2 of 4, 16 bytes kept: NCCL's in place is out == in + 32; MPI's (out == in) is refused
  // except on rank 0, where the two agree.
  EXPECT_NO_THROW(nccl::check_in_place(Collective::ReduceScatter, base, 64, base + 32, 16, 2));
  EXPECT_NO_THROW(nccl::check_in_place(Collective::ReduceScatter, base, 64, base, 16, 0));
  m = value_error([&] { nccl::check_in_place(Collective::ReduceScatter, base, 64, base, 16, 2); });
  EXPECT_TRUE(contains(m, "reduce_scatter")) << m;
  EXPECT_TRUE(contains(m, "out == in + rank * count")) << m;
  EXPECT_TRUE(contains(m, "rank 2")) << m;
  // all_to_all: never in place.
  m = value_error([&] { nccl::check_in_place(Collective::AllToAll, base, 64, base, 64, 0); });
  EXPECT_TRUE(contains(m, "all_to_all in place")) << m;
  EXPECT_TRUE(contains(m, "ncclAlltoAll")) << m;
  (void)value_error([&] { nccl::check_in_place(Collective::AllToAll, base, 64, base + 32, 64, 1); });
  EXPECT_NO_THROW(nccl::check_in_place(Collective::AllToAll, base, 64, base + 64, 64, 1));
  // Empty buffers never overlap.
  EXPECT_NO_THROW(nccl::check_in_place(Collective::AllToAll, base, 0, base, 0, 0));
  EXPECT_NO_THROW(nccl::check_in_place(Collective::AllToAll, nullptr, 0, nullptr, 0, 0));
}
