/* Edge profiles. Strips one cell wide: their current and charge follow
 * the edge-singular transverse distribution of an isolated strip,
 * p(t) = 1/(π·√(1 − t²)) over the width (t ∈ [−1, 1]), instead of the
 * uniform one of a cell (project switch "edge_profile"; docs/em.md,
 * "Strips one cell wide"). The edge cells of wider strips: a one-sided
 * density singular at the strip's edge, d^(−1/2) on a sheet and d^(−1/3)
 * on thick metal (switch "edge_cells"; docs/em.md, "Edge cells of wider
 * strips").
 *
 * A uniform cell across a narrow strip has the self-"radius" w·e^(−3/2) =
 * 0.223·w instead of w/4: its L is a few per cent high and its C low (Pozar's
 * 120 Ω sections one cell across: L +3 %, C −3.4 % against Hammerstad–
 * Jensen); uniform edge cells of a strip 4 cells wide make its Z0 +2.7 %.
 * A profile is carried by SUB sub-strips across the cell, each with the
 * weight 1/SUB of p (and extrapolated from SUB/2: below); L and P between
 * two unknowns or cells are the weighted sums of the sub-strips' closed
 * forms.
 *
 * Only pairs within EDGE_REACH cell sides change: beyond, a profile acts
 * through its low moments alone, on entries that are small (docs/em.md has
 * what the reach and the sub-strips cost and give). The changes depend on
 * the integer offset and the two profiles alone, so they are tabulated
 * once, like the assembly's tables, and added to the assembled L and
 * Ψ = Dᵀ·P·D. */
#include <math.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "em_internal.h"
#include "geom.h"

/* Sub-strips across a profiled cell: the sums' error falls like 1/SUB²
 * (measured from 4 to 16, docs/em.md), so the change is extrapolated from
 * SUB and SUB/2 sub-strips, (4·Δ(SUB) − Δ(SUB/2))/3. */
#define SUB 8
/* Pairs farther apart (in the larger cell side) keep the uniform values.
 * Enough for the narrow strips' symmetric profile; the edge cells'
 * one-sided one acts farther, like a dipole (docs/em.md, "Edge cells of
 * wider strips": a line's Z0 moves by up to 1 % from reach 3 to 10). */
#define EDGE_REACH 3.0

/* Profiles: uniform; edge-singular across y (a strip along x) at both
 * sides (a strip one cell wide), or at its low or high side alone (the
 * edge cell of a wider strip); the same across x. */
enum { PROF_NONE, PROF_Y, PROF_X, PROF_Y_LO, PROF_Y_HI, PROF_X_LO, PROF_X_HI, PROF_COUNT };
enum { SIDE_NONE, SIDE_BOTH, SIDE_LO, SIDE_HI, SIDE_COUNT };

static int across_x(int prof) { return prof == PROF_X || prof == PROF_X_LO || prof == PROF_X_HI; }

/* Where a profile is singular on its axis: SIDE_*. */
static int prof_side(int prof)
{
    static const int side[PROF_COUNT] = {SIDE_NONE, SIDE_BOTH, SIDE_BOTH, SIDE_LO, SIDE_HI, SIDE_LO, SIDE_HI};
    return side[prof];
}

/* The sub-strips' boundaries t_s on [−1, 1], each sub-strip with the same
 * weight 1/SUB of the profile (so they are narrow where it is large). Both
 * sides: p = 1/(π·√(1 − t²)), t_s = −cos(π·s/SUB). One side, singular at
 * t = −1 (and its mirror image): the density near a conductor's edge,
 * ∝ d^(−1/2) at the edge of a sheet and d^(−1/3) at the right-angled
 * corner of thick metal (Meixner's edge condition: d^(π/α − 1) beside an
 * exterior angle α, 2π or 3π/2), so with d = (1 + t)/2 and a = 1/2 or 1/3
 * the weight up to t is d^(1 − a) and t_s = 2·(s/SUB)^(1/(1 − a)) − 1. */
static double sub_edge(int prof, int thick, int s)
{
    double u = (double)s / SUB, power = thick ? 1.5 : 2.0;
    switch (prof_side(prof)) {
    case SIDE_LO: return 2 * pow(u, power) - 1;
    case SIDE_HI: return 1 - 2 * pow(1 - u, power);
    default: return -cos(SV_EM_PI * u);
    }
}

static int metal(const sv_em_project *p, int i, int j) { return sv_em_project_metal(p, i, j); }

