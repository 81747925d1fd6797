/* Matrix Market pattern files (the reader behind `solvent codegen`): what
 * is read, and what is refused with the line number — in particular the two
 * silent misreadings: entries beyond the announced count (the pattern
 * would become a strict subset of the file's) and lines longer than the
 * buffer (split into a phantom entry). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "solvent/sparse.h"
#include "sv_test.h"

#define HEADER "%%MatrixMarket matrix coordinate pattern general\n"

/* text into a temporary file, read back: the status; *p the pattern on success. */
static sv_status read_text(const char *text, sv_sparse_pattern **p)
{
    char path[] = "/tmp/sv_pattern_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    sv_status s = sv_sparse_pattern_read_mm(NULL, path, p);
    unlink(path);
    return s;
}

static void expect_error(const char *text, sv_status want, const char *fragment)
{
    sv_sparse_pattern *p = NULL;
    assert_int_equal(read_text(text, &p), want);
    assert_null(p);
    if (!strstr(sv_last_error(), fragment)) fail_msg("message '%s' lacks '%s'", sv_last_error(), fragment);
}

static void test_reads_entries(void **state)
{
    (void)state;
    sv_sparse_pattern *p = NULL;
    assert_int_equal(read_text(HEADER "% a comment\n3 3 3\n1 1\n\n2 3\n3 2 % trailing text\n% end\n\n", &p), SV_OK);
    assert_int_equal(sv_sparse_pattern_n(p), 3);
    assert_true(sv_sparse_pattern_find(p, 0, 0) >= 0);
    assert_true(sv_sparse_pattern_find(p, 1, 2) >= 0);
    assert_true(sv_sparse_pattern_find(p, 2, 1) >= 0);
    assert_true(sv_sparse_pattern_find(p, 0, 1) < 0);
    sv_sparse_pattern_destroy(p);
    /* symmetric: the mirrored entries are implied; no final newline */
    assert_int_equal(read_text("%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 4.0\n2 1 -1.5", &p), SV_OK);
    assert_true(sv_sparse_pattern_find(p, 0, 1) >= 0);
    assert_true(sv_sparse_pattern_find(p, 1, 0) >= 0);
    sv_sparse_pattern_destroy(p);
}

static void test_entries_beyond_the_count(void **state)
{
    (void)state;
    expect_error(HEADER "2 2 2\n1 1\n2 2\n1 2\n", SV_ERR_PARSE, "line 5: more entries than the 2 announced on line 2");
    expect_error(HEADER "% c\n2 2 1\n1 1\n% c\n2 2\n", SV_ERR_PARSE, "line 6: more entries than the 1 announced on line 3");
    expect_error(HEADER "2 2 3\n1 1\n2 2\n", SV_ERR_PARSE, "3 entries announced, 2 found");
}

static void test_long_lines(void **state)
{
    (void)state;
    /* 1023 characters and a newline: the longest line there may be */
    char text[4096];
    snprintf(text, sizeof text, "%s2 2 2\n1 1%1020s\n2 2\n", HEADER, "");
    sv_sparse_pattern *p = NULL;
    assert_int_equal(read_text(text, &p), SV_OK);
    assert_true(sv_sparse_pattern_find(p, 1, 1) >= 0);
    sv_sparse_pattern_destroy(p);
    /* one more: refused, not split into "1 1" and a phantom "2 ..." entry */
    snprintf(text, sizeof text, "%s2 2 2\n1 1%1020s2\n2 2\n", HEADER, "");
    expect_error(text, SV_ERR_PARSE, "line 3: longer than 1023 characters");
    snprintf(text, sizeof text, "%s2 2 2\n2 %01100d\n2 2\n", HEADER, 2);
    expect_error(text, SV_ERR_PARSE, "line 3: longer than 1023 characters");
    snprintf(text, sizeof text, "%s%%%1100s\n2 2 1\n1 1\n", HEADER, "");
    expect_error(text, SV_ERR_PARSE, "line 2: longer than 1023 characters");
    snprintf(text, sizeof text, "%%%%MatrixMarket matrix coordinate pattern general%1100s\n2 2 1\n1 1\n", "");
    expect_error(text, SV_ERR_PARSE, "line 1: longer than 1023 characters");
}

static void test_other_errors(void **state)
{
    (void)state;
    expect_error("%%MatrixMarket matrix array real general\n2 2\n", SV_ERR_PARSE, "line 1");
    expect_error(HEADER "2 3 1\n1 1\n", SV_ERR_PARSE, "line 2");
    expect_error(HEADER "2 2 1\n3 1\n", SV_ERR_PATTERN, "line 3: entry (3, 1) outside 1..2");
    expect_error(HEADER "2 2 1\n1 x\n", SV_ERR_PARSE, "line 3: expected 'i j'");
    expect_error(HEADER, SV_ERR_PARSE, "expected 'rows cols entries'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_entries),
        cmocka_unit_test(test_entries_beyond_the_count),
        cmocka_unit_test(test_long_lines),
        cmocka_unit_test(test_other_errors),
    };
    return cmocka_run_group_tests_name("pattern_io", tests, NULL, NULL);
}
