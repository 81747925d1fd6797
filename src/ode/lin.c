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
 * factored by the unrolled kernels of dense_small.c, 1.6–3.1× faster there
 * than the engine's table-driven kernels (figures in dense_small.c).
 *
 * Ordering: the natural order or AMD, whichever needs fewer factor updates
 * (natural on a tie: small chemical systems are often written in a good
 * order already, and AMD minimises fill only heuristically); natural is
 * tried only up to n = 256 (see analyse).
 *
 * Single precision: the factor is computed in float and every solve is
 * refined against the double M (residual in double) until the correction
 * stops shrinking, so stage solutions carry double accuracy and Rodas5P
 * keeps its order. A lane whose refinement stagnates falls back to a double
 * factor of the same M for the rest of the step. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ode_internal.h"
#include "solvent/sparse.h"

struct ode_lin {
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
    double *r, *dx, *work;
    float *fx, *fwork;
    int dfactored;  /* single mode: buf holds the double factor */
    int flags[ODE_WMAX];
    unsigned char use_double[ODE_WMAX]; /* single mode: lane fell back to double this step */
};

static sv_status analyse(sv_ctx *ctx, ode_lin *L)
{
    const sv_ode_problem *P = L->P;
    sv_sparse_lu *nat = NULL, *amd = NULL;
    sv_status st = sv_sparse_pattern_from_csr(ctx, P->n, P->rowptr, P->colind, &L->pat);
    if (st != SV_OK) return st;
    /* The natural order's analysis is cheap only for moderate n (its fill
     * on a 2D grid is large); beyond that AMD alone. */
    sv_status sn = P->n <= 256 ? sv_sparse_lu_analyse(ctx, L->pat, SV_SPARSE_ORDER_NATURAL, &nat) : SV_ERR_UNSUPPORTED;
    sv_status sa = sv_sparse_lu_analyse(ctx, L->pat, SV_SPARSE_ORDER_AMD, &amd);
    if (sn != SV_OK && sa != SV_OK) return sa;
    sv_clear_error();
    if (sn == SV_OK && (sa != SV_OK || sv_sparse_lu_updates(nat) <= sv_sparse_lu_updates(amd))) {
        L->lu = nat;
        sv_sparse_lu_destroy(amd);
    } else {
        L->lu = amd;
        sv_sparse_lu_destroy(nat);
    }
    L->nslots = sv_sparse_lu_nnz(L->lu);
    L->dslot = sv_sparse_lu_diag_slot(L->lu);
    L->eslot = sv_alloc(ctx, sizeof(int) * (size_t)(P->nnz ? P->nnz : 1), "ode linear solver");
    if (!L->eslot) return sv_last_status();
    const int *es = sv_sparse_lu_entry_slot(L->lu);
    for (int e = 0; e < P->nnz; e++) {
        int q = sv_sparse_pattern_find(L->pat, P->erow[e], P->colind[e]);
        if (q < 0)
            return sv_error(SV_ERR_INTERNAL, "ode: pattern entry (%d, %d) lost by the sparse engine", P->erow[e],
                            P->colind[e]);
        L->eslot[e] = es[q];
    }
    return SV_OK;
}

ode_lin *ode_lin_create(sv_ctx *ctx, const sv_ode_problem *P, int W, int single)
{
    ode_lin *L = sv_calloc(ctx, 1, sizeof *L, "ode linear solver");
    if (!L) return NULL;
    L->n = P->n;
    L->W = W;
    L->nnz = P->nnz;
    L->single = single;
    L->P = P;
    if (analyse(ctx, L) != SV_OK) goto fail;
    /* Tiny, (nearly) full factor in double: full storage and the unrolled
     * kernels (dense_small.c). A sparser tiny pattern stays with the engine,
     * whose work then shrinks with the pattern (HIRES, n = 8 with 28 slots,
     * W = 4: 59 ns per factor + solve in bench/results/sparse.jsonl, against
     * 217 ns for full n = 8 here). */
    if (!single && P->n >= 2 && P->n <= 8 && 4 * L->nslots >= 3 * P->n * P->n) {
        sv_sparse_lu_destroy(L->lu);
        sv_sparse_pattern_destroy(L->pat);
        L->lu = NULL;
        L->pat = NULL;
        sv_free(ctx, L->eslot);
        L->dense = 1;
        L->nslots = P->n * P->n;
        L->eslot = sv_alloc(ctx, sizeof(int) * (size_t)(P->nnz ? P->nnz : 1), "ode linear solver");
        if (!L->eslot) goto fail;
        for (int e = 0; e < P->nnz; e++) L->eslot[e] = P->erow[e] * P->n + P->colind[e];
        for (int i = 0; i < P->n; i++) L->ddiag[i] = i * P->n + i;
        L->dslot = L->ddiag;
    }
    size_t nsw = (size_t)L->nslots * W, nw = (size_t)L->n * W;
    L->buf = sv_alloc(ctx, sizeof(double) * nsw, "ode LU buffer");
    L->r = sv_alloc(ctx, sizeof(double) * nw * 3, "ode LU work");
    if (!L->buf || !L->r) goto fail;
    L->dx = L->r + nw;
    L->work = L->dx + nw;
    if (single) {
        L->fbuf = sv_alloc(ctx, sizeof(float) * nsw, "ode LU buffer (single)");
        L->fx = sv_alloc(ctx, sizeof(float) * nw * 2, "ode LU work (single)");
        if (!L->fbuf || !L->fx) goto fail;
        L->fwork = L->fx + nw;
    }
    return L;
fail:
    ode_lin_destroy(ctx, L);
    return NULL;
}

