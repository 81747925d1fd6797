/* Stage 1 of the refinement engine: the groups refined together as one
 * block.
 *
 * The columns are W = [W_0, W_1, …] (nrhs each), the solutions of the block
 * lower-triangular system Z·W_0 = B, Z·W_g = F_g(W_0, …, W_{g−1}). Every
 * step takes all residuals from one call of ops->residuals (the sweep
 * computes the products of its terms with W once and combines them for every
 * group), then corrects all columns with one solve with the factors (block
 * Jacobi: group g lags group 0 by g steps). Refinement is memory-bound, each
 * pass reads the terms or the factors, and a pass over many columns costs
 * little more than one over a few: refining the groups together takes about
 * a quarter of the passes of refining them one after the other
 * (docs/sweep.md).
 *
 * Group 0 stops at its tolerance, after max_iterations steps, or when a step
 * no longer gains a factor 2 (the rounding floor of the residual); groups ≥
 * 1 at group_tolerance or group_extra steps after group 0, whichever comes
 * first. A group 0 that stalls above accept ends the loop at once (the
 * caller falls back). */
#include <math.h>
#include <string.h>

#include "refine_internal.h"

size_t sv_dense_refine_block_bytes(int n, int nrhs, int ngroups)
{
    size_t np = (size_t)n * (size_t)nrhs, nw = np * (size_t)ngroups;
    return sizeof(double complex) * (3 * nw + np);
}

/* Whether every group ≥ 1 has reached its tolerance. */
static int groups_done(const sv_dense_refine_ops *ops, int ngroups, double tol, const double complex *R,
                       const double complex *W, const double complex *rhs)
{
    int n = ops->n, p = ops->nrhs;
    size_t np = (size_t)n * (size_t)p;
    for (int g = 1; g < ngroups; g++) {
        size_t o = (size_t)g * np;
        if (!(sv_dense_backward_error_residual(n, p, ops->norm_inf, R + o, n, W + o, n, rhs + o, n, NULL) <= tol))
            return 0;
    }
    return 1;
}

/* Group 0's best iterate to x, the other groups to dx. */
static void block_store(const sv_dense_refine_ops *ops, int ngroups, const double complex *W, double complex *x,
                        int ldx, double complex *dx, int lddx)
{
    int n = ops->n, p = ops->nrhs;
    for (int j = 0; j < p; j++) memcpy(x + (size_t)j * ldx, W + (size_t)j * n, sizeof(double complex) * (size_t)n);
    for (int g = 1; g < ngroups; g++)
        for (int j = 0; j < p; j++)
            memcpy(dx + (size_t)(g - 1) * lddx * p + (size_t)j * lddx, W + ((size_t)g * p + j) * n,
                   sizeof(double complex) * (size_t)n);
}

sv_status sv_dense_refine_block(sv_ctx *ctx, const sv_dense_refine_ops *ops, int ngroups,
                                const sv_dense_refine_params *p, const double complex *b, double complex *x, int ldx,
                                double complex *dx, int lddx, double *berr, int *its)
{
    int n = ops->n, nrhs = ops->nrhs, w = nrhs * ngroups;
    size_t np = (size_t)n * (size_t)nrhs, nw = np * (size_t)ngroups;
    double complex *W = sv_alloc(ctx, sv_dense_refine_block_bytes(n, nrhs, ngroups), "refinement vectors");
    if (!W) return sv_last_status();
    double complex *R = W + nw, *rhs = R + nw, *best = rhs + nw;
    memcpy(rhs, b, sizeof(double complex) * np);
    memcpy(W, b, sizeof(double complex) * np);
    memset(W + np, 0, sizeof(double complex) * (nw - np)); /* groups ≥ 1: first correction next step */
    sv_status st = ops->precond(ops->user, nrhs, W, n);
    double best_e = INFINITY, prev = INFINITY;
    int main_done = 0, extra = 0;
    *its = 0;
    while (!st) {
        st = ops->residuals(ops->user, ngroups, W, rhs, R);
        if (st) break;
        double be = sv_dense_backward_error_residual(n, nrhs, ops->norm_inf, R, n, W, n, rhs, n, NULL);
        if (be < best_e) {
            best_e = be;
            memcpy(best, W, sizeof(double complex) * np);
        }
        /* group 0: converged, or at its rounding floor */
        if (!main_done && (!(be > p->tolerance) || !(be < 0.5 * prev))) main_done = 1;
        prev = fmin(prev, be);
        if (main_done && !(best_e <= p->accept)) break; /* stalled short: the caller falls back */
        int rest_done = groups_done(ops, ngroups, p->group_tolerance, R, W, rhs);
        if (main_done) extra++;
        if ((main_done && (rest_done || extra > p->group_extra)) || *its >= p->max_iterations) break;
        st = ops->precond(ops->user, w, R, n);
        if (st) break;
        for (size_t e = 0; e < nw; e++) W[e] += R[e];
        (*its)++;
        st = sv_progress(ctx, "refinement", (double)*its / p->max_iterations);
    }
    if (!st) {
        if (isfinite(best_e)) memcpy(W, best, sizeof(double complex) * np);
        block_store(ops, ngroups, W, x, ldx, dx, lddx);
    }
    *berr = best_e;
    sv_free(ctx, W);
    return st;
}
