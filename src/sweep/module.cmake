# The sweep's exact solves use the dense engine.
set(sv_module_deps_sweep sv_dense sv_core)

# The sweep's loops are OpenMP-parallel (over block columns and over
# frequencies); the object library does not see the link dependencies'
# compile flags, so ask for OpenMP here.
file(GLOB _sv_sweep_src ${PROJECT_SOURCE_DIR}/src/sweep/*.c)
set_property(SOURCE ${_sv_sweep_src} APPEND PROPERTY COMPILE_OPTIONS ${OpenMP_C_FLAGS})

# The residuals' complex products: not fused by GCC's basic-block vectoriser
# (as src/dense/gmres.c, see src/dense/module.cmake).
if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
  set_property(SOURCE ${PROJECT_SOURCE_DIR}/src/sweep/refine_op.c APPEND PROPERTY COMPILE_OPTIONS -fno-tree-slp-vectorize)
endif()
