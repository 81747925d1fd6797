/* bench_ode: Solvent's ensembles against SUNDIALS CVODE 6.4.1 in one run.
 *
 * Cases (issue 6): Robertson ensemble of 10 000 (the perturbed-rate ensemble
 * of docs/ode.md), EB-50 N128 (128 log-spaced k in [1e-4, 0.5] Mpc⁻¹,
 * rtol = atol = 1e-4), POLLU ensemble of 1000 (rate constants ±10 %), the
 * 2D Brusselator 32 × 32 (one trajectory) and Tsit5 on a Lorenz ensemble of
 * 100 000 (CVODE Adams as the anchor there).
 * CVODE runs BDF with its dense linear solver (n ≤ 8) or KLU, analytic
 * Jacobians, one CVODE instance per thread re-initialised per trajectory,
 * trajectories spread over the same threads as ours.
 *
 * Equal accuracy: both are measured against a reference run (Solvent's
 * Rodas5P at rtol 1e-11 — validated against the Bari references in the
 * tests) at the end point, error = max over trajectories and components of
 * |y − ref| / (|ref| + floor). CVODE's tolerances are tightened in steps of
 * 10× from ours until its error is no larger than ours (chosen on a subset),
 * and both errors are reported. Times are medians of SV_BENCH_REPS (3).
 * CVODE's timed runs cover at most the first 2000 trajectories of an
 * ensemble (anchor_ntraj): `ratio` compares time per trajectory.
 * The program links CVODES (CVODE with sensitivities; without them it runs
 * CVODE's algorithm): the sensitivity cases are in bench_ode_sens.c, the
 * DAE cases (Akzo Nobel against IDA) in bench_ode_dae.c.
 *
 * modax's Robertson benchmark (issue 14; its cases "rober_modax_*"): the
 * anchors there are published GPU timings of another machine, quoted as
 * constants; see modax_case below. */
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cvodes/cvodes.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunlinsol/sunlinsol_klu.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunmatrix/sunmatrix_sparse.h>

#include "bench_common.h"
#include "ode/ode_internal.h"
#include "solvent/ode.h"

#include "bench_ode.h"

/* ---- CVODE side ------------------------------------------------------------ */
void cv_quiet(int code, const char *module, const char *function, char *msg, void *u)
{
    (void)code, (void)module, (void)function, (void)msg, (void)u; /* failures are counted instead */
}

int cv_f(sunrealtype t, N_Vector y, N_Vector yd, void *u)
{
    cv_user *U = u;
    return U->P->d.f(t, N_VGetArrayPointer(y), U->p, N_VGetArrayPointer(yd), U->P->d.user) ? -1 : 0;
}

/* The problem's analytic Jacobian at (t, y) into U->vals; non-zero on failure. */
static int cv_eval_jac(cv_user *U, sunrealtype t, N_Vector y)
{
    const sv_ode_problem *P = U->P;
    return P->d.jac(t, N_VGetArrayPointer(y), U->p, U->vals, P->d.nonautonomous ? U->dfdt : NULL, P->d.user);
}

static int cv_jac_dense(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *u, N_Vector t1, N_Vector t2,
                        N_Vector t3)
{
    (void)fy, (void)t1, (void)t2, (void)t3;
    cv_user *U = u;
    const sv_ode_problem *P = U->P;
    if (cv_eval_jac(U, t, y)) return -1;
    SUNMatZero(J);
    for (int i = 0; i < P->n; i++)
        for (int e = P->rowptr[i]; e < P->rowptr[i + 1]; e++) SM_ELEMENT_D(J, i, P->colind[e]) = U->vals[e];
    return 0;
}

static int cv_jac_sparse(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *u, N_Vector t1, N_Vector t2,
                         N_Vector t3)
{
    (void)fy, (void)t1, (void)t2, (void)t3;
    cv_user *U = u;
    const sv_ode_problem *P = U->P;
    if (cv_eval_jac(U, t, y)) return -1;
    sunindextype *rp = SUNSparseMatrix_IndexPointers(J), *ci = SUNSparseMatrix_IndexValues(J);
    double *v = SUNSparseMatrix_Data(J);
    for (int i = 0; i <= P->n; i++) rp[i] = U->rp[i];
    for (int q = 0; q < U->nnzd; q++) {
        ci[q] = U->ci[q];
        v[q] = 0;
    }
    for (int e = 0; e < P->nnz; e++) v[U->map[e]] = U->vals[e];
    return 0;
}

