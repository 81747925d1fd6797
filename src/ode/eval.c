/* Right-hand side and Jacobian over W lanes (slot-major arrays).
 *
 * With a batched callback every lane goes through it (inactive lanes carry a
 * valid old state, so the user's code sees finite numbers; that call is
 * inline in ode_internal.h, and a failing one is repeated here lane by
 * lane); otherwise each masked lane is gathered into contiguous scratch,
 * passed to the scalar callback and scattered back. Either way a lane's
 * numbers depend on that lane's inputs only, which is what makes results
 * independent of the batch. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "ode_internal.h"

static void gather(int n, int W, int w, const double *src, double *dst)
{
    for (int i = 0; i < n; i++) dst[i] = src[(size_t)i * W + w];
}
static void scatter(int n, int W, int w, const double *src, double *dst)
{
    for (int i = 0; i < n; i++) dst[(size_t)i * W + w] = src[i];
}

/* The scalar f for each masked lane: its values and its own return code. */
int ode_eval_f_lanewise(const sv_ode_problem *P, int W, const unsigned char *mask, const double *t, const double *y,
                        const double *p, double *dy, unsigned char *fail, double *scratch)
{
    int n = P->n, np = P->np, any = 0;
    double *ys = scratch, *ps = scratch + n, *ds = scratch + n + np;
    for (int w = 0; w < W; w++) {
        if (!mask[w]) continue;
        gather(n, W, w, y, ys);
        if (np) gather(np, W, w, p, ps);
        int rc = P->d.f(t[w], ys, np ? ps : NULL, ds, P->d.user);
        ode_fail_note(&fail[w], rc);
        any |= rc != 0;
        scatter(n, W, w, ds, dy);
    }
    return any;
}

struct ode_jac_work {
    sv_ctx *ctx;
    double *y, *p, *v, *jv, *f0, *f1, *vals, *dfdt;
    double complex *yc, *fc;
};

sv_status ode_jac_work_create(sv_ctx *ctx, const sv_ode_problem *P, ode_jac_work **out)
{
    int n = P->n;
    *out = NULL;
    ode_jac_work *jw = sv_calloc(ctx, 1, sizeof *jw, "ode Jacobian work");
    if (!jw) return sv_last_status();
    jw->ctx = ctx;
    size_t nd = (size_t)6 * n + (size_t)P->np + (size_t)P->nnz + 8;
    jw->y = sv_alloc(ctx, sizeof(double) * nd, "ode Jacobian work");
    jw->yc = sv_alloc(ctx, sizeof(double complex) * (size_t)(2 * n + 2), "ode Jacobian work");
    if (!jw->y || !jw->yc) {
        sv_status st = sv_last_status();
        ode_jac_work_destroy(jw);
        return st;
    }
    ode_carve(jw->y + n, 7, (double **const[]){&jw->p, &jw->v, &jw->jv, &jw->f0, &jw->f1, &jw->dfdt, &jw->vals},
              (const size_t[]){(size_t)P->np, (size_t)n, (size_t)n, (size_t)n, (size_t)n, (size_t)n, 0});
    jw->fc = jw->yc + n;
    *out = jw;
    return SV_OK;
}

void ode_jac_work_destroy(ode_jac_work *jw)
{
    if (jw) sv_free_each(jw->ctx, (void *const[]){jw->y, jw->yc, jw}, 3);
}

/* One colour's directional derivative d (n values, = J·seed) into the
 * pattern values: entry (i, j) of colour c takes d[i] / scale[j]. */
static void recover(const sv_ode_problem *P, int c, const double *d, const double *scale, double *vals)
{
    sv_sparse_recover_color_values(P->coloring, c, d, scale, vals);
}

/* The Jacobian sources for one lane (gathered into jw): J into jw->vals,
 * ∂f/∂t into jw->dfdt (zero for autonomous problems). Each returns non-zero
 * on a callback failure. */
static int jac_analytic(const sv_ode_problem *P, ode_jac_work *jw, double t, const double *p)
{
    int want_t = P->d.nonautonomous;
    if (!want_t) memset(jw->dfdt, 0, sizeof(double) * (size_t)P->n);
    double *dt = want_t ? jw->dfdt : NULL;
    /* a batched Jacobian with one lane is the scalar one (slot-major, W = 1) */
    return P->d.jac ? P->d.jac(t, jw->y, p, jw->vals, dt, P->d.user)
                    : P->d.jac_batch(1, &t, jw->y, p, jw->vals, dt, P->d.user);
}

/* Im f(y + i·s·e_c) / s = J e_c exactly (no subtraction), so s can be tiny;
 * 1e-100 keeps s² far from underflow in products. */
