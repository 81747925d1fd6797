/* The linear solver behind Rodas5P: M = shift·I − J for W lanes at once,
 * through the sparse engine (include/solvent/sparse.h): exact symbolic LU
 * of the Jacobian pattern plus diagonal, no pivoting, slot-major batched
 * kernels over the W lanes (W matrices side by side, vectorised across
 * trajectories — what LAPACK's getrf or KLU, one matrix at a time, cannot
 * do). M is dominated by its diagonal for the step sizes a stiff solver
 * takes; a zero or non-finite pivot is reported per lane and the stepper
 * retries that lane with a smaller step, which makes the diagonal larger.
 *
 * The one exception: double-precision systems with 2 ≤ n ≤ 8 whose factor
 * fills at least 3/4 of the n × n matrix are held in full storage and
 * factored by the unrolled kernels of dense_small.c, faster there than the
 * engine's table-driven kernels (figures in docs/ode.md).
 *
 * Ordering: the natural order or AMD, whichever needs fewer factor updates
 * (natural on a tie: small chemical systems are often written in a good
 * order already, and AMD minimises fill only heuristically); natural is
 * tried only up to n = 256 (see choose_ordering).
 *
 * Single precision: the factor is computed in float and every solve is
 * refined against the double M (residual in double) until the correction
 * stops shrinking, so stage solutions carry double accuracy and Rodas5P
 * keeps its order. A lane whose refinement stagnates falls back to a double
 * factor of the same M for the rest of the step.
 *
 * With a mass matrix (a DAE when singular) the stage matrix is
 * shift·M − J (Hairer & Wanner, Solving ODEs II, §VI.4: M − hγJ scaled
 * by 1/(hγ)), over the union of M's and J's patterns (plus the
 * diagonal): the same analysis, kernels and fallbacks. The algebraic
 * rows then hold −J alone, and since nothing pivots their diagonal
 * ∂g_i/∂y_i must be non-zero in the elimination order chosen below.
 *
 * Numerically singular M: a lane whose shift keeps fewer than about six
 * of its digits in M (ε·‖J‖∞ > 1e-6·shift: hγ‖J‖ beyond ~4.5e9) is factored
 * and solved in double-double instead (lin_dd.c says why); every other
 * lane's numbers are untouched by this. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ode_internal.h"
#include "solvent/sparse.h"

struct ode_lin {
    sv_ctx *ctx;
    int n, W, nnz, nslots, single;
    int dense;      /* 2 ≤ n ≤ 8, double: full storage, dense_small.c */
    int ddiag[8];   /* dense: diagonal slots */
    const sv_ode_problem *P;
    sv_sparse_pattern *pat;
    sv_sparse_lu *lu;
    int *eslot;     /* LU slot of each Jacobian pattern entry (P's CSR order) */
    const int *dslot; /* LU slot of each diagonal entry (owned by lu) */
    double *buf;    /* nslots·W, slot-major: M, then its double factor */
    float *fbuf;    /* single mode: the float factor */
    double *r, *dx, *work, *xdd;
    float *fx, *fwork;
    int dfactored;  /* single mode: buf holds the double factor */
    int flags[ODE_WMAX];
    unsigned char use_double[ODE_WMAX]; /* single mode: lane fell back to double this step */
    unsigned char exact[ODE_WMAX];      /* lane's M numerically singular: double-double this step */
    ode_lin_dd *dd;
    const double *jv, *shift;           /* the last load's J and shifts (the double-double lanes') */
    int *jdiag;                         /* Jacobian entry of (k, k), or -1 */
    const ode_mass *mass;               /* the problem's M, or NULL (identity) */
    int *mslot;                         /* LU slot of each M entry (mass only) */
    double *mdiag;                      /* M_kk (mass only) */
};

/* A float pivot shrunk by more than this (ε_float times it ≈ 6 %) is noise. */
#define ODE_LIN_FLOAT_NOISE 1e6

/* The stage matrix's pattern for the engine: J's, or with a mass matrix
 * the union of J's and M's (merged row by row, both sorted). */
