/* The DC limit: the resistance of a straight strip against l/(σ·t·W); the
 * Momentum circuits' DC S-parameters (their 0 Hz line: a few mΩ through the
 * connected maps, open below −220 dB through the others); lossless metal
 * as an ideal junction (a thru: S21 = 1) or open. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "support_em.h"
#include "sv_test.h"

static void test_strip_resistance(void **state)
{
    (void)state;
    /* 10 × 1 mm, 4 cells across, copper 35 µm */
    sv_em_project *p = em_test_project(
        "{\"units\": \"mm\", \"substrate\": {\"thickness\": 1, \"eps_r\": 4.4},"
        " \"metal\": {\"conductivity\": 5.8e7, \"thickness\": 0.035},"
        " \"grid\": {\"dx\": 0.5, \"dy\": 0.25, \"nx\": 20, \"ny\": 4}, \"rectangles\": [{\"x\": [0, 10], \"y\": [0, 1]}],"
        " \"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [0, 1]},"
        "            {\"name\": \"b\", \"side\": \"right\", \"x\": 10, \"y\": [0, 1]}]}");
    sv_em_model *m = em_test_model(p);
    double y[4], r = 10e-3 / (5.8e7 * 35e-6 * 1e-3);
    assert_int_equal(sv_em_dc_admittance(NULL, m, y), SV_OK);
    printf("strip: R = %.6g mOhm (l/(sigma t W) %.6g mOhm), Y = [%g %g; %g %g]\n", -1e3 / y[1], 1e3 * r, y[0], y[2],
           y[1], y[3]);
    sv_assert_close(-1 / y[1], r, 1e-10, 0);
    sv_assert_close(y[0], -y[1], 1e-10, 0);
    sv_assert_close(y[2], y[1], 1e-12, 0);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
}

static sv_em_model *momentum_model(int sim, const char *cond, sv_em_project **prj)
{
    char json[2048];
    snprintf(json, sizeof json,
             "{\"units\": \"mil\", \"substrate\": {\"thickness\": 30, \"eps_r\": 4.5},"
             " \"metal\": {\"conductivity\": %s, \"thickness\": 2.8}, \"grid\": {\"dx\": 8, \"dy\": 8, \"nx\": 35, \"ny\": 11},"
             " \"pixels\": {\"csv\": \"%s/tests/em/data/momentum/pixelmaps/sim%d.csv\"},"
             " \"ports\": [{\"name\": \"P1\", \"side\": \"left\", \"x\": 0, \"y\": [16, 72]},"
             "            {\"name\": \"P2\", \"side\": \"right\", \"x\": 280, \"y\": [16, 72]}]}",
             cond, SV_SOURCE_DIR, sim);
    *prj = em_test_project(json);
    return em_test_model(*prj);
}

static void test_momentum_dc(void **state)
{
    (void)state;
    const int sims[8] = {572, 213, 606, 685, 116, 106, 878, 763}, connected[8] = {1, 0, 1, 0, 1, 0, 1, 0};
    const double z0[2] = {50, 50};
    for (int k = 0; k < 8; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/tests/em/data/momentum/momentum/sim%d.s2p", SV_SOURCE_DIR, sims[k]);
        sv_em_touchstone *ts;
        assert_int_equal(sv_em_touchstone_read(NULL, path, &ts), SV_OK);
        assert_true(ts->freq_hz[0] == 0);
        sv_em_project *p;
        sv_em_model *m = momentum_model(sims[k], "5.88e7", &p);
        double complex S[4];
        assert_int_equal(sv_em_dc_s(NULL, m, z0, S), SV_OK);
        const double complex *M = ts->data;
        /* a series resistance between 50 Ω ports: S11 = R/(R + 100 Ω) */
        double r = 100 * cabs(S[0]) / (1 - cabs(S[0])), rm = 100 * cabs(M[0]) / (1 - cabs(M[0]));
        printf("sim%d DC: S11 %.3e (Momentum %.3e), |S21| %.9f (%.9f)%s, R %.3f mOhm (%.3f)\n", sims[k], cabs(S[0]),
               cabs(M[0]), cabs(S[1]), cabs(M[1]), connected[k] ? "" : " open", 1e3 * r, 1e3 * rm);
        if (connected[k]) {
            sv_assert_close(r, rm, 0.05, 0); /* the through resistance */
        } else {
            assert_true(cabs(S[1]) == 0 && cabs(M[1]) < 1e-11);
            sv_assert_close(creal(S[0]), 1, 1e-15, 0);
        }
        sv_em_model_destroy(m);
        sv_em_project_destroy(p);
        sv_em_touchstone_destroy(ts);
    }
}

static void test_lossless_dc(void **state)
{
    (void)state;
    const double z0[2] = {50, 50};
    sv_em_project *p;
    sv_em_model *m = momentum_model(572, "\"inf\"", &p);
    double complex S[4];
    assert_int_equal(sv_em_dc_s(NULL, m, z0, S), SV_OK);
    assert_true(cabs(S[0]) < 1e-12 && cabs(S[1] - 1) < 1e-12 && cabs(S[3]) < 1e-12); /* an ideal thru */
    double y[4];
    assert_int_equal(sv_em_dc_admittance(NULL, m, y), SV_ERR_ARG);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
    m = momentum_model(213, "\"inf\"", &p);
    assert_int_equal(sv_em_dc_s(NULL, m, z0, S), SV_OK);
    assert_true(cabs(S[0] - 1) < 1e-12 && cabs(S[1]) < 1e-12); /* open */
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strip_resistance),
        cmocka_unit_test(test_momentum_dc),
        cmocka_unit_test(test_lossless_dc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
