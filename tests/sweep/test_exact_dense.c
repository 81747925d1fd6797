/* Exact solves through the dense engine: mixed precision (single LDLᵀ
 * refined with residuals from the terms) and double, against LAPACK on a
 * full copy built by the test; mixed against double on a whole sweep; and
 * the fallback to double at very low frequency, where −jΨ/ω swamps jωL and
 * single precision loses the loop currents altogether. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "support_synth.h"
#include "sv_test.h"
#include "sweep/sweep_internal.h"

#define Z0 50.0

static double rel_diff(int len, const double complex *a, const double complex *b)
{
    double scale = 0, err = 0;
    for (int i = 0; i < len; i++) {
        scale = fmax(scale, cabs(b[i]));
        err = fmax(err, cabs(a[i] - b[i]));
    }
    return err / scale;
}

static void test_exact_solves_against_lapack(void **state)
{
    (void)state;
    synth s;
    int n = 200;
    synth_create(&s, n, 32, 2, 3, 0.05, 77);
    double complex *x = malloc(sizeof(double complex) * n * 2), *ref = malloc(sizeof(double complex) * n * 2);
    double fs[3] = {1e9, 4.4e9, 10e9};
    for (int k = 0; k < 3; k++) {
        synth_solve(&s, fs[k], ref);
        sv_sweep_exact_info info;
        assert_int_equal(sv_sweep_solve_exact(NULL, s.model, fs[k], SV_SWEEP_MIXED, x, n, &info), SV_OK);
        /* backward stable to double level (1e-15, the default refinement
         * target); the forward difference from LAPACK is up to the
         * condition number (about 1e6 here) times that */
        assert_false(info.fell_back);
        assert_true(info.backward_error <= 1e-15);
        assert_true(rel_diff(2 * n, x, ref) < 3e-9);
        assert_int_equal(sv_sweep_solve_exact(NULL, s.model, fs[k], SV_SWEEP_DOUBLE, x, n, &info), SV_OK);
        assert_true(info.backward_error <= 1e-15);
        assert_true(rel_diff(2 * n, x, ref) < 3e-9);
    }
    free(x);
    free(ref);
    synth_destroy(&s);
}

static void test_mixed_against_double_sweep(void **state)
{
    (void)state;
    synth s;
    int n = 200, nf = 81;
    synth_create(&s, n, 32, 2, 3, 0.2, 78);
    double *f = malloc(sizeof(double) * nf);
    for (int i = 0; i < nf; i++) f[i] = 1e9 + 9e9 * i / (nf - 1);
    sv_sweep_options o;
    sv_sweep_options_default(&o);
    sv_sweep_result *rm, *rd;
    o.precision = SV_SWEEP_MIXED;
    o.refine_tolerance = 1e-16; /* this model's condition (~1e6) needs it for 1e-10 in S */
    assert_int_equal(sv_sweep_run(NULL, s.model, nf, f, &o, &rm), SV_OK);
    o.precision = SV_SWEEP_DOUBLE;
    assert_int_equal(sv_sweep_run(NULL, s.model, nf, f, &o, &rd), SV_OK);
    assert_true(rm->converged && rd->converged);
    /* (a frequency next to a resonance may be singular to single precision
     * and fall back to double: allowed, and reported) */
    double worst = 0;
    for (int i = 0; i < nf; i++) {
        double complex sm[4], sd[4];
        s_from_y(2, rm->h + 4 * i, Z0, sm);
        s_from_y(2, rd->h + 4 * i, Z0, sd);
        for (int e = 0; e < 4; e++) worst = fmax(worst, cabs(sm[e] - sd[e]));
    }
    print_message("mixed vs double: %d / %d exact solves, max |dS| %.2e\n", rm->n_exact, rd->n_exact, worst);
    assert_true(worst <= 1e-10);
    sv_sweep_result_destroy(NULL, rm);
    sv_sweep_result_destroy(NULL, rd);
    free(f);
    synth_destroy(&s);
}

static void test_low_frequency_fallback(void **state)
{
    (void)state;
    synth s;
    int n = 200;
    synth_create(&s, n, 32, 2, 3, 0.05, 79);
    /* At 1 MHz, ‖Ψ‖/ω exceeds ω‖L‖ by about (1 THz / 1 MHz)² = 1e12:
     * single precision (6e-8) rounds jωL away entirely, double keeps it. */
    double f[5] = {1e6, 1e8, 1e9, 5e9, 1e10};
    sv_sweep_options o;
    sv_sweep_options_default(&o);
    o.precision = SV_SWEEP_MIXED;
    sv_sweep_result *r;
    assert_int_equal(sv_sweep_run(NULL, s.model, 5, f, &o, &r), SV_OK);
    assert_true(r->exact[0]);
    assert_true(r->fallback[0]);
    assert_true(r->n_fallback >= 1);
    assert_false(r->fallback[4]);
    /* the fallen-back solution is backward stable (residual from the terms) */
    assert_true(r->residual[0] < 1e-14);
    sv_sweep_result_destroy(NULL, r);
    synth_destroy(&s);
}

void openblas_set_num_threads(int num_threads);

int main(void)
{
    /* One thread: these models are small (n ≤ 200), and on a busy machine
     * OpenMP teams spin-wait for descheduled threads, which made this
     * program a hundred times slower with two. The threaded products are
     * checked in test_model. */
    openblas_set_num_threads(1); /* also sets OpenMP's count in the OpenMP build */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_solves_against_lapack),
        cmocka_unit_test(test_mixed_against_double_sweep),
        cmocka_unit_test(test_low_frequency_fallback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
