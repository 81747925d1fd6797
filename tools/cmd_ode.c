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
#include "interrupt.h"
#include "start.h"
#include "tool_args.h"

const char cmd_ode_summary[] = "integrate a built-in stiff/non-stiff ODE problem or an ensemble of it";

static void usage(FILE *o)
{
    fprintf(o,
            "usage: solvent ode PROBLEM [options]\n\n"
            "PROBLEM: rober, hires, orego, vdpol, bruss2d, eb50, lorenz, pollu (ODEs);\n"
            "         akzo, rober_dae, transamp (index-1 DAEs with a singular mass matrix);\n"
            "         ball (a bouncing ball: an event whose handler reverses the velocity)\n\n"
            "options:\n"
            "  --ensemble N       N trajectories (default 1). Parameters are perturbed by up to\n"
            "                     +-10 %% (seeded); problems without parameters perturb y0;\n"
            "                     eb50 takes N wavenumbers log-spaced in [1e-4, 0.5] Mpc^-1\n"
            "  --rtol X --atol X  tolerances, >= 0 (default: the problem's suggested ones); rtol at most\n"
            "                     0.1, atol at most max(1, the largest |y0|)\n"
            "  --method M         rodas5p (default) or tsit5\n"
            "  --lu P             double (default) or single (refined to double accuracy)\n"
            "  --jac S            analytic (default), complex, jvp or fd (inexact)\n"
            "  --arg X            problem argument: bruss2d grid N (8), eb50 wavenumber k (0.01);\n"
            "                     the other problems take none\n"
            "  --t1 T             end time (default: the problem's)\n"
            "  --save K           K save times equally spaced in (t0, t1] (default 1: the end)\n"
            "  --first-step H     initial step (default: Hairer-Wanner estimate)\n"
            "  --max-steps M      step attempts per trajectory (default 1000000)\n"
            "  --lanes W          trajectories side by side in SIMD lanes: 1, 2, 4, 8 or 16 (default: the\n"
            "                     solver's choice)\n"
            "  --threads T        threads (default: OMP_NUM_THREADS or all cores)\n"
            "  --seed S           seed of the ensemble perturbation (1)\n"
            "  --sens LIST        forward sensitivities to parameters and initial values, e.g. p1,p3,y2\n"
            "                     (1-based; eb50's p1 = k moves y0 too); they enter the error control\n"
            "  --sens-errcon E    full (default: state and sensitivities) or state\n"
            "  --init I           a DAE's initial values: compute (default: Newton on the algebraic\n"
            "                     variables, as the ensemble perturbs parameters) or check\n"
            "  --out FILE.csv     write traj,status,t,y1..yn rows (written to a temporary file, then renamed);\n"
            "                     with --sens also dyI/dTHETA columns\n"
            "  --quiet            no progress bar or summary\n\n"
            "Exit codes: 0 all trajectories succeeded, 1 a failed run or failed trajectories,\n"
            "2 bad arguments, 130 interrupted (Ctrl-C or SIGTERM: nothing written).\n");
}

static int progress_bar(void *u, const char *phase, double f)
{
    (void)u;
    if (tool_interrupted()) return 1;
    int width = 40, k = (int)(f * width + 0.5);
    fprintf(stderr, "\r%s [", phase);
    for (int i = 0; i < width; i++) fputc(i < k ? '#' : ' ', stderr);
    fprintf(stderr, "] %3.0f%%", 100 * f);
    if (f >= 1) fputc('\n', stderr);
    fflush(stderr);
    return 0;
}

/* A finite number; with a bound (lo finite) also >= lo, or > lo when
 * open_lo. 1 when understood, 0 after a message. */
static int parse_double(const char *opt, const char *s, double lo, int open_lo, double *v)
{
    double x;
    if (tool_parse_number(s, &x)) {
        tool_say("ode", "%s '%s': expected %s", opt, s, TOOL_NUMBER_EXPECTED);
        return 0;
    }
    if (isfinite(lo) && (open_lo ? !(x > lo) : !(x >= lo))) {
        tool_say("ode", "%s '%s': expected a number %s %g", opt, s, open_lo ? ">" : ">=", lo);
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
        tool_say("ode", "%s '%s': expected an integer in %ld..%ld", opt, s, lo, hi);
        return 0;
    }
    *v = x;
    return 1;
}

