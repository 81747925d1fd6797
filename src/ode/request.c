/* A request to sv_ode_solve checked before anything runs (request.h): the
 * options resolved (every zero that means "default" replaced) and checked,
 * the ensemble's arrays and save times, and a sensitivity request the
 * problem and the method can serve. */
#include <float.h>
#include <math.h>
#include <stdio.h>

#include "request.h"
#include "span.h"

/* The options with every zero that means "default" replaced (ode.h). */
static sv_ode_options resolve_options(const sv_ode_options *in)
{
    sv_ode_options o = *in, d;
    sv_ode_options_default(&d);
    if (o.max_steps == 0) o.max_steps = d.max_steps;
    if (o.beta1 == 0) {
        o.beta1 = d.beta1;
        o.beta2 = d.beta2;
        o.beta3 = d.beta3;
    }
    if (o.safety == 0) o.safety = d.safety;
    if (o.qmin == 0) o.qmin = d.qmin;
    if (o.qmax == 0) o.qmax = d.qmax;
    if (!(o.qsteady_max > 0)) o.qsteady_max = o.method == SV_ODE_TSIT5 ? 1.0 : 1.2;
    if (o.min_step_rel == 0) o.min_step_rel = d.min_step_rel;
    if (o.max_refusals == 0) o.max_refusals = d.max_refusals;
    return o;
}

static sv_status check_tolerances(const sv_ode_problem *P, const sv_ode_options *o, const char *nm)
{
    int n = P->n;
    if (!(o->rtol >= 0) || !(o->rtol <= SV_ODE_RTOL_MAX))
        return sv_error(SV_ERR_ARG, "%s: rtol = %g: expected a value >= 0 and <= %g (a larger relative tolerance "
                        "controls no digit of the solution)", nm, o->rtol, SV_ODE_RTOL_MAX);
    if (o->fixed_step <= 0 && o->rtol > 0 && o->rtol < 4 * DBL_EPSILON)
        return sv_error(SV_ERR_ARG, "%s: rtol = %g is below what double precision can deliver (>= %g)", nm, o->rtol,
                        4 * DBL_EPSILON);
    if (o->atol_vec) {
        for (int i = 0; i < n; i++)
            if (!(o->atol_vec[i] >= 0) || !isfinite(o->atol_vec[i]))
                return sv_error(SV_ERR_ARG, "%s: atol_vec[%d] = %g: expected a finite value >= 0", nm, i,
                                o->atol_vec[i]);
    } else if (!(o->atol >= 0) || !isfinite(o->atol)) {
        return sv_error(SV_ERR_ARG, "%s: atol = %g: expected a finite value >= 0", nm, o->atol);
    }
    if (o->rtol == 0 && o->fixed_step <= 0) {
        int allzero = 1;
        for (int i = 0; i < n; i++) allzero &= (o->atol_vec ? o->atol_vec[i] : o->atol) == 0;
        if (allzero) return sv_error(SV_ERR_ARG, "%s: rtol = 0 and atol = 0: no error tolerance to control", nm);
    }
    if (o->weights)
        for (int i = 0; i < n; i++)
            if (!(o->weights[i] >= 0) || !isfinite(o->weights[i]))
                return sv_error(SV_ERR_ARG, "%s: weights[%d] = %g: expected a finite value >= 0", nm, i,
                                o->weights[i]);
    return SV_OK;
}

