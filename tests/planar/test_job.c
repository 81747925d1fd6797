/* The planar job: what it delivers against closed forms and a second
 * method, its memory refusal, its progress and its cancellation (every
 * allocation released, nothing delivered). Small projects, so that the
 * sanitizer build runs it too; test_cancel_latency.c stops the big one. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solvent/planar.h"
#include "sv_test.h"

/* A pixelated two-port with every effect the tool uses by default: thick
 * lossy metal, a lossy dielectric, radiation, the edge profiles and
 * calibrated ports. 24 × 10 cells of 0.5 mm. */
static const char pixel_project[] =
    "{\"units\": \"mm\", \"substrate\": {\"thickness\": 0.508, \"eps_r\": 3.66, \"tan_delta\": 0.0037},"
    " \"metal\": {\"conductivity\": 5.8e7, \"thickness\": 0.035},"
    " \"grid\": {\"dx\": 0.5, \"dy\": 0.5, \"nx\": 24, \"ny\": 10},"
    " \"pixels\": [\"..##..#####..###..##....\", \".####.#...#..#.#.####...\", \"..#...#####..###..#..##.\","
    "              \"..##...#.......#..##.##.\", \"########################\", \"########################\","
    "              \"..#.##...#.###..#.##..#.\", \".####...####..#####..##.\", \"..#.##..#..#..#...##.#..\","
    "              \"....#......#.......#....\"],"
    " \"ports\": [{\"name\": \"in\", \"side\": \"left\", \"x\": 0, \"y\": [2, 3]},"
    "            {\"name\": \"out\", \"side\": \"right\", \"x\": 12, \"y\": [2, 3]}],"
    " \"sweep\": {\"start\": 1, \"stop\": 12, \"points\": 23, \"unit\": \"GHz\"}}";

/* A 10 × 1 mm copper strip, 35 µm: its DC resistance is l/(σ·t·W). */
static const char strip_project[] =
    "{\"units\": \"mm\", \"substrate\": {\"thickness\": 1, \"eps_r\": 4.4},"
    " \"metal\": {\"conductivity\": 5.8e7, \"thickness\": 0.035},"
    " \"grid\": {\"dx\": 0.5, \"dy\": 0.25, \"nx\": 20, \"ny\": 4}, \"rectangles\": [{\"x\": [0, 10], \"y\": [0, 1]}],"
    " \"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [0, 1]},"
    "            {\"name\": \"b\", \"side\": \"right\", \"x\": 10, \"y\": [0, 1]}]}";

static sv_em_project *project(sv_ctx *ctx, const char *json)
{
    sv_em_project *p = NULL;
    sv_status s = sv_em_project_parse(ctx, json, strlen(json), "test", &p);
    if (s) fprintf(stderr, "project: %s\n", sv_last_error());
    assert_int_equal(s, SV_OK);
    return p;
}

/* A job of `json` with options o, run; asserts it succeeds. */
static sv_planar_job *run_job(sv_ctx *ctx, const char *json, const sv_planar_options *o)
{
    sv_em_project *p = project(ctx, json);
    sv_planar_job *job = NULL;
    sv_status s = sv_planar_job_create(ctx, p, o, &job);
    if (!s) s = sv_planar_job_run(job);
    if (s) fprintf(stderr, "job: %s\n", sv_last_error());
    assert_int_equal(s, SV_OK);
    sv_em_project_destroy(p);
    return job;
}

static double max_diff(int count, const double complex *a, const double complex *b)
{
    double d = 0;
    for (int e = 0; e < count; e++) d = fmax(d, cabs(a[e] - b[e]));
    return d;
}

/* The estimate covers what a job held: at least the allocator's peak over
 * each stage (the mesh's creation, the run), not more than `most` times the
 * job's peak, and the mesh's not more than three times its own (the
 * radiation terms' making is sized for their largest rank). */