static sv_status load_pattern(ode_lin *L)
{
    const sv_ode_problem *P = L->P;
    if (!L->mass) return sv_sparse_pattern_from_csr(L->ctx, P->n, P->rowptr, P->colind, &L->pat);
    const ode_mass *m = L->mass;
    const int n = P->n;
    int *rp = sv_alloc(L->ctx, sizeof(int) * ((size_t)n + 1 + (size_t)P->nnz + (size_t)m->nnz), "ode pattern union");
    if (!rp) return sv_last_status();
    int *ci = rp + n + 1, e = 0;
    rp[0] = 0;
    for (int i = 0; i < n; i++) {
        int a = P->rowptr[i], ae = P->rowptr[i + 1], b = m->rowptr[i], be = m->rowptr[i + 1];
        while (a < ae || b < be) {
            int ja = a < ae ? P->colind[a] : n, jb = b < be ? m->colind[b] : n;
            int j = ja < jb ? ja : jb;
            ci[e++] = j;
            a += ja == j;
            b += jb == j;
        }
        rp[i + 1] = e;
    }
    sv_status st = sv_sparse_pattern_from_csr(L->ctx, n, rp, ci, &L->pat);
    sv_free(L->ctx, rp);
    return st;
}

/* The engine's analysis of P's pattern plus diagonal: natural order or
 * AMD, whichever needs fewer factor updates (natural on a tie). */
static sv_status choose_ordering(ode_lin *L)
{
    const sv_ode_problem *P = L->P;
    sv_ctx *ctx = L->ctx;
    sv_sparse_lu *nat = NULL, *amd = NULL;
    sv_status st = load_pattern(L);
    if (st != SV_OK) return st;
    /* The natural order's analysis is cheap only for moderate n (its fill
     * on a 2D grid is large); beyond that AMD alone. */
    int try_natural = P->n <= 256;
    /* Either analysis alone is enough when the other has too much fill
     * (SV_ERR_PATTERN): that failure is handled, its message dropped. Any
     * other (no memory) is the solve's: the choice, and with it the
     * results, must not depend on how much memory was free. */
    sv_status sn = try_natural ? sv_sparse_lu_analyse(ctx, L->pat, SV_SPARSE_ORDER_NATURAL, &nat) : SV_ERR_UNSUPPORTED;
    if (try_natural && sn != SV_OK && sn != SV_ERR_PATTERN) return sn;
    sv_status sa = sv_sparse_lu_analyse(ctx, L->pat, SV_SPARSE_ORDER_AMD, &amd);
    if (sa != SV_OK && (sa != SV_ERR_PATTERN || sn != SV_OK)) {
        sv_sparse_lu_destroy(nat);
        return sa;
    }
    if ((try_natural && sn != SV_OK) || sa != SV_OK) sv_clear_error();
    if (sn == SV_OK && (sa != SV_OK || sv_sparse_lu_updates(nat) <= sv_sparse_lu_updates(amd))) {
        L->lu = nat;
        sv_sparse_lu_destroy(amd);
    } else {
        L->lu = amd;
        sv_sparse_lu_destroy(nat);
    }
    L->nslots = sv_sparse_lu_nnz(L->lu);
    L->dslot = sv_sparse_lu_diag_slot(L->lu);
    return SV_OK;
}

/* mslot: the LU slot of each of M's entries, and M's diagonal. */
static sv_status map_mass(ode_lin *L)
{
    const ode_mass *m = L->mass;
    if (!m) return SV_OK;
    const int n = L->n;
    L->mslot = sv_alloc(L->ctx, sizeof(int) * (size_t)(m->nnz ? m->nnz : 1), "ode linear solver");
    L->mdiag = sv_calloc(L->ctx, (size_t)n, sizeof(double), "ode linear solver");
    if (!L->mslot || !L->mdiag) return sv_last_status();
    const int *es = sv_sparse_lu_entry_slot(L->lu);
    for (int i = 0; i < n; i++)
        for (int e = m->rowptr[i]; e < m->rowptr[i + 1]; e++) {
            int j = m->colind[e], q = sv_sparse_pattern_find(L->pat, i, j);
            if (q < 0) return sv_error(SV_ERR_INTERNAL, "ode: mass entry (%d, %d) lost by the sparse engine", i, j);
            L->mslot[e] = es[q];
            if (j == i) L->mdiag[i] = m->val[e];
        }
    return SV_OK;
}

