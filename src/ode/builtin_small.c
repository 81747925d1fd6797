/* Small built-in problems: ROBER, HIRES, OREGO, VDPOL (Bari test set,
 * Mazzia & Magherini, release 2.4; equations in docs/ode.md) and Lorenz
 * (σ, ρ, β parameters).
 *
 * Each right-hand side is written once over W lanes (slot-major); the
 * scalar callback is the same code with W = 1. The complex versions for
 * complex-step differentiation instantiate one type-generic body with
 * <tgmath.h>-style arithmetic (only + − × here). Jacobians are dense
 * row-major (n ≤ 8: the dense lane LU is the fast path for these). The
 * batched callbacks' arrays never overlap (the solver passes distinct lane
 * arrays): `restrict` says so and lets their lane loops vectorise. */
#include <complex.h>
#include <string.h>

#include "builtin_internal.h"

#define Y(i) y[(i) * W + w]
#define D(i) dy[(i) * W + w]
#define PP(k) p[(k) * W + w]
#define J(i, j) jv[((i) * N_ + (j)) * W + w]

/* ---- ROBER: p = (k1, k2, k3) = (0.04, 1e4, 3e7) ---- */
#define ROBER_BODY(T, y, p, dy)                                                        \
    do {                                                                                \
        T y1 = y[0], y2 = y[1], y3 = y[2];                                              \
        dy[0] = -p[0] * y1 + p[1] * y2 * y3;                                            \
        dy[1] = p[0] * y1 - p[1] * y2 * y3 - p[2] * y2 * y2;                            \
        dy[2] = p[2] * y2 * y2;                                                         \
    } while (0)

SV_ODE_LANES_INLINE int rober_fb_lanes(const int W, const double *t, const double *restrict y,
                                       const double *restrict p, double *restrict dy, void *u)
{
    (void)t, (void)u;
    for (int w = 0; w < W; w++) {
        double k1 = PP(0), k2 = PP(1), k3 = PP(2), y1 = Y(0), y2 = Y(1), y3 = Y(2);
        D(0) = -k1 * y1 + k2 * y2 * y3;
        D(1) = k1 * y1 - k2 * y2 * y3 - k3 * y2 * y2;
        D(2) = k3 * y2 * y2;
    }
    return 0;
}
SV_ODE_LANES_INLINE int rober_jb_lanes(const int W, const double *t, const double *restrict y,
                                       const double *restrict p, double *restrict jv, double *dfdt, void *u)
{
    (void)t, (void)u, (void)dfdt;
    enum { N_ = 3 };
    for (int w = 0; w < W; w++) {
        double k1 = PP(0), k2 = PP(1), k3 = PP(2), y2 = Y(1), y3 = Y(2);
        J(0, 0) = -k1, J(0, 1) = k2 * y3, J(0, 2) = k2 * y2;
        J(1, 0) = k1, J(1, 1) = -k2 * y3 - 2 * k3 * y2, J(1, 2) = -k2 * y2;
        J(2, 0) = 0, J(2, 1) = 2 * k3 * y2, J(2, 2) = 0;
    }
    return 0;
}
static int rober_fc(double complex t, const double complex *y, const double *p, double complex *dy, void *u)
{
    (void)t, (void)u;
    ROBER_BODY(double complex, y, p, dy);
    return 0;
}
static int rober_jvp(double t, const double *y, const double *p, double vt, const double *v, double *jv, void *u)
{
    (void)t, (void)vt, (void)u;
    double k1 = p[0], k2 = p[1], k3 = p[2];
    double a = -k1 * v[0] + k2 * (v[1] * y[2] + y[1] * v[2]);
    double c = 2 * k3 * y[1] * v[1];
    jv[0] = a;
    jv[1] = -a - c;
    jv[2] = c;
    return 0;
}

/* Sensitivities: ∂f/∂p, the tangent J·v + f_p·vp and the Jacobian's
 * derivative along (v, vp) (row-major 3 × 3 like rober_jb) over W lanes
 * (the scalar callbacks are W = 1), the tangent at complex t and y for
 * complex step, and f with complex parameters. */
