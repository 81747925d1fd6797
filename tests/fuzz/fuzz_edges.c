/* The fuzz campaign's edge inputs (fuzz_edges.h). */
#include "fuzz_edges.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *pick_text(fz_rng *r, const char *const *list, size_t n) { return list[fz_below(r, (unsigned)n)]; }

/* ---- frequencies ----------------------------------------------------------- */

static const char *const freqs[] = {
    "0",        "0Hz",      "1e-320",  "5e-324",  "4.9e-324", "1e-300",   "1e-400",   "2.2250738585072014e-308",
    "1",        "1e-6",     "1e3",     "1e9",     "2.5GHz",   "1e14",     "5e14",     "1e15",
    "1.0000001e15", "1e16", "1THz",    "1e308",   "1e309",    "0x10",     "0x1p3",    "inf",
    "-inf",     "nan",      "NaN",     "infinity", "-1",      "-0",       " 1e9",     "1e9 ",
    "1e9Hz",    "1e9 GHz",  "1e",      ".",       "+1e9",     "1e9x",     "",         "1,5"};

const char *fz_edge_freq(fz_rng *r) { return pick_text(r, freqs, COUNT(freqs)); }

void fz_edge_freq_list(fz_rng *r, char *out, size_t cap)
{
    out[0] = 0;
    for (unsigned k = 0, n = 1 + fz_below(r, 3); k < n; k++) {
        size_t used = strlen(out);
        snprintf(out + used, cap - used, "%s%s", k ? "," : "", fz_edge_freq(r));
    }
}

/* ---- projects -------------------------------------------------------------- */

static double number_in(const cJSON *obj, const char *key, double otherwise)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) ? v->valuedouble : otherwise;
}

static void set_member(cJSON *obj, const char *key, cJSON *v)
{
    if (!cJSON_IsObject(obj)) {
        cJSON_Delete(v);
        return;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    cJSON_AddItemToObject(obj, key, v);
}

/* Each port's plane moved by a share of the grid's width: halves meet on a
 * line across the grid, more than half cross, one or more leave it. */
static const char *move_planes(fz_rng *r, cJSON *root)
{
    static const double share[] = {0.25, 0.4999999, 0.5, 0.5000001, 0.6, 1, 1.0000001, -1, -0.5, 0, 1e-9, 2};
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(root, "grid");
    double width = number_in(g, "nx", 10) * number_in(g, "dx", 1);
    cJSON *ports = cJSON_GetObjectItemCaseSensitive(root, "ports");
    for (cJSON *p = cJSON_IsArray(ports) ? ports->child : NULL; p; p = p->next) {
        if (!cJSON_IsObject(p) || fz_below(r, 4) == 0) continue;
        if (fz_below(r, 3)) cJSON_DeleteItemFromObjectCaseSensitive(p, "calibration");
        set_member(p, "reference_plane", cJSON_CreateNumber(share[fz_below(r, COUNT(share))] * width));
    }
    return "reference planes moved";
}

/* The effects in a random combination, and now and then the loss tangent
 * or the metal's thickness they act on changed. */
static const char *combine_effects(fz_rng *r, cJSON *root)
{
    static const char *const names[] = {"thick_metal", "dielectric_loss", "radiation", "edge_profile",
                                        "edge_cells",  "dispersion",      "dispersion_far_field"};
    cJSON *e = cJSON_CreateObject();
    for (size_t k = 0; k < COUNT(names); k++) {
        unsigned v = fz_below(r, 3);
        if (v == 2) continue;
        if (k == 1 && fz_below(r, 4) == 0) cJSON_AddItemToObject(e, names[k], cJSON_CreateString("exact"));
        else cJSON_AddItemToObject(e, names[k], cJSON_CreateBool(v));
    }
    set_member(root, "effects", e);
    cJSON *sub = cJSON_GetObjectItemCaseSensitive(root, "substrate"), *met = cJSON_GetObjectItemCaseSensitive(root, "metal");
    unsigned what = fz_below(r, 4);
    if (what == 0) {
        static const double tand[] = {0, 0.02, 1, 5e-324};
        set_member(sub, "tan_delta", cJSON_CreateNumber(tand[fz_below(r, COUNT(tand))]));
    } else if (what == 1 && cJSON_IsObject(met) && cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(met, "thickness"))) {
        static const double times_h[] = {0.5, 1.99, 2, 2.01, 625};
        double h = number_in(sub, "thickness", 1);
        set_member(met, "thickness", cJSON_CreateNumber(h * times_h[fz_below(r, COUNT(times_h))]));
    }
    return "effects combined";
}

const char *fz_edge_project(fz_rng *r, fz_buf *b)
{
    cJSON *root = cJSON_ParseWithLength(b->data, b->len);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return "no JSON object: unchanged";
    }
    const char *what = fz_below(r, 2) ? move_planes(r, root) : combine_effects(r, root);
    char *s = cJSON_PrintUnformatted(root);
    if (s) fz_buf_set(b, s, strlen(s));
    free(s);
    cJSON_Delete(root);
    return what;
}

