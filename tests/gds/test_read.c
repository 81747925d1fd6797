/* Reading: references flattened with their transformations, paths, boxes,
 * layer selection and snapping, each against cells worked by hand from the
 * manual's definitions (GDSII Stream Format Manual, release 6.0: STRANS,
 * MAG, ANGLE, AREF, PATHTYPE); and malformed files refused with the byte
 * offset. Units: 1 µm user unit, 1 nm database unit, grid cells of 1 µm
 * (1000 database units) from (0, 0), 10 × 10. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support_gds.h"
#include "sv_test.h"

#define N 10
static const sv_gds_grid G = {N, N, 1e-6, 1e-6, 0, 0};

/* The L of cells (0, 0), (1, 0), (0, 1) in its own structure's frame. */
static const int32_t L_SHAPE[] = {0, 0, 2000, 0, 2000, 1000, 1000, 1000, 1000, 2000, 0, 2000};

static void lib_with_l(gds_buf *w)
{
    tg_begin_lib(w, 1e-6, 1e-9);
    tg_begin_str(w, "L");
    tg_boundary(w, 1, 0, L_SHAPE, 6);
    tg_end_str(w);
}

static void expect_map(const unsigned char *got, const char *const *rows)
{
    unsigned char want[N * N];
    tg_map(rows, N, N, want);
    for (int j = N - 1; j >= 0; j--)
        for (int i = 0; i < N; i++)
            if (got[i + N * j] != want[i + N * j]) fail_msg("cell (%d, %d): got %d, expected %d", i, j, got[i + N * j],
                                                            want[i + N * j]);
}

static void test_sref_transforms(void **state)
{
    (void)state;
    gds_buf w = {0};
    lib_with_l(&w);
    tg_begin_str(&w, "TOP");
    /* 90°: (x, y) → (−y, x), cell (i, j) → (−j−1, i); at (5, 5): (4, 5), (4, 6), (3, 5) */
    tg_ref(&w, "L", 0, 1, 90, 0, 0, (const int32_t[]){5000, 5000});
    /* reflection about x, then 90°: cell (i, j) → (j, i); at (1, 1): (1, 1), (1, 2), (2, 1) */
    tg_ref(&w, "L", 1, 1, 90, 0, 0, (const int32_t[]){1000, 1000});
    /* magnification 2 and 180°: x ∈ (−4, 0] × y ∈ (−2, 0] and (−2, 0] × (−4, −2]; at (10, 4) */
    tg_ref(&w, "L", 0, 2, 180, 0, 0, (const int32_t[]){10000, 4000});
    tg_end_str(&w);
    tg_end_lib(&w);
    unsigned char m[N * N];
    assert_int_equal(tg_cells(&w, NULL, 1, 0, &G, 0, m), SV_OK);
    const char *rows[] = {"..........", "..........", "..........", "....#.....", "...##.....",
                          "..........", "......####", ".#....####", ".##.....##", "........##"};
    expect_map(m, rows);
    gds_buf_free(&w);
}

static void test_aref_and_nesting(void **state)
{
    (void)state;
    gds_buf w = {0};
    lib_with_l(&w);
    tg_begin_str(&w, "SQ");
    tg_boundary(&w, 1, 0, (const int32_t[]){0, 0, 1000, 0, 1000, 1000, 0, 1000}, 4);
    tg_end_str(&w);
    tg_begin_str(&w, "MID"); /* the L at (1, 0) */
    tg_ref(&w, "L", 0, 1, 0, 0, 0, (const int32_t[]){1000, 0});
    tg_end_str(&w);
    tg_begin_str(&w, "TOP");
    /* 3 columns 3 µm apart, 2 rows 3 µm apart, from (0, 4): lattice points in TOP's frame */
    tg_ref(&w, "L", 0, 1, 0, 3, 2, (const int32_t[]){0, 4000, 9000, 4000, 0, 10000});
    /* MID turned 90° at (10, 0): MID's cells (1, 0), (2, 0), (1, 1) → (−j−1, i) + (10, 0) = (9, 1), (9, 2), (8, 1) */
    tg_ref(&w, "MID", 0, 1, 90, 0, 0, (const int32_t[]){10000, 0});
    /* the square turned 90° (cell (0, 0) → (−1, 0)), 2 columns 2 µm apart from (2, 1), one row */
    tg_ref(&w, "SQ", 0, 1, 90, 2, 1, (const int32_t[]){2000, 1000, 6000, 1000, 2000, 3000});
    tg_end_str(&w);
    tg_end_lib(&w);
    unsigned char m[N * N];
    assert_int_equal(tg_cells(&w, "TOP", 1, 0, &G, 0, m), SV_OK);
    const char *rows[] = {"..........", "#..#..#...", "##.##.##..", "..........", "#..#..#...",
                          "##.##.##..", "..........", ".........#", ".#.#....##", ".........."};
    expect_map(m, rows);
    /* without a name: TOP, the one structure no other references */
    unsigned char m2[N * N];
    assert_int_equal(tg_cells(&w, NULL, 1, 0, &G, 0, m2), SV_OK);
    assert_memory_equal(m, m2, sizeof m);
    gds_buf_free(&w);
}

