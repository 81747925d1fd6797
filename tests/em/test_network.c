/* Network parameters against closed forms (a series impedance between two
 * ports), and Touchstone round trips in every version, format and
 * parameter, the data order of hand-written files, and atomic writes. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support_em.h"
#include "sv_test.h"

static void test_series_impedance(void **state)
{
    (void)state;
    double complex zr = 30 + 40 * I, y = 1 / zr;
    double complex Y[4] = {y, -y, -y, y}, S[4], Z[4];
    double z0[2] = {50, 50};
    assert_int_equal(sv_em_y_to_s(2, Y, z0, S), SV_OK);
    double complex s11 = zr / (zr + 100), s21 = 100 / (zr + 100);
    sv_assert_close(creal(S[0]), creal(s11), 1e-14, 1);
    sv_assert_close(cimag(S[0]), cimag(s11), 1e-14, 1);
    sv_assert_close(creal(S[1]), creal(s21), 1e-14, 1);
    sv_assert_close(cimag(S[2]), cimag(s21), 1e-14, 1);
    /* a series impedance has no Z matrix (Y singular) */
    assert_int_equal(sv_em_y_to_z(2, Y, Z), SV_ERR_SINGULAR);
    /* unequal references: a shunt admittance ys across a through connection
       seen from z1 and z2: S11 = (z2 − z1 − z1 z2 ys)/(z1 + z2 + z1 z2 ys) */
    double complex ys = 0.01 + 0.02 * I;
    double zz[2] = {50, 75};
    double complex Y2[4] = {ys + 1e3, -1e3, -1e3, 1e3}; /* a stiff link (1 mΩ) approximates the through */
    assert_int_equal(sv_em_y_to_s(2, Y2, zz, S), SV_OK);
    double complex e11 = (zz[1] - zz[0] - zz[0] * zz[1] * ys) / (zz[0] + zz[1] + zz[0] * zz[1] * ys);
    sv_assert_close(creal(S[0]), creal(e11), 1e-4, 1);
    sv_assert_close(cimag(S[0]), cimag(e11), 1e-4, 1);
    /* Z = Y⁻¹ */
    double complex A[4] = {2 + I, 0.5, 0.5, 1 - 2 * I};
    assert_int_equal(sv_em_y_to_z(2, A, Z), SV_OK);
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 2; c++) {
            double complex s = A[r] * Z[2 * c] + A[r + 2] * Z[1 + 2 * c];
            assert_true(cabs(s - (r == c)) < 1e-14);
        }
    /* bad input */
    double bad[2] = {50, -1};
    assert_int_equal(sv_em_y_to_s(2, Y, bad, S), SV_ERR_ARG);
    double complex Yn[4] = {NAN, 0, 0, 1};
    assert_int_equal(sv_em_y_to_s(2, Yn, z0, S), SV_ERR_NONFINITE);
    /* a near short: a 1 mΩ series resistor still gives S to 1e-10 of the
       closed form; at 0.1 µΩ, |z0·Y| = 5e8, forming I + z0·Y would round S
       by 2e-7: refused, saying why */
    for (int k = 0; k < 2; k++) {
        double r = k ? 1e-7 : 1e-3;
        double complex Ys[4] = {1 / r, -1 / r, -1 / r, 1 / r};
        sv_status st = sv_em_y_to_s(2, Ys, z0, S);
        if (k) {
            assert_int_equal(st, SV_ERR_SINGULAR);
            assert_non_null(strstr(sv_last_error(), "near short"));
            sv_assert_close(sv_em_y_to_s_rounding(2, Ys, z0), 2 * DBL_EPSILON * 50 / r, 1e-12, 0);
        } else {
            assert_int_equal(st, SV_OK);
            assert_true(cabs(S[0] - r / (r + 100)) <= 1e-10 && cabs(S[1] - 100 / (r + 100)) <= 1e-10);
        }
    }
    double mx;
    double complex U[4] = {0, 1, 1, 0};
    assert_int_equal(sv_em_max_singular_value(2, U, &mx), SV_OK);
    sv_assert_close(mx, 1, 1e-15, 0);
    assert_true(sv_em_reciprocity_error(2, U) == 0);
}

static void test_touchstone_roundtrip(void **state)
{
    (void)state;
    char path[256];
    sv_test_rng r;
    sv_test_rng_seed(&r, 99);
    for (int p = 1; p <= 5; p += (p == 3 ? 2 : 1))
        for (int ver = 1; ver <= 2; ver++)
            for (int fm = 0; fm < 3; fm++)
                for (int pm = 0; pm < 3; pm++) {
                    int nf = 3;
                    double f[3] = {1e8, 1.5e9, 2.25e10};
                    double complex *d = malloc(sizeof *d * nf * p * p);
                    for (int q = 0; q < nf * p * p; q++) d[q] = sv_test_uniform(&r) + I * sv_test_uniform(&r);
                    double z0[5];
                    for (int k = 0; k < p; k++) z0[k] = ver == 1 ? 50 : 50 + 10 * k;
                    snprintf(path, sizeof path, "%s/ts_%d_%d_%d.s%dp", SV_BINARY_DIR, ver, fm, pm, p);
                    sv_em_ts_options o = {ver, (sv_em_ts_format)fm, (sv_em_ts_param)pm, "MHz", "round trip\ntwo lines"};
                    assert_int_equal(sv_em_touchstone_write(path, &o, p, nf, f, d, z0), SV_OK);
                    sv_em_touchstone *t;
                    assert_int_equal(sv_em_touchstone_read(NULL, path, &t), SV_OK);
                    assert_int_equal(t->p, p);
                    assert_int_equal(t->nf, nf);
                    assert_int_equal((int)t->param, pm);
                    for (int k = 0; k < p; k++) sv_assert_close(t->z0[k], z0[k], 1e-15, 0);
                    for (int q = 0; q < nf; q++) sv_assert_close(t->freq_hz[q], f[q], 1e-14, 0);
                    for (int q = 0; q < nf * p * p; q++)
                        assert_true(cabs(t->data[q] - d[q]) <= 1e-12 * (1 + cabs(d[q])));
                    sv_em_touchstone_destroy(t);
                    free(d);
                    unlink(path);
                }
}

