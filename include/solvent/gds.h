/* Solvent GDSII: layouts in and out (docs/how-to/gds.md).
 *
 * The stream format is the Calma GDSII Stream Format, release 6.0 (Calma /
 * Cadence, "GDSII Stream Format Manual", Feb. 1987): a sequence of records,
 * each a 2-byte big-endian length (header included), a record type and a
 * data type, then the data. Solvent writes one library of one structure
 * whose metal is BOUNDARY elements on one layer and datatype, and reads
 * BOUNDARY, BOX and PATH elements through SREF and AREF references.
 *
 * Out: a cell map (nx × ny cells on a uniform grid, 1 = metal) becomes its
 * merged outlines: one polygon per 4-connected piece of metal (cells that
 * meet only at a corner are separate pieces, as they are for the planar
 * model, which carries no current through a corner), its holes joined to
 * its outline by zero-width cut lines (the form GDSII, which has no holes,
 * and layout tools use); a polygon longer than the format allows is split
 * across rows into smaller ones.
 *
 * In: a structure (the unique top structure by default) flattened through
 * its references on one layer and datatype, into polygons in metres, and
 * those rasterised onto a grid: exactly when every shape is Manhattan with
 * its corners on grid lines, else (snap) by the cells whose centres the
 * shapes cover.
 *
 * All lengths are metres. */
#ifndef SOLVENT_GDS_H
#define SOLVENT_GDS_H

#include <stdint.h>

#include "solvent/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A uniform grid: cell (i, j) covers x ∈ [x0 + i·dx, x0 + (i+1)·dx],
 * y ∈ [y0 + j·dy, y0 + (j+1)·dy]; j = 0 is the bottom row. Maps over it are
 * indexed i + nx·j. (The planar model's grid, sv_em_grid, has the same
 * fields.) */
typedef struct sv_gds_grid {
    int nx, ny;
    double dx, dy;
    double x0, y0;
} sv_gds_grid;

/* ---- polygons ------------------------------------------------------------- */
/* A set of polygons in metres: a cell map's outlines, or a structure's
 * shapes on one layer. */
typedef struct sv_gds_shapes sv_gds_shapes;

typedef struct sv_gds_polygon {
    int layer, datatype;
    int n;              /* vertices (the first is not repeated at the end) */
    const double *xy;   /* 2·n: x0, y0, x1, y1, ... (m); borrowed from the set */
    /* Where it came from, for messages: the element's record type
     * ("BOUNDARY", "BOX", "PATH"; "outline" for a cell map's), the structure
     * that holds it and the element's byte offset in its file (−1: none). */
    const char *kind;
    const char *structure;
    long offset;
} sv_gds_polygon;

int sv_gds_shapes_count(const sv_gds_shapes *s);
/* Polygon k (0 ≤ k < count) into *out; SV_ERR_ARG for a k out of range. */
sv_status sv_gds_shapes_get(const sv_gds_shapes *s, int k, sv_gds_polygon *out);
void sv_gds_shapes_destroy(sv_gds_shapes *s);

/* The merged outlines of a cell map (cells[i + nx·j] nonzero = metal) on
 * `layer`/`datatype`, each polygon at most max_points vertices (0: the
 * format's limit, SV_GDS_MAX_POINTS; at least 4). An empty map gives an
 * empty set. */
#define SV_GDS_MAX_POINTS 8190
sv_status sv_gds_outline(sv_ctx *ctx, const sv_gds_grid *grid, const unsigned char *cells, int layer, int datatype,
                         int max_points, sv_gds_shapes **out);

/* ---- writing ------------------------------------------------------------- */
/* Options of a written file. A zero-filled struct (or NULL) means the
 * defaults. */
