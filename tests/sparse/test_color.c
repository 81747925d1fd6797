/* Colouring: validity, the counts eb50.md gives, the dense end, recovery
 * of J from one product per colour straight into the LU slots. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sparse_support.h"

static int max_row(const sv_sparse_pattern *p)
{
    const int *rp = sv_sparse_pattern_rowptr(p);
    int m = 0;
    for (int i = 0; i < sv_sparse_pattern_n(p); i++)
        if (rp[i + 1] - rp[i] > m) m = rp[i + 1] - rp[i];
    return m;
}

static void test_valid_and_bounded(void **state)
{
    (void)state;
    sv_sparse_pattern *ps[] = {tp_tridiagonal(50),     tp_block_tridiagonal(10, 5), tp_brusselator2d(8),
                               tp_random(300, 5, 99),  tp_pollu(),                  tp_hires(),
                               tp_eb50_declared(),     tp_eb50_true()};
    for (size_t x = 0; x < sizeof ps / sizeof ps[0]; x++) {
        sv_sparse_coloring *c = NULL;
        assert_int_equal(sv_sparse_color(NULL, ps[x], &c), SV_OK);
        assert_int_equal(sv_sparse_coloring_check(c, ps[x]), SV_OK);
        int nc = sv_sparse_coloring_count(c);
        /* A row with m entries needs m colours; greedy never needs more than
         * the largest degree + 1. */
        assert_true(nc >= max_row(ps[x]));
        const int *col = sv_sparse_coloring_colors(c);
        for (int j = 0; j < sv_sparse_pattern_n(ps[x]); j++) assert_true(col[j] >= 0 && col[j] < nc);
        sv_sparse_coloring_destroy(c);
        sv_sparse_pattern_destroy(ps[x]);
    }
}

/* Known optima: a row with m entries forces m colours, and these patterns
 * are coloured with exactly that many: tridiagonal 3, 5 × 5 block
 * tridiagonal 15, EB-50 declared 12 and true 11 (eb50.md). */
static void test_known_counts(void **state)
{
    (void)state;
    struct {
        sv_sparse_pattern *p;
        int colors;
    } cases[] = {{tp_tridiagonal(100), 3}, {tp_block_tridiagonal(100, 5), 15}, {tp_eb50_declared(), 12},
                 {tp_eb50_true(), 11}};
    for (size_t x = 0; x < sizeof cases / sizeof cases[0]; x++) {
        sv_sparse_coloring *c = NULL;
        assert_int_equal(sv_sparse_color(NULL, cases[x].p, &c), SV_OK);
        assert_int_equal(sv_sparse_coloring_count(c), cases[x].colors);
        sv_sparse_coloring_destroy(c);
        sv_sparse_pattern_destroy(cases[x].p);
    }
}

static void test_dense_every_column_own_colour(void **state)
{
    (void)state;
    sv_sparse_pattern *p = NULL;
    assert_int_equal(sv_sparse_pattern_dense(NULL, 17, &p), SV_OK);
    sv_sparse_coloring *c = NULL;
    assert_int_equal(sv_sparse_color(NULL, p, &c), SV_OK);
    assert_int_equal(sv_sparse_coloring_count(c), 17);
    sv_sparse_coloring_destroy(c);
    sv_sparse_pattern_destroy(p);
}

static void test_check_rejects(void **state)
{
    (void)state;
    sv_sparse_pattern *p = tp_tridiagonal(6);
    int bad[6] = {0, 1, 0, 1, 0, 1}; /* row 1 meets columns 0 and 2, both colour 0 */
    sv_sparse_coloring *c = NULL;
    assert_int_equal(sv_sparse_coloring_from_colors(NULL, p, bad, &c), SV_OK);
    assert_int_equal(sv_sparse_coloring_check(c, p), SV_ERR_PATTERN);
    assert_non_null(strstr(sv_last_error(), "row 1 meets columns 0 and 2"));
    sv_sparse_coloring_destroy(c);
    int good[6] = {0, 1, 2, 0, 1, 2};
    assert_int_equal(sv_sparse_coloring_from_colors(NULL, p, good, &c), SV_OK);
    assert_int_equal(sv_sparse_coloring_check(c, p), SV_OK);
    sv_sparse_coloring_destroy(c);
    int out_of_range[6] = {0, 1, 2, 0, 1, 6};
    assert_int_equal(sv_sparse_coloring_from_colors(NULL, p, out_of_range, &c), SV_ERR_ARG);
    assert_int_equal(sv_sparse_color(NULL, NULL, &c), SV_ERR_ARG);
    sv_sparse_pattern_destroy(p);
}

/* Recovery: J·d_c computed densely (an independent product), recovered
 * with alpha = −1 into a cleared buffer plus the shift on the diagonal
 * slots, equals what load_shifted writes, exactly (each slot receives one
 * product entry, which is the J entry itself). Also into pattern values. */
static void test_recovery(void **state)
{
    (void)state;
    sv_test_rng rng;
    sv_test_rng_seed(&rng, 5);
    sv_sparse_pattern *ps[] = {tp_eb50_true(), tp_pollu(), tp_brusselator2d(5), tp_random(80, 4, 3)};
    for (size_t x = 0; x < sizeof ps / sizeof ps[0]; x++) {
        sv_sparse_pattern *p = ps[x];
        int n = sv_sparse_pattern_n(p), m = sv_sparse_pattern_nnz(p);
        sv_sparse_lu *lu = NULL;
        sv_sparse_coloring *c = NULL;
        assert_int_equal(sv_sparse_lu_analyse(NULL, p, SV_SPARSE_ORDER_AMD, &lu), SV_OK);
        assert_int_equal(sv_sparse_color(NULL, p, &c), SV_OK);
        int nnz = sv_sparse_lu_nnz(lu);
        double *v = ts_random_values(p, &rng), *a = ts_dense(p, v);
        double *ref = malloc((size_t)nnz * sizeof *ref), *buf = calloc((size_t)nnz, sizeof *buf);
        double *vals = malloc((size_t)m * sizeof *vals), *jv = malloc((size_t)n * sizeof *jv);
        double shift = 3.5;
        sv_sparse_lu_load_shifted(lu, v, shift, ref);
        const int *col = sv_sparse_coloring_colors(c);
        for (int k = 0; k < sv_sparse_coloring_count(c); k++) {
            for (int i = 0; i < n; i++) {
                double s = 0;
                for (int j = 0; j < n; j++) s += a[(size_t)i * n + j] * (col[j] == k ? 1.0 : 0.0);
                jv[i] = s;
            }
            sv_sparse_recover_color(c, lu, k, jv, -1.0, buf);
            sv_sparse_recover_color_values(c, p, k, jv, vals);
        }
        const int *ds = sv_sparse_lu_diag_slot(lu);
        for (int i = 0; i < n; i++) buf[ds[i]] += shift;
        assert_memory_equal(buf, ref, (size_t)nnz * sizeof *buf);
        assert_memory_equal(vals, v, (size_t)m * sizeof *vals);
        free(v), free(a), free(ref), free(buf), free(vals), free(jv);
        sv_sparse_coloring_destroy(c);
        sv_sparse_lu_destroy(lu);
        sv_sparse_pattern_destroy(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_and_bounded),
        cmocka_unit_test(test_known_counts),
        cmocka_unit_test(test_dense_every_column_own_colour),
        cmocka_unit_test(test_check_rejects),
        cmocka_unit_test(test_recovery),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
