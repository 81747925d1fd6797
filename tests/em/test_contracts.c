/* The contracts at the EM module's edge: options structs whose zero value,
 * NULL and _default() mean the same; the band of a sweep (caller over
 * project); S and its checks at many frequencies against the one-frequency
 * functions; a Touchstone file read back into memory the library releases. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support_em.h"
#include "sv_test.h"

static const char *with_sweep =
    "{\"units\": \"mm\", \"substrate\": {\"thickness\": 0.8, \"eps_r\": 4.4},"
    "\"metal\": {\"conductivity\": \"inf\"},"
    "\"grid\": {\"dx\": 0.5, \"dy\": 0.5, \"nx\": 6, \"ny\": 2},"
    "\"pixels\": [\"######\", \"######\"],"
    "\"ports\": [{\"name\": \"P1\", \"side\": \"left\", \"x\": 0, \"y\": [0, 1]},"
    "          {\"name\": \"P2\", \"side\": \"right\", \"x\": 3, \"y\": [0, 1]}],"
    "\"sweep\": {\"start\": 1, \"stop\": 3, \"points\": 5, \"unit\": \"GHz\", \"tolerance\": 1e-5}}";

static const char *without_sweep =
    "{\"units\": \"mm\", \"substrate\": {\"thickness\": 0.8, \"eps_r\": 4.4},"
    "\"metal\": {\"conductivity\": \"inf\"},"
    "\"grid\": {\"dx\": 0.5, \"dy\": 0.5, \"nx\": 6, \"ny\": 2},"
    "\"pixels\": [\"######\", \"######\"],"
    "\"ports\": [{\"name\": \"P1\", \"side\": \"left\", \"x\": 0, \"y\": [0, 1]}]}";

/* sv_em_options: NULL, zero-filled and _default() build the same mesh. */
static void test_em_options_default(void **state)
{
    (void)state;
    sv_em_options d;
    memset(&d, 0xff, sizeof d);
    sv_em_options_default(&d);
    assert_true(d.accuracy == 1e-8);
    assert_true(d.far_ratio == 0);
    sv_em_options_default(NULL);
    sv_em_project *p = em_test_project(with_sweep);
    sv_em_options zero;
    memset(&zero, 0, sizeof zero);
    const sv_em_options *variants[3] = {NULL, &zero, &d};
    sv_em_options seen[3];
    for (int v = 0; v < 3; v++) {
        sv_em_model *m;
        assert_int_equal(sv_em_model_create(NULL, p, variants[v], &m), SV_OK);
        seen[v] = m->opts;
        sv_em_model_destroy(m);
    }
    for (int v = 1; v < 3; v++) {
        assert_true(seen[v].accuracy == seen[0].accuracy);
        assert_true(seen[v].far_ratio == seen[0].far_ratio);
    }
    assert_true(seen[0].accuracy == 1e-8);
    assert_true(seen[0].far_ratio == sv_em_default_far_ratio(1e-8));
    sv_em_project_destroy(p);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *s = calloc(1, 1 << 16);
    size_t n = fread(s, 1, (1 << 16) - 1, f);
    s[n] = 0;
    fclose(f);
    return s;
}

/* sv_em_ts_options: NULL, zero-filled and _default() write the same file. */
static void test_ts_options_default(void **state)
{
    (void)state;
    sv_em_ts_options d;
    memset(&d, 0xff, sizeof d);
    sv_em_ts_options_default(&d);
    assert_int_equal(d.version, 1);
    assert_int_equal(d.format, SV_EM_TS_RI);
    assert_int_equal(d.param, SV_EM_TS_S);
    assert_string_equal(d.unit, "GHz");
    assert_null(d.comment);
    sv_em_ts_options zero;
    memset(&zero, 0, sizeof zero);
    const sv_em_ts_options *variants[3] = {NULL, &zero, &d};
    double f[2] = {1e9, 2e9}, z0[2] = {50, 50};
    double complex s[8] = {0.1, 0.2 * I, 0.3, 0.4, 0.5, 0.6 * I, 0.7, 0.8};
    char *text[3];
    for (int v = 0; v < 3; v++) {
        char path[256];
        snprintf(path, sizeof path, "%s/defaults_%d.s2p", SV_BINARY_DIR, v);
        assert_int_equal(sv_em_touchstone_write(path, variants[v], 2, 2, f, s, z0), SV_OK);
        text[v] = slurp(path);
        unlink(path);
    }
    assert_string_equal(text[0], text[1]);
    assert_string_equal(text[0], text[2]);
    assert_non_null(strstr(text[0], "# GHz S RI R 50"));
    for (int v = 0; v < 3; v++) free(text[v]);
}

