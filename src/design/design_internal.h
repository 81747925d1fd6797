/* The design module's shared pieces: the parsed spec, and the helpers its
 * files share. */
#ifndef SV_DESIGN_INTERNAL_H
#define SV_DESIGN_INTERNAL_H

#include <cjson/cJSON.h>

#include "solvent/design.h"

struct sv_design_spec {
    sv_ctx *ctx;
    char *name;               /* the spec's name in messages */
    char *board_file;         /* resolved */
    cJSON *board_json;        /* the board's file as a tree: projects with other maps are made from it */
    sv_em_project *board, *full;
    int nx, ny;
    unsigned char *region;    /* nx·ny */
    unsigned char *start;     /* nx·ny */
    sv_design_symmetry sym;
    int sym_i0, sym_i1, sym_j0, sym_j1; /* the region's bounding box: the mirrors' axes */
    int nmasks;
    sv_design_mask *masks;
    int ndc;
    sv_design_dc *dc;
    int corners_allowed;      /* 1: cells touching only at a corner are allowed (not connected) */
    int nf;
    double *freq;
    int passes;
    double budget_s;
    int threads;
    unsigned long long seed;  /* the visiting order's (and a random start's) */
    int refresh_every;        /* accepted flips between rebuilds from scratch */
    int *port_cells;          /* for each port, its cells (i + nx·j), -1 ended; port_cell_off[k] */
    int *port_cell_off;       /* nports + 1 */
};

/* The cells of a mirror class of pixel c (c itself first): 1, 2 or 4 cells,
 * distinct. Returns the count. */
int sv_design_partners(const sv_design_spec *spec, int c, int out[4]);
/* The map with the design pixels of `design` (nx·ny) over the board's fixed cells. */
void sv_design_compose(const sv_design_spec *spec, const unsigned char *design, unsigned char *map);
/* The board's cells with `map`'s metal as a project (from the board's tree). */
sv_status sv_design_board_with(sv_ctx *ctx, const sv_design_spec *spec, const unsigned char *map,
                               sv_em_project **out);
/* Port cells of the full model (for the DC constraints). */
sv_status sv_design_port_cells(sv_design_spec *spec);
/* A reproducible generator (splitmix64): the same seed, the same numbers
 * on every platform and thread count. */
unsigned long long sv_design_rand(unsigned long long *state);

#endif
