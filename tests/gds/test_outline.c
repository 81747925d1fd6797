#define _POSIX_C_SOURCE 200809L
/* A cell map's merged outlines: shapes worked by hand, and on random maps
 * the outlines' union rasterised back by the scan-line rasteriser (a second
 * method: cell centres against the polygons) equal to the map, their areas
 * summing to the metal's, within the vertex limit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support_gds.h"
#include "sv_test.h"

static double area(const sv_gds_polygon *p)
{
    double a = 0;
    for (int q = 0; q < p->n; q++) {
        int r = (q + 1) % p->n;
        a += p->xy[2 * q] * p->xy[2 * r + 1] - p->xy[2 * r] * p->xy[2 * q + 1];
    }
    return a / 2;
}

/* A 3 × 3 ring: one polygon, its hole joined by a cut from the hole's
 * corner (1, 1) straight down to (1, 0) on the outline's bottom edge. */
static void test_ring_by_hand(void **state)
{
    (void)state;
    const char *rows[] = {"###", "#.#", "###"};
    unsigned char m[9];
    tg_map(rows, 3, 3, m);
    sv_gds_grid g = {3, 3, 1, 1, 0, 0};
    sv_gds_shapes *s;
    assert_int_equal(sv_gds_outline(NULL, &g, m, 5, 2, 0, &s), SV_OK);
    assert_int_equal(sv_gds_shapes_count(s), 1);
    sv_gds_polygon p;
    assert_int_equal(sv_gds_shapes_get(s, 0, &p), SV_OK);
    const double want[] = {0, 0, 1, 0, 1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 0, 3, 0, 3, 3, 0, 3};
    assert_int_equal(p.n, 11);
    for (int q = 0; q < 22; q++) assert_true(p.xy[q] == want[q]);
    assert_int_equal(p.layer, 5);
    assert_int_equal(p.datatype, 2);
    assert_true(area(&p) == 8);
    sv_gds_shapes_destroy(s);
}

/* Cells meeting only at a corner are two pieces (no current flows through
 * a corner); an L is one polygon of six corners; the grid's origin and
 * cell size place them. */
static void test_corner_and_l(void **state)
{
    (void)state;
    const char *rows[] = {"#..", "##.", "..#"};
    unsigned char m[9];
    tg_map(rows, 3, 3, m);
    sv_gds_grid g = {3, 3, 2e-3, 1e-3, -1e-3, 5e-3};
    sv_gds_shapes *s;
    assert_int_equal(sv_gds_outline(NULL, &g, m, 1, 0, 0, &s), SV_OK);
    assert_int_equal(sv_gds_shapes_count(s), 2);
    sv_gds_polygon p;
    sv_gds_shapes_get(s, 0, &p); /* the lone cell (2, 0), found first */
    assert_int_equal(p.n, 4);
    sv_assert_close(area(&p), 2e-6, 1e-12, 0);
    sv_assert_close(p.xy[0], -1e-3 + 2 * 2e-3, 1e-15, 1);
    sv_assert_close(p.xy[1], 5e-3, 1e-15, 1);
    sv_gds_shapes_get(s, 1, &p); /* the L of cells (0, 1), (1, 1), (0, 2) */
    assert_int_equal(p.n, 6);
    sv_assert_close(area(&p), 3 * 2e-6, 1e-12, 0);
    sv_gds_shapes_destroy(s);
}

/* Rasterise shapes onto g (exact mode) into a fresh map. */
static void raster(const sv_gds_shapes *s, const sv_gds_grid *g, unsigned char *out)
{
    memset(out, 0, (size_t)g->nx * g->ny);
    assert_int_equal(sv_gds_rasterise(s, g, 0, 0, out), SV_OK);
}

static void check_map(const sv_gds_grid *g, const unsigned char *m, int max_points)
{
    sv_gds_shapes *s;
    assert_int_equal(sv_gds_outline(NULL, g, m, 1, 0, max_points, &s), SV_OK);
    size_t n = (size_t)g->nx * g->ny, metal = 0;
    for (size_t q = 0; q < n; q++) metal += m[q] != 0;
    double total = 0;
    for (int k = 0; k < sv_gds_shapes_count(s); k++) {
        sv_gds_polygon p;
        sv_gds_shapes_get(s, k, &p);
        assert_true(p.n >= 4 && p.n <= (max_points ? max_points : SV_GDS_MAX_POINTS));
        assert_true(area(&p) > 0); /* counter-clockwise, holes inside */
        for (int q = 0; q < p.n; q++) { /* Manhattan */
            int r = (q + 1) % p.n;
            assert_true(p.xy[2 * q] == p.xy[2 * r] || p.xy[2 * q + 1] == p.xy[2 * r + 1]);
        }
        total += area(&p);
    }
    sv_assert_close(total, metal * g->dx * g->dy, 1e-12, 1e-300); /* no overlap, nothing missing */
    unsigned char *back = malloc(n);
    raster(s, g, back);
    for (size_t q = 0; q < n; q++)
        if ((back[q] != 0) != (m[q] != 0)) fail_msg("cell (%zu, %zu) differs", q % (size_t)g->nx, q / (size_t)g->nx);
    free(back);
    sv_gds_shapes_destroy(s);
}

