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
 *   whichever map computed them;
 *   the rows of the port half rooftops' L against every unknown a map can
 *   have (the ports are the board's, so their rows' closed forms are the
 *   same for every map: most of a small map's assembly otherwise).
 * A model made on the board (sv_em_model_create_on) borrows them all;
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
    /* The rows of the port half rooftops' L (sv_em_port_inductance) against
     * every unknown any map can have: every x rooftop (nxr of them, (i, j)
     * at i + (nx − 1)·j), every y rooftop (nyr, at nxr + i + nx·j), the port
     * half rooftops (np, at nxr + nyr + k, in the mesh's order). Row k holds
     * port half rooftop k against each, port ones up to k. */
    int nxr, nyr, np;
    double *port_L;       /* np × (nxr + nyr + np), row k at k·(nxr + nyr + np) */
};

/* Every unknown a map on the board can have, in the order above (the
 * ports' as sv_em_model_create numbers them: its model's last np). */
static sv_status every_unknown(sv_em_board *b, sv_em_basis **out, int *n)
{
    const sv_em_model *cell = b->cell;
    int nx = b->prj->grid.nx, ny = b->prj->grid.ny, nrt = cell->nx_edges + cell->ny_edges;
    b->nxr = (nx - 1) * ny;
    b->nyr = nx * (ny - 1);
    b->np = cell->n - nrt;
    *n = b->nxr + b->nyr + b->np;
    sv_em_basis *u = sv_alloc(b->ctx, sizeof *u * (size_t)*n, "em board: unknowns");
    if (!u) return sv_last_status();
    for (int j = 0; j < ny; j++)
        for (int i = 0; i + 1 < nx; i++) u[i + (nx - 1) * j] = (sv_em_basis){SV_EM_UNKNOWN_X, i, j, 0, -1};
    for (int j = 0; j + 1 < ny; j++)
        for (int i = 0; i < nx; i++) u[b->nxr + i + nx * j] = (sv_em_basis){SV_EM_UNKNOWN_Y, i, j, 0, -1};
    memcpy(u + b->nxr + b->nyr, cell->basis + nrt, sizeof *u * (size_t)b->np);
    *out = u;
    return SV_OK;
}

/* The port rows: sv_em_port_inductance on a model holding every unknown,
 * so each value is the call a map's assembly makes, the same bits. */
static sv_status port_rows(sv_em_board *b)
{
    sv_em_basis *u = NULL;
    int n;
    sv_status s = every_unknown(b, &u, &n);
    if (s) return s;
    b->port_L = sv_alloc(b->ctx, sizeof(double) * (size_t)b->np * (size_t)n + 1, "em board: port rows");
    if (!b->port_L) {
        sv_free(b->ctx, u);
        return sv_last_status();
    }
    sv_em_model all = *b->cell;
    all.basis = u;
    all.n = n;
    int nrt = b->nxr + b->nyr, np = b->np;
    sv_threads_saved prev = sv_threads_apply(b->ctx);
    sv_progress_loop loop = sv_progress_loop_begin(b->ctx, "board port rows", (double)np);
#pragma omp parallel for schedule(dynamic, 1) num_threads(sv_threads_team())
    for (int k = 0; k < np; k++) {
        if (sv_progress_loop_at(&loop, k)) continue;
        double *row = b->port_L + (size_t)k * n;
        for (int c = 0; c <= nrt + k; c++) row[c] = sv_em_port_inductance(&all, nrt + k, c);
    }
    s = sv_progress_loop_end(&loop);
    sv_threads_restore(prev);
    sv_free(b->ctx, u);
    return s;
}

/* 1 when p's ports are the board's (side, plane, span): the port rows hold. */
static int same_ports(const sv_em_project *p, const sv_em_project *q)
{
    if (p->nports != q->nports) return 0;
    for (int k = 0; k < p->nports; k++) {
        const sv_em_port_def *a = &p->ports[k], *c = &q->ports[k];
        if (a->side != c->side || a->line != c->line || a->k0 != c->k0 || a->k1 != c->k1) return 0;
    }
    return 1;
}

double sv_em_board_port_L(const sv_em_board *b, const sv_em_model *m, int r, int c)
{
    int nrt = m->nx_edges + m->ny_edges, n = b->nxr + b->nyr + b->np, nx = b->prj->grid.nx;
    const sv_em_basis *bc = &m->basis[c];
    int col = bc->kind == SV_EM_UNKNOWN_X   ? bc->i + (nx - 1) * bc->j
              : bc->kind == SV_EM_UNKNOWN_Y ? b->nxr + bc->i + nx * bc->j
                                            : b->nxr + b->nyr + (c - nrt);
    return b->port_L[(size_t)(r - nrt) * n + col];
}

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

/* What the making holds for a moment besides the parts counted below (the
 * wall tables' and the cell model's scratch, the planar batch's own
 * struct): a few kilobytes on the dataset's board; a bound. */
#define BOARD_SCRATCH ((size_t)64 << 10)

size_t sv_em_board_bytes(const sv_em_project *board, const sv_em_options *opts, int slots)
{
    sv_em_model shape;
    if (!board || slots < 1 || sv_em_model_shape(board, opts, &shape)) return 0;
    size_t nx = (size_t)board->grid.nx, ny = (size_t)board->grid.ny, cells = nx * ny;
    size_t np = (size_t)(shape.n - shape.nx_edges - shape.ny_edges);
    size_t every = (nx - 1) * ny + nx * (ny - 1) + np;
    size_t b = BOARD_SCRATCH + sizeof(sv_em_board) + sizeof(double) * 3 * cells; /* P, Lx, Ly */
    if (board->st.tan_delta > 0) b += sizeof(double) * 4 * cells;      /* and the lossy P, P_im, Lx, Ly */
    b += sizeof(double) * np * every + sizeof(sv_em_basis) * every;     /* the port rows, their unknowns */
    b += sizeof(sv_em_basis) * (size_t)shape.n + sizeof(sv_em_model);   /* the cell model */
    /* the board's copy and the batch's (a caller's copy of it): struct, metal, ports, names */
    b += 2 * (sizeof(sv_em_project) + cells + sizeof(sv_em_port_def) * (size_t)board->nports +
              (board->pixels_file ? strlen(board->pixels_file) + 1 : 0));
    b += sizeof(sv_em_edge_memo *) * (size_t)slots;
    if (board->st.thick_metal) b += sv_em_walls_tables_bytes(&shape) + sv_em_walls_share_bytes(&shape);
    if (board->edge_profile || board->edge_cells) b += (size_t)slots * sv_em_edge_memo_bytes(&shape);
    return b;
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
    if (!s) s = port_rows(b);
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
    sv_free(ctx, b->port_L);
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
    if (!same_ports(p, b->prj))
        return sv_error(SV_ERR_ARG, "sv_em_model_create_on: the project's ports are not the board's");
    sv_status s = sv_em_model_create_sharing(ctx, p, opts, b->cell, out);
    if (s) return s;
    if ((*out)->lent) { /* the same cell as the board's: its tables hold */
        (*out)->memo = b->memo[slot];
        (*out)->board = b;
        (*out)->on_board = 1;
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
