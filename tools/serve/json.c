/* Answers in JSON: errors as {"error": message}, S as dB, phase and the
 * complex values, maps as strings of 0 and 1. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

void serve_reply_bytes(serve_reply *rp, int status, const char *type, char *data, size_t len)
{
    free(rp->body);
    rp->status = status;
    rp->type = type;
    rp->body = data;
    rp->len = len;
}

void serve_reply_json(serve_reply *rp, int status, cJSON *doc)
{
    char *text = doc ? cJSON_PrintUnformatted(doc) : NULL;
    cJSON_Delete(doc);
    if (!text) {
        serve_reply_error(rp, 500, "out of memory writing the answer");
        return;
    }
    serve_reply_bytes(rp, status, "application/json", text, strlen(text));
}

void serve_reply_error(serve_reply *rp, int status, const char *fmt, ...)
{
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cJSON *doc = cJSON_CreateObject();
    char *text = NULL;
    if (doc && cJSON_AddStringToObject(doc, "error", msg)) text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    if (!text) text = strdup("{\"error\":\"out of memory\"}");
    serve_reply_bytes(rp, status, "application/json", text, text ? strlen(text) : 0);
}

cJSON *serve_body_object(const serve_request *rq, serve_reply *rp)
{
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts(rq->body, rq->body_len, &end, 0);
    if (!doc) {
        size_t at = end && end >= rq->body ? (size_t)(end - rq->body) : 0;
        serve_reply_error(rp, 400, "request body: not JSON (error near byte %zu of %zu)", at, rq->body_len);
        return NULL;
    }
    if (!cJSON_IsObject(doc)) {
        cJSON_Delete(doc);
        serve_reply_error(rp, 400, "request body: expected a JSON object {...}");
        return NULL;
    }
    return doc;
}

cJSON *serve_json_numbers(const double *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int k = 0; a && k < n; k++) {
        cJSON *x = isfinite(v[k]) ? cJSON_CreateNumber(v[k]) : cJSON_CreateNull();
        if (!x) {
            cJSON_Delete(a);
            return NULL;
        }
        cJSON_AddItemToArray(a, x);
    }
    return a;
}

char *serve_map_string(const unsigned char *map, int n)
{
    char *s = malloc((size_t)n + 1);
    if (!s) return NULL;
    for (int k = 0; k < n; k++) s[k] = map[k] ? '1' : '0';
    s[n] = 0;
    return s;
}

int serve_map_parse(const char *s, int n, unsigned char *map)
{
    if (!s || (int)strlen(s) != n) return -1;
    for (int k = 0; k < n; k++) {
        if (s[k] != '0' && s[k] != '1') return -1;
        map[k] = s[k] == '1';
    }
    return 0;
}

/* One S_rc as four arrays. */
static cJSON *json_entry(int p, int nf, const double complex *s, int r, int c, double *buf)
{
    cJSON *e = cJSON_CreateObject();
    if (!e) return NULL;
    const char *names[] = {"re", "im", "db", "deg"};
    for (int part = 0; part < 4; part++) {
        for (int f = 0; f < nf; f++) {
            double complex v = s[(size_t)f * p * p + r + (size_t)c * p];
            buf[f] = part == 0   ? creal(v)
                     : part == 1 ? cimag(v)
                     : part == 2 ? 20 * log10(fmax(cabs(v), 1e-30))
                                 : carg(v) * (180 / 3.14159265358979323846);
        }
        cJSON *a = serve_json_numbers(buf, nf);
        if (!a) {
            cJSON_Delete(e);
            return NULL;
        }
        cJSON_AddItemToObject(e, names[part], a);
    }
    return e;
}

cJSON *serve_json_s(int p, int nf, const double *freq_hz, const double complex *s, const char *const *names)
{
    cJSON *doc = cJSON_CreateObject(), *ports = cJSON_AddArrayToObject(doc, "ports"),
          *sm = cJSON_AddObjectToObject(doc, "s");
    double *buf = malloc(sizeof(double) * (size_t)(nf > 0 ? nf : 1));
    if (!doc || !ports || !sm || !buf) goto fail;
    for (int k = 0; k < p; k++) {
        char def[16];
        snprintf(def, sizeof def, "%d", k + 1);
        cJSON_AddItemToArray(ports, cJSON_CreateString(names && names[k] ? names[k] : def));
    }
    cJSON_AddItemToObject(doc, "freq_hz", serve_json_numbers(freq_hz, nf));
    for (int r = 0; r < p; r++)
        for (int c = 0; c < p; c++) {
            char key[32];
            snprintf(key, sizeof key, p < 10 ? "S%d%d" : "S%d,%d", r + 1, c + 1);
            cJSON *e = json_entry(p, nf, s, r, c, buf);
            if (!e) goto fail;
            cJSON_AddItemToObject(sm, key, e);
        }
    free(buf);
    return doc;
fail:
    free(buf);
    cJSON_Delete(doc);
    return NULL;
}