/* Pattern plus diagonal, CSR, for KLU. */
static void csr_with_diag(const sv_ode_problem *P, cv_user *U)
{
    int n = P->n;
    U->rp = malloc(sizeof(int) * (n + 1));
    U->ci = malloc(sizeof(int) * (P->nnz + n));
    U->map = malloc(sizeof(int) * (P->nnz ? P->nnz : 1));
    int q = 0;
    for (int i = 0; i < n; i++) {
        U->rp[i] = q;
        int diag = 0;
        for (int e = P->rowptr[i]; e < P->rowptr[i + 1]; e++) {
            int j = P->colind[e];
            if (!diag && j > i) {
                U->ci[q++] = i;
                diag = 1;
            }
            if (j == i) diag = 1;
            U->map[e] = q;
            U->ci[q++] = j;
        }
        if (!diag) U->ci[q++] = i;
    }
    U->rp[n] = q;
    U->nnzd = q;
}

/* BDF's linear solver: KLU on the pattern plus diagonal, or dense, with the
 * problem's analytic Jacobian. */
void cv_linear_solver(void *mem, const sv_ode_problem *P, cv_user *U, N_Vector y, int sparse, SUNContext sc,
                      SUNMatrix *A, SUNLinearSolver *LS)
{
    int n = P->n;
    if (sparse) {
        csr_with_diag(P, U);
        *A = SUNSparseMatrix(n, n, U->nnzd, CSR_MAT, sc);
        *LS = SUNLinSol_KLU(y, *A, sc);
        CVodeSetLinearSolver(mem, *LS, *A);
        CVodeSetJacFn(mem, cv_jac_sparse);
    } else {
        *A = SUNDenseMatrix(n, n, sc);
        *LS = SUNLinSol_Dense(y, *A, sc);
        CVodeSetLinearSolver(mem, *LS, *A);
        CVodeSetJacFn(mem, cv_jac_dense);
    }
}

/* Run trajectories [0, ntraj) with CVODE on nthreads; out: ntraj·n end states. */
static int cvode_run(const ens *E, int ntraj, double rtol, double atol, int sparse, int nthreads, double *out,
                     long *steps)
{
    int n = E->n, failures = 0;
    long st_total = 0;
#pragma omp parallel num_threads(nthreads) reduction(+ : failures, st_total)
    {
        SUNContext sc;
        SUNContext_Create(NULL, &sc);
        N_Vector y = N_VNew_Serial(n, sc);
        cv_user U = {.P = E->b->prob};
        U.vals = malloc(sizeof(double) * (E->b->prob->nnz + 1));
        U.dfdt = malloc(sizeof(double) * n);
        void *mem = CVodeCreate(E->method == SV_ODE_TSIT5 ? CV_ADAMS : CV_BDF, sc);
        SUNMatrix A = NULL;
        SUNLinearSolver LS = NULL;
        SUNNonlinearSolver NLS = NULL;
        int init = 0;
#pragma omp for schedule(dynamic, 4)
        for (int t = 0; t < ntraj; t++) {
            double *yv = N_VGetArrayPointer(y);
            memcpy(yv, E->y0 + (E->y0_shared ? 0 : (size_t)t * n), sizeof(double) * n);
            U.p = E->np ? E->p + (size_t)t * E->np : NULL;
            if (!init) {
                CVodeInit(mem, cv_f, E->t0, y);
                CVodeSStolerances(mem, rtol, atol);
                CVodeSetUserData(mem, &U);
                CVodeSetMaxNumSteps(mem, 1000000);
                CVodeSetErrHandlerFn(mem, cv_quiet, NULL);
                /* BDF orders 3-5 are not A-stable: let CVODE detect oscillatory
                 * stiffness (EB-50, Brusselator) and lower its order */
                if (E->method == SV_ODE_RODAS5P) CVodeSetStabLimDet(mem, SUNTRUE);
                if (E->method == SV_ODE_TSIT5) {
                    /* Adams for the non-stiff case: fixed-point iteration, no linear solver */
                    NLS = SUNNonlinSol_FixedPoint(y, 0, sc);
                    CVodeSetNonlinearSolver(mem, NLS);
                } else {
                    cv_linear_solver(mem, E->b->prob, &U, y, sparse, sc, &A, &LS);
                }
                init = 1;
            } else {
                CVodeReInit(mem, E->t0, y);
            }
            if (E->first_step > 0) CVodeSetInitStep(mem, E->first_step);
            /* SUNDIALS 6.4 keeps a stop time across re-initialisations: set one per trajectory */
            CVodeSetStopTime(mem, E->tsave[E->nsave - 1]);
            double tt = E->t0;
            int ok = 1;
            for (int s = 0; s < E->nsave && ok; s++) {
                if (E->tsave[s] <= E->t0) continue;
                /* Brusselator: stop at the forcing switch-on and restart */
                if (E->b->ntstops && tt < E->b->tstops[0] && E->tsave[s] > E->b->tstops[0]) {
                    CVodeSetStopTime(mem, E->b->tstops[0]);
                    ok = CVode(mem, E->b->tstops[0], y, &tt, CV_NORMAL) >= 0;
                    CVodeReInit(mem, tt, y);
                    CVodeSetStopTime(mem, E->tsave[E->nsave - 1]);
                }
                if (ok) ok = CVode(mem, E->tsave[s], y, &tt, CV_NORMAL) >= 0;
            }
            long ns = 0;
            CVodeGetNumSteps(mem, &ns);
            st_total += ns;
            if (!ok) failures++;
            memcpy(out + (size_t)t * n, yv, sizeof(double) * n);
        }
        CVodeFree(&mem);
        if (LS) SUNLinSolFree(LS);
        if (NLS) SUNNonlinSolFree(NLS);
        if (A) SUNMatDestroy(A);
        N_VDestroy(y);
        free(U.vals), free(U.dfdt), free(U.rp), free(U.ci), free(U.map);
        SUNContext_Free(&sc);
    }
    *steps = st_total;
    return failures;
}