/* eslot: the LU slot of each of P's entries (the engine's pattern has the
 * diagonal added, so its entry numbers differ from P's). */
static sv_status map_entries(ode_lin *L)
{
    const sv_ode_problem *P = L->P;
    L->eslot = sv_alloc(L->ctx, sizeof(int) * ((size_t)P->nnz + (size_t)P->n), "ode linear solver");
    if (!L->eslot) return sv_last_status();
    L->jdiag = L->eslot + P->nnz;
    for (int i = 0; i < P->n; i++) L->jdiag[i] = -1;
    for (int e = 0; e < P->nnz; e++)
        if (P->erow[e] == P->colind[e]) L->jdiag[P->erow[e]] = e;
    const int *es = sv_sparse_lu_entry_slot(L->lu);
    for (int e = 0; e < P->nnz; e++) {
        int q = sv_sparse_pattern_find(L->pat, P->erow[e], P->colind[e]);
        if (q < 0)
            return sv_error(SV_ERR_INTERNAL, "ode: pattern entry (%d, %d) lost by the sparse engine", P->erow[e],
                            P->colind[e]);
        L->eslot[e] = es[q];
    }
    return map_mass(L);
}

/* Tiny, (nearly) full factor in double: full storage and the unrolled
 * kernels (dense_small.c). A sparser tiny pattern stays with the engine,
 * whose work then shrinks with the pattern (docs/ode.md has the figures). */
static int wants_dense_small(const ode_lin *L)
{
    int n = L->n;
    return !L->single && n >= 2 && n <= 8 && 4 * L->nslots >= 3 * n * n;
}

/* Replace the engine's analysis by full storage: slot (i, j) = i·n + j. */
static sv_status use_dense_small(ode_lin *L)
{
    const sv_ode_problem *P = L->P;
    sv_sparse_lu_destroy(L->lu);
    sv_sparse_pattern_destroy(L->pat);
    L->lu = NULL;
    L->pat = NULL;
    L->dense = 1;
    L->nslots = P->n * P->n;
    for (int e = 0; e < P->nnz; e++) L->eslot[e] = P->erow[e] * P->n + P->colind[e];
    for (int i = 0; i < P->n; i++) L->ddiag[i] = i * P->n + i;
    if (L->mass)
        for (int i = 0; i < P->n; i++)
            for (int e = L->mass->rowptr[i]; e < L->mass->rowptr[i + 1]; e++)
                L->mslot[e] = i * P->n + L->mass->colind[e];
    L->dslot = L->ddiag;
    return SV_OK;
}

static sv_status alloc_buffers(ode_lin *L)
{
    sv_ctx *ctx = L->ctx;
    size_t nsw = (size_t)L->nslots * L->W, nw = (size_t)L->n * L->W;
    L->buf = sv_alloc(ctx, sizeof(double) * nsw, "ode LU buffer");
    L->r = sv_alloc(ctx, sizeof(double) * nw * 4, "ode LU work");
    if (!L->buf || !L->r) return sv_last_status();
    L->dx = L->r + nw;
    L->work = L->dx + nw;
    L->xdd = L->work + nw;
    if (!L->single) return SV_OK;
    L->fbuf = sv_alloc(ctx, sizeof(float) * nsw, "ode LU buffer (single)");
    L->fx = sv_alloc(ctx, sizeof(float) * nw * 2, "ode LU work (single)");
    if (!L->fbuf || !L->fx) return sv_last_status();
    L->fwork = L->fx + nw;
    return SV_OK;
}

sv_status ode_lin_create(sv_ctx *ctx, const sv_ode_problem *P, int W, int single, ode_lin **out)
{
    *out = NULL;
    ode_lin *L = sv_calloc(ctx, 1, sizeof *L, "ode linear solver");
    if (!L) return sv_last_status();
    L->ctx = ctx;
    L->n = P->n;
    L->W = W;
    L->nnz = P->nnz;
    L->single = single;
    L->P = P;
    L->mass = P->mass;
    sv_status st = choose_ordering(L);
    if (st == SV_OK) st = map_entries(L);
    if (st == SV_OK && wants_dense_small(L)) st = use_dense_small(L);
    if (st == SV_OK) st = alloc_buffers(L);
    if (st == SV_OK) st = ode_lin_dd_create(ctx, P, W, L->lu, L->eslot, L->dslot, L->mslot, &L->dd);
    if (st == SV_OK)
        *out = L;
    else
        ode_lin_destroy(L);
    return st;
}

