/* `solvent serve`: the browser app's server. The library does the work
 * (planar.h: a sweep; design.h: live edits and DBS); the server only
 * translates HTTP and JSON into its calls and back.
 *
 *   http.c      libmicrohttpd glue: bodies, size limit, Host/Origin, replies
 *   route.c     which handler answers which method and path
 *   files.c     the page's assets and the served folder (--dir), confined
 *   clients.c   one record per browser tab: its project, job and results
 *   jobs.c      a job's worker thread, progress, stop and the idle watchdog
 *   api_*.c     the endpoints: project, sweep, live mode, design
 *   json.c      small helpers for answers in JSON
 */
#ifndef SV_SERVE_H
#define SV_SERVE_H

#include <complex.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>

#include "solvent/core.h"
#include "solvent/design.h"
#include "solvent/em.h"
#include "solvent/planar.h"

struct cJSON;

/* Request bodies above this are refused (413): a project of 1000 × 1000
 * pixels is about 1 MB of JSON. */
#define SERVE_BODY_MAX (4u << 20)
/* Browser tabs remembered at once; the least recently seen idle one makes
 * room for a new one. */
#define SERVE_MAX_CLIENTS 16
/* A running job whose tab has not asked about it for this long is stopped:
 * the tab was closed (the page asks every fraction of a second). */
#define SERVE_IDLE_CANCEL_S 10.0

typedef struct serve_config {
    const char *bind;       /* address to listen on (default 127.0.0.1) */
    int port;               /* 0: the first free port from 8080 */
    char dir[PATH_MAX];     /* the served folder (realpath): files open and save only inside it */
    char web[PATH_MAX];     /* the page's assets (realpath) */
    const char *project;    /* the project the page starts with (may be NULL) */
    size_t memory_limit;    /* for every job (0: the library's default) */
    double idle_cancel_s;
} serve_config;

typedef enum serve_job_kind { SERVE_JOB_NONE = 0, SERVE_JOB_SWEEP, SERVE_JOB_LIVE, SERVE_JOB_DESIGN } serve_job_kind;
typedef enum serve_job_state {
    SERVE_STATE_IDLE = 0,
    SERVE_STATE_RUNNING,
    SERVE_STATE_DONE,
    SERVE_STATE_FAILED,
    SERVE_STATE_CANCELLED
} serve_job_state;

/* A finished sweep: copies of the job's network and its report. */
typedef struct serve_sweep_result {
    int p, nf;
    double *freq_hz;
    double complex *s;
    unsigned char *exact;
    double *z0;
    char **port_names;
    sv_planar_report rep;
    char *project_name;
} serve_sweep_result;

/* Live mode: the evaluator of one board's flips at fixed frequencies. */
typedef struct serve_live {
    sv_ctx *ctx;
    sv_design_eval *ev;
    int nf, p, nx, ny;
    double *freq_hz;
    unsigned char *region; /* nx·ny, 1 = may flip */
} serve_live;

/* A finished design: its best map, S at the design frequencies, report. */
typedef struct serve_design_result {
    int nx, ny, nf, p;
    unsigned char *map;
    double *freq_hz;
    double complex *s;
    sv_design_report rep;
} serve_design_result;

typedef struct serve_client serve_client;
typedef struct serve_app serve_app;

/* A job's work, run on its worker thread with the job's context (it may
 * keep the context: set *ctx = NULL); returns
 * SV_OK or a status whose message the thread reads with sv_last_error(). */
typedef sv_status (*serve_work_fn)(serve_client *c, sv_ctx **ctx, void *input);

