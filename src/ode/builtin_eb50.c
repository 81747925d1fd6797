/* The 50-variable Einstein–Boltzmann system (after DISCO-EB; equations,
 * background stand-ins and initial conditions in docs/ode.md): one
 * trajectory per wavenumber k (the
 * single parameter), conformal time τ from 0.1 to 14000 Mpc, linear in y
 * with τ-dependent coefficients (non-autonomous).
 *
 * The right-hand side is written once over a value type T and included
 * here per type: builtin_eb50_lin_tmpl.h (the linear part and its k
 * derivative given the background) for double, double complex and lane
 * vectors; builtin_eb50_scalar_tmpl.h (background, f, tangent) for double
 * and double complex: complex τ gives ∂f/∂τ by complex step, complex y
 * gives J. The analytic Jacobian uses that the system is linear: J(τ) is the
 * coefficient matrix, obtained column-group by column-group from the same
 * body with unit seeds (exact: f(τ, e_c) has no rounding beyond the
 * coefficients themselves) — one evaluation per colour of the pattern.
 *
 * For 4 and 8 lanes (builtin_eb50_lanes_tmpl.h) the linear part runs over
 * lane vectors (T = a GCC vector of doubles: the same operations in every
 * lane, so the same numbers as lane by lane); the background, with its
 * tanh and sqrt, is computed per lane. */
#include <complex.h>
#include <stdlib.h>
#include <string.h>
#include <tgmath.h> /* sqrt and tanh of double complex in builtin_eb50_scalar_tmpl.h */

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

typedef struct bg_r { double Gg, Gn, Gc, Gb, H, opac, cs2, Rg, itau; } bg_r;
typedef struct bg_c { double complex Gg, Gn, Gc, Gb, H, opac, cs2, Rg, itau; } bg_c;
typedef double eb_v4 __attribute__((vector_size(32)));
typedef double eb_v8 __attribute__((vector_size(64)));
typedef struct bg_v4 { eb_v4 Gg, Gn, Gc, Gb, H, opac, cs2, Rg, itau; } bg_v4;
typedef struct bg_v8 { eb_v8 Gg, Gn, Gc, Gb, H, opac, cs2, Rg, itau; } bg_v8;

/* Which linear map the lanes' seed evaluations give the pattern values of. */
typedef enum eb_map { EB_MAP_J, EB_MAP_DJ_DK } eb_map;

/* One body per value type: double; double complex (k stays real); lane
 * vectors of 4 and 8. */
#define T double
#define K double
#define BG bg_r
#define FN(x) x##_real
#include "builtin_eb50_lin_tmpl.h"
#include "builtin_eb50_scalar_tmpl.h"
#undef FN
#undef BG
#undef K
#undef T

#define T double complex
#define K double
#define BG bg_c
#define FN(x) x##_cplx
#include "builtin_eb50_lin_tmpl.h"
#include "builtin_eb50_scalar_tmpl.h"
#undef FN
#undef BG
#undef K
#undef T

#define T eb_v4
#define K eb_v4
#define BG bg_v4
#define WC 4
#define FN(x) x##_4
#include "builtin_eb50_lin_tmpl.h"
#include "builtin_eb50_lanes_tmpl.h"
#undef FN
#undef WC
#undef BG
#undef K
#undef T

#define T eb_v8
#define K eb_v8
#define BG bg_v8
#define WC 8
#define FN(x) x##_8
#include "builtin_eb50_lin_tmpl.h"
#include "builtin_eb50_lanes_tmpl.h"
#undef FN
#undef WC
#undef BG
#undef K
#undef T

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
                eb_lin_real(&bg, seed, p + w, col);
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

/* Sensitivities: the tangent (eb_tangent_real, eb_tangent_cplx, and over
 * lanes eb_tangent_4/8: A·v + vp·(∂A/∂k)·y), and the Jacobian's derivative
 * along (v, vp): vp·∂A/∂k by seeds (the system is linear, so J does not
 * depend on y), its τ-derivative part by a complex τ. */
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
        eb_tangent_real(t[w], ys, p + w, vs, vp ? vp + w : NULL, os, u);
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
    eb_tangent_cplx(CMPLX(t, s), yc, p, v, vp, dc, u);
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
            eb_lin_dk_real(&bg, seed, p, col);
            sv_sparse_recover_color_values(E->coloring, c, col, NULL, dv);
        }
        for (int e = 0; e < nnz; e++) dv[e] *= vp[0];
    }
    if (ddfdt) eb_dtangent_dtau(t, y, p, v, vp, ddfdt, u);
    return 0;
}

/* vp·∂A/∂k over 4 or 8 lanes at once (eb_djdk_4/8); the τ part (a complex
 * τ per lane) and other lane counts lane by lane. */
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
    d->tangent = eb_tangent_real;
    d->tangent_batch = eb_tangent_b;
    d->tangent_complex = eb_tangent_cplx;
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
