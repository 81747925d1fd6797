/* Touchstone 1.1 and 2.0 writer (atomic: temporary file + rename) and a
 * reader for tests. Formats RI, MA (magnitude, degrees) and DB (20·log10,
 * degrees); S, Y or Z parameters. Version 1.1 stores Y and Z normalised to
 * the reference resistance; 2.0 stores them in siemens and ohms. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "em_internal.h"

static const char *const fmt_name[] = {"RI", "MA", "DB"};
static const char *const par_name[] = {"S", "Y", "Z"};

static double unit_scale(const char *u)
{
    if (!strcasecmp(u, "Hz")) return 1;
    if (!strcasecmp(u, "kHz")) return 1e3;
    if (!strcasecmp(u, "MHz")) return 1e6;
    if (!strcasecmp(u, "GHz")) return 1e9;
    return 0;
}

static void put_pair(FILE *f, sv_em_ts_format fm, double complex v)
{
    switch (fm) {
    case SV_EM_TS_RI: fprintf(f, " %.15e %.15e", creal(v), cimag(v)); break;
    case SV_EM_TS_MA: fprintf(f, " %.15e %.15e", cabs(v), carg(v) * 180 / SV_EM_PI); break;
    default: fprintf(f, " %.15e %.15e", 20 * log10(cabs(v)), carg(v) * 180 / SV_EM_PI); break;
    }
}

void sv_em_ts_options_default(sv_em_ts_options *opts)
{
    if (opts) *opts = (sv_em_ts_options){.version = 1, .format = SV_EM_TS_RI, .param = SV_EM_TS_S, .unit = "GHz"};
}

/* The options with defaults filled in, checked with the data they describe. */
static sv_status check_write(const sv_em_ts_options *opts, int p, int nf, const double *freq_hz,
                             const double complex *data, const double *z0, sv_em_ts_options *o)
{
    sv_em_ts_options_default(o);
    if (opts) {
        *o = *opts;
        if (o->version == 0) o->version = 1;
        if (!o->unit) o->unit = "GHz";
    }
    if (p < 1 || p > 9999) return sv_error(SV_ERR_ARG, "sv_em_touchstone_write: ports = %d: expected 1..9999", p);
    if (o->version == SV_EM_TS_VERSION_FOR_Z0) {
        o->version = 1;
        for (int k = 1; k < p; k++)
            if (z0[k] != z0[0]) o->version = 2;
    }
    if (nf < 1) return sv_error(SV_ERR_ARG, "sv_em_touchstone_write: frequencies = %d: expected >= 1", nf);
    if (o->version != 1 && o->version != 2)
        return sv_error(SV_ERR_ARG, "sv_em_touchstone_write: version = %d: expected 1 or 2", o->version);
    if ((unsigned)o->format > 2 || (unsigned)o->param > 2)
        return sv_error(SV_ERR_ARG, "sv_em_touchstone_write: unknown format or parameter");
    if (unit_scale(o->unit) == 0)
        return sv_error(SV_ERR_ARG, "sv_em_touchstone_write: unit = '%s': expected Hz, kHz, MHz or GHz", o->unit);
    for (int k = 0; k < p; k++) {
        if (!(z0[k] > 0) || !isfinite(z0[k]))
            return sv_error(SV_ERR_ARG, "sv_em_touchstone_write: z0[%d] = %g: expected > 0", k, z0[k]);
        if (o->version == 1 && z0[k] != z0[0])
            return sv_error(SV_ERR_ARG, "sv_em_touchstone_write: z0[%d] = %g differs from z0[0] = %g: version 1 "
                                        "files have one reference impedance (use version 2)",
                            k, z0[k], z0[0]);
    }
    for (int q = 0; q < nf; q++) {
        if (!isfinite(freq_hz[q]) || freq_hz[q] < 0 || (q > 0 && !(freq_hz[q] > freq_hz[q - 1])))
            return sv_error(SV_ERR_ARG, "sv_em_touchstone_write: frequency %d = %g: expected finite, >= 0, "
                                        "strictly ascending",
                            q, freq_hz[q]);
    }
    for (size_t q = 0; q < (size_t)nf * p * p; q++)
        if (!isfinite(creal(data[q])) || !isfinite(cimag(data[q])))
            return sv_error(SV_ERR_NONFINITE, "sv_em_touchstone_write: data point %zu is not finite", q);
    return SV_OK;
}

/* The comment as ! lines, the option line and (version 2) the keywords. */
static void write_header(FILE *f, const sv_em_ts_options *o, int p, int nf, const double *z0)
{
    for (const char *c = o->comment; c && *c;) {
        const char *e = strchr(c, '\n');
        size_t l = e ? (size_t)(e - c) : strlen(c);
        fputs("! ", f);
        /* other control characters (a carriage return would end the line for
         * some readers) as '?': a comment holds file names users chose */
        for (size_t k = 0; k < l; k++) {
            unsigned char ch = (unsigned char)c[k];
            fputc((ch < 0x20 && ch != '\t') || ch == 0x7f ? '?' : ch, f);
        }
        fputc('\n', f);
        c += l + (e ? 1 : 0);
    }
    if (o->version == 2) fprintf(f, "[Version] 2.0\n");
    fprintf(f, "# %s %s %s R %.15g\n", o->unit, par_name[o->param], fmt_name[o->format], z0[0]);
    if (o->version == 2) {
        fprintf(f, "[Number of Ports] %d\n", p);
        if (p == 2) fprintf(f, "[Two-Port Data Order] 21_12\n");
        fprintf(f, "[Number of Frequencies] %d\n[Reference]", nf);
        for (int k = 0; k < p; k++) fprintf(f, " %.15g", z0[k]);
        fprintf(f, "\n[Network Data]\n");
    }
}

