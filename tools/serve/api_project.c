/* The project endpoints: the tab's project (get, put: validated by the
 * library's reader, 400 with its message), files of the served folder
 * (list, open, save), the memory a run would take, and the layout as
 * GDSII. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "serve.h"

/* Each port's cells (i + nx·j), as the library places them: the page shows
 * them fixed and never works them out itself. NULL if the text does not
 * read (it was validated when stored). */
static cJSON *port_cells_json(const char *text)
{
    sv_em_project *p = NULL;
    if (sv_em_project_parse(NULL, text, strlen(text), "project", &p)) return NULL;
    cJSON *all = cJSON_CreateArray();
    for (int k = 0; all && k < sv_em_project_ports(p); k++) {
        int n = sv_em_project_port_cells(p, k, NULL, 0);
        int *cells = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
        cJSON *one = cells ? cJSON_CreateArray() : NULL;
        if (one) n = sv_em_project_port_cells(p, k, cells, n);
        for (int q = 0; one && q < n; q++) cJSON_AddItemToArray(one, cJSON_CreateNumber(cells[q]));
        free(cells);
        if (!one) {
            cJSON_Delete(all);
            all = NULL;
        } else
            cJSON_AddItemToArray(all, one);
    }
    sv_em_project_destroy(p);
    return all;
}

/* {"name": ..., "project": {...}, "port_cells": [[cells of port 1], ...]} */
static void reply_project(serve_reply *rp, const char *name, const char *text)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "name", name ? name : "");
    cJSON *prj = text ? cJSON_Parse(text) : cJSON_CreateNull();
    cJSON_AddItemToObject(doc, "project", prj);
    cJSON *cells = text ? port_cells_json(text) : NULL;
    if (cells) cJSON_AddItemToObject(doc, "port_cells", cells);
    serve_reply_json(rp, 200, doc);
}

void serve_api_project_get(serve_app *app, const serve_request *rq, serve_reply *rp)
{
    serve_client *c = serve_client_get(app, rq, rp);
    if (!c) return;
    reply_project(rp, c->project ? "" : app->start_name, serve_client_project(c));
    serve_client_put(c);
}

/* Validate (and normalise) a project's text outside any lock. */
static char *validated(const char *text, size_t len, const char *name, const char *path, serve_reply *rp)
{
    sv_ctx *ctx = NULL;
    char *out = NULL, msg[4096];
    if (sv_ctx_create(&ctx)) {
        serve_reply_error(rp, 500, "%s", sv_last_error());
        return NULL;
    }
    if (serve_project_normalise(ctx, text, len, name, path, &out, msg, sizeof msg))
        serve_reply_error(rp, 400, "%s", msg);
    sv_ctx_destroy(ctx);
    return out;
}

static void store_project(serve_app *app, const serve_request *rq, serve_reply *rp, char *text, const char *name)
{
    serve_client *c = serve_client_get(app, rq, rp);
    if (!c) {
        free(text);
        return;
    }
    free(c->project);
    c->project = text;
    reply_project(rp, name, text);
    serve_client_put(c);
}

void serve_api_project_put(serve_app *app, const serve_request *rq, serve_reply *rp)
{
    char *text = validated(rq->body, rq->body_len, "project", NULL, rp);
    if (text) store_project(app, rq, rp, text, "project");
}

/* POST /api/open?name=FILE: a project file of the served folder. */
void serve_api_open(serve_app *app, const serve_request *rq, serve_reply *rp)
{
    char path[PATH_MAX];
    if (serve_files_resolve(app, rq->name, 0, path, sizeof path, rp)) return;
    size_t len = 0;
    char *raw = serve_files_slurp(path, SERVE_BODY_MAX, &len);
    if (!raw) {
        serve_reply_error(rp, 400, "'%s' is not a readable regular file of at most %u bytes", rq->name,
                          SERVE_BODY_MAX);
        return;
    }
    char *text = validated(raw, len, rq->name, path, rp);
    free(raw);
    if (text) store_project(app, rq, rp, text, rq->name);
}

/* PUT /api/file?name=FILE: the body saved in the served folder, written
 * whole or not at all. */
void serve_api_save(serve_app *app, const serve_request *rq, serve_reply *rp)
{
    char path[PATH_MAX];
    if (serve_files_resolve(app, rq->name, 1, path, sizeof path, rp)) return;
    const char *dot = strrchr(path, '.');
    if (!dot || (strcmp(dot, ".json") && strcmp(dot, ".csv"))) {
        serve_reply_error(rp, 400, "file name '%s': the page saves .json projects and .csv maps", rq->name);
        return;
    }
    sv_atomic_file *af = NULL;
    if (sv_atomic_file_open(path, &af)) {
        serve_reply_error(rp, 400, "%s", sv_last_error());
        return;
    }
    int ok = fwrite(rq->body, 1, rq->body_len, sv_atomic_file_stream(af)) == rq->body_len;
    if (sv_atomic_file_close(af, ok) || !ok) {
        serve_reply_error(rp, 500, "%s: not written: %s", rq->name, sv_last_error());
        return;
    }
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "saved", rq->name);
    serve_reply_json(rp, 200, doc);
}

