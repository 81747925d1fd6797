/* The driver's phases over a worker's lanes (phases.h): f at the start and
 * Hairer–Wanner first steps (prepare), steps clipped to the end and the
 * tstops (set_steps), and per lane step control with control.h's formulas
 * (control: rejection, or acceptance with the outputs at the save times
 * and the move to the new state; then the limits that end a trajectory).
 * They read the attempt's results from the lanes and the steppers' dense
 * output (steppers.h); solve.c and the fused step run them. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "control.h"
#include "events.h"
#include "norms.h"
#include "phases.h"
#include "sens.h"
#include "steppers.h"

/* ---- completion -------------------------------------------------------------- */
void ode_phase_finish(ode_lanes *L, int w, sv_ode_traj_status status)
{
    long tr = L->traj[w];
    L->st[w].t_reached = L->t[w];
    if (L->E->status) L->E->status[tr] = status;
    if (L->E->stats) L->E->stats[tr] = L->st[w];
    L->active[w] = 0;
    L->traj[w] = -1;
    atomic_fetch_add(L->done, 1);
}

static double *out_row(const ode_lanes *L, long tr, int s)
{
    return L->E->out + ((size_t)tr * L->E->nsave + s) * L->P->n;
}

/* ---- save: outputs at the save times ----------------------------------------- */
void ode_phase_save_initial(ode_lanes *L, int w)
{
    const sv_ode_ensemble *E = L->E;
    const int n = L->n, W = L->W;
    const long tr = L->traj[w];
    const double *tsave = L->tsave[w];
    int s = 0;
    while (s < E->nsave && tsave[s] <= L->t[w]) {
        double *dst = out_row(L, tr, s); /* the lane's y0: a DAE's may have been made consistent */
        for (int i = 0; i < n; i++) dst[i] = L->y[(size_t)i * W + w];
        if (L->sens) ode_sens_store(L, w, tr, s, L->y);
        s++;
    }
    L->save[w] = s;
}

/* The save times in (t, tn]: the new state itself at tn when the step
 * ends there (at_end), dense output elsewhere (buf: n doubles). */
static void save_outputs(ode_lanes *L, int w, double tn, int at_end, double *buf)
{
    const sv_ode_ensemble *E = L->E;
    const int W = L->W, n = L->n;
    const double *tsave = L->tsave[w];
    double t = L->t[w], h = L->h[w];
    long tr = L->traj[w];
    while (L->save[w] < E->nsave && tsave[L->save[w]] <= tn) {
        int s = L->save[w]++;
        double *dst = out_row(L, tr, s);
        if (tsave[s] == tn && at_end) {
            for (int i = 0; i < n; i++) dst[i] = L->ynew[(size_t)i * W + w];
            if (L->sens) ode_sens_store(L, w, tr, s, L->ynew);
        } else {
            double th = (tsave[s] - t) / h;
            ode_interp(L, w, th, 0, n, buf);
            memcpy(dst, buf, sizeof(double) * n);
            if (L->sens) ode_sens_store_interp(L, w, tr, s, th);
        }
        /* the saved value on the invariants, as the state advance() keeps
         * (at the step's end the same call on the same y_new: the same bits) */
        if (L->inv) ode_lane_project(L, w, dst, 1, dst, 1);
    }
}

/* ---- prepare: f at the start and first steps --------------------------------- */
/* f for the masked lanes into out, each evaluation counted (and each
 * refusal). A lane whose callback failed ends, and so does one that
 * refused when refusable is 0 (an accepted state: no smaller step can
 * help); m keeps the lanes still going, refused[w] says which refused. */
static void eval_masked(ode_lanes *L, unsigned char *m, const double *t, const double *y, double *out,
                        int refusable, unsigned char *refused)
{
    for (int w = 0; w < L->W; w++) L->fail[w] = 0;
    ode_eval_f(L->P, L->W, m, t, y, L->p, out, L->fail, L->scratch);
    for (int w = 0; w < L->W; w++) {
        if (!m[w]) continue;
        L->st[w].nf++;
        if (refused) refused[w] = 0;
        if (L->fail[w] == ODE_FAIL_REFUSED) L->st[w].nrefused++;
        if (L->fail[w] == ODE_FAIL_REFUSED && refusable) {
            refused[w] = 1;
        } else if (L->fail[w]) {
            ode_phase_finish(L, w, SV_ODE_F_FAILED);
            m[w] = 0;
        }
        L->fail[w] = 0;
    }
}

