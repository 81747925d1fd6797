#define _POSIX_C_SOURCE 200809L
/* `solvent solve PROJECT.json --freq F[,F...] -o OUT.sNp`: direct solves of
 * a planar project at the listed frequencies, written as a Touchstone file. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "solvent/em.h"
#include "tool_args.h"

const char cmd_solve_summary[] = "solve a planar project at listed frequencies, write Touchstone";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: solvent solve PROJECT.json --freq F[,F...] -o OUT.sNp [options]\n\n"
            "Assembles the project's model once and solves it directly at each listed\n"
            "frequency, then writes the S-parameters (reference impedances from the\n"
            "project) as a Touchstone file. The file is written to a temporary name\n"
            "and renamed, so it is never left half-written.\n\n"
            "  --freq LIST      frequencies, comma-separated, each a number with an\n"
            "                   optional unit: 1e9, 2.5GHz, 900MHz, 10kHz (default Hz)\n"
            "  -o PATH          output file; its extension must be .sNp for N ports\n"
            "  --format F       ri (default), ma or db\n"
            "  --version V      Touchstone version 1 (1.1, default) or 2 (2.0)\n"
            "  --unit U         frequency unit in the file: Hz, kHz, MHz, GHz (default)\n"
            "  --threads N      threads (default: all cores)\n");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct solve_args {
    const char *project, *out, *freqs, *unit;
    int version, threads;
    sv_em_ts_format format;
} solve_args;

/* The value of option s (`v`) into a; returns 0 or the exit code. */
static int parse_value(const char *s, const char *v, solve_args *a)
{
    if (!strcmp(s, "--freq")) a->freqs = v;
    else if (!strcmp(s, "-o")) a->out = v;
    else if (!strcmp(s, "--format")) {
        if (!strcasecmp(v, "ri")) a->format = SV_EM_TS_RI;
        else if (!strcasecmp(v, "ma")) a->format = SV_EM_TS_MA;
        else if (!strcasecmp(v, "db")) a->format = SV_EM_TS_DB;
        else {
            fprintf(stderr, "solvent solve: --format %s: expected ri, ma or db\n", v);
            return 2;
        }
    } else if (!strcmp(s, "--version")) {
        if (!strcmp(v, "1") || !strcmp(v, "1.1")) a->version = 1;
        else if (!strcmp(v, "2") || !strcmp(v, "2.0")) a->version = 2;
        else {
            fprintf(stderr, "solvent solve: --version %s: expected 1 or 2\n", v);
            return 2;
        }
    } else if (!strcmp(s, "--unit")) {
        if (strcasecmp(v, "Hz") && strcasecmp(v, "kHz") && strcasecmp(v, "MHz") && strcasecmp(v, "GHz")) {
            fprintf(stderr, "solvent solve: --unit %s: expected Hz, kHz, MHz or GHz\n", v);
            return 2;
        }
        a->unit = v;
    } else {
        char *e;
        long t = strtol(v, &e, 10);
        if (*e || t < 1 || t > 4096) {
            fprintf(stderr, "solvent solve: --threads %s: expected an integer from 1 to 4096\n", v);
            return 2;
        }
        a->threads = (int)t;
    }
    return 0;
}

/* The command line into a; returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, solve_args *a)
{
    *a = (solve_args){.unit = "GHz", .version = 1, .format = SV_EM_TS_RI};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(s, "--freq") || !strcmp(s, "-o") || !strcmp(s, "--format") || !strcmp(s, "--version") ||
            !strcmp(s, "--unit") || !strcmp(s, "--threads")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "solvent solve: %s needs a value\n", s);
                return 2;
            }
            int code = parse_value(s, argv[++i], a);
            if (code) return code;
        } else if (s[0] == '-' && s[1]) {
            fprintf(stderr, "solvent solve: unknown option '%s' (see --help)\n", s);
            return 2;
        } else if (!a->project) {
            a->project = s;
        } else {
            fprintf(stderr, "solvent solve: unexpected argument '%s'\n", s);
            return 2;
        }
    }
    if (!a->project || !a->freqs || !a->out) {
        fprintf(stderr, "solvent solve: %s is required\n\n", !a->project ? "PROJECT.json" : !a->freqs ? "--freq" : "-o");
        usage(stderr);
        return 2;
    }
    return -1;
}

/* --freq's comma-separated list, ascending, without repeats (malloc'ed into
 * *out); returns 0 or the exit code. */
