/* A DAE's initial values (ode.h's sv_ode_init): the algebraic equations
 * 0 = g(t0, y, z) (M's zero rows) checked at each trajectory's y0, or
 * solved for the algebraic variables z (M's zero columns) by Newton's
 * method from the given values with the differential ones kept — the
 * problem IDA's IDACalcIC solves with IDA_YA_YDP_INIT (Brown, Hindmarsh &
 * Petzold, SIAM J. Sci. Comput. 19 (1998) 1495, the semi-explicit index-1
 * case). The step uses ∂g/∂z from the problem's Jacobian source, as a
 * dense na × na block factored by LAPACK (na is the handful of algebraic
 * variables), with a halving line search on max|g|.
 *
 * One Newton correction measures consistency: y0 passes the check when
 * that correction is within every algebraic variable's tolerance
 * (atol_j + rtol·|z_j|, the solve's own), the size of error the
 * integrator accepts per step. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "init.h"
#include "span.h"

enum { ODE_INIT_MAXIT = 20, ODE_INIT_HALVINGS = 10 };
/* Newton stops when its correction is this fraction of the tolerance. */
#define ODE_INIT_CONVERGED 1e-6

typedef struct newton {
    const sv_ode_problem *P;
    const sv_ode_options *o;
    double t0;
    const double *p;
    double *y, *f, *ytry, *ftry, *jv, *dfdt, *G, *r, *g, *dy, *jvr;
    int *ipiv;
    ode_jac_work *jw;
    long nf;
} newton;

static double atol_of(const newton *N, int j) { return N->o->atol_vec ? N->o->atol_vec[j] : N->o->atol; }

/* f at (t0, y) into out; a callback failure is the caller's error. */
static int eval_f(newton *N, const double *y, double *out)
{
    N->nf++;
    return N->P->d.f(N->t0, y, N->p, out, N->P->d.user);
}

/* The constraints' residuals g (nalg values) from f: the algebraic rows of
 * a semi-explicit M, or wᵀf for its left null vectors (mass.c). */
static void constraints(const newton *N, const double *f, double *g)
{
    const ode_mass *m = N->P->mass;
    const int n = N->P->n;
    for (int k = 0; k < m->nalg; k++) {
        if (m->alg_row) {
            g[k] = f[m->alg_row[k]];
        } else {
            double s = 0;
            for (int i = 0; i < n; i++) s += m->wl[i + (size_t)n * k] * f[i];
            g[k] = s;
        }
    }
}

/* max_k |g_k| at f, and its k (NaN counts as the largest). */
static double max_residual(const newton *N, const double *f, int *which)
{
    constraints(N, f, N->g);
    double worst = -1;
    for (int k = 0; k < N->P->mass->nalg; k++) {
        double a = fabs(N->g[k]);
        if (!(a <= worst)) worst = a, *which = k;
    }
    return worst;
}

/* G = ∂g/∂z at y, column-major: J's block on the algebraic rows and
 * columns, or Wᵀ J V. */
static void constraint_jacobian(newton *N)
{
    const sv_ode_problem *P = N->P;
    const ode_mass *m = P->mass;
    const int n = P->n, na = m->nalg;
    memset(N->G, 0, sizeof(double) * (size_t)na * na);
    if (m->alg_row) {
        for (int k = 0; k < na; k++) {
            int i = m->alg_row[k];
            for (int e = P->rowptr[i]; e < P->rowptr[i + 1]; e++) {
                int j = P->colind[e], l = 0;
                while (l < na && m->alg_col[l] != j) l++;
                if (l < na) N->G[k + (size_t)na * l] = N->jv[e];
            }
        }
        return;
    }
    memset(N->jvr, 0, sizeof(double) * (size_t)n * na); /* J V */
    for (int l = 0; l < na; l++)
        for (int e = 0; e < P->nnz; e++)
            N->jvr[P->erow[e] + (size_t)n * l] += N->jv[e] * m->vr[P->colind[e] + (size_t)n * l];
    for (int l = 0; l < na; l++)
        for (int k = 0; k < na; k++) {
            double s = 0;
            for (int i = 0; i < n; i++) s += m->wl[i + (size_t)n * k] * N->jvr[i + (size_t)n * l];
            N->G[k + (size_t)na * l] = s;
        }
}

/* Newton's correction at y: δ = G⁻¹ g (in r) and the change of y it
 * means, dy = V δ (the algebraic variables alone in the semi-explicit
 * form). Returns 0, a positive LAPACK info (G singular) or −1 (a Jacobian
 * callback failed). */