/* --lanes: the widths the solver offers (sv_ode_options.lanes; its 0, the
 * solver's choice, is what leaving the option out means). */
static int parse_lanes(const char *s, long *v)
{
    static const char *const widths[] = {"1", "2", "4", "8", "16", NULL};
    for (int k = 0; widths[k]; k++)
        if (!strcmp(s, widths[k])) {
            *v = 1L << k;
            return 1;
        }
    tool_say("ode", "--lanes '%s': expected 1, 2, 4, 8 or 16", s);
    return 0;
}

/* v as one of names (NULL-terminated): its index, which is the enum value
 * of the option; -1 with a message naming what was expected. */
static int parse_choice(const char *opt, const char *v, const char *const *names, const char *expected)
{
    for (int k = 0; names[k]; k++)
        if (!strcmp(v, names[k])) return k;
    tool_say("ode", "%s '%s': expected %s", opt, v, expected);
    return -1;
}

static double urand(unsigned long long *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return ((*s >> 11) * 0x1.0p-53) * 2 - 1;
}

/* Write the CSV to a temporary file beside the target, then rename it over
 * the target, so that a failed run never leaves a half-written file. */
/* The sensitivity directions asked for (--sens): parameter or initial
 * value, 0-based, in the order given. */
typedef struct sens_spec {
    int ns, nparams, ny0;
    int param[64], y0[64]; /* directions: the parameters, then the initial values */
    char label[64][16];    /* p1, y3, ...: parameters first */
} sens_spec;

static int write_csv(const char *path, int ntraj, int nsave, int n, double t0, const double *ts, const double *out,
                     const sv_ode_traj_status *st, const sens_spec *sp, const double *sout)
{
    sv_atomic_file *af;
    if (sv_atomic_file_open(path, &af) != SV_OK) {
        fprintf(stderr, "solvent ode: %s\n", sv_last_error());
        return 0;
    }
    FILE *f = sv_atomic_file_stream(af);
    int ns = sout ? sp->ns : 0;
    fprintf(f, "traj,status,t");
    for (int i = 0; i < n; i++) fprintf(f, ",y%d", i + 1);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < ns; j++) fprintf(f, ",dy%d/d%s", i + 1, sp->label[j]);
    fputc('\n', f);
    for (int t = 0; t < ntraj; t++)
        for (int s = 0; s < nsave; s++) {
            fprintf(f, "%d,%d,%.17g", t, (int)st[t], s < 0 ? t0 : ts[s]);
            size_t row = (size_t)t * nsave + s;
            const double *y = out + row * n;
            for (int i = 0; i < n; i++) fprintf(f, ",%.17g", y[i]);
            for (int q = 0; q < n * ns; q++) fprintf(f, ",%.17g", sout[row * n * ns + q]);
            fputc('\n', f);
        }
    if (sv_atomic_file_close(af, 1) != SV_OK) {
        fprintf(stderr, "solvent ode: %s\n", sv_last_error());
        return 0;
    }
    return 1;
}

/* The command line. */
typedef struct ode_args {
    const char *name, *outpath;
    double rtol, atol, arg, t1, first;
    long ntraj, nsave, lanes, threads, seed, max_steps;
    sv_ode_method method;
    sv_ode_lu_precision lu;
    sv_ode_jac_source jac;
    sv_ode_sens_errcon sens_errcon;
    sv_ode_init init;
    const char *sens;
    int quiet;
} ode_args;