static int jac_complex_step(const sv_ode_problem *P, ode_jac_work *jw, double t, const double *p, long *nf)
{
    const int n = P->n;
    const double s = 1e-100;
    void *u = P->d.user;
    for (int j = 0; j < n; j++) jw->v[j] = s;
    for (int c = 0; c < P->ncolors; c++) {
        for (int j = 0; j < n; j++) jw->yc[j] = P->color[j] == c ? CMPLX(jw->y[j], s) : jw->y[j];
        if (P->d.f_complex(t, jw->yc, p, jw->fc, u)) return 1;
        (*nf)++;
        for (int i = 0; i < n; i++) jw->jv[i] = cimag(jw->fc[i]);
        recover(P, c, jw->jv, jw->v, jw->vals);
    }
    if (!P->d.nonautonomous) {
        memset(jw->dfdt, 0, sizeof(double) * (size_t)n);
        return 0;
    }
    for (int j = 0; j < n; j++) jw->yc[j] = jw->y[j];
    if (P->d.f_complex(CMPLX(t, s), jw->yc, p, jw->fc, u)) return 1;
    (*nf)++;
    for (int i = 0; i < n; i++) jw->dfdt[i] = cimag(jw->fc[i]) / s;
    return 0;
}

static int jac_jvp(const sv_ode_problem *P, ode_jac_work *jw, double t, const double *p)
{
    const int n = P->n;
    void *u = P->d.user;
    for (int j = 0; j < n; j++) jw->f1[j] = 1.0;
    for (int c = 0; c < P->ncolors; c++) {
        for (int j = 0; j < n; j++) jw->v[j] = P->color[j] == c ? 1.0 : 0.0;
        if (P->d.jvp(t, jw->y, p, 0.0, jw->v, jw->jv, u)) return 1;
        recover(P, c, jw->jv, jw->f1, jw->vals);
    }
    if (!P->d.nonautonomous) {
        memset(jw->dfdt, 0, sizeof(double) * (size_t)n);
        return 0;
    }
    memset(jw->v, 0, sizeof(double) * (size_t)n);
    return P->d.jvp(t, jw->y, p, 1.0, jw->v, jw->dfdt, u);
}

/* Forward differences, increment sqrt(eps)·max(|y_j|, sqrt(eps)) made
 * exactly representable. Inexact: O(sqrt(eps)) relative error in J, which
 * Rodas5P (not a W-method) feels as lost order. */
static int jac_fd(const sv_ode_problem *P, ode_jac_work *jw, double t, const double *p, long *nf)
{
    const int n = P->n;
    const double se = sqrt(DBL_EPSILON);
    void *u = P->d.user;
    double *dl = jw->v;
    for (int c = 0; c < P->ncolors; c++) {
        memcpy(jw->jv, jw->y, sizeof(double) * (size_t)n);
        for (int j = 0; j < n; j++) {
            if (P->color[j] != c) continue;
            double yj = jw->y[j], hj = se * fmax(fabs(yj), se);
            volatile double yp = yj + hj;
            jw->jv[j] = yp;
            dl[j] = yp - yj;
        }
        if (P->d.f(t, jw->jv, p, jw->f1, u)) return 1;
        (*nf)++;
        for (int i = 0; i < n; i++) jw->f1[i] -= jw->f0[i];
        recover(P, c, jw->f1, dl, jw->vals);
    }
    if (!P->d.nonautonomous) {
        memset(jw->dfdt, 0, sizeof(double) * (size_t)n);
        return 0;
    }
    double ht = se * fmax(fabs(t), 1.0);
    volatile double tp = t + ht;
    ht = tp - t;
    if (P->d.f(tp, jw->y, p, jw->dfdt, u)) return 1;
    (*nf)++;
    for (int i = 0; i < n; i++) jw->dfdt[i] = (jw->dfdt[i] - jw->f0[i]) / ht;
    return 0;
}

/* One lane's Jacobian into jw->vals (and jw->dfdt). Returns non-zero on a
 * callback failure. */
static int jac_one(const sv_ode_problem *P, ode_jac_work *jw, double t, long *nf)
{
    const double *p = P->np ? jw->p : NULL;
    switch (P->d.jac_source) {
    case SV_ODE_JAC_ANALYTIC: return jac_analytic(P, jw, t, p);
    case SV_ODE_JAC_COMPLEX_STEP: return jac_complex_step(P, jw, t, p, nf);
    case SV_ODE_JAC_JVP: return jac_jvp(P, jw, t, p);
    case SV_ODE_JAC_FD: return jac_fd(P, jw, t, p, nf);
    }
    return 1;
}

void ode_jacobian_lanewise(const sv_ode_problem *P, ode_jac_work *jw, int W, const unsigned char *mask,
                           const double *t, const double *y, const double *p, const double *f0, double *jvals,
                           double *dfdt, unsigned char *fail, long *nf)
{
    int n = P->n, np = P->np, nnz = P->nnz;
    for (int w = 0; w < W; w++) {
        if (!mask[w]) continue;
        gather(n, W, w, y, jw->y);
        if (np) gather(np, W, w, p, jw->p);
        gather(n, W, w, f0, jw->f0);
        if (jac_one(P, jw, t[w], &nf[w])) {
            fail[w] = ODE_FAIL_HARD;
            continue;
        }
        scatter(nnz, W, w, jw->vals, jvals);
        scatter(n, W, w, jw->dfdt, dfdt);
    }
}
