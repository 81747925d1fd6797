/* Rodas5P step attempt over W lanes (stage equations in tableau_rodas5p.h's
 * header comment). The Jacobian is evaluated only for lanes that moved
 * since their last one (a rejected lane retries with the same J), and M is
 * loaded and factored for every attempt since h changed.
 *
 * With a mass matrix M (a DAE when singular) the stages are those of the
 * Rosenbrock method for M·y' = f (Hairer & Wanner, Solving ODEs II, §VI.4)
 * in the transformed form OrdinaryDiffEq uses for Rodas5P
 * (lib/OrdinaryDiffEqRosenbrock/src/rosenbrock_perform_step.jl: the
 * C-sum is multiplied by the mass matrix, `mul!(du2, mass_matrix, du1)`):
 *   (M/(hγ) − J) k_i = f(t + c_i h, U_i) + h d_i f_t + M·Σ_j (C_ij/h) k_j.
 * Rodas5P is built for M·y' = f of index ≤ 1 (Steinebach 2023, BIT 63:27,
 * (1.1)–(1.3): the scheme with (M − hγ f_y) and its DAE order
 * conditions), and y_new = U_8 + k_8 is stiffly
 * accurate, so the embedded estimate k_8 and the dense output
 * (ode_rodas5p_interp) apply to the algebraic components unchanged, as in
 * OrdinaryDiffEq and in Hairer's RODAS (whose error estimate is likewise
 * the plain difference of the two solutions for every component). */
#include <math.h>
#include <string.h>

#include "lanes.h"
#include "norms.h"
#include "sens.h"
#include "stage_sum.h"
#include "steppers.h"

/* The attempt is instantiated per lane count (W a compile-time constant in
 * each copy, so the per-lane loops vectorise without remainder code); its
 * steps are inlined (ODE_INLINE) into each copy for the same reason. */

/* M = I/(hγ) − J (M/(hγ) − J with a mass matrix) loaded and factored for every lane (h changed since the
 * last attempt). em: the lanes whose stages run (active, good pivots, no
 * failed callback). */
ODE_INLINE sv_status factor_iteration_matrix(ode_lanes *L, const int W, unsigned char *em)
{
    const rodas5p_tab *T = &sv_ode_rodas5p;
    for (int w = 0; w < W; w++) L->shift[w] = 1.0 / (L->h[w] * T->gamma);
    ode_lin_load(L->lin, L->jv, L->shift);
    sv_status st = ode_lin_factor(L->lin, L->active, L->bad);
    for (int w = 0; w < W; w++) {
        if (L->active[w]) {
            L->st[w].nfactor++;
            L->st[w].nexact += ode_lin_lane_exact(L->lin, w);
        }
        em[w] = L->active[w] && !L->bad[w] && !L->fail[w];
    }
    return st;
}

/* rhs = M·rhs (the C-sum, a DAE's stage; err is free during the attempt). */
static void apply_mass(ode_lanes *L, const int W)
{
    ode_mass_mul(L->P->mass, L->n, W, L->rhs, L->err);
    memcpy(L->rhs, L->err, sizeof(double) * (size_t)L->n * W);
}

/* rhs = f + h d_s dT, plus (1/h)·rhs (the C-sum already there) for s > 0,
 * over rows of W lanes. The lanes' factors are local copies and the branch
 * is outside the loops: otherwise the compiler vectorises across the rows,
 * with shuffles that cost more than the arithmetic. */
ODE_INLINE void form_rhs(const ode_lanes *L, const int W, int s, const double *restrict f, const double *hinv)
{
    const int rows = L->n * L->nvec;
    double hd[ODE_WMAX], hv[ODE_WMAX];
    for (int w = 0; w < W; w++) {
        hd[w] = L->h[w] * sv_ode_rodas5p.d[s];
        hv[w] = hinv[w];
    }
    if (s > 0) {
        for (int i = 0; i < rows; i++) {
            double *restrict r = L->rhs + (size_t)i * W; /* the lane arrays do not overlap */
            const double *restrict fi = f + (size_t)i * W, *restrict dt = L->dT + (size_t)i * W;
            for (int w = 0; w < W; w++) r[w] = fi[w] + hd[w] * dt[w] + hv[w] * r[w];
        }
    } else {
        for (int i = 0; i < rows; i++) {
            double *restrict r = L->rhs + (size_t)i * W;
            const double *restrict fi = f + (size_t)i * W, *restrict dt = L->dT + (size_t)i * W;
            for (int w = 0; w < W; w++) r[w] = fi[w] + hd[w] * dt[w];
        }
    }
}

