/* Sparsity patterns: construction from CSR, coordinates or a dense mask,
 * validation (indices in range), duplicate merging, sorting, and the
 * diagonal added where missing (M = shift·I − J needs every diagonal slot). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sparse_internal.h"

static sv_status check_n(int n)
{
    if (n <= 0) return sv_error(SV_ERR_ARG, "sparse pattern: n = %d: expected n >= 1", n);
    if (n > INT_MAX / 2 - 1) return sv_error(SV_ERR_ARG, "sparse pattern: n = %d: too large", n);
    return SV_OK;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Sort a[lo .. hi-1] (insertion sort for short rows, qsort for long ones). */
static void sort_row(int *a, int lo, int hi)
{
    if (hi - lo > 32) {
        qsort(a + lo, (size_t)(hi - lo), sizeof(int), cmp_int);
        return;
    }
    for (int x = lo + 1; x < hi; x++) {
        int v = a[x], y = x - 1;
        while (y >= lo && a[y] > v) {
            a[y + 1] = a[y];
            y--;
        }
        a[y + 1] = v;
    }
}

/* Counting sort of the m pairs by row into col (rowptr set), each row's
 * diagonal first; fillp: n ints of workspace. */
static void bucket_rows(int n, long long m, const int *rows, const int *cols, int *rowptr, int *col, int *fillp)
{
    for (long long e = 0; e < m; e++) rowptr[rows[e] + 1]++;
    for (int i = 0; i < n; i++) rowptr[i + 1]++; /* the diagonal */
    for (int i = 0; i < n; i++) rowptr[i + 1] += rowptr[i];
    for (int i = 0; i < n; i++) fillp[i] = rowptr[i];
    for (int i = 0; i < n; i++) col[fillp[i]++] = i;
    for (long long e = 0; e < m; e++) col[fillp[rows[e]]++] = cols[e];
}

/* Sort each row, merge duplicates and compact in place; returns nnz. */
static int sort_unique_rows(int n, int *rowptr, int *col)
{
    int w = 0;
    for (int i = 0; i < n; i++) {
        int a = rowptr[i], b = rowptr[i + 1];
        sort_row(col, a, b);
        rowptr[i] = w;
        for (int x = a; x < b; x++)
            if (x == a || col[x] != col[x - 1]) col[w++] = col[x];
    }
    rowptr[n] = w;
    return w;
}

/* Build from (rows, cols) pairs already range-checked, the diagonal
 * (i, i) always added. */
static sv_status build(sv_ctx *ctx, int n, long long m, const int *rows, const int *cols, sv_sparse_pattern **out)
{
    long long total = m + n;
    if (total > INT_MAX) return sv_error(SV_ERR_ARG, "sparse pattern: %lld entries: more than INT_MAX", total);
    sv_sparse_pattern *p = sv_calloc(ctx, 1, sizeof *p, "sparse pattern");
    if (!p) return sv_last_status();
    p->ctx = ctx;
    p->n = n;
    p->rowptr = sv_calloc(ctx, (size_t)n + 1, sizeof(int), "sparse pattern row pointers");
    int *col = sv_alloc(ctx, (size_t)total * sizeof(int), "sparse pattern column indices");
    int *fillp = sv_alloc(ctx, (size_t)n * sizeof(int), "sparse pattern workspace");
    sv_status st = p->rowptr && col && fillp ? SV_OK : sv_last_status();
    if (st == SV_OK) {
        bucket_rows(n, m, rows, cols, p->rowptr, col, fillp);
        p->nnz = sort_unique_rows(n, p->rowptr, col);
        p->colind = sv_alloc(ctx, (size_t)(p->nnz ? p->nnz : 1) * sizeof(int), "sparse pattern column indices");
        if (p->colind)
            memcpy(p->colind, col, (size_t)p->nnz * sizeof(int));
        else
            st = sv_last_status();
    }
    sv_free(ctx, col);
    sv_free(ctx, fillp);
    if (st == SV_OK)
        *out = p;
    else
        sv_sparse_pattern_destroy(p);
    return st;
}

sv_status sv_sparse_pattern_from_coo(sv_ctx *ctx, int n, int nnz, const int *rows, const int *cols,
                                     sv_sparse_pattern **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_sparse_pattern_from_coo: out is NULL");
    *out = NULL;
    sv_status s = check_n(n);
    if (s) return s;
    if (nnz < 0) return sv_error(SV_ERR_ARG, "sv_sparse_pattern_from_coo: nnz = %d: expected >= 0", nnz);
    if (nnz > 0 && (!rows || !cols))
        return sv_error(SV_ERR_ARG, "sv_sparse_pattern_from_coo: rows or cols is NULL with nnz = %d", nnz);
    for (int e = 0; e < nnz; e++) {
        if (rows[e] < 0 || rows[e] >= n || cols[e] < 0 || cols[e] >= n)
            return sv_error(SV_ERR_PATTERN,
                            "sparse pattern: entry %d = (%d, %d): indices must lie in [0, %d)", e, rows[e],
                            cols[e], n);
    }
    return build(ctx, n, nnz, rows, cols, out);
}

