/* Y = A·X for a packed symmetric matrix, by block columns: the diagonal
 * block through symm (which reads only its lower triangle, the rest being
 * workspace), the panel below it twice through gemm (once as stored, once
 * transposed for the symmetric upper part). Level-3 BLAS keeps this near
 * memory speed for one right-hand side and near gemm speed for many. The
 * complex products are written once in matmul_tmpl.h and included here per
 * precision; the real matrix's split product is below. */
#include <cblas.h>
#include <omp.h>
#include <string.h>

#include "dense_internal.h"

/* Below this order a product runs on one thread: too little work to share. */
#define SV_MATMUL_SERIAL_N 256

#define T double complex
#define FN(x) x##_z
#define BLAS(x) cblas_z##x
#include "matmul_tmpl.h"
#undef BLAS
#undef FN
#undef T

#define T float complex
#define FN(x) x##_c
#define BLAS(x) cblas_c##x
#include "matmul_tmpl.h"
#undef BLAS
#undef FN
#undef T

/* Real matrix times complex X: split X into real and imaginary parts (2p real
 * columns), multiply with real BLAS, and join again. */
static sv_status matmul_d(const sv_dense_sym *a, int p, const double complex *x, int ldx, double complex *y, int ldy)
{
    const int n = a->n, nb = a->nb;
    size_t cols = 2 * (size_t)p, bytes;
    if (sv_size_mul((size_t)n * cols, sizeof(double), &bytes)) return sv_last_status();
    double *xr = sv_alloc(NULL, bytes, "real-split X");
    double *yr = sv_calloc(NULL, (size_t)n * cols, sizeof(double), "real-split Y");
    if (!xr || !yr) {
        sv_free(NULL, xr);
        sv_free(NULL, yr);
        return sv_last_status();
    }
    for (int j = 0; j < p; j++)
        for (int i = 0; i < n; i++) {
            xr[(size_t)(2 * j) * n + i] = creal(x[(size_t)j * ldx + i]);
            xr[(size_t)(2 * j + 1) * n + i] = cimag(x[(size_t)j * ldx + i]);
        }
    const double *d = a->data;
    int q = (int)cols;
    for (int c0 = 0, k = 0; c0 < n; c0 += nb, k++) {
        int w = n - c0 < nb ? n - c0 : nb, ld = n - c0, m2 = n - c0 - w;
        const double *blk = d + sv_dense_packed_block_offset(n, nb, k);
        cblas_dsymm(CblasColMajor, CblasLeft, CblasLower, w, q, 1.0, blk, ld, xr + c0, n, 1.0, yr + c0, n);
        if (m2 > 0) {
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m2, q, w, 1.0, blk + w, ld, xr + c0, n, 1.0,
                        yr + c0 + w, n);
            cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, w, q, m2, 1.0, blk + w, ld, xr + c0 + w, n, 1.0,
                        yr + c0, n);
        }
    }
    for (int j = 0; j < p; j++)
        for (int i = 0; i < n; i++)
            y[(size_t)j * ldy + i] = CMPLX(yr[(size_t)(2 * j) * n + i], yr[(size_t)(2 * j + 1) * n + i]);
    sv_free(NULL, xr);
    sv_free(NULL, yr);
    return SV_OK;
}

sv_status sv_dense_sym_matmul(const sv_dense_sym *a, int nrhs, const void *x, int ldx, void *y, int ldy)
{
    if (!a) return sv_error(SV_ERR_ARG, "sv_dense_sym_matmul: a is NULL");
    if (nrhs < 0) return sv_error(SV_ERR_ARG, "sv_dense_sym_matmul: nrhs = %d: expected >= 0", nrhs);
    int minld = a->n > 1 ? a->n : 1;
    if (ldx < minld || ldy < minld)
        return sv_error(SV_ERR_ARG, "sv_dense_sym_matmul: ldx = %d, ldy = %d: expected >= n = %d", ldx, ldy, a->n);
    if (a->n == 0 || nrhs == 0) return SV_OK;
    if (!x || !y) return sv_error(SV_ERR_ARG, "sv_dense_sym_matmul: NULL %s", x ? "y" : "x");
    if (x == y) return sv_error(SV_ERR_ARG, "sv_dense_sym_matmul: x and y must not overlap");
    if (a->type != SV_DENSE_C64 && a->type != SV_DENSE_C32 && a->type != SV_DENSE_R64)
        return sv_error(SV_ERR_ARG, "sv_dense_sym_matmul: unknown type %d", (int)a->type);
    sv_threads_saved section = sv_threads_apply(NULL); /* BLAS on this thread (threads.c) */
    sv_status st = a->type == SV_DENSE_C64   ? matmul_z(a, nrhs, x, ldx, y, ldy)
                   : a->type == SV_DENSE_C32 ? matmul_c(a, nrhs, x, ldx, y, ldy)
                                             : matmul_d(a, nrhs, x, ldx, y, ldy);
    sv_threads_restore(section);
    return st;
}
