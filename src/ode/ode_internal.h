/* ODE module internals: the problem record, tableaus, the linear-solver
 * interface behind which dense and sparse LU sit, and the lane workspace. */
#ifndef SV_ODE_INTERNAL_H
#define SV_ODE_INTERNAL_H

#include "solvent/ode.h"
#include "solvent/sparse.h"

/* Lane-loop helpers instantiated per lane count (W or n compile-time
 * constants in each copy, so that their loops vectorise) are inlined. */
#define ODE_INLINE static inline __attribute__((always_inline))

/* Point *slices[k] at consecutive parts of one allocation from base, lens[k]
 * values each (the last may be 0: the rest); returns what follows them. */
static inline double *ode_carve(double *base, int count, double **const slices[], const size_t lens[])
{
    for (int k = 0; k < count; k++) *slices[k] = base, base += lens[k];
    return base;
}

/* max/min without fmax's NaN rules (and its library call in hot loops) */
static inline double ode_max(double a, double b) { return a > b ? a : b; }
static inline double ode_min(double a, double b) { return a < b ? a : b; }

/* Largest lane count: two AVX-512 registers of doubles (the fused step for
 * tiny systems, fused_rodas5p.h); the general path runs at most 8. */
#define ODE_WMAX 16

/* A constant mass matrix M (mass.c): CSR; when singular, its algebraic
 * part — in semi-explicit form its zero rows and columns (the algebraic
 * equations and variables), otherwise orthonormal bases of its left and
 * right null spaces (the algebraic constraints wᵀf = 0 and the directions
 * they fix); when non-singular, its LU for Tsit5 (y' = M⁻¹ f). */
typedef struct ode_mass {
    int nnz;
    int *rowptr, *colind; /* owned CSR pattern, columns sorted */
    double *val;          /* nnz values */
    int nalg;             /* n − rank M: algebraic constraints */
    int *alg_row;         /* semi-explicit: the nalg zero rows (algebraic equations), increasing; else NULL */
    int *alg_col;         /* semi-explicit: the nalg zero columns (algebraic variables), increasing */
    double *wl, *vr;      /* otherwise: n × nalg column-major bases, Wᵀ M = 0 and M V = 0; else NULL */
    double *lu;           /* n × n column-major LAPACK LU of M when nalg = 0 (n <= ODE_MASS_DENSE_MAX), else NULL */
    int *ipiv;            /* its pivots */
} ode_mass;

/* Declared linear invariants (invariants.c): m rows of C, row-major m × n. */
typedef struct ode_invariants {
    int m;
    double *C;
} ode_invariants;

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
    ode_mass *mass;         /* NULL: M = I (an ODE) */
    ode_invariants *inv;    /* NULL: no invariants declared */
    sv_ctx *ctx;
};

/* ---- the mass matrix (mass.c) ------------------------------------------- */
/* Dense n × n LU of M (the non-singularity check, Tsit5's solves) only up
 * to this n: beyond it M's n² doubles would be a large hidden allocation. */
#define ODE_MASS_DENSE_MAX 4096
/* Validate and copy the description's M (NULL *out when none is given). */
sv_status ode_mass_create(sv_ctx *ctx, const sv_ode_problem_desc *d, ode_mass **out);
void ode_mass_destroy(sv_ctx *ctx, ode_mass *m);
/* out = M·x over W lanes, slot-major n·W (out does not overlap x). */
void ode_mass_mul(const ode_mass *m, int n, int W, const double *x, double *out);
/* x = M⁻¹ x over the W lanes with mask set, slot-major (M non-singular:
 * m->lu set); work: n doubles. */
void ode_mass_solve(const ode_mass *m, int n, int W, const unsigned char *mask, double *x, double *work);

/* ---- linear invariants (invariants.c) ------------------------------------ */
/* Validate and copy the description's invariants (NULL *out when none). */
sv_status ode_invariants_create(sv_ctx *ctx, const sv_ode_problem_desc *d, ode_invariants **out);
void ode_invariants_destroy(sv_ctx *ctx, ode_invariants *inv);
/* Work values ode_invariants_project needs (n of them the scales). */
static inline size_t ode_invariants_work(const ode_invariants *inv, int n)
{
    return (size_t)n + (size_t)inv->m * (inv->m + 1);
}
/* target[k] = c_k·x (x: n values, stride xs). */
void ode_invariants_values(const ode_invariants *inv, int n, const double *x, size_t xs, double *target);
/* out = x − D Cᵀ (C D Cᵀ)⁻¹ (C x − target), D = diag(sc_i²), sc_i = atol_i
 * + rtol·|x_i| (x and out: n values at strides xs and os; they may be the
 * same). A lane whose C D Cᵀ is not positive definite (every component an
 * invariant involves has scale 0) is copied unchanged. One lane at a time,
 * sums in component order: the same bits whichever path or lane runs it. */
