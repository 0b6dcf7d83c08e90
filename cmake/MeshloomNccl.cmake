# Finds the CUDA toolkit and NCCL. Sets MESHLOOM_HAVE_NCCL and, when found, the imported target
# Meshloom::nccl. Neither is required: without them the NCCL backend is left out and configure says so once.
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

add_library(Meshloom::nccl UNKNOWN IMPORTED)
set_target_properties(Meshloom::nccl PROPERTIES
  IMPORTED_LOCATION "${MESHLOOM_NCCL_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${MESHLOOM_NCCL_INCLUDE_DIR}")
set(MESHLOOM_HAVE_NCCL ON)
message(STATUS "Meshloom: NCCL backend enabled (CUDA ${CUDAToolkit_VERSION}, ${MESHLOOM_NCCL_LIBRARY})")
