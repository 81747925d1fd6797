/* The mesh: rooftop unknowns on the interior edges between metal cells and
 * one half rooftop per port cell edge. Ordering: x rooftops (row by row),
 * y rooftops, then port half rooftops port by port, so that port rows are
 * the last ones. */
#include <math.h>
#include <string.h>

#include "em_internal.h"
#include "geom.h"

#define SV_EM_DEFAULT_ACCURACY 1e-8

void sv_em_options_default(sv_em_options *opts)
{
    if (opts) *opts = (sv_em_options){.accuracy = SV_EM_DEFAULT_ACCURACY, .far_ratio = 0};
}

/* The options with their defaults filled in, or SV_ERR_ARG. */
static sv_status resolve_options(const sv_em_options *opts, sv_em_options *o)
{
    *o = (sv_em_options){0};
    if (opts) *o = *opts;
    if (!(o->accuracy >= 0) || !isfinite(o->accuracy) || o->accuracy >= 0.1 || (o->accuracy > 0 && o->accuracy < 1e-15))
        return sv_error(SV_ERR_ARG, "sv_em_options.accuracy = %g: expected 0 (default) or in [1e-15, 0.1)",
                        o->accuracy);
    if (!(o->far_ratio >= 0) || !isfinite(o->far_ratio) || (o->far_ratio > 0 && o->far_ratio < 2))
        return sv_error(SV_ERR_ARG, "sv_em_options.far_ratio = %g: expected 0 (default) or >= 2", o->far_ratio);
    if (!(o->max_freq_hz >= 0) || !isfinite(o->max_freq_hz))
        return sv_error(SV_ERR_ARG, "sv_em_options.max_freq_hz = %g: expected 0 (default) or a frequency > 0",
                        o->max_freq_hz);
    if (!(o->wall_share >= 0) || !isfinite(o->wall_share))
        return sv_error(SV_ERR_ARG, "sv_em_options.wall_share = %g: expected 0 (default) or a ratio > 0",
                        o->wall_share);
    for (int ax = 0; ax < 2; ax++)
        if (!(o->wall_current_share[ax] >= 0) || !isfinite(o->wall_current_share[ax]))
            return sv_error(SV_ERR_ARG,
                            "sv_em_options.wall_current_share[%d] = %g: expected 0 (default) or a ratio > 0", ax,
                            o->wall_current_share[ax]);
    if (o->accuracy == 0) o->accuracy = SV_EM_DEFAULT_ACCURACY;
    if (o->far_ratio == 0) o->far_ratio = sv_em_default_far_ratio(o->accuracy);
    return SV_OK;
}

/* Metal cells and unknowns of each kind. */
static sv_status count_unknowns(const sv_em_project *p, sv_em_model *m)
{
    long nxe = 0, nye = 0, npe = 0, nc = 0;
    for (int j = 0; j < p->grid.ny; j++)
        for (int i = 0; i < p->grid.nx; i++) {
            if (!sv_em_project_metal(p, i, j)) continue;
            nc++;
            nxe += sv_em_project_metal(p, i + 1, j);
            nye += sv_em_project_metal(p, i, j + 1);
        }
    for (int k = 0; k < p->nports; k++) npe += p->ports[k].k1 - p->ports[k].k0;
    long n = nxe + nye + npe;
    if (n > 2000000000L / 2) return sv_error(SV_ERR_ARG, "mesh has %ld unknowns: too many", n);
    m->n = (int)n;
    m->nx_edges = (int)nxe;
    m->ny_edges = (int)nye;
    m->ncells = (int)nc;
    return SV_OK;
}

/* The unknowns in their order: x rooftops, y rooftops, port half rooftops. */
static void number_unknowns(const sv_em_project *p, sv_em_basis *basis)
{
    int nx = p->grid.nx, ny = p->grid.ny;
    long q = 0;
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++)
            if (sv_em_project_metal(p, i, j) && sv_em_project_metal(p, i + 1, j))
                basis[q++] = (sv_em_basis){SV_EM_UNKNOWN_X, i, j, 0, -1};
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++)
            if (sv_em_project_metal(p, i, j) && sv_em_project_metal(p, i, j + 1))
                basis[q++] = (sv_em_basis){SV_EM_UNKNOWN_Y, i, j, 0, -1};
    for (int k = 0; k < p->nports; k++) {
        const sv_em_port_def *d = &p->ports[k];
        for (int c = d->k0; c < d->k1; c++) {
            sv_em_basis b = {SV_EM_UNKNOWN_PORT, 0, 0, d->side, k};
            switch (d->side) {
            case SV_EM_LEFT: b.i = d->line; b.j = c; break;
            case SV_EM_RIGHT: b.i = d->line - 1; b.j = c; break;
            case SV_EM_BOTTOM: b.i = c; b.j = d->line; break;
            default: b.i = c; b.j = d->line - 1; break;
            }
            basis[q++] = b;
        }
    }
}

/* 1 when models a and b have what wall tables and an edge memo depend on
 * in common: the cell size, the stack-up, the effects that make them and
 * the options. */
