/* Solvent planar EM model: the assembly's tables and the formulas that fill
 * them, written once for the CPU and for an accelerator (the CUDA module
 * includes this header alone: plain C types, no C99 complex numbers).
 *
 * On a uniform grid an entry of L or Ψ depends only on the integer offset
 * between two rooftops (or cells), so the assembly computes every distinct
 * value once into small tables and fills the N²/2 packed entries by lookups
 * (docs/em.md, "Fast assembly"):
 *   P(|di|, |dj|)    cell-to-cell potential coefficients (image series summed;
 *                    complex for a lossy dielectric: P + j·P_im)
 *   Lx, Ly           rooftop-to-rooftop inductances of parallel rooftops
 *   Sxx, Syy, Sxy    Ψ between two rooftops, P folded with the divergences
 * A table entry beyond the far distance is the corrected point
 * approximation summed over the image series (the functions below); a near
 * one needs the closed-form rectangle integrals with their cancellation
 * safeguards, which only the CPU computes (src/em). The em module's CPU
 * assembly uses these same functions for its far entries, its folds and its
 * lookups, so an accelerator that runs them reproduces it; docs/gpu.md,
 * "Assembly on the device". */
#ifndef SOLVENT_EM_TABLES_H
#define SOLVENT_EM_TABLES_H

#include <stddef.h>

#if defined(__CUDACC__)
#define SV_EM_FN __host__ __device__ __forceinline__
#else
#include <math.h>
#include <stdlib.h>
#define SV_EM_FN static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define SV_EM_MU0 1.25663706212e-6    /* H/m (CODATA 2018) */
#define SV_EM_EPS0 8.8541878128e-12   /* F/m (CODATA 2018) */
#define SV_EM_C0 299792458.0          /* m/s */
#define SV_EM_PI 3.14159265358979323846

/* Points of the Gauss–Legendre rule of far inductance coefficients at most. */
#define SV_EM_FAR_RULE_MAX 8

/* Unknown kinds: x rooftop, y rooftop (over cells (i, j) and the next one
 * along its axis), port half rooftop (in cell (i, j)). A rooftop's kind is
 * also its current's axis (0 x, 1 y). */
typedef enum sv_em_unknown_kind { SV_EM_UNKNOWN_X = 0, SV_EM_UNKNOWN_Y = 1, SV_EM_UNKNOWN_PORT = 2 } sv_em_unknown_kind;

/* 1 for a whole rooftop (x or y), 0 for a port half rooftop. */
SV_EM_FN int sv_em_is_rooftop(sv_em_unknown_kind kind) { return kind != SV_EM_UNKNOWN_PORT; }

/* The tables of one assembly and what fills them. The arrays live on one
 * side (host or device) with the struct that points at them. */
typedef struct sv_em_tables {
    int n, nrt;              /* unknowns; rooftops (unknowns 0 … nrt−1; port half rooftops after) */
    int nx, ny;              /* table extents (cells): the metal's bounding box */
    double dx, dy, h;        /* cell size, substrate thickness (m) */
    /* the far entries' image series: K = (εr − 1)/(εr + 1), complex (K, K_im) for a lossy
     * dielectric when P_im is wanted; `terms` images; the rule of far inductance integrals */
    int lossy;
    double K, K_im;
    int terms;
    int rule_n;
    double rule_t[SV_EM_FAR_RULE_MAX], rule_w[SV_EM_FAR_RULE_MAX];
    /* the unknowns: kind and cell, n each */
    sv_em_unknown_kind *kind;
    int *ci, *cj;
    /* nx × ny tables, entry (di, dj) at di + nx·dj; P_im NULL unless lossy */
    double *P, *P_im, *Lx, *Ly;
    /* the folded Ψ tables: Sxx, Syy nx × ny; Sxy (2nx + 1) × (2ny + 1) with offsets nx, ny */
    double *Sxx, *Syy, *Sxy, *Sxx_im, *Syy_im, *Sxy_im;
    /* nx × ny: 1 where the entry of P, Lx, Ly is a far one (computed by the functions below),
     * 0 where the CPU computed it from the closed forms */
    unsigned char *far_P, *far_Lx, *far_Ly;
} sv_em_tables;

