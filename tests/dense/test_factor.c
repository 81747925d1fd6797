/* LDLᵀ factorisation and solves, double and single precision, against
 * LAPACK (zgetrf/zgetrs, zsytrf/zsytrs) solutions; the pivoted fallback on
 * matrices that need pivoting; singular, non-finite and budget errors. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solvent/dense.h"
#include "support_dense.h"

/* Factor a (n × n full) through the packed path and solve p right-hand
 * sides with leading dimension ldb ≥ n. Returns x (n × p, ld n). */
static double complex *solve_with(const double complex *a, int n, int nb, int p, int ldb, const double complex *b,
                                  int single, sv_ctx *ctx, sv_dense_factor_info *info, sv_status *st_out)
{
    sv_dense_sym *m = td_packed(a, n, nb, single);
    sv_dense_factor *f = NULL;
    double complex *x = malloc(sizeof *x * (size_t)(n ? n : 1) * (p ? p : 1));
    sv_status st = sv_dense_factor_create(ctx, m, NULL, &f, info);
    if (st_out) *st_out = st;
    if (st) {
        sv_dense_sym_destroy(m);
        free(x);
        return NULL;
    }
    assert_int_equal(sv_dense_factor_type(f), single ? SV_DENSE_C32 : SV_DENSE_C64);
    if (single) {
        float complex *bf = calloc((size_t)ldb * (p ? p : 1), sizeof *bf);
        for (int c = 0; c < p; c++)
            for (int i = 0; i < n; i++) bf[(size_t)c * ldb + i] = (float complex)b[(size_t)c * n + i];
        assert_int_equal(sv_dense_factor_solve(f, p, bf, ldb), SV_OK);
        for (int c = 0; c < p; c++)
            for (int i = 0; i < n; i++) x[(size_t)c * n + i] = bf[(size_t)c * ldb + i];
        free(bf);
    } else {
        double complex *bd = calloc((size_t)ldb * (p ? p : 1), sizeof *bd);
        for (int c = 0; c < p; c++) memcpy(bd + (size_t)c * ldb, b + (size_t)c * n, sizeof *bd * n);
        assert_int_equal(sv_dense_factor_solve(f, p, bd, ldb), SV_OK);
        for (int c = 0; c < p; c++) memcpy(x + (size_t)c * n, bd + (size_t)c * ldb, sizeof *bd * n);
        free(bd);
    }
    sv_dense_factor_destroy(f);
    sv_dense_sym_destroy(m);
    return x;
}

static void check_well_conditioned(int n, int nb, int p, int single)
{
    sv_test_rng r;
    sv_test_rng_seed(&r, 1000 + (uint64_t)n * 31 + (uint64_t)nb + (uint64_t)single);
    double complex *a = td_random_sym(&r, n, n + 1.0);
    double complex *b = td_random(&r, n, p);
    double complex *xref = malloc(sizeof *xref * (size_t)(n ? n : 1) * (p ? p : 1));
    if (n) assert_int_equal(td_lapack_lu_solve(n, p, a, b, xref), 0);
    sv_dense_factor_info info;
    double complex *x = solve_with(a, n, nb, p, n + 2, b, single, NULL, &info, NULL);
    assert_non_null(x);
    assert_int_equal(info.path, SV_DENSE_PATH_LDLT);
    assert_int_equal(info.small_pivot_index, -1);
    if (n) {
        double rel = td_rel_diff(n, p, x, xref), be = td_backward_error(n, p, a, x, b);
        if (single) {
            assert_true(rel < 1e-5);
            assert_true(be < 1e-6);
        } else {
            assert_true(rel < 1e-13);
            assert_true(be < 1e-15);
        }
        assert_true(info.min_pivot_ratio > 0 && info.min_pivot_ratio <= 1.5);
    }
    free(a);
    free(b);
    free(x);
    free(xref);
}