/* One record a frequency: two-ports in 11 21 12 22 order on one line,
 * larger networks row by row, at most four pairs a line. */
static void write_data(FILE *f, const sv_em_ts_options *o, int p, int nf, const double *freq_hz,
                       const double complex *data, const double *z0)
{
    /* version 1 normalises Y and Z by the reference */
    double norm = 1, us = unit_scale(o->unit);
    if (o->version == 1 && o->param == SV_EM_TS_Z) norm = 1 / z0[0];
    if (o->version == 1 && o->param == SV_EM_TS_Y) norm = z0[0];
    for (int q = 0; q < nf; q++) {
        const double complex *d = data + (size_t)q * p * p;
        fprintf(f, "%.15g", freq_hz[q] / us);
        if (p <= 2) {
            for (int k = 0; k < p * p; k++) put_pair(f, o->format, norm * d[k]);
            fputc('\n', f);
            continue;
        }
        for (int r = 0; r < p; r++) {
            for (int c = 0; c < p; c++) {
                if (c > 0 && c % 4 == 0) fputc('\n', f);
                put_pair(f, o->format, norm * d[r + (size_t)p * c]);
            }
            fputc('\n', f);
        }
    }
    if (o->version == 2) fprintf(f, "[End]\n");
}

sv_status sv_em_touchstone_write(const char *path, const sv_em_ts_options *opts, int p, int nf,
                                 const double *freq_hz, const double complex *data, const double *z0)
{
    if (!path || !freq_hz || !data || !z0) return sv_error(SV_ERR_ARG, "sv_em_touchstone_write: NULL argument");
    sv_em_ts_options o;
    sv_status st = check_write(opts, p, nf, freq_hz, data, z0, &o);
    if (st) return st;
    sv_atomic_file *out;
    if ((st = sv_atomic_file_open(path, &out))) return st;
    FILE *f = sv_atomic_file_stream(out);
    write_header(f, &o, p, nf, z0);
    write_data(f, &o, p, nf, freq_hz, data, z0);
    return sv_atomic_file_close(out, 1);
}

/* ---- reader ---- */
/* What a scan of the file found: the option line, the keywords and every
 * number of the data lines in order. */
typedef struct ts_scan {
    double unit, R;          /* frequency unit (Hz), reference resistance of the option line */
    int fmt, par, p, version, order12, optseen;
    double refs[64];         /* [Reference] */
    int nrefs;
    double *nums;            /* malloc'ed */
    size_t nn, cap;
} ts_scan;

static void scan_option_line(ts_scan *t, char *s)
{
    t->optseen = 1;
    char *save = NULL;
    for (char *tok = strtok_r(s, " \t\r\n", &save); tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
        double sc = unit_scale(tok);
        if (sc > 0) t->unit = sc;
        else if (!strcasecmp(tok, "S")) t->par = SV_EM_TS_S;
        else if (!strcasecmp(tok, "Y")) t->par = SV_EM_TS_Y;
        else if (!strcasecmp(tok, "Z")) t->par = SV_EM_TS_Z;
        else if (!strcasecmp(tok, "RI")) t->fmt = SV_EM_TS_RI;
        else if (!strcasecmp(tok, "MA")) t->fmt = SV_EM_TS_MA;
        else if (!strcasecmp(tok, "DB")) t->fmt = SV_EM_TS_DB;
        else if (!strcasecmp(tok, "R")) {
            tok = strtok_r(NULL, " \t\r\n", &save);
            if (!tok) break;
            t->R = atof(tok);
        }
    }
}

static void scan_keyword(ts_scan *t, const char *s)
{
    if (!strncasecmp(s, "[Version]", 9)) t->version = 2;
    else if (!strncasecmp(s, "[Number of Ports]", 17)) t->p = atoi(s + 17);
    else if (!strncasecmp(s, "[Two-Port Data Order]", 21)) t->order12 = strstr(s, "12_21") != NULL;
    else if (!strncasecmp(s, "[Reference]", 11)) {
        const char *e = s + 11;
        for (;;) {
            char *q;
            double v = strtod(e, &q);
            if (q == e || t->nrefs >= 64) break;
            t->refs[t->nrefs++] = v;
            e = q;
        }
    }
}

