/* Solvent dense engine: complex symmetric (Aᵀ = A, not Hermitian) matrices
 * stored as their lower triangle packed by block columns, LDLᵀ without
 * pivoting on the fast path, a pivoted fallback for tiny pivots, solves with
 * many right-hand sides, single-precision factorisation refined to double
 * accuracy, and error-free (double-float) arithmetic.
 *
 * Packed block-column layout (shared by every precision, so one element
 * offset addresses the same entry in a real, complex-single or
 * complex-double matrix of the same order and block size): defined in
 * solvent/dense_layout.h (sv_dense_packed_offset, sv_dense_packed_size),
 * n²/2 + O(n·nb) elements. Only entries with i ≥ j are meaningful; the
 * strictly-upper part of each diagonal block is workspace. */
#ifndef SOLVENT_DENSE_H
#define SOLVENT_DENSE_H

#include <complex.h>
#include <stddef.h>

#include "solvent/core.h"
#include "solvent/dense_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sv_dense_type {
    SV_DENSE_C64 = 0, /* double complex */
    SV_DENSE_C32 = 1, /* float complex */
    SV_DENSE_R64 = 2  /* double (real symmetric, e.g. the terms of an affine model) */
} sv_dense_type;

/* ---- packed symmetric matrices ------------------------------------------ */
typedef struct sv_dense_sym sv_dense_sym;

/* n ≥ 0; nb = 0 picks the default block size (128 for n ≤ 3000, else 192).
 * Memory comes from ctx's budget; an order whose packed matrix would exceed
 * the address space is SV_ERR_ARG. */
sv_status sv_dense_sym_create(sv_ctx *ctx, int n, sv_dense_type type, int nb, sv_dense_sym **out);
void sv_dense_sym_destroy(sv_dense_sym *a);

int sv_dense_sym_order(const sv_dense_sym *a);
int sv_dense_sym_block(const sv_dense_sym *a);
sv_dense_type sv_dense_sym_type(const sv_dense_sym *a);
/* Number of stored elements (the length of the data array). */
size_t sv_dense_sym_size(const sv_dense_sym *a);
/* Bytes a matrix of this order, type and block size would take (for
 * estimating memory before allocating); SIZE_MAX when that exceeds size_t. */
size_t sv_dense_sym_bytes(int n, sv_dense_type type, int nb);
/* The element array (double complex*, float complex* or double*). */
void *sv_dense_sym_data(sv_dense_sym *a);
const void *sv_dense_sym_cdata(const sv_dense_sym *a);
/* Element offset of (i, j), i ≥ j (swap if i < j: the matrix is symmetric). */
size_t sv_dense_sym_offset(const sv_dense_sym *a, int i, int j);

/* Element access (slow; for tests and set-up). */
double complex sv_dense_sym_get(const sv_dense_sym *a, int i, int j);
void sv_dense_sym_set(sv_dense_sym *a, int i, int j, double complex v);
/* Copy the lower triangle of a full column-major n × n matrix of the same
 * scalar type (double complex, float complex or double). */
sv_status sv_dense_sym_from_full(sv_dense_sym *a, const void *full, int lda);
/* Convert between types of the same order and block size (e.g. C64 -> C32). */
sv_status sv_dense_sym_convert(const sv_dense_sym *src, sv_dense_sym *dst);
/* Y = A·X for the unfactored matrix (A and X, Y of the same precision; for
 * R64, X and Y are double complex). X, Y: n × nrhs column-major. */
sv_status sv_dense_sym_matmul(const sv_dense_sym *a, int nrhs, const void *x, int ldx, void *y, int ldy);
/* Infinity norm (max row sum of |a_ij|) of the unfactored matrix. */
double sv_dense_sym_norm_inf(const sv_dense_sym *a);

/* ---- factorisation ------------------------------------------------------- */
typedef enum sv_dense_path {
    SV_DENSE_PATH_LDLT = 0,        /* blocked LDLᵀ, no pivoting (the fast path) */
    SV_DENSE_PATH_FALLBACK = 1     /* a tiny pivot: the stable pivoted fallback ran */
} sv_dense_path;

/* A zero-filled struct is the defaults (sv_dense_factor_options_default
 * fills them; NULL options mean the same). */
