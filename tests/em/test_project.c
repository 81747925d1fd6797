#define _POSIX_C_SOURCE 200809L
/* Project files: the examples read with the expected meshes, every
 * malformed case gives its own message naming the field, and truncated or
 * mutated files never crash the reader. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_file),
        cmocka_unit_test(test_examples),
        cmocka_unit_test(test_csv_and_effects),
        cmocka_unit_test(test_subdivide),
        cmocka_unit_test(test_error_messages),
        cmocka_unit_test(test_fuzz),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
