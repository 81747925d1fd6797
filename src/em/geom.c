/* Geometry of one unknown: its current profile (for L) and its divergence
 * cells (for Ψ = Dᵀ·P·D), plus the per-pair coefficients: the exact Galerkin
 * inductance of two rooftops (or half rooftops) by quadrature over
 * closed-form rectangle integrals, and the cell potential coefficients. */
#include <math.h>
#include <string.h>

#include "em_internal.h"
#include "geom.h"

/* Along its axis a rooftop is the triangle of half-width d (cell length)
 * centred on its edge e, a half rooftop the half triangle from the port
 * edge into its cell; across, both are uniform over the cell. */
void sv_em_profile(const sv_em_model *m, int q, sv_em_profile_t *p) { sv_em_profile_from(m, q, 0, 0, p); }

void sv_em_profile_from(const sv_em_model *m, int q, int i0, int j0, sv_em_profile_t *p)
{
    const sv_em_basis *b = &m->basis[q];
    double dx = m->prj->grid.dx, dy = m->prj->grid.dy;
    double x0 = (b->i - i0) * dx, y0 = (b->j - j0) * dy;
    p->sign = 1;
    p->half = 0;
    switch (b->kind) {
    case SV_EM_UNKNOWN_X:
        p->axis = 0; p->e = x0 + dx; p->d = dx; p->t1 = y0; p->t2 = y0 + dy;
        break;
    case SV_EM_UNKNOWN_Y:
        p->axis = 1; p->e = y0 + dy; p->d = dy; p->t1 = x0; p->t2 = x0 + dx;
        break;
    case SV_EM_UNKNOWN_PORT:
        p->half = 1;
        switch (b->side) {
        case SV_EM_LEFT: p->axis = 0; p->e = x0; break;
        case SV_EM_RIGHT: p->axis = 0; p->e = x0 + dx; p->half = -1; p->sign = -1; break;
        case SV_EM_BOTTOM: p->axis = 1; p->e = y0; break;
        default: p->axis = 1; p->e = y0 + dy; p->half = -1; p->sign = -1; break;
        }
        p->d = p->axis == 0 ? dx : dy;
        p->t1 = p->axis == 0 ? y0 : x0;
        p->t2 = p->t1 + (p->axis == 0 ? dy : dx);
    }
}

int sv_em_div_cells(const sv_em_model *m, int q, int ci[2], int cj[2], int sg[2])
{
    const sv_em_basis *b = &m->basis[q];
    return sv_em_unknown_cells(b->kind, b->i, b->j, ci, cj, sg);
}

/* The closed form's F at the corners of pulse pairs whose along edges are
 * al and bl and whose across edges come from the boundaries ta[0..na] and
 * tb[0..nb] of sub-strips (edges.c): the pairs of sub-strips share most
 * corners, so each F is computed once (NaN: not yet); (u, v) is the pair
 * now. The same arguments give the same bits as sv_em_rect_exact's. A
 * half rooftop's pulses share their port edge, so the F of an along edge
 * pair stay while those two edges do. */
typedef struct corner_tab {
    const double *ta, *tb;
    int nb, u, v;
    double al[2], bl[2];
    double f[2][4][(SV_EM_STRIPS_MAX + 1) * (SV_EM_STRIPS_MAX + 1)]; /* [z][along pair][across pair] */
} corner_tab;

static void corner_tab_reset(corner_tab *t, int na, double a1, double a2, double b1, double b2)
{
    const double al[2] = {a1, a2}, bl[2] = {b1, b2};
    size_t n = (size_t)(na + 1) * (size_t)(t->nb + 1);
    for (int k = 0; k < 4; k++) {
        /* the same bits (== would take −0 for +0) */
        if (!memcmp(&al[k / 2], &t->al[k / 2], sizeof al[0]) && !memcmp(&bl[k % 2], &t->bl[k % 2], sizeof bl[0]))
            continue;
        for (int z = 0; z < 2; z++)
            for (size_t q = 0; q < n; q++) t->f[z][k][q] = NAN;
    }
    t->al[0] = a1, t->al[1] = a2, t->bl[0] = b1, t->bl[1] = b2;
}

