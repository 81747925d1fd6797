/* Rodas5P step attempt over W lanes (stage equations in tableau_rodas5p.h's
 * header comment). The Jacobian is evaluated only for lanes that moved
 * since their last one (a rejected lane retries with the same J), and M is
 * loaded and factored for every attempt since h changed. */
#include <math.h>
#include <string.h>

#include "lanes.h"

/* out = base + Σ_{j<s} c_j k_j over nw values (k_j at k + j·nw; base NULL = 0),
 * one pass per stage count so that every case vectorises. Summation order
 * is fixed (left to right), the same in every lane. */
#define K(j) k[(size_t)(j) * nw + q]
#define COMBINE_CASES(B) \
    switch (s) { \
    case 1: for (size_t q = 0; q < nw; q++) out[q] = B + c[0] * K(0); break; \
    case 2: for (size_t q = 0; q < nw; q++) out[q] = B + c[0] * K(0) + c[1] * K(1); break; \
    case 3: for (size_t q = 0; q < nw; q++) out[q] = B + c[0] * K(0) + c[1] * K(1) + c[2] * K(2); break; \
    case 4: for (size_t q = 0; q < nw; q++) out[q] = B + c[0] * K(0) + c[1] * K(1) + c[2] * K(2) + c[3] * K(3); break; \
    case 5: for (size_t q = 0; q < nw; q++) out[q] = B + c[0] * K(0) + c[1] * K(1) + c[2] * K(2) + c[3] * K(3) + c[4] * K(4); break; \
    case 6: for (size_t q = 0; q < nw; q++) out[q] = B + c[0] * K(0) + c[1] * K(1) + c[2] * K(2) + c[3] * K(3) + c[4] * K(4) + c[5] * K(5); break; \
    case 7: for (size_t q = 0; q < nw; q++) out[q] = B + c[0] * K(0) + c[1] * K(1) + c[2] * K(2) + c[3] * K(3) + c[4] * K(4) + c[5] * K(5) + c[6] * K(6); break; \
    default: break; \
    }
static void combine(size_t nw, double *restrict out, const double *restrict base, const double *c,
                    const double *restrict k, int s)
{
    if (base) {
        COMBINE_CASES(base[q])
    } else {
        COMBINE_CASES(0.0)
    }
}
#undef K

/* The body is instantiated per lane count (W a compile-time constant in
 * each copy, so the per-lane loops vectorise without remainder code). */
static inline __attribute__((always_inline)) void attempt_w(ode_lanes *L, const int W)
{
    const rodas5p_tab *T = &sv_ode_rodas5p;
    const int n = L->n;
    const size_t nw = (size_t)n * W;
    unsigned char jm[ODE_WMAX], em[ODE_WMAX];
    int anyj = 0;
    for (int w = 0; w < W; w++) {
        jm[w] = L->active[w] && L->need_jac[w];
        anyj |= jm[w];
        L->fail[w] = 0;
        L->bad[w] = 0;
    }
    if (anyj) {
        long nf[ODE_WMAX] = {0};
        ode_jacobian(L->P, L->jw, W, jm, L->t, L->y, L->p, L->f0, L->jv, L->dT, L->fail, nf);
        for (int w = 0; w < W; w++)
            if (jm[w]) {
                L->st[w].njac++;
                L->st[w].nf += nf[w];
                L->need_jac[w] = 0;
            }
    }
    for (int w = 0; w < W; w++) L->shift[w] = 1.0 / (L->h[w] * T->gamma);
    ode_lin_load(L->lin, L->jv, L->shift, L->active);
    ode_lin_factor(L->lin, L->active, L->bad);
    for (int w = 0; w < W; w++) {
        if (L->active[w]) L->st[w].nfactor++;
        em[w] = L->active[w] && !L->bad[w] && !L->fail[w];
    }
    double hinv[ODE_WMAX], hd[ODE_WMAX];
    for (int w = 0; w < W; w++) hinv[w] = 1.0 / L->h[w];
    for (int s = 0; s < 8; s++) {
        double *ks = L->k + (size_t)s * nw;
        if (s == 0) {
            memcpy(L->fv, L->f0, sizeof(double) * nw);
        } else {
            /* U = y + Σ_j a_sj k_j, one pass (every lane, same coefficients) */
            combine(nw, L->U, L->y, T->a[s], L->k, s);
            for (int w = 0; w < W; w++) L->tstage[w] = ode_min(L->t[w] + T->c[s] * L->h[w], L->tcap[w]);
            ode_eval_f(L->P, W, em, L->tstage, L->U, L->p, L->fv, L->fail, L->scratch);
            for (int w = 0; w < W; w++)
                if (em[w]) L->st[w].nf++;
        }
        /* rhs = f + h d_s f_t + (1/h) Σ_j C_sj k_j */
        for (int w = 0; w < W; w++) hd[w] = L->h[w] * T->d[s];
        if (s > 0) combine(nw, L->rhs, NULL, T->C[s], L->k, s);
        for (int i = 0; i < n; i++) {
            double *restrict r = L->rhs + (size_t)i * W; /* the lane arrays do not overlap */
            const double *restrict fv = L->fv + (size_t)i * W, *restrict dt = L->dT + (size_t)i * W;
            if (s > 0)
                for (int w = 0; w < W; w++) r[w] = fv[w] + hd[w] * dt[w] + hinv[w] * r[w];
            else
                for (int w = 0; w < W; w++) r[w] = fv[w] + hd[w] * dt[w];
        }
        int sw = ode_lin_solve(L->lin, L->jv, L->shift, L->rhs, ks);
        for (int w = 0; w < W; w++)
            if (em[w]) {
                L->st[w].nsolve++;
                L->st[w].nrefine += sw;
            }
    }
    /* y_new = U_8 + k_8 (U holds U_8 after the loop) */
    const double *k8 = L->k + (size_t)7 * nw;
    for (size_t q = 0; q < nw; q++) L->ynew[q] = L->U[q] + k8[q];
    double en[ODE_WMAX];
    ode_error_norms(L, k8, en);
    for (int w = 0; w < W; w++) {
        if (!L->active[w]) continue;
        double e = en[w];
        L->eest[w] = (L->bad[w] || !isfinite(e)) ? INFINITY : e;
    }
}

void ode_rodas5p_attempt(ode_lanes *L)
{
    switch (L->W) {
    case 1: attempt_w(L, 1); break;
    case 2: attempt_w(L, 2); break;
    case 4: attempt_w(L, 4); break;
    default: attempt_w(L, 8); break;
    }
}

void ode_rodas5p_interp(const ode_lanes *L, int w, double th, double *out)
{
    const rodas5p_tab *T = &sv_ode_rodas5p;
    const int W = L->W, n = L->n;
    const size_t nw = (size_t)n * W;
    for (int i = 0; i < n; i++) {
        size_t q = (size_t)i * W + w;
        double K[3] = {0, 0, 0};
        for (int r = 0; r < 3; r++)
            for (int s = 0; s < 8; s++) K[r] += T->h[r][s] * L->k[(size_t)s * nw + q];
        out[i] = (1 - th) * L->y[q] + th * (L->ynew[q] + (1 - th) * (K[0] + th * (K[1] + th * K[2])));
    }
}
