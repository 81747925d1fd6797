/* Rodas5P's sensitivity stages (the equations in sens.h): each stage of
 * the state (rodas5p.c) is followed by the same stage for every direction,
 * solved with the state's factor of M. The terms fixed over a step — g at
 * the start, the Jacobian's derivatives dJ_j and ∂g_j/∂t — are computed
 * when the lane's Jacobian is (a rejected step retries with them). */
#include <math.h>
#include <string.h>

#include "sens.h"
#include "stage_sum.h"

void ode_sens_rodas5p_prepare(ode_lanes *L, const unsigned char *moved)
{
    ode_sens *S = L->sens;
    const int W = L->W < ODE_WMAX ? L->W : ODE_WMAX;
    int any = 0;
    for (int w = 0; w < W; w++) any |= moved[w];
    if (!any) return;
    ode_sens_rhs(L, moved, L->t, L->y, L->f0, L->jv, S->S, S->G);
    /* G0 is kept for the retries of the lanes that did not move */
    ode_sens_copy_lanes(L, moved, S->G, S->G0);
    /* g at an accepted state: a refusal there cannot be helped */
    for (int w = 0; w < W; w++)
        if (moved[w] && L->fail[w]) L->fail[w] = ODE_FAIL_HARD;
    ode_sens_second(L, moved);
}

/* rhs += dJ·k over all lanes (dJ: pattern values, slot-major). */
ODE_INLINE void add_dj_times(const sv_ode_problem *P, const double *restrict dJ, const double *restrict k,
                             double *restrict rhs, const int W)
{
    const int *rp = P->rowptr, *ci = P->colind;
    for (int i = 0; i < P->n; i++) {
        double acc[ODE_WMAX];
        for (int w = 0; w < W; w++) acc[w] = rhs[(size_t)i * W + w];
        for (int e = rp[i]; e < rp[i + 1]; e++) {
            const double *d = dJ + (size_t)e * W, *x = k + (size_t)ci[e] * W;
            for (int w = 0; w < W; w++) acc[w] += d[w] * x[w];
        }
        for (int w = 0; w < W; w++) rhs[(size_t)i * W + w] = acc[w];
    }
}

/* Direction j's right-hand side at stage s: G + h d_s ∂g/∂t + (1/h) Σ C_sm l_m
 * + dJ·k_s (the state's order of operations, then the coupling). */
ODE_INLINE void stage_rhs(ode_lanes *L, int s, int j, const double *G, const double *hd, const double *hinv,
                          const int W)
{
    const rodas5p_tab *T = &sv_ode_rodas5p;
    ode_sens *S = L->sens;
    const int n = L->n;
    const size_t nw = S->nw;
    const double *lj = S->l + (size_t)j * ODE_SENS_STAGES * nw, *Gj = G + (size_t)j * nw;
    const double *gt = S->gt + (size_t)j * nw;
    if (s > 0) ode_stage_sum(nw, S->rhs, NULL, T->C[s], lj, s);
    for (int i = 0; i < n; i++) {
        double *r = S->rhs + (size_t)i * W;
        const double *g = Gj + (size_t)i * W, *dt = gt + (size_t)i * W;
        if (s > 0)
            for (int w = 0; w < W; w++) r[w] = g[w] + hd[w] * dt[w] + hinv[w] * r[w];
        else
            for (int w = 0; w < W; w++) r[w] = g[w] + hd[w] * dt[w];
    }
    add_dj_times(L->P, S->dJ + (size_t)j * L->nnz * W, L->k + (size_t)s * nw, S->rhs, W);
}

ODE_INLINE sv_status stage_w(ode_lanes *L, int s, unsigned char *em, const double *hinv, const int W)
{
    const rodas5p_tab *T = &sv_ode_rodas5p;
    ode_sens *S = L->sens;
    const int ns = S->ns;
    const size_t nw = S->nw;
    const double *G = S->G0;
    if (s > 0) {
        for (int j = 0; j < ns; j++) {
            const double *lj = S->l + (size_t)j * ODE_SENS_STAGES * nw;
            ode_stage_sum(nw, S->SU + (size_t)j * nw, S->S + (size_t)j * nw, T->a[s], lj, s);
        }
        /* the state's stage left U and f(t_s, U) in L->U and L->fv */
        ode_sens_rhs(L, em, L->tstage, L->U, L->fv, NULL, S->SU, S->G);
        for (int w = 0; w < W; w++)
            if (em[w] && L->fail[w]) em[w] = 0;
        G = S->G;
    }
    double hd[ODE_WMAX];
    for (int w = 0; w < W; w++) hd[w] = L->h[w] * T->d[s];
    sv_status st = SV_OK;
    for (int j = 0; j < ns && st == SV_OK; j++) {
        stage_rhs(L, s, j, G, hd, hinv, W);
        int sw = 0;
        st = ode_lin_solve(L->lin, L->jv, L->shift, S->rhs, S->l + ((size_t)j * ODE_SENS_STAGES + s) * nw, &sw);
        for (int w = 0; w < W; w++)
            if (em[w]) {
                L->st[w].nsolve++;
                L->st[w].nrefine += sw;
            }
    }
    return st;
}

sv_status ode_sens_rodas5p_stage(ode_lanes *L, int s, unsigned char *em, const double *hinv)
{
    switch (L->W) {
    case 1: return stage_w(L, s, em, hinv, 1);
    case 2: return stage_w(L, s, em, hinv, 2);
    case 4: return stage_w(L, s, em, hinv, 4);
    default: return stage_w(L, s, em, hinv, 8);
    }
}

/* S_new = S_8 + l_8 (SU holds S_8 after the last stage), and l_8's norm in
 * the error estimate. */
void ode_sens_rodas5p_finish(ode_lanes *L)
{
    ode_sens *S = L->sens;
    const size_t nw = S->nw;
    for (int j = 0; j < S->ns; j++) {
        const double *l8 = S->l + ((size_t)j * ODE_SENS_STAGES + 7) * nw, *su = S->SU + (size_t)j * nw;
        double *sn = S->Snew + (size_t)j * nw;
        for (size_t q = 0; q < nw; q++) sn[q] = su[q] + l8[q];
    }
    ode_sens_error(L, S->l + 7 * nw, (size_t)ODE_SENS_STAGES * nw);
}
