/* Block refinement of an exact solve: the solution and its frequency
 * derivatives refined together with residuals computed in double from the
 * products of the terms. Shared by the CPU's exact solves (exact_dense.c:
 * products from the packed terms, solves with the dense engine's single
 * factors) and the GPU back end (src/gpu/refine.c: both on the device), so
 * the scheme and its tolerances live in one place. */
#include <math.h>
#include <string.h>

#include "sweep_internal.h"

/* Normwise backward error of x for Z·x = rhs, max over columns (∞-norms). */
static double berr_of(int n, int p, double znorm, const double complex *r, const double complex *x, int ldx,
                      const double complex *rhs)
{
    double worst = 0;
    for (int c = 0; c < p; c++) {
        double rn = 0, xn = 0, bn = 0;
        for (int i = 0; i < n; i++) {
            rn = fmax(rn, cabs(r[(size_t)c * n + i]));
            xn = fmax(xn, cabs(x[(size_t)c * ldx + i]));
            bn = fmax(bn, cabs(rhs[(size_t)c * n + i]));
        }
        double den = znorm * xn + bn;
        double e = den > 0 ? rn / den : (rn > 0 ? INFINITY : 0);
        if (isnan(rn) || isnan(xn)) e = NAN;
        if (!(e <= worst)) worst = e;
    }
    return worst;
}

/* Solve the solution and its frequency derivatives together and refine
 * them as one block, with residuals computed in double from the terms.
 *
 * The columns are W = [X, X', X'', …] (p each, nd + 1 groups), the solutions
 * of the block lower-triangular system
 *     Z·X = B,   Z·X' = −Z'·X,   Z·X'' = −(Z''·X + 2·Z'·X'),   …
 * Every step computes the products A_k·W once for all columns (one pass
 * over each term) and takes every residual from them: R0 = B − Z·X,
 * R1 = −Z'·X − Z·X', R2 = −Z''·X − 2·Z'·X' − Z·X'' (Z' and Z'' by
 * combining the same products with the coefficients' derivatives), then
 * corrects all columns with one solve with the factors (block Jacobi:
 * derivative group g lags the solution by g steps). Why: refinement is memory-bound, each pass reads
 * the 8·N² bytes of the packed terms or the 4·N² of the single factors, and
 * a pass over 6 columns costs about what a pass over 2 does. Refining the
 * three groups one after the other (as before) took about 24 passes per
 * exact solve at 2042 unknowns, 5 ms each, against 0.055 s for the
 * factorisation; together they take about 6.
 *
 * The solution column group stops at its tolerance tol, after maxit steps,
 * or when a step no longer gains a factor 2 (the rounding floor of the
 * residual); the derivative groups, which only orient basis directions,
 * stop at SWEEP_DERIV_TOL or SWEEP_DERIV_EXTRA steps after the solution
 * group, whichever comes first. A solution group that stalls above accept
 * ends the loop at once (the caller falls back to double). X keeps the solution's best iterate; *berr is its backward
 * error (normwise, ‖Z‖ bounded by Σ|c_k|·‖A_k‖). */

typedef struct block {
    int n, p, nd, w;     /* order, ports, derivative groups, columns w = p·(nd + 1) */
    double complex *c;   /* coefficients */
    double complex *d[SV_SWEEP_MAX_DERIV]; /* their derivatives d[i−1] = c⁽ⁱ⁾ */
    double *xs, *ts;     /* real parts | imaginary parts of W; per-term products */
} block;

/* ts_k = A_k·[Re W, Im W] for every term, through the caller's products. */
static sv_status block_products(const sv_sweep_refine_ops *ops, block *B, const double complex *W)
{
    int n = B->n, w = B->w;
    for (int j = 0; j < w; j++)
        for (int i = 0; i < n; i++) {
            double complex v = W[(size_t)j * n + i];
            B->xs[(size_t)j * n + i] = creal(v);
            B->xs[(size_t)(w + j) * n + i] = cimag(v);
        }
    return ops->products(ops->user, 2 * w, B->xs, B->ts);
}

/* y (n) += Σ_k coef_k · (A_k·W)[:, col] */
static void block_combine(const sv_sweep_model *m, const block *B, const double complex *coef, double scale,
                          int col, double complex *y)
{
    int n = B->n, w = B->w;
    for (int k = 0; k < m->nterms; k++) {
        double complex ck = scale * coef[k];
        if (ck == 0) continue;
        const double *re = B->ts + (size_t)k * n * 2 * (size_t)w + (size_t)col * n;
        const double *im = re + (size_t)w * n;
        for (int i = 0; i < n; i++) y[i] += ck * CMPLX(re[i], im[i]);
    }
}

/* Residuals of all groups (R, n × w) and the right-hand sides of the
 * derivative groups (rhs, n × w; group 0 is B, set by the caller). */
