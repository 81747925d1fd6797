/* GDSII stream input: the records of a file parsed into structures and
 * elements (library.h), checked against the manual's grammar.
 *
 * Grammar (GDSII Stream Format Manual, release 6.0, "Stream Syntax"):
 *   <stream>    ::= HEADER BGNLIB [LIBDIRSIZE] [SRFNAME] [LIBSECUR] LIBNAME
 *                   [REFLIBS] [FONTS] [ATTRTABLE] [GENERATIONS] [<format>]
 *                   UNITS {<structure>}* ENDLIB
 *   <structure> ::= BGNSTR STRNAME [STRCLASS] {<element>}* ENDSTR
 *   <element>   ::= {<boundary> | <path> | SREF… | AREF… | <text> | <node>
 *                   | <box>} {<property>}* ENDEL
 *   <boundary>  ::= BOUNDARY [ELFLAGS] [PLEX] LAYER DATATYPE XY
 *   <path>      ::= PATH [ELFLAGS] [PLEX] LAYER DATATYPE [PATHTYPE] [WIDTH]
 *                   [BGNEXTN] [ENDEXTN] XY
 *   <SREF>      ::= SREF [ELFLAGS] [PLEX] SNAME [<strans>] XY
 *   <AREF>      ::= AREF [ELFLAGS] [PLEX] SNAME [<strans>] COLROW XY
 *   <box>       ::= BOX [ELFLAGS] [PLEX] LAYER BOXTYPE XY
 *   <strans>    ::= STRANS [MAG] [ANGLE]
 * Inside an element the records are taken in any order (readers in use
 * are as lenient), each at most once; what an element needs is checked at
 * its ENDEL. Every error names the byte offset of the record at fault. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "library.h"

typedef struct cursor {
    const unsigned char *b;
    size_t len, at;
    sv_gds_library *lib;
} cursor;

typedef struct rec {
    int type, data;
    const unsigned char *d;
    size_t n;        /* data bytes */
    long offset;
} rec;

static sv_status perr(const cursor *c, long offset, const char *fmt, const char *a, const char *b)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, a ? a : "", b ? b : "");
    return sv_error(SV_ERR_PARSE, "%s: byte %ld: %s", c->lib->source, offset, msg);
}

static sv_status next_rec(cursor *c, rec *r)
{
    char nb[16];
    r->offset = (long)c->at;
    if (c->at + 4 > c->len)
        return c->at == c->len ? perr(c, r->offset, "the file ends before ENDLIB: truncated%s%s", NULL, NULL)
                               : perr(c, r->offset, "a record header cut short: truncated%s%s", NULL, NULL);
    const unsigned char *p = c->b + c->at;
    size_t n = gds_get_u16(p);
    r->type = p[2];
    r->data = p[3];
    if (n < 4 || n % 2) {
        char v[32];
        snprintf(v, sizeof v, "%zu", n);
        return perr(c, r->offset, "record length %s: expected an even number >= 4 (not a GDSII stream, or "
                    "corrupt)%s", v, NULL);
    }
    if (r->type >= GDS_REC_LIMIT)
        return perr(c, r->offset, "unknown %s (not a GDSII stream, or corrupt)%s", gds_rec_name(r->type, nb), NULL);
    if (c->at + n > c->len) {
        char v[64];
        snprintf(v, sizeof v, "%zu bytes, %zu left in the file", n, c->len - c->at);
        return perr(c, r->offset, "%s record of %s: truncated", gds_rec_name(r->type, nb), v);
    }
    r->d = p + 4;
    r->n = n - 4;
    c->at += n;
    return SV_OK;
}

/* The record's data type and size: `data`, and at least min_n bytes, a
 * multiple of `unit`. */
static sv_status want(const cursor *c, const rec *r, int data, size_t min_n, size_t unit)
{
    char nb[16];
    if (r->data != data) {
        char v[48];
        snprintf(v, sizeof v, "data type %d, expected %d", r->data, data);
        return perr(c, r->offset, "%s record of %s", gds_rec_name(r->type, nb), v);
    }
    if (r->n < min_n || (unit && r->n % unit)) {
        char v[64];
        snprintf(v, sizeof v, "%zu data bytes, expected at least %zu in units of %zu", r->n, min_n, unit);
        return perr(c, r->offset, "%s record of %s", gds_rec_name(r->type, nb), v);
    }
    return SV_OK;
}