static void check_estimate(const char *name, const sv_planar_report *r, double most)
{
    const sv_planar_memory *m = &r->estimate;
    size_t run = m->model + (m->solves > m->calibration ? m->solves : m->calibration) + m->small;
    size_t ran = r->peak_assembly > r->peak_sweep ? r->peak_assembly : r->peak_sweep;
    double mesh = (double)m->mesh / (double)r->peak_mesh, stage = (double)run / (double)ran;
    double whole = (double)m->total / (double)r->peak;
    printf("%s, %d unknowns: mesh %.2f / %.2f MiB (%.2f), run %.2f / %.2f MiB (%.2f), job %.2f\n", name, r->unknowns,
           m->mesh / 1048576.0, r->peak_mesh / 1048576.0, mesh, run / 1048576.0, ran / 1048576.0, stage, whole);
    if (!(mesh >= 1 && mesh <= 3 && stage >= 1 && whole >= 1 && whole <= most))
        fail_msg("%s: the estimate against the peak: mesh %.3f, run %.3f, job %.3f", name, mesh, stage, whole);
}

/* The adaptive sweep in mixed precision against every frequency solved by
 * LAPACK on a full double copy (the independent reference solver): the
 * same S to the sweep's accuracy, reciprocal and passive. */
static void test_sweep_against_lapack(void **state)
{
    (void)state;
    sv_planar_options o;
    sv_planar_options_default(&o);
    o.device = SV_PLANAR_DEVICE_CPU;
    o.band.tolerance = 1e-8;
    sv_ctx *ctx; /* counting what the sweep holds */
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    sv_planar_job *fast = run_job(ctx, pixel_project, &o);
    o.exact_all = 1;
    o.precision = SV_SWEEP_LAPACK;
    sv_planar_job *ref = run_job(NULL, pixel_project, &o);
    const sv_planar_network *a = sv_planar_job_network(fast), *b = sv_planar_job_network(ref);
    assert_int_equal(a->nf, 23);
    assert_int_equal(a->p, 2);
    assert_string_equal(a->port_names[0], "in");
    assert_string_equal(a->port_names[1], "out");
    sv_assert_close(a->freq_hz[22], 12e9, 1e-15, 0);
    double d = max_diff(a->nf * 4, a->s, b->s);
    sv_planar_report r;
    assert_int_equal(sv_planar_job_report(fast, &r), SV_OK);
    printf("pixel two-port: %d unknowns, %d exact solves of %d frequencies, max |S - S_lapack| %.2e\n", r.unknowns,
           r.exact_solves, r.nfreq, d);
    assert_true(d < 1e-7);
    assert_true(r.exact_solves < r.nfreq);
    assert_true(r.converged);
    assert_true(r.calibrated && r.lossy_metal && r.radiation && r.edge_profiles);
    assert_true(r.checks.reciprocity < 1e-10);
    assert_true(r.checks.max_singular < 1);
    assert_int_equal(r.exact_all, 0);
    /* its estimate covers what it held, within three times (the sweep's
     * holds room for the cap's 30 exact solves, where this one needs 6) */
    check_estimate("pixel two-port, adaptive sweep", &r, 3);
    sv_planar_job_destroy(fast);
    sv_planar_job_destroy(ref);
    sv_ctx_destroy(ctx);
}

/* DC and above from one list: DC against the strip's closed-form
 * resistance, Y and Z against S by their definitions, Z = Y⁻¹, and the raw
 * ports' Y against a job whose ports are raw. */
