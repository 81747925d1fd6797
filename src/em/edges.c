/* Strips one cell wide: their current and charge follow the edge-singular
 * transverse distribution of an isolated strip, p(t) = 1/(π·√(1 − t²)) over
 * the width (t ∈ [−1, 1]), instead of the uniform one of a cell (project
 * switch "edge_profile"; docs/em.md, "Strips one cell wide").
 *
 * A uniform cell across a narrow strip has the self-"radius" w·e^(−3/2) =
 * 0.223·w instead of w/4: its L is a few per cent high and its C low (Pozar's
 * 120 Ω sections one cell across: L +3 %, C −3.4 % against Hammerstad–
 * Jensen). The profile is carried by SUB sub-strips across the cell, each
 * with the weight 1/SUB of p; L and P between two unknowns or cells are the
 * weighted sums of the sub-strips' closed forms.
 *
 * Only pairs within EDGE_REACH cell sides change: beyond, the profile acts
 * through its second moment alone (w²/8 against w²/12), on entries that are
 * small (docs/em.md has what the reach and the sub-strips cost and give).
 * The changes depend on the integer offset and the two profiles alone, so
 * they are tabulated once, like the assembly's tables, and added to the
 * assembled L and Ψ = Dᵀ·P·D. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "em_internal.h"
#include "geom.h"

#define SUB 8          /* sub-strips across a profiled cell */
#define EDGE_REACH 3.0 /* pairs farther apart (in the larger cell side) keep the uniform values */

/* Profiles: 0 uniform, 1 edge-singular across y (a strip along x), 2 across x. */
enum { PROF_NONE = 0, PROF_Y = 1, PROF_X = 2 };

/* The sub-strips: boundaries at t_s = −cos(π·s/SUB), which gives each the
 * same weight 1/SUB of p and makes them narrow where p is large. */
static double sub_edge(int s) { return -cos(SV_EM_PI * s / SUB); }

static int metal(const sv_em_project *p, int i, int j) { return sv_em_project_metal(p, i, j); }

/* The profile of cell (i, j): across y when both its y neighbours are empty
 * and an x neighbour is metal (a strip along x), across x likewise. */
static int cell_profile(const sv_em_project *p, int i, int j)
{
    if (!p->edge_profile || !metal(p, i, j)) return PROF_NONE;
    int ny = !metal(p, i, j - 1) && !metal(p, i, j + 1), nx = !metal(p, i - 1, j) && !metal(p, i + 1, j);
    if (ny && !nx) return PROF_Y;
    if (nx && !ny) return PROF_X;
    return PROF_NONE;
}

/* The profile of unknown q's current: that of its cells when they all carry
 * it across the current's direction. */
static int unknown_profile(const sv_em_model *m, int q)
{
    int ci[2], cj[2], sg[2], want = m->basis[q].kind == 1 || (m->basis[q].kind == 2 && m->basis[q].side >= SV_EM_BOTTOM)
                                        ? PROF_X
                                        : PROF_Y;
    int nc = sv_em_div_cells(m, q, ci, cj, sg);
    for (int k = 0; k < nc; k++)
        if (cell_profile(m->prj, ci[k], cj[k]) != want) return PROF_NONE;
    return want;
}

/* ---- the weighted sums ------------------------------------------------------ */
/* Sub-strip s of a profile's transverse extent [t1, t2] (s < 0: the whole). */
static void sub_extent(double t1, double t2, int s, double *a, double *b)
{
    if (s < 0) {
        *a = t1;
        *b = t2;
        return;
    }
    *a = t1 + 0.5 * (t2 - t1) * (1 + sub_edge(s));
    *b = t1 + 0.5 * (t2 - t1) * (1 + sub_edge(s + 1));
}

/* L between unknowns r and c with their profiles (H). */
static double L_profiled(const sv_em_model *m, int r, int c, int pr, int pc, int exact)
{
    sv_em_profile_t a, b;
    sv_em_profile(m, r, &a);
    sv_em_profile(m, c, &b);
    double s = 0, wa = pr ? 1.0 / SUB : 1, wb = pc ? 1.0 / SUB : 1;
    int na = pr ? SUB : 1, nb = pc ? SUB : 1;
    sv_em_profile_t as = a, bs = b;
    for (int u = 0; u < na; u++) {
        sub_extent(a.t1, a.t2, pr ? u : -1, &as.t1, &as.t2);
        for (int v = 0; v < nb; v++) {
            sub_extent(b.t1, b.t2, pc ? v : -1, &bs.t1, &bs.t2);
            s += wa * wb * sv_em_L_profiles(m, &as, &bs, exact);
        }
    }
    return s;
}

