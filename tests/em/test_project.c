#define _POSIX_C_SOURCE 200809L
/* Project files: the examples read with the expected meshes, every
 * malformed case gives its own message naming the field, and truncated or
 * mutated files never crash the reader. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support_em.h"
#include "sv_test.h"

static const char *good =
    "{\"title\": \"t\", \"units\": \"mm\", \"substrate\": {\"thickness\": 1.6, \"eps_r\": 4.4},"
    " \"metal\": {\"conductivity\": 5.8e7, \"thickness\": 0.035},"
    " \"grid\": {\"dx\": 0.5, \"dy\": 0.5, \"nx\": 4, \"ny\": 3},"
    " \"pixels\": [\"....\", \"####\", \".#..\"],"
    " \"rectangles\": [{\"x\": [1.5, 2], \"y\": [0, 1]}],"
    " \"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [0.5, 1]},"
    "           {\"name\": \"b\", \"side\": \"right\", \"x\": 2, \"y\": [0.5, 1], \"z0\": 75}],"
    " \"sweep\": {\"start\": 1, \"stop\": 3, \"points\": 21, \"unit\": \"GHz\", \"tolerance\": 1e-5}}";

static void test_good_file(void **state)
{
    (void)state;
    sv_em_project *p = em_test_project(good);
    sv_em_grid g;
    sv_em_stackup st;
    sv_em_sweep sw;
    sv_em_project_grid(p, &g);
    sv_em_project_stackup(p, &st);
    sv_em_project_sweep(p, &sw);
    sv_assert_close(g.dx, 0.5e-3, 1e-15, 0);
    assert_int_equal(g.nx, 4);
    sv_assert_close(st.h, 1.6e-3, 1e-15, 0);
    sv_assert_close(st.t, 35e-6, 1e-15, 0);
    assert_true(sw.present && sw.points == 21);
    sv_assert_close(sw.start_hz, 1e9, 1e-15, 0);
    sv_assert_close(sw.tolerance, 1e-5, 1e-15, 0);
    assert_int_equal(sv_em_project_ports(p), 2);
    assert_string_equal(sv_em_project_port_name(p, 1), "b");
    sv_assert_close(sv_em_project_port_z0(p, 0), 50, 0, 0);
    sv_assert_close(sv_em_project_port_z0(p, 1), 75, 0, 0);
    /* first pixel row is the top: row "####" is j = 1; the rectangle adds (3, 0) and (3, 1) */
    assert_true(sv_em_project_metal(p, 0, 1) && !sv_em_project_metal(p, 0, 2) && sv_em_project_metal(p, 1, 0));
    assert_true(sv_em_project_metal(p, 3, 0) && !sv_em_project_metal(p, 2, 0));
    sv_em_model *m = em_test_model(p);
    /* cells: (0..3,1), (1,0), (3,0): x edges 3, y edges 2, port edges 2 */
    assert_int_equal(sv_em_model_unknowns(m), 7);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
}

static void test_examples(void **state)
{
    (void)state;
    const char *files[] = {"examples/square76.json", "examples/pixel2port.json", "examples/stub.json",
                           "examples/pozar_lpf.json", "examples/line_366.json", "examples/line_44.json"};
    for (int k = 0; k < 6; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", SV_SOURCE_DIR, files[k]);
        sv_em_project *p;
        sv_status s = sv_em_project_read(NULL, path, &p);
        if (s) printf("%s\n", sv_last_error());
        assert_int_equal(s, SV_OK);
        sv_em_model *m = em_test_model(p);
        if (k == 0) assert_int_equal(sv_em_model_unknowns(m), 11402);
        if (k == 1) assert_true(sv_em_model_unknowns(m) > 1800 && sv_em_model_unknowns(m) < 2200);
        sv_em_model_destroy(m);
        sv_em_project_destroy(p);
    }
}

/* A pixel map from a CSV file (rows top first, as the Momentum dataset
 * gives them), loss tangent and effect switches. */
