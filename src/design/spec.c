#define _POSIX_C_SOURCE 200809L
/* A design spec: read, checked, and the board's projects made from it
 * (docs/design.md, "Spec reference"). */
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "spec_json.h"

unsigned long long sv_design_rand(unsigned long long *state)
{
    /* splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number
     * generators", OOPSLA 2014): exact integer arithmetic, so a seed gives the
     * same sequence everywhere */
    unsigned long long z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

int sv_design_partners(const sv_design_spec *s, int c, int out[4])
{
    int i = c % s->nx, j = c / s->nx, n = 0;
    int mi = s->sym_i0 + s->sym_i1 - i, mj = s->sym_j0 + s->sym_j1 - j;
    int cand[4] = {c, -1, -1, -1};
    if (s->sym == SV_DESIGN_SYM_X || s->sym == SV_DESIGN_SYM_XY) cand[1] = mi + s->nx * j;
    if (s->sym == SV_DESIGN_SYM_Y || s->sym == SV_DESIGN_SYM_XY) cand[2] = i + s->nx * mj;
    if (s->sym == SV_DESIGN_SYM_XY) cand[3] = mi + s->nx * mj;
    for (int t = 0; t < 4; t++) {
        if (cand[t] < 0) continue;
        int dup = 0;
        for (int u = 0; u < n; u++) dup |= out[u] == cand[t];
        if (!dup) out[n++] = cand[t];
    }
    return n;
}

void sv_design_compose(const sv_design_spec *s, const unsigned char *design, unsigned char *map)
{
    for (int c = 0; c < s->nx * s->ny; c++)
        map[c] = s->region[c] ? !!design[c] : (unsigned char)sv_em_project_metal(s->board, c % s->nx, c / s->nx);
}

/* Each port's cells (the project's own answer). */
sv_status sv_design_port_cells(sv_design_spec *s)
{
    int np = sv_em_project_ports(s->full), cnt = 0;
    for (int k = 0; k < np; k++) cnt += sv_em_project_port_cells(s->full, k, NULL, 0);
    s->port_cell_off = calloc((size_t)np + 1, sizeof(int));
    s->port_cells = malloc(sizeof(int) * (size_t)(cnt > 0 ? cnt : 1));
    if (!s->port_cell_off || !s->port_cells) return sv_error(SV_ERR_NOMEM, "design: port cells: out of memory");
    cnt = 0;
    for (int k = 0; k < np; k++) {
        s->port_cell_off[k] = cnt;
        cnt += sv_em_project_port_cells(s->full, k, s->port_cells + cnt, INT_MAX);
    }
    s->port_cell_off[np] = cnt;
    for (int q = 0; q < cnt; q++)
        if (s->region[s->port_cells[q]]) {
            int c = s->port_cells[q];
            return sv_error(SV_ERR_PARSE, "%s: region: pixel (row %d, column %d) carries a port: expected ports on fixed metal",
                            s->name, s->ny - 1 - c / s->nx, c % s->nx);
        }
    return SV_OK;
}

/* The board's project: read as a file, and kept as a tree. */
static sv_status read_board(const spec_reader *r, const cJSON *v, sv_design_spec *s)
{
    sv_status st = spec_path(r, v, "board", &s->board_file);
    if (st) return st;
    if ((st = sv_em_project_read(s->ctx, s->board_file, &s->board))) return st;
    if (sv_em_project_subdivide(s->board) > 1)
        return sv_error(SV_ERR_PARSE, "%s: board: %s has grid.subdivide = %d: a design's pixels are the mesh's cells, "
                        "expected 1", r->file, s->board_file, sv_em_project_subdivide(s->board));
    char why[256];
    FILE *f = sv_input_file_open(s->board_file, why, sizeof why);
    if (!f) return sv_error(SV_ERR_IO, "%s: board: %s: %s", r->file, s->board_file, why);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = len >= 0 ? malloc((size_t)len + 1) : NULL;
    size_t got = text ? fread(text, 1, (size_t)len, f) : 0;
    fclose(f);
    if (!text || got != (size_t)len) {
        free(text);
        return sv_error(SV_ERR_IO, "%s: board: %s: could not be read again", r->file, s->board_file);
    }
    text[len] = '\0';
    s->board_json = cJSON_Parse(text);
    free(text);
    if (!s->board_json) return sv_error(SV_ERR_PARSE, "%s: board: %s: not JSON", r->file, s->board_file);
    sv_em_grid g;
    sv_em_project_grid(s->board, &g);
    s->nx = g.nx;
    s->ny = g.ny;
    size_t n = (size_t)g.nx * g.ny;
    if (!(s->region = calloc(n, 1)) || !(s->start = calloc(n, 1))) return sv_error(SV_ERR_NOMEM, "design: out of memory");
    return SV_OK;
}

/* The frequency unit of the masks and the frequency list. */
static sv_status read_unit(const spec_reader *r, const cJSON *v, double *unit)
{
    static const char *const names[] = {"Hz", "kHz", "MHz", "GHz"};
    static const double scale[] = {1, 1e3, 1e6, 1e9};
    *unit = 1e9;
    if (!v) return SV_OK;
    for (int k = 0; k < 4; k++)
        if (cJSON_IsString(v) && !strcmp(v->valuestring, names[k])) {
            *unit = scale[k];
            return SV_OK;
        }
    return spec_bad(r, "unit", v, "expected \"Hz\", \"kHz\", \"MHz\" or \"GHz\" (default)");
}

static sv_status read_search(const spec_reader *r, const cJSON *root, sv_design_spec *s)
{
    sv_status st;
    const cJSON *v;
    s->passes = 3;
    s->seed = 1;
    s->refresh_every = 64;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "passes")) && (st = spec_int(r, v, "passes", 1, 1000, &s->passes))) return st;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "time_budget")) &&
        (st = spec_number(r, v, "time_budget", 0, 1e9, &s->budget_s)))
        return st;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "threads")) && (st = spec_int(r, v, "threads", 0, 4096, &s->threads))) return st;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "refresh_every")) &&
        (st = spec_int(r, v, "refresh_every", 1, 1000000, &s->refresh_every)))
        return st;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "seed"))) {
        int seed;
        if ((st = spec_int(r, v, "seed", 0, 2147483647, &seed))) return st;
        s->seed = (unsigned long long)seed;
    }
    return SV_OK;
}

