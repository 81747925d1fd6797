/* Dispersion (effects.dispersion, src/em/dispersion.c): the kernels'
 * first-order change with k0², against a second computation of the same
 * kernels, and the lines it makes against Kirschning and Jansen's
 * dispersion formula. */
#define _DEFAULT_SOURCE /* j0, the Bessel function of POSIX's math.h */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "em/geom.h"
#include "support_em.h"
#include "sv_test.h"

/* ---- the kernels: fitted images against a direct Hankel transform ---- */

/* The slab's dimensionless spectral kernels at real σ = k0²·h² (formulation
 * C: g_A = 1/d_TE, g_φ = (u0 + u1·tanh u1)/(d_TE·d_TM), κ = kρ·h), in real
 * arithmetic: an evaluation independent of the library's complex one. */
static void spectra(double kappa, double sigma, double er, double *gA, double *gphi)
{
    double u0 = sqrt(kappa * kappa - sigma), u1 = sqrt(kappa * kappa - er * sigma), t = tanh(u1);
    double dte = u0 + u1 / t, dtm = er * u0 + u1 * t;
    *gA = 1 / dte;
    *gphi = (u0 + u1 * t) / (dte * dtm);
}

/* κ·∂g/∂σ at σ = 0 by central differences (step 1e-3·κ², inside the
 * kernels' radius of analyticity κ²/εr). */
static void spectra_slope(double kappa, double er, double *yA, double *yphi)
{
    double d = 1e-3 * kappa * kappa / er, a1, p1, a0, p0;
    spectra(kappa, d, er, &a1, &p1);
    spectra(kappa, -d, er, &a0, &p0);
    *yA = kappa * (a1 - a0) / (2 * d);
    *yphi = kappa * (p1 - p0) / (2 * d);
}

/* F(ρ) = (1/2π)∫ ∂G̃/∂(k0²)·J0(kρ·ρ)·kρ dkρ by Simpson's rule on κ ∈ [0, 4000]
 * (the integrand falls like κ^(−2.5) beyond; its tail is below 1e-4 of F),
 * in the library's units: F_A = μ0·h²/(2π)·∫ y_A J0 dκ/h, F_φ likewise with
 * 1/ε0. */
static void hankel(double h, double er, double rho, double *FA, double *Fphi)
{
    const int n = 400000;
    const double top = 4000, step = top / n, r = rho / h;
    double sA = 0, sP = 0;
    for (int i = 0; i <= n; i++) {
        double kappa = i * step, yA, yP;
        spectra_slope(i ? kappa : 1e-2 * step, er, &yA, &yP); /* y's finite limit at κ = 0 */
        double w = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2), j = j0(kappa * r);
        sA += w * yA * j;
        sP += w * yP * j;
    }
    sA *= step / 3;
    sP *= step / 3;
    *FA = SV_EM_MU0 * h / (2 * SV_EM_PI) * sA;
    *Fphi = h / (2 * SV_EM_PI * SV_EM_EPS0) * sP;
}

static void test_kernels(void **state)
{
    (void)state;
    const double boards[][2] = {{1.6e-3, 4.4}, {0.762e-3, 4.5}, {0.635e-3, 10.2}, {0.787e-3, 2.2}};
    const double rhos[] = {0, 0.3, 1, 3};
    for (int b = 0; b < 4; b++) {
        double h = boards[b][0], er = boards[b][1];
        sv_em_dispersion_kernel *k;
        assert_int_equal(sv_em_dispersion_kernel_make(NULL, h, er, &k), SV_OK);
        double scaleA = sv_em_dispersion_FA(k, 0), scaleP = fabs(sv_em_dispersion_Fphi(k, 0));
        for (int q = 0; q < 4; q++) {
            double FA, FP;
            hankel(h, er, rhos[q] * h, &FA, &FP);
            double fa = sv_em_dispersion_FA(k, rhos[q] * h), fp = sv_em_dispersion_Fphi(k, rhos[q] * h);
            printf("h %.3f mm er %.1f rho/h %.1f: F_A %.6e (direct %.6e, %.1e of F_A(0)), F_phi %.6e (direct %.6e, "
                   "%.1e)\n",
                   h * 1e3, er, rhos[q], fa, FA, fabs(fa - FA) / scaleA, fp, FP, fabs(fp - FP) / scaleP);
            /* the fit's 1e-4 (F_A) and 3e-4 (F_φ) of its spectra; at ρ = 0
             * (the cusp) the spectra's κ⁻² tail beyond the smallest height's
             * reach */
            assert_true(fabs(fa - FA) <= (rhos[q] > 0 ? 5e-4 : 6e-3) * scaleA);
            assert_true(fabs(fp - FP) <= (rhos[q] > 0 ? 3e-3 : 1.5e-2) * scaleP);
        }
        /* far away both are the thin slab's c/ρ (docs/em.md, "Dispersion") */
        double rho = 300 * h;
        double thinA = SV_EM_MU0 * h * h / (4 * SV_EM_PI * rho);
        double thinP = h * h * (2 / er - 1 - 1 / (2 * er * er)) / (2 * SV_EM_PI * SV_EM_EPS0 * rho);
        printf("  rho = 300 h: F_A / thin slab %.5f, F_phi / thin slab %.5f\n", sv_em_dispersion_FA(k, rho) / thinA,
               sv_em_dispersion_Fphi(k, rho) / thinP);
        sv_assert_close(sv_em_dispersion_FA(k, rho), thinA, 5e-4, 0);
        sv_assert_close(sv_em_dispersion_Fphi(k, rho), thinP, 5e-4, 0);
        sv_em_dispersion_kernel_destroy(NULL, k);
    }
}