/* ---- Solvent side ------------------------------------------------------------ */
/* Where our runs keep their compiled LU kernels (kernel_cache_dir): beside
 * the benchmark binary, so that the reference run compiles them and the
 * timed runs load them, as a user's second run would. Every run of
 * ours_solve uses them (the plain and the sensitivity cases alike). */
static char kernel_dir[4096];

int ours_solve(const ens *E, const sv_ode_problem *P, const sv_ode_options *opt, int ntraj, int nthreads,
               const double *s0, int ns, double *out, double *S, long *steps)
{
    sv_ode_options o = *opt;
    if (!o.kernel_cache_dir) o.kernel_cache_dir = kernel_dir[0] ? kernel_dir : NULL;
    sv_ctx *ctx;
    sv_ctx_create(&ctx);
    sv_ctx_set_threads(ctx, nthreads);
    size_t rows = (size_t)ntraj * E->nsave * E->n;
    double *all = malloc(sizeof(double) * rows), *sall = S ? malloc(sizeof(double) * rows * ns) : NULL;
    sv_ode_traj_status *st = malloc(sizeof *st * ntraj);
    sv_ode_stats *stats = malloc(sizeof *stats * ntraj);
    sv_ode_ensemble e = {.ntraj = ntraj, .t0 = E->t0, .nsave = E->nsave, .tsave = E->tsave, .y0 = E->y0,
                         .y0_shared = E->y0_shared, .params = E->np ? E->p : NULL, .out = all, .sens_out = sall,
                         .sens0 = s0, .status = st, .stats = stats};
    int fails = 0;
    if (sv_ode_solve(ctx, P, &o, &e) != SV_OK) {
        fprintf(stderr, "bench_ode: %s\n", sv_last_error());
        fails = ntraj;
    }
    long acc = 0;
    for (int t = 0; t < ntraj; t++) {
        fails += st[t] != SV_ODE_SUCCESS;
        acc += stats[t].accepted;
        size_t last = (size_t)t * E->nsave + E->nsave - 1;
        if (out) memcpy(out + (size_t)t * E->n, all + last * E->n, sizeof(double) * E->n);
        if (S) memcpy(S + (size_t)t * E->n * ns, sall + last * E->n * ns, sizeof(double) * E->n * ns);
    }
    *steps = acc;
    free(all), free(sall), free(st), free(stats);
    sv_ctx_destroy(ctx);
    return fails;
}

