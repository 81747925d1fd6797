/* Tsit5 step attempt over W lanes: 7 stages, first same as last (the last
 * stage is f(t + h, y_new), the next step's first), error h·Σ btilde_i k_i. */
#include <math.h>
#include <string.h>

#include "lanes.h"

/* out = Σ_{j<s} c_j k_j over nw values, one vectorisable pass per stage count */
#define K(j) k[(size_t)(j) * nw + q]
static void tsit_combine(size_t nw, double *out, const double *c, const double *k, int s)
{
    switch (s) {
    case 1: for (size_t q = 0; q < nw; q++) out[q] = c[0] * K(0); break;
    case 2: for (size_t q = 0; q < nw; q++) out[q] = c[0] * K(0) + c[1] * K(1); break;
    case 3: for (size_t q = 0; q < nw; q++) out[q] = c[0] * K(0) + c[1] * K(1) + c[2] * K(2); break;
    case 4: for (size_t q = 0; q < nw; q++) out[q] = c[0] * K(0) + c[1] * K(1) + c[2] * K(2) + c[3] * K(3); break;
    case 5:
        for (size_t q = 0; q < nw; q++) out[q] = c[0] * K(0) + c[1] * K(1) + c[2] * K(2) + c[3] * K(3) + c[4] * K(4);
        break;
    case 6:
        for (size_t q = 0; q < nw; q++)
            out[q] = c[0] * K(0) + c[1] * K(1) + c[2] * K(2) + c[3] * K(3) + c[4] * K(4) + c[5] * K(5);
        break;
    default:
        for (size_t q = 0; q < nw; q++)
            out[q] = c[0] * K(0) + c[1] * K(1) + c[2] * K(2) + c[3] * K(3) + c[4] * K(4) + c[5] * K(5) + c[6] * K(6);
        break;
    }
}
#undef K

sv_status ode_tsit5_attempt(ode_lanes *L)
{
    const tsit5_tab *T = &sv_ode_tsit5;
    const int W = L->W, n = L->n;
    const size_t nw = (size_t)n * W;
    unsigned char em[ODE_WMAX];
    for (int w = 0; w < W; w++) {
        L->fail[w] = 0;
        L->bad[w] = 0;
        em[w] = L->active[w];
    }
    memcpy(L->k, L->f0, sizeof(double) * nw);
    for (int s = 1; s < 7; s++) {
        /* U = y + h·(Σ_j a_sj k_j): the sum is one flat pass over all lanes */
        tsit_combine(nw, L->U, T->a[s], L->k, s);
        for (int i = 0; i < n; i++)
            for (int w = 0; w < W; w++) {
                size_t q = (size_t)i * W + w;
                L->U[q] = L->y[q] + L->h[w] * L->U[q];
            }
        for (int w = 0; w < W; w++) L->tstage[w] = ode_min(L->t[w] + T->c[s] * L->h[w], L->tcap[w]);
        ode_eval_f(L->P, W, em, L->tstage, L->U, L->p, L->k + (size_t)s * nw, L->fail, L->scratch);
        /* a lane whose f refused or failed takes no further stages */
        for (int w = 0; w < W; w++)
            if (em[w]) {
                L->st[w].nf++;
                em[w] = !L->fail[w];
            }
    }
    memcpy(L->ynew, L->U, sizeof(double) * nw);
    tsit_combine(nw, L->err, T->btilde, L->k, 7);
    for (int i = 0; i < n; i++)
        for (int w = 0; w < W; w++) L->err[(size_t)i * W + w] *= L->h[w];
    double en[ODE_WMAX];
    ode_error_norms(L, L->err, en);
    for (int w = 0; w < W; w++) {
        if (!L->active[w]) continue;
        double e = en[w];
        L->eest[w] = isfinite(e) ? e : INFINITY;
    }
    return SV_OK;
}

void ode_tsit5_interp(const ode_lanes *L, int w, double th, double *out)
{
    const tsit5_tab *T = &sv_ode_tsit5;
    const int W = L->W, n = L->n;
    const size_t nw = (size_t)n * W;
    double b[7];
    for (int s = 0; s < 7; s++)
        b[s] = th * (T->r[s][0] + th * (T->r[s][1] + th * (T->r[s][2] + th * T->r[s][3])));
    for (int i = 0; i < n; i++) {
        size_t q = (size_t)i * W + w;
        double acc = 0;
        for (int s = 0; s < 7; s++) acc += b[s] * L->k[(size_t)s * nw + q];
        out[i] = L->y[q] + L->h[w] * acc;
    }
}
