/* A cell map's merged outlines: one polygon per 4-connected piece of metal,
 * holes joined to the outline by zero-width cut lines.
 *
 * Steps: label the pieces (4-connected: cells meeting only at a corner are
 * separate, as for the planar model); trace every boundary loop with the
 * metal on its left (outlines counter-clockwise, holes clockwise), taking
 * the left turn where two pieces meet at a corner so that a loop never
 * crosses from one piece to another; join each piece's holes, lowest
 * first, by a vertical cut from the hole's lowest-leftmost corner down
 * through metal to the first boundary below, which belongs to the outline
 * or to a hole joined before (it lies lower); a polygon longer than
 * max_points is split: the piece's lower and upper rows are outlined
 * apart, recursively (one row of one piece is a rectangle). */
#include <stdlib.h>
#include <string.h>

#include "gds_internal.h"

/* A growable array of ints in the context's budget. */
typedef struct ivec {
    sv_ctx *ctx;
    int *v;
    size_t n, cap;
} ivec;

static sv_status ivec_push(ivec *a, int x)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 256;
        int *v = sv_alloc(a->ctx, cap * sizeof *v, "cell map outline (scratch)");
        if (!v) return sv_last_status();
        if (a->n) memcpy(v, a->v, a->n * sizeof *v);
        sv_free(a->ctx, a->v);
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return SV_OK;
}

static void ivec_free(ivec *a)
{
    sv_free(a->ctx, a->v);
    a->v = NULL;
    a->n = a->cap = 0;
}

/* A region of the map: a w × h mask whose cell (0, 0) is the grid's
 * (ox, oy). */
typedef struct region {
    const unsigned char *m;
    int w, h, ox, oy;
} region;

static int metal(const region *r, int i, int j)
{
    return i >= 0 && j >= 0 && i < r->w && j < r->h && r->m[i + (size_t)r->w * j];
}

/* What the outline writes into: the set, the grid, the limit. */
typedef struct sink {
    sv_gds_shapes *out;
    const sv_gds_grid *grid;
    int layer, datatype, max_points;
} sink;

/* 4-connected labels 1..count of the region's metal (0: empty). */
static sv_status label_pieces(sv_ctx *ctx, const region *r, int *lab, int *count)
{
    size_t n = (size_t)r->w * r->h;
    memset(lab, 0, n * sizeof *lab);
    int *queue = sv_alloc(ctx, n * sizeof *queue, "cell map outline (labels)");
    if (!queue) return sv_last_status();
    int c = 0;
    for (size_t q = 0; q < n; q++) {
        if (!r->m[q] || lab[q]) continue;
        lab[q] = ++c;
        size_t head = 0, tail = 0;
        queue[tail++] = (int)q;
        while (head < tail) {
            int at = queue[head++], i = at % r->w, j = at / r->w;
            static const int di[4] = {1, -1, 0, 0}, dj[4] = {0, 0, 1, -1};
            for (int k = 0; k < 4; k++) {
                int a = i + di[k], b = j + dj[k];
                if (!metal(r, a, b)) continue;
                size_t nb = (size_t)a + (size_t)r->w * b;
                if (lab[nb]) continue;
                lab[nb] = c;
                queue[tail++] = (int)nb;
            }
        }
    }
    sv_free(ctx, queue);
    *count = c;
    return SV_OK;
}

/* Directions 0 +x, 1 +y, 2 −x, 3 −y; a cell's side s is the boundary edge
 * run in direction s with the cell on its left (bottom, right, top, left). */
static const int DX[4] = {1, 0, -1, 0}, DY[4] = {0, 1, 0, -1};
static const int SIDE_START_X[4] = {0, 1, 1, 0}, SIDE_START_Y[4] = {0, 0, 1, 1};

static int is_boundary(const region *r, int i, int j, int s)
{
    /* the neighbour across side s: right of direction s */
    return metal(r, i, j) && !metal(r, i - DX[(s + 1) % 4], j - DY[(s + 1) % 4]);
}

/* The loops found: vertices (x, y pairs, grid-line indices of the whole
 * grid) of loop k from first[k] for len[k] vertices, its piece and twice
 * its signed area. */
typedef struct loops {
    ivec xy, first, len, piece;
    long long *area2;
} loops;

/* Trace the loop through cell (i, j)'s side s, marking its edges in seen
 * (4 bits a cell); corners only (a vertex where the direction changes). */
