/* Assembly of L and Ψ = Dᵀ·P·D in the packed block-column layout.
 *
 * On a uniform grid a coefficient depends only on the integer cell offset,
 * the orientation pair and the image index, so every distinct value is
 * computed once into small tables:
 *   P(|di|, |dj|)    cell-to-cell potential coefficients (image series summed)
 *   Lx, Ly           rooftop-to-rooftop inductances for parallel rooftops
 *   Sxx, Syy, Sxy    Ψ between two rooftops: Ψ_mn = Σ D_am·D_bn·P_ab has
 *                    only four terms, folded once per offset into a table
 * and the N² entries are one table lookup each. Only the rows of port half
 * rooftops (few) are computed from their own profiles and cells. The
 * tables span the offsets between the cells the unknowns touch (the
 * metal's bounding box), not the grid: a few metal cells on a huge grid
 * cost a few coefficients. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "em_internal.h"
#include "geom.h"


/* The Ψ tables of one potential-coefficient table P: the real part, and
 * for a lossy dielectric the imaginary part. */
typedef struct psi_tables {
    double *P;           /* nx × ny, P[di + nx·dj] */
    double *Sxx, *Syy;   /* nx × ny */
    double *Sxy;         /* (2nx+1) × (2ny+1), offset nx, ny */
} psi_tables;

typedef struct tables {
    int nx, ny;          /* table extents (cells): the metal's bounding box */
    double *Lx, *Ly;     /* nx × ny */
    psi_tables re, im;   /* im.P is NULL for a lossless dielectric */
    int exact_count;
} tables;

static double Pt(const psi_tables *t, int nx, int di, int dj) { return t->P[abs(di) + (size_t)nx * abs(dj)]; }

static void psi_free(sv_ctx *ctx, psi_tables *t)
{
    sv_free(ctx, t->P);
    sv_free(ctx, t->Sxx);
    sv_free(ctx, t->Syy);
    sv_free(ctx, t->Sxy);
}

static void tables_free(sv_ctx *ctx, tables *t)
{
    sv_free(ctx, t->Lx);
    sv_free(ctx, t->Ly);
    psi_free(ctx, &t->re);
    psi_free(ctx, &t->im);
}

static int psi_alloc(sv_ctx *ctx, size_t n1, size_t n2, psi_tables *t)
{
    t->P = sv_alloc(ctx, n1 * sizeof(double), "em table P");
    t->Sxx = sv_calloc(ctx, n1, sizeof(double), "em table Sxx");
    t->Syy = sv_calloc(ctx, n1, sizeof(double), "em table Syy");
    t->Sxy = sv_calloc(ctx, n2, sizeof(double), "em table Sxy");
    return t->P && t->Sxx && t->Syy && t->Sxy;
}

/* Ψ between rooftops from P: x rooftop (i,j) has +1 on cell (i,j), −1 on
 * (i+1,j); against y rooftop (k,l) (+1 on (k,l), −1 on (k,l+1)), di = i−k,
 * dj = j−l. */
static void psi_fold(int nx, int ny, psi_tables *t)
{
    for (int dj = 0; dj < ny; dj++)
        for (int di = 0; di < nx; di++) {
            size_t q = (size_t)di + (size_t)nx * dj;
            if (di + 1 < nx) t->Sxx[q] = 2 * Pt(t, nx, di, dj) - Pt(t, nx, di - 1, dj) - Pt(t, nx, di + 1, dj);
            if (dj + 1 < ny) t->Syy[q] = 2 * Pt(t, nx, di, dj) - Pt(t, nx, di, dj - 1) - Pt(t, nx, di, dj + 1);
        }
    for (int dj = -(ny - 2); dj <= ny - 1; dj++)
        for (int di = -(nx - 1); di <= nx - 2; di++)
            t->Sxy[(size_t)(di + nx) + (size_t)(2 * nx + 1) * (dj + ny)] =
                Pt(t, nx, di, dj) - Pt(t, nx, di, dj - 1) - Pt(t, nx, di + 1, dj) + Pt(t, nx, di + 1, dj - 1);
}

