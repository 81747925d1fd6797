/* Design specs: a valid spec read back field by field (region cells,
 * default frequencies computed by hand from the rule in docs/design.md,
 * start maps), errors that name the field, and the constraints' count on
 * maps drawn by hand. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "solvent/design.h"
#include "sv_test.h"

#define DATA SV_SOURCE_DIR "/tests/design/data"

static sv_status parse(const char *body, sv_design_spec **out)
{
    char text[4096];
    snprintf(text, sizeof text, "{\"board\": \"board.json\", %s}", body);
    return sv_design_spec_parse(NULL, text, strlen(text), "spec.json", DATA, out);
}

static const char *masks = "\"masks\": [{\"s\": \"S21\", \"start\": 1, \"stop\": 2, \"bound_db\": -1, \"type\": \"min\"},"
                           " {\"s\": \"S11\", \"start\": 3, \"stop\": 7, \"bound_db\": -10, \"type\": \"max\", \"weight\": 2}]";

static void test_valid(void **state)
{
    (void)state;
    char body[2048];
    snprintf(body, sizeof body, "\"region\": {\"rectangles\": [{\"columns\": [4, 6], \"rows\": [1, 3]}]}, %s,"
             " \"frequencies\": {\"points\": 10}, \"passes\": 2, \"time_budget\": 5", masks);
    sv_design_spec *s;
    assert_int_equal(parse(body, &s), SV_OK);
    /* rows count from the top: rows 1..3 of 5 are j = 3..1 */
    const unsigned char *reg = sv_design_spec_region(s);
    int n = 0;
    for (int j = 0; j < 5; j++)
        for (int i = 0; i < 11; i++) {
            int in = reg[i + 11 * j];
            n += in;
            assert_int_equal(in, i >= 4 && i <= 6 && j >= 1 && j <= 3);
        }
    assert_int_equal(n, 9);
    /* the bands share 10 points by width (1 : 4 GHz): 2 over 1-2 GHz, 8 over 3-7 GHz */
    int nf;
    const double *f = sv_design_spec_frequencies(s, &nf);
    assert_int_equal(nf, 10);
    sv_assert_close(f[0], 1e9, 1e-15, 1);
    sv_assert_close(f[1], 2e9, 1e-15, 1);
    for (int k = 0; k < 8; k++) sv_assert_close(f[2 + k], 3e9 + 4e9 * k / 7.0, 1e-15, 1);
    int nm;
    const sv_design_mask *m = sv_design_spec_masks(s, &nm);
    assert_int_equal(nm, 2);
    assert_int_equal(m[0].out, 1);
    assert_int_equal(m[0].in, 0);
    assert_int_equal(m[0].sense, SV_DESIGN_MIN);
    assert_true(m[1].weight == 2 && m[1].sense == SV_DESIGN_MAX && m[1].bound_db == -10);
    assert_int_equal(sv_design_spec_passes(s), 2);
    assert_true(sv_design_spec_time_budget(s) == 5);
    /* start "metal" (the default): the region metal, the board as drawn elsewhere */
    const unsigned char *st = sv_design_spec_start(s);
    const sv_em_project *full = sv_design_spec_full(s);
    for (int c = 0; c < 55; c++) {
        int launch = (c / 11 >= 1 && c / 11 <= 3) && (c % 11 <= 3 || c % 11 >= 7);
        assert_int_equal(st[c], reg[c] || launch);
        assert_int_equal(sv_em_project_metal(full, c % 11, c / 11), reg[c] || launch);
        assert_int_equal(sv_em_project_metal(sv_design_spec_board(s), c % 11, c / 11), launch);
    }
    sv_design_spec_destroy(s);
}

static void test_random_start_symmetric(void **state)
{
    (void)state;
    char body[2048];
    snprintf(body, sizeof body, "\"region\": {\"rectangles\": [{\"columns\": [4, 6], \"rows\": [1, 3]}]}, %s,"
             " \"symmetry\": \"xy\", \"start\": {\"random\": {\"seed\": 7, \"fill\": 0.5}}", masks);
    sv_design_spec *s;
    assert_int_equal(parse(body, &s), SV_OK);
    const unsigned char *st = sv_design_spec_start(s);
    for (int j = 1; j <= 3; j++)
        for (int i = 4; i <= 6; i++) {
            assert_int_equal(st[i + 11 * j], st[(10 - i) + 11 * j]);
            assert_int_equal(st[i + 11 * j], st[i + 11 * (4 - j)]);
        }
    sv_design_spec_destroy(s);
}

static void expect_error(const char *body, const char *field)
{
    sv_design_spec *s = NULL;
    sv_status st = parse(body, &s);
    if (st == SV_OK || !strstr(sv_last_error(), field))
        fail_msg("expected an error naming %s, got %d: %s", field, st, sv_last_error());
    assert_null(s);
}

