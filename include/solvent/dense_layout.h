/* The dense engine's packed block-column layout, the one definition every
 * module uses (dense.h includes it; the CUDA module includes it alone, as
 * it cannot take C99 complex types).
 *
 * Columns are grouped in block columns of nb; block column k covers columns
 * k·nb … min((k+1)·nb, n) − 1 and stores rows k·nb … n − 1 of them
 * column-major with leading dimension n − k·nb. Only entries with i ≥ j are
 * meaningful. The same offsets address a matrix of any scalar type. */
#ifndef SOLVENT_DENSE_LAYOUT_H
#define SOLVENT_DENSE_LAYOUT_H

#include <stddef.h>

/* CUDA code defines this as __host__ __device__ before including. */
#ifndef SV_LAYOUT_FN
#define SV_LAYOUT_FN static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Offset of the first element of block column k: the block columns before
 * it are full (width nb) and block column q holds nb·(n − q·nb) elements,
 * so Σ_{q<k} = nb·(k·n − nb·k(k−1)/2). */
SV_LAYOUT_FN size_t sv_dense_packed_block_offset(int n, int nb, int k)
{
    size_t kk = (size_t)k, b = (size_t)nb;
    size_t tri = kk == 0 ? 0 : kk * (kk - 1) / 2;
    return b * (kk * (size_t)n - b * tri);
}

/* Element offset of (i, j); i < j addresses (j, i) (the matrix is symmetric). */
SV_LAYOUT_FN size_t sv_dense_packed_offset(int n, int nb, int i, int j)
{
    if (i < j) {
        int t = i;
        i = j;
        j = t;
    }
    int k = j / nb, c0 = k * nb;
    return sv_dense_packed_block_offset(n, nb, k) + (size_t)(j - c0) * (size_t)(n - c0) + (size_t)(i - c0);
}

/* Elements stored by a matrix of order n ≥ 0 with block size nb ≥ 1. */
SV_LAYOUT_FN size_t sv_dense_packed_size(int n, int nb)
{
    if (n <= 0) return 0;
    int k = (n - 1) / nb, c0 = k * nb;
    return sv_dense_packed_block_offset(n, nb, k) + (size_t)(n - c0) * (size_t)(n - c0);
}

#ifdef __cplusplus
}
#endif
#endif
