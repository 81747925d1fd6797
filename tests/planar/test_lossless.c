/* Lossless metal with calibrated ports, where passivity is an exact
 * boundary: a perfect-metal line radiates a little and loses nothing else,
 * so every S the job writes must have its largest singular value ≤ 1 and
 * be reciprocal, here to 1e-9 (the check users apply). The bundled stub from
 * 300 Hz to its band (the low-frequency error boxes, the loop–tree path)
 * and the 50 Ω line on RO4350 through its lowest decade, where radiation's
 * loss is smallest and a calibration that removes more loss than the
 * ports have shows first. Far below, where lossless metal joins the ports
 * by a near short, S cannot be formed to 1e-9 from Y: refused, naming the
 * frequency and what to do. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "solvent/planar.h"
#include "sv_test.h"

/* The job on an example at the given frequencies; SV_OK or its status. */
static sv_status run_example(const char *name, int nf, const double *f, sv_planar_report *r)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/examples/%s", SV_SOURCE_DIR, name);
    sv_planar_options o;
    sv_planar_options_default(&o);
    o.freq_hz = f;
    o.nfreq = nf;
    o.exact_all = 1;
    o.device = SV_PLANAR_DEVICE_CPU;
    sv_planar_job *job = NULL;
    sv_status s = sv_planar_job_open(NULL, path, &o, &job);
    if (!s) s = sv_planar_job_run(job);
    if (!s) s = sv_planar_job_report(job, r);
    sv_planar_job_destroy(job);
    return s;
}

static void check_passive(const char *name, int nf, const double *f)
{
    sv_planar_report r;
    sv_status s = run_example(name, nf, f, &r);
    if (s) printf("%s: %s\n", name, sv_last_error());
    assert_int_equal(s, SV_OK);
    printf("%s, %.3g to %.3g Hz: largest singular value 1%+.2e, max |S - S^T| %.1e\n", name, f[0], f[nf - 1],
           r.checks.max_singular - 1, r.checks.reciprocity);
    assert_true(r.checks.max_singular <= 1 + 1e-9);
    assert_true(r.checks.reciprocity <= 1e-9);
}

static void test_stub_low_frequencies(void **state)
{
    (void)state;
    double f[10];
    for (int i = 0; i < 7; i++) f[i] = 300 * pow(10, i); /* 300 Hz … 300 MHz */
    f[7] = 1e9, f[8] = 2e9, f[9] = 3e9;
    check_passive("stub.json", 10, f);
}

static void test_line_lowest_decade(void **state)
{
    (void)state;
    double f[4] = {0.1e9, 0.3e9, 0.6e9, 0.9e9};
    check_passive("line_366.json", 4, f);
}

static void test_near_short_refused(void **state)
{
    (void)state;
    const double f[2] = {1, 1e9};
    sv_planar_report r;
    assert_int_equal(run_example("stub.json", 2, f, &r), SV_ERR_SINGULAR);
    const char *msg = sv_last_error();
    printf("1 Hz: %s\n", msg);
    assert_non_null(strstr(msg, "at 1 Hz"));
    assert_non_null(strstr(msg, "near short"));
    assert_non_null(strstr(msg, "conductivity"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stub_low_frequencies),
        cmocka_unit_test(test_line_lowest_decade),
        cmocka_unit_test(test_near_short_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
