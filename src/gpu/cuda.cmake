# The accelerator back end's build switch (included from the top-level
# CMakeLists.txt before the modules are defined).
#
#   SOLVENT_CUDA=AUTO (default)  on when a CUDA compiler and toolkit are found, else off with a message
#   SOLVENT_CUDA=ON              the same, but an error when they are not found
#   SOLVENT_CUDA=OFF             never (the host-side layer in src/gpu is still built and tested)
#
# Sets SV_HAVE_CUDA (ON/OFF) and, when ON, SV_CUDA_LIBS (full paths of
# cudart, cublas and cusolver: for bench/gpu, whose anchor is cuSOLVER; the
# library itself links none of them, its CUDA code is the module built by
# src/gpu/module.cmake). The sanitizer build cannot use CUDA (ASan and the CUDA runtime
# do not mix): AUTO turns off there, ON is an error.
set(SOLVENT_CUDA AUTO CACHE STRING "Accelerator back end: AUTO, ON or OFF")
set_property(CACHE SOLVENT_CUDA PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${SOLVENT_CUDA}" _sv_cuda)
if(NOT _sv_cuda MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "SOLVENT_CUDA='${SOLVENT_CUDA}': expected AUTO, ON or OFF")
endif()
set(SV_HAVE_CUDA OFF)
set(SV_CUDA_LIBS "")
set(_sv_cuda_why "")
if(_sv_cuda STREQUAL "OFF")
  set(_sv_cuda_why "SOLVENT_CUDA=OFF")
elseif(SOLVENT_SANITIZE)
  set(_sv_cuda_why "the sanitizer build (SOLVENT_SANITIZE=ON) does not mix with the CUDA runtime")
else()
  # nvcc is often outside PATH (/usr/local/cuda/bin): look there too.
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    set(_sv_cuda_why "no CUDA compiler (nvcc) found")
  else()
    # The H200 (Hopper) by default; a CUDA 13 compiler no longer builds for
    # CMake's own default (sm_52). Override with -DCMAKE_CUDA_ARCHITECTURES=...
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit QUIET)
    if(NOT CUDAToolkit_FOUND OR NOT CUDA_cudart_LIBRARY OR NOT CUDA_cublas_LIBRARY OR NOT CUDA_cusolver_LIBRARY)
      set(_sv_cuda_why "the CUDA toolkit's cudart, cublas or cusolver library was not found")
    else()
      set(SV_HAVE_CUDA ON)
      set(SV_CUDA_LIBS ${CUDA_cusolver_LIBRARY} ${CUDA_cublas_LIBRARY} ${CUDA_cudart_LIBRARY})
    endif()
  endif()
endif()
if(SV_HAVE_CUDA)
  message(STATUS "Solvent: CUDA back end ON (CUDA ${CUDAToolkit_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
elseif(_sv_cuda STREQUAL "ON")
  message(FATAL_ERROR "SOLVENT_CUDA=ON but the CUDA back end cannot be built: ${_sv_cuda_why}")
else()
  message(STATUS "Solvent: CUDA back end OFF (${_sv_cuda_why})")
endif()
