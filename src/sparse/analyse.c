/* Symbolic analysis: ordering (SuiteSparse AMD or natural), the exact L+U
 * pattern of an unpivoted LU, the slot maps and the factor schedule.
 *
 * The symbolic factorisation is written here rather than taken from a
 * library because what we need is specific: the exact structure of an
 * unpivoted LU of an unsymmetric pattern (AMD only bounds it through
 * S + Sᵀ, and KLU/UMFPACK decide their structure together with pivoting).
 * It is the up-looking rule: row i of L+U is the pattern of row i of A
 * united with the U part of every row k that row i's L part reaches, taking
 * the L columns in increasing order, newly filled ones included. A binary
 * min-heap hands out those columns in order, so the cost is proportional to
 * the structural work (no n² bit matrix) and the result is exactly the set
 * of slots the numeric elimination touches. */
#include <limits.h>
#include <string.h>

#include <amd.h>

#include "sparse_internal.h"

uint64_t sv_sparse_hash_words(uint64_t h, const int *w, long long count)
{
    for (long long i = 0; i < count; i++) {
        uint32_t v = (uint32_t)w[i];
        for (int b = 0; b < 4; b++) {
            h ^= (v >> (8 * b)) & 0xffu;
            h *= 0x100000001b3ULL;
        }
    }
    return h;
}

/* Growable int array on the budgeted allocator. */
typedef struct ivec {
    int *v;
    long long len, cap;
} ivec;

static int ivec_push(sv_ctx *ctx, ivec *a, int x, const char *what)
{
    if (a->len == a->cap) {
        long long cap = a->cap ? 2 * a->cap : 256;
        int *nv = sv_alloc(ctx, (size_t)cap * sizeof(int), what);
        if (!nv) return -1;
        if (a->len) memcpy(nv, a->v, (size_t)a->len * sizeof(int));
        sv_free(ctx, a->v);
        a->v = nv;
        a->cap = cap;
    }
    a->v[a->len++] = x;
    return 0;
}

static void heap_push(int *h, int *len, int x)
{
    int i = (*len)++;
    while (i > 0) {
        int par = (i - 1) / 2;
        if (h[par] <= x) break;
        h[i] = h[par];
        i = par;
    }
    h[i] = x;
}

static int heap_pop(int *h, int *len)
{
    int top = h[0], x = h[--(*len)], i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *len) break;
        if (c + 1 < *len && h[c + 1] < h[c]) c++;
        if (x <= h[c]) break;
        h[i] = h[c];
        i = c;
    }
    if (*len > 0) h[i] = x;
    return top;
}

static void sort_ints(int *a, int len)
{
    for (int x = 1; x < len; x++) {
        int v = a[x], y = x - 1;
        while (y >= 0 && a[y] > v) {
            a[y + 1] = a[y];
            y--;
        }
        a[y + 1] = v;
    }
}

void sv_sparse_lu_destroy(sv_sparse_lu *lu)
{
    if (!lu) return;
    sv_ctx *ctx = lu->ctx;
    sv_sparse_lu_unload_kernels(lu);
    sv_free(ctx, lu->perm);
    sv_free(ctx, lu->iperm);
    sv_free(ctx, lu->rowptr);
    sv_free(ctx, lu->colind);
    sv_free(ctx, lu->diag);
    sv_free(ctx, lu->entry_slot);
    sv_free(ctx, lu->diag_slot);
    sv_free(ctx, lu->diag_entry);
    sv_free(ctx, lu->run_off);
    sv_free(ctx, lu->run_t);
    sv_free(ctx, lu->run_len);
    sv_free(ctx, lu);
}

static sv_status order(sv_sparse_lu *lu, const sv_sparse_pattern *p, sv_sparse_ordering ordering)
{
    int n = p->n;
    if (ordering == SV_SPARSE_ORDER_NATURAL) {
        for (int i = 0; i < n; i++) lu->perm[i] = i;
    } else {
        double control[AMD_CONTROL], info[AMD_INFO];
        amd_defaults(control);
        /* AMD reads the pattern as columns; it orders A + Aᵀ either way. */
        int st = amd_order(n, p->rowptr, p->colind, lu->perm, control, info);
        if (st == AMD_OUT_OF_MEMORY) return sv_error(SV_ERR_NOMEM, "sparse analysis: AMD ran out of memory (n = %d)", n);
        if (st != AMD_OK && st != AMD_OK_BUT_JUMBLED)
            return sv_error(SV_ERR_INTERNAL, "sparse analysis: amd_order returned %d on a validated pattern", st);
    }
    for (int k = 0; k < n; k++) lu->iperm[lu->perm[k]] = k;
    return SV_OK;
}

