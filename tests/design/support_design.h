/* Helpers of the design tests: a board drawn in the test with any map, and
 * S of a map from a fresh planar job (the independent path: the map as its
 * own project, assembled and solved from scratch). */
#ifndef SUPPORT_DESIGN_H
#define SUPPORT_DESIGN_H

#include <complex.h>

#include "solvent/design.h"
#include "solvent/planar.h"

/* A 13 × 7 board of 8-mil pixels: launches 3 pixels wide (rows j = 2..4)
 * over columns 0..3 and 9..12, a 5 × 5 design region (columns 4..8, rows
 * j = 1..5), 30-mil εr 4.5 substrate with exact dielectric loss, copper
 * sheet; `calibration` "none" or "thru", `extra_effects` added to the
 * effects ("" for none). */
typedef struct design_board {
    int nx, ny;
    const char *calibration;
    const char *effects; /* the whole effects object */
} design_board;
extern const design_board design_test_board;
int design_test_in_region(int c);
/* The project text of the board with map (nx·ny, j = 0 bottom) (malloc'ed). */
char *design_test_project_text(const design_board *b, const unsigned char *map);
sv_em_project *design_test_project(const design_board *b, const unsigned char *map);
/* S (nf × 2 × 2) of a project by a planar job solving every frequency exactly in double. */
void design_test_project_s(const sv_em_project *p, int nf, const double *f, double complex *s);
/* The same for the map on board b. */
void design_test_fresh_s(const design_board *b, const unsigned char *map, int nf, const double *f, double complex *s);
/* max |a − b| over n entries */
double design_test_maxdiff(int n, const double complex *a, const double complex *b);

#endif
