# planar runs a batch's maps side by side in an OpenMP team (batch_run.c),
# its reports under a pthread lock.
set(sv_module_deps_planar sv_gpu sv_em sv_sweep sv_dense sv_core ${SV_OPENMP_LIB})
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/batch_run.c PROPERTIES COMPILE_OPTIONS "${OpenMP_C_FLAGS}")
