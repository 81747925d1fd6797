/* The affine model: packed products against full BLAS products, Z·X and
 * residuals against a full Z built independently, the LAPACK exact solve,
 * and input validation. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <cblas.h>

#include "support_synth.h"
#include "sv_test.h"
#include "sweep/sweep_internal.h"

static double complex one_coef(void *u, int k, double f);

static void check_packed_matmul(int n, int nb)
{
    synth s;
    synth_create(&s, n, nb, 2, 2, 0.05, 7 + n + nb);
    int m = 5;
    sv_test_rng r;
    sv_test_rng_seed(&r, 11);
    double *x = malloc(sizeof(double) * n * m), *y = malloc(sizeof(double) * n * m),
           *ref = malloc(sizeof(double) * n * m);
    for (int i = 0; i < n * m; i++) x[i] = sv_test_uniform(&r);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(sv_sweep_model_apply_term(s.model, k, m, x, n, y, n), SV_OK);
        if (k < 2) {
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, m, n, 1.0, k ? s.Pf : s.Lf, n, x, n, 0.0, ref,
                        n);
        } else {
            for (int j = 0; j < m; j++)
                for (int i = 0; i < n; i++) {
                    double a = (2.0 / 3.0) * x[j * n + i];
                    if (i > 0) a += x[j * n + i - 1] / 6.0;
                    if (i < n - 1) a += x[j * n + i + 1] / 6.0;
                    ref[j * n + i] = a;
                }
        }
        double scale = 0, err = 0;
        for (int i = 0; i < n * m; i++) {
            scale = fmax(scale, fabs(ref[i]));
            err = fmax(err, fabs(y[i] - ref[i]));
        }
        assert_true(err <= 1e-13 * scale);
    }
    free(x);
    free(y);
    free(ref);
    synth_destroy(&s);
}

static void test_packed_products(void **state)
{
    (void)state;
    check_packed_matmul(37, 8);   /* last block column partial */
    check_packed_matmul(40, 8);   /* exact multiple */
    check_packed_matmul(30, 64);  /* one block larger than n */
    check_packed_matmul(1, 4);
}

/* Large enough for the parallel path (per-thread accumulators summed at
 * the end), with two threads: a random symmetric matrix, packed by walking
 * the layout, against dgemm on the full matrix, and bit for bit the same
 * from one run to the next. */
static void test_packed_products_threaded(void **state)
{
    (void)state;
    int n = 1500, nb = 96, m = 3;
    sv_test_rng r;
    sv_test_rng_seed(&r, 99);
    double *a = malloc(sizeof(double) * n * n);
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++) a[(size_t)j * n + i] = a[(size_t)i * n + j] = sv_test_uniform(&r);
    double *pk = malloc(sizeof(double) * sv_dense_packed_size(n, nb));
    size_t o = 0;
    for (int c0 = 0; c0 < n; c0 += nb) {
        int w = n - c0 < nb ? n - c0 : nb;
        for (int jj = 0; jj < w; jj++)
            for (int i = c0; i < n; i++) pk[o++] = i >= c0 + jj ? a[(size_t)(c0 + jj) * n + i] : 0.0;
    }
    double *x = malloc(sizeof(double) * n * m), *y = malloc(sizeof(double) * n * m), *ref = malloc(sizeof(double) * n * m);
    for (int i = 0; i < n * m; i++) x[i] = sv_test_uniform(&r);
    double b[1500] = {1.0};
    sv_sweep_term t = {.kind = SV_SWEEP_TERM_PACKED, .packed = pk, .nb = nb};
    sv_sweep_model *mod;
    assert_int_equal(sv_sweep_model_create(NULL, n, 1, &t, one_coef, NULL, 1, b, n, &mod), SV_OK);
    int prev = omp_get_max_threads();
    omp_set_num_threads(2);
    assert_int_equal(sv_sweep_model_apply_term(mod, 0, m, x, n, y, n), SV_OK);
    /* the same bits in every run: the adaptive sweep's path depends on them */
    double *y2 = malloc(sizeof(double) * n * m);
    for (int rep = 0; rep < 8; rep++) {
        assert_int_equal(sv_sweep_model_apply_term(mod, 0, m, x, n, y2, n), SV_OK);
        assert_memory_equal(y, y2, sizeof(double) * n * m);
    }
    free(y2);
    omp_set_num_threads(prev);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, m, n, 1.0, a, n, x, n, 0.0, ref, n);
    double err = 0, scale = 0;
    for (int i = 0; i < n * m; i++) {
        err = fmax(err, fabs(y[i] - ref[i]));
        scale = fmax(scale, fabs(ref[i]));
    }
    assert_true(err <= 1e-13 * scale);
    sv_sweep_model_destroy(mod);
    free(a);
    free(pk);
    free(x);
    free(y);
    free(ref);
}

