/* The GPU exact solve (sv_gpu_exact_deriv): form and factorise on the
 * device, refine the solution and its derivatives with device residuals,
 * fall back to the CPU double path when that does not converge. See
 * solver.c for the scheme and src/sweep/exact_dense.c for the CPU original
 * it mirrors. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpu_internal.h"
#include "solver_internal.h"

/* Normwise backward error of x for Z·x = rhs, max over columns (∞-norms). */
static double berr_of(int n, int p, double znorm, const double complex *r, const double complex *x,
                      const double complex *rhs)
{
    double worst = 0;
    for (int c = 0; c < p; c++) {
        double rn = 0, xn = 0, bn = 0;
        for (int i = 0; i < n; i++) {
            rn = fmax(rn, cabs(r[(size_t)c * n + i]));
            xn = fmax(xn, cabs(x[(size_t)c * n + i]));
            bn = fmax(bn, cabs(rhs[(size_t)c * n + i]));
        }
        double den = znorm * xn + bn;
        double e = den > 0 ? rn / den : (rn > 0 ? INFINITY : 0);
        if (isnan(rn) || isnan(xn)) e = NAN;
        if (!(e <= worst)) worst = e;
    }
    return worst;
}

typedef struct work {
    int n, p, nd, w, nt;
    double complex *W, *R, *rhs, *best;
    double *xs, *ts;
    float complex *fv;
    const double complex *c;
    const double complex *d[SV_GPU_MAX_DERIV]; /* d[i−1] = c⁽ⁱ⁾ */
} work;

/* v ← Z⁻¹·v with the device's single-precision factors; each column scaled
 * to unit size before rounding, so small residuals keep their digits. */
static sv_status solve_scaled(sv_gpu_backend *b, work *k, int ncols, double complex *v)
{
    int n = k->n;
    double scale[ncols];
    for (int c = 0; c < ncols; c++) {
        double s = 0;
        for (int i = 0; i < n; i++) s = fmax(s, cabs(v[(size_t)c * n + i]));
        scale[c] = s > 0 && isfinite(s) ? s : 1;
        for (int i = 0; i < n; i++) k->fv[(size_t)c * n + i] = (float complex)(v[(size_t)c * n + i] / scale[c]);
    }
    sv_status st = b->solve(b, ncols, k->fv);
    if (st) return st;
    for (int c = 0; c < ncols; c++)
        for (int i = 0; i < n; i++) v[(size_t)c * n + i] = (double complex)k->fv[(size_t)c * n + i] * scale[c];
    return SV_OK;
}

/* y += Σ_k scale·coef_k·(A_k·W)[:, col] */
static void combine(const work *k, const double complex *coef, double scale, int col, double complex *y)
{
    int n = k->n, w = k->w;
    for (int t = 0; t < k->nt; t++) {
        double complex ck = scale * coef[t];
        if (ck == 0) continue;
        const double *re = k->ts + ((size_t)t * 2 * w + col) * n;
        const double *im = re + (size_t)w * n;
        for (int i = 0; i < n; i++) y[i] += ck * CMPLX(re[i], im[i]);
    }
}

static void residuals(work *k)
{
    int n = k->n, p = k->p;
    for (int g = 0; g <= k->nd; g++)
        for (int j = 0; j < p; j++) {
            int col = g * p + j;
            double complex *h = k->rhs + (size_t)col * n, *r = k->R + (size_t)col * n;
            if (g > 0) { /* −Σ_{i=1..g} C(g, i)·Z⁽ⁱ⁾·X⁽ᵍ⁻ⁱ⁾, as on the CPU (sweep_internal.h) */
                memset(h, 0, sizeof(double complex) * (size_t)n);
                double binom = 1;
                for (int i = 1; i <= g; i++) {
                    binom = binom * (g - i + 1) / i;
                    combine(k, k->d[i - 1], -binom, (g - i) * p + j, h);
                }
            }
            memcpy(r, h, sizeof(double complex) * (size_t)n);
            combine(k, k->c, -1.0, col, r);
        }
}

