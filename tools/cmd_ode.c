/* `solvent ode`: run a built-in problem, alone or as an ensemble, and write
 * the saved states as CSV. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "solvent/ode.h"

const char cmd_ode_summary[] = "integrate a built-in stiff/non-stiff ODE problem or an ensemble of it";

static void usage(FILE *o)
{
    fprintf(o,
            "usage: solvent ode PROBLEM [options]\n\n"
            "PROBLEM: rober, hires, orego, vdpol, bruss2d, eb50, lorenz\n\n"
            "options:\n"
            "  --ensemble N       N trajectories (default 1). Parameters are perturbed by up to\n"
            "                     +-10 %% (seeded); problems without parameters perturb y0;\n"
            "                     eb50 takes N wavenumbers log-spaced in [1e-4, 0.5] Mpc^-1\n"
            "  --rtol X --atol X  tolerances (default: the problem's suggested ones)\n"
            "  --method M         rodas5p (default) or tsit5\n"
            "  --lu P             double (default) or single (refined to double accuracy)\n"
            "  --jac S            analytic (default), complex, jvp or fd (inexact)\n"
            "  --arg X            problem argument: bruss2d grid N (8), eb50 wavenumber k (0.01)\n"
            "  --t1 T             end time (default: the problem's)\n"
            "  --save K           K save times equally spaced in (t0, t1] (default 1: the end)\n"
            "  --first-step H     initial step (default: Hairer-Wanner estimate)\n"
            "  --max-steps M      step attempts per trajectory (default 1000000)\n"
            "  --lanes W          trajectories side by side in SIMD lanes: 1, 2, 4, 8 or 16 (the solver's choice)\n"
            "  --threads T        threads (default: OMP_NUM_THREADS or all cores)\n"
            "  --seed S           seed of the ensemble perturbation (1)\n"
            "  --out FILE.csv     write traj,t,y1..yn rows (written to a temporary file, then renamed)\n"
            "  --quiet            no progress bar or summary\n\n"
            "Exit codes: 0 all trajectories succeeded, 1 a failed run or failed trajectories,\n"
            "2 bad arguments.\n");
}

static int progress_bar(void *u, const char *phase, double f)
{
    (void)u;
    int width = 40, k = (int)(f * width + 0.5);
    fprintf(stderr, "\r%s [", phase);
    for (int i = 0; i < width; i++) fputc(i < k ? '#' : ' ', stderr);
    fprintf(stderr, "] %3.0f%%", 100 * f);
    if (f >= 1) fputc('\n', stderr);
    fflush(stderr);
    return 0;
}

static int parse_double(const char *opt, const char *s, double *v)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(x)) {
        fprintf(stderr, "solvent ode: %s '%s': expected a number\n", opt, s);
        return 0;
    }
    *v = x;
    return 1;
}

static int parse_int(const char *opt, const char *s, long lo, long hi, long *v)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (errno || end == s || *end || x < lo || x > hi) {
        fprintf(stderr, "solvent ode: %s '%s': expected an integer in %ld..%ld\n", opt, s, lo, hi);
        return 0;
    }
    *v = x;
    return 1;
}

static double urand(unsigned long long *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return ((*s >> 11) * 0x1.0p-53) * 2 - 1;
}

/* Write the CSV to a temporary file beside the target, then rename it over
 * the target, so that a failed run never leaves a half-written file. */
static int write_csv(const char *path, int ntraj, int nsave, int n, double t0, const double *ts, const double *out,
                     const sv_ode_traj_status *st)
{
    sv_atomic_file *af;
    if (sv_atomic_file_open(path, &af) != SV_OK) {
        fprintf(stderr, "solvent ode: %s\n", sv_last_error());
        return 0;
    }
    FILE *f = sv_atomic_file_stream(af);
    fprintf(f, "traj,status,t");
    for (int i = 0; i < n; i++) fprintf(f, ",y%d", i + 1);
    fputc('\n', f);
    for (int t = 0; t < ntraj; t++)
        for (int s = 0; s < nsave; s++) {
            fprintf(f, "%d,%d,%.17g", t, (int)st[t], s < 0 ? t0 : ts[s]);
            const double *y = out + ((size_t)t * nsave + s) * n;
            for (int i = 0; i < n; i++) fprintf(f, ",%.17g", y[i]);
            fputc('\n', f);
        }
    if (sv_atomic_file_close(af, 1) != SV_OK) {
        fprintf(stderr, "solvent ode: %s\n", sv_last_error());
        return 0;
    }
    return 1;
}

