#define _POSIX_C_SOURCE 200809L
/* Projects whose metal comes from a GDSII file ("gds" in docs/project-
 * files.md): the file found beside the project, the cells it covers (a
 * layout built record by record, its cells worked by hand), the fields'
 * checks and their messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "solvent/em.h"
#include "support_gds.h"
#include "sv_test.h"

static char dir[64];

/* A 100 µm grid of 6 × 4 cells: a feed in row 1 from the left edge (the
 * port's), and on layer 2 an off-grid rectangle. */
static void write_layout(void)
{
    gds_buf w = {0};
    tg_begin_lib(&w, 1e-6, 1e-9);
    tg_begin_str(&w, "BOARD");
    tg_boundary(&w, 1, 0, (const int32_t[]){0, 100000, 400000, 100000, 400000, 200000, 0, 200000}, 4);
    tg_box(&w, 1, 0, 300000, 200000, 400000, 400000); /* cells (3, 2), (3, 3) */
    tg_boundary(&w, 2, 0, (const int32_t[]){0, 100000, 140000, 100000, 140000, 260000, 0, 260000}, 4);
    tg_end_str(&w);
    tg_end_lib(&w);
    char path[128];
    snprintf(path, sizeof path, "%s/layout.gds", dir);
    FILE *f = fopen(path, "wb");
    assert_int_equal(fwrite(w.b, 1, w.len, f), w.len);
    fclose(f);
    gds_buf_free(&w);
}

static sv_status project(const char *gds, sv_em_project **p)
{
    char text[1024], path[128];
    snprintf(text, sizeof text,
             "{\"units\": \"um\", \"substrate\": {\"thickness\": 800, \"eps_r\": 4.4}, \"metal\": {\"conductivity\": "
             "\"inf\"}, \"grid\": {\"dx\": 100, \"dy\": 100, \"nx\": 6, \"ny\": 4}, %s, \"ports\": [{\"name\": \"P1\", "
             "\"side\": \"left\", \"x\": 0, \"y\": [100, 200], \"calibration\": \"none\"}]}",
             gds);
    snprintf(path, sizeof path, "%s/board.json", dir); /* a name in the folder: the base of relative paths */
    return sv_em_project_parse(NULL, text, strlen(text), path, p);
}

static void expect_metal(const sv_em_project *p, const char *const *rows)
{
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 6; i++)
            if (sv_em_project_metal(p, i, j) != (rows[3 - j][i] == '#'))
                fail_msg("cell (%d, %d): got %d", i, j, sv_em_project_metal(p, i, j));
}

static void test_metal_from_layout(void **state)
{
    (void)state;
    sv_em_project *p;
    assert_int_equal(project("\"gds\": {\"file\": \"layout.gds\", \"layer\": 1}", &p), SV_OK);
    const char *rows[] = {"...#..", "...#..", "####..", "......"};
    expect_metal(p, rows);
    char want[128];
    snprintf(want, sizeof want, "%s/layout.gds", dir);
    assert_string_equal(sv_em_project_pixels_file(p), want);
    sv_em_project_destroy(p);
    /* with rectangles: the union */
    assert_int_equal(project("\"gds\": {\"file\": \"layout.gds\", \"layer\": 1, \"cell\": \"BOARD\", \"datatype\": 0},"
                             " \"rectangles\": [{\"x\": [500, 600], \"y\": [0, 100]}]",
                             &p),
                     SV_OK);
    const char *rows2[] = {"...#..", "...#..", "####..", ".....#"};
    expect_metal(p, rows2);
    sv_em_project_destroy(p);
    /* layer 2's square is off the grid: refused, or snapped to the cells whose centres it covers */
    assert_int_equal(project("\"gds\": {\"file\": \"layout.gds\", \"layer\": 2}", &p), SV_ERR_PARSE);
    assert_non_null(strstr(sv_last_error(), "board.json: gds: "));
    assert_non_null(strstr(sv_last_error(), "layout.gds: structure BOARD, BOUNDARY at byte "));
    assert_non_null(strstr(sv_last_error(), "corner (0.00014, 0.0001) m is off the grid's lines (1.4, 1 cells"));
    assert_int_equal(project("\"gds\": {\"file\": \"layout.gds\", \"layer\": 2, \"snap\": true}", &p), SV_OK);
    const char *rows3[] = {"......", "#.....", "#.....", "......"}; /* centres x 50 (not 150), y 150 and 250 */
    expect_metal(p, rows3);
    sv_em_project_destroy(p);
}

static void refused_as(const char *gds, sv_status status, const char *what)
{
    sv_em_project *p = NULL;
    assert_int_equal(project(gds, &p), status);
    assert_null(p);
    if (!strstr(sv_last_error(), what)) fail_msg("\"%s\" lacks \"%s\"", sv_last_error(), what);
}

static void refused(const char *gds, const char *what) { refused_as(gds, SV_ERR_PARSE, what); }

static void test_fields_checked(void **state)
{
    (void)state;
    refused("\"gds\": {\"file\": \"layout.gds\"}", "gds.layer: required field is missing");
    refused("\"gds\": {\"file\": \"layout.gds\", \"layer\": 1, \"colour\": 3}",
            "gds.colour: unknown field (expected one of: file, cell, layer, datatype, snap)");
    refused("\"gds\": {\"file\": \"layout.gds\", \"layer\": 70000}", "gds.layer = 70000: expected an integer from 0 to 65535");
    refused("\"gds\": {\"file\": \"layout.gds\", \"layer\": 1, \"snap\": 1}", "gds.snap = 1: expected true or false");
    refused("\"gds\": {\"file\": \"\", \"layer\": 1}", "gds.file = \"\": expected the path of a GDSII file");
    refused_as("\"gds\": {\"file\": \"none.gds\", \"layer\": 1}", SV_ERR_IO, "none.gds: cannot open");
    refused("\"gds\": {\"file\": \"layout.gds\", \"layer\": 1, \"cell\": \"TOP\"}",
            "no structure \"TOP\" (the file has BOARD)");
    refused("\"gds\": {\"file\": \"layout.gds\", \"layer\": 5}", "pixels/rectangles/gds: no metal cell");
    refused("\"gds\": {\"file\": \"layout.gds\", \"layer\": 1}, \"pixels\": {\"csv\": \"map.csv\"}",
            "a project reads its metal from one file: pixels.csv or gds");
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/sv_gds_projectXXXXXX");
    if (!mkdtemp(dir)) return -1;
    write_layout();
    char path[128];
    snprintf(path, sizeof path, "%s/map.csv", dir);
    FILE *f = fopen(path, "w");
    fputs("0,0,0,0,0,0\n1,1,0,0,0,0\n1,1,0,0,0,0\n0,0,0,0,0,0\n", f);
    fclose(f);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/layout.gds", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/map.csv", dir);
    unlink(path);
    rmdir(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metal_from_layout),
        cmocka_unit_test(test_fields_checked),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
