/* The DC limit of the model: as f → 0 the charge term −j·Ψ/ω forbids any
 * current that would charge a cell, so the currents are those of the
 * resistive network of the metal: cells joined by their rooftops (a bar of
 * one cell's length and width, t thick: conductance σ·t·w/d) and fed by the
 * ports' half cells (2σ·t·w/d). Ports on one piece of metal are joined by
 * its resistances, ports on separate pieces are open (their coupling is
 * capacitive), pieces without a port carry nothing. For lossless metal the
 * resistances vanish: connected ports are shorted together, and S is the
 * limit I − 2·Π with Π the projector on the range of R·Y·R (docs/em.md). */
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "em_internal.h"

typedef struct dc_net {
    int nc;          /* cells in the network (those on a piece with a port) */
    int *cell;       /* grid cell -> network index, −1 if not in it */
    double *diag;    /* nc: Σ conductances at the cell (branches and port edges) */
    double *pcond;   /* nc × P: port edges' conductance to each port */
} dc_net;

static int metal_at(const sv_em_project *p, int i, int j)
{
    if (i < 0 || j < 0 || i >= p->grid.nx || j >= p->grid.ny) return 0;
    return p->metal[i + (size_t)p->grid.nx * j];
}

/* Branch conductance per unit σ·t: along x w = dy, d = dx. */
static double branch(const sv_em_grid *g, int axis) { return axis == 0 ? g->dy / g->dx : g->dx / g->dy; }

/* Number the cells reachable from the ports (4-neighbour flood fill) and
 * label each with its piece of metal (comp); returns their count. */
static int dc_reach(const sv_em_model *m, int *mark, int *comp, int *stack)
{
    const sv_em_project *p = m->prj;
    int nx = p->grid.nx, n = 0, label = 0;
    static const int di[4] = {1, -1, 0, 0}, dj[4] = {0, 0, 1, -1};
    for (int q = m->nx_edges + m->ny_edges; q < m->n; q++) {
        int c0 = m->basis[q].i + nx * m->basis[q].j, top = 0;
        if (mark[c0] >= 0) continue;
        mark[c0] = n++;
        comp[c0] = label;
        stack[top++] = c0;
        while (top > 0) {
            int c = stack[--top], i = c % nx, j = c / nx;
            for (int k = 0; k < 4; k++)
                if (metal_at(p, i + di[k], j + dj[k])) {
                    int e = c + di[k] + nx * dj[k];
                    if (mark[e] < 0) {
                        mark[e] = n++;
                        comp[e] = label;
                        stack[top++] = e;
                    }
                }
        }
        label++;
    }
    return n;
}

/* y = (K + Gp)·x on the network (matrix-free: the grid is the pattern). */
static void dc_apply(const sv_em_model *m, const dc_net *net, const double *x, double *y)
{
    const sv_em_project *p = m->prj;
    int nx = p->grid.nx, ny = p->grid.ny;
    for (int c = 0; c < nx * ny; c++) {
        int a = net->cell[c];
        if (a < 0) continue;
        double s = net->diag[a] * x[a];
        int i = c % nx, j = c / nx;
        if (i + 1 < nx && net->cell[c + 1] >= 0) s -= branch(&p->grid, 0) * x[net->cell[c + 1]];
        if (i > 0 && net->cell[c - 1] >= 0) s -= branch(&p->grid, 0) * x[net->cell[c - 1]];
        if (j + 1 < ny && net->cell[c + nx] >= 0) s -= branch(&p->grid, 1) * x[net->cell[c + nx]];
        if (j > 0 && net->cell[c - nx] >= 0) s -= branch(&p->grid, 1) * x[net->cell[c - nx]];
        y[a] = s;
    }
}

/* Solve (K + Gp)·x = b by conjugate gradients with the diagonal as
 * preconditioner (K + Gp is symmetric positive definite: every piece in
 * the network is grounded through a port). w: 4·nc doubles. */
