/* A tab's job: one at a time, on a worker thread with a context of its
 * own. The library reports progress through the context's callback, which
 * records it for the page to read and answers with the stop request: a
 * Stop button, a DELETE, or the watchdog when the tab has stopped asking
 * (closed). The library itself stops within a fraction of a second and
 * releases what it held. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

const char *serve_job_kind_name(serve_job_kind k)
{
    switch (k) {
    case SERVE_JOB_SWEEP: return "sweep";
    case SERVE_JOB_LIVE: return "live";
    case SERVE_JOB_DESIGN: return "design";
    default: return "none";
    }
}

static const char *state_name(serve_job_state s)
{
    switch (s) {
    case SERVE_STATE_RUNNING: return "running";
    case SERVE_STATE_DONE: return "done";
    case SERVE_STATE_FAILED: return "failed";
    case SERVE_STATE_CANCELLED: return "cancelled";
    default: return "idle";
    }
}

int serve_job_progress(void *user, const char *phase, double fraction)
{
    serve_client *c = user;
    pthread_mutex_lock(&c->lock);
    if (phase) snprintf(c->phase, sizeof c->phase, "%s", phase);
    if (fraction >= 0 && fraction <= 1) c->fraction = fraction;
    if (!c->stop && sv_time_now() - c->last_seen > c->app->cfg.idle_cancel_s) {
        c->stop = 1;
        snprintf(c->message, sizeof c->message, "stopped: the page has not asked about its job for %.0f s (closed?)",
                 c->app->cfg.idle_cancel_s);
    }
    int stop = c->stop;
    pthread_mutex_unlock(&c->lock);
    return stop;
}

static void *job_main(void *arg)
{
    serve_client *c = arg;
    sv_ctx *ctx = NULL;
    sv_status st = sv_ctx_create(&ctx);
    /* --memory-limit holds every job (a sweep's planar job refuses before
     * anything large; the design module's evaluator is held to it too) */
    if (!st && c->app->cfg.memory_limit) st = sv_ctx_set_memory_limit(ctx, c->app->cfg.memory_limit);
    if (!st) {
        sv_ctx_set_progress(ctx, serve_job_progress, c);
        st = c->work(c, &ctx, c->input);
    }
    const char *msg = st ? sv_last_error() : "";
    pthread_mutex_lock(&c->lock);
    int stopped = c->stop || st == SV_ERR_CANCELLED;
    c->state = !st ? SERVE_STATE_DONE : stopped ? SERVE_STATE_CANCELLED : SERVE_STATE_FAILED;
    if (st && !(stopped && c->message[0])) snprintf(c->message, sizeof c->message, "%s", msg);
    if (!st) c->fraction = 1;
    c->seconds = sv_time_now() - c->started;
    if (c->free_input) c->free_input(c->input);
    c->input = NULL;
    pthread_mutex_unlock(&c->lock);
    sv_ctx_destroy(ctx); /* NULL when the work kept it */
    return NULL;
}

int serve_job_start(serve_client *c, serve_job_kind kind, serve_work_fn work, void *input, void (*free_input)(void *),
                    serve_reply *rp)
{
    if (c->state == SERVE_STATE_RUNNING) {
        if (free_input) free_input(input);
        serve_reply_error(rp, 409, "this page's %s is running: stop it first (Stop, or DELETE /api/job)",
                          serve_job_kind_name(c->kind));
        return -1;
    }
    serve_job_join(c);
    c->kind = kind;
    c->state = SERVE_STATE_RUNNING;
    c->stop = 0;
    c->fraction = 0;
    c->phase[0] = c->message[0] = 0;
    c->has_estimate = 0;
    free(c->design_map);
    c->design_map = NULL;
    c->started = sv_time_now();
    c->seconds = 0;
    c->work = work;
    c->input = input;
    c->free_input = free_input;
    if (pthread_create(&c->thread, NULL, job_main, c)) {
        c->state = SERVE_STATE_FAILED;
        snprintf(c->message, sizeof c->message, "could not start a thread for the job");
        if (free_input) free_input(input);
        c->input = NULL;
        serve_reply_error(rp, 503, "%s", c->message);
        return -1;
    }
    c->joinable = 1;
    return 0;
}

void serve_job_stop(serve_client *c)
{
    if (c->state == SERVE_STATE_RUNNING) c->stop = 1;
}

void serve_job_join(serve_client *c)
{
    if (!c->joinable) return;
    pthread_t t = c->thread;
    c->joinable = 0;
    pthread_mutex_unlock(&c->lock);
    pthread_join(t, NULL);
    pthread_mutex_lock(&c->lock);
}

cJSON *serve_job_json(const serve_client *c)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "kind", serve_job_kind_name(c->kind));
    cJSON_AddStringToObject(doc, "state", state_name(c->state));
    cJSON_AddStringToObject(doc, "phase", c->phase);
    cJSON_AddNumberToObject(doc, "fraction", c->fraction);
    cJSON_AddNumberToObject(doc, "seconds", c->state == SERVE_STATE_RUNNING ? sv_time_now() - c->started : c->seconds);
    if (c->message[0]) cJSON_AddStringToObject(doc, "message", c->message);
    if (c->kind == SERVE_JOB_DESIGN && c->design_map) {
        cJSON_AddStringToObject(doc, "map", c->design_map);
        cJSON_AddNumberToObject(doc, "cost", c->design_cost);
    }
    if (c->has_estimate) {
        cJSON *m = cJSON_AddObjectToObject(doc, "estimate");
        cJSON_AddNumberToObject(m, "total", (double)c->estimate.total);
        cJSON_AddNumberToObject(m, "limit", (double)c->estimate.limit);
    }
    return doc;
}