static int ours_run(const ens *E, int ntraj, double rtol, double atol, sv_ode_lu_precision lu, int nthreads,
                    double *out, long *steps)
{
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.method = E->method;
    o.rtol = rtol;
    o.atol = atol;
    o.lu = lu;
    o.first_step = E->first_step;
    o.tstops = E->b->tstops;
    o.ntstops = E->b->ntstops;
    return ours_solve(E, E->b->prob, &o, ntraj, nthreads, NULL, 0, out, NULL, steps);
}

double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static double err_vs(const ens *E, int ntraj, const double *y, const double *ref)
{
    double m = 0;
    for (size_t q = 0; q < (size_t)ntraj * E->n; q++) {
        if (E->comp >= 0 && (int)(q % E->n) != E->comp) continue;
        m = fmax(m, fabs(y[q] - ref[q]) / (fabs(ref[q]) + E->floor));
    }
    return m;
}

static void run_case(ens *E, int nthreads, int sparse, sv_ode_lu_precision lu, const char *label)
{
    int N = E->ntraj, n = E->n, reps = bench_reps(3);
    double *ref = malloc(sizeof(double) * N * n), *y = malloc(sizeof(double) * N * n);
    long steps, csteps;
    /* reference: Rodas5P at rtol 1e-11 */
    double rt = 1e-11, at = E->atol * 1e-11 / E->rtol;
    ens R = *E;
    R.method = SV_ODE_RODAS5P;
    R.first_step = 0;
    if (ours_run(&R, N, rt, at, SV_ODE_LU_DOUBLE, nthreads, ref, &steps))
        fprintf(stderr, "bench_ode: %s: reference run had failures\n", E->name);
    double times[16], cpus[16];
    int fails = 0;
    for (int r = 0; r < reps && r < 16; r++) {
        double t0 = sv_time_now(), c0 = cpu_now();
        fails = ours_run(E, N, E->rtol, E->atol, lu, nthreads, y, &steps);
        times[r] = sv_time_now() - t0;
        cpus[r] = cpu_now() - c0;
    }
    double ours = bench_median(times, reps < 16 ? reps : 16), ours_err = err_vs(E, N, y, ref);
    double ours_cpu = bench_median(cpus, reps < 16 ? reps : 16);
    /* CVODE: tighten in steps of √10 until at least as accurate as ours
     * (on up to 256 trajectories); if no rung gets there without failures,
     * keep the most accurate rung that had none. */
    int sub = N < 256 ? N : 256;
    double f = 1, cerr = INFINITY, best_f = 1, best_err = INFINITY;
    for (int k = 0; k < 9; k++, f *= 0.31622776601683794) {
        int cf = cvode_run(E, sub, E->rtol * f, E->atol * f, sparse, nthreads, y, &csteps);
        cerr = err_vs(E, sub, y, ref);
        if (!cf && cerr < best_err) best_err = cerr, best_f = f;
        if (cerr <= ours_err && !cf) break;
    }
    f = best_f;
    /* the anchor's timed runs: at most 2000 trajectories (CVODE needs minutes
     * for the large ensembles); the ratio compares time per trajectory */
    int na = N < 2000 ? N : 2000;
    int cfails = 0;
    for (int r = 0; r < reps && r < 16; r++) {
        double t0 = sv_time_now(), c0 = cpu_now();
        cfails = cvode_run(E, na, E->rtol * f, E->atol * f, sparse, nthreads, y, &csteps);
        times[r] = sv_time_now() - t0;
        cpus[r] = cpu_now() - c0;
    }
    double anc = bench_median(times, reps < 16 ? reps : 16), anc_cpu = bench_median(cpus, reps < 16 ? reps : 16);
    cerr = err_vs(E, na, y, ref);
    bench_json j;
    bench_json_begin(&j, "ode", label);
    bench_json_num(&j, "ours_s", ours);
    bench_json_str(&j, "anchor", E->method == SV_ODE_TSIT5 ? "CVODE 6.4.1 Adams" : sparse ? "CVODE 6.4.1 BDF+KLU" : "CVODE 6.4.1 BDF+dense");
    bench_json_num(&j, "anchor_s", anc);
    bench_json_num(&j, "ratio", (ours / N) / (anc / na));
    bench_json_num(&j, "ours_cpu_s", ours_cpu);
    bench_json_num(&j, "anchor_cpu_s", anc_cpu);
    bench_json_int(&j, "ntraj", N);
    bench_json_int(&j, "anchor_ntraj", na);
    bench_json_int(&j, "threads", nthreads);
    bench_json_num(&j, "ours_per_traj_s", ours / N);
    bench_json_num(&j, "anchor_per_traj_s", anc / na);
    bench_json_num(&j, "rel_err", ours_err);
    bench_json_num(&j, "anchor_rel_err", cerr);
    bench_json_num(&j, "rtol", E->rtol);
    bench_json_num(&j, "anchor_rtol", E->rtol * f);
    bench_json_int(&j, "steps", steps);
    bench_json_int(&j, "anchor_steps", csteps);
    bench_json_int(&j, "failures", fails);
    bench_json_int(&j, "anchor_failures", cfails);
    bench_json_str(&j, "lu", lu == SV_ODE_LU_SINGLE ? "single" : "double");
    bench_json_int(&j, "peak_rss", (long long)bench_peak_rss());
    bench_json_end(&j);
    free(ref), free(y);
}

