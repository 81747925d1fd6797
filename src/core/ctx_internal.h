/* The context's fields, shared by the core's own files only. */
#ifndef SV_CORE_CTX_INTERNAL_H
#define SV_CORE_CTX_INTERNAL_H

#include <stdatomic.h>

#include "solvent/core.h"

struct sv_ctx {
    size_t limit;            /* 0 = unlimited */
    atomic_size_t current;   /* bytes held through sv_alloc */
    atomic_size_t peak;      /* high-water mark of current */
    int nthreads;            /* 0 = OpenMP default */
    sv_log_fn log_fn;
    void *log_user;
    sv_progress_fn progress_fn;
    void *progress_user;
    /* progress of the operation under way (one at a time): its span,
     * how deep spans are nested, the highest fraction the callback has
     * seen, and whether it asked to stop */
    double span_lo, span_hi;
    int span_depth;
    double reported;
    atomic_int cancelled;
};

#endif
