/* Packed symmetric storage: layout as documented in dense.h, element
 * access, conversion, products against a plain full-matrix product, and the
 * infinity norm against LAPACK's zlansy. */
#include <cblas.h>
#include <complex.h>
#include <lapacke.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solvent/dense.h"
#include "support_dense.h"

/* The documented layout, recomputed the slow way: block column k starts
 * after all earlier block columns, each holding width × (n − first column). */
static size_t doc_offset(int n, int nb, int i, int j)
{
    if (i < j) {
        int t = i;
        i = j;
        j = t;
    }
    size_t off = 0;
    int c0 = 0;
    while (c0 + nb <= j) {
        off += (size_t)nb * (size_t)(n - c0);
        c0 += nb;
    }
    return off + (size_t)(j - c0) * (size_t)(n - c0) + (size_t)(i - c0);
}

static void test_layout_matches_documentation(void **state)
{
    (void)state;
    const int ns[] = {0, 1, 2, 7, 16, 17, 33, 100};
    const int nbs[] = {1, 4, 16, 32};
    const sv_dense_type types[] = {SV_DENSE_C64, SV_DENSE_C32, SV_DENSE_R64};
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
        for (size_t b = 0; b < sizeof nbs / sizeof *nbs; b++)
            for (size_t t = 0; t < 3; t++) {
                int n = ns[a], nb = nbs[b];
                sv_dense_sym *m;
                assert_int_equal(sv_dense_sym_create(NULL, n, types[t], nb, &m), SV_OK);
                assert_int_equal(sv_dense_sym_order(m), n);
                assert_int_equal(sv_dense_sym_block(m), nb);
                assert_int_equal(sv_dense_sym_type(m), types[t]);
                /* Size: every block column, width × height. */
                size_t expect = 0;
                for (int c0 = 0; c0 < n; c0 += nb) expect += (size_t)(n - c0 < nb ? n - c0 : nb) * (size_t)(n - c0);
                assert_int_equal(sv_dense_sym_size(m), expect);
                assert_true(expect <= (size_t)n * (n + 1) / 2 + (size_t)n * nb);
                for (int j = 0; j < n; j++)
                    for (int i = 0; i < n; i++) {
                        assert_int_equal(sv_dense_sym_offset(m, i, j), doc_offset(n, nb, i, j));
                        assert_true(sv_dense_sym_offset(m, i, j) < expect);
                    }
                assert_true(sv_dense_sym_bytes(n, types[t], nb) >= expect * (types[t] == SV_DENSE_C64 ? 16 : 8));
                sv_dense_sym_destroy(m);
            }
}

static void test_default_block_and_zero_fill(void **state)
{
    (void)state;
    sv_dense_sym *m;
    assert_int_equal(sv_dense_sym_create(NULL, 50, SV_DENSE_C64, 0, &m), SV_OK);
    assert_true(sv_dense_sym_block(m) > 0);
    const double complex *d = sv_dense_sym_cdata(m);
    for (size_t i = 0; i < sv_dense_sym_size(m); i++) assert_true(d[i] == 0);
    assert_ptr_equal(sv_dense_sym_data(m), d);
    sv_dense_sym_destroy(m);
}

static void test_set_get_symmetric_all_types(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 11);
    const int n = 23;
    for (int t = 0; t < 3; t++) {
        sv_dense_sym *m;
        assert_int_equal(sv_dense_sym_create(NULL, n, (sv_dense_type)t, 5, &m), SV_OK);
        double complex *ref = td_random_sym(&r, n, 0);
        for (int j = 0; j < n; j++)
            for (int i = j; i < n; i++) {
                double complex v = ref[(size_t)j * n + i];
                if (t == SV_DENSE_R64) v = creal(v);
                /* Set through the upper triangle half of the time. */
                if ((i + j) % 2) sv_dense_sym_set(m, j, i, v);
                else sv_dense_sym_set(m, i, j, v);
            }
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                double complex v = ref[(size_t)j * n + i], g = sv_dense_sym_get(m, i, j);
                if (t == SV_DENSE_R64) v = creal(v);
                double tol = t == SV_DENSE_C32 ? 1e-7 : 0;
                assert_true(cabs(g - v) <= tol * cabs(v));
            }
        /* Out of range reads give NaN, writes are ignored. */
        assert_true(isnan(creal(sv_dense_sym_get(m, n, 0))));
        sv_dense_sym_set(m, -1, 0, 1.0);
        free(ref);
        sv_dense_sym_destroy(m);
    }
}