static sv_status trace_loop(const region *r, unsigned char *seen, int i, int j, int s, ivec *xy)
{
    int ci = i, cj = j, cs = s, prev = -1;
    size_t begin = xy->n;
    int first_dir = -1;
    sv_status st;
    do {
        seen[ci + (size_t)r->w * cj] |= (unsigned char)(1u << cs);
        if (cs != prev) {
            if ((st = ivec_push(xy, r->ox + ci + SIDE_START_X[cs]))) return st;
            if ((st = ivec_push(xy, r->oy + cj + SIDE_START_Y[cs]))) return st;
            if (first_dir < 0) first_dir = cs;
        }
        prev = cs;
        /* the cells ahead on the left and on the right of the edge's end */
        int al_i = ci + DX[cs], al_j = cj + DY[cs];
        int ar_i = al_i - DX[(cs + 1) % 4], ar_j = al_j - DY[(cs + 1) % 4];
        if (!metal(r, al_i, al_j)) { /* turn left around the same cell (also where pieces meet at a corner) */
            cs = (cs + 1) % 4;
        } else if (!metal(r, ar_i, ar_j)) { /* straight on */
            ci = al_i;
            cj = al_j;
        } else { /* turn right */
            ci = ar_i;
            cj = ar_j;
            cs = (cs + 3) % 4;
        }
    } while (ci != i || cj != j || cs != s);
    /* the start is a corner only if the last edge ran another way */
    if (prev == first_dir && xy->n - begin > 2) {
        memmove(xy->v + begin, xy->v + begin + 2, (xy->n - begin - 2) * sizeof *xy->v);
        xy->n -= 2;
    }
    return SV_OK;
}

static long long area2_of(const int *v, int n)
{
    long long a = 0;
    for (int k = 0; k < n; k++) {
        int q = (k + 1) % n;
        a += (long long)v[2 * k] * v[2 * q + 1] - (long long)v[2 * q] * v[2 * k + 1];
    }
    return a;
}

static sv_status trace_all(sv_ctx *ctx, const region *r, const int *lab, loops *L)
{
    size_t n = (size_t)r->w * r->h;
    unsigned char *seen = sv_calloc(ctx, n, 1, "cell map outline (edges)");
    if (!seen) return sv_last_status();
    sv_status st = SV_OK;
    for (int j = 0; j < r->h && !st; j++)
        for (int i = 0; i < r->w && !st; i++)
            for (int s = 0; s < 4 && !st; s++) {
                if (!is_boundary(r, i, j, s) || (seen[i + (size_t)r->w * j] >> s & 1)) continue;
                size_t at = L->xy.n;
                if ((st = trace_loop(r, seen, i, j, s, &L->xy))) break;
                if ((st = ivec_push(&L->first, (int)(at / 2)))) break;
                if ((st = ivec_push(&L->len, (int)((L->xy.n - at) / 2)))) break;
                st = ivec_push(&L->piece, lab[i + (size_t)r->w * j]);
            }
    sv_free(ctx, seen);
    if (st) return st;
    if (!(L->area2 = sv_alloc(ctx, (L->len.n + 1) * sizeof *L->area2, "cell map outline (areas)")))
        return sv_last_status();
    for (size_t k = 0; k < L->len.n; k++) L->area2[k] = area2_of(L->xy.v + 2 * (size_t)L->first.v[k], L->len.v[k]);
    return SV_OK;
}

/* The lowest, then leftmost vertex of loop k: its index within the loop. */
static int lowest_left(const loops *L, int k)
{
    const int *v = L->xy.v + 2 * (size_t)L->first.v[k];
    int best = 0;
    for (int q = 1; q < L->len.v[k]; q++)
        if (v[2 * q + 1] < v[2 * best + 1] || (v[2 * q + 1] == v[2 * best + 1] && v[2 * q] < v[2 * best])) best = q;
    return best;
}

/* Insert at position `at` of poly (x, y pairs) the n pairs of `ins`. */
static sv_status insert_pairs(ivec *poly, size_t at, const int *ins, size_t n)
{
    for (size_t q = 0; q < 2 * n; q++) {
        sv_status st = ivec_push(poly, 0);
        if (st) return st;
    }
    memmove(poly->v + 2 * (at + n), poly->v + 2 * at, (poly->n - 2 * (at + n)) * sizeof *poly->v);
    memcpy(poly->v + 2 * at, ins, 2 * n * sizeof *ins);
    return SV_OK;
}

/* Join hole loop k into poly by a cut from its lowest-left corner v down
 * to the boundary point P below: poly gets P, v, the hole from v round to
 * v, then P again, after P (a vertex) or after the edge's start. */
