/* Dispersion's far field resummed (docs/em.md, "Dispersion", "The far
 * field resummed").
 *
 * The first-order term of dispersion.c is the kernels' exact k0² change;
 * its far field is c/ρ at every distance, while the real reactive change
 * along a circuit is retarded: to second order in the substrate's
 * thickness (the thin slab of docs/em.md, "Radiation"),
 *   ΔG_A = (μ0·h²/2π)·[(k0ρ·sin k0ρ + cos k0ρ − 1)/ρ³ − k0²/(2ρ)] = (μ0·h²·k0³/4π)·H_A(x),
 *   ΔG_φ = (h²·k0³/2πε0)·H_φ(x),      x = k0·ρ,
 * beyond the first order, with ψ(x) = 2(x·sin x + cos x − 1)/x²,
 *   H_A(x) = (ψ(x) − 1)/x,
 *   H_φ(x) = [(ψ(x) − 1)/(2εr²) − (εr − 1)²/εr²·(cos x − 1)]/x.
 * Both vanish like x at x = 0 (the first order's own far field is taken
 * out) and are smooth, so over a band (k0 ≤ K) and a circuit (ρ ≤ R) they
 * are nearly separable: an SVD of the stacked samples
 *   [κ²·H_A(X·κ·t) | s·H_φ(X·κ·t)]/κ²,  κ = k0/K, t = ρ/R, X = K·R,
 * gives a few terms κ²·w_m(κ)·[a_m(t) | b_m(t)] common to both kernels, so
 * that each term is one packed matrix with the coefficient jω·k0·w_m. (s
 * weighs the charge's part as a line mode sees it: Ψ's divergences bring
 * β² ≈ (εr + 1)/2·k0² against the current's k0², twice for its 2π; the
 * rows' 1/κ² asks every frequency for the same accuracy relative to the
 * first order.) The terms stop where both kernels are within FAR_TOL of
 * that scale on the samples. The singular vectors are kept on the sample
 * grids and interpolated: the functions are analytic in t and κ. */
#include <lapacke.h>
#include <math.h>

#include "em_internal.h"

#define FAR_NK 97  /* samples of κ in [0, 1] */
#define FAR_NT 513 /* samples of t in [0, 1] */
#define FAR_NC 48  /* Chebyshev points of κ in [0, 1] carrying the weights: 48 intervals */

struct sv_em_disp_far {
    int terms;
    double K, R, X, s, eps_r;
    double cA, cphi;             /* the kernels' constants: α_m = cA·a_m, β_m = cphi·b_m */
    double wc[(FAR_NC + 1) * SV_EM_DISP_FAR_MAX]; /* w_m at the Chebyshev points, c + (FAR_NC + 1)·m */
    double v[2 * FAR_NT * SV_EM_DISP_FAR_MAX]; /* [a_m(t_j) | b_m(t_j)] at j + 2·FAR_NT·m */
};

/* ψ(x) − 1 without cancellation: below 1 its series
 * Σ_{m≥2} 2(−1)^(m−1)·(2m − 1)·x^(2m−2)/(2m)!. */
static double psi_m1(double x)
{
    if (x < 1) {
        double x2 = x * x, f = x2 / 24, s = 0; /* f = x^(2m−2)/(2m)! */
        for (int m = 2; m <= 10; m++) {
            s += (m % 2 ? 2 : -2) * (2.0 * m - 1) * f;
            f *= x2 / ((2.0 * m + 1) * (2.0 * m + 2));
        }
        return s;
    }
    return 2 * (x * sin(x) + cos(x) - 1) / (x * x) - 1;
}

double sv_em_disp_far_HA(double x) { return x > 0 ? psi_m1(x) / x : 0; }

