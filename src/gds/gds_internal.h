/* The GDSII stream format's records, and the shapes set the module's
 * parts share.
 *
 * Reference: Calma / Cadence, "GDSII Stream Format Manual", release 6.0
 * (Feb. 1987), "Stream Record Format" and "Record Descriptions" (record
 * numbers, data types) and "Stream Syntax" (the grammar read in read.c). */
#ifndef SV_GDS_INTERNAL_H
#define SV_GDS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "solvent/gds.h"

/* Record types (the manual's record numbers). */
typedef enum gds_rec {
    GDS_HEADER = 0x00,
    GDS_BGNLIB = 0x01,
    GDS_LIBNAME = 0x02,
    GDS_UNITS = 0x03,
    GDS_ENDLIB = 0x04,
    GDS_BGNSTR = 0x05,
    GDS_STRNAME = 0x06,
    GDS_ENDSTR = 0x07,
    GDS_BOUNDARY = 0x08,
    GDS_PATH = 0x09,
    GDS_SREF = 0x0A,
    GDS_AREF = 0x0B,
    GDS_TEXT = 0x0C,
    GDS_LAYER = 0x0D,
    GDS_DATATYPE = 0x0E,
    GDS_WIDTH = 0x0F,
    GDS_XY = 0x10,
    GDS_ENDEL = 0x11,
    GDS_SNAME = 0x12,
    GDS_COLROW = 0x13,
    GDS_NODE = 0x15,
    GDS_TEXTTYPE = 0x16,
    GDS_PRESENTATION = 0x17,
    GDS_STRING = 0x19,
    GDS_STRANS = 0x1A,
    GDS_MAG = 0x1B,
    GDS_ANGLE = 0x1C,
    GDS_REFLIBS = 0x1F,
    GDS_FONTS = 0x20,
    GDS_PATHTYPE = 0x21,
    GDS_GENERATIONS = 0x22,
    GDS_ATTRTABLE = 0x23,
    GDS_ELFLAGS = 0x26,
    GDS_NODETYPE = 0x2A,
    GDS_PROPATTR = 0x2B,
    GDS_PROPVALUE = 0x2C,
    GDS_BOX = 0x2D,
    GDS_BOXTYPE = 0x2E,
    GDS_PLEX = 0x2F,
    GDS_BGNEXTN = 0x30,
    GDS_ENDEXTN = 0x31,
    GDS_FORMAT = 0x36,
    GDS_MASK = 0x37,
    GDS_ENDMASKS = 0x38,
    GDS_REC_LIMIT = 0x3C /* the manual's last record is 0x3B (LIBSECUR) */
} gds_rec;

/* Data types of a record's contents. */
typedef enum gds_data {
    GDS_NODATA = 0,
    GDS_BITS = 1,  /* 2-byte bit array */
    GDS_INT2 = 2,
    GDS_INT4 = 3,
    GDS_REAL4 = 4, /* defined by the manual, used by no record */
    GDS_REAL8 = 5,
    GDS_ASCII = 6
} gds_data;

/* The record's name ("BOUNDARY"), or "record 0xNN". */
const char *gds_rec_name(int type, char buf[16]);

/* The 8-byte real: sign bit, 7-bit exponent in excess 64 (a power of 16),
 * 56-bit fraction 0.M with its first hex digit nonzero (0: all bytes 0).
 * Every finite double of magnitude in [16^-65, 16^63) is exactly such a
 * number (53 significand bits fit in 56 after a shift of up to 3);
 * smaller magnitudes become 0 and larger are refused (return -1). */
int gds_real8_encode(double v, unsigned char out[8]);
double gds_real8_decode(const unsigned char in[8]);

/* Big-endian integers. */
static inline int gds_get_i16(const unsigned char *p) { return (int16_t)(uint16_t)((p[0] << 8) | p[1]); }
static inline unsigned gds_get_u16(const unsigned char *p) { return (unsigned)((p[0] << 8) | p[1]); }
static inline int32_t gds_get_i32(const unsigned char *p)
{
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]);
}

/* A growing byte buffer the writer fills before the file is written. */
typedef struct gds_buf {
    unsigned char *b;
    size_t len, cap;
    int failed; /* an allocation failed: the rest is not written */
} gds_buf;
void gds_buf_free(gds_buf *w);
/* One record with its header; n data bytes (the writer pads odd strings). */
void gds_put_record(gds_buf *w, gds_rec type, gds_data data, const void *bytes, size_t n);
void gds_put_i16s(gds_buf *w, gds_rec type, const int *v, int n);
void gds_put_i32s(gds_buf *w, gds_rec type, const int32_t *v, int n);
void gds_put_reals(gds_buf *w, gds_rec type, const double *v, int n);
/* Names written (LIBNAME, STRNAME): at most this many characters; the
 * manual allows 32 for a structure, longer are common and read back. */
#define GDS_STRING_MAX 126
void gds_put_string(gds_buf *w, gds_rec type, const char *s);

/* The shapes set (shapes.c): polygons in metres, their provenance. */
typedef struct gds_poly {
    int layer, datatype;
    int n;
    size_t at;              /* first coordinate in xy */
    const char *kind;       /* static string */
    int structure;          /* index into the set's names, or -1 */
    long offset;
} gds_poly;

struct sv_gds_shapes {
    sv_ctx *ctx;
    char *source;           /* the file read, for messages ("" for a cell map) */
    gds_poly *poly;
    int npoly, cap_poly;
    double *xy;
    size_t nxy, cap_xy;     /* doubles */
    char **names;           /* structure names, each once (the set outlives the library) */
    int nnames, cap_names;
};

/* Grow *block (elements of `size` bytes, capacity *cap) to hold `need`,
 * doubling, in the context's budget. */
sv_status gds_reserve(sv_ctx *ctx, void **block, size_t size, size_t *cap, size_t need, const char *what);

sv_status gds_shapes_create(sv_ctx *ctx, const char *source, sv_gds_shapes **out);
/* A structure name added to the set's list (the caller adds each once
 * and keeps its index: flatten.c, one per structure of the library). */
sv_status gds_shapes_name(sv_gds_shapes *s, const char *name, int *out);
/* Append a polygon of n vertices (xy: 2n doubles, m); structure: an
 * index from gds_shapes_name, or -1. */
sv_status gds_shapes_add(sv_gds_shapes *s, int layer, int datatype, const double *xy, int n, const char *kind,
                         int structure, long offset);
/* "file: structure TOP, BOUNDARY at byte 120" for messages. */
const char *gds_shape_where(const sv_gds_shapes *s, int k, char *buf, size_t cap);

#endif
