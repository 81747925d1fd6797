/* The 50-variable Einstein–Boltzmann system (after DISCO-EB; equations,
 * background stand-ins and initial conditions in docs/ode.md): one
 * trajectory per wavenumber k (the
 * single parameter), conformal time τ from 0.1 to 14000 Mpc, linear in y
 * with τ-dependent coefficients (non-autonomous).
 *
 * The right-hand side is written once as a type-generic body (T = double or
 * double complex): complex τ gives ∂f/∂τ by complex step, complex y gives J.
 * The analytic Jacobian uses that the system is linear: J(τ) is the
 * coefficient matrix, obtained column-group by column-group from the same
 * body with unit seeds (exact: f(τ, e_c) has no rounding beyond the
 * coefficients themselves) — one evaluation per colour of the pattern.
 *
 * For 4 and 8 lanes the linear part runs over lane vectors (T = a GCC
 * vector of doubles: the same operations in every lane, so the same
 * numbers as lane by lane); the background, with its tanh and sqrt, is
 * computed per lane. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builtin_internal.h"

enum { NV = 50, LMAX = 15, IT = 4, IE = 20, IN = 34 };
#define TI(l) (IT + (l))
#define EI(l) (IE + (l) - 2)
#define NI(l) (IN + (l))

/* Planck 2018 flat ΛCDM */
static const double Tcmb = 2.7255, omb = 0.02238280, omc = 0.1201075, hh = 0.6732117, Yhe = 0.2454006,
                    Neff = 3.046;

typedef struct eb_bg {
    double g_gam, g_nu, g_c, g_b, g_L, adotrad, akthom, fHe;
} eb_bg;

static void eb_background(eb_bg *g)
{
    g->g_gam = 1.49594245e-13 * pow(Tcmb, 4);
    g->g_nu = g->g_gam * (7.0 / 8.0) * pow(4.0 / 11.0, 4.0 / 3.0) * Neff;
    g->g_c = 3.33795017e-7 * omc;
    g->g_b = 3.33795017e-7 * omb;
    g->g_L = 3.33795017e-7 * hh * hh - g->g_c - g->g_b - g->g_gam - g->g_nu;
    g->adotrad = sqrt((g->g_gam + g->g_nu) / 3.0);
    g->akthom = 2.3038921003709498e-9 * (1 - Yhe) * omb * 1e4;
    g->fHe = Yhe / (3.9715 * (1 - Yhe));
}

typedef struct eb50 {
    eb_bg g;
    int *rowptr, *colind;
    sv_sparse_coloring *coloring; /* of the pattern, for the analytic Jacobian's seeds */
    int ncol;
    const int *color;             /* colour per column (owned by coloring) */
} eb50;

/* Background at τ, then the linear right-hand side given the
 * background: split so that the Jacobian's seed evaluations reuse one
 * background. One body for double and double complex (complex τ gives ∂f/∂τ
 * by complex step). */
#define EB_BG(T, SQRT, TANH, tau, bg)                                                                  \
    do {                                                                                                \
        const eb_bg *g = &E->g;                                                                         \
        T a = g->adotrad * (tau) + (g->g_c + g->g_b) * (tau) * (tau) / 12.0;                            \
        bg.Gg = g->g_gam / (a * a), bg.Gn = g->g_nu / (a * a), bg.Gc = g->g_c / a, bg.Gb = g->g_b / a;  \
        T GL = g->g_L * a * a;                                                                          \
        bg.H = SQRT((bg.Gg + bg.Gn + bg.Gc + bg.Gb + GL) / 3.0);                                        \
        T zz = 1.0 / a - 1.0;                                                                           \
        T xe = (1 + g->fHe) / 2 * (1.0 + TANH((zz - 1090.0) / 80.0)) + 2e-4;                           \
        bg.opac = xe * g->akthom / (a * a);                                                             \
        bg.cs2 = 1.2e-13 / a;                                                                           \
        bg.Rg = bg.Gg / bg.Gb;                                                                          \
        bg.itau = 1.0 / (tau);                                                                          \
    } while (0)

