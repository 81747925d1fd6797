/* Stage 2 of the refinement engine: GMRES-based refinement (Carson &
 * Higham, "Accelerating the solution of linear systems by iterative
 * refinement in three precisions", SIAM J. Sci. Comput. 40 (2018) A817):
 * the correction equation Z·d = r is solved by GMRES preconditioned on the
 * right by the approximate (single-precision) factors, with the residual and
 * every product computed in double by the caller (ops->apply). Classical
 * refinement contracts the error by about u_single·κ(Z) per step and stalls
 * once that nears 1; GMRES only needs the preconditioned operator's
 * eigenvalues to cluster, which they still do there (the sweep's low
 * frequencies: docs/sweep.md).
 *
 * The columns of X are independent GMRES runs that share every pass: the
 * active columns' Krylov vectors are preconditioned together (one solve with
 * the factors) and multiplied by Z together (one call of apply), both
 * memory-bound, so p columns cost about what one does. Restarted flexible
 * GMRES(m) (Saad, SIAM J. Sci. Comput. 14 (1993) 461): the preconditioned
 * vectors z_k = M⁻¹·v_k are kept and the update is Σ z_k·y_k, because
 * factors applied in single precision to a vector rounded to single are not
 * one linear operator from step to step, and the standard variant's update
 * M⁻¹·(V·y) then disagrees with the products GMRES minimised over. Modified
 * Gram–Schmidt, Givens rotations. */
#include <math.h>
#include <string.h>

#include "refine_internal.h"

#define GMRES_M SV_DENSE_GMRES_M
#define GMRES_MIN_RTOL 1e-10 /* the most a cycle aims to reduce the residual by */

typedef struct gm {
    int n, p, m;
    double complex *V;  /* p blocks of n × (m + 1) */
    double complex *Zp; /* p blocks of n × m: the preconditioned vectors M⁻¹·v_k */
    double complex *H;  /* p blocks of (m + 1) × m, column-major */
    double complex *g, *cs, *sn; /* p blocks of m + 1 */
    double *beta, *colerr;
    int *steps, *active;
} gm;

static double complex *Vcol(const gm *G, int j, int k) { return G->V + ((size_t)j * (G->m + 1) + k) * G->n; }
static double complex *Zcol(const gm *G, int j, int k) { return G->Zp + ((size_t)j * G->m + k) * G->n; }
static double complex *Hcol(const gm *G, int j, int k) { return G->H + ((size_t)j * G->m + k) * (G->m + 1); }

size_t sv_dense_gmres_bytes(int n, int nrhs)
{
    size_t np = (size_t)n * (size_t)nrhs, P = (size_t)nrhs, M = GMRES_M, z = sizeof(double complex);
    return (2 * M + 3) * np * z + P * (M + 1) * (M + 3) * z + 2 * P * (sizeof(double) + sizeof(int));
}

sv_status sv_dense_refine_true_residual(const sv_dense_refine_ops *ops, const double complex *rhs,
                                        const double complex *x, int ldx, double complex *r)
{
    int n = ops->n, p = ops->nrhs;
    sv_status st = ops->apply(ops->user, p, x, ldx, r, n);
    if (st) return st;
    for (int j = 0; j < p; j++)
        for (int i = 0; i < n; i++) r[(size_t)j * n + i] = rhs[(size_t)j * n + i] - r[(size_t)j * n + i];
    return SV_OK;
}

/* Add the Krylov column w (= Z·M⁻¹·v_k) to column j's Arnoldi process;
 * returns 1 when the column is done (its estimate reached rtol·β). */
