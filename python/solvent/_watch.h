/* What the Python package hangs on a context's progress callback: the
 * latest report, kept for the waiting Python thread to read, and a stop
 * flag it sets. The callback never takes Python's lock, so a solve runs
 * with the interpreter free, and a Ctrl-C reaches the library through the
 * flag within one report. */
#ifndef SOLVENT_PY_WATCH_H
#define SOLVENT_PY_WATCH_H

#include "solvent/core.h"

typedef struct sv_py_watch sv_py_watch;

sv_py_watch *sv_py_watch_create(void);
void sv_py_watch_destroy(sv_py_watch *w);
/* Route ctx's progress reports to w. */
void sv_py_watch_attach(sv_ctx *ctx, sv_py_watch *w);
/* Stop routing ctx's reports (before the watch is destroyed). */
void sv_py_watch_detach(sv_ctx *ctx);
/* Ask the watched operation to stop at its next report. */
void sv_py_watch_stop(sv_py_watch *w);
/* The latest fraction (−1 before the first report); its phase into buf. */
double sv_py_watch_read(sv_py_watch *w, char *phase, size_t cap);

#endif