static void test_csv_and_effects(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/em/data/momentum/pixelmaps/sim106.csv", SV_SOURCE_DIR);
    char json[2048];
    snprintf(json, sizeof json,
             "{\"units\": \"mil\", \"substrate\": {\"thickness\": 30, \"eps_r\": 4.5, \"tan_delta\": 0.01},"
             " \"metal\": {\"conductivity\": 5.88e7, \"thickness\": 2.8},"
             " \"grid\": {\"dx\": 8, \"dy\": 8, \"nx\": 35, \"ny\": 11}, \"pixels\": {\"csv\": \"%s\"},"
             " \"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [16, 72]}]%s}",
             path, "");
    sv_em_project *p = em_test_project(json);
    sv_em_stackup st;
    sv_em_project_stackup(p, &st);
    sv_assert_close(st.tan_delta, 0.01, 0, 0);
    assert_int_equal(st.thick_metal, 1);
    /* sim106.csv: first line 0000000000000111111111000..., the top row j = 10 */
    assert_true(!sv_em_project_metal(p, 12, 10) && sv_em_project_metal(p, 13, 10) && sv_em_project_metal(p, 21, 10));
    assert_true(!sv_em_project_metal(p, 22, 10));
    /* last line 0000000000000111011101110...: the bottom row j = 0 */
    assert_true(sv_em_project_metal(p, 15, 0) && !sv_em_project_metal(p, 16, 0));
    for (int i = 0; i < 13; i++) assert_true(sv_em_project_metal(p, i, 2) && sv_em_project_metal(p, i, 8));
    sv_em_project_destroy(p);
    /* switched off, both effects vanish from the stack-up */
    char *off = malloc(4096);
    snprintf(off, 4096, "%.*s, \"effects\": {\"thick_metal\": false, \"dielectric_loss\": false}}",
             (int)strlen(json) - 1, json);
    p = em_test_project(off);
    sv_em_project_stackup(p, &st);
    assert_true(st.tan_delta == 0 && st.thick_metal == 0 && st.t > 0);
    sv_em_project_destroy(p);
    free(off);
    /* errors name the file, row and column */
    const char *cases[][2] = {
        {"{\"csv\": \"/nonexistent/map.csv\"}", "cannot open"},
        {"{\"csv\": 3}", "pixels.csv = 3: expected the path"},
        {"{\"file\": \"a.csv\"}", "pixels.file: unknown field"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        snprintf(json, sizeof json,
                 "{\"units\": \"mm\", \"substrate\": {\"thickness\": 1, \"eps_r\": 4},"
                 " \"metal\": {\"conductivity\": \"inf\"}, \"grid\": {\"dx\": 1, \"dy\": 1, \"nx\": 3, \"ny\": 2},"
                 " \"pixels\": %s, \"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [0, 1]}]}",
                 cases[k][0]);
        sv_em_project *q = NULL;
        assert_int_not_equal(sv_em_project_parse(NULL, json, strlen(json), "t.json", &q), SV_OK);
        if (!strstr(sv_last_error(), cases[k][1])) printf("got: %s\n", sv_last_error());
        assert_non_null(strstr(sv_last_error(), cases[k][1]));
    }
    const char *bad_csv[][2] = {{"0,1,0\n1,1\n", "row 2 has 2 values: expected grid.nx = 3"},
                                {"0,1,0\n1,2,1\n", "row 2, column 2: '2': expected 0 (empty) or 1"},
                                {"0,1,0\n", "1 rows: expected grid.ny = 2"},
                                {"0,1,0,\n1,1,1\n", "row 1, column 4"},
                                {"0;1;0\n1,1,1\n", "expected ',' between values"}};
    char csv[256];
    snprintf(csv, sizeof csv, "/tmp/sv_test_csv_%d.csv", (int)getpid());
    for (size_t k = 0; k < sizeof bad_csv / sizeof bad_csv[0]; k++) {
        FILE *f = fopen(csv, "w");
        assert_non_null(f);
        fputs(bad_csv[k][0], f);
        fclose(f);
        snprintf(json, sizeof json,
                 "{\"units\": \"mm\", \"substrate\": {\"thickness\": 1, \"eps_r\": 4},"
                 " \"metal\": {\"conductivity\": \"inf\"}, \"grid\": {\"dx\": 1, \"dy\": 1, \"nx\": 3, \"ny\": 2},"
                 " \"pixels\": {\"csv\": \"%s\"}, \"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [0, 1]}]}",
                 csv);
        sv_em_project *q = NULL;
        assert_int_equal(sv_em_project_parse(NULL, json, strlen(json), "t.json", &q), SV_ERR_PARSE);
        if (!strstr(sv_last_error(), bad_csv[k][1])) printf("got: %s\n", sv_last_error());
        assert_non_null(strstr(sv_last_error(), bad_csv[k][1]));
    }
    remove(csv);
}

/* Replace the first occurrence of `from` in `good` by `to`. */
static char *mutate(const char *from, const char *to)
{
    const char *at = strstr(good, from);
    assert_non_null(at);
    size_t n = strlen(good) + strlen(to) + 1;
    char *s = malloc(n);
    snprintf(s, n, "%.*s%s%s", (int)(at - good), good, to, at + strlen(from));
    return s;
}

static void test_error_messages(void **state)
{
    (void)state;
    struct { const char *from, *to, *expect; } cases[] = {
        {"\"units\": \"mm\"", "\"units\": \"inch\"", "units = \"inch\""},
        {"\"units\": \"mm\",", "", "units: required"},
        {"\"thickness\": 1.6", "\"thickness\": -1.6", "substrate.thickness = -1.6"},
        {"\"eps_r\": 4.4", "\"eps_r\": 0.5", "substrate.eps_r = 0.5"},
        {"\"eps_r\": 4.4", "\"eps_r\": \"4.4\"", "substrate.eps_r = \"4.4\""},
        {"\"conductivity\": 5.8e7", "\"conductivity\": \"copper\"", "metal.conductivity = \"copper\""},
        {", \"thickness\": 0.035", "", "metal.thickness"},
        {"\"dx\": 0.5", "\"dx\": 0", "grid.dx = 0"},
        {"\"nx\": 4", "\"nx\": 4.5", "grid.nx = 4.5"},
        {"\"ny\": 3}", "\"ny\": 3, \"subdivide\": 0}", "grid.subdivide = 0"},
        {"\"ny\": 3}", "\"ny\": 3, \"subdivide\": 17}", "grid.subdivide = 17"},
        {"\"ny\": 3", "\"ny\": 2", "pixels = "},
        {"\"####\"", "\"###\"", "pixels[1]"},
        {"\"####\"", "\"##x#\"", "character 3 is 'x'"},
        {"\"x\": [1.5, 2]", "\"x\": [2, 1.5]", "rectangles[0].x"},
        {"\"x\": [1.5, 2]", "\"x\": [1.5, 9]", "outside the grid"},
        {"\"x\": [1.5, 2]", "\"x\": [1.5, 1.6]", "narrower than one cell"},
        {"\"name\": \"b\"", "\"name\": \"a\"", "unique"},
        {"\"side\": \"left\"", "\"side\": \"west\"", "ports[0].side = \"west\""},
        {"\"x\": 0, \"y\": [0.5, 1]", "\"x\": 0.5, \"y\": [0.5, 1]", "outline"},
        {"\"x\": 0, \"y\": [0.5, 1]", "\"x\": 0, \"y\": [0, 0.5]", "must be metal"},
        {"\"z0\": 75", "\"z0\": -75", "ports[1].z0 = -75"},
        {"\"points\": 21", "\"points\": 0", "sweep.points = 0"},
        {"\"stop\": 3", "\"stop\": 0.5", "sweep.stop"},
        {"\"unit\": \"GHz\"", "\"unit\": \"THz\"", "sweep.unit"},
        {"\"title\": \"t\"", "\"titel\": \"t\"", "titel: unknown field"},
        {"\"eps_r\": 4.4}", "\"eps_r\": 4.4, \"loss\": 0.02}", "substrate.loss: unknown field"},
        {"\"eps_r\": 4.4}", "\"eps_r\": 4.4, \"eps_r\": 4.5}", "given twice"},
        {"\"side\": \"left\", \"x\": 0,", "\"side\": \"left\",", "ports[0].x: expected the x coordinate"},
        {"\"sweep\": {", "\"sweep\": {\"start2\": 1, ", "sweep.start2: unknown"},
        {"\"title\": \"t\"", "\"title\": \"t\", \"effects\": {\"radiation\": 1}", "effects.radiation = 1"},
        {"\"title\": \"t\"", "\"title\": \"t\", \"effects\": {\"edge_profile\": \"yes\"}", "effects.edge_profile = \"yes\""},
        {"\"title\": \"t\"", "\"title\": \"t\", \"effects\": {\"dispersion\": 0}", "effects.dispersion = 0"},
        {"\"z0\": 75", "\"z0\": 75, \"calibration\": \"trl\"", "ports[1].calibration = \"trl\""},
        {"\"z0\": 75", "\"z0\": 75, \"calibration\": \"none\", \"reference_plane\": 1", "needs a calibrated port"},
        {"\"thickness\": 0.035", "\"thickness\": 1000", "metal.thickness = 1000: thicker than 2 times substrate.thickness (1.6)"},
        {"\"tolerance\": 1e-5", "\"tolerance\": 0.6", "sweep.tolerance = 0.6: expected a number > 0 and <= 0.5"},
        {"}}", "}", "invalid JSON"},
        {"}}", "}} x", "unexpected text"},
    };
    int n = sizeof cases / sizeof cases[0];
    char **msgs = calloc(n, sizeof *msgs);
    for (int k = 0; k < n; k++) {
        char *text = mutate(cases[k].from, cases[k].to);
        sv_em_project *p = (sv_em_project *)1;
        sv_status s = sv_em_project_parse(NULL, text, strlen(text), "case.json", &p);
        const char *msg = sv_last_error();
        if (s != SV_ERR_PARSE || !strstr(msg, cases[k].expect))
            printf("case %d: status %d, message '%s', expected to contain '%s'\n", k, s, msg, cases[k].expect);
        assert_int_equal(s, SV_ERR_PARSE);
        assert_null(p);
        assert_non_null(strstr(msg, cases[k].expect));
        assert_non_null(strstr(msg, "case.json"));
        msgs[k] = strdup(msg);
        for (int q = 0; q < k; q++) assert_string_not_equal(msgs[q], msgs[k]);
        free(text);
    }
    for (int k = 0; k < n; k++) free(msgs[k]);
    free(msgs);
    sv_em_project *p;
    assert_int_equal(sv_em_project_read(NULL, "/nonexistent/x.json", &p), SV_ERR_IO);
    assert_int_equal(sv_em_project_parse(NULL, NULL, 0, NULL, &p), SV_ERR_ARG);
    assert_int_equal(sv_em_project_parse(NULL, good, strlen(good), NULL, NULL), SV_ERR_ARG);
}

/* grid.subdivide = 2: the same metal, ports and sizes as the drawing made
 * by hand on the grid of half the cell size. */
static void test_subdivide(void **state)
{
    (void)state;
    char *sub = mutate("\"ny\": 3}", "\"ny\": 3, \"subdivide\": 2}");
    static const char *fine =
        "{\"title\": \"t\", \"units\": \"mm\", \"substrate\": {\"thickness\": 1.6, \"eps_r\": 4.4},"
        " \"metal\": {\"conductivity\": 5.8e7, \"thickness\": 0.035},"
        " \"grid\": {\"dx\": 0.25, \"dy\": 0.25, \"nx\": 8, \"ny\": 6},"
        " \"pixels\": [\"........\", \"........\", \"########\", \"########\", \"..##....\", \"..##....\"],"
        " \"rectangles\": [{\"x\": [1.5, 2], \"y\": [0, 1]}],"
        " \"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [0.5, 1]},"
        "           {\"name\": \"b\", \"side\": \"right\", \"x\": 2, \"y\": [0.5, 1], \"z0\": 75}]}";
    sv_em_project *a = em_test_project(sub), *b = em_test_project(fine);
    sv_em_grid ga, gb;
    sv_em_project_grid(a, &ga);
    sv_em_project_grid(b, &gb);
    assert_true(ga.nx == gb.nx && ga.ny == gb.ny && ga.dx == gb.dx && ga.dy == gb.dy);
    assert_int_equal(sv_em_project_subdivide(a), 2);
    assert_int_equal(sv_em_project_subdivide(b), 1);
    for (int j = 0; j < gb.ny; j++)
        for (int i = 0; i < gb.nx; i++) assert_int_equal(sv_em_project_metal(a, i, j), sv_em_project_metal(b, i, j));
    sv_em_model *ma = em_test_model(a), *mb = em_test_model(b);
    assert_int_equal(sv_em_model_unknowns(ma), sv_em_model_unknowns(mb));
    assert_int_equal(sv_em_model_ports(ma), 2);
    sv_em_model_destroy(ma);
    sv_em_model_destroy(mb);
    sv_em_project_destroy(a);
    sv_em_project_destroy(b);
    free(sub);
    /* a split on top of grid.subdivide states the split it makes in all */
    sub = mutate("\"ny\": 3}", "\"ny\": 3, \"subdivide\": 4}");
    a = em_test_project(sub);
    assert_int_equal(sv_em_project_split_cells(a, 5), SV_ERR_ARG);
    printf("%s\n", sv_last_error());
    assert_non_null(strstr(sv_last_error(), "split of 5 x 5 on the project's grid.subdivide of 4 is 20 x 20 in all: "
                                            "expected at most 16 x 16"));
    sv_em_project_destroy(a);
    free(sub);
}

/* The context's warnings, gathered. */
static void gather(void *user, sv_log_level level, const char *message)
{
    char *all = user;
    if (level == SV_LOG_WARN) snprintf(all + strlen(all), 4096 - strlen(all), "%s\n", message);
}

/* Effect switches: read as written, with a warning on the context's log
 * for one given as true that has nothing to act on; thick metal up to
 * twice the substrate, any thickness as a sheet (it then sets Zs alone). */
static void test_effects_that_act(void **state)
{
    (void)state;
    const char *cases[][3] = {
        {"\"title\": \"t\"", "\"title\": \"t\", \"effects\": {\"dispersion_far_field\": false}", NULL},
        {"\"title\": \"t\"", "\"title\": \"t\", \"effects\": {\"dispersion\": true, \"dispersion_far_field\": true}",
         NULL},
        {"\"title\": \"t\"", "\"title\": \"t\", \"effects\": {\"dielectric_loss\": false}", NULL},
        {"\"thickness\": 0.035", "\"thickness\": 3.1", NULL},
        {"\"thickness\": 0.035}", "\"thickness\": 1000}, \"effects\": {\"thick_metal\": false}", NULL},
        {"\"title\": \"t\"", "\"title\": \"t\", \"effects\": {\"dispersion_far_field\": true}",
         "case.json: effects.dispersion_far_field = true does nothing without effects.dispersion = true"},
        {"\"title\": \"t\"", "\"title\": \"t\", \"effects\": {\"dielectric_loss\": true}",
         "case.json: effects.dielectric_loss = true does nothing with substrate.tan_delta 0"},
        {"\"title\": \"t\"", "\"title\": \"t\", \"effects\": {\"dielectric_loss\": \"exact\"}",
         "effects.dielectric_loss = \"exact\" does nothing"},
        {"\"conductivity\": 5.8e7, \"thickness\": 0.035", "\"conductivity\": \"inf\"}, \"effects\": {\"thick_metal\": true",
         "effects.thick_metal = true does nothing without a metal.thickness > 0"},
    };
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    char warnings[4096];
    sv_ctx_set_log(ctx, gather, warnings);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *text = mutate(cases[k][0], cases[k][1]);
        sv_em_project *p = NULL;
        warnings[0] = 0;
        sv_status s = sv_em_project_parse(ctx, text, strlen(text), "case.json", &p);
        if (s) printf("case %zu: %s\n", k, sv_last_error());
        if (warnings[0]) printf("case %zu: %s", k, warnings);
        assert_int_equal(s, SV_OK);
        if (cases[k][2]) assert_non_null(strstr(warnings, cases[k][2]));
        else assert_int_equal(warnings[0], 0);
        sv_em_project_destroy(p);
        free(text);
    }
    sv_ctx_destroy(ctx);
}

