/* Thick metal: the side walls. A cell's charge lies on its lower face and
 * on the side walls of its exposed edges (where the next cell is not
 * metal), falling along a wall from its foot (wall_profile.c); a
 * rooftop's current on its lower face and on the walls along it (where
 * both its cells are exposed), uniform on each; the walls' mean densities
 * are the model's shares times the face's (wall_share.c chooses them from
 * the parts this file shares through walls_parts.h). These
 * are surface distributions of the thick conductor, as the current and
 * charge of good conductors are at RF, so the capacitance stays a
 * variational lower bound and the inductance an upper one, now with the
 * walls' fringing, their coupling across gaps and the current they carry.
 *
 * The walls change the coefficients of cells near them only through their
 * near field (beyond a few cells a wall's charge and current act like its
 * cell's), so P changes by δP for cell pairs within the walls' range
 * (sv_em_walls_range: it grows with √(t·h)),
 * Ψ by the sparse δΨ = Dᵀ·δP·D and L by the sparse δL of rooftop pairs
 * within that range, added to the assembled matrices.
 * Every distinct coefficient (face–wall, wall–wall by type and offset) is
 * computed once into small tables, which depend on the cell size and the
 * stack-up alone: made with the model (sv_em_walls_tables_create) and
 * shared by models of one cell (the port calibration's standards use their
 * circuit's, sv_em_model.walls). Heights ζ are above the interface; for
 * source and observer in z ≥ h the grounded slab's kernel is
 *   1/R(ζ − ζ') − K/R(ζ + ζ') − (1 − K²)·Σ_{n≥1} (−K)^{n−1}/R(ζ + ζ' + 2nh),
 * with K complex for a lossy dielectric. */
#include <complex.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "em_internal.h"
#include "geom.h"
#include "wall_profile.h"
#include "walls_parts.h"

/* The shared parts' short names here (walls_parts.h). */
typedef sv_em_walls_series series;
typedef sv_em_walls_charge_tables walls_tables;
typedef sv_em_walls_current_tables current_tables;
typedef sv_em_walls_pair pair_parts;
typedef sv_em_walls_current current;

/* A wall: the vertical rectangle over [a, b] along the plane at c
 * (axis 0: x = c, extent in y; axis 1: y = c, extent in x), ζ ∈ [0, t]. */
typedef struct wall {
    int axis;
    double c, a, b;
} wall;

static double rect(const series *s, double x1, double x2, double y1, double y2, double x3, double x4, double y3,
                   double y4, double z)
{
    return sv_em_rect(x1, x2, y1, y2, x3, x4, y3, y4, z, s->far);
}

/* ∫∫ over the face [x1,x2]×[y1,y2] (ζ = 0) and the wall's horizontal line
 * at height ζ: the line as strips of widths ε and 2ε, extrapolated to zero
 * width (the width enters as ε², then ε⁴). ε is 1 % of a cell (narrower
 * strips cancel in the closed form), and below a tenth of ζ where the line
 * is within a cell of the face (its ε² term grows like 1/ζ there). */
static double strip(const series *s, const double f[4], const wall *w, double z, double e)
{
    if (w->axis == 0) return rect(s, f[0], f[1], f[2], f[3], w->c - e / 2, w->c + e / 2, w->a, w->b, z) / e;
    return rect(s, f[0], f[1], f[2], f[3], w->a, w->b, w->c - e / 2, w->c + e / 2, z) / e;
}

static double face_line(const series *s, const double f[4], const wall *w, double z, double cell)
{
    double lo = w->axis == 0 ? f[0] : f[2], hi = w->axis == 0 ? f[1] : f[3];
    double across = fmax(0, fmax(lo - w->c, w->c - hi));
    double along = fmax(0, fmax((w->axis == 0 ? f[2] : f[0]) - w->b, w->a - (w->axis == 0 ? f[3] : f[1])));
    double eps = 1e-2 * cell;
    if (across < cell && along < cell && eps > 0.1 * z) eps = 0.1 * z;
    return (4 * strip(s, f, w, z, eps) - strip(s, f, w, z, 2 * eps)) / 3;
}

static const sv_em_gl_rule *rule_near(const sv_em_model *m) { return &m->gl_wall; }

/* Face–wall: the kernel between the face and the wall's line at ζ',
 * averaged over ζ' against the wall's charge profile: the direct term and
 * the first image coincide there ((1 − K)·J(ζ')). */
static double complex face_wall(const sv_em_model *m, const series *s, const double f[4], const wall *w)
{
    const sv_em_gl_rule *g = &s->hz.one_near, *gf = &s->hz.one_far;
    double eps = fmin(m->prj->grid.dx, m->prj->grid.dy);
    double complex sum = 0;
    double j0 = 0;
    for (int k = 0; k < g->n; k++) j0 += g->w[k] * face_line(s, f, w, g->t[k] * s->t, eps);
    sum = (1 - s->K) * j0;
    for (int n = 1; n <= s->terms; n++) {
        double jn = 0;
        for (int k = 0; k < gf->n; k++) jn += gf->w[k] * face_line(s, f, w, 2 * n * s->h + gf->t[k] * s->t, eps);
        sum += s->cn[n] * jn;
    }
    return sum / ((f[1] - f[0]) * (f[3] - f[2]) * (w->b - w->a));
}

/* ∫∫ 1/R over u ∈ [u1,u2], v ∈ [v1,v2] at height difference d: the corner
 * sum of u·ln(v + R) + v·ln(u + R) − d·atan(uv/(dR)). */
static double k2(double u, double v, double d)
{
    double Rr = sqrt(u * u + v * v + d * d), s = 0;
    if (Rr == 0) return 0;
    if (u != 0) s += u * (v >= 0 ? log(v + Rr) : log(u * u + d * d) - log(Rr - v));
    if (v != 0) s += v * (u >= 0 ? log(u + Rr) : log(v * v + d * d) - log(Rr - u));
    if (d != 0 && u != 0 && v != 0) s -= d * atan(u * v / (d * Rr));
    return s;
}

/* Two walls' kernels at height difference d, integrated along both walls
 * (wall_wall averages them over the heights). Perpendicular walls: the
 * corner closed form in the horizontal plane. */
static double perp(const wall *p, const wall *q, double d)
{
    const wall *x = p->axis == 0 ? p : q, *y = p->axis == 0 ? q : p;
    double u1 = y->a - x->c, u2 = y->b - x->c, v1 = x->a - y->c, v2 = x->b - y->c;
    return k2(u2, v2, d) - k2(u1, v2, d) - k2(u2, v1, d) + k2(u1, v1, d);
}

