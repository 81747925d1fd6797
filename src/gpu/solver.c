/* The GPU exact solver's set-up: device query, plan, self-test, upload;
 * and the object (an implementation of the sweep module's exact-solver
 * interface, exact.c).
 *
 * One solve: Z(f) is formed on the device in complex single from the terms
 * kept there and factorised by the blocked LDLᵀ without pivoting; the sweep
 * module's exact solve refines the solution and its frequency derivatives
 * together with the one refinement engine (sv_dense_refine: why the column
 * groups share one pass), every step's products A_k·W on the device (in
 * double or double-float), combined with c_k and its derivatives on the
 * host, one solve with the device's factors correcting every column. A
 * solution that stalls above the tolerance, or a single factorisation that
 * meets a pivot below single precision, sends the frequency to the CPU's
 * double factorisation, and the report counts it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpu_internal.h"

#include "solver_internal.h"

void sv_gpu_options_default(sv_gpu_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof(*opts));
    opts->residual = SV_GPU_RESIDUAL_AUTO;
}

int sv_gpu_solver_on_device(const sv_gpu_solver *s)
{
    return s && s->b != NULL;
}

void sv_gpu_solver_report(const sv_gpu_solver *s, sv_gpu_report *r)
{
    if (!r) return;
    if (!s) {
        memset(r, 0, sizeof(*r));
        return;
    }
    *r = s->rep;
    r->on_device = s->b != NULL;
}

void sv_gpu_solver_destroy(sv_gpu_solver *s)
{
    if (!s) return;
    if (s->b) s->b->destroy(s->b);
    sv_sweep_solver_destroy(s->iface);
    sv_sweep_solver_destroy(s->cpu);
    sv_free(s->ctx, s->views);
    sv_free(s->ctx, s);
}

/* Stay on the CPU: an error when the device was required, else a note
 * (the error that led here is then handled: the solver answers on the CPU,
 * and the note and the log say why). */
static sv_status use_cpu(sv_gpu_solver *s, sv_status why, const char *fmt, const char *detail)
{
    snprintf(s->rep.note, sizeof s->rep.note, fmt, detail);
    if (s->opt.required) return sv_error(why ? why : SV_ERR_UNSUPPORTED, "GPU required but not usable: %s", s->rep.note);
    sv_clear_error();
    sv_log(s->ctx, SV_LOG_INFO, "GPU solver on the CPU: %s", s->rep.note);
    return SV_OK;
}

/* A step decided for the CPU (use_cpu wrote why). */
static int on_cpu_decided(const sv_gpu_solver *s) { return s->rep.note[0] != 0; }

/* The plan: does the sweep fit the device, with which residuals. */
static sv_status setup_plan(sv_gpu_solver *s, const sv_gpu_device_info *info)
{
    sv_gpu_plan_input pin = {.n = s->n, .nb = s->prob.nb, .nrhs = s->p, .nderiv = s->nderiv,
                             .device_free = info->free_bytes, .fp32_per_fp64 = info->fp32_per_fp64,
                             .residual = s->opt.residual, .required = s->opt.required};
    for (int k = 0; k < s->nt; k++) {
        if (s->views[k].kind == SV_SWEEP_TERM_PACKED) pin.npacked++;
        else {
            pin.ncsr++;
            pin.csr_nnz += s->views[k].nnz;
        }
    }
    sv_status st = sv_gpu_plan_make(&pin, &s->rep.plan);
    if (st) return st;
    if (s->rep.plan.decision == SV_GPU_REFUSE)
        return sv_error(SV_ERR_BUDGET, "GPU required but the sweep does not fit: %s", s->rep.plan.message);
    if (s->rep.plan.decision == SV_GPU_FALLBACK) return use_cpu(s, SV_ERR_BUDGET, "%s", s->rep.plan.message);
    return SV_OK;
}

/* The residual path: the plan's if it passed its self-test; under AUTO the
 * other one if that passed instead. */
static sv_status choose_residual(sv_gpu_solver *s, const sv_gpu_selftest_result *tr)
{
    sv_gpu_residual want = s->rep.plan.residual, other = want == SV_GPU_RESIDUAL_DF ? SV_GPU_RESIDUAL_DOUBLE : SV_GPU_RESIDUAL_DF;
    int ok_want = want == SV_GPU_RESIDUAL_DF ? tr->df_ok == 1 : tr->double_ok == 1;
    int ok_other = other == SV_GPU_RESIDUAL_DF ? tr->df_ok == 1 : tr->double_ok == 1;
    if (!ok_want && (s->opt.residual != SV_GPU_RESIDUAL_AUTO || !ok_other))
        return use_cpu(s, SV_ERR_INTERNAL, "the device's residual failed its self-test: %s", tr->message);
    s->rep.residual = ok_want ? want : other;
    if (!ok_want)
        sv_log(s->ctx, SV_LOG_WARN, "GPU self-test: the %s residual disagrees with the CPU (%s): using %s",
               want == SV_GPU_RESIDUAL_DF ? "double-float" : "double", tr->message,
               other == SV_GPU_RESIDUAL_DF ? "double-float" : "double");
    s->tol = s->opt.refine_tol > 0 ? s->opt.refine_tol : s->rep.residual == SV_GPU_RESIDUAL_DF ? GPU_TOL_DF : 0;
    return SV_OK;
}

