#ifndef SV_TEST_SUPPORT_ODE_H
#define SV_TEST_SUPPORT_ODE_H
#include "solvent/ode.h"

/* Integrate b from t0 to t1 (its tstops unless o sets its own); yend: n values. */
sv_status ode_run_builtin(const sv_ode_builtin *b, const sv_ode_options *o, double *yend,
                          sv_ode_traj_status *status, sv_ode_stats *stats);
/* The same, asserting that the solve ran and the trajectory succeeded;
 * returns its statistics. */
sv_ode_stats ode_run_success(const sv_ode_builtin *b, const sv_ode_options *o, double *yend);
/* Significant correct digits: −log10(max_i |y_i − ref_i| / |ref_i|). */
double ode_scd(int n, const double *y, const double *ref);
#endif