static void test_well_conditioned_double(void **state)
{
    (void)state;
    const int cases[][3] = {{0, 16, 1}, {1, 16, 1}, {2, 16, 3}, {15, 16, 1}, {16, 16, 2}, {17, 16, 1},
                            {55, 16, 4}, {100, 32, 1}, {130, 24, 5}, {300, 64, 2}, {301, 0, 1}, {600, 0, 8}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_well_conditioned(cases[i][0], cases[i][1], cases[i][2], 0);
}

static void test_well_conditioned_single(void **state)
{
    (void)state;
    const int cases[][3] = {{0, 16, 1}, {1, 16, 1}, {17, 16, 2}, {100, 32, 3}, {333, 0, 1}, {500, 96, 6}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_well_conditioned(cases[i][0], cases[i][1], cases[i][2], 1);
}

/* Solves with few right-hand sides of orders from 512 up run on a thread
 * team that splits the rows (factor.c): with 1, 2 and 3 threads, orders
 * that are and are not multiples of the block size, agreement with LAPACK. */
static void test_team_solves(void **state)
{
    (void)state;
    const int cases[][4] = {{512, 64, 1, 0}, {700, 64, 5, 1}, {613, 48, 8, 0}, {777, 0, 3, 1}, {1030, 96, 2, 1}};
    for (int threads = 1; threads <= 3; threads++) {
        sv_ctx *ctx = NULL;
        assert_int_equal(sv_ctx_create(&ctx), SV_OK);
        assert_int_equal(sv_ctx_set_threads(ctx, threads), SV_OK);
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            int n = cases[i][0], nb = cases[i][1], p = cases[i][2], single = cases[i][3];
            sv_test_rng r;
            sv_test_rng_seed(&r, 77 + (uint64_t)n);
            double complex *a = td_random_sym(&r, n, n + 1.0);
            double complex *b = td_random(&r, n, p);
            double complex *xref = malloc(sizeof *xref * (size_t)n * p);
            assert_int_equal(td_lapack_lu_solve(n, p, a, b, xref), 0);
            double complex *x = solve_with(a, n, nb, p, n + 3, b, single, ctx, NULL, NULL);
            assert_non_null(x);
            double rel = td_rel_diff(n, p, x, xref);
            assert_true(rel < (single ? 1e-5 : 1e-13));
            free(a);
            free(b);
            free(x);
            free(xref);
        }
        sv_ctx_destroy(ctx);
    }
}

/* Double right-hand sides with single factors: each column is scaled before
 * rounding, so right-hand sides of size 1e-40 (below single precision's
 * normal range, 1.2e-38) still solve to single-precision accuracy, against LAPACK on
 * the same system; with double factors it is the plain solve. */
static void test_solve_scaled(void **state)
{
    (void)state;
    int n = 150, p = 3;
    sv_test_rng r;
    sv_test_rng_seed(&r, 4242);
    double complex *a = td_random_sym(&r, n, n + 1.0);
    double complex *b = td_random(&r, n, p);
    for (int i = 0; i < n * p; i++) b[i] *= 1e-40;
    double complex *xref = malloc(sizeof *xref * (size_t)n * p), *x = malloc(sizeof *x * (size_t)n * p);
    assert_int_equal(td_lapack_lu_solve(n, p, a, b, xref), 0);
    for (int single = 0; single <= 1; single++) {
        sv_dense_sym *m = td_packed(a, n, 0, single);
        sv_dense_factor *f = NULL;
        assert_int_equal(sv_dense_factor_create(NULL, m, NULL, &f, NULL), SV_OK);
        void *work = malloc(sv_dense_solve_work_bytes(n, p));
        memcpy(x, b, sizeof *x * (size_t)n * p);
        assert_int_equal(sv_dense_factor_solve_scaled(f, p, x, n, work), SV_OK);
        assert_true(td_rel_diff(n, p, x, xref) < (single ? 1e-5 : 1e-13));
        assert_int_equal(sv_dense_factor_solve_scaled(f, p, x, n - 1, work), SV_ERR_ARG);
        if (single) assert_int_equal(sv_dense_factor_solve_scaled(f, p, x, n, NULL), SV_ERR_ARG);
        free(work);
        sv_dense_factor_destroy(f);
        sv_dense_sym_destroy(m);
    }
    free(a);
    free(b);
    free(x);
    free(xref);
}

/* The conventional-gemm variant of the trailing update (plain_gemm = 1)
 * agrees with LAPACK as well. */
static void test_plain_gemm_option(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 76);
    int n = 230, p = 2;
    double complex *a = td_random_sym(&r, n, n), *b = td_random(&r, n, p), *xref = malloc(sizeof *xref * (size_t)n * p);
    assert_int_equal(td_lapack_lu_solve(n, p, a, b, xref), 0);
    for (int single = 0; single < 2; single++) {
        sv_dense_sym *m = td_packed(a, n, 32, single);
        sv_dense_factor_options o = {.plain_gemm = 1};
        sv_dense_factor *f;
        sv_dense_factor_info info;
        assert_int_equal(sv_dense_factor_create(NULL, m, &o, &f, &info), SV_OK);
        assert_int_equal(info.path, SV_DENSE_PATH_LDLT);
        double complex *x = malloc(sizeof *x * (size_t)n * p);
        if (single) {
            float complex *xf = malloc(sizeof *xf * (size_t)n * p);
            for (int i = 0; i < n * p; i++) xf[i] = (float complex)b[i];
            assert_int_equal(sv_dense_factor_solve(f, p, xf, n), SV_OK);
            for (int i = 0; i < n * p; i++) x[i] = xf[i];
            free(xf);
            assert_true(td_rel_diff(n, p, x, xref) < 1e-5);
        } else {
            memcpy(x, b, sizeof *x * (size_t)n * p);
            assert_int_equal(sv_dense_factor_solve(f, p, x, n), SV_OK);
            assert_true(td_rel_diff(n, p, x, xref) < 1e-13);
            assert_true(td_backward_error(n, p, a, x, b) < 1e-15);
        }
        free(x);
        sv_dense_factor_destroy(f);
        sv_dense_sym_destroy(m);
    }
    free(a);
    free(b);
    free(xref);
}

