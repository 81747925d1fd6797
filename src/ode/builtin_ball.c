/* Built-in problem with events: "ball", a ball dropped from 10 m that
 * falls freely (height' = velocity, velocity' = −g, g = 9.81 m/s²) and
 * bounces where its height falls through 0: one event function (the
 * height, direction falling) whose handler reverses the velocity and keeps
 * the fraction e of it (the restitution coefficient, the parameter,
 * 0.8). t in [0, 10]: seven bounces, the first at sqrt(2·10/g). Steps are
 * bounded (max_step 0.01 s, well below the shortest flight in the
 * interval), since a crossing and its return inside one step show no sign
 * change. Its impact times have a closed form (docs/how-to/ode-events.md). */
#include <string.h>

#include "builtin_internal.h"

enum { BALL_H, BALL_V, BALL_N };
static const double BALL_G = 9.81;

static int ball_f(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)t, (void)p, (void)u;
    dy[BALL_H] = y[BALL_V];
    dy[BALL_V] = -BALL_G;
    return 0;
}

/* dense, row-major: ∂height'/∂velocity = 1 */
static int ball_jac(double t, const double *y, const double *p, double *jv, double *dfdt, void *u)
{
    (void)t, (void)y, (void)p, (void)dfdt, (void)u;
    jv[0] = 0, jv[1] = 1, jv[2] = 0, jv[3] = 0;
    return 0;
}

static int ball_height(double t, const double *y, const double *p, double *g, void *u)
{
    (void)t, (void)p, (void)u;
    g[0] = y[BALL_H];
    return 0;
}

static int ball_bounce(double t, double *y, double *p, int which, void *u)
{
    (void)t, (void)which, (void)u;
    y[BALL_V] = -p[0] * y[BALL_V];
    return SV_ODE_HANDLER_CONTINUE;
}

static const sv_ode_event_direction ball_dir[1] = {SV_ODE_EVENT_FALLING};
static const sv_ode_event_action ball_act[1] = {SV_ODE_EVENT_HANDLE};
static const sv_ode_events ball_events = {
    .m = 1, .g = ball_height, .direction = ball_dir, .action = ball_act, .handler = ball_bounce};

sv_status ode_builtin_ball(sv_ode_builtin *b, const char *name, sv_ode_problem_desc *d, double arg)
{
    (void)arg;
    if (strcmp(name, "ball")) return SV_ERR_UNSUPPORTED;
    d->n = BALL_N;
    d->nparams = 1;
    d->f = ball_f;
    d->jac = ball_jac;
    b->events = &ball_events;
    b->max_step = 0.01;
    const double y0[BALL_N] = {10.0, 0.0}, e = 0.8;
    return ode_builtin_set(b, d, 0.0, 10.0, y0, &e, 1e-10, 1e-12);
}
