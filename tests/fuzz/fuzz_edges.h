/* The fuzz campaign's edge inputs (issue 40): what a careless user types at
 * the edges of each input's range, beside the mutations of fuzz_mutate.h —
 * frequencies at the extremes as text, reference planes that meet, cross
 * or leave the line, effect switches in every combination, byte-order
 * marks and NUL bytes in project files and CSV maps, inputs that are not
 * regular files, and ODE tolerances. */
#ifndef FUZZ_EDGES_H
#define FUZZ_EDGES_H

#include "fuzz_mutate.h"

/* A frequency list for `solve --freq` (1 to 3 entries, commas between):
 * 0, subnormals, 1e-300, 1e-400 (underflows), 1e15 and past it, hex,
 * inf/nan text, units, blanks, repeats, empty entries. */
void fz_edge_freq_list(fz_rng *r, char *out, size_t cap);
/* One such frequency, for `sweep --start` / `--stop`. */
const char *fz_edge_freq(fz_rng *r);

/* One JSON-aware change of a project at its edges: the ports' reference
 * planes moved to meet, cross or leave the line, or the effects in a random
 * combination (with the loss tangent or the thickness they act on, or
 * without). Returns the change's name; the text unchanged if it is no JSON. */
const char *fz_edge_project(fz_rng *r, fz_buf *b);

/* Bytes at the edges of a text file: a UTF-8 byte-order mark in front, or
 * a NUL inside a string or a line. Returns the change's name. */
const char *fz_edge_bytes(fz_rng *r, fz_buf *b);

/* A project drawn by a CSV map (`map` names the map's file in the same
 * folder) and the map itself, 10 x 4 cells of a line, with a byte-order
 * mark, CRLF line ends, a NUL, a bad value or a missing row. */
const char *fz_edge_csv_case(fz_rng *r, fz_buf *project, fz_buf *csv, const char *map);

/* `solvent ode` arguments after the problem's name (argv[k], NULL-ended,
 * at most 12): tolerances at the edges (1e300, 0, subnormal, hex, inf/nan
 * text, the bounds and just past them), now and then an unused --arg, an
 * empty --sens, an odd --lanes or a repeated option. Pointers into static
 * text. Returns the problem's name. */
const char *fz_edge_ode(fz_rng *r, const char **argv);

#endif
