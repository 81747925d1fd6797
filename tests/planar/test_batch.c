/* A batch of maps on one board (sv_planar_batch): each map's S against the
 * second method, the map's own planar job run alone (sv_planar_job_run on
 * the project a file naming the map's CSV gives), on the Momentum dataset's
 * board (tests/em/data/momentum: thick lossy metal, tan δ 0.01, edge
 * profiles, radiation; raw edge ports here, so that it stays fast:
 * test_batch_momentum.c has the calibrated ports and the whole band); a map
 * that cannot run reported with the library's message while the others
 * are solved; a stop from the caller; calibrated ports over two runs of one
 * batch (the second run's maps use the first run's calibration). */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solvent/planar.h"
#include "support_batch.h"
#include "sv_test.h"

#define NF 11
static const int sims[] = {106, 572};
#define NSIM ((int)(sizeof sims / sizeof sims[0]))

static sv_em_project *board(int sim) { return batch_test_board(sim, NF, 1); }

static unsigned char *read_map(const sv_em_project *b, int sim)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/em/data/momentum/pixelmaps/sim%d.csv", SV_SOURCE_DIR, sim);
    unsigned char *map = malloc(35 * 11);
    assert_int_equal(sv_em_map_csv_read(b, path, map), SV_OK);
    return map;
}

/* What the batch delivered, per map. */
typedef struct outcome {
    int calls;
    sv_status status;
    char message[512];
    double complex s[NF * 4];
} outcome;

static int keep(void *user, int k, const sv_planar_job *job, sv_status status, const char *message)
{
    outcome *o = (outcome *)user + k;
    o->calls++;
    o->status = status;
    snprintf(o->message, sizeof o->message, "%s", message ? message : "");
    if (job) {
        const sv_planar_network *net = sv_planar_job_network(job);
        assert_non_null(net);
        assert_int_equal(net->nf, NF);
        memcpy(o->s, net->s, sizeof o->s);
    }
    return 0;
}

/* S of map `sim` by its own job, alone (the separate sweep's path), on
 * one thread as each of the batch's maps runs: a sweep's reductions round
 * by its thread count, so on one thread the two are the same bits. */
static void separate_s(int sim, int raw_ports, double complex *s)
{
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    sv_ctx_set_threads(ctx, 1);
    sv_em_project *p = batch_test_board(sim, NF, raw_ports);
    sv_planar_job *job = NULL;
    sv_status st = sv_planar_job_create(ctx, p, NULL, &job);
    if (!st) st = sv_planar_job_run(job);
    if (st) fprintf(stderr, "separate job: %s\n", sv_last_error());
    assert_int_equal(st, SV_OK);
    memcpy(s, sv_planar_job_network(job)->s, sizeof(double complex) * NF * 4);
    sv_planar_job_destroy(job);
    sv_em_project_destroy(p);
    sv_ctx_destroy(ctx);
}

static void test_batch_equals_separate_jobs(void **state)
{
    (void)state;
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    sv_ctx_set_threads(ctx, 2);
    sv_em_project *b = board(sims[0]);
    unsigned char *maps[NSIM];
    for (int k = 0; k < NSIM; k++) maps[k] = read_map(b, sims[k]);
    sv_planar_batch *batch = NULL;
    assert_int_equal(sv_planar_batch_create(ctx, b, NULL, &batch), SV_OK);
    assert_int_equal(sv_planar_batch_workers(batch), 2);
    outcome out[NSIM];
    memset(out, 0, sizeof out);
    sv_status s = sv_planar_batch_run(batch, NSIM, (const unsigned char *const *)maps, keep, out);
    if (s) fprintf(stderr, "batch: %s\n", sv_last_error());
    assert_int_equal(s, SV_OK);
    double worst = 0;
    for (int k = 0; k < NSIM; k++) {
        assert_int_equal(out[k].calls, 1);
        assert_int_equal(out[k].status, SV_OK);
        double complex ref[NF * 4];
        separate_s(sims[k], 1, ref);
        for (int e = 0; e < NF * 4; e++) worst = fmax(worst, cabs(out[k].s[e] - ref[e]));
    }
    printf("batch against separate jobs, %d maps: max |dS| = %.3g\n", NSIM, worst);
    assert_true(worst == 0); /* the same coefficients and steps: the same bits */
    sv_planar_batch_destroy(batch);
    for (int k = 0; k < NSIM; k++) free(maps[k]);
    sv_em_project_destroy(b);
    assert_int_equal(sv_ctx_memory_current(ctx), 0);
    sv_ctx_destroy(ctx);
}

/* A map with no metal at port P1's cells (the west launch cut at column 0)
 * and one with no metal at all: each reported with the library's message,
 * the good maps around them solved. */
static void test_bad_map_reported_and_skipped(void **state)
{
    (void)state;
    sv_em_project *b = board(sims[0]);
    unsigned char *good = read_map(b, 106), *cut = read_map(b, 106), *none = calloc(35 * 11, 1);
    for (int j = 0; j < 11; j++) cut[0 + 35 * j] = 0;
    const unsigned char *maps[4] = {good, cut, none, good};
    sv_planar_batch *batch = NULL;
    sv_planar_batch_options o = {.workers = 2};
    assert_int_equal(sv_planar_batch_create(NULL, b, &o, &batch), SV_OK);
    outcome out[4];
    memset(out, 0, sizeof out);
    assert_int_equal(sv_planar_batch_run(batch, 4, maps, keep, out), SV_OK);
    for (int k = 0; k < 4; k++) assert_int_equal(out[k].calls, 1);
    assert_int_equal(out[0].status, SV_OK);
    assert_int_equal(out[3].status, SV_OK);
    assert_int_equal(out[1].status, SV_ERR_ARG);
    assert_non_null(strstr(out[1].message, "port 'P1': cell (0, 2) must be metal"));
    assert_int_equal(out[2].status, SV_ERR_ARG);
    assert_non_null(strstr(out[2].message, "no metal cell"));
    /* the same map twice: the same bits */
    assert_memory_equal(out[0].s, out[3].s, sizeof out[0].s);
    sv_planar_batch_destroy(batch);
    free(good), free(cut), free(none);
    sv_em_project_destroy(b);
}

