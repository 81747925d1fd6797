/* What sv_ode_solve checks before it runs anything (request.c). */
#ifndef SV_ODE_REQUEST_H
#define SV_ODE_REQUEST_H

#include "ode_internal.h"

/* SV_OK when the problem, the options and the ensemble make a solve it can
 * run (else SV_ERR_ARG naming what is wrong); resolved: the options with
 * every zero that means "default" replaced (ode.h). */
sv_status ode_request_check(const sv_ode_problem *P, const sv_ode_options *opt, const sv_ode_ensemble *E,
                            sv_ode_options *resolved);

#endif
