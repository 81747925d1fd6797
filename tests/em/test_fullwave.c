/* The full-wave references (openEMS, tests/em/data/openems) against the
 * model as a user gets it: every default effect (radiation, the edge
 * profile, calibrated ports with their planes at the port edges, where
 * openEMS has its reference planes), swept by the adaptive sweep. Asserted
 * where the target is met: the filter's −3 dB crossing within
 * 1.5 % of 2.231 GHz; printed: the stub's notch (target 1 % of 1.977 GHz),
 * the −20 dB crossing (target 1.5 %) and the largest |Δ|S|| in dB wherever
 * openEMS's |S| > −20 dB (target 0.5 dB). docs/em.md has the table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support_em.h"
#include "sv_test.h"

/* S (nf × 4) of an example with every default effect, at nf frequencies. */
static void sweep_example(const char *rel, int nf, const double *f, double complex *S)
{
    char *text = em_test_slurp(rel);
    sv_em_project *p = em_test_project(text);
    free(text);
    sv_em_options o;
    sv_em_options_default(&o);
    o.max_freq_hz = f[nf - 1];
    sv_em_model *m = NULL;
    assert_int_equal(sv_em_model_create(NULL, p, &o, &m), SV_OK);
    sv_em_affine *a;
    assert_int_equal(sv_em_affine_create(NULL, m, &a), SV_OK);
    sv_sweep_result *r;
    assert_int_equal(sv_sweep_run(NULL, sv_em_affine_model(a), nf, f, NULL, &r), SV_OK);
    assert_true(r->converged);
    sv_em_calibration *cal;
    assert_int_equal(sv_em_calibration_create(NULL, m, nf, f, &cal), SV_OK);
    double z0[2] = {50, 50};
    for (int i = 0; i < nf; i++) {
        assert_int_equal(sv_em_calibration_apply(cal, i, r->h + (size_t)i * 4), SV_OK);
        assert_int_equal(sv_em_y_to_s(2, r->h + (size_t)i * 4, z0, S + (size_t)i * 4), SV_OK);
        double smax;
        assert_int_equal(sv_em_max_singular_value(2, S + (size_t)i * 4, &smax), SV_OK);
        assert_true(smax <= 1 + 1e-9 && sv_em_reciprocity_error(2, S + (size_t)i * 4) <= 1e-9);
    }
    sv_em_calibration_destroy(cal);
    sv_sweep_result_destroy(r);
    sv_em_affine_destroy(a);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
}

static double db(double complex s) { return 20 * log10(cabs(s)); }

/* openEMS's S at f: linear interpolation on its grid. */
static void reference_s(const sv_em_touchstone *t, double f, double complex S[4])
{
    int i = 0;
    while (i + 2 < t->nf && t->freq_hz[i + 1] < f) i++;
    double u = (f - t->freq_hz[i]) / (t->freq_hz[i + 1] - t->freq_hz[i]);
    for (int q = 0; q < 4; q++) S[q] = (1 - u) * t->data[4 * i + q] + u * t->data[4 * (i + 1) + q];
}

static sv_em_touchstone *reference(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/em/data/openems/%s", SV_SOURCE_DIR, name);
    sv_em_touchstone *t;
    assert_int_equal(sv_em_touchstone_read(NULL, path, &t), SV_OK);
    return t;
}

/* The largest |Δ|S_k|| (dB) where the reference's |S_k| > −20 dB, and where. */
static void worst_db(const sv_em_touchstone *t, int nf, const double *f, const double complex *S, int k,
                     double *worst, double *at)
{
    *worst = 0;
    *at = 0;
    for (int i = 0; i < nf; i++) {
        double complex R[4];
        reference_s(t, f[i], R);
        if (db(R[k]) <= -20) continue;
        double d = fabs(db(S[4 * i + k]) - db(R[k]));
        if (d > *worst) *worst = d, *at = f[i];
    }
}

/* The largest |Δ|S11|| and |Δ|S21|| (target 0.5 dB) against the reference. */
static void print_magnitudes(const char *name, int nf, const double *f, const double complex *S)
{
    sv_em_touchstone *t = reference(name);
    for (int k = 0; k < 2; k++) {
        double w, at;
        worst_db(t, nf, f, S, k, &w, &at);
        printf("  largest |d|S%d1|| where openEMS's |S%d1| > -20 dB: %.2f dB at %.3f GHz (target 0.5 dB)\n", k + 1,
               k + 1, w, at / 1e9);
    }
    sv_em_touchstone_destroy(t);
}

/* Where |S21| in dB crosses level going down, between grid points (linear). */
static double crossing(int nf, const double *f, const double complex *S, double level)
{
    for (int i = 0; i + 1 < nf; i++) {
        double a = db(S[4 * i + 1]), b = db(S[4 * (i + 1) + 1]);
        if (a >= level && b < level) return f[i] + (level - a) / (b - a) * (f[i + 1] - f[i]);
    }
    return NAN;
}

static void test_stub(void **state)
{
    (void)state;
    enum { NF = 351 };
    double f[NF];
    double complex *S = malloc(sizeof(double complex) * 4 * NF);
    for (int i = 0; i < NF; i++) f[i] = 0.5e9 + 10e6 * i; /* 0.5–4 GHz */
    sweep_example("examples/stub.json", NF, f, S);
    /* the notch: near the smallest |S21| the complex S21 is linear in f,
     * α·(f − z), and |S21| is least at Re z (α from the neighbours) */
    int k = 1;
    for (int i = 1; i + 1 < NF; i++)
        if (cabs(S[4 * i + 1]) < cabs(S[4 * k + 1])) k = i;
    double complex slope = (S[4 * (k + 1) + 1] - S[4 * (k - 1) + 1]) / (f[k + 1] - f[k - 1]);
    double notch = creal(f[k] - S[4 * k + 1] / slope);
    printf("stub, every effect on: notch %.4f GHz (openEMS 1.977, %+.2f %%, target 1 %%)\n", notch / 1e9,
           100 * (notch / 1.977e9 - 1));
    print_magnitudes("stub.s2p", NF, f, S);
    /* the target is not met (+1.01 %: the model has no dispersion, docs/em.md):
     * asserted is that it is the notch, deep, near openEMS's */
    assert_true(db(S[4 * k + 1]) < -30 && fabs(notch / 1.977e9 - 1) < 0.02);
    free(S);
}

static void test_lowpass(void **state)
{
    (void)state;
    enum { NF = 451 };
    double f[NF];
    double complex *S = malloc(sizeof(double complex) * 4 * NF);
    for (int i = 0; i < NF; i++) f[i] = 0.5e9 + 10e6 * i; /* 0.5–5 GHz */
    sweep_example("examples/pozar_lpf.json", NF, f, S);
    double f3 = crossing(NF, f, S, -3), f20 = crossing(NF, f, S, -20);
    printf("low-pass, every effect on: -3 dB %.4f GHz (openEMS 2.231, %+.2f %%), -20 dB %.4f GHz (3.398, %+.2f %%) "
           "(target 1.5 %%)\n",
           f3 / 1e9, 100 * (f3 / 2.231e9 - 1), f20 / 1e9, 100 * (f20 / 3.398e9 - 1));
    print_magnitudes("lpf.s2p", NF, f, S);
    sv_assert_close(f3, 2.231e9, 0.015, 0);
    sv_assert_close(f20, 3.398e9, 0.015, 0);
    free(S);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stub),
        cmocka_unit_test(test_lowpass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
