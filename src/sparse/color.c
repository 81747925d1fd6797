/* Colouring of the column intersection graph (columns that share a row are
 * adjacent, so they must get different colours): then one directional
 * derivative J·d_c per colour c recovers every entry of J, since each row
 * meets each colour group in at most one column (Curtis, Powell & Reid
 * 1974; Coleman & Moré 1983).
 *
 * Written here because SuiteSparse has no Jacobian colouring and ColPack is
 * C++ and not packaged for Debian. Several greedy orderings are tried and
 * the fewest colours kept: largest-first, smallest-last, incidence-degree
 * and DSATUR (Brélaz 1979). The last three are quadratic in the number of
 * columns as written here, so they run only up to SV_COLOR_QUADRATIC_MAX
 * columns; larger patterns get largest-first and natural order. */
#include <stdlib.h>
#include <string.h>

#include "sparse_internal.h"

#define SV_COLOR_QUADRATIC_MAX 6000

struct sv_sparse_coloring {
    sv_ctx *ctx;
    int n, nnz, ncolors;
    int *color;  /* n */
    int *cptr;   /* ncolors+1: entries of colour c are cent[cptr[c] .. cptr[c+1]-1] */
    int *cent;   /* pattern entry indices, grouped by colour */
    int *crow;   /* their rows */
};

typedef struct graph {
    int n;
    int *ptr, *adj; /* adjacency lists (deduplicated, no self loops) */
} graph;

static sv_status build_graph(sv_ctx *ctx, const sv_sparse_pattern *p, graph *g)
{
    int n = p->n;
    /* Columns → rows (CSC of the pattern). */
    int *cptr = sv_calloc(ctx, (size_t)n + 1, sizeof(int), "colouring workspace");
    int *crow = sv_alloc(ctx, (size_t)p->nnz * sizeof(int), "colouring workspace");
    int *mark = sv_alloc(ctx, (size_t)n * sizeof(int), "colouring workspace");
    g->ptr = sv_calloc(ctx, (size_t)n + 1, sizeof(int), "colouring graph");
    g->adj = NULL;
    g->n = n;
    sv_status s = SV_OK;
    if (!cptr || !crow || !mark || !g->ptr) goto fail;
    for (int e = 0; e < p->nnz; e++) cptr[p->colind[e] + 1]++;
    for (int j = 0; j < n; j++) cptr[j + 1] += cptr[j];
    for (int i = 0; i < n; i++)
        for (int e = p->rowptr[i]; e < p->rowptr[i + 1]; e++) crow[cptr[p->colind[e]]++] = i;
    for (int j = n; j > 0; j--) cptr[j] = cptr[j - 1];
    cptr[0] = 0;
    /* Two passes: count the distinct neighbours, then list them. */
    for (int pass = 0; pass < 2; pass++) {
        for (int j = 0; j < n; j++) mark[j] = -1;
        long long cnt = 0;
        for (int j = 0; j < n; j++) {
            mark[j] = j;
            if (pass == 1) cnt = g->ptr[j];
            for (int x = cptr[j]; x < cptr[j + 1]; x++) {
                int i = crow[x];
                for (int e = p->rowptr[i]; e < p->rowptr[i + 1]; e++) {
                    int k = p->colind[e];
                    if (mark[k] == j) continue;
                    mark[k] = j;
                    if (pass == 1) g->adj[cnt] = k;
                    cnt++;
                }
            }
            if (pass == 0) {
                if (cnt > 0x7fffffff) {
                    s = sv_error(SV_ERR_PATTERN, "colouring: the column intersection graph has more than 2^31 edges");
                    goto out;
                }
                g->ptr[j + 1] = (int)cnt;
            }
        }
        if (pass == 0) {
            g->adj = sv_alloc(ctx, (size_t)(cnt ? cnt : 1) * sizeof(int), "colouring graph adjacency");
            if (!g->adj) goto fail;
        }
    }
    goto out;
fail:
    s = sv_last_status();
out:
    sv_free(ctx, cptr);
    sv_free(ctx, crow);
    sv_free(ctx, mark);
    return s;
}

