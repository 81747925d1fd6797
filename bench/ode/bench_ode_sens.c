/* bench_ode's sensitivity cases (issue 13): the cost of an ensemble solve
 * with nsens directions relative to the same solve without them, and
 * against SUNDIALS CVODES 6.4.1 with the same sensitivities at the same
 * accuracy.
 *
 * Cases: POLLU ensemble of 1000 with respect to 1 and 8 rate constants,
 * the Robertson ensemble of 10 000 (bench_ode.c's) with respect to k1 and
 * to all three rates, and EB-50 N128 with respect to k (the initial state
 * moving with it) and to k and seven initial values.
 *
 * Ours: Rodas5P with the built-in's sensitivity callbacks: the tangent
 * (one call per direction and stage: cheaper than a Jacobian per stage shared
 * by the directions, even for POLLU's eight; sens_source in the line), the
 * Jacobian derivatives from jac_dir; the sensitivities in the error
 * control (the default) and, for
 * comparison, out of it (SV_ODE_SENS_ERR_STATE: the plain solve's steps).
 * CVODES: BDF, staggered corrector, the same analytic sensitivity
 * right-hand side (the problem's tangent), the same linear solver as the
 * plain cases, sensitivities in its error test with tolerances atol/|p|
 * (CVodeSensEEtolerances with pbar = |p|, which is our default scaling).
 *
 * Accuracy: the sensitivities at the last save time against a reference
 * (ours at rtol 1e-11), normwise per trajectory and direction:
 * max_i |S − S_ref| / max_i |S_ref|, the largest over the ensemble. CVODES
 * is tightened in steps of √10 (on up to 256 trajectories) until it is as
 * accurate. `cost_vs_plain` = ours_s / plain_s; CVODES's timed runs cover
 * at most 2000 trajectories (anchor_measured_s), anchor_s scales them to
 * the ensemble, so `ratio` compares time per trajectory. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cvodes/cvodes.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunlinsol/sunlinsol_klu.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunmatrix/sunmatrix_sparse.h>

#include "bench_common.h"
#include "bench_ode.h"
#include "ode/ode_internal.h"

typedef struct scase {
    ens E;
    int sparse;
    int ns, nsp;       /* directions; the first nsp are parameters */
    int idx[8];        /* parameter or initial-value index of each direction */
    double *s0;        /* ntraj·n·ns initial sensitivities */
} scase;

/* ---- ours ------------------------------------------------------------------ */
static int ours_sens(const scase *C, const sv_ode_problem *P, int ntraj, double rtol, double atol,
                     sv_ode_sens_errcon ec, int nthreads, double *S, long *steps)
{
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = rtol, o.atol = atol, o.first_step = C->E.first_step, o.sens_errcon = ec;
    return ours_solve(&C->E, P, &o, ntraj, nthreads, C->s0, C->ns, NULL, S, steps);
}

/* ---- CVODES ------------------------------------------------------------------ */
/* fS = the problem's tangent along (yS_is, e_k): the same analytic
 * sensitivity right-hand side as ours. */
static int cv_fs(int ns, sunrealtype t, N_Vector y, N_Vector ydot, int is, N_Vector ys, N_Vector ysdot, void *u,
                 N_Vector t1, N_Vector t2)
{
    (void)ns, (void)ydot, (void)t1, (void)t2;
    cv_user *U = u;
    const scase *C = U->extra;
    const sv_ode_problem *P = U->P;
    double vp[64] = {0};
    if (is < C->nsp) vp[C->idx[is]] = 1;
    return P->d.tangent(t, N_VGetArrayPointer(y), U->p, N_VGetArrayPointer(ys), is < C->nsp ? vp : NULL,
                        N_VGetArrayPointer(ysdot), P->d.user)
               ? -1
               : 0;
}