/* What the tables do not give: the rows of the port half rooftops' inductance
 * and the thick metal's side-wall updates (computed on the CPU). */
typedef struct sv_em_assembly_rows {
    int np;                  /* port half rooftops: rows nrt … n−1 */
    const double *port_L;    /* L(r, c) for nrt ≤ r, c ≤ r at port_L[(r − nrt) + np·c] */
    /* side walls, δL: each (r, c), r ≥ c, once */
    size_t nl;
    const int *l_r, *l_c;
    const double *l_val;
    /* side walls, δΨ (and δΨ_im): nps distinct (r, c), r ≥ c; the contributions of
     * entry e are ps_val[ps_start[e] … ps_start[e + 1] − 1] (and ps_val_im), added in
     * that order */
    size_t nps;
    const int *ps_r, *ps_c;
    const size_t *ps_start;
    const double *ps_val, *ps_val_im;
} sv_em_assembly_rows;

/* ---- the point approximation (docs/em.md, "Fast assembly") ---- */

/* The rectangle pair [x1,x2]×[y1,y2], [x3,x4]×[y3,y4] at vertical gap z is
 * far when its centre distance is ≥ far_ratio · the largest side. */
SV_EM_FN int sv_em_rect_far(double x1, double x2, double y1, double y2, double x3, double x4, double y3, double y4,
                            double z, double far_ratio)
{
    double X = 0.5 * (x3 + x4 - x1 - x2), Y = 0.5 * (y3 + y4 - y1 - y2);
    double side = fmax(fmax(x2 - x1, y2 - y1), fmax(x4 - x3, y4 - y3));
    double R2 = X * X + Y * Y + z * z;
    return R2 >= far_ratio * far_ratio * side * side;
}

/* ∫∫∫∫ 1/|r − r'| over the two rectangles by the point approximation with its
 * second- and fourth-order corrections: the Taylor expansion of 1/|R + u|
 * averaged over u = s' − s, s and s' uniform in the two rectangles
 * (independent along x and y):
 *   <1/|R+u|> = 1/R + ½ Σ <u_i²> ∂ᵢ²(1/R)
 *             + (1/24)[<u_x⁴> ∂x⁴ + <u_y⁴> ∂y⁴ + 6 <u_x²><u_y²> ∂x²∂y²](1/R) + O(a⁶/R⁷)
 * with <u²> = (a1² + a2²)/12, <u⁴> = a1⁴/80 + a1²a2²/24 + a2⁴/80 and
 * ∂x⁴(1/R) = 3(35X⁴ − 30X²R² + 3R⁴)/R⁹, ∂x²∂y²(1/R) = 3(35X²Y² − 5(X² + Y²)R² + R⁴)/R⁹. */
SV_EM_FN double sv_em_rect_point(double x1, double x2, double y1, double y2, double x3, double x4, double y3,
                                 double y4, double z)
{
    double a1 = x2 - x1, b1 = y2 - y1, a2 = x4 - x3, b2 = y4 - y3;
    double X = 0.5 * (x3 + x4 - x1 - x2), Y = 0.5 * (y3 + y4 - y1 - y2);
    double X2 = X * X, Y2 = Y * Y, R2 = X2 + Y2 + z * z, R = sqrt(R2), R4 = R2 * R2;
    double R5 = R4 * R, R9 = R5 * R4;
    double ux2 = (a1 * a1 + a2 * a2) / 12, uy2 = (b1 * b1 + b2 * b2) / 12;
    double ux4 = (a1 * a1 * a1 * a1 + a2 * a2 * a2 * a2) / 80 + a1 * a1 * a2 * a2 / 24;
    double uy4 = (b1 * b1 * b1 * b1 + b2 * b2 * b2 * b2) / 80 + b1 * b1 * b2 * b2 / 24;
    double d2 = 0.5 * (ux2 * (3 * X2 - R2) + uy2 * (3 * Y2 - R2)) / R5;
    double dxxxx = 3 * (35 * X2 * X2 - 30 * X2 * R2 + 3 * R4), dyyyy = 3 * (35 * Y2 * Y2 - 30 * Y2 * R2 + 3 * R4);
    double dxxyy = 3 * (35 * X2 * Y2 - 5 * (X2 + Y2) * R2 + R4);
    double d4 = (ux4 * dxxxx + uy4 * dyyyy + 6 * ux2 * uy2 * dxxyy) / (24 * R9);
    return a1 * b1 * a2 * b2 * (1 / R + d2 + d4);
}

