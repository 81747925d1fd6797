# The ODE module's OpenMP loops (solve.c's parallel region) need the
# compiler flag on its own objects; linking comes through sv_core. Hot lane
# loops want -O3's vectoriser (still IEEE: no -ffast-math).
set_source_files_properties(${sv_src} PROPERTIES COMPILE_OPTIONS "${OpenMP_C_FLAGS};-O3")
# Lane loops must round the same in every lane count: no contraction into
# FMA (results are bit-identical whatever lane or batch ran a trajectory).
set_source_files_properties(${sv_src} PROPERTIES COMPILE_OPTIONS "${OpenMP_C_FLAGS};-O3;-ffp-contract=off")
# The fused step's lane loops take square roots: without errno (which the
# library never reads) sqrt is one vector instruction, the same value. Under
# the sanitizers -O3 on its always-inline stage routines takes 7 minutes to
# compile (1.3 at -O1): the instrumented build checks the same code less
# optimised.
set(sv_fused_opt -O3)
if(SOLVENT_SANITIZE)
  set(sv_fused_opt -O1)
endif()
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/ode/fused_rodas5p.c PROPERTIES COMPILE_OPTIONS
                            "${OpenMP_C_FLAGS};${sv_fused_opt};-ffp-contract=off;-fno-math-errno")
# The sparse engine provides AMD ordering and batched kernels for patterns
# with fill.
set(sv_module_deps_ode sv_sparse sv_core m)
