/* ode_wp: one point of a work-precision diagram per line, for Solvent's
 * Rodas5P and Tsit5 and for SUNDIALS CVODE (BDF, dense direct solver with
 * the problem's analytic Jacobian), on one of Solvent's built-in test-set
 * problems, one trajectory, one thread.
 *
 *   ode_wp PROBLEM rodas5p|tsit5|cvode RTOL ATOL [MAX_STEPS]
 *   ode_wp PROBLEM describe
 *
 * Prints "seconds accepted rejected status y1 .. yn" (y at the problem's
 * end time); the error against the reference is computed by
 * ode_workprecision.py, which owns the reference values. `describe` prints
 * t0, t1, y0 and the parameters (for scipy's runs of the same problem).
 * Time: the mean over as many runs as fill 0.1 s, best of five such
 * batches, so that a sub-millisecond solve is timed above the clock's
 * resolution and a busy machine's interruptions are dropped.
 *
 * The CVODE plumbing mirrors bench/ode/bench_ode.c's (it reads the
 * problem's callbacks through src/ode/ode_internal.h, as the benchmark
 * does). Built by scripts/validation/run against build/. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "ode/ode_internal.h"
#include "solvent/ode.h"

typedef struct run {
    const sv_ode_builtin *b;
    int n;
    const char *method;
    double rtol, atol;
    long max_steps;
    double *y;       /* n: the end state */
    long acc, rej;
    int ok;
} run;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* ---- Solvent ---- */
static void solvent_once(sv_ctx *ctx, run *r)
{
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.method = strcmp(r->method, "tsit5") ? SV_ODE_RODAS5P : SV_ODE_TSIT5;
    o.rtol = r->rtol;
    o.atol = r->atol;
    o.max_steps = r->max_steps;
    o.tstops = r->b->tstops;
    o.ntstops = r->b->ntstops;
    sv_ode_traj_status st = SV_ODE_SUCCESS;
    sv_ode_stats stats = {0};
    sv_ode_ensemble e = {.ntraj = 1, .t0 = r->b->t0, .nsave = 1, .tsave = &r->b->t1, .y0 = r->b->y0, .y0_shared = 1,
                         .params = r->b->params, .params_shared = 1, .out = r->y, .status = &st, .stats = &stats};
    r->ok = sv_ode_solve(ctx, r->b->prob, &o, &e) == SV_OK && st == SV_ODE_SUCCESS;
    r->acc = stats.accepted;
    r->rej = stats.rejected;
}

/* ---- CVODE ---- */
typedef struct cv_user {
    const sv_ode_problem *P;
    const double *p;
    double *vals;
} cv_user;

static int cv_f(sunrealtype t, N_Vector y, N_Vector yd, void *u)
{
    cv_user *U = u;
    return U->P->d.f(t, N_VGetArrayPointer(y), U->p, N_VGetArrayPointer(yd), U->P->d.user) ? -1 : 0;
}

static int cv_jac(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *u, N_Vector t1, N_Vector t2, N_Vector t3)
{
    (void)fy, (void)t1, (void)t2, (void)t3;
    cv_user *U = u;
    const sv_ode_problem *P = U->P;
    if (P->d.jac(t, N_VGetArrayPointer(y), U->p, U->vals, NULL, P->d.user)) return -1;
    SUNMatZero(J);
    for (int i = 0; i < P->n; i++)
        for (int e = P->rowptr[i]; e < P->rowptr[i + 1]; e++) SM_ELEMENT_D(J, i, P->colind[e]) = U->vals[e];
    return 0;
}

static void cv_quiet(int code, const char *module, const char *function, char *msg, void *u)
{
    (void)code, (void)module, (void)function, (void)msg, (void)u; /* a failure is reported as status 1 */
}