/* A 10 mm line on 1 mm cells, ports at x = 0 (P1) and x = 10 (P2), their
 * reference planes moved in by d1 and d2: the planes are at d1 and 10 - d2. */
static sv_status line_with_planes(double d1, double d2)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"units\": \"mm\", \"substrate\": {\"thickness\": 1.6, \"eps_r\": 4.4, \"tan_delta\": 0.02},"
             " \"metal\": {\"conductivity\": 5.8e7, \"thickness\": 0.035},"
             " \"grid\": {\"dx\": 1, \"dy\": 1, \"nx\": 20, \"ny\": 4},"
             " \"rectangles\": [{\"x\": [0, 10], \"y\": [1, 3]}, {\"x\": [14, 20], \"y\": [1, 3]}],"
             " \"ports\": [{\"name\": \"P1\", \"side\": \"left\", \"x\": 0, \"y\": [1, 3], \"reference_plane\": %g},"
             "  {\"name\": \"P2\", \"side\": \"right\", \"x\": 10, \"y\": [1, 3], \"reference_plane\": %g},"
             "  {\"name\": \"P3\", \"side\": \"left\", \"x\": 14, \"y\": [1, 3], \"reference_plane\": -3}]}",
             d1, d2);
    sv_em_project *p = NULL;
    sv_status s = sv_em_project_parse(NULL, json, strlen(json), "line.json", &p);
    sv_em_project_destroy(p);
    return s;
}

