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
#include "sens_csr.h"

void ode_sens_rodas5p_prepare(ode_lanes *L, const unsigned char *moved)
{
    ode_sens *S = L->sens;
    const int W = L->W < ODE_WMAX ? L->W : ODE_WMAX;
    int any = 0, all = 1;
    for (int w = 0; w < W; w++) {
        any |= moved[w];
        all &= moved[w] != 0;
    }
    if (!any) return;
    /* g at the start into f0's direction vectors: straight there when every
     * lane moved, else through fv's (free here), so that the other lanes
     * keep theirs for their retries */
    ode_sens_rhs(L, moved, L->t, L->y, L->f0, L->jv, S->S, all ? S->G0 : S->G);
    if (!all) ode_sens_copy_lanes(L, moved, S->G, S->G0);
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

/* Stage s's right-hand sides (rodas5p.c's, already in L->rhs) plus H_j·k_s
 * for every direction (sens_csr.h), then l_sj = M⁻¹ rhs_j for
 * all of them in one call. */
sv_status ode_sens_rodas5p_solve(ode_lanes *L, int s, const unsigned char *em)
{
    ode_sens *S = L->sens;
    const size_t nw = S->nw, ds = (size_t)L->nnz * L->W;
    const double *ks = L->k + (size_t)s * L->kstride;
    double *rhs = L->rhs + nw;
    /* rhs_j += dJ_j·k_s: k_s shared by the directions */
    ode_csr_times(L->W, L->P, S->ns, S->dJ, ds, ks, 0, rhs, rhs, nw);
    int sw = 0;
    sv_status st = ode_lin_solve_multi(L->lin, L->jv, L->shift, S->ns, rhs, L->k + (size_t)s * L->kstride + nw,
                                       S->mwork, &sw);
    for (int w = 0; w < L->W; w++)
        if (em[w]) {
            L->st[w].nsolve += S->ns;
            L->st[w].nrefine += sw;
        }
    return st;
}