/* Stage s: U = y + Σ_j a_sj k_j and f(t + c_s h, U) (stage 0 reads f0),
 * rhs = f + h d_s f_t + (1/h) Σ_j C_sj k_j, then k_s = M⁻¹ rhs. With
 * sensitivities the sums and the right-hand side run over the state and
 * every direction in one pass (lanes.h), the directions' g sit where f
 * does (sens_rodas5p.c), and their solves follow the state's. */
ODE_INLINE sv_status stage(ode_lanes *L, const int W, int s, unsigned char *em, const double *hinv)
{
    const rodas5p_tab *T = &sv_ode_rodas5p;
    const size_t kst = L->kstride;
    double *ks = L->k + (size_t)s * kst;
    const double *f = L->f0;
    if (s > 0) {
        /* one pass over every lane, same coefficients: U and Σ C_sj k_j (into rhs) */
        ode_stage_sums(kst, L->U, L->y, T->a[s], L->rhs, T->C[s], L->k, s);
        if (L->P->mass) apply_mass(L, W);
        for (int w = 0; w < W; w++) L->tstage[w] = ode_min(L->t[w] + T->c[s] * L->h[w], L->tcap[w]);
        ode_eval_f(L->P, W, em, L->tstage, L->U, L->p, L->fv, L->fail, L->scratch);
        /* a lane whose f refused or failed takes no further stages */
        for (int w = 0; w < W; w++)
            if (em[w]) {
                L->st[w].nf++;
                em[w] = !L->fail[w];
            }
        if (L->sens) ode_sens_rodas5p_g(L, em);
        f = L->fv;
    }
    form_rhs(L, W, s, f, hinv);
    int sw = 0;
    sv_status st = ode_lin_solve(L->lin, L->jv, L->shift, L->rhs, ks, &sw);
    for (int w = 0; w < W; w++)
        if (em[w]) {
            L->st[w].nsolve++;
            L->st[w].nrefine += sw;
        }
    if (st == SV_OK && L->sens) st = ode_sens_rodas5p_solve(L, s, em);
    return st;
}

/* y_new = U_8 + k_8 (U holds U_8 after the last stage); the error estimate
 * is k_8's norm, INFINITY for a bad pivot or a non-finite norm. */
ODE_INLINE void estimate_error(ode_lanes *L, const int W)
{
    const size_t kst = L->kstride;
    const double *k8 = L->k + 7 * kst;
    for (size_t q = 0; q < kst; q++) L->ynew[q] = L->U[q] + k8[q];
    double en[ODE_WMAX];
    ode_error_norms(L, k8, en);
    for (int w = 0; w < W; w++) {
        if (!L->active[w]) continue;
        double e = en[w];
        L->eest[w] = (L->bad[w] || !isfinite(e)) ? INFINITY : e;
    }
    /* the sensitivities' estimates l_8 follow the state's k_8 */
    if (L->sens) ode_sens_error_norms(L, k8 + (size_t)L->n * W);
}

ODE_INLINE sv_status attempt_w(ode_lanes *L, const int W)
{
    unsigned char em[ODE_WMAX], jm[ODE_WMAX];
    double hinv[ODE_WMAX];
    ode_jacobian_where_needed(L, W, jm);
    if (L->sens) {
        for (int w = 0; w < W; w++) jm[w] = jm[w] && !L->fail[w];
        ode_sens_rodas5p_prepare(L, jm);
    }
    sv_status st = factor_iteration_matrix(L, W, em);
    for (int w = 0; w < W; w++) hinv[w] = 1.0 / L->h[w];
    for (int s = 0; s < 8 && st == SV_OK; s++) st = stage(L, W, s, em, hinv);
    if (st == SV_OK) estimate_error(L, W);
    return st;
}

sv_status ode_rodas5p_attempt(ode_lanes *L)
{
    switch (L->W) {
    case 1: return attempt_w(L, 1);
    case 2: return attempt_w(L, 2);
    case 4: return attempt_w(L, 4);
    default: return attempt_w(L, 8);
    }
}

void ode_rodas5p_interp(const ode_lanes *L, int w, double th, int r0, int r1, double *out)
{
    const rodas5p_tab *T = &sv_ode_rodas5p;
    const int W = L->W;
    for (int i = r0; i < r1; i++) {
        size_t q = (size_t)i * W + w;
        double K[3] = {0, 0, 0};
        for (int r = 0; r < 3; r++)
            for (int s = 0; s < 8; s++) K[r] += T->h[r][s] * L->k[(size_t)s * L->kstride + q];
        out[i - r0] = (1 - th) * L->y[q] + th * (L->ynew[q] + (1 - th) * (K[0] + th * (K[1] + th * K[2])));
    }
}
