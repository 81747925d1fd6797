/* Tsit5's sensitivity stages: the augmented system integrated explicitly,
 * each stage of the state (tsit5.c) followed by the same stage for every
 * direction, S_sj = S_j + h Σ_m a_sm l_mj and l_sj = g_j(t_s, U_s, S_sj);
 * the first stage is the last step's final one (first same as last). */
#include <math.h>
#include <string.h>

#include "sens.h"
#include "stage_sum.h"

void ode_sens_tsit5_stage(ode_lanes *L, int s, unsigned char *em)
{
    const tsit5_tab *T = &sv_ode_tsit5;
    ode_sens *S = L->sens;
    const int n = L->n, W = L->W, ns = S->ns;
    const size_t nw = S->nw, lstride = (size_t)ODE_SENS_STAGES * nw;
    if (s == 0) {
        unsigned char m[ODE_WMAX];
        int any = 0;
        for (int w = 0; w < W; w++) any |= m[w] = em[w] && !S->have_g0[w];
        /* g at the step's start, an accepted state: a refusal is final */
        if (any) {
            ode_sens_rhs(L, m, L->t, L->y, L->f0, NULL, S->S, S->G);
            ode_sens_copy_lanes(L, m, S->G, S->G0);
        }
        for (int w = 0; w < W; w++)
            if (m[w]) {
                if (L->fail[w]) L->fail[w] = ODE_FAIL_HARD, em[w] = 0;
                S->have_g0[w] = 1;
            }
        for (int j = 0; j < ns; j++) memcpy(S->l + j * lstride, S->G0 + (size_t)j * nw, sizeof(double) * nw);
        return;
    }
    for (int j = 0; j < ns; j++) {
        double *su = S->SU + (size_t)j * nw;
        const double *sj = S->S + (size_t)j * nw;
        ode_stage_sum_plain(nw, su, T->a[s], S->l + j * lstride, s);
        for (int i = 0; i < n; i++)
            for (int w = 0; w < W; w++) {
                size_t q = (size_t)i * W + w;
                su[q] = sj[q] + L->h[w] * su[q];
            }
    }
    /* the state's stage left U and k_s = f(t_s, U) */
    ode_sens_rhs(L, em, L->tstage, L->U, L->k + (size_t)s * nw, NULL, S->SU, S->G);
    for (int j = 0; j < ns; j++)
        memcpy(S->l + j * lstride + (size_t)s * nw, S->G + (size_t)j * nw, sizeof(double) * nw);
    for (int w = 0; w < W; w++)
        if (em[w] && L->fail[w]) em[w] = 0;
}

/* S_new = S_7 (the last stage's point), error h Σ btilde_m l_m. */
void ode_sens_tsit5_finish(ode_lanes *L)
{
    const tsit5_tab *T = &sv_ode_tsit5;
    ode_sens *S = L->sens;
    const int n = L->n, W = L->W;
    const size_t nw = S->nw, lstride = (size_t)ODE_SENS_STAGES * nw;
    memcpy(S->Snew, S->SU, sizeof(double) * nw * S->ns);
    /* the error estimates go to the (free) G blocks */
    for (int j = 0; j < S->ns; j++) {
        double *e = S->G + (size_t)j * nw;
        ode_stage_sum_plain(nw, e, T->btilde, S->l + j * lstride, 7);
        for (int i = 0; i < n; i++)
            for (int w = 0; w < W; w++) e[(size_t)i * W + w] *= L->h[w];
    }
    ode_sens_error(L, S->G, nw);
}