/* Width and height (cells) of the box holding every cell an unknown has
 * divergence on: every offset a table is looked up at lies inside it. */
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

size_t sv_em_assemble_work_bytes(const sv_em_model *m)
{
    if (!m) return 0;
    int w, h, lossy = m->prj->st.tan_delta > 0;
    metal_extent(m, &w, &h);
    size_t n1 = (size_t)w * h, n2 = (size_t)(2 * w + 1) * (2 * h + 1);
    return sizeof(double) * (2 * n1 + (size_t)(1 + lossy) * (3 * n1 + n2)); /* Lx, Ly; P, Sxx, Syy, Sxy each */
}

static sv_status tables_build(sv_ctx *ctx, const sv_em_model *m, int lossy, tables *t)
{
    int nx, ny;
    metal_extent(m, &nx, &ny);
    size_t n1 = (size_t)nx * ny, n2 = (size_t)(2 * nx + 1) * (2 * ny + 1);
    memset(t, 0, sizeof *t);
    t->nx = nx;
    t->ny = ny;
    t->Lx = sv_alloc(ctx, n1 * sizeof(double), "em table Lx");
    t->Ly = sv_alloc(ctx, n1 * sizeof(double), "em table Ly");
    if (!t->Lx || !t->Ly || !psi_alloc(ctx, n1, n2, &t->re) || (lossy && !psi_alloc(ctx, n1, n2, &t->im))) {
        sv_status s = sv_last_status();
        tables_free(ctx, t);
        return s;
    }
#pragma omp parallel for schedule(dynamic, 8)
    for (long q = 0; q < (long)n1; q++) {
        int di = (int)(q % nx), dj = (int)(q / nx);
        if (lossy)
            t->re.P[q] = sv_em_P_cells_lossy(m, di, dj, 0, &t->im.P[q]);
        else
            t->re.P[q] = sv_em_P_cells(m, di, dj, 0);
        t->Lx[q] = sv_em_L_rooftops(m, 0, di, dj, 0);
        t->Ly[q] = sv_em_L_rooftops(m, 1, di, dj, 0);
    }
    psi_fold(nx, ny, &t->re);
    if (lossy) psi_fold(nx, ny, &t->im);
    return SV_OK;
}

/* Entry (r, c) of L and Ψ (and Ψ's imaginary part when pi is not NULL)
 * for two rooftops from the tables. */
static inline void entry_tab(const tables *t, const sv_em_basis *br, const sv_em_basis *bc, double *l, double *p,
                             double *pi)
{
    int nx = t->nx;
    if (br->kind == bc->kind) {
        size_t q = (size_t)abs(br->i - bc->i) + (size_t)nx * abs(br->j - bc->j);
        if (br->kind == 0) {
            *l = t->Lx[q];
            *p = t->re.Sxx[q];
            if (pi) *pi = t->im.Sxx[q];
        } else {
            *l = t->Ly[q];
            *p = t->re.Syy[q];
            if (pi) *pi = t->im.Syy[q];
        }
    } else {
        const sv_em_basis *bx = br->kind == 0 ? br : bc, *by = br->kind == 0 ? bc : br;
        size_t q = (size_t)(bx->i - by->i + nx) + (size_t)(2 * nx + 1) * (bx->j - by->j + t->ny);
        *l = 0;
        *p = t->re.Sxy[q];
        if (pi) *pi = t->im.Sxy[q];
    }
}

/* Σ D_am·D_bn·P_ab over the divergence cells of unknowns r and c. */
static double psi_port(const sv_em_model *m, const psi_tables *t, int nx, int r, int c)
{
    int ai[2], aj[2], as[2], bi[2], bj[2], bs[2];
    int na = sv_em_div_cells(m, r, ai, aj, as), nb = sv_em_div_cells(m, c, bi, bj, bs);
    double s = 0;
    for (int u = 0; u < na; u++)
        for (int v = 0; v < nb; v++) s += as[u] * bs[v] * Pt(t, nx, ai[u] - bi[v], aj[u] - bj[v]);
    return s;
}

