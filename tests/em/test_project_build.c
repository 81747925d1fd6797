/* Projects built in memory (sv_em_project_build) are the projects their
 * files describe: the bundled stub drawn with rectangles, and a pixel map,
 * give the same grid, metal, ports, stack-up, band and mesh as their
 * files; bad values are refused naming the field a file would have. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support_em.h"
#include "sv_test.h"

static void assert_same_project(const sv_em_project *a, const sv_em_project *b)
{
    sv_em_grid ga, gb;
    sv_em_project_grid(a, &ga);
    sv_em_project_grid(b, &gb);
    assert_int_equal(ga.nx, gb.nx);
    assert_int_equal(ga.ny, gb.ny);
    sv_assert_close(ga.dx, gb.dx, 1e-15, 0);
    sv_assert_close(ga.dy, gb.dy, 1e-15, 0);
    sv_assert_close(ga.x0, gb.x0, 1e-15, 1e-3);
    sv_assert_close(ga.y0, gb.y0, 1e-15, 1e-3);
    for (int j = 0; j < ga.ny; j++)
        for (int i = 0; i < ga.nx; i++) assert_int_equal(sv_em_project_metal(a, i, j), sv_em_project_metal(b, i, j));
    assert_int_equal(sv_em_project_ports(a), sv_em_project_ports(b));
    for (int k = 0; k < sv_em_project_ports(a); k++) {
        assert_string_equal(sv_em_project_port_name(a, k), sv_em_project_port_name(b, k));
        assert_true(sv_em_project_port_z0(a, k) == sv_em_project_port_z0(b, k));
    }
    sv_em_stackup sa, sb;
    sv_em_project_stackup(a, &sa);
    sv_em_project_stackup(b, &sb);
    assert_true(sa.h == sb.h && sa.eps_r == sb.eps_r && sa.tan_delta == sb.tan_delta);
    assert_true(sa.sigma == sb.sigma && sa.t == sb.t && sa.thick_metal == sb.thick_metal);
    sv_em_sweep wa, wb;
    sv_em_project_sweep(a, &wa);
    sv_em_project_sweep(b, &wb);
    assert_int_equal(wa.present, wb.present);
    assert_int_equal(wa.points, wb.points);
    sv_assert_close(wa.start_hz, wb.start_hz, 1e-15, 0);
    sv_assert_close(wa.stop_hz, wb.stop_hz, 1e-15, 0);
    sv_em_model *ma = em_test_model(a), *mb = em_test_model(b);
    assert_int_equal(sv_em_model_unknowns(ma), sv_em_model_unknowns(mb));
    sv_em_model_destroy(ma);
    sv_em_model_destroy(mb);
}

/* examples/stub.json, its values written out in metres. */
static void test_stub_from_values(void **state)
{
    (void)state;
    char *text = sv_test_slurp("examples/stub.json");
    sv_em_project *file = em_test_project(text);
    free(text);
    const double mm = 1e-3;
    sv_em_rectangle rects[] = {{0, 40 * mm, -1.531 * mm, 1.531 * mm}, {18.469 * mm, 21.531 * mm, 1.531 * mm, 22.061 * mm}};
    sv_em_port_spec ports[] = {{.name = "P1", .side = SV_EM_SIDE_LEFT, .at = 0, .from = -1.531 * mm, .to = 1.531 * mm},
                               {.name = "P2", .side = SV_EM_SIDE_RIGHT, .at = 40 * mm, .from = -1.531 * mm, .to = 1.531 * mm}};
    sv_em_project_spec spec = {
        .grid = {.nx = 52, .ny = 31, .dx = 0.7655 * mm, .dy = 0.76037 * mm, .x0 = 0.097 * mm, .y0 = -1.520741 * mm},
        .h = 1.6 * mm, .eps_r = 4.4, .sigma = INFINITY,
        .rects = rects, .nrects = 2, .ports = ports, .nports = 2,
        .band = {.present = 1, .start_hz = 1e9, .stop_hz = 3e9, .points = 201, .tolerance = 1e-4}};
    sv_em_project *built;
    assert_int_equal(sv_em_project_build(NULL, &spec, &built), SV_OK);
    assert_same_project(file, built);
    sv_em_project_destroy(built);
    sv_em_project_destroy(file);
}