/* Greedy colouring in a given order; returns the number of colours. */
static int greedy(const graph *g, const int *order, int *color, int *forbid)
{
    int n = g->n, nc = 0;
    for (int v = 0; v < n; v++) color[v] = -1, forbid[v] = -1;
    for (int x = 0; x < n; x++) {
        int v = order[x];
        for (int a = g->ptr[v]; a < g->ptr[v + 1]; a++)
            if (color[g->adj[a]] >= 0) forbid[color[g->adj[a]]] = v;
        int c = 0;
        while (forbid[c] == v) c++;
        color[v] = c;
        if (c + 1 > nc) nc = c + 1;
    }
    return nc;
}

static int deg(const graph *g, int v) { return g->ptr[v + 1] - g->ptr[v]; }

static void order_largest_first(const graph *g, int *order)
{
    /* Counting sort by degree, descending; ties in index order. */
    int n = g->n, maxd = 0;
    for (int v = 0; v < n; v++)
        if (deg(g, v) > maxd) maxd = deg(g, v);
    int x = 0;
    for (int d = maxd; d >= 0; d--)
        for (int v = 0; v < n; v++)
            if (deg(g, v) == d) order[x++] = v;
}

/* Smallest-last (Matula & Beck 1983): repeatedly remove a vertex of least
 * remaining degree; colour in the reverse order of removal. */
static void order_smallest_last(const graph *g, int *order, int *rem, char *gone)
{
    int n = g->n;
    for (int v = 0; v < n; v++) rem[v] = deg(g, v), gone[v] = 0;
    for (int x = n - 1; x >= 0; x--) {
        int best = -1;
        for (int v = 0; v < n; v++)
            if (!gone[v] && (best < 0 || rem[v] < rem[best])) best = v;
        gone[best] = 1;
        order[x] = best;
        for (int a = g->ptr[best]; a < g->ptr[best + 1]; a++) rem[g->adj[a]]--;
    }
}

/* Incidence degree (Coleman & Moré 1983): next is the uncoloured vertex with
 * the most already ordered neighbours (ties: larger degree). */
static void order_incidence(const graph *g, int *order, int *inc, char *done)
{
    int n = g->n;
    for (int v = 0; v < n; v++) inc[v] = 0, done[v] = 0;
    for (int x = 0; x < n; x++) {
        int best = -1;
        for (int v = 0; v < n; v++)
            if (!done[v] && (best < 0 || inc[v] > inc[best] || (inc[v] == inc[best] && deg(g, v) > deg(g, best))))
                best = v;
        done[best] = 1;
        order[x] = best;
        for (int a = g->ptr[best]; a < g->ptr[best + 1]; a++) inc[g->adj[a]]++;
    }
}

/* DSATUR: next is the uncoloured vertex with the most distinct neighbour
 * colours (ties: larger degree), coloured greedily at once. `seen` is an
 * n × words bitset of the colours adjacent to each vertex. */
static int dsatur(const graph *g, int *color, int *sat, uint64_t *seen, int words)
{
    int n = g->n, nc = 0;
    for (int v = 0; v < n; v++) color[v] = -1, sat[v] = 0;
    memset(seen, 0, (size_t)n * words * sizeof *seen);
    for (int x = 0; x < n; x++) {
        int best = -1;
        for (int v = 0; v < n; v++)
            if (color[v] < 0 &&
                (best < 0 || sat[v] > sat[best] || (sat[v] == sat[best] && deg(g, v) > deg(g, best))))
                best = v;
        const uint64_t *sb = seen + (size_t)best * words;
        int c = 0;
        while (sb[c >> 6] >> (c & 63) & 1) c++;
        color[best] = c;
        if (c + 1 > nc) nc = c + 1;
        for (int a = g->ptr[best]; a < g->ptr[best + 1]; a++) {
            int u = g->adj[a];
            uint64_t *su = seen + (size_t)u * words;
            if (!(su[c >> 6] >> (c & 63) & 1)) {
                su[c >> 6] |= 1ULL << (c & 63);
                sat[u]++;
            }
        }
    }
    return nc;
}