/* Agreement with LAPACK's symmetric Bunch–Kaufman solve too. */
static void test_matches_zsytrf(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 77);
    int n = 257, p = 3;
    double complex *a = td_random_sym(&r, n, 20.0);
    double complex *b = td_random(&r, n, p), *xref = malloc(sizeof *xref * (size_t)n * p);
    assert_int_equal(td_lapack_sy_solve(n, p, a, b, xref), 0);
    sv_dense_factor_info info;
    double complex *x = solve_with(a, n, 32, p, n, b, 0, NULL, &info, NULL);
    assert_true(td_rel_diff(n, p, x, xref) < 1e-12);
    free(a);
    free(b);
    free(x);
    free(xref);
}

/* Condition numbers up to 1e10: both LAPACK and we are backward stable, so
 * the solutions agree to about cond·ε, and the backward error is small. */
static void test_ill_conditioned(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 78);
    const double conds[] = {1e2, 1e6, 1e10};
    for (int t = 0; t < 3; t++) {
        int n = 200, p = 2;
        double complex *a = td_sym_with_cond(&r, n, conds[t]);
        double complex *b = td_random(&r, n, p), *xref = malloc(sizeof *xref * (size_t)n * p);
        assert_int_equal(td_lapack_sy_solve(n, p, a, b, xref), 0);
        sv_dense_factor_info info;
        double complex *x = solve_with(a, n, 32, p, n, b, 0, NULL, &info, NULL);
        assert_non_null(x);
        double rel = td_rel_diff(n, p, x, xref), be = td_backward_error(n, p, a, x, b);
        print_message("cond %.0e: path %d, rel diff to zsytrf %.2e, backward error %.2e\n", conds[t], info.path, rel,
                      be);
        assert_true(rel < conds[t] * 1e-13);
        assert_true(be < 1e-14);
        free(a);
        free(b);
        free(x);
        free(xref);
    }
}

static void check_zero_pivot(int n, int nb, int p0, int single)
{
    sv_test_rng r;
    sv_test_rng_seed(&r, 500 + (uint64_t)p0);
    double complex *a = td_sym_zero_pivot(&r, n, p0);
    int p = 2;
    double complex *b = td_random(&r, n, p), *xref = malloc(sizeof *xref * (size_t)n * p);
    assert_int_equal(td_lapack_lu_solve(n, p, a, b, xref), 0);
    sv_dense_factor_info info;
    double complex *x = solve_with(a, n, nb, p, n, b, single, NULL, &info, NULL);
    assert_non_null(x);
    assert_int_equal(info.path, SV_DENSE_PATH_FALLBACK);
    assert_int_equal(info.small_pivot_index, p0);
    assert_true(info.fallback_bytes >= (size_t)n * n * (single ? 8 : 16));
    double rel = td_rel_diff(n, p, x, xref), be = td_backward_error(n, p, a, x, b);
    if (single) {
        assert_true(be < 1e-5);
    } else {
        assert_true(rel < 1e-11);
        assert_true(be < 1e-14);
    }
    free(a);
    free(b);
    free(x);
    free(xref);
}

