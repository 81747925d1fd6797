/* The exact solver as an object (solvent/sweep_solver.h) and the exact
 * solve every solver goes through: set up at the frequency, refine with
 * the one refinement engine (sv_dense_refine) under the policy the
 * solver's factors call for, release, account. The policy for the
 * solution's derivatives and the fallback to the CPU's double
 * factorisation is here, the same for the CPU's and a GPU's solver. */
#include <math.h>
#include <string.h>

#include "sweep_internal.h"

struct sv_sweep_solver {
    sv_ctx *ctx;
    const sv_sweep_model *m;
    const sv_sweep_solver_ops *ops;
    void *content;
};

/* A single-precision solution that stalls above a tighter target is kept
 * at this level (the rounding floor of residuals from the terms); anything
 * worse is solved again in double. */
#define SWEEP_ACCEPT_TOL 1e-15

/* Derivative directions are refined to a backward error of 1e-13, at most
 * 3 steps beyond the solution's: they only widen the basis (the sweep's
 * residual estimate checks what it reports), but inaccurate ones do not
 * deflate and add noise, not information. docs/sweep.md has the
 * measurements behind both numbers. */
#define SWEEP_DERIV_TOL 1e-13
#define SWEEP_DERIV_EXTRA 3

/* GMRES (low frequencies, where classical refinement stalls): the solution
 * within SWEEP_GMRES_MAX_STEPS, each derivative group within
 * SWEEP_GMRES_DERIV_STEPS (one cycle) and only when the solution took no
 * more: at harder frequencies three derivatives would cost more than the
 * exact solves they save (docs/sweep.md). */
#define SWEEP_GMRES_MAX_STEPS SV_DENSE_GMRES_STEPS
#define SWEEP_GMRES_DERIV_STEPS 30

/* ---- the object ------------------------------------------------------------------ */
sv_status sv_sweep_solver_create(sv_ctx *ctx, const sv_sweep_model *m, const sv_sweep_solver_ops *ops,
                                 void *content, sv_sweep_solver **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_sweep_solver_create: out is NULL");
    *out = NULL;
    if (!m || !ops || !ops->setup || !ops->precond)
        return sv_error(SV_ERR_ARG, "sv_sweep_solver_create: %s is NULL",
                        !m ? "the model" : !ops ? "ops" : !ops->setup ? "ops->setup" : "ops->precond");
    sv_sweep_solver *s = sv_calloc(ctx, 1, sizeof *s, "exact solver");
    if (!s) return sv_last_status();
    *s = (sv_sweep_solver){.ctx = ctx, .m = m, .ops = ops, .content = content};
    *out = s;
    return SV_OK;
}

void sv_sweep_solver_destroy(sv_sweep_solver *s)
{
    if (!s) return;
    if (s->ops->destroy) s->ops->destroy(s->content);
    sv_free(s->ctx, s);
}

const sv_sweep_model *sv_sweep_solver_model(const sv_sweep_solver *s) { return s ? s->m : NULL; }

const char *sv_sweep_solver_name(const sv_sweep_solver *s)
{
    return s && s->ops->name ? s->ops->name : "exact solver";
}

sv_status sv_sweep_solver_setup(sv_sweep_solver *s, sv_ctx *ctx, double freq, int nderiv, sv_sweep_solver_plan *plan)
{
    if (!s || !plan) return sv_error(SV_ERR_ARG, "sv_sweep_solver_setup: %s is NULL", s ? "plan" : "the solver");
    memset(plan, 0, sizeof *plan);
    sv_threads_saved section = sv_threads_apply(ctx); /* BLAS on this thread (threads.c) */
    sv_status st = s->ops->setup(s->content, ctx, freq, nderiv, plan);
    sv_threads_restore(section);
    return st;
}

sv_status sv_sweep_solver_precond(sv_sweep_solver *s, int ncols, double complex *v, int ldv)
{
    if (!s) return sv_error(SV_ERR_ARG, "sv_sweep_solver_precond: the solver is NULL");
    sv_threads_saved section = sv_threads_apply(NULL); /* BLAS on this thread (threads.c) */
    sv_status st = s->ops->precond(s->content, ncols, v, ldv);
    sv_threads_restore(section);
    return st;
}

sv_status sv_sweep_solver_products(sv_sweep_solver *s, int ncols, const double *xs, double *ts)
{
    if (!s) return sv_error(SV_ERR_ARG, "sv_sweep_solver_products: the solver is NULL");
    if (s->ops->products) return s->ops->products(s->content, ncols, xs, ts);
    return sv_sweep_model_apply_terms(s->m, ncols, xs, ts);
}

void sv_sweep_solver_release(sv_sweep_solver *s)
{
    if (s && s->ops->release) s->ops->release(s->content);
}

