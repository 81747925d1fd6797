/* The HTTP side of `solvent serve`, over libmicrohttpd: a request's body is
 * gathered up to SERVE_BODY_MAX, its Host and Origin are checked, and the
 * router's reply is sent with headers that keep other sites out (no
 * framing, no sniffing, this origin's scripts only). A thread per
 * connection: a slow request (a live flip, a memory estimate) never holds
 * up another tab. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "serve.h"

static struct MHD_Daemon *daemon_;

/* What one request gathers while its body arrives. */
typedef struct conn_state {
    char *body;
    size_t len, cap;
    int too_large;
} conn_state;

static serve_method method_of(const char *m)
{
    if (!strcmp(m, "GET") || !strcmp(m, "HEAD")) return SERVE_GET;
    if (!strcmp(m, "PUT")) return SERVE_PUT;
    if (!strcmp(m, "POST")) return SERVE_POST;
    if (!strcmp(m, "DELETE")) return SERVE_DELETE;
    return SERVE_OTHER;
}

static int host_allowed(const serve_app *app, const char *host)
{
    if (!host) return 0;
    for (int k = 0; k < app->nhosts; k++)
        if (!strcasecmp(host, app->hosts[k])) return 1;
    return 0;
}

/* A browser names the page that sent a request in Origin; only this
 * server's own pages may drive it. A request without Origin comes from a
 * program, not another site's page (browsers send it on every
 * cross-origin request and on every POST, PUT and DELETE). */
static int origin_allowed(const serve_app *app, const char *origin)
{
    if (!origin) return 1;
    if (strncmp(origin, "http://", 7)) return 0;
    return host_allowed(app, origin + 7);
}

/* Browsers name where a request comes from in Sec-Fetch-Site as well,
 * also on requests without Origin (an image or a script another page
 * embeds): the API answers its own page only. Another site may link to
 * the page itself. */
static int fetch_site_allowed(const char *url, const char *site)
{
    if (!site || strncmp(url, "/api/", 5)) return 1;
    return !strcmp(site, "same-origin") || !strcmp(site, "none");
}

static enum MHD_Result send_reply(struct MHD_Connection *conn, serve_reply *rp)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(rp->len, rp->body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(rp->body);
        return MHD_NO;
    }
    rp->body = NULL;
    MHD_add_response_header(r, "Content-Type", rp->type ? rp->type : "application/json");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "X-Frame-Options", "DENY");
    MHD_add_response_header(r, "Content-Security-Policy",
                            "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
    if (rp->filename[0]) {
        char disp[320];
        snprintf(disp, sizeof disp, "attachment; filename=\"%s\"", rp->filename);
        MHD_add_response_header(r, "Content-Disposition", disp);
    }
    enum MHD_Result ok = MHD_queue_response(conn, (unsigned)rp->status, r);
    MHD_destroy_response(r);
    return ok;
}

/* Gather the body; 1 while more is coming. */
static int gather(conn_state *cs, const char *data, size_t *size)
{
    if (!*size) return 0;
    if (cs->too_large || cs->len + *size > SERVE_BODY_MAX) {
        cs->too_large = 1;
    } else {
        if (cs->len + *size + 1 > cs->cap) {
            size_t cap = (cs->len + *size + 1) * 2;
            if (cap > SERVE_BODY_MAX + 1) cap = SERVE_BODY_MAX + 1;
            char *b = realloc(cs->body, cap);
            if (!b) cs->too_large = 1;
            else cs->body = b, cs->cap = cap;
        }
        if (!cs->too_large) memcpy(cs->body + cs->len, data, *size), cs->len += *size;
    }
    *size = 0;
    return 1;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)version;
    serve_app *app = cls;
    conn_state *cs = *con_cls;
    if (!cs) {
        if (!(cs = calloc(1, sizeof *cs))) return MHD_NO;
        *con_cls = cs;
        return MHD_YES;
    }
    if (gather(cs, upload_data, upload_data_size)) return MHD_YES;

    serve_reply rp = {0};
    const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
    const char *origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
    if (!host_allowed(app, host)) {
        serve_reply_error(&rp, 421, "Host '%s' is not this server: open http://%s/", host ? host : "(none)",
                          app->hosts[0]);
    } else if (!origin_allowed(app, origin)) {
        serve_reply_error(&rp, 403, "Origin '%s' may not use this server: only its own page may", origin);
    } else if (!fetch_site_allowed(url, MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Sec-Fetch-Site"))) {
        serve_reply_error(&rp, 403, "a request from another site (Sec-Fetch-Site) may not use this server");
    } else if (cs->too_large) {
        serve_reply_error(&rp, 413, "request body larger than %u bytes", SERVE_BODY_MAX);
    } else {
        const char *client = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Solvent-Client");
        if (!client) client = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "client");
        serve_request rq = {.method = method_of(method),
                            .path = url,
                            .client_id = client,
                            .name = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "name"),
                            .body = cs->body ? cs->body : "",
                            .body_len = cs->len};
        if (cs->body) cs->body[cs->len] = 0;
        serve_route(app, &rq, &rp);
    }
    if (!rp.body) serve_reply_error(&rp, 500, "no answer");
    return send_reply(conn, &rp);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode code)
{
    (void)cls, (void)conn, (void)code;
    conn_state *cs = *con_cls;
    if (cs) free(cs->body), free(cs);
    *con_cls = NULL;
}

/* The Host values a browser sends for this server: the bound address
 * first (the address printed), then the loopback names. A rebinding
 * attack's page sends its own name and is refused. */
static void add_host(serve_app *app, const char *name)
{
    char h[320];
    snprintf(h, sizeof h, strchr(name, ':') ? "[%s]:%d" : "%s:%d", name, app->port);
    for (int k = 0; k < app->nhosts; k++)
        if (!strcmp(app->hosts[k], h)) return;
    if (app->nhosts < 4) snprintf(app->hosts[app->nhosts++], sizeof app->hosts[0], "%s", h);
}

static void allowed_hosts(serve_app *app)
{
    app->nhosts = 0;
    add_host(app, app->cfg.bind);
    add_host(app, "127.0.0.1");
    add_host(app, "localhost");
    add_host(app, "::1");
}

int serve_http_start(serve_app *app)
{
    struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_PASSIVE, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    const char *bind = app->cfg.bind;
    if (!strcmp(bind, "localhost")) bind = "127.0.0.1";
    char port[16];
    snprintf(port, sizeof port, "%d", app->cfg.port);
    if (getaddrinfo(bind, port, &hints, &ai) || !ai) {
        fprintf(stderr, "solvent serve: --bind '%s': expected a numeric IPv4 or IPv6 address\n", app->cfg.bind);
        return -2;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG;
    if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
    daemon_ = MHD_start_daemon(flags, (uint16_t)app->cfg.port, NULL, NULL, on_request, app, MHD_OPTION_SOCK_ADDR,
                               ai->ai_addr, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
                               MHD_OPTION_CONNECTION_LIMIT, 64u, MHD_OPTION_CONNECTION_TIMEOUT, 60u,
                               MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!daemon_) {
        fprintf(stderr, "solvent serve: cannot listen on %s port %d (in use? try --port 0 for a free one)\n",
                app->cfg.bind, app->cfg.port);
        return -1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
    app->port = info ? info->port : app->cfg.port;
    allowed_hosts(app);
    return 0;
}

void serve_http_stop(void)
{
    if (daemon_) MHD_stop_daemon(daemon_);
    daemon_ = NULL;
}