static void test_fallback_on_zero_pivot(void **state)
{
    (void)state;
    check_zero_pivot(50, 16, 0, 0);  /* first pivot */
    check_zero_pivot(50, 16, 5, 0);  /* inside the first diagonal block */
    check_zero_pivot(80, 16, 16, 0); /* first pivot of block column 1 (look-ahead) */
    check_zero_pivot(90, 16, 37, 0); /* inside block column 2: recovery of two block columns */
    check_zero_pivot(90, 16, 88, 0); /* next to last pivot (F must stay 2 × 2 to be nonsingular) */
    check_zero_pivot(90, 16, 37, 1);
}

/* A tiny (not zero) diagonal entry: 1e-13 relative, below the default
 * threshold 1e-8, so the first pivot sends the factorisation to the
 * fallback, whose solution agrees with LAPACK's LU. */
static void test_fallback_on_tiny_diagonal(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 88);
    int n = 120, p = 3;
    double complex *a = td_random_sym(&r, n, 0);
    for (int i = 1; i < n; i++) a[(size_t)i * n + i] += 2.0 * n;
    a[0] = CMPLX(1e-13, -1e-13) * 2.0 * n;
    double complex *b = td_random(&r, n, p), *xref = malloc(sizeof *xref * (size_t)n * p);
    assert_int_equal(td_lapack_lu_solve(n, p, a, b, xref), 0);
    sv_dense_factor_info info;
    double complex *x = solve_with(a, n, 32, p, n, b, 0, NULL, &info, NULL);
    assert_non_null(x);
    assert_int_equal(info.path, SV_DENSE_PATH_FALLBACK);
    assert_int_equal(info.small_pivot_index, 0);
    assert_true(td_rel_diff(n, p, x, xref) < 1e-12);
    assert_true(td_backward_error(n, p, a, x, b) < 1e-15);
    free(a);
    free(b);
    free(x);
    free(xref);
}

/* With the fallback disabled the error is reported and A is given back as it
 * was (restored exactly from the saved block, or recomputed from L and D). */
static void test_fallback_disabled_restores_a(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 90);
    const int pos[] = {0, 7, 40};
    for (int t = 0; t < 3; t++) {
        int n = 70, nb = 16;
        double complex *a = td_sym_zero_pivot(&r, n, pos[t]);
        sv_dense_sym *m = td_packed(a, n, nb, 0);
        sv_dense_factor_options o = {.disallow_fallback = 1};
        sv_dense_factor *f = (sv_dense_factor *)&f;
        sv_dense_factor_info info;
        assert_int_equal(sv_dense_factor_create(NULL, m, &o, &f, &info), SV_ERR_SINGULAR);
        assert_null(f);
        assert_int_equal(info.small_pivot_index, pos[t]);
        assert_non_null(strstr(sv_last_error(), "allow_fallback"));
        double scale = 0, diff = 0;
        for (int j = 0; j < n; j++)
            for (int i = j; i < n; i++) {
                scale = fmax(scale, cabs(a[(size_t)j * n + i]));
                diff = fmax(diff, cabs(sv_dense_sym_get(m, i, j) - a[(size_t)j * n + i]));
            }
        if (pos[t] < nb) assert_true(diff == 0);
        else assert_true(diff <= 1e-13 * scale);
        sv_dense_sym_destroy(m);
        free(a);
    }
}

/* The threshold is settable: a diagonal matrix's pivots are its diagonal, so
 * a threshold above the smallest ratio forces the fallback, one below it
 * does not, and min_pivot_ratio is that ratio. */