/* GET /api/file?name=FILE: a .json or .csv file of the served folder as
 * text (the page reads CSV maps this way). */
void serve_api_file(serve_app *app, const serve_request *rq, serve_reply *rp)
{
    char path[PATH_MAX];
    if (serve_files_resolve(app, rq->name, 0, path, sizeof path, rp)) return;
    const char *dot = strrchr(path, '.');
    if (!dot || (strcmp(dot, ".json") && strcmp(dot, ".csv"))) {
        serve_reply_error(rp, 400, "file name '%s': the page reads .json projects and .csv maps", rq->name);
        return;
    }
    size_t len = 0;
    char *data = serve_files_slurp(path, SERVE_BODY_MAX, &len);
    if (!data) serve_reply_error(rp, 400, "'%s' is not a readable regular file of at most %u bytes", rq->name, SERVE_BODY_MAX);
    else serve_reply_bytes(rp, 200, "text/plain; charset=utf-8", data, len);
}

/* A copy of the tab's project text, or NULL after a 409 reply. */
static char *project_copy(serve_app *app, const serve_request *rq, serve_reply *rp)
{
    serve_client *c = serve_client_get(app, rq, rp);
    if (!c) return NULL;
    const char *t = serve_client_project(c);
    char *copy = t ? strdup(t) : NULL;
    serve_client_put(c);
    if (!copy) serve_reply_error(rp, 409, "no project yet: open or send one first");
    return copy;
}

static cJSON *memory_json(const sv_planar_memory *m)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "mesh", (double)m->mesh);
    cJSON_AddNumberToObject(doc, "model", (double)m->model);
    cJSON_AddNumberToObject(doc, "solves", (double)m->solves);
    cJSON_AddNumberToObject(doc, "calibration", (double)m->calibration);
    cJSON_AddNumberToObject(doc, "small", (double)m->small);
    cJSON_AddNumberToObject(doc, "total", (double)m->total);
    cJSON_AddNumberToObject(doc, "limit", (double)m->limit);
    return doc;
}

/* POST /api/memory {band}: the library's estimate for a run of the tab's
 * project (the mesh is made: a second or two on the largest boards), and
 * whether it fits the limit the run will be held to. */
void serve_api_memory(serve_app *app, const serve_request *rq, serve_reply *rp)
{
    cJSON *body = serve_body_object(rq, rp);
    if (!body) return;
    sv_planar_options o;
    char *text = NULL;
    sv_ctx *ctx = NULL;
    sv_em_project *p = NULL;
    sv_planar_job *job = NULL;
    if (serve_planar_options(app, body, &o, rp) || !(text = project_copy(app, rq, rp))) goto done;
    if (sv_ctx_create(&ctx) || sv_em_project_parse(ctx, text, strlen(text), "project", &p)) {
        serve_reply_error(rp, 400, "%s", sv_last_error());
        goto done;
    }
    sv_status st = sv_planar_job_create(ctx, p, &o, &job);
    if (st && st != SV_ERR_BUDGET) {
        serve_reply_error(rp, 400, "%s", sv_last_error());
        goto done;
    }
    cJSON *doc = cJSON_CreateObject();
    if (job) {
        sv_planar_memory m;
        sv_planar_job_memory(job, &m);
        cJSON_AddItemToObject(doc, "estimate", memory_json(&m));
        cJSON_AddBoolToObject(doc, "fits", m.limit == 0 || m.total <= m.limit);
    } else {
        cJSON_AddBoolToObject(doc, "fits", 0);
        cJSON_AddStringToObject(doc, "message", sv_last_error());
    }
    serve_reply_json(rp, 200, doc);
done:
    sv_planar_job_destroy(job);
    sv_em_project_destroy(p);
    sv_ctx_destroy(ctx);
    free(text);
    cJSON_Delete(body);
}

/* GET /api/gds: the tab's layout as GDSII (sv_em_project_write_gds). */
void serve_api_gds(serve_app *app, const serve_request *rq, serve_reply *rp)
{
    char *text = project_copy(app, rq, rp), dir[PATH_MAX] = "", path[PATH_MAX + 16];
    sv_ctx *ctx = NULL;
    sv_em_project *p = NULL;
    if (!text) return;
    if (serve_tmpdir(dir, sizeof dir)) {
        serve_reply_error(rp, 500, "no temporary folder for the layout");
        goto done;
    }
    snprintf(path, sizeof path, "%s/layout.gds", dir);
    if (sv_ctx_create(&ctx) || sv_em_project_parse(ctx, text, strlen(text), "project", &p) ||
        sv_em_project_write_gds(ctx, p, path, 1, 0, NULL)) {
        serve_reply_error(rp, 400, "%s", sv_last_error());
        goto done;
    }
    size_t len = 0;
    char *data = serve_files_slurp(path, (size_t)1 << 30, &len);
    if (!data) serve_reply_error(rp, 500, "the layout could not be read back");
    else serve_reply_bytes(rp, 200, "application/octet-stream", data, len), snprintf(rp->filename, sizeof rp->filename, "layout.gds");
done:
    serve_tmpdir_remove(dir);
    sv_em_project_destroy(p);
    sv_ctx_destroy(ctx);
    free(text);
}