/* Group the pattern's entries by colour for recovery. */
static sv_status group(sv_sparse_coloring *c, const sv_sparse_pattern *p)
{
    sv_ctx *ctx = c->ctx;
    int n = p->n, nc = c->ncolors;
    c->cptr = sv_calloc(ctx, (size_t)nc + 1, sizeof(int), "colouring groups");
    c->cent = sv_alloc(ctx, (size_t)p->nnz * sizeof(int), "colouring groups");
    c->crow = sv_alloc(ctx, (size_t)p->nnz * sizeof(int), "colouring groups");
    int *next = sv_alloc(ctx, (size_t)nc * sizeof(int) + 1, "colouring workspace");
    if (!c->cptr || !c->cent || !c->crow || !next) {
        sv_free(ctx, next);
        return sv_last_status();
    }
    for (int e = 0; e < p->nnz; e++) c->cptr[c->color[p->colind[e]] + 1]++;
    for (int k = 0; k < nc; k++) c->cptr[k + 1] += c->cptr[k];
    memcpy(next, c->cptr, (size_t)nc * sizeof(int));
    for (int i = 0; i < n; i++)
        for (int e = p->rowptr[i]; e < p->rowptr[i + 1]; e++) {
            int k = c->color[p->colind[e]];
            c->cent[next[k]] = e;
            c->crow[next[k]] = i;
            next[k]++;
        }
    sv_free(ctx, next);
    return SV_OK;
}

sv_status sv_sparse_coloring_from_colors(sv_ctx *ctx, const sv_sparse_pattern *p, const int *colors,
                                         sv_sparse_coloring **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_sparse_coloring_from_colors: out is NULL");
    *out = NULL;
    if (!p || !colors) return sv_error(SV_ERR_ARG, "sv_sparse_coloring_from_colors: pattern or colors is NULL");
    int nc = 0;
    for (int j = 0; j < p->n; j++) {
        if (colors[j] < 0 || colors[j] >= p->n)
            return sv_error(SV_ERR_ARG, "sv_sparse_coloring_from_colors: colors[%d] = %d: expected in [0, %d)", j,
                            colors[j], p->n);
        if (colors[j] + 1 > nc) nc = colors[j] + 1;
    }
    sv_sparse_coloring *c = sv_calloc(ctx, 1, sizeof *c, "colouring");
    if (!c) return sv_last_status();
    c->ctx = ctx;
    c->n = p->n;
    c->nnz = p->nnz;
    c->ncolors = nc;
    c->color = sv_alloc(ctx, (size_t)p->n * sizeof(int), "colouring colours");
    sv_status s = c->color ? SV_OK : sv_last_status();
    if (!s) {
        memcpy(c->color, colors, (size_t)p->n * sizeof(int));
        s = group(c, p);
    }
    if (s) {
        sv_sparse_coloring_destroy(c);
        return s;
    }
    *out = c;
    return SV_OK;
}

void sv_sparse_coloring_destroy(sv_sparse_coloring *c)
{
    if (!c) return;
    sv_ctx *ctx = c->ctx;
    sv_free(ctx, c->color);
    sv_free(ctx, c->cptr);
    sv_free(ctx, c->cent);
    sv_free(ctx, c->crow);
    sv_free(ctx, c);
}

