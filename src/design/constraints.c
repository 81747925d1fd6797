/* The design's constraints (docs/design.md, "Constraints"): cells that
 * touch only at a corner, and DC connection between ports. Connection is
 * the model's: two cells are joined when they share an edge (a rooftop
 * spans it); a corner carries no current. */
#include <stdlib.h>

#include "design_internal.h"

/* Each 2 × 2 block with at least one design pixel whose metal is exactly
 * one diagonal pair. */
static int corner_contacts(const sv_design_spec *s, const unsigned char *map)
{
    int n = 0, nx = s->nx;
    for (int j = 0; j + 1 < s->ny; j++)
        for (int i = 0; i + 1 < nx; i++) {
            size_t c = i + (size_t)nx * j;
            if (!s->region[c] && !s->region[c + 1] && !s->region[c + nx] && !s->region[c + nx + 1]) continue;
            int a = !!map[c], b = !!map[c + 1], d = !!map[c + nx], e = !!map[c + nx + 1];
            n += (a && e && !b && !d) || (b && d && !a && !e);
        }
    return n;
}

/* Flood fill over the metal from port a's cells; 1 if it reaches b's. */
static int joined(const sv_design_spec *s, const unsigned char *map, int a, int b, int *stack, unsigned char *seen)
{
    int nx = s->nx, ny = s->ny, top = 0;
    for (int c = 0; c < nx * ny; c++) seen[c] = 0;
    for (int q = s->port_cell_off[a]; q < s->port_cell_off[a + 1]; q++) {
        int c = s->port_cells[q];
        if (map[c] && !seen[c]) seen[c] = 1, stack[top++] = c;
    }
    while (top) {
        int c = stack[--top], i = c % nx, j = c / nx;
        int nb[4] = {i > 0 ? c - 1 : -1, i + 1 < nx ? c + 1 : -1, j > 0 ? c - nx : -1, j + 1 < ny ? c + nx : -1};
        for (int t = 0; t < 4; t++)
            if (nb[t] >= 0 && map[nb[t]] && !seen[nb[t]]) seen[nb[t]] = 1, stack[top++] = nb[t];
    }
    for (int q = s->port_cell_off[b]; q < s->port_cell_off[b + 1]; q++)
        if (seen[s->port_cells[q]]) return 1;
    return 0;
}

int sv_design_spec_violations(const sv_design_spec *s, const unsigned char *map)
{
    if (!s || !map) return -1;
    int n = s->corners_allowed ? 0 : corner_contacts(s, map);
    if (s->ndc == 0) return n;
    size_t cells = (size_t)s->nx * s->ny;
    int *stack = malloc(sizeof(int) * cells);
    unsigned char *seen = malloc(cells);
    if (!stack || !seen) {
        free(stack);
        free(seen);
        return -1;
    }
    for (int k = 0; k < s->ndc; k++) n += joined(s, map, s->dc[k].a, s->dc[k].b, stack, seen) != s->dc[k].required;
    free(stack);
    free(seen);
    return n;
}
