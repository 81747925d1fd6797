/* The parts of a design spec, each read from its field and checked
 * (docs/design.md, "Spec reference"). Rows count as in the dataset's CSV
 * maps: row 0 is the top row; columns from the left. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec_json.h"

/* "columns": [c0, c1] or "rows": [r0, r1], inclusive, within n. */
static sv_status read_span(const spec_reader *r, const cJSON *v, const char *field, int n, int *a, int *b)
{
    char exp[96];
    snprintf(exp, sizeof exp, "expected [first, last] with 0 <= first <= last < %d", n);
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2) return spec_bad(r, field, v, exp);
    const cJSON *x = cJSON_GetArrayItem(v, 0), *y = cJSON_GetArrayItem(v, 1);
    if (!cJSON_IsNumber(x) || !cJSON_IsNumber(y) || x->valuedouble != floor(x->valuedouble) ||
        y->valuedouble != floor(y->valuedouble) || x->valuedouble < 0 || y->valuedouble < x->valuedouble ||
        y->valuedouble >= n)
        return spec_bad(r, field, v, exp);
    *a = (int)x->valuedouble;
    *b = (int)y->valuedouble;
    return SV_OK;
}

static sv_status read_rects(const spec_reader *r, const cJSON *v, sv_design_spec *s)
{
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 1)
        return spec_bad(r, "region.rectangles", v, "expected an array of {\"columns\": [..], \"rows\": [..]}");
    int k = 0;
    for (const cJSON *c = v->child; c; c = c->next, k++) {
        char field[96];
        snprintf(field, sizeof field, "region.rectangles[%d]", k);
        static const char *const keys[] = {"columns", "rows", NULL};
        if (!cJSON_IsObject(c)) return spec_bad(r, field, c, "expected {\"columns\": [c0, c1], \"rows\": [r0, r1]}");
        sv_status st = spec_keys(r, c, field, keys);
        if (st) return st;
        int c0, c1, r0, r1;
        char f2[128];
        snprintf(f2, sizeof f2, "%s.columns", field);
        if ((st = read_span(r, cJSON_GetObjectItemCaseSensitive(c, "columns"), f2, s->nx, &c0, &c1))) return st;
        snprintf(f2, sizeof f2, "%s.rows", field);
        if ((st = read_span(r, cJSON_GetObjectItemCaseSensitive(c, "rows"), f2, s->ny, &r0, &r1))) return st;
        for (int row = r0; row <= r1; row++)
            for (int col = c0; col <= c1; col++) s->region[col + (size_t)s->nx * (s->ny - 1 - row)] = 1;
    }
    return SV_OK;
}

sv_status spec_read_region(const spec_reader *r, const cJSON *v, sv_design_spec *s)
{
    static const char *const keys[] = {"rectangles", "csv", NULL};
    if (!cJSON_IsObject(v))
        return spec_bad(r, "region", v, "expected {\"rectangles\": [...]} or {\"csv\": \"region.csv\"}");
    sv_status st = spec_keys(r, v, "region", keys);
    if (st) return st;
    const cJSON *rects = cJSON_GetObjectItemCaseSensitive(v, "rectangles"), *csv = cJSON_GetObjectItemCaseSensitive(v, "csv");
    if (!!rects == !!csv) return spec_bad(r, "region", v, "expected exactly one of \"rectangles\" and \"csv\"");
    if (rects) {
        if ((st = read_rects(r, rects, s))) return st;
    } else {
        char *path;
        if ((st = spec_path(r, csv, "region.csv", &path))) return st;
        st = spec_csv_map(path, "region.csv", s->nx, s->ny, s->region);
        free(path);
        if (st) return st;
    }
    /* the mirrors' axes: the region's bounding box */
    s->sym_i0 = s->nx, s->sym_i1 = -1, s->sym_j0 = s->ny, s->sym_j1 = -1;
    int n = 0;
    for (int j = 0; j < s->ny; j++)
        for (int i = 0; i < s->nx; i++)
            if (s->region[i + (size_t)s->nx * j]) {
                n++;
                s->sym_i0 = i < s->sym_i0 ? i : s->sym_i0;
                s->sym_i1 = i > s->sym_i1 ? i : s->sym_i1;
                s->sym_j0 = j < s->sym_j0 ? j : s->sym_j0;
                s->sym_j1 = j > s->sym_j1 ? j : s->sym_j1;
            }
    if (n == 0) return spec_bad(r, "region", v, "no pixel may flip: expected at least one");
    return SV_OK;
}

