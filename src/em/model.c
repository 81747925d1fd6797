/* The mesh: rooftop unknowns on the interior edges between metal cells and
 * one half rooftop per port cell edge. Ordering: x rooftops (row by row),
 * y rooftops, then port half rooftops port by port, so that port rows are
 * the last ones. */
#include <math.h>
#include <string.h>

#include "em_internal.h"
#include "geom.h"

static int metal(const sv_em_project *p, int i, int j)
{
    if (i < 0 || j < 0 || i >= p->grid.nx || j >= p->grid.ny) return 0;
    return p->metal[i + (size_t)p->grid.nx * j];
}

sv_status sv_em_model_create(sv_ctx *ctx, const sv_em_project *p, const sv_em_options *opts, sv_em_model **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_em_model_create: out is NULL");
    *out = NULL;
    if (!p) return sv_error(SV_ERR_ARG, "sv_em_model_create: project is NULL");
    sv_em_options o = {0};
    if (opts) o = *opts;
    if (!(o.accuracy >= 0) || !isfinite(o.accuracy) || o.accuracy >= 0.1 || (o.accuracy > 0 && o.accuracy < 1e-15))
        return sv_error(SV_ERR_ARG, "sv_em_options.accuracy = %g: expected 0 (default) or in [1e-15, 0.1)",
                        o.accuracy);
    if (!(o.far_ratio >= 0) || !isfinite(o.far_ratio) || (o.far_ratio > 0 && o.far_ratio < 2))
        return sv_error(SV_ERR_ARG, "sv_em_options.far_ratio = %g: expected 0 (default) or >= 2", o.far_ratio);
    if (!(o.max_freq_hz >= 0) || !isfinite(o.max_freq_hz))
        return sv_error(SV_ERR_ARG, "sv_em_options.max_freq_hz = %g: expected 0 (default) or a frequency > 0",
                        o.max_freq_hz);
    if (o.accuracy == 0) o.accuracy = 1e-8;
    if (o.far_ratio == 0) o.far_ratio = sv_em_default_far_ratio(o.accuracy);

    int nx = p->grid.nx, ny = p->grid.ny;
    long nxe = 0, nye = 0, npe = 0, nc = 0;
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) {
            if (!metal(p, i, j)) continue;
            nc++;
            nxe += metal(p, i + 1, j);
            nye += metal(p, i, j + 1);
        }
    for (int k = 0; k < p->nports; k++) npe += p->ports[k].k1 - p->ports[k].k0;
    long n = nxe + nye + npe;
    if (n > 2000000000L / 2) return sv_error(SV_ERR_ARG, "mesh has %ld unknowns: too many", n);

    sv_em_model *m = sv_calloc(ctx, 1, sizeof *m, "em model");
    if (!m) return sv_last_status();
    m->basis = sv_alloc(ctx, sizeof *m->basis * (size_t)(n > 0 ? n : 1), "em basis list");
    if (!m->basis) {
        sv_free(ctx, m);
        return sv_last_status();
    }
    m->ctx = ctx;
    m->prj = p;
    m->opts = o;
    m->n = (int)n;
    m->nx_edges = (int)nxe;
    m->ny_edges = (int)nye;
    m->nport_edges = (int)npe;
    m->ncells = (int)nc;
    sv_em_gl_make(SV_EM_GL_NEAR, 1, &m->gl_near);
    sv_em_gl_make(SV_EM_GL_FAR, 0, &m->gl_far);
    long q = 0;
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++)
            if (metal(p, i, j) && metal(p, i + 1, j)) m->basis[q++] = (sv_em_basis){0, i, j, 0, -1};
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++)
            if (metal(p, i, j) && metal(p, i, j + 1)) m->basis[q++] = (sv_em_basis){1, i, j, 0, -1};
    for (int k = 0; k < p->nports; k++) {
        const sv_em_port_def *d = &p->ports[k];
        for (int c = d->k0; c < d->k1; c++) {
            sv_em_basis b = {2, 0, 0, d->side, k};
            switch (d->side) {
            case SV_EM_LEFT: b.i = d->line; b.j = c; break;
            case SV_EM_RIGHT: b.i = d->line - 1; b.j = c; break;
            case SV_EM_BOTTOM: b.i = c; b.j = d->line; break;
            default: b.i = c; b.j = d->line - 1; break;
            }
            m->basis[q++] = b;
        }
    }
    *out = m;
    return SV_OK;
}

void sv_em_model_destroy(sv_em_model *m)
{
    if (!m) return;
    sv_ctx *ctx = m->ctx;
    sv_free(ctx, m->basis);
    sv_free(ctx, m);
}

int sv_em_model_unknowns(const sv_em_model *m) { return m ? m->n : 0; }
int sv_em_model_ports(const sv_em_model *m) { return m ? m->prj->nports : 0; }
int sv_em_model_cells(const sv_em_model *m) { return m ? m->ncells : 0; }
const sv_em_project *sv_em_model_project(const sv_em_model *m) { return m ? m->prj : NULL; }

sv_status sv_em_port_rhs(const sv_em_model *m, double *b, int ldb)
{
    if (!m || !b) return sv_error(SV_ERR_ARG, "sv_em_port_rhs: NULL argument");
    if (ldb < m->n) return sv_error(SV_ERR_ARG, "sv_em_port_rhs: ldb = %d: expected >= N = %d", ldb, m->n);
    int np = m->prj->nports;
    for (int k = 0; k < np; k++) {
        double *col = b + (size_t)ldb * k;
        memset(col, 0, sizeof(double) * (size_t)m->n);
        for (int q = m->nx_edges + m->ny_edges; q < m->n; q++)
            if (m->basis[q].port == k) col[q] = 1.0;
    }
    return SV_OK;
}

sv_status sv_em_port_admittance(const sv_em_model *m, const double complex *x, int ldx, double complex *y)
{
    if (!m || !x || !y) return sv_error(SV_ERR_ARG, "sv_em_port_admittance: NULL argument");
    if (ldx < m->n) return sv_error(SV_ERR_ARG, "sv_em_port_admittance: ldx = %d: expected >= N = %d", ldx, m->n);
    int np = m->prj->nports;
    for (int c = 0; c < np; c++)
        for (int r = 0; r < np; r++) {
            double complex s = 0;
            for (int q = m->nx_edges + m->ny_edges; q < m->n; q++)
                if (m->basis[q].port == r) s += x[(size_t)ldx * c + q];
            if (!isfinite(creal(s)) || !isfinite(cimag(s)))
                return sv_error(SV_ERR_NONFINITE, "sv_em_port_admittance: port current (%d, %d) is not finite", r, c);
            y[r + (size_t)np * c] = s;
        }
    return SV_OK;
}
