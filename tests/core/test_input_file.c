/* sv_input_file_read, the one reader of whole input files (projects, pixel
 * maps, GDSII layouts): a file of exactly the limit is read byte for byte,
 * one byte more is refused naming the limit, across the buffer's doublings
 * (from 4096 bytes) and below the first. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "solvent/core.h"
#include "sv_test.h"

/* A file of n bytes, byte k = k mod 251 (so no run repeats a doubling). */
static void write_file(const char *path, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (size_t k = 0; k < n; k++) assert_int_equal(fputc((int)(k % 251), f), (int)(k % 251));
    assert_int_equal(fclose(f), 0);
}

static void test_limit_is_inclusive(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/sv_input_file_%d", (int)getpid());
    /* limits below the first buffer, at it, and several doublings above */
    const size_t limits[] = {0, 10, 4095, 4096, 4097, 10000, 65536};
    for (size_t q = 0; q < sizeof limits / sizeof limits[0]; q++) {
        size_t max = limits[q];
        write_file(path, max);
        char *buf = NULL;
        size_t len = 99;
        assert_int_equal(sv_input_file_read(path, "the file", max, "a test file", &buf, &len), SV_OK);
        assert_int_equal(len, max);
        for (size_t k = 0; k < max; k++)
            if ((unsigned char)buf[k] != k % 251) fail_msg("limit %zu: byte %zu is %d", max, k, buf[k]);
        assert_int_equal(buf[max], 0);
        free(buf);
        write_file(path, max + 1);
        assert_int_equal(sv_input_file_read(path, "the file", max, "a test file", &buf, &len), SV_ERR_PARSE);
        assert_null(buf);
        char want[96];
        snprintf(want, sizeof want, "the file: larger than %zu bytes: not a test file", max);
        if (!strstr(sv_last_error(), want)) fail_msg("\"%s\" lacks \"%s\"", sv_last_error(), want);
    }
    remove(path);
}

static void test_limit_named_in_units(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/sv_input_file_u%d", (int)getpid());
    write_file(path, 3);
    char *buf = NULL;
    size_t len = 0;
    /* a limit of whole MiB or GiB is named so */
    assert_int_equal(sv_input_file_read(path, "p", (size_t)1 << 30, "a project file", &buf, &len), SV_OK);
    assert_int_equal(len, 3);
    free(buf);
    write_file(path, ((size_t)1 << 20) + 1);
    assert_int_equal(sv_input_file_read(path, "p", (size_t)1 << 20, "a pixel map", &buf, &len), SV_ERR_PARSE);
    assert_non_null(strstr(sv_last_error(), "p: larger than 1 MiB: not a pixel map"));
    remove(path);
    assert_int_equal(sv_input_file_read(path, "gone", 10, "x", &buf, &len), SV_ERR_IO);
    assert_non_null(strstr(sv_last_error(), "gone: cannot open"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limit_is_inclusive),
        cmocka_unit_test(test_limit_named_in_units),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
