/* ODE module internals: the problem record, tableaus, the linear-solver
 * interface behind which dense and sparse LU sit, and the lane workspace. */
#ifndef SV_ODE_INTERNAL_H
#define SV_ODE_INTERNAL_H

#include "solvent/ode.h"
#include "solvent/sparse.h"

/* max/min without fmax's NaN rules (and its library call in hot loops) */
static inline double ode_max(double a, double b) { return a > b ? a : b; }
static inline double ode_min(double a, double b) { return a < b ? a : b; }

/* sv_free every one of count pointers (a destroy's arrays, then the record). */
static inline void ode_free_all(sv_ctx *ctx, void *const *parts, int count)
{
    for (int k = 0; k < count; k++) sv_free(ctx, parts[k]);
}

/* Largest lane count (AVX-512 would take 8 doubles). */
#define ODE_WMAX 8

struct sv_ode_problem {
    sv_ode_problem_desc d;  /* copy; rowptr/colind below replace the caller's */
    int n, np;
    int dense;              /* no pattern given */
    int nnz;                /* entries of the Jacobian pattern (n² when dense) */
    int *rowptr, *colind;   /* owned copy of the pattern (CSR, sorted) */
    int *erow;              /* row of each entry */
    sv_sparse_coloring *coloring; /* of the pattern above, entries grouped by colour */
    int ncolors;
    const int *color;       /* colour of each column (owned by coloring) */
    int ns;                 /* sensitivity directions: parameters, then initial values */
    int *sens_idx;          /* owned: parameter index (k < nsens_params) or y0 index of each direction */
    int nsp;                /* directions that are parameters */
    sv_ctx *ctx;
};

/* ---- tableaus ----------------------------------------------------------- */
typedef struct rodas5p_tab {
    double gamma;
    double a[8][8], C[8][8], c[8], d[8], h[3][8];
} rodas5p_tab;
extern const rodas5p_tab sv_ode_rodas5p;

typedef struct tsit5_tab {
    double c[7], a[7][7], btilde[7];
    double r[7][4]; /* b_i(θ) = Σ_k r[i][k] θ^(k+1) */
} tsit5_tab;
extern const tsit5_tab sv_ode_tsit5;

/* ---- linear solver for M = shift·I − J, W lanes at once -------------------
 * The Jacobian arrives as pattern values (slot-major, nnz·W); `load`
 * scatters them into the factor buffer with the lane's shift, `factor`
 * factors every lane (no pivoting) and `solve` solves every lane. The
 * statuses are the sparse engine's (SV_OK unless an invariant broke). */
typedef struct ode_lin ode_lin;
sv_status ode_lin_create(sv_ctx *ctx, const sv_ode_problem *prob, int W, int single, ode_lin **out);
void ode_lin_destroy(ode_lin *L);
/* buf = shift[w]·I − J for every lane: an idle lane's Jacobian and shift
 * are stale but finite, so loading and factoring it is harmless, and the
 * batched kernels stay one pass over all W lanes. */
void ode_lin_load(ode_lin *L, const double *jvals, const double *shift);
/* Factor every lane; bad[w] = 1 for a zero or non-finite pivot in a lane
 * with mask[w] set (the other lanes' pivots are not looked at). */
sv_status ode_lin_factor(ode_lin *L, const unsigned char *mask, unsigned char *bad);
/* x = M⁻¹ b for all lanes (slot-major n·W); with a single-precision factor
 * the solution is refined against the double M until it stops improving.
 * sweeps: refinement sweeps done (max over lanes). */
sv_status ode_lin_solve(ode_lin *L, const double *jvals, const double *shift, const double *b, double *x,
                        int *sweeps);
/* Whether lane w's last load was numerically singular in double, so that
 * its factor and solves run in double-double (lin.c). */
int ode_lin_lane_exact(const ode_lin *L, int w);
/* Double-double LU of single lanes (lin_dd.c) over lu's structure (NULL:
 * full n × n storage in natural order); eslot and dslot as in lin.c. */
typedef struct ode_lin_dd ode_lin_dd;
sv_status ode_lin_dd_create(sv_ctx *ctx, const sv_ode_problem *prob, int W, const sv_sparse_lu *lu,
                            const int *eslot, const int *dslot, ode_lin_dd **out);
void ode_lin_dd_destroy(ode_lin_dd *D);
/* Factor lane w of shift·I − J (J: slot-major pattern values); bad: a zero
 * or non-finite pivot. SV_ERR_BUDGET/NOMEM when its buffer does not fit. */
sv_status ode_lin_dd_factor(ode_lin_dd *D, int w, const double *jvals, double shift, unsigned char *bad);
/* x = M⁻¹ b for lane w (slot-major b and x, which may alias). */
void ode_lin_dd_solve(const ode_lin_dd *D, int w, const double *b, double *x);
/* Full-storage kernels for 2 ≤ n ≤ 8 (dense_small.c), W in {1, 2, 4, 8}. */
void ode_dense_small_factor(int n, int W, double *buf, unsigned char *bad);
void ode_dense_small_solve(int n, int W, const double *buf, double *x);

/* ---- Jacobian evaluation over lanes ---------------------------------------
 * jvals (nnz·W) and dfdt (n·W) for lanes with mask set. f0 = f(t, y) for
 * those lanes (used by finite differences). Returns per-lane failure in
 * fail[w]. nf[w] counts f evaluations spent. */
typedef struct ode_jac_work ode_jac_work;
sv_status ode_jac_work_create(sv_ctx *ctx, const sv_ode_problem *prob, ode_jac_work **out);
void ode_jac_work_destroy(ode_jac_work *w);
void ode_jacobian(const sv_ode_problem *prob, ode_jac_work *jw, int W, const unsigned char *mask, const double *t,
                  const double *y, const double *p, const double *f0, double *jvals, double *dfdt,
                  unsigned char *fail, long *nf);

/* A lane's fail[w] after its callbacks: 0, ODE_FAIL_REFUSED (f returned
 * > 0 at a trial state: reject the step and retry smaller) or
 * ODE_FAIL_HARD (a callback returned < 0, or a Jacobian callback failed:
 * the trajectory ends). The larger code wins when both happen in a step. */
enum { ODE_FAIL_REFUSED = 1, ODE_FAIL_HARD = 2 };
static inline void ode_fail_note(unsigned char *fail, int rc)
{
    unsigned char c = rc == 0 ? 0 : rc > 0 ? ODE_FAIL_REFUSED : ODE_FAIL_HARD;
    if (c > *fail) *fail = c;
}

/* f over W lanes (batched callback, or the scalar one lane by lane).
 * Masked-off lanes are not evaluated. fail[w] notes a masked lane's return
 * code (ode_fail_note). scratch: 2n + nparams doubles. */
void ode_eval_f(const sv_ode_problem *prob, int W, const unsigned char *mask, const double *t, const double *y,
                const double *p, double *dy, unsigned char *fail, double *scratch);

/* The pattern check before a solve's first Jacobian (pattern_check.c):
 * SV_ERR_PATTERN naming the non-zero entries of ∂f/∂y at (t, y, p) that
 * the pattern lacks; SV_OK also when a callback failed there (no verdict). */
sv_status ode_check_pattern(sv_ctx *ctx, const sv_ode_problem *prob, double t, const double *y, const double *p);

#endif