sv_status sv_sparse_lu_analyse(sv_ctx *ctx, const sv_sparse_pattern *p, sv_sparse_ordering ordering,
                               sv_sparse_lu **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_sparse_lu_analyse: out is NULL");
    *out = NULL;
    if (!p) return sv_error(SV_ERR_ARG, "sv_sparse_lu_analyse: pattern is NULL");
    if (ordering != SV_SPARSE_ORDER_AMD && ordering != SV_SPARSE_ORDER_NATURAL)
        return sv_error(SV_ERR_ARG, "sv_sparse_lu_analyse: ordering = %d: expected SV_SPARSE_ORDER_AMD (0) or "
                                    "SV_SPARSE_ORDER_NATURAL (1)", (int)ordering);
    int n = p->n;
    sv_status s = SV_OK;
    sv_sparse_lu *lu = sv_calloc(ctx, 1, sizeof *lu, "sparse LU analysis");
    if (!lu) return sv_last_status();
    lu->ctx = ctx;
    lu->n = n;
    lu->pat_nnz = p->nnz;
    size_t nb = (size_t)n * sizeof(int);
    lu->perm = sv_alloc(ctx, nb, "sparse LU permutation");
    lu->iperm = sv_alloc(ctx, nb, "sparse LU inverse permutation");
    lu->rowptr = sv_alloc(ctx, nb + sizeof(int), "sparse LU row pointers");
    lu->diag = sv_alloc(ctx, nb, "sparse LU diagonal slots");
    lu->diag_slot = sv_alloc(ctx, nb, "sparse LU diagonal slots");
    lu->diag_entry = sv_alloc(ctx, nb, "sparse LU diagonal entries");
    lu->entry_slot = sv_alloc(ctx, (size_t)p->nnz * sizeof(int), "sparse LU entry slots");
    int *mark = sv_alloc(ctx, nb, "sparse LU symbolic workspace");
    int *heap = sv_alloc(ctx, nb, "sparse LU symbolic workspace");
    int *ulist = sv_alloc(ctx, nb, "sparse LU symbolic workspace");
    int *pos = mark; /* reused after the symbolic phase */
    ivec cols = {0};
    if (!lu->perm || !lu->iperm || !lu->rowptr || !lu->diag || !lu->diag_slot || !lu->diag_entry || !lu->entry_slot || !mark || !heap ||
        !ulist) {
        s = sv_last_status();
        goto fail;
    }
    if ((s = order(lu, p, ordering))) goto fail;

    /* ---- symbolic: row by row, up-looking --------------------------------- */
    for (int j = 0; j < n; j++) mark[j] = -1;
    lu->rowptr[0] = 0;
    for (int i = 0; i < n; i++) {
        int hl = 0, ul = 0, orow = lu->perm[i];
        mark[i] = i;
        for (int e = p->rowptr[orow]; e < p->rowptr[orow + 1]; e++) {
            int j = lu->iperm[p->colind[e]];
            if (mark[j] == i) continue;
            mark[j] = i;
            if (j < i)
                heap_push(heap, &hl, j);
            else
                ulist[ul++] = j;
        }
        while (hl > 0) {
            int k = heap_pop(heap, &hl);
            if (ivec_push(ctx, &cols, k, "sparse LU column indices")) {
                s = sv_last_status();
                goto fail;
            }
            for (int q = lu->diag[k] + 1; q < lu->rowptr[k + 1]; q++) {
                int j = cols.v[q];
                if (mark[j] == i) continue;
                mark[j] = i;
                if (j < i)
                    heap_push(heap, &hl, j);
                else
                    ulist[ul++] = j;
            }
        }
        sort_ints(ulist, ul);
        lu->diag[i] = (int)cols.len;
        if (ivec_push(ctx, &cols, i, "sparse LU column indices")) {
            s = sv_last_status();
            goto fail;
        }
        for (int x = 0; x < ul; x++)
            if (ivec_push(ctx, &cols, ulist[x], "sparse LU column indices")) {
                s = sv_last_status();
                goto fail;
            }
        if (cols.len > INT_MAX / 2) {
            s = sv_error(SV_ERR_PATTERN, "sparse analysis: nnz(L+U) passes %d after row %d of %d: too much fill",
                         INT_MAX / 2, i, n);
            goto fail;
        }
        lu->rowptr[i + 1] = (int)cols.len;
    }
    lu->nnz = (int)cols.len;
    lu->colind = cols.v;
    cols.v = NULL;

    /* ---- schedule: count, then list the runs of updates ------------------ */
    long long nupd = 0, nl = 0, nruns = 0;
    for (int pass = 0; pass < 2; pass++) {
        long long x = 0, r = 0;
        for (int i = 0; i < n; i++) {
            for (int pp = lu->rowptr[i]; pp < lu->rowptr[i + 1]; pp++) pos[lu->colind[pp]] = pp;
            for (int pp = lu->rowptr[i]; pp < lu->diag[i]; pp++) {
                int k = lu->colind[pp];
                if (pass == 1) lu->run_off[x] = r;
                x++;
                int last = -2;
                for (int q = lu->diag[k] + 1; q < lu->rowptr[k + 1]; q++) {
                    int t = pos[lu->colind[q]];
                    if (t == last + 1 && q > lu->diag[k] + 1) {
                        if (pass == 1) lu->run_len[r - 1]++;
                    } else {
                        if (pass == 1) {
                            lu->run_t[r] = t;
                            lu->run_len[r] = 1;
                        }
                        r++;
                    }
                    last = t;
                    if (pass == 0) nupd++;
                }
            }
        }
        if (pass == 0) {
            nl = x;
            nruns = r;
            size_t b1, b2;
            if (sv_size_mul((size_t)nl + 1, sizeof(long long), &b1) || sv_size_mul((size_t)(nruns ? nruns : 1), sizeof(int), &b2)) {
                s = sv_last_status();
                goto fail;
            }
            lu->run_off = sv_alloc(ctx, b1, "sparse LU factor schedule");
            lu->run_t = sv_alloc(ctx, b2, "sparse LU factor schedule (runs)");
            lu->run_len = sv_alloc(ctx, b2, "sparse LU factor schedule (runs)");
            if (!lu->run_off || !lu->run_t || !lu->run_len) {
                s = sv_last_status();
                goto fail;
            }
        } else {
            lu->run_off[x] = r;
        }
    }
    lu->nupd = nupd;
    lu->nl = nl;
    lu->nruns = nruns;

    /* ---- maps from the pattern to slots --------------------------------- */
    for (int i = 0; i < n; i++) {
        int k = lu->iperm[i];
        lu->diag_slot[i] = lu->diag[k];
        for (int e = p->rowptr[i]; e < p->rowptr[i + 1]; e++) {
            int j = lu->iperm[p->colind[e]];
            int lo = lu->rowptr[k], hi = lu->rowptr[k + 1] - 1, found = -1;
            while (lo <= hi) {
                int mid = lo + (hi - lo) / 2;
                if (lu->colind[mid] == j) {
                    found = mid;
                    break;
                }
                if (lu->colind[mid] < j)
                    lo = mid + 1;
                else
                    hi = mid - 1;
            }
            if (found < 0) {
                s = sv_error(SV_ERR_INTERNAL, "sparse analysis: entry (%d, %d) has no slot", i, p->colind[e]);
                goto fail;
            }
            lu->entry_slot[e] = found;
            if (p->colind[e] == i) lu->diag_entry[i] = e;
        }
    }

    /* ---- hash of everything the kernels depend on ----------------------- */
    int head[3] = {SV_SPARSE_KERNELS_ABI, n, lu->nnz};
    uint64_t h = sv_sparse_hash_words(SV_SPARSE_HASH_SEED, head, 3);
    h = sv_sparse_hash_words(h, lu->perm, n);
    h = sv_sparse_hash_words(h, lu->rowptr, n + 1);
    h = sv_sparse_hash_words(h, lu->colind, lu->nnz);
    lu->hash = h;

    sv_free(ctx, mark);
    sv_free(ctx, heap);
    sv_free(ctx, ulist);
    *out = lu;
    return SV_OK;
fail:
    sv_free(ctx, cols.v);
    sv_free(ctx, mark);
    sv_free(ctx, heap);
    sv_free(ctx, ulist);
    sv_sparse_lu_destroy(lu);
    return s;
}

int sv_sparse_lu_n(const sv_sparse_lu *lu) { return lu ? lu->n : 0; }
int sv_sparse_lu_nnz(const sv_sparse_lu *lu) { return lu ? lu->nnz : 0; }
long long sv_sparse_lu_flops(const sv_sparse_lu *lu) { return lu ? lu->nupd + lu->nl + lu->nnz : 0; }
long long sv_sparse_lu_updates(const sv_sparse_lu *lu) { return lu ? lu->nupd : 0; }
const int *sv_sparse_lu_perm(const sv_sparse_lu *lu) { return lu ? lu->perm : NULL; }
const int *sv_sparse_lu_entry_slot(const sv_sparse_lu *lu) { return lu ? lu->entry_slot : NULL; }
const int *sv_sparse_lu_diag_slot(const sv_sparse_lu *lu) { return lu ? lu->diag_slot : NULL; }
const int *sv_sparse_lu_rowptr(const sv_sparse_lu *lu) { return lu ? lu->rowptr : NULL; }
const int *sv_sparse_lu_colind(const sv_sparse_lu *lu) { return lu ? lu->colind : NULL; }
uint64_t sv_sparse_lu_hash(const sv_sparse_lu *lu) { return lu ? lu->hash : 0; }
