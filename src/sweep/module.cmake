# The sweep module uses the dense engine for its exact solves. While the
# dense engine's factorisation is not in the tree, the sweep still builds
# (with the LAPACK reference solver only); the check looks for the
# definitions of the functions it calls.
set(sv_sweep_have_dense 0)
if(TARGET sv_dense)
  file(GLOB _sv_dense_src ${PROJECT_SOURCE_DIR}/src/dense/*.c)
  set(_sv_found_mixed 0)
  set(_sv_found_factor 0)
  foreach(_f IN LISTS _sv_dense_src)
    file(READ ${_f} _txt)
    if(_txt MATCHES "sv_status[ \t\n]+sv_dense_solve_mixed[ \t\n]*\\(")
      set(_sv_found_mixed 1)
    endif()
    if(_txt MATCHES "sv_status[ \t\n]+sv_dense_factor_create[ \t\n]*\\(")
      set(_sv_found_factor 1)
    endif()
  endforeach()
  if(_sv_found_mixed AND _sv_found_factor)
    set(sv_sweep_have_dense 1)
  endif()
endif()
if(sv_sweep_have_dense)
  set(sv_module_deps_sweep sv_dense sv_core)
  set_source_files_properties(${PROJECT_SOURCE_DIR}/src/sweep/exact_dense.c PROPERTIES COMPILE_DEFINITIONS SV_SWEEP_HAVE_DENSE=1)
else()
  set(sv_module_deps_sweep sv_core)
endif()
# The sweep's loops are OpenMP-parallel (over block columns and over
# frequencies); the object library does not see the link dependencies'
# compile flags, so ask for OpenMP here.
file(GLOB _sv_sweep_src ${PROJECT_SOURCE_DIR}/src/sweep/*.c)
set_property(SOURCE ${_sv_sweep_src} APPEND PROPERTY COMPILE_OPTIONS ${OpenMP_C_FLAGS})