static int correction(newton *N)
{
    const sv_ode_problem *P = N->P;
    const ode_mass *m = P->mass;
    const int n = P->n, na = m->nalg;
    unsigned char mask = 1, fail = 0;
    ode_jacobian_lanewise(P, N->jw, 1, &mask, &N->t0, N->y, N->p, N->f, N->jv, N->dfdt, &fail, &N->nf);
    if (fail) return -1;
    constraint_jacobian(N);
    constraints(N, N->f, N->r);
    int info = (int)LAPACKE_dgesv(LAPACK_COL_MAJOR, na, 1, N->G, na, N->ipiv, N->r, na);
    if (info) return info;
    for (int j = 0; j < n; j++) N->dy[j] = 0;
    for (int l = 0; l < na; l++) {
        if (m->alg_col) {
            N->dy[m->alg_col[l]] = N->r[l];
        } else {
            for (int j = 0; j < n; j++) N->dy[j] += m->vr[j + (size_t)n * l] * N->r[l];
        }
    }
    return 0;
}

/* The correction's size against the tolerances (max over the variables),
 * and the variable where it is largest. */
static double weighted_size(const newton *N, int *which)
{
    double worst = -1;
    for (int j = 0; j < N->P->n; j++) {
        double tol = atol_of(N, j) + N->o->rtol * fabs(N->y[j]);
        double s = tol > 0 ? fabs(N->dy[j]) / tol : (N->dy[j] != 0 ? INFINITY : 0);
        if (!(s <= worst)) worst = s, *which = j;
    }
    return worst;
}

/* "algebraic equation i has residual f_i(t0, y0) = …" or, for a general
 * singular M, the k-th constraint wᵀf. */
static void describe_residual(const newton *N, int k, char *buf, size_t len)
{
    const ode_mass *m = N->P->mass;
    if (m->alg_row)
        snprintf(buf, len, "algebraic equation %d has residual f_%d(t0, y0) = %.6g", m->alg_row[k], m->alg_row[k],
                 N->g[k]);
    else
        snprintf(buf, len, "algebraic constraint %d (wᵀf with w a left null vector of M) has residual %.6g", k,
                 N->g[k]);
}

static sv_status fail_singular(const newton *N, long tr, int info, const char *nm)
{
    if (info < 0)
        return sv_error(SV_ERR_ARG, "%s: trajectory %ld: the Jacobian callback failed at t0 (consistent initial "
                        "values)", nm, tr);
    const ode_mass *m = N->P->mass;
    char which[64];
    if (m->alg_col)
        snprintf(which, sizeof which, "variable y_%d", m->alg_col[info - 1]);
    else
        snprintf(which, sizeof which, "null-space direction %d", info - 1);
    return sv_error(SV_ERR_SINGULAR, "%s: trajectory %ld: ∂g/∂z, the algebraic equations' Jacobian in the algebraic "
                    "variables, is singular at t0 (LAPACK dgesv: zero pivot %d, %s): the DAE is not of index 1 "
                    "there", nm, tr, info, which);
}

/* The check: one correction from y0, within the tolerances. */
static sv_status check_one(newton *N, long tr, const char *nm)
{
    if (eval_f(N, N->y, N->f))
        return sv_error(SV_ERR_ARG, "%s: trajectory %ld: f failed at (t0, y0)", nm, tr);
    int info = correction(N);
    if (info) return fail_singular(N, tr, info, nm);
    int j = 0, k = 0;
    double size = weighted_size(N, &j);
    if (size <= 1) return SV_OK;
    max_residual(N, N->f, &k);
    char res[160];
    describe_residual(N, k, res, sizeof res);
    return sv_error(SV_ERR_ARG, "%s: trajectory %ld: initial values not consistent: %s; Newton's correction changes "
                    "y_%d by %.6g, %.3g times its tolerance (set options.init = compute to compute consistent "
                    "algebraic variables)", nm, tr, res, j, -N->dy[j], size);
}

/* Newton with a halving line search on max|g|. */
static sv_status compute_one(newton *N, long tr, const char *nm)
{
    const int n = N->P->n;
    if (eval_f(N, N->y, N->f))
        return sv_error(SV_ERR_ARG, "%s: trajectory %ld: f failed at (t0, y0)", nm, tr);
    int k = 0, j = 0;
    for (int it = 0; it < ODE_INIT_MAXIT; it++) {
        int info = correction(N);
        if (info) return fail_singular(N, tr, info, nm);
        double size = weighted_size(N, &j), g0 = max_residual(N, N->f, &k), lambda = 1;
        int ok = 0; /* whether ytry's f is in ftry */
        for (int h = 0; h <= ODE_INIT_HALVINGS; h++, lambda *= 0.5) {
            for (int q = 0; q < n; q++) N->ytry[q] = N->y[q] - lambda * N->dy[q];
            ok = !eval_f(N, N->ytry, N->ftry); /* f failing there (outside its domain): a shorter step */
            if (ok && max_residual(N, N->ftry, &k) <= g0) break;
        }
        if (!ok)
            return sv_error(SV_ERR_NOCONV, "%s: trajectory %ld: consistent initial values not found: f failed "
                            "along every Newton step tried from iteration %d", nm, tr, it);
        memcpy(N->y, N->ytry, sizeof(double) * (size_t)n);
        memcpy(N->f, N->ftry, sizeof(double) * (size_t)n);
        if (lambda == 1 && size <= ODE_INIT_CONVERGED) return SV_OK;
    }
    max_residual(N, N->f, &k);
    char res[160];
    describe_residual(N, k, res, sizeof res);
    return sv_error(SV_ERR_NOCONV, "%s: trajectory %ld: consistent initial values not found: after %d Newton "
                    "iterations %s", nm, tr, ODE_INIT_MAXIT, res);
}

