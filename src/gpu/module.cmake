# The accelerator back end: the host-side layer (plain C, always built: device
# discovery, the module loader, planning, the self-test, the exact solver
# and its fallbacks, the assembler, the CPU emulation of the device) and, with SV_HAVE_CUDA,
# the CUDA back end (src/gpu/cuda/*.cu) as a separate shared module,
# libsolvent-cuda.so, loaded on first use (src/gpu/loader.c): nothing else
# links the CUDA libraries. The exact solver reads the sweep model's terms,
# so it links the sweep module; the assembler implements the em module's
# assembler interface (its plan and tables); the loader needs dlopen.
set(sv_module_deps_gpu sv_em sv_sweep sv_dense sv_core ${CMAKE_DL_LIBS})
if(SV_HAVE_CUDA)
  include(${PROJECT_SOURCE_DIR}/src/gpu/cuda/module_target.cmake)
  sv_gpu_add_cuda_module(solvent_cuda)
  set_target_properties(solvent_cuda PROPERTIES OUTPUT_NAME solvent-cuda)
  set(SV_GPU_MODULE_FILE ${CMAKE_SHARED_MODULE_PREFIX}solvent-cuda${CMAKE_SHARED_MODULE_SUFFIX})
  set_property(SOURCE ${PROJECT_SOURCE_DIR}/src/gpu/device.c APPEND PROPERTY COMPILE_DEFINITIONS SV_GPU_HAVE_CUDA=1)
  set_property(SOURCE ${PROJECT_SOURCE_DIR}/src/gpu/loader.c APPEND PROPERTY COMPILE_DEFINITIONS
    SV_GPU_MODULE_FILE="${SV_GPU_MODULE_FILE}"
    SV_GPU_REL_LIBDIR="${CMAKE_INSTALL_LIBDIR}"
    SV_GPU_INSTALL_LIBDIR="${CMAKE_INSTALL_FULL_LIBDIR}")
endif()
