/* `solvent batch` (cmd_batch.c): its maps (batch_maps.c) and its outputs
 * (batch_out.c). */
#ifndef SV_TOOL_BATCH_H
#define SV_TOOL_BATCH_H

#include <stddef.h>
#include <stdio.h>

#include "solvent/planar.h"

/* One map of the batch: its name (the CSV's file name without .csv: the
 * name of its outputs and its index row) and its file. */
typedef struct batch_map {
    char *name, *path;
} batch_map;

typedef struct batch_maps {
    batch_map *m;
    int n, cap;
} batch_maps;

/* The maps of one input: every *.csv of a directory (sorted by name), or
 * the file itself. Returns 0, or 1 after a message. */
int batch_maps_add_input(batch_maps *ms, const char *input);
/* The maps a list file names, one path a line (relative to the list's
 * folder; blank lines and lines starting with '#' skipped). */
int batch_maps_add_list(batch_maps *ms, const char *list);
/* 0 when no two maps share a name, else 1 after a message naming them. */
int batch_maps_check_names(const batch_maps *ms);
void batch_maps_free(batch_maps *ms);

/* The outputs: one Touchstone file per map, or one array for all. */
typedef enum batch_format { BATCH_TOUCHSTONE = 0, BATCH_NPY = 1 } batch_format;

typedef struct batch_out {
    const char *dir;
    batch_format format;
    int nmaps, p, nf;          /* the array's shape: nmaps × nf × p × p */
    const char *board_name;
    FILE *index;               /* index.csv, appended one whole row at a time */
    unsigned char *done;       /* nmaps: 1 when the index has its row */
    int failed_before;         /* rows of maps that failed in an earlier run */
    int fd_s;                  /* s.npy, written in place (npy) */
    size_t data_at;            /* where s.npy's data start */
    int have_freq;             /* freq_hz.npy written */
} batch_out;

/* Open the outputs in dir (made if missing): the index read back (the maps
 * it has a row for marked done: a resumed batch skips them; a last row cut
 * short by an interruption dropped), the array made or checked. Returns
 * 0, or 1 after a message. */
int batch_out_open(batch_out *o, const batch_maps *ms);
/* Map k solved: its outputs written and complete, then its index row.
 * Returns 0, or 1 after a message (an output that cannot be written stops
 * the batch). */
int batch_out_solved(batch_out *o, const batch_maps *ms, int k, const sv_planar_job *job);
/* Map k could not run: its index row with the library's message. */
int batch_out_failed(batch_out *o, const batch_maps *ms, int k, const char *message);
void batch_out_close(batch_out *o);

#endif