static void test_from_full_and_offsets_agree(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 12);
    const int n = 37, lda = 40;
    double complex *full = calloc((size_t)lda * n, sizeof *full);
    double complex *s = td_random_sym(&r, n, 0);
    for (int j = 0; j < n; j++) memcpy(full + (size_t)j * lda, s + (size_t)j * n, sizeof *full * n);
    sv_dense_sym *m;
    assert_int_equal(sv_dense_sym_create(NULL, n, SV_DENSE_C64, 8, &m), SV_OK);
    assert_int_equal(sv_dense_sym_from_full(m, full, lda), SV_OK);
    const double complex *d = sv_dense_sym_cdata(m);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) assert_true(d[sv_dense_sym_offset(m, i, j)] == s[(size_t)j * n + i]);
    assert_int_equal(sv_dense_sym_from_full(m, full, n - 1), SV_ERR_ARG);
    /* Real from full. */
    double *fr = malloc(sizeof *fr * (size_t)n * n);
    for (size_t i = 0; i < (size_t)n * n; i++) fr[i] = creal(s[i]);
    sv_dense_sym *mr;
    assert_int_equal(sv_dense_sym_create(NULL, n, SV_DENSE_R64, 8, &mr), SV_OK);
    assert_int_equal(sv_dense_sym_from_full(mr, fr, n), SV_OK);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) assert_true(sv_dense_sym_get(mr, i, j) == creal(s[(size_t)j * n + i]));
    free(fr);
    free(full);
    free(s);
    sv_dense_sym_destroy(m);
    sv_dense_sym_destroy(mr);
}

static void test_convert(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 13);
    const int n = 30;
    double complex *s = td_random_sym(&r, n, 0);
    sv_dense_sym *z, *c, *z2, *d, *cz;
    assert_int_equal(sv_dense_sym_create(NULL, n, SV_DENSE_C64, 7, &z), SV_OK);
    assert_int_equal(sv_dense_sym_create(NULL, n, SV_DENSE_C32, 7, &c), SV_OK);
    assert_int_equal(sv_dense_sym_create(NULL, n, SV_DENSE_C64, 7, &z2), SV_OK);
    assert_int_equal(sv_dense_sym_create(NULL, n, SV_DENSE_R64, 7, &d), SV_OK);
    assert_int_equal(sv_dense_sym_create(NULL, n, SV_DENSE_C32, 7, &cz), SV_OK);
    assert_int_equal(sv_dense_sym_from_full(z, s, n), SV_OK);
    assert_int_equal(sv_dense_sym_convert(z, c), SV_OK);
    assert_int_equal(sv_dense_sym_convert(c, z2), SV_OK);
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++) {
            double complex v = s[(size_t)j * n + i];
            float complex f = (float complex)v;
            assert_true(sv_dense_sym_get(c, i, j) == (double complex)f);
            assert_true(sv_dense_sym_get(z2, i, j) == (double complex)f);
            sv_dense_sym_set(d, i, j, creal(v));
        }
    assert_int_equal(sv_dense_sym_convert(d, z2), SV_OK);
    assert_int_equal(sv_dense_sym_convert(d, cz), SV_OK);
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++) {
            assert_true(sv_dense_sym_get(z2, i, j) == creal(s[(size_t)j * n + i]));
            assert_true(sv_dense_sym_get(cz, i, j) == (double)(float)creal(s[(size_t)j * n + i]));
        }
    /* Complex to real is refused; so are mismatched shapes. */
    assert_int_equal(sv_dense_sym_convert(z, d), SV_ERR_ARG);
    sv_dense_sym *other;
    assert_int_equal(sv_dense_sym_create(NULL, n, SV_DENSE_C32, 8, &other), SV_OK);
    assert_int_equal(sv_dense_sym_convert(z, other), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "block"));
    assert_int_equal(sv_dense_sym_convert(NULL, other), SV_ERR_ARG);
    sv_dense_sym_destroy(other);
    sv_dense_sym_destroy(z);
    sv_dense_sym_destroy(c);
    sv_dense_sym_destroy(z2);
    sv_dense_sym_destroy(d);
    sv_dense_sym_destroy(cz);
    free(s);
}

