/* Thick metal: the rectangle integrals of 1/R averaged over the metal's
 * thickness t, for currents spread uniformly over each cell's height
 * [h, h + t]: the partial inductances of rectangular bars (docs/em.md).
 *
 * The direct part of two bars is the six-fold integral of Hoer and Love
 * (1965), divided by t²; for pairs a few sides apart it is the 4-D closed
 * form averaged over the vertical offset u = z − z', whose density is the
 * triangle (1 − |u|/t)/t on [−t, t], by a Gauss rule for that density
 * (the 6-D sum cancels like (R/t)²·(R/side)⁴ there). The ground image of
 * z' sits at −z': z + z' has the triangular density on [2h, 2h + 2t],
 * smooth on the scale 2h. docs/em.md gives the rules' errors. */
#include <math.h>

#include "em_internal.h"
#include "geom.h"

/* Hoer–Love's function: ∂²x ∂²y ∂²z f = 1/R, even in each argument. */
static double hl_f(double x, double y, double z)
{
    double x2 = x * x, y2 = y * y, z2 = z * z, R = sqrt(x2 + y2 + z2);
    if (R == 0) return 0;
    double f = (x2 * x2 + y2 * y2 + z2 * z2 - 3 * (x2 * y2 + y2 * z2 + z2 * x2)) * R / 60;
    double ryz = sqrt(y2 + z2), rxz = sqrt(x2 + z2), rxy = sqrt(x2 + y2);
    /* a·ln((a + R)/ρ) = a·asinh(a/ρ); its coefficient vanishes where ρ = 0 */
    if (ryz > 0) f += (y2 * z2 / 4 - y2 * y2 / 24 - z2 * z2 / 24) * x * asinh(x / ryz);
    if (rxz > 0) f += (x2 * z2 / 4 - x2 * x2 / 24 - z2 * z2 / 24) * y * asinh(y / rxz);
    if (rxy > 0) f += (x2 * y2 / 4 - x2 * x2 / 24 - y2 * y2 / 24) * z * asinh(z / rxy);
    if (x != 0 && y != 0 && z != 0)
        f -= (x * y * z2 * z * atan(x * y / (z * R)) + x * y2 * y * z * atan(x * z / (y * R)) +
              x2 * x * y * z * atan(y * z / (x * R))) / 6;
    return f;
}

/* ∫∫ over two boxes r × [0, t] and r' × [za, za + t] of 1/R, by the
 * 64-term sum (each axis a second difference of f). */
static double hl_boxes(const double r[8], double za, double t)
{
    const double xa[2] = {r[0], r[1]}, xb[2] = {r[4], r[5]}, ya[2] = {r[2], r[3]}, yb[2] = {r[6], r[7]};
    const double zs[3] = {za - t, za, za + t}, zw[3] = {1, -2, 1}; /* z offsets of the second difference */
    double s = 0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 2; k++)
                for (int l = 0; l < 2; l++) {
                    double sg = ((i + j + k + l) & 1) ? -1 : 1, x = xa[i] - xb[j], y = ya[k] - yb[l];
                    for (int q = 0; q < 3; q++) s += sg * zw[q] * hl_f(x, y, zs[q]);
                }
    return s;
}

static double rect_at(const sv_em_model *m, const double r[8], double z, int exact)
{
    if (exact) return sv_em_rect_exact(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], z);
    return sv_em_rect(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], z, m->opts.far_ratio);
}

static double largest_side(const double r[8])
{
    return fmax(fmax(r[1] - r[0], r[3] - r[2]), fmax(r[5] - r[4], r[7] - r[6]));
}

/* Centre distance over the larger of the largest side and t. */
static double rel_distance(const double r[8], double t)
{
    double X = 0.5 * (r[4] + r[5] - r[0] - r[1]), Y = 0.5 * (r[6] + r[7] - r[2] - r[3]);
    return sqrt(X * X + Y * Y) / fmax(largest_side(r), t);
}

/* Gauss rules for the triangular density (1 − |u|/t)/t on [−t, t]: for an
 * even integrand, two points in u² (exact through u⁶); for any integrand,
 * the nodes 0, ±√(2/5)·t (exact through u⁵). Nodes in units of t. */
static const double even_node[2] = {0.2622298426527479, 0.7509251433044474};
static const double even_weight[2] = {0.8022673908402487, 0.19773260915975133};
static const double tri_node[3] = {-0.63245553203367588, 0.0, 0.63245553203367588};
static const double tri_weight[3] = {0.20833333333333333, 0.58333333333333333, 0.20833333333333333};

static double rect_point(const double r[8], double z)
{
    return sv_em_rect_point(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], z);
}

/* Σ w_k·I(z_k) by one evaluation at zc (the rule's mean offset in u²) and
 * the rest of the rule from the point form, when the point form holds
 * (offsets beyond two sides): the thickness only adds terms of relative
 * size (t/R)², which the point form gets to (side/R)⁴ of themselves. The
 * closed forms' cost is in their logarithms and arctangents; this keeps
 * one evaluation per pair instead of two or three. */
static double rule(const sv_em_model *m, const double r[8], int nk, const double *z, const double *w, double zc,
                   int exact)
{
    double s = 0;
    if (exact) {
        for (int k = 0; k < nk; k++) s += w[k] * rect_at(m, r, z[k], 1);
        return s;
    }
    for (int k = 0; k < nk; k++) s += w[k] * rect_point(r, z[k]);
    return rect_at(m, r, zc, 0) + s - rect_point(r, zc);
}

double sv_em_thick_direct(const sv_em_model *m, const double r[8], int exact)
{
    double t = m->prj->st.t, s = 0;
    if (rel_distance(r, t) < SV_EM_THICK_CLOSED) {
        if (t >= SV_EM_THICK_THIN * largest_side(r)) return hl_boxes(r, 0, t) / (t * t);
        /* metal much thinner than the cells: the closed form would cancel
         * like (side/t)², while I(u) is nearly linear over [0, t] (|u| and
         * u²·ln u at u = 0, which the end-flattened rule takes) */
        const sv_em_gl_rule *g = &m->gl_near;
        for (int k = 0; k < g->n; k++) s += g->w[k] * 2 * (1 - g->t[k]) * rect_at(m, r, g->t[k] * t, exact);
        return s;
    }
    /* even and smooth in u beyond */
    double z[2] = {even_node[0] * t, even_node[1] * t};
    return rule(m, r, 2, z, even_weight, t / sqrt(6.0), exact);
}

double sv_em_thick_image(const sv_em_model *m, const double r[8], double base, int exact)
{
    double t = m->prj->st.t; /* offsets base + t + u, u triangular on [−t, t] */
    double z[3] = {base + t + tri_node[0] * t, base + t, base + t + tri_node[2] * t};
    return rule(m, r, 3, z, tri_weight, base + t, exact || base < 2 * largest_side(r));
}
