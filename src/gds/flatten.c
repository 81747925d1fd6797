/* A structure flattened on one layer: its shapes and those of the
 * structures it references, transformed, as polygons in metres.
 *
 * A reference's transformation (GDSII Stream Format Manual, release 6.0,
 * STRANS, MAG, ANGLE, AREF): a point p of the referenced structure lands at
 *     x + R(angle) · mag · F · p,   F = reflection about the x axis (if set),
 * reflection first, then magnification and the counter-clockwise rotation;
 * an AREF's instance (c, r) at x = P1 + c·(P2 − P1)/cols + r·(P3 − P1)/rows,
 * its lattice points given in the referencing structure's coordinates.
 * Only angles that are multiples of 90° are taken (the layouts a planar
 * grid can hold), so the matrices are exact; the nesting is at most
 * MAX_DEPTH deep and a cycle is refused, both before any shape is made. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "library.h"

#define MAX_DEPTH 64            /* nesting levels of references */
#define MAX_FLAT_POLYGONS 1e8   /* polygons a flattening may make */

typedef struct xform {
    double a, b, c, d, tx, ty; /* x' = a·x + b·y + tx, y' = c·x + d·y + ty (database units) */
} xform;

typedef struct flat {
    const sv_gds_library *lib;
    int layer, datatype;
    sv_gds_shapes *out;
    double *count;        /* per structure: polygons it makes on the layer (−1: not yet known) */
    unsigned char *state; /* per structure: 0 new, 1 on the current path, 2 done */
    int path[MAX_DEPTH + 1], depth;
    int *name_id;         /* per structure: its name's index in out, or -1 before its first polygon */
    int cur;              /* the structure whose element is emitted */
    double *buf;          /* one polygon's coordinates (m) */
    size_t cap_buf;
} flat;

static int selected(const flat *f, const gds_elem *e)
{
    return e->layer == f->layer && (f->datatype < 0 || e->datatype == f->datatype);
}

static sv_status ferr(const flat *f, long offset, const char *what)
{
    return sv_error(SV_ERR_PARSE, "%s: byte %ld: %s", f->lib->source, offset, what);
}

/* Polygons a PATH makes (one rectangle per segment of nonzero length). */
static double path_polygons(const sv_gds_library *lib, const gds_elem *e)
{
    const int32_t *v = lib->xy + e->at;
    double n = 0;
    for (int q = 0; q + 1 < e->n; q++) n += v[2 * q] != v[2 * q + 2] || v[2 * q + 1] != v[2 * q + 3];
    return e->width == 0 ? 0 : n;
}

/* The polygons structure s makes on the layer, counting through its
 * references; refuses a cycle and a nesting deeper than MAX_DEPTH. */
static sv_status count_structure(flat *f, int s, double *out)
{
    const sv_gds_library *lib = f->lib;
    if (f->state[s] == 2) {
        *out = f->count[s];
        return SV_OK;
    }
    const gds_struct *gs = &lib->st[s];
    char msg[512];
    if (f->state[s] == 1) {
        int n = snprintf(msg, sizeof msg, "reference cycle: ");
        int from = 0;
        while (f->path[from] != s) from++;
        for (int k = from; k < f->depth && n < (int)sizeof msg; k++)
            n += snprintf(msg + n, sizeof msg - (size_t)n, "%s -> ", gds_lib_name(lib, lib->st[f->path[k]].name));
        if (n < (int)sizeof msg) snprintf(msg + n, sizeof msg - (size_t)n, "%s", gds_lib_name(lib, gs->name));
        return ferr(f, gs->offset, msg);
    }
    if (f->depth >= MAX_DEPTH) {
        snprintf(msg, sizeof msg, "structure %s: references nested deeper than %d levels", gds_lib_name(lib, gs->name),
                 MAX_DEPTH);
        return ferr(f, gs->offset, msg);
    }
    f->state[s] = 1;
    f->path[f->depth++] = s;
    double total = 0;
    for (size_t k = gs->first; k < gs->first + gs->count; k++) {
        const gds_elem *e = &lib->el[k];
        if (e->kind == GDS_SREF || e->kind == GDS_AREF) {
            if (e->ref < 0) {
                snprintf(msg, sizeof msg, "%s in structure %s: structure \"%s\" is not in the file",
                         e->kind == GDS_SREF ? "SREF" : "AREF", gds_lib_name(lib, gs->name), gds_lib_name(lib, e->name));
                return ferr(f, e->offset, msg);
            }
            double sub;
            sv_status st = count_structure(f, e->ref, &sub);
            if (st) return st;
            total += sub * (e->kind == GDS_AREF ? (double)e->cols * e->rows : 1.0);
        } else if (selected(f, e)) {
            total += e->kind == GDS_PATH ? path_polygons(lib, e) : 1;
        }
    }
    f->depth--;
    f->state[s] = 2;
    f->count[s] = total;
    *out = total;
    return SV_OK;
}