/* ∫∫ 1/√(s² + ρ²) along two collinear segments, s their points' distance:
 * the corner sum of s·asinh(s/ρ) − √(s² + ρ²) (even in s). */
static double k1(double s, double rho) { return s * asinh(s / rho) - sqrt(s * s + rho * rho); }

/* Parallel walls: their lines, ρ² = (planes' distance)² + d². */
static double parallel(const wall *p, const wall *q, double d)
{
    double g = p->c - q->c, rho = sqrt(g * g + d * d);
    return k1(p->b - q->a, rho) - k1(p->a - q->a, rho) - k1(p->b - q->b, rho) + k1(p->a - q->b, rho);
}

/* Wall–wall: the kernel of the walls' lines averaged over both heights
 * against their charge profile, which the direct term sees through the
 * offset ζ − ζ' (kernel even in it) and the images through ζ + ζ' (the
 * first mirrored below the interface, the others 2nh further). */
static double complex wall_wall(const series *s, const wall *p, const wall *q)
{
    double (*kern)(const wall *, const wall *, double) = p->axis == q->axis ? parallel : perp;
    const sv_em_gl_rule *gd = &s->hz.diff, *g = &s->hz.sum_near, *gf = &s->hz.sum_far;
    double t = s->t, dir = 0, im0 = 0;
    for (int k = 0; k < gd->n; k++) dir += gd->w[k] * kern(p, q, gd->t[k] * t);
    for (int k = 0; k < g->n; k++) im0 += g->w[k] * kern(p, q, g->t[k] * t);
    double complex sum = dir + s->c0 * im0;
    for (int n = 1; n <= s->terms; n++) {
        double in = 0;
        for (int k = 0; k < gf->n; k++) in += gf->w[k] * kern(p, q, 2 * n * s->h + gf->t[k] * t);
        sum += s->cn[n] * in;
    }
    return sum / ((p->b - p->a) * (q->b - q->a));
}

/* ---- cells and their walls ---- */

int sv_em_walls_metal_at(const sv_em_project *p, int i, int j)
{
    if (i < 0 || j < 0 || i >= p->grid.nx || j >= p->grid.ny) return 0;
    return p->metal[i + (size_t)p->grid.nx * j];
}

/* Walls of cell (i, j) on its exposed sides; returns their number. */
static int cell_walls(const sv_em_model *m, int i, int j, wall w[4])
{
    const sv_em_project *p = m->prj;
    double dx = p->grid.dx, dy = p->grid.dy, x0 = i * dx, y0 = j * dy;
    int n = 0;
    if (!sv_em_walls_metal_at(p, i - 1, j)) w[n++] = (wall){0, x0, y0, y0 + dy};
    if (!sv_em_walls_metal_at(p, i + 1, j)) w[n++] = (wall){0, x0 + dx, y0, y0 + dy};
    if (!sv_em_walls_metal_at(p, i, j - 1)) w[n++] = (wall){1, y0, x0, x0 + dx};
    if (!sv_em_walls_metal_at(p, i, j + 1)) w[n++] = (wall){1, y0 + dy, x0, x0 + dx};
    return n;
}

int sv_em_walls_range(const sv_em_project *p)
{
    double cell = fmin(p->grid.dx, p->grid.dy), reach = SV_EM_WALL_REACH * sqrt(p->st.t * p->st.h) / cell;
    if (!(reach > SV_EM_WALL_RANGE_MIN)) return SV_EM_WALL_RANGE_MIN;
    return reach < SV_EM_WALL_RANGE_MAX ? (int)ceil(reach) : SV_EM_WALL_RANGE_MAX;
}

/* ---- the tables ---- */

/* The places of the charges' entries in their tables of range R (walls_parts.h). */
static size_t fw_index(int R, int axis, int line, int row)
{
    return ((size_t)axis * (R + 1) + line) * (R + 1) + row;
}

static size_t ww_index(int R, int a, int b, int di, int dj)
{
    int nd = 2 * R + 3;
    return (((size_t)a * 2 + b) * nd + di + R + 1) * nd + dj + R + 1;
}

/* A wall line's mirror image on the face's side of it: L and 1 − L are one
 * another's images about the centre of the face between lines 0 and 1. */
static int fold_line(int line) { return line >= 1 ? line : 1 - line; }

static void wall_at(const sv_em_model *m, int axis, int line, int row, wall *w)
{
    double dx = m->prj->grid.dx, dy = m->prj->grid.dy;
    if (axis == 0) *w = (wall){0, line * dx, row * dy, (row + 1) * dy};
    else *w = (wall){1, line * dy, row * dx, (row + 1) * dx};
}

/* A wall's grid address: axis, line (across) and row (along). */
static void wall_addr(const sv_em_model *m, const wall *w, int *line, int *row)
{
    double dx = m->prj->grid.dx, dy = m->prj->grid.dy;
    *line = (int)lround(w->c / (w->axis == 0 ? dx : dy));
    *row = (int)lround(w->a / (w->axis == 0 ? dy : dx));
}

void sv_em_walls_series_make(const sv_em_model *m, series *s)
{
    const sv_em_stackup *st = &m->prj->st;
    double complex er = st->eps_r * (1 - I * st->tan_delta);
    s->K = (er - 1) / (er + 1);
    s->c0 = -s->K;
    double aK = cabs(s->K);
    /* the first (the ground's image, −(1 − K²)/R(ζ + ζ' + 2h)) even in air */
    s->terms = aK > 0 ? (int)ceil(log(m->opts.accuracy) / log(aK)) : 1;
    if (s->terms < 1) s->terms = 1;
    if (s->terms > 100000) s->terms = 100000;
    s->cn = malloc(sizeof(double complex) * (size_t)(s->terms + 1));
    double complex mk = 1; /* (−K)^{n−1} */
    for (int n = 1; n <= s->terms && s->cn; n++) {
        s->cn[n] = -(1 - s->K * s->K) * mk;
        mk *= -s->K;
    }
    s->R = sv_em_walls_range(m->prj);
    s->h = st->h;
    s->t = st->t;
    s->far = m->opts.far_ratio;
    sv_em_wall_heights_make(&s->hz);
}

/* The part coefficients, from the tables when tb is not NULL. */
static double complex part_fw(const sv_em_model *m, const series *s, const walls_tables *tb, int ci, int cj,
                              const wall *w)
{
    int line, row;
    wall_addr(m, w, &line, &row);
    int dl = line - (w->axis == 0 ? ci : cj), dr = row - (w->axis == 0 ? cj : ci);
    if (tb && dl >= -tb->R && dl <= tb->R + 1 && dr >= -tb->R && dr <= tb->R)
        return tb->fw[fw_index(tb->R, w->axis, fold_line(dl) - 1, abs(dr))];
    double dx = m->prj->grid.dx, dy = m->prj->grid.dy;
    const double f[4] = {ci * dx, (ci + 1) * dx, cj * dy, (cj + 1) * dy};
    return face_wall(m, s, f, w);
}

