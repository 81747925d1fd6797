/* ODE module internals: the problem record, tableaus, the linear-solver
 * interface behind which dense and sparse LU sit, and the lane workspace. */
#ifndef SV_ODE_INTERNAL_H
#define SV_ODE_INTERNAL_H

#include "solvent/ode.h"
#include "solvent/sparse.h"

/* Lane-loop helpers instantiated per lane count (W or n compile-time
 * constants in each copy, so that their loops vectorise) are inlined. */
#define ODE_INLINE static inline __attribute__((always_inline))

/* max/min without fmax's NaN rules (and its library call in hot loops) */
static inline double ode_max(double a, double b) { return a > b ? a : b; }
static inline double ode_min(double a, double b) { return a < b ? a : b; }

/* sv_free every one of count pointers (a destroy's arrays, then the record). */
static inline void ode_free_all(sv_ctx *ctx, void *const *parts, int count)
{
    for (int k = 0; k < count; k++) sv_free(ctx, parts[k]);
}

/* Largest lane count: two AVX-512 registers of doubles (the fused step for
 * tiny systems, driver.h); the general path runs at most 8. */
#define ODE_WMAX 16

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
/* 1 when L holds M in full storage (2 ≤ n ≤ 8, double: dense_small.h). */
int ode_lin_is_dense(const ode_lin *L);
/* Straight-line kernels for the sparse factor (sv_sparse_lu_compile; the
 * same numbers as the table-driven ones, which stay on failure: the status
 * says why). SV_OK without doing anything for full storage. */
sv_status ode_lin_compile(ode_lin *L, const char *cache_dir, const char *cc);
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
void ode_jacobian_lanewise(const sv_ode_problem *prob, ode_jac_work *jw, int W, const unsigned char *mask,
                           const double *t, const double *y, const double *p, const double *f0, double *jvals,
                           double *dfdt, unsigned char *fail, long *nf);
/* The batched analytic Jacobian runs every lane (as ode_eval_f) and inline;
 * the other sources lane by lane (eval.c). */
static inline void ode_jacobian(const sv_ode_problem *prob, ode_jac_work *jw, int W, const unsigned char *mask,
                                const double *t, const double *y, const double *p, const double *f0, double *jvals,
                                double *dfdt, unsigned char *fail, long *nf)
{
    if (prob->d.jac_source != SV_ODE_JAC_ANALYTIC || !prob->d.jac_batch) {
        ode_jacobian_lanewise(prob, jw, W, mask, t, y, p, f0, jvals, dfdt, fail, nf);
        return;
    }
    const int auton = !prob->d.nonautonomous;
    if (auton)
        for (int q = 0; q < prob->n * W; q++) dfdt[q] = 0;
    if (prob->d.jac_batch(W, t, y, prob->np ? p : NULL, jvals, auton ? NULL : dfdt, prob->d.user))
        for (int w = 0; w < W; w++)
            if (mask[w]) fail[w] = 1;
}

/* f over W lanes: the batched callback (every lane: inactive lanes carry a
 * valid old state), or the scalar one for each masked lane (eval.c).
 * fail[w] set for a failing masked lane. Inline because it runs once per
 * stage: for small systems the call chain costs as much as f. */
void ode_eval_f_lanewise(const sv_ode_problem *prob, int W, const unsigned char *mask, const double *t,
                         const double *y, const double *p, double *dy, unsigned char *fail, double *scratch);
static inline void ode_eval_f(const sv_ode_problem *prob, int W, const unsigned char *mask, const double *t,
                              const double *y, const double *p, double *dy, unsigned char *fail, double *scratch)
{
    if (!prob->d.f_batch) {
        ode_eval_f_lanewise(prob, W, mask, t, y, p, dy, fail, scratch);
    } else if (prob->d.f_batch(W, t, y, prob->np ? p : NULL, dy, prob->d.user)) {
        for (int w = 0; w < W; w++)
            if (mask[w]) fail[w] = 1;
    }
}

#endif
