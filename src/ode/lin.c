/* The linear solver behind Rodas5P: M = shift·I − J for W lanes at once,
 * factored without pivoting (M is dominated by its diagonal for the step
 * sizes a stiff solver takes; a zero or non-finite pivot is reported per
 * lane and the stepper retries that lane with a smaller step, which makes
 * the diagonal larger).
 *
 * Two back ends behind one interface:
 *   lane   — the lane LU of lanelu.c (natural order, exact fill, W lanes at
 *            once): for the small systems of ensembles a W-lane loop
 *            vectorises across trajectories, which LAPACK's getrf or KLU
 *            (one matrix at a time) cannot do;
 *   sparse — the sparse engine (include/solvent/sparse.h) for larger
 *            patterns (see lin_sparse.c).
 * Single precision: the factor is computed in float and every solve is
 * refined against the double M (residual in double) until the correction
 * stops shrinking, so stage solutions carry double accuracy and Rodas5P
 * keeps its order. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "lanelu.h"
#include "lin_internal.h"

ode_lin *ode_lin_create(sv_ctx *ctx, const sv_ode_problem *P, int W, int single)
{
    ode_lin *L = sv_calloc(ctx, 1, sizeof *L, "ode linear solver");
    if (!L) return NULL;
    L->n = P->n;
    L->W = W;
    L->nnz = P->nnz;
    L->single = single;
    L->P = P;
    /* Back end: the lane LU in natural order unless the sparse engine's AMD
     * ordering saves a good share of the factorisation work (grids and
     * other patterns with fill), or the natural order is out of reach. */
    lane_lu *nat = NULL;
    const long long cap = (long long)1 << 28;
    sv_status nst = lane_lu_analyse(ctx, P->n, P->rowptr, P->colind, NULL, cap, &nat);
    sv_clear_error();
    int use_sparse = 0;
    if (P->n > 1 && ode_lin_sparse_init(ctx, L) == SV_OK) {
        long long su = ode_lin_sparse_updates(L);
        use_sparse = nst != SV_OK || (double)nat->nupd > 1.5 * (double)su + 64;
        if (!use_sparse) {
            ode_lin_sparse_free(ctx, L);
            sv_free(ctx, L->eslot);
            sv_free(ctx, L->dslot);
            L->eslot = L->dslot = NULL;
        }
    }
    sv_clear_error();
    if (use_sparse) {
        lane_lu_destroy(ctx, nat);
    } else {
        if (nst != SV_OK) {
            sv_error(SV_ERR_UNSUPPORTED, "ode: no linear solver for this pattern (n = %d)", P->n);
            goto fail;
        }
        L->kind = ODE_LIN_DENSE;
        L->llu = nat;
        L->nslots = nat->nslots;
        L->eslot = sv_alloc(ctx, sizeof(int) * (size_t)(P->nnz ? P->nnz : 1), "ode linear solver");
        L->dslot = sv_alloc(ctx, sizeof(int) * (size_t)P->n, "ode linear solver");
        if (!L->eslot || !L->dslot) goto fail;
        for (int e = 0; e < P->nnz; e++) L->eslot[e] = lane_lu_slot(L->llu, P->erow[e], P->colind[e]);
        for (int i = 0; i < P->n; i++) L->dslot[i] = lane_lu_slot(L->llu, i, i);
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
    ode_lin_sparse_free(ctx, L);
    lane_lu_destroy(ctx, L->llu);
    sv_free(ctx, L->eslot);
    sv_free(ctx, L->dslot);
    sv_free(ctx, L->buf);
    sv_free(ctx, L->r);
    sv_free(ctx, L->fbuf);
    sv_free(ctx, L->fx);
    sv_free(ctx, L);
}

const char *ode_lin_kind(const ode_lin *L)
{
    return L->kind == ODE_LIN_DENSE ? "dense" : "sparse";
}

