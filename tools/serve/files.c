/* Files: the page's assets (the web folder installed with the tool) and
 * the served folder (--dir), where the page opens and saves projects. A
 * name is a relative path of plain components (no "..", no hidden files,
 * no backslashes or control characters); its real path (symlinks
 * resolved) must lie inside the folder, so a link pointing out is refused
 * as a name with ".." is. */
#define _XOPEN_SOURCE 700
#define _DEFAULT_SOURCE
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve.h"

/* 0 when every component of `name` is plain. */
static int name_ok(const char *name)
{
    if (!name || !*name || name[0] == '/' || strlen(name) > 1024) return -1;
    const char *comp = name;
    for (const char *c = name;; c++) {
        if (*c == '/' || !*c) {
            size_t n = (size_t)(c - comp);
            if (n == 0 || comp[0] == '.') return -1; /* "", ".", "..", hidden files */
            if (!*c) break;
            comp = c + 1;
        } else if ((unsigned char)*c < 0x20 || *c == '\\' || *c == 0x7f) {
            return -1;
        }
    }
    return 0;
}

/* 1 when `path` is `root` or inside it. */
static int inside(const char *root, const char *path)
{
    size_t n = strlen(root);
    return !strncmp(root, path, n) && (path[n] == '/' || path[n] == 0 || (n == 1 && root[0] == '/'));
}

int serve_files_resolve_in(const char *root, const char *name, int for_write, char *out, size_t cap,
                           serve_reply *rp)
{
    if (name_ok(name)) {
        serve_reply_error(rp, 400, "file name '%s': expected a relative path of plain names (no '..', no hidden "
                                   "files)", name ? name : "");
        return -1;
    }
    char joined[PATH_MAX * 2], real[PATH_MAX * 2];
    snprintf(joined, sizeof joined, "%s/%s", root, name);
    if (!for_write) {
        if (!realpath(joined, real)) {
            serve_reply_error(rp, 404, "no file '%s' in the served folder", name);
            return -1;
        }
    } else {
        /* the folder must exist inside the root; the file itself may not exist yet */
        char *slash = strrchr(joined, '/'), dir[PATH_MAX];
        *slash = 0;
        if (!realpath(joined, dir)) {
            serve_reply_error(rp, 404, "no folder for '%s' in the served folder", name);
            return -1;
        }
        snprintf(real, sizeof real, "%s/%s", dir, slash + 1);
        struct stat st;
        if (!lstat(real, &st) && S_ISLNK(st.st_mode)) {
            char target[PATH_MAX];
            if (!realpath(real, target) || !inside(root, target)) {
                serve_reply_error(rp, 403, "'%s' links outside the served folder", name);
                return -1;
            }
        }
    }
    if (!inside(root, real)) {
        serve_reply_error(rp, 403, "'%s' is outside the served folder", name);
        return -1;
    }
    if ((size_t)snprintf(out, cap, "%s", real) >= cap) {
        serve_reply_error(rp, 400, "file name '%s' too long", name);
        return -1;
    }
    return 0;
}

int serve_files_resolve(const serve_app *app, const char *name, int for_write, char *out, size_t cap,
                        serve_reply *rp)
{
    return serve_files_resolve_in(app->cfg.dir, name, for_write, out, cap, rp);
}

char *serve_files_slurp(const char *path, size_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    char *buf = NULL;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size > max) goto done;
    if (!(buf = malloc((size_t)st.st_size + 1))) goto done;
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r <= 0) break;
        got += (size_t)r;
    }
    buf[got] = 0;
    if (len) *len = got;
done:
    close(fd);
    return buf;
}

static const char *mime_of(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot) return "application/octet-stream";
    if (!strcmp(dot, ".html")) return "text/html; charset=utf-8";
    if (!strcmp(dot, ".js")) return "text/javascript; charset=utf-8";
    if (!strcmp(dot, ".css")) return "text/css; charset=utf-8";
    if (!strcmp(dot, ".svg")) return "image/svg+xml";
    if (!strcmp(dot, ".png")) return "image/png";
    if (!strcmp(dot, ".json")) return "application/json";
    return "application/octet-stream";
}

void serve_files_asset(const serve_app *app, const char *path, serve_reply *rp)
{
    const char *name = !strcmp(path, "/") ? "index.html" : path + 1;
    char real[PATH_MAX];
    if (serve_files_resolve_in(app->cfg.web, name, 0, real, sizeof real, rp)) return;
    size_t len = 0;
    char *data = serve_files_slurp(real, SERVE_BODY_MAX * 4, &len);
    if (!data) {
        serve_reply_error(rp, 404, "no page asset '%s'", name);
        return;
    }
    serve_reply_bytes(rp, 200, mime_of(real), data, len);
}

/* The served folder's project files, maps and layouts (top level only). */
void serve_files_list(const serve_app *app, serve_reply *rp)
{
    DIR *d = opendir(app->cfg.dir);
    cJSON *doc = cJSON_CreateObject(), *files = cJSON_AddArrayToObject(doc, "files");
    cJSON_AddStringToObject(doc, "dir", app->cfg.dir);
    struct dirent *e;
    while (d && files && (e = readdir(d))) {
        const char *dot = strrchr(e->d_name, '.');
        if (e->d_name[0] == '.' || !dot) continue;
        if (strcmp(dot, ".json") && strcmp(dot, ".csv") && strcmp(dot, ".gds")) continue;
        cJSON_AddItemToArray(files, cJSON_CreateString(e->d_name));
    }
    if (d) closedir(d);
    serve_reply_json(rp, 200, doc);
}

int serve_tmpdir(char *out, size_t cap)
{
    const char *base = getenv("TMPDIR");
    snprintf(out, cap, "%s/solvent-serve-XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(out) ? 0 : -1;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

void serve_tmpdir_remove(const char *dir)
{
    if (dir && *dir) nftw(dir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
}
