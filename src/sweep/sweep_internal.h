/* Internal declarations of the sweep module. */
#ifndef SV_SWEEP_INTERNAL_H
#define SV_SWEEP_INTERNAL_H

#include "solvent/dense.h"
#include "solvent/sweep.h"
#include "solvent/sweep_solver.h"

struct sv_sweep_model {
    sv_ctx *ctx;
    int n, nterms, nrhs, nout;
    int nb;                  /* block size shared by the packed terms (0 if none) */
    sv_sweep_term *terms;    /* copied descriptors; arrays borrowed */
    double *term_norm;       /* ‖A_k‖∞ */
    sv_sweep_coef_fn coef;
    void *coef_user;
    double *b;               /* n × nrhs */
    double *c;               /* n × nout (points at b when C = B) */
    double *bnorm;           /* ‖b_j‖₂ */
    /* low-rank terms sharing one U form a group (lowrank.c) */
    int ngroups;
    int *term_group;         /* nterms: the group of term k, −1 if not low-rank */
    int *group_first;        /* ngroups + 1: group g's terms are group_terms[group_first[g] ..] */
    int *group_terms;
};

/* Y (+)= A·X for real symmetric packed A, real X (n × m). accumulate = 0
 * overwrites Y. Parallel over block columns. */
sv_status sv_sweep_packed_matmul(sv_ctx *ctx, int n, int nb, const double *a, int m, const double *x, int ldx,
                                 double *y, int ldy, int accumulate);
/* ‖A‖∞ of a packed term, its columns reported through loop (stopped early,
 * with a meaningless result, once the loop is cancelled: the caller asks
 * sv_progress_loop_end). −1: no memory. */
double sv_sweep_packed_norm_inf(sv_progress_loop *loop, int n, int nb, const double *a);
/* Y += A·X for CSR A (real), real X. */
void sv_sweep_csr_matmul(int n, const int *rowptr, const int *colind, const double *val, int m, const double *x,
                         int ldx, double *y, int ldy);

/* ---- low-rank terms (lowrank.c) ---------------------------------------------- */
/* Term k valid (else 0, with the error set). */
int sv_sweep_lowrank_ok(int n, const sv_sweep_term *t, int k);
/* The model's groups of low-rank terms sharing one U. */
sv_status sv_sweep_lowrank_groups(sv_sweep_model *m);
/* Low-rank terms, and the columns of their distinct U summed. */
void sv_sweep_lowrank_shape(const sv_sweep_model *m, int *lowrank, int *cols);
/* An upper bound of ‖A‖∞ of a low-rank term. */
double sv_sweep_lowrank_norm_inf(int n, const sv_sweep_term *t);
/* Y = A·X (overwritten) for one low-rank term. */
sv_status sv_sweep_lowrank_apply(sv_ctx *ctx, int n, const sv_sweep_term *t, int ncols, const double *x, int ldx,
                                 double *y, int ldy);
/* y + k·n·ncols = A_k·X for every term k of group g (X ld n), Uᵀ·X once. */
sv_status sv_sweep_lowrank_apply_group(const sv_sweep_model *m, int g, int ncols, const double *x, double *y);
/* Z(f) += Σ c_k·A_k over the low-rank terms: into packed storage with block
 * size nb (C32 when single, else C64; lower triangle; progress reported on
 * ctx, a stop returning SV_ERR_CANCELLED), or into the lower triangle of a
 * full column-major matrix. */
sv_status sv_sweep_lowrank_add_packed(sv_ctx *ctx, const sv_sweep_model *m, const double complex *c, int nb,
                                      int single, void *data);
sv_status sv_sweep_lowrank_add_full(const sv_sweep_model *m, const double complex *c, double complex *z, int ldz);
/* Bytes forming a group of rank r into Z(f) holds at most (its workspace
 * and the threads' panels). */
size_t sv_sweep_lowrank_form_bytes(int n, int r);

/* The coefficients of the matrix single-precision factors are made of at
 * freq (precond.c): c_k(freq), except at low frequencies, where the terms
 * the dominant one outgrows are multiplied by *lift (> 1; else 1). */
sv_status sv_sweep_precond_coefs(const sv_sweep_model *m, double freq, double complex *c, double *lift);