/* f0 = f(t, y) for the lanes that lack it (new lanes, after a tstop). */
static void start_f(ode_lanes *L)
{
    const int W = L->W, n = L->n;
    unsigned char m[ODE_WMAX];
    int any = 0;
    for (int w = 0; w < W; w++) {
        m[w] = L->active[w] && !L->have_f0[w];
        any |= m[w];
    }
    if (!any) return;
    eval_masked(L, m, L->t, L->y, L->f0, 0, NULL);
    if (!L->rodas) ode_tsit5_slope(L, m, L->f0);
    unsigned char bad[ODE_WMAX] = {0}; /* every lane at once: the loop over w vectorises */
    for (int i = 0; i < n; i++)
        for (int w = 0; w < W; w++) bad[w] |= !(fabs(L->f0[(size_t)i * W + w]) <= DBL_MAX);
    for (int w = 0; w < W; w++) {
        if (!m[w]) continue;
        L->have_f0[w] = 1;
        if (bad[w]) ode_phase_finish(L, w, SV_ODE_NONFINITE);
    }
}

/* Hairer–Wanner initial step (as OrdinaryDiffEq's initdt, order 5), first
 * half: the guess h0 from |y| and |f0|, and the Euler state U = y + h0·f0
 * at which f is evaluated next. */
static void first_step_guess(ode_lanes *L, int w, double *h0, double *d1, double *dtmax)
{
    const int W = L->W, n = L->n;
    *dtmax = L->tend[w] - L->t[w];
    if (L->o->max_step > 0) *dtmax = fmin(*dtmax, L->o->max_step);
    double d0 = ode_lane_norm(L, w, L->y, L->y);
    *d1 = ode_lane_norm(L, w, L->f0, L->y);
    *h0 = (d0 < 1e-5 || *d1 < 1e-5) ? 1e-6 : 0.01 * d0 / *d1;
    *h0 = fmin(*h0, *dtmax);
    for (int i = 0; i < n; i++) {
        size_t q = (size_t)i * W + w;
        L->U[q] = L->y[q] + *h0 * L->f0[q];
    }
    L->tstage[w] = L->t[w] + *h0;
}

/* Second half: the estimate of f's second derivative from f(U) − f0 gives
 * the proposed first step. */
static double first_step(ode_lanes *L, int w, double h0, double d1, double dtmax)
{
    const int W = L->W, n = L->n;
    int same = 1;
    for (int i = 0; i < n; i++) {
        size_t q = (size_t)i * W + w;
        L->err[q] = L->fv[q] - L->f0[q];
        same &= L->err[q] == 0;
    }
    double h;
    if (same) {
        h = 100 * h0;
    } else {
        double d2 = ode_lane_norm(L, w, L->err, L->y) / h0;
        double m2 = fmax(d1, d2);
        double h1 = m2 <= 1e-15 ? fmax(1e-6, 1e-3 * h0) : pow(0.01 / m2, 1.0 / 5.0);
        h = fmin(100 * h0, h1);
    }
    h = fmin(h, dtmax);
    if (!(h > 0) || !isfinite(h)) h = 1e-6;
    return h;
}

/* The proposed first step of every new lane (one batched f evaluation). */
static void first_steps(ode_lanes *L)
{
    const int W = L->W;
    unsigned char hm[ODE_WMAX];
    double h0[ODE_WMAX], d1[ODE_WMAX], dtmax[ODE_WMAX];
    int any = 0;
    for (int w = 0; w < W; w++) {
        hm[w] = L->active[w] && L->need_h0[w];
        if (!hm[w]) continue;
        any = 1;
        first_step_guess(L, w, &h0[w], &d1[w], &dtmax[w]);
    }
    if (!any) return;
    unsigned char refused[ODE_WMAX];
    eval_masked(L, hm, L->tstage, L->U, L->fv, 1, refused);
    if (!L->rodas) ode_tsit5_slope(L, hm, L->fv);
    /* f refusing the Euler probe y0 + h0·f0: the cautious guess h0 itself */
    for (int w = 0; w < W; w++)
        if (hm[w]) {
            L->need_h0[w] = 0;
            L->hprop[w] = refused[w] ? h0[w] : first_step(L, w, h0[w], d1[w], dtmax[w]);
        }
}