#define EB_LIN(T, bg, y, k, dy)                                                                             \
    do {                                                                                                     \
        T dgrho = bg.Gb * y[2] + bg.Gc * y[1] + bg.Gg * y[TI(0)] + bg.Gn * y[NI(0)];                         \
        T dgq = bg.Gb * y[3] + bg.Gg * y[TI(1)] + bg.Gn * y[NI(1)];                                          \
        T z = (dgrho / (2 * k) + y[0]) / bg.H;                                                               \
        T sigma = z + 1.5 * dgq / (k * k);                                                                   \
        T Pi = y[TI(2)] / 10.0 + (9.0 / 15.0) * y[EI(2)];                                                    \
        T opac = bg.opac;                                                                                    \
        dy[0] = dgq / 2.0;                                                                                   \
        dy[1] = -k * z;                                                                                      \
        dy[2] = -k * (z + y[3]);                                                                             \
        T vbp = -bg.H * y[3] + k * bg.cs2 * y[2] - bg.Rg * opac * (4.0 / 3.0 * y[3] - y[TI(1)]);             \
        dy[3] = vbp;                                                                                         \
        dy[TI(0)] = -k * (4.0 / 3.0 * z + y[TI(1)]);                                                         \
        dy[TI(1)] = (-vbp - bg.H * y[3] + k * bg.cs2 * y[2]) / bg.Rg + k * y[TI(0)] / 3.0 -                  \
                    2 * k * y[TI(2)] / 3.0;                                                                  \
        dy[TI(2)] = 2 * k * y[TI(1)] / 5.0 - 3 * k * y[TI(3)] / 5.0 - opac * (y[TI(2)] - Pi) +               \
                    8 * k * sigma / 15.0;                                                                    \
        for (int l = 3; l < LMAX; l++)                                                                       \
            dy[TI(l)] = k * (l * y[TI(l - 1)] - (l + 1) * y[TI(l + 1)]) / (2 * l + 1) - opac * y[TI(l)];     \
        dy[TI(LMAX)] = k * y[TI(LMAX - 1)] - (LMAX + 1) * y[TI(LMAX)] * bg.itau - opac * y[TI(LMAX)];        \
        dy[EI(2)] = -opac * (y[EI(2)] - Pi) - k * y[EI(3)] / 3.0;                                            \
        for (int l = 3; l < LMAX; l++)                                                                       \
            dy[EI(l)] = -opac * y[EI(l)] +                                                                   \
                        k * (l * y[EI(l - 1)] - ((l + 3.0) * (l - 1.0) / (l + 1.0)) * y[EI(l + 1)]) / (2 * l + 1); \
        dy[EI(LMAX)] = -opac * y[EI(LMAX)] + k * LMAX * y[EI(LMAX - 1)] / (2 * LMAX + 1) -                   \
                       (LMAX + 3) * y[EI(LMAX)] * bg.itau;                                                   \
        dy[NI(0)] = -k * (4.0 / 3.0 * z + y[NI(1)]);                                                         \
        dy[NI(1)] = k * (y[NI(0)] - 2 * y[NI(2)]) / 3.0;                                                     \
        dy[NI(2)] = 2 * k * y[NI(1)] / 5.0 - 3 * k * y[NI(3)] / 5.0 + 8 * k * sigma / 15.0;                  \
        for (int l = 3; l < LMAX; l++)                                                                       \
            dy[NI(l)] = k * (l * y[NI(l - 1)] - (l + 1) * y[NI(l + 1)]) / (2 * l + 1);                       \
        dy[NI(LMAX)] = k * y[NI(LMAX - 1)] - (LMAX + 1) * y[NI(LMAX)] * bg.itau;                             \
    } while (0)

/* ∂f/∂k given the background: f = A(τ, k)·y is a polynomial in k and
 * 1/k, differentiated term by term from EB_LIN (the sensitivities to k). */
