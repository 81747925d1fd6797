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

double sv_em_P_cells_lossy(const sv_em_model *m, int di, int dj, int exact, double *im)
{
    const sv_em_grid *g = &m->prj->grid;
    double dx = g->dx, dy = g->dy, h = m->prj->st.h, fr = m->opts.far_ratio;
    double complex er = m->prj->st.eps_r * (1 - I * m->prj->st.tan_delta);
    double complex K = (er - 1) / (er + 1), w = 1, s = 0;
    /* |K|ⁿ ≤ accuracy: as sv_em_image_terms with the modulus */
    double aK = cabs(K);
    int terms = aK > 0 ? (int)ceil(log(m->opts.accuracy) / log(aK)) : 1;
    if (terms < 1) terms = 1;
    if (terms > 100000) terms = 100000;
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
    if (!cell || !pairs) {
        sv_status st = sv_last_status();
        sv_free(ctx, cell);
        sv_free(ctx, pairs);
        return st;
    }
    for (int c = 0; c < nx * ny; c++)
        if (p->metal[c]) cell[nc++] = c;
    for (int a = 0; a < nc; a++) /* ordered pairs by |offset| */
        for (int b = a; b < nc; b++) {
            int di = abs(cell[a] % nx - cell[b] % nx), dj = abs(cell[a] / nx - cell[b] / nx);
            pairs[di + (size_t)nx * dj] += a == b ? 1 : 2;
        }
    double num = 0, den = 0;
#pragma omp parallel for schedule(dynamic, 4) reduction(+ : num, den)
    for (int q = 0; q < nx * ny; q++) {
        if (pairs[q] == 0) continue;
        double im, re = sv_em_P_cells_lossy(m, q % nx, q / nx, 0, &im);
        num += pairs[q] * im;
        den += pairs[q] * re;
    }
    sv_free(ctx, cell);
    sv_free(ctx, pairs);
    *ratio = den > 0 ? num / den : 0;
    return SV_OK;
}