static void test_network_parameters(void **state)
{
    (void)state;
    const double f[] = {0, 1e9, 3e9};
    sv_planar_options o;
    sv_planar_options_default(&o);
    o.freq_hz = f;
    o.nfreq = 3;
    o.exact_all = 1;
    o.precision = SV_SWEEP_DOUBLE;
    o.device = SV_PLANAR_DEVICE_CPU;
    o.outputs = SV_PLANAR_OUTPUT_Y | SV_PLANAR_OUTPUT_Z | SV_PLANAR_OUTPUT_Y_RAW;
    sv_planar_job *job = run_job(NULL, strip_project, &o);
    const sv_planar_network *n = sv_planar_job_network(job);
    assert_int_equal(n->nf, 3);
    assert_true(n->exact[0] && n->exact[1] && n->exact[2]);
    /* DC: a series resistor R between the ports; S21 = 2·z0/(2·z0 + R), Z does not exist */
    double R = 10e-3 / (5.8e7 * 35e-6 * 1e-3), z0 = n->z0[0];
    sv_assert_close(creal(n->y[0]), 1 / R, 1e-10, 0);
    sv_assert_close(creal(n->y[1]), -1 / R, 1e-10, 0);
    sv_assert_close(creal(n->s[1]), 2 * z0 / (2 * z0 + R), 1e-10, 0);
    sv_assert_close(creal(n->s[0]), R / (2 * z0 + R), 1e-10, 1); /* to 1e-10 of |S| ≤ 1 */
    assert_true(isnan(creal(n->z[0])));
    for (int i = 1; i < 3; i++) {
        const double complex *y = n->y + 4 * i, *z = n->z + 4 * i, *s = n->s + 4 * i;
        /* Z·Y = I */
        for (int r = 0; r < 2; r++)
            for (int c = 0; c < 2; c++) {
                double complex zy = z[r] * y[2 * c] + z[r + 2] * y[1 + 2 * c];
                assert_true(cabs(zy - (r == c)) < 1e-10);
            }
        /* S = (I − z0·Y)(I + z0·Y)⁻¹ for equal references, by hand */
        double complex a = 1 + z0 * y[0], b = z0 * y[2], c = z0 * y[1], d = 1 + z0 * y[3];
        double complex det = a * d - b * c;
        double complex inv[4] = {d / det, -c / det, -b / det, a / det};
        double complex m[4] = {1 - z0 * y[0], -z0 * y[1], -z0 * y[2], 1 - z0 * y[3]};
        for (int r = 0; r < 2; r++)
            for (int q = 0; q < 2; q++) {
                double complex v = m[r] * inv[2 * q] + m[r + 2] * inv[1 + 2 * q];
                assert_true(cabs(v - s[r + 2 * q]) < 1e-12);
            }
    }
    /* the raw ports' Y is what a job with raw ports delivers as Y */
    char raw[2048];
    snprintf(raw, sizeof raw, "%s", strip_project);
    char *ports = strstr(raw, "\"ports\"");
    assert_non_null(ports);
    snprintf(ports, sizeof raw - (size_t)(ports - raw),
             "\"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [0, 1], \"calibration\": \"none\"},"
             " {\"name\": \"b\", \"side\": \"right\", \"x\": 10, \"y\": [0, 1], \"calibration\": \"none\"}]}");
    o.outputs = SV_PLANAR_OUTPUT_Y;
    sv_planar_job *rawjob = run_job(NULL, raw, &o);
    const sv_planar_network *nr = sv_planar_job_network(rawjob);
    double d = max_diff(12, n->y_raw, nr->y), scale = cabs(nr->y[4]);
    printf("strip: R %.6g mOhm, raw ports' Y against raw ports' job %.2e (|Y11| %.3g S)\n", 1e3 * R, d, scale);
    assert_true(d <= 1e-12 * scale);
    assert_true(max_diff(4, n->y, n->y_raw) == 0); /* at DC an edge port's box is the identity */
    assert_true(max_diff(4, n->y + 4, n->y_raw + 4) > 1e-6 * scale); /* above it the calibration acts */
    sv_planar_job_destroy(rawjob);
    sv_planar_job_destroy(job);
}

/* The caller's project stays as it was when the job subdivides its copy. */
static void test_project_is_copied(void **state)
{
    (void)state;
    sv_em_project *p = project(NULL, strip_project);
    sv_planar_options o;
    sv_planar_options_default(&o);
    o.subdivide = 2;
    o.band = (sv_em_sweep){.start_hz = 1e9, .stop_hz = 2e9, .points = 2};
    sv_planar_job *job;
    assert_int_equal(sv_planar_job_create(NULL, p, &o, &job), SV_OK);
    sv_em_grid g, gj;
    sv_em_project_grid(p, &g);
    sv_em_project_grid(sv_planar_job_project(job), &gj);
    assert_int_equal(g.nx, 20);
    assert_int_equal(gj.nx, 40);
    assert_int_equal(sv_em_project_subdivide(sv_planar_job_project(job)), 2);
    int nf;
    const double *f = sv_planar_job_frequencies(job, &nf);
    assert_int_equal(nf, 2);
    assert_true(f[0] == 1e9 && f[1] == 2e9);
    assert_null(sv_planar_job_network(job)); /* not run yet */
    sv_planar_report r;
    assert_int_equal(sv_planar_job_report(job, &r), SV_ERR_ARG);
    sv_planar_job_destroy(job);
    sv_em_project_destroy(p);
}