void ode_lin_destroy(sv_ctx *ctx, ode_lin *L)
{
    if (!L) return;
    sv_sparse_lu_destroy(L->lu);
    sv_sparse_pattern_destroy(L->pat);
    sv_free(ctx, L->eslot);
    sv_free(ctx, L->buf);
    sv_free(ctx, L->r);
    sv_free(ctx, L->fbuf);
    sv_free(ctx, L->fx);
    sv_free(ctx, L);
}

const char *ode_lin_kind(const ode_lin *L)
{
    return L->dense ? "dense (n <= 8)" : L->single ? "sparse engine, single-precision factor" : "sparse engine";
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

void ode_lin_load(ode_lin *L, const double *jv, const double *shift, const unsigned char *mask)
{
    (void)mask; /* every lane is loaded: inactive lanes hold stale but finite data */
    /* Single mode loads only the float buffer: the double M is built from
     * J (jv, the caller's copy) only if some lane's refinement stagnates. */
    if (L->single) {
        load_f(L, jv, shift, L->fbuf);
    } else {
        load_d(L, jv, shift, L->buf);
    }
}

int ode_lin_is_dense(const ode_lin *L) { return L->dense; }

sv_status ode_lin_compile(ode_lin *L, const char *cache_dir, const char *cc)
{
    return L->dense ? SV_OK : sv_sparse_lu_compile(L->lu, NULL, cache_dir, cc);
}

static void flags_to_bad(const ode_lin *L, unsigned char *bad)
{
    for (int w = 0; w < L->W; w++) bad[w] = L->flags[w] != 0;
}

void ode_lin_factor(ode_lin *L, const unsigned char *mask, unsigned char *bad)
{
    unsigned char b[ODE_WMAX] = {0};
    L->dfactored = 0;
    memset(L->use_double, 0, sizeof L->use_double);
    if (L->dense) {
        ode_dense_small_factor(L->n, L->W, L->buf, b);
    } else {
        if (L->single) sv_sparse_lu_factor_batch_f32(L->lu, L->W, L->fbuf, L->flags);
        else sv_sparse_lu_factor_batch(L->lu, L->W, L->buf, L->flags);
        flags_to_bad(L, b);
    }
    for (int w = 0; w < L->W; w++) bad[w] = mask[w] && b[w];
}

static void solve_raw(ode_lin *L, double *x)
{
    if (L->dense) {
        ode_dense_small_solve(L->n, L->W, L->buf, x);
    } else if (L->single) {
        size_t nw = (size_t)L->n * L->W;
        for (size_t q = 0; q < nw; q++) L->fx[q] = (float)x[q];
        sv_sparse_lu_solve_batch_f32(L->lu, L->W, L->fbuf, L->fx, L->fx, L->fwork);
        for (size_t q = 0; q < nw; q++) x[q] = L->fx[q];
    } else {
        sv_sparse_lu_solve_batch(L->lu, L->W, L->buf, x, x, L->work);
    }
}

int ode_lin_solve(ode_lin *L, const double *jv, const double *shift, const double *b, double *x)
{
    int n = L->n, W = L->W;
    size_t nw = (size_t)n * W;
    if (x != b) memcpy(x, b, sizeof(double) * nw);
    solve_raw(L, x);
    if (!L->single) return 0;
    /* Refinement: r = b − M x in double, x += M̃⁻¹ r, per lane until the
     * correction is at rounding level. The residual needs J in double,
     * which the LU buffer no longer holds (it holds the float factor): this
     * is why the stepper keeps its own copy of J (jv), which it also needs
     * to rebuild M with a new shift after a rejected step without a new
     * Jacobian. A lane whose refinement stagnates (M too ill-conditioned for
     * a float factor: κ(M)·2⁻²⁴ ≳ 1) switches to the double factor for the
     * rest of this step. Every decision is the lane's own, so its result
     * does not depend on its batch-mates. */
    unsigned char go[ODE_WMAX];
    double prev[ODE_WMAX];
    int anyd = 0;
    for (int w = 0; w < W; w++) {
        go[w] = !L->use_double[w];
        anyd |= L->use_double[w];
        prev[w] = INFINITY;
    }
    int sweeps = 0;
    const int *rp = L->P->rowptr, *ci = L->P->colind;
    for (int it = 0; it < 5; it++) {
        int any = 0;
        for (int w = 0; w < W; w++) any |= go[w];
        if (!any) break;
        for (int i = 0; i < n; i++) {
            double *ri = L->r + (size_t)i * W;
            const double *bi = b + (size_t)i * W, *xi = x + (size_t)i * W;
            for (int w = 0; w < W; w++) ri[w] = bi[w] - shift[w] * xi[w];
            for (int e = rp[i]; e < rp[i + 1]; e++) {
                const double *je = jv + (size_t)e * W, *xj = x + (size_t)ci[e] * W;
                for (int w = 0; w < W; w++) ri[w] += je[w] * xj[w];
            }
        }
        solve_raw(L, L->r);
        sweeps++;
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
                anyd = 1;
            }
            prev[w] = dmax;
        }
    }
    if (anyd) {
        if (!L->dfactored) {
            /* the double M of this step, from the caller's J and shifts
             * (the same arrays ode_lin_load was given) */
            load_d(L, jv, shift, L->buf);
            sv_sparse_lu_factor_batch(L->lu, W, L->buf, L->flags);
            L->dfactored = 1;
        }
        memcpy(L->dx, b, sizeof(double) * nw);
        sv_sparse_lu_solve_batch(L->lu, W, L->buf, L->dx, L->dx, L->work);
        for (int i = 0; i < n; i++)
            for (int w = 0; w < W; w++)
                if (L->use_double[w]) x[(size_t)i * W + w] = L->dx[(size_t)i * W + w];
    }
    return sweeps;
}