/* Trajectories [0, ntraj) with CVODES on nthreads; S: ntraj·n·ns at the end. */
static int cvodes_sens(const scase *C, int ntraj, double rtol, double atol, int nthreads, double *S, long *steps)
{
    const ens *E = &C->E;
    const int n = E->n, ns = C->ns;
    int failures = 0;
    long st_total = 0;
#pragma omp parallel num_threads(nthreads) reduction(+ : failures, st_total)
    {
        SUNContext sc;
        SUNContext_Create(NULL, &sc);
        N_Vector y = N_VNew_Serial(n, sc);
        N_Vector *yS = N_VCloneVectorArray(ns, y);
        cv_user U = {.P = E->b->prob, .extra = (void *)C};
        U.vals = malloc(sizeof(double) * (E->b->prob->nnz + 1));
        U.dfdt = malloc(sizeof(double) * n);
        void *mem = CVodeCreate(CV_BDF, sc);
        SUNMatrix A = NULL;
        SUNLinearSolver LS = NULL;
        double pbar[8];
        int plist[8];
        int init = 0;
#pragma omp for schedule(dynamic, 4)
        for (int t = 0; t < ntraj; t++) {
            memcpy(N_VGetArrayPointer(y), E->y0 + (E->y0_shared ? 0 : (size_t)t * n), sizeof(double) * n);
            for (int j = 0; j < ns; j++)
                for (int i = 0; i < n; i++) N_VGetArrayPointer(yS[j])[i] = C->s0[((size_t)t * n + i) * ns + j];
            U.p = E->p + (size_t)t * E->np;
            for (int j = 0; j < ns; j++) {
                plist[j] = j < C->nsp ? C->idx[j] : 0;
                pbar[j] = j < C->nsp && U.p[C->idx[j]] != 0 ? fabs(U.p[C->idx[j]]) : 1;
            }
            if (!init) {
                CVodeInit(mem, cv_f, E->t0, y);
                CVodeSStolerances(mem, rtol, atol);
                CVodeSetUserData(mem, &U);
                CVodeSetMaxNumSteps(mem, 1000000);
                CVodeSetErrHandlerFn(mem, cv_quiet, NULL);
                CVodeSetStabLimDet(mem, SUNTRUE);
                cv_linear_solver(mem, E->b->prob, &U, y, C->sparse, sc, &A, &LS);
                CVodeSensInit1(mem, ns, CV_STAGGERED, cv_fs, yS);
                CVodeSetSensErrCon(mem, SUNTRUE);
                init = 1;
            } else {
                CVodeReInit(mem, E->t0, y);
                CVodeSensReInit(mem, CV_STAGGERED, yS);
            }
            CVodeSetSensParams(mem, (double *)U.p, pbar, plist);
            CVodeSensEEtolerances(mem);
            if (E->first_step > 0) CVodeSetInitStep(mem, E->first_step);
            CVodeSetStopTime(mem, E->tsave[E->nsave - 1]);
            double tt = E->t0;
            int ok = 1;
            for (int s = 0; s < E->nsave && ok; s++)
                if (E->tsave[s] > E->t0) ok = CVode(mem, E->tsave[s], y, &tt, CV_NORMAL) >= 0;
            if (ok) CVodeGetSens(mem, &tt, yS);
            long nst = 0;
            CVodeGetNumSteps(mem, &nst);
            st_total += nst;
            if (!ok) failures++;
            for (int j = 0; j < ns; j++)
                for (int i = 0; i < n; i++)
                    S[((size_t)t * n + i) * ns + j] = ok ? N_VGetArrayPointer(yS[j])[i] : NAN;
        }
        CVodeFree(&mem);
        if (LS) SUNLinSolFree(LS);
        if (A) SUNMatDestroy(A);
        N_VDestroyVectorArray(yS, ns);
        N_VDestroy(y);
        free(U.vals), free(U.dfdt), free(U.rp), free(U.ci), free(U.map);
        SUNContext_Free(&sc);
    }
    *steps = st_total;
    return failures;
}

/* max over trajectories and directions of max_i |S − ref| / max_i |ref|. */
static double sens_err(const scase *C, int ntraj, const double *S, const double *ref)
{
    const int n = C->E.n, ns = C->ns;
    double m = 0;
    for (int t = 0; t < ntraj; t++)
        for (int j = 0; j < ns; j++) {
            double d = 0, r = 0;
            for (int i = 0; i < n; i++) {
                size_t q = ((size_t)t * n + i) * ns + j;
                d = fmax(d, isnan(S[q]) ? INFINITY : fabs(S[q] - ref[q]));
                r = fmax(r, fabs(ref[q]));
            }
            m = fmax(m, d / r);
        }
    return m;
}

