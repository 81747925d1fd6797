/* Allocation-failure injection in SQLite's way: a pattern analysis, an ODE
 * ensemble, a direct solve, a port calibration and a sweep are run once to
 * count their allocations through the core allocator, then again for every
 * k with the k-th allocation failing (a test build:
 * SOLVENT_FAULT_INJECTION). Each run must either return SV_ERR_NOMEM or
 * SV_ERR_BUDGET with a message and leave no result behind, or handle the
 * failure and return the clean run's result; and every run gives back all
 * the memory it took (the context's count returns to zero;
 * AddressSanitizer checks what is not counted).
 * One thread each, so that the k-th allocation is the same one every run.
 *
 * A model with thick metal's tall walls chooses their shares at creation
 * (dense Ritz solves): its own campaign, creation to a direct solve.
 *
 * An EM model's assembly is the costly part of a run (its closed forms):
 * the direct solve's campaigns build a whole model every run; the
 * calibration's (whose standards are models of their own) and the sweep's
 * run on one model built beforehand under a context of its own (the
 * circuit's assembly sites are the solve campaigns'). */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solvent/em.h"
#include "solvent/ode.h"
#include "solvent/sparse.h"
#include "solvent/sweep.h"
#include "solvent/planar.h"
#include "sv_test.h"

/* The test hook of src/core/alloc.c (built with SV_FAULT_INJECTION). */
void sv_fault_inject(long k);
long sv_fault_calls(void);

#define DIGEST_MAX 64

typedef struct outcome {
    double digest[DIGEST_MAX]; /* numbers that identify the result */
    int nd;
} outcome;

typedef sv_status (*scenario_fn)(sv_ctx *ctx, outcome *o);

/* ---- the scenarios ------------------------------------------------------------ */
/* A 5-point Laplacian on a 10 × 10 grid: pattern, LU analysis, colouring. */
static sv_status run_pattern(sv_ctx *ctx, outcome *o)
{
    enum { G = 10, N = G * G };
    int rp[N + 1], ci[5 * N], e = 0;
    for (int i = 0; i < N; i++) {
        rp[i] = e;
        int r = i / G, c = i % G;
        if (r > 0) ci[e++] = i - G;
        if (c > 0) ci[e++] = i - 1;
        ci[e++] = i;
        if (c < G - 1) ci[e++] = i + 1;
        if (r < G - 1) ci[e++] = i + G;
    }
    rp[N] = e;
    sv_sparse_pattern *p = (sv_sparse_pattern *)&p;
    sv_sparse_lu *lu = (sv_sparse_lu *)&lu;
    sv_sparse_coloring *col = (sv_sparse_coloring *)&col;
    sv_status st = sv_sparse_pattern_from_csr(ctx, N, rp, ci, &p);
    if (st) {
        assert_null(p); /* nothing left behind */
        return st;
    }
    st = sv_sparse_lu_analyse(ctx, p, SV_SPARSE_ORDER_AMD, &lu);
    if (st == SV_OK) {
        st = sv_sparse_color(ctx, p, &col);
        if (st == SV_OK) {
            o->digest[o->nd++] = sv_sparse_lu_nnz(lu);
            o->digest[o->nd++] = (double)sv_sparse_lu_updates(lu);
            o->digest[o->nd++] = sv_sparse_coloring_count(col);
            sv_sparse_coloring_destroy(col);
        } else {
            assert_null(col);
        }
        sv_sparse_lu_destroy(lu);
    } else {
        assert_null(lu);
    }
    sv_sparse_pattern_destroy(p);
    return st;
}