sv_status sv_sweep_solver_create_builtin(sv_ctx *ctx, const sv_sweep_model *m, sv_sweep_precision precision,
                                         double refine_tol, sv_sweep_solver **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_sweep_solver_create_builtin: out is NULL");
    *out = NULL;
    if (!m) return sv_error(SV_ERR_ARG, "model is NULL");
    if (!(refine_tol >= 0 && refine_tol < 1e-6))
        return sv_error(SV_ERR_ARG, "refine_tol = %g: expected 0 (default) or 0 < refine_tol < 1e-6", refine_tol);
    switch (precision) {
    case SV_SWEEP_MIXED: return sv_sweep_dense_solver_create(ctx, m, 1, refine_tol, out);
    case SV_SWEEP_DOUBLE: return sv_sweep_dense_solver_create(ctx, m, 0, 0.0, out);
    case SV_SWEEP_LAPACK: return sv_sweep_lapack_solver_create(ctx, m, out);
    }
    return sv_error(SV_ERR_ARG, "precision = %d: expected SV_SWEEP_MIXED, _DOUBLE or _LAPACK", (int)precision);
}

/* ---- the exact solve ---------------------------------------------------------------- */
static sv_status check_solve(const sv_sweep_solver *s, double freq, const double complex *x, int ldx, int nderiv,
                             const double complex *dx, int lddx)
{
    if (!s) return sv_error(SV_ERR_ARG, "exact solver is NULL");
    int n = s->m->n;
    if (!x) return sv_error(SV_ERR_ARG, "x is NULL");
    if (ldx < n) return sv_error(SV_ERR_ARG, "ldx = %d: expected >= n = %d", ldx, n);
    if (nderiv < 0 || nderiv > SV_SWEEP_MAX_DERIV)
        return sv_error(SV_ERR_ARG, "nderiv = %d: expected 0 to %d", nderiv, SV_SWEEP_MAX_DERIV);
    if (nderiv > 0 && !dx) return sv_error(SV_ERR_ARG, "dx is NULL with nderiv = %d", nderiv);
    if (nderiv > 0 && lddx < n) return sv_error(SV_ERR_ARG, "lddx = %d: expected >= n = %d", lddx, n);
    if (!isfinite(freq)) return sv_error(SV_ERR_NONFINITE, "frequency %g is not finite", freq);
    return SV_OK;
}

/* The engine's parameters for the solver's factors. */
static void refine_params(const sv_sweep_solver_plan *plan, sv_dense_refine_params *p)
{
    sv_dense_refine_params_default(p);
    if (plan->factors == SV_SWEEP_FACTORS_DOUBLE) sv_dense_refine_params_double(p);
    p->direct = plan->factors == SV_SWEEP_FACTORS_EXACT;
    p->group_tolerance = SWEEP_DERIV_TOL;
    p->group_extra = SWEEP_DERIV_EXTRA;
    if (plan->factors != SV_SWEEP_FACTORS_SINGLE) return;
    if (plan->tolerance > 0) p->tolerance = plan->tolerance;
    if (plan->max_iterations > 0) p->max_iterations = plan->max_iterations;
    p->accept = fmax(p->tolerance, SWEEP_ACCEPT_TOL);
    p->gmres_steps = plan->no_gmres ? 0 : SWEEP_GMRES_MAX_STEPS;
    p->group_gmres_steps = SWEEP_GMRES_DERIV_STEPS;
}

/* Setup: single factors that are unusable at this frequency (a pivot below
 * their precision, or an error the solver recovers from) are handled: the
 * engine goes straight to the fallback. */
static sv_status setup_step(sv_sweep_solver *s, sv_sweep_op *op, sv_ctx *ctx, double freq, int nderiv,
                            sv_dense_refine_params *rp)
{
    sv_sweep_solver_plan plan;
    sv_status st = sv_sweep_solver_setup(s, ctx, freq, nderiv, &plan);
    refine_params(&plan, rp);
    int single = plan.factors == SV_SWEEP_FACTORS_SINGLE;
    sv_sweep_op_allow_fallback(op, single);
    if (st && single && (st == SV_ERR_SINGULAR || (s->ops->recover && s->ops->recover(s->content, ctx, freq, st)))) {
        sv_log(ctx, SV_LOG_DEBUG, "f = %g: %s", freq, sv_last_error());
        sv_clear_error(); /* handled: the double fallback solves this frequency */
        rp->singular = 1;
        st = SV_OK;
    }
    return st;
}

/* The engine; an error of the solver's own factors that it recovers from
 * sends the frequency to the fallback. */
static sv_status refine_step(sv_sweep_solver *s, sv_sweep_op *op, sv_ctx *ctx, double freq,
                             sv_dense_refine_params *rp, double complex *x, int ldx, double complex *dx, int lddx,
                             sv_dense_refine_result *rr)
{
    int groups = op->nd + 1;
    sv_status st = sv_dense_refine(ctx, &op->ops, groups, rp, op->b, x, ldx, dx, lddx, rr);
    if (st && !rp->singular && !sv_sweep_op_in_fallback(op) && op->ops.fallback && s->ops->recover &&
        s->ops->recover(s->content, ctx, freq, st)) {
        sv_clear_error(); /* handled (the solver recorded why): the double fallback solves this frequency */
        int its = rr->iterations;
        rp->singular = 1;
        st = sv_dense_refine(ctx, &op->ops, groups, rp, op->b, x, ldx, dx, lddx, rr);
        rr->iterations += its;
    }
    return st;
}

