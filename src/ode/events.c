/* Events over a worker's lanes (events.h). A lane keeps g at its accepted
 * state; an accepted step to tn evaluates g at the new state, and function
 * j fires when its sign changed in its direction (from strictly negative
 * to zero or positive, or from strictly positive to zero or negative: a g
 * that is exactly 0 at a step's start arms nothing, so an event located at
 * a root is not found again at the next step's start). Each firing
 * function's crossing is located on the method's dense output
 * (steppers.h's ode_interp) by the Illinois variant of regula falsi
 * (Dahlquist & Björck, Numerical Methods, 1974, §6.2.4: when the same end
 * of the bracket is kept twice in a row its g value is halved), which
 * keeps a bracket and converges superlinearly. The event time is the
 * bracket's end on the crossed side, so that g there has already changed
 * sign: a handler acting at the event sees the state past the crossing,
 * and the step that restarts there does not find it again. */
#include <math.h>
#include <string.h>

#include "events.h"
#include "span.h"
#include "steppers.h"

struct ode_events {
    const sv_ode_events *d;
    int m;
    double tol;
    double *gprev;  /* m·W, slot-major (g_j of lane w at j·W + w): g at each lane's accepted state */
    double *gnew;   /* m·W: g at the attempt's new state */
    double *ybuf;   /* n: one lane's state */
    double *pbuf;   /* np: one lane's parameters */
    double *gbuf;   /* m: g at a trial time of the root finder */
    double *ftime;  /* m: the step's crossings' times, in time order */
    int *fwhich;    /* m: their functions */
};

/* Root-finder evaluations at most per crossing: the bracket halves at
 * least every other one (Illinois), so this is far past the 2·64 halvings
 * that reach adjacent doubles. */
enum { ODE_EV_MAXIT = 200 };

sv_status ode_events_create(sv_ctx *ctx, const sv_ode_problem *P, const sv_ode_options *o, int W, ode_events **out)
{
    *out = NULL;
    if (!o->events) return SV_OK;
    const sv_ode_events *d = o->events;
    const size_t m = (size_t)d->m, n = (size_t)P->n, np = (size_t)P->np;
    ode_events *ev = sv_calloc(ctx, 1, sizeof *ev, "ode events");
    if (!ev) return sv_last_status();
    ev->d = d;
    ev->m = d->m;
    ev->tol = d->tol;
    ev->gprev = sv_alloc(ctx, sizeof(double) * (2 * W * m + n + np + 2 * m + 1), "ode events");
    ev->fwhich = sv_alloc(ctx, sizeof(int) * m, "ode events");
    if (!ev->gprev || !ev->fwhich) {
        ode_events_destroy(ctx, ev);
        return sv_last_status();
    }
    ev->gnew = ev->gprev + W * m;
    ev->ybuf = ev->gnew + W * m;
    ev->pbuf = ev->ybuf + n;
    ev->gbuf = ev->pbuf + np;
    ev->ftime = ev->gbuf + m;
    *out = ev;
    return SV_OK;
}

void ode_events_destroy(sv_ctx *ctx, ode_events *ev)
{
    if (!ev) return;
    sv_free_each(ctx, (void *const[]){ev->gprev, ev->fwhich}, 2);
    sv_free(ctx, ev);
}

/* ---- g for one lane -------------------------------------------------------- */
static void gather(int count, int W, int w, const double *src, double *dst)
{
    for (int i = 0; i < count; i++) dst[i] = src[(size_t)i * W + w];
}

static void scatter(int count, int W, int w, const double *src, double *dst)
{
    for (int i = 0; i < count; i++) dst[(size_t)i * W + w] = src[i];
}

/* The lane's parameters into pbuf (NULL when there are none). */
static double *lane_params(const ode_lanes *L, int w)
{
    if (!L->np) return NULL;
    gather(L->np, L->W, w, L->p, L->ev->pbuf);
    return L->ev->pbuf;
}

/* g(t, y) for lane w with y a plain n-vector; 0 when g failed. */
static int eval_g(const ode_lanes *L, int w, double t, const double *y, double *g)
{
    return L->ev->d->g(t, y, lane_params(L, w), g, L->P->d.user) == 0;
}

