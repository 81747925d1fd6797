/* The ensemble driver's phases (solve.c), for a step specialised to one
 * problem class that runs them itself and hands the rare cases back
 * (fused_rodas5p_tmpl.h). `ode_shared` is the state of one sv_ode_solve
 * call, shared by its threads. */
#ifndef SV_ODE_DRIVER_H
#define SV_ODE_DRIVER_H

#include "lanes.h"

typedef struct shared ode_shared;

/* f(t, y) for lanes that lack it and the first-step estimate for new lanes;
 * lanes whose f fails or is not finite end there. */
void ode_drv_prepare(ode_shared *S, ode_lanes *L);
/* Clip each active lane's proposed step to the end, the next tstop and max_step. */
void ode_drv_set_steps(ode_shared *S, ode_lanes *L);
/* Accept or reject the attempt of the active lanes with only[w] set (NULL:
 * all): step control, outputs at the save times, completion. */
void ode_drv_control(ode_shared *S, ode_lanes *L, const unsigned char *only);
/* End lane w's trajectory with `status` (the lane becomes idle). */
void ode_drv_finish(ode_shared *S, ode_lanes *L, int w, sv_ode_traj_status status);

/* The lane count the fused step runs best with (two vector registers of
 * doubles) when it covers this problem and these options (Rodas5P, double
 * LU, the tiny systems lin.c holds in full storage, no sensitivities: sens
 * says whether the solve computes them), else 0. */
int ode_fused_lanes(sv_ctx *ctx, const sv_ode_problem *P, const sv_ode_options *o, int sens);
/* The fused whole step for L's problem and lane count, or NULL when the
 * general phases serve it (fused_rodas5p.c); same numbers either way. Its
 * status is the linear solver's (the double-double lanes' buffers). */
sv_status (*ode_fused_step_select(const ode_lanes *L))(ode_shared *S, ode_lanes *L);

#endif