/* Fill a full column-major n × n complex double matrix with Z(f). */
sv_status sv_sweep_form_full(const sv_sweep_model *m, double freq, double complex *z, int ldz);

/* ---- the built-in exact solvers (solvent/sweep_solver.h) ------------------ */
/* The CPU dense solver (exact_dense.c): Z(f) packed in single (single = 1,
 * refined to tol, 0 = 1e-15) or double, the dense engine's LDLᵀ. */
sv_status sv_sweep_dense_solver_create(sv_ctx *ctx, const sv_sweep_model *m, int single, double tol,
                                       sv_sweep_solver **out);
/* The LAPACK reference (exact_lapack.c): a full double copy and zgetrf. */
sv_status sv_sweep_lapack_solver_create(sv_ctx *ctx, const sv_sweep_model *m, sv_sweep_solver **out);

/* ---- the refinement engine's view of an exact solve (refine_op.c) --------- */
/* The operator of sv_dense_refine for Z(freq)·W = B and its frequency
 * derivatives (groups 1..nd, Leibniz: Z·X⁽ᵍ⁾ = −Σ_{i=1..g} C(g, i)·Z⁽ⁱ⁾·X⁽ᵍ⁻ⁱ⁾),
 * every residual from the products of the terms with the solver's products,
 * the factors of the solver (or, after the fallback, of the CPU's double
 * solver) as the preconditioner. */
typedef struct sv_sweep_op {
    sv_ctx *ctx;
    const sv_sweep_model *m;
    sv_sweep_solver *primary;  /* the exact solver of the solve */
    sv_sweep_solver *solver;   /* whose factors precondition now: primary, then fallback */
    sv_sweep_solver *fallback; /* the CPU's double solver, made by the fallback */
    double freq;
    int nd;                    /* derivative groups */
    double complex *c;         /* c_k(f), then d^i c_k/df^i at c + i·K */
    double complex *b;         /* B as complex, n × nrhs */
    double complex *t;         /* n × nrhs: a group's right-hand side in the making */
    double *xs, *ts;           /* real/imaginary split of up to w complex columns and the
                                  products of every term with them (low-rank terms: W_k·Uᵀ·xs,
                                  rank × 2w, ld rank) */
    size_t *tsrow;             /* K: term k's products start at ts + tsrow[k]·(real columns) */
    size_t *psrow;             /* ngroups (after tsrow): group g's rows of ps */
    double *ut;                /* 2w·n: Uᵀ·xs of a group, or U·ps */
    double *ps;                /* Σ rank × pcols: the low-rank groups' pending combinations */
    double complex **pend;     /* pcols / 2: their targets */
    int npend, pcols;
    sv_dense_refine_ops ops;
} sv_sweep_op;

sv_status sv_sweep_op_init(sv_sweep_op *o, sv_ctx *ctx, sv_sweep_solver *s, double freq, int nd);
/* Whether the fallback (ops.fallback) may replace the primary's factors. */
void sv_sweep_op_allow_fallback(sv_sweep_op *o, int allow);
/* Release the factors (solver's and fallback's) and free. */
void sv_sweep_op_free(sv_sweep_op *o);
/* 1 once the fallback has replaced the solver's factors. */
int sv_sweep_op_in_fallback(const sv_sweep_op *o);
/* Bytes sv_sweep_op_init holds (nterms terms, nd derivative groups). */
size_t sv_sweep_op_bytes(int n, int nterms, int nrhs, int nd);

/* Bytes an exact solve holds at most beyond the model, for nterms terms
 * (sv_sweep_exact_bytes assumes three). */
size_t sv_sweep_exact_bytes_k(int n, int nterms, int nrhs, int nb, sv_sweep_precision precision);

/* Tests only: after every evaluation of the reduced model, hook receives
 * the basis V (n × q) and the reduced solutions Y (for frequency i at
 * y + i·q·p, q × p; only valid where the result's exact flag is 0). */
typedef void (*sv_sweep_hook)(void *user, const double *V, int n, int q, const double complex *y,
                              const sv_sweep_result *res);
sv_status sv_sweep_run_hooked(sv_ctx *ctx, const sv_sweep_model *m, int nfreq, const double *freq,
                              const sv_sweep_options *opts, sv_sweep_hook hook, void *hook_user,
                              sv_sweep_result **out);

#endif
