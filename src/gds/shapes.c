/* Sets of polygons in metres: what a cell map's outline, a flattened
 * structure and the writer and rasteriser pass between them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gds_internal.h"

sv_status gds_shapes_create(sv_ctx *ctx, const char *source, sv_gds_shapes **out)
{
    *out = NULL;
    sv_gds_shapes *s = sv_calloc(ctx, 1, sizeof *s, "GDSII shapes");
    if (!s) return sv_last_status();
    s->ctx = ctx;
    size_t n = strlen(source ? source : "") + 1;
    if (!(s->source = sv_alloc(ctx, n, "GDSII shapes' source name"))) {
        sv_free(ctx, s);
        return sv_last_status();
    }
    memcpy(s->source, source ? source : "", n);
    *out = s;
    return SV_OK;
}

/* Double a block's capacity (elements of `size` bytes) to hold `need`. */
sv_status gds_reserve(sv_ctx *ctx, void **block, size_t size, size_t *cap, size_t need, const char *what)
{
    if (need <= *cap) return SV_OK;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    size_t bytes;
    if (sv_size_mul(c, size, &bytes)) return sv_error(SV_ERR_NOMEM, "%s: too many", what);
    void *b = sv_alloc(ctx, bytes, what);
    if (!b) return sv_last_status();
    if (*cap) memcpy(b, *block, *cap * size);
    sv_free(ctx, *block);
    *block = b;
    *cap = c;
    return SV_OK;
}

sv_status gds_shapes_name(sv_gds_shapes *s, const char *name, int *out)
{
    *out = -1;
    size_t cap = (size_t)s->cap_names;
    sv_status st = gds_reserve(s->ctx, (void **)&s->names, sizeof *s->names, &cap, (size_t)s->nnames + 1,
                               "GDSII shapes' structure names");
    if (st) return st;
    s->cap_names = (int)cap;
    size_t n = strlen(name) + 1;
    if (!(s->names[s->nnames] = sv_alloc(s->ctx, n, "GDSII structure name"))) return sv_last_status();
    memcpy(s->names[s->nnames], name, n);
    *out = s->nnames++;
    return SV_OK;
}

sv_status gds_shapes_add(sv_gds_shapes *s, int layer, int datatype, const double *xy, int n, const char *kind,
                         int structure, long offset)
{
    if (s->npoly == 0x7fffffff) return sv_error(SV_ERR_ARG, "%s: more than 2^31 polygons", s->source);
    size_t cap = (size_t)s->cap_poly;
    sv_status st = gds_reserve(s->ctx, (void **)&s->poly, sizeof *s->poly, &cap, (size_t)s->npoly + 1, "GDSII polygons");
    if (st) return st;
    s->cap_poly = (int)(cap > 0x7fffffff ? 0x7fffffff : cap);
    if ((st = gds_reserve(s->ctx, (void **)&s->xy, sizeof *s->xy, &s->cap_xy, s->nxy + 2 * (size_t)n,
                      "GDSII polygon vertices")))
        return st;
    gds_poly *p = &s->poly[s->npoly];
    p->structure = structure;
    p->layer = layer;
    p->datatype = datatype;
    p->n = n;
    p->at = s->nxy;
    p->kind = kind;
    p->offset = offset;
    memcpy(s->xy + s->nxy, xy, 2 * (size_t)n * sizeof *xy);
    s->nxy += 2 * (size_t)n;
    s->npoly++;
    return SV_OK;
}

int sv_gds_shapes_count(const sv_gds_shapes *s) { return s ? s->npoly : 0; }

sv_status sv_gds_shapes_get(const sv_gds_shapes *s, int k, sv_gds_polygon *out)
{
    if (!s || !out) return sv_error(SV_ERR_ARG, "sv_gds_shapes_get: NULL argument");
    if (k < 0 || k >= s->npoly)
        return sv_error(SV_ERR_ARG, "sv_gds_shapes_get: polygon %d: expected 0 to %d", k, s->npoly - 1);
    const gds_poly *p = &s->poly[k];
    out->layer = p->layer;
    out->datatype = p->datatype;
    out->n = p->n;
    out->xy = s->xy + p->at;
    out->kind = p->kind;
    out->structure = p->structure >= 0 ? s->names[p->structure] : NULL;
    out->offset = p->offset;
    return SV_OK;
}

const char *gds_shape_where(const sv_gds_shapes *s, int k, char *buf, size_t cap)
{
    const gds_poly *p = &s->poly[k];
    int n = snprintf(buf, cap, "%s%s", s->source, s->source[0] ? ": " : "");
    if (n < 0 || (size_t)n >= cap) return buf;
    if (p->structure >= 0) n += snprintf(buf + n, cap - (size_t)n, "structure %s, ", s->names[p->structure]);
    if (n < 0 || (size_t)n >= cap) return buf;
    if (p->offset >= 0)
        snprintf(buf + n, cap - (size_t)n, "%s at byte %ld", p->kind, p->offset);
    else
        snprintf(buf + n, cap - (size_t)n, "%s %d", p->kind, k);
    return buf;
}

void sv_gds_shapes_destroy(sv_gds_shapes *s)
{
    if (!s) return;
    sv_ctx *ctx = s->ctx;
    for (int k = 0; k < s->nnames; k++) sv_free(ctx, s->names[k]);
    void *const own[] = {s->names, s->poly, s->xy, s->source, s};
    sv_free_each(ctx, own, SV_COUNT(own));
}
