/* The full-wave references (openEMS, tests/em/data/openems) against the
 * model as a user gets it: every default effect (radiation, the edge
 * profile, calibrated ports with their planes at the port edges, where
 * openEMS has its reference planes), one planar job with the adaptive
 * sweep, and the same with dispersion on (effects.dispersion, off by
 * default). The filter's crossings are openEMS's own, found on its S the
 * same way as on the model's (2.221 and 3.381 GHz: its refined mesh; the
 * 2.231 GHz of its coarser baseline run is in lpf.json). The issue's
 * targets: the stub's notch within 1 % of 1.977 GHz, the filter's crossings
 * within 1.5 %, and the largest |Δ|S|| in dB wherever openEMS's |S| > −20
 * dB within 0.5 dB. Asserted where they are met (docs/em.md, "Every effect
 * on", has the table): the notch in both runs, the crossings and |Δ|S11||
 * of the filter without dispersion, the stub's |Δ|S21|| with it; every
 * other line says it is a report and why. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_em.h"
#include "support_em.h"
#include "sv_test.h"

/* S (nf × 4) of an example as a user gets it, one planar job with every
 * default effect (and dispersion when asked) at nf frequencies. */
static void sweep_example(const char *rel, int dispersion, int nf, const double *f, double complex *S)
{
    char *text = sv_test_slurp(rel);
    sv_em_project *p = em_test_project(text);
    free(text);
    p->dispersion = dispersion;
    sv_planar_options o;
    em_test_job_options(&o, nf, f);
    em_test_job_s(p, &o, S);
    sv_em_project_destroy(p);
}

static double db(double complex s) { return 20 * log10(cabs(s)); }

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
        em_test_touchstone_at(t, f[i], R);
        if (db(R[k]) <= -20) continue;
        double d = fabs(db(S[4 * i + k]) - db(R[k]));
        if (d > *worst) *worst = d, *at = f[i];
    }
}

/* What a run is held to: NULL asserts the target, else why the
 * line is a report, not a check (docs/em.md, "Every effect on": the
 * targets met are asserted, the others are known gaps). */
typedef struct held {
    const char *crossings; /* the filter's −3 and −20 dB crossings: 1.5 % */
    const char *db[2];     /* the largest |Δ|S11|| and |Δ|S21||: 0.5 dB */
} held;

/* Ends a printed line: a check, or a report with its reason. */
static void end_line(const char *why_not)
{
    if (why_not) printf(": report (not asserted: %s)", why_not);
    printf("\n");
}

/* The largest |Δ|S11|| and |Δ|S21|| against the reference: within 0.5 dB
 * where h holds it. */