/* One "--option value"; 1 when understood, 0 after a message. */
static int parse_option(ode_args *A, const char *a, const char *v)
{
    if (!strcmp(a, "--ensemble")) return parse_int(a, v, 1, 100000000, &A->ntraj);
    if (!strcmp(a, "--rtol")) return parse_double(a, v, 0, 0, &A->rtol);
    if (!strcmp(a, "--atol")) return parse_double(a, v, 0, 0, &A->atol);
    if (!strcmp(a, "--arg")) return parse_double(a, v, 0, 1, &A->arg);
    if (!strcmp(a, "--t1")) return parse_double(a, v, -INFINITY, 0, &A->t1);
    if (!strcmp(a, "--first-step")) return parse_double(a, v, 0, 0, &A->first);
    if (!strcmp(a, "--save")) return parse_int(a, v, 1, 1000000, &A->nsave);
    if (!strcmp(a, "--max-steps")) return parse_int(a, v, 1, 2000000000L, &A->max_steps);
    if (!strcmp(a, "--lanes")) return parse_lanes(v, &A->lanes);
    if (!strcmp(a, "--threads")) return parse_int(a, v, 1, 1024, &A->threads);
    if (!strcmp(a, "--seed")) return parse_int(a, v, 0, 2147483647L, &A->seed);
    if (!strcmp(a, "--out")) {
        A->outpath = v;
        return 1;
    }
    if (!strcmp(a, "--sens")) {
        if (!*v) {
            tool_say("ode", "--sens '': expected a comma-separated list of directions, e.g. p1,p3,y2");
            return 0;
        }
        A->sens = v;
        return 1;
    }
    int k = -2;
    if (!strcmp(a, "--method")) {
        static const char *const m[] = {"rodas5p", "tsit5", NULL}; /* SV_ODE_RODAS5P, SV_ODE_TSIT5 */
        if ((k = parse_choice(a, v, m, "rodas5p or tsit5")) >= 0) A->method = (sv_ode_method)k;
    } else if (!strcmp(a, "--lu")) {
        static const char *const m[] = {"double", "single", NULL}; /* SV_ODE_LU_DOUBLE, _SINGLE */
        if ((k = parse_choice(a, v, m, "single or double")) >= 0) A->lu = (sv_ode_lu_precision)k;
    } else if (!strcmp(a, "--sens-errcon")) {
        static const char *const m[] = {"full", "state", NULL}; /* SV_ODE_SENS_ERR_FULL, _STATE */
        if ((k = parse_choice(a, v, m, "full or state")) >= 0) A->sens_errcon = (sv_ode_sens_errcon)k;
    } else if (!strcmp(a, "--init")) {
        static const char *const m[] = {"check", "compute", NULL}; /* SV_ODE_INIT_CHECK, _COMPUTE */
        if ((k = parse_choice(a, v, m, "compute or check")) >= 0) A->init = (sv_ode_init)k;
    } else if (!strcmp(a, "--jac")) {
        static const char *const m[] = {"analytic", "complex", "jvp", "fd", NULL}; /* sv_ode_jac_source order */
        if ((k = parse_choice(a, v, m, "analytic, complex, jvp or fd")) >= 0) A->jac = (sv_ode_jac_source)k;
    }
    if (k == -2) tool_say("ode", "unknown option '%s' (see solvent ode --help)", a);
    return k >= 0;
}

/* Returns -1 when the command should run, else its exit code. */
static int parse_args(int argc, char **argv, ode_args *A)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        return 0;
    }
    *A = (ode_args){.name = argv[1], .rtol = -1, .atol = -1, .t1 = NAN, .ntraj = 1, .nsave = 1, .seed = 1,
                    .max_steps = 1000000, .method = SV_ODE_RODAS5P, .lu = SV_ODE_LU_DOUBLE,
                    .jac = SV_ODE_JAC_ANALYTIC, .init = SV_ODE_INIT_COMPUTE};
    tool_seen seen = {0};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--quiet")) {
            A->quiet = 1;
            continue;
        }
        if (a[0] != '-' || a[1] != '-') {
            tool_say("ode", "unexpected argument '%s' (see solvent ode --help)", a);
            return 2;
        }
        if (i + 1 >= argc) {
            tool_say("ode", "option %s needs a value", a);
            return 2;
        }
        if (tool_seen_once(&seen, "ode", a) || !parse_option(A, a, argv[++i])) return 2;
    }
    return -1;
}

/* Save times equally spaced in (t0, tend], and every trajectory's y0 and
 * parameters: the problem's, perturbed by up to ±10 % (seeded) in an
 * ensemble; EB-50 ensembles take log-spaced wavenumbers instead. */