/* Eight trajectories of the 4 × 4 Brusselator (sparse LU) with Rodas5P. */
static sv_status run_ode(sv_ctx *ctx, outcome *o)
{
    sv_ode_builtin *b = (sv_ode_builtin *)&b;
    sv_status st = sv_ode_builtin_create(ctx, "bruss2d", 4, SV_ODE_JAC_ANALYTIC, &b);
    if (st) {
        assert_null(b);
        return st;
    }
    enum { T = 8, S = 2 };
    int n = sv_ode_problem_n(b->prob), np = sv_ode_problem_nparams(b->prob);
    double ts[S] = {b->t0 + 0.5 * (b->t1 - b->t0), b->t1}, out[T * S * 64];
    assert_true(n <= 64);
    sv_ode_traj_status status[T];
    sv_ode_options opt;
    sv_ode_options_default(&opt);
    opt.rtol = 1e-6;
    opt.atol = 1e-8;
    sv_ode_ensemble e = {.ntraj = T, .t0 = b->t0, .nsave = S, .tsave = ts, .y0 = b->y0, .y0_shared = 1,
                         .params = np ? b->params : NULL, .params_shared = 1, .out = out, .status = status};
    st = sv_ode_solve(ctx, b->prob, &opt, &e);
    if (st == SV_OK)
        for (int t = 0; t < T; t++) {
            o->digest[o->nd++] = status[t];
            o->digest[o->nd++] = out[((size_t)t * S + S - 1) * n];
        }
    sv_ode_builtin_destroy(b);
    return st;
}

/* HIRES (8 states, sparse) with single-precision LU, refined, and the
 * complex-step Jacobian. */
static sv_status run_ode_single(sv_ctx *ctx, outcome *o)
{
    sv_ode_builtin *b = (sv_ode_builtin *)&b;
    sv_status st = sv_ode_builtin_create(ctx, "hires", 0, SV_ODE_JAC_COMPLEX_STEP, &b);
    if (st) {
        assert_null(b);
        return st;
    }
    enum { T = 4 };
    int n = sv_ode_problem_n(b->prob), np = sv_ode_problem_nparams(b->prob);
    double out[T * 16];
    assert_true(n <= 16);
    sv_ode_options opt;
    sv_ode_options_default(&opt);
    opt.lu = SV_ODE_LU_SINGLE;
    opt.rtol = b->rtol;
    opt.atol = b->atol;
    sv_ode_ensemble e = {.ntraj = T, .t0 = b->t0, .nsave = 1, .tsave = &b->t1, .y0 = b->y0, .y0_shared = 1,
                         .params = np ? b->params : NULL, .params_shared = 1, .out = out};
    st = sv_ode_solve(ctx, b->prob, &opt, &e);
    if (st == SV_OK)
        for (int t = 0; t < T; t++) o->digest[o->nd++] = out[(size_t)t * n];
    sv_ode_builtin_destroy(b);
    return st;
}

/* A Matrix Market pattern file: read, analysed in the natural order, coloured. */
static sv_status run_pattern_file(sv_ctx *ctx, outcome *o)
{
    sv_sparse_pattern *p = (sv_sparse_pattern *)&p;
    sv_sparse_lu *lu = (sv_sparse_lu *)&lu;
    sv_sparse_coloring *col = (sv_sparse_coloring *)&col;
    sv_status st = sv_sparse_pattern_read_mm(ctx, SV_SOURCE_DIR "/examples/patterns/pollu.mtx", &p);
    if (st) {
        assert_null(p);
        return st;
    }
    st = sv_sparse_lu_analyse(ctx, p, SV_SPARSE_ORDER_NATURAL, &lu);
    if (st == SV_OK) {
        sv_sparse_color_options co;
        sv_sparse_color_options_default(&co);
        co.add_diagonal = 1;
        st = sv_sparse_color_csr(ctx, sv_sparse_pattern_n(p), sv_sparse_pattern_rowptr(p),
                                 sv_sparse_pattern_colind(p), &co, &col);
        if (st == SV_OK) {
            o->digest[o->nd++] = sv_sparse_lu_nnz(lu);
            o->digest[o->nd++] = sv_sparse_coloring_count(col);
            sv_sparse_coloring_destroy(col);
        } else {
            assert_null(col);
        }
        sv_sparse_lu_destroy(lu);
    } else {
        assert_null(lu);
    }
    sv_sparse_pattern_destroy(p);
    return st;
}

