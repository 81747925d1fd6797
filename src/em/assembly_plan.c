/* The plan of an assembly by another implementation (an accelerator's,
 * solvent/em_assembly.h): everything the CPU computes for it. The tables'
 * near entries come from the closed forms exactly as the CPU assembly's
 * (tables.c), the far ones are left to the implementation; the rows of the
 * port half rooftops' L from their profiles; thick metal's side-wall
 * updates as lists, δΨ grouped by entry with each entry's contributions in
 * the order the CPU adds them, so that adding them in that order gives the
 * CPU's bits. */
#include <string.h>

#include "em_internal.h"

struct sv_em_assembly_plan {
    sv_ctx *ctx;
    const sv_em_model *m;
    sv_em_tables t;
    int have_rows;
    sv_em_assembly_rows rows;
    double *port_L;
    sv_em_walls_updates wu;  /* δL as recorded; δΨ as recorded, then regrouped below */
    int *ps_r, *ps_c;
    size_t *ps_start;
    double *ps_val, *ps_val_im;
};

/* The tables with their near entries, the far ones marked, the unknowns'
 * kinds and cells (freed by the caller, whatever the status). */
static sv_status plan_tables(sv_ctx *ctx, const sv_em_model *m, int psi_im, sv_em_tables *t)
{
    sv_em_tables_describe(m, psi_im != 0, t);
    sv_status st = sv_em_tables_alloc(ctx, t, SV_EM_TABLES_PLAN);
    if (st) return st;
    sv_threads_saved prev = sv_threads_apply(ctx);
    sv_em_tables_unknowns(m, t);
    st = sv_em_tables_entries(ctx, m, t, 1);
    sv_threads_restore(prev);
    return st;
}

sv_status sv_em_assembly_plan_create(sv_ctx *ctx, const sv_em_model *m, int psi_im, sv_em_assembly_plan **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_em_assembly_plan_create: out is NULL");
    *out = NULL;
    if (!m) return sv_error(SV_ERR_ARG, "sv_em_assembly_plan_create: m is NULL");
    if (psi_im && !(m->prj->st.tan_delta > 0))
        return sv_error(SV_ERR_ARG, "sv_em_assembly_plan_create: the imaginary part of Psi asked for a lossless "
                                    "dielectric");
    sv_em_assembly_plan *p = sv_calloc(ctx, 1, sizeof *p, "em assembly plan");
    if (!p) return sv_last_status();
    p->ctx = ctx;
    p->m = m;
    sv_status st = plan_tables(ctx, m, psi_im, &p->t);
    if (st) sv_em_assembly_plan_destroy(p); /* stopped, or no memory: no plan */
    *out = st ? NULL : p;
    return st;
}

void sv_em_assembly_plan_destroy(sv_em_assembly_plan *p)
{
    if (!p) return;
    sv_ctx *ctx = p->ctx;
    sv_em_tables_free(ctx, &p->t);
    sv_em_walls_updates_free(ctx, &p->wu);
    sv_free_each(ctx, (void *const[]){p->port_L, p->ps_r, p->ps_c, p->ps_start, p->ps_val, p->ps_val_im, p}, 7);
}

const sv_em_tables *sv_em_assembly_plan_tables(const sv_em_assembly_plan *p) { return p ? &p->t : NULL; }

/* L(r, c) of every port half rooftop r with every unknown c ≤ r. */
static sv_status port_rows(sv_em_assembly_plan *p)
{
    const sv_em_model *m = p->m;
    int n = m->n, nrt = p->t.nrt, np = n - nrt;
    p->port_L = sv_calloc(p->ctx, (size_t)np * (size_t)n + 1, sizeof(double), "em assembly plan: port rows");
    if (!p->port_L) return sv_last_status();
#pragma omp parallel for schedule(dynamic, 16) num_threads(sv_threads_team())
    for (int c = 0; c < n; c++)
        for (int r = c > nrt ? c : nrt; r < n; r++)
            p->port_L[(size_t)(r - nrt) + (size_t)np * c] = sv_em_port_inductance(m, r, c);
    return SV_OK;
}