#define V(i) v[(i) * W + w]
#define VP(k) (vp ? vp[(k) * W + w] : 0.0)
static int rober_dfdp_b(int W, const double *t, const double *y, const double *p, int k, double *dy, void *u)
{
    (void)t, (void)p, (void)u;
    for (int w = 0; w < W; w++) {
        double c0 = k == 0 ? -Y(0) : k == 1 ? Y(1) * Y(2) : 0, c2 = k == 2 ? Y(1) * Y(1) : 0;
        D(0) = c0, D(1) = -c0 - c2, D(2) = c2;
    }
    return 0;
}
SV_ODE_LANES_INLINE int rober_tangent_lanes(const int W, const double *t, const double *restrict y,
                                             const double *restrict p, const double *restrict v,
                                             const double *restrict vp, double *restrict dy, void *u)
{
    (void)t, (void)u;
    for (int w = 0; w < W; w++) {
        double a = -PP(0) * V(0) + PP(1) * (V(1) * Y(2) + Y(1) * V(2)), c = 2 * PP(2) * Y(1) * V(1);
        D(0) = a, D(1) = -a - c, D(2) = c;
    }
    if (!vp) return 0;
    for (int w = 0; w < W; w++) {
        double a = -vp[w] * Y(0) + vp[W + w] * Y(1) * Y(2), c = vp[2 * W + w] * Y(1) * Y(1);
        D(0) += a, D(1) += -a - c, D(2) += c;
    }
    return 0;
}
SV_ODE_LANES_INLINE int rober_jac_dir_lanes(const int W, const double *t, const double *restrict y,
                                             const double *restrict p, const double *restrict v,
                                             const double *restrict vp, double *restrict jv, double *ddfdt,
                                             void *u)
{
    (void)t, (void)ddfdt, (void)u;
    enum { N_ = 3 };
    for (int w = 0; w < W; w++) {
        double d23 = VP(1) * Y(2) + PP(1) * V(2), d22 = VP(1) * Y(1) + PP(1) * V(1);
        double d2 = 2 * (VP(2) * Y(1) + PP(2) * V(1));
        J(0, 0) = -VP(0), J(0, 1) = d23, J(0, 2) = d22;
        J(1, 0) = VP(0), J(1, 1) = -d23 - d2, J(1, 2) = -d22;
        J(2, 0) = 0, J(2, 1) = d2, J(2, 2) = 0;
    }
    return 0;
}
SV_ODE_SENS_BATCH_BY_LANES(rober)
static int rober_tangent_c(double complex t, const double complex *y, const double *p, const double *v,
                           const double *vp, double complex *out, void *u)
{
    (void)t, (void)u;
    double complex a = -p[0] * v[0] + p[1] * (v[1] * y[2] + y[1] * v[2]), c = 2 * p[2] * y[1] * v[1];
    if (vp) a += -vp[0] * y[0] + vp[1] * y[1] * y[2], c += vp[2] * y[1] * y[1];
    out[0] = a, out[1] = -a - c, out[2] = c;
    return 0;
}
static int rober_fcp(double complex t, const double complex *y, const double complex *p, double complex *dy, void *u)
{
    (void)t, (void)u;
    ROBER_BODY(double complex, y, p, dy);
    return 0;
}

/* ---- HIRES (no parameters) ---- */
#define HIRES_BODY(T, y, dy)                                                                  \
    do {                                                                                       \
        dy[0] = -1.71 * y[0] + 0.43 * y[1] + 8.32 * y[2] + 0.0007;                             \
        dy[1] = 1.71 * y[0] - 8.75 * y[1];                                                     \
        dy[2] = -10.03 * y[2] + 0.43 * y[3] + 0.035 * y[4];                                    \
        dy[3] = 8.32 * y[1] + 1.71 * y[2] - 1.12 * y[3];                                       \
        dy[4] = -1.745 * y[4] + 0.43 * y[5] + 0.43 * y[6];                                     \
        T r = 280.0 * y[5] * y[7];                                                             \
        dy[5] = -r + 0.69 * y[3] + 1.71 * y[4] - 0.43 * y[5] + 0.69 * y[6];                    \
        dy[6] = r - 1.81 * y[6];                                                               \
        dy[7] = -r + 1.81 * y[6];                                                              \
    } while (0)

