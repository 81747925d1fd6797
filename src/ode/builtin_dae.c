/* Built-in DAEs (M·y' = f with a singular constant mass matrix):
 *
 * "akzo": the Chemical Akzo Nobel problem of the Bari test set (Mazzia &
 * Magherini, Test Set for IVP Solvers, release 2.4, problem "chemakzo";
 * originally Lioen & de Swart's CWI test set), index 1, n = 6, t in
 * [0, 180]: five reaction-kinetics equations and one equilibrium,
 *   r1 = k1 y1⁴ √y2,  r2 = k2 y3 y4,  r3 = (k2/K) y1 y5,
 *   r4 = k3 y1 y4²,   r5 = k4 y6² √y2, F_in = klA (pCO2/H − y2),
 *   y1' = −2 r1 + r2 − r3 − r4
 *   y2' = −r1/2 − r4 − r5/2 + F_in
 *   y3' = r1 − r2 + r3
 *   y4' = −r2 + r3 − 2 r4
 *   y5' = r2 − r3 + r5
 *   0   = Ks y1 y4 − y6
 * with the nine constants (k1, k2, k3, k4, K, klA, Ks, pCO2, H) = (18.7,
 * 0.58, 0.09, 0.42, 34.4, 3.3, 115.83, 0.9, 737) as parameters, and the
 * consistent y0 = (0.444, 0.00123, 0, 0.007, 0, Ks·0.444·0.007). As in the
 * test set's f, a negative y2 (√y2 undefined) is refused: the step is
 * retried smaller.
 *
 * "rober_dae": Robertson's kinetics (the test set's "rober") with y3 from
 * the conservation law: y1' and y2' as in the ODE, 0 = y1 + y2 + y3 − 1.
 * The ODE keeps y1 + y2 + y3 = 1 exactly (its right-hand sides sum to 0),
 * so both have one solution and the ODE's reference values apply.
 *
 * "transamp": the test set's transistor amplifier (problem "transamp",
 * index 1, n = 8, t in [0, 0.2]): node voltages of a two-transistor
 * amplifier driven by U_e(t) = 0.1 sin(200πt), in nodal form M·y' = f with
 * the capacitors' singular, non-diagonal M (rows (−C_k, C_k) and
 * (C_k, −C_k)) — not semi-explicit: its algebraic constraints are sums of
 * rows (mass.c), e.g. f1 + f2 = 0. Constants U_b = 6, U_F = 0.026,
 * α = 0.99, β = 1e-6, R_0 = 1000, R_1..R_9 = 9000, C_k = k·1e-6; the test
 * set's consistent y0 = (0, 3, 3, 6, 3, 3, 6, 0). */
#include <math.h>
#include <string.h>

#include "builtin_internal.h"

#define Y(i) y[(i) * W + w]
#define D(i) dy[(i) * W + w]
#define PP(k) p[(k) * W + w]

/* ---- Akzo Nobel ---- */
enum { AK_K1, AK_K2, AK_K3, AK_K4, AK_KBIG, AK_KLA, AK_KS, AK_PCO2, AK_H, AK_NP };

/* The Jacobian's pattern (CSR, the test set's PDERV entries) and the
 * mass matrix diag(1, 1, 1, 1, 1, 0) by its pattern. */
static const int akzo_rowptr[7] = {0, 5, 9, 14, 18, 24, 27};
static const int akzo_colind[27] = {0, 1, 2, 3, 4, /**/ 0, 1, 3, 5, /**/ 0, 1, 2, 3, 4, /**/ 0, 2, 3, 4,
                                    /**/ 0, 1, 2, 3, 4, 5, /**/ 0, 3, 5};
static const int akzo_mrowptr[7] = {0, 1, 2, 3, 4, 5, 5};
static const int akzo_mcolind[5] = {0, 1, 2, 3, 4};
static const double akzo_mass[5] = {1, 1, 1, 1, 1};

