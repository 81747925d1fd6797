/* Shapes onto a grid: a cell is metal when its centre is inside a shape
 * (nonzero winding). For a Manhattan shape with its corners on grid lines
 * that is exactly the cells it covers; the exact mode checks that first
 * and refuses anything else, naming the shape and the coordinates. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gds_internal.h"

typedef struct crossing {
    double x;
    int dir; /* +1 upward edge, −1 downward */
} crossing;

static int cmp_crossing(const void *a, const void *b)
{
    double x = ((const crossing *)a)->x, y = ((const crossing *)b)->x;
    return (x > y) - (x < y);
}

/* Position of coordinate v on the grid's lines along one axis, in cells. */
static double in_cells(double v, double origin, double d) { return (v - origin) / d; }

/* The exact mode's conditions for polygon k: edges along the axes, corners
 * on grid lines within tol cells. */
static sv_status check_exact(const sv_gds_shapes *s, int k, const sv_gds_grid *g, double tol_x, double tol_y)
{
    const gds_poly *p = &s->poly[k];
    const double *v = s->xy + p->at;
    char where[256];
    for (int q = 0; q < p->n; q++) {
        int r = (q + 1) % p->n;
        double x = v[2 * q], y = v[2 * q + 1], x1 = v[2 * r], y1 = v[2 * r + 1];
        if (x != x1 && y != y1)
            return sv_error(SV_ERR_PARSE, "%s: edge from (%.9g, %.9g) to (%.9g, %.9g) m is not parallel to an axis: "
                            "expected a Manhattan layout (or \"snap\": true to take the cells whose centres it covers)",
                            gds_shape_where(s, k, where, sizeof where), x, y, x1, y1);
        double cx = in_cells(x, g->x0, g->dx), cy = in_cells(y, g->y0, g->dy);
        if (fabs(cx - nearbyint(cx)) > tol_x || fabs(cy - nearbyint(cy)) > tol_y)
            return sv_error(SV_ERR_PARSE, "%s: corner (%.9g, %.9g) m is off the grid's lines (%.6g, %.6g cells from "
                            "the origin): expected corners on the grid (or \"snap\": true to take the cells whose "
                            "centres the shape covers)", gds_shape_where(s, k, where, sizeof where), x, y, cx, cy);
    }
    return SV_OK;
}

/* The polygon's extent, in cells, must lie within the grid (slack cells). */
static sv_status check_inside(const sv_gds_shapes *s, int k, const sv_gds_grid *g, double slack_x, double slack_y,
                              double box[4])
{
    const gds_poly *p = &s->poly[k];
    const double *v = s->xy + p->at;
    box[0] = box[2] = INFINITY;
    box[1] = box[3] = -INFINITY;
    for (int q = 0; q < p->n; q++) {
        box[0] = fmin(box[0], v[2 * q]);
        box[1] = fmax(box[1], v[2 * q]);
        box[2] = fmin(box[2], v[2 * q + 1]);
        box[3] = fmax(box[3], v[2 * q + 1]);
    }
    double i0 = in_cells(box[0], g->x0, g->dx), i1 = in_cells(box[1], g->x0, g->dx);
    double j0 = in_cells(box[2], g->y0, g->dy), j1 = in_cells(box[3], g->y0, g->dy);
    if (i0 < -slack_x || j0 < -slack_y || i1 > g->nx + slack_x || j1 > g->ny + slack_y) {
        char where[256];
        return sv_error(SV_ERR_PARSE, "%s: extends over x from %.9g to %.9g m, y from %.9g to %.9g m: beyond the "
                        "grid (x from %.9g to %.9g m, y from %.9g to %.9g m)",
                        gds_shape_where(s, k, where, sizeof where), box[0], box[1], box[2], box[3], g->x0,
                        g->x0 + g->nx * g->dx, g->y0, g->y0 + g->ny * g->dy);
    }
    return SV_OK;
}

/* Fill the cells whose centres polygon k covers: row by row, the edges'
 * crossings of the row's centre line (half-open in y, so a vertex on the
 * line counts once), sorted, the winding summed from the left. */
static sv_status fill(const sv_gds_shapes *s, int k, const sv_gds_grid *g, const double box[4], crossing **buf,
                      size_t *cap, unsigned char *metal)
{
    const gds_poly *p = &s->poly[k];
    const double *v = s->xy + p->at;
    sv_status st = gds_reserve(s->ctx, (void **)buf, sizeof **buf, cap, (size_t)p->n, "GDSII rasterisation");
    if (st) return st;
    int ja = (int)fmax(0, floor(in_cells(box[2], g->y0, g->dy) - 0.5));
    int jb = (int)fmin(g->ny - 1, ceil(in_cells(box[3], g->y0, g->dy)));
    for (int j = ja; j <= jb; j++) {
        double yc = g->y0 + (j + 0.5) * g->dy;
        int n = 0;
        for (int q = 0; q < p->n; q++) {
            int r = (q + 1) % p->n;
            double xa = v[2 * q], ya = v[2 * q + 1], xb = v[2 * r], yb = v[2 * r + 1];
            if ((ya <= yc && yc < yb) || (yb <= yc && yc < ya)) {
                double x = xa + (yc - ya) / (yb - ya) * (xb - xa);
                (*buf)[n++] = (crossing){x, yb > ya ? 1 : -1};
            }
        }
        qsort(*buf, (size_t)n, sizeof **buf, cmp_crossing);
        int wind = 0;
        for (int q = 0; q + 1 < n; q++) {
            wind += (*buf)[q].dir;
            if (!wind) continue;
            /* cells whose centre x0 + (i + ½)·dx lies in [x_q, x_{q+1}) */
            double ia = ceil(in_cells((*buf)[q].x, g->x0, g->dx) - 0.5);
            double ib = ceil(in_cells((*buf)[q + 1].x, g->x0, g->dx) - 0.5);
            for (double i = fmax(ia, 0); i < ib && i < g->nx; i++) metal[(size_t)i + (size_t)g->nx * j] = 1;
        }
    }
    return SV_OK;
}

sv_status sv_gds_rasterise(const sv_gds_shapes *shapes, const sv_gds_grid *grid, double db_unit_m, int snap,
                           unsigned char *metal)
{
    if (!shapes || !grid || !metal) return sv_error(SV_ERR_ARG, "sv_gds_rasterise: NULL argument");
    const sv_gds_grid *g = grid;
    if (g->nx < 1 || g->ny < 1 || !(g->dx > 0) || !(g->dy > 0) || !isfinite(g->x0) || !isfinite(g->y0))
        return sv_error(SV_ERR_ARG, "sv_gds_rasterise: grid of %d x %d cells of %g x %g m: expected at least one cell "
                        "of positive size", g->nx, g->ny, g->dx, g->dy);
    /* on a grid line: within half a database unit, or 1e-6 of a cell */
    double half_db = db_unit_m > 0 ? 0.5 * db_unit_m : 0;
    double tol_x = fmax(half_db / g->dx, 1e-6), tol_y = fmax(half_db / g->dy, 1e-6);
    crossing *buf = NULL;
    size_t cap = 0;
    sv_status st = SV_OK;
    for (int k = 0; k < shapes->npoly && !st; k++) {
        double box[4];
        if (snap) st = check_inside(shapes, k, g, 0.5, 0.5, box);
        else if (!(st = check_exact(shapes, k, g, tol_x, tol_y))) st = check_inside(shapes, k, g, tol_x, tol_y, box);
        if (!st) st = fill(shapes, k, g, box, &buf, &cap, metal);
    }
    sv_free(shapes->ctx, buf);
    return st;
}