static void test_band(void **state)
{
    (void)state;
    sv_em_project *p = em_test_project(with_sweep), *q = em_test_project(without_sweep);
    sv_em_sweep b, given = {0};
    /* the project's section */
    assert_int_equal(sv_em_project_band(p, NULL, &b), SV_OK);
    assert_true(b.present && b.start_hz == 1e9 && b.stop_hz == 3e9 && b.points == 5 && b.tolerance == 1e-5);
    double fr[5];
    assert_int_equal(sv_em_band_frequencies(&b, fr), SV_OK);
    assert_true(fr[0] == 1e9 && fr[4] == 3e9);
    sv_assert_close(fr[1], 1.5e9, 1e-15, 0);
    /* the caller's values win, field by field */
    given.stop_hz = 2e9;
    given.tolerance = 1e-3;
    assert_int_equal(sv_em_project_band(p, &given, &b), SV_OK);
    assert_true(b.start_hz == 1e9 && b.stop_hz == 2e9 && b.points == 5 && b.tolerance == 1e-3);
    /* one point: stop = start */
    given = (sv_em_sweep){.start_hz = 2e9, .points = 1};
    assert_int_equal(sv_em_project_band(p, &given, &b), SV_OK);
    assert_true(b.points == 1 && b.stop_hz == 2e9);
    assert_int_equal(sv_em_band_frequencies(&b, fr), SV_OK);
    assert_true(fr[0] == 2e9);
    /* below start */
    given = (sv_em_sweep){.start_hz = 5e9};
    assert_int_equal(sv_em_project_band(p, &given, &b), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "below start"));
    /* no sweep section: all three needed, the tolerance defaults */
    assert_int_equal(sv_em_project_band(q, NULL, &b), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "sweep"));
    given = (sv_em_sweep){.start_hz = 1e9, .stop_hz = 2e9};
    assert_int_equal(sv_em_project_band(q, &given, &b), SV_ERR_ARG);
    given.points = 3;
    assert_int_equal(sv_em_project_band(q, &given, &b), SV_OK);
    assert_true(b.present && b.tolerance == 1e-4);
    /* arguments */
    assert_int_equal(sv_em_project_band(NULL, NULL, &b), SV_ERR_ARG);
    assert_int_equal(sv_em_project_band(p, NULL, NULL), SV_ERR_ARG);
    b.points = 0;
    assert_int_equal(sv_em_band_frequencies(&b, fr), SV_ERR_ARG);
    sv_em_project_destroy(p);
    sv_em_project_destroy(q);
}

/* S and the checks at many frequencies equal the one-frequency functions. */
static void test_y_to_s_all(void **state)
{
    (void)state;
    enum { P = 3, NF = 4 };
    sv_test_rng r;
    sv_test_rng_seed(&r, 7);
    double complex y[NF * P * P], s[NF * P * P];
    double z0[P] = {50, 75, 25};
    for (int q = 0; q < NF * P * P; q++) y[q] = 0.01 * (sv_test_uniform(&r) + I * sv_test_uniform(&r));
    sv_em_s_checks c;
    assert_int_equal(sv_em_y_to_s_all(P, NF, y, z0, s, &c), SV_OK);
    double recip = 0, smax = 0;
    for (int i = 0; i < NF; i++) {
        double complex one[P * P];
        assert_int_equal(sv_em_y_to_s(P, y + i * P * P, z0, one), SV_OK);
        for (int q = 0; q < P * P; q++) assert_true(one[q] == s[i * P * P + q]);
        double sv;
        assert_int_equal(sv_em_max_singular_value(P, one, &sv), SV_OK);
        smax = fmax(smax, sv);
        recip = fmax(recip, sv_em_reciprocity_error(P, one));
    }
    assert_true(c.reciprocity == recip && c.max_singular == smax);
    assert_true(recip > 0); /* random Y: not reciprocal */
    assert_int_equal(sv_em_y_to_s_all(P, NF, y, z0, s, NULL), SV_OK);
    /* a failure at one frequency is reported, not skipped */
    y[2 * P * P] = NAN;
    assert_int_equal(sv_em_y_to_s_all(P, NF, y, z0, s, &c), SV_ERR_NONFINITE);
    assert_int_equal(sv_em_y_to_s_all(0, NF, y, z0, s, &c), SV_ERR_ARG);
}

/* A Touchstone file read back with a context: everything it allocated is
 * counted and released by sv_em_touchstone_destroy. */
static void test_touchstone_result(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/result.s2p", SV_BINARY_DIR);
    double f[2] = {1e9, 2e9}, z0[2] = {50, 75};
    double complex s[8] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8};
    sv_em_ts_options o;
    sv_em_ts_options_default(&o);
    o.version = 2;
    assert_int_equal(sv_em_touchstone_write(path, &o, 2, 2, f, s, z0), SV_OK);
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    sv_em_touchstone *t;
    assert_int_equal(sv_em_touchstone_read(ctx, path, &t), SV_OK);
    assert_true(t->p == 2 && t->nf == 2 && t->version == 2 && t->param == SV_EM_TS_S);
    assert_true(t->z0[0] == 50 && t->z0[1] == 75);
    assert_true(sv_ctx_memory_current(ctx) > 0);
    sv_em_touchstone_destroy(t);
    assert_int_equal(sv_ctx_memory_current(ctx), 0);
    sv_em_touchstone_destroy(NULL);
    unlink(path);
    t = (sv_em_touchstone *)1;
    assert_int_equal(sv_em_touchstone_read(ctx, path, &t), SV_ERR_IO);
    assert_null(t);
    assert_int_equal(sv_em_touchstone_read(ctx, NULL, &t), SV_ERR_ARG);
    assert_int_equal(sv_em_touchstone_read(ctx, path, NULL), SV_ERR_ARG);
    /* not a whole number of records */
    FILE *fp = fopen(path, "w");
    fprintf(fp, "# GHz S RI R 50\n1 0.1 0.2 0.3\n");
    fclose(fp);
    assert_int_equal(sv_em_touchstone_read(ctx, path, &t), SV_ERR_PARSE);
    assert_int_equal(sv_ctx_memory_current(ctx), 0);
    unlink(path);
    sv_ctx_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_em_options_default),
        cmocka_unit_test(test_ts_options_default),
        cmocka_unit_test(test_band),
        cmocka_unit_test(test_y_to_s_all),
        cmocka_unit_test(test_touchstone_result),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