sv_status sv_sweep_solver_solve(sv_sweep_solver *s, sv_ctx *ctx, double freq, double complex *x, int ldx,
                                int nderiv, double complex *dx, int lddx, sv_sweep_exact_info *info)
{
    sv_status st = check_solve(s, freq, x, ldx, nderiv, dx, lddx);
    if (st) return st;
    double t0 = sv_time_now();
    sv_sweep_op op;
    sv_dense_refine_params rp;
    sv_dense_refine_result rr = {.backward_error = INFINITY};
    st = sv_sweep_op_init(&op, ctx, s, freq, nderiv);
    if (st) return st;
    sv_threads_saved section = sv_threads_apply(ctx); /* BLAS on this thread (threads.c) */
    /* progress: forming and factorising Z(f) is most of an exact solve */
    sv_progress_span whole = sv_progress_span_begin(ctx, 0, 1), step = sv_progress_span_begin(ctx, 0, 0.85);
    st = setup_step(s, &op, ctx, freq, nderiv, &rp);
    sv_progress_span_end(ctx, step);
    step = sv_progress_span_begin(ctx, 0.85, 1);
    if (!st) st = refine_step(s, &op, ctx, freq, &rp, x, ldx, dx, lddx, &rr);
    sv_progress_span_end(ctx, step);
    sv_progress_span_end(ctx, whole);
    sv_threads_restore(section);
    sv_sweep_op_free(&op); /* every solver's factors released */
    if (st) return st;
    sv_sweep_exact_info out = {.fell_back = rr.fell_back, .iterations = rr.iterations,
                               .backward_error = rr.backward_error, .gmres_steps = rr.gmres_steps};
    out.seconds = sv_time_now() - t0;
    if (s->ops->account) s->ops->account(s->content, &out);
    if (info) *info = out;
    return SV_OK;
}

/* ---- the entry points of sweep.h ------------------------------------------------------ */
sv_status sv_sweep_solve_exact_deriv(sv_ctx *ctx, const sv_sweep_model *m, double freq, sv_sweep_precision precision,
                                     double refine_tol, double complex *x, int ldx, int nderiv, double complex *dx,
                                     int lddx, sv_sweep_exact_info *info)
{
    sv_sweep_solver *s;
    sv_status st = sv_sweep_solver_create_builtin(ctx, m, precision, refine_tol, &s);
    if (st) return st;
    st = sv_sweep_solver_solve(s, ctx, freq, x, ldx, nderiv, dx, lddx, info);
    sv_sweep_solver_destroy(s);
    return st;
}

sv_status sv_sweep_solve_exact(sv_ctx *ctx, const sv_sweep_model *m, double freq, sv_sweep_precision precision,
                               double complex *x, int ldx, sv_sweep_exact_info *info)
{
    return sv_sweep_solve_exact_deriv(ctx, m, freq, precision, 0.0, x, ldx, 0, NULL, 0, info);
}

/* ---- memory ------------------------------------------------------------------------------ */
size_t sv_sweep_exact_bytes_k(int n, int nterms, int nrhs, int nb, sv_sweep_precision precision)
{
    if (n < 1 || nrhs < 1 || nterms < 1) return 0;
    size_t N = (size_t)n, nn = N * N, z = sizeof(double complex);
    /* the engine's view (right-hand sides, products of every term with all
     * groups), the single-precision solve vectors, the engine's own vectors
     * (the larger of block refinement and GMRES), with all derivative groups */
    int groups = 1 + SV_SWEEP_MAX_DERIV;
    size_t vec = sv_sweep_op_bytes(n, nterms, nrhs, SV_SWEEP_MAX_DERIV) +
                 sv_dense_solve_work_bytes(n, nrhs * groups) + sv_dense_refine_bytes(n, nrhs, groups, 1);
    if (nb < 1) nb = 64;
    size_t packed = sv_dense_packed_size(n, nb);
    switch (precision) {
    case SV_SWEEP_MIXED: return packed * sizeof(float complex) + vec;
    case SV_SWEEP_DOUBLE: return packed * z + vec;
    case SV_SWEEP_LAPACK: return nn * z + N * sizeof(int) + vec;
    }
    return 0;
}

size_t sv_sweep_exact_bytes(int n, int nrhs, int nb, sv_sweep_precision precision)
{
    return sv_sweep_exact_bytes_k(n, 3, nrhs, nb, precision);
}

size_t sv_sweep_exact_bytes_shape(int n, const sv_sweep_shape *shape, int nrhs, int nb, sv_sweep_precision precision)
{
    if (!shape) return 0;
    size_t bytes = sv_sweep_exact_bytes_k(n, shape->nterms, nrhs, nb, precision);
    /* the low-rank terms are formed into Z(f) beside its packed matrix */
    if (bytes && shape->lowrank) bytes += sv_sweep_lowrank_form_bytes(n, shape->lowrank_cols);
    return bytes;
}
