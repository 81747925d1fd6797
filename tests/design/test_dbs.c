/* DBS on a region small enough to enumerate: the 3 × 3 pixels between the
 * launches of tests/design/data/board.json (512 maps). Every map's cost is
 * computed twice: by the evaluator walking all maps in Gray-code order
 * (one accepted flip each: 511 updates without a rebuild), and by a fresh
 * planar job per map (the independent path); they agree. The exhaustive
 * table then gives the global optimum, and DBS from several starts and
 * seeds must end at a map no single flip improves (a local optimum by the
 * table), with the cost the table gives it. The order of (violations,
 * cost) is DBS's: fewer constraint violations first. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solvent/design.h"
#include "solvent/planar.h"
#include "support_design.h"
#include "sv_test.h"

#define DATA SV_SOURCE_DIR "/tests/design/data"
enum { NX = 11, NY = 5, NMAP = 512 };

static const char *masks =
    "\"masks\": [{\"s\": \"S21\", \"start\": 1, \"stop\": 4, \"bound_db\": -0.5, \"type\": \"min\"},"
    " {\"s\": \"S11\", \"start\": 1, \"stop\": 4, \"bound_db\": -15, \"type\": \"max\"},"
    " {\"s\": \"S21\", \"start\": 12, \"stop\": 16, \"bound_db\": -6, \"type\": \"max\"}], \"frequencies\": {\"points\": 6}";

static sv_design_spec *spec_with(const char *start, int seed)
{
    char text[4096];
    snprintf(text, sizeof text,
             "{\"board\": \"board.json\", \"region\": {\"rectangles\": [{\"columns\": [4, 6], \"rows\": [1, 3]}]}, %s,"
             " \"start\": %s, \"seed\": %d, \"passes\": 10}",
             masks, start, seed);
    sv_design_spec *s = NULL;
    if (sv_design_spec_parse(NULL, text, strlen(text), "dbs.json", DATA, &s)) fail_msg("spec: %s", sv_last_error());
    return s;
}

static int region_cells[9];
static double table_cost[NMAP];
static int table_viol[NMAP];

/* Map index → cells: bit b is region cell region_cells[b]. */
static void map_of(const sv_design_spec *s, int idx, unsigned char *map)
{
    memcpy(map, sv_design_spec_start(s), NX * NY); /* start "metal": the board with the region metal */
    for (int b = 0; b < 9; b++) map[region_cells[b]] = (unsigned char)((idx >> b) & 1);
}

static int index_of(const unsigned char *map)
{
    int idx = 0;
    for (int b = 0; b < 9; b++) idx |= (map[region_cells[b]] ? 1 : 0) << b;
    return idx;
}

static int lex_better(int v, double c, int v0, double c0) { return v < v0 || (v == v0 && c < c0 - 1e-9 * fmax(1, c0)); }