/* The profile of cell (i, j) (PROF_*). One cell wide ("edge_profile"):
 * across y when both its y neighbours are empty and an x neighbour is
 * metal (a strip along x), across x likewise. An edge cell of a wider
 * strip ("edge_cells"): across y at the side of its one empty y neighbour
 * when both x neighbours are metal (a straight edge along x, no corner),
 * across x likewise. */
static int cell_profile(const sv_em_project *p, int i, int j)
{
    if (!metal(p, i, j)) return PROF_NONE;
    int lo_y = !metal(p, i, j - 1), hi_y = !metal(p, i, j + 1);
    int lo_x = !metal(p, i - 1, j), hi_x = !metal(p, i + 1, j);
    if (p->edge_profile) {
        if (lo_y && hi_y && !(lo_x && hi_x)) return PROF_Y;
        if (lo_x && hi_x && !(lo_y && hi_y)) return PROF_X;
    }
    if (p->edge_cells) {
        if (lo_y != hi_y && !lo_x && !hi_x) return lo_y ? PROF_Y_LO : PROF_Y_HI;
        if (lo_x != hi_x && !lo_y && !hi_y) return lo_x ? PROF_X_LO : PROF_X_HI;
    }
    return PROF_NONE;
}

/* The profile of unknown q's current: that of its cells when they all carry
 * it across the current's direction. */
static int unknown_profile(const sv_em_model *m, int q)
{
    int ci[2], cj[2], sg[2], along_y = sv_em_basis_axis(&m->basis[q]);
    int nc = sv_em_div_cells(m, q, ci, cj, sg), prof = nc ? cell_profile(m->prj, ci[0], cj[0]) : PROF_NONE;
    for (int k = 1; k < nc; k++)
        if (cell_profile(m->prj, ci[k], cj[k]) != prof) return PROF_NONE;
    return prof && across_x(prof) == along_y ? prof : PROF_NONE;
}

/* ---- the weighted sums ------------------------------------------------------ */
/* Boundary s of a profile's sub-strips across [t1, t2]. */
static double sub_boundary(double t1, double t2, int prof, int thick, int s)
{
    return t1 + 0.5 * (t2 - t1) * (1 + sub_edge(prof, thick, s));
}

/* Sub-strip s of a profile's transverse extent [t1, t2] (s < 0: the whole). */
static void sub_extent(double t1, double t2, int prof, int thick, int s, double *a, double *b)
{
    if (s < 0) {
        *a = t1;
        *b = t2;
        return;
    }
    *a = sub_boundary(t1, t2, prof, thick, s);
    *b = sub_boundary(t1, t2, prof, thick, s + 1);
}

/* The boundaries of a profile's sub-strips across [t1, t2] (sub_extent's):
 * SUB + 1 of them, or without the profile the extent's two. */
static int strip_edges(double t1, double t2, int prof, int thick, double *t)
{
    if (!prof) {
        t[0] = t1;
        t[1] = t2;
        return 1;
    }
    for (int s = 0; s <= SUB; s++) t[s] = sub_boundary(t1, t2, prof, thick, s);
    return SUB;
}

/* The weighted sums over the pairs of SUB sub-strips (each of weight 1/SUB;
 * an unprofiled side is one strip of weight 1) of the pair values v (na ×
 * nb, per unit density, strips' boundaries ta, tb), and in *half the same
 * with SUB/2 sub-strips: a pair of neighbours makes one, whose value is
 * their width-weighted mean (the integrals add), so no closed form is
 * evaluated twice. */
static double strip_sums(const double *v, int na, int nb, const double *ta, const double *tb, double *half)
{
    double wa = na > 1 ? 1.0 / na : 1, wb = nb > 1 ? 1.0 / nb : 1, fine = 0;
    for (int u = 0; u < na; u++)
        for (int q = 0; q < nb; q++) fine += wa * wb * v[u * nb + q];
    int ca = na > 1 ? 2 : 1, cb = nb > 1 ? 2 : 1; /* fine strips per coarse one */
    *half = 0;
    for (int U = 0; U < na; U += ca)
        for (int Q = 0; Q < nb; Q += cb) {
            double num = 0;
            for (int u = U; u < U + ca; u++)
                for (int q = Q; q < Q + cb; q++) num += (ta[u + 1] - ta[u]) * (tb[q + 1] - tb[q]) * v[u * nb + q];
            *half += ca * wa * cb * wb * num / ((ta[U + ca] - ta[U]) * (tb[Q + cb] - tb[Q]));
        }
    return fine;
}