/* Bad options are named; nothing is left allocated. */
static void test_bad_options(void **state)
{
    (void)state;
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    sv_em_project *p = project(ctx, strip_project);
    size_t held = sv_ctx_memory_current(ctx);
    const double unsorted[] = {2e9, 1e9}, negative[] = {-1, 1e9}, nan_f[] = {NAN}, sub_nhz[] = {0, 1e-300};
    struct {
        sv_planar_options o;
        const char *named;
    } cases[] = {
        {.o = {.freq_hz = unsorted, .nfreq = 2}, "ascending"},
        {.o = {.freq_hz = negative, .nfreq = 2}, "frequency 0 = -1 Hz"},
        {.o = {.freq_hz = nan_f, .nfreq = 1}, "frequency 0 = nan"},
        {.o = {.freq_hz = sub_nhz, .nfreq = 2}, "frequency 1 = 1e-300 Hz: expected 0 (DC) or 1e-09 Hz and above"},
        {.o = {.band = {.start_hz = 1e-12, .stop_hz = 1e-10, .points = 3}}, "frequency 0 = 1e-12 Hz"},
        {.o = {.freq_hz = unsorted, .nfreq = 0}, "nfreq = 0"},
        {.o = {.subdivide = 17}, "subdivide = 17"},
        {.o = {.max_exact = -1}, "max_exact = -1"},
        {.o = {.device = (sv_planar_device)7}, "device = 7"},
        {.o = {.outputs = 64}, "outputs = 0x40"},
        {.o = {.band = {.start_hz = 3e9, .stop_hz = 1e9, .points = 3}}, "stop"},
        {.o = {.band = {.start_hz = 1e9}}, "stop"}, /* the strip has no sweep section */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        sv_planar_job *job = (sv_planar_job *)1;
        assert_int_equal(sv_planar_job_create(ctx, p, &cases[k].o, &job), SV_ERR_ARG);
        assert_null(job);
        if (!strstr(sv_last_error(), cases[k].named)) fail_msg("case %zu: '%s' does not name '%s'", k, sv_last_error(), cases[k].named);
        assert_int_equal(sv_ctx_memory_current(ctx), held);
    }
    sv_em_project_destroy(p);
    assert_int_equal(sv_ctx_memory_current(ctx), 0);
    sv_ctx_destroy(ctx);
}

/* A job that would not fit its limit is refused before anything large is
 * allocated, with its estimate's parts named; a job runs once. */
static void test_memory_refused(void **state)
{
    (void)state;
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    sv_em_project *p = project(ctx, pixel_project);
    sv_planar_options o;
    sv_planar_options_default(&o);
    sv_planar_job *job;
    sv_planar_memory m;
    /* a limit the mesh fits, the run not */
    assert_int_equal(sv_planar_job_create(ctx, p, &o, &job), SV_OK);
    sv_planar_job_memory(job, &m);
    sv_planar_job_destroy(job);
    o.memory_limit = (m.mesh + m.total) / 2;
    o.memory_limit_name = "--memory-limit";
    assert_int_equal(sv_planar_job_create(ctx, p, &o, &job), SV_OK);
    sv_planar_job_memory(job, &m);
    assert_true(m.total > m.limit && m.limit == o.memory_limit && m.mesh < m.limit);
    assert_true(m.model > 0 && m.solves > 0 && m.calibration > 0);
    size_t run = m.model + (m.solves > m.calibration ? m.solves : m.calibration) + m.small;
    assert_int_equal(m.total, run > m.mesh ? run : m.mesh);
    size_t before = sv_ctx_memory_current(ctx);
    sv_ctx_reset_peak(ctx);
    assert_int_equal(sv_planar_job_run(job), SV_ERR_BUDGET);
    const char *msg = sv_last_error();
    assert_non_null(strstr(msg, "this sweep needs about"));
    assert_non_null(strstr(msg, "the model's terms"));
    assert_non_null(strstr(msg, "calibration standards"));
    char limit[64], named[96];
    snprintf(named, sizeof named, "more than the %s limit (--memory-limit)", sv_format_bytes(m.limit, limit, sizeof limit));
    assert_non_null(strstr(msg, named));
    assert_true(sv_ctx_memory_peak(ctx) - before < 4096); /* nothing large was allocated */
    assert_true(sv_ctx_memory_current(ctx) <= before);
    assert_null(sv_planar_job_network(job));
    assert_int_equal(sv_ctx_memory_limit(ctx), 0); /* the context's own budget is back */
    assert_int_equal(sv_planar_job_run(job), SV_ERR_ARG); /* a job runs once */
    sv_planar_job_destroy(job);
    sv_em_project_destroy(p);
    assert_int_equal(sv_ctx_memory_current(ctx), 0);
    sv_ctx_destroy(ctx);
}