int cmd_ode_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        return 0;
    }
    const char *name = argv[1], *outpath = NULL;
    double rtol = -1, atol = -1, arg = 0, t1 = NAN, first = 0;
    long ntraj = 1, nsave = 1, lanes = 0, threads = 0, seed = 1, max_steps = 1000000;
    sv_ode_method method = SV_ODE_RODAS5P;
    sv_ode_lu_precision lu = SV_ODE_LU_DOUBLE;
    sv_ode_jac_source jac = SV_ODE_JAC_ANALYTIC;
    int quiet = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--quiet")) {
            quiet = 1;
            continue;
        }
        if (a[0] != '-' || a[1] != '-') {
            fprintf(stderr, "solvent ode: unexpected argument '%s' (see solvent ode --help)\n", a);
            return 2;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "solvent ode: option %s needs a value\n", a);
            return 2;
        }
        const char *v = argv[++i];
        int ok = 1;
        if (!strcmp(a, "--ensemble")) ok = parse_int(a, v, 1, 100000000, &ntraj);
        else if (!strcmp(a, "--rtol")) ok = parse_double(a, v, &rtol);
        else if (!strcmp(a, "--atol")) ok = parse_double(a, v, &atol);
        else if (!strcmp(a, "--arg")) ok = parse_double(a, v, &arg);
        else if (!strcmp(a, "--t1")) ok = parse_double(a, v, &t1);
        else if (!strcmp(a, "--first-step")) ok = parse_double(a, v, &first);
        else if (!strcmp(a, "--save")) ok = parse_int(a, v, 1, 1000000, &nsave);
        else if (!strcmp(a, "--max-steps")) ok = parse_int(a, v, 1, 2000000000L, &max_steps);
        else if (!strcmp(a, "--lanes")) ok = parse_int(a, v, 1, 16, &lanes);
        else if (!strcmp(a, "--threads")) ok = parse_int(a, v, 1, 1024, &threads);
        else if (!strcmp(a, "--seed")) ok = parse_int(a, v, 0, 2147483647L, &seed);
        else if (!strcmp(a, "--out")) outpath = v;
        else if (!strcmp(a, "--method")) {
            if (!strcmp(v, "rodas5p")) method = SV_ODE_RODAS5P;
            else if (!strcmp(v, "tsit5")) method = SV_ODE_TSIT5;
            else {
                fprintf(stderr, "solvent ode: --method '%s': expected rodas5p or tsit5\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--lu")) {
            if (!strcmp(v, "double")) lu = SV_ODE_LU_DOUBLE;
            else if (!strcmp(v, "single")) lu = SV_ODE_LU_SINGLE;
            else {
                fprintf(stderr, "solvent ode: --lu '%s': expected single or double\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--jac")) {
            if (!strcmp(v, "analytic")) jac = SV_ODE_JAC_ANALYTIC;
            else if (!strcmp(v, "complex")) jac = SV_ODE_JAC_COMPLEX_STEP;
            else if (!strcmp(v, "jvp")) jac = SV_ODE_JAC_JVP;
            else if (!strcmp(v, "fd")) jac = SV_ODE_JAC_FD;
            else {
                fprintf(stderr, "solvent ode: --jac '%s': expected analytic, complex, jvp or fd\n", v);
                return 2;
            }
        } else {
            fprintf(stderr, "solvent ode: unknown option '%s' (see solvent ode --help)\n", a);
            return 2;
        }
        if (!ok) return 2;
    }
    sv_ode_builtin *b = NULL;
    if (sv_ode_builtin_create(NULL, name, arg, jac, &b) != SV_OK) {
        fprintf(stderr, "solvent ode: %s\n", sv_last_error());
        return sv_last_status() == SV_ERR_ARG ? 2 : 1;
    }
    int n = sv_ode_problem_n(b->prob), np = sv_ode_problem_nparams(b->prob);
    int is_eb = !strcmp(name, "eb50");
    double tend = isnan(t1) ? b->t1 : t1;
    if (!(tend > b->t0)) {
        fprintf(stderr, "solvent ode: --t1 %g: expected > t0 = %g\n", tend, b->t0);
        sv_ode_builtin_destroy(b);
        return 2;
    }
    int rc = 1;
    size_t N = (size_t)ntraj;
    double *ts = malloc(sizeof(double) * (size_t)nsave);
    double *y0 = malloc(sizeof(double) * N * n), *p = malloc(sizeof(double) * N * (np ? np : 1));
    double *out = malloc(sizeof(double) * N * (size_t)nsave * n);
    sv_ode_traj_status *st = malloc(sizeof *st * N);
    sv_ode_stats *stats = malloc(sizeof *stats * N);
    sv_ctx *ctx = NULL;
    if (!ts || !y0 || !p || !out || !st || !stats || sv_ctx_create(&ctx) != SV_OK) {
        fprintf(stderr, "solvent ode: out of memory for %ld trajectories × %ld saves × %d values\n", ntraj, nsave, n);
        goto done;
    }
    for (long s = 0; s < nsave; s++) ts[s] = b->t0 + (tend - b->t0) * (double)(s + 1) / (double)nsave;
    ts[nsave - 1] = tend;
    unsigned long long rs = (unsigned long long)seed * 0x9E3779B97F4A7C15ULL + 1;
    for (size_t t = 0; t < N; t++) {
        double *yt = y0 + t * n, *pt = p + t * (np ? np : 1);
        memcpy(yt, b->y0, sizeof(double) * n);
        if (np) memcpy(pt, b->params, sizeof(double) * np);
        if (ntraj == 1) continue;
        if (is_eb) {
            pt[0] = 1e-4 * pow(0.5 / 1e-4, (double)t / (double)(N - 1));
            sv_ode_eb50_initial(pt[0], yt);
        } else if (np) {
            for (int k = 0; k < np; k++) pt[k] *= 1 + 0.1 * urand(&rs);
        } else {
            for (int i = 0; i < n; i++) yt[i] *= 1 + 0.1 * urand(&rs);
        }
    }
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.method = method;
    o.lu = lu;
    o.rtol = rtol >= 0 ? rtol : b->rtol;
    o.atol = atol >= 0 ? atol : b->atol;
    o.first_step = first;
    o.max_steps = max_steps;
    o.lanes = (int)lanes;
    o.tstops = b->tstops;
    o.ntstops = b->ntstops;
    if (threads) sv_ctx_set_threads(ctx, (int)threads);
    if (!quiet && isatty(2)) sv_ctx_set_progress(ctx, progress_bar, NULL);
    sv_ode_ensemble e = {.ntraj = (int)ntraj, .t0 = b->t0, .nsave = (int)nsave, .tsave = ts, .y0 = y0,
                         .params = np ? p : NULL, .out = out, .status = st, .stats = stats};
    double t0 = sv_time_now();
    sv_status s = sv_ode_solve(ctx, b->prob, &o, &e);
    double el = sv_time_now() - t0;
    if (s != SV_OK) {
        fprintf(stderr, "solvent ode: %s: %s\n", sv_status_string(s), sv_last_error());
        goto done;
    }
    long cnt[6] = {0}, acc = 0, rej = 0, nf = 0, nj = 0;
    for (size_t t = 0; t < N; t++) {
        cnt[st[t]]++;
        acc += stats[t].accepted;
        rej += stats[t].rejected;
        nf += stats[t].nf;
        nj += stats[t].njac;
    }
    if (!quiet) {
        printf("problem   %s (n = %d, %d Jacobian entries, %d colours)\n", name, n, sv_ode_problem_nnz(b->prob),
               sv_ode_problem_ncolors(b->prob));
        printf("method    %s, rtol %g, atol %g%s\n", method == SV_ODE_RODAS5P ? "Rodas5P" : "Tsit5", o.rtol, o.atol,
               method == SV_ODE_RODAS5P ? (lu == SV_ODE_LU_SINGLE ? ", single-precision LU refined" : ", double LU")
                                        : "");
        printf("trajectories %ld: %ld succeeded", ntraj, cnt[SV_ODE_SUCCESS]);
        for (int k = 1; k < 6; k++)
            if (cnt[k]) printf(", %ld %s", cnt[k], sv_ode_traj_status_string((sv_ode_traj_status)k));
        printf("\nsteps     %ld accepted, %ld rejected (%.1f per trajectory); %ld f evaluations, %ld Jacobians\n", acc,
               rej, (double)(acc + rej) / ntraj, nf, nj);
        printf("time      %.3f s (%.3g ms per trajectory)\n", el, 1e3 * el / ntraj);
        printf("y(t1) of trajectory 0:");
        for (int i = 0; i < n && i < 6; i++) printf(" %.10g", out[((size_t)nsave - 1) * n + i]);
        printf(n > 6 ? " ...\n" : "\n");
    }
    if (outpath && !write_csv(outpath, (int)ntraj, (int)nsave, n, b->t0, ts, out, st)) goto done;
    if (cnt[SV_ODE_SUCCESS] != ntraj) {
        for (size_t t = 0; t < N; t++)
            if (st[t] != SV_ODE_SUCCESS) {
                fprintf(stderr, "solvent ode: %ld of %ld trajectories failed; first: trajectory %zu: %s at t = %g\n",
                        ntraj - cnt[SV_ODE_SUCCESS], ntraj, t, sv_ode_traj_status_string(st[t]),
                        stats[t].t_reached);
                break;
            }
        goto done;
    }
    rc = 0;
done:
    free(ts), free(y0), free(p), free(out), free(st), free(stats);
    sv_ctx_destroy(ctx);
    sv_ode_builtin_destroy(b);
    return rc;
}