/* A small lossy three-port project and the switch setter (tests/em/support_em.c). */
extern const char em_test_lossy_project[];
char *em_test_with_effect(const char *json, const char *entry);

typedef struct em_case {
    sv_em_project *p;
    sv_em_model *m;
    sv_em_affine *a;
} em_case;

/* The project text (0: as it is; 1: with effects.dispersion on as well). */
static int em_dispersion = 0;

/* The project, its model and affine model from a project text; on a
 * failure nothing of the failed step is left behind. */
static sv_status em_open_text(sv_ctx *ctx, const char *text, em_case *c)
{
    *c = (em_case){0};
    sv_status st = sv_em_project_parse(ctx, text, strlen(text), "fault", &c->p);
    if (st) return assert_null(c->p), st;
    st = sv_em_model_create(ctx, c->p, NULL, &c->m);
    if (st) return assert_null(c->m), st;
    st = sv_em_affine_create(ctx, c->m, &c->a);
    if (st) assert_null(c->a);
    return st;
}

/* The lossy three-port (with dispersion as em_dispersion says). */
static sv_status em_open(sv_ctx *ctx, em_case *c)
{
    char *text = em_test_with_effect(em_test_lossy_project, em_dispersion ? "\"dispersion\": true" : "\"dispersion\": false");
    sv_status st = em_open_text(ctx, text, c);
    free(text);
    return st;
}

static void em_close(em_case *c)
{
    sv_em_affine_destroy(c->a);
    sv_em_model_destroy(c->m);
    sv_em_project_destroy(c->p);
}

static void digest_complex(outcome *o, const double complex *v, int count)
{
    for (int k = 0; k < count && o->nd + 2 <= DIGEST_MAX; k++) {
        o->digest[o->nd++] = creal(v[k]);
        o->digest[o->nd++] = cimag(v[k]);
    }
}

/* The direct solve of an opened case (np ≤ 3 ports) at one frequency, and
 * S from Y. */
static sv_status solve_s(sv_ctx *ctx, const em_case *c, int np, outcome *o)
{
    double complex y[9], s[9];
    double z0[3] = {50, 50, 50};
    sv_status st = sv_em_solve(ctx, c->a, 2.5e9, y);
    if (st == SV_OK) st = sv_em_y_to_s(np, y, z0, s);
    if (st == SV_OK) digest_complex(o, s, np * np);
    return st;
}

/* The lossy three-port's direct solve. */
static sv_status run_solve(sv_ctx *ctx, outcome *o)
{
    em_case c;
    sv_status st = em_open(ctx, &c);
    if (st == SV_OK) st = solve_s(ctx, &c, 3, o);
    em_close(&c);
    return st;
}

/* The thru calibration of the ports (the standards' models, tables and
 * solves), applied to the direct solve's Y at one frequency, on a two-port
 * whose ports share one feed (the lossy three-port has three feeds: some
 * 1 400 allocations, nine minutes under the sanitizers). */
static const char calibration_project[] =
    "{\"units\": \"mm\", \"substrate\": {\"thickness\": 0.8, \"eps_r\": 4.4, \"tan_delta\": 0.02},"
    "\"metal\": {\"conductivity\": 5.8e7, \"thickness\": 0.035},"
    "\"grid\": {\"dx\": 0.5, \"dy\": 0.5, \"nx\": 6, \"ny\": 4},"
    "\"pixels\": [\"......\", \"###...\", \"######\", \"......\"],"
    "\"ports\": [{\"name\": \"in\", \"side\": \"left\", \"x\": 0, \"y\": [0.5, 1.0]},"
    "          {\"name\": \"out\", \"side\": \"right\", \"x\": 3, \"y\": [0.5, 1.0]}]}";

/* The circuit the calibration campaign calibrates, built under a context of
 * its own (its model's allocations are the solve campaigns'): each run is
 * the calibration alone (under the sanitizers 29 s instead of 110 s with
 * the circuit rebuilt every run). */
static em_case calibration_model;

