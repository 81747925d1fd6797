/* Rodas5P's sensitivity stages (the equations in sens.h). The directions'
 * vectors follow the state's in the lanes' arrays, so rodas5p.c forms their
 * stage values and right-hand sides in its own passes; here: g at each
 * stage, the coupling H_j·k_i once the state's k_i is known, and the
 * directions' solves with the state's factor. The terms fixed over a step —
 * g at the start, the Jacobian's derivatives dJ_j and ∂g_j/∂t — are
 * computed when the lane's Jacobian is (a rejected step retries with them). */
#include <math.h>
#include <string.h>

#include "sens.h"

void ode_sens_rodas5p_prepare(ode_lanes *L, const unsigned char *moved)
{
    ode_sens *S = L->sens;
    const int W = L->W < ODE_WMAX ? L->W : ODE_WMAX;
    int any = 0;
    for (int w = 0; w < W; w++) any |= moved[w];
    if (!any) return;
    /* g at the start into f0's direction vectors (kept for the retries of
     * the lanes that did not move; fv is free here) */
    ode_sens_rhs(L, moved, L->t, L->y, L->f0, L->jv, S->S, S->G);
    ode_sens_copy_lanes(L, moved, S->G, S->G0);
    /* g at an accepted state: a refusal there cannot be helped */
    for (int w = 0; w < W; w++)
        if (moved[w] && L->fail[w]) L->fail[w] = ODE_FAIL_HARD;
    ode_sens_second(L, moved);
}

void ode_sens_rodas5p_g(ode_lanes *L, unsigned char *em)
{
    ode_sens *S = L->sens;
    /* the state's stage left U (and S_i after it) and f(t_i, U) in fv */
    ode_sens_rhs(L, em, L->tstage, L->U, L->fv, NULL, S->SU, S->G);
    for (int w = 0; w < L->W; w++)
        if (em[w] && L->fail[w]) em[w] = 0;
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

/* Stage s's right-hand sides (rodas5p.c's, already in L->rhs) plus H_j·k_s,
 * then l_sj = M⁻¹ rhs_j for every direction. */
ODE_INLINE sv_status solve_w(ode_lanes *L, int s, const unsigned char *em, const int W)
{
    ode_sens *S = L->sens;
    const size_t nw = S->nw;
    double *ks = L->k + (size_t)s * L->kstride;
    sv_status st = SV_OK;
    for (int j = 0; j < S->ns && st == SV_OK; j++) {
        double *rhs = L->rhs + (size_t)(1 + j) * nw;
        add_dj_times(L->P, S->dJ + (size_t)j * L->nnz * W, ks, rhs, W);
        int sw = 0;
        st = ode_lin_solve(L->lin, L->jv, L->shift, rhs, ks + (size_t)(1 + j) * nw, &sw);
        for (int w = 0; w < W; w++)
            if (em[w]) {
                L->st[w].nsolve++;
                L->st[w].nrefine += sw;
            }
    }
    return st;
}

sv_status ode_sens_rodas5p_solve(ode_lanes *L, int s, const unsigned char *em)
{
    switch (L->W) {
    case 1: return solve_w(L, s, em, 1);
    case 2: return solve_w(L, s, em, 2);
    case 4: return solve_w(L, s, em, 4);
    default: return solve_w(L, s, em, 8);
    }
}
