/* An index-1 DAE ensemble with Solvent: a small circuit written as
 * M·y' = f(t, y, p) with a singular mass matrix, the way circuit
 * simulators write nodal equations.
 *
 *   source Vs ──R1──●── u1 ──R2──●── u2
 *                   │            │
 *                   C            R3
 *                   │            │
 *                  ground       ground
 *
 *   u1' = ((Vs − u1)/R1 − (u1 − u2)/R2) / C     (the capacitor's node)
 *   0   = (u1 − u2)/R2 − u2/R3                   (the load node: no capacitor,
 *                                                 an algebraic equation)
 *
 * M = diag(1, 0): row 2 of M is zero, so u2 is an algebraic variable. The
 * ensemble runs 1000 capacitances C, each precharged to u1 = 1 V. Every
 * trajectory is given u2 = 0, which does not satisfy the algebraic
 * equation: options.init =
 * SV_ODE_INIT_COMPUTE asks the solver to make it consistent (Newton on u2),
 * and ens.y0_out reports the values it used. The program checks the
 * result against the closed form (u2 = u1·R3/(R2 + R3), u1 relaxing
 * exponentially to Vs·(R2 + R3)/(R1 + R2 + R3)) and exits non-zero if it
 * is off.
 *
 * Build (after `make install`):
 *   cc -std=c17 ode_dae.c $(pkg-config --cflags --libs solvent) -lm -o ode_dae */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <solvent/solvent.h>

enum { U1, U2, NSTATE };
enum { P_C, NPARAM };
static const double Vs = 5.0, R1 = 1e3, R2 = 2e3, R3 = 3e3;

static int circuit_f(double t, const double *y, const double *p, double *f, void *user)
{
    (void)t, (void)user;
    f[U1] = ((Vs - y[U1]) / R1 - (y[U1] - y[U2]) / R2) / p[P_C];
    f[U2] = (y[U1] - y[U2]) / R2 - y[U2] / R3;
    return 0;
}

/* ∂f/∂y, dense row-major (no pattern given). */
static int circuit_jac(double t, const double *y, const double *p, double *J, double *dfdt, void *user)
{
    (void)t, (void)y, (void)dfdt, (void)user;
    J[0] = (-1 / R1 - 1 / R2) / p[P_C], J[1] = 1 / R2 / p[P_C];
    J[2] = 1 / R2, J[3] = -1 / R2 - 1 / R3;
    return 0;
}

/* u1(t) from u1(0) = U0: the closed form of the reduced ODE
 * C·u1' = (Vs − u1)/R1 − u1/(R2 + R3). */
static const double U0 = 1.0;
static double u1_exact(double C, double t)
{
    double g = 1 / R1 + 1 / (R2 + R3), u_inf = Vs / R1 / g;
    return u_inf + (U0 - u_inf) * exp(-g * t / C);
}

int main(void)
{
    static const double mass[NSTATE * NSTATE] = {1, 0, 0, 0}; /* dense row-major */
    sv_ode_problem_desc d = {.name = "circuit", .n = NSTATE, .nparams = NPARAM, .f = circuit_f,
                             .jac = circuit_jac, .mass = mass};
    sv_ode_problem *prob;
    if (sv_ode_problem_create(NULL, &d, &prob) != SV_OK) {
        fprintf(stderr, "problem: %s\n", sv_last_error());
        return 1;
    }
    enum { NTRAJ = 1000, NSAVE = 5 };
    static double C[NTRAJ], out[NTRAJ * NSAVE * NSTATE], y0_used[NTRAJ * NSTATE];
    static sv_ode_traj_status status[NTRAJ];
    double tsave[NSAVE];
    for (int s = 0; s < NSAVE; s++) tsave[s] = 1e-3 * (s + 1);
    for (int t = 0; t < NTRAJ; t++) C[t] = 1e-7 * (1 + 9.0 * t / (NTRAJ - 1)); /* 0.1 … 1 µF */
    const double y0[NSTATE] = {U0, 0}; /* u2 = 0 is inconsistent: 0 ≠ (u1 − u2)/R2 − u2/R3 */

    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = 1e-8;
    o.atol = 1e-10;
    o.init = SV_ODE_INIT_COMPUTE;
    sv_ode_ensemble e = {.ntraj = NTRAJ, .t0 = 0, .nsave = NSAVE, .tsave = tsave, .y0 = y0, .y0_shared = 1,
                         .params = C, .out = out, .status = status, .y0_out = y0_used};
    sv_status st = sv_ode_solve(NULL, prob, &o, &e);
    if (st != SV_OK) {
        fprintf(stderr, "solve: %s\n", sv_last_error());
        sv_ode_problem_destroy(prob);
        return 1;
    }
    double worst = 0;
    for (int t = 0; t < NTRAJ; t++) {
        if (status[t] != SV_ODE_SUCCESS) {
            fprintf(stderr, "trajectory %d: %s\n", t, sv_ode_traj_status_string(status[t]));
            worst = INFINITY;
        }
        for (int s = 0; s < NSAVE; s++) {
            const double *y = out + ((size_t)t * NSAVE + s) * NSTATE;
            double u1 = u1_exact(C[t], tsave[s]), u2 = u1 * R3 / (R2 + R3);
            worst = fmax(worst, fmax(fabs(y[U1] - u1), fabs(y[U2] - u2)) / Vs);
        }
    }
    printf("initial u2: given 0, made consistent: %.12g (closed form %.12g)\n", y0_used[U2], U0 * R3 / (R2 + R3));
    if (fabs(y0_used[U2] - U0 * R3 / (R2 + R3)) > 1e-12) worst = INFINITY;
    printf("u1, u2 at t = %g s for C = %g F: %.8f %.8f\n", tsave[NSAVE - 1], C[0], out[(NSAVE - 1) * NSTATE + U1],
           out[(NSAVE - 1) * NSTATE + U2]);
    printf("largest error against the closed form over %d trajectories: %.2e (relative to Vs)\n", NTRAJ, worst);
    sv_ode_problem_destroy(prob);
    return worst <= 1e-6 ? 0 : 1;
}