SV_ODE_LANES_INLINE int akzo_fb_lanes(const int W, const double *t, const double *restrict y,
                                      const double *restrict p, double *restrict dy, void *u)
{
    (void)t, (void)u;
    for (int w = 0; w < W; w++)
        if (Y(1) < 0) return 1;
    for (int w = 0; w < W; w++) {
        double s2 = sqrt(Y(1));
        double r1 = PP(AK_K1) * (Y(0) * Y(0) * Y(0) * Y(0)) * s2;
        double r2 = PP(AK_K2) * Y(2) * Y(3);
        double r3 = PP(AK_K2) / PP(AK_KBIG) * Y(0) * Y(4);
        double r4 = PP(AK_K3) * Y(0) * (Y(3) * Y(3));
        double r5 = PP(AK_K4) * (Y(5) * Y(5)) * s2;
        double fin = PP(AK_KLA) * (PP(AK_PCO2) / PP(AK_H) - Y(1));
        D(0) = -2 * r1 + r2 - r3 - r4;
        D(1) = -0.5 * r1 - r4 - 0.5 * r5 + fin;
        D(2) = r1 - r2 + r3;
        D(3) = -r2 + r3 - 2 * r4;
        D(4) = r2 - r3 + r5;
        D(5) = PP(AK_KS) * Y(0) * Y(3) - Y(5);
    }
    return 0;
}

/* ∂f/∂y in akzo_colind's order (the test set's PDERV, before its sign
 * change and shift). */
SV_ODE_LANES_INLINE int akzo_jb_lanes(const int W, const double *t, const double *restrict y,
                                      const double *restrict p, double *restrict jv, double *dfdt, void *u)
{
    (void)t, (void)u, (void)dfdt;
    for (int w = 0; w < W; w++)
        if (!(Y(1) > 0)) return -1; /* 1/√y2: the Jacobian exists only for y2 > 0 */
    for (int w = 0; w < W; w++) {
        double k1 = PP(AK_K1), k2 = PP(AK_K2), k3 = PP(AK_K3), k4 = PP(AK_K4), kb = PP(AK_KBIG);
        double s2 = sqrt(Y(1)), y1 = Y(0), y4 = Y(3);
        double r11 = 4 * k1 * (y1 * y1 * y1) * s2, r12 = 0.5 * k1 * (y1 * y1 * y1 * y1) / s2;
        double r23 = k2 * y4, r24 = k2 * Y(2);
        double r31 = (k2 / kb) * Y(4), r35 = (k2 / kb) * y1;
        double r41 = k3 * y4 * y4, r44 = 2 * k3 * y1 * y4;
        double r52 = 0.5 * k4 * (Y(5) * Y(5)) / s2, r56 = 2 * k4 * Y(5) * s2;
        double *J = jv + w;
#define JE(e) J[(e) * W]
        JE(0) = -2 * r11 - r31 - r41, JE(1) = -2 * r12, JE(2) = r23, JE(3) = r24 - r44, JE(4) = -r35;
        JE(5) = -0.5 * r11 - r41, JE(6) = -0.5 * r12 - 0.5 * r52 - PP(AK_KLA), JE(7) = -r44, JE(8) = -0.5 * r56;
        JE(9) = r11 + r31, JE(10) = r12, JE(11) = -r23, JE(12) = -r24, JE(13) = r35;
        JE(14) = r31 - 2 * r41, JE(15) = -r23, JE(16) = -r24 - 2 * r44, JE(17) = r35;
        JE(18) = -r31, JE(19) = r52, JE(20) = r23, JE(21) = r24, JE(22) = -r35, JE(23) = r56;
        JE(24) = PP(AK_KS) * y4, JE(25) = PP(AK_KS) * y1, JE(26) = -1;
#undef JE
    }
    return 0;
}

/* ---- Robertson as a DAE ---- */
static const double rober_dae_mass[9] = {1, 0, 0, 0, 1, 0, 0, 0, 0};

