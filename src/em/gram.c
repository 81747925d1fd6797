/* G_mn = ∫ f_m·f_n dS for the rooftops (exact Galerkin): on a cell a basis
 * function is "rising" (u) or "falling" (1 − u) along its axis, u ∈ [0, 1]
 * across the cell, with a sign; two pieces of the same axis on one cell
 * overlap by 1/3 (same shape) or 1/6 (opposite shapes) times along/across.
 * Stored as symmetric CSR with both triangles. */
#include <stdlib.h>
#include <string.h>

#include "em_internal.h"

typedef struct piece { int q, axis, rising, sign; } piece;

/* The (at most two) cell pieces of unknown q. */
static int pieces(const sv_em_model *m, int q, int ci[2], int cj[2], piece pc[2])
{
    const sv_em_basis *b = &m->basis[q];
    int ax = sv_em_basis_axis(b);
    if (sv_em_is_rooftop(b->kind)) {
        ci[0] = b->i; cj[0] = b->j;
        ci[1] = b->i + (ax == 0); cj[1] = b->j + (ax == 1);
        pc[0] = (piece){q, ax, 1, 1};
        pc[1] = (piece){q, ax, 0, 1};
        return 2;
    }
    ci[0] = b->i; cj[0] = b->j;
    int lowside = b->side == SV_EM_LEFT || b->side == SV_EM_BOTTOM;
    pc[0] = (piece){q, ax, !lowside, lowside ? 1 : -1};
    return 1;
}

/* Room for 7 entries a row; 3 are used at most (an unknown overlaps itself
 * and one piece of its own axis on each of its cells). */
#define GRAM_ROW_MAX 7

size_t sv_em_gram_bytes(const sv_em_model *m)
{
    if (!m) return 0;
    size_t n = (size_t)m->n, cap = n * GRAM_ROW_MAX + 1;
    return (n + 1) * sizeof(int) + cap * (sizeof(int) + sizeof(double));
}

/* The pieces of the unknowns on each cell (at most 8: 4 per axis). */
typedef struct cell_pieces {
    int *count; /* per cell */
    piece *pl;  /* 8 per cell */
} cell_pieces;

static void cell_pieces_free(sv_ctx *ctx, cell_pieces *cp)
{
    sv_free(ctx, cp->count);
    sv_free(ctx, cp->pl);
}

static sv_status cell_pieces_build(sv_ctx *ctx, const sv_em_model *m, cell_pieces *cp)
{
    const sv_em_grid *g = &m->prj->grid;
    size_t ncell = (size_t)g->nx * g->ny;
    cp->count = sv_calloc(ctx, ncell, sizeof(int), "em gram cell counts");
    cp->pl = sv_alloc(ctx, ncell * 8 * sizeof(piece), "em gram cell pieces");
    if (!cp->count || !cp->pl) return sv_last_status(); /* the caller frees what was made */
    for (int q = 0; q < m->n; q++) {
        int ci[2], cj[2];
        piece pc[2];
        int np = pieces(m, q, ci, cj, pc);
        for (int u = 0; u < np; u++) {
            size_t c = (size_t)ci[u] + (size_t)g->nx * cj[u];
            if (cp->count[c] < 8) cp->pl[c * 8 + cp->count[c]++] = pc[u];
        }
    }
    return SV_OK;
}

/* An empty n × n CSR matrix with room for GRAM_ROW_MAX entries a row. */
static sv_status csr_create(sv_ctx *ctx, int n, sv_em_csr **out)
{
    sv_em_csr *G = sv_calloc(ctx, 1, sizeof *G, "em gram");
    if (!G) return sv_last_status();
    G->n = n;
    G->ctx = ctx;
    size_t cap = (size_t)n * GRAM_ROW_MAX + 1;
    G->rowptr = sv_alloc(ctx, sizeof(int) * ((size_t)n + 1), "em gram rowptr");
    G->col = sv_alloc(ctx, sizeof(int) * cap, "em gram columns");
    G->val = sv_alloc(ctx, sizeof(double) * cap, "em gram values");
    if (!G->rowptr || !G->col || !G->val) {
        sv_status s = sv_last_status();
        sv_em_csr_destroy(G);
        return s;
    }
    *out = G;
    return SV_OK;
}

/* Row q of G: the overlaps of unknown q with those sharing its cells,
 * columns ascending; returns the count. */
static int gram_row(const sv_em_model *m, const cell_pieces *cp, int q, int cols[16], double vals[16])
{
    const sv_em_grid *g = &m->prj->grid;
    int ci[2], cj[2];
    piece pc[2];
    int np = pieces(m, q, ci, cj, pc);
    int k = 0;
    for (int u = 0; u < np; u++) {
        size_t c = (size_t)ci[u] + (size_t)g->nx * cj[u];
        double ratio = pc[u].axis == 0 ? g->dx / g->dy : g->dy / g->dx;
        for (int v = 0; v < cp->count[c]; v++) {
            const piece *o = &cp->pl[c * 8 + v];
            if (o->axis != pc[u].axis) continue;
            double w = (o->rising == pc[u].rising ? 1.0 / 3 : 1.0 / 6) * ratio * o->sign * pc[u].sign;
            if (m->prj->st.thick_metal) w *= sv_em_walls_gram_factor(m, q, o->q); /* current on the walls too */
            int found = 0;
            for (int t = 0; t < k; t++)
                if (cols[t] == o->q) {
                    vals[t] += w;
                    found = 1;
                }
            if (!found && k < 16) {
                cols[k] = o->q;
                vals[k++] = w;
            }
        }
    }
    /* sort by column (insertion: k ≤ 16) */
    for (int a = 1; a < k; a++)
        for (int b = a; b > 0 && cols[b - 1] > cols[b]; b--) {
            int tc = cols[b]; cols[b] = cols[b - 1]; cols[b - 1] = tc;
            double tv = vals[b]; vals[b] = vals[b - 1]; vals[b - 1] = tv;
        }
    return k;
}

sv_status sv_em_gram(sv_ctx *ctx, const sv_em_model *m, sv_em_csr **out)
{
    if (!m || !out) return sv_error(SV_ERR_ARG, "sv_em_gram: NULL argument");
    *out = NULL;
    cell_pieces cp = {0};
    sv_em_csr *G = NULL;
    sv_status s = cell_pieces_build(ctx, m, &cp);
    if (!s) s = csr_create(ctx, m->n, &G);
    if (s) {
        cell_pieces_free(ctx, &cp);
        return s;
    }
    size_t nnz = 0;
    G->rowptr[0] = 0;
    sv_progress_loop loop = sv_progress_loop_begin(ctx, "metal loss", m->n);
    for (int q = 0; q < m->n && !sv_progress_loop_at(&loop, q); q++) {
        int cols[16];
        double vals[16];
        int k = gram_row(m, &cp, q, cols, vals);
        for (int t = 0; t < k; t++) {
            G->col[nnz] = cols[t];
            G->val[nnz++] = vals[t];
        }
        G->rowptr[q + 1] = (int)nnz;
    }
    cell_pieces_free(ctx, &cp);
    s = sv_progress_loop_end(&loop);
    if (s)
        sv_em_csr_destroy(G); /* stopped: no partial G */
    else
        *out = G;
    return s;
}

void sv_em_csr_destroy(sv_em_csr *G)
{
    if (!G) return;
    sv_ctx *ctx = G->ctx;
    sv_free(ctx, G->rowptr);
    sv_free(ctx, G->col);
    sv_free(ctx, G->val);
    sv_free(ctx, G);
}
