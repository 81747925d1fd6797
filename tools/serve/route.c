/* Which handler answers which request: the API under /api/, the page's
 * assets (GET) everywhere else. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "serve.h"

typedef void (*serve_handler)(serve_app *app, const serve_request *rq, serve_reply *rp);

typedef struct serve_route_entry {
    serve_method method;
    const char *path;
    serve_handler fn;
} serve_route_entry;

static void files_list(serve_app *app, const serve_request *rq, serve_reply *rp)
{
    (void)rq;
    serve_files_list(app, rp);
}

static const serve_route_entry routes[] = {
    {SERVE_GET, "/api/project", serve_api_project_get},
    {SERVE_PUT, "/api/project", serve_api_project_put},
    {SERVE_GET, "/api/files", files_list},
    {SERVE_POST, "/api/open", serve_api_open},
    {SERVE_GET, "/api/file", serve_api_file},
    {SERVE_PUT, "/api/file", serve_api_save},
    {SERVE_POST, "/api/memory", serve_api_memory},
    {SERVE_GET, "/api/gds", serve_api_gds},
    {SERVE_POST, "/api/sweep", serve_api_sweep_start},
    {SERVE_GET, "/api/sweep", serve_api_sweep_result},
    {SERVE_GET, "/api/sweep/touchstone", serve_api_touchstone},
    {SERVE_GET, "/api/job", serve_api_job_get},
    {SERVE_DELETE, "/api/job", serve_api_job_stop},
    {SERVE_POST, "/api/live", serve_api_live_start},
    {SERVE_GET, "/api/live", serve_api_live_get},
    {SERVE_POST, "/api/live/flip", serve_api_live_flip},
    {SERVE_POST, "/api/design", serve_api_design_start},
    {SERVE_GET, "/api/design", serve_api_design_result},
};

void serve_route(serve_app *app, const serve_request *rq, serve_reply *rp)
{
    int path_known = 0;
    for (size_t k = 0; k < sizeof routes / sizeof routes[0]; k++) {
        if (strcmp(rq->path, routes[k].path)) continue;
        path_known = 1;
        if (rq->method == routes[k].method) {
            routes[k].fn(app, rq, rp);
            return;
        }
    }
    if (path_known) {
        serve_reply_error(rp, 405, "%s does not take this method", rq->path);
    } else if (!strncmp(rq->path, "/api/", 5) || !strcmp(rq->path, "/api")) {
        serve_reply_error(rp, 404, "no endpoint %s", rq->path);
    } else if (rq->method != SERVE_GET) {
        serve_reply_error(rp, 405, "the page's files are read with GET");
    } else {
        serve_files_asset(app, rq->path, rp);
    }
}
