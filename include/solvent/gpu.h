/* Solvent accelerator back end: exact sweep solves on an NVIDIA GPU.
 *
 * Z(f) = Σ_k c_k(f)·A_k is formed on the device from the terms kept there
 * (uploaded once), factorised in complex single precision by a blocked
 * LDLᵀ without pivoting built from cuBLAS level-3 calls, and the solution
 * (and its frequency derivatives, with the same factors) is refined to
 * double accuracy with residuals computed on the device from the terms:
 * in native double (FP64) where the device is fast at it, or in
 * double-float arithmetic (pairs of floats, error-free transforms) where it
 * is not. The GPU solver is an implementation of the sweep module's
 * exact-solver interface (solvent/sweep_solver.h): the sweep's one
 * refinement engine drives the device's factors and products, and a
 * frequency whose refinement does not converge, or whose single
 * factorisation meets a pivot below single precision, is solved again by
 * the CPU's double factorisation (the same numbers as
 * sv_sweep_solve_exact_deriv with SV_SWEEP_DOUBLE) and counted in the
 * report.
 *
 * The planar model's assembly (L, Ψ and Ψ_im) can run on the device too
 * (sv_gpu_assembler, an implementation of the em module's assembler
 * interface, solvent/em_assembly.h): the far table entries by the point
 * approximation and the image series, the folds and the fill there, the
 * near entries, the port rows and the side walls from the CPU, the result
 * copied back into the host's packed arrays, the same numbers as the CPU's
 * assembly.
 *
 * Before a device path is used it passes a start-up self-test: products of
 * random terms with random vectors computed on the device and on the CPU
 * must agree; a path that disagrees (a compiler that simplified the error
 * terms away, say) is disabled.
 *
 * Everything here is always compiled; without CUDA (SOLVENT_CUDA=OFF, or no
 * toolkit at build time) the queries say "not built with CUDA" and
 * sv_gpu_solver_create returns SV_ERR_UNSUPPORTED. With CUDA, the device
 * code is a separate module (libsolvent-cuda.so, installed beside the
 * library) loaded on first use, and only when a CUDA driver is present: a
 * program that never asks for a GPU loads no CUDA library. See docs/gpu.md. */
#ifndef SOLVENT_GPU_H
#define SOLVENT_GPU_H

/* Derivative orders the device refines with each exact solve at most (as
 * many as the CPU path). */
#define SV_GPU_MAX_DERIV 3

#include <complex.h>
#include <stddef.h>

#include "solvent/core.h"
#include "solvent/em_assembly.h"
#include "solvent/sweep.h"
#include "solvent/sweep_solver.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- device discovery ------------------------------------------------------ */
typedef struct sv_gpu_device_info {
    int built;            /* 1: this library was built with the CUDA back end */
    int available;        /* 1: a device is usable */
    int device;           /* its index */
    char name[128];       /* "NVIDIA H200", ... ("" when none) */
    char reason[256];     /* why none is usable ("" when one is) */
    int cc_major, cc_minor;
    size_t total_bytes, free_bytes;
    int fp32_per_fp64;    /* single- to double-precision throughput ratio (2 on an H200,
                             64 on consumer parts); 0 unknown */
} sv_gpu_device_info;

/* 1 if built with the CUDA back end (its module may still be missing). */
int sv_gpu_built(void);

/* Query device `device` (≥ 0). Never crashes: SV_OK with info->available = 1,
 * or SV_ERR_UNSUPPORTED with the reason in the message and in info->reason:
 * "not built with CUDA"; "no CUDA driver (libcuda.so.1 not found)"; the
 * module not found (with the directories searched), not loadable or of
 * another build (with its path); or the CUDA runtime's own (no device, a
 * driver too old, ...). The first call loads the CUDA back end module when
 * there is a driver; the outcome is kept for the life of the process. */
sv_status sv_gpu_query(int device, sv_gpu_device_info *info);

/* 1 if device 0 is usable; otherwise 0 and the reason in `reason` (may be NULL). */
int sv_gpu_available(char *reason, size_t len);

/* One line describing the device: "NVIDIA H200 (sm_90, 139.8 GiB, 139.1 GiB free)"
 * or "no CUDA device: <reason>". Returns buf. */