/* ---- modax's Robertson benchmark ------------------------------------------
 * Robertson, rates (0.04, 1e4, 3e7), y0 = (0.891, 0.1, 0.009), t from 0 to
 * 1e5 saved at 1e-6, 1e-2, 1e2, 1e5, rtol 1e-6, atol 1e-8, first step 1e-4,
 * Rodas5P. modax publishes its timings on an NVIDIA RTX 4070 SUPER for its
 * own solver and for Julia's DiffEqGPU EnsembleGPUKernel (Rodas5P) and
 * diffrax (Kvaerno5) on the same GPU: those are quoted below as constants
 * (another machine's figures, 0 where none is published), never measured
 * here. Ours: median wall time of SV_BENCH_REPS (5) runs on `threads` cores,
 * ns per trajectory-step = wall time / attempted steps (accepted +
 * rejected) of all trajectories, and the end state's agreement with Rodas5P
 * at rtol 1e-11 (max over trajectories and components of
 * |y − ref| / (|ref| + 1e-8)). */
typedef struct published {
    double modax_fp32_s, modax_fp64_s, julia_kernel_s, diffrax_s;
} published;

static double load_average(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1) l = -1;
        fclose(f);
    }
    return l;
}

/* One ensemble through sv_ode_solve: end states (ntraj·3) and attempted
 * steps in total. */
static int modax_solve(const sv_ode_builtin *b, int ntraj, const double *y0, int y0_shared, const double *p,
                       int params_shared, double rtol, double atol, double first_step, sv_ode_lu_precision lu,
                       int nthreads, double *end, long *attempted, long *rejected)
{
    static const double ts[4] = {1e-6, 1e-2, 1e2, 1e5};
    sv_ctx *ctx;
    sv_ctx_create(&ctx);
    sv_ctx_set_threads(ctx, nthreads);
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = rtol;
    o.atol = atol;
    o.first_step = first_step;
    o.lu = lu;
    double *out = malloc(sizeof(double) * (size_t)ntraj * 4 * 3);
    sv_ode_traj_status *st = malloc(sizeof *st * (size_t)ntraj);
    sv_ode_stats *stats = malloc(sizeof *stats * (size_t)ntraj);
    sv_ode_ensemble e = {.ntraj = ntraj, .t0 = 0, .nsave = 4, .tsave = ts, .y0 = y0, .y0_shared = y0_shared,
                         .params = p, .params_shared = params_shared, .out = out, .status = st, .stats = stats};
    int fails = 0;
    if (sv_ode_solve(ctx, b->prob, &o, &e) != SV_OK) {
        fprintf(stderr, "bench_ode: %s\n", sv_last_error());
        fails = ntraj;
    }
    *attempted = *rejected = 0;
    for (int t = 0; t < ntraj; t++) {
        fails += st[t] != SV_ODE_SUCCESS;
        *attempted += stats[t].accepted + stats[t].rejected;
        *rejected += stats[t].rejected;
        memcpy(end + (size_t)t * 3, out + ((size_t)t * 4 + 3) * 3, sizeof(double) * 3);
    }
    free(out), free(st), free(stats);
    sv_ctx_destroy(ctx);
    return fails;
}