static double corner_F(corner_tab *t, int axis, int iz, double z, int ia, int ib, int p, int q)
{
    double *f = &t->f[iz][2 * ia + ib][p * (t->nb + 1) + q];
    if (isnan(*f)) {
        double along = t->al[ia] - t->bl[ib], across = t->ta[p] - t->tb[q];
        *f = axis ? sv_em_F(across, along, z) : sv_em_F(along, across, z);
    }
    return *f;
}

/* sv_em_rect_exact of pair (u, v)'s rectangles from the table: its sum, in
 * its order (green.c), so the same bits. */
static double rect_tab(corner_tab *t, int axis, int iz, double z)
{
    double s = 0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 2; k++)
                for (int l = 0; l < 2; l++) {
                    /* x is along for axis 0, across for axis 1 */
                    double f = axis ? corner_F(t, 1, iz, z, k, l, t->u + i, t->v + j)
                                    : corner_F(t, 0, iz, z, i, j, t->u + k, t->v + l);
                    s += ((i + j + k + l) & 1) ? -f : f;
                }
    return s;
}

/* L between two parallel unit-height pulses [a1,a2] × [ta1,ta2] and
 * [b1,b2] × [tb1,tb2] (along × across their common axis), the current
 * spread uniformly across: μ0/(4π·wa·wb)·(I(0) − I(2h)). Near rectangles'
 * integrals from ft when given (ta1 … tb2 its pair's edges). */
static double L_pulses(const sv_em_model *m, corner_tab *ft, int axis, double a1, double a2, double ta1, double ta2,
                       double b1, double b2, double tb1, double tb2, int exact)
{
    double h = m->prj->st.h, fr = m->opts.far_ratio, z[2] = {0, 2 * h}, in[2];
    /* rectangle corners in (x, y): along is x for axis 0, y for axis 1 */
    double ax1 = axis ? ta1 : a1, ax2 = axis ? ta2 : a2, ay1 = axis ? a1 : ta1, ay2 = axis ? a2 : ta2;
    double bx1 = axis ? tb1 : b1, bx2 = axis ? tb2 : b2, by1 = axis ? b1 : tb1, by2 = axis ? b2 : tb2;
    for (int iz = 0; iz < 2; iz++) { /* sv_em_rect's choice, or the closed form when exact */
        if (!exact && sv_em_rect_far(ax1, ax2, ay1, ay2, bx1, bx2, by1, by2, z[iz], fr))
            in[iz] = sv_em_rect_point(ax1, ax2, ay1, ay2, bx1, bx2, by1, by2, z[iz]);
        else
            in[iz] = ft ? rect_tab(ft, axis, iz, z[iz]) : sv_em_rect_exact(ax1, ax2, ay1, ay2, bx1, bx2, by1, by2, z[iz]);
    }
    return SV_EM_MU0 / (4 * SV_EM_PI) / ((ta2 - ta1) * (tb2 - tb1)) * (in[0] - in[1]);
}

/* Gauss–Legendre nodes and weights on [0, 1] after the substitution
 * t = 3u² − 2u³ (dt = 6u(1 − u)du): the integrands below are smooth inside
 * their intervals but behave like s²·ln s at the ends (where pulse edges
 * meet), which the substitution flattens to u⁵·ln u. Nodes from Newton's
 * method on the Legendre polynomial, computed once (n ≤ SV_EM_GL_MAX). */
void sv_em_gl_make(int n, int flatten, sv_em_gl_rule *r)
{
    if (n > SV_EM_GL_MAX) n = SV_EM_GL_MAX;
    r->n = n;
    for (int k = 0; k < n; k++) {
        double x = cos(SV_EM_PI * (k + 0.75) / (n + 0.5)), dp = 1;
        for (int it = 0; it < 100; it++) {
            double p0 = 1, p1 = x;
            for (int j = 2; j <= n; j++) {
                double p2 = ((2 * j - 1) * x * p1 - (j - 1) * p0) / j;
                p0 = p1;
                p1 = p2;
            }
            dp = n * (x * p1 - p0) / (x * x - 1);
            double dx = p1 / dp;
            x -= dx;
            if (fabs(dx) < 1e-16) break;
        }
        double u = 0.5 * (1 - x), wu = 1 / ((1 - x * x) * dp * dp); /* weight on [0,1]: 2/((1−x²)P'²)/2 */
        r->t[k] = flatten ? u * u * (3 - 2 * u) : u;
        r->w[k] = flatten ? wu * 6 * u * (1 - u) : wu;
    }
}

