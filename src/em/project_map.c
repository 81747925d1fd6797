/* A board with another pixel map: the board's project (stack-up, grid,
 * ports, band, effects) with its metal replaced by the map, checked as the
 * project reader checks a file's metal (some metal; every port on the
 * outline of the metal, sv_em_port_off_outline) — so a map run on a board
 * is the same project as a file naming the map's CSV (a batch of maps,
 * docs/how-to/run-a-batch.md). */
#include <string.h>

#include "em_internal.h"

sv_status sv_em_map_csv_read(const sv_em_project *board, const char *path, unsigned char *map)
{
    if (!board || !path || !map) return sv_error(SV_ERR_ARG, "sv_em_map_csv_read: NULL argument");
    return sv_em_pixels_csv_read(path, "map", board->grid.nx, board->grid.ny, map);
}

/* SV_ERR_ARG naming the first port off the map's metal. */
static sv_status check_ports(const sv_em_project *p)
{
    for (int k = 0; k < p->nports; k++) {
        char why[200];
        if (sv_em_port_off_outline(p, &p->ports[k], why, sizeof why))
            return sv_error(SV_ERR_ARG, "port '%s': %s", p->ports[k].name, why);
    }
    return SV_OK;
}

sv_status sv_em_project_with_map(sv_ctx *ctx, const sv_em_project *board, const unsigned char *map,
                                 sv_em_project **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_em_project_with_map: out is NULL");
    *out = NULL;
    if (!board || !map) return sv_error(SV_ERR_ARG, "sv_em_project_with_map: NULL argument");
    size_t cells = (size_t)board->grid.nx * board->grid.ny, metal = 0;
    for (size_t q = 0; q < cells; q++) metal += map[q] != 0;
    if (metal == 0) return sv_error(SV_ERR_ARG, "no metal cell: expected at least one");
    sv_em_project *p;
    sv_status s = sv_em_project_copy(ctx, board, &p);
    if (s) return s;
    for (size_t q = 0; q < cells; q++) p->metal[q] = map[q] != 0;
    sv_free(ctx, p->pixels_file); /* the metal is the map's, not the board file's */
    p->pixels_file = NULL;
    s = check_ports(p);
    if (s) {
        sv_em_project_destroy(p);
        return s;
    }
    *out = p;
    return SV_OK;
}
