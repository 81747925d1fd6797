/* Project-file reader: JSON (cJSON) into an sv_em_project. The format is
 * documented field by field in docs/project-files.md. Every error names the
 * field, the value and what was expected; unknown fields are rejected. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "em_internal.h"
#include "project_json.h"
#include "solvent/gds.h"

typedef struct reader {
    const char *file;   /* for messages */
    double scale;       /* file length unit in metres */
    char dir[4096];     /* folder of the file, for relative paths ("" = current folder) */
} reader;

static sv_status perr(const reader *r, const char *field, const char *expected, const char *value)
{
    if (value) return sv_error(SV_ERR_PARSE, "%s: %s = %s: %s", r->file, field, value, expected);
    return sv_error(SV_ERR_PARSE, "%s: %s: %s", r->file, field, expected);
}

/* A short rendering of a JSON value for messages. */
static void show(const cJSON *v, char *buf, size_t n)
{
    if (!v) {
        snprintf(buf, n, "(missing)");
        return;
    }
    char *s = cJSON_PrintUnformatted(v);
    if (!s) {
        snprintf(buf, n, "?");
        return;
    }
    if (strlen(s) > 40) strcpy(s + 37, "...");
    snprintf(buf, n, "%s", s);
    cJSON_free(s);
}

static sv_status bad(const reader *r, const char *field, const cJSON *v, const char *expected)
{
    char b[64];
    if (!v) return perr(r, field, expected, NULL);
    show(v, b, sizeof b);
    return perr(r, field, expected, b);
}

/* Reject unknown and duplicated keys of an object. */
static sv_status check_keys(const reader *r, const cJSON *obj, const char *where, const char *const *allowed)
{
    for (const cJSON *c = obj->child; c; c = c->next) {
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            if (!strcmp(c->string, *a)) ok = 1;
        char field[160];
        snprintf(field, sizeof field, "%s%s%s", where, *where ? "." : "", c->string);
        if (!ok) {
            char list[256] = "";
            for (const char *const *a = allowed; *a; a++) {
                strncat(list, *a, sizeof list - strlen(list) - 1);
                if (a[1]) strncat(list, ", ", sizeof list - strlen(list) - 1);
            }
            char msg[320];
            snprintf(msg, sizeof msg, "unknown field (expected one of: %s)", list);
            return perr(r, field, msg, NULL);
        }
        for (const cJSON *d = c->next; d; d = d->next)
            if (!strcmp(c->string, d->string)) return perr(r, field, "field given twice", NULL);
    }
    return SV_OK;
}

static sv_status need_object(const reader *r, const cJSON *v, const char *field)
{
    if (!cJSON_IsObject(v)) return bad(r, field, v, "expected an object { ... }");
    return SV_OK;
}

/* A finite number in (lo, hi] or [lo, hi] as `open_lo` says. */
static sv_status get_num(const reader *r, const cJSON *obj, const char *key, const char *field, int required,
                         double lo, int open_lo, double hi, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) {
        if (required) return bad(r, field, NULL, "required field is missing");
        return SV_OK;
    }
    char exp[128];
    snprintf(exp, sizeof exp, "expected a number %s %g%s", open_lo ? ">" : ">=", lo,
             isinf(hi) ? "" : " and <= the limit");
    if (isfinite(hi)) snprintf(exp, sizeof exp, "expected a number %s %g and <= %g", open_lo ? ">" : ">=", lo, hi);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) return bad(r, field, v, exp);
    double x = v->valuedouble;
    if ((open_lo ? !(x > lo) : !(x >= lo)) || x > hi) return bad(r, field, v, exp);
    *out = x;
    return SV_OK;
}

static sv_status get_int(const reader *r, const cJSON *obj, const char *key, const char *field, int lo, int hi,
                         int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    char exp[96];
    snprintf(exp, sizeof exp, "expected an integer from %d to %d", lo, hi);
    if (!v) return bad(r, field, NULL, "required field is missing");
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != floor(v->valuedouble) ||
        v->valuedouble < lo || v->valuedouble > hi)
        return bad(r, field, v, exp);
    *out = (int)v->valuedouble;
    return SV_OK;
}

/* What the model computes reliably (the ranges of docs/project-files.md):
 * far beyond them the surface impedance or the Green's functions overflow
 * or underflow and the numerics fail with messages that name no input. */
#define LENGTH_MIN_M 1e-9 /* thicknesses and cell sizes */
#define LENGTH_MAX_M 1.0
#define SIGMA_MIN 1e-3    /* S/m */
#define SIGMA_MAX 1e10
#define ORIGIN_MAX_M 1e3  /* |grid origin|: coordinates keep their precision */

/* A length in file units, checked in metres against [lo_m, hi_m] (the
 * slack absorbs the unit conversion's rounding), into *out in metres. */
static sv_status get_length(const reader *r, const cJSON *obj, const char *key, const char *field, int required,
                            double lo_m, double hi_m, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) return required ? bad(r, field, NULL, "required field is missing") : SV_OK;
    char exp[160];
    snprintf(exp, sizeof exp, "expected a length from %g to %g (file units; %g m to %g m)", lo_m / r->scale,
             hi_m / r->scale, lo_m, hi_m);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) return bad(r, field, v, exp);
    double x = v->valuedouble * r->scale;
    if (!(x >= lo_m * (1 - 1e-12) && x <= hi_m * (1 + 1e-12))) return bad(r, field, v, exp);
    *out = x;
    return SV_OK;
}

/* [a, b] with a < b, finite, scaled to metres. */
static sv_status get_range(const reader *r, const cJSON *v, const char *field, double *a, double *b)
{
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2 || !cJSON_IsNumber(v->child) ||
        !cJSON_IsNumber(v->child->next) || !isfinite(v->child->valuedouble) ||
        !isfinite(v->child->next->valuedouble) || !(v->child->valuedouble < v->child->next->valuedouble))
        return bad(r, field, v, "expected [from, to] with from < to (file length units)");
    *a = v->child->valuedouble * r->scale;
    *b = v->child->next->valuedouble * r->scale;
    return SV_OK;
}

/* Snap a coordinate (m) to the nearest of the n + 1 grid lines along one
 * axis: its index, with lines beyond the grid reported as -1 or n + 1 (the
 * range is checked before the conversion to int, which would wrap). */
static int snap(double x, double origin, double d, int n)
{
    double k = round((x - origin) / d);
    if (k < 0) return -1;
    if (!(k <= n)) return n + 1; /* also NaN */
    return (int)k;
}

