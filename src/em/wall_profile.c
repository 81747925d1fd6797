/* Thick metal: the charge profile along a side wall's height and the rules
 * that average the walls' kernels over it (docs/em.md, "Thick metal").
 *
 * The wall's charge falls from its foot like the r^(−1/3) of the 3π/2
 * corner where the wall meets the dielectric; the top corner's singularity
 * is left out, as the model puts no charge on the top face it belongs to.
 * Averages over one wall substitute u = x³, which takes the foot's
 * singularity into the weight (p(x³)·3x² = 2x). Averages over two walls
 * depend on their heights only through the offset u − u' (the direct term)
 * or the sum u + u' (the images below the interface), so they are 1-D
 * integrals against the densities of those: the profile's autocorrelation
 * and its self-convolution, computed here once at the rules' nodes. */
#include <math.h>

#include "geom.h"
#include "wall_profile.h"

double sv_em_wall_profile(double u) { return 2.0 / 3.0 / cbrt(u); }

/* ∫ over u ∈ [lo, hi] of p(u)·p(c + σu), after u = lo + (hi − lo)·x³ (the
 * foot's singularity at u = 0 = lo into the weight), in two panels of x
 * split where the distance s from lo to the other singularity below lo
 * makes the integrand steep (x³ ≈ s/(hi − lo)). */
static double pair_integral(const sv_em_gl_rule *g, double lo, double hi, double c, double sigma, double s)
{
    double len = hi - lo, xc = s > 0 ? cbrt(s / len) : 1;
    if (xc >= 1) xc = 1;
    const double edge[3] = {0, xc, 1};
    double sum = 0;
    for (int panel = 0; panel < 2; panel++) {
        double x0 = edge[panel], dx = edge[panel + 1] - x0;
        if (dx <= 0) continue;
        for (int k = 0; k < g->n; k++) {
            double x = x0 + dx * g->t[k], u = lo + len * x * x * x;
            sum += g->w[k] * dx * 3 * len * x * x * sv_em_wall_profile(u) * sv_em_wall_profile(c + sigma * u);
        }
    }
    return sum;
}

/* The density of u − u' ≥ 0 (half of the offset's, which is even) and of
 * u + u' ∈ (0, 2), for u, u' independent with density p. */
static double offset_density(const sv_em_gl_rule *g, double v) { return pair_integral(g, 0, 1 - v, v, 1, v); }

static double sum_density(const sv_em_gl_rule *g, double w)
{
    double lo = w > 1 ? w - 1 : 0; /* p(u)·p(w − u) is symmetric about w/2 */
    return 2 * pair_integral(g, lo, w / 2, w, -1, lo);
}

static void normalise(sv_em_gl_rule *r)
{
    double s = 0;
    for (int k = 0; k < r->n; k++) s += r->w[k];
    for (int k = 0; k < r->n; k++) r->w[k] /= s;
}

static void one_rule(int n, sv_em_gl_rule *r)
{
    sv_em_gl_rule g;
    sv_em_gl_make(n, 0, &g);
    r->n = n;
    for (int k = 0; k < n; k++) {
        double x = g.t[k];
        r->t[k] = x * x * x;
        r->w[k] = g.w[k] * 3 * x * x * sv_em_wall_profile(r->t[k]);
    }
    normalise(r);
}

/* Rules against the offset's or the sum's density on (0, 1): nodes v = y³
 * (the densities' cusps at 0, like v^(1/3), become smooth in y), and for
 * the sum its half on (1, 2) at 2 − y. */
static void pair_rule(const sv_em_gl_rule *inner, int n, int flatten, int sum, sv_em_gl_rule *r)
{
    sv_em_gl_rule g;
    sv_em_gl_make(n, flatten, &g);
    r->n = sum ? 2 * n : n;
    for (int k = 0; k < n; k++) {
        double y = g.t[k], v = y * y * y;
        r->t[k] = v;
        r->w[k] = g.w[k] * 3 * y * y * (sum ? sum_density(inner, v) : 2 * offset_density(inner, v));
        if (!sum) continue;
        r->t[n + k] = 2 - y;
        r->w[n + k] = g.w[k] * sum_density(inner, 2 - y);
    }
    normalise(r);
}

void sv_em_wall_heights_make(sv_em_wall_heights *h)
{
    sv_em_gl_rule inner;
    sv_em_gl_make(SV_EM_GL_MAX, 0, &inner);
    one_rule(SV_EM_GL_WALL, &h->one_near);
    one_rule(SV_EM_GL_FAR, &h->one_far);
    pair_rule(&inner, SV_EM_GL_WALL, 1, 0, &h->diff);
    pair_rule(&inner, SV_EM_GL_WALL, 1, 1, &h->sum_near);
    pair_rule(&inner, SV_EM_GL_FAR, 0, 1, &h->sum_far);
}