double sv_em_disp_far_Hphi(double x, double eps_r)
{
    if (!(x > 0)) return 0;
    double s2 = sin(0.5 * x), b = (eps_r - 1) * (eps_r - 1) / (eps_r * eps_r);
    return (psi_m1(x) / (2 * eps_r * eps_r) + b * 2 * s2 * s2) / x; /* cos x − 1 = −2 sin²(x/2) */
}

/* Row κ of the stacked samples. */
static void sample_row(const sv_em_disp_far *f, double kappa, double *row)
{
    for (int j = 0; j < FAR_NT; j++) {
        double x = f->X * kappa * j / (FAR_NT - 1);
        row[j] = kappa * kappa * sv_em_disp_far_HA(x);
        row[FAR_NT + j] = f->s * sv_em_disp_far_Hphi(x, f->eps_r);
    }
}

/* Four-point Lagrange interpolation of y on the uniform grid of n samples
 * over [0, 1] at u (clamped to the grid's last interval beyond it). */
static double interpolate(const double *y, int n, double u)
{
    double p = u * (n - 1);
    int i = (int)floor(p) - 1;
    if (i < 0) i = 0;
    if (i > n - 4) i = n - 4;
    double r = p - i, s = 0;
    for (int a = 0; a < 4; a++) {
        double l = 1;
        for (int b = 0; b < 4; b++)
            if (b != a) l *= (r - b) / (a - b);
        s += l * y[i + a];
    }
    return s;
}

/* Chebyshev point c of [0, 1] (c = 0 … FAR_NC, from 1 down to 0). */
static double chebyshev_point(int c) { return 0.5 * (1 + cos(SV_EM_PI * c / FAR_NC)); }

/* w_m of a row of samples: its projection on term m's singular vector. */
static double project(const sv_em_disp_far *f, int m, const double *row)
{
    double s = 0;
    for (int j = 0; j < 2 * FAR_NT; j++) s += row[j] * f->v[j + 2 * FAR_NT * m];
    return s;
}

/* The first m terms' largest error on the samples, each kernel's against
 * κ² times its largest value: the first order's scaling, against which the
 * far field's change counts (it vanishes like κ⁴ at the band's bottom);
 * w_m(κ_i)/κ_i² = σ_m·U(i, m) at w[i + FAR_NK·m]. */
static double fit_error(const sv_em_disp_far *f, int m, const double *w, const double *samples)
{
    const int cols = 2 * FAR_NT;
    double top[2] = {0, 0}, err[2] = {0, 0};
    for (int q = 0; q < FAR_NK * cols; q++) top[q % cols >= FAR_NT] = fmax(top[q % cols >= FAR_NT], fabs(samples[q]));
    for (int i = 1; i < FAR_NK; i++) {
        double kappa = (double)i / (FAR_NK - 1);
        for (int j = 0; j < cols; j++) {
            double r = 0;
            for (int k = 0; k < m; k++) r += w[i + FAR_NK * k] * f->v[j + cols * k];
            int part = j >= FAR_NT;
            err[part] = fmax(err[part], fabs(kappa * kappa * r - samples[(size_t)cols * i + j]) / (kappa * kappa));
        }
    }
    return fmax(top[0] > 0 ? err[0] / top[0] : 0, top[1] > 0 ? err[1] / top[1] : 0);
}

/* The thin SVD of the FAR_NK × cols samples a (destroyed) by dgesdd, its
 * workspace from the context like every other allocation (queried first). */
