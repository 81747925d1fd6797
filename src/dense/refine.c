/* The refinement engine: which stage runs when (dense.h describes the
 * stages, docs/dense.md the measurements behind the numbers). Every solve
 * with approximate factors in Solvent goes through sv_dense_refine: the
 * dense mixed solve (mixed.c), the sweep's exact solves on the CPU and on a
 * GPU. The policy — classical (block) refinement, GMRES when it stalls,
 * factors in double when both fall short — lives here and nowhere else. */
#include <math.h>
#include <string.h>

#include "refine_internal.h"

#define REFINE_TOL 1e-15
#define REFINE_MAXIT 30
#define GROUP_TOL 1e-13
#define GROUP_EXTRA 3
#define DOUBLE_TOL 1e-16
#define DOUBLE_MAXIT 4

void sv_dense_refine_params_default(sv_dense_refine_params *p)
{
    if (!p) return;
    memset(p, 0, sizeof *p);
    p->tolerance = REFINE_TOL;
    p->max_iterations = REFINE_MAXIT;
    p->group_tolerance = GROUP_TOL;
    p->group_extra = GROUP_EXTRA;
}

void sv_dense_refine_params_double(sv_dense_refine_params *p)
{
    sv_dense_refine_params_default(p);
    p->tolerance = DOUBLE_TOL;
    p->accept = 1.0;
    p->max_iterations = DOUBLE_MAXIT;
}

/* Zeros to the defaults; accept at least the tolerance. */
static void resolve(const sv_dense_refine_params *in, sv_dense_refine_params *p)
{
    sv_dense_refine_params_default(p);
    if (!in) {
        p->accept = p->tolerance;
        return;
    }
    *p = *in;
    if (!(p->tolerance > 0)) p->tolerance = REFINE_TOL;
    if (p->max_iterations <= 0) p->max_iterations = REFINE_MAXIT;
    if (!(p->group_tolerance > 0)) p->group_tolerance = GROUP_TOL;
    if (p->group_extra <= 0) p->group_extra = GROUP_EXTRA;
    if (!(p->accept >= p->tolerance)) p->accept = p->tolerance;
}

size_t sv_dense_refine_bytes(int n, int nrhs, int ngroups, int gmres)
{
    if (n < 0 || nrhs < 1 || ngroups < 1) return 0;
    size_t np = (size_t)n * (size_t)nrhs * sizeof(double complex);
    size_t block = sv_dense_refine_block_bytes(n, nrhs, ngroups);
    size_t turn = np + (gmres ? sv_dense_gmres_bytes(n, nrhs) : np); /* group right-hand sides, then GMRES */
    return block > turn ? block : turn;
}

/* Passes over less than about a million stored elements are too short for
 * a thread team (docs/sweep.md): refinement runs on one thread there. */
static sv_threads_saved refine_threads_begin(int n)
{
    sv_threads_saved ss = {0, 0};
    if ((double)n * n < 2e6) ss = sv_threads_serial_begin();
    return ss;
}

static sv_status check(const sv_dense_refine_ops *ops, int ngroups, const sv_dense_refine_params *p,
                       const double complex *b, const double complex *x, int ldx, const double complex *dx, int lddx)
{
    if (!ops || !ops->precond) return sv_error(SV_ERR_ARG, "sv_dense_refine: ops or ops->precond is NULL");
    int n = ops->n;
    if (n < 0 || ops->nrhs < 1 || ngroups < 1)
        return sv_error(SV_ERR_ARG, "sv_dense_refine: n = %d, nrhs = %d, ngroups = %d: expected n >= 0, nrhs >= 1, "
                                    "ngroups >= 1", n, ops->nrhs, ngroups);
    if (!p->direct && !ops->residuals) return sv_error(SV_ERR_ARG, "sv_dense_refine: ops->residuals is NULL");
    if ((p->direct || p->gmres_steps > 0) && !ops->apply)
        return sv_error(SV_ERR_ARG, "sv_dense_refine: ops->apply is NULL (needed by %s)",
                        p->direct ? "direct" : "gmres_steps > 0");
    int turn = p->direct || (p->gmres_steps > 0 && p->group_gmres_steps > 0);
    if (ngroups > 1 && turn && !ops->group_rhs)
        return sv_error(SV_ERR_ARG, "sv_dense_refine: ops->group_rhs is NULL with %d groups", ngroups);
    if (!b || !x || (ngroups > 1 && !dx))
        return sv_error(SV_ERR_ARG, "sv_dense_refine: %s is NULL", !b ? "b" : !x ? "x" : "dx");
    if (ldx < (n > 1 ? n : 1) || (ngroups > 1 && lddx < (n > 1 ? n : 1)))
        return sv_error(SV_ERR_ARG, "sv_dense_refine: ldx = %d, lddx = %d: expected >= n = %d", ldx, lddx, n);
    return SV_OK;
}

