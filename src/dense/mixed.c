/* Mixed precision for a caller's matrix: factor in complex single, refine
 * to double accuracy with the refinement engine (refine.c: classical
 * refinement, GMRES when it stalls, the matrix formed and factored in
 * double when both fall short), residuals from the caller's operator. */
#include <math.h>
#include <string.h>

#include "dense_internal.h"

#define DEFAULT_TOL 1e-15
#define DEFAULT_MAXIT 30

/* ---- the default operator: a stored C64 packed matrix ------------------- */
static sv_status sym_residual(void *user, int nrhs, const double complex *x, int ldx, const double complex *b, int ldb,
                              double complex *r, int ldr)
{
    const sv_dense_sym *a = user;
    sv_status st = sv_dense_sym_matmul(a, nrhs, x, ldx, r, ldr);
    if (st) return st;
    for (int c = 0; c < nrhs; c++)
        for (int i = 0; i < a->n; i++) r[(size_t)c * ldr + i] = b[(size_t)c * ldb + i] - r[(size_t)c * ldr + i];
    return SV_OK;
}

static sv_status sym_form(void *user, sv_dense_sym *a64) { return sv_dense_sym_convert(user, a64); }

sv_status sv_dense_operator_from_sym(const sv_dense_sym *a64, sv_dense_operator *op)
{
    if (!a64 || !op) return sv_error(SV_ERR_ARG, "sv_dense_operator_from_sym: NULL %s", a64 ? "op" : "a64");
    if (a64->type != SV_DENSE_C64 && a64->type != SV_DENSE_R64)
        return sv_error(SV_ERR_ARG, "sv_dense_operator_from_sym: a64 has type %d: expected SV_DENSE_C64 or R64",
                        (int)a64->type);
    op->residual = sym_residual;
    op->form = sym_form;
    op->norm_inf = sv_dense_sym_norm_inf(a64);
    op->n = a64->n;
    op->user = (void *)a64;
    return SV_OK;
}

void sv_dense_refine_options_default(sv_dense_refine_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->tolerance = DEFAULT_TOL;
    opts->max_iterations = DEFAULT_MAXIT;
}

/* ---- the operator as the refinement engine sees it ------------------------ */
typedef struct mixed {
    sv_ctx *ctx;
    const sv_dense_operator *op;
    const sv_dense_sym *a32;
    int n, p;
    sv_dense_factor *f;    /* the single factors, then (fallback) the double ones */
    sv_dense_sym *a64;     /* the fallback's matrix */
    double complex *b;     /* B, ld n */
    double complex *zero;  /* n × p zeros: Z·x as minus the residual for b = 0 */
    void *work;            /* the scaled single-precision solves */
    sv_dense_refine_info *info;
} mixed;

static sv_status mixed_precond(void *user, int ncols, double complex *v, int ldv)
{
    const mixed *M = user;
    return sv_dense_factor_solve_scaled(M->f, ncols, v, ldv, M->work);
}

static sv_status mixed_residuals(void *user, int ngroups, const double complex *w, double complex *rhs,
                                 double complex *r)
{
    const mixed *M = user;
    (void)ngroups; /* one group */
    return M->op->residual(M->op->user, M->p, w, M->n, rhs, M->n, r, M->n);
}

static sv_status mixed_apply(void *user, int ncols, const double complex *x, int ldx, double complex *y, int ldy)
{
    const mixed *M = user;
    sv_status st = M->op->residual(M->op->user, ncols, x, ldx, M->zero, M->n, y, ldy);
    for (int c = 0; !st && c < ncols; c++)
        for (int i = 0; i < M->n; i++) y[(size_t)c * ldy + i] = -y[(size_t)c * ldy + i];
    return st;
}

/* A formed in double through the operator and factored (with its own
 * pivoted fallback); the budget is checked first, the single factors go
 * before the double matrix comes. */
