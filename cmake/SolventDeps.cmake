# Locate Solvent's dependencies (Debian packages installed by scripts/setup).
#
# OpenBLAS: we link the OpenMP build deliberately (libopenblas-openmp-dev).
# Solvent's own parallel loops use OpenMP; with the OpenMP OpenBLAS both
# share one runtime and one thread count, and a BLAS call made from inside
# one of our parallel regions runs single-threaded instead of spawning its
# own pool. The pthread build would oversubscribe the cores in that case.

find_package(OpenMP REQUIRED COMPONENTS C)
set(SV_OPENMP_LIB OpenMP::OpenMP_C)

set(SV_OPENBLAS_HINTS
  /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp
  /usr/lib/x86_64-linux-gnu/openblas-openmp
  /usr/lib/aarch64-linux-gnu/openblas-openmp)
find_library(SV_OPENBLAS_LIBRARY NAMES openblas PATHS ${SV_OPENBLAS_HINTS} NO_DEFAULT_PATH)
if(NOT SV_OPENBLAS_LIBRARY)
  message(WARNING "OpenMP build of OpenBLAS not found; falling back to any libopenblas. "
                  "Install libopenblas-openmp-dev (scripts/setup does).")
  find_library(SV_OPENBLAS_LIBRARY NAMES openblas REQUIRED)
endif()
find_path(SV_CBLAS_INCLUDE NAMES cblas.h
  PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp /usr/include/x86_64-linux-gnu/openblas-openmp
  NO_DEFAULT_PATH)
if(NOT SV_CBLAS_INCLUDE)
  find_path(SV_CBLAS_INCLUDE NAMES cblas.h REQUIRED)
endif()
find_library(SV_LAPACKE_LIBRARY NAMES lapacke REQUIRED)
find_path(SV_LAPACKE_INCLUDE NAMES lapacke.h REQUIRED)
# LAPACKE before OpenBLAS: LAPACKE's calls to LAPACK then resolve to
# OpenBLAS's optimised LAPACK, not the reference liblapack.
set(SV_BLAS_LIBS ${SV_LAPACKE_LIBRARY} ${SV_OPENBLAS_LIBRARY})
include_directories(SYSTEM ${SV_CBLAS_INCLUDE} ${SV_LAPACKE_INCLUDE})

# SuiteSparse AMD (ordering) and, for benchmarks only, KLU.
find_path(SV_SUITESPARSE_INCLUDE NAMES amd.h PATHS /usr/include/suitesparse REQUIRED)
find_library(SV_AMD_LIBRARY NAMES amd REQUIRED)
find_library(SV_SSCONFIG_LIBRARY NAMES suitesparseconfig REQUIRED)
set(SV_AMD_LIBS ${SV_AMD_LIBRARY} ${SV_SSCONFIG_LIBRARY})
include_directories(SYSTEM ${SV_SUITESPARSE_INCLUDE})

# cJSON (project files).
find_path(SV_CJSON_INCLUDE NAMES cjson/cJSON.h REQUIRED)
find_library(SV_CJSON_LIBRARY NAMES cjson REQUIRED)
set(SV_CJSON_LIBS ${SV_CJSON_LIBRARY})
include_directories(SYSTEM ${SV_CJSON_INCLUDE})

# libmicrohttpd (the HTTP server of `solvent serve`) and threads (its jobs).
find_path(SV_MHD_INCLUDE NAMES microhttpd.h REQUIRED)
find_library(SV_MHD_LIBRARY NAMES microhttpd REQUIRED)
set(SV_MHD_LIBS ${SV_MHD_LIBRARY})
include_directories(SYSTEM ${SV_MHD_INCLUDE})
set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)