/* L between unknowns r and c with their profiles (H): the weighted sums
 * over their sub-strips' pairs, SUB of them and (*half) SUB/2, with the
 * edge rule where a port half rooftop makes the quadrature nested. The
 * coordinates are relative to r's cell, so that the value is the same bits
 * for every pair of that shape wherever it lies (the memo shares it). */
static double L_profiled(const sv_em_model *m, int r, int c, int pr, int pc, int exact, double *half)
{
    _Static_assert(SUB <= SV_EM_STRIPS_MAX && SUB % 2 == 0, "sv_em_L_strips takes SUB sub-strips, SUB even");
    sv_em_profile_t a, b;
    int i0 = m->basis[r].i, j0 = m->basis[r].j;
    sv_em_profile_from(m, r, i0, j0, &a);
    sv_em_profile_from(m, c, i0, j0, &b);
    double ta[SUB + 1], tb[SUB + 1], l[SUB * SUB];
    int thick = m->prj->st.thick_metal;
    int na = strip_edges(a.t1, a.t2, pr, thick, ta), nb = strip_edges(b.t1, b.t2, pc, thick, tb);
    sv_em_L_strips_rule(m, &m->gl_edge, &a, ta, na, &b, tb, nb, exact, l);
    return strip_sums(l, na, nb, ta, tb, half);
}