const char *sv_gpu_describe(const sv_gpu_device_info *info, char *buf, size_t len);

/* ---- planning ----------------------------------------------------------------- */
/* How residuals are computed on the device. */
typedef enum sv_gpu_residual {
    SV_GPU_RESIDUAL_AUTO = 0,   /* double where FP64 is fast (ratio ≤ 4), else double-float */
    SV_GPU_RESIDUAL_DOUBLE = 1, /* native FP64 */
    SV_GPU_RESIDUAL_DF = 2      /* double-float (pairs of floats) */
} sv_gpu_residual;

typedef enum sv_gpu_decision {
    SV_GPU_USE = 0,      /* run on the device */
    SV_GPU_FALLBACK = 1, /* run on the CPU instead (the device cannot hold it) */
    SV_GPU_REFUSE = 2    /* stop with an error (the device was required) */
} sv_gpu_decision;

/* What a sweep's exact solves would hold on the device. */
typedef struct sv_gpu_plan_input {
    int n, nb;             /* order and block size of the packed terms (nb 0: 128) */
    int npacked;           /* packed terms (L, Ψ) */
    size_t csr_nnz;        /* stored entries of all CSR terms together (G) */
    int ncsr;              /* CSR terms */
    int nrhs, nderiv;      /* right-hand sides, derivative orders (0..SV_GPU_MAX_DERIV) */
    size_t device_free;    /* bytes free on the device */
    int fp32_per_fp64;     /* from sv_gpu_device_info (0 unknown: taken as fast) */
    sv_gpu_residual residual;
    int required;          /* 1: the device was asked for (refuse rather than fall back) */
} sv_gpu_plan_input;

typedef struct sv_gpu_plan {
    sv_gpu_decision decision;
    sv_gpu_residual residual;  /* resolved: DOUBLE or DF */
    size_t terms_bytes;        /* packed terms (8 bytes an element, double or hi/lo floats) + CSR */
    size_t z_bytes;            /* Z(f) in complex single, packed */
    size_t vector_bytes;       /* solution, derivative and residual blocks, products */
    size_t workspace_bytes;    /* factorisation panel, pivot flags, library workspaces */
    size_t total_bytes;        /* the sum, with a 5 % margin */
    size_t device_free;
    char message[320];         /* why, in one line */
} sv_gpu_plan;

/* Estimate and decide. SV_OK with the decision in *plan, or SV_ERR_ARG for
 * bad sizes. A plan that does not fit is SV_GPU_REFUSE when `required`,
 * else SV_GPU_FALLBACK; the message names both sizes. */
sv_status sv_gpu_plan_make(const sv_gpu_plan_input *in, sv_gpu_plan *plan);

/* ---- the exact solver ----------------------------------------------------------- */
/* A zero-filled struct is the defaults (sv_gpu_options_default). */
typedef struct sv_gpu_options {
    int device;                /* device index (default 0) */
    sv_gpu_residual residual;  /* AUTO (default) */
    double refine_tol;         /* target backward error; 0 = 1e-15 in double, 2e-14 in double-float */
    int max_iterations;        /* refinement steps before the CPU fallback; 0 = 30 */
    int required;              /* 1: fail (SV_ERR_UNSUPPORTED / SV_ERR_BUDGET) instead of
                                  choosing the CPU when no device path can be used */
} sv_gpu_options;

void sv_gpu_options_default(sv_gpu_options *opts);

typedef struct sv_gpu_solver sv_gpu_solver;

/* Set up the device for model m (borrowed: it must outlive the solver):
 * query, plan, upload the terms, run the self-test. nderiv: the derivative
 * orders the sweep will ask for (its `derivatives` option; 2 by default).
 * When no device path can be used, the solver is still created and solves
 * on the CPU (sv_gpu_solver_on_device says 0 and the report says why),
 * unless opts->required, which makes this an error instead. */
sv_status sv_gpu_solver_create(sv_ctx *ctx, const sv_sweep_model *m, int nderiv, const sv_gpu_options *opts,
                               sv_gpu_solver **out);