/* Frequencies below the low-frequency threshold are solved on the
 * loop-tree basis, a dense 16·N² matrix beside the model, one frequency at
 * a time after the sweep: the estimate covers it (the sweep's own part
 * for the same frequencies is larger here, so either may decide), and the
 * job's measured peak stays within the estimate. */
static void test_memory_low_frequencies(void **state)
{
    (void)state;
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    const double low[] = {10, 1e3};
    sv_planar_options o;
    sv_planar_options_default(&o);
    o.device = SV_PLANAR_DEVICE_CPU;
    o.exact_all = 1;
    o.freq_hz = low;
    o.nfreq = 2;
    sv_planar_report r;
    sv_planar_job *job = run_job(ctx, strip_project, &o);
    assert_int_equal(sv_planar_job_report(job, &r), SV_OK);
    sv_planar_job_destroy(job);
    size_t n = (size_t)r.unknowns, loop_tree = 16 * n * n;
    print_message("strip, %zu unknowns at 10 Hz and 1 kHz: solves estimated %zu B (the loop tree's matrix %zu B); "
                  "job peak %zu B of %zu B estimated\n", n, r.estimate.solves, loop_tree, r.peak, r.estimate.total);
    assert_true(r.estimate.solves >= loop_tree);
    assert_true(r.peak <= r.estimate.total);
    assert_int_equal(sv_ctx_memory_current(ctx), 0);
    sv_ctx_destroy(ctx);
}

/* The pixelated two-port with a metal thickness, effects and each port's
 * calibration of the caller's, into buf. */
static const char *pixel_variant(char *buf, size_t len, const char *thickness, const char *effects,
                                 const char *calibration)
{
    const char *metal = strstr(pixel_project, "\"metal\""), *grid = strstr(pixel_project, "\"grid\"");
    const char *ports = strstr(pixel_project, "\"ports\""), *sweep = strstr(pixel_project, "\"sweep\"");
    snprintf(buf, len,
             "%.*s\"metal\": {\"conductivity\": 5.8e7, \"thickness\": %s}, %.*s\"effects\": {%s},"
             " \"ports\": [{\"name\": \"in\", \"side\": \"left\", \"x\": 0, \"y\": [2, 3], \"calibration\": \"%s\"},"
             " {\"name\": \"out\", \"side\": \"right\", \"x\": 12, \"y\": [2, 3], \"calibration\": \"%s\"}], %s",
             (int)(metal - pixel_project), pixel_project, thickness, (int)(ports - grid), grid, effects, calibration,
             calibration, sweep);
    return buf;
}

/* Thick metal's Ritz steps on a finer mesh: walls taller than half a cell,
 * the mesh split 2 × 2 (the rest of the effects: test_sweep_against_lapack,
 * every default and calibrated ports; test_validity_limit, dispersion). */
