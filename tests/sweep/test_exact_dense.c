/* Exact solves through the dense engine: mixed precision (single LDLᵀ
 * refined with residuals from the terms) and double, against LAPACK on a
 * full copy built by the test; mixed against double on a whole sweep; and
 * very low frequency, where −jΨ/ω swamps jωL and single-precision factors
 * of Z would lose the loop currents altogether (those of the preconditioner
 * with them lifted do not: no double fallback). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "support_synth.h"
#include "sv_test.h"
#include "solvent/sweep.h"

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

/* The derivative directions that the mixed path refines together with the
 * solution, against central differences of LAPACK solutions built by the
 * test (independent of the module: X' ≈ (X(f+h) − X(f−h))/2h,
 * X'' ≈ (X(f+h) − 2X(f) + X(f−h))/h², h = 1e-4·f: truncation about 1e-8
 * relative; rounding about cond·eps/(h/f)² for X'', up to 1e-2 here with a
 * condition number near 1e6, so the second difference only checks the
 * leading digits), and tightly against the LAPACK path's own derivatives
 * (zgetrs on the full double matrix, same right-hand-side formula). */
static void test_derivatives_against_differences(void **state)
{
    (void)state;
    synth s;
    int n = 200, p = 2;
    synth_create(&s, n, 32, p, 3, 0.05, 79);
    size_t sz = (size_t)n * p;
    double complex *x = malloc(sizeof(double complex) * sz), *dx = malloc(sizeof(double complex) * sz * 3);
    double complex *xl = malloc(sizeof(double complex) * sz), *dxl = malloc(sizeof(double complex) * sz * 3);
    double complex *xp = malloc(sizeof(double complex) * sz), *xm = malloc(sizeof(double complex) * sz);
    double complex *x0 = malloc(sizeof(double complex) * sz), *fd = malloc(sizeof(double complex) * sz * 3);
    double complex *dp = malloc(sizeof(double complex) * sz * 2), *dm = malloc(sizeof(double complex) * sz * 2);
    double fs[2] = {1.5e9, 12e9};
    for (int k = 0; k < 2; k++) {
        double f = fs[k], h = 1e-4 * f, H = 1e-3 * f;
        sv_sweep_exact_info info;
        assert_int_equal(sv_sweep_solve_exact_deriv(NULL, s.model, f, SV_SWEEP_MIXED, 0.0,
                                                    x, n, 3, dx, n, &info), SV_OK);
        assert_false(info.fell_back);
        assert_true(info.backward_error <= 1e-15);
        synth_solve(&s, f + h, xp);
        synth_solve(&s, f - h, xm);
        synth_solve(&s, f, x0);
        for (size_t i = 0; i < sz; i++) {
            fd[i] = (xp[i] - xm[i]) / (2 * h);
            fd[sz + i] = (xp[i] - 2.0 * x0[i] + xm[i]) / (h * h);
        }
        /* the third derivative as the central difference of the LAPACK
         * path's second derivatives (good to about 1e-6 relative; the step
         * H = 1e-3·f leaves a truncation of about 1e-6 and rounding of
         * about 1e-6·f/H = 1e-3) */
        assert_int_equal(sv_sweep_solve_exact_deriv(NULL, s.model, f + H, SV_SWEEP_LAPACK, 0.0,
                                                    xp, n, 2, dp, n, NULL), SV_OK);
        assert_int_equal(sv_sweep_solve_exact_deriv(NULL, s.model, f - H, SV_SWEEP_LAPACK, 0.0,
                                                    xm, n, 2, dm, n, NULL), SV_OK);
        for (size_t i = 0; i < sz; i++) fd[2 * sz + i] = (dp[sz + i] - dm[sz + i]) / (2 * H);
        double e1 = rel_diff((int)sz, dx, fd), e2 = rel_diff((int)sz, dx + sz, fd + sz),
               e3 = rel_diff((int)sz, dx + 2 * sz, fd + 2 * sz);
        print_message("f = %g: derivatives 1, 2, 3 vs differences %.2e %.2e %.2e\n", f, e1, e2, e3);
        assert_true(e1 < 1e-6);
        assert_true(e2 < 1e-2); /* the reference's limit: see above */
        assert_true(e3 < 1e-2);
        assert_int_equal(sv_sweep_solve_exact_deriv(NULL, s.model, f, SV_SWEEP_LAPACK, 0.0,
                                                    xl, n, 3, dxl, n, NULL), SV_OK);
        double l1 = rel_diff((int)sz, dx, dxl), l2 = rel_diff((int)sz, dx + sz, dxl + sz),
               l3 = rel_diff((int)sz, dx + 2 * sz, dxl + 2 * sz);
        print_message("f = %g: derivatives 1, 2, 3 vs the LAPACK path %.2e %.2e %.2e\n", f, l1, l2, l3);
        /* derivatives are refined to a backward error of 1e-13 (basis
         * directions need no more): forward agreement about cond·1e-13 */
        assert_true(l1 < 3e-6);
        assert_true(l2 < 3e-6);
        assert_true(l3 < 3e-6);
    }
    free(x); free(dx); free(xl); free(dxl); free(xp); free(xm); free(x0); free(fd); free(dp); free(dm);
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
    sv_sweep_result_destroy(rm);
    sv_sweep_result_destroy(rd);
    free(f);
    synth_destroy(&s);
}