#define EB_LIN_DK(T, bg, y, k, dy)                                                                          \
    do {                                                                                                     \
        T dgrho = bg.Gb * y[2] + bg.Gc * y[1] + bg.Gg * y[TI(0)] + bg.Gn * y[NI(0)];                         \
        T dgq = bg.Gb * y[3] + bg.Gg * y[TI(1)] + bg.Gn * y[NI(1)];                                          \
        T z = (dgrho / (2 * k) + y[0]) / bg.H;                                                               \
        T zk = -dgrho / (2 * k * k * bg.H);                                                                  \
        T sigma = z + 1.5 * dgq / (k * k), sigk = zk - 3.0 * dgq / (k * k * k);                              \
        dy[0] = (T){0};                                                                                      \
        dy[1] = -z - k * zk;                                                                                 \
        dy[2] = -(z + y[3]) - k * zk;                                                                        \
        dy[3] = bg.cs2 * y[2];                                                                               \
        dy[TI(0)] = -(4.0 / 3.0 * z + y[TI(1)]) - k * (4.0 / 3.0) * zk;                                      \
        dy[TI(1)] = y[TI(0)] / 3.0 - 2 * y[TI(2)] / 3.0;                                                     \
        dy[TI(2)] = 2 * y[TI(1)] / 5.0 - 3 * y[TI(3)] / 5.0 + 8 * sigma / 15.0 + 8 * k * sigk / 15.0;         \
        for (int l = 3; l < LMAX; l++) dy[TI(l)] = (l * y[TI(l - 1)] - (l + 1) * y[TI(l + 1)]) / (2 * l + 1);   \
        dy[TI(LMAX)] = y[TI(LMAX - 1)];                                                                      \
        dy[EI(2)] = -y[EI(3)] / 3.0;                                                                         \
        for (int l = 3; l < LMAX; l++)                                                                       \
            dy[EI(l)] = (l * y[EI(l - 1)] - ((l + 3.0) * (l - 1.0) / (l + 1.0)) * y[EI(l + 1)]) / (2 * l + 1);  \
        dy[EI(LMAX)] = LMAX * y[EI(LMAX - 1)] / (2 * LMAX + 1);                                              \
        dy[NI(0)] = -(4.0 / 3.0 * z + y[NI(1)]) - k * (4.0 / 3.0) * zk;                                      \
        dy[NI(1)] = (y[NI(0)] - 2 * y[NI(2)]) / 3.0;                                                         \
        dy[NI(2)] = 2 * y[NI(1)] / 5.0 - 3 * y[NI(3)] / 5.0 + 8 * sigma / 15.0 + 8 * k * sigk / 15.0;         \
        for (int l = 3; l < LMAX; l++) dy[NI(l)] = (l * y[NI(l - 1)] - (l + 1) * y[NI(l + 1)]) / (2 * l + 1);   \
        dy[NI(LMAX)] = y[NI(LMAX - 1)];                                                                      \
    } while (0)

typedef struct bg_r { double Gg, Gn, Gc, Gb, H, opac, cs2, Rg, itau; } bg_r;
typedef struct bg_c { double complex Gg, Gn, Gc, Gb, H, opac, cs2, Rg, itau; } bg_c;
typedef double eb_v4 __attribute__((vector_size(32)));
typedef double eb_v8 __attribute__((vector_size(64)));
typedef struct bg_v4 { eb_v4 Gg, Gn, Gc, Gb, H, opac, cs2, Rg, itau; } bg_v4;
typedef struct bg_v8 { eb_v8 Gg, Gn, Gc, Gb, H, opac, cs2, Rg, itau; } bg_v8;

static void eb_bg_real(const eb50 *E, double tau, bg_r *bg) { EB_BG(double, sqrt, tanh, tau, (*bg)); }
static void eb_lin_real(const bg_r *bg, const double *y, double k, double *dy) { EB_LIN(double, (*bg), y, k, dy); }
static void eb_f_real(const eb50 *E, double tau, const double *y, double k, double *dy)
{
    bg_r bg;
    eb_bg_real(E, tau, &bg);
    eb_lin_real(&bg, y, k, dy);
}
static void eb_f_cplx(const eb50 *E, double complex tau, const double complex *y, double k, double complex *dy)
{
    bg_c bg;
    EB_BG(double complex, csqrt, ctanh, tau, bg);
    EB_LIN(double complex, bg, y, k, dy);
}

/* The background of each lane packed into lane vectors (BGV: bg_v4/bg_v8). */
#define EB_BG_LANES(BGV, WC, E, t, bgv)                                                              \
    do {                                                                                             \
        for (int w = 0; w < (WC); w++) {                                                             \
            bg_r b1;                                                                                 \
            eb_bg_real((E), (t)[w], &b1);                                                            \
            (bgv).Gg[w] = b1.Gg, (bgv).Gn[w] = b1.Gn, (bgv).Gc[w] = b1.Gc, (bgv).Gb[w] = b1.Gb;      \
            (bgv).H[w] = b1.H, (bgv).opac[w] = b1.opac, (bgv).cs2[w] = b1.cs2, (bgv).Rg[w] = b1.Rg;  \
            (bgv).itau[w] = b1.itau;                                                                 \
        }                                                                                            \
    } while (0)