static void test_memory_estimate_covers(void **state)
{
    (void)state;
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    char json[4096];
    pixel_variant(json, sizeof json, "0.3", "\"radiation\": false, \"edge_profile\": false, \"edge_cells\": false",
                  "none");
    sv_planar_options o;
    sv_planar_options_default(&o);
    o.device = SV_PLANAR_DEVICE_CPU;
    o.subdivide = 2;
    o.exact_all = 1;
    o.band = (sv_em_sweep){.start_hz = 2e9, .stop_hz = 12e9, .points = 2};
    sv_planar_job *job = run_job(ctx, json, &o);
    sv_planar_report r;
    assert_int_equal(sv_planar_job_report(job, &r), SV_OK);
    check_estimate("tall walls, split 2", &r, 2);
    sv_planar_job_destroy(job);
    sv_ctx_destroy(ctx);
}

/* A limit between the run's estimate and the mesh's need (the radiation
 * terms while they are made, near the model's limit, on a mesh of a few
 * hundred unknowns) is refused at creation, before the mesh, naming it. */
static void test_mesh_memory_refused(void **state)
{
    (void)state;
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    char json[4096];
    sv_em_project *p = project(ctx, pixel_variant(json, sizeof json, "0.035", "", "none"));
    sv_planar_options o;
    sv_planar_options_default(&o);
    o.band = (sv_em_sweep){.start_hz = 2e9, .stop_hz = 24e9, .points = 12};
    sv_planar_job *job;
    assert_int_equal(sv_planar_job_create(ctx, p, &o, &job), SV_OK);
    sv_planar_memory m;
    sv_planar_job_memory(job, &m);
    size_t run = m.model + (m.solves > m.calibration ? m.solves : m.calibration) + m.small;
    printf("mesh %.2f MiB, run %.2f MiB\n", m.mesh / 1048576.0, run / 1048576.0);
    assert_true(m.mesh > 2 * run);
    sv_planar_job_destroy(job);
    o.memory_limit = (run + m.mesh) / 2;
    size_t before = sv_ctx_memory_current(ctx);
    sv_ctx_reset_peak(ctx);
    assert_int_equal(sv_planar_job_create(ctx, p, &o, &job), SV_ERR_BUDGET);
    assert_null(job);
    const char *msg = sv_last_error();
    printf("%s\n", msg);
    assert_non_null(strstr(msg, "the mesh of"));
    assert_non_null(strstr(msg, "the radiation terms"));
    assert_true(sv_ctx_memory_peak(ctx) - before < 64 * 1024); /* the project's copy, nothing of the mesh */
    assert_int_equal(sv_ctx_memory_current(ctx), before);
    sv_em_project_destroy(p);
    sv_ctx_destroy(ctx);
}

/* Frequencies above the model's limit with radiation on are refused at
 * creation, naming the first and the limit (this lossy 50 Ω line, calibrated,
 * gives |S| up to 1.29 between 12 and 16 GHz with dispersion, 1.75 at 18 GHz
 * without); allowed on request; within the limit, with dispersion, every S
 * is passive. */