/* A stable counting sort of perm[0 … len) by key[perm[·]] ∈ [0, nkeys). */
static sv_status sort_by(sv_ctx *ctx, size_t len, const int *key, int nkeys, size_t *perm)
{
    size_t *count = sv_calloc(ctx, (size_t)nkeys + 1, sizeof(size_t), "em assembly plan: sort");
    size_t *next = sv_alloc(ctx, sizeof(size_t) * (len ? len : 1), "em assembly plan: sort");
    sv_status st = count && next ? SV_OK : sv_last_status();
    if (!st) {
        for (size_t e = 0; e < len; e++) count[key[perm[e]] + 1]++;
        for (int k = 0; k < nkeys; k++) count[k + 1] += count[k];
        for (size_t e = 0; e < len; e++) next[count[key[perm[e]]]++] = perm[e];
        memcpy(perm, next, sizeof(size_t) * len);
    }
    sv_free(ctx, count);
    sv_free(ctx, next);
    return st;
}

/* The δΨ contributions grouped by entry (r, c): sorted by column, then row,
 * keeping each entry's contributions in the order they were recorded. */
static sv_status group_psi(sv_em_assembly_plan *p)
{
    sv_ctx *ctx = p->ctx;
    const sv_em_walls_updates *u = &p->wu;
    size_t len = u->np, room = len ? len : 1;
    size_t *perm = sv_alloc(ctx, sizeof(size_t) * room, "em assembly plan: walls");
    p->ps_r = sv_alloc(ctx, sizeof(int) * room, "em assembly plan: walls");
    p->ps_c = sv_alloc(ctx, sizeof(int) * room, "em assembly plan: walls");
    p->ps_start = sv_alloc(ctx, sizeof(size_t) * (room + 1), "em assembly plan: walls");
    p->ps_val = sv_alloc(ctx, sizeof(double) * room, "em assembly plan: walls");
    if (u->lossy) p->ps_val_im = sv_alloc(ctx, sizeof(double) * room, "em assembly plan: walls");
    sv_status st = perm && p->ps_r && p->ps_c && p->ps_start && p->ps_val && (!u->lossy || p->ps_val_im)
                       ? SV_OK
                       : sv_last_status();
    for (size_t e = 0; !st && e < len; e++) perm[e] = e;
    if (!st) st = sort_by(ctx, len, u->p_r, p->m->n, perm); /* least significant key first */
    if (!st) st = sort_by(ctx, len, u->p_c, p->m->n, perm);
    size_t nps = 0;
    for (size_t e = 0; !st && e < len; e++) {
        size_t k = perm[e];
        if (e == 0 || u->p_r[k] != p->ps_r[nps - 1] || u->p_c[k] != p->ps_c[nps - 1]) {
            p->ps_r[nps] = u->p_r[k];
            p->ps_c[nps] = u->p_c[k];
            p->ps_start[nps++] = e;
        }
        p->ps_val[e] = u->p_val[k];
        if (u->lossy) p->ps_val_im[e] = u->p_val_im[k];
    }
    if (!st) p->ps_start[nps] = len;
    p->rows.nps = nps;
    sv_free(ctx, perm);
    return st;
}

sv_status sv_em_assembly_plan_rows(sv_em_assembly_plan *p, const sv_em_assembly_rows **rows)
{
    if (!p || !rows) return sv_error(SV_ERR_ARG, "sv_em_assembly_plan_rows: NULL argument");
    *rows = NULL;
    if (!p->have_rows) {
        sv_threads_saved prev = sv_threads_apply(p->ctx);
        sv_status st = port_rows(p);
        if (!st) st = sv_em_walls_record(p->ctx, p->m, p->t.lossy, &p->wu);
        if (!st) st = group_psi(p);
        sv_threads_restore(prev);
        if (st) return st;
        p->rows = (sv_em_assembly_rows){.np = p->t.n - p->t.nrt, .port_L = p->port_L, .nl = p->wu.nl,
                                        .l_r = p->wu.l_r, .l_c = p->wu.l_c, .l_val = p->wu.l_val,
                                        .ps_r = p->ps_r, .ps_c = p->ps_c, .ps_start = p->ps_start,
                                        .nps = p->rows.nps, .ps_val = p->ps_val, .ps_val_im = p->ps_val_im};
        p->have_rows = 1;
    }
    *rows = &p->rows;
    return SV_OK;
}
