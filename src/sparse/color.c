/* Colouring of the column intersection graph (columns that share a row are
 * adjacent, so they must get different colours): then one directional
 * derivative J·d_c per colour c recovers every entry of J, since each row
 * meets each colour group in at most one column (Curtis, Powell & Reid
 * 1974; Coleman & Moré 1983).
 *
 * Written here because SuiteSparse has no Jacobian colouring and ColPack is
 * C++ and not packaged for Debian. SV_SPARSE_COLOR_BEST tries several greedy
 * orderings and keeps the fewest colours: natural, largest-first,
 * smallest-last, incidence-degree and DSATUR (Brélaz 1979). The last three
 * are quadratic in the number of columns as written here, so they run only
 * up to SV_COLOR_QUADRATIC_MAX columns. The single orderings (natural,
 * column count) exist so that a caller can reproduce one greedy pass
 * exactly (the ODE module's colouring is one of them: docs/ode.md). */
#include <stdlib.h>
#include <string.h>

#include "sparse_internal.h"

#define SV_COLOR_QUADRATIC_MAX 6000

struct sv_sparse_coloring {
    sv_ctx *ctx;
    int n, nnz, ncolors;
    int *color;  /* n */
    int *cptr;   /* ncolors+1: entries of colour c are cent[cptr[c] .. cptr[c+1]-1] */
    int *cent;   /* entry indices of the coloured structure, grouped by colour */
    int *crow;   /* their rows */
    int *ccol;   /* their columns */
};

/* The structure being coloured: an n × n CSR, optionally with every
 * diagonal entry added (materialised in `own` so the graph code sees one
 * plain CSR). */
typedef struct structure {
    int n, nnz;
    const int *rowptr, *colind;
    int *own; /* n+1 row pointers then the columns, when the diagonal was added */
} structure;

typedef struct graph {
    int n;
    int *ptr, *adj; /* adjacency lists (deduplicated, no self loops) */
} graph;

/* ---- the structure ---------------------------------------------------------- */
static sv_status structure_init(sv_ctx *ctx, int n, const int *rowptr, const int *colind, int add_diagonal,
                                structure *s)
{
    s->n = n;
    s->nnz = rowptr[n];
    s->rowptr = rowptr;
    s->colind = colind;
    s->own = NULL;
    if (!add_diagonal) return SV_OK;
    /* Each row gets (i, i) appended; a duplicate of a listed diagonal is
     * harmless because neighbour lists are deduplicated. */
    s->own = sv_alloc(ctx, ((size_t)n + 1 + (size_t)s->nnz + (size_t)n) * sizeof(int), "colouring structure");
    if (!s->own) return sv_last_status();
    int *rp = s->own, *ci = s->own + n + 1, w = 0;
    for (int i = 0; i < n; i++) {
        rp[i] = w;
        for (int e = rowptr[i]; e < rowptr[i + 1]; e++) ci[w++] = colind[e];
        ci[w++] = i;
    }
    rp[n] = w;
    s->nnz = w;
    s->rowptr = rp;
    s->colind = ci;
    return SV_OK;
}

static sv_status check_csr(int n, const int *rowptr, const int *colind, const char *fn)
{
    if (n < 1) return sv_error(SV_ERR_ARG, "%s: n = %d: expected n >= 1", fn, n);
    if (!rowptr) return sv_error(SV_ERR_ARG, "%s: rowptr is NULL", fn);
    if (rowptr[0] != 0) return sv_error(SV_ERR_PATTERN, "%s: rowptr[0] = %d: expected 0", fn, rowptr[0]);
    for (int i = 0; i < n; i++)
        if (rowptr[i + 1] < rowptr[i])
            return sv_error(SV_ERR_PATTERN, "%s: rowptr[%d] = %d < rowptr[%d] = %d: must not decrease", fn, i + 1,
                            rowptr[i + 1], i, rowptr[i]);
    if (rowptr[n] > 0 && !colind) return sv_error(SV_ERR_ARG, "%s: colind is NULL", fn);
    for (int e = 0; e < rowptr[n]; e++)
        if (colind[e] < 0 || colind[e] >= n)
            return sv_error(SV_ERR_PATTERN, "%s: colind[%d] = %d: expected in [0, %d)", fn, e, colind[e], n);
    return SV_OK;
}