static void fill_ensemble(const ode_args *A, const sv_ode_builtin *b, double tend, double *ts, double *y0, double *p)
{
    int n = sv_ode_problem_n(b->prob), np = sv_ode_problem_nparams(b->prob), is_eb = !strcmp(A->name, "eb50");
    size_t N = (size_t)A->ntraj;
    for (long s = 0; s < A->nsave; s++) ts[s] = b->t0 + (tend - b->t0) * (double)(s + 1) / (double)A->nsave;
    ts[A->nsave - 1] = tend;
    unsigned long long rs = (unsigned long long)A->seed * 0x9E3779B97F4A7C15ULL + 1;
    for (size_t t = 0; t < N; t++) {
        double *yt = y0 + t * n, *pt = p + t * (np ? np : 1);
        memcpy(yt, b->y0, sizeof(double) * n);
        if (np) memcpy(pt, b->params, sizeof(double) * np);
        if (A->ntraj == 1) continue;
        if (is_eb) {
            pt[0] = 1e-4 * pow(0.5 / 1e-4, (double)t / (double)(N - 1));
            sv_ode_eb50_initial(pt[0], yt);
        } else if (np) {
            for (int k = 0; k < np; k++) pt[k] *= 1 + 0.1 * urand(&rs);
        } else {
            for (int i = 0; i < n; i++) yt[i] *= 1 + 0.1 * urand(&rs);
        }
    }
}

/* --sens LIST: "p1,y3,...", 1-based, each at most once, in range. */
static int parse_sens(const char *list, int n, int np, sens_spec *sp)
{
    memset(sp, 0, sizeof *sp);
    int pick[2][64], cnt[2] = {0, 0};
    const char *c = list;
    while (*c) {
        char kind = *c++;
        char *end;
        long i = strtol(c, &end, 10);
        int lim = kind == 'p' ? np : n, w = kind == 'y';
        if ((kind != 'p' && kind != 'y') || end == c || i < 1 || i > lim || (*end && *end != ',') ||
            cnt[w] >= 64) {
            if (np > 0)
                tool_say("ode", "--sens '%s': expected a comma-separated list of p1..p%d and y1..y%d", list, np, n);
            else
                tool_say("ode", "--sens '%s': the problem has no parameters: expected a comma-separated list of "
                         "y1..y%d", list, n);
            return 0;
        }
        for (int q = 0; q < cnt[w]; q++)
            if (pick[w][q] == i - 1) {
                tool_say("ode", "--sens '%s': %c%ld twice", list, kind, i);
                return 0;
            }
        pick[w][cnt[w]++] = (int)i - 1;
        c = *end ? end + 1 : end;
    }
    sp->nparams = cnt[0], sp->ny0 = cnt[1], sp->ns = cnt[0] + cnt[1];
    for (int q = 0; q < cnt[0]; q++) {
        sp->param[q] = pick[0][q];
        snprintf(sp->label[q], sizeof sp->label[q], "p%d", pick[0][q] + 1);
    }
    for (int q = 0; q < cnt[1]; q++) {
        sp->y0[q] = pick[1][q];
        snprintf(sp->label[cnt[0] + q], sizeof sp->label[0], "y%d", pick[1][q] + 1);
    }
    return 1;
}

/* EB-50's initial state moves with its wavenumber: ∂y0/∂k of trajectory t
 * (a cubic in k: two central differences extrapolate to it), for the
 * direction p1; the standard initial sensitivities otherwise. */
static void fill_sens0(const sens_spec *sp, int n, size_t N, const double *p, int is_eb, double *s0)
{
    const int ns = sp->ns;
    for (size_t t = 0; t < N; t++)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < ns; j++)
                s0[(t * n + i) * ns + j] = j >= sp->nparams && sp->y0[j - sp->nparams] == i;
    if (!is_eb || sp->nparams == 0) return;
    double a[64], b[64], c[64], d[64];
    for (size_t t = 0; t < N; t++) {
        double k = p[t], h = 1e-3 * k;
        sv_ode_eb50_initial(k + h, a), sv_ode_eb50_initial(k - h, b);
        sv_ode_eb50_initial(k + h / 2, c), sv_ode_eb50_initial(k - h / 2, d);
        for (int i = 0; i < n; i++) s0[(t * n + i) * ns] = (4 * (c[i] - d[i]) / h - (a[i] - b[i]) / (2 * h)) / 3;
    }
}