static double complex part_ww(const sv_em_model *m, const series *s, const walls_tables *tb, const wall *p,
                              const wall *q)
{
    int l1, r1, l2, r2;
    wall_addr(m, p, &l1, &r1);
    wall_addr(m, q, &l2, &r2);
    /* in x/y cell offsets: wall p at (l1, r1) or (r1, l1) */
    int pi = p->axis == 0 ? l1 : r1, pj = p->axis == 0 ? r1 : l1, qi = q->axis == 0 ? l2 : r2, qj = q->axis == 0 ? r2 : l2;
    int di = qi - pi, dj = qj - pj;
    if (tb && abs(di) <= tb->R + 1 && abs(dj) <= tb->R + 1) return tb->ww[ww_index(tb->R, p->axis, q->axis, di, dj)];
    return wall_wall(s, p, q);
}

/* The parts of wall tables while they are filled (the places the views
 * of sv_em_walls_tables_view read). */
typedef struct tables_out {
    double complex *fw, *ww, *p00;
    double *cfw, *cww, *cff;
} tables_out;

static void charge_tables_make(const sv_em_model *m, const series *s, const tables_out *o)
{
    const int NL = s->R + 1, NJ = s->R + 1, ND = 2 * s->R + 3, R = s->R;
#pragma omp parallel for schedule(dynamic, 4) num_threads(sv_threads_team())
    for (int q = 0; q < 2 * NL * NJ; q++) {
        int axis = q / (NL * NJ), dl = (q / NJ) % NL + 1, dr = q % NJ;
        wall w;
        wall_at(m, axis, dl, dr, &w);
        double dx = m->prj->grid.dx, dy = m->prj->grid.dy;
        const double f[4] = {0, dx, 0, dy};
        o->fw[fw_index(R, axis, dl - 1, dr)] = face_wall(m, s, f, &w);
    }
#pragma omp parallel for schedule(dynamic, 4) num_threads(sv_threads_team())
    for (int q = 0; q < 4 * ND * ND; q++) {
        int a = q / (2 * ND * ND), b = (q / (ND * ND)) % 2, di = (q / ND) % ND - (R + 1), dj = q % ND - (R + 1);
        wall p, w;
        wall_at(m, a, 0, 0, &p);
        /* the second wall at cell offset (di, dj): line/row from its axis */
        wall_at(m, b, b == 0 ? di : dj, b == 0 ? dj : di, &w);
        o->ww[ww_index(R, a, b, di, dj)] = wall_wall(s, &p, &w);
    }
}

/* ---- δP of cell pairs and δΨ ---- */

/* Face-to-face P of two cells (1/F, complex for a lossy dielectric). */
double complex sv_em_walls_p_faces(const sv_em_model *m, int di, int dj, int exact)
{
    if (!(m->prj->st.tan_delta > 0)) return sv_em_P_cells(m, di, dj, exact);
    double im, re = sv_em_P_cells_lossy(m, di, dj, exact, &im);
    return re + I * im;
}

/* The parts of cells a and b; 0 when neither has walls (δP = 0). */
int sv_em_walls_pair_make(const sv_em_model *m, const series *s, const walls_tables *tb, int ai, int aj, int bi,
                           int bj, double complex p00, pair_parts *pp)
{
    wall wa[4], wb[4];
    int na = cell_walls(m, ai, aj, wa), nb = cell_walls(m, bi, bj, wb);
    if (na == 0 && nb == 0) return 0;
    double t = s->t, k = 1 / (4 * SV_EM_PI * SV_EM_EPS0);
    *pp = (pair_parts){.p00 = p00};
    for (int v = 0; v < nb; v++) pp->F += t * (wb[v].b - wb[v].a) * k * part_fw(m, s, tb, ai, aj, &wb[v]);
    for (int u = 0; u < na; u++) pp->F += t * (wa[u].b - wa[u].a) * k * part_fw(m, s, tb, bi, bj, &wa[u]);
    for (int u = 0; u < na; u++)
        for (int v = 0; v < nb; v++)
            pp->W += t * (wa[u].b - wa[u].a) * t * (wb[v].b - wb[v].a) * k * part_ww(m, s, tb, &wa[u], &wb[v]);
    for (int u = 0; u < na; u++) pp->Ta += t * (wa[u].b - wa[u].a);
    for (int v = 0; v < nb; v++) pp->Tb += t * (wb[v].b - wb[v].a);
    return 1;
}

double complex sv_em_walls_pair_delta(const pair_parts *pp, double A, double kappa)
{
    double dd = (A + kappa * pp->Ta) * (A + kappa * pp->Tb);
    return (A * A / dd - 1) * pp->p00 + kappa * A / dd * pp->F + kappa * kappa / dd * pp->W;
}

/* δP(a, b): P of the two cells with their walls minus that of their faces,
 * at the model's share. */
static double complex cell_delta(const sv_em_model *m, const series *s, const walls_tables *tb, int ai, int aj,
                                 int bi, int bj, double complex p00)
{
    pair_parts pp;
    if (!sv_em_walls_pair_make(m, s, tb, ai, aj, bi, bj, p00, &pp)) return 0;
    return sv_em_walls_pair_delta(&pp, sv_em_walls_cell_area(m), m->opts.wall_share);
}

/* The unknowns with divergence on each cell, with their signs (CSR by cell). */
typedef struct cell_unknowns {
    int *start, *q, *sg;
} cell_unknowns;

static sv_status cell_unknowns_make(sv_ctx *ctx, const sv_em_model *m, cell_unknowns *cu)
{
    int nx = m->prj->grid.nx, ncell = nx * m->prj->grid.ny;
    cu->start = sv_calloc(ctx, (size_t)ncell + 1, sizeof(int), "em wall lists");
    cu->q = sv_alloc(ctx, sizeof(int) * 2 * (size_t)(m->n + 1), "em wall lists");
    cu->sg = sv_alloc(ctx, sizeof(int) * 2 * (size_t)(m->n + 1), "em wall lists");
    if (!cu->start || !cu->q || !cu->sg) return sv_last_status();
    int ci[2], cj[2], sg[2];
    for (int q = 0; q < m->n; q++) {
        int nc = sv_em_div_cells(m, q, ci, cj, sg);
        for (int k = 0; k < nc; k++) cu->start[ci[k] + nx * cj[k] + 1]++;
    }
    for (int c = 0; c < ncell; c++) cu->start[c + 1] += cu->start[c];
    int *fill = sv_alloc(ctx, sizeof(int) * (size_t)ncell, "em wall lists");
    if (!fill) return sv_last_status();
    memcpy(fill, cu->start, sizeof(int) * (size_t)ncell);
    for (int q = 0; q < m->n; q++) {
        int nc = sv_em_div_cells(m, q, ci, cj, sg);
        for (int k = 0; k < nc; k++) {
            int e = fill[ci[k] + nx * cj[k]]++;
            cu->q[e] = q;
            cu->sg[e] = sg[k];
        }
    }
    sv_free(ctx, fill);
    return SV_OK;
}