static void test_validity_limit(void **state)
{
    (void)state;
    static const char line[] =
        "{\"units\": \"mm\", \"substrate\": {\"thickness\": 1.6, \"eps_r\": 4.4, \"tan_delta\": 0.02},"
        " \"metal\": {\"conductivity\": 5.8e7, \"thickness\": 0.035},"
        " \"effects\": {\"dispersion\": true, \"thick_metal\": false, \"edge_profile\": false, \"edge_cells\": false},"
        " \"grid\": {\"dx\": 1, \"dy\": 0.6124, \"nx\": 20, \"ny\": 5}, \"rectangles\": [{\"x\": [0, 20], \"y\": [0, 3.062]}],"
        " \"ports\": [{\"name\": \"P1\", \"side\": \"left\", \"x\": 0, \"y\": [0, 3.062]},"
        "            {\"name\": \"P2\", \"side\": \"right\", \"x\": 20, \"y\": [0, 3.062]}]}";
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    sv_em_project *p = project(ctx, line);
    char sheet[2048]; /* the same line without dispersion: quicker to assemble */
    snprintf(sheet, sizeof sheet, "%s", line);
    memcpy(strstr(sheet, "\"dispersion\": true"), "\"dispersion\":false", 18);
    /* k0·h·√εr = 0.5 sets the limit here (k0·a = 4 only at 18.8 GHz) */
    double limit = 0.5 * 299792458.0 / (2 * 3.14159265358979323846 * 1.6e-3 * sqrt(4.4));
    const double beyond[] = {2e9, 18e9};
    sv_planar_options o;
    sv_planar_options_default(&o);
    o.freq_hz = beyond;
    o.nfreq = 2;
    o.exact_all = 1;
    o.device = SV_PLANAR_DEVICE_CPU;
    sv_planar_job *job = (sv_planar_job *)1;
    size_t held = sv_ctx_memory_current(ctx);
    assert_int_equal(sv_planar_job_create(ctx, p, &o, &job), SV_ERR_ARG);
    assert_null(job);
    const char *msg = sv_last_error();
    printf("%s\n", msg);
    char named[64];
    snprintf(named, sizeof named, "above %.4g GHz", limit / 1e9);
    assert_non_null(strstr(msg, "frequency 18 GHz"));
    assert_non_null(strstr(msg, named));
    assert_non_null(strstr(msg, "allow_beyond_validity"));
    assert_int_equal(sv_ctx_memory_current(ctx), held);
    /* on request it runs, and the report says where the limit is */
    o.allow_beyond_validity = 1;
    sv_em_project *q = project(ctx, sheet);
    assert_int_equal(sv_planar_job_create(ctx, q, &o, &job), SV_OK);
    assert_int_equal(sv_planar_job_run(job), SV_OK);
    sv_planar_report r;
    assert_int_equal(sv_planar_job_report(job, &r), SV_OK);
    sv_assert_close(r.model_limit_hz, limit, 1e-12, 0);
    printf("beyond the limit, allowed: largest singular value %.6f\n", r.checks.max_singular);
    assert_true(r.checks.max_singular > 1.1); /* what the refusal keeps from a user */
    assert_int_equal(r.beyond_limit, 1);       /* and the report flags */
    sv_planar_job_destroy(job);
    sv_em_project_destroy(q);
    /* up to the limit: passive and reciprocal at every frequency */
    double within[3];
    for (int i = 0; i < 3; i++) within[i] = 0.999 * limit * (i + 1) / 3;
    o.allow_beyond_validity = 0;
    o.freq_hz = within;
    o.nfreq = 3;
    assert_int_equal(sv_planar_job_create(ctx, p, &o, &job), SV_OK);
    assert_int_equal(sv_planar_job_run(job), SV_OK);
    assert_int_equal(sv_planar_job_report(job, &r), SV_OK);
    printf("within the limit: largest singular value %.6f, max |S - S^T| %.2e\n", r.checks.max_singular,
           r.checks.reciprocity);
    assert_true(r.checks.max_singular <= 1 + 1e-9);
    assert_true(r.checks.reciprocity <= 1e-9);
    assert_int_equal(r.beyond_limit, 0);
    check_estimate("the line with dispersion, calibrated", &r, 2);
    sv_planar_job_destroy(job);
    sv_em_project_destroy(p);
    sv_ctx_destroy(ctx);
}

/* What a progress callback saw. */
typedef struct watch {
    double last, stop_at;
    int calls, fell, above_one;
    char phases[16][48];
    int nphases;
} watch;

static int watch_progress(void *user, const char *phase, double f)
{
    watch *w = user;
    w->calls++;
    if (f < w->last) w->fell++;
    if (f > 1) w->above_one++;
    w->last = f;
    int known = 0;
    for (int k = 0; k < w->nphases; k++) known |= !strcmp(w->phases[k], phase);
    if (!known && w->nphases < 16) snprintf(w->phases[w->nphases++], sizeof w->phases[0], "%s", phase);
    return f >= w->stop_at;
}

static int saw_phase(const watch *w, const char *part)
{
    for (int k = 0; k < w->nphases; k++)
        if (strstr(w->phases[k], part)) return 1;
    return 0;
}

/* The creation (the mesh's radiation terms) and the run each report one
 * rising fraction from 0 to 1, every phase named. */
