/* Events in an ODE ensemble with Solvent: bouncing balls.
 *
 * A ball dropped from height h0 falls freely, y = (height, velocity),
 *   height' = velocity,  velocity' = −g,
 * and bounces where its height falls through 0: an event function
 * g(t, y) = height with direction FALLING and action HANDLE, whose handler
 * reverses the velocity and keeps a fraction e of it (the restitution
 * coefficient, a parameter per ball). The ensemble drops 100 balls from
 * different heights with different e; each runs until its own end time
 * (a per-trajectory span: just past its 10th bounce).
 *
 * Solvent records each bounce (time, which function, state) per ball. The
 * program checks them against the closed form — the first impact at
 * t_1 = sqrt(2 h0 / g) with speed v_1 = g t_1, then t_{k+1} = t_k + 2 e^k v_1 / g —
 * and exits non-zero if any is off by more than 1e-9.
 *
 * Build (after `make install`):
 *   cc -std=c17 ode_events.c $(pkg-config --cflags --libs solvent) -lm -o ode_events */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <solvent/solvent.h>

enum { HEIGHT, VELOCITY, NSTATE };
enum { P_E, NPARAM };
enum { NBALL = 100, NBOUNCE = 10, CAPACITY = 12 };
static const double G = 9.81;

static int fall(double t, const double *y, const double *p, double *dydt, void *user)
{
    (void)t, (void)p, (void)user;
    dydt[HEIGHT] = y[VELOCITY];
    dydt[VELOCITY] = -G;
    return 0;
}

/* ∂f/∂y, dense row-major: only ∂height'/∂velocity = 1. */
static int fall_jac(double t, const double *y, const double *p, double *J, double *dfdt, void *user)
{
    (void)t, (void)y, (void)p, (void)dfdt, (void)user;
    J[0] = 0, J[1] = 1, J[2] = 0, J[3] = 0;
    return 0;
}

/* The event function: the height (one value per ball and time). */
static int floor_contact(double t, const double *y, const double *p, double *g, void *user)
{
    (void)t, (void)p, (void)user;
    g[0] = y[HEIGHT];
    return 0;
}

/* At a bounce: reverse the velocity, keeping the fraction e of it. */
static int bounce(double t, double *y, double *p, int which, void *user)
{
    (void)t, (void)which, (void)user;
    y[VELOCITY] = -p[P_E] * y[VELOCITY];
    return SV_ODE_HANDLER_CONTINUE;
}

/* The closed-form impact times of a ball dropped from h0 at rest. */
static void impacts(double h0, double e, double *t)
{
    double v = sqrt(2 * h0 * G);
    t[0] = v / G;
    for (int k = 1; k < NBOUNCE; k++) {
        v *= e;
        t[k] = t[k - 1] + 2 * v / G;
    }
}

int main(void)
{
    sv_ode_problem_desc d = {.name = "bouncing ball", .n = NSTATE, .nparams = NPARAM, .f = fall, .jac = fall_jac};
    sv_ode_problem *prob = NULL;
    if (sv_ode_problem_create(NULL, &d, &prob) != SV_OK) {
        fprintf(stderr, "problem: %s\n", sv_last_error());
        return 1;
    }
    /* one event function: the height falling through 0 calls bounce() */
    const sv_ode_event_direction dir[1] = {SV_ODE_EVENT_FALLING};
    const sv_ode_event_action act[1] = {SV_ODE_EVENT_HANDLE};
    sv_ode_events events = {.m = 1, .g = floor_contact, .direction = dir, .action = act, .handler = bounce};

    static double y0[NBALL * NSTATE], e[NBALL], tend[NBALL], ref[NBALL][NBOUNCE], out[NBALL * NSTATE];
    static double ev_t[NBALL * CAPACITY], ev_y[NBALL * CAPACITY * NSTATE];
    static int ev_which[NBALL * CAPACITY], nevents[NBALL];
    static sv_ode_traj_status status[NBALL];
    for (int b = 0; b < NBALL; b++) {
        y0[b * NSTATE + HEIGHT] = 1.0 + 0.1 * b;
        y0[b * NSTATE + VELOCITY] = 0.0;
        e[b] = 0.7 + 0.002 * b;
        impacts(y0[b * NSTATE + HEIGHT], e[b], ref[b]);
        tend[b] = ref[b][NBOUNCE - 1] + 1e-6; /* just past the 10th bounce */
    }

    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = 1e-10;
    o.atol = 1e-12;
    /* a flight shorter than one step would show no sign change at the
     * step's ends: bound the step by the shortest flight's scale */
    o.max_step = 0.005;
    o.events = &events;
    sv_ode_ensemble ens = {.ntraj = NBALL, .nsave = 1, .tsave_traj = tend, .y0 = y0, .params = e, .out = out,
                           .status = status, .event_capacity = CAPACITY, .event_t = ev_t,
                           .event_which = ev_which, .event_y = ev_y, .nevents = nevents};
    if (sv_ode_solve(NULL, prob, &o, &ens) != SV_OK) {
        fprintf(stderr, "solve: %s\n", sv_last_error());
        sv_ode_problem_destroy(prob);
        return 1;
    }

    double worst = 0;
    int bad = 0;
    for (int b = 0; b < NBALL; b++) {
        bad |= status[b] != SV_ODE_SUCCESS || nevents[b] != NBOUNCE;
        for (int k = 0; k < NBOUNCE && k < nevents[b]; k++)
            worst = fmax(worst, fabs(ev_t[b * CAPACITY + k] - ref[b][k]));
    }
    printf("ball 0 (h0 = %.1f m, e = %.2f): bounces at", y0[HEIGHT], e[0]);
    for (int k = 0; k < NBOUNCE; k++) printf(" %.6f", ev_t[k]);
    printf(" s\n%d balls, %d bounces each: largest impact time error %.2e s (closed form)\n", NBALL, NBOUNCE, worst);
    sv_ode_problem_destroy(prob);
    if (bad || !(worst <= 1e-9)) {
        fprintf(stderr, "ode_events: bounces off the closed form\n");
        return 1;
    }
    return 0;
}
