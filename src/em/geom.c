/* Geometry of one unknown: its current pulse (for L) and its divergence
 * cells (for Ψ = Dᵀ·P·D), plus the per-pair coefficients straight from the
 * closed forms (used by the port rows and by the naive reference). */
#include <math.h>

#include "em_internal.h"
#include "geom.h"

/* Rooftop -> pulse: the triangle over two cells is replaced by the pulse of
 * equal area centred on the shared edge (from centre to centre), the
 * staggered-grid PEEC form; a half rooftop by the half-cell pulse next to
 * the port edge. */
void sv_em_pulse(const sv_em_model *m, int q, sv_em_pulse_t *p)
{
    const sv_em_basis *b = &m->basis[q];
    double dx = m->prj->grid.dx, dy = m->prj->grid.dy;
    double x0 = b->i * dx, y0 = b->j * dy;
    p->sign = 1;
    switch (b->kind) {
    case 0:
        p->axis = 0;
        p->x1 = x0 + 0.5 * dx; p->x2 = x0 + 1.5 * dx; p->y1 = y0; p->y2 = y0 + dy;
        break;
    case 1:
        p->axis = 1;
        p->x1 = x0; p->x2 = x0 + dx; p->y1 = y0 + 0.5 * dy; p->y2 = y0 + 1.5 * dy;
        break;
    default:
        p->x1 = x0; p->x2 = x0 + dx; p->y1 = y0; p->y2 = y0 + dy;
        switch (b->side) {
        case SV_EM_LEFT: p->axis = 0; p->x2 = x0 + 0.5 * dx; break;
        case SV_EM_RIGHT: p->axis = 0; p->x1 = x0 + 0.5 * dx; p->sign = -1; break;
        case SV_EM_BOTTOM: p->axis = 1; p->y2 = y0 + 0.5 * dy; break;
        default: p->axis = 1; p->y1 = y0 + 0.5 * dy; p->sign = -1; break;
        }
    }
}

int sv_em_div_cells(const sv_em_model *m, int q, int ci[2], int cj[2], int sg[2])
{
    const sv_em_basis *b = &m->basis[q];
    ci[0] = b->i; cj[0] = b->j;
    if (b->kind == 2) {
        sg[0] = -1; /* current enters the metal at the port edge */
        return 1;
    }
    sg[0] = 1; sg[1] = -1;
    ci[1] = b->i + (b->kind == 0);
    cj[1] = b->j + (b->kind == 1);
    return 2;
}

double sv_em_L_pair(const sv_em_model *m, const sv_em_pulse_t *a, const sv_em_pulse_t *b, int exact)
{
    if (a->axis != b->axis) return 0;
    double h = m->prj->st.h, w = a->axis == 0 ? m->prj->grid.dy : m->prj->grid.dx;
    double fr = m->opts.far_ratio, i0, i1;
    if (exact) {
        i0 = sv_em_rect_exact(a->x1, a->x2, a->y1, a->y2, b->x1, b->x2, b->y1, b->y2, 0);
        i1 = sv_em_rect_exact(a->x1, a->x2, a->y1, a->y2, b->x1, b->x2, b->y1, b->y2, 2 * h);
    } else {
        i0 = sv_em_rect(a->x1, a->x2, a->y1, a->y2, b->x1, b->x2, b->y1, b->y2, 0, fr);
        i1 = sv_em_rect(a->x1, a->x2, a->y1, a->y2, b->x1, b->x2, b->y1, b->y2, 2 * h, fr);
    }
    return a->sign * b->sign * SV_EM_MU0 / (4 * SV_EM_PI) / (w * w) * (i0 - i1);
}

double sv_em_P_cells(const sv_em_model *m, int di, int dj, int exact)
{
    const sv_em_grid *g = &m->prj->grid;
    double dx = g->dx, dy = g->dy, h = m->prj->st.h, er = m->prj->st.eps_r;
    double K = (er - 1) / (er + 1), fr = m->opts.far_ratio;
    int terms = sv_em_image_terms(er, m->opts.accuracy);
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
