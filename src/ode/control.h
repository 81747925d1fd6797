/* Step-size control: the one place its formulas live, used per lane by the
 * driver's control phase (phases.c) and by the fused step for tiny systems
 * (fused_rodas5p_tmpl.h), so both take the same decisions bit for bit.
 *
 * OrdinaryDiffEq's PI controller (docs/ode.md): on acceptance
 * q = clamp(E^β1 / E_old^β2 · E_older^β3 / safety, 1/qmax, 1/qmin) and
 * h_new = h/q, q in [1, qsteady] keeps h; a rejected step takes
 * h / min(1/qmin, E^β1/safety); E_old = max(E, 1e-4). */
#ifndef SV_ODE_CONTROL_H
#define SV_ODE_CONTROL_H

#include <math.h>

#include "solvent/ode.h"

/* Whether the attempt with error estimate E is accepted (one whose
 * callbacks refused or failed never is: the caller looks first). */
static inline int ode_ctrl_accept(const sv_ode_options *o, double E)
{
    return o->fixed_step > 0 ? isfinite(E) : E <= 1.0;
}

/* q = h/h_new for an accepted step with error E; updates the lane's error
 * history (log E_old, log E_older). lerr_floor = log(1e-4), the history's
 * value for E ≤ 1e-4. */
static inline double ode_ctrl_accepted_q(const sv_ode_options *o, double qsteady, double lerr_floor, double E,
                                         double *lerrold, double *lerrolder)
{
    double q, lE = 0;
    if (o->fixed_step > 0) {
        q = 1.0;
    } else if (E == 0) {
        q = 1.0 / o->qmax;
    } else {
        /* E^β1 / E_old^β2 as one exp of logs (pow twice costs more); log
         * E_old was kept from the previous accepted step */
        lE = log(E);
        q = exp(o->beta1 * lE - o->beta2 * *lerrold + o->beta3 * *lerrolder) / o->safety;
        q = fmax(1.0 / o->qmax, fmin(1.0 / o->qmin, q));
        if (q >= 1.0 && q <= qsteady) q = 1.0;
    }
    *lerrolder = *lerrold;
    *lerrold = E > 1e-4 && lE != 0 ? lE : E > 1e-4 ? log(E) : lerr_floor;
    return q;
}

/* The next step after a rejection with a finite error E. */
static inline double ode_ctrl_rejected_h(const sv_ode_options *o, double h, double E)
{
    return h / fmin(1.0 / o->qmin, pow(E, o->beta1) / o->safety);
}

/* The status of a lane whose next step is too small to make progress: a
 * callback that kept refusing (refusals in a row) is the cause, else
 * non-finite attempts, else the step itself. */
static inline sv_ode_traj_status ode_ctrl_too_small(int refusals, int nonfinite)
{
    return refusals ? SV_ODE_F_FAILED : nonfinite ? SV_ODE_NONFINITE : SV_ODE_STEP_TOO_SMALL;
}

/* After a step of a lane that goes on: the status that ends its trajectory
 * (steps used up, or the next step hn from t too small to make progress),
 * or -1 when it continues. */
static inline int ode_ctrl_limit(const sv_ode_options *o, const sv_ode_stats *st, double t, double hn, int refusals,
                                 int nonfinite)
{
    if (st->accepted + st->rejected >= o->max_steps) return SV_ODE_MAX_STEPS;
    if (!(hn > o->min_step_rel * fabs(t)) || !(hn > 1e-300) || t + hn == t)
        return ode_ctrl_too_small(refusals, nonfinite);
    return -1;
}

#endif
