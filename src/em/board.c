/* A board: what every map on one grid and stack-up shares, made once
 * (docs/how-to/run-a-batch.md):
 *   the assembly's tables of P (and P_im), Lx, Ly over every offset the
 *   grid holds — an entry depends on its offset, the cell size, the
 *   stack-up and the options alone (tables.c), so a map's tables are a
 *   corner of the board's, the same bits as its own closed forms give;
 *   thick metal's wall tables (read-only, walls.c);
 *   one edge-profile memo per slot: a memo is filled by the assemblies
 *   that use it, one at a time (edges.c), so each of the maps assembled at
 *   the same time takes its own slot; its entries are the same bits
 *   whichever map computed them.
 * A model made on the board (sv_em_model_create_on) borrows all three;
 * the board is read-only to it but for its slot's memo. */
#include <string.h>

#include "em_internal.h"

struct sv_em_board {
    sv_ctx *ctx;
    sv_em_project *prj;   /* the board's copy, radiation and dispersion off: its model is the cell's alone */
    sv_em_model *cell;    /* owns the wall tables and slot 0's memo */
    sv_em_tables tab[2];  /* [0] lossless P; [1] lossy P + P_im (a lossy dielectric only) */
    int ntab;
    int slots;
    sv_em_edge_memo **memo; /* slots; memo[0] the cell model's */
};

/* The tables over the whole grid: the extent every map's lies within. */
static sv_status whole_grid_tables(sv_ctx *ctx, const sv_em_model *cell, int lossy, sv_em_tables *t)
{
    sv_em_tables_describe(cell, lossy, t);
    t->nx = cell->prj->grid.nx;
    t->ny = cell->prj->grid.ny;
    sv_status s = sv_em_tables_alloc(ctx, t, 0);
    if (s) return s;
    sv_threads_saved prev = sv_threads_apply(ctx);
    s = sv_em_tables_entries(ctx, cell, t, 0);
    sv_threads_restore(prev);
    return s;
}

/* The memos of slots 1 … slots − 1 (slot 0's is the cell model's). */
static sv_status slot_memos(sv_em_board *b)
{
    b->memo = sv_calloc(b->ctx, (size_t)b->slots, sizeof *b->memo, "em board: memos");
    if (!b->memo) return sv_last_status();
    b->memo[0] = b->cell->memo;
    for (int k = 1; k < b->slots && b->memo[0]; k++) {
        sv_status s = sv_em_edge_memo_create(b->ctx, b->cell, &b->memo[k]);
        if (s) return s;
    }
    return SV_OK;
}

sv_status sv_em_board_create(sv_ctx *ctx, const sv_em_project *board, const sv_em_options *opts, int slots,
                             sv_em_board **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_em_board_create: out is NULL");
    *out = NULL;
    if (!board) return sv_error(SV_ERR_ARG, "sv_em_board_create: the board is NULL");
    if (slots < 1 || slots > 1024)
        return sv_error(SV_ERR_ARG, "sv_em_board_create: slots = %d: expected 1 to 1024", slots);
    sv_em_board *b = sv_calloc(ctx, 1, sizeof *b, "em board");
    if (!b) return sv_last_status();
    b->ctx = ctx;
    b->slots = slots;
    sv_status s = sv_em_project_copy(ctx, board, &b->prj);
    if (!s) {
        b->prj->radiation = 0; /* the board's own model needs neither: they are each map's */
        b->prj->dispersion = 0;
        s = sv_em_model_create(ctx, b->prj, opts, &b->cell);
    }
    if (!s) s = whole_grid_tables(ctx, b->cell, 0, &b->tab[b->ntab++]);
    if (!s && b->prj->st.tan_delta > 0) s = whole_grid_tables(ctx, b->cell, 1, &b->tab[b->ntab++]);
    if (!s) s = slot_memos(b);
    if (s) {
        sv_em_board_destroy(b);
        return s;
    }
    *out = b;
    return SV_OK;
}

void sv_em_board_destroy(sv_em_board *b)
{
    if (!b) return;
    sv_ctx *ctx = b->ctx;
    for (int k = 0; k < b->ntab; k++) sv_em_tables_free(ctx, &b->tab[k]);
    for (int k = 1; b->memo && k < b->slots; k++) sv_em_edge_memo_destroy(ctx, b->memo[k]);
    sv_free(ctx, b->memo);
    sv_em_model_destroy(b->cell);
    sv_em_project_destroy(b->prj);
    sv_free(ctx, b);
}

int sv_em_board_slots(const sv_em_board *b) { return b ? b->slots : 0; }

sv_status sv_em_model_create_on(sv_ctx *ctx, const sv_em_project *p, const sv_em_options *opts, sv_em_board *b,
                                int slot, sv_em_model **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_em_model_create_on: out is NULL");
    *out = NULL;
    if (!b) return sv_error(SV_ERR_ARG, "sv_em_model_create_on: the board is NULL");
    if (slot < 0 || slot >= b->slots)
        return sv_error(SV_ERR_ARG, "sv_em_model_create_on: slot = %d: expected 0 to %d", slot, b->slots - 1);
    if (!p || p->grid.nx != b->prj->grid.nx || p->grid.ny != b->prj->grid.ny)
        return sv_error(SV_ERR_ARG, "sv_em_model_create_on: the project's grid is not the board's (%d x %d cells)",
                        b->prj->grid.nx, b->prj->grid.ny);
    sv_status s = sv_em_model_create_sharing(ctx, p, opts, b->cell, out);
    if (s) return s;
    if ((*out)->lent) { /* the same cell as the board's: its tables hold */
        (*out)->memo = b->memo[slot];
        (*out)->board = b;
    }
    return SV_OK;
}

int sv_em_board_tables_take(const sv_em_board *b, sv_em_tables *t)
{
    if (!b) return 0;
    for (int k = 0; k < b->ntab; k++) {
        const sv_em_tables *w = &b->tab[k];
        if (w->lossy != t->lossy || t->nx > w->nx || t->ny > w->ny) continue;
        for (int dj = 0; dj < t->ny; dj++)
            for (int di = 0; di < t->nx; di++) {
                size_t q = (size_t)di + (size_t)t->nx * dj, r = (size_t)di + (size_t)w->nx * dj;
                t->P[q] = w->P[r];
                t->Lx[q] = w->Lx[r];
                t->Ly[q] = w->Ly[r];
                if (t->lossy) t->P_im[q] = w->P_im[r];
            }
        return 1;
    }
    return 0;
}