static sv_status dc_solve(const sv_em_model *m, const dc_net *net, const double *b, double *x, double *w)
{
    int n = net->nc;
    double *r = w, *z = w + n, *pv = w + 2 * n, *q = w + 3 * n, bn = 0;
    for (int k = 0; k < n; k++) {
        x[k] = 0;
        r[k] = b[k];
        z[k] = r[k] / net->diag[k];
        pv[k] = z[k];
        bn += b[k] * b[k];
    }
    double rz = 0;
    for (int k = 0; k < n; k++) rz += r[k] * z[k];
    if (bn == 0) return SV_OK;
    for (int it = 0; it < 20 * n + 100; it++) {
        dc_apply(m, net, pv, q);
        double pq = 0;
        for (int k = 0; k < n; k++) pq += pv[k] * q[k];
        double alpha = rz / pq, rn = 0;
        for (int k = 0; k < n; k++) {
            x[k] += alpha * pv[k];
            r[k] -= alpha * q[k];
            rn += r[k] * r[k];
        }
        if (rn <= 1e-28 * bn) return SV_OK;
        double rz2 = 0;
        for (int k = 0; k < n; k++) {
            z[k] = r[k] / net->diag[k];
            rz2 += r[k] * z[k];
        }
        for (int k = 0; k < n; k++) pv[k] = z[k] + rz2 / rz * pv[k];
        rz = rz2;
    }
    return sv_error(SV_ERR_NOCONV, "sv_em_dc: the resistive network's solve did not converge");
}

/* What the solve gives to its tolerance, exactly: no coupling between ports
 * on separate pieces, no current through a port alone on its piece, and
 * Kirchhoff's current law on each piece (no path to ground at DC: a
 * column's currents sum to zero), which makes the diagonal the negated sum
 * of its symmetrised couplings rather than a difference of two large
 * numbers that may leave Y a little active. */
static void dc_exact_zeros(const sv_em_model *m, const int *comp, double *y)
{
    int nx = m->prj->grid.nx, np = m->prj->nports, pc[np], alone[np];
    for (int k = 0; k < np; k++) pc[k] = -1;
    for (int q = m->nx_edges + m->ny_edges; q < m->n; q++)
        pc[m->basis[q].port] = comp[m->basis[q].i + nx * m->basis[q].j]; /* a port's edges: one piece */
    for (int k = 0; k < np; k++) {
        alone[k] = 1;
        for (int i = 0; i < np; i++) alone[k] &= i == k || pc[i] != pc[k];
    }
    for (int k = 0; k < np; k++)
        for (int i = 0; i < np; i++)
            if (pc[i] != pc[k] || (i == k && alone[k])) y[i + (size_t)np * k] = 0;
    for (int k = 0; k < np; k++)
        for (int i = k + 1; i < np; i++) {
            double c = 0.5 * (y[i + (size_t)np * k] + y[k + (size_t)np * i]);
            y[i + (size_t)np * k] = y[k + (size_t)np * i] = c;
        }
    for (int k = 0; k < np; k++) {
        double sum = 0;
        for (int i = 0; i < np; i++)
            if (i != k) sum += y[i + (size_t)np * k];
        if (!alone[k]) y[k + (size_t)np * k] = -sum;
    }
}