static sv_status run_calibration(sv_ctx *ctx, outcome *o)
{
    double f = 2.5e9;
    double complex y[4];
    sv_em_calibration *cal = (sv_em_calibration *)&cal;
    sv_status st = sv_em_solve(ctx, calibration_model.a, f, y);
    if (st == SV_OK) {
        st = sv_em_calibration_create(ctx, calibration_model.m, 1, &f, &cal);
        if (st == SV_OK) {
            st = sv_em_calibration_apply(cal, 0, y);
            if (st == SV_OK) digest_complex(o, y, 4);
            sv_em_calibration_destroy(cal);
        } else {
            assert_null(cal);
        }
    }
    return st;
}

/* Thick metal's wall shares: a model whose walls are a cell tall, so
 * that its creation runs the Ritz steps (their dense matrices, solves and
 * the wall tables). */
static const char tall_walls_project[] =
    "{\"units\": \"mm\", \"effects\": {\"radiation\": false}, \"substrate\": {\"thickness\": 0.8, \"eps_r\": 4.4},"
    "\"metal\": {\"conductivity\": 5.8e7, \"thickness\": 0.5},"
    "\"grid\": {\"dx\": 0.5, \"dy\": 0.5, \"nx\": 6, \"ny\": 3},"
    "\"pixels\": [\"......\", \"######\", \"..##..\"],"
    "\"ports\": [{\"name\": \"in\", \"side\": \"left\", \"x\": 0, \"y\": [0.5, 1.0]},"
    "          {\"name\": \"out\", \"side\": \"right\", \"x\": 3, \"y\": [0.5, 1.0]}]}";

static sv_status run_wall_shares(sv_ctx *ctx, outcome *o)
{
    em_case c;
    sv_status st = em_open_text(ctx, tall_walls_project, &c);
    if (st == SV_OK) st = solve_s(ctx, &c, 2, o);
    em_close(&c);
    return st;
}

/* The model the sweep campaign runs on (built under its own context, so
 * that the campaign's count holds the sweep's memory alone). */
static em_case sweep_model;

/* The adaptive sweep over 7 frequencies. */
static sv_status run_sweep(sv_ctx *ctx, outcome *o)
{
    double f[7];
    for (int i = 0; i < 7; i++) f[i] = 1e9 + 1.5e9 * i;
    sv_sweep_result *r = (sv_sweep_result *)&r;
    sv_status st = sv_sweep_run(ctx, sv_em_affine_model(sweep_model.a), 7, f, NULL, &r);
    if (st == SV_OK) {
        digest_complex(o, r->h, 7 * 9);
        sv_sweep_result_destroy(r);
    } else {
        assert_null(r);
    }
    return st;
}

/* The planar model's sweep across its low-frequency threshold: two
 * loop–tree solves (the graph, its loops, the matrix) and one exact solve
 * of Z(f), merged into one result. */
static sv_status run_low_sweep(sv_ctx *ctx, outcome *o)
{
    const double f[3] = {10, 1e3, 2.5e9};
    sv_sweep_result *r = (sv_sweep_result *)&r;
    sv_status st = sv_em_sweep_run(ctx, sweep_model.a, 3, f, NULL, &r);
    if (st == SV_OK) {
        digest_complex(o, r->h, 3 * 9);
        sv_sweep_result_destroy(r);
    } else {
        assert_null(r);
    }
    return st;
}

/* The planar job on the calibration's two-port with raw ports (the
 * calibration has its own campaign) and without radiation: the project's
 * copy, the frequencies, the mesh, the estimate, the assembly, direct
 * solves at DC and 2.5 GHz, Y, Z and the raw ports' Y. */
static const char job_project[] =
    "{\"units\": \"mm\", \"effects\": {\"radiation\": false},"
    "\"substrate\": {\"thickness\": 0.8, \"eps_r\": 4.4, \"tan_delta\": 0.02},"
    "\"metal\": {\"conductivity\": 5.8e7, \"thickness\": 0.035},"
    "\"grid\": {\"dx\": 0.5, \"dy\": 0.5, \"nx\": 6, \"ny\": 4},"
    "\"pixels\": [\"......\", \"###...\", \"######\", \"......\"],"
    "\"ports\": [{\"name\": \"in\", \"side\": \"left\", \"x\": 0, \"y\": [0.5, 1.0], \"calibration\": \"none\"},"
    "          {\"name\": \"out\", \"side\": \"right\", \"x\": 3, \"y\": [0.5, 1.0], \"calibration\": \"none\"}]}";

