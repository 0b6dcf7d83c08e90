// What the Open MPI backend runs on: the MPI library and standard versions. Callable before MPI_Init and
// without any launcher (MPI_Get_library_version and MPI_Get_version need neither).
#pragma once

#include <string>

namespace meshloom::mpi {

struct RuntimeInfo {
  std::string library;  // MPI_Get_library_version, first line: "Open MPI v4.1.4, package: ..."
  int standard_major = 0;  // MPI_Get_version
  int standard_minor = 0;
};

[[nodiscard]] RuntimeInfo runtime_info();

}  // namespace meshloom::mpi