static int stop_after_first(void *user, int k, const sv_planar_job *job, sv_status status, const char *message)
{
    (void)k, (void)job, (void)status, (void)message;
    ++*(int *)user;
    return 1;
}

/* The caller stops the batch after its first map: the maps in flight end,
 * no other is taken, SV_ERR_CANCELLED. */
static void test_stop_from_caller(void **state)
{
    (void)state;
    sv_em_project *b = board(sims[0]);
    unsigned char *map = read_map(b, 572);
    const unsigned char *maps[6] = {map, map, map, map, map, map};
    sv_planar_batch *batch = NULL;
    sv_planar_batch_options o = {.workers = 1};
    assert_int_equal(sv_planar_batch_create(NULL, b, &o, &batch), SV_OK);
    int calls = 0;
    assert_int_equal(sv_planar_batch_run(batch, 6, maps, stop_after_first, &calls), SV_ERR_CANCELLED);
    assert_int_equal(calls, 1);
    sv_planar_batch_destroy(batch);
    free(map);
    sv_em_project_destroy(b);
}

/* Calibrated ports: the first run's first map makes the calibration, which
 * the batch keeps; a second run's map uses it and is still its separate
 * job's S to the bit. */
static void test_calibrated_ports_over_several_runs(void **state)
{
    (void)state;
    sv_em_project *b = batch_test_board(sims[0], NF, 0);
    unsigned char *maps[NSIM];
    for (int k = 0; k < NSIM; k++) maps[k] = read_map(b, sims[k]);
    sv_planar_batch *batch = NULL;
    sv_planar_batch_options o = {.workers = 1};
    assert_int_equal(sv_planar_batch_create(NULL, b, &o, &batch), SV_OK);
    outcome out[NSIM];
    memset(out, 0, sizeof out);
    for (int k = 0; k < NSIM; k++) /* one map per run */
        assert_int_equal(sv_planar_batch_run(batch, 1, (const unsigned char *const *)&maps[k], keep, &out[k]), SV_OK);
    for (int k = 0; k < NSIM; k++) {
        double complex ref[NF * 4];
        separate_s(sims[k], 0, ref);
        assert_int_equal(out[k].calls, 1);
        assert_memory_equal(out[k].s, ref, sizeof ref);
    }
    sv_planar_batch_destroy(batch);
    for (int k = 0; k < NSIM; k++) free(maps[k]);
    sv_em_project_destroy(b);
}

/* Bad arguments are named. */
static void test_bad_arguments(void **state)
{
    (void)state;
    sv_em_project *b = board(sims[0]);
    sv_planar_batch *batch = NULL;
    sv_planar_batch_options o = {.workers = -1};
    assert_int_equal(sv_planar_batch_create(NULL, b, &o, &batch), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "workers = -1"));
    unsigned char map[35 * 11];
    assert_int_equal(sv_em_map_csv_read(b, SV_SOURCE_DIR "/tests/em/data/momentum/circuits.tsv", map), SV_ERR_PARSE);
    assert_non_null(strstr(sv_last_error(), "circuits.tsv"));
    sv_em_project_destroy(b);
}

/* The board's memory: estimated before it is made (at least what its
 * making holds at its peak, as the core allocator counts it), refused
 * before anything large past the limit, the rest shared by the maps. */
static void test_memory(void **state)
{
    (void)state;
    sv_em_project *b = board(sims[0]);
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    sv_ctx_reset_peak(ctx);
    sv_planar_batch *batch = NULL;
    sv_planar_batch_options o = {.workers = 2, .memory_limit = (size_t)1 << 30};
    assert_int_equal(sv_planar_batch_create(ctx, b, &o, &batch), SV_OK);
    size_t board_bytes, per_map;
    sv_planar_batch_memory(batch, &board_bytes, &per_map);
    printf("board: estimate %zu bytes, peak while made %zu, held %zu\n", board_bytes, sv_ctx_memory_peak(ctx), sv_ctx_memory_current(ctx));
    assert_true(board_bytes >= sv_ctx_memory_peak(ctx));
    assert_true(board_bytes < (size_t)4 << 20); /* tables by offset: small */
    assert_int_equal(per_map, (o.memory_limit - board_bytes) / 2);
    sv_planar_batch_destroy(batch);
    o.memory_limit = board_bytes / 2;
    assert_int_equal(sv_planar_batch_create(ctx, b, &o, &batch), SV_ERR_BUDGET);
    assert_non_null(strstr(sv_last_error(), "shared tables need about"));
    assert_null(batch);
    assert_int_equal(sv_ctx_memory_current(ctx), 0);
    sv_ctx_destroy(ctx);
    sv_em_project_destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_equals_separate_jobs),
        cmocka_unit_test(test_bad_map_reported_and_skipped),
        cmocka_unit_test(test_stop_from_caller),
        cmocka_unit_test(test_calibrated_ports_over_several_runs),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
