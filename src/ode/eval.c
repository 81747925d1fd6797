/* Right-hand side and Jacobian over W lanes (slot-major arrays).
 *
 * With a batched callback every lane goes through it (inactive lanes carry a
 * valid old state, so the user's code sees finite numbers; that call is
 * inline in ode_internal.h); otherwise each masked lane is gathered into
 * contiguous scratch, passed to the scalar callback and scattered back. Either way a lane's numbers depend on that
 * lane's inputs only, which is what makes results independent of the batch. */
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

void ode_eval_f_lanewise(const sv_ode_problem *P, int W, const unsigned char *mask, const double *t, const double *y,
                         const double *p, double *dy, unsigned char *fail, double *scratch)
{
    int n = P->n, np = P->np;
    double *ys = scratch, *ps = scratch + n, *ds = scratch + n + np;
    for (int w = 0; w < W; w++) {
        if (!mask[w]) continue;
        gather(n, W, w, y, ys);
        if (np) gather(np, W, w, p, ps);
        if (P->d.f(t[w], ys, np ? ps : NULL, ds, P->d.user)) fail[w] = 1;
        scatter(n, W, w, ds, dy);
    }
}

struct ode_jac_work {
    double *y, *p, *v, *jv, *f0, *f1, *vals, *dfdt;
    double complex *yc, *fc;
};

ode_jac_work *ode_jac_work_create(sv_ctx *ctx, const sv_ode_problem *P, int W)
{
    (void)W;
    int n = P->n;
    ode_jac_work *jw = sv_calloc(ctx, 1, sizeof *jw, "ode Jacobian work");
    if (!jw) return NULL;
    size_t nd = (size_t)6 * n + (size_t)P->np + (size_t)P->nnz + 8;
    jw->y = sv_alloc(ctx, sizeof(double) * nd, "ode Jacobian work");
    jw->yc = sv_alloc(ctx, sizeof(double complex) * (size_t)(2 * n + 2), "ode Jacobian work");
    if (!jw->y || !jw->yc) {
        ode_jac_work_destroy(ctx, jw);
        return NULL;
    }
    jw->p = jw->y + n;
    jw->v = jw->p + P->np;
    jw->jv = jw->v + n;
    jw->f0 = jw->jv + n;
    jw->f1 = jw->f0 + n;
    jw->dfdt = jw->f1 + n;
    jw->vals = jw->dfdt + n;
    jw->fc = jw->yc + n;
    return jw;
}

void ode_jac_work_destroy(sv_ctx *ctx, ode_jac_work *jw)
{
    if (!jw) return;
    sv_free(ctx, jw->y);
    sv_free(ctx, jw->yc);
    sv_free(ctx, jw);
}

/* Scatter one colour's directional derivative d (n values, = J·seed) into
 * the pattern values: entry (i, j) with colour(j) = c takes d[i] / scale[j]. */
static void recover(const sv_ode_problem *P, int c, const double *d, const double *scale, double *vals)
{
    for (int i = 0; i < P->n; i++)
        for (int e = P->rowptr[i]; e < P->rowptr[i + 1]; e++) {
            int j = P->colind[e];
            if (P->color[j] == c) vals[e] = d[i] / scale[j];
        }
}

/* One lane's Jacobian into jw->vals (and jw->dfdt). Returns non-zero on a
 * callback failure. */