SV_ODE_LANES_INLINE int hires_fb_lanes(const int W, const double *t, const double *restrict y,
                                       const double *restrict p, double *restrict dy, void *u)
{
    (void)t, (void)u, (void)p;
    for (int w = 0; w < W; w++) {
        double yy[8], d[8];
        for (int i = 0; i < 8; i++) yy[i] = Y(i);
        HIRES_BODY(double, yy, d);
        for (int i = 0; i < 8; i++) D(i) = d[i];
    }
    return 0;
}
SV_ODE_LANES_INLINE int hires_jb_lanes(const int W, const double *t, const double *restrict y,
                                       const double *restrict p, double *restrict jv, double *dfdt, void *u)
{
    (void)t, (void)u, (void)dfdt, (void)p;
    enum { N_ = 8 };
    for (int w = 0; w < W; w++) {
        for (int i = 0; i < 64; i++) jv[i * W + w] = 0;
        J(0, 0) = -1.71, J(0, 1) = 0.43, J(0, 2) = 8.32;
        J(1, 0) = 1.71, J(1, 1) = -8.75;
        J(2, 2) = -10.03, J(2, 3) = 0.43, J(2, 4) = 0.035;
        J(3, 1) = 8.32, J(3, 2) = 1.71, J(3, 3) = -1.12;
        J(4, 4) = -1.745, J(4, 5) = 0.43, J(4, 6) = 0.43;
        double a = 280.0 * Y(7), b = 280.0 * Y(5);
        J(5, 3) = 0.69, J(5, 4) = 1.71, J(5, 5) = -a - 0.43, J(5, 6) = 0.69, J(5, 7) = -b;
        J(6, 5) = a, J(6, 6) = -1.81, J(6, 7) = b;
        J(7, 5) = -a, J(7, 6) = 1.81, J(7, 7) = -b;
    }
    return 0;
}
static int hires_fc(double complex t, const double complex *y, const double *p, double complex *dy, void *u)
{
    (void)t, (void)u, (void)p;
    HIRES_BODY(double complex, y, dy);
    return 0;
}

/* Sensitivities (to initial values): the tangent J·v, whose only
 * non-constant entries are 280·y8 and 280·y6 in rows 6–8, over W lanes and
 * at complex t and y, and the Jacobian's derivative along v. */
#define HIRES_TANGENT(T, Y, V, OUT)                                                              \
    do {                                                                                         \
        OUT(0) = -1.71 * V(0) + 0.43 * V(1) + 8.32 * V(2);                                       \
        OUT(1) = 1.71 * V(0) - 8.75 * V(1);                                                      \
        OUT(2) = -10.03 * V(2) + 0.43 * V(3) + 0.035 * V(4);                                     \
        OUT(3) = 8.32 * V(1) + 1.71 * V(2) - 1.12 * V(3);                                        \
        OUT(4) = -1.745 * V(4) + 0.43 * V(5) + 0.43 * V(6);                                      \
        T dr = 280.0 * (V(5) * Y(7) + Y(5) * V(7));                                              \
        OUT(5) = -dr + 0.69 * V(3) + 1.71 * V(4) - 0.43 * V(5) + 0.69 * V(6);                    \
        OUT(6) = dr - 1.81 * V(6);                                                               \
        OUT(7) = -dr + 1.81 * V(6);                                                              \
    } while (0)
SV_ODE_LANES_INLINE int hires_tangent_lanes(const int W, const double *t, const double *restrict y,
                                             const double *restrict p, const double *restrict v,
                                             const double *restrict vp, double *restrict dy, void *u)
{
    (void)t, (void)p, (void)vp, (void)u;
    for (int w = 0; w < W; w++) HIRES_TANGENT(double, Y, V, D);
    return 0;
}
#define YC(i) y[i]
#define VC(i) v[i]
#define OC(i) out[i]
static int hires_tangent_c(double complex t, const double complex *y, const double *p, const double *v,
                           const double *vp, double complex *out, void *u)
{
    (void)t, (void)p, (void)vp, (void)u;
    HIRES_TANGENT(double complex, YC, VC, OC);
    return 0;
}
SV_ODE_LANES_INLINE int hires_jac_dir_lanes(const int W, const double *t, const double *restrict y,
                                             const double *restrict p, const double *restrict v,
                                             const double *restrict vp, double *restrict jv, double *ddfdt,
                                             void *u)
{
    (void)t, (void)y, (void)p, (void)vp, (void)ddfdt, (void)u;
    enum { N_ = 8 };
    for (int w = 0; w < W; w++) {
        for (int i = 0; i < 64; i++) jv[i * W + w] = 0;
        double a = 280.0 * V(7), b = 280.0 * V(5);
        J(5, 5) = -a, J(5, 7) = -b;
        J(6, 5) = a, J(6, 7) = b;
        J(7, 5) = -a, J(7, 7) = -b;
    }
    return 0;
}
SV_ODE_SENS_BATCH_BY_LANES(hires)

