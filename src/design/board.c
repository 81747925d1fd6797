/* The board with another map: the board's project file as a tree, its
 * metal replaced by the map's as pixel rows (and its rectangles dropped:
 * the map holds all the metal), read back by the project reader — so a
 * designed map, the full model's board and the file written beside a
 * design are projects exactly as a user's file would be. */
#include <stdlib.h>
#include <string.h>

#include "design_internal.h"

/* The map as the project file's "pixels" rows ('#' metal, first = top). */
static cJSON *pixel_rows(int nx, int ny, const unsigned char *map)
{
    cJSON *rows = cJSON_CreateArray();
    char *line = malloc((size_t)nx + 1);
    if (!rows || !line) {
        cJSON_Delete(rows);
        free(line);
        return NULL;
    }
    for (int row = 0; row < ny; row++) {
        int j = ny - 1 - row;
        for (int i = 0; i < nx; i++) line[i] = map[i + (size_t)nx * j] ? '#' : '.';
        line[nx] = '\0';
        cJSON *s = cJSON_CreateString(line);
        if (!s || !cJSON_AddItemToArray(rows, s)) {
            cJSON_Delete(s);
            cJSON_Delete(rows);
            free(line);
            return NULL;
        }
    }
    free(line);
    return rows;
}

sv_status sv_design_spec_project_json(const sv_design_spec *spec, const unsigned char *map, char **out)
{
    if (!spec || !map || !out) return sv_error(SV_ERR_ARG, "sv_design_spec_project_json: NULL argument");
    cJSON *tree = cJSON_Duplicate(spec->board_json, 1);
    cJSON *rows = pixel_rows(spec->nx, spec->ny, map);
    if (!tree || !rows) {
        cJSON_Delete(tree);
        cJSON_Delete(rows);
        return sv_error(SV_ERR_NOMEM, "design: the board with a map: out of memory");
    }
    cJSON_DeleteItemFromObjectCaseSensitive(tree, "rectangles");
    cJSON_DeleteItemFromObjectCaseSensitive(tree, "gds");
    if (cJSON_GetObjectItemCaseSensitive(tree, "pixels"))
        cJSON_ReplaceItemInObjectCaseSensitive(tree, "pixels", rows);
    else
        cJSON_AddItemToObject(tree, "pixels", rows);
    *out = cJSON_Print(tree);
    cJSON_Delete(tree);
    return *out ? SV_OK : sv_error(SV_ERR_NOMEM, "design: the board with a map: out of memory");
}

sv_status sv_design_board_with(sv_ctx *ctx, const sv_design_spec *spec, const unsigned char *map, sv_em_project **out)
{
    char *text;
    sv_status s = sv_design_spec_project_json(spec, map, &text);
    if (s) return s;
    s = sv_em_project_parse(ctx, text, strlen(text), spec->board_file, out);
    free(text);
    return s;
}

sv_status sv_design_spec_project(sv_ctx *ctx, const sv_design_spec *spec, const unsigned char *map, sv_em_project **out)
{
    if (!spec || !map || !out) return sv_error(SV_ERR_ARG, "sv_design_spec_project: NULL argument");
    return sv_design_board_with(ctx, spec, map, out);
}