static void build_table(void)
{
    sv_design_spec *s = spec_with("\"metal\"", 1);
    int n = 0;
    for (int c = 0; c < NX * NY; c++)
        if (sv_design_spec_region(s)[c]) region_cells[n++] = c;
    assert_int_equal(n, 9);
    int nf, nm;
    const double *f = sv_design_spec_frequencies(s, &nf);
    const sv_design_mask *m = sv_design_spec_masks(s, &nm);
    sv_design_eval *ev;
    assert_int_equal(sv_design_eval_create(NULL, sv_design_spec_full(s), sv_design_spec_region(s), nf, f, &ev), SV_OK);
    unsigned char map[NX * NY];
    map_of(s, 0, map);
    assert_int_equal(sv_design_eval_set_map(ev, map), SV_OK);
    double complex *sv = malloc(sizeof(double complex) * 4 * nf), *sf = malloc(sizeof(double complex) * 4 * nf);
    double worst = 0, worst_s = 0;
    int idx = 0;
    for (int k = 0; k < NMAP; k++) {
        if (k > 0) { /* Gray code: flip the bit that changes from k − 1 to k */
            int g = k ^ (k >> 1), bit = __builtin_ctz((unsigned)(g ^ idx));
            assert_int_equal(sv_design_eval_accept(ev, 1, &region_cells[bit]), SV_OK);
            idx = g;
        }
        map_of(s, idx, map);
        assert_memory_equal(sv_design_eval_map(ev), map, NX * NY);
        assert_int_equal(sv_design_eval_s(ev, sv), SV_OK);
        double cu, cf;
        assert_int_equal(sv_design_cost(nm, m, nf, f, 2, sv, &cu), SV_OK);
        /* the fresh path: the map as its own project, a planar job solving each frequency exactly */
        sv_em_project *p;
        assert_int_equal(sv_design_spec_project(NULL, s, map, &p), SV_OK);
        design_test_project_s(p, nf, f, sf);
        sv_em_project_destroy(p);
        assert_int_equal(sv_design_cost(nm, m, nf, f, 2, sf, &cf), SV_OK);
        for (int q = 0; q < 4 * nf; q++) worst_s = fmax(worst_s, cabs(sv[q] - sf[q]));
        worst = fmax(worst, fabs(cu - cf));
        table_cost[idx] = cf;
        table_viol[idx] = sv_design_spec_violations(s, map);
    }
    printf("  512 maps: |S_update - S_fresh| <= %.2e, |cost_update - cost_fresh| <= %.2e (dB)\n", worst_s, worst);
    assert_true(worst_s <= 1e-10);
    /* dB magnifies |ΔS| by 8.7/|S|: S agreeing to 1e-10 where |S| is 1e-3 (an open circuit's S21) moves the
     * cost by ~1e-6 dB */
    assert_true(worst <= 1e-6);
    free(sv);
    free(sf);
    sv_design_eval_destroy(ev);
    sv_design_spec_destroy(s);
}

static int is_local_optimum(int idx)
{
    for (int b = 0; b < 9; b++) {
        int n = idx ^ (1 << b);
        if (lex_better(table_viol[n], table_cost[n], table_viol[idx], table_cost[idx])) return 0;
    }
    return 1;
}

/* What a watch sees: each map with the cost and violations the fresh
 * table has for it, costs falling. */
typedef struct watched {
    int calls, last, bad;
    double last_cost;
} watched;

static void watch(const unsigned char *map, double cost, int violations, void *user)
{
    watched *w = user;
    int idx = index_of(map);
    w->bad |= violations != table_viol[idx] || fabs(cost - table_cost[idx]) > 1e-6 ||
              (w->calls > 0 && violations == table_viol[w->last] && cost > w->last_cost);
    w->calls++;
    w->last = idx;
    w->last_cost = cost;
}

static void test_exhaustive_and_dbs(void **state)
{
    (void)state;
    build_table();
    int best = 0, nlocal = 0;
    for (int k = 1; k < NMAP; k++)
        if (lex_better(table_viol[k], table_cost[k], table_viol[best], table_cost[best])) best = k;
    for (int k = 0; k < NMAP; k++) nlocal += is_local_optimum(k);
    printf("  global optimum: map %03x, %d violations, cost %.4f dB; %d local optima\n", best, table_viol[best],
           table_cost[best], nlocal);
    assert_true(is_local_optimum(best));
    const char *starts[] = {"\"metal\"", "{\"random\": {\"seed\": 1, \"fill\": 0.5}}", "{\"random\": {\"seed\": 2, \"fill\": 0.3}}",
                            "{\"random\": {\"seed\": 3, \"fill\": 0.7}}", "{\"random\": {\"seed\": 4, \"fill\": 0.5}}"};
    int reached_global = 0;
    for (int k = 0; k < (int)(sizeof starts / sizeof *starts); k++)
        for (int seed = 1; seed <= 2; seed++) {
            sv_design_spec *s = spec_with(starts[k], seed);
            sv_design_result *r;
            watched w = {0};
            assert_int_equal(sv_design_run_watched(NULL, s, watch, &w, &r), SV_OK);
            sv_design_report rep;
            sv_design_result_report(r, &rep);
            int idx = index_of(sv_design_result_map(r));
            assert_false(w.bad);
            assert_int_equal(w.calls, rep.accepted + 1);
            assert_int_equal(w.last, idx);
            printf("  start %d seed %d: map %03x (cost %.4f, %d violations) after %ld trials, %ld kept, %d passes\n", k,
                   seed, idx, rep.cost, rep.violations, rep.tried, rep.accepted, rep.passes);
            assert_true(is_local_optimum(idx));
            assert_int_equal(rep.violations, table_viol[idx]);
            assert_true(fabs(rep.cost - table_cost[idx]) <= 1e-6);
            assert_int_equal(rep.stopped, 0);
            reached_global += idx == best;
            /* the cost history: the start and one entry per kept flip, ending at the result */
            int nh;
            const double *h = sv_design_result_history(r, &nh);
            assert_true(nh == rep.accepted + 1);
            assert_true(fabs(h[2 * (nh - 1) + 1] - rep.cost) <= 1e-6);
            sv_design_result_destroy(r);
            sv_design_spec_destroy(s);
        }
    printf("  %d of 10 runs reached the global optimum\n", reached_global);
}