static const sv_em_gl_rule *gl_get(const sv_em_model *m, int far) { return far ? &m->gl_far : &m->gl_near; }

/* Two rooftops whose edges are (D, T) apart are far beyond (far ratio + 2)
 * of their largest extent: a coarser rule, and the point approximation. */
static int L_full_far(const sv_em_model *m, double d, double w, double wb, double D, double T)
{
    double side = fmax(2 * d, fmax(w, wb)), R2 = D * D + T * T;
    return R2 >= (m->opts.far_ratio + 2) * (m->opts.far_ratio + 2) * side * side;
}

/* Rooftop against parallel rooftop at an along/across offset (D, T) of
 * their edges and cells: a triangle of half-width d is the convolution of
 * two pulses of length d divided by d, so by translation invariance
 *   L = (1/d)·∫_{−d}^{d} (1 − |σ|/d) · Lpulse(offset D + σ) dσ,
 * Lpulse the pulses [−d/2, d/2] and [D + σ − d/2, D + σ + d/2]. The
 * integrand has edge meetings only at σ ∈ {−d, 0, d} for grid offsets.
 * Far pairs: sv_em_L_rooftops_far (solvent/em_tables.h), shared with
 * accelerators. */

static double L_full_full(const sv_em_model *m, int axis, double d, double w, double wb, double D, double T,
                          int exact)
{
    if (!exact && L_full_far(m, d, w, wb, D, T))
        return sv_em_L_rooftops_far(axis, d, w, wb, D, T, m->prj->st.h, m->gl_far.n, m->gl_far.t, m->gl_far.w);
    const sv_em_gl_rule *g = gl_get(m, 0);
    double s = 0;
    for (int k = 0; k < g->n; k++) {
        double sg = g->t[k] * d, wt = g->w[k] * (1 - g->t[k]);
        s += wt *
             (L_pulses(m, NULL, axis, -0.5 * d, 0.5 * d, 0, w, D + sg - 0.5 * d, D + sg + 0.5 * d, T, T + wb, exact) +
              L_pulses(m, NULL, axis, -0.5 * d, 0.5 * d, 0, w, D - sg - 0.5 * d, D - sg + 0.5 * d, T, T + wb, exact));
    }
    return s;
}

double sv_em_L_rooftops(const sv_em_model *m, int axis, int di, int dj, int exact)
{
    double dx = m->prj->grid.dx, dy = m->prj->grid.dy;
    if (axis == 0) return L_full_full(m, 0, dx, dy, dy, di * dx, dj * dy, exact);
    return L_full_full(m, 1, dy, dx, dx, dj * dy, di * dx, exact);
}

int sv_em_L_rooftops_is_far(const sv_em_model *m, int axis, int di, int dj)
{
    double dx = m->prj->grid.dx, dy = m->prj->grid.dy;
    if (axis == 0) return L_full_far(m, dx, dy, dy, di * dx, dj * dy);
    return L_full_far(m, dy, dx, dx, dj * dy, di * dx);
}

/* Along-axis pulse of a profile at parameter τ ∈ [0, d]: the profile is
 * (1/d)·∫_0^d pulse(τ) dτ with pulse(τ) = [e − d + τ, e + τ] (rooftop),
 * [e, e + τ] (half rooftop into +axis) or [e − τ, e] (into −axis). */
static void prof_pulse(const sv_em_profile_t *p, double tau, double *lo, double *hi)
{
    if (p->half == 0) { *lo = p->e - p->d + tau; *hi = p->e + tau; }
    else if (p->half > 0) { *lo = p->e; *hi = p->e + tau; }
    else { *lo = p->e - tau; *hi = p->e; }
}

/* The pairs of sub-strips (u, v) one call works on: their indices u·nb + v
 * and their accumulators. */
typedef struct strip_pairs {
    int n, nb;
    int pair[SV_EM_STRIPS_MAX * SV_EM_STRIPS_MAX];
    double sum[SV_EM_STRIPS_MAX * SV_EM_STRIPS_MAX];
} strip_pairs;

