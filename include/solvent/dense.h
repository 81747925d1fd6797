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
 * Memory comes from ctx's budget. */
sv_status sv_dense_sym_create(sv_ctx *ctx, int n, sv_dense_type type, int nb, sv_dense_sym **out);
void sv_dense_sym_destroy(sv_dense_sym *a);

int sv_dense_sym_order(const sv_dense_sym *a);
int sv_dense_sym_block(const sv_dense_sym *a);
sv_dense_type sv_dense_sym_type(const sv_dense_sym *a);
/* Number of stored elements (the length of the data array). */
size_t sv_dense_sym_size(const sv_dense_sym *a);
/* Bytes a matrix of this order, type and block size would take (for
 * estimating memory before allocating). */
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

typedef struct sv_dense_factor_options {
    /* A pivot d_k with |d_k| < pivot_threshold · max|a_ij| triggers the
     * fallback. 0 selects the default (documented in docs/dense.md). */
    double pivot_threshold;
    int allow_fallback;            /* 0 = report SV_ERR_SINGULAR instead of falling back */
    int plain_gemm;                /* 1 = conventional complex gemm in the trailing update
                                      instead of the faster 3M method (default 0) */
} sv_dense_factor_options;

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

typedef struct sv_dense_refine_options {
    double tolerance;        /* target normwise backward error; 0 = default (double level, 1e-15·... see docs) */
    int max_iterations;      /* classical + GMRES iterations in all; 0 = default */
    int allow_gmres;         /* switch to GMRES refinement when classical stalls (default on) */
    int allow_fallback;      /* factor in double if refinement fails (default on) */
    double pivot_threshold;  /* for the single factorisation; 0 = its default (1e-4) */
} sv_dense_refine_options;

typedef struct sv_dense_refine_info {
    int iterations;          /* refinement iterations (max over columns) */
    int gmres_used;          /* 1 if GMRES-based refinement ran */
    int fell_back;           /* 1 if the double factorisation was used */
    double backward_error;   /* final max over columns of ‖b − A·x‖ / (‖A‖·‖x‖ + ‖b‖), ∞-norms */
    sv_dense_factor_info factor;
    double seconds_factor, seconds_refine;
} sv_dense_refine_info;

/* Solve A·X = B to double accuracy: a32 (C32, A rounded to single) is
 * factored in place, X refined with op's double residual. B, X: double
 * complex n × nrhs. opts and info may be NULL. Returns SV_ERR_NOCONV if
 * refinement fails and no fallback is possible or allowed. */
sv_status sv_dense_solve_mixed(sv_ctx *ctx, sv_dense_sym *a32, const sv_dense_operator *op, int nrhs,
                               const double complex *b, int ldb, double complex *x, int ldx,
                               const sv_dense_refine_options *opts, sv_dense_refine_info *info);

/* Normwise backward error of X for the operator (max over columns). */
sv_status sv_dense_backward_error(const sv_dense_operator *op, int nrhs, const double complex *b, int ldb,
                                  const double complex *x, int ldx, double *berr);

#ifdef __cplusplus
}
#endif
#endif