static int same_cell(const sv_em_model *a, const sv_em_model *b)
{
    const sv_em_project *p = a->prj, *q = b->prj;
    const sv_em_stackup *s = &p->st, *t = &q->st;
    return p->grid.dx == q->grid.dx && p->grid.dy == q->grid.dy && s->h == t->h && s->eps_r == t->eps_r &&
           s->t == t->t && s->tan_delta == t->tan_delta && s->thick_metal == t->thick_metal &&
           (p->edge_profile || p->edge_cells) == (q->edge_profile || q->edge_cells) &&
           a->opts.accuracy == b->opts.accuracy && a->opts.far_ratio == b->opts.far_ratio;
}

/* m's wall tables (thick metal) and edge memo (the profiles switched on):
 * like's when it has their cell in common with m, else made for m. */
static sv_status cell_tables(sv_ctx *ctx, sv_em_model *m, const sv_em_model *like)
{
    if (like && same_cell(m, like)) {
        m->walls = like->walls;
        m->memo = like->memo;
        m->board = like->board;
        m->lent = 1;
        return SV_OK;
    }
    const sv_em_project *p = m->prj;
    sv_status s = SV_OK;
    if (p->st.thick_metal) s = sv_em_walls_tables_create(ctx, m, &m->walls);
    if (!s && (p->edge_profile || p->edge_cells)) s = sv_em_edge_memo_create(ctx, m, &m->memo);
    return s;
}

sv_status sv_em_model_shape(const sv_em_project *p, const sv_em_options *opts, sv_em_model *shape)
{
    *shape = (sv_em_model){.prj = p};
    sv_status s = resolve_options(opts, &shape->opts);
    return s ? s : count_unknowns(p, shape);
}

sv_status sv_em_model_create(sv_ctx *ctx, const sv_em_project *p, const sv_em_options *opts, sv_em_model **out)
{
    return sv_em_model_create_sharing(ctx, p, opts, NULL, out);
}

sv_status sv_em_model_create_sharing(sv_ctx *ctx, const sv_em_project *p, const sv_em_options *opts,
                                     const sv_em_model *like, sv_em_model **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_em_model_create: out is NULL");
    *out = NULL;
    if (!p) return sv_error(SV_ERR_ARG, "sv_em_model_create: project is NULL");
    sv_em_model shape;
    sv_status s = sv_em_model_shape(p, opts, &shape);
    if (s) return s;
    sv_em_model *m = sv_calloc(ctx, 1, sizeof *m, "em model");
    if (!m) return sv_last_status();
    *m = shape;
    m->ctx = ctx;
    m->prj = p;
    m->basis = sv_alloc(ctx, sizeof *m->basis * (size_t)(m->n > 0 ? m->n : 1), "em basis list");
    if (!m->basis) {
        sv_free(ctx, m);
        return sv_last_status();
    }
    sv_em_gl_make(SV_EM_GL_NEAR, 1, &m->gl_near);
    sv_em_gl_make(SV_EM_GL_FAR, 0, &m->gl_far);
    sv_em_gl_make(SV_EM_GL_WALL, 1, &m->gl_wall);
    sv_em_gl_make(SV_EM_GL_EDGE, 1, &m->gl_edge);
    number_unknowns(p, m->basis);
    s = cell_tables(ctx, m, like);
    /* thick metal's shares of charge and current on the walls (wall_share.c) */
    if (!s && p->st.thick_metal) s = sv_em_walls_choose_shares(ctx, m, &m->opts.wall_share, m->opts.wall_current_share);
    /* the radiation terms depend on the mesh and the band's top alone: made
     * once here, for every planar model and estimate of this mesh */
    if (!s && p->radiation)
        s = sv_em_radiation_create(ctx, m, sv_em_radiation_design_hz(m), sv_em_radiation_tolerance(m), &m->rad);
    /* and so does dispersion's far field (dispersion_far.c) */
    if (!s && p->dispersion && p->dispersion_far) s = sv_em_disp_far_for(ctx, m, &m->disp_far);
    if (s) {
        sv_em_model_destroy(m);
        return s;
    }
    *out = m;
    return SV_OK;
}

void sv_em_model_destroy(sv_em_model *m)
{
    if (!m) return;
    sv_ctx *ctx = m->ctx;
    sv_em_radiation_destroy(m->rad);
    sv_em_disp_far_destroy(ctx, m->disp_far);
    if (!m->lent) {
        sv_em_walls_tables_destroy(ctx, m->walls);
        sv_em_edge_memo_destroy(ctx, m->memo);
    }
    sv_free(ctx, m->basis);
    sv_free(ctx, m);
}

int sv_em_model_unknowns(const sv_em_model *m) { return m ? m->n : 0; }
int sv_em_model_ports(const sv_em_model *m) { return m ? m->prj->nports : 0; }
int sv_em_model_cells(const sv_em_model *m) { return m ? m->ncells : 0; }
const sv_em_project *sv_em_model_project(const sv_em_model *m) { return m ? m->prj : NULL; }

sv_status sv_em_model_unknown(const sv_em_model *m, int k, int *kind, int *i, int *j, int *port)
{
    if (!m || !kind || !i || !j || !port) return sv_error(SV_ERR_ARG, "sv_em_model_unknown: NULL argument");
    if (k < 0 || k >= m->n) return sv_error(SV_ERR_ARG, "sv_em_model_unknown: k = %d: expected 0 <= k < N = %d", k, m->n);
    const sv_em_basis *b = &m->basis[k];
    *kind = (int)b->kind;
    *i = b->i;
    *j = b->j;
    *port = sv_em_is_rooftop(b->kind) ? -1 : b->port;
    return SV_OK;
}

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