/* Each polygon names the structure it was drawn in, however the
 * references interleave (the names are kept once per structure). */
static void test_polygons_name_their_structure(void **state)
{
    (void)state;
    gds_buf w = {0};
    lib_with_l(&w);
    tg_begin_str(&w, "TOP");
    tg_box(&w, 1, 0, 5000, 5000, 6000, 6000);
    tg_ref(&w, "L", 0, 1, 0, 0, 0, (const int32_t[]){0, 0});
    tg_box(&w, 1, 0, 7000, 7000, 8000, 8000);
    tg_ref(&w, "L", 0, 1, 0, 0, 0, (const int32_t[]){3000, 0});
    tg_end_str(&w);
    tg_end_lib(&w);
    sv_gds_library *lib;
    assert_int_equal(sv_gds_parse(NULL, w.b, w.len, "n.gds", &lib), SV_OK);
    sv_gds_select sel = {NULL, 1, 0};
    sv_gds_shapes *s;
    assert_int_equal(sv_gds_flatten(lib, &sel, &s), SV_OK);
    const char *want[] = {"TOP", "L", "TOP", "L"}; /* the file's order, depth first */
    assert_int_equal(sv_gds_shapes_count(s), 4);
    for (int k = 0; k < 4; k++) {
        sv_gds_polygon p;
        assert_int_equal(sv_gds_shapes_get(s, k, &p), SV_OK);
        assert_non_null(p.structure);
        assert_string_equal(p.structure, want[k]);
    }
    sv_gds_shapes_destroy(s);
    sv_gds_library_destroy(lib);
    gds_buf_free(&w);
}

static void test_paths_boxes_layers(void **state)
{
    (void)state;
    gds_buf w = {0};
    tg_begin_lib(&w, 1e-6, 1e-9);
    tg_begin_str(&w, "TOP");
    /* flush ends, width 2, a right-angled bend: x ∈ [1, 6] × y ∈ [0, 2] (the first segment
       lengthened by 1 at the bend) and x ∈ [4, 6] × y ∈ [0, 5] */
    tg_path(&w, 1, 0, 0, 2000, 0, 0, (const int32_t[]){1000, 1000, 5000, 1000, 5000, 5000}, 3);
    /* square ends (half the width past each end), width 2: x ∈ [7, 10] × y ∈ [6, 8] */
    tg_path(&w, 1, 0, 2, 2000, 0, 0, (const int32_t[]){8000, 7000, 9000, 7000}, 2);
    /* custom extensions 1 and 0, width 1: x ∈ [0, 4] × y ∈ [9, 10] */
    tg_path(&w, 1, 0, 4, 1000, 1000, 0, (const int32_t[]){1000, 9500, 4000, 9500}, 2);
    tg_box(&w, 1, 0, 0, 6000, 2000, 7000); /* x ∈ [0, 2] × y ∈ [6, 7] */
    tg_box(&w, 2, 0, 0, 0, 10000, 10000);  /* another layer */
    tg_boundary(&w, 1, 7, (const int32_t[]){0, 3000, 1000, 3000, 1000, 4000, 0, 4000}, 4); /* datatype 7 */
    tg_end_str(&w);
    tg_end_lib(&w);
    unsigned char m[N * N];
    assert_int_equal(tg_cells(&w, NULL, 1, 0, &G, 0, m), SV_OK);
    const char *rows[] = {"####......", "..........", ".......###", "##.....###", "..........",
                          "....##....", "....##....", "....##....", ".#####....", ".#####...."};
    expect_map(m, rows);
    assert_int_equal(tg_cells(&w, NULL, 1, -1, &G, 0, m), SV_OK); /* every datatype: the cell (0, 3) too */
    assert_int_equal(m[0 + N * 3], 1);
    assert_int_equal(tg_cells(&w, NULL, 2, 0, &G, 0, m), SV_OK);
    for (int q = 0; q < N * N; q++) assert_int_equal(m[q], 1);
    gds_buf_free(&w);
}