SV_ODE_LANES_INLINE int rober_dae_fb_lanes(const int W, const double *t, const double *restrict y,
                                           const double *restrict p, double *restrict dy, void *u)
{
    (void)t, (void)u;
    for (int w = 0; w < W; w++) {
        double k1 = PP(0), k2 = PP(1), k3 = PP(2), y1 = Y(0), y2 = Y(1), y3 = Y(2);
        D(0) = -k1 * y1 + k2 * y2 * y3;
        D(1) = k1 * y1 - k2 * y2 * y3 - k3 * y2 * y2;
        D(2) = y1 + y2 + y3 - 1;
    }
    return 0;
}
SV_ODE_LANES_INLINE int rober_dae_jb_lanes(const int W, const double *t, const double *restrict y,
                                           const double *restrict p, double *restrict jv, double *dfdt, void *u)
{
    (void)t, (void)u, (void)dfdt;
    for (int w = 0; w < W; w++) {
        double k1 = PP(0), k2 = PP(1), k3 = PP(2), y2 = Y(1), y3 = Y(2);
        double *J = jv + w;
        J[0 * W] = -k1, J[1 * W] = k2 * y3, J[2 * W] = k2 * y2;
        J[3 * W] = k1, J[4 * W] = -k2 * y3 - 2 * k3 * y2, J[5 * W] = -k2 * y2;
        J[6 * W] = 1, J[7 * W] = 1, J[8 * W] = 1;
    }
    return 0;
}

/* ---- transistor amplifier ---- */
#define TA_UB 6.0
#define TA_UF 0.026
#define TA_ALPHA 0.99
#define TA_BETA 1e-6
#define TA_R0 1000.0
#define TA_R 9000.0
#define TA_PI 3.1415926535897931 /* the test set's pi */
static const int ta_rowptr[9] = {0, 1, 3, 5, 8, 10, 12, 15, 16};
static const int ta_colind[16] = {0, 1, 2, 1, 2, 1, 2, 3, 4, 5, 4, 5, 4, 5, 6, 7};
static const double ta_mass[64] = {
    -1e-6, 1e-6,  0,     0,     0,     0,     0,     0,     /**/ 1e-6, -1e-6, 0, 0, 0, 0, 0, 0,
    0,     0,     -2e-6, 0,     0,     0,     0,     0,     /**/ 0, 0, 0, -3e-6, 3e-6, 0, 0, 0,
    0,     0,     0,     3e-6,  -3e-6, 0,     0,     0,     /**/ 0, 0, 0, 0, 0, -4e-6, 0, 0,
    0,     0,     0,     0,     0,     0,     -5e-6, 5e-6,  /**/ 0, 0, 0, 0, 0, 0, 5e-6, -5e-6};