static void test_progress(void **state)
{
    (void)state;
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    sv_em_project *p = project(ctx, pixel_project);
    sv_planar_options o;
    sv_planar_options_default(&o);
    o.device = SV_PLANAR_DEVICE_CPU;
    watch made = {.stop_at = 2}, ran = {.stop_at = 2};
    sv_ctx_set_progress(ctx, watch_progress, &made);
    sv_planar_job *job;
    assert_int_equal(sv_planar_job_create(ctx, p, &o, &job), SV_OK);
    assert_true(saw_phase(&made, "radiation terms"));
    assert_true(made.fell == 0 && made.above_one == 0 && made.last == 1.0);
    sv_ctx_set_progress(ctx, watch_progress, &ran);
    assert_int_equal(sv_planar_job_run(job), SV_OK);
    printf("progress: %d reports, phases:", ran.calls);
    for (int k = 0; k < ran.nphases; k++) printf(" '%s'", ran.phases[k]);
    printf("\n");
    assert_int_equal(ran.fell, 0);
    assert_int_equal(ran.above_one, 0);
    assert_true(ran.last == 1.0);
    assert_true(ran.calls > 20);
    assert_true(saw_phase(&ran, "assembly"));
    assert_true(saw_phase(&ran, "LDLT"));
    assert_true(saw_phase(&ran, "reduced model"));
    assert_true(saw_phase(&ran, "calibration"));
    sv_planar_job_destroy(job);
    sv_em_project_destroy(p);
    sv_ctx_destroy(ctx);
}

/* Stopped anywhere: SV_ERR_CANCELLED, no network, every allocation the run
 * made released (the sanitizer build checks the rest), the context's
 * settings back. */
static void test_cancel_anywhere(void **state)
{
    (void)state;
    const double stops[] = {0.0, 0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.97, 0.999};
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    sv_ctx_set_threads(ctx, 1);
    sv_em_project *p = project(ctx, pixel_project);
    sv_planar_options o;
    sv_planar_options_default(&o);
    o.device = SV_PLANAR_DEVICE_CPU;
    o.threads = 2;
    /* stopped while it is made: no job, nothing held */
    size_t before = sv_ctx_memory_current(ctx);
    watch w0 = {.stop_at = 0};
    sv_ctx_set_progress(ctx, watch_progress, &w0);
    sv_planar_job *none = (sv_planar_job *)1;
    assert_int_equal(sv_planar_job_create(ctx, p, &o, &none), SV_ERR_CANCELLED);
    assert_null(none);
    assert_int_equal(sv_ctx_memory_current(ctx), before);
    for (size_t k = 0; k < sizeof stops / sizeof stops[0]; k++) {
        watch w = {.stop_at = stops[k]};
        sv_ctx_set_progress(ctx, NULL, NULL);
        sv_planar_job *job;
        assert_int_equal(sv_planar_job_create(ctx, p, &o, &job), SV_OK);
        sv_ctx_set_progress(ctx, watch_progress, &w);
        size_t held = sv_ctx_memory_current(ctx);
        assert_int_equal(sv_planar_job_run(job), SV_ERR_CANCELLED);
        assert_non_null(strstr(sv_last_error(), "cancelled"));
        assert_null(sv_planar_job_network(job));
        assert_true(sv_ctx_memory_current(ctx) <= held);
        assert_int_equal(sv_ctx_threads(ctx), 1);
        assert_int_equal(sv_ctx_memory_limit(ctx), 0);
        printf("stopped at %.3f (asked at %.3f, in '%s')\n", w.last, stops[k], w.nphases ? w.phases[w.nphases - 1] : "");
        sv_planar_job_destroy(job);
    }
    sv_ctx_set_progress(ctx, NULL, NULL);
    sv_em_project_destroy(p);
    assert_int_equal(sv_ctx_memory_current(ctx), 0);
    sv_ctx_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_against_lapack), cmocka_unit_test(test_network_parameters),
        cmocka_unit_test(test_project_is_copied),    cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_memory_refused),
        cmocka_unit_test(test_memory_low_frequencies),       cmocka_unit_test(test_memory_estimate_covers),
        cmocka_unit_test(test_mesh_memory_refused),  cmocka_unit_test(test_validity_limit),
        cmocka_unit_test(test_progress),
        cmocka_unit_test(test_cancel_anywhere),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
