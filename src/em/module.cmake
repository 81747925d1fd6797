# em builds the sweep engine's affine model (and solves it with the sweep's
# exact solver), uses the dense engine (packed L and Ψ), cJSON (project
# files), gds (a project's metal from a GDSII layout), LAPACK (small network-parameter algebra) and OpenMP (assembly, the radiation terms' projection).
set(sv_module_deps_em sv_gds sv_sweep sv_dense sv_core ${SV_OPENMP_LIB} ${SV_CJSON_LIBS} ${SV_BLAS_LIBS} m)
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/assemble.c ${CMAKE_CURRENT_LIST_DIR}/walls.c ${CMAKE_CURRENT_LIST_DIR}/wall_share.c ${CMAKE_CURRENT_LIST_DIR}/dielectric.c ${CMAKE_CURRENT_LIST_DIR}/tables.c ${CMAKE_CURRENT_LIST_DIR}/assembly_plan.c ${CMAKE_CURRENT_LIST_DIR}/dispersion.c ${CMAKE_CURRENT_LIST_DIR}/edges.c ${CMAKE_CURRENT_LIST_DIR}/radiation.c ${CMAKE_CURRENT_LIST_DIR}/board.c PROPERTIES COMPILE_OPTIONS "${OpenMP_C_FLAGS}")