struct serve_client {
    char id[72];
    int used;
    double last_seen;
    pthread_mutex_t lock;
    /* the page's project (validated JSON text) */
    char *project;
    /* the job: one at a time */
    serve_job_kind kind;
    serve_job_state state;
    int stop;                 /* set by a stop request or the watchdog; read by the progress callback */
    char phase[256];
    double fraction, started, seconds;
    char message[2048];       /* the library's message when it failed */
    sv_planar_memory estimate; /* a sweep's, once its job exists (before anything large) */
    int has_estimate;
    pthread_t thread;
    int joinable;
    serve_work_fn work;
    void *input;
    void (*free_input)(void *);
    const serve_app *app;
    /* results (owned; replaced by the next job of their kind) */
    serve_sweep_result *sweep;
    serve_live *live;
    serve_design_result *design;
    char *design_map;         /* the running design's current map, "0101…" (NULL: none yet) */
    double design_cost;
};

struct serve_app {
    serve_config cfg;
    int port;                 /* the port bound */
    char hosts[4][320];       /* the Host values accepted ("127.0.0.1:8080", ...) */
    int nhosts;
    char *start_project;      /* JSON text of cfg.project, normalised (may be NULL) */
    char start_name[256];
    pthread_mutex_t lock;     /* the client table */
    serve_client clients[SERVE_MAX_CLIENTS];
};

/* ---- a request and its answer ---- */
typedef enum serve_method { SERVE_GET = 0, SERVE_PUT, SERVE_POST, SERVE_DELETE, SERVE_OTHER } serve_method;

typedef struct serve_request {
    serve_method method;
    const char *path;        /* without the query */
    const char *client_id;   /* X-Solvent-Client header or ?client= (NULL: none) */
    const char *name;        /* ?name= (files) */
    const char *body;        /* NUL-terminated */
    size_t body_len;
} serve_request;

typedef struct serve_reply {
    int status;
    char *body;              /* malloc'ed */
    size_t len;
    const char *type;        /* Content-Type */
    char filename[256];      /* non-empty: a download with this name */
} serve_reply;

/* http.c */
int serve_http_start(serve_app *app);  /* 0; -2 a bad --bind, -1 no listening socket (after a message) */
void serve_http_stop(void);

/* route.c: the answer to one request (never fails: errors are replies) */
void serve_route(serve_app *app, const serve_request *rq, serve_reply *rp);