/* Reference planes that meet or pass each other describe no two-port: refused
 * naming both ports (both moved in by 6 mm gave |S21| = 1.00126 on a lossy
 * line); planes that leave line between them pass. P3 faces away from P2
 * (its strip lies beyond P2's) and is moved out: it never meets P2. */
static void test_reference_planes(void **state)
{
    (void)state;
    assert_int_equal(line_with_planes(4, 4), SV_OK);
    assert_int_equal(line_with_planes(-2, 9), SV_OK);
    struct { double d1, d2; const char *expect; } refused[] = {
        {6, 6, "ports 'P1' (x = 6) and 'P2' (x = 4) cross"},
        {5, 5, "ports 'P1' (x = 5) and 'P2' (x = 5) meet"},
        {10, 0, "ports 'P1' (x = 10) and 'P2' (x = 10) meet"},
        {12, -1, "ports 'P1' (x = 12) and 'P2' (x = 11) cross"},
    };
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        sv_status s = line_with_planes(refused[k].d1, refused[k].d2);
        printf("planes %g, %g: %s\n", refused[k].d1, refused[k].d2, sv_last_error());
        assert_int_equal(s, SV_ERR_PARSE);
        assert_non_null(strstr(sv_last_error(), refused[k].expect));
        assert_non_null(strstr(sv_last_error(), "ports[0] and ports[1] reference_plane"));
        assert_non_null(strstr(sv_last_error(), "less than 10, the ports' distance"));
    }
}

