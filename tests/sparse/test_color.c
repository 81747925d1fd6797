/* Colouring: validity, the counts docs/ode.md gives, the dense end, recovery
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
 * tridiagonal 15, EB-50 declared 12 and true 11 (docs/ode.md). */
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
            sv_sparse_recover_color_values(c, k, jv, NULL, vals);
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

/* A random n × n CSR structure, 2 <= n < 2 + maxn, with about per_row
 * entries a row, sorted, without any diagonal entry unless the draw gives
 * one (malloc'd). Returns n. */
static int random_csr(sv_test_rng *rng, int maxn, int per_row, int **rp_out, int **ci_out)
{
    int n = 2 + (int)(sv_test_rng_next(rng) % (uint64_t)maxn);
    int *rp = malloc(((size_t)n + 1) * sizeof *rp), *ci = malloc((size_t)n * n * sizeof *ci);
    unsigned char *m = calloc((size_t)n, 1);
    int e = 0;
    for (int i = 0; i < n; i++) {
        memset(m, 0, (size_t)n);
        for (int q = 0; q < per_row; q++) m[sv_test_rng_next(rng) % (uint64_t)n] = 1;
        rp[i] = e;
        for (int j = 0; j < n; j++)
            if (m[j]) ci[e++] = j;
    }
    rp[n] = e;
    free(m);
    *rp_out = rp;
    *ci_out = ci;
    return n;
}

/* Reference greedy pass, written independently of color.c: columns in the
 * given order, each takes the smallest colour no column sharing a row with
 * it has (checked on the dense 0/1 matrix). */
static int reference_greedy(int n, const int *rp, const int *ci, const int *order, int *color)
{
    unsigned char *a = calloc((size_t)n * n, 1), *used = malloc((size_t)n + 1);
    for (int i = 0; i < n; i++)
        for (int e = rp[i]; e < rp[i + 1]; e++) a[(size_t)i * n + ci[e]] = 1;
    for (int j = 0; j < n; j++) color[j] = -1;
    int nc = 0;
    for (int x = 0; x < n; x++) {
        int j = order[x];
        memset(used, 0, (size_t)n + 1);
        for (int i = 0; i < n; i++)
            if (a[(size_t)i * n + j])
                for (int k = 0; k < n; k++)
                    if (k != j && a[(size_t)i * n + k] && color[k] >= 0) used[color[k]] = 1;
        int c = 0;
        while (used[c]) c++;
        color[j] = c;
        if (c + 1 > nc) nc = c + 1;
    }
    free(a);
    free(used);
    return nc;
}

/* One pass of `order` equals the reference greedy pass in column order ord. */
static void check_one_pass(int n, const int *rp, const int *ci, sv_sparse_color_order order, const int *ord)
{
    sv_sparse_color_options o;
    sv_sparse_color_options_default(&o);
    o.order = order;
    sv_sparse_coloring *c = NULL;
    int *ref = malloc((size_t)n * sizeof *ref);
    assert_int_equal(sv_sparse_color_csr(NULL, n, rp, ci, &o, &c), SV_OK);
    assert_int_equal(sv_sparse_coloring_count(c), reference_greedy(n, rp, ci, ord, ref));
    assert_memory_equal(sv_sparse_coloring_colors(c), ref, (size_t)n * sizeof *ref);
    sv_sparse_coloring_destroy(c);
    free(ref);
}

/* The single orderings are exactly one greedy pass: in column order, and by
 * decreasing entries per column with ties in column order (a stable sort). */