static sv_status scan_numbers(ts_scan *t, const char *s, const char *path)
{
    for (;;) {
        char *q;
        double v = strtod(s, &q);
        if (q == s) return SV_OK;
        if (t->nn == t->cap) {
            size_t cap = t->cap ? 2 * t->cap : 1024;
            double *nb = realloc(t->nums, cap * sizeof *nb);
            if (!nb) return sv_error(SV_ERR_NOMEM, "%s: no memory", path);
            t->nums = nb;
            t->cap = cap;
        }
        t->nums[t->nn++] = v;
        s = q;
    }
}

/* Read the whole file; t->p starts from the .sNp extension. */
static sv_status scan_file(const char *path, ts_scan *t)
{
    *t = (ts_scan){.unit = 1e9, .R = 50, .version = 1};
    const char *dot = strrchr(path, '.');
    if (dot && tolower((unsigned char)dot[1]) == 's') t->p = atoi(dot + 2);
    FILE *f = fopen(path, "r");
    if (!f) return sv_error(SV_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    char line[4096];
    sv_status st = SV_OK;
    while (!st && fgets(line, sizeof line, f)) {
        char *bang = strchr(line, '!');
        if (bang) *bang = 0;
        char *s = line;
        while (isspace((unsigned char)*s)) s++;
        if (*s == '#') scan_option_line(t, s + 1);
        else if (*s == '[') scan_keyword(t, s);
        else if (*s) st = scan_numbers(t, s, path);
    }
    if (!st && ferror(f)) st = sv_error(SV_ERR_IO, "%s: read error", path);
    fclose(f);
    if (!st && (!t->optseen || t->p < 1))
        st = sv_error(SV_ERR_PARSE, "%s: no option line or unknown number of ports", path);
    return st;
}

/* Entry k of a record (p × p values in file order) as (row, col). */
static void record_position(int p, int order12, int k, int *row, int *col)
{
    if (p > 2 || (p == 2 && order12)) { /* row by row */
        *row = k / p;
        *col = k % p;
    } else { /* 11 21 12 22 */
        *row = k % p;
        *col = k / p;
    }
}

static double complex decode_pair(int fmt, double a, double b)
{
    if (fmt == SV_EM_TS_RI) return a + I * b;
    double mag = fmt == SV_EM_TS_MA ? a : pow(10, a / 20);
    return mag * cexp(I * b * SV_EM_PI / 180);
}

/* The scanned numbers as records: frequency, then p × p pairs. */
static sv_status decode_records(const ts_scan *t, const char *path, sv_em_touchstone *out)
{
    int p = t->p;
    size_t rec = 1 + 2 * (size_t)p * p;
    if (t->nn % rec != 0 || t->nn == 0)
        return sv_error(SV_ERR_PARSE, "%s: %zu numbers: not a whole number of %zu-number records", path, t->nn, rec);
    int nf = (int)(t->nn / rec);
    out->p = p;
    out->nf = nf;
    out->version = t->version;
    out->param = (sv_em_ts_param)t->par;
    /* one block: the data (complex, first for its alignment), frequencies, references */
    size_t nd = (size_t)nf * p * p;
    out->data = sv_alloc(out->ctx, sizeof(double complex) * nd + sizeof(double) * ((size_t)nf + p), "Touchstone data");
    if (!out->data) return sv_last_status();
    out->freq_hz = (double *)(out->data + nd);
    out->z0 = out->freq_hz + nf;
    /* version 1 stores Y and Z normalised by the reference */
    double norm = 1;
    if (t->version == 1 && t->par == SV_EM_TS_Z) norm = t->R;
    if (t->version == 1 && t->par == SV_EM_TS_Y) norm = 1 / t->R;
    for (int q = 0; q < nf; q++) {
        const double *r = t->nums + rec * q;
        out->freq_hz[q] = r[0] * t->unit;
        for (int k = 0; k < p * p; k++) {
            int row, col;
            record_position(p, t->order12, k, &row, &col);
            out->data[(size_t)q * p * p + row + (size_t)p * col] = norm * decode_pair(t->fmt, r[1 + 2 * k], r[2 + 2 * k]);
        }
    }
    for (int k = 0; k < p; k++) out->z0[k] = k < t->nrefs ? t->refs[k] : t->R;
    return SV_OK;
}

sv_status sv_em_touchstone_read(sv_ctx *ctx, const char *path, sv_em_touchstone **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_em_touchstone_read: out is NULL");
    *out = NULL;
    if (!path) return sv_error(SV_ERR_ARG, "sv_em_touchstone_read: path is NULL");
    ts_scan t;
    sv_status st = scan_file(path, &t);
    sv_em_touchstone *ts = NULL;
    if (!st) {
        ts = sv_calloc(ctx, 1, sizeof *ts, "Touchstone file");
        if (!ts) st = sv_last_status();
    }
    if (!st) {
        ts->ctx = ctx;
        st = decode_records(&t, path, ts);
    }
    free(t.nums);
    if (st)
        sv_em_touchstone_destroy(ts);
    else
        *out = ts;
    return st;
}

void sv_em_touchstone_destroy(sv_em_touchstone *t)
{
    if (!t) return;
    sv_free(t->ctx, t->data); /* freq_hz and z0 live in the same block */
    sv_free(t->ctx, t);
}
