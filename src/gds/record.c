/* GDSII records: the 8-byte real, and records written into a buffer.
 *
 * Format: Calma / Cadence, "GDSII Stream Format Manual", release 6.0,
 * "Stream Record Format": a record is a 2-byte big-endian count of its
 * bytes (the 4-byte header included; at most 65 535, even), a record-type
 * byte, a data-type byte, then the data: 2-byte and 4-byte signed integers
 * in two's complement, big-endian; 8-byte reals in excess-64 form (below);
 * ASCII strings padded with a NUL to an even length. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gds_internal.h"

/* Names of the records read or written, for messages. */
static const char *const rec_names[GDS_REC_LIMIT] = {
    [GDS_HEADER] = "HEADER",     [GDS_BGNLIB] = "BGNLIB",     [GDS_LIBNAME] = "LIBNAME",
    [GDS_UNITS] = "UNITS",       [GDS_ENDLIB] = "ENDLIB",     [GDS_BGNSTR] = "BGNSTR",
    [GDS_STRNAME] = "STRNAME",   [GDS_ENDSTR] = "ENDSTR",     [GDS_BOUNDARY] = "BOUNDARY",
    [GDS_PATH] = "PATH",         [GDS_SREF] = "SREF",         [GDS_AREF] = "AREF",
    [GDS_TEXT] = "TEXT",         [GDS_LAYER] = "LAYER",       [GDS_DATATYPE] = "DATATYPE",
    [GDS_WIDTH] = "WIDTH",       [GDS_XY] = "XY",             [GDS_ENDEL] = "ENDEL",
    [GDS_SNAME] = "SNAME",       [GDS_COLROW] = "COLROW",     [GDS_NODE] = "NODE",
    [GDS_TEXTTYPE] = "TEXTTYPE", [GDS_PRESENTATION] = "PRESENTATION", [GDS_STRING] = "STRING",
    [GDS_STRANS] = "STRANS",     [GDS_MAG] = "MAG",           [GDS_ANGLE] = "ANGLE",
    [GDS_REFLIBS] = "REFLIBS",   [GDS_FONTS] = "FONTS",       [GDS_PATHTYPE] = "PATHTYPE",
    [GDS_GENERATIONS] = "GENERATIONS", [GDS_ATTRTABLE] = "ATTRTABLE", [GDS_ELFLAGS] = "ELFLAGS",
    [GDS_NODETYPE] = "NODETYPE", [GDS_PROPATTR] = "PROPATTR", [GDS_PROPVALUE] = "PROPVALUE",
    [GDS_BOX] = "BOX",           [GDS_BOXTYPE] = "BOXTYPE",   [GDS_PLEX] = "PLEX",
    [GDS_BGNEXTN] = "BGNEXTN",   [GDS_ENDEXTN] = "ENDEXTN",   [GDS_FORMAT] = "FORMAT",
    [GDS_MASK] = "MASK",         [GDS_ENDMASKS] = "ENDMASKS",
};

const char *gds_rec_name(int type, char buf[16])
{
    if (type >= 0 && type < GDS_REC_LIMIT && rec_names[type]) return rec_names[type];
    snprintf(buf, 16, "record 0x%02X", (unsigned)type & 0xFFu);
    return buf;
}

/* The manual's 8-byte real: value = (−1)^S · 0.M · 16^(E − 64), S the top
 * bit, E the next 7, M the 56 bits of the other 7 bytes, with 1/16 ≤ 0.M < 1.
 * A double's 53-bit significand shifted by at most 3 bits to make the
 * exponent a multiple of 4 fits M exactly, so encoding never rounds. */
int gds_real8_encode(double v, unsigned char out[8])
{
    memset(out, 0, 8);
    if (v == 0) return 0;
    if (!isfinite(v)) return -1;
    int sign = v < 0, e2;
    double f = frexp(fabs(v), &e2);             /* |v| = f · 2^e2, f ∈ [0.5, 1) */
    int e16 = (int)ceil(e2 / 4.0);
    int shift = 4 * e16 - e2;                   /* 0..3: f·2^-shift ∈ [1/16, 1) */
    if (e16 + 64 > 127) return -1;
    if (e16 + 64 < 0) return 0;                 /* below the format's smallest: 0 */
    uint64_t m = (uint64_t)ldexp(f, 56 - shift); /* exact: 53 bits shifted left by 3..56 */
    out[0] = (unsigned char)((sign << 7) | (e16 + 64));
    for (int k = 7; k >= 1; k--) {
        out[k] = (unsigned char)(m & 0xFF);
        m >>= 8;
    }
    return 0;
}

