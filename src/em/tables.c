/* The assembly's tables (solvent/em_tables.h) of a mesh: what they hold,
 * their storage and their entries, for the CPU assembly (assemble.c) and an
 * accelerator's plan (assembly_plan.c). A far entry comes from the shared
 * point-approximation series (through sv_em_P_cells, sv_em_P_cells_lossy and
 * sv_em_L_rooftops, which route far pairs there), a near one from the
 * closed forms. */
#include <complex.h>
#include <string.h>

#include "em_internal.h"
#include "geom.h"

/* Width and height (cells) of the box holding every cell an unknown has
 * divergence on: every offset a table is looked up at lies inside it, so
 * a few metal cells on a huge grid cost a few coefficients. */
static void metal_extent(const sv_em_model *m, int *w, int *h)
{
    int i0 = m->prj->grid.nx, i1 = -1, j0 = m->prj->grid.ny, j1 = -1;
    for (int q = 0; q < m->n; q++) {
        int ci[2], cj[2], sg[2];
        for (int k = sv_em_div_cells(m, q, ci, cj, sg) - 1; k >= 0; k--) {
            i0 = ci[k] < i0 ? ci[k] : i0, i1 = ci[k] > i1 ? ci[k] : i1;
            j0 = cj[k] < j0 ? cj[k] : j0, j1 = cj[k] > j1 ? cj[k] : j1;
        }
    }
    *w = i1 >= i0 ? i1 - i0 + 1 : 1;
    *h = j1 >= j0 ? j1 - j0 + 1 : 1;
}

void sv_em_tables_describe(const sv_em_model *m, int lossy, sv_em_tables *t)
{
    const sv_em_project *p = m->prj;
    memset(t, 0, sizeof *t);
    t->n = m->n;
    t->nrt = m->nx_edges + m->ny_edges;
    metal_extent(m, &t->nx, &t->ny);
    t->dx = p->grid.dx;
    t->dy = p->grid.dy;
    t->h = p->st.h;
    t->lossy = lossy;
    if (lossy) {
        double complex K;
        sv_em_lossy_series(m, &K, &t->terms);
        t->K = creal(K);
        t->K_im = cimag(K);
    } else {
        double er = p->st.eps_r;
        t->K = (er - 1) / (er + 1);
        t->terms = sv_em_image_terms(er, m->opts.accuracy);
    }
    t->rule_n = m->gl_far.n;
    for (int k = 0; k < m->gl_far.n && k < SV_EM_FAR_RULE_MAX; k++) {
        t->rule_t[k] = m->gl_far.t[k];
        t->rule_w[k] = m->gl_far.w[k];
    }
}

size_t sv_em_tables_bytes(const sv_em_tables *t, int parts)
{
    size_t n1 = (size_t)t->nx * t->ny, n2 = (size_t)(2 * t->nx + 1) * (2 * t->ny + 1), np = t->lossy ? 2 : 1;
    size_t b = (np + 2) * n1 * sizeof(double);
    if (parts & SV_EM_TABLES_FOLDED) b += np * (2 * n1 + n2) * sizeof(double);
    if (parts & SV_EM_TABLES_PLAN) b += 3 * n1 + (size_t)t->n * (sizeof *t->kind + 2 * sizeof(int));
    return b;
}

sv_status sv_em_tables_alloc(sv_ctx *ctx, sv_em_tables *t, int parts)
{
    size_t n1 = (size_t)t->nx * t->ny, n2 = (size_t)(2 * t->nx + 1) * (2 * t->ny + 1), nu = (size_t)(t->n ? t->n : 1);
    int ok = (t->P = sv_alloc(ctx, n1 * sizeof(double), "em table P")) != NULL;
    ok = ok && (t->Lx = sv_alloc(ctx, n1 * sizeof(double), "em table Lx")) != NULL;
    ok = ok && (t->Ly = sv_alloc(ctx, n1 * sizeof(double), "em table Ly")) != NULL;
    if (t->lossy) ok = ok && (t->P_im = sv_alloc(ctx, n1 * sizeof(double), "em table P_im")) != NULL;
    if (parts & SV_EM_TABLES_FOLDED) {
        ok = ok && (t->Sxx = sv_alloc(ctx, n1 * sizeof(double), "em table Sxx")) != NULL;
        ok = ok && (t->Syy = sv_alloc(ctx, n1 * sizeof(double), "em table Syy")) != NULL;
        ok = ok && (t->Sxy = sv_alloc(ctx, n2 * sizeof(double), "em table Sxy")) != NULL;
        if (t->lossy) {
            ok = ok && (t->Sxx_im = sv_alloc(ctx, n1 * sizeof(double), "em table Sxx_im")) != NULL;
            ok = ok && (t->Syy_im = sv_alloc(ctx, n1 * sizeof(double), "em table Syy_im")) != NULL;
            ok = ok && (t->Sxy_im = sv_alloc(ctx, n2 * sizeof(double), "em table Sxy_im")) != NULL;
        }
    }
    if (parts & SV_EM_TABLES_PLAN) {
        ok = ok && (t->far_P = sv_alloc(ctx, n1, "em table masks")) != NULL;
        ok = ok && (t->far_Lx = sv_alloc(ctx, n1, "em table masks")) != NULL;
        ok = ok && (t->far_Ly = sv_alloc(ctx, n1, "em table masks")) != NULL;
        ok = ok && (t->kind = sv_alloc(ctx, nu * sizeof *t->kind, "em unknowns")) != NULL;
        ok = ok && (t->ci = sv_alloc(ctx, nu * sizeof(int), "em unknowns")) != NULL;
        ok = ok && (t->cj = sv_alloc(ctx, nu * sizeof(int), "em unknowns")) != NULL;
    }
    if (ok) return SV_OK;
    sv_status st = sv_last_status();
    sv_em_tables_free(ctx, t);
    return st;
}

