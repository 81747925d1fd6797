/* The GPU solver's state, shared by solver.c (set-up) and refine.c (solves). */
#ifndef SV_GPU_SOLVER_INTERNAL_H
#define SV_GPU_SOLVER_INTERNAL_H

#include "gpu_internal.h"

#define GPU_TOL_DOUBLE 1e-15
#define GPU_TOL_DF 2e-14
#define GPU_MAXIT 30
/* pivots below this fraction of max|z_ij| carry no digits in single
 * precision (as SWEEP_PIVOT_SINGLE in src/sweep/exact_dense.c) */
#define GPU_PIVOT_SINGLE 6e-8

struct sv_gpu_solver {
    sv_ctx *ctx;
    const sv_sweep_model *m;
    sv_gpu_options opt;
    sv_gpu_backend *b; /* NULL: the solver runs on the CPU */
    sv_gpu_report rep;
    int n, p, nt, nderiv;
    double tol;
    sv_gpu_term_view *views;
    sv_gpu_problem prob;
};

#endif
