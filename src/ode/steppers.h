/* The step attempts over a worker's lanes (rodas5p.c, tsit5.c) and their
 * dense output: what the driver (phases.c, solve.c) and the sensitivities'
 * outputs (sens_lanes.c) use of the steppers. The steppers themselves use
 * only what lies below them: the lanes' arrays, f and the Jacobian
 * (eval.c), the linear solver (lin.c), their sensitivity parts
 * (sens_rodas5p.c, sens_tsit5.c) and the norms (norms.c). */
#ifndef SV_ODE_STEPPERS_H
#define SV_ODE_STEPPERS_H

#include "lanes.h"

/* One step attempt for every active lane: fills ynew and eest (INFINITY
 * for a non-finite error or a bad pivot) and fail (callback failures).
 * The status is the linear solver's (Tsit5 has none: always SV_OK). */
sv_status ode_rodas5p_attempt(ode_lanes *L);
sv_status ode_tsit5_attempt(ode_lanes *L);
/* Tsit5 works with slopes y' = M⁻¹ f: f over W lanes (slot-major, the
 * state's n·W values) turned into them in place for the masked lanes when
 * the problem has a mass matrix (none: nothing to do). */
void ode_tsit5_slope(ode_lanes *L, const unsigned char *mask, double *f);
/* Dense output of lane w's last attempt at t + θh for rows r0 .. r1 − 1 of
 * the nvec·n (the state's are 0 .. n − 1) into out. */
void ode_rodas5p_interp(const ode_lanes *L, int w, double theta, int r0, int r1, double *out);
void ode_tsit5_interp(const ode_lanes *L, int w, double theta, int r0, int r1, double *out);

/* The same for the lanes' method. */
static inline sv_status ode_attempt(ode_lanes *L)
{
    return L->rodas ? ode_rodas5p_attempt(L) : ode_tsit5_attempt(L);
}
static inline void ode_interp(const ode_lanes *L, int w, double theta, int r0, int r1, double *out)
{
    if (L->rodas)
        ode_rodas5p_interp(L, w, theta, r0, r1, out);
    else
        ode_tsit5_interp(L, w, theta, r0, r1, out);
}

#endif