static sv_status mixed_fallback(void *user, double reached)
{
    mixed *M = user;
    (void)reached;
    double t0 = sv_time_now();
    size_t need = sv_dense_sym_bytes(M->n, SV_DENSE_C64, M->a32->nb);
    if (sv_mem_check(M->ctx, need, "the double-precision fallback of mixed-precision refinement"))
        return sv_last_status();
    sv_dense_factor_destroy(M->f);
    M->f = NULL;
    sv_status st = sv_dense_sym_create(M->ctx, M->n, SV_DENSE_C64, M->a32->nb, &M->a64);
    if (!st) st = M->op->form(M->op->user, M->a64);
    if (!st) st = sv_dense_factor_create(M->ctx, M->a64, NULL, &M->f, &M->info->factor);
    M->info->seconds_factor += sv_time_now() - t0;
    return st;
}

/* ---- the solve, step by step ------------------------------------------------ */
static sv_status check_args(const sv_dense_sym *a32, const sv_dense_operator *op, int p, int ldb, int ldx)
{
    if (!a32 || !op || !op->residual)
        return sv_error(SV_ERR_ARG, "sv_dense_solve_mixed: NULL %s", !a32 ? "a32" : "operator or residual callback");
    if (a32->type != SV_DENSE_C32)
        return sv_error(SV_ERR_ARG, "sv_dense_solve_mixed: a32 has type %d: expected SV_DENSE_C32", (int)a32->type);
    const int n = a32->n;
    if (op->n != n) return sv_error(SV_ERR_ARG, "sv_dense_solve_mixed: op->n = %d but a32 has order %d", op->n, n);
    if (n > 0 && (!(op->norm_inf > 0) || !isfinite(op->norm_inf)))
        return sv_error(SV_ERR_ARG, "sv_dense_solve_mixed: op->norm_inf = %g: expected a positive finite number",
                        op->norm_inf);
    if (p < 0) return sv_error(SV_ERR_ARG, "sv_dense_solve_mixed: nrhs = %d: expected >= 0", p);
    if (ldb < (n > 1 ? n : 1) || ldx < (n > 1 ? n : 1))
        return sv_error(SV_ERR_ARG, "sv_dense_solve_mixed: ldb = %d, ldx = %d: expected >= n = %d", ldb, ldx, n);
    return SV_OK;
}

static sv_status check_options(const sv_dense_refine_options *in, sv_dense_refine_options *o)
{
    sv_dense_refine_options_default(o);
    if (!in) return SV_OK;
    if (!(in->tolerance >= 0) || in->max_iterations < 0)
        return sv_error(SV_ERR_ARG, "sv_dense_solve_mixed: tolerance = %g, max_iterations = %d: expected >= 0",
                        in->tolerance, in->max_iterations);
    if (!(in->pivot_threshold >= 0 && in->pivot_threshold < 1))
        return sv_error(SV_ERR_ARG, "sv_dense_solve_mixed: pivot_threshold = %g: expected in [0, 1)",
                        in->pivot_threshold);
    *o = *in;
    if (o->tolerance == 0) o->tolerance = DEFAULT_TOL;
    if (o->max_iterations == 0) o->max_iterations = DEFAULT_MAXIT;
    return SV_OK;
}

static sv_status check_finite(int n, int p, const double complex *b, int ldb)
{
    for (int c = 0; c < p; c++)
        for (int i = 0; i < n; i++)
            if (!isfinite(creal(b[(size_t)c * ldb + i])) || !isfinite(cimag(b[(size_t)c * ldb + i])))
                return sv_error(SV_ERR_NONFINITE, "sv_dense_solve_mixed: b(%d, %d) is not finite", i, c);
    return SV_OK;
}

static sv_status mixed_begin(mixed *M, const double complex *b, int ldb)
{
    size_t np = (size_t)M->n * (size_t)M->p;
    M->b = sv_alloc(M->ctx, sizeof(double complex) * np, "refinement right-hand sides");
    M->zero = M->b ? sv_calloc(M->ctx, np, sizeof(double complex), "refinement zeros") : NULL;
    M->work = M->zero ? sv_alloc(M->ctx, sv_dense_solve_work_bytes(M->n, M->p), "refinement single-precision vectors")
                      : NULL;
    if (!M->work) return sv_last_status();
    for (int c = 0; c < M->p; c++)
        memcpy(M->b + (size_t)c * M->n, b + (size_t)c * ldb, sizeof(double complex) * (size_t)M->n);
    return SV_OK;
}