static void modax_case(const char *label, const sv_ode_builtin *b, int ntraj, const double *y0, int y0_shared,
                       const double *p, int params_shared, sv_ode_lu_precision lu, int nthreads,
                       const published *pub)
{
    int reps = bench_reps(5), nref = y0_shared && params_shared ? 1 : ntraj;
    double *ref = malloc(sizeof(double) * 3 * (size_t)nref), *y = malloc(sizeof(double) * 3 * (size_t)ntraj);
    long att = 0, rej = 0;
    if (modax_solve(b, nref, y0, y0_shared, p, params_shared, 1e-11, 1e-13, 0, SV_ODE_LU_DOUBLE, nthreads, ref, &att,
                    &rej))
        fprintf(stderr, "bench_ode: %s: reference run had failures\n", label);
    double times[16], cpus[16], load0 = load_average();
    int fails = 0;
    if (reps > 16) reps = 16;
    for (int r = 0; r < reps; r++) {
        double t0 = sv_time_now(), c0 = cpu_now();
        fails = modax_solve(b, ntraj, y0, y0_shared, p, params_shared, 1e-6, 1e-8, 1e-4, lu, nthreads, y, &att, &rej);
        times[r] = sv_time_now() - t0;
        cpus[r] = cpu_now() - c0;
    }
    double ours = bench_median(times, reps), ours_cpu = bench_median(cpus, reps), err = 0;
    for (size_t q = 0; q < (size_t)ntraj * 3; q++) {
        double rv = ref[nref == 1 ? q % 3 : q];
        err = fmax(err, fabs(y[q] - rv) / (fabs(rv) + 1e-8));
    }
    double gpu = lu == SV_ODE_LU_SINGLE ? pub->modax_fp32_s : pub->modax_fp64_s;
    bench_json j;
    bench_json_head(&j, "ode", label, ours,
                    lu == SV_ODE_LU_SINGLE ? "modax Rodas5P fp32, RTX 4070 SUPER (published; another machine)"
                                           : "modax Rodas5P fp64, RTX 4070 SUPER (published; another machine)",
                    gpu);
    bench_json_num(&j, "ours_cpu_s", ours_cpu);
    bench_json_int(&j, "ntraj", ntraj);
    bench_json_int(&j, "threads", nthreads);
    bench_json_str(&j, "lu", lu == SV_ODE_LU_SINGLE ? "single" : "double");
    bench_json_num(&j, "ns_per_traj_step", ours / (double)att * 1e9);
    bench_json_num(&j, "cpu_ns_per_traj_step", ours_cpu / (double)att * 1e9);
    bench_json_num(&j, "steps_per_traj", (double)att / ntraj);
    bench_json_num(&j, "rejected_per_traj", (double)rej / ntraj);
    bench_json_num(&j, "rel_err", err);
    bench_json_num(&j, "ref_rtol", 1e-11);
    bench_json_int(&j, "failures", fails);
    bench_json_num(&j, "published_modax_fp32_s", pub->modax_fp32_s);
    bench_json_num(&j, "published_modax_fp64_s", pub->modax_fp64_s);
    bench_json_num(&j, "published_julia_gpu_kernel_s", pub->julia_kernel_s);
    bench_json_num(&j, "published_diffrax_kvaerno5_s", pub->diffrax_s);
    bench_json_str(&j, "published_machine", "NVIDIA RTX 4070 SUPER (modax's figures)");
    bench_json_num(&j, "load_before", load0);
    bench_json_num(&j, "load_after", load_average());
    bench_json_int(&j, "peak_rss", (long long)bench_peak_rss());
    bench_json_end(&j);
    free(ref), free(y);
}

/* modax's divergent scenario at divergence d = 1 (its make_scenario, read
 * in its repository, reproduced with our own generator, so the same
 * distribution but not the same draws): rate constants k_i·10^U(−d, d)
 * independently; y0 = ((1 − ε)α, ε, (1 − ε)(1 − α)) with α = 0.99·U(0, 1)
 * and ε = 10^((1 − b)·log10(0.1) + b·log10(1e-8)), b = U(0, min(d/4, 1)). */
static void modax_divergent(int ntraj, double d, unsigned long long seed, double *y0, double *p)
{
    const double base[3] = {0.04, 1e4, 3e7};
#define U01() ((seed = seed * 6364136223846793005ULL + 1442695040888963407ULL), (seed >> 11) * 0x1.0p-53)
    for (int t = 0; t < ntraj; t++)
        for (int k = 0; k < 3; k++) p[3 * t + k] = base[k] * pow(10.0, -d + 2 * d * U01());
    for (int t = 0; t < ntraj; t++) {
        double a = 0.99 * U01(), bl = fmin(d / 4, 1.0) * U01();
        double eps = pow(10.0, (1 - bl) * log10(0.1) + bl * log10(1e-8));
        y0[3 * t] = (1 - eps) * a;
        y0[3 * t + 1] = eps;
        y0[3 * t + 2] = (1 - eps) * (1 - a);
    }
#undef U01
}

