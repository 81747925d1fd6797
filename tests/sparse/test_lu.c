/* Sparse LU against dense LAPACK: factors slot by slot, exactness of the
 * symbolic pattern, solves, loading, pivot failures, bad input. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sparse_support.h"

typedef sv_sparse_pattern *(*maker)(void);
static sv_sparse_pattern *mk_tri(void) { return tp_tridiagonal(30); }
static sv_sparse_pattern *mk_btri(void) { return tp_block_tridiagonal(6, 4); }
static sv_sparse_pattern *mk_bruss(void) { return tp_brusselator2d(4); }
static sv_sparse_pattern *mk_rand(void) { return tp_random(60, 3, 42); }
static sv_sparse_pattern *mk_rand2(void) { return tp_random(40, 6, 7); }
static sv_sparse_pattern *mk_dense(void)
{
    sv_sparse_pattern *p = NULL;
    assert_int_equal(sv_sparse_pattern_dense(NULL, 12, &p), SV_OK);
    return p;
}
static sv_sparse_pattern *mk_one(void)
{
    sv_sparse_pattern *p = NULL;
    assert_int_equal(sv_sparse_pattern_from_coo(NULL, 1, 0, NULL, NULL, &p), SV_OK);
    return p;
}
static const maker makers[] = {mk_tri,          mk_btri,     mk_bruss, mk_rand,  mk_rand2, mk_dense,
                               tp_eb50_declared, tp_eb50_true, tp_pollu, tp_hires, mk_one};
#define NMAKERS (int)(sizeof makers / sizeof makers[0])

/* Our factors slot by slot against LAPACK's unpivoted factors of P·A·Pᵀ;
 * every position outside the slots must be exactly zero in LAPACK's
 * factors and every slot nonzero: the symbolic pattern is exact. */
static void check_factors(const sv_sparse_pattern *p, sv_sparse_ordering ord, sv_test_rng *rng)
{
    sv_sparse_lu *lu = NULL;
    assert_int_equal(sv_sparse_lu_analyse(NULL, p, ord, &lu), SV_OK);
    int n = sv_sparse_lu_n(lu), nnz = sv_sparse_lu_nnz(lu);
    const int *rp = sv_sparse_lu_rowptr(lu), *ci = sv_sparse_lu_colind(lu);
    double *v = ts_random_values(p, rng);
    double *a = ts_dense(p, v);
    double *f = ts_lapack_lu_permuted(lu, a);
    double *buf = malloc((size_t)nnz * sizeof *buf);
    sv_sparse_lu_load(lu, v, buf);
    assert_int_equal(sv_sparse_lu_factor(lu, buf, NULL), SV_OK);
    char *is_slot = calloc((size_t)n * n, 1);
    double umax = 0;
    for (int x = 0; x < n * n; x++) umax = fmax(umax, fabs(f[x]));
    for (int i = 0; i < n; i++) {
        for (int s = rp[i]; s < rp[i + 1]; s++) {
            int j = ci[s];
            is_slot[(size_t)i * n + j] = 1;
            double ref = f[(size_t)i * n + j];
            assert_true(ref != 0.0); /* no slot the elimination does not touch */
            if (j == i)
                sv_assert_close(buf[s], 1.0 / ref, 1e-12, 0);
            else
                sv_assert_close(buf[s], ref, 1e-12, umax);
        }
    }
    for (int x = 0; x < n * n; x++)
        if (!is_slot[x]) assert_true(f[x] == 0.0); /* none missing */
    /* Solve against dgetrs on the original matrix, x aliasing b. */
    double *b = malloc((size_t)n * sizeof *b), *xr = malloc((size_t)n * sizeof *xr);
    double *xs = malloc((size_t)n * sizeof *xs), *w = malloc((size_t)n * sizeof *w);
    for (int i = 0; i < n; i++) b[i] = sv_test_uniform(rng);
    ts_lapack_solve(n, a, b, xr);
    memcpy(xs, b, (size_t)n * sizeof *xs);
    sv_sparse_lu_solve(lu, buf, xs, xs, w);
    double xm = 0;
    for (int i = 0; i < n; i++) xm = fmax(xm, fabs(xr[i]));
    for (int i = 0; i < n; i++) sv_assert_close(xs[i], xr[i], 1e-12, xm);
    free(b), free(xr), free(xs), free(w), free(is_slot), free(buf), free(f), free(a), free(v);
    sv_sparse_lu_destroy(lu);
}

