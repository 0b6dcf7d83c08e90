// The Open MPI backend reports the library it was built with (no MPI_Init needed).
#include <gtest/gtest.h>

#include "meshloom/backends/mpi_runtime.hpp"

TEST(MpiRuntime, ReportsOpenMpiAndAnMpi3Standard) {
  const auto info = meshloom::mpi::runtime_info();
  EXPECT_NE(info.library.find("Open MPI"), std::string::npos) << info.library;
  EXPECT_EQ(info.library.find('\n'), std::string::npos);
  EXPECT_EQ(info.library.find('\0'), std::string::npos);
  EXPECT_GE(info.standard_major, 3);
  EXPECT_GE(info.standard_minor, 0);
}