/* The same spec and seed give the same map on one thread and on two. */
static void test_threads_reproducible(void **state)
{
    (void)state;
    sv_design_spec *s = spec_with("{\"random\": {\"seed\": 5, \"fill\": 0.5}}", 3);
    unsigned char maps[2][NX * NY];
    double costs[2];
    for (int t = 0; t < 2; t++) {
        sv_ctx *ctx;
        assert_int_equal(sv_ctx_create(&ctx), SV_OK);
        sv_ctx_set_threads(ctx, t + 1);
        sv_design_result *r;
        assert_int_equal(sv_design_run(ctx, s, &r), SV_OK);
        memcpy(maps[t], sv_design_result_map(r), NX * NY);
        sv_design_report rep;
        sv_design_result_report(r, &rep);
        costs[t] = rep.cost;
        sv_design_result_destroy(r);
        sv_ctx_destroy(ctx);
    }
    assert_memory_equal(maps[0], maps[1], NX * NY);
    assert_true(costs[0] == costs[1]);
    sv_design_spec_destroy(s);
}

/* A progress callback that stops the search at its first report: the
 * result is the best map so far (the table's cost for it), not an error. */
static int stop_now(void *user, const char *phase, double fraction)
{
    (void)fraction;
    int *calls = user;
    if (phase && strstr(phase, "design pass")) (*calls)++;
    return *calls > 0;
}

static void test_cancel_keeps_best(void **state)
{
    (void)state;
    sv_design_spec *s = spec_with("{\"random\": {\"seed\": 1, \"fill\": 0.5}}", 1);
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    int calls = 0;
    sv_ctx_set_progress(ctx, stop_now, &calls);
    sv_design_result *r;
    assert_int_equal(sv_design_run(ctx, s, &r), SV_OK);
    sv_design_report rep;
    sv_design_result_report(r, &rep);
    assert_int_equal(rep.stopped, 2);
    assert_true(calls >= 1);
    assert_true(rep.passes <= 1);
    int idx = index_of(sv_design_result_map(r));
    assert_int_equal(rep.violations, table_viol[idx]);
    assert_true(fabs(rep.cost - table_cost[idx]) <= 1e-6);
    assert_true(lex_better(rep.violations, rep.cost, table_viol[index_of(sv_design_spec_start(s))],
                           table_cost[index_of(sv_design_spec_start(s))]) ||
                index_of(sv_design_result_map(r)) == index_of(sv_design_spec_start(s)));
    sv_design_result_destroy(r);
    sv_ctx_destroy(ctx);
    sv_design_spec_destroy(s);
}

/* A memory limit below the evaluator's estimate is refused before the run, naming it. */
static void test_memory_refused(void **state)
{
    (void)state;
    sv_design_spec *s = spec_with("\"metal\"", 1);
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    assert_int_equal(sv_ctx_set_memory_limit(ctx, 4096), SV_OK);
    sv_design_result *r = NULL;
    assert_int_equal(sv_design_run(ctx, s, &r), SV_ERR_BUDGET);
    assert_non_null(strstr(sv_last_error(), "design"));
    assert_null(r);
    sv_ctx_destroy(ctx);
    sv_design_spec_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_memory_refused), cmocka_unit_test(test_exhaustive_and_dbs),
                                       cmocka_unit_test(test_cancel_keeps_best), cmocka_unit_test(test_threads_reproducible)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