/* g at lane w's state in the slot-major array `lanes` (y or ynew). */
static int eval_g_lanes(const ode_lanes *L, int w, double t, const double *lanes, double *g)
{
    gather(L->n, L->W, w, lanes, L->ev->ybuf);
    return eval_g(L, w, t, L->ev->ybuf, g);
}

/* g at lane w's state in `lanes` at t into the slot-major `into`. */
static int eval_g_into(const ode_lanes *L, int w, double t, const double *lanes, double *into)
{
    if (!eval_g_lanes(L, w, t, lanes, L->ev->gbuf)) return 0;
    scatter(L->ev->m, L->W, w, L->ev->gbuf, into);
    return 1;
}

int ode_events_start(ode_lanes *L, int w)
{
    if (L->E->nevents) L->E->nevents[L->traj[w]] = 0;
    return eval_g_into(L, w, L->t[w], L->y, L->ev->gprev);
}

/* ---- crossings -------------------------------------------------------------- */
/* Whether g went from a to b across zero in function j's direction. */
static int crosses(const ode_events *ev, int j, double a, double b)
{
    sv_ode_event_direction dir = ev->d->direction ? ev->d->direction[j] : SV_ODE_EVENT_EITHER;
    int rising = a < 0 && b >= 0, falling = a > 0 && b <= 0;
    return dir == SV_ODE_EVENT_RISING ? rising : dir == SV_ODE_EVENT_FALLING ? falling : rising || falling;
}

static sv_ode_event_action action_of(const ode_events *ev, int j)
{
    return ev->d->action ? ev->d->action[j] : SV_ODE_EVENT_RECORD;
}

/* Whether lane w's step has a crossing, g_new already in gnew. */
static int crossed(const ode_events *ev, int W, int w)
{
    for (int j = 0; j < ev->m; j++)
        if (crosses(ev, j, ev->gprev[(size_t)j * W + w], ev->gnew[(size_t)j * W + w])) return 1;
    return 0;
}

static void commit(ode_lanes *L, int w)
{
    const int W = L->W;
    for (int j = 0; j < L->ev->m; j++) L->ev->gprev[(size_t)j * W + w] = L->ev->gnew[(size_t)j * W + w];
}

void ode_events_screen(ode_lanes *L, const unsigned char *mask, const double *tn, unsigned char *fire)
{
    ode_events *ev = L->ev;
    const int W = L->W;
    /* every lane at once when g_batch serves (a failure: one at a time) */
    int batched = ev->d->g_batch && !ev->d->g_batch(W, tn, L->ynew, L->np ? L->p : NULL, ev->gnew, L->P->d.user);
    for (int w = 0; w < W; w++) {
        if (!mask[w]) {
            fire[w] = 0;
            continue;
        }
        /* g failing one lane at a time: ode_events_step sees it again and ends the trajectory */
        fire[w] = (!batched && !eval_g_into(L, w, tn[w], L->ynew, ev->gnew)) || crossed(ev, W, w);
        if (!fire[w]) commit(L, w);
    }
}

/* The dense output of lane w's step at time tm (its end tn: y_new itself). */
static void state_at(const ode_lanes *L, int w, double tm, double tn, double *y)
{
    if (tm == tn) {
        gather(L->n, L->W, w, L->ynew, y);
        return;
    }
    ode_interp(L, w, (tm - L->t[w]) / L->h[w], 0, L->n, y);
}

/* The time of function j's crossing in (t, tn], g_j going from ga to gb:
 * Illinois on the dense output, to ev->tol or adjacent doubles; the end on
 * the crossed side. Returns NAN when g failed. */
static double locate(const ode_lanes *L, int w, int j, double tn, double ga, double gb)
{
    const ode_events *ev = L->ev;
    double ta = L->t[w], tb = tn;
    int kept = 0; /* +1: b moved last time (a kept), −1: a moved */
    for (int it = 0; it < ODE_EV_MAXIT && gb != 0 && tb - ta > ev->tol; it++) {
        double tm = tb - gb * (tb - ta) / (gb - ga);
        if (!(tm > ta && tm < tb)) tm = ta + 0.5 * (tb - ta);
        if (!(tm > ta && tm < tb)) break; /* ta and tb adjacent doubles */
        state_at(L, w, tm, tn, ev->ybuf);
        if (!eval_g(L, w, tm, ev->ybuf, ev->gbuf)) return NAN;
        double gm = ev->gbuf[j];
        if (gm == 0 || (gm > 0) == (gb > 0)) { /* the crossed side: b moves */
            tb = tm;
            gb = gm;
            if (kept == 1) ga *= 0.5;
            kept = 1;
        } else {
            ta = tm;
            ga = gm;
            if (kept == -1) gb *= 0.5;
            kept = -1;
        }
    }
    return tb;
}