/* ---- bytes ----------------------------------------------------------------- */

static void insert(fz_buf *b, size_t at, const char *text, size_t n)
{
    fz_buf rest = {0};
    fz_buf_set(&rest, b->data + at, b->len - at);
    b->len = at;
    fz_buf_append(b, text, n);
    fz_buf_append(b, rest.data, rest.len);
    fz_buf_free(&rest);
}

const char *fz_edge_bytes(fz_rng *r, fz_buf *b)
{
    switch (fz_below(r, 4)) {
    case 0:
        insert(b, 0, "\xef\xbb\xbf", 3);
        return "byte-order mark";
    case 1:
        insert(b, 0, "", 1);
        return "NUL in front";
    case 2: {
        size_t at = b->len ? fz_below(r, (unsigned)b->len) : 0;
        while (at < b->len && b->data[at] != '"') at++; /* into the next string, if any */
        insert(b, at < b->len ? at + 1 : b->len, "", 1);
        return "NUL in a string";
    }
    default:
        insert(b, b->len ? fz_below(r, (unsigned)b->len) : 0, "", 1);
        return "NUL";
    }
}

/* ---- CSV maps -------------------------------------------------------------- */

const char *fz_edge_csv_case(fz_rng *r, fz_buf *project, fz_buf *csv, const char *map)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"units\": \"mm\", \"substrate\": {\"thickness\": 1.6, \"eps_r\": 4.4, \"tan_delta\": 0.02},"
             " \"metal\": {\"conductivity\": 5.8e7, \"thickness\": 0.035},"
             " \"grid\": {\"dx\": 1, \"dy\": 1, \"nx\": 10, \"ny\": 4}, \"pixels\": {\"csv\": \"%s\"},"
             " \"ports\": [{\"name\": \"P1\", \"side\": \"left\", \"x\": 0, \"y\": [1, 3]},"
             " {\"name\": \"P2\", \"side\": \"right\", \"x\": 10, \"y\": [1, 3]}]}",
             map);
    fz_buf_set(project, json, strlen(json));
    const char *eol = fz_below(r, 3) ? "\n" : "\r\n";
    fz_buf_set(csv, "", 0);
    for (int row = 0; row < 4; row++) {
        for (int col = 0; col < 10; col++) fz_buf_append(csv, row == 1 || row == 2 ? "1," : "0,", col < 9 ? 2 : 1);
        fz_buf_append(csv, eol, strlen(eol));
    }
    static const char *const names[] = {"CSV map", "CSV map, byte-order mark", "CSV map, NUL", "CSV map, bad value",
                                        "CSV map, row missing", "CSV map, blank lines"};
    unsigned what = fz_below(r, COUNT(names));
    size_t at = fz_below(r, (unsigned)csv->len);
    if (what == 1) insert(csv, 0, "\xef\xbb\xbf", 3);
    if (what == 2) insert(csv, at, "", 1);
    if (what == 3) {
        static const char bad[] = {'2', 'x', (char)0xef, (char)0xff, 0x1b, ';', '"'};
        csv->data[at] = bad[fz_below(r, sizeof bad)];
    }
    if (what == 4) csv->len = csv->len * 3 / 4, csv->data[csv->len] = 0;
    if (what == 5) insert(csv, 0, "\n  \n\t\n", 5);
    return names[what];
}

/* ---- ODE tolerances -------------------------------------------------------- */

static const char *const tolerances[] = {"1e300", "1e-300", "0",     "-1",    "0x10",  "inf",   "nan",   "1e-320",
                                         "5e-324", "0.1",   "0.1000001", "0.11", "1",   "1e6",   "1e6000", "2e6",
                                         "1e-3",  "1e-6",   "1e-8",  "1e-15", "",      "1e",    " 1e-6", "1e-6x"};

const char *fz_edge_ode(fz_rng *r, const char **argv)
{
    static const char *const problems[] = {"rober", "lorenz", "vdpol", "hires"};
    int k = 0;
    if (fz_below(r, 4)) argv[k++] = "--rtol", argv[k++] = pick_text(r, tolerances, COUNT(tolerances));
    if (fz_below(r, 4)) argv[k++] = "--atol", argv[k++] = pick_text(r, tolerances, COUNT(tolerances));
    switch (fz_below(r, 8)) {
    case 0: argv[k++] = "--arg", argv[k++] = fz_below(r, 2) ? "5" : "0x10"; break;
    case 1: argv[k++] = "--sens", argv[k++] = fz_below(r, 2) ? "" : ","; break;
    case 2: argv[k++] = "--lanes", argv[k++] = fz_below(r, 2) ? "3" : "0"; break;
    case 3: argv[k++] = "--rtol", argv[k++] = "1e-4"; break; /* given twice when an rtol came first */
    default: break;
    }
    argv[k] = NULL;
    return pick_text(r, problems, COUNT(problems));
}