static sv_status read_units(reader *r, const cJSON *root)
{
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(root, "units");
    if (!u) return bad(r, "units", NULL, "required field is missing (one of \"m\", \"mm\", \"um\", \"mil\")");
    static const struct { const char *name; double s; } tab[] = {
        {"m", 1.0}, {"mm", 1e-3}, {"um", 1e-6}, {"\xc2\xb5m", 1e-6}, {"mil", 25.4e-6}};
    if (cJSON_IsString(u))
        for (size_t k = 0; k < sizeof tab / sizeof tab[0]; k++)
            if (!strcmp(u->valuestring, tab[k].name)) {
                r->scale = tab[k].s;
                return SV_OK;
            }
    return bad(r, "units", u, "expected one of \"m\", \"mm\", \"um\", \"mil\"");
}

static sv_status read_stackup(const reader *r, const cJSON *root, sv_em_stackup *st)
{
    sv_status s;
    const cJSON *sub = cJSON_GetObjectItemCaseSensitive(root, "substrate");
    if (!sub) return bad(r, "substrate", NULL, "required field is missing");
    if ((s = need_object(r, sub, "substrate"))) return s;
    static const char *const subk[] = {"thickness", "eps_r", "tan_delta", NULL};
    if ((s = check_keys(r, sub, "substrate", subk))) return s;
    if ((s = get_length(r, sub, "thickness", "substrate.thickness", 1, LENGTH_MIN_M, LENGTH_MAX_M, &st->h))) return s;
    if ((s = get_num(r, sub, "eps_r", "substrate.eps_r", 1, 1, 0, 1000, &st->eps_r))) return s;
    st->tan_delta = 0;
    if ((s = get_num(r, sub, "tan_delta", "substrate.tan_delta", 0, 0, 0, 1, &st->tan_delta))) return s;

    const cJSON *met = cJSON_GetObjectItemCaseSensitive(root, "metal");
    if (!met) return bad(r, "metal", NULL, "required field is missing");
    if ((s = need_object(r, met, "metal"))) return s;
    static const char *const metk[] = {"conductivity", "thickness", NULL};
    if ((s = check_keys(r, met, "metal", metk))) return s;
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(met, "conductivity");
    if (cJSON_IsString(c) && !strcmp(c->valuestring, "inf")) {
        st->sigma = INFINITY;
    } else {
        if ((s = get_num(r, met, "conductivity", "metal.conductivity", 1, SIGMA_MIN, 0, SIGMA_MAX, &st->sigma)))
            return cJSON_IsString(c) ? bad(r, "metal.conductivity", c,
                                           "expected a number from 1e-3 to 1e10 (S/m) or \"inf\" for a "
                                           "lossless metal")
                                     : s;
    }
    st->t = 0;
    if (isfinite(st->sigma)) {
        if ((s = get_length(r, met, "thickness", "metal.thickness", 1, LENGTH_MIN_M, LENGTH_MAX_M, &st->t)))
            return sv_last_status() == SV_ERR_PARSE && !cJSON_GetObjectItemCaseSensitive(met, "thickness")
                       ? bad(r, "metal.thickness", NULL, "required when metal.conductivity is finite")
                       : s;
    } else if (cJSON_GetObjectItemCaseSensitive(met, "thickness")) {
        if ((s = get_length(r, met, "thickness", "metal.thickness", 1, 0, LENGTH_MAX_M, &st->t))) return s;
    }
    return SV_OK;
}

#define SUBDIVIDE_MAX 16 /* mesh cells per grid cell along each axis */

static sv_status read_grid(const reader *r, const cJSON *root, sv_em_grid *g, int *subdivide)
{
    sv_status s;
    const cJSON *gr = cJSON_GetObjectItemCaseSensitive(root, "grid");
    if (!gr) return bad(r, "grid", NULL, "required field is missing");
    if ((s = need_object(r, gr, "grid"))) return s;
    static const char *const k[] = {"dx", "dy", "nx", "ny", "origin", "subdivide", NULL};
    if ((s = check_keys(r, gr, "grid", k))) return s;
    if ((s = get_length(r, gr, "dx", "grid.dx", 1, LENGTH_MIN_M, LENGTH_MAX_M, &g->dx))) return s;
    if ((s = get_length(r, gr, "dy", "grid.dy", 1, LENGTH_MIN_M, LENGTH_MAX_M, &g->dy))) return s;
    if ((s = get_int(r, gr, "nx", "grid.nx", 1, 100000, &g->nx))) return s;
    if ((s = get_int(r, gr, "ny", "grid.ny", 1, 100000, &g->ny))) return s;
    if ((double)g->nx * g->ny > 1e8) {
        char v[64];
        snprintf(v, sizeof v, "%d x %d", g->nx, g->ny);
        return perr(r, "grid.nx x grid.ny", "expected at most 1e8 cells", v);
    }
    *subdivide = 1;
    if (cJSON_GetObjectItemCaseSensitive(gr, "subdivide") &&
        (s = get_int(r, gr, "subdivide", "grid.subdivide", 1, SUBDIVIDE_MAX, subdivide)))
        return s;
    if ((double)g->nx * g->ny * *subdivide * *subdivide > 1e8) {
        char v[96];
        snprintf(v, sizeof v, "%d x %d cells subdivided %d x %d", g->nx, g->ny, *subdivide, *subdivide);
        return perr(r, "grid.subdivide", "expected at most 1e8 mesh cells", v);
    }
    g->x0 = g->y0 = 0;
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(gr, "origin");
    if (o) {
        if (!cJSON_IsArray(o) || cJSON_GetArraySize(o) != 2 || !cJSON_IsNumber(o->child) ||
            !cJSON_IsNumber(o->child->next) || !isfinite(o->child->valuedouble) ||
            !isfinite(o->child->next->valuedouble) || fabs(o->child->valuedouble * r->scale) > ORIGIN_MAX_M ||
            fabs(o->child->next->valuedouble * r->scale) > ORIGIN_MAX_M)
            return bad(r, "grid.origin", o, "expected [x, y] (file length units), each within 1000 m of 0");
        g->x0 = o->child->valuedouble * r->scale;
        g->y0 = o->child->next->valuedouble * r->scale;
    }
    return SV_OK;
}

/* A metal file's name (pixels.csv, gds.file) as a path relative to the
 * project file's folder, kept as the project's metal file: an input that
 * a caller's outputs must not overwrite. Sized to fit, never cut short. */
