# The ODE module's OpenMP loops (solve.c's parallel region) need the
# compiler flag on its own objects; linking comes through sv_core. Hot lane
# loops want -O3's vectoriser (still IEEE: no -ffast-math).
set_source_files_properties(${sv_src} PROPERTIES COMPILE_OPTIONS "${OpenMP_C_FLAGS};-O3")
# The sparse engine is used when its module is built (it precedes ode in
# SV_MODULES); the dense back end needs nothing beyond core.
set(sv_module_deps_ode sv_core m)
if(TARGET sv_sparse)
  list(PREPEND sv_module_deps_ode sv_sparse)
endif()