int ode_lin_is_dense(const ode_lin *L) { return L->dense; }

sv_status ode_lin_compile(ode_lin *L, const char *cache_dir, const char *cc)
{
    return L->dense ? SV_OK : sv_sparse_lu_compile(L->lu, NULL, cache_dir, cc);
}

void ode_lin_destroy(ode_lin *L)
{
    if (!L) return;
    ode_lin_dd_destroy(L->dd);
    sv_sparse_lu_destroy(L->lu);
    sv_sparse_pattern_destroy(L->pat);
    sv_free_each(L->ctx, (void *const[]){L->eslot, L->mslot, L->mdiag, L->buf, L->r, L->fbuf, L->fx, L}, 8);
}

/* M = shift·I − J written straight into the LU slots (fill slots zeroed):
 * the engine's sv_sparse_lu_load_shifted_batch does the same, but takes J
 * in the engine's pattern order, which has the diagonal added where the
 * problem's pattern lacks it; eslot maps the problem's own order instead,
 * so the Jacobian evaluation's output is used as it is. The diagonal is
 * formed in double (shift − J_ii) and rounded once in single mode. */
#define DEFINE_LOAD(T, SFX)                                                                      \
    static void load##SFX(const ode_lin *L, const double *jv, const double *shift, T *buf)       \
    {                                                                                            \
        const int W = L->W;                                                                      \
        memset(buf, 0, sizeof(T) * (size_t)L->nslots * W);                                       \
        const int *rp = L->P->rowptr, *ci = L->P->colind;                                        \
        for (int i = 0; i < L->n; i++) {                                                         \
            int has_diag = 0;                                                                    \
            for (int e = rp[i]; e < rp[i + 1]; e++) {                                            \
                T *b = buf + (size_t)L->eslot[e] * W;                                            \
                const double *v = jv + (size_t)e * W;                                            \
                if (ci[e] == i) {                                                                \
                    has_diag = 1;                                                                \
                    for (int w = 0; w < W; w++) b[w] = (T)(shift[w] - v[w]);                     \
                } else {                                                                         \
                    for (int w = 0; w < W; w++) b[w] = (T)(-v[w]);                               \
                }                                                                                \
            }                                                                                    \
            if (!has_diag) {                                                                     \
                T *b = buf + (size_t)L->dslot[i] * W;                                            \
                for (int w = 0; w < W; w++) b[w] = (T)shift[w];                                  \
            }                                                                                    \
        }                                                                                        \
    }
DEFINE_LOAD(double, _d)
DEFINE_LOAD(float, _f)

/* With a mass matrix: shift·M − J, each slot summed in one order (−J,
 * then + shift·M); a slot without either entry is fill (zero). */
static void load_mass_d(const ode_lin *L, const double *jv, const double *shift, double *buf)
{
    const int W = L->W;
    const ode_mass *m = L->mass;
    memset(buf, 0, sizeof(double) * (size_t)L->nslots * W);
    for (int e = 0; e < L->nnz; e++) {
        double *b = buf + (size_t)L->eslot[e] * W;
        const double *v = jv + (size_t)e * W;
        for (int w = 0; w < W; w++) b[w] = -v[w];
    }
    for (int e = 0; e < m->nnz; e++) {
        double *b = buf + (size_t)L->mslot[e] * W;
        const double mv = m->val[e];
        for (int w = 0; w < W; w++) b[w] += shift[w] * mv;
    }
}

/* Single mode: the double sums (in buf, which single mode keeps for the
 * double fallback) rounded once to float. */
static void load_mass_f(ode_lin *L, const double *jv, const double *shift)
{
    load_mass_d(L, jv, shift, L->buf);
    for (size_t q = 0, len = (size_t)L->nslots * L->W; q < len; q++) L->fbuf[q] = (float)L->buf[q];
}

/* The stage matrix into buf (double) or fbuf (single), with or without M. */
static void load_double(ode_lin *L, const double *jv, const double *shift)
{
    if (L->mass)
        load_mass_d(L, jv, shift, L->buf);
    else
        load_d(L, jv, shift, L->buf);
}
static void load_single(ode_lin *L, const double *jv, const double *shift)
{
    if (L->mass)
        load_mass_f(L, jv, shift);
    else
        load_f(L, jv, shift, L->fbuf);
}