static sv_status join_hole(const region *r, const loops *L, int k, ivec *poly, ivec *tmp)
{
    const int *hv = L->xy.v + 2 * (size_t)L->first.v[k];
    int m = L->len.v[k], v0 = lowest_left(L, k);
    int X = hv[2 * v0], Y = hv[2 * v0 + 1];
    /* down through metal while both cells beside the line x = X are metal */
    int y = Y - 1;
    while (metal(r, X - 1 - r->ox, y - r->oy) && metal(r, X - r->ox, y - r->oy)) y--;
    int py = y + 1;
    size_t np = poly->n / 2, at = np;
    int on_vertex = 0;
    for (size_t q = 0; q < np && at == np; q++) {
        const int *a = poly->v + 2 * q, *b = poly->v + 2 * ((q + 1) % np);
        if (a[0] == X && a[1] == py) {
            at = q;
            on_vertex = 1;
        } else if (a[1] == py && b[1] == py && ((a[0] < X && X < b[0]) || (b[0] < X && X < a[0]))) {
            at = q;
        }
    }
    if (at == np) return sv_error(SV_ERR_INTERNAL, "cell map outline: no boundary below hole corner (%d, %d)", X, Y);
    tmp->n = 0;
    sv_status st;
    if (!on_vertex && ((st = ivec_push(tmp, X)) || (st = ivec_push(tmp, py)))) return st;
    for (int q = 0; q <= m; q++) {
        int w = (v0 + q) % m;
        if ((st = ivec_push(tmp, hv[2 * w])) || (st = ivec_push(tmp, hv[2 * w + 1]))) return st;
    }
    if ((st = ivec_push(tmp, X)) || (st = ivec_push(tmp, py))) return st;
    return insert_pairs(poly, at + 1, tmp->v, tmp->n / 2);
}

/* A hole with its joining key: its lowest, then leftmost corner. */
typedef struct hole {
    int loop, x, y;
} hole;

static int cmp_hole(const void *a, const void *b)
{
    const hole *p = a, *q = b;
    if (p->y != q->y) return p->y < q->y ? -1 : 1;
    return (p->x > q->x) - (p->x < q->x);
}

static sv_status emit(const sink *out, const ivec *poly)
{
    int n = (int)(poly->n / 2);
    double *xy = sv_alloc(out->out->ctx, 2 * (size_t)n * sizeof *xy, "cell map outline (polygon)");
    if (!xy) return sv_last_status();
    for (int q = 0; q < n; q++) {
        xy[2 * q] = out->grid->x0 + poly->v[2 * q] * out->grid->dx;
        xy[2 * q + 1] = out->grid->y0 + poly->v[2 * q + 1] * out->grid->dy;
    }
    sv_status st = gds_shapes_add(out->out, out->layer, out->datatype, xy, n, "outline", -1, -1);
    sv_free(out->out->ctx, xy);
    return st;
}

static sv_status outline_region(sv_ctx *ctx, const region *r, const sink *out);

/* Piece c's cells in rows [j0, j1) of r, as a region of their own. */
static sv_status outline_rows(sv_ctx *ctx, const region *r, const int *lab, int c, int j0, int j1, const sink *out)
{
    int h = j1 - j0;
    unsigned char *m = sv_alloc(ctx, (size_t)r->w * h, "cell map outline (split)");
    if (!m) return sv_last_status();
    for (int j = 0; j < h; j++)
        for (int i = 0; i < r->w; i++) m[i + (size_t)r->w * j] = lab[i + (size_t)r->w * (j + j0)] == c;
    region sub = {m, r->w, h, r->ox, r->oy + j0};
    sv_status st = outline_region(ctx, &sub, out);
    sv_free(ctx, m);
    return st;
}

/* Piece c (its loops: group[0..n)): its outline with its holes joined,
 * or split when too long. */
static sv_status outline_piece(sv_ctx *ctx, const region *r, const int *lab, const loops *L, int c, const int *group,
                               int n, const sink *out, ivec *poly, ivec *tmp, hole *holes)
{
    int outer = -1, nh = 0;
    sv_status st;
    for (int q = 0; q < n; q++) {
        int k = group[q];
        if (L->area2[k] > 0) {
            outer = k;
            continue;
        }
        const int *v = L->xy.v + 2 * ((size_t)L->first.v[k] + lowest_left(L, k));
        holes[nh++] = (hole){k, v[0], v[1]};
    }
    if (outer < 0) return sv_error(SV_ERR_INTERNAL, "cell map outline: piece %d has no outer loop", c);
    qsort(holes, (size_t)nh, sizeof *holes, cmp_hole);
    poly->n = 0;
    for (int q = 0; q < 2 * L->len.v[outer]; q++)
        if ((st = ivec_push(poly, L->xy.v[2 * (size_t)L->first.v[outer] + q]))) return st;
    for (int q = 0; q < nh && poly->n / 2 <= (size_t)out->max_points; q++)
        if ((st = join_hole(r, L, holes[q].loop, poly, tmp))) return st;
    if (poly->n / 2 <= (size_t)out->max_points) return emit(out, poly);
    /* too long: the piece's rows in two halves */
    int j0 = r->h, j1 = -1;
    for (int j = 0; j < r->h; j++)
        for (int i = 0; i < r->w; i++)
            if (lab[i + (size_t)r->w * j] == c) {
                if (j < j0) j0 = j;
                j1 = j + 1;
            }
    int mid = j0 + (j1 - j0) / 2;
    if (j1 - j0 < 2) return sv_error(SV_ERR_INTERNAL, "cell map outline: one row of a piece is longer than the limit");
    if ((st = outline_rows(ctx, r, lab, c, j0, mid, out))) return st;
    return outline_rows(ctx, r, lab, c, mid, j1, out);
}