/* ---- OREGO (no parameters) ---- */
SV_ODE_LANES_INLINE int orego_fb_lanes(const int W, const double *t, const double *restrict y,
                                       const double *restrict p, double *restrict dy, void *u)
{
    (void)t, (void)u, (void)p;
    for (int w = 0; w < W; w++) {
        double y1 = Y(0), y2 = Y(1), y3 = Y(2);
        D(0) = 77.27 * (y2 + y1 * (1 - 8.375e-6 * y1 - y2));
        D(1) = (y3 - (1 + y1) * y2) / 77.27;
        D(2) = 0.161 * (y1 - y3);
    }
    return 0;
}
SV_ODE_LANES_INLINE int orego_jb_lanes(const int W, const double *t, const double *restrict y,
                                       const double *restrict p, double *restrict jv, double *dfdt, void *u)
{
    (void)t, (void)u, (void)dfdt, (void)p;
    enum { N_ = 3 };
    for (int w = 0; w < W; w++) {
        double y1 = Y(0), y2 = Y(1);
        J(0, 0) = 77.27 * (1 - 2 * 8.375e-6 * y1 - y2), J(0, 1) = 77.27 * (1 - y1), J(0, 2) = 0;
        J(1, 0) = -y2 / 77.27, J(1, 1) = -(1 + y1) / 77.27, J(1, 2) = 1 / 77.27;
        J(2, 0) = 0.161, J(2, 1) = 0, J(2, 2) = -0.161;
    }
    return 0;
}

/* Sensitivities (to initial values): the tangent J·v and the Jacobian's
 * derivative along v over W lanes, and the tangent at complex y. */
#define OREGO_TANGENT(Y, V, OUT)                                                   \
    do {                                                                                 \
        OUT(0) = 77.27 * (V(0) * (1 - 2 * 8.375e-6 * Y(0) - Y(1)) + V(1) * (1 - Y(0))); \
        OUT(1) = (V(2) - V(0) * Y(1) - (1 + Y(0)) * V(1)) / 77.27;                       \
        OUT(2) = 0.161 * (V(0) - V(2));                                                  \
    } while (0)
SV_ODE_LANES_INLINE int orego_tangent_lanes(const int W, const double *t, const double *restrict y,
                                             const double *restrict p, const double *restrict v,
                                             const double *restrict vp, double *restrict dy, void *u)
{
    (void)t, (void)p, (void)vp, (void)u;
    for (int w = 0; w < W; w++) OREGO_TANGENT(Y, V, D);
    return 0;
}
static int orego_tangent_c(double complex t, const double complex *y, const double *p, const double *v,
                           const double *vp, double complex *out, void *u)
{
    (void)t, (void)p, (void)vp, (void)u;
    OREGO_TANGENT(YC, VC, OC);
    return 0;
}
SV_ODE_LANES_INLINE int orego_jac_dir_lanes(const int W, const double *t, const double *restrict y,
                                             const double *restrict p, const double *restrict v,
                                             const double *restrict vp, double *restrict jv, double *ddfdt,
                                             void *u)
{
    (void)t, (void)y, (void)p, (void)vp, (void)ddfdt, (void)u;
    enum { N_ = 3 };
    for (int w = 0; w < W; w++) {
        J(0, 0) = 77.27 * (-2 * 8.375e-6 * V(0) - V(1)), J(0, 1) = -77.27 * V(0), J(0, 2) = 0;
        J(1, 0) = -V(1) / 77.27, J(1, 1) = -V(0) / 77.27, J(1, 2) = 0;
        J(2, 0) = 0, J(2, 1) = 0, J(2, 2) = 0;
    }
    return 0;
}
SV_ODE_SENS_BATCH_BY_LANES(orego)

/* ---- VDPOL, ε = 1e-6 as a parameter ---- */
#define VDPOL_BODY(y, p, dy)                                                   \
    do {                                                                        \
        dy[0] = y[1];                                                           \
        dy[1] = ((1 - y[0] * y[0]) * y[1] - y[0]) / p[0];                      \
    } while (0)
