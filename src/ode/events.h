/* Events over a worker's lanes (events.c): the sign of each event function
 * g_j(t, y, p) at a lane's accepted state, the test of an accepted step
 * for crossings, their times on the method's dense output (Illinois), the
 * records in the ensemble's event arrays, and the handler's call. The
 * driver's phases (phases.c) and the fused step's control ask it; solve.c
 * makes it per worker. */
#ifndef SV_ODE_EVENTS_H
#define SV_ODE_EVENTS_H

#include "lanes.h"

typedef struct ode_events ode_events;

/* A step's outcome for one lane: it goes on to its end (NONE: events, if
 * any, only recorded), or it is cut at time t by function `which`, whose
 * action (STOP or HANDLE) the caller takes after moving the lane there.
 * FAILED: g returned non-zero; the trajectory ends with SV_ODE_F_FAILED. */
typedef enum { ODE_EV_NONE, ODE_EV_CUT, ODE_EV_FAILED } ode_ev_outcome;
typedef struct {
    double t;
    int which;
    sv_ode_event_action action;
} ode_ev_cut;

/* NULL *out when the options define no events. */
sv_status ode_events_create(sv_ctx *ctx, const sv_ode_problem *P, const sv_ode_options *o, int W, ode_events **out);
void ode_events_destroy(sv_ctx *ctx, ode_events *ev);
/* Lane w starts its trajectory: no events yet, g at (t, y). Returns 0 when
 * g failed. */
int ode_events_start(ode_lanes *L, int w);
/* The fused step's test of its accepted lanes (mask; tn[w] their end
 * times): fire[w] set where the step has a crossing or g failed, for
 * ode_events_step to see; the others keep g at their new state. */
void ode_events_screen(ode_lanes *L, const unsigned char *mask, const double *tn, unsigned char *fire);
/* Lane w's accepted step to tn: the crossings located and recorded in time
 * order, up to the first whose action is not RECORD (*cut, then ODE_EV_CUT:
 * the caller moves the lane to cut->t with ode_events_move, then stops it
 * or calls ode_events_handle). buf: n doubles. */
ode_ev_outcome ode_events_step(ode_lanes *L, int w, double tn, ode_ev_cut *cut, double *buf);
/* ynew of lane w = its dense output at time tc (the state a cut step ends
 * at; the step's end tn: y_new as it is). buf: n doubles. */
void ode_events_move(ode_lanes *L, int w, double tc, double tn, double *buf);
/* The handler at lane w's new state (t, y, p), which it may change; g again
 * at the result. Returns SV_ODE_HANDLER_CONTINUE, SV_ODE_HANDLER_STOP, or
 * −1 when the handler or g failed. */
int ode_events_handle(ode_lanes *L, int w, int which);

#endif
