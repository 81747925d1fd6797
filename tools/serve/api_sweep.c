/* The sweep endpoints: start a planar job on the tab's project (the
 * library's one call: memory estimate and refusal, the adaptive sweep,
 * calibration, progress and cancel are all its own), the job's progress and
 * stop, the result as S in dB and phase with the exactly solved
 * frequencies and the report, and the Touchstone file. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

static int number_field(const cJSON *body, const char *key, double *out, serve_reply *rp)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(body, key);
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsNumber(v)) {
        serve_reply_error(rp, 400, "request field \"%s\": expected a number", key);
        return -1;
    }
    *out = v->valuedouble;
    return 0;
}

int serve_planar_options(const serve_app *app, const cJSON *body, sv_planar_options *o, serve_reply *rp)
{
    static const char *const known[] = {"start_hz", "stop_hz", "points", "tolerance", "exact", NULL};
    for (const cJSON *f = body->child; f; f = f->next) {
        int ok = 0;
        for (int k = 0; known[k]; k++) ok |= !strcmp(f->string, known[k]);
        if (!ok) {
            serve_reply_error(rp, 400, "request field \"%s\": unknown (expected start_hz, stop_hz, points, "
                                       "tolerance, exact)", f->string);
            return -1;
        }
    }
    sv_planar_options_default(o);
    double points = 0;
    if (number_field(body, "start_hz", &o->band.start_hz, rp) || number_field(body, "stop_hz", &o->band.stop_hz, rp) ||
        number_field(body, "points", &points, rp) || number_field(body, "tolerance", &o->band.tolerance, rp))
        return -1;
    if (points != (int)points || points < 0 || points > 1e6) {
        serve_reply_error(rp, 400, "request field \"points\": expected a whole number from 1 to 1000000");
        return -1;
    }
    o->band.points = (int)points;
    /* 0 Hz given as the start is the DC point, as `solvent sweep --start 0` */
    const cJSON *start = cJSON_GetObjectItemCaseSensitive(body, "start_hz");
    if (cJSON_IsNumber(start) && start->valuedouble == 0) o->start_dc = 1;
    o->exact_all = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(body, "exact"));
    o->memory_limit = app->cfg.memory_limit;
    o->memory_limit_name = app->cfg.memory_limit ? "solvent serve --memory-limit" : NULL;
    return 0;
}

typedef struct sweep_input {
    char *project;
    sv_planar_options o;
} sweep_input;

static void sweep_input_free(void *p)
{
    sweep_input *in = p;
    if (in) free(in->project), free(in);
}

static serve_sweep_result *copy_network(const sv_planar_network *net)
{
    serve_sweep_result *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    size_t pp = (size_t)net->p * net->p;
    r->p = net->p, r->nf = net->nf;
    r->freq_hz = malloc(sizeof(double) * net->nf);
    r->s = malloc(sizeof(double complex) * pp * net->nf);
    r->exact = malloc((size_t)net->nf);
    r->z0 = malloc(sizeof(double) * net->p);
    r->port_names = calloc((size_t)net->p, sizeof(char *));
    if (!r->freq_hz || !r->s || !r->exact || !r->z0 || !r->port_names) {
        serve_sweep_result_free(r);
        return NULL;
    }
    memcpy(r->freq_hz, net->freq_hz, sizeof(double) * net->nf);
    memcpy(r->s, net->s, sizeof(double complex) * pp * net->nf);
    memcpy(r->exact, net->exact, (size_t)net->nf);
    memcpy(r->z0, net->z0, sizeof(double) * net->p);
    for (int k = 0; k < net->p; k++) r->port_names[k] = strdup(net->port_names[k] ? net->port_names[k] : "");
    return r;
}

static sv_status sweep_work(serve_client *c, sv_ctx **ctx, void *arg)
{
    sweep_input *in = arg;
    sv_em_project *p = NULL;
    sv_planar_job *job = NULL;
    serve_sweep_result *r = NULL;
    sv_status st = sv_em_project_parse(*ctx, in->project, strlen(in->project), "project", &p);
    if (!st) st = sv_planar_job_create(*ctx, p, &in->o, &job);
    if (!st) { /* the estimate, for the page to show while the run goes on (or is refused) */
        pthread_mutex_lock(&c->lock);
        sv_planar_job_memory(job, &c->estimate);
        c->has_estimate = 1;
        pthread_mutex_unlock(&c->lock);
        st = sv_planar_job_run(job);
    }
    if (!st) {
        if (!(r = copy_network(sv_planar_job_network(job)))) st = SV_ERR_NOMEM;
        else sv_planar_job_report(job, &r->rep);
    }
    sv_planar_job_destroy(job);
    sv_em_project_destroy(p);
    if (r) {
        pthread_mutex_lock(&c->lock);
        serve_sweep_result_free(c->sweep);
        c->sweep = r;
        pthread_mutex_unlock(&c->lock);
    }
    return st;
}

