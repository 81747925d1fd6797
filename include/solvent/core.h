/* Solvent core: status codes, last-error messages, the context handle (memory
 * budget, threads, log and progress callbacks), timers and version.
 *
 * Every Solvent function that can fail returns an sv_status (SV_OK = 0,
 * negative on error) and records a human-readable message for the calling
 * thread, readable with sv_last_error(). Nothing in the library prints,
 * exits or reads the environment. */
#ifndef SOLVENT_CORE_H
#define SOLVENT_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SV_VERSION_MAJOR 0
#define SV_VERSION_MINOR 1
#define SV_VERSION_PATCH 0

typedef enum sv_status {
    SV_OK = 0,
    SV_ERR_ARG = -1,          /* a NULL pointer, a negative size, a bad option  */
    SV_ERR_NOMEM = -2,        /* the system allocator failed                    */
    SV_ERR_BUDGET = -3,       /* the request would exceed the memory budget     */
    SV_ERR_NONFINITE = -4,    /* input or intermediate contains NaN or Inf      */
    SV_ERR_SINGULAR = -5,     /* a matrix is singular to working precision      */
    SV_ERR_NOCONV = -6,       /* an iteration did not converge                  */
    SV_ERR_IO = -7,           /* a file could not be read or written            */
    SV_ERR_PARSE = -8,        /* malformed input file or text                   */
    SV_ERR_PATTERN = -9,      /* an invalid or impossible sparsity pattern      */
    SV_ERR_CANCELLED = -10,   /* a progress callback asked to stop              */
    SV_ERR_UNSUPPORTED = -11, /* a feature not built in or not available here   */
    SV_ERR_INTERNAL = -12     /* a broken invariant: please report it           */
} sv_status;

/* Short fixed description of a status code ("memory budget exceeded", ...). */
const char *sv_status_string(sv_status status);

/* Message of the last error recorded on the calling thread ("" if none).
 * The pointer stays valid until the next Solvent call on this thread. */
const char *sv_last_error(void);
/* Status of the last error recorded on the calling thread (SV_OK if none). */
sv_status sv_last_status(void);
/* Forget the calling thread's last error. */
void sv_clear_error(void);

/* Record an error for the calling thread and return `status`, so that a
 * failing function can `return sv_error(SV_ERR_ARG, "n = %d: expected >= 0", n);`.
 * The message is stored escaped as by sv_escape_text (one line, safe to
 * print). */