/* The pattern values of a linear map LIN (EB_LIN: J, EB_LIN_DK: ∂J/∂k)
 * over WC lanes, one seed per colour: entry (i, j) of colour c takes row i
 * of LIN·seed_c. */
#define EB_BY_COLOUR(V, WC, LIN, E, bg, k, vals)                                                        \
    do {                                                                                                \
        V seed_[NV], col_[NV];                                                                          \
        for (int c = 0; c < (E)->ncol; c++) {                                                           \
            for (int j = 0; j < NV; j++) seed_[j] = (V){0} + ((E)->color[j] == c);                      \
            LIN(V, bg, seed_, k, col_);                                                                 \
            for (int i = 0; i < NV; i++)                                                                \
                for (int e = (E)->rowptr[i]; e < (E)->rowptr[i + 1]; e++)                               \
                    if ((E)->color[(E)->colind[e]] == c) memcpy((vals) + (size_t)e * (WC), &col_[i], sizeof(V)); \
        }                                                                                               \
    } while (0)

/* f and the Jacobian's seed evaluations over WC lanes at once (V, BGV: the
 * lane vector and background types); slot-major arrays are arrays of V. */
#define EB_LANES(V, BGV, WC)                                                                            \
    static void eb_fb_##WC(const eb50 *E, const double *t, const double *y, const double *p, double *dy) \
    {                                                                                                   \
        BGV bg;                                                                                         \
        V ys[NV], ds[NV], k;                                                                            \
        EB_BG_LANES(BGV, WC, E, t, bg);                                                                 \
        memcpy(ys, y, sizeof ys);                                                                       \
        memcpy(&k, p, sizeof k);                                                                        \
        EB_LIN(V, bg, ys, k, ds);                                                                       \
        memcpy(dy, ds, sizeof ds);                                                                      \
    }                                                                                                   \
    static void eb_jvals_##WC(const eb50 *E, const double *t, const double *p, double *jv)              \
    {                                                                                                   \
        BGV bg;                                                                                         \
        V k;                                                                                            \
        EB_BG_LANES(BGV, WC, E, t, bg);                                                                 \
        memcpy(&k, p, sizeof k);                                                                        \
        EB_BY_COLOUR(V, WC, EB_LIN, E, bg, k, jv);                                                      \
    }
EB_LANES(eb_v4, bg_v4, 4)
EB_LANES(eb_v8, bg_v8, 8)

static int eb_fb(int W, const double *t, const double *y, const double *p, double *dy, void *u)
{
    const eb50 *E = u;
    if (W == 4 || W == 8) {
        if (W == 4) eb_fb_4(E, t, y, p, dy);
        else eb_fb_8(E, t, y, p, dy);
        return 0;
    }
    double ys[NV], ds[NV];
    for (int w = 0; w < W; w++) {
        for (int i = 0; i < NV; i++) ys[i] = y[i * W + w];
        eb_f_real(E, t[w], ys, p[w], ds);
        for (int i = 0; i < NV; i++) dy[i * W + w] = ds[i];
    }
    return 0;
}
static int eb_fc(double complex t, const double complex *y, const double *p, double complex *dy, void *u)
{
    eb_f_cplx(u, t, y, p[0], dy);
    return 0;
}
/* Analytic Jacobian of the linear system: J·seed_c = f(τ, seed_c), with one
 * background for all colours. ∂f/∂τ by one complex-step evaluation in τ
 * (exact to rounding). */
static int eb_jb(int W, const double *t, const double *y, const double *p, double *jv, double *dfdt, void *u)
{
    const eb50 *E = u;
    const int nnz = E->rowptr[NV];
    double seed[NV], col[NV], vals[NV * NV];
    if (W == 4) eb_jvals_4(E, t, p, jv);
    if (W == 8) eb_jvals_8(E, t, p, jv);
    for (int w = 0; w < W; w++) {
        if (W != 4 && W != 8) {
            bg_r bg;
            eb_bg_real(E, t[w], &bg);
            for (int c = 0; c < E->ncol; c++) {
                for (int j = 0; j < NV; j++) seed[j] = E->color[j] == c;
                eb_lin_real(&bg, seed, p[w], col);
                sv_sparse_recover_color_values(E->coloring, c, col, NULL, vals);
            }
            for (int e = 0; e < nnz; e++) jv[e * W + w] = vals[e];
        }
        if (dfdt) {
            double complex yc[NV], dc[NV];
            const double s = 1e-100;
            for (int i = 0; i < NV; i++) yc[i] = y[i * W + w];
            eb_f_cplx(E, CMPLX(t[w], s), yc, p[w], dc);
            for (int i = 0; i < NV; i++) dfdt[i * W + w] = cimag(dc[i]) / s;
        }
    }
    return 0;
}
SV_ODE_SCALAR_WRAPPERS(eb)

