# The dense engine parallelises its trailing updates and conversions with
# OpenMP (sharing the runtime with the OpenMP build of OpenBLAS), so its
# sources are compiled with the OpenMP flags.
set(sv_module_deps_dense sv_core ${SV_OPENMP_LIB} ${SV_BLAS_LIBS} m)
file(GLOB sv_dense_omp_src ${PROJECT_SOURCE_DIR}/src/dense/*.c)
set_source_files_properties(${sv_dense_omp_src} PROPERTIES COMPILE_OPTIONS "${OpenMP_C_FLAGS}")

# GCC's basic-block vectoriser turns some complex products into fused
# multiply-adds (vfmaddsub) whatever -ffp-contract says, and whether it does
# depends on the code around them: an unrelated edit then moves the last
# bits of GMRES-refined solutions (docs/dense.md). Not in the refinement's
# complex products.
if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
  set_property(SOURCE ${PROJECT_SOURCE_DIR}/src/dense/gmres.c APPEND PROPERTY COMPILE_OPTIONS -fno-tree-slp-vectorize)
endif()
