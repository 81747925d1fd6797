/* bench_ode's invariant cases (ode.h's ninvariants): what declaring a
 * conserved combination buys and costs.
 *
 * e5_invariant: the stiff test set's E5 (e5.f, four equations, y2 − y3 −
 * y4 = 0 declared; Rodas5P, analytic Jacobian, atol 1e-24) at rtol 1e-6,
 * 1e-8 and 1e-10, one line each: its scd in y2 and y3 against the test
 * set's reference and its time, against the same problem without the
 * declaration (the anchor: time and scd), medians of SV_BENCH_REPS (5).
 *
 * rober_ens10000_invariant: the Robertson ensemble of the rober case
 * (10 000 trajectories, rates ±10 %, t to 1e5, rtol 1e-6, f batched, the
 * fused step's lanes) with y1 + y2 + y3 = 1 declared against the same
 * ensemble without it, in the same process, interleaved; `ratio` = with /
 * without (wall), `cpu_ratio` the same in CPU time, the steps each took
 * (all trajectories) and the largest difference of their outputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_ode.h"

/* ---- E5 ---------------------------------------------------------------- */
static const double E5_P[4] = {7.89e-10, 1.1e7, 1.13e9, 1.13e3};
static const double BARI_E5_Y2 = 0.8867655517642120e-22, BARI_E5_Y3 = 0.8854814626268838e-22;

static int e5_f(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)t, (void)u;
    double prod1 = p[0] * y[0], prod2 = p[1] * y[0] * y[2], prod3 = p[2] * y[1] * y[2], prod4 = p[3] * y[3];
    dy[0] = -prod1 - prod2;
    dy[1] = prod1 - prod3;
    dy[3] = prod2 - prod4;
    dy[2] = dy[1] - dy[3];
    return 0;
}
static int e5_jac(double t, const double *y, const double *p, double *J, double *dfdt, void *u)
{
    (void)t, (void)u, (void)dfdt;
    const double A = p[0], B = p[1], CM = p[2], C = p[3];
    const double r1[4] = {-A - B * y[2], 0, -B * y[0], 0}, r2[4] = {A, -CM * y[2], -CM * y[1], 0},
                 r4[4] = {B * y[2], 0, B * y[0], -C};
    for (int j = 0; j < 4; j++) J[j] = r1[j], J[4 + j] = r2[j], J[8 + j] = r2[j] - r4[j], J[12 + j] = r4[j];
    return 0;
}

/* One E5 solve: its time, scd in *scd. */
static double e5_once(const sv_ode_problem *P, double rtol, double *scd)
{
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = rtol;
    o.atol = 1e-24;
    o.max_steps = 200000;
    const double y0[4] = {1.76e-3, 0, 0, 0}, tend = 1e13;
    double y[4];
    sv_ode_traj_status st;
    sv_ode_ensemble e = {.ntraj = 1, .nsave = 1, .tsave = &tend, .y0 = y0, .y0_shared = 1, .params = E5_P,
                         .params_shared = 1, .out = y, .status = &st};
    double t0 = sv_time_now();
    sv_status s = sv_ode_solve(NULL, P, &o, &e);
    double dt = sv_time_now() - t0;
    double err = fmax(fabs(y[1] - BARI_E5_Y2) / BARI_E5_Y2, fabs(y[2] - BARI_E5_Y3) / BARI_E5_Y3);
    *scd = s == SV_OK && st == SV_ODE_SUCCESS ? -log10(err) : NAN;
    return dt;
}

static void bench_e5(void)
{
    static const double inv[4] = {0, 1, -1, -1};
    sv_ode_problem *P[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        sv_ode_problem_desc d = {.name = "e5", .n = 4, .nparams = 4, .f = e5_f, .jac = e5_jac,
                                 .ninvariants = k, .invariants = inv};
        if (sv_ode_problem_create(NULL, &d, &P[k]) != SV_OK) return;
    }
    int reps = bench_reps(5);
    if (reps > 16) reps = 16;
    for (int e = 6; e <= 10; e += 2) {
        double rtol = pow(10.0, -e), tw[16], to[16], scd[2] = {0, 0};
        for (int r = 0; r < reps; r++) {
            tw[r] = e5_once(P[1], rtol, &scd[1]);
            to[r] = e5_once(P[0], rtol, &scd[0]);
        }
        char name[64];
        snprintf(name, sizeof name, "e5_invariant_rtol1e-%d", e);
        bench_json j;
        bench_json_head(&j, "ode", name, bench_median(tw, reps), "Solvent without the invariant declared",
                        bench_median(to, reps));
        bench_json_num(&j, "scd", scd[1]);
        bench_json_num(&j, "anchor_scd", scd[0]);
        bench_json_num(&j, "rtol", rtol);
        bench_json_end(&j);
    }
    sv_ode_problem_destroy(P[0]);
    sv_ode_problem_destroy(P[1]);
}