static void cell_unknowns_free(sv_ctx *ctx, cell_unknowns *cu)
{
    sv_free(ctx, cu->start);
    sv_free(ctx, cu->q);
    sv_free(ctx, cu->sg);
}

/* ---- where the updates go ---- */

/* The CPU assembly adds the updates to its arrays; an accelerator's plan
 * (assembly_plan.c) records them as lists instead, in the order the CPU
 * adds them, so that applying them in that order gives the same bits. */
typedef struct sink {
    double *L, *Psi, *PsiI;       /* add here (L NULL: record) */
    sv_em_colbase_fn colbase;
    void *user;
    sv_ctx *ctx;                  /* record here */
    sv_em_walls_updates *u;
    size_t pcap;                  /* room in u's δΨ list */
} sink;

/* Room for one more entry in the δΨ list (doubling it when full). */
static sv_status psi_room(sink *k)
{
    sv_em_walls_updates *u = k->u;
    if (u->np < k->pcap) return SV_OK;
    size_t cap = k->pcap ? 2 * k->pcap : 4096;
    int *r = sv_alloc(k->ctx, sizeof(int) * cap, "em wall updates");
    int *c = sv_alloc(k->ctx, sizeof(int) * cap, "em wall updates");
    double *v = sv_alloc(k->ctx, sizeof(double) * cap, "em wall updates");
    double *vi = u->lossy ? sv_alloc(k->ctx, sizeof(double) * cap, "em wall updates") : NULL;
    if (!r || !c || !v || (u->lossy && !vi)) {
        sv_status st = sv_last_status();
        sv_free(k->ctx, r);
        sv_free(k->ctx, c);
        sv_free(k->ctx, v);
        sv_free(k->ctx, vi);
        return st;
    }
    if (u->np) {
        memcpy(r, u->p_r, sizeof(int) * u->np);
        memcpy(c, u->p_c, sizeof(int) * u->np);
        memcpy(v, u->p_val, sizeof(double) * u->np);
        if (vi) memcpy(vi, u->p_val_im, sizeof(double) * u->np);
    }
    sv_free_each(k->ctx, (void *const[]){u->p_r, u->p_c, u->p_val, u->p_val_im}, 4);
    u->p_r = r;
    u->p_c = c;
    u->p_val = v;
    u->p_val_im = vi;
    k->pcap = cap;
    return SV_OK;
}

/* δΨ(r, c) += w·d (r ≥ c). */
static sv_status psi_add(sink *k, int r, int c, double w, double complex d)
{
    if (k->Psi) {
        size_t o = k->colbase(k->user, c) + (size_t)(r - c);
        k->Psi[o] += w * creal(d);
        if (k->PsiI) k->PsiI[o] += w * cimag(d);
        return SV_OK;
    }
    sv_status st = psi_room(k);
    if (st) return st;
    sv_em_walls_updates *u = k->u;
    u->p_r[u->np] = r;
    u->p_c[u->np] = c;
    u->p_val[u->np] = w * creal(d);
    if (u->lossy) u->p_val_im[u->np] = w * cimag(d);
    u->np++;
    return SV_OK;
}

/* δP of cell a with each cell b of its box (2R + 1 on a side, by rows),
 * 0 where b is not metal or has no unknowns. */
static void charges_row(const sv_em_model *m, const series *s, const walls_tables *tb, const double complex *p00,
                        const cell_unknowns *cu, int ai, int aj, double complex *d)
{
    const sv_em_project *p = m->prj;
    int R = s->R;
    for (int bj = aj - R; bj <= aj + R; bj++)
        for (int bi = ai - R; bi <= ai + R; bi++, d++) {
            int b = bi + p->grid.nx * bj;
            *d = 0;
            if (sv_em_walls_metal_at(p, bi, bj) && cu->start[b] != cu->start[b + 1])
                *d = cell_delta(m, s, tb, ai, aj, bi, bj, p00[abs(bi - ai) + (R + 1) * abs(bj - aj)]);
        }
}

/* The δΨ of a step's cells from their rows of δP (cells[q0..q1), rows
 * from row), in the order of the cells and their boxes; only the columns c
 * with c mod parts = part. */
static sv_status charges_apply(sink *k, const cell_unknowns *cu, int nx, int R, const int *cells, int q0, int q1,
                               const double complex *row, int part, int parts)
{
    sv_status st = SV_OK;
    for (int q = q0; q < q1 && !st; q++) {
        int a = cells[q], ai = a % nx, aj = a / nx;
        const double complex *d = row + (size_t)(q - q0) * (2 * R + 1) * (2 * R + 1);
        for (int bj = aj - R; bj <= aj + R && !st; bj++)
            for (int bi = ai - R; bi <= ai + R && !st; bi++, d++) {
                if (*d == 0) continue;
                int b = bi + nx * bj;
                for (int e = cu->start[a]; e < cu->start[a + 1] && !st; e++)
                    for (int f = cu->start[b]; f < cu->start[b + 1] && !st; f++) {
                        int r = cu->q[e], c = cu->q[f];
                        if (r < c || (parts > 1 && c % parts != part)) continue;
                        st = psi_add(k, r, c, cu->sg[e] * cu->sg[f], *d);
                    }
            }
    }
    return st;
}

/* Cells per thread whose box rows one parallel step computes (a row:
 * (2R + 1)² complex values, 2.7 kB: a small circuit's assembly holds little
 * more than its matrices). */
#define CHARGES_STEP 16

/* δΨ_mn = Σ s_a s_b δP(a, b) over the cell pairs within range, into the
 * lower triangle; tb, p00: the charges' tables. The δP of a step of cells
 * are computed on the team, then added cell by cell and box by box as on
 * one thread: added, each thread its share of the columns (every entry
 * gets its terms in that order), or recorded, serially (the list's order).
 * The bits are one thread's. */