static int jac_one(const sv_ode_problem *P, ode_jac_work *jw, double t, long *nf)
{
    int n = P->n, np = P->np;
    const double *p = np ? jw->p : NULL;
    int want_t = P->d.nonautonomous;
    void *u = P->d.user;
    switch (P->d.jac_source) {
    case SV_ODE_JAC_ANALYTIC:
        if (!want_t) memset(jw->dfdt, 0, sizeof(double) * (size_t)n);
        return P->d.jac(t, jw->y, p, jw->vals, want_t ? jw->dfdt : NULL, u);
    case SV_ODE_JAC_COMPLEX_STEP: {
        /* Im f(y + i·s·e_c) / s = J e_c exactly (no subtraction), so s can
         * be tiny; 1e-100 keeps s² far from underflow in products. */
        const double s = 1e-100;
        for (int j = 0; j < n; j++) jw->v[j] = s;
        for (int c = 0; c < P->ncolors; c++) {
            for (int j = 0; j < n; j++) jw->yc[j] = jw->y[j];
            for (int q = P->color_ptr[c]; q < P->color_ptr[c + 1]; q++) {
                int j = P->color_cols[q];
                jw->yc[j] = CMPLX(jw->y[j], s);
            }
            if (P->d.f_complex(t, jw->yc, p, jw->fc, u)) return 1;
            (*nf)++;
            for (int i = 0; i < n; i++) jw->jv[i] = cimag(jw->fc[i]);
            recover(P, c, jw->jv, jw->v, jw->vals);
        }
        if (want_t) {
            for (int j = 0; j < n; j++) jw->yc[j] = jw->y[j];
            if (P->d.f_complex(CMPLX(t, s), jw->yc, p, jw->fc, u)) return 1;
            (*nf)++;
            for (int i = 0; i < n; i++) jw->dfdt[i] = cimag(jw->fc[i]) / s;
        } else {
            memset(jw->dfdt, 0, sizeof(double) * (size_t)n);
        }
        return 0;
    }
    case SV_ODE_JAC_JVP: {
        for (int j = 0; j < n; j++) jw->f1[j] = 1.0;
        for (int c = 0; c < P->ncolors; c++) {
            memset(jw->v, 0, sizeof(double) * (size_t)n);
            for (int q = P->color_ptr[c]; q < P->color_ptr[c + 1]; q++) jw->v[P->color_cols[q]] = 1.0;
            if (P->d.jvp(t, jw->y, p, 0.0, jw->v, jw->jv, u)) return 1;
            recover(P, c, jw->jv, jw->f1, jw->vals);
        }
        if (want_t) {
            memset(jw->v, 0, sizeof(double) * (size_t)n);
            if (P->d.jvp(t, jw->y, p, 1.0, jw->v, jw->dfdt, u)) return 1;
        } else {
            memset(jw->dfdt, 0, sizeof(double) * (size_t)n);
        }
        return 0;
    }
    case SV_ODE_JAC_FD: {
        /* Forward differences, increment sqrt(eps)·max(|y_j|, sqrt(eps))
         * made exactly representable. Inexact: O(sqrt(eps)) relative error
         * in J, which Rodas5P (not a W-method) feels as lost order. */
        const double se = sqrt(DBL_EPSILON);
        double *dl = jw->v;
        for (int c = 0; c < P->ncolors; c++) {
            memcpy(jw->jv, jw->y, sizeof(double) * (size_t)n);
            for (int q = P->color_ptr[c]; q < P->color_ptr[c + 1]; q++) {
                int j = P->color_cols[q];
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
        if (want_t) {
            double ht = se * fmax(fabs(t), 1.0);
            volatile double tp = t + ht;
            ht = tp - t;
            if (P->d.f(tp, jw->y, p, jw->dfdt, u)) return 1;
            (*nf)++;
            for (int i = 0; i < n; i++) jw->dfdt[i] = (jw->dfdt[i] - jw->f0[i]) / ht;
        } else {
            memset(jw->dfdt, 0, sizeof(double) * (size_t)n);
        }
        return 0;
    }
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
        if (P->d.jac_source == SV_ODE_JAC_ANALYTIC && !P->d.jac) {
            fail[w] = 1;
            continue;
        }
        if (jac_one(P, jw, t[w], &nf[w])) {
            fail[w] = 1;
            continue;
        }
        scatter(nnz, W, w, jw->vals, jvals);
        scatter(n, W, w, jw->dfdt, dfdt);
    }
}