double gds_real8_decode(const unsigned char in[8])
{
    uint64_t m = 0;
    for (int k = 1; k < 8; k++) m = (m << 8) | in[k];
    int e = (in[0] & 0x7F) - 64;
    /* m → double rounds once (56 to 53 bits); the scaling by 2^(4e − 56) is exact */
    double v = ldexp((double)m, 4 * e - 56);
    return (in[0] & 0x80) ? -v : v;
}

/* ---- records into a buffer ---------------------------------------------------- */

void gds_buf_free(gds_buf *w)
{
    free(w->b);
    w->b = NULL;
    w->len = w->cap = 0;
}

static unsigned char *grow(gds_buf *w, size_t n)
{
    if (w->failed) return NULL;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < w->len + n) cap *= 2;
        unsigned char *b = realloc(w->b, cap);
        if (!b) {
            w->failed = 1;
            return NULL;
        }
        w->b = b;
        w->cap = cap;
    }
    unsigned char *p = w->b + w->len;
    w->len += n;
    return p;
}

/* A record's header appended to w; returns where its n data bytes go
 * (NULL when w has failed). */
static unsigned char *begin_record(gds_buf *w, gds_rec type, gds_data data, size_t n)
{
    size_t total = 4 + n;
    if (total > 65534) { /* the callers keep records short; a longer one is a bug */
        w->failed = 1;
        return NULL;
    }
    unsigned char *p = grow(w, total);
    if (!p) return NULL;
    p[0] = (unsigned char)(total >> 8);
    p[1] = (unsigned char)(total & 0xFF);
    p[2] = (unsigned char)type;
    p[3] = (unsigned char)data;
    return p + 4;
}

void gds_put_record(gds_buf *w, gds_rec type, gds_data data, const void *bytes, size_t n)
{
    unsigned char *p = begin_record(w, type, data, n);
    if (p && n) memcpy(p, bytes, n);
}

void gds_put_i16s(gds_buf *w, gds_rec type, const int *v, int n)
{
    unsigned char b[64];
    if (n > 32) { /* no record of 2-byte integers holds more (BGNLIB's 12 are the most) */
        w->failed = 1;
        return;
    }
    for (int k = 0; k < n; k++) {
        b[2 * k] = (unsigned char)(((unsigned)v[k] >> 8) & 0xFF);
        b[2 * k + 1] = (unsigned char)((unsigned)v[k] & 0xFF);
    }
    gds_put_record(w, type, GDS_INT2, b, 2 * (size_t)n);
}

/* Written straight into the buffer: an XY record holds up to 64 KiB. */
void gds_put_i32s(gds_buf *w, gds_rec type, const int32_t *v, int n)
{
    unsigned char *p = n < 0 ? NULL : begin_record(w, type, GDS_INT4, 4 * (size_t)n);
    if (!p) {
        w->failed = 1;
        return;
    }
    for (int k = 0; k < n; k++) {
        uint32_t u = (uint32_t)v[k];
        p[4 * k] = (unsigned char)(u >> 24);
        p[4 * k + 1] = (unsigned char)(u >> 16);
        p[4 * k + 2] = (unsigned char)(u >> 8);
        p[4 * k + 3] = (unsigned char)u;
    }
}

void gds_put_reals(gds_buf *w, gds_rec type, const double *v, int n)
{
    unsigned char b[64];
    if (n > 8) { /* UNITS's 2 are the most */
        w->failed = 1;
        return;
    }
    for (int k = 0; k < n; k++)
        if (gds_real8_encode(v[k], b + 8 * k)) w->failed = 1;
    gds_put_record(w, type, GDS_REAL8, b, 8 * (size_t)n);
}

void gds_put_string(gds_buf *w, gds_rec type, const char *s)
{
    unsigned char b[GDS_STRING_MAX + 2];
    size_t n = strlen(s);
    if (n > GDS_STRING_MAX) { /* the writer checks names before */
        w->failed = 1;
        return;
    }
    memcpy(b, s, n);
    if (n % 2) b[n++] = 0; /* strings are padded to an even length */
    gds_put_record(w, type, GDS_ASCII, b, n);
}