static void test_factors_match_lapack(void **state)
{
    (void)state;
    sv_test_rng rng;
    sv_test_rng_seed(&rng, 11);
    for (int m = 0; m < NMAKERS; m++) {
        sv_sparse_pattern *p = makers[m]();
        assert_non_null(p);
        check_factors(p, SV_SPARSE_ORDER_AMD, &rng);
        check_factors(p, SV_SPARSE_ORDER_NATURAL, &rng);
        sv_sparse_pattern_destroy(p);
    }
}

/* docs/ode.md, EB-50: declared pattern 238 entries -> 238 slots with AMD (zero fill),
 * 420 in natural order; true pattern 175 slots -> 196 with AMD, 325 natural. */
static void test_eb50_fill(void **state)
{
    (void)state;
    sv_sparse_pattern *d = tp_eb50_declared(), *t = tp_eb50_true();
    assert_int_equal(sv_sparse_pattern_nnz(d), 238);
    assert_int_equal(sv_sparse_pattern_nnz(t), 175);
    sv_sparse_lu *lu = NULL;
    assert_int_equal(sv_sparse_lu_analyse(NULL, d, SV_SPARSE_ORDER_AMD, &lu), SV_OK);
    assert_int_equal(sv_sparse_lu_nnz(lu), 238);
    /* Hierarchy peeling: zero fill requires each tail to be eliminated from
     * its free end inwards and before its parent in the core. */
    const int *perm = sv_sparse_lu_perm(lu);
    int pos[50];
    for (int k = 0; k < 50; k++) pos[perm[k]] = k;
    const int parent[3] = {6, 20, 36}, first[3] = {7, 21, 37};
    for (int tl = 0; tl < 3; tl++) {
        for (int l = 0; l < 12; l++) assert_true(pos[first[tl] + l + 1] < pos[first[tl] + l]);
        assert_true(pos[first[tl]] < pos[parent[tl]]);
    }
    sv_sparse_lu_destroy(lu);
    assert_int_equal(sv_sparse_lu_analyse(NULL, d, SV_SPARSE_ORDER_NATURAL, &lu), SV_OK);
    assert_int_equal(sv_sparse_lu_nnz(lu), 420);
    sv_sparse_lu_destroy(lu);
    assert_int_equal(sv_sparse_lu_analyse(NULL, t, SV_SPARSE_ORDER_AMD, &lu), SV_OK);
    assert_int_equal(sv_sparse_lu_nnz(lu), 196);
    sv_sparse_lu_destroy(lu);
    assert_int_equal(sv_sparse_lu_analyse(NULL, t, SV_SPARSE_ORDER_NATURAL, &lu), SV_OK);
    assert_int_equal(sv_sparse_lu_nnz(lu), 325);
    sv_sparse_lu_destroy(lu);
    sv_sparse_pattern_destroy(d);
    sv_sparse_pattern_destroy(t);
}

/* Known sizes: tridiagonal has no fill; the anchors' table gives the AMD
 * fill of the 5 × 5 block tridiagonal (none) and of POLLU's pattern. */