static sv_status walls_charges(sv_ctx *ctx, const sv_em_model *m, const series *s, const walls_tables *tb,
                               const double complex *p00, sink *k)
{
    const sv_em_project *p = m->prj;
    int nx = p->grid.nx, ncell = nx * p->grid.ny, R = s->R, box = (2 * R + 1) * (2 * R + 1);
    cell_unknowns cu = {0};
    sv_status st = cell_unknowns_make(ctx, m, &cu);
    int *cells = st ? NULL : sv_alloc(ctx, sizeof(int) * (size_t)(ncell ? ncell : 1), "em wall charges"), na = 0;
    for (int a = 0; a < ncell && cells; a++)
        if (p->metal[a] && cu.start[a] != cu.start[a + 1]) cells[na++] = a;
    int step = CHARGES_STEP * sv_threads_team();
    step = na < step ? (na ? na : 1) : step;
    double complex *row = cells ? sv_alloc(ctx, sizeof(double complex) * (size_t)step * box, "em wall charges") : NULL;
    if (!st && !row) st = sv_last_status();
    sv_progress_loop loop = sv_progress_loop_begin(ctx, "side walls", na);
    for (int q0 = 0; q0 < na && !st && !sv_progress_cancelled(ctx); q0 += step) {
        int q1 = q0 + step < na ? q0 + step : na;
#pragma omp parallel num_threads(sv_threads_team())
        {
#pragma omp for schedule(dynamic, 4)
            for (int q = q0; q < q1; q++) {
                if (sv_progress_loop_at(&loop, q)) continue;
                charges_row(m, s, tb, p00, &cu, cells[q] % nx, cells[q] / nx, row + (size_t)(q - q0) * box);
            }
            /* adding into Ψ cannot fail (only recording grows a list): no
             * status to keep; a stopped step's rows are not all there */
            if (k->Psi && !sv_progress_cancelled(ctx))
                charges_apply(k, &cu, nx, R, cells, q0, q1, row, omp_get_thread_num(), omp_get_num_threads());
        }
        if (!k->Psi && !sv_progress_cancelled(ctx)) st = charges_apply(k, &cu, nx, R, cells, q0, q1, row, 0, 1);
    }
    if (!st) st = sv_progress_loop_end(&loop);
    sv_free(ctx, row);
    sv_free(ctx, cells);
    cell_unknowns_free(ctx, &cu);
    return st;
}

void sv_em_walls_updates_free(sv_ctx *ctx, sv_em_walls_updates *u)
{
    sv_free_each(ctx, (void *const[]){u->l_r, u->l_c, u->l_val, u->p_r, u->p_c, u->p_val, u->p_val_im}, 7);
    memset(u, 0, sizeof *u);
}

static void walls_column_currents(const sv_em_model *m, int c, double *lcol);

void sv_em_walls_column(const sv_em_model *m, int c, double *lcol, double *pcol)
{
    if (!m->prj->st.thick_metal) return;
    walls_column_currents(m, c, lcol);
    series s;
    sv_em_walls_series_make(m, &s);
    if (!s.cn) return;
    /* the naive reference evaluates each pair without the tables; the far
     * images keep the point form, as the closed form of the walls' thin
     * strips cancels there */
    int bi[2], bj[2], bs[2], ai[2], aj[2], as[2];
    int nb = sv_em_div_cells(m, c, bi, bj, bs);
    for (int r = c; r < m->n; r++) {
        int na = sv_em_div_cells(m, r, ai, aj, as);
        double sum = 0;
        for (int u = 0; u < na; u++)
            for (int v = 0; v < nb; v++) {
                if (abs(ai[u] - bi[v]) > s.R || abs(aj[u] - bj[v]) > s.R) continue;
                double complex p00 = sv_em_walls_p_faces(m, ai[u] - bi[v], aj[u] - bj[v], 1);
                sum += as[u] * bs[v] * creal(cell_delta(m, &s, NULL, ai[u], aj[u], bi[v], bj[v], p00));
            }
        pcol[r - c] += sum;
    }
    free(s.cn);
}

/* ---- currents ---- */

void sv_em_walls_rooftop_current(const sv_em_model *m, int q, current *c)
{
    const sv_em_basis *b = &m->basis[q];
    const sv_em_project *p = m->prj;
    double dx = p->grid.dx, dy = p->grid.dy, t = p->st.t;
    int i = b->i, j = b->j, x = b->kind == SV_EM_UNKNOWN_X;
    c->axis = x ? 0 : 1;
    c->d = x ? dx : dy;
    c->e = x ? (i + 1) * dx : (j + 1) * dy;
    c->c1 = x ? j * dy : i * dx;
    c->c2 = c->c1 + (x ? dy : dx);
    c->nw = 0;
    /* a wall where both cells of the rooftop are exposed on that side */
    int i2 = i + x, j2 = j + !x;
    if (x ? !sv_em_walls_metal_at(p, i, j - 1) && !sv_em_walls_metal_at(p, i2, j2 - 1) : !sv_em_walls_metal_at(p, i - 1, j) && !sv_em_walls_metal_at(p, i2 - 1, j2))
        c->wall[c->nw++] = c->c1;
    if (x ? !sv_em_walls_metal_at(p, i, j + 1) && !sv_em_walls_metal_at(p, i2, j2 + 1) : !sv_em_walls_metal_at(p, i + 1, j) && !sv_em_walls_metal_at(p, i2 + 1, j2))
        c->wall[c->nw++] = c->c2;
    /* the walls' current density wall_current_share times the face's */
    double kappa = m->opts.wall_current_share[c->axis], width = c->c2 - c->c1 + c->nw * kappa * t;
    c->share[0] = (c->c2 - c->c1) / width;
    for (int k = 0; k < c->nw; k++) c->share[k + 1] = kappa * t / width;
}

/* Pulse–pulse parts of L/(μ0/4π), per unit current: the face pulse
 * [a1, a2] × [c1, c2] against a wall pulse [b1, b2] at across T (the face
 * current density 1/width, the wall's 1/t), and two wall pulses. The
 * ground image of a point at height ζ above the interface is 2h + ζ below
 * the face. */
static double pulse_face_wall(const sv_em_model *m, const series *s, double a1, double a2, double c1, double c2,
                              double b1, double b2, double T)
{
    const sv_em_gl_rule *g = rule_near(m);
    double cell = fmin(m->prj->grid.dx, m->prj->grid.dy), sum = 0;
    const double f[4] = {a1, a2, c1, c2};
    const wall w = {1, T, b1, b2}; /* in (along, across) as (x, y): the line along x at y = T */
    for (int k = 0; k < g->n; k++) {
        double z = g->t[k] * s->t;
        sum += g->w[k] * (face_line(s, f, &w, z, cell) - face_line(s, f, &w, 2 * s->h + z, cell));
    }
    return sum / (c2 - c1);
}

