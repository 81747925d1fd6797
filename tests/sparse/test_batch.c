/* Batched (slot-major, W lanes) and single-precision kernels: every lane
 * agrees bit for bit with the single-matrix kernel on that lane's matrix;
 * single precision against LAPACK's double solution; several right-hand
 * sides at once against one batched solve each. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sparse_support.h"

static void run_batch(const sv_sparse_pattern *p, int W, sv_test_rng *rng)
{
    sv_sparse_lu *lu = NULL;
    assert_int_equal(sv_sparse_lu_analyse(NULL, p, SV_SPARSE_ORDER_AMD, &lu), SV_OK);
    int n = sv_sparse_lu_n(lu), nnz = sv_sparse_lu_nnz(lu);
    double *bb = malloc((size_t)nnz * W * sizeof *bb), *one = malloc((size_t)nnz * sizeof *one);
    float *fb = malloc((size_t)nnz * W * sizeof *fb), *fone = malloc((size_t)nnz * sizeof *fone);
    double *rhs = malloc((size_t)n * W * sizeof *rhs), *xb = malloc((size_t)n * W * sizeof *xb);
    double *wk = malloc((size_t)n * W * sizeof *wk), *x1 = malloc((size_t)n * sizeof *x1);
    float *frhs = malloc((size_t)n * W * sizeof *frhs), *fxb = malloc((size_t)n * W * sizeof *fxb);
    float *fwk = malloc((size_t)n * W * sizeof *fwk), *fx1 = malloc((size_t)n * sizeof *fx1);
    double **vals = malloc((size_t)W * sizeof *vals);
    double shift = 2.0;
    for (int w = 0; w < W; w++) {
        vals[w] = ts_random_values(p, rng);
        assert_int_equal(sv_sparse_lu_load_shifted_lane(lu, W, w, vals[w], shift, bb), SV_OK);
        assert_int_equal(sv_sparse_lu_load_shifted_lane_f32(lu, W, w, vals[w], shift, fb), SV_OK);
        for (int i = 0; i < n; i++) rhs[(size_t)i * W + w] = frhs[(size_t)i * W + w] = (float)sv_test_uniform(rng);
    }
    /* Whole-batch loads (entry-major values, one shift per lane) write
     * exactly what the per-lane loads wrote. */
    {
        int m = sv_sparse_pattern_nnz(p);
        double *em = malloc((size_t)m * W * sizeof *em), shifts[8];
        for (int w = 0; w < W; w++) {
            shifts[w] = shift;
            for (int e = 0; e < m; e++) em[(size_t)e * W + w] = vals[w][e];
        }
        double *bb2 = malloc((size_t)nnz * W * sizeof *bb2);
        float *fb2 = malloc((size_t)nnz * W * sizeof *fb2);
        assert_int_equal(sv_sparse_lu_load_shifted_batch(lu, W, em, shifts, bb2), SV_OK);
        assert_int_equal(sv_sparse_lu_load_shifted_batch_f32(lu, W, em, shifts, fb2), SV_OK);
        assert_memory_equal(bb2, bb, (size_t)nnz * W * sizeof *bb2);
        assert_memory_equal(fb2, fb, (size_t)nnz * W * sizeof *fb2);
        assert_int_equal(sv_sparse_lu_load_batch(lu, W, em, bb2), SV_OK);
        double *lane = malloc((size_t)nnz * W * sizeof *lane);
        for (int w = 0; w < W; w++) assert_int_equal(sv_sparse_lu_load_lane(lu, W, w, vals[w], lane), SV_OK);
        assert_memory_equal(bb2, lane, (size_t)nnz * W * sizeof *bb2);
        assert_int_equal(sv_sparse_lu_load_batch(lu, 3, em, bb2), SV_ERR_ARG);
        assert_int_equal(sv_sparse_lu_load_shifted_batch(lu, W, em, NULL, bb2), SV_ERR_ARG);
        free(em), free(bb2), free(fb2), free(lane);
    }
    int flags[8] = {9, 9, 9, 9, 9, 9, 9, 9}, fflags[8];
    assert_int_equal(sv_sparse_lu_factor_batch(lu, W, bb, flags), SV_OK);
    assert_int_equal(sv_sparse_lu_factor_batch_f32(lu, W, fb, fflags), SV_OK);
    assert_int_equal(sv_sparse_lu_solve_batch(lu, W, bb, rhs, xb, wk), SV_OK);
    assert_int_equal(sv_sparse_lu_solve_batch_f32(lu, W, fb, frhs, fxb, fwk), SV_OK);
    for (int w = 0; w < W; w++) {
        assert_int_equal(flags[w], 0);
        assert_int_equal(fflags[w], 0);
        /* Lane w against the scalar kernels: bit for bit. */
        sv_sparse_lu_load_shifted(lu, vals[w], shift, one);
        sv_sparse_lu_load_shifted_f32(lu, vals[w], shift, fone);
        assert_int_equal(sv_sparse_lu_factor(lu, one, NULL), SV_OK);
        assert_int_equal(sv_sparse_lu_factor_f32(lu, fone, NULL), SV_OK);
        for (int s = 0; s < nnz; s++) {
            assert_memory_equal(&bb[(size_t)s * W + w], &one[s], sizeof(double));
            assert_memory_equal(&fb[(size_t)s * W + w], &fone[s], sizeof(float));
        }
        double *b1 = malloc((size_t)n * sizeof *b1), *w1 = malloc((size_t)n * sizeof *w1);
        float *fb1 = malloc((size_t)n * sizeof *fb1), *fw1 = malloc((size_t)n * sizeof *fw1);
        for (int i = 0; i < n; i++) b1[i] = rhs[(size_t)i * W + w], fb1[i] = frhs[(size_t)i * W + w];
        sv_sparse_lu_solve(lu, one, b1, x1, w1);
        sv_sparse_lu_solve_f32(lu, fone, fb1, fx1, fw1);
        for (int i = 0; i < n; i++) {
            assert_memory_equal(&xb[(size_t)i * W + w], &x1[i], sizeof(double));
            assert_memory_equal(&fxb[(size_t)i * W + w], &fx1[i], sizeof(float));
        }
        /* Single precision against LAPACK in double: M = shift·I − J. */
        const int *rp = sv_sparse_pattern_rowptr(p), *ci = sv_sparse_pattern_colind(p);
        double *mv = malloc((size_t)sv_sparse_pattern_nnz(p) * sizeof *mv);
        for (int i = 0; i < n; i++)
            for (int e = rp[i]; e < rp[i + 1]; e++) mv[e] = (ci[e] == i ? shift : 0.0) - vals[w][e];
        double *a = ts_dense(p, mv), *xr = malloc((size_t)n * sizeof *xr);
        ts_lapack_solve(n, a, b1, xr);
        double xm = 0;
        for (int i = 0; i < n; i++) xm = fmax(xm, fabs(xr[i]));
        for (int i = 0; i < n; i++) {
            sv_assert_close(x1[i], xr[i], 1e-12, xm);
            sv_assert_close(fx1[i], xr[i], 1e-4, xm);
        }
        free(mv), free(a), free(xr), free(b1), free(w1), free(fb1), free(fw1);
    }
    for (int w = 0; w < W; w++) free(vals[w]);
    free(vals), free(bb), free(one), free(fb), free(fone), free(rhs), free(xb), free(wk), free(x1);
    free(frhs), free(fxb), free(fwk), free(fx1);
    sv_sparse_lu_destroy(lu);
}