static sv_status run_job(sv_ctx *ctx, outcome *o)
{
    const double f[] = {0, 2.5e9};
    sv_planar_options opts = {.freq_hz = f, .nfreq = 2, .exact_all = 1, .precision = SV_SWEEP_DOUBLE,
                              .device = SV_PLANAR_DEVICE_CPU,
                              .outputs = SV_PLANAR_OUTPUT_Y | SV_PLANAR_OUTPUT_Z | SV_PLANAR_OUTPUT_Y_RAW};
    sv_em_project *p = NULL;
    sv_planar_job *job = (sv_planar_job *)&job;
    sv_status st = sv_em_project_parse(ctx, job_project, strlen(job_project), "fault", &p);
    if (st == SV_OK) {
        st = sv_planar_job_create(ctx, p, &opts, &job);
        if (st == SV_OK) {
            st = sv_planar_job_run(job);
            const sv_planar_network *net = sv_planar_job_network(job);
            if (st == SV_OK) {
                digest_complex(o, net->s, 8);
                digest_complex(o, net->y_raw + 4, 4);
            } else {
                assert_null(net);
            }
            sv_planar_job_destroy(job);
        } else {
            assert_null(job);
        }
    }
    sv_em_project_destroy(p);
    return st;
}

/* ---- the campaign -------------------------------------------------------------- */
typedef struct tally {
    long allocations; /* in the clean run: the k values tried */
    long refused;     /* SV_ERR_NOMEM or SV_ERR_BUDGET with a message */
    long handled;     /* SV_OK with the clean run's result */
    long wrong;       /* any other status, a wrong result, or no message */
    long leaks;       /* runs that left bytes counted in the context */
} tally;

static int same_result(const outcome *a, const outcome *b)
{
    if (a->nd != b->nd) return 0;
    for (int i = 0; i < a->nd; i++)
        if (!(fabs(a->digest[i] - b->digest[i]) <= 1e-9 * fmax(1.0, fabs(b->digest[i])))) return 0;
    return 1;
}

static tally campaign(const char *name, scenario_fn run, int threads)
{
    tally t = {0};
    double t0 = sv_time_now();
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    sv_ctx_set_threads(ctx, threads);
    outcome ref = {0};
    sv_fault_inject(0);
    sv_status st = run(ctx, &ref);
    if (st) print_error("%s: the clean run failed: %s\n", name, sv_last_error());
    assert_int_equal(st, SV_OK);
    t.allocations = sv_fault_calls();
    assert_true(t.allocations > 0);
    assert_int_equal(sv_ctx_memory_current(ctx), 0);
    for (long k = 1; k <= t.allocations; k++) {
        outcome got = {0};
        sv_clear_error();
        sv_fault_inject(k);
        st = run(ctx, &got);
        sv_fault_inject(0);
        if (st == SV_ERR_NOMEM || st == SV_ERR_BUDGET) {
            if (sv_last_status() == st && sv_last_error()[0]) {
                t.refused++;
            } else {
                t.wrong++;
                print_error("%s, k = %ld: %s without its message (last: %s)\n", name, k, sv_status_string(st),
                            sv_last_error());
            }
        } else if (st == SV_OK && same_result(&got, &ref)) {
            t.handled++;
        } else {
            t.wrong++;
            print_error("%s, k = %ld: %s: %s\n", name, k, st ? sv_status_string(st) : "a different result",
                        sv_last_error());
        }
        if (sv_ctx_memory_current(ctx) != 0) {
            t.leaks++;
            print_error("%s, k = %ld: %zu bytes still held\n", name, k, sv_ctx_memory_current(ctx));
            sv_ctx_destroy(ctx); /* a fresh count for the next run */
            assert_int_equal(sv_ctx_create(&ctx), SV_OK);
            sv_ctx_set_threads(ctx, threads);
        }
    }
    sv_ctx_destroy(ctx);
    print_message("%-12s %d thread%s %4ld allocations: %4ld refused (NOMEM/BUDGET), %3ld handled, %ld wrong, %ld leaking"
                  " (%.1f s)\n",
                  name, threads, threads == 1 ? " " : "s", t.allocations, t.refused, t.handled, t.wrong, t.leaks,
                  sv_time_now() - t0);
    return t;
}