static sv_status keep_metal_file(const reader *r, const char *name, sv_em_project *p)
{
    const int relative = name[0] != '/' && r->dir[0];
    const size_t len = (relative ? strlen(r->dir) + 1 : 0) + strlen(name) + 1;
    if (!(p->pixels_file = sv_alloc(p->ctx, len, "project metal file name"))) return sv_last_status();
    snprintf(p->pixels_file, len, "%s%s%s", relative ? r->dir : "", relative ? "/" : "", name);
    return SV_OK;
}

/* "pixels": {"csv": "map.csv"}: the map from a CSV file, its path
 * relative to the project file's folder. */
static sv_status read_pixels_csv(const reader *r, const cJSON *px, sv_em_project *p)
{
    sv_status s;
    static const char *const k[] = {"csv", NULL};
    if ((s = check_keys(r, px, "pixels", k))) return s;
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(px, "csv");
    if (!cJSON_IsString(c) || !c->valuestring[0])
        return bad(r, "pixels.csv", c, "expected the path of a CSV file of 0/1 values (first row = top)");
    if ((s = keep_metal_file(r, c->valuestring, p))) return s;
    char field[160];
    snprintf(field, sizeof field, "%s: pixels.csv", r->file);
    return sv_em_pixels_csv_read(p->pixels_file, field, p->grid.nx, p->grid.ny, p->metal);
}

static sv_status get_bool(const reader *r, const cJSON *obj, const char *key, const char *field, int *out);

/* gds.cell, gds.layer, gds.datatype (default 0) and gds.snap. */
static sv_status read_gds_select(const reader *r, const cJSON *gd, sv_gds_select *sel, int *snap)
{
    sv_status s;
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(gd, "cell");
    if (c && (!cJSON_IsString(c) || !c->valuestring[0]))
        return bad(r, "gds.cell", c, "expected a structure's name (or no field: the file's one top structure)");
    *sel = (sv_gds_select){c ? c->valuestring : NULL, 0, 0};
    *snap = 0;
    if ((s = get_int(r, gd, "layer", "gds.layer", 0, 65535, &sel->layer))) return s;
    if (cJSON_GetObjectItemCaseSensitive(gd, "datatype") &&
        (s = get_int(r, gd, "datatype", "gds.datatype", 0, 65535, &sel->datatype)))
        return s;
    return get_bool(r, gd, "snap", "gds.snap", snap);
}

/* The layout's shapes on the selected layer onto the project's grid. */
static sv_status rasterise_gds(const reader *r, const char *path, const sv_gds_select *sel, int snap,
                               sv_em_project *p)
{
    const sv_em_grid *g = &p->grid;
    sv_gds_grid grid = {g->nx, g->ny, g->dx, g->dy, g->x0, g->y0};
    sv_gds_library *lib = NULL;
    sv_gds_shapes *shapes = NULL;
    double db = 0;
    sv_status s = sv_gds_read(p->ctx, path, &lib);
    if (!s) {
        sv_gds_library_units(lib, NULL, &db);
        if (!(s = sv_gds_flatten(lib, sel, &shapes))) s = sv_gds_rasterise(shapes, &grid, db, snap, p->metal);
    }
    sv_gds_shapes_destroy(shapes);
    sv_gds_library_destroy(lib);
    if (!s) return SV_OK;
    char why[1024];
    snprintf(why, sizeof why, "%s", sv_last_error());
    return sv_error(s, "%s: gds: %s", r->file, why);
}

/* "gds": {"file", "cell", "layer", "datatype", "snap"}: the metal of a
 * structure of a GDSII layout on one layer, rasterised onto the grid
 * (src/gds; docs/how-to/gds.md), the file's path relative to the project
 * file's folder. The file is kept as the project's metal file, an input a
 * caller's outputs must not overwrite. */
static sv_status read_gds(const reader *r, const cJSON *root, sv_em_project *p)
{
    const cJSON *gd = cJSON_GetObjectItemCaseSensitive(root, "gds");
    if (!gd) return SV_OK;
    sv_status s;
    static const char *const k[] = {"file", "cell", "layer", "datatype", "snap", NULL};
    if ((s = need_object(r, gd, "gds")) || (s = check_keys(r, gd, "gds", k))) return s;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(gd, "file");
    if (!cJSON_IsString(f) || !f->valuestring[0]) return bad(r, "gds.file", f, "expected the path of a GDSII file");
    sv_gds_select sel;
    int snap;
    if ((s = read_gds_select(r, gd, &sel, &snap))) return s;
    if (p->pixels_file) return bad(r, "gds.file", f, "a project reads its metal from one file: pixels.csv or gds");
    if ((s = keep_metal_file(r, f->valuestring, p))) return s;
    return rasterise_gds(r, p->pixels_file, &sel, snap, p);
}

static sv_status read_pixels(const reader *r, const cJSON *root, sv_em_project *p)
{
    const cJSON *px = cJSON_GetObjectItemCaseSensitive(root, "pixels");
    if (!px) return SV_OK;
    if (cJSON_IsObject(px)) return read_pixels_csv(r, px, p);
    int nx = p->grid.nx, ny = p->grid.ny;
    char exp[128];
    snprintf(exp, sizeof exp, "expected an array of %d strings (grid.ny), first = top row, or {\"csv\": \"file\"}",
             ny);
    if (!cJSON_IsArray(px) || cJSON_GetArraySize(px) != ny) return bad(r, "pixels", px, exp);
    int row = 0;
    for (const cJSON *c = px->child; c; c = c->next, row++) {
        char field[64];
        snprintf(field, sizeof field, "pixels[%d]", row);
        snprintf(exp, sizeof exp, "expected a string of %d characters (grid.nx), '#' metal, '.' empty", nx);
        if (!cJSON_IsString(c) || (int)strlen(c->valuestring) != nx) return bad(r, field, c, exp);
        int j = ny - 1 - row;
        for (int i = 0; i < nx; i++) {
            char ch = c->valuestring[i];
            if (ch == '#')
                p->metal[i + (size_t)nx * j] = 1;
            else if (ch != '.') {
                char msg[128];
                snprintf(msg, sizeof msg, "character %d is '%c': expected '#' (metal) or '.' (empty)", i + 1, ch);
                return bad(r, field, c, msg);
            }
        }
    }
    return SV_OK;
}