static void test_batches_match_single(void **state)
{
    (void)state;
    sv_test_rng rng;
    sv_test_rng_seed(&rng, 21);
    sv_sparse_pattern *ps[] = {tp_eb50_declared(), tp_pollu(), tp_brusselator2d(4), tp_random(70, 4, 8),
                               tp_hires()};
    const int Ws[] = {1, 2, 4, 8};
    for (size_t x = 0; x < sizeof ps / sizeof ps[0]; x++) {
        for (int k = 0; k < 4; k++) run_batch(ps[x], Ws[k], &rng);
        sv_sparse_pattern_destroy(ps[x]);
    }
}

/* Several right-hand sides at once: each solution bit for bit that of its
 * own batched solve, for every group split (1 to 11 right-hand sides), in
 * place too; bad arguments refused. */
static void run_multi(const sv_sparse_pattern *p, int W, sv_test_rng *rng)
{
    sv_sparse_lu *lu = NULL;
    assert_int_equal(sv_sparse_lu_analyse(NULL, p, SV_SPARSE_ORDER_AMD, &lu), SV_OK);
    const int n = sv_sparse_lu_n(lu), nnz = sv_sparse_lu_nnz(lu), maxr = 11;
    const size_t nw = (size_t)n * W;
    double *bb = malloc((size_t)nnz * W * sizeof *bb);
    for (int w = 0; w < W; w++) {
        double *v = ts_random_values(p, rng);
        assert_int_equal(sv_sparse_lu_load_shifted_lane(lu, W, w, v, 2.0, bb), SV_OK);
        free(v);
    }
    assert_int_equal(sv_sparse_lu_factor_batch(lu, W, bb, NULL), SV_OK);
    double *rhs = malloc(maxr * nw * sizeof *rhs), *x = malloc(maxr * nw * sizeof *x);
    double *one = malloc(maxr * nw * sizeof *one), *wk = malloc(maxr * nw * sizeof *wk);
    for (size_t q = 0; q < maxr * nw; q++) rhs[q] = sv_test_uniform(rng) - 0.5;
    for (int r = 0; r < maxr; r++)
        assert_int_equal(sv_sparse_lu_solve_batch(lu, W, bb, rhs + r * nw, one + r * nw, wk), SV_OK);
    for (int nr = 1; nr <= maxr; nr++) {
        memset(x, 0, maxr * nw * sizeof *x);
        assert_int_equal(sv_sparse_lu_solve_batch_multi(lu, W, nr, bb, rhs, x, wk), SV_OK);
        assert_memory_equal(x, one, nr * nw * sizeof *x);
        for (size_t q = nr * nw; q < maxr * nw; q++) assert_true(x[q] == 0); /* nothing beyond nrhs */
    }
    memcpy(x, rhs, maxr * nw * sizeof *x);
    assert_int_equal(sv_sparse_lu_solve_batch_multi(lu, W, maxr, bb, x, x, wk), SV_OK);
    assert_memory_equal(x, one, maxr * nw * sizeof *x);
    assert_int_equal(sv_sparse_lu_solve_batch_multi(lu, W, 0, bb, NULL, NULL, NULL), SV_OK);
    assert_int_equal(sv_sparse_lu_solve_batch_multi(lu, 3, 1, bb, rhs, x, wk), SV_ERR_ARG);
    assert_int_equal(sv_sparse_lu_solve_batch_multi(lu, W, -1, bb, rhs, x, wk), SV_ERR_ARG);
    assert_int_equal(sv_sparse_lu_solve_batch_multi(lu, W, 2, bb, rhs, x, NULL), SV_ERR_ARG);
    free(bb), free(rhs), free(x), free(one), free(wk);
    sv_sparse_lu_destroy(lu);
}