/* Refine on the device; *berr = the solution group's best backward error. */
static sv_status refine(sv_gpu_solver *s, work *k, double znorm, int maxit, double *berr, int *its)
{
    int n = k->n, p = k->p, w = k->w;
    size_t np = (size_t)n * p, nw = (size_t)n * w;
    sv_gpu_backend *b = s->b;
    const double *B = sv_gpu_model_rhs(s->m);
    for (size_t i = 0; i < np; i++) k->rhs[i] = k->W[i] = B[i];
    memset(k->W + np, 0, sizeof(double complex) * (nw - np));
    sv_status st = solve_scaled(b, k, p, k->W);
    double best = INFINITY, prev = INFINITY;
    int main_done = 0, extra = 0;
    *its = 0;
    while (!st) {
        for (int j = 0; j < w; j++)
            for (int i = 0; i < n; i++) {
                double complex v = k->W[(size_t)j * n + i];
                k->xs[(size_t)j * n + i] = creal(v);
                k->xs[(size_t)(w + j) * n + i] = cimag(v);
            }
        st = b->products(b, s->rep.residual, 2 * w, k->xs, k->ts);
        if (st) break;
        residuals(k);
        double be = berr_of(n, p, znorm, k->R, k->W, k->rhs);
        if (be < best) {
            best = be;
            memcpy(k->best, k->W, sizeof(double complex) * np);
        }
        if (!main_done && (!(be > s->tol) || !(be < 0.5 * prev))) main_done = 1;
        prev = fmin(prev, be);
        if (main_done && !(best <= s->tol)) break; /* stalled short: the caller falls back */
        int deriv_done = 1;
        for (int g = 1; g <= k->nd && deriv_done; g++) {
            size_t o = (size_t)g * np;
            if (!(berr_of(n, p, znorm, k->R + o, k->W + o, k->rhs + o) <= GPU_DERIV_TOL)) deriv_done = 0;
        }
        if (main_done) extra++;
        if ((main_done && (deriv_done || extra > GPU_DERIV_EXTRA)) || *its >= maxit) break;
        st = solve_scaled(b, k, w, k->R);
        if (st) break;
        for (size_t e = 0; e < nw; e++) k->W[e] += k->R[e];
        (*its)++;
    }
    if (!st && isfinite(best)) memcpy(k->W, k->best, sizeof(double complex) * np);
    *berr = best;
    return st;
}

/* The CPU: the double path (a fallback) or the default mixed path (a solver
 * that never got a device). */
static sv_status on_cpu(sv_ctx *ctx, const sv_sweep_model *m, double freq, sv_sweep_precision prec, double complex *x,
                        int ldx, int nderiv, double complex *dx, int lddx, sv_sweep_exact_info *info)
{
    return sv_sweep_solve_exact_deriv(ctx, m, freq, prec, 0.0, x, ldx, nderiv, dx, lddx, info);
}

