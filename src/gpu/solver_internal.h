/* The GPU solver's state, shared by solver.c (set-up) and exact.c (its
 * operations as an exact solver of the sweep module). */
#ifndef SV_GPU_SOLVER_INTERNAL_H
#define SV_GPU_SOLVER_INTERNAL_H

#include "gpu_internal.h"

/* Refinement target with double-float residuals: their arithmetic carries
 * about 2⁻⁴⁶ (native double residuals use the sweep's default). */
#define GPU_TOL_DF 2e-14

struct sv_gpu_solver {
    sv_ctx *ctx;
    const sv_sweep_model *m;
    sv_gpu_options opt;
    sv_gpu_backend *b; /* NULL: the solver runs on the CPU */
    sv_gpu_report rep;
    int n, p, nt, nderiv;
    double tol;        /* the refinement target (0: the sweep's default) */
    sv_gpu_term_view *views;
    sv_gpu_problem prob;
    sv_sweep_solver *iface; /* this solver behind the sweep's exact-solver interface */
    sv_sweep_solver *cpu;   /* the CPU's mixed solver: what runs where the device cannot */
    /* the solve in progress */
    int on_device;     /* it runs on the device (else on cpu) */
    int device_calls;  /* the backend has been called (its errors are device errors) */
    int singular;      /* the device's factorisation met a pivot below single precision */
    sv_ctx *sctx;      /* its context */
    void *work;        /* its single-precision vectors */
    double t0;
};

/* The exact solver's operations (exact.c). */
extern const sv_sweep_solver_ops sv_gpu_solver_ops;

#endif