static void test_known_nnz(void **state)
{
    (void)state;
    sv_sparse_pattern *p = tp_tridiagonal(100);
    sv_sparse_lu *lu = NULL;
    assert_int_equal(sv_sparse_pattern_nnz(p), 298);
    assert_int_equal(sv_sparse_lu_analyse(NULL, p, SV_SPARSE_ORDER_NATURAL, &lu), SV_OK);
    assert_int_equal(sv_sparse_lu_nnz(lu), 298);
    /* 2 multiply-adds per row in factor+solve besides the slots: n-1 updates,
     * n-1 L multiplies, nnz for the two substitutions. */
    assert_int_equal(sv_sparse_lu_flops(lu), 99 + 99 + 298);
    sv_sparse_lu_destroy(lu);
    sv_sparse_pattern_destroy(p);
    p = tp_block_tridiagonal(100, 5);
    assert_int_equal(sv_sparse_pattern_nnz(p), 7450);
    assert_int_equal(sv_sparse_lu_analyse(NULL, p, SV_SPARSE_ORDER_NATURAL, &lu), SV_OK);
    assert_int_equal(sv_sparse_lu_nnz(lu), 7450);
    sv_sparse_lu_destroy(lu);
    sv_sparse_pattern_destroy(p);
    p = tp_pollu();
    assert_int_equal(sv_sparse_pattern_nnz(p), 86);
    sv_sparse_pattern_destroy(p);
    p = tp_hires();
    assert_int_equal(sv_sparse_pattern_nnz(p), 25);
    sv_sparse_pattern_destroy(p);
    p = tp_brusselator2d(8);
    assert_int_equal(sv_sparse_pattern_nnz(p), 768);
    sv_sparse_pattern_destroy(p);
}

static void test_load_shifted(void **state)
{
    (void)state;
    sv_test_rng rng;
    sv_test_rng_seed(&rng, 3);
    sv_sparse_pattern *p = tp_eb50_true();
    sv_sparse_lu *lu = NULL;
    assert_int_equal(sv_sparse_lu_analyse(NULL, p, SV_SPARSE_ORDER_AMD, &lu), SV_OK);
    int n = 50, nnz = sv_sparse_lu_nnz(lu);
    const int *rp = sv_sparse_lu_rowptr(lu), *ci = sv_sparse_lu_colind(lu), *perm = sv_sparse_lu_perm(lu);
    double *v = ts_random_values(p, &rng), *a = ts_dense(p, v);
    double *buf = malloc((size_t)nnz * sizeof *buf);
    for (int s = 0; s < nnz; s++) buf[s] = 99; /* stale values must be cleared */
    double shift = 7.25;
    sv_sparse_lu_load_shifted(lu, v, shift, buf);
    for (int i = 0; i < n; i++)
        for (int s = rp[i]; s < rp[i + 1]; s++) {
            int oi = perm[i], oj = perm[ci[s]];
            double m = (oi == oj ? shift : 0.0) - a[(size_t)oi * n + oj];
            assert_true(buf[s] == m);
        }
    const int *ds = sv_sparse_lu_diag_slot(lu);
    for (int i = 0; i < n; i++) assert_true(buf[ds[i]] == shift - a[(size_t)i * n + i]);
    const int *es = sv_sparse_lu_entry_slot(lu);
    const int *prp = sv_sparse_pattern_rowptr(p), *pci = sv_sparse_pattern_colind(p);
    for (int i = 0; i < n; i++)
        for (int e = prp[i]; e < prp[i + 1]; e++) {
            int s = es[e];
            assert_int_equal(perm[ci[s]], pci[e]);
            assert_true(s >= rp[0]);
        }
    free(buf), free(v), free(a);
    sv_sparse_lu_destroy(lu);
    sv_sparse_pattern_destroy(p);
}

