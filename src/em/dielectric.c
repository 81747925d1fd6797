/* Lossy dielectric: the cell potential coefficients of the image series
 * with the complex permittivity εr* = εr·(1 − j·tanδ) (frequency
 * independent). K = (εr* − 1)/(εr* + 1) becomes complex, so P, and with it
 * Ψ = Dᵀ·P·D, splits into a real part (the lossless one, to O(tan²δ)) and
 * an imaginary part that enters Z as +Ψ_im/ω: the dielectric's conductance.
 * The rectangle integrals are the lossless model's; only their weights
 * change (docs/em.md). */
#include <complex.h>
#include <math.h>
#include <stdlib.h>

#include "em_internal.h"
#include "geom.h"

void sv_em_lossy_series(const sv_em_model *m, double complex *K, int *terms)
{
    double complex er = m->prj->st.eps_r * (1 - I * m->prj->st.tan_delta);
    *K = (er - 1) / (er + 1);
    /* |K|ⁿ ≤ accuracy: as sv_em_image_terms with the modulus */
    double aK = cabs(*K);
    int n = aK > 0 ? (int)ceil(log(m->opts.accuracy) / log(aK)) : 1;
    if (n < 1) n = 1;
    if (n > 100000) n = 100000;
    *terms = n;
}

double sv_em_P_cells_lossy(const sv_em_model *m, int di, int dj, int exact, double *im)
{
    const sv_em_grid *g = &m->prj->grid;
    double dx = g->dx, dy = g->dy, h = m->prj->st.h, fr = m->opts.far_ratio;
    double complex K, w = 1, s = 0;
    int terms;
    sv_em_lossy_series(m, &K, &terms);
    if (!exact && sv_em_P_cells_is_far(m, di, dj))
        return sv_em_P_far_lossy(dx, dy, h, creal(K), cimag(K), terms, di, dj, im);
    /* the series as direct + images: (1 − K)·I(0) − (1 − K²)·Σ_{n≥1} (−K)^{n−1}·I(2nh) */
    double X = di * dx, Y = dj * dy;
    for (int n = 0; n <= terms; n++) {
        double z = 2.0 * n * h;
        double Iz = exact ? sv_em_rect_exact(0, dx, 0, dy, X, X + dx, Y, Y + dy, z)
                          : sv_em_rect(0, dx, 0, dy, X, X + dx, Y, Y + dy, z, fr);
        s += (n == 0 ? 1 - K : -(1 - K * K) * w) * Iz;
        if (n > 0) w *= -K;
    }
    double complex P = s / (4 * SV_EM_PI * SV_EM_EPS0 * dx * dy * dx * dy);
    *im = cimag(P); /* P* = P_re + j·P_im; Z gets −j·Ψ_re/ω + Ψ_im/ω */
    return creal(P);
}

/* The loss ratio of the metal's static charge: with every metal cell
 * charged alike, Σ_ab P_im(a − b) / Σ_ab P_re(a − b). Ψ_im ≈ ratio·Ψ_re
 * gives that charge distribution's loss exactly, and every other one to the
 * spread of the filling factor (docs/em.md). The pair sums run over offsets
 * with the metal mask's autocorrelation as weights. */
sv_status sv_em_dielectric_ratio(sv_ctx *ctx, const sv_em_model *m, double *ratio)
{
    const sv_em_project *p = m->prj;
    int nx = p->grid.nx, ny = p->grid.ny, nc = 0;
    int *cell = sv_alloc(ctx, sizeof(int) * (size_t)nx * ny, "em dielectric loss ratio");
    double *pairs = sv_calloc(ctx, (size_t)nx * ny, sizeof(double), "em dielectric loss ratio");
    double *part = sv_alloc(ctx, 2 * sizeof(double) * (size_t)nx * ny, "em dielectric loss ratio");
    if (!cell || !pairs || !part) {
        sv_status st = sv_last_status();
        sv_free(ctx, cell);
        sv_free(ctx, pairs);
        sv_free(ctx, part);
        return st;
    }
    for (int c = 0; c < nx * ny; c++)
        if (p->metal[c]) cell[nc++] = c;
    /* the pairs (half the work), then the offsets' terms */
    sv_progress_loop loop = sv_progress_loop_begin(ctx, "dielectric loss", 2.0 * nc * nc);
    for (int a = 0; a < nc && !sv_progress_loop_at(&loop, sv_em_columns_before(nc, a)); a++) /* ordered pairs by |offset| */
        for (int b = a; b < nc; b++) {
            int di = abs(cell[a] % nx - cell[b] % nx), dj = abs(cell[a] / nx - cell[b] / nx);
            pairs[di + (size_t)nx * dj] += a == b ? 1 : 2;
        }
    /* the offsets' terms in parallel, their sums in one order (a reduction's
     * order would follow the threads, and the ratio with it) */
#pragma omp parallel for schedule(dynamic, 4) num_threads(sv_threads_team())
    for (int q = 0; q < nx * ny; q++) {
        if (sv_progress_loop_at(&loop, (double)nc * nc * (1.0 + (double)q / (nx * ny)))) continue;
        double im = 0, re = pairs[q] == 0 ? 0 : sv_em_P_cells_lossy(m, q % nx, q / nx, 0, &im);
        part[2 * q] = pairs[q] * im;
        part[2 * q + 1] = pairs[q] * re;
    }
    double num = 0, den = 0;
    for (int q = 0; q < nx * ny; q++) {
        num += part[2 * q];
        den += part[2 * q + 1];
    }
    sv_free(ctx, cell);
    sv_free(ctx, pairs);
    sv_free(ctx, part);
    *ratio = den > 0 ? num / den : 0;
    return sv_progress_loop_end(&loop);
}