/* Entry involving a port half rooftop: from its profile and cells. */
static void entry_port(const sv_em_model *m, const tables *t, int r, int c, double *l, double *p, double *pi)
{
    sv_em_profile_t a, b;
    sv_em_profile(m, r, &a);
    sv_em_profile(m, c, &b);
    *l = sv_em_L_profiles(m, &a, &b, 0);
    *p = psi_port(m, &t->re, t->nx, r, c);
    if (pi) *pi = psi_port(m, &t->im, t->nx, r, c);
}

/* Every entry of L and Ψ (and of Ψ's imaginary part when PsiI is not
 * NULL): one parallel loop over columns, table lookups for rooftop pairs,
 * port rows from their own geometry. */
static void fill_columns(const sv_em_model *m, const tables *t, double *L, double *Psi, double *PsiI,
                         sv_em_colbase_fn colbase, void *user)
{
    int n = m->n, nrt = m->nx_edges + m->ny_edges;
    const sv_em_basis *B = m->basis;
#pragma omp parallel for schedule(dynamic, 16)
    for (int c = 0; c < n; c++) {
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
}

/* A grid or stack-up out of range shows on the diagonal first (a lossy
 * dielectric's Ψ_im is positive semidefinite: its diagonal ≥ 0). */
static sv_status check_diagonal(const sv_em_model *m, const double *L, const double *Psi, const double *PsiI,
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

sv_status sv_em_assemble_raw_lossy(sv_ctx *ctx, const sv_em_model *m, double *L, double *Psi, double *PsiI,
                                   sv_em_colbase_fn colbase, void *user, sv_em_assembly_info *info)
{
    if (!m || !L || !Psi || !colbase) return sv_error(SV_ERR_ARG, "sv_em_assemble: NULL argument");
    if (PsiI && !(m->prj->st.tan_delta > 0))
        return sv_error(SV_ERR_ARG, "sv_em_assemble: the imaginary part of Psi asked for a lossless dielectric");
    double t0 = sv_time_now();
    sv_threads_saved prev = sv_threads_apply(ctx);
    tables t;
    sv_status s = tables_build(ctx, m, PsiI != NULL, &t);
    if (s) {
        sv_threads_restore(prev);
        return s;
    }
    /* The fill is one parallel loop: on a shared machine every extra barrier
     * costs more than it buys, so progress (and cancellation) is offered
     * between the tables and the fill, and at the end. */
    s = sv_progress(ctx, "em assembly", 0.05);
    if (!s) fill_columns(m, &t, L, Psi, PsiI, colbase, user);
    if (!s) s = sv_em_walls_add(ctx, m, L, Psi, PsiI, colbase, user);
    if (!s && info) {
        info->image_terms = sv_em_image_terms(m->prj->st.eps_r, m->opts.accuracy);
        info->distinct_coeffs = (PsiI ? 4 : 3) * t.nx * t.ny;
        info->seconds = sv_time_now() - t0;
    }
    tables_free(ctx, &t);
    sv_threads_restore(prev);
    if (!s) s = check_diagonal(m, L, Psi, PsiI, colbase, user);
    if (!s) s = sv_progress(ctx, "em assembly", 1.0);
    return s;
}

/* The naive reference: every entry from the closed forms of its own cell
 * pairs, every image term, no tables and no far-field approximation. */
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
            for (int v = 0; v < nb; v++) s += as[u] * bs[v] * sv_em_P_cells(m, ai[u] - bi[v], aj[u] - bj[v], 1);
        pcol[r - c] = s;
    }
    sv_em_walls_column(m, c, lcol, pcol);
}
