/* Thick metal: the walls' shares of a cell's charge and of a rooftop's
 * current, by Ritz steps.
 *
 * A cell's charge lies on its face and on the walls of its exposed edges,
 * a rooftop's current on its face and on the walls along it (walls.c), the
 * walls' mean density κ times the face's. Every κ gives a variational
 * bound (a fixed trial distribution on each cell and rooftop): a lower one
 * of the capacitance, an upper one of the inductance. So the best κ is the
 * one with the largest capacitance of the whole metal at one potential,
 * C(κ) = 1ᵀ·P(κ)⁻¹·1 over the cells, and for the current of each axis the
 * one with the smallest inductance under a uniform field along it, i.e.
 * the largest 1ᵀ·L(κ)⁻¹·1 over that axis's rooftops (L couples no x- and
 * y-directed currents, so a share per axis is a two-parameter Ritz step
 * that separates). Each is max over x of 2·1ᵀx − xᵀM(κ)x, maximised
 * alternately in x (a Cholesky solve) and in κ at fixed x (xᵀM(κ)x, whose
 * κ-dependence is a few class sums: energy_at), which raises it every
 * round.
 *
 * Equal densities (κ = 1) put most of an edge cell's charge high on a wall
 * that is taller than the cell is wide. The steps run only for walls at
 * least half a cell tall: below, κ = 1 is within 0.01 % of the best
 * capacitance, and the current's step, which would lower L by about 0.5 %,
 * overstates the conductor loss (α_c +24 % of Hammerstad–Jensen's) and
 * costs a fifth of the bundled example's sweep (docs/em.md). */
#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "em_internal.h"
#include "geom.h"
#include "walls_parts.h"

/* The walls' parts by short names (walls_parts.h). */
typedef sv_em_walls_series series;
typedef sv_em_walls_charge_tables walls_tables;
typedef sv_em_walls_current_tables current_tables;
typedef sv_em_walls_pair pair_parts;
typedef sv_em_walls_current current;

/* κ is sought in [1/64, 4], to 1 % (the capacitance is flat near its top). */
#define SHARE_LO (1.0 / 64)
#define SHARE_HI 4.0
#define SHARE_TOL 0.01
#define SHARE_ROUNDS 8

/* ---- a Ritz problem ---- */

/* For a solution x, Σ x_a·x_b·δ(a, b; κ) as a function of κ: its κ-free
 * sums by the classes of walls of the pairs (sv_em_walls_pair). */
typedef struct walls_energy {
    double A;                      /* a cell's face area, a rooftop's width */
    double T[9];                   /* the wall area (height sum) of each class */
    double S0[81], S1[81], S2[81]; /* by class pair: Σ x·x·p00, Σ x·x·F, Σ x·x·W */
} walls_energy;

/* A Ritz problem: the charge's, over the cells that carry charge, or an
 * axis's current, over its rooftops (unknowns q0 … q0 + n − 1). What its
 * rounds share is made once: the series, the views of the model's wall
 * tables, the faces' coefficients by offset, each item's class of walls. */
typedef struct problem {
    int current, axis, n, q0;
    int *cells;  /* the charge's: i + nx·j of each */
    int *pos;    /* the charge's: each cell's place in the list, or −1 */
    int *map;    /* the current's: sv_em_walls_rooftop_map */
    int *cls;    /* each item's class of walls */
    double *off; /* the faces' P or L by |offset| over the items' box, bw wide */
    int bw;
    double A, T[9]; /* a face's area or width; each class's wall area or height */
    series s;
    walls_tables tb;
    current_tables ct;
    const double complex *p00;
    int box, *who; /* each thread's room for an item's pairs: (2R + 1)² */
    pair_parts *pp;
} problem;