/* A cell's rectangle split by its profile: sub-rectangle s (s < 0: whole). */
static void sub_rect(const sv_em_grid *g, int i, int j, int prof, int s, double r[4])
{
    r[0] = i * g->dx;
    r[1] = r[0] + g->dx;
    r[2] = j * g->dy;
    r[3] = r[2] + g->dy;
    if (prof == PROF_Y) sub_extent(r[2], r[3], s, &r[2], &r[3]);
    if (prof == PROF_X) sub_extent(r[0], r[1], s, &r[0], &r[1]);
}

/* P between uniform charges on two rectangles (1/F), all image terms. */
static double P_rects(const sv_em_model *m, const double a[4], const double b[4], int exact)
{
    double h = m->prj->st.h, er = m->prj->st.eps_r, K = (er - 1) / (er + 1), fr = m->opts.far_ratio;
    int terms = sv_em_image_terms(er, m->opts.accuracy);
    double s = 0, w = 1, prev = 0;
    for (int n = 0; n <= terms; n++) {
        double z = 2.0 * n * h;
        double Iz = exact ? sv_em_rect_exact(a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3], z)
                          : sv_em_rect(a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3], z, fr);
        if (n > 0) {
            s += w * (prev - Iz);
            w *= -K;
        }
        prev = Iz;
    }
    double aa = (a[1] - a[0]) * (a[3] - a[2]), ab = (b[1] - b[0]) * (b[3] - b[2]);
    return (1 - K) * s / (4 * SV_EM_PI * SV_EM_EPS0 * aa * ab);
}

/* P between cells a = (0, 0) and b = (di, dj) with profiles pa, pb, less
 * its uniform value. */
static double dP_cells(const sv_em_model *m, int pa, int pb, int di, int dj, int exact)
{
    const sv_em_grid *g = &m->prj->grid;
    double s = 0, ra[4], rb[4], wa = pa ? 1.0 / SUB : 1, wb = pb ? 1.0 / SUB : 1;
    int na = pa ? SUB : 1, nb = pb ? SUB : 1;
    for (int u = 0; u < na; u++) {
        sub_rect(g, 0, 0, pa, pa ? u : -1, ra);
        for (int v = 0; v < nb; v++) {
            sub_rect(g, di, dj, pb, pb ? v : -1, rb);
            s += wa * wb * P_rects(m, ra, rb, exact);
        }
    }
    sub_rect(g, 0, 0, PROF_NONE, -1, ra);
    sub_rect(g, di, dj, PROF_NONE, -1, rb);
    return s - P_rects(m, ra, rb, exact); /* the uniform value by the same rule: their errors cancel */
}

/* ---- the correction of assembled matrices ------------------------------------- */
/* Whether two cells or unknowns at centre offset (X, Y) in metres are near
 * enough for their profiles to count. */
static int within_reach(const sv_em_grid *g, double X, double Y)
{
    double r = EDGE_REACH * fmax(g->dx, g->dy);
    return X * X + Y * Y <= r * r;
}

static void unknown_centre(const sv_em_model *m, int q, double *x, double *y)
{
    sv_em_profile_t p;
    sv_em_profile(m, q, &p);
    double along = p.half == 0 ? p.e : p.e + 0.5 * p.half * p.d, across = 0.5 * (p.t1 + p.t2);
    *x = p.axis == 0 ? along : across;
    *y = p.axis == 0 ? across : along;
}

int sv_em_edge_profiled(const sv_em_model *m)
{
    if (!m->prj->edge_profile) return 0;
    for (int q = 0; q < m->n; q++)
        if (unknown_profile(m, q)) return 1;
    for (int j = 0; j < m->prj->grid.ny; j++)
        for (int i = 0; i < m->prj->grid.nx; i++)
            if (cell_profile(m->prj, i, j)) return 1;
    return 0;
}

int sv_em_model_edge_profiled(const sv_em_model *m) { return m ? sv_em_edge_profiled(m) : 0; }

