/* Project files at and beyond their limits (issue 16): geometry far off the
 * grid is refused instead of wrapping to x = 0 in the conversion to int,
 * the frequency limit holds in hertz after the unit, a band of one
 * frequency has one point, and thicknesses, cell sizes and conductivities
 * are accepted exactly over the documented, computable ranges. */
#include <stdio.h>
#include <string.h>

#include "support_em.h"
#include "sv_test.h"

/* A 10 × 4 grid of 1 mm cells with a two-cell-wide line; each %s is
 * replaced in order by: substrate, metal, grid extras, rectangle x, port 1
 * x, sweep. */
static const char *const tmpl =
    "{\"units\": \"mm\", \"substrate\": {%s}, \"metal\": {%s},"
    " \"grid\": {\"dx\": 1, \"dy\": 1, \"nx\": 10, \"ny\": 4%s},"
    " \"rectangles\": [{\"x\": [%s], \"y\": [1, 3]}],"
    " \"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": %s, \"y\": [1, 3]},"
    "           {\"name\": \"b\", \"side\": \"right\", \"x\": 10, \"y\": [1, 3]}]%s}";

typedef struct fields {
    const char *sub, *met, *grid, *rx, *px, *sweep;
} fields;

static sv_status parse(fields f, sv_em_project **p)
{
    char text[2048];
    snprintf(text, sizeof text, tmpl, f.sub ? f.sub : "\"thickness\": 1.6, \"eps_r\": 4.4",
             f.met ? f.met : "\"conductivity\": \"inf\"", f.grid ? f.grid : "", f.rx ? f.rx : "0, 10",
             f.px ? f.px : "0", f.sweep ? f.sweep : "");
    *p = NULL;
    return sv_em_project_parse(NULL, text, strlen(text), "t.json", p);
}

static void accepts(fields f)
{
    sv_em_project *p;
    if (parse(f, &p) != SV_OK) fail_msg("refused: %s", sv_last_error());
    sv_em_project_destroy(p);
}

static void refuses(fields f, const char *fragment)
{
    sv_em_project *p;
    assert_int_equal(parse(f, &p), SV_ERR_PARSE);
    assert_null(p);
    if (!strstr(sv_last_error(), fragment)) fail_msg("message '%s' lacks '%s'", sv_last_error(), fragment);
}

static void test_geometry_far_off_the_grid(void **state)
{
    (void)state;
    accepts((fields){0});
    /* 2^32 mm: (int)lround wrapped it to 0, on the grid */
    refuses((fields){.rx = "4294967296, 4294967306"}, "rectangles[0].x = [4294967296,4294967306]: outside the grid");
    refuses((fields){.rx = "-4294967296, 10"}, "rectangles[0].x = [-4294967296,10]: outside the grid");
    refuses((fields){.rx = "-1e300, 1e300"}, "outside the grid");
    refuses((fields){.rx = "0, 18446744073709551626"}, "outside the grid");
    refuses((fields){.px = "4294967296"}, "ports[0].x = 4294967296: port plane outside the grid");
    refuses((fields){.px = "-1e300"}, "port plane outside the grid");
    /* and a whole grid far away, for coordinates to keep their precision */
    refuses((fields){.grid = ", \"origin\": [1e20, 0]"}, "grid.origin");
}

static void test_frequency_limit_after_the_unit(void **state)
{
    (void)state;
    accepts((fields){.sweep = ", \"sweep\": {\"start\": 1, \"stop\": 1e6, \"points\": 3, \"unit\": \"GHz\"}"});
    refuses((fields){.sweep = ", \"sweep\": {\"start\": 1e14, \"stop\": 2e14, \"points\": 3, \"unit\": \"GHz\"}"},
            "sweep.start = 100000000000000: expected a number >= 0 and <= 1e+06");
    refuses((fields){.sweep = ", \"sweep\": {\"start\": 1, \"stop\": 1.5e15, \"points\": 3}"},
            "sweep.stop = 1.5e+15: expected a number > 0 and <= 1e+15");
    /* one frequency is one point */
    refuses((fields){.sweep = ", \"sweep\": {\"start\": 2, \"stop\": 2, \"points\": 4, \"unit\": \"GHz\"}"},
            "sweep.points = 4: expected 1 when start = stop");
    accepts((fields){.sweep = ", \"sweep\": {\"start\": 2, \"stop\": 2, \"points\": 1, \"unit\": \"GHz\"}"});
}

static void test_band_checks(void **state)
{
    (void)state;
    sv_em_project *p;
    assert_int_equal(parse((fields){.sweep = ", \"sweep\": {\"start\": 1, \"stop\": 2, \"points\": 4, \"unit\": \"GHz\"}"}, &p),
                     SV_OK);
    sv_em_sweep b, given = {.stop_hz = 1e9};
    assert_int_equal(sv_em_project_band(p, &given, &b), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "points = 4 with start = stop = 1e+09 Hz"));
    given = (sv_em_sweep){.stop_hz = 2e15};
    assert_int_equal(sv_em_project_band(p, &given, &b), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "expected at most 1e+15 Hz"));
    given = (sv_em_sweep){.stop_hz = 1e9, .points = 1};
    assert_int_equal(sv_em_project_band(p, &given, &b), SV_OK);
    assert_int_equal(b.points, 1);
    sv_em_project_destroy(p);
}