/* JSON text holds no raw NUL: refused with its place, whether before the
 * object or inside a string ("a\0" would otherwise read as "a"). A UTF-8
 * byte-order mark is accepted. */
static void test_nul_and_bom(void **state)
{
    (void)state;
    size_t n = strlen(good);
    char *buf = malloc(n + 4);
    buf[0] = 0;
    memcpy(buf + 1, good, n);
    sv_em_project *p = NULL;
    assert_int_equal(sv_em_project_parse(NULL, buf, n + 1, "nul.json", &p), SV_ERR_PARSE);
    printf("%s\n", sv_last_error());
    assert_non_null(strstr(sv_last_error(), "nul.json: line 1 (byte 0): a NUL byte ('\\x00')"));
    size_t at = (size_t)(strstr(good, "\"name\": \"a\"") - good) + 10; /* just after the a */
    memcpy(buf, good, at);
    buf[at] = 0;
    memcpy(buf + at + 1, good + at, n - at);
    assert_int_equal(sv_em_project_parse(NULL, buf, n + 1, "nul.json", &p), SV_ERR_PARSE);
    char expect[64];
    snprintf(expect, sizeof expect, "(byte %zu): a NUL byte", at);
    assert_non_null(strstr(sv_last_error(), expect));
    assert_null(p);
    memcpy(buf, "\xef\xbb\xbf", 3);
    memcpy(buf + 3, good, n);
    assert_int_equal(sv_em_project_parse(NULL, buf, n + 3, "bom.json", &p), SV_OK);
    sv_em_project_destroy(p);
    free(buf);
}

