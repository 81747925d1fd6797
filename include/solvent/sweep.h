/* Solvent sweep engine: solve an affine frequency-dependent system
 *
 *     Z(f)·X(f) = B,     Z(f) = Σ_k c_k(f)·A_k
 *
 * at many frequencies f, with real symmetric terms A_k (dense packed in the
 * dense engine's block-column layout, or sparse CSR), scalar complex
 * coefficients c_k(f) supplied by a callback, and a real right-hand-side
 * block B (N × p). It knows nothing of electromagnetics: the planar model
 * is one user (A = L, Ψ, G with c = jω, −j/ω, Zs(ω)).
 *
 * Exact solves form Z(f) in single (or double) packed storage from the
 * terms, factorise it with the dense engine and refine the solution to
 * double accuracy with a residual computed in double from the terms; a
 * frequency whose refinement fails falls back to a double factorisation.
 * The exact solver is an object with a table of operations
 * (solvent/sweep_solver.h): the built-in ones, a GPU's, or a caller's.
 *
 * Adaptive frequency sampling (sv_sweep_run) solves exactly at a few
 * frequencies, projects the model on the real span V of the solutions and
 * their frequency derivatives (A_k,r = Vᵀ·A_k·V, B_r = Vᵀ·B), solves the small reduced system at every
 * frequency, estimates the true relative residual ‖Z·V·y − B‖ / ‖B‖ in
 * O(q²) per frequency, and solves exactly next where the estimate is
 * largest, until all estimates are below the tolerance.
 *
 * What comes out per frequency is H(f) = Cᵀ·X(f) (m × p complex), with
 * C = B by default: for the planar model with B the port excitations this
 * is the port admittance matrix Y. See docs/sweep.md. */
#ifndef SOLVENT_SWEEP_H
#define SOLVENT_SWEEP_H

#include <complex.h>
#include <stddef.h>

#include "solvent/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the affine model ------------------------------------------------------ */
typedef enum sv_sweep_term_kind {
    SV_SWEEP_TERM_PACKED = 0, /* real symmetric, lower triangle in the dense engine's
                                 packed block-column layout (R64) with block size nb */
    SV_SWEEP_TERM_CSR = 1,    /* real symmetric, CSR with BOTH triangles stored */
    SV_SWEEP_TERM_LOWRANK = 2 /* real symmetric U·W·Uᵀ: U n × rank, W rank × rank symmetric.
                                 Terms with the same u pointer (and rank) share U: the sweep
                                 applies Uᵀ once for all of them, and its residual estimate
                                 takes U's columns once instead of A_k·V for each */
} sv_sweep_term_kind;

/* One term A_k. The arrays are borrowed: they must outlive the model. */
typedef struct sv_sweep_term {
    sv_sweep_term_kind kind;
    const double *packed; /* PACKED: sv_dense_sym_data() of an R64 matrix of order N */
    int nb;               /* PACKED: its block size (sv_dense_sym_block()); all packed terms share it */
    const int *rowptr;    /* CSR: N + 1 row pointers */
    const int *colind;    /* CSR: column indices, 0-based */
    const double *values; /* CSR: values */
    const double *u;      /* LOWRANK: U, n × rank, column-major (ld n) */
    int rank;             /* LOWRANK: columns of U, 1 ≤ rank ≤ n */
    const double *core;   /* LOWRANK: W, rank × rank column-major, symmetric (both triangles) */
} sv_sweep_term;

/* The make-up of a model's terms, for memory estimates made before the
 * terms exist. A zero-filled struct is no term. */
typedef struct sv_sweep_shape {
    int nterms;       /* all terms */
    int lowrank;      /* of which low-rank */
    int lowrank_cols; /* columns of the distinct U of the low-rank terms, summed */
} sv_sweep_shape;

/* c_k(f) for term k at frequency f (f exactly as the caller passes it to
 * the sweep; the planar model uses hertz and converts to ω itself). Must
 * be finite for every f swept. */
typedef double complex (*sv_sweep_coef_fn)(void *user, int term, double freq);

typedef struct sv_sweep_model sv_sweep_model;

/* n ≥ 1 unknowns, nterms ≥ 1 terms, nrhs ≥ 1 columns of B (n × nrhs,
 * column-major, ldb ≥ n; copied). The terms are validated (finite values,
 * consistent layout, CSR indices in range); terms are borrowed. */
sv_status sv_sweep_model_create(sv_ctx *ctx, int n, int nterms, const sv_sweep_term *terms, sv_sweep_coef_fn coef,
                                void *coef_user, int nrhs, const double *b, int ldb, sv_sweep_model **out);
void sv_sweep_model_destroy(sv_sweep_model *m);

/* Outputs H = Cᵀ·X instead of Bᵀ·X: C is n × nout real (copied). */
sv_status sv_sweep_model_set_output(sv_sweep_model *m, int nout, const double *c, int ldc);