static sv_status read_rects(const reader *r, const cJSON *root, sv_em_project *p)
{
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(root, "rectangles");
    if (!rs) return SV_OK;
    if (!cJSON_IsArray(rs)) return bad(r, "rectangles", rs, "expected an array of {\"x\": [..], \"y\": [..]}");
    const sv_em_grid *g = &p->grid;
    int idx = 0;
    static const char *const k[] = {"x", "y", NULL};
    for (const cJSON *c = rs->child; c; c = c->next, idx++) {
        char field[64], fx[72], fy[72];
        snprintf(field, sizeof field, "rectangles[%d]", idx);
        snprintf(fx, sizeof fx, "%s.x", field);
        snprintf(fy, sizeof fy, "%s.y", field);
        sv_status s;
        if ((s = need_object(r, c, field))) return s;
        if ((s = check_keys(r, c, field, k))) return s;
        double xa, xb, ya, yb;
        if ((s = get_range(r, cJSON_GetObjectItemCaseSensitive(c, "x"), fx, &xa, &xb))) return s;
        if ((s = get_range(r, cJSON_GetObjectItemCaseSensitive(c, "y"), fy, &ya, &yb))) return s;
        int i0 = snap(xa, g->x0, g->dx, g->nx), i1 = snap(xb, g->x0, g->dx, g->nx);
        int j0 = snap(ya, g->y0, g->dy, g->ny), j1 = snap(yb, g->y0, g->dy, g->ny);
        if (i0 < 0 || i1 > g->nx) return bad(r, fx, cJSON_GetObjectItemCaseSensitive(c, "x"), "outside the grid");
        if (j0 < 0 || j1 > g->ny) return bad(r, fy, cJSON_GetObjectItemCaseSensitive(c, "y"), "outside the grid");
        if (i1 <= i0)
            return bad(r, fx, cJSON_GetObjectItemCaseSensitive(c, "x"), "narrower than one cell after snapping");
        if (j1 <= j0)
            return bad(r, fy, cJSON_GetObjectItemCaseSensitive(c, "y"), "narrower than one cell after snapping");
        for (int j = j0; j < j1; j++)
            for (int i = i0; i < i1; i++) p->metal[i + (size_t)g->nx * j] = 1;
    }
    return SV_OK;
}

static int metal_at(const sv_em_project *p, int i, int j)
{
    if (i < 0 || j < 0 || i >= p->grid.nx || j >= p->grid.ny) return 0;
    return p->metal[i + (size_t)p->grid.nx * j];
}

/* ports[k].calibration ("thru", the default, or "none") and
 * ports[k].reference_plane (a length into the circuit, file units; needs a
 * calibrated port, whose feed line it moves along, at most the grid's
 * extent along that line either way: the feed line's transfer matrix grows
 * like e^(α·d) and a plane far off the board has no meaning). */
static sv_status read_port_plane(const reader *r, const cJSON *c, const char *field, const sv_em_grid *g,
                                 sv_em_port_def *d)
{
    char f2[96];
    d->calibrate = 1;
    d->ref_shift = 0;
    const cJSON *cal = cJSON_GetObjectItemCaseSensitive(c, "calibration");
    snprintf(f2, sizeof f2, "%s.calibration", field);
    if (cal) {
        if (cJSON_IsString(cal) && !strcmp(cal->valuestring, "thru")) d->calibrate = 1;
        else if (cJSON_IsString(cal) && !strcmp(cal->valuestring, "none")) d->calibrate = 0;
        else return bad(r, f2, cal, "expected \"thru\" (calibrated, the default) or \"none\" (raw edge port)");
    }
    const cJSON *rp = cJSON_GetObjectItemCaseSensitive(c, "reference_plane");
    snprintf(f2, sizeof f2, "%s.reference_plane", field);
    if (!rp) return SV_OK;
    double extent = d->side >= SV_EM_BOTTOM ? g->ny * g->dy : g->nx * g->dx;
    char exp[200];
    snprintf(exp, sizeof exp,
             "expected a length from %g to %g (file units: the grid's extent along the port's feed); > 0 moves "
             "the plane into the circuit",
             -extent / r->scale, extent / r->scale);
    if (!cJSON_IsNumber(rp) || !isfinite(rp->valuedouble) ||
        !(fabs(rp->valuedouble * r->scale) <= extent * (1 + 1e-12)))
        return bad(r, f2, rp, exp);
    if (!d->calibrate) return bad(r, f2, rp, "needs a calibrated port (calibration \"thru\")");
    d->ref_shift = rp->valuedouble * r->scale;
    return SV_OK;
}


static const char *const port_sides[] = {"left", "right", "bottom", "top"};

/* ports[idx].name: non-empty, no spaces or Touchstone comment characters, unique. */
static sv_status read_port_name(const reader *r, const cJSON *c, const char *field, const sv_em_project *p, int idx,
                                sv_em_port_def *d)
{
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(c, "name");
    char f2[96];
    snprintf(f2, sizeof f2, "%s.name", field);
    if (!cJSON_IsString(nm) || !nm->valuestring[0] || strlen(nm->valuestring) >= sizeof d->name ||
        strpbrk(nm->valuestring, " \t\r\n!#"))
        return bad(r, f2, nm, "expected a non-empty string of at most 63 characters without spaces, '!' or '#'");
    strcpy(d->name, nm->valuestring);
    for (int q = 0; q < idx; q++)
        if (!strcmp(p->ports[q].name, d->name)) return bad(r, f2, nm, "port names must be unique");
    return SV_OK;
}

static sv_status read_port_side(const reader *r, const cJSON *c, const char *field, sv_em_port_def *d)
{
    const cJSON *sd = cJSON_GetObjectItemCaseSensitive(c, "side");
    char f2[96];
    snprintf(f2, sizeof f2, "%s.side", field);
    d->side = -1;
    if (cJSON_IsString(sd))
        for (int q = 0; q < 4; q++)
            if (!strcmp(sd->valuestring, port_sides[q])) d->side = q;
    if (d->side < 0) return bad(r, f2, sd, "expected \"left\", \"right\", \"bottom\" or \"top\"");
    return SV_OK;
}

/* The port plane (x for left/right ports, y for bottom/top) and the span
 * along it, snapped to grid lines and inside the grid. */