static sv_ode_options make_options(const ode_args *A, const sv_ode_builtin *b)
{
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.method = A->method;
    o.lu = A->lu;
    o.rtol = A->rtol >= 0 ? A->rtol : b->rtol;
    o.atol = A->atol >= 0 ? A->atol : b->atol;
    o.first_step = A->first;
    o.max_steps = A->max_steps;
    o.lanes = (int)A->lanes;
    o.tstops = b->tstops;
    o.ntstops = b->ntstops;
    o.sens_errcon = A->sens_errcon;
    o.init = A->init;
    o.events = b->events;
    o.max_step = b->max_step;
    return o;
}

/* The sensitivities' line of the summary: counts and trajectory 0's at t1. */
static void print_sens(const sens_spec *sp, int n, const sv_ode_ensemble *e)
{
    long nr = 0, nj = 0;
    for (int t = 0; t < e->ntraj; t++) nr += e->stats[t].nsens_rhs, nj += e->stats[t].nsens_jac;
    printf("sensitivities %d direction%s, %ld right-hand sides, %ld Jacobian derivatives\n", sp->ns,
           sp->ns == 1 ? "" : "s", nr, nj);
    const double *S = e->sens_out + ((size_t)e->nsave - 1) * n * sp->ns;
    for (int j = 0; j < sp->ns; j++) {
        printf("dy(t1)/d%s of trajectory 0:", sp->label[j]);
        for (int i = 0; i < n && i < 6; i++) printf(" %.10g", S[(size_t)i * sp->ns + j]);
        printf(n > 6 ? " ...\n" : "\n");
    }
}

/* A DAE's initial values: what the library's Newton iteration changed. */
static void print_init(const sv_ode_builtin *b, const sv_ode_ensemble *e)
{
    int n = sv_ode_problem_n(b->prob), na = sv_ode_problem_nalg(b->prob);
    if (!na) return;
    double worst = 0;
    int wt = 0, wi = 0;
    for (int t = 0; t < e->ntraj; t++)
        for (int i = 0; i < n; i++) {
            double d = fabs(e->y0_out[(size_t)t * n + i] - e->y0[(size_t)t * n + i]);
            if (d > worst) worst = d, wt = t, wi = i;
        }
    if (worst == 0)
        printf("init      %d algebraic equation%s consistent at t0 (nothing changed)\n", na, na == 1 ? "" : "s");
    else
        printf("init      %d algebraic equation%s solved at t0; largest change: y%d of trajectory %d from %.10g to "
               "%.10g\n", na, na == 1 ? "" : "s", wi + 1, wt, e->y0[(size_t)wt * n + wi],
               e->y0_out[(size_t)wt * n + wi]);
}

/* A problem with events: how many, and trajectory 0's first times. */
static void print_events(const sv_ode_ensemble *e)
{
    if (!e->nevents) return;
    long total = 0;
    for (int t = 0; t < e->ntraj; t++) total += e->nevents[t];
    printf("events    %ld (%.1f per trajectory); trajectory 0 at t =", total, (double)total / e->ntraj);
    int shown = e->nevents[0] < e->event_capacity ? e->nevents[0] : e->event_capacity;
    for (int k = 0; k < shown && k < 6; k++) printf(" %.10g", e->event_t[k]);
    printf(e->nevents[0] > 6 ? " ...\n" : "\n");
}