/* A zero pivot: the flag names the row, the result carries inf/NaN. */
static void test_zero_pivot(void **state)
{
    (void)state;
    int r[] = {0, 1, 2, 2}, c[] = {1, 0, 2, 1};
    sv_sparse_pattern *p = NULL;
    assert_int_equal(sv_sparse_pattern_from_coo(NULL, 3, 4, r, c, &p), SV_OK);
    sv_sparse_lu *lu = NULL;
    assert_int_equal(sv_sparse_lu_analyse(NULL, p, SV_SPARSE_ORDER_NATURAL, &lu), SV_OK);
    double v[7];
    for (int e = 0; e < sv_sparse_pattern_nnz(p); e++) v[e] = 1.0;
    v[sv_sparse_pattern_find(p, 0, 0)] = 0.0;
    double buf[16], b[3] = {1, 2, 3}, x[3], w[3];
    sv_sparse_lu_load(lu, v, buf);
    int info = -1;
    assert_int_equal(sv_sparse_lu_factor(lu, buf, &info), SV_ERR_SINGULAR);
    assert_int_equal(info, 1);
    assert_non_null(strstr(sv_last_error(), "row 0 of the permuted matrix"));
    sv_sparse_lu_solve(lu, buf, b, x, w);
    int bad = 0;
    for (int i = 0; i < 3; i++) bad += !isfinite(x[i]);
    assert_true(bad > 0);
    /* A NaN entry is flagged at the first pivot it reaches. */
    for (int e = 0; e < sv_sparse_pattern_nnz(p); e++) v[e] = 1.0 + e;
    v[sv_sparse_pattern_find(p, 2, 2)] = NAN;
    sv_sparse_lu_load(lu, v, buf);
    assert_int_equal(sv_sparse_lu_factor(lu, buf, &info), SV_ERR_SINGULAR);
    assert_int_equal(info, 3);
    /* A good factorisation reports SV_OK and info 0. */
    for (int e = 0; e < sv_sparse_pattern_nnz(p); e++) v[e] = 1.0 + e;
    v[sv_sparse_pattern_find(p, 0, 0)] = 5.0;
    sv_sparse_lu_load(lu, v, buf);
    assert_int_equal(sv_sparse_lu_factor(lu, buf, &info), SV_OK);
    assert_int_equal(info, 0);
    sv_sparse_lu_destroy(lu);
    sv_sparse_pattern_destroy(p);
}

static void test_pattern_construction(void **state)
{
    (void)state;
    /* Duplicates merged, columns sorted, diagonal added. */
    int r[] = {0, 0, 0, 2, 2, 1}, c[] = {2, 2, 1, 0, 0, 1};
    sv_sparse_pattern *p = NULL;
    assert_int_equal(sv_sparse_pattern_from_coo(NULL, 3, 6, r, c, &p), SV_OK);
    assert_int_equal(sv_sparse_pattern_nnz(p), 6); /* (0,0),(0,1),(0,2),(1,1),(2,0),(2,2) */
    const int *rp = sv_sparse_pattern_rowptr(p), *ci = sv_sparse_pattern_colind(p);
    int erp[] = {0, 3, 4, 6}, eci[] = {0, 1, 2, 1, 0, 2};
    assert_memory_equal(rp, erp, sizeof erp);
    assert_memory_equal(ci, eci, sizeof eci);
    assert_int_equal(sv_sparse_pattern_find(p, 2, 0), 4);
    assert_int_equal(sv_sparse_pattern_find(p, 1, 0), -1);
    assert_int_equal(sv_sparse_pattern_find(p, 5, 0), -1);
    /* The same through CSR (unsorted, with a duplicate) and through a mask. */
    int crp[] = {0, 3, 3, 5}, cci[] = {2, 1, 2, 0, 0};
    sv_sparse_pattern *q = NULL;
    assert_int_equal(sv_sparse_pattern_from_csr(NULL, 3, crp, cci, &q), SV_OK);
    assert_memory_equal(sv_sparse_pattern_rowptr(q), erp, sizeof erp);
    assert_memory_equal(sv_sparse_pattern_colind(q), eci, sizeof eci);
    sv_sparse_pattern_destroy(q);
    unsigned char mask[9] = {0, 1, 1, 0, 0, 0, 1, 0, 0};
    assert_int_equal(sv_sparse_pattern_from_mask(NULL, 3, mask, &q), SV_OK);
    assert_memory_equal(sv_sparse_pattern_colind(q), eci, sizeof eci);
    sv_sparse_pattern_destroy(q);
    sv_sparse_pattern_destroy(p);
}