double sv_em_edge_dL(const sv_em_model *m, int r, int c, int exact)
{
    int pr = unknown_profile(m, r), pc = unknown_profile(m, c);
    if (!pr && !pc) return 0;
    sv_em_profile_t a, b;
    sv_em_profile(m, r, &a);
    sv_em_profile(m, c, &b);
    if (a.axis != b.axis) return 0;
    double xr, yr, xc, yc;
    unknown_centre(m, r, &xr, &yr);
    unknown_centre(m, c, &xc, &yc);
    if (!within_reach(&m->prj->grid, xc - xr, yc - yr)) return 0;
    return L_profiled(m, r, c, pr, pc, exact) - L_profiled(m, r, c, 0, 0, exact);
}

double sv_em_edge_dP(const sv_em_model *m, int ai, int aj, int bi, int bj, int exact)
{
    int pa = cell_profile(m->prj, ai, aj), pb = cell_profile(m->prj, bi, bj);
    const sv_em_grid *g = &m->prj->grid;
    if ((!pa && !pb) || !within_reach(g, (bi - ai) * g->dx, (bj - aj) * g->dy)) return 0;
    return dP_cells(m, pa, pb, bi - ai, bj - aj, exact);
}

/* Memoised changes by profile pair and offset (NaN: not yet computed). */
typedef struct edge_cache {
    int rx, ry;          /* offsets −rx..rx, −ry..ry (cells) */
    size_t per;          /* entries per profile pair */
    double *dp;          /* 9 pairs (pa, pb) × offsets */
    double *dl;          /* 2 axes × 4 pairs (profiled or not) × offsets */
} edge_cache;

static size_t offset_index(const edge_cache *e, int di, int dj)
{
    return (size_t)(di + e->rx) + (size_t)(2 * e->rx + 1) * (size_t)(dj + e->ry);
}

static double cached_dP(const sv_em_model *m, edge_cache *e, int ai, int aj, int bi, int bj)
{
    int pa = cell_profile(m->prj, ai, aj), pb = cell_profile(m->prj, bi, bj), di = bi - ai, dj = bj - aj;
    if ((!pa && !pb) || abs(di) > e->rx || abs(dj) > e->ry) return 0;
    double *v = e->dp + (size_t)(3 * pa + pb) * e->per + offset_index(e, di, dj);
    if (isnan(*v)) *v = sv_em_edge_dP(m, ai, aj, bi, bj, 0);
    return *v;
}

/* ΔL of a pair of rooftops (not port half rooftops) by offset; others directly. */
static double cached_dL(const sv_em_model *m, edge_cache *e, int r, int c)
{
    const sv_em_basis *a = &m->basis[r], *b = &m->basis[c];
    if (a->kind == 2 || b->kind == 2 || a->kind != b->kind) return sv_em_edge_dL(m, r, c, 0);
    int di = b->i - a->i, dj = b->j - a->j;
    if (abs(di) > e->rx || abs(dj) > e->ry) return 0;
    int key = 2 * (unknown_profile(m, r) != 0) + (unknown_profile(m, c) != 0);
    double *v = e->dl + (size_t)(4 * a->kind + key) * e->per + offset_index(e, di, dj);
    if (isnan(*v)) *v = sv_em_edge_dL(m, r, c, 0);
    return *v;
}

/* Unknowns with divergence on a cell: x and y rooftops on either side and
 * port half rooftops (index −1: none), with their signs. */
typedef struct cell_map {
    int nx, ny;
    int *xr, *yr, *pr; /* nx·ny each; pr: two per cell */
} cell_map;

static int cell_unknowns(const cell_map *cm, int i, int j, int q[6], int sg[6])
{
    int k = 0, nx = cm->nx;
    if (i < 0 || j < 0 || i >= cm->nx || j >= cm->ny) return 0;
    size_t c = (size_t)i + (size_t)nx * j;
    if (cm->xr[c] >= 0) q[k] = cm->xr[c], sg[k++] = 1;
    if (i > 0 && cm->xr[c - 1] >= 0) q[k] = cm->xr[c - 1], sg[k++] = -1;
    if (cm->yr[c] >= 0) q[k] = cm->yr[c], sg[k++] = 1;
    if (j > 0 && cm->yr[c - nx] >= 0) q[k] = cm->yr[c - nx], sg[k++] = -1;
    for (int t = 0; t < 2; t++)
        if (cm->pr[2 * c + t] >= 0) q[k] = cm->pr[2 * c + t], sg[k++] = -1;
    return k;
}

