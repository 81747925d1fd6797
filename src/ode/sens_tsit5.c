/* Tsit5's sensitivity stages: the augmented system integrated explicitly.
 * The directions' vectors follow the state's in the lanes' arrays, so
 * tsit5.c forms S_sj = S_j + h Σ_m a_sm l_mj with the state's U; here g
 * fills the directions' vectors of each stage, l_sj = g_j(t_s, U_s, S_sj).
 * The first stage is the last step's final one (first same as last). */
#include <math.h>
#include <string.h>

#include "sens.h"

void ode_sens_tsit5_start(ode_lanes *L, unsigned char *em)
{
    ode_sens *S = L->sens;
    const int W = L->W < ODE_WMAX ? L->W : ODE_WMAX;
    unsigned char m[ODE_WMAX];
    int any = 0;
    for (int w = 0; w < W; w++) any |= m[w] = em[w] && !S->have_g0[w];
    if (!any) return;
    /* into f0's direction vectors, through fv's (unused by Tsit5) */
    ode_sens_rhs(L, m, L->t, L->y, L->f0, NULL, S->S, S->G);
    ode_sens_copy_lanes(L, m, S->G, S->G0);
    for (int w = 0; w < W; w++)
        if (m[w]) {
            /* g at the step's start, an accepted state: a refusal is final */
            if (L->fail[w]) L->fail[w] = ODE_FAIL_HARD, em[w] = 0;
            S->have_g0[w] = 1;
        }
}

void ode_sens_tsit5_stage(ode_lanes *L, int s, unsigned char *em)
{
    ode_sens *S = L->sens;
    double *ks = L->k + (size_t)s * L->kstride;
    /* the state's stage left U (and S_s after it) and k_s = f(t_s, U) */
    ode_sens_rhs(L, em, L->tstage, L->U, ks, NULL, S->SU, ks + S->nw);
    for (int w = 0; w < L->W; w++)
        if (em[w] && L->fail[w]) em[w] = 0;
}