static double pulse_wall_wall(const series *s, double a1, double a2, double Ta, double b1, double b2, double Tb)
{
    double g = fabs(Ta - Tb), t = s->t;
    return (rect(s, a1, a2, 0, t, b1, b2, 0, t, g) - rect(s, a1, a2, 0, t, b1, b2, -2 * s->h - t, -2 * s->h, g)) /
           (t * t);
}

/* Rooftop against rooftop of one axis, centre offset D along: the triangle
 * convolution of the pulse parts (as sv_em_L_rooftops does for faces),
 * kind 0 face of the first against the wall at T of the second, 1 wall
 * against wall (the first's wall at Ta). */
static double tri_conv(const sv_em_model *m, const series *s, int kind, double d, double D, double c1, double c2,
                       double Ta, double T)
{
    const sv_em_gl_rule *g = rule_near(m);
    double sum = 0;
    for (int k = 0; k < g->n; k++) {
        double sg = g->t[k] * d, wt = g->w[k] * (1 - g->t[k]);
        for (int side = -1; side <= 1; side += 2) {
            double b1 = D + side * sg - 0.5 * d, b2 = b1 + d;
            sum += wt * (kind == 0 ? pulse_face_wall(m, s, -0.5 * d, 0.5 * d, c1, c2, b1, b2, T)
                                   : pulse_wall_wall(s, -0.5 * d, 0.5 * d, Ta, b1, b2, T));
        }
    }
    return SV_EM_MU0 / (4 * SV_EM_PI) * sum;
}

/* The places of the currents' entries in their tables of range R. */
static size_t cfw_index(int R, int ax, int di, int l) { return ((size_t)ax * (R + 1) + di) * (R + 1) + l; }
static size_t cww_index(int R, int ax, int di, int l) { return ((size_t)ax * (R + 1) + di) * (R + 2) + l; }
static size_t cff_index(int R, int ax, int di, int dj) { return ((size_t)ax * (R + 1) + di) * (R + 1) + dj; }

static void current_tables_make(const sv_em_model *m, const series *s, const tables_out *o)
{
    double dx = m->prj->grid.dx, dy = m->prj->grid.dy;
    const int R = s->R;
#pragma omp parallel for schedule(dynamic, 2) num_threads(sv_threads_team())
    for (int q = 0; q < 2 * (R + 1) * (R + 1); q++) {
        int ax = q / ((R + 1) * (R + 1)), di = (q / (R + 1)) % (R + 1), L = q % (R + 1) + 1;
        double d = ax ? dy : dx, w = ax ? dx : dy;
        o->cfw[cfw_index(R, ax, di, L - 1)] = tri_conv(m, s, 0, d, di * d, 0, w, 0, L * w);
    }
#pragma omp parallel for schedule(dynamic, 2) num_threads(sv_threads_team())
    for (int q = 0; q < 2 * (R + 1) * (R + 2); q++) {
        int ax = q / ((R + 1) * (R + 2)), di = (q / (R + 2)) % (R + 1), L = q % (R + 2);
        double d = ax ? dy : dx, w = ax ? dx : dy;
        o->cww[cww_index(R, ax, di, L)] = tri_conv(m, s, 1, d, di * d, 0, 0, 0, L * w);
    }
#pragma omp parallel for schedule(dynamic, 2) num_threads(sv_threads_team())
    for (int q = 0; q < 2 * (R + 1) * (R + 1); q++) {
        int ax = q / ((R + 1) * (R + 1)), di = (q / (R + 1)) % (R + 1), dj = q % (R + 1);
        o->cff[cff_index(R, ax, di, dj)] = ax ? sv_em_L_rooftops(m, 1, dj, di, 0) : sv_em_L_rooftops(m, 0, di, dj, 0);
    }
}

/* A rooftop's face against the wall at across line L of a rooftop D = di
 * cells along from it: from the table (one value for the mirror images)
 * or, without it or beyond it, the closed forms. */
static double face_wall_current(const sv_em_model *m, const series *s, const current_tables *ct, int ax, double d,
                                double w, int di, int L)
{
    if (ct && abs(di) <= ct->R && L >= -ct->R && L <= ct->R + 1)
        return ct->fw[cfw_index(ct->R, ax, abs(di), fold_line(L) - 1)];
    return tri_conv(m, s, 0, d, di * d, 0, w, 0, L * w);
}

/* The parts of δL of rooftops a, b of one axis (b at cell offset (di, dj)
 * from a, along and across), from the tables or, without them, the closed
 * forms: as for the charges (pair_parts), the face of width w and the
 * walls of height t, F and W per unit current density. */
void sv_em_walls_current_parts(const sv_em_model *m, const series *s, const current_tables *ct, const current *a,
                          const current *b, int di, int dj, pair_parts *pp)
{
    int ax = a->axis;
    double w = a->c2 - a->c1, d = a->d, t = s->t;
    *pp = (pair_parts){.Ta = a->nw * t, .Tb = b->nw * t};
    pp->p00 = ct ? ct->ff[cff_index(ct->R, ax, abs(di), abs(dj))]
                 : (ax ? sv_em_L_rooftops(m, 1, dj, di, 1) : sv_em_L_rooftops(m, 0, di, dj, 1));
    for (int v = 0; v < b->nw; v++) /* face of a, wall of b */
        pp->F += t * face_wall_current(m, s, ct, ax, d, w, di, (int)lround((b->wall[v] - a->c1) / w));
    for (int u = 0; u < a->nw; u++) /* face of b, wall of a */
        pp->F += t * face_wall_current(m, s, ct, ax, d, w, -di, (int)lround((a->wall[u] - b->c1) / w));
    for (int u = 0; u < a->nw; u++)
        for (int v = 0; v < b->nw; v++) {
            int L = abs((int)lround((b->wall[v] - a->wall[u]) / w));
            double x = ct && abs(di) <= ct->R && L <= ct->R + 1 ? ct->ww[cww_index(ct->R, ax, abs(di), L)]
                                                                : tri_conv(m, s, 1, d, di * d, 0, 0, 0, L * w);
            pp->W += t * t * x;
        }
}

/* δL of rooftops a, b at the model's current share. */
static double current_delta(const sv_em_model *m, const series *s, const current_tables *ct, const current *a,
                            const current *b, int di, int dj)
{
    if (a->nw == 0 && b->nw == 0) return 0;
    pair_parts pp;
    sv_em_walls_current_parts(m, s, ct, a, b, di, dj, &pp);
    return creal(sv_em_walls_pair_delta(&pp, a->c2 - a->c1, m->opts.wall_current_share[a->axis]));
}