/* json.c: replies */
void serve_reply_json(serve_reply *rp, int status, struct cJSON *doc); /* takes doc */
void serve_reply_error(serve_reply *rp, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void serve_reply_bytes(serve_reply *rp, int status, const char *type, char *data, size_t len);
/* The body as a JSON object: NULL after a 400 reply naming what is wrong. */
struct cJSON *serve_body_object(const serve_request *rq, serve_reply *rp);
/* A number array from doubles (NaN/inf as null). */
struct cJSON *serve_json_numbers(const double *v, int n);
/* A map as a string of '0'/'1' of n cells, and back (-1: wrong length or character). */
char *serve_map_string(const unsigned char *map, int n);
int serve_map_parse(const char *s, int n, unsigned char *map);
/* S as {"ports": [...], "freq_hz": [...], "s": {"S11": {"re","im","db","deg"}, ...}} */
struct cJSON *serve_json_s(int p, int nf, const double *freq_hz, const double complex *s, const char *const *names);

/* files.c */
void serve_files_asset(const serve_app *app, const char *path, serve_reply *rp);
void serve_files_list(const serve_app *app, serve_reply *rp);
/* The path of `name` inside the served folder (must exist unless
 * for_write), or -1 after a 400/403/404 reply. */
int serve_files_resolve_in(const char *root, const char *name, int for_write, char *out, size_t cap,
                           serve_reply *rp);
int serve_files_resolve(const serve_app *app, const char *name, int for_write, char *out, size_t cap,
                        serve_reply *rp);
/* A whole file (malloc'ed, NUL-terminated) or NULL. */
char *serve_files_slurp(const char *path, size_t max, size_t *len);
/* A temporary folder of our own (mkdtemp) and its removal. */
int serve_tmpdir(char *out, size_t cap);
void serve_tmpdir_remove(const char *dir);

/* clients.c */
/* The tab's record (made on first sight), locked; NULL after a reply when
 * the id is missing or malformed or the table is full of busy tabs. */
serve_client *serve_client_get(serve_app *app, const serve_request *rq, serve_reply *rp);
void serve_client_put(serve_client *c);
void serve_clients_shutdown(serve_app *app);
void serve_sweep_result_free(serve_sweep_result *r);
void serve_live_free(serve_live *l);
void serve_design_result_free(serve_design_result *d);
/* The tab's project text: its own, else the start project (NULL: none). */
const char *serve_client_project(const serve_client *c);

/* jobs.c (the client locked) */
/* 0, or -1 after a 409 reply when one runs. */
int serve_job_start(serve_client *c, serve_job_kind kind, serve_work_fn work, void *input, void (*free_input)(void *),
                    serve_reply *rp);
void serve_job_stop(serve_client *c);
struct cJSON *serve_job_json(const serve_client *c);
/* The progress callback jobs give their context (user: the client). */
int serve_job_progress(void *user, const char *phase, double fraction);
void serve_job_join(serve_client *c); /* the client unlocked while it waits */
const char *serve_job_kind_name(serve_job_kind k);

/* project.c: a project as the page edits it (metal as pixel strings) */
/* Parse and validate `text` (the library's reader; or the file `path`,
 * which resolves the files it names, its text read when len is 0); on success *out gets the normalised
 * text (malloc'ed), else -1 with the library's message in msg. */
int serve_project_normalise(sv_ctx *ctx, const char *text, size_t len, const char *name, const char *path, char **out,
                            char *msg, size_t cap);
/* The project text with the map `map` (nx·ny, j = 0 bottom) as its pixels. */
char *serve_project_with_map(const char *text, int nx, int ny, const unsigned char *map);
/* The project's map and size from its pixel strings (malloc'ed) or NULL. */
unsigned char *serve_project_map(const char *text, int *nx, int *ny);

/* api_sweep.c: a request's band ({"start_hz", "stop_hz", "points",
 * "tolerance"}, each optional: the project's) as a planar job's options;
 * -1 after a 400 reply naming the field. */
int serve_planar_options(const serve_app *app, const struct cJSON *body, sv_planar_options *o, serve_reply *rp);

/* api_*.c handlers */
void serve_api_project_get(serve_app *app, const serve_request *rq, serve_reply *rp);
void serve_api_project_put(serve_app *app, const serve_request *rq, serve_reply *rp);
void serve_api_open(serve_app *app, const serve_request *rq, serve_reply *rp);
void serve_api_save(serve_app *app, const serve_request *rq, serve_reply *rp);
void serve_api_file(serve_app *app, const serve_request *rq, serve_reply *rp);
void serve_api_memory(serve_app *app, const serve_request *rq, serve_reply *rp);
void serve_api_gds(serve_app *app, const serve_request *rq, serve_reply *rp);
void serve_api_sweep_start(serve_app *app, const serve_request *rq, serve_reply *rp);
void serve_api_sweep_result(serve_app *app, const serve_request *rq, serve_reply *rp);
void serve_api_touchstone(serve_app *app, const serve_request *rq, serve_reply *rp);
void serve_api_job_get(serve_app *app, const serve_request *rq, serve_reply *rp);
void serve_api_job_stop(serve_app *app, const serve_request *rq, serve_reply *rp);
void serve_api_live_start(serve_app *app, const serve_request *rq, serve_reply *rp);
void serve_api_live_flip(serve_app *app, const serve_request *rq, serve_reply *rp);
void serve_api_live_get(serve_app *app, const serve_request *rq, serve_reply *rp);
void serve_api_design_start(serve_app *app, const serve_request *rq, serve_reply *rp);
void serve_api_design_result(serve_app *app, const serve_request *rq, serve_reply *rp);

#endif