/* A hand-written version 1 two-port: N11 N21 N12 N22 order; a 3-port row by row. */
static void test_touchstone_order(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/hand.s2p", SV_BINARY_DIR);
    FILE *f = fopen(path, "w");
    fprintf(f, "! comment\n# MHz S MA R 50\n100 0.1 0 0.2 90 0.3 180 0.4 -90 ! trailing comment\n");
    fclose(f);
    sv_em_touchstone *t;
    assert_int_equal(sv_em_touchstone_read(NULL, path, &t), SV_OK);
    assert_true(t->p == 2 && t->nf == 1);
    sv_assert_close(t->freq_hz[0], 1e8, 1e-15, 0);
    assert_true(cabs(t->data[0] - 0.1) < 1e-15);          /* S11 */
    assert_true(cabs(t->data[1] - 0.2 * I) < 1e-15);      /* S21 */
    assert_true(cabs(t->data[2] + 0.3) < 1e-15);          /* S12 */
    assert_true(cabs(t->data[3] + 0.4 * I) < 1e-15);      /* S22 */
    sv_em_touchstone_destroy(t);
    unlink(path);
    snprintf(path, sizeof path, "%s/hand.s3p", SV_BINARY_DIR);
    f = fopen(path, "w");
    fprintf(f, "# Hz Z RI R 10\n5 1 0 2 0 3 0\n 4 0 5 0 6 0\n 7 0 8 0 9 0\n");
    fclose(f);
    assert_int_equal(sv_em_touchstone_read(NULL, path, &t), SV_OK);
    assert_true(t->p == 3 && t->nf == 1);
    sv_assert_close(creal(t->data[0 + 3 * 1]), 20, 1e-15, 0); /* Z12 = 2 normalised by 10 Ω */
    sv_assert_close(creal(t->data[2 + 3 * 0]), 70, 1e-15, 0); /* Z31 */
    sv_em_touchstone_destroy(t);
    unlink(path);
}

static void test_touchstone_errors(void **state)
{
    (void)state;
    double f[2] = {2e9, 1e9}, z0[2] = {50, 60};
    double complex d[8] = {0};
    char path[256];
    snprintf(path, sizeof path, "%s/bad.s2p", SV_BINARY_DIR);
    unlink(path);
    assert_int_equal(sv_em_touchstone_write(path, NULL, 2, 2, f, d, z0), SV_ERR_ARG); /* z0 differ in v1 */
    double z50[2] = {50, 50};
    assert_int_equal(sv_em_touchstone_write(path, NULL, 2, 2, f, d, z50), SV_ERR_ARG); /* descending */
    assert_true(access(path, F_OK) != 0);
    assert_int_equal(sv_em_touchstone_write("/nonexistent/dir/x.s2p", NULL, 2, 1, f, d, z50), SV_ERR_IO);
    d[0] = NAN;
    f[1] = 3e9;
    assert_int_equal(sv_em_touchstone_write(path, NULL, 2, 2, f, d, z50), SV_ERR_NONFINITE);
    assert_true(access(path, F_OK) != 0);
    sv_em_ts_options o = {3, 0, 0, NULL, NULL};
    d[0] = 0;
    assert_int_equal(sv_em_touchstone_write(path, &o, 2, 2, f, d, z50), SV_ERR_ARG);
}

/* SV_EM_TS_VERSION_FOR_Z0: version 1 while one reference serves every
 * port, version 2 (which alone holds several) otherwise. */
static void test_touchstone_version_for_z0(void **state)
{
    (void)state;
    double f[2] = {1e9, 2e9}, z_same[2] = {50, 50}, z_differ[2] = {50, 75};
    double complex d[8] = {0.1, 0.9, 0.9, 0.1, 0.2, 0.8, 0.8, 0.2};
    char path[256];
    snprintf(path, sizeof path, "%s/version_for_z0.s2p", SV_BINARY_DIR);
    sv_em_ts_options o;
    sv_em_ts_options_default(&o);
    o.version = SV_EM_TS_VERSION_FOR_Z0;
    const double *z0s[2] = {z_same, z_differ};
    for (int c = 0; c < 2; c++) {
        assert_int_equal(sv_em_touchstone_write(path, &o, 2, 2, f, d, z0s[c]), SV_OK);
        sv_em_touchstone *t;
        assert_int_equal(sv_em_touchstone_read(NULL, path, &t), SV_OK);
        assert_int_equal(t->version, c == 0 ? 1 : 2);
        assert_true(t->z0[1] == z0s[c][1]);
        sv_em_touchstone_destroy(t);
    }
    assert_int_equal(o.version, SV_EM_TS_VERSION_FOR_Z0); /* the caller's options are not changed */
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_series_impedance),
        cmocka_unit_test(test_touchstone_roundtrip),
        cmocka_unit_test(test_touchstone_order),
        cmocka_unit_test(test_touchstone_errors),
        cmocka_unit_test(test_touchstone_version_for_z0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