static sv_status emit(flat *f, const gds_elem *e, const char *structure, const xform *t, const double *pts, int n)
{
    sv_status st = gds_reserve(f->lib->ctx, (void **)&f->buf, sizeof *f->buf, &f->cap_buf, 2 * (size_t)n,
                               "GDSII flattened polygon");
    if (st) return st;
    double m = f->lib->db_m;
    for (int q = 0; q < n; q++) {
        double x = pts[2 * q], y = pts[2 * q + 1];
        f->buf[2 * q] = (t->a * x + t->b * y + t->tx) * m;
        f->buf[2 * q + 1] = (t->c * x + t->d * y + t->ty) * m;
    }
    const char *kind = e->kind == GDS_BOUNDARY ? "BOUNDARY" : e->kind == GDS_BOX ? "BOX" : "PATH";
    int *id = &f->name_id[f->cur];
    if (*id < 0 && (st = gds_shapes_name(f->out, structure, id))) return st;
    return gds_shapes_add(f->out, e->layer, e->datatype, f->buf, n, kind, *id, e->offset);
}

static sv_status emit_points(flat *f, const gds_elem *e, const char *structure, const xform *t)
{
    double pts[2 * 64];
    const int32_t *v = f->lib->xy + e->at;
    sv_status st = SV_OK;
    double *p = e->n <= 64 ? pts : NULL;
    size_t cap = 0;
    if (!p && (st = gds_reserve(f->lib->ctx, (void **)&p, sizeof *p, &cap, 2 * (size_t)e->n, "GDSII polygon")))
        return st;
    for (int q = 0; q < 2 * e->n; q++) p[q] = v[q];
    st = emit(f, e, structure, t, p, e->n);
    if (p != pts) sv_free(f->lib->ctx, p);
    return st;
}

/* A PATH's outline as one rectangle per segment: width w across, each
 * segment lengthened by w/2 at a joint (so a right-angled bend is filled
 * as its mitred outline is) and at the path's ends by the pathtype's
 * extension: 0 none, 2 w/2, 4 BGNEXTN and ENDEXTN. */
static sv_status emit_path(flat *f, const gds_elem *e, const char *structure, const xform *t)
{
    char msg[256];
    if (e->pathtype != 0 && e->pathtype != 2 && e->pathtype != 4) {
        snprintf(msg, sizeof msg, "PATH in structure %s: pathtype %d: expected 0 (flush), 2 (square) or 4 (custom "
                 "extensions); round ends (1) are not Manhattan", structure, e->pathtype);
        return ferr(f, e->offset, msg);
    }
    if (e->width < 0) {
        snprintf(msg, sizeof msg, "PATH in structure %s: absolute width %d (negative WIDTH): not supported",
                 structure, e->width);
        return ferr(f, e->offset, msg);
    }
    const int32_t *v = f->lib->xy + e->at;
    double hw = e->width / 2.0;
    int last = -1;
    for (int q = 0; q + 1 < e->n; q++)
        if (v[2 * q] != v[2 * q + 2] || v[2 * q + 1] != v[2 * q + 3]) last = q;
    for (int q = 0, first = 1; q + 1 < e->n && e->width > 0; q++) {
        double x0 = v[2 * q], y0 = v[2 * q + 1], x1 = v[2 * q + 2], y1 = v[2 * q + 3];
        if (x0 == x1 && y0 == y1) continue;
        if (x0 != x1 && y0 != y1) {
            snprintf(msg, sizeof msg, "PATH in structure %s: segment %d from (%.0f, %.0f) to (%.0f, %.0f) database "
                     "units is slanted: expected Manhattan segments (or draw it as a BOUNDARY)", structure, q + 1, x0,
                     y0, x1, y1);
            return ferr(f, e->offset, msg);
        }
        double ext0 = first ? (e->pathtype == 2 ? hw : e->pathtype == 4 ? e->bgnextn : 0) : hw;
        double ext1 = q == last ? (e->pathtype == 2 ? hw : e->pathtype == 4 ? e->endextn : 0) : hw;
        first = 0;
        double ux = (x1 > x0) - (x1 < x0), uy = (y1 > y0) - (y1 < y0); /* unit direction */
        double ax = x0 - ux * ext0, ay = y0 - uy * ext0, bx = x1 + ux * ext1, by = y1 + uy * ext1;
        double px = -uy * hw, py = ux * hw; /* half the width, to the left */
        double r[8] = {ax - px, ay - py, bx - px, by - py, bx + px, by + py, ax + px, ay + py};
        sv_status st = emit(f, e, structure, t, r, 4);
        if (st) return st;
    }
    return SV_OK;
}

