/* Real symmetric products for the terms of the affine model: packed dense
 * (the dense engine's block-column layout) and CSR.
 *
 * These are written here rather than taken from the dense engine because
 * the sweep needs real × real products (A_k·V for the reduced model, the
 * real and imaginary parts of X for residuals): the dense engine's R64
 * product takes complex operands and would double the work. The arithmetic
 * itself is OpenBLAS (dsymm/dgemm per block column). */
#include <omp.h>
#include <string.h>
#include <cblas.h>

#include "sweep_internal.h"


sv_status sv_sweep_packed_matmul(sv_ctx *ctx, int n, int nb, const double *a, int m, const double *x, int ldx,
                                 double *y, int ldy, int accumulate)
{
    if (n <= 0 || m <= 0) return SV_OK;
    int nthr = sv_threads_team();
    int nblk = (n + nb - 1) / nb;
    if (nthr > nblk) nthr = nblk;
    /* Below about a million stored elements one thread streams the matrix
     * faster than a team can be started and synchronised. */
    if ((double)n * n < 2e6) nthr = 1;
    /* Each block column adds to its own rows (diagonal block and the
     * transposed panel) and to every row below (the panel): threads keep
     * private copies of Y and the copies are summed at the end, in thread
     * order. The block columns are dealt out round-robin (static, 1), not
     * dynamically: each copy then sums the same blocks in every run, so the
     * product and everything built on it (refinement, the sweep's choice of
     * frequencies) are the same from run to run. With dynamic scheduling
     * rounding differed between runs, and the adaptive sweep's path with it
     * (6, 7 or 8 exact solves for the same 21-point sweep). */
    size_t ysz = (size_t)n * (size_t)m;
    double *ws = sv_calloc(ctx, (size_t)nthr, ysz * sizeof(double), "packed product workspace");
    if (!ws) return sv_last_status();
    sv_threads_saved section = sv_threads_apply(NULL); /* BLAS on this thread (threads.c) */
#pragma omp parallel num_threads(nthr)
    {
        double *yt = ws + (size_t)omp_get_thread_num() * ysz;
#pragma omp for schedule(static, 1)
        for (int kb = 0; kb < nblk; kb++) {
            int c0 = kb * nb;
            int w = n - c0 < nb ? n - c0 : nb;
            int ld = n - c0;
            int below = ld - w;
            const double *panel = a + sv_dense_packed_block_offset(n, nb, c0 / nb);
            cblas_dsymm(CblasColMajor, CblasLeft, CblasLower, w, m, 1.0, panel, ld, x + c0, ldx, 1.0, yt + c0, n);
            if (below > 0) {
                cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, below, m, w, 1.0, panel + w, ld, x + c0, ldx,
                            1.0, yt + c0 + w, n);
                cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, w, m, below, 1.0, panel + w, ld, x + c0 + w, ldx,
                            1.0, yt + c0, n);
            }
        }
    }
    for (int j = 0; j < m; j++) {
        double *yj = y + (size_t)j * (size_t)ldy;
        if (!accumulate) memset(yj, 0, (size_t)n * sizeof(double));
        for (int t = 0; t < nthr; t++) {
            const double *src = ws + (size_t)t * ysz + (size_t)j * (size_t)n;
            for (int i = 0; i < n; i++) yj[i] += src[i];
        }
    }
    sv_threads_restore(section);
    sv_free(ctx, ws);
    return SV_OK;
}

double sv_sweep_packed_norm_inf(sv_progress_loop *loop, int n, int nb, const double *a)
{
    /* Row sums of |a| over the full symmetric matrix from the lower triangle. */
    double *row = NULL;
    double result = 0.0;
    row = sv_calloc(NULL, (size_t)n, sizeof(double), "norm workspace");
    if (!row) return -1.0;
    for (int c0 = 0; c0 < n; c0 += nb) {
        /* column c0 starts after 1 − (1 − c0/n)² of the entries */
        if (sv_progress_loop_at(loop, 1 - (1 - (double)c0 / n) * (1 - (double)c0 / n))) break;
        int w = n - c0 < nb ? n - c0 : nb;
        int ld = n - c0;
        const double *panel = a + sv_dense_packed_block_offset(n, nb, c0 / nb);
        for (int jj = 0; jj < w; jj++) {
            int j = c0 + jj;
            const double *col = panel + (size_t)jj * (size_t)ld;
            for (int i = j; i < n; i++) {
                double v = col[i - c0];
                v = v < 0 ? -v : v;
                row[i] += v;
                if (i != j) row[j] += v;
            }
        }
    }
    for (int i = 0; i < n; i++)
        if (row[i] > result) result = row[i];
    sv_free(NULL, row);
    return result;
}

void sv_sweep_csr_matmul(int n, const int *rowptr, const int *colind, const double *val, int m, const double *x,
                         int ldx, double *y, int ldy)
{
    for (int j = 0; j < m; j++) {
        const double *xj = x + (size_t)j * (size_t)ldx;
        double *yj = y + (size_t)j * (size_t)ldy;
        for (int i = 0; i < n; i++) {
            double s = 0.0;
            for (int e = rowptr[i]; e < rowptr[i + 1]; e++) s += val[e] * xj[colind[e]];
            yj[i] += s;
        }
    }
}