/* worst[w]: how far elimination shrank lane w's pivots, max_k |M_kk / u_kk|
 * with M_kk = shift − J_kk (the factors hold 1/u_kk in the diagonal slots).
 * A pivot shrunk by a factor r carries a relative error of about ε·r. */
#define DEFINE_SHRINK(T, SFX)                                                          \
    static void pivot_shrink##SFX(const ode_lin *L, const T *fac, double *worst)       \
    {                                                                                  \
        const int W = L->W;                                                            \
        for (int w = 0; w < W; w++) worst[w] = 0;                                      \
        for (int k = 0; k < L->n; k++) {                                               \
            const T *inv = fac + (size_t)L->dslot[k] * W;                              \
            const double *jk = L->jdiag[k] >= 0 ? L->jv + (size_t)L->jdiag[k] * W : NULL; \
            for (int w = 0; w < W; w++) {                                              \
                double m = (L->mdiag ? L->shift[w] * L->mdiag[k] : L->shift[w]) - (jk ? jk[w] : 0.0); \
                worst[w] = ode_max(worst[w], fabs(m * (double)inv[w]));                \
            }                                                                          \
        }                                                                              \
    }
DEFINE_SHRINK(double, _d)
DEFINE_SHRINK(float, _f)

/* exact[w] for the lanes in `among` whose double factor (in buf) lost its
 * pivots. */
static void mark_exact_lanes(ode_lin *L, const unsigned char *among)
{
    double worst[ODE_WMAX];
    pivot_shrink_d(L, L->buf, worst);
    for (int w = 0; w < L->W; w++) L->exact[w] = among[w] && worst[w] > 1.0 / ODE_LIN_PIVOT_SHRINK;
}

/* The double-double factors of the exact lanes; their pivots decide bad[w]. */
static sv_status factor_exact_lanes(ode_lin *L, unsigned char *bad)
{
    sv_status st = SV_OK;
    for (int w = 0; w < L->W && st == SV_OK; w++)
        if (L->exact[w]) st = ode_lin_dd_factor(L->dd, w, L->jv, L->shift[w], &bad[w]);
    return st;
}

sv_status ode_lin_factor_exact(ode_lin *L, const unsigned char *exact, const double *jv, const double *shift,
                               unsigned char *bad)
{
    L->jv = jv;
    L->shift = shift;
    memcpy(L->exact, exact, sizeof(unsigned char) * (size_t)L->W);
    return factor_exact_lanes(L, bad);
}

void ode_lin_solve_exact(const ode_lin *L, const double *b, double *x)
{
    for (int w = 0; w < L->W; w++)
        if (L->exact[w]) ode_lin_dd_solve(L->dd, w, b, x);
}

void ode_lin_load(ode_lin *L, const double *jv, const double *shift)
{
    L->jv = jv;
    L->shift = shift;
    /* Single mode loads only the float buffer: the double M is built from
     * J (jv, the caller's copy) only if some lane's refinement stagnates. */
    if (L->single) {
        load_single(L, jv, shift);
    } else {
        load_double(L, jv, shift);
    }
}

int ode_lin_lane_exact(const ode_lin *L, int w) { return L->exact[w]; }

