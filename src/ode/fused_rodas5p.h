/* The fused Rodas5P step for tiny dense systems (fused_rodas5p.c): a whole
 * step of every lane in one routine per (n, W), over the driver's phases
 * (phases.h) for the rare lanes. What solve.c, above it, asks of it. */
#ifndef SV_ODE_FUSED_RODAS5P_H
#define SV_ODE_FUSED_RODAS5P_H

#include "lanes.h"

/* The lane count the fused step runs best with (two vector registers of
 * doubles) when it covers this problem and these options (Rodas5P, double
 * LU, the tiny systems lin.c holds in full storage, no sensitivities: sens
 * says whether the solve computes them), else 0. */
int ode_fused_lanes(sv_ctx *ctx, const sv_ode_problem *P, const sv_ode_options *o, int sens);
/* The fused whole step for L's problem and lane count, or NULL when the
 * general phases serve it; same numbers either way. Its status is the
 * linear solver's (the double-double lanes' buffers). */
sv_status (*ode_fused_step_select(const ode_lanes *L))(ode_lanes *L);

#endif
