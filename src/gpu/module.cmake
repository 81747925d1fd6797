# The accelerator back end: the host-side layer (plain C, always built: device
# discovery, planning, the self-test, the refinement loop and its fallbacks,
# the CPU emulation of the device) and, with SV_HAVE_CUDA, the CUDA back end
# (src/gpu/cuda/*.cu). The exact solver reads the sweep model's terms, so it
# links the sweep module.
set(sv_module_deps_gpu sv_sweep sv_dense sv_core)
if(SV_HAVE_CUDA)
  file(GLOB _sv_gpu_cu CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/gpu/cuda/*.cu)
  list(APPEND sv_src ${_sv_gpu_cu})
  list(APPEND sv_module_deps_gpu ${SV_CUDA_LIBS})
  set_property(SOURCE ${_sv_gpu_cu} APPEND PROPERTY COMPILE_OPTIONS
    -Xcompiler=-Wall,-Wextra --fmad=false)
  set_property(SOURCE ${PROJECT_SOURCE_DIR}/src/gpu/device.c APPEND PROPERTY COMPILE_DEFINITIONS SV_GPU_HAVE_CUDA=1)
  set_property(SOURCE ${PROJECT_SOURCE_DIR}/src/gpu/backend.c APPEND PROPERTY COMPILE_DEFINITIONS SV_GPU_HAVE_CUDA=1)
endif()