sv_status sv_sparse_pattern_from_csr(sv_ctx *ctx, int n, const int *rowptr, const int *colind,
                                     sv_sparse_pattern **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_sparse_pattern_from_csr: out is NULL");
    *out = NULL;
    sv_status s = check_n(n);
    if (s) return s;
    if (!rowptr) return sv_error(SV_ERR_ARG, "sv_sparse_pattern_from_csr: rowptr is NULL");
    if (rowptr[0] != 0)
        return sv_error(SV_ERR_PATTERN, "sparse pattern: rowptr[0] = %d: expected 0", rowptr[0]);
    for (int i = 0; i < n; i++)
        if (rowptr[i + 1] < rowptr[i])
            return sv_error(SV_ERR_PATTERN, "sparse pattern: rowptr[%d] = %d < rowptr[%d] = %d: must not decrease",
                            i + 1, rowptr[i + 1], i, rowptr[i]);
    int m = rowptr[n];
    if (m > 0 && !colind) return sv_error(SV_ERR_ARG, "sv_sparse_pattern_from_csr: colind is NULL");
    int *rows = sv_alloc(ctx, (size_t)(m ? m : 1) * sizeof(int), "sparse pattern rows");
    if (!rows) return sv_last_status();
    for (int i = 0; i < n; i++)
        for (int e = rowptr[i]; e < rowptr[i + 1]; e++) {
            rows[e] = i;
            if (colind[e] < 0 || colind[e] >= n) {
                sv_free(ctx, rows);
                return sv_error(SV_ERR_PATTERN, "sparse pattern: row %d, colind[%d] = %d: expected in [0, %d)", i,
                                e, colind[e], n);
            }
        }
    s = build(ctx, n, m, rows, colind, out);
    sv_free(ctx, rows);
    return s;
}

sv_status sv_sparse_pattern_from_mask(sv_ctx *ctx, int n, const unsigned char *mask, sv_sparse_pattern **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_sparse_pattern_from_mask: out is NULL");
    *out = NULL;
    sv_status s = check_n(n);
    if (s) return s;
    if (!mask) return sv_error(SV_ERR_ARG, "sv_sparse_pattern_from_mask: mask is NULL");
    long long m = 0;
    for (long long e = 0; e < (long long)n * n; e++) m += mask[e] != 0;
    if (m > INT_MAX) return sv_error(SV_ERR_ARG, "sparse pattern: mask has %lld entries: more than INT_MAX", m);
    int *rows = sv_alloc(ctx, (size_t)(m ? m : 1) * sizeof(int), "sparse pattern rows");
    int *cols = sv_alloc(ctx, (size_t)(m ? m : 1) * sizeof(int), "sparse pattern cols");
    if (!rows || !cols) {
        s = sv_last_status();
        sv_free(ctx, rows);
        sv_free(ctx, cols);
        return s;
    }
    long long e = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (mask[(size_t)i * n + j]) {
                rows[e] = i;
                cols[e] = j;
                e++;
            }
    s = build(ctx, n, m, rows, cols, out);
    sv_free(ctx, rows);
    sv_free(ctx, cols);
    return s;
}

sv_status sv_sparse_pattern_dense(sv_ctx *ctx, int n, sv_sparse_pattern **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_sparse_pattern_dense: out is NULL");
    *out = NULL;
    sv_status s = check_n(n);
    if (s) return s;
    if ((long long)n * n > INT_MAX)
        return sv_error(SV_ERR_ARG, "sparse pattern: dense n = %d has more than INT_MAX entries", n);
    sv_sparse_pattern *p = sv_calloc(ctx, 1, sizeof *p, "sparse pattern");
    if (!p) return sv_last_status();
    p->ctx = ctx;
    p->n = n;
    p->nnz = n * n;
    p->rowptr = sv_alloc(ctx, ((size_t)n + 1) * sizeof(int), "sparse pattern row pointers");
    p->colind = sv_alloc(ctx, (size_t)n * n * sizeof(int), "sparse pattern column indices");
    if (!p->rowptr || !p->colind) {
        s = sv_last_status();
        sv_sparse_pattern_destroy(p);
        return s;
    }
    for (int i = 0; i <= n; i++) p->rowptr[i] = i * n;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) p->colind[(size_t)i * n + j] = j;
    *out = p;
    return SV_OK;
}

void sv_sparse_pattern_destroy(sv_sparse_pattern *p)
{
    if (p) sv_sparse_free_all(p->ctx, (void *[]){p->rowptr, p->colind, p}, 3);
}

int sv_sparse_pattern_n(const sv_sparse_pattern *p) { return p ? p->n : 0; }
int sv_sparse_pattern_nnz(const sv_sparse_pattern *p) { return p ? p->nnz : 0; }
const int *sv_sparse_pattern_rowptr(const sv_sparse_pattern *p) { return p ? p->rowptr : NULL; }
const int *sv_sparse_pattern_colind(const sv_sparse_pattern *p) { return p ? p->colind : NULL; }

int sv_sparse_pattern_find(const sv_sparse_pattern *p, int i, int j)
{
    if (!p || i < 0 || j < 0 || i >= p->n || j >= p->n) return -1;
    return sv_sparse_find_sorted(p->colind, p->rowptr[i], p->rowptr[i + 1], j);
}

int sv_sparse_find_sorted(const int *a, int lo, int end, int key)
{
    int hi = end - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (a[mid] == key) return mid;
        if (a[mid] < key)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}