/* The step's crossings in time order into ftime/fwhich; their count, or −1
 * when g failed. */
static int find_crossings(ode_lanes *L, int w, double tn)
{
    ode_events *ev = L->ev;
    const int m = ev->m, W = L->W;
    int cnt = 0;
    for (int j = 0; j < m; j++) {
        double a = ev->gprev[(size_t)j * W + w], b = ev->gnew[(size_t)j * W + w];
        if (!crosses(ev, j, a, b)) continue;
        double tc = locate(L, w, j, tn, a, b);
        if (isnan(tc)) return -1;
        int k = cnt++;
        for (; k > 0 && ev->ftime[k - 1] > tc; k--) { /* insertion: stable for equal times */
            ev->ftime[k] = ev->ftime[k - 1];
            ev->fwhich[k] = ev->fwhich[k - 1];
        }
        ev->ftime[k] = tc;
        ev->fwhich[k] = j;
    }
    return cnt;
}

/* One event of lane w's trajectory into the ensemble's arrays (counted
 * even past their capacity). buf: n doubles. */
static void record(ode_lanes *L, int w, double tc, int j, double tn, double *buf)
{
    const sv_ode_ensemble *E = L->E;
    const long tr = L->traj[w];
    const int e = E->nevents[tr]++;
    if (e >= E->event_capacity) return;
    const size_t slot = (size_t)tr * E->event_capacity + e;
    E->event_t[slot] = tc;
    E->event_which[slot] = j;
    if (!E->event_y) return;
    state_at(L, w, tc, tn, buf);
    if (L->inv) ode_lane_project(L, w, buf, 1, buf, 1); /* on the invariants, as the saved outputs are */
    memcpy(E->event_y + slot * L->n, buf, sizeof(double) * L->n);
}

ode_ev_outcome ode_events_step(ode_lanes *L, int w, double tn, ode_ev_cut *cut, double *buf)
{
    ode_events *ev = L->ev;
    if (!eval_g_into(L, w, tn, L->ynew, ev->gnew)) return ODE_EV_FAILED;
    int cnt = find_crossings(L, w, tn);
    if (cnt < 0) return ODE_EV_FAILED;
    for (int k = 0; k < cnt; k++) {
        int j = ev->fwhich[k];
        record(L, w, ev->ftime[k], j, tn, buf);
        sv_ode_event_action act = action_of(ev, j);
        if (act == SV_ODE_EVENT_RECORD) continue;
        *cut = (ode_ev_cut){.t = ev->ftime[k], .which = j, .action = act};
        return ODE_EV_CUT;
    }
    commit(L, w);
    return ODE_EV_NONE;
}

void ode_events_move(ode_lanes *L, int w, double tc, double tn, double *buf)
{
    if (tc == tn) return; /* y_new itself */
    ode_interp(L, w, (tc - L->t[w]) / L->h[w], 0, L->n, buf);
    scatter(L->n, L->W, w, buf, L->ynew);
}

int ode_events_handle(ode_lanes *L, int w, int which)
{
    ode_events *ev = L->ev;
    const int n = L->n, np = L->np, W = L->W;
    double *y = ev->ybuf, *p = lane_params(L, w);
    gather(n, W, w, L->y, y);
    int rc = ev->d->handler(L->t[w], y, p, which, L->P->d.user);
    if (rc < 0) return -1;
    scatter(n, W, w, y, L->y);
    if (np) scatter(np, W, w, p, L->p);
    if (!eval_g(L, w, L->t[w], y, ev->gbuf)) return -1;
    scatter(ev->m, W, w, ev->gbuf, ev->gprev);
    return rc == SV_ODE_HANDLER_STOP ? SV_ODE_HANDLER_STOP : SV_ODE_HANDLER_CONTINUE;
}