/* Groups ≥ 1 one after the other from M⁻¹·F_g: polished by GMRES within
 * `steps` and kept if they reach 10·group_tolerance (the first that does not
 * is zeroed with the ones above it; steps = 0 zeroes them all), or all kept
 * as they come (keep_all: M⁻¹ is exact). */
static sv_status groups_in_turn(sv_ctx *ctx, const sv_dense_refine_ops *ops, int ngroups,
                                const sv_dense_refine_params *p, int steps, int keep_all, double complex *x, int ldx,
                                double complex *dx, int lddx, int *gsteps)
{
    int n = ops->n, nrhs = ops->nrhs;
    double complex *r = sv_alloc(ctx, sizeof(double complex) * (size_t)n * nrhs, "group right-hand sides");
    if (!r) return sv_last_status();
    sv_status st = SV_OK;
    int g = 1;
    for (; g < ngroups && !st && (steps > 0 || keep_all); g++) {
        double complex *xg = dx + (size_t)(g - 1) * lddx * nrhs;
        st = ops->group_rhs(ops->user, g, x, ldx, dx, lddx, r, n);
        for (int j = 0; !st && j < nrhs; j++)
            memcpy(xg + (size_t)j * lddx, r + (size_t)j * n, sizeof(double complex) * (size_t)n);
        if (!st) st = ops->precond(ops->user, nrhs, xg, lddx);
        if (keep_all) continue;
        double be = INFINITY;
        int s = 0;
        if (!st) st = sv_dense_gmres(ctx, ops, r, xg, lddx, p->group_tolerance, steps, &be, &s);
        *gsteps += s;
        if (!st && !(be <= 10 * p->group_tolerance)) break;
    }
    for (int h = g; !st && h < ngroups; h++) /* left out */
        for (int j = 0; j < nrhs; j++)
            memset(dx + ((size_t)(h - 1) * nrhs + j) * lddx, 0, sizeof(double complex) * (size_t)n);
    sv_free(ctx, r);
    return st;
}

/* M⁻¹ is exact: W_0 = M⁻¹·B, then the groups in turn, and the backward
 * error of group 0 from a true residual. */
static sv_status stage_direct(sv_ctx *ctx, const sv_dense_refine_ops *ops, int ngroups,
                              const sv_dense_refine_params *p, const double complex *b, double complex *x, int ldx,
                              double complex *dx, int lddx, sv_dense_refine_result *res)
{
    int n = ops->n, nrhs = ops->nrhs, unused = 0;
    for (int j = 0; j < nrhs; j++) memcpy(x + (size_t)j * ldx, b + (size_t)j * n, sizeof(double complex) * (size_t)n);
    sv_status st = ops->precond(ops->user, nrhs, x, ldx);
    if (!st && ngroups > 1) st = groups_in_turn(ctx, ops, ngroups, p, 0, 1, x, ldx, dx, lddx, &unused);
    double complex *r = st ? NULL : sv_alloc(ctx, sizeof(double complex) * (size_t)n * nrhs, "residual");
    if (!st && !r) st = sv_last_status();
    if (!st) st = sv_dense_refine_true_residual(ops, b, x, ldx, r);
    if (!st) res->backward_error = sv_dense_backward_error_residual(n, nrhs, ops->norm_inf, r, n, x, ldx, b, n, NULL);
    sv_free(ctx, r);
    res->accepted = !st;
    return st;
}