sv_status spec_read_symmetry(const spec_reader *r, const cJSON *v, sv_design_spec *s)
{
    static const char *const names[] = {"none", "x", "y", "xy"};
    s->sym = SV_DESIGN_SYM_NONE;
    if (!v) return SV_OK;
    for (int k = 0; k < 4; k++)
        if (cJSON_IsString(v) && !strcmp(v->valuestring, names[k])) {
            s->sym = (sv_design_symmetry)k;
            /* the region itself must be its own mirror image */
            for (int c = 0; c < s->nx * s->ny; c++) {
                if (!s->region[c]) continue;
                int q[4], m = sv_design_partners(s, c, q);
                for (int t = 0; t < m; t++)
                    if (!s->region[q[t]]) {
                        char msg[200];
                        snprintf(msg, sizeof msg,
                                 "the region is not symmetric: pixel (row %d, column %d) is in it, its mirror image "
                                 "(row %d, column %d) is not",
                                 s->ny - 1 - c / s->nx, c % s->nx, s->ny - 1 - q[t] / s->nx, q[t] % s->nx);
                        return spec_bad(r, "symmetry", v, msg);
                    }
            }
            return SV_OK;
        }
    return spec_bad(r, "symmetry", v, "expected \"none\", \"x\" (left-right mirror), \"y\" (top-bottom) or \"xy\"");
}

/* "S21" → out 1, in 0, checked against the board's ports. */
static sv_status read_sij(const spec_reader *r, const cJSON *v, const char *field, int nports, sv_design_mask *m)
{
    char exp[96];
    snprintf(exp, sizeof exp, "expected \"Sij\" with ports i, j in 1..%d", nports);
    if (!cJSON_IsString(v)) return spec_bad(r, field, v, exp);
    const char *t = v->valuestring;
    if ((t[0] != 'S' && t[0] != 's') || strlen(t) != 3 || t[1] < '1' || t[1] > '9' || t[2] < '1' || t[2] > '9')
        return spec_bad(r, field, v, exp);
    m->out = t[1] - '1';
    m->in = t[2] - '1';
    if (m->out >= nports || m->in >= nports) return spec_bad(r, field, v, exp);
    return SV_OK;
}

sv_status spec_read_masks(const spec_reader *r, const cJSON *v, double unit, sv_design_spec *s)
{
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 1)
        return spec_bad(r, "masks", v, "expected an array of at least one mask {\"s\", \"start\", \"stop\", ...}");
    int n = cJSON_GetArraySize(v), np = sv_em_project_ports(s->board);
    if (!(s->masks = calloc((size_t)n, sizeof *s->masks))) return sv_error(SV_ERR_NOMEM, "%s: masks: out of memory", r->file);
    s->nmasks = n;
    int k = 0;
    for (const cJSON *c = v->child; c; c = c->next, k++) {
        char f[64], g[96];
        snprintf(f, sizeof f, "masks[%d]", k);
        static const char *const keys[] = {"s", "start", "stop", "bound_db", "type", "weight", NULL};
        if (!cJSON_IsObject(c)) return spec_bad(r, f, c, "expected an object {\"s\", \"start\", \"stop\", \"bound_db\", \"type\"}");
        sv_status st = spec_keys(r, c, f, keys);
        if (st) return st;
        sv_design_mask *m = &s->masks[k];
        snprintf(g, sizeof g, "%s.s", f);
        if ((st = read_sij(r, cJSON_GetObjectItemCaseSensitive(c, "s"), g, np, m))) return st;
        double a, b;
        snprintf(g, sizeof g, "%s.start", f);
        if ((st = spec_number(r, cJSON_GetObjectItemCaseSensitive(c, "start"), g, 0, SV_EM_MAX_FREQ_HZ / unit, &a))) return st;
        snprintf(g, sizeof g, "%s.stop", f);
        if ((st = spec_number(r, cJSON_GetObjectItemCaseSensitive(c, "stop"), g, a, SV_EM_MAX_FREQ_HZ / unit, &b))) return st;
        if (b <= 0) return spec_bad(r, g, cJSON_GetObjectItemCaseSensitive(c, "stop"), "expected a frequency above 0");
        m->start_hz = a * unit;
        m->stop_hz = b * unit;
        snprintf(g, sizeof g, "%s.bound_db", f);
        if ((st = spec_number(r, cJSON_GetObjectItemCaseSensitive(c, "bound_db"), g, -400, 100, &m->bound_db))) return st;
        const cJSON *ty = cJSON_GetObjectItemCaseSensitive(c, "type");
        snprintf(g, sizeof g, "%s.type", f);
        if (cJSON_IsString(ty) && !strcmp(ty->valuestring, "max"))
            m->sense = SV_DESIGN_MAX;
        else if (cJSON_IsString(ty) && !strcmp(ty->valuestring, "min"))
            m->sense = SV_DESIGN_MIN;
        else
            return spec_bad(r, g, ty, "expected \"max\" (|S| at most the bound) or \"min\" (at least)");
        m->weight = 1;
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(c, "weight");
        snprintf(g, sizeof g, "%s.weight", f);
        if (w && (st = spec_number(r, w, g, 1e-6, 1e6, &m->weight))) return st;
    }
    return SV_OK;
}