static sv_status check_options(const sv_ode_problem *P, const sv_ode_options *o, const char *nm)
{
    if (o->method != SV_ODE_RODAS5P && o->method != SV_ODE_TSIT5)
        return sv_error(SV_ERR_ARG, "%s: method = %d: expected Rodas5P (0) or Tsit5 (1)", nm, (int)o->method);
    sv_status st = check_tolerances(P, o, nm);
    if (st != SV_OK) return st;
    if (o->max_steps < 1) return sv_error(SV_ERR_ARG, "%s: max_steps = %ld: expected >= 1", nm, o->max_steps);
    if (!(o->first_step >= 0) || !(o->max_step >= 0) || !(o->fixed_step >= 0))
        return sv_error(SV_ERR_ARG, "%s: first_step, max_step and fixed_step must be >= 0 (got %g, %g, %g)", nm,
                        o->first_step, o->max_step, o->fixed_step);
    if (!(o->qmin > 0 && o->qmin <= 1) || !(o->qmax >= 1) || !(o->safety > 0 && o->safety <= 1) ||
        !(o->beta1 >= 0) || !(o->beta2 >= 0) || !isfinite(o->beta3))
        return sv_error(SV_ERR_ARG,
                        "%s: controller gains out of range (qmin %g in (0,1], qmax %g >= 1, safety %g in (0,1], "
                        "beta1 %g >= 0, beta2 %g >= 0)",
                        nm, o->qmin, o->qmax, o->safety, o->beta1, o->beta2);
    if (o->max_refusals < 1)
        return sv_error(SV_ERR_ARG, "%s: max_refusals = %d: expected >= 1 (0 = default)", nm, o->max_refusals);
    if (o->check_pattern != SV_ODE_CHECK_ON && o->check_pattern != SV_ODE_CHECK_OFF)
        return sv_error(SV_ERR_ARG, "%s: check_pattern = %d: expected on (0) or off (1)", nm, (int)o->check_pattern);
    if (!isfinite(o->min_step_rel))
        return sv_error(SV_ERR_ARG, "%s: min_step_rel = %g: expected a finite value", nm, o->min_step_rel);
    if (o->lu != SV_ODE_LU_DOUBLE && o->lu != SV_ODE_LU_SINGLE)
        return sv_error(SV_ERR_ARG, "%s: lu = %d: expected double (0) or single (1)", nm, (int)o->lu);
    if (!(o->lanes == 0 || o->lanes == 1 || o->lanes == 2 || o->lanes == 4 || o->lanes == 8 || o->lanes == 16))
        return sv_error(SV_ERR_ARG, "%s: lanes = %d: expected 0 (default), 1, 2, 4, 8 or 16", nm, o->lanes);
    if (o->ntstops < 0 || (o->ntstops > 0 && !o->tstops))
        return sv_error(SV_ERR_ARG, "%s: ntstops = %d with tstops %s", nm, o->ntstops, o->tstops ? "set" : "NULL");
    for (int i = 1; i < o->ntstops; i++)
        if (!(o->tstops[i] > o->tstops[i - 1]))
            return sv_error(SV_ERR_ARG, "%s: tstops must increase (tstops[%d] = %g after %g)", nm, i, o->tstops[i],
                            o->tstops[i - 1]);
    if (o->init != SV_ODE_INIT_CHECK && o->init != SV_ODE_INIT_COMPUTE)
        return sv_error(SV_ERR_ARG, "%s: init = %d: expected check (0) or compute (1)", nm, (int)o->init);
    return SV_OK;
}

/* A mass matrix the method can serve: a DAE (zero rows) needs an implicit
 * method, and Tsit5's slopes M⁻¹f need M's LU (mass.c keeps it up to its
 * dense limit). */
static sv_status check_mass(const sv_ode_problem *P, const sv_ode_options *o, const sv_ode_ensemble *E,
                            const char *nm)
{
    const ode_mass *m = P->mass;
    if (!m) return SV_OK;
    if (E->sens_out)
        return sv_error(SV_ERR_UNSUPPORTED, "%s: forward sensitivities with a mass matrix are not supported (a DAE's "
                        "sensitivities need consistent initial values of their own): solve without sens_out", nm);
    if (o->method != SV_ODE_TSIT5) return SV_OK;
    if (m->nalg > 0)
        return sv_error(SV_ERR_ARG, "%s: Tsit5 cannot solve a DAE: the mass matrix is singular (%d algebraic "
                        "constraint(s)), which an explicit method cannot satisfy; use Rodas5P", nm, m->nalg);
    if (!m->lu)
        return sv_error(SV_ERR_UNSUPPORTED, "%s: Tsit5 with a mass matrix factors M densely, which is limited to "
                        "n <= %d (n = %d); use Rodas5P", nm, ODE_MASS_DENSE_MAX, P->n);
    return SV_OK;
}

/* A span: t0 finite, save times finite, increasing, from t0 on. tr = −1:
 * the shared one (E->t0, E->tsave); otherwise trajectory tr's (span.h). */
static sv_status check_span(const sv_ode_ensemble *E, long tr, const char *nm)
{
    const double t0 = tr < 0 ? E->t0 : ode_span_t0(E, tr);
    const double *ts = tr < 0 ? E->tsave : ode_span_tsave(E, tr);
    char who[48] = "";
    if (tr >= 0) snprintf(who, sizeof who, " of trajectory %ld", tr);
    const char *t0n = tr >= 0 && E->t0_traj ? "t0_traj" : "t0", *tsn = tr >= 0 && E->tsave_traj ? "tsave_traj" : "tsave";
    if (!isfinite(t0)) return sv_error(SV_ERR_ARG, "%s: %s%s = %g: expected finite", nm, t0n, who, t0);
    for (int s = 0; s < E->nsave; s++) {
        if (!isfinite(ts[s]) || ts[s] < t0)
            return sv_error(SV_ERR_ARG, "%s: %s[%d]%s = %g: expected finite and >= t0 = %g", nm, tsn, s, who, ts[s],
                            t0);
        if (s > 0 && !(ts[s] > ts[s - 1]))
            return sv_error(SV_ERR_ARG, "%s: %s%s must increase (%s[%d] = %g after %g)", nm, tsn, who, tsn, s, ts[s],
                            ts[s - 1]);
    }
    return SV_OK;
}

