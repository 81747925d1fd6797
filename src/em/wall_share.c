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

/* ---- the Ritz steps' matrices and energies ---- */

/* For a solution x, Σ x_a·x_b·δ(a, b; κ) as a function of κ: its κ-free
 * sums by the classes of walls of the pairs (sv_em_walls_pair). */
typedef struct walls_energy {
    double A;                      /* a cell's face area, a rooftop's width */
    double T[9];                   /* the wall area (height sum) of each class */
    double S0[81], S1[81], S2[81]; /* by class pair: Σ x·x·p00, Σ x·x·F, Σ x·x·W */
} walls_energy;

/* The list cells (pos[cell] ≥ 0) within range of cell (ci, cj) whose pair
 * with it has walls: their list positions and parts (room for (2R + 1)²). */
static int near_parts(const sv_em_model *m, const series *s, const walls_tables *tb, const double complex *p00,
                      const int *pos, int ci, int cj, int *who, pair_parts *pp)
{
    const sv_em_project *p = m->prj;
    int n = 0, R = s->R;
    for (int bj = cj - R; bj <= cj + R; bj++)
        for (int bi = ci - R; bi <= ci + R; bi++) {
            if (!sv_em_walls_metal_at(p, bi, bj) || pos[bi + (size_t)p->grid.nx * bj] < 0) continue;
            if (sv_em_walls_pair_make(m, s, tb, ci, cj, bi, bj, p00[abs(bi - ci) + (R + 1) * abs(bj - cj)], &pp[n]))
                who[n++] = pos[bi + (size_t)p->grid.nx * bj];
        }
    return n;
}

/* What both uses share: the series, the tables and their views, each
 * thread's room for a cell's pairs, and the list's positions by cell. */
typedef struct share_work {
    series s;
    sv_em_walls_tables *w;
    int own, box;
    walls_tables tb;
    current_tables ct;
    const double complex *p00;
    int *pos, *who;
    pair_parts *pp;
} share_work;

static void share_work_free(sv_ctx *ctx, share_work *k)
{
    if (k->own) sv_free(ctx, k->w);
    free(k->s.cn);
    sv_free(ctx, k->pos);
    sv_free(ctx, k->who);
    sv_free(ctx, k->pp);
}

static sv_status share_work_make(sv_ctx *ctx, const sv_em_model *m, const int *cells, int nc, share_work *k)
{
    *k = (share_work){0};
    sv_em_walls_series_make(m, &k->s);
    if (!k->s.cn) return sv_error(SV_ERR_NOMEM, "em walls: no memory for the image series");
    k->w = sv_em_walls_tables_for(ctx, m, &k->s, &k->own);
    size_t ncell = (size_t)m->prj->grid.nx * m->prj->grid.ny, team = (size_t)sv_threads_team();
    k->box = (2 * k->s.R + 1) * (2 * k->s.R + 1);
    k->pos = k->w ? sv_alloc(ctx, sizeof(int) * (ncell ? ncell : 1), "em wall share") : NULL;
    k->who = k->pos ? sv_alloc(ctx, sizeof(int) * team * k->box, "em wall share") : NULL;
    k->pp = k->who ? sv_alloc(ctx, sizeof(pair_parts) * team * k->box, "em wall share") : NULL;
    if (!k->pp) {
        sv_status st = sv_last_status();
        share_work_free(ctx, k);
        return st;
    }
    sv_em_walls_tables_view(k->w, &k->tb, &k->ct, &k->p00);
    for (size_t c = 0; c < ncell; c++) k->pos[c] = -1;
    for (int q = 0; q < nc; q++) k->pos[cells[q]] = q;
    return SV_OK;
}

/* The real part of the cells' P (cells[q] = i + nx·j, every one with
 * charge) with their walls at κ, into the lower triangle of P (nc × nc,
 * column-major). */
