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
 * rowptr[i] .. diag[i]-1 (column k = colind[p], increasing), the x-th L
 * entry of the whole schedule:
 *     l = buf[p] * buf[diag[k]];  buf[p] = l;
 *     q = diag[k] + 1;
 *     for r in run_off[x] .. run_off[x+1]-1:
 *         for j in 0 .. run_len[r]-1:  buf[run_t[r] + j] -= l * buf[q + j];
 *         q += run_len[r];
 * then the pivot buf[diag[i]] is replaced by its reciprocal. Row k's U part
 * maps onto slots of row i; a run is a stretch where consecutive U slots
 * land on consecutive slots of row i, so the innermost loop is a plain
 * vectorisable axpy with no index loads (dense corners of the factors give
 * long runs). The straight-line emission performs the same operations in
 * the same order with the slot numbers as literals. */
struct sv_sparse_lu {
    sv_ctx *ctx;
    int n, nnz;          /* nnz = slots of L+U */
    int pat_nnz;         /* entries of the analysed pattern */
    int *perm, *iperm;   /* perm[k] = original index; iperm[orig] = k */
    int *rowptr, *colind, *diag;
    int *entry_slot;     /* pat_nnz: slot of pattern entry e */
    int *diag_slot;      /* n: slot of original diagonal (i,i) */
    int *diag_entry;     /* n: pattern entry index of (i,i) */
    long long *run_off;  /* nl+1: runs of the x-th L entry */
    int *run_t, *run_len;/* nruns: first target slot and length of each run */
    long long nruns;
    long long nupd;      /* number of updates (multiply-subtracts) in factor */
    long long nl;        /* number of L entries (one multiply each) */
    uint64_t hash;
    const struct sv_sparse_kernels *kern; /* straight-line kernels, or NULL */
    void *dl_handle;     /* shared object loaded by the runtime path, or NULL */
};

/* sv_free every one of count pointers (a destroy's arrays, then the record). */
static inline void sv_sparse_free_all(sv_ctx *ctx, void *const *parts, int count)
{
    for (int k = 0; k < count; k++) sv_free(ctx, parts[k]);
}

/* Index of key in the sorted a[lo .. end-1], or -1 (a row of a CSR). */
int sv_sparse_find_sorted(const int *a, int lo, int end, int key);

/* FNV-1a over 32-bit words. */
uint64_t sv_sparse_hash_words(uint64_t h, const int *w, long long count);
/* Version of the code generator: part of cached object names, so that a
 * newer library never loads objects an older generator wrote. */
#define SV_SPARSE_CODEGEN_VERSION 4
#define SV_SPARSE_HASH_SEED 0xcbf29ce484222325ULL

/* The options in force: a copy of *opt (NULL: the defaults) with emit = 0
 * replaced by SV_SPARSE_EMIT_DEFAULT. */
sv_sparse_codegen_options sv_sparse_codegen_resolve(const sv_sparse_codegen_options *opt);
/* Would straight-line code for `lu` stay within `opt`'s limits (resolved
 * options)? SV_OK or SV_ERR_UNSUPPORTED with a message. */
sv_status sv_sparse_codegen_check(const sv_sparse_lu *lu, const sv_sparse_codegen_options *opt);
#endif