static sv_status check_ensemble(const sv_ode_problem *P, const sv_ode_ensemble *E, const char *nm)
{
    if (E->ntraj < 0) return sv_error(SV_ERR_ARG, "%s: ntraj = %d: expected >= 0", nm, E->ntraj);
    if (E->nsave < 1 || (!E->tsave && !E->tsave_traj))
        return sv_error(SV_ERR_ARG, "%s: nsave = %d, tsave %s: need at least one save time", nm, E->nsave,
                        E->tsave ? "set" : "NULL");
    size_t outs;
    if (sv_size_mul((size_t)E->ntraj, (size_t)E->nsave, &outs) || sv_size_mul(outs, (size_t)P->n, &outs) ||
        sv_size_mul(outs, sizeof(double), &outs))
        return sv_error(SV_ERR_ARG, "%s: ntraj = %d x nsave = %d x n = %d outputs: more than memory can address", nm,
                        E->ntraj, E->nsave, P->n);
    /* the shared span, or each trajectory's (one of its parts may be shared) */
    const int own = E->t0_traj || E->tsave_traj;
    sv_status st = own ? SV_OK : check_span(E, -1, nm);
    for (long tr = 0; tr < E->ntraj && st == SV_OK && own; tr++) st = check_span(E, tr, nm);
    if (st != SV_OK) return st;
    if (E->ntraj > 0 && !E->y0) return sv_error(SV_ERR_ARG, "%s: y0 is NULL", nm);
    if (E->ntraj > 0 && P->np > 0 && !E->params)
        return sv_error(SV_ERR_ARG, "%s: params is NULL but the problem has %d parameters", nm, P->np);
    if (E->ntraj > 0 && !E->out) return sv_error(SV_ERR_ARG, "%s: out is NULL", nm);
    return SV_OK;
}

/* Absolute tolerances within SV_ODE_ATOL_MAX_SCALE times the state's
 * scale (ode.h): past it the error test passes steps whatever their error. */
static sv_status check_atol_scale(const sv_ode_problem *P, const sv_ode_options *o, const sv_ode_ensemble *E,
                                  const char *nm)
{
    double scale = 1;
    size_t values = (size_t)(E->y0_shared ? 1 : E->ntraj) * P->n; /* one y0 for all, or one each */
    for (size_t q = 0; q < values; q++)
        if (fabs(E->y0[q]) > scale) scale = fabs(E->y0[q]);
    double hi = SV_ODE_ATOL_MAX_SCALE * scale;
    for (int i = 0; i < P->n; i++) {
        double a = o->atol_vec ? o->atol_vec[i] : o->atol;
        if (!(a > hi)) continue;
        char which[32] = "atol";
        if (o->atol_vec) snprintf(which, sizeof which, "atol_vec[%d]", i);
        return sv_error(SV_ERR_ARG, "%s: %s = %g: expected at most %g (%g times the state's scale %g, the "
                        "largest |y0| or 1: an error allowed as large as the state controls nothing)",
                        nm, which, a, hi, SV_ODE_ATOL_MAX_SCALE, scale);
    }
    return SV_OK;
}

/* A sensitivity request the problem and the method can serve. */
static sv_status check_sensitivities(const sv_ode_problem *P, const sv_ode_options *o, const sv_ode_ensemble *E,
                                     const char *nm)
{
    if (!E->sens_out) return SV_OK;
    if (P->ns == 0)
        return sv_error(SV_ERR_ARG, "%s: sens_out is set but the problem has no sensitivity directions "
                                    "(nsens_params = nsens_y0 = 0)", nm);
    size_t outs; /* ntraj·nsave·n fits (check_ensemble); times nsens */
    if (sv_size_mul((size_t)E->ntraj * E->nsave * P->n, (size_t)P->ns, &outs) ||
        sv_size_mul(outs, sizeof(double), &outs))
        return sv_error(SV_ERR_ARG, "%s: ntraj = %d x nsave = %d x n = %d x nsens = %d sensitivities: more than "
                                    "memory can address", nm, E->ntraj, E->nsave, P->n, P->ns);
    if (o->method == SV_ODE_RODAS5P && !P->d.jac_dir && !P->d.jac_dir_batch && !P->d.tangent_complex)
        return sv_error(SV_ERR_ARG,
                        "%s: Rodas5P sensitivities need the Jacobian's derivative along each direction exactly: "
                        "set jac_dir or tangent_complex (docs/ode.md), or use Tsit5", nm);
    if (o->sens_scale)
        for (int j = 0; j < P->ns; j++)
            if (!(o->sens_scale[j] > 0) || !isfinite(o->sens_scale[j]))
                return sv_error(SV_ERR_ARG, "%s: sens_scale[%d] = %g: expected a finite value > 0", nm, j,
                                o->sens_scale[j]);
    if (o->sens_errcon != SV_ODE_SENS_ERR_FULL && o->sens_errcon != SV_ODE_SENS_ERR_STATE)
        return sv_error(SV_ERR_ARG, "%s: sens_errcon = %d: expected full (0) or state (1)", nm, (int)o->sens_errcon);
    return SV_OK;
}

