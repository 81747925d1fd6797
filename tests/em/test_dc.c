/* The DC limit: the resistance of a straight strip against l/(σ·t·W); the
 * Momentum circuits' DC S-parameters (their 0 Hz line: a few mΩ through the
 * connected maps, open below −220 dB through the others); lossless metal
 * as an ideal junction (a thru: S21 = 1) or open. Low frequencies, 1 nHz
 * (SV_EM_MIN_FREQ_HZ; below it refused) to 1 MHz, by the loop–tree path: a lossy line and a line with an open
 * stub reciprocal, passive and continuous with DC (the line's S21 against
 * the closed form 2·Z0/(2·Z0 + l/(σ·t·W))), and the same S as the solve of
 * Z(f) itself where both hold. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* A 10 mm, 3 mm wide line on 1.6 mm FR-4 (εr 4.4, tan δ 0.02), copper
 * 35 µm, 1 mm cells, raw ports at both ends; `extra` adds to the project
 * (effects). Every effect of the model is on unless `extra` says. */
static void lossy_line(em_test_case *c, const char *pixels, const char *extra)
{
    char json[2048];
    snprintf(json, sizeof json,
             "{\"units\": \"mm\", \"substrate\": {\"thickness\": 1.6, \"eps_r\": 4.4, \"tan_delta\": 0.02},"
             " \"metal\": {\"conductivity\": 5.8e7, \"thickness\": 0.035},"
             " \"grid\": {\"dx\": 1, \"dy\": 1, \"nx\": 10, \"ny\": %d}, %s%s"
             " \"ports\": [{\"name\": \"P1\", \"side\": \"left\", \"x\": 0, \"y\": [0, 3], \"calibration\": \"none\"},"
             "            {\"name\": \"P2\", \"side\": \"right\", \"x\": 10, \"y\": [0, 3], \"calibration\": \"none\"}]}",
             pixels ? 7 : 3, pixels ? pixels : "\"rectangles\": [{\"x\": [0, 10], \"y\": [0, 3]}],", extra);
    em_test_case_open(c, json);
}

/* A 7-row map: the line along the bottom three rows, a 2-cell-wide stub
 * 4 cells long from its middle, open at its end. */
#define STUB_MAP                                                                                                     \
    "\"pixels\": [\"....##....\", \"....##....\", \"....##....\", \"....##....\", \"##########\", \"##########\","  \
    " \"##########\"],"

static const double Z0[2] = {50, 50};

/* S at f by the direct solve; reciprocal and passive to 1e-10. */
static void s_checked(const em_test_case *c, double f, double complex s[4])
{
    double complex y[4];
    double top;
    assert_int_equal(sv_em_solve(NULL, c->a, f, y), SV_OK);
    assert_int_equal(sv_em_y_to_s(2, y, Z0, s), SV_OK);
    assert_int_equal(sv_em_max_singular_value(2, s, &top), SV_OK);
    printf("  %8.3g Hz: S11 %.10f%+.3ej, S21 %.10f%+.3ej, |S12 - S21| %.1e, max sv 1%+.1e\n", f, creal(s[0]),
           cimag(s[0]), creal(s[1]), cimag(s[1]), cabs(s[2] - s[1]), top - 1);
    assert_true(cabs(s[2] - s[1]) <= 1e-10);
    assert_true(top <= 1 + 1e-10);
}

/* From 1 Hz to 1 MHz (log spaced) and at the lowest frequency a solve
 * takes: S passive and reciprocal, S21 continuous with the DC limit (its
 * solve: the resistor network) and, where s21_ref is a number, with it. */
static void check_low_band(const em_test_case *c, double s21_ref, double tol)
{
    double complex dc[4], s[4], y[4];
    double top;
    assert_int_equal(sv_em_dc_s(NULL, c->m, Z0, dc), SV_OK);
    assert_int_equal(sv_em_max_singular_value(2, dc, &top), SV_OK);
    printf("  DC: S21 %.10f (reference %.10f), max sv 1%+.1e\n", creal(dc[1]), s21_ref, top - 1);
    assert_true(top <= 1 + 1e-10);
    assert_true(isnan(s21_ref) || fabs(creal(dc[1]) - s21_ref) <= tol);
    const double f[8] = {SV_EM_MIN_FREQ_HZ, 1, 10, 100, 1e3, 1e4, 1e5, 1e6};
    for (int i = 0; i < 8; i++) {
        s_checked(c, f[i], s);
        if (f[i] <= 10) { /* the charge's share there: ωC·R ~ 1e-13 */
            assert_true(cabs(s[1] - dc[1]) <= 1e-6);
            assert_true(isnan(s21_ref) || fabs(creal(s[1]) - s21_ref) <= tol);
        }
    }
    /* below the lowest: refused, naming the frequency and the limit */
    assert_int_equal(sv_em_solve(NULL, c->a, 1e-300, y), SV_ERR_ARG);
    printf("  1e-300 Hz: %s\n", sv_last_error());
    assert_non_null(strstr(sv_last_error(), "1e-300 Hz"));
    assert_non_null(strstr(sv_last_error(), "1e-09 Hz"));
}