static void test_packed_offset_matches_walk(void **state)
{
    (void)state;
    int n = 29, nb = 6;
    size_t o = 0;
    for (int c0 = 0; c0 < n; c0 += nb) {
        int w = n - c0 < nb ? n - c0 : nb;
        for (int jj = 0; jj < w; jj++)
            for (int i = c0; i < n; i++) {
                if (i >= c0 + jj) {
                    assert_int_equal(sv_dense_packed_offset(n, nb, i, c0 + jj), o);
                    assert_int_equal(sv_dense_packed_offset(n, nb, c0 + jj, i), o);
                }
                o++;
            }
    }
    assert_int_equal(sv_dense_packed_size(n, nb), o);
}

static void test_apply_and_residual_against_full(void **state)
{
    (void)state;
    synth s;
    int n = 60;
    synth_create(&s, n, 16, 2, 2, 0.05, 3);
    double f = 3.7e9;
    double complex *z = malloc(sizeof(double complex) * n * n), *x = malloc(sizeof(double complex) * n * 2),
                   *y = malloc(sizeof(double complex) * n * 2), *ref = malloc(sizeof(double complex) * n * 2);
    sv_test_rng r;
    sv_test_rng_seed(&r, 5);
    for (int i = 0; i < 2 * n; i++) x[i] = sv_test_uniform(&r) + I * sv_test_uniform(&r);
    synth_full_z(&s, f, z);
    double complex one = 1, zero = 0;
    cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, 2, n, &one, z, n, x, n, &zero, ref, n);
    assert_int_equal(sv_sweep_model_apply(s.model, f, 2, x, n, y, n), SV_OK);
    double scale = 0, err = 0;
    for (int i = 0; i < 2 * n; i++) {
        scale = fmax(scale, cabs(ref[i]));
        err = fmax(err, cabs(y[i] - ref[i]));
    }
    assert_true(err <= 1e-13 * scale);
    assert_int_equal(sv_sweep_model_residual(s.model, f, x, n, y, n), SV_OK);
    for (int i = 0; i < 2 * n; i++) assert_true(cabs(y[i] - (s.b[i] - ref[i])) <= 1e-13 * scale);
    /* ‖Z‖∞ bound is an upper bound of the true norm */
    double zinf = 0;
    for (int i = 0; i < n; i++) {
        double rs = 0;
        for (int j = 0; j < n; j++) rs += cabs(z[j * n + i]);
        zinf = fmax(zinf, rs);
    }
    double bound = sv_sweep_model_norm_inf(s.model, f);
    assert_true(bound >= zinf * (1 - 1e-14));
    assert_true(bound <= 3 * zinf);
    free(z);
    free(x);
    free(y);
    free(ref);
    synth_destroy(&s);
}

static void test_lapack_exact_solve(void **state)
{
    (void)state;
    synth s;
    int n = 80;
    synth_create(&s, n, 16, 2, 2, 0.05, 9);
    double complex *x = malloc(sizeof(double complex) * n * 2), *ref = malloc(sizeof(double complex) * n * 2);
    sv_sweep_exact_info info;
    assert_int_equal(sv_sweep_solve_exact(NULL, s.model, 4.2e9, SV_SWEEP_LAPACK, x, n, &info), SV_OK);
    synth_solve(&s, 4.2e9, ref);
    double scale = 0, err = 0;
    for (int i = 0; i < 2 * n; i++) {
        scale = fmax(scale, cabs(ref[i]));
        err = fmax(err, cabs(x[i] - ref[i]));
    }
    assert_true(err <= 1e-10 * scale);
    assert_true(info.backward_error < 1e-14);
    assert_true(synth_true_residual(&s, 4.2e9, x) < 1e-10);
    free(x);
    free(ref);
    synth_destroy(&s);
}

static double complex one_coef(void *u, int k, double f)
{
    (void)u;
    (void)k;
    (void)f;
    return 1.0;
}
static double complex nan_coef(void *u, int k, double f)
{
    (void)u;
    (void)k;
    return f > 1 ? NAN : 1.0;
}