/* a[(r, c)] += v in the lower triangle (r, c in either order). */
static void add_lower(double *a, sv_em_colbase_fn colbase, void *user, int r, int c, double v)
{
    if (r < c) {
        int t = r;
        r = c;
        c = t;
    }
    a[colbase(user, c) + (size_t)(r - c)] += v;
}

/* Ψ += Dᵀ·ΔP·D over the ordered cell pairs (a, b) with a change. */
static void correct_psi(const sv_em_model *m, edge_cache *e, const cell_map *cm, double *Psi,
                        sv_em_colbase_fn colbase, void *user)
{
    const sv_em_grid *g = &m->prj->grid;
    for (int aj = 0; aj < g->ny; aj++)
        for (int ai = 0; ai < g->nx; ai++) {
            if (!cell_profile(m->prj, ai, aj)) continue;
            int qa[6], sa[6], na = cell_unknowns(cm, ai, aj, qa, sa);
            for (int bj = aj - e->ry; bj <= aj + e->ry; bj++)
                for (int bi = ai - e->rx; bi <= ai + e->rx; bi++) {
                    if (!metal(m->prj, bi, bj)) continue;
                    double dp = cached_dP(m, e, ai, aj, bi, bj);
                    if (dp == 0) continue;
                    int qb[6], sb[6], nb = cell_unknowns(cm, bi, bj, qb, sb);
                    /* (a, b), and (b, a) when b is not profiled (else it comes as its own a) */
                    int orders = cell_profile(m->prj, bi, bj) ? 1 : 2;
                    for (int o = 0; o < orders; o++)
                        for (int u = 0; u < na; u++)
                            for (int v = 0; v < nb; v++) {
                                int r = o ? qb[v] : qa[u], c = o ? qa[u] : qb[v];
                                if (r >= c) Psi[colbase(user, c) + (size_t)(r - c)] += sa[u] * sb[v] * dp;
                            }
                }
        }
}

/* L[(r, c)] += ΔL once per unordered pair with a profiled member. */
static void correct_l(const sv_em_model *m, edge_cache *e, double *L, sv_em_colbase_fn colbase, void *user)
{
    for (int r = 0; r < m->n; r++) {
        if (!unknown_profile(m, r)) continue;
        for (int c = 0; c < m->n; c++) {
            if (unknown_profile(m, c) && c > r) continue; /* that pair comes with r = c */
            double d = cached_dL(m, e, r, c);
            if (d != 0) add_lower(L, colbase, user, r, c, d);
        }
    }
}

sv_status sv_em_edge_correct(sv_ctx *ctx, const sv_em_model *m, double *L, double *Psi, sv_em_colbase_fn colbase,
                             void *user)
{
    if (!sv_em_edge_profiled(m)) return SV_OK;
    const sv_em_grid *g = &m->prj->grid;
    double reach = EDGE_REACH * fmax(g->dx, g->dy);
    edge_cache e = {.rx = (int)ceil(reach / g->dx), .ry = (int)ceil(reach / g->dy)};
    e.per = (size_t)(2 * e.rx + 1) * (size_t)(2 * e.ry + 1);
    size_t cells = (size_t)g->nx * g->ny;
    cell_map cm = {.nx = g->nx, .ny = g->ny};
    e.dp = sv_alloc(ctx, sizeof(double) * 17 * e.per, "edge profile changes");
    cm.xr = sv_alloc(ctx, sizeof(int) * 4 * cells, "edge profile cell map");
    if (!e.dp || !cm.xr) {
        sv_status st = sv_last_status();
        sv_free(ctx, e.dp);
        sv_free(ctx, cm.xr);
        return st;
    }
    e.dl = e.dp + 9 * e.per;
    for (size_t k = 0; k < 17 * e.per; k++) e.dp[k] = NAN;
    cm.yr = cm.xr + cells;
    cm.pr = cm.yr + cells;
    for (size_t k = 0; k < 4 * cells; k++) cm.xr[k] = -1;
    for (int q = 0; q < m->n; q++) {
        const sv_em_basis *b = &m->basis[q];
        size_t c = (size_t)b->i + (size_t)g->nx * b->j;
        if (b->kind == 0) cm.xr[c] = q;
        else if (b->kind == 1) cm.yr[c] = q;
        else cm.pr[2 * c + (cm.pr[2 * c] >= 0)] = q;
    }
    correct_l(m, &e, L, colbase, user);
    correct_psi(m, &e, &cm, Psi, colbase, user);
    sv_free(ctx, e.dp);
    sv_free(ctx, cm.xr);
    return SV_OK;
}
