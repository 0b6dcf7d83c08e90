# Finds the CUDA toolkit and NCCL. Sets MESHLOOM_HAVE_NCCL and, when found, the imported target
# Meshloom::nccl. Neither is required: without them (or with an NCCL older than 2.18, which lacks ncclCommSplit)
# the NCCL backend is left out and configure says so once.
set(MESHLOOM_HAVE_NCCL OFF)
if(NOT MESHLOOM_WITH_NCCL)
  message(STATUS "Meshloom: NCCL backend disabled (MESHLOOM_WITH_NCCL=OFF)")
  return()
endif()

find_package(CUDAToolkit QUIET)
if(NOT CUDAToolkit_FOUND)
  message(STATUS "Meshloom: CUDA toolkit not found; the NCCL backend is left out")
  return()
endif()

find_path(MESHLOOM_NCCL_INCLUDE_DIR nccl.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}/include ENV NCCL_HOME
  PATH_SUFFIXES include)
find_library(MESHLOOM_NCCL_LIBRARY nccl
  HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib64 ENV NCCL_HOME
  PATH_SUFFIXES lib lib64)
if(NOT MESHLOOM_NCCL_INCLUDE_DIR OR NOT MESHLOOM_NCCL_LIBRARY)
  message(STATUS "Meshloom: CUDA ${CUDAToolkit_VERSION} found but NCCL is not; the NCCL backend is left out")
  return()
endif()

# The backend needs ncclCommSplit and ncclConfig_t::splitShare: NCCL 2.18 or later.
file(STRINGS "${MESHLOOM_NCCL_INCLUDE_DIR}/nccl.h" _meshloom_nccl_version_lines
  REGEX "^#define NCCL_(MAJOR|MINOR|PATCH)[ \t]+[0-9]+")
set(MESHLOOM_NCCL_VERSION "")
foreach(_part MAJOR MINOR PATCH)
  string(REGEX MATCH "#define NCCL_${_part}[ \t]+([0-9]+)" _match "${_meshloom_nccl_version_lines}")
  if(_match)
    string(APPEND MESHLOOM_NCCL_VERSION "${CMAKE_MATCH_1}.")
  endif()
endforeach()
string(REGEX REPLACE "\\.$" "" MESHLOOM_NCCL_VERSION "${MESHLOOM_NCCL_VERSION}")
if(NOT MESHLOOM_NCCL_VERSION MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+$" OR MESHLOOM_NCCL_VERSION VERSION_LESS 2.18)
  message(STATUS "Meshloom: NCCL ${MESHLOOM_NCCL_VERSION} at ${MESHLOOM_NCCL_INCLUDE_DIR} is older than 2.18 (or its nccl.h has no version); the NCCL backend is left out (it needs ncclCommSplit, 2.18+)")
  return()
endif()

add_library(Meshloom::nccl UNKNOWN IMPORTED)
set_target_properties(Meshloom::nccl PROPERTIES
  IMPORTED_LOCATION "${MESHLOOM_NCCL_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${MESHLOOM_NCCL_INCLUDE_DIR}")
set(MESHLOOM_HAVE_NCCL ON)
message(STATUS "Meshloom: NCCL backend enabled (NCCL ${MESHLOOM_NCCL_VERSION}, CUDA ${CUDAToolkit_VERSION}, ${MESHLOOM_NCCL_LIBRARY})")