static void test_bad_input(void **state)
{
    (void)state;
    int n = 4;
    double packed[16] = {2, 1, 0, 0, 2, 1, 0, 2, 1, 2}; /* nb = 4: one block column, 4×4 column-major */
    for (int i = 0; i < 16; i++) packed[i] = (i % 5 == 0) ? 2.0 : 0.5;
    int rowptr[5] = {0, 1, 2, 3, 4}, colind[4] = {0, 1, 2, 3};
    double vals[4] = {1, 1, 1, 1};
    double b[4] = {1, 0, 0, 0};
    sv_sweep_term t[2] = {{.kind = SV_SWEEP_TERM_PACKED, .packed = packed, .nb = 4},
                          {.kind = SV_SWEEP_TERM_CSR, .rowptr = rowptr, .colind = colind, .values = vals}};
    sv_sweep_model *m = NULL;
    assert_int_equal(sv_sweep_model_create(NULL, 0, 2, t, one_coef, NULL, 1, b, n, &m), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "n = 0"));
    assert_int_equal(sv_sweep_model_create(NULL, n, 2, t, NULL, NULL, 1, b, n, &m), SV_ERR_ARG);
    assert_int_equal(sv_sweep_model_create(NULL, n, 2, t, one_coef, NULL, 1, b, 2, &m), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "ldb"));
    assert_int_equal(sv_sweep_model_create(NULL, n, 2, t, one_coef, NULL, 1, NULL, n, &m), SV_ERR_ARG);
    double zb[4] = {0};
    assert_int_equal(sv_sweep_model_create(NULL, n, 2, t, one_coef, NULL, 1, zb, n, &m), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "zero"));
    colind[2] = 9;
    assert_int_equal(sv_sweep_model_create(NULL, n, 2, t, one_coef, NULL, 1, b, n, &m), SV_ERR_PATTERN);
    assert_non_null(strstr(sv_last_error(), "colind"));
    colind[2] = 2;
    packed[5] = INFINITY;
    assert_int_equal(sv_sweep_model_create(NULL, n, 2, t, one_coef, NULL, 1, b, n, &m), SV_ERR_NONFINITE);
    assert_non_null(strstr(sv_last_error(), "terms[0]"));
    packed[5] = 2.0;
    packed[4] = NAN; /* strictly upper part of the diagonal block: workspace, ignored */
    t[0].nb = 0;
    assert_int_equal(sv_sweep_model_create(NULL, n, 2, t, one_coef, NULL, 1, b, n, &m), SV_ERR_ARG);
    t[0].nb = 4;
    assert_int_equal(sv_sweep_model_create(NULL, n, 2, t, nan_coef, NULL, 1, b, n, &m), SV_OK);
    double complex x[4];
    assert_int_equal(sv_sweep_solve_exact(NULL, m, 5.0, SV_SWEEP_LAPACK, x, n, NULL), SV_ERR_NONFINITE);
    assert_non_null(strstr(sv_last_error(), "c_0"));
    assert_int_equal(sv_sweep_solve_exact(NULL, m, NAN, SV_SWEEP_LAPACK, x, n, NULL), SV_ERR_NONFINITE);
    assert_int_equal(sv_sweep_solve_exact(NULL, m, 0.5, SV_SWEEP_LAPACK, x, 2, NULL), SV_ERR_ARG);
    assert_int_equal(sv_sweep_solve_exact(NULL, m, 0.5, (sv_sweep_precision)7, x, n, NULL), SV_ERR_ARG);
    assert_int_equal(sv_sweep_solve_exact(NULL, m, 0.5, SV_SWEEP_LAPACK, x, n, NULL), SV_OK);
    assert_int_equal(sv_sweep_model_set_output(m, 0, b, n), SV_ERR_ARG);
    sv_sweep_model_destroy(m);
}

static void test_budget_refusal(void **state)
{
    (void)state;
    synth s;
    int n = 64;
    synth_create(&s, n, 16, 2, 2, 0.05, 9);
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    assert_int_equal(sv_ctx_set_memory_limit(ctx, 4096), SV_OK);
    double complex *x = malloc(sizeof(double complex) * n * 2);
    assert_int_equal(sv_sweep_solve_exact(ctx, s.model, 1e9, SV_SWEEP_LAPACK, x, n, NULL), SV_ERR_BUDGET);
    assert_int_equal(sv_ctx_memory_current(ctx), 0);
    free(x);
    sv_ctx_destroy(ctx);
    synth_destroy(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_packed_products),
        cmocka_unit_test(test_packed_products_threaded),
        cmocka_unit_test(test_packed_offset_matches_walk),
        cmocka_unit_test(test_apply_and_residual_against_full),
        cmocka_unit_test(test_lapack_exact_solve),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_budget_refusal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