static void block_residuals(const sv_sweep_model *m, const block *B, double complex *rhs, double complex *R)
{
    int n = B->n, p = B->p;
    for (int g = 0; g <= B->nd; g++)
        for (int j = 0; j < p; j++) {
            int col = g * p + j;
            double complex *h = rhs + (size_t)col * n, *r = R + (size_t)col * n;
            if (g > 0) { /* −Σ_{i=1..g} C(g, i)·Z⁽ⁱ⁾·X⁽ᵍ⁻ⁱ⁾ (sweep_internal.h) */
                memset(h, 0, sizeof(double complex) * (size_t)n);
                double binom = 1;
                for (int i = 1; i <= g; i++) {
                    binom = binom * (g - i + 1) / i;
                    block_combine(m, B, B->d[i - 1], -binom, (g - i) * p + j, h);
                }
            }
            memcpy(r, h, sizeof(double complex) * (size_t)n);
            block_combine(m, B, B->c, -1.0, col, r);
        }
}

sv_status sv_sweep_refine_block(sv_ctx *ctx, const sv_sweep_model *m, double freq, int nd,
                                const sv_sweep_refine_ops *ops, const double complex *b, double complex *x, int ldx,
                                double complex *dx, int lddx, double tol, double accept, int maxit, double *berr,
                                int *its)
{
    int n = m->n, p = m->nrhs, nt = m->nterms;
    block B = {.n = n, .p = p, .nd = nd, .w = p * (nd + 1)};
    double complex c[nt], d[SV_SWEEP_MAX_DERIV][nt];
    B.c = c;
    for (int i = 0; i < SV_SWEEP_MAX_DERIV; i++) B.d[i] = d[i];
    sv_status st = sv_sweep_coefs(m, freq, c);
    if (!st && nd > 0) st = sv_sweep_coef_derivs(m, freq, d[0], d[1], nd >= 3 ? d[2] : NULL);
    if (st) return st;
    double znorm = sv_sweep_model_norm_inf(m, freq);
    size_t nw = (size_t)n * (size_t)B.w, np = (size_t)n * (size_t)p;
    double complex *W = sv_alloc(ctx, sizeof(double complex) * (3 * nw + np), "refinement vectors");
    double *re = sv_alloc(ctx, sizeof(double) * 2 * nw * (size_t)(nt + 1), "refinement products");
    if (!W || !re) {
        st = sv_last_status();
        sv_free(ctx, W);
        sv_free(ctx, re);
        return st;
    }
    double complex *R = W + nw, *rhs = R + nw, *best = rhs + nw;
    B.xs = re;
    B.ts = re + 2 * nw;
    memcpy(rhs, b, sizeof(double complex) * np);
    memcpy(W, b, sizeof(double complex) * np);
    memset(W + np, 0, sizeof(double complex) * (nw - np)); /* derivatives: first correction next step */
    st = ops->solve(ops->user, p, W, n);
    double best_e = INFINITY, prev = INFINITY;
    int main_done = 0, extra = 0;
    *its = 0;
    while (!st) {
        st = block_products(ops, &B, W);
        if (st) break;
        block_residuals(m, &B, rhs, R);
        double be = berr_of(n, p, znorm, R, W, n, rhs);
        if (be < best_e) {
            best_e = be;
            memcpy(best, W, sizeof(double complex) * np);
        }
        /* the solution group: converged, or at its rounding floor */
        if (!main_done && (!(be > tol) || !(be < 0.5 * prev))) main_done = 1;
        prev = fmin(prev, be);
        if (main_done && !(best_e <= accept)) break; /* stalled short: the caller falls back */
        int deriv_done = 1;
        for (int g = 1; g <= nd && deriv_done; g++) {
            size_t o = (size_t)g * np;
                if (!(berr_of(n, p, znorm, R + o, W + o, n, rhs + o) <= SWEEP_DERIV_TOL)) deriv_done = 0;
        }
        if (main_done) extra++;
        if ((main_done && (deriv_done || extra > SWEEP_DERIV_EXTRA)) || *its >= maxit) break;
        st = ops->solve(ops->user, B.w, R, n);
        if (st) break;
        for (size_t e = 0; e < nw; e++) W[e] += R[e];
        (*its)++;
    }
    if (!st) {
        if (isfinite(best_e)) memcpy(W, best, sizeof(double complex) * np);
        for (int j = 0; j < p; j++) memcpy(x + (size_t)j * ldx, W + (size_t)j * n, sizeof(double complex) * (size_t)n);
        for (int g = 1; g <= nd; g++)
            for (int j = 0; j < p; j++)
                memcpy(dx + (size_t)(g - 1) * lddx * p + (size_t)j * lddx, W + ((size_t)g * p + j) * n,
                       sizeof(double complex) * (size_t)n);
    }
    *berr = best_e;
    sv_free(ctx, W);
    sv_free(ctx, re);
    return st;
}