/* ---- the column intersection graph ----------------------------------------- */
/* Rows of each column (CSC of the structure). */
static sv_status columns_rows(sv_ctx *ctx, const structure *s, int **cptr_out, int **crow_out)
{
    int n = s->n;
    int *cptr = sv_calloc(ctx, (size_t)n + 1, sizeof(int), "colouring workspace");
    int *crow = sv_alloc(ctx, (size_t)(s->nnz ? s->nnz : 1) * sizeof(int), "colouring workspace");
    if (!cptr || !crow) {
        sv_free(ctx, cptr);
        sv_free(ctx, crow);
        return sv_last_status();
    }
    for (int e = 0; e < s->nnz; e++) cptr[s->colind[e] + 1]++;
    for (int j = 0; j < n; j++) cptr[j + 1] += cptr[j];
    for (int i = 0; i < n; i++)
        for (int e = s->rowptr[i]; e < s->rowptr[i + 1]; e++) crow[cptr[s->colind[e]]++] = i;
    for (int j = n; j > 0; j--) cptr[j] = cptr[j - 1];
    cptr[0] = 0;
    *cptr_out = cptr;
    *crow_out = crow;
    return SV_OK;
}

/* Distinct neighbours of every column: counted in a first pass (pass 0),
 * listed in a second (pass 1). */
static sv_status neighbours(const structure *s, const int *cptr, const int *crow, int *mark, graph *g, int pass)
{
    int n = s->n;
    long long cnt = 0;
    for (int j = 0; j < n; j++) mark[j] = -1;
    for (int j = 0; j < n; j++) {
        mark[j] = j;
        if (pass == 1) cnt = g->ptr[j];
        for (int x = cptr[j]; x < cptr[j + 1]; x++) {
            int i = crow[x];
            for (int e = s->rowptr[i]; e < s->rowptr[i + 1]; e++) {
                int k = s->colind[e];
                if (mark[k] == j) continue;
                mark[k] = j;
                if (pass == 1) g->adj[cnt] = k;
                cnt++;
            }
        }
        if (pass == 0) {
            if (cnt > 0x7fffffff)
                return sv_error(SV_ERR_PATTERN, "colouring: the column intersection graph has more than 2^31 edges");
            g->ptr[j + 1] = (int)cnt;
        }
    }
    return SV_OK;
}

static sv_status build_graph(sv_ctx *ctx, const structure *s, graph *g)
{
    int n = s->n, *cptr = NULL, *crow = NULL;
    g->n = n;
    g->adj = NULL;
    g->ptr = sv_calloc(ctx, (size_t)n + 1, sizeof(int), "colouring graph");
    int *mark = sv_alloc(ctx, (size_t)n * sizeof(int), "colouring workspace");
    sv_status st = g->ptr && mark ? columns_rows(ctx, s, &cptr, &crow) : sv_last_status();
    if (st == SV_OK) st = neighbours(s, cptr, crow, mark, g, 0);
    if (st == SV_OK) {
        int edges = g->ptr[n];
        g->adj = sv_alloc(ctx, (size_t)(edges ? edges : 1) * sizeof(int), "colouring graph adjacency");
        st = g->adj ? neighbours(s, cptr, crow, mark, g, 1) : sv_last_status();
    }
    sv_free(ctx, cptr);
    sv_free(ctx, crow);
    sv_free(ctx, mark);
    return st;
}

static void graph_free(sv_ctx *ctx, graph *g) { sv_sparse_free_all(ctx, (void *[]){g->ptr, g->adj}, 2); }

/* ---- orderings and greedy passes ------------------------------------------ */
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

static void order_natural(int n, int *order)
{
    for (int v = 0; v < n; v++) order[v] = v;
}

/* Decreasing key, ties in index order (a counting sort: keys are < n or
 * at most nnz, and the result is the same as a stable sort). */
static void order_by_key(int n, const int *key, int *order)
{
    int maxk = 0;
    for (int v = 0; v < n; v++)
        if (key[v] > maxk) maxk = key[v];
    int x = 0;
    for (int k = maxk; k >= 0; k--)
        for (int v = 0; v < n; v++)
            if (key[v] == k) order[x++] = v;
}

/* Largest-first: decreasing degree in the graph. */
static void order_largest_first(const graph *g, int *order, int *key)
{
    for (int v = 0; v < g->n; v++) key[v] = deg(g, v);
    order_by_key(g->n, key, order);
}