sv_status ode_lin_factor(ode_lin *L, const unsigned char *mask, unsigned char *bad)
{
    unsigned char b[ODE_WMAX] = {0};
    sv_status st = SV_OK;
    L->dfactored = 0;
    memset(L->use_double, 0, sizeof L->use_double);
    if (L->dense) {
        ode_dense_small_factor(L->n, L->W, L->buf, b);
    } else {
        st = L->single ? sv_sparse_lu_factor_batch_f32(L->lu, L->W, L->fbuf, L->flags)
                       : sv_sparse_lu_factor_batch(L->lu, L->W, L->buf, L->flags);
        if (st == SV_OK)
            for (int w = 0; w < L->W; w++) b[w] = L->flags[w] != 0;
    }
    for (int w = 0; w < L->W; w++) bad[w] = mask[w] && b[w];
    memset(L->exact, 0, sizeof L->exact);
    if (st != SV_OK) return st;
    if (L->single) {
        /* A float pivot shrunk to its own rounding level says nothing about
         * the double one: such lanes' double factor is looked at (and kept
         * for solve_double). Refinement alone cannot tell: its double
         * residual is as blind as the double factor. */
        unsigned char suspect[ODE_WMAX];
        double worst[ODE_WMAX];
        int any = 0;
        pivot_shrink_f(L, L->fbuf, worst);
        for (int w = 0; w < L->W; w++) any |= suspect[w] = mask[w] && worst[w] > ODE_LIN_FLOAT_NOISE;
        if (!any) return SV_OK;
        load_double(L, L->jv, L->shift);
        st = sv_sparse_lu_factor_batch(L->lu, L->W, L->buf, L->flags);
        if (st != SV_OK) return st;
        L->dfactored = 1;
        mark_exact_lanes(L, suspect);
    } else {
        mark_exact_lanes(L, mask);
    }
    return factor_exact_lanes(L, bad);
}

/* x = M̃⁻¹ x with the factor in use (float factor: x rounded to float). */
static sv_status solve_raw(ode_lin *L, double *x)
{
    if (L->dense) {
        ode_dense_small_solve(L->n, L->W, L->buf, x);
        return SV_OK;
    }
    if (!L->single) return sv_sparse_lu_solve_batch(L->lu, L->W, L->buf, x, x, L->work);
    size_t nw = (size_t)L->n * L->W;
    for (size_t q = 0; q < nw; q++) L->fx[q] = (float)x[q];
    sv_status st = sv_sparse_lu_solve_batch_f32(L->lu, L->W, L->fbuf, L->fx, L->fx, L->fwork);
    for (size_t q = 0; q < nw; q++) x[q] = L->fx[q];
    return st;
}

/* x = M̃⁻¹ b with the factor in use: the double engine reads b itself,
 * the others solve a copy in place. */
static sv_status solve_from(ode_lin *L, const double *b, double *x)
{
    if (!L->dense && !L->single) return sv_sparse_lu_solve_batch(L->lu, L->W, L->buf, b, x, L->work);
    if (x != b) memcpy(x, b, sizeof(double) * (size_t)L->n * L->W);
    return solve_raw(L, x);
}

/* r = b − M x in double, M = shift·I − J (or shift·M − J) from the
 * caller's J. */
static void residual(ode_lin *L, const double *jv, const double *shift, const double *b, const double *x)
{
    const int n = L->n, W = L->W;
    const int *rp = L->P->rowptr, *ci = L->P->colind;
    const ode_mass *m = L->mass;
    for (int i = 0; i < n; i++) {
        double *ri = L->r + (size_t)i * W;
        const double *bi = b + (size_t)i * W, *xi = x + (size_t)i * W;
        if (m) {
            for (int w = 0; w < W; w++) ri[w] = bi[w];
            for (int e = m->rowptr[i]; e < m->rowptr[i + 1]; e++) {
                const double mv = m->val[e], *xj = x + (size_t)m->colind[e] * W;
                for (int w = 0; w < W; w++) ri[w] -= shift[w] * (mv * xj[w]);
            }
        } else {
            for (int w = 0; w < W; w++) ri[w] = bi[w] - shift[w] * xi[w];
        }
        for (int e = rp[i]; e < rp[i + 1]; e++) {
            const double *je = jv + (size_t)e * W, *xj = x + (size_t)ci[e] * W;
            for (int w = 0; w < W; w++) ri[w] += je[w] * xj[w];
        }
    }
}

/* Refinement: r = b − M x, x += M̃⁻¹ r, per lane until the correction is at
 * rounding level. The residual needs J in double, which the LU buffer no
 * longer holds (it holds the float factor): this is why the stepper keeps
 * its own copy of J (jv), which it also needs to rebuild M with a new shift
 * after a rejected step without a new Jacobian. A lane whose refinement
 * stagnates (M too ill-conditioned for a float factor: κ(M)·2⁻²⁴ ≳ 1) is
 * marked for the double factor. Every decision is the lane's own, so its
 * result does not depend on its batch-mates. */