/* The JSON of a 3 x 2 map read from the CSV file at csv. */
static void csv_project(char *json, size_t cap, const char *csv)
{
    snprintf(json, cap,
             "{\"units\": \"mm\", \"substrate\": {\"thickness\": 1, \"eps_r\": 4},"
             " \"metal\": {\"conductivity\": \"inf\"}, \"grid\": {\"dx\": 1, \"dy\": 1, \"nx\": 3, \"ny\": 2},"
             " \"pixels\": {\"csv\": \"%s\"}, \"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [0, 1]}]}",
             csv);
}

/* A CSV map: a byte-order mark is skipped (Excel writes one), a NUL is
 * shown escaped, the message whole. */
static void test_csv_bom_and_nul(void **state)
{
    (void)state;
    char csv[256], json[1024];
    snprintf(csv, sizeof csv, "/tmp/sv_test_csv_bom_%d.csv", (int)getpid());
    FILE *f = fopen(csv, "wb");
    assert_non_null(f);
    fputs("\xef\xbb\xbf" "0,1,0\r\n1,1,1\r\n", f);
    fclose(f);
    csv_project(json, sizeof json, csv);
    sv_em_project *p = NULL;
    assert_int_equal(sv_em_project_parse(NULL, json, strlen(json), "t.json", &p), SV_OK);
    /* first line = top row j = 1 */
    assert_true(!sv_em_project_metal(p, 0, 1) && sv_em_project_metal(p, 1, 1) && sv_em_project_metal(p, 0, 0));
    sv_em_project_destroy(p);
    f = fopen(csv, "wb");
    fwrite("0,1,0\n1,\0,1\n", 1, 12, f);
    fclose(f);
    assert_int_equal(sv_em_project_parse(NULL, json, strlen(json), "t.json", &p), SV_ERR_PARSE);
    printf("%s\n", sv_last_error());
    assert_non_null(strstr(sv_last_error(), "row 2, column 2: '\\x00': expected 0 (empty) or 1 (metal)"));
    f = fopen(csv, "wb");
    fwrite("0,1,0\n1\0,1\n", 1, 12, f);
    fclose(f);
    assert_int_equal(sv_em_project_parse(NULL, json, strlen(json), "t.json", &p), SV_ERR_PARSE);
    assert_non_null(strstr(sv_last_error(), "row 2, column 1: '\\x00': expected ',' between values"));
    remove(csv);
}