void ode_invariants_project(const ode_invariants *inv, int n, const double *atolv, double rtol, const double *target,
                            const double *x, size_t xs, double *out, size_t os, double *work);

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
/* The same for nrhs right-hand sides at once (b + r·n·W to x + r·n·W; x
 * does not overlap b), each solution that of its own ode_lin_solve call,
 * in order; work: nrhs·n·W values. sweeps: the sum over them. */
sv_status ode_lin_solve_multi(ode_lin *L, const double *jvals, const double *shift, int nrhs, const double *b,
                              double *x, double *work, int *sweeps);
/* Whether lane w's last load was numerically singular in double, so that
 * its factor and solves run in double-double (lin.c). */
int ode_lin_lane_exact(const ode_lin *L, int w);
/* The test for that, the one policy both the general factor (lin.c) and
 * the fused step's (fused_rodas5p_tmpl.h) apply to their double factor:
 * a lane is numerically singular when some pivot u_kk shrank below this
 * fraction of its diagonal entry M_kk (max_k |M_kk / u_kk| beyond its
 * inverse). */
#define ODE_LIN_PIVOT_SHRINK 1e-8
/* For a step that factors M itself (the fused one, full storage, double):
 * lanes with exact[w] set get their double-double factor of shift·I − J
 * (bad[w] from its pivots) and ode_lin_solve_exact then solves them; the
 * other lanes are not touched. */
sv_status ode_lin_factor_exact(ode_lin *L, const unsigned char *exact, const double *jv, const double *shift,
                               unsigned char *bad);
/* x = M⁻¹ b in double-double for the lanes the last factor marked exact
 * (slot-major n·W, lane by lane: b and x may alias). */
void ode_lin_solve_exact(const ode_lin *L, const double *b, double *x);
/* Double-double LU of single lanes (lin_dd.c) over lu's structure (NULL:
 * full n × n storage in natural order); eslot, dslot and mslot (the mass
 * matrix's slots, NULL without one) as in lin.c. */
typedef struct ode_lin_dd ode_lin_dd;
sv_status ode_lin_dd_create(sv_ctx *ctx, const sv_ode_problem *prob, int W, const sv_sparse_lu *lu,
                            const int *eslot, const int *dslot, const int *mslot, ode_lin_dd **out);
void ode_lin_dd_destroy(ode_lin_dd *D);
/* Factor lane w of shift·I − J, or shift·M − J (J: slot-major pattern values); bad: a zero
 * or non-finite pivot. SV_ERR_BUDGET/NOMEM when its buffer does not fit. */
sv_status ode_lin_dd_factor(ode_lin_dd *D, int w, const double *jvals, double shift, unsigned char *bad);
/* x = M⁻¹ b for lane w (slot-major b and x, which may alias). */
void ode_lin_dd_solve(const ode_lin_dd *D, int w, const double *b, double *x);
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
 * the other sources lane by lane (eval.c). A batched failure (one return
 * code for all lanes) is looked for lane by lane, so that it is the
 * failing lane's own (ODE_FAIL_HARD there). */
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
        ode_jacobian_lanewise(prob, jw, W, mask, t, y, p, f0, jvals, dfdt, fail, nf);
}

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

/* f over W lanes: the batched callback (every lane: inactive lanes carry a
 * valid old state), or the scalar one for each masked lane (eval.c).
 * fail[w] notes a masked lane's return code (ode_fail_note). A batched
 * call has one return code for all lanes (and may have stopped part-way):
 * each masked lane is then evaluated alone, so that its outcome is its own
 * and not its batch-mates'. Returns whether a masked lane's callback
 * refused or failed here. Inline because it runs once per stage: for small
 * systems the call chain costs as much as f. scratch: 2n + nparams
 * doubles. */
int ode_eval_f_lanewise(const sv_ode_problem *prob, int W, const unsigned char *mask, const double *t,
                        const double *y, const double *p, double *dy, unsigned char *fail, double *scratch);
static inline int ode_eval_f(const sv_ode_problem *prob, int W, const unsigned char *mask, const double *t,
                             const double *y, const double *p, double *dy, unsigned char *fail, double *scratch)
{
    if (prob->d.f_batch && !prob->d.f_batch(W, t, y, prob->np ? p : NULL, dy, prob->d.user)) return 0;
    return ode_eval_f_lanewise(prob, W, mask, t, y, p, dy, fail, scratch);
}

/* The pattern check before a solve's first Jacobian (pattern_check.c):
 * SV_ERR_PATTERN naming the non-zero entries of ∂f/∂y at (t, y, p) that
 * the pattern lacks; SV_OK also when a callback failed there (no verdict). */
sv_status ode_check_pattern(sv_ctx *ctx, const sv_ode_problem *prob, double t, const double *y, const double *p);

#endif
