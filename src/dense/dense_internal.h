/* Internals of the dense engine shared by its source files. */
#ifndef SV_DENSE_INTERNAL_H
#define SV_DENSE_INTERNAL_H

#include <complex.h>
#include <stddef.h>

#include "solvent/dense.h"

/* Default block size: large enough that the trailing update's gemm calls
 * (K = nb) run near peak, small enough that the O(n·nb) workspace and the
 * unblocked diagonal-block work stay small. Chosen by measurement with
 * bench_dense (see docs/dense.md). */
#define SV_DENSE_DEFAULT_NB 192

struct sv_dense_sym {
    sv_ctx *ctx;
    int n, nb;
    sv_dense_type type;
    size_t size; /* elements */
    void *data;
};

size_t sv_dense_elem_bytes(sv_dense_type t);

/* Offset of the first element of block column k (0 ≤ k < number of blocks). */
static inline size_t sv_dense_blk_off(int n, int nb, int k)
{
    /* Block columns before k are all full (width nb); block column j holds
     * nb·(n − j·nb) elements. */
    size_t kk = (size_t)k, b = (size_t)nb;
    size_t tri = kk == 0 ? 0 : kk * (kk - 1) / 2;
    return b * (kk * (size_t)n - b * tri);
}

/* Element count of a packed matrix. */
size_t sv_dense_packed_size(int n, int nb);

#endif
