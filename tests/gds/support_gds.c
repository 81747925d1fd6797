#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_test.h"
#include "support_gds.h"

void tg_begin_lib(gds_buf *w, double user_m, double db_m)
{
    int v = 600, t[12] = {2026, 12, 7, 12, 0, 0, 2026, 12, 7, 12, 0, 0};
    gds_put_i16s(w, GDS_HEADER, &v, 1);
    gds_put_i16s(w, GDS_BGNLIB, t, 12);
    gds_put_string(w, GDS_LIBNAME, "TESTLIB");
    double u[2] = {db_m / user_m, db_m};
    gds_put_reals(w, GDS_UNITS, u, 2);
}

void tg_begin_str(gds_buf *w, const char *name)
{
    int t[12] = {2026, 12, 7, 12, 0, 0, 2026, 12, 7, 12, 0, 0};
    gds_put_i16s(w, GDS_BGNSTR, t, 12);
    gds_put_string(w, GDS_STRNAME, name);
}

void tg_end_str(gds_buf *w) { gds_put_record(w, GDS_ENDSTR, GDS_NODATA, NULL, 0); }
void tg_end_lib(gds_buf *w) { gds_put_record(w, GDS_ENDLIB, GDS_NODATA, NULL, 0); }

static void layer_dt(gds_buf *w, int layer, gds_rec dtrec, int dt)
{
    gds_put_i16s(w, GDS_LAYER, &layer, 1);
    gds_put_i16s(w, dtrec, &dt, 1);
}

void tg_boundary(gds_buf *w, int layer, int datatype, const int32_t *xy, int n)
{
    int32_t v[2 * 64 + 2];
    memcpy(v, xy, 2 * (size_t)n * sizeof *v);
    v[2 * n] = xy[0];
    v[2 * n + 1] = xy[1];
    gds_put_record(w, GDS_BOUNDARY, GDS_NODATA, NULL, 0);
    layer_dt(w, layer, GDS_DATATYPE, datatype);
    gds_put_i32s(w, GDS_XY, v, 2 * n + 2);
    gds_put_record(w, GDS_ENDEL, GDS_NODATA, NULL, 0);
}

void tg_box(gds_buf *w, int layer, int boxtype, int32_t x0, int32_t y0, int32_t x1, int32_t y1)
{
    int32_t v[10] = {x0, y0, x1, y0, x1, y1, x0, y1, x0, y0};
    gds_put_record(w, GDS_BOX, GDS_NODATA, NULL, 0);
    layer_dt(w, layer, GDS_BOXTYPE, boxtype);
    gds_put_i32s(w, GDS_XY, v, 10);
    gds_put_record(w, GDS_ENDEL, GDS_NODATA, NULL, 0);
}

void tg_path(gds_buf *w, int layer, int datatype, int pathtype, int32_t width, int32_t bgnextn, int32_t endextn,
             const int32_t *xy, int n)
{
    gds_put_record(w, GDS_PATH, GDS_NODATA, NULL, 0);
    layer_dt(w, layer, GDS_DATATYPE, datatype);
    gds_put_i16s(w, GDS_PATHTYPE, &pathtype, 1);
    gds_put_i32s(w, GDS_WIDTH, &width, 1);
    if (pathtype == 4) {
        gds_put_i32s(w, GDS_BGNEXTN, &bgnextn, 1);
        gds_put_i32s(w, GDS_ENDEXTN, &endextn, 1);
    }
    gds_put_i32s(w, GDS_XY, xy, 2 * n);
    gds_put_record(w, GDS_ENDEL, GDS_NODATA, NULL, 0);
}

void tg_ref(gds_buf *w, const char *name, int reflect, double mag, double angle, int cols, int rows,
            const int32_t *xy)
{
    gds_put_record(w, cols ? GDS_AREF : GDS_SREF, GDS_NODATA, NULL, 0);
    gds_put_string(w, GDS_SNAME, name);
    if (reflect || mag != 1 || angle != 0) {
        unsigned char bits[2] = {reflect ? 0x80 : 0, 0};
        gds_put_record(w, GDS_STRANS, GDS_BITS, bits, 2);
        if (mag != 1) gds_put_reals(w, GDS_MAG, &mag, 1);
        if (angle != 0) gds_put_reals(w, GDS_ANGLE, &angle, 1);
    }
    if (cols) {
        int cr[2] = {cols, rows};
        gds_put_i16s(w, GDS_COLROW, cr, 2);
    }
    gds_put_i32s(w, GDS_XY, xy, cols ? 6 : 2);
    gds_put_record(w, GDS_ENDEL, GDS_NODATA, NULL, 0);
}

sv_status tg_cells(const gds_buf *w, const char *structure, int layer, int datatype, const sv_gds_grid *g, int snap,
                   unsigned char *metal)
{
    memset(metal, 0, (size_t)g->nx * g->ny);
    assert_false(w->failed);
    sv_gds_library *lib;
    sv_status st = sv_gds_parse(NULL, w->b, w->len, "test.gds", &lib);
    if (st) return st;
    sv_gds_select sel = {structure, layer, datatype};
    sv_gds_shapes *s = NULL;
    double db;
    sv_gds_library_units(lib, NULL, &db);
    st = sv_gds_flatten(lib, &sel, &s);
    if (!st) st = sv_gds_rasterise(s, g, db, snap, metal);
    sv_gds_shapes_destroy(s);
    sv_gds_library_destroy(lib);
    return st;
}

void tg_map(const char *const *rows, int nx, int ny, unsigned char *cells)
{
    for (int r = 0; r < ny; r++)
        for (int i = 0; i < nx; i++) cells[i + (size_t)nx * (ny - 1 - r)] = rows[r][i] == '#';
}