/* Decreasing number of entries per column of the structure. */
static void order_column_count(const structure *s, int *order, int *key)
{
    memset(key, 0, (size_t)s->n * sizeof(int));
    for (int e = 0; e < s->nnz; e++) key[s->colind[e]]++;
    order_by_key(s->n, key, order);
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

/* Workspace of the orderings: order, a scratch int array and the colours
 * of the trial in progress (n each), and n flags. */
typedef struct trials {
    int *order, *tmp, *col;
    char *flags;
} trials;

/* Keep the trial in t->col when it needs fewer colours than *best. */
static void keep_if_fewer(int n, int nc, const trials *t, int *color, int *best)
{
    if (nc >= *best) return;
    *best = nc;
    memcpy(color, t->col, (size_t)n * sizeof(int));
}

static int color_dsatur(sv_ctx *ctx, const graph *g, const trials *t, int *color, int best)
{
    int n = g->n, maxd = 0;
    for (int v = 0; v < n; v++)
        if (deg(g, v) > maxd) maxd = deg(g, v);
    int words = (maxd + 1 + 63) / 64;
    uint64_t *seen = sv_alloc(ctx, (size_t)n * words * sizeof *seen, "colouring DSATUR bitsets");
    if (!seen) {
        /* DSATUR is only one more candidate: without memory for its bitsets
         * the colouring stays the best of the other orderings. */
        sv_clear_error();
        return best;
    }
    keep_if_fewer(n, dsatur(g, t->col, t->tmp, seen, words), t, color, &best);
    sv_free(ctx, seen);
    return best;
}

/* Natural order first, then the others; the fewest colours win (the
 * earlier ordering on a tie). */
static int color_best(sv_ctx *ctx, const graph *g, const trials *t, int *color)
{
    int n = g->n;
    order_natural(n, t->order);
    int best = greedy(g, t->order, color, t->tmp);
    order_largest_first(g, t->order, t->tmp);
    keep_if_fewer(n, greedy(g, t->order, t->col, t->tmp), t, color, &best);
    if (n > SV_COLOR_QUADRATIC_MAX) return best;
    order_smallest_last(g, t->order, t->tmp, t->flags);
    keep_if_fewer(n, greedy(g, t->order, t->col, t->tmp), t, color, &best);
    order_incidence(g, t->order, t->tmp, t->flags);
    keep_if_fewer(n, greedy(g, t->order, t->col, t->tmp), t, color, &best);
    return color_dsatur(ctx, g, t, color, best);
}

/* colour[] and the count for the requested ordering. */
static sv_status color_structure(sv_ctx *ctx, const structure *s, sv_sparse_color_order ord, int *color,
                                 int *ncolors)
{
    int n = s->n;
    graph g = {0};
    trials t;
    t.order = sv_alloc(ctx, (size_t)n * sizeof(int), "colouring workspace");
    t.tmp = sv_alloc(ctx, (size_t)n * sizeof(int), "colouring workspace");
    t.col = sv_alloc(ctx, (size_t)n * sizeof(int), "colouring workspace");
    t.flags = sv_alloc(ctx, (size_t)n, "colouring workspace");
    sv_status st = t.order && t.tmp && t.col && t.flags ? build_graph(ctx, s, &g) : sv_last_status();
    if (st == SV_OK) {
        switch (ord) {
        case SV_SPARSE_COLOR_NATURAL:
            order_natural(n, t.order);
            *ncolors = greedy(&g, t.order, color, t.tmp);
            break;
        case SV_SPARSE_COLOR_COLUMN_COUNT:
            order_column_count(s, t.order, t.tmp);
            *ncolors = greedy(&g, t.order, color, t.tmp);
            break;
        default:
            *ncolors = color_best(ctx, &g, &t, color);
            break;
        }
    }
    graph_free(ctx, &g);
    sv_free(ctx, t.order);
    sv_free(ctx, t.tmp);
    sv_free(ctx, t.col);
    sv_free(ctx, t.flags);
    return st;
}

/* ---- the colouring object -------------------------------------------------- */
/* Group the structure's entries by colour for recovery. */
static sv_status group(sv_sparse_coloring *c, int n, const int *rowptr, const int *colind)
{
    sv_ctx *ctx = c->ctx;
    int nnz = c->nnz, nc = c->ncolors;
    size_t nb = (size_t)(nnz ? nnz : 1) * sizeof(int);
    c->cptr = sv_calloc(ctx, (size_t)nc + 1, sizeof(int), "colouring groups");
    c->cent = sv_alloc(ctx, nb, "colouring groups");
    c->crow = sv_alloc(ctx, nb, "colouring groups");
    c->ccol = sv_alloc(ctx, nb, "colouring groups");
    int *next = sv_alloc(ctx, (size_t)nc * sizeof(int) + 1, "colouring workspace");
    if (!c->cptr || !c->cent || !c->crow || !c->ccol || !next) {
        sv_free(ctx, next);
        return sv_last_status();
    }
    for (int e = 0; e < nnz; e++) c->cptr[c->color[colind[e]] + 1]++;
    for (int k = 0; k < nc; k++) c->cptr[k + 1] += c->cptr[k];
    memcpy(next, c->cptr, (size_t)nc * sizeof(int));
    for (int i = 0; i < n; i++)
        for (int e = rowptr[i]; e < rowptr[i + 1]; e++) {
            int k = c->color[colind[e]];
            c->cent[next[k]] = e;
            c->crow[next[k]] = i;
            c->ccol[next[k]] = colind[e];
            next[k]++;
        }
    sv_free(ctx, next);
    return SV_OK;
}

static sv_status coloring_new(sv_ctx *ctx, int n, int nnz, sv_sparse_coloring **out)
{
    sv_sparse_coloring *c = sv_calloc(ctx, 1, sizeof *c, "colouring");
    if (!c) return sv_last_status();
    c->ctx = ctx;
    c->n = n;
    c->nnz = nnz;
    c->color = sv_alloc(ctx, (size_t)n * sizeof(int), "colouring colours");
    if (!c->color) {
        sv_status st = sv_last_status();
        sv_sparse_coloring_destroy(c);
        return st;
    }
    *out = c;
    return SV_OK;
}

/* Colour, then group the entries of the structure as given (rowptr, colind). */
static sv_status coloring_build(sv_ctx *ctx, int n, const int *rowptr, const int *colind, const structure *s,
                                sv_sparse_color_order ord, sv_sparse_coloring **out)
{
    sv_sparse_coloring *c = NULL;
    sv_status st = coloring_new(ctx, n, rowptr[n], &c);
    if (st != SV_OK) return st;
    st = color_structure(ctx, s, ord, c->color, &c->ncolors);
    if (st == SV_OK) st = group(c, n, rowptr, colind);
    if (st == SV_OK)
        *out = c;
    else
        sv_sparse_coloring_destroy(c);
    return st;
}

void sv_sparse_color_options_default(sv_sparse_color_options *opt)
{
    if (!opt) return;
    memset(opt, 0, sizeof *opt);
    opt->order = SV_SPARSE_COLOR_BEST;
    opt->add_diagonal = 0;
}

sv_status sv_sparse_color_csr(sv_ctx *ctx, int n, const int *rowptr, const int *colind,
                              const sv_sparse_color_options *opt, sv_sparse_coloring **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_sparse_color_csr: out is NULL");
    *out = NULL;
    sv_sparse_color_options d;
    if (!opt) {
        sv_sparse_color_options_default(&d);
        opt = &d;
    }
    if (opt->order != SV_SPARSE_COLOR_BEST && opt->order != SV_SPARSE_COLOR_NATURAL &&
        opt->order != SV_SPARSE_COLOR_COLUMN_COUNT)
        return sv_error(SV_ERR_ARG, "sv_sparse_color_csr: order = %d: expected SV_SPARSE_COLOR_BEST (0), _NATURAL "
                                    "(1) or _COLUMN_COUNT (2)", (int)opt->order);
    if (opt->add_diagonal != 0 && opt->add_diagonal != 1)
        return sv_error(SV_ERR_ARG, "sv_sparse_color_csr: add_diagonal = %d: expected 0 or 1", opt->add_diagonal);
    sv_status st = check_csr(n, rowptr, colind, "sv_sparse_color_csr");
    if (st != SV_OK) return st;
    structure s;
    st = structure_init(ctx, n, rowptr, colind, opt->add_diagonal, &s);
    if (st == SV_OK) st = coloring_build(ctx, n, rowptr, colind, &s, opt->order, out);
    sv_free(ctx, s.own);
    return st;
}

sv_status sv_sparse_color(sv_ctx *ctx, const sv_sparse_pattern *p, sv_sparse_coloring **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_sparse_color: out is NULL");
    *out = NULL;
    if (!p) return sv_error(SV_ERR_ARG, "sv_sparse_color: pattern is NULL");
    structure s;
    sv_status st = structure_init(ctx, p->n, p->rowptr, p->colind, 0, &s);
    if (st == SV_OK) st = coloring_build(ctx, p->n, p->rowptr, p->colind, &s, SV_SPARSE_COLOR_BEST, out);
    return st;
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
    sv_sparse_coloring *c = NULL;
    sv_status st = coloring_new(ctx, p->n, p->nnz, &c);
    if (st != SV_OK) return st;
    memcpy(c->color, colors, (size_t)p->n * sizeof(int));
    c->ncolors = nc;
    st = group(c, p->n, p->rowptr, p->colind);
    if (st == SV_OK)
        *out = c;
    else
        sv_sparse_coloring_destroy(c);
    return st;
}

void sv_sparse_coloring_destroy(sv_sparse_coloring *c)
{
    if (c) sv_sparse_free_all(c->ctx, (void *[]){c->color, c->cptr, c->cent, c->crow, c->ccol, c}, 6);
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

void sv_sparse_recover_color_values(const sv_sparse_coloring *c, int color, const double *jv, const double *scale,
                                    double *values)
{
    if (color < 0 || color >= c->ncolors) return;
    if (!scale) {
        for (int x = c->cptr[color]; x < c->cptr[color + 1]; x++) values[c->cent[x]] = jv[c->crow[x]];
        return;
    }
    for (int x = c->cptr[color]; x < c->cptr[color + 1]; x++)
        values[c->cent[x]] = jv[c->crow[x]] / scale[c->ccol[x]];
}
