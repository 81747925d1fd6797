/* The design tab: the library's DBS (sv_design_run) on the tab's board,
 * with a spec built from the page's masks, region, symmetry and limits.
 * The spec is the design module's own file format (docs/design.md), read
 * by its own reader, so every refusal names the spec's field as for a
 * file: the server writes the board, the region and the start map into a
 * private temporary folder for it. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

typedef struct design_input {
    char *spec;     /* the spec's JSON text */
    char dir[PATH_MAX];
} design_input;

static void design_input_free(void *p)
{
    design_input *in = p;
    if (!in) return;
    serve_tmpdir_remove(in->dir);
    free(in->spec), free(in);
}

/* A map as the CSV the design module reads: ny lines of nx 0/1, the top
 * row first. */
static int write_csv(const char *path, int nx, int ny, const unsigned char *map)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    for (int j = ny - 1; j >= 0; j--)
        for (int i = 0; i < nx; i++) fprintf(f, "%d%c", map[i + (size_t)nx * j] ? 1 : 0, i + 1 < nx ? ',' : '\n');
    return fclose(f) ? -1 : 0;
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    int bad = fputs(text, f) < 0;
    return fclose(f) || bad ? -1 : 0;
}

/* The search's current map, for the page to draw while it runs (the job's
 * progress answer carries it). */
typedef struct design_watch {
    serve_client *c;
    int ncells;
} design_watch;

static void watch_map(const unsigned char *map, double cost, int violations, void *user)
{
    (void)violations;
    design_watch *w = user;
    char *text = serve_map_string(map, w->ncells);
    if (!text) return; /* out of memory: the page keeps the last map it had */
    pthread_mutex_lock(&w->c->lock);
    free(w->c->design_map);
    w->c->design_map = text;
    w->c->design_cost = cost;
    pthread_mutex_unlock(&w->c->lock);
}

static sv_status design_work(serve_client *c, sv_ctx **ctx, void *arg)
{
    design_input *in = arg;
    sv_design_spec *spec = NULL;
    sv_design_result *res = NULL;
    serve_design_result *d = NULL;
    sv_status st = sv_design_spec_parse(*ctx, in->spec, strlen(in->spec), "design", in->dir, &spec);
    if (!st) {
        sv_em_grid g;
        sv_em_project_grid(sv_design_spec_board(spec), &g);
        design_watch w = {.c = c, .ncells = g.nx * g.ny};
        st = sv_design_run_watched(*ctx, spec, watch_map, &w, &res);
    }
    if (!st) {
        const sv_em_project *b = sv_design_spec_board(spec);
        sv_em_grid g;
        sv_em_project_grid(b, &g);
        int nf = 0, p = 0;
        const double complex *s = sv_design_result_s(res, &nf, &p);
        const double *f = sv_design_spec_frequencies(spec, &nf);
        d = calloc(1, sizeof *d);
        if (d) {
            d->nx = g.nx, d->ny = g.ny, d->nf = nf, d->p = p;
            d->map = malloc((size_t)g.nx * g.ny);
            d->freq_hz = malloc(sizeof(double) * nf);
            d->s = malloc(sizeof(double complex) * (size_t)nf * p * p);
        }
        if (!d || !d->map || !d->freq_hz || !d->s) {
            serve_design_result_free(d);
            d = NULL;
            st = SV_ERR_NOMEM;
        } else {
            memcpy(d->map, sv_design_result_map(res), (size_t)g.nx * g.ny);
            memcpy(d->freq_hz, f, sizeof(double) * nf);
            memcpy(d->s, s, sizeof(double complex) * (size_t)nf * p * p);
            sv_design_result_report(res, &d->rep);
        }
    }
    sv_design_result_destroy(res);
    sv_design_spec_destroy(spec);
    if (d) {
        pthread_mutex_lock(&c->lock);
        serve_design_result_free(c->design);
        c->design = d;
        pthread_mutex_unlock(&c->lock);
    }
    return st;
}

/* The spec: the page's fields, with the board, region and start map as
 * files of the temporary folder. */
static char *build_spec(cJSON *page_spec, int start_map)
{
    cJSON *spec = cJSON_Duplicate(page_spec, 1);
    if (!spec) return NULL;
    cJSON_DeleteItemFromObjectCaseSensitive(spec, "board");
    cJSON_DeleteItemFromObjectCaseSensitive(spec, "region");
    cJSON_AddStringToObject(spec, "board", "board.json");
    cJSON *region = cJSON_AddObjectToObject(spec, "region");
    cJSON_AddStringToObject(region, "csv", "region.csv");
    if (start_map) {
        cJSON_DeleteItemFromObjectCaseSensitive(spec, "start");
        cJSON *start = cJSON_AddObjectToObject(spec, "start");
        cJSON_AddStringToObject(start, "map", "start.csv");
    }
    char *text = cJSON_PrintUnformatted(spec);
    cJSON_Delete(spec);
    return text;
}