static int arnoldi_step(gm *G, int j, int k, const double complex *w, double rtol)
{
    int n = G->n, m1 = G->m + 1;
    double complex *vn = Vcol(G, j, k + 1), *hc = Hcol(G, j, k);
    double complex *g = G->g + (size_t)j * m1, *cs = G->cs + (size_t)j * m1, *sn = G->sn + (size_t)j * m1;
    memcpy(vn, w, sizeof(double complex) * (size_t)n);
    for (int i = 0; i <= k; i++) { /* modified Gram–Schmidt, Hermitian inner product */
        const double complex *vi = Vcol(G, j, i);
        double complex h = 0;
        for (int t = 0; t < n; t++) h += conj(vi[t]) * vn[t];
        hc[i] = h;
        for (int t = 0; t < n; t++) vn[t] -= h * vi[t];
    }
    double hn = 0;
    for (int t = 0; t < n; t++) hn += creal(vn[t]) * creal(vn[t]) + cimag(vn[t]) * cimag(vn[t]);
    hn = sqrt(hn);
    hc[k + 1] = hn;
    if (hn > 0)
        for (int t = 0; t < n; t++) vn[t] /= hn;
    for (int i = 0; i < k; i++) { /* earlier rotations, then a new one for row k + 1 */
        double complex a = hc[i], b = hc[i + 1];
        hc[i] = conj(cs[i]) * a + conj(sn[i]) * b;
        hc[i + 1] = -sn[i] * a + cs[i] * b;
    }
    double complex a = hc[k], b = hc[k + 1];
    double den = sqrt(creal(a * conj(a)) + creal(b * conj(b)));
    cs[k] = den == 0 ? 1 : a / den;
    sn[k] = den == 0 ? 0 : b / den;
    hc[k] = conj(cs[k]) * a + conj(sn[k]) * b;
    hc[k + 1] = 0;
    g[k + 1] = -sn[k] * g[k];
    g[k] = conj(cs[k]) * g[k];
    G->steps[j] = k + 1;
    return cabs(g[k + 1]) <= rtol * G->beta[j] || hn == 0 || !isfinite(hn);
}

/* x += Z·y with H·y = g (back substitution over column j's steps). */
static void arnoldi_update(const gm *G, int j, double complex *x)
{
    int n = G->n, m1 = G->m + 1, k = G->steps[j];
    double complex *g = G->g + (size_t)j * m1;
    for (int i = k - 1; i >= 0; i--) {
        double complex s = g[i];
        for (int c = i + 1; c < k; c++) s -= Hcol(G, j, c)[i] * g[c];
        double complex d = Hcol(G, j, i)[i];
        g[i] = d != 0 ? s / d : 0;
    }
    for (int i = 0; i < k; i++) {
        const double complex *zi = Zcol(G, j, i);
        for (int t = 0; t < n; t++) x[t] += zi[t] * g[i];
    }
}

/* Start a cycle: v_0 = r/β for every active column; returns how many are. */
static int cycle_start(gm *G, const double complex *R)
{
    int n = G->n, m1 = G->m + 1, na = 0;
    for (int j = 0; j < G->p; j++) {
        G->steps[j] = 0;
        if (!G->active[j]) continue;
        const double complex *r = R + (size_t)j * n;
        double b2 = 0;
        for (int i = 0; i < n; i++) b2 += creal(r[i]) * creal(r[i]) + cimag(r[i]) * cimag(r[i]);
        G->beta[j] = sqrt(b2);
        double complex *v0 = Vcol(G, j, 0);
        for (int i = 0; i < n; i++) v0[i] = r[i] / G->beta[j];
        double complex *g = G->g + (size_t)j * m1;
        memset(g, 0, sizeof(double complex) * (size_t)m1);
        g[0] = G->beta[j];
        na++;
    }
    return na;
}

/* One cycle of at most GMRES_M steps (and the total within max_steps) on
 * the active columns: their Krylov vectors through the preconditioner and Z
 * together, Zb and R as workspace. */
