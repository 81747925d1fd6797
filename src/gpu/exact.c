/* The GPU exact solver's operations (solvent/sweep_solver.h): Z(f) formed
 * and factorised on the device, the device's single-precision factors as
 * the preconditioner and its products of the terms (in double or
 * double-float) for the residuals. The sweep module's exact solve drives
 * them through the one refinement engine, fallback to the CPU's double
 * factorisation included (no GMRES stage: a device whose factors stall goes
 * to the CPU). Where the device cannot run (none, a device error earlier,
 * more derivatives than planned for) the CPU's mixed solver stands in. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpu_internal.h"
#include "solver_internal.h"

/* The device's single-precision solve, for sv_dense_solve_scaled. */
static sv_status dev_solve32(void *user, int nrhs, float complex *w)
{
    sv_gpu_solver *s = user;
    return s->b->solve(s->b, nrhs, w);
}

/* Form and factorise Z(f) on the device. */
static sv_status dev_setup(sv_gpu_solver *s, sv_ctx *ctx, double freq, int nderiv)
{
    double complex c[s->nt];
    sv_status st = sv_sweep_model_coefs(s->m, freq, c);
    if (st) return st;
    s->work = sv_alloc(ctx, sv_dense_solve_work_bytes(s->n, s->p * (nderiv + 1)), "GPU solve vectors");
    if (!s->work) return sv_last_status();
    double zbound = 0; /* Σ|c_k|·max|A_k| ≥ max|z_ij| */
    for (int t = 0; t < s->nt; t++) zbound += cabs(c[t]) * s->views[t].maxabs;
    s->device_calls = 1;
    st = s->b->form(s->b, c);
    if (!st) st = s->b->factor(s->b, SV_SWEEP_PIVOT_SINGLE * zbound);
    s->singular = st == SV_ERR_SINGULAR;
    return st;
}

static sv_status gpu_setup(void *content, sv_ctx *ctx, double freq, int nderiv, sv_sweep_solver_plan *plan)
{
    sv_gpu_solver *s = content;
    s->rep.solves++;
    s->singular = s->device_calls = 0;
    s->on_device = s->b && nderiv <= s->nderiv;
    if (!s->on_device) return sv_sweep_solver_setup(s->cpu, ctx, freq, nderiv, plan);
    plan->factors = SV_SWEEP_FACTORS_SINGLE;
    plan->tolerance = s->tol;
    plan->max_iterations = s->opt.max_iterations;
    plan->no_gmres = 1;
    s->sctx = ctx;
    s->t0 = sv_time_now();
    return dev_setup(s, ctx, freq, nderiv);
}

/* v ← Z⁻¹·v with the device's factors, each column scaled to unit size
 * before rounding to single (sv_dense_solve_scaled). */
static sv_status gpu_precond(void *content, int ncols, double complex *v, int ldv)
{
    sv_gpu_solver *s = content;
    if (!s->on_device) return sv_sweep_solver_precond(s->cpu, ncols, v, ldv);
    return sv_dense_solve_scaled(s->n, ncols, v, ldv, s->work, dev_solve32, s);
}

static sv_status gpu_products(void *content, int ncols, const double *xs, double *ts)
{
    sv_gpu_solver *s = content;
    if (!s->on_device) return sv_sweep_solver_products(s->cpu, ncols, xs, ts);
    return s->b->products(s->b, s->rep.residual, ncols, xs, ts);
}

static void gpu_release(void *content)
{
    sv_gpu_solver *s = content;
    if (!s->on_device) {
        sv_sweep_solver_release(s->cpu);
        return;
    }
    if (!s->work) return;
    sv_free(s->sctx, s->work);
    s->work = NULL;
    s->rep.seconds_device += sv_time_now() - s->t0;
}

/* A device error (a CUDA or cuBLAS error, out of device memory): this
 * frequency goes to the fallback, the rest of the sweep to the CPU. */
static int gpu_recover(void *content, sv_ctx *ctx, double freq, sv_status st)
{
    sv_gpu_solver *s = content;
    (void)st;
    if (!s->on_device || !s->device_calls || !s->b) return 0;
    snprintf(s->rep.note, sizeof s->rep.note, "device error at f = %g: %s: the CPU from there on", freq,
             sv_last_error());
    sv_log(ctx, SV_LOG_WARN, "GPU solver: %s", s->rep.note);
    s->rep.device_errors++;
    s->b->destroy(s->b);
    s->b = NULL;
    return 1;
}

static void gpu_account(void *content, const sv_sweep_exact_info *info)
{
    sv_gpu_solver *s = content;
    if (!s->on_device) return; /* the CPU's default path: counted in solves alone */
    s->rep.iterations += info->iterations;
    if (info->fell_back) {
        s->rep.cpu_fallbacks++;
        s->rep.singular_fallbacks += s->singular;
    } else {
        s->rep.device_solves++;
    }
}

const sv_sweep_solver_ops sv_gpu_solver_ops = {.name = "GPU single-precision LDLT", .setup = gpu_setup,
                                               .precond = gpu_precond, .products = gpu_products,
                                               .release = gpu_release, .recover = gpu_recover,
                                               .account = gpu_account};

sv_sweep_solver *sv_gpu_solver_sweep(sv_gpu_solver *s) { return s ? s->iface : NULL; }

sv_status sv_gpu_exact_deriv(void *solver, sv_ctx *ctx, const sv_sweep_model *m, double freq, double complex *x,
                             int ldx, int nderiv, double complex *dx, int lddx, sv_sweep_exact_info *info)
{
    sv_gpu_solver *s = solver;
    if (!s) return sv_error(SV_ERR_ARG, "GPU solver is NULL");
    if (m != s->m) return sv_error(SV_ERR_ARG, "the GPU solver was set up for another model");
    return sv_sweep_solver_solve(s->iface, ctx, freq, x, ldx, nderiv, dx, lddx, info);
}