int sv_sweep_model_order(const sv_sweep_model *m);
int sv_sweep_model_nrhs(const sv_sweep_model *m);
int sv_sweep_model_nout(const sv_sweep_model *m);
int sv_sweep_model_nterms(const sv_sweep_model *m);
/* Its terms' make-up (as sv_sweep_estimate_bytes_shape takes it). */
void sv_sweep_model_shape(const sv_sweep_model *m, sv_sweep_shape *shape);
/* The block size shared by the packed terms (0 when there is none). */
int sv_sweep_model_block(const sv_sweep_model *m);
/* Term k's descriptor as given to sv_sweep_model_create (NULL if k is out
 * of range); its arrays are the caller's. */
const sv_sweep_term *sv_sweep_model_term(const sv_sweep_model *m, int k);
/* B (n × nrhs, real, column-major with leading dimension n: the model's copy). */
const double *sv_sweep_model_rhs(const sv_sweep_model *m);
/* c_k(f) for every term (c: nterms entries); SV_ERR_NONFINITE if one is not finite. */
sv_status sv_sweep_model_coefs(const sv_sweep_model *m, double freq, double complex *c);
/* dc_k/df, d²c_k/df², d³c_k/df³ at freq for every term, by central
 * differences of the coefficient callback (docs/sweep.md); any output may
 * be NULL. */
sv_status sv_sweep_model_coef_derivs(const sv_sweep_model *m, double freq, double complex *d1, double complex *d2,
                                     double complex *d3);

/* R = B − Z(f)·X computed in double from the terms (X, R n × nrhs). */
sv_status sv_sweep_model_residual(const sv_sweep_model *m, double freq, const double complex *x, int ldx,
                                  double complex *r, int ldr);
/* Z(f)·X for general complex X (n × ncols). */
sv_status sv_sweep_model_apply(const sv_sweep_model *m, double freq, int ncols, const double complex *x, int ldx,
                               double complex *y, int ldy);
/* Y = A_k·X for real X (n × ncols). */
sv_status sv_sweep_model_apply_term(const sv_sweep_model *m, int k, int ncols, const double *x, int ldx, double *y,
                                    int ldy);
/* Y_k = A_k·X for every term k at once, at y + k·n·ncols (ld n), for real X
 * (n × ncols, ld n): the products residuals are made of. */
sv_status sv_sweep_model_apply_terms(const sv_sweep_model *m, int ncols, const double *x, double *y);
/* ‖A_k‖∞ of term k as the model measured it at creation (−1 if k is out of range). */
double sv_sweep_model_term_norm(const sv_sweep_model *m, int k);
/* An upper bound of ‖Z(f)‖∞ (Σ_k |c_k|·‖A_k‖∞). */
double sv_sweep_model_norm_inf(const sv_sweep_model *m, double freq);

/* ---- exact solves ------------------------------------------------------------ */
typedef enum sv_sweep_precision {
    SV_SWEEP_MIXED = 0,  /* single-precision packed LDLᵀ refined to double (default) */
    SV_SWEEP_DOUBLE = 1, /* double-precision packed LDLᵀ */
    SV_SWEEP_LAPACK = 2  /* full double copy, LAPACK zgesv: the independent reference (16·N² bytes) */
} sv_sweep_precision;

typedef struct sv_sweep_exact_info {
    int fell_back;         /* 1: mixed refinement failed, a double factorisation was used */
    int iterations;        /* refinement iterations */
    double backward_error; /* max over columns of ‖B − Z·X‖ / (‖Z‖·‖X‖ + ‖B‖), ∞-norms */
    double seconds;
    int gmres_steps;       /* > 0: classical refinement stalled and GMRES-based refinement
                              (preconditioned by the single factors) took this many steps */
} sv_sweep_exact_info;

/* Derivative orders an exact solve gives at most. */
#define SV_SWEEP_MAX_DERIV 3

/* Solve Z(f)·X = B to double accuracy; X n × nrhs. info may be NULL. */
sv_status sv_sweep_solve_exact(sv_ctx *ctx, const sv_sweep_model *m, double freq, sv_sweep_precision precision,
                               double complex *x, int ldx, sv_sweep_exact_info *info);

/* Solve Z(f)·X = B and the frequency derivatives of X with the same
 * factors: dx holds nderiv (0..SV_SWEEP_MAX_DERIV) blocks n × nrhs, block k−1 at
 * dx + (k−1)·lddx·nrhs, dX/df solving Z·X' = −Z'·X, d²X/df² solving
 * Z·X'' = −(Z''·X + 2·Z'·X'), d³X/df³ solving
 * Z·X''' = −(Z'''·X + 3·Z''·X' + 3·Z'·X''), refined to a backward error of
 * about 1e-13 (they orient the adaptive sweep's basis directions; a
 * derivative that cannot be had cheaply at a hard low frequency comes back
 * as zero columns). refine_tol: target backward error of the mixed path,
 * 0 = 1e-15. Both are the built-in solver of that precision through
 * sv_sweep_solver_solve (solvent/sweep_solver.h). */