static sv_status newton_init(sv_ctx *ctx, newton *N, const sv_ode_problem *P, const sv_ode_options *o, double t0)
{
    const size_t n = (size_t)P->n, na = (size_t)P->mass->nalg;
    memset(N, 0, sizeof *N);
    N->P = P;
    N->o = o;
    N->t0 = t0;
    N->y = sv_alloc(ctx, sizeof(double) * (7 * n + (size_t)P->nnz + na * na + 2 * na + n * na), "ode initial values");
    N->ipiv = sv_alloc(ctx, sizeof(int) * (na ? na : 1), "ode initial values");
    if (!N->y || !N->ipiv) return sv_last_status();
    N->f = N->y + n;
    N->ytry = N->f + n;
    N->ftry = N->ytry + n;
    N->dfdt = N->ftry + n;
    N->jv = N->dfdt + 2 * n; /* dfdt: n, then room */
    N->G = N->jv + P->nnz;
    N->r = N->G + na * na;
    N->g = N->r + na;
    N->dy = N->g + na;
    N->jvr = N->dy + n;
    return ode_jac_work_create(ctx, P, &N->jw);
}

static void newton_free(sv_ctx *ctx, newton *N)
{
    ode_jac_work_destroy(N->jw);
    sv_free_each(ctx, (void *const[]){N->y, N->ipiv}, 2);
}

/* The report of a computation: the largest change, in the context's log. */
static void log_changes(sv_ctx *ctx, const sv_ode_problem *P, const sv_ode_ensemble *E, const double *y0c,
                        long rows, const char *nm)
{
    const int n = P->n;
    double worst = 0;
    long wt = 0;
    int wj = -1;
    for (long tr = 0; tr < rows; tr++) {
        const double *g = E->y0 + (E->y0_shared ? 0 : (size_t)tr * n), *c = y0c + (size_t)tr * n;
        for (int j = 0; j < n; j++) {
            double d = fabs(c[j] - g[j]);
            if (d > worst) worst = d, wt = tr, wj = j;
        }
    }
    if (wj < 0) {
        sv_log(ctx, SV_LOG_INFO, "%s: initial values already consistent (%ld computed, none changed)", nm, rows);
        return;
    }
    const double *g = E->y0 + (E->y0_shared ? 0 : (size_t)wt * n);
    sv_log(ctx, SV_LOG_INFO, "%s: consistent initial values computed (%ld); largest change: trajectory %ld, y_%d "
           "from %.17g to %.17g", nm, rows, wt, wj, g[wj], y0c[(size_t)wt * n + wj]);
}

sv_status ode_init_values(sv_ctx *ctx, const sv_ode_problem *P, const sv_ode_options *o, const sv_ode_ensemble *E,
                          double **y0c, int *y0c_shared)
{
    *y0c = NULL;
    *y0c_shared = 0;
    if (!P->mass || P->mass->nalg == 0 || E->ntraj == 0) return SV_OK;
    const char *nm = P->d.name ? P->d.name : "problem";
    const int n = P->n, np = P->np;
    const int shared = E->y0_shared && (np == 0 || E->params_shared) && !E->t0_traj;
    const long rows = shared ? 1 : E->ntraj;
    const int compute = o->init == SV_ODE_INIT_COMPUTE;
    double *out = NULL;
    if (compute) {
        out = sv_alloc(ctx, sizeof(double) * (size_t)rows * n, "ode consistent initial values");
        if (!out) return sv_last_status();
    }
    newton N;
    sv_status st = newton_init(ctx, &N, P, o, E->t0);
    for (long tr = 0; tr < rows && st == SV_OK; tr++) {
        N.t0 = ode_span_t0(E, tr);
        const double *y0 = E->y0 + (E->y0_shared ? 0 : (size_t)tr * n);
        N.p = np ? E->params + (E->params_shared ? 0 : (size_t)tr * np) : NULL;
        memcpy(N.y, y0, sizeof(double) * (size_t)n);
        st = compute ? compute_one(&N, tr, nm) : check_one(&N, tr, nm);
        if (st == SV_OK && compute) memcpy(out + (size_t)tr * n, N.y, sizeof(double) * (size_t)n);
    }
    newton_free(ctx, &N);
    if (st != SV_OK) {
        sv_free(ctx, out);
        return st;
    }
    if (compute) log_changes(ctx, P, E, out, rows, nm);
    *y0c = out;
    *y0c_shared = shared;
    return SV_OK;
}
