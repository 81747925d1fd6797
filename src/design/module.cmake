# design reads its spec with cJSON, calls LAPACK and BLAS (the evaluator's
# factorisations and updates) and runs its frequencies in OpenMP teams.
set(sv_module_deps_design sv_planar sv_gds sv_gpu sv_em sv_sweep sv_dense sv_core ${SV_OPENMP_LIB} ${SV_CJSON_LIBS} ${SV_BLAS_LIBS} m)
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/eval.c ${CMAKE_CURRENT_LIST_DIR}/eval_update.c PROPERTIES COMPILE_OPTIONS "${OpenMP_C_FLAGS}")