/* For each pair: ∫_0^d (1/d)·Lpulse(pa, pulse_b(υ)) dυ into sum, pa the
 * along pulse [a1, a2] across a's sub-strip u, pulse_b b's across its
 * sub-strip v; split where an edge of pulse_b(υ) meets an edge of pa
 * (there the integrand is not smooth). */
static void L_inner(const sv_em_model *m, corner_tab *ft, int na, const sv_em_profile_t *b, int axis, double a1,
                    double a2, const sv_em_gl_rule *g, int exact, strip_pairs *sp)
{
    double d = b->d, cut[8];
    int nc = 0;
    cut[nc++] = 0;
    /* edges of pulse_b(υ): lo = l0 + gl·υ, hi = h0 + gh·υ */
    double l0, h0, l1, h1;
    prof_pulse(b, 0, &l0, &h0);
    prof_pulse(b, d, &l1, &h1);
    double gl = (l1 - l0) / d, gh = (h1 - h0) / d, ae[2] = {a1, a2};
    for (int k = 0; k < 2; k++) {
        if (gl != 0) { double u = (ae[k] - l0) / gl; if (u > 1e-12 * d && u < d * (1 - 1e-12)) cut[nc++] = u; }
        if (gh != 0) { double u = (ae[k] - h0) / gh; if (u > 1e-12 * d && u < d * (1 - 1e-12)) cut[nc++] = u; }
    }
    cut[nc++] = d;
    for (int i = 1; i < nc; i++) /* insertion sort, ≤ 6 entries */
        for (int j = i; j > 0 && cut[j] < cut[j - 1]; j--) { double t = cut[j]; cut[j] = cut[j - 1]; cut[j - 1] = t; }
    for (int e = 0; e < sp->n; e++) sp->sum[e] = 0;
    for (int seg = 0; seg + 1 < nc; seg++) {
        double u0 = cut[seg], len = cut[seg + 1] - u0;
        if (len <= 0) continue;
        for (int k = 0; k < g->n; k++) {
            double lo, hi;
            prof_pulse(b, u0 + g->t[k] * len, &lo, &hi);
            if (hi <= lo) continue;
            double w = g->w[k] * len / d;
            corner_tab_reset(ft, na, a1, a2, lo, hi);
            for (int e = 0; e < sp->n; e++) {
                int u = sp->pair[e] / sp->nb, v = sp->pair[e] % sp->nb;
                ft->u = u;
                ft->v = v;
                sp->sum[e] += w * L_pulses(m, ft, axis, a1, a2, ft->ta[u], ft->ta[u + 1], lo, hi, ft->tb[v],
                                           ft->tb[v + 1], exact);
            }
        }
    }
}

/* With at least one half rooftop (no translation invariance), nested
 * quadrature over both pulse families: sv_em_L_strips's pairs whose
 * quadrature rule is the far one (far = 1) or the near one, all at once. */
static void L_half_strips(const sv_em_model *m, const sv_em_gl_rule *near, const sv_em_profile_t *a, const double *ta,
                          int na, const sv_em_profile_t *b, const double *tb, int nb, int exact, int far, double *out)
{
    double sgn = a->sign * b->sign, fr = m->opts.far_ratio;
    double ca = a->half == 0 ? a->e : a->e + 0.5 * a->half * a->d, cb = b->half == 0 ? b->e : b->e + 0.5 * b->half * b->d;
    double D = cb - ca;
    strip_pairs sp = {.nb = nb};
    for (int u = 0; u < na; u++)
        for (int v = 0; v < nb; v++) {
            double T = 0.5 * (tb[v] + tb[v + 1] - ta[u] - ta[u + 1]);
            double side = fmax(2 * a->d, fmax(ta[u + 1] - ta[u], tb[v + 1] - tb[v]));
            int f = !exact && D * D + T * T >= (fr + 2) * (fr + 2) * side * side;
            if (f == far) sp.pair[sp.n++] = u * nb + v;
        }
    if (!sp.n) return;
    const sv_em_gl_rule *g = far ? gl_get(m, 1) : near;
    corner_tab ft = {.ta = ta, .tb = tb, .nb = nb, .al = {NAN, NAN}, .bl = {NAN, NAN}};
    double d = a->d, s[SV_EM_STRIPS_MAX * SV_EM_STRIPS_MAX] = {0};
    for (int k = 0; k < g->n; k++) {
        double lo, hi;
        prof_pulse(a, g->t[k] * d, &lo, &hi);
        if (hi <= lo) continue;
        L_inner(m, &ft, na, b, a->axis, lo, hi, g, exact, &sp);
        for (int e = 0; e < sp.n; e++) s[e] += g->w[k] * sp.sum[e];
    }
    for (int e = 0; e < sp.n; e++) out[sp.pair[e]] = sgn * s[e];
}

