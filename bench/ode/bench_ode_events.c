/* bench_ode's events case (issue 39): what the event machinery costs an
 * ensemble that has events but rarely fires them. The Robertson ensemble
 * of the rober case (10 000 trajectories, rates ±10 %, t to 1e5, Rodas5P at
 * rtol 1e-6, the fused step's lanes, f batched) solved with two event
 * functions, batched as f is —
 * y1 falling through 1/2 (recorded, once per trajectory, around t ≈ 10²)
 * and y3 rising through 2 (never) — against the same ensemble without
 * events, in the same process: `ratio` = with / without in wall time and
 * `cpu_ratio` in CPU time (steadier on a shared machine), medians of
 * SV_BENCH_REPS (5) runs each, interleaved so that both see the same load.
 * The outputs must agree bit for bit (events that only record do not
 * change the steps), which the line reports as `same_bits`. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_ode.h"

static int rober_events(double t, const double *y, const double *p, double *g, void *u)
{
    (void)t, (void)p, (void)u;
    g[0] = y[0] - 0.5;
    g[1] = y[2] - 2.0;
    return 0;
}

/* The same over W lanes, as the rober built-in's f is given (slot-major). */
static int rober_events_batch(int W, const double *t, const double *y, const double *p, double *g, void *u)
{
    (void)t, (void)p, (void)u;
    for (int w = 0; w < W; w++) {
        g[w] = y[w] - 0.5;
        g[W + w] = y[2 * W + w] - 2.0;
    }
    return 0;
}

/* One solve of the ensemble, with events or not; its wall time, and its
 * CPU time in *cpu. */
static double solve_once(const sv_ode_builtin *b, const sv_ode_ensemble *base, const sv_ode_events *ev,
                         int nthreads, double *out, int *nevents, double *et, int *ew, int *failures, double *cpu)
{
    sv_ctx *ctx;
    sv_ctx_create(&ctx);
    sv_ctx_set_threads(ctx, nthreads);
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = 1e-6;
    o.atol = 1e-8;
    o.first_step = 1e-4;
    o.events = ev;
    sv_ode_ensemble e = *base;
    e.out = out;
    if (ev) {
        e.nevents = nevents;
        e.event_capacity = 2;
        e.event_t = et;
        e.event_which = ew;
    }
    double t0 = sv_time_now(), c0 = cpu_now();
    sv_status st = sv_ode_solve(ctx, b->prob, &o, &e);
    double dt = sv_time_now() - t0;
    *cpu = cpu_now() - c0;
    if (st != SV_OK) fprintf(stderr, "bench_ode events: %s\n", sv_last_error());
    *failures = 0;
    for (int t = 0; t < e.ntraj; t++) *failures += e.status[t] != SV_ODE_SUCCESS;
    sv_ctx_destroy(ctx);
    return dt;
}

void bench_ode_events(int nthreads)
{
    enum { NT = 10000, NS = 5 };
    sv_ode_builtin *b = NULL;
    if (sv_ode_builtin_create(NULL, "rober", 0, SV_ODE_JAC_ANALYTIC, &b) != SV_OK) return;
    static const double ts[NS] = {0, 1e-6, 1e-2, 1e2, 1e5}, y0[3] = {0.9 * 0.99, 0.1, 0.9 * 0.01};
    static const double base[3] = {0.04, 1e4, 3e7};
    double *p = malloc(sizeof(double) * 3 * NT), *a = malloc(sizeof(double) * NT * NS * 3),
           *c = malloc(sizeof(double) * NT * NS * 3), *et = malloc(sizeof(double) * 2 * NT);
    int *ne = malloc(sizeof(int) * NT), *ew = malloc(sizeof(int) * 2 * NT);
    sv_ode_traj_status *st = malloc(sizeof *st * NT);
    unsigned long long rs = 12345; /* the rober case's parameters */
    for (int t = 0; t < NT; t++)
        for (int k = 0; k < 3; k++) {
            rs = rs * 6364136223846793005ULL + 1442695040888963407ULL;
            p[3 * t + k] = base[k] * (1 + 0.1 * (((rs >> 11) * 0x1.0p-53) * 2 - 1));
        }
    sv_ode_ensemble e = {.ntraj = NT, .nsave = NS, .tsave = ts, .y0 = y0, .y0_shared = 1, .params = p, .status = st};
    sv_ode_events ev = {.m = 2, .g = rober_events, .g_batch = rober_events_batch};
    int reps = bench_reps(5), fa = 0, fc = 0;
    if (reps > 16) reps = 16;
    double with[16], without[16], cwith[16], cwithout[16];
    for (int r = 0; r < reps; r++) { /* alternating which goes first: neither always follows the other */
        if (r % 2) with[r] = solve_once(b, &e, &ev, nthreads, c, ne, et, ew, &fc, &cwith[r]);
        without[r] = solve_once(b, &e, NULL, nthreads, a, NULL, NULL, NULL, &fa, &cwithout[r]);
        if (!(r % 2)) with[r] = solve_once(b, &e, &ev, nthreads, c, ne, et, ew, &fc, &cwith[r]);
    }
    long fired = 0;
    for (int t = 0; t < NT; t++) fired += ne[t];
    double ours = bench_median(with, reps), anc = bench_median(without, reps);
    bench_json j;
    bench_json_head(&j, "ode", "rober_ens10000_events", ours, "Solvent without events", anc);
    double ours_cpu = bench_median(cwith, reps), anc_cpu = bench_median(cwithout, reps);
    bench_json_num(&j, "ours_cpu_s", ours_cpu);
    bench_json_num(&j, "anchor_cpu_s", anc_cpu);
    bench_json_num(&j, "cpu_ratio", ours_cpu / anc_cpu);
    bench_json_int(&j, "ntraj", NT);
    bench_json_int(&j, "threads", nthreads);
    bench_json_int(&j, "events_fired", fired);
    bench_json_int(&j, "same_bits", memcmp(a, c, sizeof(double) * NT * NS * 3) == 0);
    bench_json_int(&j, "failures", fc);
    bench_json_int(&j, "anchor_failures", fa);
    bench_json_end(&j);
    free(p), free(a), free(c), free(et), free(ne), free(ew), free(st);
    sv_ode_builtin_destroy(b);
}