static sv_status one_shape(const int32_t *xy, int n, int snap, unsigned char *m)
{
    gds_buf w = {0};
    tg_begin_lib(&w, 1e-6, 1e-9);
    tg_begin_str(&w, "TOP");
    tg_boundary(&w, 1, 0, xy, n);
    tg_end_str(&w);
    tg_end_lib(&w);
    sv_status st = tg_cells(&w, NULL, 1, 0, &G, snap, m);
    gds_buf_free(&w);
    return st;
}

static void test_exact_and_snap(void **state)
{
    (void)state;
    unsigned char m[N * N];
    const int32_t off[] = {300, 300, 2700, 300, 2700, 1600, 300, 1600};
    assert_int_equal(one_shape(off, 4, 0, m), SV_ERR_PARSE);
    assert_non_null(strstr(sv_last_error(), "corner (3e-07, 3e-07) m is off the grid"));
    assert_non_null(strstr(sv_last_error(), "structure TOP, BOUNDARY at byte"));
    assert_int_equal(one_shape(off, 4, 1, m), SV_OK); /* centres (0.5 .. 2.5, 0.5 .. 1.5) are inside */
    const char *r1[] = {"..........", "..........", "..........", "..........", "..........",
                        "..........", "..........", "..........", "###.......", "###......."};
    expect_map(m, r1);
    const int32_t tri[] = {0, 0, 4200, 0, 0, 4200};
    assert_int_equal(one_shape(tri, 3, 0, m), SV_ERR_PARSE);
    assert_non_null(strstr(sv_last_error(), "edge from (4.2e-06, 0) to (0, 4.2e-06) m is not parallel to an axis"));
    assert_int_equal(one_shape(tri, 3, 1, m), SV_OK); /* centres with x + y < 4.2: i + j ≤ 3 */
    const char *r2[] = {"..........", "..........", "..........", "..........", "..........",
                        "..........", "#.........", "##........", "###.......", "####......"};
    expect_map(m, r2);
    const int32_t out[] = {9000, 0, 11000, 0, 11000, 1000, 9000, 1000};
    assert_int_equal(one_shape(out, 4, 0, m), SV_ERR_PARSE);
    assert_non_null(strstr(sv_last_error(), "beyond the grid"));
    assert_int_equal(one_shape(out, 4, 1, m), SV_ERR_PARSE);
    /* within half a database unit of a grid line counts as on it */
    const int32_t near[] = {0, 0, 1000, 0, 1000, 1000, 0, 1000};
    sv_gds_grid g = G;
    g.x0 = 0.4e-9;
    gds_buf w = {0};
    tg_begin_lib(&w, 1e-6, 1e-9);
    tg_begin_str(&w, "TOP");
    tg_boundary(&w, 1, 0, near, 4);
    tg_end_str(&w);
    tg_end_lib(&w);
    assert_int_equal(tg_cells(&w, NULL, 1, 0, &g, 0, m), SV_OK);
    g.x0 = 0.6e-9;
    assert_int_equal(tg_cells(&w, NULL, 1, 0, &g, 0, m), SV_ERR_PARSE);
    gds_buf_free(&w);
}

/* A parse or flatten that must fail with SV_ERR_PARSE and say `what`. */
static void refused(const gds_buf *w, const char *structure, const char *what)
{
    unsigned char m[N * N];
    sv_status st = tg_cells(w, structure, 1, 0, &G, 0, m);
    if (st != SV_ERR_PARSE) fail_msg("status %d, expected SV_ERR_PARSE (%s)", st, what);
    if (!strstr(sv_last_error(), what)) fail_msg("message \"%s\" lacks \"%s\"", sv_last_error(), what);
}