void sv_em_tables_free(sv_ctx *ctx, sv_em_tables *t)
{
    void *a[] = {t->P, t->P_im, t->Lx, t->Ly, t->Sxx, t->Syy, t->Sxy, t->Sxx_im, t->Syy_im, t->Sxy_im,
                 t->far_P, t->far_Lx, t->far_Ly, t->kind, t->ci, t->cj};
    for (size_t k = 0; k < sizeof a / sizeof a[0]; k++) sv_free(ctx, a[k]);
    t->P = t->P_im = t->Lx = t->Ly = t->Sxx = t->Syy = t->Sxy = t->Sxx_im = t->Syy_im = t->Sxy_im = NULL;
    t->far_P = t->far_Lx = t->far_Ly = NULL;
    t->kind = NULL;
    t->ci = t->cj = NULL;
}

/* Entry q of P (and P_im), Lx, Ly. */
static void entry(const sv_em_model *m, sv_em_tables *t, int q)
{
    int di = q % t->nx, dj = q / t->nx;
    if (t->lossy)
        t->P[q] = sv_em_P_cells_lossy(m, di, dj, 0, &t->P_im[q]);
    else
        t->P[q] = sv_em_P_cells(m, di, dj, 0);
    t->Lx[q] = sv_em_L_rooftops(m, 0, di, dj, 0);
    t->Ly[q] = sv_em_L_rooftops(m, 1, di, dj, 0);
}

/* The same where it is near (the closed forms), marking the far ones. */
static void entry_near(const sv_em_model *m, sv_em_tables *t, int q)
{
    int di = q % t->nx, dj = q / t->nx;
    t->far_P[q] = (unsigned char)sv_em_P_cells_is_far(m, di, dj);
    t->far_Lx[q] = (unsigned char)sv_em_L_rooftops_is_far(m, 0, di, dj);
    t->far_Ly[q] = (unsigned char)sv_em_L_rooftops_is_far(m, 1, di, dj);
    t->P[q] = t->Lx[q] = t->Ly[q] = 0;
    if (t->lossy) t->P_im[q] = 0;
    if (!t->far_P[q]) {
        if (t->lossy)
            t->P[q] = sv_em_P_cells_lossy(m, di, dj, 0, &t->P_im[q]);
        else
            t->P[q] = sv_em_P_cells(m, di, dj, 0);
    }
    if (!t->far_Lx[q]) t->Lx[q] = sv_em_L_rooftops(m, 0, di, dj, 0);
    if (!t->far_Ly[q]) t->Ly[q] = sv_em_L_rooftops(m, 1, di, dj, 0);
}

sv_status sv_em_tables_entries(sv_ctx *ctx, const sv_em_model *m, sv_em_tables *t, int near_only)
{
    int n1 = t->nx * t->ny;
    sv_progress_loop loop = sv_progress_loop_begin(ctx, "assembly", n1);
#pragma omp parallel for schedule(dynamic, 8) num_threads(sv_threads_team())
    for (int q = 0; q < n1; q++) {
        if (sv_progress_loop_at(&loop, q)) continue;
        if (near_only)
            entry_near(m, t, q);
        else
            entry(m, t, q);
    }
    return sv_progress_loop_end(&loop);
}

void sv_em_tables_fold(sv_em_tables *t)
{
    size_t n2 = (size_t)(2 * t->nx + 1) * (2 * t->ny + 1);
    for (size_t q = 0; q < n2; q++) {
        sv_em_tables_fold_entry(t->P, t->nx, t->ny, q, t->Sxx, t->Syy, t->Sxy);
        if (t->lossy) sv_em_tables_fold_entry(t->P_im, t->nx, t->ny, q, t->Sxx_im, t->Syy_im, t->Sxy_im);
    }
}

void sv_em_tables_unknowns(const sv_em_model *m, sv_em_tables *t)
{
    for (int q = 0; q < m->n; q++) {
        t->kind[q] = m->basis[q].kind;
        t->ci[q] = m->basis[q].i;
        t->cj[q] = m->basis[q].j;
    }
}

double sv_em_port_inductance(const sv_em_model *m, int r, int c)
{
    sv_em_profile_t a, b;
    sv_em_profile(m, r, &a);
    sv_em_profile(m, c, &b);
    return sv_em_L_profiles(m, &a, &b, 0);
}