/* A port by 1-based number or by name. */
static sv_status read_port(const spec_reader *r, const cJSON *v, const char *field, const sv_em_project *p, int *out)
{
    int np = sv_em_project_ports(p);
    if (cJSON_IsString(v))
        for (int k = 0; k < np; k++)
            if (!strcmp(v->valuestring, sv_em_project_port_name(p, k))) {
                *out = k;
                return SV_OK;
            }
    if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) && v->valuedouble >= 1 && v->valuedouble <= np) {
        *out = (int)v->valuedouble - 1;
        return SV_OK;
    }
    char exp[96];
    snprintf(exp, sizeof exp, "expected a port of the board: a number 1..%d or its name", np);
    return spec_bad(r, field, v, exp);
}

static sv_status read_dc(const spec_reader *r, const cJSON *v, sv_design_spec *s)
{
    if (!cJSON_IsArray(v)) return spec_bad(r, "constraints.dc", v, "expected an array of {\"ports\": [a, b], \"connected\": true|false}");
    int n = cJSON_GetArraySize(v);
    if (n && !(s->dc = calloc((size_t)n, sizeof *s->dc))) return sv_error(SV_ERR_NOMEM, "%s: out of memory", r->file);
    s->ndc = n;
    int k = 0;
    for (const cJSON *c = v->child; c; c = c->next, k++) {
        char f[64], g[96];
        snprintf(f, sizeof f, "constraints.dc[%d]", k);
        static const char *const keys[] = {"ports", "connected", NULL};
        if (!cJSON_IsObject(c)) return spec_bad(r, f, c, "expected {\"ports\": [a, b], \"connected\": true|false}");
        sv_status st = spec_keys(r, c, f, keys);
        if (st) return st;
        const cJSON *ports = cJSON_GetObjectItemCaseSensitive(c, "ports"), *con = cJSON_GetObjectItemCaseSensitive(c, "connected");
        snprintf(g, sizeof g, "%s.ports", f);
        if (!cJSON_IsArray(ports) || cJSON_GetArraySize(ports) != 2) return spec_bad(r, g, ports, "expected two ports [a, b]");
        if ((st = read_port(r, cJSON_GetArrayItem(ports, 0), g, s->board, &s->dc[k].a))) return st;
        if ((st = read_port(r, cJSON_GetArrayItem(ports, 1), g, s->board, &s->dc[k].b))) return st;
        if (s->dc[k].a == s->dc[k].b) return spec_bad(r, g, ports, "expected two different ports");
        snprintf(g, sizeof g, "%s.connected", f);
        if (!cJSON_IsBool(con)) return spec_bad(r, g, con, "expected true (joined by metal) or false (apart)");
        s->dc[k].required = cJSON_IsTrue(con);
    }
    return SV_OK;
}

