/* The GPU exact solve (sv_gpu_exact_deriv): form and factorise on the
 * device, refine the solution and its derivatives with the sweep's block
 * refinement (src/sweep/refine_block.c, the CPU's own) on the device's
 * products and solves, fall back to the CPU double path when that does not
 * converge. See solver.c for the scheme. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpu_internal.h"
#include "solver_internal.h"

/* The device's products and solves for the sweep's block refinement
 * (src/sweep/refine_block.c, reached through model_view.c). */
typedef struct dev_ops {
    sv_gpu_solver *s;
    int n;
    float complex *fv; /* n × (columns of the widest solve) */
} dev_ops;

static sv_status dev_products(void *user, int ncols, const double *xs, double *ts)
{
    dev_ops *o = user;
    return o->s->b->products(o->s->b, o->s->rep.residual, ncols, xs, ts);
}

/* v ← Z⁻¹·v with the device's single-precision factors; each column scaled
 * to unit size before rounding, so small residuals keep their digits. */
static sv_status dev_solve(void *user, int ncols, double complex *v, int ldv)
{
    dev_ops *o = user;
    int n = o->n;
    double scale[ncols];
    for (int c = 0; c < ncols; c++) {
        double s = 0;
        for (int i = 0; i < n; i++) s = fmax(s, cabs(v[(size_t)c * ldv + i]));
        scale[c] = s > 0 && isfinite(s) ? s : 1;
        for (int i = 0; i < n; i++) o->fv[(size_t)c * n + i] = (float complex)(v[(size_t)c * ldv + i] / scale[c]);
    }
    sv_status st = o->s->b->solve(o->s->b, ncols, o->fv);
    if (st) return st;
    for (int c = 0; c < ncols; c++)
        for (int i = 0; i < n; i++) v[(size_t)c * ldv + i] = (double complex)o->fv[(size_t)c * n + i] * scale[c];
    return SV_OK;
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
    double complex c[nt];
    sv_status st = sv_gpu_model_coefs(m, freq, c);
    if (st) return st;
    dev_ops ops = {.s = s, .n = n};
    ops.fv = sv_alloc(ctx, sizeof(float complex) * (size_t)n * (size_t)p * (size_t)(nderiv + 1), "GPU solve vectors");
    if (!ops.fv) return sv_last_status();

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
        st = sv_gpu_model_refine_block(ctx, m, freq, nderiv, dev_products, dev_solve, &ops, s->tol,
                                       s->opt.max_iterations ? s->opt.max_iterations : GPU_MAXIT, x, ldx, dx, lddx,
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
    s->rep.device_solves++;
    s->rep.seconds_device += sv_time_now() - t0;
    if (info) {
        memset(info, 0, sizeof(*info));
        info->iterations = its;
        info->backward_error = berr;
        info->seconds = sv_time_now() - t0;
    }
out:
    sv_free(ctx, ops.fv);
    return st;
}
