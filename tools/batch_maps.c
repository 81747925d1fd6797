/* `solvent batch`'s maps: CSV files named on the command line, every *.csv
 * of a directory, or the paths a list file holds. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "batch_tool.h"
#include "tool_args.h"

static int add(batch_maps *ms, const char *path)
{
    if (ms->n == ms->cap) {
        int cap = ms->cap ? 2 * ms->cap : 64;
        batch_map *m = realloc(ms->m, sizeof *m * (size_t)cap);
        if (!m) return tool_say("batch", "out of memory listing the maps"), 1;
        ms->m = m;
        ms->cap = cap;
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    if (len > 4 && !strcmp(base + len - 4, ".csv")) len -= 4;
    batch_map *m = &ms->m[ms->n];
    m->path = strdup(path);
    m->name = strndup(base, len);
    if (!m->path || !m->name) {
        free(m->path), free(m->name);
        return tool_say("batch", "out of memory listing the maps"), 1;
    }
    ms->n++;
    return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int is_csv(const char *name)
{
    size_t len = strlen(name);
    return len > 4 && !strcmp(name + len - 4, ".csv") && name[0] != '.';
}

/* Every *.csv of directory dir, by name. */
static int add_directory(batch_maps *ms, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return tool_say("batch", "%s: cannot read the directory", dir), 1;
    char **names = NULL;
    int n = 0, cap = 0, bad = 0;
    for (struct dirent *e; !bad && (e = readdir(d));) {
        if (!is_csv(e->d_name)) continue;
        if (n == cap) {
            char **g = realloc(names, sizeof *g * (size_t)(cap = cap ? 2 * cap : 64));
            if (!g) break;
            names = g;
        }
        bad = !(names[n++] = strdup(e->d_name));
    }
    closedir(d);
    if (names) qsort(names, (size_t)n, sizeof *names, by_name);
    size_t dl = strlen(dir);
    for (int k = 0; k < n && !bad; k++) {
        char *path = malloc(dl + strlen(names[k]) + 2);
        if (!path) { bad = 1; break; }
        sprintf(path, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", names[k]);
        bad = add(ms, path);
        free(path);
    }
    for (int k = 0; k < n; k++) free(names[k]);
    free(names);
    if (!bad && n == 0) return tool_say("batch", "%s: no .csv map in the directory", dir), 1;
    return bad;
}

int batch_maps_add_input(batch_maps *ms, const char *input)
{
    struct stat st;
    if (stat(input, &st)) return tool_say("batch", "%s: no such file or directory", input), 1;
    return S_ISDIR(st.st_mode) ? add_directory(ms, input) : add(ms, input);
}

int batch_maps_add_list(batch_maps *ms, const char *list)
{
    FILE *f = fopen(list, "r");
    if (!f) return tool_say("batch", "--list %s: cannot read the file", list), 1;
    const char *slash = strrchr(list, '/');
    size_t dl = slash ? (size_t)(slash - list) + 1 : 0;
    char line[4096];
    int bad = 0, row = 0;
    while (!bad && fgets(line, sizeof line, f)) {
        row++;
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            tool_say("batch", "--list %s: line %d is longer than %zu characters", list, row, sizeof line - 2);
            bad = 1;
            break;
        }
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' ')) line[--len] = 0;
        char *s = line;
        while (*s == ' ' || *s == '\t') s++;
        if (!*s || *s == '#') continue;
        char *path = malloc(dl + strlen(s) + 1);
        if (!path) { bad = 1; break; }
        if (s[0] == '/') strcpy(path, s);
        else sprintf(path, "%.*s%s", (int)dl, list, s);
        bad = add(ms, path);
        free(path);
    }
    fclose(f);
    return bad;
}

static int by_map_name(const void *a, const void *b)
{
    return strcmp((*(batch_map *const *)a)->name, (*(batch_map *const *)b)->name);
}

int batch_maps_check_names(const batch_maps *ms)
{
    batch_map **p = malloc(sizeof *p * (size_t)(ms->n ? ms->n : 1));
    if (!p) return tool_say("batch", "out of memory listing the maps"), 1;
    for (int k = 0; k < ms->n; k++) p[k] = &ms->m[k];
    qsort(p, (size_t)ms->n, sizeof *p, by_map_name);
    int bad = 0;
    for (int k = 1; k < ms->n && !bad; k++)
        if (!strcmp(p[k]->name, p[k - 1]->name)) {
            tool_say("batch", "two maps named '%s' (%s and %s): their outputs would share a name", p[k]->name,
                     p[k - 1]->path, p[k]->path);
            bad = 1;
        }
    free(p);
    return bad;
}

void batch_maps_free(batch_maps *ms)
{
    for (int k = 0; k < ms->n; k++) free(ms->m[k].name), free(ms->m[k].path);
    free(ms->m);
    *ms = (batch_maps){0};
}
