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

/* Append count values; -1 (the error recorded) when memory runs out. */
static int ivec_append(sv_ctx *ctx, ivec *a, const int *x, int count)
{
    if (a->len + count > a->cap) {
        long long cap = a->cap ? 2 * a->cap : 256;
        while (cap < a->len + count) cap *= 2;
        int *nv = sv_alloc(ctx, (size_t)cap * sizeof(int), "sparse LU column indices");
        if (!nv) return -1;
        if (a->len) memcpy(nv, a->v, (size_t)a->len * sizeof(int));
        sv_free(ctx, a->v);
        a->v = nv;
        a->cap = cap;
    }
    memcpy(a->v + a->len, x, (size_t)count * sizeof(int));
    a->len += count;
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
    sv_sparse_lu_unload_kernels(lu);
    void *parts[] = {lu->perm,       lu->iperm,     lu->rowptr,     lu->colind,  lu->diag,    lu->entry_slot,
                     lu->diag_slot,  lu->diag_entry, lu->run_off,   lu->run_t,   lu->run_len, lu};
    sv_sparse_free_all(lu->ctx, parts, (int)(sizeof parts / sizeof parts[0]));
}

/* ---- the steps of the analysis ---------------------------------------------- */
/* The record and its arrays of known size (the L+U structure and the
 * schedule are sized by the steps that compute them). */
static sv_status lu_new(sv_ctx *ctx, const sv_sparse_pattern *p, sv_sparse_lu **out)
{
    sv_sparse_lu *lu = sv_calloc(ctx, 1, sizeof *lu, "sparse LU analysis");
    if (!lu) return sv_last_status();
    int n = p->n;
    size_t nb = (size_t)n * sizeof(int);
    lu->ctx = ctx;
    lu->n = n;
    lu->pat_nnz = p->nnz;
    lu->perm = sv_alloc(ctx, nb, "sparse LU permutation");
    lu->iperm = sv_alloc(ctx, nb, "sparse LU inverse permutation");
    lu->rowptr = sv_alloc(ctx, nb + sizeof(int), "sparse LU row pointers");
    lu->diag = sv_alloc(ctx, nb, "sparse LU diagonal slots");
    lu->diag_slot = sv_alloc(ctx, nb, "sparse LU diagonal slots");
    lu->diag_entry = sv_alloc(ctx, nb, "sparse LU diagonal entries");
    lu->entry_slot = sv_alloc(ctx, (size_t)p->nnz * sizeof(int), "sparse LU entry slots");
    if (!lu->perm || !lu->iperm || !lu->rowptr || !lu->diag || !lu->diag_slot || !lu->diag_entry ||
        !lu->entry_slot) {
        sv_status st = sv_last_status();
        sv_sparse_lu_destroy(lu);
        return st;
    }
    *out = lu;
    return SV_OK;
}

/* perm and iperm: AMD on S + Sᵀ, or the given order. */
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

/* Workspace of the symbolic factorisation, n ints each. */
typedef struct symbolic_work {
    int *mark;  /* mark[j] = i: column j is already in row i */
    int *heap;  /* L columns of row i still to visit, smallest first */
    int *ulist; /* U columns of row i */
    int hl, ul;
} symbolic_work;

/* Column j joins row i once: an L column (j < i) to the heap, a U column
 * to the list. */
static void add_column(symbolic_work *w, int i, int j)
{
    if (w->mark[j] == i) return;
    w->mark[j] = i;
    if (j < i)
        heap_push(w->heap, &w->hl, j);
    else
        w->ulist[w->ul++] = j;
}

/* Row i of L+U (up-looking): row i of P·A·Pᵀ united with the U part of every
 * row k its L part reaches, the L columns taken in increasing order from the
 * heap, newly filled ones included. Appended to cols as L, diagonal, U. */
static sv_status symbolic_row(sv_sparse_lu *lu, const sv_sparse_pattern *p, int i, symbolic_work *w, ivec *cols)
{
    sv_ctx *ctx = lu->ctx;
    int orow = lu->perm[i];
    w->hl = w->ul = 0;
    w->mark[i] = i;
    for (int e = p->rowptr[orow]; e < p->rowptr[orow + 1]; e++) add_column(w, i, lu->iperm[p->colind[e]]);
    while (w->hl > 0) {
        int k = heap_pop(w->heap, &w->hl);
        if (ivec_append(ctx, cols, &k, 1)) return sv_last_status();
        for (int q = lu->diag[k] + 1; q < lu->rowptr[k + 1]; q++) add_column(w, i, cols->v[q]);
    }
    sort_ints(w->ulist, w->ul);
    lu->diag[i] = (int)cols->len;
    if (ivec_append(ctx, cols, &i, 1) || ivec_append(ctx, cols, w->ulist, w->ul)) return sv_last_status();
    if (cols->len > INT_MAX / 2)
        return sv_error(SV_ERR_PATTERN, "sparse analysis: nnz(L+U) passes %d after row %d of %d: too much fill",
                        INT_MAX / 2, i, lu->n);
    lu->rowptr[i + 1] = (int)cols->len;
    return SV_OK;
}