void ode_lin_load(ode_lin *L, const double *jv, const double *shift, const unsigned char *mask)
{
    (void)mask; /* every lane is loaded: inactive lanes hold stale but finite data */
    int W = L->W;
    double *buf = L->buf;
    memset(buf, 0, sizeof(double) * (size_t)L->nslots * W);
    for (int e = 0; e < L->nnz; e++) {
        double *b = buf + (size_t)L->eslot[e] * W;
        const double *v = jv + (size_t)e * W;
        for (int w = 0; w < W; w++) b[w] = -v[w];
    }
    for (int i = 0; i < L->n; i++) {
        double *b = buf + (size_t)L->dslot[i] * W;
        for (int w = 0; w < W; w++) b[w] += shift[w];
    }
    if (L->single) {
        size_t m = (size_t)L->nslots * W;
        for (size_t s = 0; s < m; s++) L->fbuf[s] = (float)buf[s];
    }
}

void ode_lin_factor(ode_lin *L, const unsigned char *mask, unsigned char *bad)
{
    unsigned char b[ODE_WMAX] = {0};
    L->dfactored = 0;
    memset(L->use_double, 0, sizeof L->use_double);
    if (L->kind == ODE_LIN_SPARSE) {
        ode_lin_sparse_factor(L, b);
    } else if (L->single) {
        lane_lu_factor_f(L->llu, L->W, L->fbuf, b);
    } else {
        lane_lu_factor_d(L->llu, L->W, L->buf, b);
    }
    for (int w = 0; w < L->W; w++) bad[w] = mask[w] && b[w];
}

/* The double factor of the loaded M (single mode keeps M in buf until a
 * lane needs it). */
static void dense_or_sparse_factor_double(ode_lin *L, unsigned char *bad)
{
    if (L->kind == ODE_LIN_SPARSE) ode_lin_sparse_factor_double(L, bad);
    else lane_lu_factor_d(L->llu, L->W, L->buf, bad);
}

static void solve_double(ode_lin *L, double *x)
{
    if (L->kind == ODE_LIN_SPARSE) ode_lin_sparse_solve_double(L, x);
    else lane_lu_solve_d(L->llu, L->W, L->buf, x, L->work);
}

static void solve_raw(ode_lin *L, double *x)
{
    size_t nw = (size_t)L->n * L->W;
    if (L->kind == ODE_LIN_SPARSE) {
        ode_lin_sparse_solve(L, x);
        return;
    }
    if (L->single) {
        for (size_t s = 0; s < nw; s++) L->fx[s] = (float)x[s];
        lane_lu_solve_f(L->llu, L->W, L->fbuf, L->fx, L->fwork);
        for (size_t s = 0; s < nw; s++) x[s] = L->fx[s];
    } else {
        lane_lu_solve_d(L->llu, L->W, L->buf, x, L->work);
    }
}

int ode_lin_solve(ode_lin *L, const double *jv, const double *shift, const double *b, double *x)
{
    int n = L->n, W = L->W;
    size_t nw = (size_t)n * W;
    if (x != b) memcpy(x, b, sizeof(double) * nw);
    if (!L->single) {
        solve_raw(L, x);
        return 0;
    }
    solve_raw(L, x);
    /* Refinement: r = b − M x in double, x += M̃⁻¹ r, per lane until the
     * correction is at rounding level. A lane whose refinement stagnates
     * (M too ill-conditioned for a float factor: κ(M)·2⁻²⁴ ≳ 1) switches to
     * the double factor for the rest of this step. Every decision is the
     * lane's own, so its result does not depend on its batch-mates. */
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
            unsigned char bad[ODE_WMAX] = {0};
            dense_or_sparse_factor_double(L, bad);
            L->dfactored = 1;
        }
        memcpy(L->dx, b, sizeof(double) * nw);
        solve_double(L, L->dx);
        for (int i = 0; i < n; i++)
            for (int w = 0; w < W; w++)
                if (L->use_double[w]) x[(size_t)i * W + w] = L->dx[(size_t)i * W + w];
    }
    return sweeps;
}