static sv_status expect(cursor *c, rec *r, gds_rec type)
{
    sv_status st = next_rec(c, r);
    if (st) return st;
    char a[16], b[16];
    if (r->type != (int)type)
        return perr(c, r->offset, "%s: expected %s", gds_rec_name(r->type, a), gds_rec_name(type, b));
    return SV_OK;
}

/* A string record's text (NUL padding dropped) into the names pool. */
static sv_status add_name(cursor *c, const rec *r, size_t *out)
{
    sv_status st = want(c, r, GDS_ASCII, 1, 0);
    if (st) return st;
    size_t n = r->n;
    while (n && r->d[n - 1] == 0) n--;
    if (!n || memchr(r->d, 0, n)) {
        char nb[16];
        return perr(c, r->offset, "%s: an empty name or one with a NUL inside%s", gds_rec_name(r->type, nb), NULL);
    }
    sv_gds_library *lib = c->lib;
    if ((st = gds_reserve(lib->ctx, (void **)&lib->names, 1, &lib->cap_names, lib->nnames + n + 1, "GDSII names")))
        return st;
    memcpy(lib->names + lib->nnames, r->d, n);
    lib->names[lib->nnames + n] = 0;
    *out = lib->nnames;
    lib->nnames += n + 1;
    return SV_OK;
}

/* The library's header, up to and including UNITS. */
static sv_status read_header(cursor *c)
{
    rec r;
    sv_status st;
    if ((st = expect(c, &r, GDS_HEADER)) || (st = want(c, &r, GDS_INT2, 2, 2))) return st;
    if ((st = expect(c, &r, GDS_BGNLIB)) || (st = want(c, &r, GDS_INT2, 24, 2))) return st;
    int named = 0;
    for (;;) {
        if ((st = next_rec(c, &r))) return st;
        char nb[16];
        switch (r.type) {
        case GDS_LIBNAME: named = 1; break;
        case 0x39: case 0x3A: case 0x3B: /* LIBDIRSIZE, SRFNAME, LIBSECUR */
        case GDS_REFLIBS: case GDS_FONTS: case GDS_ATTRTABLE: case GDS_GENERATIONS:
        case GDS_FORMAT: case GDS_MASK: case GDS_ENDMASKS:
            break;
        case GDS_UNITS: {
            if (!named) return perr(c, r.offset, "UNITS before LIBNAME%s%s", NULL, NULL);
            if ((st = want(c, &r, GDS_REAL8, 16, 8))) return st;
            double in_user = gds_real8_decode(r.d), db = gds_real8_decode(r.d + 8);
            if (!(db > 0 && db < 1 && in_user > 0 && in_user <= 1)) {
                char v[96];
                snprintf(v, sizeof v, "database unit %g user units, %g m", in_user, db);
                return perr(c, r.offset, "UNITS: %s: expected both in (0, 1]%s", v, NULL);
            }
            c->lib->db_m = db;
            c->lib->user_m = db / in_user;
            return SV_OK;
        }
        default:
            return perr(c, r.offset, "%s in the library header: expected LIBNAME, then UNITS%s",
                        gds_rec_name(r.type, nb), NULL);
        }
    }
}

static sv_status new_elem(sv_gds_library *lib, gds_rec kind, long offset, gds_elem **out)
{
    sv_status st = gds_reserve(lib->ctx, (void **)&lib->el, sizeof *lib->el, &lib->cap_el, lib->nel + 1,
                               "GDSII elements");
    if (st) return st;
    gds_elem *e = &lib->el[lib->nel++];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->layer = e->datatype = -1;
    e->mag = 1;
    e->ref = -1;
    e->offset = offset;
    *out = e;
    return SV_OK;
}

/* XY of an element: its points into the pool; a BOUNDARY's closing point
 * (equal to the first) dropped. */
static sv_status read_xy(cursor *c, const rec *r, gds_elem *e)
{
    sv_status st = want(c, r, GDS_INT4, 8, 8);
    if (st) return st;
    sv_gds_library *lib = c->lib;
    int n = (int)(r->n / 8);
    if ((st = gds_reserve(lib->ctx, (void **)&lib->xy, sizeof *lib->xy, &lib->cap_xy, lib->nxy + 2 * (size_t)n,
                          "GDSII coordinates")))
        return st;
    e->at = lib->nxy;
    for (int q = 0; q < 2 * n; q++) lib->xy[lib->nxy + q] = gds_get_i32(r->d + 4 * q);
    const int32_t *v = lib->xy + lib->nxy;
    if ((e->kind == GDS_BOUNDARY || e->kind == GDS_BOX) && n > 1 && v[0] == v[2 * n - 2] && v[1] == v[2 * n - 1]) n--;
    e->n = n;
    lib->nxy += 2 * (size_t)n;
    return SV_OK;
}