static void test_errors(void **state)
{
    (void)state;
    char body[2048];
    const char *reg = "\"region\": {\"rectangles\": [{\"columns\": [4, 6], \"rows\": [1, 3]}]}";
    snprintf(body, sizeof body, "%s, %s, \"symmetry\": \"z\"", reg, masks);
    expect_error(body, "symmetry");
    snprintf(body, sizeof body, "\"region\": {\"rectangles\": [{\"columns\": [4, 11], \"rows\": [1, 3]}]}, %s", masks);
    expect_error(body, "region.rectangles[0].columns");
    snprintf(body, sizeof body, "%s, %s, \"pases\": 3", reg, masks);
    expect_error(body, "pases");
    snprintf(body, sizeof body, "%s, \"masks\": [{\"s\": \"S31\", \"start\": 1, \"stop\": 2, \"bound_db\": -1, \"type\": \"min\"}]", reg);
    expect_error(body, "masks[0].s");
    snprintf(body, sizeof body, "%s, \"masks\": [{\"s\": \"S21\", \"start\": 2, \"stop\": 1, \"bound_db\": -1, \"type\": \"min\"}]", reg);
    expect_error(body, "masks[0].stop");
    snprintf(body, sizeof body, "%s", reg);
    expect_error(body, "masks");
    snprintf(body, sizeof body, "\"region\": {\"rectangles\": [{\"columns\": [0, 6], \"rows\": [1, 3]}]}, %s", masks);
    expect_error(body, "carries a port");
    snprintf(body, sizeof body, "\"region\": {\"rectangles\": [{\"columns\": [4, 6], \"rows\": [1, 3]}, {\"columns\": [4, 4], \"rows\": [0, 0]}]}, %s, \"symmetry\": \"x\"", masks);
    expect_error(body, "not symmetric");
    snprintf(body, sizeof body, "%s, %s, \"constraints\": {\"dc\": [{\"ports\": [1, 3], \"connected\": true}]}", reg, masks);
    expect_error(body, "constraints.dc[0].ports");
}

/* A caller's thread count (--threads, Python's threads=) replaces the
 * spec's; 0 keeps it; a count out of range is refused. */
static void test_threads_precedence(void **state)
{
    (void)state;
    char body[2048];
    snprintf(body, sizeof body, "\"region\": {\"rectangles\": [{\"columns\": [4, 6], \"rows\": [1, 3]}]}, %s, \"threads\": 3",
             masks);
    sv_design_spec *s;
    assert_int_equal(parse(body, &s), SV_OK);
    assert_int_equal(sv_design_spec_threads(s), 3);
    assert_int_equal(sv_design_spec_set_threads(s, 0), SV_OK);
    assert_int_equal(sv_design_spec_threads(s), 3);
    assert_int_equal(sv_design_spec_set_threads(s, 2), SV_OK);
    assert_int_equal(sv_design_spec_threads(s), 2);
    assert_int_equal(sv_design_spec_set_threads(s, -1), SV_ERR_ARG);
    assert_int_equal(sv_design_spec_threads(s), 2);
    sv_design_spec_destroy(s);
}

static void test_violations(void **state)
{
    (void)state;
    char body[2048];
    snprintf(body, sizeof body, "\"region\": {\"rectangles\": [{\"columns\": [4, 6], \"rows\": [1, 3]}]}, %s,"
             " \"constraints\": {\"dc\": [{\"ports\": [\"P1\", 2], \"connected\": true}]}", masks);
    sv_design_spec *s;
    assert_int_equal(parse(body, &s), SV_OK);
    unsigned char map[55];
    memcpy(map, sv_design_spec_start(s), 55); /* all metal: joined, no corner */
    assert_int_equal(sv_design_spec_violations(s, map), 0);
    /* the region's middle row removed: the launches apart (1) */
    for (int i = 4; i <= 6; i++) map[i + 11 * 1] = map[i + 11 * 2] = map[i + 11 * 3] = 0;
    assert_int_equal(sv_design_spec_violations(s, map), 1);
    /* one pixel at (4, 2) beside the left launch, one at (5, 3) touching it at a corner: one corner contact, still apart */
    map[4 + 11 * 2] = 1;
    map[5 + 11 * 3] = 1;
    assert_int_equal(sv_design_spec_violations(s, map), 2);
    /* a path along row j = 2: joined; the corner contact of (5, 3) with (4, 2) is now bridged by (5, 2) */
    map[5 + 11 * 2] = map[6 + 11 * 2] = 1;
    assert_int_equal(sv_design_spec_violations(s, map), 0);
    /* (6, 3) with (5, 2) removed and (6, 2) kept: (5, 3) touches (6, 2) ... by corner, and (4, 2)-(5, 3) again */
    map[5 + 11 * 2] = 0;
    assert_int_equal(sv_design_spec_violations(s, map), 1 /* corner (4,2)-(5,3) */ + 1 /* corner (5,3)-(6,2) */ + 1 /* apart */);
    sv_design_spec_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_valid), cmocka_unit_test(test_random_start_symmetric),
                                       cmocka_unit_test(test_errors), cmocka_unit_test(test_violations),
                                       cmocka_unit_test(test_threads_precedence)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
