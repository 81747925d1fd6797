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

/* Directions per pass of add_dj_times: four chains cover an addition's
 * latency and keep their sums in registers. */
#define ODE_DJ_GROUP 4

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

/* rhs_j += dJ_j·k over all lanes for R directions at once (dJ: pattern
 * values, slot-major, direction j's at dJ + j·nnz·W; rhs_j at rhs + j·nw).
 * Each direction's row sum runs in entry order, as it would alone; the
 * directions' chains of additions run side by side. The partial sums are
 * GCC/Clang vectors of W lanes (as in fused_rodas5p.c): as an array of
 * R·W doubles the compiler keeps them in memory, and every chain pays a
 * store and a load per entry. */
#define DEFINE_ADD_DJ(W)                                                                                      \
    typedef double ode_djv##W __attribute__((vector_size(8 * W)));                                           \
    ODE_INLINE void add_dj_times_w##W(const sv_ode_problem *P, const double *restrict dJ, const double *restrict k, \
                                      double *restrict rhs, size_t nw, const int R)                           \
    {                                                                                                         \
        const int *rp = P->rowptr, *ci = P->colind;                                                           \
        const size_t ds = (size_t)P->nnz * W;                                                                 \
        ode_djv##W acc[ODE_DJ_GROUP], d, x;                                                                   \
        for (int i = 0; i < P->n; i++) {                                                                      \
            for (int r = 0; r < R; r++) memcpy(&acc[r], rhs + r * nw + (size_t)i * W, sizeof x);              \
            for (int e = rp[i]; e < rp[i + 1]; e++) {                                                         \
                memcpy(&x, k + (size_t)ci[e] * W, sizeof x);                                                  \
                for (int r = 0; r < R; r++) {                                                                 \
                    memcpy(&d, dJ + r * ds + (size_t)e * W, sizeof d);                                        \
                    acc[r] += d * x;                                                                          \
                }                                                                                             \
            }                                                                                                 \
            for (int r = 0; r < R; r++) memcpy(rhs + r * nw + (size_t)i * W, &acc[r], sizeof x);              \
        }                                                                                                     \
    }
DEFINE_ADD_DJ(1)
DEFINE_ADD_DJ(2)
DEFINE_ADD_DJ(4)
DEFINE_ADD_DJ(8)

/* The directions ODE_DJ_GROUP at a time. */
#define ADD_DJ_GROUPS(W)                                                                     \
    for (int j = 0; j < S->ns; j += ODE_DJ_GROUP) {                                          \
        const double *dJ = S->dJ + j * ds;                                                   \
        double *rj = rhs + j * nw;                                                           \
        switch (S->ns - j) {                                                                 \
        case 1: add_dj_times_w##W(L->P, dJ, ks, rj, nw, 1); break;                           \
        case 2: add_dj_times_w##W(L->P, dJ, ks, rj, nw, 2); break;                           \
        case 3: add_dj_times_w##W(L->P, dJ, ks, rj, nw, 3); break;                           \
        default: add_dj_times_w##W(L->P, dJ, ks, rj, nw, ODE_DJ_GROUP); break;              \
        }                                                                                    \
    }

/* Stage s's right-hand sides (rodas5p.c's, already in L->rhs) plus H_j·k_s
 * for every direction, ODE_DJ_GROUP at a time, then l_sj = M⁻¹ rhs_j for
 * all of them in one call. */
sv_status ode_sens_rodas5p_solve(ode_lanes *L, int s, const unsigned char *em)
{
    ode_sens *S = L->sens;
    const size_t nw = S->nw, ds = (size_t)L->nnz * L->W;
    const double *ks = L->k + (size_t)s * L->kstride;
    double *rhs = L->rhs + nw;
    switch (L->W) {
    case 1: ADD_DJ_GROUPS(1) break;
    case 2: ADD_DJ_GROUPS(2) break;
    case 4: ADD_DJ_GROUPS(4) break;
    default: ADD_DJ_GROUPS(8) break;
    }
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