/* POST /api/sweep {band}: 202 and the job runs; the page asks GET /api/job. */
void serve_api_sweep_start(serve_app *app, const serve_request *rq, serve_reply *rp)
{
    cJSON *body = serve_body_object(rq, rp);
    if (!body) return;
    sweep_input *in = calloc(1, sizeof *in);
    int bad = !in || serve_planar_options(app, body, &in->o, rp);
    cJSON_Delete(body);
    if (bad) {
        if (!in) serve_reply_error(rp, 500, "out of memory");
        free(in);
        return;
    }
    serve_client *c = serve_client_get(app, rq, rp);
    if (!c) {
        free(in);
        return;
    }
    const char *t = serve_client_project(c);
    if (!t || !(in->project = strdup(t))) {
        serve_reply_error(rp, 409, "no project yet: open or send one first");
        free(in);
    } else if (!serve_job_start(c, SERVE_JOB_SWEEP, sweep_work, in, sweep_input_free, rp)) {
        serve_reply_json(rp, 202, serve_job_json(c));
    }
    serve_client_put(c);
}

static cJSON *report_json(const sv_planar_report *r)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "unknowns", r->unknowns);
    cJSON_AddNumberToObject(doc, "ports", r->ports);
    cJSON_AddNumberToObject(doc, "nfreq", r->nfreq);
    cJSON_AddNumberToObject(doc, "exact_solves", r->exact_solves);
    cJSON_AddBoolToObject(doc, "converged", r->converged);
    cJSON_AddNumberToObject(doc, "tolerance", r->tolerance);
    cJSON_AddNumberToObject(doc, "max_residual", r->max_residual);
    cJSON_AddNumberToObject(doc, "reciprocity", r->checks.reciprocity);
    cJSON_AddNumberToObject(doc, "max_singular", r->checks.max_singular);
    cJSON_AddNumberToObject(doc, "seconds", r->seconds_total);
    cJSON_AddNumberToObject(doc, "peak_bytes", (double)r->peak);
    cJSON_AddNumberToObject(doc, "estimate_bytes", (double)r->estimate.total);
    cJSON_AddNumberToObject(doc, "model_limit_hz", r->model_limit_hz);
    cJSON_AddStringToObject(doc, "device", r->device);
    return doc;
}

/* GET /api/sweep: the last finished sweep of this tab. */
void serve_api_sweep_result(serve_app *app, const serve_request *rq, serve_reply *rp)
{
    serve_client *c = serve_client_get(app, rq, rp);
    if (!c) return;
    const serve_sweep_result *r = c->sweep;
    if (!r) {
        serve_reply_error(rp, 404, "no finished sweep yet");
    } else {
        cJSON *doc = serve_json_s(r->p, r->nf, r->freq_hz, r->s, (const char *const *)r->port_names);
        double *ex = malloc(sizeof(double) * r->nf);
        for (int f = 0; ex && f < r->nf; f++) ex[f] = r->exact[f];
        cJSON_AddItemToObject(doc, "exact", serve_json_numbers(ex, ex ? r->nf : 0));
        free(ex);
        cJSON_AddItemToObject(doc, "z0", serve_json_numbers(r->z0, r->p));
        cJSON_AddItemToObject(doc, "report", report_json(&r->rep));
        serve_reply_json(rp, 200, doc);
    }
    serve_client_put(c);
}

/* GET /api/sweep/touchstone: the library's writer, as `solvent sweep -o`. */
void serve_api_touchstone(serve_app *app, const serve_request *rq, serve_reply *rp)
{
    serve_client *c = serve_client_get(app, rq, rp);
    if (!c) return;
    const serve_sweep_result *r = c->sweep;
    char dir[PATH_MAX] = "", path[PATH_MAX + 48];
    if (!r) {
        serve_reply_error(rp, 404, "no finished sweep yet");
    } else if (serve_tmpdir(dir, sizeof dir)) {
        serve_reply_error(rp, 500, "no temporary folder for the file");
    } else {
        char comment[512], name[32];
        snprintf(comment, sizeof comment,
                 "solvent %s serve: %d unknowns, %d frequencies, %d exact solves, tolerance %.1e%s",
                 sv_version_string(), r->rep.unknowns, r->nf, r->rep.exact_solves, r->rep.tolerance,
                 r->rep.converged ? "" : " (NOT met)");
        snprintf(name, sizeof name, "sweep.s%dp", r->p);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        sv_em_ts_options ts;
        sv_em_ts_options_default(&ts);
        ts.version = SV_EM_TS_VERSION_FOR_Z0;
        ts.comment = comment;
        size_t len = 0;
        char *data = NULL;
        if (sv_em_touchstone_write(path, &ts, r->p, r->nf, r->freq_hz, r->s, r->z0))
            serve_reply_error(rp, 500, "%s", sv_last_error());
        else if (!(data = serve_files_slurp(path, (size_t)1 << 31, &len)))
            serve_reply_error(rp, 500, "the Touchstone file could not be read back");
        else {
            serve_reply_bytes(rp, 200, "text/plain; charset=utf-8", data, len);
            snprintf(rp->filename, sizeof rp->filename, "%s", name);
        }
    }
    serve_client_put(c);
    serve_tmpdir_remove(dir);
}

void serve_api_job_get(serve_app *app, const serve_request *rq, serve_reply *rp)
{
    serve_client *c = serve_client_get(app, rq, rp);
    if (!c) return;
    serve_reply_json(rp, 200, serve_job_json(c));
    serve_client_put(c);
}

/* DELETE /api/job: stop this tab's job (the library stops within a
 * fraction of a second; the page sees "cancelled"). */
void serve_api_job_stop(serve_app *app, const serve_request *rq, serve_reply *rp)
{
    serve_client *c = serve_client_get(app, rq, rp);
    if (!c) return;
    serve_job_stop(c);
    serve_reply_json(rp, 200, serve_job_json(c));
    serve_client_put(c);
}