static void modax_cases(int nthreads)
{
    sv_ode_builtin *b;
    if (sv_ode_builtin_create(NULL, "rober", 0, SV_ODE_JAC_ANALYTIC, &b) != SV_OK) return;
    static const double y0[3] = {0.891, 0.1, 0.009}, k[3] = {0.04, 1e4, 3e7};
    /* modax's README figures, as quoted in issue 14 (seconds) */
    static const published none = {0, 0, 0, 0}, p10k = {4.07e-3, 4.97e-3, 40.4e-3, 1.241},
                           p100k = {36.0e-3, 45.6e-3, 445e-3, 4.695}, pdiv = {15.0e-3, 0, 271.7e-3, 0};
    const int sizes[3] = {1000, 10000, 100000};
    const published *pubs[3] = {&none, &p10k, &p100k};
    char label[64];
    for (int i = 0; i < 3; i++)
        for (int single = 0; single <= 1; single++) {
            snprintf(label, sizeof label, "rober_modax_%d%s", sizes[i], single ? "_single_lu" : "");
            modax_case(label, b, sizes[i], y0, 1, k, 1, single ? SV_ODE_LU_SINGLE : SV_ODE_LU_DOUBLE, nthreads,
                       pubs[i]);
        }
    int nd = 30000;
    double *dy0 = malloc(sizeof(double) * 3 * nd), *dp = malloc(sizeof(double) * 3 * nd);
    modax_divergent(nd, 1.0, 42, dy0, dp);
    for (int single = 0; single <= 1; single++)
        modax_case(single ? "rober_modax_divergent_30000_single_lu" : "rober_modax_divergent_30000", b, nd, dy0, 0,
                   dp, 0, single ? SV_ODE_LU_SINGLE : SV_ODE_LU_DOUBLE, nthreads, &pdiv);
    free(dy0), free(dp);
    sv_ode_builtin_destroy(b);
}

