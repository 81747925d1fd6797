# The CUDA back end as a shared module, loaded on demand by src/gpu/loader.c:
# the only target that links the CUDA libraries (cudart shared, cuBLAS).
#
#   sv_gpu_add_cuda_module(TARGET [DF_SOURCE file DF_SYMBOL name])
#
# builds src/gpu/cuda/*.cu (backend, assembly, query, module entry and the
# double-float product kernel) into a MODULE library exporting only
# sv_gpu_cuda_module_v1. DF_SOURCE/DF_SYMBOL replace the double-float kernel
# (the tests build one without error terms). Output: the current binary
# directory.
function(sv_gpu_add_cuda_module target)
  cmake_parse_arguments(M "" "DF_SOURCE;DF_SYMBOL" "" ${ARGN})
  set(dir ${PROJECT_SOURCE_DIR}/src/gpu/cuda)
  set(src ${dir}/backend.cu ${dir}/assemble.cu ${dir}/query.cu ${dir}/module.cu)
  if(M_DF_SOURCE)
    list(APPEND src ${M_DF_SOURCE})
  else()
    list(APPEND src ${dir}/df_products.cu)
  endif()
  add_library(${target} MODULE ${src})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
  if(M_DF_SYMBOL)
    target_compile_definitions(${target} PRIVATE SV_GPU_CUDA_DF=${M_DF_SYMBOL})
  endif()
  # --fmad=false: the double-float kernels' error terms must not be fused away
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --fmad=false>)
  target_link_libraries(${target} PRIVATE ${CUDA_cublas_LIBRARY})
  # every symbol resolved at link time: the module calls nothing of the program's
  target_link_options(${target} PRIVATE "LINKER:--no-undefined")
  set_target_properties(${target} PROPERTIES
    CUDA_RUNTIME_LIBRARY Shared
    CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    # installed: keep the toolkit's library directory (not always in the loader's path)
    INSTALL_RPATH_USE_LINK_PATH ON)
endfunction()
