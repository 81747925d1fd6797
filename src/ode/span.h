/* A trajectory's span: its start t0 and its save times, the ensemble's
 * shared ones or its own (sv_ode_ensemble.t0_traj, tsave_traj). The one
 * place that reads either; request.c checks them, solve.c, phases.c and
 * init.c use them. */
#ifndef SV_ODE_SPAN_H
#define SV_ODE_SPAN_H

#include "solvent/ode.h"

static inline double ode_span_t0(const sv_ode_ensemble *E, long tr)
{
    return E->t0_traj ? E->t0_traj[tr] : E->t0;
}

/* nsave increasing times; the trajectory integrates to the last. */
static inline const double *ode_span_tsave(const sv_ode_ensemble *E, long tr)
{
    return E->tsave_traj ? E->tsave_traj + (size_t)tr * E->nsave : E->tsave;
}

#endif
