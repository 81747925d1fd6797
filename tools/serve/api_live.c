/* Live mode: the design module's evaluator holds the tab's board restricted
 * exactly to its current map at a fixed set of frequencies, and each pixel
 * edit is a low-rank update of that solution (sv_design_eval_accept): S at
 * those frequencies after every click, without a fresh assembly. The
 * evaluator refuses models whose entries depend on a rooftop's neighbours
 * (thick metal, edge profiles, radiation, dispersion) and says which
 * project field switches the effect off; the page shows that message. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

/* Frequencies live mode follows when the page does not say. */
#define LIVE_POINTS_DEFAULT 41

typedef struct live_input {
    char *project;
    char *region;
    int points;
} live_input;

static void live_input_free(void *p)
{
    live_input *in = p;
    if (in) free(in->project), free(in->region), free(in);
}

/* The evaluator's board: the tab's project with every region pixel metal. */
static sv_status full_board(sv_ctx *ctx, const char *text, int nx, int ny, const unsigned char *map,
                            const unsigned char *region, sv_em_project **out)
{
    size_t n = (size_t)nx * ny;
    unsigned char *full = malloc(n);
    if (!full) return SV_ERR_NOMEM;
    for (size_t k = 0; k < n; k++) full[k] = map[k] || region[k];
    char *t = serve_project_with_map(text, nx, ny, full);
    free(full);
    if (!t) return SV_ERR_NOMEM;
    sv_status st = sv_em_project_parse(ctx, t, strlen(t), "project", out);
    free(t);
    return st;
}

/* The live frequencies: `points` evenly over the project's band. */
static sv_status live_frequencies(sv_ctx *ctx, const char *text, int points, double **freq)
{
    sv_em_project *p = NULL;
    sv_em_sweep given = {.points = points}, band;
    sv_status st = sv_em_project_parse(ctx, text, strlen(text), "project", &p);
    if (!st) st = sv_em_project_band(p, &given, &band);
    sv_em_project_destroy(p);
    if (st) return st;
    if (!(*freq = malloc(sizeof(double) * band.points))) return SV_ERR_NOMEM;
    return sv_em_band_frequencies(&band, *freq);
}

static sv_status live_work(serve_client *c, sv_ctx **ctx, void *arg)
{
    live_input *in = arg;
    serve_live *l = calloc(1, sizeof *l);
    unsigned char *map = NULL;
    sv_em_project *full = NULL;
    sv_status st = l ? SV_OK : SV_ERR_NOMEM;
    if (!st && !(map = serve_project_map(in->project, &l->nx, &l->ny))) st = SV_ERR_NOMEM;
    if (!st && !(l->region = malloc((size_t)l->nx * l->ny))) st = SV_ERR_NOMEM;
    if (!st) serve_map_parse(in->region, l->nx * l->ny, l->region); /* checked by the handler */
    if (!st) st = live_frequencies(*ctx, in->project, in->points, &l->freq_hz);
    l->nf = in->points;
    if (!st) st = full_board(*ctx, in->project, l->nx, l->ny, map, l->region, &full);
    if (!st) st = sv_design_eval_create(*ctx, full, l->region, l->nf, l->freq_hz, &l->ev);
    if (!st) st = sv_design_eval_set_map(l->ev, map);
    sv_em_project_destroy(full);
    free(map);
    if (st) {
        serve_live_free(l);
        return st;
    }
    /* the evaluator keeps the context; its flips run on request threads,
     * which report no progress */
    sv_ctx_set_progress(*ctx, NULL, NULL);
    l->ctx = *ctx;
    *ctx = NULL;
    l->p = sv_design_eval_ports(l->ev);
    pthread_mutex_lock(&c->lock);
    serve_live_free(c->live);
    c->live = l;
    pthread_mutex_unlock(&c->lock);
    return SV_OK;
}

/* POST /api/live {"region": "0101…" (nx·ny, cell i + nx·j, j = 0 the
 * bottom row; 1 = may flip), "points": N}: a job making the evaluator. */