int main(int argc, char **argv)
{
    bench_prefer_passive_waiting(argv);
    char exe[4096];
    snprintf(exe, sizeof exe, "%s", argv[0]);
    snprintf(kernel_dir, sizeof kernel_dir, "%s/kernel-cache", dirname(exe));
    if (mkdir(kernel_dir, 0755) != 0 && errno != EEXIST) kernel_dir[0] = 0;
    const char *only = argc > 1 ? argv[1] : NULL;
    int nthreads = 2;
    if (!only || !strcmp(only, "modax")) modax_cases(nthreads);
    unsigned long long rs = 12345;
#define URAND() ((rs = rs * 6364136223846793005ULL + 1442695040888963407ULL), ((rs >> 11) * 0x1.0p-53) * 2 - 1)
    if (!only || !strcmp(only, "rober")) {
        ens E = {.name = "rober", .ntraj = 10000, .nsave = 5, .n = 3, .np = 3, .rtol = 1e-6, .atol = 1e-8,
                 .first_step = 1e-4, .floor = 1e-8, .y0_shared = 1, .comp = -1};
        sv_ode_builtin_create(NULL, "rober", 0, SV_ODE_JAC_ANALYTIC, &E.b);
        static double ts[5] = {0, 1e-6, 1e-2, 1e2, 1e5}, y0[3] = {0.9 * 0.99, 0.1, 0.9 * 0.01};
        E.tsave = ts;
        E.y0 = y0;
        E.p = malloc(sizeof(double) * 3 * E.ntraj);
        const double base[3] = {0.04, 1e4, 3e7};
        for (int t = 0; t < E.ntraj; t++)
            for (int k = 0; k < 3; k++) E.p[3 * t + k] = base[k] * (1 + 0.1 * URAND());
        run_case(&E, nthreads, 0, SV_ODE_LU_DOUBLE, "rober_ens10000");
        free(E.p);
        sv_ode_builtin_destroy(E.b);
    }
    if (!only || !strcmp(only, "eb50")) {
        ens E = {.name = "eb50", .ntraj = 128, .nsave = 1, .n = 50, .np = 1, .rtol = 1e-4, .atol = 1e-4,
                 .first_step = 1e-2, .floor = 0, .t0 = 0.1, .comp = 1};
        sv_ode_builtin_create(NULL, "eb50", 0.01, SV_ODE_JAC_ANALYTIC, &E.b);
        static double ts[1] = {14000};
        E.tsave = ts;
        E.p = malloc(sizeof(double) * E.ntraj);
        E.y0 = malloc(sizeof(double) * 50 * E.ntraj);
        for (int t = 0; t < E.ntraj; t++) {
            E.p[t] = 1e-4 * pow(0.5 / 1e-4, (double)t / (E.ntraj - 1));
            sv_ode_eb50_initial(E.p[t], E.y0 + 50 * t);
        }
        run_case(&E, nthreads, 1, SV_ODE_LU_DOUBLE, "eb50_n128");
        run_case(&E, nthreads, 1, SV_ODE_LU_SINGLE, "eb50_n128_single_lu");
        free(E.p), free(E.y0);
        sv_ode_builtin_destroy(E.b);
    }
    if (!only || !strcmp(only, "pollu")) {
        ens E = {.name = "pollu", .ntraj = 1000, .nsave = 1, .n = 20, .np = 25, .rtol = 1e-6, .atol = 1e-6,
                 .floor = 1e-6, .y0_shared = 1, .comp = -1};
        sv_ode_builtin_create(NULL, "pollu", 0, SV_ODE_JAC_ANALYTIC, &E.b);
        static double ts[1] = {60};
        E.tsave = ts;
        E.y0 = E.b->y0;
        E.p = malloc(sizeof(double) * 25 * E.ntraj);
        for (int t = 0; t < E.ntraj; t++)
            for (int k = 0; k < 25; k++) E.p[25 * t + k] = E.b->params[k] * (1 + 0.1 * URAND());
        run_case(&E, nthreads, 1, SV_ODE_LU_DOUBLE, "pollu_ens1000");
        free(E.p);
        sv_ode_builtin_destroy(E.b);
    }
    if (!only || !strcmp(only, "bruss32")) {
        ens E = {.name = "bruss32", .ntraj = 1, .nsave = 1, .np = 3, .rtol = 1e-6, .atol = 1e-6, .floor = 1e-6, .comp = -1};
        sv_ode_builtin_create(NULL, "bruss2d", 32, SV_ODE_JAC_ANALYTIC, &E.b);
        E.n = sv_ode_problem_n(E.b->prob);
        static double ts[1] = {11.5};
        E.tsave = ts;
        E.y0 = E.b->y0;
        E.p = E.b->params;
        run_case(&E, 1, 1, SV_ODE_LU_DOUBLE, "bruss2d_32x32");
        sv_ode_builtin_destroy(E.b);
    }
    if (!only || !strcmp(only, "sens")) bench_ode_sens(nthreads);
    if (!only || !strcmp(only, "akzo")) bench_ode_dae(nthreads);
    if (!only || !strcmp(only, "events")) bench_ode_events(nthreads);
    if (!only || !strcmp(only, "invariants")) bench_ode_invariants(nthreads);
    if (!only || !strcmp(only, "lorenz")) {
        ens E = {.name = "lorenz", .ntraj = 100000, .nsave = 1, .n = 3, .np = 3, .rtol = 1e-6, .atol = 1e-8,
                 .floor = 1e-6, .method = SV_ODE_TSIT5, .y0_shared = 1, .comp = -1};
        sv_ode_builtin_create(NULL, "lorenz", 0, SV_ODE_JAC_ANALYTIC, &E.b);
        static double ts[1] = {1.0}, y0[3] = {1, 0, 0};
        E.tsave = ts;
        E.y0 = y0;
        E.p = malloc(sizeof(double) * 3 * E.ntraj);
        const double base[3] = {10, 28, 8.0 / 3.0};
        for (int t = 0; t < E.ntraj; t++)
            for (int k = 0; k < 3; k++) E.p[3 * t + k] = base[k] * (1 + 0.1 * URAND());
        run_case(&E, nthreads, 0, SV_ODE_LU_DOUBLE, "lorenz_tsit5_ens100000");
        free(E.p);
        sv_ode_builtin_destroy(E.b);
    }
    return 0;
}
