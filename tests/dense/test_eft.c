/* Error-free transforms and double-float arithmetic. This program is built
 * three times (default flags, -O3, -O3 -ffast-math, the last two compiling
 * the library's eft.c with the same flags): the error terms must survive
 * every one. References: exact arithmetic in double (sums and products of
 * floats), long double, and closed forms. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "dense/eft_internal.h"
#include "solvent/eft.h"
#include "sv_test.h"

static void check_sum_f(float a, float b)
{
    float s, e;
    sv_dense_two_sum_f(a, b, &s, &e);
    if ((double)s + (double)e != (double)a + (double)b || s != (float)((double)a + (double)b) ||
        !(fabs((double)e) <= 0.5 * (double)(nextafterf(fabsf(s), INFINITY) - fabsf(s))))
        print_message("two_sum(%a, %a) = (%a, %a)\n", a, b, s, e);
    assert_true((double)s + (double)e == (double)a + (double)b);
    assert_true(s == (float)((double)a + (double)b));
    assert_true(fabs((double)e) <= 0.5 * (double)(nextafterf(fabsf(s), INFINITY) - fabsf(s)));
}

static void check_prod_f(float a, float b)
{
    float p, e;
    sv_dense_two_prod_f(a, b, &p, &e);
    assert_true((double)p + (double)e == (double)a * (double)b);
}

static void test_two_sum_float_adversarial(void **state)
{
    (void)state;
    const float pairs[][2] = {
        {1.0f, 0x1p-30f},         /* b entirely lost in s: e = b */
        {0x1p24f, 1.0f},          /* tie, rounds to even: e = 1 */
        {0x1p24f, 3.0f},          /* tie the other way: e = −1 */
        {1.0f, -0x1p-25f},        /* just below 1 */
        {3.0f, 0x1.fffffep-3f},
        {-1.5f, 1.5f},            /* exact cancellation: e = 0 */
        {0x1.fffffep127f, -0x1p104f},
        {0x1.fffffep127f, 0x1p102f}, /* near overflow (below half an ulp: no overflow) */
        {1e-30f, -1e-30f},
        {0x1.000002p0f, -0x1p0f},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        check_sum_f(pairs[i][0], pairs[i][1]);
        check_sum_f(pairs[i][1], pairs[i][0]);
    }
    float s, e;
    sv_dense_two_sum_f(1.0f, 0x1p-30f, &s, &e);
    assert_true(s == 1.0f && e == 0x1p-30f);
    sv_dense_two_sum_f(0x1p24f, 1.0f, &s, &e);
    assert_true(s == 0x1p24f && e == 1.0f);
    sv_dense_two_sum_f(0x1p24f, 3.0f, &s, &e);
    assert_true(s == 0x1p24f + 4.0f && e == -1.0f);
    sv_test_rng r;
    sv_test_rng_seed(&r, 301);
    for (int k = 0; k < 20000; k++) {
        float a = (float)ldexp(sv_test_uniform(&r), (int)(sv_test_uniform(&r) * 28));
        float b = (float)ldexp(sv_test_uniform(&r), (int)(sv_test_uniform(&r) * 28));
        check_sum_f(a, b);
    }
}

static void test_two_prod_float_adversarial(void **state)
{
    (void)state;
    const float pairs[][2] = {
        {0x1.000002p0f, 0x1.000002p0f}, /* (1 + 2⁻²³)²: e = 2⁻⁴⁶ */
        {0x1.fffffep0f, 0x1.fffffep0f},
        {3.0f, 1.0f / 3.0f},
        {-0x1.fffffep63f, 0x1.fffffep63f},
        {0x1p-60f, 0x1.800002p-40f},
        {4097.0f, 4097.0f},              /* exact: e = 0 */
        {-1.1f, 1.1f},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) check_prod_f(pairs[i][0], pairs[i][1]);
    float p, e;
    sv_dense_two_prod_f(0x1.000002p0f, 0x1.000002p0f, &p, &e);
    assert_true(p == 0x1.000004p0f && e == 0x1p-46f);
    sv_test_rng r;
    sv_test_rng_seed(&r, 302);
    for (int k = 0; k < 20000; k++) {
        float a = (float)ldexp(sv_test_uniform(&r), (int)(sv_test_uniform(&r) * 40));
        float b = (float)ldexp(sv_test_uniform(&r), (int)(sv_test_uniform(&r) * 40));
        check_prod_f(a, b);
    }
}