SV_ODE_LANES_INLINE int vdpol_fb_lanes(const int W, const double *t, const double *restrict y,
                                       const double *restrict p, double *restrict dy, void *u)
{
    (void)t, (void)u;
    for (int w = 0; w < W; w++) {
        double y1 = Y(0), y2 = Y(1);
        D(0) = y2;
        D(1) = ((1 - y1 * y1) * y2 - y1) / PP(0);
    }
    return 0;
}
SV_ODE_LANES_INLINE int vdpol_jb_lanes(const int W, const double *t, const double *restrict y,
                                       const double *restrict p, double *restrict jv, double *dfdt, void *u)
{
    (void)t, (void)u, (void)dfdt;
    enum { N_ = 2 };
    for (int w = 0; w < W; w++) {
        double y1 = Y(0), y2 = Y(1), e = PP(0);
        J(0, 0) = 0, J(0, 1) = 1;
        J(1, 0) = (-2 * y1 * y2 - 1) / e, J(1, 1) = (1 - y1 * y1) / e;
    }
    return 0;
}
static int vdpol_fc(double complex t, const double complex *y, const double *p, double complex *dy, void *u)
{
    (void)t, (void)u;
    VDPOL_BODY(y, p, dy);
    return 0;
}

/* Sensitivities: ∂f/∂ε, the tangent J·v + f_ε·vp and the Jacobian's
 * derivative along (v, vp) over W lanes, the tangent at complex y and f
 * with a complex ε. */
static int vdpol_dfdp_b(int W, const double *t, const double *y, const double *p, int k, double *dy, void *u)
{
    (void)t, (void)k, (void)u;
    for (int w = 0; w < W; w++) {
        double e = PP(0);
        D(0) = 0;
        D(1) = -((1 - Y(0) * Y(0)) * Y(1) - Y(0)) / (e * e);
    }
    return 0;
}
#define VDPOL_TANGENT(Y, V, E, VE, OUT)                                                       \
    do {                                                                                            \
        OUT(0) = V(1);                                                                              \
        OUT(1) = ((-2 * Y(0) * V(0)) * Y(1) + (1 - Y(0) * Y(0)) * V(1) - V(0)) / (E) -              \
                 (VE) * ((1 - Y(0) * Y(0)) * Y(1) - Y(0)) / ((E) * (E));                            \
    } while (0)
SV_ODE_LANES_INLINE int vdpol_tangent_lanes(const int W, const double *t, const double *restrict y,
                                             const double *restrict p, const double *restrict v,
                                             const double *restrict vp, double *restrict dy, void *u)
{
    (void)t, (void)u;
    for (int w = 0; w < W; w++) VDPOL_TANGENT(Y, V, PP(0), VP(0), D);
    return 0;
}
static int vdpol_tangent_c(double complex t, const double complex *y, const double *p, const double *v,
                           const double *vp, double complex *out, void *u)
{
    (void)t, (void)u;
    VDPOL_TANGENT(YC, VC, p[0], vp ? vp[0] : 0.0, OC);
    return 0;
}
SV_ODE_LANES_INLINE int vdpol_jac_dir_lanes(const int W, const double *t, const double *restrict y,
                                             const double *restrict p, const double *restrict v,
                                             const double *restrict vp, double *restrict jv, double *ddfdt,
                                             void *u)
{
    (void)t, (void)ddfdt, (void)u;
    enum { N_ = 2 };
    for (int w = 0; w < W; w++) {
        double e = PP(0), ve = VP(0), y1 = Y(0), y2 = Y(1);
        J(0, 0) = 0, J(0, 1) = 0;
        J(1, 0) = (-2 * V(0) * y2 - 2 * y1 * V(1)) / e - ve * (-2 * y1 * y2 - 1) / (e * e);
        J(1, 1) = -2 * y1 * V(0) / e - ve * (1 - y1 * y1) / (e * e);
    }
    return 0;
}
SV_ODE_SENS_BATCH_BY_LANES(vdpol)
static int vdpol_fcp(double complex t, const double complex *y, const double complex *p, double complex *dy, void *u)
{
    (void)t, (void)u;
    VDPOL_BODY(y, p, dy);
    return 0;
}