sv_status sv_sparse_color(sv_ctx *ctx, const sv_sparse_pattern *p, sv_sparse_coloring **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_sparse_color: out is NULL");
    *out = NULL;
    if (!p) return sv_error(SV_ERR_ARG, "sv_sparse_color: pattern is NULL");
    int n = p->n;
    graph g = {0};
    sv_status s = build_graph(ctx, p, &g);
    sv_sparse_coloring *c = sv_calloc(ctx, 1, sizeof *c, "colouring");
    int *order = sv_alloc(ctx, (size_t)n * sizeof(int), "colouring workspace");
    int *tmp = sv_alloc(ctx, (size_t)n * sizeof(int), "colouring workspace");
    int *col = sv_alloc(ctx, (size_t)n * sizeof(int), "colouring workspace");
    char *flags = sv_alloc(ctx, (size_t)n, "colouring workspace");
    uint64_t *seen = NULL;
    if (!s && (!c || !order || !tmp || !col || !flags)) s = sv_last_status();
    if (s) goto done;
    c->ctx = ctx;
    c->n = n;
    c->nnz = p->nnz;
    c->color = sv_alloc(ctx, (size_t)n * sizeof(int), "colouring colours");
    if (!c->color) {
        s = sv_last_status();
        goto done;
    }
    /* Natural order first, then the others; keep the fewest colours. */
    for (int v = 0; v < n; v++) order[v] = v;
    int best = greedy(&g, order, c->color, tmp);
    int nc;
#define SV_TRY(expr)                                                               \
    do {                                                                           \
        nc = (expr);                                                               \
        if (nc < best) {                                                           \
            best = nc;                                                             \
            memcpy(c->color, col, (size_t)n * sizeof(int));                        \
        }                                                                          \
    } while (0)
    order_largest_first(&g, order);
    SV_TRY(greedy(&g, order, col, tmp));
    if (n <= SV_COLOR_QUADRATIC_MAX) {
        order_smallest_last(&g, order, tmp, flags);
        SV_TRY(greedy(&g, order, col, tmp));
        order_incidence(&g, order, tmp, flags);
        SV_TRY(greedy(&g, order, col, tmp));
        int maxd = 0;
        for (int v = 0; v < n; v++)
            if (deg(&g, v) > maxd) maxd = deg(&g, v);
        int words = (maxd + 1 + 63) / 64;
        seen = sv_alloc(ctx, (size_t)n * words * sizeof *seen, "colouring DSATUR bitsets");
        if (seen) {
            SV_TRY(dsatur(&g, col, tmp, seen, words));
        } else {
            sv_clear_error(); /* DSATUR is optional: skip it when memory is short */
        }
    }
#undef SV_TRY
    c->ncolors = best;
    s = group(c, p);
done:
    sv_free(ctx, g.ptr);
    sv_free(ctx, g.adj);
    sv_free(ctx, order);
    sv_free(ctx, tmp);
    sv_free(ctx, col);
    sv_free(ctx, flags);
    sv_free(ctx, seen);
    if (s) {
        sv_sparse_coloring_destroy(c);
        return s;
    }
    *out = c;
    return SV_OK;
}

int sv_sparse_coloring_count(const sv_sparse_coloring *c) { return c ? c->ncolors : 0; }
const int *sv_sparse_coloring_colors(const sv_sparse_coloring *c) { return c ? c->color : NULL; }

sv_status sv_sparse_coloring_check(const sv_sparse_coloring *c, const sv_sparse_pattern *p)
{
    if (!c || !p) return sv_error(SV_ERR_ARG, "sv_sparse_coloring_check: coloring or pattern is NULL");
    if (c->n != p->n)
        return sv_error(SV_ERR_ARG, "sv_sparse_coloring_check: colouring has n = %d, pattern n = %d", c->n, p->n);
    /* seen_row[k] = last row that met colour k, seen_col[k] = its column. */
    int *seen_row = sv_alloc(c->ctx, 2 * (size_t)c->ncolors * sizeof(int) + 1, "colouring check workspace");
    if (!seen_row) return sv_last_status();
    int *seen_col = seen_row + c->ncolors;
    for (int k = 0; k < c->ncolors; k++) seen_row[k] = -1;
    sv_status s = SV_OK;
    for (int i = 0; i < p->n && !s; i++)
        for (int e = p->rowptr[i]; e < p->rowptr[i + 1]; e++) {
            int j = p->colind[e], k = c->color[j];
            if (k < 0 || k >= c->ncolors) {
                s = sv_error(SV_ERR_PATTERN, "colouring: column %d has colour %d outside [0, %d)", j, k, c->ncolors);
                break;
            }
            if (seen_row[k] == i) {
                s = sv_error(SV_ERR_PATTERN,
                             "colouring: row %d meets columns %d and %d of the same colour %d: not structurally "
                             "orthogonal",
                             i, seen_col[k], j, k);
                break;
            }
            seen_row[k] = i;
            seen_col[k] = j;
        }
    sv_free(c->ctx, seen_row);
    return s;
}

void sv_sparse_recover_color(const sv_sparse_coloring *c, const sv_sparse_lu *lu, int color, const double *jv,
                             double alpha, double *buf)
{
    if (color < 0 || color >= c->ncolors) return;
    const int *es = lu->entry_slot;
    for (int x = c->cptr[color]; x < c->cptr[color + 1]; x++) buf[es[c->cent[x]]] += alpha * jv[c->crow[x]];
}

void sv_sparse_recover_color_values(const sv_sparse_coloring *c, const sv_sparse_pattern *pattern, int color,
                                    const double *jv, double *values)
{
    (void)pattern;
    if (color < 0 || color >= c->ncolors) return;
    for (int x = c->cptr[color]; x < c->cptr[color + 1]; x++) values[c->cent[x]] = jv[c->crow[x]];
}