static sv_status cells_matrix(sv_ctx *ctx, const sv_em_model *m, const int *cells, int nc, double kappa, double *P)
{
    const sv_em_project *p = m->prj;
    int nx = p->grid.nx, i0 = nx, i1 = 0, j0 = p->grid.ny, j1 = 0;
    for (int q = 0; q < nc; q++) {
        int i = cells[q] % nx, j = cells[q] / nx;
        i0 = i < i0 ? i : i0, i1 = i > i1 ? i : i1, j0 = j < j0 ? j : j0, j1 = j > j1 ? j : j1;
    }
    if (nc == 0) return SV_OK;
    int bw = i1 - i0 + 1, bh = j1 - j0 + 1;
    share_work k;
    sv_status st = share_work_make(ctx, m, cells, nc, &k);
    if (st) return st;
    double *off = sv_alloc(ctx, sizeof(double) * (size_t)bw * bh, "em wall share");
    if (!off) st = sv_last_status();
    if (!st) {
        /* the faces' P by offset over the cells' box, then every pair */
#pragma omp parallel for schedule(dynamic, 16) num_threads(sv_threads_team())
        for (int q = 0; q < bw * bh; q++) off[q] = creal(sv_em_walls_p_faces(m, q % bw, q / bw, 0));
#pragma omp parallel num_threads(sv_threads_team())
        {
            int *who = k.who + (size_t)omp_get_thread_num() * k.box;
            pair_parts *pp = k.pp + (size_t)omp_get_thread_num() * k.box;
#pragma omp for schedule(dynamic, 8)
            for (int b = 0; b < nc; b++) {
                int bi = cells[b] % nx, bj = cells[b] / nx;
                double *col = P + (size_t)nc * b;
                for (int a = b; a < nc; a++)
                    col[a] = off[abs(cells[a] % nx - bi) + (size_t)bw * abs(cells[a] / nx - bj)];
                int n = near_parts(m, &k.s, &k.tb, k.p00, k.pos, bi, bj, who, pp);
                for (int e = 0; e < n; e++)
                    if (who[e] >= b) col[who[e]] += creal(sv_em_walls_pair_delta(&pp[e], sv_em_walls_cell_area(m), kappa));
            }
        }
    }
    sv_free(ctx, off);
    share_work_free(ctx, &k);
    return st;
}

/* A cell's class: its exposed walls across x (0–2) and across y (0–2). */
static int wall_class(const sv_em_model *m, int i, int j)
{
    const sv_em_project *p = m->prj;
    return (!sv_em_walls_metal_at(p, i - 1, j) + !sv_em_walls_metal_at(p, i + 1, j)) * 3 + !sv_em_walls_metal_at(p, i, j - 1) + !sv_em_walls_metal_at(p, i, j + 1);
}

