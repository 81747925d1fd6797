/* A batch's board and one map on it: the options resolved, the shared
 * tables made once (sv_em_board), and a map as a planar job on the board
 * (job.c's steps, its mesh made on the board). The parallel loop over
 * many maps is batch_run.c. */
#include <stdio.h>
#include <string.h>

#include "batch_internal.h"

void sv_planar_batch_options_default(sv_planar_batch_options *opts)
{
    if (opts) memset(opts, 0, sizeof *opts);
}

static sv_status check_board(const sv_em_project *board, const sv_planar_batch_options *o)
{
    int k = sv_em_project_subdivide(board);
    if (k > 1 || o->job.subdivide > 1)
        return sv_error(SV_ERR_UNSUPPORTED,
                        "batch: the board is subdivided (%s = %d): a batch's maps are on the drawing grid; "
                        "remove the subdivision",
                        k > 1 ? "grid.subdivide" : "job.subdivide", k > 1 ? k : o->job.subdivide);
    if (o->workers < 0 || o->workers > 1024)
        return sv_error(SV_ERR_ARG, "batch: workers = %d: expected 0 (the context's threads) to 1024", o->workers);
    if (o->job.threads < 0) return sv_error(SV_ERR_ARG, "batch: job.threads = %d: expected >= 0", o->job.threads);
    return SV_OK;
}

/* Maps at a time and the threads of each: by default every thread its own
 * map (a map of a dataset is small: a thread is used best on a whole map). */
static void choose_workers(sv_planar_batch *b)
{
    int per = b->o.threads > 0 ? b->o.threads : 1;
    int threads = sv_ctx_threads(b->ctx) > 0 ? sv_ctx_threads(b->ctx) : sv_threads_team();
    b->job_threads = per;
    b->workers = b->bo.workers > 0 ? b->bo.workers : (threads / per > 0 ? threads / per : 1);
}

/* The batch's limit: its own, the context's budget, or what the machine has. */
static size_t batch_limit(const sv_planar_batch *b)
{
    size_t budget = sv_ctx_memory_limit(b->ctx);
    return b->bo.memory_limit ? b->bo.memory_limit : budget ? budget : sv_mem_available();
}

/* The board's shared tables within the limit, before they are made, and
 * each map's limit, unless the job options give one: an equal share of
 * what the tables leave. */
static sv_status share_memory(sv_planar_batch *b, const sv_em_options *eo)
{
    size_t limit = batch_limit(b);
    b->board_bytes = sv_em_board_bytes(b->board, eo, b->workers);
    if (limit && b->board_bytes >= limit) {
        char l[32], t[32];
        return sv_error(SV_ERR_BUDGET, "batch: the board's shared tables need about %s, more than the limit (%s)",
                        sv_format_bytes(b->board_bytes, t, sizeof t), sv_format_bytes(limit, l, sizeof l));
    }
    if (b->o.memory_limit || !limit) return SV_OK;
    b->o.memory_limit = (limit - b->board_bytes) / (size_t)b->workers;
    b->o.memory_limit_name = "the batch's memory limit (an equal share for each map in flight)";
    return SV_OK;
}

/* A context per worker, made once: a map's job's threads and allocations
 * are its worker's, and what one run leaves to the next (the shared
 * calibration) stays in them until the batch is destroyed. */
static sv_status make_worker_contexts(sv_planar_batch *b)
{
    b->worker_ctx = sv_calloc(b->ctx, (size_t)b->workers, sizeof *b->worker_ctx, "batch worker contexts");
    if (!b->worker_ctx) return sv_last_status();
    for (int k = 0; k < b->workers; k++) {
        sv_status s = sv_ctx_create(&b->worker_ctx[k]);
        if (s) return s;
        sv_ctx_set_threads(b->worker_ctx[k], b->job_threads);
    }
    return SV_OK;
}

sv_status sv_planar_batch_create(sv_ctx *ctx, const sv_em_project *board, const sv_planar_batch_options *opts,
                                 sv_planar_batch **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_planar_batch_create: out is NULL");
    *out = NULL;
    if (!board) return sv_error(SV_ERR_ARG, "sv_planar_batch_create: the board is NULL");
    sv_planar_batch_options o = {0};
    if (opts) o = *opts;
    sv_status s = check_board(board, &o);
    if (s) return s;
    sv_planar_batch *b = sv_calloc(ctx, 1, sizeof *b, "planar batch");
    if (!b) return sv_last_status();
    b->ctx = ctx;
    b->bo = o;
    b->o = o.job;
    /* the maps are small and run side by side, each on a thread: the CPU's
     * (a device serves one large solve, not many small ones at once) */
    if (b->o.device == SV_PLANAR_DEVICE_AUTO) b->o.device = SV_PLANAR_DEVICE_CPU;
    pthread_mutex_init(&b->share.lock, NULL);
    choose_workers(b);
    b->o.threads = b->job_threads;
    sv_em_options eo;
    sv_em_options_default(&eo); /* the job's mesh options but for the band's top (radiation's alone) */
    s = make_worker_contexts(b);
    if (!s) s = sv_em_project_copy(ctx, board, &b->board);
    if (!s) s = share_memory(b, &eo);
    if (!s) s = sv_em_board_create(ctx, b->board, &eo, b->workers, &b->eb);
    if (s) {
        sv_planar_batch_destroy(b);
        return s;
    }
    *out = b;
    return SV_OK;
}

void sv_planar_batch_destroy(sv_planar_batch *b)
{
    if (!b) return;
    sv_em_calibration_destroy(b->share.cal); /* before the worker context it was made in */
    pthread_mutex_destroy(&b->share.lock);
    if (b->worker_ctx)
        for (int k = 0; k < b->workers; k++) sv_ctx_destroy(b->worker_ctx[k]);
    sv_free(b->ctx, b->worker_ctx);
    sv_em_board_destroy(b->eb);
    sv_em_project_destroy(b->board);
    sv_free(b->ctx, b);
}

const sv_em_project *sv_planar_batch_board(const sv_planar_batch *b) { return b ? b->board : NULL; }
int sv_planar_batch_workers(const sv_planar_batch *b) { return b ? b->workers : 0; }

void sv_planar_batch_memory(const sv_planar_batch *b, size_t *board, size_t *per_map)
{
    if (board) *board = b ? b->board_bytes : 0;
    if (per_map) *per_map = b ? b->o.memory_limit : 0;
}

sv_status sv_planar_batch_solve(sv_planar_batch *b, sv_ctx *ctx, int slot, const unsigned char *map,
                                sv_planar_job **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_planar_batch_solve: out is NULL");
    *out = NULL;
    if (!b || !map) return sv_error(SV_ERR_ARG, "sv_planar_batch_solve: NULL argument");
    if (slot < 0 || slot >= b->workers)
        return sv_error(SV_ERR_ARG, "sv_planar_batch_solve: slot = %d: expected 0 to %d", slot, b->workers - 1);
    sv_em_project *p;
    sv_status s = sv_em_project_with_map(ctx, b->board, map, &p);
    if (s) return s;
    sv_planar_job *job;
    s = planar_job_create_on(ctx, p, &b->o, b->eb, slot, &job);
    sv_em_project_destroy(p);
    if (s) return s;
    job->cal_share = b->cal_share;
    s = sv_planar_job_run(job);
    if (s) {
        sv_planar_job_destroy(job);
        return s;
    }
    *out = job;
    return SV_OK;
}