/* Median time of `reps` runs of ours (sensitivities or none). */
static double time_ours(const scase *C, const sv_ode_problem *P, sv_ode_sens_errcon ec, int nthreads, double *S,
                        long *steps, int *fails)
{
    double t[16];
    int reps = bench_reps(3);
    if (reps > 16) reps = 16;
    for (int r = 0; r < reps; r++) {
        double t0 = sv_time_now();
        *fails = ours_sens(C, P, C->E.ntraj, C->E.rtol, C->E.atol, ec, nthreads, S, steps);
        t[r] = sv_time_now() - t0;
    }
    return bench_median(t, reps);
}

static void run_sens_case(scase *C, int nthreads, const char *label)
{
    ens *E = &C->E;
    const int N = E->ntraj, n = E->n, ns = C->ns;
    int sp[8], sy[8];
    for (int j = 0; j < C->nsp; j++) sp[j] = C->idx[j];
    for (int j = C->nsp; j < ns; j++) sy[j - C->nsp] = C->idx[j];
    sv_ode_problem_desc d = E->b->prob->d;
    d.sens_source = SV_ODE_SENS_TANGENT;
    sv_ode_problem *P0 = NULL, *P = NULL;
    if (sv_ode_problem_create(NULL, &d, &P0) != SV_OK ||
        sv_ode_problem_with_sens(NULL, P0, C->nsp, sp, ns - C->nsp, sy, &P) != SV_OK) {
        fprintf(stderr, "bench_ode sens: %s\n", sv_last_error());
        sv_ode_problem_destroy(P0);
        return;
    }
    double *ref = malloc(sizeof(double) * N * n * ns), *S = malloc(sizeof(double) * N * n * ns);
    long steps, steps_plain, steps_state, csteps;
    int fails, fails_plain, fails_state;
    if (ours_sens(C, P, N, 1e-11, E->atol * 1e-11 / E->rtol, SV_ODE_SENS_ERR_FULL, nthreads, ref, &steps))
        fprintf(stderr, "bench_ode sens: %s: reference run had failures\n", label);
    double plain = time_ours(C, E->b->prob, SV_ODE_SENS_ERR_FULL, nthreads, NULL, &steps_plain, &fails_plain);
    double state = time_ours(C, P, SV_ODE_SENS_ERR_STATE, nthreads, S, &steps_state, &fails_state);
    double err_state = sens_err(C, N, S, ref);
    double ours = time_ours(C, P, SV_ODE_SENS_ERR_FULL, nthreads, S, &steps, &fails);
    double err = sens_err(C, N, S, ref);
    /* CVODES: tightened in steps of √10 until as accurate (on up to 256
     * trajectories); the most accurate failure-free rung otherwise */
    int sub = N < 256 ? N : 256, cf = 0;
    double f = 1, best_f = 1, best_err = INFINITY, cerr = INFINITY;
    for (int k = 0; k < 9; k++, f *= 0.31622776601683794) {
        cf = cvodes_sens(C, sub, E->rtol * f, E->atol * f, nthreads, S, &csteps);
        cerr = sens_err(C, sub, S, ref);
        if (!cf && cerr < best_err) best_err = cerr, best_f = f;
        if (!cf && cerr <= err) break;
    }
    int na = N < 2000 ? N : 2000, reps = bench_reps(3) < 16 ? bench_reps(3) : 16;
    double times[16];
    for (int r = 0; r < reps; r++) {
        double t0 = sv_time_now();
        cf = cvodes_sens(C, na, E->rtol * best_f, E->atol * best_f, nthreads, S, &csteps);
        times[r] = sv_time_now() - t0;
    }
    double anc = bench_median(times, reps);
    cerr = sens_err(C, na, S, ref);
    bench_json j;
    /* anchor_s scaled to the whole ensemble (it ran na of the N trajectories):
     * the head's ratio compares time per trajectory */
    bench_json_head(&j, "ode", label, ours,
                    C->sparse ? "CVODES 6.4.1 BDF+KLU staggered" : "CVODES 6.4.1 BDF+dense staggered",
                    anc * N / na);
    bench_json_num(&j, "anchor_measured_s", anc);
    bench_json_int(&j, "nsens", ns);
    bench_json_str(&j, "sens_source", "tangent");
    bench_json_num(&j, "plain_s", plain);
    bench_json_num(&j, "cost_vs_plain", ours / plain);
    bench_json_num(&j, "state_errcon_s", state);
    bench_json_num(&j, "cost_vs_plain_state_errcon", state / plain);
    bench_json_int(&j, "ntraj", N);
    bench_json_int(&j, "anchor_ntraj", na);
    bench_json_int(&j, "threads", nthreads);
    bench_json_num(&j, "sens_rel_err", err);
    bench_json_num(&j, "sens_rel_err_state_errcon", err_state);
    bench_json_num(&j, "anchor_sens_rel_err", cerr);
    bench_json_num(&j, "rtol", E->rtol);
    bench_json_num(&j, "anchor_rtol", E->rtol * best_f);
    bench_json_int(&j, "steps", steps);
    bench_json_int(&j, "plain_steps", steps_plain);
    bench_json_int(&j, "anchor_steps", csteps);
    bench_json_int(&j, "failures", fails + fails_plain + fails_state);
    bench_json_int(&j, "anchor_failures", cf);
    bench_json_end(&j);
    free(ref), free(S);
    sv_ode_problem_destroy(P);
    sv_ode_problem_destroy(P0);
}