/* Inputs that are not regular files are refused at once: a FIFO with no
 * writer once blocked open() forever (the alarm turns a hang into a
 * failure), a directory read as "read error". */
static void test_not_regular_inputs(void **state)
{
    (void)state;
    char fifo[256], dir[256], json[1024];
    snprintf(fifo, sizeof fifo, "/tmp/sv_test_fifo_%d", (int)getpid());
    snprintf(dir, sizeof dir, "/tmp/sv_test_dir_%d", (int)getpid());
    remove(fifo);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(mkdir(dir, 0700), 0);
    alarm(10);
    sv_em_project *p = NULL;
    assert_int_equal(sv_em_project_read(NULL, fifo, &p), SV_ERR_IO);
    assert_non_null(strstr(sv_last_error(), "is a FIFO (named pipe), not a regular file"));
    assert_int_equal(sv_em_project_read(NULL, dir, &p), SV_ERR_IO);
    assert_non_null(strstr(sv_last_error(), "is a directory, not a file"));
    csv_project(json, sizeof json, fifo);
    assert_int_equal(sv_em_project_parse(NULL, json, strlen(json), "t.json", &p), SV_ERR_IO);
    printf("%s\n", sv_last_error());
    assert_non_null(strstr(sv_last_error(), "pixels.csv = \""));
    assert_non_null(strstr(sv_last_error(), "is a FIFO"));
    csv_project(json, sizeof json, dir);
    assert_int_equal(sv_em_project_parse(NULL, json, strlen(json), "t.json", &p), SV_ERR_IO);
    assert_non_null(strstr(sv_last_error(), "is a directory"));
    alarm(0);
    assert_null(p);
    remove(fifo);
    rmdir(dir);
}

