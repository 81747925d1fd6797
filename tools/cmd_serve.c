/* `solvent serve`: the browser app. Starts a local web server (serve/) for
 * the page in web/, prints its address and serves until Ctrl-C. */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "interrupt.h"
#include "serve/serve.h"
#include "start.h"
#include "tool_args.h"

const char cmd_serve_summary[] = "the browser app: draw, sweep, edit live and design in a web page";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: solvent serve [PROJECT.json] [--port N] [--bind ADDR] [--dir DIR] [--memory-limit B]\n"
            "\n"
            "Starts a web server for the browser app and prints its address: open it in\n"
            "a browser to draw a pixelated circuit, sweep it, edit it with S updating\n"
            "live, and design it against masks. Everything the page needs is served by\n"
            "the tool; nothing is fetched from the internet. Ctrl-C stops the server.\n"
            "\n"
            "options:\n"
            "  PROJECT.json          the project the page opens with (default: none; the\n"
            "                        page can open one from DIR)\n"
            "  --port N              TCP port, 0 to 65535 (default 8080; 0: a free one)\n"
            "  --bind ADDR           the address to listen on (default 127.0.0.1: this\n"
            "                        machine only); the page must then be opened as\n"
            "                        http://ADDR:PORT/\n"
            "  --dir DIR             the folder the page opens and saves files in; no file\n"
            "                        outside it is read or written (default: PROJECT's\n"
            "                        folder, else the current folder)\n"
            "  --memory-limit B      refuse runs whose estimate exceeds B bytes (suffixes\n"
            "                        K, M, G, T; default: the machine's available memory)\n"
            "  -h, --help            this text\n"
            "\n"
            "The server answers only requests addressed to it by a loopback name or ADDR\n"
            "(Host) and sent by its own page (Origin); each browser tab runs one job at a\n"
            "time, and a job whose tab is closed is stopped.\n"
            "\n"
            "exit codes:\n"
            "  0  stopped by Ctrl-C or SIGTERM\n"
            "  1  the project could not be read, or the port could not be opened\n"
            "  2  bad command-line arguments\n");
}

/* The page's assets: installed beside the tool (BINDIR/../share/solvent/web),
 * else the source tree's web/ (a build that is not installed). */
static int find_web(char *out, size_t cap)
{
    char exe[PATH_MAX], cand[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        snprintf(cand, sizeof cand, "%s/../share/solvent/web", dirname(exe));
        if (realpath(cand, out) && !access(out, R_OK)) return 0;
    }
#ifdef SV_SOURCE_WEB_DIR
    if (realpath(SV_SOURCE_WEB_DIR, out) && !access(out, R_OK)) return 0;
#endif
    (void)cap;
    return -1;
}

static int parse_args(int argc, char **argv, serve_config *cfg, const char **dir)
{
    tool_seen seen = {0};
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = !strcmp(o, "--port") || !strcmp(o, "--bind") || !strcmp(o, "--dir") || !strcmp(o, "--memory-limit");
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            usage(stdout);
            return 1;
        }
        if (takes) {
            if (!v) {
                tool_say("serve", "%s needs a value (see --help)", o);
                return 2;
            }
            if (tool_seen_once(&seen, "serve", o)) return 2;
            i++;
        }
        if (!strcmp(o, "--port")) {
            char *end;
            errno = 0;
            long p = strtol(v, &end, 10);
            if (end == v || *end || errno || p < 0 || p > 65535) {
                tool_say("serve", "--port '%s': expected an integer from 0 to 65535", v);
                return 2;
            }
            cfg->port = (int)p;
        } else if (!strcmp(o, "--bind")) {
            cfg->bind = v;
        } else if (!strcmp(o, "--dir")) {
            *dir = v;
        } else if (!strcmp(o, "--memory-limit")) {
            if (tool_parse_bytes(v, &cfg->memory_limit)) {
                tool_say("serve", "--memory-limit '%s': expected %s", v, TOOL_BYTES_EXPECTED);
                return 2;
            }
        } else if (o[0] == '-' && o[1]) {
            tool_say("serve", "unknown option '%s' (see --help)", o);
            return 2;
        } else if (!cfg->project) {
            cfg->project = o;
        } else {
            tool_say("serve", "unexpected argument '%s' (one project file expected)", o);
            return 2;
        }
    }
    return 0;
}

/* The served folder: --dir, else the project's folder, else here. */
static int resolve_dir(serve_config *cfg, const char *dir)
{
    char buf[PATH_MAX];
    if (!dir && cfg->project) {
        snprintf(buf, sizeof buf, "%s", cfg->project);
        dir = dirname(buf);
    }
    if (!dir) dir = ".";
    if (!realpath(dir, cfg->dir)) {
        tool_say("serve", "--dir '%s': %s", dir, strerror(errno));
        return 2;
    }
    return 0;
}

/* The start project, read by the library and normalised for the page. */
static int load_project(serve_app *app)
{
    if (!app->cfg.project) return 0;
    sv_ctx *ctx = NULL;
    char msg[4096];
    const char *base = strrchr(app->cfg.project, '/');
    snprintf(app->start_name, sizeof app->start_name, "%s", base ? base + 1 : app->cfg.project);
    int bad = sv_ctx_create(&ctx) ||
              serve_project_normalise(ctx, "", 0, app->start_name, app->cfg.project, &app->start_project, msg,
                                      sizeof msg);
    sv_ctx_destroy(ctx);
    if (bad) tool_say("serve", "%s", msg);
    return bad;
}

int cmd_serve_main(int argc, char **argv)
{
    static serve_app app; /* large (the client table); one per process */
    const char *dir = NULL;
    app.cfg.bind = "127.0.0.1";
    app.cfg.port = 8080;
    app.cfg.idle_cancel_s = SERVE_IDLE_CANCEL_S;
    int code = parse_args(argc, argv, &app.cfg, &dir);
    if (code) return code == 1 ? 0 : code;
    if ((code = resolve_dir(&app.cfg, dir))) return code;
    if (find_web(app.cfg.web, sizeof app.cfg.web)) {
        tool_say("serve", "the page's files (share/solvent/web) are not installed beside the tool");
        return 1;
    }
    app.cfg.memory_limit = tool_memory_limit(app.cfg.memory_limit);
    if (load_project(&app)) return 1;
    pthread_mutex_init(&app.lock, NULL);
    for (int k = 0; k < SERVE_MAX_CLIENTS; k++) pthread_mutex_init(&app.clients[k].lock, NULL);
    signal(SIGPIPE, SIG_IGN);
    if ((code = serve_http_start(&app))) return code == -2 ? 2 : 1;
    printf("solvent serve: open http://%s/ in a browser (serving %s; Ctrl-C stops)\n", app.hosts[0], app.cfg.dir);
    fflush(stdout);
    while (!tool_interrupted()) nanosleep(&(struct timespec){0, 100000000}, NULL);
    serve_http_stop();
    serve_clients_shutdown(&app);
    free(app.start_project);
    return 0;
}