static void print_summary(const ode_args *A, const sv_ode_builtin *b, const sv_ode_options *o,
                          const sv_ode_ensemble *e, double elapsed)
{
    int n = sv_ode_problem_n(b->prob);
    long cnt[SV_ODE_STOPPED + 1] = {0}, acc = 0, rej = 0, nf = 0, nj = 0, nexact = 0, nref = 0;
    for (int t = 0; t < e->ntraj; t++) {
        cnt[e->status[t]]++;
        acc += e->stats[t].accepted;
        rej += e->stats[t].rejected;
        nf += e->stats[t].nf;
        nj += e->stats[t].njac;
        nexact += e->stats[t].nexact;
        nref += e->stats[t].nrefused;
    }
    printf("problem   %s (n = %d, %d Jacobian entries, %d colours)\n", A->name, n, sv_ode_problem_nnz(b->prob),
           sv_ode_problem_ncolors(b->prob));
    printf("method    %s, rtol %g, atol %g%s\n", A->method == SV_ODE_RODAS5P ? "Rodas5P" : "Tsit5", o->rtol, o->atol,
           A->method == SV_ODE_RODAS5P ? (A->lu == SV_ODE_LU_SINGLE ? ", single-precision LU refined" : ", double LU")
                                       : "");
    printf("trajectories %ld: %ld succeeded", A->ntraj, cnt[SV_ODE_SUCCESS]);
    for (int k = 1; k <= SV_ODE_STOPPED; k++)
        if (cnt[k]) printf(", %ld %s", cnt[k], sv_ode_traj_status_string((sv_ode_traj_status)k));
    printf("\nsteps     %ld accepted, %ld rejected (%.1f per trajectory); %ld f evaluations, %ld Jacobians\n", acc,
           rej, (double)(acc + rej) / A->ntraj, nf, nj);
    if (nexact || nref)
        printf("fallbacks %ld factorisations in double-double (M numerically singular), %ld refused attempts\n",
               nexact, nref);
    print_init(b, e);
    print_events(e);
    printf("time      %.3f s (%.3g ms per trajectory)\n", elapsed, 1e3 * elapsed / A->ntraj);
    printf("y(t1) of trajectory 0:");
    for (int i = 0; i < n && i < 6; i++) printf(" %.10g", e->out[((size_t)A->nsave - 1) * n + i]);
    printf(n > 6 ? " ...\n" : "\n");
}

/* 0 when every trajectory succeeded, else 1 with the first failure named. */
static int report_failures(const sv_ode_ensemble *e)
{
    long failed = 0;
    for (int t = 0; t < e->ntraj; t++) failed += e->status[t] != SV_ODE_SUCCESS;
    if (!failed) return 0;
    for (int t = 0; t < e->ntraj; t++)
        if (e->status[t] != SV_ODE_SUCCESS) {
            fprintf(stderr, "solvent ode: %ld of %d trajectories failed; first: trajectory %d: %s at t = %g\n", failed,
                    e->ntraj, t, sv_ode_traj_status_string(e->status[t]), e->stats[t].t_reached);
            break;
        }
    return 1;
}