static int parse_freq_list(const char *freqs, double **out, int *count)
{
    int nf = 1;
    for (const char *c = freqs; *c; c++) nf += *c == ',';
    double *f = malloc(sizeof(double) * nf);
    char *copy = strdup(freqs);
    if (!f || !copy) {
        fprintf(stderr, "solvent solve: out of memory\n");
        free(f);
        free(copy);
        return 1;
    }
    int k = 0, code = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && !code; tok = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*tok)) tok++;
        if (tool_parse_freq_dc(tok, &f[k++])) {
            fprintf(stderr, "solvent solve: --freq: '%s' is not a frequency >= 0 (e.g. 0, 2.5GHz or 2.5e9)\n", tok);
            code = 2;
        }
    }
    free(copy);
    if (!code && k != nf) {
        fprintf(stderr, "solvent solve: --freq '%s': expected a comma-separated list without empty entries\n", freqs);
        code = 2;
    }
    if (!code) qsort(f, nf, sizeof *f, cmp_double);
    for (int q = 1; !code && q < nf; q++)
        if (f[q] == f[q - 1]) {
            fprintf(stderr, "solvent solve: --freq: %g Hz is listed twice\n", f[q]);
            code = 2;
        }
    if (code) {
        free(f);
        return code;
    }
    *out = f;
    *count = nf;
    return 0;
}

/* Read, mesh, model, a direct solve at each frequency, S, the file. */
static int solve_run(const solve_args *a, const double *f, int nf)
{
    int rc = 1;
    sv_ctx *ctx = NULL;
    sv_em_project *p = NULL;
    sv_em_model *m = NULL;
    sv_em_affine *model = NULL;
    double complex *S = NULL, *Y = NULL;
    double *z0 = NULL;
    if (sv_ctx_create(&ctx) || (a->threads && sv_ctx_set_threads(ctx, a->threads))) goto fail;
    if (sv_em_project_read(ctx, a->project, &p)) goto fail;
    int np = sv_em_project_ports(p);
    {
        /* the extension must say the port count */
        const char *dot = strrchr(a->out, '.');
        char want[32];
        snprintf(want, sizeof want, ".s%dp", np);
        if (!dot || strcasecmp(dot, want)) {
            fprintf(stderr, "solvent solve: -o %s: a %d-port result needs the extension %s\n", a->out, np, want);
            rc = 2;
            goto done;
        }
    }
    if (sv_em_model_create(ctx, p, NULL, &m)) goto fail;
    if (sv_em_affine_create(ctx, m, &model)) goto fail;
    S = malloc(sizeof *S * (size_t)nf * np * np);
    Y = malloc(sizeof *Y * (size_t)nf * np * np);
    z0 = malloc(sizeof *z0 * (size_t)np);
    if (!S || !Y || !z0) {
        fprintf(stderr, "solvent solve: out of memory\n");
        goto done;
    }
    for (int q = 0; q < np; q++) z0[q] = sv_em_project_port_z0(p, q);
    if (a->version == 1)
        for (int q = 1; q < np; q++)
            if (z0[q] != z0[0]) {
                fprintf(stderr, "solvent solve: ports have different z0: use --version 2\n");
                rc = 2;
                goto done;
            }
    for (int q = 0; q < nf; q++) { /* 0 Hz: the DC limit of the model */
        size_t o = (size_t)q * np * np;
        if (f[q] == 0 ? sv_em_dc_s(ctx, m, z0, S + o)
                      : sv_em_solve(ctx, model, f[q], Y + o) || sv_em_y_to_s(np, Y + o, z0, S + o))
            goto fail;
    }
    {
        char comment[512];
        snprintf(comment, sizeof comment, "solvent %s solve: %s\n%d unknowns, %d ports, direct solves",
                 sv_version_string(), a->project, sv_em_model_unknowns(m), np);
        sv_em_ts_options o = {.version = a->version, .format = a->format, .param = SV_EM_TS_S, .unit = a->unit,
                              .comment = comment};
        if (sv_em_touchstone_write(a->out, &o, np, nf, f, S, z0)) goto fail;
    }
    rc = 0;
    goto done;
fail:
    fprintf(stderr, "solvent solve: %s\n", sv_last_error());
done:
    free(S);
    free(Y);
    free(z0);
    sv_em_affine_destroy(model);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
    sv_ctx_destroy(ctx);
    return rc;
}

int cmd_solve_main(int argc, char **argv)
{
    solve_args a;
    int code = parse_args(argc, argv, &a);
    if (code >= 0) return code;
    double *f = NULL;
    int nf = 0;
    if ((code = parse_freq_list(a.freqs, &f, &nf))) return code;
    code = solve_run(&a, f, nf);
    free(f);
    return code;
}