/* POST /api/design {"region": "0101…", "spec": {symmetry, unit, masks,
 * constraints, start ("map": the page's map), frequencies, passes,
 * time_budget, seed}}: a job running DBS. */
void serve_api_design_start(serve_app *app, const serve_request *rq, serve_reply *rp)
{
    cJSON *body = serve_body_object(rq, rp);
    if (!body) return;
    cJSON *page_spec = cJSON_GetObjectItemCaseSensitive(body, "spec");
    const char *region_s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(body, "region"));
    design_input *in = calloc(1, sizeof *in);
    serve_client *c = NULL;
    unsigned char *map = NULL, *region = NULL;
    int nx = 0, ny = 0;
    char path[PATH_MAX + 32];
    if (!in) {
        serve_reply_error(rp, 500, "out of memory");
        goto done;
    }
    if (!cJSON_IsObject(page_spec)) {
        serve_reply_error(rp, 400, "request field \"spec\": expected the design's spec as an object");
        goto done;
    }
    if (!(c = serve_client_get(app, rq, rp))) goto done;
    const char *t = serve_client_project(c);
    if (!t || !(map = serve_project_map(t, &nx, &ny))) {
        serve_reply_error(rp, 409, "no project yet: open or send one first");
        goto done;
    }
    region = malloc((size_t)nx * ny);
    if (!region || serve_map_parse(region_s, nx * ny, region)) {
        serve_reply_error(rp, 400, "request field \"region\": expected a string of %d characters 0 or 1 (the "
                                   "board's %d x %d cells, 1 = may flip)", nx * ny, nx, ny);
        goto done;
    }
    const char *start = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(page_spec, "start"));
    int start_map = start && !strcmp(start, "map");
    if (serve_tmpdir(in->dir, sizeof in->dir)) {
        serve_reply_error(rp, 500, "no temporary folder for the design's files");
        goto done;
    }
    int bad = 0;
    snprintf(path, sizeof path, "%s/board.json", in->dir);
    bad |= write_text(path, t);
    snprintf(path, sizeof path, "%s/region.csv", in->dir);
    bad |= write_csv(path, nx, ny, region);
    snprintf(path, sizeof path, "%s/start.csv", in->dir);
    bad |= write_csv(path, nx, ny, map);
    if (bad || !(in->spec = build_spec(page_spec, start_map))) {
        serve_reply_error(rp, 500, "the design's files could not be written");
        goto done;
    }
    if (!serve_job_start(c, SERVE_JOB_DESIGN, design_work, in, design_input_free, rp))
        serve_reply_json(rp, 202, serve_job_json(c));
    in = NULL;
done:
    if (c) serve_client_put(c);
    design_input_free(in);
    free(map), free(region);
    cJSON_Delete(body);
}

/* GET /api/design: the last finished design (the best map when stopped). */
void serve_api_design_result(serve_app *app, const serve_request *rq, serve_reply *rp)
{
    serve_client *c = serve_client_get(app, rq, rp);
    if (!c) return;
    const serve_design_result *d = c->design;
    if (!d) {
        serve_reply_error(rp, 404, "no finished design yet");
    } else {
        cJSON *doc = serve_json_s(d->p, d->nf, d->freq_hz, d->s, NULL);
        char *map = serve_map_string(d->map, d->nx * d->ny);
        cJSON_AddStringToObject(doc, "map", map ? map : "");
        free(map);
        cJSON *r = cJSON_AddObjectToObject(doc, "report");
        cJSON_AddNumberToObject(r, "cost", d->rep.cost);
        cJSON_AddNumberToObject(r, "start_cost", d->rep.start_cost);
        cJSON_AddNumberToObject(r, "passes", d->rep.passes);
        cJSON_AddNumberToObject(r, "tried", (double)d->rep.tried);
        cJSON_AddNumberToObject(r, "accepted", (double)d->rep.accepted);
        cJSON_AddNumberToObject(r, "violations", d->rep.violations);
        cJSON_AddNumberToObject(r, "stopped", d->rep.stopped);
        cJSON_AddNumberToObject(r, "seconds", d->rep.seconds);
        cJSON_AddNumberToObject(r, "unknowns", d->rep.unknowns);
        serve_reply_json(rp, 200, doc);
    }
    serve_client_put(c);
}
