/* Weighted RMS norms over the lanes (norms.h): the state's error, the
 * sensitivity directions' errors, and the sizes of the first-step estimate.
 * Each lane's sum runs over the components in order, so a lane's norm does
 * not depend on W; the lane-count copies only let the loops over w
 * vectorise without remainder code. */
#include <math.h>

#include "norms.h"
#include "sens.h"

ODE_INLINE void error_norms_w(const ode_lanes *L, const double *e, double *out, const int W)
{
    const int n = L->n;
    const double rtol = L->o->rtol;
    double acc[ODE_WMAX] = {0};
    for (int i = 0; i < n; i++) {
        const double *y = L->y + (size_t)i * W, *yn = L->ynew + (size_t)i * W, *ei = e + (size_t)i * W;
        double at = L->atolv[i], wt = L->wts[i];
        for (int w = 0; w < W; w++) {
            double sc = at + ode_max(fabs(y[w]), fabs(yn[w])) * rtol;
            double r = wt * ei[w] / sc;
            acc[w] += r * r;
        }
    }
    for (int w = 0; w < W; w++) out[w] = sqrt(acc[w] / n);
}

void ode_error_norms(const ode_lanes *L, const double *e, double *out)
{
    switch (L->W) {
    case 1: error_norms_w(L, e, out, 1); break;
    case 2: error_norms_w(L, e, out, 2); break;
    case 4: error_norms_w(L, e, out, 4); break;
    default: error_norms_w(L, e, out, 8); break;
    }
}

/* sqrt(mean((wt_i e_i / sc_i)²)), sc_i = atol_i/scale + rtol·max(|S_i|, |S_new,i|);
 * a component with sc_i = 0 (atol 0 and S = 0) counts only if e_i ≠ 0. */
ODE_INLINE void sens_error_norms_w(ode_lanes *L, const double *e, const int W)
{
    const ode_sens *S = L->sens;
    const int n = L->n;
    const double rtol = L->o->rtol;
    for (int j = 0; j < S->ns; j++) {
        const double *ej = e + (size_t)j * S->nw, *sj = S->S + (size_t)j * S->nw, *nj = S->Snew + (size_t)j * S->nw;
        const double *atsc = S->atsc + (size_t)j * S->nw;
        double acc[ODE_WMAX] = {0};
        for (int i = 0; i < n; i++) {
            const double wt = L->wts[i];
            for (int w = 0; w < W; w++) {
                size_t q = (size_t)i * W + w;
                double sc = atsc[q] + ode_max(fabs(sj[q]), fabs(nj[q])) * rtol;
                double r = sc > 0 ? wt * ej[q] / sc : (ej[q] != 0 ? INFINITY : 0);
                acc[w] += r * r;
            }
        }
        for (int w = 0; w < W; w++) {
            if (!L->active[w]) continue;
            double en = sqrt(acc[w] / n);
            L->eest[w] = !isfinite(en) ? INFINITY : ode_max(L->eest[w], en);
        }
    }
}

void ode_sens_error_norms(ode_lanes *L, const double *e)
{
    if (L->o->sens_errcon == SV_ODE_SENS_ERR_STATE) return;
    switch (L->W) {
    case 1: sens_error_norms_w(L, e, 1); break;
    case 2: sens_error_norms_w(L, e, 2); break;
    case 4: sens_error_norms_w(L, e, 4); break;
    default: sens_error_norms_w(L, e, 8); break;
    }
}

double ode_lane_norm(const ode_lanes *L, int w, const double *v, const double *y)
{
    const int W = L->W, n = L->n;
    double acc = 0;
    for (int i = 0; i < n; i++) {
        size_t q = (size_t)i * W + w;
        double sk = L->atolv[i] + fabs(y[q]) * L->o->rtol;
        double r = L->wts[i] * v[q] / sk;
        acc += r * r;
    }
    return sqrt(acc / n);
}