/* A cell's rectangle split by its profile: sub-rectangle s (s < 0: whole). */
static void sub_rect(const sv_em_project *p, int i, int j, int prof, int s, double r[4])
{
    const sv_em_grid *g = &p->grid;
    int thick = p->st.thick_metal;
    r[0] = i * g->dx;
    r[1] = r[0] + g->dx;
    r[2] = j * g->dy;
    r[3] = r[2] + g->dy;
    if (prof && !across_x(prof)) sub_extent(r[2], r[3], prof, thick, s, &r[2], &r[3]);
    if (across_x(prof)) sub_extent(r[0], r[1], prof, thick, s, &r[0], &r[1]);
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
 * its uniform value: with SUB sub-strips, and (*half) SUB/2. */
static double dP_cells(const sv_em_model *m, int pa, int pb, int di, int dj, int exact, double *half)
{
    double ra[4], rb[4], ta[SUB + 1], tb[SUB + 1], v[SUB * SUB];
    int na = pa ? SUB : 1, nb = pb ? SUB : 1;
    for (int u = 0; u < na; u++) {
        sub_rect(m->prj, 0, 0, pa, pa ? u : -1, ra);
        ta[u] = across_x(pa) ? ra[0] : ra[2], ta[u + 1] = across_x(pa) ? ra[1] : ra[3];
        for (int q = 0; q < nb; q++) {
            sub_rect(m->prj, di, dj, pb, pb ? q : -1, rb);
            tb[q] = across_x(pb) ? rb[0] : rb[2], tb[q + 1] = across_x(pb) ? rb[1] : rb[3];
            v[u * nb + q] = P_rects(m, ra, rb, exact);
        }
    }
    double fine = strip_sums(v, na, nb, ta, tb, half);
    sub_rect(m->prj, 0, 0, PROF_NONE, -1, ra);
    sub_rect(m->prj, di, dj, PROF_NONE, -1, rb);
    double uniform = P_rects(m, ra, rb, exact); /* by the same rule: their errors cancel */
    *half -= uniform;
    return fine - uniform;
}

/* The sub-strip sums' limit from SUB and SUB/2 (their error ∝ 1/SUB²). */
static double extrapolated(double d_sub, double d_half) { return (4 * d_sub - d_half) / 3; }

/* ---- the correction of assembled matrices ------------------------------------- */
/* Whether two cells or unknowns at centre offset (X, Y) in metres are near
 * enough for their profiles to count. Offsets of exactly the reach (a whole
 * number of cells) count, whatever the rounding of the centres: the memo
 * keeps one value per cell offset, which every pair at that offset must
 * share, wherever it lies on the grid. */
#define EDGE_REACH_ROUNDING 1e-9
static int within_reach(const sv_em_grid *g, double X, double Y)
{
    double r = EDGE_REACH * fmax(g->dx, g->dy);
    return X * X + Y * Y <= r * r * (1 + EDGE_REACH_ROUNDING);
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
    if (!m->prj->edge_profile && !m->prj->edge_cells) return 0;
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
    double half, none, uniform = L_profiled(m, r, c, 0, 0, exact, &none);
    double full = L_profiled(m, r, c, pr, pc, exact, &half);
    return extrapolated(full - uniform, half - uniform);
}

/* A cell pair (profiles pa, pb, offset di, dj from a to b) as seen from
 * its canonical end. P is symmetric, so a pair is computed, and memoised,
 * from one end whichever way it is asked for: ΔP(a, b) and ΔP(b, a) are
 * the same bits, computed once, and Ψ's change is exactly Dᵀ·ΔP·D (loop
 * currents stay in its null space). */
static void canonical_pair(int *pa, int *pb, int *di, int *dj)
{
    if (*pa > *pb || (*pa == *pb && (*dj < 0 || (*dj == 0 && *di < 0)))) {
        int t = *pa;
        *pa = *pb, *pb = t, *di = -*di, *dj = -*dj;
    }
}

double sv_em_edge_dP(const sv_em_model *m, int ai, int aj, int bi, int bj, int exact)
{
    int pa = cell_profile(m->prj, ai, aj), pb = cell_profile(m->prj, bi, bj);
    const sv_em_grid *g = &m->prj->grid;
    int di = bi - ai, dj = bj - aj;
    if ((!pa && !pb) || !within_reach(g, di * g->dx, dj * g->dy)) return 0;
    canonical_pair(&pa, &pb, &di, &dj);
    double half, full = dP_cells(m, pa, pb, di, dj, exact, &half);
    return extrapolated(full, half);
}

/* Memoised changes by pair and offset (NaN: not yet computed), in one
 * allocation. They depend on the cell size, the stack-up and the options
 * alone, so models of one cell share them (sv_em_model.memo): the port
 * calibration's standards use their circuit's. ΔP and ΔL are computed relative to the
 * pair's first cell (dP_cells, L_profiled; ΔP's pairs from their canonical
 * end, canonical_pair, which keys its entry too): an entry is the same bits for
 * every pair of its classes, profiles and offset, wherever the pair lies
 * and whichever model made it. */
#define NONE (-1)
#define DP_PAIRS (PROF_COUNT * PROF_COUNT)
#define DL_KEYS (2 * 9 * SIDE_COUNT * SIDE_COUNT)
struct sv_em_edge_memo {
    atomic_flag in_use;  /* set while an assembly fills it */
    int rx, ry;          /* ΔP and rooftops' ΔL: offsets −rx..rx, −ry..ry (cells) */
    size_t per, per_l;   /* entries per pair: of dp; of dl (offsets one cell farther) */
    double *dp;          /* DP_PAIRS profile pairs (pa, pb) × offsets */
    double *dl;          /* per axis, 3 × 3 class pairs (classes: unknown_class) × SIDE_COUNT² × offsets */
    int *planned;        /* per dl entry: the slot of the plan computing it while one does, else NONE */
    double data[];
};

/* The memo's reach in cells and its entries (dp's, dl's) for a grid. */
static void memo_shape(const sv_em_grid *g, int *rx, int *ry, size_t *per, size_t *per_l)
{
    double reach = EDGE_REACH * fmax(g->dx, g->dy);
    *rx = (int)ceil(reach / g->dx);
    *ry = (int)ceil(reach / g->dy);
    *per = (size_t)(2 * *rx + 1) * (size_t)(2 * *ry + 1);
    *per_l = (size_t)(2 * *rx + 3) * (size_t)(2 * *ry + 3);
}

size_t sv_em_edge_memo_bytes(const sv_em_model *m)
{
    int rx, ry;
    size_t per, per_l;
    memo_shape(&m->prj->grid, &rx, &ry, &per, &per_l);
    return sizeof(sv_em_edge_memo) + sizeof(double) * (DP_PAIRS * per + DL_KEYS * per_l) + sizeof(int) * DL_KEYS * per_l;
}

/* Every change unknown, the arrays in their places in the one allocation. */
static void memo_init(const sv_em_model *m, sv_em_edge_memo *e)
{
    atomic_flag_clear(&e->in_use);
    memo_shape(&m->prj->grid, &e->rx, &e->ry, &e->per, &e->per_l);
    e->dp = e->data;
    e->dl = e->dp + DP_PAIRS * e->per;
    e->planned = (int *)(e->dl + DL_KEYS * e->per_l);
    for (size_t k = 0; k < DP_PAIRS * e->per + DL_KEYS * e->per_l; k++) e->data[k] = NAN;
    for (size_t k = 0; k < DL_KEYS * e->per_l; k++) e->planned[k] = NONE;
}

static size_t offset_index(const sv_em_edge_memo *e, int di, int dj)
{
    return (size_t)(di + e->rx) + (size_t)(2 * e->rx + 1) * (size_t)(dj + e->ry);
}

static size_t offset_index_l(const sv_em_edge_memo *e, int di, int dj)
{
    return (size_t)(di + e->rx + 1) + (size_t)(2 * e->rx + 3) * (size_t)(dj + e->ry + 1);
}

/* ΔP's memo entry of cells a and b (their canonical pair's, shared by (a, b)
 * and (b, a)), or NULL where there is no change. */
static double *dp_entry(const sv_em_model *m, sv_em_edge_memo *e, int ai, int aj, int bi, int bj)
{
    int pa = cell_profile(m->prj, ai, aj), pb = cell_profile(m->prj, bi, bj), di = bi - ai, dj = bj - aj;
    if ((!pa && !pb) || abs(di) > e->rx || abs(dj) > e->ry) return NULL;
    canonical_pair(&pa, &pb, &di, &dj);
    return e->dp + (size_t)(PROF_COUNT * pa + pb) * e->per + offset_index(e, di, dj);
}

static double cached_dP(const sv_em_model *m, sv_em_edge_memo *e, int ai, int aj, int bi, int bj)
{
    double *v = dp_entry(m, e, ai, aj, bi, bj);
    if (!v) return 0;
    if (isnan(*v)) *v = sv_em_edge_dP(m, ai, aj, bi, bj, 0);
    return *v;
}

/* An unknown's current axis and its class on that axis: 0 a rooftop, 1 a
 * port half rooftop from the low side (left, bottom), 2 from the high one. */
static int unknown_class(const sv_em_basis *b, int *axis)
{
    *axis = sv_em_basis_axis(b);
    if (sv_em_is_rooftop(b->kind)) return 0;
    return 1 + (b->side == SV_EM_RIGHT || b->side == SV_EM_TOP);
}

/* The shares of the changes' progress (rough costs): ΔL's plan (every pair
 * with a profiled member) and its closed forms, ΔP's plan and closed
 * forms, Ψ's sums. */
#define SHARE_DL_PLAN 1.0
#define SHARE_DL 4.0
#define SHARE_DP_PLAN 0.5
#define SHARE_DP 2.0
#define SHARE_PSI 0.5

/* ---- ΔL on the thread team ---------------------------------------------------
 * correct_l's pairs are planned serially, in its order (the first pair of
 * each memo entry computes it, the others take its slot), the distinct
 * pairs are computed on the team, and the changes are added in correct_l's
 * order: the bits of one thread. */

/* A ΔL: known (a memo entry's value) or to be computed for the pair (r, c). */
typedef struct dl_slot {
    int r, c, todo;
    double v;
} dl_slot;

/* A pair of correct_l's with a change, and its slot. */
typedef struct dl_use {
    int r, c, slot;
} dl_use;

/* The plan: its slots and uses, the slots to compute (the costliest
 * first), the unknowns' profiles. */
typedef struct dl_plan {
    dl_slot *slot;
    dl_use *use;
    int nslot, nuse, ntodo, *todo;
    int *prof;
} dl_plan;

static int slot_add(dl_plan *p, int r, int c, int todo, double v)
{
    p->slot[p->nslot] = (dl_slot){.r = r, .c = c, .todo = todo, .v = v};
    return p->nslot++;
}

/* ΔL of (r, c), memo entry k: its value when known, else the slot that
 * computes it (this pair's, when it is the entry's first). */
static int memo_dl(sv_em_edge_memo *e, dl_plan *p, size_t k, int r, int c)
{
    if (!isnan(e->dl[k])) return slot_add(p, r, c, 0, e->dl[k]);
    if (e->planned[k] == NONE) e->planned[k] = slot_add(p, r, c, 1, 0);
    return e->planned[k];
}

/* ΔL of a pair by classes, profiles and cell offset: rooftops within the
 * reach, pairs with a port half rooftop one cell farther (its centre is
 * its cell's), the rest directly. NONE: no change. */
static int planned_dL(const sv_em_model *m, sv_em_edge_memo *e, dl_plan *p, int r, int c)
{
    const sv_em_basis *a = &m->basis[r], *b = &m->basis[c];
    int xa, xb, ca = unknown_class(a, &xa), cb = unknown_class(b, &xb);
    if (xa != xb) return NONE; /* currents at right angles: no change (sv_em_edge_dL) */
    int di = b->i - a->i, dj = b->j - a->j, port = ca || cb;
    if (abs(di) > e->rx + port || abs(dj) > e->ry + port) return port ? slot_add(p, r, c, 1, 0) : NONE;
    int key = SIDE_COUNT * prof_side(p->prof[r]) + prof_side(p->prof[c]);
    size_t off = offset_index_l(e, di, dj),
           k = (size_t)(((3 * xa + ca) * 3 + cb) * SIDE_COUNT * SIDE_COUNT + key) * e->per_l + off;
    return memo_dl(e, p, k, r, c);
}

/* Whether the pair (r, c) has a change for planned_dL (by their geometry
 * alone: the memo's state does not enter). */
static int has_change(const sv_em_model *m, const sv_em_edge_memo *e, int r, int c)
{
    const sv_em_basis *a = &m->basis[r], *b = &m->basis[c];
    int xa, xb, ca = unknown_class(a, &xa), cb = unknown_class(b, &xb);
    return xa == xb && (ca || cb || (abs(b->i - a->i) <= e->rx && abs(b->j - a->j) <= e->ry));
}

/* Whether (r, c) is one of correct_l's pairs, every unordered pair with a
 * profiled member once: r profiled, and c not or not after it (else that
 * pair comes with r = c). */
static int in_plan(const dl_plan *p, int r, int c) { return p->prof[r] && (!p->prof[c] || c <= r); }

static void plan_free(sv_ctx *ctx, dl_plan *p)
{
    sv_free(ctx, p->slot);
    sv_free(ctx, p->use);
    sv_free(ctx, p->todo);
    sv_free(ctx, p->prof);
}

/* correct_l's pairs with a change, in its order (row by row, once per
 * unordered pair with a profiled member), with their slots: counted, then
 * planned (marking the memo entries they compute, memo_unplan). */
static sv_status plan_l(sv_ctx *ctx, const sv_em_model *m, sv_em_edge_memo *e, dl_plan *p)
{
    *p = (dl_plan){.prof = sv_alloc(ctx, sizeof(int) * (size_t)(m->n ? m->n : 1), "edge profile plan")};
    if (!p->prof) return sv_last_status();
    for (int q = 0; q < m->n; q++) p->prof[q] = unknown_profile(m, q);
    sv_progress_loop loop = sv_progress_loop_begin(ctx, "edge profiles", 2.0 * m->n);
    size_t most = 0;
    for (int r = 0; r < m->n && !sv_progress_loop_at(&loop, r); r++)
        for (int c = 0; c < m->n && p->prof[r]; c++) most += in_plan(p, r, c) && has_change(m, e, r, c);
    if (most > INT_MAX) return sv_error(SV_ERR_NOMEM, "edge profile: %zu pairs of unknowns to correct", most);
    size_t len = most ? most : 1;
    p->slot = sv_alloc(ctx, sizeof(dl_slot) * len, "edge profile plan");
    p->use = sv_alloc(ctx, sizeof(dl_use) * len, "edge profile plan");
    p->todo = sv_alloc(ctx, sizeof(int) * len, "edge profile plan");
    if (!p->slot || !p->use || !p->todo) return sv_last_status();
    for (int r = 0; r < m->n && !sv_progress_loop_at(&loop, m->n + r); r++)
        for (int c = 0; c < m->n && p->prof[r]; c++) {
            int s = in_plan(p, r, c) ? planned_dL(m, e, p, r, c) : NONE;
            if (s != NONE) p->use[p->nuse++] = (dl_use){.r = r, .c = c, .slot = s};
        }
    sv_status st = sv_progress_loop_end(&loop);
    if (st) return st;
    /* pairs with a port half rooftop cost the most (its quadrature along
     * the sub-strips): they go first, so that no long one starts last */
    for (int port = 1; port >= 0; port--)
        for (int q = 0; q < p->nslot; q++) {
            const dl_slot *sl = &p->slot[q];
            int with_port = !sv_em_is_rooftop(m->basis[sl->r].kind) || !sv_em_is_rooftop(m->basis[sl->c].kind);
            if (sl->todo && with_port == port) p->todo[p->ntodo++] = q;
        }
    return SV_OK;
}

/* The planned pairs' closed forms, each on its own (in any order), then
 * kept in the memo entries they fill (none when stopped). */
static sv_status compute_l(sv_ctx *ctx, const sv_em_model *m, sv_em_edge_memo *e, dl_plan *p)
{
    sv_progress_loop loop = sv_progress_loop_begin(ctx, "edge profiles", p->ntodo);
#pragma omp parallel for schedule(dynamic, 1) num_threads(sv_threads_team())
    for (int q = 0; q < p->ntodo; q++) {
        if (sv_progress_loop_at(&loop, q)) continue;
        dl_slot *sl = &p->slot[p->todo[q]];
        sl->v = sv_em_edge_dL(m, sl->r, sl->c, 0);
    }
    sv_status st = sv_progress_loop_end(&loop);
    if (st) return st;
    for (size_t k = 0; k < DL_KEYS * e->per_l; k++)
        if (e->planned[k] != NONE) {
            e->dl[k] = p->slot[e->planned[k]].v;
            e->planned[k] = NONE;
        }
    return SV_OK;
}

/* The memo as it was before a plan that was not computed: no entry marked. */
static void memo_unplan(sv_em_edge_memo *e)
{
    for (size_t k = 0; k < DL_KEYS * e->per_l; k++) e->planned[k] = NONE;
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

/* The ΔP memo entries an assembly lacks, each with the first cell pair
 * that asks for it (an entry depends on its profiles and offset alone). */
typedef struct dp_plan {
    size_t n, *entry;
    int (*cells)[4];       /* ai, aj, bi, bj */
    unsigned char *taken;  /* per dp entry */
} dp_plan;

/* Ψ += Dᵀ·ΔP·D over the ordered cell pairs (a, b) with a change; with a
 * plan, only the entries these pairs lack are listed in it. */
static sv_status correct_psi(sv_ctx *ctx, const sv_em_model *m, sv_em_edge_memo *e, const cell_map *cm, dp_plan *plan,
                             double *Psi, sv_em_colbase_fn colbase, void *user)
{
    const sv_em_grid *g = &m->prj->grid;
    sv_progress_loop loop = sv_progress_loop_begin(ctx, "edge profiles", g->ny);
    for (int aj = 0; aj < g->ny && !sv_progress_loop_at(&loop, aj); aj++)
        for (int ai = 0; ai < g->nx; ai++) {
            if (!cell_profile(m->prj, ai, aj)) continue;
            int qa[6], sa[6], na = cell_unknowns(cm, ai, aj, qa, sa);
            for (int bj = aj - e->ry; bj <= aj + e->ry; bj++)
                for (int bi = ai - e->rx; bi <= ai + e->rx; bi++) {
                    if (!metal(m->prj, bi, bj)) continue;
                    if (plan) {
                        double *v = dp_entry(m, e, ai, aj, bi, bj);
                        size_t k = v ? (size_t)(v - e->dp) : 0;
                        if (!v || !isnan(*v) || plan->taken[k]) continue;
                        plan->taken[k] = 1;
                        plan->entry[plan->n] = k;
                        memcpy(plan->cells[plan->n++], (int[4]){ai, aj, bi, bj}, sizeof(int[4]));
                        continue;
                    }
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
    return sv_progress_loop_end(&loop);
}

/* The ΔP entries correct_psi would compute as it goes, computed first on
 * the team for the same cell pairs (the values it would find), so that
 * its sums, serial, find them all. */
static sv_status fill_dp(sv_ctx *ctx, const sv_em_model *m, sv_em_edge_memo *e, const cell_map *cm)
{
    size_t nd = DP_PAIRS * e->per;
    dp_plan p = {.entry = sv_alloc(ctx, sizeof(size_t) * nd, "edge profile plan"),
                 .cells = sv_alloc(ctx, sizeof(int[4]) * nd, "edge profile plan"),
                 .taken = sv_calloc(ctx, nd, 1, "edge profile plan")};
    sv_status st = p.entry && p.cells && p.taken ? SV_OK : sv_last_status();
    sv_em_parts parts = sv_em_parts_begin(ctx, SHARE_DP_PLAN + SHARE_DP);
    sv_em_part(&parts, SHARE_DP_PLAN);
    if (!st) st = correct_psi(ctx, m, e, cm, &p, NULL, NULL, NULL);
    sv_em_part(&parts, SHARE_DP);
    if (!st) {
        long n = (long)p.n;
        sv_progress_loop loop = sv_progress_loop_begin(ctx, "edge profiles", n);
        /* an entry stopped before is left unknown (NaN): the memo stays whole */
#pragma omp parallel for schedule(dynamic, 1) num_threads(sv_threads_team())
        for (long q = 0; q < n; q++) {
            if (sv_progress_loop_at(&loop, q)) continue;
            e->dp[p.entry[q]] = sv_em_edge_dP(m, p.cells[q][0], p.cells[q][1], p.cells[q][2], p.cells[q][3], 0);
        }
        st = sv_progress_loop_end(&loop);
    }
    sv_em_parts_end(&parts);
    sv_free(ctx, p.entry);
    sv_free(ctx, p.cells);
    sv_free(ctx, p.taken);
    return st;
}

/* L[(r, c)] += ΔL once per unordered pair with a profiled member: planned,
 * computed on the team, added in the plan's order. */
static sv_status correct_l(sv_ctx *ctx, const sv_em_model *m, sv_em_edge_memo *e, double *L,
                           sv_em_colbase_fn colbase, void *user)
{
    dl_plan p;
    sv_em_parts parts = sv_em_parts_begin(ctx, SHARE_DL_PLAN + SHARE_DL);
    sv_em_part(&parts, SHARE_DL_PLAN);
    sv_status st = plan_l(ctx, m, e, &p);
    sv_em_part(&parts, SHARE_DL);
    if (!st) st = compute_l(ctx, m, e, &p);
    sv_em_parts_end(&parts);
    for (int u = 0; u < p.nuse && !st; u++) {
        double d = p.slot[p.use[u].slot].v;
        if (d != 0) add_lower(L, colbase, user, p.use[u].r, p.use[u].c, d);
    }
    if (st) memo_unplan(e);
    plan_free(ctx, &p);
    return st;
}

sv_status sv_em_edge_memo_create(sv_ctx *ctx, const sv_em_model *m, sv_em_edge_memo **out)
{
    *out = sv_alloc(ctx, sv_em_edge_memo_bytes(m), "edge profile changes");
    if (!*out) return sv_last_status();
    memo_init(m, *out);
    return SV_OK;
}

void sv_em_edge_memo_destroy(sv_ctx *ctx, sv_em_edge_memo *e) { sv_free(ctx, e); }

/* The memo an assembly of m fills: m's, unless another assembly is filling
 * it now; then (*own 1) one of its own for this assembly, which
 * memo_release frees. NULL: no memory. */
static sv_em_edge_memo *memo_acquire(sv_ctx *ctx, const sv_em_model *m, int *own)
{
    sv_em_edge_memo *e = m->memo;
    *own = !e || atomic_flag_test_and_set(&e->in_use);
    if (*own && sv_em_edge_memo_create(ctx, m, &e)) return NULL;
    return e;
}

static void memo_release(sv_ctx *ctx, sv_em_edge_memo *e, int own)
{
    if (own) sv_em_edge_memo_destroy(ctx, e);
    else atomic_flag_clear(&e->in_use);
}

sv_status sv_em_edge_correct(sv_ctx *ctx, const sv_em_model *m, double *L, double *Psi, sv_em_colbase_fn colbase,
                             void *user)
{
    if (!sv_em_edge_profiled(m)) return SV_OK;
    const sv_em_grid *g = &m->prj->grid;
    size_t cells = (size_t)g->nx * g->ny;
    cell_map cm = {.nx = g->nx, .ny = g->ny};
    int own;
    sv_em_edge_memo *e = memo_acquire(ctx, m, &own);
    if (!e) return sv_last_status();
    cm.xr = sv_alloc(ctx, sizeof(int) * 4 * cells, "edge profile cell map");
    if (!cm.xr) {
        sv_status st = sv_last_status();
        memo_release(ctx, e, own);
        return st;
    }
    cm.yr = cm.xr + cells;
    cm.pr = cm.yr + cells;
    for (size_t k = 0; k < 4 * cells; k++) cm.xr[k] = -1;
    for (int q = 0; q < m->n; q++) {
        const sv_em_basis *b = &m->basis[q];
        size_t c = (size_t)b->i + (size_t)g->nx * b->j;
        switch (b->kind) {
        case SV_EM_UNKNOWN_X: cm.xr[c] = q; break;
        case SV_EM_UNKNOWN_Y: cm.yr[c] = q; break;
        case SV_EM_UNKNOWN_PORT: cm.pr[2 * c + (cm.pr[2 * c] >= 0)] = q; break;
        }
    }
    sv_em_parts parts = sv_em_parts_begin(ctx, SHARE_DL_PLAN + SHARE_DL + SHARE_DP_PLAN + SHARE_DP + SHARE_PSI);
    sv_em_part(&parts, SHARE_DL_PLAN + SHARE_DL);
    sv_status st = correct_l(ctx, m, e, L, colbase, user);
    sv_em_part(&parts, SHARE_DP_PLAN + SHARE_DP);
    if (!st) st = fill_dp(ctx, m, e, &cm);
    sv_em_part(&parts, SHARE_PSI);
    if (!st) st = correct_psi(ctx, m, e, &cm, NULL, Psi, colbase, user);
    sv_em_parts_end(&parts);
    memo_release(ctx, e, own);
    sv_free(ctx, cm.xr);
    return st;
}