static void test_computable_ranges(void **state)
{
    (void)state;
    /* the edges are in, in any unit (1 nm = 1e-6 mm; 1 m = 1000 mm) */
    accepts((fields){.sub = "\"thickness\": 1e-6, \"eps_r\": 4.4"});
    accepts((fields){.sub = "\"thickness\": 1000, \"eps_r\": 4.4"});
    accepts((fields){.met = "\"conductivity\": 1e-3, \"thickness\": 1e-6"});
    /* a metal modelled thick is at most twice the substrate: 1 m on 1 m */
    accepts((fields){.sub = "\"thickness\": 1000, \"eps_r\": 4.4", .met = "\"conductivity\": 1e10, \"thickness\": 1000"});
    accepts((fields){.met = "\"conductivity\": \"inf\", \"thickness\": 0"});
    /* beyond them: refused by field, before the numerics see NaN */
    refuses((fields){.sub = "\"thickness\": 5e-324, \"eps_r\": 4.4"}, "substrate.thickness = 4.94065645841247e-324");
    refuses((fields){.sub = "\"thickness\": 1e308, \"eps_r\": 4.4"}, "substrate.thickness = 1e+308: expected a length");
    refuses((fields){.met = "\"conductivity\": 5e-324, \"thickness\": 0.035"}, "metal.conductivity = 4.94065645841247e-324");
    refuses((fields){.met = "\"conductivity\": 1e308, \"thickness\": 0.035"}, "metal.conductivity = 1e+308");
    refuses((fields){.met = "\"conductivity\": 5.8e7, \"thickness\": 5e-324"}, "metal.thickness = 4.94065645841247e-324");
    refuses((fields){.met = "\"conductivity\": 5.8e7, \"thickness\": 1e308"}, "metal.thickness = 1e+308");
}

static void test_cell_size_range(void **state)
{
    (void)state;
    const char *cells[] = {"{\"units\": \"m\", \"substrate\": {\"thickness\": 1e-3, \"eps_r\": 4.4},"
                           " \"metal\": {\"conductivity\": \"inf\"}, \"grid\": {\"dx\": %s, \"dy\": 1e-3, \"nx\": 2,"
                           " \"ny\": 1}, \"pixels\": [\"##\"], \"ports\": [{\"name\": \"a\", \"side\": \"bottom\","
                           " \"y\": 0, \"x\": [0, %s]}]}"};
    const char *ok[] = {"1e-9", "1"}, *bad[] = {"5e-324", "9.9e-10", "1.01", "1e308"};
    for (int k = 0; k < 6; k++) {
        const char *dx = k < 2 ? ok[k] : bad[k - 2];
        char text[1024];
        snprintf(text, sizeof text, cells[0], dx, dx);
        sv_em_project *p = NULL;
        sv_status s = sv_em_project_parse(NULL, text, strlen(text), "c.json", &p);
        if (k < 2 && s != SV_OK) fail_msg("dx = %s refused: %s", dx, sv_last_error());
        if (k >= 2 && (s != SV_ERR_PARSE || !strstr(sv_last_error(), "grid.dx")))
            fail_msg("dx = %s: status %d, '%s'", dx, s, sv_last_error());
        sv_em_project_destroy(p);
    }
}

/* A calibrated port's reference plane moves at most the grid's extent
 * along its feed (10 mm here), either way: far beyond it the feed line's
 * transfer matrix overflowed in the calibration with a message naming no
 * field. Moved all the way in it meets the other port's plane (x = 10):
 * refused as such. */
static void test_reference_plane_range(void **state)
{
    (void)state;
    accepts((fields){.px = "0, \"reference_plane\": 9.5"});
    accepts((fields){.px = "0, \"reference_plane\": -10"});
    refuses((fields){.px = "0, \"reference_plane\": 10"}, "ports 'a' (x = 10) and 'b' (x = 10) meet");
    const char *expect = "expected a length from -10 to 10 (file units: the grid's extent along the port's feed)";
    refuses((fields){.px = "0, \"reference_plane\": 10.5"}, "ports[0].reference_plane = 10.5: ");
    refuses((fields){.px = "0, \"reference_plane\": 1e300"}, expect);
    refuses((fields){.px = "0, \"reference_plane\": -1e300"}, expect);
    refuses((fields){.px = "0, \"reference_plane\": \"2\""}, expect);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geometry_far_off_the_grid), cmocka_unit_test(test_frequency_limit_after_the_unit),
        cmocka_unit_test(test_band_checks),               cmocka_unit_test(test_computable_ranges),
        cmocka_unit_test(test_cell_size_range),           cmocka_unit_test(test_reference_plane_range),
    };
    return cmocka_run_group_tests_name("project_limits", tests, NULL, NULL);
}
