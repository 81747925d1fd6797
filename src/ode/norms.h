/* The weighted RMS norms the step attempts and the first-step estimate
 * measure with (norms.c), below the steppers and the driver that both use
 * them: a norm reads the lanes' arrays and tolerances and calls nothing. */
#ifndef SV_ODE_NORMS_H
#define SV_ODE_NORMS_H

#include "lanes.h"

/* Every lane's error norm of an attempt (out: W values):
 * sqrt(mean((wt_i·e_i / (atol_i + max(|y_i|, |ynew_i|)·rtol))²)). */
void ode_error_norms(const ode_lanes *L, const double *e, double *out);

/* The sensitivities' share of the error control (sens.h), when they take
 * part in it: eest[w] = max(eest[w], every direction's norm) for the
 * active lanes; e: the directions' error estimates (ns vectors). */
void ode_sens_error_norms(ode_lanes *L, const double *e);

/* Lane w's sqrt(mean((wt_i·v_i / (atol_i + |y_i|·rtol))²)): the sizes
 * the first-step estimate compares. */
double ode_lane_norm(const ode_lanes *L, int w, const double *v, const double *y);

#endif
