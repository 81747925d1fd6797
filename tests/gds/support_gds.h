/* Test streams built record by record (the record writer's bytes are
 * checked against the manual's in test_records.c), and map helpers. */
#ifndef SV_TEST_SUPPORT_GDS_H
#define SV_TEST_SUPPORT_GDS_H

#include "gds/gds_internal.h"
#include "solvent/gds.h"

/* HEADER, BGNLIB, LIBNAME, UNITS (user unit, database unit in m). */
void tg_begin_lib(gds_buf *w, double user_m, double db_m);
void tg_begin_str(gds_buf *w, const char *name);
void tg_end_str(gds_buf *w);
void tg_end_lib(gds_buf *w);
/* A BOUNDARY of n points (the closing point added). */
void tg_boundary(gds_buf *w, int layer, int datatype, const int32_t *xy, int n);
void tg_box(gds_buf *w, int layer, int boxtype, int32_t x0, int32_t y0, int32_t x1, int32_t y1);
/* A PATH; pathtype 4 takes the extensions. */
void tg_path(gds_buf *w, int layer, int datatype, int pathtype, int32_t width, int32_t bgnextn, int32_t endextn,
             const int32_t *xy, int n);
/* SREF (cols = 0) or AREF; reflect, mag (1: no MAG record), angle (0: no ANGLE). */
void tg_ref(gds_buf *w, const char *name, int reflect, double mag, double angle, int cols, int rows,
            const int32_t *xy);

/* Parse, flatten (structure NULL: top), rasterise onto grid into metal
 * (zeroed first). Returns the first failing status. */
sv_status tg_cells(const gds_buf *w, const char *structure, int layer, int datatype, const sv_gds_grid *g, int snap,
                   unsigned char *metal);

/* A map from rows of '#' and '.', first string the top row. */
void tg_map(const char *const *rows, int nx, int ny, unsigned char *cells);

#endif
