/* Circuits against the full-wave (openEMS) references of
 * shared/reference/em-model.md: the quarter-wave stub's |S21| notch
 * (1.977 GHz, within 2 %) and the −3 dB / −20 dB crossings of Pozar's
 * stepped-impedance low-pass filter (2.231 / 3.398 GHz, within 3 %).
 * Edge ports are not matched-line ports, so feature frequencies are
 * compared, not magnitudes. Solves: LAPACK on full copies. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "support_em.h"
#include "sv_test.h"

typedef struct circuit {
    sv_em_project *p;
    sv_em_model *m;
    double *L, *P;
    int evals;
} circuit;

static void load(circuit *c, const char *rel)
{
    char *text = em_test_slurp(rel);
    c->p = em_test_project(text);
    free(text);
    c->m = em_test_model(c->p);
    em_test_full(c->m, &c->L, &c->P);
    c->evals = 0;
}

static void unload(circuit *c)
{
    free(c->L);
    free(c->P);
    sv_em_model_destroy(c->m);
    sv_em_project_destroy(c->p);
}

static double complex s21(circuit *c, double f)
{
    double complex Y[4], S[4];
    em_test_y(c->m, c->L, c->P, NULL, f, Y);
    em_test_s(c->m, Y, S);
    c->evals++;
    return S[1];
}

/* A lossless stub's transmission zero is a simple zero of the analytic
 * S21(f) on the real axis: complex secant steps converge to it (Im Z21 would
 * do too, but it has poles at the line's resonances nearby). */
static double notch(circuit *c, double f0, double f1)
{
    double complex s0 = s21(c, f0), s1 = s21(c, f1);
    for (int it = 0; it < 20 && fabs(f1 - f0) > 1e-6 * f1; it++) {
        double f2 = creal(f1 - s1 * (f1 - f0) / (s1 - s0));
        f0 = f1;
        s0 = s1;
        f1 = f2;
        s1 = s21(c, f1);
    }
    return f1;
}

static double s21_db(circuit *c, double f)
{
    double complex Y[4], S[4];
    em_test_y(c->m, c->L, c->P, NULL, f, Y);
    em_test_s(c->m, Y, S);
    c->evals++;
    return 20 * log10(cabs(S[1]));
}

/* Root of g(f) − target in [a, b] (Illinois false position). */
static double root(circuit *c, double (*g)(circuit *, double), double target, double a, double b)
{
    double fa = g(c, a) - target, fb = g(c, b) - target;
    assert_true(fa * fb < 0);
    int side = 0;
    for (int it = 0; it < 40 && (b - a) > 1e-5 * b; it++) {
        double x = (a * fb - b * fa) / (fb - fa), fx = g(c, x) - target;
        if (fx * fb > 0) {
            b = x;
            fb = fx;
            if (side == -1) fa /= 2;
            side = -1;
        } else {
            a = x;
            fa = fx;
            if (side == 1) fb /= 2;
            side = 1;
        }
        if (fabs(fx) < 1e-9) return x;
    }
    return (a * fb - b * fa) / (fb - fa);
}

static void test_stub_notch(void **state)
{
    (void)state;
    circuit c;
    load(&c, "examples/stub.json");
    double f = notch(&c, 1.9e9, 2.0e9);
    printf("stub: %d unknowns, notch %.4f GHz (full-wave 1.977, %+.2f %%), %d solves\n",
           sv_em_model_unknowns(c.m), f / 1e9, 100 * (f / 1.977e9 - 1), c.evals);
    sv_assert_close(f, 1.977e9, 0.02, 0);
    /* it is a notch: |S21| tiny there, near 0 dB far below it */
    assert_true(s21_db(&c, f) < -40);
    assert_true(s21_db(&c, 0.3e9) > -1);
    unload(&c);
}

static void test_lowpass_crossings(void **state)
{
    (void)state;
    circuit c;
    load(&c, "examples/pozar_lpf.json");
    double f3 = root(&c, s21_db, -3, 1.8e9, 2.8e9);
    double f20 = root(&c, s21_db, -20, 2.9e9, 4.2e9);
    printf("low-pass: %d unknowns, -3 dB at %.4f GHz (full-wave 2.231, %+.2f %%), -20 dB at %.4f GHz "
           "(3.398, %+.2f %%), %d solves\n",
           sv_em_model_unknowns(c.m), f3 / 1e9, 100 * (f3 / 2.231e9 - 1), f20 / 1e9, 100 * (f20 / 3.398e9 - 1),
           c.evals);
    sv_assert_close(f3, 2.231e9, 0.03, 0);
    sv_assert_close(f20, 3.398e9, 0.03, 0);
    unload(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stub_notch),
        cmocka_unit_test(test_lowpass_crossings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
