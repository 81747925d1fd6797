/* The GPU exact solver: set-up (device query, plan, self-test, upload) and
 * the exact solve as an sv_sweep_exact_deriv_fn.
 *
 * One solve: Z(f) is formed on the device in complex single from the terms
 * kept there, factorised by the blocked LDLᵀ without pivoting, and the
 * solution and its frequency derivatives are refined together by the CPU
 * path's own block refinement (src/sweep/refine_block.c: why the column
 * groups share one pass): the columns W = [X, X', X'', X'''] solve
 *     Z·X = B,   Z·X' = −Z'·X,   Z·X'' = −(Z''·X + 2·Z'·X'),   …,
 * every step computes the products A_k·W on the device (in double or
 * double-float), the host combines them with c_k and its derivatives into
 * the residuals of all groups, and one solve with the single-precision
 * factors corrects every column. The solution group stops at its tolerance
 * or at its rounding floor (a step that no longer halves the backward
 * error); the derivative groups at 1e-13 or 3 steps later. A solution that stalls above
 * the tolerance, or a single factorisation that meets a pivot below single
 * precision, sends the frequency to the CPU double path
 * (sv_sweep_solve_exact_deriv with SV_SWEEP_DOUBLE), and the report counts it. */
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
    sv_free(s->ctx, s->views);
    sv_free(s->ctx, s);
}

/* Stay on the CPU: an error when the device was required, else a note. */
static sv_status use_cpu(sv_gpu_solver *s, sv_status why, const char *fmt, const char *detail)
{
    snprintf(s->rep.note, sizeof s->rep.note, fmt, detail);
    if (s->opt.required) return sv_error(why ? why : SV_ERR_UNSUPPORTED, "GPU required but not usable: %s", s->rep.note);
    sv_clear_error();
    sv_log(s->ctx, SV_LOG_INFO, "GPU solver on the CPU: %s", s->rep.note);
    return SV_OK;
}

static sv_status setup(sv_gpu_solver *s, const sv_gpu_device_info *info, sv_gpu_backend_factory factory, void *fu)
{
    sv_gpu_describe(info, s->rep.device, sizeof s->rep.device);
    if (!info->available) return use_cpu(s, SV_ERR_UNSUPPORTED, "no CUDA device: %s", info->reason);
    /* the terms (a pass over them for max|a_ij|: only when there is a device) */
    sv_status st = sv_gpu_problem_from_model(s->m, s->views, &s->prob);
    if (st) return st;

    /* the plan */
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
    st = sv_gpu_plan_make(&pin, &s->rep.plan);
    if (st) return st;
    if (s->rep.plan.decision == SV_GPU_REFUSE)
        return sv_error(SV_ERR_BUDGET, "GPU required but the sweep does not fit: %s", s->rep.plan.message);
    if (s->rep.plan.decision == SV_GPU_FALLBACK) return use_cpu(s, SV_ERR_BUDGET, "%s", s->rep.plan.message);

    /* the self-test, on a backend of its own */
    sv_gpu_backend *bt = NULL;
    sv_gpu_selftest_result tr;
    st = factory(fu, s->ctx, s->opt.device, &bt);
    if (st) return use_cpu(s, st, "the device could not be set up: %s", sv_last_error());
    st = sv_gpu_selftest(s->ctx, bt, 3, 0x5e1f7e57ULL, &tr);
    bt->destroy(bt);
    if (st) return use_cpu(s, st, "the self-test could not run: %s", sv_last_error());
    s->rep.selftest_double = tr.double_ok;
    s->rep.selftest_df = tr.df_ok;
    s->rep.selftest_err_double = tr.double_err;
    s->rep.selftest_err_df = tr.df_err;
    if (!tr.solve_ok) return use_cpu(s, SV_ERR_INTERNAL, "the device's factorisation failed its self-test: %s", tr.message);
    sv_gpu_residual want = s->rep.plan.residual, other = want == SV_GPU_RESIDUAL_DF ? SV_GPU_RESIDUAL_DOUBLE : SV_GPU_RESIDUAL_DF;
    int ok_want = want == SV_GPU_RESIDUAL_DF ? tr.df_ok == 1 : tr.double_ok == 1;
    int ok_other = other == SV_GPU_RESIDUAL_DF ? tr.df_ok == 1 : tr.double_ok == 1;
    if (!ok_want && (s->opt.residual != SV_GPU_RESIDUAL_AUTO || !ok_other))
        return use_cpu(s, SV_ERR_INTERNAL, "the device's residual failed its self-test: %s", tr.message);
    s->rep.residual = ok_want ? want : other;
    if (!ok_want)
        sv_log(s->ctx, SV_LOG_WARN, "GPU self-test: the %s residual disagrees with the CPU (%s): using %s",
               want == SV_GPU_RESIDUAL_DF ? "double-float" : "double", tr.message,
               other == SV_GPU_RESIDUAL_DF ? "double-float" : "double");
    s->tol = s->opt.refine_tol > 0 ? s->opt.refine_tol
                                   : s->rep.residual == SV_GPU_RESIDUAL_DF ? GPU_TOL_DF : GPU_TOL_DOUBLE;

    /* the model's terms onto the device */
    st = factory(fu, s->ctx, s->opt.device, &s->b);
    if (!st) st = s->b->upload(s->b, &s->prob, s->rep.residual == SV_GPU_RESIDUAL_DF ? 2 : 1, 2 * s->p * (s->nderiv + 1));
    if (st) {
        if (s->b) s->b->destroy(s->b);
        s->b = NULL;
        return use_cpu(s, st, "the terms could not be put on the device: %s", sv_last_error());
    }
    return SV_OK;
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
    s->nt = sv_gpu_model_nterms(m);
    s->nderiv = nderiv;
    s->rep.selftest_double = s->rep.selftest_df = -1;
    s->views = sv_alloc(ctx, sizeof(sv_gpu_term_view) * (size_t)s->nt, "GPU solver terms");
    sv_status st = s->views ? setup(s, info, factory, factory_user) : sv_last_status();
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
