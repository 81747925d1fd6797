/* The batch over the eight Momentum circuits of the dataset
 * (tests/em/data/momentum) on the dataset's board with the Momentum
 * comparison's model — every default effect: thick lossy metal, tan δ
 * 0.01, edge profiles, radiation, calibrated ports — over Momentum's band
 * (0.05–10 GHz, 200 points): each map's S against the second method, its
 * own planar job run alone on the context's threads as `solvent sweep`
 * runs it (a sweep's reductions round by the thread count, so the two
 * agree to rounding, not to the bit: ≤ 1e-9). Labelled slow. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solvent/planar.h"
#include "support_batch.h"
#include "sv_test.h"

#define NF 200
static const int sims[] = {106, 116, 213, 572, 606, 685, 763, 878};
#define NSIM ((int)(sizeof sims / sizeof sims[0]))

static sv_em_project *board(int sim) { return batch_test_board(sim, NF, 0); }

static int keep(void *user, int k, const sv_planar_job *job, sv_status status, const char *message)
{
    if (status) fprintf(stderr, "map %d: %s\n", sims[k], message);
    assert_int_equal(status, SV_OK);
    const sv_planar_network *net = sv_planar_job_network(job);
    assert_int_equal(net->nf, NF);
    memcpy((double complex *)user + (size_t)k * NF * 4, net->s, sizeof(double complex) * NF * 4);
    return 0;
}

static void test_batch_equals_separate_sweeps(void **state)
{
    (void)state;
    sv_em_project *b = board(sims[0]);
    unsigned char *maps[NSIM];
    for (int k = 0; k < NSIM; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/tests/em/data/momentum/pixelmaps/sim%d.csv", SV_SOURCE_DIR, sims[k]);
        maps[k] = malloc(35 * 11);
        assert_int_equal(sv_em_map_csv_read(b, path, maps[k]), SV_OK);
    }
    double complex *s = malloc(sizeof(double complex) * NSIM * NF * 4);
    sv_planar_batch *batch = NULL;
    assert_int_equal(sv_planar_batch_create(NULL, b, NULL, &batch), SV_OK);
    assert_int_equal(sv_planar_batch_run(batch, NSIM, (const unsigned char *const *)maps, keep, s), SV_OK);
    double worst = 0;
    for (int k = 0; k < NSIM; k++) {
        sv_em_project *p = board(sims[k]);
        sv_planar_job *job = NULL;
        assert_int_equal(sv_planar_job_create(NULL, p, NULL, &job), SV_OK);
        assert_int_equal(sv_planar_job_run(job), SV_OK);
        const double complex *ref = sv_planar_job_network(job)->s, *got = s + (size_t)k * NF * 4;
        for (int e = 0; e < NF * 4; e++) worst = fmax(worst, cabs(got[e] - ref[e]));
        sv_planar_job_destroy(job);
        sv_em_project_destroy(p);
    }
    printf("batch against separate sweeps, %d circuits, %d frequencies: max |dS| = %.3g\n", NSIM, NF, worst);
    assert_true(worst <= 1e-9);
    sv_planar_batch_destroy(batch);
    for (int k = 0; k < NSIM; k++) free(maps[k]);
    free(s);
    sv_em_project_destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_batch_equals_separate_sweeps)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
