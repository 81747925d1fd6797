#define _POSIX_C_SOURCE 200809L
/* The stream's encoding against the GDSII Stream Format Manual, release
 * 6.0 ("Stream Record Format", "Record Descriptions"): the 8-byte excess-64
 * real worked by hand, and a whole file's bytes assembled by hand. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support_gds.h"
#include "sv_test.h"

static void assert_bytes(const unsigned char *got, const unsigned char *want, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        if (got[k] != want[k]) fail_msg("byte %zu: got 0x%02X, expected 0x%02X", k, got[k], want[k]);
    }
}

/* value = (−1)^S · 0.M · 16^(E − 64), 1/16 ≤ 0.M < 1 (the manual's 8-byte real).
 *   1e-3 = 0.256 · 16^-2: E = 62 = 0x3E; the double nearest 1e-3 is
 *          1e-3 + 2.08e-20, whose 0.M · 2^56 is the whole number
 *          18 446 744 073 709 552 = 0x4189374BC6A7F0 (0.256 · 2^56 =
 *          18 446 744 073 709 551.616, truncated 0x…EF, is 1e-3 itself,
 *          as the files of some writers have it).
 *   1e-9 = 0.268435456 · 16^-7: E = 57 = 0x39; the double's 0.M · 2^56 =
 *          19 342 813 113 834 068 = 0x44B82FA09B5A54.
 *   1    = 0.0625 · 16^1: E = 0x41, M = 0x10000000000000.
 *  −2.5  = −0.15625 · 16: S = 1, E = 0x41, M = 0x28000000000000.
 *   0.5  = 0.5 · 16^0: E = 0x40, M = 0x80000000000000. */
static void test_real8_by_hand(void **state)
{
    (void)state;
    struct { double v; unsigned char b[8]; } tab[] = {
        {1e-3, {0x3E, 0x41, 0x89, 0x37, 0x4B, 0xC6, 0xA7, 0xF0}},
        {1e-9, {0x39, 0x44, 0xB8, 0x2F, 0xA0, 0x9B, 0x5A, 0x54}},
        {1.0, {0x41, 0x10, 0, 0, 0, 0, 0, 0}},
        {-2.5, {0xC1, 0x28, 0, 0, 0, 0, 0, 0}},
        {0.5, {0x40, 0x80, 0, 0, 0, 0, 0, 0}},
        {0.0, {0, 0, 0, 0, 0, 0, 0, 0}},
    };
    for (size_t k = 0; k < sizeof tab / sizeof tab[0]; k++) {
        unsigned char b[8];
        assert_int_equal(gds_real8_encode(tab[k].v, b), 0);
        assert_bytes(b, tab[k].b, 8);
        assert_true(gds_real8_decode(tab[k].b) == tab[k].v);
    }
    /* the truncated forms other writers put in UNITS read as the same doubles */
    const unsigned char milli_trunc[8] = {0x3E, 0x41, 0x89, 0x37, 0x4B, 0xC6, 0xA7, 0xEF};
    assert_true(gds_real8_decode(milli_trunc) == 1e-3);
    const unsigned char nano_trunc[8] = {0x39, 0x44, 0xB8, 0x2F, 0xA0, 0x9B, 0x5A, 0x52};
    assert_true(fabs(gds_real8_decode(nano_trunc) - 1e-9) <= 1e-9 * 2.3e-16);
    unsigned char b[8];
    assert_int_equal(gds_real8_encode(INFINITY, b), -1);
    assert_int_equal(gds_real8_encode(1e80, b), -1); /* 16^63 ≈ 7.2e75 is the largest */
}

/* Every double in the format's range is exactly an excess-64 real (53
 * significand bits fit in 56): encoding then decoding gives it back. */
static void test_real8_exact(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 36);
    for (int k = 0; k < 100000; k++) {
        double v = ldexp(1 + 0.5 * sv_test_uniform(&r), (int)(120 * sv_test_uniform(&r))) *
                   (sv_test_uniform(&r) < 0 ? -1 : 1);
        unsigned char b[8];
        assert_int_equal(gds_real8_encode(v, b), 0);
        assert_true((b[1] >> 4) != 0); /* normalised: the first hex digit of 0.M is not 0 */
        assert_true(gds_real8_decode(b) == v);
    }
}