static void test_references_refused(void **state)
{
    (void)state;
    gds_buf w = {0};
    tg_begin_lib(&w, 1e-6, 1e-9);
    tg_begin_str(&w, "A");
    tg_boundary(&w, 1, 0, L_SHAPE, 6);
    tg_ref(&w, "B", 0, 1, 0, 0, 0, (const int32_t[]){0, 0});
    tg_end_str(&w);
    tg_begin_str(&w, "B");
    tg_ref(&w, "A", 0, 1, 0, 0, 0, (const int32_t[]){0, 0});
    tg_end_str(&w);
    tg_end_lib(&w);
    refused(&w, "A", "reference cycle: A -> B -> A");
    refused(&w, NULL, "every structure is referenced by another");
    gds_buf_free(&w);

    /* a chain deeper than the limit */
    memset(&w, 0, sizeof w);
    tg_begin_lib(&w, 1e-6, 1e-9);
    for (int k = 0; k < 80; k++) {
        char name[16], next[16];
        snprintf(name, sizeof name, "S%d", k);
        snprintf(next, sizeof next, "S%d", k + 1);
        tg_begin_str(&w, name);
        if (k < 79) tg_ref(&w, next, 0, 1, 0, 0, 0, (const int32_t[]){0, 0});
        else tg_boundary(&w, 1, 0, L_SHAPE, 6);
        tg_end_str(&w);
    }
    tg_end_lib(&w);
    refused(&w, NULL, "nested deeper than 64 levels");
    unsigned char m[N * N];
    assert_int_equal(tg_cells(&w, "S30", 1, 0, &G, 0, m), SV_OK); /* 49 levels from S30 */
    assert_int_equal(m[0] + m[1] + m[N], 3);
    gds_buf_free(&w);

    memset(&w, 0, sizeof w);
    lib_with_l(&w);
    tg_begin_str(&w, "EMPTY");
    tg_end_str(&w);
    tg_begin_str(&w, "TOP");
    tg_ref(&w, "L", 0, 1, 45, 0, 0, (const int32_t[]){0, 0});
    tg_ref(&w, "EMPTY", 0, 1, 30, 0, 0, (const int32_t[]){0, 0});
    tg_end_str(&w);
    tg_begin_str(&w, "TOP2");
    tg_ref(&w, "EMPTY", 0, 1, 30, 0, 0, (const int32_t[]){0, 0}); /* nothing on the layer: no matter */
    tg_ref(&w, "MISSING", 0, 1, 0, 0, 0, (const int32_t[]){0, 0});
    tg_end_str(&w);
    tg_end_lib(&w);
    refused(&w, "TOP", "angle 45 degrees, magnification 1: expected a multiple of 90 degrees");
    refused(&w, "TOP2", "structure \"MISSING\" is not in the file");
    refused(&w, NULL, "2 top structures (TOP, TOP2): expected the cell to be named");
    refused(&w, "NOPE", "no structure \"NOPE\" (the file has L, EMPTY, TOP, TOP2)");
    gds_buf_free(&w);

    /* names defined twice: the first name so (B) is refused at its second
     * definition, whatever the sorted order of the names */
    memset(&w, 0, sizeof w);
    tg_begin_lib(&w, 1e-6, 1e-9);
    size_t second_b = 0;
    const char *names[] = {"B", "A", "B", "A"};
    for (int k = 0; k < 4; k++) {
        if (k == 2) second_b = w.len;
        tg_begin_str(&w, names[k]);
        tg_end_str(&w);
    }
    tg_end_lib(&w);
    char want[64];
    snprintf(want, sizeof want, "byte %zu: structure \"B\" defined twice", second_b);
    refused(&w, NULL, want);
    gds_buf_free(&w);
}

/* A valid file with one byte changed or cut anywhere is read or refused,
 * never crashes; cut short it is refused naming a byte. */