static void test_single_orderings(void **state)
{
    (void)state;
    sv_test_rng rng;
    sv_test_rng_seed(&rng, 17);
    for (int t = 0; t < 40; t++) {
        int *rp, *ci, n = random_csr(&rng, 40, 1 + t % 5, &rp, &ci);
        int *order = malloc((size_t)n * sizeof *order), *cnt = calloc((size_t)n, sizeof *cnt);
        for (int j = 0; j < n; j++) order[j] = j;
        check_one_pass(n, rp, ci, SV_SPARSE_COLOR_NATURAL, order);
        for (int e = 0; e < rp[n]; e++) cnt[ci[e]]++;
        for (int a = 1; a < n; a++) /* stable insertion sort, decreasing count */
            for (int b = a; b > 0 && cnt[order[b - 1]] < cnt[order[b]]; b--) {
                int s = order[b];
                order[b] = order[b - 1];
                order[b - 1] = s;
            }
        check_one_pass(n, rp, ci, SV_SPARSE_COLOR_COLUMN_COUNT, order);
        free(rp), free(ci), free(order), free(cnt);
    }
}

/* add_diagonal colours exactly what a pattern (which always has its
 * diagonal) gives; a zero-filled options struct is the default; without
 * the diagonal a structure may need fewer colours, and its entry groups are
 * its own entries. */
static void test_csr_structures(void **state)
{
    (void)state;
    sv_test_rng rng;
    sv_test_rng_seed(&rng, 23);
    for (int t = 0; t < 30; t++) {
        int *rp, *ci, n = random_csr(&rng, 60, 1 + t % 4, &rp, &ci);
        sv_sparse_pattern *p = NULL;
        assert_int_equal(sv_sparse_pattern_from_csr(NULL, n, rp, ci, &p), SV_OK);
        sv_sparse_coloring *cp = NULL, *cd = NULL, *cz = NULL, *cg = NULL;
        assert_int_equal(sv_sparse_color(NULL, p, &cp), SV_OK);
        sv_sparse_color_options o;
        sv_sparse_color_options_default(&o);
        o.add_diagonal = 1;
        assert_int_equal(sv_sparse_color_csr(NULL, n, rp, ci, &o, &cd), SV_OK);
        assert_int_equal(sv_sparse_coloring_count(cd), sv_sparse_coloring_count(cp));
        assert_memory_equal(sv_sparse_coloring_colors(cd), sv_sparse_coloring_colors(cp), (size_t)n * sizeof(int));
        sv_sparse_color_options zero;
        memset(&zero, 0, sizeof zero);
        assert_int_equal(sv_sparse_color_csr(NULL, n, sv_sparse_pattern_rowptr(p), sv_sparse_pattern_colind(p),
                                             &zero, &cz),
                         SV_OK);
        assert_memory_equal(sv_sparse_coloring_colors(cz), sv_sparse_coloring_colors(cp), (size_t)n * sizeof(int));
        assert_int_equal(sv_sparse_color_csr(NULL, n, rp, ci, NULL, &cg), SV_OK);
        /* Valid for the structure as given: no row meets a colour twice. */
        const int *col = sv_sparse_coloring_colors(cg);
        for (int i = 0; i < n; i++)
            for (int e = rp[i]; e < rp[i + 1]; e++)
                for (int f = rp[i]; f < e; f++) assert_int_not_equal(col[ci[e]], col[ci[f]]);
        /* Every entry of the structure as given is recovered, in its order. */
        double *jv = malloc((size_t)n * sizeof *jv), *vals = malloc(((size_t)rp[n] + 1) * sizeof *vals);
        for (int e = 0; e < rp[n]; e++) vals[e] = -1;
        for (int i = 0; i < n; i++) jv[i] = 10.0 * i;
        for (int k = 0; k < sv_sparse_coloring_count(cg); k++) sv_sparse_recover_color_values(cg, k, jv, NULL, vals);
        for (int i = 0; i < n; i++)
            for (int e = rp[i]; e < rp[i + 1]; e++) assert_true(vals[e] == 10.0 * i);
        free(jv), free(vals), free(rp), free(ci);
        sv_sparse_coloring_destroy(cp);
        sv_sparse_coloring_destroy(cd);
        sv_sparse_coloring_destroy(cz);
        sv_sparse_coloring_destroy(cg);
        sv_sparse_pattern_destroy(p);
    }
    /* An exchange of pairs, (0, 1), (1, 0), (2, 3), (3, 2): one colour as
     * given (no two columns share a row), two with the diagonal. */
    int rp[5] = {0, 1, 2, 3, 4}, ci[4] = {1, 0, 3, 2};
    sv_sparse_coloring *c = NULL;
    assert_int_equal(sv_sparse_color_csr(NULL, 4, rp, ci, NULL, &c), SV_OK);
    assert_int_equal(sv_sparse_coloring_count(c), 1);
    sv_sparse_coloring_destroy(c);
    sv_sparse_color_options o;
    sv_sparse_color_options_default(&o);
    o.add_diagonal = 1;
    assert_int_equal(sv_sparse_color_csr(NULL, 4, rp, ci, &o, &c), SV_OK);
    assert_int_equal(sv_sparse_coloring_count(c), 2);
    sv_sparse_coloring_destroy(c);
}