static sv_status refine(ode_lin *L, const double *jv, const double *shift, const double *b, double *x, int *sweeps)
{
    const int n = L->n, W = L->W;
    unsigned char go[ODE_WMAX];
    double prev[ODE_WMAX];
    for (int w = 0; w < W; w++) {
        go[w] = !L->use_double[w] && !L->exact[w]; /* exact lanes: lin_dd.c's solution below */
        prev[w] = INFINITY;
    }
    *sweeps = 0;
    for (int it = 0; it < 5; it++) {
        int any = 0;
        for (int w = 0; w < W; w++) any |= go[w];
        if (!any) break;
        residual(L, jv, shift, b, x);
        sv_status st = solve_raw(L, L->r);
        if (st != SV_OK) return st;
        ++*sweeps;
        for (int w = 0; w < W; w++) {
            if (!go[w]) continue;
            double dmax = 0, xmax = 0;
            for (int i = 0; i < n; i++) {
                double *xi = x + (size_t)i * W + w;
                double d = L->r[(size_t)i * W + w];
                *xi += d;
                dmax = ode_max(dmax, fabs(d));
                xmax = ode_max(xmax, fabs(*xi));
            }
            if (dmax <= 4 * DBL_EPSILON * xmax) {
                go[w] = 0; /* converged */
            } else if (!(dmax < 0.25 * prev[w]) || it == 4) {
                go[w] = 0; /* stagnating: this lane needs the double factor */
                L->use_double[w] = 1;
            }
            prev[w] = dmax;
        }
    }
    return SV_OK;
}

/* The lanes marked use_double take x from the double factor of this step's
 * M (built from the caller's J and shifts, the arrays ode_lin_load had, and
 * factored once per step). */
static sv_status solve_double(ode_lin *L, const double *jv, const double *shift, const double *b, double *x)
{
    const int n = L->n, W = L->W;
    sv_status st = SV_OK;
    if (!L->dfactored) {
        load_double(L, jv, shift);
        st = sv_sparse_lu_factor_batch(L->lu, W, L->buf, L->flags);
        if (st != SV_OK) return st;
        L->dfactored = 1;
    }
    memcpy(L->dx, b, sizeof(double) * (size_t)n * W);
    st = sv_sparse_lu_solve_batch(L->lu, W, L->buf, L->dx, L->dx, L->work);
    if (st != SV_OK) return st;
    for (int i = 0; i < n; i++)
        for (int w = 0; w < W; w++)
            if (L->use_double[w]) x[(size_t)i * W + w] = L->dx[(size_t)i * W + w];
    return SV_OK;
}

sv_status ode_lin_solve(ode_lin *L, const double *jv, const double *shift, const double *b, double *x, int *sweeps)
{
    size_t nw = (size_t)L->n * L->W;
    *sweeps = 0;
    int anye = 0;
    for (int w = 0; w < L->W; w++) anye |= L->exact[w];
    const double *bx = b; /* b for the double-double lanes: x may alias b */
    if (x == b && anye) {
        memcpy(L->xdd, b, sizeof(double) * nw);
        bx = L->xdd;
    }
    sv_status st = solve_from(L, b, x);
    if (st == SV_OK && L->single) {
        st = refine(L, jv, shift, b, x, sweeps);
        int anyd = 0;
        for (int w = 0; w < L->W; w++) anyd |= L->use_double[w];
        if (st == SV_OK && anyd) st = solve_double(L, jv, shift, b, x);
    }
    if (anye) ode_lin_solve_exact(L, bx, x);
    return st;
}

sv_status ode_lin_solve_multi(ode_lin *L, const double *jv, const double *shift, int nrhs, const double *b, double *x,
                              double *work, int *sweeps)
{
    int anye = 0;
    for (int w = 0; w < L->W; w++) anye |= L->exact[w];
    *sweeps = 0;
    if (!L->dense && !L->single && !anye) return sv_sparse_lu_solve_batch_multi(L->lu, L->W, nrhs, L->buf, b, x, work);
    /* one at a time: refinement and the double-double lanes work per solve */
    const size_t nw = (size_t)L->n * L->W;
    sv_status st = SV_OK;
    for (int r = 0; r < nrhs && st == SV_OK; r++) {
        int sw = 0;
        st = ode_lin_solve(L, jv, shift, b + r * nw, x + r * nw, &sw);
        *sweeps += sw;
    }
    return st;
}