/* The self-test, on a backend of its own. */
static sv_status setup_selftest(sv_gpu_solver *s, sv_gpu_backend_factory factory, void *fu)
{
    sv_gpu_backend *bt = NULL;
    sv_gpu_selftest_result tr;
    sv_status st = factory(fu, s->ctx, s->opt.device, &bt);
    if (st) return use_cpu(s, st, "the device could not be set up: %s", sv_last_error());
    st = sv_gpu_selftest(s->ctx, bt, 3, 0x5e1f7e57ULL, &tr);
    bt->destroy(bt);
    if (st) return use_cpu(s, st, "the self-test could not run: %s", sv_last_error());
    s->rep.selftest_double = tr.double_ok;
    s->rep.selftest_df = tr.df_ok;
    s->rep.selftest_err_double = tr.double_err;
    s->rep.selftest_err_df = tr.df_err;
    if (!tr.solve_ok) return use_cpu(s, SV_ERR_INTERNAL, "the device's factorisation failed its self-test: %s", tr.message);
    return choose_residual(s, &tr);
}

/* The model's terms onto the device. */
static sv_status setup_upload(sv_gpu_solver *s, sv_gpu_backend_factory factory, void *fu)
{
    sv_status st = factory(fu, s->ctx, s->opt.device, &s->b);
    if (!st) st = s->b->upload(s->b, &s->prob, s->rep.residual == SV_GPU_RESIDUAL_DF ? 2 : 1, 2 * s->p * (s->nderiv + 1));
    if (st) {
        if (s->b) s->b->destroy(s->b);
        s->b = NULL;
        return use_cpu(s, st, "the terms could not be put on the device: %s", sv_last_error());
    }
    return SV_OK;
}

static sv_status setup(sv_gpu_solver *s, const sv_gpu_device_info *info, sv_gpu_backend_factory factory, void *fu)
{
    sv_gpu_describe(info, s->rep.device, sizeof s->rep.device);
    if (!info->available) return use_cpu(s, SV_ERR_UNSUPPORTED, "no CUDA device: %s", info->reason);
    sv_sweep_shape shape;
    sv_sweep_model_shape(s->m, &shape);
    if (shape.lowrank)
        return use_cpu(s, SV_ERR_UNSUPPORTED, "%s", "the model has low-rank terms, which the device does not form");
    /* the terms (a pass over them for max|a_ij|: only when there is a device) */
    sv_status st = sv_gpu_problem_from_model(s->m, s->views, &s->prob);
    if (st == SV_ERR_UNSUPPORTED) return use_cpu(s, st, "%s", sv_last_error());
    if (!st) st = setup_plan(s, info);
    if (!st && !on_cpu_decided(s)) st = setup_selftest(s, factory, fu);
    if (!st && !on_cpu_decided(s)) st = setup_upload(s, factory, fu);
    return st;
}

sv_status sv_gpu_solver_create_with(sv_ctx *ctx, const sv_sweep_model *m, int nderiv, const sv_gpu_options *opts,
                                    const sv_gpu_device_info *info, sv_gpu_backend_factory factory,
                                    void *factory_user, sv_gpu_solver **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "out is NULL");
    *out = NULL;
    if (!m || !info || !factory) return sv_error(SV_ERR_ARG, "model, device info or backend factory is NULL");
    if (nderiv < 0 || nderiv > SV_GPU_MAX_DERIV)
        return sv_error(SV_ERR_ARG, "nderiv = %d: expected 0 to %d", nderiv, SV_GPU_MAX_DERIV);
    sv_gpu_options o;
    sv_gpu_options_default(&o);
    if (opts) o = *opts;
    if (o.device < 0) return sv_error(SV_ERR_ARG, "device = %d: expected >= 0", o.device);
    if (o.residual < SV_GPU_RESIDUAL_AUTO || o.residual > SV_GPU_RESIDUAL_DF)
        return sv_error(SV_ERR_ARG, "residual = %d: expected SV_GPU_RESIDUAL_AUTO, _DOUBLE or _DF", (int)o.residual);
    if (!(o.refine_tol >= 0 && o.refine_tol < 1e-6))
        return sv_error(SV_ERR_ARG, "refine_tol = %g: expected 0 (default) or 0 < refine_tol < 1e-6", o.refine_tol);
    if (o.max_iterations < 0) return sv_error(SV_ERR_ARG, "max_iterations = %d: expected >= 0", o.max_iterations);
    sv_gpu_solver *s = sv_calloc(ctx, 1, sizeof(*s), "GPU solver");
    if (!s) return sv_last_status();
    s->ctx = ctx;
    s->m = m;
    s->opt = o;
    s->n = sv_sweep_model_order(m);
    s->p = sv_sweep_model_nrhs(m);
    s->nt = sv_sweep_model_nterms(m);
    s->nderiv = nderiv;
    s->rep.selftest_double = s->rep.selftest_df = -1;
    s->views = sv_alloc(ctx, sizeof(sv_gpu_term_view) * (size_t)s->nt, "GPU solver terms");
    sv_status st = s->views ? SV_OK : sv_last_status();
    if (!st) st = sv_sweep_solver_create(ctx, m, &sv_gpu_solver_ops, s, &s->iface);
    if (!st) st = sv_sweep_solver_create_builtin(ctx, m, SV_SWEEP_MIXED, 0.0, &s->cpu);
    if (!st) st = setup(s, info, factory, factory_user);
    if (st) {
        sv_gpu_solver_destroy(s);
        return st;
    }
    *out = s;
    return SV_OK;
}

sv_status sv_gpu_solver_create(sv_ctx *ctx, const sv_sweep_model *m, int nderiv, const sv_gpu_options *opts,
                               sv_gpu_solver **out)
{
    sv_gpu_device_info info;
    int device = opts ? opts->device : 0;
    if (sv_gpu_query(device < 0 ? 0 : device, &info)) sv_clear_error();
    return sv_gpu_solver_create_with(ctx, m, nderiv, opts, &info, sv_gpu_backend_device, NULL, out);
}