static sv_status read_tree(const spec_reader *r, const cJSON *root, sv_design_spec *s)
{
    static const char *const keys[] = {"title", "board", "region", "symmetry", "unit", "masks", "constraints", "start",
                                       "frequencies", "passes", "time_budget", "threads", "seed", "refresh_every", NULL};
    if (!cJSON_IsObject(root)) return spec_bad(r, "(top level)", root, "expected a JSON object");
    sv_status st = spec_keys(r, root, "", keys);
    if (st) return st;
    double unit;
#define FIELD(name) cJSON_GetObjectItemCaseSensitive(root, name)
    if (!FIELD("board")) return spec_bad(r, "board", NULL, "missing: expected the board's project file");
    if (!FIELD("region")) return spec_bad(r, "region", NULL, "missing: expected the pixels that may flip");
    if (!FIELD("masks")) return spec_bad(r, "masks", NULL, "missing: expected at least one mask");
    if ((st = read_board(r, FIELD("board"), s)) || (st = spec_read_region(r, FIELD("region"), s)) ||
        (st = spec_read_symmetry(r, FIELD("symmetry"), s)) || (st = read_unit(r, FIELD("unit"), &unit)) ||
        (st = spec_read_masks(r, FIELD("masks"), unit, s)) || (st = spec_read_constraints(r, FIELD("constraints"), s)) ||
        (st = spec_read_start(r, FIELD("start"), s)) || (st = spec_read_frequencies(r, FIELD("frequencies"), unit, s)) ||
        (st = read_search(r, root, s)))
        return st;
#undef FIELD
    /* the full model's board: every design pixel metal */
    unsigned char *full = malloc((size_t)s->nx * s->ny);
    if (!full) return sv_error(SV_ERR_NOMEM, "design: out of memory");
    for (int c = 0; c < s->nx * s->ny; c++) full[c] = 1;
    sv_design_compose(s, full, full);
    st = sv_design_board_with(s->ctx, s, full, &s->full);
    free(full);
    return st ? st : sv_design_port_cells(s);
}