typedef struct sv_dense_factor_options {
    /* A pivot d_k with |d_k| < pivot_threshold · max|a_ij| triggers the
     * fallback. 0 selects the default (documented in docs/dense.md). */
    double pivot_threshold;
    int disallow_fallback;         /* 1 = report SV_ERR_SINGULAR instead of falling back
                                      (default 0: fall back) */
    int plain_gemm;                /* 1 = conventional complex gemm in the trailing update
                                      instead of the faster 3M method (default 0) */
    int discard_on_cancel;         /* 1 = a cancelled factorisation returns at once and leaves
                                      the matrix partly factorised, for a caller that discards
                                      it (default 0: the matrix is given back, which costs as
                                      much as the factorisation so far) */
} sv_dense_factor_options;

void sv_dense_factor_options_default(sv_dense_factor_options *opts);

typedef struct sv_dense_factor_info {
    sv_dense_path path;
    int small_pivot_index;         /* first pivot below the threshold, or −1 */
    double min_pivot_ratio;        /* min |d_k| / max|a_ij| seen on the LDLᵀ path */
    size_t fallback_bytes;         /* extra memory the fallback used */
    double seconds;
} sv_dense_factor_info;

typedef struct sv_dense_factor sv_dense_factor;

/* Factor A (C64 or C32) in place: A is overwritten by L and D. On a tiny
 * pivot the stable fallback factors the original A (recovered or copied as
 * docs/dense.md describes), after checking the memory budget. The factor
 * keeps a pointer to A, which must outlive it. opts and info may be NULL.
 * ctx's progress callback is called after each block column; asking to stop
 * restores A and returns SV_ERR_CANCELLED. */
sv_status sv_dense_factor_create(sv_ctx *ctx, sv_dense_sym *a, const sv_dense_factor_options *opts,
                                 sv_dense_factor **out, sv_dense_factor_info *info);
void sv_dense_factor_destroy(sv_dense_factor *f);
sv_dense_type sv_dense_factor_type(const sv_dense_factor *f);
/* Which path produced the factors. */
sv_dense_path sv_dense_factor_path(const sv_dense_factor *f);

/* Solve A·X = B in place (B overwritten by X), B n × nrhs column-major in the
 * factor's precision (double complex for C64, float complex for C32). */
sv_status sv_dense_factor_solve(const sv_dense_factor *f, int nrhs, void *b, int ldb);

/* Solve with single-precision (C32) factors for double complex right-hand
 * sides B (n × nrhs, in place, overwritten by X): each column is scaled to
 * unit size, rounded to single, solved and scaled back, so that a small
 * residual keeps its digits (one of 1e-30 would otherwise underflow). work:
 * sv_dense_solve_work_bytes(n, nrhs) bytes. With C64 factors this is
 * sv_dense_factor_solve (work unused). This is the correction step of
 * mixed-precision refinement. */
size_t sv_dense_solve_work_bytes(int n, int nrhs);
sv_status sv_dense_factor_solve_scaled(const sv_dense_factor *f, int nrhs, double complex *b, int ldb, void *work);
/* The same scaling around any single-precision solve (an accelerator's, say):
 * solve32(user, nrhs, w) solves in place for w, n × nrhs complex single with
 * leading dimension n. */
typedef sv_status (*sv_dense_solve32_fn)(void *user, int nrhs, float complex *w);
sv_status sv_dense_solve_scaled(int n, int nrhs, double complex *b, int ldb, void *work, sv_dense_solve32_fn solve32,
                                void *user);

/* ---- backward error -------------------------------------------------------- */
/* The normwise backward error of each column j of X for Z·X = B with
 * residual R = B − Z·X (all n × ncols, their own leading dimensions):
 *     ‖r_j‖∞ / (norm_inf·‖x_j‖∞ + ‖b_j‖∞),
 * 0 where r_j = 0 and the denominator is 0, ∞ where only the denominator
 * is; NaN in r_j, x_j or b_j gives NaN. Returns the largest (NaN if any is
 * NaN); per_col (may be NULL) receives each column's. The one definition
 * every refinement in Solvent stops on and reports. */
double sv_dense_backward_error_residual(int n, int ncols, double norm_inf, const double complex *r, int ldr,
                                        const double complex *x, int ldx, const double complex *b, int ldb,
                                        double *per_col);