static sv_status read_port_place(const reader *r, const cJSON *c, const char *field, const sv_em_grid *g,
                                 sv_em_port_def *d)
{
    int vertical = d->side <= SV_EM_RIGHT; /* port plane is an x = const line */
    const char *at_key = vertical ? "x" : "y", *span_key = vertical ? "y" : "x";
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(c, at_key);
    char f2[96], fs[96];
    snprintf(f2, sizeof f2, "%s.%s", field, at_key);
    if (!cJSON_IsNumber(at) || !isfinite(at->valuedouble))
        return bad(r, f2, at, vertical ? "expected the x coordinate of the port plane (a number)"
                                       : "expected the y coordinate of the port plane (a number)");
    double a0, a1;
    snprintf(fs, sizeof fs, "%s.%s", field, span_key);
    sv_status s = get_range(r, cJSON_GetObjectItemCaseSensitive(c, span_key), fs, &a0, &a1);
    if (s) return s;
    double atm = at->valuedouble * r->scale;
    int nline = vertical ? g->nx : g->ny, nspan = vertical ? g->ny : g->nx;
    d->line = vertical ? snap(atm, g->x0, g->dx, nline) : snap(atm, g->y0, g->dy, nline);
    d->k0 = vertical ? snap(a0, g->y0, g->dy, nspan) : snap(a0, g->x0, g->dx, nspan);
    d->k1 = vertical ? snap(a1, g->y0, g->dy, nspan) : snap(a1, g->x0, g->dx, nspan);
    if (d->line < 0 || d->line > nline) return bad(r, f2, at, "port plane outside the grid");
    if (d->k0 < 0 || d->k1 > nspan || d->k1 <= d->k0)
        return bad(r, fs, cJSON_GetObjectItemCaseSensitive(c, span_key),
                   "expected a span inside the grid, at least one cell wide after snapping");
    return SV_OK;
}

/* Cell q of port d's span: the metal cell inside (ii, jj) and the cell
 * beyond the edge (oi, oj). */
static void port_cells(const sv_em_port_def *d, int q, int *ii, int *jj, int *oi, int *oj)
{
    if (d->side <= SV_EM_RIGHT) {
        *ii = d->side == SV_EM_LEFT ? d->line : d->line - 1;
        *oi = d->side == SV_EM_LEFT ? *ii - 1 : *ii + 1;
        *jj = *oj = q;
    } else {
        *jj = d->side == SV_EM_BOTTOM ? d->line : d->line - 1;
        *oj = d->side == SV_EM_BOTTOM ? *jj - 1 : *jj + 1;
        *ii = *oi = q;
    }
}

int sv_em_port_off_outline(const sv_em_project *p, const sv_em_port_def *d, char *msg, size_t cap)
{
    for (int q = d->k0; q < d->k1; q++) {
        int ii, jj, oi, oj;
        port_cells(d, q, &ii, &jj, &oi, &oj);
        if (!metal_at(p, ii, jj) || metal_at(p, oi, oj)) {
            snprintf(msg, cap,
                     "cell (%d, %d) must be metal with no metal beyond the %s edge: a port sits on the "
                     "outline of the metal",
                     ii, jj, port_sides[d->side]);
            return 1;
        }
    }
    return 0;
}

/* A port sits on the outline of the metal (every cell inside metal, none
 * beyond) and shares no cell edge with an earlier port. */
static sv_status check_port_edge(const reader *r, const cJSON *c, const char *field, const sv_em_project *p, int idx,
                                 const sv_em_port_def *d)
{
    char why[200];
    if (sv_em_port_off_outline(p, d, why, sizeof why)) return bad(r, field, c, why);
    for (int q = d->k0; q < d->k1; q++) {
        int ii, jj, oi, oj;
        port_cells(d, q, &ii, &jj, &oi, &oj);
        for (int o = 0; o < idx; o++) {
            const sv_em_port_def *e = &p->ports[o];
            if (e->side == d->side && e->line == d->line && q >= e->k0 && q < e->k1) {
                char msg[160];
                snprintf(msg, sizeof msg, "overlaps port '%s' on the edge of cell (%d, %d)", e->name, ii, jj);
                return bad(r, field, c, msg);
            }
        }
    }
    return SV_OK;
}

/* Ports a (left or bottom) and b (right or top) face each other across a
 * common stretch: opposite sides, overlapping spans, a before b. */
static int ports_face(const sv_em_port_def *a, const sv_em_port_def *b)
{
    int across = (a->side == SV_EM_LEFT && b->side == SV_EM_RIGHT) || (a->side == SV_EM_BOTTOM && b->side == SV_EM_TOP);
    return across && a->line < b->line && a->k0 < b->k1 && b->k0 < a->k1;
}

/* Reference planes moved towards each other must leave line between them:
 * planes that meet or pass each other describe no two-port (the feed's
 * transfer matrices would be applied to line that is not there, and a
 * lossy line comes out with gain). */
static sv_status check_planes_apart(const reader *r, const sv_em_project *p)
{
    for (int i = 0; i < p->nports; i++)
        for (int j = 0; j < p->nports; j++) {
            const sv_em_port_def *a = &p->ports[i], *b = &p->ports[j];
            if (!ports_face(a, b)) continue;
            int along_x = a->side == SV_EM_LEFT;
            double d = along_x ? p->grid.dx : p->grid.dy, o = along_x ? p->grid.x0 : p->grid.y0;
            double pa = o + a->line * d + a->ref_shift, pb = o + b->line * d - b->ref_shift;
            if (pb - pa > 1e-9 * d) continue;
            char where[64];
            snprintf(where, sizeof where, "ports[%d] and ports[%d] reference_plane", i, j);
            return sv_error(SV_ERR_PARSE,
                            "%s: %s: the reference planes of ports '%s' (%s = %g) and '%s' (%s = %g) %s: expected "
                            "shifts that leave line between them (together less than %g, the ports' distance; "
                            "file units)",
                            r->file, where, a->name, along_x ? "x" : "y", pa / r->scale, b->name,
                            along_x ? "x" : "y", pb / r->scale, pb < pa ? "cross" : "meet",
                            (b->line - a->line) * d / r->scale);
        }
    return SV_OK;
}

/* ports[idx]: its fields in turn, then its place on the metal. */
static sv_status read_port(const reader *r, const cJSON *c, sv_em_project *p, int idx)
{
    static const char *const k[] = {"name", "side", "x", "y", "z0", "calibration", "reference_plane", NULL};
    sv_em_port_def *d = &p->ports[idx];
    char field[64], f2[96];
    snprintf(field, sizeof field, "ports[%d]", idx);
    sv_status s;
    if ((s = need_object(r, c, field))) return s;
    if ((s = check_keys(r, c, field, k))) return s;
    if ((s = read_port_name(r, c, field, p, idx, d))) return s;
    if ((s = read_port_side(r, c, field, d))) return s;
    if ((s = read_port_place(r, c, field, &p->grid, d))) return s;
    if ((s = check_port_edge(r, c, field, p, idx, d))) return s;
    d->z0 = 50.0;
    snprintf(f2, sizeof f2, "%s.z0", field);
    if ((s = get_num(r, c, "z0", f2, 0, 0, 1, 1e12, &d->z0))) return s;
    return read_port_plane(r, c, field, &p->grid, d);
}

