/* bench_ode's shared parts: an ensemble case and the CVODE(S) plumbing
 * (bench_ode.c), used by the plain cases there and the sensitivity cases
 * in bench_ode_sens.c. */
#ifndef SV_BENCH_ODE_H
#define SV_BENCH_ODE_H

#include <cvodes/cvodes.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>

#include "solvent/ode.h"

typedef struct ens {
    const char *name;
    sv_ode_builtin *b;
    int ntraj, nsave, n, np;
    double t0, *tsave, *y0, *p;
    int y0_shared;
    double rtol, atol, first_step, floor;
    int comp; /* error measured on this component only (-1: all) */
    sv_ode_method method;
} ens;

/* A trajectory's problem and parameters for CVODE's callbacks. */
typedef struct cv_user {
    const sv_ode_problem *P;
    const double *p;
    double *vals, *dfdt;
    int *rp, *ci, *map; /* CSR with diagonal for KLU; map: pattern entry → CSR slot */
    int nnzd;
    void *extra; /* the sensitivity cases' own data */
} cv_user;

void cv_quiet(int code, const char *module, const char *function, char *msg, void *u);
int cv_f(sunrealtype t, N_Vector y, N_Vector yd, void *u);
/* BDF's linear solver (KLU on the pattern plus diagonal, or dense) with the
 * problem's analytic Jacobian. */
void cv_linear_solver(void *mem, const sv_ode_problem *P, cv_user *U, N_Vector y, int sparse, SUNContext sc,
                      SUNMatrix *A, SUNLinearSolver *LS);
double cpu_now(void);
/* Solvent on trajectories [0, ntraj) of E with problem P and options o;
 * out (ntraj·n) and S (ntraj·n·ns, when not NULL: sensitivities from s0)
 * receive the last save time's. The compiled LU kernels of the benchmark's
 * cache serve it unless o names another kernel_cache_dir. Returns the
 * failed trajectories. */
int ours_solve(const ens *E, const sv_ode_problem *P, const sv_ode_options *o, int ntraj, int nthreads,
               const double *s0, int ns, double *out, double *S, long *steps);

/* The sensitivity cases (bench_ode_sens.c). */
void bench_ode_sens(int nthreads);
/* The DAE cases: Akzo Nobel ensembles against IDA (bench_ode_dae.c). */
void bench_ode_dae(int nthreads);
/* The cost of events: the Robertson ensemble with and without them
 * (bench_ode_events.c). */
void bench_ode_events(int nthreads);
/* Declared invariants: E5 with and without, and the Robertson ensemble's
 * cost (bench_ode_invariants.c). */
void bench_ode_invariants(int nthreads);

#endif