/* The points an element needs (after its closing point is dropped). */
static sv_status check_points(const cursor *c, const gds_elem *e)
{
    int lo, hi;
    switch (e->kind) {
    case GDS_BOUNDARY: lo = 3, hi = 8191; break;
    case GDS_BOX: lo = hi = 4; break;
    case GDS_PATH: lo = 2, hi = 8191; break;
    case GDS_SREF: lo = hi = 1; break;
    default: lo = hi = 3; break; /* AREF */
    }
    if (e->n >= lo && e->n <= hi) return SV_OK;
    char nb[16], v[64];
    snprintf(v, sizeof v, "%d points: expected %d to %d", e->n, lo, hi);
    if (lo == hi) snprintf(v, sizeof v, "%d points: expected %d", e->n, lo);
    return perr(c, e->offset, "%s with %s", gds_rec_name(e->kind, nb), v);
}

static sv_status read_strans(cursor *c, const rec *r, gds_elem *e)
{
    sv_status st = want(c, r, GDS_BITS, 2, 2);
    if (st) return st;
    unsigned bits = gds_get_u16(r->d);
    e->reflect = (bits & 0x8000u) != 0; /* bit 0: reflection about x before rotation */
    e->absolute = (bits & 0x0006u) != 0; /* bits 13, 14: absolute magnification, absolute angle */
    return SV_OK;
}

/* One record of a BOUNDARY, BOX, PATH, SREF or AREF into e. */
static sv_status element_record(cursor *c, const rec *r, gds_elem *e)
{
    sv_status st;
    switch (r->type) {
    case GDS_LAYER:
        if ((st = want(c, r, GDS_INT2, 2, 2))) return st;
        e->layer = (int)gds_get_u16(r->d);
        return SV_OK;
    case GDS_DATATYPE:
    case GDS_BOXTYPE:
        if ((st = want(c, r, GDS_INT2, 2, 2))) return st;
        e->datatype = (int)gds_get_u16(r->d);
        return SV_OK;
    case GDS_XY:
        return read_xy(c, r, e);
    case GDS_WIDTH:
        if ((st = want(c, r, GDS_INT4, 4, 4))) return st;
        e->width = gds_get_i32(r->d);
        return SV_OK;
    case GDS_PATHTYPE:
        if ((st = want(c, r, GDS_INT2, 2, 2))) return st;
        e->pathtype = gds_get_i16(r->d);
        return SV_OK;
    case GDS_BGNEXTN:
    case GDS_ENDEXTN:
        if ((st = want(c, r, GDS_INT4, 4, 4))) return st;
        *(r->type == GDS_BGNEXTN ? &e->bgnextn : &e->endextn) = gds_get_i32(r->d);
        return SV_OK;
    case GDS_SNAME:
        return add_name(c, r, &e->name);
    case GDS_STRANS:
        return read_strans(c, r, e);
    case GDS_MAG:
    case GDS_ANGLE:
        if ((st = want(c, r, GDS_REAL8, 8, 8))) return st;
        *(r->type == GDS_MAG ? &e->mag : &e->angle) = gds_real8_decode(r->d);
        return SV_OK;
    case GDS_COLROW:
        if ((st = want(c, r, GDS_INT2, 4, 2))) return st;
        e->cols = gds_get_i16(r->d);
        e->rows = gds_get_i16(r->d + 2);
        return SV_OK;
    case GDS_ELFLAGS: case GDS_PLEX: case GDS_PROPATTR: case GDS_PROPVALUE:
        return SV_OK;
    default: {
        char nb[16], kb[16];
        return perr(c, r->offset, "%s inside %s: expected ENDEL", gds_rec_name(r->type, nb), gds_rec_name(e->kind, kb));
    }
    }
}

static int has(uint64_t seen, gds_rec type) { return (int)(seen >> type & 1); }

/* At ENDEL: the records the element needs (seen: the types it had), its
 * array's size, its points. */