/* Y at DC per unit σ·t (P × P): Gp_k·δ − Pᵀ·(K + Gp)⁻¹·P. */
static sv_status dc_y_unit(sv_ctx *ctx, const sv_em_model *m, double *y)
{
    const sv_em_project *p = m->prj;
    int nx = p->grid.nx, ny = p->grid.ny, np = p->nports, ncell = nx * ny;
    dc_net net = {0};
    int *stack = sv_alloc(ctx, sizeof(int) * (size_t)ncell, "dc network");
    int *comp = sv_alloc(ctx, sizeof(int) * (size_t)ncell, "dc network");
    net.cell = sv_alloc(ctx, sizeof(int) * (size_t)ncell, "dc network");
    sv_status st = stack && comp && net.cell ? SV_OK : sv_last_status();
    double *work = NULL, *b = NULL, *x = NULL;
    if (!st) {
        for (int c = 0; c < ncell; c++) net.cell[c] = -1;
        net.nc = dc_reach(m, net.cell, comp, stack);
        size_t n = (size_t)net.nc;
        net.diag = sv_calloc(ctx, n, sizeof(double), "dc network");
        net.pcond = sv_calloc(ctx, n * np, sizeof(double), "dc network");
        work = sv_alloc(ctx, sizeof(double) * 4 * n, "dc network");
        b = sv_alloc(ctx, sizeof(double) * n, "dc network");
        x = sv_alloc(ctx, sizeof(double) * n, "dc network");
        if (!net.diag || !net.pcond || !work || !b || !x) st = sv_last_status();
    }
    if (!st) {
        for (int q = 0; q < m->nx_edges + m->ny_edges; q++) { /* the branches */
            const sv_em_basis *bq = &m->basis[q];
            int axis = sv_em_basis_axis(bq), c0 = bq->i + nx * bq->j, c1 = c0 + (axis == 0 ? 1 : nx);
            double g = branch(&p->grid, axis);
            if (net.cell[c0] >= 0) net.diag[net.cell[c0]] += g;
            if (net.cell[c1] >= 0) net.diag[net.cell[c1]] += g;
        }
        memset(y, 0, sizeof(double) * (size_t)np * np);
        for (int q = m->nx_edges + m->ny_edges; q < m->n; q++) { /* the port edges: half a cell */
            const sv_em_basis *bq = &m->basis[q];
            int a = net.cell[bq->i + nx * bq->j];
            double g = 2 * branch(&p->grid, sv_em_basis_axis(bq));
            net.diag[a] += g;
            net.pcond[(size_t)a * np + bq->port] += g;
            y[bq->port + (size_t)np * bq->port] += g;
        }
        for (int k = 0; k < np && !st; k++) {
            for (int a = 0; a < net.nc; a++) b[a] = net.pcond[(size_t)a * np + k];
            st = dc_solve(m, &net, b, x, work);
            for (int i = 0; i < np && !st; i++)
                for (int a = 0; a < net.nc; a++) y[i + (size_t)np * k] -= net.pcond[(size_t)a * np + i] * x[a];
        }
        dc_exact_zeros(m, comp, y);
    }
    sv_free(ctx, stack);
    sv_free(ctx, comp);
    sv_free(ctx, net.cell);
    sv_free(ctx, net.diag);
    sv_free(ctx, net.pcond);
    sv_free(ctx, work);
    sv_free(ctx, b);
    sv_free(ctx, x);
    return st;
}

sv_status sv_em_dc_admittance(sv_ctx *ctx, const sv_em_model *m, double *y)
{
    if (!m || !y) return sv_error(SV_ERR_ARG, "sv_em_dc_admittance: NULL argument");
    const sv_em_stackup *st = &m->prj->st;
    if (!isfinite(st->sigma))
        return sv_error(SV_ERR_ARG, "sv_em_dc_admittance: lossless metal: connected ports are shorted at DC "
                                    "(use sv_em_dc_s)");
    sv_status s = dc_y_unit(ctx, m, y);
    int np = m->prj->nports;
    for (int k = 0; !s && k < np * np; k++) y[k] *= st->sigma * st->t;
    return s;
}

/* S = I − 2·Π for the lossless limit: Π projects on the range of
 * A = R·Y·R (symmetric, positive semidefinite). */
static sv_status dc_s_shorted(int np, const double *y, const double *z0, double complex *s)
{
    double a[np * np], ev[np];
    for (int c = 0; c < np; c++)
        for (int r = 0; r < np; r++) a[r + np * c] = sqrt(z0[r]) * y[r + np * c] * sqrt(z0[c]);
    sv_threads_saved serial = sv_threads_serial_begin(); /* LAPACK on this thread (threads.c) */
    lapack_int info = LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'L', np, a, np, ev);
    sv_threads_restore(serial);
    if (info) return sv_error(SV_ERR_NOCONV, "sv_em_dc_s: eigenvalues of the DC network did not converge");
    double top = fabs(ev[np - 1]);
    for (int c = 0; c < np; c++)
        for (int r = 0; r < np; r++) {
            double proj = 0;
            for (int k = 0; k < np; k++)
                if (ev[k] > 1e-10 * top) proj += a[r + np * k] * a[c + np * k];
            s[r + np * c] = (r == c) - 2 * proj;
        }
    return SV_OK;
}

sv_status sv_em_dc_s(sv_ctx *ctx, const sv_em_model *m, const double *z0, double complex *s)
{
    if (!m || !z0 || !s) return sv_error(SV_ERR_ARG, "sv_em_dc_s: NULL argument");
    int np = m->prj->nports;
    double y[np * np];
    sv_status st = dc_y_unit(ctx, m, y);
    if (st) return st;
    if (!isfinite(m->prj->st.sigma)) return dc_s_shorted(np, y, z0, s);
    double complex yc[np * np];
    for (int k = 0; k < np * np; k++) yc[k] = y[k] * m->prj->st.sigma * m->prj->st.t;
    return sv_em_y_to_s(np, yc, z0, s);
}