static void test_multi_matches_batch(void **state)
{
    (void)state;
    sv_test_rng rng;
    sv_test_rng_seed(&rng, 23);
    sv_sparse_pattern *ps[] = {tp_pollu(), tp_brusselator2d(4), tp_random(40, 4, 6), tp_hires()};
    const int Ws[] = {1, 2, 4, 8};
    for (size_t x = 0; x < sizeof ps / sizeof ps[0]; x++) {
        for (int k = 0; k < 4; k++) run_multi(ps[x], Ws[k], &rng);
        sv_sparse_pattern_destroy(ps[x]);
    }
}

/* A bad pivot in one lane is flagged in that lane only. */
static void test_lane_flags(void **state)
{
    (void)state;
    sv_sparse_pattern *p = tp_tridiagonal(5);
    sv_sparse_lu *lu = NULL;
    assert_int_equal(sv_sparse_lu_analyse(NULL, p, SV_SPARSE_ORDER_NATURAL, &lu), SV_OK);
    int nnz = sv_sparse_lu_nnz(lu), W = 4;
    double *buf = malloc((size_t)nnz * W * sizeof *buf);
    double v[13];
    for (int w = 0; w < W; w++) {
        for (int e = 0; e < 13; e++) v[e] = 0.1;
        for (int i = 0; i < 5; i++) v[sv_sparse_pattern_find(p, i, i)] = 4.0;
        if (w == 2) v[sv_sparse_pattern_find(p, 3, 3)] = INFINITY;
        assert_int_equal(sv_sparse_lu_load_lane(lu, W, w, v, buf), SV_OK);
    }
    int flags[4];
    assert_int_equal(sv_sparse_lu_factor_batch(lu, W, buf, flags), SV_OK);
    assert_int_equal(flags[0], 0);
    assert_int_equal(flags[1], 0);
    assert_int_equal(flags[2], 4);
    assert_int_equal(flags[3], 0);
    assert_int_equal(sv_sparse_lu_factor_batch(lu, 3, buf, flags), SV_ERR_ARG);
    assert_int_equal(sv_sparse_lu_factor_batch(lu, 4, NULL, flags), SV_ERR_ARG);
    assert_int_equal(sv_sparse_lu_load_lane(lu, 4, 4, v, buf), SV_ERR_ARG);
    free(buf);
    sv_sparse_lu_destroy(lu);
    sv_sparse_pattern_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batches_match_single),
        cmocka_unit_test(test_multi_matches_batch),
        cmocka_unit_test(test_lane_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
