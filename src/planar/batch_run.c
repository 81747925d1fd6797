/* A batch's maps side by side: each worker thread takes the next map, solves
 * it on its own context with its own memo slot (sv_planar_batch_solve), and
 * reports it to the caller; the reports, the batch's progress and the stop
 * request go through one lock, so the caller's callback and the context's
 * progress callback are never called from two threads at once. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <pthread.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "batch_internal.h"

/* How often (s) a worker's progress reaches the batch's context while its
 * map runs: often enough that a stop ends a long map promptly. */
#define FORWARD_EVERY_S 0.05

typedef struct run_state {
    sv_planar_batch *b;
    int nmaps;
    const unsigned char *const *maps;
    sv_planar_batch_fn done;
    void *user;
    atomic_int next;            /* the next map to take */
    atomic_int stop;            /* 1: take no more maps, stop those in flight */
    pthread_mutex_t lock;       /* the callbacks and ndone */
    int ndone;
    _Atomic double last_forward; /* when the batch's context last heard of the progress */
} run_state;

typedef struct worker {
    run_state *rs;
    sv_ctx *ctx;
    int slot;
} worker;

/* The batch's progress on its context (under the lock): 1 when it says stop. */
static int report_progress(run_state *rs)
{
    atomic_store(&rs->last_forward, sv_time_now());
    sv_status s = sv_progress(rs->b->ctx, "batch", (double)rs->ndone / rs->nmaps);
    if (s) atomic_store(&rs->stop, 1);
    return s != SV_OK;
}

/* A worker context's progress callback: a running map asks whether to stop,
 * and now and then passes the question to the batch's context. */
static int worker_progress(void *user, const char *phase, double fraction)
{
    (void)phase, (void)fraction;
    run_state *rs = ((worker *)user)->rs;
    if (atomic_load(&rs->stop)) return 1;
    if (sv_time_now() - atomic_load(&rs->last_forward) < FORWARD_EVERY_S) return 0;
    pthread_mutex_lock(&rs->lock);
    int stop = report_progress(rs);
    pthread_mutex_unlock(&rs->lock);
    return stop;
}

/* The library's warnings from a map's job reach the batch's context's log. */
static void worker_log(void *user, sv_log_level level, const char *message)
{
    run_state *rs = ((worker *)user)->rs;
    pthread_mutex_lock(&rs->lock);
    sv_log(rs->b->ctx, level, "%s", message);
    pthread_mutex_unlock(&rs->lock);
}

/* Map k finished: the caller told, the progress moved on. A map stopped by
 * the batch's own stop is not reported (it did not fail: it was not run). */
static void finish(run_state *rs, int k, const sv_planar_job *job, sv_status s, const char *message)
{
    pthread_mutex_lock(&rs->lock);
    if (!(s == SV_ERR_CANCELLED && atomic_load(&rs->stop))) {
        if (rs->done && rs->done(rs->user, k, job, s, message)) atomic_store(&rs->stop, 1);
        rs->ndone++;
        report_progress(rs);
    }
    pthread_mutex_unlock(&rs->lock);
}

static void work(worker *w)
{
    run_state *rs = w->rs;
    for (;;) {
        if (atomic_load(&rs->stop)) return;
        int k = atomic_fetch_add(&rs->next, 1);
        if (k >= rs->nmaps) return;
        sv_planar_job *job = NULL;
        sv_status s = rs->maps[k] ? sv_planar_batch_solve(rs->b, w->ctx, w->slot, rs->maps[k], &job)
                                  : sv_error(SV_ERR_ARG, "the map is NULL");
        char message[1024] = "";
        if (s) snprintf(message, sizeof message, "%s", sv_last_error());
        finish(rs, k, job, s, message);
        sv_planar_job_destroy(job);
    }
}

/* The batch's worker contexts, their progress and log this run's. */
static void attach_workers(run_state *rs, worker *w, int n)
{
    for (int k = 0; k < n; k++) {
        w[k] = (worker){.rs = rs, .slot = k, .ctx = rs->b->worker_ctx[k]};
        sv_ctx_set_progress(w[k].ctx, worker_progress, &w[k]);
        sv_ctx_set_log(w[k].ctx, worker_log, &w[k]);
    }
}

/* The worker contexts outlive the run: nothing of it may be called later. */
static void detach_workers(worker *w, int n)
{
    for (int k = 0; k < n; k++) {
        sv_ctx_set_progress(w[k].ctx, NULL, NULL);
        sv_ctx_set_log(w[k].ctx, NULL, NULL);
    }
}

static void run_workers(worker *w, int n)
{
#ifdef _OPENMP
#pragma omp parallel num_threads(n)
    work(&w[omp_get_thread_num()]);
#else
    for (int k = 0; k < n; k++) work(&w[k]);
#endif
}

sv_status sv_planar_batch_run(sv_planar_batch *b, int nmaps, const unsigned char *const *maps,
                              sv_planar_batch_fn done, void *user)
{
    if (!b) return sv_error(SV_ERR_ARG, "sv_planar_batch_run: the batch is NULL");
    if (nmaps < 0 || (nmaps > 0 && !maps))
        return sv_error(SV_ERR_ARG, "sv_planar_batch_run: nmaps = %d with maps %s: expected nmaps >= 0 maps",
                        nmaps, maps ? "given" : "NULL");
    if (nmaps == 0) return SV_OK;
    run_state rs = {.b = b, .nmaps = nmaps, .maps = maps, .done = done, .user = user};
    atomic_init(&rs.next, 0);
    atomic_init(&rs.stop, 0);
    atomic_init(&rs.last_forward, 0.0);
    pthread_mutex_init(&rs.lock, NULL);
    b->cal_share = &b->share;
    int n = b->workers < nmaps ? b->workers : nmaps;
    worker w[1024];
    attach_workers(&rs, w, n);
    run_workers(w, n);
    detach_workers(w, n);
    b->cal_share = NULL;
    pthread_mutex_destroy(&rs.lock);
    if (atomic_load(&rs.stop) && rs.ndone < nmaps)
        return sv_error(SV_ERR_CANCELLED, "batch stopped after %d of %d maps", rs.ndone, nmaps);
    return SV_OK;
}