/* The loops grouped by piece (a counting sort): piece c's are
 * order[start[c - 1] .. start[c]). */
static sv_status group_loops(sv_ctx *ctx, const loops *L, int count, int **order, int **start)
{
    size_t n = L->len.n;
    *order = sv_alloc(ctx, (n + 1) * sizeof **order, "cell map outline (loop order)");
    *start = sv_calloc(ctx, (size_t)count + 2, sizeof **start, "cell map outline (loop groups)");
    if (!*order || !*start) return sv_last_status();
    for (size_t k = 0; k < n; k++) (*start)[L->piece.v[k]]++;
    for (int c = 1; c <= count + 1; c++) (*start)[c] += (*start)[c - 1];
    for (size_t k = n; k-- > 0;) (*order)[--(*start)[L->piece.v[k]]] = (int)k;
    /* now start[c] is where piece c's loops begin (start[0] = 0: no piece 0) */
    return SV_OK;
}

static sv_status outline_region(sv_ctx *ctx, const region *r, const sink *out)
{
    int *lab = sv_alloc(ctx, (size_t)r->w * r->h * sizeof *lab, "cell map outline (labels)");
    if (!lab) return sv_last_status();
    loops L = {{ctx, NULL, 0, 0}, {ctx, NULL, 0, 0}, {ctx, NULL, 0, 0}, {ctx, NULL, 0, 0}, NULL};
    ivec poly = {ctx, NULL, 0, 0}, tmp = {ctx, NULL, 0, 0};
    int count = 0, *order = NULL, *start = NULL;
    hole *holes = NULL;
    sv_status st = label_pieces(ctx, r, lab, &count);
    if (!st) st = trace_all(ctx, r, lab, &L);
    if (!st) st = group_loops(ctx, &L, count, &order, &start);
    if (!st && !(holes = sv_alloc(ctx, (L.len.n + 1) * sizeof *holes, "cell map outline (holes)")))
        st = sv_last_status();
    for (int c = 1; c <= count && !st; c++)
        st = outline_piece(ctx, r, lab, &L, c, order + start[c], start[c + 1] - start[c], out, &poly, &tmp, holes);
    ivec_free(&L.xy);
    ivec_free(&L.first);
    ivec_free(&L.len);
    ivec_free(&L.piece);
    ivec_free(&poly);
    ivec_free(&tmp);
    void *const own[] = {L.area2, order, start, holes, lab};
    sv_free_each(ctx, own, SV_COUNT(own));
    return st;
}

sv_status sv_gds_outline(sv_ctx *ctx, const sv_gds_grid *grid, const unsigned char *cells, int layer, int datatype,
                         int max_points, sv_gds_shapes **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_gds_outline: out is NULL");
    *out = NULL;
    if (!grid || !cells) return sv_error(SV_ERR_ARG, "sv_gds_outline: grid or cells is NULL");
    if (grid->nx < 1 || grid->ny < 1 || (double)grid->nx * grid->ny > 1e9 || !(grid->dx > 0) || !(grid->dy > 0))
        return sv_error(SV_ERR_ARG, "sv_gds_outline: grid of %d x %d cells of %g x %g m: expected at least one cell "
                        "(at most 1e9) of positive size", grid->nx, grid->ny, grid->dx, grid->dy);
    if (max_points == 0) max_points = SV_GDS_MAX_POINTS;
    if (max_points < 4 || max_points > SV_GDS_MAX_POINTS)
        return sv_error(SV_ERR_ARG, "sv_gds_outline: max_points = %d: expected 4 to %d (0: %d)", max_points,
                        SV_GDS_MAX_POINTS, SV_GDS_MAX_POINTS);
    sv_gds_shapes *s;
    sv_status st = gds_shapes_create(ctx, "", &s);
    if (st) return st;
    region r = {cells, grid->nx, grid->ny, 0, 0};
    sink k = {s, grid, layer, datatype, max_points};
    if ((st = outline_region(ctx, &r, &k))) {
        sv_gds_shapes_destroy(s);
        return st;
    }
    *out = s;
    return SV_OK;
}
