/* GDSII stream output: one library, one structure, the shapes as BOUNDARY
 * elements; built in memory, then written atomically.
 *
 * Grammar (GDSII Stream Format Manual, release 6.0, "Stream Syntax"):
 *   <stream>    ::= HEADER BGNLIB LIBNAME UNITS {<structure>}* ENDLIB
 *   <structure> ::= BGNSTR STRNAME {<element>}* ENDSTR
 *   <boundary>  ::= BOUNDARY LAYER DATATYPE XY ENDEL
 * HEADER holds the stream version (600); BGNLIB and BGNSTR twelve 2-byte
 * integers (modification and access times: year, month, day, hour,
 * minute, second); UNITS two 8-byte reals: the database unit in user units,
 * then in metres; a BOUNDARY's XY lists its vertices in database units,
 * the first repeated at the end. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gds_internal.h"

#define STREAM_VERSION 600

static sv_status check_name(const char *what, const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > GDS_STRING_MAX)
        return sv_error(SV_ERR_ARG, "GDSII %s \"%s\": expected 1 to %d characters", what, s, GDS_STRING_MAX);
    for (size_t q = 0; q < n; q++) {
        unsigned char c = (unsigned char)s[q];
        if (c < 0x21 || c > 0x7E)
            return sv_error(SV_ERR_ARG, "GDSII %s \"%s\": character %zu is not printable ASCII (expected A-Z, a-z, "
                            "0-9, '_', '?', '$' and the like)", what, s, q + 1);
    }
    return SV_OK;
}

/* A coordinate in database units: whole (to 1e-3 of one) and in range. */
static sv_status to_db(const sv_gds_shapes *s, int k, int q, double v, double db, int32_t *out)
{
    double u = v / db, r = nearbyint(u);
    char where[256];
    if (!(fabs(r) <= 2147483647.0))
        return sv_error(SV_ERR_ARG, "%s, vertex %d: coordinate %.12g m is %.6g database units of %g m: beyond the "
                        "format's 32-bit range", gds_shape_where(s, k, where, sizeof where), q, v, u, db);
    if (fabs(u - r) > 1e-3)
        return sv_error(SV_ERR_ARG, "%s, vertex %d: coordinate %.12g m is not a whole number of database units "
                        "(%g m): expected a finer database unit", gds_shape_where(s, k, where, sizeof where), q, v,
                        db);
    *out = (int32_t)r;
    return SV_OK;
}

static sv_status put_boundary(gds_buf *w, const sv_gds_shapes *s, int k, double db, int32_t *xy)
{
    const gds_poly *p = &s->poly[k];
    char where[256];
    if (p->n < 3 || p->n > SV_GDS_MAX_POINTS)
        return sv_error(SV_ERR_ARG, "%s: %d vertices: a BOUNDARY holds 3 to %d", gds_shape_where(s, k, where, sizeof where),
                        p->n, SV_GDS_MAX_POINTS);
    if (p->layer < 0 || p->layer > SV_GDS_MAX_LAYER || p->datatype < 0 || p->datatype > SV_GDS_MAX_LAYER)
        return sv_error(SV_ERR_ARG, "%s: layer %d, datatype %d: expected 0 to %d",
                        gds_shape_where(s, k, where, sizeof where), p->layer, p->datatype, SV_GDS_MAX_LAYER);
    const double *v = s->xy + p->at;
    sv_status st;
    for (int q = 0; q < 2 * p->n; q++)
        if ((st = to_db(s, k, q / 2, v[q], db, &xy[q]))) return st;
    xy[2 * p->n] = xy[0];
    xy[2 * p->n + 1] = xy[1];
    gds_put_record(w, GDS_BOUNDARY, GDS_NODATA, NULL, 0);
    gds_put_i16s(w, GDS_LAYER, &p->layer, 1);
    gds_put_i16s(w, GDS_DATATYPE, &p->datatype, 1);
    gds_put_i32s(w, GDS_XY, xy, 2 * (p->n + 1));
    gds_put_record(w, GDS_ENDEL, GDS_NODATA, NULL, 0);
    return SV_OK;
}