void ode_phase_prepare(ode_lanes *L)
{
    start_f(L);
    first_steps(L);
}

/* ---- set_steps: the attempt's step ------------------------------------------- */
void ode_phase_set_steps(ode_lanes *L)
{
    const sv_ode_options *o = L->o;
    for (int w = 0; w < L->W; w++) {
        if (!L->active[w]) continue;
        double t = L->t[w], h = L->hprop[w];
        if (o->max_step > 0) h = fmin(h, o->max_step);
        L->hits[w] = ODE_HITS_NOTHING;
        L->tcap[w] = INFINITY;
        if (L->stop_idx[w] < o->ntstops) {
            double ts = o->tstops[L->stop_idx[w]];
            if (ts < L->tend[w] && t + h >= ts) {
                h = ts - t;
                L->hits[w] = ODE_HITS_TSTOP;
                L->tcap[w] = nextafter(ts, -INFINITY);
            }
        }
        if (L->hits[w] == ODE_HITS_NOTHING && t + h >= L->tend[w]) {
            h = L->tend[w] - t;
            L->hits[w] = ODE_HITS_END;
        }
        L->h[w] = h;
    }
}

/* ---- control: lane by lane --------------------------------------------------- */
/* Non-finite attempts in a row after which a trajectory ends: its step
 * shrank by qmin each time without finding a finite one. */
enum { ODE_NONFINITE_LIMIT = 30 };

/* A rejected step: the next, smaller h. Returns 0 when the lane ended
 * (fixed steps, ODE_NONFINITE_LIMIT non-finite attempts in a row, or
 * max_refusals refused ones). A refused attempt shrinks h like a
 * non-finite one. */
static int reject_step(ode_lanes *L, int w)
{
    const sv_ode_options *o = L->o;
    double Ee = L->eest[w], h = L->h[w];
    L->st[w].rejected++;
    if (L->fail[w] == ODE_FAIL_REFUSED) {
        L->hprop[w] = h * o->qmin;
        if (o->fixed_step > 0 || ++L->refusals[w] >= o->max_refusals) {
            ode_phase_finish(L, w, SV_ODE_F_FAILED);
            return 0;
        }
        return 1;
    }
    if (!isfinite(Ee)) {
        L->nonfinite[w]++;
        L->hprop[w] = h * o->qmin;
    } else {
        L->nonfinite[w] = 0;
        L->hprop[w] = ode_ctrl_rejected_h(o, h, Ee);
    }
    if (o->fixed_step > 0 || L->nonfinite[w] >= ODE_NONFINITE_LIMIT) {
        ode_phase_finish(L, w, SV_ODE_NONFINITE);
        return 0;
    }
    return 1;
}

/* The controller's ratio q = h / h_new after an accepted step, and the
 * error history it keeps (log E_old and the one before). */
static double step_ratio(ode_lanes *L, int w)
{
    return ode_ctrl_accepted_q(L->o, L->o->qsteady_max, L->lerr_floor, L->eest[w], &L->lerrold[w],
                               &L->lerrolder[w]);
}

/* The lane moves to (tn, y_new). */
static void advance(ode_lanes *L, int w, double tn)
{
    const int W = L->W, n = L->n;
    /* Tsit5's last stage is f(t + h, y_new): the next first stage (FSAL),
     * except after a tstop where f may jump (the sensitivities' too) and
     * after an event that cut the step (f was not evaluated there). */
    const int rows = n * L->nvec;
    if (!L->rodas && L->hits[w] != ODE_HITS_TSTOP && L->hits[w] != ODE_HITS_EVENT) {
        const double *k7 = L->k + 6 * L->kstride;
        for (int i = 0; i < rows; i++) L->f0[(size_t)i * W + w] = k7[(size_t)i * W + w];
        L->have_f0[w] = 1;
    } else {
        L->have_f0[w] = 0;
    }
    for (int i = 0; i < rows; i++) L->y[(size_t)i * W + w] = L->ynew[(size_t)i * W + w];
    if (L->inv) ode_lane_project(L, w, L->y + w, (size_t)W, L->y + w, (size_t)W);
    if (L->sens) ode_sens_advance(L, w);
    L->t[w] = tn;
    if (L->hits[w] == ODE_HITS_TSTOP) L->stop_idx[w]++;
    L->need_jac[w] = 1;
}