/* Sensitivities: the tangent A·v + vp·(∂A/∂k)·y (real, and complex in τ and
 * y), and the Jacobian's derivative along (v, vp): vp·∂A/∂k by seeds (the
 * system is linear, so J does not depend on y), its τ-derivative part by a
 * complex τ. */
#define EB_TANGENT(T, BG, tau, y, k, v, vp, out)                                                       \
    do {                                                                                                \
        BG bg;                                                                                          \
        T vc[NV], dk[NV];                                                                               \
        EB_BG_##BG(tau, bg);                                                                            \
        for (int i = 0; i < NV; i++) vc[i] = v[i];                                                      \
        EB_LIN(T, bg, vc, k, out);                                                                      \
        if (vp) {                                                                                       \
            EB_LIN_DK(T, bg, y, k, dk);                                                                 \
            for (int i = 0; i < NV; i++) out[i] += vp[0] * dk[i];                                       \
        }                                                                                               \
    } while (0)
#define EB_BG_bg_r(tau, bg) EB_BG(double, sqrt, tanh, tau, bg)
#define EB_BG_bg_c(tau, bg) EB_BG(double complex, csqrt, ctanh, tau, bg)
static int eb_tangent(double t, const double *y, const double *p, const double *v, const double *vp, double *out,
                      void *u)
{
    const eb50 *E = u;
    EB_TANGENT(double, bg_r, t, y, p[0], v, vp, out);
    return 0;
}
static int eb_tangent_c(double complex t, const double complex *y, const double *p, const double *v,
                        const double *vp, double complex *out, void *u)
{
    const eb50 *E = u;
    EB_TANGENT(double complex, bg_c, t, y, p[0], v, vp, out);
    return 0;
}
/* The tangent over 4 or 8 lanes at once (the same operations as
 * eb_tangent in each lane), lane by lane for other counts. */
#define EB_TANGENT_LANES(V, BGV, WC)                                                                   \
    static void eb_tangent_##WC(const eb50 *E, const double *t, const double *y, const double *p,      \
                                const double *v, const double *vp, double *out)                        \
    {                                                                                                  \
        BGV bg;                                                                                        \
        V vs[NV], os[NV], k;                                                                           \
        EB_BG_LANES(BGV, WC, E, t, bg);                                                                \
        memcpy(vs, v, sizeof vs);                                                                      \
        memcpy(&k, p, sizeof k);                                                                       \
        EB_LIN(V, bg, vs, k, os);                                                                      \
        if (vp) {                                                                                      \
            V ys[NV], dk[NV], vk;                                                                      \
            memcpy(ys, y, sizeof ys);                                                                  \
            memcpy(&vk, vp, sizeof vk);                                                                \
            EB_LIN_DK(V, bg, ys, k, dk);                                                               \
            for (int i = 0; i < NV; i++) os[i] += vk * dk[i];                                          \
        }                                                                                              \
        memcpy(out, os, sizeof os);                                                                    \
    }
EB_TANGENT_LANES(eb_v4, bg_v4, 4)
EB_TANGENT_LANES(eb_v8, bg_v8, 8)

static int eb_tangent_b(int W, const double *t, const double *y, const double *p, const double *v, const double *vp,
                        double *out, void *u)
{
    const eb50 *E = u;
    if (W == 4 || W == 8) {
        if (W == 4) eb_tangent_4(E, t, y, p, v, vp, out);
        else eb_tangent_8(E, t, y, p, v, vp, out);
        return 0;
    }
    double ys[NV], vs[NV], os[NV];
    for (int w = 0; w < W; w++) {
        for (int i = 0; i < NV; i++) ys[i] = y[i * W + w], vs[i] = v[i * W + w];
        eb_tangent(t[w], ys, p + w, vs, vp ? vp + w : NULL, os, u);
        for (int i = 0; i < NV; i++) out[i * W + w] = os[i];
    }
    return 0;
}