sv_status sv_gpu_exact_deriv(void *solver, sv_ctx *ctx, const sv_sweep_model *m, double freq, double complex *x,
                             int ldx, int nderiv, double complex *dx, int lddx, sv_sweep_exact_info *info)
{
    sv_gpu_solver *s = solver;
    if (!s) return sv_error(SV_ERR_ARG, "GPU solver is NULL");
    if (m != s->m) return sv_error(SV_ERR_ARG, "the GPU solver was set up for another model");
    if (!x) return sv_error(SV_ERR_ARG, "x is NULL");
    if (ldx < s->n) return sv_error(SV_ERR_ARG, "ldx = %d: expected >= n = %d", ldx, s->n);
    if (nderiv < 0 || nderiv > SV_GPU_MAX_DERIV)
        return sv_error(SV_ERR_ARG, "nderiv = %d: expected 0 to %d", nderiv, SV_GPU_MAX_DERIV);
    if (nderiv > 0 && (!dx || lddx < s->n))
        return sv_error(SV_ERR_ARG, "dx = %p, lddx = %d: expected derivative blocks with lddx >= n = %d", (void *)dx,
                        lddx, s->n);
    if (!isfinite(freq)) return sv_error(SV_ERR_NONFINITE, "frequency %g is not finite", freq);
    s->rep.solves++;
    /* no device, or more derivatives than planned for (the device refines at
     * most SV_GPU_MAX_DERIV, the CPU three) */
    if (!s->b || nderiv > s->nderiv)
        return on_cpu(ctx, m, freq, SV_SWEEP_MIXED, x, ldx, nderiv, dx, lddx, info);

    double t0 = sv_time_now();
    int n = s->n, p = s->p, nt = s->nt;
    work k = {.n = n, .p = p, .nd = nderiv, .w = p * (nderiv + 1), .nt = nt};
    double complex c[nt], d[SV_GPU_MAX_DERIV][nt];
    k.c = c;
    for (int i = 0; i < SV_GPU_MAX_DERIV; i++) k.d[i] = d[i];
    sv_status st = sv_gpu_model_coefs(m, freq, c);
    if (!st && nderiv > 0) st = sv_gpu_model_coef_derivs(m, freq, d[0], d[1], nderiv >= 3 ? d[2] : NULL);
    if (st) return st;
    size_t nw = (size_t)n * k.w;
    k.W = sv_alloc(ctx, sizeof(double complex) * 4 * nw, "GPU refinement vectors");
    k.xs = sv_alloc(ctx, sizeof(double) * 2 * nw * (size_t)(nt + 1), "GPU refinement products");
    k.fv = sv_alloc(ctx, sizeof(float complex) * nw, "GPU solve vectors");
    if (!k.W || !k.xs || !k.fv) {
        st = sv_last_status();
        goto out;
    }
    k.R = k.W + nw;
    k.rhs = k.R + nw;
    k.best = k.rhs + nw;
    k.ts = k.xs + 2 * nw;

    double zbound = 0; /* Σ|c_k|·max|A_k| ≥ max|z_ij| */
    for (int t = 0; t < nt; t++) zbound += cabs(c[t]) * s->views[t].maxabs;
    double berr = INFINITY;
    int its = 0, singular = 0;
    st = s->b->form(s->b, c);
    if (!st) st = s->b->factor(s->b, GPU_PIVOT_SINGLE * zbound);
    if (st == SV_ERR_SINGULAR) {
        sv_log(ctx, SV_LOG_DEBUG, "f = %g: %s: CPU double fallback", freq, sv_last_error());
        sv_clear_error();
        singular = 1;
        st = SV_OK;
    } else if (!st) {
        st = refine(s, &k, sv_sweep_model_norm_inf(m, freq), s->opt.max_iterations ? s->opt.max_iterations : GPU_MAXIT,
                    &berr, &its);
    }
    int failed = 0;
    if (st) {
        /* the device failed (a CUDA or cuBLAS error, out of device memory):
         * this frequency and the rest of the sweep go to the CPU */
        snprintf(s->rep.note, sizeof s->rep.note, "device error at f = %g: %s: the CPU from there on", freq,
                 sv_last_error());
        sv_log(ctx, SV_LOG_WARN, "GPU solver: %s", s->rep.note);
        sv_clear_error();
        s->rep.device_errors++;
        s->b->destroy(s->b);
        s->b = NULL;
        failed = 1;
        st = SV_OK;
    }
    s->rep.iterations += its;
    if (singular || failed || !(berr <= s->tol)) {
        if (!singular && !failed)
            sv_log(ctx, SV_LOG_DEBUG, "f = %g: GPU refinement reached %.3g > %.3g: CPU double fallback", freq, berr,
                   s->tol);
        s->rep.cpu_fallbacks++;
        s->rep.singular_fallbacks += singular;
        s->rep.seconds_device += sv_time_now() - t0;
        sv_sweep_exact_info ci = {0};
        st = on_cpu(ctx, m, freq, SV_SWEEP_DOUBLE, x, ldx, nderiv, dx, lddx, &ci);
        if (!st && info) {
            *info = ci;
            info->fell_back = 1;
            info->iterations += its;
            info->seconds = sv_time_now() - t0;
        }
        goto out;
    }
    for (int j = 0; j < p; j++) memcpy(x + (size_t)j * ldx, k.W + (size_t)j * n, sizeof(double complex) * (size_t)n);
    for (int g = 1; g <= nderiv; g++)
        for (int j = 0; j < p; j++)
            memcpy(dx + (size_t)(g - 1) * lddx * p + (size_t)j * lddx, k.W + ((size_t)g * p + j) * n,
                   sizeof(double complex) * (size_t)n);
    s->rep.device_solves++;
    s->rep.seconds_device += sv_time_now() - t0;
    if (info) {
        memset(info, 0, sizeof(*info));
        info->iterations = its;
        info->backward_error = berr;
        info->seconds = sv_time_now() - t0;
    }
out:
    sv_free(ctx, k.W);
    sv_free(ctx, k.xs);
    sv_free(ctx, k.fv);
    return st;
}
