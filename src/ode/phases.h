/* The driver's phases over a worker's lanes (phases.c), around a step
 * attempt: f at the start and the first steps (prepare), the steps clipped
 * to the end and the tstops (set_steps), then per lane acceptance or
 * rejection, outputs at the save times and completion (control). solve.c
 * runs them around the steppers' attempt; the fused step for tiny systems
 * (fused_rodas5p.h) runs its own versions of the common cases and hands the
 * rare lanes — refused or failed callbacks, save times, tstops — to these. */
#ifndef SV_ODE_PHASES_H
#define SV_ODE_PHASES_H

#include "lanes.h"

/* f(t, y) for lanes that lack it and the first-step estimate for new lanes;
 * lanes whose f fails or is not finite end there. */
void ode_phase_prepare(ode_lanes *L);
/* Clip each active lane's proposed step to the end, the next tstop and max_step. */
void ode_phase_set_steps(ode_lanes *L);
/* Accept or reject the attempt of the active lanes with only[w] set (NULL:
 * all): step control (control.h's formulas), outputs at the save times,
 * completion. */
void ode_phase_control(ode_lanes *L, const unsigned char *only);
/* Lane w just took trajectory L->traj[w] from y0 at t0: the save times at
 * or before t0 take y0, save[w] is the first one after. */
void ode_phase_save_initial(ode_lanes *L, int w);
/* End lane w's trajectory with `status` (the lane becomes idle). */
void ode_phase_finish(ode_lanes *L, int w, sv_ode_traj_status status);

#endif