/* Standard initial sensitivities (0 for parameters, e_i for y0_i) for
 * every trajectory; EB-50's k direction starts from dy0/dk (a cubic in k:
 * two central differences extrapolate to it). */
static void fill_s0(scase *C, int is_eb)
{
    const ens *E = &C->E;
    const int n = E->n, ns = C->ns;
    C->s0 = calloc((size_t)E->ntraj * n * ns, sizeof(double));
    for (int t = 0; t < E->ntraj; t++)
        for (int j = C->nsp; j < ns; j++) C->s0[((size_t)t * n + C->idx[j]) * ns + j] = 1;
    if (!is_eb || C->nsp == 0) return;
    double a[50], b[50], c[50], d[50];
    for (int t = 0; t < E->ntraj; t++) {
        double k = E->p[t], h = 1e-3 * k;
        sv_ode_eb50_initial(k + h, a), sv_ode_eb50_initial(k - h, b);
        sv_ode_eb50_initial(k + h / 2, c), sv_ode_eb50_initial(k - h / 2, d);
        for (int i = 0; i < n; i++) C->s0[((size_t)t * n + i) * ns] = (4 * (c[i] - d[i]) / h - (a[i] - b[i]) / (2 * h)) / 3;
    }
}

/* One case: its initial sensitivities, the run, their release. */
static void run_with_s0(scase *C, int nthreads, int is_eb, const char *label)
{
    fill_s0(C, is_eb);
    run_sens_case(C, nthreads, label);
    free(C->s0);
}

/* The cases with respect to the first counts[q] parameters. */
static void run_rate_cases(scase *C, int nthreads, const int counts[2], const char *const labels[2])
{
    for (int q = 0; q < 2; q++) {
        C->ns = C->nsp = counts[q];
        for (int j = 0; j < C->ns; j++) C->idx[j] = j;
        run_with_s0(C, nthreads, 0, labels[q]);
    }
}