/* One cell of 1 µm at the origin, written with the defaults, against the
 * file assembled from the manual's record descriptions. */
static void test_file_bytes(void **state)
{
    (void)state;
    const unsigned char want[] = {
        0x00, 0x06, 0x00, 0x02, 0x02, 0x58, /* HEADER, INT2: version 600 */
        0x00, 0x1C, 0x01, 0x02,             /* BGNLIB, INT2 × 12: 1970-01-01 00:00:00 twice */
        0x07, 0xB2, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0x07, 0xB2, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0,
        0x00, 0x0C, 0x02, 0x06, 'S', 'O', 'L', 'V', 'E', 'N', 'T', 0, /* LIBNAME, ASCII, padded */
        0x00, 0x14, 0x03, 0x05,                                       /* UNITS, REAL8 × 2 */
        0x3E, 0x41, 0x89, 0x37, 0x4B, 0xC6, 0xA7, 0xF0,               /* 1e-3 user units */
        0x39, 0x44, 0xB8, 0x2F, 0xA0, 0x9B, 0x5A, 0x54,               /* 1e-9 m */
        0x00, 0x1C, 0x05, 0x02,                                       /* BGNSTR */
        0x07, 0xB2, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0x07, 0xB2, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0,
        0x00, 0x08, 0x06, 0x06, 'T', 'O', 'P', 0,                     /* STRNAME */
        0x00, 0x04, 0x08, 0x00,                                       /* BOUNDARY */
        0x00, 0x06, 0x0D, 0x02, 0x00, 0x01,                           /* LAYER 1 */
        0x00, 0x06, 0x0E, 0x02, 0x00, 0x00,                           /* DATATYPE 0 */
        0x00, 0x2C, 0x10, 0x03,                                       /* XY, INT4 × 10 */
        0, 0, 0, 0, 0, 0, 0, 0,                                       /* (0, 0) */
        0, 0, 0x03, 0xE8, 0, 0, 0, 0,                                 /* (1000, 0) */
        0, 0, 0x03, 0xE8, 0, 0, 0x03, 0xE8,                           /* (1000, 1000) */
        0, 0, 0, 0, 0, 0, 0x03, 0xE8,                                 /* (0, 1000) */
        0, 0, 0, 0, 0, 0, 0, 0,                                       /* closing (0, 0) */
        0x00, 0x04, 0x11, 0x00,                                       /* ENDEL */
        0x00, 0x04, 0x07, 0x00,                                       /* ENDSTR */
        0x00, 0x04, 0x04, 0x00,                                       /* ENDLIB */
    };
    char path[] = "/tmp/sv_gds_bytesXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    sv_gds_grid g = {1, 1, 1e-6, 1e-6, 0, 0};
    unsigned char cell = 1;
    assert_int_equal(sv_gds_write_cells(NULL, path, &g, &cell, SV_GDS_DEFAULT_LAYER, 0, NULL), SV_OK);
    FILE *f = fopen(path, "rb");
    unsigned char got[512];
    size_t n = fread(got, 1, sizeof got, f);
    fclose(f);
    unlink(path);
    assert_int_equal(n, sizeof want);
    assert_bytes(got, want, n);
}

/* Nothing is left behind when a write is refused: a coordinate that is no
 * whole number of database units. */
static void test_refused_write(void **state)
{
    (void)state;
    char path[] = "/tmp/sv_gds_refusedXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "old", 3), 3);
    close(fd);
    sv_gds_grid g = {1, 1, 1.25e-9, 1e-6, 0, 0};
    unsigned char cell = 1;
    assert_int_equal(sv_gds_write_cells(NULL, path, &g, &cell, 1, 0, NULL), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "whole number of database units"));
    FILE *f = fopen(path, "rb");
    char got[8] = {0};
    assert_int_equal(fread(got, 1, sizeof got, f), 3);
    fclose(f);
    unlink(path);
    assert_string_equal(got, "old");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real8_by_hand),
        cmocka_unit_test(test_real8_exact),
        cmocka_unit_test(test_file_bytes),
        cmocka_unit_test(test_refused_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