static void test_two_sum_prod_double(void **state)
{
    (void)state;
    double s, e;
    sv_dense_two_sum(1.0, 0x1p-60, &s, &e);
    assert_true(s == 1.0 && e == 0x1p-60);
    sv_dense_two_sum(0x1p53, 1.0, &s, &e);
    assert_true(s == 0x1p53 && e == 1.0);
    sv_dense_two_prod(1.0 + 0x1p-52, 1.0 + 0x1p-52, &s, &e); /* 1 + 2⁻⁵¹ + 2⁻¹⁰⁴ */
    assert_true(s == 1.0 + 0x1p-51 && e == 0x1p-104);
    sv_dense_two_prod(0.1, 10.0, &s, &e);
    assert_true(s == 1.0 && e == fma(0.1, 10.0, -1.0) && e != 0);
#if LDBL_MANT_DIG >= 64
    /* Sums of doubles within 2^10 of each other are exact in long double. */
    sv_test_rng r;
    sv_test_rng_seed(&r, 303);
    for (int k = 0; k < 20000; k++) {
        double a = ldexp(sv_test_uniform(&r), (int)(sv_test_uniform(&r) * 5));
        double b = ldexp(sv_test_uniform(&r), (int)(sv_test_uniform(&r) * 5));
        sv_dense_two_sum(a, b, &s, &e);
        assert_true((long double)s + (long double)e == (long double)a + (long double)b);
    }
#endif
}

static void test_double_float_basics(void **state)
{
    (void)state;
    double x = 0.1;
    sv_df d = sv_df_from_double(x);
    assert_true(fabs(sv_df_to_double(d) - x) <= 0x1p-48 * x);
    assert_true(d.lo != 0); /* 0.1 needs more than one float */
    /* (1 + 2⁻³⁰)·(1 − 2⁻³⁰) = 1 − 2⁻⁶⁰: plain float gives 1, double-float
     * keeps 1 − 2⁻⁶⁰ to its precision, so the result is below 1. */
    sv_df a = sv_df_from_double(1.0 + 0x1p-30), b = sv_df_from_double(1.0 - 0x1p-30);
    assert_true(a.lo != 0 || a.hi != 1.0f);
    sv_df m = sv_df_mul(a, b);
    assert_true(fabs(sv_df_to_double(m) - (1.0 - 0x1p-60)) <= 0x1p-47);
    sv_df s = sv_df_add(sv_df_from_double(1e6), sv_df_from_double(1e-3));
    assert_true(fabs(sv_df_to_double(s) - (1e6 + 1e-3)) <= 1e6 * 0x1p-47);
}

/* Cancellation: a + b − a with |b| ≪ |a| gives b in double-float, within
 * 4·2⁻⁴⁸·Σ|x_i·y_i|, a bound plain float arithmetic misses by far. */
static void test_dot_cancellation(void **state)
{
    (void)state;
    assert_int_equal(sv_dense_eft_enabled(), 1);
    sv_df x[3] = {sv_df_from_double(1e6), sv_df_from_double(1e-6), sv_df_from_double(-1e6)};
    sv_df y[3] = {sv_df_from_double(1.0), sv_df_from_double(1.0), sv_df_from_double(1.0)};
    double got = sv_df_to_double(sv_df_dot(3, x, y));
    double bound = 4 * 0x1p-48 * (2e6 + 1e-6);
    assert_true(fabs(got - 1e-6) <= bound);
    float plain = (1e6f + 1e-6f) - 1e6f;
    assert_true(fabs((double)plain - 1e-6) > bound); /* float alone fails the same bound */
}

static void test_dot_random_against_long_double(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 304);
    int n = 1000;
    sv_df *x = malloc(sizeof *x * n), *y = malloc(sizeof *y * n);
    long double ref = 0, mag = 0;
    for (int i = 0; i < n; i++) {
        x[i] = sv_df_from_double(sv_test_uniform(&r));
        y[i] = sv_df_from_double(ldexp(sv_test_uniform(&r), (int)(sv_test_uniform(&r) * 8)));
        long double p = (long double)sv_df_to_double(x[i]) * (long double)sv_df_to_double(y[i]);
        ref += p;
        mag += fabsl(p);
    }
    double got = sv_df_to_double(sv_df_dot(n, x, y));
    assert_true(fabsl((long double)got - ref) <= 2e-12L * mag);
    free(x);
    free(y);
}