/* The metal cells that carry charge (some unknown has divergence there). */
static sv_status charged_cells(sv_ctx *ctx, const sv_em_model *m, int **cells, int *nc)
{
    const sv_em_project *p = m->prj;
    size_t ncell = (size_t)p->grid.nx * p->grid.ny;
    unsigned char *mark = sv_calloc(ctx, ncell ? ncell : 1, 1, "em wall share");
    *cells = mark ? sv_alloc(ctx, sizeof(int) * (ncell ? ncell : 1), "em wall share") : NULL;
    if (!*cells) {
        sv_free(ctx, mark);
        return sv_last_status();
    }
    int ci[2], cj[2], sg[2];
    for (int q = 0; q < m->n; q++) {
        int k = sv_em_div_cells(m, q, ci, cj, sg);
        for (int e = 0; e < k; e++) mark[ci[e] + (size_t)p->grid.nx * cj[e]] = 1;
    }
    *nc = 0;
    for (size_t c = 0; c < ncell; c++)
        if (mark[c]) (*cells)[(*nc)++] = (int)c;
    sv_free(ctx, mark);
    return SV_OK;
}

/* A cell's class: its exposed walls across x (0–2) and across y (0–2). */
static int wall_class(const sv_em_model *m, int i, int j)
{
    const sv_em_project *p = m->prj;
    return (!sv_em_walls_metal_at(p, i - 1, j) + !sv_em_walls_metal_at(p, i + 1, j)) * 3 +
           !sv_em_walls_metal_at(p, i, j - 1) + !sv_em_walls_metal_at(p, i, j + 1);
}

/* Item q's cell (a rooftop's: the lower-left of its two). */
static void item_at(const sv_em_model *m, const problem *pb, int q, int *i, int *j)
{
    if (pb->current) {
        *i = m->basis[pb->q0 + q].i;
        *j = m->basis[pb->q0 + q].j;
    } else {
        *i = pb->cells[q] % m->prj->grid.nx;
        *j = pb->cells[q] / m->prj->grid.nx;
    }
}

/* The items within range of item q whose pair with it has walls (every
 * one, both orders): their places in the list and their parts. */
static int partners(const sv_em_model *m, const problem *pb, int q, int *who, pair_parts *pp)
{
    const sv_em_project *p = m->prj;
    int nx = p->grid.nx, ny = p->grid.ny, R = pb->s.R, n = 0, ci, cj;
    item_at(m, pb, q, &ci, &cj);
    if (!pb->current) {
        for (int bj = cj - R; bj <= cj + R; bj++)
            for (int bi = ci - R; bi <= ci + R; bi++) {
                if (!sv_em_walls_metal_at(p, bi, bj) || pb->pos[bi + (size_t)nx * bj] < 0) continue;
                if (sv_em_walls_pair_make(m, &pb->s, &pb->tb, ci, cj, bi, bj,
                                          pb->p00[abs(bi - ci) + (R + 1) * abs(bj - cj)], &pp[n]))
                    who[n++] = pb->pos[bi + (size_t)nx * bj];
            }
        return n;
    }
    int axis = sv_em_basis_axis(&m->basis[pb->q0 + q]);
    current cc, cr;
    sv_em_walls_rooftop_current(m, pb->q0 + q, &cc);
    for (int dj = -R; dj <= R; dj++)
        for (int di = -R; di <= R; di++) {
            int i = ci + di, j = cj + dj;
            if (i < 0 || j < 0 || i >= nx || j >= ny) continue;
            int r = pb->map[(size_t)axis * nx * ny + i + (size_t)nx * j];
            if (r < 0) continue;
            sv_em_walls_rooftop_current(m, r, &cr);
            if (cc.nw == 0 && cr.nw == 0) continue;
            sv_em_walls_current_parts(m, &pb->s, &pb->ct, &cc, &cr, axis ? dj : di, axis ? di : dj, &pp[n]);
            who[n++] = r - pb->q0;
        }
    return n;
}

static void problem_free(sv_ctx *ctx, problem *pb)
{
    free(pb->s.cn);
    sv_free_each(ctx, (void *const[]){pb->cells, pb->pos, pb->map, pb->cls, pb->off, pb->who, pb->pp}, 7);
    *pb = (problem){0};
}

/* The items, their positions and the tables (the charge's, or the
 * current's of an axis). */