sv_status spec_read_constraints(const spec_reader *r, const cJSON *v, sv_design_spec *s)
{
    s->corners_allowed = 0;
    if (!v) return SV_OK;
    static const char *const keys[] = {"dc", "corner_contacts", NULL};
    if (!cJSON_IsObject(v)) return spec_bad(r, "constraints", v, "expected an object {\"dc\": [...], \"corner_contacts\": ...}");
    sv_status st = spec_keys(r, v, "constraints", keys);
    if (st) return st;
    const cJSON *dc = cJSON_GetObjectItemCaseSensitive(v, "dc"), *cc = cJSON_GetObjectItemCaseSensitive(v, "corner_contacts");
    if (dc && (st = read_dc(r, dc, s))) return st;
    if (cc) {
        if (cJSON_IsString(cc) && !strcmp(cc->valuestring, "forbid"))
            s->corners_allowed = 0;
        else if (cJSON_IsString(cc) && !strcmp(cc->valuestring, "allow"))
            s->corners_allowed = 1;
        else
            return spec_bad(r, "constraints.corner_contacts", cc,
                            "expected \"forbid\" (default) or \"allow\" (cells meeting at a corner are not connected)");
    }
    return SV_OK;
}

/* A random start: each mirror class metal with probability `fill`. */
static void random_start(sv_design_spec *s, double fill, unsigned long long seed)
{
    unsigned long long state = seed;
    for (int c = 0; c < s->nx * s->ny; c++) {
        if (!s->region[c]) continue;
        int q[4], m = sv_design_partners(s, c, q), first = 1;
        for (int t = 1; t < m; t++) first &= q[t] > c; /* the class's lowest cell draws for it */
        if (!first) continue;
        double u = (double)(sv_design_rand(&state) >> 11) * 0x1.0p-53;
        for (int t = 0; t < m; t++) s->start[q[t]] = u < fill;
    }
}

static sv_status check_symmetric_start(const spec_reader *r, const sv_design_spec *s)
{
    for (int c = 0; c < s->nx * s->ny; c++) {
        if (!s->region[c]) continue;
        int q[4], m = sv_design_partners(s, c, q);
        for (int t = 1; t < m; t++)
            if (s->start[q[t]] != s->start[c])
                return sv_error(SV_ERR_PARSE,
                                "%s: start.map: pixel (row %d, column %d) and its mirror image (row %d, column %d) "
                                "differ: expected a map with the spec's symmetry",
                                r->file, s->ny - 1 - c / s->nx, c % s->nx, s->ny - 1 - q[t] / s->nx, q[t] % s->nx);
    }
    return SV_OK;
}

