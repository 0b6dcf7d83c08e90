#include "meshloom/backends/mpi_runtime.hpp"

#include <mpi.h>

#include <array>

namespace meshloom::mpi {

RuntimeInfo runtime_info() {
  RuntimeInfo info;
  std::array<char, MPI_MAX_LIBRARY_VERSION_STRING> buffer{};
  int length = 0;
  if (MPI_Get_library_version(buffer.data(), &length) == MPI_SUCCESS && length > 0) {
    // The first line only; Open MPI counts the terminating NUL in length.
    const std::string text(buffer.data(), static_cast<std::size_t>(length));
    info.library = text.substr(0, text.find_first_of(std::string("\r\n\0", 3)));
  }
  MPI_Get_version(&info.standard_major, &info.standard_minor);
  return info;
}

}  // namespace meshloom::mpi