/* For charges x on those cells, the energy's κ-free class sums. */
static sv_status cells_energy(sv_ctx *ctx, const sv_em_model *m, const int *cells, int nc, const double *x,
                                   walls_energy *e)
{
    const sv_em_project *p = m->prj;
    double dx = p->grid.dx, dy = p->grid.dy, t = p->st.t;
    *e = (walls_energy){.A = dx * dy};
    for (int c = 0; c < 9; c++) e->T[c] = t * ((c / 3) * dy + (c % 3) * dx);
    share_work k;
    sv_status st = share_work_make(ctx, m, cells, nc, &k);
    if (st) return st;
    int nx = p->grid.nx;
#pragma omp parallel num_threads(sv_threads_team())
    {
        int *who = k.who + (size_t)omp_get_thread_num() * k.box;
        pair_parts *pp = k.pp + (size_t)omp_get_thread_num() * k.box;
        double s0[81] = {0}, s1[81] = {0}, s2[81] = {0};
#pragma omp for schedule(dynamic, 8)
        for (int a = 0; a < nc; a++) {
            int ai = cells[a] % nx, aj = cells[a] / nx, ca = wall_class(m, ai, aj);
            int n = near_parts(m, &k.s, &k.tb, k.p00, k.pos, ai, aj, who, pp);
            for (int q = 0; q < n; q++) {
                int b = who[q], cb = wall_class(m, cells[b] % nx, cells[b] / nx);
                double xx = x[a] * x[b];
                s0[ca * 9 + cb] += xx * creal(pp[q].p00);
                s1[ca * 9 + cb] += xx * creal(pp[q].F);
                s2[ca * 9 + cb] += xx * creal(pp[q].W);
            }
        }
#pragma omp critical
        for (int c = 0; c < 81; c++) {
            e->S0[c] += s0[c];
            e->S1[c] += s1[c];
            e->S2[c] += s2[c];
        }
    }
    share_work_free(ctx, &k);
    return SV_OK;
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

/* The rooftops of an axis: unknowns [q0, q0 + n). */
static void axis_rooftops(const sv_em_model *m, int axis, int *q0, int *n)
{
    *q0 = axis ? m->nx_edges : 0;
    *n = axis ? m->ny_edges : m->nx_edges;
}

/* The pairs of rooftop c with the rooftops of its axis within range whose
 * pair has walls (both orders: every r): their indices and parts. */
static int near_current_parts(const sv_em_model *m, const share_work *k, const int *map, int c, int *who,
                              pair_parts *pp)
{
    const sv_em_project *p = m->prj;
    int nx = p->grid.nx, ny = p->grid.ny, R = k->s.R, n = 0;
    const sv_em_basis *bc = &m->basis[c];
    current cc, cr;
    sv_em_walls_rooftop_current(m, c, &cc);
    for (int dj = -R; dj <= R; dj++)
        for (int di = -R; di <= R; di++) {
            int i = bc->i + di, j = bc->j + dj;
            if (i < 0 || j < 0 || i >= nx || j >= ny) continue;
            int r = map[(size_t)bc->kind * nx * ny + i + (size_t)nx * j];
            if (r < 0) continue;
            sv_em_walls_rooftop_current(m, r, &cr);
            if (cc.nw == 0 && cr.nw == 0) continue;
            sv_em_walls_current_parts(m, &k->s, &k->ct, &cc, &cr, bc->kind == 0 ? di : dj, bc->kind == 0 ? dj : di, &pp[n]);
            who[n++] = r;
        }
    return n;
}

/* The real L of an axis's rooftops (unknowns q0 = 0 for x, nx_edges for
 * y; n of them) with their walls at κ, into the lower triangle of L. */
static sv_status rooftops_matrix(sv_ctx *ctx, const sv_em_model *m, int axis, double kappa, double *L)
{
    int q0, n;
    axis_rooftops(m, axis, &q0, &n);
    if (n == 0) return SV_OK;
    int i0 = m->prj->grid.nx, i1 = 0, j0 = m->prj->grid.ny, j1 = 0;
    for (int q = q0; q < q0 + n; q++) {
        const sv_em_basis *b = &m->basis[q];
        i0 = b->i < i0 ? b->i : i0, i1 = b->i > i1 ? b->i : i1, j0 = b->j < j0 ? b->j : j0, j1 = b->j > j1 ? b->j : j1;
    }
    int bw = i1 - i0 + 1, bh = j1 - j0 + 1;
    share_work k;
    sv_status st = share_work_make(ctx, m, NULL, 0, &k);
    if (st) return st;
    int *map = sv_em_walls_rooftop_map(ctx, m);
    double *off = map ? sv_alloc(ctx, sizeof(double) * (size_t)bw * bh, "em wall share") : NULL;
    if (!off) st = sv_last_status();
    if (!st) {
        /* the faces' L by offset over the rooftops' box, then every pair */
#pragma omp parallel for schedule(dynamic, 16) num_threads(sv_threads_team())
        for (int q = 0; q < bw * bh; q++) off[q] = sv_em_L_rooftops(m, axis, q % bw, q / bw, 0);
#pragma omp parallel num_threads(sv_threads_team())
        {
            int *who = k.who + (size_t)omp_get_thread_num() * k.box;
            pair_parts *pp = k.pp + (size_t)omp_get_thread_num() * k.box;
#pragma omp for schedule(dynamic, 8)
            for (int b = 0; b < n; b++) {
                const sv_em_basis *bb = &m->basis[q0 + b];
                double *col = L + (size_t)n * b;
                for (int a = b; a < n; a++) {
                    const sv_em_basis *ba = &m->basis[q0 + a];
                    col[a] = off[abs(ba->i - bb->i) + (size_t)bw * abs(ba->j - bb->j)];
                }
                int got = near_current_parts(m, &k, map, q0 + b, who, pp);
                double w = axis ? m->prj->grid.dx : m->prj->grid.dy;
                for (int e = 0; e < got; e++)
                    if (who[e] - q0 >= b) col[who[e] - q0] += creal(sv_em_walls_pair_delta(&pp[e], w, kappa));
            }
        }
    }
    sv_free(ctx, off);
    sv_free(ctx, map);
    share_work_free(ctx, &k);
    return st;
}

/* For currents cur on them, the energy's κ-free sums by the rooftops'
 * wall counts (classes 0–2). */
static sv_status rooftops_energy(sv_ctx *ctx, const sv_em_model *m, int axis, const double *cur,
                                     walls_energy *e)
{
    const sv_em_project *p = m->prj;
    int q0, n;
    axis_rooftops(m, axis, &q0, &n);
    *e = (walls_energy){.A = axis ? p->grid.dx : p->grid.dy};
    for (int c = 0; c < 3; c++) e->T[c] = c * p->st.t;
    share_work k;
    sv_status st = share_work_make(ctx, m, NULL, 0, &k);
    if (st) return st;
    int *map = sv_em_walls_rooftop_map(ctx, m);
    if (!map) st = sv_last_status();
    if (!st) {
#pragma omp parallel num_threads(sv_threads_team())
        {
            int *who = k.who + (size_t)omp_get_thread_num() * k.box;
            pair_parts *pp = k.pp + (size_t)omp_get_thread_num() * k.box;
            double s0[9] = {0}, s1[9] = {0}, s2[9] = {0}; /* by the two rooftops' wall counts */
#pragma omp for schedule(dynamic, 16)
            for (int c = 0; c < n; c++) {
                int got = near_current_parts(m, &k, map, q0 + c, who, pp);
                for (int q = 0; q < got; q++) {
                    int cls = (int)lround(pp[q].Ta / p->st.t) * 3 + (int)lround(pp[q].Tb / p->st.t);
                    double ii = cur[c] * cur[who[q] - q0];
                    s0[cls] += ii * creal(pp[q].p00);
                    s1[cls] += ii * creal(pp[q].F);
                    s2[cls] += ii * creal(pp[q].W);
                }
            }
#pragma omp critical
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++) {
                    e->S0[a * 9 + b] += s0[a * 3 + b];
                    e->S1[a * 9 + b] += s1[a * 3 + b];
                    e->S2[a * 9 + b] += s2[a * 3 + b];
                }
        }
    }
    sv_free(ctx, map);
    share_work_free(ctx, &k);
    return st;
}