static sv_status svd(sv_ctx *ctx, double *a, int cols, double *sv, double *u, double *vt)
{
    double wq = 0;
    lapack_int iwork_n = 8 * FAR_NK, *iwork = sv_alloc(ctx, sizeof(lapack_int) * (size_t)iwork_n, "SVD workspace");
    if (!iwork) return sv_last_status();
    lapack_int info =
        LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, 'S', FAR_NK, cols, a, FAR_NK, sv, u, FAR_NK, vt, FAR_NK, &wq, -1, iwork);
    double *work = info ? NULL : sv_alloc(ctx, sizeof(double) * ((size_t)wq + 1), "dispersion far field SVD workspace");
    if (!info && !work) {
        sv_free(ctx, iwork);
        return sv_last_status();
    }
    if (!info)
        info = LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, 'S', FAR_NK, cols, a, FAR_NK, sv, u, FAR_NK, vt, FAR_NK, work,
                                   (lapack_int)wq + 1, iwork);
    sv_free(ctx, work);
    sv_free(ctx, iwork);
    if (info) return sv_error(SV_ERR_NOCONV, "dispersion far field: the SVD failed (dgesdd info %d)", (int)info);
    return SV_OK;
}

sv_status sv_em_disp_far_make(sv_ctx *ctx, double h, double eps_r, double k0max, double rmax, double tol,
                              sv_em_disp_far **out)
{
    *out = NULL;
    if (!(h > 0) || !(eps_r >= 1) || !(k0max >= 0) || !(rmax > 0) || !(tol > 0 && tol < 1))
        return sv_error(SV_ERR_ARG, "dispersion far field: h %g, eps_r %g, k0 %g, extent %g, tol %g", h, eps_r, k0max,
                        rmax, tol);
    sv_em_disp_far *f = sv_calloc(ctx, 1, sizeof *f, "dispersion far field");
    if (!f) return sv_last_status();
    f->K = k0max;
    f->R = rmax;
    f->X = k0max * rmax;
    f->eps_r = eps_r;
    f->s = eps_r + 1;
    f->cA = SV_EM_MU0 * h * h / (4 * SV_EM_PI) * k0max * k0max;
    f->cphi = h * h / (2 * SV_EM_PI * SV_EM_EPS0) / f->s;
    *out = f;
    if (!(f->X > 0)) return SV_OK; /* no band or no extent: nothing beyond the first order */
    const int cols = 2 * FAR_NT, nsv = FAR_NK; /* FAR_NK < cols: FAR_NK singular values */
    double *a = sv_alloc(ctx, sizeof(double) * FAR_NK * cols * 2, "dispersion far field samples");
    double *u = sv_alloc(ctx, sizeof(double) * FAR_NK * FAR_NK, "dispersion far field SVD");
    double *vt = sv_alloc(ctx, sizeof(double) * nsv * cols, "dispersion far field SVD");
    double *sv = sv_alloc(ctx, sizeof(double) * nsv, "dispersion far field SVD");
    sv_status st = a && u && vt && sv ? SV_OK : sv_last_status();
    double *samples = a ? a + (size_t)FAR_NK * cols : NULL; /* the rows unweighted, kept for the error */
    for (int i = 0; !st && i < FAR_NK; i++) {
        double kappa = (double)i / (FAR_NK - 1), weight = i ? 1 / (kappa * kappa) : 0;
        sample_row(f, kappa, samples + (size_t)cols * i);
        for (int j = 0; j < cols; j++) a[i + (size_t)FAR_NK * j] = weight * samples[(size_t)cols * i + j];
    }
    if (!st) st = svd(ctx, a, cols, sv, u, vt);
    int m = 0;
    while (!st && m < SV_EM_DISP_FAR_MAX && sv[m] > 0) {
        for (int i = 0; i < FAR_NK; i++) u[i + (size_t)FAR_NK * m] *= sv[m]; /* w_m/κ² on the samples */
        for (int j = 0; j < cols; j++) f->v[j + cols * m] = vt[m + (size_t)nsv * j];
        m++;
        if (fit_error(f, m, u, samples) <= tol) break;
    }
    f->terms = m;
    for (int c = 0; !st && c <= FAR_NC; c++) {
        double row[2 * FAR_NT];
        sample_row(f, chebyshev_point(c), row);
        for (int k = 0; k < m; k++) f->wc[c + (FAR_NC + 1) * k] = project(f, k, row);
    }
    sv_free(ctx, a);
    sv_free(ctx, u);
    sv_free(ctx, vt);
    sv_free(ctx, sv);
    if (st) {
        sv_free(ctx, f);
        *out = NULL;
    }
    return st;
}

