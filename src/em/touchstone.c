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

sv_status sv_em_touchstone_write(const char *path, const sv_em_ts_options *opts, int p, int nf,
                                 const double *freq_hz, const double complex *data, const double *z0)
{
    sv_em_ts_options o = {1, SV_EM_TS_RI, SV_EM_TS_S, "GHz", NULL};
    if (opts) {
        o = *opts;
        if (o.version == 0) o.version = 1;
        if (!o.unit) o.unit = "GHz";
    }
    if (!path || !freq_hz || !data || !z0) return sv_error(SV_ERR_ARG, "sv_em_touchstone_write: NULL argument");
    if (p < 1 || p > 9999) return sv_error(SV_ERR_ARG, "sv_em_touchstone_write: ports = %d: expected 1..9999", p);
    if (nf < 1) return sv_error(SV_ERR_ARG, "sv_em_touchstone_write: frequencies = %d: expected >= 1", nf);
    if (o.version != 1 && o.version != 2)
        return sv_error(SV_ERR_ARG, "sv_em_touchstone_write: version = %d: expected 1 or 2", o.version);
    if ((unsigned)o.format > 2 || (unsigned)o.param > 2)
        return sv_error(SV_ERR_ARG, "sv_em_touchstone_write: unknown format or parameter");
    double us = unit_scale(o.unit);
    if (us == 0)
        return sv_error(SV_ERR_ARG, "sv_em_touchstone_write: unit = '%s': expected Hz, kHz, MHz or GHz", o.unit);
    for (int k = 0; k < p; k++) {
        if (!(z0[k] > 0) || !isfinite(z0[k]))
            return sv_error(SV_ERR_ARG, "sv_em_touchstone_write: z0[%d] = %g: expected > 0", k, z0[k]);
        if (o.version == 1 && z0[k] != z0[0])
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

    sv_atomic_file *out;
    sv_status st = sv_atomic_file_open(path, &out);
    if (st != SV_OK) return st;
    FILE *f = sv_atomic_file_stream(out);
    if (o.comment) {
        const char *c = o.comment;
        while (*c) {
            const char *e = strchr(c, '\n');
            size_t l = e ? (size_t)(e - c) : strlen(c);
            fprintf(f, "! %.*s\n", (int)l, c);
            c += l + (e ? 1 : 0);
        }
    }
    /* version 1 normalises Y and Z by the reference */
    double norm = 1;
    if (o.version == 1 && o.param == SV_EM_TS_Z) norm = 1 / z0[0];
    if (o.version == 1 && o.param == SV_EM_TS_Y) norm = z0[0];
    if (o.version == 2) fprintf(f, "[Version] 2.0\n");
    fprintf(f, "# %s %s %s R %.15g\n", o.unit, par_name[o.param], fmt_name[o.format], z0[0]);
    if (o.version == 2) {
        fprintf(f, "[Number of Ports] %d\n", p);
        if (p == 2) fprintf(f, "[Two-Port Data Order] 21_12\n");
        fprintf(f, "[Number of Frequencies] %d\n[Reference]", nf);
        for (int k = 0; k < p; k++) fprintf(f, " %.15g", z0[k]);
        fprintf(f, "\n[Network Data]\n");
    }
    for (int q = 0; q < nf; q++) {
        const double complex *d = data + (size_t)q * p * p;
        fprintf(f, "%.15g", freq_hz[q] / us);
        if (p <= 2) {
            for (int k = 0; k < p * p; k++) put_pair(f, o.format, norm * d[k]); /* 11 21 12 22 */
            fputc('\n', f);
        } else {
            for (int r = 0; r < p; r++) {
                for (int c = 0; c < p; c++) {
                    if (c > 0 && c % 4 == 0) fputc('\n', f);
                    put_pair(f, o.format, norm * d[r + (size_t)p * c]);
                }
                fputc('\n', f);
            }
        }
    }
    if (o.version == 2) fprintf(f, "[End]\n");
    return sv_atomic_file_close(out, 1);
}

/* ---- reader ---- */
sv_status sv_em_touchstone_read(const char *path, int *p_out, int *nf_out, double **freq_out,
                                double complex **data_out, sv_em_ts_param *param_out, double *z0, int z0_len)
{
    if (!path || !p_out || !nf_out || !freq_out || !data_out)
        return sv_error(SV_ERR_ARG, "sv_em_touchstone_read: NULL argument");
    *freq_out = NULL;
    *data_out = NULL;
    FILE *f = fopen(path, "r");
    if (!f) return sv_error(SV_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    double us = 1e9, R = 50, *nums = NULL;
    int fmt = 0, par = 0, p = 0, version = 1, order12 = 0, optseen = 0;
    size_t nn = 0, cap = 0;
    double refs[64];
    int nrefs = 0;
    const char *dot = strrchr(path, '.');
    if (dot && tolower((unsigned char)dot[1]) == 's') p = atoi(dot + 2);
    char line[4096];
    sv_status st = SV_OK;
    while (fgets(line, sizeof line, f)) {
        char *bang = strchr(line, '!');
        if (bang) *bang = 0;
        char *s = line;
        while (isspace((unsigned char)*s)) s++;
        if (!*s) continue;
        if (*s == '#') {
            optseen = 1;
            char *tok = strtok(s + 1, " \t\r\n");
            while (tok) {
                double sc = unit_scale(tok);
                if (sc > 0) us = sc;
                else if (!strcasecmp(tok, "S")) par = 0;
                else if (!strcasecmp(tok, "Y")) par = 1;
                else if (!strcasecmp(tok, "Z")) par = 2;
                else if (!strcasecmp(tok, "RI")) fmt = 0;
                else if (!strcasecmp(tok, "MA")) fmt = 1;
                else if (!strcasecmp(tok, "DB")) fmt = 2;
                else if (!strcasecmp(tok, "R")) {
                    tok = strtok(NULL, " \t\r\n");
                    if (tok) R = atof(tok);
                }
                tok = strtok(NULL, " \t\r\n");
            }
            continue;
        }
        if (*s == '[') {
            if (!strncasecmp(s, "[Version]", 9)) version = 2;
            else if (!strncasecmp(s, "[Number of Ports]", 17)) p = atoi(s + 17);
            else if (!strncasecmp(s, "[Two-Port Data Order]", 21)) order12 = strstr(s, "12_21") != NULL;
            else if (!strncasecmp(s, "[Reference]", 11)) {
                char *e = s + 11;
                for (;;) {
                    char *q;
                    double v = strtod(e, &q);
                    if (q == e || nrefs >= 64) break;
                    refs[nrefs++] = v;
                    e = q;
                }
            }
            continue;
        }
        for (;;) {
            char *q;
            double v = strtod(s, &q);
            if (q == s) break;
            if (nn == cap) {
                cap = cap ? 2 * cap : 1024;
                double *nb = realloc(nums, cap * sizeof *nb);
                if (!nb) {
                    st = sv_error(SV_ERR_NOMEM, "%s: no memory", path);
                    goto done;
                }
                nums = nb;
            }
            nums[nn++] = v;
            s = q;
        }
    }
    if (!optseen || p < 1) {
        st = sv_error(SV_ERR_PARSE, "%s: no option line or unknown number of ports", path);
        goto done;
    }
    size_t rec = 1 + 2 * (size_t)p * p;
    if (nn % rec != 0 || nn == 0) {
        st = sv_error(SV_ERR_PARSE, "%s: %zu numbers: not a whole number of %zu-number records", path, nn, rec);
        goto done;
    }
    int nf = (int)(nn / rec);
    double *fr = malloc(sizeof *fr * nf);
    double complex *d = malloc(sizeof *d * (size_t)nf * p * p);
    if (!fr || !d) {
        free(fr);
        free(d);
        st = sv_error(SV_ERR_NOMEM, "%s: no memory", path);
        goto done;
    }
    double norm = 1;
    if (version == 1 && par == 2) norm = R;
    if (version == 1 && par == 1) norm = 1 / R;
    for (int q = 0; q < nf; q++) {
        const double *r = nums + rec * q;
        fr[q] = r[0] * us;
        for (int k = 0; k < p * p; k++) {
            double a = r[1 + 2 * k], b = r[2 + 2 * k];
            double complex v;
            if (fmt == 0) v = a + I * b;
            else {
                double mag = fmt == 1 ? a : pow(10, a / 20);
                v = mag * cexp(I * b * SV_EM_PI / 180);
            }
            int row, col;
            if (p <= 2) {
                row = k % p;
                col = k / p;
                if (p == 2 && order12) {
                    row = k / p;
                    col = k % p;
                }
            } else {
                row = k / p;
                col = k % p;
            }
            d[(size_t)q * p * p + row + (size_t)p * col] = norm * v;
        }
    }
    *p_out = p;
    *nf_out = nf;
    *freq_out = fr;
    *data_out = d;
    if (param_out) *param_out = (sv_em_ts_param)par;
    if (z0)
        for (int k = 0; k < z0_len && k < p; k++) z0[k] = k < nrefs ? refs[k] : R;
done:
    free(nums);
    fclose(f);
    return st;
}