static void test_lowfreq_line(void **state)
{
    (void)state;
    double r = 10e-3 / (5.8e7 * 35e-6 * 3e-3), s21 = 100 / (100 + r); /* l/(σ·t·W), 50 Ω ports */
    em_test_case c;
    /* a sheet: the Galerkin resistance of a uniform current is l/(σ·t·W) exactly */
    lossy_line(&c, NULL, "\"effects\": {\"thick_metal\": false},");
    printf("10 mm line, sheet of 35 um copper (%d unknowns):\n", sv_em_model_unknowns(c.m));
    check_low_band(&c, s21, 1e-9);
    em_test_case_close(&c);
    /* thick metal: the side walls share the current (a few % of R: 3.5e-7 of S21) */
    lossy_line(&c, NULL, "");
    printf("10 mm line, thick metal:\n");
    check_low_band(&c, s21, 1e-6);
    em_test_case_close(&c);
}

static void test_lowfreq_stub(void **state)
{
    (void)state;
    em_test_case c;
    lossy_line(&c, STUB_MAP, "");
    printf("10 mm line with an open stub (%d unknowns):\n", sv_em_model_unknowns(c.m));
    check_low_band(&c, NAN, 1e-6); /* the stub's foot widens the line: no closed form */
    em_test_case_close(&c);
}

/* Where both hold, the loop–tree path and the sweep engine's solve of Z(f)
 * give the same Y (two methods); the threshold sits between. */
static void test_lowfreq_agrees(void **state)
{
    (void)state;
    em_test_case c;
    lossy_line(&c, STUB_MAP, "");
    int n = sv_em_model_unknowns(c.m);
    const double f[2] = {3e7, 3e8};
    for (int i = 0; i < 2; i++) {
        assert_false(sv_em_affine_low_frequency(c.a, f[i]));
        double complex yl[4], yz[4], x[2 * n];
        assert_int_equal(sv_em_solve_loop_tree(NULL, c.a, f[i], yl), SV_OK);
        assert_int_equal(sv_sweep_solve_exact(NULL, sv_em_affine_model(c.a), f[i], SV_SWEEP_LAPACK, x, n, NULL), SV_OK);
        assert_int_equal(sv_em_port_admittance(c.m, x, n, yz), SV_OK);
        double d = 0, top = 0;
        for (int e = 0; e < 4; e++) {
            d = fmax(d, cabs(yl[e] - yz[e]));
            top = fmax(top, cabs(yz[e]));
        }
        printf("  %g Hz: max |Y_loop-tree - Y_Z(f)| %.2e of max |Y| %.2e\n", f[i], d, top);
        assert_true(d <= 1e-9 * top);
    }
    assert_true(sv_em_affine_low_frequency(c.a, 1e3));
    assert_false(sv_em_affine_low_frequency(c.a, 0)); /* DC is the limit's (dc.c) */
    em_test_case_close(&c);
}

/* The planar model's sweep: low frequencies by the loop–tree path, the rest
 * by the sweep engine, one result in the order asked. */
static void test_lowfreq_sweep(void **state)
{
    (void)state;
    em_test_case c;
    lossy_line(&c, NULL, "");
    const double f[5] = {SV_EM_MIN_FREQ_HZ, 10, 1e3, 1e8, 1e9};
    sv_sweep_result *r;
    assert_int_equal(sv_em_sweep_run(NULL, c.a, 5, f, NULL, &r), SV_OK);
    assert_int_equal(r->nfreq, 5);
    for (int i = 0; i < 5; i++) {
        double complex s[4], y[4];
        double top;
        assert_true(r->freq[i] == f[i]);
        assert_int_equal(sv_em_y_to_s(2, r->h + 4 * (size_t)i, Z0, s), SV_OK);
        assert_int_equal(sv_em_max_singular_value(2, s, &top), SV_OK);
        assert_true(cabs(s[2] - s[1]) <= 1e-10 && top <= 1 + 1e-10);
        if (i < 3) { /* the low ones: exact, as the direct solve gives them */
            assert_true(r->exact[i]);
            assert_int_equal(sv_em_solve(NULL, c.a, f[i], y), SV_OK);
            for (int e = 0; e < 4; e++) assert_true(y[e] == r->h[4 * (size_t)i + e]);
        }
    }
    sv_sweep_result_destroy(r);
    const double tiny[2] = {1e-300, 1e9};
    assert_int_equal(sv_em_sweep_run(NULL, c.a, 2, tiny, NULL, &r), SV_ERR_ARG);
    assert_null(r);
    em_test_case_close(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strip_resistance),
        cmocka_unit_test(test_momentum_dc),
        cmocka_unit_test(test_lossless_dc),
        cmocka_unit_test(test_lowfreq_line),
        cmocka_unit_test(test_lowfreq_stub),
        cmocka_unit_test(test_lowfreq_agrees),
        cmocka_unit_test(test_lowfreq_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