/* ---- far table entries ---- */

/* P (1/F) of two cells (di, dj) cells apart whose rectangle pair is far
 * (then so is every image): the lossless series
 *   (1 − K)/(4πε0) · Σ_{n≥0} (−K)ⁿ [I(2nh) − I(2(n+1)h)] / (dx·dy)². */
SV_EM_FN double sv_em_P_far(double dx, double dy, double h, double K, int terms, int di, int dj)
{
    double X = di * dx, Y = dj * dy;
    double s = 0, w = 1, prev = 0;
    for (int n = 0; n <= terms; n++) {
        double z = 2.0 * n * h;
        double Iz = sv_em_rect_point(0, dx, 0, dy, X, X + dx, Y, Y + dy, z);
        if (n > 0) {
            s += w * (prev - Iz);
            w *= -K;
        }
        prev = Iz;
    }
    return (1 - K) * s / (4 * SV_EM_PI * SV_EM_EPS0 * dx * dy * dx * dy);
}

/* The same for a complex K = Kr + j·Ki (a lossy dielectric), as direct term
 * and images, (1 − K)·I(0) − (1 − K²)·Σ_{n≥1} (−K)^{n−1}·I(2nh): the real part
 * returned, the imaginary part in *im. The complex products are written out
 * as C's complex arithmetic computes them (C17 Annex G: a complex times or
 * over a real is taken part by part), so that the CPU's and a device's
 * results agree to the last bit. */
SV_EM_FN double sv_em_P_far_lossy(double dx, double dy, double h, double Kr, double Ki, int terms, int di, int dj,
                                  double *im)
{
    double X = di * dx, Y = dj * dy;
    double k2r = Kr * Kr - Ki * Ki, k2i = Kr * Ki + Ki * Kr; /* K² */
    double ar = -(1 - k2r), ai = -(-k2i);                    /* −(1 − K²) */
    double sr = 0, si = 0, wr = 1, wi = 0;                   /* the sum, (−K)^{n−1} */
    for (int n = 0; n <= terms; n++) {
        double z = 2.0 * n * h;
        double Iz = sv_em_rect_point(0, dx, 0, dy, X, X + dx, Y, Y + dy, z);
        double cr = n == 0 ? 1 - Kr : ar * wr - ai * wi, ci = n == 0 ? -Ki : ar * wi + ai * wr;
        sr += cr * Iz;
        si += ci * Iz;
        if (n > 0) {
            double tr = wr * -Kr - wi * -Ki, ti = wr * -Ki + wi * -Kr;
            wr = tr;
            wi = ti;
        }
    }
    double den = 4 * SV_EM_PI * SV_EM_EPS0 * dx * dy * dx * dy;
    *im = si / den;
    return sr / den;
}

/* Galerkin L (H) of two parallel unit-height pulses [a1,a2] × [ta1,ta2] and
 * [b1,b2] × [tb1,tb2] (along × across axis `axis`), far apart: the current
 * spread uniformly across, μ0/(4π·wa·wb)·(I(0) − I(2h)). */
SV_EM_FN double sv_em_L_pulses_far(int axis, double h, double a1, double a2, double ta1, double ta2, double b1,
                                   double b2, double tb1, double tb2)
{
    double ax1 = axis ? ta1 : a1, ax2 = axis ? ta2 : a2, ay1 = axis ? a1 : ta1, ay2 = axis ? a2 : ta2;
    double bx1 = axis ? tb1 : b1, bx2 = axis ? tb2 : b2, by1 = axis ? b1 : tb1, by2 = axis ? b2 : tb2;
    double i0 = sv_em_rect_point(ax1, ax2, ay1, ay2, bx1, bx2, by1, by2, 0);
    double i1 = sv_em_rect_point(ax1, ax2, ay1, ay2, bx1, bx2, by1, by2, 2 * h);
    return SV_EM_MU0 / (4 * SV_EM_PI) / ((ta2 - ta1) * (tb2 - tb1)) * (i0 - i1);
}