/* Scaled recovery divides by the column's increment: J_ij = jv_i / h_j. */
static void test_recover_scaled(void **state)
{
    (void)state;
    sv_sparse_pattern *p = tp_tridiagonal(7);
    sv_sparse_coloring *c = NULL;
    assert_int_equal(sv_sparse_color(NULL, p, &c), SV_OK);
    const int *rp = sv_sparse_pattern_rowptr(p), *ci = sv_sparse_pattern_colind(p);
    double h[7], jv[7], vals[32];
    for (int j = 0; j < 7; j++) h[j] = 0.5 + j;
    for (int i = 0; i < 7; i++) jv[i] = 3.0 * (i + 1);
    for (int k = 0; k < sv_sparse_coloring_count(c); k++) sv_sparse_recover_color_values(c, k, jv, h, vals);
    for (int i = 0; i < 7; i++)
        for (int e = rp[i]; e < rp[i + 1]; e++) assert_true(vals[e] == jv[i] / h[ci[e]]);
    sv_sparse_coloring_destroy(c);
    sv_sparse_pattern_destroy(p);
}

static void test_csr_rejects(void **state)
{
    (void)state;
    int rp[3] = {0, 1, 2}, ci[2] = {0, 1}, bad_ci[2] = {0, 2}, bad_rp[3] = {0, 2, 1};
    sv_sparse_coloring *c = NULL;
    sv_sparse_color_options o;
    sv_sparse_color_options_default(&o);
    o.order = (sv_sparse_color_order)7;
    assert_int_equal(sv_sparse_color_csr(NULL, 2, rp, ci, &o, &c), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "order = 7"));
    sv_sparse_color_options_default(&o);
    o.add_diagonal = 2;
    assert_int_equal(sv_sparse_color_csr(NULL, 2, rp, ci, &o, &c), SV_ERR_ARG);
    assert_int_equal(sv_sparse_color_csr(NULL, 2, rp, bad_ci, NULL, &c), SV_ERR_PATTERN);
    assert_non_null(strstr(sv_last_error(), "colind[1] = 2"));
    assert_int_equal(sv_sparse_color_csr(NULL, 2, bad_rp, ci, NULL, &c), SV_ERR_PATTERN);
    assert_int_equal(sv_sparse_color_csr(NULL, 0, rp, ci, NULL, &c), SV_ERR_ARG);
    assert_int_equal(sv_sparse_color_csr(NULL, 2, NULL, ci, NULL, &c), SV_ERR_ARG);
    assert_null(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_and_bounded),
        cmocka_unit_test(test_known_counts),
        cmocka_unit_test(test_dense_every_column_own_colour),
        cmocka_unit_test(test_check_rejects),
        cmocka_unit_test(test_recovery),
        cmocka_unit_test(test_single_orderings),
        cmocka_unit_test(test_csr_structures),
        cmocka_unit_test(test_recover_scaled),
        cmocka_unit_test(test_csr_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