static void test_complex_residual(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 305);
    int n = 40, lda = 43;
    sv_dfc *a = malloc(sizeof *a * (size_t)lda * n), *x = malloc(sizeof *x * n), *b = malloc(sizeof *b * n),
           *res = malloc(sizeof *res * n);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < lda; i++) {
            a[(size_t)j * lda + i].re = sv_df_from_double(sv_test_uniform(&r));
            a[(size_t)j * lda + i].im = sv_df_from_double(sv_test_uniform(&r));
        }
    for (int i = 0; i < n; i++) {
        x[i].re = sv_df_from_double(sv_test_uniform(&r));
        x[i].im = sv_df_from_double(sv_test_uniform(&r));
    }
    /* b = A·x rounded to double-float plus a tiny offset, so r is small and
     * all its digits come from cancellation. */
    long double *ar = malloc(sizeof *ar * n), *ai = malloc(sizeof *ai * n);
    for (int i = 0; i < n; i++) {
        long double sr = 0, si = 0;
        for (int j = 0; j < n; j++) {
            long double p = sv_df_to_double(a[(size_t)j * lda + i].re), q = sv_df_to_double(a[(size_t)j * lda + i].im);
            long double u = sv_df_to_double(x[j].re), v = sv_df_to_double(x[j].im);
            sr += p * u - q * v;
            si += p * v + q * u;
        }
        b[i].re = sv_df_from_double((double)sr + 1e-9);
        b[i].im = sv_df_from_double((double)si);
        ar[i] = (long double)sv_df_to_double(b[i].re) - sr;
        ai[i] = (long double)sv_df_to_double(b[i].im) - si;
    }
    sv_dfc_residual(n, a, lda, x, b, res);
    for (int i = 0; i < n; i++) {
        assert_true(fabsl((long double)sv_df_to_double(res[i].re) - ar[i]) <= 1e-12L);
        assert_true(fabsl((long double)sv_df_to_double(res[i].im) - ai[i]) <= 1e-12L);
    }
    /* Complex dot: row 0 of A times x equals b₀ − r₀. */
    sv_dfc *row = malloc(sizeof *row * n);
    for (int j = 0; j < n; j++) row[j] = a[(size_t)j * lda];
    sv_dfc d = sv_dfc_dot(n, row, x);
    assert_true(fabsl((long double)sv_df_to_double(d.re) - (sv_df_to_double(b[0].re) - ar[0])) <= 1e-12L);
    assert_true(fabsl((long double)sv_df_to_double(d.im) - (sv_df_to_double(b[0].im) - ai[0])) <= 1e-12L);
    free(row);
    free(a);
    free(x);
    free(b);
    free(res);
    free(ar);
    free(ai);
}

/* The self-test rejects transforms that lose their error terms (what an
 * over-eager compiler would produce), and a disabled path still computes
 * correct (double) results. */
static void broken_sum(float a, float b, float *s, float *e)
{
    *s = a + b;
    *e = 0;
}
static void broken_prod(float a, float b, float *p, float *e)
{
    *p = a * b;
    *e = 0;
}

static void test_selftest_detects_broken_transforms(void **state)
{
    (void)state;
    assert_int_equal(sv_dense_eft_check(sv_dense_two_sum_f, sv_dense_two_prod_f), 1);
    assert_int_equal(sv_dense_eft_check(broken_sum, sv_dense_two_prod_f), 0);
    assert_int_equal(sv_dense_eft_check(sv_dense_two_sum_f, broken_prod), 0);
    sv_dense_eft_force_state(0);
    assert_int_equal(sv_dense_eft_enabled(), 0);
    sv_df x[3] = {sv_df_from_double(1e6), sv_df_from_double(1e-6), sv_df_from_double(-1e6)};
    sv_df y[3] = {sv_df_from_double(1.0), sv_df_from_double(1.0), sv_df_from_double(1.0)};
    assert_true(fabs(sv_df_to_double(sv_df_dot(3, x, y)) - 1e-6) <= 4 * 0x1p-53 * 2e6); /* double's bound */
    sv_dense_eft_force_state(-1);
    assert_int_equal(sv_dense_eft_enabled(), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_sum_float_adversarial),
        cmocka_unit_test(test_two_prod_float_adversarial),
        cmocka_unit_test(test_two_sum_prod_double),
        cmocka_unit_test(test_double_float_basics),
        cmocka_unit_test(test_dot_cancellation),
        cmocka_unit_test(test_dot_random_against_long_double),
        cmocka_unit_test(test_complex_residual),
        cmocka_unit_test(test_selftest_detects_broken_transforms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