/* ---- the assembly: tables and folds against brute-force quadrature ---- */

/* Gauss points of an unknown's current profile (rooftop: two linear
 * pieces; port half rooftop: one) times its width, n per piece and across,
 * weights carrying the profile and the unit current's 1/width. */
typedef struct points {
    int n;
    double along[2 * 14 * 14], across[2 * 14 * 14], w[2 * 14 * 14];
} points;

static void profile_points(const sv_em_profile_t *p, const sv_em_gl_rule *g, points *out)
{
    out->n = 0;
    for (int side = -1; side <= 1; side += 2) {
        if ((side < 0 && p->half > 0) || (side > 0 && p->half < 0)) continue;
        for (int a = 0; a < g->n; a++) {
            double x = p->e + side * g->t[a] * p->d; /* the peak 1 at the edge e */
            for (int b = 0; b < g->n; b++) {
                out->along[out->n] = x;
                out->across[out->n] = p->t1 + g->t[b] * (p->t2 - p->t1);
                out->w[out->n++] = g->w[a] * p->d * (1 - g->t[a]) * g->w[b];
            }
        }
    }
}

/* ∫∫ f_r·f_c·F_A by the product rule: the reference for L₂. */
static double brute_L2(const sv_em_model *m, const sv_em_dispersion_kernel *k, const sv_em_gl_rule *g, int r, int c)
{
    sv_em_profile_t a, b;
    sv_em_profile(m, r, &a);
    sv_em_profile(m, c, &b);
    if (a.axis != b.axis) return 0;
    points pa, pb;
    profile_points(&a, g, &pa);
    profile_points(&b, g, &pb);
    double s = 0;
    for (int u = 0; u < pa.n; u++)
        for (int v = 0; v < pb.n; v++)
            s += pa.w[u] * pb.w[v] * sv_em_dispersion_FA(k, hypot(pa.along[u] - pb.along[v], pa.across[u] - pb.across[v]));
    return a.sign * b.sign * s;
}

/* The mean of F_φ over two cells, then Ψ₂ = Σ ±P₂ over the unknowns'
 * divergence cells. */
static double brute_P2(const sv_em_model *m, const sv_em_dispersion_kernel *k, const sv_em_gl_rule *g, int ai, int aj,
                       int bi, int bj)
{
    const sv_em_grid *grid = &sv_em_model_project(m)->grid;
    double dx = grid->dx, dy = grid->dy, s = 0;
    for (int p = 0; p < g->n; p++)
        for (int q = 0; q < g->n; q++)
            for (int u = 0; u < g->n; u++)
                for (int v = 0; v < g->n; v++) {
                    double x = (ai + g->t[p] - bi - g->t[u]) * dx, y = (aj + g->t[q] - bj - g->t[v]) * dy;
                    s += g->w[p] * g->w[q] * g->w[u] * g->w[v] * sv_em_dispersion_Fphi(k, hypot(x, y));
                }
    return s;
}

static double brute_Psi2(const sv_em_model *m, const sv_em_dispersion_kernel *k, const sv_em_gl_rule *g, int r, int c)
{
    int ai[2], aj[2], as[2], bi[2], bj[2], bs[2];
    int na = sv_em_div_cells(m, r, ai, aj, as), nb = sv_em_div_cells(m, c, bi, bj, bs);
    double s = 0;
    for (int u = 0; u < na; u++)
        for (int v = 0; v < nb; v++) s += as[u] * bs[v] * brute_P2(m, k, g, ai[u], aj[u], bi[v], bj[v]);
    return s;
}

/* The packed matrix of the model's term whose coefficient at f is c (the
 * affine model does not name its terms outside affine.c). */