static sv_status element_complete(const cursor *c, const gds_elem *e, uint64_t seen)
{
    const gds_rec kind = e->kind;
    const int ref = kind == GDS_SREF || kind == GDS_AREF;
    const char *missing = !has(seen, GDS_XY)                       ? "XY"
                          : ref && !has(seen, GDS_SNAME)           ? "SNAME"
                          : kind == GDS_AREF && !has(seen, GDS_COLROW) ? "COLROW"
                          : !ref && e->layer < 0                   ? "LAYER"
                          : !ref && e->datatype < 0                ? (kind == GDS_BOX ? "BOXTYPE" : "DATATYPE")
                                                                   : NULL;
    char nb[16];
    if (missing) return perr(c, e->offset, "%s without %s", gds_rec_name(kind, nb), missing);
    if (kind == GDS_AREF && (e->cols < 1 || e->rows < 1)) {
        char v[48];
        snprintf(v, sizeof v, "%d columns, %d rows", e->cols, e->rows);
        return perr(c, e->offset, "AREF with %s: expected 1 to 32767 of each%s", v, NULL);
    }
    return check_points(c, e);
}

/* The records of one element after its first, up to ENDEL; each at most
 * once but for properties (PROPATTR, PROPVALUE pairs, as many as given). */
static sv_status read_element(cursor *c, gds_rec kind, long offset)
{
    gds_elem *e;
    sv_status st = new_elem(c->lib, kind, offset, &e);
    if (st) return st;
    const int skipping = kind == GDS_TEXT || kind == GDS_NODE; /* they hold no metal */
    uint64_t seen = 0; /* record types met (next_rec keeps them below GDS_REC_LIMIT <= 64) */
    rec r;
    char nb[16], kb[16];
    for (;;) {
        if ((st = next_rec(c, &r))) return st;
        if (r.type == GDS_ENDEL) break;
        if (r.type != GDS_PROPATTR && r.type != GDS_PROPVALUE && has(seen, r.type))
            return perr(c, r.offset, "a second %s in one %s", gds_rec_name(r.type, nb), gds_rec_name(kind, kb));
        seen |= (uint64_t)1 << r.type;
        if (!skipping) {
            if ((st = element_record(c, &r, e))) return st;
        } else if (r.type == GDS_BGNSTR || r.type == GDS_ENDSTR || r.type == GDS_ENDLIB || r.type == GDS_BOUNDARY) {
            return perr(c, r.offset, "%s inside an element: expected ENDEL%s", gds_rec_name(r.type, nb), NULL);
        }
    }
    if (skipping) { /* forgotten */
        c->lib->nel--;
        return SV_OK;
    }
    return element_complete(c, e, seen);
}

static sv_status read_structure(cursor *c, long offset)
{
    sv_gds_library *lib = c->lib;
    sv_status st = gds_reserve(lib->ctx, (void **)&lib->st, sizeof *lib->st, &lib->cap_st, lib->nst + 1,
                               "GDSII structures");
    if (st) return st;
    rec r;
    if ((st = expect(c, &r, GDS_STRNAME))) return st;
    gds_struct *s = &lib->st[lib->nst];
    s->offset = offset;
    if ((st = add_name(c, &r, &s->name))) return st;
    s->first = lib->nel;
    lib->nst++;
    char nb[16];
    for (;;) {
        if ((st = next_rec(c, &r))) return st;
        switch (r.type) {
        case GDS_ENDSTR:
            lib->st[lib->nst - 1].count = lib->nel - lib->st[lib->nst - 1].first;
            return SV_OK;
        case 0x34: /* STRCLASS */
            break;
        case GDS_BOUNDARY: case GDS_PATH: case GDS_SREF: case GDS_AREF: case GDS_TEXT: case GDS_NODE: case GDS_BOX:
            if ((st = read_element(c, r.type, r.offset))) return st;
            break;
        default:
            return perr(c, r.offset, "%s in a structure: expected an element or ENDSTR%s", gds_rec_name(r.type, nb),
                        NULL);
        }
    }
}

/* A structure's name and index, sorted by name (then index) so that a
 * chip's layout of 10⁵ structures is checked and resolved in n log n, not
 * by the pairwise search that takes hours there. */
typedef struct named {
    const char *name;
    int index;
} named;

static int cmp_named(const void *pa, const void *pb)
{
    const named *a = pa, *b = pb;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->index > b->index) - (a->index < b->index);
}

static int cmp_named_name(const void *pa, const void *pb)
{
    return strcmp(((const named *)pa)->name, ((const named *)pb)->name);
}

/* A name defined twice is refused at its second definition (the earliest
 * such in the file's order of first definitions). */
static sv_status check_unique(const cursor *c, const named *by_name, size_t n)
{
    const sv_gds_library *lib = c->lib;
    int first = -1, second = -1;
    for (size_t k = 0; k + 1 < n; k++)
        if (!strcmp(by_name[k].name, by_name[k + 1].name) && (first < 0 || by_name[k].index < first)) {
            first = by_name[k].index;
            second = by_name[k + 1].index;
        }
    if (first < 0) return SV_OK;
    return perr(c, lib->st[second].offset, "structure \"%s\" defined twice%s", gds_lib_name(lib, lib->st[second].name),
                NULL);
}