static void test_random_maps(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 4);
    for (int trial = 0; trial < 60; trial++) {
        int nx = 1 + (int)(sv_test_rng_next(&r) % 40), ny = 1 + (int)(sv_test_rng_next(&r) % 30);
        double fill = 0.5 + 0.45 * sv_test_uniform(&r);
        sv_gds_grid g = {nx, ny, 0.5e-3, 0.25e-3, -1e-3, 2e-3};
        unsigned char *m = malloc((size_t)nx * ny);
        for (int q = 0; q < nx * ny; q++) m[q] = 0.5 + 0.5 * sv_test_uniform(&r) < fill;
        check_map(&g, m, 0);
        check_map(&g, m, 4 + (int)(sv_test_rng_next(&r) % 40)); /* split into short polygons */
        free(m);
    }
}

/* Nested rings (holes with islands with holes) and a checkerboard. */
static void test_nested_and_checkerboard(void **state)
{
    (void)state;
    const char *rows[] = {"#########", "#.......#", "#.#####.#", "#.#...#.#", "#.#.#.#.#",
                          "#.#...#.#", "#.#####.#", "#.......#", "#########"};
    unsigned char m[81];
    tg_map(rows, 9, 9, m);
    sv_gds_grid g = {9, 9, 1e-4, 1e-4, 0, 0};
    sv_gds_shapes *s;
    assert_int_equal(sv_gds_outline(NULL, &g, m, 1, 0, 0, &s), SV_OK);
    assert_int_equal(sv_gds_shapes_count(s), 3); /* outer ring, inner ring, centre cell */
    sv_gds_shapes_destroy(s);
    check_map(&g, m, 0);
    unsigned char cb[12 * 10];
    for (int j = 0; j < 10; j++)
        for (int i = 0; i < 12; i++) cb[i + 12 * j] = (i + j) % 2;
    sv_gds_grid g2 = {12, 10, 1e-4, 1e-4, 0, 0};
    assert_int_equal(sv_gds_outline(NULL, &g2, cb, 1, 0, 0, &s), SV_OK);
    assert_int_equal(sv_gds_shapes_count(s), 60);
    sv_gds_shapes_destroy(s);
    check_map(&g2, cb, 0);
}

/* Writer → reader: the file read back and rasterised is the map. */
static void test_file_round_trip(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 7);
    int nx = 35, ny = 11;
    unsigned char m[35 * 11], back[35 * 11];
    for (int q = 0; q < nx * ny; q++) m[q] = sv_test_uniform(&r) < 0.2;
    sv_gds_grid g = {nx, ny, 0.7655e-3, 0.76037e-3, 0.097e-3, -1.520741e-3};
    char path[] = "/tmp/sv_gds_roundXXXXXX";
    int fd = mkstemp(path);
    close(fd);
    sv_gds_write_options o = {.cell = "PIXELS", .db_unit_m = 1e-10};
    assert_int_equal(sv_gds_write_cells(NULL, path, &g, m, 17, 3, &o), SV_OK);
    sv_gds_library *lib;
    assert_int_equal(sv_gds_read(NULL, path, &lib), SV_OK);
    unlink(path);
    double user, db;
    sv_gds_library_units(lib, &user, &db);
    sv_assert_close(user, 1e-6, 1e-15, 0);
    assert_true(db == 1e-10);
    assert_int_equal(sv_gds_library_structures(lib), 1);
    assert_string_equal(sv_gds_library_structure_name(lib, 0), "PIXELS");
    sv_gds_select sel = {NULL, 17, 3};
    sv_gds_shapes *s;
    assert_int_equal(sv_gds_flatten(lib, &sel, &s), SV_OK);
    memset(back, 0, sizeof back);
    assert_int_equal(sv_gds_rasterise(s, &g, db, 0, back), SV_OK);
    assert_memory_equal(back, m, sizeof m);
    sv_gds_shapes_destroy(s);
    sel.datatype = 0; /* another datatype: nothing */
    assert_int_equal(sv_gds_flatten(lib, &sel, &s), SV_OK);
    assert_int_equal(sv_gds_shapes_count(s), 0);
    sv_gds_shapes_destroy(s);
    sv_gds_library_destroy(lib);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_by_hand),
        cmocka_unit_test(test_corner_and_l),
        cmocka_unit_test(test_random_maps),
        cmocka_unit_test(test_nested_and_checkerboard),
        cmocka_unit_test(test_file_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
