/* A project's deep copy: a job works on its own, so that subdividing its
 * mesh or editing its pixels never reaches the caller's. */
#include <string.h>

#include "em_internal.h"

static void *copy_bytes(sv_ctx *ctx, const void *src, size_t bytes, const char *what)
{
    if (!src) return NULL;
    void *dst = sv_alloc(ctx, bytes ? bytes : 1, what);
    if (dst) memcpy(dst, src, bytes);
    return dst;
}

sv_status sv_em_project_copy(sv_ctx *ctx, const sv_em_project *p, sv_em_project **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_em_project_copy: out is NULL");
    *out = NULL;
    if (!p) return sv_error(SV_ERR_ARG, "sv_em_project_copy: the project is NULL");
    sv_em_project *c = sv_alloc(ctx, sizeof *c, "project");
    if (!c) return sv_last_status();
    *c = *p;
    c->ctx = ctx;
    size_t cells = (size_t)p->grid.nx * p->grid.ny;
    c->metal = copy_bytes(ctx, p->metal, cells, "project metal map");
    c->ports = copy_bytes(ctx, p->ports, sizeof *p->ports * (size_t)p->nports, "project ports");
    c->pixels_file = copy_bytes(ctx, p->pixels_file, p->pixels_file ? strlen(p->pixels_file) + 1 : 0,
                                "project pixel-map name");
    if ((p->metal && !c->metal) || (p->ports && !c->ports) || (p->pixels_file && !c->pixels_file)) {
        sv_status s = sv_last_status();
        sv_em_project_destroy(c);
        return s;
    }
    *out = c;
    return SV_OK;
}