/* The events of lane w's accepted step to tn (events.h): recorded, and
 * when one stops the trajectory or calls the handler, the step cut there:
 * *tn becomes the event's time and hits[w] ODE_HITS_EVENT (an event at the
 * end or a tstop itself keeps what the step hit), with y_new the dense
 * output there. Returns the outcome; cut says the event. */
static ode_ev_outcome step_events(ode_lanes *L, int w, double *tn, ode_ev_cut *cut, double *buf)
{
    ode_ev_outcome out = ode_events_step(L, w, *tn, cut, buf);
    if (out != ODE_EV_CUT) return out;
    const int at_end = cut->t == *tn;
    save_outputs(L, w, cut->t, at_end, buf);
    ode_events_move(L, w, cut->t, *tn, buf);
    if (!at_end || L->hits[w] == ODE_HITS_NOTHING) L->hits[w] = ODE_HITS_EVENT;
    *tn = cut->t;
    return out;
}

/* After a cut step: the stop event, or the handler (which may stop the
 * trajectory or fail). Returns 0 when the lane's trajectory ended. */
static int act_on_event(ode_lanes *L, int w, const ode_ev_cut *cut)
{
    int rc = cut->action == SV_ODE_EVENT_STOP ? SV_ODE_HANDLER_STOP : ode_events_handle(L, w, cut->which);
    if (rc == SV_ODE_HANDLER_CONTINUE) {
        if (L->inv) ode_lane_set_invariants(L, w); /* the handler may have moved y off the old values */
        return 1;
    }
    ode_phase_finish(L, w, rc == SV_ODE_HANDLER_STOP ? SV_ODE_STOPPED : SV_ODE_F_FAILED);
    return 0;
}

/* An accepted step. Returns 0 when the lane reached the end. */
static int accept_step(ode_lanes *L, int w, double *buf)
{
    const sv_ode_options *o = L->o;
    L->nonfinite[w] = 0;
    L->refusals[w] = 0;
    double q = step_ratio(L, w), h = L->h[w];
    double tn = L->hits[w] == ODE_HITS_END     ? L->tend[w]
                : L->hits[w] == ODE_HITS_TSTOP ? o->tstops[L->stop_idx[w]]
                                               : L->t[w] + h;
    ode_ev_cut cut;
    ode_ev_outcome ev = L->ev ? step_events(L, w, &tn, &cut, buf) : ODE_EV_NONE;
    if (ev == ODE_EV_FAILED) {
        ode_phase_finish(L, w, SV_ODE_F_FAILED);
        return 0;
    }
    if (ev == ODE_EV_NONE) save_outputs(L, w, tn, 1, buf);
    advance(L, w, tn);
    L->st[w].accepted++;
    L->hprop[w] = o->fixed_step > 0 ? o->fixed_step : h / q;
    if (ev == ODE_EV_CUT && !act_on_event(L, w, &cut)) return 0;
    if (L->hits[w] == ODE_HITS_END || tn >= L->tend[w]) {
        ode_phase_finish(L, w, SV_ODE_SUCCESS);
        return 0;
    }
    return 1;
}

/* The step budget and the smallest step a lane may take next. */
static void check_limits(ode_lanes *L, int w)
{
    int end = ode_ctrl_limit(L->o, &L->st[w], L->t[w], L->hprop[w], L->refusals[w], L->nonfinite[w]);
    if (end >= 0) ode_phase_finish(L, w, (sv_ode_traj_status)end);
}

void ode_phase_control(ode_lanes *L, const unsigned char *only)
{
    const int n = L->n;
    double row[4096 / sizeof(double)];
    double *buf = n <= (int)(sizeof row / sizeof row[0]) ? row : L->err; /* err is free after the attempt */
    for (int w = 0; w < L->W; w++) {
        if (!L->active[w] || (only && !only[w])) continue;
        if (L->fail[w] == ODE_FAIL_HARD) {
            ode_phase_finish(L, w, SV_ODE_F_FAILED);
            continue;
        }
        if (L->fail[w] == ODE_FAIL_REFUSED) L->st[w].nrefused++;
        int accept = !L->fail[w] && ode_ctrl_accept(L->o, L->eest[w]);
        int going = accept ? accept_step(L, w, buf) : reject_step(L, w);
        if (going) check_limits(L, w);
    }
}