static sv_status problem_items(sv_ctx *ctx, const sv_em_model *m, problem *pb)
{
    const sv_em_project *p = m->prj;
    size_t ncell = (size_t)p->grid.nx * p->grid.ny;
    if (pb->current) {
        pb->q0 = pb->axis ? m->nx_edges : 0;
        pb->n = pb->axis ? m->ny_edges : m->nx_edges;
        pb->map = sv_em_walls_rooftop_map(ctx, m);
        return pb->map ? SV_OK : sv_last_status();
    }
    sv_status st = charged_cells(ctx, m, &pb->cells, &pb->n);
    pb->pos = st ? NULL : sv_alloc(ctx, sizeof(int) * (ncell ? ncell : 1), "em wall share");
    if (!pb->pos) return st ? st : sv_last_status();
    for (size_t c = 0; c < ncell; c++) pb->pos[c] = -1;
    for (int q = 0; q < pb->n; q++) pb->pos[pb->cells[q]] = q;
    return SV_OK;
}

/* The faces' coefficients by offset over the items' box, each item's
 * class, and each class's wall area (the charge's) or height (a
 * rooftop's). */
static sv_status problem_faces(sv_ctx *ctx, const sv_em_model *m, problem *pb)
{
    const sv_em_project *p = m->prj;
    double dx = p->grid.dx, dy = p->grid.dy, t = p->st.t;
    int i0 = p->grid.nx, i1 = 0, j0 = p->grid.ny, j1 = 0;
    for (int q = 0; q < pb->n; q++) {
        int i, j;
        item_at(m, pb, q, &i, &j);
        i0 = i < i0 ? i : i0, i1 = i > i1 ? i : i1, j0 = j < j0 ? j : j0, j1 = j > j1 ? j : j1;
    }
    int bw = i1 - i0 + 1, bh = j1 - j0 + 1;
    pb->bw = bw;
    pb->off = sv_alloc(ctx, sizeof(double) * (size_t)bw * bh, "em wall share");
    pb->cls = pb->off ? sv_alloc(ctx, sizeof(int) * (size_t)pb->n, "em wall share") : NULL;
    if (!pb->cls) return sv_last_status();
#pragma omp parallel for schedule(dynamic, 16) num_threads(sv_threads_team())
    for (int q = 0; q < bw * bh; q++)
        pb->off[q] = pb->current ? sv_em_L_rooftops(m, pb->axis, q % bw, q / bw, 0)
                                 : creal(sv_em_walls_p_faces(m, q % bw, q / bw, 0));
    for (int q = 0; q < pb->n; q++) {
        int i, j;
        item_at(m, pb, q, &i, &j);
        current c;
        if (pb->current) sv_em_walls_rooftop_current(m, pb->q0 + q, &c);
        pb->cls[q] = pb->current ? c.nw : wall_class(m, i, j);
    }
    pb->A = pb->current ? (pb->axis ? dx : dy) : dx * dy;
    for (int c = 0; c < 9; c++) pb->T[c] = pb->current ? c * t : t * ((c / 3) * dy + (c % 3) * dx);
    return SV_OK;
}

/* The problem of the charge (of_current 0) or of an axis's current, with all
 * its rounds need; nothing allocated when it has no items. */
static sv_status problem_make(sv_ctx *ctx, const sv_em_model *m, int of_current, int axis, problem *pb)
{
    *pb = (problem){.current = of_current, .axis = axis};
    sv_status st = problem_items(ctx, m, pb);
    if (!st && pb->n > 0) {
        sv_em_walls_series_make(m, &pb->s);
        if (!pb->s.cn) st = sv_error(SV_ERR_NOMEM, "em walls: no memory for the image series");
    }
    if (!st && pb->n > 0) {
        size_t team = (size_t)sv_threads_team();
        pb->box = (2 * pb->s.R + 1) * (2 * pb->s.R + 1);
        pb->who = sv_alloc(ctx, sizeof(int) * team * pb->box, "em wall share");
        pb->pp = pb->who ? sv_alloc(ctx, sizeof(pair_parts) * team * pb->box, "em wall share") : NULL;
        st = pb->pp ? problem_faces(ctx, m, pb) : sv_last_status();
    }
    if (!st && pb->n > 0) sv_em_walls_tables_view(m->walls, &pb->tb, &pb->ct, &pb->p00);
    if (st) problem_free(ctx, pb);
    return st;
}