static void test_bad_patterns(void **state)
{
    (void)state;
    sv_sparse_pattern *p = (sv_sparse_pattern *)1;
    int r[] = {0, 3}, c[] = {1, 0};
    assert_int_equal(sv_sparse_pattern_from_coo(NULL, 3, 2, r, c, &p), SV_ERR_PATTERN);
    assert_null(p);
    assert_non_null(strstr(sv_last_error(), "(3, 0)"));
    int rn[] = {0, -1};
    assert_int_equal(sv_sparse_pattern_from_coo(NULL, 3, 2, rn, c, &p), SV_ERR_PATTERN);
    assert_int_equal(sv_sparse_pattern_from_coo(NULL, 0, 0, NULL, NULL, &p), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "n = 0"));
    assert_int_equal(sv_sparse_pattern_from_coo(NULL, -4, 0, NULL, NULL, &p), SV_ERR_ARG);
    assert_int_equal(sv_sparse_pattern_from_coo(NULL, 3, -1, r, c, &p), SV_ERR_ARG);
    assert_int_equal(sv_sparse_pattern_from_coo(NULL, 3, 2, NULL, c, &p), SV_ERR_ARG);
    assert_int_equal(sv_sparse_pattern_from_coo(NULL, 3, 2, r, c, NULL), SV_ERR_ARG);
    int brp[] = {0, 2, 1, 3}, bci[] = {0, 1, 2};
    assert_int_equal(sv_sparse_pattern_from_csr(NULL, 3, brp, bci, &p), SV_ERR_PATTERN);
    assert_non_null(strstr(sv_last_error(), "rowptr[2]"));
    int brp2[] = {1, 2, 2, 3};
    assert_int_equal(sv_sparse_pattern_from_csr(NULL, 3, brp2, bci, &p), SV_ERR_PATTERN);
    int crp[] = {0, 1, 2, 3}, cci[] = {0, 7, 2};
    assert_int_equal(sv_sparse_pattern_from_csr(NULL, 3, crp, cci, &p), SV_ERR_PATTERN);
    assert_non_null(strstr(sv_last_error(), "colind[1] = 7"));
    assert_int_equal(sv_sparse_pattern_from_csr(NULL, 3, NULL, cci, &p), SV_ERR_ARG);
    assert_int_equal(sv_sparse_pattern_from_mask(NULL, 3, NULL, &p), SV_ERR_ARG);
    assert_int_equal(sv_sparse_pattern_dense(NULL, 0, &p), SV_ERR_ARG);
    sv_sparse_lu *lu = (sv_sparse_lu *)1;
    assert_int_equal(sv_sparse_lu_analyse(NULL, NULL, SV_SPARSE_ORDER_AMD, &lu), SV_ERR_ARG);
    assert_null(lu);
    sv_sparse_pattern *q = tp_tridiagonal(5);
    assert_int_equal(sv_sparse_lu_analyse(NULL, q, (sv_sparse_ordering)9, &lu), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "ordering = 9"));
    sv_sparse_pattern_destroy(q);
}

/* Memory budget: too small a budget is refused with SV_ERR_BUDGET and
 * nothing is leaked. */
static void test_budget(void **state)
{
    (void)state;
    sv_ctx *ctx = NULL;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    sv_sparse_pattern *p = NULL;
    assert_int_equal(sv_sparse_pattern_dense(NULL, 300, &p), SV_OK);
    assert_int_equal(sv_ctx_set_memory_limit(ctx, 100000), SV_OK);
    sv_sparse_lu *lu = NULL;
    /* dense 300: 90000 slots need 360 kB of column indices alone. */
    assert_int_equal(sv_sparse_lu_analyse(ctx, p, SV_SPARSE_ORDER_NATURAL, &lu), SV_ERR_BUDGET);
    assert_null(lu);
    sv_sparse_pattern_destroy(p);
    assert_int_equal(sv_ctx_memory_current(ctx), 0);
    sv_ctx_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_factors_match_lapack),
        cmocka_unit_test(test_eb50_fill),
        cmocka_unit_test(test_known_nnz),
        cmocka_unit_test(test_load_shifted),
        cmocka_unit_test(test_zero_pivot),
        cmocka_unit_test(test_pattern_construction),
        cmocka_unit_test(test_bad_patterns),
        cmocka_unit_test(test_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