static void magnitudes(const char *name, int nf, const double *f, const double complex *S, const held *h)
{
    sv_em_touchstone *t = reference(name);
    for (int k = 0; k < 2; k++) {
        double w, at;
        worst_db(t, nf, f, S, k, &w, &at);
        printf("  largest |d|S%d1|| where openEMS's |S%d1| > -20 dB: %.2f dB at %.3f GHz (target 0.5 dB)", k + 1,
               k + 1, w, at / 1e9);
        end_line(h->db[k]);
        if (!h->db[k]) assert_true(w <= 0.5);
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

/* The stub's notch: near the smallest |S21| the complex S21 is linear in
 * f, α·(f − z), and |S21| is least at Re z (α from the neighbours); within
 * the 1 % of openEMS's in every run. */
static void stub_notch(const char *label, int dispersion, int nf, const double *f, double complex *S, const held *h)
{
    sweep_example("examples/stub.json", dispersion, nf, f, S);
    int k = 1;
    for (int i = 1; i + 1 < nf; i++)
        if (cabs(S[4 * i + 1]) < cabs(S[4 * k + 1])) k = i;
    double complex slope = (S[4 * (k + 1) + 1] - S[4 * (k - 1) + 1]) / (f[k + 1] - f[k - 1]);
    double notch = creal(f[k] - S[4 * k + 1] / slope);
    printf("stub, %s: notch %.4f GHz (openEMS 1.977, %+.2f %%, target 1 %%)\n", label, notch / 1e9,
           100 * (notch / 1.977e9 - 1));
    magnitudes("stub.s2p", nf, f, S, h);
    assert_true(db(S[4 * k + 1]) < -30); /* it is the notch, and deep */
    sv_assert_close(notch, 1.977e9, 0.01, 0);
}

/* S11 of both runs: at 3.53 GHz openEMS's |S11| is −18.8 dB, on the flank
 * of a −41 dB dip at 3.80 GHz that the model puts at 3.9 GHz. */
#define STUB_S11 "|S11| -18.8 dB on the flank of openEMS's dip at 3.80 GHz, the model's at 3.9 GHz"

static void test_stub(void **state)
{
    (void)state;
    enum { NF = 351 };
    double f[NF];
    double complex *S = malloc(sizeof(double complex) * 4 * NF);
    for (int i = 0; i < NF; i++) f[i] = 0.5e9 + 10e6 * i; /* 0.5–4 GHz */
    /* without dispersion the notch is within its 1 % but high, and on its
     * flank (0.3 dB/MHz) S21 misses by dB: the quasi-static model has no
     * dispersion */
    const held plain = {NULL, {STUB_S11, "the notch's flank, 0.3 dB/MHz: the quasi-static model lacks dispersion"}};
    stub_notch("every effect on", 0, NF, f, S, &plain);
    const held dispersive = {NULL, {STUB_S11, NULL}};
    stub_notch("every effect and dispersion on", 1, NF, f, S, &dispersive);
    free(S);
}

/* The filter's −3 and −20 dB crossings, the model's against openEMS's:
 * within the 1.5 % where h holds them. */
static void lowpass(const char *label, int dispersion, int nf, const double *f, double complex *S,
                    const double ref[2], const held *h)
{
    sweep_example("examples/pozar_lpf.json", dispersion, nf, f, S);
    double f3 = crossing(nf, f, S, -3), f20 = crossing(nf, f, S, -20);
    printf("low-pass, %s: -3 dB %.4f GHz (openEMS %.4f, %+.2f %%), -20 dB %.4f GHz (%.4f, %+.2f %%) "
           "(target 1.5 %%)",
           label, f3 / 1e9, ref[0] / 1e9, 100 * (f3 / ref[0] - 1), f20 / 1e9, ref[1] / 1e9, 100 * (f20 / ref[1] - 1));
    end_line(h->crossings);
    magnitudes("lpf.s2p", nf, f, S, h);
    if (h->crossings) return;
    sv_assert_close(f3, ref[0], 0.015, 0);
    sv_assert_close(f20, ref[1], 0.015, 0);
}

static void test_lowpass(void **state)
{
    (void)state;
    enum { NF = 451 };
    double f[NF];
    double complex *S = malloc(sizeof(double complex) * 4 * NF);
    for (int i = 0; i < NF; i++) f[i] = 0.5e9 + 10e6 * i; /* 0.5–5 GHz */
    sv_em_touchstone *t = reference("lpf.s2p");
    for (int i = 0; i < NF; i++) em_test_touchstone_at(t, f[i], S + 4 * i);
    sv_em_touchstone_destroy(t);
    const double ref[2] = {crossing(NF, f, S, -3), crossing(NF, f, S, -20)};
    /* the model as a user gets it: crossings and S11 within the issue's
     * targets; S21 misses at the −20 dB crossing's skirt, where the model's
     * crossing is low */
    const held plain = {NULL, {NULL, "the skirt at the -20 dB crossing, which the model puts low"}};
    lowpass("every effect on", 0, NF, f, S, ref, &plain);
    /* the opt-in dispersion lowers the crossings by about 0.8 % more, past
     * the 1.5 % (what lowers the filter is not the far field: docs/em.md,
     * "Dispersion"), and |S| with them */
    const char *lower = "the opt-in dispersion lowers the filter's crossings";
    const held dispersive = {lower, {lower, lower}};
    lowpass("every effect and dispersion on", 1, NF, f, S, ref, &dispersive);
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
