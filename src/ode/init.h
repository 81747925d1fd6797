/* A DAE's initial values checked or computed before a solve (init.c). */
#ifndef SV_ODE_INIT_H
#define SV_ODE_INIT_H

#include "ode_internal.h"

/* For a problem with algebraic equations: options.init = check verifies
 * every trajectory's y0 (SV_ERR_ARG naming the trajectory, the equation,
 * its residual and the needed change when one is inconsistent); compute
 * returns in *y0c (allocated with ctx; the caller frees it) the consistent
 * values, one row per trajectory or a single row (*y0c_shared) when y0
 * and the parameters are shared. *y0c is NULL when E's y0 stands (an ODE,
 * or the check). o: resolved options (their tolerances measure the check). */
sv_status ode_init_values(sv_ctx *ctx, const sv_ode_problem *P, const sv_ode_options *o, const sv_ode_ensemble *E,
                          double **y0c, int *y0c_shared);

#endif