void sv_gpu_solver_destroy(sv_gpu_solver *s);

/* 1 if the solver runs on the device. */
int sv_gpu_solver_on_device(const sv_gpu_solver *s);

/* The solver as the sweep module's exact solver (owned by s: do not destroy
 * it): pass it as the sweep's `solver` option. Where s has no device it
 * solves on the CPU (the built-in mixed solver). */
sv_sweep_solver *sv_gpu_solver_sweep(sv_gpu_solver *s);

/* One exact solve, as sv_sweep_solver_solve on sv_gpu_solver_sweep(solver)
 * (m must be the solver's model). */
sv_status sv_gpu_exact_deriv(void *solver, sv_ctx *ctx, const sv_sweep_model *m, double freq, double complex *x,
                             int ldx, int nderiv, double complex *dx, int lddx, sv_sweep_exact_info *info);

typedef struct sv_gpu_report {
    int on_device;            /* the solver runs on the device */
    sv_gpu_residual residual; /* the residual path in use (when on_device) */
    int selftest_double;      /* self-test of each path: 1 passed, 0 failed (disabled), −1 not run */
    int selftest_df;
    double selftest_err_double, selftest_err_df; /* their relative errors against the CPU */
    int solves;               /* exact solves asked for */
    int device_solves;        /* of which finished on the device */
    int cpu_fallbacks;        /* solved on the CPU double path: refinement did not converge */
    int singular_fallbacks;   /* of those, the single factorisation met a tiny pivot */
    int device_errors;        /* the device failed (a CUDA error): that solve fell back (counted
                                 in cpu_fallbacks) and every later one ran on the CPU's default
                                 path (solves − device_solves − cpu_fallbacks); note says why */
    int iterations;           /* refinement steps of the solves on the device (their fallbacks'
                                 included) */
    double seconds_device;    /* wall time of the device solves (form, factor, refinement) */
    sv_gpu_plan plan;
    char device[200];         /* sv_gpu_describe() of the device, or why none */
    char note[320];           /* why the solver is on the CPU ("" when on the device and
                                 no device error occurred) */
} sv_gpu_report;

void sv_gpu_solver_report(const sv_gpu_solver *s, sv_gpu_report *r);

/* ---- assembly on the device ------------------------------------------------------ */
typedef struct sv_gpu_assembler sv_gpu_assembler;

/* An assembler on device opts->device (opts: NULL or a zero-filled struct are
 * the defaults; only `device` and `required` are read). Without a usable
 * device it is still created and assembles on the CPU (the report says
 * why), unless opts->required: then SV_ERR_UNSUPPORTED. */
sv_status sv_gpu_assembler_create(sv_ctx *ctx, const sv_gpu_options *opts, sv_gpu_assembler **out);
void sv_gpu_assembler_destroy(sv_gpu_assembler *a);

/* The em module's assembler (owned by a): pass it to sv_em_assemble_with. An
 * assembly that does not fit the device, or meets a device error, is made
 * by the CPU's assembler instead (and after a device error every later
 * one); the report counts them. */
const sv_em_assembler *sv_gpu_assembler_em(sv_gpu_assembler *a);

typedef struct sv_gpu_assembly_report {
    int on_device;            /* the assembler has a device */
    int assemblies;           /* assemblies asked for */
    int device_assemblies;    /* of which made on the device */
    int cpu_assemblies;       /* made by the CPU's assembler (no device, too large, a device error) */
    int device_errors;        /* device errors (the device is then dropped; note says why) */
    /* the last assembly on the device, seconds: the plan's tables (CPU), the rows and
     * walls (CPU, while the device works on the tables), then the device's port rows
     * and walls and waiting for all its work, and copying the result back */
    double seconds_tables, seconds_rows, seconds_device, seconds_copy;
    size_t device_bytes;      /* the device memory it needed */
    char device[200];         /* sv_gpu_describe() of the device, or why none */
    char note[320];           /* why an assembly ran on the CPU ("" when none did) */
} sv_gpu_assembly_report;

void sv_gpu_assembler_report(const sv_gpu_assembler *a, sv_gpu_assembly_report *r);

#ifdef __cplusplus
}
#endif
#endif
