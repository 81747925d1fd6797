/* Solvent sweep engine: the exact solver as an interface.
 *
 * An exact solver of Z(f)·X = B (and of the frequency derivatives of X) for
 * one sweep model is an object: content plus a table of operations, in the
 * spirit of SUNDIALS' SUNLinearSolver. The operations are what differs from
 * one solver to another — form and factorise Z(f), solve with the factors,
 * the products of the terms for residuals — and everything else is shared:
 * sv_sweep_solver_solve drives them through the one refinement engine
 * (sv_dense_refine: block refinement of the solution and its derivatives,
 * GMRES when it stalls, the CPU's double factorisation when both fall
 * short), so that every solver refines, falls back and reports the same way.
 *
 * Built in: the CPU dense solver (single-precision LDLᵀ refined to double,
 * or double LDLᵀ) and the LAPACK reference (sv_sweep_solver_create_builtin);
 * the GPU back end is another implementation (solvent/gpu.h,
 * sv_gpu_solver_sweep). A solver is passed to the adaptive sweep as its
 * `solver` option. See docs/sweep.md. */
#ifndef SOLVENT_SWEEP_SOLVER_H
#define SOLVENT_SWEEP_SOLVER_H

#include <complex.h>
#include <stddef.h>

#include "solvent/core.h"
#include "solvent/sweep.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Pivots below this fraction of max|z_ij| carry no digits in single
 * precision: a single-precision factorisation of Z(f) should report such a
 * pivot as SV_ERR_SINGULAR (the solve then goes to the double fallback)
 * rather than take a pivoted route in single. */
#define SV_SWEEP_PIVOT_SINGLE 6e-8

/* What a solver's factors are, which decides how they are used. */
typedef enum sv_sweep_factors {
    SV_SWEEP_FACTORS_SINGLE = 0, /* approximate (single precision): refined to `tolerance`, GMRES
                                    when that stalls (unless no_gmres), factors in double on the
                                    CPU when both fall short */
    SV_SWEEP_FACTORS_DOUBLE = 1, /* double precision: a few refinement steps polish the result */
    SV_SWEEP_FACTORS_EXACT = 2   /* an exact solve (LU in double): no refinement */
} sv_sweep_factors;

/* Filled by a solver's setup. A zero-filled plan is SINGLE factors refined
 * to 1e-15 in at most 30 steps, with GMRES and the fallback. */
typedef struct sv_sweep_solver_plan {
    sv_sweep_factors factors;
    double tolerance;    /* SINGLE: target normwise backward error; 0 = 1e-15. A solution
                            that stalls above it is still kept at or below
                            max(tolerance, 1e-15) (the rounding floor of the residual) */
    int max_iterations;  /* SINGLE: block refinement steps; 0 = 30 */
    int no_gmres;        /* SINGLE: 1 = no GMRES stage (straight to the fallback) */
} sv_sweep_solver_plan;

/* The operations. `content` is the solver's own state. */
typedef struct sv_sweep_solver_ops {
    const char *name;
    /* Form and factorise Z(freq) for solves of the solution and nderiv
     * derivative groups (blocks of up to nrhs·(1 + nderiv) columns). Fill
     * *plan first. SV_ERR_SINGULAR with SINGLE factors: no usable factors
     * at this frequency (the solve goes to the fallback). Required. */
    sv_status (*setup)(void *content, sv_ctx *ctx, double freq, int nderiv, sv_sweep_solver_plan *plan);
    /* v ← M⁻¹·v with the factors of the last setup (ncols columns, ld ldv):
     * the refinement's preconditioner. Required. */
    sv_status (*precond)(void *content, int ncols, double complex *v, int ldv);
    /* The residuals' products: ts + k·n·ncols ← A_k·xs for every term k (xs
     * real, n × ncols, ld n; ts ld n), in double. NULL: the model's own on
     * the CPU (sv_sweep_model_apply_terms). */
    sv_status (*products)(void *content, int ncols, const double *xs, double *ts);
    /* Drop the factors (called once a solve no longer needs them, before a
     * fallback and after every solve; may be called twice). NULL: none. */
    void (*release)(void *content);
    /* An error st from this solver's setup, precond or products that it
     * handles (a device that failed): return 1 and the frequency is solved
     * by the fallback instead; 0 returns st. NULL: every error is returned. */
    int (*recover)(void *content, sv_ctx *ctx, double freq, sv_status st);
    /* What the solve did, fallback included (after every successful
     * solve). NULL: nothing kept. */
    void (*account)(void *content, const sv_sweep_exact_info *info);
    /* Free the content (sv_sweep_solver_destroy). NULL: the content is
     * owned elsewhere. */
    void (*destroy)(void *content);
} sv_sweep_solver_ops;

/* A solver of model m (borrowed: it must outlive the solver) from an
 * implementation: ops (borrowed, usually a static table) and content. */
sv_status sv_sweep_solver_create(sv_ctx *ctx, const sv_sweep_model *m, const sv_sweep_solver_ops *ops,
                                 void *content, sv_sweep_solver **out);
/* Calls ops->destroy(content), then frees the object. */
void sv_sweep_solver_destroy(sv_sweep_solver *s);
const sv_sweep_model *sv_sweep_solver_model(const sv_sweep_solver *s);
const char *sv_sweep_solver_name(const sv_sweep_solver *s);

/* The built-in solvers: SV_SWEEP_MIXED (single-precision LDLᵀ, refined to
 * refine_tol, 0 = 1e-15), SV_SWEEP_DOUBLE (double LDLᵀ) or SV_SWEEP_LAPACK
 * (full double copy and zgesv: the independent reference). Nothing large is
 * allocated before a solve. */
sv_status sv_sweep_solver_create_builtin(sv_ctx *ctx, const sv_sweep_model *m, sv_sweep_precision precision,
                                         double refine_tol, sv_sweep_solver **out);

/* The exact solve at freq: setup, the refinement engine (with the fallback
 * to the CPU's double factorisation where the plan allows it), release,
 * account. X n × nrhs; nderiv (0..SV_SWEEP_MAX_DERIV) derivative blocks in
 * dx as sv_sweep_solve_exact_deriv. info may be NULL. */
sv_status sv_sweep_solver_solve(sv_sweep_solver *s, sv_ctx *ctx, double freq, double complex *x, int ldx,
                                int nderiv, double complex *dx, int lddx, sv_sweep_exact_info *info);

/* The operations through the object, for an implementation that stands in
 * for another (a GPU solver without a device is the CPU's mixed solver).
 * sv_sweep_solver_products uses the model's own products when the solver
 * has none. */
sv_status sv_sweep_solver_setup(sv_sweep_solver *s, sv_ctx *ctx, double freq, int nderiv,
                                sv_sweep_solver_plan *plan);
sv_status sv_sweep_solver_precond(sv_sweep_solver *s, int ncols, double complex *v, int ldv);
sv_status sv_sweep_solver_products(sv_sweep_solver *s, int ncols, const double *xs, double *ts);
void sv_sweep_solver_release(sv_sweep_solver *s);

#ifdef __cplusplus
}
#endif
#endif