static void test_threshold_and_min_pivot(void **state)
{
    (void)state;
    int n = 40;
    double complex *a = calloc((size_t)n * n, sizeof *a);
    for (int i = 0; i < n; i++) a[(size_t)i * n + i] = CMPLX(1.0 + i, 0.5);
    a[(size_t)9 * n + 9] = CMPLX(0.0, 0.02); /* max(|Re|,|Im|) = 0.02 */
    double amax = 40.0;                         /* entry 39: 40 + 0.5i */
    sv_dense_factor_info info;
    sv_dense_sym *m = td_packed(a, n, 8, 0);
    sv_dense_factor *f;
    sv_dense_factor_options o = {.pivot_threshold = 1e-4};
    assert_int_equal(sv_dense_factor_create(NULL, m, &o, &f, &info), SV_OK);
    assert_int_equal(info.path, SV_DENSE_PATH_LDLT);
    sv_assert_close(info.min_pivot_ratio, 0.02 / amax, 1e-15, 0);
    sv_dense_factor_destroy(f);
    sv_dense_sym_destroy(m);
    m = td_packed(a, n, 8, 0);
    o.pivot_threshold = 0.02 / amax * 1.01;
    assert_int_equal(sv_dense_factor_create(NULL, m, &o, &f, &info), SV_OK);
    assert_int_equal(info.path, SV_DENSE_PATH_FALLBACK);
    assert_int_equal(sv_dense_factor_path(f), SV_DENSE_PATH_FALLBACK);
    assert_int_equal(info.small_pivot_index, 9);
    double complex x[40];
    for (int i = 0; i < n; i++) x[i] = 1;
    assert_int_equal(sv_dense_factor_solve(f, 1, x, n), SV_OK);
    for (int i = 0; i < n; i++) assert_true(cabs(x[i] - 1.0 / a[(size_t)i * n + i]) < 1e-14 * cabs(x[i]));
    sv_dense_factor_destroy(f);
    sv_dense_sym_destroy(m);
    o.pivot_threshold = 1.5;
    m = td_packed(a, n, 8, 0);
    assert_int_equal(sv_dense_factor_create(NULL, m, &o, &f, &info), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "pivot_threshold"));
    sv_dense_sym_destroy(m);
    free(a);
}

static void test_singular_matrices(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 91);
    int n = 60;
    /* Row and column 20 zero: exactly singular. */
    double complex *a = td_random_sym(&r, n, n);
    for (int i = 0; i < n; i++) a[(size_t)20 * n + i] = a[(size_t)i * n + 20] = 0;
    sv_status st;
    assert_null(solve_with(a, n, 16, 1, n, a, 0, NULL, NULL, &st));
    assert_int_equal(st, SV_ERR_SINGULAR);
    assert_non_null(strstr(sv_last_error(), "singular"));
    /* Numerically singular: cond 1e20. */
    free(a);
    a = td_sym_with_cond(&r, n, 1e20);
    assert_null(solve_with(a, n, 16, 1, n, a, 0, NULL, NULL, &st));
    assert_int_equal(st, SV_ERR_SINGULAR);
    /* The zero matrix. */
    memset(a, 0, sizeof *a * (size_t)n * n);
    assert_null(solve_with(a, n, 16, 1, n, a, 0, NULL, NULL, &st));
    assert_int_equal(st, SV_ERR_SINGULAR);
    free(a);
}

static void test_nonfinite_input(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 92);
    int n = 30;
    double complex *a = td_random_sym(&r, n, n);
    for (int t = 0; t < 3; t++) {
        double complex bad = t == 0 ? CMPLX(NAN, 0) : t == 1 ? CMPLX(0, INFINITY) : CMPLX(-INFINITY, 1);
        double complex *c = malloc(sizeof *c * (size_t)n * n);
        memcpy(c, a, sizeof *c * (size_t)n * n);
        c[(size_t)3 * n + 5] = c[(size_t)5 * n + 3] = bad;
        for (int single = 0; single < 2; single++) {
            sv_status st;
            assert_null(solve_with(c, n, 8, 1, n, a, single, NULL, NULL, &st));
            if (st != SV_ERR_NONFINITE) print_message("%d %d: %s\n", t, single, sv_last_error());
            assert_int_equal(st, SV_ERR_NONFINITE);
            assert_non_null(strstr(sv_last_error(), "(5, 3)"));
        }
        free(c);
    }
    free(a);
}