void sv_em_disp_far_destroy(sv_ctx *ctx, sv_em_disp_far *f) { sv_free(ctx, f); }

int sv_em_disp_far_terms(const sv_em_disp_far *f) { return f ? f->terms : 0; }

double sv_em_disp_far_kernel_A(const sv_em_disp_far *f, int m, double rho)
{
    return f->cA * interpolate(f->v + 2 * FAR_NT * m, FAR_NT, rho / f->R);
}

double sv_em_disp_far_kernel_phi(const sv_em_disp_far *f, int m, double rho)
{
    return f->cphi * interpolate(f->v + 2 * FAR_NT * m + FAR_NT, FAR_NT, rho / f->R);
}

/* w_m(κ): within the band the polynomial through its values at the
 * Chebyshev points (barycentric form), smooth as the sweep's derivatives by
 * differences want; above the band's top projected from the closed forms
 * (where the terms only approximate). */
double sv_em_disp_far_weight(const sv_em_disp_far *f, int m, double k0)
{
    double kappa = f->K > 0 ? k0 / f->K : 0;
    if (kappa > 1) {
        double row[2 * FAR_NT];
        sample_row(f, kappa, row);
        return project(f, m, row);
    }
    const double *y = f->wc + (FAR_NC + 1) * m;
    double num = 0, den = 0;
    for (int c = 0; c <= FAR_NC; c++) {
        double d = kappa - chebyshev_point(c);
        if (d == 0) return y[c];
        double b = (c % 2 ? -1.0 : 1.0) * (c == 0 || c == FAR_NC ? 0.5 : 1.0) / d;
        num += b * y[c];
        den += b;
    }
    return num / den;
}

void sv_em_disp_far_change(const sv_em_disp_far *f, double k0, double rho, double *dA, double *dphi)
{
    *dA = *dphi = 0;
    for (int m = 0; m < f->terms; m++) {
        double w = sv_em_disp_far_weight(f, m, k0);
        *dA += w * sv_em_disp_far_kernel_A(f, m, rho);
        *dphi += w * sv_em_disp_far_kernel_phi(f, m, rho);
    }
    /* Σ w_m·α_m is ΔG_A/k0 and Σ w_m·β_m is ΔG_φ/k0³ (the term's coefficient
     * jω·k0·w_m, and the charge's −j/ω = −jω/(k0²·c²) against the current's jω) */
    *dA *= k0;
    *dphi *= k0 * k0 * k0;
}

/* Relative accuracy of the terms (fit_error): 0.3 % of the change's own
 * scale, itself a few per cent of εeff. */
#define FAR_TOL 3e-3

size_t sv_em_disp_far_build_bytes(void)
{
    /* the samples (twice), U, Vᵀ, the singular values and dgesdd's work
     * (3·m² + 4·m² + 4·m for an m × cols matrix, m < cols) and iwork */
    size_t m = FAR_NK, cols = 2 * FAR_NT;
    return sizeof(sv_em_disp_far) + sizeof(double) * (2 * m * cols + m * m + m * cols + m + 7 * m * m + 4 * m + cols) +
           sizeof(lapack_int) * 8 * m;
}

sv_status sv_em_disp_far_for(sv_ctx *ctx, const sv_em_model *m, sv_em_disp_far **out)
{
    const sv_em_grid *g = &m->prj->grid;
    double k0 = 2 * SV_EM_PI * sv_em_radiation_design_hz(m) / SV_EM_C0;
    double extent = 1.01 * hypot(g->nx * g->dx, g->ny * g->dy); /* every pair of points on the grid */
    return sv_em_disp_far_make(ctx, m->prj->st.h, m->prj->st.eps_r, k0, extent, FAR_TOL, out);
}