/* Stage 2: GMRES on group 0 from its best iterate, then the other groups in
 * turn where they come cheap (within group_gmres_steps each, and only if
 * group 0 took no more: else the system is too hard for them to be worth
 * their steps). */
static sv_status stage_gmres(sv_ctx *ctx, const sv_dense_refine_ops *ops, int ngroups,
                             const sv_dense_refine_params *p, const double complex *b, double complex *x, int ldx,
                             double complex *dx, int lddx, sv_dense_refine_result *res)
{
    int s = 0;
    sv_status st = sv_dense_gmres(ctx, ops, b, x, ldx, p->tolerance, p->gmres_steps, &res->backward_error, &s);
    res->gmres_steps = s;
    res->accepted = res->backward_error <= p->accept;
    if (st || !res->accepted || ngroups == 1) return st;
    int steps = s <= p->group_gmres_steps ? p->group_gmres_steps : 0;
    return groups_in_turn(ctx, ops, ngroups, p, steps, 0, x, ldx, dx, lddx, &res->gmres_steps);
}

/* Stages 1 and 2 with the caller's factors. */
static sv_status stage_refine(sv_ctx *ctx, const sv_dense_refine_ops *ops, int ngroups,
                              const sv_dense_refine_params *p, const double complex *b, double complex *x, int ldx,
                              double complex *dx, int lddx, sv_dense_refine_result *res)
{
    sv_threads_saved ss = refine_threads_begin(ops->n);
    sv_status st = sv_dense_refine_block(ctx, ops, ngroups, p, b, x, ldx, dx, lddx, &res->backward_error,
                                         &res->iterations);
    res->accepted = res->backward_error <= p->accept;
    if (!st && !res->accepted && p->gmres_steps > 0) st = stage_gmres(ctx, ops, ngroups, p, b, x, ldx, dx, lddx, res);
    sv_threads_restore(ss);
    return st;
}

/* Stage 3: the caller's factors in double, refined as they need. */
static sv_status stage_fallback(sv_ctx *ctx, const sv_dense_refine_ops *ops, int ngroups,
                                const sv_dense_refine_params *p, const double complex *b, double complex *x, int ldx,
                                double complex *dx, int lddx, sv_dense_refine_result *res)
{
    sv_status st = ops->fallback(ops->user, res->backward_error);
    if (st) return st;
    sv_dense_refine_params pd;
    sv_dense_refine_params_double(&pd);
    pd.group_tolerance = p->group_tolerance;
    pd.group_extra = p->group_extra;
    int its = 0;
    sv_threads_saved ss = refine_threads_begin(ops->n);
    st = sv_dense_refine_block(ctx, ops, ngroups, &pd, b, x, ldx, dx, lddx, &res->backward_error, &its);
    sv_threads_restore(ss);
    res->iterations += its;
    res->fell_back = 1;
    res->accepted = 1;
    return st;
}

sv_status sv_dense_refine(sv_ctx *ctx, const sv_dense_refine_ops *ops, int ngroups,
                          const sv_dense_refine_params *params, const double complex *b, double complex *x, int ldx,
                          double complex *dx, int lddx, sv_dense_refine_result *res)
{
    sv_dense_refine_params p;
    resolve(params, &p);
    sv_dense_refine_result local;
    if (!res) res = &local;
    memset(res, 0, sizeof *res);
    res->backward_error = INFINITY;
    sv_status st = check(ops, ngroups, &p, b, x, ldx, dx, lddx);
    if (st) return st;
    if (ops->n == 0) {
        res->backward_error = 0;
        res->accepted = 1;
        return SV_OK;
    }
    if (!p.singular)
        st = p.direct ? stage_direct(ctx, ops, ngroups, &p, b, x, ldx, dx, lddx, res)
                      : stage_refine(ctx, ops, ngroups, &p, b, x, ldx, dx, lddx, res);
    if (!st && !res->accepted && ops->fallback) st = stage_fallback(ctx, ops, ngroups, &p, b, x, ldx, dx, lddx, res);
    if (!st && !res->accepted && p.singular)
        return sv_error(SV_ERR_SINGULAR, "sv_dense_refine: no usable factors (singular) and no fallback");
    return st;
}