/* ---- Lorenz: p = (σ, ρ, β) ---- */
SV_ODE_LANES_INLINE int lorenz_fb_lanes(const int W, const double *t, const double *restrict y,
                                        const double *restrict p, double *restrict dy, void *u)
{
    (void)t, (void)u;
    for (int w = 0; w < W; w++) {
        double x = Y(0), yy = Y(1), z = Y(2);
        D(0) = PP(0) * (yy - x);
        D(1) = x * (PP(1) - z) - yy;
        D(2) = x * yy - PP(2) * z;
    }
    return 0;
}
SV_ODE_LANES_INLINE int lorenz_jb_lanes(const int W, const double *t, const double *restrict y,
                                        const double *restrict p, double *restrict jv, double *dfdt, void *u)
{
    (void)t, (void)u, (void)dfdt;
    enum { N_ = 3 };
    for (int w = 0; w < W; w++) {
        double x = Y(0), yy = Y(1), z = Y(2);
        J(0, 0) = -PP(0), J(0, 1) = PP(0), J(0, 2) = 0;
        J(1, 0) = PP(1) - z, J(1, 1) = -1, J(1, 2) = -x;
        J(2, 0) = yy, J(2, 1) = x, J(2, 2) = -PP(2);
    }
    return 0;
}
static int lorenz_fc(double complex t, const double complex *y, const double *p, double complex *dy, void *u)
{
    (void)t, (void)u;
    dy[0] = p[0] * (y[1] - y[0]);
    dy[1] = y[0] * (p[1] - y[2]) - y[1];
    dy[2] = y[0] * y[1] - p[2] * y[2];
    return 0;
}

/* Sensitivities (explicit methods need no second order): ∂f/∂(σ, ρ, β)
 * and the tangent over W lanes, and f with complex parameters. */
static int lorenz_dfdp_b(int W, const double *t, const double *y, const double *p, int k, double *dy, void *u)
{
    (void)t, (void)p, (void)u;
    for (int w = 0; w < W; w++) {
        D(0) = k == 0 ? Y(1) - Y(0) : 0;
        D(1) = k == 1 ? Y(0) : 0;
        D(2) = k == 2 ? -Y(2) : 0;
    }
    return 0;
}
#define LORENZ_TANGENT(Y, V, PP, VP, OUT)                                      \
    do {                                                                       \
        OUT(0) = PP(0) * (V(1) - V(0)) + VP(0) * (Y(1) - Y(0));                \
        OUT(1) = V(0) * (PP(1) - Y(2)) - Y(0) * V(2) - V(1) + VP(1) * Y(0);    \
        OUT(2) = V(0) * Y(1) + Y(0) * V(1) - PP(2) * V(2) - VP(2) * Y(2);      \
    } while (0)
static int lorenz_tangent_b(int W, const double *t, const double *y, const double *p, const double *v,
                            const double *vp, double *dy, void *u)
{
    (void)t, (void)u;
    for (int w = 0; w < W; w++) LORENZ_TANGENT(Y, V, PP, VP, D);
    return 0;
}
/* Rodas5P's second order: the Jacobian's derivative along (v, vp), and the
 * tangent at complex y. */
static int lorenz_jac_dir_b(int W, const double *t, const double *y, const double *p, const double *v,
                            const double *vp, double *jv, double *ddfdt, void *u)
{
    (void)t, (void)y, (void)p, (void)ddfdt, (void)u;
    enum { N_ = 3 };
    for (int w = 0; w < W; w++) {
        J(0, 0) = -VP(0), J(0, 1) = VP(0), J(0, 2) = 0;
        J(1, 0) = VP(1) - V(2), J(1, 1) = 0, J(1, 2) = -V(0);
        J(2, 0) = V(1), J(2, 1) = V(0), J(2, 2) = -VP(2);
    }
    return 0;
}
static int lorenz_tangent_c(double complex t, const double complex *y, const double *p, const double *v,
                            const double *vp, double complex *out, void *u)
{
    (void)t, (void)u;
#define PC(k) p[k]
#define VPC(k) (vp ? vp[k] : 0.0)
    LORENZ_TANGENT(YC, VC, PC, VPC, OC);
#undef PC
#undef VPC
    return 0;
}
static int lorenz_fcp(double complex t, const double complex *y, const double complex *p, double complex *dy,
                      void *u)
{
    (void)t, (void)u;
    dy[0] = p[0] * (y[1] - y[0]);
    dy[1] = y[0] * (p[1] - y[2]) - y[1];
    dy[2] = y[0] * y[1] - p[2] * y[2];
    return 0;
}

