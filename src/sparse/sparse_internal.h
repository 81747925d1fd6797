/* Internal data structures of the sparse engine (not part of the API). */
#ifndef SV_SPARSE_INTERNAL_H
#define SV_SPARSE_INTERNAL_H

#include <stdint.h>

#include "solvent/sparse.h"

struct sv_sparse_pattern {
    sv_ctx *ctx;
    int n, nnz;
    int *rowptr; /* n+1 */
    int *colind; /* nnz, sorted and unique per row, diagonal present */
};

/* The analysis. All arrays are in the permuted numbering k (row k of
 * P·A·Pᵀ is original row perm[k]) unless said otherwise.
 *
 * Factor schedule (up-looking, row by row): for row i, for each L slot p in
 * rowptr[i] .. diag[i]-1 (column k = colind[p], increasing):
 *     l = buf[p] * buf[diag[k]];  buf[p] = l;
 *     for q in diag[k]+1 .. rowptr[k+1]-1:  buf[target[t++]] -= l * buf[q];
 * then the pivot buf[diag[i]] is replaced by its reciprocal. target[] lists
 * the slot in row i of every update in that order, so the kernel needs no
 * scatter/gather workspace. The straight-line emission writes the same
 * operations in the same order with the slot numbers as literals. */
struct sv_sparse_lu {
    sv_ctx *ctx;
    int n, nnz;          /* nnz = slots of L+U */
    int pat_nnz;         /* entries of the analysed pattern */
    int *perm, *iperm;   /* perm[k] = original index; iperm[orig] = k */
    int *rowptr, *colind, *diag;
    int *entry_slot;     /* pat_nnz: slot of pattern entry e */
    int *diag_slot;      /* n: slot of original diagonal (i,i) */
    int *diag_entry;     /* n: pattern entry index of (i,i) */
    int *target;         /* nupd: update targets in schedule order */
    long long nupd;      /* number of updates (multiply-subtracts) in factor */
    long long nl;        /* number of L entries (one multiply each) */
    uint64_t hash;
    const struct sv_sparse_kernels *kern; /* straight-line kernels, or NULL */
    void *dl_handle;     /* shared object loaded by the runtime path, or NULL */
};

/* FNV-1a over 32-bit words. */
uint64_t sv_sparse_hash_words(uint64_t h, const int *w, long long count);
#define SV_SPARSE_HASH_SEED 0xcbf29ce484222325ULL

#endif