/* Structure names unique; each reference's structure found. */
static sv_status resolve(cursor *c)
{
    sv_gds_library *lib = c->lib;
    if (lib->nst == 0) return SV_OK;
    named *by_name = sv_alloc(lib->ctx, lib->nst * sizeof *by_name, "GDSII structure names");
    if (!by_name) return sv_last_status();
    for (size_t s = 0; s < lib->nst; s++) by_name[s] = (named){gds_lib_name(lib, lib->st[s].name), (int)s};
    qsort(by_name, lib->nst, sizeof *by_name, cmp_named);
    sv_status st = check_unique(c, by_name, lib->nst);
    for (size_t k = 0; k < lib->nel && !st; k++) {
        gds_elem *e = &lib->el[k];
        if (e->kind != GDS_SREF && e->kind != GDS_AREF) continue;
        const named key = {gds_lib_name(lib, e->name), 0};
        const named *hit = bsearch(&key, by_name, lib->nst, sizeof *by_name, cmp_named_name);
        /* a reference to a structure the file lacks is refused when it is flattened */
        e->ref = hit ? hit->index : -1;
    }
    sv_free(lib->ctx, by_name);
    return st;
}

sv_status sv_gds_parse(sv_ctx *ctx, const unsigned char *bytes, size_t len, const char *name, sv_gds_library **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_gds_parse: out is NULL");
    *out = NULL;
    if (!bytes && len) return sv_error(SV_ERR_ARG, "sv_gds_parse: bytes is NULL");
    sv_gds_library *lib = sv_calloc(ctx, 1, sizeof *lib, "GDSII library");
    if (!lib) return sv_last_status();
    lib->ctx = ctx;
    const char *src = name ? name : "(GDSII)";
    size_t n = strlen(src) + 1;
    if (!(lib->source = sv_alloc(ctx, n, "GDSII file name"))) {
        sv_free(ctx, lib);
        return sv_last_status();
    }
    memcpy(lib->source, src, n);
    cursor c = {bytes, len, 0, lib};
    sv_status st = read_header(&c);
    rec r;
    char nb[16];
    while (!st) {
        if ((st = next_rec(&c, &r))) break;
        if (r.type == GDS_ENDLIB) break; /* what follows (tape-block padding) is not read */
        if (r.type != GDS_BGNSTR) {
            st = perr(&c, r.offset, "%s: expected BGNSTR or ENDLIB%s", gds_rec_name(r.type, nb), NULL);
            break;
        }
        if (!(st = want(&c, &r, GDS_INT2, 24, 2))) st = read_structure(&c, r.offset);
    }
    if (!st) st = resolve(&c);
    if (st) {
        sv_gds_library_destroy(lib);
        return st;
    }
    *out = lib;
    return SV_OK;
}

/* Layouts up to 2 GiB: record offsets are reported as longs, and a larger
 * file is no planar board. */
#define GDS_FILE_MAX ((size_t)1 << 31)

sv_status sv_gds_read(sv_ctx *ctx, const char *path, sv_gds_library **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_gds_read: out is NULL");
    *out = NULL;
    if (!path) return sv_error(SV_ERR_ARG, "sv_gds_read: path is NULL");
    char *buf;
    size_t len;
    sv_status st = sv_input_file_read(path, path, GDS_FILE_MAX, "a GDSII layout this reader takes", &buf, &len);
    if (st) return st;
    st = sv_gds_parse(ctx, (const unsigned char *)buf, len, path, out);
    free(buf);
    return st;
}

void sv_gds_library_destroy(sv_gds_library *lib)
{
    if (!lib) return;
    void *const own[] = {lib->st, lib->el, lib->xy, lib->names, lib->source, lib};
    sv_free_each(lib->ctx, own, SV_COUNT(own));
}

void sv_gds_library_units(const sv_gds_library *lib, double *user_unit_m, double *db_unit_m)
{
    if (user_unit_m) *user_unit_m = lib ? lib->user_m : 0;
    if (db_unit_m) *db_unit_m = lib ? lib->db_m : 0;
}

int sv_gds_library_structures(const sv_gds_library *lib) { return lib ? (int)lib->nst : 0; }

const char *sv_gds_library_structure_name(const sv_gds_library *lib, int k)
{
    return lib && k >= 0 && (size_t)k < lib->nst ? gds_lib_name(lib, lib->st[k].name) : NULL;
}