sv_status sv_sweep_solve_exact_deriv(sv_ctx *ctx, const sv_sweep_model *m, double freq, sv_sweep_precision precision,
                                     double refine_tol, double complex *x, int ldx, int nderiv, double complex *dx,
                                     int lddx, sv_sweep_exact_info *info);

/* An exact solver object (solvent/sweep_solver.h). */
typedef struct sv_sweep_solver sv_sweep_solver;

/* Bytes one exact solve holds at most with this precision (beyond the model
 * of three terms or fewer). */
size_t sv_sweep_exact_bytes(int n, int nrhs, int nb, sv_sweep_precision precision);
/* The same for terms of any make-up (sv_sweep_shape): more terms widen the
 * refinement's products, low-rank ones add the workspace of forming them
 * into Z(f). */
size_t sv_sweep_exact_bytes_shape(int n, const sv_sweep_shape *shape, int nrhs, int nb, sv_sweep_precision precision);

/* ---- the adaptive sweep ---------------------------------------------------------- */
/* The largest tolerance a sweep accepts: a relative residual above one
 * half leaves no digit of the result controlled. */
#define SV_SWEEP_TOLERANCE_MAX 0.5

/* A zero-filled struct is the defaults (sv_sweep_options_default). */
typedef struct sv_sweep_options {
    double tolerance;      /* relative residual target; 0 = 1e-4; at most SV_SWEEP_TOLERANCE_MAX */
    int max_exact;         /* cap on exact solves; 0 = 30 (at most the number of frequencies) */
    int initial;           /* exact solves to start with, at the band's Chebyshev points; 0 = 3 */
    int exact_all;         /* 1: solve every frequency exactly, no reduced model */
    sv_sweep_precision precision;
    double deflation;      /* drop a new basis direction whose norm after orthogonalisation
                              is below deflation × its norm before; 0 = 1e-10 */
    double refine_tolerance; /* mixed precision: target normwise backward error of the refinement;
                                0 = 1e-15 (tighter costs iterations; see docs/sweep.md) */
    int derivatives;         /* derivative orders added to the basis with each exact solution
                                (dX/df = −Z⁻¹·Z'·X, d²X/df², d³X/df³, solved with the same
                                factors, so fewer exact solves for the same accuracy):
                                0 = default 3, 1 to 3, or −1 for the solutions alone */
    sv_sweep_solver *solver; /* NULL: the built-in solver of `precision` and
                                `refine_tolerance`; else this one (borrowed, set up for the
                                same model: solvent/sweep_solver.h), a GPU's say */
} sv_sweep_options;

void sv_sweep_options_default(sv_sweep_options *opts);

typedef struct sv_sweep_result {
    int nfreq, nout, nrhs;
    double *freq;            /* nfreq, as requested */
    double complex *h;       /* H(f_i) = Cᵀ·X(f_i), nout × nrhs column-major at h + i·nout·nrhs */
    unsigned char *exact;    /* 1 where f_i was solved exactly (its exact solution is used) */
    unsigned char *fallback; /* 1 where an exact solve fell back to double */
    double *residual;        /* estimated relative residual (reduced model) or the exact solve's
                                backward error, max over columns */
    int n_exact, n_fallback; /* exact solves made, of which fell back */
    int n_gmres;             /* exact solves whose refinement needed GMRES (low frequency) */
    int basis_size;          /* q, columns of V */
    int converged;           /* 1 if every residual estimate is below the tolerance */
    double max_residual;     /* largest estimate over the non-exact frequencies */
    double seconds_exact, seconds_reduced, seconds_total;
    size_t peak_bytes;       /* peak of the context's counted memory during the sweep */
    sv_ctx *ctx;             /* the context it was allocated from (sv_sweep_result_destroy) */
} sv_sweep_result;

/* Sweep nfreq ≥ 1 frequencies (finite, any order). opts may be NULL.
 * On success *out holds the result (free with sv_sweep_result_destroy).
 * Stops at the cap with converged = 0 (and a log warning), not an error.
 * Progress is reported on ctx as phase "sweep". */
sv_status sv_sweep_run(sv_ctx *ctx, const sv_sweep_model *m, int nfreq, const double *freq,
                       const sv_sweep_options *opts, sv_sweep_result **out);
void sv_sweep_result_destroy(sv_sweep_result *r);

/* Bytes sv_sweep_run will hold at most (model terms not included), for
 * nterms packed or CSR terms. */
size_t sv_sweep_estimate_bytes(int n, int nterms, int nrhs, int nout, int nb, int nfreq,
                               const sv_sweep_options *opts);
/* The same for terms of any kind (low-rank ones cost the sweep far less). */
size_t sv_sweep_estimate_bytes_shape(int n, const sv_sweep_shape *shape, int nrhs, int nout, int nb, int nfreq,
                                     const sv_sweep_options *opts);

#ifdef __cplusplus
}
#endif
#endif