/* The rooftop of an axis at cell (i, j), or −1 (index maps of the mesh). */
int *sv_em_walls_rooftop_map(sv_ctx *ctx, const sv_em_model *m)
{
    int nx = m->prj->grid.nx, ny = m->prj->grid.ny;
    int *map = sv_alloc(ctx, sizeof(int) * 2 * (size_t)nx * ny, "em wall rooftop map");
    if (!map) return NULL;
    for (size_t k = 0; k < 2 * (size_t)nx * ny; k++) map[k] = -1;
    for (int q = 0; q < m->nx_edges + m->ny_edges; q++) {
        const sv_em_basis *b = &m->basis[q];
        map[(size_t)sv_em_basis_axis(b) * nx * ny + b->i + (size_t)nx * b->j] = q;
    }
    return map;
}

/* δL of rooftop c with the rooftops r ≥ c of its axis within range whose
 * currents have walls (each pair once: the lower triangle): their number,
 * and with vals their rows and values (room for (2R + 1)² each). */
static int column_currents(const sv_em_model *m, const series *s, const current_tables *ct, const int *map, int c,
                           int *rows, double *vals)
{
    int nx = m->prj->grid.nx, ny = m->prj->grid.ny, k = 0, R = s->R;
    const sv_em_basis *bc = &m->basis[c];
    current cc, cr;
    sv_em_walls_rooftop_current(m, c, &cc);
    for (int dj = -R; dj <= R; dj++)
        for (int di = -R; di <= R; di++) {
            int i = bc->i + di, j = bc->j + dj;
            if (i < 0 || j < 0 || i >= nx || j >= ny) continue;
            int r = map[(size_t)sv_em_basis_axis(bc) * nx * ny + i + (size_t)nx * j];
            if (r < c) continue;
            sv_em_walls_rooftop_current(m, r, &cr);
            if (cc.nw == 0 && cr.nw == 0) continue; /* no walls: no change */
            if (vals) {
                /* offsets along / across the axis */
                int along_x = bc->kind == SV_EM_UNKNOWN_X, da = along_x ? di : dj, dca = along_x ? dj : di;
                rows[k] = r;
                vals[k] = current_delta(m, s, ct, &cc, &cr, da, dca);
            }
            k++;
        }
    return k;
}

/* The δL list: counted per column, then filled column by column (so its
 * order does not depend on the threads). */
static sv_status record_currents(const sv_em_model *m, const series *s, const current_tables *ct, const int *map,
                                 sink *k)
{
    int nrt = m->nx_edges + m->ny_edges;
    sv_em_walls_updates *u = k->u;
    size_t *start = sv_calloc(k->ctx, (size_t)nrt + 1, sizeof(size_t), "em wall updates");
    if (!start) return sv_last_status();
    /* counted, then computed: the second pass is the costly one */
    sv_progress_loop loop = sv_progress_loop_begin(k->ctx, "side walls", 2.0 * nrt);
#pragma omp parallel for schedule(dynamic, 16) num_threads(sv_threads_team())
    for (int c = 0; c < nrt; c++) start[c + 1] = (size_t)column_currents(m, s, ct, map, c, NULL, NULL);
    for (int c = 0; c < nrt; c++) start[c + 1] += start[c];
    u->nl = start[nrt];
    size_t len = u->nl ? u->nl : 1;
    u->l_r = sv_alloc(k->ctx, sizeof(int) * len, "em wall updates");
    u->l_c = sv_alloc(k->ctx, sizeof(int) * len, "em wall updates");
    u->l_val = sv_alloc(k->ctx, sizeof(double) * len, "em wall updates");
    sv_status st = u->l_r && u->l_c && u->l_val ? SV_OK : sv_last_status();
    if (!st) {
#pragma omp parallel for schedule(dynamic, 16) num_threads(sv_threads_team())
        for (int c = 0; c < nrt; c++) {
            if (sv_progress_loop_at(&loop, nrt + c)) continue;
            size_t o = start[c];
            int got = column_currents(m, s, ct, map, c, u->l_r + o, u->l_val + o);
            for (int q = 0; q < got; q++) u->l_c[o + q] = c;
        }
        st = sv_progress_loop_end(&loop);
    }
    sv_free(k->ctx, start);
    return st;
}

/* δL of the rooftop pairs within range into the lower triangle; ct: the
 * currents' tables. */
static sv_status walls_currents(sv_ctx *ctx, const sv_em_model *m, const series *s, const current_tables *ct,
                                sink *k)
{
    int nrt = m->nx_edges + m->ny_edges;
    int *map = sv_em_walls_rooftop_map(ctx, m);
    sv_status st = !map ? sv_last_status() : SV_OK;
    if (!st && !k->L) st = record_currents(m, s, ct, map, k);
    if (!st && k->L) {
        /* each thread's room for a column's (2R + 1)² rows and values */
        int team = sv_threads_team(), box = (2 * s->R + 1) * (2 * s->R + 1);
        int *rows = sv_alloc(ctx, sizeof(int) * (size_t)team * box, "em wall currents");
        double *vals = sv_alloc(ctx, sizeof(double) * (size_t)team * box, "em wall currents");
        if (!rows || !vals) st = sv_last_status();
        if (!st) {
            sv_progress_loop loop = sv_progress_loop_begin(ctx, "side walls", nrt);
#pragma omp parallel num_threads(team)
            {
                int *r = rows + (size_t)omp_get_thread_num() * box;
                double *v = vals + (size_t)omp_get_thread_num() * box;
#pragma omp for schedule(dynamic, 16)
                for (int c = 0; c < nrt; c++) {
                    if (sv_progress_loop_at(&loop, c)) continue;
                    int got = column_currents(m, s, ct, map, c, r, v);
                    size_t base = k->colbase(k->user, c);
                    for (int q = 0; q < got; q++) k->L[base + (size_t)(r[q] - c)] += v[q];
                }
            }
            st = sv_progress_loop_end(&loop);
        }
        sv_free(ctx, rows);
        sv_free(ctx, vals);
    }
    sv_free(ctx, map);
    return st;
}

/* ---- the tables of a cell and stack-up, and the updates ---- */

/* Every coefficient the walls tabulate: they depend on the cell size, the
 * stack-up and the options alone (the range too), so models of one cell
 * and stack-up share them (sv_em_model.walls). One allocation: the
 * charges' face–wall, wall–wall and face tables (complex), then the
 * currents' (real), at offsets from the range. */
struct sv_em_walls_tables {
    int R;
    double complex data[];
};

typedef struct tables_layout {
    size_t fw, ww, p00, cfw, cww, cff; /* elements of each part */
} tables_layout;

static tables_layout layout_of(int R)
{
    size_t a = (size_t)R + 1, d = 2 * (size_t)R + 3;
    return (tables_layout){.fw = 2 * a * a, .ww = 4 * d * d, .p00 = a * a, .cfw = 2 * a * a, .cww = 2 * a * (a + 1),
                           .cff = 2 * a * a};
}