/* The problem's real matrix (the cells' P or the rooftops' L) with the
 * walls at κ, into the lower triangle of M (n × n, column-major). */
static void problem_matrix(const sv_em_model *m, const problem *pb, double kappa, double *M)
{
    const int n = pb->n;
#pragma omp parallel num_threads(sv_threads_team())
    {
        int *who = pb->who + (size_t)omp_get_thread_num() * pb->box;
        pair_parts *pp = pb->pp + (size_t)omp_get_thread_num() * pb->box;
#pragma omp for schedule(dynamic, 8)
        for (int b = 0; b < n; b++) {
            int bi, bj;
            item_at(m, pb, b, &bi, &bj);
            double *col = M + (size_t)n * b;
            for (int a = b; a < n; a++) {
                int ai, aj;
                item_at(m, pb, a, &ai, &aj);
                col[a] = pb->off[abs(ai - bi) + (size_t)pb->bw * abs(aj - bj)];
            }
            int got = partners(m, pb, b, who, pp);
            for (int e = 0; e < got; e++)
                if (who[e] >= b) col[who[e]] += creal(sv_em_walls_pair_delta(&pp[e], pb->A, kappa));
        }
    }
}

/* For the solution x, the energy's κ-free class sums. */
static void problem_energy(const sv_em_model *m, const problem *pb, const double *x, walls_energy *e)
{
    *e = (walls_energy){.A = pb->A};
    memcpy(e->T, pb->T, sizeof e->T);
#pragma omp parallel num_threads(sv_threads_team())
    {
        int *who = pb->who + (size_t)omp_get_thread_num() * pb->box;
        pair_parts *pp = pb->pp + (size_t)omp_get_thread_num() * pb->box;
        double s0[81] = {0}, s1[81] = {0}, s2[81] = {0};
#pragma omp for schedule(dynamic, 8)
        for (int a = 0; a < pb->n; a++) {
            int got = partners(m, pb, a, who, pp);
            for (int q = 0; q < got; q++) {
                int c = pb->cls[a] * 9 + pb->cls[who[q]];
                double xx = x[a] * x[who[q]];
                s0[c] += xx * creal(pp[q].p00);
                s1[c] += xx * creal(pp[q].F);
                s2[c] += xx * creal(pp[q].W);
            }
        }
#pragma omp critical
        for (int c = 0; c < 81; c++) {
            e->S0[c] += s0[c];
            e->S1[c] += s1[c];
            e->S2[c] += s2[c];
        }
    }
}

static double energy_at(const walls_energy *e, double kappa)
{
    double sum = 0;
    for (int ca = 0; ca < 9; ca++)
        for (int cb = 0; cb < 9; cb++) {
            pair_parts pp = {.p00 = e->S0[ca * 9 + cb], .F = e->S1[ca * 9 + cb], .W = e->S2[ca * 9 + cb],
                             .Ta = e->T[ca], .Tb = e->T[cb]};
            sum += creal(sv_em_walls_pair_delta(&pp, e->A, kappa));
        }
    return sum;
}

/* ---- the Ritz steps ---- */

/* x = M⁻¹·1 (M positive definite: a potential or an inductance matrix). */
static sv_status unit_solve(int n, double kappa, double *M, double *x)
{
    lapack_int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, M, n);
    if (info)
        return sv_error(SV_ERR_SINGULAR,
                        "em walls: the coefficients with walls at share %g are not positive definite (LAPACK "
                        "dpotrf: %d); the grid or stack-up is outside the model's range",
                        kappa, (int)info);
    for (int q = 0; q < n; q++) x[q] = 1;
    info = LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', n, 1, M, n, x, n);
    return info ? sv_error(SV_ERR_INTERNAL, "em walls: LAPACK dpotrs: %d", (int)info) : SV_OK;
}

/* The κ in [SHARE_LO, SHARE_HI] that minimises xᵀM(κ)x: golden sections
 * in log κ (the function is smooth, with one minimum on every line and
 * circuit tried). */