sv_status sv_error(sv_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* `text` made safe to show in a message, into buf (cap bytes, always
 * terminated): printable ASCII and well-formed UTF-8 are kept; control
 * characters (C0, DEL, C1), bidirectional overrides and bytes that are not
 * UTF-8 become \n, \t, \r, \xNN or \uNNNN; a text too long for buf is
 * cut at a character boundary and ends in "...". Escaping twice changes
 * nothing. Returns buf. */
const char *sv_escape_text(const char *text, char *buf, size_t cap);

/* ---- version ---------------------------------------------------------- */
const char *sv_version_string(void);          /* "0.1.0" */
/* Which OpenBLAS build and threading model Solvent was linked with. */
const char *sv_build_info(void);

/* ---- logging and progress --------------------------------------------- */
typedef enum sv_log_level { SV_LOG_DEBUG = 0, SV_LOG_INFO = 1, SV_LOG_WARN = 2 } sv_log_level;
typedef void (*sv_log_fn)(void *user, sv_log_level level, const char *message);
/* Progress: fraction in [0, 1] of the named phase. Return non-zero to cancel;
 * the operation then returns SV_ERR_CANCELLED. */
typedef int (*sv_progress_fn)(void *user, const char *phase, double fraction);

/* ---- the context ------------------------------------------------------- */
/* A context carries what long operations share: a memory budget with
 * running and peak totals, a thread count, and the log and progress
 * callbacks. Passing NULL wherever a context is accepted means: no budget,
 * no callbacks, the default thread count. A context may be used from
 * several threads at once (its counters are atomic), but its progress
 * reports describe one operation at a time (see the spans below). */
typedef struct sv_ctx sv_ctx;

sv_status sv_ctx_create(sv_ctx **out);
void sv_ctx_destroy(sv_ctx *ctx);

/* Bytes the context may hold at once through sv_alloc; 0 = unlimited. */
sv_status sv_ctx_set_memory_limit(sv_ctx *ctx, size_t bytes);
size_t sv_ctx_memory_limit(const sv_ctx *ctx);
size_t sv_ctx_memory_current(const sv_ctx *ctx);
size_t sv_ctx_memory_peak(const sv_ctx *ctx);
void sv_ctx_reset_peak(sv_ctx *ctx);

/* Threads for Solvent's own OpenMP loops and for OpenBLAS calls it makes;
 * 0 = the OpenMP default (OMP_NUM_THREADS or all cores). */
sv_status sv_ctx_set_threads(sv_ctx *ctx, int nthreads);
int sv_ctx_threads(const sv_ctx *ctx);

void sv_ctx_set_log(sv_ctx *ctx, sv_log_fn fn, void *user);
void sv_ctx_set_progress(sv_ctx *ctx, sv_progress_fn fn, void *user);

/* Send a message to the context's log callback (no-op without one). */
void sv_log(const sv_ctx *ctx, sv_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Report progress; returns SV_ERR_CANCELLED (with a message) if the
 * callback asks to stop, SV_OK otherwise. Inside a span (below) the
 * fraction is of the span's step and reaches the callback as its share of
 * the whole operation. */
sv_status sv_progress(sv_ctx *ctx, const char *phase, double fraction);

/* Spans: a long operation made of steps (a planar job: assembly, sweep,
 * calibration; a sweep: its exact solves) gives each step its share of the
 * progress. Between sv_progress_span_begin(ctx, lo, hi) and the matching
 * sv_progress_span_end, a fraction f that the step reports reaches the
 * callback as lo + f·(hi − lo) of the enclosing span (spans nest; the
 * outermost one is the whole [0, 1]). Within the outermost span the callback
 * never sees a fraction below one it has seen, and once it has asked to
 * stop every later report returns SV_ERR_CANCELLED without asking again;
 * opening an outermost span starts afresh. The library's long operations
 * report 0 … 1 of their own work, so a caller may run them within a span
 * of its own.
 * The spans and reports of one context describe one operation at a time:
 * operations running side by side take contexts of their own. */
typedef struct sv_progress_span {
    double lo, hi; /* the enclosing span, restored by sv_progress_span_end */
    int depth;
} sv_progress_span;
sv_progress_span sv_progress_span_begin(sv_ctx *ctx, double lo, double hi);
void sv_progress_span_end(sv_ctx *ctx, sv_progress_span enclosing);
/* 1 once the callback has asked to stop the operation under way (for
 * threads that do not report themselves), else 0. */
int sv_progress_cancelled(const sv_ctx *ctx);

/* Progress of a loop of `total` units shared by an OpenMP team: each
 * thread calls sv_progress_loop_at with the units done so far as it sees
 * them (a row index of a dynamically scheduled loop will do); the team's
 * first thread reports them, at most every few milliseconds, and every
 * thread gets 1 back once the callback has asked to stop, to skip the rest
 * of its work. sv_progress_loop_end reports the loop complete, or returns
 * SV_ERR_CANCELLED when it was stopped. */
typedef struct sv_progress_loop {
    sv_ctx *ctx;
    const char *phase;
    double total;
    double next_report; /* sv_time_now() of the next report */
} sv_progress_loop;
sv_progress_loop sv_progress_loop_begin(sv_ctx *ctx, const char *phase, double total);
int sv_progress_loop_at(sv_progress_loop *loop, double done);
sv_status sv_progress_loop_end(sv_progress_loop *loop);

/* ---- budgeted allocation ------------------------------------------------ */
/* 64-byte aligned allocation counted against ctx's budget (ctx may be NULL).
 * On refusal returns NULL and records SV_ERR_BUDGET or SV_ERR_NOMEM with a
 * message naming `what` and the sizes. Memory is not zeroed. */
void *sv_alloc(sv_ctx *ctx, size_t bytes, const char *what);
/* Same, zero-filled. */
void *sv_calloc(sv_ctx *ctx, size_t count, size_t size, const char *what);
/* Free memory from sv_alloc/sv_calloc with the same ctx (NULL is a no-op). */
void sv_free(sv_ctx *ctx, void *p);
/* sv_free of each of n blocks (NULL ones skipped): an object's destroy
 * names what it owns in one list. */
void sv_free_each(sv_ctx *ctx, void *const *blocks, size_t n);
#define SV_COUNT(array) (sizeof(array) / sizeof((array)[0]))
/* Would `bytes` more fit the budget right now? SV_OK, or SV_ERR_BUDGET with
 * a message naming `what`, the request and what is left. Nothing is held. */
sv_status sv_mem_check(const sv_ctx *ctx, size_t bytes, const char *what);
/* The memory the machine can give a new job now (Linux's MemAvailable),
 * bytes; 0 when unknown. */
size_t sv_mem_available(void);
/* bytes as "812.0 MiB", "2.00 GiB" or "3.5 KiB" into buf (len bytes). Returns buf. */
const char *sv_format_bytes(size_t bytes, char *buf, size_t len);
/* Multiply sizes with overflow check; returns SV_ERR_ARG on overflow. */
sv_status sv_size_mul(size_t a, size_t b, size_t *out);

/* ---- threads ------------------------------------------------------------ */
/* The one owner of OpenMP's and OpenBLAS's thread counts (docs/threads.md).
 * Every operation that reaches BLAS runs inside a section: while any is
 * open, in any thread, OpenBLAS runs each call on its calling thread and
 * the parallel work is Solvent's own OpenMP teams, of sv_threads_team()
 * threads; the last section to close puts OpenBLAS's process-wide count
 * back. Each section restores its thread's OpenMP count and team size. */
typedef struct sv_threads_saved {
    int omp;     /* the calling thread's OpenMP count before */
    int team;    /* its team size before (0: outside any section) */
    int section; /* 1: restoring closes a section; 0 (a zero struct): nothing to restore */
} sv_threads_saved;
/* A section whose team size is the context's thread count if set, else the
 * caller's (the enclosing section's, or its OpenMP count); ctx may be NULL. */
sv_threads_saved sv_threads_apply(const sv_ctx *ctx);
/* A section with a team of one: for short memory-bound steps and tiny
 * LAPACK calls, where a thread team costs more than it gains. Sections may
 * nest and overlap across threads. */
sv_threads_saved sv_threads_serial_begin(void);
void sv_threads_restore(sv_threads_saved saved);
/* Threads for Solvent's own parallel regions on the calling thread: the
 * section's team size inside a section, else its OpenMP count. */
int sv_threads_team(void);

/* ---- atomic file output ------------------------------------------------ */
/* Write a file so that it is never seen half-written: open writes to an
 * anonymous file in `path`'s folder (O_TMPFILE; where the file system has
 * none, a temporary "<path>.tmpXXXXXX" beside it, and temporaries of that
 * name left by killed writers are removed on the next open); close with
 * commit = 1 flushes, syncs and puts it in place of `path` (SV_ERR_IO with
 * a message on any failure, nothing left behind); commit = 0 discards it.
 * A symlink is followed and its target replaced; a device, FIFO or other
 * special file is written through, never replaced (commit = 0 cannot take
 * back what was written to it). A directory is SV_ERR_IO. */
typedef struct sv_atomic_file sv_atomic_file;
sv_status sv_atomic_file_open(const char *path, sv_atomic_file **out);
/* The stdio stream to write to. */
FILE *sv_atomic_file_stream(sv_atomic_file *a);
sv_status sv_atomic_file_close(sv_atomic_file *a, int commit);

/* ---- input files ------------------------------------------------------- */
/* Open a file to read it whole as an input (a project, a pixel map, a
 * pattern file): a regular file only. A directory, FIFO, device or socket
 * is refused without blocking (open() of a FIFO with no writer would wait
 * forever). Returns the stream, or NULL with the reason in why[cap]
 * ("is a directory, not a file", "cannot open: <strerror>", ...) for the
 * caller's message, which names the file. */
FILE *sv_input_file_open(const char *path, char *why, size_t cap);
/* Read such a file whole: *out (malloc'd, the caller frees it; a NUL
 * after its *len bytes) holds at most max_bytes. Errors name `label` (the
 * path, or `field = "path"`): SV_ERR_IO as sv_input_file_open or "read
 * error", SV_ERR_NOMEM, and for a longer file SV_ERR_PARSE "larger than
 * <max_bytes>: not <kind>" (kind: "a project file", ...). */
sv_status sv_input_file_read(const char *path, const char *label, size_t max_bytes, const char *kind, char **out,
                             size_t *len);

/* ---- timing ------------------------------------------------------------- */
/* Seconds on a monotonic clock, for measuring intervals. */
double sv_time_now(void);

#ifdef __cplusplus
}
#endif
#endif