static void check_matmul(int n, int nb, int p)
{
    sv_test_rng r;
    sv_test_rng_seed(&r, 100 + (uint64_t)n * 7 + (uint64_t)nb);
    double complex *s = td_random_sym(&r, n, 0);
    double complex *x = td_random(&r, n, p);
    double complex *yref = malloc(sizeof *yref * (size_t)(n ? n : 1) * (p ? p : 1));
    td_matmul_full(n, p, s, x, yref);
    int ld = n + 3;
    double complex *xs = calloc((size_t)ld * (p ? p : 1), sizeof *xs);
    double complex *y = calloc((size_t)ld * (p ? p : 1), sizeof *y);
    for (int c = 0; c < p; c++) memcpy(xs + (size_t)c * ld, x + (size_t)c * n, sizeof *x * n);

    sv_dense_sym *z;
    assert_int_equal(sv_dense_sym_create(NULL, n, SV_DENSE_C64, nb, &z), SV_OK);
    assert_int_equal(sv_dense_sym_from_full(z, s, n > 0 ? n : 1), SV_OK);
    /* Garbage in the workspace (upper part of diagonal blocks) must not matter. */
    double complex *zd = sv_dense_sym_data(z);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < j; i++)
            if (i / nb == j / nb) {
                int c0 = j / nb * nb;
                size_t o = sv_dense_sym_offset(z, c0, c0) + (size_t)(j - c0) * (n - c0) + (i - c0);
                zd[o] = 1e300;
            }
    assert_int_equal(sv_dense_sym_matmul(z, p, xs, ld, y, ld), SV_OK);
    double scale = 0;
    for (size_t i = 0; i < (size_t)n * p; i++) scale = fmax(scale, cabs(yref[i]));
    for (int c = 0; c < p; c++)
        for (int i = 0; i < n; i++)
            assert_true(cabs(y[(size_t)c * ld + i] - yref[(size_t)c * n + i]) <= 1e-13 * (scale + 1));

    /* Single precision. */
    sv_dense_sym *cm;
    assert_int_equal(sv_dense_sym_create(NULL, n, SV_DENSE_C32, nb, &cm), SV_OK);
    assert_int_equal(sv_dense_sym_convert(z, cm), SV_OK);
    float complex *xf = calloc((size_t)ld * (p ? p : 1), sizeof *xf), *yf = calloc((size_t)ld * (p ? p : 1), sizeof *yf);
    for (int c = 0; c < p; c++)
        for (int i = 0; i < n; i++) xf[(size_t)c * ld + i] = (float complex)x[(size_t)c * n + i];
    assert_int_equal(sv_dense_sym_matmul(cm, p, xf, ld, yf, ld), SV_OK);
    for (int c = 0; c < p; c++)
        for (int i = 0; i < n; i++)
            assert_true(cabs(yf[(size_t)c * ld + i] - yref[(size_t)c * n + i]) <= 1e-5 * (scale + 1) * (n + 1));

    /* Real matrix, complex vectors. */
    double complex *sr = malloc(sizeof *sr * (size_t)(n ? n : 1) * (n ? n : 1));
    for (size_t i = 0; i < (size_t)n * n; i++) sr[i] = creal(s[i]);
    td_matmul_full(n, p, sr, x, yref);
    sv_dense_sym *dm;
    assert_int_equal(sv_dense_sym_create(NULL, n, SV_DENSE_R64, nb, &dm), SV_OK);
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++) sv_dense_sym_set(dm, i, j, creal(s[(size_t)j * n + i]));
    assert_int_equal(sv_dense_sym_matmul(dm, p, xs, ld, y, ld), SV_OK);
    for (int c = 0; c < p; c++)
        for (int i = 0; i < n; i++)
            assert_true(cabs(y[(size_t)c * ld + i] - yref[(size_t)c * n + i]) <= 1e-13 * (scale + 1));

    sv_dense_sym_destroy(z);
    sv_dense_sym_destroy(cm);
    sv_dense_sym_destroy(dm);
    free(s);
    free(sr);
    free(x);
    free(xs);
    free(y);
    free(yref);
    free(xf);
    free(yf);
}

static void test_matmul_against_full_product(void **state)
{
    (void)state;
    check_matmul(0, 4, 2);
    check_matmul(1, 4, 1);
    check_matmul(5, 8, 1);
    check_matmul(33, 8, 1);
    check_matmul(33, 8, 4);
    check_matmul(100, 32, 3);
    check_matmul(131, 64, 2);
    check_matmul(400, 48, 3); /* large enough for the threaded product */
}

static void test_matmul_bad_args(void **state)
{
    (void)state;
    sv_dense_sym *z;
    assert_int_equal(sv_dense_sym_create(NULL, 4, SV_DENSE_C64, 2, &z), SV_OK);
    double complex x[8] = {0}, y[8];
    assert_int_equal(sv_dense_sym_matmul(NULL, 1, x, 4, y, 4), SV_ERR_ARG);
    assert_int_equal(sv_dense_sym_matmul(z, -1, x, 4, y, 4), SV_ERR_ARG);
    assert_int_equal(sv_dense_sym_matmul(z, 1, x, 3, y, 4), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "ldx"));
    assert_int_equal(sv_dense_sym_matmul(z, 1, NULL, 4, y, 4), SV_ERR_ARG);
    assert_int_equal(sv_dense_sym_matmul(z, 1, x, 4, x, 4), SV_ERR_ARG);
    sv_dense_sym_destroy(z);
}