/* ∂/∂τ of the tangent by one complex step in τ (exact to rounding). */
static void eb_dtangent_dtau(double t, const double *y, const double *p, const double *v, const double *vp,
                             double *ddfdt, void *u)
{
    const double s = 1e-100;
    double complex yc[NV], dc[NV];
    for (int i = 0; i < NV; i++) yc[i] = y[i];
    eb_tangent_c(CMPLX(t, s), yc, p, v, vp, dc, u);
    for (int i = 0; i < NV; i++) ddfdt[i] = cimag(dc[i]) / s;
}

static int eb_jac_dir(double t, const double *y, const double *p, const double *v, const double *vp, double *dv,
                      double *ddfdt, void *u)
{
    const eb50 *E = u;
    const int nnz = E->rowptr[NV];
    if (!vp) {
        memset(dv, 0, sizeof(double) * (size_t)nnz);
    } else {
        bg_r bg;
        eb_bg_real(E, t, &bg);
        double seed[NV], col[NV];
        for (int c = 0; c < E->ncol; c++) {
            for (int j = 0; j < NV; j++) seed[j] = E->color[j] == c;
            EB_LIN_DK(double, bg, seed, p[0], col);
            sv_sparse_recover_color_values(E->coloring, c, col, NULL, dv);
        }
        for (int e = 0; e < nnz; e++) dv[e] *= vp[0];
    }
    if (ddfdt) eb_dtangent_dtau(t, y, p, v, vp, ddfdt, u);
    return 0;
}

/* vp·∂A/∂k over 4 or 8 lanes at once (eb_jac_dir's seeds and products in
 * each lane); the τ part (a complex τ per lane) and other lane counts lane
 * by lane. */
#define EB_DJDK_LANES(V, BGV, WC)                                                                       \
    static void eb_djdk_##WC(const eb50 *E, const double *t, const double *p, const double *vp, double *dv) \
    {                                                                                                   \
        BGV bg;                                                                                         \
        V k;                                                                                            \
        EB_BG_LANES(BGV, WC, E, t, bg);                                                                 \
        memcpy(&k, p, sizeof k);                                                                        \
        EB_BY_COLOUR(V, WC, EB_LIN_DK, E, bg, k, dv);                                                   \
        for (int e = 0; e < E->rowptr[NV]; e++)                                                         \
            for (int w = 0; w < (WC); w++) dv[(size_t)e * (WC) + w] *= vp[w];                            \
    }
EB_DJDK_LANES(eb_v4, bg_v4, 4)
EB_DJDK_LANES(eb_v8, bg_v8, 8)

static int eb_jac_dir_b(int W, const double *t, const double *y, const double *p, const double *v, const double *vp,
                        double *dv, double *ddfdt, void *u)
{
    const eb50 *E = u;
    const int nnz = E->rowptr[NV], fast = vp && (W == 4 || W == 8);
    if (fast && W == 4) eb_djdk_4(E, t, p, vp, dv);
    if (fast && W == 8) eb_djdk_8(E, t, p, vp, dv);
    if (fast && !ddfdt) return 0;
    double ys[NV], vs[NV], dl[NV * NV], dd[NV];
    for (int w = 0; w < W; w++) {
        for (int i = 0; i < NV; i++) ys[i] = y[i * W + w], vs[i] = v[i * W + w];
        const double *vpw = vp ? vp + w : NULL; /* one parameter: its slot-major column is p's lane */
        if (!fast) {
            eb_jac_dir(t[w], ys, p + w, vs, vpw, dl, NULL, u);
            for (int e = 0; e < nnz; e++) dv[e * W + w] = dl[e];
        }
        if (ddfdt) {
            eb_dtangent_dtau(t[w], ys, p + w, vs, vpw, dd, u);
            for (int i = 0; i < NV; i++) ddfdt[i * W + w] = dd[i];
        }
    }
    return 0;
}

static void eb50_free(void *data)
{
    eb50 *E = data;
    sv_sparse_coloring_destroy(E->coloring);
    ode_builtin_free_all((void *[]){E->rowptr, E->colind, E}, 3);
}

/* Structural pattern by probing: J(τ) at two generic times (unit seeds on
 * every column of the linear system); a coefficient is structurally
 * non-zero if it is non-zero at either. */
static void eb_probe(const eb50 *E, double k, unsigned char *m)
{
    const double taus[2] = {3.7, 517.0};
    for (int q = 0; q < 2; q++)
        for (int j = 0; j < NV; j++) {
            double seed[NV] = {0}, col[NV];
            seed[j] = 1;
            eb_f_real(E, taus[q], seed, k, col);
            for (int i = 0; i < NV; i++)
                if (col[i] != 0) m[i * NV + j] = 1;
        }
}