static sv_status read_ports(const reader *r, const cJSON *root, sv_em_project *p)
{
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(root, "ports");
    if (!ps) return bad(r, "ports", NULL, "required field is missing");
    if (!cJSON_IsArray(ps) || cJSON_GetArraySize(ps) < 1 || cJSON_GetArraySize(ps) > 1000)
        return bad(r, "ports", ps, "expected an array of 1 to 1000 ports");
    int np = cJSON_GetArraySize(ps);
    p->ports = sv_calloc(p->ctx, (size_t)np, sizeof *p->ports, "project ports");
    if (!p->ports) return sv_last_status();
    p->nports = np;
    int idx = 0;
    for (const cJSON *c = ps->child; c; c = c->next, idx++) {
        sv_status s = read_port(r, c, p, idx);
        if (s) return s;
    }
    return check_planes_apart(r, p);
}

static sv_status read_sweep(const reader *r, const cJSON *root, sv_em_sweep *sw)
{
    sw->present = 0;
    sw->tolerance = SV_EM_DEFAULT_TOLERANCE;
    const cJSON *s0 = cJSON_GetObjectItemCaseSensitive(root, "sweep");
    if (!s0) return SV_OK;
    sv_status s;
    if ((s = need_object(r, s0, "sweep"))) return s;
    static const char *const k[] = {"start", "stop", "points", "tolerance", "unit", NULL};
    if ((s = check_keys(r, s0, "sweep", k))) return s;
    double scale = 1;
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(s0, "unit");
    if (u) {
        static const struct { const char *n; double s; } t[] = {{"Hz", 1}, {"kHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}};
        scale = 0;
        if (cJSON_IsString(u))
            for (int q = 0; q < 4; q++)
                if (!strcmp(u->valuestring, t[q].n)) scale = t[q].s;
        if (scale == 0) return bad(r, "sweep.unit", u, "expected \"Hz\", \"kHz\", \"MHz\" or \"GHz\"");
    }
    /* the limit holds in hertz: checked once the unit is applied; start 0: from DC */
    if ((s = get_num(r, s0, "start", "sweep.start", 1, 0, 0, SV_EM_MAX_FREQ_HZ / scale, &sw->start_hz))) return s;
    if ((s = get_num(r, s0, "stop", "sweep.stop", 1, 0, 1, SV_EM_MAX_FREQ_HZ / scale, &sw->stop_hz))) return s;
    if ((s = get_int(r, s0, "points", "sweep.points", 1, 10000000, &sw->points))) return s;
    if ((s = get_num(r, s0, "tolerance", "sweep.tolerance", 0, 0, 1, SV_SWEEP_TOLERANCE_MAX, &sw->tolerance))) return s;
    sw->start_hz *= scale;
    sw->stop_hz *= scale;
    if (sw->stop_hz < sw->start_hz)
        return bad(r, "sweep.stop", cJSON_GetObjectItemCaseSensitive(s0, "stop"), "expected stop >= start");
    if (sw->points == 1 && sw->stop_hz != sw->start_hz)
        return bad(r, "sweep.points", cJSON_GetObjectItemCaseSensitive(s0, "points"),
                   "expected >= 2 when start != stop");
    if (sw->points > 1 && sw->stop_hz == sw->start_hz)
        return bad(r, "sweep.points", cJSON_GetObjectItemCaseSensitive(s0, "points"),
                   "expected 1 when start = stop");
    sw->present = 1;
    return SV_OK;
}

static sv_status get_bool(const reader *r, const cJSON *obj, const char *key, const char *field, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) return SV_OK;
    if (!cJSON_IsBool(v)) return bad(r, field, v, "expected true or false");
    *out = cJSON_IsTrue(v);
    return SV_OK;
}

/* Thick metal is checked against Hammerstad-Jensen and a 2-D
 * finite-difference reference up to t/W 0.5 and t/h 1.1 (tests/em/
 * test_lines.c, docs/em.md); a conductor more than this many times as
 * thick as its substrate is outside anything the model was checked on, and
 * outside any printed board. */
#define THICK_METAL_MAX_RATIO 2.0

static sv_status check_thickness(const reader *r, const sv_em_stackup *st)
{
    if (!st->thick_metal || st->t <= THICK_METAL_MAX_RATIO * st->h) return SV_OK;
    char v[64], exp[320];
    snprintf(v, sizeof v, "%g", st->t / r->scale);
    snprintf(exp, sizeof exp,
             "thicker than %g times substrate.thickness (%g): expected a thinner metal (the thick-metal model holds "
             "for t up to about the substrate's thickness, docs/em.md), or effects.thick_metal false to treat it "
             "as a sheet",
             THICK_METAL_MAX_RATIO, st->h / r->scale);
    return perr(r, "metal.thickness", exp, v);
}

/* A switch given as true (or "exact") that has nothing to act on changes
 * nothing: the result is the project's as written, but whoever wrote the
 * switch may expect otherwise (a forgotten loss tangent), so the context's
 * log gets a warning naming it. Not a refusal: templates that write every
 * switch and vary tan d or dispersion down to none are ordinary. */
static void warn_idle_switches(const reader *r, const cJSON *e, const sv_em_project *p)
{
    const cJSON *far = cJSON_GetObjectItemCaseSensitive(e, "dispersion_far_field");
    if (cJSON_IsTrue(far) && !p->dispersion)
        sv_log(p->ctx, SV_LOG_WARN, "%s: effects.dispersion_far_field = true does nothing without effects.dispersion "
               "= true", r->file);
    const cJSON *dl = cJSON_GetObjectItemCaseSensitive(e, "dielectric_loss");
    if ((cJSON_IsTrue(dl) || cJSON_IsString(dl)) && p->st.tan_delta == 0)
        sv_log(p->ctx, SV_LOG_WARN, "%s: effects.dielectric_loss = %s does nothing with substrate.tan_delta 0 (or "
               "missing)", r->file, cJSON_IsTrue(dl) ? "true" : "\"exact\"");
    const cJSON *tm = cJSON_GetObjectItemCaseSensitive(e, "thick_metal");
    if (cJSON_IsTrue(tm) && !(p->st.t > 0))
        sv_log(p->ctx, SV_LOG_WARN, "%s: effects.thick_metal = true does nothing without a metal.thickness > 0",
               r->file);
}

/* "effects": switches for the physics beyond the zero-thickness lossless
 * sheet, each on by default where the stack-up gives it something to do
 * (thick metal needs metal.thickness, dielectric loss substrate.tan_delta;
 * radiation and the edge profiles of strips one cell wide and of wider
 * strips' edge cells always); the kernels' dispersion is off unless asked
 * for, and then has its far field resummed unless "dispersion_far_field"
 * is false (docs/em.md, "Dispersion"). */
static sv_status read_effects(const reader *r, const cJSON *root, sv_em_project *p)
{
    sv_em_stackup *st = &p->st;
    int thick = 1, dloss = 1, exact = 0;
    p->radiation = p->edge_profile = p->edge_cells = 1;
    p->dispersion = 0;
    p->dispersion_far = 1;
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "effects");
    if (e) {
        sv_status s;
        if ((s = need_object(r, e, "effects"))) return s;
        static const char *const k[] = {"thick_metal", "dielectric_loss", "radiation", "edge_profile", "edge_cells",
                                        "dispersion",  "dispersion_far_field", NULL};
        if ((s = check_keys(r, e, "effects", k))) return s;
        if ((s = get_bool(r, e, "thick_metal", "effects.thick_metal", &thick))) return s;
        if ((s = get_bool(r, e, "radiation", "effects.radiation", &p->radiation))) return s;
        if ((s = get_bool(r, e, "edge_profile", "effects.edge_profile", &p->edge_profile))) return s;
        if ((s = get_bool(r, e, "edge_cells", "effects.edge_cells", &p->edge_cells))) return s;
        if ((s = get_bool(r, e, "dispersion", "effects.dispersion", &p->dispersion))) return s;
        if ((s = get_bool(r, e, "dispersion_far_field", "effects.dispersion_far_field", &p->dispersion_far))) return s;
        const cJSON *dl = cJSON_GetObjectItemCaseSensitive(e, "dielectric_loss");
        if (cJSON_IsString(dl) && !strcmp(dl->valuestring, "exact"))
            exact = 1;
        else if (dl && !cJSON_IsBool(dl))
            return bad(r, "effects.dielectric_loss", dl, "expected true, false or \"exact\"");
        else if ((s = get_bool(r, e, "dielectric_loss", "effects.dielectric_loss", &dloss)))
            return s;
    }
    st->thick_metal = thick && st->t > 0;
    if (!dloss) st->tan_delta = 0;
    st->exact_dielectric_loss = exact;
    if (e) warn_idle_switches(r, e, p);
    return check_thickness(r, st);
}