static const double *term_with(const sv_em_affine *a, double complex c, double f, int *nb)
{
    const sv_sweep_model *sm = sv_em_affine_model(a);
    for (int k = 0; k < sv_sweep_model_nterms(sm); k++) {
        if (cabs(sv_em_affine_coefficient(a, k, f) - c) > 1e-12 * cabs(c)) continue;
        sv_sweep_term t;
        assert_int_equal(sv_em_affine_term(a, k, &t), SV_OK);
        assert_int_equal(t.kind, SV_SWEEP_TERM_PACKED);
        *nb = t.nb;
        return t.packed;
    }
    fail_msg("no term with that coefficient");
    return NULL;
}

/* An irregular shape with three ports (left, right, bottom), thick lossy
 * metal and the edge profile: L₂ (the term jω·k0²·L₂) and the charge's
 * fold −Ψ₂/c² into L (L with dispersion less L without) against
 * product Gauss rules of 14 points per piece on every pair of a sample of
 * columns: the tables' autocorrelation rule, the ports' profile rule (the
 * library's 4 points per piece near per substrate a cell spans: about
 * 5e-4 of L₂ and 7e-4 of Ψ₂, ample for a correction of a few per cent). */
/* The shared three-port shape (support_em.c) on a substrate `h` mm thick
 * (its own 0.8 mm when NULL), with or without dispersion, into c. */
static void shape_open(em_test_case *c, int dispersion, const char *h)
{
    char *text = em_test_with_effect(em_test_lossy_project, dispersion ? "\"dispersion\": true" : "\"dispersion\": false");
    const char *thick = "\"thickness\": 0.8,", *at = strstr(text, thick);
    assert_non_null(at);
    char json[2048];
    snprintf(json, sizeof json, "%.*s\"thickness\": %s,%s", (int)(at - text), text, h ? h : "0.8", at + strlen(thick));
    free(text);
    em_test_case_open(c, json);
}

static void check_assembly(const char *h)
{
    em_test_case on, off;
    shape_open(&on, 1, h);
    shape_open(&off, 0, h);
    const double f = 1e9, w = 2 * SV_EM_PI * f, k0 = w / SV_EM_C0;
    int nb, nb0;
    const double *L2 = term_with(on.a, I * w * k0 * k0, f, &nb);
    const double *Lon = term_with(on.a, I * w, f, &nb), *Loff = term_with(off.a, I * w, f, &nb0);
    assert_int_equal(nb, nb0);
    sv_em_dispersion_kernel *k;
    const sv_em_stackup *st = &sv_em_model_project(on.m)->st;
    assert_int_equal(sv_em_dispersion_kernel_make(NULL, st->h, st->eps_r, &k), SV_OK);
    sv_em_gl_rule g;
    sv_em_gl_make(14, 0, &g);
    int n = sv_em_model_unknowns(on.m);
    double errL = 0, maxL = 0, errP = 0, maxP = 0;
    for (int c = 0; c < n; c += 11)
        for (int r = c; r < n; r++) {
            size_t q = sv_dense_packed_offset(n, nb, r, c);
            double l = brute_L2(on.m, k, &g, r, c), p = brute_Psi2(on.m, k, &g, r, c);
            double fold = -(Lon[q] - Loff[q]) * SV_EM_C0 * SV_EM_C0;
            errL = fmax(errL, fabs(L2[q] - l));
            maxL = fmax(maxL, fabs(l));
            errP = fmax(errP, fabs(fold - p));
            maxP = fmax(maxP, fabs(p));
        }
    printf("h %.3f mm, %d unknowns: L2 within %.2e of its largest entry, Psi2 (folded into L) within %.2e\n",
           st->h * 1e3, n, errL / maxL, errP / maxP);
    assert_true(errL <= 1e-3 * maxL);
    assert_true(errP <= 1.5e-3 * maxP);
    sv_em_dispersion_kernel_destroy(NULL, k);
    em_test_case_close(&on);
    em_test_case_close(&off);
}

/* The shape on its 0.8 mm (cells 0.3 × 0.2 mm) and on 0.1 mm, where the
 * cells are 2–3 substrates across and the kernels vary within a cell. */
static void test_assembly(void **state)
{
    (void)state;
    check_assembly(NULL);
    check_assembly("0.1");
}

/* ---- 50 Ω lines against Kirschning and Jansen ---- */

typedef struct board {
    double er, h, w, dx; /* mm */
    int ncw;
} board;

/* Y of a line `ncl` cells long (raw ports, lossless, no radiation: the
 * kernels' dispersion alone; uniform cells, the static model the term was
 * measured on) at nf frequencies by the library's solve. With the edge
 * cells' profile the static εeff is about 0.5 % higher and the first-order
 * term's overshoot shows: +1.42 % at 4.5 GHz, +2.12 % at 10 GHz (docs/em.md,
 * "Dispersion"). */