typedef struct sv_gds_write_options {
    const char *library;  /* LIBNAME; NULL: "SOLVENT" */
    const char *cell;     /* the structure's name; NULL: "TOP" */
    double user_unit_m;   /* the user unit, m; 0: 1e-6 (µm) */
    double db_unit_m;     /* the database unit, m; 0: 1e-9 (nm); every vertex must be a whole number of them */
    int timestamp[6];     /* BGNLIB/BGNSTR's year, month, day, hour, minute, second; all 0: 1970-01-01 00:00:00,
                             so that the same layout gives the same bytes */
} sv_gds_write_options;

/* The shapes as one structure's BOUNDARY elements, atomically into `path`
 * (nothing is left behind on failure). SV_ERR_ARG naming the vertex for a
 * coordinate that is not a whole number of database units (to 1e-3 of
 * one) or beyond the format's 32-bit range. */
sv_status sv_gds_write(const char *path, const sv_gds_shapes *shapes, const sv_gds_write_options *opts);

/* A cell map's merged outlines (sv_gds_outline) written as above: the
 * layout a fabricator takes. */
#define SV_GDS_DEFAULT_LAYER 1
/* The largest layer and datatype written: both are 2-byte signed integers
 * and readers in use take no negative one. */
#define SV_GDS_MAX_LAYER 32767
sv_status sv_gds_write_cells(sv_ctx *ctx, const char *path, const sv_gds_grid *grid, const unsigned char *cells,
                             int layer, int datatype, const sv_gds_write_options *opts);

/* ---- reading --------------------------------------------------------------- */
typedef struct sv_gds_library sv_gds_library;

/* Parse a GDSII stream file whole (SV_ERR_IO; SV_ERR_PARSE naming the byte
 * offset and the record for malformed or truncated input). */
sv_status sv_gds_read(sv_ctx *ctx, const char *path, sv_gds_library **out);
/* The same from bytes in memory; `name` is used in messages. */
sv_status sv_gds_parse(sv_ctx *ctx, const unsigned char *bytes, size_t len, const char *name, sv_gds_library **out);
void sv_gds_library_destroy(sv_gds_library *lib);

/* The UNITS record: the user unit and the database unit in metres. */
void sv_gds_library_units(const sv_gds_library *lib, double *user_unit_m, double *db_unit_m);
int sv_gds_library_structures(const sv_gds_library *lib);
const char *sv_gds_library_structure_name(const sv_gds_library *lib, int k);

/* Which shapes to take: a structure (NULL: the one structure no other
 * references, refused when there are several), a layer and a datatype
 * (−1: every datatype on the layer). */
typedef struct sv_gds_select {
    const char *structure;
    int layer;
    int datatype;
} sv_gds_select;

/* The selected structure flattened: its own BOUNDARY, BOX and PATH elements
 * on the layer and those of the structures it references (SREF, AREF),
 * transformed by each reference's reflection, magnification and angle
 * (a multiple of 90°; another angle is refused naming the reference),
 * nested to any depth; a reference cycle is refused naming it. PATH types
 * 0, 2 and 4 with Manhattan segments become polygons; a round-ended (1)
 * or slanted path is refused. */
sv_status sv_gds_flatten(const sv_gds_library *lib, const sv_gds_select *sel, sv_gds_shapes **out);

/* Rasterise shapes onto a grid: metal[i + nx·j] = 1 where a shape covers
 * cell (i, j) (nonzero winding: a keyhole's hole stays empty), others left
 * as they are (the union with what is there). snap = 0: every edge must be
 * parallel to an axis and every vertex on the grid's lines (within half a
 * database unit, db_unit_m, or 1e-6 of a cell) — else SV_ERR_PARSE naming
 * the shape and the coordinates; snap = 1: a cell is metal when its centre
 * is inside a shape. A shape reaching beyond the grid is refused in both
 * modes (by more than the tolerance, or half a cell with snap). */
sv_status sv_gds_rasterise(const sv_gds_shapes *shapes, const sv_gds_grid *grid, double db_unit_m, int snap,
                           unsigned char *metal);

#ifdef __cplusplus
}
#endif

#endif