static void cvode_once(run *r)
{
    const sv_ode_builtin *b = r->b;
    SUNContext sc;
    SUNContext_Create(NULL, &sc);
    N_Vector y = N_VNew_Serial(r->n, sc);
    memcpy(N_VGetArrayPointer(y), b->y0, sizeof(double) * r->n);
    cv_user U = {b->prob, b->params, malloc(sizeof(double) * (b->prob->nnz ? b->prob->nnz : 1))};
    void *mem = CVodeCreate(CV_BDF, sc);
    CVodeInit(mem, cv_f, b->t0, y);
    CVodeSStolerances(mem, r->rtol, r->atol);
    CVodeSetUserData(mem, &U);
    CVodeSetMaxNumSteps(mem, r->max_steps);
    CVodeSetErrHandlerFn(mem, cv_quiet, NULL);
    SUNMatrix A = SUNDenseMatrix(r->n, r->n, sc);
    SUNLinearSolver LS = SUNLinSol_Dense(y, A, sc);
    CVodeSetLinearSolver(mem, LS, A);
    CVodeSetJacFn(mem, cv_jac);
    double t = b->t0;
    int ok = 1;
    for (int s = 0; ok && s <= b->ntstops; s++) { /* restart at every discontinuity, as bench_ode does */
        double stop = s < b->ntstops ? b->tstops[s] : b->t1;
        if (stop <= t) continue;
        CVodeSetStopTime(mem, stop);
        ok = CVode(mem, stop, y, &t, CV_NORMAL) >= 0;
        if (ok && s < b->ntstops) CVodeReInit(mem, t, y);
    }
    long ns = 0, nf = 0;
    CVodeGetNumSteps(mem, &ns);
    CVodeGetNumErrTestFails(mem, &nf);
    r->acc = ns;
    r->rej = nf;
    r->ok = ok;
    memcpy(r->y, N_VGetArrayPointer(y), sizeof(double) * r->n);
    CVodeFree(&mem);
    SUNLinSolFree(LS);
    SUNMatDestroy(A);
    N_VDestroy(y);
    free(U.vals);
    SUNContext_Free(&sc);
}

static void once(sv_ctx *ctx, run *r)
{
    if (!strcmp(r->method, "cvode")) cvode_once(r);
    else solvent_once(ctx, r);
}

static void describe(const sv_ode_builtin *b, int n)
{
    int np = sv_ode_problem_nparams(b->prob);
    printf("t0 %.17g\nt1 %.17g\ny0", b->t0, b->t1);
    for (int i = 0; i < n; i++) printf(" %.17g", b->y0[i]);
    printf("\nparams");
    for (int k = 0; k < np; k++) printf(" %.17g", b->params[k]);
    printf("\n");
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[2], "describe") && argc < 5)) {
        fprintf(stderr, "usage: ode_wp PROBLEM rodas5p|tsit5|cvode RTOL ATOL [MAX_STEPS] | ode_wp PROBLEM describe\n");
        return 2;
    }
    sv_ctx *ctx;
    sv_ode_builtin *b;
    if (sv_ctx_create(&ctx) != SV_OK || sv_ctx_set_threads(ctx, 1) != SV_OK ||
        sv_ode_builtin_create(ctx, argv[1], 0, SV_ODE_JAC_ANALYTIC, &b) != SV_OK) {
        fprintf(stderr, "ode_wp: %s\n", sv_last_error());
        return 1;
    }
    int n = sv_ode_problem_n(b->prob);
    if (!strcmp(argv[2], "describe")) {
        describe(b, n);
        return 0;
    }
    run r = {.b = b, .n = n, .method = argv[2], .rtol = atof(argv[3]), .atol = atof(argv[4]),
             .max_steps = argc > 5 ? atol(argv[5]) : 1000000, .y = malloc(sizeof(double) * n)};
    once(ctx, &r); /* warm-up, and the result */
    double best = INFINITY;
    for (int batch = 0; r.ok && batch < 5; batch++) {
        int reps = 0;
        double t0 = now(), t;
        do {
            once(ctx, &r);
            reps++;
        } while ((t = now() - t0) < 0.1);
        best = fmin(best, t / reps);
    }
    printf("%.6e %ld %ld %d", r.ok ? best : NAN, r.acc, r.rej, r.ok ? 0 : 1);
    for (int i = 0; i < n; i++) printf(" %.17g", r.y[i]);
    printf("\n");
    free(r.y);
    sv_ode_builtin_destroy(b);
    sv_ctx_destroy(ctx);
    return 0;
}