/* rowptr, colind, diag and nnz: the exact structure of the unpivoted LU. */
static sv_status symbolic(sv_sparse_lu *lu, const sv_sparse_pattern *p)
{
    sv_ctx *ctx = lu->ctx;
    int n = lu->n;
    size_t nb = (size_t)n * sizeof(int);
    symbolic_work w = {0};
    w.mark = sv_alloc(ctx, nb, "sparse LU symbolic workspace");
    w.heap = sv_alloc(ctx, nb, "sparse LU symbolic workspace");
    w.ulist = sv_alloc(ctx, nb, "sparse LU symbolic workspace");
    ivec cols = {0};
    sv_status st = w.mark && w.heap && w.ulist ? SV_OK : sv_last_status();
    if (st == SV_OK) {
        for (int j = 0; j < n; j++) w.mark[j] = -1;
        lu->rowptr[0] = 0;
        for (int i = 0; i < n && st == SV_OK; i++) st = symbolic_row(lu, p, i, &w, &cols);
    }
    if (st == SV_OK) {
        lu->nnz = (int)cols.len;
        lu->colind = cols.v;
    } else {
        sv_free(ctx, cols.v);
    }
    sv_free(ctx, w.mark);
    sv_free(ctx, w.heap);
    sv_free(ctx, w.ulist);
    return st;
}

/* One walk over the factor's updates in schedule order (see
 * sparse_internal.h): with list = 0 it counts the L entries, runs and
 * updates; with list = 1 it fills run_off, run_t and run_len. pos: n ints. */
static void schedule_walk(sv_sparse_lu *lu, int *pos, int list)
{
    const int *rp = lu->rowptr, *ci = lu->colind, *dg = lu->diag;
    long long x = 0, r = 0, upd = 0;
    for (int i = 0; i < lu->n; i++) {
        for (int pp = rp[i]; pp < rp[i + 1]; pp++) pos[ci[pp]] = pp;
        for (int pp = rp[i]; pp < dg[i]; pp++, x++) {
            int k = ci[pp], last = -2;
            if (list) lu->run_off[x] = r;
            for (int q = dg[k] + 1; q < rp[k + 1]; q++, upd++) {
                int t = pos[ci[q]];
                if (t == last + 1 && q > dg[k] + 1) {
                    if (list) lu->run_len[r - 1]++;
                } else {
                    if (list) {
                        lu->run_t[r] = t;
                        lu->run_len[r] = 1;
                    }
                    r++;
                }
                last = t;
            }
        }
    }
    if (list) lu->run_off[x] = r;
    lu->nl = x;
    lu->nruns = r;
    lu->nupd = upd;
}

/* The factor schedule: count, size the arrays, list. */
static sv_status schedule(sv_sparse_lu *lu)
{
    sv_ctx *ctx = lu->ctx;
    int *pos = sv_alloc(ctx, (size_t)lu->n * sizeof(int), "sparse LU schedule workspace");
    if (!pos) return sv_last_status();
    schedule_walk(lu, pos, 0);
    size_t b1, b2;
    sv_status st = SV_OK;
    if (sv_size_mul((size_t)lu->nl + 1, sizeof(long long), &b1) ||
        sv_size_mul((size_t)(lu->nruns ? lu->nruns : 1), sizeof(int), &b2)) {
        st = sv_last_status();
    } else {
        lu->run_off = sv_alloc(ctx, b1, "sparse LU factor schedule");
        lu->run_t = sv_alloc(ctx, b2, "sparse LU factor schedule (runs)");
        lu->run_len = sv_alloc(ctx, b2, "sparse LU factor schedule (runs)");
        if (!lu->run_off || !lu->run_t || !lu->run_len) st = sv_last_status();
    }
    if (st == SV_OK) schedule_walk(lu, pos, 1);
    sv_free(ctx, pos);
    return st;
}

/* entry_slot, diag_slot and diag_entry: where the pattern's entries live. */
static sv_status slot_maps(sv_sparse_lu *lu, const sv_sparse_pattern *p)
{
    for (int i = 0; i < lu->n; i++) {
        int k = lu->iperm[i];
        lu->diag_slot[i] = lu->diag[k];
        for (int e = p->rowptr[i]; e < p->rowptr[i + 1]; e++) {
            int slot = sv_sparse_find_sorted(lu->colind, lu->rowptr[k], lu->rowptr[k + 1], lu->iperm[p->colind[e]]);
            if (slot < 0)
                return sv_error(SV_ERR_INTERNAL, "sparse analysis: entry (%d, %d) has no slot", i, p->colind[e]);
            lu->entry_slot[e] = slot;
            if (p->colind[e] == i) lu->diag_entry[i] = e;
        }
    }
    return SV_OK;
}

/* Hash of everything the kernels depend on. */
static uint64_t layout_hash(const sv_sparse_lu *lu)
{
    int head[3] = {SV_SPARSE_KERNELS_ABI, lu->n, lu->nnz};
    uint64_t h = sv_sparse_hash_words(SV_SPARSE_HASH_SEED, head, 3);
    h = sv_sparse_hash_words(h, lu->perm, lu->n);
    h = sv_sparse_hash_words(h, lu->rowptr, lu->n + 1);
    return sv_sparse_hash_words(h, lu->colind, lu->nnz);
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
    sv_sparse_lu *lu = NULL;
    sv_status st = lu_new(ctx, p, &lu);
    if (st != SV_OK) return st;
    st = order(lu, p, ordering);
    if (st == SV_OK) st = symbolic(lu, p);
    if (st == SV_OK) st = schedule(lu);
    if (st == SV_OK) st = slot_maps(lu, p);
    if (st == SV_OK) {
        lu->hash = layout_hash(lu);
        *out = lu;
    } else {
        sv_sparse_lu_destroy(lu);
    }
    return st;
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
