/* Projects built in memory: the values of an sv_em_project_spec written
 * as the JSON tree of the equivalent project file (lengths in metres) and
 * read by the file reader, so that a project is checked one way whatever
 * it comes from, with messages naming the fields as a file's. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "em_internal.h"
#include "project_json.h"

/* cJSON's builders return NULL when out of memory; each object below is
 * checked once, when the tree is complete (a NULL child makes its parent
 * incomplete, caught by `complete`). */
static cJSON *pair(double a, double b)
{
    double v[2] = {a, b};
    return cJSON_CreateDoubleArray(v, 2);
}

static void add(cJSON *obj, const char *key, cJSON *item, int *complete)
{
    if (!item || !cJSON_AddItemToObject(obj, key, item)) {
        cJSON_Delete(item);
        *complete = 0;
    }
}

static void add_number(cJSON *obj, const char *key, double v, int *complete)
{
    add(obj, key, cJSON_CreateNumber(v), complete);
}

static void stackup(const sv_em_project_spec *s, cJSON *root, int *complete)
{
    cJSON *sub = cJSON_CreateObject(), *met = cJSON_CreateObject();
    add_number(sub, "thickness", s->h, complete);
    add_number(sub, "eps_r", s->eps_r, complete);
    if (s->tan_delta != 0) add_number(sub, "tan_delta", s->tan_delta, complete);
    if (isinf(s->sigma) && s->sigma > 0) add(met, "conductivity", cJSON_CreateString("inf"), complete);
    else add_number(met, "conductivity", s->sigma, complete);
    if (s->t != 0) add_number(met, "thickness", s->t, complete);
    add(root, "substrate", sub, complete);
    add(root, "metal", met, complete);
}

static void grid(const sv_em_project_spec *s, cJSON *root, int *complete)
{
    cJSON *g = cJSON_CreateObject();
    add_number(g, "dx", s->grid.dx, complete);
    add_number(g, "dy", s->grid.dy, complete);
    add_number(g, "nx", s->grid.nx, complete);
    add_number(g, "ny", s->grid.ny, complete);
    add(g, "origin", pair(s->grid.x0, s->grid.y0), complete);
    if (s->subdivide > 1) add_number(g, "subdivide", s->subdivide, complete);
    add(root, "grid", g, complete);
}

/* The pixels as a file's rows: the top row first, '#' metal, '.' empty. */
static void pixels(const sv_em_project_spec *s, cJSON *root, int *complete)
{
    int nx = s->grid.nx, ny = s->grid.ny;
    if (!s->pixels || nx < 1 || ny < 1) return;
    cJSON *rows = cJSON_CreateArray();
    char *line = malloc((size_t)nx + 1);
    if (!line) *complete = 0;
    for (int j = ny - 1; j >= 0 && line && rows; j--) {
        for (int i = 0; i < nx; i++) line[i] = s->pixels[i + (size_t)nx * j] ? '#' : '.';
        line[nx] = 0;
        cJSON *row = cJSON_CreateString(line);
        if (!row || !cJSON_AddItemToArray(rows, row)) {
            cJSON_Delete(row);
            *complete = 0;
        }
    }
    free(line);
    add(root, "pixels", rows, complete);
}

static void rectangles(const sv_em_project_spec *s, cJSON *root, int *complete)
{
    if (s->nrects < 1 || !s->rects) return;
    cJSON *rs = cJSON_CreateArray();
    for (int k = 0; k < s->nrects && rs; k++) {
        cJSON *r = cJSON_CreateObject();
        add(r, "x", pair(s->rects[k].x0, s->rects[k].x1), complete);
        add(r, "y", pair(s->rects[k].y0, s->rects[k].y1), complete);
        if (!r || !cJSON_AddItemToArray(rs, r)) {
            cJSON_Delete(r);
            *complete = 0;
        }
    }
    add(root, "rectangles", rs, complete);
}

static const char *const side_names[] = {"left", "right", "bottom", "top"};