/* The reference's own transformation, or a refusal naming it. */
static sv_status ref_xform(const flat *f, const gds_elem *e, const char *structure, xform *out)
{
    char msg[256];
    const char *kind = e->kind == GDS_SREF ? "SREF" : "AREF";
    if (e->absolute) {
        snprintf(msg, sizeof msg, "%s in structure %s: absolute magnification or angle (STRANS bits 13, 14): not "
                 "supported", kind, structure);
        return ferr(f, e->offset, msg);
    }
    /* writers that keep angles in radians store 90° as 89.99999999999999 or so */
    double turns = e->angle / 90.0;
    if (!(isfinite(turns) && fabs(turns - nearbyint(turns)) <= 1e-9) || !(isfinite(e->mag) && e->mag > 0)) {
        snprintf(msg, sizeof msg, "%s in structure %s to %s: angle %g degrees, magnification %g: expected a multiple "
                 "of 90 degrees and a magnification > 0 (a Manhattan layout)", kind, structure,
                 gds_lib_name(f->lib, e->name), e->angle, e->mag);
        return ferr(f, e->offset, msg);
    }
    static const double cs[4][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}}; /* cos, sin of k·90° */
    int k = (int)fmod(fmod(nearbyint(turns), 4) + 4, 4);
    double c = cs[k][0] * e->mag, s = cs[k][1] * e->mag, fy = e->reflect ? -1 : 1;
    *out = (xform){c, -s * fy, s, c * fy, 0, 0};
    return SV_OK;
}

/* outer ∘ inner, then translated by (dx, dy) in the inner's parent frame. */
static xform compose(const xform *outer, const xform *inner, double dx, double dy)
{
    xform r;
    r.a = outer->a * inner->a + outer->b * inner->c;
    r.b = outer->a * inner->b + outer->b * inner->d;
    r.c = outer->c * inner->a + outer->d * inner->c;
    r.d = outer->c * inner->b + outer->d * inner->d;
    r.tx = outer->a * dx + outer->b * dy + outer->tx;
    r.ty = outer->c * dx + outer->d * dy + outer->ty;
    return r;
}

static sv_status flatten_structure(flat *f, int s, const xform *t)
{
    const sv_gds_library *lib = f->lib;
    const gds_struct *gs = &lib->st[s];
    const char *name = gds_lib_name(lib, gs->name);
    sv_status st = SV_OK;
    for (size_t k = gs->first; k < gs->first + gs->count && !st; k++) {
        const gds_elem *e = &lib->el[k];
        if (e->kind == GDS_SREF || e->kind == GDS_AREF) {
            if (f->count[e->ref] == 0) continue; /* nothing on the layer down there */
            xform own = {1, 0, 0, 1, 0, 0};
            if ((st = ref_xform(f, e, name, &own))) return st;
            const int32_t *v = lib->xy + e->at;
            int cols = e->kind == GDS_AREF ? e->cols : 1, rows = e->kind == GDS_AREF ? e->rows : 1;
            for (int r = 0; r < rows && !st; r++)
                for (int c = 0; c < cols && !st; c++) {
                    double dx = v[0], dy = v[1];
                    if (e->kind == GDS_AREF) {
                        dx += c * ((double)v[2] - v[0]) / cols + r * ((double)v[4] - v[0]) / rows;
                        dy += c * ((double)v[3] - v[1]) / cols + r * ((double)v[5] - v[1]) / rows;
                    }
                    xform tt = compose(t, &own, dx, dy);
                    st = flatten_structure(f, e->ref, &tt);
                }
        } else if (selected(f, e)) {
            f->cur = s;
            st = e->kind == GDS_PATH ? emit_path(f, e, name, t) : emit_points(f, e, name, t);
        }
    }
    return st;
}