sv_status sv_design_spec_parse(sv_ctx *ctx, const char *text, size_t len, const char *name, const char *dir,
                               sv_design_spec **out)
{
    if (!text || !out) return sv_error(SV_ERR_ARG, "sv_design_spec_parse: NULL argument");
    *out = NULL;
    sv_design_spec *s = calloc(1, sizeof *s);
    if (!s) return sv_error(SV_ERR_NOMEM, "design spec: out of memory");
    s->ctx = ctx;
    s->name = strdup(name ? name : "design spec");
    spec_reader r = {s->name ? s->name : "design spec", dir};
    cJSON *root = cJSON_ParseWithLength(text, len);
    sv_status st;
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        st = sv_error(SV_ERR_PARSE, "%s: not valid JSON near byte %ld", r.file, at ? (long)(at - text) : 0L);
    } else
        st = read_tree(&r, root, s);
    cJSON_Delete(root);
    if (st) {
        sv_design_spec_destroy(s);
        return st;
    }
    *out = s;
    return SV_OK;
}

sv_status sv_design_spec_read(sv_ctx *ctx, const char *path, sv_design_spec **out)
{
    if (!path || !out) return sv_error(SV_ERR_ARG, "sv_design_spec_read: NULL argument");
    char why[256];
    FILE *f = sv_input_file_open(path, why, sizeof why);
    if (!f) return sv_error(SV_ERR_IO, "%s: %s", path, why);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = len >= 0 ? malloc((size_t)len + 1) : NULL;
    size_t got = text ? fread(text, 1, (size_t)len, f) : 0;
    fclose(f);
    if (!text || got != (size_t)len) {
        free(text);
        return sv_error(SV_ERR_IO, "%s: could not be read", path);
    }
    char *dir = strdup(path), *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash) *slash = '\0';
    sv_status st = sv_design_spec_parse(ctx, text, (size_t)len, path, slash ? dir : NULL, out);
    free(dir);
    free(text);
    return st;
}

sv_status sv_design_spec_set_threads(sv_design_spec *s, int threads)
{
    if (!s || threads < 0 || threads > 4096)
        return sv_error(SV_ERR_ARG, "sv_design_spec_set_threads: %d threads: expected 0 to 4096", threads);
    if (threads > 0) s->threads = threads;
    return SV_OK;
}

void sv_design_spec_destroy(sv_design_spec *s)
{
    if (!s) return;
    sv_em_project_destroy(s->board);
    sv_em_project_destroy(s->full);
    cJSON_Delete(s->board_json);
    free(s->name);
    free(s->board_file);
    free(s->region);
    free(s->start);
    free(s->masks);
    free(s->dc);
    free(s->freq);
    free(s->port_cells);
    free(s->port_cell_off);
    free(s);
}

const sv_em_project *sv_design_spec_board(const sv_design_spec *s) { return s ? s->board : NULL; }
const sv_em_project *sv_design_spec_full(const sv_design_spec *s) { return s ? s->full : NULL; }
const char *sv_design_spec_board_file(const sv_design_spec *s) { return s ? s->board_file : NULL; }
const unsigned char *sv_design_spec_region(const sv_design_spec *s) { return s ? s->region : NULL; }
sv_design_symmetry sv_design_spec_symmetry(const sv_design_spec *s) { return s ? s->sym : SV_DESIGN_SYM_NONE; }
const sv_design_mask *sv_design_spec_masks(const sv_design_spec *s, int *n)
{
    if (n) *n = s ? s->nmasks : 0;
    return s ? s->masks : NULL;
}
const double *sv_design_spec_frequencies(const sv_design_spec *s, int *nf)
{
    if (nf) *nf = s ? s->nf : 0;
    return s ? s->freq : NULL;
}
int sv_design_spec_passes(const sv_design_spec *s) { return s ? s->passes : 0; }
double sv_design_spec_time_budget(const sv_design_spec *s) { return s ? s->budget_s : 0; }
int sv_design_spec_threads(const sv_design_spec *s) { return s ? s->threads : 0; }
const unsigned char *sv_design_spec_start(const sv_design_spec *s) { return s ? s->start : NULL; }
