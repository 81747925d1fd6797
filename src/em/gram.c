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
    if (b->kind < 2) {
        int ax = b->kind;
        ci[0] = b->i; cj[0] = b->j;
        ci[1] = b->i + (ax == 0); cj[1] = b->j + (ax == 1);
        pc[0] = (piece){q, ax, 1, 1};
        pc[1] = (piece){q, ax, 0, 1};
        return 2;
    }
    ci[0] = b->i; cj[0] = b->j;
    int ax = b->side >= SV_EM_BOTTOM;
    int lowside = b->side == SV_EM_LEFT || b->side == SV_EM_BOTTOM;
    pc[0] = (piece){q, ax, !lowside, lowside ? 1 : -1};
    return 1;
}


sv_status sv_em_gram(sv_ctx *ctx, const sv_em_model *m, sv_em_csr **out)
{
    if (!m || !out) return sv_error(SV_ERR_ARG, "sv_em_gram: NULL argument");
    *out = NULL;
    const sv_em_grid *g = &m->prj->grid;
    size_t ncell = (size_t)g->nx * g->ny;
    /* pieces per cell: at most 8 (4 per axis) */
    int *cnt = sv_calloc(ctx, ncell, sizeof(int), "em gram cell counts");
    piece *pl = sv_alloc(ctx, ncell * 8 * sizeof(piece), "em gram cell pieces");
    sv_em_csr *G = sv_calloc(ctx, 1, sizeof *G, "em gram");
    if (!cnt || !pl || !G) {
        sv_free(ctx, cnt);
        sv_free(ctx, pl);
        sv_free(ctx, G);
        return sv_last_status();
    }
    for (int q = 0; q < m->n; q++) {
        int ci[2], cj[2];
        piece pc[2];
        int np = pieces(m, q, ci, cj, pc);
        for (int u = 0; u < np; u++) {
            size_t c = (size_t)ci[u] + (size_t)g->nx * cj[u];
            if (cnt[c] < 8) pl[c * 8 + cnt[c]++] = pc[u];
        }
    }
    G->n = m->n;
    G->ctx = ctx;
    G->rowptr = sv_alloc(ctx, sizeof(int) * ((size_t)m->n + 1), "em gram rowptr");
    size_t cap = (size_t)m->n * 7 + 1;
    G->col = sv_alloc(ctx, sizeof(int) * cap, "em gram columns");
    G->val = sv_alloc(ctx, sizeof(double) * cap, "em gram values");
    if (!G->rowptr || !G->col || !G->val) {
        sv_status s = sv_last_status();
        sv_free(ctx, cnt);
        sv_free(ctx, pl);
        sv_em_csr_destroy(G);
        return s;
    }
    size_t nnz = 0;
    G->rowptr[0] = 0;
    for (int q = 0; q < m->n; q++) {
        int ci[2], cj[2];
        piece pc[2];
        int np = pieces(m, q, ci, cj, pc);
        int cols[16];
        double vals[16];
        int k = 0;
        for (int u = 0; u < np; u++) {
            size_t c = (size_t)ci[u] + (size_t)g->nx * cj[u];
            double ratio = pc[u].axis == 0 ? g->dx / g->dy : g->dy / g->dx;
            for (int v = 0; v < cnt[c]; v++) {
                const piece *o = &pl[c * 8 + v];
                if (o->axis != pc[u].axis) continue;
                double w = (o->rising == pc[u].rising ? 1.0 / 3 : 1.0 / 6) * ratio * o->sign * pc[u].sign;
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
        for (int t = 0; t < k; t++) {
            G->col[nnz] = cols[t];
            G->val[nnz++] = vals[t];
        }
        G->rowptr[q + 1] = (int)nnz;
    }
    sv_free(ctx, cnt);
    sv_free(ctx, pl);
    *out = G;
    return SV_OK;
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