static sv_status cycle_run(sv_ctx *ctx, gm *G, const sv_dense_refine_ops *ops, int na, double rtol, int max_steps,
                           int *total, double complex *Zb, double complex *R)
{
    int n = G->n, p = G->p;
    for (int k = 0; k < GMRES_M && na > 0 && *total < max_steps; k++, (*total)++) {
        sv_status st = sv_progress(ctx, "GMRES refinement", (double)*total / max_steps);
        if (st) return st;
        int a = 0;
        for (int j = 0; j < p; j++)
            if (G->active[j]) memcpy(Zb + (size_t)a++ * n, Vcol(G, j, k), sizeof(double complex) * (size_t)n);
        st = ops->precond(ops->user, na, Zb, n);
        if (!st) st = ops->apply(ops->user, na, Zb, n, R, n); /* R is free until the next cycle */
        if (st) return st;
        a = 0;
        for (int j = 0; j < p; j++)
            if (G->active[j]) {
                memcpy(Zcol(G, j, k), Zb + (size_t)a * n, sizeof(double complex) * (size_t)n);
                if (arnoldi_step(G, j, k, R + (size_t)a++ * n, rtol)) G->active[j] = 0;
            }
        na = 0;
        for (int j = 0; j < p; j++) na += G->active[j];
    }
    return SV_OK;
}

sv_status sv_dense_gmres(sv_ctx *ctx, const sv_dense_refine_ops *ops, const double complex *rhs, double complex *x,
                         int ldx, double tol, int max_steps, double *berr, int *steps_out)
{
    int n = ops->n, p = ops->nrhs;
    sv_status st = SV_OK;
    gm G = {.n = n, .p = p, .m = GMRES_M};
    size_t np = (size_t)n * p, m1 = (size_t)GMRES_M + 1;
    G.V = sv_alloc(ctx, sizeof(double complex) * np * m1, "GMRES Krylov vectors");
    G.Zp = sv_alloc(ctx, sizeof(double complex) * np * GMRES_M, "GMRES preconditioned vectors");
    G.H = sv_alloc(ctx, sizeof(double complex) * (size_t)p * m1 * GMRES_M, "GMRES Hessenberg matrices");
    G.g = sv_alloc(ctx, sizeof(double complex) * (size_t)p * m1 * 3, "GMRES rotations");
    G.beta = sv_alloc(ctx, sizeof(double) * (size_t)p * 2, "GMRES norms");
    G.steps = sv_alloc(ctx, sizeof(int) * (size_t)p * 2, "GMRES steps");
    double complex *R = sv_alloc(ctx, sizeof(double complex) * np * 2, "GMRES residuals");
    if (!G.V || !G.Zp || !G.H || !G.g || !G.beta || !G.steps || !R) {
        st = sv_last_status();
        goto out;
    }
    G.cs = G.g + (size_t)p * m1;
    G.sn = G.cs + (size_t)p * m1;
    G.colerr = G.beta + p;
    G.active = G.steps + p;
    double complex *Zb = R + np; /* n × (active columns): vectors through the preconditioner */
    int total = 0;
    double prev = INFINITY;
    *berr = INFINITY;
    for (;;) {
        st = sv_dense_refine_true_residual(ops, rhs, x, ldx, R);
        if (st) break;
        double worst = sv_dense_backward_error_residual(n, p, ops->norm_inf, R, n, x, ldx, rhs, n, G.colerr);
        for (int j = 0; j < p; j++) G.active[j] = !(G.colerr[j] <= tol);
        *berr = worst;
        /* done, out of steps, or a cycle that no longer halves the error */
        if (!(worst > tol) || total >= max_steps || !(worst < 0.5 * prev) || isnan(worst)) break;
        prev = worst;
        /* A cycle aims for the reduction the target needs (with a margin
         * for the ∞-norm backward error against GMRES's 2-norm), not more. */
        double rtol = fmin(0.5, fmax(GMRES_MIN_RTOL, 0.1 * tol / worst));
        int na = cycle_start(&G, R);
        st = cycle_run(ctx, &G, ops, na, rtol, max_steps, &total, Zb, R);
        if (st) break;
        for (int j = 0; j < p; j++)
            if (G.steps[j] > 0) arnoldi_update(&G, j, x + (size_t)j * ldx);
    }
    *steps_out = total;
out:
    sv_free(ctx, G.V);
    sv_free(ctx, G.Zp);
    sv_free(ctx, G.H);
    sv_free(ctx, G.g);
    sv_free(ctx, G.beta);
    sv_free(ctx, G.steps);
    sv_free(ctx, R);
    return st;
}
