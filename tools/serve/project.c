/* A project as the page edits it: the file's own JSON with its metal as
 * pixel strings ('#' metal, the first string the top row), whatever the
 * file drew it with (pixels, a CSV map, rectangles, a GDSII layer). The
 * library reads and validates it; this file only rewrites the "pixels"
 * field. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

/* The pixel strings of map (nx·ny, j = 0 the bottom row). */
static cJSON *pixel_rows(int nx, int ny, const unsigned char *map)
{
    cJSON *rows = cJSON_CreateArray();
    char *line = malloc((size_t)nx + 1);
    for (int j = ny - 1; rows && line && j >= 0; j--) {
        for (int i = 0; i < nx; i++) line[i] = map[i + (size_t)nx * j] ? '#' : '.';
        line[nx] = 0;
        cJSON_AddItemToArray(rows, cJSON_CreateString(line));
    }
    free(line);
    return rows;
}

/* `doc` with its metal replaced by map's pixels. */
static int set_pixels(cJSON *doc, int nx, int ny, const unsigned char *map)
{
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "rectangles");
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "gds");
    cJSON *rows = pixel_rows(nx, ny, map);
    if (!rows) return -1;
    if (cJSON_GetObjectItemCaseSensitive(doc, "pixels")) cJSON_ReplaceItemInObjectCaseSensitive(doc, "pixels", rows);
    else cJSON_AddItemToObject(doc, "pixels", rows);
    return 0;
}

/* A project the page sends carries its metal inline: a file it names
 * would be read from wherever the server runs, not the served folder. */
static int names_files(const cJSON *doc)
{
    return cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(doc, "pixels")) ||
           cJSON_GetObjectItemCaseSensitive(doc, "gds") != NULL;
}

int serve_project_normalise(sv_ctx *ctx, const char *text, size_t len, const char *name, const char *path, char **out,
                            char *msg, size_t cap)
{
    *out = NULL;
    char *file = NULL;
    if (path && !len && (file = serve_files_slurp(path, SERVE_BODY_MAX, &len))) text = file;
    cJSON *doc = cJSON_ParseWithLength(text, len);
    free(file);
    if (!path && doc && names_files(doc)) {
        cJSON_Delete(doc);
        snprintf(msg, cap, "%s: the page's projects carry their metal inline (\"pixels\" as strings, or "
                           "\"rectangles\"): open a project that names a CSV or GDSII file from the served folder",
                 name);
        return -1;
    }
    sv_em_project *p = NULL;
    sv_status st = path ? sv_em_project_read(ctx, path, &p) : sv_em_project_parse(ctx, text, len, name, &p);
    if (st || !doc) {
        snprintf(msg, cap, "%s", st ? sv_last_error() : "not JSON");
        cJSON_Delete(doc);
        sv_em_project_destroy(p);
        return -1;
    }
    /* the drawing grid: the mesh's divided by the file's subdivide */
    sv_em_grid g;
    sv_em_project_grid(p, &g);
    int k = sv_em_project_subdivide(p), nx = g.nx / k, ny = g.ny / k;
    unsigned char *map = malloc((size_t)nx * ny);
    for (int j = 0; map && j < ny; j++)
        for (int i = 0; i < nx; i++) map[i + (size_t)nx * j] = (unsigned char)sv_em_project_metal(p, i * k, j * k);
    sv_em_project_destroy(p);
    int bad = !map || set_pixels(doc, nx, ny, map);
    free(map);
    if (!bad) *out = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    if (!*out) {
        snprintf(msg, cap, "out of memory");
        return -1;
    }
    return 0;
}

char *serve_project_with_map(const char *text, int nx, int ny, const unsigned char *map)
{
    cJSON *doc = cJSON_Parse(text);
    char *out = NULL;
    if (doc && !set_pixels(doc, nx, ny, map)) out = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    return out;
}

unsigned char *serve_project_map(const char *text, int *nx, int *ny)
{
    cJSON *doc = cJSON_Parse(text);
    const cJSON *grid = cJSON_GetObjectItemCaseSensitive(doc, "grid"),
                *rows = cJSON_GetObjectItemCaseSensitive(doc, "pixels");
    const cJSON *jx = cJSON_GetObjectItemCaseSensitive(grid, "nx"), *jy = cJSON_GetObjectItemCaseSensitive(grid, "ny");
    unsigned char *map = NULL;
    if (cJSON_IsNumber(jx) && cJSON_IsNumber(jy) && cJSON_IsArray(rows) && cJSON_GetArraySize(rows) == jy->valueint) {
        *nx = jx->valueint, *ny = jy->valueint;
        map = calloc((size_t)*nx * *ny, 1);
        int j = *ny - 1;
        const cJSON *r;
        cJSON_ArrayForEach(r, rows)
        {
            const char *s = cJSON_GetStringValue(r);
            if (!map || !s || (int)strlen(s) != *nx) {
                free(map);
                map = NULL;
                break;
            }
            for (int i = 0; i < *nx; i++) map[i + (size_t)*nx * j] = s[i] == '#';
            j--;
        }
    }
    cJSON_Delete(doc);
    return map;
}