static cJSON *port(const sv_em_port_spec *q, int *complete)
{
    cJSON *c = cJSON_CreateObject();
    int vertical = q->side == SV_EM_SIDE_LEFT || q->side == SV_EM_SIDE_RIGHT;
    add(c, "name", q->name ? cJSON_CreateString(q->name) : cJSON_CreateNull(), complete);
    add(c, "side", q->side >= SV_EM_SIDE_LEFT && q->side <= SV_EM_SIDE_TOP ? cJSON_CreateString(side_names[q->side])
                                                                          : cJSON_CreateNumber(q->side),
        complete);
    add_number(c, vertical ? "x" : "y", q->at, complete);
    add(c, vertical ? "y" : "x", pair(q->from, q->to), complete);
    if (q->z0 != 0) add_number(c, "z0", q->z0, complete);
    if (q->raw) add(c, "calibration", cJSON_CreateString("none"), complete);
    if (q->reference_plane != 0) add_number(c, "reference_plane", q->reference_plane, complete);
    return c;
}

static void ports(const sv_em_project_spec *s, cJSON *root, int *complete)
{
    if (s->nports < 1 || !s->ports) return; /* the reader names what is missing */
    cJSON *ps = cJSON_CreateArray();
    for (int k = 0; k < s->nports && ps; k++) {
        cJSON *c = port(&s->ports[k], complete);
        if (!c || !cJSON_AddItemToArray(ps, c)) {
            cJSON_Delete(c);
            *complete = 0;
        }
    }
    add(root, "ports", ps, complete);
}

static void band(const sv_em_project_spec *s, cJSON *root, int *complete)
{
    if (!s->band.present) return;
    cJSON *b = cJSON_CreateObject();
    add_number(b, "start", s->band.start_hz, complete);
    add_number(b, "stop", s->band.stop_hz, complete);
    add_number(b, "points", s->band.points, complete);
    if (s->band.tolerance != 0) add_number(b, "tolerance", s->band.tolerance, complete);
    add(b, "unit", cJSON_CreateString("Hz"), complete);
    add(root, "sweep", b, complete);
}

/* A switch set on or off (0 keeps the default: not written). */
static void effect(cJSON *e, const char *key, int value, int *complete)
{
    if (value) add(e, key, cJSON_CreateBool(value > 0), complete);
}

static void effects(const sv_em_project_spec *s, cJSON *root, int *complete)
{
    const sv_em_effects *f = &s->effects;
    cJSON *e = cJSON_CreateObject();
    effect(e, "thick_metal", f->thick_metal, complete);
    if (f->exact_dielectric_loss && f->dielectric_loss >= 0) add(e, "dielectric_loss", cJSON_CreateString("exact"), complete);
    else effect(e, "dielectric_loss", f->dielectric_loss, complete);
    effect(e, "radiation", f->radiation, complete);
    effect(e, "edge_profile", f->edge_profile, complete);
    effect(e, "edge_cells", f->edge_cells, complete);
    effect(e, "dispersion", f->dispersion, complete);
    effect(e, "dispersion_far_field", f->dispersion_far_field, complete);
    add(root, "effects", e, complete);
}

sv_status sv_em_project_build(sv_ctx *ctx, const sv_em_project_spec *spec, sv_em_project **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_em_project_build: out is NULL");
    *out = NULL;
    if (!spec) return sv_error(SV_ERR_ARG, "sv_em_project_build: spec is NULL");
    cJSON *root = cJSON_CreateObject();
    int complete = root != NULL;
    if (complete) {
        add(root, "units", cJSON_CreateString("m"), &complete);
        stackup(spec, root, &complete);
        grid(spec, root, &complete);
        pixels(spec, root, &complete);
        rectangles(spec, root, &complete);
        ports(spec, root, &complete);
        band(spec, root, &complete);
        effects(spec, root, &complete);
    }
    sv_status s = complete ? sv_em_project_from_json(ctx, root, "(project built in memory)", out)
                           : sv_error(SV_ERR_NOMEM, "sv_em_project_build: no memory for the project's fields");
    cJSON_Delete(root);
    return s;
}