static void check(tally t)
{
    assert_int_equal(t.wrong, 0);
    assert_int_equal(t.leaks, 0);
    assert_int_equal(t.refused + t.handled, t.allocations);
}

/* A campaign on a model built beforehand under a context of its own
 * (project text, or NULL for the lossy three-port): the runs take nothing
 * from that context, and it is empty once the model is closed. */
static void campaign_on_model(const char *name, scenario_fn run, const char *text, em_case *model)
{
    sv_ctx *model_ctx;
    assert_int_equal(sv_ctx_create(&model_ctx), SV_OK);
    sv_ctx_set_threads(model_ctx, 1);
    assert_int_equal(text ? em_open_text(model_ctx, text, model) : em_open(model_ctx, model), SV_OK);
    size_t model_bytes = sv_ctx_memory_current(model_ctx);
    check(campaign(name, run, 1));
    assert_int_equal(sv_ctx_memory_current(model_ctx), model_bytes);
    em_close(model);
    assert_int_equal(sv_ctx_memory_current(model_ctx), 0);
    sv_ctx_destroy(model_ctx);
}

static void test_pattern_analysis(void **state)
{
    (void)state;
    check(campaign("pattern", run_pattern, 1));
    check(campaign("pattern file", run_pattern_file, 1));
}

static void test_ode_ensemble(void **state)
{
    (void)state;
    check(campaign("ode", run_ode, 1));
    check(campaign("ode single", run_ode_single, 1));
}

/* Two workers: the k-th allocation may fall in either (the order differs
 * from run to run); whichever fails, the solve reports it. */
static void test_ode_ensemble_threads(void **state)
{
    (void)state;
    check(campaign("ode", run_ode, 2));
}

static void test_direct_solve(void **state)
{
    (void)state;
    check(campaign("solve", run_solve, 1));
}

static void test_calibration(void **state)
{
    (void)state;
    campaign_on_model("calibration", run_calibration, calibration_project, &calibration_model);
}

static void test_wall_shares(void **state)
{
    (void)state;
    check(campaign("wall shares", run_wall_shares, 1));
}

static void test_sweep(void **state)
{
    (void)state;
    campaign_on_model("sweep", run_sweep, NULL, &sweep_model);
}

static void test_low_sweep(void **state)
{
    (void)state;
    campaign_on_model("low-frequency sweep", run_low_sweep, NULL, &sweep_model);
}

static void test_planar_job(void **state)
{
    (void)state;
    check(campaign("planar job", run_job, 1));
}

/* The direct solve with dispersion's kernel fit, tables and term. */
static void test_direct_solve_dispersion(void **state)
{
    (void)state;
    em_dispersion = 1;
    check(campaign("solve with dispersion", run_solve, 1));
    em_dispersion = 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pattern_analysis),
        cmocka_unit_test(test_planar_job),
        cmocka_unit_test(test_ode_ensemble),
        cmocka_unit_test(test_ode_ensemble_threads),
        cmocka_unit_test(test_direct_solve),
        cmocka_unit_test(test_calibration),
        cmocka_unit_test(test_wall_shares),
        cmocka_unit_test(test_sweep),
        cmocka_unit_test(test_low_sweep),
        cmocka_unit_test(test_direct_solve_dispersion),
    };
    return cmocka_run_group_tests_name("allocation failures", tests, NULL, NULL);
}