/* A pixel array with thick lossy metal, a raw port and effects switched. */
static void test_pixels_from_values(void **state)
{
    (void)state;
    sv_em_project *file = em_test_project(
        "{\"units\": \"mm\", \"substrate\": {\"thickness\": 0.5, \"eps_r\": 3.5, \"tan_delta\": 0.002},"
        " \"metal\": {\"conductivity\": 5e7, \"thickness\": 0.02},"
        " \"grid\": {\"dx\": 0.5, \"dy\": 0.25, \"nx\": 4, \"ny\": 3},"
        " \"pixels\": [\"#..#\", \"####\", \"#.##\"],"
        " \"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [0.25, 0.5], \"z0\": 25},"
        "            {\"name\": \"b\", \"side\": \"right\", \"x\": 2, \"y\": [0, 0.5], \"calibration\": \"none\"}],"
        " \"effects\": {\"radiation\": false, \"thick_metal\": false}}");
    const unsigned char px[] = {1, 0, 1, 1, /* bottom row first */ 1, 1, 1, 1, 1, 0, 0, 1};
    sv_em_port_spec ports[] = {{.name = "a", .side = SV_EM_SIDE_LEFT, .at = 0, .from = 0.25e-3, .to = 0.5e-3, .z0 = 25},
                               {.name = "b", .side = SV_EM_SIDE_RIGHT, .at = 2e-3, .from = 0, .to = 0.5e-3, .raw = 1}};
    sv_em_project_spec spec = {.grid = {.nx = 4, .ny = 3, .dx = 0.5e-3, .dy = 0.25e-3},
                               .h = 0.5e-3, .eps_r = 3.5, .tan_delta = 0.002, .sigma = 5e7, .t = 0.02e-3,
                               .pixels = px, .ports = ports, .nports = 2,
                               .effects = {.radiation = -1, .thick_metal = -1}};
    sv_em_project *built;
    assert_int_equal(sv_em_project_build(NULL, &spec, &built), SV_OK);
    assert_same_project(file, built);
    assert_int_equal(sv_em_project_calibrated(built), 1);
    sv_em_project_destroy(built);
    sv_em_project_destroy(file);
}

/* Bad values: refused with the file's field named, nothing left allocated. */
static void test_bad_values(void **state)
{
    (void)state;
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    const unsigned char px[] = {1, 1, 1, 1};
    sv_em_port_spec good[] = {{.name = "a", .side = SV_EM_SIDE_LEFT, .at = 0, .from = 0, .to = 1e-3}},
                    off[] = {{.name = "a", .side = SV_EM_SIDE_LEFT, .at = 0.5e-3, .from = 0, .to = 1e-3}},
                    unnamed[] = {{.name = NULL, .side = SV_EM_SIDE_LEFT, .at = 0, .from = 0, .to = 1e-3}};
    sv_em_project_spec base = {.grid = {.nx = 2, .ny = 2, .dx = 0.5e-3, .dy = 0.5e-3},
                               .h = 0.5e-3, .eps_r = 3.5, .sigma = INFINITY, .pixels = px, .ports = good, .nports = 1};
    struct {
        sv_em_project_spec s;
        const char *field;
    } cases[] = {{base, NULL}, {base, "substrate.eps_r"}, {base, "substrate.thickness"}, {base, "metal.thickness"},
                 {base, "ports[0]"}, {base, "ports[0].name"}, {base, "ports"}, {base, "grid.nx"}};
    cases[1].s.eps_r = 0.5;
    cases[2].s.h = NAN;
    cases[3].s.sigma = 5e7;
    cases[4].s.ports = off;
    cases[5].s.ports = unnamed;
    cases[6].s.nports = 0;
    cases[7].s.grid.nx = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        sv_em_project *p = NULL;
        sv_status st = sv_em_project_build(ctx, &cases[k].s, &p);
        if (!cases[k].field) {
            assert_int_equal(st, SV_OK);
            sv_em_project_destroy(p);
            continue;
        }
        assert_int_equal(st, SV_ERR_PARSE);
        assert_null(p);
        if (!strstr(sv_last_error(), cases[k].field))
            fail_msg("case %zu: '%s' does not name %s", k, sv_last_error(), cases[k].field);
        assert_int_equal(sv_ctx_memory_current(ctx), 0);
    }
    sv_ctx_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_stub_from_values), cmocka_unit_test(test_pixels_from_values),
                                       cmocka_unit_test(test_bad_values)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
