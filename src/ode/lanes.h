/* One worker's W lanes: each lane carries one trajectory with its own time,
 * step size and controller state; vectors are slot-major (entry i of lane w
 * at i·W + w). The record every layer of the driver works on: the norms,
 * the steppers and their sensitivity parts, the phases, the fused step
 * and solve.c, which makes it. */
#ifndef SV_ODE_LANES_H
#define SV_ODE_LANES_H

#include <stdatomic.h>

#include "ode_internal.h"

typedef struct ode_sens ode_sens;     /* sens.h */
typedef struct ode_events ode_events; /* events.h */

/* What a lane's attempt ends at (hits[w]): wherever its step took it, the
 * end of the interval, or the next tstop (the step clipped to either); or,
 * once accepted, an event that cut the step short (events.h). */
typedef enum { ODE_HITS_NOTHING, ODE_HITS_END, ODE_HITS_TSTOP, ODE_HITS_EVENT } ode_hits;

typedef struct ode_lanes {
    sv_ctx *ctx;
    const sv_ode_problem *P;
    const sv_ode_options *o;  /* resolved (solve.c): no zero meaning "default" left */
    const sv_ode_ensemble *E;
    int W, n, np, nnz;
    /* Every slot-major array below holds nvec = 1 + nsens vectors of n·W
     * values side by side (kstride = nvec·n·W apart between stages of k):
     * the state, then each sensitivity direction (sens.h). Without
     * sensitivities nvec = 1 and each is one n·W vector. */
    int nvec;
    size_t kstride;
    int rodas;              /* method: Rodas5P (1) or Tsit5 (0) */
    const double *atolv;    /* n: absolute tolerance per component */
    const double *wts;      /* n: error weights */
    /* per lane */
    long traj[ODE_WMAX];    /* trajectory index, -1 = idle */
    const double *tsave[ODE_WMAX]; /* its save times (span.h) */
    double tend[ODE_WMAX];  /* the last of them: where it ends */
    unsigned char active[ODE_WMAX], have_f0[ODE_WMAX], need_jac[ODE_WMAX], need_h0[ODE_WMAX];
    unsigned char fail[ODE_WMAX], bad[ODE_WMAX];
    double lerrold[ODE_WMAX], lerrolder[ODE_WMAX]; /* log E_old, and the one before (control.h) */
    double t[ODE_WMAX], h[ODE_WMAX], hprop[ODE_WMAX], tcap[ODE_WMAX], eest[ODE_WMAX];
    double tstage[ODE_WMAX], shift[ODE_WMAX];
    ode_hits hits[ODE_WMAX]; /* what this attempt ends at */
    int stop_idx[ODE_WMAX]; /* next tstop not yet passed */
    int save[ODE_WMAX];     /* next save index */
    int nonfinite[ODE_WMAX];/* consecutive non-finite rejections */
    int refusals[ODE_WMAX]; /* consecutive attempts a callback refused */
    sv_ode_stats st[ODE_WMAX];
    /* slot-major arrays */
    double *y, *ynew, *f0, *U, *fv, *rhs, *dT, *k, *p, *jv, *err, *scratch;
    ode_lin *lin;
    ode_jac_work *jw;
    ode_sens *sens;         /* forward sensitivities, or NULL (sens.h) */
    ode_events *ev;         /* event functions, or NULL (events.h) */
    /* declared invariants (ode_internal.h), or NULL: per lane the values
     * c_k·y its trajectory keeps (inv_target[k·W + w]) and the
     * projection's work (ode_invariants_work values) */
    const ode_invariants *inv;
    double *inv_target, *inv_work;
    double lerr_floor;      /* log(1e-4): the error history's floor (control.h) */
    /* the whole step specialised for this problem and W (fused_rodas5p.h),
     * or NULL: its status is the linear solver's, as an attempt's */
    sv_status (*step)(struct ode_lanes *L);
    atomic_long *done;      /* the solve's count of finished trajectories (solve.c's: its progress) */
} ode_lanes;

/* J and ∂f/∂t for the lanes that moved since their last Jacobian (a
 * rejected lane retries with the same J), clearing every lane's fail and
 * bad flags for the attempt that follows; jm[w] says which lanes got one
 * (the sensitivities' second-order terms follow it). Shared by rodas5p.c
 * and the fused step. */
ODE_INLINE void ode_jacobian_where_needed(ode_lanes *L, const int W, unsigned char *jm)
{
    int anyj = 0;
    for (int w = 0; w < W; w++) {
        jm[w] = L->active[w] && L->need_jac[w];
        anyj |= jm[w];
        L->fail[w] = 0;
        L->bad[w] = 0;
    }
    if (!anyj) return;
    long nf[ODE_WMAX] = {0};
    ode_jacobian(L->P, L->jw, W, jm, L->t, L->y, L->p, L->f0, L->jv, L->dT, L->fail, nf);
    for (int w = 0; w < W; w++)
        if (jm[w]) {
            L->st[w].njac++;
            L->st[w].nf += nf[w];
            L->need_jac[w] = 0;
        }
}

/* Lane w's state x (n values at stride xs) moved onto its invariants into
 * out (stride os; may be x): the one call every path makes, after an
 * accepted step and for every saved output, so that they round alike. */
static inline void ode_lane_project(const ode_lanes *L, int w, const double *x, size_t xs, double *out, size_t os)
{
    double target[64], *tg = L->inv->m <= 64 ? target : L->inv_work + ode_invariants_work(L->inv, L->n);
    for (int k = 0; k < L->inv->m; k++) tg[k] = L->inv_target[(size_t)k * L->W + w];
    ode_invariants_project(L->inv, L->n, L->atolv, L->o->rtol, tg, x, xs, out, os, L->inv_work);
}

/* Lane w keeps the invariants' values of its current state y from now on
 * (a new trajectory, or a handler that changed y). */
static inline void ode_lane_set_invariants(ode_lanes *L, int w)
{
    double *tg = L->inv_work; /* free between projections */
    ode_invariants_values(L->inv, L->n, L->y + w, (size_t)L->W, tg);
    for (int k = 0; k < L->inv->m; k++) L->inv_target[(size_t)k * L->W + w] = tg[k];
}

#endif