/* ---- the refinement engine --------------------------------------------------- */
/* One engine refines every solve with approximate factors in Solvent (the
 * dense mixed solve below, the sweep's exact solves on the CPU and on a
 * GPU). It solves G groups of nrhs columns W = [W_0, …, W_{G−1}],
 *     Z·W_0 = B,    Z·W_g = F_g(W_0, …, W_{g−1})   (g = 1 … G−1),
 * all with the same Z and the same approximate factors M ≈ Z (the
 * preconditioner): one group is an ordinary solve; the sweep's frequency
 * derivatives are further groups. The caller describes Z through ops:
 *   precond    v ← M⁻¹·v (ncols columns, ld ldv);
 *   residuals  for W (n × nrhs·ngroups, ld n) and rhs with group 0 = B:
 *              rhs groups 1.. ← F_g(W) and R ← rhs − Z·W, all groups from one
 *              pass if the caller can (the block refinement's step);
 *   apply      y ← Z·x (GMRES's products and true residuals);
 *   group_rhs  r ← F_g(x, dx) from group 0 (x) and groups 1..g−1 (dx, group
 *              h at dx + (h−1)·lddx·nrhs): the groups one by one after GMRES
 *              and in a direct solve (NULL when ngroups = 1);
 *   fallback   replace M by factors in double (NULL: none). Its argument is
 *              the backward error M reached (∞ when params.singular).
 * norm_inf bounds ‖Z‖∞ for the backward error (sv_dense_backward_error_residual).
 *
 * The stages (docs/dense.md):
 *  1. block refinement: W ← M⁻¹·[B, 0, …], then W ← W + M⁻¹·R for all groups
 *     at once. Group 0 stops at `tolerance` or when a step gains less than a
 *     factor 2 (its rounding floor); groups ≥ 1 at `group_tolerance` or
 *     `group_extra` steps after group 0; everything after max_iterations.
 *     Group 0 keeps its best iterate.
 *  2. GMRES (gmres_steps > 0, group 0 above `accept` after stage 1):
 *     restarted flexible GMRES(SV_DENSE_GMRES_M) on group 0 from its best
 *     iterate, right-preconditioned by M, at most gmres_steps steps; then
 *     groups ≥ 1 in turn from M⁻¹·F_g, each within group_gmres_steps (and only
 *     if group 0 took no more); a group that does not reach
 *     10·group_tolerance is left out with the ones above it (zero columns).
 *  3. fallback (group 0 still above accept, or params.singular): ops->fallback,
 *     then stage 1 again with sv_dense_refine_params_double.
 * With direct = 1 (M⁻¹ is an exact solve) stages 1–2 are W_0 = M⁻¹·B and
 * W_g = M⁻¹·F_g in turn. */
#define SV_DENSE_GMRES_M 60       /* Krylov vectors per GMRES cycle */
#define SV_DENSE_GMRES_STEPS 240  /* the cap on stage 2 Solvent's own callers use: four cycles */

typedef struct sv_dense_refine_ops {
    int n;            /* order of Z */
    int nrhs;         /* columns of B and of every group */
    double norm_inf;  /* ‖Z‖∞ or an upper bound */
    void *user;
    sv_status (*precond)(void *user, int ncols, double complex *v, int ldv);
    sv_status (*residuals)(void *user, int ngroups, const double complex *w, double complex *rhs, double complex *r);
    sv_status (*apply)(void *user, int ncols, const double complex *x, int ldx, double complex *y, int ldy);
    sv_status (*group_rhs)(void *user, int g, const double complex *x, int ldx, const double complex *dx, int lddx,
                           double complex *r, int ldr);
    sv_status (*fallback)(void *user, double backward_error);
} sv_dense_refine_ops;

/* A zero-filled struct is the defaults (sv_dense_refine_params_default). */
typedef struct sv_dense_refine_params {
    double tolerance;       /* group 0's target backward error; 0 = 1e-15 */
    double accept;          /* group 0 stopped above tolerance is kept at or below this
                               (≥ 1: always); 0 = tolerance */
    int max_iterations;     /* block refinement steps; 0 = 30 */
    int direct;             /* 1: precond solves exactly: no refinement */
    int gmres_steps;        /* stage 2's steps on group 0; 0 = no stage 2 */
    double group_tolerance; /* groups ≥ 1; 0 = 1e-13 */
    int group_extra;        /* stage 1 steps groups ≥ 1 may take after group 0 stops; 0 = 3 */
    int group_gmres_steps;  /* stage 2's steps per group ≥ 1; 0 = groups ≥ 1 left out there */
    int singular;           /* 1: M could not be made (a factorisation found the matrix
                               singular): the fallback at once */
} sv_dense_refine_params;

void sv_dense_refine_params_default(sv_dense_refine_params *p);
/* What factors in double need (stage 3 runs them): block refinement to
 * 1e-16, at most 4 steps, whatever it reaches kept. */