/* Event functions the solve can watch (options.events) and the ensemble's
 * arrays for what they record. */
static sv_status check_events(const sv_ode_problem *P, const sv_ode_options *o, const sv_ode_ensemble *E,
                              const char *nm)
{
    const sv_ode_events *ev = o->events;
    if (!ev) return SV_OK;
    if (ev->m < 1) return sv_error(SV_ERR_ARG, "%s: events.m = %d: expected >= 1 event function", nm, ev->m);
    if (!ev->g) return sv_error(SV_ERR_ARG, "%s: events.g is NULL: the event functions are required", nm);
    if (!(ev->tol >= 0) || !isfinite(ev->tol))
        return sv_error(SV_ERR_ARG, "%s: events.tol = %g: expected a finite value >= 0 (0 = to rounding)", nm, ev->tol);
    int handles = 0;
    for (int j = 0; j < ev->m; j++) {
        if (ev->direction && (ev->direction[j] < SV_ODE_EVENT_EITHER || ev->direction[j] > SV_ODE_EVENT_FALLING))
            return sv_error(SV_ERR_ARG, "%s: events.direction[%d] = %d: expected either (0), rising (1) or falling (2)",
                            nm, j, (int)ev->direction[j]);
        if (ev->action && (ev->action[j] < SV_ODE_EVENT_RECORD || ev->action[j] > SV_ODE_EVENT_HANDLE))
            return sv_error(SV_ERR_ARG, "%s: events.action[%d] = %d: expected record (0), stop (1) or handle (2)", nm,
                            j, (int)ev->action[j]);
        handles |= ev->action && ev->action[j] == SV_ODE_EVENT_HANDLE;
    }
    if (handles && !ev->handler)
        return sv_error(SV_ERR_ARG, "%s: events.handler is NULL but an event's action is handle", nm);
    if (E->sens_out)
        return sv_error(SV_ERR_UNSUPPORTED, "%s: events with forward sensitivities are not supported (an event's time "
                        "has a sensitivity of its own): solve without sens_out or without events", nm);
    if (E->ntraj > 0 && !E->nevents)
        return sv_error(SV_ERR_ARG, "%s: events are set but nevents is NULL (it receives each trajectory's count)", nm);
    if (E->event_capacity < 0)
        return sv_error(SV_ERR_ARG, "%s: event_capacity = %d: expected >= 0", nm, E->event_capacity);
    if (E->ntraj > 0 && E->event_capacity > 0 && (!E->event_t || !E->event_which))
        return sv_error(SV_ERR_ARG, "%s: event_capacity = %d but event_%s is NULL", nm, E->event_capacity,
                        !E->event_t ? "t" : "which");
    size_t len;
    if (sv_size_mul((size_t)E->ntraj, (size_t)E->event_capacity, &len) || sv_size_mul(len, (size_t)P->n, &len) ||
        sv_size_mul(len, sizeof(double), &len))
        return sv_error(SV_ERR_ARG, "%s: ntraj = %d x event_capacity = %d x n = %d event states: more than memory "
                        "can address", nm, E->ntraj, E->event_capacity, P->n);
    return SV_OK;
}

sv_status ode_request_check(const sv_ode_problem *P, const sv_ode_options *opt, const sv_ode_ensemble *E,
                            sv_ode_options *resolved)
{
    if (!P || !opt || !E)
        return sv_error(SV_ERR_ARG, "sv_ode_solve: %s is NULL", !P ? "prob" : !opt ? "opt" : "ens");
    const char *nm = P->d.name ? P->d.name : "problem";
    *resolved = resolve_options(opt);
    sv_status st = check_options(P, resolved, nm);
    if (st == SV_OK) st = check_ensemble(P, E, nm);
    if (st == SV_OK && E->ntraj > 0) st = check_atol_scale(P, resolved, E, nm);
    if (st == SV_OK) st = check_mass(P, resolved, E, nm);
    if (st == SV_OK) st = check_sensitivities(P, resolved, E, nm);
    if (st == SV_OK) st = check_events(P, resolved, E, nm);
    return st;
}
