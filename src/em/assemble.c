/* Assembly of L and Ψ = Dᵀ·P·D in the packed block-column layout, on the
 * CPU.
 *
 * On a uniform grid a coefficient depends only on the integer cell offset,
 * the orientation pair and the image index, so every distinct value is
 * computed once into small tables (solvent/em_tables.h, tables.c):
 *   P(|di|, |dj|)    cell-to-cell potential coefficients (image series summed)
 *   Lx, Ly           rooftop-to-rooftop inductances for parallel rooftops
 *   Sxx, Syy, Sxy    Ψ between two rooftops: Ψ_mn = Σ D_am·D_bn·P_ab has
 *                    only four terms, folded once per offset into a table
 * and the N² entries are one table lookup each. Only the rows of port half
 * rooftops (few) are computed from their own profiles and cells. The
 * tables span the offsets between the cells the unknowns touch (the
 * metal's bounding box), not the grid: a few metal cells on a huge grid
 * cost a few coefficients. An accelerator does the same from the same
 * tables (assembly_plan.c). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "em_internal.h"
#include "geom.h"

/* The tables, every entry on the CPU (or the board's, the same bits, when
 * the model lies on one: board.c), and their folds. */
static sv_status tables_build(sv_ctx *ctx, const sv_em_model *m, int lossy, sv_em_tables *t)
{
    sv_em_tables_describe(m, lossy, t);
    sv_status st = sv_em_tables_alloc(ctx, t, SV_EM_TABLES_FOLDED);
    if (!st && !sv_em_board_tables_take(m->board, t)) st = sv_em_tables_entries(ctx, m, t, 0);
    if (st) {
        sv_em_tables_free(ctx, t);
        return st;
    }
    sv_em_tables_fold(t);
    return SV_OK;
}

size_t sv_em_assemble_work_bytes(const sv_em_model *m)
{
    if (!m) return 0;
    sv_em_tables t;
    sv_em_tables_describe(m, m->prj->st.tan_delta > 0, &t);
    return sv_em_tables_bytes(&t, SV_EM_TABLES_FOLDED);
}

/* Entry (r, c) of L and Ψ (and Ψ's imaginary part when pi is not NULL)
 * for two rooftops from the tables. */
static inline void entry_tab(const sv_em_tables *t, const sv_em_basis *br, const sv_em_basis *bc, double *l,
                             double *p, double *pi)
{
    sv_em_tables_pair(t, br->kind, br->i, br->j, bc->kind, bc->i, bc->j, l, p, pi);
}

/* Entry involving a port half rooftop: from its profile and cells. */
static void entry_port(const sv_em_model *m, const sv_em_tables *t, int r, int c, double *l, double *p, double *pi)
{
    const sv_em_basis *br = &m->basis[r], *bc = &m->basis[c];
    *l = m->on_board ? sv_em_board_port_L(m->board, m, r, c) : sv_em_port_inductance(m, r, c);
    *p = sv_em_psi_cells(t->P, t->nx, br->kind, br->i, br->j, bc->kind, bc->i, bc->j);
    if (pi) *pi = sv_em_psi_cells(t->P_im, t->nx, br->kind, br->i, br->j, bc->kind, bc->i, bc->j);
}

/* Every entry of L and Ψ (and of Ψ's imaginary part when PsiI is not
 * NULL): one parallel loop over columns, table lookups for rooftop pairs,
 * port rows from their own geometry. */
static sv_status fill_columns(sv_ctx *ctx, const sv_em_model *m, const sv_em_tables *t, double *L, double *Psi,
                              double *PsiI, sv_em_colbase_fn colbase, void *user)
{
    int n = m->n, nrt = m->nx_edges + m->ny_edges;
    const sv_em_basis *B = m->basis;
    sv_progress_loop loop = sv_progress_loop_begin(ctx, "assembly", (double)n * n);
#pragma omp parallel for schedule(dynamic, 16) num_threads(sv_threads_team())
    for (int c = 0; c < n; c++) {
        if (sv_progress_loop_at(&loop, sv_em_columns_before(n, c))) continue;
        size_t base = colbase(user, c);
        double *lc = L + base - c, *pc = Psi + base - c; /* lc[r] is (r, c) for r ≥ c */
        double *ic = PsiI ? PsiI + base - c : NULL;
        const sv_em_basis *bc = &B[c];
        int r = c;
        if (c < nrt) {
            for (; r < nrt; r++) entry_tab(t, &B[r], bc, &lc[r], &pc[r], ic ? &ic[r] : NULL);
        }
        for (; r < n; r++) entry_port(m, t, r, c, &lc[r], &pc[r], ic ? &ic[r] : NULL);
    }
    return sv_progress_loop_end(&loop);
}

/* A grid or stack-up out of range shows on the diagonal first (a lossy
 * dielectric's Ψ_im is positive semidefinite: its diagonal ≥ 0). */
sv_status sv_em_check_diagonal(const sv_em_model *m, const double *L, const double *Psi, const double *PsiI,
                                sv_em_colbase_fn colbase, void *user)
{
    for (int c = 0; c < m->n; c++) {
        size_t base = colbase(user, c);
        if (!isfinite(L[base]) || !isfinite(Psi[base]) || !(L[base] > 0) || (PsiI && !(PsiI[base] >= 0)))
            return sv_error(SV_ERR_NONFINITE, "sv_em_assemble: a diagonal entry is not finite and positive "
                                              "(grid or stack-up out of range?)");
    }
    return SV_OK;
}