/* The whole stream into w. */
static sv_status build_stream(gds_buf *w, const sv_gds_shapes *s, const sv_gds_write_options *o)
{
    const char *lib = o->library ? o->library : "SOLVENT", *cell = o->cell ? o->cell : "TOP";
    double user = o->user_unit_m > 0 ? o->user_unit_m : 1e-6, db = o->db_unit_m > 0 ? o->db_unit_m : 1e-9;
    sv_status st;
    if ((st = check_name("library name", lib)) || (st = check_name("structure name", cell))) return st;
    if (!(isfinite(user) && isfinite(db) && db <= user && db >= 1e-15 && user <= 1))
        return sv_error(SV_ERR_ARG, "GDSII units: user unit %g m, database unit %g m: expected 1e-15 m <= database "
                        "unit <= user unit <= 1 m", user, db);
    static const int epoch[6] = {1970, 1, 1, 0, 0, 0};
    int given = 0, stamp[12];
    for (int k = 0; k < 6; k++) given |= o->timestamp[k] != 0;
    for (int k = 0; k < 6; k++) stamp[k] = stamp[k + 6] = given ? o->timestamp[k] : epoch[k];
    int version = STREAM_VERSION;
    gds_put_i16s(w, GDS_HEADER, &version, 1);
    gds_put_i16s(w, GDS_BGNLIB, stamp, 12);
    gds_put_string(w, GDS_LIBNAME, lib);
    double units[2] = {db / user, db};
    gds_put_reals(w, GDS_UNITS, units, 2);
    gds_put_i16s(w, GDS_BGNSTR, stamp, 12);
    gds_put_string(w, GDS_STRNAME, cell);
    int32_t *xy = sv_alloc(s->ctx, 2 * (SV_GDS_MAX_POINTS + 1) * sizeof *xy, "GDSII vertices");
    if (!xy) return sv_last_status();
    for (int k = 0; k < s->npoly && !st; k++) st = put_boundary(w, s, k, db, xy);
    sv_free(s->ctx, xy);
    if (st) return st;
    gds_put_record(w, GDS_ENDSTR, GDS_NODATA, NULL, 0);
    gds_put_record(w, GDS_ENDLIB, GDS_NODATA, NULL, 0);
    /* the values were checked above: what is left is memory */
    if (w->failed) return sv_error(SV_ERR_NOMEM, "GDSII stream: no memory for %zu bytes", w->len);
    return SV_OK;
}

sv_status sv_gds_write(const char *path, const sv_gds_shapes *shapes, const sv_gds_write_options *opts)
{
    if (!path || !shapes) return sv_error(SV_ERR_ARG, "sv_gds_write: path or shapes is NULL");
    sv_gds_write_options o = {0};
    if (opts) o = *opts;
    gds_buf w = {0};
    sv_status st = build_stream(&w, shapes, &o);
    if (st) {
        gds_buf_free(&w);
        return st;
    }
    sv_atomic_file *af;
    if ((st = sv_atomic_file_open(path, &af))) {
        gds_buf_free(&w);
        return st;
    }
    int ok = fwrite(w.b, 1, w.len, sv_atomic_file_stream(af)) == w.len;
    gds_buf_free(&w);
    if (!ok) {
        sv_atomic_file_close(af, 0);
        return sv_error(SV_ERR_IO, "%s: write error", path);
    }
    return sv_atomic_file_close(af, 1);
}

sv_status sv_gds_write_cells(sv_ctx *ctx, const char *path, const sv_gds_grid *grid, const unsigned char *cells,
                             int layer, int datatype, const sv_gds_write_options *opts)
{
    sv_gds_shapes *s;
    sv_status st = sv_gds_outline(ctx, grid, cells, layer, datatype, 0, &s);
    if (st) return st;
    st = sv_gds_write(path, s, opts);
    sv_gds_shapes_destroy(s);
    return st;
}