static void line_y(const board *b, int ncl, int dispersion, int nf, const double *f, double complex *Y)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"effects\": {\"edge_profile\": false, \"edge_cells\": false, \"radiation\": false, \"dispersion\": %s},"
             "\"units\": \"mm\","
             "\"substrate\": {\"thickness\": %.17g, \"eps_r\": %.17g}, \"metal\": {\"conductivity\": \"inf\"},"
             "\"grid\": {\"dx\": %.17g, \"dy\": %.17g, \"nx\": %d, \"ny\": %d},"
             "\"rectangles\": [{\"x\": [0, %.17g], \"y\": [0, %.17g]}],"
             "\"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [0, %.17g], \"calibration\": \"none\"},"
             "            {\"name\": \"b\", \"side\": \"right\", \"x\": %.17g, \"y\": [0, %.17g], \"calibration\": \"none\"}]}",
             dispersion ? "true" : "false", b->h, b->er, b->dx, b->w / b->ncw, ncl, b->ncw, ncl * b->dx, b->w, b->w,
             ncl * b->dx, b->w);
    em_test_case c;
    em_test_case_open(&c, json);
    assert_int_equal(sv_em_affine_disperses(c.a), dispersion);
    for (int i = 0; i < nf; i++) assert_int_equal(sv_em_solve(NULL, c.a, f[i], Y + 4 * i), SV_OK);
    em_test_case_close(&c);
}

/* εeff from two lengths: M = T2·T1⁻¹ is the line section's ABCD whatever
 * the ports' boxes are, cosh(γΔℓ) its half trace. */
static double eeff_of(const double complex Y1[4], const double complex Y2[4], double dl, double f)
{
    double complex T1[4], T2[4];
    const double complex *Y[2] = {Y1, Y2};
    double complex *T[2] = {T1, T2};
    for (int k = 0; k < 2; k++) {
        const double complex *y = Y[k];
        T[k][0] = -y[3] / y[1];
        T[k][2] = -1 / y[1];
        T[k][1] = -(y[0] * y[3] - y[2] * y[1]) / y[1];
        T[k][3] = -y[0] / y[1];
    }
    double complex det = T1[0] * T1[3] - T1[1] * T1[2];
    double complex inv[4] = {T1[3] / det, -T1[1] / det, -T1[2] / det, T1[0] / det};
    double complex half_trace = 0.5 * (T2[0] * inv[0] + T2[2] * inv[1] + T2[1] * inv[2] + T2[3] * inv[3]);
    double beta = acos(creal(half_trace)) / dl, k0 = 2 * SV_EM_PI * f / SV_EM_C0;
    return (beta / k0) * (beta / k0);
}

/* The 50 Ω line of the 1.6-mm FR-4 board (10 cells across) to 4.5 GHz and
 * the Momentum boards' 56-mil launch (h 30 mil, εr 4.5; 7 cells) to 10 GHz:
 * both to k0·h·√εr ≈ 0.33, where the first order holds (docs/em.md). With
 * dispersion εeff stays within 2 % of Kirschning and Jansen (the cells'
 * own static −1.1 … −1.5 % included); without it the quasi-static model
 * falls 7 % below. */
static void test_lines(void **state)
{
    (void)state;
    const board boards[2] = {{4.4, 1.6, 3.062, 0.5, 10}, {4.5, 0.762, 1.4224, 0.2032, 7}};
    const double f_top[2] = {4.5e9, 10e9};
    enum { NF = 4, N1 = 20, N2 = 30 };
    for (int b = 0; b < 2; b++) {
        double f[NF], worst[2] = {0, 0};
        for (int i = 0; i < NF; i++) f[i] = f_top[b] * (i + 1) / NF;
        for (int d = 0; d < 2; d++) {
            double complex Y1[4 * NF], Y2[4 * NF];
            line_y(&boards[b], N1, d, NF, f, Y1);
            line_y(&boards[b], N2, d, NF, f, Y2);
            for (int i = 0; i < NF; i++) {
                double e = eeff_of(Y1 + 4 * i, Y2 + 4 * i, (N2 - N1) * boards[b].dx * 1e-3, f[i]);
                double ref = em_test_kirschning_jansen(boards[b].w * 1e-3, boards[b].h * 1e-3, boards[b].er, f[i]);
                double err = e / ref - 1;
                printf("h %.3f mm, %s: f %5.2f GHz eeff %.4f (Kirschning-Jansen %.4f, %+.2f %%)\n", boards[b].h,
                       d ? "dispersion" : "quasi-static", f[i] / 1e9, e, ref, 100 * err);
                worst[d] = fmax(worst[d], fabs(err));
            }
        }
        assert_true(worst[1] <= 0.02);
        assert_true(worst[0] >= 0.06); /* what it closes: the quasi-static model's own error at the top */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernels),
        cmocka_unit_test(test_assembly),
        cmocka_unit_test(test_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