/* The structure no other references, or a refusal listing the candidates. */
static sv_status top_structure(const sv_gds_library *lib, int *out)
{
    unsigned char *used = sv_calloc(lib->ctx, lib->nst + 1, 1, "GDSII references");
    if (!used) return sv_last_status();
    for (size_t k = 0; k < lib->nel; k++)
        if (lib->el[k].ref >= 0) used[lib->el[k].ref] = 1;
    int top = -1, ntop = 0;
    char list[256] = "";
    for (size_t s = 0; s < lib->nst; s++) {
        if (used[s]) continue;
        if (ntop++ < 8) {
            strncat(list, ntop > 1 ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, gds_lib_name(lib, lib->st[s].name), sizeof list - strlen(list) - 1);
        }
        top = (int)s;
    }
    sv_free(lib->ctx, used);
    if (lib->nst == 0) return sv_error(SV_ERR_PARSE, "%s: no structure in the file", lib->source);
    if (ntop == 1) {
        *out = top;
        return SV_OK;
    }
    if (ntop == 0) return sv_error(SV_ERR_PARSE, "%s: every structure is referenced by another (a cycle)", lib->source);
    return sv_error(SV_ERR_PARSE, "%s: %d top structures (%s%s): expected the cell to be named", lib->source, ntop,
                    list, ntop > 8 ? ", ..." : "");
}

static sv_status find_structure(const sv_gds_library *lib, const char *name, int *out)
{
    for (size_t s = 0; s < lib->nst; s++)
        if (!strcmp(gds_lib_name(lib, lib->st[s].name), name)) {
            *out = (int)s;
            return SV_OK;
        }
    char list[256] = "";
    for (size_t s = 0; s < lib->nst && s < 8; s++) {
        strncat(list, s ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, gds_lib_name(lib, lib->st[s].name), sizeof list - strlen(list) - 1);
    }
    return sv_error(SV_ERR_PARSE, "%s: no structure \"%s\" (the file has %s%s)", lib->source, name, list,
                    lib->nst > 8 ? ", ..." : "");
}

sv_status sv_gds_flatten(const sv_gds_library *lib, const sv_gds_select *sel, sv_gds_shapes **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_gds_flatten: out is NULL");
    *out = NULL;
    if (!lib || !sel) return sv_error(SV_ERR_ARG, "sv_gds_flatten: lib or sel is NULL");
    if (sel->layer < 0 || sel->layer > 65535 || sel->datatype < -1 || sel->datatype > 65535)
        return sv_error(SV_ERR_ARG, "sv_gds_flatten: layer %d, datatype %d: expected 0 to 65535 (datatype -1: any)",
                        sel->layer, sel->datatype);
    int top = -1;
    sv_status st = sel->structure ? find_structure(lib, sel->structure, &top) : top_structure(lib, &top);
    if (st) return st;
    flat f = {lib, sel->layer, sel->datatype, NULL, NULL, NULL, {0}, 0, NULL, 0, NULL, 0};
    f.count = sv_calloc(lib->ctx, lib->nst, sizeof *f.count, "GDSII flattening (counts)");
    f.state = sv_calloc(lib->ctx, lib->nst, 1, "GDSII flattening (states)");
    f.name_id = sv_alloc(lib->ctx, lib->nst * sizeof *f.name_id, "GDSII flattening (names)");
    double total = 0;
    if (!f.count || !f.state || !f.name_id) st = sv_last_status();
    for (size_t s = 0; !st && s < lib->nst; s++) f.name_id[s] = -1;
    if (!st) st = count_structure(&f, top, &total);
    if (!st && total > MAX_FLAT_POLYGONS)
        st = sv_error(SV_ERR_PARSE, "%s: structure %s makes %.3g polygons on layer %d when flattened: expected at "
                      "most %g", lib->source, gds_lib_name(lib, lib->st[top].name), total, sel->layer,
                      MAX_FLAT_POLYGONS);
    if (!st) st = gds_shapes_create(lib->ctx, lib->source, &f.out);
    xform id = {1, 0, 0, 1, 0, 0};
    if (!st) st = flatten_structure(&f, top, &id);
    void *const scratch[] = {f.count, f.state, f.name_id, f.buf};
    sv_free_each(lib->ctx, scratch, SV_COUNT(scratch));
    if (st) {
        sv_gds_shapes_destroy(f.out);
        return st;
    }
    *out = f.out;
    return SV_OK;
}