static void mixed_end(mixed *M)
{
    sv_dense_factor_destroy(M->f);
    sv_dense_sym_destroy(M->a64);
    sv_free(M->ctx, M->b);
    sv_free(M->ctx, M->zero);
    sv_free(M->ctx, M->work);
}

/* The single factorisation (its own pivoted LU fallback on, the
 * singularity test off: factors singular to single precision still
 * precondition GMRES). */
static sv_status factor_single(mixed *M, double pivot_threshold)
{
    sv_dense_factor_options fo = {.pivot_threshold = pivot_threshold};
    double t0 = sv_time_now();
    sv_status st = sv_dense_factor_create_ex(M->ctx, (sv_dense_sym *)M->a32, &fo, &M->f, &M->info->factor, 0);
    M->info->seconds_factor = sv_time_now() - t0;
    return st;
}

static sv_status no_convergence(const sv_dense_operator *op, const sv_dense_refine_info *info, double tol)
{
    if (!op->form)
        return sv_error(SV_ERR_NOCONV, "sv_dense_solve_mixed: refinement did not converge (backward error %.3g) and "
                                       "the operator cannot form A in double (form is NULL)",
                        info->backward_error);
    return sv_error(SV_ERR_NOCONV,
                    "sv_dense_solve_mixed: refinement reached backward error %.3g after %d iterations, above the "
                    "tolerance %.3g, and the double fallback is disabled (disallow_fallback = 1)",
                    info->backward_error, info->iterations, tol);
}

sv_status sv_dense_solve_mixed(sv_ctx *ctx, sv_dense_sym *a32, const sv_dense_operator *op, int nrhs,
                               const double complex *b, int ldb, double complex *x, int ldx,
                               const sv_dense_refine_options *opts, sv_dense_refine_info *info)
{
    sv_dense_refine_info local;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    info->factor.small_pivot_index = -1;
    sv_status st = check_args(a32, op, nrhs, ldb, ldx);
    if (st) return st;
    if (a32->n == 0 || nrhs == 0) return SV_OK;
    if (!b || !x) return sv_error(SV_ERR_ARG, "sv_dense_solve_mixed: NULL %s", b ? "x" : "b");
    sv_dense_refine_options o;
    st = check_options(opts, &o);
    if (!st) st = check_finite(a32->n, nrhs, b, ldb);
    if (st) return st;

    mixed M = {.ctx = ctx, .op = op, .a32 = a32, .n = a32->n, .p = nrhs, .info = info};
    int can_fall_back = !o.disallow_fallback && op->form;
    sv_dense_refine_params rp;
    sv_dense_refine_params_default(&rp);
    rp.tolerance = rp.accept = o.tolerance;
    rp.max_iterations = o.max_iterations;
    rp.gmres_steps = o.disallow_gmres ? 0 : SV_DENSE_GMRES_STEPS;
    st = mixed_begin(&M, b, ldb);
    if (!st) st = factor_single(&M, o.pivot_threshold);
    if (st == SV_ERR_SINGULAR && can_fall_back) {
        /* singular in single (a tiny pivot and an LU that failed too): handled,
         * the matrix may still be fine in double */
        sv_clear_error();
        st = SV_OK;
        rp.singular = 1;
    }
    sv_dense_refine_ops ops = {.n = M.n, .nrhs = M.p, .norm_inf = op->norm_inf, .user = &M,
                               .precond = mixed_precond, .residuals = mixed_residuals, .apply = mixed_apply,
                               .fallback = can_fall_back ? mixed_fallback : NULL};
    sv_dense_refine_result rr = {.backward_error = INFINITY};
    double t0 = sv_time_now(), tf = info->seconds_factor;
    if (!st) st = sv_dense_refine(ctx, &ops, 1, &rp, M.b, x, ldx, NULL, 0, &rr);
    info->seconds_refine = sv_time_now() - t0 - (info->seconds_factor - tf);
    info->iterations = rr.iterations;
    info->gmres_used = rr.gmres_steps > 0;
    info->fell_back = rr.fell_back;
    info->backward_error = rr.backward_error;
    if (!st && !rr.accepted) st = no_convergence(op, info, o.tolerance);
    mixed_end(&M);
    return st;
}
