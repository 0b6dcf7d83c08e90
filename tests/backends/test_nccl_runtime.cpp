// The NCCL backend loads the NCCL it was compiled against and reports the GPUs it sees; without a GPU the
// device checks skip, after checking that the reason is reported.
#include <gtest/gtest.h>

#include "meshloom/backends/nccl_runtime.hpp"

using meshloom::nccl::format_nccl_version;
using meshloom::nccl::runtime_info;

TEST(NcclRuntime, FormatsVersionCodes) {
  EXPECT_EQ(format_nccl_version(22809), "2.28.9");
  EXPECT_EQ(format_nccl_version(21803), "2.18.3");
  EXPECT_EQ(format_nccl_version(2708), "2.7.8");  // before 2.9 the code was major*1000 + minor*100 + patch
}

TEST(NcclRuntime, LoadedLibraryMatchesTheHeader) {
  const auto info = runtime_info();
  EXPECT_EQ(info.nccl_version, info.nccl_header_version);
  EXPECT_GE(info.nccl_version, 21800);  // ncclCommSplit needs 2.18
  EXPECT_GT(info.cuda_runtime_version, 0);
}

TEST(NcclRuntime, ReportsEveryGpuOrWhyThereIsNone) {
  const auto info = runtime_info();
  if (info.devices.empty()) {
    EXPECT_FALSE(info.cuda_error.empty());
    GTEST_SKIP() << "no GPU: " << info.cuda_error;
  }
  EXPECT_GT(info.cuda_driver_version, 0);
  for (std::size_t i = 0; i < info.devices.size(); ++i) {
    const auto& d = info.devices[i];
    EXPECT_EQ(d.index, static_cast<int>(i));
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.memory_bytes, std::size_t{1} << 30);
    EXPECT_GE(d.compute_major, 7);
  }
}