sv_status spec_read_start(const spec_reader *r, const cJSON *v, sv_design_spec *s)
{
    size_t n = (size_t)s->nx * s->ny;
    for (size_t c = 0; c < n; c++) s->start[c] = s->region[c] ? 1 : (unsigned char)sv_em_project_metal(s->board, (int)(c % s->nx), (int)(c / s->nx));
    if (!v || (cJSON_IsString(v) && !strcmp(v->valuestring, "metal"))) return SV_OK;
    static const char *const exp = "expected \"metal\", {\"map\": \"start.csv\"} or {\"random\": {\"seed\": N, \"fill\": 0.5}}";
    static const char *const keys[] = {"map", "random", NULL};
    if (!cJSON_IsObject(v) || cJSON_GetArraySize(v) != 1) return spec_bad(r, "start", v, exp);
    sv_status st = spec_keys(r, v, "start", keys);
    if (st) return st;
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(v, "map"), *rnd = cJSON_GetObjectItemCaseSensitive(v, "random");
    if (map) {
        char *path;
        unsigned char *m = malloc(n);
        if (!m) return sv_error(SV_ERR_NOMEM, "%s: start.map: out of memory", r->file);
        if ((st = spec_path(r, map, "start.map", &path))) {
            free(m);
            return st;
        }
        st = spec_csv_map(path, "start.map", s->nx, s->ny, m);
        free(path);
        for (size_t c = 0; !st && c < n; c++)
            if (s->region[c]) s->start[c] = m[c];
        free(m);
        return st ? st : check_symmetric_start(r, s);
    }
    static const char *const rkeys[] = {"seed", "fill", NULL};
    if (!cJSON_IsObject(rnd)) return spec_bad(r, "start.random", rnd, "expected {\"seed\": N, \"fill\": 0.5}");
    if ((st = spec_keys(r, rnd, "start.random", rkeys))) return st;
    double seed = 1, fill = 0.5;
    const cJSON *sd = cJSON_GetObjectItemCaseSensitive(rnd, "seed"), *fl = cJSON_GetObjectItemCaseSensitive(rnd, "fill");
    if (sd && ((st = spec_number(r, sd, "start.random.seed", 0, 9007199254740992.0, &seed)) || seed != floor(seed)))
        return st ? st : spec_bad(r, "start.random.seed", sd, "expected a whole number");
    if (fl && (st = spec_number(r, fl, "start.random.fill", 0, 1, &fill))) return st;
    random_start(s, fill, (unsigned long long)seed);
    return SV_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* By default the masks' bands share `points` frequencies in proportion to
 * their widths, at least two each (one for a band of one frequency),
 * evenly spaced over each band with its ends; the union, sorted, with
 * repeats removed. */
static sv_status default_frequencies(const spec_reader *r, sv_design_spec *s, int points)
{
    double total = 0;
    for (int k = 0; k < s->nmasks; k++) total += s->masks[k].stop_hz - s->masks[k].start_hz;
    int *per = malloc(sizeof(int) * (size_t)s->nmasks), sum = 0;
    if (!per) return sv_error(SV_ERR_NOMEM, "%s: out of memory", r->file);
    for (int k = 0; k < s->nmasks; k++) {
        double w = s->masks[k].stop_hz - s->masks[k].start_hz;
        per[k] = w == 0 ? 1 : (int)fmax(2, round(points * (total > 0 ? w / total : 1.0 / s->nmasks)));
        sum += per[k];
    }
    double *f = malloc(sizeof(double) * (size_t)sum);
    if (!f) {
        free(per);
        return sv_error(SV_ERR_NOMEM, "%s: out of memory", r->file);
    }
    int n = 0;
    for (int k = 0; k < s->nmasks; k++)
        for (int t = 0; t < per[k]; t++)
            f[n++] = per[k] == 1 ? s->masks[k].start_hz
                                 : s->masks[k].start_hz + (s->masks[k].stop_hz - s->masks[k].start_hz) * t / (per[k] - 1);
    free(per);
    qsort(f, (size_t)n, sizeof *f, cmp_double);
    int m = 0;
    for (int t = 0; t < n; t++)
        if (m == 0 || f[t] > f[m - 1] * (1 + 1e-12)) f[m++] = f[t];
    s->freq = f;
    s->nf = m;
    return SV_OK;
}

sv_status spec_read_frequencies(const spec_reader *r, const cJSON *v, double unit, sv_design_spec *s)
{
    int points = 21;
    if (!v) return default_frequencies(r, s, points);
    static const char *const keys[] = {"points", "list", NULL};
    if (!cJSON_IsObject(v)) return spec_bad(r, "frequencies", v, "expected {\"points\": N} or {\"list\": [f1, f2, ...]}");
    sv_status st = spec_keys(r, v, "frequencies", keys);
    if (st) return st;
    const cJSON *pt = cJSON_GetObjectItemCaseSensitive(v, "points"), *ls = cJSON_GetObjectItemCaseSensitive(v, "list");
    if (!!pt == !!ls) return spec_bad(r, "frequencies", v, "expected exactly one of \"points\" and \"list\"");
    if (pt) {
        if ((st = spec_int(r, pt, "frequencies.points", 1, 100000, &points))) return st;
        return default_frequencies(r, s, points);
    }
    int n = cJSON_IsArray(ls) ? cJSON_GetArraySize(ls) : 0;
    if (n < 1) return spec_bad(r, "frequencies.list", ls, "expected an array of frequencies, ascending, above 0");
    if (!(s->freq = malloc(sizeof(double) * (size_t)n))) return sv_error(SV_ERR_NOMEM, "%s: out of memory", r->file);
    int k = 0;
    for (const cJSON *c = ls->child; c; c = c->next, k++) {
        char g[64];
        double x;
        snprintf(g, sizeof g, "frequencies.list[%d]", k);
        if ((st = spec_number(r, c, g, 0, SV_EM_MAX_FREQ_HZ / unit, &x))) return st;
        s->freq[k] = x * unit;
        if (s->freq[k] < SV_EM_MIN_FREQ_HZ || (k > 0 && s->freq[k] <= s->freq[k - 1]))
            return spec_bad(r, g, c, "expected frequencies above 0, ascending and distinct");
    }
    s->nf = n;
    return SV_OK;
}