static size_t tables_bytes(int R)
{
    tables_layout l = layout_of(R);
    return sizeof(sv_em_walls_tables) + sizeof(double complex) * (l.fw + l.ww + l.p00) +
           sizeof(double) * (l.cfw + l.cww + l.cff);
}

size_t sv_em_walls_tables_bytes(const sv_em_model *m) { return tables_bytes(sv_em_walls_range(m->prj)); }

/* The parts of w as the tables' views (p00: the faces' P by |offset|). */
void sv_em_walls_tables_view(const sv_em_walls_tables *w, walls_tables *tb, current_tables *ct, const double complex **p00)
{
    tables_layout l = layout_of(w->R);
    const double *real = (const double *)(w->data + l.fw + l.ww + l.p00);
    *tb = (walls_tables){.R = w->R, .fw = w->data, .ww = w->data + l.fw};
    *ct = (current_tables){.R = w->R, .fw = real, .ww = real + l.cfw, .ff = real + l.cfw + l.cww};
    *p00 = w->data + l.fw + l.ww;
}

/* The same places, to fill. */
static tables_out tables_parts(sv_em_walls_tables *w)
{
    tables_layout l = layout_of(w->R);
    double *real = (double *)(w->data + l.fw + l.ww + l.p00);
    return (tables_out){.fw = w->data, .ww = w->data + l.fw, .p00 = w->data + l.fw + l.ww, .cfw = real,
                        .cww = real + l.cfw, .cff = real + l.cfw + l.cww};
}

sv_status sv_em_walls_tables_create(sv_ctx *ctx, const sv_em_model *m, sv_em_walls_tables **out)
{
    *out = NULL;
    series s;
    sv_em_walls_series_make(m, &s);
    if (!s.cn) return sv_error(SV_ERR_NOMEM, "em walls: no memory for the image series");
    sv_em_walls_tables *w = sv_alloc(ctx, tables_bytes(s.R), "em wall tables");
    if (!w) {
        free(s.cn);
        return sv_last_status();
    }
    w->R = s.R;
    tables_out o = tables_parts(w);
    current_tables_make(m, &s, &o);
    charge_tables_make(m, &s, &o);
    int a = s.R + 1;
    for (int q = 0; q < a * a; q++) o.p00[q] = sv_em_walls_p_faces(m, q % a, q / a, 1);
    free(s.cn);
    *out = w;
    return SV_OK;
}

void sv_em_walls_tables_destroy(sv_ctx *ctx, sv_em_walls_tables *w) { sv_free(ctx, w); }

/* The shares of the updates' progress: δL of the rooftops, δΨ of the
 * cells (rough costs). */
#define SHARE_CURRENTS 0.3
#define SHARE_CHARGES 0.7

static sv_status walls_apply(sv_ctx *ctx, const sv_em_model *m, sink *k)
{
    if (!m->prj->st.thick_metal) return SV_OK;
    if (!m->walls) return sv_error(SV_ERR_INTERNAL, "em walls: a model with thick metal has no wall tables");
    series s;
    sv_em_walls_series_make(m, &s);
    if (!s.cn) return sv_error(SV_ERR_NOMEM, "em walls: no memory for the image series");
    walls_tables tb;
    current_tables ct;
    const double complex *p00;
    sv_em_walls_tables_view(m->walls, &tb, &ct, &p00);
    sv_em_parts parts = sv_em_parts_begin(ctx, SHARE_CURRENTS + SHARE_CHARGES);
    sv_em_part(&parts, SHARE_CURRENTS);
    sv_status st = walls_currents(ctx, m, &s, &ct, k);
    sv_em_part(&parts, SHARE_CHARGES);
    if (!st) st = walls_charges(ctx, m, &s, &tb, p00, k);
    sv_em_parts_end(&parts);
    free(s.cn);
    return st;
}

sv_status sv_em_walls_add(sv_ctx *ctx, const sv_em_model *m, double *L, double *Psi, double *PsiI,
                          sv_em_colbase_fn colbase, void *user)
{
    sink k = {.L = L, .Psi = Psi, .PsiI = PsiI, .colbase = colbase, .user = user};
    return walls_apply(ctx, m, &k);
}

sv_status sv_em_walls_record(sv_ctx *ctx, const sv_em_model *m, int lossy, sv_em_walls_updates *u)
{
    memset(u, 0, sizeof *u);
    u->lossy = lossy;
    sink k = {.ctx = ctx, .u = u};
    sv_status st = walls_apply(ctx, m, &k);
    if (st) sv_em_walls_updates_free(ctx, u);
    return st;
}

static void walls_column_currents(const sv_em_model *m, int c, double *lcol)
{
    if (c >= m->nx_edges + m->ny_edges) return;
    series s;
    sv_em_walls_series_make(m, &s);
    const sv_em_basis *bc = &m->basis[c];
    current cc, cr;
    sv_em_walls_rooftop_current(m, c, &cc);
    for (int r = c; r < m->nx_edges + m->ny_edges; r++) {
        const sv_em_basis *br = &m->basis[r];
        if (br->kind != bc->kind || abs(br->i - bc->i) > s.R || abs(br->j - bc->j) > s.R) continue;
        sv_em_walls_rooftop_current(m, r, &cr);
        int di = br->i - bc->i, dj = br->j - bc->j;
        int along_x = bc->kind == SV_EM_UNKNOWN_X, da = along_x ? di : dj, dc = along_x ? dj : di;
        lcol[r - c] += current_delta(m, &s, NULL, &cc, &cr, da, dc);
    }
    free(s.cn);
}

/* G's factor for two unknowns of one axis sharing a cell: their currents'
 * overlap on the face and on the walls they share, relative to the sheet's
 * (current density share/width on the face, share/t on a wall). */
double sv_em_walls_gram_factor(const sv_em_model *m, int q, int o)
{
    if (!m->prj->st.thick_metal) return 1;
    current a = {.share = {1}}, b = {.share = {1}};
    if (q < m->nx_edges + m->ny_edges) sv_em_walls_rooftop_current(m, q, &a);
    if (o < m->nx_edges + m->ny_edges) sv_em_walls_rooftop_current(m, o, &b);
    double width = sv_em_basis_axis(&m->basis[q]) ? m->prj->grid.dx : m->prj->grid.dy;
    double f = a.share[0] * b.share[0];
    for (int u = 0; u < a.nw; u++)
        for (int v = 0; v < b.nw; v++)
            if (fabs(a.wall[u] - b.wall[v]) < 1e-9 * width) f += a.share[u + 1] * b.share[v + 1] * width / m->prj->st.t;
    return f;
}
