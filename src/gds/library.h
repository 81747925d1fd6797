/* A GDSII library as read (read.c) and flattened (flatten.c): structures
 * and their elements, coordinates in database units. */
#ifndef SV_GDS_LIBRARY_H
#define SV_GDS_LIBRARY_H

#include "gds_internal.h"

typedef struct gds_elem {
    gds_rec kind;          /* GDS_BOUNDARY, GDS_BOX, GDS_PATH, GDS_SREF or GDS_AREF */
    int layer, datatype;   /* a BOX's BOXTYPE is its datatype */
    int pathtype;
    int32_t width, bgnextn, endextn;
    int reflect, absolute; /* STRANS: reflection about x; absolute magnification or angle */
    double mag, angle;     /* degrees */
    int cols, rows;
    int ref;               /* the referenced structure (after resolve), or -1 */
    size_t name;           /* SREF/AREF: its SNAME in the library's names pool */
    size_t at;             /* first point in the library's xy pool */
    int n;                 /* points (a BOUNDARY's closing point dropped) */
    long offset;           /* byte offset of the element's first record */
} gds_elem;

typedef struct gds_struct {
    size_t name;           /* in the names pool */
    size_t first, count;   /* its elements */
    long offset;
} gds_struct;

struct sv_gds_library {
    sv_ctx *ctx;
    char *source;          /* file name for messages */
    double user_m, db_m;   /* UNITS */
    gds_struct *st;
    size_t nst, cap_st;
    gds_elem *el;
    size_t nel, cap_el;
    int32_t *xy;           /* x, y pairs */
    size_t nxy, cap_xy;    /* int32 values */
    char *names;           /* NUL-terminated names, back to back */
    size_t nnames, cap_names;
};

static inline const char *gds_lib_name(const sv_gds_library *lib, size_t at) { return lib->names + at; }

#endif