void sv_dense_refine_params_double(sv_dense_refine_params *p);

typedef struct sv_dense_refine_result {
    double backward_error; /* group 0's (max over columns) */
    int iterations;        /* block refinement steps, stages 1 and 3 together */
    int gmres_steps;       /* GMRES steps of stage 2, all groups */
    int fell_back;         /* 1: stage 3 ran */
    int accepted;          /* 1: group 0 ended at or below accept (or stage 3 ran) */
} sv_dense_refine_result;

/* Refine: b (n × nrhs, ld n) is B; group 0 comes back in x, groups 1..
 * ngroups−1 in dx (group g at dx + (g−1)·lddx·nrhs). params may be NULL
 * (the defaults). A group 0 that ends above accept with no fallback is
 * returned with res->accepted = 0 and SV_OK: the caller decides. */
sv_status sv_dense_refine(sv_ctx *ctx, const sv_dense_refine_ops *ops, int ngroups,
                          const sv_dense_refine_params *params, const double complex *b, double complex *x, int ldx,
                          double complex *dx, int lddx, sv_dense_refine_result *res);
/* Bytes sv_dense_refine allocates at most (gmres: stage 2 may run). */
size_t sv_dense_refine_bytes(int n, int nrhs, int ngroups, int gmres);

/* ---- mixed precision: single factors, double accuracy -------------------- */
/* The operator whose system is solved. residual computes R = B − A·X in
 * double (n × nrhs, column-major); a caller can compute it from the matrices
 * A was built from, with no double copy of A. form fills a C64 matrix with A
 * for the double fallback (NULL: no fallback possible). norm_inf is ‖A‖∞ or
 * an upper estimate, for the backward error. */
typedef struct sv_dense_operator {
    sv_status (*residual)(void *user, int nrhs, const double complex *x, int ldx, const double complex *b,
                          int ldb, double complex *r, int ldr);
    sv_status (*form)(void *user, sv_dense_sym *a64);
    double norm_inf;
    int n;                   /* order of A (added: the callbacks need it) */
    void *user;
} sv_dense_operator;

/* The default operator: a stored C64 packed matrix (kept unfactored). */
sv_status sv_dense_operator_from_sym(const sv_dense_sym *a64, sv_dense_operator *op);

/* A zero-filled struct is the defaults (sv_dense_refine_options_default
 * fills them; NULL options mean the same). */
typedef struct sv_dense_refine_options {
    double tolerance;        /* target normwise backward error; 0 = 1e-15 */
    int max_iterations;      /* classical (block) refinement steps; 0 = 30 */
    int disallow_gmres;      /* 1: no GMRES-based refinement when classical stalls (default 0: on) */
    int disallow_fallback;   /* 1: no double factorisation when refinement fails: SV_ERR_NOCONV
                                instead (default 0: fall back) */
    double pivot_threshold;  /* for the single factorisation; 0 = its default (1e-4) */
} sv_dense_refine_options;

void sv_dense_refine_options_default(sv_dense_refine_options *opts);

typedef struct sv_dense_refine_info {
    int iterations;          /* classical refinement steps (the fallback's included) */
    int gmres_used;          /* 1 if GMRES-based refinement ran */
    int fell_back;           /* 1 if the double factorisation was used */
    double backward_error;   /* final max over columns of ‖b − A·x‖ / (‖A‖·‖x‖ + ‖b‖), ∞-norms */
    sv_dense_factor_info factor;
    double seconds_factor, seconds_refine;
} sv_dense_refine_info;

/* Solve A·X = B to double accuracy: a32 (C32, A rounded to single) is
 * factored in place, X refined with op's double residual by the refinement
 * engine (sv_dense_refine: classical, then GMRES, then the double
 * fallback). B, X: double complex n × nrhs. opts and info may be NULL.
 * Returns SV_ERR_NOCONV if refinement fails and no fallback is possible or
 * allowed. */
sv_status sv_dense_solve_mixed(sv_ctx *ctx, sv_dense_sym *a32, const sv_dense_operator *op, int nrhs,
                               const double complex *b, int ldb, double complex *x, int ldx,
                               const sv_dense_refine_options *opts, sv_dense_refine_info *info);

/* Normwise backward error of X for the operator (max over columns):
 * op's residual, then sv_dense_backward_error_residual. */
sv_status sv_dense_backward_error(const sv_dense_operator *op, int nrhs, const double complex *b, int ldb,
                                  const double complex *x, int ldx, double *berr);

#ifdef __cplusplus
}
#endif
#endif