/* ---- the Ritz steps ---- */

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

/* A Ritz problem: the charge's (the cells) or an axis's current (its
 * rooftops); its matrix at κ (lower triangle), and its energy parts for
 * the solution x. */
typedef struct problem {
    int current;      /* 0 the charge, 1 the current */
    int axis;         /* the current's: its rooftops' axis */
    int n;            /* the order */
    const int *cells; /* the charge's cells */
} problem;

static sv_status problem_matrix(sv_ctx *ctx, const sv_em_model *m, const problem *pb, double kappa, double *M)
{
    if (pb->current) return rooftops_matrix(ctx, m, pb->axis, kappa, M);
    return cells_matrix(ctx, m, pb->cells, pb->n, kappa, M);
}

static sv_status problem_energy(sv_ctx *ctx, const sv_em_model *m, const problem *pb, const double *x,
                                walls_energy *e)
{
    if (pb->current) return rooftops_energy(ctx, m, pb->axis, x, e);
    return cells_energy(ctx, m, pb->cells, pb->n, x, e);
}

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
 * κ = 1, until κ moves by less than SHARE_TOL. */
static sv_status ritz(sv_ctx *ctx, const sv_em_model *m, const problem *pb, double *kappa)
{
    *kappa = 1;
    if (pb->n == 0) return SV_OK;
    sv_status st = SV_OK;
    double *M = sv_alloc(ctx, sizeof(double) * (size_t)pb->n * pb->n, "em wall share (a dense matrix of the metal)");
    double *x = M ? sv_alloc(ctx, sizeof(double) * (size_t)pb->n, "em wall share") : NULL;
    if (!x) st = sv_last_status();
    double k = 1;
    for (int round = 0; round < SHARE_ROUNDS && !st; round++) {
        walls_energy e;
        st = problem_matrix(ctx, m, pb, k, M);
        if (!st) st = unit_solve(pb->n, k, M, x);
        if (!st) st = problem_energy(ctx, m, pb, x, &e);
        if (st) break;
        double next = best_share(&e);
        int done = fabs(log(next / k)) < SHARE_TOL;
        k = next;
        if (done) break;
    }
    if (!st) *kappa = k;
    sv_free(ctx, x);
    sv_free(ctx, M);
    return st;
}

sv_status sv_em_walls_choose_shares(sv_ctx *ctx, const sv_em_model *m, double *charge, double currents[2])
{
    const sv_em_project *p = m->prj;
    int tall = p->st.t >= 0.5 * fmin(p->grid.dx, p->grid.dy);
    sv_status st = SV_OK;
    if (*charge == 0 && !tall) *charge = 1;
    if (*charge == 0) {
        int *cells = NULL, nc = 0;
        st = charged_cells(ctx, m, &cells, &nc);
        problem pb = {.n = nc, .cells = cells};
        if (!st) st = ritz(ctx, m, &pb, charge);
        sv_free(ctx, cells);
    }
    for (int ax = 0; ax < 2 && !st; ax++) {
        if (currents[ax] == 0 && !tall) currents[ax] = 1;
        if (currents[ax] != 0) continue;
        problem pb = {.current = 1, .axis = ax, .n = ax ? m->ny_edges : m->nx_edges};
        st = ritz(ctx, m, &pb, &currents[ax]);
    }
    return st;
}
