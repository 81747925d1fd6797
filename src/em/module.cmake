# em needs the dense engine only for sv_em_assemble (packed matrices) and
# sv_em_solve (factorisation). While src/dense has no sources (the engine is
# being written in parallel), build em without it: dense_glue.c then reports
# SV_ERR_UNSUPPORTED. Remove this switch once dense is on main.
file(GLOB sv_em_dense_src ${PROJECT_SOURCE_DIR}/src/dense/*.c)
if(sv_em_dense_src)
  set(sv_module_deps_em sv_dense sv_core ${SV_OPENMP_LIB} ${SV_CJSON_LIBS} ${SV_BLAS_LIBS} m)
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/dense_glue.c PROPERTIES COMPILE_DEFINITIONS SV_EM_HAVE_DENSE)
else()
  set(sv_module_deps_em sv_core ${SV_OPENMP_LIB} ${SV_CJSON_LIBS} ${SV_BLAS_LIBS} m)
endif()
# The assembly's loops are OpenMP parallel.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/assemble.c PROPERTIES COMPILE_OPTIONS "${OpenMP_C_FLAGS}")