/* The drawing and the ports are on the grid; the mesh splits each cell
 * into k × k cells of the same metal, and the ports keep their places on
 * the grid's lines. */
sv_status sv_em_project_split_cells(sv_em_project *p, int k)
{
    if (!p) return sv_error(SV_ERR_ARG, "sv_em_project_split_cells: the project is NULL");
    int total = sv_em_project_subdivide(p) * k;
    sv_em_grid *g = &p->grid;
    if (k < 1) return sv_error(SV_ERR_ARG, "split of %d x %d: expected k >= 1", k, k);
    if (total > SUBDIVIDE_MAX)
        return sv_error(SV_ERR_ARG,
                        "split of %d x %d on the project's grid.subdivide of %d is %d x %d in all: expected at most "
                        "%d x %d in all",
                        k, k, sv_em_project_subdivide(p), total, total, SUBDIVIDE_MAX, SUBDIVIDE_MAX);
    if ((double)g->nx * g->ny * k * k > 1e8)
        return sv_error(SV_ERR_ARG, "split of %d x %d: %d x %d cells would become more than 1e8", k, k, g->nx, g->ny);
    if (k == 1) return SV_OK;
    int nx = g->nx * k, ny = g->ny * k;
    unsigned char *fine = sv_alloc(p->ctx, (size_t)nx * ny, "project metal map (split cells)");
    if (!fine) return sv_last_status();
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) fine[i + (size_t)nx * j] = p->metal[i / k + (size_t)g->nx * (j / k)];
    sv_free(p->ctx, p->metal);
    p->metal = fine;
    g->nx = nx;
    g->ny = ny;
    g->dx /= k;
    g->dy /= k;
    for (int q = 0; q < p->nports; q++) {
        p->ports[q].line *= k;
        p->ports[q].k0 *= k;
        p->ports[q].k1 *= k;
    }
    p->subdivide = total;
    return SV_OK;
}

static sv_status parse_root(reader *r, const cJSON *root, sv_em_project *p)
{
    sv_status s;
    if (!cJSON_IsObject(root)) return bad(r, "(top level)", root, "expected a JSON object { ... }");
    static const char *const k[] = {"title", "units", "substrate", "metal", "grid", "pixels", "rectangles",
                                    "ports", "sweep", "effects", "gds", NULL};
    if ((s = check_keys(r, root, "", k))) return s;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "title");
    if (t && !cJSON_IsString(t)) return bad(r, "title", t, "expected a string");
    if ((s = read_units(r, root))) return s;
    if ((s = read_stackup(r, root, &p->st))) return s;
    if ((s = read_effects(r, root, p))) return s;
    int split = 1;
    if ((s = read_grid(r, root, &p->grid, &split))) return s;
    p->metal = sv_calloc(p->ctx, (size_t)p->grid.nx * p->grid.ny, 1, "project metal map");
    if (!p->metal) return sv_last_status();
    if (!cJSON_GetObjectItemCaseSensitive(root, "pixels") && !cJSON_GetObjectItemCaseSensitive(root, "rectangles") &&
        !cJSON_GetObjectItemCaseSensitive(root, "gds"))
        return bad(r, "pixels/rectangles/gds", NULL, "expected at least one of them to draw the metal");
    if ((s = read_pixels(r, root, p))) return s;
    if ((s = read_rects(r, root, p))) return s;
    if ((s = read_gds(r, root, p))) return s;
    size_t nm = 0;
    for (size_t q = 0; q < (size_t)p->grid.nx * p->grid.ny; q++) nm += p->metal[q];
    if (nm == 0) return perr(r, "pixels/rectangles/gds", "no metal cell: expected at least one", NULL);
    if ((s = read_ports(r, root, p))) return s;
    if ((s = sv_em_project_split_cells(p, split))) return s;
    if ((s = read_sweep(r, root, &p->sweep))) return s;
    return SV_OK;
}

/* The project a JSON tree describes, read as a file named `name` (its
 * folder the base of relative paths) would be. */
