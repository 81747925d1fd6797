/* Thick metal's wall shares (src/em/wall_share.c): the Ritz step's choice
 * against a brute-force scan through a second path. The model's charge
 * share κ maximises the metal's capacitance over its own dense cell
 * matrix; here the capacitance comes instead from the assembled L and Ψ
 * (δΨ = Dᵀ·δP·D) through the ports: both ports of a line tied together,
 * Im ΣY/ω at 1 MHz, where Y = jωC to 1e-6. Shares set by the caller are
 * kept, walls under half a cell keep equal densities, and bad shares are
 * refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support_em.h"
#include "sv_test.h"

/* A 50 Ω line on εr 3.66 (10 cells across, 20 long) with walls t tall. */
static sv_em_project *line(double t)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"units\": \"mm\", \"effects\": {\"radiation\": false}, \"substrate\": {\"thickness\": 0.508, \"eps_r\": 3.66},"
             "\"metal\": {\"conductivity\": \"inf\", \"thickness\": %.17g},"
             "\"grid\": {\"dx\": 0.2, \"dy\": 0.1112, \"nx\": 20, \"ny\": 10},"
             "\"rectangles\": [{\"x\": [0, 4], \"y\": [0, 1.112]}],"
             "\"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [0, 1.112]},"
             "            {\"name\": \"b\", \"side\": \"right\", \"x\": 4, \"y\": [0, 1.112]}]}",
             t);
    return em_test_project(json);
}

static sv_em_model *model_with(const sv_em_project *p, double charge, double current)
{
    sv_em_options o;
    sv_em_options_default(&o);
    o.wall_share = charge;
    o.wall_current_share[0] = o.wall_current_share[1] = current;
    sv_em_model *m = NULL;
    assert_int_equal(sv_em_model_create(NULL, p, &o, &m), SV_OK);
    return m;
}

/* The metal's capacitance through the full model (F). */
static double capacitance(const sv_em_model *m)
{
    double *L, *P;
    double complex Y[4];
    const double f = 1e6;
    em_test_full(m, &L, &P);
    em_test_y(m, L, P, NULL, f, Y);
    free(L);
    free(P);
    return cimag(Y[0] + Y[1] + Y[2] + Y[3]) / (2 * SV_EM_PI * f);
}

static void test_charge_share_is_the_best(void **state)
{
    (void)state;
    sv_em_project *p = line(0.556); /* t/W 0.5: walls 5 cells tall */
    sv_em_model *m = em_test_model(p);
    double k = m->opts.wall_share;
    sv_em_model_destroy(m);
    assert_true(k > 0.05 && k < 0.6); /* far from equal densities */
    double c[3];
    const double step[3] = {1 / 1.3, 1, 1.3};
    for (int q = 0; q < 3; q++) {
        sv_em_model *mq = model_with(p, k * step[q], 1);
        c[q] = capacitance(mq);
        sv_em_model_destroy(mq);
    }
    sv_em_model *m1 = model_with(p, 1, 1);
    double c1 = capacitance(m1);
    sv_em_model_destroy(m1);
    printf("charge share %.4f: C %.6g pF (x1/1.3: %.6g, x1.3: %.6g; equal densities %.6g)\n", k, 1e12 * c[1],
           1e12 * c[0], 1e12 * c[2], 1e12 * c1);
    assert_true(c[1] > c[0] && c[1] > c[2]);
    assert_true(c[1] > 1.02 * c1); /* the walls' share matters here */
    sv_em_project_destroy(p);
}

static void test_set_shares_are_kept(void **state)
{
    (void)state;
    sv_em_project *p = line(0.556);
    sv_em_model *m = model_with(p, 0.5, 0.75);
    assert_true(m->opts.wall_share == 0.5);
    assert_true(m->opts.wall_current_share[0] == 0.75 && m->opts.wall_current_share[1] == 0.75);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
}

static void test_short_walls_keep_equal_densities(void **state)
{
    (void)state;
    sv_em_project *p = line(0.05); /* under half a cell (0.1112 mm) */
    sv_em_model *m = em_test_model(p);
    assert_true(m->opts.wall_share == 1);
    assert_true(m->opts.wall_current_share[0] == 1 && m->opts.wall_current_share[1] == 1);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
}

static void test_bad_shares_are_refused(void **state)
{
    (void)state;
    sv_em_project *p = line(0.556);
    sv_em_options o;
    sv_em_model *m = NULL;
    const double bad[3] = {-0.5, NAN, INFINITY};
    for (int q = 0; q < 3; q++) {
        sv_em_options_default(&o);
        o.wall_share = bad[q];
        assert_int_equal(sv_em_model_create(NULL, p, &o, &m), SV_ERR_ARG);
        assert_null(m);
        assert_non_null(strstr(sv_last_error(), "wall_share"));
        sv_em_options_default(&o);
        o.wall_current_share[1] = bad[q];
        assert_int_equal(sv_em_model_create(NULL, p, &o, &m), SV_ERR_ARG);
        assert_non_null(strstr(sv_last_error(), "wall_current_share[1]"));
    }
    sv_em_project_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_charge_share_is_the_best),
        cmocka_unit_test(test_set_shares_are_kept),
        cmocka_unit_test(test_short_walls_keep_equal_densities),
        cmocka_unit_test(test_bad_shares_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