/* ---- Robertson ensemble ------------------------------------------------ */
static int rober_f(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)t, (void)u;
    double a = p[0] * y[0], b = p[1] * y[1] * y[2], c = p[2] * y[1] * y[1];
    dy[0] = -a + b;
    dy[1] = a - b - c;
    dy[2] = c;
    return 0;
}
static int rober_fb(int W, const double *t, const double *y, const double *p, double *dy, void *u)
{
    (void)t, (void)u;
    for (int w = 0; w < W; w++) {
        double a = p[w] * y[w], b = p[W + w] * y[W + w] * y[2 * W + w], c = p[2 * W + w] * y[W + w] * y[W + w];
        dy[w] = -a + b;
        dy[W + w] = a - b - c;
        dy[2 * W + w] = c;
    }
    return 0;
}
static int rober_jac(double t, const double *y, const double *p, double *J, double *dfdt, void *u)
{
    (void)t, (void)u, (void)dfdt;
    const double v[9] = {-p[0], p[1] * y[2], p[1] * y[1], p[0], -p[1] * y[2] - 2 * p[2] * y[1], -p[1] * y[1],
                         0,     2 * p[2] * y[1], 0};
    memcpy(J, v, sizeof v);
    return 0;
}

static double rober_once(const sv_ode_problem *P, const sv_ode_ensemble *base, int nthreads, double *out,
                         double *cpu, int *failures, long *steps)
{
    sv_ctx *ctx;
    sv_ctx_create(&ctx);
    sv_ctx_set_threads(ctx, nthreads);
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = 1e-6;
    o.atol = 1e-8;
    o.first_step = 1e-4;
    sv_ode_ensemble e = *base;
    e.out = out;
    double t0 = sv_time_now(), c0 = cpu_now();
    sv_status st = sv_ode_solve(ctx, P, &o, &e);
    double dt = sv_time_now() - t0;
    *cpu = cpu_now() - c0;
    if (st != SV_OK) fprintf(stderr, "bench_ode invariants: %s\n", sv_last_error());
    *failures = 0;
    *steps = 0;
    for (int t = 0; t < e.ntraj; t++) {
        *failures += e.status[t] != SV_ODE_SUCCESS;
        *steps += e.stats[t].accepted + e.stats[t].rejected;
    }
    sv_ctx_destroy(ctx);
    return dt;
}

static void bench_rober(int nthreads)
{
    enum { NT = 10000, NS = 5 };
    static const double inv[3] = {1, 1, 1};
    sv_ode_problem *P[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        sv_ode_problem_desc d = {.name = "rober", .n = 3, .nparams = 3, .f = rober_f, .f_batch = rober_fb,
                                 .jac = rober_jac, .ninvariants = k, .invariants = inv};
        if (sv_ode_problem_create(NULL, &d, &P[k]) != SV_OK) return;
    }
    static const double ts[NS] = {0, 1e-6, 1e-2, 1e2, 1e5}, y0[3] = {0.9 * 0.99, 0.1, 0.9 * 0.01};
    static const double base[3] = {0.04, 1e4, 3e7};
    double *p = malloc(sizeof(double) * 3 * NT), *a = malloc(sizeof(double) * NT * NS * 3),
           *c = malloc(sizeof(double) * NT * NS * 3);
    sv_ode_traj_status *st = malloc(sizeof *st * NT);
    sv_ode_stats *stats = malloc(sizeof *stats * NT);
    unsigned long long rs = 12345; /* the rober case's parameters */
    for (int t = 0; t < NT; t++)
        for (int k = 0; k < 3; k++) {
            rs = rs * 6364136223846793005ULL + 1442695040888963407ULL;
            p[3 * t + k] = base[k] * (1 + 0.1 * (((rs >> 11) * 0x1.0p-53) * 2 - 1));
        }
    sv_ode_ensemble e = {.ntraj = NT, .nsave = NS, .tsave = ts, .y0 = y0, .y0_shared = 1, .params = p, .status = st,
                         .stats = stats};
    int reps = bench_reps(5), fa = 0, fc = 0;
    long sa = 0, sc = 0;
    if (reps > 16) reps = 16;
    double with[16], without[16], cwith[16], cwithout[16];
    for (int r = 0; r < reps; r++) { /* alternating which goes first */
        if (r % 2) with[r] = rober_once(P[1], &e, nthreads, c, &cwith[r], &fc, &sc);
        without[r] = rober_once(P[0], &e, nthreads, a, &cwithout[r], &fa, &sa);
        if (!(r % 2)) with[r] = rober_once(P[1], &e, nthreads, c, &cwith[r], &fc, &sc);
    }
    double maxdiff = 0;
    for (long q = 0; q < (long)NT * NS * 3; q++) maxdiff = fmax(maxdiff, fabs(a[q] - c[q]));
    double ours = bench_median(with, reps), anc = bench_median(without, reps);
    bench_json j;
    bench_json_head(&j, "ode", "rober_ens10000_invariant", ours, "Solvent without the invariant declared", anc);
    double oc = bench_median(cwith, reps), ac = bench_median(cwithout, reps);
    bench_json_num(&j, "ours_cpu_s", oc);
    bench_json_num(&j, "anchor_cpu_s", ac);
    bench_json_num(&j, "cpu_ratio", oc / ac);
    bench_json_int(&j, "ntraj", NT);
    bench_json_int(&j, "threads", nthreads);
    bench_json_num(&j, "max_abs_diff", maxdiff);
    bench_json_int(&j, "steps", sc);
    bench_json_int(&j, "anchor_steps", sa);
    bench_json_int(&j, "failures", fc);
    bench_json_int(&j, "anchor_failures", fa);
    bench_json_end(&j);
    free(p), free(a), free(c), free(st), free(stats);
    sv_ode_problem_destroy(P[0]);
    sv_ode_problem_destroy(P[1]);
}

void bench_ode_invariants(int nthreads)
{
    bench_e5();
    bench_rober(nthreads);
}