SV_ODE_BATCH_BY_LANES(rober)
SV_ODE_BATCH_BY_LANES(hires)
SV_ODE_BATCH_BY_LANES(orego)
SV_ODE_BATCH_BY_LANES(vdpol)
SV_ODE_BATCH_BY_LANES(lorenz)
SV_ODE_SCALAR_WRAPPERS(rober)
SV_ODE_SENS_WRAPPERS(rober)
SV_ODE_SENS_TANGENT_WRAPPER(hires)
SV_ODE_SENS_JAC_DIR_WRAPPER(hires)
SV_ODE_SENS_TANGENT_WRAPPER(orego)
SV_ODE_SENS_JAC_DIR_WRAPPER(orego)
SV_ODE_SENS_WRAPPERS(vdpol)
SV_ODE_SENS_DFDP_WRAPPER(lorenz)
SV_ODE_SENS_TANGENT_WRAPPER(lorenz)
SV_ODE_SENS_JAC_DIR_WRAPPER(lorenz)
SV_ODE_SCALAR_WRAPPERS(hires)
SV_ODE_SCALAR_WRAPPERS(orego)
SV_ODE_SCALAR_WRAPPERS(vdpol)
SV_ODE_SCALAR_WRAPPERS(lorenz)

sv_status ode_builtin_small(sv_ode_builtin *b, const char *name, sv_ode_problem_desc *d, double arg)
{
    (void)arg;
    if (!strcmp(name, "rober")) {
        static const double y0[3] = {1, 0, 0}, p[3] = {0.04, 1e4, 3e7};
        SV_ODE_FILL(d, rober, 3, 3);
        d->f_complex = rober_fc;
        d->jvp = rober_jvp;
        d->sens_source = SV_ODE_SENS_ANALYTIC;
        SV_ODE_FILL_SENS(d, rober);
        d->f_complex_p = rober_fcp;
        d->tangent_complex = rober_tangent_c;
        return ode_builtin_set(b, d, 0, 1e11, y0, p, 1e-6, 1e-10);
    }
    if (!strcmp(name, "hires")) {
        static const double y0[8] = {1, 0, 0, 0, 0, 0, 0, 0.0057};
        SV_ODE_FILL(d, hires, 8, 0);
        d->f_complex = hires_fc;
        d->sens_source = SV_ODE_SENS_TANGENT;
        d->tangent = hires_tangent;
        d->tangent_batch = hires_tangent_b;
        d->tangent_complex = hires_tangent_c;
        d->jac_dir = hires_jac_dir;
        d->jac_dir_batch = hires_jac_dir_b;
        return ode_builtin_set(b, d, 0, 321.8122, y0, NULL, 1e-6, 1e-6);
    }
    if (!strcmp(name, "orego")) {
        static const double y0[3] = {1, 2, 3};
        SV_ODE_FILL(d, orego, 3, 0);
        d->sens_source = SV_ODE_SENS_TANGENT;
        d->tangent = orego_tangent;
        d->tangent_batch = orego_tangent_b;
        d->tangent_complex = orego_tangent_c;
        d->jac_dir = orego_jac_dir;
        d->jac_dir_batch = orego_jac_dir_b;
        return ode_builtin_set(b, d, 0, 360, y0, NULL, 1e-6, 1e-6);
    }
    if (!strcmp(name, "vdpol")) {
        static const double y0[2] = {2, 0}, p[1] = {1e-6};
        SV_ODE_FILL(d, vdpol, 2, 1);
        d->f_complex = vdpol_fc;
        d->sens_source = SV_ODE_SENS_TANGENT;
        SV_ODE_FILL_SENS(d, vdpol);
        d->tangent_complex = vdpol_tangent_c;
        d->f_complex_p = vdpol_fcp;
        return ode_builtin_set(b, d, 0, 2, y0, p, 1e-6, 1e-6);
    }
    if (!strcmp(name, "lorenz")) {
        static const double y0[3] = {1, 0, 0}, p[3] = {10, 28, 8.0 / 3.0};
        SV_ODE_FILL(d, lorenz, 3, 3);
        d->f_complex = lorenz_fc;
        d->sens_source = SV_ODE_SENS_TANGENT;
        d->dfdp = lorenz_dfdp;
        d->dfdp_batch = lorenz_dfdp_b;
        d->tangent = lorenz_tangent;
        d->tangent_batch = lorenz_tangent_b;
        d->tangent_complex = lorenz_tangent_c;
        d->jac_dir = lorenz_jac_dir;
        d->jac_dir_batch = lorenz_jac_dir_b;
        d->f_complex_p = lorenz_fcp;
        return ode_builtin_set(b, d, 0, 1, y0, p, 1e-6, 1e-8);
    }
    return SV_ERR_UNSUPPORTED;
}
