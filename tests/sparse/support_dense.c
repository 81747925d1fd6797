/* Dense references for the sparse tests: random diagonally dominant values
 * on a pattern, the dense matrix they stand for, and LAPACK's LU of it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>

#include "sparse_support.h"

double *ts_random_values(const sv_sparse_pattern *p, sv_test_rng *rng)
{
    int n = sv_sparse_pattern_n(p), nnz = sv_sparse_pattern_nnz(p);
    const int *rp = sv_sparse_pattern_rowptr(p), *ci = sv_sparse_pattern_colind(p);
    double *v = malloc((size_t)nnz * sizeof *v);
    double *rs = calloc((size_t)n, sizeof *rs), *cs = calloc((size_t)n, sizeof *cs);
    for (int i = 0; i < n; i++)
        for (int e = rp[i]; e < rp[i + 1]; e++) {
            v[e] = sv_test_uniform(rng);
            if (ci[e] != i) {
                rs[i] += fabs(v[e]);
                cs[ci[e]] += fabs(v[e]);
            }
        }
    /* Dominant by rows and by columns: LAPACK's partial pivoting then keeps
     * the diagonal, so its factors are the unpivoted ones. */
    for (int i = 0; i < n; i++)
        for (int e = rp[i]; e < rp[i + 1]; e++)
            if (ci[e] == i) v[e] = (v[e] < 0 ? -1 : 1) * (rs[i] + cs[i] + 1.0 + fabs(v[e]));
    free(rs);
    free(cs);
    return v;
}

double *ts_dense(const sv_sparse_pattern *p, const double *values)
{
    int n = sv_sparse_pattern_n(p);
    const int *rp = sv_sparse_pattern_rowptr(p), *ci = sv_sparse_pattern_colind(p);
    double *a = calloc((size_t)n * n, sizeof *a);
    for (int i = 0; i < n; i++)
        for (int e = rp[i]; e < rp[i + 1]; e++) a[(size_t)i * n + ci[e]] = values[e];
    return a;
}

double *ts_lapack_lu_permuted(const sv_sparse_lu *lu, const double *a)
{
    int n = sv_sparse_lu_n(lu);
    const int *perm = sv_sparse_lu_perm(lu);
    double *f = malloc((size_t)n * n * sizeof *f);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) f[(size_t)i * n + j] = a[(size_t)perm[i] * n + perm[j]];
    lapack_int *ipiv = malloc((size_t)n * sizeof *ipiv);
    lapack_int info = LAPACKE_dgetrf(LAPACK_ROW_MAJOR, n, n, f, n, ipiv);
    assert_int_equal(info, 0);
    for (int i = 0; i < n; i++) assert_int_equal(ipiv[i], i + 1);
    free(ipiv);
    return f;
}

void ts_lapack_solve(int n, const double *a, const double *b, double *x)
{
    double *f = malloc((size_t)n * n * sizeof *f);
    memcpy(f, a, (size_t)n * n * sizeof *f);
    memcpy(x, b, (size_t)n * sizeof *x);
    lapack_int *ipiv = malloc((size_t)n * sizeof *ipiv);
    assert_int_equal(LAPACKE_dgetrf(LAPACK_ROW_MAJOR, n, n, f, n, ipiv), 0);
    assert_int_equal(LAPACKE_dgetrs(LAPACK_ROW_MAJOR, 'N', n, 1, f, n, ipiv, x, 1), 0);
    free(ipiv);
    free(f);
}