sv_status sv_em_assemble_raw(sv_ctx *ctx, const sv_em_model *m, double *L, double *Psi, sv_em_colbase_fn colbase,
                             void *user, sv_em_assembly_info *info)
{
    return sv_em_assemble_raw_lossy(ctx, m, L, Psi, NULL, colbase, user, info);
}

/* The shares of the CPU's entries in their progress (rough costs): the
 * tables' entries (the closed forms of near pairs, their image series),
 * the fill (a lookup per entry), thick metal's side walls (their updates
 * near the metal's edges). */
#define SHARE_TABLES 0.2
#define SHARE_FILL 0.65
#define SHARE_WALLS 0.15

sv_status sv_em_assemble_entries(sv_ctx *ctx, const sv_em_model *m, double *L, double *Psi, double *PsiI,
                                 sv_em_colbase_fn colbase, void *user)
{
    double walls = m->prj->st.thick_metal ? SHARE_WALLS : 0;
    sv_em_parts parts = sv_em_parts_begin(ctx, SHARE_TABLES + SHARE_FILL + walls);
    sv_em_tables t;
    sv_em_part(&parts, SHARE_TABLES);
    sv_status s = tables_build(ctx, m, PsiI != NULL, &t);
    if (!s) {
        sv_em_part(&parts, SHARE_FILL);
        s = fill_columns(ctx, m, &t, L, Psi, PsiI, colbase, user);
        sv_em_tables_free(ctx, &t);
    }
    sv_em_part(&parts, walls);
    if (!s) s = sv_em_walls_add(ctx, m, L, Psi, PsiI, colbase, user);
    sv_em_parts_end(&parts);
    return s;
}

void sv_em_assembly_info_fill(const sv_em_model *m, int psi_im, double t0, sv_em_assembly_info *info)
{
    if (!info) return;
    info->image_terms = sv_em_image_terms(m->prj->st.eps_r, m->opts.accuracy);
    sv_em_tables t; /* described only: the extent its entries would have */
    sv_em_tables_describe(m, psi_im, &t);
    info->distinct_coeffs = (psi_im ? 4 : 3) * t.nx * t.ny;
    info->seconds = sv_time_now() - t0;
}

sv_status sv_em_assemble_raw_lossy(sv_ctx *ctx, const sv_em_model *m, double *L, double *Psi, double *PsiI,
                                   sv_em_colbase_fn colbase, void *user, sv_em_assembly_info *info)
{
    if (!m || !L || !Psi || !colbase) return sv_error(SV_ERR_ARG, "sv_em_assemble: NULL argument");
    if (PsiI && !(m->prj->st.tan_delta > 0))
        return sv_error(SV_ERR_ARG, "sv_em_assemble: the imaginary part of Psi asked for a lossless dielectric");
    double t0 = sv_time_now();
    sv_progress_span op = sv_progress_span_begin(ctx, 0, 1);
    sv_threads_saved prev = sv_threads_apply(ctx);
    double edges = sv_em_edge_profiled(m) ? SV_EM_SHARE_EDGES : 0;
    sv_em_parts parts = sv_em_parts_begin(ctx, SV_EM_SHARE_ENTRIES + edges);
    sv_em_part(&parts, SV_EM_SHARE_ENTRIES);
    sv_status s = sv_em_assemble_entries(ctx, m, L, Psi, PsiI, colbase, user);
    sv_em_part(&parts, edges);
    if (!s) s = sv_em_edge_correct(ctx, m, L, Psi, colbase, user);
    sv_em_parts_end(&parts);
    sv_threads_restore(prev);
    if (!s) sv_em_assembly_info_fill(m, PsiI != NULL, t0, info);
    if (!s) s = sv_em_check_diagonal(m, L, Psi, PsiI, colbase, user);
    if (!s) s = sv_progress(ctx, "assembly", 1.0);
    sv_progress_span_end(ctx, op);
    return s;
}

/* The naive reference: every entry from the closed forms of its own cell
 * pairs, every image term, no tables and no far-field approximation; the
 * edge profile's changes of P are the model's own (edges.c: their closed
 * forms on thin sub-strips lose digits at a distance, where the far form is
 * the better value). */
void sv_em_naive_column(const sv_em_model *m, int c, double *lcol, double *pcol)
{
    sv_em_profile_t b;
    sv_em_profile(m, c, &b);
    int bi[2], bj[2], bs[2];
    int nb = sv_em_div_cells(m, c, bi, bj, bs);
    for (int r = c; r < m->n; r++) {
        sv_em_profile_t a;
        sv_em_profile(m, r, &a);
        lcol[r - c] = sv_em_L_profiles(m, &a, &b, 1);
        int ai[2], aj[2], as[2];
        int na = sv_em_div_cells(m, r, ai, aj, as);
        double s = 0;
        for (int u = 0; u < na; u++)
            for (int v = 0; v < nb; v++)
                s += as[u] * bs[v] *
                     (sv_em_P_cells(m, ai[u] - bi[v], aj[u] - bj[v], 1) + sv_em_edge_dP(m, ai[u], aj[u], bi[v], bj[v], 0));
        pcol[r - c] = s;
        lcol[r - c] += sv_em_edge_dL(m, r, c, 1);
    }
    sv_em_walls_column(m, c, lcol, pcol);
}