int cmd_ode_main(int argc, char **argv)
{
    ode_args A;
    int rc = parse_args(argc, argv, &A);
    if (rc >= 0) return rc;
    sv_ode_builtin *b = NULL;
    if (sv_ode_builtin_create(NULL, A.name, A.arg, A.jac, &b) != SV_OK) {
        fprintf(stderr, "solvent ode: %s\n", sv_last_error());
        return sv_last_status() == SV_ERR_ARG ? 2 : 1;
    }
    int n = sv_ode_problem_n(b->prob), np = sv_ode_problem_nparams(b->prob);
    double tend = isnan(A.t1) ? b->t1 : A.t1;
    sens_spec sp = {0};
    if (!(tend > b->t0) || (A.sens && !parse_sens(A.sens, n, np, &sp))) {
        if (!(tend > b->t0)) fprintf(stderr, "solvent ode: --t1 %g: expected > t0 = %g\n", tend, b->t0);
        sv_ode_builtin_destroy(b);
        return 2;
    }
    rc = 1;
    size_t N = (size_t)A.ntraj, ns = (size_t)sp.ns;
    double *ts = malloc(sizeof(double) * (size_t)A.nsave);
    double *y0 = malloc(sizeof(double) * N * n), *p = malloc(sizeof(double) * N * (np ? np : 1));
    double *out = malloc(sizeof(double) * N * (size_t)A.nsave * n);
    double *sout = ns ? malloc(sizeof(double) * N * (size_t)A.nsave * n * ns) : NULL;
    double *s0 = ns ? malloc(sizeof(double) * N * n * ns) : NULL;
    sv_ode_traj_status *st = malloc(sizeof *st * N);
    sv_ode_stats *stats = malloc(sizeof *stats * N);
    double *y0_out = malloc(sizeof(double) * N * n);
    /* a problem with events: the first EVENTS_SHOWN times of each trajectory and the counts */
    enum { EVENTS_SHOWN = 8 };
    const size_t ncap = b->events ? EVENTS_SHOWN : 0;
    double *ev_t = ncap ? malloc(sizeof(double) * N * ncap) : NULL;
    int *ev_which = ncap ? malloc(sizeof(int) * N * ncap) : NULL, *nev = ncap ? malloc(sizeof(int) * N) : NULL;
    sv_ctx *ctx = NULL;
    sv_ode_problem *P = b->prob, *Psens = NULL;
    if (!ts || !y0 || !y0_out || !p || !out || !st || !stats || (ns && (!sout || !s0)) ||
        (ncap && (!ev_t || !ev_which || !nev)) || sv_ctx_create(&ctx) != SV_OK) {
        fprintf(stderr, "solvent ode: out of memory for %ld trajectories × %ld saves × %d values\n", A.ntraj,
                A.nsave, n);
        goto done;
    }
    if (tool_memory_limit(0)) sv_ctx_set_memory_limit(ctx, tool_memory_limit(0)); /* ulimit -v's room */
    if (ns && sv_ode_problem_with_sens(ctx, b->prob, sp.nparams, sp.param, sp.ny0, sp.y0, &Psens) != SV_OK) {
        fprintf(stderr, "solvent ode: --sens: %s\n", sv_last_error());
        goto done;
    }
    if (Psens) P = Psens;
    fill_ensemble(&A, b, tend, ts, y0, p);
    if (ns) fill_sens0(&sp, n, N, p, !strcmp(A.name, "eb50"), s0);
    sv_ode_options o = make_options(&A, b);
    if (A.threads) sv_ctx_set_threads(ctx, (int)A.threads);
    sv_ctx_set_progress(ctx, !A.quiet && isatty(2) ? progress_bar : tool_progress_quietly, NULL);
    sv_ode_ensemble e = {.ntraj = (int)A.ntraj, .t0 = b->t0, .nsave = (int)A.nsave, .tsave = ts, .y0 = y0,
                         .params = np ? p : NULL, .out = out, .status = st, .stats = stats, .sens_out = sout,
                         .sens0 = s0, .y0_out = y0_out, .event_capacity = (int)ncap, .event_t = ev_t,
                         .event_which = ev_which, .nevents = nev};
    double t0 = sv_time_now();
    sv_status s = sv_ode_solve(ctx, P, &o, &e);
    double el = sv_time_now() - t0;
    if (s == SV_ERR_CANCELLED && tool_interrupted()) {
        fprintf(stderr, "\nsolvent ode: interrupted: nothing written\n");
        rc = TOOL_EXIT_INTERRUPTED;
        goto done;
    }
    if (s != SV_OK) {
        fprintf(stderr, "solvent ode: %s: %s\n", sv_status_string(s), sv_last_error());
        if (s == SV_ERR_ARG) rc = 2; /* options the library refuses are bad arguments, as --help says */
        goto done;
    }
    if (!A.quiet) print_summary(&A, b, &o, &e, el);
    if (!A.quiet && ns) print_sens(&sp, n, &e);
    if (A.outpath && !write_csv(A.outpath, (int)A.ntraj, (int)A.nsave, n, b->t0, ts, out, st, &sp, sout)) goto done;
    rc = report_failures(&e);
done:
    free(ts), free(y0), free(y0_out), free(p), free(out), free(st), free(stats), free(sout), free(s0);
    free(ev_t), free(ev_which), free(nev);
    sv_ode_problem_destroy(Psens);
    sv_ctx_destroy(ctx);
    sv_ode_builtin_destroy(b);
    return rc;
}