static void test_low_frequency_lifted(void **state)
{
    (void)state;
    synth s;
    int n = 200;
    synth_create(&s, n, 32, 2, 3, 0.05, 79);
    /* At 1 MHz, ‖Ψ‖/ω exceeds ω‖L‖ by about (1 THz / 1 MHz)² = 1e12:
     * single precision (6e-8) rounds jωL away entirely, double keeps it.
     * The single factors are those of Z with jωL and Zs lifted
     * (src/sweep/precond.c): refined by GMRES, no double factorisation. */
    double f[5] = {1e6, 1e8, 1e9, 5e9, 1e10};
    sv_sweep_options o;
    sv_sweep_options_default(&o);
    o.precision = SV_SWEEP_MIXED;
    sv_sweep_result *r;
    assert_int_equal(sv_sweep_run(NULL, s.model, 5, f, &o, &r), SV_OK);
    assert_true(r->exact[0]);
    assert_false(r->fallback[0]);
    assert_int_equal(r->n_fallback, 0);
    assert_false(r->fallback[4]);
    /* backward stable (residual from the terms), and H as LAPACK's on a full copy */
    assert_true(r->residual[0] < 1e-14);
    double complex *x = malloc(sizeof(double complex) * n * 2), h[4];
    synth_solve(&s, f[0], x);
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++) {
            h[j * 2 + i] = 0;
            for (int e = 0; e < n; e++) h[j * 2 + i] += s.b[(size_t)i * n + e] * x[(size_t)j * n + e];
        }
    double d = rel_diff(4, r->h, h);
    o.precision = SV_SWEEP_DOUBLE;
    sv_sweep_result *rd;
    assert_int_equal(sv_sweep_run(NULL, s.model, 5, f, &o, &rd), SV_OK);
    double dd = rel_diff(4, rd->h, h);
    print_message("f = 1 MHz: %d solves refined by GMRES; H vs LAPACK %.2e (the double LDLT's %.2e)\n", r->n_gmres, d,
                  dd);
    /* any solve in double: u·(‖Ψ‖/ω)/(ω‖L‖) ≈ 1e-4 (the double LDLᵀ is 1.9e-5 from LAPACK) */
    assert_true(d < 1e-4);
    sv_sweep_result_destroy(rd);
    free(x);
    sv_sweep_result_destroy(r);
    synth_destroy(&s);
}

/* Between the band and the breakdown, classical refinement on the single
 * factors stalls but GMRES-based refinement preconditioned by them still
 * converges (gmres.c): on this model at 0.2 GHz. No double factorisation
 * then, and the solution and its derivatives agree with the LAPACK path on
 * a full double copy as closely as the conditioning allows. */
static void test_low_frequency_gmres(void **state)
{
    (void)state;
    synth s;
    int n = 200, p = 2;
    synth_create(&s, n, 32, p, 3, 0.05, 79);
    size_t sz = (size_t)n * p;
    double complex *x = malloc(sizeof(double complex) * sz), *dx = malloc(sizeof(double complex) * sz * 3);
    double complex *xl = malloc(sizeof(double complex) * sz), *dxl = malloc(sizeof(double complex) * sz * 3);
    double f = 2e8;
    sv_sweep_exact_info info;
    assert_int_equal(sv_sweep_solve_exact_deriv(NULL, s.model, f, SV_SWEEP_MIXED, 0.0, x, n, 3, dx, n, &info), SV_OK);
    print_message("f = %g: %d classical steps, %d GMRES steps, backward error %.2e, fell back %d\n", f,
                  info.iterations, info.gmres_steps, info.backward_error, info.fell_back);
    assert_false(info.fell_back);
    assert_true(info.gmres_steps > 0);
    assert_true(info.backward_error <= 1e-15);
    assert_int_equal(sv_sweep_solve_exact_deriv(NULL, s.model, f, SV_SWEEP_LAPACK, 0.0, xl, n, 3, dxl, n, NULL), SV_OK);
    double e0 = rel_diff((int)sz, x, xl);
    print_message("solution vs LAPACK %.2e; derivatives", e0);
    /* condition near 1e8 here: both are backward stable to 1e-16 */
    assert_true(e0 < 1e-7);
    for (int g = 0; g < 3; g++) {
        double eg = rel_diff((int)sz, dx + g * sz, dxl + g * sz);
        print_message(" %.2e", eg);
        assert_true(eg < 1e-4);
    }
    print_message("\n");
    /* and the sweep's result counts it */
    double fs[2] = {f, 5e9};
    sv_sweep_options o;
    sv_sweep_options_default(&o);
    o.exact_all = 1;
    sv_sweep_result *r;
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    assert_int_equal(sv_sweep_run(ctx, s.model, 2, fs, &o, &r), SV_OK);
    assert_int_equal(r->n_gmres, 1);
    assert_int_equal(r->n_fallback, 0);
    /* within the memory estimate, GMRES's vectors included */
    assert_true(r->peak_bytes <= sv_sweep_estimate_bytes(n, 3, p, p, 32, 2, &o));
    sv_sweep_result_destroy(r);
    sv_ctx_destroy(ctx);
    free(x); free(dx); free(xl); free(dxl);
    synth_destroy(&s);
}

int main(void)
{
    /* One thread: these models are small (n ≤ 200), and on a busy machine
     * OpenMP teams spin-wait for descheduled threads, which made this
     * program a hundred times slower with two. The threaded products are
     * checked in test_model. */
    sv_threads_serial_begin(); /* for the whole program: never restored */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_solves_against_lapack),
        cmocka_unit_test(test_derivatives_against_differences),
        cmocka_unit_test(test_mixed_against_double_sweep),
        cmocka_unit_test(test_low_frequency_gmres),
        cmocka_unit_test(test_low_frequency_lifted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