static sv_status project_from_tree(sv_ctx *ctx, const cJSON *root, reader *r, sv_em_project **out)
{
    sv_em_project *p = sv_calloc(ctx, 1, sizeof *p, "project");
    if (!p) return sv_last_status();
    p->ctx = ctx;
    sv_status s = parse_root(r, root, p);
    if (s) {
        sv_em_project_destroy(p);
        return s;
    }
    *out = p;
    return SV_OK;
}

sv_status sv_em_project_from_json(sv_ctx *ctx, const cJSON *root, const char *name, sv_em_project **out)
{
    reader r = {name ? name : "(project)", 1.0, ""};
    return project_from_tree(ctx, root, &r, out);
}

/* JSON text holds no raw NUL (RFC 8259: control characters appear only
 * escaped); a parser that stops at one would read a cut string or miss the
 * rest of the file, so the first one is refused with its place. */
static sv_status check_no_nul(const reader *r, const char *text, size_t len)
{
    const char *nul = memchr(text, 0, len);
    if (!nul) return SV_OK;
    size_t off = (size_t)(nul - text);
    int line = 1;
    for (size_t q = 0; q < off; q++) line += text[q] == '\n';
    return sv_error(SV_ERR_PARSE, "%s: line %d (byte %zu): a NUL byte ('\\x00'): expected JSON text, which holds "
                    "none", r->file, line, off);
}

sv_status sv_em_project_parse(sv_ctx *ctx, const char *text, size_t len, const char *name, sv_em_project **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_em_project_parse: out is NULL");
    *out = NULL;
    if (!text) return sv_error(SV_ERR_ARG, "sv_em_project_parse: text is NULL");
    reader r = {name ? name : "(project)", 1.0, ""};
    const char *slash = name ? strrchr(name, '/') : NULL;
    if (slash && (size_t)(slash - name) < sizeof r.dir)
        snprintf(r.dir, sizeof r.dir, "%.*s", slash == name ? 1 : (int)(slash - name), name);
    sv_status s = check_no_nul(&r, text, len);
    if (s) return s;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        size_t off = end && end >= text ? (size_t)(end - text) : 0;
        int line = 1;
        for (size_t q = 0; q < off && q < len; q++) line += text[q] == '\n';
        return sv_error(SV_ERR_PARSE, "%s: line %d (byte %zu): invalid JSON", r.file, line, off);
    }
    /* trailing garbage after the object */
    if (end) {
        while ((size_t)(end - text) < len && (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t')) end++;
        if ((size_t)(end - text) < len && *end) {
            cJSON_Delete(root);
            return sv_error(SV_ERR_PARSE, "%s: byte %zu: unexpected text after the JSON object", r.file,
                            (size_t)(end - text));
        }
    }
    s = project_from_tree(ctx, root, &r, out);
    cJSON_Delete(root);
    return s;
}

/* Project files up to 1 GiB: a JSON text beyond that is no project. */
#define PROJECT_FILE_MAX ((size_t)1 << 30)

sv_status sv_em_project_read(sv_ctx *ctx, const char *path, sv_em_project **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_em_project_read: out is NULL");
    *out = NULL;
    if (!path) return sv_error(SV_ERR_ARG, "sv_em_project_read: path is NULL");
    char *buf;
    size_t len;
    sv_status s = sv_input_file_read(path, path, PROJECT_FILE_MAX, "a project file", &buf, &len);
    if (s) return s;
    s = sv_em_project_parse(ctx, buf, len, path, out);
    free(buf);
    return s;
}

void sv_em_project_destroy(sv_em_project *p)
{
    if (!p) return;
    sv_ctx *ctx = p->ctx;
    sv_free(ctx, p->metal);
    sv_free(ctx, p->ports);
    sv_free(ctx, p->pixels_file);
    sv_free(ctx, p);
}

void sv_em_project_stackup(const sv_em_project *p, sv_em_stackup *out) { *out = p->st; }
void sv_em_project_grid(const sv_em_project *p, sv_em_grid *out) { *out = p->grid; }
void sv_em_project_sweep(const sv_em_project *p, sv_em_sweep *out) { *out = p->sweep; }
int sv_em_project_ports(const sv_em_project *p) { return p ? p->nports : 0; }
const char *sv_em_project_pixels_file(const sv_em_project *p) { return p ? p->pixels_file : NULL; }
int sv_em_project_subdivide(const sv_em_project *p) { return p && p->subdivide > 1 ? p->subdivide : 1; }
const char *sv_em_project_port_name(const sv_em_project *p, int k)
{
    return p && k >= 0 && k < p->nports ? p->ports[k].name : NULL;
}
double sv_em_project_port_z0(const sv_em_project *p, int k)
{
    return p && k >= 0 && k < p->nports ? p->ports[k].z0 : NAN;
}
int sv_em_project_port_cells(const sv_em_project *p, int k, int *cells, int cap)
{
    if (!p || k < 0 || k >= p->nports) return -1;
    const sv_em_port_def *d = &p->ports[k];
    int n = 0;
    for (int q = d->k0; q < d->k1; q++, n++) {
        int ii, jj, oi, oj;
        port_cells(d, q, &ii, &jj, &oi, &oj);
        if (cells && n < cap) cells[n] = ii + p->grid.nx * jj;
    }
    return n;
}
int sv_em_project_calibrated(const sv_em_project *p)
{
    for (int k = 0; p && k < p->nports; k++)
        if (p->ports[k].calibrate || p->ports[k].ref_shift != 0) return 1;
    return 0;
}
int sv_em_project_metal(const sv_em_project *p, int i, int j) { return p ? metal_at(p, i, j) : 0; }

sv_status sv_em_project_write_gds(sv_ctx *ctx, const sv_em_project *p, const char *path, int layer, int datatype,
                                  const sv_gds_write_options *opts)
{
    if (!p || !path) return sv_error(SV_ERR_ARG, "sv_em_project_write_gds: NULL argument");
    sv_em_grid eg;
    sv_em_project_grid(p, &eg);
    sv_gds_grid g = {eg.nx, eg.ny, eg.dx, eg.dy, eg.x0, eg.y0};
    unsigned char *cells = malloc((size_t)g.nx * g.ny);
    if (!cells) return sv_error(SV_ERR_NOMEM, "no memory for the metal map of %d x %d cells", g.nx, g.ny);
    for (int j = 0; j < g.ny; j++)
        for (int i = 0; i < g.nx; i++) cells[i + (size_t)g.nx * j] = (unsigned char)metal_at(p, i, j);
    sv_status st = sv_gds_write_cells(ctx, path, &g, cells, layer, datatype, opts);
    free(cells);
    return st;
}