static void test_malformed(void **state)
{
    (void)state;
    gds_buf w = {0};
    lib_with_l(&w);
    tg_begin_str(&w, "TOP");
    tg_ref(&w, "L", 1, 2, 270, 2, 2, (const int32_t[]){0, 0, 4000, 0, 0, 4000});
    tg_path(&w, 1, 0, 2, 2000, 0, 0, (const int32_t[]){1000, 1000, 5000, 1000}, 2);
    tg_end_str(&w);
    tg_end_lib(&w);
    sv_gds_library *lib;
    for (size_t cut = 0; cut < w.len; cut++) {
        assert_int_equal(sv_gds_parse(NULL, w.b, cut, "cut.gds", &lib), SV_ERR_PARSE);
        assert_null(lib);
        assert_non_null(strstr(sv_last_error(), "cut.gds: byte "));
    }
    sv_test_rng r;
    sv_test_rng_seed(&r, 99);
    unsigned char *b = malloc(w.len);
    for (int trial = 0; trial < 20000; trial++) {
        memcpy(b, w.b, w.len);
        b[sv_test_rng_next(&r) % w.len] ^= (unsigned char)(1 + sv_test_rng_next(&r) % 255);
        if (sv_gds_parse(NULL, b, w.len, "flip.gds", &lib)) continue;
        sv_gds_select sel = {NULL, 1, -1};
        sv_gds_shapes *s = NULL;
        if (!sv_gds_flatten(lib, &sel, &s)) {
            unsigned char m[N * N];
            sv_status st = sv_gds_rasterise(s, &G, 1e-9, trial % 2, m);
            assert_true(st == SV_OK || st == SV_ERR_PARSE);
        }
        sv_gds_shapes_destroy(s);
        sv_gds_library_destroy(lib);
    }
    free(b);
    gds_buf_free(&w);

    struct { const unsigned char *b; size_t n; const char *what; } bad[] = {
        {(const unsigned char[]){0, 5, 0, 2, 2}, 5, "byte 0: record length 5"},
        {(const unsigned char[]){0, 6, 0x70, 2, 2, 0x58}, 6, "byte 0: unknown record 0x70"},
        {(const unsigned char[]){0, 6, 0x01, 2, 2, 0x58}, 6, "byte 0: BGNLIB: expected HEADER"},
        {(const unsigned char[]){0, 6, 0, 3, 2, 0x58}, 6, "byte 0: HEADER record of data type 3, expected 2"},
        {(const unsigned char[]){0, 6, 0, 2, 2, 0x58, 0, 40, 1, 2}, 10, "byte 6: BGNLIB record of 40 bytes, 4 left"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        assert_int_equal(sv_gds_parse(NULL, bad[k].b, bad[k].n, "bad.gds", &lib), SV_ERR_PARSE);
        if (!strstr(sv_last_error(), bad[k].what)) fail_msg("\"%s\" lacks \"%s\"", sv_last_error(), bad[k].what);
    }
    /* element-level faults */
    memset(&w, 0, sizeof w);
    tg_begin_lib(&w, 1e-6, 1e-9);
    tg_begin_str(&w, "TOP");
    size_t at = w.len;
    gds_put_record(&w, GDS_BOUNDARY, GDS_NODATA, NULL, 0);
    int layer = 1;
    gds_put_i16s(&w, GDS_LAYER, &layer, 1);
    gds_put_i32s(&w, GDS_XY, (const int32_t[]){0, 0, 1000, 0, 1000, 1000, 0, 0}, 8);
    gds_put_record(&w, GDS_ENDEL, GDS_NODATA, NULL, 0);
    tg_end_str(&w);
    tg_end_lib(&w);
    char want[64];
    snprintf(want, sizeof want, "byte %zu: BOUNDARY without DATATYPE", at);
    refused(&w, NULL, want);
    gds_buf_free(&w);
    memset(&w, 0, sizeof w);
    tg_begin_lib(&w, 1e-6, 1e-9);
    tg_begin_str(&w, "TOP");
    at = w.len;
    tg_boundary(&w, 1, 0, (const int32_t[]){0, 0, 1000, 0}, 2);
    tg_end_str(&w);
    tg_begin_str(&w, "TOP");
    tg_end_str(&w);
    tg_end_lib(&w);
    snprintf(want, sizeof want, "byte %zu: BOUNDARY with 2 points: expected 3 to 8191", at);
    refused(&w, NULL, want);
    gds_buf_free(&w);
    /* a record given twice in one element (the grammar allows each once):
     * which LAYER holds would be a guess */
    memset(&w, 0, sizeof w);
    tg_begin_lib(&w, 1e-6, 1e-9);
    tg_begin_str(&w, "TOP");
    gds_put_record(&w, GDS_BOUNDARY, GDS_NODATA, NULL, 0);
    gds_put_i16s(&w, GDS_LAYER, &layer, 1);
    at = w.len;
    int other = 2;
    gds_put_i16s(&w, GDS_LAYER, &other, 1);
    gds_put_i16s(&w, GDS_DATATYPE, (const int[]){0}, 1);
    gds_put_i32s(&w, GDS_XY, (const int32_t[]){0, 0, 1000, 0, 1000, 1000, 0, 0}, 8);
    gds_put_record(&w, GDS_ENDEL, GDS_NODATA, NULL, 0);
    tg_end_str(&w);
    tg_end_lib(&w);
    snprintf(want, sizeof want, "byte %zu: a second LAYER in one BOUNDARY", at);
    refused(&w, NULL, want);
    gds_buf_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sref_transforms),
        cmocka_unit_test(test_aref_and_nesting),
        cmocka_unit_test(test_polygons_name_their_structure),
        cmocka_unit_test(test_paths_boxes_layers),
        cmocka_unit_test(test_exact_and_snap),
        cmocka_unit_test(test_references_refused),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