/* L of two parallel rooftops (cell length d along, widths w, wb across) at an
 * along/across offset (D, T) beyond the far distance: the triangle as the
 * convolution of two pulses, (1/d)·∫_{−d}^{d} (1 − |σ|/d)·Lpulse(D + σ) dσ by
 * the rule (t, w) on [0, 1] per half. Far means D² + T² ≥ ((far ratio + 2)·
 * max(2d, w, wb))²: every pulse pair is then ≥ 1.5 sides beyond the far
 * ratio, so each takes the point approximation. */
SV_EM_FN double sv_em_L_rooftops_far(int axis, double d, double w, double wb, double D, double T, double h,
                                     int rule_n, const double *rule_t, const double *rule_w)
{
    double s = 0;
    for (int k = 0; k < rule_n; k++) {
        double sg = rule_t[k] * d, wt = rule_w[k] * (1 - rule_t[k]);
        s += wt * (sv_em_L_pulses_far(axis, h, -0.5 * d, 0.5 * d, 0, w, D + sg - 0.5 * d, D + sg + 0.5 * d, T, T + wb) +
                   sv_em_L_pulses_far(axis, h, -0.5 * d, 0.5 * d, 0, w, D - sg - 0.5 * d, D - sg + 0.5 * d, T, T + wb));
    }
    return s;
}

/* Table entry q = di + nx·dj of P (and P_im), Lx, Ly where it is far. */
SV_EM_FN void sv_em_tables_far_entry(const sv_em_tables *t, int q)
{
    int di = q % t->nx, dj = q / t->nx;
    if (t->far_P[q]) {
        if (t->lossy)
            t->P[q] = sv_em_P_far_lossy(t->dx, t->dy, t->h, t->K, t->K_im, t->terms, di, dj, &t->P_im[q]);
        else
            t->P[q] = sv_em_P_far(t->dx, t->dy, t->h, t->K, t->terms, di, dj);
    }
    if (t->far_Lx[q])
        t->Lx[q] = sv_em_L_rooftops_far(0, t->dx, t->dy, t->dy, di * t->dx, dj * t->dy, t->h, t->rule_n, t->rule_t,
                                        t->rule_w);
    if (t->far_Ly[q])
        t->Ly[q] = sv_em_L_rooftops_far(1, t->dy, t->dx, t->dx, dj * t->dy, di * t->dx, t->h, t->rule_n, t->rule_t,
                                        t->rule_w);
}

/* ---- the folds: Ψ between rooftops from P ---- */

SV_EM_FN double sv_em_P_at(const double *P, int nx, int di, int dj) { return P[abs(di) + (size_t)nx * abs(dj)]; }

/* x rooftop (i, j) has +1 on cell (i, j), −1 on (i+1, j); y rooftop (k, l) +1
 * on (k, l), −1 on (k, l+1). Same-axis pairs at offset (di, dj) ≥ 0 (0 where
 * no such pair fits the grid): */
SV_EM_FN double sv_em_fold_xx(const double *P, int nx, int di, int dj)
{
    return di + 1 < nx ? 2 * sv_em_P_at(P, nx, di, dj) - sv_em_P_at(P, nx, di - 1, dj) - sv_em_P_at(P, nx, di + 1, dj)
                       : 0;
}
SV_EM_FN double sv_em_fold_yy(const double *P, int nx, int ny, int di, int dj)
{
    return dj + 1 < ny ? 2 * sv_em_P_at(P, nx, di, dj) - sv_em_P_at(P, nx, di, dj - 1) - sv_em_P_at(P, nx, di, dj + 1)
                       : 0;
}
/* x rooftop against y rooftop, di = i − k, dj = j − l (−(nx−1) ≤ di ≤ nx−2,
 * −(ny−2) ≤ dj ≤ ny−1; 0 outside). */
SV_EM_FN double sv_em_fold_xy(const double *P, int nx, int ny, int di, int dj)
{
    if (di < -(nx - 1) || di > nx - 2 || dj < -(ny - 2) || dj > ny - 1) return 0;
    return sv_em_P_at(P, nx, di, dj) - sv_em_P_at(P, nx, di, dj - 1) - sv_em_P_at(P, nx, di + 1, dj) +
           sv_em_P_at(P, nx, di + 1, dj - 1);
}