void sv_em_L_strips(const sv_em_model *m, const sv_em_profile_t *a, const double *ta, int na,
                    const sv_em_profile_t *b, const double *tb, int nb, int exact, double *out)
{
    sv_em_L_strips_rule(m, gl_get(m, 0), a, ta, na, b, tb, nb, exact, out);
}

void sv_em_L_strips_rule(const sv_em_model *m, const sv_em_gl_rule *near, const sv_em_profile_t *a, const double *ta,
                         int na, const sv_em_profile_t *b, const double *tb, int nb, int exact, double *out)
{
    if (a->axis != b->axis || (a->half == 0 && b->half == 0)) {
        sv_em_profile_t as = *a, bs = *b;
        for (int u = 0; u < na; u++)
            for (int v = 0; v < nb; v++) {
                as.t1 = ta[u], as.t2 = ta[u + 1], bs.t1 = tb[v], bs.t2 = tb[v + 1];
                out[u * nb + v] = sv_em_L_profiles(m, &as, &bs, exact);
            }
        return;
    }
    L_half_strips(m, near, a, ta, na, b, tb, nb, exact, 0, out);
    L_half_strips(m, near, a, ta, na, b, tb, nb, exact, 1, out);
}

double sv_em_L_profiles(const sv_em_model *m, const sv_em_profile_t *a, const sv_em_profile_t *b, int exact)
{
    if (a->axis != b->axis) return 0;
    double sgn = a->sign * b->sign;
    if (a->half == 0 && b->half == 0)
        return sgn * L_full_full(m, a->axis, a->d, a->t2 - a->t1, b->t2 - b->t1, b->e - a->e, b->t1 - a->t1, exact);
    const double ta[2] = {a->t1, a->t2}, tb[2] = {b->t1, b->t2};
    double l;
    sv_em_L_strips(m, a, ta, 1, b, tb, 1, exact, &l);
    return l;
}

int sv_em_P_cells_is_far(const sv_em_model *m, int di, int dj)
{
    double dx = m->prj->grid.dx, dy = m->prj->grid.dy, X = di * dx, Y = dj * dy;
    return sv_em_rect_far(0, dx, 0, dy, X, X + dx, Y, Y + dy, 0, m->opts.far_ratio);
}

double sv_em_P_cells(const sv_em_model *m, int di, int dj, int exact)
{
    const sv_em_grid *g = &m->prj->grid;
    double dx = g->dx, dy = g->dy, h = m->prj->st.h, er = m->prj->st.eps_r;
    double K = (er - 1) / (er + 1), fr = m->opts.far_ratio;
    int terms = sv_em_image_terms(er, m->opts.accuracy);
    if (!exact && sv_em_P_cells_is_far(m, di, dj)) return sv_em_P_far(dx, dy, h, K, terms, di, dj);
    double X = di * dx, Y = dj * dy;
    double s = 0, w = 1, prev = 0;
    for (int n = 0; n <= terms; n++) {
        double z = 2.0 * n * h;
        double Iz = exact ? sv_em_rect_exact(0, dx, 0, dy, X, X + dx, Y, Y + dy, z)
                         : sv_em_rect(0, dx, 0, dy, X, X + dx, Y, Y + dy, z, fr);
        if (n > 0) {
            s += w * (prev - Iz);
            w *= -K;
        }
        prev = Iz;
    }
    return (1 - K) * s / (4 * SV_EM_PI * SV_EM_EPS0 * dx * dy * dx * dy);
}
