// The NCCL backend loads an NCCL it can use and reports the GPUs it sees; without a GPU the device checks skip,
// after checking that the reason is reported.
#include <gtest/gtest.h>

#include <nccl.h>

#include <string>

#include "meshloom/backends/nccl_runtime.hpp"

using meshloom::nccl::format_nccl_version;
using meshloom::nccl::nccl_version_problem;
using meshloom::nccl::runtime_info;
using meshloom::nccl::split_nccl_version;

TEST(NcclRuntime, FormatsVersionCodes) {
  EXPECT_EQ(format_nccl_version(22809), "2.28.9");
  EXPECT_EQ(format_nccl_version(21803), "2.18.3");
  EXPECT_EQ(format_nccl_version(2708), "2.7.8");  // before 2.9 the code was major*1000 + minor*100 + patch
  const auto v = split_nccl_version(23001);
  EXPECT_EQ(v.major, 2);
  EXPECT_EQ(v.minor, 30);
  EXPECT_EQ(v.patch, 1);
}

// Compatibility is a rule, not equality: an NCCL upgrade (newer minor or patch) must keep passing.
TEST(NcclRuntime, VersionRuleAcceptsUpgradesAndRefusesWhatCannotWork) {
  EXPECT_EQ(nccl_version_problem(22809, 22809), "");
  EXPECT_EQ(nccl_version_problem(22809, 22810), "");  // patch upgrade
  EXPECT_EQ(nccl_version_problem(22809, 22903), "");  // minor upgrade
  EXPECT_EQ(nccl_version_problem(22809, 22803), "");  // older patch of the same minor: same API
  EXPECT_NE(nccl_version_problem(22809, 22703).find("older than the header"), std::string::npos);
  EXPECT_NE(nccl_version_problem(22809, 30001).find("different major"), std::string::npos);
  EXPECT_NE(nccl_version_problem(21700, 21703).find("2.18"), std::string::npos);
  EXPECT_NE(nccl_version_problem(22809, 0).find("no NCCL library"), std::string::npos);
}

TEST(NcclRuntime, LoadedLibraryServesTheHeader) {
  const auto info = runtime_info();
  EXPECT_EQ(info.nccl_header_version, NCCL_VERSION_CODE);
  EXPECT_EQ(nccl_version_problem(info.nccl_header_version, info.nccl_version), "")
      << "header " << format_nccl_version(info.nccl_header_version) << ", loaded "
      << format_nccl_version(info.nccl_version);
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