void bench_ode_sens(int nthreads)
{
    unsigned long long rs = 12345;
#define URAND() ((rs = rs * 6364136223846793005ULL + 1442695040888963407ULL), ((rs >> 11) * 0x1.0p-53) * 2 - 1)
    {
        /* POLLU, 1000 trajectories, rates ±10 % (bench_ode.c's case) */
        scase C = {.E = {.name = "pollu", .ntraj = 1000, .nsave = 1, .n = 20, .np = 25, .rtol = 1e-6, .atol = 1e-6,
                         .y0_shared = 1, .comp = -1},
                   .sparse = 1};
        sv_ode_builtin_create(NULL, "pollu", 0, SV_ODE_JAC_ANALYTIC, &C.E.b);
        static double ts[1] = {60};
        C.E.tsave = ts;
        C.E.y0 = C.E.b->y0;
        C.E.p = malloc(sizeof(double) * 25 * C.E.ntraj);
        for (int t = 0; t < C.E.ntraj; t++)
            for (int k = 0; k < 25; k++) C.E.p[25 * t + k] = C.E.b->params[k] * (1 + 0.1 * URAND());
        run_rate_cases(&C, nthreads, (const int[2]){1, 8},
                       (const char *const[2]){"sens_pollu_ens1000_ns1", "sens_pollu_ens1000_ns8"});
        free(C.E.p);
        sv_ode_builtin_destroy(C.E.b);
    }
    {
        /* Robertson, 10 000 trajectories (bench_ode.c's case) */
        scase C = {.E = {.name = "rober", .ntraj = 10000, .nsave = 5, .n = 3, .np = 3, .rtol = 1e-6, .atol = 1e-8,
                         .first_step = 1e-4, .y0_shared = 1, .comp = -1}};
        sv_ode_builtin_create(NULL, "rober", 0, SV_ODE_JAC_ANALYTIC, &C.E.b);
        static double ts[5] = {0, 1e-6, 1e-2, 1e2, 1e5}, y0[3] = {0.9 * 0.99, 0.1, 0.9 * 0.01};
        C.E.tsave = ts;
        C.E.y0 = y0;
        C.E.p = malloc(sizeof(double) * 3 * C.E.ntraj);
        const double base[3] = {0.04, 1e4, 3e7};
        for (int t = 0; t < C.E.ntraj; t++)
            for (int k = 0; k < 3; k++) C.E.p[3 * t + k] = base[k] * (1 + 0.1 * URAND());
        run_rate_cases(&C, nthreads, (const int[2]){1, 3},
                       (const char *const[2]){"sens_rober_ens10000_ns1", "sens_rober_ens10000_ns3"});
        free(C.E.p);
        sv_ode_builtin_destroy(C.E.b);
    }
    {
        /* EB-50 N128: k, then k and seven initial values */
        scase C = {.E = {.name = "eb50", .ntraj = 128, .nsave = 1, .n = 50, .np = 1, .rtol = 1e-4, .atol = 1e-4,
                         .first_step = 1e-2, .t0 = 0.1, .comp = -1},
                   .sparse = 1};
        sv_ode_builtin_create(NULL, "eb50", 0.01, SV_ODE_JAC_ANALYTIC, &C.E.b);
        static double ts[1] = {14000};
        C.E.tsave = ts;
        C.E.p = malloc(sizeof(double) * C.E.ntraj);
        C.E.y0 = malloc(sizeof(double) * 50 * C.E.ntraj);
        for (int t = 0; t < C.E.ntraj; t++) {
            C.E.p[t] = 1e-4 * pow(0.5 / 1e-4, (double)t / (C.E.ntraj - 1));
            sv_ode_eb50_initial(C.E.p[t], C.E.y0 + 50 * t);
        }
        /* initial values on the adiabatic mode's slow manifold (η, δc, δb, T0, N0,
         * N2, N3): a unit v_b(0) or T_1(0) would start the stiff
         * photon-baryon drag transient, which only the full error control
         * resolves (docs/ode.md) */
        const int counts[2] = {1, 8}, y0idx[7] = {0, 1, 2, 4, 34, 36, 37};
        for (int q = 0; q < 2; q++) {
            C.ns = counts[q];
            C.nsp = 1;
            C.idx[0] = 0;
            for (int j = 1; j < C.ns; j++) C.idx[j] = y0idx[j - 1];
            run_with_s0(&C, nthreads, 1, q ? "sens_eb50_n128_ns8" : "sens_eb50_n128_ns1");
        }
        free(C.E.p), free(C.E.y0);
        sv_ode_builtin_destroy(C.E.b);
    }
#undef URAND
}
