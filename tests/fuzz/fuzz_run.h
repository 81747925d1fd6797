/* One fuzz case: the tool run on an input in a private folder, and the
 * checks of what it did (exit code, messages, the output, the input, the
 * folder). */
#ifndef FUZZ_RUN_H
#define FUZZ_RUN_H

#include "fuzz_mutate.h"

typedef enum fz_kind {
    FZ_SOLVE,   /* solvent solve INPUT.json --freq ... -o out.s2p */
    FZ_SWEEP,   /* solvent sweep INPUT.json -o out.s2p --points 4 ... */
    FZ_CODEGEN, /* solvent codegen INPUT.mtx -o out.c */
    FZ_ODE,     /* solvent ode PROBLEM ARGS... --quiet --out out.csv (no input file) */
    FZ_KINDS
} fz_kind;

typedef struct fz_config {
    const char *tool;   /* the solvent binary */
    const char *work;   /* a folder of our own */
    double timeout_s;   /* a run past this is a hang */
    const char *memory; /* --memory-limit for every run ("none": no option) */
} fz_config;

/* What went wrong, one flag per kind of finding (all 0: the case passed). */
typedef struct fz_verdict {
    int crash, sanitizer, hang, wrong_exit, bad_message, data_lost;
    int rc;          /* the exit code (-signal when killed by one) */
    double seconds;
    char why[512];
} fz_verdict;

/* Where the output goes: a new name, through a symlink to a previous file,
 * or the input itself (a hard link: the run must refuse). */
typedef enum fz_output { FZ_OUT_FILE, FZ_OUT_SYMLINK, FZ_OUT_INPUT } fz_output;

/* An input as a regular file, a FIFO with no writer, or a directory. */
typedef enum fz_input { FZ_IN_FILE, FZ_IN_FIFO, FZ_IN_DIR } fz_input;

/* What a case changes besides its input's bytes (zero-filled: nothing). */
typedef struct fz_extra {
    const char *freq;         /* solve's --freq (else 1GHz,3.5GHz) */
    const char *start, *stop; /* sweep's --start / --stop (else the project's) */
    fz_input input;           /* the input file as a FIFO or a directory: refused at once */
    const fz_buf *map;        /* written as map.csv beside the input, when set */
    fz_input map_as;          /* map.csv as a FIFO or a directory instead */
    const char *problem;      /* FZ_ODE: the built-in problem */
    const char *const *ode;   /* FZ_ODE: its arguments, NULL-ended */
    int edge_args;            /* arguments at their edges: exit 2 with a message naming an option is fine */
} fz_extra;

/* Run `kind` on `input` (and `x`, may be NULL), writing to `where`. kill_after_s > 0 sends SIGKILL after that long
 * (the kill campaign): then `reference` (the output of the same case run
 * to the end, may be NULL) is what the output may be besides the previous
 * one. expect_rc >= 0 and expect_msg (an extended regex, may be NULL) are
 * a corpus entry's known outcome. Returns 1 when any flag is set. */
int fz_run(const fz_config *cfg, fz_kind kind, fz_output where, const fz_buf *input, const fz_extra *x,
           double kill_after_s, const fz_buf *reference, int expect_rc, const char *expect_msg, fz_verdict *v,
           fz_buf *output);

#endif