/* Truncations at every byte and random byte mutations: OK or a parse error,
 * never a crash (run under the sanitizers too). */
static void test_fuzz(void **state)
{
    (void)state;
    size_t n = strlen(good);
    char *buf = malloc(n + 1);
    for (size_t cut = 0; cut < n; cut++) {
        sv_em_project *p = NULL;
        sv_status s = sv_em_project_parse(NULL, good, cut, "cut", &p);
        assert_true(s == SV_ERR_PARSE);
        assert_null(p);
    }
    sv_test_rng r;
    sv_test_rng_seed(&r, 1234);
    const char alphabet[] = "{}[]\",:#.-+0123456789eE aTfn\\\x01\xff";
    int ok = 0;
    for (int it = 0; it < 4000; it++) {
        memcpy(buf, good, n + 1);
        int nm = 1 + (int)(sv_test_rng_next(&r) % 4);
        for (int k = 0; k < nm; k++) {
            size_t at = sv_test_rng_next(&r) % n;
            buf[at] = alphabet[sv_test_rng_next(&r) % (sizeof alphabet - 1)];
        }
        sv_em_project *p = NULL;
        sv_status s = sv_em_project_parse(NULL, buf, n, "fuzz", &p);
        assert_true(s == SV_OK || s == SV_ERR_PARSE);
        if (s == SV_OK) {
            ok++;
            sv_em_model *m = NULL;
            if (sv_em_model_create(NULL, p, NULL, &m) == SV_OK) sv_em_model_destroy(m);
            sv_em_project_destroy(p);
        } else {
            assert_true(strlen(sv_last_error()) > 10);
        }
    }
    printf("fuzz: %d of 4000 mutated files still valid\n", ok);
    free(buf);
}

/* The cells a port sits on, worked out by hand for the dataset's board:
 * 8-mil cells, P1 on the left edge (x = 0) over y = 16 … 72 mil, P2 on the
 * right (x = 280 mil): rows 2 … 8 of columns 0 and 34. */
static void test_port_cells(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/examples/design/board.json", SV_SOURCE_DIR);
    sv_em_project *p;
    assert_int_equal(sv_em_project_read(NULL, path, &p), SV_OK);
    int cells[16];
    for (int k = 0; k < 2; k++) {
        assert_int_equal(sv_em_project_port_cells(p, k, NULL, 0), 7);
        assert_int_equal(sv_em_project_port_cells(p, k, cells, 16), 7);
        for (int q = 0; q < 7; q++) assert_int_equal(cells[q], (k ? 34 : 0) + 35 * (2 + q));
    }
    assert_int_equal(sv_em_project_port_cells(p, 1, cells, 3), 7); /* the count whatever the room */
    assert_int_equal(sv_em_project_port_cells(p, 2, cells, 16), -1);
    assert_int_equal(sv_em_project_port_cells(p, -1, cells, 16), -1);
    sv_em_project_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_file),
        cmocka_unit_test(test_examples),
        cmocka_unit_test(test_csv_and_effects),
        cmocka_unit_test(test_subdivide),
        cmocka_unit_test(test_error_messages),
        cmocka_unit_test(test_effects_that_act),
        cmocka_unit_test(test_reference_planes),
        cmocka_unit_test(test_nul_and_bom),
        cmocka_unit_test(test_csv_bom_and_nul),
        cmocka_unit_test(test_not_regular_inputs),
        cmocka_unit_test(test_fuzz),
        cmocka_unit_test(test_port_cells),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
