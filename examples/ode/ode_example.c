/* A stiff ODE ensemble with Solvent, written the way a user would: one
 * exothermic reaction A → B in a cooled vessel (three states: a, b and the
 * temperature T), Arrhenius rate k·exp(−E/T), and 1000 trajectories with
 * different activation energies E.
 *
 *   a' = −r,   b' = r,   T' = Q·r − c·(T − T_env),   r = k·exp(−E/T)·a
 *
 * The right-hand side is written ONCE with <tgmath.h>: `exp` there is
 * type-generic, so the same body compiled for double gives f and compiled
 * for double complex gives the complex f that Solvent differentiates by
 * complex step (exact Jacobian, no hand-written derivatives).
 *
 * Build (after `make install`):
 *   cc -std=c17 ode_example.c $(pkg-config --cflags --libs solvent) -o ode_example
 * or with CMake: see CMakeLists.txt beside this file. */
#include <complex.h>
#include <stdio.h>
#include <stdlib.h>
#include <tgmath.h>

#include <solvent/solvent.h>

enum { A, B, TEMP, NSTATE };
enum { P_E, NPARAM };
static const double k = 1e8, Q = 50.0, c = 2.0, T_env = 1.0;

/* One body for both types; T is the scalar type. */
#define REACTOR_RHS(NAME, T)                                                              \
    static int NAME(T t, const T *y, const double *p, T *dy, void *user)                  \
    {                                                                                     \
        (void)t, (void)user;                                                              \
        T r = k * exp(-p[P_E] / y[TEMP]) * y[A];                                          \
        dy[A] = -r;                                                                       \
        dy[B] = r;                                                                        \
        dy[TEMP] = Q * r - c * (y[TEMP] - T_env);                                         \
        return 0;                                                                         \
    }
REACTOR_RHS(reactor_f, double)
REACTOR_RHS(reactor_f_complex, double complex)

int main(void)
{
    /* Sparsity of ∂f/∂y (CSR): every row depends on a and T, none on b. */
    static const int rowptr[NSTATE + 1] = {0, 2, 4, 6};
    static const int colind[6] = {A, TEMP, A, TEMP, A, TEMP};
    sv_ode_problem_desc d = {
        .name = "reactor",
        .n = NSTATE,
        .nparams = NPARAM,
        .f = reactor_f,
        .f_complex = reactor_f_complex,
        .jac_source = SV_ODE_JAC_COMPLEX_STEP,
        .rowptr = rowptr,
        .colind = colind,
    };
    sv_ode_problem *prob;
    if (sv_ode_problem_create(NULL, &d, &prob) != SV_OK) {
        fprintf(stderr, "problem: %s\n", sv_last_error());
        return 1;
    }

    enum { NTRAJ = 1000, NSAVE = 4 };
    double y0[NSTATE] = {1.0, 0.0, 1.0};    /* shared initial state */
    double *E = malloc(sizeof(double) * NTRAJ);
    for (int i = 0; i < NTRAJ; i++) E[i] = 16.0 + 8.0 * i / (NTRAJ - 1); /* E in [16, 24] */
    double tsave[NSAVE] = {0.1, 1.0, 5.0, 20.0};
    double *out = malloc(sizeof(double) * NTRAJ * NSAVE * NSTATE);
    sv_ode_traj_status *status = malloc(sizeof *status * NTRAJ);
    sv_ode_stats *stats = malloc(sizeof *stats * NTRAJ);

    sv_ode_options opt;
    sv_ode_options_default(&opt);  /* Rodas5P, rtol 1e-6, atol 1e-8 */
    sv_ode_ensemble ens = {
        .ntraj = NTRAJ, .t0 = 0.0, .nsave = NSAVE, .tsave = tsave,
        .y0 = y0, .y0_shared = 1, .params = E,
        .out = out, .status = status, .stats = stats,
    };
    double t = sv_time_now();
    if (sv_ode_solve(NULL, prob, &opt, &ens) != SV_OK) {
        fprintf(stderr, "solve: %s\n", sv_last_error());
        return 1;
    }
    t = sv_time_now() - t;

    long steps = 0, ok = 0;
    for (int i = 0; i < NTRAJ; i++) {
        steps += stats[i].accepted;
        ok += status[i] == SV_ODE_SUCCESS;
    }
    printf("%ld of %d trajectories succeeded, %.1f steps each, %.3f s\n", ok, NTRAJ, (double)steps / NTRAJ, t);
    for (int i = 0; i < NTRAJ; i += NTRAJ / 4) {
        const double *y = out + ((size_t)i * NSAVE + 1) * NSTATE; /* save 1: t = 1 */
        printf("E = %.2f: at t = %g  a = %.6f  b = %.6f  T = %.6f\n", E[i], tsave[1], y[A], y[B], y[TEMP]);
    }
    /* check: a + b is conserved (= 1) by the equations */
    for (int i = 0; i < NTRAJ; i++) {
        const double *y = out + ((size_t)i * NSAVE + NSAVE - 1) * NSTATE;
        if (status[i] != SV_ODE_SUCCESS || fabs(y[A] + y[B] - 1.0) > 1e-6) {
            fprintf(stderr, "trajectory %d: %s, a + b = %.9f\n", i, sv_ode_traj_status_string(status[i]),
                    y[A] + y[B]);
            return 1;
        }
    }
    free(E), free(out), free(status), free(stats);
    sv_ode_problem_destroy(prob);
    return 0;
}