/* The probed pattern in CSR, then a greedy colouring in column order for
 * the analytic Jacobian's seeds. */
static sv_status eb_pattern(sv_ctx *ctx, eb50 *E, double k)
{
    unsigned char m[NV * NV] = {0};
    E->rowptr = malloc(sizeof(int) * (NV + 1));
    E->colind = malloc(sizeof(int) * NV * NV);
    if (!E->rowptr || !E->colind) return sv_error(SV_ERR_NOMEM, "eb50: out of memory");
    eb_probe(E, k, m);
    int e = 0;
    for (int i = 0; i < NV; i++) {
        E->rowptr[i] = e;
        for (int j = 0; j < NV; j++)
            if (m[i * NV + j]) E->colind[e++] = j;
    }
    E->rowptr[NV] = e;
    sv_sparse_color_options o;
    sv_sparse_color_options_default(&o);
    o.order = SV_SPARSE_COLOR_NATURAL;
    sv_status st = sv_sparse_color_csr(ctx, NV, E->rowptr, E->colind, &o, &E->coloring);
    if (st != SV_OK) return st;
    E->ncol = sv_sparse_coloring_count(E->coloring);
    E->color = sv_sparse_coloring_colors(E->coloring);
    return SV_OK;
}

sv_status ode_builtin_eb50(sv_ctx *ctx, sv_ode_builtin *b, const char *name, sv_ode_problem_desc *d, double arg)
{
    if (strcmp(name, "eb50")) return SV_ERR_UNSUPPORTED;
    double k = arg > 0 ? arg : 0.01;
    if (!(k >= 1e-6 && k <= 10)) return sv_error(SV_ERR_ARG, "eb50: k = %g Mpc^-1: expected 1e-6..10", arg);
    eb50 *E = calloc(1, sizeof *E);
    if (!E) return sv_error(SV_ERR_NOMEM, "eb50: out of memory");
    ode_builtin_own(b, E, eb50_free);
    eb_background(&E->g);
    /* the structure is the same for every k > 0: probe it at a generic one */
    sv_status st = eb_pattern(ctx, E, 0.0123);
    if (st != SV_OK) return st;
    SV_ODE_FILL(d, eb, NV, 1);
    d->f_complex = eb_fc;
    d->rowptr = E->rowptr;
    d->colind = E->colind;
    d->nonautonomous = 1;
    d->user = E;
    d->sens_source = SV_ODE_SENS_TANGENT;
    d->tangent = eb_tangent;
    d->tangent_batch = eb_tangent_b;
    d->tangent_complex = eb_tangent_c;
    d->jac_dir = eb_jac_dir;
    d->jac_dir_batch = eb_jac_dir_b;
    double y0[NV];
    sv_ode_eb50_initial(k, y0);
    double p[1] = {k};
    return ode_builtin_set(b, d, 0.1, 14000.0, y0, p, 1e-4, 1e-4);
}

/* Initial state for another k (the N128 ensemble varies k per trajectory). */
void sv_ode_eb50_initial(double k, double *y0)
{
    eb_bg g;
    eb_background(&g);
    double tau0 = 0.1, x = k * tau0;
    double Rv = g.g_nu / (g.g_gam + g.g_nu), Rp15 = 4 * Rv + 15;
    double om = (g.g_b + g.g_c) / sqrt(3 * (g.g_gam + g.g_nu));
    memset(y0, 0, sizeof(double) * NV);
    y0[TI(0)] = x * x / 3 * (1 - om * tau0 / 5);
    y0[TI(1)] = x * x * x / 27 * (1 - om * tau0 / 5);
    y0[0] = -k * (1 - x * x / 12 * (1 - 10 / Rp15));
    y0[1] = y0[2] = 0.75 * y0[TI(0)];
    y0[3] = 0.75 * y0[TI(1)];
    y0[NI(0)] = y0[TI(0)];
    y0[NI(1)] = (4 * Rv + 23) / Rp15 * x * x * x / 27;
    y0[NI(2)] = -(4.0 / 3.0) * x * x / Rp15 * (1 + om * tau0 / 4 * (4 * Rv - 5) / (2 * Rv + 15));
    y0[NI(3)] = -(4.0 / 21.0) * x * x * x / Rp15;
}