static double best_share(const walls_energy *e)
{
    const double g = 0.5 * (sqrt(5.0) - 1);
    double a = log(SHARE_LO), b = log(SHARE_HI);
    double c = b - g * (b - a), d = a + g * (b - a);
    double fc = energy_at(e, exp(c)), fd = energy_at(e, exp(d));
    while (b - a > 1e-4) {
        if (fc < fd) {
            b = d, d = c, fd = fc;
            c = b - g * (b - a);
            fc = energy_at(e, exp(c));
        } else {
            a = c, c = d, fc = fd;
            d = a + g * (b - a);
            fd = energy_at(e, exp(d));
        }
    }
    return exp(0.5 * (a + b));
}

/* Alternate rounds of x = M(κ)⁻¹·1 and the κ that minimises xᵀM(κ)x, from
 * κ = 1, until κ moves by less than SHARE_TOL: the charge's (of_current 0)
 * or an axis's current's share. */
static sv_status ritz(sv_ctx *ctx, const sv_em_model *m, int of_current, int axis, double *kappa)
{
    *kappa = 1;
    problem pb;
    sv_status st = problem_make(ctx, m, of_current, axis, &pb);
    if (st || pb.n == 0) {
        problem_free(ctx, &pb);
        return st;
    }
    double *M = sv_alloc(ctx, sizeof(double) * (size_t)pb.n * pb.n, "em wall share (a dense matrix of the metal)");
    double *x = M ? sv_alloc(ctx, sizeof(double) * (size_t)pb.n, "em wall share") : NULL;
    if (!x) st = sv_last_status();
    double k = 1;
    for (int round = 0; round < SHARE_ROUNDS && !st; round++) {
        walls_energy e;
        problem_matrix(m, &pb, k, M);
        st = unit_solve(pb.n, k, M, x);
        if (st) break;
        problem_energy(m, &pb, x, &e);
        double next = best_share(&e);
        int done = fabs(log(next / k)) < SHARE_TOL;
        k = next;
        if (done) break;
    }
    if (!st) *kappa = k;
    sv_free(ctx, x);
    sv_free(ctx, M);
    problem_free(ctx, &pb);
    return st;
}

/* 1 when the walls are tall enough for the Ritz steps (below, the shares are 1). */
static int walls_tall(const sv_em_project *p) { return p->st.t >= 0.5 * fmin(p->grid.dx, p->grid.dy); }

/* A Ritz problem of n items at most: its dense matrix and solution, the
 * grid's lists (the charge's cells and places, or the rooftop map), the
 * faces' offsets over the grid and each thread's pairs. */
static size_t problem_bytes(const sv_em_project *p, size_t n)
{
    size_t grid = (size_t)p->grid.nx * p->grid.ny, range = 2 * (size_t)sv_em_walls_range(p) + 1;
    size_t box = range * range * (size_t)sv_threads_team();
    return sizeof(double) * (n * n + n + grid) + sizeof(int) * (2 * grid + n) + grid +
           box * (sizeof(int) + sizeof(pair_parts));
}

size_t sv_em_walls_share_bytes(const sv_em_model *m)
{
    const sv_em_project *p = m->prj;
    if (!p->st.thick_metal || !walls_tall(p)) return 0;
    size_t most = 0;
    if (m->opts.wall_share == 0) most = problem_bytes(p, (size_t)m->ncells);
    for (int ax = 0; ax < 2; ax++) {
        size_t n = (size_t)(ax ? m->ny_edges : m->nx_edges);
        if (m->opts.wall_current_share[ax] == 0 && problem_bytes(p, n) > most) most = problem_bytes(p, n);
    }
    return most;
}

sv_status sv_em_walls_choose_shares(sv_ctx *ctx, const sv_em_model *m, double *charge, double currents[2])
{
    const sv_em_project *p = m->prj;
    int tall = walls_tall(p);
    sv_status st = SV_OK;
    if (*charge == 0 && !tall) *charge = 1;
    if (*charge == 0) st = ritz(ctx, m, 0, 0, charge);
    for (int ax = 0; ax < 2 && !st; ax++) {
        if (currents[ax] == 0 && !tall) currents[ax] = 1;
        if (currents[ax] == 0) st = ritz(ctx, m, 1, ax, &currents[ax]);
    }
    return st;
}