/* Entry q of the folded tables of P into Sxx, Syy (q < nx·ny) and Sxy
 * (q < (2nx + 1)·(2ny + 1)). */
SV_EM_FN void sv_em_tables_fold_entry(const double *P, int nx, int ny, size_t q, double *Sxx, double *Syy, double *Sxy)
{
    if (q < (size_t)nx * ny) {
        int di = (int)(q % nx), dj = (int)(q / nx);
        Sxx[q] = sv_em_fold_xx(P, nx, di, dj);
        Syy[q] = sv_em_fold_yy(P, nx, ny, di, dj);
    }
    if (q < (size_t)(2 * nx + 1) * (2 * ny + 1)) {
        int di = (int)(q % (2 * nx + 1)) - nx, dj = (int)(q / (2 * nx + 1)) - ny;
        Sxy[q] = sv_em_fold_xy(P, nx, ny, di, dj);
    }
}

/* ---- entries ---- */

/* L and Ψ (and Ψ_im when pi is not NULL) between rooftops r and c (kind,
 * cell) from the tables. */
SV_EM_FN void sv_em_tables_pair(const sv_em_tables *t, sv_em_unknown_kind kr, int ir, int jr, sv_em_unknown_kind kc,
                                int ic, int jc, double *l, double *p, double *pi)
{
    int nx = t->nx;
    if (kr == kc) {
        size_t q = (size_t)abs(ir - ic) + (size_t)nx * abs(jr - jc);
        if (kr == SV_EM_UNKNOWN_X) {
            *l = t->Lx[q];
            *p = t->Sxx[q];
            if (pi) *pi = t->Sxx_im[q];
        } else {
            *l = t->Ly[q];
            *p = t->Syy[q];
            if (pi) *pi = t->Syy_im[q];
        }
    } else {
        int xi = kr == SV_EM_UNKNOWN_X ? ir : ic, xj = kr == SV_EM_UNKNOWN_X ? jr : jc;
        int yi = kr == SV_EM_UNKNOWN_X ? ic : ir, yj = kr == SV_EM_UNKNOWN_X ? jc : jr;
        size_t q = (size_t)(xi - yi + nx) + (size_t)(2 * nx + 1) * (xj - yj + t->ny);
        *l = 0;
        *p = t->Sxy[q];
        if (pi) *pi = t->Sxy_im[q];
    }
}

/* The cells where an unknown has divergence (±1/(dx·dy)) and the signs;
 * returns 1 (a port half rooftop: the current enters the metal at the port
 * edge) or 2. */
SV_EM_FN int sv_em_unknown_cells(sv_em_unknown_kind kind, int i, int j, int ci[2], int cj[2], int sg[2])
{
    ci[0] = i;
    cj[0] = j;
    if (kind == SV_EM_UNKNOWN_PORT) {
        sg[0] = -1;
        return 1;
    }
    sg[0] = 1;
    sg[1] = -1;
    ci[1] = i + (kind == SV_EM_UNKNOWN_X);
    cj[1] = j + (kind == SV_EM_UNKNOWN_Y);
    return 2;
}

/* Σ D_am·D_bn·P_ab over the divergence cells of two unknowns (any kinds): how
 * the rows of port half rooftops get their Ψ. */
SV_EM_FN double sv_em_psi_cells(const double *P, int nx, sv_em_unknown_kind kr, int ir, int jr, sv_em_unknown_kind kc,
                                 int ic, int jc)
{
    int ai[2], aj[2], as[2], bi[2], bj[2], bs[2];
    int na = sv_em_unknown_cells(kr, ir, jr, ai, aj, as), nb = sv_em_unknown_cells(kc, ic, jc, bi, bj, bs);
    double s = 0;
    for (int u = 0; u < na; u++)
        for (int v = 0; v < nb; v++) s += as[u] * bs[v] * sv_em_P_at(P, nx, ai[u] - bi[v], aj[u] - bj[v]);
    return s;
}

#ifdef __cplusplus
}
#endif
#endif