void serve_api_live_start(serve_app *app, const serve_request *rq, serve_reply *rp)
{
    cJSON *body = serve_body_object(rq, rp);
    if (!body) return;
    const cJSON *region = cJSON_GetObjectItemCaseSensitive(body, "region"),
                *points = cJSON_GetObjectItemCaseSensitive(body, "points");
    live_input *in = calloc(1, sizeof *in);
    serve_client *c = NULL;
    int nx = 0, ny = 0;
    unsigned char *map = NULL, *reg = NULL;
    if (!in) {
        serve_reply_error(rp, 500, "out of memory");
        goto done;
    }
    in->points = LIVE_POINTS_DEFAULT;
    if (points && (!cJSON_IsNumber(points) || points->valuedouble != points->valueint || points->valueint < 1 ||
                   points->valueint > 1000)) {
        serve_reply_error(rp, 400, "request field \"points\": expected a whole number from 1 to 1000");
        goto done;
    }
    if (points) in->points = points->valueint;
    if (!(c = serve_client_get(app, rq, rp))) goto done;
    const char *t = serve_client_project(c);
    if (!t || !(map = serve_project_map(t, &nx, &ny))) {
        serve_reply_error(rp, 409, "no project yet: open or send one first");
        goto done;
    }
    reg = malloc((size_t)nx * ny);
    if (!reg || serve_map_parse(cJSON_GetStringValue(region), nx * ny, reg)) {
        serve_reply_error(rp, 400, "request field \"region\": expected a string of %d characters 0 or 1 (the "
                                   "board's %d x %d cells, 1 = may flip)", nx * ny, nx, ny);
        goto done;
    }
    in->project = strdup(t);
    in->region = strdup(cJSON_GetStringValue(region));
    if (!in->project || !in->region) {
        serve_reply_error(rp, 500, "out of memory");
        goto done;
    }
    if (!serve_job_start(c, SERVE_JOB_LIVE, live_work, in, live_input_free, rp))
        serve_reply_json(rp, 202, serve_job_json(c));
    in = NULL; /* the job's (or freed by a refusal) */
done:
    if (c) serve_client_put(c);
    live_input_free(in);
    free(map), free(reg);
    cJSON_Delete(body);
}

/* S of the live map, with the time its update took. */
static void reply_live_s(serve_reply *rp, serve_live *l, double seconds)
{
    double complex *s = malloc(sizeof(double complex) * (size_t)l->nf * l->p * l->p);
    if (!s || sv_design_eval_s(l->ev, s)) {
        free(s);
        serve_reply_error(rp, 500, "%s", s ? sv_last_error() : "out of memory");
        return;
    }
    cJSON *doc = serve_json_s(l->p, l->nf, l->freq_hz, s, NULL);
    free(s);
    char *map = serve_map_string(sv_design_eval_map(l->ev), l->nx * l->ny);
    cJSON_AddStringToObject(doc, "map", map ? map : "");
    free(map);
    cJSON_AddNumberToObject(doc, "seconds", seconds);
    cJSON_AddNumberToObject(doc, "unknowns", sv_design_eval_unknowns(l->ev));
    cJSON_AddNumberToObject(doc, "rebuilds", (double)sv_design_eval_rebuilds(l->ev));
    serve_reply_json(rp, 200, doc);
}

/* The tab's live evaluator, or NULL after a reply. */
static serve_live *live_of(serve_client *c, serve_reply *rp)
{
    if (c->state == SERVE_STATE_RUNNING) {
        serve_reply_error(rp, 409, "this page's %s is running: wait for it or stop it", serve_job_kind_name(c->kind));
        return NULL;
    }
    if (!c->live) serve_reply_error(rp, 404, "live mode is off: start it first (POST /api/live)");
    return c->live;
}

void serve_api_live_get(serve_app *app, const serve_request *rq, serve_reply *rp)
{
    serve_client *c = serve_client_get(app, rq, rp);
    if (!c) return;
    serve_live *l = live_of(c, rp);
    if (l) reply_live_s(rp, l, 0);
    serve_client_put(c);
}

/* POST /api/live/flip {"cells": [k, …]}: flip those cells (a pixel with
 * its mirror partners) in the live map and answer S. */
void serve_api_live_flip(serve_app *app, const serve_request *rq, serve_reply *rp)
{
    cJSON *body = serve_body_object(rq, rp);
    if (!body) return;
    serve_client *c = serve_client_get(app, rq, rp);
    serve_live *l = c ? live_of(c, rp) : NULL;
    const cJSON *cells = cJSON_GetObjectItemCaseSensitive(body, "cells"), *e;
    int n = cJSON_GetArraySize(cells), k = 0, *pix = NULL;
    if (!l) goto done;
    if (!cJSON_IsArray(cells) || n < 1 || n > l->nx * l->ny || !(pix = malloc(sizeof(int) * n))) {
        serve_reply_error(rp, 400, "request field \"cells\": expected an array of 1 to %d cell numbers i + nx*j",
                          l->nx * l->ny);
        goto done;
    }
    cJSON_ArrayForEach(e, cells)
    {
        if (!cJSON_IsNumber(e) || e->valuedouble != e->valueint || e->valueint < 0 || e->valueint >= l->nx * l->ny) {
            serve_reply_error(rp, 400, "request field \"cells[%d]\": expected a cell number from 0 to %d", k,
                              l->nx * l->ny - 1);
            goto done;
        }
        pix[k++] = e->valueint;
    }
    double t0 = sv_time_now();
    if (sv_design_eval_accept(l->ev, n, pix)) serve_reply_error(rp, 400, "%s", sv_last_error());
    else reply_live_s(rp, l, sv_time_now() - t0);
done:
    free(pix);
    if (c) serve_client_put(c);
    cJSON_Delete(body);
}
