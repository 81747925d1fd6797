/* The spec reader's helpers (spec_json.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec_json.h"

static void show(const cJSON *v, char *buf, size_t n)
{
    char *t = cJSON_PrintUnformatted(v);
    if (!t) {
        snprintf(buf, n, "?");
        return;
    }
    if (strlen(t) >= n && n > 4) {
        memcpy(buf, t, n - 4);
        strcpy(buf + n - 4, "...");
    } else
        snprintf(buf, n, "%s", t);
    free(t);
}

sv_status spec_bad(const spec_reader *r, const char *field, const cJSON *v, const char *expected)
{
    if (!v) return sv_error(SV_ERR_PARSE, "%s: %s: %s", r->file, field, expected);
    char b[80];
    show(v, b, sizeof b);
    return sv_error(SV_ERR_PARSE, "%s: %s = %s: %s", r->file, field, b, expected);
}

sv_status spec_keys(const spec_reader *r, const cJSON *obj, const char *where, const char *const *allowed)
{
    for (const cJSON *c = obj->child; c; c = c->next) {
        int ok = 0;
        for (const char *const *a = allowed; *a; a++) ok |= !strcmp(c->string, *a);
        char field[160], list[320] = "";
        snprintf(field, sizeof field, "%s%s%s", where, *where ? "." : "", c->string);
        if (!ok) {
            for (const char *const *a = allowed; *a; a++) {
                strncat(list, *a, sizeof list - strlen(list) - 1);
                if (a[1]) strncat(list, ", ", sizeof list - strlen(list) - 1);
            }
            return sv_error(SV_ERR_PARSE, "%s: %s: unknown field (expected one of: %s)", r->file, field, list);
        }
        for (const cJSON *d = c->next; d; d = d->next)
            if (!strcmp(c->string, d->string))
                return sv_error(SV_ERR_PARSE, "%s: %s: field given twice", r->file, field);
    }
    return SV_OK;
}

sv_status spec_number(const spec_reader *r, const cJSON *v, const char *field, double lo, double hi, double *out)
{
    char exp[96];
    snprintf(exp, sizeof exp, "expected a number in [%g, %g]", lo, hi);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi)
        return spec_bad(r, field, v, exp);
    *out = v->valuedouble;
    return SV_OK;
}

sv_status spec_int(const spec_reader *r, const cJSON *v, const char *field, int lo, int hi, int *out)
{
    char exp[96];
    snprintf(exp, sizeof exp, "expected an integer in [%d, %d]", lo, hi);
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi)
        return spec_bad(r, field, v, exp);
    *out = (int)v->valuedouble;
    return SV_OK;
}

sv_status spec_path(const spec_reader *r, const cJSON *v, const char *field, char **out)
{
    if (!cJSON_IsString(v) || !*v->valuestring) return spec_bad(r, field, v, "expected a file path");
    const char *p = v->valuestring;
    int rel = p[0] != '/' && r->dir && *r->dir;
    size_t n = strlen(p) + (rel ? strlen(r->dir) + 2 : 1);
    char *s = malloc(n);
    if (!s) return sv_error(SV_ERR_NOMEM, "%s: %s: out of memory", r->file, field);
    if (rel)
        snprintf(s, n, "%s/%s", r->dir, p);
    else
        snprintf(s, n, "%s", p);
    *out = s;
    return SV_OK;
}

/* One CSV line of nx 0/1 values into cells. */
static sv_status csv_row(const char *line, const char *path, const char *field, int row, int nx, unsigned char *cells)
{
    int col = 0;
    const char *q = line;
    for (;;) {
        while (*q == ' ' || *q == '\t') q++;
        if (*q != '0' && *q != '1')
            return sv_error(SV_ERR_PARSE, "%s (%s): row %d, column %d: expected 0 (empty) or 1 (metal)", path, field,
                            row + 1, col + 1);
        if (col >= nx)
            return sv_error(SV_ERR_PARSE, "%s (%s): row %d has more than %d values: expected the board's %d columns",
                            path, field, row + 1, nx, nx);
        cells[col++] = (unsigned char)(*q++ == '1');
        while (*q == ' ' || *q == '\t') q++;
        if (*q == ',') {
            q++;
            continue;
        }
        if (*q == '\0' || *q == '\n' || *q == '\r') break;
        return sv_error(SV_ERR_PARSE, "%s (%s): row %d, column %d: expected ',' between values", path, field, row + 1,
                        col);
    }
    if (col != nx)
        return sv_error(SV_ERR_PARSE, "%s (%s): row %d has %d values: expected the board's %d columns", path, field,
                        row + 1, col, nx);
    return SV_OK;
}

sv_status spec_csv_map(const char *path, const char *field, int nx, int ny, unsigned char *map)
{
    char why[256];
    FILE *f = sv_input_file_open(path, why, sizeof why);
    if (!f) return sv_error(SV_ERR_IO, "%s: %s: %s", field, path, why);
    size_t cap = (size_t)nx * 4 + 64;
    char *line = malloc(cap);
    if (!line) {
        fclose(f);
        return sv_error(SV_ERR_NOMEM, "%s: out of memory", field);
    }
    sv_status s = SV_OK;
    int row = 0;
    while (!s && fgets(line, (int)cap, f)) {
        size_t l = strlen(line);
        if (l == cap - 1 && line[l - 1] != '\n') {
            s = sv_error(SV_ERR_PARSE, "%s (%s): row %d is too long for %d columns", path, field, row + 1, nx);
            break;
        }
        const char *t = line;
        while (*t == ' ' || *t == '\t' || *t == '\r' || *t == '\n') t++;
        if (!*t) continue; /* blank line */
        if (row >= ny) {
            s = sv_error(SV_ERR_PARSE, "%s (%s): more than %d rows: expected the board's %d rows", path, field, ny, ny);
            break;
        }
        s = csv_row(line, path, field, row, nx, map + (size_t)nx * (ny - 1 - row)); /* first line = top row */
        row++;
    }
    if (!s && row != ny)
        s = sv_error(SV_ERR_PARSE, "%s (%s): %d rows: expected the board's %d rows", path, field, row, ny);
    free(line);
    fclose(f);
    return s;
}
