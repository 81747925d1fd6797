/* One record per browser tab, named by the id the page makes up (header
 * X-Solvent-Client): its project, its one job and that job's results. Tabs
 * never see each other's. The table is small and fixed; a new tab takes
 * the slot of the least recently seen tab that runs nothing. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "serve.h"

void serve_sweep_result_free(serve_sweep_result *r)
{
    if (!r) return;
    for (int k = 0; r->port_names && k < r->p; k++) free(r->port_names[k]);
    free(r->port_names);
    free(r->freq_hz), free(r->s), free(r->exact), free(r->z0), free(r->project_name);
    free(r);
}

void serve_live_free(serve_live *l)
{
    if (!l) return;
    sv_design_eval_destroy(l->ev);
    sv_ctx_destroy(l->ctx);
    free(l->freq_hz), free(l->region);
    free(l);
}

void serve_design_result_free(serve_design_result *d)
{
    if (!d) return;
    free(d->map), free(d->freq_hz), free(d->s);
    free(d);
}

/* An id of 8 to 64 letters, digits and '-': nothing a log or header could
 * be confused by. */
static int id_ok(const char *id)
{
    size_t n = id ? strlen(id) : 0;
    if (n < 8 || n > 64) return 0;
    for (size_t k = 0; k < n; k++) {
        char c = id[k];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-')) return 0;
    }
    return 1;
}

static void client_clear(serve_client *c)
{
    free(c->project);
    c->project = NULL;
    serve_sweep_result_free(c->sweep);
    serve_live_free(c->live);
    serve_design_result_free(c->design);
    free(c->design_map);
    c->sweep = NULL, c->live = NULL, c->design = NULL, c->design_map = NULL;
    c->kind = SERVE_JOB_NONE, c->state = SERVE_STATE_IDLE;
    c->phase[0] = c->message[0] = 0;
}

serve_client *serve_client_get(serve_app *app, const serve_request *rq, serve_reply *rp)
{
    if (!id_ok(rq->client_id)) {
        serve_reply_error(rp, 400, "header X-Solvent-Client: expected the page's id (8 to 64 letters, digits or "
                                   "'-'), got '%s'", rq->client_id ? rq->client_id : "(none)");
        return NULL;
    }
    double now = sv_time_now();
    pthread_mutex_lock(&app->lock);
    serve_client *found = NULL, *spare = NULL;
    for (int k = 0; k < SERVE_MAX_CLIENTS; k++) {
        serve_client *c = &app->clients[k];
        if (c->used && !strcmp(c->id, rq->client_id)) {
            found = c;
            break;
        }
        if (!c->used) {
            if (!spare || spare->used) spare = c;
        } else if (c->state != SERVE_STATE_RUNNING && (!spare || (spare->used && c->last_seen < spare->last_seen))) {
            spare = c;
        }
    }
    if (!found && spare) {
        pthread_mutex_lock(&spare->lock);
        serve_job_join(spare);
        client_clear(spare);
        snprintf(spare->id, sizeof spare->id, "%s", rq->client_id);
        spare->used = 1;
        spare->app = app;
        pthread_mutex_unlock(&spare->lock);
        found = spare;
    }
    pthread_mutex_unlock(&app->lock);
    if (!found) {
        serve_reply_error(rp, 503, "%d tabs are running jobs: stop one first", SERVE_MAX_CLIENTS);
        return NULL;
    }
    pthread_mutex_lock(&found->lock);
    found->last_seen = now;
    return found;
}

void serve_client_put(serve_client *c)
{
    pthread_mutex_unlock(&c->lock);
}

const char *serve_client_project(const serve_client *c)
{
    return c->project ? c->project : c->app->start_project;
}

void serve_clients_shutdown(serve_app *app)
{
    for (int k = 0; k < SERVE_MAX_CLIENTS; k++) {
        serve_client *c = &app->clients[k];
        pthread_mutex_lock(&c->lock);
        serve_job_stop(c);
        serve_job_join(c);
        client_clear(c);
        pthread_mutex_unlock(&c->lock);
        pthread_mutex_destroy(&c->lock);
    }
}
