/* Driver for tests/tools/test_codegen.sh: links a kernel table written by
 * `solvent codegen` (symbol gen_kernels) and checks it against the
 * table-driven kernels (bit for bit) and against the residual of the
 * solved system (the same acceptance as the library's own tests).
 * usage: driver PATTERN.mtx ORDERING(amd|natural)   exit 0 = pass */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solvent/sparse.h"

extern const sv_sparse_kernels gen_kernels;

static unsigned long long rng = 88172645463325252ULL;
static double uni(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0 * 2 - 1;
}

#define FAIL(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); return 1; } while (0)

int main(int argc, char **argv)
{
    if (argc != 3) FAIL("usage: driver PATTERN ORDERING");
    sv_sparse_pattern *p = NULL;
    sv_sparse_lu *lu = NULL;
    sv_sparse_ordering ord = strcmp(argv[2], "natural") ? SV_SPARSE_ORDER_AMD : SV_SPARSE_ORDER_NATURAL;
    if (sv_sparse_pattern_read_mm(NULL, argv[1], &p) || sv_sparse_lu_analyse(NULL, p, ord, &lu))
        FAIL("%s", sv_last_error());
    int n = sv_sparse_pattern_n(p), m = sv_sparse_pattern_nnz(p), nnz = sv_sparse_lu_nnz(lu);
    const int *rp = sv_sparse_pattern_rowptr(p), *ci = sv_sparse_pattern_colind(p);
    double *v = malloc((size_t)m * sizeof *v);
    for (int i = 0; i < n; i++)
        for (int e = rp[i]; e < rp[i + 1]; e++) v[e] = uni();
    double shift = 0;
    for (int e = 0; e < m; e++) shift += fabs(v[e]);
    shift = shift / n + 1.0;
    enum { W = 8 };
    double *b1 = malloc((size_t)nnz * sizeof *b1), *b2 = malloc((size_t)nnz * sizeof *b2);
    double *r = malloc((size_t)n * W * sizeof *r), *x1 = malloc((size_t)n * W * sizeof *x1);
    double *x2 = malloc((size_t)n * W * sizeof *x2), *wk = malloc((size_t)n * W * sizeof *wk);
    double *bb1 = malloc((size_t)nnz * W * sizeof *bb1), *bb2 = malloc((size_t)nnz * W * sizeof *bb2);
    for (int i = 0; i < n * W; i++) r[i] = uni();
    for (int pass = 0; pass < 2; pass++) {
        double *b = pass ? b2 : b1, *x = pass ? x2 : x1, *bb = pass ? bb2 : bb1;
        if (pass && sv_sparse_lu_use_kernels(lu, &gen_kernels)) FAIL("use_kernels: %s", sv_last_error());
        sv_sparse_lu_load_shifted(lu, v, shift, b);
        if (sv_sparse_lu_factor(lu, b, NULL)) FAIL("%s", sv_last_error());
        sv_sparse_lu_solve(lu, b, r, x, wk);
        for (int w = 0; w < W; w++) sv_sparse_lu_load_shifted_lane(lu, W, w, v, shift + w, bb);
        if (sv_sparse_lu_factor_batch(lu, W, bb, NULL)) FAIL("%s", sv_last_error());
    }
    if (memcmp(b1, b2, (size_t)nnz * sizeof *b1) || memcmp(x1, x2, (size_t)n * sizeof *x1))
        FAIL("generated factor/solve differ from the table-driven kernels");
    if (memcmp(bb1, bb2, (size_t)nnz * W * sizeof *bb1)) FAIL("generated batched factor differs");
    /* Residual of (shift·I − J) x = r. */
    double res = 0, xm = 0;
    for (int i = 0; i < n; i++) {
        double s = shift * x2[i];
        for (int e = rp[i]; e < rp[i + 1]; e++) s -= v[e] * x2[ci[e]];
        res = fmax(res, fabs(s - r[i]));
        xm = fmax(xm, fabs(x2[i]));
    }
    if (!(res <= 1e-12 * (shift * xm + 1))) FAIL("residual %g too large", res);
    printf("ok n=%d slots=%d residual=%.2e\n", n, nnz, res);
    return 0;
}