static void test_norm_inf_against_lapack(void **state)
{
    (void)state;
    sv_test_rng r;
    sv_test_rng_seed(&r, 14);
    const int ns[] = {0, 1, 9, 64, 77};
    for (size_t t = 0; t < sizeof ns / sizeof *ns; t++) {
        int n = ns[t];
        double complex *s = td_random_sym(&r, n, 0.5);
        sv_dense_sym *z;
        assert_int_equal(sv_dense_sym_create(NULL, n, SV_DENSE_C64, 16, &z), SV_OK);
        assert_int_equal(sv_dense_sym_from_full(z, s, n > 0 ? n : 1), SV_OK);
        double ref = n ? LAPACKE_zlansy(LAPACK_COL_MAJOR, 'I', 'L', n, s, n) : 0.0;
        sv_assert_close(sv_dense_sym_norm_inf(z), ref, 1e-14, 1e-300);
        sv_dense_sym *c;
        assert_int_equal(sv_dense_sym_create(NULL, n, SV_DENSE_C32, 16, &c), SV_OK);
        assert_int_equal(sv_dense_sym_convert(z, c), SV_OK);
        sv_assert_close(sv_dense_sym_norm_inf(c), ref, 1e-6, 1e-300);
        sv_dense_sym_destroy(z);
        sv_dense_sym_destroy(c);
        free(s);
    }
    assert_true(isnan(sv_dense_sym_norm_inf(NULL)));
}

static void test_create_errors_and_budget(void **state)
{
    (void)state;
    sv_dense_sym *m = (sv_dense_sym *)&m;
    assert_int_equal(sv_dense_sym_create(NULL, -1, SV_DENSE_C64, 0, &m), SV_ERR_ARG);
    assert_null(m);
    assert_non_null(strstr(sv_last_error(), "n = -1"));
    assert_int_equal(sv_dense_sym_create(NULL, 4, SV_DENSE_C64, -2, &m), SV_ERR_ARG);
    assert_int_equal(sv_dense_sym_create(NULL, 4, (sv_dense_type)7, 0, &m), SV_ERR_ARG);
    assert_int_equal(sv_dense_sym_create(NULL, 4, SV_DENSE_C64, 0, NULL), SV_ERR_ARG);
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    size_t need = sv_dense_sym_bytes(1000, SV_DENSE_C64, 0);
    assert_true(need >= 1000 * 1001 / 2 * 16);
    assert_int_equal(sv_ctx_set_memory_limit(ctx, need / 2), SV_OK);
    assert_int_equal(sv_dense_sym_create(ctx, 1000, SV_DENSE_C64, 0, &m), SV_ERR_BUDGET);
    assert_null(m);
    assert_int_equal(sv_ctx_memory_current(ctx), 0);
    assert_int_equal(sv_ctx_set_memory_limit(ctx, need + 1024), SV_OK);
    assert_int_equal(sv_dense_sym_create(ctx, 1000, SV_DENSE_C64, 0, &m), SV_OK);
    sv_dense_sym_destroy(m);
    assert_int_equal(sv_ctx_memory_current(ctx), 0);
    sv_ctx_destroy(ctx);
    sv_dense_sym_destroy(NULL);
    assert_int_equal(sv_dense_sym_bytes(-1, SV_DENSE_C64, 0), 0);
    /* an order whose packed matrix exceeds size_t: refused by name, the
     * estimate saturates instead of wrapping to a small number */
    assert_int_equal(sv_dense_sym_create(NULL, INT_MAX, SV_DENSE_C64, 0, &m), SV_ERR_ARG);
    assert_null(m);
    assert_non_null(strstr(sv_last_error(), "n = 2147483647"));
    assert_true(sv_dense_sym_bytes(INT_MAX, SV_DENSE_C64, 0) == SIZE_MAX);
    assert_true(sv_dense_sym_bytes(INT_MAX, SV_DENSE_C64, 1) == SIZE_MAX);
    assert_true(sv_dense_sym_bytes(INT_MAX, SV_DENSE_R64, 1) < SIZE_MAX); /* 2^64 − 2^33: it fits */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_matches_documentation),
        cmocka_unit_test(test_default_block_and_zero_fill),
        cmocka_unit_test(test_set_get_symmetric_all_types),
        cmocka_unit_test(test_from_full_and_offsets_agree),
        cmocka_unit_test(test_convert),
        cmocka_unit_test(test_matmul_against_full_product),
        cmocka_unit_test(test_matmul_bad_args),
        cmocka_unit_test(test_norm_inf_against_lapack),
        cmocka_unit_test(test_create_errors_and_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
