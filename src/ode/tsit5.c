/* Tsit5 step attempt over W lanes: 7 stages, first same as last (the last
 * stage is f(t + h, y_new), the next step's first), error h·Σ btilde_i k_i.
 * With a (non-singular) mass matrix each stage is the slope M⁻¹f. */
#include <math.h>
#include <string.h>

#include "lanes.h"
#include "norms.h"
#include "sens.h"
#include "stage_sum.h"
#include "steppers.h"

sv_status ode_tsit5_attempt(ode_lanes *L)
{
    const tsit5_tab *T = &sv_ode_tsit5;
    const int W = L->W, rows = L->n * L->nvec;
    const size_t kst = L->kstride;
    unsigned char em[ODE_WMAX];
    for (int w = 0; w < W; w++) {
        L->fail[w] = 0;
        L->bad[w] = 0;
        em[w] = L->active[w];
    }
    /* the state and the sensitivities side by side (lanes.h): one pass each */
    if (L->sens) ode_sens_tsit5_start(L, em);
    memcpy(L->k, L->f0, sizeof(double) * kst);
    for (int s = 1; s < 7; s++) {
        /* U = y + h·(Σ_j a_sj k_j): the sum is one flat pass over all lanes */
        ode_stage_sum_plain(kst, L->U, T->a[s], L->k, s);
        for (int i = 0; i < rows; i++)
            for (int w = 0; w < W; w++) {
                size_t q = (size_t)i * W + w;
                L->U[q] = L->y[q] + L->h[w] * L->U[q];
            }
        for (int w = 0; w < W; w++) L->tstage[w] = ode_min(L->t[w] + T->c[s] * L->h[w], L->tcap[w]);
        ode_eval_f(L->P, W, em, L->tstage, L->U, L->p, L->k + (size_t)s * kst, L->fail, L->scratch);
        /* a lane whose f refused or failed takes no further stages */
        for (int w = 0; w < W; w++)
            if (em[w]) {
                L->st[w].nf++;
                em[w] = !L->fail[w];
            }
        ode_tsit5_slope(L, em, L->k + (size_t)s * kst);
        if (L->sens) ode_sens_tsit5_stage(L, s, em);
    }
    memcpy(L->ynew, L->U, sizeof(double) * kst);
    ode_stage_sum_plain(kst, L->err, T->btilde, L->k, 7);
    for (int i = 0; i < rows; i++)
        for (int w = 0; w < W; w++) L->err[(size_t)i * W + w] *= L->h[w];
    double en[ODE_WMAX];
    ode_error_norms(L, L->err, en);
    for (int w = 0; w < W; w++) {
        if (!L->active[w]) continue;
        double e = en[w];
        L->eest[w] = isfinite(e) ? e : INFINITY;
    }
    if (L->sens) ode_sens_error_norms(L, L->err + (size_t)L->n * W);
    return SV_OK;
}

void ode_tsit5_slope(ode_lanes *L, const unsigned char *mask, double *f)
{
    if (L->P->mass) ode_mass_solve(L->P->mass, L->n, L->W, mask, f, L->scratch);
}

void ode_tsit5_interp(const ode_lanes *L, int w, double th, int r0, int r1, double *out)
{
    const tsit5_tab *T = &sv_ode_tsit5;
    const int W = L->W;
    double b[7];
    for (int s = 0; s < 7; s++)
        b[s] = th * (T->r[s][0] + th * (T->r[s][1] + th * (T->r[s][2] + th * T->r[s][3])));
    for (int i = r0; i < r1; i++) {
        size_t q = (size_t)i * W + w;
        double acc = 0;
        for (int s = 0; s < 7; s++) acc += b[s] * L->k[(size_t)s * L->kstride + q];
        out[i - r0] = L->y[q] + L->h[w] * acc;
    }
}
