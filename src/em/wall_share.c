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
 * κ-dependence is a few class sums: sv_em_walls_energy_at), which raises
 * it every round.
 *
 * Equal densities (κ = 1) put most of an edge cell's charge high on a wall
 * that is taller than the cell is wide; below half a cell the walls carry
 * little of it and κ = 1 is within 0.01 % of the best capacitance
 * (docs/em.md), so the steps run only for taller walls. */
#include <lapacke.h>
#include <math.h>

#include "em_internal.h"
#include "geom.h"

/* κ is sought in [1/64, 4], to 1 % (the capacitance is flat near its top). */
#define SHARE_LO (1.0 / 64)
#define SHARE_HI 4.0
#define SHARE_TOL 0.01
#define SHARE_ROUNDS 8

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
    if (pb->current) return sv_em_walls_rooftops_L(ctx, m, pb->axis, kappa, M);
    return sv_em_walls_cells_P(ctx, m, pb->cells, pb->n, kappa, M);
}

static sv_status problem_energy(sv_ctx *ctx, const sv_em_model *m, const problem *pb, const double *x,
                                sv_em_walls_energy *e)
{
    if (pb->current) return sv_em_walls_current_energy(ctx, m, pb->axis, x, e);
    return sv_em_walls_energy_parts(ctx, m, pb->cells, pb->n, x, e);
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
static double best_share(const sv_em_walls_energy *e)
{
    const double g = 0.5 * (sqrt(5.0) - 1);
    double a = log(SHARE_LO), b = log(SHARE_HI);
    double c = b - g * (b - a), d = a + g * (b - a);
    double fc = sv_em_walls_energy_at(e, exp(c)), fd = sv_em_walls_energy_at(e, exp(d));
    while (b - a > 1e-4) {
        if (fc < fd) {
            b = d, d = c, fd = fc;
            c = b - g * (b - a);
            fc = sv_em_walls_energy_at(e, exp(c));
        } else {
            a = c, c = d, fc = fd;
            d = a + g * (b - a);
            fd = sv_em_walls_energy_at(e, exp(d));
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
        sv_em_walls_energy e;
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

sv_status sv_em_walls_choose_shares(sv_ctx *ctx, const sv_em_model *m, double *charge, double current[2])
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
        if (current[ax] == 0 && !tall) current[ax] = 1;
        if (current[ax] != 0) continue;
        problem pb = {.current = 1, .axis = ax, .n = ax ? m->ny_edges : m->nx_edges};
        st = ritz(ctx, m, &pb, &current[ax]);
    }
    return st;
}