SV_ODE_LANES_INLINE int transamp_fb_lanes(const int W, const double *t, const double *restrict y,
                                          const double *restrict p, double *restrict dy, void *u)
{
    (void)p, (void)u;
    for (int w = 0; w < W; w++) {
        double ue = 0.1 * sin(200 * TA_PI * t[w]);
        double fac1 = TA_BETA * (exp((Y(1) - Y(2)) / TA_UF) - 1), fac2 = TA_BETA * (exp((Y(4) - Y(5)) / TA_UF) - 1);
        D(0) = (Y(0) - ue) / TA_R0;
        D(1) = Y(1) / TA_R + (Y(1) - TA_UB) / TA_R + (1 - TA_ALPHA) * fac1;
        D(2) = Y(2) / TA_R - fac1;
        D(3) = (Y(3) - TA_UB) / TA_R + TA_ALPHA * fac1;
        D(4) = Y(4) / TA_R + (Y(4) - TA_UB) / TA_R + (1 - TA_ALPHA) * fac2;
        D(5) = Y(5) / TA_R - fac2;
        D(6) = (Y(6) - TA_UB) / TA_R + TA_ALPHA * fac2;
        D(7) = Y(7) / TA_R;
    }
    return 0;
}
SV_ODE_LANES_INLINE int transamp_jb_lanes(const int W, const double *t, const double *restrict y,
                                          const double *restrict p, double *restrict jv, double *dfdt, void *u)
{
    (void)p, (void)u;
    for (int w = 0; w < W; w++) {
        double g1 = TA_BETA * exp((Y(1) - Y(2)) / TA_UF) / TA_UF, g2 = TA_BETA * exp((Y(4) - Y(5)) / TA_UF) / TA_UF;
        double *J = jv + w;
#define JE(e) J[(e) * W]
        JE(0) = 1 / TA_R0;
        JE(1) = 2 / TA_R + (1 - TA_ALPHA) * g1, JE(2) = -(1 - TA_ALPHA) * g1;
        JE(3) = -g1, JE(4) = 1 / TA_R + g1;
        JE(5) = TA_ALPHA * g1, JE(6) = -TA_ALPHA * g1, JE(7) = 1 / TA_R;
        JE(8) = 2 / TA_R + (1 - TA_ALPHA) * g2, JE(9) = -(1 - TA_ALPHA) * g2;
        JE(10) = -g2, JE(11) = 1 / TA_R + g2;
        JE(12) = TA_ALPHA * g2, JE(13) = -TA_ALPHA * g2, JE(14) = 1 / TA_R;
        JE(15) = 1 / TA_R;
#undef JE
        if (dfdt) { /* ∂f/∂t: only U_e(t) in f1 */
            for (int i = 0; i < 8; i++) dfdt[i * W + w] = 0;
            dfdt[w] = -0.1 * 200 * TA_PI * cos(200 * TA_PI * t[w]) / TA_R0;
        }
    }
    return 0;
}

SV_ODE_BATCH_BY_LANES(akzo)
SV_ODE_BATCH_BY_LANES(rober_dae)
SV_ODE_SCALAR_WRAPPERS(akzo)
SV_ODE_SCALAR_WRAPPERS(rober_dae)
SV_ODE_BATCH_BY_LANES(transamp)
SV_ODE_SCALAR_WRAPPERS(transamp)

sv_status ode_builtin_dae(sv_ode_builtin *b, const char *name, sv_ode_problem_desc *d, double arg)
{
    (void)arg;
    if (!strcmp(name, "akzo")) {
        static const double p[AK_NP] = {18.7, 0.58, 0.09, 0.42, 34.4, 3.3, 115.83, 0.9, 737};
        const double y0[6] = {0.444, 0.00123, 0, 0.007, 0, 115.83 * 0.444 * 0.007};
        SV_ODE_FILL(d, akzo, 6, AK_NP);
        d->rowptr = akzo_rowptr;
        d->colind = akzo_colind;
        d->mass = akzo_mass;
        d->mass_rowptr = akzo_mrowptr;
        d->mass_colind = akzo_mcolind;
        return ode_builtin_set(b, d, 0, 180, y0, p, 1e-6, 1e-6);
    }
    if (!strcmp(name, "rober_dae")) {
        static const double y0[3] = {1, 0, 0}, p[3] = {0.04, 1e4, 3e7};
        SV_ODE_FILL(d, rober_dae, 3, 3);
        d->mass = rober_dae_mass;
        return ode_builtin_set(b, d, 0, 1e11, y0, p, 1e-6, 1e-10);
    }
    if (!strcmp(name, "transamp")) {
        static const double y0[8] = {0, 3, 3, 6, 3, 3, 6, 0};
        SV_ODE_FILL(d, transamp, 8, 0);
        d->rowptr = ta_rowptr;
        d->colind = ta_colind;
        d->nonautonomous = 1;
        d->mass = ta_mass;
        return ode_builtin_set(b, d, 0, 0.2, y0, NULL, 1e-6, 1e-6);
    }
    return SV_ERR_UNSUPPORTED;
}