static void test_budget(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 93);
    int n = 200, nb = 32;
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    size_t mat = sv_dense_sym_bytes(n, SV_DENSE_C64, nb);
    /* Room for the matrix and the workspace, not for the fallback's full copy. */
    assert_int_equal(sv_ctx_set_memory_limit(ctx, mat + 3 * 16 * nb * nb + 64 * 1024), SV_OK);
    double complex *a = td_sym_zero_pivot(&r, n, 50);
    sv_dense_sym *m;
    assert_int_equal(sv_dense_sym_create(ctx, n, SV_DENSE_C64, nb, &m), SV_OK);
    assert_int_equal(sv_dense_sym_from_full(m, a, n), SV_OK);
    sv_dense_factor *f;
    assert_int_equal(sv_dense_factor_create(ctx, m, NULL, &f, NULL), SV_ERR_BUDGET);
    assert_non_null(strstr(sv_last_error(), "fallback"));
    size_t before = sv_ctx_memory_current(ctx);
    /* A well-conditioned matrix factors within the same budget. */
    double complex *g = td_random_sym(&r, n, n);
    assert_int_equal(sv_dense_sym_from_full(m, g, n), SV_OK);
    assert_int_equal(sv_dense_factor_create(ctx, m, NULL, &f, NULL), SV_OK);
    sv_dense_factor_destroy(f);
    assert_int_equal(sv_ctx_memory_current(ctx), before);
    /* Too small even for the workspace. */
    assert_int_equal(sv_ctx_set_memory_limit(ctx, mat + 1024), SV_OK);
    assert_int_equal(sv_dense_sym_from_full(m, g, n), SV_OK);
    assert_int_equal(sv_dense_factor_create(ctx, m, NULL, &f, NULL), SV_ERR_BUDGET);
    sv_dense_sym_destroy(m);
    assert_int_equal(sv_ctx_memory_current(ctx), 0);
    sv_ctx_destroy(ctx);
    free(a);
    free(g);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    sv_dense_factor *f;
    assert_int_equal(sv_dense_factor_create(NULL, NULL, NULL, &f, NULL), SV_ERR_ARG);
    sv_dense_sym *m;
    assert_int_equal(sv_dense_sym_create(NULL, 4, SV_DENSE_R64, 0, &m), SV_OK);
    assert_int_equal(sv_dense_factor_create(NULL, m, NULL, &f, NULL), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "SV_DENSE_C64"));
    sv_dense_sym_destroy(m);
    assert_int_equal(sv_dense_sym_create(NULL, 4, SV_DENSE_C64, 0, &m), SV_OK);
    for (int i = 0; i < 4; i++) sv_dense_sym_set(m, i, i, 1);
    assert_int_equal(sv_dense_factor_create(NULL, m, NULL, NULL, NULL), SV_ERR_ARG);
    assert_int_equal(sv_dense_factor_create(NULL, m, NULL, &f, NULL), SV_OK);
    double complex b[4] = {1, 2, 3, 4};
    assert_int_equal(sv_dense_factor_solve(NULL, 1, b, 4), SV_ERR_ARG);
    assert_int_equal(sv_dense_factor_solve(f, -1, b, 4), SV_ERR_ARG);
    assert_int_equal(sv_dense_factor_solve(f, 1, b, 3), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "ldb = 3"));
    assert_int_equal(sv_dense_factor_solve(f, 1, NULL, 4), SV_ERR_ARG);
    assert_int_equal(sv_dense_factor_solve(f, 0, NULL, 4), SV_OK);
    assert_int_equal(sv_dense_factor_solve(f, 1, b, 4), SV_OK);
    assert_true(b[3] == 4);
    sv_dense_factor_destroy(f);
    sv_dense_factor_destroy(NULL);
    sv_dense_sym_destroy(m);
}

/* One thread and two threads give accurate results (the parallel trailing
 * update and look-ahead on one side, the sequential order on the other). */
static void test_thread_counts(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 94);
    int n = 400, p = 2;
    double complex *a = td_random_sym(&r, n, n), *b = td_random(&r, n, p);
    for (int th = 1; th <= 2; th++) {
        sv_ctx *ctx;
        assert_int_equal(sv_ctx_create(&ctx), SV_OK);
        assert_int_equal(sv_ctx_set_threads(ctx, th), SV_OK);
        double complex *x = solve_with(a, n, 32, p, n, b, 0, ctx, NULL, NULL);
        assert_true(td_backward_error(n, p, a, x, b) < 1e-15);
        free(x);
        sv_ctx_destroy(ctx);
    }
    free(a);
    free(b);
}

/* Progress: fractions rise to 1 while factoring; a callback that asks to
 * stop gets SV_ERR_CANCELLED and A back as it was. */
typedef struct progress_log {
    double last, stop_at;
    int calls, monotone;
} progress_log;

static int on_progress(void *user, const char *phase, double fraction)
{
    progress_log *p = user;
    assert_non_null(strstr(phase, "LDLT"));
    if (fraction < p->last || fraction > 1) p->monotone = 0;
    p->last = fraction;
    p->calls++;
    return fraction >= p->stop_at;
}

static void test_progress_and_cancel(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 95);
    int n = 300, nb = 32;
    double complex *a = td_random_sym(&r, n, n);
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    progress_log log = {.last = 0, .stop_at = 2, .monotone = 1};
    sv_ctx_set_progress(ctx, on_progress, &log);
    sv_dense_sym *m = td_packed(a, n, nb, 0);
    sv_dense_factor *f;
    assert_int_equal(sv_dense_factor_create(ctx, m, NULL, &f, NULL), SV_OK);
    assert_int_equal(log.calls, (n + nb - 1) / nb - 1);
    assert_true(log.monotone);
    sv_assert_close(log.last, 1.0, 1e-12, 0);
    sv_dense_factor_destroy(f);
    sv_dense_sym_destroy(m);
    const double stops[] = {0.0, 0.5, 0.99};
    for (int t = 0; t < 3; t++) {
        for (int single = 0; single < 2; single++) {
            log = (progress_log){.last = 0, .stop_at = stops[t], .monotone = 1};
            m = td_packed(a, n, nb, single);
            assert_int_equal(sv_dense_factor_create(ctx, m, NULL, &f, NULL), SV_ERR_CANCELLED);
            double scale = 0, diff = 0;
            for (int j = 0; j < n; j++)
                for (int i = j; i < n; i++) {
                    double complex v = a[(size_t)j * n + i];
                    if (single) v = (float complex)v;
                    scale = fmax(scale, cabs(v));
                    diff = fmax(diff, cabs(sv_dense_sym_get(m, i, j) - v));
                }
            assert_true(diff <= (single ? 1e-5 : 1e-13) * scale);
            sv_dense_sym_destroy(m);
        }
    }
    /* discard_on_cancel: the same status, nothing held, and the block
     * columns factored so far left as they are (not undone) */
    sv_dense_factor_options fo = {.discard_on_cancel = 1};
    log = (progress_log){.last = 0, .stop_at = 0.5, .monotone = 1};
    m = td_packed(a, n, nb, 0);
    size_t held = sv_ctx_memory_current(ctx);
    assert_int_equal(sv_dense_factor_create(ctx, m, &fo, &f, NULL), SV_ERR_CANCELLED);
    assert_null(f);
    assert_int_equal(sv_ctx_memory_current(ctx), held);
    assert_true(cabs(sv_dense_sym_get(m, 1, 0) - a[1]) > 1e-6 * cabs(a[1])); /* l_10 = a_10 / d_0, not a_10 */
    sv_dense_sym_destroy(m);
    sv_ctx_destroy(ctx);
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_well_conditioned_double),
        cmocka_unit_test(test_well_conditioned_single),
        cmocka_unit_test(test_team_solves),
        cmocka_unit_test(test_solve_scaled),
        cmocka_unit_test(test_plain_gemm_option),
        cmocka_unit_test(test_matches_zsytrf),
        cmocka_unit_test(test_ill_conditioned),
        cmocka_unit_test(test_fallback_on_zero_pivot),
        cmocka_unit_test(test_fallback_on_tiny_diagonal),
        cmocka_unit_test(test_fallback_disabled_restores_a),
        cmocka_unit_test(test_threshold_and_min_pivot),
        cmocka_unit_test(test_singular_matrices),
        cmocka_unit_test(test_nonfinite_input),
        cmocka_unit_test(test_budget),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_thread_counts),
        cmocka_unit_test(test_progress_and_cancel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
